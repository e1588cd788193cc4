//! The Horn printer's scripts, read by a real Z3: a counter's invariant
//! found and re-checked clause by clause.

use super::*;
use crate::term::VarKind;
use std::time::Duration;

/// `x = 0 → P(x, A)`; `P(x, A) ∧ x < A[0] → P(x + 1, A)`;
/// `P(x, A) ∧ x < 0 → false`: safe, with the invariant `x ≥ 0`.
fn counter() -> (Terms, Vec<Relation>, Vec<Clause>) {
    let mut t = Terms::new();
    let x = t.new_var(VarKind::Symbol, "x");
    let a = t.new_var(VarKind::ArrayValue(1), "A");
    let (xt, at, zero) = (t.var(x), t.var(a), t.int(0));
    let relation = Relation {
        name: "P".into(),
        params: vec![x, a],
    };
    let app = |args: Vec<TermId>| Application {
        relation: "P".into(),
        args,
    };
    let first = t.select(at, vec![zero]);
    let below = t.lt(xt, first);
    let next = t.add_int(xt, 1);
    let negative = t.lt(xt, zero);
    let starts = t.eq(xt, zero);
    let clause = |body, guards, head, origin: &str| Clause {
        vars: vec![x, a],
        body,
        calls: vec![],
        guards,
        head,
        origin: origin.into(),
    };
    let clauses = vec![
        clause(None, vec![starts], Some(app(vec![xt, at])), "entry"),
        clause(
            Some(app(vec![xt, at])),
            vec![below],
            Some(app(vec![next, at])),
            "step",
        ),
        clause(Some(app(vec![xt, at])), vec![negative], None, "query"),
    ];
    (t, vec![relation], clauses)
}

#[test]
fn declares_array_values_and_reads_them_with_select() {
    let (t, relations, clauses) = counter();
    let script = fixedpoint(&t, &relations, &clauses, &[vec![]], "a counter").remove(0);
    assert!(
        script.starts_with("(set-logic HORN)\n; a counter\n"),
        "{script}"
    );
    assert!(
        script.contains("(declare-fun P (Int (Array Int Int)) Bool)"),
        "{script}"
    );
    assert!(script.contains("(select A!1 0)"), "{script}");
    assert!(
        script.contains("(forall ((x!0 Int) (A!1 (Array Int Int)))"),
        "{script}"
    );
    assert!(
        script.contains("(=> (and (P x!0 A!1) (not (<= 0 x!0))) false)"),
        "the query's head is false: {script}"
    );
    assert!(script.ends_with("(check-sat)\n(get-model)\n"));
    let constant = constant_definition(&t, &relations[0], true);
    assert_eq!(
        constant,
        "(define-fun P ((x!0 Int) (A!1 (Array Int Int))) Bool true)"
    );
}

#[test]
fn a_shared_subterm_is_let_bound_inside_its_clause() {
    let mut t = Terms::new();
    let x = t.new_var(VarKind::Symbol, "x");
    let xt = t.var(x);
    let y = t.add_int(xt, 1);
    let square = t.mul(y, y);
    let zero = t.int(0);
    let g = t.lt(square, zero);
    let c = Clause {
        vars: vec![x],
        body: None,
        calls: vec![],
        guards: vec![g],
        head: None,
        origin: "query".into(),
    };
    let script = fixedpoint(&t, &[], &[c], &[vec![]], "").remove(0);
    assert!(script.contains("(let ((l!"), "{script}");
}

/// Z3 finds the counter's invariant; the checks of that invariant, one
/// frame per clause, all answer `unsat`; and `false` as the invariant
/// fails the entry clause's check.
#[test]
fn z3_finds_the_invariant_and_the_checks_confirm_it() {
    let z3 = crate::smt::default_z3().expect("z3 (solvers/install.sh)");
    let (t, relations, clauses) = counter();
    let script = fixedpoint(&t, &relations, &clauses, &[vec![]], "a counter").remove(0);
    let reply = crate::smt::run_script(&z3, &script, Duration::from_secs(20));
    assert_eq!(reply.answer, crate::smt::Answer::Sat, "{script}\n{reply:?}");
    let model = reply.values.trim();
    let definitions = model.strip_prefix('(').and_then(|m| m.strip_suffix(')'));
    let definitions = vec![definitions.expect("a model").to_string()];
    let answers = |defs: &[String]| {
        let checks = checks(&t, defs, &clauses);
        crate::smt::run_batch(&z3, &checks, clauses.len(), Duration::from_secs(20))
    };
    let held = answers(&definitions);
    assert!(
        held.iter().all(|a| *a == crate::smt::Answer::Unsat),
        "{held:?}"
    );
    let never = vec![constant_definition(&t, &relations[0], false)];
    assert_eq!(answers(&never)[0], crate::smt::Answer::Sat);
}

/// A comparison prints with a side for each sign, as a person writes it:
/// Spacer's global guidance proves a counting loop from this form and
/// not from the canonical `c + Σ kᵢ·xᵢ ≤ 0`.
#[test]
fn comparisons_print_with_a_side_for_each_sign() {
    let mut t = Terms::new();
    let x = t.new_var(VarKind::Symbol, "x");
    let y = t.new_var(VarKind::Symbol, "y");
    let (xt, yt, bound) = (t.var(x), t.var(y), t.int(1000));
    let below = t.lt(xt, bound);
    let twice = t.scale(2.into(), yt);
    let order = t.le(twice, xt);
    let c = Clause {
        vars: vec![x, y],
        body: None,
        calls: vec![],
        guards: vec![below, order],
        head: None,
        origin: "query".into(),
    };
    let script = fixedpoint(&t, &[], &[c], &[vec![]], "").remove(0);
    assert!(script.contains("(not (<= 1000 x!0))"), "{script}");
    assert!(script.contains("(<= (* 2 y!1) x!0)"), "{script}");
}
