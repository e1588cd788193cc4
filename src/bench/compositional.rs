//! `apc bench compositional`: the report's §6 comparison
//! (`docs/compositional-se.md` §8, §12) on an IncDec-like family of N nested
//! calls, compositional symbolic execution against the executor that
//! re-explores a callee at every call (`explore`, which pushes a frame per
//! call: inlining as symbolic execution sees it), both run until every path
//! is explored. Per N: steps, solver queries and times; the growth as the
//! least-squares slope on a log–log scale (1 = linear, 2 = quadratic).
//!
//! The family (its generator is [`program`]): `incdec(x)` decrements a
//! positive x and increments any other; `main(x)` applies it N times,
//! each call on the previous result, and asserts `r <= x + N`, which holds,
//! so that neither engine stops before the end. The runs differ by where x
//! starts (about 2N + 2 feasible paths, each through N calls): the
//! executor asks two branch queries per call on every path (quadratic in
//! N); the compositional engine explores `incdec`'s two paths once and
//! each call of `main` in one step (linear in N, with revivals).

use crate::compositional;
use crate::db::Database;
use crate::explore;
use crate::smt::Profile;
use std::fmt::Write;
use std::time::{Duration, Instant};

pub use super::scale::log_log_slope;

/// The sizes measured by default (doubling, for the slope).
pub const DEFAULT_SIZES: [usize; 5] = [2, 4, 8, 16, 32];

/// The program with `n` nested calls (n ≥ 1): `incdec` applied n times,
/// `incdec(incdec(…(x)…))` written one call per statement.
pub fn program(n: usize) -> String {
    let n = n.max(1);
    let mut s = String::from(
        "incdec(x) {\n  var r;\n  if (x > 0) {\n    r = x - 1;\n  }\n  else {\n    \
         r = x + 1;\n  }\n  return r;\n}\n\nmain(x) {\n  var r;\n  r = x;\n",
    );
    for _ in 0..n {
        s.push_str("  r = incdec(r);\n");
    }
    let _ = write!(s, "  assert(r <= x + {n});\n  return r;\n}}\n");
    s
}

/// One engine on one member of the family.
#[derive(Clone, Debug)]
pub struct Row {
    pub n: usize,
    /// `compositional` or `explore`.
    pub engine: &'static str,
    /// How the run ended: `complete` (every path), or why it stopped.
    pub end: String,
    /// Whether the assert was found reachable (never, by construction).
    pub claimed_reachable: bool,
    pub steps: u64,
    pub queries: u64,
    pub solver_time: Duration,
    pub time: Duration,
}

/// Both engines on the member of size `n`, each within `timeout`.
pub fn measure(n: usize, solver: &Profile, timeout: Duration) -> Result<[Row; 2], String> {
    let text = program(n);
    Ok([
        compositional_row(n, &text, solver, timeout)?,
        explore_row(n, &text, solver, timeout)?,
    ])
}

fn compositional_row(
    n: usize,
    text: &str,
    solver: &Profile,
    timeout: Duration,
) -> Result<Row, String> {
    let (db, file) = Database::with_file(&format!("incdec-{n}.mc"), text);
    let mut o = compositional::Options::new(solver.clone());
    o.timeout = Some(timeout);
    let started = Instant::now();
    let out = compositional::run(&db, file, &o)?;
    let time = started.elapsed();
    Ok(Row {
        n,
        engine: "compositional",
        end: match out.end {
            compositional::End::Terminated => "complete".into(),
            compositional::End::GoalReached => "goal".into(),
            compositional::End::Stopped(why) => why,
        },
        claimed_reachable: !out.reached.is_empty(),
        steps: out.stats.steps,
        queries: out.stats.queries,
        solver_time: out.stats.solver_time,
        time,
    })
}

fn explore_row(n: usize, text: &str, solver: &Profile, timeout: Duration) -> Result<Row, String> {
    let (db, file) = Database::with_file(&format!("incdec-{n}.mc"), text);
    let mut o = explore::Options::new(solver.clone());
    o.timeout = Some(timeout);
    o.stop_at_first_error = false;
    let started = Instant::now();
    let out = explore::explore(&db, file, &o)?;
    let time = started.elapsed();
    Ok(Row {
        n,
        engine: "explore",
        end: match out.end {
            explore::End::Complete => "complete".into(),
            explore::End::ErrorFound => "error".into(),
            explore::End::Incomplete(why) => why,
        },
        claimed_reachable: !out.errors.is_empty(),
        steps: out.stats.steps,
        queries: out.stats.queries,
        solver_time: out.stats.solver_time,
        time,
    })
}

/// The log–log slopes (queries, time) of one engine's complete rows.
pub fn slopes(rows: &[Row], engine: &str) -> (Option<f64>, Option<f64>) {
    let mine: Vec<&Row> = rows
        .iter()
        .filter(|r| r.engine == engine && r.end == "complete")
        .collect();
    let queries: Vec<(f64, f64)> = mine
        .iter()
        .map(|r| (r.n as f64, r.queries as f64))
        .collect();
    let times: Vec<(f64, f64)> = mine
        .iter()
        .map(|r| (r.n as f64, r.time.as_secs_f64()))
        .collect();
    (log_log_slope(&queries), log_log_slope(&times))
}
