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
//! watchdog is a launcher script that becomes the group (`setsid`) and
//! `exec`s the watchdog, keeping its PID; apc finds it among the children
//! of the thread that started it ([`children_of_this_thread`]), or, on a
//! kernel without that list, in a file the launcher writes it to.

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

/// The PIDs of the processes this thread started that are still its
/// children (`/proc/thread-self/children`, Linux 3.5 and later with
/// `CONFIG_PROC_CHILDREN`); `None` where the kernel does not list them.
pub(super) fn children_of_this_thread() -> Option<Vec<i32>> {
    let text = std::fs::read_to_string("/proc/thread-self/children").ok()?;
    Some(
        text.split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect(),
    )
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
    spawn_at(name, command, args, this_threads_niceness())
}

/// The niceness of the calling thread (on Linux a thread's own, inherited
/// by the threads and processes it starts).
pub(super) fn this_threads_niceness() -> i32 {
    // SAFETY: a plain syscall about this thread. `getpriority` may return
    // -1 as a value; errno is not needed, as the call cannot fail here.
    unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
}

/// [`spawn`], the solver at `niceness` (which a thread at another one,
/// such as the spawner of warm processes, passes on). Lowering the
/// priority always works; raising it back may not, and then it stays.
pub(super) fn spawn_at(
    name: &str,
    command: &str,
    args: &[String],
    niceness: i32,
) -> Result<Child, String> {
    let lower_by = niceness - this_threads_niceness();
    let mut cmd = match (setpriv(), nice_by(lower_by)) {
        (Some(setpriv), Some(nice)) => spawned(&setpriv, &nice),
        _ => forked(niceness),
    };
    cmd.arg(command)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {name}: {e} (run solvers/install.sh)"))
}

/// The watchdog started without a fork of apc: the standard library uses
/// `posix_spawn` (no page tables copied) when no code runs between fork
/// and exec. A fork of a process with 1.8 GB resident took 65 ms, during
/// which apc's other threads cannot allocate (docs/portfolio.md §3). So
/// the steps run as programs instead: its own group (`posix_spawn`'s),
/// `setpriv` for the parent-death signal, `nice` to lower its priority.
/// The watchdog checks first that apc is still its parent.
fn spawned(setpriv: &std::path::Path, nice: &[String]) -> Command {
    use std::os::unix::process::CommandExt;
    let apc = std::process::id();
    let mut cmd = Command::new(setpriv);
    cmd.args(["--pdeathsig", "TERM", "--"])
        .args(nice)
        .args(["/bin/sh", "-c"])
        .arg(format!(r#"[ "$PPID" = {apc} ] || exit 1; {}"#, watchdog()))
        .arg("apc-solver")
        .process_group(0);
    cmd
}

/// The command line prefix that lowers a program's priority by `by` (none
/// when it need not); `None` if it must and `nice` cannot be found.
fn nice_by(by: i32) -> Option<Vec<String>> {
    if by <= 0 {
        return Some(vec![]);
    }
    static NICE: OnceLock<Option<PathBuf>> = OnceLock::new();
    let nice = NICE.get_or_init(|| tool("nice", &["/bin/true"])).as_ref()?;
    Some(vec![
        nice.to_string_lossy().into_owned(),
        "-n".into(),
        by.to_string(),
    ])
}

/// The watchdog started by a fork, each step a syscall in the child
/// (without util-linux's `setpriv`).
fn forked(niceness: i32) -> Command {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(watchdog()).arg("apc-solver");
    let apc = std::process::id();
    // SAFETY: only async-signal-safe syscalls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::setpgid(0, 0);
            libc::setpriority(libc::PRIO_PROCESS, 0, niceness);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            // apc may have ended between the fork and the request: then
            // no signal will come, and the solver would outlive it.
            if libc::getppid() as u32 != apc {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
    cmd
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    const PROBE: [&str; 2] = ["-c", "cut -d' ' -f19 /proc/self/stat"];

    /// The niceness a program started by `cmd` runs at, as the kernel
    /// reports it (field 19 of `/proc/self/stat`).
    fn niceness_of(mut cmd: Command) -> i32 {
        let mut child = (cmd.arg("/bin/sh").args(PROBE))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let _ = child.wait();
        out.trim().parse().unwrap()
    }

    #[test]
    fn a_solver_starts_at_the_niceness_it_is_asked_for() {
        let here = this_threads_niceness();
        let (setpriv, nice) = (setpriv().unwrap(), nice_by(3).unwrap());
        assert_eq!(niceness_of(spawned(&setpriv, &[])), here);
        assert_eq!(niceness_of(spawned(&setpriv, &nice)), here + 3);
        assert_eq!(niceness_of(forked(here)), here);
        assert_eq!(niceness_of(forked(here + 3)), here + 3);
        // This thread's own niceness is untouched.
        assert_eq!(this_threads_niceness(), here);
    }
}
