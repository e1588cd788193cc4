//! `apc check`: a verdict per target (the contract: `docs/cli.md`).

use super::places::targets_at_places;
use super::run::big;
use super::{ExitStatus, Format, bad, limits, load};
use crate::check::{self, CheckOptions, Mode, Report, Verdict};
use crate::interp::{ArgValue, Witness};
use crate::smt::{self, SolverKind};
use clap::{Args, ValueEnum};
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SolverChoice {
    Z3,
    Cvc5,
    /// Race Z3 against cvc5.
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeChoice {
    /// φ̂, φ̂^K and the chain φ̂^3 → φ̂^14 ∧ κ ≤ 14 → φ̂^14 in parallel; the first definite
    /// answer wins (the bounded query only looks for a witness: its unsat proves nothing).
    Race,
    /// Only φ̂, with quantifiers.
    Quantified,
    /// Only the quantifier-free φ̂^K.
    Unfolded,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum EngineChoice {
    /// The necessary conditions, then the executor on what they leave undecided.
    #[value(name = "nc+explore")]
    NcExplore,
    Nc,
    Chc,
    Explore,
    Compositional,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The microc source file.
    pub file: PathBuf,
    #[command(flatten)]
    pub solvers: SolverArgs,
    /// Which form of the necessary condition to solve. `race` runs the quantified φ̂,
    /// the unfolded φ̂^K and the cheaper φ̂^3, then φ̂^14 (one after the other) in parallel
    /// and takes the first definite answer.
    #[arg(long, value_enum, default_value_t = ModeChoice::Race)]
    pub mode: ModeChoice,
    /// Unfolding bound K of φ̂^K (the ISSTA paper uses 25), at most 100000.
    #[arg(long, default_value_t = check::DEFAULT_K, value_parser = clap::value_parser!(u32).range(0..=limits::MAX_K))]
    pub k: u32,
    /// Wall-clock limit per target in seconds, everything it costs included (the
    /// condition, helper queries, unfolding, simplification, every solver, replays);
    /// greater than 0 and at most 1000000.
    #[arg(long, default_value = "30", value_name = "SECS", value_parser = limits::seconds, allow_negative_numbers = true)]
    pub timeout: Duration,
    /// Check only the target(s) at this place: `LINE` or `LINE:COL` (repeatable).
    #[arg(long, value_name = "LINE[:COL]")]
    pub target: Vec<String>,
    /// Write every query sent to a solver into DIR, one self-contained `.smt2` file each:
    /// `<file>-<function>-<line>-<col>-<variant>-<solver>.smt2` (variant `quantified`,
    /// `unfolded-k-25`, …; `…-model2.smt2` after the first model was blocked). Each runs
    /// as `z3 FILE` or `cvc5 FILE`.
    #[arg(long, value_name = "DIR")]
    pub dump_queries: Option<PathBuf>,
    /// Output format: one line per target, or one JSON object.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// How many targets to check in parallel (1 to 256).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=limits::MAX_JOBS as u64))]
    pub jobs: usize,
    /// How many models a query may give whose replay misses the target before the
    /// verdict is `unknown` (nc-sat-no-witness); each next model has the inputs of the
    /// previous ones blocked.
    #[arg(long, default_value_t = check::DEFAULT_MAX_MODELS, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=limits::MAX_COUNT as u64))]
    pub max_models: usize,
    /// Do not infer relations between inner and outer loop counts (TR Alg. 8).
    #[arg(long)]
    pub no_counter_inference: bool,
    /// Which engine decides. `nc+explore` (the default): the necessary conditions,
    /// then, on a target they leave undecided, the symbolic executor for the time
    /// that is left. `nc`: the necessary conditions alone (proofs and replayed
    /// witnesses). `chc`: Horn clauses solved by Z3's fixed-point engine (proofs only:
    /// an invariant is `unreachable` once apc has re-checked it, clause by clause;
    /// values in local arrays, records and behind pointers are unknown to it).
    /// `explore`: the symbolic executor alone, guided to the target with path
    /// subsumption (replayed witnesses; `unreachable` when every path to the target
    /// was explored). `compositional`: compositional symbolic execution (per-function
    /// summaries, docs/compositional-se.md; replayed witnesses; `unreachable` when its
    /// run ends with no unknown leaf; programs with only integers, no recursion).
    #[arg(long, value_enum, default_value_t = EngineChoice::NcExplore)]
    pub engine: EngineChoice,
    /// Send the necessary condition as computed, without the e-graph simplification
    /// (for comparison: `apc bench simplify` measures both).
    #[arg(long)]
    pub no_simplify: bool,
}

/// The solver choice and binaries, shared by `check` and `bench`.
#[derive(Args, Debug)]
pub struct SolverArgs {
    /// The solver(s): `all` uses Z3 and cvc5 (`check` races them).
    #[arg(long, value_enum, default_value_t = SolverChoice::Z3)]
    pub solver: SolverChoice,
    /// The Z3 binary (default: $APC_Z3, then `z3` on PATH, then solvers/bin/z3).
    #[arg(long, value_name = "PATH")]
    pub z3: Option<PathBuf>,
    /// The cvc5 binary (default: $APC_CVC5, then `cvc5` on PATH, then solvers/bin/cvc5).
    #[arg(long, value_name = "PATH")]
    pub cvc5: Option<PathBuf>,
}

impl SolverArgs {
    /// The chosen solvers' profiles, located (flag, env, PATH, solvers/bin);
    /// a missing one is a bad command line.
    pub fn locate(&self) -> Result<Vec<smt::Profile>, ExitCode> {
        self.locate_quietly().map_err(|e| bad(&e))
    }

    /// [`SolverArgs::locate`] with the error as a message.
    pub fn locate_quietly(&self) -> Result<Vec<smt::Profile>, String> {
        let kinds: &[SolverKind] = match self.solver {
            SolverChoice::Z3 => &[SolverKind::Z3],
            SolverChoice::Cvc5 => &[SolverKind::Cvc5],
            SolverChoice::All => &SolverKind::ALL,
        };
        kinds
            .iter()
            .map(|&k| {
                let flag = match k {
                    SolverKind::Z3 => self.z3.as_deref(),
                    SolverKind::Cvc5 => self.cvc5.as_deref(),
                };
                smt::locate(k, flag)
            })
            .collect()
    }
}

pub fn check(a: CheckArgs) -> ExitCode {
    let started = Instant::now();
    let timeout = a.timeout;
    let solvers = match a.solvers.locate() {
        Ok(s) => s,
        Err(code) => return code,
    };
    let loaded = match load(&a.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if crate::db::program(&loaded.db, loaded.file).is_none() {
        return bad(&format!("{}: the program has no `main`", loaded.path));
    }
    let all = check::targets(&loaded.db, loaded.file);
    let targets: Vec<check::Target> = if a.target.is_empty() {
        all
    } else {
        match targets_at_places(&loaded.path, &all, &a.target) {
            Ok(t) => t,
            Err(code) => return code,
        }
    };
    if let Some(dir) = &a.dump_queries
        && let Err(e) = super::writable_dir(dir)
    {
        return bad(&e);
    }
    let opts = CheckOptions {
        solvers,
        mode: match a.mode {
            ModeChoice::Race => Mode::Race,
            ModeChoice::Quantified => Mode::Quantified,
            ModeChoice::Unfolded => Mode::Unfolded,
        },
        k: a.k,
        timeout,
        jobs: a.jobs,
        dump_queries: a.dump_queries.clone(),
        dump_failure: Default::default(),
        counter_inference: !a.no_counter_inference,
        max_models: a.max_models,
        simplify: !a.no_simplify,
        engine: match a.engine {
            EngineChoice::NcExplore => check::Engine::NcThenExplore,
            EngineChoice::Nc => check::Engine::Nc,
            EngineChoice::Chc => check::Engine::Chc,
            EngineChoice::Explore => check::Engine::Explore,
            EngineChoice::Compositional => check::Engine::Compositional,
        },
    };
    let bar = if targets.len() > 1 {
        super::progress(targets.len(), "{bar:30} {pos}/{len} targets {elapsed}")
    } else {
        indicatif::ProgressBar::hidden()
    };
    let reports = check::check_all(&loaded.db, loaded.file, &targets, &opts, &|_| bar.inc(1));
    bar.finish_and_clear();
    let total = started.elapsed();
    match a.format {
        Format::Text => print_text(&loaded.path, &reports, total),
        Format::Json => print_json(&loaded.path, &a, &reports, total),
    }
    if let Some(e) = opts.dump_failure.get() {
        return bad(&format!("some queries were not dumped: {e}"));
    }
    let [_, reachable, unknown] = counts(&reports);
    if reachable > 0 {
        ExitStatus::Found.into()
    } else if unknown > 0 {
        ExitStatus::Undecided.into()
    } else {
        ExitStatus::Ok.into()
    }
}

/// How many targets are unreachable, reachable, unknown.
fn counts(reports: &[Report]) -> [usize; 3] {
    let mut c = [0; 3];
    for r in reports {
        c[match r.verdict {
            Verdict::Unreachable => 0,
            Verdict::Reachable(_) => 1,
            Verdict::Unknown(_) => 2,
        }] += 1;
    }
    c
}

fn ms(d: Duration) -> f64 {
    super::rounded_ms(d, 1)
}

fn show_arg(v: &ArgValue) -> String {
    match v {
        ArgValue::Int(n) => n.to_string(),
        ArgValue::List(xs) => {
            let items: Vec<String> = xs.iter().map(show_arg).collect();
            format!("[{}]", items.join(", "))
        }
    }
}

/// `n=3 s=[72, 101] input=[5, -2]`, as `apc run --args … --input …` takes it.
pub(super) fn show_witness(w: &Witness) -> String {
    let mut parts: Vec<String> = w
        .args
        .iter()
        .map(|(n, v)| format!("{n}={}", show_arg(v)))
        .collect();
    let input: Vec<String> = w.input.iter().map(|x| x.to_string()).collect();
    parts.push(format!("input=[{}]", input.join(", ")));
    parts.join(" ")
}

fn print_text(path: &str, reports: &[Report], total: Duration) {
    for r in reports {
        let t = &r.target;
        let how = match (&r.method, &r.solver) {
            (Some(m), Some(s)) => format!(" [{m}, {s}]"),
            _ => String::new(),
        };
        let what = match &r.verdict {
            Verdict::Unreachable => "unreachable".to_string(),
            Verdict::Reachable(w) => format!("reachable with {}", show_witness(w)),
            Verdict::Unknown(why) => format!("unknown ({why})"),
        };
        outln!(
            "{path}:{}:{}: {} in {}: {what}{how} {:.1} ms",
            t.line,
            t.col,
            t.kind.as_str(),
            t.function,
            ms(r.time)
        );
    }
    let [unreachable, reachable, unknown] = counts(reports);
    outln!(
        "{} target{}: {unreachable} unreachable, {reachable} reachable, {unknown} unknown ({:.1} ms)",
        reports.len(),
        if reports.len() == 1 { "" } else { "s" },
        ms(total)
    );
}

fn arg_json(v: &ArgValue) -> Value {
    match v {
        ArgValue::Int(n) => big(n),
        ArgValue::List(xs) => Value::Array(xs.iter().map(arg_json).collect()),
    }
}

/// `{"args": {...}, "input": [...]}`.
pub(super) fn witness_json(w: &Witness) -> Value {
    let args: Map<String, Value> = w
        .args
        .iter()
        .map(|(n, v)| (n.clone(), arg_json(v)))
        .collect();
    let input: Vec<Value> = w.input.iter().map(big).collect();
    json!({"args": args, "input": input})
}

fn print_json(path: &str, a: &CheckArgs, reports: &[Report], total: Duration) {
    let targets: Vec<Value> = reports
        .iter()
        .map(|r| {
            let t = &r.target;
            let (reason, witness) = match &r.verdict {
                Verdict::Unreachable => (Value::Null, Value::Null),
                Verdict::Reachable(w) => (Value::Null, witness_json(w)),
                Verdict::Unknown(why) => (Value::String(why.clone()), Value::Null),
            };
            json!({
                "kind": t.kind.as_str(),
                "function": t.function,
                "line": t.line,
                "col": t.col,
                "verdict": r.verdict.name(),
                "reason": reason,
                "witness": witness,
                "engine": r.engine,
                "method": r.method,
                "solver": r.solver,
                "time_ms": ms(r.time),
            })
        })
        .collect();
    let solver = a
        .solvers
        .solver
        .to_possible_value()
        .map(|v| v.get_name().to_string());
    let [unreachable, reachable, unknown] = counts(reports);
    let out = json!({
        "file": path,
        "solver": solver,
        "targets": targets,
        "summary": {
            "targets": reports.len(),
            "unreachable": unreachable,
            "reachable": reachable,
            "unknown": unknown,
        },
        "time_ms": ms(total),
    });
    outln!("{out:#}");
}
