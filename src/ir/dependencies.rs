//! Which functions a target's reachability depends on: those a run may
//! execute before it reaches the target (docs/editors.md, "What is
//! checked again").
//!
//! A target is reached from `main`. A run that reaches it has executed,
//! before it, only code of
//!
//! - the *chain*: functions on a call path from `main` to the target's
//!   function (their activations are on the stack, or were);
//! - the callees, with everything they call, of each call in a chain
//!   function after which that function can still go on to the target:
//!   to a call of a chain function (a *gateway*) or, in the target's own
//!   function, to the target.
//!
//! So two programs whose call graphs are equal and whose bodies of these
//! functions are equal give every input the same run up to the target:
//! the target's verdict carries over. The call graph decides the chain
//! and the chain's bodies decide the calls that precede a gateway, so the
//! set is the same in both programs.

use super::{Body, Instr, NodeId, TargetId};
use std::collections::{BTreeMap, BTreeSet};

/// Each function's callees, by name.
pub type CallGraph = BTreeMap<String, BTreeSet<String>>;

/// The call graph of the program made of `bodies`.
pub fn call_graph<B: std::borrow::Borrow<Body>>(bodies: &BTreeMap<String, B>) -> CallGraph {
    (bodies.iter())
        .map(|(name, body)| {
            let callees = (body.borrow().edges.iter())
                .filter_map(|e| match &e.instr {
                    Instr::Call { func, .. } => Some(func.clone()),
                    _ => None,
                })
                .collect();
            (name.clone(), callees)
        })
        .collect()
}

/// The functions a run may execute before it reaches target `target` of
/// `function`, `function` itself included.
pub fn runs_before<B: std::borrow::Borrow<Body>>(
    bodies: &BTreeMap<String, B>,
    graph: &CallGraph,
    function: &str,
    target: TargetId,
) -> BTreeSet<String> {
    let chain = chain(graph, function);
    let mut before: BTreeSet<String> = chain.clone();
    before.insert(function.to_string());
    for name in &chain {
        let Some(body) = bodies.get(name) else {
            continue;
        };
        let goal = target_vertex(body.borrow(), name == function, target);
        for callee in calls_preceding_gateways(body.borrow(), &chain, goal) {
            before.extend(called_from(graph, &callee));
        }
    }
    before
}

/// The functions on a call path from `main` to `function`.
fn chain(graph: &CallGraph, function: &str) -> BTreeSet<String> {
    let from_main = called_from(graph, "main");
    if !from_main.contains(function) {
        return BTreeSet::new();
    }
    let mut callers = BTreeSet::from([function.to_string()]);
    let mut work = vec![function.to_string()];
    while let Some(f) = work.pop() {
        for (caller, callees) in graph {
            if callees.contains(&f) && callers.insert(caller.clone()) {
                work.push(caller.clone());
            }
        }
    }
    callers.intersection(&from_main).cloned().collect()
}

/// `function` and every function it calls, directly or not.
pub fn called_from(graph: &CallGraph, function: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::from([function.to_string()]);
    let mut work = vec![function.to_string()];
    while let Some(f) = work.pop() {
        for callee in graph.get(&f).into_iter().flatten() {
            if seen.insert(callee.clone()) {
                work.push(callee.clone());
            }
        }
    }
    seen
}

/// The target's error vertex, if this is its function.
fn target_vertex(body: &Body, is_target_function: bool, target: TargetId) -> Option<NodeId> {
    let t = body.targets.iter().find(|t| t.id == target)?;
    is_target_function.then_some(t.node)
}

/// The callees of the calls in `body` after which it can still reach a
/// gateway (a call of a chain function) or `goal`.
fn calls_preceding_gateways(
    body: &Body,
    chain: &BTreeSet<String>,
    goal: Option<NodeId>,
) -> BTreeSet<String> {
    let gateways = (body.edges.iter())
        .filter(|e| matches!(&e.instr, Instr::Call { func, .. } if chain.contains(func)))
        .map(|e| e.from);
    let leads_on = reaching(body, gateways.chain(goal));
    (body.edges.iter())
        .filter(|e| leads_on[e.to as usize])
        .filter_map(|e| match &e.instr {
            Instr::Call { func, .. } => Some(func.clone()),
            _ => None,
        })
        .collect()
}

/// Which vertices of `body` can reach one of `goals` (the goals included).
fn reaching(body: &Body, goals: impl Iterator<Item = NodeId>) -> Vec<bool> {
    let mut preds: Vec<Vec<NodeId>> = vec![Vec::new(); body.node_count as usize];
    for e in &body.edges {
        preds[e.to as usize].push(e.from);
    }
    let mut seen = vec![false; body.node_count as usize];
    let mut work: Vec<NodeId> = goals.collect();
    for &g in &work {
        seen[g as usize] = true;
    }
    while let Some(v) = work.pop() {
        for &p in &preds[v as usize] {
            if !seen[p as usize] {
                seen[p as usize] = true;
                work.push(p);
            }
        }
    }
    seen
}
