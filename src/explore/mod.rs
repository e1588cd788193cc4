//! The thesis's symbolic executor (Rozhoň, *Nested loops and path
//! explosion in symbolic execution*, chapters 4–5; `docs/thesis-executor.md`).
//!
//! - [`program`]: the program as the executor walks it;
//! - [`state`]: symbolic states (storage cells and frames, the call stack,
//!   the path condition);
//! - [`solver`]: the one warm solver session of a run (push/pop), with
//!   [`unary`]'s local decisions;
//! - [`machine`]: what every step and every feature works on (the program,
//!   terms, the solver, options, statistics, main's inputs);
//! - [`eval`]: expressions, conditions and places on a state (methods of
//!   the machine);
//! - the features, each on the machine and its own state: [`subsume`]
//!   (path subsumption: lazy annotations, loop invariants), [`guide`]
//!   (guidance towards one target by its necessary condition), [`witness`]
//!   (an error's witness and its replay on the interpreter), [`summary`]
//!   (PDA loop summarisation, `--summarization`), [`merge`] (state merging)
//!   and [`coverage`] (the edges run);
//! - [`exec`]: the [`exec::Executor`]: one step of a state, the worklist
//!   rules at branches, checks, and the run's bookkeeping; the only module
//!   that knows the features together (none of them knows it);
//! - [`run`]: the run loop, the worklist's strategies ([`search`]), merging
//!   decisions ([`query_count`]), limits;
//! - [`decider`]: the engines of the contract ([`GuidedExecutor`],
//!   [`WitnessSearch`]);
//! - here: the options, the statistics, the report, and [`explore`].
//!
//! Knows the front end (through `db`), the IR, terms, the solver layer and
//! witnesses; of the other engines only `nc`, for guidance (the goal's
//! necessary condition).

mod coverage;
pub mod decider;
mod eval;
mod exec;
mod guide;
mod machine;
mod merge;
mod program;
pub mod query_count;
mod run;
mod search;
mod solver;
mod state;
mod subsume;
mod summary;
mod tree;
mod unary;
mod witness;

#[cfg(test)]
mod tests;

pub use decider::{GuidedExecutor, WitnessSearch};

use crate::db::{Database, SourceFile, Target};
use crate::interp::Witness;
use crate::smt::Profile;
pub use guide::Guide;
use program::Explored;
use std::time::{Duration, Instant};
pub use subsume::AtChecks;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strategy {
    #[default]
    Bfs,
    Dfs,
    Random,
    Tree,
    Coverage,
    Klee,
}

impl Strategy {
    pub const ALL: [Strategy; 6] = [
        Strategy::Bfs,
        Strategy::Dfs,
        Strategy::Random,
        Strategy::Tree,
        Strategy::Coverage,
        Strategy::Klee,
    ];
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Merging {
    #[default]
    None,
    Aggressive,
    Lattice,
    Recursive,
}

/// What a symbolic index into an array of cells makes of a state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IndexMode {
    /// One `ite` over the feasible cells.
    #[default]
    Ite,
    /// One state per feasible cell, with `index == j`.
    Fork,
}

/// A callback that shows the statistics of a run in progress.
pub type Progress = Box<dyn Fn(&Stats)>;

pub use crate::deadline::Pace;

pub struct Options {
    pub strategy: Strategy,
    pub merging: Merging,
    /// Merge when the differing variables' query counts sum below this.
    pub limit_cost: f64,
    /// Iterations per loop in the `recursive` query-count estimate.
    pub kappa: u32,
    pub index_mode: IndexMode,
    /// Path subsumption, and what its annotations make of checks.
    pub subsumption: Option<AtChecks>,
    /// Guidance towards one target: the run stops there, drops the states
    /// that cannot reach it and runs the nearest first. `Complete` then
    /// means the goal is unreachable (other targets were not looked for).
    pub guide: Option<Guide>,
    pub timeout: Option<Duration>,
    /// Most edges run, over all paths.
    pub max_steps: u64,
    /// Most paths finished (`u64::MAX`: no limit; a merged state counts
    /// the paths it stands for, and that count saturates there).
    pub max_paths: u64,
    /// Most resident memory of the process, in MiB: past it the run stops
    /// (incomplete) instead of being killed by the system.
    pub max_memory_mib: u64,
    /// Deepest call stack (as the interpreter's limit).
    pub max_call_depth: usize,
    pub seed: u64,
    /// Stop at the first error (the thesis's executor); otherwise report
    /// each target once and go on.
    pub stop_at_first_error: bool,
    /// Stop when an error at this target is found, and only then (a
    /// witness search for one target without guidance by its condition).
    pub stop_at: Option<Target>,
    /// When not empty: a state that no path of the flowgraphs leads from to
    /// one of these targets is dropped. The run then speaks for them only:
    /// its other errors may be missed.
    pub only_towards: Vec<Target>,
    /// A run that must keep finding errors to go on ([`Pace`]).
    pub pace: Option<Pace>,
    pub solver: Profile,
    /// Called about ten times a second with the statistics so far.
    pub progress: Option<Progress>,
    /// A state entering a loop leaves it at once, one state per trace of
    /// the loop's summary, when the loop is summarisable (thesis §4.4).
    pub summarization: bool,
    /// A state entering a loop with no summary also leaves it as the
    /// loop's block schedules make it (witnesses only, beside the loop's
    /// own iterations; `summary::blocks`).
    pub block_schedules: bool,
    /// With subsumption: also try loop invariants from `true` downwards
    /// (a greatest-fixpoint iteration; beyond the thesis, whose candidates
    /// are the annotations after the loop).
    pub invariants_from_true: bool,
    /// A second solver, asked when the first leaves a check `unknown`
    /// within its per-check limit (`explore::solver`).
    pub second_opinion: Option<Profile>,
    /// Draw the execution tree, with at most this many nodes
    /// (`Report::tree`).
    pub tree: Option<usize>,
}

impl Options {
    pub fn new(solver: Profile) -> Options {
        Options {
            strategy: Strategy::Bfs,
            merging: Merging::None,
            limit_cost: 1.0,
            kappa: 1,
            index_mode: IndexMode::Ite,
            subsumption: None,
            guide: None,
            timeout: None,
            max_steps: u64::MAX,
            max_paths: u64::MAX,
            max_memory_mib: DEFAULT_MAX_MEMORY_MIB,
            max_call_depth: 10_000,
            seed: 0,
            stop_at_first_error: true,
            stop_at: None,
            only_towards: Vec::new(),
            pace: None,
            solver,
            progress: None,
            summarization: false,
            block_schedules: false,
            invariants_from_true: true,
            second_opinion: None,
            tree: None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Stats {
    pub started: Instant,
    /// Paths run to their end without an error; a merged state counts
    /// the paths it stands for (the thesis's path coverage).
    pub paths: u64,
    /// States run to their end without an error (a merged state is one).
    pub runs: u64,
    /// Paths that ended in an error.
    pub error_paths: u64,
    /// Branches found infeasible.
    pub pruned: u64,
    /// Paths pruned by path subsumption (their annotation held).
    pub subsumed: u64,
    /// States dropped because they cannot reach the goal (guided runs).
    pub off_course: u64,
    /// Why the goal's condition could not guide, if it could not.
    pub guide_note: Option<String>,
    /// States checked against an annotation.
    pub annotation_checks: u64,
    /// Loop invariants found inductive, and candidates that were not.
    pub invariants: u64,
    pub invariants_refuted: u64,
    pub steps: u64,
    pub states_merged: u64,
    /// Merges the heuristic refused (or the sharing of the two stores).
    pub merges_refused: u64,
    /// Locations where a slow merged state stopped further merging.
    pub blacklisted: u64,
    pub queries: u64,
    /// Of the queries, those decided without a solver (bounds on single
    /// integers).
    pub decided_locally: u64,
    /// Checks a second solver decided after the first gave up.
    pub second_opinions: u64,
    pub solver_time: Duration,
    /// Paths dropped because the solver could not decide them.
    pub undecided_paths: u64,
    /// Why, the first few distinct reasons.
    pub undecided_reasons: Vec<String>,
    /// Error paths whose witness did not replay (a bug if ever non-zero).
    pub replay_failures: u64,
    pub covered_edges: usize,
    pub total_edges: usize,
    pub worklist: usize,
    pub stopped_at_error: bool,
    pub elapsed: Duration,
    // Loop summarisation (`summarization`).
    /// Loops whose summary was computed.
    pub loops_summarised: u64,
    /// Loops found not summarisable.
    pub loops_not_summarisable: u64,
    /// Why, the first few (with the loop's place).
    pub not_summarisable_reasons: Vec<String>,
    /// States that entered a loop and left it by its summary.
    pub summaries_applied: u64,
    /// States that left a loop by a block schedule.
    pub schedules_applied: u64,
}

impl Default for Stats {
    fn default() -> Stats {
        Stats {
            started: Instant::now(),
            paths: 0,
            runs: 0,
            error_paths: 0,
            pruned: 0,
            subsumed: 0,
            off_course: 0,
            guide_note: None,
            annotation_checks: 0,
            invariants: 0,
            invariants_refuted: 0,
            steps: 0,
            states_merged: 0,
            merges_refused: 0,
            blacklisted: 0,
            queries: 0,
            decided_locally: 0,
            second_opinions: 0,
            solver_time: Duration::ZERO,
            undecided_paths: 0,
            undecided_reasons: Vec::new(),
            replay_failures: 0,
            covered_edges: 0,
            total_edges: 0,
            worklist: 0,
            stopped_at_error: false,
            elapsed: Duration::ZERO,
            loops_summarised: 0,
            loops_not_summarisable: 0,
            not_summarisable_reasons: Vec::new(),
            summaries_applied: 0,
            schedules_applied: 0,
        }
    }
}

impl Stats {
    pub(crate) fn note_undecided(&mut self, why: String) {
        if self.undecided_reasons.len() < 5 && !self.undecided_reasons.contains(&why) {
            self.undecided_reasons.push(why);
        }
    }

    /// A path dropped because the solver could not decide it, and why.
    pub(crate) fn undecided_path(&mut self, why: String) {
        self.undecided_paths += 1;
        self.note_undecided(why);
    }
}

/// An error found, with the witness that the interpreter replayed to it.
#[derive(Clone, Debug)]
pub struct FoundError {
    pub target: Target,
    pub witness: Witness,
    pub found_after: Duration,
}

/// How the exploration ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// Every path was explored (errors, if any, are in the report).
    Complete,
    /// Stopped at the first error.
    ErrorFound,
    /// Stopped at a limit, or some paths were not decided: the reason.
    Incomplete(String),
}

pub struct Report {
    pub end: End,
    pub errors: Vec<FoundError>,
    pub stats: Stats,
    /// With path subsumption: main's annotations at the end, by source
    /// line (line, condition under which no error follows).
    pub annotations: Vec<(usize, String)>,
    /// The execution tree, when `Options::tree` asked for it.
    pub tree: Option<crate::engine::picture::Picture>,
}

/// `--max-memory`'s default: half of what BenchExec's usual 4 GB limit
/// allows, so that the run ends with a report rather than killed.
pub const DEFAULT_MAX_MEMORY_MIB: u64 = 2048;

/// Explores `file` (which must have parsed and type-checked).
pub fn explore(db: &Database, file: SourceFile, opts: &Options) -> Result<Report, String> {
    let prog = Explored::new(db, file)?;
    let deadline = opts.timeout.map(|t| Instant::now() + t);
    let mut solver = solver::Solver::start(&opts.solver, deadline)?;
    if let Some(p) = &opts.second_opinion {
        solver = solver.with_second_opinion(p.clone(), deadline);
    }
    run::run(db, file, &prog, solver, opts, deadline)
}
