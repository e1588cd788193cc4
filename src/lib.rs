//! apc: necessary conditions for reaching targets in microc programs.
//!
//! See `ARCHITECTURE.md` for the layers and what each may know.

pub mod bench;
pub mod check;
pub mod cli;
pub mod db;
pub mod interp;
pub mod ir;
pub mod nc;
pub mod simplify;
pub mod smt;
pub mod syntax;
pub mod target_kind;
pub mod term;
pub mod types;

pub use target_kind::TargetKind;

/// Runs `f` on a thread with the stack the CLI gives the passes (256 MiB,
/// see `cli::main`): the passes recurse over expression trees up to
/// `syntax::parser::MAX_EXPR_HEIGHT` levels, far more than a test thread's
/// 2 MiB allows.
#[cfg(test)]
pub(crate) fn on_cli_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(scope, f)
            .expect("spawning a big-stack test thread")
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}
