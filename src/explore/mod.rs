//! The thesis's symbolic executor (Rozhoň, *Nested loops and path
//! explosion in symbolic execution*, chapters 4–5; `docs/thesis-executor.md`).
//!
//! - [`state`]: symbolic states (storage cells and frames, the call stack,
//!   the path condition);
//! - [`eval`]: expressions, conditions and places on a state;
//! - [`exec`]: one step of a state, the worklist rules at branches, checks;
//! - [`solver`]: the one warm solver session of a run (push/pop);
//! - [`search`]: the worklist and the six search strategies;
//! - [`merge`], [`query_count`]: state merging and its heuristics;
//! - [`subsume`]: path subsumption (lazy annotations, loop invariants);
//! - [`guide`]: guidance towards one target by its necessary condition;
//! - [`witness`]: an error's witness and its replay on the interpreter;
//! - [`summary`]: PDA loop summarisation (`--summarization`);
//! - [`decider`]: the engines of the contract ([`GuidedExecutor`],
//!   [`WitnessSearch`]);
//! - here: the options, the run loop, its limits and statistics.
//!
//! Knows the front end (through `db`), the IR, terms, the solver layer and
//! witnesses; of the other engines only `nc`, for guidance (the goal's
//! necessary condition).

pub mod decider;
mod eval;
mod exec;
mod guide;
mod merge;
mod program;
pub mod query_count;
mod search;
mod solver;
mod state;
mod subsume;
mod summary;
mod unary;
mod witness;

#[cfg(test)]
mod tests;

pub use decider::{GuidedExecutor, WitnessSearch};

use crate::db::{Database, SourceFile, Target};
use crate::interp::Witness;
use crate::smt::Profile;
use exec::{Executor, Next, PathEnd};
pub use guide::Guide;
use program::Explored;
use search::{Pool, Worklist};
use state::State;
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
    pub solver: Profile,
    /// Called about ten times a second with the statistics so far.
    pub progress: Option<Progress>,
    /// A state entering a loop leaves it at once, one state per trace of
    /// the loop's summary, when the loop is summarisable (thesis §4.4).
    pub summarization: bool,
    /// With subsumption: also try loop invariants from `true` downwards
    /// (a greatest-fixpoint iteration; beyond the thesis, whose candidates
    /// are the annotations after the loop).
    pub invariants_from_true: bool,
    /// A second solver, asked when the first leaves a check `unknown`
    /// within its per-check limit (`explore::solver`).
    pub second_opinion: Option<Profile>,
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
            solver,
            progress: None,
            summarization: false,
            invariants_from_true: true,
            second_opinion: None,
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
        }
    }
}

impl Stats {
    pub(crate) fn note_undecided(&mut self, why: String) {
        if self.undecided_reasons.len() < 5 && !self.undecided_reasons.contains(&why) {
            self.undecided_reasons.push(why);
        }
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
}

/// `--max-memory`'s default: half of what BenchExec's usual 4 GB limit
/// allows, so that the run ends with a report rather than killed.
pub const DEFAULT_MAX_MEMORY_MIB: u64 = 2048;

/// The run reads its memory use every this many steps.
const MEMORY_EVERY: u64 = 64;

/// A slower query than this on a merged state blacklists its merge site.
const SLOW_MERGED_QUERY: Duration = Duration::from_millis(500);

/// Explores `file` (which must have parsed and type-checked).
pub fn explore(db: &Database, file: SourceFile, opts: &Options) -> Result<Report, String> {
    let prog = Explored::new(db, file)?;
    let deadline = opts.timeout.map(|t| Instant::now() + t);
    let mut solver = solver::Solver::start(&opts.solver, deadline)?;
    if let Some(p) = &opts.second_opinion {
        solver = solver.with_second_opinion(p.clone(), deadline);
    }
    let mut ex = Executor::new(&prog, solver, opts);
    ex.stats.total_edges = prog.edge_count();
    let initial = ex.initial_state()?;
    let mut run = Run {
        counts: query_counts(&prog, opts),
        worklist: Worklist::new(opts.strategy, opts.seed),
        ex,
        deadline,
        memory: crate::memory::Gauge::new(),
        blacklist: Vec::new(),
        last_progress: Instant::now(),
        distances: rustc_hash::FxHashMap::default(),
        distance_epoch: u64::MAX,
    };
    let mut start = || {
        run.aim(db, file);
        // The invariants that need no path (loops that never end): the
        // iteration from `true` of every nest, before the first step.
        run.ex.learn(&state::Trail::default());
        if run.on_course(&initial) {
            run.worklist.push(initial.clone(), Pool::Active);
        }
        run.drive()
    };
    let end = match deadline {
        Some(d) => {
            crate::deadline::run(d, start).unwrap_or_else(|_| End::Incomplete("timeout".into()))
        }
        None => start(),
    };
    let stats = run.stats();
    let annotations = match &run.ex.annotations {
        Some(a) => a.listing(&prog, &mut run.ex.terms),
        None => Vec::new(),
    };
    let errors = std::mem::take(&mut run.ex.errors);
    drop_aside(run.worklist);
    drop_aside(std::mem::take(&mut run.ex.terms));
    Ok(Report {
        end,
        errors,
        stats,
        annotations,
    })
}

/// Drops `big` on a thread of its own: a run stopped at its deadline may
/// hold a gigabyte of states and terms, whose freeing took ~155 ms past
/// `--timeout` (a 5 s run of `apc bench thesis` ended after 5.15 s;
/// docs/thesis-executor.md §11, "Limits").
fn drop_aside<T: Send + 'static>(big: T) {
    let _ = std::thread::Builder::new()
        .name("apc-drop".into())
        .spawn(move || drop(big));
}

/// The query counts of every function, for the heuristic merging strategies.
fn query_counts(prog: &Explored, opts: &Options) -> Vec<query_count::QueryCounts> {
    match opts.merging {
        Merging::Lattice => prog.bodies.iter().map(query_count::lattice).collect(),
        Merging::Recursive => prog
            .bodies
            .iter()
            .map(|b| query_count::recursive(b, opts.kappa))
            .collect(),
        Merging::None | Merging::Aggressive => Vec::new(),
    }
}

struct Run<'p> {
    ex: Executor<'p>,
    worklist: Worklist,
    counts: Vec<query_count::QueryCounts>,
    deadline: Option<Instant>,
    /// What this run has allocated (runs may share the process).
    memory: crate::memory::Gauge,
    blacklist: Vec<(usize, crate::ir::NodeId)>,
    last_progress: Instant,
    distances: rustc_hash::FxHashMap<(usize, crate::ir::NodeId), u32>,
    distance_epoch: u64,
}

impl Run<'_> {
    /// A guided run: the goal's condition and distances.
    fn aim(&mut self, db: &Database, file: SourceFile) {
        if let Some(g) = &self.ex.opts.guide {
            let guidance = guide::Guidance::new(db, file, self.ex.prog, &mut self.ex.terms, g);
            self.ex.guidance = Some(guidance);
        }
    }

    /// Whether a state may go on: in a guided run, whether it may still
    /// reach the goal (a state that cannot is counted and dropped).
    fn on_course(&mut self, st: &State) -> bool {
        if self.ex.guidance.is_none() || self.ex.may_reach_goal(st) {
            return true;
        }
        self.ex.stats.off_course += 1;
        false
    }

    /// The thesis's `run`: take a state, run its path until it ends or
    /// splits, until the worklist is empty, an error is found, or a limit.
    fn drive(&mut self) -> End {
        loop {
            if let Some(why) = self.limit_reached() {
                return End::Incomplete(why);
            }
            let Some(st) = self.pick() else { break };
            self.run_path(st);
            if self.ex.stats.stopped_at_error {
                return End::ErrorFound;
            }
        }
        let s = &self.ex.stats;
        if s.undecided_paths > 0 || s.replay_failures > 0 {
            return End::Incomplete(format!(
                "{} paths not decided ({})",
                s.undecided_paths + s.replay_failures,
                s.undecided_reasons.join("; ")
            ));
        }
        End::Complete
    }

    fn limit_reached(&self) -> Option<String> {
        let s = &self.ex.stats;
        if self.deadline.is_some_and(|d| Instant::now() >= d) || crate::deadline::stop_requested() {
            return Some("timeout".into());
        }
        if s.steps >= self.ex.opts.max_steps {
            return Some(format!("step limit ({})", self.ex.opts.max_steps));
        }
        if self.ex.opts.max_paths != u64::MAX && s.paths >= self.ex.opts.max_paths {
            return Some(format!("path limit ({})", self.ex.opts.max_paths));
        }
        let limit = self.ex.opts.max_memory_mib;
        if s.steps.is_multiple_of(MEMORY_EVERY) && self.memory.mib() >= limit {
            return Some(format!("memory limit ({limit} MiB)"));
        }
        None
    }

    fn pick(&mut self) -> Option<State> {
        let epoch = self.ex.covered_count;
        if epoch != self.distance_epoch {
            self.distances.clear();
            self.distance_epoch = epoch;
        }
        if let Some(g) = &self.ex.guidance {
            return self.worklist.pick_nearest(&mut |st: &State| g.distance(st));
        }
        let (ex, distances) = (&self.ex, &mut self.distances);
        let mut distance = |st: &State| {
            let f = st.frame();
            *distances
                .entry((f.func, f.node))
                .or_insert_with(|| distance_to_uncovered(ex, f.func, f.node))
        };
        self.worklist.pick(&mut distance)
    }

    /// Runs one path until it ends, parks, or the run must stop.
    fn run_path(&mut self, mut st: State) {
        st.deferred = false;
        loop {
            self.ex.stats.steps += 1;
            self.progress();
            if self.limit_reached().is_some() {
                self.worklist.push(st, Pool::Active);
                return;
            }
            if !self.unsubsumed(&mut st) {
                return;
            }
            let trail = st.trail.clone();
            let pc_before = st.pc.id();
            if st.frames.len() > self.ex.opts.max_call_depth {
                self.end_path(PathEnd::Undecided("call-depth limit".into()));
                return;
            }
            let queries_before = (self.ex.solver.queries, self.ex.solver.time);
            let merged_at = st.merged_at;
            let next = self.ex.step(st);
            self.watch_merged(merged_at, queries_before);
            match next {
                Next::Continue(s) => {
                    if s.pc.id() != pc_before && !self.on_course(&s) {
                        return;
                    }
                    // Another lap past `_t` waits even when it is the only
                    // way on (a loop whose exit cannot be taken): the
                    // thesis's `_t < 0` forces the path out there too.
                    if s.deferred {
                        self.add(s, Pool::Deferred);
                        return;
                    }
                    st = s;
                }
                Next::Split(first, rest) => match self.split(first, rest) {
                    Some(s) => st = s,
                    None => return,
                },
                Next::Park(s) => {
                    self.add(s, Pool::Parked);
                    return;
                }
                Next::End(e) => {
                    self.end_path(e);
                    self.ex.learn(&trail);
                    return;
                }
            }
            if self.ex.stats.stopped_at_error {
                return;
            }
        }
    }

    /// Path subsumption before a step: a state of main adds its vertex to
    /// its trail; a subsumed one ends here, its trail annotated again.
    /// Whether the state goes on.
    fn unsubsumed(&mut self, st: &mut State) -> bool {
        if self.ex.annotations.is_none() || st.frames.len() != 1 {
            return true;
        }
        st.trail = st.trail.push(st.frame().node);
        if !self.ex.subsumed(st) {
            return true;
        }
        self.ex.stats.subsumed += 1;
        self.ex.learn(&st.trail);
        false
    }

    /// A split: the others wait in the worklist (a loop iteration past
    /// `_t` deferred), the first goes on; in a guided run, only those that
    /// may still reach the goal.
    fn split(&mut self, first: State, rest: Vec<State>) -> Option<State> {
        let leaves = self.worklist.branch(first.tree_node, rest.len() + 1);
        for (mut s, leaf) in rest.into_iter().zip(&leaves[1..]) {
            s.tree_node = *leaf;
            let pool = if s.deferred {
                Pool::Deferred
            } else {
                Pool::Active
            };
            if self.on_course(&s) {
                self.add(s, pool);
            }
        }
        let mut first = first;
        first.tree_node = leaves[0];
        if !self.on_course(&first) {
            return None;
        }
        if first.deferred {
            self.add(first, Pool::Deferred);
            return None;
        }
        Some(first)
    }

    fn end_path(&mut self, e: PathEnd) {
        let s = &mut self.ex.stats;
        match e {
            PathEnd::Finished(n) => {
                s.paths = s.paths.saturating_add(n);
                s.runs += 1;
            }
            PathEnd::Error => s.error_paths += 1,
            PathEnd::Undecided(why) => {
                s.undecided_paths += 1;
                s.note_undecided(why);
            }
        }
    }

    /// A merged state whose query was slow blacklists its merge site.
    fn watch_merged(
        &mut self,
        merged_at: Option<(usize, crate::ir::NodeId)>,
        before: (u64, Duration),
    ) {
        let Some(site) = merged_at else { return };
        let (q, t) = (self.ex.solver.queries, self.ex.solver.time);
        if q > before.0 && t - before.1 > SLOW_MERGED_QUERY && !self.blacklist.contains(&site) {
            self.blacklist.push(site);
            self.ex.stats.blacklisted += 1;
        }
    }

    /// Adds a state to the worklist, merged into a waiting one at the same
    /// location if the merging strategy agrees.
    fn add(&mut self, st: State, pool: Pool) {
        if self.ex.opts.merging == Merging::None {
            return self.worklist.push(st, pool);
        }
        let f = st.frame();
        if self.blacklist.contains(&(f.func, f.node)) {
            return self.worklist.push(st, pool);
        }
        for slot in self.worklist.at(&st.location()) {
            let other = self.worklist.state(slot);
            if !self.worth_merging(other, &st) {
                self.ex.stats.merges_refused += 1;
                continue;
            }
            let id = self.ex.next_id();
            let Some(merged) = merge::merge(&mut self.ex.terms, other, &st, id) else {
                self.ex.stats.merges_refused += 1;
                continue;
            };
            let (_, was) = self.worklist.remove(slot);
            self.ex.stats.states_merged += 1;
            return self.worklist.push(merged, merged_pool(pool, was));
        }
        self.worklist.push(st, pool)
    }

    /// The merging strategy's verdict on two states at the same location.
    fn worth_merging(&self, a: &State, b: &State) -> bool {
        if self.counts.is_empty() {
            return true; // aggressive
        }
        let f = a.frame();
        let q = &self.counts[f.func];
        let cost: u64 = merge::differing_vars(a, b)
            .into_iter()
            .map(|v| q.at(f.node, v) as u64)
            .sum();
        (cost as f64) < self.ex.opts.limit_cost
    }

    fn progress(&mut self) {
        if let Some(p) = &self.ex.opts.progress
            && self.last_progress.elapsed() > Duration::from_millis(100)
        {
            self.last_progress = Instant::now();
            p(&self.stats());
        }
    }

    /// The statistics so far, with the figures kept elsewhere (the
    /// solver's, the coverage, the worklist) filled in.
    fn stats(&self) -> Stats {
        let mut s = self.ex.stats.clone();
        s.queries = self.ex.solver.queries;
        s.decided_locally = self.ex.solver.decided_locally();
        s.solver_time = self.ex.solver.time;
        s.second_opinions = self.ex.solver.second_opinions;
        s.covered_edges = self.ex.covered_count as usize;
        s.worklist = self.worklist.len();
        s.elapsed = s.started.elapsed();
        if let Some(g) = &self.ex.guidance {
            s.guide_note = g.note.clone();
        }
        if let Some(a) = &self.ex.annotations {
            s.invariants = a.invariants;
            s.invariants_refuted = a.refuted;
        }
        s
    }
}

/// Where a merged state waits: parked if either was, deferred only if both were.
fn merged_pool(a: Pool, b: Pool) -> Pool {
    match (a, b) {
        (Pool::Parked, _) | (_, Pool::Parked) => Pool::Parked,
        (Pool::Deferred, Pool::Deferred) => Pool::Deferred,
        _ => Pool::Active,
    }
}

/// Edges from `node` to the nearest edge not run yet, in its function
/// (a large number if none is left there).
fn distance_to_uncovered(ex: &Executor, func: usize, node: crate::ir::NodeId) -> u32 {
    let body = &ex.prog.bodies[func];
    let mut dist = vec![u32::MAX; body.node_count as usize];
    let mut queue = std::collections::VecDeque::from([node]);
    dist[node as usize] = 0;
    while let Some(n) = queue.pop_front() {
        for &e in &ex.prog.succ[func][n as usize] {
            if !ex.covered[func][e as usize] {
                return dist[n as usize];
            }
            let to = body.edges[e as usize].to as usize;
            if dist[to] == u32::MAX {
                dist[to] = dist[n as usize] + 1;
                queue.push_back(to as crate::ir::NodeId);
            }
        }
    }
    10_000
}
