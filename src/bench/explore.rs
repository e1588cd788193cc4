//! `apc bench explore`: the executor's strategies × merging strategies on
//! the Table 2 programs and the thesis's listings: paths, runs, queries and
//! times, per combination (docs/thesis-executor.md).

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

/// Explores `source` once with the given combination.
pub fn explore_row(
    (program, source): (&'static str, &'static str),
    strategy: Strategy,
    merging: Merging,
    solver: &Profile,
    timeout: Duration,
) -> Result<ExploreRow, String> {
    let (db, file) = Database::with_file(program, source);
    let mut o = Options::new(solver.clone());
    o.strategy = strategy;
    o.merging = merging;
    o.timeout = Some(timeout);
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
