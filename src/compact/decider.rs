//! Compact symbolic execution as an engine of the contract (`compact`):
//! the compact tree of `main` (loops and recursion as templates). An error
//! leaf at a target asked about gives a witness from a model of its path
//! condition (its parameters κ included), which the interpreter replays.
//! A complete tree with no error leaf at the targets proves them
//! unreachable: the tree holds every feasible path (docs/compact-se.md,
//! Theorems 1 and 2), and a path that fails elsewhere first ends there.

use super::{End, Failure, Options, Tree, witness};
use crate::db;
use crate::deadline::Stop;
use crate::engine::{Decider, Decision, How, Question};
use crate::witness::Replayer;
use std::time::Duration;

/// Compact symbolic execution.
pub struct Compact;

/// The most vertices of a tree built to decide a target: a loop no template
/// covers makes the tree infinite.
pub const MAX_VERTICES: usize = 2000;

impl Decider for Compact {
    fn name(&self) -> &'static str {
        "compact"
    }

    fn about(&self) -> &'static str {
        "compact symbolic execution: loop and recursion templates; a complete tree is a proof"
    }

    /// Last among the engines: it decides few targets the others leave
    /// (docs/portfolio.md §3), and its template derivation competes with
    /// the conditions for the cores.
    fn niceness(&self, _q: &Question) -> i32 {
        10
    }

    fn takes(&self, _q: &Question) -> bool {
        true
    }

    fn decide(&self, q: &Question, stop: &Stop) -> Decision {
        let Some(profile) = q.options.solvers.first() else {
            return Decision::unknown("no solver");
        };
        let left = stop.remaining().unwrap_or(q.options.timeout);
        let opts = Options {
            compact: true,
            one_parameter: false,
            max_vertices: MAX_VERTICES,
            timeout: Some(left),
            per_query: left,
        };
        let (mut tree, _) = match super::execute(q.db, q.file, "main", profile, &opts) {
            Ok(t) => t,
            Err(Failure::BadInput(why) | Failure::Timeout(why)) => return Decision::unknown(why),
        };
        let solver = Some(profile.name.clone());
        let mut d = judged(q, &mut tree, profile, left, solver);
        d.stats.counts = vec![
            ("vertices", tree.vertices.len() as u64),
            ("queries", tree.queries),
        ];
        d
    }
}

/// The decision the tree gives: a replayed witness of an error leaf at a
/// target, the tree complete without one, or why neither.
fn judged(
    q: &Question,
    tree: &mut Tree,
    profile: &crate::smt::Profile,
    left: Duration,
    solver_name: Option<String>,
) -> Decision {
    let method = |how| q.method("compact", how);
    let leaves = witness::error_leaves(tree, q.targets);
    if leaves.is_empty() {
        return match (&tree.stopped, tree.is_complete()) {
            (None, true) => Decision::unreachable(method(How::EveryPath), solver_name),
            (Some(why), _) => Decision::unknown(format!("the tree stopped at the {why}")),
            (None, false) => Decision::unknown(incomplete(tree)),
        };
    }
    let parsed = db::parse(q.db, q.file);
    let replay = Replayer::new(&parsed.program, q.file.text(q.db), q.targets);
    let mut solver = super::solver::Solver::new(profile.clone(), left, crate::deadline::current());
    let mut misses = Vec::new();
    for (v, w) in witness::witnesses(tree, &leaves, &mut solver, &replay, false) {
        match w {
            Ok(w) => {
                let reached = replay.hit(&w).ok().cloned();
                let mut d = Decision::reachable(w, method(How::PathFound), solver_name);
                d.reached = reached;
                return d;
            }
            Err(why) => misses.push(format!("v{v}: {why}")),
        }
    }
    Decision::unknown(format!(
        "no error leaf's model replayed ({})",
        misses.join("; ")
    ))
}

/// Why a tree that did not stop is not complete: its first stuck path.
fn incomplete(tree: &Tree) -> String {
    (tree.vertices.iter())
        .find_map(|v| match &v.end {
            End::Stuck(why) => Some(format!("a path could not go on: {why}")),
            _ => None,
        })
        .unwrap_or_else(|| "the tree is incomplete".into())
}
