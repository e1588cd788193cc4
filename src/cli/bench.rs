//! `apc bench`: measurements printed as tables (or JSON/CSV for scripts).

use super::check::SolverArgs;
use super::{ExitStatus, bad};
use crate::bench::{self, SimplifyRow};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub which: Which,
}

#[derive(Subcommand, Debug)]
pub enum Which {
    /// The e-graph simplifier on the Table 2 benchmarks: the condition's size (DAG
    /// nodes) before and after, the simplification time, and the time `apc check`
    /// takes to decide the target with and without simplification on each solver.
    ///
    /// The time to decide is everything after the condition is built: queries, the
    /// race, witness replay. The total row adds the simplification time to the "with"
    /// column, so that simplification pays for itself when total-with ≤ total-without.
    Simplify(Common),
    /// ISSTA'12 Table 2 on apc, beside the paper's numbers: per benchmark, the time to
    /// build φ̂, to unfold φ̂^25, each query alone on the solver (answer and time), and
    /// the race as `apc check` runs it (total, build included).
    ///
    /// Medians of --runs; a measurement that reaches its limit is not repeated. The
    /// paper's machine was a 2008 desktop (i7-920, Z3 3.2): the ratio compares across
    /// machines, not implementations alone.
    Apc(ApcArgs),
    /// The K sweep: φ̂^K alone (as `apc check --mode unfolded --k K`) for K = 1 … --k-max on
    /// each Table 2 benchmark, after φ̂ is built: the answer and time of each K, and the
    /// smallest K that decides (unreachable, or a replayed witness).
    Ksweep(KsweepArgs),
    /// Scaling curves on generated programs: n sequential ifs (2^n backbones), n
    /// sequential loops, loops nested to depth n, one loop body with n paths. For each n:
    /// the time to build φ̂, its size (DAG nodes, SMT-LIB bytes) and the time `apc check`
    /// takes to decide the program's assert; per family, the growth as the least-squares
    /// slope on a log–log scale (1 = linear in n, 2 = quadratic).
    Scale(ScaleArgs),
    /// The symbolic executor (`apc explore`) on the Table 2 programs and the thesis's
    /// listings: for each search strategy × merging strategy, how the exploration
    /// ended, the paths (merged states counting their inner paths) and the runs, the
    /// merges, the solver queries and their time, the total time and the time to the
    /// first error. Stops at the first error, as `apc explore` does.
    Explore(ExploreBenchArgs),
    /// The thesis's final experiment (§6.3.3) beside its published tables: the 18 program
    /// sets of Table 6.16 from `apc gen`, each program under base, merging, subsumption and
    /// summarisation (Tree search, stop at the first error, as the thesis ran them), then
    /// subsumption+summarisation, guided exploration and `apc check`.
    ///
    /// Per set and technique: path coverage, total time, timeouts, errors found and
    /// programs proved safe, beside the thesis's row (Tables 6.17–6.20; shares make sets
    /// of different sizes comparable). Every error is replayed by the interpreter, as
    /// `apc run` does; every `unreachable` is attacked by random concrete runs, and a hit
    /// is reported as a soundness failure (exit status 1).
    Thesis(super::bench_thesis::ThesisArgs),
    /// Classic against compact symbolic execution (`apc compact`): the size of each
    /// tree (vertices, leaves, and at the figures' granularity) on the compact paper's
    /// figures and the thesis's listings. The classic tree is usually infinite: it is
    /// bounded by --max-vertices and --timeout, and the row says which stopped it.
    Compact(CompactBenchArgs),
    /// Compositional symbolic execution against the executor that explores a callee
    /// again at every call (`explore`), on an IncDec-like family of N nested calls
    /// (docs/compositional-se.md §8, §12): both run until every path is explored; per N the
    /// steps, solver queries, solver time and total time, then the log–log slopes of
    /// queries and time (1 = linear, 2 = quadratic).
    Compositional(CompositionalBenchArgs),
    /// Concrete runs: steps per second of the fast engine and of the reference
    /// interpreter on a small family (a counting loop, nested loops, array sweeps,
    /// pointer chasing over alloc'ed records, recursion), beside the same program in C
    /// compiled by `cc -O0` where the family is integers and integer arrays. Ratios:
    /// how much faster the fast engine is than the reference, and how much slower than C.
    /// Both engines must end the same run, or the family is an error (exit status 1).
    Run(RunBenchArgs),
    /// The language server's incremental checking (`apc lsp`, run in this process and
    /// spoken to as an editor would): a generated program of --functions functions,
    /// each with a loop and two targets, and `main`. Per layout: the cold check; a
    /// one-line edit inside one function (the time until its verdicts are published,
    /// the targets checked again, how many by replaying their earlier witness, their
    /// solver checks, and the share of the cold
    /// check's time); the edit undone; and the time to cancel a check in flight when
    /// an edit comes (until the new text's diagnostics arrive).
    ///
    /// `dispatch`: `main` calls one function chosen by an input, so a target depends on
    /// `main` and its own function. `sequence`: `main` calls every function in turn, so
    /// an edit also changes what the targets of every function called after it depend
    /// on: those come back by their earlier witnesses and by the proofs for any call the
    /// server made while idle (the client waits for those after each step).
    Incremental(IncrementalArgs),
    /// The experiment behind the portfolio's schedule: every engine alone on every
    /// target of the programs given (files, or directories of `.mc` files) and of
    /// --generated programs from the thesis's generator. Per class of programs (no
    /// loops, loops, nested loops, loops over arrays, loops over the heap, recursion):
    /// each engine's decisions and median time; then the portfolio's race simulated on
    /// those times under every order of the engines: the unscheduled order, the best,
    /// the one built into apc and the one the run recommends (docs/portfolio.md §5a).
    Engines(super::bench_engines::EnginesBenchArgs),
}

#[derive(Args, Debug)]
pub struct IncrementalArgs {
    #[command(flatten)]
    pub solvers: SolverArgs,
    /// How many functions the program has (two targets each).
    #[arg(long, default_value_t = 30, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=500))]
    pub functions: usize,
    /// How `main` reaches the functions (repeatable; default both).
    #[arg(long, value_enum)]
    pub layout: Vec<LayoutChoice>,
    /// Wall-clock limit per target, in seconds.
    #[arg(long, default_value = "10", value_name = "SECS", value_parser = super::limits::seconds, allow_negative_numbers = true)]
    pub timeout: Duration,
    /// Output: an aligned table, or JSON (a list of rows) or CSV for scripts.
    #[arg(long, value_enum, default_value_t = BenchFormat::Table)]
    pub format: BenchFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LayoutChoice {
    /// `main` calls one function, chosen by an input.
    Dispatch,
    /// `main` calls every function, one after the other.
    Sequence,
}

#[derive(Args, Debug)]
pub struct RunBenchArgs {
    /// Runs per measurement; the median is reported.
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=super::limits::MAX_COUNT as u64))]
    pub runs: usize,
    /// The size of every program relative to the default (about 30 million steps).
    #[arg(long, default_value_t = 1.0, value_name = "X")]
    pub scale: f64,
    /// The C compiler.
    #[arg(long, default_value = "cc", value_name = "PATH")]
    pub cc: String,
    /// Output: an aligned table, or JSON (a list of rows) or CSV for scripts.
    #[arg(long, value_enum, default_value_t = BenchFormat::Table)]
    pub format: BenchFormat,
}

#[derive(Args, Debug)]
pub struct CompactBenchArgs {
    #[command(flatten)]
    pub solvers: SolverArgs,
    /// Most tree vertices per run (both trees).
    #[arg(long, default_value_t = 300, value_name = "N")]
    pub max_vertices: usize,
    /// Wall-clock limit per tree, in seconds.
    #[arg(long, default_value = "20", value_name = "SECS", value_parser = super::limits::seconds)]
    pub timeout: Duration,
    #[arg(long, value_enum, default_value_t = super::Format::Text)]
    pub format: super::Format,
}

#[derive(Args, Debug)]
pub struct CompositionalBenchArgs {
    #[command(flatten)]
    pub solvers: SolverArgs,
    /// The sizes N (nested calls), comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "N,…", default_values_t = crate::bench::compositional::DEFAULT_SIZES)]
    pub sizes: Vec<usize>,
    /// Limit in seconds for each run.
    #[arg(long, default_value = "120", value_name = "SECS", value_parser = super::limits::seconds, allow_negative_numbers = true)]
    pub timeout: Duration,
    /// Output: an aligned table, or JSON (a list of rows) or CSV for scripts.
    #[arg(long, value_enum, default_value_t = BenchFormat::Table)]
    pub format: BenchFormat,
}

#[derive(Args, Debug)]
pub struct ExploreBenchArgs {
    #[command(flatten)]
    pub solvers: SolverArgs,
    /// The strategies measured (repeatable; default all six).
    #[arg(long, value_enum)]
    pub strategy: Vec<super::explore::StrategyChoice>,
    /// The merging strategies measured (repeatable; default all four).
    #[arg(long, value_enum)]
    pub merging: Vec<super::explore::MergingChoice>,
    /// Only the programs whose file name contains this (repeatable).
    #[arg(long, value_name = "TEXT")]
    pub program: Vec<String>,
    /// Also run each combination guided to the program's first target
    /// annotated reachable (states that cannot reach it dropped by its
    /// necessary condition, the nearest first): the guided/unguided table.
    #[arg(long)]
    pub guided: bool,
    /// Limit in seconds for each exploration.
    #[arg(long, default_value = "5", value_name = "SECS", value_parser = super::limits::seconds, allow_negative_numbers = true)]
    pub timeout: Duration,
    /// Output: an aligned table, or JSON (a list of rows) or CSV for scripts.
    #[arg(long, value_enum, default_value_t = BenchFormat::Table)]
    pub format: BenchFormat,
}

#[derive(Args, Debug)]
pub struct KsweepArgs {
    #[command(flatten)]
    pub common: Common,
    /// The largest K swept.
    #[arg(long, default_value_t = 25, value_name = "K")]
    pub k_max: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FamilyChoice {
    Ifs,
    Loops,
    Nested,
    Paths,
    /// n asserts in one file: the whole `apc check`, its time and solver work.
    Asserts,
    /// main calling one of n functions (2n targets), measured as `asserts`.
    Dispatch,
    All,
}

#[derive(Args, Debug)]
pub struct ScaleArgs {
    #[command(flatten)]
    pub common: Common,
    /// The families measured (repeatable).
    #[arg(long, value_enum, default_values_t = [FamilyChoice::All])]
    pub family: Vec<FamilyChoice>,
    /// The sizes n, comma-separated, for every chosen family (default: ifs 1,2,4,8,16,20;
    /// loops and paths 1,2,4,8,16; nested 1…6; asserts 30,60,120,300; dispatch 6,15,30,60).
    #[arg(long, value_delimiter = ',', value_name = "N,…")]
    pub sizes: Option<Vec<usize>>,
}

#[derive(Args, Debug)]
pub struct ApcArgs {
    #[command(flatten)]
    pub common: Common,
    /// Limit in seconds for each query run alone (φ̂, φ̂^25).
    #[arg(long, default_value = "5", value_name = "SECS", value_parser = super::limits::seconds, allow_negative_numbers = true)]
    pub query_timeout: Duration,
    /// Only the benchmarks of these names (repeatable, case-insensitive: `MatrIR`,
    /// `running example`); default all.
    #[arg(long, value_name = "NAME")]
    pub benchmark: Vec<String>,
}

#[derive(Args, Debug)]
pub struct Common {
    #[command(flatten)]
    pub solvers: SolverArgs,
    /// Runs per measurement; the median is reported.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=super::limits::MAX_COUNT as u64))]
    pub runs: usize,
    /// Output: an aligned table, or JSON (a list of rows) or CSV for scripts.
    #[arg(long, value_enum, default_value_t = BenchFormat::Table)]
    pub format: BenchFormat,
    /// Per-check limit in seconds (as `apc check --timeout`).
    #[arg(long, default_value = "30", value_name = "SECS", value_parser = super::limits::seconds, allow_negative_numbers = true)]
    pub timeout: Duration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BenchFormat {
    Table,
    Json,
    Csv,
}

pub fn bench(a: BenchArgs) -> ExitCode {
    match a.which {
        Which::Simplify(c) => simplify(c),
        Which::Apc(a) => apc(a),
        Which::Ksweep(a) => ksweep(a),
        Which::Scale(a) => scale(a),
        Which::Explore(a) => explore(a),
        Which::Thesis(a) => super::bench_thesis::thesis(a),
        Which::Compact(a) => compact(a),
        Which::Compositional(a) => compositional(a),
        Which::Run(a) => run(a),
        Which::Incremental(a) => incremental(a),
        Which::Engines(a) => super::bench_engines::engines(a),
    }
}

fn incremental(a: IncrementalArgs) -> ExitCode {
    use crate::bench::incremental::{Layout, measure};
    let solvers = match a.solvers.locate() {
        Ok(s) => s,
        Err(code) => return code,
    };
    let mut check = crate::check::CheckOptions::new(solvers, a.timeout);
    check.trace = true;
    let settings = crate::lsp::Settings {
        check,
        show_proofs: false,
        progress: true,
    };
    let layouts: Vec<Layout> = match a.layout.is_empty() {
        true => vec![Layout::Dispatch, Layout::Sequence],
        false => (a.layout.iter())
            .map(|l| match l {
                LayoutChoice::Dispatch => Layout::Dispatch,
                LayoutChoice::Sequence => Layout::Sequence,
            })
            .collect(),
    };
    let bar = progress(layouts.len());
    let mut rows = Vec::new();
    for layout in layouts {
        bar.set_message(layout.name());
        match measure(settings.clone(), a.functions, layout) {
            Ok(steps) => rows.extend(steps.into_iter().map(|s| (layout, s))),
            Err(e) => {
                bar.finish_and_clear();
                return bad(&format!("{} layout: {e}", layout.name()));
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    print_incremental(&rows, a.functions, a.format);
    ExitStatus::Ok.into()
}

fn print_incremental(
    rows: &[(
        crate::bench::incremental::Layout,
        crate::bench::incremental::Step,
    )],
    functions: usize,
    format: BenchFormat,
) {
    // Each layout's first step is its cold check: the others' share of it.
    let cold = |i: usize| {
        (rows[..=i].iter().rev())
            .find(|(l, s)| *l == rows[i].0 && s.what == "cold check")
            .map(|(_, s)| s.time)
    };
    let share = |i: usize| {
        rows[i].1.counts?;
        let c = cold(i)?;
        Some(100.0 * rows[i].1.time.as_secs_f64() / c.as_secs_f64().max(1e-9))
    };
    match format {
        BenchFormat::Table => {
            outln!("{functions} functions of two targets each, and main (apc lsp in this process)");
            let head: Vec<String> = [
                "layout",
                "step",
                "ms",
                "% of cold",
                "targets",
                "checked",
                "by earlier witness",
                "remembered",
                "for any call",
                "solver checks",
                "unreachable/reachable/unknown",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            let body: Vec<Vec<String>> = (rows.iter().enumerate())
                .map(|(i, (layout, s))| {
                    let c = s.counts;
                    let n = |f: fn(&crate::bench::incremental::Counts) -> String| {
                        c.as_ref().map_or("-".into(), f)
                    };
                    vec![
                        layout.name().to_string(),
                        s.what.clone(),
                        format!("{:.1}", super::rounded_ms(s.time, 1)),
                        share(i).map_or("-".into(), |p| format!("{p:.1}")),
                        n(|c| c.targets.to_string()),
                        n(|c| c.checked.to_string()),
                        n(|c| c.replayed.to_string()),
                        n(|c| c.remembered.to_string()),
                        n(|c| c.from_any_call.to_string()),
                        n(|c| c.solver_checks.to_string()),
                        n(|c| format!("{}/{}/{}", c.verdicts[0], c.verdicts[1], c.verdicts[2])),
                    ]
                })
                .collect();
            print_table(&head, &body);
        }
        f => {
            let list: Vec<Value> = (rows.iter().enumerate())
                .map(|(i, (layout, s))| {
                    let c = s.counts.as_ref();
                    json!({
                        "layout": layout.name(), "step": s.what,
                        "ms": super::rounded_ms(s.time, 3),
                        "percent_of_cold": share(i),
                        "targets": c.map(|c| c.targets),
                        "checked": c.map(|c| c.checked),
                        "by_earlier_witness": c.map(|c| c.replayed),
                        "remembered": c.map(|c| c.remembered),
                        "remembered_for_any_call": c.map(|c| c.from_any_call),
                        "proved_when_idle": s.proved_when_idle,
                        "solver_checks": c.map(|c| c.solver_checks),
                        "unreachable": c.map(|c| c.verdicts[0]),
                        "reachable": c.map(|c| c.verdicts[1]),
                        "unknown": c.map(|c| c.verdicts[2]),
                    })
                })
                .collect();
            print_rows(&list, f);
        }
    }
}

fn run(a: RunBenchArgs) -> ExitCode {
    use crate::bench::run::{families, measure};
    if !(a.scale > 0.0 && a.scale <= 100.0) {
        return bad("--scale: expected a number above 0 and at most 100");
    }
    let dir = std::env::temp_dir().join(format!("apc-bench-run-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return bad(&format!("cannot make {}: {e}", dir.display()));
    }
    let families = families(a.scale);
    let bar = progress(families.len());
    let mut rows = Vec::new();
    let mut failed = false;
    for f in &families {
        bar.set_message(f.name);
        match measure(f, a.runs, &a.cc, &dir) {
            Ok(r) => rows.push(r),
            Err(e) => {
                bar.suspend(|| eprintln!("apc: {e}"));
                failed = true;
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let _ = std::fs::remove_dir_all(&dir);
    print_run_rows(&rows, a.format);
    if failed {
        ExitStatus::Found.into()
    } else {
        ExitStatus::Ok.into()
    }
}

fn print_run_rows(rows: &[crate::bench::run::Row], format: BenchFormat) {
    let rate = |steps: u64, d: Duration| steps as f64 / d.as_secs_f64().max(1e-9);
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    match format {
        BenchFormat::Table => {
            let head: Vec<String> = [
                "family",
                "steps",
                "fast ms",
                "fast Msteps/s",
                "reference ms",
                "reference Msteps/s",
                "fast vs reference",
                "cc -O0 ms",
                "fast vs cc -O0",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            let ms = |d: Duration| format!("{:.1}", super::rounded_ms(d, 1));
            let body: Vec<Vec<String>> = rows
                .iter()
                .map(|r| {
                    let fast = match &r.handed_back {
                        None => format!("{:.0}", rate(r.steps, r.fast) / 1e6),
                        Some(why) => format!("handed back: {why}"),
                    };
                    let (c_ms, c_ratio) = match &r.c {
                        Ok(c) => (ms(*c), format!("{:.1}x slower", ratio(r.fast, *c))),
                        Err(_) => ("-".into(), "-".into()),
                    };
                    vec![
                        r.name.to_string(),
                        r.steps.to_string(),
                        ms(r.fast),
                        fast,
                        ms(r.reference),
                        format!("{:.0}", rate(r.steps, r.reference) / 1e6),
                        format!("{:.1}x faster", ratio(r.reference, r.fast)),
                        c_ms,
                        c_ratio,
                    ]
                })
                .collect();
            print_table(&head, &body);
            for r in rows {
                if let Err(why) = &r.c {
                    outln!("{}: no C ({why})", r.name);
                }
            }
        }
        f => {
            let list: Vec<Value> = rows
                .iter()
                .map(|r| {
                    json!({
                        "family": r.name, "what": r.what, "steps": r.steps,
                        "fast_ms": super::rounded_ms(r.fast, 3),
                        "handed_back": r.handed_back,
                        "reference_ms": super::rounded_ms(r.reference, 3),
                        "fast_vs_reference": ratio(r.reference, r.fast),
                        "c_ms": r.c.as_ref().ok().map(|c| super::rounded_ms(*c, 3)),
                        "c_missing": r.c.as_ref().err(),
                        "fast_vs_c": r.c.as_ref().ok().map(|c| ratio(r.fast, *c)),
                    })
                })
                .collect();
            print_rows(&list, f);
        }
    }
}

fn compositional(a: CompositionalBenchArgs) -> ExitCode {
    use crate::bench::compositional::{Row, measure, slopes};
    let solver = match a.solvers.locate_one("the engines") {
        Ok(s) => s,
        Err(code) => return code,
    };
    if a.sizes.is_empty() || a.sizes.contains(&0) || a.sizes.iter().any(|n| *n > 10_000) {
        return bad("--sizes: expected sizes from 1 to 10000");
    }
    let bar = progress(a.sizes.len());
    let mut rows: Vec<Row> = Vec::new();
    for &n in &a.sizes {
        bar.set_message(format!("incdec-{n}"));
        match measure(n, &solver, a.timeout) {
            Ok(pair) => rows.extend(pair),
            Err(e) => return bad(&e),
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let wrong = rows.iter().any(|r| r.claimed_reachable);
    let ms = |d: Duration| format!("{:.1}", super::rounded_ms(d, 1));
    match a.format {
        BenchFormat::Table => {
            let head: Vec<String> = [
                "N",
                "engine",
                "end",
                "steps",
                "queries",
                "solver ms",
                "total ms",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            let body: Vec<Vec<String>> = rows
                .iter()
                .map(|r| {
                    vec![
                        r.n.to_string(),
                        r.engine.to_string(),
                        r.end.clone() + if r.claimed_reachable { " (WRONG)" } else { "" },
                        r.steps.to_string(),
                        r.queries.to_string(),
                        ms(r.solver_time),
                        ms(r.time),
                    ]
                })
                .collect();
            print_table(&head, &body);
            let show = |s: Option<f64>| s.map_or("-".to_string(), |s| format!("{s:.2}"));
            for engine in ["compositional", "explore"] {
                let (q, t) = slopes(&rows, engine);
                outln!(
                    "{engine}: log-log slope of queries {}, of time {} (complete runs)",
                    show(q),
                    show(t)
                );
            }
        }
        f => {
            let list: Vec<Value> = rows
                .iter()
                .map(|r| {
                    json!({
                        "benchmark": format!("incdec-{}", r.n), "n": r.n, "engine": r.engine,
                        "end": r.end, "claimed_reachable": r.claimed_reachable,
                        "steps": r.steps, "queries": r.queries,
                        "solver_ms": super::rounded_ms(r.solver_time, 1),
                        "time_ms": super::rounded_ms(r.time, 1),
                    })
                })
                .collect();
            print_rows(&list, f);
        }
    }
    if wrong {
        ExitStatus::Found.into()
    } else {
        ExitStatus::Ok.into()
    }
}

fn compact(a: CompactBenchArgs) -> ExitCode {
    let solver = match a.solvers.locate_one("compact") {
        Ok(s) => s,
        Err(code) => return code,
    };
    if a.max_vertices == 0 {
        return bad("--max-vertices must be at least 1");
    }
    let rows = bench::compact::rows(&solver, a.max_vertices, a.timeout);
    let size_json = |s: &bench::compact::Size| {
        json!({"vertices": s.vertices, "leaves": s.leaves, "condensed": s.condensed,
               "end": s.end, "queries": s.queries, "seconds": s.time.as_secs_f64()})
    };
    if a.format == super::Format::Json {
        let list: Vec<Value> = rows
            .iter()
            .map(|r| match r {
                Ok(r) => {
                    json!({"program": r.program, "start": r.start, "templates": r.templates,
                                "classic": size_json(&r.classic), "compact": size_json(&r.compact)})
                }
                Err(e) => json!({"error": e}),
            })
            .collect();
        outln!(
            "{}",
            json!({"max_vertices": a.max_vertices, "timeout": a.timeout.as_secs_f64(), "rows": list})
        );
        return ExitStatus::Ok.into();
    }
    outln!(
        "classic tree bounded by {} vertices and {:.0} s per tree; sizes as vertices/leaves (condensed to the figures' granularity)",
        a.max_vertices,
        a.timeout.as_secs_f64()
    );
    outln!(
        "{:<24} {:<8} {:>16} {:<22} {:>16} {:<22} {:>4}",
        "program",
        "start",
        "classic",
        "classic end",
        "compact",
        "compact end",
        "tmpl"
    );
    for r in &rows {
        match r {
            Ok(r) => {
                let show = |s: &bench::compact::Size| {
                    format!("{}/{} ({})", s.vertices, s.leaves, s.condensed)
                };
                let cut = |e: &str| e.chars().take(22).collect::<String>();
                outln!(
                    "{:<24} {:<8} {:>16} {:<22} {:>16} {:<22} {:>4}",
                    r.program,
                    r.start,
                    show(&r.classic),
                    cut(&r.classic.end),
                    show(&r.compact),
                    cut(&r.compact.end),
                    r.templates
                );
            }
            Err(e) => outln!("error: {e}"),
        }
    }
    ExitStatus::Ok.into()
}

fn explore(a: ExploreBenchArgs) -> ExitCode {
    use super::explore::{MergingChoice, StrategyChoice};
    let solver = match a.solvers.locate_one("the executor") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let strategies = if a.strategy.is_empty() {
        StrategyChoice::value_variants().to_vec()
    } else {
        a.strategy.clone()
    };
    let mergings = if a.merging.is_empty() {
        MergingChoice::value_variants().to_vec()
    } else {
        a.merging.clone()
    };
    let programs: Vec<_> = bench::explore::programs()
        .into_iter()
        .filter(|(f, _)| a.program.is_empty() || a.program.iter().any(|p| f.contains(p.as_str())))
        .collect();
    if programs.is_empty() {
        return bad("no benchmark program matches --program");
    }
    let aims = |source: &str| -> Vec<Option<(u32, u32)>> {
        match bench::explore::reachable_goal(source) {
            Some(g) if a.guided => vec![None, Some(g)],
            _ => vec![None],
        }
    };
    let runs: usize = programs.iter().map(|p| aims(p.1).len()).sum();
    let bar = progress(runs * strategies.len() * mergings.len());
    let mut rows = Vec::new();
    for p in &programs {
        for s in &strategies {
            for m in &mergings {
                for goal in aims(p.1) {
                    bar.set_message(format!("{} {s:?} {m:?}", p.0));
                    let row = bench::explore::explore_row(
                        *p,
                        super::explore::strategy(*s),
                        super::explore::merging(*m),
                        goal,
                        &solver,
                        a.timeout,
                    );
                    bar.inc(1);
                    match row {
                        Ok(r) => rows.push(r),
                        Err(e) => {
                            bar.finish_and_clear();
                            return bad(&format!("{}: {e}", p.0));
                        }
                    }
                }
            }
        }
    }
    bar.finish_and_clear();
    let list: Vec<Value> = rows.iter().map(explore_json).collect();
    match a.format {
        BenchFormat::Table => {
            // JSON key of each column; the header shows it with spaces.
            const COLUMNS: [&str; 13] = [
                "program",
                "strategy",
                "merging",
                "guided_to",
                "dropped",
                "end",
                "paths",
                "runs",
                "merges",
                "queries",
                "solver_ms",
                "total_ms",
                "first_error_ms",
            ];
            let head: Vec<String> = COLUMNS.iter().map(|k| k.replace('_', " ")).collect();
            let body: Vec<Vec<String>> = list
                .iter()
                .map(|r| {
                    COLUMNS
                        .iter()
                        .map(|k| match &r[*k] {
                            Value::String(s) => s.clone(),
                            Value::Null => "-".into(),
                            v => v.to_string(),
                        })
                        .collect()
                })
                .collect();
            print_table(&head, &body);
        }
        f => print_rows(&list, f),
    }
    ExitStatus::Ok.into()
}

fn explore_json(r: &bench::explore::ExploreRow) -> Value {
    json!({
        "program": r.program,
        "strategy": format!("{:?}", r.strategy).to_lowercase(),
        "merging": format!("{:?}", r.merging).to_lowercase(),
        "guided_to": r.goal.map(|(l, c)| format!("{l}:{c}")),
        "dropped": r.off_course,
        "end": r.end,
        "paths": r.paths,
        "runs": r.runs,
        "merges": r.merged,
        "queries": r.queries,
        "solver_ms": ms(r.solver_time),
        "total_ms": ms(r.total),
        "first_error_ms": r.first_error.map(ms),
    })
}

fn ms(d: Duration) -> f64 {
    super::rounded_ms(d, 2)
}

/// The progress bar of a benchmark run.
pub(super) fn progress(steps: usize) -> indicatif::ProgressBar {
    super::progress(steps, "{bar:40} {pos}/{len} runs {elapsed} {msg}")
}

/// The checks every bench makes of its common arguments: the timeout, the
/// run count, and the solvers (located).
fn setup(c: &Common) -> Result<(Duration, Vec<crate::smt::Profile>), ExitCode> {
    Ok((c.timeout, c.solvers.locate()?))
}

fn simplify(c: Common) -> ExitCode {
    let (timeout, solvers) = match setup(&c) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let bar = progress(bench::TABLE2.len() * solvers.len() * 2 * c.runs);
    let tick = || bar.inc(1);
    let mut rows = Vec::new();
    for b in bench::TABLE2 {
        bar.set_message(b.name);
        match bench::simplify_row(b, &solvers, c.runs, timeout, &tick) {
            Ok(r) => rows.push(r),
            Err(e) => return bad(&e),
        }
    }
    bar.finish_and_clear();
    match c.format {
        BenchFormat::Table => simplify_table(&rows, &solvers),
        f => print_rows(&flat(&rows), f),
    }
    ExitStatus::Ok.into()
}

/// Rows for scripts: a JSON list, or CSV with the first row's keys.
pub(super) fn print_rows(list: &[Value], format: BenchFormat) {
    match format {
        BenchFormat::Json | BenchFormat::Table => {
            outln!(
                "{}",
                serde_json::to_string_pretty(list).expect("rows serialise")
            );
        }
        BenchFormat::Csv => {
            let keys: Vec<&String> = list
                .first()
                .and_then(Value::as_object)
                .map(|o| o.keys().collect())
                .unwrap_or_default();
            outln!(
                "{}",
                keys.iter()
                    .map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            );
            for row in list {
                let cells: Vec<String> = keys
                    .iter()
                    .map(|k| match &row[k.as_str()] {
                        Value::String(s) => csv_cell(s),
                        v => v.to_string(),
                    })
                    .collect();
                outln!("{}", cells.join(","));
            }
        }
    }
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One JSON row per benchmark, solver and variant (with or without
/// simplification).
fn flat(rows: &[SimplifyRow]) -> Vec<Value> {
    let mut out = Vec::new();
    for r in rows {
        for (solver, with, without) in &r.solves {
            for (simplified, s) in [(true, with), (false, without)] {
                let simplify_ms = if simplified { ms(r.simplify_time) } else { 0.0 };
                out.push(json!({
                    "benchmark": r.benchmark,
                    "target": r.target,
                    "solver": solver,
                    "simplified": simplified,
                    "answer": s.answer,
                    "method": s.method,
                    "nodes_before": r.nodes_before,
                    "nodes_after": if simplified { r.nodes_after } else { r.nodes_before },
                    "simplify_ms": simplify_ms,
                    "solve_ms": ms(s.time),
                    "total_ms": simplify_ms + ms(s.time),
                    "simplifier_stop": r.stop,
                }));
            }
        }
    }
    out
}

fn simplify_table(rows: &[SimplifyRow], solvers: &[crate::smt::Profile]) {
    let mut head = vec![
        "benchmark".to_string(),
        "target".into(),
        "nodes".into(),
        "simplified".into(),
        "simplify ms".into(),
    ];
    for s in solvers {
        head.push(format!("{} with", s.name));
        head.push(format!("{} without", s.name));
    }
    let cell = |s: &bench::Solve| format!("{} {:.1} ms", s.answer, ms(s.time));
    let mut body: Vec<Vec<String>> = Vec::new();
    for r in rows {
        let mut line = vec![
            r.benchmark.to_string(),
            r.target.clone(),
            r.nodes_before.to_string(),
            r.nodes_after.to_string(),
            format!("{:.2}", ms(r.simplify_time)),
        ];
        for (_, with, without) in &r.solves {
            line.push(cell(with));
            line.push(cell(without));
        }
        body.push(line);
    }
    // Totals: simplification counts against the "with" column.
    let mut total = vec![
        "total".to_string(),
        String::new(),
        rows.iter()
            .map(|r| r.nodes_before)
            .sum::<usize>()
            .to_string(),
        rows.iter()
            .map(|r| r.nodes_after)
            .sum::<usize>()
            .to_string(),
        format!(
            "{:.2}",
            rows.iter().map(|r| ms(r.simplify_time)).sum::<f64>()
        ),
    ];
    for i in 0..solvers.len() {
        let with: f64 = rows
            .iter()
            .map(|r| ms(r.solves[i].1.time) + ms(r.simplify_time))
            .sum();
        let without: f64 = rows.iter().map(|r| ms(r.solves[i].2.time)).sum();
        total.push(format!("{with:.1} ms"));
        total.push(format!("{without:.1} ms"));
    }
    body.push(total);
    print_table(&head, &body);
    outln!();
    outln!(
        "Times are wall clock on this machine: the median of the runs of `apc check` after the \
condition is built (queries, race, witness replay); the total of \"with\" includes simplification."
    );
    for r in rows.iter().filter(|r| r.stop != "saturated") {
        outln!("{}: the simplifier stopped at {}", r.benchmark, r.stop);
    }
}

fn apc(a: ApcArgs) -> ExitCode {
    let c = a.common;
    let query_timeout = a.query_timeout;
    let (race_timeout, solvers) = match setup(&c) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let chosen: Vec<&bench::Benchmark> = (bench::TABLE2.iter())
        .filter(|b| {
            a.benchmark.is_empty() || a.benchmark.iter().any(|n| n.eq_ignore_ascii_case(b.name))
        })
        .collect();
    if let Some(n) =
        (a.benchmark.iter()).find(|n| !bench::TABLE2.iter().any(|b| n.eq_ignore_ascii_case(b.name)))
    {
        let names: Vec<&str> = bench::TABLE2.iter().map(|b| b.name).collect();
        return bad(&format!(
            "--benchmark {n:?}: no such benchmark (Table 2 has: {})",
            names.join(", ")
        ));
    }
    let bar = progress(chosen.len() * solvers.len() * 4);
    let tick = || bar.inc(1);
    let mut rows = Vec::new();
    for solver in &solvers {
        for &b in &chosen {
            bar.set_message(format!("{} on {}", b.name, solver.name));
            match bench::apc_row(b, solver, c.runs, query_timeout, race_timeout, &tick) {
                Ok(r) => rows.push(r),
                Err(e) => return bad(&e),
            }
        }
    }
    bar.finish_and_clear();
    let list: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "benchmark": r.benchmark,
                "solver": r.solver,
                "answer": r.answer,
                "method": r.method,
                "build_ms": ms(r.build),
                "unfold_ms": ms(r.unfold),
                "quantified_ms": ms(r.quantified.0),
                "quantified_answer": r.quantified.1,
                "unfolded_ms": ms(r.unfolded.0),
                "unfolded_answer": r.unfolded.1,
                "total_ms": ms(r.total),
                "check_ms": ms(r.portfolio.0),
                "check_answer": r.portfolio.1,
                "check_engine": r.portfolio.2,
                "check_under_100_ms": r.portfolio.0 < Duration::from_millis(100),
                "check_bar_ms": ms(r.bar()),
                "check_within_bar": r.within_bar(),
                "paper_total_ms": r.paper.map(|p| p.total * 1e3),
                "paper_build_ms": r.paper.map(|p| p.build * 1e3),
                "paper_unfold_ms": r.paper.map(|p| p.unfold * 1e3),
                "paper_unfolded_ms": r.paper.map(|p| p.smt_unfolded * 1e3),
                "paper_unfolded_answer": r.paper.map(|p| p.unfolded_answer),
                "paper_quantified_ms": r.paper.and_then(|p| p.smt_quantified).map(|s| s * 1e3),
                "paper_quantified_answer": r.paper.map(|p| p.quantified_answer),
            })
        })
        .collect();
    match c.format {
        BenchFormat::Table => apc_table(&rows),
        f => print_rows(&list, f),
    }
    ExitStatus::Ok.into()
}

/// A duration, short (see [`secs`]).
fn short(d: Duration) -> String {
    secs(d.as_secs_f64())
}

/// Seconds, short: `2.04 s`, `275.4 ms`.
fn secs(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

fn apc_table(rows: &[bench::ApcRow]) {
    let head: Vec<String> = [
        "benchmark",
        "solver",
        "answer",
        "apc check (engine)",
        "vs bar (50 ms, or the paper's less)",
        "total",
        "build φ̂",
        "unfold φ̂^25",
        "SMT φ̂^25",
        "SMT φ̂",
        "paper total",
        "paper build",
        "paper unf + SMT φ̂^25",
        "paper SMT φ̂",
        "paper/ours (across machines)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let p = r.paper;
            vec![
                r.benchmark.to_string(),
                r.solver.clone(),
                r.answer.to_string(),
                format!(
                    "{} {} ({})",
                    r.portfolio.1,
                    short(r.portfolio.0),
                    r.portfolio.2
                ),
                if r.within_bar() {
                    format!("within {}", short(r.bar()))
                } else {
                    format!(
                        "{:.1}× {}",
                        r.portfolio.0.as_secs_f64() / r.bar().as_secs_f64(),
                        short(r.bar())
                    )
                },
                short(r.total),
                short(r.build),
                short(r.unfold),
                format!("{} {}", r.unfolded.1, short(r.unfolded.0)),
                format!("{} {}", r.quantified.1, short(r.quantified.0)),
                p.map(|p| secs(p.total)).unwrap_or_else(|| "—".into()),
                p.map(|p| secs(p.build)).unwrap_or_else(|| "—".into()),
                p.map(|p| {
                    format!(
                        "{} + {} {}",
                        secs(p.unfold),
                        p.unfolded_answer,
                        secs(p.smt_unfolded)
                    )
                })
                .unwrap_or_else(|| "—".into()),
                p.map(|p| match p.smt_quantified {
                    Some(t) => format!("{} {}", p.quantified_answer, secs(t)),
                    None => p.quantified_answer.to_string(),
                })
                .unwrap_or_else(|| "—".into()),
                p.map(|p| format!("{:.2}×", p.total / r.total.as_secs_f64()))
                    .unwrap_or_else(|| "—".into()),
            ]
        })
        .collect();
    print_table(&head, &body);
    outln!();
    outln!(
        "Ours: medians on this machine; total = build φ̂ + the race of `apc check` (φ̂, φ̂^25, φ̂^3 → φ̂^14 ∧ κ ≤ 14 → φ̂^14; \
a witness replayed for sat); the single-query columns run each query alone (answer: sat/unsat/unknown/timeout). \
Paper: ISSTA'12 Table 2, Z3 3.2 on an i7-920 (2008); the ratio (paper total / ours) compares across machines."
    );
}

/// An aligned table.
pub(super) fn print_table(head: &[String], body: &[Vec<String>]) {
    let widths: Vec<usize> = (0..head.len())
        .map(|i| {
            std::iter::once(head)
                .chain(body.iter().map(|l| l.as_slice()))
                .map(|l| l[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let show = |l: &[String]| {
        let cells: Vec<String> = l
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        outln!("{}", cells.join("  ").trim_end());
    };
    show(head);
    for l in body {
        show(l);
    }
}

fn ksweep(a: KsweepArgs) -> ExitCode {
    let c = a.common;
    let (timeout, solvers) = match setup(&c) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if a.k_max == 0 {
        return bad("--k-max: expected at least 1");
    }
    let bar = progress(bench::TABLE2.len() * solvers.len() * a.k_max as usize);
    let tick = || bar.inc(1);
    let mut sweeps = Vec::new();
    for solver in &solvers {
        for b in bench::TABLE2 {
            bar.set_message(format!("{} on {}", b.name, solver.name));
            match bench::ksweep::sweep(b, solver, a.k_max, c.runs, timeout, &tick) {
                Ok(s) => sweeps.push(s),
                Err(e) => return bad(&e),
            }
        }
    }
    bar.finish_and_clear();
    match c.format {
        BenchFormat::Table => ksweep_table(&sweeps, &solvers),
        f => {
            let list: Vec<Value> = sweeps
                .iter()
                .flat_map(|s| {
                    s.points.iter().map(move |p| {
                        json!({
                            "benchmark": s.benchmark,
                            "solver": s.solver,
                            "k": p.k,
                            "answer": p.answer,
                            "method": p.method,
                            "reason": p.reason,
                            "build_ms": ms(s.build),
                            "solve_ms": ms(p.time),
                            "total_ms": ms(s.build + p.time),
                            "smallest_deciding_k": s.smallest_deciding(),
                        })
                    })
                })
                .collect();
            print_rows(&list, f);
        }
    }
    ExitStatus::Ok.into()
}

/// One table per solver: a row per K, a column per benchmark.
fn ksweep_table(sweeps: &[bench::ksweep::KSweep], solvers: &[crate::smt::Profile]) {
    for solver in solvers {
        let mine: Vec<&bench::ksweep::KSweep> =
            sweeps.iter().filter(|s| s.solver == solver.name).collect();
        let mut head = vec![format!("K ({})", solver.name)];
        head.extend(mine.iter().map(|s| s.benchmark.to_string()));
        let ks = mine.first().map(|s| s.points.len()).unwrap_or(0);
        let mut body: Vec<Vec<String>> = Vec::new();
        let mut build = vec!["build φ̂".to_string()];
        build.extend(mine.iter().map(|s| short(s.build)));
        body.push(build);
        for i in 0..ks {
            let mut line = vec![mine[0].points[i].k.to_string()];
            line.extend(mine.iter().map(|s| {
                let p = &s.points[i];
                format!("{} {}", p.answer, short(p.time))
            }));
            body.push(line);
        }
        let mut smallest = vec!["smallest deciding K".to_string()];
        smallest.extend(mine.iter().map(|s| match s.smallest_deciding() {
            Some(k) => k.to_string(),
            None => "none".into(),
        }));
        body.push(smallest);
        print_table(&head, &body);
        outln!();
    }
    outln!(
        "Each cell: `apc check --mode unfolded --k K` after φ̂ is built (median of the runs): \
sat = a witness replayed to the target, unsat = a proof, unknown = neither (no replayable model \
within the tries, a solver unknown, or the timeout)."
    );
}

fn scale(a: ScaleArgs) -> ExitCode {
    use bench::scale::Family;
    let c = a.common;
    let (timeout, solvers) = match setup(&c) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let mut families: Vec<Family> = Vec::new();
    for f in &a.family {
        let chosen: &[Family] = match f {
            FamilyChoice::Ifs => &[Family::Ifs],
            FamilyChoice::Loops => &[Family::Loops],
            FamilyChoice::Nested => &[Family::Nested],
            FamilyChoice::Paths => &[Family::Paths],
            FamilyChoice::Asserts => &[Family::Asserts],
            FamilyChoice::Dispatch => &[Family::Dispatch],
            FamilyChoice::All => &Family::ALL,
        };
        for f in chosen {
            if !families.contains(f) {
                families.push(*f);
            }
        }
    }
    if let Some(sizes) = &a.sizes
        && (sizes.is_empty() || sizes.contains(&0))
    {
        return bad("--sizes: expected sizes of at least 1");
    }
    let sizes = |f: Family| {
        a.sizes
            .clone()
            .unwrap_or_else(|| f.default_sizes().to_vec())
    };
    let steps: usize = families.iter().map(|f| sizes(*f).len()).sum::<usize>() * solvers.len();
    let bar = progress(steps);
    let (mut rows, mut target_rows) = (Vec::new(), Vec::new());
    for solver in &solvers {
        for &f in &families {
            for n in sizes(f) {
                bar.set_message(format!("{}-{n} on {}", f.name(), solver.name));
                let measured = if f.many_targets() {
                    bench::scale::measure_targets(f, n, solver, c.runs, timeout)
                        .map(|r| target_rows.push((solver.name.clone(), r)))
                } else {
                    bench::scale::measure(f, n, solver, c.runs, timeout)
                        .map(|r| rows.push((solver.name.clone(), r)))
                };
                if let Err(e) = measured {
                    return bad(&e);
                }
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    match c.format {
        BenchFormat::Table => {
            let conditions: Vec<Family> = (families.iter().copied())
                .filter(|f| !f.many_targets())
                .collect();
            if !conditions.is_empty() {
                scale_table(&rows, &conditions, &solvers);
            }
            for f in families.iter().filter(|f| f.many_targets()) {
                targets_table(&target_rows, *f, &solvers);
            }
        }
        f => {
            let targets = target_rows.iter().map(|(solver, r)| {
                json!({
                    "benchmark": format!("{}-{}", r.family.name(), r.n),
                    "family": r.family.name(),
                    "n": r.n,
                    "targets": r.targets,
                    "solver": solver,
                    "unreachable": r.verdicts[0],
                    "reachable": r.verdicts[1],
                    "unknown": r.verdicts[2],
                    "expected": r.expected,
                    "total_ms": ms(r.time),
                    "solver_checks": r.solver.checks,
                    "smt_bytes": r.solver.bytes,
                })
            });
            let list: Vec<Value> = rows
                .iter()
                .map(|(solver, r)| {
                    json!({
                        "benchmark": format!("{}-{}", r.family.name(), r.n),
                        "family": r.family.name(),
                        "n": r.n,
                        "solver": solver,
                        "answer": r.answer,
                        "expected": r.expected,
                        "method": r.method,
                        "build_ms": ms(r.build),
                        "dag_nodes": r.dag_nodes,
                        "smt_bytes": r.smt_bytes,
                        "solve_ms": ms(r.solve),
                        "total_ms": ms(r.build + r.solve),
                    })
                })
                .chain(targets)
                .collect();
            print_rows(&list, f);
        }
    }
    ExitStatus::Ok.into()
}

/// The table of a family of many targets, per solver: the whole check of
/// each file, its time and solver work per target, and their growth.
fn targets_table(
    rows: &[(String, bench::scale::TargetsRow)],
    family: bench::scale::Family,
    solvers: &[crate::smt::Profile],
) {
    let head: Vec<String> = [
        "n",
        "verdicts (unreachable/reachable/unknown)",
        "apc check",
        "per target",
        "solver checks",
        "SMT-LIB bytes",
        "vs smallest n",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for solver in solvers {
        let mine: Vec<&bench::scale::TargetsRow> = (rows.iter())
            .filter(|(s, r)| *s == solver.name && r.family == family)
            .map(|(_, r)| r)
            .collect();
        let Some(first) = mine.first() else { continue };
        outln!("{}: {} ({})", family.name(), family.what(), solver.name);
        let body: Vec<Vec<String>> = mine
            .iter()
            .map(|r| {
                let [u, re, unk] = r.verdicts;
                let mark = if r.expected { "" } else { " (WRONG)" };
                vec![
                    r.n.to_string(),
                    format!("{u}/{re}/{unk}{mark}"),
                    short(r.time),
                    short(r.time / r.targets.max(1) as u32),
                    r.solver.checks.to_string(),
                    r.solver.bytes.to_string(),
                    format!(
                        "{:.1}× the time for {:.1}× the targets",
                        r.time.as_secs_f64() / first.time.as_secs_f64().max(1e-9),
                        r.targets as f64 / first.targets.max(1) as f64
                    ),
                ]
            })
            .collect();
        print_table(&head, &body);
        let slope = |y: fn(&bench::scale::TargetsRow) -> f64| growth(&mine, |r| r.targets, y);
        outln!(
            "growth (log–log slope in the targets): time {}, solver checks {}, SMT-LIB bytes {}",
            slope(|r| r.time.as_secs_f64()),
            slope(|r| r.solver.checks as f64),
            slope(|r| r.solver.bytes as f64),
        );
        outln!();
    }
    let built = match family {
        bench::scale::Family::Dispatch => {
            "the asserts hold and the divisions fail by construction (WRONG marks a verdict against that)"
        }
        _ => "every assert is reachable by construction (WRONG marks an unreachable)",
    };
    outln!(
        "apc check: the whole file as the command line checks it (median of the runs, a fresh database each); solver checks and bytes: what every engine asked of the solver for all the targets; {built}."
    );
}

/// The log–log slope of `y` against the rows' size `n`, printed (`—`
/// without one).
fn growth<R>(rows: &[&R], n: fn(&R) -> usize, y: fn(&R) -> f64) -> String {
    let points: Vec<(f64, f64)> = rows.iter().map(|r| (n(r) as f64, y(r))).collect();
    bench::scale::log_log_slope(&points).map_or("—".to_string(), |s| format!("{s:.2}"))
}

/// One table per family and solver, with the log–log slopes under it.
fn scale_table(
    rows: &[(String, bench::scale::ScaleRow)],
    families: &[bench::scale::Family],
    solvers: &[crate::smt::Profile],
) {
    let head: Vec<String> = ["n", "build φ̂", "DAG nodes", "SMT-LIB bytes", "solve"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for solver in solvers {
        for f in families {
            let mine: Vec<&bench::scale::ScaleRow> = rows
                .iter()
                .filter(|(s, r)| *s == solver.name && r.family == *f)
                .map(|(_, r)| r)
                .collect();
            outln!("{}: {} ({})", f.name(), f.what(), solver.name);
            let body: Vec<Vec<String>> = mine
                .iter()
                .map(|r| {
                    let mark = if r.expected || r.answer == "unknown" {
                        ""
                    } else {
                        " (WRONG)"
                    };
                    vec![
                        r.n.to_string(),
                        short(r.build),
                        r.dag_nodes.to_string(),
                        r.smt_bytes.to_string(),
                        format!("{} {}{mark}", r.answer, short(r.solve)),
                    ]
                })
                .collect();
            print_table(&head, &body);
            let slope = |y: fn(&bench::scale::ScaleRow) -> f64| growth(&mine, |r| r.n, y);
            outln!(
                "growth (log–log slope in n): build {}, DAG nodes {}, SMT-LIB bytes {}, solve {}",
                slope(|r| r.build.as_secs_f64()),
                slope(|r| r.dag_nodes as f64),
                slope(|r| r.smt_bytes as f64),
                slope(|r| r.solve.as_secs_f64()),
            );
            outln!();
        }
    }
    outln!(
        "build φ̂: median over the runs, a fresh database each; solve: `apc check` of the assert \
after the build (ifs, nested, paths are built reachable, loops unreachable; WRONG marks a \
definite answer against that)."
    );
}
