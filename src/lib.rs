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
