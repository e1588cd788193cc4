//! The analysis state ⟨sum, invs, rs⟩ (`docs/compositional-se.md` §4):
//! per function the leaves of its partly explored execution tree, the
//! invocation graph, the FIFO of (re)marked leaves, and the revivals
//! `rec` and `rer` that keep the summaries total.

use crate::ir::NodeId;
use crate::term::{TermId, Var};
use std::collections::VecDeque;
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stat {
    /// To be explored further.
    Unk,
    /// The path returned: part of the function's summary proper.
    Fin,
    /// Found unreachable, for now (a revival makes it `Unk` again).
    Unr,
    /// The path stopped at a target's error vertex (apc's addition: the
    /// report's language cannot fail). Never part of rc/rv.
    Failed,
}

/// A variable's value in a single-frame state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Val {
    /// Never assigned on this path.
    Unset,
    Int(TermId),
    /// A read-only input array (main's parameter, or `$in`).
    Input(Var),
}

/// A leaf ε = ⟨stat, ν, pc⟩; ν is the vertex, the variables and the input
/// position, all over the function's own entry symbols.
#[derive(Clone, Debug)]
pub(crate) struct Leaf {
    pub stat: Stat,
    pub node: NodeId,
    pub vals: Rc<[Val]>,
    /// The input position `$ic` (kept even where the body never reads input).
    pub ic: TermId,
    pub pc: TermId,
    /// The functions called on the path (sorted): the rc/rv symbols its
    /// pc and values may mention.
    pub called: Rc<[usize]>,
    /// Symbolic-interpretation steps from the function's entry.
    pub depth: u32,
}

/// ⟨caller, callee, ς_G, pc⟩: one per caller path reaching a call.
#[derive(Clone, Debug)]
pub(crate) struct Invocation {
    pub caller: usize,
    pub callee: usize,
    /// The callee's globals at the call: its arguments, then `$ic`.
    pub args: Vec<TermId>,
    pub pc: TermId,
    pub called: Rc<[usize]>,
}

pub(crate) struct Analysis {
    pub sums: Vec<Vec<Leaf>>,
    pub invs: Vec<Invocation>,
    /// Invocation indices by callee.
    pub into: Vec<Vec<usize>>,
    /// Callees by caller in the invocation graph (sorted, distinct).
    pub edges: Vec<Vec<usize>>,
    /// The unknown leaves, each once, oldest first: the fair choice.
    pub queue: VecDeque<(usize, usize)>,
    pub revived: u64,
    /// rs, counted: the leaves of each function that passed their check
    /// (each is then replaced by its successors).
    pub rs: Vec<u64>,
}

impl Analysis {
    pub(crate) fn new(entries: Vec<Leaf>) -> Analysis {
        let n = entries.len();
        let queue = (0..n).map(|f| (f, 0)).collect();
        Analysis {
            sums: entries.into_iter().map(|l| vec![l]).collect(),
            invs: Vec::new(),
            into: vec![Vec::new(); n],
            edges: vec![Vec::new(); n],
            queue,
            revived: 0,
            rs: vec![0; n],
        }
    }

    /// Puts `leaves` where leaf `i` of `f` was, the unknown ones queued.
    pub(crate) fn replace(&mut self, f: usize, i: usize, mut leaves: Vec<Leaf>) {
        if leaves.is_empty() {
            // Every continuation was infeasible by construction: the leaf
            // stands for no input any more.
            self.sums[f][i].stat = Stat::Unr;
            return;
        }
        let first = leaves.remove(0);
        let first_unk = first.stat == Stat::Unk;
        self.sums[f][i] = first;
        if first_unk {
            self.queue.push_back((f, i));
        }
        for l in leaves {
            let unk = l.stat == Stat::Unk;
            self.sums[f].push(l);
            if unk {
                self.queue.push_back((f, self.sums[f].len() - 1));
            }
        }
    }

    pub(crate) fn invoke(&mut self, inv: Invocation) {
        let (from, to) = (inv.caller, inv.callee);
        self.into[to].push(self.invs.len());
        self.invs.push(inv);
        if let Err(at) = self.edges[from].binary_search(&to) {
            self.edges[from].insert(at, to);
        }
    }

    /// The functions reachable from `roots` in the invocation graph.
    fn reachable(&self, roots: impl IntoIterator<Item = usize>) -> Vec<bool> {
        let mut seen = vec![false; self.sums.len()];
        let mut stack: Vec<usize> = roots.into_iter().collect();
        while let Some(f) = stack.pop() {
            if std::mem::replace(&mut seen[f], true) {
                continue;
            }
            stack.extend(self.edges[f].iter().copied());
        }
        seen
    }

    /// The functions from which `m` is reachable in the invocation graph
    /// (m included): those whose rc/rv interpretations contain rc_m.
    fn depending_on(&self, m: usize) -> Vec<bool> {
        let mut seen = vec![false; self.sums.len()];
        let mut stack = vec![m];
        while let Some(f) = stack.pop() {
            if std::mem::replace(&mut seen[f], true) {
                continue;
            }
            for inv in &self.into[f] {
                stack.push(self.invs[*inv].caller);
            }
        }
        seen
    }

    fn revive_in(&mut self, f: usize, keep: impl Fn(&Leaf) -> bool) {
        for (i, l) in self.sums[f].iter_mut().enumerate() {
            if l.stat == Stat::Unr && keep(l) {
                l.stat = Stat::Unk;
                self.queue.push_back((f, i));
                self.revived += 1;
            }
        }
    }

    /// Every unreachable leaf of the marked functions becomes unknown.
    fn revive_all(&mut self, marked: &[bool]) {
        let fs: Vec<usize> = (0..marked.len()).filter(|f| marked[*f]).collect();
        for f in fs {
            self.revive_in(f, |_| true);
        }
    }

    /// rec(a, m_t): after a new invocation of `callee`, the unreachable
    /// leaves of every function reachable from it become unknown.
    pub(crate) fn rec(&mut self, callee: usize) {
        let seen = self.reachable([callee]);
        self.revive_all(&seen);
    }

    /// rer(a, m): after `m` gained a finished leaf, the unreachable leaves
    /// whose pc depends on rc_m, transitively (through rc/rv of a function
    /// that reaches m), and every unreachable leaf of the functions reached
    /// through an invocation whose pc so depends (docs/compositional-se.md §11.2).
    pub(crate) fn rer(&mut self, m: usize) {
        let dep = self.depending_on(m);
        let depends = |called: &[usize]| called.iter().any(|g| dep[*g]);
        for f in 0..self.sums.len() {
            self.revive_in(f, |l| depends(&l.called));
        }
        let roots: Vec<usize> = self
            .invs
            .iter()
            .filter(|i| depends(&i.called))
            .map(|i| i.callee)
            .collect();
        if roots.is_empty() {
            return;
        }
        let seen = self.reachable(roots);
        self.revive_all(&seen);
    }

    /// Leaves by status, per function: (unk, fin, unr, failed).
    pub(crate) fn counts(&self, f: usize) -> [usize; 4] {
        let mut c = [0; 4];
        for l in &self.sums[f] {
            let k = match l.stat {
                Stat::Unk => 0,
                Stat::Fin => 1,
                Stat::Unr => 2,
                Stat::Failed => 3,
            };
            c[k] += 1;
        }
        c
    }
}
