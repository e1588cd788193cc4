//! The race: several (query, solver) contenders run in parallel; the first
//! definite answer wins and the others are killed.
//!
//! A definite answer is `unsat`, or `sat` with a model the caller's judge
//! accepts (for `apc check`: a witness the interpreter replays to the
//! target). A model the judge rejects is blocked and the contender asks
//! again, a bounded number of times. The race knows nothing of programs:
//! the judge does.

use super::profile::Profile;
use super::query::{DumpName, PendingQuery};
use super::session::{Cancel, CheckResult, Session};
use std::sync::{Arc, mpsc};
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

/// When the late contenders of a race may start.
struct LateStart {
    at: Instant,
    /// Set once a contender of the head ends undecided (a core is free).
    released: std::sync::Mutex<bool>,
    changed: std::sync::Condvar,
}

impl LateStart {
    fn new(contenders: &[Contender<'_>]) -> LateStart {
        LateStart {
            at: Instant::now() + HEAD_START,
            // With no head, nothing to wait for.
            released: std::sync::Mutex::new(contenders.iter().all(|c| c.late)),
            changed: std::sync::Condvar::new(),
        }
    }

    fn release(&self) {
        *self.released.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.changed.notify_all();
    }

    /// Waits for the late start; `false` if the race ended meanwhile.
    fn wait(&self, cancel: &Cancel) -> bool {
        let mut released = self.released.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if cancel.is_cancelled() || crate::deadline::stop_requested() {
                return false;
            }
            let now = Instant::now();
            if *released || now >= self.at {
                return true;
            }
            let poll = (self.at - now).min(crate::deadline::POLL);
            released = self
                .changed
                .wait_timeout(released, poll)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl Contender<'_> {
    /// What the query is, e.g. `nc-unfolded:k=25`.
    pub fn method(&self) -> String {
        self.query.variant.method()
    }
}

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
        method: String,
        solver: String,
    },
    Accepted {
        method: String,
        solver: String,
        witness: W,
    },
    /// Every contender finished without a definite answer: their reasons.
    Undecided(Vec<(String, String, Undecided)>),
    /// The deadline passed first; what had ended undecided by then.
    Timeout(Vec<(String, String, Undecided)>),
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
    Undecided(String, String, Undecided),
}

/// Runs the contenders until one is definite, all are undecided, or the
/// deadline. `judge` gets the session after `sat` (to ask for values).
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
    let cancel = Cancel::new();
    let (tx, rx) = mpsc::channel::<Message<W>>();
    // The race's own switch ends the losers' work that no solver does
    // (building their queries, replays); a portfolio's switch, which may
    // end the race early, throws it too.
    let race_stop = crate::deadline::Stop::nested();
    let stop = Some(race_stop.clone());
    let late_start = LateStart::new(contenders);
    std::thread::scope(|scope| {
        for c in contenders {
            let tx = tx.clone();
            let cancel = cancel.clone();
            let stop = stop.clone();
            let judge = &judge;
            let late_start = &late_start;
            // The judge builds witnesses and prints terms recursively over
            // (bounded-height) terms: the analyses' big stack, not 2 MiB.
            let contender = std::thread::Builder::new().stack_size(256 << 20);
            // A contender that cannot start drops its sender: undecided.
            let _ = contender.spawn_scoped(scope, move || {
                // The judge's replays run within the race's deadline.
                let _ = crate::deadline::run_in(deadline, stop, || {
                    let head = !c.late;
                    if !head && !late_start.wait(&cancel) {
                        return;
                    }
                    // Run the chain until a stage is definite or the last ends.
                    let mut c = c;
                    let mut no_witness = None;
                    let msg = loop {
                        let m = run_contender(c, judge, max_models, &cancel);
                        match (&m, &c.then) {
                            (Message::Undecided(_, _, u), Some(next)) if !cancel.is_cancelled() => {
                                if matches!(u, Undecided::NoWitness(_)) {
                                    no_witness = Some(m);
                                }
                                c = next;
                            }
                            _ => break m,
                        }
                    };
                    // A satisfiable stage without a witness says more than a
                    // later stage that gave up.
                    let msg = match (msg, no_witness) {
                        (Message::Undecided(_, _, Undecided::Solver(_)), Some(nw)) => nw,
                        (m, _) => m,
                    };
                    if head && !matches!(msg, Message::Definite(_)) {
                        late_start.release();
                    }
                    let _ = tx.send(msg);
                });
            });
        }
        drop(tx);
        let mut undecided = Vec::new();
        let outcome = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left.clamp(Duration::from_millis(1), crate::deadline::POLL)) {
                Ok(Message::Definite(o)) => break o,
                Ok(Message::Undecided(m, s, u)) => undecided.push((m, s, u)),
                // Out of time, even if every contender is gone (one stopped
                // while building its query sends nothing).
                Err(_) if Instant::now() >= deadline || crate::deadline::stop_requested() => {
                    break RaceOutcome::Timeout(std::mem::take(&mut undecided));
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    break RaceOutcome::Undecided(std::mem::take(&mut undecided));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
        };
        // Kill the losers (and everything, on timeout); the scope then
        // joins their threads, which see end of file at once or unwind
        // from their query's build.
        race_stop.stop();
        cancel.cancel();
        // Wakes the late contenders still waiting, to see the race is over.
        late_start.release();
        outcome
    })
}

fn run_contender<W, J>(
    c: &Contender<'_>,
    judge: &J,
    max_models: usize,
    cancel: &Cancel,
) -> Message<W>
where
    J: Fn(&mut Session) -> Result<Judgement<W>, String>,
{
    let undecided = |u: Undecided| Message::Undecided(c.method(), c.profile.name.clone(), u);
    let query = match c.query.get() {
        Ok(q) => q,
        Err(why) => return undecided(Undecided::LeftOut(why.to_string())),
    };
    let mut session = match Session::start(&c.profile, cancel) {
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
            CheckResult::Unsat if attempt > 0 => {
                return undecided(Undecided::NoWitness(last_miss));
            }
            CheckResult::Unsat if !c.query.variant.refutes() => {
                return undecided(Undecided::Solver(
                    "unsat within its bound, which proves nothing".into(),
                ));
            }
            CheckResult::Unsat => {
                return Message::Definite(RaceOutcome::Unsat {
                    method: c.method(),
                    solver: c.profile.name.clone(),
                });
            }
            CheckResult::Unknown(why) => {
                // After a rejected model, `unknown` still means "sat, no witness".
                return undecided(if attempt == 0 {
                    Undecided::Solver(why)
                } else {
                    Undecided::NoWitness(last_miss)
                });
            }
            CheckResult::Sat => match judge(&mut session) {
                Ok(Judgement::Accept(w)) => {
                    return Message::Definite(RaceOutcome::Accepted {
                        method: c.method(),
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
