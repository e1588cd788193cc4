//! Unit tests of the necessary conditions against the papers' examples,
//! with the answers of a real solver.

use super::*;
use crate::db::Database;
use crate::smt::{Answer, run_z3};

/// A program in a database of its own: the tests build conditions
/// through the same queries as `apc check`.
struct Program {
    db: Database,
    file: SourceFile,
}

fn program(src: &str) -> Program {
    let (db, file) = Database::with_file("test.mc", src);
    let diags = db::diagnostics(&db, file);
    assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
    Program { db, file }
}

impl Program {
    fn engine(&self, opts: Options) -> Engine<'_> {
        Engine::new(&self.db, self.file, opts).expect("the program has main")
    }
}

/// The first target of a kind in a flowgraph.
fn target_of(body: &Body, kind: crate::TargetKind) -> ir::TargetId {
    body.targets
        .iter()
        .find(|t| t.kind == kind)
        .expect("a target of that kind")
        .id
}

fn solve(terms: &Terms, phi: TermId) -> Answer {
    let mut script = String::from("(set-option :smt.mbqi true)\n");
    script.push_str(&crate::smt::smtlib::script(terms, &[phi]));
    run_z3(&script, Duration::from_secs(20)).answer
}

/// φ̂ and φ̂^K of the only `assert` target of main, and both answers.
fn nc(src: &str, opts: Options) -> (String, Answer, Answer) {
    let p = program(src);
    let mut eng = p.engine(opts);
    let body = eng.body;
    let t = target_of(body, crate::TargetKind::Assert);
    let phi = eng.condition(t);
    let shown = eng.terms.show(phi);
    let q = solve(&eng.terms, phi);
    let phik = unfold(&mut eng.terms, phi, 25).expect("a small unfolding");
    let u = solve(&eng.terms, phik);
    (shown, q, u)
}

fn is_sat(a: &Answer) -> bool {
    matches!(a, Answer::Sat)
}

const ONELOOP: &str = "main(n) { var i, c; i = 0; c = 0; while (c < n) { i = i + 4; c = c + 1; } if (i == 15) { assert(0); } return 0; }";
const TWOLOOPS: &str = "main(n) { var i, c, j; i = 0; c = 0; while (c < n) { i = i + 4; c = c + 1; } j = 0; while (i != j + 7) { j = j + 2; } assert(0); return 0; }";
const RUNNING: &str = "main(n, A) { var k, i; k = 0; i = 3; while (i < n) { if (A[i] == 1) { k = k + 1; } i = i + 1; } if (k > 12) { assert(0); } return 0; }";
const NESTED: &str = "main(m, n) { var i, j; i = 0; j = 0; while (i < m) { j = i; while (j < n) { j = j + 1; } i = i + 1; } if (m > 0 && j < n) { assert(0); } return 0; }";

#[test]
fn oneloop_is_unsatisfiable() {
    let (phi, q, u) = nc(ONELOOP, Options::default());
    assert_eq!(q, Answer::Unsat, "{phi}");
    assert_eq!(u, Answer::Unsat, "{phi}");
}

#[test]
fn twoloops_is_unsatisfiable() {
    let (phi, q, u) = nc(TWOLOOPS, Options::default());
    assert_eq!(u, Answer::Unsat, "{phi}");
    assert!(
        q == Answer::Unsat || matches!(q, Answer::Unknown(_)),
        "{phi}: {q:?}"
    );
}

#[test]
fn running_example_summary_matches_the_paper() {
    let p = program(RUNNING);
    let mut eng = p.engine(Options::default());
    let body = eng.body;
    let sum = eng.summary(0);
    assert_eq!(sum.counters.len(), 2, "one counter per body backbone");
    let show = |eng: &Engine, name: &str| {
        let v = body.var_id(name).unwrap();
        eng.terms.show(sum.theta.get(state::Slot::Value(v)))
    };
    // θ(k) = k₀ + κ1, θ(i) = i₀ + κ1 + κ2 (the paper's Section 2.1).
    insta::assert_snapshot!(show(&eng, "k"), @"k₀ + κ1");
    insta::assert_snapshot!(show(&eng, "i"), @"i₀ + κ1 + κ2");
    let (phi, q, u) = nc(RUNNING, Options::default());
    assert!(is_sat(&u), "{phi}: {u:?}");
    assert!(
        is_sat(&q) || matches!(q, Answer::Unknown(_)),
        "{phi}: {q:?}"
    );
}

#[test]
fn the_counter_inference_finds_one_relation_for_the_nested_example() {
    let (db, log) = Database::with_execution_log();
    let file = SourceFile::new(&db, "nested.mc".into(), NESTED.into());
    let mut eng = Engine::new(&db, file, Options::default()).expect("main");
    eng.summary(0);
    assert_eq!(eng.stats.inferred_relations, 1);
    let computed = log
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.starts_with("loop_summary("))
        .count();
    assert_eq!(computed, 2, "outer and inner loop, once each");
    assert!(
        eng.stats.inference_queries >= 2,
        "at least a fit and a validation"
    );
}

#[test]
fn nested_loops_need_the_counter_inference() {
    let (phi, _, u) = nc(NESTED, Options::default());
    assert_eq!(u, Answer::Unsat, "with inference: {phi}");
    let off = Options {
        counter_inference: false,
        ..Options::default()
    };
    let (phi, _, u) = nc(NESTED, off);
    assert!(is_sat(&u), "without inference j is ⋆: {phi}");
}

/// θ^κ of a variable after the first loop of main, printed (an array's
/// as a λ-term).
fn iterated(src: &str, var: &str) -> String {
    let p = program(src);
    let mut eng = p.engine(Options::default());
    let body = eng.body;
    let sum = eng.summary(0);
    let v = body.var_id(var).unwrap();
    eng.terms.show(sum.theta.get(state::Slot::Value(v)))
}

#[test]
fn rule1_unchanged_variables_keep_their_symbol() {
    insta::assert_snapshot!(iterated(
            "main(n) { var i, c; c = 7; i = 0; while (i < n) { i = i + 1; } return c; }",
            "c"
        ), @"c₀");
}

#[test]
fn rule2_progressions_sum_over_backbones() {
    // The ISSTA limitation example, left program: j₀ + κ1 + 2κ2.
    let src = "main(n) { var i, j; i = 0; j = 0; while (i < n) { if (i < 0) { j = j + 1; } else { j = j + 2; } i = i + 1; } return j; }";
    insta::assert_snapshot!(iterated(src, "j"), @"j₀ + κ1 + 2·κ2");
    insta::assert_snapshot!(iterated(src, "i"), @"i₀ + κ1 + κ2");
    // An invariant symbolic step: s₀·κ1 (nonlinear, still a progression).
    let src =
        "main(n, s) { var i, x; i = 0; x = 0; while (i < n) { x = x + s; i = i + 1; } return x; }";
    insta::assert_snapshot!(iterated(src, "x"), @"x₀ + s₀·κ1");
}

#[test]
fn rule3_writers_storing_one_invariant_value_are_a_flag() {
    let src = "main(n, A) { var i, f; i = 0; f = 0; while (i < n) { if (A[i] == 0) { f = 1; } else { if (A[i] < 0) { f = 1; } } i = i + 1; } return f; }";
    insta::assert_snapshot!(iterated(src, "f"), @"ite(0 < κ1 + κ2, 1, f₀)");
}

#[test]
fn rule4_a_single_writer_depending_on_its_counter() {
    // j = i in the only backbone: the value at the start of the last iteration.
    let src = "main(n) { var i, j; i = 0; j = 0; while (i < n) { j = i; i = i + 1; } return j; }";
    insta::assert_snapshot!(iterated(src, "j"), @"ite(0 < κ1, i₀ + κ1 - 1, j₀)");
}

#[test]
fn outside_the_rules_the_value_is_star() {
    // The ISSTA limitation example, right program: j = j * 2 depends on the interleaving.
    let src = "main(n) { var i, j; i = 0; j = 1; while (i < n) { if (i < 0) { j = j + 1; } else { j = j * 2; } i = i + 1; } return j; }";
    insta::assert_snapshot!(iterated(src, "j"), @"⋆");
    // Progression in one backbone, overwrite in another.
    let src = "main(n, A) { var i, x; i = 0; x = 0; while (i < n) { if (A[i] > 0) { x = x + 1; } else { x = 0; } i = i + 1; } return x; }";
    insta::assert_snapshot!(iterated(src, "x"), @"⋆");
}

#[test]
fn star_predicates_are_fresh_booleans_of_both_polarities() {
    // x is ⋆ after the loop; both branches of `x > 0` stay possible.
    let src = "main(n) { var i, x; i = 0; x = 1; while (i < n) { x = x * x; i = i + 1; } if (x > 0) { assert(0); } else { assert(0); } return 0; }";
    let p = program(src);
    let mut eng = p.engine(Options::default());
    let body = eng.body;
    for t in &body.targets {
        let phi = eng.condition(t.id);
        let phik = unfold(&mut eng.terms, phi, 2).expect("a small unfolding");
        assert!(is_sat(&solve(&eng.terms, phik)), "{}", eng.terms.show(phik));
    }
}

#[test]
fn table2_example1_monotone_writes() {
    // TR Example 1: for (i = 0; i < n; ++i) A[i] = i  ⇒  λx. ite(i₀ ≤ x < i₀ + κ, x, A₀(x)).
    let src = "main(n) { var A, i; A = [0, 0, 0, 0]; i = 0; while (i < n) { A[i] = i; i = i + 1; } return A[0]; }";
    insta::assert_snapshot!(iterated(src, "A"), @"λx. ite(i₀ ≤ x ∧ x < i₀ + κ1, x, A₀(x))");
    // A decreasing index and a value depending on the iteration.
    let src = "main(n) { var A, i; A = [0, 0, 0, 0]; i = 3; while (i >= 0) { A[i] = 2 * i + 1; i = i - 1; } return A[0]; }";
    insta::assert_snapshot!(iterated(src, "A"), @"λx. ite(x ≤ i₀ ∧ i₀ < x + κ1, 2·x + 1, A₀(x))");
}

#[test]
fn table2_example2_two_writes_per_iteration() {
    // TR Example 2: for (i = 1; i < n; ++i) { A[i-1] = i; A[i] = i; }. Cell x is last
    // written by A[i-1] = i one iteration later (value x + 1) unless that iteration
    // did not happen; the last cell keeps A[i] = i (value x).
    let src = "main(n) { var A, i; A = [0, 0, 0, 0]; i = 1; while (i < n) { A[i - 1] = i; A[i] = i; i = i + 1; } return A[0]; }";
    insta::assert_snapshot!(iterated(src, "A"), @"λx. ite(i₀ ≤ x + 1 ∧ x + 1 < i₀ + κ1, x + 1, ite(i₀ ≤ x ∧ x < i₀ + κ1, x, A₀(x)))");
}

#[test]
fn table2_cases_not_covered_are_star() {
    // A write reading the array (Table 2 cases 1-3); a writer whose
    // condition depends on another counter than the visit's (k counts the
    // even cells only). (Two writing backbones at different offsets are the
    // ∃p form's: `table2_writers_at_different_offsets`.)
    for src in [
        "main(n) { var A, i; A = [0, 0, 0, 0]; i = 1; while (i < n) { A[i] = A[i - 1] + 1; i = i + 1; } return A[0]; }",
        "main(n) { var A, i, k; A = [0, 0, 0, 0]; i = 0; k = 0; while (i < n) { if (k < 2) { A[i] = 1; k = k + 1; } else { A[i] = 5; } i = i + 1; } return A[0]; }",
    ] {
        assert!(iterated(src, "A").contains('⋆'), "{}", iterated(src, "A"));
    }
}

#[test]
fn an_array_filled_in_a_loop_is_read_precisely_afterwards() {
    // After filling A[k] = k for k < 4, A[2] == 2: the assert is unreachable.
    let src = "main() { var A, i; A = [9, 9, 9, 9]; i = 0; while (i < 4) { A[i] = i; i = i + 1; } if (A[2] != 2) { assert(0); } return 0; }";
    let (phi, _, u) = nc(src, Options::default());
    assert_eq!(u, Answer::Unsat, "{phi}");
}

/// φ̂^K of every target of one kind in main, as z3 answers.
fn answers_for(src: &str, kind: crate::TargetKind) -> Vec<Answer> {
    let p = program(src);
    let mut eng = p.engine(Options::default());
    let body = eng.body;
    body.targets
        .iter()
        .filter(|t| t.kind == kind)
        .map(|t| {
            let phi = eng.condition(t.id);
            let phik = unfold(&mut eng.terms, phi, 3).expect("a small unfolding");
            solve(&eng.terms, phik)
        })
        .collect()
}

#[test]
fn aliasing_through_address_of_and_alloc_is_exact() {
    let src = "main(n) { var x, p, q; x = 1; p = &x; *p = n; if (x != n) { assert(0); } q = alloc 3; p = q; *p = 4; if (*q != 4) { assert(0); } return 0; }";
    assert_eq!(
        answers_for(src, crate::TargetKind::Assert),
        vec![Answer::Unsat, Answer::Unsat]
    );
    // Two allocations are different cells.
    let src = "main(n) { var p, q; p = alloc 1; q = alloc 2; *p = n; if (*q != 2) { assert(0); } return 0; }";
    assert_eq!(
        answers_for(src, crate::TargetKind::Assert),
        vec![Answer::Unsat]
    );
}

/// φ̂ of main's only target of `kind`, printed.
fn shown_condition(src: &str, kind: crate::TargetKind) -> String {
    let p = program(src);
    let mut eng = p.engine(Options::default());
    let body = eng.body;
    let t = target_of(body, kind);
    let phi = eng.condition(t);
    eng.terms.show(phi)
}

#[test]
fn null_dereference_needs_the_null_path() {
    let src = "main(n) { var x, p, y; x = 5; p = null; if (n > 0) { p = &x; } y = *p; return y; }";
    insta::assert_snapshot!(shown_condition(src, crate::TargetKind::NullDeref), @"n₀ ≤ 0");
}

#[test]
fn records_are_flattened() {
    let src = "main(n) { var r, s; r = {a: 1, b: n}; r.a = r.b + 1; s = r; if (s.a != n + 1) { assert(0); } return 0; }";
    assert_eq!(
        answers_for(src, crate::TargetKind::Assert),
        vec![Answer::Unsat]
    );
}

#[test]
fn reading_a_never_assigned_variable_through_a_pointer() {
    // p points to x, which is assigned only when n > 0: *p is uninitialized iff n ≤ 0.
    let src = "main(n) { var x, p, y; p = &x; if (n > 0) { x = 1; } y = *p; return y; }";
    insta::assert_snapshot!(shown_condition(src, crate::TargetKind::Uninitialized), @"n₀ ≤ 0");
}

#[test]
fn infeasible_body_backbones_are_pruned_with_the_solver() {
    // The branch setting y needs x > 0 and x < 0: with pruning y is unchanged (rule 1).
    let src = "main(n, x) { var i, y; i = 0; y = 0; while (i < n) { if (x > 0) { if (x < 0) { y = 1; } } i = i + 1; } return y; }";
    insta::assert_snapshot!(iterated(src, "y"), @"y₀");
    let p = program(src);
    let mut pruning = p.engine(Options::default());
    let body = pruning.body;
    pruning.summary(0);
    assert_eq!(pruning.stats.pruned_backbones, 1);
    let mut eng = p.engine(Options {
        prune_with_solver: false,
        ..Options::default()
    });
    let sum = eng.summary(0);
    let y = body.var_id("y").unwrap();
    assert_eq!(
        eng.terms.show(sum.theta.get(state::Slot::Value(y))),
        "ite(0 < κ1, 1, y₀)",
        "without pruning the infeasible writer counts"
    );
}

#[test]
fn table1_overwrite_chains_use_an_existential_last_writer() {
    // Two writers storing different values: x is the last writer's value.
    let src = "main(n, A) { var i, x; i = 0; x = 0; while (i < n) { if (A[i] > 0) { x = 1; } else { x = 2; } i = i + 1; } return x; }";
    insta::assert_snapshot!(iterated(src, "x"), @"ite(ℓ3 = 1, 1, ite(ℓ3 = 2, 2, x₀))");
    // After the loop x is 0, 1 or 2, and nothing else.
    let reach = |cond: &str| {
        let src = format!(
            "main(n, A) {{ var i, x; i = 0; x = 0; while (i < n) {{ if (A[i] > 0) {{ x = 1; }} else {{ x = 2; }} i = i + 1; }} if ({cond}) {{ assert(0); }} return x; }}"
        );
        nc(&src, Options::default()).2
    };
    assert!(is_sat(&reach("x == 2")));
    assert!(is_sat(&reach("x == 1 && n > 3")));
    assert!(is_sat(&reach("x == 0")));
    assert_eq!(reach("x == 3"), Answer::Unsat);
    assert_eq!(reach("x == 0 && n > 0"), Answer::Unsat, "some writer ran");
    // A writer whose value depends on its own counter: the value of its last iteration.
    let src = "main(n, A) { var i, x, c; i = 0; x = 0; c = 0; while (i < n) { if (A[i] > 0) { c = c + 1; x = c; } else { x = 7; } i = i + 1; } return x; }";
    insta::assert_snapshot!(iterated(src, "x"), @"ite(ℓ3 = 1, c₀ + κ1, ite(ℓ3 = 2, 7, x₀))");
    // Depending on another backbone's counter is outside the rules.
    let src = "main(n, A) { var i, x; i = 0; x = 0; while (i < n) { if (A[i] > 0) { x = i; } else { x = 7; } i = i + 1; } return x; }";
    insta::assert_snapshot!(iterated(src, "x"), @"⋆");
}

#[test]
fn the_issta_incompleteness_example_is_now_decided() {
    // ISSTA §3.5: with i = ⋆ the paper's φ̂ is `true` after this non-terminating loop.
    // With the last-writer selector, i ∈ {1, 2} after any number of iterations,
    // so leaving the loop (i ≥ 3) is impossible: the assert is unreachable,
    // which is right.
    let src = "main() { var i; i = 1; while (i < 3) { if (i == 2) { i = 1; } else { i = 2; } } assert(0); return 0; }";
    insta::assert_snapshot!(iterated(src, "i"), @"ite(ℓ3 = 1, 1, ite(ℓ3 = 2, 2, i₀))");
    let (phi, _, u) = nc(src, Options::default());
    assert_eq!(u, Answer::Unsat, "{phi}");
}

#[test]
fn table2_example3_writers_chosen_by_their_condition_at_the_visit() {
    // TR Example 3: for (i = 0; i < n; ++i) if (i % 2 == 0) A[i] = 2*i + 1; else A[i] = 5;
    // (microc has no %: i / 2 * 2 == i). Cell x is visited in iteration x − i₀.
    let src = "main(n) { var A, i; A = [0, 0, 0, 0, 0, 0, 0, 0]; i = 0; while (i < n) { if (i / 2 * 2 == i) { A[i] = 2 * i + 1; } else { A[i] = 5; } i = i + 1; } return A[0]; }";
    let shown = iterated(src, "A");
    assert!(!shown.contains('⋆'), "{shown}");
    // After filling, A[2] = 5 and A[3] = 5 are impossible, A[2] = 5 is not, with n = 8.
    let check = |cond: &str| {
        let src = format!(
            "main(n) {{ var A, i; assume(n == 8); A = [0, 0, 0, 0, 0, 0, 0, 0]; i = 0; while (i < n) {{ if (i / 2 * 2 == i) {{ A[i] = 2 * i + 1; }} else {{ A[i] = 5; }} i = i + 1; }} if ({cond}) {{ assert(0); }} return 0; }}"
        );
        nc(&src, Options::default()).2
    };
    assert_eq!(check("A[2] != 5"), Answer::Unsat, "A[2] = 2·2+1 = 5");
    assert_eq!(check("A[3] != 5"), Answer::Unsat);
    assert_eq!(check("A[4] != 9"), Answer::Unsat);
    assert!(is_sat(&check("A[4] == 9")));
}

#[test]
fn table2_example4_writes_at_a_data_dependent_row() {
    // TR Example 4 (appendix A.1): the row id comes from the input stream.
    //   for (i = 0; i < m; ++i) { id = B[i*(n+1)+1];
    //     for (j = 0; j < n; ++j) A[id][j] = B[id*(n+1)+j+2]; }
    // The inner loop gives λx1,x2. ite(x1 = id ∧ j₀ ≤ x2 < j₀ + κ, B₀(id·(n+1)+x2+2), A₀)
    // (monotone in j); the outer one the TR's ∃p form, with the index
    // equation x1 = id(p) reading the value as B₀(x1·(n+1)+x2+2) and the
    // inner count ν = max(n, 0) inferred. The TR has no in-bounds checks;
    // here they are part of the path condition (0 ≤ id < 3 = len(A)).
    let src = "main(m, n, B) { var A, i, j, id; A = [[0, 0, 0], [0, 0, 0], [0, 0, 0]]; i = 0; while (i < m) { id = B[i * (n + 1) + 1]; j = 0; while (j < n) { A[id][j] = B[id * (n + 1) + j + 2]; j = j + 1; } i = i + 1; } return 0; }";
    let shown = iterated(src, "A");
    assert!(shown.starts_with("λx1,x2. ite(∃p. "), "{shown}");
    assert!(
        shown.ends_with(", B₀(x2 + (n₀ + 1)·x1 + 2), A₀(x1, x2))"),
        "{shown}"
    );
    for part in [
        "p < κ",
        "0 ≤ p",
        "x1 = B₀((n₀ + 1)·(i₀ + p) + 1)",
        "x2 < max(n₀, 0)",
        "0 ≤ x2",
    ] {
        assert!(shown.contains(part), "{part} in {shown}");
    }
}

#[test]
fn table2_last_writer_condition_orders_writes_at_data_dependent_cells() {
    // Different values at the cell B[i]: 5 in iteration 0, 9 after. χ says
    // no later iteration hit x; without it, A[B[0]] = 5 would be possible
    // after two iterations that both hit B[0].
    let loop_ = "A = [0, 0, 0, 0]; i = 0; while (i < m) { id = B[i]; if (0 <= id && id < 4) { if (i == 0) { A[id] = 5; } else { A[id] = 9; } } i = i + 1; }";
    let src = format!("main(m, B) {{ var A, i, id; {loop_} return 0; }}");
    let shown = iterated(&src, "A");
    assert!(shown.contains("∀q"), "a last-writer condition: {shown}");
    assert!(!shown.contains('⋆'), "{shown}");
    let check = |cond: &str| {
        let src = format!(
            "main(m, B) {{ var A, i, id; assume(0 <= m && m <= 4); {loop_} if ({cond}) {{ assert(0); }} return 0; }}"
        );
        // The unfolding: its instances of χ decide these.
        nc(&src, Options::default()).2
    };
    assert_eq!(
        check("m == 2 && B[0] == B[1] && 0 <= B[0] && B[0] < 4 && A[B[0]] == 5"),
        Answer::Unsat
    );
    assert!(is_sat(&check(
        "m == 2 && B[0] != B[1] && 0 <= B[0] && B[0] < 4 && A[B[0]] == 5"
    )));
    assert_eq!(check("A[1] != 0 && A[1] != 5 && A[1] != 9"), Answer::Unsat);
}

#[test]
fn table2_data_dependent_cells_outside_the_rule_are_star() {
    // A value that depends on the iteration (A[B[i]] = i + 1), and a value
    // reading the array (A[B[i]] = A[0] + 1).
    for src in [
        "main(m, B) { var A, i, id; A = [0, 0, 0, 0]; i = 0; while (i < m) { id = B[i]; if (0 <= id && id < 4) { A[id] = i + 1; } i = i + 1; } return 0; }",
        "main(m, B) { var A, i, id; A = [0, 0, 0, 0]; i = 0; while (i < m) { id = B[i]; if (0 <= id && id < 4) { A[id] = A[0] + 1; } i = i + 1; } return 0; }",
    ] {
        let shown = iterated(src, "A");
        assert!(shown.contains('⋆'), "{shown}");
    }
}

#[test]
fn rows_of_nested_arrays_have_a_common_length() {
    // len(A[·]) is 3 after the literal and stays so under element writes:
    // the column index check of A[id][j] is decided (TR Example 4's loop).
    let src = "main(m, B) { var A, i, id; A = [[0, 0, 0], [0, 0, 0]]; i = 0; while (i < m) { id = B[i]; if (0 <= id && id < 2) { A[id][2] = 1; } i = i + 1; } return 0; }";
    let p = program(src);
    let mut eng = p.engine(Options::default());
    let body = eng.body;
    let oob: Vec<ir::TargetId> = body
        .targets
        .iter()
        .filter(|t| t.kind == crate::TargetKind::OutOfBounds)
        .map(|t| t.id)
        .collect();
    assert_eq!(oob.len(), 2, "A[id] and A[id][2]");
    for t in oob {
        let phi = eng.condition(t);
        let shown = eng.terms.show(phi);
        assert_eq!(solve(&eng.terms, phi), Answer::Unsat, "{shown}");
    }
    // A row replaced by a longer one: the rows no longer agree.
    let src = "main(k) { var A; A = [[0, 0], [0, 0]]; A[0] = [1, 2, 3]; if (k == 2) { A[1][k] = 1; } return 0; }";
    let p = program(src);
    let mut eng = p.engine(Options::default());
    let body = eng.body;
    let t = body
        .targets
        .iter()
        .rfind(|t| t.kind == crate::TargetKind::OutOfBounds)
        .unwrap()
        .id;
    let phi = eng.condition(t);
    assert!(is_sat(&solve(&eng.terms, phi)), "{}", eng.terms.show(phi));
}

#[test]
fn table2_writers_at_different_offsets() {
    // Even iterations write 1 at i, odd ones 5 at i + 1: cell 2 gets 5 in
    // iteration 1 and 1 in iteration 2. Not one visit per cell (Example 3's
    // form), so the ∃p form with the last-writer condition.
    let loop_ = "A = [0, 0, 0, 0, 0]; i = 0; while (i < n) { if (i / 2 * 2 == i) { A[i] = 1; } else { A[i + 1] = 5; } i = i + 1; }";
    let check = |cond: &str| {
        let src = format!(
            "main(n) {{ var A, i; assume(0 <= n && n <= 4); {loop_} if ({cond}) {{ assert(0); }} return 0; }}"
        );
        let (_, q, u) = nc(&src, Options::default());
        (q, u)
    };
    let (q, u) = check("n == 3 && A[2] != 1");
    assert!(q == Answer::Unsat || u == Answer::Unsat, "{q:?} {u:?}");
    let (q, u) = check("n == 2 && A[2] != 5");
    assert!(q == Answer::Unsat || u == Answer::Unsat, "{q:?} {u:?}");
    let (_, u) = check("n == 2 && A[2] == 5");
    assert!(is_sat(&u), "{u:?}");
}

/// A `main` that calls one of `functions` functions (`if … else if …`),
/// each with a loop and an assert after it.
fn dispatcher(functions: usize) -> String {
    let mut text = String::new();
    for i in 0..functions {
        text += &format!(
            "f{i}(n) {{ var s, k; s = 0; k = 0; while (k < n) {{ s = s + 2; k = k + 1; }} assert(s != 2 * k + 1); return s; }}\n"
        );
    }
    text += "main(op, n) { var r; r = 0;";
    for i in 0..functions {
        let head = if i == 0 { "" } else { " else" };
        text += &format!("{head} if (op == {i}) {{ r = f{i}(n); }}");
    }
    text + " return r; }\n"
}

#[test]
fn a_condition_holds_only_the_summaries_of_loops_on_the_way_to_its_target() {
    // Every loop's summary in every target's condition made the work per
    // target grow with the program: 60 functions cost 65 ms per target.
    for functions in [3, 12] {
        let p = program(&dispatcher(functions));
        let targets = db::targets(&p.db, p.file);
        let t = targets.iter().find(|t| t.function == "f1").unwrap();
        let raw = tracked::necessary_condition(
            &p.db,
            p.file,
            t.function.clone(),
            t.id,
            Options::default(),
        );
        let prog = db::program(&p.db, p.file).as_ref().unwrap();
        let text = dispatcher(functions);
        let f1 = text.find("f1(n)").unwrap()..text.find("f2(n)").unwrap();
        let loops: Vec<u32> = (raw.value.summaries.iter())
            .map(|(l, _)| prog.body.loops[*l as usize].span.start)
            .collect();
        assert_eq!(loops.len(), 1, "{functions} functions: {loops:?}");
        assert!(f1.contains(&(loops[0] as usize)), "{loops:?} not in {f1:?}");
    }
}
