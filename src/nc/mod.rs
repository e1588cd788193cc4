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
pub use unfold::{bound_counters, unfold};

use crate::ir::{self, Body, EdgeId, Instr, LoopId};
use crate::term::{TermId, Terms, Var, VarKind};
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
}

impl Default for Options {
    fn default() -> Options {
        Options {
            counter_inference: true,
            max_body_backbones: 256,
            solver_timeout: Duration::from_secs(10),
            prune_with_solver: true,
            helper: crate::smt::default_z3(),
        }
    }
}

/// Counts of the work done, for tests and benchmarks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub summaries_computed: usize,
    pub pruned_backbones: usize,
    pub inference_queries: usize,
    pub inferred_relations: usize,
    /// Array values iterated by the general Table 2 form (∃p, last writer).
    pub region_array_summaries: usize,
}

/// Where loop summaries come from: computed here, or asked of the salsa
/// database (which computes each once and shares it between targets).
#[derive(Clone, Copy)]
pub struct DbSource<'a> {
    pub db: &'a dyn salsa::Database,
    pub file: crate::db::SourceFile,
}

/// A summary (or any result) together with the term store its ids live in,
/// so that it can be cached and imported into another engine.
pub struct Portable<T> {
    pub terms: Terms,
    pub value: T,
}

pub struct Engine<'a> {
    pub body: &'a Body,
    source: Option<DbSource<'a>>,
    pub terms: Terms,
    pub slots: Rc<Slots>,
    pub opts: Options,
    pub stats: Stats,
    summaries: HashMap<LoopId, Rc<Summary>>,
    loop_at: HashMap<ir::NodeId, LoopId>,
    next_counter: u32,
    /// The helper solver process of this run (pruning, inference).
    pub(crate) solver: crate::smt::Helper,
}

impl<'a> Engine<'a> {
    pub fn new(body: &'a Body, opts: Options) -> Engine<'a> {
        let mut terms = Terms::new();
        let slots = Rc::new(Slots::new(&mut terms, body));
        let loop_at = body.loops.iter().map(|l| (l.header, l.id)).collect();
        let solver = crate::smt::Helper::new(opts.helper.clone(), opts.solver_timeout);
        Engine {
            body,
            source: None,
            terms,
            slots,
            opts,
            stats: Stats::default(),
            summaries: HashMap::default(),
            loop_at,
            next_counter: 1,
            solver,
        }
    }

    /// An engine that takes loop summaries from the database.
    pub fn with_db(body: &'a Body, opts: Options, source: DbSource<'a>) -> Engine<'a> {
        let mut e = Engine::new(body, opts);
        e.source = Some(source);
        e
    }

    /// Computes a loop's summary here (what the database query runs).
    pub fn compute_summary(&mut self, l: LoopId) -> Summary {
        self.stats.summaries_computed += 1;
        summary::compute(self, l)
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
            Instr::Alloc(v, e) => {
                ev.alloc(t, st, *v, e);
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
        let s = match self.source {
            Some(src) => {
                let shared = crate::db::loop_summary(src.db, src.file, l, self.opts.clone());
                self.import_summary(shared)
            }
            None => self.compute_summary(l),
        };
        let s = Rc::new(s);
        self.summaries.insert(l, s.clone());
        s
    }

    /// Brings a cached summary into this engine's store, with its own
    /// counters (numbered in this engine) and fresh bound variables.
    fn import_summary(&mut self, p: &Portable<Summary>) -> Summary {
        let sum = &p.value;
        let mut roots: Vec<TermId> = sum.theta.values.values().copied().collect();
        roots.push(sum.looping);
        roots.extend(sum.gammas.iter().copied());
        roots.extend(sum.inferred.iter().map(|(_, t)| *t));
        let counter_terms: Vec<TermId> =
            sum.counters.iter().map(|c| p.terms.var_const(*c)).collect();
        let tau_terms: Vec<TermId> = sum.taus.iter().map(|t| p.terms.var_const(*t)).collect();
        let selector_terms: Vec<TermId> = sum
            .selectors
            .iter()
            .map(|t| p.terms.var_const(*t))
            .collect();
        // The selectors too: they are read back below (the soundness run of
        // `apc check` found them missing).
        roots.extend(
            counter_terms
                .iter()
                .chain(&tau_terms)
                .chain(&selector_terms)
                .copied()
                .filter(|t| t.0 != u32::MAX),
        );
        // Every counter gets a new number here, and the iteration variable
        // τn of a counter κn the same one: κ17 iterates with τ17.
        let mut names: HashMap<Var, String> = HashMap::default();
        let mut next = self.next_counter;
        let all = all_vars(&p.terms, &roots);
        let mut renumber: HashMap<String, u32> = HashMap::default();
        for v in all.iter().filter(|v| v.kind == VarKind::Counter) {
            let old = p.terms.var_name(*v).trim_start_matches('κ').to_string();
            renumber.insert(old, next);
            names.insert(*v, format!("κ{next}"));
            next += 1;
        }
        for v in all.iter().filter(|v| v.kind == VarKind::Bound) {
            let name = p.terms.var_name(*v);
            if let Some(n) = name.strip_prefix('τ').and_then(|old| renumber.get(old)) {
                names.insert(*v, format!("τ{n}"));
            }
        }
        let imported = self.terms.import(
            &p.terms,
            &roots,
            &mut |terms: &mut Terms, v: Var, name: &str| match v.kind {
                VarKind::FreshBool => {
                    let t = terms.fresh_bool();
                    match terms.node(t) {
                        crate::term::Node::Var(v) => *v,
                        _ => unreachable!("a fresh Boolean is a variable"),
                    }
                }
                kind => terms.new_var(kind, names.get(&v).map(String::as_str).unwrap_or(name)),
            },
        );
        self.next_counter = next;
        let mut it = imported.into_iter();
        let mut theta = State {
            values: BTreeMap::new(),
        };
        for slot in sum.theta.values.keys() {
            theta.values.insert(*slot, it.next().expect("one per root"));
        }
        let looping = it.next().expect("looping");
        let gammas: Vec<TermId> = (0..sum.gammas.len())
            .map(|_| it.next().expect("gamma"))
            .collect();
        let inferred: Vec<(LoopId, TermId)> = sum
            .inferred
            .iter()
            .map(|(l, _)| (*l, it.next().expect("relation")))
            .collect();
        let as_var = |terms: &Terms, t: TermId| match terms.node(t) {
            crate::term::Node::Var(v) => *v,
            _ => unreachable!("a counter is a variable"),
        };
        let mut counters = Vec::new();
        for c in &counter_terms {
            if c.0 != u32::MAX {
                counters.push(as_var(&self.terms, it.next().expect("counter")));
            }
        }
        let mut taus = Vec::new();
        for t in &tau_terms {
            if t.0 != u32::MAX {
                taus.push(as_var(&self.terms, it.next().expect("tau")));
            }
        }
        let mut selectors = Vec::new();
        for t in &selector_terms {
            if t.0 != u32::MAX {
                selectors.push(as_var(&self.terms, it.next().expect("selector")));
            }
        }
        Summary {
            counters,
            selectors,
            theta,
            looping,
            taus,
            gammas,
            inferred,
            unknown: sum.unknown.clone(),
            backbones: sum.backbones,
            notes: sum.notes.clone(),
        }
    }

    /// Applies a loop's summary in state `st` (the state at the header):
    /// fresh counters, the looping condition with the prefix substituted
    /// in, and the state after the loop, θ ∘ θ^κ.
    pub(crate) fn apply_summary(&mut self, l: LoopId, st: &State) -> Applied {
        let sum = self.summary(l);
        let own: Vec<Var> = sum.counters.iter().chain(&sum.selectors).copied().collect();
        let fresh: Vec<Var> = own.iter().map(|_| self.fresh_counter()).collect();
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
        dag::reach(self, &[node])
    }

    /// φ̂ for reaching any of several vertices (the copies of one target in
    /// the whole-program graph); `false` for none.
    pub fn condition_of(&mut self, nodes: &[ir::NodeId]) -> TermId {
        dag::reach(self, nodes)
    }
}

/// Every variable occurring in the terms (free or bound), sorted.
fn all_vars(terms: &Terms, roots: &[TermId]) -> Vec<Var> {
    let mut out = std::collections::BTreeSet::new();
    let mut seen = rustc_hash::FxHashSet::default();
    let mut stack = roots.to_vec();
    while let Some(t) = stack.pop() {
        if !seen.insert(t) {
            continue;
        }
        match terms.node(t) {
            crate::term::Node::Var(v) => {
                out.insert(*v);
            }
            crate::term::Node::Lambda(vs, _) | crate::term::Node::Quant(_, vs, _) => {
                out.extend(vs.iter().copied())
            }
            _ => {}
        }
        stack.extend(terms.children(terms.node(t)));
    }
    out.into_iter().collect()
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
