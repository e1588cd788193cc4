//! Unit tests of the Horn encoding, the certificate checks and the
//! counterexample unrolling, on real Spacer runs.

use super::*;
use crate::db::{self, Database};
use crate::ir;
use crate::term::Node;

/// `f` on `src`'s main and the error vertices of its targets of `kind`.
fn with_targets<R>(
    src: &str,
    kind: crate::TargetKind,
    f: impl FnOnce(&ir::Body, &[ir::NodeId]) -> R,
) -> R {
    let (db, file) = Database::with_file("t.mc", src);
    let prog = db::program(&db, file).as_ref().expect("main");
    let nodes: Vec<_> = (prog.body.targets.iter())
        .filter(|t| t.kind == kind)
        .map(|t| t.node)
        .collect();
    assert!(!nodes.is_empty(), "no target");
    f(&prog.body, &nodes)
}

/// The verdict of the Horn engine on the targets of kind `kind` in
/// `src`'s main.
fn verdict(src: &str, kind: crate::TargetKind) -> Verdict {
    with_targets(src, kind, |body, nodes| {
        decide(body, nodes, Instant::now() + Duration::from_secs(60)).0
    })
}

/// The Horn engine proves the asserts of `src` unreachable.
fn assert_proved(src: &str) {
    let v = verdict(src, crate::TargetKind::Assert);
    assert!(matches!(v, Verdict::Unreachable(_)), "{src}: {v:?}");
}

/// The Horn engine does not prove the asserts of `src` unreachable.
fn assert_not_proved(src: &str) {
    let v = verdict(src, crate::TargetKind::Assert);
    assert!(!matches!(v, Verdict::Unreachable(_)), "{src}: {v:?}");
}

#[test]
fn proves_a_loop_invariant() {
    // code2inv-style: x >= y holds after the loop; the summaries of the
    // necessary conditions lose it. (The bound 100000 is the CLI test's:
    // it takes seconds.)
    let src = "main() { var x, y; x = 1; y = 0; while (y < 1000) { x = x + y; y = y + 1; } assert(x >= y); return 0; }";
    assert_proved(src);
}

#[test]
fn a_violated_assert_has_a_counterexample() {
    // n = 7 ends the loop with x = 7.
    let src = "main(n) { var x; x = 0; while (x < n) { x = x + 1; } assert(x != 7); return 0; }";
    let v = verdict(src, crate::TargetKind::Assert);
    assert!(matches!(v, Verdict::Counterexample(_)), "{v:?}");
}

/// What is read from an array that another variable shares, or through a
/// pointer that is copied, is unknown to the encoding: these asserts hold,
/// and are not proved (never the converse).
#[test]
fn values_in_shared_arrays_and_behind_shared_pointers_are_unknown() {
    for src in [
        "main() { var a, b; a = [1, 2]; b = a; b[0] = 5; assert(a[0] == 5); return 0; }",
        "main() { var p, q; p = alloc 1; q = p; *q = 2; assert(*p == 2); return 0; }",
    ] {
        assert_not_proved(src);
    }
    // An integer property beside them is still proved.
    let src = "main(n) { var x, a, b; a = [1]; b = a; x = 0; while (x < n) { b[0] = x; x = x + 1; } assert(x >= 0); return 0; }";
    assert_proved(src);
}

/// A local array that only ever holds literals and is only indexed has
/// its cells followed (docs/horn-clauses.md §2): through a loop, at a
/// computed index, and not once another variable or a callee shares it.
#[test]
fn a_local_array_that_is_only_indexed_has_its_cells_followed() {
    assert_proved("main() { var a; a = [1, 2]; a[0] = 5; assert(a[0] == 5); return 0; }");
    assert_proved(
        "main(n) { var a, i; a = [0, 0, 0]; i = 0; while (i < 3) { a[i] = a[i] + i; i = i + 1; } assert(a[2] == 2); return 0; }",
    );
    // A literal's cells replace the old ones, past its end too.
    assert_proved(
        "main(n) { var a; a = [1, 2, 3]; while (n > 0) { a = [n, 7]; n = n - 1; } assert(a[1] >= 2); return 0; }",
    );
    // Each of these asserts fails on some run: a write through a copy, a
    // callee's write, an input stored in a cell.
    for src in [
        "main() { var a, b; a = [1, 2]; b = a; b[0] = 5; assert(a[0] == 1); return 0; }",
        "f(b) { b[0] = 9; return 0; } main() { var a, r; a = [1]; r = f(a); assert(a[0] == 1); return 0; }",
        "main(n) { var a; a = [0, 0]; a[1] = n; assert(a[1] != 7); return 0; }",
    ] {
        assert_not_proved(src);
    }
    let v = verdict(
        "main(n) { var a, i; a = [0, 0, 0]; i = 0; while (i < n) { a[i] = 1; i = i + 1; } assert(a[2] == 0); return 0; }",
        crate::TargetKind::Assert,
    );
    assert!(matches!(v, Verdict::Counterexample(_)), "{v:?}");
}

/// A pointer that only ever holds its own `alloc` or an integer's
/// address, and is only dereferenced, has its cell followed
/// (docs/horn-clauses.md §2): its cell through a loop, and a write through
/// it into whichever variable it points to.
#[test]
fn a_pointer_that_is_only_dereferenced_has_its_cell_followed() {
    assert_proved("main() { var x, p; x = 1; p = &x; *p = 2; assert(x == 2); return 0; }");
    assert_proved(
        "main(n) { var p, i; p = alloc 0; i = 0; while (i < n) { *p = *p + 2; i = i + 1; } assert(*p >= 0); return 0; }",
    );
    let either = |claim: &str| {
        format!(
            "main(n) {{ var x, y, p; x = 1; y = 2; p = alloc 3; \
             if (n > 0) {{ p = &x; }} else {{ p = &y; }} *p = 7; assert({claim}); return 0; }}"
        )
    };
    assert_proved(&either("x + y >= 8"));
    // x + y is 9 when p = &x, 8 when p = &y.
    assert_not_proved(&either("x + y == 9"));
    // Copied, the cell is shared: the write through q is not followed.
    assert_not_proved(
        "main() { var p, q; p = alloc 1; q = p; *q = 2; assert(*p == 1); return 0; }",
    );
    // Passed to a function, it may be written there.
    assert_not_proved(
        "set(q) { *q = 5; return 0; } main() { var p, r; p = alloc 1; r = set(p); assert(*p == 1); return 0; }",
    );
}

/// A wrong invariant, put in place of the solver's, fails its checks.
#[test]
fn a_wrong_certificate_is_caught() {
    let src = "main(n) { var x; x = 0; while (x < n) { x = x + 1; } assert(x >= 0); return 0; }";
    let (db, file) = Database::with_file("t.mc", src);
    let prog = db::program(&db, file).as_ref().expect("main");
    let t = &prog.body.targets[prog.body.targets.len() - 1];
    let enc = encode(&prog.body, &[t.node]).expect("encodable");
    // Every predicate `true`: not inductive with the query clause.
    let model: String = (enc.predicates.iter())
        .map(|&p| certificate::constant(&enc, p, true) + "\n")
        .collect();
    let no_quantifiers = |_: &str| Err("quantified".to_string());
    let cert =
        Certificate::from_model(&format!("({model})"), &enc, no_quantifiers).expect("parsed");
    let (solver, _) = horn_solver().expect("a solver for Horn clauses");
    let result = check(
        &solver,
        &z3_only(cert.checks(&enc)),
        enc.clause_count(),
        Instant::now() + Duration::from_secs(60),
    );
    assert!(
        result.as_ref().is_ok_and(|failed| !failed.is_empty()),
        "a wrong invariant passed: {result:?}"
    );
    // Weakening cannot mend it: the query's clause fails.
    let weakened = checked_or_weakened(
        &solver,
        &enc,
        cert,
        Instant::now() + Duration::from_secs(60),
        &mut Scripts::default(),
    );
    assert!(
        weakened.is_err(),
        "a wrong invariant was mended: {weakened:?}"
    );
    // And the solver's own certificate passes.
    let v = decide(
        &prog.body,
        &[t.node],
        Instant::now() + Duration::from_secs(60),
    )
    .0;
    assert!(matches!(v, Verdict::Unreachable(_)), "{v:?}");
}

/// A predicate defined `false` where `true` holds (as Spacer's slicing
/// gave on a generated program) fails its check, and is weakened to
/// `true`; the rest of the invariant, checked again, is a proof.
#[test]
fn a_predicate_wrongly_false_is_weakened_to_true() {
    let src = "main(n) { var x, y; y = 0; while (y < n) { y = y + 1; } x = 0; while (x < n) { x = x + 1; } assert(x >= 0); return 0; }";
    let deadline = || Instant::now() + Duration::from_secs(60);
    let (enc, verdict) = with_targets(src, crate::TargetKind::Assert, |body, nodes| {
        let enc = encode(body, nodes).expect("encodable");
        (enc, decide(body, nodes, deadline()).0)
    });
    assert_eq!(enc.predicates.len(), 2, "one predicate per loop");
    let Verdict::Unreachable(mut cert) = verdict else {
        panic!("not proved: {verdict:?}");
    };
    // The first loop's header, which nothing after it needs to know about.
    let first = enc.predicates[0];
    cert.definitions[0] = certificate::constant(&enc, first, false);
    let (solver, _) = horn_solver().expect("a solver for Horn clauses");
    let failed = check(
        &solver,
        &z3_only(cert.checks(&enc)),
        enc.clause_count(),
        deadline(),
    );
    assert!(
        failed.is_ok_and(|f| !f.is_empty()),
        "`false` passed its check"
    );
    let mended = checked_or_weakened(&solver, &enc, cert, deadline(), &mut Scripts::default())
        .expect("weakened into an invariant");
    assert!(mended.definitions[0].ends_with("Bool true)"), "{mended:?}");
}

/// Division is C's, truncating (`tdiv`, defined in the Horn query and in
/// the checks): -7 / 2 is -3, where SMT-LIB's `div` gives -4.
#[test]
fn division_truncates_toward_zero() {
    let with = |q: &str| {
        format!(
            "main(n) {{ var x, y; x = n - 7; y = x / 2; if (n == 0) {{ assert(y == {q}); }} return 0; }}"
        )
    };
    assert_proved(&with("-3"));
    assert_not_proved(&with("-4"));
}

/// A callee's parameter bound to an input array reads as the input array
/// does (every index holds a value): its bounds check is proved. A copy
/// that is written, directly or through a local sharing its cells, is not
/// taken for the input.
#[test]
fn unchanged_copies_of_input_arrays_read_as_the_input() {
    let src = "f(B, n) { var i, s; i = 0; s = 0; while (i < n) { s = s + B[i]; i = i + 1; } return s; } main(A, n) { return f(A, n); }";
    let v = verdict(src, crate::TargetKind::OutOfBounds);
    assert!(matches!(v, Verdict::Unreachable(_)), "{v:?}");
    for src in [
        "main(A) { var b; b = A; b[0] = A[0] + 1; assert(b[0] == A[0]); return 0; }",
        "main(A) { var b, c; b = A; c = b; c[0] = A[0] + 1; assert(b[0] == A[0]); return 0; }",
        "f(B) { B[0] = B[0] + 1; return 0; } main(A) { var b, r; b = A; r = f(b); assert(b[0] == A[0]); return 0; }",
    ] {
        assert_not_proved(src);
    }
}

/// Spacer gives up on clauses that divide by an unknown; with quotients
/// and products of unknowns read as unknown values, the clauses are
/// linear, and the invariant it finds then (`i >= n` after the loop
/// holds whatever `x` is) is a checked proof.
#[test]
fn quotients_of_unknowns_are_left_unknown_when_spacer_gives_up() {
    let src = "main() { var i, n, x, y; i = 0; n = input; x = input;
        while (i < n) { y = input; while (y < x) { x = input / x; y = y + 1; } i = i + 1; }
        if (n < i) { if (0 < n) { assert(0 == 1); } }
        return 0; }";
    assert_proved(src);
}

/// Leaving a product unknown only ever proves less: an assert that a
/// product breaks is never proved.
#[test]
fn a_product_left_unknown_never_proves_a_violated_assert() {
    for src in [
        "main(n) { var x; x = n * n; assert(x != 49); return 0; }",
        "main(n, m) { var x; x = 0; while (x < n) { x = x + m / n; } assert(x != 3); return 0; }",
    ] {
        assert_not_proved(src);
    }
}

/// An `∃` in Spacer's invariant is eliminated by Z3's `qe` tactic into a
/// quantifier-free definition of the same predicate.
#[test]
fn quantifiers_in_an_invariant_are_eliminated() {
    let definition = "(define-fun P1 ((x!0 Int) (x!1 Int) (x!2 (Array Int Int))) Bool (exists ((x!3 Int)) (and (>= x!0 x!1) (= x!0 (+ 1 x!3)) (= (select x!2 0) x!1))))";
    let (solver, _) = horn_solver().expect("a solver for Horn clauses");
    let free = eliminate_quantifiers(
        &solver,
        definition,
        Instant::now() + Duration::from_secs(60),
    )
    .expect("eliminated");
    assert!(!free.contains("exists"), "{free}");
    assert!(
        free.starts_with("(define-fun P1 ((x!0 Int) (x!1 Int) (x!2 (Array Int Int))) Bool "),
        "{free}"
    );
    assert!(free.contains("x!0") && free.contains("x!1"), "{free}");
}

/// One instruction writes nothing while it reads: the same read twice is
/// the same unknown value, so `while (*p >= *p)` never ends. Different
/// reads stay different unknowns.
#[test]
fn the_same_read_twice_in_one_instruction_is_one_value() {
    let never_ends = "main() { var p, a; p = alloc 1; a = [input];
        while (*p >= *p) { *p = input; }
        assert(0 == 1); return 0; }";
    assert_proved(never_ends);
    let never_ends = "main() { var a; a = [input]; while (a[0] == a[0]) { a[0] = input; } assert(0 == 1); return 0; }";
    assert_proved(never_ends);
    for src in [
        "main() { var p, q; p = alloc input; q = alloc input; while (*p >= *q) { *p = input; } assert(0 == 1); return 0; }",
        "main() { var a; a = [input, input]; while (a[0] >= a[1]) { a[0] = input; } assert(0 == 1); return 0; }",
    ] {
        assert_not_proved(src);
    }
}

/// A long straight run of assignments before a loop (the generator's
/// initial assignments) composes into clauses that bind only what each
/// value reads: binding every changed slot made the text grow past its
/// limit, and the program was refused.
#[test]
fn a_long_run_of_assignments_before_a_loop_is_encoded() {
    let n = 120;
    let vars: Vec<String> = (1..=n).map(|i| format!("v{i}")).collect();
    let inits: String = (1..=n).map(|i| format!("v{i} = {i}; ")).collect();
    let src = format!(
        "main() {{ var x, {}; {inits} x = v1; while (x < v2 + v{n}) {{ x = x + v1; }} assert(x <= v2 + v{n}); return 0; }}",
        vars.join(", ")
    );
    assert_proved(&src);
}

/// The clauses of `src`'s asserts, with `input` read as `inputs` says.
fn encoded(src: &str, inputs: Inputs) -> Encoding {
    let reading = Reading {
        inputs,
        ..Reading::EXACT
    };
    encoded_as(src, reading)
}

fn encoded_as(src: &str, reading: Reading) -> Encoding {
    with_targets(src, crate::TargetKind::Assert, |body, nodes| {
        encode_as(body, nodes, reading).expect("encodable")
    })
}

fn labels(enc: &Encoding) -> Vec<&str> {
    enc.state.iter().map(|v| v.label.as_str()).collect()
}

/// Only what may decide a branch is state (docs/horn-clauses.md §2): a
/// variable that is only output, or only feeds one, is left out, and the
/// proof still holds; one that reaches the assert through a pointer is
/// kept, with the pointer's tag (its own cell, never read, is dead).
#[test]
fn only_what_may_decide_a_branch_is_state() {
    let src = "main(n) { var x, y, w, z, p; x = 0; y = 5; z = 0; p = &z; \
               while (x < n) { x = x + 1; w = y; y = w * 3 + x; *p = x; output y; } \
               assert(z >= 0); return 0; }";
    let enc = encoded(src, Inputs::Stream);
    let state = labels(&enc);
    for kept in ["x", "z", "n", "tag(p)"] {
        assert!(state.contains(&kept), "{kept} left out of {state:?}");
    }
    for left_out in ["y", "w"] {
        assert!(!state.contains(&left_out), "{left_out} kept in {state:?}");
    }
    assert_proved(src);
    // The same loop with the assert about y: now y is state (`w` is
    // too, but dead at the loop's header: `dead`).
    let about_y = src.replace("assert(z >= 0)", "assert(y >= 5)");
    let enc = encoded(&about_y, Inputs::Stream);
    let state = labels(&enc);
    assert!(state.contains(&"y"), "{state:?}");
    assert_proved(&about_y);
}

/// A comparison with a fresh input as a term of a sum can go either way,
/// whatever the rest is: it keeps nothing when inputs are unknowns. The
/// stream's clauses keep it, for the unrolling. A guard that never holds
/// (`7 != 7`) takes no edge, and what only its branch reads is left out.
#[test]
fn a_comparison_with_a_fresh_input_keeps_nothing() {
    let src = "main() { var a, x, y, z; a = [1, 2]; x = 0; y = 5; z = 0; \
               while (a[1] + y == input) { x = x + 1; } \
               while (7 != 7) { if (z > 2) { x = x - 1; } } \
               assert(x >= 0); return 0; }";
    let unknown = encoded(src, Inputs::Unknown);
    let state = labels(&unknown);
    assert!(state.contains(&"x"), "{state:?}");
    for left_out in ["y", "a[1]", "z"] {
        assert!(!state.contains(&left_out), "{left_out} kept in {state:?}");
    }
    let stream = encoded(src, Inputs::Stream);
    let state = labels(&stream);
    for kept in ["y", "a[1]"] {
        assert!(state.contains(&kept), "{kept} left out of {state:?}");
    }
    assert_proved(src);
}

/// The cells of an array are first left unknown, and the clauses say so;
/// a counterexample to them is refined with the cells (`decide_as`).
#[test]
fn array_cells_are_left_unknown_first_and_followed_on_a_counterexample() {
    let src = "main(n) { var a, i; a = [1, 2]; i = 0; \
               while (i < n) { a[0] = a[0] + i; i = i + 1; } assert(a[0] >= 1); return 0; }";
    let coarse = encoded_as(
        src,
        Reading {
            cells: Cells::Unknown,
            ..Reading::EXACT
        },
    );
    assert!(coarse.cells_left_unknown);
    assert!(!labels(&coarse).contains(&"a[0]"), "{:?}", labels(&coarse));
    let fine = encoded_as(src, Reading::EXACT);
    assert!(!fine.cells_left_unknown);
    assert!(labels(&fine).contains(&"a[0]"), "{:?}", labels(&fine));
    assert_proved(src);
}

/// Read as unknowns, the inputs leave no stream and no counter in the
/// state; a counterexample still comes back with them, so that its
/// inputs can be found.
#[test]
fn inputs_are_unknowns_to_spacer_and_a_stream_to_the_unrolling() {
    let src = "main() { var x, s; x = 0; s = 0; while (x < 3) { s = s + input; x = x + 1; } \
               assert(s != 12); return 0; }";
    let stream = [ir::INPUT_STREAM, ir::INPUT_COUNTER];
    let enc = encoded(src, Inputs::Unknown);
    let unknown = labels(&enc);
    assert!(!unknown.iter().any(|l| stream.contains(l)), "{unknown:?}");
    assert!(labels(&encoded(src, Inputs::Stream)).contains(&ir::INPUT_STREAM));
    match verdict(src, crate::TargetKind::Assert) {
        Verdict::Counterexample(enc) => {
            assert!(
                labels(&enc).contains(&ir::INPUT_STREAM),
                "{:?}",
                labels(&enc)
            )
        }
        v => panic!("no counterexample: {v:?}"),
    }
    assert_proved(&src.replace("s + input", "s + 5"));
}

/// A slot that every path from a loop header writes before it reads is
/// dead there: the clauses into the header pass an unknown for it; a slot
/// dead at every header leaves the state.
#[test]
fn a_value_dead_at_a_loop_header_is_not_passed_into_it() {
    let src = "main(n) { var x, t, w, y; x = 0; t = 7; y = 0; \
               while (x < n) { t = x + 1; w = t * 2; if (w > 100) { x = x + 2; } x = t; } \
               t = 5; while (y < t) { y = y + 1; t = t - 1; } assert(y >= 0); return 0; }";
    let enc = encoded(src, Inputs::Stream);
    let state = labels(&enc);
    assert!(!state.contains(&"w"), "{state:?}");
    let slot = |label: &str| state.iter().position(|l| *l == label).expect(label);
    let (t, x) = (slot("t"), slot("x"));
    // Into the first loop's header `t` is an unknown and `x` is passed;
    // into the second, `t` is passed (and `x`, no longer read, is not).
    let first = enc
        .rules
        .iter()
        .find(|r| r.from.is_none())
        .and_then(|r| r.to);
    for r in enc.rules.iter().filter(|r| r.to.is_some()) {
        let dead = |k: usize| matches!(enc.terms.node(r.args[k]), Node::Var(v) if enc.terms.var_name(*v).starts_with("dead."));
        if r.to == first {
            assert!(dead(t) && !dead(x), "{:?}", r.args);
        } else {
            assert!(!dead(t) && dead(x), "{:?}", r.args);
        }
    }
    assert_eq!(enc.predicates.len(), 2);
    assert_proved(src);
}

/// The length of the array a local holds is state for its bounds checks
/// (docs/horn-clauses.md §2): a copy keeps the length of what it copied,
/// and a shorter array assigned on the way and replaced again costs no
/// proof.
#[test]
fn a_local_arrays_length_is_state_for_its_bounds_checks() {
    let program = |read: &str| {
        format!(
            "main(n) {{ var a, b, x; a = [1, 2, 3]; while (n > 0) {{ a = [n]; a = [n, n, n, n]; n = n - 1; }} b = a; a = [0]; x = {read}; return x; }}"
        )
    };
    let oob = crate::TargetKind::OutOfBounds;
    let v = verdict(&program("b[2]"), oob);
    assert!(matches!(v, Verdict::Unreachable(_)), "{v:?}");
    // With n <= 0, b holds the three cells.
    let v = verdict(&program("b[3]"), oob);
    assert!(matches!(v, Verdict::Counterexample(_)), "{v:?}");
    let v = verdict(&program("a[1]"), oob);
    assert!(matches!(v, Verdict::Counterexample(_)), "{v:?}");
}

/// The unrolling takes a copy of an input array whole (`B = A` puts the
/// array value in the copy's slot): the counterexample's state is found.
#[test]
fn the_unrolling_takes_a_copied_input_array_whole() {
    let src = "main(A) { var B, x; B = A; x = B[2]; assert(x != 5); return 0; }";
    let enc = match verdict(src, crate::TargetKind::Assert) {
        Verdict::Counterexample(enc) => enc,
        v => panic!("no counterexample: {v:?}"),
    };
    let accept = |_: &mut smt::Warm| Ok(smt::Judgement::Accept(()));
    let deadline = Instant::now() + Duration::from_secs(30);
    let (found, unrolling) = find_counterexample(&enc, accept, 1, deadline);
    assert!(matches!(found, Search::Found(..)), "{found:?}\n{unrolling}");
}

/// Sums of odd numbers, of squares and of a constant: each assert needs an
/// invariant with a product (`s = i·i`, `6s = (i−1)·i·(2i−1)`, `p = m·i`),
/// which the equalities over monomials of sampled runs find, and the
/// checks prove.
#[test]
fn polynomial_invariants_from_runs_prove_nonlinear_asserts() {
    for src in [
        "main(n) { var s, i; assume(n >= 0); s = 0; i = 0; while (i < n) { s = s + 2 * i + 1; i = i + 1; } assert(s == n * n); return 0; }",
        "main(n) { var s, i; s = 0; i = 0; while (i < n) { s = s + i * i; i = i + 1; } assert(6 * s == (i - 1) * i * (2 * i - 1)); return 0; }",
        "main(m, n) { var p, i; assume(n >= 0); p = 0; i = 0; while (i < n) { p = p + m; i = i + 1; } assert(p == m * n); return 0; }",
    ] {
        assert_proved(src);
    }
}

/// An assert that a run violates is never proved by a guessed invariant,
/// however close to a true one it is.
#[test]
fn invariants_from_runs_never_prove_a_violated_assert() {
    for src in [
        "main(n) { var s, i; assume(n >= 0); s = 0; i = 0; while (i < n) { s = s + 2 * i + 1; i = i + 1; } assert(s != 49); return 0; }",
        "main(n) { var s, i; assume(n >= 0); s = 0; i = 0; while (i < n) { s = s + 2 * i + 1; i = i + 1; } assert(s == n * n + (n / 40)); return 0; }",
    ] {
        // Spacer does not answer on the second: a few seconds are enough
        // for the runs and their checks.
        let v = with_targets(src, crate::TargetKind::Assert, |body, nodes| {
            decide(body, nodes, Instant::now() + Duration::from_secs(3)).0
        });
        assert!(!matches!(v, Verdict::Unreachable(_)), "{src}: {v:?}");
    }
}

/// Euclid's loop by subtraction: the gcd divides both entry values, which
/// only the Bézout ghosts express (`ghosts`); the proof's invariant has
/// them, and a violated divisibility is not proved.
#[test]
fn bezout_ghosts_prove_that_the_gcd_divides_and_nothing_false() {
    let euclid = |assert: &str| {
        format!(
            "main(a, b) {{ var x, y; assume(a > 0); assume(b > 0); x = a; y = b; \
             while (x != y) {{ if (x > y) {{ x = x - y; }} else {{ y = y - x; }} }} {assert} return 0; }}"
        )
    };
    for assert in ["assert(a / x * x == a);", "assert(b / y * y == b);"] {
        let v = verdict(&euclid(assert), crate::TargetKind::Assert);
        let Verdict::Unreachable(cert) = v else {
            panic!("{assert}: {v:?}")
        };
        assert!(
            cert.definitions.iter().any(|d| d.contains("bezout_")),
            "{assert}"
        );
    }
    // x + 1 divides a when a = 2, b = 1; x == a when a divides b.
    for assert in ["assert(a / (x + 1) * (x + 1) != a);", "assert(x != a);"] {
        assert_not_proved(&euclid(assert));
    }
}

/// The Horn engine's verdict on `src`'s asserts with the summaries of the
/// functions its calls cut.
fn summarised_verdict(src: &str, seconds: u64) -> Verdict {
    let (db, file) = Database::with_file("t.mc", src);
    let prog = db::program(&db, file).as_ref().expect("main");
    let summarised = db::summarised_program(&db, file).as_ref();
    assert!(summarised.is_some(), "no summary for {src}");
    let nodes: Vec<_> = (prog.body.targets.iter())
        .filter(|t| t.kind == crate::TargetKind::Assert)
        .map(|t| t.node)
        .collect();
    let program = Program {
        body: &prog.body,
        summarised,
    };
    decide_with(
        program,
        &nodes,
        Instant::now() + Duration::from_secs(seconds),
    )
    .0
}

/// Recursive functions get a summary relating their integer arguments to
/// their result (the procedure encoding): what holds of every result is
/// proved at the call, through two recursive calls per activation and
/// through mutual recursion.
#[test]
fn recursive_functions_are_summarised() {
    for src in [
        "fib(n) { var r; if (n < 2) { r = n; } else { r = fib(n - 1) + fib(n - 2); } return r; }
         main(n) { var f; assume(n >= 0); f = fib(n); assert(f >= 0); return 0; }",
        "sum(n) { var r; if (n <= 0) { r = 0; } else { r = n + sum(n - 1); } return r; }
         main(n) { var s; assume(n >= 0); s = sum(n); assert(s >= n); return 0; }",
        "ev(n) { var r; if (n == 0) { r = 1; } else { r = od(n - 1); } return r; }
         od(n) { var r; if (n == 0) { r = 0; } else { r = ev(n - 1); } return r; }
         main(n) { var r; assume(n >= 0); r = ev(n); assert(r == 0 || r == 1); return 0; }",
        // The parameter assigned before the call: the summary relates the
        // value it was called with.
        "down(n) { var r; if (n <= 0) { r = 0; } else { n = n - 1; r = down(n) + 1; } return r; }
         main(n) { var r; assume(n >= 0); r = down(n); assert(r == n); return 0; }",
    ] {
        let v = summarised_verdict(src, 60);
        assert!(matches!(v, Verdict::Unreachable(_)), "{src}: {v:?}");
    }
}

/// A summary never proves an assert that some call's result violates.
#[test]
fn a_summary_never_proves_a_violated_assert() {
    for src in [
        "fib(n) { var r; if (n < 2) { r = n; } else { r = fib(n - 1) + fib(n - 2); } return r; }
         main(n) { var f; assume(n >= 0); f = fib(n); assert(f != 8); return 0; }",
        "sum(n) { var r; if (n <= 0) { r = 0; } else { r = n + sum(n - 1); } return r; }
         main(n) { var s; s = sum(n); assert(s > n); return 0; }",
        "down(n) { var r; if (n <= 0) { r = 0; } else { n = n - 1; r = down(n) + 1; } return r; }
         main(n) { var r; assume(n >= 0); r = down(n); assert(r != 5); return 0; }",
    ] {
        let v = summarised_verdict(src, 10);
        assert!(!matches!(v, Verdict::Unreachable(_)), "{src}: {v:?}");
    }
}

/// The checked invariant is printed as a microc condition that the
/// language's parser reads back and the clauses' checks pass again; a
/// weaker condition fails them, so the re-check can fail.
#[test]
fn the_invariant_is_printed_in_microc_and_checked_again_as_printed() {
    let src = "main() { var x, y; x = 1; y = 0; while (y < 1000) { x = x + y; y = y + 1; } assert(x >= y); return 0; }";
    let Verdict::Unreachable(mut cert) = verdict(src, crate::TargetKind::Assert) else {
        panic!("not proved");
    };
    assert_eq!(cert.explained.len(), 1);
    assert!(cert.explained[0].microc, "{:?}", cert.explained);
    let deadline = Instant::now() + Duration::from_secs(30);
    let (solver, _) = horn_solver().expect("z3");
    let checks = cert.checks.clone().expect("checked");
    let printed = cert.microc_clauses();
    assert!(printed[0].is_some(), "{printed:?}");
    assert!(holds(&solver, &cert, &checks, &printed, deadline));
    assert!(!holds(&solver, &cert, &checks, &[Some(vec![])], deadline));
    let y_only = vec![Some(vec![vec!["y >= 0".to_string()]])];
    assert!(!holds(&solver, &cert, &checks, &y_only, deadline));
    // Simpler, and still a proof.
    let before = cert.explained[0].text.len();
    simplify_explained(&mut cert, deadline);
    let simpler = &cert.explained[0];
    assert!(
        simpler.microc && simpler.text.len() <= before,
        "{simpler:?}"
    );
    let as_printed = vec![Some(vec![vec![simpler.text.clone()]])];
    assert!(holds(&solver, &cert, &checks, &as_printed, deadline));
}

fn z3_only(script: String) -> CheckScripts {
    CheckScripts {
        z3: script,
        cvc5: None,
    }
}

/// Two solvers' answers on a clause: a counterexample from either fails
/// it, an `unsat` from either (and none of `sat`) proves it.
#[test]
fn a_clause_holds_when_one_solver_proves_it_and_none_refutes_it() {
    let unknown = || Answer::Unknown("unknown".into());
    assert_eq!(stronger(&unknown(), Answer::Unsat), Answer::Unsat);
    assert_eq!(stronger(&Answer::Unsat, unknown()), Answer::Unsat);
    assert_eq!(stronger(&Answer::Unsat, Answer::Sat), Answer::Sat);
    assert_eq!(stronger(&Answer::Sat, Answer::Unsat), Answer::Sat);
    assert_eq!(stronger(&unknown(), unknown()), unknown());
}
