//! Compositional symbolic execution (Vanoverberghe and Piessens, *Precise
//! and Progressing Compositional Symbolic Execution*;
//! `docs/compositional-se.md`): per-function leaf summaries, the rc/rv
//! interpretations, the invocation graph and fair choice. Precise (what it
//! calls reachable is) and progressing (every reachable state is found).
//!
//! Not built yet: this is its place in the layers (see ARCHITECTURE.md).
