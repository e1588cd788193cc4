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
    let atoms = c.head.iter_mut().chain(c.calls.iter_mut());
    let mut roots: Vec<TermId> = c.guards.clone();
    let atom_args: Vec<TermId> = atoms.flat_map(|a| a.args.clone()).collect();
    roots.extend(&atom_args);
    let divisions: Vec<TermId> = (t.post_order(&roots).into_iter())
        .filter(|d| matches!(t.node(*d), Node::Div(..)))
        .collect();
    if divisions.is_empty() {
        return c;
    }
    // Innermost first: a quotient's operands have theirs named already.
    let mut named: HashMap<TermId, TermId> = HashMap::default();
    let mut facts = Vec::new();
    for (k, d) in divisions.into_iter().enumerate() {
        let Node::Div(a, b) = *t.node(d) else {
            unreachable!("filtered to divisions")
        };
        let (a, b) = (
            t.replace_subterms(a, &mut named.clone()),
            t.replace_subterms(b, &mut named.clone()),
        );
        let q = t.new_var(VarKind::Fresh, format!("quotient{k}"));
        let r = t.new_var(VarKind::Fresh, format!("remainder{k}"));
        c.vars.extend([q, r]);
        let (q, r) = (t.var(q), t.var(r));
        facts.push(truncating_division(t, a, b, q, r));
        named.insert(d, q);
    }
    let rename = |t: &mut Terms, x: TermId| t.replace_subterms(x, &mut named.clone());
    c.guards = c.guards.iter().map(|g| rename(t, *g)).collect();
    for atom in c.head.iter_mut().chain(c.calls.iter_mut()) {
        atom.args = atom.args.iter().map(|x| rename(t, *x)).collect();
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
