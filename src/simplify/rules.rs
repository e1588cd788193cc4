//! The rewrite rules. Every rule is an equivalence over the integers (and
//! the Booleans) for all values of its pattern variables, whatever binders
//! surround the match: none moves a subterm across a binder or depends on
//! the context of its match. `tests.rs` states each group's intent.

use super::lang::{ConstFold, Graph, Lang};
use egg::{Id, Rewrite, Subst, Var, rewrite as rw};
use num_bigint::BigInt;

type Rw = Rewrite<Lang, ConstFold>;

fn var(v: &str) -> Var {
    v.parse().expect("a pattern variable")
}

/// The condition "`?v` is an integer constant".
fn is_const(v: &str) -> impl Fn(&mut Graph, Id, &Subst) -> bool {
    let v = var(v);
    move |eg, _, s| ConstFold::int(eg, s[v]).is_some()
}

/// The condition "`?a` and `?b` are constants and `holds(a, b)`".
fn consts(
    a: &str,
    b: &str,
    holds: fn(&BigInt, &BigInt) -> bool,
) -> impl Fn(&mut Graph, Id, &Subst) -> bool {
    let (a, b) = (var(a), var(b));
    move |eg, _, s| match (ConstFold::int(eg, s[a]), ConstFold::int(eg, s[b])) {
        (Some(x), Some(y)) => holds(x, y),
        _ => false,
    }
}

pub fn rules() -> Vec<Rw> {
    let mut rules = arithmetic();
    rules.extend(comparisons());
    rules.extend(ites());
    rules.extend(booleans());
    rules
}

/// Linear-arithmetic normalisation: commutativity, associativity,
/// collecting like terms and constants (constants themselves fold in the
/// analysis).
pub fn arithmetic() -> Vec<Rw> {
    vec![
        rw!("add-comm"; "(+ ?a ?b)" => "(+ ?b ?a)"),
        rw!("add-assoc"; "(+ ?a (+ ?b ?c))" => "(+ (+ ?a ?b) ?c)"),
        rw!("mul-comm"; "(* ?a ?b)" => "(* ?b ?a)"),
        rw!("mul-assoc"; "(* ?a (* ?b ?c))" => "(* (* ?a ?b) ?c)"),
        rw!("add-zero"; "(+ ?a 0)" => "?a"),
        rw!("mul-one"; "(* ?a 1)" => "?a"),
        rw!("collect-twice"; "(+ ?a ?a)" => "(* 2 ?a)"),
        rw!("collect-one"; "(+ (* ?k ?a) ?a)" => "(* (+ ?k 1) ?a)" if is_const("?k")),
        rw!("collect"; "(+ (* ?k ?a) (* ?j ?a))" => "(* (+ ?k ?j) ?a)"
            if is_const("?k") if is_const("?j")),
        rw!("distribute-const"; "(* ?k (+ ?a ?b))" => "(+ (* ?k ?a) (* ?k ?b))"
            if is_const("?k")),
        rw!("max-idem"; "(max ?a ?a)" => "?a"),
        rw!("div-one"; "(div ?a 1)" => "?a"),
    ]
}

/// Comparison normalisation and the meeting of bounds on one term.
pub fn comparisons() -> Vec<Rw> {
    vec![
        rw!("eq-refl"; "(= ?a ?a)" => "true"),
        rw!("le-refl"; "(<= ?a ?a)" => "true"),
        rw!("eq-comm"; "(= ?a ?b)" => "(= ?b ?a)"),
        // Over the integers, ¬(a ≤ b) is b + 1 ≤ a.
        rw!("not-le"; "(not (<= ?a ?b))" => "(<= (+ ?b 1) ?a)"),
        // Constants to the right: d + k ≤ b is d ≤ b - k.
        rw!("le-shift"; "(<= (+ ?d ?k) ?b)" => "(<= ?d (+ ?b (* -1 ?k)))" if is_const("?k")),
        rw!("eq-shift"; "(= (+ ?d ?k) ?b)" => "(= ?d (+ ?b (* -1 ?k)))" if is_const("?k")),
        // x ≤ a ∧ x ≤ b is the tighter of the two, and so on.
        rw!("upper-upper"; "(and (<= ?x ?a) (<= ?x ?b))" => "(<= ?x ?a)"
            if consts("?a", "?b", |a, b| a <= b)),
        rw!("lower-lower"; "(and (<= ?a ?x) (<= ?b ?x))" => "(<= ?b ?x)"
            if consts("?a", "?b", |a, b| a <= b)),
        rw!("upper-lower-empty"; "(and (<= ?x ?a) (<= ?b ?x))" => "false"
            if consts("?a", "?b", |a, b| a < b)),
        rw!("upper-lower-point"; "(and (<= ?x ?a) (<= ?a ?x))" => "(= ?x ?a)"),
        rw!("upper-or-upper"; "(or (<= ?x ?a) (<= ?x ?b))" => "(<= ?x ?b)"
            if consts("?a", "?b", |a, b| a <= b)),
        rw!("lower-or-lower"; "(or (<= ?a ?x) (<= ?b ?x))" => "(<= ?a ?x)"
            if consts("?a", "?b", |a, b| a <= b)),
        rw!("upper-or-lower-all"; "(or (<= ?x ?a) (<= ?b ?x))" => "true"
            if consts("?a", "?b", |a, b| *b <= a + 1)),
        rw!("point-upper"; "(and (= ?x ?a) (<= ?x ?b))" => "(= ?x ?a)"
            if consts("?a", "?b", |a, b| a <= b)),
        rw!("point-lower"; "(and (= ?x ?a) (<= ?b ?x))" => "(= ?x ?a)"
            if consts("?a", "?b", |a, b| b <= a)),
        rw!("point-outside-upper"; "(and (= ?x ?a) (<= ?x ?b))" => "false"
            if consts("?a", "?b", |a, b| a > b)),
        rw!("point-outside-lower"; "(and (= ?x ?a) (<= ?b ?x))" => "false"
            if consts("?a", "?b", |a, b| b > a)),
        rw!("point-point"; "(and (= ?x ?a) (= ?x ?b))" => "false"
            if consts("?a", "?b", |a, b| a != b)),
    ]
}

/// ite laws.
pub fn ites() -> Vec<Rw> {
    vec![
        rw!("ite-true"; "(ite true ?a ?b)" => "?a"),
        rw!("ite-false"; "(ite false ?a ?b)" => "?b"),
        rw!("ite-same"; "(ite ?c ?a ?a)" => "?a"),
        rw!("ite-not"; "(ite (not ?c) ?a ?b)" => "(ite ?c ?b ?a)"),
        rw!("ite-then-same"; "(ite ?c (ite ?c ?a ?b) ?d)" => "(ite ?c ?a ?d)"),
        rw!("ite-else-same"; "(ite ?c ?a (ite ?c ?b ?d))" => "(ite ?c ?a ?d)"),
        rw!("ite-lift-add"; "(ite ?c (+ ?a ?d) (+ ?b ?d))" => "(+ (ite ?c ?a ?b) ?d)"),
        // Boolean ites are junctions (only Boolean classes hold `true`).
        rw!("ite-cond"; "(ite ?c true false)" => "?c"),
        rw!("ite-not-cond"; "(ite ?c false true)" => "(not ?c)"),
        rw!("ite-and"; "(ite ?c ?a false)" => "(and ?c ?a)"),
        rw!("ite-or"; "(ite ?c true ?b)" => "(or ?c ?b)"),
        rw!("ite-implies"; "(ite ?c ?a true)" => "(or (not ?c) ?a)"),
        rw!("ite-and-not"; "(ite ?c false ?b)" => "(and (not ?c) ?b)"),
    ]
}

/// Boolean laws: units, idempotence, contradiction and tautology,
/// absorption, a conjunct's truth inside its siblings, and De Morgan in the
/// direction that shrinks.
pub fn booleans() -> Vec<Rw> {
    vec![
        rw!("and-comm"; "(and ?a ?b)" => "(and ?b ?a)"),
        rw!("and-assoc"; "(and ?a (and ?b ?c))" => "(and (and ?a ?b) ?c)"),
        rw!("or-comm"; "(or ?a ?b)" => "(or ?b ?a)"),
        rw!("or-assoc"; "(or ?a (or ?b ?c))" => "(or (or ?a ?b) ?c)"),
        rw!("and-true"; "(and ?a true)" => "?a"),
        rw!("or-false"; "(or ?a false)" => "?a"),
        rw!("and-idem"; "(and ?a ?a)" => "?a"),
        rw!("or-idem"; "(or ?a ?a)" => "?a"),
        rw!("contradiction"; "(and ?a (not ?a))" => "false"),
        rw!("tautology"; "(or ?a (not ?a))" => "true"),
        rw!("not-not"; "(not (not ?a))" => "?a"),
        rw!("absorb-and"; "(and ?a (or ?a ?b))" => "?a"),
        // A conjunct holds inside its siblings: the duplicated conjuncts of
        // backbones that share a prefix, and the guards their sibling
        // backbones contradict (a ∧ (¬a ∧ b ∨ c) is a ∧ c).
        rw!("context-true"; "(and ?a (or (and ?a ?b) ?c))" => "(and ?a (or ?b ?c))"),
        rw!("context-false"; "(and ?a (or (and (not ?a) ?b) ?c))" => "(and ?a ?c)"),
        rw!("unit-true"; "(and ?a (or (not ?a) ?b))" => "(and ?a ?b)"),
        rw!("unit-false"; "(or ?a (and (not ?a) ?b))" => "(or ?a ?b)"),
        // The same with the negation on the outside (patterns only match
        // e-nodes that exist, and `¬¬a` is not made where `a` is).
        rw!("context-false-neg"; "(and (not ?a) (or (and ?a ?b) ?c))" => "(and (not ?a) ?c)"),
        rw!("unit-true-neg"; "(and (not ?a) (or ?a ?b))" => "(and (not ?a) ?b)"),
        rw!("unit-false-neg"; "(or (not ?a) (and ?a ?b))" => "(or (not ?a) ?b)"),
        rw!("absorb-or"; "(or ?a (and ?a ?b))" => "?a"),
        // No factoring (a ∧ b ∨ a ∧ c to a ∧ (b ∨ c)), though it shrinks:
        // on MatrIR it regrouped the two loop-exit cases of φ̂, and cvc5's
        // model-based instantiation went from 0.2 s to a timeout.
        rw!("de-morgan-and"; "(and (not ?a) (not ?b))" => "(not (or ?a ?b))"),
        rw!("de-morgan-or"; "(or (not ?a) (not ?b))" => "(not (and ?a ?b))"),
        rw!("iff-true"; "(= ?a true)" => "?a"),
        rw!("iff-false"; "(= ?a false)" => "(not ?a)"),
    ]
}
