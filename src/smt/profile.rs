//! Solver profiles: how to start a solver and what to tell it.
//!
//! The profiles are data, in `solvers/<name>.toml`, embedded at build time
//! (so the binary works from any directory). Which binary runs is found
//! at run time: the command-line flag, then the profile's environment
//! variable, then `PATH`, then `solvers/bin/` (next to the sources, or in
//! the current directory).

use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The solvers apc knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SolverKind {
    Z3,
    Cvc5,
}

impl SolverKind {
    pub const ALL: [SolverKind; 2] = [SolverKind::Z3, SolverKind::Cvc5];

    pub fn name(self) -> &'static str {
        match self {
            SolverKind::Z3 => "z3",
            SolverKind::Cvc5 => "cvc5",
        }
    }

    fn profile_text(self) -> &'static str {
        match self {
            SolverKind::Z3 => include_str!("../../solvers/z3.toml"),
            SolverKind::Cvc5 => include_str!("../../solvers/cvc5.toml"),
        }
    }

    /// The embedded profile, with the command not yet located.
    pub fn profile(self) -> Profile {
        // The files are part of the source tree: a parse error is a build
        // defect, caught by the unit test below.
        toml::from_str(self.profile_text()).expect("solvers/*.toml parses")
    }
}

/// One solver's profile (see `solvers/z3.toml`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Deserialize)]
pub struct Profile {
    pub name: String,
    /// The program to run: a name looked up as described above, or (after
    /// [`locate`]) the path found.
    pub command: String,
    /// The environment variable that names the binary.
    pub env_var: String,
    /// Arguments for an interactive SMT-LIB session on stdin.
    pub args: Vec<String>,
    /// The argument giving the solver its own time limit (`{ms}` is replaced).
    pub timeout_arg: String,
    /// Commands that set a time limit on the checks that follow in a
    /// session (`{ms}` is replaced) and lift it again, if the solver has one.
    #[serde(default)]
    pub check_limit: Option<(String, String)>,
    /// The command that prints one term's value after `sat` (`{term}` is
    /// replaced), where it is faster than `get-value` (solvers/README.md);
    /// `None`: `get-value`.
    #[serde(default)]
    pub value_command: Option<String>,
    /// The version the profile was written for (informational).
    #[serde(default)]
    pub version: String,
    /// Commands sent before a query with quantifiers.
    pub quantified_options: Vec<String>,
    /// Commands sent before a quantifier-free query.
    pub quantifier_free_options: Vec<String>,
    /// Commands that open a standalone script (a dump), so that `solver
    /// FILE` runs as the session does: the session's arguments that matter
    /// to the answer, as `set-option`s.
    #[serde(default)]
    pub file_options: Vec<String>,
}

impl Profile {
    /// The options to send before a query.
    pub fn options(&self, quantified: bool) -> &[String] {
        if quantified {
            &self.quantified_options
        } else {
            &self.quantifier_free_options
        }
    }

    /// What a session sends first: the options for the query's kind, then
    /// the query (`smtlib::query`).
    pub fn preamble(&self, quantified: bool, query: &str) -> String {
        let mut s = String::new();
        for o in self.options(quantified) {
            s.push_str(o);
            s.push('\n');
        }
        s.push_str(query);
        s
    }

    /// The self-contained script of a check: the file options, the preamble, `extra`
    /// assertions (blocked models), `(check-sat)` — what the dumps hold.
    pub fn script(&self, quantified: bool, query: &str, extra: &[String]) -> String {
        let mut s: String = self.file_options.iter().map(|o| format!("{o}\n")).collect();
        s.push_str(&self.preamble(quantified, query));
        for b in extra {
            s.push_str(b);
            s.push('\n');
        }
        s.push_str("(check-sat)\n");
        s
    }

    /// The command and arguments of a session limited to `timeout` (the
    /// solver's own limit included).
    pub fn command_line(&self, timeout: Duration) -> (String, Vec<String>) {
        let mut args = self.args.clone();
        args.push(self.timeout_arg(timeout.as_millis().max(1)));
        (self.command.clone(), args)
    }

    /// The solver's own timeout argument for `ms` milliseconds.
    pub fn timeout_arg(&self, ms: u128) -> String {
        self.timeout_arg.replace("{ms}", &ms.to_string())
    }
}

/// Finds the binary of `kind`'s profile: `flag` (a path given on the
/// command line), then the environment variable, then `PATH`, then
/// `solvers/bin/`. The error is one line saying what to do.
pub fn locate(kind: SolverKind, flag: Option<&Path>) -> Result<Profile, String> {
    let mut p = kind.profile();
    let found = match flag {
        Some(path) => {
            if !is_executable(path) {
                return Err(format!(
                    "{}: the {} binary given on the command line is not an executable file",
                    path.display(),
                    p.name
                ));
            }
            path.to_path_buf()
        }
        None => match std::env::var_os(&p.env_var).filter(|v| !v.is_empty()) {
            Some(v) => {
                let path = PathBuf::from(&v);
                let path = if path.components().count() == 1 {
                    search_path(&path.to_string_lossy()).unwrap_or(path)
                } else {
                    path
                };
                if !is_executable(&path) {
                    return Err(format!(
                        "{}={}: not an executable file",
                        p.env_var,
                        path.display()
                    ));
                }
                path
            }
            None => search_path(&p.command)
                .or_else(|| bundled(&p.command))
                .ok_or_else(|| {
                    format!(
                        "{} not found on PATH: run solvers/install.sh (or pass --{} PATH, or set {})",
                        p.command, p.name, p.env_var
                    )
                })?,
        },
    };
    p.command = found.to_string_lossy().into_owned();
    Ok(p)
}

/// The Z3 that `locate` finds without a flag, looked up once per process
/// (the engine's default helper solver: `nc::Options::default()` is built
/// per target and per cached query).
pub fn default_z3() -> Option<Profile> {
    static Z3: std::sync::OnceLock<Option<Profile>> = std::sync::OnceLock::new();
    Z3.get_or_init(|| locate(SolverKind::Z3, None).ok()).clone()
}

/// The cvc5 that `locate` finds without a flag, looked up once per
/// process (the second opinion on nonlinear certificate checks).
pub fn default_cvc5() -> Option<Profile> {
    static CVC5: std::sync::OnceLock<Option<Profile>> = std::sync::OnceLock::new();
    CVC5.get_or_init(|| locate(SolverKind::Cvc5, None).ok())
        .clone()
}

/// A solver binary by its environment variable, then `PATH`, then
/// `solvers/bin/` (for binaries without a profile of their own, such as
/// the Horn engine's Z3); `None` if there is none, an error if the
/// variable names something that is not an executable.
pub fn locate_binary(command: &str, env_var: &str) -> Result<Option<PathBuf>, String> {
    if let Some(v) = std::env::var_os(env_var).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(&v);
        return match is_executable(&path) {
            true => Ok(Some(path)),
            false => Err(format!(
                "{env_var}={}: not an executable file",
                path.display()
            )),
        };
    }
    Ok(search_path(command).or_else(|| bundled(command)))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn search_path(command: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .find(|p| is_executable(p))
}

/// `solvers/bin/<command>` next to the sources or in the current directory.
fn bundled(command: &str) -> Option<PathBuf> {
    [
        Path::new(env!("CARGO_MANIFEST_DIR")).join("solvers/bin"),
        PathBuf::from("solvers/bin"),
    ]
    .into_iter()
    .map(|dir| dir.join(command))
    .find(|p| is_executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_profiles_parse() {
        for k in SolverKind::ALL {
            let p = k.profile();
            assert_eq!(p.name, k.name());
            assert!(p.timeout_arg.contains("{ms}"));
            let (set, lift) = p.check_limit.expect("a per-check limit");
            assert!(set.contains("{ms}") && lift.starts_with("(set-option"));
        }
        let z3 = SolverKind::Z3.profile();
        assert!(z3.quantified_options.iter().any(|o| o.contains("mbqi")));
        // MBQI only on φ̂, the arithmetic solver only on the unfoldings.
        assert!(
            !z3.quantifier_free_options
                .iter()
                .any(|o| o.contains("mbqi"))
        );
        assert!(
            z3.quantifier_free_options
                .iter()
                .any(|o| o.contains("arith.solver"))
        );
    }
}
