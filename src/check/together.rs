//! Every target of a program at once (docs/portfolio.md §4): the engines
//! that take a question about several targets race on "can a run reach
//! any of them?", and the first definite answer wins.
//!
//! - **One Horn invariant** for reaching any of them (`chc`): checked, it
//!   proves them all.
//! - **The executor over the whole program** (`explore`, subsumption and
//!   loop summaries): its first error is a witness; every path ended
//!   without one proves them all.
//! - **One necessary condition** for reaching any of them (`nc`). φ̂ for a
//!   set of vertices is built in the same single pass as for one; if it is
//!   unsatisfiable, no target can be reached, and each is `unreachable`
//!   with the same guarantee as a proof of its own condition. Its models
//!   are replayed: a run that hits a target is a witness.
//!
//! Anything else proves nothing: the targets are then checked one by one.

use super::schedule::Schedule;
use super::{CheckOptions, Cost, PORTFOLIO, Report, Subject, portfolio};
use crate::db::{self, Target};
use crate::deadline::{Ended, Stop};
use crate::engine::{Decision, Question, Verdict};
use std::time::Instant;

/// The engines asked about every target at once, all started at once.
pub const EVERY_TARGET: [&str; 3] = ["chc", "explore", "nc"];

/// What the phases before the one-by-one checks made of a program's
/// targets: a report per target they decided, and the time each target
/// was charged (its share of a sweep).
pub type Phase = (Vec<Option<Report>>, Vec<Cost>);

/// With the portfolio: the reports of the targets that one exploration
/// of the whole program decides (`sweep`); then, with
/// `opts.all_targets_first`, of those that all of a program's other open
/// targets at once decide (those the value facts do not prove), within
/// one `opts.timeout`, each with that time; `None` for the others.
pub fn decided(s: &Subject, opts: &CheckOptions) -> Phase {
    let n = s.targets.len();
    let (mut slots, mut spent) = (vec![None; n], vec![Cost::default(); n]);
    if opts.engine != PORTFOLIO {
        return (slots, spent);
    }
    let open: Vec<usize> = (0..s.targets.len())
        .filter(|&i| db::proved_by_value_facts(&s.db, s.file, &s.targets[i]).is_none())
        .collect();
    super::sweep::sweep(s, &open, opts, &mut slots, &mut spent);
    if !opts.all_targets_first {
        return (slots, spent);
    }
    let start = Instant::now();
    let open: Vec<usize> = open.into_iter().filter(|&i| slots[i].is_none()).collect();
    if open.len() < 2 {
        return (slots, spent);
    }
    let targets: Vec<Target> = open.iter().map(|&i| s.targets[i].clone()).collect();
    let stop = opts.cancel.child(Some(start + opts.timeout));
    // A defect here leaves the targets to be checked (and reported) one by
    // one.
    let Ok(d) = decide(&s.db, s.file, &targets, opts, &stop) else {
        return (slots, spent);
    };
    // One time for every target the answer decides; its solver work is
    // shared among them.
    let cost = Cost::since(start, &stop);
    let shares = cost.shares(open.len());
    let report = |k: usize, d: &Decision| {
        let share = Cost {
            time: cost.time,
            solver: shares[k].solver,
        };
        Report::shared(&targets[k], d.clone(), share)
    };
    match &d.verdict {
        Verdict::Unreachable => {
            for (k, &i) in open.iter().enumerate() {
                slots[i] = Some(report(k, &d));
            }
        }
        Verdict::Reachable(_) => {
            if let Some(j) = (d.reached.as_ref()).and_then(|t| targets.iter().position(|x| x == t))
            {
                slots[open[j]] = Some(report(j, &d));
            }
        }
        Verdict::Unknown(_) => {}
    }
    (slots, spent)
}

/// Every one of `targets` at once, under `stop`: the engines of
/// [`EVERY_TARGET`] race.
pub fn decide(
    db: &crate::db::Database,
    file: crate::db::SourceFile,
    targets: &[Target],
    opts: &CheckOptions,
    stop: &Stop,
) -> Result<Decision, Ended> {
    let all_at_once = CheckOptions {
        portfolio_head: EVERY_TARGET.len(),
        ..opts.clone()
    };
    let q = Question {
        db,
        file,
        targets,
        options: &all_at_once,
    };
    // All of them start at once: no stagger.
    let every_engine = Schedule::unstaggered(EVERY_TARGET.to_vec());
    stop.guard(|| portfolio(&q, &every_engine))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Database;
    use crate::smt;
    use std::time::Duration;

    /// Engine `way` (or, with `None`, the race) on every target of `text`.
    fn decided(text: &str, way: Option<&str>) -> Decision {
        let (db, file) = Database::with_file("together.mc", text);
        let targets = db::targets(&db, file);
        assert!(targets.len() > 1, "{targets:?}");
        let z3 = smt::default_z3().expect("z3 (solvers/install.sh)");
        let opts = CheckOptions::new(vec![z3], Duration::from_secs(20));
        let stop = opts.cancel.child(Some(Instant::now() + opts.timeout));
        match way {
            Some(way) => {
                let q = Question {
                    db: &db,
                    file,
                    targets: &targets,
                    options: &opts,
                };
                let e = super::super::engine(way).expect("a registered engine");
                crate::engine::decide(e, &q, &stop)
            }
            None => decide(&db, file, &targets, &opts, &stop).expect("no defect"),
        }
    }

    const SAFE: &str = "main(n) { var a, i, x; a = [1, 2, 3]; x = a[1]; i = 0; \
        while (i < n) { x = x + 10 / a[2]; i = i + 1; } return x; }";
    const ONE_REACHABLE: &str = "main(n) { var a, i, x; a = [1, 2, 3]; x = a[1]; i = 0; \
        while (i < n) { x = x + 10 / a[2]; i = i + 1; } return x / (n - 3); }";

    /// The witness for `ONE_REACHABLE`'s division: `n = 3`.
    fn assert_hits_the_division(answer: Decision) {
        let (Verdict::Reachable(w), Some(t)) = (&answer.verdict, &answer.reached) else {
            panic!("no witness: {answer:?}")
        };
        assert_eq!((t.kind, t.line), (crate::TargetKind::DivByZero, 1), "{t:?}");
        assert!(
            w.args
                .iter()
                .any(|(p, v)| p == "n" && *v == crate::interp::ArgValue::Int(3.into())),
            "{w:?}"
        );
    }

    /// Three safe targets, one inside a loop, are proved by one condition;
    /// with one of them reachable, its witness is found and replays.
    #[test]
    fn one_condition_proves_every_target_or_finds_one() {
        let way = Some("nc");
        assert!(matches!(decided(SAFE, way).verdict, Verdict::Unreachable));
        assert_hits_the_division(decided(ONE_REACHABLE, way));
    }

    /// The executor over the whole program finds the reachable division;
    /// the race finds it too, and proves the safe program.
    #[test]
    fn the_whole_program_explored_finds_an_error_and_the_race_decides_both() {
        assert_hits_the_division(decided(ONE_REACHABLE, Some("explore")));
        assert_hits_the_division(decided(ONE_REACHABLE, None));
        assert!(matches!(decided(SAFE, None).verdict, Verdict::Unreachable));
    }

    /// Two asserts that need a loop invariant (x ≥ y) are proved by one
    /// checked invariant of the Horn clauses for reaching either; with one
    /// of them violated, nothing is proved.
    #[test]
    fn one_invariant_proves_every_target() {
        let with = |second: &str| {
            format!(
                "main() {{ var x, y, n; n = input; x = 1; y = 0; \
                 while (y < n) {{ x = x + y; y = y + 1; }} assert(x >= y); assert({second}); return 0; }}"
            )
        };
        let way = Some("chc");
        assert!(matches!(
            decided(&with("x + 1 > y"), way).verdict,
            Verdict::Unreachable
        ));
        let one_violated = with("n != 3");
        assert!(matches!(
            decided(&one_violated, way).verdict,
            Verdict::Unknown(_)
        ));
    }
}
