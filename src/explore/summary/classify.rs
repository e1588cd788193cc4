//! How a path changes each variable, and what k iterations of it make of
//! a state (the thesis's §4.4.1 and §4.4.2.2).
//!
//! A path (or a round of a periodic cycle) is run once on the general
//! state of entry symbols: its condition is a conjunction of atoms, its
//! effect a term per variable. Each variable is then
//!
//! - unchanged;
//! - an **induction** variable, `v := v + inc` with `inc` the same in
//!   every iteration (it mentions no variable the path changes): after k
//!   iterations `v + k·inc`;
//! - set to a value that depends only on unchanged and induction
//!   variables: after k ≥ 1 iterations, the value the last iteration set
//!   (an idempotent assignment is the special case of a constant value);
//! - anything else (`a := a * 2`, `a := b` with `b` set from an input in
//!   the iteration before): not summarisable.
//!
//! A condition is **IV** when every atom compares an affine combination of
//! induction variables with invariant coefficients. Then along k
//! iterations each atom is affine in the iteration number, so it holds at
//! every iteration once it holds at the first and the last: that is why a
//! trace's condition only asks the endpoints. `!=` is the exception (not
//! convex), so a path whose condition has `e != 0` is split into `e < 0`
//! and `e > 0`.

use super::Symbols;
use crate::term::{Node, Subst, TermId, Terms, Var};
use num_traits::One;

/// How one variable changes along one run of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    Same,
    /// `v := v + inc`, `inc` invariant along the path.
    Induction(TermId),
    /// Set to a value of unchanged and induction variables.
    Last,
    /// None of these: the path cannot be iterated in closed form.
    Other,
}

/// A path run once on the general state, or a round of a periodic cycle.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    /// The condition: conjuncts over the entry symbols.
    pub atoms: Vec<TermId>,
    /// Each variable's value after one run.
    pub delta: Vec<TermId>,
    pub changes: Vec<Change>,
}

impl Step {
    pub(super) fn new(
        terms: &mut Terms,
        sy: &Symbols,
        atoms: Vec<TermId>,
        delta: Vec<TermId>,
    ) -> Step {
        let changes = classify(terms, sy, &delta);
        Step {
            atoms,
            delta,
            changes,
        }
    }
}

/// The name of a variable for messages (its symbol without the mark).
pub(super) fn var_name(terms: &Terms, sy: &Symbols, i: usize) -> String {
    terms.var_name(sy.syms[i]).trim_end_matches('°').to_string()
}

fn classify(terms: &mut Terms, sy: &Symbols, delta: &[TermId]) -> Vec<Change> {
    let sym_terms = sy.general(terms);
    let changed: Vec<Var> = (0..delta.len())
        .filter(|&i| delta[i] != sym_terms[i])
        .map(|i| sy.syms[i])
        .collect();
    let mut changes: Vec<Change> = (0..delta.len())
        .map(|i| {
            if delta[i] == sym_terms[i] {
                return Change::Same;
            }
            let (_, xs) = terms.linear(delta[i]);
            let unit = xs.iter().any(|(c, t)| *t == sym_terms[i] && c.is_one());
            let inc = terms.sub(delta[i], sym_terms[i]);
            if unit && !terms.mentions_any(inc, &changed) {
                Change::Induction(inc)
            } else {
                Change::Other
            }
        })
        .collect();
    // The value of the last iteration: it may read only variables whose
    // value at the last iteration has a closed form.
    let unclosed: Vec<Var> = (0..delta.len())
        .filter(|&i| changes[i] == Change::Other)
        .map(|i| sy.syms[i])
        .collect();
    for i in 0..delta.len() {
        if changes[i] == Change::Other && !terms.mentions_any(delta[i], &unclosed) {
            changes[i] = Change::Last;
        }
    }
    changes
}

/// The first variable the step cannot iterate in closed form, if any.
pub(super) fn inexpressible(terms: &Terms, sy: &Symbols, step: &Step) -> Option<String> {
    let i = step.changes.iter().position(|c| *c == Change::Other)?;
    Some(format!(
        "`{}` is updated by neither an induction (`v = v + inc`, inc loop-invariant) nor an assignment of induction values ({})",
        var_name(terms, sy, i),
        terms.show(step.delta[i]).replace('°', "")
    ))
}

/// Whether every atom of the step's condition is an IV condition; if
/// not, why (the thesis's NIV condition).
pub(super) fn niv_condition(terms: &Terms, sy: &Symbols, step: &Step) -> Option<String> {
    let varying: Vec<Var> = (0..sy.syms.len())
        .filter(|&i| !matches!(step.changes[i], Change::Same | Change::Induction(_)))
        .map(|i| sy.syms[i])
        .collect();
    let moving: Vec<Var> = (0..sy.syms.len())
        .filter(|&i| step.changes[i] != Change::Same)
        .map(|i| sy.syms[i])
        .collect();
    for &a in &step.atoms {
        if let Some(why) = atom_niv(terms, sy, step, a, &varying, &moving) {
            return Some(format!(
                "the condition `{}` is NIV: {why}",
                terms.show(a).replace('°', "")
            ));
        }
    }
    None
}

fn atom_niv(
    terms: &Terms,
    sy: &Symbols,
    step: &Step,
    atom: TermId,
    varying: &[Var],
    moving: &[Var],
) -> Option<String> {
    if !terms.mentions_any(atom, moving) {
        return None; // invariant along the path
    }
    if let Some(i) = sy
        .syms
        .iter()
        .position(|s| varying.contains(s) && terms.mentions(atom, *s))
    {
        return Some(format!(
            "`{}` is not an induction variable (it changes by a value that is not loop-invariant)",
            var_name(terms, sy, i)
        ));
    }
    let Some(d) = compared(terms, atom) else {
        return Some("it is not a comparison".into());
    };
    let (_, xs) = terms.linear(d);
    for (_, t) in xs {
        let is_var = matches!(terms.node(t), Node::Var(v) if sy.syms.contains(v));
        if !is_var && terms.mentions_any(t, moving) {
            return Some("it is not linear in the variables the loop changes".into());
        }
    }
    let _ = step;
    None
}

/// The difference `d` of an atom `d ≤ 0`, `d = 0` or their negation.
pub(super) fn compared(terms: &Terms, atom: TermId) -> Option<TermId> {
    match terms.node(atom) {
        Node::Le(d, _) | Node::Eq(d, _) => Some(*d),
        Node::Not(x) => match terms.node(*x) {
            Node::Le(d, _) | Node::Eq(d, _) => Some(*d),
            _ => None,
        },
        _ => None,
    }
}

/// The conjuncts of a condition, `None` if it is false.
pub(super) fn conjuncts(terms: &Terms, c: TermId, out: &mut Vec<TermId>) -> Option<()> {
    match terms.node(c) {
        Node::Bool(true) => Some(()),
        Node::Bool(false) => None,
        Node::And(xs) => {
            for x in xs.clone().iter() {
                conjuncts(terms, *x, out)?;
            }
            Some(())
        }
        _ => {
            out.push(c);
            Some(())
        }
    }
}

/// The variants of a body path's condition with each `e != 0` split into
/// `e < 0` and `e > 0` (so that every atom is convex).
pub(super) fn split_ne(terms: &mut Terms, atoms: &[TermId]) -> Vec<Vec<TermId>> {
    let mut variants: Vec<Vec<TermId>> = vec![Vec::new()];
    for &a in atoms {
        let ne = match terms.node(a) {
            Node::Not(x) => match terms.node(*x) {
                Node::Eq(d, _) => Some(*d),
                _ => None,
            },
            _ => None,
        };
        match ne {
            Some(d) => {
                let zero = terms.int(0);
                let (lt, gt) = (terms.lt(d, zero), terms.gt(d, zero));
                variants = variants
                    .into_iter()
                    .flat_map(|v| {
                        let mut a = v.clone();
                        a.push(lt);
                        let mut b = v;
                        b.push(gt);
                        [a, b]
                    })
                    .collect();
            }
            None => variants.iter_mut().for_each(|v| v.push(a)),
        }
    }
    variants
}

/// The substitution of each entry symbol by its value in `state`.
pub(super) fn at(sy: &Symbols, state: &[TermId]) -> Subst {
    let mut s = Subst::new();
    for (sym, t) in sy.syms.iter().zip(state) {
        s.bind(*sym, *t);
    }
    s
}

/// The state after `j` iterations of the step's induction updates (other
/// variables as in `state`: no IV condition reads them).
pub(super) fn shifted(
    terms: &mut Terms,
    sy: &Symbols,
    step: &Step,
    state: &[TermId],
    j: TermId,
) -> Vec<TermId> {
    let s = at(sy, state);
    state
        .iter()
        .zip(&step.changes)
        .map(|(v, c)| match c {
            Change::Induction(inc) => {
                let inc = s.apply(terms, *inc);
                let by = terms.mul(j, inc);
                terms.add(*v, by)
            }
            _ => *v,
        })
        .collect()
}

/// The state after `k ≥ 1` iterations of the step from `state`.
pub(super) fn after(
    terms: &mut Terms,
    sy: &Symbols,
    step: &Step,
    state: &[TermId],
    k: TermId,
) -> Vec<TermId> {
    let km1 = terms.add_int(k, -1);
    let last = shifted(terms, sy, step, state, km1);
    let whole = shifted(terms, sy, step, state, k);
    let s = at(sy, &last);
    (0..state.len())
        .map(|i| match step.changes[i] {
            Change::Last | Change::Other => s.apply(terms, step.delta[i]),
            _ => whole[i],
        })
        .collect()
}

/// The step's condition on `state`.
pub(super) fn holds(terms: &mut Terms, sy: &Symbols, step: &Step, state: &[TermId]) -> Vec<TermId> {
    let s = at(sy, state);
    step.atoms.iter().map(|a| s.apply(terms, *a)).collect()
}

/// The step's condition at its first and at its `k`-th iteration (k ≥ 1)
/// from `state`: with IV conditions, at every iteration in between.
pub(super) fn holds_throughout(
    terms: &mut Terms,
    sy: &Symbols,
    step: &Step,
    state: &[TermId],
    k: TermId,
) -> Vec<TermId> {
    let km1 = terms.add_int(k, -1);
    let last = shifted(terms, sy, step, state, km1);
    let mut out = holds(terms, sy, step, state);
    out.extend(holds(terms, sy, step, &last));
    out
}

/// `k > 0`, as the thesis writes it.
pub(super) fn positive(terms: &mut Terms, k: Var) -> TermId {
    let (kt, zero) = (terms.var(k), terms.int(0));
    terms.gt(kt, zero)
}
