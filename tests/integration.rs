//! The engine's end-to-end, property, golden-image and hardening tests, as one test binary.
//!
//! One binary rather than one per file: the helpers in `common` and the engine's generic code
//! they instantiate are compiled and linked once, and libtest runs the tests of every file
//! side by side on the machine's cores instead of one file after another (the slowest files
//! are a few long tests each). Run one file's tests with a path filter:
//! `cargo test -p orogen --test integration tiles::`.

mod cache;
mod color;
mod common;
mod diff;
mod e2e;
mod erosion;
mod exports;
mod fuzz_loader;
mod generators;
mod hardening;
mod hostile;
mod node_properties;
mod random_graphs;
mod references;
mod shaping;
mod sharing;
mod tidy;
mod tiles;
mod water;
