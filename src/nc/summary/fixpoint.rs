//! The iterated state θ^κ as a least fixpoint (TR Alg. 6): every slot
//! starts at ⋆ and gets a value once a rule applies to it, given the
//! values found so far; the rounds stop when nothing changes. Each slot
//! is set at most once.
//!
//! Scalar rules (ISSTA §3.3, the verified core of TR Table 1), with
//! eᵢ = θᵢ(a) and θ⟨·⟩ the current iterated state:
//! 1. no backbone changes a: a₀;
//! 2. each leaves a or adds an iteration-invariant dᵢ: a₀ + Σ θ⟨dᵢ⟩·κᵢ;
//! 3. the writers all set the same invariant d: ite(Σ κ_w > 0, θ⟨d⟩, a₀);
//! 4. a single writer sets d depending on its own counter only:
//!    ite(κᵢ > 0, θ⟨d⟩[κᵢ/κᵢ−1], a₀);
//!
//! and Table 1's overwrite chains (several writers, each over its own
//! counter) with an existential last-writer selector ℓ. Arrays follow
//! Table 2 (`arrays`). Anything else stays ⋆.
//!
//! Nested loops (TR Alg. 5): in the values of a body backbone, an inner
//! loop's total count Σκ′ is replaced by the artificial symbol ν_u, other
//! occurrences of inner counters by ⋆ (`sigma_subst`); ν_u's own iterated
//! value comes from the inference of TR Alg. 8 (`inference`).

use super::backbones::Run;
use super::{Key, LoopVars, arrays, inference, star_array};
use crate::ir::LoopId;
use crate::nc::Engine;
use crate::nc::state::Slot;
use crate::term::{Node, Numbered, Subst, TermId, Terms, Var, VarKind};
use num_bigint::BigInt;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// The least fixpoint: θ^κ for every slot and ν, the loop's selectors and
/// ν symbols, and the inner-loop counts that were inferred.
pub(super) struct Fixpoint {
    pub theta: BTreeMap<Key, TermId>,
    pub vars: LoopVars,
    pub inferred: Vec<(LoopId, TermId)>,
}

/// Computes θ^κ for the executed body backbones `runs` with `counters`.
pub(super) fn least_fixpoint(eng: &mut Engine, runs: &[Run], counters: &[Var]) -> Fixpoint {
    let nus = inner_count_symbols(eng, runs);
    let values = body_values(eng, runs, &nus);
    let theta = initial_theta(eng, &nus);
    let mut fp = Fixpoint {
        theta,
        // From here on the ν live in `vars` (with the selectors found).
        vars: LoopVars {
            selectors: Vec::new(),
            nus,
        },
        inferred: Vec::new(),
    };
    let pcs: Vec<TermId> = runs.iter().map(|r| r.pc).collect();
    loop {
        let mut changed = round(eng, &mut fp, &values, &pcs, counters);
        if eng.opts.counter_inference {
            changed |= infer_inner_counts(eng, &mut fp, runs, counters);
        }
        if !changed {
            return fp;
        }
    }
}

/// TR Alg. 5: one artificial symbol ν_u per inner loop u of the body.
fn inner_count_symbols(eng: &mut Engine, runs: &[Run]) -> BTreeMap<LoopId, Var> {
    let mut nus: BTreeMap<LoopId, Var> = BTreeMap::new();
    for r in runs {
        for u in &r.inner {
            nus.entry(u.lp)
                .or_insert_with(|| eng.terms.new_var(VarKind::Artificial, format!("ν{}", u.lp)));
        }
    }
    nus
}

/// Each backbone's final state with inner counts made ν (or ⋆ without
/// inference).
fn body_values(
    eng: &mut Engine,
    runs: &[Run],
    nus: &BTreeMap<LoopId, Var>,
) -> Vec<BTreeMap<Slot, TermId>> {
    let mut values = Vec::new();
    for r in runs {
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
    values
}

/// Everything ⋆ (λx⃗.⋆ for arrays): the bottom of the fixpoint.
fn initial_theta(eng: &mut Engine, nus: &BTreeMap<LoopId, Var>) -> BTreeMap<Key, TermId> {
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
    theta
}

/// One round over the slots still ⋆, each against the iterated state at
/// the start of the round; whether one got a value.
fn round(
    eng: &mut Engine,
    fp: &mut Fixpoint,
    values: &[BTreeMap<Slot, TermId>],
    pcs: &[TermId],
    counters: &[Var],
) -> bool {
    let mut changed = false;
    let subst = theta_subst(eng, &fp.theta, &fp.vars.nus);
    let slots = eng.slots.clone();
    for &s in &slots.all {
        crate::deadline::tick();
        if !eng.terms.contains_star(fp.theta[&Key::Slot(s)]) {
            continue;
        }
        let sym = eng.terms_var_of(s);
        let vals: Vec<TermId> = values.iter().map(|v| v[&s]).collect();
        let e = match iterate(&mut eng.terms, sym, &vals, &subst, counters) {
            Some(Iterated::Value(e)) => e,
            Some(Iterated::Chain(writers)) => {
                let (e, selector, constraint) = chain(eng, sym, &writers, counters);
                if !eng.terms.contains_star(e) {
                    fp.vars.selectors.push((selector, constraint));
                }
                e
            }
            None => {
                let writes = arrays::LoopWrites {
                    sym,
                    vals: &vals,
                    pcs,
                    theta: &fp.theta,
                    counters,
                    vars: &fp.vars,
                };
                match arrays::iterate_array_writes(eng, &writes) {
                    Some(e) => e,
                    None => continue,
                }
            }
        };
        if !eng.terms.contains_star(e) {
            fp.theta.insert(Key::Slot(s), e);
            changed = true;
        }
    }
    changed
}

/// TR Alg. 8 for every ν still ⋆; whether one was inferred.
fn infer_inner_counts(eng: &mut Engine, fp: &mut Fixpoint, runs: &[Run], counters: &[Var]) -> bool {
    let mut changed = false;
    let inner: Vec<LoopId> = fp.vars.nus.keys().copied().collect();
    for u in inner {
        if !eng.terms.is_star(fp.theta[&Key::Nu(u)]) {
            continue;
        }
        if let Some(f) = inference::infer_count(eng, u, runs, &fp.theta, counters, &fp.vars) {
            fp.theta.insert(Key::Nu(u), f);
            fp.inferred.push((u, f));
            changed = true;
        }
    }
    changed
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

/// How the backbones change a scalar: the writers that add an invariant
/// step (progressions) and those that overwrite it.
struct Changes {
    progressions: Vec<(usize, TermId)>,
    overwrites: Vec<(usize, TermId)>,
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
        return arrays::iterate_array(terms, sym, vals, theta, counters).map(Iterated::Value);
    }
    let changes = classify(terms, sym, sym_var, vals)?;
    if changes.overwrites.is_empty() {
        return progression(terms, sym, &changes.progressions, theta, counters);
    }
    if !changes.progressions.is_empty() {
        return None;
    }
    let tds: Vec<(usize, TermId)> = changes
        .overwrites
        .iter()
        .map(|&(i, d)| (i, theta.apply(terms, d)))
        .collect();
    overwrite(terms, sym, &tds, counters)
}

/// Splits the backbones that change `sym` into progressions (a₀ + d, d
/// free of a₀) and overwrites (free of a₀); `None` for anything else.
fn classify(terms: &mut Terms, sym: TermId, sym_var: Var, vals: &[TermId]) -> Option<Changes> {
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
    Some(Changes {
        progressions,
        overwrites,
    })
}

/// Whether a value is the same in every iteration: known, and free of
/// counters.
fn invariant(terms: &Terms, t: TermId) -> bool {
    !terms.contains_star(t) && !terms.mentions_kind(t, |k| k == VarKind::Counter)
}

/// Rule 2: a₀ + Σ θ⟨dᵢ⟩·κᵢ.
fn progression(
    terms: &mut Terms,
    sym: TermId,
    progressions: &[(usize, TermId)],
    theta: &Subst,
    counters: &[Var],
) -> Option<Iterated> {
    let mut summands = vec![(BigInt::from(1), sym)];
    for &(i, d) in progressions {
        let td = theta.apply(terms, d);
        if !invariant(terms, td) {
            return None;
        }
        let k = terms.var(counters[i]);
        summands.push((BigInt::from(1), terms.mul(td, k)));
    }
    Some(Iterated::Value(terms.sum(BigInt::from(0), summands)))
}

/// Rules 3 and 4 and Table 1's chains, for the writers' values `tds`
/// (θ⟨·⟩ applied).
fn overwrite(
    terms: &mut Terms,
    sym: TermId,
    tds: &[(usize, TermId)],
    counters: &[Var],
) -> Option<Iterated> {
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
        let last = last_write(terms, td, i, counters)?;
        let k = terms.var(counters[i]);
        let c = terms.lt(zero, k);
        return Some(Iterated::Value(terms.ite(c, last, sym)));
    }
    // Table 1's overwrite chain: several writers storing values that each
    // depend on their own counter only. Which one wrote last is chosen by an
    // existential selector ℓ (see `Iterated`), constrained by the caller.
    let mut lasts = Vec::new();
    for &(i, td) in tds {
        lasts.push((i, last_write(terms, td, i, counters)?));
    }
    Some(Iterated::Chain(lasts))
}

/// The value backbone `i` stored in its last iteration, td[κᵢ/κᵢ−1];
/// `None` if it depends on ⋆ or on another backbone's counter.
fn last_write(terms: &mut Terms, td: TermId, i: usize, counters: &[Var]) -> Option<TermId> {
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
    Some(back.apply(terms, td))
}

/// ite(ℓ = j, lastⱼ, …, a₀) with a fresh selector ℓ and its constraint
/// (ℓ = 0 ∧ Σκ_w = 0) ∨ ⋁ⱼ (ℓ = j ∧ κⱼ > 0); backbones are numbered from 1.
fn chain(
    eng: &mut Engine,
    sym: TermId,
    writers: &[(usize, TermId)],
    counters: &[Var],
) -> (TermId, Var, TermId) {
    let sel = eng.fresh_numbered(Numbered::Selector);
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

/// ς-substitution of TR Alg. 5: Σ of the inner counters ⇝ ν; any other
/// occurrence of an inner counter makes the term ⋆. Without `nu` (no
/// inference), every term mentioning an inner counter is ⋆.
pub(super) fn sigma_subst(
    terms: &mut Terms,
    t: TermId,
    counters: &[Var],
    nu: Option<TermId>,
) -> TermId {
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
        Node::Add(c0, xs) => match common_coefficient(terms, xs, cs) {
            Some(c) => {
                // Σ c·κ′ with one common coefficient over all inner counters ⇝ c·ν.
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
            }
            None => rebuild_changed(terms, t, &node, cs, nu, memo),
        },
        _ => rebuild_changed(terms, t, &node, cs, nu, memo),
    };
    memo.insert(t, r);
    r
}

/// The coefficient every inner counter has in a sum, if they all occur
/// with the same one.
fn common_coefficient(terms: &Terms, xs: &[(BigInt, TermId)], cs: &[Var]) -> Option<BigInt> {
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
        Some(coef[0].clone().unwrap_or_default())
    } else {
        None
    }
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
