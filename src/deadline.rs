//! The deadline of the work in progress on this thread: one clock that
//! every phase of a target's work checks (building the condition, loop
//! summaries, their helper queries, unfolding, simplification, printing,
//! solving), so that `--timeout` bounds everything a target costs.
//!
//! A phase names itself with [`phase`] (a guard: the name holds while it
//! lives); the code it runs, shared code included (substitution,
//! simplification, printing), calls [`check`] at its steps, or [`tick`] in
//! inner loops. Past the deadline they unwind with a [`Timeout`] naming
//! the current phase, which the caller that set the deadline catches
//! ([`run`]) and turns into `unknown (timeout: <phase>)`. Unwinding, rather than returning a weaker result,
//! matters: a salsa query cut short caches nothing, so a later target with
//! time to spare computes the full result instead of reusing a truncated
//! one. The payload is raised with `resume_unwind`, which skips the panic
//! hook: a timeout is not a crash and prints nothing.
//!
//! Without a deadline (the default) every check passes.
//!
//! A [`Stop`] ends the work early, as if its deadline had passed: the
//! portfolio of `apc check` gives one to each engine racing on a target and
//! throws it when the first definite answer arrives. Work that spawns
//! threads hands the switch on ([`current_stop`], [`run_in`]), and work
//! that waits on a solver process polls it ([`stop_requested`]).

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

thread_local! {
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    static STOP: RefCell<Option<Stop>> = const { RefCell::new(None) };
    static PHASE: Cell<&'static str> = const { Cell::new("the analysis") };
    static TICKS: Cell<u32> = const { Cell::new(0) };
}

/// The current phase's name while it lives (the previous one after).
pub struct Phase {
    previous: &'static str,
}

impl Drop for Phase {
    fn drop(&mut self) {
        PHASE.with(|p| p.set(self.previous));
    }
}

/// Names the work that follows (until the guard is dropped), and checks
/// the deadline on entry.
#[must_use = "the phase lasts as long as the guard"]
pub fn phase(name: &'static str) -> Phase {
    let previous = PHASE.with(|p| p.replace(name));
    check();
    Phase { previous }
}

/// Why work stopped: the deadline passed during `phase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeout {
    pub phase: &'static str,
}

/// Runs `f` with `deadline` as this thread's deadline (the previous one
/// is restored afterwards); `Err` if a phase of `f` stopped at it. Any
/// other panic goes on unwinding.
pub fn run<T>(deadline: Instant, f: impl FnOnce() -> T) -> Result<T, Timeout> {
    let previous = DEADLINE.with(|d| d.replace(Some(deadline)));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    DEADLINE.with(|d| d.set(previous));
    match outcome {
        Ok(v) => Ok(v),
        Err(payload) => match payload.downcast::<Timeout>() {
            Ok(t) => Err(*t),
            Err(other) => std::panic::resume_unwind(other),
        },
    }
}

/// A switch shared by the threads of one piece of work: once thrown, the
/// deadline of every thread that carries it counts as passed.
#[derive(Clone, Debug, Default)]
pub struct Stop(Arc<StopInner>);

#[derive(Debug, Default)]
struct StopInner {
    thrown: AtomicBool,
    /// A switch that also throws this one (a race inside a portfolio).
    parent: Option<Stop>,
}

impl Stop {
    pub fn new() -> Stop {
        Stop::default()
    }

    /// A switch thrown by itself or by this thread's current switch: for
    /// a race of its own inside work that may be stopped as a whole.
    pub fn nested() -> Stop {
        Stop(Arc::new(StopInner {
            thrown: AtomicBool::new(false),
            parent: current_stop(),
        }))
    }

    /// Ends the work of every thread that carries this switch.
    pub fn stop(&self) {
        self.0.thrown.store(true, Ordering::SeqCst);
    }

    pub fn is_stopped(&self) -> bool {
        self.0.thrown.load(Ordering::SeqCst) || self.0.parent.as_ref().is_some_and(Stop::is_stopped)
    }
}

/// [`run`] with `stop` (if any) as this thread's switch as well; the
/// previous switch is restored afterwards. Threads spawned by work under a
/// deadline use it to carry on their parent's switch.
pub fn run_in<T>(
    deadline: Instant,
    stop: Option<Stop>,
    f: impl FnOnce() -> T,
) -> Result<T, Timeout> {
    let previous = STOP.with(|s| s.replace(stop));
    let outcome = run(deadline, f);
    STOP.with(|s| s.replace(previous));
    outcome
}

/// This thread's switch, to hand on to the threads it spawns.
pub fn current_stop() -> Option<Stop> {
    STOP.with(|s| s.borrow().clone())
}

/// How often work that waits (for a solver, another thread) looks at its
/// switch and the clock. The portfolio's answer waits for its losers to
/// end: at 20 ms, the Horn clauses' and the executor's waits held up
/// MatrIR's verdict by up to 27 ms after it was found.
pub const POLL: Duration = Duration::from_millis(2);

/// Whether this thread's switch was thrown (the work should end now).
pub fn stop_requested() -> bool {
    STOP.with(|s| s.borrow().as_ref().is_some_and(Stop::is_stopped))
}

/// This thread's deadline, if one is set.
pub fn current() -> Option<Instant> {
    DEADLINE.with(Cell::get)
}

/// The time left before the deadline (`None`: no deadline).
pub fn remaining() -> Option<Duration> {
    current().map(|d| d.saturating_duration_since(Instant::now()))
}

/// Whether the deadline has passed (or the switch was thrown).
pub fn passed() -> bool {
    current().is_some_and(|d| Instant::now() >= d) || stop_requested()
}

/// Stops the work (unwinds with [`Timeout`]) if the deadline has passed.
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

/// The payload of an unwinding, read as a timeout.
pub fn timeout_of(payload: &(dyn std::any::Any + Send)) -> Option<Timeout> {
    payload.downcast_ref::<Timeout>().copied()
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
        // Restored: no deadline outside `run`.
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
        let stop = Stop::new();
        let worker = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                run_in(later, Some(stop), || {
                    let _p = phase("waiting");
                    loop {
                        check();
                        std::thread::sleep(Duration::from_millis(1));
                    }
                })
            })
        };
        assert!(!stop_requested(), "this thread carries no switch");
        stop.stop();
        let r: Result<(), Timeout> = worker.join().unwrap();
        assert_eq!(r, Err(Timeout { phase: "waiting" }));
        // Without the switch, the same deadline lets the work go on.
        assert_eq!(run_in(later, None, || 3), Ok(3));
    }
}
