//! The value facts (`ir::value_facts`, the portfolio's first proof) never
//! prove a target that a run hits: on the soundness generator's programs
//! (null, pointers to locals, records, nested arrays, calls and recursion,
//! with `null` more often than elsewhere) and on the thesis generator's
//! programs with plugged errors. The facts cost no solver, so many
//! programs run. The test also counts the proofs, so that it fails if the
//! facts stop proving anything.
//!
//! `SOUNDNESS_FACTS_PROGRAMS=20000` for a long run.

use super::generator::{Knobs, Rng, program, witness};
use super::{generated_db, run_generated, seed_or};
use crate::common::env_or;
use apc::db::{self, Database, SourceFile};
use apc::interp::{Outcome, Witness};
use apc::syntax::LineIndex;

/// Per program: (targets proved, proved targets hit by a run, targets hit).
fn attack(
    db: &Database,
    file: SourceFile,
    src: &str,
    runs: &mut dyn Iterator<Item = Witness>,
) -> (usize, Vec<String>, usize) {
    let targets = db::targets(db, file);
    let proved: Vec<&db::Target> = targets
        .iter()
        .filter(|t| db::proved_by_value_facts(db, file, t).is_some())
        .collect();
    let parsed = db::parse(db, file);
    let lines = LineIndex::new(src);
    let (mut refuted, mut hit) = (Vec::new(), 0);
    for w in runs {
        let Ok(res) = run_generated(&parsed.program, &w) else {
            continue;
        };
        let Outcome::Error { kind, span } = res.outcome else {
            continue;
        };
        hit += 1;
        let at = lines.line_col(src, span.start);
        if proved
            .iter()
            .any(|t| t.kind == kind && (t.line, t.col) == at)
        {
            refuted.push(format!(
                "{kind} at {}:{} proved, but a run hits it\n{src}",
                at.0, at.1
            ));
        }
    }
    (proved.len(), refuted, hit)
}

#[test]
fn the_value_facts_never_prove_a_target_a_run_hits() {
    let n = env_or("SOUNDNESS_FACTS_PROGRAMS", 150);
    let mut r = Rng(seed_or(0x5eed_fac7_0000_0001));
    let knobs = Knobs::with(&[("null", 30), ("pointers", 70), ("nested", 40)]);
    let (mut proved, mut refuted, mut hit) = (0, Vec::new(), 0);
    for p in 0..n {
        let src = program(&mut r, &knobs);
        let (db, file) = generated_db(p, &src);
        let mut runs = (0..12)
            .map(|_| witness(&mut r))
            .collect::<Vec<_>>()
            .into_iter();
        let (k, mut bad, h) = attack(&db, file, &src, &mut runs);
        proved += k;
        hit += h;
        refuted.append(&mut bad);
    }
    let thesis = thesis_programs(n as u64 / 20, &mut r);
    assert!(refuted.is_empty(), "{}", refuted.join("\n"));
    assert!(
        proved > n && hit > n / 4,
        "{proved} proofs, {hit} targets hit"
    );
    eprintln!(
        "value facts: {n} programs, {hit} runs hit a target, {proved} targets proved, 0 contradicted; {thesis}"
    );
}

/// The thesis generator's programs with plugged errors, `per_set` of each
/// such set, attacked by random input streams.
fn thesis_programs(per_set: u64, r: &mut Rng) -> String {
    let (mut proved, mut hit) = (0, 0);
    let sets = apc::generator::THESIS_SETS
        .iter()
        .filter(|s| s.error_guaranteed);
    for set in sets {
        for i in 0..per_set {
            let src = apc::generator::generate_source(&set.params(), 7, i);
            let (db, file) = Database::with_file("gen.mc", &src);
            let mut runs = (0..20)
                .map(|_| stream_witness(r))
                .collect::<Vec<_>>()
                .into_iter();
            let (k, refuted, h) = attack(&db, file, &src, &mut runs);
            assert!(refuted.is_empty(), "{}: {}", set.name, refuted.join("\n"));
            proved += k;
            hit += h;
        }
    }
    format!("thesis sets with errors: {proved} proved, {hit} runs hit a target")
}

/// A random input stream of small numbers (the thesis's programs read
/// `input` only).
fn stream_witness(r: &mut Rng) -> Witness {
    let len = (r.next() % 40) as usize;
    let input = (0..len)
        .map(|_| ((r.next() % 23) as i64 - 8).into())
        .collect();
    Witness {
        args: Vec::new(),
        input,
    }
}

/// Every way a `null` or a shorter array reaches a variable without an
/// assignment to it: each program's run fails at its last statement,
/// which the facts must not prove; the checks before it they do prove.
#[test]
fn every_route_into_a_variable_is_followed() {
    let routes = [
        // through a pointer to the variable
        "main() { var y, x, p; y = 1; x = &y; p = &x; *p = null; return *x; }",
        // out of a variable, read through a pointer to it
        "main() { var y, x, p, q; y = 1; x = &y; p = &x; x = null; q = *p; return *q; }",
        // through an allocated cell, and an array literal's element
        "main() { var y, p, q; y = 1; p = alloc null; q = *p; return *q; }",
        "main() { var y, a, x; y = 1; a = [&y, null]; x = a[1]; return *x; }",
        // through a callee's parameter and result
        "id(q) { return q; } main() { var y, x; y = 1; x = &y; x = id(null); return *x; }",
        // through an element cell
        "main() { var y, a, x; y = 1; a = [&y]; a[0] = null; x = a[0]; return *x; }",
        // through a record field behind a pointer
        "main() { var y, r, x; y = 1; r = alloc {f: &y}; r.f = null; x = r.f; return *x; }",
        // round a loop, into a read before the assignment
        "main() { var a, i, x; a = [1, 2, 3]; i = 0; while (i < 2) { x = a[2]; a = [1]; i = i + 1; } return 0; }",
        // into a parameter the callee also assigns (followed per vertex)
        "f(q) { var y, z; y = 1; z = *q; q = &y; q = null; return z; } main() { var x; x = f(null); return 0; }",
        // through a record literal's field
        "main() { var y, r, x; y = 1; r = {f: &y, g: null}; x = r.g; return *x; }",
        // through a cell a callee writes
        "set(p) { *p = null; return 0; } main() { var y, x, z; y = 1; x = &y; z = set(&x); return *x; }",
        // a shorter array through a pointer
        "main() { var a, p; a = [1, 2, 3]; p = &a; *p = [1]; return a[2]; }",
        // a shorter array through a nested element
        "main() { var m, r; m = [[1, 2, 3]]; m[0] = [1]; r = m[0]; return r[2]; }",
        // assigned null after its test
        "main() { var y, p; y = 1; p = &y; if (p != null) { p = null; y = *p; } return y; }",
        // tested on one branch only, before the join
        "main() { var y, p; y = 1; p = null; if (y > 5) { if (p != null) { y = 2; } } return *p; }",
        // tested, then written through a pointer to it
        "main() { var y, p, q; y = 1; p = &y; q = &p; if (p != null) { *q = null; y = *p; } return y; }",
        // dereferenced, then assigned null round a loop
        "main() { var y, p, i; y = 1; p = &y; i = 0; while (i < 2) { y = *p; p = null; i = i + 1; } return 0; }",
    ];
    for src in routes {
        the_failing_check_is_not_proved(src);
    }
    // What they do prove: pointers from `alloc` and `&`, and literal
    // indices below every length.
    // And a pointer past a test against null, or past a dereference,
    // until it is assigned again.
    for safe in [
        "main() { var y, p, a; y = 1; p = alloc 3; p = &y; a = [1, 2]; a = [4, 5, 6]; return *p + a[1]; }",
        "main() { var y, p; y = 1; p = null; if (y > 0) { p = &y; } if (p != null) { y = *p + *p; } return y; }",
    ] {
        every_check_is_proved(safe);
    }
}

/// The run of `src` on no input fails at a check that the facts do not
/// prove.
fn the_failing_check_is_not_proved(src: &str) {
    let (db, file) = generated_db(0, src);
    let parsed = db::parse(&db, file);
    let run = run_generated(&parsed.program, &Witness::default()).expect("runs");
    let Outcome::Error { kind, span } = run.outcome else {
        panic!("{src}: the run does not fail: {:?}", run.outcome);
    };
    let at = LineIndex::new(src).line_col(src, span.start);
    let targets = db::targets(&db, file);
    let failing = targets
        .iter()
        .find(|t| t.kind == kind && (t.line, t.col) == at)
        .expect("the failure is a target");
    assert_eq!(
        db::proved_by_value_facts(&db, file, failing),
        None,
        "{src}: {kind} proved, but the run hits it"
    );
}

fn every_check_is_proved(src: &str) {
    let (db, file) = generated_db(0, src);
    for t in db::targets(&db, file) {
        assert!(
            db::proved_by_value_facts(&db, file, &t).is_some(),
            "{src}: {t:?} not proved"
        );
    }
}

/// Every way a zero divisor or an index out of bounds reaches a check
/// that the value ranges (`ir::ranges`) must see: arrays and records
/// shared by reference, writes through pointers and in callees, loops
/// that change a value on a later iteration, widening, and arithmetic as
/// microc does it. Each run fails at its last check, which must not be
/// proved; the programs after them are proved whole.
#[test]
fn every_route_into_a_range_is_followed() {
    let routes = [
        // an array and a record shared by reference
        "main() { var a, b, x; a = [1, 2]; b = a; b[0] = 0; x = 10 / a[0]; return x; }",
        "main() { var r, s, x; r = {f: 1}; s = r; s.f = 0; x = 10 / r.f; return x; }",
        // a record field written through a pointer to a cell holding it
        "main() { var r, p, x; r = {f: 1}; p = alloc r; (*p).f = 0; x = 10 / r.f; return x; }",
        // an element a callee writes, and a callee's result
        "z(a) { a[0] = 0; return 0; } main() { var a, x, y; a = [1]; y = z(a); x = 10 / a[0]; return x; }",
        "f() { return 0; } main() { var x; x = 10 / f(); return x; }",
        // an integer written through a pointer to it
        "main() { var y, p, x; y = 1; p = &y; *p = 0; x = 10 / y; return x; }",
        // an element of a nested array, through a row shared by reference
        "main() { var m, r, x; m = [[1]]; r = m[0]; r[0] = 0; x = 10 / m[0][0]; return x; }",
        // a counter that reaches the length
        "main() { var i, a, x; i = 0; a = [1, 2, 3]; while (i < 3) { i = i + 1; } x = a[i]; return x; }",
        // a value that changes on a later iteration
        "main() { var i, d, x; i = 0; d = 1; while (i < 3) { x = 10 / d; if (i == 1) { d = 0; } i = i + 1; } return 0; }",
        // a loop that runs once, then once more from its second visit
        "main() { var i, j, a, x; i = 5; j = 1; a = [1, 2, 3]; while (i < 7) { if (j > 6) { a = [1]; } j = 7; i = i + 1; } x = a[2]; return x; }",
        // widening past the bound a step jumps over
        "main() { var i, x; i = 10; while (i > 0) { i = i - 3; } x = 10 / (i + 2); return x; }",
        // a cell counted down in a loop
        "main() { var a, i, x; a = [5]; i = 0; while (i < 5) { a[0] = a[0] - 1; i = i + 1; } x = 10 / a[0]; return x; }",
        // truncating division, negation, comparisons and `!` as values
        "main() { var x, y; x = -7 / 8; y = 10 / x; return y; }",
        "main() { var x, y; x = !5 + (3 < 2); y = 10 / x; return y; }",
        // numbers beyond 64 bits
        "main() { var x, y; x = 1152921504606846976 * 1152921504606846976; y = 10 / (x - 1329227995784915872903807060280344576); return y; }",
        // an input (a copy of an input array: tests/programs/input_array_copy.mc)
        "main() { var x, y; x = input; y = 10 / x; return y; }",
    ];
    for src in routes {
        the_failing_check_is_not_proved(src);
    }
    for safe in [
        // a branch whose guard no value allows
        "main() { var i, a, x; i = 5; a = [1, 2, 3]; while (i < 6) { if (i > 7) { a = [1]; } i = i + 1; } x = a[2]; return x; }",
        // a loop that runs once: its second visit does not reach the body
        "main() { var i, j, a; i = 5; j = 1; a = [1, 2, 3]; while (i < 6) { while (6 < j) { a = [1]; } j = 7; i = i + 1; } return a[2]; }",
        // a counter that stops at a literal, and one that keeps its sign
        "main() { var i, a; i = 0; while (i < 7) { i = i + 1; } a = [1, 2, 3, 4, 5, 6, 7, 8]; return a[i]; }",
        "main() { var i, x; i = 1; while (i < 100) { i = i * 2; } x = 10 / i; return x; }",
        // a record field that is never zero
        "main() { var r, i, x; r = {f: -1}; i = 0; while (i < 3) { if (i == 1) { r = {f: 5}; } i = i + 1; } x = 10 / r.f; return x; }",
    ] {
        every_check_is_proved(safe);
    }
}
