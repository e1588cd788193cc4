//! `apc bench explore`: the executor's strategies × merging strategies on
//! the Table 2 programs and the thesis's listings: paths, runs, queries and
//! times, per combination (docs/thesis-executor.md); with guidance, the
//! same towards each program's first target annotated reachable.

use super::TABLE2;
use crate::db::Database;
use crate::explore::{self, End, Merging, Options, Strategy};
use crate::smt::Profile;
use std::time::Duration;

macro_rules! listing {
    ($file:literal) => {
        ($file, include_str!(concat!("../../tests/programs/", $file)))
    };
}

/// The thesis's complete listings (chapters 4–5).
pub const THESIS: &[(&str, &str)] = &[
    listing!("thesis_4_1.mc"),
    listing!("thesis_4_2.mc"),
    listing!("thesis_4_3.mc"),
    listing!("thesis_4_5.mc"),
    listing!("thesis_4_6.mc"),
    listing!("thesis_4_8.mc"),
    listing!("thesis_4_9.mc"),
    listing!("thesis_4_10.mc"),
    listing!("thesis_4_11.mc"),
    listing!("thesis_4_12.mc"),
    listing!("thesis_4_13.mc"),
    listing!("thesis_5_3.mc"),
    listing!("thesis_5_4.mc"),
    listing!("thesis_5_5.mc"),
    listing!("thesis_5_6.mc"),
];

/// Every program of the benchmark: Table 2's, then the thesis's.
pub fn programs() -> Vec<(&'static str, &'static str)> {
    TABLE2
        .iter()
        .map(|b| (b.file, b.source))
        .chain(THESIS.iter().copied())
        .collect()
}

/// One exploration's figures.
pub struct ExploreRow {
    pub program: &'static str,
    pub strategy: Strategy,
    pub merging: Merging,
    /// Guided to this target (line, column), if guided.
    pub goal: Option<(u32, u32)>,
    /// States dropped by the goal's necessary condition.
    pub off_course: u64,
    /// `complete`, `error-found`, or `incomplete: <why>`.
    pub end: String,
    pub paths: u64,
    pub runs: u64,
    pub merged: u64,
    pub queries: u64,
    pub solver_time: Duration,
    pub total: Duration,
    pub first_error: Option<Duration>,
}

/// The first target the program's annotations call reachable (`// @target
/// {"line": …, "col": …, "verdict": "reachable"}`), the goal of a guided run.
pub fn reachable_goal(source: &str) -> Option<(u32, u32)> {
    source.lines().find_map(|l| {
        let json = l.trim().strip_prefix("// @target")?;
        let v: serde_json::Value = serde_json::from_str(json.trim()).ok()?;
        (v["verdict"] == "reachable").then_some(())?;
        Some((v["line"].as_u64()? as u32, v["col"].as_u64()? as u32))
    })
}

/// Explores `source` once with the given combination, guided to `goal`
/// if given.
pub fn explore_row(
    (program, source): (&'static str, &'static str),
    strategy: Strategy,
    merging: Merging,
    goal: Option<(u32, u32)>,
    solver: &Profile,
    timeout: Duration,
) -> Result<ExploreRow, String> {
    let (db, file) = Database::with_file(program, source);
    let mut o = Options::new(solver.clone());
    o.strategy = strategy;
    o.merging = merging;
    o.timeout = Some(timeout);
    if let Some(at) = goal {
        let target = (crate::check::targets(&db, file).into_iter())
            .find(|t| (t.line, t.col) == at)
            .ok_or_else(|| format!("no target at {}:{}", at.0, at.1))?;
        let check_opts = crate::check::CheckOptions::new(vec![solver.clone()], timeout);
        o.guide = Some(explore::Guide {
            goal: target,
            nc: crate::nc::engine_options(&check_opts),
        });
    }
    let r = explore::explore(&db, file, &o)?;
    let end = match &r.end {
        End::Complete => "complete".to_string(),
        End::ErrorFound => "error-found".to_string(),
        End::Incomplete(why) => format!("incomplete: {why}"),
    };
    Ok(ExploreRow {
        program,
        strategy,
        merging,
        goal,
        off_course: r.stats.off_course,
        end,
        paths: r.stats.paths,
        runs: r.stats.runs,
        merged: r.stats.states_merged,
        queries: r.stats.queries,
        solver_time: r.stats.solver_time,
        total: r.stats.elapsed,
        first_error: r.errors.first().map(|e| e.found_after),
    })
}
