//! Necessary conditions (Strejček & Trtík, *Abstracting Path Conditions*,
//! ISSTA'12 and its technical report; `docs/necessary-conditions.md`).
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
//! - `unfold`: the quantifier-free weakening φ̂^K of ISSTA §4;
//! - `query`: the queries of a target (φ̂, φ̂^K, the deepening chain);
//! - `decider`: the engine of the contract ([`Conditions`]): the queries
//!   raced on the solvers, each model judged by a replay.
//!
//! Knows the IR, terms, the solver layer and witnesses; not the other
//! engines.

mod dag;
pub mod decider;
mod explain;
pub mod facts;
pub mod query;
pub mod state;
mod summary;
pub mod tracked;
mod unfold;

pub use decider::{Conditions, engine_options};
pub use explain::render;
pub use facts::{FactSource, HeaderFacts};
pub use summary::Summary;
pub use tracked::{
    Condition, Simplified, encoded, loop_summary, necessary_condition, simplified_condition,
    simplify_condition, sliced_condition,
};
pub use unfold::{bound_counters, unfold};

use crate::db::{self, SourceFile};
use crate::ir::{self, Body, EdgeId, Instr, LoopId};
use crate::term::{Numbered, TermId, Terms, Var};
use rustc_hash::FxHashMap as HashMap;
use state::{Eval, Slots, State};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Options {
    /// Infer linear relations between inner and outer loop counts (Alg. 8).
    pub counter_inference: bool,
    /// A loop body with more backbones than this gets the trivial summary.
    pub max_body_backbones: usize,
    /// Time limit of each inference query.
    pub solver_timeout: Duration,
    /// Drop loop-body backbones whose path condition a solver proves
    /// unsatisfiable (TR Alg. 2's pruning; only syntactic pruning if off).
    pub prune_with_solver: bool,
    /// The solver for the engine's own queries (pruning, counter
    /// inference); without one, neither runs.
    pub helper: Option<crate::smt::Profile>,
    /// Facts assumed at loop headers of the whole-program flowgraph
    /// ([`facts`]); never on a slice, whose runs they are not about.
    pub header_facts: Option<std::sync::Arc<HeaderFacts>>,
}

impl Options {
    /// These options without facts: a loop's summary, and a slice's
    /// condition, are computed without them.
    pub fn without_facts(&self) -> Options {
        Options {
            header_facts: None,
            ..self.clone()
        }
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            counter_inference: true,
            max_body_backbones: 256,
            solver_timeout: Duration::from_secs(10),
            prune_with_solver: true,
            helper: crate::smt::default_z3(),
            header_facts: None,
        }
    }
}

/// Counts of the work behind a condition, for tests and benchmarks. A
/// summary carries the counts of its own computation (`Summary::stats`);
/// an engine adds those of every summary it imports to its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub pruned_backbones: usize,
    pub inference_queries: usize,
    pub inferred_relations: usize,
    /// Array values iterated by the general Table 2 form (∃p, last writer).
    pub region_array_summaries: usize,
    /// Facts assumed at loop headers ([`facts`]).
    pub assumed_facts: usize,
}

impl Stats {
    fn add(&mut self, other: &Stats) {
        self.pruned_backbones += other.pruned_backbones;
        self.inference_queries += other.inference_queries;
        self.inferred_relations += other.inferred_relations;
        self.region_array_summaries += other.region_array_summaries;
        self.assumed_facts += other.assumed_facts;
    }
}

/// A summary (or any result) together with the term store its ids live in,
/// so that it can be cached and imported into another engine.
pub struct Portable<T> {
    pub terms: Terms,
    pub value: T,
}

/// Builds necessary conditions over the whole-program flowgraph of a
/// file. Loop summaries come from the database (`tracked::loop_summary`,
/// computed once per loop and shared by every target) and are imported
/// into this engine's term store.
pub struct Engine<'a> {
    db: &'a dyn salsa::Database,
    file: SourceFile,
    pub body: &'a Body,
    pub terms: Terms,
    pub slots: Rc<Slots>,
    pub opts: Options,
    pub stats: Stats,
    /// The target whose slice `body` is (`db::target_slice`), if it is
    /// one: the key of the summaries of the loops the slice changed.
    slice_of: Option<(String, u32)>,
    summaries: HashMap<LoopId, Rc<Summary>>,
    loop_at: HashMap<ir::NodeId, LoopId>,
    next_counter: u32,
    /// The helper solver process of this run (pruning, inference).
    pub(crate) solver: crate::smt::Helper,
}

impl<'a> Engine<'a> {
    /// An engine over `file`'s whole-program flowgraph (`main` with calls
    /// inlined); `None` when the program has no `main`.
    pub fn new(db: &'a dyn salsa::Database, file: SourceFile, opts: Options) -> Option<Engine<'a>> {
        let body = &db::program(db, file).as_ref()?.body;
        Some(Engine::over(db, file, body, None, opts))
    }

    /// An engine over the slice of the whole-program flowgraph for a
    /// function's target (`db::target_slice`), or over the whole graph
    /// when the slice drops nothing; `None` when the program has no `main`.
    pub fn for_target(
        db: &'a dyn salsa::Database,
        file: SourceFile,
        function: &str,
        target: u32,
        opts: Options,
    ) -> Option<Engine<'a>> {
        let whole = &db::program(db, file).as_ref()?.body;
        Some(
            match db::target_slice(db, file, function.to_string(), target) {
                Some(sliced) => {
                    let key = Some((function.to_string(), target));
                    Engine::over(db, file, sliced, key, opts.without_facts())
                }
                None => Engine::over(db, file, whole, None, opts),
            },
        )
    }

    fn over(
        db: &'a dyn salsa::Database,
        file: SourceFile,
        body: &'a Body,
        slice_of: Option<(String, u32)>,
        opts: Options,
    ) -> Engine<'a> {
        let mut terms = Terms::new();
        let slots = Rc::new(Slots::new(&mut terms, body));
        // The symbols' terms first, as every condition and summary starts
        // from them: an imported summary's sums then print symbols before
        // counters (`k₀ + κ1`), whatever is asked of the engine first.
        State::general(&mut terms, &slots);
        let loop_at = body.loops.iter().map(|l| (l.header, l.id)).collect();
        let solver = crate::smt::Helper::new(opts.helper.clone(), opts.solver_timeout);
        Engine {
            db,
            file,
            body,
            terms,
            slots,
            opts,
            stats: Stats::default(),
            slice_of,
            summaries: HashMap::default(),
            loop_at,
            next_counter: 1,
            solver,
        }
    }

    /// Computes a loop's summary here (what `tracked::loop_summary` runs).
    pub(crate) fn compute_summary(&mut self, l: LoopId) -> Summary {
        summary::compute(self, l)
    }

    pub(crate) fn eval(&self) -> Eval<'a> {
        Eval {
            body: self.body,
            slots: self.slots.clone(),
        }
    }

    /// A fresh counter κn or selector ℓn, numbered in this engine.
    pub(crate) fn fresh_numbered(&mut self, what: Numbered) -> Var {
        let n = self.next_counter;
        self.next_counter += 1;
        self.terms.new_numbered(what, n)
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
            Instr::Alloc(v, e) => {
                ev.alloc(t, st, *v, e);
                t.bool(true)
            }
            Instr::Call { dst, .. } => {
                ev.call(t, st, *dst);
                t.bool(true)
            }
            Instr::Enter(locals) => {
                ev.enter(t, st, locals);
                t.bool(true)
            }
            Instr::Output(_) | Instr::Skip => t.bool(true),
            // A run continues past a check only if it holds.
            Instr::Assume(c) | Instr::Assert(c, _) => ev.cond(t, st, c),
        }
    }

    /// The summary of a loop, from the database, imported once.
    pub fn summary(&mut self, l: LoopId) -> Rc<Summary> {
        if let Some(s) = self.summaries.get(&l) {
            return s.clone();
        }
        let (db, file, opts) = (self.db, self.file, self.opts.without_facts());
        let shared = match &self.slice_of {
            Some((function, target)) if self.slice_changed(l) => {
                tracked::sliced_loop_summary(db, file, function.clone(), *target, l, opts)
            }
            _ => tracked::loop_summary(db, file, l, opts),
        };
        let s = Rc::new(summary::import(self, shared));
        self.stats.add(&s.stats);
        self.summaries.insert(l, s.clone());
        s
    }

    /// Whether the slice this engine works on changed an instruction of a
    /// loop: its summary is then the slice's own, else the whole graph's.
    fn slice_changed(&self, l: LoopId) -> bool {
        let Some(whole) = db::program(self.db, self.file).as_ref() else {
            return true;
        };
        let nodes = &self.body.loops[l as usize].nodes;
        (self.body.edges.iter().zip(&whole.body.edges))
            .any(|(mine, theirs)| nodes.binary_search(&mine.from).is_ok() && mine != theirs)
    }

    /// Applies a loop's summary in state `st` (the state at the header):
    /// fresh counters, the looping condition with the prefix substituted
    /// in, and the state after the loop, θ ∘ θ^κ.
    pub(crate) fn apply_summary(&mut self, l: LoopId, st: &State) -> Applied {
        let sum = self.summary(l);
        let own: Vec<Var> = sum.counters.iter().chain(&sum.selectors).copied().collect();
        let fresh: Vec<Var> = own
            .iter()
            .map(|v| {
                let what = self
                    .terms
                    .numbered(*v)
                    .map_or(Numbered::Counter, |(w, _)| w);
                self.fresh_numbered(what)
            })
            .collect();
        let mut rename = crate::term::Subst::new();
        for (old, new) in own.iter().zip(&fresh) {
            let t = self.terms.var(*new);
            rename.bind(*old, t);
        }
        let mut memo = HashMap::default();
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
        let mut post = st.compose(&mut self.terms, &self.slots, &theta);
        // A summary of the whole program's loop (one the slice left
        // unchanged) has no slots for the cells the slice's arrays became
        // (`ir::scalarise`): that loop does not touch them.
        for (slot, t) in &st.values {
            post.values.entry(*slot).or_insert(*t);
        }
        Applied {
            guard,
            post,
            counters: fresh,
        }
    }

    /// φ̂ for a target of this flowgraph.
    pub fn condition(&mut self, target: ir::TargetId) -> TermId {
        let node = self.body.targets[target as usize].node;
        dag::reach(self, &[node])
    }

    /// φ̂ for reaching any of several vertices (the copies of one target in
    /// the whole-program graph); `false` for none.
    pub fn condition_of(&mut self, nodes: &[ir::NodeId]) -> TermId {
        dag::reach(self, nodes)
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
