//! The `orogen` binary: a thin wrapper over the CLI module.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
