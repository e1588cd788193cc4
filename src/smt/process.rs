//! How solver processes start and stop, so that none outlives apc.
//!
//! Every solver runs under a small shell watchdog in a process group of
//! its own: the watchdog starts the solver in the group and waits for it;
//! told to stop (SIGTERM, which the kernel sends it when the apc thread
//! that started it ends: the parent-death signal), it kills the whole
//! group. apc itself stops a solver by killing its group. Either way the
//! solver's own children die too: a `--z3` that is a wrapper script which
//! does not `exec` left the real solver running before.
//!
//! Sessions are started by rsmt2, which keeps the `Child` private: their
//! watchdog is reached through a launcher script that records its PID in
//! a file and becomes the group (`setsid`) before it `exec`s the watchdog.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

/// The solver's memory allocator, unless the user set its tunables: glibc's
/// `malloc` on transparent huge pages, its heap grown 64 MiB at a time.
/// A solver's start is mostly page faults (Z3 4.8 touches ~18 MB before
/// its first answer; on this project's 2-core virtual machine a fault
/// costs ~3 µs): 4,600 faults and 12 ms of CPU for a trivial query became
/// 450 and 5 ms, cvc5's 7.4 ms became 5.7 (docs/portfolio.md §3, "Solver
/// starts and stops"). Other C libraries ignore the variable.
const SOLVER_ENV: &str = r#"export GLIBC_TUNABLES="${GLIBC_TUNABLES-glibc.malloc.hugetlb=1:glibc.malloc.top_pad=67108864}"; "#;

/// The watchdog (`sh -c WATCHDOG name solver args…`): `$@` is the solver.
/// Its stdin is saved in fd 3 first, since a non-interactive shell gives a
/// background job /dev/null as stdin.
fn watchdog() -> String {
    format!(r#"{SOLVER_ENV}trap 'kill -KILL 0' TERM INT HUP; exec 3<&0; "$@" <&3 3<&- & wait $!"#)
}

/// The launcher of a session (`sh -c LAUNCHER pidfile watchdog solver
/// args…`): it writes its PID, makes itself the leader of a new session
/// and process group (`setsid` without forking, as it is not a group
/// leader yet), asks for SIGTERM when its parent thread ends (`setpriv`),
/// and becomes the watchdog: one PID throughout.
fn launcher() -> &'static str {
    static SCRIPT: OnceLock<String> = OnceLock::new();
    SCRIPT.get_or_init(|| match (tool("setsid", &["/bin/true"]), setpriv()) {
        (Some(setsid), Some(setpriv)) => format!(
            "echo $$ > \"$0\"; w=$1; shift; exec '{}' '{}' --pdeathsig TERM -- /bin/sh -c \"$w\" apc-solver \"$@\"",
            setsid.display(),
            setpriv.display()
        ),
        // Without util-linux: the solver in apc's group, killed alone.
        _ => format!("{SOLVER_ENV}echo $$ > \"$0\"; shift; exec \"$@\""),
    })
}

/// The launcher script and the arguments that follow it, before the
/// solver's command line: what a session runs as `/bin/sh -c …`.
pub(super) fn session_prefix(pid_file: &std::path::Path) -> [String; 3] {
    [
        launcher().to_string(),
        pid_file.to_string_lossy().into_owned(),
        watchdog(),
    ]
}

/// `setpriv` if it works here (util-linux; absent on some systems).
fn setpriv() -> Option<PathBuf> {
    static SETPRIV: OnceLock<Option<PathBuf>> = OnceLock::new();
    SETPRIV
        .get_or_init(|| tool("setpriv", &["--pdeathsig", "KILL", "--", "/bin/true"]))
        .clone()
}

/// A helper program by absolute path, found once so that a `PATH` holding
/// only the solver works too; `None` unless `args` run successfully.
fn tool(name: &str, args: &[&str]) -> Option<PathBuf> {
    let dirs = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    ["/usr/bin", "/bin"]
        .iter()
        .map(PathBuf::from)
        .chain(dirs)
        .map(|d| d.join(name))
        .find(|p| {
            Command::new(p)
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
}

/// Starts a solver (`name` for messages) under the watchdog, with piped
/// stdin and stdout, in a process group of its own. The kernel sends the
/// watchdog SIGTERM when the thread that started it ends.
pub(super) fn spawn(name: &str, command: &str, args: &[String]) -> Result<Child, String> {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(watchdog())
        .arg("apc-solver")
        .arg(command)
        .args(args);
    let apc = std::process::id();
    // SAFETY: only async-signal-safe syscalls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::setpgid(0, 0);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            // apc may have ended between the fork and the request: then
            // no signal will come, and the solver would outlive it.
            if libc::getppid() as u32 != apc {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {name}: {e} (run solvers/install.sh)"))
}

/// Kills the process group led by `pid` (the watchdog, the solver and
/// whatever the solver started), or `pid` alone if it leads none.
pub(super) fn kill_group(pid: i32) {
    // SAFETY: plain syscalls. The callers hold the PID of a process they
    // have not reaped yet, so it cannot have been reused.
    unsafe {
        if libc::kill(-pid, libc::SIGKILL) != 0 {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// Waits until the child `pid`, already killed, has exited, without
/// reaping it: its owner (rsmt2) reaps it next and finds it gone at once.
/// rsmt2 polls a killed solver every 10 ms and sleeps first if the kernel
/// has not caught up, which cost each session 10 ms on drop.
pub(super) fn await_exit(pid: i32) {
    // SAFETY: `waitid` writes only into `info`; WNOWAIT leaves the zombie
    // to its owner, so the PID stays taken until the owner reaps it.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        while libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT,
        ) != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
        {}
    }
}

/// Stops a child started by [`spawn`] and reaps it.
pub(super) fn stop(child: &mut Child) {
    kill_group(child.id() as i32);
    let _ = child.wait();
}
