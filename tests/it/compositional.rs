//! The compositional engine (`docs/compositional-se.md`) on the report's
//! two examples and on generated multi-function programs, against the
//! interpreter: every reachable claim must replay, and after a run that
//! terminated, no random run may hit a target the engine left unreached.
//!
//! `COMPOSITIONAL_PROGRAMS=300 cargo test --release --test it compositional:: -- --ignored`
//! is the long differential run (`COMPOSITIONAL_SEED` picks the seed;
//! `COMPOSITIONAL_TRUNCATIONS=400` the longest Fig. 2 truncation).

use crate::common::{Rng, env_or, programs_dir};
use apc::compositional::{self, End, Options, Outcome};
use apc::db::{self, Database, Target};
use apc::interp::{self, ArgValue, Limits, Outcome as RunOutcome, Witness};
use num_bigint::BigInt;
use std::time::Duration;

fn z3() -> apc::smt::Profile {
    apc::smt::locate(apc::smt::SolverKind::Z3, None).expect("z3 installed")
}

fn run_on(text: &str, max_steps: u64, goal: Option<&Target>) -> (Database, Outcome) {
    let (db, file) = Database::with_file("prog.mc", text);
    let mut o = Options::new(z3());
    o.max_steps = max_steps;
    o.timeout = Some(Duration::from_secs(60));
    o.goal = goal.cloned();
    let out = compositional::run(&db, file, &o).expect("the engine takes the program");
    (db, out)
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(programs_dir().join(name)).expect("the program exists")
}

/// Every reachable claim replays on the interpreter (checked here again,
/// independently of the engine's own replay).
fn assert_claims_replay(text: &str, out: &Outcome) {
    let parsed = apc::syntax::parse(text);
    let lines = apc::syntax::LineIndex::new(text);
    for r in &out.reached {
        let t = &r.target;
        interp::replay_hits(&parsed.0, text, &lines, &r.witness, t.kind, (t.line, t.col))
            .unwrap_or_else(|why| panic!("{t:?} claimed reachable, but {why}\n{text}"));
    }
    assert!(
        out.stats.replay_failures.is_empty(),
        "{:?}",
        out.stats.replay_failures
    );
}

#[test]
fn fig1_both_returns_unreachable_and_the_run_terminates() {
    let text = fixture("comp_fig1.mc");
    let (db, out) = run_on(&text, 10_000, None);
    assert_eq!(out.end, End::Terminated, "{:?}", out.stats);
    assert!(out.reached.is_empty(), "{:?}", out.reached);
    let file = db::SourceFile::new(&db, "prog.mc".into(), text.clone());
    assert_eq!(db::targets(&db, file).len(), 2);
    // P2's summary holds its two reachable returns (u > 0, u < 0); its
    // `u == 0` leaf is unreachable in P1's calling context.
    let p2 = out.functions.iter().find(|f| f.name == "P2").unwrap();
    assert_eq!((p2.finished, p2.failed), (2, 0), "{p2:?}");
    assert_eq!(p2.invoked, 1, "one caller path reaches the call");
    eprintln!(
        "fig. 1: {} steps, {} queries, {} revived, {:?}",
        out.stats.steps, out.stats.queries, out.stats.revived, out.stats.elapsed
    );
}

/// Fig. 2 with a wrapper `main` whose assert fails exactly when `M1` has
/// returned after `k` iterations (x == k > 0): reaching it needs M1's
/// finished leaf for k iterations, and so M2's for u = v = k … 1.
fn fig2_with_goal(k: u32) -> String {
    fixture("comp_fig2.mc").replace(
        "  r = M1(x);\n  return r;",
        &format!("  r = M1(x);\n  assert(x != {k});\n  return r;"),
    )
}

#[test]
fn fig2_nothing_unreachable_is_claimed_at_any_truncation() {
    let text = fig2_with_goal(2);
    let longest: u64 = env_or("COMPOSITIONAL_TRUNCATIONS", 120);
    let truncations = [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, longest];
    for n in truncations.into_iter().filter(|n| *n <= longest) {
        let (_, out) = run_on(&text, n, None);
        assert_claims_replay(&text, &out);
        for r in &out.reached {
            assert!(
                r.target.function == "main",
                "at {n} steps, M1's or M2's unreachable assert was claimed: {r:?}"
            );
        }
        assert_ne!(out.end, End::Terminated, "the trees are infinite");
    }
}

#[test]
fn fig2_return_after_k_iterations_is_found_within_bounded_steps() {
    let mut found = Vec::new();
    for k in 1..=5 {
        let text = fig2_with_goal(k);
        let (db, file) = Database::with_file("prog.mc", &text);
        let goal = db::targets(&db, file)
            .into_iter()
            .find(|t| t.function == "main")
            .unwrap();
        let (_, out) = run_on(&text, 400, Some(&goal));
        assert_claims_replay(&text, &out);
        let r = out.reached.iter().find(|r| r.target == goal);
        let r = r.unwrap_or_else(|| panic!("k = {k}: not reached in 400 steps: {:?}", out.end));
        assert_eq!(witness_int(&r.witness, "x"), Some(BigInt::from(k)));
        found.push((k, r.step, out.stats.queries, out.stats.elapsed));
    }
    eprintln!("fig. 2, (k, step, queries, time): {found:?}");
}

fn witness_int(w: &Witness, name: &str) -> Option<BigInt> {
    w.args
        .iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, v)| match v {
            ArgValue::Int(i) => Some(i.clone()),
            ArgValue::List(_) => None,
        })
}

#[test]
fn recursion_is_outside_the_engine_with_a_reason() {
    let text = "f(n) { var r; r = 0; if (n > 0) { r = f(n - 1); } return r; }\n\
                main(x) { var y; y = f(x); assert(y == 0); return y; }\n";
    let (db, file) = Database::with_file("prog.mc", text);
    let err = compositional::run(&db, file, &Options::new(z3())).unwrap_err();
    assert!(err.starts_with("unsupported: recursion"), "{err}");
}

#[test]
fn pointers_are_outside_the_engine_with_a_reason() {
    let text = fixture("sem_calls.mc");
    let (db, file) = Database::with_file("prog.mc", &text);
    let err = compositional::run(&db, file, &Options::new(z3())).unwrap_err();
    assert!(err.starts_with("unsupported: pointers"), "{err}");
}

// ---------------------------------------------------------------------------
// The differential test: generated programs of integer functions.
// ---------------------------------------------------------------------------

/// A program of integer functions `f1 … fN` (fi calls only fj, j > i:
/// no recursion) and `main(n, m)`, with branches, bounded and unbounded
/// loops, input, divisions and asserts.
struct Gen<'a> {
    r: &'a mut Rng,
    funcs: usize,
}

impl Gen<'_> {
    fn program(&mut self) -> String {
        let mut out = String::new();
        for i in 1..=self.funcs {
            out.push_str(&self.function(i));
        }
        out.push_str(&self.function(0));
        out
    }

    /// Function `i` (0 is main): parameters, locals set first, statements.
    fn function(&mut self, i: usize) -> String {
        let (name, params): (String, Vec<String>) = if i == 0 {
            ("main".into(), vec!["n".into(), "m".into()])
        } else {
            let k = self.arity(i);
            (format!("f{i}"), (0..k).map(|p| format!("p{p}")).collect())
        };
        let locals = ["a", "b", "c"];
        let mut vars: Vec<String> = params.clone();
        vars.extend(locals.iter().map(|s| s.to_string()));
        let mut body = format!("{name}({}) {{\n  var a, b, c, i;\n", params.join(", "));
        for l in locals {
            let e = self.expr(i, &vars, 1);
            body.push_str(&format!("  {l} = {e};\n"));
        }
        for _ in 0..self.r.int(1, 3) {
            body.push_str(&self.stmt(i, &vars, 1));
        }
        let e = self.expr(i, &vars, 1);
        body.push_str(&format!("  return {e};\n}}\n\n"));
        body
    }

    fn stmt(&mut self, f: usize, vars: &[String], depth: usize) -> String {
        let pad = "  ".repeat(depth);
        let v = vars[self.r.below(vars.len() as u64) as usize].clone();
        match self.r.below(if depth > 2 { 2 } else { 5 }) {
            0 => format!("{pad}{v} = {};\n", self.expr(f, vars, 2)),
            1 => format!("{pad}assert({});\n", self.cond(f, vars)),
            2 => {
                let c = self.cond(f, vars);
                let t = self.stmt(f, vars, depth + 1);
                let e = self.stmt(f, vars, depth + 1);
                format!("{pad}if ({c}) {{\n{t}{pad}}} else {{\n{e}{pad}}}\n")
            }
            3 => {
                let bound = if self.r.chance(50) {
                    self.r.int(0, 3).to_string()
                } else {
                    vars[0].clone()
                };
                let s = self.stmt(f, vars, depth + 1);
                format!("{pad}i = 0;\n{pad}while (i < {bound}) {{\n{s}{pad}  i = i + 1;\n{pad}}}\n")
            }
            _ => format!("{pad}{v} = {};\n", self.expr(f, vars, 1)),
        }
    }

    fn cond(&mut self, f: usize, vars: &[String]) -> String {
        let ops = ["==", "!=", "<", "<=", ">", ">="];
        let op = ops[self.r.below(6) as usize];
        format!("{} {op} {}", self.expr(f, vars, 1), self.r.int(-2, 4))
    }

    fn expr(&mut self, f: usize, vars: &[String], depth: usize) -> String {
        if depth > 2 || self.r.chance(40) {
            return self.atom(f, vars);
        }
        let (a, b) = (self.expr(f, vars, depth + 1), self.expr(f, vars, depth + 1));
        match self.r.below(8) {
            0..=2 => format!("({a} + {b})"),
            3..=4 => format!("({a} - {b})"),
            5 => format!("({a} * {})", self.r.int(-2, 3)),
            6 => format!("({a} / ({b} - {}))", self.r.int(-1, 2)),
            _ => format!("({a} > {b})"),
        }
    }

    fn atom(&mut self, f: usize, vars: &[String]) -> String {
        let callee = if f == 0 { 1 } else { f + 1 };
        match self.r.below(10) {
            0..=3 => vars[self.r.below(vars.len() as u64) as usize].clone(),
            4..=5 => self.r.int(-2, 4).to_string(),
            6 if self.r.chance(40) => "input".into(),
            7..=8 if callee <= self.funcs => {
                // fj for some j ≥ callee: arguments are plain atoms.
                let j = self.r.int(callee as i64, self.funcs as i64);
                let arity = self.arity(j as usize);
                let args: Vec<String> = (0..arity)
                    .map(|_| vars[self.r.below(vars.len() as u64) as usize].clone())
                    .collect();
                format!("f{j}({})", args.join(", "))
            }
            _ => vars[0].clone(),
        }
    }

    /// The arity of `fj` (fixed, so that a call agrees with the definition).
    fn arity(&self, j: usize) -> usize {
        1 + (j % 2)
    }
}

fn generated(r: &mut Rng) -> String {
    let funcs = r.int(1, 3) as usize;
    Gen { r, funcs }.program()
}

fn random_witness(r: &mut Rng) -> Witness {
    Witness {
        args: vec![
            ("n".into(), ArgValue::Int(BigInt::from(r.int(-2, 5)))),
            ("m".into(), ArgValue::Int(BigInt::from(r.int(-2, 5)))),
        ],
        input: (0..r.int(0, 5))
            .map(|_| BigInt::from(r.int(-3, 5)))
            .collect(),
    }
}

#[derive(Debug, Default)]
struct Tally {
    programs: usize,
    terminated: usize,
    claims: usize,
    runs_checked: usize,
    targets: usize,
}

fn differential(programs: usize, seed: u64) -> Tally {
    let mut r = Rng(seed);
    let mut tally = Tally::default();
    for p in 0..programs {
        let text = generated(&mut r);
        let (db, file) = Database::with_file("gen.mc", &text);
        assert!(
            db::diagnostics(&db, file).is_empty(),
            "the generator wrote a bad program:\n{text}"
        );
        let mut o = Options::new(z3());
        o.max_steps = 300;
        o.timeout = Some(Duration::from_secs(env_or("COMPOSITIONAL_TIMEOUT", 5)));
        let out = compositional::run(&db, file, &o)
            .unwrap_or_else(|e| panic!("program {p}: {e}\n{text}"));
        tally.programs += 1;
        tally.claims += out.reached.len();
        assert_claims_replay(&text, &out);
        let targets = db::targets(&db, file);
        tally.targets += targets.len();
        if out.end != End::Terminated {
            continue;
        }
        tally.terminated += 1;
        let parsed = db::parse(&db, file);
        let lines = apc::syntax::LineIndex::new(&text);
        for _ in 0..20 {
            let w = random_witness(&mut r);
            let limits = Limits {
                max_steps: 100_000,
                max_call_depth: 100,
            };
            let Ok(run) = interp::run(&parsed.program, &w, limits) else {
                continue;
            };
            tally.runs_checked += 1;
            if let RunOutcome::Error { kind, span } = run.outcome {
                let (line, col) = lines.line_col(&text, span.start);
                let claimed = out
                    .reached
                    .iter()
                    .any(|c| c.target.kind == kind && (c.target.line, c.target.col) == (line, col));
                assert!(
                    claimed,
                    "program {p}: the run terminated without reaching {} at {line}:{col}, \
                     which {w:?} hits\n{text}",
                    kind.as_str()
                );
            }
        }
    }
    tally
}

#[test]
fn differential_small() {
    let t = differential(env_or("COMPOSITIONAL_PROGRAMS_SMALL", 6), 0x5eed);
    eprintln!("{t:?}");
    assert!(
        t.claims > 0 && t.terminated > 0,
        "a test that can fail: {t:?}"
    );
}

#[test]
#[ignore]
fn differential_long() {
    let t = differential(
        env_or("COMPOSITIONAL_PROGRAMS", 200),
        env_or("COMPOSITIONAL_SEED", 0x5eed_0001),
    );
    eprintln!("{t:?}");
}

/// The report's §6 claim on the IncDec-like family of `apc bench
/// compositional`: the executor's queries grow quadratically with the
/// number of calls, the compositional engine's about linearly.
#[test]
fn incdec_queries_grow_linearly_against_quadratically() {
    use apc::bench::compositional::{measure, slopes};
    let mut rows = Vec::new();
    for n in [4, 8, 16] {
        rows.extend(measure(n, &z3(), Duration::from_secs(60)).expect("both engines run"));
    }
    assert!(
        rows.iter()
            .all(|r| r.end == "complete" && !r.claimed_reachable),
        "{rows:?}"
    );
    let (compositional, _) = slopes(&rows, "compositional");
    let (explore, _) = slopes(&rows, "explore");
    let (c, e) = (compositional.unwrap(), explore.unwrap());
    eprintln!("query slopes: compositional {c:.2}, explore {e:.2}");
    assert!(
        c < 1.3 && e > 1.7,
        "compositional {c}, explore {e}: {rows:?}"
    );
}

// ---------------------------------------------------------------------------
// The command line: `apc compositional` and `apc check --engine compositional`.
// ---------------------------------------------------------------------------

fn json_of(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn cli_check_names_the_engine_and_decides_fig1() {
    let path = programs_dir().join("comp_fig1.mc");
    let out = crate::common::apc(&[
        "check",
        path.to_str().unwrap(),
        "--engine",
        "compositional",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v = json_of(&out);
    for t in v["targets"].as_array().unwrap() {
        assert_eq!(t["verdict"], "unreachable", "{t}");
        assert_eq!(t["engine"], "compositional", "{t}");
        assert_eq!(t["method"], "compositional-terminated", "{t}");
    }
}

#[test]
fn cli_compositional_reports_summaries_and_exit_statuses() {
    let fig1 = programs_dir().join("comp_fig1.mc");
    let out = crate::common::apc(&["compositional", fig1.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v = json_of(&out);
    assert_eq!(
        (v["engine"].as_str(), v["end"].as_str()),
        (Some("compositional"), Some("terminated"))
    );
    let names: Vec<&str> = v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["main", "P1", "P2"]);
    // With --show: P2's `u == 0` leaf is unreachable in P1's context.
    let out = crate::common::apc(&[
        "compositional",
        fig1.to_str().unwrap(),
        "--show",
        "--format",
        "json",
    ]);
    let v = json_of(&out);
    let p2_zero: Vec<&serde_json::Value> = v["leaves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["function"] == "P2" && l["pc"] == "P2.u₀ = 0")
        .collect();
    assert_eq!(p2_zero.len(), 1, "{v}");
    assert_eq!(p2_zero[0]["status"], "unr");
    assert_eq!(v["invocations"].as_array().unwrap().len(), 2);
    // Fig. 2 never terminates: a step limit proves reachability only.
    let fig2 = programs_dir().join("comp_fig2.mc");
    let out = crate::common::apc(&["compositional", fig2.to_str().unwrap(), "--max-steps", "30"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("assert in M1: unknown"), "{text}");
    // Outside the engine: one line on stderr, status 3.
    let hello = programs_dir().join("hello.mc");
    let out = crate::common::apc(&["compositional", hello.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unsupported"),
        "{out:?}"
    );
    // Bad flags: status 2.
    let out = crate::common::apc(&["compositional", hello.to_str().unwrap(), "--solver", "all"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// Each function is explored once, whatever the number of its callers:
/// the callee's leaves do not grow with its call sites (inlining would
/// explore it once per call site and path).
#[test]
fn a_callee_is_explored_once_for_all_its_call_sites() {
    let program = |calls: usize| {
        let mut s = String::from(
            "sign(x) { var r; if (x > 0) { r = 1; } else { r = 0 - 1; } return r; }\n\
             main(a, b) {\n  var s;\n  s = 0;\n",
        );
        for k in 0..calls {
            s.push_str(&format!("  s = s + sign(a - {k} * b);\n"));
        }
        s.push_str(&format!("  assert(s != {calls} + 1);\n  return s;\n}}\n"));
        s
    };
    let leaves_of_sign = |calls: usize| {
        let (_, out) = run_on(&program(calls), 10_000, None);
        assert_eq!(out.end, End::Terminated);
        assert!(out.reached.is_empty(), "s counts signs: at most `calls`");
        let f = out
            .functions
            .iter()
            .find(|f| f.name == "sign")
            .unwrap()
            .clone();
        (
            f.finished + f.unreachable + f.unknown + f.failed,
            f.finished,
            f.invoked,
        )
    };
    let (one, fin_one, inv_one) = leaves_of_sign(1);
    let (five, fin_five, inv_five) = leaves_of_sign(5);
    assert_eq!(
        (one, fin_one),
        (five, fin_five),
        "sign's leaves do not depend on its callers"
    );
    assert_eq!(fin_five, 2);
    assert_eq!(
        (inv_one, inv_five),
        (1, 5),
        "one invocation per caller path"
    );
}
