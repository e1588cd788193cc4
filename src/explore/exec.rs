//! Stepping one state through the flowgraph (docs/thesis-executor.md,
//! "Statements"): an edge at a time, with the thesis's worklist rules at
//! branches (`if`: continue `then`, push `else`; `while`: continue the exit,
//! push the body), calls and returns on the state's own call stack, and
//! every check vertex asked of the solver.

use super::eval::Halt;
use super::program::Explored;
use super::solver::Solver;
use super::state::{CellId, Frame, PathCond, State, Value};
use super::{FoundError, Options, Stats};
use crate::ir::{self, EdgeId, Instr, NodeKind, VarKind};
use crate::smt::Answer;
use crate::term::{TermId, Terms};
use std::sync::Arc;

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
    pub prog: &'p Explored,
    pub terms: Terms,
    pub solver: Solver,
    pub opts: &'p Options,
    pub stats: Stats,
    pub errors: Vec<FoundError>,
    /// Edges run at least once, per function.
    pub covered: Vec<Vec<bool>>,
    /// How many edges have run (also the coverage's version: it grows
    /// exactly when an edge is covered for the first time).
    pub covered_count: u64,
    next_pc: u64,
    /// The initial cells of the program-wide variables (`$in`, `$ic`);
    /// a call takes its caller's (merging renumbers cells).
    globals: Vec<(String, CellId)>,
    /// main's parameters: name, term variable, input-array dimensions (0: an integer).
    pub inputs: Vec<(String, crate::term::Var, u8)>,
    pub stream: Option<crate::term::Var>,
    /// main's annotations, with path subsumption on.
    pub annotations: Option<super::subsume::Annotations>,
    /// The goal and its necessary condition, in a guided run.
    pub guidance: Option<super::guide::Guidance>,
    /// Loop summaries computed so far (`--summarization`).
    pub summaries: super::summary::Memo,
}

impl<'p> Executor<'p> {
    pub(crate) fn new(prog: &'p Explored, solver: Solver, opts: &'p Options) -> Executor<'p> {
        let mut terms = Terms::new();
        let annotations = opts.subsumption.map(|at| {
            let main = prog.main;
            super::subsume::Annotations::new(
                &prog.bodies[main],
                &prog.succ[main],
                &mut terms,
                at,
                opts.invariants_from_true,
            )
        });
        Executor {
            covered: prog
                .bodies
                .iter()
                .map(|b| vec![false; b.edges.len()])
                .collect(),
            prog,
            terms,
            solver,
            opts,
            stats: Stats::default(),
            errors: Vec::new(),
            covered_count: 0,
            next_pc: 0,
            globals: Vec::new(),
            inputs: Vec::new(),
            stream: None,
            annotations,
            guidance: None,
            summaries: Default::default(),
        }
    }

    /// The state at main's entry: each parameter a symbol (an input array a
    /// symbolic array), the input stream a symbolic array at position 0.
    pub(crate) fn initial_state(&mut self) -> Result<State, String> {
        let mut st = State {
            frames: Vec::new(),
            store: Arc::new(Vec::new()),
            pc: PathCond::default(),
            pins: Arc::new(Vec::new()),
            paths: 1,
            tree_node: 0,
            merged_at: None,
            trail: Default::default(),
            laps: Arc::new(vec![0; self.prog.bodies[self.prog.main].loops.len()]),
            deferred: false,
        };
        let stream = self
            .terms
            .symbol(crate::term::VarKind::ArraySymbol(1), "$in₀");
        self.stream = Some(stream);
        let input = Value::Input(super::state::InputArray {
            symbol: stream,
            dims: 1,
            prefix: Arc::new([]),
            writes: Arc::new([]),
        });
        let zero = Value::Int(self.terms.int(0));
        self.globals = vec![
            (ir::INPUT_STREAM.to_string(), st.new_cell(input)),
            (ir::INPUT_COUNTER.to_string(), st.new_cell(zero)),
        ];
        let main = &self.prog.bodies[self.prog.main];
        let mut args = Vec::new();
        for v in &main.vars[..main.params] {
            args.push(self.main_argument(v)?);
        }
        let frame = self.frame(&mut st, self.prog.main, args, None);
        st.frames.push(frame);
        Ok(st)
    }

    fn main_argument(&mut self, v: &ir::VarInfo) -> Result<Value, String> {
        let dims = v.ty.array_depth().ok_or_else(|| {
            format!(
                "main's parameter `{}` is not an integer or an array of integers",
                v.name
            )
        })?;
        if dims == 0 {
            // Named as the necessary conditions name an input (`a₀`), so
            // that a guiding condition imports onto the same symbols.
            let s = (self.terms).symbol(crate::term::VarKind::Symbol, &format!("{}₀", v.name));
            self.inputs.push((v.name.clone(), s, 0));
            return Ok(Value::Int(self.terms.var(s)));
        }
        let dims =
            u8::try_from(dims).map_err(|_| format!("`{}` has too many dimensions", v.name))?;
        let s = (self.terms).symbol(
            crate::term::VarKind::ArraySymbol(dims),
            &format!("{}₀", v.name),
        );
        self.inputs.push((v.name.clone(), s, dims));
        Ok(Value::Input(super::state::InputArray {
            symbol: s,
            dims,
            prefix: Arc::new([]),
            writes: Arc::new([]),
        }))
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
        let body = &self.prog.bodies[func];
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
            let body = &self.prog.bodies[caller.func];
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

    pub(crate) fn next_id(&mut self) -> u64 {
        self.next_pc += 1;
        self.next_pc
    }

    /// Adds a conjunct to the path condition, unless it is one already
    /// (the guard of a loop, asked again at every lap).
    pub(crate) fn add_to_pc(&mut self, st: &mut State, c: TermId) {
        if self.terms.as_bool(c) != Some(true) && !st.pc.contains(c) {
            st.pc = st.pc.and(c, self.next_id());
        }
    }

    /// One step of a state.
    pub(crate) fn step(&mut self, mut st: State) -> Next {
        let (func, node) = (st.frame().func, st.frame().node);
        let out = &self.prog.succ[func][node as usize];
        match out.as_slice() {
            [] => self.leave_function(st),
            [e] if !is_guard(&self.prog.bodies[func].edges[*e as usize].instr) => {
                let e = *e;
                let backup = (self.opts.index_mode == super::IndexMode::Fork).then(|| st.clone());
                match self.run_edge(&mut st, e) {
                    Ok(()) => self.arrive_or_summarise(st, func, e),
                    Err(Halt::Fork(t, js)) => Next::Split(
                        self.pin(backup.clone().expect("kept in fork mode"), t, js[0]),
                        js[1..]
                            .iter()
                            .map(|j| self.pin(backup.clone().expect("kept"), t, *j))
                            .collect(),
                    ),
                    Err(Halt::Undecided(why)) => Next::End(PathEnd::Undecided(why)),
                }
            }
            _ => {
                let out = out.clone();
                self.branch(st, func, &out)
            }
        }
    }

    /// A forked copy of a state on `term == j`.
    fn pin(&mut self, mut st: State, t: TermId, j: usize) -> State {
        let jt = self.terms.int(j);
        let eq = self.terms.eq(t, jt);
        self.add_to_pc(&mut st, eq);
        Arc::make_mut(&mut st.pins).push((t, j));
        st
    }

    /// After an edge: mark it covered, move to its target; park at a join.
    pub(crate) fn arrive(&mut self, mut st: State, func: usize, e: EdgeId) -> Next {
        self.cover(func, e);
        if let Some(ann) = &self.annotations
            && st.frames.len() == 1
        {
            ann.count_lap(&mut st.laps, e);
        }
        let edge = &self.prog.bodies[func].edges[e as usize];
        if !matches!(edge.instr, Instr::Call { .. }) {
            st.frame_mut().node = edge.to;
        }
        let here = st.frame();
        if self.opts.merging != super::Merging::None
            && !matches!(edge.instr, Instr::Call { .. })
            && self.prog.joins[here.func][here.node as usize]
        {
            return Next::Park(st);
        }
        Next::Continue(st)
    }

    pub(crate) fn cover(&mut self, func: usize, e: EdgeId) {
        let c = &mut self.covered[func][e as usize];
        if !*c {
            *c = true;
            self.covered_count += 1;
        }
    }

    fn run_edge(&mut self, st: &mut State, e: EdgeId) -> Result<(), Halt> {
        let func = st.frame().func;
        let edge = &self.prog.bodies[func].edges[e as usize];
        match &edge.instr {
            Instr::Assign(p, x) => {
                let v = self.eval(st, x)?;
                self.assign(st, p, v)?;
            }
            Instr::Alloc(v, x) => {
                let val = self.eval(st, x)?;
                let c = st.new_cell(val);
                st.write(st.cell_of(*v), Value::Ptr(c));
            }
            Instr::Call { dst, func, args } => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(st, a)?);
                }
                let callee = self.prog.by_name[func];
                st.frame_mut().node = edge.to;
                let frame = self.frame(st, callee, vals, Some(*dst));
                st.frames.push(frame);
            }
            Instr::Output(x) => {
                self.eval(st, x)?;
            }
            Instr::Skip | Instr::Enter(_) | Instr::Assume(_) | Instr::Assert(..) => {}
        }
        Ok(())
    }

    /// At a vertex without out-edges: a function's exit returns; any
    /// other ends the path.
    fn leave_function(&mut self, mut st: State) -> Next {
        let frame = st.frames.pop().expect("a running state has a frame");
        let body = &self.prog.bodies[frame.func];
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
        let body = &self.prog.bodies[func];
        let mut guards = Vec::with_capacity(out.len());
        for &e in out {
            let g = match &body.edges[e as usize].instr {
                Instr::Assume(c) | Instr::Assert(c, _) => self.cond(&mut st, c),
                _ => Ok(self.terms.bool(true)),
            };
            match g {
                Ok(g) => guards.push((e, g)),
                Err(Halt::Undecided(why)) => return Next::End(PathEnd::Undecided(why)),
                Err(Halt::Fork(..)) => {
                    return Next::End(PathEnd::Undecided("a fork inside a condition".into()));
                }
            }
        }
        let (errors, onward): (Vec<_>, Vec<_>) = guards.into_iter().partition(|(e, _)| {
            self.prog
                .is_error(func, body.edges[*e as usize].to)
                .is_some()
        });
        let mut error_possible = false;
        let checked = !errors.is_empty();
        for (e, g) in errors {
            error_possible |= self.check_error(&st, func, e, g);
            if self.stats.stopped_at_error {
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
        let exits = &self.prog.loop_exits[func];
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
                self.feasible(&st, *g)
            };
            match f {
                Answer::Sat => feasible.push((*e, *g, implied || alone)),
                Answer::Unsat => {
                    first_unsat = k == 0;
                    // Pruned: the solver said so (a constant guard is no branch).
                    if self.terms.as_bool(*g).is_none() {
                        self.stats.pruned += 1;
                    }
                }
                Answer::Unknown(why) => {
                    self.stats.undecided_paths += 1;
                    self.stats.note_undecided(why);
                }
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
        let mut arrivals: Vec<Next> = feasible
            .into_iter()
            .map(|(e, g, known)| {
                let mut s = st.clone();
                if !known {
                    self.add_to_pc(&mut s, g);
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
        let body = &self.prog.bodies[st.frame().func];
        let from = body.edges[e as usize].from;
        match body.node_kinds[from as usize] {
            NodeKind::LoopHeader(l) => {
                self.annotations.is_some()
                    && st.frames.len() == 1
                    && !self.prog.loop_exits[st.frame().func][e as usize]
                    && st.laps.get(l as usize).is_some_and(|n| *n >= 1)
            }
            _ => false,
        }
    }

    /// Whether `pc ∧ g` is satisfiable; constants need no solver.
    pub(crate) fn feasible(&mut self, st: &State, g: TermId) -> Answer {
        match self.terms.as_bool(g) {
            Some(true) => Answer::Sat,
            Some(false) => Answer::Unsat,
            None => self.solver.check(&self.terms, &st.pc, g, false),
        }
    }

    /// Asks whether the error edge `e` (guard `g`) can be taken; if so,
    /// records the error with a witness and its replay. Returns whether
    /// the error is possible.
    fn check_error(&mut self, st: &State, func: usize, e: EdgeId, g: TermId) -> bool {
        let body = &self.prog.bodies[func];
        let tid = self
            .prog
            .is_error(func, body.edges[e as usize].to)
            .expect("an error edge");
        let f = match self.terms.as_bool(g) {
            Some(false) => return false,
            _ => self.solver.check(&self.terms, &st.pc, g, true),
        };
        match f {
            Answer::Unsat => false,
            Answer::Unknown(why) => {
                self.stats
                    .note_undecided(format!("whether the target can fail: {why}"));
                self.stats.undecided_paths += 1;
                false
            }
            Answer::Sat => {
                let conjuncts: Vec<TermId> = st.pc.conjuncts().into_iter().chain([g]).collect();
                let witness = self.witness(&conjuncts);
                self.solver.close();
                let target = self.prog.targets[func][&tid].clone();
                self.record_error(target, witness);
                true
            }
        }
    }
}

fn is_guard(i: &Instr) -> bool {
    matches!(i, Instr::Assume(_) | Instr::Assert(..))
}
