//! Unit tests of lowering, loops, backbones, inlining and the value facts.

use super::*;
use crate::syntax::parse;
use crate::types::check_program;

fn lower(src: &str) -> Vec<Body> {
    let (p, d) = parse(src);
    assert!(d.iter().all(|d| !d.is_error()), "{d:?}");
    let t = check_program(&p);
    assert!(t.is_ok(), "{:?}", t.diagnostics);
    lower_program(&p, &t)
}

fn kinds(b: &Body) -> Vec<TargetKind> {
    b.targets.iter().map(|t| t.kind).collect()
}

#[test]
fn every_kind_of_target_is_an_error_vertex() {
    let b = &lower(
        "main(n) { var a, p, r, u; a = [1, 2]; p = null; r = 10 / n + a[n] + *p; assert(r > 0); r = u; return r; }",
    )[0];
    assert_eq!(
        kinds(b),
        vec![
            TargetKind::DivByZero,
            TargetKind::OutOfBounds,
            TargetKind::NullDeref,
            TargetKind::Assert,
            TargetKind::Uninitialized
        ]
    );
    for t in &b.targets {
        assert_eq!(b.node_kinds[t.node as usize], NodeKind::Error(t.id));
        // Exactly one edge enters the error vertex: the failing assume.
        let ins: Vec<&Edge> = b.edges.iter().filter(|e| e.to == t.node).collect();
        assert_eq!(ins.len(), 1);
        assert!(matches!(ins[0].instr, Instr::Assume(_)));
    }
}

#[test]
fn safe_by_construction_sites_are_not_targets() {
    let b = &lower("main(A, B, n) { var x; x = n / 2; x = A[x] + B[n][0]; return x; }")[0];
    assert!(kinds(b).is_empty(), "{:?}", kinds(b));
}

#[test]
fn connectives_become_branching_with_atomic_assumes() {
    let b = &lower(
        "main(a, b) { var x; x = 0; if (a > 0 && !(b < 1) || a == 5) { x = 1; } return x; }",
    )[0];
    for e in &b.edges {
        if let Instr::Assume(c) = &e.instr {
            assert!(matches!(c, Cond::Cmp(..)), "{c:?}");
        }
    }
    let out = successors_count(b);
    assert!(out.iter().all(|&n| n <= 2));
    // 3 ways to make the condition true, 2 to make it false... through one join:
    // a>0&&b>=1 | a>0&&b<1&&a==5 | a<=0&&a==5 | a>0&&b<1&&a!=5 | a<=0&&a!=5
    assert_eq!(backbones(b, b.exit, 100).count, 5);
}

fn successors_count(b: &Body) -> Vec<usize> {
    b.successors().iter().map(|s| s.len()).collect()
}

#[test]
fn loop_headers_have_only_skip_in_edges_and_nest() {
    let b = &lower(
        "main(m, n) { var i, j; i = 0; j = 0; while (i < m) { j = i; while (j < n) { j = j + 1; } i = i + 1; } return j; }",
    )[0];
    assert_eq!(b.loops.len(), 2);
    assert_eq!(b.loops[1].parent, Some(0));
    for l in &b.loops {
        for e in b.edges.iter().filter(|e| e.to == l.header) {
            assert_eq!(e.instr, Instr::Skip);
        }
        assert!(l.nodes.contains(&l.header));
    }
    // Outer body: one kind of iteration (the inner loop is summarised, not unrolled).
    assert_eq!(loop_backbones(b, &b.loops[0], 10).count, 1);
    assert_eq!(loop_backbones(b, &b.loops[1], 10).count, 1);
    assert_eq!(backbones(b, b.exit, 10).count, 1);
}

#[test]
fn input_is_a_stream_read() {
    let b = &lower("main() { var x; x = input + input; return x; }")[0];
    let text = to_text(b, &|_| String::new());
    assert!(text.contains("$t0 := $in[$ic]"), "{text}");
    assert!(text.contains("$ic := $ic + 1"), "{text}");
}

#[test]
fn sequential_ifs_double_the_backbones() {
    let src = format!(
        "main(a) {{ var x; x = 0; {} return x; }}",
        "if (a > x) { x = x + 1; } ".repeat(10)
    );
    let b = &lower(&src)[0];
    assert_eq!(backbones(b, b.exit, 0).count, 1024);
}

#[test]
fn long_chains_lower_and_print() {
    // Lowering, definite assignment and both printers recurse over the
    // expression tree; a chain of the longest accepted length is a
    // left-deep tree that tall, so this runs on the CLI's stack.
    crate::syntax::parser::on_big_stack(|| {
        let n = crate::syntax::parser::MAX_CHAIN_OPERANDS as usize;
        let mixed: String = (1..n)
            .map(|i| if i % 2 == 1 { " - u" } else { " + x" })
            .collect();
        let src = format!(
            "main(x) {{ var u, s; s = {}; if ({}) {{ s = x{mixed}; }} return s; }}",
            vec!["x"; n].join(" + "),
            vec!["x > 0"; n].join(" && ")
        );
        let b = &lower(&src)[0];
        // `&&` is branching: one assume per operand on the way in, and one
        // way out per operand.
        let assumes = b
            .edges
            .iter()
            .filter(|e| matches!(e.instr, Instr::Assume(_)))
            .count();
        assert_eq!(assumes, 2 * n + 1);
        // Only the first read of the unassigned `u` is a target.
        assert_eq!(kinds(b), vec![TargetKind::Uninitialized]);
        let text = to_text(b, &|_| String::new());
        assert!(text.contains(&format!("{}x + x)", "(".repeat(n - 2))));
        let _ = to_dot(&[b], &|_, _| String::new());
    });
}

/// A guard false by its form alone: literals, or an expression compared
/// with itself; nothing that depends on a value, and no division by zero.
#[test]
fn a_condition_that_never_holds_by_its_form() {
    let int = |n: i64| Expr::Int(n.into());
    let x = || Expr::Var(0);
    let sum = |a: Expr, b: Expr| Expr::Binary(BinOp::Add, Box::new(a), Box::new(b));
    let never = [
        Cond::Cmp(CmpOp::Ne, int(7), int(7)),
        Cond::Cmp(CmpOp::Gt, x(), x()),
        Cond::Cmp(CmpOp::Lt, sum(int(2), int(5)), int(5)),
    ];
    for c in &never {
        assert!(c.never_holds(), "{c:?}");
    }
    let maybe = [
        Cond::Cmp(CmpOp::Ge, x(), x()),
        Cond::Cmp(CmpOp::Lt, x(), int(5)),
        Cond::Cmp(CmpOp::Ge, sum(int(2), int(5)), int(5)),
        Cond::Cmp(
            CmpOp::Eq,
            Expr::Binary(BinOp::Div, Box::new(int(1)), Box::new(int(0))),
            int(0),
        ),
    ];
    for c in &maybe {
        assert!(!c.never_holds(), "{c:?}");
    }
}

/// The slice of a one-function program for its target at `line`.
fn sliced(src: &str, line: u32) -> (Body, Option<Body>) {
    let body = lower(src).remove(0);
    let t = (body.targets.iter())
        .find(|t| {
            crate::syntax::LineIndex::new(src)
                .line_col(src, t.span.start)
                .0
                == line
        })
        .expect("a target on that line");
    let node = t.node;
    let s = slice(&body, &[node]);
    (body, s)
}

/// Whether some edge of `b` that reads or writes `var` is not `skip`.
fn mentions(b: &Body, var: &str) -> bool {
    let v = b.var_id(var).expect("the variable");
    b.edges.iter().any(|e| {
        let mut seen = matches!(&e.instr, Instr::Assign(p, _) if p.root_var() == Some(v));
        e.instr
            .walk_exprs(&mut |x| seen |= matches!(x, Expr::Var(w) if *w == v));
        seen
    })
}

#[test]
fn a_slice_drops_a_loop_that_changes_nothing_the_target_reads() {
    let src = "main(A) {\n  var H, i, h;\n  H = [1, 2, 0];\n  i = 0; h = 0;\n  while (A[i] != 0) { h = h + H[1]; i = i + 1; }\n  i = 0;\n  while (i < 3 && A[i] != 7) { i = i + 1; }\n  return H[i];\n}\n";
    let (whole, s) = sliced(src, 8);
    let s = s.expect("the first loop can be dropped");
    assert!(mentions(&whole, "h") && !mentions(&s, "h"));
    // The second loop decides the index: it stays, conditions and all.
    let kept_assumes = |b: &Body| {
        (b.edges.iter())
            .filter(|e| matches!(e.instr, Instr::Assume(_)))
            .count()
    };
    assert!(kept_assumes(&s) < kept_assumes(&whole));
    assert!(mentions(&s, "i"));
    assert_eq!(
        (s.edges.len(), s.loops.len()),
        (whole.edges.len(), whole.loops.len())
    );
}

#[test]
fn no_slice_where_values_may_be_shared() {
    let src = "main(n) {\n  var a, b, x;\n  a = [1, 2];\n  b = a;\n  b[0] = 5;\n  x = 0;\n  while (x < n) { x = x + 1; }\n  return a[n];\n}\n";
    assert!(sliced(src, 8).1.is_none());
    let src = "main(n) {\n  var p, x, y;\n  p = &x;\n  *p = 3;\n  y = 0;\n  return 10 / n;\n}\n";
    assert!(sliced(src, 6).1.is_none());
}

#[test]
fn a_slice_keeps_another_check_that_reads_only_relevant_values() {
    // `assert(n > 0)` passing is what makes `a[n - 1]` safe.
    let src = "main(n, m) {\n  var a;\n  a = [1, 2, 3];\n  assert(m != 4);\n  assert(n > 0);\n  return a[n - 1];\n}\n";
    let (_, s) = sliced(src, 6);
    let s = s.expect("m's assert can be dropped");
    let asserts_reading = |name: &str| {
        let v = s.var_id(name).expect("the variable");
        (s.edges.iter())
            .filter(|e| {
                let mut seen = false;
                e.instr
                    .walk_exprs(&mut |x| seen |= matches!(x, Expr::Var(w) if *w == v));
                matches!(e.instr, Instr::Assert(..)) && seen
            })
            .count()
    };
    // (The edge into m's own error vertex is on no path to the target.)
    assert_eq!(asserts_reading("m"), 0);
    let asserts_on_n = asserts_reading("n");
    // `n > 0`, and the target's own passing check (on no path to it).
    assert_eq!(asserts_on_n, 2);
}

/// The functions a run may execute before target 0 of `function`.
fn before(src: &str, function: &str) -> Vec<String> {
    let bodies: std::collections::BTreeMap<String, Body> = (lower(src).into_iter())
        .map(|b| (b.name.clone(), b))
        .collect();
    let graph = call_graph(&bodies);
    let target = bodies[function].targets[0].id;
    runs_before(&bodies, &graph, function, target)
        .into_iter()
        .collect()
}

#[test]
fn a_dispatcher_target_depends_on_main_and_its_own_branch() {
    let src = "f(x) { assert(x != 3); return 0; } g(x) { assert(x != 4); return 0; } \
               h(x) { return x; } \
               main(op, x) { var r; r = 0; if (op == 1) { r = f(x); } else { r = g(h(x)); } return r; }";
    assert_eq!(before(src, "f"), ["f", "main"]);
    assert_eq!(before(src, "g"), ["g", "h", "main"]);
}

#[test]
fn a_call_that_can_come_before_the_way_to_the_target_counts() {
    // `later` runs after `f`'s call, but `main` may call `f` again.
    let looped = "f(x) { assert(x != 3); return 0; } later(x) { return x + 1; } \
                  main(n) { var i; i = 0; while (i < n) { i = f(i); i = later(i); } return 0; }";
    assert_eq!(before(looped, "f"), ["f", "later", "main"]);
    // Called only after the target's function, it cannot matter.
    let after = "f(x) { assert(x != 3); return 0; } later(x) { return x + 1; } \
                 main(n) { var i; i = f(n); i = later(i); return i; }";
    assert_eq!(before(after, "f"), ["f", "main"]);
    // A first activation of a chain function runs whole before the second:
    // all it calls counts, even what follows its own way to the target.
    let twice = "f(x) { assert(x != 3); return 0; } y(x) { return x; } \
                 a(p) { var r; r = 0; if (p > 0) { r = f(p); } r = y(r); return r; } \
                 main(p, q) { var r; r = a(p); r = a(q); return r; }";
    assert_eq!(before(twice, "f"), ["a", "f", "main", "y"]);
}

#[test]
fn a_target_no_run_reaches_depends_on_its_function_alone() {
    let src = "dead(x) { assert(x != 3); return 0; } other(x) { return x; } \
               main(n) { var r; r = other(n); return r; }";
    assert_eq!(before(src, "dead"), ["dead"]);
}

/// The names of the arrays `scalarise` replaces in `src`'s `main`.
fn scalarised_arrays(src: &str) -> Vec<String> {
    let body = lower(src).remove(0);
    let Some(out) = scalarise(&body) else {
        return vec![];
    };
    (body.vars.iter().enumerate())
        .filter(|&(v, _)| {
            !mentions(&out, &body.vars[v].name) && mentions(&body, &body.vars[v].name)
        })
        .map(|(_, info)| info.name.clone())
        .collect()
}

#[test]
fn an_array_indexed_only_by_literals_becomes_its_cells() {
    let src = "main(n) { var s, i; s = [0, 5]; i = 0;\n  while (i < n) { s[0] = s[0] + s[1]; i = i + 1; }\n  assert(s[0] >= 0); return s[1]; }";
    let body = lower(src).remove(0);
    let out = scalarise(&body).expect("s qualifies");
    let s = body.var_id("s").expect("s");
    assert!(!mentions(&out, "s"), "s is still read or written");
    for cell in ["s[0]", "s[1]"] {
        let v = out.var_id(cell).expect("a variable per cell");
        assert_eq!(out.var(v).ty, crate::types::Type::Int);
        assert!(mentions(&out, cell), "{cell} unused");
    }
    // No bounds check of `s` is left, and the literal is a chain of two
    // assignments through one new vertex, inside no loop.
    for e in &out.edges {
        if let Instr::Assume(Cond::InBounds { array, .. }) = &e.instr {
            assert_ne!(array, &Expr::Var(s), "{e:?}");
        }
    }
    assert_eq!(out.node_count, body.node_count + 1);
    assert_eq!(out.edges.len(), body.edges.len() + 1);
    assert_eq!(out.loops, body.loops);
    assert_eq!(out.targets, body.targets);
}

#[test]
fn a_literal_inside_a_loop_puts_its_new_vertices_in_the_loop() {
    let src = "main(n) { var s, i; i = 0;\n  while (i < n) { s = [i, 1, 2]; i = i + s[1]; }\n  return 0; }";
    let body = lower(src).remove(0);
    let out = scalarise(&body).expect("s qualifies");
    let added: Vec<NodeId> = (body.node_count..out.node_count).collect();
    assert_eq!(added.len(), 2);
    let nodes = &out.loops[0].nodes;
    assert!(added.iter().all(|n| nodes.contains(n)), "{nodes:?}");
    assert!(nodes.is_sorted());
}

#[test]
fn arrays_that_others_may_reach_or_that_are_indexed_by_values_stay() {
    for src in [
        // an index that is not a literal
        "main(n) { var a; a = [1, 2]; return a[n]; }",
        // copied: another variable shares its cells
        "main(n) { var a, b; a = [1, 2]; b = a; b[0] = n; return a[0]; }",
        // literals of two lengths
        "main(n) { var a; a = [1, 2]; if (n > 0) { a = [1]; } return a[0]; }",
        // a literal index past the literal's end: the bounds check can fail
        "main(n) { var a; a = [1, 2]; return a[2]; }",
        // a literal that reads the array it is assigned to
        "main(n) { var a; a = [1, 2]; a = [a[1], a[0]]; return a[0]; }",
        // never assigned a literal
        "main(n) { var a; return a[0]; }",
        // main's input array
        "main(A) { return A[0]; }",
    ] {
        assert!(scalarised_arrays(src).is_empty(), "{src}");
    }
    assert_eq!(
        scalarised_arrays("main(n) { var a, b; a = [n]; b = [1, 2]; return a[0] + b[n]; }"),
        vec!["a".to_string()]
    );
}

#[test]
fn an_array_of_arrays_indexed_only_by_literals_becomes_its_cells() {
    let src =
        "main(n) { var m; m = [[1, 2], [3, n]];\n  m[1][0] = m[0][1] + m[1][1]; return m[1][0]; }";
    let body = lower(src).remove(0);
    let out = scalarise(&body).expect("m qualifies");
    assert!(!mentions(&out, "m"), "m is still read or written");
    for cell in ["m[0][0]", "m[0][1]", "m[1][0]", "m[1][1]"] {
        assert!(out.var_id(cell).is_some(), "no {cell}");
    }
    // The literal is a chain of four assignments, in row-major order.
    let writes: Vec<&str> = (out.edges.iter())
        .filter_map(|e| match &e.instr {
            Instr::Assign(Place::Var(v), Expr::Int(_) | Expr::Var(_)) => {
                Some(out.var(*v).name.as_str())
            }
            _ => None,
        })
        .filter(|name| name.starts_with("m["))
        .collect();
    assert_eq!(writes, ["m[0][0]", "m[0][1]", "m[1][0]", "m[1][1]"]);
    for src in [
        // a row taken
        "main(n) { var m, r; m = [[1, 2], [3, 4]]; r = m[0]; return r[1]; }",
        // a ragged literal
        "main(n) { var m; m = [[1], [2, 3]]; return m[0][0]; }",
        // a literal index past a row's end
        "main(n) { var m; m = [[1, 2]]; return m[0][2]; }",
    ] {
        assert!(scalarised_arrays(src).is_empty(), "{src}");
    }
}
