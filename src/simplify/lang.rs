//! The e-graph language over `term`, its constant-folding analysis, and the
//! two conversions: a term DAG into an e-graph, and an extracted e-graph
//! back into terms (through the term layer's smart constructors, so the
//! result is in the term layer's normal form again).

use crate::term::{Node, Quantifier, TermId, Terms, Var, VarKind};
use egg::{Analysis, DidMerge, EGraph, Id, Language};
use num_bigint::BigInt;
use num_traits::{Signed, Zero};
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

/// A variable of the term layer as an e-graph leaf. Bound variables are
/// leaves like any other: every binder of a condition binds variables with
/// ids of their own, and no rule moves a subterm across a binder, so a leaf
/// means the same variable wherever it occurs and nothing can be captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Leaf(pub Var);

/// Leaves are written `x<id>` (a basic symbol) and `p<id>` (a propositional
/// variable): the rule tests write terms as patterns this way.
#[derive(Debug)]
pub struct NotALeaf;
impl FromStr for Leaf {
    type Err = NotALeaf;
    fn from_str(s: &str) -> Result<Self, NotALeaf> {
        let kind = match s.chars().next() {
            Some('x') => VarKind::Symbol,
            Some('p') => VarKind::FreshBool,
            _ => return Err(NotALeaf),
        };
        let id = s[1..].parse().map_err(|_| NotALeaf)?;
        Ok(Leaf(Var { kind, id }))
    }
}
impl fmt::Display for Leaf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = match self.0.kind {
            VarKind::FreshBool => 'p',
            VarKind::Symbol => 'x',
            _ => 'v',
        };
        write!(f, "{prefix}{}", self.0.id)
    }
}

egg::define_language! {
    /// Binary `+`, `*`, `and`, `or` (rather than the term layer's n-ary
    /// canonical sums and junctions) so that plain patterns, with the
    /// commutativity and associativity rules, reach every pair.
    pub enum Lang {
        "+" = Add([Id; 2]),
        "*" = Mul([Id; 2]),
        "div" = Div([Id; 2]),
        "max" = Max([Id; 2]),
        "ite" = Ite([Id; 3]),
        "=" = Eq([Id; 2]),
        "<=" = Le([Id; 2]),
        "not" = Not(Id),
        "and" = And([Id; 2]),
        "or" = Or([Id; 2]),
        // The array, then the indices.
        "select" = Select(Box<[Id]>),
        // The parameters (variable leaves), then the body.
        "lambda" = Lambda(Box<[Id]>),
        "forall" = Forall(Box<[Id]>),
        "exists" = Exists(Box<[Id]>),
        Bool(bool),
        Num(BigInt),
        Var(Leaf),
    }
}

/// A known value of an e-class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Const {
    Int(BigInt),
    Bool(bool),
}

/// Constant folding as an e-class analysis: each class knows its value
/// when it has one, and a class with a value gets the constant's node.
#[derive(Default)]
pub struct ConstFold;

pub type Graph = EGraph<Lang, ConstFold>;

impl ConstFold {
    pub fn int(eg: &Graph, id: Id) -> Option<&BigInt> {
        match &eg[id].data {
            Some(Const::Int(n)) => Some(n),
            _ => None,
        }
    }
    fn bool(eg: &Graph, id: Id) -> Option<bool> {
        match &eg[id].data {
            Some(Const::Bool(b)) => Some(*b),
            _ => None,
        }
    }
}

impl Analysis<Lang> for ConstFold {
    type Data = Option<Const>;

    fn make(eg: &mut Graph, node: &Lang, _: Id) -> Option<Const> {
        let int = |i: &Id| ConstFold::int(eg, *i).cloned();
        let bool = |i: &Id| ConstFold::bool(eg, *i);
        Some(match node {
            Lang::Num(n) => Const::Int(n.clone()),
            Lang::Bool(b) => Const::Bool(*b),
            Lang::Add([a, b]) => Const::Int(int(a)? + int(b)?),
            Lang::Mul([a, b]) => match (int(a), int(b)) {
                (Some(x), Some(y)) => Const::Int(x * y),
                // 0·t = 0 whatever t is.
                (Some(z), _) | (_, Some(z)) if z.is_zero() => Const::Int(z),
                _ => return None,
            },
            Lang::Div([a, b]) => {
                let (x, y) = (int(a)?, int(b)?);
                if y.is_zero() {
                    return None;
                }
                // BigInt's `/` truncates toward zero, as C's does.
                Const::Int(x / y)
            }
            Lang::Max([a, b]) => Const::Int(int(a)?.max(int(b)?)),
            Lang::Ite([c, a, b]) => eg[if bool(c)? { *a } else { *b }].data.clone()?,
            Lang::Eq([a, b]) => match (&eg[*a].data, &eg[*b].data) {
                (Some(x), Some(y)) => Const::Bool(x == y),
                _ => return None,
            },
            Lang::Le([a, b]) => Const::Bool(int(a)? <= int(b)?),
            Lang::Not(a) => Const::Bool(!bool(a)?),
            Lang::And([a, b]) => match (bool(a), bool(b)) {
                (Some(false), _) | (_, Some(false)) => Const::Bool(false),
                (Some(true), Some(true)) => Const::Bool(true),
                _ => return None,
            },
            Lang::Or([a, b]) => match (bool(a), bool(b)) {
                (Some(true), _) | (_, Some(true)) => Const::Bool(true),
                (Some(false), Some(false)) => Const::Bool(false),
                _ => return None,
            },
            // The integers are not empty: ∀x.b and ∃x.b are b when b is
            // closed, as a constant is.
            Lang::Forall(xs) | Lang::Exists(xs) => Const::Bool(bool(xs.last()?)?),
            Lang::Select(_) | Lang::Lambda(_) | Lang::Var(_) => return None,
        })
    }

    fn merge(&mut self, a: &mut Option<Const>, b: Option<Const>) -> DidMerge {
        egg::merge_option(a, b, |x, y| {
            // Two values for one class would mean an unsound rule.
            debug_assert_eq!(*x, y, "constant folding merged two different constants");
            DidMerge(false, false)
        })
    }

    fn modify(eg: &mut Graph, id: Id) {
        let node = match eg[id].data.clone() {
            Some(Const::Int(n)) => Lang::Num(n),
            Some(Const::Bool(b)) => Lang::Bool(b),
            None => return,
        };
        let c = eg.add(node);
        eg.union(id, c);
    }
}

/// Adds the DAG under `roots` to the e-graph, one e-node per term node
/// (sums and junctions as chains); returns the roots' classes. The roots
/// must be free of ⋆ (two ⋆s are two unknowns, so `⋆ - ⋆` is not 0, which
/// the rules would not know).
pub fn add_terms(eg: &mut Graph, terms: &Terms, roots: &[TermId]) -> Vec<Id> {
    let mut memo: HashMap<TermId, Id> = HashMap::new();
    for t in terms.post_order(roots) {
        let id = add_node(eg, terms, terms.node(t), &memo);
        memo.insert(t, id);
    }
    roots.iter().map(|r| memo[r]).collect()
}

fn add_node(eg: &mut Graph, terms: &Terms, node: &Node, memo: &HashMap<TermId, Id>) -> Id {
    let m = |t: &TermId| memo[t];
    let vars = |eg: &mut Graph, vs: &[Var], body: Id| -> Box<[Id]> {
        let mut ids: Vec<Id> = vs.iter().map(|v| eg.add(Lang::Var(Leaf(*v)))).collect();
        ids.push(body);
        ids.into()
    };
    match node {
        Node::Int(n) => eg.add(Lang::Num(n.clone())),
        Node::Bool(b) => eg.add(Lang::Bool(*b)),
        Node::Star => unreachable!("conditions with ⋆ are not simplified"),
        Node::Var(v) => eg.add(Lang::Var(Leaf(*v))),
        Node::Add(c, xs) => sum(eg, xs, c.clone(), memo),
        Node::Mul(a, b) => eg.add(Lang::Mul([m(a), m(b)])),
        Node::Div(a, b) => eg.add(Lang::Div([m(a), m(b)])),
        Node::Max(a, b) => eg.add(Lang::Max([m(a), m(b)])),
        Node::Ite(c, a, b) => eg.add(Lang::Ite([m(c), m(a), m(b)])),
        // `d ≤ 0` (and `d = 0`) goes in as `P ≤ N` with the positive
        // summands of d on the left and the negated negative ones on the
        // right, as one would write it (`x ≤ 2`, `3 ≤ x`, `x + 1 ≤ τ`):
        // bounds on one term then meet in one pattern, and a strict
        // comparison `¬(x ≤ τ)` stays smaller than `τ + 1 ≤ x`.
        Node::Eq(a, b) | Node::Le(a, b) if terms.as_int(*b).is_some_and(|z| z.is_zero()) => {
            let (c, xs) = terms.linear(*a);
            let (pos, neg): (Vec<_>, Vec<_>) = xs.into_iter().partition(|(k, _)| k.is_positive());
            let neg: Vec<(BigInt, TermId)> = neg.into_iter().map(|(k, t)| (-k, t)).collect();
            let zero = BigInt::zero();
            let lhs = sum(eg, &pos, c.clone().max(zero.clone()), memo);
            let rhs = sum(eg, &neg, (-c).max(zero), memo);
            eg.add(if matches!(node, Node::Eq(..)) {
                Lang::Eq([lhs, rhs])
            } else {
                Lang::Le([lhs, rhs])
            })
        }
        Node::Eq(a, b) => eg.add(Lang::Eq([m(a), m(b)])),
        Node::Le(a, b) => eg.add(Lang::Le([m(a), m(b)])),
        Node::Not(a) => eg.add(Lang::Not(m(a))),
        Node::And(xs) => chain(eg, xs.iter().map(m).collect(), Lang::And),
        Node::Or(xs) => chain(eg, xs.iter().map(m).collect(), Lang::Or),
        Node::Select(a, xs) => {
            let ids: Vec<Id> = std::iter::once(m(a)).chain(xs.iter().map(m)).collect();
            eg.add(Lang::Select(ids.into()))
        }
        Node::Lambda(ps, b) => {
            let ids = vars(eg, ps, m(b));
            eg.add(Lang::Lambda(ids))
        }
        Node::Quant(q, ps, b) => {
            let ids = vars(eg, ps, m(b));
            eg.add(match q {
                Quantifier::Forall => Lang::Forall(ids),
                Quantifier::Exists => Lang::Exists(ids),
            })
        }
    }
}

/// `Σ kᵢ·tᵢ + constant` as a chain of binary `+` (`tᵢ` alone when kᵢ = 1,
/// the constant left out when 0 unless it is all there is).
fn sum(
    eg: &mut Graph,
    xs: &[(BigInt, TermId)],
    constant: BigInt,
    memo: &HashMap<TermId, Id>,
) -> Id {
    let mut parts: Vec<Id> = xs
        .iter()
        .map(|(k, t)| {
            let t = memo[t];
            if k == &BigInt::from(1) {
                t
            } else {
                let k = eg.add(Lang::Num(k.clone()));
                eg.add(Lang::Mul([k, t]))
            }
        })
        .collect();
    if !constant.is_zero() || parts.is_empty() {
        parts.push(eg.add(Lang::Num(constant)));
    }
    chain(eg, parts, Lang::Add)
}

/// A left-leaning chain of a binary operator over at least one operand.
fn chain(eg: &mut Graph, xs: Vec<Id>, op: fn([Id; 2]) -> Lang) -> Id {
    let mut it = xs.into_iter();
    let first = it.next().expect("a junction or sum has an operand");
    it.fold(first, |acc, x| eg.add(op([acc, x])))
}

/// Prefers small terms, and linear ones: a product or quotient of two
/// non-constants costs as much as ten more nodes. A negation is all but free (a
/// solver sees a literal with a polarity, and `¬(x ≤ 0)` shares its atom
/// with `x ≤ 0` where `1 ≤ x` would not), and where costs tie the input's
/// own nodes win by a hair: the condition keeps its shape unless a rewrite
/// really shrinks it (a reshaped condition can send a solver down another
/// path: HWM's φ̂^14 went from 9 s to 14 s on cvc5 for `0 < x` written
/// `1 ≤ x`). Costs are tree sizes (a DAG's may be astronomically large),
/// hence `f64`.
pub struct SmallLinear<'a> {
    pub eg: &'a Graph,
    /// The input's e-nodes, canonical in the final e-graph.
    pub original: std::collections::HashSet<Lang>,
}

impl<'a> SmallLinear<'a> {
    /// `input` holds the e-nodes of the input (before any rule ran).
    pub fn new(eg: &'a Graph, input: &[Lang]) -> SmallLinear<'a> {
        let original = input
            .iter()
            .map(|n| n.clone().map_children(|c| eg.find(c)))
            .collect();
        SmallLinear { eg, original }
    }
}

impl egg::CostFunction<Lang> for SmallLinear<'_> {
    type Cost = f64;
    fn cost<C: FnMut(Id) -> f64>(&mut self, node: &Lang, mut costs: C) -> f64 {
        let nonlinear = match node {
            Lang::Mul([a, b]) | Lang::Div([a, b]) => {
                ConstFold::int(self.eg, *a).is_none() && ConstFold::int(self.eg, *b).is_none()
            }
            _ => false,
        };
        // Every cost stays positive (a zero or negative one would let the
        // extractor go round `¬¬x = x` forever).
        let own: f64 = match node {
            _ if nonlinear => 11.0,
            Lang::Not(_) => 5e-4,
            _ => 1.0,
        };
        let own = if self.original.contains(node) {
            own * 0.999
        } else {
            own
        };
        node.children().iter().fold(own, |acc, c| acc + costs(*c))
    }
}

/// Every e-node of the e-graph (to remember the input's).
pub fn all_nodes(eg: &Graph) -> Vec<Lang> {
    eg.classes().flat_map(|c| c.nodes.iter().cloned()).collect()
}

/// Rebuilds the best term of each root class in `terms`; `None` if the
/// chosen nodes are not well founded (which a monotone cost rules out, but
/// costs of astronomically large trees can tie).
pub fn extract(eg: &Graph, roots: &[Id], input: &[Lang], terms: &mut Terms) -> Option<Vec<TermId>> {
    let ex = egg::Extractor::new(eg, SmallLinear::new(eg, input));
    let mut memo: HashMap<Id, TermId> = HashMap::new();
    let mut out = Vec::new();
    for &root in roots {
        let root = eg.find(root);
        let mut on_path: std::collections::HashSet<Id> = Default::default();
        let mut stack = vec![(root, false)];
        while let Some((c, expanded)) = stack.pop() {
            if memo.contains_key(&c) {
                continue;
            }
            let node = ex.find_best_node(c);
            let kids: Vec<Id> = match node {
                // Binder parameters are variable leaves, not terms.
                Lang::Lambda(xs) | Lang::Forall(xs) | Lang::Exists(xs) => {
                    vec![eg.find(*xs.last()?)]
                }
                _ => node.children().iter().map(|k| eg.find(*k)).collect(),
            };
            if !expanded {
                if !on_path.insert(c) {
                    return None; // a cycle
                }
                stack.push((c, true));
                for k in kids {
                    if !memo.contains_key(&k) {
                        if on_path.contains(&k) {
                            return None;
                        }
                        stack.push((k, false));
                    }
                }
                continue;
            }
            on_path.remove(&c);
            let t = rebuild(eg, node, &memo, terms)?;
            memo.insert(c, t);
        }
        out.push(memo[&root]);
    }
    Some(out)
}

fn rebuild(
    eg: &Graph,
    node: &Lang,
    memo: &HashMap<Id, TermId>,
    terms: &mut Terms,
) -> Option<TermId> {
    let m = |i: &Id| memo[&eg.find(*i)];
    // The variable leaf of a binder's parameter class.
    let param = |i: &Id| {
        eg[*i].nodes.iter().find_map(|n| match n {
            Lang::Var(Leaf(v)) => Some(*v),
            _ => None,
        })
    };
    let binder = |xs: &[Id]| -> Option<(Vec<Var>, TermId)> {
        let (body, ps) = xs.split_last()?;
        let ps: Option<Vec<Var>> = ps.iter().map(param).collect();
        Some((ps?, m(body)))
    };
    Some(match node {
        Lang::Num(n) => terms.int(n.clone()),
        Lang::Bool(b) => terms.bool(*b),
        Lang::Var(Leaf(v)) => terms.var(*v),
        Lang::Add([a, b]) => terms.add(m(a), m(b)),
        Lang::Mul([a, b]) => terms.mul(m(a), m(b)),
        Lang::Div([a, b]) => terms.div(m(a), m(b)),
        Lang::Max([a, b]) => terms.max(m(a), m(b)),
        Lang::Ite([c, a, b]) => terms.ite(m(c), m(a), m(b)),
        Lang::Eq([a, b]) => terms.eq(m(a), m(b)),
        Lang::Le([a, b]) => terms.le(m(a), m(b)),
        Lang::Not(a) => terms.not(m(a)),
        Lang::And([a, b]) => terms.and2(m(a), m(b)),
        Lang::Or([a, b]) => terms.or(vec![m(a), m(b)]),
        Lang::Select(xs) => {
            let (a, idx) = xs.split_first()?;
            terms.select(m(a), idx.iter().map(m).collect())
        }
        Lang::Lambda(xs) => {
            let (ps, body) = binder(xs)?;
            terms.lambda(ps, body)
        }
        Lang::Forall(xs) => {
            let (ps, body) = binder(xs)?;
            terms.forall(ps, body)
        }
        Lang::Exists(xs) => {
            let (ps, body) = binder(xs)?;
            terms.exists(ps, body)
        }
    })
}
