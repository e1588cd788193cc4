//! The race: several (query, solver) contenders run in parallel; the first
//! definite answer wins and the others are killed.
//!
//! A definite answer is `unsat`, or `sat` with a model the caller's judge
//! accepts (for `apc check`: a witness the interpreter replays to the
//! target). A model the judge rejects is blocked and the contender asks
//! again, a bounded number of times. The race knows nothing of programs:
//! the judge does.

use super::Answer;
use super::profile::Profile;
use super::query::{DumpName, PendingQuery, Variant};
use super::session::Session;
use crate::deadline::{Entrant, Finish};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One query on one solver. The query is built on the contender's own
/// thread when it starts (see [`PendingQuery`]).
#[derive(Clone, Debug)]
pub struct Contender<'a> {
    pub query: Arc<PendingQuery<'a>>,
    pub profile: Profile,
    /// Where to write each script sent, if asked.
    pub dump: Option<DumpName>,
    /// The query to try next, on the same thread, if this one ends
    /// undecided (iterative deepening).
    pub then: Option<Box<Contender<'a>>>,
    /// Starts after the others' head start ([`HEAD_START`]), or as soon as
    /// one of them ends undecided: for a query that costs much to build
    /// and rarely decides first (φ̂^25), which would otherwise take a core
    /// from the cheap ones while they decide.
    pub late: bool,
}

/// How long the race's late contenders wait for the others at most.
pub const HEAD_START: Duration = Duration::from_millis(100);

/// What the judge says of a model.
pub enum Judgement<W> {
    /// Definite: the race ends with this.
    Accept(W),
    /// Not good enough: assert `block` (an SMT-LIB command) and ask again.
    Reject { block: String, why: String },
}

/// How a race ended.
#[derive(Debug)]
pub enum RaceOutcome<W> {
    Unsat {
        variant: Variant,
        solver: String,
    },
    Accepted {
        variant: Variant,
        solver: String,
        witness: W,
    },
    /// Every contender finished without a definite answer: their reasons.
    Undecided(Vec<(Variant, String, Undecided)>),
    /// The deadline passed first; what had ended undecided by then.
    Timeout(Vec<(Variant, String, Undecided)>),
}

/// Why a contender ended without a definite answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Undecided {
    /// The solver answered `unknown` or failed.
    Solver(String),
    /// Satisfiable, but no model the judge accepted.
    NoWitness(String),
    /// The query could not be built (too large): why.
    LeftOut(String),
}

enum Message<W> {
    Definite(RaceOutcome<W>),
    Undecided(Variant, String, Undecided),
}

/// Runs the contenders until one is definite, all are undecided, or the
/// deadline (the one race, `deadline::race`). `judge` gets the session
/// after `sat` (to ask for values).
pub fn race<W, J>(
    contenders: &[Contender<'_>],
    judge: J,
    max_models: usize,
    deadline: Instant,
) -> RaceOutcome<W>
where
    W: Send,
    J: Fn(&mut Session) -> Result<Judgement<W>, String> + Sync,
{
    let judge = &judge;
    let entrants = (contenders.iter())
        .map(|c| {
            let chain = move || run_chain(c, judge, max_models);
            if c.late {
                Entrant::late(chain)
            } else {
                Entrant::now(chain)
            }
        })
        .collect();
    let definite = |m: &Message<W>| matches!(m, Message::Definite(_));
    let race = || crate::deadline::race(entrants, definite, HEAD_START);
    let (answers, timed_out) = match crate::deadline::run(deadline, race) {
        Ok(Finish::Definite(_, Message::Definite(outcome))) => return outcome,
        Ok(Finish::Definite(_, Message::Undecided(..))) => unreachable!("not definite"),
        Ok(Finish::Undecided { answers, timed_out }) => (answers, timed_out),
        Err(_) => (Vec::new(), true),
    };
    // A contender stopped while building its query says nothing.
    let undecided: Vec<(Variant, String, Undecided)> = (answers.into_iter())
        .filter_map(|(_, m)| match m {
            Ok(Message::Undecided(m, s, u)) => Some((m, s, u)),
            _ => None,
        })
        .collect();
    if timed_out {
        RaceOutcome::Timeout(undecided)
    } else {
        RaceOutcome::Undecided(undecided)
    }
}

/// One contender's chain, until a stage is definite or the last ends.
fn run_chain<W, J>(c: &Contender<'_>, judge: &J, max_models: usize) -> Message<W>
where
    J: Fn(&mut Session) -> Result<Judgement<W>, String>,
{
    let mut c = c;
    let mut no_witness = None;
    let msg = loop {
        let m = run_contender(c, judge, max_models);
        match (&m, &c.then) {
            (Message::Undecided(_, _, u), Some(next)) if !crate::deadline::passed() => {
                if matches!(u, Undecided::NoWitness(_)) {
                    no_witness = Some(m);
                }
                c = next;
            }
            _ => break m,
        }
    };
    // A satisfiable stage without a witness says more than a later stage
    // that gave up.
    match (msg, no_witness) {
        (Message::Undecided(_, _, Undecided::Solver(_)), Some(nw)) => nw,
        (m, _) => m,
    }
}

fn run_contender<W, J>(c: &Contender<'_>, judge: &J, max_models: usize) -> Message<W>
where
    J: Fn(&mut Session) -> Result<Judgement<W>, String>,
{
    let undecided = |u: Undecided| Message::Undecided(c.query.variant, c.profile.name.clone(), u);
    let query = match c.query.get() {
        Ok(q) => q,
        Err(why) => return undecided(Undecided::LeftOut(why.to_string())),
    };
    let mut session = match Session::start(&c.profile) {
        Ok(s) => s,
        Err(e) => return undecided(Undecided::Solver(e)),
    };
    let mut blocks: Vec<String> = Vec::new();
    if let Err(e) = session.send(&query.preamble(&c.profile)) {
        return undecided(Undecided::Solver(e));
    }
    let mut last_miss = String::new();
    for attempt in 0..max_models.max(1) {
        if let Some(dump) = &c.dump {
            // A failed write is noted in the dump's failure slot, which the
            // caller reports.
            let script = query.script(&c.profile, &blocks);
            dump.write(c.query.variant, &c.profile.name, attempt + 1, &script);
        }
        match session.check() {
            // Unsat once a model is blocked proves nothing: the block
            // speaks of finitely many input values only.
            Answer::Unsat if attempt > 0 => {
                return undecided(Undecided::NoWitness(last_miss));
            }
            Answer::Unsat if !c.query.variant.refutes() => {
                return undecided(Undecided::Solver(
                    "unsat within its bound, which proves nothing".into(),
                ));
            }
            Answer::Unsat => {
                return Message::Definite(RaceOutcome::Unsat {
                    variant: c.query.variant,
                    solver: c.profile.name.clone(),
                });
            }
            Answer::Unknown(why) => {
                // After a rejected model, `unknown` still means "sat, no witness".
                return undecided(if attempt == 0 {
                    Undecided::Solver(why)
                } else {
                    Undecided::NoWitness(last_miss)
                });
            }
            Answer::Sat if !c.query.variant.witnesses() => {
                return undecided(Undecided::Solver(
                    "sat on the slice, whose models are not witnesses".into(),
                ));
            }
            Answer::Sat => match judged(judge, &mut session) {
                Ok(Judgement::Accept(w)) => {
                    return Message::Definite(RaceOutcome::Accepted {
                        variant: c.query.variant,
                        solver: c.profile.name.clone(),
                        witness: w,
                    });
                }
                Ok(Judgement::Reject { block, why }) => {
                    last_miss = why;
                    if let Err(e) = session.send(&block) {
                        return undecided(Undecided::Solver(e));
                    }
                    blocks.push(block);
                }
                Err(e) => return undecided(Undecided::Solver(e)),
            },
        }
    }
    undecided(Undecided::NoWitness(last_miss))
}

/// The judge's word on the session's model (its time is `judging a model`).
fn judged<W, J>(judge: &J, session: &mut Session) -> Result<Judgement<W>, String>
where
    J: Fn(&mut Session) -> Result<Judgement<W>, String>,
{
    let _t = crate::deadline::timed("judging a model");
    judge(session)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contender(query: &str, refutes: bool) -> Contender<'static> {
        use super::super::query::Variant;
        let variant = if refutes {
            Variant::Unfolded(14)
        } else {
            Variant::Bounded(14)
        };
        Contender {
            query: {
                let text = query.to_string();
                Arc::new(PendingQuery::new(variant, move || {
                    Ok(super::super::query::Query {
                        variant,
                        text: text.clone(),
                    })
                }))
            },
            profile: super::super::profile::default_z3().expect("z3 (solvers/install.sh)"),
            dump: None,
            then: None,
            late: false,
        }
    }

    fn run(c: Contender<'static>) -> RaceOutcome<()> {
        let accept = |_: &mut Session| Ok(Judgement::Accept(()));
        race(&[c], accept, 1, Instant::now() + Duration::from_secs(20))
    }

    fn pending(
        build: impl Fn() -> Result<super::super::query::Query, String> + Send + Sync + 'static,
    ) -> Contender<'static> {
        let mut c = contender("", true);
        c.query = Arc::new(PendingQuery::new(
            super::super::query::Variant::Unfolded(25),
            build,
        ));
        c
    }

    /// A contender still building its query (a large unfolding) is stopped
    /// when another decides: the race does not wait for the build.
    #[test]
    fn a_query_still_being_built_does_not_hold_up_a_decided_race() {
        let q = "(declare-fun x () Int)\n(assert (< x 0))\n(assert (> x 0))\n";
        let endless = pending(|| {
            loop {
                crate::deadline::check();
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        let accept = |_: &mut Session| Ok(Judgement::<()>::Accept(()));
        let started = Instant::now();
        let deadline = started + Duration::from_secs(60);
        let outcome = race(&[endless, contender(q, true)], accept, 1, deadline);
        assert!(matches!(outcome, RaceOutcome::Unsat { .. }), "{outcome:?}");
        assert!(started.elapsed() < Duration::from_secs(30));
    }

    /// A query that cannot be built is left out, with its reason.
    #[test]
    fn a_query_that_cannot_be_built_is_left_out() {
        match run(pending(|| Err("too large".into()))) {
            RaceOutcome::Undecided(why) => {
                assert!(
                    matches!(&why[0].2, Undecided::LeftOut(r) if r == "too large"),
                    "{why:?}"
                )
            }
            o => panic!("{o:?}"),
        }
    }

    /// The `unsat` of a strengthened (bounded) query must never become a
    /// proof; the same query with `refutes` is one.
    #[test]
    fn only_a_refuting_query_proves_unsat() {
        let q = "(declare-fun x () Int)\n(assert (< x 0))\n(assert (> x 0))\n";
        assert!(matches!(run(contender(q, true)), RaceOutcome::Unsat { .. }));
        match run(contender(q, false)) {
            RaceOutcome::Undecided(why) => {
                assert!(matches!(&why[0].2, Undecided::Solver(r) if r.contains("proves nothing")))
            }
            o => panic!("a bounded unsat decided: {o:?}"),
        }
    }

    /// A late contender does not start within its head start while the
    /// head works, and starts as soon as the head ends undecided.
    #[test]
    fn a_late_contender_waits_for_the_head_to_end_undecided() {
        use std::sync::Mutex;
        let unsat = "(declare-fun x () Int)\n(assert (< x 0))\n(assert (> x 0))\n";
        let late = |built: Arc<Mutex<Option<Instant>>>| {
            let mut c = pending(move || {
                *built.lock().unwrap() = Some(Instant::now());
                Ok(super::super::query::Query {
                    variant: super::super::query::Variant::Unfolded(25),
                    text: unsat.into(),
                })
            });
            c.late = true;
            c
        };
        let accept = |_: &mut Session| Ok(Judgement::<()>::Accept(()));
        let deadline = || Instant::now() + Duration::from_secs(20);
        // The head proves it: the late query is not built before the head
        // start is over (if the head takes that long), most often never.
        let built = Arc::new(Mutex::new(None));
        let started = Instant::now();
        let contenders = [late(built.clone()), contender(unsat, true)];
        let outcome = race(&contenders, accept, 1, deadline());
        assert!(matches!(outcome, RaceOutcome::Unsat { .. }), "{outcome:?}");
        if let Some(at) = *built.lock().unwrap() {
            assert!(at >= started + HEAD_START, "built after {:?}", at - started);
        }
        // The head cannot build its query: the late one starts at once.
        let built = Arc::new(Mutex::new(None));
        let started = Instant::now();
        let contenders = [late(built.clone()), pending(|| Err("too large".into()))];
        let outcome = race(&contenders, accept, 1, deadline());
        assert!(matches!(outcome, RaceOutcome::Unsat { .. }), "{outcome:?}");
        let at = built.lock().unwrap().expect("the late query was built");
        assert!(at < started + HEAD_START, "built after {:?}", at - started);
    }
}
