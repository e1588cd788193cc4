//! Unit tests of the e-graph's rules, each stating its intent.

use super::lang::{ConstFold, Graph, Lang};
use super::*;
use crate::term::{Node, Var, VarKind};
use egg::RecExpr;
use num_bigint::BigInt;
use proptest::prelude::*;
use std::collections::HashMap;

// ---- rule intent: the rules prove `from` equal to `to` ----------------------

fn proves(from: &str, to: &str) -> bool {
    let from: RecExpr<Lang> = from.parse().unwrap();
    let to: RecExpr<Lang> = to.parse().unwrap();
    let runner = egg::Runner::<Lang, ConstFold>::default()
        .with_expr(&from)
        .with_iter_limit(8)
        .run(all_rules());
    let eg: &Graph = &runner.egraph;
    eg.lookup_expr(&to)
        .is_some_and(|t| eg.find(t) == eg.find(runner.roots[0]))
}

#[track_caller]
fn assert_proves(from: &str, to: &str) {
    assert!(proves(from, to), "{from} was not shown equal to {to}");
}

#[test]
fn arithmetic_is_normalised() {
    assert_proves("(+ x1 0)", "x1");
    assert_proves("(+ (+ 2 x1) (+ x2 3))", "(+ 5 (+ x1 x2))");
    assert_proves("(+ x1 (* -1 x1))", "0");
    assert_proves("(+ (* 3 x1) (* -1 x1))", "(* 2 x1)");
    assert_proves("(* 2 (+ x1 (* 3 x2)))", "(+ (* 2 x1) (* 6 x2))");
    assert_proves("(* (* 0 x2) x1)", "0");
    assert_proves("(div 7 -2)", "-3"); // C's truncation, not floor
    assert_proves("(max x1 x1)", "x1");
}

#[test]
fn comparisons_are_normalised_and_bounds_meet() {
    assert_proves("(<= (+ x1 3) 5)", "(<= x1 2)");
    assert_proves("(and (<= x1 2) (<= x1 7))", "(<= x1 2)");
    assert_proves("(and (<= 2 x1) (<= 7 x1))", "(<= 7 x1)");
    assert_proves("(and (<= x1 2) (<= 3 x1))", "false");
    assert_proves("(and (<= x1 2) (<= 2 x1))", "(= x1 2)");
    assert_proves("(or (<= x1 2) (<= 3 x1))", "true");
    assert_proves("(and (= x1 4) (<= x1 9))", "(= x1 4)");
    assert_proves("(and (= x1 4) (<= 5 x1))", "false");
    assert_proves("(and (= x1 4) (= x1 5))", "false");
    // ¬(x ≤ 2) is 3 ≤ x over the integers, which meets x ≤ 2.
    assert_proves("(and (not (<= x1 2)) (<= x1 2))", "false");
    assert_proves("(and (<= x1 2) (and p1 (<= x1 5)))", "(and p1 (<= x1 2))");
    // Bounds on different terms stay apart.
    assert!(!proves("(and (<= x1 2) (<= x2 7))", "(<= x1 2)"));
    assert!(!proves("(or (<= x1 2) (<= 4 x1))", "true"));
}

#[test]
fn ite_laws() {
    assert_proves("(ite (<= 1 0) x1 x2)", "x2");
    assert_proves("(ite p1 x1 x1)", "x1");
    assert_proves("(ite p1 (ite p1 x1 x2) x3)", "(ite p1 x1 x3)");
    assert_proves("(ite p1 x3 (ite p1 x1 x2))", "(ite p1 x3 x2)");
    assert_proves("(ite (not p1) x1 x2)", "(ite p1 x2 x1)");
    assert_proves("(ite p1 (+ x1 5) (+ x2 5))", "(+ (ite p1 x1 x2) 5)");
    assert_proves("(ite p1 p2 false)", "(and p1 p2)");
    assert_proves("(ite p1 true p2)", "(or p1 p2)");
}

#[test]
fn boolean_laws() {
    assert_proves("(and p1 (or p1 p2))", "p1");
    assert_proves("(or p1 (and p2 p1))", "p1");
    assert_proves("(and p1 (and p2 (not p1)))", "false");
    assert_proves("(or (not p1) (or p2 p1))", "true");
    assert_proves("(and (not p1) (not p2))", "(not (or p1 p2))");
    // No factoring (see `booleans`).
    assert!(!proves(
        "(or (and p1 p2) (and p1 p3))",
        "(and p1 (or p2 p3))"
    ));
    assert_proves("(= p1 false)", "(not p1)");
    assert_proves("(and p1 (or (and p1 p2) p3))", "(and p1 (or p2 p3))");
    assert_proves("(and p1 (or (and (not p1) p2) p3))", "(and p1 p3)");
    assert_proves(
        "(and (<= x1 0) (or (and (not (<= x1 0)) p2) p3))",
        "(and (<= x1 0) p3)",
    );
    assert_proves("(and p1 (or (not p1) p2))", "(and p1 p2)");
    assert_proves("(or p1 (and (not p1) p2))", "(or p1 p2)");
    assert!(!proves("(and p1 p2)", "p1"));
}

#[test]
fn quantifier_bodies_are_simplified_and_binders_kept() {
    let mut t = Terms::new();
    let x = t.new_var(VarKind::Symbol, "x");
    let tau = t.new_var(VarKind::Bound, "τ");
    let (tx, ttau) = (t.var(x), t.var(tau));
    let two = t.int(2);
    let five = t.int(5);
    let a = t.le(ttau, two);
    let b = t.le(ttau, five);
    let c = t.lt(tx, ttau);
    let body = t.and(vec![a, b, c]);
    let q = t.forall(vec![tau], body);
    let (s, stats) = simplify_one(&mut t, q);
    assert!(stats.nodes_after < stats.nodes_before, "{stats:?}");
    assert_eq!(t.show(s), "∀τ. τ ≤ 2 ∧ x < τ");
}

#[test]
fn a_larger_extraction_is_never_returned() {
    let mut t = Terms::new();
    let x = t.new_var(VarKind::Symbol, "x");
    let tx = t.var(x);
    let one = t.int(1);
    let e = t.le(tx, one);
    let s = simplify(&mut t, &[e], &Limits::default());
    assert_eq!(s.roots, vec![e], "already minimal: kept as it was");
    assert!(s.stats.nodes_after <= s.stats.nodes_before);
}

#[test]
fn conditions_with_star_are_kept() {
    let mut t = Terms::new();
    let star = t.star();
    let s = simplify(&mut t, &[star], &Limits::default());
    assert_eq!(s.roots, vec![star]);
    assert!(s.stats.stop.contains('⋆'));
}

// ---- evaluation before and after on random terms ------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Val {
    I(BigInt),
    B(bool),
}

/// An assignment: integer symbols, propositional variables, and one
/// uninterpreted unary array.
struct Env {
    ints: HashMap<u32, BigInt>,
    bools: HashMap<u32, bool>,
    array_salt: i64,
}

fn eval(t: &Terms, e: TermId, env: &Env) -> Val {
    let i = |x: TermId| match eval(t, x, env) {
        Val::I(n) => n,
        v => panic!("not an integer: {v:?}"),
    };
    let b = |x: TermId| match eval(t, x, env) {
        Val::B(v) => v,
        v => panic!("not a Boolean: {v:?}"),
    };
    match t.node(e) {
        Node::Int(n) => Val::I(n.clone()),
        Node::Bool(v) => Val::B(*v),
        Node::Var(v) if v.kind == VarKind::FreshBool => {
            // Fresh Booleans the term layer made (for predicates over ⋆)
            // get a value too.
            Val::B(env.bools.get(&v.id).copied().unwrap_or(v.id % 2 == 0))
        }
        Node::Var(v) => Val::I(env.ints[&v.id].clone()),
        Node::Add(c, xs) => Val::I(xs.iter().fold(c.clone(), |acc, (k, x)| acc + k * i(*x))),
        Node::Mul(a, c) => Val::I(i(*a) * i(*c)),
        Node::Div(a, c) => Val::I(i(*a) / i(*c)),
        Node::Max(a, c) => Val::I(i(*a).max(i(*c))),
        Node::Ite(c, a, d) => eval(t, if b(*c) { *a } else { *d }, env),
        Node::Eq(a, c) => Val::B(eval(t, *a, env) == eval(t, *c, env)),
        Node::Le(a, c) => Val::B(i(*a) <= i(*c)),
        Node::Not(a) => Val::B(!b(*a)),
        Node::And(xs) => Val::B(xs.iter().all(|x| b(*x))),
        Node::Or(xs) => Val::B(xs.iter().any(|x| b(*x))),
        Node::Select(_, xs) => {
            let k = i(xs[0]);
            Val::I((k * 7 + env.array_salt) % 11 - 5)
        }
        n => panic!("not generated: {n:?}"),
    }
}

/// A random quantifier-free term over x0..x2, p0..p2 and A(·), built by
/// the term layer's smart constructors as the engine builds conditions.
struct Gen {
    state: u64,
    xs: Vec<TermId>,
    ps: Vec<TermId>,
    array: TermId,
}

impl Gen {
    fn next(&mut self, n: u64) -> u64 {
        // xorshift64*
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545F4914F6CDD1D) % n
    }
    fn small(&mut self) -> i64 {
        self.next(9) as i64 - 4
    }
    fn int(&mut self, t: &mut Terms, depth: u32) -> TermId {
        if depth == 0 {
            return match self.next(2) {
                0 => t.int(self.small()),
                _ => {
                    let k = self.next(self.xs.len() as u64) as usize;
                    self.xs[k]
                }
            };
        }
        let d = depth - 1;
        match self.next(8) {
            0 => {
                let (a, b) = (self.int(t, d), self.int(t, d));
                t.add(a, b)
            }
            1 => {
                let (a, b) = (self.int(t, d), self.int(t, d));
                t.sub(a, b)
            }
            2 => {
                let (a, b) = (self.int(t, d), self.int(t, d));
                t.mul(a, b)
            }
            3 => {
                let a = self.int(t, d);
                let k = match self.small() {
                    0 => 3,
                    k => k,
                };
                let k = t.int(k);
                t.div(a, k)
            }
            4 => {
                let (a, b) = (self.int(t, d), self.int(t, d));
                t.max(a, b)
            }
            5 => {
                // A comparison: an ite on a bare propositional variable
                // (a predicate over ⋆ to the term layer) would be ⋆.
                let (x, y) = (self.int(t, d), self.int(t, d));
                let c = t.le(x, y);
                let (a, b) = (self.int(t, d), self.int(t, d));
                t.ite(c, a, b)
            }
            6 => {
                let a = self.int(t, d);
                t.select(self.array, vec![a])
            }
            _ => self.int(t, 0),
        }
    }
    fn bool(&mut self, t: &mut Terms, depth: u32) -> TermId {
        if depth == 0 {
            let k = self.next(self.ps.len() as u64) as usize;
            return self.ps[k];
        }
        let d = depth - 1;
        // Comparisons of shallow integer terms, and many bounds on the
        // variables, so that junctions often hold two facts about one term
        // (the bound and Boolean rules' matches).
        let shallow = d.min(1);
        match self.next(14) {
            0 => {
                let (a, b) = (self.int(t, shallow), self.int(t, shallow));
                t.le(a, b)
            }
            1 => {
                let (a, b) = (self.int(t, shallow), self.int(t, shallow));
                t.lt(a, b)
            }
            2 => {
                let (a, b) = (self.int(t, shallow), self.int(t, shallow));
                t.eq(a, b)
            }
            3 => {
                let a = self.bool(t, d);
                t.not(a)
            }
            4 | 5 => {
                let n = 2 + self.next(3);
                let xs = (0..n).map(|_| self.fact(t, d)).collect();
                t.and(xs)
            }
            6 | 7 => {
                let n = 2 + self.next(3);
                let xs = (0..n).map(|_| self.fact(t, d)).collect();
                t.or(xs)
            }
            8 => {
                let c = self.bool(t, d);
                let (a, b) = (self.bool(t, d), self.bool(t, d));
                t.ite(c, a, b)
            }
            9..=12 => self.bound(t),
            _ => self.bool(t, 0),
        }
    }
    /// A bound on x0 or x1, or any formula.
    fn fact(&mut self, t: &mut Terms, depth: u32) -> TermId {
        match self.next(2) {
            0 => self.bound(t),
            _ => self.bool(t, depth),
        }
    }
    fn bound(&mut self, t: &mut Terms) -> TermId {
        let k = self.next(2) as usize;
        let x = self.xs[k];
        let c = self.small();
        let c = t.int(c);
        match self.next(3) {
            0 => t.le(x, c),
            1 => t.le(c, x),
            _ => t.eq(x, c),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("SIMPLIFY_PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(100)))]
    /// Random terms agree with their simplification on 32 random
    /// assignments each.
    #[test]
    fn simplification_preserves_the_value(seed in any::<u64>()) {
        let mut t = Terms::new();
        let xs: Vec<Var> = (0..3).map(|k| t.new_var(VarKind::Symbol, format!("x{k}"))).collect();
        let ps: Vec<Var> = (0..3).map(|k| t.new_var(VarKind::FreshBool, format!("p{k}"))).collect();
        let a = t.new_var(VarKind::ArraySymbol(1), "A");
        let mut g = Gen {
            state: seed | 1,
            xs: xs.iter().map(|v| t.var(*v)).collect(),
            ps: ps.iter().map(|v| t.var(*v)).collect(),
            array: t.var(a),
        };
        let depth = 2 + g.next(4) as u32;
        let root = g.bool(&mut t, depth);
        let (s, stats) = simplify_one(&mut t, root);
        prop_assert!(stats.nodes_after <= stats.nodes_before);
        for _ in 0..32 {
            let env = Env {
                ints: xs.iter().map(|v| (v.id, BigInt::from(g.small() * 2 + g.next(2) as i64))).collect(),
                bools: ps.iter().map(|v| (v.id, g.next(2) == 0)).collect(),
                array_salt: g.small(),
            };
            prop_assert_eq!(eval(&t, root, &env), eval(&t, s, &env),
                "{} simplified to {}", t.show(root), t.show(s));
        }
    }
}

proptest! {
    /// The comparisons' gcd test and rounding (`term::divided_by_gcd`)
    /// keep the value: `a·x + b·y + c = 0` and `≤ 0` as built agree with
    /// the arithmetic on every small assignment.
    #[test]
    fn comparisons_divided_by_their_gcd_keep_the_value(
        a in -12i64..12, b in -12i64..12, c in -30i64..30, is_eq in any::<bool>(),
    ) {
        let mut t = Terms::new();
        let (x, y) = (t.new_var(VarKind::Symbol, "x"), t.new_var(VarKind::Symbol, "y"));
        let (tx, ty) = (t.var(x), t.var(y));
        let sum = t.sum(BigInt::from(c), vec![(BigInt::from(a), tx), (BigInt::from(b), ty)]);
        let zero = t.int(0);
        let built = if is_eq { t.eq(sum, zero) } else { t.le(sum, zero) };
        for (vx, vy) in (-8i64..8).flat_map(|vx| (-8i64..8).map(move |vy| (vx, vy))) {
            let env = Env {
                ints: [(x.id, BigInt::from(vx)), (y.id, BigInt::from(vy))].into(),
                bools: HashMap::default(),
                array_salt: 0,
            };
            let value = a * vx + b * vy + c;
            let expected = if is_eq { value == 0 } else { value <= 0 };
            prop_assert_eq!(eval(&t, built, &env), Val::B(expected), "{}", t.show(built));
        }
    }
}
