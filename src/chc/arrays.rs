//! The local arrays whose cells the clauses follow (docs/horn-clauses.md §2).
//!
//! Assigning an array copies a reference (docs/microc.md "Memory model"),
//! so in general a write into `b[0]` may change `a[0]`. A local array of
//! integers is *followed* when nothing else can reach its cells: every
//! value it is ever assigned is a literal (new cells), and it is only ever
//! indexed (`a[i]`, `a[i] = e`), bounds-checked, or asked whether it holds
//! a value; never copied, passed, returned, stored, output, compared, nor
//! its address taken. Its cells are then state, one slot per index below
//! the longest literal it is assigned (no array it holds is longer).

use crate::ir::{self, Body, Cond, Expr, Instr, Place, VarId, VarKind};
use crate::types::Type;

/// For each variable: how many cells of it the clauses follow (the
/// longest literal it is assigned), or `None` when it is not followed.
pub(super) fn followed(body: &Body, edges: &[&ir::Edge]) -> Vec<Option<usize>> {
    let n = body.vars.len();
    let mut width: Vec<Option<usize>> = (0..n as VarId)
        .map(|v| is_candidate(body, v).then_some(0))
        .collect();
    let mut spoiled = vec![false; n];
    for e in edges {
        record(&e.instr, &mut width, &mut spoiled);
    }
    for (w, s) in width.iter_mut().zip(&spoiled) {
        if *s {
            *w = None;
        }
    }
    width
}

/// A local (or temporary) array of integers, not one of `main`'s inputs.
fn is_candidate(body: &Body, v: VarId) -> bool {
    let info = body.var(v);
    matches!(info.kind, VarKind::Local | VarKind::Temp)
        && !info.is_input()
        && matches!(&info.ty, Type::Array(inner) if inner.is_int())
}

/// What one instruction tells about the candidates: the literals they are
/// assigned, and which are used in a way that is not followed.
fn record(i: &Instr, width: &mut [Option<usize>], spoiled: &mut [bool]) {
    match i {
        Instr::Assign(Place::Var(a), Expr::Array(xs)) => {
            if let Some(w) = &mut width[*a as usize] {
                *w = (*w).max(xs.len());
            }
            xs.iter().for_each(|x| uses(x, spoiled));
        }
        Instr::Assign(Place::Var(a), x) => {
            spoiled[*a as usize] = true;
            uses(x, spoiled);
        }
        Instr::Assign(Place::Index(base, i), x) if matches!(**base, Place::Var(_)) => {
            uses(i, spoiled);
            uses(x, spoiled);
        }
        Instr::Assign(place, x) => {
            place_uses(place, spoiled);
            uses(x, spoiled);
        }
        Instr::Alloc(a, x) => {
            spoiled[*a as usize] = true;
            uses(x, spoiled);
        }
        Instr::Call { dst, args, .. } => {
            spoiled[*dst as usize] = true;
            args.iter().for_each(|x| uses(x, spoiled));
        }
        Instr::Output(x) => uses(x, spoiled),
        Instr::Assume(c) | Instr::Assert(c, _) => cond_uses(c, spoiled),
        Instr::Enter(_) | Instr::Skip => {}
    }
}

fn cond_uses(c: &Cond, spoiled: &mut [bool]) {
    match c {
        Cond::Cmp(_, a, b) => {
            uses(a, spoiled);
            uses(b, spoiled);
        }
        Cond::Initialized { place, .. } => place_uses(place, spoiled),
        Cond::InBounds { array, index, .. } => {
            if !matches!(array, Expr::Var(_)) {
                uses(array, spoiled);
            }
            uses(index, spoiled);
        }
    }
}

/// A place read or written: indexing a variable directly is followed.
fn place_uses(place: &Place, spoiled: &mut [bool]) {
    match place {
        Place::Var(_) => {}
        Place::Deref(e) => uses(e, spoiled),
        Place::Index(base, i) => {
            place_uses(base, spoiled);
            uses(i, spoiled);
        }
        Place::Field(base, _) => place_uses(base, spoiled),
    }
}

/// Marks every variable `e` uses other than by indexing it directly.
fn uses(e: &Expr, spoiled: &mut [bool]) {
    as_values(e, &mut |v| spoiled[v as usize] = true);
}

/// Calls `f` with every variable an expression uses as a value: all but
/// an array read at an index (`a[i]` reads `a`'s element, it does not pass
/// `a` on).
pub(super) fn as_values(e: &Expr, f: &mut impl FnMut(VarId)) {
    match e {
        Expr::Var(v) | Expr::AddrOf(v) => f(*v),
        Expr::Index(a, i) => {
            if !matches!(**a, Expr::Var(_)) {
                as_values(a, f);
            }
            as_values(i, f);
        }
        Expr::Unary(_, a) | Expr::Load(a) | Expr::Field(a, _) => as_values(a, f),
        Expr::Binary(_, a, b) | Expr::Cmp(_, a, b) => {
            as_values(a, f);
            as_values(b, f);
        }
        Expr::Array(xs) => xs.iter().for_each(|x| as_values(x, f)),
        Expr::Record(fs) => fs.iter().for_each(|(_, x)| as_values(x, f)),
        Expr::Int(_) | Expr::Null => {}
    }
}
