//! TR Table 2: the iterated value of an array written in a loop body, in
//! three forms, tried in this order:
//! - `iterate_array`: one writing backbone whose writes move through the
//!   array at a monotone, invertible step (TR Examples 1 and 2);
//! - `iterate_array_visits`: several backbones, each cell visited in one
//!   iteration only (TR Example 3);
//! - `iterate_array_regions`: cells that are not an invertible function of
//!   the iteration (TR Example 4: `A[id][j] = …` with `id` read from the
//!   input in each iteration), as the TR's
//!   λx⃗. ite(∃p Ω₁, W₁, … ite(∃p Ωₛ, Wₛ, A₀(x⃗)))
//!   with p the iteration (0 ≤ p < Σκ), Ωₘ "iteration p ran write m's
//!   backbone, and write m hit x⃗", and the last-writer condition χₘ: no
//!   later write (in iteration p, or in any later iteration) hit x⃗.
//!
//! The conditions of an `ite` must be exact, not merely necessary, or the
//! value of an untouched cell would be forced to a written one. So, for
//! the ∃p form:
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
//!   redundant and dropped (any writer of x⃗ stored the same value), and
//!   an index equation that can be solved for p removes the ∃ (the TR's
//!   monotone-index simplification, TR Examples 5 and 6).
//!
//! Anything else (written values that read the array, values depending on
//! p, guards that are not exclusive) is ⋆.

use super::{Key, LoopVars, at_fresh_taus, sigma_subst};
use crate::nc::Engine;
use crate::smt::Answer;
use crate::term::{Node, Sort, Subst, TermId, Terms, Var, VarKind};
use num_bigint::BigInt;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// What a loop's body backbones do to one array slot: its symbol A₀, its
/// value after each backbone, the backbones' path conditions, and the
/// iterated state so far.
#[derive(Clone, Copy)]
pub(super) struct LoopWrites<'a> {
    pub sym: TermId,
    pub vals: &'a [TermId],
    pub pcs: &'a [TermId],
    pub theta: &'a BTreeMap<Key, TermId>,
    pub counters: &'a [Var],
    pub vars: &'a LoopVars,
}

impl LoopWrites<'_> {
    /// A₀'s variable and the state at the start of iteration p, if some
    /// backbone writes A and no value is ⋆.
    fn at_iteration_p(&self, eng: &mut Engine) -> Option<(Var, AtIterationP)> {
        let Node::Var(sym_var) = *eng.terms.node(self.sym) else {
            return None;
        };
        let (sym, vals) = (self.sym, self.vals);
        if vals.iter().all(|v| *v == sym) || vals.iter().any(|v| eng.terms.contains_star(*v)) {
            return None;
        }
        let at_p = AtIterationP::new(eng, self.theta, self.counters, self.vars);
        Some((sym_var, at_p))
    }
}

/// The iterated value of an array written at cells that are not one
/// monotone step of a single writer: the visit form, else the ∃p form
/// (both speak of the same state at the start of iteration p).
pub(super) fn iterate_array_writes(eng: &mut Engine, lw: &LoopWrites) -> Option<TermId> {
    let (sym_var, at_p) = lw.at_iteration_p(eng)?;
    iterate_array_visits(eng, lw, sym_var, &at_p)
        .or_else(|| iterate_array_regions(eng, lw, sym_var, &at_p))
}

/// The state at the start of iteration p (the p-th iteration overall,
/// whichever backbones ran before): θ^κ after τ⃗ iterations with Στ⃗ = p.
struct AtIterationP {
    taus: Vec<Var>,
    at: super::AtIteration,
    p: Var,
    pt: TermId,
}

impl AtIterationP {
    fn new(
        eng: &mut Engine,
        theta: &BTreeMap<Key, TermId>,
        counters: &[Var],
        vars: &LoopVars,
    ) -> AtIterationP {
        let (taus, at) = at_fresh_taus(eng, theta, counters, vars);
        let p = eng.terms.new_var(VarKind::Bound, "p");
        let pt = eng.terms.var(p);
        AtIterationP { taus, at, p, pt }
    }

    /// A term of the body in the state at the start of iteration p; `None`
    /// when it depends on more than p (a counter on its own, a selector, an
    /// inner loop), or on something unknown (⋆, a ⋆ predicate).
    fn term(&self, eng: &mut Engine, t: TermId) -> Option<TermId> {
        let t = self.at.subst.apply(&mut eng.terms, t);
        let t = sigma_subst(&mut eng.terms, t, &self.taus, Some(self.pt));
        let terms = &eng.terms;
        let bad = terms.contains_star(t)
            || terms.has_quantifier(t)
            || terms.mentions_any(t, &self.taus)
            || terms.mentions_any(t, &self.at.selectors)
            || terms.mentions_kind(t, |k| {
                matches!(
                    k,
                    VarKind::Counter | VarKind::FreshBool | VarKind::Artificial
                )
            });
        (!bad).then_some(t)
    }
}

/// One write of an iteration of backbone `backbone`: the cells it hits
/// (a condition over x⃗ and p) and the value it stores (over x⃗ only).
struct Write {
    backbone: usize,
    region: TermId,
    value: TermId,
}

fn iterate_array_regions(
    eng: &mut Engine,
    lw: &LoopWrites,
    sym_var: Var,
    at_p: &AtIterationP,
) -> Option<TermId> {
    let Sort::Array(arity) = eng.terms.sort(lw.sym) else {
        return None;
    };
    // The writes, per writing backbone in program order, over common x⃗.
    let xs: Vec<Var> = (0..arity)
        .map(|k| {
            eng.terms
                .new_var(VarKind::Bound, crate::nc::state::placeholder(arity, k))
        })
        .collect();
    let xts: Vec<TermId> = xs.iter().map(|x| eng.terms.var(*x)).collect();
    let untouched = eng.terms.select(lw.sym, xts.clone());
    let writes = region_writes(eng, lw, sym_var, at_p, &xs, untouched)?;
    let guards = iteration_guards(eng, lw.pcs, at_p);
    if !exclusive(eng, &guards, &writes) {
        return None;
    }
    let r = Regions::new(eng, lw.counters, at_p, &guards, &writes, untouched);
    let body = if writes.iter().all(|w| w.value == writes[0].value) {
        r.one_value(eng, &writes, &xs)
    } else {
        r.last_writers(eng, &writes, &guards)
    };
    eng.stats.region_array_summaries += 1;
    Some(eng.terms.lambda(xs, body))
}

/// Every write of every writing backbone, in program order, as a region
/// over x⃗ and p and a value over x⃗; `None` when a write is outside the
/// rule (a value reading the array, one depending on p, or on more than p).
fn region_writes(
    eng: &mut Engine,
    lw: &LoopWrites,
    sym_var: Var,
    at_p: &AtIterationP,
    xs: &[Var],
    untouched: TermId,
) -> Option<Vec<Write>> {
    let xts: Vec<TermId> = xs.iter().map(|x| eng.terms.var(*x)).collect();
    let mut writes: Vec<Write> = Vec::new();
    for (j, &v) in lw.vals.iter().enumerate() {
        if v == lw.sym {
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
            let region = at_p.term(eng, c)?;
            let value = at_p.term(eng, w)?;
            let value = free_of_p(&mut eng.terms, value, region, xs, at_p.p)?;
            writes.push(Write {
                backbone: j,
                region,
                value,
            });
        }
    }
    (!writes.is_empty()).then_some(writes)
}

/// Dⱼ(p): what each backbone's path condition says about iteration p
/// alone (the conjuncts that speak of more are dropped: still necessary).
fn iteration_guards(eng: &mut Engine, pcs: &[TermId], at_p: &AtIterationP) -> Vec<TermId> {
    pcs.iter()
        .map(|&pc| {
            let parts = match eng.terms.node(pc) {
                Node::And(cs) => cs.to_vec(),
                _ => vec![pc],
            };
            let kept: Vec<TermId> = parts
                .into_iter()
                .filter_map(|c| at_p.term(eng, c))
                .collect();
            eng.terms.and(kept)
        })
        .collect()
}

/// What the ∃p form is built from: p, the number of iterations Σκ, and
/// "iteration p hits x⃗" (through any write of the backbone that ran).
struct Regions {
    p: Var,
    pt: TermId,
    zero: TermId,
    total: TermId,
    hit: TermId,
    untouched: TermId,
}

impl Regions {
    fn new(
        eng: &mut Engine,
        counters: &[Var],
        at_p: &AtIterationP,
        guards: &[TermId],
        writes: &[Write],
        untouched: TermId,
    ) -> Regions {
        let zero = eng.terms.int(0);
        let total: Vec<(BigInt, TermId)> = counters
            .iter()
            .map(|k| (BigInt::from(1), eng.terms.var(*k)))
            .collect();
        let total = eng.terms.sum(BigInt::from(0), total);
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
        Regions {
            p: at_p.p,
            pt: at_p.pt,
            zero,
            total,
            hit,
            untouched,
        }
    }

    /// 0 ≤ q < Σκ.
    fn in_range(&self, terms: &mut Terms, q: TermId) -> TermId {
        let lo = terms.le(self.zero, q);
        let hi = terms.lt(q, self.total);
        terms.and2(lo, hi)
    }

    /// A fresh copy q of p and `t` with p renamed to q.
    fn fresh_p(&self, terms: &mut Terms, t: TermId, name: &str) -> (Var, TermId, TermId) {
        let q = terms.new_var(VarKind::Bound, name);
        let qt = terms.var(q);
        let mut s = Subst::new();
        s.bind(self.p, qt);
        (q, qt, s.apply(terms, t))
    }

    /// Every write stores the same W(x⃗): ite(∃p. 0 ≤ p < Σκ ∧ hit, W, A₀),
    /// with no last-writer condition (any writer of x⃗ stored W). When an
    /// index equation of the only write gives p as a function of x⃗ (a
    /// monotone index: the TR's simplification), that p is the only
    /// candidate and the ∃ goes.
    fn one_value(&self, eng: &mut Engine, writes: &[Write], xs: &[Var]) -> TermId {
        let range = self.in_range(&mut eng.terms, self.pt);
        let omega = eng.terms.and2(range, self.hit);
        let solved = match writes {
            [w] => solve_for_p(&mut eng.terms, w.region, xs, self.p),
            _ => None,
        };
        let written = match solved {
            Some(px) => {
                let mut s = Subst::new();
                s.bind(self.p, px);
                s.apply(&mut eng.terms, omega)
            }
            None => {
                let (q, _, omega) = self.fresh_p(&mut eng.terms, omega, "p");
                eng.terms.exists(vec![q], omega)
            }
        };
        eng.terms.ite(written, writes[0].value, self.untouched)
    }

    /// ite(∃p Ωₘ, Wₘ, …): exactly one write is the last writer of x⃗.
    fn last_writers(&self, eng: &mut Engine, writes: &[Write], guards: &[TermId]) -> TermId {
        let mut acc = self.untouched;
        for (m, w) in writes.iter().enumerate().rev() {
            let later_here: Vec<TermId> = writes[m + 1..]
                .iter()
                .filter(|l| l.backbone == w.backbone)
                .map(|l| l.region)
                .collect();
            let later_here = eng.terms.or(later_here);
            let not_later_here = eng.terms.not(later_here);
            let chi = self.no_later_hit(&mut eng.terms);
            let range = self.in_range(&mut eng.terms, self.pt);
            let omega = eng.terms.and(vec![
                range,
                guards[w.backbone],
                w.region,
                not_later_here,
                chi,
            ]);
            let (p_m, _, omega) = self.fresh_p(&mut eng.terms, omega, "p");
            let last = eng.terms.exists(vec![p_m], omega);
            acc = eng.terms.ite(last, w.value, acc);
        }
        acc
    }

    /// χ: ∀q (p < q < Σκ → ¬hit(q, x⃗)): no later iteration hits x⃗.
    fn no_later_hit(&self, terms: &mut Terms) -> TermId {
        let (q, qt, hit_q) = self.fresh_p(terms, self.hit, "q");
        let after = terms.lt(self.pt, qt);
        let before_end = terms.lt(qt, self.total);
        let window = terms.and2(after, before_end);
        let no_hit = terms.not(hit_q);
        let chi_body = terms.implies(window, no_hit);
        terms.forall(vec![q], chi_body)
    }
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
    let mut value = terms.replace_subterms(value, &mut as_x);
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
    let script = crate::smt::smtlib::batch(&eng.terms, &checks);
    let answers = eng.solver.run_batch(&script, checks.len());
    answers.len() == checks.len() && answers.iter().all(|a| *a == Answer::Unsat)
}

/// TR Table 2 for one writing backbone πᵢ whose writes all move through
/// the array at the same monotone, invertible step: in each write m the
/// moving index component is bₘ + s·κᵢ (s = ±1, the bₘ differing by
/// constants) and the other components are invariant. Write m hits cell x
/// in iteration pₘ(x) = s·(xⱼ − bₘ); the last writer of x is the valid
/// write (0 ≤ pₘ(x) < κᵢ) with the latest iteration, ties going to the
/// later write of the body. So, with the writes in that priority order:
///   λx⃗. ite(valid₁, θ⟨w₁⟩[κᵢ/p₁(x)], ite(valid₂, …, A₀(x⃗))).
/// TR Examples 1 and 2 are such loops. Written values that read the array
/// (Table 2's cases 1–3), several writing backbones, or indices that are
/// not of this shape give `None`: the next form is tried.
pub(super) fn iterate_array(
    terms: &mut Terms,
    sym: TermId,
    vals: &[TermId],
    theta: &Subst,
    counters: &[Var],
) -> Option<TermId> {
    let Node::Var(sym_var) = *terms.node(sym) else {
        return None;
    };
    let writers: Vec<(usize, TermId)> = vals
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, v)| *v != sym)
        .collect();
    let [(i, v)] = writers[..] else { return None };
    let Node::Lambda(xs, body) = terms.node(v).clone() else {
        return None;
    };
    let xts: Vec<TermId> = xs.iter().map(|x| terms.var(*x)).collect();
    // The writes, last one outermost: ite(c_r, w_r, … ite(c_1, w_1, A₀(x⃗))).
    let mut writes: Vec<(TermId, TermId)> = Vec::new();
    let mut cur = body;
    let base_read = terms.select(sym, xts.clone());
    while cur != base_read {
        let Node::Ite(c, w, rest) = terms.node(cur).clone() else {
            return None;
        };
        writes.push((c, w));
        cur = rest;
    }
    writes.reverse(); // program order
    let ki = counters[i];
    let kt = terms.var(ki);
    let others: Vec<Var> = counters.iter().copied().filter(|c| *c != ki).collect();
    let mut parsed = Vec::new(); // (index, value) per write, iterated
    for (c, w) in writes {
        let index = write_index(terms, c, &xs, &xts, theta)?;
        let w = theta.apply(terms, w);
        for t in index.iter().chain(std::iter::once(&w)) {
            if terms.contains_star(*t)
                || terms.mentions_any(*t, &others)
                || terms.mentions(*t, sym_var)
            {
                return None;
            }
        }
        parsed.push((index, w));
    }
    let (j, step, bases) = monotone_step(terms, &parsed, xs.len(), ki)?;
    let s = step;
    // Priority: latest iteration first (smallest s·(bₘ − b₀)), then later writes.
    let mut order: Vec<(BigInt, usize)> = Vec::new();
    for (m, b) in bases.iter().enumerate() {
        let d = terms.sub(*b, bases[0]);
        let off = terms.as_int(d)?.clone();
        order.push((&s * off, m));
    }
    order.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let zero = terms.int(0);
    let mut acc = base_read;
    for &(_, m) in order.iter().rev() {
        let (index, w) = &parsed[m];
        let diff = terms.sub(xts[j], bases[m]);
        let p = terms.scale(s.clone(), diff);
        let mut at_p = Subst::new();
        at_p.bind(ki, p);
        let written = at_p.apply(terms, *w);
        let mut conds = vec![terms.le(zero, p), terms.lt(p, kt)];
        for (k, ix) in index.iter().enumerate() {
            if k != j {
                conds.push(terms.eq(xts[k], *ix));
            }
        }
        let hit = terms.and(conds);
        acc = terms.ite(hit, written, acc);
    }
    Some(terms.lambda(xs.to_vec(), acc))
}

/// The writes' one moving index component j and their common step s = ±1
/// per iteration, with each write's base index bₘ (its index is
/// bₘ + s·κ); `None` when the writes do not move that way.
fn monotone_step(
    terms: &mut Terms,
    parsed: &[(Vec<TermId>, TermId)],
    dims: usize,
    ki: Var,
) -> Option<(usize, BigInt, Vec<TermId>)> {
    let kt = terms.var(ki);
    // One moving component j, the same step s in every write.
    let moving: Vec<usize> = (0..dims)
        .filter(|k| terms.mentions(parsed[0].0[*k], ki))
        .collect();
    let [j] = moving[..] else { return None };
    let mut step: Option<BigInt> = None;
    let mut bases = Vec::new();
    for (index, _) in parsed {
        for (k, ix) in index.iter().enumerate() {
            if k != j && terms.mentions(*ix, ki) {
                return None;
            }
        }
        let (_, summands) = terms.linear(index[j]);
        let s = summands
            .iter()
            .find(|(_, t)| *t == kt)
            .map(|(c, _)| c.clone())?;
        if (s != BigInt::from(1) && s != BigInt::from(-1)) || step.as_ref().is_some_and(|t| *t != s)
        {
            return None;
        }
        step = Some(s.clone());
        let sk = terms.scale(s, kt);
        let base = terms.sub(index[j], sk);
        if terms.mentions(base, ki) {
            return None;
        }
        bases.push(base);
    }
    Some((j, step?, bases))
}

/// TR Table 2, Example 3's shape: several backbones write the array, each
/// once per iteration, at an index that advances by the same step in every
/// iteration, whichever backbone runs (bᵢ + s·Σκ). Then cell x was visited
/// in exactly one iteration, p(x) = s·(x − b), and the backbone that ran in
/// it is the one whose path condition holds at that iteration — decidable
/// when the conditions and written values depend on the counters only
/// through their sum p:
///   λx⃗. ite(0 ≤ p(x) < Σκ ∧ x⃗₋ⱼ = ι⃗₋ⱼ, ite(pc₁(p), w₁(p), ite(pc₂(p), w₂(p), … A₀(x⃗))), A₀(x⃗)).
fn iterate_array_visits(
    eng: &mut Engine,
    lw: &LoopWrites,
    sym_var: Var,
    at_p: &AtIterationP,
) -> Option<TermId> {
    let (sym, vals, counters) = (lw.sym, lw.vals, lw.counters);
    let p = at_p.p;
    let mut xs_all: Option<Vec<Var>> = None;
    let mut cases = Vec::new(); // (condition at p, value at p) per writing backbone
    let mut shape: Option<(Vec<TermId>, usize, BigInt)> = None; // index at p, moving dim, step
    for (j, &v) in vals.iter().enumerate() {
        if v == sym {
            continue;
        }
        let visit = visit_of(eng, lw, j, sym_var, at_p, &mut xs_all)?;
        match &shape {
            None => shape = Some((visit.index.clone(), visit.moving, visit.step)),
            Some((ix, mm, st))
                if *ix == visit.index && *mm == visit.moving && *st == visit.step => {}
            _ => return None,
        }
        cases.push((visit.cond, visit.value));
    }
    let (index, m, step) = shape?;
    let xs = xs_all?;
    let xts: Vec<TermId> = xs.iter().map(|x| eng.terms.var(*x)).collect();
    // p(x) = s·(x_m − b) with b the index at p = 0.
    let mut at0 = Subst::new();
    let zero = eng.terms.int(0);
    at0.bind(p, zero);
    let base = at0.apply(&mut eng.terms, index[m]);
    let diff = eng.terms.sub(xts[m], base);
    let px = eng.terms.scale(step, diff);
    let mut to_x = Subst::new();
    to_x.bind(p, px);
    let old = eng.terms.select(sym, xts.clone());
    let mut inner = old;
    for (cond, w) in cases.into_iter().rev() {
        let c = to_x.apply(&mut eng.terms, cond);
        let w = to_x.apply(&mut eng.terms, w);
        inner = eng.terms.ite(c, w, inner);
    }
    let total: Vec<(BigInt, TermId)> = counters
        .iter()
        .map(|k| (BigInt::from(1), eng.terms.var(*k)))
        .collect();
    let total = eng.terms.sum(BigInt::from(0), total);
    let mut range = vec![eng.terms.le(zero, px), eng.terms.lt(px, total)];
    for (k, ix) in index.iter().enumerate() {
        if k != m {
            range.push(eng.terms.eq(xts[k], *ix));
        }
    }
    let visited = eng.terms.and(range);
    let body = eng.terms.ite(visited, inner, old);
    Some(eng.terms.lambda(xs, body))
}

/// One writing backbone's visit: the cell it writes in iteration p (its
/// index, the moving dimension and the step), the condition that the
/// backbone ran in iteration p, and the value written.
struct Visit {
    index: Vec<TermId>,
    moving: usize,
    step: BigInt,
    cond: TermId,
    value: TermId,
}

/// Backbone `j`'s visit; `None` outside the form (several writes in one
/// iteration, a value reading the array, no single moving dimension).
/// `xs_all` holds the first writer's placeholders, which every λ is read
/// over.
fn visit_of(
    eng: &mut Engine,
    lw: &LoopWrites,
    j: usize,
    sym_var: Var,
    at_p: &AtIterationP,
    xs_all: &mut Option<Vec<Var>>,
) -> Option<Visit> {
    let (p, pt) = (at_p.p, at_p.pt);
    let Node::Lambda(own, body) = eng.terms.node(lw.vals[j]).clone() else {
        return None;
    };
    let xs: Vec<Var> = xs_all.get_or_insert_with(|| own.to_vec()).clone();
    if xs.len() != own.len() {
        return None;
    }
    let xts: Vec<TermId> = xs.iter().map(|x| eng.terms.var(*x)).collect();
    let mut rename = Subst::new();
    for (o, x) in own.iter().zip(&xts) {
        rename.bind(*o, *x);
    }
    let body = rename.apply(&mut eng.terms, body);
    let Node::Ite(c, w, rest) = eng.terms.node(body).clone() else {
        return None;
    };
    if rest != eng.terms.select(lw.sym, xts.clone()) {
        return None; // several writes in one iteration
    }
    let identity = Subst::new();
    let index = write_index(&mut eng.terms, c, &xs, &xts, &identity)?;
    let index: Vec<TermId> = index
        .into_iter()
        .map(|t| at_p.term(eng, t))
        .collect::<Option<_>>()?;
    let value = at_p.term(eng, w)?;
    let cond = at_p.term(eng, lw.pcs[j])?;
    if eng.terms.mentions(value, sym_var) || index.iter().any(|t| eng.terms.mentions(*t, sym_var)) {
        return None;
    }
    let moving: Vec<usize> = (0..index.len())
        .filter(|k| eng.terms.mentions(index[*k], p))
        .collect();
    let [moving] = moving[..] else { return None };
    let (_, summands) = eng.terms.linear(index[moving]);
    let step = summands
        .iter()
        .find(|(_, t)| *t == pt)
        .map(|(c, _)| c.clone())?;
    if step != BigInt::from(1) && step != BigInt::from(-1) {
        return None;
    }
    Some(Visit {
        index,
        moving,
        step,
        cond,
        value,
    })
}

/// The index vector of a write `x⃗ = ι⃗` (a conjunction of `d = 0` with
/// d = ±x_k + r), iterated with θ.
fn write_index(
    terms: &mut Terms,
    c: TermId,
    xs: &[Var],
    xts: &[TermId],
    theta: &Subst,
) -> Option<Vec<TermId>> {
    let eqs: Vec<TermId> = match terms.node(c) {
        Node::And(cs) => cs.to_vec(),
        _ => vec![c],
    };
    let mut index: Vec<Option<TermId>> = vec![None; xs.len()];
    for e in eqs {
        let Node::Eq(d, _) = *terms.node(e) else {
            return None;
        };
        let (c0, summands) = terms.linear(d);
        let k = xts
            .iter()
            .position(|x| summands.iter().any(|(_, t)| t == x))?;
        let coef = summands
            .iter()
            .find(|(_, t)| *t == xts[k])
            .map(|(c, _)| c.clone())?;
        if coef != BigInt::from(1) && coef != BigInt::from(-1) {
            return None;
        }
        let rest: Vec<(BigInt, TermId)> =
            summands.into_iter().filter(|(_, t)| *t != xts[k]).collect();
        let r = terms.sum(c0, rest);
        let other = if coef == BigInt::from(1) {
            terms.neg(r)
        } else {
            r
        };
        if terms.mentions_any(other, xs) {
            return None;
        }
        index[k] = Some(theta.apply(terms, other));
    }
    index.into_iter().collect()
}
