//! The exit statuses of `apc`, as the command-line contract documents them
//! (`docs/cli.md`). Every command returns one of these; no bare numbers.

use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: done. `check`: every target unreachable. `run`: the run ended.
    Ok,
    /// 1: `run`: a runtime error. `check`: some target reachable.
    Found,
    /// 2: the input or the command line is bad (parse or type error,
    /// missing file, missing solver, unwritable output).
    BadInput,
    /// 3: `check`: none reachable, but some unknown.
    Undecided,
    /// 4: `run`: a step or call-depth limit stopped the run.
    Limit,
    /// 70: an internal error of apc (BSD's EX_SOFTWARE): please report it.
    Internal,
}

impl ExitStatus {
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Ok => 0,
            ExitStatus::Found => 1,
            ExitStatus::BadInput => 2,
            ExitStatus::Undecided => 3,
            ExitStatus::Limit => 4,
            ExitStatus::Internal => 70,
        }
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> ExitCode {
        ExitCode::from(s.code())
    }
}
