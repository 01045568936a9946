//! The editor's tests, as one test binary: `ui` drives the editor in memory (egui_kittest),
//! `xvfb` runs the real binary in a virtual X server. One binary so that libtest runs the
//! two side by side: the Xvfb runs mostly wait on the X server while the in-memory tests use
//! the cores. Run one file's tests with a path filter: `cargo test -p orogen-editor --test
//! integration xvfb::`.

mod ui;
mod xvfb;
