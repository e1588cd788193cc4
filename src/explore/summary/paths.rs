//! The paths through a loop: from the header around to the header again
//! (body paths) or out through a loop-exit edge (exit paths), each run
//! once on the general state of entry symbols (the thesis's §5.4.4: "we
//! need to create general symbolic states").
//!
//! Only what a summary can express soundly is allowed: assignments to
//! integer variables of pure integer expressions (and reads of the input
//! stream or of main's input arrays). A loop whose body calls, writes
//! through pointers, into arrays or records, allocates, outputs, or may
//! fail (any check vertex: a summary would skip the failure) is not
//! summarisable. An inner loop is replaced by its traces (§4.4.3), each
//! splitting the path; an inner loop that is not summarisable makes the
//! outer one fail too.

use super::Summariser;
use super::classify::conjuncts;
use super::{MAX_PATHS, Symbols, traces};
use crate::explore::eval::int_term;
use crate::ir::{Cond, EdgeId, Expr, Instr, LoopId, NodeId, NodeKind, Place, VarId};
use crate::symbolic::comparison;
use crate::term::{TermId, Terms};

/// One path through the loop, run once from the entry symbols.
#[derive(Clone, Debug)]
pub(crate) struct LoopPath {
    pub atoms: Vec<TermId>,
    pub delta: Vec<TermId>,
    /// The loop-exit edge of an exit path; `None` for a body path.
    pub exit: Option<EdgeId>,
}

#[derive(Clone)]
struct Walk {
    node: NodeId,
    atoms: Vec<TermId>,
    state: Vec<TermId>,
}

type Found<T> = Result<T, String>;

impl Summariser<'_, '_> {
    /// The paths through loop `l`, in the order of the flowgraph's edges.
    pub(super) fn loop_paths(
        &mut self,
        func: usize,
        l: LoopId,
        sy: &Symbols,
    ) -> Found<Vec<LoopPath>> {
        let prog = self.m.program();
        let lp = &prog.bodies[func].loops[l as usize];
        let start = sy.general(self.m.terms_mut());
        let mut todo = std::collections::VecDeque::from([Walk {
            node: lp.header,
            atoms: Vec::new(),
            state: start,
        }]);
        let mut done = Vec::new();
        while let Some(w) = todo.pop_front() {
            crate::deadline::tick();
            for &e in &prog.succ[func][w.node as usize] {
                let edge = &prog.bodies[func].edges[e as usize];
                if let Some(t) = prog.is_error(func, edge.to) {
                    let t = &prog.targets[func][&t];
                    return Err(format!(
                        "the loop body may fail ({} at {}:{}): a summary would skip the failure",
                        t.kind.as_str(),
                        t.line,
                        t.col
                    ));
                }
                let mut next = w.clone();
                if !self.run_instr(func, &mut next, &edge.instr, sy)? {
                    continue; // infeasible
                }
                let exit = lp.exit_edges.contains(&e);
                if exit || edge.to == lp.header {
                    done.push(LoopPath {
                        atoms: next.atoms,
                        delta: next.state,
                        exit: exit.then_some(e),
                    });
                } else if !lp.nodes.contains(&edge.to) {
                    return Err("the body leaves the loop other than through its condition".into());
                } else if let NodeKind::LoopHeader(inner) =
                    prog.bodies[func].node_kinds[edge.to as usize]
                {
                    next.node = edge.to;
                    for s in self.through_inner(func, inner, next, sy)? {
                        todo.push_back(s);
                    }
                } else {
                    next.node = edge.to;
                    todo.push_back(next);
                }
                if done.len() + todo.len() > 4 * MAX_PATHS {
                    return Err(format!(
                        "more than {} paths through the body",
                        4 * MAX_PATHS
                    ));
                }
            }
        }
        Ok(done)
    }

    /// A walk arriving at an inner loop's header goes on after it, once
    /// per trace of the inner loop (its counters solved away).
    fn through_inner(
        &mut self,
        func: usize,
        inner: LoopId,
        w: Walk,
        sy: &Symbols,
    ) -> Found<Vec<Walk>> {
        let prog = self.m.program();
        let span = prog.bodies[func].loops[inner as usize].span;
        let (line, col) = prog.line_col(func, span);
        let summary = self.summary_of(func, inner);
        let s = match &*summary {
            Ok(s) => s,
            Err(why) => {
                return Err(format!(
                    "its inner loop at {line}:{col} is not summarisable ({why})"
                ));
            }
        };
        let mut out = Vec::new();
        for t in &s.traces {
            let Some(solved) = traces::eliminate(self.m.terms_mut(), t) else {
                continue; // infeasible
            };
            if !solved.counters.is_empty() {
                return Err(format!(
                    "the iterations of its inner loop at {line}:{col} (trace {}) are not fixed by the values on entry, so they differ from one outer iteration to the next",
                    t.shape
                ));
            }
            let at = super::classify::at(sy, &w.state);
            let mut next = w.clone();
            let mut feasible = true;
            for a in solved.atoms {
                let a = at.apply(self.m.terms_mut(), a);
                feasible &= conjuncts(self.m.terms(), a, &mut next.atoms).is_some();
            }
            if !feasible {
                continue;
            }
            for (i, e) in solved.effect.iter().enumerate() {
                if let Some(e) = e {
                    next.state[i] = at.apply(self.m.terms_mut(), *e);
                }
            }
            next.node = prog.bodies[func].edges[t.exit as usize].to;
            out.push(next);
        }
        Ok(out)
    }

    /// Runs one instruction on a walk; `false` if its condition is false.
    fn run_instr(&mut self, func: usize, w: &mut Walk, instr: &Instr, sy: &Symbols) -> Found<bool> {
        match instr {
            Instr::Assign(Place::Var(v), e) => {
                let i = self.int_slot(func, *v, sy, "writes")?;
                w.state[i] = self.term_of(func, e, &w.state, sy)?;
            }
            Instr::Assign(p, _) => {
                return Err(match p {
                    Place::Deref(_) => "the body writes through a pointer",
                    Place::Index(..) => "the body writes into an array",
                    Place::Field(..) => "the body writes a record field",
                    Place::Var(_) => unreachable!("matched above"),
                }
                .into());
            }
            Instr::Alloc(..) => return Err("the body allocates memory".into()),
            Instr::Call { func, .. } => return Err(format!("the body calls `{func}`")),
            Instr::Output(_) => {
                return Err(
                    "the body has an `output` statement: a summary would lose the outputs of its iterations"
                        .into(),
                );
            }
            Instr::Enter(_) => return Err("the body enters an inlined function".into()),
            Instr::Assume(c) | Instr::Assert(c, _) => {
                let t = self.cond_of(func, c, &w.state, sy)?;
                return Ok(conjuncts(self.m.terms(), t, &mut w.atoms).is_some());
            }
            Instr::Skip => {}
        }
        Ok(true)
    }

    fn int_slot(&self, func: usize, v: crate::ir::VarId, sy: &Symbols, what: &str) -> Found<usize> {
        sy.slot(v).ok_or_else(|| {
            format!(
                "the body {what} `{}`, which is not an integer variable",
                self.m.program().bodies[func].var(v).name
            )
        })
    }

    fn cond_of(&mut self, func: usize, c: &Cond, state: &[TermId], sy: &Symbols) -> Found<TermId> {
        let Cond::Cmp(op, a, b) = c else {
            return Err("the body has a check".into());
        };
        let (x, y) = (
            self.term_of(func, a, state, sy)?,
            self.term_of(func, b, state, sy)?,
        );
        Ok(comparison(self.m.terms_mut(), *op, x, y))
    }

    /// An integer expression's term on the walk's state.
    fn term_of(&mut self, func: usize, e: &Expr, state: &[TermId], sy: &Symbols) -> Found<TermId> {
        let body = &self.m.program().bodies[func];
        let var = |_: &mut Terms, v: VarId| {
            sy.slot(v).map(|i| state[i]).ok_or_else(|| {
                format!(
                    "the body reads `{}`, which is not an integer variable",
                    body.var(v).name
                )
            })
        };
        let array = |t: &mut Terms, v: VarId| sy.array(v).map(|a| t.var(a));
        int_term(self.m.terms_mut(), e, &var, &array).map_err(|what| {
            if what.ends_with("variable") {
                what
            } else {
                format!("the body uses {what}")
            }
        })
    }
}
