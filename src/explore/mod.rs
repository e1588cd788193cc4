//! The thesis's symbolic executor (Rozhoň, *Nested loops and path
//! explosion in symbolic execution*, chapters 4–5; `docs/thesis-executor.md`):
//! symbolic states (storage cells and frames, the call stack, the path
//! condition), the six search strategies, pruning with one warm solver
//! session, state merging, path subsumption, PDA loop summarisation, and
//! guidance by necessary conditions.
//!
//! Not built yet: this is its place in the layers (see ARCHITECTURE.md).
