//! Soundness against the interpreter, on generated programs.
//!
//! Random small programs (loops, branches, arrays, input arrays, the input
//! stream, divisions, asserts, reads of possibly unassigned variables) are
//! run on random witnesses. Whenever a run hits a target, the necessary
//! condition of that target must hold for that very input: φ̂^K with main's
//! parameters and the input stream *defined* as the witness (path counters
//! and other existentials left free) must not be UNSAT. An UNSAT here would
//! be an `unreachable` verdict on a reachable target.
//!
//! The default run is small and seeded; `SOUNDNESS_PROGRAMS=10000 cargo test
//! --release --test soundness -- --ignored` is the long run.

use crate::common::env_or;

use apc::db::{self, Database};
use apc::interp::{self, ArgValue, Limits, Outcome, Witness};
use apc::nc::{Engine, Options, unfold};
use apc::smt::smtlib::{int as smt_int, name as smt_name};
use apc::smt::{Answer, run_z3};
use apc::term::{Terms, VarKind};
use num_bigint::BigInt;
use std::fmt::Write;
use std::time::Duration;

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
}

const VARS: &[&str] = &["x", "y", "z"];

fn atom(r: &mut Rng) -> String {
    match r.below(6) {
        0 => r.int(-3, 5).to_string(),
        1 => "A[i]".to_string(),
        2 => "B[1]".to_string(),
        _ => r.pick(VARS).to_string(),
    }
}

fn expr(r: &mut Rng, depth: u32) -> String {
    if depth == 0 || r.below(3) == 0 {
        return atom(r);
    }
    let op = r.pick(&["+", "-", "*", "+", "-"]);
    if r.below(8) == 0 {
        return format!("({} / {})", expr(r, depth - 1), expr(r, depth - 1));
    }
    format!("({} {op} {})", expr(r, depth - 1), expr(r, depth - 1))
}

fn cond(r: &mut Rng) -> String {
    let op = r.pick(&["<", "<=", "==", "!=", ">", ">="]);
    let c = format!("{} {op} {}", expr(r, 1), expr(r, 1));
    if r.below(4) == 0 {
        format!("{c} && {} > 0", r.pick(VARS))
    } else {
        c
    }
}

fn stmts(r: &mut Rng, depth: u32, in_loop: bool, out: &mut String, indent: usize) {
    let pad = "  ".repeat(indent);
    for _ in 0..r.int(1, 4) {
        match r.below(if depth == 0 { 4 } else { 7 }) {
            0 | 1 => {
                let _ = writeln!(out, "{pad}{} = {};", r.pick(VARS), expr(r, 2));
            }
            2 => {
                let _ = writeln!(out, "{pad}{} = input;", r.pick(VARS));
            }
            3 => {
                let _ = writeln!(out, "{pad}if ({}) {{ assert({}); }}", cond(r), cond(r));
            }
            4 => {
                let _ = writeln!(out, "{pad}if ({}) {{", cond(r));
                stmts(r, depth - 1, in_loop, out, indent + 1);
                let _ = writeln!(out, "{pad}}} else {{");
                stmts(r, depth - 1, in_loop, out, indent + 1);
                let _ = writeln!(out, "{pad}}}");
            }
            5 if !in_loop => {
                // A loop over i, bounded by the input n (which the witness keeps small).
                let _ = writeln!(out, "{pad}i = 0;");
                let _ = writeln!(out, "{pad}while (i < n) {{");
                stmts(r, depth - 1, true, out, indent + 1);
                let _ = writeln!(out, "{pad}  i = i + 1;");
                let _ = writeln!(out, "{pad}}}");
            }
            6 if r.below(3) == 0 => {
                // A toggle: overwrites chosen by the variable's own value
                // (Table 1 chains whose writers' guards read the chain).
                let v = r.pick(VARS);
                let (a, b, c) = (r.int(-1, 3), r.int(-1, 3), r.int(-1, 3));
                let _ = writeln!(
                    out,
                    "{pad}if ({v} == {a}) {{ {v} = {b}; }} else {{ {v} = {c}; }}"
                );
            }
            _ => {
                // Indices from the input too: writes at data-dependent cells.
                let _ = writeln!(
                    out,
                    "{pad}B[{}] = {};",
                    r.pick(&["0", "1", "x", "y", "i", "A[i]", "A[i + 1]"]),
                    expr(r, 1)
                );
            }
        }
    }
}

fn program(r: &mut Rng) -> String {
    let mut body = String::new();
    stmts(r, 2, false, &mut body, 1);
    // x, y, z are assigned first only sometimes: reads may be `uninitialized` targets.
    let mut init = String::new();
    for v in VARS {
        if r.below(4) != 0 {
            let _ = writeln!(init, "  {v} = {};", r.int(-2, 3));
        }
    }
    format!(
        "main(n, A) {{\n  var x, y, z, i, B;\n  i = 0;\n  B = [1, 2, 3];\n{init}{body}  assert(x != 99);\n  return 0;\n}}\n"
    )
}

fn witness(r: &mut Rng) -> Witness {
    let a: Vec<ArgValue> = (0..r.int(0, 6))
        .map(|_| ArgValue::Int(BigInt::from(r.int(-2, 4))))
        .collect();
    Witness {
        args: vec![
            ("n".into(), ArgValue::Int(BigInt::from(r.int(-1, 4)))),
            ("A".into(), ArgValue::List(a)),
        ],
        input: (0..r.int(0, 6))
            .map(|_| BigInt::from(r.int(-3, 5)))
            .collect(),
    }
}

/// φ̂^K with the witness's inputs defined instead of declared.
fn pinned_script(terms: &mut Terms, phik: apc::term::TermId, w: &Witness) -> String {
    let mut script = apc::smt::smtlib::script(terms, &[phik]);
    let array_fun = |name: &str, xs: &[BigInt]| {
        let mut body = "0".to_string();
        for (k, v) in xs.iter().enumerate().rev() {
            body = format!("(ite (= x {k}) {} {body})", smt_int(v));
        }
        format!("(define-fun {name} ((x Int)) Int {body})")
    };
    let n = match &w.args[0].1 {
        ArgValue::Int(v) => v.clone(),
        _ => unreachable!(),
    };
    let a: Vec<BigInt> = match &w.args[1].1 {
        ArgValue::List(xs) => xs
            .iter()
            .map(|x| {
                if let ArgValue::Int(v) = x {
                    v.clone()
                } else {
                    BigInt::from(0)
                }
            })
            .collect(),
        _ => unreachable!(),
    };
    for (sym, kind, def) in [
        ("n₀", VarKind::Symbol, None),
        ("A₀", VarKind::ArraySymbol(1), Some(a)),
        ("$in₀", VarKind::ArraySymbol(1), Some(w.input.clone())),
    ] {
        let v = terms.symbol(kind, sym);
        let name = smt_name(terms, v);
        let decl = match kind {
            VarKind::Symbol => format!("(declare-fun {name} () Int)"),
            _ => format!("(declare-fun {name} (Int) Int)"),
        };
        let defn = match def {
            None => format!("(define-fun {name} () Int {})", smt_int(&n)),
            Some(xs) => array_fun(&name, &xs),
        };
        script = script.replace(&decl, &defn);
    }
    script
}

/// A run of a generated program (small limits: the loops are short).
fn run_generated(program: &apc::syntax::ast::Program, w: &Witness) -> interp::RunResult {
    let limits = Limits {
        max_steps: 20_000,
        max_call_depth: 100,
    };
    interp::run(program, w, limits).expect("generated programs are well-typed")
}

/// Runs `programs` generated programs; returns (runs hitting a target,
/// conditions checked, of which the solver could not decide).
fn check_programs(seed: u64, programs: usize) -> (usize, usize, usize) {
    let mut r = Rng(seed);
    let (mut hits, mut checks, mut unknown) = (0, 0, 0);
    let verbose = std::env::var("SOUNDNESS_VERBOSE").is_ok();
    for p in 0..programs {
        let src = program(&mut r);
        if verbose {
            eprintln!("program {p}\n{src}");
        }
        let (db, file) = Database::with_file("gen.mc", &src);
        let diags = db::diagnostics(&db, file);
        assert!(
            diags.iter().all(|d| !d.is_error()),
            "generated program {p} is invalid: {diags:?}\n{src}"
        );
        let parsed = db::parse(&db, file);
        let prog = db::program(&db, file).as_ref().expect("main");
        let mut seen = std::collections::HashSet::new();
        for _ in 0..4 {
            let w = witness(&mut r);
            let res = run_generated(&parsed.program, &w);
            let Outcome::Error { kind, span } = res.outcome else {
                continue;
            };
            hits += 1;
            let targets: Vec<u32> = prog
                .body
                .targets
                .iter()
                .filter(|t| t.kind == kind && t.span.start == span.start)
                .map(|t| t.node)
                .collect();
            assert!(
                !targets.is_empty(),
                "program {p}: the run hit {kind} at {span:?}, which is no target\n{src}"
            );
            if !seen.insert((kind, span.start, format!("{:?}", w.args), w.input.clone())) {
                continue;
            }
            let mut eng = Engine::new(&db, file, Options::default()).expect("main");
            let phi = eng.condition_of(&targets);
            let phik = unfold(&mut eng.terms, phi, 2);
            let script = pinned_script(&mut eng.terms, phik, &w);
            checks += 1;
            let a = run_z3(&script, Duration::from_secs(10));
            if matches!(a, Answer::Unknown(_)) {
                unknown += 1;
            }
            assert_ne!(
                a,
                Answer::Unsat,
                "UNSOUND: program {p} (seed {seed}) reaches {kind} at byte {} with {:?} / input {:?}, but φ̂^2 is UNSAT for that input\n{src}",
                span.start,
                w.args,
                w.input
            );
        }
    }
    (hits, checks, unknown)
}

#[test]
fn conditions_hold_for_the_inputs_that_reach_targets() {
    let (hits, checks, unknown) = check_programs(0x5eed_1234_abcd_0001, 60);
    assert!(
        checks >= 30,
        "only {checks} checks ({hits} hits): the generator should hit more targets"
    );
    assert!(
        unknown * 10 <= checks,
        "{unknown} of {checks} checks undecided"
    );
}

/// The verdict pipeline (`apc check`'s race, solvers, replay) on generated
/// programs: a target that some random run hits must never be called
/// `unreachable`. Returns (targets hit, verdicts by kind: unreachable,
/// reachable, unknown).
fn check_verdicts(seed: u64, programs: usize) -> (usize, [usize; 3]) {
    use apc::check::{self, CheckOptions, Verdict};
    let mut r = Rng(seed);
    // The pipeline as `apc check` runs it (the simplifier included, so this
    // tests its soundness on generated programs too), with fewer models.
    let opts = CheckOptions {
        max_models: 3,
        ..CheckOptions::new(
            vec![apc::smt::locate(apc::smt::SolverKind::Z3, None).expect("z3 installed")],
            Duration::from_secs(5),
        )
    };
    let (mut hit_targets, mut verdicts) = (0, [0usize; 3]);
    for p in 0..programs {
        let src = program(&mut r);
        let (db, file) = Database::with_file("gen.mc", &src);
        let parsed = db::parse(&db, file);
        let lines = apc::syntax::LineIndex::new(&src);
        let targets = check::targets(&db, file);
        let mut hit = std::collections::BTreeSet::new();
        for _ in 0..4 {
            let w = witness(&mut r);
            let res = run_generated(&parsed.program, &w);
            if let Outcome::Error { kind, span } = res.outcome {
                let (line, col) = lines.line_col(&src, span.start);
                if let Some(i) = targets
                    .iter()
                    .position(|t| t.kind == kind && (t.line, t.col) == (line, col))
                {
                    hit.insert(i);
                }
            }
        }
        for i in hit {
            hit_targets += 1;
            let report = check::check_target(&db, file, &targets[i], &opts);
            match &report.verdict {
                Verdict::Unreachable => panic!(
                    "UNSOUND: program {p} (seed {seed}): a run hits {} at {}:{}, but apc check says unreachable ({:?})\n{src}",
                    targets[i].kind.as_str(),
                    targets[i].line,
                    targets[i].col,
                    report.method
                ),
                Verdict::Reachable(_) => verdicts[1] += 1,
                Verdict::Unknown(_) => verdicts[2] += 1,
            }
        }
    }
    (hit_targets, verdicts)
}

/// CI runs 150 programs (about 15 s); the long run is
/// `SOUNDNESS_CHECK_PROGRAMS=10000 cargo test --release --test soundness verdicts`.
#[test]
fn verdicts_never_contradict_runs() {
    let n: usize = env_or("SOUNDNESS_CHECK_PROGRAMS", 150);
    let (hit, verdicts) = check_verdicts(0x5eed_c4ec_0000_0001, n);
    eprintln!(
        "{n} programs, {hit} targets hit by runs: {} reachable, {} unknown",
        verdicts[1], verdicts[2]
    );
    assert!(hit >= n / 4, "only {hit} targets hit in {n} programs");
    // Most hit targets get a replayed witness: the pipeline works, not
    // just says `unknown`.
    assert!(verdicts[1] * 10 >= hit * 8, "{verdicts:?} of {hit}");
}

#[test]
#[ignore]
fn long_run() {
    let n: usize = env_or("SOUNDNESS_PROGRAMS", 2_000);
    let (hits, checks, unknown) = check_programs(0x5eed_0000_0000_0042, n);
    eprintln!(
        "{n} programs, {hits} runs hit a target, {checks} conditions checked, {unknown} undecided by the solver"
    );
}
