//! The layer's salsa queries: a function's parts, and the template of each
//! part, computed once per function and part in a term store of its own
//! (so that it can be cached and imported into any run). A template
//! depends on its own function's flowgraph only: editing another function
//! does not recompute it (`tests/it/compact.rs`).

use super::exec::Program;
use super::solver::Solver;
use super::template::{Outcome, Part, derive, parts};
use crate::db::{self, FunctionItem};
use crate::smt::Profile;
use crate::term::Terms;
use std::time::Duration;

/// The parts of one function (`template::parts`).
#[salsa::tracked(returns(ref))]
pub fn function_parts<'db>(db: &'db dyn salsa::Database, item: FunctionItem<'db>) -> Vec<Part> {
    parts(db::function_body(db, item))
}

/// What the detector made of one part, with the store its terms live in.
pub struct Derived {
    pub terms: Terms,
    pub part: Part,
    pub outcome: Outcome,
    /// Solver questions asked (P′'s two feasibility checks per exit).
    pub queries: u64,
}

/// The template of part `part` of a function, derived with `solver`.
#[salsa::tracked(returns(ref), no_eq)]
pub fn part_template<'db>(
    db: &'db dyn salsa::Database,
    item: FunctionItem<'db>,
    part: u32,
    solver: Profile,
) -> Derived {
    let _p = crate::deadline::phase("deriving templates");
    let body = db::function_body(db, item).clone();
    let part = function_parts(db, item)[part as usize].clone();
    // The part's function alone: a cycle never leaves it (calls refused).
    let prog = Program { funcs: vec![body] };
    let mut terms = Terms::new();
    let mut sat = Solver::new(solver, Duration::from_secs(10), None);
    let outcome = derive(&mut terms, &prog, 0, &part, &mut sat);
    // Work cut short by the deadline is never a result (nothing cached).
    if crate::deadline::passed() {
        crate::deadline::stop();
    }
    Derived {
        terms,
        part,
        outcome,
        queries: sat.queries,
    }
}
