//! The first phase of a loop summary: the backbones of the loop body
//! (TR Alg. 3–4), executed from the general state, with pruning. A body
//! backbone is one kind of iteration; its path condition and final state
//! are what the fixpoint and the looping condition are built from.
//!
//! Pruning is syntactic (a prefix whose guard is `false` is dropped) and,
//! with a helper solver, semantic: one batched query per loop drops the
//! backbones whose path condition no entry state satisfies.

use super::{Summary, star_array};
use crate::ir::{self, LoopId};
use crate::nc::state::State;
use crate::nc::{Engine, Path};
use crate::smt::Answer;
use crate::term::{TermId, Var};

/// One executed backbone of a loop body.
pub(super) struct Run {
    pub pc: TermId,
    pub state: State,
    pub inner: Vec<InnerUse>,
}

/// An inner loop entered along a body backbone.
pub(super) struct InnerUse {
    pub lp: LoopId,
    pub counters: Vec<Var>,
    /// The state at the inner header (before the summary).
    pub pre: State,
    /// Guards of the edges that leave the inner loop after its summary.
    pub exit: Vec<TermId>,
}

/// The body backbones of a loop, executed and pruned.
pub(super) struct Body {
    /// The feasible backbones, each one kind of iteration.
    pub runs: Vec<Run>,
    /// How many backbones the body has (feasible or not).
    pub backbones: usize,
}

/// Executes the body backbones of `lp`; a finished (trivial) summary when
/// there are too many of them or none is feasible.
pub(super) fn execute(eng: &mut Engine, lp: &ir::Loop) -> Result<Body, Box<Summary>> {
    let max = eng.opts.max_body_backbones;
    let bbs = ir::loop_backbones(eng.body, lp, max + 1);
    let start = State::general(&mut eng.terms, &eng.slots);
    if bbs.count > max as u128 {
        let why = format!("{} body backbones (limit {max})", bbs.count);
        return Err(Box::new(havoc_summary(eng, lp, start, why)));
    }
    let runs: Vec<Run> = bbs
        .paths
        .iter()
        .filter_map(|p| run_path(eng, &start, p, lp.header))
        .collect();
    let runs = prune(eng, runs);
    let backbones = bbs.paths.len();
    if runs.is_empty() {
        // No iteration is possible: the loop runs zero times.
        let note = "no feasible iteration".to_string();
        return Err(Box::new(Summary::trivial(
            eng,
            start,
            vec![],
            backbones,
            note,
        )));
    }
    Ok(Body { runs, backbones })
}

/// Executes a body backbone from `start`; `None` if trivially infeasible.
fn run_path(eng: &mut Engine, start: &State, path: &Path, header: ir::NodeId) -> Option<Run> {
    let body = eng.body;
    let mut st = start.clone();
    let mut parts = Vec::new();
    let mut inner: Vec<InnerUse> = Vec::new();
    let mut leaving: Option<(usize, LoopId)> = None;
    crate::deadline::check();
    for &e in path {
        let edge = &body.edges[e as usize];
        let g = eng.exec(&mut st, &edge.instr);
        if let Some((k, l)) = leaving {
            if body.loops[l as usize]
                .nodes
                .binary_search(&edge.from)
                .is_ok()
            {
                inner[k].exit.push(g);
            } else {
                leaving = None;
            }
        }
        if eng.terms.as_bool(g) == Some(false) {
            return None;
        }
        parts.push(g);
        if edge.to != header
            && let Some(l) = eng.loop_at(edge.to)
        {
            let pre = st.clone();
            let a = eng.apply_summary(l, &st);
            if eng.terms.as_bool(a.guard) == Some(false) {
                return None;
            }
            parts.push(a.guard);
            st = a.post;
            inner.push(InnerUse {
                lp: l,
                counters: a.counters,
                pre,
                exit: vec![],
            });
            leaving = Some((inner.len() - 1, l));
        }
    }
    let pc = eng.terms.and(parts);
    if eng.terms.as_bool(pc) == Some(false) {
        return None;
    }
    Some(Run {
        pc,
        state: st,
        inner,
    })
}

/// Drops the body backbones whose path condition is unsatisfiable from any
/// entry state (their φ̂¹ weakening is UNSAT, so the condition is too): one
/// solver process for all of a loop's checks. Unknown answers keep the
/// backbone.
fn prune(eng: &mut Engine, runs: Vec<Run>) -> Vec<Run> {
    if !eng.solver.is_available() || !eng.opts.prune_with_solver || runs.len() < 2 {
        return runs;
    }
    let checks: Result<Vec<TermId>, _> = runs
        .iter()
        .map(|r| crate::nc::unfold(&mut eng.terms, r.pc, 1))
        .collect();
    // A path condition too large to unfold is kept unpruned.
    let Ok(checks) = checks else { return runs };
    let script = crate::smt::smtlib::batch(&eng.terms, &checks);
    let answers = eng.solver.run_batch(&script, checks.len());
    let before = runs.len();
    let kept: Vec<Run> = runs
        .into_iter()
        .zip(answers)
        .filter(|(_, a)| *a != Answer::Unsat)
        .map(|(r, _)| r)
        .collect();
    eng.stats.pruned_backbones += before - kept.len();
    kept
}

/// The trivial sound summary: no looping condition, every slot written in
/// the loop is ⋆.
fn havoc_summary(eng: &mut Engine, lp: &ir::Loop, mut start: State, why: String) -> Summary {
    let mut unknown = Vec::new();
    let mut probe = start.clone();
    for e in &eng.body.edges {
        if lp.nodes.binary_search(&e.from).is_ok() && lp.nodes.binary_search(&e.to).is_ok() {
            let _ = eng.exec(&mut probe, &e.instr);
        }
    }
    for s in eng.slots.all.clone() {
        let sym = eng.terms_var_of(s);
        if probe.get(s) != sym {
            let v = match eng.terms.sort(sym) {
                crate::term::Sort::Array(n) => star_array(&mut eng.terms, n),
                _ => eng.terms.star(),
            };
            start.set(s, v);
            unknown.push(s);
        }
    }
    Summary::trivial(eng, start, unknown, 0, format!("trivial summary: {why}"))
}
