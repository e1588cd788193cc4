//! Loop summaries (TR Algs. 4–8, ISSTA §3.3–3.4).
//!
//! For a `while` loop with header h: execute every backbone πᵢ of the
//! induced program P(C, h) (one kind of iteration each) from the general
//! state, giving (θᵢ, pcᵢ); give πᵢ a path counter κᵢ; compute the iterated
//! state θ^κ as a least fixpoint (everything starts at ⋆ and a slot gets a
//! value once a rule applies); build the looping condition
//!   φ^κ ≡ ⋀ᵢ ∀τᵢ (0 ≤ τᵢ < κᵢ → ∃τ⃗₋ᵢ (0⃗ ≤ τ⃗₋ᵢ ≤ κ⃗₋ᵢ ∧ ∃κ⃗′ ≥ 0. θ^κ[κ⃗/τ⃗]⟨pcᵢ⟩)).
//!
//! Scalar rules (ISSTA §3.3, the verified core of TR Table 1), with
//! eᵢ = θᵢ(a) and θ⟨·⟩ the current iterated state:
//! 1. no backbone changes a: a₀;
//! 2. each leaves a or adds an iteration-invariant dᵢ: a₀ + Σ θ⟨dᵢ⟩·κᵢ;
//! 3. the writers all set the same invariant d: ite(Σ κ_w > 0, θ⟨d⟩, a₀);
//! 4. a single writer sets d depending on its own counter only:
//!    ite(κᵢ > 0, θ⟨d⟩[κᵢ/κᵢ−1], a₀).
//!
//! Anything else is ⋆.
//!
//! Nested loops (TR Alg. 5): in the values of a body backbone, an inner
//! loop's total count Σκ′ is replaced by the artificial symbol ν_u, other
//! occurrences of inner counters by ⋆; ν_u's iterated value — the inner
//! count in the iteration that starts after κ⃗ iterations — is inferred by
//! an SMT query for a relation ν = max(0, c⃗·τ⃗ + d) (TR Alg. 8, with the
//! inner looping condition in last-iteration form), then validated.

use super::state::{Slot, State};
use super::{Engine, Path};
use crate::ir::{self, LoopId};
use crate::smt::{self, Answer};
use crate::term::{Node, Subst, TermId, Terms, Var, VarKind};
use num_bigint::BigInt;
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet};

mod arrays;
use arrays::iterate_array;

#[derive(Clone, Debug)]
pub struct Summary {
    /// κ₁ … κₙ, one per backbone of the loop body (in backbone order).
    pub counters: Vec<Var>,
    /// Last-writer selectors ℓ of Table 1 chains: existential like the
    /// counters, renamed at each application.
    pub selectors: Vec<Var>,
    /// θ^κ: every slot's value after κ⃗ iterations, over the loop-entry symbols.
    pub theta: State,
    /// φ^κ.
    pub looping: TermId,
    /// τ₁ … τₙ and γᵢ = θ^κ[κ⃗/τ⃗]⟨pcᵢ⟩ (inner counters existentially bound),
    /// kept for the last-iteration form used by an enclosing loop's Alg. 8.
    pub taus: Vec<Var>,
    pub gammas: Vec<TermId>,
    /// Inner loops whose count was inferred (Alg. 8): the count in the
    /// iteration that starts after κ⃗ iterations.
    pub inferred: Vec<(LoopId, TermId)>,
    /// Slots whose iterated value is ⋆.
    pub unknown: Vec<Slot>,
    /// Number of body backbones and how many were infeasible on their own.
    pub backbones: usize,
    pub notes: Vec<String>,
}

impl Summary {
    /// A summary without counters: θ as given, no looping condition.
    fn trivial(
        eng: &mut Engine,
        theta: State,
        unknown: Vec<Slot>,
        backbones: usize,
        note: String,
    ) -> Summary {
        let looping = eng.terms.bool(true);
        Summary {
            counters: vec![],
            selectors: vec![],
            theta,
            looping,
            taus: vec![],
            gammas: vec![],
            inferred: vec![],
            unknown,
            backbones,
            notes: vec![note],
        }
    }
}

/// One executed backbone of a loop body.
struct Run {
    pc: TermId,
    state: State,
    inner: Vec<InnerUse>,
}

/// An inner loop entered along a body backbone.
struct InnerUse {
    lp: LoopId,
    counters: Vec<Var>,
    /// The state at the inner header (before the summary).
    pre: State,
    /// Guards of the edges that leave the inner loop after its summary.
    exit: Vec<TermId>,
}

/// Executes a body backbone from `start`; `None` if trivially infeasible.
fn run_path(eng: &mut Engine, start: &State, path: &Path, header: ir::NodeId) -> Option<Run> {
    let body = eng.body;
    let mut st = start.clone();
    let mut parts = Vec::new();
    let mut inner: Vec<InnerUse> = Vec::new();
    let mut leaving: Option<(usize, LoopId)> = None;
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
    let checks: Vec<TermId> = runs
        .iter()
        .map(|r| super::unfold(&mut eng.terms, r.pc, 1))
        .collect();
    let script = crate::term::to_smtlib_batch(&eng.terms, &checks);
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

/// What θ^κ is computed for: program slots and the ν of inner loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    Slot(Slot),
    Nu(LoopId),
}

pub(super) fn compute(eng: &mut Engine, l: LoopId) -> Summary {
    let body = eng.body;
    let lp = &body.loops[l as usize];
    let max = eng.opts.max_body_backbones;
    let bbs = ir::loop_backbones(body, lp, max + 1);
    let start = State::general(&mut eng.terms, &eng.slots);
    if bbs.count > max as u128 {
        return havoc_summary(
            eng,
            lp,
            start,
            format!("{} body backbones (limit {max})", bbs.count),
        );
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
        return Summary::trivial(
            eng,
            start,
            vec![],
            backbones,
            "no feasible iteration".into(),
        );
    }
    let counters: Vec<Var> = runs.iter().map(|_| eng.fresh_counter()).collect();

    // Alg. 5: inner loop counts become ν_u (or ⋆ without inference).
    let mut nus: BTreeMap<LoopId, Var> = BTreeMap::new();
    for r in &runs {
        for u in &r.inner {
            nus.entry(u.lp)
                .or_insert_with(|| eng.terms.new_var(VarKind::Artificial, format!("ν{}", u.lp)));
        }
    }
    let mut values: Vec<BTreeMap<Slot, TermId>> = Vec::new();
    for r in &runs {
        let mut v: BTreeMap<Slot, TermId> = r.state.values.clone();
        for u in &r.inner {
            let nu = if eng.opts.counter_inference {
                Some(eng.terms.var(nus[&u.lp]))
            } else {
                None
            };
            for t in v.values_mut() {
                *t = sigma_subst(&mut eng.terms, *t, &u.counters, nu);
            }
        }
        values.push(v);
    }

    // Alg. 6: least fixpoint, each key set at most once.
    let mut theta: BTreeMap<Key, TermId> = BTreeMap::new();
    let star = eng.terms.star();
    for s in eng.slots.all.clone() {
        let sym = eng.terms_var_of(s);
        let init = match eng.terms.sort(sym) {
            crate::term::Sort::Array(n) => star_array(&mut eng.terms, n),
            _ => star,
        };
        theta.insert(Key::Slot(s), init);
    }
    for u in nus.keys() {
        theta.insert(Key::Nu(*u), star);
    }
    let mut inferred = Vec::new();
    // From here on the ν live in `vars` (with the selectors found below).
    let mut vars = LoopVars {
        selectors: Vec::new(),
        nus,
    };
    let pcs: Vec<TermId> = runs.iter().map(|r| r.pc).collect();
    let slots = eng.slots.clone();
    loop {
        let mut changed = false;
        let subst = theta_subst(eng, &theta, &vars.nus);
        for &s in &slots.all {
            if !eng.terms.contains_star(theta[&Key::Slot(s)]) {
                continue;
            }
            let sym = eng.terms_var_of(s);
            let vals: Vec<TermId> = values.iter().map(|v| v[&s]).collect();
            let e = match iterate(&mut eng.terms, sym, &vals, &subst, &counters) {
                Some(Iterated::Value(e)) => e,
                Some(Iterated::Chain(writers)) => {
                    let (e, selector, constraint) = chain(eng, sym, &writers, &counters);
                    if !eng.terms.contains_star(e) {
                        vars.selectors.push((selector, constraint));
                    }
                    e
                }
                None => {
                    let writes = arrays::LoopWrites {
                        sym,
                        vals: &vals,
                        pcs: &pcs,
                        theta: &theta,
                        counters: &counters,
                        vars: &vars,
                    };
                    match arrays::iterate_array_writes(eng, &writes) {
                        Some(e) => e,
                        None => continue,
                    }
                }
            };
            if !eng.terms.contains_star(e) {
                theta.insert(Key::Slot(s), e);
                changed = true;
            }
        }
        if eng.opts.counter_inference {
            let inner: Vec<LoopId> = vars.nus.keys().copied().collect();
            for u in inner {
                if !eng.terms.is_star(theta[&Key::Nu(u)]) {
                    continue;
                }
                if let Some(f) = infer_count(eng, u, &runs, &theta, &counters, &vars) {
                    theta.insert(Key::Nu(u), f);
                    inferred.push((u, f));
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }

    // The looping condition.
    // τₙ iterates alongside κₙ: the same number, so conditions read easily.
    let taus: Vec<Var> = counters
        .iter()
        .map(|k| {
            let name = eng.terms.var_name(*k).replacen('κ', "τ", 1);
            eng.terms.new_var(VarKind::Bound, name)
        })
        .collect();
    let at_tau = theta_at(eng, &theta, &counters, &taus, &vars);
    let zero = eng.terms.int(0);
    let mut gammas = Vec::new();
    let mut psis = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let g = at_tau.subst.apply(&mut eng.terms, r.pc);
        // Inner counters differ per iteration: bind them inside; so do the
        // selectors of the state at τ⃗, with their constraints.
        let mut inner: Vec<Var> = r
            .inner
            .iter()
            .flat_map(|u| u.counters.iter().copied())
            .collect();
        let mut nonneg: Vec<TermId> = inner
            .iter()
            .map(|c| {
                let ct = eng.terms.var(*c);
                eng.terms.le(zero, ct)
            })
            .collect();
        let used: Vec<usize> = (0..at_tau.selectors.len())
            .filter(|k| eng.terms.mentions(g, at_tau.selectors[*k]))
            .collect();
        for k in used {
            inner.push(at_tau.selectors[k]);
            nonneg.push(at_tau.constraints[k]);
        }
        nonneg.push(g);
        let body_i = eng.terms.and(nonneg);
        let gamma = eng.terms.exists(inner, body_i);
        gammas.push(gamma);
        // ∀τᵢ (0 ≤ τᵢ < κᵢ → ∃τ⃗₋ᵢ (0 ≤ τⱼ ≤ κⱼ ∧ γᵢ))
        let mut bounds = Vec::new();
        let mut others = Vec::new();
        for (j, (k, t)) in counters.iter().zip(&taus).enumerate() {
            if j == i {
                continue;
            }
            let (kt, tt) = (eng.terms.var(*k), eng.terms.var(*t));
            bounds.push(eng.terms.le(zero, tt));
            bounds.push(eng.terms.le(tt, kt));
            others.push(*t);
        }
        bounds.push(gamma);
        let inner_body = eng.terms.and(bounds);
        let ex = eng.terms.exists(others, inner_body);
        let (ti, ki) = (eng.terms.var(taus[i]), eng.terms.var(counters[i]));
        let lo = eng.terms.le(zero, ti);
        let hi = eng.terms.lt(ti, ki);
        let ante = eng.terms.and2(lo, hi);
        let imp = eng.terms.implies(ante, ex);
        psis.push(eng.terms.forall(vec![taus[i]], imp));
    }
    psis.extend(vars.selectors.iter().map(|(_, c)| *c));
    let looping = eng.terms.and(psis);
    let mut st = State {
        values: BTreeMap::new(),
    };
    let mut unknown = Vec::new();
    for s in &eng.slots.all {
        let v = theta[&Key::Slot(*s)];
        if eng.terms.contains_star(v) {
            unknown.push(*s);
        }
        st.values.insert(*s, v);
    }
    Summary {
        counters,
        selectors: vars.selectors.iter().map(|(l, _)| *l).collect(),
        theta: st,
        looping,
        taus,
        gammas,
        inferred,
        unknown,
        backbones,
        notes: Vec::new(),
    }
}

impl Engine<'_> {
    /// The basic symbol of a slot, as a term.
    pub(crate) fn terms_var_of(&mut self, s: Slot) -> TermId {
        let v = self.slots.symbols[&s];
        self.terms.var(v)
    }
}

fn star_array(terms: &mut Terms, n: u8) -> TermId {
    let xs: Vec<Var> = (0..n).map(|_| terms.new_var(VarKind::Bound, "x")).collect();
    let s = terms.star();
    terms.lambda(xs, s)
}

/// ite(ℓ = j, lastⱼ, …, a₀) with a fresh selector ℓ and its constraint
/// (ℓ = 0 ∧ Σκ_w = 0) ∨ ⋁ⱼ (ℓ = j ∧ κⱼ > 0); backbones are numbered from 1.
fn chain(
    eng: &mut Engine,
    sym: TermId,
    writers: &[(usize, TermId)],
    counters: &[Var],
) -> (TermId, Var, TermId) {
    let n = eng.next_counter;
    eng.next_counter += 1;
    let sel = eng.terms.new_var(VarKind::Counter, format!("ℓ{n}"));
    let st = eng.terms.var(sel);
    let zero = eng.terms.int(0);
    let mut value = sym;
    let mut options = Vec::new();
    let mut total = Vec::new();
    for &(i, last) in writers.iter().rev() {
        let j = eng.terms.int(i as i64 + 1);
        let is_j = eng.terms.eq(st, j);
        value = eng.terms.ite(is_j, last, value);
        let k = eng.terms.var(counters[i]);
        let ran = eng.terms.lt(zero, k);
        options.push(eng.terms.and2(is_j, ran));
        total.push((BigInt::from(1), k));
    }
    let none_ran = {
        let t = eng.terms.sum(BigInt::from(0), total);
        let no = eng.terms.le(t, zero);
        let is0 = eng.terms.eq(st, zero);
        eng.terms.and2(is0, no)
    };
    options.push(none_ran);
    let constraint = eng.terms.or(options);
    (value, sel, constraint)
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

/// The state at the start of an iteration, after τ⃗ iterations:
/// θ^κ[κ⃗/τ⃗]⟨·⟩ (every slot's symbol ↦ its iterated value), plus the
/// Table 1 selectors that this state speaks of. A selector ℓ names the
/// backbone that wrote *last*, and the last writer before iteration τ⃗ is
/// not the last one overall: each selector gets a fresh variable ℓ′ here,
/// with its constraint at τ⃗. Whoever uses the state must bind the ℓ′
/// existentially together with their constraints (or reject terms that
/// mention them); keeping the final ℓ made a reachable assert unreachable
/// (`tests/programs/selector_at_iteration.mc`).
struct AtIteration {
    subst: Subst,
    selectors: Vec<Var>,
    constraints: Vec<TermId>,
}

fn theta_at(
    eng: &mut Engine,
    theta: &BTreeMap<Key, TermId>,
    counters: &[Var],
    taus: &[Var],
    loop_vars: &LoopVars,
) -> AtIteration {
    let LoopVars { selectors, nus } = loop_vars;
    let mut to_tau = Subst::new();
    for (k, t) in counters.iter().zip(taus) {
        let tt = eng.terms.var(*t);
        to_tau.bind(*k, tt);
    }
    let mut fresh = Vec::new();
    for (l, _) in selectors {
        let name = eng.terms.var_name(*l).to_string() + "′";
        let v = eng.terms.new_var(VarKind::Bound, name);
        let vt = eng.terms.var(v);
        to_tau.bind(*l, vt);
        fresh.push(v);
    }
    let constraints = selectors
        .iter()
        .map(|(_, c)| to_tau.apply(&mut eng.terms, *c))
        .collect();
    let mut at_tau = Subst::new();
    for s in &eng.slots.all {
        let v = to_tau.apply(&mut eng.terms, theta[&Key::Slot(*s)]);
        at_tau.bind(eng.slots.symbols[s], v);
    }
    for (u, nu) in nus.iter() {
        let v = to_tau.apply(&mut eng.terms, theta[&Key::Nu(*u)]);
        at_tau.bind(*nu, v);
    }
    AtIteration {
        subst: at_tau,
        selectors: fresh,
        constraints,
    }
}

/// Fresh iteration variables τ⃗ and the state after τ⃗ iterations.
fn at_fresh_taus(
    eng: &mut Engine,
    theta: &BTreeMap<Key, TermId>,
    counters: &[Var],
    loop_vars: &LoopVars,
) -> (Vec<Var>, AtIteration) {
    let taus: Vec<Var> = counters
        .iter()
        .map(|_| eng.terms.new_var(VarKind::Bound, "τ"))
        .collect();
    let at = theta_at(eng, theta, counters, &taus, loop_vars);
    (taus, at)
}

/// The variables of a loop's summary besides its counters: the Table 1
/// selectors ℓ with their constraints over κ⃗, and the ν of inner loops.
struct LoopVars {
    selectors: Vec<(Var, TermId)>,
    nus: BTreeMap<LoopId, Var>,
}

/// θ⟨·⟩ for the current iterated state: every symbol (and ν) ↦ its value.
fn theta_subst(
    eng: &mut Engine,
    theta: &BTreeMap<Key, TermId>,
    nus: &BTreeMap<LoopId, Var>,
) -> Subst {
    let mut s = Subst::new();
    for (k, v) in theta {
        match k {
            Key::Slot(slot) => s.bind(eng.slots.symbols[slot], *v),
            Key::Nu(u) => s.bind(nus[u], *v),
        }
    }
    s
}

/// The ISSTA rules for one slot; `None` when none applies.
fn iterate(
    terms: &mut Terms,
    sym: TermId,
    vals: &[TermId],
    theta: &Subst,
    counters: &[Var],
) -> Option<Iterated> {
    if vals.iter().all(|v| *v == sym) {
        return Some(Iterated::Value(sym)); // rule 1
    }
    let Node::Var(sym_var) = *terms.node(sym) else {
        return None;
    };
    if terms.sort(sym) != crate::term::Sort::Int {
        return iterate_array(terms, sym, vals, theta, counters).map(Iterated::Value);
    }
    let mut progressions = Vec::new();
    let mut overwrites = Vec::new();
    for (i, &v) in vals.iter().enumerate() {
        if v == sym {
            continue;
        }
        if !terms.mentions(v, sym_var) {
            overwrites.push((i, v));
            continue;
        }
        let d = terms.sub(v, sym);
        if terms.mentions(d, sym_var) {
            return None;
        }
        progressions.push((i, d));
    }
    let invariant = |terms: &Terms, t: TermId| {
        !terms.contains_star(t) && !terms.mentions_kind(t, |k| k == VarKind::Counter)
    };
    if overwrites.is_empty() {
        // Rule 2: a₀ + Σ θ⟨dᵢ⟩·κᵢ.
        let mut summands = vec![(BigInt::from(1), sym)];
        for (i, d) in progressions {
            let td = theta.apply(terms, d);
            if !invariant(terms, td) {
                return None;
            }
            let k = terms.var(counters[i]);
            summands.push((BigInt::from(1), terms.mul(td, k)));
        }
        return Some(Iterated::Value(terms.sum(BigInt::from(0), summands)));
    }
    if !progressions.is_empty() {
        return None;
    }
    let tds: Vec<(usize, TermId)> = overwrites
        .iter()
        .map(|&(i, d)| (i, theta.apply(terms, d)))
        .collect();
    let zero = terms.int(0);
    // Rule 3: the writers all store the same invariant value.
    if tds.iter().all(|(_, t)| *t == tds[0].1) && invariant(terms, tds[0].1) {
        let ks: Vec<(BigInt, TermId)> = tds
            .iter()
            .map(|(i, _)| (BigInt::from(1), terms.var(counters[*i])))
            .collect();
        let total = terms.sum(BigInt::from(0), ks);
        let c = terms.lt(zero, total);
        return Some(Iterated::Value(terms.ite(c, tds[0].1, sym)));
    }
    // Rule 4: one writer, a value depending on its own counter only.
    if let [(i, td)] = tds[..] {
        if terms.contains_star(td) {
            return None;
        }
        let others: Vec<Var> = counters
            .iter()
            .copied()
            .filter(|c| *c != counters[i])
            .collect();
        if terms.mentions_any(td, &others) {
            return None;
        }
        let k = terms.var(counters[i]);
        let km1 = terms.add_int(k, -1);
        let mut back = Subst::new();
        back.bind(counters[i], km1);
        let last = back.apply(terms, td);
        let c = terms.lt(zero, k);
        return Some(Iterated::Value(terms.ite(c, last, sym)));
    }
    // Table 1's overwrite chain: several writers storing values that each
    // depend on their own counter only. Which one wrote last is chosen by an
    // existential selector ℓ (see `Chain`), constrained by the caller.
    let mut lasts = Vec::new();
    for &(i, td) in &tds {
        let others: Vec<Var> = counters
            .iter()
            .copied()
            .filter(|c| *c != counters[i])
            .collect();
        if terms.contains_star(td) || terms.mentions_any(td, &others) {
            return None;
        }
        let k = terms.var(counters[i]);
        let km1 = terms.add_int(k, -1);
        let mut back = Subst::new();
        back.bind(counters[i], km1);
        lasts.push((i, back.apply(terms, td)));
    }
    Some(Iterated::Chain(lasts))
}

/// The iterated value of a slot, or a Table 1 overwrite chain: the writers
/// as (backbone, value of its last write). The summary turns a chain into
/// ite(ℓ = j, lastⱼ, …, a₀) with a fresh selector ℓ and the constraint
/// (ℓ = 0 ∧ Σκ_w = 0) ∨ ⋁ⱼ (ℓ = j ∧ κⱼ > 0): for a real run ℓ names the
/// backbone that wrote last. (The TR's last-writer condition ψⱼ did not
/// survive the text extraction; an existential selector is sound without
/// its mutual-exclusion check.)
enum Iterated {
    Value(TermId),
    Chain(Vec<(usize, TermId)>),
}

/// ς-substitution of TR Alg. 5: Σ of the inner counters ⇝ ν; any other
/// occurrence of an inner counter makes the term ⋆. Without `nu` (no
/// inference), every term mentioning an inner counter is ⋆.
fn sigma_subst(terms: &mut Terms, t: TermId, counters: &[Var], nu: Option<TermId>) -> TermId {
    if counters.is_empty() || !terms.mentions_any(t, counters) {
        return t;
    }
    let Some(nu) = nu else {
        return match terms.sort(t) {
            crate::term::Sort::Array(n) => star_array(terms, n),
            crate::term::Sort::Bool => terms.fresh_bool(),
            crate::term::Sort::Int => terms.star(),
        };
    };
    let mut memo = HashMap::default();
    sigma_rec(terms, t, counters, nu, &mut memo)
}

fn sigma_rec(
    terms: &mut Terms,
    t: TermId,
    cs: &[Var],
    nu: TermId,
    memo: &mut HashMap<TermId, TermId>,
) -> TermId {
    if let Some(r) = memo.get(&t) {
        return *r;
    }
    // One memoised pass: a node whose children are unchanged is kept (no
    // per-node search for the counters, which would make this quadratic).
    let node = terms.node(t).clone();
    let r = match &node {
        Node::Var(v) if cs.contains(v) => {
            if cs.len() == 1 {
                nu
            } else {
                terms.star()
            }
        }
        Node::Add(c0, xs) => {
            // Σ c·κ′ with one common coefficient over all inner counters ⇝ c·ν.
            let coef: Vec<Option<BigInt>> = cs
                .iter()
                .map(|k| {
                    xs.iter()
                        .find(|(_, x)| matches!(terms.node(*x), Node::Var(v) if v == k))
                        .map(|(c, _)| c.clone())
                })
                .collect();
            let all_same = coef.iter().all(|c| c.is_some() && *c == coef[0]);
            if all_same {
                let c = coef[0].clone().unwrap_or_default();
                let kept: Vec<(BigInt, TermId)> = xs
                    .iter()
                    .filter(|(_, x)| !matches!(terms.node(*x), Node::Var(v) if cs.contains(v)))
                    .cloned()
                    .collect();
                let mut rest: Vec<(BigInt, TermId)> = kept
                    .into_iter()
                    .map(|(k, x)| (k, sigma_rec(terms, x, cs, nu, memo)))
                    .collect();
                rest.push((c, nu));
                terms.sum(c0.clone(), rest)
            } else {
                rebuild_changed(terms, t, &node, cs, nu, memo)
            }
        }
        _ => rebuild_changed(terms, t, &node, cs, nu, memo),
    };
    memo.insert(t, r);
    r
}

/// `t` with ς applied to its children; `t` itself when none changed.
fn rebuild_changed(
    terms: &mut Terms,
    t: TermId,
    node: &Node,
    cs: &[Var],
    nu: TermId,
    memo: &mut HashMap<TermId, TermId>,
) -> TermId {
    let kids = terms.children(node);
    let new: Vec<TermId> = kids
        .iter()
        .map(|k| sigma_rec(terms, *k, cs, nu, memo))
        .collect();
    if new == kids {
        t
    } else {
        crate::term::rebuild_public(terms, node, &new)
    }
}

/// TR Alg. 8: the count of inner loop `u` in the iteration that starts after
/// κ⃗ iterations, as max(0, c⃗·κ⃗ + d) with c⃗, d found by an SMT query and
/// then validated; `None` when there is no such relation (or not yet: the
/// iterated values it needs are still ⋆).
fn infer_count(
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
    let nu = eng.terms.new_var(VarKind::Bound, "ν");
    let nut = eng.terms.var(nu);
    let zero = eng.terms.int(0);
    let mut cases = Vec::new();
    for r in runs {
        for use_ in r.inner.iter().filter(|x| x.lp == u) {
            // Last-iteration form of the inner looping condition.
            let nm1 = eng.terms.add_int(nut, -1);
            let last = if inner.gammas.len() == 1 {
                let mut s = Subst::new();
                s.bind(inner.taus[0], nm1);
                s.apply(&mut eng.terms, inner.gammas[0])
            } else {
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
            };
            let last = use_.pre.as_subst(&eng.slots).apply(&mut eng.terms, last);
            let positive = eng.terms.lt(zero, nut);
            let last = eng.terms.implies(positive, last);
            let exit = eng.terms.and(use_.exit.clone());
            let exit = sigma_subst(&mut eng.terms, exit, &use_.counters, Some(nut));
            let nonneg = eng.terms.le(zero, nut);
            cases.push(eng.terms.and(vec![last, exit, nonneg]));
        }
    }
    let iter = eng.terms.or(cases);
    // The iterated values it speaks of must be known.
    for v in eng.terms.free_vars(iter) {
        if let Some((slot, _)) = eng.slots.symbols.iter().find(|(_, s)| **s == v)
            && eng.terms.contains_star(theta[&Key::Slot(*slot)])
        {
            return None;
        }
    }
    // In terms of the outer iteration variables τ⃗.
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
    // Unknowns: c⃗ (constants) and d = Σ mₗ·sₗ + b. The ∃M,b ∀… query of
    // the TR is nonlinear and Z3 often answers `unknown`; the same problem is
    // solved here by counterexample-guided synthesis: fit the unknowns to
    // sample points of Iter (linear in the unknowns), then validate the
    // candidate exactly (Iter ∧ ν ≠ f must be UNSAT) or take its
    // counterexample as a new sample.
    let cs: Vec<Var> = taus
        .iter()
        .map(|_| eng.terms.new_var(VarKind::Fresh, "c"))
        .collect();
    let ms: Vec<Var> = scalars
        .iter()
        .map(|_| eng.terms.new_var(VarKind::Fresh, "m"))
        .collect();
    let b = eng.terms.new_var(VarKind::Fresh, "b");
    let tau_t: Vec<TermId> = taus.iter().map(|t| eng.terms.var(*t)).collect();
    let scalar_t: Vec<TermId> = scalars.iter().map(|s| eng.terms.var(*s)).collect();
    // max(0, Σ cₖ·τₖ + Σ mₗ·sₗ + b) for given coefficient and point terms.
    let rel =
        |terms: &mut Terms, c: &[TermId], m: &[TermId], b: TermId, ks: &[TermId], ss: &[TermId]| {
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
        };
    let mut base: Vec<TermId> = tau_t.iter().map(|t| eng.terms.le(zero, *t)).collect();
    base.push(iter_tau);
    let base = eng.terms.and(base);
    let point: Vec<Var> = taus
        .iter()
        .copied()
        .chain(std::iter::once(nu))
        .chain(scalars.iter().copied())
        .collect();
    let mut samples: Vec<Vec<BigInt>> = vec![model_at(eng, base, &point)?];
    for _round in 0..24 {
        // Fit the unknowns to every sample.
        let (cu, mu, bu): (Vec<TermId>, Vec<TermId>, TermId) = (
            cs.iter().map(|c| eng.terms.var(*c)).collect(),
            ms.iter().map(|m| eng.terms.var(*m)).collect(),
            eng.terms.var(b),
        );
        let mut fit = Vec::new();
        for sample in &samples {
            let vals: Vec<TermId> = sample.iter().map(|v| eng.terms.int(v.clone())).collect();
            let (kt, rest) = vals.split_at(taus.len());
            let (nv, st) = rest.split_first().expect("ν is in every sample");
            let f = rel(&mut eng.terms, &cu, &mu, bu, kt, st);
            fit.push(eng.terms.eq(*nv, f));
        }
        let fit = eng.terms.and(fit);
        let unknowns: Vec<Var> = cs
            .iter()
            .chain(&ms)
            .copied()
            .chain(std::iter::once(b))
            .collect();
        let cand = model_at(eng, fit, &unknowns)?;
        let cand_t: Vec<TermId> = cand.iter().map(|v| eng.terms.int(v.clone())).collect();
        let (cv, rest) = cand_t.split_at(cs.len());
        let (mv, bv) = rest.split_at(ms.len());
        let (cv, mv, bv) = (cv.to_vec(), mv.to_vec(), bv[0]);
        // Validate exactly.
        let f_tau = rel(&mut eng.terms, &cv, &mv, bv, &tau_t, &scalar_t);
        let differs = eng.terms.ne(nut, f_tau);
        let bad = eng.terms.and2(base, differs);
        match check_point(eng, bad, &point) {
            Point::Unsat => {
                eng.stats.inferred_relations += 1;
                let ks: Vec<TermId> = counters.iter().map(|k| eng.terms.var(*k)).collect();
                return Some(rel(&mut eng.terms, &cv, &mv, bv, &ks, &scalar_t));
            }
            Point::Model(p) => samples.push(p),
            Point::Unknown => return None,
        }
    }
    None
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
    let mut script = crate::term::to_smtlib(&eng.terms, &[formula]);
    let names: Vec<String> = vars
        .iter()
        .map(|v| crate::term::smt_name(&eng.terms, *v))
        .collect();
    // Asked-for variables the formula does not mention must still be declared.
    let free = eng.terms.free_vars(formula);
    let missing: String = vars
        .iter()
        .zip(&names)
        .filter(|(v, _)| !free.contains(v))
        .map(|(_, n)| format!("(declare-fun {n} () Int)\n"))
        .collect();
    script = script.replacen(
        "(set-logic ALL)\n",
        &format!("(set-logic ALL)\n{missing}"),
        1,
    );
    if !names.is_empty() {
        script.push_str(&format!("(get-value ({}))\n", names.join(" ")));
    }
    let quantified = eng.terms.has_quantifier(formula);
    match eng.solver.run(&script, quantified) {
        Answer::Unsat => Point::Unsat,
        Answer::Unknown(_) => Point::Unknown,
        Answer::Sat(model) => {
            let values: HashMap<String, BigInt> =
                smt::parse_int_values(&model).into_iter().collect();
            // A variable the formula does not constrain may be missing: it is 0.
            Point::Model(
                names
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
    replace_terms(terms, t, &mut map)
}

/// Replaces subterms by `memo`'s values; `memo` starts as the replacement
/// map and remembers every node rewritten, so shared subterms (the `ite`
/// joins) are visited once. Iterative (conditions can be deep).
fn replace_terms(terms: &mut Terms, t: TermId, memo: &mut HashMap<TermId, TermId>) -> TermId {
    // Children first; a node already in `memo` (a replacement) is not
    // entered.
    let mut stack = vec![(t, false)];
    while let Some((x, expanded)) = stack.pop() {
        if memo.contains_key(&x) {
            continue;
        }
        let node = terms.node(x).clone();
        let kids = terms.children(&node);
        if !expanded {
            stack.push((x, true));
            // Reversed, so children are rebuilt left to right (as fresh
            // names were numbered before).
            stack.extend(kids.iter().rev().map(|k| (*k, false)));
            continue;
        }
        let new: Vec<TermId> = kids.iter().map(|k| memo[k]).collect();
        let r = if new == kids {
            x
        } else {
            crate::term::rebuild_public(terms, &node, &new)
        };
        memo.insert(x, r);
    }
    memo[&t]
}
