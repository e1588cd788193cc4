//! The `apc` binary: see `apc --help`.

fn main() -> std::process::ExitCode {
    apc::cli::main()
}
