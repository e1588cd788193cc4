//! State merging (docs/thesis-executor.md, "State merging"; the thesis's
//! Algorithms 1 and 2, `moveValues`/`moveValue`).
//!
//! Two states at the same location with the same call stack become one:
//! its path condition is the shared prefix ∧ (rest₁ ∨ rest₂), and each
//! value that differs is `ite(rest₁, v₁, v₂)`. The stores are copied into a
//! fresh one through two pointer mappings (old cell → new cell, one per
//! state), so a cell two variables share in a state is still one cell in
//! the merged state, and pointers keep pointing at what they did. A
//! variable's own cell must be one cell: when the two states' sharing
//! differs so that it cannot be (x and y share a cell in one state and not
//! in the other), the states are not merged.

use super::state::{CellId, Frame, PathCond, State, Trail, Value};
use crate::term::{TermId, Terms};
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// The merge of two mergeable states, or `None` when their sharing differs.
pub(crate) fn merge(terms: &mut Terms, a: &State, b: &State, pc_id: u64) -> Option<State> {
    // The stream's runs belong to one path's witness.
    if a.runs != b.runs {
        return None;
    }
    let (common, rest_a, rest_b) = PathCond::split_common(&a.pc, &b.pc);
    let ca = terms.and(rest_a);
    let cb = terms.and(rest_b);
    let either = terms.or(vec![ca, cb]);
    let mut m = Mover {
        terms,
        stores: [&a.store, &b.store],
        out: Vec::new(),
        maps: [HashMap::default(), HashMap::default()],
        cond: ca,
    };
    let mut frames = Vec::with_capacity(a.frames.len());
    for (fa, fb) in a.frames.iter().zip(&b.frames) {
        let mut cells = Vec::with_capacity(fa.cells.len());
        for (x, y) in fa.cells.iter().zip(fb.cells.iter()) {
            cells.push(m.pair(*x, *y)?);
        }
        frames.push(Frame {
            cells: cells.into(),
            ..fa.clone()
        });
    }
    let pc = if m.terms.as_bool(either) == Some(true) {
        common
    } else {
        common.and(either, pc_id)
    };
    let pins: Vec<(TermId, usize)> = a
        .pins
        .iter()
        .filter(|p| b.pins.contains(p))
        .copied()
        .collect();
    Some(State {
        frames,
        store: Arc::new(m.out),
        pc,
        pins: Arc::new(pins),
        paths: a.paths.saturating_add(b.paths),
        tree_node: a.tree_node,
        shown: a.shown,
        merged_at: Some((a.frame().func, a.frame().node)),
        trail: Trail::join(&a.trail, &b.trail, a.frame().node),
        laps: a.laps.clone(),
        deferred: a.deferred && b.deferred,
        runs: a.runs.clone(),
    })
}

/// The variables of the running function whose values differ between two
/// mergeable states (compared through the cells they reach).
pub(crate) fn differing_vars(a: &State, b: &State) -> Vec<u32> {
    let (fa, fb) = (a.frame(), b.frame());
    // One buffer for every variable: the merge strategy asks this for
    // every pair of states that meet (thousands in a witness search).
    let mut seen = Vec::new();
    (0..fa.cells.len() as u32)
        .filter(|&v| {
            seen.clear();
            differs(a, b, fa.cells[v as usize], fb.cells[v as usize], &mut seen)
        })
        .collect()
}

fn differs(a: &State, b: &State, x: CellId, y: CellId, seen: &mut Vec<(CellId, CellId)>) -> bool {
    let (u, v) = (a.read(x), b.read(y));
    // Only cells that reach others can lead back to a pair under
    // comparison; the rest are compared at once (a store's array
    // elements made `seen` long, and each look-up scanned it).
    let reaches = |w: &Value| matches!(w, Value::Ptr(_) | Value::Array(_) | Value::Record(_));
    if !reaches(u) || !reaches(v) {
        return u != v;
    }
    if seen.contains(&(x, y)) {
        return false;
    }
    seen.push((x, y));
    match (u, v) {
        (Value::Ptr(p), Value::Ptr(q)) => differs(a, b, *p, *q, seen),
        (Value::Array(p), Value::Array(q)) => {
            p.len() != q.len()
                || p.iter()
                    .zip(q.iter())
                    .any(|(p, q)| differs(a, b, *p, *q, seen))
        }
        (Value::Record(p), Value::Record(q)) => {
            p.len() != q.len()
                || p.iter()
                    .zip(q.iter())
                    .any(|((n, p), (m, q))| n != m || differs(a, b, *p, *q, seen))
        }
        (u, v) => u != v,
    }
}

struct Mover<'t, 's> {
    terms: &'t mut Terms,
    stores: [&'s [Value]; 2],
    out: Vec<Value>,
    /// Per state: its cell → the merged store's cell.
    maps: [HashMap<CellId, CellId>; 2],
    /// The condition under which the first state's values hold.
    cond: TermId,
}

impl Mover<'_, '_> {
    fn alloc(&mut self) -> CellId {
        self.out.push(Value::Uninit);
        (self.out.len() - 1) as CellId
    }

    /// One merged cell for cell `x` of the first state and `y` of the
    /// second (Algorithm 1), or `None` if either is already another's.
    fn pair(&mut self, x: CellId, y: CellId) -> Option<CellId> {
        match (self.maps[0].get(&x).copied(), self.maps[1].get(&y).copied()) {
            (Some(r), Some(s)) => (r == s).then_some(r),
            (None, None) => {
                let r = self.alloc();
                self.maps[0].insert(x, r);
                self.maps[1].insert(y, r);
                let (u, v) = (
                    self.stores[0][x as usize].clone(),
                    self.stores[1][y as usize].clone(),
                );
                let merged = self.values(&u, &v);
                self.out[r as usize] = merged;
                Some(r)
            }
            _ => None,
        }
    }

    /// The merged value of `u` (first state) and `v` (second).
    fn values(&mut self, u: &Value, v: &Value) -> Value {
        if u == v && !has_cells(u) {
            return u.clone();
        }
        let paired = match (u, v) {
            (Value::Ptr(p), Value::Ptr(q)) => self.pair(*p, *q).map(Value::Ptr),
            (Value::Array(p), Value::Array(q)) if p.len() == q.len() => {
                let cells: Option<Vec<CellId>> = p
                    .iter()
                    .zip(q.iter())
                    .map(|(p, q)| self.pair(*p, *q))
                    .collect();
                cells.map(|c| Value::Array(c.into()))
            }
            (Value::Record(p), Value::Record(q))
                if p.len() == q.len() && p.iter().zip(q.iter()).all(|(a, b)| a.0 == b.0) =>
            {
                let cells: Option<Vec<(String, CellId)>> = p
                    .iter()
                    .zip(q.iter())
                    .map(|((n, p), (_, q))| self.pair(*p, *q).map(|r| (n.clone(), r)))
                    .collect();
                cells.map(|c| Value::Record(c.into()))
            }
            _ => None,
        };
        if let Some(v) = paired {
            return v;
        }
        let (a, b) = (self.one(0, u), self.one(1, v));
        Value::ite(self.terms, self.cond, a, b)
    }

    /// A value of one state moved into the merged store (Algorithm 2).
    fn one(&mut self, side: usize, v: &Value) -> Value {
        match v {
            Value::Ptr(c) => Value::Ptr(self.cell(side, *c)),
            Value::Array(cs) => Value::Array(cs.iter().map(|c| self.cell(side, *c)).collect()),
            Value::Record(fs) => Value::Record(
                fs.iter()
                    .map(|(n, c)| (n.clone(), self.cell(side, *c)))
                    .collect(),
            ),
            Value::Ite(c, x, y) => {
                let (x, y) = (self.one(side, x), self.one(side, y));
                Value::ite(self.terms, *c, x, y)
            }
            Value::Input(a) => {
                let writes = a
                    .writes
                    .iter()
                    .map(|(i, w)| (*i, self.one(side, w)))
                    .collect();
                Value::Input(super::state::InputArray {
                    writes,
                    ..a.clone()
                })
            }
            other => other.clone(),
        }
    }

    fn cell(&mut self, side: usize, c: CellId) -> CellId {
        if let Some(r) = self.maps[side].get(&c) {
            return *r;
        }
        let r = self.alloc();
        self.maps[side].insert(c, r);
        let v = self.stores[side][c as usize].clone();
        let moved = self.one(side, &v);
        self.out[r as usize] = moved;
        r
    }
}

fn has_cells(v: &Value) -> bool {
    match v {
        Value::Ptr(_) | Value::Array(_) | Value::Record(_) => true,
        Value::Ite(_, a, b) => has_cells(a) || has_cells(b),
        Value::Input(a) => a.writes.iter().any(|(_, w)| has_cells(w)),
        _ => false,
    }
}
