//! The executor as engines of the contract:
//!
//! - `explore`: guided to the target by its necessary condition, with path
//!   subsumption and loop summaries: a path to the goal is a replayed
//!   witness, every path to it explored proves it unreachable. With
//!   several targets, the whole program explored: its first error is a
//!   witness, every path ended without one proves them all.
//! - `explore-search`: a witness search with no condition (tree search,
//!   lattice merging, stopping at the target): reachable targets behind
//!   few branches (docs/portfolio.md).

use super::{AtChecks, End, Guide, Merging, Options, Strategy};
use crate::deadline::{self, Stop};
use crate::engine::{Decider, Decision, How, Question};
use std::time::Duration;

/// The guided executor (`explore`).
pub struct GuidedExecutor;

/// The executor as a witness search (`explore-search`).
pub struct WitnessSearch;

/// Less time left than this: the executor is not tried.
pub const LEAST_TO_EXPLORE: Duration = Duration::from_millis(50);

impl Decider for GuidedExecutor {
    fn name(&self) -> &'static str {
        "explore"
    }

    fn about(&self) -> &'static str {
        "the symbolic executor, guided to the target with path subsumption and loop summaries"
    }

    fn niceness(&self, _q: &Question) -> i32 {
        5
    }

    fn takes(&self, _q: &Question) -> bool {
        true
    }

    fn decide(&self, q: &Question, stop: &Stop) -> Decision {
        let Some(mut o) = options(q, stop) else {
            return Decision::unknown("too little time");
        };
        o.subsumption = Some(AtChecks::Conjoin);
        o.summarization = true;
        o.block_schedules = true;
        if q.every_target() {
            o.strategy = Strategy::Tree;
            o.invariants_from_true = true;
            o.second_opinion = q.options.solvers.get(1).cloned();
            o.stop_at_first_error = true;
        } else {
            o.guide = Some(Guide {
                goal: q.target().clone(),
                nc: crate::nc::engine_options(q.options),
            });
        }
        explored(q, &o, self.name())
    }
}

impl Decider for WitnessSearch {
    fn name(&self) -> &'static str {
        "explore-search"
    }

    fn about(&self) -> &'static str {
        "the symbolic executor as a witness search: tree search with lattice merging, no condition"
    }

    fn decide(&self, q: &Question, stop: &Stop) -> Decision {
        let Some(mut o) = options(q, stop) else {
            return Decision::unknown("too little time");
        };
        as_witness_search(&mut o);
        o.block_schedules = true;
        o.stop_at = Some(q.target().clone());
        // Its verdicts speak for the question's targets only, so the
        // states no path leads to them from are not explored.
        o.only_towards = q.targets.to_vec();
        explored(q, &o, self.name())
    }
}

/// The executor's options for the time left (`None`: no solver, or too
/// little time).
fn options(q: &Question, stop: &Stop) -> Option<Options> {
    let left = stop.remaining().unwrap_or(q.options.timeout);
    let solver = q.options.solvers.first()?;
    if left < LEAST_TO_EXPLORE {
        return None;
    }
    Some(every_error(solver, left))
}

/// The executor on `solver` for `time`, keeping every error it reaches.
fn every_error(solver: &crate::smt::Profile, time: Duration) -> Options {
    let mut o = Options::new(solver.clone());
    o.timeout = Some(time);
    o.stop_at_first_error = false;
    o
}

/// The witness search's strategies: tree search, lattice merging.
fn as_witness_search(o: &mut Options) {
    o.strategy = Strategy::Tree;
    o.merging = Merging::Lattice;
}

/// An exploration's decision on the question: a replayed witness for a
/// target asked about, or every path explored.
fn explored(q: &Question, o: &Options, engine: &'static str) -> Decision {
    let _p = deadline::phase("exploring");
    let solver = Some(o.solver.name.clone());
    let r = match super::explore(q.db, q.file, o) {
        Ok(r) => r,
        Err(e) => return Decision::unknown(e),
    };
    let method = |how| q.method(engine, how);
    let mut d = if let Some(e) = r.errors.iter().find(|e| q.targets.contains(&e.target)) {
        let mut d = Decision::reachable(e.witness.clone(), method(How::PathFound), solver);
        d.reached = Some(e.target.clone());
        d
    } else {
        match r.end {
            End::Complete => Decision::unreachable(method(How::EveryPath), solver),
            End::Incomplete(why) => Decision::unknown(why),
            End::ErrorFound => Decision::unknown("stopped at another error"),
        }
    };
    d.stats.counts = vec![
        ("paths", r.stats.paths),
        ("steps", r.stats.steps),
        ("queries", r.stats.queries),
        ("subsumed", r.stats.subsumed),
        ("states merged", r.stats.states_merged),
    ];
    d
}

/// What one exploration of the whole program found about the targets of a
/// question: each target it reached, with its replayed witness, and
/// whether every path ended (then no other target asked about is
/// reachable).
pub struct Sweep {
    pub found: Vec<(crate::db::Target, crate::interp::Witness)>,
    pub complete: bool,
}

/// Explores the whole program once within `budget` and at `pace` (tree
/// search, lattice merging, every error kept rather than the first): the
/// witness search of [`WitnessSearch`], for all of a file's targets at
/// once.
pub fn sweep(q: &Question, budget: Duration, pace: super::Pace) -> Result<Sweep, String> {
    let solver = q.options.solvers.first().ok_or("no solver")?;
    let mut o = every_error(solver, budget);
    o.pace = Some(pace);
    as_witness_search(&mut o);
    let _p = deadline::phase("sweeping");
    let r = super::explore(q.db, q.file, &o)?;
    let found = (r.errors.into_iter())
        .filter(|e| q.targets.contains(&e.target))
        .map(|e| (e.target, e.witness))
        .collect();
    Ok(Sweep {
        found,
        complete: r.end == End::Complete,
    })
}
