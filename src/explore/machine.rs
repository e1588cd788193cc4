//! The symbolic machine: what every step of a state and every feature of
//! the executor works on. It holds the program (`program::Explored`), the
//! run's term store, its one solver session (`solver`), the options, the
//! statistics, main's inputs (the symbols a witness is read back from) and
//! the numbering of path-condition conjuncts. Evaluation on a state
//! (`eval`) adds its methods to [`Machine`].
//!
//! The features (subsumption, guidance, witnesses, loop summaries) each
//! take a `&mut Machine` beside their own state; none of them knows the
//! stepping (`exec`) or its bookkeeping (errors, coverage, call frames).

use super::program::Explored;
use super::solver::Solver;
use super::state::{InputArray, PathCond, State, Value};
use super::tree::StepNote;
use super::{Options, Stats};
use crate::ir;
use crate::smt::Answer;
use crate::term::{self, TermId, Terms};
use num_bigint::BigInt;
use std::sync::Arc;
use std::time::Duration;

/// One of main's parameters: its name, its term variable, and its input
/// array's dimensions (0: an integer).
pub(crate) struct MainInput {
    pub name: String,
    pub var: term::Var,
    pub dims: u8,
}

/// The program, terms, solver, options and statistics of one run. Its
/// fields are private: the solver is only asked through the methods below,
/// which hand it the term store, so no caller needs both at once.
pub(crate) struct Machine<'p> {
    prog: &'p Explored,
    opts: &'p Options,
    terms: Terms,
    solver: Solver,
    stats: Stats,
    /// main's parameters, in order.
    inputs: Vec<MainInput>,
    /// The input stream's array symbol.
    stream: Option<term::Var>,
    /// The last id given to a path-condition conjunct.
    last_pc_id: u64,
    /// What the current step did, for the drawn tree (only when drawing).
    note: Option<StepNote>,
    /// Replays the witnesses of the errors found, the program compiled
    /// once for all of them.
    replayer: crate::witness::Replayer<'p>,
    /// The input-array reads of each path-condition conjunct a witness
    /// was built from (`witness::from_model`).
    input_reads: rustc_hash::FxHashMap<TermId, Arc<[InputRead]>>,
}

/// A read `A(i…)` of an input array, with its indices.
pub(crate) type InputRead = (TermId, Vec<TermId>);

impl<'p> Machine<'p> {
    pub(crate) fn new(prog: &'p Explored, solver: Solver, opts: &'p Options) -> Machine<'p> {
        Machine {
            prog,
            opts,
            terms: Terms::new(),
            solver,
            stats: Stats {
                total_edges: prog.edge_count(),
                ..Stats::default()
            },
            inputs: Vec::new(),
            stream: None,
            last_pc_id: 0,
            note: opts.tree.map(|_| StepNote::default()),
            replayer: crate::witness::Replayer::new(&prog.ast, &prog.source, &[]),
            input_reads: Default::default(),
        }
    }

    /// The input-array reads of `conjunct`, found by `find` the first time.
    pub(crate) fn input_reads_of(
        &mut self,
        conjunct: TermId,
        find: fn(&Terms, TermId) -> Vec<InputRead>,
    ) -> Arc<[InputRead]> {
        if let Some(r) = self.input_reads.get(&conjunct) {
            return r.clone();
        }
        let r: Arc<[InputRead]> = find(&self.terms, conjunct).into();
        self.input_reads.insert(conjunct, r.clone());
        r
    }

    pub(crate) fn replayer(&self) -> &crate::witness::Replayer<'p> {
        &self.replayer
    }

    /// The note of the current step, when the tree is drawn.
    pub(crate) fn note(&mut self) -> Option<&mut StepNote> {
        self.note.as_mut()
    }

    /// The note of the step just made, and a fresh one for the next.
    pub(crate) fn take_note(&mut self) -> Option<StepNote> {
        self.note.as_mut().map(std::mem::take)
    }

    pub(crate) fn program(&self) -> &'p Explored {
        self.prog
    }

    pub(crate) fn options(&self) -> &'p Options {
        self.opts
    }

    pub(crate) fn terms(&self) -> &Terms {
        &self.terms
    }

    pub(crate) fn terms_mut(&mut self) -> &mut Terms {
        &mut self.terms
    }

    /// The term store, emptied out of the machine at the end of a run (a
    /// large one is freed on a thread of its own).
    pub(crate) fn take_terms(&mut self) -> Terms {
        std::mem::take(&mut self.terms)
    }

    pub(crate) fn stats(&self) -> &Stats {
        &self.stats
    }

    pub(crate) fn stats_mut(&mut self) -> &mut Stats {
        &mut self.stats
    }

    /// The solver session, for its counters.
    pub(crate) fn solver(&self) -> &Solver {
        &self.solver
    }

    pub(crate) fn inputs(&self) -> &[MainInput] {
        &self.inputs
    }

    pub(crate) fn stream(&self) -> Option<term::Var> {
        self.stream
    }

    // ---- main's inputs ---------------------------------------------------

    /// The input stream: a symbolic array, read from position 0.
    pub(crate) fn declare_input_stream(&mut self) -> Value {
        let stream = self.terms.symbol(term::VarKind::ArraySymbol(1), "$in₀");
        self.stream = Some(stream);
        Value::Input(InputArray {
            symbol: stream,
            dims: 1,
            prefix: Arc::new([]),
            writes: Arc::new([]),
        })
    }

    /// A parameter of main: a symbol, or a symbolic array for an input array.
    pub(crate) fn declare_main_argument(&mut self, v: &ir::VarInfo) -> Result<Value, String> {
        let dims = v.ty.array_depth().ok_or_else(|| {
            format!(
                "main's parameter `{}` is not an integer or an array of integers",
                v.name
            )
        })?;
        let dims =
            u8::try_from(dims).map_err(|_| format!("`{}` has too many dimensions", v.name))?;
        // Named as the necessary conditions name an input (`a₀`), so that a
        // guiding condition imports onto the same symbols.
        let kind = match dims {
            0 => term::VarKind::Symbol,
            d => term::VarKind::ArraySymbol(d),
        };
        let var = self.terms.symbol(kind, &format!("{}₀", v.name));
        let name = v.name.clone();
        self.inputs.push(MainInput { name, var, dims });
        Ok(match dims {
            0 => Value::Int(self.terms.var(var)),
            _ => Value::Input(InputArray {
                symbol: var,
                dims,
                prefix: Arc::new([]),
                writes: Arc::new([]),
            }),
        })
    }

    // ---- path conditions and the solver ------------------------------------

    /// A fresh id for a path-condition conjunct (the solver session keeps
    /// the prefix two path conditions share by these ids).
    pub(crate) fn next_pc_id(&mut self) -> u64 {
        self.last_pc_id += 1;
        self.last_pc_id
    }

    /// Adds a conjunct to the path condition, unless it is one already
    /// (the guard of a loop, asked again at every lap).
    pub(crate) fn add_to_pc(&mut self, st: &mut State, c: TermId) {
        if self.terms.as_bool(c) != Some(true) && !st.pc.contains(c) {
            st.pc = st.pc.and(c, self.next_pc_id());
        }
    }

    /// Whether `pc ∧ g` is satisfiable; constants need no solver.
    pub(crate) fn feasible(&mut self, st: &State, g: TermId) -> Answer {
        match self.terms.as_bool(g) {
            Some(true) => Answer::Sat,
            Some(false) => Answer::Unsat,
            None => self.check(&st.pc, g),
        }
    }

    /// Whether `pc ∧ extra` is satisfiable.
    pub(crate) fn check(&mut self, pc: &PathCond, extra: TermId) -> Answer {
        self.solver.check(&self.terms, pc, extra, false)
    }

    /// [`Machine::check`], with the model kept on `sat` for
    /// [`Machine::values`]; the caller then calls [`Machine::close_check`].
    pub(crate) fn check_for_values(&mut self, pc: &PathCond, extra: TermId) -> Answer {
        self.solver.check(&self.terms, pc, extra, true)
    }

    /// [`Machine::check`] within `limit` (`unknown` past it).
    pub(crate) fn check_within(&mut self, pc: &PathCond, extra: TermId, limit: Duration) -> Answer {
        self.solver.check_within(&self.terms, pc, extra, limit)
    }

    /// After a `sat` of [`Machine::check_for_values`]: the values of
    /// integer terms in its model.
    pub(crate) fn values(&mut self, ts: &[TermId]) -> Result<Vec<BigInt>, String> {
        self.solver.values(&self.terms, ts)
    }

    /// Closes the check kept open for values.
    pub(crate) fn close_check(&mut self) {
        self.solver.close();
    }
}
