//! Benchmarks: the programs of ISSTA'12 Table 2 (§6), built into
//! the binary so that `apc bench` runs anywhere, and the measurements made
//! on them. Knows the check pipeline (`check`, `db`, `simplify`); prints
//! nothing (the CLI formats the rows).

pub mod compact;
pub mod compositional;
pub mod engines;
pub mod explore;
pub mod incremental;
pub mod ksweep;
pub mod run;
pub mod scale;
pub mod thesis;

use crate::check::{self, CheckOptions, Target, Verdict};
use crate::db::{Database, SourceFile};
use crate::nc::{Options, query};
use crate::smt::Profile;
use crate::smt::Variant;
use std::time::{Duration, Instant};

/// A benchmark program and the target Table 2 asks about.
pub struct Benchmark {
    /// The name in the paper.
    pub name: &'static str,
    pub file: &'static str,
    pub source: &'static str,
    /// The paper's row of Table 2, where it has one.
    pub paper: Option<PaperRow>,
}

/// A row of ISSTA'12 Table 2 (= TR Table 3; seconds; Z3 3.2 on an i7-920,
/// K = 25; `docs/necessary-conditions.md`). `None` where the paper has no number (out of
/// memory or time).
#[derive(Clone, Copy, Debug)]
pub struct PaperRow {
    pub total: f64,
    pub build: f64,
    pub unfold: f64,
    pub smt_unfolded: f64,
    pub unfolded_answer: &'static str,
    pub smt_quantified: Option<f64>,
    pub quantified_answer: &'static str,
}

macro_rules! program {
    ($name:literal, $file:literal, $paper:expr) => {
        Benchmark {
            name: $name,
            file: $file,
            source: include_str!(concat!("../../tests/programs/", $file)),
            paper: $paper,
        }
    };
}

const fn row(
    total: f64,
    build: f64,
    unfold: f64,
    smt_unfolded: f64,
    unfolded_answer: &'static str,
    smt_quantified: Option<f64>,
    quantified_answer: &'static str,
) -> Option<PaperRow> {
    Some(PaperRow {
        total,
        build,
        unfold,
        smt_unfolded,
        unfolded_answer,
        smt_quantified,
        quantified_answer,
    })
}

/// Table 2's benchmarks (WinDriver as the packet program written from its
/// description) and the running example, in the paper's order.
pub const TABLE2: &[Benchmark] = &[
    program!(
        "Hello",
        "hello.mc",
        row(0.181, 0.021, 0.290, 0.060, "sat", Some(0.160), "sat")
    ),
    program!(
        "HW",
        "hw.mc",
        row(0.941, 0.073, 0.698, 0.170, "sat", Some(13.84), "sat")
    ),
    program!(
        "HWM",
        "hwm.mc",
        row(4.660, 1.715, 2.135, 0.810, "sat", None, "out of memory")
    ),
    program!(
        "MatrIR",
        "matrir.mc",
        row(0.035, 0.015, 0.491, 70.80, "sat", Some(0.020), "sat")
    ),
    program!(
        "WinDriver",
        "windriver.mc",
        row(0.627, 0.178, 0.369, 0.080, "sat", Some(4.860), "unknown")
    ),
    program!(
        "OneLoop",
        "oneloop.mc",
        row(0.003, 0.001, 0.001, 0.001, "unsat", Some(0.010), "unsat")
    ),
    program!(
        "TwoLoops",
        "twoloops.mc",
        row(0.003, 0.002, 0.004, 0.010, "unsat", Some(0.001), "unsat")
    ),
    program!("running example", "issta_running.mc", None),
];

/// A benchmark loaded into a database of its own, with its target.
pub struct Loaded {
    pub db: Database,
    pub file: SourceFile,
    pub target: Target,
}

impl Benchmark {
    /// Loaded with its target: the first `// @target` annotation of the
    /// program's source (the one the paper asks about).
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
        Loaded::new(self.file, self.source, |t| (t.line, t.col) == (line, col))
            .map_err(|e| format!("{e} at {line}:{col}"))
    }
}

/// What every bench times as "build φ̂": `load` (a fresh database each
/// run, so nothing is cached) and the target's condition, `runs` times;
/// the median and the last load.
pub fn timed_build(
    runs: usize,
    opts: &Options,
    load: impl Fn() -> Result<Loaded, String>,
) -> Result<(Duration, Loaded), String> {
    let (build, l) = timed(runs, Duration::MAX, || {
        let l = load()?;
        l.condition(opts);
        Ok::<_, String>(l)
    });
    Ok((build, l?))
}

impl Loaded {
    /// A program in a fresh database, with the first target `select` picks.
    pub fn new(
        file: &str,
        source: &str,
        select: impl Fn(&Target) -> bool,
    ) -> Result<Loaded, String> {
        let (db, file_id) = Database::with_file(file, source);
        let target = check::targets(&db, file_id)
            .into_iter()
            .find(select)
            .ok_or_else(|| format!("{file}: no such target"))?;
        Ok(Loaded {
            db,
            file: file_id,
            target,
        })
    }

    /// The target's necessary condition (computed once per database).
    pub fn condition(&self, opts: &Options) -> &crate::nc::Portable<crate::nc::Condition> {
        let t = &self.target;
        crate::nc::necessary_condition(&self.db, self.file, t.function.clone(), t.id, opts.clone())
    }

    /// Its simplified condition, computed before a timed solve so that
    /// every run times the solving only.
    pub fn simplified(&self, opts: &Options) -> &crate::nc::Simplified {
        let t = &self.target;
        crate::nc::simplified_condition(&self.db, self.file, t.function.clone(), t.id, opts.clone())
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

/// One `apc check` of a loaded benchmark's target (time it with
/// [`timed`]); with the condition (and its simplification) already in the
/// database, this is the solving: queries, solver race, witness replay.
pub fn solve(l: &Loaded, opts: &CheckOptions) -> (Verdict, String) {
    let r = check::check_target(&l.db, l.file, &l.target, opts);
    (
        r.verdict,
        r.method.map(|m| m.to_string()).unwrap_or_default(),
    )
}

/// `apc check`'s defaults, on one solver.
fn check_options(solver: &Profile, simplify: bool, timeout: Duration) -> CheckOptions {
    CheckOptions {
        simplify,
        ..CheckOptions::new(vec![solver.clone()], timeout)
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
        let opts = crate::nc::engine_options(&check_options(solver, true, timeout));
        l.condition(&opts);
        let s = l.simplified(&opts);
        stats.get_or_insert_with(|| s.stats.clone());
        let measure = |simplify: bool| {
            let check = check_options(solver, simplify, timeout);
            let (time, (v, method)) = timed(runs, Duration::MAX, || {
                let r = solve(&l, &check);
                tick();
                r
            });
            Solve {
                answer: answer(&v),
                time,
                method,
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

/// What `apc bench apc` measures of one benchmark on one solver (medians
/// of the runs; the answers of the last run).
pub struct ApcRow {
    pub benchmark: &'static str,
    pub solver: String,
    pub build: Duration,
    pub unfold: Duration,
    pub quantified: (Duration, String),
    pub unfolded: (Duration, String),
    /// The race as `apc check --no-simplify` runs it (build included) and
    /// its answer.
    pub total: Duration,
    pub answer: &'static str,
    pub method: String,
    /// `apc check` as a user runs it (the portfolio, simplification on, a
    /// fresh database each run so the build counts): median time, answer
    /// and the engine that won.
    pub portfolio: (Duration, &'static str, String),
    pub paper: Option<PaperRow>,
}

/// The bar for one Table 2 benchmark with `apc check`'s defaults: this,
/// or the paper's own total where that is less ([`ApcRow::bar`]).
pub const TABLE2_BAR: Duration = Duration::from_millis(50);

impl ApcRow {
    /// The time `apc check` should stay under: [`TABLE2_BAR`], or the
    /// paper's total where that is less.
    pub fn bar(&self) -> Duration {
        let paper = self.paper.map(|p| Duration::from_secs_f64(p.total));
        paper.map_or(TABLE2_BAR, |p| p.min(TABLE2_BAR))
    }

    /// Whether `apc check` stayed within [`ApcRow::bar`].
    pub fn within_bar(&self) -> bool {
        self.portfolio.0 <= self.bar()
    }
}

/// The answer of a one-shot query.
fn answer_of(a: &crate::smt::Answer) -> String {
    match a {
        crate::smt::Answer::Sat => "sat".into(),
        crate::smt::Answer::Unsat => "unsat".into(),
        crate::smt::Answer::Unknown(_) => "unknown".into(),
    }
}

/// Times `f` `runs` times (once if the first run reached `limit`, so that a
/// timeout is not waited for again); the median and the last result.
fn timed<T>(runs: usize, limit: Duration, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let r = f();
        let t = start.elapsed();
        times.push(t);
        last = Some(r);
        if t >= limit {
            break;
        }
    }
    (median(times), last.expect("at least one run"))
}

/// Table 2 on our implementation: building φ̂ (fresh database each run),
/// unfolding φ̂^25, each query alone on the solver, and the race (without
/// the e-graph simplification: the paper's pipeline has none).
pub fn apc_row(
    b: &Benchmark,
    solver: &Profile,
    runs: usize,
    query_timeout: Duration,
    race_timeout: Duration,
    tick: &dyn Fn(),
) -> Result<ApcRow, String> {
    let race_opts = check_options(solver, false, race_timeout);
    let opts = crate::nc::engine_options(&race_opts);
    let k = check::DEFAULT_K;
    // The last build stays for the measurements below.
    let (build, l) = timed_build(runs, &opts, || b.load())?;
    let nc = l.condition(&opts);
    let phi = nc.value.phi;
    let (unfold, unfolded_phi) = timed(runs, Duration::MAX, || {
        let mut own = nc.terms.clone();
        let phik = crate::nc::unfold(&mut own, phi, k);
        (own, phik)
    });
    let (own, phik) = unfolded_phi;
    let phik = phik.map_err(|_| format!("{}: φ̂^{k} is too large to unfold", b.name))?;
    let script = |q: crate::smt::Query| q.script(solver, &[]);
    let quantified_query = script(query::query(Variant::Quantified, &nc.terms, phi));
    let unfolded_query = script(query::query(Variant::Unfolded(k), &own, phik));
    let alone = |query: &str| {
        let (time, a) = timed(runs, query_timeout, || {
            answer_of(&crate::smt::run_script(solver, query, query_timeout).answer)
        });
        // A solver's own limit (cvc5's --tlimit-per) answers `unknown`
        // a little before ours: that is a timeout too.
        let a = if a == "unknown" && time >= query_timeout.mul_f64(0.9) {
            "timeout".to_string()
        } else {
            a
        };
        (time, a)
    };
    let quantified = alone(&quantified_query);
    tick();
    let unfolded = alone(&unfolded_query);
    tick();
    // The race on the database that already holds the condition: its time
    // plus the build time is what `apc check` takes.
    let (race, (verdict, method)) = timed(runs, race_timeout, || solve(&l, &race_opts));
    tick();
    let portfolio = portfolio_time(b, solver, runs, race_timeout)?;
    tick();
    Ok(ApcRow {
        benchmark: b.name,
        solver: solver.name.clone(),
        build,
        unfold,
        quantified,
        unfolded,
        total: build + race,
        answer: answer(&verdict),
        method,
        portfolio,
        paper: b.paper,
    })
}

/// Waits (up to half a second) until no solver session of an earlier race
/// is left running.
fn settle() {
    let until = Instant::now() + Duration::from_millis(500);
    while crate::smt::session::running() > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// `apc check`'s default engine on a fresh database per run: what a user
/// waits for.
fn portfolio_time(
    b: &Benchmark,
    solver: &Profile,
    runs: usize,
    timeout: Duration,
) -> Result<(Duration, &'static str, String), String> {
    let opts = CheckOptions {
        engine: check::PORTFOLIO,
        ..CheckOptions::new(vec![solver.clone()], timeout)
    };
    let mut failed = None;
    let (time, report) = timed(runs, timeout, || {
        // Each run as a user's would start: not beside the last one's
        // losers, still winding down on both cores.
        settle();
        match b.load() {
            Ok(l) => Some(check::check_target(&l.db, l.file, &l.target, &opts)),
            Err(e) => {
                failed = Some(e);
                None
            }
        }
    });
    match (report, failed) {
        (Some(r), _) => Ok((
            time,
            answer(&r.verdict),
            r.engine.unwrap_or("-").to_string(),
        )),
        (None, e) => Err(e.unwrap_or_default()),
    }
}
