//! One exploration for all of a file's targets, before they are checked
//! one by one (docs/portfolio.md §4a). The executor's witness search runs
//! once over the whole program, keeping every error it reaches: each
//! error's replayed witness decides its target. A file of n reachable
//! asserts then costs one exploration, not n searches that each walk the
//! same prefix again. An exploration that ends every path proves the
//! targets it did not reach.
//!
//! Its budget grows with the number of targets ([`SLICE`] each, at most
//! `--timeout`), and it stops sooner when it finds targets more slowly
//! than a slice each ([`PACE`]): a file whose exploration does not end
//! gives up that much, and the targets left are checked one by one as
//! before.

use super::{CheckOptions, Cost, PORTFOLIO, Report, Subject};
use crate::db::Target;
use crate::engine::{Decision, How, Question};
use crate::explore::Pace;
use std::time::{Duration, Instant};

/// The sweep's budget per open target.
pub const SLICE: Duration = Duration::from_millis(25);

/// Within the budget, the sweep goes on while it pays its way: after a
/// head start, a [`SLICE`] per target it found. A program whose targets
/// each need a path of their own (a dispatcher over 60 functions) spent
/// its whole budget, 3 s, to find 8 of 120 targets.
pub const PACE: Pace = Pace {
    head_start: Duration::from_millis(200),
    per_error: SLICE,
};

/// With the portfolio and the executor in it: the reports of the `open`
/// targets (indices into `s.targets`) that one exploration decides, in
/// `slots`. Every open target is charged an equal share of the
/// exploration, in `spent`: a swept target's time is its share, and one
/// left to be checked alone carries its share into its own time.
pub fn sweep(
    s: &Subject,
    open: &[usize],
    opts: &CheckOptions,
    slots: &mut [Option<Report>],
    spent: &mut [Cost],
) {
    let wanted = opts.engine == PORTFOLIO && opts.portfolio.contains(&"explore-search");
    if !wanted || open.len() < 2 {
        return;
    }
    let start = Instant::now();
    let budget = (SLICE * open.len() as u32).min(opts.timeout);
    let targets: Vec<Target> = open.iter().map(|&i| s.targets[i].clone()).collect();
    let q = Question {
        db: &s.db,
        file: s.file,
        targets: &targets,
        options: opts,
    };
    // The executor stops itself at the budget; the token is a backstop.
    let stop = opts.cancel.child(Some(start + budget * 2));
    let swept = stop.guard(|| crate::explore::decider::sweep(&q, budget, PACE));
    let shares = Cost::since(start, &stop).shares(open.len());
    for (&i, share) in open.iter().zip(&shares) {
        spent[i] += *share;
    }
    let Ok(Ok(swept)) = swept else {
        return;
    };
    let solver = opts.solvers.first().map(|p| p.name.clone());
    for (target, witness) in swept.found {
        let method = q.method("explore-search", How::PathFound);
        let d = Decision::reachable(witness, method, solver.clone());
        if let Some(k) = open.iter().position(|&i| s.targets[i] == target) {
            slots[open[k]] = Some(Report::shared(&target, d, shares[k]));
        }
    }
    if swept.complete {
        for (&i, share) in open.iter().zip(&shares) {
            if slots[i].is_some() {
                continue;
            }
            let method = q.method("explore-search", How::EveryPath);
            let d = Decision::unreachable(method, solver.clone());
            slots[i] = Some(Report::shared(&s.targets[i], d, *share));
        }
    }
}
