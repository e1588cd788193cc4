//! Path subsumption with lazy annotations (docs/thesis-executor.md, "Path
//! subsumption"; the thesis's §4.2 and §5.4.2, after McMillan).
//!
//! An annotation A(v) of a vertex of `main` is a condition on main's
//! variables under which no error is reachable from `v`. A state at `v`
//! whose path condition implies A(v) (PC ∧ ¬A(v) unsatisfiable) is pruned.
//!
//! - When a path ends, the vertices it ran through are annotated again,
//!   latest first, each from its successors' annotations by weakest
//!   precondition: an assignment substitutes, a guard `g` gives `g ⇒ A`,
//!   a check `c` gives `c ∧ A` (listing 5.7) or, with
//!   [`AtChecks::Block`], nothing at all (listing 5.6); a call, a write
//!   that may change a variable the annotation reads, or anything the
//!   annotation language cannot say gives `false`. New annotations are
//!   disjoined with the old ones.
//! - Loops: once the code after a loop nest has annotations, each of their
//!   disjuncts `d` is tried as an invariant at every header of the nest;
//!   it is kept only if it is inductive on a general state: for every
//!   header h, `d ∧ ¬B(h)` is unsatisfiable, where B is the weakest
//!   precondition through one round of the body with `d` at the headers
//!   (every body path at once, nested loops included). A loop iteration
//!   past the thesis's `_t` (one) waits until nothing else can run, so that
//!   the exit is explored first; it is never dropped.
//!
//! Every annotation is sound whatever the order of the paths (each is the
//! weakest precondition of sound annotations, or an invariant checked
//! inductive), so a solver `unknown` only ever means "not pruned".
//! Annotations live in `main` only: a vertex of a callee would need its
//! calling context; calls block propagation.
//!
//! [`Annotations`] work on the run's `machine::Machine` (its terms and
//! solver); when a state is checked or a path learnt from is the stepping's
//! (`exec`), which this does not know.

use super::eval::int_term;
use super::machine::Machine;
use super::state::{PathCond, State, Trail, Value};
use crate::ir::{Body, CmpOp, Cond, EdgeId, Expr, Instr, LoopId, NodeId, NodeKind, Place, VarId};
use crate::smt::Answer;
use crate::symbolic::comparison;
use crate::term::{Sort, Subst, TermId, Terms, Var, VarKind};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::Arc;

/// What an annotation makes of a statement that may fail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AtChecks {
    /// Nothing propagates past it (the thesis's implementation, listing 5.6).
    Block,
    /// Its safety condition is conjoined (listing 5.7, the thesis's
    /// proposed improvement).
    #[default]
    Conjoin,
}

/// More disjuncts than this at one vertex are not added (weaker, still sound).
const MAX_DISJUNCTS: usize = 8;
/// Annotations larger than this (term nodes) are dropped.
const MAX_SIZE: usize = 1_500;
/// Invariant candidates tried per loop nest each time new ones appear.
const CANDIDATES_PER_ROUND: usize = 6;
/// Steps of the iteration from `true` tried each time a nest's exits change.
const FROM_TRUE_STEPS: usize = 3;

/// The annotations of `main`'s vertices, and the loop nests they cover.
pub(crate) struct Annotations {
    at_checks: AtChecks,
    /// Also try the candidates of a greatest-fixpoint iteration from
    /// `true` at the headers (docs/thesis-executor.md, "Invariants from
    /// `true`"), beyond the thesis's candidates from after the loop.
    from_true: bool,
    /// Per vertex: the disjuncts (none: `false`).
    disjuncts: Vec<Vec<TermId>>,
    /// When each vertex was last annotated again, and last changed.
    computed_at: Vec<u64>,
    changed_at: Vec<u64>,
    clock: u64,
    /// The term variable of each of main's variables an annotation may
    /// read: integers, and one-dimensional input arrays.
    vars: Vec<Option<Var>>,
    /// The length of each local array variable, and whether each pointer
    /// variable is non-null (1) or null (0): what array-index and
    /// null-dereference checks ask.
    lengths: Vec<Option<Var>>,
    non_null: Vec<Option<Var>>,
    var_of: HashMap<Var, (crate::ir::VarId, Reading)>,
    /// Term variables of main's variables whose address is taken.
    in_memory: Vec<Var>,
    /// Vertices with an out-edge to an error vertex.
    may_fail: Vec<bool>,
    /// Per edge: the loop it goes round again / leaves.
    back_of: Vec<Option<LoopId>>,
    exit_of: Vec<Option<LoopId>>,
    nests: Vec<Nest>,
    pub invariants: u64,
    pub refuted: u64,
}

/// What of a variable of main an annotation variable stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reading {
    Value,
    Length,
    NonNull,
}

/// A loop of `main` that no other loop contains, with its inner loops.
struct Nest {
    headers: Vec<NodeId>,
    /// The other vertices of the nest, successors before predecessors
    /// (edges into a header excluded).
    body: Vec<NodeId>,
    inside: Vec<bool>,
    /// Where the nest's exit edges lead.
    exits: Vec<NodeId>,
    tried: HashSet<TermId>,
    /// The clock when its candidates were last looked at.
    looked_at: u64,
    /// Whether the iteration from `true` ran since the exits last changed.
    from_true_done: bool,
}

impl Annotations {
    pub(crate) fn new(
        body: &Body,
        succ: &[Vec<EdgeId>],
        terms: &mut Terms,
        at: AtChecks,
        from_true: bool,
    ) -> Self {
        let n = body.node_count as usize;
        let vars: Vec<Option<Var>> = body.vars.iter().map(|v| annotation_var(v, terms)).collect();
        let lengths: Vec<Option<Var>> = (body.vars.iter())
            .map(|v| shape_var(v, Reading::Length, terms))
            .collect();
        let non_null: Vec<Option<Var>> = (body.vars.iter())
            .map(|v| shape_var(v, Reading::NonNull, terms))
            .collect();
        let mut var_of = HashMap::default();
        for (reading, of) in [
            (Reading::Value, &vars),
            (Reading::Length, &lengths),
            (Reading::NonNull, &non_null),
        ] {
            for (i, v) in of.iter().enumerate() {
                if let Some(v) = v {
                    var_of.insert(*v, (i as crate::ir::VarId, reading));
                }
            }
        }
        let in_memory = (body.address_taken().iter())
            .flat_map(|v| {
                [
                    vars[*v as usize],
                    lengths[*v as usize],
                    non_null[*v as usize],
                ]
            })
            .flatten()
            .collect();
        let is_error = |w: NodeId| matches!(body.node_kinds[w as usize], NodeKind::Error(_));
        let may_fail = (0..n)
            .map(|v| succ[v].iter().any(|e| is_error(body.edges[*e as usize].to)))
            .collect();
        let mut back_of = vec![None; body.edges.len()];
        let mut exit_of = vec![None; body.edges.len()];
        for l in &body.loops {
            l.back_edges
                .iter()
                .for_each(|e| back_of[*e as usize] = Some(l.id));
            l.exit_edges
                .iter()
                .for_each(|e| exit_of[*e as usize] = Some(l.id));
        }
        let mut a = Annotations {
            at_checks: at,
            from_true,
            disjuncts: vec![Vec::new(); n],
            computed_at: vec![0; n],
            changed_at: vec![0; n],
            clock: 1,
            vars,
            lengths,
            non_null,
            var_of,
            in_memory,
            may_fail,
            back_of,
            exit_of,
            nests: nests(body, succ),
            invariants: 0,
            refuted: 0,
        };
        // Where nothing follows, nothing can fail: main's exit, and a
        // vertex where an `assume` ended the run.
        let t = terms.bool(true);
        for (v, out) in succ.iter().enumerate() {
            if out.is_empty() && !is_error(v as NodeId) {
                a.disjuncts[v] = vec![t];
                a.changed_at[v] = 1;
            }
        }
        a
    }

    /// A(v) as one term (`false` when nothing is known).
    pub(crate) fn at(&self, v: NodeId, terms: &mut Terms) -> TermId {
        terms.or(self.disjuncts[v as usize].clone())
    }

    pub(crate) fn has(&self, v: NodeId) -> bool {
        !self.disjuncts[v as usize].is_empty()
    }

    /// The main variable an annotation variable stands for, and what of it.
    pub(crate) fn var(&self, v: Var) -> Option<(crate::ir::VarId, Reading)> {
        self.var_of.get(&v).copied()
    }

    /// Adds `t`'s disjuncts to A(v); whether anything was new.
    fn add(&mut self, v: NodeId, t: TermId, terms: &mut Terms) -> bool {
        if terms.as_bool(t) == Some(false) || terms.dag_size(&[t]) > MAX_SIZE {
            return false;
        }
        let have = &mut self.disjuncts[v as usize];
        if have.iter().any(|d| terms.as_bool(*d) == Some(true)) {
            return false;
        }
        let new: Vec<TermId> = match terms.node(t) {
            crate::term::Node::Or(xs) => xs.to_vec(),
            _ => vec![t],
        };
        let mut changed = false;
        for d in new {
            if terms.as_bool(d) == Some(true) {
                *have = vec![d];
                changed = true;
                break;
            }
            if !have.contains(&d) && have.len() < MAX_DISJUNCTS {
                have.push(d);
                changed = true;
            }
        }
        if changed {
            self.clock += 1;
            self.changed_at[v as usize] = self.clock;
        }
        changed
    }

    // ---- weakest preconditions ------------------------------------------------

    /// A(v) from its successors' values: ⋀ over out-edges of wp(edge, value).
    fn wp_vertex(
        &self,
        body: &Body,
        succ: &[Vec<EdgeId>],
        v: NodeId,
        value: &mut dyn FnMut(&Self, NodeId, &mut Terms) -> TermId,
        terms: &mut Terms,
    ) -> TermId {
        if self.at_checks == AtChecks::Block && self.may_fail[v as usize] {
            return terms.bool(false);
        }
        let mut parts = Vec::new();
        for &e in &succ[v as usize] {
            let edge = &body.edges[e as usize];
            let post = value(self, edge.to, terms);
            let w = self.wp_edge(&edge.instr, post, terms);
            if terms.as_bool(w) == Some(false) {
                return w;
            }
            parts.push(w);
        }
        terms.and(parts)
    }

    fn wp_edge(&self, instr: &Instr, post: TermId, terms: &mut Terms) -> TermId {
        let never = terms.bool(false);
        match instr {
            Instr::Skip | Instr::Output(_) | Instr::Enter(_) => post,
            Instr::Assume(c) => match self.cond(c, terms) {
                Some(c) => terms.implies(c, post),
                // Without the guard, A itself is a (stronger) precondition.
                None => post,
            },
            Instr::Assert(c, _) => match self.cond(c, terms) {
                Some(c) => terms.and2(c, post),
                None => never,
            },
            Instr::Call { .. } => never,
            Instr::Alloc(v, _) => {
                let post = self.unless_mentioned(&[*v], post, terms);
                self.substitute(self.non_null[*v as usize], post, terms, |_, t| {
                    Some(t.int(1))
                })
            }
            Instr::Assign(Place::Var(x), e) => {
                let x = *x as usize;
                let post = self.substitute(self.vars[x], post, terms, |a, t| a.expr(e, t));
                let post = self.substitute(self.lengths[x], post, terms, |a, t| a.length_of(e, t));
                self.substitute(self.non_null[x], post, terms, |a, t| a.non_null_of(e, t))
            }
            Instr::Assign(place, _) => match place.root_var() {
                Some(r) => self.unless_mentioned(&[r], post, terms),
                None if terms.mentions_any(post, &self.in_memory) => never,
                None => post,
            },
        }
    }

    /// `post` if it reads none of `vs`, else `false`.
    fn unless_mentioned(&self, vs: &[crate::ir::VarId], post: TermId, terms: &mut Terms) -> TermId {
        let read: Vec<Var> = vs.iter().filter_map(|v| self.vars[*v as usize]).collect();
        if terms.mentions_any(post, &read) {
            terms.bool(false)
        } else {
            post
        }
    }

    /// `post` with `var` replaced by its new value; `false` if the value
    /// cannot be said and `post` reads `var`. The value is only built when
    /// `post` reads the variable.
    fn substitute(
        &self,
        var: Option<Var>,
        post: TermId,
        terms: &mut Terms,
        value: impl FnOnce(&Self, &mut Terms) -> Option<TermId>,
    ) -> TermId {
        let Some(var) = var.filter(|v| terms.mentions(post, *v)) else {
            return post;
        };
        match value(self, terms) {
            Some(t) => {
                let mut s = Subst::new();
                s.bind(var, t);
                s.apply(terms, post)
            }
            None => terms.bool(false),
        }
    }

    /// The length of an array value: a literal's, or another variable's.
    fn length_of(&self, e: &Expr, terms: &mut Terms) -> Option<TermId> {
        match e {
            Expr::Array(xs) => Some(terms.int(xs.len() as i64)),
            Expr::Var(y) => self.lengths[*y as usize].map(|v| terms.var(v)),
            _ => None,
        }
    }

    /// Whether a pointer value is non-null (1) or null (0).
    fn non_null_of(&self, e: &Expr, terms: &mut Terms) -> Option<TermId> {
        match e {
            Expr::Null => Some(terms.int(0)),
            Expr::AddrOf(_) => Some(terms.int(1)),
            Expr::Var(y) => self.non_null[*y as usize].map(|v| terms.var(v)),
            _ => None,
        }
    }

    /// An expression over annotation variables, if the language has it.
    fn expr(&self, e: &Expr, terms: &mut Terms) -> Option<TermId> {
        let var = |t: &mut Terms, v: VarId| match self.vars[v as usize] {
            Some(x) => Ok(t.var(x)),
            None => Err(String::new()),
        };
        let array = |t: &mut Terms, v: VarId| {
            let x = self.vars[v as usize]?;
            (Terms::var_sort(x) == Sort::Array(1)).then(|| t.var(x))
        };
        int_term(terms, e, &var, &array).ok()
    }

    fn compare(&self, op: CmpOp, a: &Expr, b: &Expr, terms: &mut Terms) -> Option<TermId> {
        let (x, y) = (self.int_expr(a, terms)?, self.int_expr(b, terms)?);
        Some(comparison(terms, op, x, y))
    }

    /// An integer-valued expression (not an input array).
    fn int_expr(&self, e: &Expr, terms: &mut Terms) -> Option<TermId> {
        let t = self.expr(e, terms)?;
        (terms.sort(t) == crate::term::Sort::Int).then_some(t)
    }

    fn cond(&self, c: &Cond, terms: &mut Terms) -> Option<TermId> {
        match c {
            Cond::Cmp(op @ (CmpOp::Eq | CmpOp::Ne), Expr::Var(p), Expr::Null)
            | Cond::Cmp(op @ (CmpOp::Eq | CmpOp::Ne), Expr::Null, Expr::Var(p))
                if self.non_null[*p as usize].is_some() =>
            {
                let nn = terms.var(self.non_null[*p as usize]?);
                let zero = terms.int(0);
                let null = comparison(terms, CmpOp::Eq, nn, zero);
                Some(if *op == CmpOp::Eq {
                    null
                } else {
                    terms.not(null)
                })
            }
            Cond::Cmp(op, a, b) => self.compare(*op, a, b, terms),
            Cond::InBounds {
                array: Expr::Var(a),
                index,
                positive,
            } if self.lengths[*a as usize].is_some() => {
                let len = terms.var(self.lengths[*a as usize]?);
                let i = self.int_expr(index, terms)?;
                let zero = terms.int(0);
                let low = comparison(terms, CmpOp::Le, zero, i);
                let high = comparison(terms, CmpOp::Lt, i, len);
                let inside = terms.and2(low, high);
                Some(if *positive { inside } else { terms.not(inside) })
            }
            // An input array is never out of bounds.
            Cond::InBounds {
                array: Expr::Var(a),
                positive,
                ..
            } if self.vars[*a as usize]
                .is_some_and(|v| Terms::var_sort(v) != crate::term::Sort::Int) =>
            {
                Some(terms.bool(*positive))
            }
            Cond::Initialized { .. } | Cond::InBounds { .. } => None,
        }
    }

    // ---- backtracking -----------------------------------------------------------

    /// Annotates the vertices of an ended path again, latest first; a
    /// vertex whose successors did not change since it was last annotated
    /// is skipped.
    pub(crate) fn backtrack(
        &mut self,
        trail: &Trail,
        body: &Body,
        succ: &[Vec<EdgeId>],
        terms: &mut Terms,
    ) {
        for v in trail.visits_backwards() {
            if !self.stale(v, body, succ) {
                continue;
            }
            let a = self.wp_vertex(body, succ, v, &mut |s, w, t| s.at(w, t), terms);
            self.clock += 1;
            self.computed_at[v as usize] = self.clock;
            self.add(v, a, terms);
        }
    }

    fn stale(&self, v: NodeId, body: &Body, succ: &[Vec<EdgeId>]) -> bool {
        let seen = self.computed_at[v as usize];
        seen == 0
            || succ[v as usize]
                .iter()
                .any(|e| self.changed_at[body.edges[*e as usize].to as usize] > seen)
    }

    // ---- loops ---------------------------------------------------------------

    /// The nests whose exits were annotated anew since last looked at, and
    /// their untried invariant candidates (the exits' disjuncts).
    pub(crate) fn candidates(&mut self) -> Vec<(usize, Vec<TermId>)> {
        let mut out = Vec::new();
        for (i, nest) in self.nests.iter_mut().enumerate() {
            let fresh = nest
                .exits
                .iter()
                .any(|x| self.changed_at[*x as usize] > nest.looked_at);
            if !fresh {
                continue;
            }
            nest.looked_at = self.clock;
            nest.from_true_done = false;
            let mut ds: Vec<TermId> = Vec::new();
            for x in nest.exits.iter().chain(&nest.headers) {
                for d in &self.disjuncts[*x as usize] {
                    if !nest.tried.contains(d) && !ds.contains(d) {
                        ds.push(*d);
                    }
                }
            }
            ds.truncate(CANDIDATES_PER_ROUND);
            nest.tried.extend(ds.iter().copied());
            if !ds.is_empty() {
                out.push((i, ds));
            }
        }
        out
    }

    /// The nests due for the iteration from `true`: never tried, or their
    /// exits changed since (B depends on nothing else outside the nest).
    pub(crate) fn downward_due(&mut self) -> Vec<usize> {
        if !self.from_true {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (i, nest) in self.nests.iter_mut().enumerate() {
            if !nest.from_true_done {
                nest.from_true_done = true;
                out.push(i);
            }
        }
        out
    }

    /// B: the weakest precondition of one round of the nest's body with
    /// `d` at every header, per vertex of the nest (headers included).
    pub(crate) fn round(
        &self,
        nest: usize,
        d: TermId,
        body: &Body,
        succ: &[Vec<EdgeId>],
        terms: &mut Terms,
    ) -> HashMap<NodeId, TermId> {
        let n = &self.nests[nest];
        let mut b: HashMap<NodeId, TermId> = HashMap::default();
        let value = |s: &Self, w: NodeId, t: &mut Terms, b: &HashMap<NodeId, TermId>| {
            if n.headers.contains(&w) {
                d
            } else if n.inside[w as usize] {
                b.get(&w).copied().unwrap_or_else(|| t.bool(false))
            } else {
                s.at(w, t)
            }
        };
        for &v in n.body.iter().chain(&n.headers) {
            let known = &b;
            let a = self.wp_vertex(body, succ, v, &mut |s, w, t| value(s, w, t, known), terms);
            b.insert(v, a);
        }
        b
    }

    pub(crate) fn nest_headers(&self, nest: usize) -> &[NodeId] {
        &self.nests[nest].headers
    }

    /// Keeps an invariant found inductive: `d` at the headers, B elsewhere.
    pub(crate) fn keep(
        &mut self,
        nest: usize,
        d: TermId,
        b: HashMap<NodeId, TermId>,
        terms: &mut Terms,
    ) {
        self.invariants += 1;
        for h in self.nests[nest].headers.clone() {
            self.add(h, d, terms);
        }
        for v in self.nests[nest].body.clone() {
            if let Some(t) = b.get(&v) {
                self.add(v, *t, terms);
            }
        }
    }

    /// Counts one more iteration of a loop (back edge) or its end (exit edge).
    pub(crate) fn count_lap(&self, laps: &mut Arc<Vec<u32>>, e: EdgeId) {
        if let Some(l) = self.back_of[e as usize] {
            Arc::make_mut(laps)[l as usize] += 1;
        } else if let Some(l) = self.exit_of[e as usize] {
            Arc::make_mut(laps)[l as usize] = 0;
        }
    }
}

impl Annotations {
    /// The annotations by source line of main, as the thesis prints them
    /// beside its listings: per line, that of the line's first vertex.
    pub(crate) fn listing(
        &self,
        prog: &super::program::Explored,
        terms: &mut Terms,
    ) -> Vec<(usize, String)> {
        let body = &prog.bodies[prog.main];
        let Some(f) = prog.ast.function("main") else {
            return Vec::new();
        };
        let mut first: std::collections::BTreeMap<usize, NodeId> = Default::default();
        for (v, out) in prog.succ[prog.main].iter().enumerate() {
            let Some(e) = out.first() else { continue };
            let span = f.abs(body.edges[*e as usize].span);
            let (line, _) = prog.lines.line_col(&prog.source, span.start);
            let v = v as NodeId;
            first
                .entry(line as usize)
                .and_modify(|w| *w = (*w).min(v))
                .or_insert(v);
        }
        (first.into_iter())
            .filter(|(_, v)| self.has(*v))
            .map(|(line, v)| {
                let a = self.at(v, terms);
                let size = printed_size(terms, a);
                let text = if size <= MAX_PRINTED {
                    terms.show(a).replace('@', "")
                } else {
                    format!(
                        "(an annotation of {} term nodes, not printed)",
                        terms.dag_size(&[a])
                    )
                };
                (line, text)
            })
            .collect()
    }
}

/// Annotations larger than this, printed as trees, are not printed.
const MAX_PRINTED: u64 = 400;

/// How many nodes a term has printed as a tree (shared subterms once per
/// use), saturating: a DAG of a few hundred nodes can print as millions.
fn printed_size(terms: &Terms, t: TermId) -> u64 {
    let mut memo: HashMap<TermId, u64> = HashMap::default();
    for u in terms.post_order(&[t]) {
        let kids = terms.children(terms.node(u));
        let size = kids.iter().fold(1u64, |acc, k| acc.saturating_add(memo[k]));
        memo.insert(u, size);
    }
    memo[&t]
}

/// The term variable that stands for a variable of main in annotations.
fn annotation_var(v: &crate::ir::VarInfo, terms: &mut Terms) -> Option<Var> {
    let input = v.is_input();
    match v.ty.array_depth()? {
        0 => Some(terms.new_var(VarKind::Fresh, format!("{}@", v.name))),
        1 if input => Some(terms.new_var(VarKind::ArraySymbol(1), format!("{}@", v.name))),
        _ => None,
    }
}

/// The length of a local array variable, or the non-nullness of a pointer
/// variable, as an integer term variable.
fn shape_var(v: &crate::ir::VarInfo, reading: Reading, terms: &mut Terms) -> Option<Var> {
    let wanted = match reading {
        Reading::Length => !v.is_input() && v.ty.array_depth().is_some_and(|d| d >= 1),
        Reading::NonNull => matches!(v.ty, crate::types::Type::Ptr(_)),
        Reading::Value => false,
    };
    let name = match reading {
        Reading::Length => format!("len({})@", v.name),
        _ => format!("nonnull({})@", v.name),
    };
    wanted.then(|| terms.new_var(VarKind::Fresh, name))
}

/// The loop nests of a body: each loop without a parent, with its inner loops.
fn nests(body: &Body, succ: &[Vec<EdgeId>]) -> Vec<Nest> {
    let root = |mut l: LoopId| {
        while let Some(p) = body.loops[l as usize].parent {
            l = p;
        }
        l
    };
    let mut out = Vec::new();
    for top in body.loops.iter().filter(|l| l.parent.is_none()) {
        let headers: Vec<NodeId> = (body.loops.iter())
            .filter(|l| root(l.id) == top.id)
            .map(|l| l.header)
            .collect();
        let mut inside = vec![false; body.node_count as usize];
        top.nodes.iter().for_each(|v| inside[*v as usize] = true);
        let exits = (top.exit_edges.iter())
            .map(|e| body.edges[*e as usize].to)
            .collect();
        out.push(Nest {
            body: successors_first(body, succ, &headers, &inside),
            headers,
            inside,
            exits,
            tried: HashSet::default(),
            looked_at: 0,
            from_true_done: false,
        });
    }
    out
}

/// The non-header vertices of a nest in post-order over the edges that do
/// not enter a header (successors first).
fn successors_first(
    body: &Body,
    succ: &[Vec<EdgeId>],
    headers: &[NodeId],
    inside: &[bool],
) -> Vec<NodeId> {
    let inner = |w: NodeId| inside[w as usize] && !headers.contains(&w);
    let mut done = vec![false; body.node_count as usize];
    let mut out = Vec::new();
    for &h in headers {
        let mut stack: Vec<(NodeId, usize)> = vec![(h, 0)];
        while let Some((v, k)) = stack.pop() {
            let next = succ[v as usize].get(k).map(|e| body.edges[*e as usize].to);
            match next {
                Some(w) => {
                    stack.push((v, k + 1));
                    if inner(w) && !done[w as usize] {
                        done[w as usize] = true;
                        stack.push((w, 0));
                    }
                }
                None if v != h => out.push(v),
                None => {}
            }
        }
    }
    out
}

/// The annotations at work on a run: pruning its states, learning from its
/// paths (the solver's and the terms' of the [`Machine`]).
impl Annotations {
    /// Whether a state of main is subsumed: its path condition implies its
    /// vertex's annotation (PC ∧ ¬A unsatisfiable). Never on `unknown`.
    pub(crate) fn subsumes(&self, m: &mut Machine, st: &State) -> bool {
        let v = st.frame().node;
        let prog = m.program();
        if st.frames.len() != 1 || !self.has(v) || prog.succ[prog.main][v as usize].is_empty() {
            return false;
        }
        let a = self.at(v, m.terms_mut());
        m.stats_mut().annotation_checks += 1;
        let Some(here) = self.annotation_here(m, st, a) else {
            return false;
        };
        let not_here = m.terms_mut().not(here);
        matches!(m.feasible(st, not_here), Answer::Unsat)
    }

    /// An annotation with the state's values for main's variables, if each
    /// variable it reads has one the annotation language can say.
    fn annotation_here(&self, m: &mut Machine, st: &State, a: TermId) -> Option<TermId> {
        let vars: Option<Vec<(Var, (crate::ir::VarId, Reading))>> =
            (m.terms().free_vars(a).into_iter())
                .map(|v| self.var(v).map(|var| (v, var)))
                .collect();
        let mut s = Subst::new();
        for (v, (var, reading)) in vars? {
            let value = st.read(st.cell_of(var)).clone();
            s.bind(v, value_here(m, reading, &value, v)?);
        }
        Some(s.apply(m.terms_mut(), a))
    }

    /// After a path of main ended: annotate its vertices again, then try
    /// the new invariant candidates of the loop nests.
    pub(crate) fn learn(&mut self, m: &mut Machine, trail: &Trail) {
        let prog = m.program();
        let (body, succ) = (&prog.bodies[prog.main], &prog.succ[prog.main]);
        self.backtrack(trail, body, succ, m.terms_mut());
        for (nest, ds) in self.candidates() {
            for d in ds {
                let b = self.round(nest, d, body, succ, m.terms_mut());
                if self.inductive(m, nest, d, &b) {
                    self.keep(nest, d, b, m.terms_mut());
                } else {
                    self.refuted += 1;
                }
            }
        }
        for nest in self.downward_due() {
            self.downward(m, nest);
        }
    }

    /// The greatest-fixpoint iteration from `true` (docs/thesis-executor.md,
    /// "Invariants from `true`"): d₀ = `true`, d_{k+1} = ⋀_h B_{d_k}(h), the
    /// weakest preconditions of one round with d_k at the headers; the
    /// first d_k found inductive is kept. `true` is kept when no round of
    /// the nest can fail and leaving it is safe; d₁ = `g ∨ A(exit)` for a
    /// loop with guard g and a safe body, so an invariant guard proves that
    /// a loop that never ends never fails.
    fn downward(&mut self, m: &mut Machine, nest: usize) {
        let prog = m.program();
        let (body, succ) = (&prog.bodies[prog.main], &prog.succ[prog.main]);
        let mut d = m.terms_mut().bool(true);
        for _ in 0..FROM_TRUE_STEPS {
            let b = self.round(nest, d, body, succ, m.terms_mut());
            if self.inductive(m, nest, d, &b) {
                self.keep(nest, d, b, m.terms_mut());
                return;
            }
            self.refuted += 1;
            let next: Vec<TermId> = (self.nest_headers(nest).iter()).map(|h| b[h]).collect();
            let t = m.terms_mut();
            let next = t.and(next);
            if next == d || t.as_bool(next) == Some(false) || t.dag_size(&[next]) > MAX_SIZE {
                return;
            }
            d = next;
        }
    }

    /// Whether `d` holds again after one round from every header: `d ∧ ¬B(h)`
    /// unsatisfiable for each (a general state: no path condition).
    fn inductive(
        &self,
        m: &mut Machine,
        nest: usize,
        d: TermId,
        b: &HashMap<NodeId, TermId>,
    ) -> bool {
        self.nest_headers(nest).iter().all(|h| {
            let t = m.terms_mut();
            let nb = t.not(b[h]);
            let q = t.and2(d, nb);
            match t.as_bool(q) {
                Some(v) => !v,
                None => matches!(m.check(&PathCond::default(), q), Answer::Unsat),
            }
        })
    }
}

/// The term of a variable's value on a state, as an annotation reads it
/// (`None`: one the annotation language cannot say).
fn value_here(m: &mut Machine, reading: Reading, value: &Value, v: Var) -> Option<TermId> {
    let t = m.terms_mut();
    Some(match (reading, value, Terms::var_sort(v)) {
        (Reading::Length, Value::Array(cells), _) => t.int(cells.len() as i64),
        (Reading::NonNull, Value::Null, _) => t.int(0),
        (Reading::NonNull, Value::Ptr(_), _) => t.int(1),
        (Reading::Value, Value::Input(ia), crate::term::Sort::Array(1)) if ia.dims == 1 => {
            let j = t.new_var(VarKind::Bound, "j");
            let jt = t.var(j);
            let body = m.input_element(ia, jt).int(m.terms_mut());
            m.terms_mut().lambda(vec![j], body)
        }
        (Reading::Value, _, crate::term::Sort::Int) => value.int(t),
        _ => return None,
    })
}
