//! Necessary conditions (Strejček & Trtík, *Abstracting Path Conditions*,
//! ISSTA'12 and its technical report; `spec/notes/apc.md`).
//!
//! For a target of a flowgraph, [`Engine::condition`] builds φ̂: a formula
//! over the inputs (basic symbols of main's parameters, the input stream)
//! and existentially read path counters that every run reaching the target
//! satisfies. Its parts:
//!
//! - `state`: slots, symbolic states, evaluation of IR expressions;
//! - `summary`: loop summaries — one path counter per backbone of the loop
//!   body, the iterated state θ^κ as a least fixpoint of the Table 1 / ISSTA
//!   rules, the looping condition φ^κ with its ∀τᵢ ∃τ⃗₋ᵢ structure, the
//!   artificial ν symbols of nested loops and the SMT inference of inner
//!   loop counts (TR Alg. 8);
//! - `dag`: the top level, executed over the acyclic skeleton in
//!   topological order with one join per merge point, so φ̂ stays linear in
//!   the program (one shared set of counters per loop header: ∃ distributes
//!   over the disjunction of backbones, so this equals the per-backbone φ̂);
//! - `unfold`: the quantifier-free weakening φ̂^K of ISSTA §4.
//!
//! Knows the IR and terms; talks to a solver only for Alg. 8.

mod dag;
mod explain;
pub mod state;
mod summary;
mod unfold;

pub use explain::render;
pub use summary::Summary;
pub use unfold::unfold;

use crate::ir::{self, Body, EdgeId, Instr, LoopId, NodeKind};
use crate::term::{TermId, Terms, Var, VarKind};
use state::{Eval, Slots, State};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct Options {
    /// Infer linear relations between inner and outer loop counts (Alg. 8).
    pub counter_inference: bool,
    /// A loop body with more backbones than this gets the trivial summary.
    pub max_body_backbones: usize,
    /// Time limit of each inference query.
    pub solver_timeout: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            counter_inference: true,
            max_body_backbones: 256,
            solver_timeout: Duration::from_secs(10),
        }
    }
}

/// Counts of the work done, for tests and benchmarks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub summaries_computed: usize,
    pub inference_queries: usize,
    pub inferred_relations: usize,
}

pub struct Engine<'a> {
    pub body: &'a Body,
    pub terms: Terms,
    pub slots: Rc<Slots>,
    pub opts: Options,
    pub stats: Stats,
    summaries: HashMap<LoopId, Rc<Summary>>,
    loop_at: HashMap<ir::NodeId, LoopId>,
    next_counter: u32,
}

impl<'a> Engine<'a> {
    pub fn new(body: &'a Body, opts: Options) -> Engine<'a> {
        let mut terms = Terms::new();
        let slots = Rc::new(Slots::new(&mut terms, body));
        let loop_at = body.loops.iter().map(|l| (l.header, l.id)).collect();
        Engine {
            body,
            terms,
            slots,
            opts,
            stats: Stats::default(),
            summaries: HashMap::new(),
            loop_at,
            next_counter: 1,
        }
    }

    pub(crate) fn eval(&self) -> Eval<'a> {
        Eval {
            body: self.body,
            slots: self.slots.clone(),
        }
    }

    pub(crate) fn fresh_counter(&mut self) -> Var {
        let n = self.next_counter;
        self.next_counter += 1;
        self.terms.new_var(VarKind::Counter, format!("κ{n}"))
    }

    pub(crate) fn loop_at(&self, v: ir::NodeId) -> Option<LoopId> {
        self.loop_at.get(&v).copied()
    }

    /// Executes one instruction: updates the state, returns the guard.
    pub(crate) fn exec(&mut self, st: &mut State, instr: &Instr) -> TermId {
        let ev = self.eval();
        let t = &mut self.terms;
        match instr {
            Instr::Assign(p, e) => {
                ev.assign(t, st, p, e);
                t.bool(true)
            }
            Instr::Alloc(v, _) => {
                ev.alloc(t, st, *v);
                t.bool(true)
            }
            Instr::Call { dst, .. } => {
                ev.call(t, st, *dst);
                t.bool(true)
            }
            Instr::Output(_) | Instr::Skip => t.bool(true),
            // A run continues past a check only if it holds.
            Instr::Assume(c) | Instr::Assert(c, _) => ev.cond(t, st, c),
        }
    }

    /// The summary of a loop, computed once.
    pub fn summary(&mut self, l: LoopId) -> Rc<Summary> {
        if let Some(s) = self.summaries.get(&l) {
            return s.clone();
        }
        let s = Rc::new(summary::compute(self, l));
        self.stats.summaries_computed += 1;
        self.summaries.insert(l, s.clone());
        s
    }

    /// Applies a loop's summary in state `st` (the state at the header):
    /// fresh counters, the looping condition with the prefix substituted
    /// in, and the state after the loop, θ ∘ θ^κ.
    pub(crate) fn apply_summary(&mut self, l: LoopId, st: &State) -> Applied {
        let sum = self.summary(l);
        let fresh: Vec<Var> = sum.counters.iter().map(|_| self.fresh_counter()).collect();
        let mut rename = crate::term::Subst::new();
        for (old, new) in sum.counters.iter().zip(&fresh) {
            let t = self.terms.var(*new);
            rename.bind(*old, t);
        }
        let mut memo = HashMap::new();
        let mut theta = State {
            values: BTreeMap::new(),
        };
        for (slot, t) in &sum.theta.values {
            let r = rename.apply_memo(&mut self.terms, *t, &mut memo);
            theta.values.insert(*slot, r);
        }
        let looping = rename.apply_memo(&mut self.terms, sum.looping, &mut memo);
        let prefix = st.as_subst(&self.slots);
        let looping = prefix.apply(&mut self.terms, looping);
        let mut parts = vec![looping];
        for c in &fresh {
            let ct = self.terms.var(*c);
            let zero = self.terms.int(0);
            parts.push(self.terms.le(zero, ct));
        }
        let guard = self.terms.and(parts);
        let post = st.compose(&mut self.terms, &self.slots, &theta);
        Applied {
            guard,
            post,
            counters: fresh,
        }
    }

    /// φ̂ for a target of this flowgraph.
    pub fn condition(&mut self, target: ir::TargetId) -> TermId {
        let node = self.body.targets[target as usize].node;
        dag::reach(self, node)
    }

    /// Every edge of the loop body backbones, for explanations.
    pub fn is_error_node(&self, v: ir::NodeId) -> bool {
        matches!(self.body.node_kinds[v as usize], NodeKind::Error(_))
    }
}

/// The result of applying a summary at a header.
pub(crate) struct Applied {
    pub guard: TermId,
    pub post: State,
    pub counters: Vec<Var>,
}

/// The path of edges of a backbone, for per-backbone execution.
pub type Path = Vec<EdgeId>;

#[cfg(test)]
mod tests;
