//! Times the Gaussian blur on a 4096² field (for profiling).
//!
//! Run: `cargo run --release -p orogen --example blur_probe -- [sigma_px] [repeats]`

use orogen::field::{blur::gaussian, Field};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sigma: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(50.0);
    let repeats: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    let f = Field::from_fn(4096, 4096, |x, y| ((x * 31 + y * 17) % 101) as f32);
    let t0 = std::time::Instant::now();
    for _ in 0..repeats {
        std::hint::black_box(gaussian(&f, sigma));
    }
    println!(
        "σ = {sigma} px: {:.1} ms per 4096² blur",
        t0.elapsed().as_secs_f64() * 1e3 / repeats as f64
    );
}
