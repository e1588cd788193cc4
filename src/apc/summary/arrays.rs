//! TR Table 2 for writes at cells that are *not* an invertible function of
//! the iteration (TR Example 4: `A[id][j] = …` with `id` read from the
//! input in each iteration). The iterated value is the TR's
//!   λx⃗. ite(∃p Ω₁, W₁, … ite(∃p Ωₛ, Wₛ, A₀(x⃗)))
//! with p the iteration (0 ≤ p < Σκ), Ωₘ "iteration p ran write m's
//! backbone, and write m hit x⃗", and the last-writer condition χₘ: no
//! later write (in iteration p, or in any later iteration) hit x⃗.
//!
//! The conditions of an `ite` must be exact, not merely necessary, or the
//! value of an untouched cell would be forced to a written one. So:
//! - everything is taken in the state at the start of iteration p, which
//!   must depend on the counters only through their sum p;
//! - "iteration p ran backbone j" is a quantifier-free necessary condition
//!   Dⱼ(p) (the conjuncts of its path condition that speak of p only), and
//!   the solver must prove the D's mutually exclusive: then Dⱼ(p) holds
//!   exactly when backbone j ran (one backbone runs per iteration, and it
//!   satisfies its D);
//! - a written value must not depend on p once the write's own index
//!   equations are used (x_k = ι(p) lets ι(p) be read as x_k): then Wₘ is
//!   a term over x⃗ alone, as in the TR's Example 4, where
//!   `B[id*(n+1)+j+2]` becomes B₀(x₁·(n+1) + x₂ + 2);
//! - when all writes store the same Wₘ, the last-writer condition is
//!   redundant and dropped (any writer of x⃗ stored the same value).
//!
//! Anything else (written values that read the array, values depending on
//! p, guards that are not exclusive) is ⋆.

use super::{Key, LoopVars, at_fresh_taus, replace_terms, sigma_subst};
use crate::apc::Engine;
use crate::smt::Answer;
use crate::term::{Node, Sort, Subst, TermId, Terms, Var, VarKind};
use num_bigint::BigInt;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// One write of an iteration of backbone `backbone`: the cells it hits
/// (a condition over x⃗ and p) and the value it stores (over x⃗ only).
struct Write {
    backbone: usize,
    region: TermId,
    value: TermId,
}

pub(super) fn iterate_array_regions(
    eng: &mut Engine,
    sym: TermId,
    vals: &[TermId],
    pcs: &[TermId],
    theta: &BTreeMap<Key, TermId>,
    counters: &[Var],
    vars: &LoopVars,
) -> Option<TermId> {
    let Node::Var(sym_var) = *eng.terms.node(sym) else {
        return None;
    };
    let Sort::Array(arity) = eng.terms.sort(sym) else {
        return None;
    };
    if vals.iter().all(|v| *v == sym) || vals.iter().any(|v| eng.terms.contains_star(*v)) {
        return None;
    }
    let (taus, at) = at_fresh_taus(eng, theta, counters, vars);
    let p = eng.terms.new_var(VarKind::Bound, "p");
    let pt = eng.terms.var(p);
    // A term of the body in the state at the start of iteration p; `None`
    // when it depends on more than p, or on something unknown.
    let in_p = |eng: &mut Engine, t: TermId| -> Option<TermId> {
        let t = at.subst.apply(&mut eng.terms, t);
        let t = sigma_subst(&mut eng.terms, t, &taus, Some(pt));
        let terms = &eng.terms;
        let bad = terms.contains_star(t)
            || terms.has_quantifier(t)
            || terms.mentions_any(t, &taus)
            || terms.mentions_any(t, &at.selectors)
            || terms.mentions_kind(t, |k| {
                matches!(
                    k,
                    VarKind::Counter | VarKind::FreshBool | VarKind::Artificial
                )
            });
        (!bad).then_some(t)
    };

    // The writes, per writing backbone in program order, over common x⃗.
    let xs: Vec<Var> = (0..arity)
        .map(|k| {
            eng.terms
                .new_var(VarKind::Bound, crate::apc::state::placeholder(arity, k))
        })
        .collect();
    let xts: Vec<TermId> = xs.iter().map(|x| eng.terms.var(*x)).collect();
    let untouched = eng.terms.select(sym, xts.clone());
    let mut writes: Vec<Write> = Vec::new();
    for (j, &v) in vals.iter().enumerate() {
        if v == sym {
            continue;
        }
        let Node::Lambda(own, body) = eng.terms.node(v).clone() else {
            return None;
        };
        if own.len() != xs.len() {
            return None;
        }
        let mut rename = Subst::new();
        for (o, x) in own.iter().zip(&xts) {
            rename.bind(*o, *x);
        }
        let mut cur = rename.apply(&mut eng.terms, body);
        let mut in_body = Vec::new(); // last write first
        while cur != untouched {
            let Node::Ite(c, w, rest) = eng.terms.node(cur).clone() else {
                return None;
            };
            if eng.terms.mentions(c, sym_var) || eng.terms.mentions(w, sym_var) {
                return None; // Table 2's cases 1–3: the value reads the array
            }
            in_body.push((c, w));
            cur = rest;
        }
        for (c, w) in in_body.into_iter().rev() {
            let region = in_p(eng, c)?;
            let value = in_p(eng, w)?;
            let value = free_of_p(&mut eng.terms, value, region, &xs, p)?;
            writes.push(Write {
                backbone: j,
                region,
                value,
            });
        }
    }
    if writes.is_empty() {
        return None;
    }

    // Dⱼ(p): what each backbone's path condition says about iteration p.
    let guards: Vec<TermId> = pcs
        .iter()
        .map(|&pc| {
            let parts = match eng.terms.node(pc) {
                Node::And(cs) => cs.to_vec(),
                _ => vec![pc],
            };
            let kept: Vec<TermId> = parts.into_iter().filter_map(|c| in_p(eng, c)).collect();
            eng.terms.and(kept)
        })
        .collect();
    if !exclusive(eng, &guards, &writes) {
        return None;
    }

    let zero = eng.terms.int(0);
    let total: Vec<(BigInt, TermId)> = counters
        .iter()
        .map(|k| (BigInt::from(1), eng.terms.var(*k)))
        .collect();
    let total = eng.terms.sum(BigInt::from(0), total);
    // Iteration p hits x⃗ (through any write of the backbone that ran).
    let mut hits = Vec::new();
    for (j, &guard) in guards.iter().enumerate() {
        let regions: Vec<TermId> = writes
            .iter()
            .filter(|w| w.backbone == j)
            .map(|w| w.region)
            .collect();
        if !regions.is_empty() {
            let any = eng.terms.or(regions);
            hits.push(eng.terms.and2(guard, any));
        }
    }
    let hit = eng.terms.or(hits);
    let in_range = |terms: &mut Terms, q: TermId| {
        let lo = terms.le(zero, q);
        let hi = terms.lt(q, total);
        terms.and2(lo, hi)
    };
    let fresh_p = |terms: &mut Terms, t: TermId, name: &str| {
        let q = terms.new_var(VarKind::Bound, name);
        let qt = terms.var(q);
        let mut s = Subst::new();
        s.bind(p, qt);
        (q, qt, s.apply(terms, t))
    };

    let same_value = writes.iter().all(|w| w.value == writes[0].value);
    let body = if same_value {
        // Any writer of x⃗ stored W(x⃗): no last-writer condition needed.
        // When an index equation of the only write gives p as a function
        // of x⃗ (a monotone index: the TR's simplification), that p is the
        // only candidate and the ∃ goes.
        let range = in_range(&mut eng.terms, pt);
        let omega = eng.terms.and2(range, hit);
        let solved = match &writes[..] {
            [w] => solve_for_p(&mut eng.terms, w.region, &xs, p),
            _ => None,
        };
        let written = match solved {
            Some(px) => {
                let mut s = Subst::new();
                s.bind(p, px);
                s.apply(&mut eng.terms, omega)
            }
            None => {
                let (q, _, omega) = fresh_p(&mut eng.terms, omega, "p");
                eng.terms.exists(vec![q], omega)
            }
        };
        eng.terms.ite(written, writes[0].value, untouched)
    } else {
        // ite(∃p Ωₘ, Wₘ, …): exactly one write is the last writer of x⃗.
        let mut acc = untouched;
        for (m, w) in writes.iter().enumerate().rev() {
            let later_here: Vec<TermId> = writes[m + 1..]
                .iter()
                .filter(|l| l.backbone == w.backbone)
                .map(|l| l.region)
                .collect();
            let later_here = eng.terms.or(later_here);
            let not_later_here = eng.terms.not(later_here);
            // χ: ∀q (p < q < Σκ → ¬hit(q, x⃗)).
            let (q, qt, hit_q) = fresh_p(&mut eng.terms, hit, "q");
            let after = eng.terms.lt(pt, qt);
            let before_end = eng.terms.lt(qt, total);
            let window = eng.terms.and2(after, before_end);
            let no_hit = eng.terms.not(hit_q);
            let chi_body = eng.terms.implies(window, no_hit);
            let chi = eng.terms.forall(vec![q], chi_body);
            let range = in_range(&mut eng.terms, pt);
            let omega = eng.terms.and(vec![
                range,
                guards[w.backbone],
                w.region,
                not_later_here,
                chi,
            ]);
            let (p_m, _, omega) = fresh_p(&mut eng.terms, omega, "p");
            let last = eng.terms.exists(vec![p_m], omega);
            acc = eng.terms.ite(last, w.value, acc);
        }
        acc
    };
    eng.stats.region_array_summaries += 1;
    Some(eng.terms.lambda(xs, body))
}

/// The written value without p: inside the write's region each index
/// equation x_k = ι(p) holds, so ι(p) may be read as x_k; if p itself is
/// left and an index equation can be solved for p, p is replaced.
/// `None` if the value still depends on p.
fn free_of_p(
    terms: &mut Terms,
    value: TermId,
    region: TermId,
    xs: &[Var],
    p: Var,
) -> Option<TermId> {
    if !terms.mentions(value, p) {
        return Some(value);
    }
    let mut as_x: HashMap<TermId, TermId> = HashMap::default();
    for (x, iota) in index_equations(terms, region, xs) {
        if terms.mentions(iota, p) {
            as_x.insert(iota, x);
        }
    }
    let mut value = replace_terms(terms, value, &mut as_x);
    if terms.mentions(value, p)
        && let Some(solved) = solve_for_p(terms, region, xs, p)
    {
        let mut s = Subst::new();
        s.bind(p, solved);
        value = s.apply(terms, value);
    }
    (!terms.mentions(value, p)).then_some(value)
}

/// The equations x_k = ι among the conjuncts of `region` (ι free of x⃗), as
/// (x_k, ι).
fn index_equations(terms: &mut Terms, region: TermId, xs: &[Var]) -> Vec<(TermId, TermId)> {
    let conjuncts = match terms.node(region) {
        Node::And(cs) => cs.to_vec(),
        _ => vec![region],
    };
    let xts: Vec<TermId> = xs.iter().map(|x| terms.var(*x)).collect();
    let mut out = Vec::new();
    for c in conjuncts {
        let Node::Eq(d, _) = *terms.node(c) else {
            continue;
        };
        let (c0, summands) = terms.linear(d);
        let Some((coef, x)) = summands.iter().find(|(_, t)| xts.contains(t)).cloned() else {
            continue;
        };
        if coef != BigInt::from(1) && coef != BigInt::from(-1) {
            continue;
        }
        let rest: Vec<(BigInt, TermId)> = summands.into_iter().filter(|(_, t)| *t != x).collect();
        let r = terms.sum(c0, rest);
        // x + r = 0 (coefficient 1) or −x + r = 0: ι = −r or r.
        let iota = if coef == BigInt::from(1) {
            terms.neg(r)
        } else {
            r
        };
        if !terms.mentions_any(iota, xs) {
            out.push((x, iota));
        }
    }
    out
}

/// p as a function of x⃗, from an index equation x_k = s·p + b of `region`
/// with s = ±1 and b free of p: p = s·(x_k − b).
fn solve_for_p(terms: &mut Terms, region: TermId, xs: &[Var], p: Var) -> Option<TermId> {
    let pt = terms.var(p);
    for (x, iota) in index_equations(terms, region, xs) {
        let (b0, parts) = terms.linear(iota);
        let Some((s, _)) = parts.iter().find(|(_, t)| *t == pt).cloned() else {
            continue;
        };
        if s != BigInt::from(1) && s != BigInt::from(-1) {
            continue;
        }
        let others: Vec<(BigInt, TermId)> = parts.into_iter().filter(|(_, t)| *t != pt).collect();
        let b = terms.sum(b0, others);
        if !terms.mentions(b, p) {
            let diff = terms.sub(x, b);
            return Some(terms.scale(s, diff));
        }
    }
    None
}

/// Whether the guards of the writing backbones exclude every other
/// backbone's (one solver query per writer; `false` if any is not UNSAT).
fn exclusive(eng: &mut Engine, guards: &[TermId], writes: &[Write]) -> bool {
    if guards.len() < 2 {
        return true;
    }
    let mut writers: Vec<usize> = writes.iter().map(|w| w.backbone).collect();
    writers.dedup();
    let checks: Vec<TermId> = writers
        .iter()
        .map(|&j| {
            let others: Vec<TermId> = (0..guards.len())
                .filter(|k| *k != j)
                .map(|k| guards[k])
                .collect();
            let any = eng.terms.or(others);
            eng.terms.and2(guards[j], any)
        })
        .collect();
    if checks.iter().all(|c| eng.terms.as_bool(*c) == Some(false)) {
        return true;
    }
    if !eng.solver.is_available() {
        return false;
    }
    let script = crate::term::to_smtlib_batch(&eng.terms, &checks);
    let answers = eng.solver.run_batch(&script, checks.len());
    answers.len() == checks.len() && answers.iter().all(|a| *a == Answer::Unsat)
}
