//! Shared helpers for the integration tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

/// A program no engine decides, for the tests of deadlines and
/// cancellation (`tests/fixtures/`, outside the corpus).
pub fn undecided_program() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/undecided_doubling.mc")
}

/// Every `.mc` file of `tests/programs/`, sorted.
pub fn programs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(programs_dir())
        .expect("tests/programs exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "mc"))
        .collect();
    v.sort();
    v
}

/// The PIDs that fake solvers recorded in `dir`, one file named by its PID
/// each (other files are skipped).
pub fn recorded_pids(dir: &Path) -> Vec<i32> {
    std::fs::read_dir(dir)
        .expect("the PID directory")
        .filter_map(|e| e.ok()?.file_name().to_string_lossy().parse().ok())
        .collect()
}

/// The processes of `pids` still alive (a zombie is dead) once `grace` has
/// passed, or as soon as none is. A killed process dies asynchronously: one
/// caught in `execve` with SIGKILL pending runs until the exec is done, a
/// few milliseconds after apc has ended; a leaked solver lives on.
pub fn still_alive_after(pids: &[i32], grace: Duration) -> Vec<i32> {
    let alive = |pid: &i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_none_or(|(_, rest)| !rest.starts_with(" Z"))
        })
    };
    let end = Instant::now() + grace;
    while pids.iter().any(alive) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    pids.iter().copied().filter(alive).collect()
}

/// Runs the `apc` binary.
pub fn apc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_apc"))
        .args(args)
        .output()
        .expect("apc runs")
}

/// The `// @tag {json} => {json}` lines of a program, as (left, right).
pub fn annotations(text: &str, tag: &str) -> Vec<(serde_json::Value, Option<serde_json::Value>)> {
    let prefix = format!("// @{tag} ");
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix(&prefix))
        .map(|rest| {
            let (left, right) = match rest.split_once("=>") {
                Some((l, r)) => (l, Some(r)),
                None => (rest, None),
            };
            let parse = |s: &str| {
                serde_json::from_str::<serde_json::Value>(s.trim())
                    .unwrap_or_else(|e| panic!("bad @{tag} JSON `{s}`: {e}"))
            };
            (parse(left), right.map(parse))
        })
        .collect()
}

/// A run size from the environment (`FUZZ_CASES=…`), or `default`.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A directory with a fake solver named `z3` (and nothing else on PATH
/// but the basics the wrapper needs).
pub fn fake_solver(name: &str, script: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("apc-fake-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("z3");
    std::fs::write(&p, format!("#!/bin/sh\n{script}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

pub fn with_path(dir: &Path, args: &[&str]) -> Command {
    let path = format!("{}:/usr/bin:/bin", dir.display());
    let mut c = Command::new(env!("CARGO_BIN_EXE_apc"));
    c.args(args).env("PATH", path).env_remove("APC_Z3");
    c
}

/// A small deterministic generator (xorshift), so that failures of the
/// generated-program tests reproduce from their seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: u32) -> bool {
        self.below(100) < u64::from(pct)
    }
}

/// `apc run --format json` with the witness of a report (`apc check`'s or
/// `apc compact`'s JSON): the independent replay.
pub fn replay(file: &str, witness: &serde_json::Value) -> serde_json::Value {
    fn show(v: &serde_json::Value) -> String {
        match v {
            serde_json::Value::Array(xs) => {
                format!("[{}]", xs.iter().map(show).collect::<Vec<_>>().join(","))
            }
            v => v.to_string(),
        }
    }
    let args: Vec<String> = (witness["args"].as_object().expect("args object").iter())
        .map(|(k, v)| format!("{k}={}", show(v)))
        .collect();
    let input: Vec<String> = (witness["input"].as_array().expect("input list").iter())
        .map(|v| v.to_string())
        .collect();
    let out = apc(&[
        "run",
        file,
        "--args",
        &args.join(","),
        "--input",
        &input.join(","),
        "--format",
        "json",
    ]);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "apc run: not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Whether Graphviz's `dot` renders `graph` (as SVG), or what it said.
pub fn renders_with_dot(graph: &[u8]) -> Result<(), String> {
    let mut child = std::process::Command::new("dot")
        .arg("-Tsvg")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("dot: {e}"))?;
    use std::io::Write;
    child.stdin.take().unwrap().write_all(graph).unwrap();
    let r = child.wait_with_output().unwrap();
    match r.status.success() {
        true => Ok(()),
        false => Err(String::from_utf8_lossy(&r.stderr).into_owned()),
    }
}

/// `work` on each item, shared out to two threads (items are taken in
/// turn, so a slow one does not hold up the rest); the results in the
/// items' order. For tests that mostly wait on a solver.
pub fn on_two_threads<T: Sync, R: Send>(items: Vec<T>, work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = work(item);
                    results.lock().unwrap().push((i, r));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}
