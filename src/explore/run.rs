//! The run loop (the thesis's `run`): take a state from the worklist, run
//! its path until it ends, splits or parks, until the worklist is empty,
//! an error stops the run, or a limit is reached.
//!
//! Owns the worklist and the order of the states (`search`), the merging
//! strategy's decisions (`merge`, `query_count`), the limits (time, steps,
//! paths, memory, call depth) and the progress callback. Everything about
//! a state's step, its features and the run's findings it asks of the
//! [`Executor`], through its methods.

use super::exec::{Executor, Next, PathEnd};
use super::program::Explored;
use super::search::{Pool, Worklist};
use super::solver::Solver;
use super::state::{State, Trail};
use super::tree::Drawing;
use super::{End, Merging, Options, Report, Stats, merge, query_count};
use crate::db::{Database, SourceFile};
use crate::engine::picture::Mark;
use crate::ir::NodeId;
use rustc_hash::FxHashMap as HashMap;
use std::time::{Duration, Instant};

/// The run reads its memory use every this many steps.
const MEMORY_EVERY: u64 = 64;

/// A slower query than this on a merged state blacklists its merge site.
const SLOW_MERGED_QUERY: Duration = Duration::from_millis(500);

/// Explores `prog` from main's entry, asking `solver`, until the worklist
/// is empty, an error stops the run, or a limit (`deadline` among them).
pub(super) fn run(
    db: &Database,
    file: SourceFile,
    prog: &Explored,
    solver: Solver,
    opts: &Options,
    deadline: Option<Instant>,
) -> Result<Report, String> {
    let mut ex = Executor::new(prog, solver, opts);
    let initial = ex.initial_state()?;
    let mut run = Run {
        counts: query_counts(prog, opts),
        worklist: Worklist::new(opts.strategy, opts.seed),
        ex,
        deadline,
        memory: crate::memory::Gauge::new(),
        blacklist: Vec::new(),
        last_progress: Instant::now(),
        distances: HashMap::default(),
        distance_epoch: u64::MAX,
        drawing: opts.tree.map(Drawing::new),
    };
    let start = || {
        run.ex.aim(db, file);
        // The invariants that need no path (loops that never end): the
        // iteration from `true` of every nest, before the first step.
        run.ex.learn(&Trail::default());
        if run.on_course(&initial) {
            run.worklist.push(initial, Pool::Active);
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
    let tree = run.drawing.take().map(|mut d| {
        d.not_run(run.worklist.states(), &not_run_because(&end));
        d.picture
    });
    let annotations = run.ex.annotations_by_line();
    let errors = run.ex.take_errors();
    drop_aside(run.worklist);
    drop_aside(run.ex.take_terms());
    Ok(Report {
        end,
        errors,
        stats,
        annotations,
        tree,
    })
}

/// Why the states still waiting did not run.
fn not_run_because(end: &End) -> String {
    match end {
        End::Complete => "none should wait".into(),
        End::ErrorFound => "the run stopped at the error".into(),
        End::Incomplete(why) => why.clone(),
    }
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
    blacklist: Vec<(usize, NodeId)>,
    last_progress: Instant,
    /// Distances to the nearest uncovered edge, for the coverage's
    /// version in `distance_epoch`.
    distances: HashMap<(usize, NodeId), u32>,
    distance_epoch: u64,
    /// The execution tree, when asked for (`Options::tree`).
    drawing: Option<Drawing>,
}

impl Run<'_> {
    /// The thesis's `run`: take a state, run its path until it ends or
    /// splits, until the worklist is empty, an error is found, or a limit.
    fn drive(&mut self) -> End {
        loop {
            if let Some(why) = self.limit_reached() {
                return End::Incomplete(why);
            }
            let Some(st) = self.pick() else { break };
            self.run_path(st);
            if self.ex.stats().stopped_at_error {
                return End::ErrorFound;
            }
        }
        let s = self.ex.stats();
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
        let (s, opts) = (self.ex.stats(), self.ex.options());
        if self.deadline.is_some_and(|d| Instant::now() >= d) || crate::deadline::stop_requested() {
            return Some("timeout".into());
        }
        if let Some(pace) = &opts.pace
            && s.started.elapsed() > pace.allowed(self.ex.errors_found())
        {
            return Some(format!(
                "no new error within its pace ({} found)",
                self.ex.errors_found()
            ));
        }
        if s.steps >= opts.max_steps {
            return Some(format!("step limit ({})", opts.max_steps));
        }
        if opts.max_paths != u64::MAX && s.paths >= opts.max_paths {
            return Some(format!("path limit ({})", opts.max_paths));
        }
        let limit = opts.max_memory_mib;
        if s.steps.is_multiple_of(MEMORY_EVERY) && self.memory.mib() >= limit {
            return Some(format!("memory limit ({limit} MiB)"));
        }
        None
    }

    fn pick(&mut self) -> Option<State> {
        let coverage = self.ex.coverage();
        let epoch = coverage.count();
        if epoch != self.distance_epoch {
            self.distances.clear();
            self.distance_epoch = epoch;
        }
        if let Some(g) = self.ex.guidance() {
            return self
                .worklist
                .pick_nearest(&mut |st: &State| g.way.distance(st));
        }
        let (prog, distances) = (self.ex.program(), &mut self.distances);
        let mut distance = |st: &State| {
            let f = st.frame();
            *distances
                .entry((f.func, f.node))
                .or_insert_with(|| coverage.distance_to_uncovered(prog, f.func, f.node))
        };
        self.worklist.pick(&mut distance)
    }

    /// Runs one path until it ends, parks, or the run must stop.
    fn run_path(&mut self, mut st: State) {
        st.deferred = false;
        loop {
            self.ex.stats_mut().steps += 1;
            self.progress();
            if self.limit_reached().is_some() {
                self.worklist.push(st, Pool::Active);
                return;
            }
            if !self.ex.unsubsumed(&mut st) {
                self.draw_leaf(&st, Mark::Subsumed);
                return;
            }
            let trail = st.trail.clone();
            let pc_before = st.pc.id();
            if st.frames.len() > self.ex.options().max_call_depth {
                self.ex
                    .end_path(PathEnd::Undecided("call-depth limit".into()));
                return;
            }
            let effort_before = self.ex.solver_effort();
            let merged_at = st.merged_at;
            let shown = st.shown;
            let mut next = self.ex.step(st);
            if let (Some(d), Some(note)) = (&mut self.drawing, self.ex.take_note()) {
                d.step(shown, note, &mut next);
            }
            self.watch_merged(merged_at, effort_before);
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
                    self.ex.end_path(e);
                    self.ex.learn(&trail);
                    return;
                }
            }
            if self.ex.stats().stopped_at_error {
                return;
            }
        }
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

    /// Whether a state may go on (guidance); one that may not is a leaf.
    fn on_course(&mut self, st: &State) -> bool {
        let on = self.ex.on_course(st);
        if !on {
            self.draw_leaf(st, Mark::OffCourse);
        }
        on
    }

    fn draw_leaf(&mut self, st: &State, mark: Mark) {
        if let Some(d) = &mut self.drawing {
            d.leaf(st.shown, mark);
        }
    }

    /// A merged state whose query was slow blacklists its merge site.
    fn watch_merged(&mut self, merged_at: Option<(usize, NodeId)>, before: (u64, Duration)) {
        let Some(site) = merged_at else { return };
        let (q, t) = self.ex.solver_effort();
        if q > before.0 && t - before.1 > SLOW_MERGED_QUERY && !self.blacklist.contains(&site) {
            self.blacklist.push(site);
            self.ex.stats_mut().blacklisted += 1;
        }
    }

    /// Adds a state to the worklist, merged into a waiting one at the same
    /// location if the merging strategy agrees.
    fn add(&mut self, st: State, pool: Pool) {
        if self.ex.options().merging == Merging::None {
            return self.worklist.push(st, pool);
        }
        let f = st.frame();
        if self.blacklist.contains(&(f.func, f.node)) {
            return self.worklist.push(st, pool);
        }
        for slot in self.worklist.at(&st.location()) {
            let other = self.worklist.state(slot);
            if !self.worth_merging(other, &st) {
                self.ex.stats_mut().merges_refused += 1;
                continue;
            }
            let Some(merged) = self.ex.merge(other, &st) else {
                continue;
            };
            let mut merged = merged;
            if let Some(d) = &mut self.drawing {
                d.join(other, &st, &mut merged);
            }
            let (_, was) = self.worklist.remove(slot);
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
        (cost as f64) < self.ex.options().limit_cost
    }

    fn progress(&mut self) {
        if let Some(p) = &self.ex.options().progress
            && self.last_progress.elapsed() > Duration::from_millis(100)
        {
            self.last_progress = Instant::now();
            p(&self.stats());
        }
    }

    /// The statistics so far, the worklist's size and the time included.
    fn stats(&self) -> Stats {
        let mut s = self.ex.stats_so_far();
        s.worklist = self.worklist.len();
        s.elapsed = s.started.elapsed();
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
