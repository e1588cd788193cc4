//! Soundness against the interpreter, on generated programs.
//!
//! Random small programs are run on random witnesses. They have loops,
//! branches, arrays, input arrays, the input stream, divisions, asserts and
//! reads of possibly unassigned variables, and, each with its own
//! probability (see [`Knobs`]): helper functions (some directly recursive
//! with a decreasing argument and a depth guard) called inside larger
//! expressions, pointers to locals, `alloc` and `null`, records and
//! pointers to records, array literals, copies, arrays passed and returned,
//! nested arrays and pointers to arrays, loops that sum a polynomial in
//! their counter with an assert of its closed form (true or off by a
//! little: nonlinear invariants). Every program is well-typed by
//! construction; the generator does not assume value or reference
//! semantics for arrays and records: it only compares apc with the
//! interpreter's runs.
//!
//! Two checks. Whenever a run hits a target, the necessary condition of
//! that target must hold for that very input: φ̂^K with main's parameters
//! and the input stream *defined* as the witness (path counters and other
//! existentials left free) must not be UNSAT. And `apc check` must never
//! call a target that a run hits `unreachable`. Both also fail on a run
//! error where the flowgraph has no target, on a panic of the analysis and
//! on an interpreter `internal error`; the verdict test reports checks that
//! overrun their timeout by more than [`HANG_SLACK`].
//!
//! The default runs are small and seeded. Long runs and their knobs:
//!
//! - `SOUNDNESS_PROGRAMS=3000 cargo test --release --test it soundness::long_run -- --ignored`
//!   (φ̂^K with the witness pinned);
//! - `SOUNDNESS_CHECK_PROGRAMS=3000 cargo test --release --test it soundness::verdicts`
//!   (`apc check`'s verdicts);
//! - `SOUNDNESS_SEED=<u64>`: the generator's seed (decimal or 0x…);
//! - `SOUNDNESS_KNOBS=null=5,sidefx=0`: feature probabilities (percent);
//! - `SOUNDNESS_TIMEOUT=<s>` (per target, default 5) and
//!   `SOUNDNESS_SOLVERS=z3,cvc5` for the verdict test;
//! - `SOUNDNESS_OUT=<dir>`: every finding's program is written there;
//! - `SOUNDNESS_ONLY=<k>`: the verdict test checks program k only;
//! - `SOUNDNESS_VERBOSE=1`: print every program.

use crate::common::env_or;

use apc::db::{self, Database};
use apc::interp::{self, ArgValue, Limits, Outcome, RunError, Witness};
use apc::nc::{Engine, Options, unfold};
use apc::smt::smtlib::{int as smt_int, name as smt_name};
use apc::smt::{Answer, run_z3};
use apc::term::{Terms, VarKind};
use num_bigint::BigInt;
use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

mod dependencies;
mod explore;
mod facts;
mod fast_engine;
mod generator;
mod thesis;
use generator::{Knobs, Rng, program, scaled_witness, witness};

/// A database holding generated program `p`, which must be valid.
fn generated_db(p: usize, src: &str) -> (Database, apc::db::SourceFile) {
    let (db, file) = Database::with_file("gen.mc", src);
    let diags = db::diagnostics(&db, file);
    assert!(
        diags.iter().all(|d| !d.is_error()),
        "generated program {p} is invalid: {diags:?}\n{src}"
    );
    (db, file)
}

/// Where a target is, for findings: `assert at 12:5`.
fn place_of(t: &apc::db::Target) -> String {
    format!("{} at {}:{}", t.kind.as_str(), t.line, t.col)
}

/// The witness as `apc run` flags.
fn run_flags(w: &Witness) -> String {
    fn arg(v: &ArgValue) -> String {
        match v {
            ArgValue::Int(i) => i.to_string(),
            ArgValue::List(xs) => {
                format!("[{}]", xs.iter().map(arg).collect::<Vec<_>>().join(","))
            }
        }
    }
    let args: Vec<String> = w
        .args
        .iter()
        .map(|(n, v)| format!("{n}={}", arg(v)))
        .collect();
    let input: Vec<String> = w.input.iter().map(|v| v.to_string()).collect();
    format!("--args '{}' --input '{}'", args.join(","), input.join(","))
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

/// A run of a generated program (small limits: the loops and recursions
/// are short).
fn run_generated(
    program: &apc::syntax::ast::Program,
    w: &Witness,
) -> Result<interp::RunResult, RunError> {
    let limits = Limits {
        max_steps: 20_000,
        max_call_depth: 100,
    };
    interp::run(program, w, limits)
}

// ---------------------------------------------------------------------------
// Findings: what a campaign reports.
// ---------------------------------------------------------------------------

/// What went wrong, on which program; `fatal` findings fail the test.
struct Finding {
    what: String,
    fatal: bool,
}

/// The findings of one run of a test, printed as they come and (with
/// `SOUNDNESS_OUT`) saved with their programs.
struct Findings {
    seed: u64,
    list: Vec<Finding>,
}

impl Findings {
    fn new(seed: u64) -> Findings {
        Findings {
            seed,
            list: Vec::new(),
        }
    }

    fn add(&mut self, fatal: bool, tag: &str, p: usize, what: String, src: &str) {
        let what = format!("{what}\n--- program {p} (seed {:#x}) ---\n{src}", self.seed);
        eprintln!("FINDING [{tag}]: {what}");
        if let Ok(dir) = std::env::var("SOUNDNESS_OUT") {
            let _ = std::fs::create_dir_all(&dir);
            let path = format!("{dir}/{tag}_{:x}_{p}.mc", self.seed);
            let comment: String = what
                .lines()
                .take_while(|l| !l.starts_with("--- program"))
                .map(|l| format!("// {l}\n"))
                .collect();
            let _ = std::fs::write(path, format!("{src}\n{comment}"));
        }
        self.list.push(Finding { what, fatal });
    }

    fn assert_none_fatal(&self) {
        let fatal: Vec<&str> = self
            .list
            .iter()
            .filter(|f| f.fatal)
            .map(|f| f.what.as_str())
            .collect();
        assert!(
            fatal.is_empty(),
            "{} findings:\n{}",
            fatal.len(),
            fatal.join("\n\n")
        );
    }
}

fn seed_or(default: u64) -> u64 {
    match std::env::var("SOUNDNESS_SEED") {
        Ok(s) => {
            let s = s.trim();
            match s.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
                None => s.parse(),
            }
            .expect("SOUNDNESS_SEED: a u64")
        }
        Err(_) => default,
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Runs `f` on a thread with a big stack (as `apc check` does), catching
/// its panic; gives up waiting after `limit` (the thread is left behind).
fn guarded<T: Send + 'static>(
    limit: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            let _ = tx.send(r.map_err(|e| panic_message(e.as_ref())));
        })
        .expect("spawning a thread");
    match rx.recv_timeout(limit) {
        Ok(Ok(t)) => Ok(t),
        Ok(Err(panic)) => Err(format!("panic: {panic}")),
        Err(_) => Err(format!("no answer after {limit:?} (hang)")),
    }
}

/// Runs `programs` generated programs; returns (runs hitting a target,
/// conditions checked, of which the solver could not decide).
fn check_programs(seed: u64, programs: usize, knobs: &Knobs) -> (usize, usize, usize) {
    let (hits, checks, unknown, _) = check_conditions(seed, programs, knobs, false);
    (hits, checks, unknown)
}

/// Which condition a run's inputs must satisfy.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flavour {
    Whole,
    Sliced,
    /// The whole program's, with the facts at the headers that the Horn
    /// engine's invariants from runs give.
    WithFacts,
}

/// [`check_programs`], also with facts at the headers where `facts`;
/// the last count is of the conditions that had facts.
fn check_conditions(
    seed: u64,
    programs: usize,
    knobs: &Knobs,
    facts: bool,
) -> (usize, usize, usize, usize) {
    let mut facts_checks = 0;
    let mut r = Rng(seed);
    let mut findings = Findings::new(seed);
    let (mut hits, mut checks, mut unknown, mut sliced_checks) = (0, 0, 0, 0);
    let verbose = std::env::var("SOUNDNESS_VERBOSE").is_ok();
    for p in 0..programs {
        let src = program(&mut r, knobs);
        if verbose {
            eprintln!("program {p}\n{src}");
        }
        let (db, file) = generated_db(p, &src);
        let parsed = db::parse(&db, file);
        let prog = db::program(&db, file).as_ref().expect("main");
        let mut seen = HashSet::new();
        // The facts of each target, found once for all the runs that hit it.
        let mut facts_of = BTreeMap::new();
        for run in 0..4 {
            // With facts, half the runs go past the values that the facts'
            // own sampled runs (small starts) see.
            let w = match facts && run % 2 == 1 {
                true => scaled_witness(&mut r, 16),
                false => witness(&mut r),
            };
            let res = match run_generated(&parsed.program, &w) {
                Ok(res) => res,
                Err(e) => {
                    let what = format!("the interpreter failed: {e} ({})", run_flags(&w));
                    findings.add(true, "interp", p, what, &src);
                    continue;
                }
            };
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
            if targets.is_empty() {
                let what = format!(
                    "the run hits {kind} at byte {}, which is no target ({})",
                    span.start,
                    run_flags(&w)
                );
                findings.add(true, "notarget", p, what, &src);
                continue;
            }
            if !seen.insert((kind, span.start, format!("{:?}", w.args), w.input.clone())) {
                continue;
            }
            // φ̂^2, and φ̂^2 of the target's slice where it has one: each
            // must hold for the run's inputs.
            let origin = (prog.body.targets.iter())
                .position(|t| t.node == targets[0])
                .map(|i| prog.origins[i].clone());
            let has_slice = origin.as_ref().is_some_and(|o| {
                db::target_slice(&db, file, o.function.clone(), o.target).is_some()
            });
            for flavour in [Flavour::Whole, Flavour::Sliced, Flavour::WithFacts] {
                let sliced = flavour == Flavour::Sliced;
                if (sliced && !has_slice) || (flavour == Flavour::WithFacts && !facts) {
                    continue;
                }
                // The slice is taken for every copy of the target.
                let nodes = match (&origin, sliced) {
                    (Some(o), true) => prog.copies_of(&o.function, o.target),
                    _ => targets.clone(),
                };
                let mut opts = Options::default();
                if flavour == Flavour::WithFacts {
                    let found = (facts_of.entry(nodes.clone()))
                        .or_insert_with(|| facts_at_headers(&prog.body, &nodes));
                    let Some(found) = found.clone() else {
                        continue;
                    };
                    opts.header_facts = Some(found);
                    facts_checks += 1;
                }
                let script = {
                    let (db, w, origin) = (db.clone(), w.clone(), origin.clone());
                    guarded(Duration::from_secs(120), move || {
                        let mut eng = match (&origin, sliced) {
                            (Some(o), true) => {
                                Engine::for_target(&db, file, &o.function, o.target, opts)
                            }
                            _ => Engine::new(&db, file, opts),
                        }
                        .expect("main");
                        let phi = eng.condition_of(&nodes);
                        let phik = unfold(&mut eng.terms, phi, 2).expect("φ̂^2 is small");
                        pinned_script(&mut eng.terms, phik, &w)
                    })
                };
                let which = match flavour {
                    Flavour::Whole => "φ̂^2",
                    Flavour::Sliced => "the slice's φ̂^2",
                    Flavour::WithFacts => "φ̂^2 with facts at the headers",
                };
                let script = match script {
                    Ok(s) => s,
                    Err(e) => {
                        let what =
                            format!("computing {which} of {kind} at byte {}: {e}", span.start);
                        findings.add(true, "crash", p, what, &src);
                        continue;
                    }
                };
                checks += 1;
                sliced_checks += usize::from(sliced);
                let a = run_z3(&script, Duration::from_secs(10)).answer;
                if matches!(a, Answer::Unknown(_)) {
                    unknown += 1;
                }
                if a == Answer::Unsat {
                    let what = format!(
                        "UNSOUND: the run reaches {kind} at byte {} with {}, but {which} is UNSAT for that input",
                        span.start,
                        run_flags(&w)
                    );
                    let tag = match flavour {
                        Flavour::Whole => "unsound_phik",
                        Flavour::Sliced => "unsound_sliced",
                        Flavour::WithFacts => "unsound_facts",
                    };
                    findings.add(true, tag, p, what, &src);
                }
            }
        }
    }
    eprintln!(
        "seed {seed:#x}: {programs} programs, {hits} runs hit a target, {checks} conditions checked ({sliced_checks} of a slice, {facts_checks} with facts), {unknown} undecided by the solver"
    );
    findings.assert_none_fatal();
    (hits, checks, unknown, facts_checks)
}

/// The facts at the headers on the ways to `nodes`, as `apc check` finds
/// them; none if there are none.
fn facts_at_headers(
    body: &apc::ir::Body,
    nodes: &[u32],
) -> Option<std::sync::Arc<apc::nc::HeaderFacts>> {
    let (solver, _) = apc::chc::horn_solver().ok()?;
    // Three times what `apc check` gives them at most (`nc::decider`): a
    // loaded machine runs the debug build's sampling slowly.
    let deadline = Instant::now() + Duration::from_secs(6);
    let found = apc::deadline::Stop::until(deadline)
        .run(|| apc::chc::header_facts(body, nodes, &solver, deadline))
        .ok()?
        .ok()?;
    (!found.is_empty())
        .then(|| std::sync::Arc::new(apc::nc::HeaderFacts(found.into_iter().collect())))
}

/// The generator alone: every program is valid, and its runs are short and
/// varied (they hit targets of every kind, and rarely a limit).
/// `SOUNDNESS_SHOW=<n>` prints the first n programs, `SOUNDNESS_TRACE=1`
/// the place of every run's error.
#[test]
fn generated_programs_are_valid_and_short() {
    let n: usize = env_or("SOUNDNESS_GEN_PROGRAMS", 400);
    let show: usize = env_or("SOUNDNESS_SHOW", 0);
    let trace = std::env::var("SOUNDNESS_TRACE").is_ok();
    let seed = seed_or(0x5eed_9e9e_0000_0001);
    let knobs = Knobs::from_env();
    let mut r = Rng(seed);
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let (mut runs, mut steps, mut bytes) = (0usize, 0u64, 0usize);
    for p in 0..n {
        let src = program(&mut r, &knobs);
        bytes += src.len();
        if p < show {
            eprintln!("--- program {p}\n{src}");
        }
        let (db, file) = generated_db(p, &src);
        let parsed = db::parse(&db, file);
        for _ in 0..6 {
            let w = witness(&mut r);
            let res = run_generated(&parsed.program, &w)
                .unwrap_or_else(|e| panic!("program {p}: {e} ({})\n{src}", run_flags(&w)));
            runs += 1;
            steps += res.steps;
            let key = match res.outcome {
                Outcome::Returned(_) => "returned".to_string(),
                Outcome::Error { kind, span } => {
                    if trace {
                        let at = span.start as usize;
                        let line = src[..at].rsplit('\n').next().unwrap_or("");
                        let rest = src[at..].split('\n').next().unwrap_or("");
                        eprintln!("TRACE {} {}⟦{}", kind.as_str(), line.trim_start(), rest);
                    }
                    kind.as_str().to_string()
                }
                Outcome::AssumeFailed { .. } => "assume".to_string(),
                Outcome::StepLimit { .. } => "step-limit".to_string(),
                Outcome::CallDepthLimit { .. } => "call-depth".to_string(),
            };
            *outcomes.entry(key).or_default() += 1;
        }
    }
    eprintln!(
        "{n} programs ({} bytes on average), {runs} runs ({} steps on average): {outcomes:?}",
        bytes / n.max(1),
        steps / runs.max(1) as u64
    );
    let limits = outcomes.get("step-limit").copied().unwrap_or(0)
        + outcomes.get("call-depth").copied().unwrap_or(0);
    assert!(limits * 100 <= runs, "{limits} of {runs} runs hit a limit");
    for kind in [
        "assert",
        "div-by-zero",
        "null-deref",
        "out-of-bounds",
        "uninitialized",
    ] {
        assert!(
            outcomes.get(kind).copied().unwrap_or(0) * 100 >= runs,
            "fewer than 1% of the runs hit {kind}: {outcomes:?}"
        );
    }
}

#[test]
fn conditions_hold_for_the_inputs_that_reach_targets() {
    let (hits, checks, unknown) = check_programs(0x5eed_1234_abcd_0001, 60, &Knobs::defaults());
    assert!(
        checks >= 30,
        "only {checks} checks ({hits} hits): the generator should hit more targets"
    );
    assert!(
        unknown * 10 <= checks,
        "{unknown} of {checks} checks undecided"
    );
}

/// Facts from runs at the loops' headers keep the conditions necessary:
/// on programs with polynomial loops (where the invariants from runs find
/// facts), φ̂^2 with the facts holds for the inputs of every run that hits
/// a target. Fails, too, if no condition ever had facts.
#[test]
fn conditions_with_facts_hold_for_the_inputs_that_reach_targets() {
    let n = env_or("SOUNDNESS_FACTS_CONDITIONS", 6);
    let knobs = Knobs::with(&[
        ("calls", 0),
        ("polyloop", 100),
        ("nested", 0),
        ("arrays", 0),
    ]);
    let seed = seed_or(0x5eed_fac7_0000_0001);
    let (_, checks, _, with_facts) = check_conditions(seed, n, &knobs, true);
    assert!(with_facts > 0, "no condition had facts ({checks} checked)");
}

/// The same check on programs full of arrays and records that share cells
/// (copies, rows, records holding arrays, arguments): with the alias
/// analysis switched off in `nc::state`, this test fails.
#[test]
fn conditions_hold_where_arrays_share_cells() {
    let knobs = Knobs::with(&[
        ("arrays", 100),
        ("records", 80),
        ("nested", 60),
        ("boxed", 100),
        ("copies", 100),
    ]);
    let (hits, checks, _) = check_programs(0x5eed_a11a_5000_0001, 60, &knobs);
    assert!(checks >= 30, "only {checks} checks ({hits} hits)");
}

/// How much a check may overrun its timeout before it is reported as a hang.
const HANG_SLACK: Duration = Duration::from_secs(5);

/// What one verdict campaign saw.
#[derive(Default, Debug)]
struct VerdictStats {
    runs: usize,
    /// Hit targets the sweep decided (one exploration for all targets).
    swept: usize,
    hit_runs: usize,
    hit_targets: usize,
    /// unreachable, reachable, unknown.
    verdicts: [usize; 3],
    reasons: BTreeMap<String, usize>,
    /// Hit targets by kind, in main or in a helper.
    kinds: BTreeMap<String, usize>,
    slowest: Duration,
    /// Programs with a local array replaced by its cells (`ir::scalarise`).
    scalarised: usize,
}

/// The sweep (one exploration for all of a program's targets, before
/// they are checked one by one) on the same program: it must not call a
/// hit target unreachable either.
#[allow(clippy::too_many_arguments)]
fn sweep_against_runs(
    db: &Database,
    file: apc::db::SourceFile,
    targets: &[apc::db::Target],
    opts: &apc::check::CheckOptions,
    hit: &BTreeMap<usize, Witness>,
    st: &mut VerdictStats,
    findings: &mut Findings,
    p: usize,
    src: &str,
) {
    use apc::check::{self, Verdict};
    let subject = check::Subject {
        db: db.clone(),
        file,
        targets: targets.to_vec(),
    };
    if hit.is_empty() {
        return; // nothing a sweep's verdict could contradict
    }
    let open: Vec<usize> = (0..targets.len()).collect();
    let mut slots = vec![None; targets.len()];
    let mut spent = vec![apc::check::Cost::default(); targets.len()];
    check::sweep::sweep(&subject, &open, opts, &mut slots, &mut spent);
    for i in hit.keys() {
        let Some(r) = &slots[*i] else { continue };
        st.swept += 1;
        if matches!(r.verdict, Verdict::Unreachable) {
            let what = format!(
                "UNSOUND: a run hits {}, but the sweep says unreachable ({:?})",
                place_of(&targets[*i]),
                r.method
            );
            findings.add(true, "unsound", p, what, src);
        }
    }
}

/// The verdict pipeline (`apc check`'s race, solvers, replay) on generated
/// programs: a target that some random run hits must never be called
/// `unreachable`.
fn check_verdicts(
    seed: u64,
    programs: usize,
    knobs: &Knobs,
    engine: &'static str,
) -> (VerdictStats, Findings) {
    use apc::check::{self, CheckOptions, Verdict};
    let mut r = Rng(seed);
    let mut findings = Findings::new(seed);
    let timeout = Duration::from_secs(env_or("SOUNDNESS_TIMEOUT", 5));
    let solvers: String = env_or("SOUNDNESS_SOLVERS", "z3".to_string());
    let solvers = solvers
        .split(',')
        .map(|s| {
            let kind = match s.trim() {
                "z3" => apc::smt::SolverKind::Z3,
                "cvc5" => apc::smt::SolverKind::Cvc5,
                other => panic!("SOUNDNESS_SOLVERS: unknown solver {other}"),
            };
            apc::smt::locate(kind, None).expect("solver installed")
        })
        .collect();
    // The pipeline as `apc check` runs it (the simplifier included, so this
    // tests its soundness on generated programs too), with fewer models.
    let opts = CheckOptions {
        max_models: 3,
        engine,
        ..CheckOptions::new(solvers, timeout)
    };
    let mut st = VerdictStats::default();
    let verbose = std::env::var("SOUNDNESS_VERBOSE").is_ok();
    // `SOUNDNESS_ONLY=<k>`: check program k of the seed only.
    let only: Option<usize> = std::env::var("SOUNDNESS_ONLY")
        .ok()
        .and_then(|s| s.parse().ok());
    for p in 0..programs {
        let src = program(&mut r, knobs);
        let (db, file) = generated_db(p, &src);
        let parsed = db::parse(&db, file);
        let lines = apc::syntax::LineIndex::new(&src);
        let targets = check::targets(&db, file);
        st.scalarised += usize::from(db::scalar_program(&db, file).is_some());
        // Each hit target with the first witness that hit it.
        let mut hit: BTreeMap<usize, Witness> = BTreeMap::new();
        for _ in 0..12 {
            let w = witness(&mut r);
            st.runs += 1;
            let res = match run_generated(&parsed.program, &w) {
                Ok(res) => res,
                Err(e) => {
                    let what = format!("the interpreter failed: {e} ({})", run_flags(&w));
                    findings.add(true, "interp", p, what, &src);
                    continue;
                }
            };
            if let Outcome::Error { kind, span } = res.outcome {
                st.hit_runs += 1;
                let (line, col) = lines.line_col(&src, span.start);
                match targets
                    .iter()
                    .position(|t| t.kind == kind && (t.line, t.col) == (line, col))
                {
                    Some(i) => {
                        hit.entry(i).or_insert(w);
                    }
                    None => {
                        let what = format!(
                            "the run hits {kind} at {line}:{col}, which is no target ({})",
                            run_flags(&w)
                        );
                        findings.add(true, "notarget", p, what, &src);
                    }
                }
            }
        }
        if only.is_some_and(|o| o != p) {
            continue;
        }
        sweep_against_runs(
            &db,
            file,
            &targets,
            &opts,
            &hit,
            &mut st,
            &mut findings,
            p,
            &src,
        );
        for (i, w) in hit {
            st.hit_targets += 1;
            let t = targets[i].clone();
            let place = if t.function == "main" {
                "main"
            } else {
                "helper"
            };
            *st.kinds
                .entry(format!("{} in {place}", t.kind.as_str()))
                .or_default() += 1;
            let where_ = place_of(&t);
            let start = Instant::now();
            let report = {
                let (db, t, opts) = (db.clone(), t.clone(), opts.clone());
                guarded(timeout + Duration::from_secs(120), move || {
                    check::check_target(&db, file, &t, &opts)
                })
            };
            let took = start.elapsed();
            st.slowest = st.slowest.max(took);
            if verbose {
                let v = report
                    .as_ref()
                    .map(|r| (r.verdict.name(), r.method.clone()));
                eprintln!(
                    "program {p}: {where_} ({}): {v:?} in {took:.1?}",
                    run_flags(&w)
                );
            }
            if took > timeout + HANG_SLACK {
                let what = format!(
                    "checking {where_} took {took:.1?} with --timeout {}",
                    timeout.as_secs()
                );
                findings.add(false, "hang", p, what, &src);
            }
            let report = match report {
                Ok(r) => r,
                Err(e) => {
                    findings.add(true, "crash", p, format!("checking {where_}: {e}"), &src);
                    continue;
                }
            };
            match &report.verdict {
                Verdict::Unreachable => {
                    st.verdicts[0] += 1;
                    let what = format!(
                        "UNSOUND: a run hits {where_} ({}), but apc check says unreachable ({:?})",
                        run_flags(&w),
                        report.method
                    );
                    findings.add(true, "unsound", p, what, &src);
                }
                Verdict::Reachable(witness) => {
                    st.verdicts[1] += 1;
                    if let Err(missed) = replays_to(&parsed.program, &lines, &src, witness, &t) {
                        let what = format!(
                            "{where_}: the witness of {:?} does not replay to it: {missed}",
                            report.method
                        );
                        findings.add(true, "unreplayed", p, what, &src);
                    }
                }
                Verdict::Unknown(why) => {
                    st.verdicts[2] += 1;
                    let short: String = why.split([':', '(']).next().unwrap_or(why).into();
                    *st.reasons.entry(short.trim().to_string()).or_default() += 1;
                    if why.contains("internal") {
                        let what = format!("checking {where_}: unknown ({why})");
                        findings.add(true, "internal", p, what, &src);
                    } else if why.starts_with("solver-unknown") {
                        // Worth a look: a solver that gave up or rejected a query.
                        let what = format!("checking {where_}: unknown ({why})");
                        findings.add(false, "solver", p, what, &src);
                    }
                }
            }
        }
    }
    (st, findings)
}

/// Whether the reference interpreter's run of `w` fails at `t` (else what
/// it did): every engine's witness is checked again here, apart from the
/// fast engine that some engines test with.
fn replays_to(
    program: &apc::syntax::ast::Program,
    lines: &apc::syntax::LineIndex,
    src: &str,
    w: &Witness,
    t: &db::Target,
) -> Result<(), String> {
    let r = interp::run_reference(program, w, Limits::default()).map_err(|e| e.to_string())?;
    match r.outcome {
        Outcome::Error { kind, span } => {
            let (line, col) = lines.line_col(src, span.start);
            if (kind, line, col) == (t.kind, t.line, t.col) {
                Ok(())
            } else {
                Err(format!("it fails with {kind} at {line}:{col}"))
            }
        }
        other => Err(format!("it ends with {other:?}")),
    }
}

/// The fuzzer as an engine never says `unreachable`, and every witness it
/// gives replays on the reference interpreter (it tests with the fast
/// engine). The long run is `SOUNDNESS_FUZZ_PROGRAMS=2000`.
#[test]
fn fuzz_verdicts_never_contradict_runs() {
    let n: usize = env_or("SOUNDNESS_FUZZ_PROGRAMS", 25);
    let seed = seed_or(0x5eed_c4ec_0000_f022);
    let (st, findings) = check_verdicts(seed, n, &Knobs::from_env(), "fuzz");
    eprintln!(
        "fuzz: {n} programs, {} targets hit: {} unreachable, {} reachable, {} unknown",
        st.hit_targets, st.verdicts[0], st.verdicts[1], st.verdicts[2]
    );
    findings.assert_none_fatal();
    assert!(st.verdicts[1] > 0, "the fuzzer found no witness: {st:?}");
}

/// CI runs 100 programs (about 50 s in release mode on two cores); the
/// long run is `SOUNDNESS_CHECK_PROGRAMS=3000 cargo test --release --test
/// it soundness::verdicts`.
/// `SOUNDNESS_CHECK_ENGINE`, one of `apc check`'s engine choices (default
/// `all`).
fn chosen_engine() -> &'static str {
    let chosen = env_or("SOUNDNESS_CHECK_ENGINE", "all".to_string());
    (apc::check::engine_choices().into_iter())
        .find(|n| *n == chosen)
        .unwrap_or_else(|| {
            let names = apc::check::engine_choices().join(", ");
            panic!("SOUNDNESS_CHECK_ENGINE: one of {names}, not {chosen}")
        })
}

/// Compact symbolic execution as an engine never says `unreachable` of a
/// target a run hits, and every witness it gives replays (the check's own
/// replay; a `reachable` here was replayed). On integer programs with
/// calls, where it builds finite trees; the long run is
/// `SOUNDNESS_COMPACT_PROGRAMS=2000`.
#[test]
fn compact_verdicts_never_contradict_runs() {
    let n: usize = env_or("SOUNDNESS_COMPACT_PROGRAMS", 9);
    let seed = seed_or(0x5eed_c4ec_0000_0c0a);
    let knobs = Knobs::with(&[("pointers", 0), ("records", 0)]);
    let (st, findings) = check_verdicts(seed, n, &knobs, "compact");
    eprintln!(
        "compact: {n} programs, {} targets hit: {} unreachable, {} reachable, {} unknown",
        st.hit_targets, st.verdicts[0], st.verdicts[1], st.verdicts[2]
    );
    findings.assert_none_fatal();
    assert!(
        st.verdicts[1] > 0,
        "compact found no replayed witness: {st:?}"
    );
}

#[test]
fn verdicts_never_contradict_runs() {
    let n: usize = env_or("SOUNDNESS_CHECK_PROGRAMS", 70);
    let seed = seed_or(0x5eed_c4ec_0000_0001);
    let start = Instant::now();
    // `SOUNDNESS_CHECK_ENGINE=nc` for the conditions alone; by default
    // `apc check`'s engine, the portfolio of every engine.
    let (st, findings) = check_verdicts(seed, n, &Knobs::from_env(), chosen_engine());
    eprintln!(
        "seed {seed:#x}: {n} programs ({} with arrays replaced by cells), {} runs ({} hit a target), {} targets hit {:?}: {} unreachable, {} reachable, {} unknown {:?}; {} decided by the sweep; slowest check {:.1?}; {:.1?} in all",
        st.scalarised,
        st.runs,
        st.hit_runs,
        st.hit_targets,
        st.kinds,
        st.verdicts[0],
        st.verdicts[1],
        st.verdicts[2],
        st.reasons,
        st.swept,
        st.slowest,
        start.elapsed()
    );
    let notes = findings.list.iter().filter(|f| !f.fatal).count();
    if notes > 0 {
        eprintln!("{notes} checks overran their timeout or got solver-unknown (see FINDING above)");
    }
    findings.assert_none_fatal();
    let hit = st.hit_targets;
    assert!(hit >= n / 4, "only {hit} targets hit in {n} programs");
    // Most hit targets get a replayed witness: the pipeline works, not
    // just says `unknown`.
    assert!(st.verdicts[1] * 10 >= hit * 6, "{st:?}");
}

/// The conditions where local arrays indexed only by literals become
/// their cells (`ir::scalarise`): never `unreachable` for a target a run
/// hits. Arrays often; no helpers, pointers, records nor lists, so that
/// the slices are taken too; the conditions alone decide.
#[test]
fn scalar_cells_never_prove_a_target_a_run_hits() {
    let n: usize = env_or("SOUNDNESS_SCALAR_PROGRAMS", 30);
    let seed = seed_or(0x5eed_c4ec_0000_5ca1);
    let knobs = Knobs::with(&[
        ("arrays", 100),
        ("calls", 0),
        ("pointers", 0),
        ("records", 0),
        ("lists", 0),
    ]);
    let (st, findings) = check_verdicts(seed, n, &knobs, "nc");
    eprintln!(
        "scalar cells: {n} programs ({} with arrays replaced), {} targets hit: {} unreachable, {} reachable, {} unknown",
        st.scalarised, st.hit_targets, st.verdicts[0], st.verdicts[1], st.verdicts[2]
    );
    findings.assert_none_fatal();
    assert!(st.scalarised > 0, "no array replaced: {st:?}");
}

#[test]
#[ignore]
fn long_run() {
    let n: usize = env_or("SOUNDNESS_PROGRAMS", 2_000);
    let seed = seed_or(0x5eed_0000_0000_0042);
    let start = Instant::now();
    check_programs(seed, n, &Knobs::from_env());
    eprintln!("{:.1?} in all", start.elapsed());
}

/// The Horn engine never proves a target that a run hits: on integer
/// programs (the fragment it encodes), every target some witness reaches
/// must not come back `unreachable`. Also counts its proofs, so that the
/// test fails if the engine stops proving anything.
#[test]
fn the_horn_engine_never_proves_a_target_a_run_hits() {
    let n = env_or("SOUNDNESS_CHC_PROGRAMS", 8);
    let knobs = Knobs::with(&[
        ("pointers", 0),
        ("records", 0),
        ("arrays", 0),
        ("nested", 0),
    ]);
    horn_engine_against_runs(n, &knobs, seed_or(0x5eed_c4c0_0000_0001), (1, 6));
}

/// The same with pointers, records and arrays: the clauses follow the
/// cells nothing else reaches (a pointer's own cell, a local array only
/// ever assigned literals and only indexed) and leave other reads unknown
/// (the same read twice in one instruction being one value).
#[test]
fn the_horn_engine_never_proves_a_target_a_run_hits_with_memory() {
    let n = env_or("SOUNDNESS_CHC_MEMORY_PROGRAMS", 14);
    let knobs = Knobs::with(&[("calls", 20), ("recursion", 0), ("nested", 0)]);
    horn_engine_against_runs(n, &knobs, seed_or(0x5eed_c4c0_0000_0002), (1, 6));
}

/// The same on programs with recursive helpers, whose calls the clauses
/// relate by summaries, and with loops that sum polynomials (asserts of
/// the closed form, true or off by a little), which the invariants from
/// runs prove.
#[test]
fn the_horn_engine_never_proves_a_target_a_run_hits_with_recursion() {
    let n = env_or("SOUNDNESS_CHC_RECURSION_PROGRAMS", 4);
    let knobs = Knobs::with(&[
        ("calls", 100),
        ("call", 60),
        ("recursion", 100),
        ("polyloop", 40),
        ("nested", 0),
    ]);
    let seen = horn_engine_against_runs(n, &knobs, seed_or(0x5eed_c4c0_0000_0003), (1, 6));
    assert!(seen.summarised > 0, "no program with a summary");
}

/// The same with Euclid's loop by subtraction at every turn (the
/// generator's polynomial loops, half of them Euclid's), whose divisibility
/// asserts, true or off by a little, only the Bézout ghosts prove.
#[test]
fn the_horn_engine_never_proves_a_target_a_run_hits_with_bezout_ghosts() {
    let n = env_or("SOUNDNESS_CHC_GHOST_PROGRAMS", 4);
    let knobs = Knobs::with(&[
        ("calls", 0),
        ("polyloop", 100),
        ("nested", 0),
        ("arrays", 0),
    ]);
    // 20 s a place: the ghosts' invariant from runs gets a third of what
    // the plain one leaves, and takes 1–2 s alone; with 5 s, a loaded
    // machine (the whole test suite at once) left it too little.
    let seen = horn_engine_against_runs(n, &knobs, seed_or(0x5eed_c4c0_0000_0004), (20, 2));
    assert!(seen.ghosted > 0, "no proof with Bézout ghosts");
}

/// What [`horn_engine_against_runs`] saw besides the soundness it checks.
struct Seen {
    /// Programs with summaries of recursive functions.
    summarised: usize,
    /// Proofs whose invariant has Bézout ghosts.
    ghosted: usize,
}

/// `(seconds, places)`: per place, and places per program, unless the
/// environment says.
fn horn_engine_against_runs(n: usize, knobs: &Knobs, seed: u64, budget: (u64, usize)) -> Seen {
    use apc::chc;
    // Seconds per place: a place past it is not proved (that is all).
    let per_place: u64 = env_or("SOUNDNESS_CHC_TIMEOUT", budget.0);
    // Places decided per program, those a run hits first (every place of
    // every program with a large value: the long run).
    let per_program: usize = env_or("SOUNDNESS_CHC_PLACES", budget.1);
    let mut r = Rng(seed);
    let (mut hit, mut proved, mut refuted) = (0, 0, Vec::new());
    let (mut summarised, mut ghosted) = (0, 0);
    for p in 0..n {
        let src = program(&mut r, knobs);
        let (db, file) = generated_db(p, &src);
        let parsed = db::parse(&db, file);
        let prog = db::program(&db, file).as_ref().expect("main");
        summarised += usize::from(db::summarised_program(&db, file).is_some());
        let mut reached = HashSet::new();
        for _ in 0..6 {
            let w = witness(&mut r);
            if let Ok(res) = run_generated(&parsed.program, &w)
                && let Outcome::Error { kind, span } = res.outcome
            {
                reached.insert((kind, span.start));
            }
        }
        // A place is proved when none of its copies (inlined per call
        // site, or in callees cut by recursion) is reached.
        let mut places: BTreeMap<(apc::TargetKind, u32), Vec<u32>> = BTreeMap::new();
        for t in &prog.body.targets {
            places
                .entry((t.kind, t.span.start))
                .or_default()
                .push(t.node);
        }
        // The places a run hit first (a proof of one is the bug looked
        // for), then others up to `per_program` (that the engine still
        // proves something).
        let (hit_places, others): (Vec<_>, Vec<_>) =
            (places.into_iter()).partition(|(place, _)| reached.contains(place));
        let budget = per_program.saturating_sub(hit_places.len());
        let places: Vec<((apc::TargetKind, u32), bool)> = (hit_places.into_iter())
            .chain(others.into_iter().take(budget))
            .map(|(place, nodes)| {
                // Under a token with the deadline, as the engine runs: every
                // phase stops at it (the encoding and the checks too).
                let deadline = Instant::now() + Duration::from_secs(per_place);
                // With the summaries of recursive helpers, as `apc check`.
                let program = chc::Program {
                    body: &prog.body,
                    summarised: db::summarised_program(&db, file).as_ref(),
                };
                let v = apc::deadline::Stop::until(deadline)
                    .run(|| chc::decide_with(program, &nodes, deadline).0);
                if let Ok(chc::Verdict::Unreachable(cert)) = &v
                    && cert.definitions.iter().any(|d| d.contains("bezout_"))
                {
                    ghosted += 1;
                }
                (place, matches!(v, Ok(chc::Verdict::Unreachable(_))))
            })
            .collect();
        for ((kind, at), _) in places.into_iter().filter(|(_, proof)| *proof) {
            proved += 1;
            if reached.contains(&(kind, at)) {
                refuted.push(format!(
                    "program {p}: {} at byte {at} proved, but a run hits it\n{src}",
                    kind.as_str()
                ));
            }
        }
        hit += reached.len();
    }
    assert!(refuted.is_empty(), "{}", refuted.join("\n"));
    assert!(proved > 0 && hit > 0, "{proved} proofs, {hit} targets hit");
    eprintln!(
        "horn engine: {n} programs ({summarised} with summaries), {hit} targets hit by runs, {proved} proved ({ghosted} with Bézout ghosts), 0 contradicted"
    );
    Seen {
        summarised,
        ghosted,
    }
}
