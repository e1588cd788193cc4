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

use super::{Memo, Summary, Trace};
use crate::explore::machine::Machine;
use crate::explore::state::{State, Value};
use crate::ir::{EdgeId, LoopId, NodeKind};
use crate::smt::Answer;
use crate::term::{Subst, Var};

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
        let entry = entry_values(m, st, summary)?;
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
        for c in &t.counters {
            let fresh = self.new_counter(m, "κ");
            let ft = m.terms_mut().var(fresh);
            subst.bind(*c, ft);
        }
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
        let mut out = st.clone();
        m.add_to_pc(&mut out, cond);
        for (i, e) in t.effect.iter().enumerate() {
            if let Some(e) = e {
                let value = subst.apply(m.terms_mut(), *e);
                out.write(out.cell_of(s.symbols.vars[i]), Value::Int(value));
            }
        }
        out.frame_mut().node = m.program().bodies[func].edges[t.exit as usize].to;
        Some(Some(out))
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

/// The substitution of the summary's entry symbols by the state's
/// values; `None` if a symbol some trace reads has no integer value.
fn entry_values(m: &mut Machine, st: &State, s: &Summary) -> Option<Subst> {
    let sy = &s.symbols;
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
    let reads_missing = s.traces.iter().any(|tr| {
        t.mentions_any(tr.cond, &missing)
            || (tr.effect.iter().flatten()).any(|e| t.mentions_any(*e, &missing))
    });
    (!reads_missing).then_some(subst)
}
