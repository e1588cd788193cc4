//! Compact symbolic execution (Trtík, *Compact Symbolic Execution*;
//! `docs/compact-se.md`): parts, loop and recursion templates derived by
//! executing the cycle (never by matching loop syntax), and Algorithm 1's
//! compact tree. Exact, where the necessary conditions over-approximate.
//!
//! Not built yet: this is its place in the layers (see ARCHITECTURE.md).
