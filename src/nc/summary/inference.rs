//! TR Alg. 8: the count of an inner loop u in the iteration of the outer
//! loop that starts after κ⃗ iterations, as a relation
//!
//!   ν_u = max(0, c⃗·κ⃗ + Σ mₗ·sₗ + b)
//!
//! over the outer counters and the loop-entry symbols sₗ. The TR states
//! it as one ∃c⃗,m⃗,b ∀… query, which is nonlinear and which Z3 often
//! answers `unknown`. Here the same relation is found by
//! counterexample-guided synthesis: fit the unknowns to sample points of
//! the inner loop's iteration condition (a linear problem in the
//! unknowns), then validate the candidate exactly (the condition ∧ ν ≠ f
//! must be UNSAT) or take the counterexample as a new sample.

use super::backbones::Run;
use super::looping::at_fresh_taus;
use super::{Key, LoopVars, Summary, sigma_subst};
use crate::ir::LoopId;
use crate::nc::Engine;
use crate::smt::Answer;
use crate::term::{Node, Subst, TermId, Terms, Var, VarKind};
use num_bigint::BigInt;
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet};

/// How many candidates the synthesis tries before it gives up.
const MAX_ROUNDS: usize = 24;

/// The count of inner loop `u` in the iteration that starts after κ⃗
/// iterations; `None` when there is no such relation (or not yet: the
/// iterated values it needs are still ⋆).
pub(super) fn infer_count(
    eng: &mut Engine,
    u: LoopId,
    runs: &[Run],
    theta: &BTreeMap<Key, TermId>,
    counters: &[Var],
    vars: &LoopVars,
) -> Option<TermId> {
    let inner = eng.summary(u);
    if inner.counters.is_empty() {
        return Some(eng.terms.int(0));
    }
    let _p = crate::deadline::phase("inferring loop counts");
    let nu = eng.terms.new_var(VarKind::Bound, "ν");
    let iter = iteration_condition(eng, &inner, u, runs, nu);
    // The iterated values it speaks of must be known.
    for v in eng.terms.free_vars(iter) {
        if let Some((slot, _)) = eng.slots.symbols.iter().find(|(_, s)| **s == v)
            && eng.terms.contains_star(theta[&Key::Slot(*slot)])
        {
            return None;
        }
    }
    let problem = Problem::new(eng, iter, nu, theta, counters, vars);
    problem.synthesise(eng, counters)
}

/// Iter(ν): "the inner loop runs ν times in this iteration", over the
/// body's entry state: the inner looping condition in its last-iteration
/// form, and the guards of leaving the inner loop, for each use of it.
fn iteration_condition(
    eng: &mut Engine,
    inner: &Summary,
    u: LoopId,
    runs: &[Run],
    nu: Var,
) -> TermId {
    let nut = eng.terms.var(nu);
    let zero = eng.terms.int(0);
    let mut cases = Vec::new();
    for r in runs {
        for use_ in r.inner.iter().filter(|x| x.lp == u) {
            let nm1 = eng.terms.add_int(nut, -1);
            let last = last_iteration(eng, inner, nm1);
            let last = use_.pre.as_subst(&eng.slots).apply(&mut eng.terms, last);
            let positive = eng.terms.lt(zero, nut);
            let last = eng.terms.implies(positive, last);
            let exit = eng.terms.and(use_.exit.clone());
            let exit = sigma_subst(&mut eng.terms, exit, &use_.counters, Some(nut));
            let nonneg = eng.terms.le(zero, nut);
            cases.push(eng.terms.and(vec![last, exit, nonneg]));
        }
    }
    eng.terms.or(cases)
}

/// The last-iteration form of the inner looping condition: its iteration
/// number `nm1` (= ν − 1) satisfied some body backbone's γ.
fn last_iteration(eng: &mut Engine, inner: &Summary, nm1: TermId) -> TermId {
    if inner.gammas.len() == 1 {
        let mut s = Subst::new();
        s.bind(inner.taus[0], nm1);
        return s.apply(&mut eng.terms, inner.gammas[0]);
    }
    let zero = eng.terms.int(0);
    let taus: Vec<TermId> = inner.taus.iter().map(|t| eng.terms.var(*t)).collect();
    let total = eng.terms.sum(
        BigInt::from(0),
        taus.iter().map(|t| (BigInt::from(1), *t)).collect(),
    );
    let mut parts: Vec<TermId> = taus.iter().map(|t| eng.terms.le(zero, *t)).collect();
    parts.push(eng.terms.eq(total, nm1));
    let any = eng.terms.or(inner.gammas.clone());
    parts.push(any);
    let b = eng.terms.and(parts);
    eng.terms.exists(inner.taus.clone(), b)
}

/// The synthesis problem: Iter in terms of the outer iteration variables
/// τ⃗ (array reads abstracted), its points (τ⃗, ν, s⃗), and the unknowns
/// c⃗, m⃗, b.
struct Problem {
    taus: Vec<Var>,
    nu: Var,
    scalars: Vec<Var>,
    /// 0 ≤ τ⃗ ∧ Iter(τ⃗, ν, s⃗).
    base: TermId,
    cs: Vec<Var>,
    ms: Vec<Var>,
    b: Var,
}

impl Problem {
    fn new(
        eng: &mut Engine,
        iter: TermId,
        nu: Var,
        theta: &BTreeMap<Key, TermId>,
        counters: &[Var],
        vars: &LoopVars,
    ) -> Problem {
        let (taus, at_tau) = at_fresh_taus(eng, theta, counters, vars);
        let iter_tau = at_tau.subst.apply(&mut eng.terms, iter);
        let mut iter_tau_parts = at_tau.constraints.clone();
        iter_tau_parts.push(iter_tau);
        let iter_tau = eng.terms.and(iter_tau_parts);
        let iter_tau = abstract_array_reads(&mut eng.terms, iter_tau);
        let scalars: Vec<Var> = eng
            .terms
            .free_vars(iter_tau)
            .into_iter()
            .filter(|v| matches!(v.kind, VarKind::Symbol | VarKind::Artificial))
            .collect();
        let cs: Vec<Var> = taus
            .iter()
            .map(|_| eng.terms.new_var(VarKind::Fresh, "c"))
            .collect();
        let ms: Vec<Var> = scalars
            .iter()
            .map(|_| eng.terms.new_var(VarKind::Fresh, "m"))
            .collect();
        let b = eng.terms.new_var(VarKind::Fresh, "b");
        let zero = eng.terms.int(0);
        let tau_t: Vec<TermId> = taus.iter().map(|t| eng.terms.var(*t)).collect();
        let mut base: Vec<TermId> = tau_t.iter().map(|t| eng.terms.le(zero, *t)).collect();
        base.push(iter_tau);
        let base = eng.terms.and(base);
        // The last iteration's ∃τ is positive: as constants, the
        // validations are quantifier-free (~0.7 ms against ~7 ms each).
        let base = eng.terms.skolemize(base);
        Problem {
            taus,
            nu,
            scalars,
            base,
            cs,
            ms,
            b,
        }
    }

    /// The variables of a sample point, in order: τ⃗, ν, s⃗.
    fn point(&self) -> Vec<Var> {
        self.taus
            .iter()
            .copied()
            .chain(std::iter::once(self.nu))
            .chain(self.scalars.iter().copied())
            .collect()
    }

    /// The unknowns, in order: c⃗, m⃗, b.
    fn unknowns(&self) -> Vec<Var> {
        self.cs
            .iter()
            .chain(&self.ms)
            .copied()
            .chain(std::iter::once(self.b))
            .collect()
    }

    /// Fit, validate, repeat; the relation over the counters `counters`.
    fn synthesise(&self, eng: &mut Engine, counters: &[Var]) -> Option<TermId> {
        let point = self.point();
        let mut samples: Vec<Vec<BigInt>> = vec![model_at(eng, self.base, &point)?];
        for _round in 0..MAX_ROUNDS {
            crate::deadline::check();
            let cand = self.fit(eng, &samples)?;
            match self.validate(eng, &cand, &point) {
                Point::Unsat => {
                    eng.stats.inferred_relations += 1;
                    let ks: Vec<TermId> = counters.iter().map(|k| eng.terms.var(*k)).collect();
                    let scalar_t: Vec<TermId> =
                        self.scalars.iter().map(|s| eng.terms.var(*s)).collect();
                    let (cv, mv, bv) = self.split(eng, &cand);
                    return Some(relation(&mut eng.terms, &cv, &mv, bv, &ks, &scalar_t));
                }
                Point::Model(p) => samples.push(p),
                Point::Unknown => return None,
            }
        }
        None
    }

    /// Values of the unknowns that fit every sample.
    fn fit(&self, eng: &mut Engine, samples: &[Vec<BigInt>]) -> Option<Vec<BigInt>> {
        let cu: Vec<TermId> = self.cs.iter().map(|c| eng.terms.var(*c)).collect();
        let mu: Vec<TermId> = self.ms.iter().map(|m| eng.terms.var(*m)).collect();
        let bu = eng.terms.var(self.b);
        let mut fit = Vec::new();
        for sample in samples {
            let vals: Vec<TermId> = sample.iter().map(|v| eng.terms.int(v.clone())).collect();
            let (kt, rest) = vals.split_at(self.taus.len());
            let (nv, st) = rest.split_first().expect("ν is in every sample");
            let f = relation(&mut eng.terms, &cu, &mu, bu, kt, st);
            fit.push(eng.terms.eq(*nv, f));
        }
        let fit = eng.terms.and(fit);
        model_at(eng, fit, &self.unknowns())
    }

    /// The candidate's values as terms: (c⃗, m⃗, b).
    fn split(&self, eng: &mut Engine, cand: &[BigInt]) -> (Vec<TermId>, Vec<TermId>, TermId) {
        let cand_t: Vec<TermId> = cand.iter().map(|v| eng.terms.int(v.clone())).collect();
        let (cv, rest) = cand_t.split_at(self.cs.len());
        let (mv, bv) = rest.split_at(self.ms.len());
        (cv.to_vec(), mv.to_vec(), bv[0])
    }

    /// Whether the candidate holds at every point of Iter (UNSAT of
    /// Iter ∧ ν ≠ f), or a point where it does not.
    fn validate(&self, eng: &mut Engine, cand: &[BigInt], point: &[Var]) -> Point {
        let (cv, mv, bv) = self.split(eng, cand);
        let tau_t: Vec<TermId> = self.taus.iter().map(|t| eng.terms.var(*t)).collect();
        let scalar_t: Vec<TermId> = self.scalars.iter().map(|s| eng.terms.var(*s)).collect();
        let f_tau = relation(&mut eng.terms, &cv, &mv, bv, &tau_t, &scalar_t);
        let nut = eng.terms.var(self.nu);
        let differs = eng.terms.ne(nut, f_tau);
        let bad = eng.terms.and2(self.base, differs);
        check_point(eng, bad, point)
    }
}

/// max(0, Σ cₖ·τₖ + Σ mₗ·sₗ + b) for given coefficient and point terms.
fn relation(
    terms: &mut Terms,
    c: &[TermId],
    m: &[TermId],
    b: TermId,
    ks: &[TermId],
    ss: &[TermId],
) -> TermId {
    let mut parts: Vec<(BigInt, TermId)> = Vec::new();
    for (ci, k) in c.iter().zip(ks) {
        parts.push((BigInt::from(1), terms.mul(*ci, *k)));
    }
    for (mi, sv) in m.iter().zip(ss) {
        parts.push((BigInt::from(1), terms.mul(*mi, *sv)));
    }
    parts.push((BigInt::from(1), b));
    let lin = terms.sum(BigInt::from(0), parts);
    let z = terms.int(0);
    terms.max(z, lin)
}

enum Point {
    Unsat,
    Model(Vec<BigInt>),
    Unknown,
}

/// Values of `vars` in a model of `formula` (`None` if UNSAT or unknown).
fn model_at(eng: &mut Engine, formula: TermId, vars: &[Var]) -> Option<Vec<BigInt>> {
    match check_point(eng, formula, vars) {
        Point::Model(p) => Some(p),
        _ => None,
    }
}

fn check_point(eng: &mut Engine, formula: TermId, vars: &[Var]) -> Point {
    eng.stats.inference_queries += 1;
    if !eng.solver.is_available() {
        return Point::Unknown;
    }
    let script = crate::smt::smtlib::model_query(&eng.terms, formula, vars);
    let quantified = eng.terms.has_quantifier(formula);
    let reply = eng.solver.run(&script.text, quantified);
    match reply.answer {
        Answer::Unsat => Point::Unsat,
        Answer::Unknown(_) => Point::Unknown,
        Answer::Sat => {
            let values: HashMap<String, BigInt> = crate::smt::reply::int_values(&reply.values)
                .unwrap_or_default()
                .into_iter()
                .collect();
            // A variable the formula does not constrain may be missing: it is 0.
            Point::Model(
                script
                    .names
                    .iter()
                    .map(|n| values.get(n).cloned().unwrap_or_default())
                    .collect(),
            )
        }
    }
}

/// Replaces every array read by a fresh variable (equal reads by the same
/// one): the relation must then hold for any array contents.
fn abstract_array_reads(terms: &mut Terms, t: TermId) -> TermId {
    let mut reads: BTreeSet<TermId> = BTreeSet::new();
    let mut stack = vec![t];
    let mut seen = rustc_hash::FxHashSet::default();
    while let Some(x) = stack.pop() {
        if !seen.insert(x) {
            continue;
        }
        if let Node::Select(..) = terms.node(x) {
            reads.insert(x);
            continue;
        }
        stack.extend(terms.children(&terms.node(x).clone()));
    }
    if reads.is_empty() {
        return t;
    }
    let mut map: HashMap<TermId, TermId> = HashMap::default();
    for r in reads {
        let v = terms.new_var(VarKind::Fresh, "a");
        let vt = terms.var(v);
        map.insert(r, vt);
    }
    terms.replace_subterms(t, &mut map)
}
