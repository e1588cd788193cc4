//! Verdicts for the targets of programs: the registry of engines, the
//! portfolio that races them, and the driver that checks every target of
//! a batch of files on worker threads.
//!
//! Every engine is reached through the contract (`engine::Decider`) and
//! the one registry here ([`ENGINES`]); a new engine is one module that
//! implements the contract and one line in the registry. `--engine` picks
//! one, or a way of combining them:
//!
//! - `all`, the portfolio (the default): the value facts first (no
//!   solver), then the engines of `--portfolio` raced on the target, the
//!   first definite answer winning (`deadline::race`, docs/portfolio.md);
//! - `nc+explore`: the conditions, then the guided executor for the time
//!   left on a target they leave undecided.
//!
//! With `--all-targets-first`, every target of a program is first asked
//! about at once ([`together`]).

pub mod anywhere;
mod facts;
pub mod schedule;
use schedule::Schedule;
pub mod sweep;
pub mod together;
pub mod traced;
mod undecided;

pub use crate::db::{Target, targets};
pub use crate::engine::{
    CheckOptions, DEFAULT_K, DEFAULT_MAX_MODELS, DEFAULT_PORTFOLIO, DEFAULT_PORTFOLIO_DELAY,
    DEFAULT_PORTFOLIO_HEAD, Decision, Method, Mode, PORTFOLIO, Verdict, default_portfolio_head,
};

use crate::db::{self, Database, SourceFile};
use crate::deadline::{self, Ended, Entrant, Finish, PhaseTimes, SolverUse, Stop};
use crate::engine::{Decider, How, Proof, Question};
use crate::interp::trace::Step;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// Every engine, in the order `--help` lists them. Adding an engine is one
/// line here.
pub static ENGINES: &[&dyn Decider] = &[
    &facts::CONDITIONS,
    &crate::chc::HornClauses,
    &crate::explore::GuidedExecutor,
    &crate::explore::WitnessSearch,
    &crate::fuzz::Fuzzer,
    &crate::compositional::Compositional,
    &crate::compact::Compact,
];

/// The conditions, then the guided executor for the time left.
pub const NC_THEN_EXPLORE: &str = "nc+explore";

/// The registered engine of this name.
pub fn engine(name: &str) -> Option<&'static dyn Decider> {
    ENGINES.iter().copied().find(|e| e.name() == name)
}

/// Every name `--engine` takes: the portfolio, the combination, and each
/// registered engine.
pub fn engine_choices() -> Vec<&'static str> {
    let mut names = vec![PORTFOLIO, NC_THEN_EXPLORE];
    names.extend(ENGINES.iter().map(|e| e.name()));
    names
}

/// One target's verdict, as the reports show it.
#[derive(Clone, Debug)]
pub struct Report {
    pub target: Target,
    pub verdict: Verdict,
    /// How it was decided, e.g. `nc-unfolded:k=25`.
    pub method: Option<Method>,
    /// The engine that decided (`nc`, `chc`, `explore`, …; `facts`).
    pub engine: Option<&'static str>,
    /// The solver that decided.
    pub solver: Option<String>,
    /// For `unreachable`: what proved it.
    pub proof: Option<Proof>,
    /// For `unknown`: its reason in one line (the whole one is the
    /// verdict's).
    pub short_reason: Option<String>,
    /// What else the verdict rests on, in a sentence (the editor's proof
    /// from any call of the target's function).
    pub note: Option<String>,
    /// For `reachable`, when asked (`CheckOptions::trace`): the witness's
    /// run, traced and folded, or why there is none.
    pub trace: Option<Result<Vec<Step>, String>>,
    pub time: Duration,
    /// The solver work it cost (its share of work done for several).
    pub solver_use: SolverUse,
    /// Where its time went, per engine and phase (`--profile`).
    pub profile: PhaseTimes,
}

/// The profile's name for a target's share of work done for several (the
/// sweep, the all-targets phase), before it was checked alone.
pub const SHARED_PHASES: (&str, &str) = ("apc", "shared with other targets");

impl Report {
    /// The report of a decision made outside the engines' registry (the
    /// editor's earlier witness, replayed), in `time`, with no solver.
    pub fn decided_outside(target: &Target, d: Decision, time: Duration) -> Report {
        let cost = Cost {
            time,
            solver: SolverUse::default(),
        };
        Report::of(target, d, cost)
    }

    /// The report of a decision made for several targets at once: its
    /// time is the target's share.
    fn shared(target: &Target, d: Decision, share: Cost) -> Report {
        let mut report = Report::of(target, d, Cost::default());
        report.charge_shared(share);
        report
    }

    /// Adds the target's share of work done for several to its cost and
    /// its profile.
    fn charge_shared(&mut self, share: Cost) {
        self.time += share.time;
        self.solver_use += share.solver;
        if !share.time.is_zero() {
            *self.profile.0.entry(SHARED_PHASES).or_default() += share.time;
        }
    }

    fn of(target: &Target, d: Decision, cost: Cost) -> Report {
        Report {
            target: target.clone(),
            engine: d.method.as_ref().map(|m| m.engine),
            proof: d.proof(),
            short_reason: None,
            note: None,
            trace: None,
            verdict: d.verdict,
            method: d.method,
            solver: d.solver,
            time: cost.time,
            solver_use: cost.solver,
            profile: PhaseTimes::default(),
        }
    }
}

/// How many of `reports` are unreachable, reachable, unknown.
pub fn verdict_counts(reports: &[Report]) -> [usize; 3] {
    let mut c = [0; 3];
    for r in reports {
        c[match r.verdict {
            Verdict::Unreachable => 0,
            Verdict::Reachable(_) => 1,
            Verdict::Unknown(_) => 2,
        }] += 1;
    }
    c
}

/// What a target cost: time, and solver work.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cost {
    pub time: Duration,
    pub solver: SolverUse,
}

impl std::ops::AddAssign for Cost {
    fn add_assign(&mut self, o: Cost) {
        self.time += o.time;
        self.solver += o.solver;
    }
}

impl Cost {
    /// What the work under `stop`, begun at `start`, cost until now.
    fn since(start: Instant, stop: &Stop) -> Cost {
        Cost {
            time: start.elapsed(),
            solver: stop.solver_use(),
        }
    }

    /// An even share of this cost for each of `n`.
    fn shares(self, n: usize) -> Vec<Cost> {
        let time = self.time / n.max(1) as u32;
        (self.solver.shares(n))
            .map(|solver| Cost { time, solver })
            .collect()
    }
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

/// How long after a check begins the solver processes that its sessions
/// will take are started ahead: a target decided sooner needs none, and
/// their start (a process each, the helper's warm-up) would take the two
/// cores from its engines. OneLoop, decided by its condition with no
/// solver: median 2.9 ms with them started at once, 0.8 ms without.
const START_AHEAD_AFTER: Duration = Duration::from_millis(5);

/// Starts nc's helper and a spare per solver [`START_AHEAD_AFTER`] from
/// now, unless the returned sender is dropped first (the check is done).
fn start_solvers_ahead(opts: &CheckOptions) -> std::sync::mpsc::Sender<()> {
    let (checking, done) = std::sync::mpsc::channel::<()>();
    let nc = builds_conditions(opts).then(|| crate::nc::engine_options(opts));
    // Every engine but the Horn clauses talks to the solvers in sessions.
    let spares = (opts.engine != "chc").then(|| opts.solvers.clone());
    let start = move || {
        if done.recv_timeout(START_AHEAD_AFTER) != Err(RecvTimeoutError::Timeout) {
            return;
        }
        if let Some(nc) = &nc {
            crate::nc::decider::start_helper_ahead(nc);
        }
        if let Some(solvers) = &spares {
            crate::smt::spare::prepare(solvers);
        }
    };
    // Without the thread, the sessions start their processes themselves.
    let _ = std::thread::Builder::new()
        .name("apc-start-ahead".into())
        .spawn(start);
    checking
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
    let _checking = start_solvers_ahead(opts);
    let (mut decided, spent): (Vec<Vec<Option<Report>>>, Vec<Vec<Cost>>) = (subjects.iter())
        .map(|s| together::decided(s, opts))
        .unzip();
    for (s, slot) in subjects.iter().zip(&mut decided) {
        for r in slot.iter_mut().flatten() {
            traced::add_trace(&s.db, s.file, r, opts);
        }
    }
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
    // its own clone of every program's, and the rest of the plan.
    let plan: Vec<(SourceFile, &[Target])> = (subjects.iter())
        .map(|s| (s.file, s.targets.as_slice()))
        .collect();
    let next = AtomicUsize::new(0);
    let jobs = opts.jobs.clamp(1, work.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let dbs: Vec<Database> = subjects.iter().map(|s| s.db.clone()).collect();
            let (next, work, slots, plan, spent) = (&next, &work, &slots, &plan, &spent);
            deadline::analysis_thread()
                .spawn_scoped(scope, move || {
                    while let Some(&(f, i)) = work.get(next.fetch_add(1, Ordering::SeqCst)) {
                        let (file, targets) = plan[f];
                        // What an earlier phase spent on it counts too,
                        // against its deadline as in its time.
                        let before = spent[f][i];
                        let left = CheckOptions {
                            timeout: opts.timeout.saturating_sub(before.time),
                            ..opts.clone()
                        };
                        let mut r = check_target(&dbs[f], file, &targets[i], &left);
                        r.charge_shared(before);
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
    (slots.into_iter())
        .map(|m| {
            let slot = m.into_inner().unwrap_or_else(|e| e.into_inner());
            (slot.into_iter())
                .map(|r| r.expect("every target was checked"))
                .collect()
        })
        .collect()
}

/// Whether the chosen engines build necessary conditions (then their
/// helper solver is started while the programs are read).
fn builds_conditions(opts: &CheckOptions) -> bool {
    match opts.engine {
        PORTFOLIO => opts.portfolio.iter().any(|&e| e == "nc" || e == "explore"),
        NC_THEN_EXPLORE | "nc" | "explore" => true,
        _ => false,
    }
}

/// Decides one target within `opts.timeout` (everything it costs
/// included); a defect in its analysis becomes its reason instead of
/// taking the other targets down.
pub fn check_target(db: &Database, file: SourceFile, t: &Target, opts: &CheckOptions) -> Report {
    let start = Instant::now();
    let stop = opts.cancel.child_keeping_phase_times(start + opts.timeout);
    let q = Question::one(db, file, t, opts);
    let decision = loop {
        match stop.guard(|| decide(&q, &stop)) {
            Ok(d) => break d,
            // Another target's thread was computing a result this one
            // waited for, and stopped at its own deadline (salsa then
            // cancels the waiters): compute it here, in this one's time.
            Err(Ended::Cancelled) if !stop.is_stopped() => {}
            Err(Ended::Cancelled) => {
                break Decision::unknown("timeout: waiting for a shared result");
            }
            Err(ended) => break Decision::unknown(ended.reason()),
        }
    };
    let short_reason =
        (!decision.verdict.is_definite()).then(|| undecided::one_line(&decision, opts));
    let mut report = Report::of(t, decision, Cost::since(start, &stop));
    report.short_reason = short_reason;
    traced::add_trace(db, file, &mut report, opts);
    report.profile = stop.phase_times();
    report
}

/// The chosen engine, or combination of engines, on the question.
fn decide(q: &Question, stop: &Stop) -> Decision {
    let lowered = {
        let _p = deadline::phase("lowering the program");
        db::program(q.db, q.file).is_some()
    };
    if !lowered {
        return Decision::unknown("unsupported: the program has no main");
    }
    match q.options.engine {
        PORTFOLIO => match by_value_facts(q) {
            Some(d) => d,
            None => portfolio(q, &scheduled(q)),
        },
        NC_THEN_EXPLORE => nc_then_explore(q, stop),
        name => match engine(name) {
            Some(e) => decide_as(e, q, stop),
            None => Decision::unknown(format!("unsupported: no engine named {name}")),
        },
    }
}

/// `e` on the question, its time counted as its own in the profile. Its
/// early ends are the caller's to catch (`check_target` computes a result
/// another target's thread abandoned; `engine::decide` would make it an
/// `unknown`).
fn decide_as(e: &dyn Decider, q: &Question, stop: &Stop) -> Decision {
    let _e = deadline::working_for(e.name());
    e.decide(q, stop)
}

/// The value facts (`ir::value_facts`) prove every target asked about:
/// they cost one pass over the program for all its targets, and need no
/// solver, so the portfolio asks them before it starts any engine.
fn by_value_facts(q: &Question) -> Option<Decision> {
    let _p = deadline::phase("the value facts");
    let facts = (q.targets.iter())
        .map(|t| db::proved_by_value_facts(q.db, q.file, t))
        .collect::<Option<Vec<String>>>()?;
    let proof = Proof::ValueFact(facts.join("; "));
    Some(Decision::unreachable(Method::new("facts", How::ValueFacts), None).with_proof(proof))
}

/// The portfolio's engines in the order they start on this program, and
/// their stagger: what `schedule` gives its class, unless `--portfolio`
/// gave a list (then no stagger); `--portfolio-stagger` overrides either.
fn scheduled(q: &Question) -> Schedule {
    let opts = q.options;
    let mut s = if opts.portfolio_scheduled {
        let _p = deadline::phase("choosing the engines");
        schedule::for_program(q.db, q.file, &opts.portfolio)
    } else {
        Schedule::unstaggered(opts.portfolio.clone())
    };
    if let Some(given) = opts.portfolio_stagger {
        s.stagger = given;
    }
    s
}

/// The conditions, then (on `unknown`) the guided executor for the time
/// left, its reason added to theirs.
fn nc_then_explore(q: &Question, stop: &Stop) -> Decision {
    let nc = decide_as(&facts::CONDITIONS, q, stop);
    let left = stop.remaining().unwrap_or(Duration::MAX);
    if nc.verdict.is_definite() || left < crate::explore::decider::LEAST_TO_EXPLORE {
        return nc;
    }
    let explore = crate::explore::GuidedExecutor;
    let then = decide_as(&explore, q, stop);
    if then.verdict.is_definite() {
        return then;
    }
    let mut d = Decision::unknown(format!(
        "{}; {}: {}",
        nc.reason(),
        explore.name(),
        then.reason()
    ));
    d.attempts = vec![
        ("nc", nc.reason().to_string()),
        (explore.name(), then.reason().to_string()),
    ];
    d
}

/// The portfolio: each engine of the schedule's order that takes the
/// question on a thread of its own (the one race, under this thread's
/// token), the first `portfolio_head` at once and the others from
/// `portfolio_delay`, one each stagger, each at its CPU priority. The
/// first definite answer stops the others. Undecided: every engine's
/// reason, by name.
pub fn portfolio(q: &Question, schedule: &Schedule) -> Decision {
    let names = &schedule.order;
    let opts = q.options;
    let engines: Vec<&'static dyn Decider> = {
        let _p = deadline::phase("choosing the engines");
        (names.iter())
            .filter_map(|n| engine(n))
            .filter(|e| e.takes(q))
            .collect()
    };
    let head = &engines[..opts.portfolio_head.min(engines.len())];
    let sharing = head.len() > 1;
    let (file, targets) = (q.file, std::sync::Arc::new(q.targets.to_vec()));
    let entrants = (engines.iter().enumerate())
        .map(|(i, &e)| {
            let late = i >= head.len();
            // Each thread its own database handle, and its own copy of the
            // rest: a loser may end after the race has returned.
            let (db, targets, opts) = (q.db.clone(), targets.clone(), opts.clone());
            let run = move || {
                let one = CheckOptions {
                    sharing_cores: sharing && !late,
                    ..opts.clone()
                };
                let asked = Question {
                    db: &db,
                    file,
                    targets: &targets,
                    options: &one,
                };
                if opts.portfolio_priorities {
                    lower_this_threads_priority(e.niceness(&asked));
                }
                let stop = deadline::current_stop().unwrap_or_default();
                crate::engine::decide(e, &asked, &stop)
            };
            let entrant = if late {
                Entrant::late(run)
            } else {
                Entrant::now(run)
            };
            entrant.running(e.name())
        })
        .collect();
    let definite = |d: &Decision| d.verdict.is_definite();
    let starts = deadline::LateStarts {
        after: opts.portfolio_delay,
        each: schedule.stagger,
    };
    match deadline::race_detached(entrants, definite, starts) {
        Finish::Definite(_, d) => d,
        Finish::Undecided { answers, timed_out } => {
            let mut answers = answers;
            answers.sort_by_key(|(i, _)| *i);
            let attempts: Vec<(&'static str, String)> = (answers.into_iter())
                .map(|(i, a)| {
                    let why = match a {
                        Ok(d) => d.reason().to_string(),
                        Err(ended) => ended.reason(),
                    };
                    (engines[i].name(), why)
                })
                .collect();
            let reasons: Vec<String> = (attempts.iter())
                .map(|(name, why)| format!("{name}: {why}"))
                .collect();
            let prefix = if timed_out { "timeout: " } else { "" };
            let mut d = Decision::unknown(format!("{prefix}{}", reasons.join("; ")));
            d.attempts = attempts;
            d
        }
    }
}

/// Lowers the CPU priority of this thread, and so of the threads and
/// solver processes it starts, to the niceness `n` (0 leaves it).
pub(crate) fn lower_this_threads_priority(n: i32) {
    if n > 0 {
        // SAFETY: a plain syscall on this thread (on Linux, niceness is a
        // thread's, inherited by the threads and processes it starts). A
        // failure leaves the priority as it was, which is harmless.
        unsafe {
            libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, n);
        }
    }
}

#[cfg(test)]
mod tests;
