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
//! next script starts a fresh one. Scripts with quantifiers run in a fresh
//! process each, as before: instantiation depends most on the history (a
//! nested-loop inference query, 30 ms fresh, took 3–6 s and `unknown`
//! after thirty others in the same process).
//!
//! Processes are started by one long-lived thread, so that the kernel's
//! parent-death signal (which fires when the *thread* that forked the
//! solver ends) kills them exactly when apc ends — also on SIGKILL — and
//! not when the worker thread that asked for one is done.

use super::profile::Profile;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

const MARKER: &str = "apc-helper-done";

/// What makes two processes interchangeable: binary, arguments, timeout.
type Key = (String, Vec<String>);

struct Warm {
    child: Child,
    stdin: ChildStdin,
    /// stdout, a line at a time, from a reader thread.
    lines: Receiver<String>,
}

impl Drop for Warm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

type SpawnRequest = (Key, Sender<Result<Warm, String>>);

/// The thread that forks every warm solver; it lives as long as apc.
fn spawner() -> &'static Mutex<Sender<SpawnRequest>> {
    static SPAWNER: OnceLock<Mutex<Sender<SpawnRequest>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name("apc-solver-spawner".into())
            .spawn(move || {
                for (key, reply) in rx {
                    let _ = reply.send(spawn(&key));
                }
            })
            .expect("spawning the solver-spawner thread");
        Mutex::new(tx)
    })
}

fn spawn(key: &Key) -> Result<Warm, String> {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(&key.0);
    // SAFETY: only an async-signal-safe syscall between fork and exec.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut child = command
        .args(&key.1)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e} (run solvers/install.sh)", key.0))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    // Every script of the session runs under this logic (scripts are
    // stripped of theirs), in a `push`/`pop` scope of its own.
    stdin
        .write_all(b"(set-logic ALL)\n")
        .map_err(|e| format!("cannot talk to {}: {e}", key.0))?;
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

fn start(key: &Key) -> Result<Warm, String> {
    let (tx, rx) = mpsc::channel();
    spawner()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((key.clone(), tx))
        .map_err(|_| "the solver-spawner thread is gone".to_string())?;
    rx.recv()
        .map_err(|_| "the solver-spawner thread is gone".to_string())?
}

/// The helper process of one engine run (none until the first script).
#[derive(Default)]
pub struct Helper {
    warm: Option<(Key, Warm)>,
}

impl std::fmt::Debug for Helper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.warm.is_some() {
            "Helper(running)"
        } else {
            "Helper(idle)"
        })
    }
}

impl Helper {
    /// Runs `script` on the run's `profile` solver: what it prints, as a
    /// fresh process would print it. The solver's own limit is `timeout`
    /// per check; past it plus a grace period the process is killed.
    pub fn run(
        &mut self,
        profile: &Profile,
        script: &str,
        timeout: Duration,
    ) -> Result<String, String> {
        if script.contains("(forall") || script.contains("(exists") {
            // Quantifier instantiation is where a solver's history shows
            // most: a nested-loop inference query Z3 answers in 30 ms
            // fresh took it 3–6 s (and `unknown`) after thirty others in
            // the same process. Quantified scripts get a process of their own.
            return super::solver_stdout(profile, script, timeout);
        }
        let ms = timeout.as_millis().max(1);
        let mut args = profile.args.clone();
        args.push(profile.timeout_arg(ms));
        let key: Key = (profile.command.clone(), args);
        if self.warm.as_ref().is_some_and(|(k, _)| *k != key) {
            self.warm = None;
        }
        let (_, warm) = match self.warm.take() {
            Some(w) => self.warm.insert(w),
            None => self.warm.insert((key.clone(), start(&key)?)),
        };
        match ask(warm, script, timeout) {
            Ok(text) => {
                // A solver that complained may be left in a state of its
                // own (a scope not popped): the next script gets a new one.
                if text.contains("(error") {
                    self.warm = None;
                }
                Ok(text)
            }
            Err(Failure::Dead) => {
                self.warm = None;
                Err(format!("{} stopped answering", profile.name))
            }
            Err(Failure::Timeout) => {
                self.warm = None;
                Err(format!(
                    "{} did not answer within {:.1} s and was stopped",
                    profile.name,
                    timeout.as_secs_f64()
                ))
            }
        }
    }
}

enum Failure {
    Dead,
    Timeout,
}

fn ask(warm: &mut Warm, script: &str, timeout: Duration) -> Result<String, Failure> {
    // The logic was set when the process started; the script's own
    // declarations and assertions live in a scope of their own.
    let body: String = script
        .lines()
        .filter(|l| !l.trim_start().starts_with("(set-logic"))
        .map(|l| format!("{l}\n"))
        .collect();
    let text = format!("(push 1)\n{body}(pop 1)\n(echo \"{MARKER}\")\n");
    if warm
        .stdin
        .write_all(text.as_bytes())
        .and_then(|_| warm.stdin.flush())
        .is_err()
    {
        return Err(Failure::Dead);
    }
    let deadline = Instant::now() + timeout + Duration::from_millis(500) + timeout / 10;
    let mut out = String::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match warm.lines.recv_timeout(left) {
            Ok(line) if line.contains(MARKER) => return Ok(out),
            Ok(line) => {
                out.push_str(&line);
                out.push('\n');
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(Failure::Dead),
            Err(mpsc::RecvTimeoutError::Timeout) => return Err(Failure::Timeout),
        }
    }
}
