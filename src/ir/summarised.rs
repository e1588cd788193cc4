//! The whole-program flowgraph with, beside it, the flowgraph of each
//! function that its calls cut (recursion), each inlined from itself: what
//! the Horn clauses summarise such a function by (docs/horn-clauses.md,
//! "Recursion").
//!
//! Only the integer parameters and an integer result are related. The
//! relation reads the parameters as the function was called with them:
//! each is copied, at a new entry, into a variable nothing else writes
//! (`f$n@entry`), and the summary relates those copies. A function
//! qualifies when it returns an integer and every call its flowgraph cuts
//! is to a function that qualifies.

use super::{
    self as ir, Body, Edge, Expr, Instr, NodeId, NodeKind, Place, VarId, VarInfo, VarKind,
};
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
    /// the variable in the combined body that holds the value it was
    /// called with.
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
    let mut pending: Vec<String> = cut_callees(program);
    if pending.is_empty() {
        return None;
    }
    let mut combined = program.clone();
    let mut summaries = Summaries::default();
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
        let int_params: Vec<usize> = (0..body.params)
            .filter(|&k| body.vars[k].ty.is_int())
            .collect();
        let (entry, copies) = copy_at_entry(&mut combined, body.entry + nodes, vars, &int_params);
        summaries.list.push(Summary {
            function: f,
            entry,
            exit: body.exit + nodes,
            params: int_params.into_iter().zip(copies).collect(),
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

/// Whether a function's own flowgraph returns an integer.
fn qualifies(body: &Body) -> bool {
    (body.var_id(ir::RETURN_VAR)).is_some_and(|r| body.var(r).ty.is_int())
}

/// A new entry before `entry` that copies each of `params` (positions
/// among the parameters of the part whose variables start at `vars`) into
/// a new variable: the new entry, and the copies.
fn copy_at_entry(
    combined: &mut Body,
    entry: NodeId,
    vars: VarId,
    params: &[usize],
) -> (NodeId, Vec<VarId>) {
    let mut copies = Vec::new();
    let mut at = entry;
    for &k in params.iter().rev() {
        let param = vars + k as VarId;
        let info = combined.var(param).clone();
        combined.vars.push(VarInfo {
            name: format!("{}@entry", info.name),
            kind: VarKind::Temp,
            ..info
        });
        let copy = combined.vars.len() as VarId - 1;
        let before = combined.add_vertex(NodeKind::Plain);
        combined.edges.push(Edge {
            from: before,
            to: at,
            instr: Instr::Assign(Place::Var(copy), Expr::Var(param)),
            span: Default::default(),
        });
        copies.push(copy);
        at = before;
    }
    copies.reverse();
    (at, copies)
}
