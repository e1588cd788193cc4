//! The flowgraph as the value ranges walk it: each loop header split in
//! two, the header as the loop is entered and the header after an
//! iteration. The first visit's state is not joined with the later ones':
//! a loop that runs once (its counter already at the bound after the
//! first iteration) does not make its body's guards see the values the
//! first iteration left together with those it started from.

use super::super::{Body, EdgeId, NodeId};

/// A vertex of the split graph: the body's vertices keep their numbers,
/// each header's second copy comes after them.
pub(super) type Vertex = usize;

pub(super) struct Split {
    /// (from, to, the body's edge whose instruction it carries).
    pub edges: Vec<(Vertex, Vertex, EdgeId)>,
    pub successors: Vec<Vec<usize>>,
    pub predecessors: Vec<Vec<usize>>,
    /// Each vertex's place in a reverse postorder from the entry.
    pub order: Vec<usize>,
    /// Per body vertex that heads a loop: its copy after an iteration.
    again: Vec<Option<Vertex>>,
}

impl Split {
    pub(super) fn of(body: &Body) -> Split {
        let n = body.node_count as usize;
        let mut again = vec![None; n];
        for (k, l) in body.loops.iter().enumerate() {
            again[l.header as usize] = Some(n + k);
        }
        let back = body.back_edge_mask();
        let mut edges = Vec::with_capacity(body.edges.len() * 2);
        for (e, edge) in body.edges.iter().enumerate() {
            let to = match again[edge.to as usize] {
                Some(copy) if back[e] => copy,
                _ => edge.to as usize,
            };
            edges.push((edge.from as usize, to, e as EdgeId));
            if let Some(copy) = again[edge.from as usize] {
                edges.push((copy, to, e as EdgeId));
            }
        }
        let count = n + body.loops.len();
        let (mut successors, mut predecessors) = (vec![Vec::new(); count], vec![Vec::new(); count]);
        for (i, &(from, to, _)) in edges.iter().enumerate() {
            successors[from].push(i);
            predecessors[to].push(i);
        }
        let next: Vec<Vec<Vertex>> = (successors.iter())
            .map(|out| out.iter().map(|&i| edges[i].1).collect())
            .collect();
        let order = super::super::reverse_postorder(body.entry as usize, &next);
        Split {
            edges,
            successors,
            predecessors,
            order,
            again,
        }
    }

    pub(super) fn vertex_count(&self) -> usize {
        self.successors.len()
    }

    /// Whether states are widened at `v`: every cycle passes through a
    /// header's copy after an iteration.
    pub(super) fn widens_at(&self, v: Vertex) -> bool {
        v >= self.again.len()
    }

    /// The split vertices of body vertex `n`.
    pub(super) fn copies(&self, n: NodeId) -> impl Iterator<Item = Vertex> + use<> {
        std::iter::once(n as usize).chain(self.again[n as usize])
    }
}
