use super::*;
use crate::smt::{Answer, run_z3};
use crate::syntax::parse;
use crate::types::check_program;

fn main_body(src: &str) -> Body {
    let (p, d) = parse(src);
    assert!(d.iter().all(|d| !d.is_error()), "{d:?}");
    let t = check_program(&p);
    assert!(t.is_ok(), "{:?}", t.diagnostics);
    let bodies = crate::ir::lower_program(&p, &t);
    bodies.into_iter().find(|b| b.name == "main").unwrap()
}

fn solve(terms: &Terms, phi: TermId) -> Answer {
    let mut script = String::from("(set-option :smt.mbqi true)\n");
    script.push_str(&crate::term::to_smtlib(terms, &[phi]));
    run_z3(&script, Duration::from_secs(20))
}

/// φ̂ and φ̂^K of the only `assert` target of main, and both answers.
fn nc(src: &str, opts: Options) -> (String, Answer, Answer) {
    let body = main_body(src);
    let t = body
        .targets
        .iter()
        .find(|t| t.kind == crate::TargetKind::Assert)
        .expect("an assert")
        .id;
    let mut eng = Engine::new(&body, opts);
    let phi = eng.condition(t);
    let shown = eng.terms.show(phi);
    let q = solve(&eng.terms, phi);
    let phik = unfold(&mut eng.terms, phi, 25);
    let u = solve(&eng.terms, phik);
    (shown, q, u)
}

fn is_sat(a: &Answer) -> bool {
    matches!(a, Answer::Sat(_))
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
    let body = main_body(RUNNING);
    let mut eng = Engine::new(&body, Options::default());
    let sum = eng.summary(0);
    assert_eq!(sum.counters.len(), 2, "one counter per body backbone");
    let show = |eng: &Engine, name: &str| {
        let v = body.var_id(name).unwrap();
        eng.terms.show(sum.theta.get(state::Slot::Value(v)))
    };
    // θ(k) = k₀ + κ1, θ(i) = i₀ + κ1 + κ2 (the paper's Section 2.1).
    assert_eq!(show(&eng, "k"), "k₀ + κ1");
    assert_eq!(show(&eng, "i"), "i₀ + κ1 + κ2");
    let (phi, q, u) = nc(RUNNING, Options::default());
    assert!(is_sat(&u), "{phi}: {u:?}");
    assert!(
        is_sat(&q) || matches!(q, Answer::Unknown(_)),
        "{phi}: {q:?}"
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
