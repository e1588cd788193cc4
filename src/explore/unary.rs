//! Answer checks decided without the solver (docs/thesis-executor.md,
//! "Solver session"): when the new condition, and every conjunct of the
//! path condition that may constrain the same integers, is built by `∧` and
//! `∨` from literals that each bound one integer from above or below, fix
//! it, or exclude one value of it (`A[3] == 72`, `A[5] != 0`, `n <= 10`),
//! the answer is decided exactly: by intervals with holes, one per integer,
//! and a bounded case split over the disjunctions (the path conditions of
//! merged states). Most of the checks of a string scan (the Table 2
//! benchmarks) are of that kind, and each saves a solver round trip.
//!
//! The conjuncts that share no integer with the condition are independent
//! of it (KLEE's constraint independence): `pc ∧ c` is satisfiable if `pc`
//! is and the slice about `c`'s integers is, and it is unsatisfiable
//! whenever that slice is. An `unsat` from here is therefore exact; a `sat`
//! rests on `pc` being satisfiable, which the executor established when it
//! took each branch (where it could not, it explores more than it must,
//! which is safe). Anything else, or a case split past [`CASES`], is left
//! to the solver.
//!
//! Checks along one path share their work: each path condition keeps the
//! case the greedy pass found for it, and a check first tries to extend
//! its path condition's case by the new condition. Where it can, `pc ∧ c`
//! is satisfiable without a look at the rest of `pc`; before, every check
//! walked the whole path condition, and a file of n asserts cost time
//! quadratic in n (docs/thesis-executor.md, "Solver session").

use super::state::{PathCond, PcNode};
use crate::term::{Node, Sort, TermId, Terms, Var};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, Zero};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::borrow::Cow;
use std::sync::Arc;

/// How many literals and cases one decision may visit before it gives up.
const CASES: u32 = 4096;

/// One integer constrained by a literal: the integer term and what holds.
#[derive(Clone, Debug)]
struct Bound {
    atom: TermId,
    rel: Rel,
}

/// `x ⋈ k` for the bound's integer `x`.
#[derive(Clone, Debug)]
enum Rel {
    AtMost(i64),
    AtLeast(i64),
    Is(i64),
    IsNot(i64),
    /// No integer fits (`2·x == 1`).
    Never,
    /// Every integer fits (`2·x != 1`).
    Always,
}

impl Rel {
    /// The integers this relation excludes, as a relation:
    /// `¬(x ≤ h) ⇔ x ≥ h + 1` and `¬(x ≥ l) ⇔ x ≤ l − 1` over the integers.
    fn negated(&self) -> Rel {
        match self {
            // No overflow: a bound's value lies strictly inside i64.
            Rel::AtMost(h) => Rel::AtLeast(h + 1),
            Rel::AtLeast(l) => Rel::AtMost(l - 1),
            Rel::Is(v) => Rel::IsNot(*v),
            Rel::IsNot(v) => Rel::Is(*v),
            Rel::Never => Rel::Always,
            Rel::Always => Rel::Never,
        }
    }
}

/// One conjunct of a check (a top-level `∧` is split), as far as this
/// module can tell.
#[derive(Clone, Debug)]
enum Part {
    /// Built by `∧`, `∨`, `¬` from bounds (a DAG, walked as such), and the
    /// integers it bounds.
    Formula(TermId, Vec<TermId>),
    /// Something else, and what it may constrain.
    Other(Vec<Touch>),
}

/// What a conjunct of another shape may constrain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Touch {
    /// One integer (a variable, or an input element at constant indices).
    Integer(TermId),
    /// Every integer of the variable (an input array read at an index
    /// that is not constant, which may be any of its elements).
    AllOf(Var),
    /// Anything (a constant left unfolded, a binder).
    Everything,
}

/// The local decision procedure, with the parts of the conjuncts seen.
#[derive(Default)]
pub(crate) struct UnaryChecks {
    parts: HashMap<TermId, Arc<[Part]>>,
    /// Each literal of a part as a bound, unnegated: terms are shared, so
    /// a literal is read once, not at every check that meets it.
    bounds: HashMap<TermId, Bound>,
    /// What is kept per path condition (by its run-wide id).
    kept: HashMap<u64, Arc<Kept>>,
    /// Checks decided here.
    pub decided: u64,
}

/// How many path conditions' [`Kept`] are kept before they are forgotten
/// (a forgotten one is found again from its nearest kept ancestor).
const KEPT: usize = 4096;

/// What one path condition keeps for the checks on it, each found from
/// its parent's and its newest conjunct.
#[derive(Clone, Default)]
struct Kept {
    /// A case that makes every conjunct hold, found greedily (`None`: not
    /// found that way, or `other`).
    case: Option<Case>,
    /// A conjunct is of another shape.
    other: bool,
    /// What the literals outside every disjunction force (implied by the
    /// path condition, whatever the rest of it says).
    forced: HashMap<TermId, Range>,
    /// Those literals contradict one another.
    contradicted: bool,
}

impl UnaryChecks {
    /// [`UnaryChecks::decide`], first from what is kept for `pc`: `sat` if
    /// its case extends to make `extra` hold too (exact: every conjunct of
    /// `pc` and of `extra` holds on the case's ranges), `unsat` if a
    /// literal `extra` forces is refuted by what `pc` forces.
    pub(crate) fn decide_on(
        &mut self,
        terms: &Terms,
        pc: &PathCond,
        extra: TermId,
    ) -> Option<bool> {
        let kept = self.kept_for(terms, pc);
        let answer = if self.refutes(terms, &kept, extra) {
            Some(false)
        } else {
            self.extended(terms, &kept, extra).map(|_| true)
        };
        match answer {
            Some(a) => {
                self.decided += 1;
                Some(a)
            }
            None => self.decide(terms, pc.iter(), extra),
        }
    }

    /// [`UnaryChecks::model`], first from the case kept for `pc`.
    pub(crate) fn model_on(
        &mut self,
        terms: &Terms,
        pc: &PathCond,
        extra: TermId,
    ) -> Option<HashMap<TermId, i64>> {
        let kept = self.kept_for(terms, pc);
        match self.extended(terms, &kept, extra) {
            Some(case) => {
                let model = values_of(&case)?;
                self.decided += 1;
                Some(model)
            }
            None => self.model(terms, pc.iter(), extra),
        }
    }

    /// The kept case extended greedily to make `extra` hold.
    fn extended(&mut self, terms: &Terms, kept: &Kept, extra: TermId) -> Option<Case> {
        self.extend(terms, kept.case.as_ref()?, extra)
    }

    /// Whether a literal that `extra` forces is refuted by the ranges the
    /// path condition forces (or those contradict one another).
    fn refutes(&mut self, terms: &Terms, kept: &Kept, extra: TermId) -> bool {
        if kept.contradicted {
            return true;
        }
        let parts = self.parts(terms, extra);
        let search = self.search(terms, 0);
        (search.forced_by(&parts).into_iter()).any(|l| {
            let (atom, rel) = search.bound(l);
            !kept.forced.get(&atom).unwrap_or(&Range::ANY).admits(&rel)
        })
    }

    /// What is kept for `pc`: from its nearest kept ancestor's (nothing at
    /// the root), each conjunct since added in turn, each kept on the way.
    fn kept_for(&mut self, terms: &Terms, pc: &PathCond) -> Arc<Kept> {
        let mut since = Vec::new();
        let mut at = pc.0.clone();
        let mut kept = loop {
            match at {
                None => {
                    break Arc::new(Kept {
                        case: Some(Case::default()),
                        ..Kept::default()
                    });
                }
                Some(node) => match self.kept.get(&node.id) {
                    Some(k) => break k.clone(),
                    None => {
                        at = node.parent.0.clone();
                        since.push(node);
                    }
                },
            }
        };
        if self.kept.len() + since.len() > KEPT {
            self.kept.clear();
        }
        for node in since.into_iter().rev() {
            let id = node.id;
            kept = Arc::new(self.with_conjunct(terms, &kept, node));
            self.kept.insert(id, kept.clone());
        }
        kept
    }

    /// `parent`'s, with `node`'s conjunct. Where the conjunct cannot extend
    /// the parent's case (a choice made for an older disjunction is refuted
    /// now), the greedy pass starts over on the whole path condition, which
    /// takes its literals first.
    fn with_conjunct(&mut self, terms: &Terms, parent: &Kept, node: Arc<PcNode>) -> Kept {
        let conjunct = node.conjunct;
        let parts = self.parts(terms, conjunct);
        let mut kept = Kept {
            case: None,
            other: parent.other || parts.iter().any(|p| matches!(p, Part::Other(_))),
            forced: parent.forced.clone(),
            contradicted: parent.contradicted,
        };
        let search = self.search(terms, 0);
        for l in search.forced_by(&parts) {
            let (atom, rel) = search.bound(l);
            kept.contradicted |= !kept.forced.entry(atom).or_default().narrow(&rel);
        }
        kept.case = match (&parent.case, kept.other) {
            (_, true) | (None, _) => None,
            (Some(case), false) => (self.extend(terms, case, conjunct))
                .or_else(|| self.greedy_case(terms, PathCond(Some(node)).iter())),
        };
        // What holds already only spares the greedy pass repeated work: a
        // formula it meets again holds again on ranges that only narrow.
        // Forgotten, the case is cheap to copy at each check.
        if let Some(case) = &mut kept.case {
            case.holding = HashSet::default();
        }
        kept
    }

    /// The greedy pass's case for all of `conjuncts` from scratch.
    fn greedy_case(
        &mut self,
        terms: &Terms,
        conjuncts: impl Iterator<Item = TermId>,
    ) -> Option<Case> {
        let formulas = self.formulas(terms, conjuncts)?;
        Search::greedy_pass(terms, &self.bounds, formulas)
    }

    /// The parts of `conjuncts`, if each is a formula of bounds (`None`: a
    /// part is of another shape).
    fn formulas(
        &mut self,
        terms: &Terms,
        conjuncts: impl Iterator<Item = TermId>,
    ) -> Option<Vec<Polar>> {
        let mut formulas = Vec::new();
        for c in conjuncts {
            for p in self.parts(terms, c).iter() {
                match p {
                    Part::Formula(f, _) => formulas.push((*f, false)),
                    Part::Other(_) => return None,
                }
            }
        }
        Some(formulas)
    }

    /// `case` extended greedily so that `t` holds too (`None`: a part of
    /// `t` is of another shape, or the greedy pass fails).
    fn extend(&mut self, terms: &Terms, case: &Case, t: TermId) -> Option<Case> {
        let todo = self.formulas(terms, std::iter::once(t))?;
        let steps = GREEDY_STEPS_PER_FORMULA * todo.len() as u32;
        self.search(terms, steps).greedy(todo, case.clone())
    }

    /// A search over the literals read so far, with at least `steps`.
    fn search<'a>(&'a self, terms: &'a Terms, steps: u32) -> Search<'a> {
        Search {
            terms,
            bounds: &self.bounds,
            budget: CASES.max(steps),
        }
    }

    /// `Some(true)`: `pc ∧ extra` is satisfiable (given `pc` is);
    /// `Some(false)`: it is not; `None`: ask the solver.
    pub(crate) fn decide(
        &mut self,
        terms: &Terms,
        pc: impl Iterator<Item = TermId>,
        extra: TermId,
    ) -> Option<bool> {
        let asked = self.parts(terms, extra);
        let mut slice = Slice::default();
        for p in asked.iter() {
            match p {
                Part::Formula(f, atoms) => slice.take(*f, atoms, terms),
                Part::Other(_) => return None,
            }
        }
        let rest: Vec<Arc<[Part]>> = pc.map(|c| self.parts(terms, c)).collect();
        let rest: Vec<&Part> = rest.iter().flat_map(|ps| ps.iter()).collect();
        slice.close_over(&rest, terms)?;
        let answer = satisfiable(terms, &self.bounds, &slice.formulas)?;
        self.decided += 1;
        Some(answer)
    }

    /// A model of `pc ∧ extra` found without the solver: a value for
    /// every integer they bound, if every conjunct is built from bounds
    /// and the greedy pass satisfies them all (`None` otherwise: ask the
    /// solver). Exact: each value lies in the range every literal made to
    /// hold narrowed its integer to, and each disjunction has a case that
    /// holds. An integer the formulas do not mention may take any value.
    pub(crate) fn model(
        &mut self,
        terms: &Terms,
        pc: impl Iterator<Item = TermId>,
        extra: TermId,
    ) -> Option<HashMap<TermId, i64>> {
        let case = self.greedy_case(terms, std::iter::once(extra).chain(pc))?;
        let model = values_of(&case)?;
        self.decided += 1;
        Some(model)
    }

    fn parts(&mut self, terms: &Terms, t: TermId) -> Arc<[Part]> {
        if let Some(ps) = self.parts.get(&t) {
            return ps.clone();
        }
        let ps = parts_of(terms, t, &mut self.bounds);
        self.parts.insert(t, ps.clone());
        ps
    }
}

/// A value for each integer of the case, from its range.
fn values_of(case: &Case) -> Option<HashMap<TermId, i64>> {
    (case.ranges.iter())
        .map(|(a, r)| r.pick().map(|v| (*a, v)))
        .collect()
}

/// The formulas about the check's integers, and those integers (with
/// their variables).
#[derive(Default)]
struct Slice {
    formulas: Vec<TermId>,
    atoms: HashSet<TermId>,
    roots: HashSet<Var>,
}

impl Slice {
    fn take(&mut self, f: TermId, atoms: &[TermId], terms: &Terms) {
        self.formulas.push(f);
        for a in atoms {
            if self.atoms.insert(*a) {
                self.roots.extend(root_of(terms, *a));
            }
        }
    }

    fn shares_an_integer(&self, atoms: &[TermId]) -> bool {
        atoms.iter().any(|a| self.atoms.contains(a))
    }

    fn may_be_constrained_by(&self, touches: &[Touch]) -> bool {
        touches.iter().any(|t| match t {
            Touch::Integer(a) => self.atoms.contains(a),
            Touch::AllOf(v) => self.roots.contains(v),
            Touch::Everything => true,
        })
    }

    /// Takes in every conjunct of `rest` that shares an integer with the
    /// slice, until none is left (`None`: one of another shape may
    /// constrain the slice).
    fn close_over(&mut self, rest: &[&Part], terms: &Terms) -> Option<()> {
        let mut taken = vec![false; rest.len()];
        loop {
            let mut grew = false;
            for (i, p) in rest.iter().enumerate() {
                match p {
                    Part::Formula(f, atoms) if !taken[i] && self.shares_an_integer(atoms) => {
                        self.take(*f, atoms, terms);
                        taken[i] = true;
                        grew = true;
                    }
                    Part::Other(ts) if self.may_be_constrained_by(ts) => return None,
                    _ => {}
                }
            }
            if !grew {
                return Some(());
            }
        }
    }
}

fn parts_of(terms: &Terms, t: TermId, bounds: &mut HashMap<TermId, Bound>) -> Arc<[Part]> {
    let conjuncts: Vec<TermId> = match terms.node(t) {
        Node::And(xs) => xs.to_vec(),
        _ => vec![t],
    };
    // `true` constrains nothing (an error's condition already in the
    // path condition is checked as `pc ∧ true`).
    (conjuncts.iter())
        .filter(|c| !matches!(terms.node(**c), Node::Bool(true)))
        .map(|c| match bounded_integers(terms, *c, bounds) {
            Some(atoms) => Part::Formula(*c, atoms),
            None => Part::Other(touched(terms, *c)),
        })
        .collect()
}

/// The integers `t` bounds, if it is built by `∧`, `∨`, `¬` from bounds
/// (each literal's bound kept in `bounds`).
fn bounded_integers(
    terms: &Terms,
    t: TermId,
    bounds: &mut HashMap<TermId, Bound>,
) -> Option<Vec<TermId>> {
    let mut atoms = Vec::new();
    walk(t, |t, next| {
        match terms.node(t) {
            Node::Not(a) => next.push(*a),
            Node::And(xs) | Node::Or(xs) => next.extend(xs.iter()),
            _ => {
                let b = bound_of(terms, t).ok_or(())?;
                atoms.push(b.atom);
                bounds.insert(t, b);
            }
        }
        Ok(())
    })
    .ok()?;
    atoms.sort();
    atoms.dedup();
    Some(atoms)
}

/// What a conjunct may constrain. One under a binder, or one that
/// mentions no variable (a constant the store did not fold), touches
/// everything, so it is always left to the solver.
fn touched(terms: &Terms, t: TermId) -> Vec<Touch> {
    let mut out = Vec::new();
    let walked = walk(t, |t, next| {
        if root_of(terms, t).is_some() {
            out.push(Touch::Integer(t));
            return Ok(());
        }
        match terms.node(t) {
            Node::Var(v) => out.push(Touch::AllOf(*v)),
            Node::Lambda(..) | Node::Quant(..) => return Err(()),
            n => next.extend(terms.children(n)),
        }
        Ok(())
    });
    if walked.is_err() || out.is_empty() {
        return vec![Touch::Everything];
    }
    out
}

/// Visits each node of the DAG under `t` once: `visit` pushes the
/// children to enter, or ends the walk with an error.
fn walk(
    t: TermId,
    mut visit: impl FnMut(TermId, &mut Vec<TermId>) -> Result<(), ()>,
) -> Result<(), ()> {
    let mut seen = HashSet::default();
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        if seen.insert(t) {
            visit(t, &mut stack)?;
        }
    }
    Ok(())
}

/// A comparison that bounds a single integer, as a [`Bound`].
fn bound_of(terms: &Terms, comparison: TermId) -> Option<Bound> {
    let (is_eq, a, b) = match terms.node(comparison) {
        Node::Le(a, b) => (false, *a, *b),
        Node::Eq(a, b) if terms.sort(*a) == Sort::Int => (true, *a, *b),
        _ => return None,
    };
    let (x, c, k) = single_integer(terms, a, b)?;
    root_of(terms, x)?;
    let rel = if is_eq {
        match exactly(&c, &k) {
            Some(v) => Rel::Is(small(v)?),
            None => Rel::Never,
        }
    } else {
        at_most(&c, &k)?
    };
    Some(Bound { atom: x, rel })
}

/// `v` as a machine integer strictly inside i64's range (so that a bound
/// negated by ±1 stays inside it, and ranges are compared without
/// allocating); a literal with a larger constant is left to the solver.
fn small(v: BigInt) -> Option<i64> {
    i64::try_from(v)
        .ok()
        .filter(|v| *v != i64::MIN && *v != i64::MAX)
}

/// `a − b` as `c·x + k` for one integer term `x`.
fn single_integer(terms: &Terms, a: TermId, b: TermId) -> Option<(TermId, BigInt, BigInt)> {
    let (ka, xa) = terms.linear(a);
    let (kb, xb) = terms.linear(b);
    let mut sum: Vec<(BigInt, TermId)> = xa;
    for (c, t) in xb {
        match sum.iter_mut().find(|(_, s)| *s == t) {
            Some(entry) => entry.0 -= c,
            None => sum.push((-c, t)),
        }
    }
    sum.retain(|(c, _)| !c.is_zero());
    match sum.as_slice() {
        [(c, x)] => Some((*x, c.clone(), ka - kb)),
        _ => None,
    }
}

/// Whether `t` is one integer of its own here: an integer variable, or an
/// input element at constant indices.
pub(crate) fn is_single_integer(terms: &Terms, t: TermId) -> bool {
    root_of(terms, t).is_some()
}

/// The variable an integer belongs to: itself, or the input array of an
/// element at constant indices (distinct constant indices are distinct
/// integers). Anything else is not a single integer here.
fn root_of(terms: &Terms, x: TermId) -> Option<Var> {
    match terms.node(x) {
        Node::Var(v) if Terms::var_sort(*v) == Sort::Int => Some(*v),
        Node::Select(a, idx) => match terms.node(*a) {
            Node::Var(v) if idx.iter().all(|i| terms.as_int(*i).is_some()) => Some(*v),
            _ => None,
        },
        _ => None,
    }
}

/// `c·x + k ≤ 0`.
fn at_most(c: &BigInt, k: &BigInt) -> Option<Rel> {
    let rhs = -k;
    Some(if c.is_positive() {
        Rel::AtMost(small(rhs.div_floor(c))?)
    } else {
        // x ≥ rhs / c, rounded up: −floor(−rhs / c)
        Rel::AtLeast(small(-((-rhs).div_floor(c)))?)
    })
}

/// The value of `x` with `c·x + k = 0`, if it is an integer.
fn exactly(c: &BigInt, k: &BigInt) -> Option<BigInt> {
    let (q, r) = (-k).div_rem(c);
    r.is_zero().then_some(q)
}

/// What one integer may still be: an interval with holes, or one value.
#[derive(Clone, Debug, Default)]
struct Range {
    lo: Option<i64>,
    hi: Option<i64>,
    is: Option<i64>,
    holes: Vec<i64>,
}

impl Range {
    /// Every integer: an integer no literal has narrowed yet.
    const ANY: Range = Range {
        lo: None,
        hi: None,
        is: None,
        holes: Vec::new(),
    };

    /// Narrows by `rel`; whether some integer is left. The range is
    /// inhabited before (a narrowing that emptied a case's range ended
    /// that case), so a hole beside a known value needs no scan of the
    /// other holes: a path condition of n disjunctions `x != i ∨ …` with
    /// `x` fixed cost n² here.
    fn narrow(&mut self, rel: &Rel) -> bool {
        if let (Rel::IsNot(v), Some(w)) = (rel, self.is) {
            self.holes.push(*v);
            return w != *v;
        }
        match rel {
            Rel::AtMost(v) => self.hi = Some(self.hi.map_or(*v, |h| h.min(*v))),
            Rel::AtLeast(v) => self.lo = Some(self.lo.map_or(*v, |l| l.max(*v))),
            Rel::Is(v) if self.is.is_some_and(|w| w != *v) => return false,
            Rel::Is(v) => self.is = Some(*v),
            Rel::IsNot(v) => self.holes.push(*v),
            Rel::Never => return false,
            Rel::Always => {}
        }
        self.inhabited()
    }

    /// Whether some integer is left after narrowing by `rel`, without
    /// narrowing (the common cases need no copy).
    fn admits(&self, rel: &Rel) -> bool {
        match rel {
            Rel::Never => false,
            Rel::Always => true,
            Rel::Is(v) => {
                self.is.is_none_or(|w| w == *v) && self.fits(*v) && !self.holes.contains(v)
            }
            Rel::AtMost(v) => Range {
                hi: Some(self.hi.map_or(*v, |h| h.min(*v))),
                ..self.shape()
            }
            .inhabited_by(&self.holes),
            Rel::AtLeast(v) => Range {
                lo: Some(self.lo.map_or(*v, |l| l.max(*v))),
                ..self.shape()
            }
            .inhabited_by(&self.holes),
            // Inhabited as it is (see `narrow`): only the value may go.
            Rel::IsNot(v) if self.is.is_some() => self.is != Some(*v),
            Rel::IsNot(v) if !self.holes_need_order() => {
                self.is.is_none_or(|w| w != *v) && self.inhabited_by(&self.holes)
            }
            Rel::IsNot(_) => self.clone().narrow(rel),
        }
    }

    /// An integer of the range (inhabited), the nearest to 0 from above
    /// if there is one; `None` if none is found.
    fn pick(&self) -> Option<i64> {
        if let Some(v) = self.is {
            return self.fits(v).then_some(v);
        }
        let start = 0i64.clamp(self.lo.unwrap_or(i64::MIN), self.hi.unwrap_or(i64::MAX));
        let free = |v: &i64| self.fits(*v) && !self.holes.contains(v);
        // Finitely many holes: one of the next holes + 1 integers on a
        // side of `start` that the range allows is free.
        let steps = self.holes.len() as i64 + 1;
        (0..steps)
            .map_while(|d| start.checked_add(d))
            .find(free)
            .or_else(|| (1..=steps).map_while(|d| start.checked_sub(d)).find(free))
    }

    fn fits(&self, v: i64) -> bool {
        self.lo.is_none_or(|l| l <= v) && self.hi.is_none_or(|h| v <= h)
    }

    /// The range's bounds and value, without its holes.
    fn shape(&self) -> Range {
        Range {
            lo: self.lo,
            hi: self.hi,
            is: self.is,
            holes: Vec::new(),
        }
    }

    /// Whether telling if an integer is left counts the holes inside
    /// both bounds (they must be sorted and without repeats): not for one
    /// value, nor with a side unbounded, so that a long list of holes is
    /// not sorted at every literal.
    fn holes_need_order(&self) -> bool {
        self.is.is_none() && self.lo.is_some() && self.hi.is_some()
    }

    fn inhabited(&mut self) -> bool {
        if !self.holes_need_order() {
            return self.inhabited_by(&self.holes);
        }
        self.holes.sort_unstable();
        self.holes.dedup();
        self.inhabited_by(&self.holes)
    }

    /// Whether an integer of the range is none of `holes` (sorted and
    /// without repeats when the range is bounded on both sides).
    fn inhabited_by(&self, holes: &[i64]) -> bool {
        if let Some(v) = self.is {
            return self.fits(v) && !holes.contains(&v);
        }
        let (Some(l), Some(h)) = (self.lo, self.hi) else {
            return true; // unbounded on a side: finitely many holes
        };
        if l > h {
            return false;
        }
        let inside = holes.iter().filter(|v| self.fits(**v)).count();
        (inside as i128) < (h as i128) - (l as i128) + 1
    }
}

/// Whether the conjunction of `formulas` has an integer solution (`None`:
/// more than [`CASES`] steps to tell).
fn satisfiable(
    terms: &Terms,
    bounds: &HashMap<TermId, Bound>,
    formulas: &[TermId],
) -> Option<bool> {
    let todo: Vec<Polar> = formulas.iter().map(|f| (*f, false)).collect();
    if Search::greedy_pass(terms, bounds, todo.clone()).is_some() {
        return Some(true);
    }
    Search {
        terms,
        bounds,
        budget: CASES,
    }
    .run(todo, Case::default())
}

/// How many subformulas one search for forced literals visits.
const FORCED_STEPS: u32 = 512;

/// The greedy pass's steps per formula of the slice: it visits each
/// subformula about once.
const GREEDY_STEPS_PER_FORMULA: u32 = 16;

/// A formula, and whether it is negated.
type Polar = (TermId, bool);

/// A depth-first search over the disjunctions, DPLL-like: the literals and
/// conjunctions first, then a disjunction left with one case that the
/// ranges allow, and only then a split over the one with fewest.
struct Search<'a> {
    terms: &'a Terms,
    /// The bound of each literal a formula may reach.
    bounds: &'a HashMap<TermId, Bound>,
    /// Steps left.
    budget: u32,
}

/// One case of the search: what the literals taken so far leave of each
/// integer, the (sub)formulas already made to hold (a DAG shares them:
/// each holds once per case), and the disjunctions still to choose from.
#[derive(Clone, Default)]
struct Case {
    ranges: HashMap<TermId, Range>,
    holding: HashSet<Polar>,
    open: Vec<Polar>,
}

/// How a formula splits.
enum Split<'t> {
    Not(TermId),
    All(&'t [TermId]),
    Any(&'t [TermId]),
    Literal,
}

impl<'a> Search<'a> {
    fn split(&self, (t, negated): Polar) -> Split<'a> {
        match (self.terms.node(t), negated) {
            (Node::Not(a), _) => Split::Not(*a),
            (Node::And(xs), false) | (Node::Or(xs), true) => Split::All(xs),
            (Node::Or(xs), false) | (Node::And(xs), true) => Split::Any(xs),
            _ => Split::Literal,
        }
    }

    /// The literals the formulas among `parts` force: a literal itself,
    /// those of each conjunct of a conjunction, those that every case of a
    /// disjunction forces (the path conditions of merged states repeat
    /// them), within [`FORCED_STEPS`] subformulas (past them, fewer).
    fn forced_by(&self, parts: &[Part]) -> Vec<Polar> {
        let mut steps = FORCED_STEPS;
        (parts.iter())
            .flat_map(|p| match p {
                Part::Formula(f, _) => self.forced((*f, false), &mut steps),
                Part::Other(_) => Vec::new(),
            })
            .collect()
    }

    /// The literals `f` forces, sorted and without repeats.
    fn forced(&self, f: Polar, steps: &mut u32) -> Vec<Polar> {
        let Some(left) = steps.checked_sub(1) else {
            return Vec::new();
        };
        *steps = left;
        let mut out = match self.split(f) {
            Split::Not(a) => return self.forced((a, !f.1), steps),
            Split::Literal => return vec![f],
            Split::All(xs) => (xs.iter())
                .flat_map(|x| self.forced((*x, f.1), steps))
                .collect(),
            Split::Any(xs) => {
                let mut common: Option<Vec<Polar>> = None;
                for x in xs {
                    let these = self.forced((*x, f.1), steps);
                    let kept = match common {
                        None => these,
                        Some(c) => c.into_iter().filter(|l| these.contains(l)).collect(),
                    };
                    if kept.is_empty() {
                        return kept;
                    }
                    common = Some(kept);
                }
                common.unwrap_or_default()
            }
        };
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The integer a literal bounds, and how.
    fn bound(&self, (t, negated): Polar) -> (TermId, Cow<'a, Rel>) {
        let b = &self.bounds[&t]; // every literal of a part was read
        let rel = if negated {
            Cow::Owned(b.rel.negated())
        } else {
            Cow::Borrowed(&b.rel)
        };
        (b.atom, rel)
    }

    /// Whether `todo` can hold in `case`.
    fn run(&mut self, mut todo: Vec<Polar>, mut case: Case) -> Option<bool> {
        loop {
            if !self.propagate(&mut todo, &mut case)? {
                return Some(false);
            }
            case.open.retain(|d| !case.holding.contains(d));
            // Each choice scans the open disjunctions: a step each, so
            // that a long path condition of them (one per assert passed)
            // goes to the solver rather than cost time quadratic in it.
            self.budget = self.budget.checked_sub(case.open.len() as u32)?;
            let Some((at, cases)) = self.narrowest(&case) else {
                return Some(true);
            };
            let d = case.open.swap_remove(at);
            case.holding.insert(d);
            match cases.as_slice() {
                [] => return Some(false),
                [only] => todo.push(*only),
                _ => return self.either(&cases, case),
            }
        }
    }

    /// [`Search::greedy`] from scratch on `formulas`, with steps in
    /// proportion to them.
    fn greedy_pass(
        terms: &'a Terms,
        bounds: &'a HashMap<TermId, Bound>,
        formulas: Vec<Polar>,
    ) -> Option<Case> {
        let budget = CASES.max(GREEDY_STEPS_PER_FORMULA * formulas.len() as u32);
        let mut search = Search {
            terms,
            bounds,
            budget,
        };
        search.greedy(formulas, Case::default())
    }

    /// A satisfying case found without backtracking (its ranges), if the
    /// first case of each disjunction that the ranges allow leads to one: a step per
    /// subformula, where the search's choice of the narrowest disjunction
    /// scans them all at every choice. `None`: not found this way (the
    /// formulas may still be satisfiable).
    fn greedy(&mut self, mut todo: Vec<Polar>, mut case: Case) -> Option<Case> {
        loop {
            if !self.propagate(&mut todo, &mut case)? {
                return None;
            }
            let d = loop {
                match case.open.pop() {
                    None => return Some(case),
                    Some(d) if case.holding.contains(&d) => continue,
                    Some(d) => break d,
                }
            };
            let Split::Any(xs) = self.split(d) else {
                unreachable!("only disjunctions are open")
            };
            let first =
                (xs.iter().map(|x| (*x, d.1))).find(|x| !self.refuted_at_once(*x, &case))?;
            case.holding.insert(d);
            todo.push(first);
        }
    }

    /// Makes the literals and conjunctions of `todo` hold, setting the
    /// disjunctions aside; `false` when the ranges run empty.
    fn propagate(&mut self, todo: &mut Vec<Polar>, case: &mut Case) -> Option<bool> {
        while let Some(f) = todo.pop() {
            self.budget = self.budget.checked_sub(1)?;
            if case.holding.contains(&f) {
                continue;
            }
            match self.split(f) {
                Split::Not(a) => todo.push((a, !f.1)),
                Split::All(xs) => todo.extend(xs.iter().map(|x| (*x, f.1))),
                Split::Any(_) => {
                    case.open.push(f);
                    continue;
                }
                Split::Literal => {
                    let (atom, rel) = self.bound(f);
                    if !case.ranges.entry(atom).or_default().narrow(&rel) {
                        return Some(false);
                    }
                }
            }
            case.holding.insert(f);
        }
        Some(true)
    }

    /// The open disjunction with the fewest cases the ranges allow (its
    /// place and those cases), if one is open.
    fn narrowest(&self, case: &Case) -> Option<(usize, Vec<Polar>)> {
        let mut best: Option<(usize, Vec<Polar>)> = None;
        for (i, d) in case.open.iter().enumerate() {
            let Split::Any(xs) = self.split(*d) else {
                unreachable!("only disjunctions are open")
            };
            let allowed: Vec<Polar> = xs
                .iter()
                .map(|x| (*x, d.1))
                .filter(|x| !self.refuted_at_once(*x, case))
                .collect();
            if best.as_ref().is_none_or(|(_, b)| allowed.len() < b.len()) {
                let done = allowed.len() <= 1;
                best = Some((i, allowed));
                if done {
                    break;
                }
            }
        }
        best
    }

    /// Whether the ranges already refute `f` or one of its conjuncts that
    /// is a literal (negated or not).
    fn refuted_at_once(&self, f: Polar, case: &Case) -> bool {
        match self.split(f) {
            Split::All(xs) => xs.iter().any(|x| self.literal_refuted((*x, f.1), case)),
            _ => self.literal_refuted(f, case),
        }
    }

    /// Whether `f` is a literal, or the negation of one, that the ranges
    /// refute.
    fn literal_refuted(&self, f: Polar, case: &Case) -> bool {
        let literal = match self.split(f) {
            Split::Literal => f,
            Split::Not(a) if matches!(self.split((a, !f.1)), Split::Literal) => (a, !f.1),
            _ => return false,
        };
        let (atom, rel) = self.bound(literal);
        !case.ranges.get(&atom).unwrap_or(&Range::ANY).admits(&rel)
    }

    /// Whether one of `cases` and then everything open can hold.
    fn either(&mut self, cases: &[Polar], case: Case) -> Option<bool> {
        for c in cases {
            if self.run(vec![*c], case.clone())? {
                return Some(true);
            }
        }
        Some(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::VarKind;

    struct Fixture {
        terms: Terms,
        a: TermId,
        x: TermId,
        y: TermId,
    }

    fn fixture() -> Fixture {
        let mut terms = Terms::new();
        let arr = terms.new_var(VarKind::ArraySymbol(1), "A");
        let array = terms.var(arr);
        let three = terms.int(3);
        let a = terms.select(array, vec![three]);
        let xv = terms.new_var(VarKind::Symbol, "x");
        let yv = terms.new_var(VarKind::Symbol, "y");
        let (x, y) = (terms.var(xv), terms.var(yv));
        Fixture { terms, a, x, y }
    }

    fn decide(f: &Fixture, pc: &[TermId], extra: TermId) -> Option<bool> {
        UnaryChecks::default().decide(&f.terms, pc.iter().copied(), extra)
    }

    #[test]
    fn equalities_and_holes_on_an_input_element_are_decided() {
        let mut f = fixture();
        let t = &mut f.terms;
        let (k72, k0) = (t.int(72), t.int(0));
        let is72 = t.eq(f.a, k72);
        let not0 = t.ne(f.a, k0);
        let is0 = t.eq(f.a, k0);
        assert_eq!(decide(&f, &[not0], is72), Some(true));
        assert_eq!(decide(&f, &[is72], is0), Some(false));
        assert_eq!(decide(&f, &[not0], is0), Some(false));
    }

    /// A path condition of many passed asserts, one disjunction each
    /// (`x != i ∨ (x == i ∧ y != 3i)`), as a file of asserts builds it.
    fn passed_asserts(f: &mut Fixture, n: i64) -> Vec<TermId> {
        let t = &mut f.terms;
        (0..n)
            .map(|i| {
                let (ki, k3i) = (t.int(i), t.int(3 * i));
                let (x_not_i, x_is_i, y_not) = (t.ne(f.x, ki), t.eq(f.x, ki), t.ne(f.y, k3i));
                let inner = t.and(vec![x_is_i, y_not]);
                t.or(vec![x_not_i, inner])
            })
            .collect()
    }

    #[test]
    fn a_long_path_condition_of_disjunctions_is_decided_satisfiable_at_once() {
        let mut f = fixture();
        let pc = passed_asserts(&mut f, 1000);
        let t = &mut f.terms;
        let (k500, k1500, k7) = (t.int(500), t.int(1500), t.int(7));
        let (x500, y1500, y7) = (t.eq(f.x, k500), t.eq(f.y, k1500), t.eq(f.y, k7));
        let error = t.and(vec![x500, y1500]);
        let passing = t.and(vec![x500, y7]);
        assert_eq!(decide(&f, &pc, passing), Some(true));
        // The error of an assert passed before: refuted by the search if
        // within its budget, else left to the solver; never `sat`.
        assert_ne!(decide(&f, &pc, error), Some(true));
        let short = passed_asserts(&mut f, 10);
        let t = &mut f.terms;
        let (k5, k15) = (t.int(5), t.int(15));
        let (x5, y15) = (t.eq(f.x, k5), t.eq(f.y, k15));
        let error = t.and(vec![x5, y15]);
        assert_eq!(decide(&f, &short, error), Some(false));
    }

    #[test]
    fn a_model_is_found_without_the_solver_where_the_ranges_allow() {
        let mut f = fixture();
        let pc = passed_asserts(&mut f, 20);
        let t = &mut f.terms;
        let (k5, k16, k3, k4) = (t.int(5), t.int(16), t.int(3), t.int(4));
        let (x5, y16) = (t.eq(f.x, k5), t.eq(f.y, k16));
        let extra = t.and(vec![x5, y16]);
        let mut u = UnaryChecks::default();
        let m = u
            .model(&f.terms, pc.iter().copied(), extra)
            .expect("a model");
        assert_eq!((m[&f.x], m[&f.y]), (5, 16));
        // The nearest integer to 0 the bounds and holes leave.
        let t = &mut f.terms;
        let at_least3 = t.le(k3, f.x);
        let (not3, not4) = (t.ne(f.x, k3), t.ne(f.x, k4));
        let extra = t.and(vec![at_least3, not3, not4]);
        let m = u
            .model(&f.terms, std::iter::empty(), extra)
            .expect("a model");
        assert_eq!(m[&f.x], 5);
        // The error of an assert passed before has no model.
        let t = &mut f.terms;
        let k15 = t.int(15);
        let y15 = t.eq(f.y, k15);
        let error = t.and(vec![x5, y15]);
        assert_eq!(u.model(&f.terms, pc.iter().copied(), error), None);
    }

    #[test]
    fn an_interval_full_of_holes_is_empty() {
        let mut f = fixture();
        let t = &mut f.terms;
        let (k1, k3, k2, k0) = (t.int(1), t.int(3), t.int(2), t.int(0));
        let ge1 = t.ge(f.x, k1);
        let lt3 = t.lt(f.x, k3);
        let two_x = t.scale(BigInt::from(2), f.x);
        let odd = t.eq(two_x, k3); // 2x = 3: no integer
        let ne1 = t.ne(f.x, k1);
        let ne2 = t.ne(f.x, k2);
        let ne0 = t.ne(f.x, k0);
        assert_eq!(decide(&f, &[ge1, lt3, ne1], ne2), Some(false));
        assert_eq!(decide(&f, &[ge1, lt3, ne1], ne0), Some(true));
        // The gcd test decides it as the term is built.
        assert_eq!(f.terms.as_bool(odd), Some(false));
    }

    #[test]
    fn holes_beside_a_known_value_are_decided_one_by_one() {
        let mut f = fixture();
        let t = &mut f.terms;
        let (k5, k7, k9) = (t.int(5), t.int(7), t.int(9));
        let is7 = t.eq(f.x, k7);
        let ne5 = t.ne(f.x, k5);
        let ne9 = t.ne(f.x, k9);
        let ne7 = t.ne(f.x, k7);
        // The holes come before and after the value is known.
        assert_eq!(decide(&f, &[ne5, is7], ne9), Some(true));
        assert_eq!(decide(&f, &[ne5, is7, ne9], ne7), Some(false));
        assert_eq!(decide(&f, &[ne5, ne7, ne9], is7), Some(false));
        let mut r = Range::ANY;
        assert!(r.narrow(&Rel::IsNot(7)) && r.narrow(&Rel::Is(5)));
        assert!(r.narrow(&Rel::IsNot(6)) && r.admits(&Rel::IsNot(4)));
        assert!(!r.admits(&Rel::IsNot(5)) && !r.clone().narrow(&Rel::IsNot(5)));
        assert!(!r.narrow(&Rel::Is(7)));
    }

    #[test]
    fn a_conjunct_relating_two_integers_goes_to_the_solver() {
        let mut f = fixture();
        let t = &mut f.terms;
        let k0 = t.int(0);
        let rel = t.le(f.x, f.y);
        let x0 = t.eq(f.x, k0);
        let a0 = t.eq(f.a, k0);
        let both = t.le(f.x, f.y);
        assert_eq!(decide(&f, &[rel], x0), None);
        // independent of x and y: decided
        assert_eq!(decide(&f, &[rel], a0), Some(true));
        assert_eq!(decide(&f, &[], both), None);
    }

    #[test]
    fn only_a_conjunct_that_may_read_the_same_element_goes_to_the_solver() {
        let mut f = fixture();
        let t = &mut f.terms;
        let Node::Select(array, _) = t.node(f.a).clone() else {
            unreachable!()
        };
        let (k0, k5, k72) = (t.int(0), t.int(5), t.int(72));
        let other = t.select(array, vec![k5]);
        let (o0, o72) = (t.eq(other, k0), t.eq(other, k72));
        let either = t.or(vec![o0, o72]); // about A[5] only
        let at_x = t.select(array, vec![f.x]);
        let x_read = t.eq(at_x, k0); // A[x]: any element
        let a72 = t.eq(f.a, k72);
        let o5 = t.eq(other, k5);
        let o72 = t.eq(other, k72);
        assert_eq!(decide(&f, &[either], a72), Some(true));
        assert_eq!(decide(&f, &[x_read], a72), None);
        // A[5] is neither 0 nor 72 and 5: both cases fail
        assert_eq!(decide(&f, &[either], o5), Some(false));
        assert_eq!(decide(&f, &[either, x_read], o72), None);
    }

    #[test]
    fn a_constant_past_machine_integers_goes_to_the_solver() {
        let mut f = fixture();
        let t = &mut f.terms;
        let huge = t.int(BigInt::from(1u8) << 70);
        let k5 = t.int(5);
        let is_huge = t.eq(f.x, huge);
        let le5 = t.le(f.x, k5);
        let ge5 = t.ge(f.x, k5);
        assert_eq!(decide(&f, &[le5], is_huge), None);
        // ¬(x ≤ 5) is x ≥ 6, by the negation rule
        let not_le5 = f.terms.not(le5);
        assert_eq!(decide(&f, &[ge5], not_le5), Some(true));
        assert_eq!(decide(&f, &[le5], not_le5), Some(false));
    }
}
