//! The one way work stops: a [`Stop`] token that carries the deadline and
//! a switch, polled by every engine and by the solver layer; and the one
//! race, "the first definite answer wins, the others are stopped"
//! ([`race`]).
//!
//! A token is installed on a thread for a piece of work ([`Stop::run`]).
//! A phase names itself with [`phase`] (a guard: the name holds while it
//! lives); the code it runs, shared code included (substitution,
//! simplification, printing), calls [`check`] at its steps, or [`tick`] in
//! inner loops. Once the token is stopped (its deadline passed, or its
//! switch, or a parent's, thrown) they unwind with a [`Timeout`] naming the
//! current phase, which [`Stop::run`] catches and returns as an `Err`.
//!
//! Unwinding rather than returning a weaker result matters: a salsa query
//! cut short caches nothing, so a later target with time to spare computes
//! the full result instead of reusing a truncated one. The unwinding is
//! caught where the token was installed, and nowhere else; salsa's own
//! cancellation (a thread waiting on a result another thread abandoned) is
//! caught in the same place ([`Ended::Cancelled`]). The payload is raised
//! with `resume_unwind`, which skips the panic hook: a timeout is not a
//! crash and prints nothing.
//!
//! Without a token (the default) every check passes.
//!
//! A token also counts the solver work done under it ([`SolverUse`]): the
//! solver layer adds each check and each byte it sends to the token of the
//! work that asked, and to that token's ancestors, so that a target's
//! token holds what the target cost, in a measure that does not depend on
//! the machine's speed.

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, mpsc};
use std::time::{Duration, Instant};

/// The stack of every thread that runs analyses: they recurse over
/// (bounded) term and expression heights, deeper than 2 MiB allows.
pub const ANALYSIS_STACK: usize = 256 << 20;

/// A thread builder with the analyses' stack ([`ANALYSIS_STACK`]).
pub fn analysis_thread() -> std::thread::Builder {
    std::thread::Builder::new().stack_size(ANALYSIS_STACK)
}

thread_local! {
    static STOP: RefCell<Option<Stop>> = const { RefCell::new(None) };
    static PHASE: Cell<&'static str> = const { Cell::new("the analysis") };
    static TICKS: Cell<u32> = const { Cell::new(0) };
    /// The engine this thread works for, and when its current phase
    /// began (for [`PhaseTimes`]).
    static ENGINE: Cell<&'static str> = const { Cell::new("apc") };
    static SINCE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// The cancellation token of a piece of work: a deadline (or none) and a
/// switch, and the token of the work it is part of. It counts as stopped
/// once its deadline has passed or its switch, or an ancestor's, is
/// thrown. Clones share the switch.
#[derive(Clone, Debug, Default)]
pub struct Stop(Arc<StopInner>);

#[derive(Debug, Default)]
struct StopInner {
    thrown: AtomicBool,
    /// Solver checks asked and SMT-LIB bytes sent under this token (its
    /// children's included).
    checks: AtomicU64,
    bytes: AtomicU64,
    /// The earliest of its own deadline and its ancestors'.
    deadline: Option<Instant>,
    /// Where the time of the work under it went, if this token keeps it
    /// (a target's does): its descendants' threads add to the nearest.
    phase_times: Option<Mutex<PhaseTimes>>,
    parent: Option<Stop>,
}

impl Stop {
    /// A token of its own: no deadline, no parent.
    pub fn new() -> Stop {
        Stop::default()
    }

    /// A token of its own that stops at `deadline`.
    pub fn until(deadline: Instant) -> Stop {
        Stop::new().child(Some(deadline))
    }

    /// [`Stop::until`], keeping the [`PhaseTimes`] of the work under it.
    pub fn until_keeping_phase_times(deadline: Instant) -> Stop {
        Stop(Arc::new(StopInner {
            deadline: Some(deadline),
            phase_times: Some(Mutex::default()),
            ..StopInner::default()
        }))
    }

    /// [`Stop::child`], keeping the [`PhaseTimes`] of the work under it.
    pub fn child_keeping_phase_times(&self, deadline: Instant) -> Stop {
        let mut child = self.child(Some(deadline));
        if let Some(inner) = Arc::get_mut(&mut child.0) {
            inner.phase_times = Some(Mutex::default());
        }
        child
    }

    /// Where the time of the work under this token went so far (empty if
    /// it keeps none).
    pub fn phase_times(&self) -> PhaseTimes {
        (self.0.phase_times.as_ref())
            .map(|t| t.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .unwrap_or_default()
    }

    /// Adds `time` in `phase` of `engine` to the nearest token, this one
    /// or an ancestor, that keeps phase times.
    fn add_phase_time(&self, engine: &'static str, phase: &'static str, time: Duration) {
        if let Some(times) = self.lineage().find_map(|s| s.0.phase_times.as_ref()) {
            let mut times = times.lock().unwrap_or_else(|e| e.into_inner());
            *times.0.entry((engine, phase)).or_default() += time;
        }
    }

    /// This token, then its parent, and so on up.
    fn lineage(&self) -> impl Iterator<Item = &Stop> {
        std::iter::successors(Some(self), |s| s.0.parent.as_ref())
    }

    /// A token stopped with this one, by its own switch, or at `deadline`
    /// (never later than this one's).
    pub fn child(&self, deadline: Option<Instant>) -> Stop {
        let deadline = match (self.deadline(), deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Stop(Arc::new(StopInner {
            deadline,
            parent: Some(self.clone()),
            ..StopInner::default()
        }))
    }

    /// A child of this thread's token (a token of its own if there is
    /// none): for a race of its own inside work that may be stopped as a
    /// whole.
    pub fn nested() -> Stop {
        Stop::nested_until(None)
    }

    /// [`Stop::nested`] with a deadline of its own as well.
    pub fn nested_until(deadline: impl Into<Option<Instant>>) -> Stop {
        current_stop().unwrap_or_default().child(deadline.into())
    }

    /// Throws the switch: every thread that carries this token, or a child
    /// of it, stops at its next check.
    pub fn stop(&self) {
        self.0.thrown.store(true, Ordering::SeqCst);
    }

    /// Whether the switch of this token or of an ancestor was thrown (the
    /// deadline aside).
    pub fn is_thrown(&self) -> bool {
        self.0.thrown.load(Ordering::SeqCst) || self.0.parent.as_ref().is_some_and(Stop::is_thrown)
    }

    /// Whether the work should end now: thrown, or past the deadline.
    pub fn is_stopped(&self) -> bool {
        self.deadline().is_some_and(|d| Instant::now() >= d) || self.is_thrown()
    }

    pub fn deadline(&self) -> Option<Instant> {
        self.0.deadline
    }

    /// The solver work done under this token so far.
    pub fn solver_use(&self) -> SolverUse {
        SolverUse {
            checks: self.0.checks.load(Ordering::Relaxed),
            bytes: self.0.bytes.load(Ordering::Relaxed),
        }
    }

    /// Counts solver work on this token and its ancestors.
    pub fn add_solver_use(&self, used: SolverUse) {
        for stop in self.lineage() {
            stop.0.checks.fetch_add(used.checks, Ordering::Relaxed);
            stop.0.bytes.fetch_add(used.bytes, Ordering::Relaxed);
        }
    }

    /// The time left before the deadline (`None`: no deadline).
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline()
            .map(|d| d.saturating_duration_since(Instant::now()))
    }

    /// Runs `f` with this token as the thread's (the previous one is
    /// restored afterwards); `Err` if a phase of `f` stopped at it. Any
    /// other panic goes on unwinding.
    pub fn run<T>(&self, f: impl FnOnce() -> T) -> Result<T, Timeout> {
        account_phase_time();
        let previous = STOP.with(|s| s.replace(Some(self.clone())));
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        account_phase_time();
        STOP.with(|s| s.replace(previous));
        match outcome {
            Ok(v) => Ok(v),
            Err(payload) => match payload.downcast::<Timeout>() {
                Ok(t) => Err(*t),
                Err(other) => std::panic::resume_unwind(other),
            },
        }
    }

    /// [`Stop::run`], where every way `f` can end early becomes an
    /// [`Ended`]: the token stopped, salsa cancelled a result `f` waited
    /// for, or a defect (a panic). The one place those are caught.
    pub fn guard<T>(&self, f: impl FnOnce() -> T) -> Result<T, Ended> {
        let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run(f)));
        match attempt {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(timeout)) => Err(Ended::Stopped(timeout.phase)),
            Err(p) if p.downcast_ref::<salsa::Cancelled>().is_some() => Err(Ended::Cancelled),
            Err(p) => Err(Ended::Defect(panic_message(p.as_ref()))),
        }
    }
}

/// How guarded work ended without its result ([`Stop::guard`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Its token stopped during this phase.
    Stopped(&'static str),
    /// Another thread was computing a result it waited for, and abandoned
    /// it (salsa then cancels the waiters).
    Cancelled,
    /// A defect: the panic's message.
    Defect(String),
}

impl Ended {
    /// The reason a user reads.
    pub fn reason(&self) -> String {
        match self {
            Ended::Stopped(phase) => format!("timeout: {phase}"),
            Ended::Cancelled => {
                "stopped while waiting for a result another engine was computing".into()
            }
            Ended::Defect(msg) => {
                format!("internal error: {msg} (please report it with the program)")
            }
        }
    }
}

/// The message of a panic's payload (empty if it is not text).
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// The current phase's name while it lives (the previous one after).
pub struct Phase {
    previous: &'static str,
}

impl Drop for Phase {
    fn drop(&mut self) {
        account_phase_time();
        PHASE.with(|p| p.set(self.previous));
    }
}

/// Where the time of some work went: wall-clock time per (engine, phase),
/// each thread's time counted in its innermost phase. Threads that run at
/// once each count theirs, so the sum can exceed the work's wall-clock
/// time (`apc check --profile`, docs/cli.md).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseTimes(pub std::collections::BTreeMap<(&'static str, &'static str), Duration>);

/// Counts this thread's time since its phase last changed to that phase
/// (of its engine), on its token.
fn account_phase_time() {
    let now = Instant::now();
    let Some(since) = SINCE.with(|s| s.replace(Some(now))) else {
        return;
    };
    let (engine, phase) = (ENGINE.with(Cell::get), PHASE.with(Cell::get));
    STOP.with(|s| {
        if let Some(stop) = s.borrow().as_ref() {
            stop.add_phase_time(engine, phase, now - since);
        }
    });
}

/// The engine this thread works for while the guard lives (for
/// [`PhaseTimes`]).
#[must_use = "the engine is named as long as the guard lives"]
pub fn working_for(engine: &'static str) -> WorkingFor {
    account_phase_time();
    WorkingFor {
        previous: ENGINE.with(|e| e.replace(engine)),
    }
}

pub struct WorkingFor {
    previous: &'static str,
}

impl Drop for WorkingFor {
    fn drop(&mut self) {
        account_phase_time();
        ENGINE.with(|e| e.set(self.previous));
    }
}

/// Names the work that follows, like [`phase`], without checking the
/// token: for a wait that reports being cut short itself (a solver's
/// answer, a replay).
#[must_use = "the phase lasts as long as the guard"]
pub fn timed(name: &'static str) -> Phase {
    account_phase_time();
    Phase {
        previous: PHASE.with(|p| p.replace(name)),
    }
}

/// Names the work that follows (until the guard is dropped), and checks
/// the token on entry.
#[must_use = "the phase lasts as long as the guard"]
pub fn phase(name: &'static str) -> Phase {
    let guard = timed(name);
    check();
    guard
}

/// Why work stopped: its token stopped during `phase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeout {
    pub phase: &'static str,
}

/// Runs `f` under a child of this thread's token that stops at `deadline`
/// as well; `Err` if a phase of `f` stopped.
pub fn run<T>(deadline: Instant, f: impl FnOnce() -> T) -> Result<T, Timeout> {
    Stop::nested_until(deadline).run(f)
}

/// [`run`] with a deadline or none (then under this thread's token as it
/// is).
pub fn run_until<T>(deadline: Option<Instant>, f: impl FnOnce() -> T) -> Result<T, Timeout> {
    Stop::nested_until(deadline).run(f)
}

/// Solver work, counted in what does not depend on the machine: checks
/// asked (`check-sat`s) and bytes of SMT-LIB sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SolverUse {
    pub checks: u64,
    pub bytes: u64,
}

impl SolverUse {
    /// One `(check-sat)` sent alone.
    pub const CHECK: SolverUse = SolverUse {
        checks: 1,
        bytes: "(check-sat)\n".len() as u64,
    };

    /// A script's use: its bytes and its `check-sat`s.
    pub fn of_script(script: &str) -> SolverUse {
        SolverUse {
            checks: script.matches("(check-sat").count() as u64,
            bytes: script.len() as u64,
        }
    }

    /// An even share of `self` for each of `n` (the remainder to the first).
    pub fn shares(self, n: usize) -> impl Iterator<Item = SolverUse> {
        let n = n.max(1) as u64;
        (0..n).map(move |i| {
            let part = |total: u64| total / n + u64::from(i < total % n);
            SolverUse {
                checks: part(self.checks),
                bytes: part(self.bytes),
            }
        })
    }
}

impl std::ops::AddAssign for SolverUse {
    fn add_assign(&mut self, o: SolverUse) {
        self.checks += o.checks;
        self.bytes += o.bytes;
    }
}

impl std::iter::Sum for SolverUse {
    fn sum<I: Iterator<Item = SolverUse>>(uses: I) -> SolverUse {
        let mut total = SolverUse::default();
        uses.for_each(|u| total += u);
        total
    }
}

/// Counts solver work on this thread's token (nothing without one).
pub fn count_solver_use(used: SolverUse) {
    STOP.with(|s| {
        if let Some(stop) = s.borrow().as_ref() {
            stop.add_solver_use(used);
        }
    });
}

/// This thread's token, to hand on to the threads it spawns.
pub fn current_stop() -> Option<Stop> {
    STOP.with(|s| s.borrow().clone())
}

/// How often work that waits (for a solver, another thread) looks at its
/// token. The portfolio's answer waits for its losers to end: at 20 ms,
/// the Horn clauses' and the executor's waits held up MatrIR's verdict by
/// up to 27 ms after it was found.
pub const POLL: Duration = Duration::from_millis(2);

/// Whether this thread's token was stopped by a switch (the deadline
/// aside): the work should end now.
pub fn stop_requested() -> bool {
    STOP.with(|s| s.borrow().as_ref().is_some_and(Stop::is_thrown))
}

/// This thread's deadline, if its token has one.
pub fn current() -> Option<Instant> {
    STOP.with(|s| s.borrow().as_ref().and_then(Stop::deadline))
}

/// The time left before the deadline (`None`: no deadline).
pub fn remaining() -> Option<Duration> {
    current().map(|d| d.saturating_duration_since(Instant::now()))
}

/// Whether this thread's token is stopped.
pub fn passed() -> bool {
    STOP.with(|s| s.borrow().as_ref().is_some_and(Stop::is_stopped))
}

/// Stops the work (unwinds with [`Timeout`]) if the token is stopped.
pub fn check() {
    if passed() {
        stop();
    }
}

/// [`check`] for inner loops: reads the clock once every 256 calls.
pub fn tick() {
    let n = TICKS.with(|t| {
        let n = t.get().wrapping_add(1);
        t.set(n);
        n
    });
    if n.is_multiple_of(256) {
        check();
    }
}

/// Unwinds with [`Timeout`] for the current phase.
pub fn stop() -> ! {
    let phase = PHASE.with(Cell::get);
    std::panic::resume_unwind(Box::new(Timeout { phase }))
}

/// One contender of a [`race`]: work that gives an answer.
pub struct Entrant<'a, T> {
    /// Starts after the others' head start, or once a core is free: each
    /// entrant that ends without a definite answer lets the next late one
    /// start, in their order, so that no more run at once than started at
    /// once (docs/portfolio.md §2).
    pub late: bool,
    /// The engine it runs, for [`PhaseTimes`] (`None`: the engine of the
    /// thread that starts the race).
    pub engine: Option<&'static str>,
    pub run: Box<dyn FnOnce() -> T + Send + 'a>,
}

impl<'a, T> Entrant<'a, T> {
    pub fn now(run: impl FnOnce() -> T + Send + 'a) -> Self {
        Entrant {
            late: false,
            engine: None,
            run: Box::new(run),
        }
    }

    /// The entrant, running `engine`.
    pub fn running(self, engine: &'static str) -> Self {
        Entrant {
            engine: Some(engine),
            ..self
        }
    }

    pub fn late(run: impl FnOnce() -> T + Send + 'a) -> Self {
        Entrant {
            late: true,
            engine: None,
            run: Box::new(run),
        }
    }
}

/// How a race ended.
#[derive(Debug)]
pub enum Finish<T> {
    /// Entrant `i` gave this definite answer; the others were stopped.
    Definite(usize, T),
    /// Every entrant ended without one: their answers (entrant, answer),
    /// or how each ended early (an entrant that never started says
    /// nothing). `timed_out`: the race's token stopped first.
    Undecided {
        answers: Vec<(usize, Result<T, Ended>)>,
        timed_out: bool,
    },
}

/// The one race: every entrant on a thread of its own (with the analyses'
/// stack), under a child of this thread's token; the first answer that
/// `definite` accepts wins, and the child token is thrown, which stops the
/// others (their phases unwind, their solver processes are killed). Late
/// entrants wait their start (`starts`), or their turn: each entrant that
/// ends undecided lets the next late one start. Returns when every thread
/// has ended.
pub fn race<'a, T: Send>(
    entrants: Vec<Entrant<'a, T>>,
    definite: impl Fn(&T) -> bool + Sync,
    starts: impl Into<LateStarts>,
) -> Finish<T> {
    let stop = Stop::nested();
    let late = LateStart::new(starts.into());
    let (tx, rx) = mpsc::channel::<(usize, Result<T, Ended>)>();
    let engine = ENGINE.with(Cell::get);
    let turns = late_turns(&entrants);
    std::thread::scope(|scope| {
        for ((i, entrant), turn) in entrants.into_iter().enumerate().zip(turns) {
            let (tx, stop, late, definite) = (tx.clone(), stop.clone(), &late, &definite);
            let run = move || run_entrant(engine, (i, turn), entrant, &stop, late, definite, &tx);
            // A thread that cannot start sends nothing: undecided.
            drop(analysis_thread().spawn_scoped(scope, run));
        }
        drop(tx);
        // The scope then joins the losers' threads.
        finish(&rx, &stop, &late, &definite)
    })
}

/// [`race`] for entrants that own what they use: it returns as soon as one
/// is definite, and the losers, stopped, end on their own threads. A
/// loser in a step that reads its token seldom, or at a lower priority
/// behind busy solvers, held the winner's answer back: TwoLoops' condition
/// decides in 0.6 ms, and `apc check` reported 4–12 ms while the Horn
/// engine's thread wound down (docs/portfolio.md §3).
pub fn race_detached<T: Send + 'static>(
    entrants: Vec<Entrant<'static, T>>,
    definite: impl Fn(&T) -> bool + Send + Sync + 'static,
    starts: impl Into<LateStarts>,
) -> Finish<T> {
    let stop = Stop::nested();
    let late = Arc::new(LateStart::new(starts.into()));
    let definite = Arc::new(definite);
    let (tx, rx) = mpsc::channel::<(usize, Result<T, Ended>)>();
    let engine = ENGINE.with(Cell::get);
    let turns = late_turns(&entrants);
    let start = {
        let (tx, stop, late, definite) = (tx.clone(), stop.clone(), late.clone(), definite.clone());
        move |((i, entrant), turn): ((usize, Entrant<'static, T>), Option<usize>)| {
            let (tx, stop, late, definite) =
                (tx.clone(), stop.clone(), late.clone(), definite.clone());
            let run =
                move || run_entrant(engine, (i, turn), entrant, &stop, &late, &*definite, &tx);
            // A thread that cannot start sends nothing: undecided.
            drop(analysis_thread().spawn(run));
        }
    };
    let (later, now): (Vec<_>, Vec<_>) =
        (entrants.into_iter().enumerate().zip(turns)).partition(|(_, turn)| turn.is_some());
    {
        let _t = timed("starting threads");
        now.into_iter().for_each(&start);
    }
    // The late ones' threads start once they may run, one by one in their
    // order: on a race decided by its head, none (starting six threads
    // cost TwoLoops up to 2 ms).
    // `start` holds a sender: it must be gone (here, or with the thread
    // that starts the late ones) for an undecided race to see its end.
    if later.is_empty() {
        drop(start);
    } else {
        let (stop, late) = (stop.clone(), late.clone());
        drop(std::thread::Builder::new().spawn(move || {
            for entrant in later {
                if entrant.1.is_some_and(|turn| !late.wait(turn, &stop)) {
                    break;
                }
                start(entrant);
            }
        }));
    }
    drop(tx);
    finish(&rx, &stop, &late, &*definite)
}

/// Each entrant's turn among the late ones (`None`: it starts at once).
/// When all are late, none waits.
fn late_turns<T>(entrants: &[Entrant<'_, T>]) -> Vec<Option<usize>> {
    let all_late = entrants.iter().all(|e| e.late);
    let mut turns = 0;
    (entrants.iter())
        .map(|e| {
            (e.late && !all_late).then(|| {
                turns += 1;
                turns - 1
            })
        })
        .collect()
}

/// One entrant on its thread: waits for its turn if late, runs under the
/// race's token and sends its answer.
fn run_entrant<T>(
    parent_engine: &'static str,
    (i, turn): (usize, Option<usize>),
    entrant: Entrant<'_, T>,
    stop: &Stop,
    late: &LateStart,
    definite: &(impl Fn(&T) -> bool + ?Sized),
    tx: &mpsc::Sender<(usize, Result<T, Ended>)>,
) {
    let _engine = working_for(entrant.engine.unwrap_or(parent_engine));
    let waited = stop.run(|| {
        let _w = timed("waiting for a core");
        turn.is_none_or(|turn| late.wait(turn, stop))
    });
    if waited != Ok(true) {
        return;
    }
    let answer = stop.guard(entrant.run);
    // An entrant that ends undecided frees a core for the next late one.
    if !answer.as_ref().is_ok_and(definite) {
        late.pass_turn();
    }
    let _ = tx.send((i, answer));
}

/// The race's end: its answers until one is definite (then the losers
/// are stopped) or none can be.
fn finish<T>(
    rx: &mpsc::Receiver<(usize, Result<T, Ended>)>,
    stop: &Stop,
    late: &LateStart,
    definite: &(impl Fn(&T) -> bool + ?Sized),
) -> Finish<T> {
    let mut finish = {
        let _t = timed("waiting for its race");
        collect(rx, stop, definite)
    };
    stop.stop();
    late.open();
    if let Finish::Undecided { answers, .. } = &mut finish {
        // Out of time: the entrants stop at once and say how far they got.
        // One that cannot say so within the grace is left to end on its
        // own: on a loaded machine a starved thread held a verdict 0.1–1.5 s
        // past its `--timeout` (the soak test, two test threads beside
        // `--jobs 2` on two cores).
        let until = Instant::now() + STOPPING_GRACE;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(answer) => answers.push(answer),
                Err(_) => break,
            }
        }
    }
    finish
}

/// How long a race that ran out of time waits for its entrants to say how
/// far they got.
const STOPPING_GRACE: Duration = Duration::from_millis(100);

/// The race's answers until one is definite, all are in, or the token
/// stops.
fn collect<T>(
    rx: &mpsc::Receiver<(usize, Result<T, Ended>)>,
    stop: &Stop,
    definite: &(impl Fn(&T) -> bool + ?Sized),
) -> Finish<T> {
    let mut answers = Vec::new();
    loop {
        match rx.recv_timeout(POLL) {
            Ok((i, Ok(answer))) if definite(&answer) => return Finish::Definite(i, answer),
            Ok(answer) => answers.push(answer),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Finish::Undecided {
                    answers,
                    timed_out: stop.is_stopped(),
                };
            }
            // Out of time, even if some threads have not ended yet (one
            // stopped while building sends its `Ended` later, or nothing).
            Err(mpsc::RecvTimeoutError::Timeout) if stop.is_stopped() => {
                return Finish::Undecided {
                    answers,
                    timed_out: true,
                };
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

/// When the late entrants of a race may start: all of them once the head
/// start has passed or the race has ended, and before that one per turn
/// passed by an entrant that ended undecided (its core is free).
/// When a race's late entrants start: the first `after` the race began,
/// each next one `each` later (unless an undecided end gave it its turn
/// sooner).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LateStarts {
    pub after: Duration,
    pub each: Duration,
}

impl From<Duration> for LateStarts {
    /// Every late entrant at once, `after` the race began.
    fn from(after: Duration) -> LateStarts {
        LateStarts {
            after,
            each: Duration::ZERO,
        }
    }
}

struct LateStart {
    at: Instant,
    each: Duration,
    turns: Mutex<Turns>,
    changed: Condvar,
}

#[derive(Default)]
struct Turns {
    /// How many late entrants may start, in their order.
    given: usize,
    /// Every late entrant may start.
    open: bool,
}

impl LateStart {
    fn new(starts: LateStarts) -> LateStart {
        LateStart {
            at: Instant::now() + starts.after,
            each: starts.each,
            turns: Mutex::default(),
            changed: Condvar::new(),
        }
    }

    fn update(&self, change: impl FnOnce(&mut Turns)) {
        change(&mut self.turns.lock().unwrap_or_else(|e| e.into_inner()));
        self.changed.notify_all();
    }

    /// An entrant ended undecided: the next late one may start.
    fn pass_turn(&self) {
        self.update(|t| t.given += 1);
    }

    /// The race ended: no late entrant waits any more.
    fn open(&self) {
        self.update(|t| t.open = true);
    }

    /// Waits for late entrant `turn`'s start; `false` if the race ended
    /// meanwhile.
    fn wait(&self, turn: usize, stop: &Stop) -> bool {
        let mut turns = self.turns.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if stop.is_stopped() {
                return false;
            }
            let (now, at) = (Instant::now(), self.at + self.each * turn as u32);
            if turns.open || turn < turns.given || now >= at {
                return true;
            }
            let poll = (at - now).min(POLL);
            turns = (self.changed.wait_timeout(turns, poll))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// How long a search for all of a file's targets at once may go on: a
/// head start, and as much again per target found. It stops when finding
/// them costs more than checking them one by one would.
#[derive(Clone, Copy, Debug)]
pub struct Pace {
    pub head_start: Duration,
    pub per_found: Duration,
}

impl Pace {
    /// The time allowed from the start with `found` targets found.
    pub fn allowed(&self, found: usize) -> Duration {
        self.head_start + self.per_found * found as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_past_the_deadline_stops_the_work_and_nothing_else() {
        let past = Instant::now() - Duration::from_millis(1);
        let r = run(past, || {
            let _p = phase("building");
            1
        });
        assert_eq!(r, Err(Timeout { phase: "building" }));
        // Restored: no token outside `run`.
        check();
        assert_eq!(current(), None);
        let later = Instant::now() + Duration::from_secs(60);
        assert_eq!(
            run(later, || {
                let _p = phase("building");
                2
            }),
            Ok(2)
        );
        let other = std::panic::catch_unwind(|| run(later, || panic!("a bug")));
        assert!(other.is_err(), "other panics go on unwinding");
    }

    /// Time goes to the innermost phase of the engine a thread works for,
    /// counted on the nearest token that keeps phase times, from the
    /// threads of a race under it too.
    #[test]
    fn phase_times_go_to_the_innermost_phase_of_each_engine() {
        let target = Stop::until_keeping_phase_times(Instant::now() + Duration::from_secs(60));
        let nap = Duration::from_millis(20);
        let _ = target.run(|| {
            let _e = working_for("outer");
            let _p = phase("building");
            {
                let _q = timed("solving");
                std::thread::sleep(nap);
            }
            std::thread::sleep(nap);
            let inner = Entrant::now(move || std::thread::sleep(nap)).running("inner");
            race(vec![inner], |_| true, Duration::ZERO);
        });
        let times = target.phase_times().0;
        let at = |e, p| times.get(&(e, p)).copied().unwrap_or_default();
        assert!(at("outer", "solving") >= nap, "{times:?}");
        assert!(at("outer", "building") >= nap, "{times:?}");
        assert!(at("outer", "building") < 2 * nap + nap / 2, "{times:?}");
        assert!(at("outer", "waiting for its race") >= nap, "{times:?}");
        assert!(at("inner", "the analysis") >= nap, "{times:?}");
    }

    /// A detached race ends when every entrant has ended undecided, with
    /// or without late ones (a sender kept alive made it wait forever),
    /// and returns a definite answer without waiting for a slow loser.
    #[test]
    fn a_detached_race_ends_decided_or_not() {
        for late in [false, true] {
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                let entrants = (0..3)
                    .map(|i| {
                        let e = Entrant::now(move || i);
                        Entrant {
                            late: late && i > 0,
                            ..e
                        }
                    })
                    .collect();
                let _ = tx.send(race_detached(entrants, |_| false, Duration::from_millis(5)));
            });
            match rx.recv_timeout(Duration::from_secs(10)) {
                Ok(Finish::Undecided { answers, timed_out }) => {
                    assert_eq!(answers.len(), 3, "late: {late}");
                    assert!(!timed_out);
                }
                Ok(Finish::Definite(..)) => panic!("nothing was definite"),
                Err(_) => panic!("the race did not end (late: {late})"),
            }
        }
        let started = Instant::now();
        let slow = Entrant::now(|| {
            std::thread::sleep(Duration::from_secs(2));
            0
        });
        let quick = Entrant::now(|| 1);
        let finish = race_detached(vec![slow, quick], |&v| v == 1, Duration::ZERO);
        assert!(matches!(finish, Finish::Definite(1, 1)));
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "waited for the loser"
        );
    }

    #[test]
    fn ticks_read_the_clock_in_the_end() {
        let past = Instant::now() - Duration::from_millis(1);
        let r = run(past, || {
            let _p = PHASE.with(|p| p.replace("loop"));
            for _ in 0..1000 {
                tick();
            }
        });
        assert_eq!(r, Err(Timeout { phase: "loop" }));
    }

    #[test]
    fn a_thrown_switch_stops_the_work_of_every_thread_that_carries_it() {
        let later = Instant::now() + Duration::from_secs(60);
        let stop = Stop::until(later);
        let worker = {
            let child = stop.child(None);
            std::thread::spawn(move || {
                child.run(|| {
                    let _p = phase("waiting");
                    loop {
                        check();
                        std::thread::sleep(Duration::from_millis(1));
                    }
                })
            })
        };
        assert!(!stop_requested(), "this thread carries no token");
        stop.stop();
        let r: Result<(), Timeout> = worker.join().unwrap();
        assert_eq!(r, Err(Timeout { phase: "waiting" }));
        // A token of its own with the same deadline lets the work go on.
        assert_eq!(Stop::until(later).run(|| 3), Ok(3));
    }

    #[test]
    fn a_child_never_outlives_its_parent() {
        let soon = Instant::now() + Duration::from_secs(1);
        let later = soon + Duration::from_secs(60);
        let parent = Stop::until(soon);
        assert_eq!(parent.child(Some(later)).deadline(), Some(soon));
        assert_eq!(parent.child(None).deadline(), Some(soon));
        let earlier = Instant::now();
        assert_eq!(parent.child(Some(earlier)).deadline(), Some(earlier));
        assert!(parent.child(Some(earlier)).is_stopped());
        assert!(!parent.is_stopped());
    }

    #[test]
    fn the_first_definite_answer_wins_and_stops_the_others() {
        let started = Instant::now();
        let finish = Stop::until(started + Duration::from_secs(60))
            .run(|| {
                race(
                    vec![
                        Entrant::now(|| {
                            loop {
                                let _p = phase("spinning");
                                std::thread::sleep(Duration::from_millis(1));
                            }
                        }),
                        Entrant::now(|| 7),
                        Entrant::late(|| 8),
                    ],
                    |&n| n == 7,
                    Duration::from_secs(30),
                )
            })
            .unwrap();
        assert!(matches!(finish, Finish::Definite(1, 7)), "{finish:?}");
        // The spinning entrant was stopped, the late one never waited 30 s.
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    /// Before the head start passes, a late entrant starts only when an
    /// earlier one has ended undecided, one per ending and in their order:
    /// never more at once than started at once. Both races alike.
    #[test]
    fn late_entrants_take_turns_as_earlier_ones_end_undecided() {
        type Spans = Arc<Mutex<Vec<(usize, Instant, Instant)>>>;
        let nap = Duration::from_millis(30);
        let entrant = |spans: &Spans, i: usize, late: bool| {
            let spans = spans.clone();
            let run = move || {
                let start = Instant::now();
                std::thread::sleep(if i == 0 { Duration::ZERO } else { nap });
                spans.lock().unwrap().push((i, start, Instant::now()));
                i
            };
            if late {
                Entrant::late(run)
            } else {
                Entrant::now(run)
            }
        };
        for detached in [false, true] {
            let spans: Spans = Arc::default();
            let entrants: Vec<Entrant<'static, usize>> =
                (0..4).map(|i| entrant(&spans, i, i >= 1)).collect();
            let (never, head_start) = (|_: &usize| false, Duration::from_secs(30));
            let started = Instant::now();
            let finish = if detached {
                race_detached(entrants, never, head_start)
            } else {
                race(entrants, never, head_start)
            };
            let (answers, _) = undecided(finish);
            assert_eq!(answers.len(), 4, "detached: {detached}");
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "waited out the head start"
            );
            let mut spans = spans.lock().unwrap().clone();
            spans.sort_by_key(|(_, start, _)| *start);
            let order: Vec<usize> = spans.iter().map(|(i, ..)| *i).collect();
            assert_eq!(order, [0, 1, 2, 3], "detached: {detached}");
            for pair in spans.windows(2) {
                assert!(pair[1].1 >= pair[0].2, "overlap: {spans:?}");
            }
        }
    }

    /// Late entrants start one `each` after another, from `after`, while
    /// no entrant has ended undecided: the third late one waits for its
    /// own time, not the first's.
    #[test]
    fn late_entrants_start_one_stagger_apart() {
        let starts = LateStarts {
            after: Duration::from_millis(20),
            each: Duration::from_millis(60),
        };
        let began = Instant::now();
        let entrant = |i: usize, late: bool| {
            let run = move || {
                let at = began.elapsed();
                // Every entrant runs past the last start: none passes its
                // turn early by ending undecided.
                std::thread::sleep(Duration::from_millis(250));
                (i, at)
            };
            if late {
                Entrant::late(run)
            } else {
                Entrant::now(run)
            }
        };
        let entrants: Vec<Entrant<'static, (usize, Duration)>> =
            (0..4).map(|i| entrant(i, i >= 1)).collect();
        let (answers, _) = undecided(race_detached(entrants, |_| false, starts));
        let at = |i: usize| {
            let found = answers.iter().find(|(k, _)| *k == i);
            found.and_then(|(_, a)| a.as_ref().ok()).map(|(_, at)| *at)
        };
        for (turn, i) in (1..4).enumerate() {
            let due = starts.after + starts.each * turn as u32;
            let started = at(i).expect("every entrant answers");
            assert!(
                started >= due,
                "entrant {i} started at {started:?}, before {due:?}"
            );
        }
    }

    /// An undecided race's answers in the entrants' order, and whether it
    /// ran out of time.
    type Answers<T> = Vec<(usize, Result<T, Ended>)>;

    fn undecided<T: std::fmt::Debug>(finish: Finish<T>) -> (Answers<T>, bool) {
        let Finish::Undecided {
            mut answers,
            timed_out,
        } = finish
        else {
            panic!("{finish:?}");
        };
        answers.sort_by_key(|(i, _)| *i);
        (answers, timed_out)
    }

    #[test]
    fn undecided_answers_and_defects_are_each_entrants_reason() {
        let finish = race(
            vec![
                Entrant::now(|| 1),
                Entrant::now(|| panic!("a defect")),
                Entrant::late(|| 2),
            ],
            |_| false,
            Duration::from_secs(30),
        );
        let (answers, timed_out) = undecided(finish);
        assert!(!timed_out);
        assert_eq!(answers[0], (0, Ok(1)));
        assert_eq!(answers[1], (1, Err(Ended::Defect("a defect".into()))));
        // The late entrant started as soon as a head entrant ended.
        assert_eq!(answers[2], (2, Ok(2)));
    }

    #[test]
    fn out_of_time_every_started_entrant_says_where_it_stopped() {
        let soon = Instant::now() + Duration::from_millis(50);
        let spin = |name: &'static str| {
            move || loop {
                let _p = phase(name);
                std::thread::sleep(Duration::from_millis(1));
            }
        };
        let finish = Stop::until(soon)
            .run(|| {
                race(
                    vec![
                        Entrant::now(spin("building")),
                        Entrant::now(spin("solving")),
                    ],
                    |_: &()| true,
                    Duration::ZERO,
                )
            })
            .unwrap();
        let (answers, timed_out) = undecided(finish);
        assert!(timed_out);
        assert_eq!(
            answers,
            [
                (0, Err(Ended::Stopped("building"))),
                (1, Err(Ended::Stopped("solving")))
            ]
        );
    }
}
