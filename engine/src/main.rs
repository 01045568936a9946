//! The `orogen` binary: a thin wrapper over the CLI module.

mod cli;

/// mimalloc reuses freed map-sized buffers (glibc returns them to the system at once).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // A reader that stops early (`orogen nodes --json | head`) closes the pipe; `println!`
    // then panics. Exit quietly instead, as other Unix tools do (141 = 128 + SIGPIPE).
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
    cli::main()
}
