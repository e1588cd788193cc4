//! PDA loop summarisation (`--summarization`; the thesis's §4.4 and
//! §5.4.4, Proteus's path dependency automata; `docs/thesis-executor.md`
//! §5 and §11, "Loop summarisation").
//!
//! Owns everything between a loop of the IR and the states that leave it:
//!
//! - [`paths`]: the paths through a loop's body (and its exits), each run
//!   once on a general state of symbols (an inner loop's traces split a
//!   path); what no summary can express makes the loop unsummarisable;
//! - [`classify`]: each variable's change along a path (unchanged,
//!   induction `v + inc`, or the value of the last iteration), the IV/NIV
//!   check of conditions, and the closed forms after k iterations;
//! - [`pda`]: the path dependency automaton: vertices = paths, edges and
//!   Init decided by the solver, periodic cycles and their periods;
//! - [`traces`]: the traces, by a depth-first search from Init to the
//!   exits, with fresh path counters;
//! - [`apply`]: a state entering a loop forks one state per trace;
//! - [`blocks`]: block schedules, a witness-only under-approximation of a
//!   loop that has no summary (`--block-schedules`).
//!
//! A summary is computed once per (function, loop) in a run, on first use,
//! and remembered, failures with their reason ([`Memo`]). The stages work
//! on the run's `machine::Machine` (terms, solver, statistics) and the
//! memo; what becomes of the states a summary makes (coverage, the
//! worklist) is the stepping's (`exec`), which this does not know.

mod apply;
mod blocks;
mod classify;
mod paths;
mod pda;
mod traces;

use super::machine::Machine;
use crate::ir::{EdgeId, LoopId, VarId};
use crate::term::{TermId, Terms, Var, VarKind};
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

pub(crate) use apply::Left;
pub(crate) use blocks::StreamRun;
pub(crate) use pda::Pda;

/// Most paths through one loop body (after splitting `!=`), and most
/// traces of one summary: beyond these a loop is not summarised.
const MAX_PATHS: usize = 16;
const MAX_TRACES: usize = 64;

/// The integer variables of a function that summaries speak of, and the
/// symbols that stand for their values when a loop is entered.
pub(crate) struct Symbols {
    pub vars: Vec<VarId>,
    pub syms: Vec<Var>,
    /// The input arrays a loop may read (`$in`, main's one-dimensional
    /// input arrays), each with the array symbol that stands for it.
    pub arrays: Vec<(VarId, Var)>,
}

impl Symbols {
    pub(crate) fn slot(&self, v: VarId) -> Option<usize> {
        self.vars.iter().position(|x| *x == v)
    }
    pub(crate) fn array(&self, v: VarId) -> Option<Var> {
        self.arrays.iter().find(|(x, _)| *x == v).map(|(_, s)| *s)
    }
    /// The general state: each variable its entry symbol.
    pub(crate) fn general(&self, terms: &mut Terms) -> Vec<TermId> {
        self.syms.iter().map(|s| terms.var(*s)).collect()
    }
}

/// One way the loop can run: a condition over the entry symbols and the
/// trace's path counters, and the value of each variable after the loop.
#[derive(Clone, Debug)]
pub(crate) struct Trace {
    pub cond: TermId,
    /// Per variable of [`Symbols::vars`]: its value after the loop, `None`
    /// when the trace leaves it as it was.
    pub effect: Vec<Option<TermId>>,
    pub counters: Vec<Var>,
    /// The loop-exit edge the trace leaves by.
    pub exit: EdgeId,
    /// The PDA vertices in order, e.g. `p2 → (p3×1 p2×1)* → p1`.
    pub shape: String,
}

pub(crate) struct Summary {
    pub symbols: Arc<Symbols>,
    /// Kept for inspection (the tests check it against the thesis's tables).
    #[cfg_attr(not(test), allow(dead_code))]
    pub pda: Pda,
    pub traces: Vec<Trace>,
}

pub(crate) type Outcome = Arc<Result<Summary, String>>;

/// The summaries of a run, and the symbols of each function.
#[derive(Default)]
pub(crate) struct Memo {
    loops: HashMap<(usize, LoopId), Outcome>,
    schedules: HashMap<(usize, LoopId), Arc<Result<blocks::Schedules, String>>>,
    symbols: HashMap<usize, Arc<Symbols>>,
    counters: u32,
}

impl Memo {
    /// The summary of loop `l` of function `func`, computed on first use.
    pub(crate) fn summary_of(&mut self, m: &mut Machine, func: usize, l: LoopId) -> Outcome {
        Summariser { m, memo: self }.summary_of(func, l)
    }

    /// The block schedules of loop `l` of function `func`, computed on
    /// first use.
    pub(crate) fn schedules_for(
        &mut self,
        m: &mut Machine,
        func: usize,
        l: LoopId,
    ) -> Arc<Result<blocks::Schedules, String>> {
        Summariser { m, memo: self }.schedules_of(func, l)
    }

    /// A fresh path counter `κn` (`kn` while the automaton is built).
    fn new_counter(&mut self, m: &mut Machine, name: &str) -> Var {
        self.counters += 1;
        let n = self.counters;
        (m.terms_mut()).new_var(VarKind::Counter, format!("{name}{n}"))
    }
}

/// The work of summarising: the run's [`Machine`] (terms, solver,
/// statistics) and the memo (the inner loops' summaries, the symbols, the
/// counters' numbering). The stages (`paths`, `pda`, `traces`) are its
/// methods.
struct Summariser<'a, 'p> {
    m: &'a mut Machine<'p>,
    memo: &'a mut Memo,
}

impl Summariser<'_, '_> {
    fn summary_of(&mut self, func: usize, l: LoopId) -> Outcome {
        if let Some(s) = self.memo.loops.get(&(func, l)) {
            return s.clone();
        }
        let _phase = crate::deadline::phase("loop summarisation");
        let outcome = Arc::new(self.summarise(func, l));
        match &*outcome {
            Ok(_) => self.m.stats_mut().loops_summarised += 1,
            Err(why) => self.not_summarisable(func, l, why),
        }
        self.memo.loops.insert((func, l), outcome.clone());
        outcome
    }

    /// Counts a loop found not summarisable, and keeps the first reasons.
    fn not_summarisable(&mut self, func: usize, l: LoopId, why: &str) {
        let prog = self.m.program();
        let lp = &prog.bodies[func].loops[l as usize];
        let (line, col) = prog.line_col(func, lp.span);
        let name = &prog.bodies[func].name;
        let why = format!("the loop at {line}:{col} in {name}: {why}");
        let stats = self.m.stats_mut();
        stats.loops_not_summarisable += 1;
        if stats.not_summarisable_reasons.len() < 5 {
            stats.not_summarisable_reasons.push(why);
        }
    }

    /// The block schedules of loop `l`, computed on first use.
    fn schedules_of(&mut self, func: usize, l: LoopId) -> Arc<Result<blocks::Schedules, String>> {
        if let Some(s) = self.memo.schedules.get(&(func, l)) {
            return s.clone();
        }
        let _phase = crate::deadline::phase("block schedules");
        let outcome = Arc::new(self.schedules(func, l));
        self.memo.schedules.insert((func, l), outcome.clone());
        outcome
    }

    fn summarise(&mut self, func: usize, l: LoopId) -> Result<Summary, String> {
        let symbols = self.symbols_of(func);
        let paths = self.loop_paths(func, l, &symbols)?;
        let pda = self.build_pda(&symbols, paths)?;
        let traces = self.traces(&symbols, &pda)?;
        Ok(Summary {
            symbols,
            pda,
            traces,
        })
    }

    fn new_counter(&mut self, name: &str) -> Var {
        self.memo.new_counter(self.m, name)
    }

    /// The function's integer variables and their entry symbols (one set
    /// per function: an inner loop's traces are over the same symbols as
    /// the outer loop's paths).
    fn symbols_of(&mut self, func: usize) -> Arc<Symbols> {
        if let Some(s) = self.memo.symbols.get(&func) {
            return s.clone();
        }
        let body = &self.m.program().bodies[func];
        let (mut vars, mut syms, mut arrays) = (Vec::new(), Vec::new(), Vec::new());
        for (i, v) in body.vars.iter().enumerate() {
            let id = i as VarId;
            let t = self.m.terms_mut();
            if v.ty.is_int() {
                vars.push(id);
                syms.push(t.new_var(VarKind::Symbol, format!("{}°", v.name)));
            } else if v.ty.array_depth() == Some(1) && v.is_input() {
                let a = t.new_var(VarKind::ArraySymbol(1), format!("{}°", v.name));
                arrays.push((id, a));
            }
        }
        let s = Arc::new(Symbols { vars, syms, arrays });
        self.memo.symbols.insert(func, s.clone());
        s
    }
}
