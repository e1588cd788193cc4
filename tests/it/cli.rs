//! The command-line contract of `docs/cli.md`: exit codes, one clear line
//! on stderr for bad input, JSON field for field, `--help` everywhere.

use crate::common::*;

fn write(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("apc-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn missing_file_is_exit_2_with_one_line() {
    let out = apc(&["run", "/nonexistent/x.mc"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot read /nonexistent/x.mc"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn syntax_and_type_errors_are_exit_2_with_carets() {
    let p = write("bad.mc", "main() { var x; x = 1 return x; }\n");
    let out = apc(&["cfg", &p]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.mc:1:23") && err.contains('^'), "{err}");

    let p = write("ty.mc", "main() { var x; x = 5; *x = 3; return 0; }\n");
    let out = apc(&["run", &p]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("type error") && err.contains("ty.mc:1:"),
        "{err}"
    );
}

#[test]
fn bad_witness_is_exit_2() {
    let p = write("w.mc", "main(n, A) { return n + A[0]; }\n");
    for args in [
        ["--args", "m=1"],
        ["--args", "n=[1]"],
        ["--args", "A=3"],
        ["--input", "1,x"],
        ["--args", "n="],
    ] {
        let out = apc(&["run", &p, args[0], args[1]]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = apc(&["run", &p, "--args", "n=2,A=[40]", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["return"], 42);
}

#[test]
fn run_json_has_the_contract_fields_in_order() {
    let p = write(
        "e.mc",
        "main(d) { var x; x = input; output x; x = 10 / d; return x; }\n",
    );
    let out = apc(&["run", &p, "--args", "d=0", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(
            r#"{"outputs":[0],"return":null,"error":{"kind":"div-by-zero","line":1,"col":46}"#
        ),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["input_exhausted"], true);
}

#[test]
fn big_integers_survive_json() {
    let p = write("big.mc", "main(n) { return n * n * n; }\n");
    let out = apc(&[
        "run",
        &p,
        "--args",
        "n=123456789012345678901234567890",
        "--format",
        "json",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1881676372353657772546716040589641726257477229849409426207693797722198701224860897069000"), "{text}");
}

#[test]
fn step_limit_is_exit_4() {
    let p = write(
        "loop.mc",
        "main() { var x; x = 0; while (1) { x = x + 1; } return x; }\n",
    );
    let out = apc(&["run", &p, "--max-steps", "1000", "--format", "json"]);
    assert_eq!(out.status.code(), Some(4));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["limit"], "steps");
}

#[test]
fn every_subcommand_has_help() {
    for cmd in [
        vec!["--help"],
        vec!["run", "--help"],
        vec!["cfg", "--help"],
        vec!["nc", "--help"],
        vec!["check", "--help"],
        vec!["bench", "--help"],
        vec!["bench", "apc", "--help"],
        vec!["bench", "simplify", "--help"],
        vec!["bench", "ksweep", "--help"],
        vec!["bench", "scale", "--help"],
    ] {
        let out = apc(&cmd);
        assert_eq!(out.status.code(), Some(0), "{cmd:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("Usage"));
    }
    assert_eq!(apc(&["frobnicate"]).status.code(), Some(2));
    // Bad bench arguments are refused before anything runs.
    for bad in [
        vec!["bench", "apc", "--runs", "0"],
        vec!["bench", "simplify", "--timeout", "0"],
        vec!["bench", "apc", "--query-timeout", "nan"],
        vec!["bench", "ksweep", "--k-max", "0"],
        vec!["bench", "scale", "--sizes", "0"],
        vec!["bench", "engines"],
        vec!["bench", "engines", "--from", "/nonexistent/engines.json"],
        vec![
            "bench",
            "engines",
            "--generated",
            "1",
            "--set",
            "no-such-set",
        ],
    ] {
        let out = apc(&bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).lines().count(),
            1,
            "{bad:?}"
        );
    }
}

/// The portfolio's schedule is what its experiment recommends: the
/// experiment's runs are checked in, and the race simulated on them gives
/// each class the order built into apc.
#[test]
fn the_built_in_schedule_is_the_checked_in_experiments() {
    let runs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bench/engines.json");
    let out = apc(&[
        "bench",
        "engines",
        "--from",
        runs.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let classes = j["classes"].as_array().unwrap();
    assert_eq!(classes.len(), 7, "all programs and six classes: {j}");
    for c in classes {
        assert_eq!(c["recommended_order"], c["built_in_order"], "{c}");
        assert_eq!(c["recommended_stagger_ms"], c["built_in_stagger_ms"], "{c}");
        let (best, unscheduled) = (&c["best"]["mean_ms"], &c["unscheduled"]["mean_ms"]);
        assert!(best.as_f64() <= unscheduled.as_f64(), "{c}");
    }
    // The table as text, on every tenth target: the same rendering, at a
    // tenth of the simulation's cost (13 s in a debug build for them all).
    let mut some: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&runs).unwrap()).unwrap();
    let targets = some["targets"].as_array_mut().unwrap();
    *targets = targets.iter().step_by(10).cloned().collect();
    let some = write("engines_tenth.json", &some.to_string());
    let table = apc(&["bench", "engines", "--from", &some]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("nested loops:") && text.contains("recommended"),
        "{text}"
    );
}

/// A live run of the experiment on one program: every engine alone on its
/// target, and the program's class.
#[test]
fn bench_engines_measures_every_engine_on_a_program() {
    let file = write("engines.mc", "main(n) { var x; x = 10 / n; return x; }");
    let out = apc(&[
        "bench",
        "engines",
        &file,
        "--timeout",
        "5",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let target = &j["targets"][0];
    assert_eq!(target["class"], "no loops", "{j}");
    let runs = target["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 7, "{j}");
    assert!(runs.iter().any(|r| r["decided"] == true), "{j}");
}

/// The rows scripts read: every row names the benchmark, solver, answer,
/// build and total time; the generated programs get the answers they are
/// built to have, and the slopes are printed in the table.
#[test]
fn bench_rows_for_scripts() {
    let out = apc(&[
        "bench", "scale", "--family", "ifs", "--family", "loops", "--sizes", "1,2", "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for r in rows {
        for key in [
            "benchmark",
            "solver",
            "answer",
            "build_ms",
            "total_ms",
            "dag_nodes",
        ] {
            assert!(!r[key].is_null(), "{key} in {r}");
        }
        let expected = if r["family"] == "ifs" { "sat" } else { "unsat" };
        assert_eq!(r["answer"], expected, "{r}");
    }
    let table = apc(&["bench", "scale", "--family", "paths", "--sizes", "1,2,4"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("growth (log–log slope in n)"), "{text}");

    let out = apc(&["bench", "ksweep", "--k-max", "1", "--format", "csv"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let head = text.lines().next().unwrap();
    for key in ["benchmark", "solver", "k", "answer", "build_ms", "total_ms"] {
        assert!(head.split(',').any(|h| h == key), "{key} in {head}");
    }
    assert_eq!(text.lines().count(), 1 + 8, "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("OneLoop,z3,1,unsat")),
        "{text}"
    );
}

#[test]
fn cfg_dot_is_valid_graphviz() {
    // Every program's --dot output renders with Graphviz's `dot`.
    let have_dot = std::process::Command::new("dot").arg("-V").output().is_ok();
    assert!(
        have_dot,
        "Graphviz `dot` is missing: run solvers/install.sh"
    );
    for path in programs() {
        let out = apc(&["cfg", &path.display().to_string(), "--dot"]);
        assert_eq!(out.status.code(), Some(0));
        if let Err(why) = renders_with_dot(&out.stdout) {
            panic!("{}: {why}", path.display());
        }
    }
}

/// `apc cfg --dot --verdicts`: each target's error vertex says its verdict
/// and has its colour (red reachable, green unreachable), and so do the
/// edges into it; the graph renders.
#[test]
fn cfg_dot_colours_each_target_by_its_verdict() {
    let file = programs_dir().join("sem_calls.mc").display().to_string();
    let out = apc(&["cfg", &file, "--dot", "--verdicts", "--timeout", "20"]);
    assert_eq!(out.status.code(), Some(0));
    renders_with_dot(&out.stdout).expect("renders");
    let dot = String::from_utf8_lossy(&out.stdout);
    let vertex = |place: &str| {
        (dot.lines())
            .find(|l| l.contains(&format!("\\n{place}\\n")))
            .unwrap_or_else(|| panic!("no vertex at {place}: {dot}"))
            .to_string()
    };
    let reachable = vertex("24:24");
    assert!(
        reachable.contains("\\nreachable\"") && reachable.contains("color=red"),
        "{reachable}"
    );
    let proved = vertex("7:7");
    assert!(
        proved.contains("\\nunreachable\"") && proved.contains("color=forestgreen"),
        "{proved}"
    );
    assert!(
        dot.lines()
            .any(|l| l.contains("->") && l.contains("color=red")),
        "{dot}"
    );
}

/// The BenchExec task definitions (tests/benchexec/tasks) are those
/// `gen_tasks.py` writes from the corpus: a program added without them
/// fails here, not in a BenchExec run.
#[test]
fn the_benchexec_task_definitions_are_up_to_date() {
    let script = programs_dir().join("../benchexec/gen_tasks.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .args(["--apc", env!("CARGO_BIN_EXE_apc"), "--check"])
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}{}run: python3 tests/benchexec/gen_tasks.py",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `apc run --reference` and the fast engine print the same run, a
/// runtime error included.
#[test]
fn run_reference_and_fast_engine_print_the_same_run() {
    let file = write(
        "fast_vs_reference.mc",
        "sum(a, n) {\n  var i, s;\n  i = 0;\n  s = 0;\n  while (i < n) { s = s + a[i]; i = i + 1; }\n  return s;\n}\n\nmain(k) {\n  var a, p;\n  a = [3, 1, 4, 1, 5];\n  p = alloc {v: sum(a, 5), next: null};\n  output p.v;\n  return 100 / (p.v - k);\n}\n",
    );
    for args in ["k=1", "k=14"] {
        let fast = apc(&["run", &file, "--args", args, "--format", "json"]);
        let reference = apc(&[
            "run",
            &file,
            "--args",
            args,
            "--format",
            "json",
            "--reference",
        ]);
        assert_eq!(fast.stdout, reference.stdout, "{args}");
        assert_eq!(fast.status.code(), reference.status.code(), "{args}");
    }
    let failed = apc(&["run", &file, "--args", "k=14", "--format", "json"]);
    assert!(String::from_utf8_lossy(&failed.stdout).contains("div-by-zero"));
}

/// A witness whose run is longer than the default step limit (10 million
/// steps) is replayed within the target's time: the assert is reachable.
#[test]
fn a_replay_gets_the_time_left_to_its_target() {
    let file = write(
        "long_replay.mc",
        "main() {\n  var x;\n  x = 0;\n  while (x < 8000000) { x = x + 2; }\n  assert(x != 8000000);\n  return x;\n}\n",
    );
    let out = apc(&["check", &file, "--timeout", "60", "--format", "json"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value = serde_json::from_str(&text).expect(&text);
    assert_eq!(report["targets"][0]["verdict"], "reachable", "{text}");
}

/// `apc bench run --format json`: one row per family, both engines agree
/// (the fast engine finished every family itself) and it is the faster.
#[test]
fn bench_run_rows_for_scripts() {
    let out = apc(&[
        "bench", "run", "--scale", "0.002", "--runs", "1", "--format", "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let families: Vec<&str> = (rows.as_array().unwrap().iter())
        .map(|r| r["family"].as_str().unwrap())
        .collect();
    assert_eq!(
        families,
        ["counting", "nested", "sweep", "chase", "recursion"]
    );
    for r in rows.as_array().unwrap() {
        assert!(r["steps"].as_u64().unwrap() > 1000, "{r}");
        assert!(r["handed_back"].is_null(), "{r}");
    }
    let bad = apc(&["bench", "run", "--scale", "0"]);
    assert_eq!(bad.status.code(), Some(2));
}
