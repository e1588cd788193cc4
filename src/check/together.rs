//! Every target of a program at once (docs/portfolio.md §4): three ways
//! race, and the first definite answer wins.
//!
//! - **One Horn invariant** for reaching any of them: checked, it proves
//!   them all.
//! - **The executor over the whole program** (subsumption and loop
//!   summaries): its first error is a witness; every path ended without
//!   one proves them all.
//! - **One necessary condition** for reaching any of them. φ̂ for a set of
//!   vertices is built in the same single pass as for one; if it is
//!   unsatisfiable, no target can be reached, and each is `unreachable`
//!   with the same guarantee as a proof of its own condition. Its models
//!   are replayed: a run that hits a target is a witness.
//!
//! Anything else proves nothing: the targets are then checked one by one.

use super::model::InputModel;
use super::{
    CheckOptions, Replayer, contenders, dump_horn_scripts, engine_options, explore_options,
    guarded, undecided_reason,
};
use crate::chc;
use crate::db::{self, Database, SourceFile, Target};
use crate::deadline;
use crate::explore::{self, AtChecks, End, Strategy};
use crate::interp::Witness;
use crate::nc::{self, query};
use crate::smt::{self, DumpName, RaceOutcome};
use crate::term::{TermId, Terms};
use std::time::Instant;

/// What one condition for every target decided.
#[derive(Debug)]
pub enum Together {
    /// Its `unsat`, by this query (e.g. `nc-quantified`): every target is
    /// unreachable.
    Unreachable(String),
    /// A run that hit this target, found by this method.
    Reachable(Target, Witness, String),
    /// Nothing (satisfiable without a replayed witness, unknown, too large
    /// or out of time), with each way's reason.
    Undecided(String),
}

/// What every way is asked: every one of `targets`, before `deadline`.
#[derive(Clone, Copy)]
struct Question<'a> {
    db: &'a Database,
    file: SourceFile,
    targets: &'a [Target],
    opts: &'a CheckOptions,
    deadline: Instant,
}

/// The ways of deciding every target at once, each on a thread of its own.
#[derive(Clone, Copy, Debug)]
enum Way {
    HornClauses,
    WholeProgram,
    OneCondition,
}

impl Way {
    const ALL: [Way; 3] = [Way::HornClauses, Way::WholeProgram, Way::OneCondition];

    fn name(self) -> &'static str {
        match self {
            Way::HornClauses => "chc",
            Way::WholeProgram => "explore",
            Way::OneCondition => "nc",
        }
    }

    /// The niceness of the way's thread and solver processes, as in the
    /// portfolio (`Engine::portfolio_niceness`).
    fn niceness(self) -> i32 {
        match self {
            Way::HornClauses => 0,
            Way::WholeProgram => 5,
            Way::OneCondition => 5,
        }
    }

    fn decide(self, q: Question) -> Together {
        match self {
            Way::HornClauses => by_horn_clauses(q),
            Way::WholeProgram => by_exploring(q),
            Way::OneCondition => by_one_condition(q),
        }
    }
}

/// Every target at once, before `deadline`: the Horn clauses, the executor
/// over the whole program and one condition race; the first definite
/// answer stops the others.
pub fn decide(
    db: &Database,
    file: SourceFile,
    targets: &[Target],
    opts: &CheckOptions,
    deadline: Instant,
) -> Together {
    let stop = deadline::Stop::nested();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        for way in Way::ALL {
            let (tx, stop, db) = (tx.clone(), stop.clone(), db.clone());
            // The engines recurse over (bounded) term heights: a big stack.
            std::thread::Builder::new()
                .stack_size(256 << 20)
                .spawn_scoped(scope, move || {
                    let q = Question {
                        db: &db,
                        file,
                        targets,
                        opts,
                        deadline,
                    };
                    if opts.portfolio_priorities {
                        super::lower_this_threads_priority(way.niceness());
                    }
                    let answer = guarded(deadline, stop, || way.decide(q))
                        .unwrap_or_else(Together::Undecided);
                    let _ = tx.send((way, answer));
                })
                .expect("spawning a thread for a way of deciding");
        }
        drop(tx);
        let mut reasons = Vec::new();
        for (way, answer) in rx {
            match answer {
                Together::Undecided(why) => reasons.push(format!("{}: {why}", way.name())),
                definite => {
                    stop.stop();
                    return definite;
                }
            }
        }
        Together::Undecided(reasons.join("; "))
    })
}

/// One checked invariant of the Horn clauses for reaching any of the
/// targets proves them all; a counterexample proves nothing here.
fn by_horn_clauses(q: Question) -> Together {
    let Some(prog) = db::program(q.db, q.file).as_ref() else {
        return Together::Undecided("the program has no main".into());
    };
    let nodes = error_vertices(prog, q.targets);
    let (verdict, scripts) = chc::decide(&prog.body, &nodes, q.deadline);
    if let Some(dir) = &q.opts.dump_queries {
        let name = DumpName::every_target(dir, q.file.path(q.db));
        dump_horn_scripts(name.reporting_to(&q.opts.dump_failure), &scripts);
    }
    match verdict {
        chc::Verdict::Unreachable(_) => Together::Unreachable("chc-every-target".into()),
        chc::Verdict::Counterexample(_) => {
            Together::Undecided("the clauses have a counterexample (not replayed here)".into())
        }
        chc::Verdict::Unknown(why) => Together::Undecided(why),
    }
}

/// The executor over the whole program, as `apc explore` with subsumption
/// and loop summaries: its first error, or every target proved when every
/// path ended without one.
fn by_exploring(q: Question) -> Together {
    let Some(mut o) = explore_options(q.opts, q.deadline) else {
        return Together::Undecided("too little time".into());
    };
    o.strategy = Strategy::Tree;
    o.subsumption = Some(AtChecks::Conjoin);
    o.summarization = true;
    o.invariants_from_true = true;
    o.second_opinion = q.opts.solvers.get(1).cloned();
    o.stop_at_first_error = true;
    let _p = deadline::phase("exploring");
    let report = match explore::explore(q.db, q.file, &o) {
        Ok(r) => r,
        Err(e) => return Together::Undecided(e),
    };
    if let Some(e) = report.errors.iter().find(|e| q.targets.contains(&e.target)) {
        let method = "explore-whole-program".to_string();
        return Together::Reachable(e.target.clone(), e.witness.clone(), method);
    }
    match report.end {
        End::Complete => Together::Unreachable("explore-every-path".into()),
        End::Incomplete(why) => Together::Undecided(why),
        End::ErrorFound => Together::Undecided("stopped at another error".into()),
    }
}

/// One condition for reaching any of the targets, raced before the
/// deadline; each model is replayed, and a run that hits one of the
/// targets is a witness for it.
fn by_one_condition(q: Question) -> Together {
    let Question {
        db,
        file,
        targets,
        opts,
        deadline,
    } = q;
    let decided = deadline::run(deadline, || {
        let prog = db::program(db, file).as_ref()?;
        let nodes = error_vertices(prog, targets);
        let mut eng = nc::Engine::new(db, file, engine_options(opts))?;
        let phi = {
            let _p = deadline::phase("building the condition");
            eng.condition_of(&nodes)
        };
        let program = &db::parse(db, file).program;
        let at = Replayer::new(program, file.text(db), targets);
        let inputs = InputModel::new(program, &prog.body, &eng.terms, phi);
        Some(race(&eng.terms, phi, &inputs, &at, opts, deadline))
    });
    match decided {
        Ok(Some(answer)) => answer,
        Ok(None) => Together::Undecided("no condition (no main, or unsupported)".into()),
        Err(timeout) => Together::Undecided(format!("timeout: {}", timeout.phase)),
    }
}

/// The error vertices of every copy of every target.
fn error_vertices(prog: &crate::ir::InlinedProgram, targets: &[Target]) -> Vec<crate::ir::NodeId> {
    (targets.iter())
        .flat_map(|t| prog.copies_of(&t.function, t.id))
        .collect()
}

/// The race of the condition's queries; a model counts when its run hits
/// one of the targets.
fn race(
    terms: &Terms,
    phi: TermId,
    inputs: &InputModel,
    at: &Replayer,
    opts: &CheckOptions,
    deadline: Instant,
) -> Together {
    let simplified = opts.simplify.then(|| nc::simplify_condition(terms, phi));
    let simple = simplified
        .as_ref()
        .map_or((terms, phi), |s| (s.terms_or(terms), s.phi));
    let chains = query::pending((terms, phi), simple, opts.mode, opts.k);
    let contenders = contenders(chains, &opts.solvers, None, opts.sharing_cores);
    let judge = |session: &mut smt::Session| inputs.judge(session, at);
    let _p = deadline::phase("solving");
    match smt::race(&contenders, judge, opts.max_models, deadline) {
        RaceOutcome::Unsat { method, .. } => {
            Together::Unreachable(format!("{method}-every-target"))
        }
        RaceOutcome::Accepted {
            witness: (w, _),
            method,
            ..
        } => match at.hit(&w) {
            Ok(t) => Together::Reachable(t.clone(), w, format!("{method}-every-target")),
            Err(why) => Together::Undecided(why),
        },
        RaceOutcome::Timeout(why) => Together::Undecided(undecided_reason(&why, true)),
        RaceOutcome::Undecided(why) => Together::Undecided(undecided_reason(&why, false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// `way` (or, with `None`, the race) on every target of `text`.
    fn decided(text: &str, way: Option<Way>) -> Together {
        let (db, file) = Database::with_file("together.mc", text);
        let targets = db::targets(&db, file);
        assert!(targets.len() > 1, "{targets:?}");
        let z3 = smt::default_z3().expect("z3 (solvers/install.sh)");
        let opts = CheckOptions::new(vec![z3], Duration::from_secs(20));
        let deadline = Instant::now() + opts.timeout;
        let q = Question {
            db: &db,
            file,
            targets: &targets,
            opts: &opts,
            deadline,
        };
        match way {
            Some(way) => way.decide(q),
            None => decide(&db, file, &targets, &opts, deadline),
        }
    }

    const SAFE: &str = "main(n) { var a, i, x; a = [1, 2, 3]; x = a[1]; i = 0; \
        while (i < n) { x = x + 10 / a[2]; i = i + 1; } return x; }";
    const ONE_REACHABLE: &str = "main(n) { var a, i, x; a = [1, 2, 3]; x = a[1]; i = 0; \
        while (i < n) { x = x + 10 / a[2]; i = i + 1; } return x / (n - 3); }";

    /// The witness for `ONE_REACHABLE`'s division: `n = 3`.
    fn assert_hits_the_division(answer: Together) {
        let Together::Reachable(t, w, _) = answer else {
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
        let way = Some(Way::OneCondition);
        assert!(matches!(decided(SAFE, way), Together::Unreachable(_)));
        assert_hits_the_division(decided(ONE_REACHABLE, way));
    }

    /// The executor over the whole program finds the reachable division;
    /// the race finds it too, and proves the safe program.
    #[test]
    fn the_whole_program_explored_finds_an_error_and_the_race_decides_both() {
        assert_hits_the_division(decided(ONE_REACHABLE, Some(Way::WholeProgram)));
        assert_hits_the_division(decided(ONE_REACHABLE, None));
        assert!(matches!(decided(SAFE, None), Together::Unreachable(_)));
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
        let way = Some(Way::HornClauses);
        assert!(matches!(
            decided(&with("x + 1 > y"), way),
            Together::Unreachable(_)
        ));
        let one_violated = with("n != 3");
        assert!(matches!(
            decided(&one_violated, way),
            Together::Undecided(_)
        ));
    }
}
