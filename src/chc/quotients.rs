//! Clauses with their quotients named: each `a / b` becomes a fresh `q`
//! with a remainder `r`, `a = q·b + r`, `|r| < |b|` and `r` of `a`'s sign
//! (C's truncating division), when `b ≠ 0`.
//!
//! cvc5 decides facts such as "`a = k·b` makes `a / b · b = a`" on that
//! form in milliseconds, and not on `div` under `abs` and `ite`
//! (docs/horn-clauses.md, "Bézout ghosts"). Every model of a clause's
//! negation is one of the named form's (`q` and `r` the quotient and the
//! remainder; when `b = 0` they are free), so an `unsat` of the named form
//! is one of the clause's: the form is for checks, which look for `unsat`.

use crate::smt::horn::Clause;
use crate::term::{Node, TermId, Terms, VarKind};
use rustc_hash::FxHashMap as HashMap;

/// `clauses` with their quotients named, in a copy of `terms`.
pub(super) fn named(terms: &Terms, clauses: Vec<Clause>) -> (Terms, Vec<Clause>) {
    let mut terms = terms.clone();
    let clauses = (clauses.into_iter())
        .map(|c| name_in_clause(&mut terms, c))
        .collect();
    (terms, clauses)
}

fn name_in_clause(t: &mut Terms, mut c: Clause) -> Clause {
    let atoms = c.head.iter().chain(&c.calls);
    let roots: Vec<TermId> = (c.guards.iter().copied())
        .chain(atoms.flat_map(|a| a.args.iter().copied()))
        .collect();
    let divisions: Vec<TermId> = (t.post_order(&roots).into_iter())
        .filter(|d| matches!(t.node(*d), Node::Div(..)))
        .collect();
    if divisions.is_empty() {
        return c;
    }
    // Innermost first: a quotient's operands have theirs named already.
    // One memo throughout: it maps each division to its quotient, and
    // each term rewritten to its rewriting, which the divisions named
    // later (its ancestors) cannot change.
    let mut named: HashMap<TermId, TermId> = HashMap::default();
    let mut facts = Vec::new();
    for (k, d) in divisions.into_iter().enumerate() {
        let Node::Div(a, b) = *t.node(d) else {
            unreachable!("filtered to divisions")
        };
        let a = t.replace_subterms(a, &mut named);
        let b = t.replace_subterms(b, &mut named);
        let q = t.new_var(VarKind::Fresh, format!("quotient{k}"));
        let r = t.new_var(VarKind::Fresh, format!("remainder{k}"));
        c.vars.extend([q, r]);
        let (q, r) = (t.var(q), t.var(r));
        facts.push(truncating_division(t, a, b, q, r));
        named.insert(d, q);
    }
    let mut rename = |x: &TermId| t.replace_subterms(*x, &mut named);
    c.guards = c.guards.iter().map(&mut rename).collect();
    for atom in c.head.iter_mut().chain(c.calls.iter_mut()) {
        atom.args = atom.args.iter().map(&mut rename).collect();
    }
    c.guards.extend(facts);
    c
}

/// `b ≠ 0 → a = q·b + r ∧ |r| < |b| ∧ (a ≥ 0 → r ≥ 0) ∧ (a < 0 → r ≤ 0)`.
fn truncating_division(t: &mut Terms, a: TermId, b: TermId, q: TermId, r: TermId) -> TermId {
    let zero = t.int(0);
    let product = t.mul(q, b);
    let sum = t.add(product, r);
    let recomposed = t.eq(a, sum);
    let (minus_b, minus_r) = (t.neg(b), t.neg(r));
    // |r| < |b| as r < |b| ∧ −r < |b|, |b| by b's sign.
    let (b_pos, b_neg) = (t.lt(zero, b), t.lt(b, zero));
    let (below_b, above_minus_b) = (t.lt(r, b), t.lt(minus_r, b));
    let (below_minus_b, above_b) = (t.lt(r, minus_b), t.lt(minus_r, minus_b));
    let when_pos = t.and(vec![below_b, above_minus_b]);
    let when_neg = t.and(vec![below_minus_b, above_b]);
    let small_pos = t.implies(b_pos, when_pos);
    let small_neg = t.implies(b_neg, when_neg);
    let (a_nonneg, a_neg) = (t.le(zero, a), t.lt(a, zero));
    let (r_nonneg, r_nonpos) = (t.le(zero, r), t.le(r, zero));
    let sign_pos = t.implies(a_nonneg, r_nonneg);
    let sign_neg = t.implies(a_neg, r_nonpos);
    let exact = t.and(vec![recomposed, small_pos, small_neg, sign_pos, sign_neg]);
    let b_zero = t.eq(b, zero);
    let divides = t.not(b_zero);
    t.implies(divides, exact)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smt::horn::Application;

    /// Nested quotients, in a guard and in the head, are each named once:
    /// no division is left, and each has its facts.
    #[test]
    fn every_quotient_is_named_once() {
        let mut t = Terms::default();
        let [x, y, z] = ["x", "y", "z"].map(|n| t.new_var(VarKind::Symbol, n));
        let (xt, yt, zt) = (t.var(x), t.var(y), t.var(z));
        let inner = t.div(xt, yt);
        let outer = t.div(inner, zt);
        let zero = t.int(0);
        let guard = t.lt(zero, outer);
        let clause = Clause {
            vars: vec![x, y, z],
            body: None,
            calls: vec![],
            guards: vec![guard],
            head: Some(Application {
                relation: "P".into(),
                args: vec![inner],
            }),
            origin: "test".into(),
        };
        let (t, named) = named(&t, vec![clause]);
        let c = &named[0];
        assert_eq!(c.vars.len(), 3 + 2 * 2, "a quotient and a remainder each");
        let roots: Vec<TermId> = (c.guards.iter())
            .chain(&c.head.as_ref().unwrap().args)
            .copied()
            .collect();
        let divides = (t.post_order(&roots).iter()).any(|u| matches!(t.node(*u), Node::Div(..)));
        assert!(!divides, "a division is left");
        assert_eq!(c.guards.len(), 1 + 2, "the guard and two divisions' facts");
    }
}
