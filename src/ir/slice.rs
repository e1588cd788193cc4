//! The slice of a flowgraph for a target (docs/necessary-conditions.md,
//! "Slicing"), after Weiser's relevant variables: the instructions that
//! the target's reachability may depend on are kept, every other one
//! becomes `skip`.
//!
//! The slice has the same vertices, edges and loops; it only forgets. A
//! run of the program that reaches the target is a run of the slice along
//! the same edges: a kept instruction reads only variables whose values
//! the slice computes exactly (every write of them on the way is kept), a
//! dropped `assume` always holds, and a dropped write changes only
//! variables no kept instruction reads before they are written again. So
//! a necessary condition of the slice is one of the program, and a proof
//! on the slice is a proof; a model is replayed on the program itself.
//!
//! What is kept:
//! - the edges into the target's error vertices;
//! - a write into a *relevant* variable (one whose value here may reach a
//!   kept instruction), and what it reads;
//! - every branch condition, except in a *dead* loop: one that contains no
//!   target and no kept write, whose runs change nothing the target reads
//!   (a whole scan of an array for another purpose becomes a loop of
//!   `skip`s, whose summary is trivial);
//! - another target's check when it reads only relevant variables (its
//!   passing is free precision, `assert(n > 0)` before `a[n - 1]`).
//!
//! No slice where values may be shared: behind pointers, across calls
//! that were not inlined, or between array and record variables that may
//! share cells (`Sharing`).

use super::{Body, Cond, Edge, EdgeId, Expr, Instr, NodeId, Place, Sharing, VarId};
use crate::types::Type;

/// The most bits of relevance the slicer keeps (vertices × variables).
const MAX_BITS: usize = 1 << 25;

/// The slice of `body` for reaching any of `targets` (error vertices), or
/// `None` when it would drop nothing or cannot be taken.
pub fn slice(body: &Body, targets: &[NodeId]) -> Option<Body> {
    if targets.is_empty() || !sliceable(body) {
        return None;
    }
    let width = body.vars.len().div_ceil(64).max(1);
    if body.node_count as usize * width * 64 > MAX_BITS {
        return None;
    }
    let on_path = edges_reaching(body, targets);
    let criterion: Vec<bool> = (body.edges.iter())
        .map(|e| targets.contains(&e.to))
        .collect();
    let loops_of = loops_of_edges(body);
    let mut live = live_at_start(body, &criterion);
    let (relevant, dead) = loop {
        let dead = in_dead_loop(&loops_of, &live);
        let relevant = Relevance::compute(body, &on_path, &criterion, &dead, width);
        let more = livened(body, &on_path, &loops_of, &relevant, &live);
        if more == live {
            break (relevant, dead);
        }
        live = more;
    };
    let mut out = body.clone();
    let mut changed = false;
    for (i, e) in body.edges.iter().enumerate() {
        let keep = !on_path[i] || criterion[i] || kept(e, dead[i], relevant.at(e.to));
        if !keep && !matches!(e.instr, Instr::Skip) {
            out.edges[i].instr = Instr::Skip;
            changed = true;
        }
    }
    changed.then_some(out)
}

/// Whether every value lives in one variable: no pointers, no calls left,
/// no two variables that may share cells.
fn sliceable(body: &Body) -> bool {
    let mut plain = true;
    for e in &body.edges {
        match &e.instr {
            Instr::Alloc(..) | Instr::Call { .. } => return false,
            Instr::Assign(Place::Deref(_), _) => return false,
            _ => {}
        }
        e.instr.walk_exprs(&mut |x| {
            if matches!(x, Expr::Load(_) | Expr::AddrOf(_)) {
                plain = false;
            }
        });
    }
    let sharing = Sharing::of(body);
    plain
        && sharing.in_memory().is_empty()
        && (0..body.vars.len() as VarId).all(|v| sharing.others(v).next().is_none())
        && body.vars.iter().all(|v| !matches!(v.ty, Type::Ptr(_)))
}

/// Which edges lie on some path to a target: those from whose end a
/// target vertex can be reached.
fn edges_reaching(body: &Body, targets: &[NodeId]) -> Vec<bool> {
    let all: Vec<EdgeId> = (0..body.edges.len() as EdgeId).collect();
    let reaches = body.reaching(targets, &all);
    body.edges.iter().map(|e| reaches[e.to as usize]).collect()
}

/// For each edge, the loops it belongs to (those holding its start).
fn loops_of_edges(body: &Body) -> Vec<Vec<usize>> {
    (body.edges.iter())
        .map(|e| {
            (body.loops.iter().enumerate())
                .filter(|(_, l)| l.nodes.binary_search(&e.from).is_ok())
                .map(|(k, _)| k)
                .collect()
        })
        .collect()
}

/// The loops that hold a target's check (its error vertex, a sink, is on
/// no cycle): their conditions decide how often it is reached.
fn live_at_start(body: &Body, criterion: &[bool]) -> Vec<bool> {
    let checks: Vec<NodeId> = (body.edges.iter().zip(criterion))
        .filter(|(_, c)| **c)
        .map(|(e, _)| e.from)
        .collect();
    (body.loops.iter())
        .map(|l| checks.iter().any(|t| l.nodes.binary_search(t).is_ok()))
        .collect()
}

/// `live` and every loop that holds a kept write.
fn livened(
    body: &Body,
    on_path: &[bool],
    loops_of: &[Vec<usize>],
    relevant: &Relevance,
    live: &[bool],
) -> Vec<bool> {
    let mut out = live.to_vec();
    for (i, e) in body.edges.iter().enumerate() {
        if on_path[i] && writes_relevant(e, relevant.at(e.to)) {
            for &l in &loops_of[i] {
                out[l] = true;
            }
        }
    }
    out
}

/// For each edge, whether it lies in a loop that is not live.
fn in_dead_loop(loops_of: &[Vec<usize>], live: &[bool]) -> Vec<bool> {
    (loops_of.iter())
        .map(|loops| loops.iter().any(|&l| !live[l]))
        .collect()
}

/// Whether an edge off the criterion stays in the slice.
fn kept(e: &Edge, in_dead_loop: bool, after: &[u64]) -> bool {
    match &e.instr {
        Instr::Assign(..) => writes_relevant(e, after),
        Instr::Assume(_) => !in_dead_loop,
        Instr::Assert(..) => !in_dead_loop && reads(&e.instr).iter().all(|&v| has(after, v)),
        Instr::Output(_) | Instr::Skip => false,
        // (No slice is taken of a body with calls or allocations.)
        Instr::Enter(_) | Instr::Alloc(..) | Instr::Call { .. } => true,
    }
}

/// Whether the edge writes a variable relevant after it.
fn writes_relevant(e: &Edge, after: &[u64]) -> bool {
    match &e.instr {
        Instr::Assign(place, _) => place.root_var().is_some_and(|v| has(after, v)),
        _ => false,
    }
}

/// The relevant variables at each vertex: a backward fixpoint over the
/// edges on a path to the target.
struct Relevance {
    width: usize,
    bits: Vec<u64>,
}

impl Relevance {
    fn compute(
        body: &Body,
        on_path: &[bool],
        criterion: &[bool],
        dead: &[bool],
        width: usize,
    ) -> Relevance {
        let mut r = Relevance {
            width,
            bits: vec![0; body.node_count as usize * width],
        };
        let mut into: Vec<Vec<EdgeId>> = vec![Vec::new(); body.node_count as usize];
        for (i, e) in body.edges.iter().enumerate() {
            if on_path[i] {
                into[e.to as usize].push(i as EdgeId);
            }
        }
        // Every edge once, then the starts of those whose end changed.
        let mut work: Vec<EdgeId> = (0..body.edges.len() as EdgeId)
            .filter(|&i| on_path[i as usize])
            .collect();
        let mut queued = vec![false; body.edges.len()];
        work.iter().for_each(|&i| queued[i as usize] = true);
        while let Some(i) = work.pop() {
            queued[i as usize] = false;
            let e = &body.edges[i as usize];
            let before = transfer(e, criterion[i as usize], dead[i as usize], r.at(e.to));
            if r.join(e.from, &before) {
                for &j in &into[e.from as usize] {
                    if !queued[j as usize] {
                        queued[j as usize] = true;
                        work.push(j);
                    }
                }
            }
        }
        r
    }

    fn at(&self, n: NodeId) -> &[u64] {
        let s = n as usize * self.width;
        &self.bits[s..s + self.width]
    }

    /// Adds `more` at `n`; whether anything was new.
    fn join(&mut self, n: NodeId, more: &[u64]) -> bool {
        let s = n as usize * self.width;
        let mut changed = false;
        for (w, m) in self.bits[s..s + self.width].iter_mut().zip(more) {
            let new = *w | m;
            changed |= new != *w;
            *w = new;
        }
        changed
    }
}

/// The variables relevant before an edge, from those relevant after it.
fn transfer(e: &Edge, criterion: bool, dead: bool, after: &[u64]) -> Vec<u64> {
    let mut out = after.to_vec();
    let read = |out: &mut Vec<u64>, instr: &Instr| {
        for v in reads(instr) {
            set(out, v);
        }
    };
    if criterion {
        read(&mut out, &e.instr);
        return out;
    }
    match &e.instr {
        Instr::Assign(place, _) if writes_relevant(e, after) => {
            if let Place::Var(v) = place {
                clear(&mut out, *v);
            } else if let Some(root) = place.root_var() {
                // Some of its cells keep their values: the write is weak.
                set(&mut out, root);
            }
            read(&mut out, &e.instr);
        }
        Instr::Assume(_) if !dead => read(&mut out, &e.instr),
        Instr::Enter(locals) => locals.iter().for_each(|&v| clear(&mut out, v)),
        _ => {}
    }
    out
}

/// The variables an instruction reads (with the place whose
/// initialisation a condition asks about).
fn reads(instr: &Instr) -> Vec<VarId> {
    let mut out = Vec::new();
    instr.walk_exprs(&mut |x| {
        if let Expr::Var(v) = x {
            out.push(*v);
        }
    });
    if let Instr::Assume(Cond::Initialized { place, .. })
    | Instr::Assert(Cond::Initialized { place, .. }, _) = instr
        && let Some(v) = place.root_var()
    {
        out.push(v);
    }
    out
}

fn has(bits: &[u64], v: VarId) -> bool {
    bits[v as usize / 64] >> (v % 64) & 1 == 1
}

fn set(bits: &mut [u64], v: VarId) {
    bits[v as usize / 64] |= 1 << (v % 64);
}

fn clear(bits: &mut [u64], v: VarId) {
    bits[v as usize / 64] &= !(1 << (v % 64));
}
