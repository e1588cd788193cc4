//! Parametrised symbolic states s = (θ, φ, Ξ, l) over the per-function
//! flowgraphs (`docs/compact-se.md` §2): a memory θ from the current
//! function's variables to terms over the entry symbols Θ and the
//! parameters κ, a path condition as a list of conjuncts, a call stack of
//! frames and recursion records (t, κ), and a location. Composition
//! (Def. 2) and the renaming of a template's parameters live here.

use crate::term::{Node, TermId, Terms, Var};
use rustc_hash::FxHashMap as HashMap;

/// The value of one variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// Never assigned in this activation.
    Unset,
    Int(TermId),
    /// An array: its cells (a term of array sort) and its length; a
    /// negative length stands for an input array, unbounded
    /// (`docs/compact-se.md` §7.2).
    Array {
        cells: TermId,
        len: TermId,
    },
}

/// A call-stack record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// (σ, l): the caller's memory, where it resumes and which variable
    /// receives the result.
    Frame {
        func: usize,
        sigma: Vec<Value>,
        ret: u32,
        dst: u32,
    },
    /// (t, κ): any number κ of recursive activations of the recursion
    /// template `template` (an index into the run's recursion templates).
    Recursion { template: usize, kappa: Var },
}

/// A symbolic state of compact (or classic) execution.
#[derive(Clone, Debug)]
pub struct PState {
    /// The function the location belongs to (index into the program).
    pub func: usize,
    pub theta: Vec<Value>,
    /// Conjuncts of φ.
    pub pc: Vec<TermId>,
    pub stack: Vec<Record>,
    pub loc: u32,
}

/// θ⟨·⟩: the substitution of the entry symbols Θ(a) by θ(a) (an unset
/// variable binds nothing: no template term mentions its symbol).
pub fn substitution(terms: &Terms, symbols: &[Value], theta: &[Value]) -> crate::term::Subst {
    let mut s = crate::term::Subst::new();
    let mut bind = |sym: TermId, val: TermId| {
        if let Some(v) = leaf(terms, sym) {
            s.bind(v, val);
        }
    };
    for (sym, val) in symbols.iter().zip(theta) {
        match (sym, val) {
            (Value::Int(a), Value::Int(v)) => bind(*a, *v),
            (Value::Array { cells, len }, Value::Array { cells: c, len: l }) => {
                bind(*cells, *c);
                bind(*len, *l);
            }
            _ => {}
        }
    }
    s
}

/// The variable of a symbol leaf.
pub fn leaf(terms: &Terms, t: TermId) -> Option<Var> {
    match terms.node(t) {
        Node::Var(v) => Some(*v),
        _ => None,
    }
}

/// θ⟨v⟩ for one value.
pub fn apply_value(terms: &mut Terms, s: &crate::term::Subst, v: Value) -> Value {
    match v {
        Value::Unset => Value::Unset,
        Value::Int(t) => Value::Int(s.apply(terms, t)),
        Value::Array { cells, len } => Value::Array {
            cells: s.apply(terms, cells),
            len: s.apply(terms, len),
        },
    }
}

/// Renames variables everywhere, binders included (a bound τ made fresh:
/// substitution that cannot capture).
pub fn rename_vars(terms: &mut Terms, t: TermId, map: &HashMap<Var, Var>) -> TermId {
    let mut memo: HashMap<TermId, TermId> = HashMap::default();
    for u in terms.post_order(&[t]) {
        let node = terms.node(u).clone();
        let r = match &node {
            Node::Var(v) => match map.get(v) {
                Some(w) => terms.var(*w),
                None => u,
            },
            Node::Quant(q, vs, body) => {
                let vs: Vec<Var> = vs.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
                terms.quant(*q, vs, memo[body])
            }
            Node::Lambda(vs, body) => {
                let vs: Vec<Var> = vs.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
                terms.lambda(vs, memo[body])
            }
            _ => {
                let kids = terms.children(&node);
                let new: Vec<TermId> = kids.iter().map(|k| memo[k]).collect();
                if new == kids {
                    u
                } else {
                    crate::term::rebuild_public(terms, &node, &new)
                }
            }
        };
        memo.insert(u, r);
    }
    memo[&t]
}

pub fn rename_value(terms: &mut Terms, v: Value, map: &HashMap<Var, Var>) -> Value {
    match v {
        Value::Unset => Value::Unset,
        Value::Int(t) => Value::Int(rename_vars(terms, t, map)),
        Value::Array { cells, len } => Value::Array {
            cells: rename_vars(terms, cells, map),
            len: rename_vars(terms, len, map),
        },
    }
}
