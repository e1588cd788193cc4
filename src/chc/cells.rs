//! The pointers whose cell the clauses follow (docs/horn-clauses.md §2).
//!
//! A local pointer to an integer `p` is *followed* when every value it
//! ever holds is a fresh cell (`alloc e`) or the address of an integer
//! variable (`&x`), and it is only ever dereferenced (`*p`, `*p = e`) or
//! compared with `null`: never copied, stored, passed, returned, nor its
//! own address taken. Then no other pointer can reach a cell it
//! allocated, and what `*p` reads is known: that cell's value, or `x`.
//! The state gets two slots for it: `cell(p)`, the value of its own cell,
//! and `tag(p)`, which of its targets it holds (0: its cell; k: the k-th
//! variable whose address it took). Writes through other pointers still
//! change every integer whose address is taken, as before, and never
//! `cell(p)`.
//!
//! Lowering puts `alloc e` into a temporary and copies that into `p`; a
//! temporary whose one definition is such an `alloc` and whose one use is
//! such a copy, right after it, is followed too, and the copy hands its
//! slots on.

use crate::ir::{self, Body, CmpOp, Cond, Expr, Instr, NodeId, Place, VarId, VarKind};
use crate::types::Type;
use std::collections::HashMap;

/// The followed pointers of the clauses' edges.
#[derive(Clone, Debug, Default)]
pub(super) struct Followed {
    /// For each variable: `None`, or the variables whose address it may
    /// hold (tag k + 1 is `targets[k]`).
    pub(super) targets: Vec<Option<Vec<VarId>>>,
}

impl Followed {
    /// The followed pointers among those `kept` (`slice`).
    pub(super) fn of(body: &Body, edges: &[&ir::Edge], kept: &[bool]) -> Followed {
        let n = body.vars.len();
        let mut targets: Vec<Option<Vec<VarId>>> = (0..n as VarId)
            .map(|v| (kept[v as usize] && is_candidate(body, v)).then(Vec::new))
            .collect();
        let mut spoiled = vec![false; n];
        let handed_on = handed_on_temps(edges, &targets);
        for e in edges {
            record(&e.instr, &handed_on, &mut targets, &mut spoiled);
        }
        for (v, s) in spoiled.iter().enumerate() {
            if *s {
                targets[v] = None;
            }
        }
        // A copy from a temporary that is not followed hands on nothing.
        for &(temp, into) in &handed_on {
            if targets[temp as usize].is_none() {
                targets[into as usize] = None;
            }
        }
        Followed { targets }
    }

    pub(super) fn is_followed(&self, v: VarId) -> bool {
        self.targets[v as usize].is_some()
    }
}

/// A local (or temporary) pointer to an integer.
fn is_candidate(body: &Body, v: VarId) -> bool {
    let info = body.var(v);
    matches!(info.kind, VarKind::Local | VarKind::Temp)
        && matches!(&info.ty, Type::Ptr(inner) if inner.is_int())
}

/// The copies `p := t` of a temporary `t` defined by one `alloc` on the
/// edge just before, into the node with no other way in, where `t` is
/// used nowhere else: `(t, p)`. One pass counts, per variable, the
/// instructions that define and read it and, per vertex, the edges in.
fn handed_on_temps(edges: &[&ir::Edge], candidates: &[Option<Vec<VarId>>]) -> Vec<(VarId, VarId)> {
    let n = candidates.len();
    let (mut defs, mut uses) = (vec![0u32; n], vec![0u32; n]);
    let mut into: HashMap<NodeId, (u32, usize)> = HashMap::new();
    for (k, e) in edges.iter().enumerate() {
        if let Some(v) = defined(&e.instr) {
            defs[v as usize] += 1;
        }
        for v in vars_read(&e.instr) {
            uses[v as usize] += 1;
        }
        let entry = into.entry(e.to).or_insert((0, k));
        entry.0 += 1;
    }
    let followed = |v: VarId| candidates[v as usize].is_some();
    let only_edge_into = |node: NodeId| match into.get(&node) {
        Some(&(1, k)) => Some(edges[k]),
        _ => None,
    };
    let mut out = Vec::new();
    for copy in edges {
        let Instr::Assign(Place::Var(p), Expr::Var(t)) = &copy.instr else {
            continue;
        };
        let right_after_alloc = only_edge_into(copy.from)
            .is_some_and(|e| matches!(&e.instr, Instr::Alloc(a, _) if a == t));
        let once = defs[*t as usize] == 1 && uses[*t as usize] == 1;
        if followed(*p) && followed(*t) && right_after_alloc && once {
            out.push((*t, *p));
        }
    }
    out
}

/// The variable an instruction defines, if any.
fn defined(i: &Instr) -> Option<VarId> {
    match i {
        Instr::Assign(Place::Var(w), _) | Instr::Alloc(w, _) => Some(*w),
        Instr::Call { dst, .. } => Some(*dst),
        _ => None,
    }
}

/// The variables an instruction reads anywhere, each once.
fn vars_read(i: &Instr) -> Vec<VarId> {
    let mut out = Vec::new();
    let mut see = |e: &Expr| {
        e.walk(&mut |x| {
            if let Expr::Var(w) | Expr::AddrOf(w) = x {
                out.push(*w);
            }
        })
    };
    match i {
        Instr::Assign(place, e) => {
            place.walk_exprs(&mut see);
            see(e);
        }
        Instr::Alloc(_, e) | Instr::Output(e) => see(e),
        Instr::Call { args, .. } => args.iter().for_each(&mut see),
        Instr::Assume(c) | Instr::Assert(c, _) => cond_exprs(c, &mut see),
        Instr::Enter(_) | Instr::Skip => {}
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn cond_exprs(c: &Cond, f: &mut impl FnMut(&Expr)) {
    match c {
        Cond::Cmp(_, a, b) => {
            f(a);
            f(b);
        }
        Cond::Initialized { place, .. } => place.walk_exprs(f),
        Cond::InBounds { array, index, .. } => {
            f(array);
            f(index);
        }
    }
}

/// What one instruction tells about the candidates: the targets of `&x`
/// assignments, and which are used in a way that is not followed.
fn record(
    i: &Instr,
    handed_on: &[(VarId, VarId)],
    targets: &mut [Option<Vec<VarId>>],
    spoiled: &mut [bool],
) {
    let mut spoil = |e: &Expr| spoil_values(e, spoiled);
    match i {
        Instr::Alloc(_, x) => spoil(x),
        Instr::Assign(Place::Var(p), Expr::AddrOf(x)) if targets[*p as usize].is_some() => {
            let list = targets[*p as usize].as_mut().expect("a candidate");
            if !list.contains(x) {
                list.push(*x);
            }
        }
        Instr::Assign(Place::Var(p), Expr::Var(t)) if handed_on.contains(&(*t, *p)) => {}
        Instr::Assign(Place::Var(p), x) => {
            spoiled[*p as usize] = true;
            spoil_values(x, spoiled);
        }
        Instr::Assign(Place::Deref(Expr::Var(_)), x) => spoil(x),
        Instr::Assign(place, x) => {
            place.walk_exprs(&mut spoil);
            spoil(x);
        }
        Instr::Call { dst, args, .. } => {
            args.iter().for_each(spoil);
            spoiled[*dst as usize] = true;
        }
        Instr::Output(x) => spoil(x),
        Instr::Assume(Cond::Cmp(op, a, b)) | Instr::Assert(Cond::Cmp(op, a, b), _)
            if is_null_test(*op, a, b) => {}
        Instr::Assume(c) | Instr::Assert(c, _) => match c {
            Cond::Initialized {
                place: Place::Var(_),
                ..
            } => {}
            Cond::Initialized {
                place: Place::Deref(Expr::Var(_)),
                ..
            } => {}
            c => cond_exprs(c, &mut spoil),
        },
        Instr::Enter(_) | Instr::Skip => {}
    }
}

/// `p == null` or `p != null`: neither copies `p`.
fn is_null_test(op: CmpOp, a: &Expr, b: &Expr) -> bool {
    matches!(op, CmpOp::Eq | CmpOp::Ne)
        && matches!(
            (a, b),
            (Expr::Var(_), Expr::Null) | (Expr::Null, Expr::Var(_))
        )
}

/// Marks every variable `e` uses as a value, except a pointer read
/// through (`*p`): those are not followed.
fn spoil_values(e: &Expr, spoiled: &mut [bool]) {
    match e {
        Expr::Load(p) if matches!(**p, Expr::Var(_)) => {}
        Expr::Var(v) | Expr::AddrOf(v) => spoiled[*v as usize] = true,
        Expr::Index(a, i) => {
            spoil_values(a, spoiled);
            spoil_values(i, spoiled);
        }
        Expr::Unary(_, a) | Expr::Load(a) | Expr::Field(a, _) => spoil_values(a, spoiled),
        Expr::Binary(_, a, b) | Expr::Cmp(_, a, b) => {
            spoil_values(a, spoiled);
            spoil_values(b, spoiled);
        }
        Expr::Array(xs) => xs.iter().for_each(|x| spoil_values(x, spoiled)),
        Expr::Record(fs) => fs.iter().for_each(|(_, x)| spoil_values(x, spoiled)),
        Expr::Int(_) | Expr::Null => {}
    }
}
