//! Verdicts: from a target's necessary condition to `unreachable`,
//! `reachable` (with a replayed witness) or `unknown` (with a reason).
//!
//! For each target: φ̂ from the database, the queries (φ̂ with quantifiers,
//! φ̂^K, and a cheap φ̂^k with small k), a race of those queries on the
//! chosen solvers, and for each model a witness that the interpreter
//! replays. `reachable` is only ever said of a witness that hit the target.
//!
//! When the conditions leave a target undecided, the thesis's executor
//! (`explore`), guided to the target, with path subsumption and loop
//! summaries on, takes
//! the time that is left: a witness it finds was replayed, and a guided run
//! that explored every path to the target proves it unreachable.

mod model;
pub mod together;

pub use crate::db::{Target, targets};
pub use crate::nc::query::{DEFAULT_K, Mode};

use crate::chc;
use crate::db::{self, Database, SourceFile};
use crate::deadline;
use crate::interp::Witness;
use crate::nc::{self, Options};
use crate::smt::{
    self, Contender, DumpFailure, DumpName, PendingQuery, Profile, RaceOutcome, Undecided,
};
use crate::syntax::LineIndex;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use model::InputModel;

#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The solvers to race (located).
    pub solvers: Vec<Profile>,
    pub mode: Mode,
    pub k: u32,
    /// Wall-clock limit per target, necessary condition included.
    pub timeout: Duration,
    pub jobs: usize,
    pub dump_queries: Option<PathBuf>,
    /// The first dump that could not be written (the run's error).
    pub dump_failure: DumpFailure,
    pub counter_inference: bool,
    /// How many models a query may give before `nc-sat-no-witness`.
    pub max_models: usize,
    /// Simplify the condition (e-graph) before encoding it.
    pub simplify: bool,
    /// Which engine decides.
    pub engine: Engine,
    /// The portfolio starts the engines after its head this long after
    /// the head's (if those have not decided by then).
    pub portfolio_delay: Duration,
    /// How many of the portfolio's first engines start at once.
    pub portfolio_head: usize,
    /// The engines of the portfolio, in order.
    pub portfolio: Vec<Engine>,
    /// Run the portfolio's engines at their CPU priorities
    /// ([`Engine::portfolio_niceness`]), not all alike.
    pub portfolio_priorities: bool,
    /// The conditions share the cores with another engine started at the
    /// same time (the portfolio's head): their race then starts φ̂ alone,
    /// and the deepening chain waits its head start as φ̂^K does
    /// (measured: docs/portfolio.md §3). Set by the portfolio.
    pub sharing_cores: bool,
    /// With the portfolio: before the targets one by one, ask about all of
    /// a program's targets at once (`together::decide`), within one
    /// `timeout`.
    pub all_targets_first: bool,
}

/// The engine that decides a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The necessary conditions' race (finds witnesses, proves).
    Nc,
    /// Horn clauses with a checked invariant (proves only).
    Chc,
    /// The executor alone, guided to the target with path subsumption.
    Explore,
    /// The conditions, then the executor on a target they leave undecided
    /// (for the time left).
    NcThenExplore,
    /// The executor as a witness search for the target: no condition, tree
    /// search with lattice merging (docs/portfolio.md).
    ExploreSearch,
    /// The portfolio: the conditions, the Horn clauses and the executor on
    /// parallel threads; the first definite answer wins and stops the
    /// others (`apc check`'s default; docs/portfolio.md).
    All,
    /// Compositional symbolic execution alone (`docs/compositional-se.md`).
    Compositional,
}

#[derive(Clone, Debug)]
pub enum Verdict {
    Unreachable,
    Reachable(Witness),
    Unknown(String),
}

impl Engine {
    /// The niceness of the engine's thread and solver processes in the
    /// portfolio: on few cores the engines compete for them, and the ones
    /// that decide most targets soonest, or that a user waits for
    /// (witnesses), go first (measured: docs/portfolio.md §3).
    pub fn portfolio_niceness(self) -> i32 {
        match self {
            Engine::Nc | Engine::ExploreSearch => 0,
            Engine::Explore | Engine::Compositional => 5,
            Engine::Chc => 10,
            Engine::NcThenExplore | Engine::All => 0,
        }
    }

    /// The name the reports use (`nc`, `chc`, `explore`, …).
    pub fn short_name(self) -> &'static str {
        match self {
            Engine::Nc => "nc",
            Engine::Chc => "chc",
            Engine::Explore => "explore",
            Engine::NcThenExplore => "nc+explore",
            Engine::ExploreSearch => "explore-search",
            Engine::Compositional => "compositional",
            Engine::All => "all",
        }
    }
}

impl Verdict {
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Unreachable => "unreachable",
            Verdict::Reachable(_) => "reachable",
            Verdict::Unknown(_) => "unknown",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Report {
    pub target: Target,
    pub verdict: Verdict,
    /// The query that decided, e.g. `nc-unfolded:k=25`.
    pub method: Option<String>,
    /// The engine that decided: `nc`, `chc` or `explore`.
    pub engine: Option<&'static str>,
    /// The solver that decided.
    pub solver: Option<String>,
    pub time: Duration,
}

/// Checks the targets, `opts.jobs` at a time; `done` is told of each
/// report as it comes (for progress). Reports are in the targets' order.
pub fn check_all(
    db: &Database,
    file: SourceFile,
    targets: &[Target],
    opts: &CheckOptions,
    done: &(dyn Fn(&Report) + Sync),
) -> Vec<Report> {
    let subject = Subject {
        db: db.clone(),
        file,
        targets: targets.to_vec(),
    };
    let mut reports = check_batch(&[subject], opts, done, &|_, _| {});
    reports.pop().unwrap_or_default()
}

/// One program of a batch and the targets to check in it.
pub struct Subject {
    pub db: Database,
    pub file: SourceFile,
    pub targets: Vec<Target>,
}

/// Checks the targets of several programs, `opts.jobs` at a time over all
/// of them. `done` is told of each report as it comes; `file_done` of
/// each program's reports (in its targets' order) once its last target is
/// checked, from the thread that checked it. Returns the reports per
/// program.
pub fn check_batch(
    subjects: &[Subject],
    opts: &CheckOptions,
    done: &(dyn Fn(&Report) + Sync),
    file_done: &(dyn Fn(usize, &[Report]) + Sync),
) -> Vec<Vec<Report>> {
    start_helper_ahead(opts);
    let decided: Vec<Vec<Option<Report>>> =
        subjects.iter().map(|s| decided_together(s, opts)).collect();
    let work: Vec<(usize, usize)> = (decided.iter().enumerate())
        .flat_map(|(f, slot)| {
            (0..slot.len())
                .filter(|&i| slot[i].is_none())
                .map(move |i| (f, i))
        })
        .collect();
    for (f, slot) in decided.iter().enumerate() {
        slot.iter().flatten().for_each(done);
        if slot.iter().all(Option::is_some) {
            let reports: Vec<Report> = slot.iter().flatten().cloned().collect();
            file_done(f, &reports);
        }
    }
    let slots: Vec<Mutex<Vec<Option<Report>>>> = decided.into_iter().map(Mutex::new).collect();
    // A database handle is not shared between threads: each worker gets
    // its own clone of every program's.
    let plan: Vec<(SourceFile, &[Target])> = subjects
        .iter()
        .map(|s| (s.file, s.targets.as_slice()))
        .collect();
    let next = AtomicUsize::new(0);
    let jobs = opts.jobs.clamp(1, work.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let dbs: Vec<Database> = subjects.iter().map(|s| s.db.clone()).collect();
            let (next, work, slots, plan) = (&next, &work, &slots, &plan);
            // The engine recurses over (bounded) term heights: a big stack.
            std::thread::Builder::new()
                .stack_size(256 << 20)
                .spawn_scoped(scope, move || {
                    while let Some(&(f, i)) = work.get(next.fetch_add(1, Ordering::SeqCst)) {
                        let (file, targets) = plan[f];
                        let r = check_guarded(&dbs[f], file, &targets[i], opts);
                        done(&r);
                        let mut slot = slots[f].lock().unwrap_or_else(|e| e.into_inner());
                        slot[i] = Some(r);
                        if slot.iter().all(Option::is_some) {
                            let reports: Vec<Report> = slot.iter().flatten().cloned().collect();
                            file_done(f, &reports);
                        }
                    }
                })
                .expect("spawning a worker thread");
        }
    });
    slots
        .into_iter()
        .map(|m| {
            let slot = m.into_inner().unwrap_or_else(|e| e.into_inner());
            slot.into_iter()
                .map(|r| r.expect("every target was checked"))
                .collect()
        })
        .collect()
}

/// With `opts.all_targets_first` and the portfolio: the reports of the
/// targets that all of a program's targets at once decide (those the value
/// facts do not prove), within one `opts.timeout`, each with that time;
/// `None` for the others (docs/portfolio.md §4).
fn decided_together(s: &Subject, opts: &CheckOptions) -> Vec<Option<Report>> {
    let none = vec![None; s.targets.len()];
    if !opts.all_targets_first || opts.engine != Engine::All {
        return none;
    }
    // A defect here leaves the targets to be checked (and reported) one
    // by one.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decide_together(s, opts)))
        .unwrap_or(none)
}

fn decide_together(s: &Subject, opts: &CheckOptions) -> Vec<Option<Report>> {
    let mut slots = vec![None; s.targets.len()];
    let start = Instant::now();
    let open: Vec<usize> = (0..s.targets.len())
        .filter(|&i| db::proved_by_value_facts(&s.db, s.file, &s.targets[i]).is_none())
        .collect();
    if open.len() < 2 {
        return slots;
    }
    let targets: Vec<Target> = open.iter().map(|&i| s.targets[i].clone()).collect();
    let answer = together::decide(&s.db, s.file, &targets, opts, start + opts.timeout);
    let report = |target: &Target, verdict: Verdict, method: &str| Report {
        target: target.clone(),
        verdict,
        method: Some(method.to_string()),
        engine: Some(engine_of(method)),
        solver: None,
        time: start.elapsed(),
    };
    match answer {
        together::Together::Unreachable(method) => {
            for i in open {
                slots[i] = Some(report(&s.targets[i], Verdict::Unreachable, &method));
            }
        }
        together::Together::Reachable(t, w, method) => {
            if let Some(j) = targets.iter().position(|x| *x == t) {
                slots[open[j]] = Some(report(&t, Verdict::Reachable(w), &method));
            }
        }
        together::Together::Undecided(_) => {}
    }
    slots
}

/// [`check_target`], where a defect in one target's analysis becomes that
/// target's reason instead of taking the others down.
fn check_guarded(db: &Database, file: SourceFile, t: &Target, opts: &CheckOptions) -> Report {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check_target(db, file, t, opts)
    }))
    .unwrap_or_else(|e| internal_error(t, e.as_ref()))
}

fn internal_error(t: &Target, panic: &(dyn std::any::Any + Send)) -> Report {
    let msg = crate::interp::panic_message(panic);
    Report {
        target: t.clone(),
        verdict: Verdict::Unknown(format!(
            "internal error: {msg} (please report it with the program)"
        )),
        method: None,
        engine: None,
        solver: None,
        time: Duration::ZERO,
    }
}

/// How many models a query may give by default before `nc-sat-no-witness`.
pub const DEFAULT_MAX_MODELS: usize = 5;

impl CheckOptions {
    /// `apc check`'s defaults on these solvers: the race with K = 25, one
    /// job, no dumps, counter inference, 5 models, simplification.
    pub fn new(solvers: Vec<Profile>, timeout: Duration) -> CheckOptions {
        CheckOptions {
            solvers,
            mode: Mode::Race,
            k: DEFAULT_K,
            timeout,
            jobs: 1,
            dump_queries: None,
            dump_failure: DumpFailure::default(),
            counter_inference: true,
            max_models: DEFAULT_MAX_MODELS,
            simplify: true,
            engine: Engine::Nc,
            portfolio_delay: DEFAULT_PORTFOLIO_DELAY,
            portfolio_head: DEFAULT_PORTFOLIO_HEAD,
            portfolio: DEFAULT_PORTFOLIO.to_vec(),
            portfolio_priorities: true,
            sharing_cores: false,
            all_targets_first: false,
        }
    }
}

/// Starts the conditions' helper solver while the programs are read, when
/// an engine that builds conditions will ask it (docs/portfolio.md §3,
/// "Solver starts and stops").
fn start_helper_ahead(opts: &CheckOptions) {
    let builds_conditions = !matches!(
        opts.engine,
        Engine::Chc | Engine::ExploreSearch | Engine::Compositional
    );
    let nc = engine_options(opts);
    if let (true, Some(profile)) = (builds_conditions, &nc.helper) {
        crate::smt::Helper::start_ahead(profile, nc.solver_timeout);
    }
}

/// The engine options a check runs with (the key of its conditions in the
/// database).
pub fn engine_options(opts: &CheckOptions) -> Options {
    Options {
        counter_inference: opts.counter_inference,
        solver_timeout: opts.timeout.min(Duration::from_secs(10)),
        helper: opts.solvers.first().cloned(),
        ..Options::default()
    }
}

/// A verdict with the query and the solver that decided it.
type Decision = (Verdict, Option<String>, Option<String>);

/// Decides one target: its queries, raced on the solvers, each model
/// replayed, everything within `opts.timeout` (a phase past it ends the
/// target as `unknown (timeout: <phase>)`).
pub fn check_target(db: &Database, file: SourceFile, t: &Target, opts: &CheckOptions) -> Report {
    let start = Instant::now();
    let deadline = start + opts.timeout;
    let (verdict, method, solver) = loop {
        let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            deadline::run(deadline, || decide(db, file, t, opts, deadline))
        }));
        match attempt {
            Ok(Ok(decision)) => break decision,
            Ok(Err(timeout)) => break timed_out(timeout.phase),
            // Another target's thread was computing a result this one
            // waited for, and stopped at its own deadline (salsa then
            // cancels the waiters): compute it here, in this one's time.
            Err(p) if p.downcast_ref::<salsa::Cancelled>().is_some() => {
                if Instant::now() >= deadline {
                    break timed_out("waiting for a shared result");
                }
            }
            Err(p) => std::panic::resume_unwind(p),
        }
    };
    Report {
        target: t.clone(),
        verdict,
        engine: method.as_deref().map(engine_of),
        method,
        solver,
        time: start.elapsed(),
    }
}

/// The engine a decision's method names.
fn engine_of(method: &str) -> &'static str {
    if method == VALUE_FACTS {
        "facts"
    } else if method.starts_with("explore") {
        "explore"
    } else if method.starts_with("compositional") {
        "compositional"
    } else if method.starts_with("chc") {
        "chc"
    } else {
        "nc"
    }
}

fn timed_out(phase: &str) -> Decision {
    (Verdict::Unknown(format!("timeout: {phase}")), None, None)
}

fn decide(
    db: &Database,
    file: SourceFile,
    t: &Target,
    opts: &CheckOptions,
    deadline: Instant,
) -> Decision {
    let Some(prog) = db::program(db, file).as_ref() else {
        let why = "unsupported: the program has no main".to_string();
        return (Verdict::Unknown(why), None, None);
    };
    match opts.engine {
        Engine::All => match db::proved_by_value_facts(db, file, t) {
            Some(_) => (Verdict::Unreachable, Some(VALUE_FACTS.into()), None),
            None => decide_by_portfolio(db, file, t, opts, deadline),
        },
        Engine::Chc => decide_by_horn_clauses(db, file, prog, t, opts, deadline),
        Engine::ExploreSearch => decide_by_searching(db, file, t, opts, deadline),
        Engine::Compositional => decide_compositionally(db, file, t, opts, deadline),
        Engine::Explore => decide_by_exploring(db, file, t, opts, deadline, undecided_yet()),
        Engine::Nc => decide_by_conditions(db, file, &prog.body, t, opts, deadline),
        Engine::NcThenExplore => {
            let decision = decide_by_conditions(db, file, &prog.body, t, opts, deadline);
            match decision.0 {
                Verdict::Unknown(_) => decide_by_exploring(db, file, t, opts, deadline, decision),
                _ => decision,
            }
        }
    }
}

/// The method of a proof by the value facts (`ir::value_facts`), which
/// the portfolio asks before it starts any engine: they cost one pass over
/// the program for all its targets, and need no solver.
pub const VALUE_FACTS: &str = "value-facts";

/// No engine has said anything yet (an engine adds its reason to it).
fn undecided_yet() -> Decision {
    (Verdict::Unknown(String::new()), None, None)
}

/// The portfolio's default head start of its first engines (measured:
/// docs/portfolio.md §3).
pub const DEFAULT_PORTFOLIO_DELAY: Duration = Duration::from_millis(100);

/// How many engines start at once by default: the witness search and the
/// conditions (measured: docs/portfolio.md §3).
pub const DEFAULT_PORTFOLIO_HEAD: usize = 2;

/// The portfolio's engines by default, in the order they start (measured:
/// docs/portfolio.md §3).
pub const DEFAULT_PORTFOLIO: [Engine; 5] = [
    Engine::ExploreSearch,
    Engine::Nc,
    Engine::Chc,
    Engine::Explore,
    Engine::Compositional,
];

/// The portfolio: each engine on a thread of its own, the first
/// `opts.portfolio_head` at once, the others after `opts.portfolio_delay`;
/// the first definite answer throws the switch that stops the others.
/// Undecided: every engine's reason.
fn decide_by_portfolio(
    db: &Database,
    file: SourceFile,
    t: &Target,
    opts: &CheckOptions,
    deadline: Instant,
) -> Decision {
    let stop = deadline::Stop::new();
    let (tx, rx) = std::sync::mpsc::channel();
    // Function summaries are for programs with functions: with `main`
    // alone the compositional engine is the executor again.
    let functions = db::parse(db, file).program.functions.len();
    let engines: Vec<Engine> = opts
        .portfolio
        .iter()
        .copied()
        .filter(|&e| e != Engine::Compositional || functions > 1)
        .collect();
    std::thread::scope(|scope| {
        for (i, &engine) in engines.iter().enumerate() {
            let (tx, stop, db) = (tx.clone(), stop.clone(), db.clone());
            let delay = if i < opts.portfolio_head {
                Duration::ZERO
            } else {
                opts.portfolio_delay
            };
            // The engines recurse over (bounded) term heights: a big stack.
            std::thread::Builder::new()
                .stack_size(256 << 20)
                .spawn_scoped(scope, move || {
                    let decision = after_head_start(delay, &stop, deadline)
                        .then(|| run_engine(&db, file, t, opts, engine, deadline, &stop));
                    let _ = tx.send((engine, decision));
                })
                .expect("spawning an engine thread");
        }
        drop(tx);
        let mut reasons = Vec::new();
        for (engine, decision) in rx {
            match decision {
                Some(d @ (Verdict::Unreachable | Verdict::Reachable(_), _, _)) => {
                    stop.stop();
                    return d;
                }
                Some((Verdict::Unknown(why), _, _)) => {
                    // Some engines name themselves already.
                    let name = format!("{}: ", engine.short_name());
                    let why = why.strip_prefix(&name).unwrap_or(&why);
                    reasons.push(format!("{name}{why}"))
                }
                None => {}
            }
        }
        let prefix = if Instant::now() >= deadline {
            "timeout: "
        } else {
            ""
        };
        let why = format!("{prefix}{}", reasons.join("; "));
        (Verdict::Unknown(why), None, None)
    })
}

/// Lowers the CPU priority of this thread, and so of the threads and
/// solver processes it starts, to the niceness `n` (0 leaves it).
fn lower_this_threads_priority(n: i32) {
    if n > 0 {
        // SAFETY: a plain syscall on this thread (on Linux, niceness is a
        // thread's, inherited by the threads and processes it starts). A
        // failure leaves the priority as it was, which is harmless.
        unsafe {
            libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, n);
        }
    }
}

/// Waits out an engine's head start; `false` if the portfolio was decided
/// (or out of time) meanwhile.
fn after_head_start(delay: Duration, stop: &deadline::Stop, deadline: Instant) -> bool {
    let start = Instant::now() + delay;
    while Instant::now() < start {
        if stop.is_stopped() || Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5).min(start - Instant::now()));
    }
    !stop.is_stopped()
}

/// One engine of the portfolio, under its switch; a defect or a timeout
/// is its reason, not the target's end.
fn run_engine(
    db: &Database,
    file: SourceFile,
    t: &Target,
    opts: &CheckOptions,
    engine: Engine,
    deadline: Instant,
    stop: &deadline::Stop,
) -> Decision {
    let one = CheckOptions {
        engine,
        sharing_cores: shares_the_head(opts, engine),
        ..opts.clone()
    };
    if opts.portfolio_priorities {
        lower_this_threads_priority(engine.portfolio_niceness());
    }
    guarded(deadline, stop.clone(), || {
        decide(db, file, t, &one, deadline)
    })
    .unwrap_or_else(|why| (Verdict::Unknown(why), None, None))
}

/// `f` on a thread of a race, under `deadline` and the race's `stop`: its
/// timeout, a result another thread was computing and abandoned (salsa
/// then cancels the waiters), or a defect becomes the reason it gives.
fn guarded<T>(deadline: Instant, stop: deadline::Stop, f: impl FnOnce() -> T) -> Result<T, String> {
    let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        deadline::run_in(deadline, Some(stop), f)
    }));
    match attempt {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(timeout)) => Err(format!("timeout: {}", timeout.phase)),
        Err(p) if p.downcast_ref::<salsa::Cancelled>().is_some() => {
            Err("stopped while waiting for a result another engine was computing".into())
        }
        Err(p) => {
            let msg = crate::interp::panic_message(p.as_ref());
            Err(format!(
                "internal error: {msg} (please report it with the program)"
            ))
        }
    }
}

/// Whether `engine` starts at once in the portfolio beside another engine.
fn shares_the_head(opts: &CheckOptions, engine: Engine) -> bool {
    let head = &opts.portfolio[..opts.portfolio_head.min(opts.portfolio.len())];
    head.contains(&engine) && head.len() > 1
}

/// Less time left than this after the conditions: the executor is not tried.
const LEAST_TO_EXPLORE: Duration = Duration::from_millis(50);

/// The executor's decision (guided to `t`, path subsumption and loop
/// summaries on) within the
/// time left; `before` (the conditions' undecided verdict) if it decides
/// nothing, with its reason added.
fn decide_by_exploring(
    db: &Database,
    file: SourceFile,
    t: &Target,
    opts: &CheckOptions,
    deadline: Instant,
    before: Decision,
) -> Decision {
    let Some(mut o) = explore_options(opts, deadline) else {
        return before;
    };
    o.subsumption = Some(crate::explore::AtChecks::Conjoin);
    o.summarization = true;
    o.guide = Some(crate::explore::Guide {
        goal: t.clone(),
        nc: engine_options(opts),
    });
    explore_decision(db, file, t, &o, Engine::Explore, before)
}

/// The executor as a witness search for the target, without its
/// condition: tree search with lattice merging, stopping at the target
/// (docs/portfolio.md). Every path explored proves it unreachable.
fn decide_by_searching(
    db: &Database,
    file: SourceFile,
    t: &Target,
    opts: &CheckOptions,
    deadline: Instant,
) -> Decision {
    let Some(mut o) = explore_options(opts, deadline) else {
        return undecided_yet();
    };
    o.strategy = crate::explore::Strategy::Tree;
    o.merging = crate::explore::Merging::Lattice;
    o.stop_at = Some(t.clone());
    explore_decision(db, file, t, &o, Engine::ExploreSearch, undecided_yet())
}

/// The executor's options for the time left (`None`: no solver, or too
/// little time).
fn explore_options(opts: &CheckOptions, deadline: Instant) -> Option<crate::explore::Options> {
    let left = deadline.saturating_duration_since(Instant::now());
    let solver = opts.solvers.first()?;
    if left < LEAST_TO_EXPLORE {
        return None;
    }
    let mut o = crate::explore::Options::new(solver.clone());
    o.timeout = Some(left);
    o.stop_at_first_error = false;
    Some(o)
}

/// An exploration's verdict on `t`: its replayed witness, every path
/// explored, or `before` with the reason of `engine` (the guided executor
/// or the search) added.
fn explore_decision(
    db: &Database,
    file: SourceFile,
    t: &Target,
    o: &crate::explore::Options,
    engine: Engine,
    before: Decision,
) -> Decision {
    let found = match engine {
        Engine::ExploreSearch => "explore-search",
        _ => "explore-guided",
    };
    let _p = deadline::phase("exploring");
    let name = Some(o.solver.name.clone());
    let why = match crate::explore::explore(db, file, o) {
        Ok(r) => {
            if let Some(e) = r.errors.iter().find(|e| e.target == *t) {
                return (
                    Verdict::Reachable(e.witness.clone()),
                    Some(found.into()),
                    name,
                );
            }
            match r.end {
                crate::explore::End::Complete => {
                    return (
                        Verdict::Unreachable,
                        Some("explore-every-path".into()),
                        name,
                    );
                }
                crate::explore::End::Incomplete(why) => why,
                crate::explore::End::ErrorFound => "stopped at another error".into(),
            }
        }
        Err(e) => e,
    };
    match before {
        (Verdict::Unknown(r), m, s) => {
            let name = engine.short_name();
            let why = if r.is_empty() {
                format!("{name}: {why}")
            } else {
                format!("{r}; {name}: {why}")
            };
            (Verdict::Unknown(why), m, s)
        }
        other => other,
    }
}

/// The compositional engine's conclusion on `t` within the deadline:
/// reachable with its replayed witness, unreachable after a run that
/// ended with no unknown leaf.
fn decide_compositionally(
    db: &Database,
    file: SourceFile,
    t: &Target,
    opts: &CheckOptions,
    deadline: Instant,
) -> Decision {
    use crate::compositional::{self, Conclusion};
    let Some(solver) = opts.solvers.first() else {
        return (Verdict::Unknown("no solver".into()), None, None);
    };
    let mut o = compositional::Options::new(solver.clone());
    o.timeout = Some(deadline.saturating_duration_since(Instant::now()));
    let name = Some(solver.name.clone());
    match compositional::decide(db, file, t, o) {
        Conclusion::Reachable(w) => (Verdict::Reachable(w), Some("compositional".into()), name),
        Conclusion::Unreachable => (
            Verdict::Unreachable,
            Some("compositional-terminated".into()),
            name,
        ),
        Conclusion::Unknown(why) => (
            Verdict::Unknown(format!("compositional: {why}")),
            None,
            None,
        ),
    }
}

/// The conditions' race on the target.
fn decide_by_conditions(
    db: &Database,
    file: SourceFile,
    program_body: &crate::ir::Body,
    t: &Target,
    opts: &CheckOptions,
    deadline: Instant,
) -> Decision {
    let parsed = db::parse(db, file);
    let engine_opts = engine_options(opts);
    let chains = nc::query::of_target(db, file, t, &engine_opts, opts.simplify, opts.mode, opts.k);
    let inputs = {
        let (terms, phi) = nc::encoded(db, file, &t.function, t.id, &engine_opts, opts.simplify);
        InputModel::new(&parsed.program, program_body, terms, phi)
    };
    let dump = opts.dump_queries.as_ref().map(|dir| {
        DumpName::new(dir, file.path(db), &t.function, t.line, t.col)
            .reporting_to(&opts.dump_failure)
    });
    let contenders = contenders(chains, &opts.solvers, dump.as_ref(), opts.sharing_cores);
    let replay = Replayer::new(&parsed.program, file.text(db), std::slice::from_ref(t));
    let judge = |session: &mut smt::Session| inputs.judge(session, &replay);
    let _p = deadline::phase("solving");
    match smt::race(&contenders, judge, opts.max_models, deadline) {
        RaceOutcome::Unsat { method, solver } => (Verdict::Unreachable, Some(method), Some(solver)),
        RaceOutcome::Accepted {
            method,
            solver,
            witness: (witness, varied),
        } => {
            let method = if varied {
                format!("{method}+varied-model")
            } else {
                method
            };
            (Verdict::Reachable(witness), Some(method), Some(solver))
        }
        RaceOutcome::Timeout(why) => undecided(&why, true),
        RaceOutcome::Undecided(why) => undecided(&why, false),
    }
}

/// The Horn engine's decision, its scripts dumped if asked: a checked
/// proof, or a counterexample whose inputs replay to the target.
fn decide_by_horn_clauses(
    db: &Database,
    file: SourceFile,
    prog: &crate::ir::InlinedProgram,
    t: &Target,
    opts: &CheckOptions,
    deadline: Instant,
) -> Decision {
    let _p = deadline::phase("horn clauses");
    let body = &prog.body;
    let errors = prog.copies_of(&t.function, t.id);
    let (verdict, mut scripts) = chc::decide(body, &errors, deadline);
    let solver = chc::horn_solver().ok().map(|(p, _)| p.name);
    let decision = match verdict {
        chc::Verdict::Unreachable(_) => (Verdict::Unreachable, Some("chc".into()), solver),
        chc::Verdict::Counterexample(enc) => {
            let _p = deadline::phase("horn counterexample");
            let (found, unrolling) =
                replayed_counterexample(db, file, body, t, &enc, opts, deadline);
            scripts.unrolling = Some(unrolling);
            match found {
                Ok(witness) => (
                    Verdict::Reachable(witness),
                    Some("chc-counterexample".into()),
                    solver,
                ),
                Err(why) => (Verdict::Unknown(why), None, None),
            }
        }
        chc::Verdict::Unknown(why) => (Verdict::Unknown(why), None, None),
    };
    if let Some(dir) = &opts.dump_queries {
        let name = DumpName::new(dir, file.path(db), &t.function, t.line, t.col);
        dump_horn_scripts(name.reporting_to(&opts.dump_failure), &scripts);
    }
    decision
}

/// Writes what one Horn decision sent, for `--dump-queries`.
fn dump_horn_scripts(name: DumpName, scripts: &chc::Scripts) {
    for (text, part) in [
        (&scripts.horn, "chc-z3"),
        (&scripts.checks, "chc-certificate-z3"),
        (&scripts.unrolling, "chc-counterexample-z3"),
    ] {
        if let Some(text) = text {
            name.write_part(part, text);
        }
    }
}

/// The inputs of a counterexample to the Horn clauses, found by unrolling
/// them and replayed on the interpreter; and the unrolling sent.
fn replayed_counterexample(
    db: &Database,
    file: SourceFile,
    body: &crate::ir::Body,
    t: &Target,
    enc: &chc::Encoding,
    opts: &CheckOptions,
    deadline: Instant,
) -> (Result<Witness, String>, String) {
    let parsed = db::parse(db, file);
    let program = &parsed.program;
    let symbol = |name: &str| body.var_id(name).and_then(|v| chc::initial_symbol(enc, v));
    let inputs = InputModel::named(program, body, symbol, model::Access::Select);
    let replay = Replayer::new(program, file.text(db), std::slice::from_ref(t));
    let judge = |session: &mut smt::Session| inputs.judge(session, &replay);
    let (found, unrolling) = chc::find_counterexample(enc, judge, opts.max_models, deadline);
    let found = match found {
        chc::Search::Found((witness, _), _) => Ok(witness),
        // Past the deadline the session was cancelled: its error says no more.
        chc::Search::NotFound(_) if Instant::now() >= deadline => {
            Err("chc: timeout: the Horn clauses have a counterexample, not yet replayed".into())
        }
        chc::Search::NotFound(why) => Err(format!(
            "chc: the Horn clauses have a counterexample, but {why}"
        )),
    };
    (found, unrolling)
}

/// One contender per chain and solver; a chain's later queries follow on
/// the same thread. `sharing_cores`: only φ̂ starts at once.
fn contenders<'a>(
    chains: nc::query::PendingChains<'a>,
    solvers: &[Profile],
    dump: Option<&DumpName>,
    sharing_cores: bool,
) -> Vec<Contender<'a>> {
    let mut out = Vec::new();
    for chain in chains {
        let late = nc::query::starts_late(&chain)
            || (sharing_cores && !nc::query::is_quantified_alone(&chain));
        // Shared by the solvers: built once.
        let shared: Vec<Arc<PendingQuery>> = chain.into_iter().map(Arc::new).collect();
        for profile in solvers {
            let mut next: Option<Box<Contender>> = None;
            for q in shared.iter().rev() {
                next = Some(Box::new(Contender {
                    query: q.clone(),
                    profile: profile.clone(),
                    dump: dump.cloned(),
                    then: next.take(),
                    late,
                }));
            }
            out.extend(next.map(|c| *c));
        }
    }
    out
}

/// [`undecided`]'s reason alone.
fn undecided_reason(why: &[(String, String, Undecided)], timed_out: bool) -> String {
    match undecided(why, timed_out).0 {
        Verdict::Unknown(reason) => reason,
        _ => String::new(),
    }
}

/// The verdict when no contender was definite (by the deadline, if
/// `timed_out`): a satisfiable condition without a replayable witness says
/// more than a solver that gave up, which says more than a bare timeout.
/// Queries that were left out are named; with nothing else, the target
/// is `unsupported`.
fn undecided(why: &[(String, String, Undecided)], timed_out: bool) -> Decision {
    let mut left_out: Vec<&str> = Vec::new();
    for (_, _, u) in why {
        if let Undecided::LeftOut(l) = u
            && !left_out.contains(&l.as_str())
        {
            left_out.push(l);
        }
    }
    if !timed_out && !why.is_empty() && left_out.len() == why.len() {
        let why = format!("unsupported: {}", left_out.join("; "));
        return (Verdict::Unknown(why), None, None);
    }
    let no_witness = why.iter().find_map(|(m, s, u)| match u {
        Undecided::NoWitness(miss) => Some((m, s, miss)),
        Undecided::Solver(_) | Undecided::LeftOut(_) => None,
    });
    let mut also = String::new();
    if timed_out {
        also.push_str(" (then timeout: solving)");
    }
    for l in &left_out {
        also.push_str(&format!(" ({l})"));
    }
    match no_witness {
        Some((m, s, miss)) => (
            Verdict::Unknown(format!("nc-sat-no-witness: {miss}{also}")),
            Some(m.clone()),
            Some(s.clone()),
        ),
        None if timed_out => {
            let lo: String = left_out.iter().map(|l| format!(" ({l})")).collect();
            (
                Verdict::Unknown(format!("timeout: solving{lo}")),
                None,
                None,
            )
        }
        None => {
            let reasons: Vec<String> = why
                .iter()
                .filter_map(|(m, s, u)| match u {
                    Undecided::Solver(r) | Undecided::NoWitness(r) => {
                        Some(format!("{m} on {s}: {r}"))
                    }
                    Undecided::LeftOut(_) => None,
                })
                .collect();
            let why = format!("solver-unknown: {}{also}", reasons.join("; "));
            (Verdict::Unknown(why), None, None)
        }
    }
}

/// Replays witnesses on the interpreter, the yardstick of every judge of a
/// model, and tells which of its targets (one, or all of a program's for
/// `together`) the run hit.
struct Replayer<'a> {
    program: &'a crate::syntax::ast::Program,
    text: &'a str,
    lines: LineIndex,
    targets: &'a [Target],
}

impl<'a> Replayer<'a> {
    fn new(program: &'a crate::syntax::ast::Program, text: &'a str, targets: &'a [Target]) -> Self {
        Replayer {
            program,
            text,
            lines: LineIndex::new(text),
            targets,
        }
    }

    /// The target the run of `w` hits, or what the run did instead. A
    /// race's loser stops here at once (a model's judge may replay dozens
    /// of times: shrinking, variations), rather than hold up the race's end
    /// (by 12–20 ms on MatrIR).
    fn hit(&self, w: &Witness) -> Result<&'a Target, String> {
        deadline::check();
        let error = crate::interp::replay_error(self.program, self.text, &self.lines, w);
        self.target_of(error)
    }

    /// The target a run's error is, or why the run missed them all.
    fn target_of(&self, error: crate::interp::ErrorPlace) -> Result<&'a Target, String> {
        let (kind, (line, col)) = error?;
        (self.targets.iter())
            .find(|t| t.kind == kind && (t.line, t.col) == (line, col))
            .ok_or_else(|| crate::interp::hit_elsewhere(kind, (line, col)))
    }
}

impl model::Replay for Replayer<'_> {
    fn hits(&self, w: &Witness) -> Result<(), String> {
        self.hit(w).map(|_| ())
    }

    fn hits_reading(&self, w: &Witness) -> (Result<(), String>, crate::interp::InputReads) {
        deadline::check();
        let (error, reads) =
            crate::interp::replay_error_reading(self.program, self.text, &self.lines, w);
        (self.target_of(error).map(|_| ()), reads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{ArgValue, Limits, Outcome};

    /// A program with a 10,000-operand sum, `&&` chain and mixed `-`/`+`
    /// chain (the longest the parser accepts), each returned by `main`
    /// for `which` = 0, 1, 2, and an assert on each.
    fn chains_program() -> String {
        let n = crate::syntax::parser::MAX_CHAIN_OPERANDS as usize;
        let mixed = crate::syntax::parser::mixed_chain(n, ["a", "b", "c"]);
        format!(
            "main(which, a, b, c) {{\n  var s, t, m, r;\n  s = {};\n  t = {};\n  m = {mixed};\n  assert(s == {n} * a);\n  assert(t == 0 || a != 0);\n  assert(m != 7);\n  if (which == 0) {{ r = s; }} else {{ if (which == 1) {{ r = t; }} else {{ r = m; }} }}\n  return r;\n}}\n",
            vec!["a"; n].join(" + "),
            vec!["a"; n].join(" && "),
        )
    }

    #[test]
    fn long_chains_go_through_every_stage() {
        // What the CLI does, on the CLI's stack: parse, types, lowering,
        // the interpreter, and `check` (conditions, solver, replay).
        crate::syntax::parser::on_big_stack(|| {
            let n = crate::syntax::parser::MAX_CHAIN_OPERANDS as i64;
            let text = chains_program();
            let db = Database::default();
            let file = SourceFile::new(&db, "chains.mc".into(), text.clone());
            let diags = db::diagnostics(&db, file);
            assert!(diags.is_empty(), "{:?}", diags.first());
            let program = &db::parse(&db, file).program;
            let types = db::program_types(&db, file);
            let bodies = crate::ir::lower_program(program, types);
            let _ = crate::ir::to_text(&bodies[0], &|_| String::new());
            // a = 1, b = 2, c = 3: the mixed chain is 1 + Σ (−2, +3, +1).
            let mixed = 1 + (1..n).map(|i| [1, -2, 3][(i % 3) as usize]).sum::<i64>();
            for (which, want) in [(0, n), (1, 1), (2, mixed)] {
                let w = Witness {
                    args: [("which", which), ("a", 1), ("b", 2), ("c", 3)]
                        .iter()
                        .map(|(p, v)| (p.to_string(), ArgValue::Int((*v).into())))
                        .collect(),
                    input: vec![],
                };
                let r = crate::interp::run(program, &w, Limits::default()).unwrap();
                assert_eq!(r.outcome, Outcome::Returned(want.into()));
            }
            let Some(z3) = smt::default_z3() else {
                panic!("z3 is needed (solvers/install.sh)");
            };
            let targets = targets(&db, file);
            assert_eq!(targets.len(), 3);
            let opts = CheckOptions::new(vec![z3], Duration::from_secs(20));
            let reports = check_all(&db, file, &targets, &opts, &|_| {});
            let verdicts: Vec<&str> = reports.iter().map(|r| r.verdict.name()).collect();
            // The sum is n·a and `t` is 0 or a ≠ 0: both asserts hold. The
            // mixed chain can be 7.
            assert_eq!(
                verdicts,
                ["unreachable", "unreachable", "reachable"],
                "{reports:?}"
            );
        });
    }

    /// A witness whose run reads input cells far beyond the judge's first
    /// window (A[2001], B[11][40], the 70th input): the cells the replay
    /// read are asked for, and the conditions alone find it. (A fixed
    /// window of 1024 cells left it `unknown`: the replay returned 0.)
    #[test]
    fn the_judge_asks_for_the_cells_its_replay_reads() {
        let text = "main(A, B, n) {\n  var x, i;\n  i = 0;\n  while (i < 70) {\n    x = input;\n    i = i + 1;\n  }\n  if (n > 2000 && n < 2100 && A[n] == 7 && B[n - 1990][40] == 3) {\n    if (x == n + 1) {\n      assert(0);\n    }\n  }\n  return 0;\n}\n";
        let db = Database::default();
        let file = SourceFile::new(&db, "far.mc".into(), text.to_string());
        let Some(z3) = smt::default_z3() else {
            panic!("z3 is needed (solvers/install.sh)");
        };
        let target = (targets(&db, file).into_iter())
            .find(|t| t.kind == crate::TargetKind::Assert)
            .expect("the assert is a target");
        let opts = CheckOptions {
            engine: Engine::Nc,
            ..CheckOptions::new(vec![z3], Duration::from_secs(20))
        };
        let report = check_target(&db, file, &target, &opts);
        let Verdict::Reachable(w) = &report.verdict else {
            panic!("{report:?}");
        };
        let program = &db::parse(&db, file).program;
        let lines = LineIndex::new(text);
        let hit = crate::interp::replay_error(program, text, &lines, w);
        assert_eq!(hit, Ok((crate::TargetKind::Assert, (10, 7))));
    }

    /// Beside the witness search in the portfolio's head, the conditions'
    /// race starts φ̂ alone; on their own, every chain but φ̂^K at once.
    #[test]
    fn sharing_the_cores_the_race_starts_the_quantified_condition_alone() {
        let text = include_str!("../../tests/programs/matrir.mc");
        let db = Database::default();
        let file = SourceFile::new(&db, "matrir.mc".into(), text.to_string());
        let target = (targets(&db, file).into_iter())
            .find(|t| t.kind == crate::TargetKind::Assert)
            .expect("the assert is a target");
        let Some(z3) = smt::default_z3() else {
            panic!("z3 is needed (solvers/install.sh)");
        };
        let opts = CheckOptions::new(vec![z3], Duration::from_secs(20));
        assert!(shares_the_head(&opts, Engine::Nc));
        assert!(!shares_the_head(&opts, Engine::Chc));
        let alone = CheckOptions {
            portfolio: vec![Engine::Nc, Engine::Chc],
            portfolio_head: 1,
            ..opts.clone()
        };
        assert!(!shares_the_head(&alone, Engine::Nc));
        let at_once = |sharing: bool| -> Vec<String> {
            let chains = nc::query::of_target(
                &db,
                file,
                &target,
                &engine_options(&opts),
                true,
                Mode::Race,
                DEFAULT_K,
            );
            (contenders(chains, &opts.solvers, None, sharing).iter())
                .filter(|c| !c.late)
                .map(|c| format!("{:?}", c.query.variant))
                .collect()
        };
        assert_eq!(at_once(true), ["Quantified"]);
        assert_eq!(at_once(false), ["Quantified", "Unfolded(3)"]);
    }
}
