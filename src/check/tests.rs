//! The driver and the portfolio on real solvers.

use super::*;
use crate::interp::{ArgValue, Limits, Outcome, Witness};
use crate::smt;
use crate::syntax::LineIndex;

/// A program with a 10,000-operand sum, `&&` chain and mixed `-`/`+`
/// chain (the longest the parser accepts), each returned by `main`
/// for `which` = 0, 1, 2, and an assert on each.
fn chains_program() -> String {
    let n = crate::syntax::parser::MAX_CHAIN_OPERANDS as usize;
    let mixed = crate::syntax::parser::mixed_chain(n, ["a", "b", "c"]);
    format!(
        "main(which, a, b, c) {{\n  var s, t, m, r;\n  s = {};\n  t = {};\n  m = {mixed};\n  assert(s == {n} * a);\n  assert(t == 0 || a != 0);\n  assert(m != 7);\n  if (which == 0) {{ r = s; }} else {{ if (which == 1) {{ r = t; }} else {{ r = m; }} }}\n  return r;\n}}\n",
        vec!["a"; n].join(" + "),
        vec!["a"; n].join(" && "),
    )
}

#[test]
fn long_chains_go_through_every_stage() {
    // What the CLI does, on the CLI's stack: parse, types, lowering,
    // the interpreter, and `check` (conditions, solver, replay).
    crate::syntax::parser::on_big_stack(|| {
        let n = crate::syntax::parser::MAX_CHAIN_OPERANDS as i64;
        let text = chains_program();
        let db = Database::default();
        let file = SourceFile::new(&db, "chains.mc".into(), text.clone());
        let diags = db::diagnostics(&db, file);
        assert!(diags.is_empty(), "{:?}", diags.first());
        let program = &db::parse(&db, file).program;
        let types = db::program_types(&db, file);
        let bodies = crate::ir::lower_program(program, types);
        let _ = crate::ir::to_text(&bodies[0], &|_| String::new());
        // a = 1, b = 2, c = 3: the mixed chain is 1 + Σ (−2, +3, +1).
        let mixed = 1 + (1..n).map(|i| [1, -2, 3][(i % 3) as usize]).sum::<i64>();
        for (which, want) in [(0, n), (1, 1), (2, mixed)] {
            let w = Witness {
                args: [("which", which), ("a", 1), ("b", 2), ("c", 3)]
                    .iter()
                    .map(|(p, v)| (p.to_string(), ArgValue::Int((*v).into())))
                    .collect(),
                input: vec![],
            };
            let r = crate::interp::run(program, &w, Limits::default()).unwrap();
            assert_eq!(r.outcome, Outcome::Returned(want.into()));
        }
        let Some(z3) = smt::default_z3() else {
            panic!("z3 is needed (solvers/install.sh)");
        };
        let targets = targets(&db, file);
        assert_eq!(targets.len(), 3);
        let opts = CheckOptions::new(vec![z3], Duration::from_secs(20));
        let reports = check_all(&db, file, &targets, &opts, &|_| {});
        let verdicts: Vec<&str> = reports.iter().map(|r| r.verdict.name()).collect();
        // The sum is n·a and `t` is 0 or a ≠ 0: both asserts hold. The
        // mixed chain can be 7.
        assert_eq!(
            verdicts,
            ["unreachable", "unreachable", "reachable"],
            "{reports:?}"
        );
    });
}

/// A witness whose run reads input cells far beyond the judge's first
/// window (A[2001], B[11][40], the 70th input): the cells the replay
/// read are asked for, and the conditions alone find it. (A fixed
/// window of 1024 cells left it `unknown`: the replay returned 0.)
#[test]
fn the_judge_asks_for_the_cells_its_replay_reads() {
    let text = "main(A, B, n) {\n  var x, i;\n  i = 0;\n  while (i < 70) {\n    x = input;\n    i = i + 1;\n  }\n  if (n > 2000 && n < 2100 && A[n] == 7 && B[n - 1990][40] == 3) {\n    if (x == n + 1) {\n      assert(0);\n    }\n  }\n  return 0;\n}\n";
    let db = Database::default();
    let file = SourceFile::new(&db, "far.mc".into(), text.to_string());
    let Some(z3) = smt::default_z3() else {
        panic!("z3 is needed (solvers/install.sh)");
    };
    let target = (targets(&db, file).into_iter())
        .find(|t| t.kind == crate::TargetKind::Assert)
        .expect("the assert is a target");
    let opts = CheckOptions {
        engine: "nc",
        ..CheckOptions::new(vec![z3], Duration::from_secs(20))
    };
    let report = check_target(&db, file, &target, &opts);
    let Verdict::Reachable(w) = &report.verdict else {
        panic!("{report:?}");
    };
    let program = &db::parse(&db, file).program;
    let lines = LineIndex::new(text);
    let hit = crate::interp::replay_error(program, text, &lines, w);
    assert_eq!(hit, Ok((crate::TargetKind::Assert, (10, 7))));
}
