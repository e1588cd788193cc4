//! apc's integration tests, in one binary (one link instead of one per
//! area): each module is an area, and `common` their shared helpers.
//!
//! Run one area with `cargo test --test it <area>::`, e.g.
//! `cargo test --test it check::`.

mod check;
mod cli;
mod common;
mod compact;
mod compositional;
mod conditions;
mod examples;
mod explore;
mod fuzz_frontend;
mod generator;
mod incremental;
mod layers;
mod limits;
mod lsp;
mod programs;
mod simplify;
mod snapshots;
mod soundness;
