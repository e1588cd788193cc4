//! Symbolic expressions as a hash-consed DAG.
//!
//! Every term is interned in a [`Terms`] store and named by a [`TermId`]:
//! structurally equal terms get the same id, so equality is O(1) and shared
//! subterms are stored once (conditions stay linear in size). Smart
//! constructors keep a light normal form that the loop-summary rules match
//! against:
//! - linear sums are flat and canonical: `c0 + c1·t1 + … + cn·tn` with the
//!   `ti` sorted and distinct (so `a₀ + d` and progressions are recognised
//!   syntactically, and equal sums are equal ids);
//! - constants fold, `true`/`false` absorb, double negation cancels;
//! - ⋆ is contagious: an integer term containing ⋆ *is* ⋆, and a predicate
//!   over ⋆ becomes a fresh propositional variable (sound under negation,
//!   unlike replacing it by `true`);
//! - `select(λx⃗.e, a⃗)` β-reduces.
//!
//! Knows nothing of programs, the IR or solvers.

mod print;
mod subst;

pub use print::{Printer, scoped_shared, shared_subterms};
pub use subst::Subst;

/// Rebuilds a node with new children through the smart constructors.
pub fn rebuild_public(terms: &mut Terms, node: &Node, children: &[TermId]) -> TermId {
    subst::rebuild(terms, node, children)
}

use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use rustc_hash::FxHashMap as HashMap;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TermId(pub u32);

/// What a named leaf stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VarKind {
    /// a₀: the value of scalar `a` when the analysed (sub)program is entered.
    Symbol,
    /// A₀: an array (uninterpreted function ℤⁿ → ℤ), with its arity.
    ArraySymbol(u8),
    /// An array as a value of SMT-LIB's array theory, nested to the given
    /// depth (`(Array Int (Array Int Int))` for 2): what Horn clauses pass
    /// to their predicates, which cannot take a function. A `Select` on it
    /// reads one `select` per index.
    ArrayValue(u8),
    /// κ: a path counter (ranges over ℕ).
    Counter,
    /// A bound variable: an iteration variable τ, a parameter p, or an
    /// argument placeholder x of a λ-term.
    Bound,
    /// ν_u: the total iteration count of an inner loop (an artificial symbol).
    Artificial,
    /// A fresh propositional variable standing for a predicate over ⋆.
    FreshBool,
    /// A fresh integer constant (an unfolded instance of a bound variable).
    Fresh,
    /// A propositional variable that names a quantified subformula in the
    /// K-unfolding. Unlike a ⋆ predicate it stands for a known formula, so
    /// an `ite` on it keeps both of its branches.
    Proposition,
}

/// The numbered variables of loop summaries, printed from their number:
/// a counter κn, a last-writer selector ℓn, and the bound variables that
/// range alongside them (τn alongside κn, ℓn′ alongside ℓn). Importing a
/// summary renumbers counters and selectors and carries the number over
/// to the bound variables that share it, as data, never by reading the
/// printed names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Numbered {
    /// κn, a path counter (kind `Counter`).
    Counter,
    /// ℓn, a Table 1 last-writer selector (kind `Counter`: existential
    /// like the counters).
    Selector,
    /// τn, the iteration variable of κn (kind `Bound`).
    Iteration,
    /// ℓn′, selector ℓn at an iteration (kind `Bound`).
    SelectorAt,
}

impl Numbered {
    fn kind(self) -> VarKind {
        match self {
            Numbered::Counter | Numbered::Selector => VarKind::Counter,
            Numbered::Iteration | Numbered::SelectorAt => VarKind::Bound,
        }
    }

    fn name(self, n: u32) -> String {
        match self {
            Numbered::Counter => format!("κ{n}"),
            Numbered::Selector => format!("ℓ{n}"),
            Numbered::Iteration => format!("τ{n}"),
            Numbered::SelectorAt => format!("ℓ{n}′"),
        }
    }

    /// The bound variable that ranges alongside this free one.
    pub fn alongside(self) -> Option<Numbered> {
        match self {
            Numbered::Counter => Some(Numbered::Iteration),
            Numbered::Selector => Some(Numbered::SelectorAt),
            Numbered::Iteration | Numbered::SelectorAt => None,
        }
    }
}

/// A named leaf: its kind and a number unique among all variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Var {
    pub kind: VarKind,
    pub id: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sort {
    Int,
    Bool,
    /// An array of the given arity (a function ℤⁿ → ℤ).
    Array(u8),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Quantifier {
    Forall,
    Exists,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    Int(BigInt),
    Bool(bool),
    /// ⋆, the unknown integer.
    Star,
    Var(Var),
    /// `c + Σ cᵢ·tᵢ`, canonical: tᵢ sorted, distinct, none an `Add` or an
    /// `Int`, every cᵢ ≠ 0, and at least one summand besides the constant,
    /// and not just `1·t`.
    Add(BigInt, Box<[(BigInt, TermId)]>),
    /// A product of two non-constant terms (nonlinear).
    Mul(TermId, TermId),
    /// Truncating division (C's `/`); the divisor is known non-zero.
    Div(TermId, TermId),
    Max(TermId, TermId),
    Ite(TermId, TermId, TermId),
    Eq(TermId, TermId),
    Le(TermId, TermId),
    Not(TermId),
    /// Flat, sorted, at least two conjuncts.
    And(Box<[TermId]>),
    Or(Box<[TermId]>),
    /// An element of an array term.
    Select(TermId, Box<[TermId]>),
    /// λx⃗. e: an array value.
    Lambda(Box<[Var]>, TermId),
    Quant(Quantifier, Box<[Var]>, TermId),
}

/// The term store. Terms are never freed; ids are only meaningful in the
/// store that made them.
#[derive(Clone, Debug, Default)]
pub struct Terms {
    nodes: Vec<Node>,
    sorts: Vec<Sort>,
    index: HashMap<Node, TermId>,
    /// Names of variables, for printing.
    names: HashMap<Var, String>,
    /// The numbered variables (see [`Numbered`]).
    numbers: HashMap<Var, (Numbered, u32)>,
    next_var: u32,
    /// Whether the term (transitively) contains ⋆, fresh Booleans aside.
    has_star: Vec<bool>,
    /// Basic symbols by name, so that a symbol means the same slot in every
    /// store that imports a term (see `symbol`).
    symbol_index: HashMap<String, Var>,
    /// Each comparison built, by its operands: an executor compares the
    /// same terms in state after state (HWM's witness search spent an
    /// eighth of its time normalising the same differences again).
    compared: HashMap<(bool, TermId, TermId), TermId>,
}

impl Terms {
    pub fn new() -> Terms {
        Terms::default()
    }

    pub fn node(&self, t: TermId) -> &Node {
        &self.nodes[t.0 as usize]
    }
    pub fn sort(&self, t: TermId) -> Sort {
        self.sorts[t.0 as usize]
    }
    /// Number of distinct terms (DAG nodes) in the store.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
    pub fn is_star(&self, t: TermId) -> bool {
        matches!(self.node(t), Node::Star)
    }
    /// Whether ⋆ occurs in the term (for arrays: in the λ body).
    pub fn contains_star(&self, t: TermId) -> bool {
        self.has_star[t.0 as usize]
    }

    fn intern(&mut self, node: Node, sort: Sort) -> TermId {
        if let Some(&t) = self.index.get(&node) {
            return t;
        }
        let star = matches!(node, Node::Star)
            || self
                .children(&node)
                .iter()
                .any(|c| self.has_star[c.0 as usize]);
        let t = TermId(self.nodes.len() as u32);
        self.nodes.push(node.clone());
        self.sorts.push(sort);
        self.has_star.push(star);
        self.index.insert(node, t);
        t
    }

    /// The direct subterms of a node.
    pub fn children(&self, node: &Node) -> Vec<TermId> {
        match node {
            Node::Int(_) | Node::Bool(_) | Node::Star | Node::Var(_) => vec![],
            Node::Add(_, xs) => xs.iter().map(|(_, t)| *t).collect(),
            Node::Mul(a, b)
            | Node::Div(a, b)
            | Node::Max(a, b)
            | Node::Eq(a, b)
            | Node::Le(a, b) => {
                vec![*a, *b]
            }
            Node::Ite(c, a, b) => vec![*c, *a, *b],
            Node::Not(a) | Node::Lambda(_, a) | Node::Quant(_, _, a) => vec![*a],
            Node::And(xs) | Node::Or(xs) => xs.to_vec(),
            Node::Select(a, xs) => std::iter::once(*a).chain(xs.iter().copied()).collect(),
        }
    }

    // ---- variables -----------------------------------------------------------

    /// A new variable of the given kind, printed as `name`.
    pub fn new_var(&mut self, kind: VarKind, name: impl Into<String>) -> Var {
        let v = Var {
            kind,
            id: self.next_var,
        };
        self.next_var += 1;
        self.names.insert(v, name.into());
        v
    }
    /// A new numbered variable: `Numbered::Counter` and 3 make κ3.
    pub fn new_numbered(&mut self, what: Numbered, n: u32) -> Var {
        let v = self.new_var(what.kind(), what.name(n));
        self.numbers.insert(v, (what, n));
        v
    }

    /// What a numbered variable is, and its number.
    pub fn numbered(&self, v: Var) -> Option<(Numbered, u32)> {
        self.numbers.get(&v).copied()
    }

    /// The bound variable alongside a numbered counter or selector (τn for
    /// κn, ℓn′ for ℓn), fresh; a plain bound variable `fallback` otherwise.
    pub fn new_alongside(&mut self, of: Var, fallback: &str) -> Var {
        match self
            .numbered(of)
            .and_then(|(w, n)| Some((w.alongside()?, n)))
        {
            Some((what, n)) => self.new_numbered(what, n),
            None => self.new_var(VarKind::Bound, fallback),
        }
    }

    /// The variable named `name` of this kind, made on first use: basic
    /// symbols are identified by name.
    pub fn symbol(&mut self, kind: VarKind, name: &str) -> Var {
        if let Some(v) = self.symbol_index.get(name) {
            return *v;
        }
        let v = self.new_var(kind, name);
        self.symbol_index.insert(name.to_string(), v);
        v
    }
    pub fn var_name(&self, v: Var) -> &str {
        self.names.get(&v).map(String::as_str).unwrap_or("?")
    }
    pub fn var_sort(v: Var) -> Sort {
        match v.kind {
            VarKind::ArraySymbol(n) | VarKind::ArrayValue(n) => Sort::Array(n),
            VarKind::FreshBool | VarKind::Proposition => Sort::Bool,
            _ => Sort::Int,
        }
    }
    /// The term of a variable if it was ever made (for comparisons).
    pub fn var_const(&self, v: Var) -> TermId {
        self.index
            .get(&Node::Var(v))
            .copied()
            .unwrap_or(TermId(u32::MAX))
    }
    pub fn var(&mut self, v: Var) -> TermId {
        self.intern(Node::Var(v), Terms::var_sort(v))
    }
    /// A fresh propositional variable (for a predicate over ⋆).
    pub fn fresh_bool(&mut self) -> TermId {
        let n = self.next_var;
        let v = self.new_var(VarKind::FreshBool, format!("⋆b{n}"));
        self.var(v)
    }

    // ---- constants -------------------------------------------------------------

    pub fn int(&mut self, n: impl Into<BigInt>) -> TermId {
        self.intern(Node::Int(n.into()), Sort::Int)
    }
    pub fn bool(&mut self, b: bool) -> TermId {
        self.intern(Node::Bool(b), Sort::Bool)
    }
    pub fn star(&mut self) -> TermId {
        self.intern(Node::Star, Sort::Int)
    }
    pub fn as_int(&self, t: TermId) -> Option<&BigInt> {
        match self.node(t) {
            Node::Int(n) => Some(n),
            _ => None,
        }
    }
    pub fn as_bool(&self, t: TermId) -> Option<bool> {
        match self.node(t) {
            Node::Bool(b) => Some(*b),
            _ => None,
        }
    }

    // ---- arithmetic ------------------------------------------------------------

    /// The linear view of a term: (constant, [(coefficient, atom)]).
    pub fn linear(&self, t: TermId) -> (BigInt, Vec<(BigInt, TermId)>) {
        match self.node(t) {
            Node::Int(n) => (n.clone(), vec![]),
            Node::Add(c, xs) => (c.clone(), xs.to_vec()),
            _ => (BigInt::zero(), vec![(BigInt::one(), t)]),
        }
    }

    /// Builds `c + Σ cᵢ·tᵢ` in canonical form from any summands.
    pub fn sum(&mut self, constant: BigInt, summands: Vec<(BigInt, TermId)>) -> TermId {
        let mut c = constant;
        let mut acc: Vec<(TermId, BigInt)> = Vec::new();
        let mut star = false;
        for (k, t) in summands {
            if k.is_zero() {
                continue;
            }
            if self.is_star(t) {
                star = true;
                continue;
            }
            let (tc, txs) = self.linear(t);
            c += &k * tc;
            for (kk, a) in txs {
                acc.push((a, &k * kk));
            }
        }
        if star {
            return self.star();
        }
        acc.sort_by_key(|(a, _)| *a);
        let mut merged: Vec<(BigInt, TermId)> = Vec::new();
        for (a, k) in acc {
            match merged.last_mut() {
                Some((kk, last)) if *last == a => *kk += k,
                _ => merged.push((k, a)),
            }
        }
        merged.retain(|(k, _)| !k.is_zero());
        if merged.is_empty() {
            return self.int(c);
        }
        if c.is_zero() && merged.len() == 1 && merged[0].0.is_one() {
            return merged[0].1;
        }
        self.intern(Node::Add(c, merged.into_boxed_slice()), Sort::Int)
    }

    pub fn add(&mut self, a: TermId, b: TermId) -> TermId {
        self.sum(BigInt::zero(), vec![(BigInt::one(), a), (BigInt::one(), b)])
    }
    pub fn sub(&mut self, a: TermId, b: TermId) -> TermId {
        self.sum(
            BigInt::zero(),
            vec![(BigInt::one(), a), (-BigInt::one(), b)],
        )
    }
    pub fn neg(&mut self, a: TermId) -> TermId {
        self.sum(BigInt::zero(), vec![(-BigInt::one(), a)])
    }
    pub fn add_int(&mut self, a: TermId, k: i64) -> TermId {
        self.sum(BigInt::from(k), vec![(BigInt::one(), a)])
    }
    pub fn scale(&mut self, k: BigInt, a: TermId) -> TermId {
        self.sum(BigInt::zero(), vec![(k, a)])
    }

    pub fn mul(&mut self, a: TermId, b: TermId) -> TermId {
        if self.is_star(a) || self.is_star(b) {
            return self.star();
        }
        if let Some(k) = self.as_int(a).cloned() {
            return self.scale(k, b);
        }
        if let Some(k) = self.as_int(b).cloned() {
            return self.scale(k, a);
        }
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        self.intern(Node::Mul(a, b), Sort::Int)
    }

    /// Truncating division (toward zero).
    pub fn div(&mut self, a: TermId, b: TermId) -> TermId {
        if self.is_star(a) || self.is_star(b) {
            return self.star();
        }
        if let (Some(x), Some(y)) = (self.as_int(a), self.as_int(b))
            && !y.is_zero()
        {
            let q = x / y; // BigInt division truncates toward zero
            return self.int(q);
        }
        if self.as_int(b).is_some_and(|y| y.is_one()) {
            return a;
        }
        self.intern(Node::Div(a, b), Sort::Int)
    }

    pub fn max(&mut self, a: TermId, b: TermId) -> TermId {
        if self.is_star(a) || self.is_star(b) {
            return self.star();
        }
        if a == b {
            return a;
        }
        if let (Some(x), Some(y)) = (self.as_int(a), self.as_int(b)) {
            let m = if x >= y { x.clone() } else { y.clone() };
            return self.int(m);
        }
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        self.intern(Node::Max(a, b), Sort::Int)
    }

    pub fn ite(&mut self, c: TermId, a: TermId, b: TermId) -> TermId {
        if let Some(v) = self.as_bool(c) {
            return if v { a } else { b };
        }
        if a == b {
            return a;
        }
        let sort = self.sort(a);
        if sort == Sort::Int && (self.is_star(a) || self.is_star(b) || self.contains_star_pred(c)) {
            return self.star();
        }
        self.intern(Node::Ite(c, a, b), sort)
    }

    /// Whether a Boolean stands for a predicate over ⋆ (a fresh variable).
    fn contains_star_pred(&self, c: TermId) -> bool {
        matches!(
            self.node(c),
            Node::Var(Var {
                kind: VarKind::FreshBool,
                ..
            })
        )
    }

    // ---- predicates ------------------------------------------------------------

    /// Comparisons are kept as `d ≤ 0` and `d = 0` over the canonical
    /// linear difference d (with a positive leading coefficient for `=`), so
    /// `a < b` is literally `¬(b ≤ a)` and complements meet in `∧`/`∨`.
    /// A difference that is one `ite` with constant branches is decided per
    /// branch: `ite(c, 2, 0) = 0` becomes `¬c`.
    fn compare(&mut self, is_eq: bool, a: TermId, b: TermId) -> TermId {
        if let Some(&c) = self.compared.get(&(is_eq, a, b)) {
            return c;
        }
        let c = self.compare_anew(is_eq, a, b);
        // A fresh Boolean stands for one comparison over ⋆, never two.
        if !self.contains_star_pred(c) {
            self.compared.insert((is_eq, a, b), c);
        }
        c
    }

    fn compare_anew(&mut self, is_eq: bool, a: TermId, b: TermId) -> TermId {
        if self.sort(a) != Sort::Int || self.sort(b) != Sort::Int {
            // Only integers are compared; keep other sorts as they are.
            let (a, b) = if a <= b { (a, b) } else { (b, a) };
            return self.intern(
                if is_eq {
                    Node::Eq(a, b)
                } else {
                    Node::Le(a, b)
                },
                Sort::Bool,
            );
        }
        let d = self.sub(a, b);
        if self.is_star(d) {
            return self.fresh_bool();
        }
        let (c, xs) = self.linear(d);
        if xs.is_empty() {
            let v = if is_eq { c.is_zero() } else { !c.is_positive() };
            return self.bool(v);
        }
        if let [(k, x)] = &xs[..]
            && let Node::Ite(cond, t, e) = self.node(*x).clone()
            && let (Some(tv), Some(ev)) = (self.as_int(t).cloned(), self.as_int(e).cloned())
        {
            let holds = |v: &BigInt| {
                let total = &c + k * v;
                if is_eq {
                    total.is_zero()
                } else {
                    !total.is_positive()
                }
            };
            return match (holds(&tv), holds(&ev)) {
                (true, true) => self.bool(true),
                (false, false) => self.bool(false),
                (true, false) => cond,
                (false, true) => self.not(cond),
            };
        }
        let d = match divided_by_gcd(is_eq, c, xs) {
            Some((c, xs)) => self.sum(c, xs),
            None => return self.bool(false),
        };
        let leading_negative = matches!(self.linear(d).1.first(), Some((k, _)) if k.is_negative());
        let d = if is_eq && leading_negative {
            self.neg(d)
        } else {
            d
        };
        let zero = self.int(0);
        self.intern(
            if is_eq {
                Node::Eq(d, zero)
            } else {
                Node::Le(d, zero)
            },
            Sort::Bool,
        )
    }

    pub fn eq(&mut self, a: TermId, b: TermId) -> TermId {
        if a == b && !self.is_star(a) {
            return self.bool(true);
        }
        self.compare(true, a, b)
    }
    pub fn ne(&mut self, a: TermId, b: TermId) -> TermId {
        let e = self.eq(a, b);
        self.not(e)
    }
    pub fn lt(&mut self, a: TermId, b: TermId) -> TermId {
        let ge = self.compare(false, b, a);
        self.not(ge)
    }
    pub fn le(&mut self, a: TermId, b: TermId) -> TermId {
        self.compare(false, a, b)
    }
    pub fn gt(&mut self, a: TermId, b: TermId) -> TermId {
        self.lt(b, a)
    }
    pub fn ge(&mut self, a: TermId, b: TermId) -> TermId {
        self.le(b, a)
    }

    pub fn not(&mut self, a: TermId) -> TermId {
        match self.node(a) {
            Node::Bool(b) => {
                let v = !*b;
                self.bool(v)
            }
            Node::Not(x) => *x,
            _ => self.intern(Node::Not(a), Sort::Bool),
        }
    }

    fn junction(&mut self, is_and: bool, xs: Vec<TermId>) -> TermId {
        let mut flat = Vec::new();
        for x in xs {
            match self.node(x) {
                Node::Bool(b) if *b == is_and => continue,
                Node::Bool(_) => return self.bool(!is_and),
                Node::And(ys) if is_and => flat.extend(ys.iter().copied()),
                Node::Or(ys) if !is_and => flat.extend(ys.iter().copied()),
                _ => flat.push(x),
            }
        }
        flat.sort();
        flat.dedup();
        // x ∧ ¬x is false, x ∨ ¬x is true.
        for &x in &flat {
            if let Node::Not(y) = self.node(x)
                && flat.binary_search(y).is_ok()
            {
                return self.bool(!is_and);
            }
        }
        match flat.len() {
            0 => self.bool(is_and),
            1 => flat[0],
            _ => {
                let node = if is_and {
                    Node::And(flat.into())
                } else {
                    Node::Or(flat.into())
                };
                self.intern(node, Sort::Bool)
            }
        }
    }
    pub fn and(&mut self, xs: Vec<TermId>) -> TermId {
        self.junction(true, xs)
    }
    pub fn or(&mut self, xs: Vec<TermId>) -> TermId {
        self.junction(false, xs)
    }
    pub fn and2(&mut self, a: TermId, b: TermId) -> TermId {
        self.and(vec![a, b])
    }
    pub fn implies(&mut self, a: TermId, b: TermId) -> TermId {
        let na = self.not(a);
        self.or(vec![na, b])
    }

    // ---- arrays and binders ------------------------------------------------------

    pub fn lambda(&mut self, params: Vec<Var>, body: TermId) -> TermId {
        // λx⃗. A(x⃗) is just A (η).
        if let Node::Select(a, args) = self.node(body)
            && args.len() == params.len()
            && args
                .iter()
                .zip(&params)
                .all(|(t, p)| matches!(self.node(*t), Node::Var(v) if v == p))
            && !self.mentions_any(*a, &params)
        {
            return *a;
        }
        self.intern(
            Node::Lambda(params.clone().into(), body),
            Sort::Array(params.len() as u8),
        )
    }

    /// Reads an element; β-reduces λ-terms.
    pub fn select(&mut self, array: TermId, args: Vec<TermId>) -> TermId {
        if args.iter().any(|a| self.is_star(*a)) {
            return self.star();
        }
        if let Node::Lambda(params, body) = self.node(array).clone() {
            let mut s = Subst::new();
            for (p, a) in params.iter().zip(args) {
                s.bind(*p, a);
            }
            return s.apply(self, body);
        }
        self.intern(Node::Select(array, args.into()), Sort::Int)
    }

    /// `∀v⃗. body` / `∃v⃗. body`; drops variables that do not occur.
    pub fn quant(&mut self, q: Quantifier, vars: Vec<Var>, body: TermId) -> TermId {
        let used: Vec<Var> = vars
            .into_iter()
            .filter(|v| self.mentions(body, *v))
            .collect();
        if used.is_empty() || self.as_bool(body).is_some() {
            return body;
        }
        self.intern(Node::Quant(q, used.into(), body), Sort::Bool)
    }
    pub fn forall(&mut self, vars: Vec<Var>, body: TermId) -> TermId {
        self.quant(Quantifier::Forall, vars, body)
    }
    pub fn exists(&mut self, vars: Vec<Var>, body: TermId) -> TermId {
        self.quant(Quantifier::Exists, vars, body)
    }

    // ---- queries -----------------------------------------------------------------

    /// The free variables of a term (bound ones excluded), sorted.
    pub fn free_vars(&self, t: TermId) -> Vec<Var> {
        let mut out = std::collections::BTreeSet::new();
        let mut seen = rustc_hash::FxHashSet::default();
        let mut stack = vec![(t, Vec::<Var>::new())];
        while let Some((t, bound)) = stack.pop() {
            crate::deadline::tick();
            if !seen.insert((t, bound.clone())) {
                continue;
            }
            match self.node(t) {
                Node::Var(v) if !bound.contains(v) => {
                    out.insert(*v);
                }
                Node::Lambda(ps, b) | Node::Quant(_, ps, b) => {
                    let mut nb = bound.clone();
                    nb.extend(ps.iter().copied());
                    stack.push((*b, nb));
                }
                n => {
                    for c in self.children(n) {
                        stack.push((c, bound.clone()));
                    }
                }
            }
        }
        out.into_iter().collect()
    }

    pub fn mentions(&self, t: TermId, v: Var) -> bool {
        self.mentions_any(t, &[v])
    }
    pub fn mentions_any(&self, t: TermId, vs: &[Var]) -> bool {
        self.any_var(t, |v| vs.contains(&v))
    }
    /// Whether some variable of the given kind occurs.
    pub fn mentions_kind(&self, t: TermId, kind: impl Fn(VarKind) -> bool) -> bool {
        self.any_var(t, |v| kind(v.kind))
    }
    /// Whether some variable (free or bound) satisfying `pred` occurs.
    fn any_var(&self, t: TermId, pred: impl Fn(Var) -> bool) -> bool {
        self.any_node(t, |n| matches!(n, Node::Var(v) if pred(*v)))
    }
    /// Whether a quantifier occurs.
    pub fn has_quantifier(&self, t: TermId) -> bool {
        self.any_node(t, |n| matches!(n, Node::Quant(..)))
    }
    pub(crate) fn any_node(&self, t: TermId, pred: impl Fn(&Node) -> bool) -> bool {
        let mut seen = rustc_hash::FxHashSet::default();
        let mut stack = vec![t];
        while let Some(t) = stack.pop() {
            if !seen.insert(t) {
                continue;
            }
            let n = self.node(t);
            if pred(n) {
                return true;
            }
            stack.extend(self.children(n));
        }
        false
    }

    /// Number of distinct DAG nodes reachable from the roots.
    pub fn dag_size(&self, roots: &[TermId]) -> usize {
        let mut seen = rustc_hash::FxHashSet::default();
        let mut stack = roots.to_vec();
        while let Some(t) = stack.pop() {
            if seen.insert(t) {
                stack.extend(self.children(self.node(t)));
            }
        }
        seen.len()
    }

    /// Copies terms of another store into this one. Basic symbols are
    /// matched by name (they mean the same slot everywhere); every other
    /// variable gets a new variable here, named by `rename` (for example a
    /// fresh counter `κ17`), the same one for all roots of one call.
    pub fn import(
        &mut self,
        src: &Terms,
        roots: &[TermId],
        rename: &mut dyn FnMut(&mut Terms, Var, &str) -> Var,
    ) -> Vec<TermId> {
        let mut vars: HashMap<Var, Var> = HashMap::default();
        let mut memo: HashMap<TermId, TermId> = HashMap::default();
        // In the source's order of creation (a child is always older than
        // its parent, so this is a topological order): the copies keep the
        // originals' relative order, and with it the order in which sums
        // and conjunctions print. An imported condition reads as it would
        // had it been computed here.
        let mut order = src.post_order(roots);
        order.sort_unstable();
        for t in order {
            let node = src.node(t).clone();
            let kids = src.children(&node);
            let mut map_var = |this: &mut Terms, v: Var| -> Var {
                if let Some(m) = vars.get(&v) {
                    return *m;
                }
                let name = src.var_name(v).to_string();
                let m = match v.kind {
                    VarKind::Symbol | VarKind::ArraySymbol(_) => this.symbol(v.kind, &name),
                    _ => rename(this, v, &name),
                };
                vars.insert(v, m);
                m
            };
            let r = match &node {
                Node::Int(n) => self.int(n.clone()),
                Node::Bool(b) => self.bool(*b),
                Node::Star => self.star(),
                Node::Var(v) => {
                    let m = map_var(self, *v);
                    self.var(m)
                }
                Node::Lambda(ps, b) => {
                    let ps: Vec<Var> = ps.iter().map(|p| map_var(self, *p)).collect();
                    self.lambda(ps, memo[b])
                }
                Node::Quant(q, vs, b) => {
                    let vs: Vec<Var> = vs.iter().map(|p| map_var(self, *p)).collect();
                    self.quant(*q, vs, memo[b])
                }
                _ => {
                    let new: Vec<TermId> = kids.iter().map(|k| memo[k]).collect();
                    subst::rebuild(self, &node, &new)
                }
            };
            memo.insert(t, r);
        }
        roots.iter().map(|r| memo[r]).collect()
    }

    /// The nodes under `roots`, each once, children before their parents
    /// (iteratively: conditions can be deep).
    pub fn post_order(&self, roots: &[TermId]) -> Vec<TermId> {
        let mut done = rustc_hash::FxHashSet::default();
        let mut out = Vec::new();
        let mut stack: Vec<(TermId, bool)> = roots.iter().rev().map(|r| (*r, false)).collect();
        while let Some((t, expanded)) = stack.pop() {
            if done.contains(&t) {
                continue;
            }
            let kids = self.children(self.node(t));
            if !expanded && !kids.is_empty() {
                stack.push((t, true));
                stack.extend(kids.iter().map(|k| (*k, false)));
                continue;
            }
            done.insert(t);
            out.push(t);
        }
        out
    }

    /// Displays a term with the store's names.
    pub fn show(&self, t: TermId) -> String {
        Printer::new(self).term(t)
    }
}

impl fmt::Display for TermId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}", self.0)
    }
}

#[cfg(test)]
mod tests;

/// `c + Σ kᵢ·xᵢ = 0` (or `≤ 0`) over integer atoms, divided by the gcd g of
/// the kᵢ: an equation whose constant g does not divide has no integer
/// solution (`None`: false; the gcd test, which decides ISSTA'12's OneLoop
/// and TwoLoops, `4κ = 15`), and an inequality's constant rounds up
/// (`2x - 3 ≤ 0` is `x - 1 ≤ 0`). So equivalent comparisons meet as one
/// atom, and every engine sees the tighter bound (docs/necessary-conditions.md §4).
fn divided_by_gcd(
    is_eq: bool,
    c: BigInt,
    xs: Vec<(BigInt, TermId)>,
) -> Option<(BigInt, Vec<(BigInt, TermId)>)> {
    use num_integer::Integer;
    let g = xs.iter().fold(BigInt::zero(), |g, (k, _)| g.gcd(k));
    if g.is_one() || g.is_zero() {
        return Some((c, xs));
    }
    let c = if is_eq {
        if !c.is_multiple_of(&g) {
            return None;
        }
        c / &g
    } else {
        c.div_ceil(&g)
    };
    Some((c, xs.into_iter().map(|(k, x)| (k / &g, x)).collect()))
}
