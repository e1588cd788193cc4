//! apc: reachability of targets in microc programs.
//!
//! One module per layer; ARCHITECTURE.md is the map (entry points, the
//! path of `apc check`, what each layer may use, a glossary), and a test
//! (`tests/it/layers.rs`) holds the imports to its table.

pub mod bench;
pub mod chc;
pub mod check;
pub mod cli;
pub mod compact;
pub mod compositional;
pub mod db;
pub mod deadline;
pub mod engine;
pub mod explore;
pub mod fuzz;
pub mod generator;
pub mod interp;
pub mod ir;
pub mod lsp;
pub mod memory;
pub mod nc;
pub mod simplify;
pub mod smt;
pub mod symbolic;
pub mod syntax;
pub mod target_kind;
pub mod term;
pub mod types;
pub mod witness;

pub use target_kind::TargetKind;

/// Counts each thread's allocations, for per-run memory limits.
#[global_allocator]
static ALLOCATOR: memory::Counting = memory::Counting;
