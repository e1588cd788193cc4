//! Talking to SMT solvers.
//!
//! - [`profile`]: solver profiles (`solvers/*.toml`) and finding binaries;
//! - [`session`]: an interactive rsmt2 session whose process another thread
//!   can kill;
//! - [`race`]: contenders (query × solver) in parallel, first definite
//!   answer wins;
//! - `incremental`: the one warm incremental session ([`Warm`]: push/pop,
//!   names defined once), for an engine's many questions in one run;
//! - [`spare`]: solver processes started ahead, taken by new sessions;
//! - [`helper`]: a warm solver process per engine run, for its many small
//!   helper scripts (pruning, counter inference), each isolated;
//! - [`smtlib`]: the SMT-LIB printer of terms (every script apc writes);
//! - [`query`]: typed queries, their scripts and their dump names;
//! - [`reply`]: reading integer values in solver answers;
//! - here: one-shot scripts (a fresh process each, or a warm helper).

pub mod helper;
pub mod horn;
mod incremental;
mod process;
pub mod profile;
pub mod query;
pub mod race;
pub mod reply;
pub mod session;
pub mod smtlib;
pub mod spare;

pub use helper::Helper;
pub use incremental::{Warm, WarmStats};
pub use profile::{Profile, SolverKind, default_cvc5, default_z3, locate, locate_binary};
pub use query::{DumpFailure, DumpName, PendingQuery, Query, Variant};
pub use race::{Contender, Judgement, RaceOutcome, Undecided, race};
pub use session::Session;

use std::io::Write;
use std::time::{Duration, Instant};

/// The answer to a satisfiability question: the one such type, used by
/// every engine and every way of asking (one-shot scripts, warm sessions).
/// `Unknown` is never `Unsat`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Sat,
    Unsat,
    /// `unknown`, or no usable answer, with the reason.
    Unknown(String),
}

impl Answer {
    /// `sat` or `unsat`.
    pub fn is_definite(&self) -> bool {
        !matches!(self, Answer::Unknown(_))
    }
}

/// A one-shot script's answer, with the solver's text after `sat` (the
/// output of the script's `get-value`s, if any).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub answer: Answer,
    pub values: String,
}

impl Reply {
    fn without_values(answer: Answer) -> Reply {
        Reply {
            answer,
            values: String::new(),
        }
    }
}

/// When a solver given `timeout` is given up on: its own limit is soft
/// (Z3 does not always stop), so a grace follows it, but never past the
/// work's deadline (Spacer ignoring its limit held a 3 s target to 3.7 s).
fn answer_by(timeout: Duration) -> Instant {
    let end = Instant::now() + timeout + Duration::from_millis(500) + timeout / 10;
    crate::deadline::current().map_or(end, |d| end.min(d))
}

/// Why a one-shot solver gave no answer.
enum SolverFailure {
    /// It could not be started: why.
    Start(String),
    /// It did not answer in time and was killed.
    Timeout,
}

/// Runs a script in a fresh solver process; its stdout. Past
/// [`answer_by`] the process is killed: a hanging solver never hangs apc.
fn solver_stdout(
    name: &str,
    (command, args): &(String, Vec<String>),
    script: &str,
    timeout: Duration,
) -> Result<String, SolverFailure> {
    use std::io::Read;
    crate::deadline::count_solver_use(crate::deadline::SolverUse::of_script(script));
    let _t = crate::deadline::timed("solving");
    let mut child = process::spawn(name, command, args).map_err(SolverFailure::Start)?;
    // Read stdout on the side, so a large answer cannot block the solver.
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| SolverFailure::Start("no stdout".into()))?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    std::thread::scope(|scope| {
        // Write the script on the side too: a large one (Horn clauses of
        // megabytes) blocks until the solver has read it, which must not
        // hold the deadline up; killing the solver ends the write.
        if let Some(mut stdin) = child.stdin.take() {
            scope.spawn(move || {
                let _ = stdin.write_all(script.as_bytes());
            });
        }
        if !wait_or_stop(&mut child, answer_by(timeout)) {
            process::stop(&mut child);
            let _ = reader.join();
            return Err(SolverFailure::Timeout);
        }
        reader
            .join()
            .map_err(|_| SolverFailure::Start(format!("reading {name}'s answer failed")))
    })
}

/// Waits for the solver to exit by `end`; `false` if it did not, or if
/// this thread's work was stopped meanwhile (`deadline::Stop`).
fn wait_or_stop(child: &mut std::process::Child, end: Instant) -> bool {
    use wait_timeout::ChildExt;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        match child.wait_timeout(left.min(crate::deadline::POLL)) {
            Ok(Some(_)) => return true,
            Ok(None) if !left.is_zero() && !crate::deadline::stop_requested() => {}
            _ => return false,
        }
    }
}

/// The message for a solver stopped at its limit.
fn timed_out(name: &str, timeout: Duration) -> String {
    format!(
        "{name} did not answer within {:.1} s and was stopped",
        timeout.as_secs_f64()
    )
}

/// Runs `script` in a fresh solver with a timeout (the script should end
/// with `(check-sat)` and possibly `(get-value …)`).
pub fn run_script(profile: &Profile, script: &str, timeout: Duration) -> Reply {
    reply(profile, run_for_output(profile, script, timeout))
}

/// Runs `script` in a fresh solver with a timeout and returns what it
/// printed (for commands other than `check-sat`, such as `apply`).
pub fn run_for_output(
    profile: &Profile,
    script: &str,
    timeout: Duration,
) -> Result<String, String> {
    solver_stdout(
        &profile.name,
        &profile.command_line(timeout),
        script,
        timeout,
    )
    .map_err(|e| match e {
        SolverFailure::Start(why) => why,
        SolverFailure::Timeout => timed_out(&profile.name, timeout),
    })
}

/// The first line is the answer; a `sat`'s further lines are its values.
fn reply(profile: &Profile, stdout: Result<String, String>) -> Reply {
    let text = match stdout {
        Ok(t) => t,
        Err(e) => return Reply::without_values(Answer::Unknown(e)),
    };
    let mut lines = text.lines();
    let answer = match lines.next().map(str::trim) {
        Some("sat") => Answer::Sat,
        Some("unsat") => Answer::Unsat,
        Some(other) => Answer::Unknown(other.to_string()),
        None => Answer::Unknown(format!("no answer from {}", profile.name)),
    };
    let values = match answer {
        Answer::Sat => lines.collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    };
    Reply { answer, values }
}

/// [`run_script`] on the Z3 that `apc check` would use (for tests and
/// tools; the engine gets its solver from its options).
pub fn run_z3(script: &str, timeout: Duration) -> Reply {
    match default_z3() {
        Some(p) => run_script(&p, script, timeout),
        None => Reply::without_values(Answer::Unknown(
            "z3 not found on PATH: run solvers/install.sh".into(),
        )),
    }
}

/// Runs a script with `checks` `(check-sat)`s in a fresh solver; one
/// answer per check (`unknown` for each the solver did not give).
pub fn run_batch(profile: &Profile, script: &str, checks: usize, timeout: Duration) -> Vec<Answer> {
    run_batch_each(profile, script, checks, timeout, timeout)
}

/// [`run_batch`] with the solver's own limit at `each` per check, and the
/// whole run stopped after `timeout`.
pub fn run_batch_each(
    profile: &Profile,
    script: &str,
    checks: usize,
    each: Duration,
    timeout: Duration,
) -> Vec<Answer> {
    match solver_stdout(&profile.name, &profile.command_line(each), script, timeout) {
        Ok(text) => batch_answers(&text, checks),
        Err(_) => vec![Answer::Unknown("no answer".into()); checks],
    }
}

/// The answers of a script with several `(check-sat)`s, one per check.
fn batch_answers(text: &str, checks: usize) -> Vec<Answer> {
    let mut answers: Vec<Answer> = text
        .lines()
        .map(str::trim)
        .filter(|l| matches!(*l, "sat" | "unsat" | "unknown"))
        .map(|l| match l {
            "sat" => Answer::Sat,
            "unsat" => Answer::Unsat,
            _ => Answer::Unknown("unknown".into()),
        })
        .collect();
    // A crashed or missing solver answers nothing: that is `unknown`.
    answers.resize(checks, Answer::Unknown("no answer".into()));
    answers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_solver_that_ignores_its_timeout_is_stopped() {
        // A script that keeps z3 busy: the hard deadline must end it.
        let script = "(declare-fun x () Int)(declare-fun y () Int)(declare-fun z () Int)\
            (assert (= (+ (* x x x) (* y y y)) (* z z z)))(assert (> x 1))(assert (> y 1))(assert (> z 1))(check-sat)";
        let start = std::time::Instant::now();
        let a = run_z3(script, Duration::from_millis(300));
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "took {:?}",
            start.elapsed()
        );
        assert!(!matches!(a.answer, Answer::Unsat), "{a:?}");
    }

    #[test]
    fn runs_z3() {
        let a = run_z3(
            "(declare-const x Int)(assert (> x 2))(check-sat)(get-value (x))",
            Duration::from_secs(10),
        );
        assert_eq!(a.answer, Answer::Sat, "{a:?}");
        assert!(reply::int_values(&a.values).unwrap()[0].1 > 2.into());
        assert_eq!(
            run_z3("(assert false)(check-sat)", Duration::from_secs(10)).answer,
            Answer::Unsat
        );
    }
}
