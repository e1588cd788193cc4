//! The top level: reachability of a vertex over the acyclic skeleton.
//!
//! Vertices are visited in topological order of the graph without back
//! edges, restricted to those that can reach the target. Each vertex gets a
//! guard (the disjunction of its in-edges' guards) and a state (an `ite`
//! join of its in-edges' states, one per merge point), so φ̂ is linear in
//! the program however many backbones there are. At a loop header the
//! loop's summary is applied to the joined state.

use super::Engine;
use super::state::{Slot, State};
use crate::ir::{self, NodeId, VarKind};
use crate::term::{Sort, TermId, Var, VarKind as TVar};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// The state where main starts: inputs are symbols, the input position is
/// 0 and no local variable holds a value yet.
pub(crate) fn initial_state(eng: &mut Engine) -> State {
    let mut st = State::general(&mut eng.terms, &eng.slots);
    let zero = eng.terms.int(0);
    let one = eng.terms.int(1);
    st.set(Slot::Next, one);
    for (i, v) in eng.body.vars.iter().enumerate() {
        let id = i as ir::VarId;
        if v.name == ir::INPUT_COUNTER {
            st.set(Slot::Value(id), zero);
        }
        if matches!(v.kind, VarKind::Local | VarKind::Temp)
            && st.values.contains_key(&Slot::Init(id))
        {
            st.set(Slot::Init(id), zero);
        }
    }
    st
}

/// The guard of reaching any of `targets` from the entry (φ̂ for them), in
/// one pass over the skeleton.
pub(crate) fn reach(eng: &mut Engine, targets: &[NodeId]) -> TermId {
    let body = eng.body;
    let skeleton = Skeleton::new(body, targets);
    if !skeleton.relevant[body.entry as usize] {
        return eng.terms.bool(false);
    }
    let order = skeleton.topological_order(body);
    let guard = propagate(eng, &skeleton, &order, targets);
    let reached: Vec<TermId> = targets
        .iter()
        .filter_map(|t| guard.get(t).copied())
        .collect();
    eng.terms.or(reached)
}

/// The graph without back edges, restricted to the vertices that can
/// reach a target.
struct Skeleton {
    relevant: Vec<bool>,
    /// Forward in-edges of each vertex.
    preds: Vec<Vec<ir::EdgeId>>,
    /// Forward out-edges between relevant vertices.
    succ: Vec<Vec<ir::EdgeId>>,
}

impl Skeleton {
    fn new(body: &ir::Body, targets: &[NodeId]) -> Skeleton {
        let n = body.node_count as usize;
        let back = body.back_edge_mask();
        let forward: Vec<ir::EdgeId> = (0..body.edges.len() as ir::EdgeId)
            .filter(|e| !back[*e as usize])
            .collect();
        let relevant = body.reaching(targets, &forward);
        let mut preds: Vec<Vec<ir::EdgeId>> = vec![vec![]; n];
        for &e in &forward {
            preds[body.edges[e as usize].to as usize].push(e);
        }
        let mut succ: Vec<Vec<ir::EdgeId>> = vec![vec![]; n];
        for &e in &forward {
            let ed = &body.edges[e as usize];
            if relevant[ed.from as usize] && relevant[ed.to as usize] {
                succ[ed.from as usize].push(e);
            }
        }
        Skeleton {
            relevant,
            preds,
            succ,
        }
    }

    /// A topological order of the relevant part (Kahn's algorithm).
    fn topological_order(&self, body: &ir::Body) -> Vec<NodeId> {
        let mut indeg = vec![0usize; self.relevant.len()];
        for out in &self.succ {
            for &e in out {
                indeg[body.edges[e as usize].to as usize] += 1;
            }
        }
        let mut order = Vec::new();
        let mut queue = vec![body.entry];
        while let Some(v) = queue.pop() {
            order.push(v);
            for &e in &self.succ[v as usize] {
                let t = body.edges[e as usize].to as usize;
                indeg[t] -= 1;
                if indeg[t] == 0 {
                    queue.push(t as NodeId);
                }
            }
        }
        order
    }
}

/// Guards and states vertex by vertex in `order`: a vertex's guard is the
/// disjunction of its in-edges', its state their `ite` join, and at a loop
/// header the loop's summary is applied. A state is dropped once all its
/// out-edges are taken (targets' states are kept).
fn propagate(
    eng: &mut Engine,
    skeleton: &Skeleton,
    order: &[NodeId],
    targets: &[NodeId],
) -> HashMap<NodeId, TermId> {
    let body = eng.body;
    let mut guard: HashMap<NodeId, TermId> = HashMap::default();
    let mut state: HashMap<NodeId, State> = HashMap::default();
    let t = eng.terms.bool(true);
    guard.insert(body.entry, t);
    let init = initial_state(eng);
    state.insert(body.entry, init);
    let mut pending_out: Vec<usize> = skeleton.succ.iter().map(Vec::len).collect();
    for &v in order.iter().filter(|v| **v != body.entry) {
        crate::deadline::check();
        let mut ins: Vec<(TermId, State)> = Vec::new();
        for &e in &skeleton.preds[v as usize] {
            let ed = &body.edges[e as usize];
            let (Some(&g), Some(src)) = (guard.get(&ed.from), state.get(&ed.from)) else {
                continue;
            };
            let mut st = src.clone();
            let c = eng.exec(&mut st, &ed.instr);
            let g = eng.terms.and2(g, c);
            pending_out[ed.from as usize] -= 1;
            if pending_out[ed.from as usize] == 0 && !targets.contains(&ed.from) {
                state.remove(&ed.from);
            }
            if eng.terms.as_bool(g) != Some(false) {
                ins.push((g, st));
            }
        }
        if ins.is_empty() {
            let f = eng.terms.bool(false);
            guard.insert(v, f);
            continue;
        }
        let mut g = eng.terms.or(ins.iter().map(|(g, _)| *g).collect());
        let mut st = join(eng, &ins);
        if let Some(l) = eng.loop_at(v) {
            let a = eng.apply_summary(l, &st);
            g = eng.terms.and2(g, a.guard);
            st = a.post;
            let facts = eng.assume_facts(v, &mut st);
            g = eng.terms.and2(g, facts);
        }
        guard.insert(v, g);
        state.insert(v, st);
    }
    guard
}

/// One state for several in-edges: per slot, `ite(g₁, v₁, ite(g₂, v₂, …))`
/// (as a λ of such for arrays, so that reads β-reduce into it).
fn join(eng: &mut Engine, ins: &[(TermId, State)]) -> State {
    if ins.len() == 1 {
        return ins[0].1.clone();
    }
    let mut out = State {
        values: BTreeMap::new(),
    };
    let slots: Vec<Slot> = ins[0].1.values.keys().copied().collect();
    for s in slots {
        let vals: Vec<TermId> = ins.iter().map(|(_, st)| st.get(s)).collect();
        if vals.iter().all(|v| *v == vals[0]) {
            out.set(s, vals[0]);
            continue;
        }
        let joined = match eng.terms.sort(vals[0]) {
            Sort::Array(n) => {
                let xs: Vec<Var> = (0..n)
                    .map(|_| eng.terms.new_var(TVar::Bound, "x"))
                    .collect();
                let xts: Vec<TermId> = xs.iter().map(|x| eng.terms.var(*x)).collect();
                let reads: Vec<TermId> = vals
                    .iter()
                    .map(|a| eng.terms.select(*a, xts.clone()))
                    .collect();
                let body = ite_chain(eng, ins, &reads);
                eng.terms.lambda(xs, body)
            }
            _ => ite_chain(eng, ins, &vals),
        };
        out.set(s, joined);
    }
    out
}

fn ite_chain(eng: &mut Engine, ins: &[(TermId, State)], vals: &[TermId]) -> TermId {
    let mut acc = *vals.last().expect("at least two in-edges");
    for i in (0..vals.len() - 1).rev() {
        acc = eng.terms.ite(ins[i].0, vals[i], acc);
    }
    acc
}
