//! `apc bench engines`: the experiment behind the portfolio's schedule
//! (docs/portfolio.md §5a). Formats what `bench::engines` measures.

use super::bench::{BenchFormat, print_rows, print_table, progress};
use super::check::{SolverArgs, source_files};
use super::{ExitStatus, bad};
use crate::bench::engines::{
    ClassRow, MIN_GAIN, MIN_TARGETS, Population, Race, Score, TargetRuns, by_class, measure,
};
use crate::check::schedule::Class;
use crate::check::{self, CheckOptions};
use crate::generator::ThesisSet;
use clap::Args;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct EnginesBenchArgs {
    #[command(flatten)]
    pub solvers: SolverArgs,
    /// Programs to measure on: files, or directories searched for `.mc` files (the
    /// experiment behind apc's figures: `tests/programs`).
    pub paths: Vec<PathBuf>,
    /// Also this many programs from each --set of the thesis's generator (`apc gen
    /// --set`).
    #[arg(long, default_value_t = 0, value_name = "N", value_parser = clap::value_parser!(u64).range(0..=10_000))]
    pub generated: u64,
    /// The generator's sets for --generated (repeatable; `all`: the 18 of Table 6.16).
    #[arg(long, default_value = "15-10-3-t-t", value_name = "NAME")]
    pub set: Vec<String>,
    /// The generator's seed for --generated.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Limit in seconds for one engine on one target.
    #[arg(long, default_value = "1", value_name = "SECS", value_parser = super::limits::seconds, allow_negative_numbers = true)]
    pub timeout: Duration,
    /// Read the engines' runs from this file, the JSON of an earlier run, rather than
    /// measure them again (to simulate the race under other settings, or again after a
    /// change to the simulation).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["paths", "generated"])]
    pub from: Option<PathBuf>,
    /// The race simulated: how long in milliseconds the engines after the first ones
    /// wait before they all start (as `apc check --portfolio-delay`).
    #[arg(long, default_value_t = check::DEFAULT_PORTFOLIO_DELAY.as_millis() as u64, value_name = "MS", value_parser = clap::value_parser!(u64).range(0..=600_000))]
    pub portfolio_delay: u64,
    /// The race simulated: how many milliseconds each next engine after the first one
    /// that waits starts after the one before it (as `apc check --portfolio-stagger`;
    /// the simulation uses one value for every class).
    #[arg(long, default_value_t = 0, value_name = "MS", value_parser = clap::value_parser!(u64).range(0..=600_000))]
    pub portfolio_stagger: u64,
    /// The race simulated: how many engines start at once (as `apc check
    /// --portfolio-head`).
    #[arg(long, default_value_t = check::DEFAULT_PORTFOLIO_HEAD as u64, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=7))]
    pub portfolio_head: u64,
    /// Output: the table per class, or JSON (a row per class and engine) or CSV.
    #[arg(long, value_enum, default_value_t = BenchFormat::Table)]
    pub format: BenchFormat,
}

pub fn engines(a: EnginesBenchArgs) -> ExitCode {
    let solvers = match a.solvers.locate() {
        Ok(s) => s,
        Err(code) => return code,
    };
    let engines = check::DEFAULT_PORTFOLIO;
    let (runs, programs) = match &a.from {
        Some(path) => match read_runs(path, &engines) {
            Ok(runs) => {
                let files: std::collections::BTreeSet<&str> =
                    runs.iter().map(|t| t.file.as_str()).collect();
                let n = files.len();
                (runs, n)
            }
            Err(e) => return bad(&e),
        },
        None => {
            let programs = match programs(&a) {
                Ok(p) if p.is_empty() => {
                    return bad("no programs: give files or directories, or --generated N");
                }
                Ok(p) => p,
                Err(e) => return bad(&e),
            };
            let opts = CheckOptions::new(solvers, a.timeout);
            let bar = progress(programs.len());
            let runs = measure(&programs, &engines, &opts, &|| bar.inc(1));
            bar.finish_and_clear();
            (runs, programs.len())
        }
    };
    let race = Race {
        head: a.portfolio_head as usize,
        delay: Duration::from_millis(a.portfolio_delay),
        stagger: Duration::from_millis(a.portfolio_stagger),
        cores: 2,
    };
    let rows = by_class(&runs, &engines, race);
    match a.format {
        BenchFormat::Table => table(&rows, programs, a.timeout),
        BenchFormat::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "classes": rows.iter().map(row_json).collect::<Vec<_>>(),
                "targets": runs.iter().map(|t| target_json(t, &engines)).collect::<Vec<_>>(),
            }))
            .expect("rows serialise")
        ),
        f => print_rows(&rows.iter().map(row_json).collect::<Vec<_>>(), f),
    }
    ExitStatus::Ok.into()
}

/// The programs: each file's text, then the generated ones.
fn programs(a: &EnginesBenchArgs) -> Result<Vec<(String, String, Population)>, String> {
    let mut out = Vec::new();
    if !a.paths.is_empty() {
        for path in source_files(&a.paths)? {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            out.push((path.display().to_string(), text, Population::Files));
        }
    }
    if a.generated > 0 {
        for set in sets(&a.set)? {
            let params = set.params();
            for i in 0..a.generated {
                let text = crate::generator::generate_source(&params, a.seed, i);
                out.push((format!("{}-{i}.mc", set.name), text, Population::Generated));
            }
        }
    }
    Ok(out)
}

fn ms(d: Duration) -> String {
    format!("{:.1}", super::rounded_ms(d, 1))
}

fn group_name(r: &ClassRow) -> &'static str {
    r.class.map_or("all programs", |c| c.name())
}

/// mean / median / geometric mean, in ms.
fn score_cell(s: &Score) -> String {
    format!(
        "{} / {} / {}",
        ms(s.mean),
        ms(s.median),
        ms(s.geometric_mean)
    )
}

fn table(rows: &[ClassRow], programs: usize, timeout: Duration) {
    outln!(
        "{programs} programs, each engine alone on each target for at most {} s. The race is simulated on the targets some engine decided (2 cores, head {}, delay {} ms); times are mean / median / geometric mean, in ms. \"best\": the least mean among the orders no worse than the unscheduled one in median and geometric mean; a class gets the best order if it gains at least {:.0} % on the unscheduled one, and the order of all programs if it has fewer than {MIN_TARGETS} such targets.",
        timeout.as_secs_f64(),
        check::DEFAULT_PORTFOLIO_HEAD,
        check::DEFAULT_PORTFOLIO_DELAY.as_millis(),
        MIN_GAIN * 100.0,
    );
    for r in rows {
        outln!();
        outln!(
            "{}: {} targets, {} decided by some engine",
            group_name(r),
            r.targets,
            r.decidable
        );
        let head: Vec<String> = ["engine", "decided", "median ms when it decides"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let body: Vec<Vec<String>> = (r.engines.iter())
            .map(|e| {
                vec![
                    e.engine.to_string(),
                    e.decided.to_string(),
                    e.median_decided.map_or("—".into(), ms),
                ]
            })
            .collect();
        print_table(&head, &body);
        let order = |o: &[&str]| o.join(",");
        outln!(
            "  unscheduled  {}  {}",
            score_cell(&r.unscheduled),
            order(&check::DEFAULT_PORTFOLIO)
        );
        outln!(
            "  best         {}  {}",
            score_cell(&r.best.1),
            order(&r.best.0)
        );
        if r.class.is_some() {
            outln!(
                "  built in     {}  {}",
                score_cell(&r.built_in.1),
                order(&r.built_in.0)
            );
            outln!("  recommended  {}", order(&r.recommended));
        }
        let ms = |d: Duration| d.as_millis();
        outln!(
            "  stagger      {}  recommended {} ms, built in {} ms",
            score_cell(&r.recommended_stagger.1),
            ms(r.recommended_stagger.0),
            ms(r.built_in_stagger)
        );
    }
}

fn score_json(s: &Score) -> Value {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    json!({
        "mean_ms": ms(s.mean),
        "median_ms": ms(s.median),
        "geometric_mean_ms": ms(s.geometric_mean),
    })
}

fn row_json(r: &ClassRow) -> Value {
    json!({
        "class": group_name(r),
        "targets": r.targets,
        "decidable": r.decidable,
        "engines": r.engines.iter().map(|e| json!({
            "engine": e.engine,
            "decided": e.decided,
            "median_decided_ms": e.median_decided.map(|d| d.as_secs_f64() * 1e3),
        })).collect::<Vec<_>>(),
        "unscheduled": score_json(&r.unscheduled),
        "best_order": r.best.0,
        "best": score_json(&r.best.1),
        "built_in_order": r.built_in.0,
        "built_in": score_json(&r.built_in.1),
        "recommended_order": r.recommended,
        "recommended_stagger_ms": r.recommended_stagger.0.as_millis() as u64,
        "recommended_stagger": score_json(&r.recommended_stagger.1),
        "built_in_stagger_ms": r.built_in_stagger.as_millis() as u64,
    })
}

/// The sets `names` names (`all`: every one).
fn sets(names: &[String]) -> Result<Vec<&'static ThesisSet>, String> {
    if names.iter().any(|n| n == "all") {
        return Ok(crate::generator::THESIS_SETS.iter().collect());
    }
    (names.iter())
        .map(|n| ThesisSet::named(n).ok_or_else(|| format!("--set: no set named {n}")))
        .collect()
}

/// The runs of an earlier `--format json`, in the order of `engines`.
fn read_runs(path: &std::path::Path, engines: &[&'static str]) -> Result<Vec<TargetRuns>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let bad_file = |what: &str| {
        format!(
            "{}: not the JSON of `apc bench engines` ({what})",
            path.display()
        )
    };
    let v: Value = serde_json::from_str(&text).map_err(|e| bad_file(&e.to_string()))?;
    let targets = v["targets"]
        .as_array()
        .ok_or_else(|| bad_file("no targets"))?;
    targets
        .iter()
        .map(|t| {
            let class = (Class::ALL.iter())
                .find(|c| Some(c.name()) == t["class"].as_str())
                .ok_or_else(|| bad_file("a class apc does not know"))?;
            let runs = (engines.iter())
                .map(|e| {
                    let r = (t["runs"].as_array().into_iter().flatten())
                        .find(|r| r["engine"] == *e)
                        .ok_or_else(|| bad_file(&format!("no run of {e}")))?;
                    let ms = r["ms"]
                        .as_f64()
                        .ok_or_else(|| bad_file("a run without ms"))?;
                    Ok((r["decided"] == true, Duration::from_secs_f64(ms / 1e3)))
                })
                .collect::<Result<_, String>>()?;
            let population = (Population::ALL.iter())
                .find(|p| Some(p.name()) == t["population"].as_str())
                .copied()
                .ok_or_else(|| bad_file("a target without its population, files or generated"))?;
            Ok(TargetRuns {
                file: t["file"].as_str().unwrap_or_default().to_string(),
                population,
                class: *class,
                line: t["line"].as_u64().unwrap_or(0) as u32,
                col: t["col"].as_u64().unwrap_or(0) as u32,
                runs,
            })
        })
        .collect()
}

fn target_json(t: &TargetRuns, engines: &[&'static str]) -> Value {
    json!({
        "file": t.file,
        "population": t.population.name(),
        "class": t.class.name(),
        "line": t.line,
        "col": t.col,
        "runs": (engines.iter().zip(&t.runs)).map(|(e, (decided, time))| json!({
            "engine": e,
            "decided": decided,
            "ms": time.as_secs_f64() * 1e3,
        })).collect::<Vec<_>>(),
    })
}
