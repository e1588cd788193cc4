//! `apc check`: a verdict per target (the contract: `docs/cli.md`).

use super::places::targets_at_places;
use super::run::big;
use super::{ExitStatus, bad, limits, load};
use crate::check::{self, CheckOptions, Mode, Report, Verdict, verdict_counts};
use crate::deadline::{PhaseTimes, SolverUse};
use crate::interp::{ArgValue, Witness};
use crate::smt::{self, SolverKind};
use clap::builder::{PossibleValue, PossibleValuesParser};
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

/// `--engine`'s values: the portfolio, the combination, and every
/// registered engine, each with its line of help.
pub(super) fn engine_parser() -> PossibleValuesParser {
    let combined = [
        (
            check::PORTFOLIO,
            "every engine on parallel threads; the first definite answer wins",
        ),
        (
            check::NC_THEN_EXPLORE,
            "the conditions, then the executor on what they leave undecided",
        ),
    ];
    let registered = check::ENGINES.iter().map(|e| (e.name(), e.about()));
    PossibleValuesParser::new(
        (combined.into_iter().chain(registered)).map(|(n, h)| PossibleValue::new(n).help(h)),
    )
}

/// `--portfolio`'s values: the registered engines.
fn portfolio_parser() -> PossibleValuesParser {
    PossibleValuesParser::new(check::ENGINES.iter().map(|e| PossibleValue::new(e.name())))
}

/// The name `--engine` or `--portfolio` was given, as the registry spells it.
fn engine_name(given: &str) -> &'static str {
    (check::engine_choices().into_iter())
        .find(|n| *n == given)
        .expect("clap accepts registered names only")
}

/// `apc check`'s output formats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// One line per target.
    #[default]
    Text,
    /// One JSON object (with several files: an object with one per file).
    Json,
    /// One JSON object per line and file, each printed as soon as the file is decided.
    Jsonl,
    /// One SARIF 2.1.0 log, for GitHub code scanning and SARIF viewers: a result per
    /// target (reachable: `fail`; unknown: `open`; unreachable: `pass`, its proof a
    /// property).
    Sarif,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The microc source file(s), or directories: every `.mc` file below a directory
    /// is checked (in path order). With several files the targets of all of them share
    /// the `--jobs` workers, and a rejected file does not stop the others.
    #[arg(required = true, value_name = "FILE|DIR")]
    pub files: Vec<PathBuf>,
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
    /// Output format: one line per target, one JSON object, or one JSON line per file.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Show where each target's time went: per engine, the time in each phase (building
    /// the condition, simplifying, starting a solver, solving, replaying, waiting for a
    /// core, …). Engines that run at once each count their own time.
    #[arg(long)]
    pub profile: bool,
    /// Explain each verdict under its line: for `unreachable`, what proved it (the
    /// invariant at each loop head, as a microc condition; every path explored; the
    /// condition with no model; the value fact); for `unknown`, every engine's reason.
    /// The JSON carries the proof as `proof` and the reasons as `reason` in any case.
    #[arg(long)]
    pub explain: bool,
    /// Under each reachable target's line, the witness's run as the reference
    /// interpreter replays it: the branches taken, each loop folded into its
    /// iteration count, with the values each condition read, then the statement that
    /// fails with the values it read (JSON: `trace`; SARIF: `codeFlows`, always).
    #[arg(long)]
    pub trace: bool,
    /// How many targets to check in parallel (1 to 256), over all the files.
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
    /// Which engine decides. `all` (the default): the portfolio, the engines of
    /// `--portfolio` on parallel threads within the target's `--timeout`; the first
    /// definite answer (a checked proof or a replayed witness) wins and stops the
    /// others. `nc+explore`: the necessary conditions, then, on a target they leave
    /// undecided, the symbolic executor for the time that is left. `nc`: the necessary
    /// conditions alone (proofs and replayed witnesses; where a loop's summary leaves an
    /// integer unknown, they race again with the Horn engine's proved invariants from
    /// runs assumed at the loops' heads). `chc`: Horn clauses solved by
    /// Z3's fixed-point engine: an invariant is `unreachable` once apc has re-checked
    /// it, clause by clause; a counterexample is `reachable` once the inputs found by
    /// unrolling the clauses replay (values in local arrays, records and behind
    /// pointers are unknown to it; a recursive function's calls are related by a
    /// summary of it; polynomial loop invariants are guessed from runs and checked).
    /// `explore`: the symbolic executor alone, guided to the target with path
    /// subsumption (replayed witnesses; `unreachable` when every path to the target
    /// was explored). `compositional`: compositional symbolic execution (per-function
    /// summaries, docs/compositional-se.md; replayed witnesses; `unreachable` when its
    /// run ends with no unknown leaf; programs with only integers, no recursion).
    /// `compact`: compact symbolic execution (loop and recursion templates,
    /// docs/compact-se.md; a replayed witness of an error leaf; `unreachable` when the
    /// compact tree is complete without one). `fuzz`: random tests made of the
    /// program's constants for up to 20 ms (docs/fuzzing.md; replayed witnesses
    /// only, never `unreachable`).
    #[arg(long, default_value = check::PORTFOLIO, value_parser = engine_parser())]
    pub engine: String,
    /// With `--engine all`: start the engines after the first --portfolio-head ones
    /// this many milliseconds later, if those have not decided by then.
    #[arg(long, value_name = "MS", default_value_t = check::DEFAULT_PORTFOLIO_DELAY.as_millis() as u64, value_parser = clap::value_parser!(u64).range(0..=1_000_000_000))]
    pub portfolio_delay: u64,
    /// With `--engine all`: start each engine after the first one that waits
    /// --portfolio-delay this many milliseconds after the one before it (0: all of them
    /// at --portfolio-delay), so that fewer engines share the cores while the first
    /// ones may still decide. By default as the schedule gives the program's class:
    /// 500 for loops that are not nested and use no arrays, heap or recursion, 0 for
    /// the others, and 0 with a --portfolio list (docs/portfolio.md §5a).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(0..=1_000_000_000))]
    pub portfolio_stagger: Option<u64>,
    /// With `--engine all`: how many of the --portfolio engines start at once (the
    /// others wait --portfolio-delay). By default 2, or the number of cores where that
    /// is fewer: no more engines start at once than there are cores to run them.
    #[arg(long, value_name = "N", default_value_t = check::default_portfolio_head() as u64, value_parser = clap::value_parser!(u64).range(1..=16))]
    pub portfolio_head: u64,
    /// With `--engine all`: the engines that race, comma-separated, in the order they
    /// start. By default all seven (the compositional engine only on programs with
    /// functions besides main), in the order the schedule gives the program's class
    /// (no loops, loops, nested loops, loops over arrays, loops over the heap,
    /// recursion), measured by `apc bench engines`: today
    /// fuzz,nc,explore-search,chc,explore,compositional,compact for every class
    /// (docs/portfolio.md §5a).
    #[arg(long, value_delimiter = ',', value_name = "ENGINES", value_parser = portfolio_parser())]
    pub portfolio: Option<Vec<String>>,
    /// With `--engine all`: run every engine at the same CPU priority. By default
    /// the conditions and the witness search run at normal priority, the guided
    /// executor and the compositional engine at niceness 5, the Horn clauses at 10
    /// (0 on a program with recursion, which their summaries decide): on few cores the engines compete, and this order decided Table 2's slowest
    /// rows several times sooner (docs/portfolio.md §3).
    #[arg(long)]
    pub portfolio_equal_priority: bool,
    /// With `--engine all`: before the targets one by one, ask about all of a file's
    /// targets at once (those the value facts do not prove), within one --timeout: one
    /// Horn invariant for every target, the whole program explored and one condition
    /// for every target race. A checked invariant, every path explored or an `unsat`
    /// proves them all; a replayed error decides its target. The targets it decides
    /// report the time it took (docs/portfolio.md §4).
    #[arg(long)]
    pub all_targets_first: bool,
    /// Send the necessary condition as computed, without the e-graph simplification
    /// (for comparison: `apc bench simplify` measures both).
    #[arg(long)]
    pub no_simplify: bool,
}

/// The solver choice and binaries, shared by `check` and `bench`.
#[derive(Args, Clone, Debug)]
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

    /// The one solver of a command that talks to one (`who`, in the error):
    /// `--solver all` is a bad command line.
    pub fn locate_one(&self, who: &str) -> Result<smt::Profile, ExitCode> {
        self.locate_one_quietly(who).map_err(|e| bad(&e))
    }

    /// [`SolverArgs::locate_one`] with the error as a message.
    pub fn locate_one_quietly(&self, who: &str) -> Result<smt::Profile, String> {
        if self.solver == SolverChoice::All {
            return Err(format!(
                "{who} talks to one solver: choose --solver z3 or --solver cvc5"
            ));
        }
        Ok(self.locate_quietly()?.remove(0))
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
    let solvers = match a.solvers.locate() {
        Ok(s) => s,
        Err(code) => return code,
    };
    if a.portfolio.as_ref().is_some_and(Vec::is_empty) {
        let names: Vec<&str> = check::ENGINES.iter().map(|e| e.name()).collect();
        return bad(&format!(
            "--portfolio takes engines among {}",
            names.join(", ")
        ));
    }
    let batch = a.files.len() > 1 || a.files.iter().any(|p| p.is_dir());
    if batch && !a.target.is_empty() {
        return bad("--target needs exactly one FILE");
    }
    let paths = match source_files(&a.files) {
        Ok(p) => p,
        Err(e) => return bad(&e),
    };
    if let Some(dir) = &a.dump_queries
        && let Err(e) = super::writable_dir(dir)
    {
        return bad(&e);
    }
    let opts = options(&a, solvers);
    let status = if batch {
        check_many(&a, &paths, &opts, started)
    } else {
        check_one(&a, &paths[0], &opts, started)
    };
    if let Some(e) = opts.dump_failure.get() {
        return bad(&format!("some queries were not dumped: {e}"));
    }
    status.into()
}

/// The check options the flags ask for.
fn options(a: &CheckArgs, solvers: Vec<smt::Profile>) -> CheckOptions {
    CheckOptions {
        solvers,
        mode: match a.mode {
            ModeChoice::Race => Mode::Race,
            ModeChoice::Quantified => Mode::Quantified,
            ModeChoice::Unfolded => Mode::Unfolded,
        },
        k: a.k,
        timeout: a.timeout,
        jobs: a.jobs,
        dump_queries: a.dump_queries.clone(),
        dump_failure: Default::default(),
        counter_inference: !a.no_counter_inference,
        max_models: a.max_models,
        simplify: !a.no_simplify,
        engine: engine_name(&a.engine),
        portfolio_delay: Duration::from_millis(a.portfolio_delay),
        portfolio_stagger: a.portfolio_stagger.map(Duration::from_millis),
        portfolio_head: a.portfolio_head as usize,
        portfolio: match &a.portfolio {
            Some(list) => list.iter().map(|e| engine_name(e)).collect(),
            None => check::DEFAULT_PORTFOLIO.to_vec(),
        },
        portfolio_scheduled: a.portfolio.is_none(),
        portfolio_priorities: !a.portfolio_equal_priority,
        sharing_cores: false,
        all_targets_first: a.all_targets_first,
        explain: a.explain,
        trace: a.trace || a.format == CheckFormat::Sarif,
        cancel: Default::default(),
    }
}

/// The files the arguments name: a file as given, a directory as every
/// `.mc` file below it, in path order. A missing path or a directory
/// without programs is an error.
pub(super) fn source_files(args: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for arg in args {
        if arg.is_dir() {
            let before = files.len();
            programs_below(arg, &mut files)?;
            if files.len() == before {
                return Err(format!("{}: no .mc files in this directory", arg.display()));
            }
        } else {
            // A missing file is reported by `load` as for one file.
            files.push(arg.clone());
        }
    }
    Ok(files)
}

/// The `.mc` files below `dir`. A link to a directory is not followed: a
/// link back up the tree (`/proc/self/root`) would make the walk endless.
fn programs_below(dir: &std::path::Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let read = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut entries: Vec<(PathBuf, bool)> = read
        .filter_map(|e| e.ok())
        .map(|e| (e.path(), e.file_type().is_ok_and(|t| t.is_dir())))
        .collect();
    entries.sort();
    for (p, is_dir) in entries {
        if is_dir {
            programs_below(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "mc") {
            out.push(p);
        }
    }
    Ok(())
}

/// `apc check FILE`: its diagnostics and a missing `main` are errors of
/// the command line.
fn check_one(a: &CheckArgs, path: &PathBuf, opts: &CheckOptions, started: Instant) -> ExitStatus {
    let loaded = match load(path) {
        Ok(l) => l,
        Err(_) => return ExitStatus::BadInput,
    };
    if crate::db::program(&loaded.db, loaded.file).is_none() {
        eprintln!("error: {}: the program has no `main`", loaded.path);
        return ExitStatus::BadInput;
    }
    let all = check::targets(&loaded.db, loaded.file);
    let targets: Vec<check::Target> = if a.target.is_empty() {
        all
    } else {
        match targets_at_places(&loaded.path, &all, &a.target) {
            Ok(t) => t,
            Err(_) => return ExitStatus::BadInput,
        }
    };
    let bar = if targets.len() > 1 {
        super::progress(targets.len(), "{bar:30} {pos}/{len} targets {elapsed}")
    } else {
        indicatif::ProgressBar::hidden()
    };
    let reports = check::check_all(&loaded.db, loaded.file, &targets, opts, &|_| bar.inc(1));
    bar.finish_and_clear();
    let total = started.elapsed();
    let solver = solver_name(a);
    match a.format {
        CheckFormat::Text => print_text(&loaded.path, &reports, total, Shown::of(a)),
        CheckFormat::Json => outln!(
            "{:#}",
            file_json(&loaded.path, &solver, &reports, total, a.profile)
        ),
        CheckFormat::Jsonl => outln!(
            "{}",
            file_json(&loaded.path, &solver, &reports, total, a.profile)
        ),
        CheckFormat::Sarif => outln!("{:#}", super::sarif::log(&[(&loaded.path, Ok(&reports))])),
    }
    status_of(&reports)
}

/// The exit status of some reports: a reachable target, else an unknown
/// one, else all proved.
fn status_of(reports: &[Report]) -> ExitStatus {
    let [_, reachable, unknown] = verdict_counts(reports);
    if reachable > 0 {
        ExitStatus::Found
    } else if unknown > 0 {
        ExitStatus::Undecided
    } else {
        ExitStatus::Ok
    }
}

fn solver_name(a: &CheckArgs) -> Option<String> {
    a.solvers
        .solver
        .to_possible_value()
        .map(|v| v.get_name().to_string())
}

/// One file of a batch: checked, or rejected with the reason.
type Entry = Result<Vec<Report>, String>;

/// `apc check FILE… | DIR…`: every file's targets on the shared workers;
/// each file is printed, in order, once it is decided. A rejected file
/// (its diagnostics on stderr) is reported and makes the status 2.
fn check_many(
    a: &CheckArgs,
    paths: &[PathBuf],
    opts: &CheckOptions,
    started: Instant,
) -> ExitStatus {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let mut subjects = Vec::new();
    let mut subject_of_file = Vec::new();
    let mut printer = BatchPrinter::new(a, shown.clone());
    for (i, path) in paths.iter().enumerate() {
        match load_program(path) {
            Ok(s) => {
                subject_of_file.push(Some(subjects.len()));
                subjects.push(s);
            }
            Err(why) => {
                subject_of_file.push(None);
                printer.ready.insert(i, Err(why));
            }
        }
    }
    let file_of_subject: Vec<usize> = (0..paths.len())
        .filter(|&i| subject_of_file[i].is_some())
        .collect();
    let total: usize = subjects.iter().map(|s| s.targets.len()).sum();
    let bar = super::progress(total, "{bar:30} {pos}/{len} targets {elapsed}");
    printer.flush(&bar);
    let printer = std::sync::Mutex::new(printer);
    check::check_batch(&subjects, opts, &|_| bar.inc(1), &|s, reports| {
        let mut p = printer.lock().unwrap_or_else(|e| e.into_inner());
        p.ready.insert(file_of_subject[s], Ok(reports.to_vec()));
        p.flush(&bar);
    });
    bar.finish_and_clear();
    let printer = printer.into_inner().unwrap_or_else(|e| e.into_inner());
    printer.finish(started.elapsed())
}

/// A program of a batch, or why it cannot be checked.
fn load_program(path: &PathBuf) -> Result<check::Subject, String> {
    let loaded = super::load_quietly(path)?;
    if crate::db::program(&loaded.db, loaded.file).is_none() {
        return Err(format!("{}: the program has no `main`", loaded.path));
    }
    let targets = check::targets(&loaded.db, loaded.file);
    Ok(check::Subject {
        db: loaded.db,
        file: loaded.file,
        targets,
    })
}

/// Prints a batch's files in order as they are decided, and the totals.
struct BatchPrinter {
    format: CheckFormat,
    shown: Shown,
    solver: Option<String>,
    files: Vec<String>,
    ready: std::collections::BTreeMap<usize, Entry>,
    next: usize,
    /// Every file, for `--format json` and the totals.
    done: Vec<(String, Entry)>,
}

impl BatchPrinter {
    fn new(a: &CheckArgs, files: Vec<String>) -> BatchPrinter {
        BatchPrinter {
            format: a.format,
            shown: Shown::of(a),
            solver: solver_name(a),
            files,
            ready: Default::default(),
            next: 0,
            done: Vec::new(),
        }
    }

    /// Prints the files that are next in order and decided.
    fn flush(&mut self, bar: &indicatif::ProgressBar) {
        while let Some(entry) = self.ready.remove(&self.next) {
            let path = self.files[self.next].clone();
            bar.suspend(|| self.print(&path, &entry));
            self.done.push((path, entry));
            self.next += 1;
        }
    }

    fn print(&self, path: &str, entry: &Entry) {
        match (self.format, entry) {
            (CheckFormat::Text, Ok(reports)) => print_target_lines(path, reports, self.shown),
            (CheckFormat::Text, Err(why)) => outln!("{why}"),
            (CheckFormat::Jsonl, e) => outln!("{}", self.entry_json(path, e)),
            (CheckFormat::Json | CheckFormat::Sarif, _) => {}
        }
    }

    fn entry_json(&self, path: &str, entry: &Entry) -> Value {
        match entry {
            Ok(reports) => {
                let time = reports.iter().map(|r| r.time).sum();
                file_json(path, &self.solver, reports, time, self.shown.profile)
            }
            Err(why) => json!({"file": path, "error": why, "targets": []}),
        }
    }

    /// The totals (and, for `--format json`, everything); the status.
    fn finish(self, total: Duration) -> ExitStatus {
        let reports: Vec<Report> = self
            .done
            .iter()
            .filter_map(|(_, e)| e.as_ref().ok())
            .flatten()
            .cloned()
            .collect();
        let rejected = self.done.iter().filter(|(_, e)| e.is_err()).count();
        let [unreachable, reachable, unknown] = verdict_counts(&reports);
        match self.format {
            CheckFormat::Text => outln!(
                "{} files ({rejected} rejected), {} targets: {unreachable} unreachable, {reachable} reachable, {unknown} unknown ({:.1} ms)",
                self.done.len(),
                reports.len(),
                ms(total)
            ),
            CheckFormat::Json => {
                let files: Vec<Value> = self
                    .done
                    .iter()
                    .map(|(p, e)| self.entry_json(p, e))
                    .collect();
                let out = json!({
                    "solver": self.solver,
                    "files": files,
                    "summary": {
                        "files": self.done.len(),
                        "rejected": rejected,
                        "targets": reports.len(),
                        "unreachable": unreachable,
                        "reachable": reachable,
                        "unknown": unknown,
                    },
                    "time_ms": ms(total),
                });
                outln!("{out:#}");
            }
            CheckFormat::Jsonl => {}
            CheckFormat::Sarif => {
                let files: Vec<super::sarif::FileEntry> = (self.done.iter())
                    .map(|(p, e)| {
                        let e = e.as_deref().map_err(String::as_str);
                        (p.as_str(), e)
                    })
                    .collect();
                outln!("{:#}", super::sarif::log(&files));
            }
        }
        if rejected > 0 {
            ExitStatus::BadInput
        } else {
            status_of(&reports)
        }
    }
}

fn ms(d: Duration) -> f64 {
    super::rounded_ms(d, 1)
}

/// What the text format shows under each target's line.
#[derive(Clone, Copy, Debug)]
struct Shown {
    profile: bool,
    explain: bool,
}

impl Shown {
    fn of(a: &CheckArgs) -> Shown {
        Shown {
            profile: a.profile,
            explain: a.explain,
        }
    }
}

fn print_text(path: &str, reports: &[Report], total: Duration, shown: Shown) {
    print_target_lines(path, reports, shown);
    let [unreachable, reachable, unknown] = verdict_counts(reports);
    outln!(
        "{} target{}: {unreachable} unreachable, {reachable} reachable, {unknown} unknown ({:.1} ms)",
        reports.len(),
        if reports.len() == 1 { "" } else { "s" },
        ms(total)
    );
}

/// One line per target (with `--explain`, its explanation under it; with
/// `--profile`, one more line per engine).
fn print_target_lines(path: &str, reports: &[Report], shown: Shown) {
    for r in reports {
        let t = &r.target;
        let how = match (&r.method, &r.solver) {
            (Some(m), Some(s)) => format!(" [{m}, {s}]"),
            (Some(m), None) => format!(" [{m}]"),
            _ => String::new(),
        };
        let what = match &r.verdict {
            Verdict::Unreachable => "unreachable".to_string(),
            Verdict::Reachable(w) => format!("reachable with {w}"),
            Verdict::Unknown(why) => {
                format!("unknown ({})", r.short_reason.as_ref().unwrap_or(why))
            }
        };
        outln!(
            "{path}:{}:{}: {} in {}: {what}{how} {:.1} ms",
            t.line,
            t.col,
            t.kind.as_str(),
            t.function,
            ms(r.time)
        );
        if shown.explain {
            print_explanation(r);
        }
        if let Some(trace) = &r.trace {
            for line in super::explain::trace_lines(trace) {
                outln!("  {line}");
            }
        }
        if shown.profile {
            print_profile(&r.profile);
        }
    }
}

/// The lines `--explain` adds under a target's line.
fn print_explanation(r: &Report) {
    let lines = match (&r.verdict, &r.proof) {
        (_, Some(proof)) => super::explain::proof_lines(proof),
        (Verdict::Unknown(why), _) => super::explain::reason_lines(why),
        (Verdict::Reachable(_), _) if r.trace.is_none() => {
            vec![
                "witness: replayed to the target by the interpreter (--trace shows the run)".into(),
            ]
        }
        _ => vec![],
    };
    for line in lines {
        outln!("  {line}");
    }
}

/// `  nc: building the condition 0.4 ms, solving 21.0 ms`: per engine, its
/// phases, the longest first.
fn print_profile(times: &PhaseTimes) {
    let mut engines: Vec<&str> = times.0.keys().map(|(e, _)| *e).collect();
    engines.dedup();
    for engine in engines {
        let mut phases: Vec<(&str, Duration)> = (times.0.iter())
            .filter(|((e, _), _)| *e == engine)
            .map(|((_, p), t)| (*p, *t))
            .collect();
        phases.sort_by_key(|(_, t)| std::cmp::Reverse(*t));
        // What rounds to 0.0 ms says nothing (an engine that never started).
        phases.retain(|(_, t)| *t >= Duration::from_micros(50));
        if phases.is_empty() {
            continue;
        }
        let shown: Vec<String> = (phases.iter())
            .map(|(p, t)| format!("{p} {:.1} ms", ms(*t)))
            .collect();
        outln!("  {engine}: {}", shown.join(", "));
    }
}

/// `[{"engine": …, "phase": …, "time_ms": …}, …]`.
fn profile_json(times: &PhaseTimes) -> Value {
    (times.0.iter())
        .map(|((engine, phase), t)| json!({"engine": engine, "phase": phase, "time_ms": ms(*t)}))
        .collect()
}

fn arg_json(v: &ArgValue) -> Value {
    match v {
        ArgValue::Int(n) => big(n),
        ArgValue::List(xs) => Value::Array(xs.iter().map(arg_json).collect()),
    }
}

/// Longest input stream a witness's JSON lists value by value; a longer
/// one (a block schedule's, millions of values) is given as runs.
const LONGEST_LISTED_INPUT: usize = 100_000;

/// `{"args": {...}, "input": [...]}`, or for a stream longer than
/// [`LONGEST_LISTED_INPUT`], `"input": null, "input_runs": [[value,
/// count], ...]`.
pub(super) fn witness_json(w: &Witness) -> Value {
    let args: Map<String, Value> = w
        .args
        .iter()
        .map(|(n, v)| (n.clone(), arg_json(v)))
        .collect();
    if w.input.len() > LONGEST_LISTED_INPUT {
        let runs = crate::interp::runs_of(&w.input);
        let runs: Vec<Value> = (runs.into_iter())
            .map(|(v, n)| json!([big(v), n]))
            .collect();
        return json!({"args": args, "input": null, "input_runs": runs});
    }
    let input: Vec<Value> = w.input.iter().map(big).collect();
    json!({"args": args, "input": input})
}

/// A file's verdicts as one JSON object.
fn file_json(
    path: &str,
    solver: &Option<String>,
    reports: &[Report],
    total: Duration,
    profile: bool,
) -> Value {
    let targets: Vec<Value> = reports.iter().map(|r| report_json(r, profile)).collect();
    let [unreachable, reachable, unknown] = verdict_counts(reports);
    let used: SolverUse = reports.iter().map(|r| r.solver_use).sum();
    json!({
        "file": path,
        "solver": solver,
        "targets": targets,
        "summary": {
            "targets": reports.len(),
            "unreachable": unreachable,
            "reachable": reachable,
            "unknown": unknown,
            "solver_checks": used.checks,
            "smt_bytes": used.bytes,
        },
        "time_ms": ms(total),
    })
}

fn report_json(r: &Report, profile: bool) -> Value {
    let t = &r.target;
    let (reason, witness) = match &r.verdict {
        Verdict::Unreachable => (Value::Null, Value::Null),
        Verdict::Reachable(w) => (Value::Null, witness_json(w)),
        Verdict::Unknown(why) => (Value::String(why.clone()), Value::Null),
    };
    let mut json = json!({
        "kind": t.kind.as_str(),
        "function": t.function,
        "line": t.line,
        "col": t.col,
        "verdict": r.verdict.name(),
        "reason": reason,
        "short_reason": r.short_reason,
        "witness": witness,
        "proof": r.proof.as_ref().map(super::explain::proof_json),
        "trace": r.trace.as_ref().map(super::explain::trace_json),
        "engine": r.engine,
        "method": r.method.as_ref().map(ToString::to_string),
        "solver": r.solver,
        "time_ms": ms(r.time),
        "solver_checks": r.solver_use.checks,
        "smt_bytes": r.solver_use.bytes,
    });
    if profile {
        json["profile"] = profile_json(&r.profile);
    }
    json
}
