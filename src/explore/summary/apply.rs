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

use super::{Summary, Trace};
use crate::explore::exec::{Executor, Next, PathEnd};
use crate::explore::state::{State, Value};
use crate::ir::{EdgeId, LoopId, NodeKind};
use crate::smt::Answer;
use crate::term::{Subst, Var};

impl Executor<'_> {
    /// `arrive`, except that with `--summarization` a state entering a
    /// summarisable loop leaves it at once, as its summary's states.
    pub(crate) fn arrive_or_summarise(&mut self, st: State, func: usize, e: EdgeId) -> Next {
        if self.opts.summarization
            && let Some(l) = self.entered_loop(func, e)
            && let Ok(summary) = &*self.summary_of(func, l)
            && let Some(next) = self.apply_summary(&st, func, e, summary)
        {
            return next;
        }
        self.arrive(st, func, e)
    }

    /// The loop whose header edge `e` enters from outside, if any.
    fn entered_loop(&self, func: usize, e: EdgeId) -> Option<LoopId> {
        let body = &self.prog.bodies[func];
        let NodeKind::LoopHeader(l) = body.node_kinds[body.edges[e as usize].to as usize] else {
            return None;
        };
        let lp = body.loops.get(l as usize)?;
        (!lp.back_edges.contains(&e)).then_some(l)
    }

    /// The states the summary makes of `st`; `None` if it cannot apply.
    fn apply_summary(&mut self, st: &State, func: usize, e: EdgeId, s: &Summary) -> Option<Next> {
        let entry = self.entry_values(st, s)?;
        self.cover(func, e);
        self.stats.summaries_applied += 1;
        let mut states = Vec::new();
        let mut undecided = false;
        for t in &s.traces {
            match self.instantiate(st, func, s, t, &entry) {
                Some(Some(n)) => states.push(n),
                Some(None) => {}
                None => undecided = true,
            }
        }
        if states.is_empty() {
            return Some(Next::End(if undecided {
                PathEnd::Undecided("no trace of a loop summary could be decided".into())
            } else {
                PathEnd::Finished(0) // the loop never ends from here
            }));
        }
        let first = states.remove(0);
        Some(if states.is_empty() {
            Next::Continue(first)
        } else {
            Next::Split(first, states)
        })
    }

    /// The substitution of the summary's entry symbols by the state's
    /// values; `None` if a symbol some trace reads has no integer value.
    fn entry_values(&mut self, st: &State, s: &Summary) -> Option<Subst> {
        let sy = &s.symbols;
        let mut subst = Subst::new();
        let mut missing: Vec<Var> = Vec::new();
        for (i, v) in sy.vars.iter().enumerate() {
            let value = st.read(st.cell_of(*v)).clone();
            let ints = value
                .leaves(&mut self.terms)
                .iter()
                .all(|(_, x)| matches!(x, Value::Int(_)));
            if ints {
                let t = value.int(&mut self.terms);
                subst.bind(sy.syms[i], t);
            } else {
                missing.push(sy.syms[i]);
            }
        }
        for (v, a) in &sy.arrays {
            match st.read(st.cell_of(*v)) {
                Value::Input(arr)
                    if arr.dims == 1 && arr.prefix.is_empty() && arr.writes.is_empty() =>
                {
                    let t = self.terms.var(arr.symbol);
                    subst.bind(*a, t);
                }
                _ => missing.push(*a),
            }
        }
        let reads_missing = s.traces.iter().any(|t| {
            self.terms.mentions_any(t.cond, &missing)
                || t.effect
                    .iter()
                    .flatten()
                    .any(|e| self.terms.mentions_any(*e, &missing))
        });
        (!reads_missing).then_some(subst)
    }

    /// The state trace `t` makes of `st`: `Some(None)` if the trace cannot
    /// be taken, `None` if the solver could not say.
    fn instantiate(
        &mut self,
        st: &State,
        func: usize,
        s: &Summary,
        t: &Trace,
        entry: &Subst,
    ) -> Option<Option<State>> {
        let mut subst = entry.clone();
        for c in &t.counters {
            let fresh = self.new_counter("κ");
            let ft = self.terms.var(fresh);
            subst.bind(*c, ft);
        }
        let cond = subst.apply(&mut self.terms, t.cond);
        match self.feasible(st, cond) {
            Answer::Sat => {}
            Answer::Unsat => {
                if self.terms.as_bool(cond).is_none() {
                    self.stats.pruned += 1;
                }
                return Some(None);
            }
            Answer::Unknown(why) => {
                self.stats.undecided_paths += 1;
                self.stats.note_undecided(why);
                return None;
            }
        }
        let mut out = st.clone();
        self.add_to_pc(&mut out, cond);
        for (i, e) in t.effect.iter().enumerate() {
            if let Some(e) = e {
                let value = subst.apply(&mut self.terms, *e);
                out.write(out.cell_of(s.symbols.vars[i]), Value::Int(value));
            }
        }
        self.cover(func, t.exit);
        out.frame_mut().node = self.prog.bodies[func].edges[t.exit as usize].to;
        Some(Some(out))
    }
}
