//! An interactive solver process over rsmt2, that another thread can kill.
//!
//! rsmt2 owns the process and keeps its `Child` private, so a thread
//! blocked in `check-sat` cannot be interrupted through it. The solver is
//! therefore started through a launcher that writes its PID to a file and
//! becomes the solver's watchdog in a process group of its own (see
//! `process`): killing the group, or apc ending (even by SIGKILL), leaves
//! no solver behind.
//!
//! A session follows the token of the work that started it
//! (`deadline::Stop`): when the token stops, its process group is killed,
//! and the blocked reader sees end of file.

use super::Answer;
use super::process;
use super::profile::Profile;
use super::reply::{self, one_line};
use crate::deadline::{SolverUse, Stop};
use rsmt2::parse::{ExprParser, ValueParser};
use rsmt2::{SmtConf, SmtRes, SmtStyle, Solver};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The live sessions and the tokens they follow; one thread watches them
/// all while there are any, and kills the process group of each whose
/// token stops (its deadline passed, or its work's switch thrown), so a
/// thread blocked in `check-sat` sees end of file.
static WATCHED: Mutex<Vec<Watched>> = Mutex::new(Vec::new());
static WATCHER_RUNNING: AtomicBool = AtomicBool::new(false);

struct Watched {
    id: u64,
    /// The watchdog's PID, the leader of the solver's process group.
    pid: i32,
    stop: Stop,
}

fn watch(id: u64, pid: i32, stop: &Stop) {
    let mut watched = WATCHED.lock().unwrap_or_else(|e| e.into_inner());
    if stop.is_stopped() {
        // Stopped while starting: kill at once.
        super::process::kill_group(pid);
    }
    watched.push(Watched {
        id,
        pid,
        stop: stop.clone(),
    });
    if !WATCHER_RUNNING.swap(true, Ordering::SeqCst) {
        std::thread::spawn(watcher);
    }
}

/// Kills the groups of the sessions whose token stopped, every
/// [`crate::deadline::POLL`]; ends when no session is left.
fn watcher() {
    loop {
        std::thread::sleep(crate::deadline::POLL);
        let watched = WATCHED.lock().unwrap_or_else(|e| e.into_inner());
        for w in watched.iter().filter(|w| w.stop.is_stopped()) {
            // The PID cannot have been reused: a session unregisters under
            // this lock before its process is reaped (rsmt2 reaps on drop).
            super::process::kill_group(w.pid);
        }
        if watched.is_empty() {
            WATCHER_RUNNING.store(false, Ordering::SeqCst);
            return;
        }
    }
}

/// How many sessions' processes are still running (a race's losers wind
/// down after it returns).
pub fn running() -> usize {
    WATCHED.lock().unwrap_or_else(|e| e.into_inner()).len()
}

fn unwatch(id: u64) {
    let mut watched = WATCHED.lock().unwrap_or_else(|e| e.into_inner());
    watched.retain(|w| w.id != id);
}

/// rsmt2's parser hooks: expressions and values are kept as text.
#[derive(Clone, Copy)]
pub struct TextParser;

impl<'a> ExprParser<String, (), &'a str> for TextParser {
    fn parse_expr(self, input: &'a str, _: ()) -> SmtRes<String> {
        Ok(input.into())
    }
}

impl<'a> ValueParser<String, &'a str> for TextParser {
    fn parse_value(self, input: &'a str) -> SmtRes<String> {
        Ok(input.into())
    }
}

static NEXT_SESSION: AtomicU64 = AtomicU64::new(0);

/// A solver process, started and not yet a session's.
pub(super) struct Started {
    solver: Solver<TextParser>,
    /// The watchdog's PID, the leader of the solver's process group.
    pid: i32,
}

static NEXT_PID_FILE: AtomicU64 = AtomicU64::new(0);

/// Starts `profile`'s solver under its watchdog (see `process`), from this
/// thread: the solver ends when this thread does.
///
/// The watchdog's PID is that of the launcher, a child of this thread:
/// the one new in this thread's list of children (`/proc/thread-self/
/// children`). Where the kernel has no such list, the launcher writes its
/// PID into a file, which is left behind if apc ends before reading it.
pub(super) fn launch(profile: &Profile) -> Result<Started, String> {
    let found_by = PidSource::here();
    // The Yices-2 style has no default arguments: the profile gives all.
    let mut conf: SmtConf = SmtStyle::Yices2.new("/bin/sh");
    conf.option("-c");
    for a in process::session_prefix(found_by.file()) {
        conf.option(a);
    }
    conf.option(profile.command.clone());
    for a in &profile.args {
        conf.option(a.clone());
    }
    let solver =
        Solver::new(conf, TextParser).map_err(|e| format!("cannot start {}: {e}", profile.name))?;
    match found_by.pid() {
        Some(pid) => Ok(Started { solver, pid }),
        None => Err(format!("{} did not start", profile.name)),
    }
}

/// Where the launcher's PID is found.
enum PidSource {
    /// The child of this thread not among these.
    NewChild(Vec<i32>),
    /// The file the launcher writes it to.
    File(PathBuf),
}

impl PidSource {
    /// This thread's children if the kernel lists them, else a fresh file.
    fn here() -> PidSource {
        match process::children_of_this_thread() {
            Some(before) => PidSource::NewChild(before),
            None => {
                let n = NEXT_PID_FILE.fetch_add(1, Ordering::Relaxed);
                let name = format!("apc-{}-{n}.pid", std::process::id());
                PidSource::File(std::env::temp_dir().join(name))
            }
        }
    }

    /// Where the launcher writes its PID (nowhere, when it is found among
    /// the children).
    fn file(&self) -> &std::path::Path {
        match self {
            PidSource::NewChild(_) => std::path::Path::new("/dev/null"),
            PidSource::File(f) => f,
        }
    }

    /// The launcher's PID, once it has started.
    fn pid(&self) -> Option<i32> {
        match self {
            PidSource::NewChild(before) => {
                let now = process::children_of_this_thread()?;
                now.into_iter().find(|pid| !before.contains(pid))
            }
            PidSource::File(f) => pid_from_file(f),
        }
    }
}

/// The PID the launcher writes into `file` before it execs the watchdog
/// (waited for up to 5 s); the file is removed.
fn pid_from_file(file: &std::path::Path) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .filter(|s| s.ends_with('\n'))
            .and_then(|s| s.trim().parse::<i32>().ok())
        {
            break Some(pid);
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let _ = std::fs::remove_file(file);
    pid
}

/// A running solver.
pub struct Session {
    solver: Option<Solver<TextParser>>,
    id: u64,
    /// The watchdog's PID, the leader of the solver's process group.
    pid: i32,
    stop: Stop,
    pub solver_name: String,
    /// Why the session can no longer be trusted: after a failed check or
    /// `get-value` (an error that a command earlier printed unread, a
    /// reply that did not parse), the replies still in the pipe belong to
    /// other questions, and the next check could read a `sat` or `unsat`
    /// meant for another. Every later check is then `unknown`.
    broken: Option<String>,
    /// The profile's command for one value, if it has one.
    value_command: Option<String>,
}

impl Session {
    /// Starts `profile`'s solver, following this thread's token.
    pub fn start(profile: &Profile) -> Result<Session, String> {
        Session::start_until(profile, None)
    }

    /// [`Session::start`], stopped at `deadline` as well.
    pub fn start_until(profile: &Profile, deadline: Option<Instant>) -> Result<Session, String> {
        let stop = Stop::nested_until(deadline);
        if stop.is_stopped() {
            return Err("cancelled".into());
        }
        let _t = crate::deadline::timed("starting a solver");
        let Started { solver, pid } = match super::spare::take(profile) {
            Some(ready) => ready,
            None => launch(profile)?,
        };
        let id = NEXT_SESSION.fetch_add(1, Ordering::Relaxed);
        watch(id, pid, &stop);
        Ok(Session {
            solver: Some(solver),
            id,
            pid,
            stop,
            solver_name: profile.name.clone(),
            broken: None,
            value_command: profile.value_command.clone(),
        })
    }

    /// Whether the session's token stopped (its answers are cut short).
    pub fn is_stopped(&self) -> bool {
        self.stop.is_stopped()
    }

    fn solver(&mut self) -> &mut Solver<TextParser> {
        self.solver
            .as_mut()
            .expect("the solver lives as long as the session")
    }

    /// Sends SMT-LIB commands that produce no response (declarations,
    /// definitions, assertions, options the solver supports).
    pub fn send(&mut self, text: &str) -> Result<(), String> {
        self.stop.add_solver_use(SolverUse::of_script(text));
        let _t = crate::deadline::timed("sending to the solver");
        let s = self.solver();
        s.write_all(text.as_bytes())
            .and_then(|_| s.write_all(b"\n"))
            .and_then(|_| s.flush())
            .map_err(|e| self.failure(&e.to_string()))
    }

    /// Why the solver failed: cancelled, or the given error.
    fn failure(&self, error: &str) -> String {
        if self.stop.is_stopped() {
            "cancelled".into()
        } else {
            format!("{} failed: {}", self.solver_name, one_line(error))
        }
    }

    pub fn check(&mut self) -> Answer {
        if let Some(why) = &self.broken {
            return Answer::Unknown(why.clone());
        }
        self.stop.add_solver_use(SolverUse::CHECK);
        let _t = crate::deadline::timed("solving");
        match self.solver().check_sat_or_unk() {
            Ok(Some(true)) => Answer::Sat,
            Ok(Some(false)) => Answer::Unsat,
            Ok(None) => Answer::Unknown(format!("{} answered unknown", self.solver_name)),
            Err(e) => {
                let msg = e
                    .iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join(": ");
                Answer::Unknown(self.break_off(&msg))
            }
        }
    }

    /// Marks the session broken after `error`; the reason, for this and
    /// every later check.
    fn break_off(&mut self, error: &str) -> String {
        let why = self.failure(error);
        self.broken = Some(why.clone());
        why
    }

    /// The values of integer terms after `sat`: by the profile's value
    /// command if it has one, else by `get-value`.
    pub fn int_values(&mut self, exprs: &[String]) -> Result<Vec<num_bigint::BigInt>, String> {
        if exprs.is_empty() {
            return Ok(vec![]);
        }
        if let Some(why) = &self.broken {
            return Err(why.clone());
        }
        let _t = crate::deadline::timed("solving");
        if let Some(command) = self.value_command.clone() {
            return self.values_one_by_one(&command, exprs);
        }
        let asked: usize = exprs.iter().map(|e| e.len() + 3).sum();
        self.stop.add_solver_use(SolverUse {
            checks: 0,
            bytes: (asked + "(get-value ()\n".len()) as u64,
        });
        let answer: Vec<(String, String)> = match self.solver().get_values(exprs) {
            Ok(a) => a,
            Err(e) => {
                let why = format!("get-value: {}", one_line(&e.to_string()));
                return Err(self.break_off(&why));
            }
        };
        if answer.len() != exprs.len() {
            let why = format!(
                "get-value: {} values for {} terms",
                answer.len(),
                exprs.len()
            );
            return Err(self.break_off(&why));
        }
        answer
            .iter()
            .map(|(_, v)| {
                reply::int(v).ok_or_else(|| format!("get-value: `{v}` is not an integer"))
            })
            .collect()
    }
}

impl Session {
    /// One value command per term, then an `echo` of a marker: the values
    /// are the s-expressions printed before it.
    fn values_one_by_one(
        &mut self,
        command: &str,
        exprs: &[String],
    ) -> Result<Vec<num_bigint::BigInt>, String> {
        let mut text: String = (exprs.iter())
            .map(|e| command.replace("{term}", e) + "\n")
            .collect();
        text.push_str(&format!("(echo \"{VALUES_END}\")"));
        self.send(&text)?;
        let printed = match self.read_until_marker() {
            Ok(p) => p,
            Err(e) => return Err(self.break_off(&format!("values: {e}"))),
        };
        let values = reply::sexprs(&printed);
        if values.len() != exprs.len() || values.iter().any(|v| v.starts_with("(error")) {
            let why = format!("values: `{}` for {} terms", one_line(&printed), exprs.len());
            return Err(self.break_off(&why));
        }
        (values.iter())
            .map(|v| reply::int(v).ok_or_else(|| format!("values: `{v}` is not an integer")))
            .collect()
    }

    /// What the solver prints up to a line holding the marker alone.
    fn read_until_marker(&mut self) -> Result<String, String> {
        let solver = self.solver();
        let mut printed = Vec::new();
        let mut line = Vec::new();
        let mut byte = [0u8];
        loop {
            match solver.read(&mut byte) {
                Ok(0) => return Err("the solver ended".into()),
                Ok(_) => {}
                Err(e) => return Err(e.to_string()),
            }
            if byte[0] != b'\n' {
                line.push(byte[0]);
                continue;
            }
            let text = String::from_utf8_lossy(&line);
            if text.trim().trim_matches('"') == VALUES_END {
                return Ok(String::from_utf8_lossy(&printed).into_owned());
            }
            printed.append(&mut line);
            printed.push(b'\n');
        }
    }
}

/// The marker printed after the values asked one by one.
const VALUES_END: &str = "apc-values-end";

impl Drop for Session {
    fn drop(&mut self) {
        // Unregister first: once rsmt2 reaps the process its PID may be
        // reused. The group goes before rsmt2 reaps the watchdog, so that
        // no child of a wrapper script is left.
        unwatch(self.id);
        super::process::kill_group(self.pid);
        super::process::await_exit(self.pid);
        drop(self.solver.take());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command that the solver rejects prints an error that no one reads
    /// at once; the next check reads it, and the checks after it must not
    /// read each other's answers (an `unsat` for a satisfiable question).
    #[test]
    fn after_an_error_no_check_reads_another_checks_answer() {
        let z3 = super::super::profile::default_z3().expect("z3 (solvers/install.sh)");
        let mut s = Session::start(&z3).expect("z3 starts");
        s.send("(declare-fun x () Int)\n(assert (> y 0))").unwrap();
        s.send("(push 1)\n(assert (< x 0))\n(assert (> x 0))")
            .unwrap();
        let first = s.check();
        assert!(matches!(first, Answer::Unknown(_)), "{first:?}");
        s.send("(pop 1)\n(push 1)\n(assert (> x 0))").unwrap();
        let second = s.check();
        assert_ne!(
            second,
            Answer::Unsat,
            "a satisfiable question read as unsat"
        );
    }

    /// The launcher's PID is found among this thread's children: the
    /// session's process group is the solver's, and no PID file is
    /// written (one was left in the temporary directory whenever apc ended
    /// while a solver was starting).
    #[test]
    fn a_session_knows_its_solver_without_a_pid_file() {
        let z3 = super::super::profile::default_z3().expect("z3 (solvers/install.sh)");
        let pid_files = || -> Vec<String> {
            let prefix = format!("apc-{}-", std::process::id());
            (std::fs::read_dir(std::env::temp_dir()).unwrap().flatten())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix) && n.ends_with(".pid"))
                .collect()
        };
        assert!(
            process::children_of_this_thread().is_some(),
            "no /proc/thread-self/children"
        );
        let started = launch(&z3).expect("z3 starts");
        assert!(pid_files().is_empty(), "{:?}", pid_files());
        // The PID leads the solver's group: killing the group ends z3.
        let children = process::children_of_this_thread().unwrap();
        assert!(
            children.contains(&started.pid),
            "{children:?} {}",
            started.pid
        );
        process::kill_group(started.pid);
        process::await_exit(started.pid);
    }
}
