//! `apc bench ksweep`: φ̂^K alone (`apc check --mode unfolded --k K`) for
//! K = 1 … K_max on each Table 2 benchmark, after the condition is built.
//! A K *decides* a benchmark when the verdict is definite: `unreachable`
//! (φ̂^K unsat, a proof for every larger K too, since φ̂^K only gets
//! stronger) or `reachable` (a model whose witness the interpreter
//! replayed). The smallest such K is what the ISSTA paper's K = 25 is a
//! guess of.

use super::{Benchmark, answer, check_options, timed, timed_build};
use crate::check::{self, Mode};
use crate::smt::Profile;
use std::time::Duration;

/// One K on one benchmark.
pub struct KPoint {
    pub k: u32,
    pub answer: &'static str,
    /// Median time of the check (queries, solver, witness replay).
    pub time: Duration,
    pub method: String,
    /// The reason of an `unknown`.
    pub reason: Option<String>,
}

/// A benchmark's sweep.
pub struct KSweep {
    pub benchmark: &'static str,
    pub solver: String,
    /// Time to build φ̂ (once, before the sweep).
    pub build: Duration,
    pub points: Vec<KPoint>,
}

impl KSweep {
    /// The smallest K with a definite verdict.
    pub fn smallest_deciding(&self) -> Option<u32> {
        self.points
            .iter()
            .find(|p| p.answer != "unknown")
            .map(|p| p.k)
    }
}

/// Sweeps K = 1 … `k_max` on one benchmark (medians of `runs`; a check
/// that reached the timeout is not repeated).
pub fn sweep(
    b: &Benchmark,
    solver: &Profile,
    k_max: u32,
    runs: usize,
    timeout: Duration,
    tick: &dyn Fn(),
) -> Result<KSweep, String> {
    let base = check_options(solver, true, timeout);
    let engine = crate::nc::engine_options(&base);
    let (build, l) = timed_build(1, &engine, || b.load())?;
    let t = &l.target;
    // Simplified before the sweep, so that each K times the solving only.
    l.simplified(&engine);
    let mut points = Vec::new();
    for k in 1..=k_max {
        let opts = check::CheckOptions {
            mode: Mode::Unfolded,
            k,
            ..base.clone()
        };
        let (time, r) = timed(runs, timeout, || {
            check::check_target(&l.db, l.file, t, &opts)
        });
        points.push(KPoint {
            k,
            answer: answer(&r.verdict),
            time,
            method: r.method.map(|m| m.to_string()).unwrap_or_default(),
            reason: match r.verdict {
                check::Verdict::Unknown(why) => Some(why),
                _ => None,
            },
        });
        tick();
    }
    Ok(KSweep {
        benchmark: b.name,
        solver: solver.name.clone(),
        build,
        points,
    })
}
