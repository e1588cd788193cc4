//! The looping condition φ^κ (TR Alg. 7, ISSTA §3.4): every iteration a
//! run makes satisfies the path condition of its backbone in the state it
//! starts from,
//!
//!   φ^κ ≡ ⋀ᵢ ∀τᵢ (0 ≤ τᵢ < κᵢ → ∃τ⃗₋ᵢ (0⃗ ≤ τ⃗₋ᵢ ≤ κ⃗₋ᵢ ∧ ∃κ⃗′ ≥ 0. θ^κ[κ⃗/τ⃗]⟨pcᵢ⟩)),
//!
//! with τᵢ the iteration variable of κᵢ and κ⃗′ the counters of inner
//! loops (they differ per iteration, so they are bound inside). The Table
//! 1 selectors' constraints are conjoined.
//!
//! Also here: the state at the start of an iteration, θ^κ[κ⃗/τ⃗]⟨·⟩,
//! which the Table 2 ∃p form and the inference use too.

use super::backbones::Run;
use super::{Key, LoopVars};
use crate::nc::Engine;
use crate::term::{Subst, TermId, Var, VarKind};
use std::collections::BTreeMap;

/// The looping condition and its parts kept for an enclosing loop's
/// inference: the τ⃗ and γᵢ = ∃κ⃗′. θ^κ[κ⃗/τ⃗]⟨pcᵢ⟩.
pub(super) struct Looping {
    pub condition: TermId,
    pub taus: Vec<Var>,
    pub gammas: Vec<TermId>,
}

/// φ^κ for the body backbones `runs` with `counters`, in the iterated
/// state `theta`.
pub(super) fn looping_condition(
    eng: &mut Engine,
    runs: &[Run],
    theta: &BTreeMap<Key, TermId>,
    counters: &[Var],
    vars: &LoopVars,
) -> Looping {
    // τₙ iterates alongside κₙ: the same number, so conditions read easily.
    let taus: Vec<Var> = counters
        .iter()
        .map(|k| eng.terms.new_alongside(*k, "τ"))
        .collect();
    let at_tau = theta_at(eng, theta, counters, &taus, vars);
    let mut gammas = Vec::new();
    let mut psis = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        crate::deadline::check();
        let gamma = gamma(eng, r, &at_tau);
        gammas.push(gamma);
        psis.push(every_iteration(eng, i, gamma, counters, &taus));
    }
    psis.extend(vars.selectors.iter().map(|(_, c)| *c));
    Looping {
        condition: eng.terms.and(psis),
        taus,
        gammas,
    }
}

/// γᵢ: backbone `r`'s path condition in the state after τ⃗ iterations,
/// with the inner counters and the selectors of that state bound inside.
fn gamma(eng: &mut Engine, r: &Run, at_tau: &AtIteration) -> TermId {
    let zero = eng.terms.int(0);
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
    eng.terms.exists(inner, body_i)
}

/// ∀τᵢ (0 ≤ τᵢ < κᵢ → ∃τ⃗₋ᵢ (0 ≤ τⱼ ≤ κⱼ ∧ γᵢ)): every iteration of
/// backbone i satisfies γᵢ, whatever the other backbones did before it.
fn every_iteration(
    eng: &mut Engine,
    i: usize,
    gamma: TermId,
    counters: &[Var],
    taus: &[Var],
) -> TermId {
    let zero = eng.terms.int(0);
    let mut bounds = Vec::new();
    let mut others = Vec::new();
    for (j, (k, t)) in counters.iter().zip(taus).enumerate() {
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
    eng.terms.forall(vec![taus[i]], imp)
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
pub(super) struct AtIteration {
    pub subst: Subst,
    pub selectors: Vec<Var>,
    pub constraints: Vec<TermId>,
}

pub(super) fn theta_at(
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
        let v = eng.terms.new_alongside(*l, "ℓ′");
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
pub(super) fn at_fresh_taus(
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
