//! The whole-program flowgraph with, beside it, the flowgraph of each
//! function that its calls cut (recursion), each inlined from itself: what
//! the Horn clauses summarise such a function by (docs/horn-clauses.md,
//! "Recursion").
//!
//! Only the integer parameters and an integer result are related. A
//! function qualifies when it never assigns or takes the address of a
//! parameter (its exit must still see the values it was called with), and
//! every call its flowgraph cuts is to a function that qualifies.

use super::{self as ir, Body, Expr, Instr, NodeId, Place, VarId};
use std::collections::BTreeMap;

/// The functions summarised, with their flowgraphs appended to the
/// program's (`with_summaries`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Summaries {
    pub list: Vec<Summary>,
}

/// One function's part of the combined flowgraph.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Summary {
    pub function: String,
    /// Its flowgraph's entry and exit in the combined body.
    pub entry: NodeId,
    pub exit: NodeId,
    /// Its integer parameters: the position among a call's arguments, and
    /// the variable in the combined body.
    pub params: Vec<(usize, VarId)>,
    pub result: VarId,
}

impl Summaries {
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn of(&self, function: &str) -> Option<&Summary> {
        self.list.iter().find(|s| s.function == function)
    }

    /// The variables the summaries relate.
    pub fn roots(&self) -> Vec<VarId> {
        let vars = self.list.iter().flat_map(|s| s.params.iter().map(|p| p.1));
        vars.chain(self.list.iter().map(|s| s.result)).collect()
    }
}

/// `program` (the inlined `main`) with, beside it, the flowgraph of every
/// function that one of its calls cuts, each inlined from itself; and the
/// summaries. `None` when nothing is cut, or some cut function does not
/// qualify (its calls then stay unknown, as without summaries).
pub fn with_summaries(
    program: &Body,
    bodies: &BTreeMap<String, (&Body, u32)>,
) -> Option<(Body, Summaries)> {
    let mut combined = program.clone();
    let mut summaries = Summaries::default();
    let mut pending: Vec<String> = cut_callees(program);
    if pending.is_empty() {
        return None;
    }
    while let Some(f) = pending.pop() {
        if summaries.of(&f).is_some() {
            continue;
        }
        let own = ir::inline_function(bodies, &f)?;
        let body = &own.body;
        if !qualifies(body) {
            return None;
        }
        pending.extend(cut_callees(body));
        let (nodes, vars) = ir::append(&mut combined, body, &format!("{f}$"));
        let params = (0..body.params)
            .filter(|&k| body.vars[k].ty.is_int())
            .map(|k| (k, k as VarId + vars))
            .collect();
        summaries.list.push(Summary {
            function: f,
            entry: body.entry + nodes,
            exit: body.exit + nodes,
            params,
            result: body.var_id(ir::RETURN_VAR)? + vars,
        });
    }
    Some((combined, summaries))
}

/// The functions that calls in `body` call without being inlined.
fn cut_callees(body: &Body) -> Vec<String> {
    let mut out: Vec<String> = (body.edges.iter())
        .filter_map(|e| match &e.instr {
            Instr::Call { func, .. } => Some(func.clone()),
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether a function's own flowgraph returns an integer and keeps its
/// parameters as it was called with them.
fn qualifies(body: &Body) -> bool {
    let returns_int = (body.var_id(ir::RETURN_VAR)).is_some_and(|r| body.var(r).ty.is_int());
    let is_param = |v: VarId| (v as usize) < body.params;
    let changes_param = body.edges.iter().any(|e| {
        let mut touched = false;
        e.instr.walk_exprs(&mut |x| {
            if let Expr::AddrOf(v) = x {
                touched |= is_param(*v);
            }
        });
        touched
            || match &e.instr {
                Instr::Assign(Place::Var(v), _) | Instr::Alloc(v, _) => is_param(*v),
                Instr::Call { dst, .. } => is_param(*dst),
                _ => false,
            }
    });
    returns_int && !changes_param
}
