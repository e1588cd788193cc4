//! The program as constrained Horn clauses for Z3's fixed-point engine,
//! with the certificate checks that make an invariant a proof: apc
//! re-verifies every invariant with its own quantifier-free queries before
//! it says `unreachable`.
//!
//! Not built yet: this is its place in the layers (see ARCHITECTURE.md).
