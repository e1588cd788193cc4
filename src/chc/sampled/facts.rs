//! Facts at loop headers for the conditions (docs/necessary-conditions.md
//! §9, "Facts from runs"): the invariants from runs, kept by Houdini as
//! for a proof, in the program's own terms (IR conditions over its
//! variables), so that the conditions can assume them where a loop's
//! summary leaves a value unknown (`s = s + 2·i + 1`: θ(s) = ⋆, yet
//! `s = i·i` at every visit of the header).

use super::{Checks, Sampling, inductive};
use crate::chc::encode::{Arithmetic, Cells, Inputs, Reading, encode_as};
use crate::ir::{BinOp, Body, CmpOp, Cond, Expr, NodeId, VarId};
use crate::smt::Profile;
use crate::term::{Node, TermId, Terms, Var};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use rustc_hash::FxHashMap as HashMap;
use std::time::Instant;

/// The invariants at the loop headers of `body` on its ways to `errors`,
/// each proved inductive (a candidate the solver does not prove is
/// dropped), as conditions over the program's variables. None when no
/// clause multiplies two values of the state: the summaries hold the
/// linear relations themselves.
pub fn header_facts(
    body: &Body,
    errors: &[NodeId],
    solver: &Profile,
    deadline: Instant,
) -> Result<Vec<(NodeId, Vec<Cond>)>, String> {
    // The smallest clauses: each `input` and each array cell an unknown.
    // They over-approximate the runs, so what holds on them holds on the
    // program.
    let reading = Reading {
        arithmetic: Arithmetic::Exact,
        inputs: Inputs::Unknown,
        cells: Cells::Unknown,
    };
    let enc = encode_as(body, errors, reading)?;
    if !super::multiplies_state(&enc) {
        return Ok(vec![]);
    }
    let mut script = None;
    let checks = Checks {
        solver,
        deadline,
        script: &mut script,
    };
    let (terms, candidates) = inductive(&enc, &HashMap::default(), checks, Sampling::PastTheError)?;
    let var_of: HashMap<Var, VarId> = (0..body.vars.len() as VarId)
        .filter_map(|v| Some((enc.state[enc.value_slot(v)?].var, v)))
        .collect();
    let facts = (enc.predicates.iter())
        .filter_map(|h| {
            let conds: Vec<Cond> = (candidates.get(h).into_iter().flatten())
                .filter_map(|t| condition(&terms, *t, &var_of))
                .collect();
            (!conds.is_empty()).then_some((*h, conds))
        })
        .collect();
    Ok(facts)
}

/// A candidate (`d = 0`, `d ≤ 0` over the state) as an IR condition, as
/// one would write it: the positive summands of d on the left, the
/// negated negative ones on the right (`s == i * i`, `i <= n`); none if
/// it reads a slot that is not a variable's value.
fn condition(terms: &Terms, t: TermId, var_of: &HashMap<Var, VarId>) -> Option<Cond> {
    let (op, d, zero) = match terms.node(t) {
        Node::Eq(a, b) => (CmpOp::Eq, *a, *b),
        Node::Le(a, b) => (CmpOp::Le, *a, *b),
        _ => return None,
    };
    if terms.node(zero) != &Node::Int(BigInt::zero()) {
        let (a, b) = (
            expression(terms, d, var_of)?,
            expression(terms, zero, var_of)?,
        );
        return Some(Cond::Cmp(op, a, b));
    }
    let (constant, summands): (BigInt, Vec<(BigInt, TermId)>) = match terms.node(d) {
        Node::Add(c, xs) => (c.clone(), xs.to_vec()),
        _ => (BigInt::zero(), vec![(BigInt::one(), d)]),
    };
    let (mut left, mut right) = (Vec::new(), Vec::new());
    for (k, x) in summands {
        let e = expression(terms, x, var_of)?;
        match k.is_negative() {
            true => right.push(scaled(-k, e)),
            false => left.push(scaled(k, e)),
        }
    }
    match constant.is_negative() {
        true => right.push(Expr::Int(-constant)),
        false if !constant.is_zero() => left.push(Expr::Int(constant)),
        false => {}
    }
    Some(Cond::Cmp(op, sum(left), sum(right)))
}

/// `k·e`, as `e` when k is 1.
fn scaled(k: BigInt, e: Expr) -> Expr {
    match k.is_one() {
        true => e,
        false => Expr::Binary(BinOp::Mul, Box::new(Expr::Int(k)), Box::new(e)),
    }
}

/// The sum of `parts`, 0 for none.
fn sum(parts: Vec<Expr>) -> Expr {
    (parts.into_iter())
        .reduce(|a, b| Expr::Binary(BinOp::Add, Box::new(a), Box::new(b)))
        .unwrap_or(Expr::Int(BigInt::zero()))
}

/// An integer term of sums and products as an IR expression.
fn expression(terms: &Terms, t: TermId, var_of: &HashMap<Var, VarId>) -> Option<Expr> {
    let binary = |op, a, b| Expr::Binary(op, Box::new(a), Box::new(b));
    Some(match terms.node(t) {
        Node::Int(n) => Expr::Int(n.clone()),
        Node::Var(v) => Expr::Var(*var_of.get(v)?),
        Node::Mul(a, b) => binary(
            BinOp::Mul,
            expression(terms, *a, var_of)?,
            expression(terms, *b, var_of)?,
        ),
        Node::Add(c, summands) => {
            let mut parts = vec![Expr::Int(c.clone())];
            for (k, x) in summands.iter() {
                parts.push(scaled(k.clone(), expression(terms, *x, var_of)?));
            }
            sum(parts)
        }
        _ => return None,
    })
}
