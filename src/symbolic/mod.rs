//! The one translation from IR expressions and conditions to terms. Each
//! engine keeps its own state model (the conditions' slots, the
//! executor's cells and frames, compact's parametrised memory, the
//! compositional leaves, the annotations' variables) and says how to read
//! it by implementing [`Reads`]; the arithmetic, the comparisons, the
//! truth values and long sums are written here once, as the interpreter
//! computes them (`docs/microc.md`: unbounded integers, division
//! truncating towards zero, `!x` is 1 when x = 0).
//!
//! Knows the IR and terms; not any engine.

use crate::ir::{BinOp, CmpOp, Expr, VarId};
use crate::syntax::ast::UnOp;
use crate::term::{Sort, TermId, Terms};
use num_bigint::BigInt;

/// How an engine's state answers the translation.
pub trait Reads {
    /// The engine's value of an expression (an integer term, or an array,
    /// a pointer, a record in its own model).
    type Value;
    /// Why an expression cannot be translated in this model.
    type Error;

    /// The store the terms go to.
    fn terms(&mut self) -> &mut Terms;

    /// An integer term as a value.
    fn int_value(&mut self, t: TermId) -> Self::Value;

    /// A value used as an integer.
    fn to_int(&mut self, v: Self::Value) -> Result<TermId, Self::Error>;

    /// The value of a variable.
    fn var(&mut self, v: VarId) -> Result<Self::Value, Self::Error>;

    /// The element at `index` of an array value (the index was checked in
    /// bounds before, where the program needs it).
    fn element(&mut self, array: Self::Value, index: TermId) -> Result<Self::Value, Self::Error>;

    /// Every other expression: pointers, loads, fields, and literals of
    /// arrays and records.
    fn other(&mut self, e: &Expr) -> Result<Self::Value, Self::Error>;

    /// `x op y` on integer terms. By default exact; a model may leave a
    /// product or a quotient of unknowns unknown (the Horn clauses'
    /// linear reading).
    fn arithmetic(&mut self, op: BinOp, x: TermId, y: TermId) -> Result<TermId, Self::Error> {
        Ok(binary(self.terms(), op, x, y))
    }

    /// `a op b` as a Boolean term. By default both as integers; a model
    /// with pointers compares those by identity.
    fn compare(
        &mut self,
        op: CmpOp,
        a: Self::Value,
        b: Self::Value,
    ) -> Result<TermId, Self::Error> {
        let (x, y) = (self.to_int(a)?, self.to_int(b)?);
        Ok(comparison(self.terms(), op, x, y))
    }
}

/// Longer chains `a ± b ± …` than this are one sum (see [`value`]);
/// shorter ones pairwise, as they always were: the terms, and so the
/// printed conditions, stay the same.
pub const LONG_CHAIN: usize = 16;

/// The value of `e` in the engine's state.
///
/// A long chain `a ± b ± …` becomes one sum: built pairwise, every prefix
/// of a chain of n distinct terms is a sum of its own (n² work and memory:
/// 10,000 operands took 4–5 GB).
pub fn value<R: Reads>(r: &mut R, e: &Expr) -> Result<R::Value, R::Error> {
    crate::deadline::tick();
    let t = match e {
        Expr::Int(n) => r.terms().int(n.clone()),
        Expr::Var(v) => return r.var(*v),
        Expr::Unary(op, a) => {
            let x = int(r, a)?;
            unary(r.terms(), *op, x)
        }
        Expr::Binary(BinOp::Add | BinOp::Sub, ..) if chain_len(e) > LONG_CHAIN => long_sum(r, e)?,
        Expr::Binary(op, a, b) => {
            let (x, y) = (int(r, a)?, int(r, b)?);
            r.arithmetic(*op, x, y)?
        }
        Expr::Cmp(op, a, b) => {
            let c = compare(r, *op, a, b)?;
            truth_value(r.terms(), c)
        }
        Expr::Index(a, i) => {
            let a = value(r, a)?;
            let i = int(r, i)?;
            return r.element(a, i);
        }
        other => return r.other(other),
    };
    Ok(r.int_value(t))
}

/// The value of `e` as an integer term.
pub fn int<R: Reads>(r: &mut R, e: &Expr) -> Result<TermId, R::Error> {
    let v = value(r, e)?;
    r.to_int(v)
}

/// `a op b` as a Boolean term.
pub fn compare<R: Reads>(r: &mut R, op: CmpOp, a: &Expr, b: &Expr) -> Result<TermId, R::Error> {
    let (a, b) = (value(r, a)?, value(r, b)?);
    r.compare(op, a, b)
}

/// The length of a chain of `+` and `-` on its left spine.
pub fn chain_len(e: &Expr) -> usize {
    let mut n = 1;
    let mut cur = e;
    while let Expr::Binary(BinOp::Add | BinOp::Sub, a, _) = cur {
        n += 1;
        cur = a;
    }
    n
}

fn long_sum<R: Reads>(r: &mut R, e: &Expr) -> Result<TermId, R::Error> {
    let mut summands = Vec::new();
    let mut cur = e;
    while let Expr::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) = cur {
        let sign = if *op == BinOp::Add { 1 } else { -1 };
        summands.push((BigInt::from(sign), &**b));
        cur = a;
    }
    summands.push((BigInt::from(1), cur));
    summands.reverse();
    let mut parts = Vec::with_capacity(summands.len());
    for (k, x) in summands {
        crate::deadline::tick();
        parts.push((k, int(r, x)?));
    }
    Ok(r.terms().sum(BigInt::from(0), parts))
}

/// An IR unary operator on an integer term (`!x` is `1` when x = 0, else
/// `0`, as the interpreter computes it).
pub fn unary(t: &mut Terms, op: UnOp, x: TermId) -> TermId {
    match op {
        UnOp::Neg => t.neg(x),
        UnOp::Not => {
            let zero = t.int(0);
            let is_zero = t.eq(x, zero);
            truth_value(t, is_zero)
        }
    }
}

/// An IR arithmetic operator on integer terms.
pub fn binary(t: &mut Terms, op: BinOp, x: TermId, y: TermId) -> TermId {
    match op {
        BinOp::Add => t.add(x, y),
        BinOp::Sub => t.sub(x, y),
        BinOp::Mul => t.mul(x, y),
        BinOp::Div => t.div(x, y),
    }
}

/// An IR comparison as a Boolean term, `x op y` over integer terms.
pub fn comparison(t: &mut Terms, op: CmpOp, x: TermId, y: TermId) -> TermId {
    match op {
        CmpOp::Eq => t.eq(x, y),
        CmpOp::Ne => t.ne(x, y),
        CmpOp::Lt => t.lt(x, y),
        CmpOp::Le => t.le(x, y),
        CmpOp::Gt => t.gt(x, y),
        CmpOp::Ge => t.ge(x, y),
    }
}

/// `1` if `c` holds, else `0` (a comparison used as a value).
pub fn truth_value(t: &mut Terms, c: TermId) -> TermId {
    let (one, zero) = (t.int(1), t.int(0));
    t.ite(c, one, zero)
}

/// An element of an input array (a function of its index) as the
/// interpreter reads it: 0 at a negative index.
pub fn input_element(t: &mut Terms, array: TermId, index: TermId) -> TermId {
    let zero = t.int(0);
    let nonneg = t.le(zero, index);
    let sel = t.select(array, vec![index]);
    t.ite(nonneg, sel, zero)
}

/// Whether `t` is an integer term (arrays and Booleans are not).
pub fn is_int(terms: &Terms, t: TermId) -> bool {
    terms.sort(t) == Sort::Int
}
