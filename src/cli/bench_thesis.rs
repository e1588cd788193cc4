//! `apc bench thesis`: the thesis's final experiment beside its tables
//! (docs/generator.md §4). Formats what `bench::thesis` measures.

use super::bench::{BenchFormat, print_rows, print_table, progress};
use super::check::SolverArgs;
use super::{ExitStatus, bad, writable_dir};
use crate::bench::thesis::{self, ProgramRun, SetRow, Technique, ThesisOptions};
use crate::generator::{TECHNIQUES, THESIS_PROGRAMS_PER_SET, THESIS_SETS, ThesisSet};
use clap::Args;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ThesisArgs {
    #[command(flatten)]
    pub solvers: SolverArgs,
    /// Programs generated per set (the thesis: 50).
    #[arg(long, default_value_t = 50, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub programs_per_set: u32,
    /// Limit in seconds for one program under one technique, everything included (the
    /// thesis: 30).
    #[arg(long, default_value = "30", value_name = "SECS", value_parser = super::limits::seconds, allow_negative_numbers = true)]
    pub timeout: Duration,
    /// Programs analysed in parallel, each with its own solver processes (default: one
    /// per core). A program's time is its own wall-clock time either way; with more jobs
    /// than cores, the programs share them and time out sooner. `check`, whose engines
    /// race on every core, runs one program at a time whatever this says.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: Option<u32>,
    /// The generator's seed (program i of a set is the same on every machine).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Only these sets (repeatable; default all 18 of Table 6.16), e.g. `15-10-3-t-t`.
    #[arg(long, value_name = "NAME")]
    pub set: Vec<String>,
    /// Only these techniques (repeatable; default all): base, merging, subsumption,
    /// summarisation (the thesis's four, Tree search, stop at the first error),
    /// subsumption+summarisation, guided (each target in turn, the executor guided to
    /// it), check (the targets the value facts prove; then, for 70% of the time, one
    /// Horn invariant for every target, the whole program explored and one condition for
    /// every target, racing; then each target with `apc check`'s portfolio).
    #[arg(long, value_name = "NAME")]
    pub technique: Vec<String>,
    /// Random concrete runs per program that attack every `unreachable` (a hit is a
    /// soundness failure).
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub random_runs: u32,
    /// Also write the generated programs into this directory.
    #[arg(long, value_name = "DIR")]
    pub save_programs: Option<PathBuf>,
    /// Output: the tables beside the thesis's, or JSON (settings, rows per set, runs)
    /// or CSV (one row per program and technique) for scripts.
    #[arg(long, value_enum, default_value_t = BenchFormat::Table)]
    pub format: BenchFormat,
}

pub fn thesis(a: ThesisArgs) -> ExitCode {
    let opts = match options(&a) {
        Ok(o) => o,
        Err(e) => return bad(&e),
    };
    if let Some(dir) = &a.save_programs
        && let Err(e) = save_programs(dir, &opts)
    {
        return bad(&e);
    }
    let bar = progress(opts.sets.len() * opts.programs_per_set as usize * opts.techniques.len());
    let runs = thesis::run(&opts, &|r: &ProgramRun| {
        bar.set_message(format!("{}-{:03} {}", r.set, r.index, r.technique.name()));
        bar.inc(1);
    });
    bar.finish_and_clear();
    let rows = thesis::rows(&runs);
    match a.format {
        BenchFormat::Table => print_tables(&opts, &rows),
        BenchFormat::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "settings": settings_json(&opts),
                "sets": rows.iter().map(row_json).collect::<Vec<_>>(),
                "runs": runs.iter().map(run_json).collect::<Vec<_>>(),
            }))
            .expect("rows serialise")
        ),
        BenchFormat::Csv => print_rows(&runs.iter().map(run_json).collect::<Vec<_>>(), a.format),
    }
    report_failures(&runs)
}

fn options(a: &ThesisArgs) -> Result<ThesisOptions, String> {
    let solver = a.solvers.locate_one_quietly("the executor")?;
    let sets = if a.set.is_empty() {
        THESIS_SETS.iter().collect()
    } else {
        (a.set.iter())
            .map(|n| ThesisSet::named(n).ok_or_else(|| unknown("set", n, set_names())))
            .collect::<Result<_, _>>()?
    };
    let techniques = if a.technique.is_empty() {
        Technique::ALL.to_vec()
    } else {
        let names = || Technique::ALL.iter().map(|t| t.name()).collect();
        (a.technique.iter())
            .map(|n| Technique::named(n).ok_or_else(|| unknown("technique", n, names())))
            .collect::<Result<_, _>>()?
    };
    Ok(ThesisOptions {
        sets,
        programs_per_set: a.programs_per_set,
        timeout: a.timeout,
        jobs: a.jobs.map_or_else(cores, |j| j as usize),
        seed: a.seed,
        techniques,
        solver,
        random_runs: a.random_runs,
    })
}

/// The cores this process may use (1 if that cannot be told).
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn set_names() -> Vec<&'static str> {
    THESIS_SETS.iter().map(|s| s.name).collect()
}

fn unknown(what: &str, name: &str, names: Vec<&str>) -> String {
    format!("no {what} `{name}`; the {what}s are {}", names.join(", "))
}

fn save_programs(dir: &std::path::Path, opts: &ThesisOptions) -> Result<(), String> {
    writable_dir(dir)?;
    for set in &opts.sets {
        for i in 0..opts.programs_per_set as u64 {
            let p = thesis::program(set, opts.seed, i);
            let path = dir.join(format!("{}-{i:03}.mc", p.set));
            std::fs::write(&path, p.source)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- tables

fn share(n: u32, of: u32) -> String {
    format!("{n} ({:.0}%)", 100.0 * n as f64 / of.max(1) as f64)
}

/// One table per technique: the thesis's row (where it has one) and ours.
fn print_tables(opts: &ThesisOptions, rows: &[SetRow]) {
    outln!(
        "{} sets × {} programs, {} s per program and technique, {} at a time, seed {}, solver {}; the thesis: {} programs, 30 s, one at a time, Tree search",
        opts.sets.len(),
        opts.programs_per_set,
        opts.timeout.as_secs_f64(),
        opts.jobs,
        opts.seed,
        opts.solver.name,
        THESIS_PROGRAMS_PER_SET
    );
    for t in &opts.techniques {
        outln!();
        let column = t.published_column();
        match column {
            Some(c) => outln!("{} (thesis: Table 6.{})", t.name(), 17 + c),
            None => outln!("{} (not in the thesis)", t.name()),
        }
        let mut head: Vec<String> = vec!["set".into()];
        if column.is_some() {
            head.extend(["thesis cov", "thesis ms", "thesis t/o", "thesis err"].map(String::from));
        }
        head.extend(["cov", "ms", "t/o", "err", "proved safe"].map(String::from));
        let body: Vec<Vec<String>> = (rows.iter().filter(|r| r.technique == *t))
            .map(|r| table_line(r, column))
            .collect();
        print_table(&head, &body);
    }
    print_targets(opts, rows);
}

fn table_line(r: &SetRow, column: Option<usize>) -> Vec<String> {
    let mut line = vec![r.set.to_string()];
    if let (Some(c), Some(set)) = (column, ThesisSet::named(r.set)) {
        let p = set.published[c];
        let n = THESIS_PROGRAMS_PER_SET;
        line.extend([
            p.coverage.to_string(),
            p.ms.to_string(),
            share(p.timeouts, n),
            share(p.errors, n),
        ]);
    }
    let cov = if r.technique.per_target() {
        "-".to_string()
    } else {
        r.coverage.to_string()
    };
    line.extend([
        cov,
        r.time.as_millis().to_string(),
        share(r.timeouts, r.programs),
        share(r.errors, r.programs),
        share(r.proved_safe, r.programs),
    ]);
    line
}

/// The targets, as shares of each set: errors found by our best
/// technique against the thesis's best column, timeouts likewise.
fn print_targets(opts: &ThesisOptions, rows: &[SetRow]) {
    outln!();
    outln!(
        "targets (shares of each set): errors found ≥ the thesis's best column; timeouts < the thesis's best column"
    );
    let head: Vec<String> = [
        "set",
        "thesis err",
        "apc err",
        "",
        "thesis t/o",
        "apc t/o",
        "",
        "best apc technique",
    ]
    .map(String::from)
    .to_vec();
    let mut body = Vec::new();
    for set in &opts.sets {
        let ours: Vec<&SetRow> = rows.iter().filter(|r| r.set == set.name).collect();
        let Some(best) = ours
            .iter()
            .min_by_key(|r| (r.timeouts, u32::MAX - r.errors))
        else {
            continue;
        };
        let most_errors = ours
            .iter()
            .map(|r| rate(r.errors, r.programs))
            .fold(0.0, f64::max);
        let n = THESIS_PROGRAMS_PER_SET;
        let thesis_err = (set.published.iter()).map(|p| p.errors).max().unwrap_or(0);
        let thesis_to = (set.published.iter())
            .map(|p| p.timeouts)
            .min()
            .unwrap_or(0);
        let (te, tt) = (rate(thesis_err, n), rate(thesis_to, n));
        let best_to = rate(best.timeouts, best.programs);
        body.push(vec![
            set.name.to_string(),
            format!("{:.0}%", 100.0 * te),
            format!("{:.0}%", 100.0 * most_errors),
            mark(most_errors >= te).into(),
            format!("{:.0}%", 100.0 * tt),
            format!("{:.0}%", 100.0 * best_to),
            mark(best_to < tt || (tt == 0.0 && best_to == 0.0)).into(),
            best.technique.name().to_string(),
        ]);
    }
    print_table(&head, &body);
}

fn rate(n: u32, of: u32) -> f64 {
    n as f64 / of.max(1) as f64
}

fn mark(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}

/// Replay and soundness failures, listed on stderr; a soundness failure
/// fails the command (exit status 1).
fn report_failures(runs: &[ProgramRun]) -> ExitCode {
    let mut unsound = false;
    for r in runs {
        let at = format!("{}-{:03} ({})", r.set, r.index, r.technique.name());
        if let Some(Err(why)) = r.error.as_ref().map(|e| &e.replay) {
            eprintln!("replay failure: {at}: {why}");
        }
        for t in &r.refuted {
            unsound = true;
            eprintln!(
                "SOUNDNESS FAILURE: {at} proved {} at {}:{} unreachable, a random run hits it",
                t.kind.as_str(),
                t.line,
                t.col
            );
        }
    }
    if unsound {
        ExitStatus::Found.into()
    } else {
        ExitStatus::Ok.into()
    }
}

// ---------------------------------------------------------------- JSON

fn settings_json(o: &ThesisOptions) -> Value {
    json!({
        "sets": o.sets.iter().map(|s| s.name).collect::<Vec<_>>(),
        "programs_per_set": o.programs_per_set,
        "timeout_s": o.timeout.as_secs_f64(),
        "jobs": o.jobs,
        "seed": o.seed,
        "techniques": o.techniques.iter().map(|t| t.name()).collect::<Vec<_>>(),
        "solver": o.solver.name,
        "random_runs": o.random_runs,
    })
}

fn row_json(r: &SetRow) -> Value {
    let thesis = (r.technique.published_column()).and_then(|c| {
        let p = ThesisSet::named(r.set)?.published[c];
        Some(json!({
            "table": format!("6.{}", 17 + c),
            "technique": TECHNIQUES[c],
            "programs": THESIS_PROGRAMS_PER_SET,
            "coverage": p.coverage,
            "ms": p.ms,
            "timeouts": p.timeouts,
            "errors": p.errors,
        }))
    });
    json!({
        "set": r.set,
        "technique": r.technique.name(),
        "programs": r.programs,
        "coverage": (!r.technique.per_target()).then_some(r.coverage),
        "ms": r.time.as_millis() as u64,
        "timeouts": r.timeouts,
        "errors": r.errors,
        "proved_safe": r.proved_safe,
        "replay_failures": r.replay_failures,
        "soundness_failures": r.soundness_failures,
        "thesis": thesis,
    })
}

fn run_json(r: &ProgramRun) -> Value {
    let error = r.error.as_ref();
    json!({
        "set": r.set,
        "program": format!("{}-{:03}.mc", r.set, r.index),
        "index": r.index,
        "technique": r.technique.name(),
        "coverage": (!r.technique.per_target()).then_some(r.coverage),
        "ms": super::rounded_ms(r.time, 1),
        "timed_out": r.timed_out,
        "proved_safe": r.proved_safe,
        "error": error.map(|e| e.target.label()),
        "replayed": error.map(|e| e.replay.is_ok()),
        "replay_command": error.map(|e| replay_command(r, &e.witness)),
        "soundness_failures": r.refuted.iter().map(|t| t.label()).collect::<Vec<_>>(),
        "note": r.note,
    })
}

/// The `apc run` command that replays the error (with the program saved by
/// --save-programs).
fn replay_command(r: &ProgramRun, w: &crate::interp::Witness) -> String {
    format!(
        "apc run {}-{:03}.mc --input '{}'",
        r.set,
        r.index,
        crate::interp::input_runs(&w.input).replace(' ', "")
    )
}
