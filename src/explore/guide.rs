//! Guidance by a target's necessary condition (docs/thesis-executor.md,
//! "Guidance"; the APC paper's §5 proposes it): exploration towards one
//! target, the *goal*.
//!
//! - The goal's necessary condition φ̂ (the database's, as `apc check`
//!   computes it), unfolded to the quantifier-free φ̂^k, is a condition on
//!   the program's inputs that every run reaching the goal satisfies. A
//!   state whose path condition contradicts it (PC ∧ φ̂^k unsatisfiable)
//!   cannot reach the goal and is dropped; `unknown` keeps it.
//! - Among the states that may run, the one nearest to the goal (edges in
//!   the flowgraphs, a call costing its way to the goal through the
//!   callee) runs first.
//!
//! Dropped states may reach other targets: a guided run speaks for its
//! goal only.
//!
//! [`Guidance`] asks the run's `machine::Machine`; which states it is asked
//! about is the stepping's (`exec`) and the run loop's.

use super::machine::Machine;
use super::program::Explored;
use super::state::State;
use crate::db::{Database, SourceFile, Target};
use crate::ir::{Instr, NodeId};
use crate::smt::Answer;
use crate::term::{TermId, Terms};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

/// The unfolding depth of the condition that guides (φ̂^k).
const UNFOLDING: u32 = 3;

/// Each check of the goal's condition gets this long (`unknown` keeps the state).
const CHECK_LIMIT: Duration = Duration::from_millis(200);

/// After this many checks of the condition that the solver could not
/// decide in time, in a row, the condition stops guiding (distances still do).
const GIVE_UP_AFTER: u32 = 5;

/// Far away: no path to the goal.
pub(crate) const FAR: u32 = u32::MAX / 4;

/// What a guided exploration aims at.
#[derive(Clone, Debug)]
pub struct Guide {
    pub goal: Target,
    /// The necessary-condition engine's options (`apc check`'s, so that the
    /// database computes the condition once for both).
    pub nc: crate::nc::Options,
}

pub(crate) struct Guidance {
    pub goal: Target,
    /// φ̂^k in the executor's store; `None` when it cannot be used.
    condition: Option<TermId>,
    pub note: Option<String>,
    /// Checks of the condition not decided in time, in a row.
    slow: u32,
    pub way: Way,
}

/// How far each vertex is from a set of targets in the program's
/// flowgraphs, calls and returns included: a state at distance [`FAR`]
/// cannot reach any of them, whatever its path condition.
pub(crate) struct Way {
    /// Per function and vertex: edges to a target without returning.
    distance: Vec<Vec<u32>>,
    /// Per function and vertex: edges to the function's exit.
    to_exit: Vec<Vec<u32>>,
}

impl Way {
    pub(crate) fn towards(prog: &Explored, targets: &[Target]) -> Way {
        let (distance, to_exit) = distances(prog, targets);
        Way { distance, to_exit }
    }

    /// Edges from a state to the nearest target: through its own
    /// function, or returning first (its exit, then the caller's way on).
    pub(crate) fn distance(&self, st: &State) -> u32 {
        let mut acc: u32 = 0;
        for f in st.frames.iter().rev() {
            let d = self.distance[f.func][f.node as usize];
            if d < FAR {
                return acc.saturating_add(d);
            }
            acc = acc.saturating_add(self.to_exit[f.func][f.node as usize]);
            if acc >= FAR {
                break;
            }
        }
        FAR
    }
}

impl Guidance {
    pub(crate) fn new(
        db: &Database,
        file: SourceFile,
        prog: &Explored,
        terms: &mut Terms,
        guide: &Guide,
    ) -> Guidance {
        let (condition, note) = match condition(db, file, &guide.goal, &guide.nc, terms) {
            Ok(c) => (Some(c), None),
            Err(why) => (None, Some(why)),
        };
        Guidance {
            goal: guide.goal.clone(),
            condition,
            note,
            slow: 0,
            way: Way::towards(prog, std::slice::from_ref(&guide.goal)),
        }
    }
}

/// φ̂^k of the goal, imported into the executor's store.
fn condition(
    db: &Database,
    file: SourceFile,
    goal: &Target,
    opts: &crate::nc::Options,
    terms: &mut Terms,
) -> Result<TermId, String> {
    let _p = crate::deadline::phase("the goal's necessary condition");
    let (src, phi) = crate::nc::encoded(db, file, &goal.function, goal.id, opts, true);
    let mut own = src.clone();
    let phik = crate::nc::unfold(&mut own, phi, UNFOLDING)
        .map_err(|_| "the goal's condition is too large to unfold".to_string())?;
    if own.contains_star(phik) {
        return Err("the goal's condition has an unknown value (⋆)".into());
    }
    let mut fresh = |t: &mut Terms, v: crate::term::Var, name: &str| t.new_var(v.kind, name);
    Ok(terms.import(&own, &[phik], &mut fresh)[0])
}

/// Per function: the distance of each vertex to the nearest of `goals`
/// (calls of a function that reaches one cost one plus the callee's
/// distance from its entry), and to the function's exit. Unit edge
/// weights; callee costs settle in at most one round per function.
fn distances(prog: &Explored, goals: &[Target]) -> (Vec<Vec<u32>>, Vec<Vec<u32>>) {
    let n = prog.bodies.len();
    let goal_nodes: Vec<(usize, NodeId)> = (goals.iter())
        .filter_map(|goal| {
            let f = prog.by_name.get(&goal.function).copied()?;
            let b = &prog.bodies[f];
            let t = b.targets.iter().find(|t| t.id == goal.id)?;
            Some((f, t.node))
        })
        .collect();
    let to_exit: Vec<Vec<u32>> = (0..n)
        .map(|f| backwards(prog, f, &[(prog.bodies[f].exit, 0)]))
        .collect();
    let mut entry_cost = vec![FAR; n];
    let mut distance = vec![Vec::new(); n];
    for _ in 0..=n {
        let mut changed = false;
        for f in 0..n {
            let body = &prog.bodies[f];
            let mut sources: Vec<(NodeId, u32)> = (goal_nodes.iter())
                .filter(|(gf, _)| *gf == f)
                .map(|(_, g)| (*g, 0))
                .collect();
            for e in &body.edges {
                if let Instr::Call { func, .. } = &e.instr
                    && let Some(&callee) = prog.by_name.get(func)
                    && entry_cost[callee] < FAR
                {
                    sources.push((e.from, entry_cost[callee] + 1));
                }
            }
            distance[f] = backwards(prog, f, &sources);
            let at_entry = distance[f][body.entry as usize];
            if at_entry < entry_cost[f] {
                entry_cost[f] = at_entry;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    (distance, to_exit)
}

/// Shortest distances to the nearest source (each with its own starting
/// cost) against the edges of function `f`.
fn backwards(prog: &Explored, f: usize, sources: &[(NodeId, u32)]) -> Vec<u32> {
    let body = &prog.bodies[f];
    let mut pred: Vec<Vec<NodeId>> = vec![Vec::new(); body.node_count as usize];
    for e in &body.edges {
        pred[e.to as usize].push(e.from);
    }
    let mut dist = vec![FAR; body.node_count as usize];
    let mut heap: BinaryHeap<Reverse<(u32, NodeId)>> = BinaryHeap::new();
    for &(v, c) in sources {
        if c < dist[v as usize] {
            dist[v as usize] = c;
            heap.push(Reverse((c, v)));
        }
    }
    while let Some(Reverse((d, v))) = heap.pop() {
        if d > dist[v as usize] {
            continue;
        }
        for &u in &pred[v as usize] {
            if d + 1 < dist[u as usize] {
                dist[u as usize] = d + 1;
                heap.push(Reverse((d + 1, u)));
            }
        }
    }
    dist
}

impl Guidance {
    /// Whether a state may still reach the goal: its path condition is
    /// consistent with the goal's necessary condition (or the solver
    /// could not say).
    pub(crate) fn may_reach_goal(&mut self, m: &mut Machine, st: &State) -> bool {
        let Some(c) = self.condition else {
            return true;
        };
        match m.check_within(&st.pc, c, CHECK_LIMIT) {
            Answer::Unsat => {
                self.slow = 0;
                false
            }
            Answer::Sat => {
                self.slow = 0;
                true
            }
            Answer::Unknown(_) => {
                self.slow += 1;
                if self.slow >= GIVE_UP_AFTER {
                    self.condition = None;
                    self.note = Some(format!(
                        "its condition stopped guiding: {GIVE_UP_AFTER} checks in a row took over {} ms",
                        CHECK_LIMIT.as_millis()
                    ));
                }
                true
            }
        }
    }
}
