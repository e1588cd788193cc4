//! A warm solver process for the engine's helper queries (pruning of
//! infeasible loop-body backbones, counter inference): many small scripts,
//! each answered in about a millisecond, where starting a solver costs
//! 20–30 ms. Building HWM's condition asked 60 of them: 1.8 s of process
//! starts, ~0.1 s in one process.
//!
//! One process per engine run ([`Helper`]), started at its first script
//! and killed when the run ends. Its scripts run one after another, each in
//! a `push`/`pop` scope of its own, followed by an `echo` of a marker: the
//! answer is everything the solver prints before the marker. `(reset)`
//! would isolate scripts too, but costs Z3 6–9 ms, a scope 0.3 ms. A scope
//! does not reset the solver's heuristics, so a model depends on the
//! scripts asked before it in the same process: one process per run (not
//! a pool shared by all) keeps every condition a function of its program
//! — a pool made the printed conditions depend on which targets ran first.
//! A process that misses its deadline, or prints an error, is dropped; the
//! next script starts a fresh one. Refusing the values a script asks for
//! after an `unsat` is no such error: dropping the process for it cost
//! HWM's conditions a cold start several times per target (`apc check
//! hwm.mc`, medians of 7 paired runs: 3.9 → 3.0 s; hw.mc 1.0 → 0.77 s). Scripts with quantifiers run in a
//! second process, each after `(reset)`, which returns the solver to its
//! state at start: instantiation depends most on the history (a nested-loop
//! inference query, 30 ms fresh, took 3–6 s and `unknown` after thirty
//! others in one scope-isolated process). A reset costs a few milliseconds
//! where a new process cost 15–25: MatrIR's condition, nine quantified
//! scripts, went from 0.69 s to 0.48 s (`apc check --engine nc`, medians
//! of 10 paired runs), with the same verdicts on every target of
//! `tests/programs`.
//!
//! A process's first `check-sat` is its dearest: Z3 sets itself up then
//! (5–12 ms of CPU), and a warmed-up process answers a small script in
//! under a millisecond. So every process answers a trivial warm-up first,
//! and one is started ahead (when `apc check` begins, and whenever a
//! helper takes the one waiting), so that the next engine run's first
//! script does not wait: MatrIR's condition, two runs of the engine (one
//! per loop summary), was built in 37–58 ms, and is in 25–30 ms with this
//! and the solver's allocator settings (`process`). Every process gets
//! the same warm-up, so the history behind each model is the same in
//! every process: the conditions are still a function of their program.
//!
//! Processes are started by one long-lived thread, so that the kernel's
//! parent-death signal (which fires when the *thread* that forked the
//! solver ends) kills them exactly when apc ends — also on SIGKILL — and
//! not when the worker thread that asked for one is done.

use super::Answer;
use super::profile::Profile;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

const MARKER: &str = "apc-helper-done";

/// Sent to every process at its start (why: the module's documentation).
/// It answers `sat` and nothing else, before the marker.
const WARM_UP: &str = "(push 1)\n(check-sat)\n(pop 1)\n";

/// A helper's command line: the binary and its arguments (timeout included).
type CommandLine = (String, Vec<String>);

struct Warm {
    child: Child,
    stdin: ChildStdin,
    /// stdout, a line at a time, from a reader thread.
    lines: Receiver<String>,
}

impl Drop for Warm {
    fn drop(&mut self) {
        super::process::stop(&mut self.child);
    }
}

/// What the spawner starts: a command line, at the niceness of the thread
/// that asks. The spawner's own niceness is that of the thread that
/// started it, so a portfolio engine's lowered priority (which its own
/// solver processes inherit) must be passed on to the processes started
/// for it here (docs/portfolio.md §3).
#[derive(Clone, PartialEq)]
struct Launch {
    line: CommandLine,
    niceness: i32,
}

impl Launch {
    /// `line` at this thread's niceness.
    fn here(line: &CommandLine) -> Launch {
        Launch {
            line: line.clone(),
            niceness: super::process::this_threads_niceness(),
        }
    }
}

type SpawnRequest = (Launch, Sender<Result<Warm, String>>);

/// The thread that forks every warm solver; it lives as long as apc.
fn spawner() -> &'static Mutex<Sender<SpawnRequest>> {
    static SPAWNER: OnceLock<Mutex<Sender<SpawnRequest>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name("apc-solver-spawner".into())
            .spawn(move || {
                for (launch, reply) in rx {
                    let _ = reply.send(spawn(&launch));
                }
            })
            .expect("spawning the solver-spawner thread");
        Mutex::new(tx)
    })
}

fn spawn(launch: &Launch) -> Result<Warm, String> {
    let (command, args) = &launch.line;
    let mut child = super::process::spawn_at(command, command, args, launch.niceness)?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    // Every script of the session runs under this logic (scripts are
    // stripped of theirs), in a `push`/`pop` scope of its own.
    stdin
        .write_all(format!("(set-logic ALL)\n{WARM_UP}(echo \"{MARKER}\")\n").as_bytes())
        .map_err(|e| format!("cannot talk to {command}: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Ok(Warm {
        child,
        stdin,
        lines,
    })
}

/// Asks the spawner thread for a process for `launch`.
fn request(launch: &Launch) -> Result<Receiver<Result<Warm, String>>, String> {
    let (tx, rx) = mpsc::channel();
    spawner()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((launch.clone(), tx))
        .map_err(|_| "the solver-spawner thread is gone".to_string())?;
    Ok(rx)
}

type Spare = (Launch, Receiver<Result<Warm, String>>);

/// A process started ahead for the next engine run's first script (one
/// at a time; a helper that takes it starts the next).
fn spare() -> &'static Mutex<Option<Spare>> {
    static SPARE: Mutex<Option<Spare>> = Mutex::new(None);
    &SPARE
}

/// Starts a process for `launch` ahead, unless one is waiting already.
fn prepare(launch: &Launch) {
    let mut slot = spare().lock().unwrap_or_else(|e| e.into_inner());
    if !matches!(&*slot, Some((l, _)) if l == launch) {
        *slot = request(launch).ok().map(|rx| (launch.clone(), rx));
    }
}

/// A warmed-up process for `line`: the one started ahead if it is for
/// `line` and alive, a new one otherwise; within `limit`.
fn start(line: &CommandLine, limit: Duration) -> Result<Warm, String> {
    let launch = Launch::here(line);
    let taken = spare().lock().unwrap_or_else(|e| e.into_inner()).take();
    // The next one starts now, not once this one is warm: building
    // MatrIR's condition, the second helper waited 4–5 ms for its process.
    prepare(&launch);
    let ahead = taken
        .filter(|(l, _)| *l == launch)
        .and_then(|(_, rx)| warmed_up(rx, limit).ok());
    match ahead {
        Some(warm) => Ok(warm),
        None => warmed_up(request(&launch)?, limit),
    }
}

/// The process from the spawner, once it has answered its warm-up (or
/// `Err` when `limit` or the work's deadline passes, or its switch is
/// thrown, first).
fn warmed_up(rx: Receiver<Result<Warm, String>>, limit: Duration) -> Result<Warm, String> {
    let gone = || "the solver-spawner thread is gone".to_string();
    let warm = rx.recv().map_err(|_| gone())??;
    let end = Instant::now() + limit;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() || crate::deadline::passed() {
            return Err("the solver did not answer its warm-up".into());
        }
        match warm.lines.recv_timeout(left.min(crate::deadline::POLL)) {
            Ok(line) if line.contains(MARKER) => return Ok(warm),
            Ok(line) if line.contains("(error") => {
                let why = super::reply::one_line(&line);
                return Err(format!("the solver's warm-up failed: {why}"));
            }
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err("the solver stopped answering".into());
            }
        }
    }
}

/// The helper solver of one engine run: its profile and per-check limit,
/// and its process (none until the first script; none at all without a
/// profile).
pub struct Helper {
    profile: Option<Profile>,
    timeout: Duration,
    command: CommandLine,
    warm: Option<Warm>,
    /// The process for quantified scripts, reset before each.
    fresh: Option<Warm>,
}

impl Helper {
    /// A helper on `profile` (none: every script is `unknown`), each check
    /// limited to `timeout`.
    pub fn new(profile: Option<Profile>, timeout: Duration) -> Helper {
        let command = profile
            .as_ref()
            .map_or_else(Default::default, |p| p.command_line(timeout));
        if profile.is_some() {
            prepare(&Launch::here(&command));
        }
        Helper {
            profile,
            timeout,
            command,
            warm: None,
            fresh: None,
        }
    }

    /// Starts the process of a helper on `profile` ahead, so that the next
    /// helper's first script does not wait for it.
    pub fn start_ahead(profile: &Profile, timeout: Duration) {
        prepare(&Launch::here(&profile.command_line(timeout)));
    }

    /// Stops the process started ahead, if any, when apc is done: left to
    /// the kernel's parent-death signal, it could outlive apc by a moment.
    pub fn stop_spare() {
        let taken = spare().lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((_, rx)) = taken {
            // Dropping the process (once started) kills it and waits.
            drop(rx.recv());
        }
    }

    /// Whether there is a solver to ask.
    pub fn is_available(&self) -> bool {
        self.profile.is_some()
    }

    /// Runs a script ending with `(check-sat)` and possibly `(get-value …)`;
    /// `quantified` when its formula has quantifiers (see `stdout`).
    pub fn run(&mut self, script: &str, quantified: bool) -> super::Reply {
        let out = self.stdout(script, quantified, true);
        match &self.profile {
            Some(p) => super::reply(p, out),
            None => super::Reply::without_values(Answer::Unknown("no helper solver".into())),
        }
    }

    /// Runs a script with several quantifier-free `(check-sat)`s: one
    /// answer per check.
    pub fn run_batch(&mut self, script: &str, checks: usize) -> Vec<Answer> {
        super::batch_answers(
            &self.stdout(script, false, false).unwrap_or_default(),
            checks,
        )
    }

    /// What the solver prints for `script`, as a fresh process would print
    /// it. Past the limit plus a grace period the process is killed.
    /// `one_check`: the script has one `check-sat`, then maybe `get-value`s.
    fn stdout(
        &mut self,
        script: &str,
        quantified: bool,
        one_check: bool,
    ) -> Result<String, String> {
        let Some(name) = self.profile.as_ref().map(|p| p.name.clone()) else {
            return Err("no helper solver".into());
        };
        // The work's deadline bounds the wait too. A script cut short by
        // it stops the work (`deadline::stop`) instead of answering
        // `unknown`, so that no result weakened by a lack of time is kept.
        let (limit, by_deadline) = match crate::deadline::remaining() {
            Some(left) if left < self.timeout => (left, true),
            _ => (self.timeout, false),
        };
        if by_deadline && limit.is_zero() {
            crate::deadline::stop();
        }
        crate::deadline::count_solver_use(crate::deadline::SolverUse::of_script(script));
        let result = {
            let _t = crate::deadline::timed("solving");
            self.ask_with_limit(script, quantified, one_check, limit)
        };
        if by_deadline && matches!(&result, Err(Failure::Timeout)) {
            crate::deadline::stop();
        }
        result.map_err(|f| match f {
            Failure::Dead(why) => why,
            Failure::Timeout => super::timed_out(&name, limit),
        })
    }

    /// The answer to `script` within `limit`: in the process for
    /// quantified scripts (after a reset), or in the warm one (in a scope).
    fn ask_with_limit(
        &mut self,
        script: &str,
        quantified: bool,
        one_check: bool,
        limit: Duration,
    ) -> Result<String, Failure> {
        let Some(profile) = &self.profile else {
            return Err(Failure::Dead("no helper solver".into()));
        };
        // Quantified scripts: after `(reset)`, in a process of their own
        // (why: the module's documentation).
        let (slot, isolation) = if quantified {
            (&mut self.fresh, Isolation::Reset)
        } else {
            (&mut self.warm, Isolation::Scope)
        };
        let process = match slot.take() {
            Some(w) => slot.insert(w),
            None => slot.insert(start(&self.command, limit).map_err(Failure::Dead)?),
        };
        let result = ask(process, script, isolation, limit).map_err(|f| match f {
            Failure::Dead(_) => Failure::Dead(format!("{} stopped answering", profile.name)),
            timeout => timeout,
        });
        // A process that failed is dropped (killed); one that complained
        // may be left in a state of its own (a scope not popped): the next
        // script gets a new one. Not one that only refused the values a
        // script asks for after a check that did not answer `sat`: its
        // scope was popped all the same, and a new process costs 20–50 ms.
        let fine =
            |text: &str| !text.contains("(error") || (one_check && only_values_refused(text));
        if !matches!(&result, Ok(text) if fine(text)) {
            *slot = None;
        }
        result
    }
}

/// Whether the output of a script with one check can complain only about
/// the values it asks for after the check, which did not answer `sat` (Z3:
/// "model is not available"): its `get-value`s follow its `check-sat`.
fn only_values_refused(text: &str) -> bool {
    matches!(
        text.lines().next().map(str::trim),
        Some("unsat" | "unknown")
    )
}

enum Failure {
    /// The process could not start, or stopped answering: why.
    Dead(String),
    Timeout,
}

/// How a script is kept apart from those before it in the same process.
#[derive(Clone, Copy)]
enum Isolation {
    /// In a `push`/`pop` scope, under the logic set at the start.
    Scope,
    /// After a `(reset)`: as in a fresh process.
    Reset,
}

fn ask(
    warm: &mut Warm,
    script: &str,
    isolation: Isolation,
    timeout: Duration,
) -> Result<String, Failure> {
    let mut text = String::with_capacity(script.len() + 64);
    match isolation {
        Isolation::Reset => {
            text.push_str("(reset)\n");
            text.push_str(script);
            text.push('\n');
        }
        Isolation::Scope => {
            // The logic was set when the process started; the script's
            // declarations and assertions live in a scope of their own.
            text.push_str("(push 1)\n");
            for line in script.lines() {
                if !line.trim_start().starts_with("(set-logic") {
                    text.push_str(line);
                    text.push('\n');
                }
            }
            text.push_str("(pop 1)\n");
        }
    }
    text.push_str(&format!("(echo \"{MARKER}\")\n"));
    if warm
        .stdin
        .write_all(text.as_bytes())
        .and_then(|_| warm.stdin.flush())
        .is_err()
    {
        return Err(Failure::Dead("the solver stopped answering".into()));
    }
    let deadline = super::answer_by(timeout);
    let mut out = String::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match warm.lines.recv_timeout(left) {
            Ok(line) if line.contains(MARKER) => return Ok(out),
            Ok(line) => {
                out.push_str(&line);
                out.push('\n');
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Failure::Dead("the solver stopped answering".into()));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => return Err(Failure::Timeout),
        }
    }
}
