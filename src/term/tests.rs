//! Unit tests of hash-consing, the smart constructors and substitution.

use super::*;

fn setup() -> (Terms, TermId, TermId, Var) {
    let mut t = Terms::new();
    let a = t.new_var(VarKind::Symbol, "a₀");
    let b = t.new_var(VarKind::Symbol, "b₀");
    let (ta, tb) = (t.var(a), t.var(b));
    (t, ta, tb, a)
}

#[test]
fn hash_consing_gives_equal_ids_for_equal_terms() {
    let (mut t, a, b, _) = setup();
    let x = t.add(a, b);
    let y = t.add(b, a);
    assert_eq!(x, y);
    let one = t.int(1);
    let z = t.add(x, one);
    let w = t.add_int(y, 1);
    assert_eq!(z, w);
}

#[test]
fn linear_sums_are_canonical() {
    let (mut t, a, b, _) = setup();
    let two_a = t.add(a, a);
    let s = t.sub(two_a, a);
    assert_eq!(s, a, "a + a - a = a");
    let d = t.sub(a, a);
    assert_eq!(t.as_int(d), Some(&BigInt::zero()));
    let e = t.add(a, b);
    let f = t.sub(e, b);
    assert_eq!(f, a);
    let lt = t.lt(a, e);
    // a₀ < a₀ + b₀ is kept as the canonical difference.
    insta::assert_snapshot!(t.show(lt), @"0 < b₀");
}

#[test]
fn star_is_contagious_and_star_predicates_are_fresh_booleans() {
    let (mut t, a, _, _) = setup();
    let s = t.star();
    let x = t.add(a, s);
    assert!(t.is_star(x));
    let p = t.lt(x, a);
    let q = t.lt(x, a);
    assert_ne!(p, q, "each predicate over ⋆ is its own fresh proposition");
    assert_eq!(t.sort(p), Sort::Bool);
    // Negation stays sound: ¬p is not `true`.
    let np = t.not(p);
    assert_eq!(t.as_bool(np), None);
}

#[test]
fn constant_predicates_fold() {
    let (mut t, a, _, _) = setup();
    let a1 = t.add_int(a, 1);
    let c = t.lt(a, a1);
    assert_eq!(t.as_bool(c), Some(true));
    let c = t.eq(a1, a);
    assert_eq!(t.as_bool(c), Some(false));
    let x = t.not(c);
    let y = t.and(vec![x, c]);
    assert_eq!(t.as_bool(y), Some(false));
}

#[test]
fn substitution_is_simultaneous_and_renormalises() {
    let (mut t, a, b, av) = setup();
    let bv = match t.node(b) {
        Node::Var(v) => *v,
        _ => unreachable!(),
    };
    let e = t.sub(a, b); // a - b
    let mut s = Subst::new();
    s.bind(av, b);
    s.bind(bv, a);
    let r = s.apply(&mut t, e); // b - a
    let expect = t.sub(b, a);
    assert_eq!(r, expect);
    let mut s = Subst::new();
    s.bind(av, b);
    let r = s.apply(&mut t, e);
    assert_eq!(t.as_int(r), Some(&BigInt::zero()));
}

#[test]
fn lambda_reads_beta_reduce() {
    let (mut t, a, _, _) = setup();
    let arr = t.new_var(VarKind::ArraySymbol(1), "A₀");
    let arr_t = t.var(arr);
    let x = t.new_var(VarKind::Bound, "x");
    let xt = t.var(x);
    // λx. ite(x = a, 7, A(x))
    let cond = t.eq(xt, a);
    let seven = t.int(7);
    let old = t.select(arr_t, vec![xt]);
    let body = t.ite(cond, seven, old);
    let lam = t.lambda(vec![x], body);
    let r = t.select(lam, vec![a]);
    assert_eq!(r, seven);
    let a1 = t.add_int(a, 1);
    let r = t.select(lam, vec![a1]);
    insta::assert_snapshot!(t.show(r), @"A₀(a₀ + 1)");
    // η: λx. A(x) is A.
    let plain = t.select(arr_t, vec![xt]);
    let eta = t.lambda(vec![x], plain);
    assert_eq!(eta, arr_t);
}

#[test]
fn deep_chains_substitute_without_recursion() {
    let (mut t, a, _, av) = setup();
    let mut e = a;
    for i in 0..100_000 {
        let c = t.lt(e, a);
        let k = t.int(i);
        e = t.ite(c, k, e);
    }
    let zero = t.int(0);
    let mut s = Subst::new();
    s.bind(av, zero);
    // With a₀ = 0 no condition e < 0 ever holds: the chain folds to 0.
    assert_eq!(s.apply(&mut t, e), zero);
}

#[test]
fn only_positive_existentials_become_constants() {
    let mut t = Terms::new();
    let x = t.new_var(VarKind::Bound, "x");
    let y = t.new_var(VarKind::Bound, "y");
    let (xt, yt, zero) = (t.var(x), t.var(y), t.int(0));
    let pos = t.lt(zero, xt);
    let ex_x = t.exists(vec![x], pos);
    let neg = t.lt(yt, zero);
    let ex_y = t.exists(vec![y], neg);
    let not_ex_y = t.not(ex_y);
    let both = t.and2(ex_x, not_ex_y);
    let s = t.skolemize(both);
    // ∃x stays only as its witness; ¬∃y is ∀y and stays quantified.
    assert!(!t.mentions(s, x), "{}", t.show(s));
    assert!(t.has_quantifier(s), "{}", t.show(s));
    let fa_y = t.forall(vec![y], neg);
    let not_fa_y = t.not(fa_y);
    let s = t.skolemize(not_fa_y);
    assert!(!t.has_quantifier(s), "{}", t.show(s));
}
