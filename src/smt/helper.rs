//! Warm solver processes for the engine's helper queries (pruning of
//! infeasible loop-body backbones, counter inference): many small scripts,
//! each answered in about a millisecond, where starting a solver costs
//! 20–30 ms. Building HWM's condition asked 61 of them, 1.8 s of process
//! starts; with warm processes the build is bounded by the engine itself.
//!
//! A script runs in a `push`/`pop` scope of its own (so nothing of an
//! earlier one survives; `(reset)` would do too, but costs Z3 6–9 ms, a
//! scope 0.3 ms), and is followed by an `echo` of a marker: the answer is
//! everything the solver prints before the marker. A process that misses
//! its deadline is killed and forgotten, one that printed an error is not
//! reused; one that answered goes back to the pool.
//!
//! Processes are started by one long-lived thread, so that the kernel's
//! parent-death signal (which fires when the *thread* that forked the
//! solver ends) kills them exactly when apc ends — also on SIGKILL — and
//! not when the worker thread that first asked for one is done.

use super::profile::Profile;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

const MARKER: &str = "apc-helper-done";

/// Idle processes kept per solver configuration (one per worker is the
/// most ever in use at once, `--jobs` at a time).
const MAX_IDLE: usize = 4;

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

fn pool() -> &'static Mutex<Vec<(Key, Warm)>> {
    static POOL: OnceLock<Mutex<Vec<(Key, Warm)>>> = OnceLock::new();
    POOL.get_or_init(|| Mutex::new(Vec::new()))
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

fn checkout(key: &Key) -> Result<Warm, String> {
    {
        let mut idle = pool().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = idle.iter().position(|(k, _)| k == key) {
            return Ok(idle.swap_remove(i).1);
        }
    }
    let (tx, rx) = mpsc::channel();
    spawner()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((key.clone(), tx))
        .map_err(|_| "the solver-spawner thread is gone".to_string())?;
    rx.recv()
        .map_err(|_| "the solver-spawner thread is gone".to_string())?
}

fn checkin(key: Key, warm: Warm) {
    let mut idle = pool().lock().unwrap_or_else(|e| e.into_inner());
    if idle.iter().filter(|(k, _)| *k == key).count() < MAX_IDLE {
        idle.push((key, warm));
    }
}

/// Runs `script` on a warm `profile` solver: what it prints, as a fresh
/// process would print it. The solver's own limit is `timeout` per check;
/// past it plus a grace period the process is killed.
pub fn run(profile: &Profile, script: &str, timeout: Duration) -> Result<String, String> {
    let ms = timeout.as_millis().max(1);
    let mut args = profile.args.clone();
    args.push(profile.timeout_arg(ms));
    let key: Key = (profile.command.clone(), args);
    // A process that died since it was pooled (its answer stream ended)
    // is replaced once.
    for attempt in 0..2 {
        let mut warm = checkout(&key)?;
        match ask(&mut warm, script, timeout) {
            Ok(text) => {
                // A solver that complained may be left in a state of its
                // own (a scope not popped): not pooled again.
                if !text.contains("(error") {
                    checkin(key, warm);
                }
                return Ok(text);
            }
            Err(Failure::Dead) if attempt == 0 => continue,
            Err(Failure::Dead) => return Err(format!("{} stopped answering", profile.name)),
            Err(Failure::Timeout) => {
                return Err(format!(
                    "{} did not answer within {:.1} s and was stopped",
                    profile.name,
                    timeout.as_secs_f64()
                ));
            }
        }
    }
    unreachable!("the loop returns on its second attempt")
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
