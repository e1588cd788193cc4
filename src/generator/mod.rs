//! The thesis's random program generator (Rozhoň, *Nested loops and path
//! explosion in symbolic execution*, chapter 6; `docs/thesis-executor.md`):
//! seeded, deterministic, well-typed microc programs for the experiments.
//! (The design card calls this layer `gen`, a reserved word in Rust 2024.)
//!
//! Not built yet: this is its place in the layers (see ARCHITECTURE.md).
