//! Orogen's editor: wire operators on a canvas, tweak their parameters and preview any node in
//! 2D and 3D while the engine evaluates off the UI thread.
//!
//! The whole UI lives in this library ([`EditorApp`]) so the UI tests can drive it through
//! `egui_kittest`; `main.rs` only opens the window.

pub mod app;
pub mod autosave;
pub mod build_dialog;
pub mod canvas;
pub mod doc;
pub mod files;
pub mod params;
pub mod preview;
pub mod region;
pub mod view3d;
pub mod worker;

pub use app::{EditorApp, Options};
