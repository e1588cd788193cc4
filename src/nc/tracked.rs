//! The tracked (salsa) queries of the necessary-condition layer. They live here,
//! with what they compute, as rust-analyzer's `hir` crates own theirs; the
//! database module holds only the inputs and the front-end queries.
//!
//! Each result is `Portable`: it carries the term store its ids live in,
//! so that the asking engine (or `check`) can import or read it.

use super::state::Slots;
use super::{Engine, Options, Portable, Stats, Summary};
use crate::db::{self, SourceFile};
use crate::ir::LoopId;
use crate::term::TermId;

/// The summary of one loop of the whole-program flowgraph: computed once
/// per loop and shared by every target's condition. `opts` are the engine
/// options (counter inference, helper solver, limits).
#[salsa::tracked(returns(ref), no_eq)]
pub fn loop_summary(
    db: &dyn salsa::Database,
    file: SourceFile,
    l: LoopId,
    opts: Options,
) -> Portable<Summary> {
    let _p = crate::deadline::phase("summarising loops");
    let mut eng = Engine::new(db, file, opts).expect("summaries are asked of programs with main");
    let value = eng.compute_summary(l);
    Portable {
        terms: eng.terms,
        value,
    }
}

/// A target's necessary condition and what it was built from.
pub struct Condition {
    /// φ̂ as computed.
    pub phi: TermId,
    /// Every loop's summary as imported into this store (indexed by loop
    /// id), for explanations. They are imported after φ̂ is built, so
    /// φ̂'s counters are numbered as if they were not.
    pub summaries: Vec<Summary>,
    /// The work behind φ̂ (the summaries it applied included).
    pub stats: Stats,
    /// The program's slots and their symbols in this store.
    pub slots: Slots,
}

/// The necessary condition φ̂ of a target of a function: reaching any
/// inlined copy of it in the whole-program flowgraph.
#[salsa::tracked(returns(ref), no_eq)]
pub fn necessary_condition(
    db: &dyn salsa::Database,
    file: SourceFile,
    function: String,
    target: u32,
    opts: Options,
) -> Portable<Condition> {
    let prog = db::program(db, file)
        .as_ref()
        .expect("conditions are asked of programs with main");
    let _p = crate::deadline::phase("building the condition");
    let mut eng = Engine::new(db, file, opts).expect("a program with main");
    let phi = eng.condition_of(&prog.copies_of(&function, target));
    let stats = eng.stats.clone();
    let summaries = (0..prog.body.loops.len() as LoopId)
        .map(|l| Summary::clone(&eng.summary(l)))
        .collect();
    Portable {
        terms: eng.terms,
        value: Condition {
            phi,
            summaries,
            stats,
            slots: Slots::clone(&eng.slots),
        },
    }
}

/// The necessary condition of a target after e-graph simplification
/// (`simplify`), with what the simplifier did. The raw condition stays
/// available from `necessary_condition`; this copy adds the simplified
/// terms to a clone of its store.
#[salsa::tracked(returns(ref), no_eq)]
pub fn simplified_condition(
    db: &dyn salsa::Database,
    file: SourceFile,
    function: String,
    target: u32,
    opts: Options,
) -> Portable<(TermId, crate::simplify::Stats)> {
    let raw = necessary_condition(db, file, function, target, opts);
    let _p = crate::deadline::phase("simplifying");
    let mut terms = raw.terms.clone();
    let value = crate::simplify::simplify_one(&mut terms, raw.value.phi);
    Portable { terms, value }
}
