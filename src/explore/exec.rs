//! Stepping one state through the flowgraph (docs/thesis-executor.md,
//! "Statements"): an edge at a time, with the thesis's worklist rules at
//! branches (`if`: continue `then`, push `else`; `while`: continue the exit,
//! push the body), calls and returns on the state's own call stack, and
//! every check vertex asked of the solver.
//!
//! [`Executor`] owns the [`Machine`] and the bookkeeping of a run: the
//! errors found, the coverage, the cells of the program-wide variables,
//! and the features' state (annotations, guidance, loop summaries), which
//! it hands to each feature with the machine. It is the only module of the
//! executor that knows them all; the run loop (`run`) asks it through
//! methods.

use super::coverage::Coverage;
use super::eval::Halt;
use super::guide::{FAR, Guidance, Way};
use super::machine::Machine;
use super::program::Explored;
use super::solver::Solver;
use super::state::{CellId, Frame, PathCond, State, Trail, Value};
use super::subsume::Annotations;
use super::summary::{Left, Memo};
use super::{FoundError, Options, Stats, merge, witness};
use crate::db::{Database, SourceFile, Target};
use crate::engine::picture::Mark;
use crate::interp::Witness;
use crate::ir::{self, EdgeId, Instr, NodeKind, VarKind};
use crate::smt::Answer;
use crate::term::{TermId, Terms};
use std::sync::Arc;
use std::time::Duration;

/// What one step made of a state.
pub(crate) enum Next {
    /// The same path goes on.
    Continue(State),
    /// The path goes on with the first state; the others wait in the worklist.
    Split(State, Vec<State>),
    /// The state arrived where paths meet: it waits in the worklist, where
    /// it may merge (only with merging on).
    Park(State),
    /// The path ended.
    End(PathEnd),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PathEnd {
    /// `main` returned, or an `assume` ended the run: `paths` runs done.
    Finished(u64),
    /// Every continuation hits an error (error paths are not counted).
    Error,
    /// The solver could not decide a branch, or a limit cut the path.
    Undecided(String),
}

pub(crate) struct Executor<'p> {
    machine: Machine<'p>,
    errors: Vec<FoundError>,
    coverage: Coverage,
    /// The initial cells of the program-wide variables (`$in`, `$ic`);
    /// a call takes its caller's (merging renumbers cells).
    globals: Vec<(String, CellId)>,
    /// main's annotations, with path subsumption on.
    annotations: Option<Annotations>,
    /// The goal and its necessary condition, in a guided run.
    guidance: Option<Guidance>,
    /// The way to `Options::only_towards`'s targets, when it names some.
    towards: Option<Way>,
    /// Loop summaries computed so far (`--summarization`).
    summaries: Memo,
}

impl<'p> Executor<'p> {
    pub(crate) fn new(prog: &'p Explored, solver: Solver, opts: &'p Options) -> Executor<'p> {
        let mut machine = Machine::new(prog, solver, opts);
        let annotations = opts.subsumption.map(|at| {
            let main = prog.main;
            Annotations::new(
                &prog.bodies[main],
                &prog.succ[main],
                machine.terms_mut(),
                at,
                opts.invariants_from_true,
            )
        });
        Executor {
            machine,
            errors: Vec::new(),
            coverage: Coverage::new(prog),
            globals: Vec::new(),
            annotations,
            guidance: None,
            towards: None,
            summaries: Memo::default(),
        }
    }

    /// The state at main's entry: each parameter a symbol (an input array a
    /// symbolic array), the input stream a symbolic array at position 0.
    pub(crate) fn initial_state(&mut self) -> Result<State, String> {
        let prog = self.machine.program();
        let mut st = State {
            frames: Vec::new(),
            store: Arc::new(Vec::new()),
            pc: PathCond::default(),
            pins: Arc::new(Vec::new()),
            paths: 1,
            tree_node: 0,
            shown: 0,
            merged_at: None,
            trail: Default::default(),
            laps: Arc::new(vec![0; prog.bodies[prog.main].loops.len()]),
            deferred: false,
            runs: Arc::default(),
        };
        let input = self.machine.declare_input_stream();
        let zero = Value::Int(self.machine.terms_mut().int(0));
        self.globals = vec![
            (ir::INPUT_STREAM.to_string(), st.new_cell(input)),
            (ir::INPUT_COUNTER.to_string(), st.new_cell(zero)),
        ];
        let main = &prog.bodies[prog.main];
        let mut args = Vec::new();
        for v in &main.vars[..main.params] {
            args.push(self.machine.declare_main_argument(v)?);
        }
        let frame = self.frame(&mut st, prog.main, args, None);
        st.frames.push(frame);
        Ok(st)
    }

    /// A new activation of `func`: a fresh cell per variable (parameters
    /// hold the arguments, locals nothing yet), the global cells shared.
    fn frame(
        &self,
        st: &mut State,
        func: usize,
        args: Vec<Value>,
        result_to: Option<ir::VarId>,
    ) -> Frame {
        let body = &self.machine.program().bodies[func];
        let mut args = args.into_iter();
        let cells: Vec<CellId> = body
            .vars
            .iter()
            .enumerate()
            .map(|(i, v)| match v.kind {
                VarKind::Global => self.global_cell(st, &v.name),
                _ if i < body.params => st.new_cell(args.next().unwrap_or(Value::Uninit)),
                _ => st.new_cell(Value::Uninit),
            })
            .collect();
        Frame {
            func,
            node: body.entry,
            cells: cells.into(),
            result_to,
        }
    }

    /// The cell of a program-wide variable: the caller's (cells are
    /// renumbered when states merge), or the initial one for main.
    fn global_cell(&self, st: &State, name: &str) -> CellId {
        if let Some(caller) = st.frames.last() {
            let body = &self.machine.program().bodies[caller.func];
            if let Some(v) = body.var_id(name) {
                return caller.cells[v as usize];
            }
        }
        self.globals
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| *c)
            .expect("the globals exist from the start")
    }

    /// One step of a state.
    pub(crate) fn step(&mut self, mut st: State) -> Next {
        let prog = self.machine.program();
        let (func, node) = (st.frame().func, st.frame().node);
        let out = &prog.succ[func][node as usize];
        match out.as_slice() {
            [] => self.leave_function(st),
            [e] if !is_guard(&prog.bodies[func].edges[*e as usize].instr) => {
                let e = *e;
                let fork = self.machine.options().index_mode == super::IndexMode::Fork;
                let backup = fork.then(|| st.clone());
                match self.run_edge(&mut st, e) {
                    Ok(()) => self.arrive_or_summarise(st, func, e),
                    Err(Halt::Fork(t, js)) => {
                        self.machine.note_index_fork(func, e, &js);
                        Next::Split(
                            self.pin(backup.clone().expect("kept in fork mode"), t, js[0]),
                            js[1..]
                                .iter()
                                .map(|j| self.pin(backup.clone().expect("kept"), t, *j))
                                .collect(),
                        )
                    }
                    Err(Halt::Undecided(why)) => Next::End(PathEnd::Undecided(why)),
                }
            }
            _ => self.branch(st, func, out),
        }
    }

    /// A forked copy of a state on `term == j`.
    fn pin(&mut self, mut st: State, t: TermId, j: usize) -> State {
        let terms = self.machine.terms_mut();
        let jt = terms.int(j);
        let eq = terms.eq(t, jt);
        self.machine.add_to_pc(&mut st, eq);
        Arc::make_mut(&mut st.pins).push((t, j));
        st
    }

    /// After an edge: mark it covered, move to its target; park at a join.
    fn arrive(&mut self, mut st: State, func: usize, e: EdgeId) -> Next {
        self.coverage.cover(func, e);
        if let Some(ann) = &self.annotations
            && st.frames.len() == 1
        {
            ann.count_lap(&mut st.laps, e);
        }
        let prog = self.machine.program();
        let edge = &prog.bodies[func].edges[e as usize];
        if !matches!(edge.instr, Instr::Call { .. }) {
            st.frame_mut().node = edge.to;
        }
        let here = st.frame();
        if self.machine.options().merging != super::Merging::None
            && !matches!(edge.instr, Instr::Call { .. })
            && prog.joins[here.func][here.node as usize]
        {
            return Next::Park(st);
        }
        Next::Continue(st)
    }

    /// `arrive`, except that with `--summarization` a state entering a
    /// summarisable loop leaves it at once, as its summary's states.
    /// With `--block-schedules`, a state entering a loop with no summary
    /// also leaves it by the loop's schedules, the states waiting beside
    /// the state that runs the loop.
    fn arrive_or_summarise(&mut self, st: State, func: usize, e: EdgeId) -> Next {
        if let Some(left) = self.summaries.leave_loop(&mut self.machine, &st, func, e) {
            return self.past_the_loop(func, e, left);
        }
        let scheduled = (self.summaries).scheduled(&mut self.machine, &st, func, e);
        match self.arrive(st, func, e) {
            // As at a branch, the first goes on (even at a join).
            Next::Continue(st) | Next::Park(st) if !scheduled.is_empty() => {
                let mut states = Vec::with_capacity(scheduled.len());
                for (s, exit) in scheduled {
                    self.coverage.cover(func, exit);
                    states.push(s);
                }
                Next::Split(st, states)
            }
            next => next,
        }
    }

    /// The states a summary made of a state that entered its loop by `e`,
    /// each past the exit edge of its trace.
    fn past_the_loop(&mut self, func: usize, e: EdgeId, left: Left) -> Next {
        self.coverage.cover(func, e);
        self.machine.note_summary(func, e);
        let mut states = Vec::with_capacity(left.states.len());
        for (s, exit) in left.states {
            self.coverage.cover(func, exit);
            states.push(s);
        }
        if states.is_empty() {
            return Next::End(if left.undecided {
                PathEnd::Undecided("no trace of a loop summary could be decided".into())
            } else {
                PathEnd::Finished(0) // the loop never ends from here
            });
        }
        let first = states.remove(0);
        if states.is_empty() {
            Next::Continue(first)
        } else {
            Next::Split(first, states)
        }
    }

    fn run_edge(&mut self, st: &mut State, e: EdgeId) -> Result<(), Halt> {
        let prog = self.machine.program();
        let edge = &prog.bodies[st.frame().func].edges[e as usize];
        let m = &mut self.machine;
        match &edge.instr {
            Instr::Assign(p, x) => {
                let v = m.eval(st, x)?;
                m.assign(st, p, v)?;
            }
            Instr::Alloc(v, x) => {
                let val = m.eval(st, x)?;
                let c = st.new_cell(val);
                st.write(st.cell_of(*v), Value::Ptr(c));
            }
            Instr::Call { dst, func, args } => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(m.eval(st, a)?);
                }
                let callee = prog.by_name[func];
                st.frame_mut().node = edge.to;
                let frame = self.frame(st, callee, vals, Some(*dst));
                st.frames.push(frame);
            }
            Instr::Output(x) => {
                m.eval(st, x)?;
            }
            Instr::Skip | Instr::Enter(_) | Instr::Assume(_) | Instr::Assert(..) => {}
        }
        Ok(())
    }

    /// At a vertex without out-edges: a function's exit returns; any
    /// other ends the path.
    fn leave_function(&mut self, mut st: State) -> Next {
        let frame = st.frames.pop().expect("a running state has a frame");
        let body = &self.machine.program().bodies[frame.func];
        if body.node_kinds[frame.node as usize] != NodeKind::Exit {
            return Next::End(PathEnd::Finished(st.paths));
        }
        let Some(dst) = frame.result_to else {
            return Next::End(PathEnd::Finished(st.paths));
        };
        let ret = body
            .var_id(ir::RETURN_VAR)
            .map(|r| st.read(frame.cells[r as usize]).clone())
            .unwrap_or(Value::Uninit);
        st.write(st.cell_of(dst), ret);
        Next::Continue(st)
    }

    /// A vertex whose out-edges are guarded: errors first (each asked of
    /// the solver), then the feasible continuations.
    fn branch(&mut self, mut st: State, func: usize, out: &[EdgeId]) -> Next {
        let prog = self.machine.program();
        let body = &prog.bodies[func];
        let mut guards = Vec::with_capacity(out.len());
        for &e in out {
            let g = match &body.edges[e as usize].instr {
                Instr::Assume(c) | Instr::Assert(c, _) => self.machine.cond(&mut st, c),
                _ => Ok(self.machine.terms_mut().bool(true)),
            };
            match g {
                Ok(g) => guards.push((e, g)),
                Err(Halt::Undecided(why)) => return Next::End(PathEnd::Undecided(why)),
                Err(Halt::Fork(..)) => {
                    return Next::End(PathEnd::Undecided("a fork inside a condition".into()));
                }
            }
        }
        let (errors, onward): (Vec<_>, Vec<_>) = (guards.into_iter())
            .partition(|(e, _)| prog.is_error(func, body.edges[*e as usize].to).is_some());
        let mut error_possible = false;
        let checked = !errors.is_empty();
        for (e, g) in errors {
            error_possible |= self.check_error(&st, func, e, g);
            if self.machine.stats().stopped_at_error {
                return Next::End(PathEnd::Error);
            }
        }
        self.continuations(st, func, onward, checked && !error_possible, error_possible)
    }

    /// The feasible continuations of a branch, the thesis's way round: the
    /// loop exit (or `then`) goes on, the other waits.
    fn continuations(
        &mut self,
        st: State,
        func: usize,
        mut onward: Vec<(EdgeId, TermId)>,
        cannot_fail: bool,
        error_possible: bool,
    ) -> Next {
        let exits = &self.machine.program().loop_exits[func];
        onward.sort_by_key(|(e, _)| !exits[*e as usize]);
        let complementary = onward.len() == 2;
        let mut feasible = Vec::new();
        let mut first_unsat = false;
        for (k, (e, g)) in onward.iter().enumerate() {
            // Two complementary guards: when the first cannot hold, the
            // path condition implies the second (it is satisfiable).
            let implied = complementary && k == 1 && first_unsat && !error_possible;
            // A check that cannot fail: the path condition implies its
            // `assert` (an `assume` of the program is asked like a branch).
            let alone = onward.len() == 1 && cannot_fail;
            let f = if implied || alone {
                Answer::Sat
            } else {
                self.machine.feasible(&st, *g)
            };
            match f {
                Answer::Sat => feasible.push((*e, *g, implied || alone)),
                Answer::Unsat => {
                    first_unsat = k == 0;
                    // Pruned: the solver said so (a constant guard is no branch).
                    if self.machine.terms().as_bool(*g).is_none() {
                        self.machine.stats_mut().pruned += 1;
                        self.machine.note_pruned(func, *e);
                    }
                }
                Answer::Unknown(why) => self.machine.stats_mut().undecided_path(why),
            }
        }
        if feasible.is_empty() {
            return Next::End(if error_possible {
                PathEnd::Error
            } else if onward.len() == 1 {
                PathEnd::Finished(st.paths) // a failed `assume` ends the run
            } else {
                PathEnd::Undecided("no branch could be decided".into())
            });
        }
        self.machine.note_taken(func, feasible.iter().map(|f| f.0));
        let mut arrivals: Vec<Next> = feasible
            .into_iter()
            .map(|(e, g, known)| {
                let mut s = st.clone();
                if !known {
                    self.machine.add_to_pc(&mut s, g);
                }
                s.deferred = self.past_t(&s, e);
                self.arrive(s, func, e)
            })
            .collect();
        if arrivals.len() == 1 {
            return arrivals.remove(0);
        }
        // A split: the first goes on (even at a join), the others wait.
        let mut states = arrivals.into_iter().map(|a| match a {
            Next::Continue(s) | Next::Park(s) => s,
            _ => unreachable!("arriving only continues or parks"),
        });
        let first = states.next().expect("two or more arrivals");
        Next::Split(first, states.collect())
    }

    /// Whether `e` starts another iteration of a loop of main that the
    /// state has been round once already (the thesis's `_t = 0`): with
    /// path subsumption on, such a state waits until nothing else can run.
    fn past_t(&self, st: &State, e: EdgeId) -> bool {
        let prog = self.machine.program();
        let body = &prog.bodies[st.frame().func];
        let from = body.edges[e as usize].from;
        match body.node_kinds[from as usize] {
            NodeKind::LoopHeader(l) => {
                self.annotations.is_some()
                    && st.frames.len() == 1
                    && !prog.loop_exits[st.frame().func][e as usize]
                    && st.laps.get(l as usize).is_some_and(|n| *n >= 1)
            }
            _ => false,
        }
    }

    // ---- errors ----------------------------------------------------------------

    /// Asks whether the error edge `e` (guard `g`) can be taken; if so,
    /// records the error with a witness and its replay. Returns whether
    /// the error is possible.
    fn check_error(&mut self, st: &State, func: usize, e: EdgeId, g: TermId) -> bool {
        let prog = self.machine.program();
        let body = &prog.bodies[func];
        let tid = prog
            .is_error(func, body.edges[e as usize].to)
            .expect("an error edge");
        let target = &prog.targets[func][&tid];
        // A target already found needs only whether this path fails too
        // (it is not recorded again): a check without values, which the
        // unary checks may answer.
        let found = self.errors.iter().any(|e| e.target == *target);
        let f = match self.machine.terms().as_bool(g) {
            Some(false) => return false,
            _ if found => self.machine.check(&st.pc, g),
            _ => self.machine.check_for_values(&st.pc, g),
        };
        match f {
            Answer::Unsat => false,
            Answer::Unknown(why) => {
                let why = format!("whether the target can fail: {why}");
                self.machine.stats_mut().undecided_path(why);
                false
            }
            Answer::Sat if found => {
                let target = target.clone();
                let again = Mark::ErrorAgain {
                    target: target.label(),
                };
                self.machine.note_error(func, e, again);
                self.stop_if_first(&target);
                true
            }
            Answer::Sat => {
                let conjuncts: Vec<TermId> = st.pc.conjuncts().into_iter().chain([g]).collect();
                let witness = witness::from_model(&mut self.machine, &conjuncts, &st.runs);
                self.machine.close_check();
                let mark = self.record_error(target.clone(), witness);
                self.machine.note_error(func, e, mark);
                true
            }
        }
    }

    /// Records an error at a target not found before, with a witness
    /// that replays to it.
    /// The error's leaf in the drawn tree says how it went.
    fn record_error(&mut self, target: Target, witness: Result<Witness, String>) -> Mark {
        let Some(witness) = witness::replayed(&mut self.machine, &target, witness) else {
            return Mark::Undecided(format!("{}: no witness replays", target.label()));
        };
        self.stop_if_first(&target);
        let mark = Mark::Error {
            target: target.label(),
            witness: witness.to_string(),
        };
        self.errors.push(FoundError {
            target,
            witness,
            found_after: self.machine.stats().started.elapsed(),
        });
        mark
    }

    /// A guided run stops at its goal (and only there), a search for one
    /// target at that target; otherwise the first error stops the
    /// thesis's executor.
    fn stop_if_first(&mut self, target: &Target) {
        let opts = self.machine.options();
        let stop = match (&self.guidance, &opts.stop_at) {
            (Some(g), _) => g.goal == *target,
            (None, Some(t)) => t == target,
            (None, None) => opts.stop_at_first_error,
        };
        if stop {
            self.machine.stats_mut().stopped_at_error = true;
        }
    }

    // ---- what the run loop asks ------------------------------------------------

    pub(crate) fn program(&self) -> &'p Explored {
        self.machine.program()
    }

    pub(crate) fn options(&self) -> &'p Options {
        self.machine.options()
    }

    pub(crate) fn stats(&self) -> &Stats {
        self.machine.stats()
    }

    /// For the run loop's own counters (steps, merges, blacklisted sites).
    pub(crate) fn stats_mut(&mut self) -> &mut Stats {
        self.machine.stats_mut()
    }

    pub(crate) fn coverage(&self) -> &Coverage {
        &self.coverage
    }

    pub(crate) fn guidance(&self) -> Option<&Guidance> {
        self.guidance.as_ref()
    }

    /// The solver's queries and time so far.
    pub(crate) fn solver_effort(&self) -> (u64, Duration) {
        let s = self.machine.solver();
        (s.queries, s.time)
    }

    /// A guided run: the goal's condition and distances; a run for some
    /// targets only: the way to them.
    pub(crate) fn aim(&mut self, db: &Database, file: SourceFile) {
        let (opts, prog) = (self.machine.options(), self.machine.program());
        if let Some(g) = &opts.guide {
            let guidance = Guidance::new(db, file, prog, self.machine.terms_mut(), g);
            self.guidance = Some(guidance);
        }
        if !opts.only_towards.is_empty() {
            self.towards = Some(Way::towards(prog, &opts.only_towards));
        }
    }

    /// Whether a state may go on: whether the flowgraphs lead it to the
    /// goal or the targets the run is for, and in a guided run, whether its
    /// path condition lets it reach the goal. A state that may not is
    /// counted and dropped.
    pub(crate) fn on_course(&mut self, st: &State) -> bool {
        let ways = [
            self.towards.as_ref(),
            self.guidance.as_ref().map(|g| &g.way),
        ];
        let cut_off = ways.iter().flatten().any(|w| w.distance(st) >= FAR);
        let on = !cut_off
            && (self.guidance.as_mut()).is_none_or(|g| g.may_reach_goal(&mut self.machine, st));
        if !on {
            self.machine.stats_mut().off_course += 1;
        }
        on
    }

    /// Path subsumption before a step: a state of main adds its vertex to
    /// its trail; a subsumed one ends here, its trail annotated again.
    /// Whether the state goes on.
    pub(crate) fn unsubsumed(&mut self, st: &mut State) -> bool {
        let Some(ann) = &mut self.annotations else {
            return true;
        };
        if st.frames.len() != 1 {
            return true;
        }
        st.trail = st.trail.push(st.frame().node);
        if !ann.subsumes(&mut self.machine, st) {
            return true;
        }
        self.machine.stats_mut().subsumed += 1;
        ann.learn(&mut self.machine, &st.trail);
        false
    }

    /// After a path of main ended, with path subsumption on: what its
    /// trail teaches the annotations.
    pub(crate) fn learn(&mut self, trail: &Trail) {
        if let Some(ann) = &mut self.annotations {
            ann.learn(&mut self.machine, trail);
        }
    }

    /// Counts how a path ended.
    pub(crate) fn end_path(&mut self, e: PathEnd) {
        let s = self.machine.stats_mut();
        match e {
            PathEnd::Finished(n) => {
                s.paths = s.paths.saturating_add(n);
                s.runs += 1;
            }
            PathEnd::Error => s.error_paths += 1,
            PathEnd::Undecided(why) => s.undecided_path(why),
        }
    }

    /// The merge of two states at the same location (counted), or `None`
    /// when their sharing differs (counted as refused).
    pub(crate) fn merge(&mut self, a: &State, b: &State) -> Option<State> {
        let id = self.machine.next_pc_id();
        let merged = merge::merge(self.machine.terms_mut(), a, b, id);
        let s = self.machine.stats_mut();
        match merged {
            Some(_) => s.states_merged += 1,
            None => s.merges_refused += 1,
        }
        merged
    }

    /// The statistics so far, with the figures kept elsewhere (the
    /// solver's, the coverage, the guidance's note, the invariants) filled
    /// in; the run loop adds its own (the worklist).
    pub(crate) fn stats_so_far(&self) -> Stats {
        let mut s = self.machine.stats().clone();
        let solver = self.machine.solver();
        s.queries = solver.queries;
        s.decided_locally = solver.decided_locally();
        s.solver_time = solver.time;
        s.second_opinions = solver.second_opinions;
        s.covered_edges = self.coverage.count() as usize;
        if let Some(g) = &self.guidance {
            s.guide_note = g.note.clone();
        }
        if let Some(a) = &self.annotations {
            s.invariants = a.invariants;
            s.invariants_refuted = a.refuted;
        }
        s
    }

    /// With path subsumption: main's annotations by source line.
    pub(crate) fn annotations_by_line(&mut self) -> Vec<(usize, String)> {
        match &self.annotations {
            Some(a) => a.listing(self.machine.program(), self.machine.terms_mut()),
            None => Vec::new(),
        }
    }

    /// What the step just made did, for the drawn tree.
    pub(crate) fn take_note(&mut self) -> Option<super::tree::StepNote> {
        self.machine.take_note()
    }

    /// How many errors (one per target) were found so far.
    pub(crate) fn errors_found(&self) -> usize {
        self.errors.len()
    }

    pub(crate) fn take_errors(&mut self) -> Vec<FoundError> {
        std::mem::take(&mut self.errors)
    }

    /// The term store, emptied out at the end of a run (a large one is
    /// freed on a thread of its own).
    pub(crate) fn take_terms(&mut self) -> Terms {
        self.machine.take_terms()
    }
}

fn is_guard(i: &Instr) -> bool {
    matches!(i, Instr::Assume(_) | Instr::Assert(..))
}
