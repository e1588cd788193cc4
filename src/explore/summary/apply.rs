//! Applying a summary (the thesis's §4.4: "the state is duplicated, so
//! there is one state for each trace"): a state that enters a loop from
//! outside (not by a back edge) forks one state per trace, with the
//! trace's condition instantiated on the state's values (fresh counters
//! each time) added to its path condition, the updated values written,
//! and the state placed after the trace's loop-exit edge. A trace whose
//! condition cannot hold is pruned as a branch is.
//!
//! The state runs the loop as usual when the loop is not summarisable, or
//! when a value the summary reads is not an integer here (an unassigned
//! variable, an input array with writes).
//!
//! What becomes of the states (their coverage, the worklist) is the
//! stepping's: this only makes them.

use super::blocks::Schedule;
use super::{Memo, Summary, Symbols, Trace};
use crate::explore::machine::Machine;
use crate::explore::state::{State, Value};
use crate::ir::{EdgeId, LoopId, NodeKind};
use crate::smt::Answer;
use crate::term::{Subst, TermId, Var};
use std::sync::Arc;

/// The states a loop's summary made of a state entering it.
pub(crate) struct Left {
    /// One per trace that can be taken, each with the loop-exit edge it
    /// left by, in the summary's order.
    pub states: Vec<(State, EdgeId)>,
    /// Whether the solver left some trace undecided.
    pub undecided: bool,
}

impl Memo {
    /// With `--summarization`, the states a summarisable loop that edge
    /// `e` enters from outside makes of `st`; `None` if the state must run
    /// the loop (no such loop, no summary, or one that cannot apply).
    pub(crate) fn leave_loop(
        &mut self,
        m: &mut Machine,
        st: &State,
        func: usize,
        e: EdgeId,
    ) -> Option<Left> {
        if !m.options().summarization {
            return None;
        }
        let l = entered_loop(m, func, e)?;
        let Ok(summary) = &*self.summary_of(m, func, l) else {
            return None;
        };
        let entry = entry_values(m, st, &summary.symbols, traces_read(&summary.traces))?;
        m.stats_mut().summaries_applied += 1;
        let mut left = Left {
            states: Vec::new(),
            undecided: false,
        };
        for t in &summary.traces {
            match self.instantiate(m, st, func, summary, t, &entry) {
                Some(Some(s)) => {
                    left.states.push((s, t.exit));
                    // The drawn tree labels each state with its trace
                    // (`p2 → (p3×1 p2×1)* → p1`).
                    if let Some(note) = m.note() {
                        note.taken.push(t.shape.clone());
                    }
                }
                Some(None) => {}
                None => left.undecided = true,
            }
        }
        Some(left)
    }

    /// With `--block-schedules`, the states the block schedules of a loop
    /// make of `st` entering it by `e`: witnesses only, to go beside the
    /// state's own iterations. None if the loop has no schedule, or a
    /// value they read is not an integer, or with `--summarization` if the
    /// loop has a summary (which is exact).
    pub(crate) fn scheduled(
        &mut self,
        m: &mut Machine,
        st: &State,
        func: usize,
        e: EdgeId,
    ) -> Vec<(State, EdgeId)> {
        if !m.options().block_schedules {
            return Vec::new();
        }
        let Some(l) = entered_loop(m, func, e) else {
            return Vec::new();
        };
        if m.options().summarization && self.summary_of(m, func, l).is_ok() {
            return Vec::new();
        }
        let outcome = self.schedules_for(m, func, l);
        let Ok(s) = &*outcome else {
            return Vec::new();
        };
        let read = (s.schedules.iter())
            .flat_map(|x| std::iter::once(x.cond).chain(x.effect.iter().flatten().copied()));
        let Some(entry) = entry_values(m, st, &s.symbols, read.collect()) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for x in &s.schedules {
            if let Some(state) = self.run_schedule(m, st, func, &s.symbols, x, &entry) {
                if let Some(note) = m.note() {
                    note.taken.push(x.shape.clone());
                }
                out.push((state, x.exit));
            }
        }
        m.stats_mut().schedules_applied += out.len() as u64;
        out
    }

    /// The state schedule `x` makes of `st`, if the solver finds it
    /// feasible.
    fn run_schedule(
        &mut self,
        m: &mut Machine,
        st: &State,
        func: usize,
        sy: &Symbols,
        x: &Schedule,
        entry: &Subst,
    ) -> Option<State> {
        let mut subst = entry.clone();
        self.bind_fresh_counters(m, &x.counters, &mut subst);
        for i in &x.inputs {
            let t = m.terms_mut();
            let fresh = t.new_var(crate::term::VarKind::Symbol, "ι");
            let ft = t.var(fresh);
            subst.bind(*i, ft);
        }
        let cond = subst.apply(m.terms_mut(), x.cond);
        if m.feasible(st, cond) != Answer::Sat {
            return None;
        }
        let left = Leaving {
            cond,
            effect: &x.effect,
            exit: x.exit,
        };
        let mut out = left.state(m, st, func, sy, &subst);
        let t = m.terms_mut();
        let runs = (x.runs.iter()).map(|r| super::StreamRun {
            start: subst.apply(t, r.start),
            count: subst.apply(t, r.count),
            values: r.values.iter().map(|v| subst.apply(t, *v)).collect(),
        });
        Arc::make_mut(&mut out.runs).extend(runs.collect::<Vec<_>>());
        Some(out)
    }

    /// The state trace `t` makes of `st`: `Some(None)` if the trace cannot
    /// be taken, `None` if the solver could not say.
    fn instantiate(
        &mut self,
        m: &mut Machine,
        st: &State,
        func: usize,
        s: &Summary,
        t: &Trace,
        entry: &Subst,
    ) -> Option<Option<State>> {
        let mut subst = entry.clone();
        self.bind_fresh_counters(m, &t.counters, &mut subst);
        let cond = subst.apply(m.terms_mut(), t.cond);
        match m.feasible(st, cond) {
            Answer::Sat => {}
            Answer::Unsat => {
                if m.terms().as_bool(cond).is_none() {
                    m.stats_mut().pruned += 1;
                    if let Some(note) = m.note() {
                        note.pruned.push(t.shape.clone());
                    }
                }
                return Some(None);
            }
            Answer::Unknown(why) => {
                m.stats_mut().undecided_path(why);
                return None;
            }
        }
        let left = Leaving {
            cond,
            effect: &t.effect,
            exit: t.exit,
        };
        Some(Some(left.state(m, st, func, &s.symbols, &subst)))
    }

    /// Binds each of `counters` to a fresh counter in `subst`.
    fn bind_fresh_counters(&mut self, m: &mut Machine, counters: &[Var], subst: &mut Subst) {
        for c in counters {
            let fresh = self.new_counter(m, "κ");
            let ft = m.terms_mut().var(fresh);
            subst.bind(*c, ft);
        }
    }
}

/// How a state leaves a loop by a trace or a schedule: under a condition,
/// with each variable's value after the loop, by a loop-exit edge.
struct Leaving<'a> {
    cond: TermId,
    effect: &'a [Option<TermId>],
    exit: EdgeId,
}

impl Leaving<'_> {
    /// `st` with the condition added, the effect (instantiated by `subst`)
    /// written, and placed after the exit edge.
    fn state(
        &self,
        m: &mut Machine,
        st: &State,
        func: usize,
        sy: &Symbols,
        subst: &Subst,
    ) -> State {
        let mut out = st.clone();
        m.add_to_pc(&mut out, self.cond);
        for (i, e) in self.effect.iter().enumerate() {
            if let Some(e) = e {
                let value = subst.apply(m.terms_mut(), *e);
                out.write(out.cell_of(sy.vars[i]), Value::Int(value));
            }
        }
        out.frame_mut().node = m.program().bodies[func].edges[self.exit as usize].to;
        out
    }
}

/// The loop whose header edge `e` enters from outside, if any.
fn entered_loop(m: &Machine, func: usize, e: EdgeId) -> Option<LoopId> {
    let body = &m.program().bodies[func];
    let NodeKind::LoopHeader(l) = body.node_kinds[body.edges[e as usize].to as usize] else {
        return None;
    };
    let lp = body.loops.get(l as usize)?;
    (!lp.back_edges.contains(&e)).then_some(l)
}

/// The terms the traces read: conditions and effects.
fn traces_read(traces: &[Trace]) -> Vec<TermId> {
    let mut out = Vec::new();
    for t in traces {
        out.push(t.cond);
        out.extend(t.effect.iter().flatten());
    }
    out
}

/// The substitution of the entry symbols by the state's values; `None` if
/// a symbol that a term of `read` reads has no integer value.
fn entry_values(m: &mut Machine, st: &State, sy: &Symbols, read: Vec<TermId>) -> Option<Subst> {
    let t = m.terms_mut();
    let mut subst = Subst::new();
    let mut missing: Vec<Var> = Vec::new();
    for (i, v) in sy.vars.iter().enumerate() {
        let value = st.read(st.cell_of(*v)).clone();
        let ints = (value.leaves(t).iter()).all(|(_, x)| matches!(x, Value::Int(_)));
        if ints {
            subst.bind(sy.syms[i], value.int(t));
        } else {
            missing.push(sy.syms[i]);
        }
    }
    for (v, a) in &sy.arrays {
        match st.read(st.cell_of(*v)) {
            Value::Input(arr)
                if arr.dims == 1 && arr.prefix.is_empty() && arr.writes.is_empty() =>
            {
                subst.bind(*a, t.var(arr.symbol));
            }
            _ => missing.push(*a),
        }
    }
    let reads_missing = read.iter().any(|r| t.mentions_any(*r, &missing));
    (!reads_missing).then_some(subst)
}
