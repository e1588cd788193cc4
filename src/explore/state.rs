//! The symbolic state of the thesis's executor (docs/thesis-executor.md,
//! "State"): storage cells and frames, the call stack, the path condition.
//!
//! Values mirror the interpreter's (`interp::value`): arrays and records
//! hold references to cells, so copies share their elements; pointers name
//! cells; input arrays are held by value. Two kinds are the executor's own:
//! `Uninit` (a cell never written) and `Ite` (a value that depends on which
//! of two merged paths ran).

use super::summary::StreamRun;
use crate::ir::{NodeId, VarId};
use crate::term::{TermId, Terms, Var};
use std::sync::Arc;

pub(crate) type CellId = u32;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Value {
    Uninit,
    Null,
    Int(TermId),
    Ptr(CellId),
    Array(Arc<[CellId]>),
    Record(Arc<[(String, CellId)]>),
    Input(InputArray),
    /// `if c then a else b`.
    Ite(TermId, Arc<Value>, Arc<Value>),
}

/// A symbolic input array (a parameter of `main`, a row of one, or the
/// input stream): element `i` is `A(prefix…, i)` for a non-negative index
/// and the default (0, or an empty row) for a negative one, as the
/// interpreter reads it; `writes` are this holder's own elements, newest
/// last (input arrays keep value semantics).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct InputArray {
    pub symbol: Var,
    /// How many indices select an integer.
    pub dims: u8,
    pub prefix: Arc<[TermId]>,
    pub writes: Arc<[(TermId, Value)]>,
}

impl Value {
    /// `if c then a else b`, folded where the answer is known.
    pub(crate) fn ite(terms: &mut Terms, c: TermId, a: Value, b: Value) -> Value {
        match terms.as_bool(c) {
            Some(true) => return a,
            Some(false) => return b,
            None => {}
        }
        if a == b {
            return a;
        }
        if let (Value::Int(x), Value::Int(y)) = (&a, &b) {
            return Value::Int(terms.ite(c, *x, *y));
        }
        Value::Ite(c, Arc::new(a), Arc::new(b))
    }

    /// The plain values this one may be, each with the condition under
    /// which it is (`true` for a plain value).
    pub(crate) fn leaves(&self, terms: &mut Terms) -> Vec<(TermId, Value)> {
        let mut out = Vec::new();
        let t = terms.bool(true);
        self.collect_leaves(terms, t, &mut out);
        out
    }

    fn collect_leaves(&self, terms: &mut Terms, guard: TermId, out: &mut Vec<(TermId, Value)>) {
        match self {
            Value::Ite(c, a, b) => {
                let yes = terms.and2(guard, *c);
                a.collect_leaves(terms, yes, out);
                let nc = terms.not(*c);
                let no = terms.and2(guard, nc);
                b.collect_leaves(terms, no, out);
            }
            v => out.push((guard, v.clone())),
        }
    }

    /// The integer this value is; a leaf that is not an integer (only on a
    /// path the checks before ruled out) reads as 0.
    pub(crate) fn int(&self, terms: &mut Terms) -> TermId {
        match self {
            Value::Int(t) => *t,
            Value::Ite(c, a, b) => {
                let (x, y) = (a.int(terms), b.int(terms));
                terms.ite(*c, x, y)
            }
            _ => terms.int(0),
        }
    }
}

/// The path condition: a persistent list of conjuncts, shared between the
/// states that forked from one another (so the solver session names each
/// prefix once).
#[derive(Clone, Debug, Default)]
pub(crate) struct PathCond(pub Option<Arc<PcNode>>);

#[derive(Debug)]
pub(crate) struct PcNode {
    pub conjunct: TermId,
    pub parent: PathCond,
    /// Unique over a run: the session's name for this prefix.
    pub id: u64,
    pub len: usize,
}

impl PathCond {
    pub(crate) fn and(&self, conjunct: TermId, id: u64) -> PathCond {
        PathCond(Some(Arc::new(PcNode {
            conjunct,
            parent: self.clone(),
            id,
            len: self.len() + 1,
        })))
    }

    pub(crate) fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |n| n.len)
    }

    /// Whether `t` is one of the conjuncts.
    pub(crate) fn contains(&self, t: TermId) -> bool {
        self.iter().any(|c| c == t)
    }

    /// The conjuncts, newest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = TermId> + '_ {
        std::iter::successors(self.0.as_deref(), |n| n.parent.0.as_deref()).map(|n| n.conjunct)
    }

    /// The run-wide name of this path condition (0: `true`).
    pub(crate) fn id(&self) -> u64 {
        self.0.as_ref().map_or(0, |n| n.id)
    }

    /// The conjuncts, oldest first.
    pub(crate) fn conjuncts(&self) -> Vec<TermId> {
        let mut out: Vec<TermId> = self.iter().collect();
        out.reverse();
        out
    }

    fn same(a: &PathCond, b: &PathCond) -> bool {
        match (&a.0, &b.0) {
            (None, None) => true,
            (Some(x), Some(y)) => Arc::ptr_eq(x, y),
            _ => false,
        }
    }

    /// The longest shared prefix of two path conditions, and what each
    /// adds to it (oldest first).
    pub(crate) fn split_common(a: &PathCond, b: &PathCond) -> (PathCond, Vec<TermId>, Vec<TermId>) {
        let (mut x, mut y) = (a.clone(), b.clone());
        let (mut rest_a, mut rest_b) = (Vec::new(), Vec::new());
        while x.len() > y.len() {
            x = x.pop_into(&mut rest_a);
        }
        while y.len() > x.len() {
            y = y.pop_into(&mut rest_b);
        }
        while !PathCond::same(&x, &y) {
            x = x.pop_into(&mut rest_a);
            y = y.pop_into(&mut rest_b);
        }
        rest_a.reverse();
        rest_b.reverse();
        (x, rest_a, rest_b)
    }

    fn pop_into(&self, out: &mut Vec<TermId>) -> PathCond {
        let n = self.0.as_ref().expect("a non-empty path condition");
        out.push(n.conjunct);
        n.parent.clone()
    }
}

/// One activation of a function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Frame {
    /// Index of the function's body in the explored program.
    pub func: usize,
    pub node: NodeId,
    /// The cell of each variable of the function.
    pub cells: Arc<[CellId]>,
    /// The caller's variable that receives the result (`None` for
    /// `main`); the caller's frame already stands where it continues.
    pub result_to: Option<VarId>,
}

/// A symbolic state.
#[derive(Clone, Debug)]
pub(crate) struct State {
    /// The call stack; the last frame runs. Never empty while running.
    pub frames: Vec<Frame>,
    pub store: Arc<Vec<Value>>,
    pub pc: PathCond,
    /// The concrete index chosen for a symbolic index term by a fork
    /// (`--index fork`): the path condition says `term == index`.
    pub pins: Arc<Vec<(TermId, usize)>>,
    /// The paths this state stands for (merged states: the sum).
    pub paths: u64,
    /// Its leaf in the execution tree (the `tree` strategy).
    pub tree_node: usize,
    /// Its stretch's node in the drawn tree (`Options::tree`).
    pub shown: usize,
    /// The location of the merge this state descends from, if any.
    pub merged_at: Option<(usize, NodeId)>,
    /// The vertices of `main` its paths ran through (path subsumption
    /// annotates them when the path ends).
    pub trail: Trail,
    /// Per loop of `main`: iterations since the loop was entered (the
    /// thesis's `_t` counts them down).
    pub laps: Arc<Vec<u32>>,
    /// Runs only when no other state waits (a loop iteration past `_t`).
    pub deferred: bool,
    /// The stretches of the input stream that block schedules read: the
    /// witness writes them out (`summary::blocks`).
    pub runs: Arc<Vec<StreamRun>>,
}

/// The vertices a path ran through, newest first; persistent, shared
/// between forks, and a DAG after a merge (both paths' vertices).
#[derive(Clone, Debug, Default)]
pub(crate) struct Trail(pub Option<Arc<TrailNode>>);

#[derive(Debug)]
pub(crate) struct TrailNode {
    pub node: NodeId,
    pub parent: Trail,
    /// The other state's trail, at a merge.
    pub joined: Trail,
    /// Longest distance from the start (a vertex comes after every vertex
    /// of a shorter trail it extends).
    pub len: usize,
}

impl Trail {
    pub(crate) fn push(&self, node: NodeId) -> Trail {
        self.node(node, Trail::default())
    }

    /// The trail of a merged state at `node`.
    pub(crate) fn join(a: &Trail, b: &Trail, node: NodeId) -> Trail {
        a.node(node, b.clone())
    }

    fn node(&self, node: NodeId, joined: Trail) -> Trail {
        let len = self.len().max(joined.len()) + 1;
        Trail(Some(Arc::new(TrailNode {
            node,
            parent: self.clone(),
            joined,
            len,
        })))
    }

    fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |n| n.len)
    }

    /// Every vertex visit on the trail, latest first (a visit is listed
    /// after every visit that came after it on any path through it).
    pub(crate) fn visits_backwards(&self) -> Vec<NodeId> {
        let mut seen = rustc_hash::FxHashSet::default();
        let mut stack = vec![self.clone()];
        let mut out: Vec<(usize, NodeId)> = Vec::new();
        while let Some(mut t) = stack.pop() {
            let Some(n) = t.0.take() else { continue };
            if seen.insert(Arc::as_ptr(&n)) {
                out.push((n.len, n.node));
                stack.push(n.parent.clone());
                stack.push(n.joined.clone());
            }
        }
        out.sort_by_key(|(len, _)| std::cmp::Reverse(*len));
        out.into_iter().map(|(_, v)| v).collect()
    }
}

/// A trail is as long as its path (one node per step): dropped node by
/// node, not recursively, so that a path of millions of steps cannot
/// overflow the stack when its state goes.
impl Drop for Trail {
    fn drop(&mut self) {
        let mut stack = vec![self.0.take()];
        while let Some(cur) = stack.pop() {
            if let Some(Ok(mut node)) = cur.map(Arc::try_unwrap) {
                stack.push(node.parent.0.take());
                stack.push(node.joined.0.take());
            }
        }
    }
}

impl State {
    pub(crate) fn frame(&self) -> &Frame {
        self.frames.last().expect("a running state has a frame")
    }

    pub(crate) fn frame_mut(&mut self) -> &mut Frame {
        self.frames.last_mut().expect("a running state has a frame")
    }

    /// Where the state is: the function and vertex of each frame.
    pub(crate) fn location(&self) -> Vec<(usize, NodeId)> {
        self.frames.iter().map(|f| (f.func, f.node)).collect()
    }

    pub(crate) fn cell_of(&self, v: VarId) -> CellId {
        self.frame().cells[v as usize]
    }

    pub(crate) fn read(&self, c: CellId) -> &Value {
        &self.store[c as usize]
    }

    pub(crate) fn write(&mut self, c: CellId, v: Value) {
        Arc::make_mut(&mut self.store)[c as usize] = v;
    }

    pub(crate) fn new_cell(&mut self, v: Value) -> CellId {
        let store = Arc::make_mut(&mut self.store);
        store.push(v);
        (store.len() - 1) as CellId
    }

    pub(crate) fn pinned(&self, t: TermId) -> Option<usize> {
        self.pins.iter().find(|(u, _)| *u == t).map(|(_, j)| *j)
    }
}
