//! Simplification of conditions with an egg e-graph: the condition's DAG
//! goes into an e-graph, the rules of `rules.rs` saturate it within fixed
//! limits, and the smallest, most linear equivalent comes back out as terms
//! of the same store.
//!
//! Sound by construction (every rule is an equivalence; `tests.rs` checks
//! random terms by evaluation and `tests/it/simplify.rs` has a solver prove
//! `orig ≠ simplified` unsatisfiable for every test program's conditions)
//! and never harmful in size: a result with more DAG nodes than the input
//! is dropped. Knows nothing of programs or solvers.

mod lang;
mod rules;
#[cfg(test)]
mod tests;

use crate::term::{TermId, Terms};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The runner's bounds, so that simplification time stays predictable.
#[derive(Clone, Debug)]
pub struct Limits {
    pub iterations: usize,
    /// E-nodes in the e-graph.
    pub nodes: usize,
    pub time: Duration,
    /// Largest input (DAG nodes) simplified; a larger one is kept as it is.
    /// egg's extraction sweeps all classes until their costs settle, once
    /// per level of a long chain: 3,000 sequential `if`s (12,000 nodes)
    /// took it 2.5 s. Its work grows with the input, and every target of a
    /// file is simplified on its own: with 2,000 asserts in a row, the
    /// conditions (one more conjunct each) cost the e-graph 450 s in all.
    /// The benchmarks' conditions have under 1,000 nodes (HWM's 830).
    pub input_nodes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            // One iteration finds nearly everything on the benchmarks (the
            // extraction is per tree, not per DAG, so saturating further
            // rarely shrinks the DAG); four leave room for rule chains.
            iterations: 4,
            nodes: 20_000,
            // A guard against pathological inputs only: the iteration and
            // node limits are what bound the work, and they do not depend on
            // the machine's load, so the result is the same from run to run
            // (a time limit that bites makes snapshots flaky).
            time: Duration::from_secs(2),
            input_nodes: 1_500,
        }
    }
}

/// What one simplification did.
#[derive(Clone, Debug)]
pub struct Stats {
    /// DAG nodes under the roots before and after.
    pub nodes_before: usize,
    pub nodes_after: usize,
    pub time: Duration,
    /// Why the runner stopped (saturated, or which limit), or why the
    /// input was kept.
    pub stop: String,
}

#[derive(Clone, Debug)]
pub struct Simplified {
    pub roots: Vec<TermId>,
    pub stats: Stats,
}

fn all_rules() -> &'static [egg::Rewrite<lang::Lang, lang::ConstFold>] {
    static RULES: OnceLock<Vec<egg::Rewrite<lang::Lang, lang::ConstFold>>> = OnceLock::new();
    RULES.get_or_init(rules::rules)
}

/// The runner's stop reason when the deadline passed.
const DEADLINE: &str = "deadline";

/// Simplifies the terms under `roots` together (shared subterms stay
/// shared), adding the results to `terms`.
pub fn simplify(terms: &mut Terms, roots: &[TermId], limits: &Limits) -> Simplified {
    let start = Instant::now();
    let nodes_before = terms.dag_size(roots);
    let result = |roots: Vec<TermId>, nodes_after: usize, stop: String| Simplified {
        roots,
        stats: Stats {
            nodes_before,
            nodes_after,
            time: start.elapsed(),
            stop,
        },
    };
    let kept = |stop: String| result(roots.to_vec(), nodes_before, stop);
    if roots.iter().any(|r| terms.contains_star(*r)) {
        return kept("kept: contains ⋆".into());
    }
    if nodes_before > limits.input_nodes {
        return kept(format!("kept: more than {} nodes", limits.input_nodes));
    }
    let mut eg = lang::Graph::default();
    let ids = lang::add_terms(&mut eg, terms, roots);
    eg.rebuild();
    let input = lang::all_nodes(&eg);
    let mut runner = egg::Runner::default()
        .with_egraph(eg)
        .with_iter_limit(limits.iterations)
        .with_node_limit(limits.nodes)
        .with_time_limit(limits.time)
        .with_scheduler(egg::BackoffScheduler::default())
        .with_hook(|_| {
            if crate::deadline::passed() {
                Err(DEADLINE.into())
            } else {
                Ok(())
            }
        })
        .run(all_rules());
    if matches!(&runner.stop_reason, Some(egg::StopReason::Other(s)) if s == DEADLINE) {
        // A simplification cut short is not cached as the result.
        crate::deadline::stop();
    }
    // A limit can stop the runner between applying rules and rebuilding.
    runner.egraph.rebuild();
    let stop = match runner.stop_reason {
        Some(egg::StopReason::Saturated) => "saturated".to_string(),
        Some(egg::StopReason::IterationLimit(n)) => format!("iteration limit {n}"),
        Some(egg::StopReason::NodeLimit(n)) => format!("node limit {n}"),
        Some(egg::StopReason::TimeLimit(s)) => format!("time limit {:.0} ms", s * 1e3),
        Some(egg::StopReason::Other(s)) => s,
        None => "stopped".to_string(),
    };
    let Some(new) = lang::extract(&runner.egraph, &ids, &input, terms) else {
        return kept(format!("{stop}; kept: no well-founded extraction"));
    };
    let nodes_after = terms.dag_size(&new);
    if nodes_after > nodes_before {
        return kept(format!("{stop}; kept: extraction was larger"));
    }
    result(new, nodes_after, stop)
}

/// Simplifies one term with the default limits.
pub fn simplify_one(terms: &mut Terms, t: TermId) -> (TermId, Stats) {
    let s = simplify(terms, &[t], &Limits::default());
    (s.roots[0], s.stats)
}
