//! Benchmarks: the programs of ISSTA'12 Table 2 (seed 004 §6), built into
//! the binary so that `apc bench` runs anywhere, and the measurements made
//! on them. Knows the check pipeline (`check`, `db`, `simplify`); prints
//! nothing (the CLI formats the rows).

use crate::check::{self, CheckOptions, Mode, Target, Verdict};
use crate::db::{self, Database, SourceFile};
use crate::smt::Profile;
use std::time::{Duration, Instant};

/// A benchmark program and the target Table 2 asks about.
pub struct Benchmark {
    /// The name in the paper.
    pub name: &'static str,
    pub file: &'static str,
    pub source: &'static str,
    /// The paper's answer for the target: reachable (SAT) or not (UNSAT).
    pub paper_reachable: bool,
}

macro_rules! program {
    ($name:literal, $file:literal, $reachable:literal) => {
        Benchmark {
            name: $name,
            file: $file,
            source: include_str!(concat!("../../tests/programs/", $file)),
            paper_reachable: $reachable,
        }
    };
}

/// Table 2's benchmarks (WinDriver as the packet program written from its
/// description) and the running example, in the paper's order.
pub const TABLE2: &[Benchmark] = &[
    program!("Hello", "hello.mc", true),
    program!("HW", "hw.mc", true),
    program!("HWM", "hwm.mc", true),
    program!("MatrIR", "matrir.mc", true),
    program!("WinDriver", "windriver.mc", true),
    program!("OneLoop", "oneloop.mc", false),
    program!("TwoLoops", "twoloops.mc", false),
    program!("running example", "issta_running.mc", true),
];

/// A benchmark loaded into a database of its own, with its target.
pub struct Loaded {
    pub db: Database,
    pub file: SourceFile,
    pub target: Target,
}

impl Benchmark {
    /// The target: the first `// @target` annotation of the program's
    /// source (the one the paper asks about).
    pub fn load(&self) -> Result<Loaded, String> {
        let (line, col) = self
            .source
            .lines()
            .find_map(|l| {
                let json = l.trim().strip_prefix("// @target")?;
                let v: serde_json::Value = serde_json::from_str(json.trim()).ok()?;
                Some((v["line"].as_u64()? as u32, v["col"].as_u64()? as u32))
            })
            .ok_or_else(|| format!("{}: no @target annotation", self.file))?;
        let db = Database::default();
        let file = SourceFile::new(&db, self.file.to_string(), self.source.to_string());
        let target = check::targets(&db, file)
            .into_iter()
            .find(|t| (t.line, t.col) == (line, col))
            .ok_or_else(|| format!("{}: no target at {line}:{col}", self.file))?;
        Ok(Loaded { db, file, target })
    }
}

/// The answer of a verdict in the papers' terms.
pub fn answer(v: &Verdict) -> &'static str {
    match v {
        Verdict::Unreachable => "unsat",
        Verdict::Reachable(_) => "sat",
        Verdict::Unknown(_) => "unknown",
    }
}

/// The median of some durations (the lower middle one for an even count).
pub fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs.get(xs.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or_default()
}

/// One `apc check` of a loaded benchmark's target, timed; the necessary
/// condition (and its simplification) are already in the database, so
/// this is the solving: queries, solver race, witness replay.
pub fn solve(
    l: &Loaded,
    solver: &Profile,
    simplify: bool,
    timeout: Duration,
) -> (Verdict, Duration, String) {
    let opts = check_options(solver, simplify, timeout);
    let start = Instant::now();
    let r = check::check_target(&l.db, l.file, &l.target, &opts);
    (r.verdict, start.elapsed(), r.method.unwrap_or_default())
}

/// `apc check`'s defaults, on one solver.
fn check_options(solver: &Profile, simplify: bool, timeout: Duration) -> CheckOptions {
    CheckOptions {
        solvers: vec![solver.clone()],
        mode: Mode::Race,
        k: 25,
        timeout,
        jobs: 1,
        dump_queries: None,
        counter_inference: true,
        max_models: 5,
        simplify,
    }
}

/// What `apc bench simplify` measures of one benchmark.
pub struct SimplifyRow {
    pub benchmark: &'static str,
    pub target: String,
    pub nodes_before: usize,
    pub nodes_after: usize,
    pub simplify_time: Duration,
    /// Why the simplifier stopped.
    pub stop: String,
    /// Per solver: (solver, with simplification, without).
    pub solves: Vec<(String, Solve, Solve)>,
}

/// The median solving time of some runs and the (last) answer.
pub struct Solve {
    pub answer: &'static str,
    pub time: Duration,
    pub method: String,
}

/// Measures simplification on one benchmark: sizes and time, then the
/// solving time with and without it on each solver (medians of `runs`).
pub fn simplify_row(
    b: &Benchmark,
    solvers: &[Profile],
    runs: usize,
    timeout: Duration,
    tick: &dyn Fn(),
) -> Result<SimplifyRow, String> {
    let l = b.load()?;
    let t = &l.target;
    let mut solves = Vec::new();
    let mut stats = None;
    for solver in solvers {
        // Computed once here (per solver: the engine's helper queries use
        // it), so that the runs below time only the solving.
        let opts = check::engine_options(&check_options(solver, true, timeout));
        db::necessary_condition(&l.db, l.file, t.function.clone(), t.id, opts.clone());
        let s = db::simplified_condition(&l.db, l.file, t.function.clone(), t.id, opts);
        stats.get_or_insert_with(|| s.value.1.clone());
        let measure = |simplify: bool| {
            let mut times = Vec::new();
            let mut last = (Verdict::Unknown(String::new()), String::new());
            for _ in 0..runs.max(1) {
                let (v, time, method) = solve(&l, solver, simplify, timeout);
                times.push(time);
                last = (v, method);
                tick();
            }
            Solve {
                answer: answer(&last.0),
                time: median(times),
                method: last.1,
            }
        };
        let with = measure(true);
        let without = measure(false);
        solves.push((solver.name.clone(), with, without));
    }
    let stats = stats.ok_or("no solver")?;
    Ok(SimplifyRow {
        benchmark: b.name,
        target: format!("{}:{}", t.line, t.col),
        nodes_before: stats.nodes_before,
        nodes_after: stats.nodes_after,
        simplify_time: stats.time,
        stop: stats.stop.clone(),
        solves,
    })
}
