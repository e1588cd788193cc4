//! The edges a run has covered (the statistics' coverage, and the
//! `coverage` search strategy's weight: the distance from a state to the
//! nearest edge not run yet).

use super::program::Explored;
use crate::ir::{EdgeId, NodeId};
use std::collections::VecDeque;

/// The distance of a vertex from which no edge is left to cover.
const NOTHING_LEFT: u32 = 10_000;

pub(crate) struct Coverage {
    /// Edges run at least once, per function.
    covered: Vec<Vec<bool>>,
    /// How many edges have run.
    count: u64,
}

impl Coverage {
    pub(crate) fn new(prog: &Explored) -> Coverage {
        Coverage {
            covered: (prog.bodies.iter())
                .map(|b| vec![false; b.edges.len()])
                .collect(),
            count: 0,
        }
    }

    pub(crate) fn cover(&mut self, func: usize, e: EdgeId) {
        let c = &mut self.covered[func][e as usize];
        if !*c {
            *c = true;
            self.count += 1;
        }
    }

    /// How many edges have run (also the coverage's version: it grows
    /// exactly when an edge is covered for the first time).
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// Edges from `node` to the nearest edge not run yet, in its function
    /// (a large number if none is left there).
    pub(crate) fn distance_to_uncovered(&self, prog: &Explored, func: usize, node: NodeId) -> u32 {
        let body = &prog.bodies[func];
        let mut dist = vec![u32::MAX; body.node_count as usize];
        let mut queue = VecDeque::from([node]);
        dist[node as usize] = 0;
        while let Some(n) = queue.pop_front() {
            for &e in &prog.succ[func][n as usize] {
                if !self.covered[func][e as usize] {
                    return dist[n as usize];
                }
                let to = body.edges[e as usize].to as usize;
                if dist[to] == u32::MAX {
                    dist[to] = dist[n as usize] + 1;
                    queue.push_back(to as NodeId);
                }
            }
        }
        NOTHING_LEFT
    }
}
