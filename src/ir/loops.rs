//! Backbones: the acyclic paths of a flowgraph (the APC technical report,
//! §3; `docs/necessary-conditions.md` §3).
//!
//! microc has only `while`, so every cycle passes through a loop header
//! and an acyclic path is exactly a path of the graph with the back edges
//! removed. A function's backbones run from the entry to a vertex (its exit
//! or a target's error vertex); a loop's backbones are the kinds of one
//! iteration: from the header, inside the loop, back to the header (the
//! induced program P(C, header) with the back edge to a fresh target).
//! Their number can be exponential, so they are counted by dynamic
//! programming and listed only up to a limit.

use super::*;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backbones {
    /// How many there are (saturating).
    pub count: u128,
    /// The first few, each as its list of edges.
    pub paths: Vec<Vec<EdgeId>>,
}

/// Backbones of the function from its entry to `to`.
pub fn backbones(body: &Body, to: NodeId, limit: usize) -> Backbones {
    let back = body.back_edge_mask();
    let allowed = |_: &Edge, id: EdgeId| !back[id as usize];
    paths(body, body.entry, &|v| v == to, &allowed, limit)
}

/// Backbones of one iteration of a loop: header to header, inside the loop,
/// ending with the back edge; inner loops' back edges are not followed.
pub fn loop_backbones(body: &Body, l: &Loop, limit: usize) -> Backbones {
    let inside = |v: NodeId| l.nodes.binary_search(&v).is_ok();
    let back = body.back_edge_mask();
    let allowed = |e: &Edge, id: EdgeId| {
        inside(e.from) && (l.back_edges.contains(&id) || (inside(e.to) && !back[id as usize]))
    };
    // The back edge's head is the header itself: mark it by the edge.
    let ends = |_: NodeId| false;
    paths_to_edges(body, l.header, &ends, &allowed, &l.back_edges, limit)
}

fn paths(
    body: &Body,
    from: NodeId,
    is_end: &dyn Fn(NodeId) -> bool,
    allowed: &dyn Fn(&Edge, EdgeId) -> bool,
    limit: usize,
) -> Backbones {
    paths_to_edges(body, from, is_end, allowed, &[], limit)
}

/// Paths from `from` that end at a vertex satisfying `is_end` or with one of
/// `end_edges`, using only allowed edges (which must form a DAG).
fn paths_to_edges(
    body: &Body,
    from: NodeId,
    is_end: &dyn Fn(NodeId) -> bool,
    allowed: &dyn Fn(&Edge, EdgeId) -> bool,
    end_edges: &[EdgeId],
    limit: usize,
) -> Backbones {
    let n = body.node_count as usize;
    let succ: Vec<Vec<EdgeId>> = {
        let mut s = vec![Vec::new(); n];
        for (i, e) in body.edges.iter().enumerate() {
            if allowed(e, i as EdgeId) {
                s[e.from as usize].push(i as EdgeId);
            }
        }
        s
    };
    // Count by DP in reverse topological order (iterative: graphs can be long).
    let order = topological(n, &succ, body, end_edges);
    let mut count = vec![0u128; n];
    for &v in order.iter().rev() {
        let mut c: u128 = u128::from(is_end(v));
        for &e in &succ[v as usize] {
            let add = if end_edges.contains(&e) {
                1
            } else {
                count[body.edges[e as usize].to as usize]
            };
            c = c.saturating_add(add);
        }
        count[v as usize] = c;
    }
    // List the first `limit` by depth-first search with an explicit stack.
    let mut listed = Vec::new();
    let mut stack: Vec<(NodeId, Vec<EdgeId>)> = vec![(from, vec![])];
    while let Some((v, path)) = stack.pop() {
        crate::deadline::tick();
        if listed.len() >= limit {
            break;
        }
        // `NodeId::MAX` marks a path that ended with one of `end_edges`.
        if v == NodeId::MAX {
            listed.push(path);
            continue;
        }
        if is_end(v) {
            listed.push(path.clone());
        }
        for &e in succ[v as usize].iter().rev() {
            let mut p = path.clone();
            p.push(e);
            if end_edges.contains(&e) {
                stack.push((NodeId::MAX, p));
            } else if count[body.edges[e as usize].to as usize] > 0 {
                stack.push((body.edges[e as usize].to, p));
            }
        }
    }
    Backbones {
        count: count[from as usize],
        paths: listed,
    }
}

/// Vertices in a topological order of the allowed edges (Kahn).
fn topological(n: usize, succ: &[Vec<EdgeId>], body: &Body, end_edges: &[EdgeId]) -> Vec<NodeId> {
    let mut indeg = vec![0usize; n];
    for s in succ {
        for &e in s {
            if !end_edges.contains(&e) {
                indeg[body.edges[e as usize].to as usize] += 1;
            }
        }
    }
    let mut queue: Vec<NodeId> = (0..n as NodeId)
        .filter(|&v| indeg[v as usize] == 0)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(v) = queue.pop() {
        order.push(v);
        for &e in &succ[v as usize] {
            if end_edges.contains(&e) {
                continue;
            }
            let t = body.edges[e as usize].to as usize;
            indeg[t] -= 1;
            if indeg[t] == 0 {
                queue.push(t as NodeId);
            }
        }
    }
    order
}
