//! Query-count estimation (docs/thesis-executor.md, "State merging"; after
//! Kuznetsov et al.): Q(v, ℓ), how many future solver queries from vertex
//! ℓ involve variable v. Merging two states whose values of v differ puts
//! an `ite` into each of those queries, so the heuristic strategies merge
//! only when the sum of Q over the differing variables is below
//! `--limit-cost`.
//!
//! A vertex asks the solver about v when its branch condition mentions v,
//! when it checks an index that mentions v, or a divisor (or an `assert`)
//! that does. An assignment `x := e` passes x's future queries on to the
//! variables of e. Loops are where the two variants differ:
//! - `recursive`: every loop runs its body at most κ times (a walk over the
//!   unrolled graph, memoised per vertex and remaining iterations);
//! - `lattice`: a backward data-flow fixpoint, each value capped at 10.

use crate::ir::{Body, Cond, EdgeId, Expr, Instr, NodeId, NodeKind, Place, VarId};
use rustc_hash::FxHashMap as HashMap;

/// The lattice variant's cap (the thesis's value).
pub const LATTICE_CAP: u32 = 10;

/// Q(v, ℓ) of one function: `q[node][var]`.
pub struct QueryCounts {
    pub q: Vec<Vec<u32>>,
}

impl QueryCounts {
    pub fn at(&self, node: NodeId, v: VarId) -> u32 {
        self.q[node as usize][v as usize]
    }
}

/// The `recursive` variant, each loop unrolled at most `kappa` times.
pub fn recursive(body: &Body, kappa: u32) -> QueryCounts {
    let g = Graph::new(body);
    let mut walk = Walk {
        g: &g,
        kappa: kappa.min(u8::MAX as u32) as u8,
        memo: HashMap::default(),
    };
    let budgets = vec![0u8; body.loops.len()];
    let q = (0..body.node_count)
        .map(|n| walk.counts(n, &budgets_entering(&g, n, &budgets, walk.kappa)))
        .collect();
    QueryCounts { q }
}

/// The `lattice` variant: a fixpoint with values capped at [`LATTICE_CAP`].
pub fn lattice(body: &Body) -> QueryCounts {
    let g = Graph::new(body);
    let vars = body.vars.len();
    let mut q = vec![vec![0u32; vars]; body.node_count as usize];
    let mut changed = true;
    while changed {
        changed = false;
        for n in (0..body.node_count).rev() {
            let mut sum = g.local(n);
            for &e in &g.succ[n as usize] {
                let after = &q[body.edges[e as usize].to as usize];
                add(&mut sum, &g.transfer(e, after));
            }
            let capped: Vec<u32> = sum.into_iter().map(|x| x.min(LATTICE_CAP)).collect();
            if capped != q[n as usize] {
                q[n as usize] = capped;
                changed = true;
            }
        }
    }
    QueryCounts { q }
}

/// The budgets at a start vertex: κ iterations of each loop whose
/// condition it is in, κ − 1 more of each loop whose body it is in (the
/// current iteration is one of the κ), as the thesis's walk from the
/// program's entry reaches it.
fn budgets_entering(g: &Graph, n: NodeId, base: &[u8], kappa: u8) -> Vec<u8> {
    let mut b = base.to_vec();
    for (l, lp) in g.body.loops.iter().enumerate() {
        if lp.nodes.binary_search(&n).is_ok() {
            b[l] = if g.condition[l][n as usize] {
                kappa
            } else {
                kappa.saturating_sub(1)
            };
        }
    }
    b
}

fn add(sum: &mut [u32], x: &[u32]) {
    for (s, v) in sum.iter_mut().zip(x) {
        *s = s.saturating_add(*v);
    }
}

struct Graph<'b> {
    body: &'b Body,
    succ: Vec<Vec<EdgeId>>,
    /// Per loop: its condition region (vertices that reach a failing exit
    /// test without passing the header again).
    condition: Vec<Vec<bool>>,
    /// Per edge: the loop it enters from outside (at the header), if any.
    enters: Vec<Option<usize>>,
}

impl<'b> Graph<'b> {
    fn new(body: &'b Body) -> Graph<'b> {
        let succ = body.successors();
        let mut preds: Vec<Vec<NodeId>> = vec![Vec::new(); body.node_count as usize];
        for e in &body.edges {
            preds[e.to as usize].push(e.from);
        }
        let condition = body
            .loops
            .iter()
            .map(|l| condition_region(body, &preds, l))
            .collect();
        let back = body.back_edge_mask();
        let enters = body
            .edges
            .iter()
            .enumerate()
            .map(|(i, e)| match body.node_kinds[e.to as usize] {
                NodeKind::LoopHeader(l) if !back[i] => Some(l as usize),
                _ => None,
            })
            .collect();
        Graph {
            body,
            succ,
            condition,
            enters,
        }
    }

    /// The queries vertex `n` itself asks, per variable.
    fn local(&self, n: NodeId) -> Vec<u32> {
        let mut out = vec![0u32; self.body.vars.len()];
        let out_edges = &self.succ[n as usize];
        let asked: Option<Vec<&Expr>> = out_edges.iter().find_map(|&e| {
            let edge = &self.body.edges[e as usize];
            match &edge.instr {
                Instr::Assume(c) if self.is_error(edge.to) => Some(queried(c)),
                Instr::Assume(c) if out_edges.len() == 2 => Some(queried(c)),
                _ => None,
            }
        });
        for e in asked.unwrap_or_default() {
            e.walk(&mut |x| {
                if let Expr::Var(v) = x {
                    out[*v as usize] = 1;
                }
            });
        }
        out
    }

    fn is_error(&self, n: NodeId) -> bool {
        matches!(self.body.node_kinds[n as usize], NodeKind::Error(_))
    }

    /// Q before edge `e`, from Q after it.
    fn transfer(&self, e: EdgeId, after: &[u32]) -> Vec<u32> {
        let Instr::Assign(Place::Var(x), rhs) = &self.body.edges[e as usize].instr else {
            return after.to_vec();
        };
        let mut before = after.to_vec();
        let qx = after[*x as usize];
        before[*x as usize] = 0;
        let mut mentioned = vec![false; after.len()];
        rhs.walk(&mut |y| {
            if let Expr::Var(v) = y {
                mentioned[*v as usize] = true;
            }
        });
        for (v, m) in mentioned.into_iter().enumerate() {
            if m {
                before[v] = before[v].saturating_add(qx);
            }
        }
        before
    }
}

/// The expressions a vertex's query is about: a branch condition, an
/// index (not the array it indexes), a divisor, an assertion.
fn queried(c: &Cond) -> Vec<&Expr> {
    match c {
        Cond::Cmp(_, a, b) => vec![a, b],
        Cond::InBounds { index, .. } => vec![index],
        Cond::Initialized { .. } => vec![],
    }
}

fn condition_region(body: &Body, preds: &[Vec<NodeId>], l: &crate::ir::Loop) -> Vec<bool> {
    let mut region = vec![false; body.node_count as usize];
    let mut stack: Vec<NodeId> = l
        .exit_edges
        .iter()
        .map(|&e| body.edges[e as usize].from)
        .collect();
    while let Some(n) = stack.pop() {
        if region[n as usize] || l.nodes.binary_search(&n).is_err() {
            continue;
        }
        region[n as usize] = true;
        if n != l.header {
            stack.extend(preds[n as usize].iter().copied());
        }
    }
    region
}

struct Walk<'g, 'b> {
    g: &'g Graph<'b>,
    kappa: u8,
    memo: HashMap<(NodeId, Vec<u8>), Vec<u32>>,
}

impl Walk<'_, '_> {
    /// Q at `n` with `budgets[l]` body entries left for each loop `l`.
    fn counts(&mut self, n: NodeId, budgets: &[u8]) -> Vec<u32> {
        let key = (n, budgets.to_vec());
        if let Some(q) = self.memo.get(&key) {
            return q.clone();
        }
        let mut sum = self.g.local(n);
        for e in self.g.succ[n as usize].clone() {
            let Some(b) = self.after(n, e, budgets) else {
                continue;
            };
            let to = self.g.body.edges[e as usize].to;
            let after = self.counts(to, &b);
            add(&mut sum, &self.g.transfer(e, &after));
        }
        self.memo.insert(key, sum.clone());
        sum
    }

    /// The budgets after edge `e` from `n`, or `None` if `e` enters a loop
    /// body whose iterations are used up.
    fn after(&self, n: NodeId, e: EdgeId, budgets: &[u8]) -> Option<Vec<u8>> {
        let mut b = budgets.to_vec();
        if let Some(l) = self.g.enters[e as usize] {
            b[l] = self.kappa;
        }
        let to = self.g.body.edges[e as usize].to;
        for (l, lp) in self.g.body.loops.iter().enumerate() {
            let region = &self.g.condition[l];
            let into_body =
                region[n as usize] && !region[to as usize] && lp.nodes.binary_search(&to).is_ok();
            if into_body {
                if b[l] == 0 {
                    return None;
                }
                b[l] -= 1;
            }
        }
        Some(b)
    }
}
