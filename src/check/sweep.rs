//! One campaign of random tests and one exploration for all of a file's
//! targets, before they are checked one by one (docs/portfolio.md §4a).
//!
//! The fuzzer's tests run first, against every open target at once
//! (docs/fuzzing.md): each test that reaches one, replayed, decides it.
//!
//! Then the executor's witness search runs
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
use crate::deadline::Pace;
use crate::engine::{Decision, How, Question};
use std::time::{Duration, Instant};

/// The sweep's budget per open target.
pub const SLICE: Duration = Duration::from_millis(25);

/// Within the budget, the sweep goes on while it pays its way: after a
/// head start, a [`SLICE`] per target it found. A program whose targets
/// each need a path of their own (a dispatcher over 60 functions) spent
/// its whole budget, 3 s, to find 8 of 120 targets.
pub const PACE: Pace = Pace {
    head_start: Duration::from_millis(200),
    per_found: SLICE,
};

/// With the portfolio: the reports of the `open` targets (indices into
/// `s.targets`) that one campaign of tests (with the fuzzer in it) and
/// one exploration (with the witness search in it), side by side on two
/// cores, decide, in `slots`. Every open target is charged an equal share
/// of the phase, in `spent`: a swept target's time is its share, and one
/// left to be checked alone carries its share into its own time.
pub fn sweep(
    s: &Subject,
    open: &[usize],
    opts: &CheckOptions,
    slots: &mut [Option<Report>],
    spent: &mut [Cost],
) {
    if opts.engine != PORTFOLIO || open.len() < 2 {
        return;
    }
    let start = Instant::now();
    let targets: Vec<Target> = open.iter().map(|&i| s.targets[i].clone()).collect();
    let (tests, exploration) = side_by_side(s, &targets, opts);
    let solver = (exploration.as_ref()).map_or_else(Default::default, |e| e.solver);
    let whole = Cost {
        time: start.elapsed(),
        solver,
    };
    let shares = whole.shares(open.len());
    for (&i, share) in open.iter().zip(&shares) {
        spent[i] += *share;
    }
    let complete = exploration.as_ref().is_some_and(|e| e.complete);
    let found = (tests.into_iter().chain(exploration)).flat_map(|f| f.decided);
    for (target, d) in found {
        if let Some(k) = targets.iter().position(|t| *t == target)
            && slots[open[k]].is_none()
        {
            slots[open[k]] = Some(Report::shared(&target, d, shares[k]));
        }
    }
    if complete {
        let q = question(s, &targets, opts);
        let solver = opts.solvers.first().map(|p| p.name.clone());
        for (k, &i) in open.iter().enumerate() {
            if slots[i].is_none() {
                let method = q.method("explore-search", How::EveryPath);
                let d = Decision::unreachable(method, solver.clone());
                slots[i] = Some(Report::shared(&targets[k], d, shares[k]));
            }
        }
    }
}

/// The campaign of tests on a thread of its own and the exploration on
/// this one, each when the portfolio has its engine: what each found.
fn side_by_side(
    s: &Subject,
    targets: &[Target],
    opts: &CheckOptions,
) -> (Option<Found>, Option<Found>) {
    let wants = |engine| opts.portfolio.contains(&engine);
    let (db, file) = (s.db.clone(), s.file);
    let budget = crate::fuzz::BUDGET.min(opts.timeout);
    let testing = opts.cancel.child(Some(Instant::now() + budget * 2));
    std::thread::scope(|scope| {
        let tests = wants("fuzz").then(|| {
            let testing = testing.clone();
            let run = move || tested(&db, file, targets, opts, &testing);
            crate::deadline::analysis_thread().spawn_scoped(scope, run)
        });
        // The tests stop when the exploration ends: the targets left go
        // one by one, where the fuzzer runs the same tests again.
        let exploration = wants("explore-search").then(|| {
            let found = explored(s, targets, opts);
            testing.stop();
            found
        });
        let tests = tests.and_then(|t| t.ok()?.join().ok());
        (tests.flatten(), exploration.flatten())
    })
}

/// What one search of the sweep found: a decision for each target it
/// reached, whether it ended every path (then no other target is
/// reachable), and what it asked of the solver.
struct Found {
    decided: Vec<(Target, Decision)>,
    complete: bool,
    solver: crate::deadline::SolverUse,
}

/// The question about all of `targets` at once.
fn question<'a>(s: &'a Subject, targets: &'a [Target], opts: &'a CheckOptions) -> Question<'a> {
    Question {
        db: &s.db,
        file: s.file,
        targets,
        options: opts,
    }
}

/// The tests start this long after the exploration, if it has not ended
/// by then: a small program's exploration ends sooner, and the tests'
/// start would only add to its time (measured: docs/portfolio.md §4a).
const TESTS_AFTER: Duration = Duration::from_millis(2);

/// The targets that one campaign of random tests, started
/// [`TESTS_AFTER`] the exploration, reaches before `stop` stops.
fn tested(
    db: &crate::db::Database,
    file: crate::db::SourceFile,
    targets: &[Target],
    opts: &CheckOptions,
    stop: &crate::deadline::Stop,
) -> Option<Found> {
    let start = Instant::now() + TESTS_AFTER;
    while Instant::now() < start {
        if stop.is_stopped() {
            return None;
        }
        std::thread::sleep(Duration::from_micros(100));
    }
    let budget = crate::fuzz::BUDGET.min(opts.timeout);
    let until = crate::fuzz::Until::Paced(budget, crate::fuzz::PACE);
    let campaign = stop.guard(|| crate::fuzz::campaign(db, file, targets, until));
    let q = Question {
        db,
        file,
        targets,
        options: opts,
    };
    let method = q.method("fuzz", How::Tested);
    let decided = (campaign.ok()?.ok()?.found.into_iter())
        .map(|(t, w)| (t, Decision::reachable(w, method.clone(), None)))
        .collect();
    Some(Found {
        decided,
        complete: false,
        solver: stop.solver_use(),
    })
}

/// The targets that one exploration of the whole program reaches, and
/// whether it ended every path.
fn explored(s: &Subject, targets: &[Target], opts: &CheckOptions) -> Option<Found> {
    let budget = (SLICE * targets.len() as u32).min(opts.timeout);
    let q = question(s, targets, opts);
    // The executor stops itself at the budget; the token is a backstop.
    let stop = opts.cancel.child(Some(Instant::now() + budget * 2));
    let swept = stop.guard(|| crate::explore::decider::sweep(&q, budget, PACE));
    let swept = swept.ok()?.ok()?;
    let solver_name = opts.solvers.first().map(|p| p.name.clone());
    let method = q.method("explore-search", How::PathFound);
    let decided = (swept.found.into_iter())
        .map(|(t, w)| {
            (
                t,
                Decision::reachable(w, method.clone(), solver_name.clone()),
            )
        })
        .collect();
    Some(Found {
        decided,
        complete: swept.complete,
        solver: stop.solver_use(),
    })
}
