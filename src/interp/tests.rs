//! Unit tests of the reference interpreter: each runtime error kind with its
//! exact place, the value/pointer model, input arrays, limits, witnesses.

use super::*;
use crate::syntax::{LineIndex, parse};
use std::time::Duration;

fn program(src: &str) -> Program {
    let (p, diags) = parse(src);
    assert!(
        diags.iter().all(|d| !d.is_error()),
        "parse errors: {diags:?}"
    );
    p
}

fn int(n: i64) -> ArgValue {
    ArgValue::Int(n.into())
}

fn list(xs: &[i64]) -> ArgValue {
    ArgValue::List(xs.iter().map(|&x| int(x)).collect())
}

fn witness(args: &[(&str, ArgValue)], input: &[i64]) -> Witness {
    Witness {
        args: args
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect(),
        input: input.iter().map(|&n| n.into()).collect(),
    }
}

fn run_w(src: &str, w: &Witness) -> RunResult {
    run(&program(src), w, Limits::default()).expect("run failed")
}

fn run_src(src: &str) -> RunResult {
    run_w(src, &Witness::default())
}

fn outputs(r: &RunResult) -> Vec<i64> {
    r.outputs.iter().map(|n| n.try_into().unwrap()).collect()
}

fn returned(r: &RunResult) -> i64 {
    match &r.outcome {
        Outcome::Returned(n) => n.try_into().unwrap(),
        o => panic!("expected a return, got {o:?}"),
    }
}

/// (line, col) of a span's start.
fn lc(src: &str, span: Span) -> (u32, u32) {
    LineIndex::new(src).line_col(src, span.start)
}

/// The kind and (line, col) of the runtime error the run stopped at.
fn error_at(src: &str, w: &Witness) -> (TargetKind, (u32, u32)) {
    match run_w(src, w).outcome {
        Outcome::Error { kind, span } => (kind, lc(src, span)),
        o => panic!("expected a runtime error, got {o:?}"),
    }
}

fn err(src: &str) -> (TargetKind, (u32, u32)) {
    error_at(src, &Witness::default())
}

// ---- the five error kinds, at their exact places ------------------------------

const LISTING_2_2: &str = "
main() {
    var arr, res, a, ptr;
    arr = [1, 0, 2, 2];
    ptr = null;
    res = 1 / arr[1];
    res = a + a;
    res = arr[4];
    res = *ptr;
    return 0;
}
";

#[test]
fn thesis_listing_2_2_fails_at_line_6() {
    assert_eq!(err(LISTING_2_2), (TargetKind::DivByZero, (6, 13)));
    // Each later line fails in its own way once the earlier ones are gone.
    let no_div = LISTING_2_2.replace("1 / arr[1]", "1 / arr[0]");
    assert_eq!(err(&no_div), (TargetKind::Uninitialized, (7, 11)));
    let no_uninit = no_div.replace("a + a", "0 + 0");
    assert_eq!(err(&no_uninit), (TargetKind::OutOfBounds, (8, 14)));
    let no_oob = no_uninit.replace("arr[4]", "arr[3]");
    assert_eq!(err(&no_oob), (TargetKind::NullDeref, (9, 11)));
}

#[test]
fn assert_fails_at_the_keyword() {
    let src =
        "main() {\n  var x;\n  x = 1;\n  assert(x == 1);\n     assert(x == 2);\n  return 0;\n}";
    assert_eq!(err(src), (TargetKind::Assert, (5, 6)));
}

#[test]
fn div_by_zero_at_the_slash_in_a_later_function() {
    // The failing function is not the first: spans must be absolute.
    let src = "main() {\n  var r;\n  r = f(0);\n  return r;\n}\nf(d) {\n  var q;\n  q = 10 /  d;\n  return q;\n}";
    assert_eq!(err(src), (TargetKind::DivByZero, (8, 10)));
}

#[test]
fn null_deref_places() {
    // `*p` reads at the star.
    let src = "main() {\n  var p, x;\n  p = null;\n  x = 1 + *p;\n  return x;\n}";
    assert_eq!(err(src), (TargetKind::NullDeref, (4, 11)));
    // Storing through null, also at the star.
    let src = "main() {\n  var p;\n  p = null;\n  *p = 3;\n  return 0;\n}";
    assert_eq!(err(src), (TargetKind::NullDeref, (4, 3)));
    // `p.f` through a null pointer, at the dot, reading and writing.
    let src = "main() {\n  var p, x;\n  p = null;\n  x = p.f;\n  return x;\n}";
    assert_eq!(err(src), (TargetKind::NullDeref, (4, 8)));
    let src = "main() {\n  var p;\n  p = null;\n  p.f = 1;\n  return 0;\n}";
    assert_eq!(err(src), (TargetKind::NullDeref, (4, 4)));
    // `(*p).f` with p null: the star fails first.
    let src = "main() {\n  var p, x;\n  p = null;\n  x = (*p).f;\n  return x;\n}";
    assert_eq!(err(src), (TargetKind::NullDeref, (4, 8)));
}

#[test]
fn out_of_bounds_at_the_bracket() {
    let src = "main() {\n  var a, x;\n  a = [1, 2];\n  x = a[-1];\n  return x;\n}";
    assert_eq!(err(src), (TargetKind::OutOfBounds, (4, 8)));
    // Writes are checked too.
    let src = "main() {\n  var a;\n  a = [1, 2];\n  a[2] = 0;\n  return 0;\n}";
    assert_eq!(err(src), (TargetKind::OutOfBounds, (4, 4)));
    // The inner index of a matrix.
    let src = "main() {\n  var m, x;\n  m = [[1], [2, 3]];\n  x = m[1][2];\n  return x;\n}";
    assert_eq!(err(src), (TargetKind::OutOfBounds, (4, 11)));
    // Through a call in the index (the copy path), same place.
    let src = "id(n) { return n; }\nmain() {\n  var a, x;\n  a = [1, 2];\n  x = a[id(5)];\n  return x;\n}";
    assert_eq!(err(src), (TargetKind::OutOfBounds, (5, 8)));
}

#[test]
fn uninitialized_places() {
    // A variable read, at the variable.
    let src = "main() {\n  var x, y;\n  y = 1 + x;\n  return y;\n}";
    assert_eq!(err(src), (TargetKind::Uninitialized, (3, 11)));
    // Writing an element of an uninitialised array reads the base.
    let src = "main() {\n  var a;\n  a[0] = 1;\n  return 0;\n}";
    assert_eq!(err(src), (TargetKind::Uninitialized, (3, 3)));
    let src = "main() {\n  var r;\n  r.f = 1;\n  return 0;\n}";
    assert_eq!(err(src), (TargetKind::Uninitialized, (3, 3)));
    // The pointee of `*p`, at the star.
    let src = "main() {\n  var p, x, y;\n  p = &x;\n  y = *p;\n  return y;\n}";
    assert_eq!(err(src), (TargetKind::Uninitialized, (4, 7)));
    // `p.f` with p pointing to an uninitialised record, at the dot.
    let src = "main() {\n  var p, r, y;\n  p = &r;\n  y = p.f;\n  return y;\n}";
    assert_eq!(err(src), (TargetKind::Uninitialized, (4, 8)));
    // The return expression is checked too.
    let src = "main() {\n  var x;\n  return x;\n}";
    assert_eq!(err(src), (TargetKind::Uninitialized, (3, 10)));
}

// ---- arithmetic and logic -----------------------------------------------------

#[test]
fn division_truncates_toward_zero() {
    let src = "main() { output -7 / 2; output 7 / -2; output -7 / -2; output 7 / 2; output -1 / 3; return 0; }";
    assert_eq!(outputs(&run_src(src)), vec![-3, -3, 3, 3, 0]);
}

#[test]
fn integers_are_unbounded() {
    let src = "main() { var x, i; x = 1; i = 0; while (i < 100) { x = x * 2; i = i + 1; } output x; return 0; }";
    let r = run_src(src);
    assert_eq!(r.outputs, vec![BigInt::from(1) << 100]);
}

#[test]
fn logic_short_circuits_and_yields_0_or_1() {
    let src = "main() { output 0 && 1 / 0; output 1 || 1 / 0; output 2 && 3; output 0 || -4; output !5; output !0; output -(3); return 0; }";
    assert_eq!(outputs(&run_src(src)), vec![0, 1, 1, 1, 0, 1, -3]);
    // The right operand is evaluated when needed.
    let src = "main() { var x; x = 1 && 1 / 0; return x; }";
    assert_eq!(err(src).0, TargetKind::DivByZero);
}

#[test]
fn comparisons_and_pointer_equality() {
    let src = "main() { var p, q, x, y;
        p = &x; q = &x;
        output p == q; output p == &y; output p != null; output null == null;
        output 3 < 4; output 4 <= 4; output 3 > 4; output 3 >= 4; output 2 == 2; output 2 != 2;
        return 0; }";
    assert_eq!(outputs(&run_src(src)), vec![1, 0, 1, 1, 1, 1, 0, 0, 1, 0]);
}

// ---- the value and pointer model ----------------------------------------------

#[test]
fn pointers_alias_variables_and_allocated_cells() {
    let src = "main() { var x, p; p = &x; *p = 5; output x; x = 6; output *p; return 0; }";
    assert_eq!(outputs(&run_src(src)), vec![5, 6]);
    let src = "main() { var p, q; p = alloc 1; q = p; *q = 7; output *p; output p == q; q = alloc 7; output p == q; return 0; }";
    assert_eq!(outputs(&run_src(src)), vec![7, 1, 0]);
    // A callee writes the caller's variable through a pointer.
    let src = "set(p, v) { *p = v; return 0; }\nmain() { var x, d; d = set(&x, 42); return x; }";
    assert_eq!(returned(&run_src(src)), 42);
}

/// Arrays and records hold references to cells (docs/microc.md, "Memory
/// model"): copies share their elements. Each expectation is worked out by
/// hand in the comment beside it.
#[test]
fn copies_of_arrays_and_records_share_their_cells() {
    // b = a copies a's cell references: b[0] = 9 writes the cell a[0] reads.
    let src =
        "main() { var a, b; a = [1, 2]; b = a; b[0] = 9; output a[0]; output b[0]; return 0; }";
    assert_eq!(outputs(&run_src(src)), vec![9, 9]);
    // Likewise for a record's fields.
    let src =
        "main() { var r, s; r = {f: 1, g: 2}; s = r; s.g = 5; output r.g; output s.g; return 0; }";
    assert_eq!(outputs(&run_src(src)), vec![5, 5]);
    // Assigning a whole new array to b rebinds b only: a keeps its cells.
    let src = "main() { var a, b; a = [1]; b = a; b = [2]; b[0] = 3; output a[0]; return 0; }";
    assert_eq!(outputs(&run_src(src)), vec![1]);
}

#[test]
fn arguments_and_results_share_cells_with_the_caller() {
    // f writes through its parameter into main's array: a[0] becomes 9.
    let src = "f(a) { a[0] = 9; return a[0]; }\nmain() { var a, x; a = [1]; x = f(a); output a[0]; return x; }";
    let r = run_src(src);
    assert_eq!((outputs(&r), returned(&r)), (vec![9], 9));
    // id returns its argument's references: writing the result writes a.
    let src = "id(a) { return a; }\nmain() { var a, b; a = [1, 2]; b = id(a); b[1] = 7; output a[1]; return 0; }";
    assert_eq!(outputs(&run_src(src)), vec![7]);
    // A record passed to a function: the field write is seen by the caller.
    let src = "set(r) { r.f = 4; return 0; }\nmain() { var r, x; r = {f: 1}; x = set(r); output r.f; return x; }";
    assert_eq!(outputs(&run_src(src)), vec![4]);
}

#[test]
fn nested_arrays_share_rows() {
    // The thesis's "array with multiple dimensions": b = a[0] shares the
    // row, so a[0][1] becomes 1 + 1 = 2, a[1][2] = 2 * 2 * 10 = 40: 42.
    let src = "main() { var a, b; a = [[0, 1], [2, 3, 4]]; b = a[0]; b[1] = b[1] + 1;
        a[1][2] = a[1][0] * 2 * 10; return a[0][1] + a[1][2]; }";
    assert_eq!(returned(&run_src(src)), 42);
    // A literal of arrays holds the rows' references: writing m[0][0]
    // writes a[0]; replacing the row m[1] leaves b alone.
    let src = "main() { var a, b, m; a = [1]; b = [2]; m = [a, b]; m[0][0] = 5; m[1] = [6];
        output a[0]; output b[0]; output m[1][0]; return 0; }";
    assert_eq!(outputs(&run_src(src)), vec![5, 2, 6]);
    // alloc stores the value, so its cells are shared too.
    let src = "main() { var r, q; r = {f: 1}; q = alloc r; q.f = 9; output r.f; output (*q).f; return 0; }";
    assert_eq!(outputs(&run_src(src)), vec![9, 9]);
}

#[test]
fn input_arrays_are_read_only_values() {
    // b = A gives b its own copy: A[0] still reads the witness's 3.
    let src = "main(A) { var b; b = A; b[0] = 9; output A[0]; output b[0]; return 0; }";
    let w = Witness {
        args: vec![("A".into(), ArgValue::List(vec![ArgValue::Int(3.into())]))],
        input: vec![],
    };
    assert_eq!(outputs(&run_w(src, &w)), vec![3, 9]);
}

#[test]
fn literals_beyond_the_cell_limit_end_like_the_step_limit() {
    let src = "main() { var a; while (1) { a = [1, 2, 3, 4, 5, 6, 7, 8]; } return 0; }";
    let r = run_src(src);
    assert!(
        matches!(r.outcome, Outcome::StepLimit { .. }),
        "{:?}",
        r.outcome
    );
    // The cells ran out (4,000,000 / 8 literals of 3 steps each), not the steps.
    assert!(r.steps < 2_000_000, "{}", r.steps);
}

#[test]
fn nested_places_are_updated_in_place() {
    let src = "main() { var x, p, m, y, r;
        x = [{f: 1}, {f: 2}]; x[1].f = 5; output x[1].f;
        p = &m; m = [1, 2, 3]; (*p)[2] = 7; output m[2];
        r = [{field: &y}]; *r[0].field = 8; output y;
        m = [[1, 2], [3, 4]]; m[1][0] = 6; output m[1][0]; output m[0][0];
        p = alloc {f: 1}; p.f = 4; output p.f; output (*p).f;
        return 0; }";
    assert_eq!(outputs(&run_src(src)), vec![5, 7, 8, 6, 1, 4, 4]);
}

#[test]
fn assignment_evaluates_rhs_first_then_the_place() {
    // The rhs reads 1, then the index reads 0.
    let src = "main() { var a; a = [0, 0]; a[input] = input; output a[0]; output a[1]; return 0; }";
    assert_eq!(outputs(&run_w(src, &witness(&[], &[1, 0]))), vec![1, 0]);
    // An error in the rhs wins over one in the place.
    let src = "main() { var a; a[0] = 1 / 0; return 0; }";
    assert_eq!(err(src).0, TargetKind::DivByZero);
}

#[test]
fn reads_evaluate_the_array_before_a_call_in_the_index() {
    let src = "set(p) { *p = [7, 7]; return 1; }
main() { var a, x;
    a = [1, 2]; x = a[set(&a)]; output x; output a[1];
    a = [1, 2]; a[set(&a)] = 5; output a[0]; output a[1];
    return 0; }";
    // The read sees `a` as before the call; the write goes to `a` after it.
    assert_eq!(outputs(&run_src(src)), vec![2, 7, 7, 5]);
}

#[test]
fn address_of_uninitialized_variable_is_not_a_read() {
    let src = "main() { var x, p; p = &x; *p = 3; return x; }";
    assert_eq!(returned(&run_src(src)), 3);
}

// ---- inputs ---------------------------------------------------------------------

#[test]
fn long_runs_of_one_input_print_as_value_times_count() {
    let mut input: Vec<BigInt> = vec![BigInt::from(5)];
    input.extend(std::iter::repeat_n(BigInt::from(0), 20));
    input.extend(std::iter::repeat_n(BigInt::from(-1), 3));
    assert_eq!(crate::interp::input_runs(&input), "5, 0*20, -1, -1, -1");
    let w = Witness {
        args: vec![],
        input: input[..3].to_vec(),
    };
    assert_eq!(w.to_string(), "input=[5, 0, 0]");
}

#[test]
fn input_stream_and_exhaustion() {
    let src = "main() { var a, b; a = input; b = input; return a - b; }";
    let r = run_w(src, &witness(&[], &[10, 3]));
    assert_eq!((returned(&r), r.input_exhausted), (7, false));
    let r = run_w(src, &witness(&[], &[10]));
    assert_eq!((returned(&r), r.input_exhausted), (10, true));
}

#[test]
fn input_arrays_never_go_out_of_bounds() {
    let src = "main(n, s) { output s[0]; output s[1]; output s[2]; output s[-1]; output s[1000000000000000000000]; return n; }";
    let r = run_w(
        src,
        &witness(&[("n", int(2)), ("s", list(&[72, 101]))], &[]),
    );
    assert_eq!((outputs(&r), returned(&r)), (vec![72, 101, 0, 0, 0], 2));
}

#[test]
fn input_arrays_2d() {
    let src = "main(m) { output m[0][1]; output m[1][0]; output m[1][5]; output m[7][0]; output m[-1][-1]; return 0; }";
    let m = ArgValue::List(vec![list(&[1, 2]), list(&[3])]);
    assert_eq!(
        outputs(&run_w(src, &witness(&[("m", m)], &[]))),
        vec![2, 3, 0, 0, 0]
    );
    // An empty list is fine for a matrix too: every element reads as 0.
    let empty = ArgValue::List(vec![]);
    assert_eq!(
        outputs(&run_w(src, &witness(&[("m", empty.clone())], &[]))),
        vec![0; 5]
    );
    // A row taken whole and indexed later (the analysis knows m is 2-D).
    let src = "main(m) { var r; r = m[3]; output r[0]; return 0; }";
    assert_eq!(
        outputs(&run_w(src, &witness(&[("m", empty)], &[]))),
        vec![0]
    );
}

#[test]
fn input_array_writes_affect_the_copy_only() {
    let src = "main(p) { var b; b = p; b[3] = 7; output b[3]; output p[3]; p[0] = 5; output p[0]; output b[0]; return 0; }";
    let r = run_w(src, &witness(&[("p", list(&[1]))], &[]));
    assert_eq!(outputs(&r), vec![7, 0, 5, 1]);
    let src = "main(m) { m[4][1] = 5; output m[4][1]; output m[4][0]; output m[0][0]; return 0; }";
    let m = ArgValue::List(vec![list(&[9])]);
    assert_eq!(
        outputs(&run_w(src, &witness(&[("m", m)], &[]))),
        vec![5, 0, 9]
    );
}

#[test]
fn input_arrays_through_helper_functions() {
    let src = "len(s) { var i; i = 0; while (s[i] != 0) { i = i + 1; } return i; }
main(s) { var n; n = len(s); return n; }";
    let r = run_w(src, &witness(&[("s", list(&[5, 6, 7]))], &[]));
    assert_eq!(returned(&r), 3);
    // The analysis follows s into len: an integer is a bad witness.
    let e = run(
        &program(src),
        &witness(&[("s", int(3))], &[]),
        Limits::default(),
    );
    assert!(matches!(e, Err(RunError::BadWitness(_))), "{e:?}");
}

// ---- witnesses ------------------------------------------------------------------

#[test]
fn bad_witnesses() {
    let src = "main(n, s) { var x; x = s[n]; return x; }";
    let p = program(src);
    let bad = |w: Witness| match run(&p, &w, Limits::default()) {
        Err(RunError::BadWitness(m)) => m,
        r => panic!("expected a bad witness, got {r:?}"),
    };
    let m = bad(witness(
        &[("n", int(0)), ("s", list(&[])), ("t", int(1))],
        &[],
    ));
    assert!(m.contains("`t` is not a parameter of main"), "{m}");
    let m = bad(witness(&[("n", int(0))], &[]));
    assert!(m.contains("no value given for parameter `s`"), "{m}");
    let m = bad(witness(&[("n", int(0)), ("s", int(4))], &[]));
    assert!(m.contains("input array"), "{m}");
    let m = bad(witness(
        &[("n", int(0)), ("n", int(0)), ("s", list(&[]))],
        &[],
    ));
    assert!(m.contains("given twice"), "{m}");
    // A list where an integer is used: detected when it is used.
    let m = bad(witness(&[("n", list(&[1])), ("s", list(&[]))], &[]));
    assert!(m.contains("list"), "{m}");
    // Mixed and too shallow lists.
    let mixed = ArgValue::List(vec![int(1), list(&[2])]);
    let m = bad(witness(&[("n", int(0)), ("s", mixed)], &[]));
    assert!(m.contains("all integers or all lists"), "{m}");
    let p = program("main(m) { return m[0][0]; }");
    let r = run(
        &p,
        &witness(&[("m", list(&[1, 2]))], &[]),
        Limits::default(),
    );
    assert!(matches!(r, Err(RunError::BadWitness(_))), "{r:?}");
}

// ---- ending a run ---------------------------------------------------------------

#[test]
fn failed_assume_ends_silently() {
    let src = "main() {\n  output 1;\n  assume(input > 0);\n  output 2;\n  return 0;\n}";
    let r = run_w(src, &witness(&[], &[0]));
    assert_eq!(outputs(&r), vec![1]);
    match r.outcome {
        Outcome::AssumeFailed { span } => assert_eq!(lc(src, span), (3, 3)),
        o => panic!("{o:?}"),
    }
    let r = run_w(src, &witness(&[], &[1]));
    assert_eq!((outputs(&r), returned(&r)), (vec![1, 2], 0));
}

#[test]
fn step_limit_on_an_infinite_loop() {
    let src = "main() {\n  while (1) {}\n  return 0;\n}";
    let limits = Limits {
        max_steps: 1001,
        ..Limits::default()
    };
    // Steps: the while (its first test), then {} and a test per iteration;
    // step 1002 would be a block.
    let r = run(&program(src), &Witness::default(), limits).unwrap();
    assert_eq!(r.steps, 1001);
    match r.outcome {
        Outcome::StepLimit { span } => assert_eq!(lc(src, span), (2, 13)),
        o => panic!("{o:?}"),
    }
    let r = run(
        &program(src),
        &Witness::default(),
        Limits {
            max_steps: 1000,
            ..limits
        },
    )
    .unwrap();
    match r.outcome {
        Outcome::StepLimit { span } => assert_eq!(lc(src, span), (2, 3)),
        o => panic!("{o:?}"),
    }
}

#[test]
fn step_count_of_a_simple_run() {
    // Two statements, one call (whose body has one statement).
    let src = "f() { var y; y = 1; return y; }\nmain() { var x; x = f(); output x; return x; }";
    assert_eq!(run_src(src).steps, 4);
}

#[test]
fn huge_products_end_as_a_step_limit() {
    let src = "main() { var x; x = 3; while (1) { x = x * x; } return 0; }";
    assert!(matches!(run_src(src).outcome, Outcome::StepLimit { .. }));
}

#[test]
fn deep_recursion_works() {
    let src = "f(n) { var r; if (n == 0) { r = 0; } else { r = 1 + f(n - 1); } return r; }\nmain() { return f(5000); }";
    assert_eq!(returned(&run_src(src)), 5000);
}

#[test]
fn call_depth_limit_at_the_call() {
    let src = "main() {\n  return f(0);\n}\nf(n) {\n  var r;\n  r = 1 + f(n + 1);\n  return r;\n}";
    let limits = Limits {
        max_call_depth: 100,
        ..Limits::default()
    };
    let r = run(&program(src), &Witness::default(), limits).unwrap();
    match r.outcome {
        Outcome::CallDepthLimit { span } => {
            assert_eq!(lc(src, span), (6, 11));
            assert_eq!(&src[span.start as usize..span.end as usize], "f(n + 1)");
        }
        o => panic!("{o:?}"),
    }
}

#[test]
fn host_stack_exhaustion_is_a_call_depth_limit() {
    let src = "f(n) { var r; r = 1 + f(n + 1); return r; }\nmain() { return f(0); }";
    let limits = Limits {
        max_steps: u64::MAX,
        max_call_depth: u32::MAX,
    };
    let (r, _) =
        run_with_stack(&program(src), &Witness::default(), limits, 8 << 20, false).unwrap();
    assert!(matches!(r.outcome, Outcome::CallDepthLimit { .. }), "{r:?}");
}

// ---- long operator chains --------------------------------------------------------

/// `n` operands `x + x + …`, `x && x && …` and `x - y + z - y + …`, with the
/// values they have for x = 1, y = 2, z = 3.
fn long_chains(n: usize) -> Vec<(String, i64)> {
    let mixed_value = 1
        + (1..n as i64)
            .map(|i| [1, -2, 3][(i % 3) as usize])
            .sum::<i64>();
    vec![
        (vec!["x"; n].join(" + "), n as i64),
        (vec!["x"; n].join(" && "), 1),
        (vec!["(x - 1)"; n].join(" && "), 0),
        (
            crate::syntax::parser::mixed_chain(n, ["x", "y", "z"]),
            mixed_value,
        ),
    ]
}

#[test]
fn long_chains_evaluate_left_to_right() {
    // A chain of the largest length the parser accepts; operands with
    // effects (`input`, a division) show the order and the failure point.
    crate::syntax::parser::on_big_stack(|| {
        let n = crate::syntax::parser::MAX_CHAIN_OPERANDS as usize;
        for (chain, value) in long_chains(n) {
            let src = format!("main(x, y, z) {{ var r; r = {chain}; return r; }}");
            let w = witness(&[("x", int(1)), ("y", int(2)), ("z", int(3))], &[]);
            assert_eq!(returned(&run_w(&src, &w)), value, "{:.40}", chain);
        }
        let src = format!(
            "main() {{ output {}; return 0; }}",
            vec!["input"; n].join(" - ")
        );
        let input: Vec<i64> = (0..n as i64).collect();
        let r = run_w(&src, &witness(&[], &input));
        assert_eq!(outputs(&r), vec![-(1..n as i64).sum::<i64>()]);
        let src = format!(
            "main(x) {{ return {} + 1 / (x - 1); }}",
            vec!["x"; n - 1].join(" + ")
        );
        let (kind, at) = error_at(&src, &witness(&[("x", int(1))], &[]));
        assert_eq!(
            (kind, at),
            (
                TargetKind::DivByZero,
                lc(&src, Span::new(src.find('/').unwrap() as u32, 0))
            )
        );
    });
}

#[test]
fn a_call_at_the_bottom_of_a_long_chain_costs_no_stack_per_operand() {
    // `f(n - 1) + 1 + 1 + …`: the call is the leftmost operand, at the
    // bottom of a 10,000-deep tree. Evaluated by recursion down the tree,
    // each of the 200 microc calls would hold 10,000 host frames, and the
    // run would end at the stack guard (a call-depth limit) instead.
    crate::syntax::parser::on_big_stack(|| {
        let n = crate::syntax::parser::MAX_CHAIN_OPERANDS as usize;
        let src = format!(
            "f(n) {{ var r; r = 0; if (n > 0) {{ r = f(n - 1){}; }} return r; }}\nmain() {{ return f(200); }}",
            " + 1".repeat(n - 1)
        );
        let (r, _) = run_with_stack(
            &program(&src),
            &Witness::default(),
            Limits::default(),
            64 << 20,
            false,
        )
        .unwrap();
        assert_eq!(returned(&r), 200 * (n as i64 - 1), "{:?}", r.outcome);
    });
}

// ---- ill-typed programs: errors, never panics -----------------------------------

#[test]
fn ill_typed_programs_are_internal_errors() {
    for src in [
        "main() { var x; x = 1 + null; return x; }",
        "main() { var x; x = [1]; x = x + 1; return 0; }",
        "main() { var x; x = 1; x = x[0]; return 0; }",
        "main() { var x; x = 1; x = x.f; return 0; }",
        "main() { var x; x = {f: 1}; x = x.g; return 0; }",
        "main() { var x; x = 1; x = *x; return 0; }",
        "main() { var x; x = [1] == [1]; return 0; }",
        "main() { var x; x = g(1); return 0; }",
        "f(a) { return a; }\nmain() { var x; x = f(1, 2); return 0; }",
        "main() { var x; x = y; return 0; }",
        "main() { return null; }",
        "main() { var x; if ([1]) { x = 1; } return 0; }",
        "main() { var x; x = 1; x[0] = 2; return 0; }",
        "f() { return 0; }",
    ] {
        let r = run(&program(src), &Witness::default(), Limits::default());
        assert!(matches!(r, Err(RunError::Internal(_))), "{src}: {r:?}");
    }
}

// ---- the annotated example programs ---------------------------------------------

/// Replays every `// @run WITNESS => RESULT` line of `tests/programs/*.mc`.
#[test]
fn annotated_programs_replay() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut checked = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "mc") {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        let (p, diags) = parse(&src);
        if diags.iter().any(|d| d.is_error()) {
            continue;
        }
        for line in src.lines() {
            let Some(rest) = line.trim().strip_prefix("// @run ") else {
                continue;
            };
            let Some((w, expect)) = rest.split_once(" => ") else {
                continue;
            };
            let w: serde_json::Value = serde_json::from_str(w).unwrap();
            let expect: serde_json::Value = serde_json::from_str(expect).unwrap();
            let witness = json_witness(&w);
            let mut limits = Limits::default();
            if let Some(n) = w.get("max_steps").and_then(|n| n.as_u64()) {
                limits.max_steps = n;
            }
            let r = run(&p, &witness, limits)
                .unwrap_or_else(|e| panic!("{}: {rest}: {e}", path.display()));
            let got = result_json(&src, &r);
            for (k, v) in expect.as_object().unwrap() {
                assert_eq!(&got[k], v, "{}: {rest}: field {k}", path.display());
            }
            checked += 1;
        }
    }
    eprintln!("replayed {checked} annotated runs");
}

fn json_arg(v: &serde_json::Value) -> ArgValue {
    match v {
        serde_json::Value::Array(xs) => ArgValue::List(xs.iter().map(json_arg).collect()),
        n => ArgValue::Int(n.to_string().parse().unwrap()),
    }
}

fn json_witness(w: &serde_json::Value) -> Witness {
    let mut out = Witness::default();
    match w.get("args") {
        Some(serde_json::Value::Object(args)) => {
            for (k, v) in args {
                out.args.push((k.clone(), json_arg(v)));
            }
        }
        // The command line's form: `n=3,s=[1,[2]]`.
        Some(serde_json::Value::String(s)) => {
            let mut depth = 0;
            let mut start = 0;
            let mut items = Vec::new();
            for (i, c) in s.char_indices() {
                match c {
                    '[' => depth += 1,
                    ']' => depth -= 1,
                    ',' if depth == 0 => {
                        items.push(&s[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            items.push(&s[start..]);
            for item in items.into_iter().filter(|t| !t.trim().is_empty()) {
                let (k, v) = item.split_once('=').unwrap();
                let v: serde_json::Value = serde_json::from_str(v.trim()).unwrap();
                out.args.push((k.trim().to_string(), json_arg(&v)));
            }
        }
        _ => {}
    }
    match w.get("input") {
        Some(serde_json::Value::String(s)) => {
            out.input = s
                .split(',')
                .filter(|t| !t.trim().is_empty())
                .map(|t| t.trim().parse().unwrap())
                .collect()
        }
        Some(serde_json::Value::Array(xs)) => {
            out.input = xs.iter().map(|x| x.to_string().parse().unwrap()).collect()
        }
        _ => {}
    }
    out
}

fn result_json(src: &str, r: &RunResult) -> serde_json::Value {
    let num = |n: &BigInt| serde_json::Value::Number(n.to_string().parse().unwrap());
    let (ret, error) = match &r.outcome {
        Outcome::Returned(n) => (num(n), serde_json::Value::Null),
        Outcome::Error { kind, span } => {
            let (line, col) = lc(src, *span);
            (
                serde_json::Value::Null,
                serde_json::json!({"kind": kind.as_str(), "line": line, "col": col}),
            )
        }
        _ => (serde_json::Value::Null, serde_json::Value::Null),
    };
    serde_json::json!({
        "outputs": r.outputs.iter().map(num).collect::<Vec<_>>(),
        "return": ret,
        "error": error,
        "input_exhausted": r.input_exhausted,
        "assume_failed": matches!(r.outcome, Outcome::AssumeFailed { .. }),
    })
}

/// A run records the witness cells it reads: elements of main's arrays,
/// given or not (not at negative indices, nor where the program wrote),
/// and how many stream values.
#[test]
fn a_reading_run_records_the_input_cells_it_reads() {
    let src = "main(A, M, n) {\n  var x, y, B;\n  x = A[1] + A[5] + A[-1] + M[0][2] + M[3][1];\n  B = A;\n  B[7] = 1;\n  y = input + input + B[7] + B[2];\n  return x + y + n;\n}\n";
    let w = Witness {
        args: vec![
            ("A".into(), ArgValue::List(vec![ArgValue::Int(4.into()); 3])),
            ("M".into(), ArgValue::List(vec![ArgValue::List(vec![])])),
            ("n".into(), ArgValue::Int(1.into())),
        ],
        input: vec![9.into()],
    };
    let (r, reads) = run_reading(&program(src), &w, Limits::default()).unwrap();
    assert_eq!(r.outcome, Outcome::Returned(19.into()));
    let cells: Vec<(usize, Vec<usize>)> = reads.cells.into_iter().collect();
    assert_eq!(
        cells,
        [
            (0, vec![1]),
            (0, vec![2]),
            (0, vec![5]),
            (1, vec![0, 2]),
            (1, vec![3, 1])
        ]
    );
    assert_eq!(reads.stream, 2);
    assert!(!reads.overflow);
}

/// A run keeps at most `MAX_OUTPUTS` outputs and then ends like the step
/// limit does, on both engines: a replay has no step limit, and a loop
/// that outputs would otherwise fill memory.
#[test]
fn outputs_past_the_limit_end_the_run() {
    let src = "main() {\n  var x;\n  x = 0;\n  while (1) {\n    output x;\n    x = x + 1;\n  }\n  return x;\n}";
    let limits = Limits {
        max_steps: u64::MAX,
        ..Limits::default()
    };
    let p = program(src);
    let fast = super::run_fast(&p, &Witness::default(), limits).unwrap();
    let reference = super::run_reference(&p, &Witness::default(), limits).unwrap();
    assert_eq!(fast, reference);
    assert_eq!(fast.outputs.len(), super::exec::MAX_OUTPUTS);
    match fast.outcome {
        Outcome::StepLimit { span } => assert_eq!(lc(src, span), (5, 5)),
        o => panic!("{o:?}"),
    }
}

/// A traced run is the reference's run: the same outcome, outputs and
/// steps; its trace folds each loop into its iterations, with the values
/// its test read when it left, and ends at the failure.
#[test]
fn a_traced_run_is_the_run_and_folds_its_loops() {
    let src = "main(n) { var i, s; i = 0; s = 0;\nwhile (i < n) { if (i > 1) { s = s + i; } i = i + 1; }\nif (s > 4) { assert(s < 5); } return s; }";
    let w = witness(&[("n", int(4))], &[]);
    let p = program(src);
    let plain = run_reference(&p, &w, Limits::default()).expect("runs");
    let (traced, trace) = trace::run_traced(&p, &w, Limits::default()).expect("runs");
    assert_eq!(plain, traced);
    let steps = trace.steps(src);
    let shown: Vec<(u32, &str, &str)> = (steps.iter())
        .map(|s| (s.line, s.code.as_str(), s.what.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            (
                2,
                "while (i < n)",
                "4 iterations, then left (inside: if at 2:17 true 2×, false 2×)"
            ),
            (3, "if (s > 4)", "true"),
            (3, "assert(s < 5)", "fails"),
        ]
    );
    assert_eq!(
        steps[0].values,
        [("i".into(), "4".into()), ("n".into(), "4".into())]
    );
    assert_eq!(steps[2].values, [("s".into(), "5".into())]);
    // A run that returns has no failure; a run of main with no branch, no step.
    let (_, ok) =
        trace::run_traced(&p, &witness(&[("n", int(1))], &[]), Limits::default()).expect("runs");
    assert!(ok.failure.is_none() && ok.steps(src).len() == 2);
}

/// A recursion deeper than the native tier's stack allows hands back
/// (on a test thread's small stack) or finishes as the reference does
/// (on a big one); it never overflows the host stack.
#[test]
fn native_recursion_stays_within_the_host_stack() {
    let p = program(
        "down(n) { var r; if (n == 0) { r = 0; } else { r = 1 + down(n - 1); } return r; }\nmain(n) { return down(n); }\n",
    );
    let limits = Limits {
        max_steps: 10_000_000,
        max_call_depth: 1_000_000,
    };
    let w = Witness {
        args: vec![("n".into(), ArgValue::Int(BigInt::from(5_000)))],
        input: vec![],
    };
    let reference = run_reference(&p, &w, limits).unwrap();
    assert_eq!(reference.outcome, Outcome::Returned(BigInt::from(5_000)));
    let small = std::thread::Builder::new().stack_size(1 << 20);
    let on_small = small
        .spawn({
            let (p, w) = (p.clone(), w.clone());
            move || Prepared::new(&p).run_native(&w, limits)
        })
        .unwrap()
        .join()
        .unwrap();
    assert!(on_small.is_err(), "{on_small:?}");
    let big = std::thread::Builder::new().stack_size(256 << 20);
    let on_big = big
        .spawn(move || Prepared::new(&p).run_native(&w, limits))
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(on_big, Ok(reference));
}

/// A run under a token that another thread stops (an editor's edit
/// cancelling a check) ends at once as a step limit, on the interpreter's
/// own thread too, though its deadline is far.
#[test]
fn a_stopped_token_ends_a_run_in_flight() {
    let p = program("main(n) { var i; i = 0; while (i < n) { i = i + 1; } return i; }\n");
    let w = Witness {
        args: vec![("n".into(), ArgValue::Int(BigInt::from(i64::MAX)))],
        input: vec![],
    };
    let token = crate::deadline::Stop::until(std::time::Instant::now() + Duration::from_secs(600));
    let stopper = token.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        stopper.stop();
    });
    let started = std::time::Instant::now();
    let limits = Limits {
        max_steps: u64::MAX,
        ..Limits::default()
    };
    // The reference interpreter runs on a thread of its own.
    let result = (token.run(|| run_reference(&p, &w, limits))).expect("not unwound");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert!(
        matches!(
            result,
            Ok(RunResult {
                outcome: Outcome::StepLimit { .. },
                ..
            })
        ),
        "{result:?}"
    );
}
