//! Which variables the clauses keep: the cone of influence of the guards
//! (docs/horn-clauses.md §2).
//!
//! A variable that no guard reads, directly or through what is assigned
//! to a variable a guard reads, cannot change which vertices a run
//! reaches. Leaving it out of the state loses no precision: its reads
//! become unknowns (which only what is left out reads) and its writes do
//! nothing. Leaving *any* variable out is sound, as it only adds runs;
//! this analysis makes sure the ones left out do not cost a proof.
//!
//! Memory counts as one more variable: it is kept once a kept expression
//! reads through a pointer or a kept integer has its address taken, and
//! then every write through a pointer keeps what it reads. The cells of a
//! followed array (`arrays`) count as one more variable, apart from the
//! array's length: they are kept once a kept expression reads a cell, and
//! then a write into them, or a literal assigned to the array, keeps what
//! it reads.
//!
//! When `input` is an unknown to the clauses, a comparison with a fresh
//! input as a term of a sum (`a[3] == input`, `x + input <= y`) can go
//! either way whatever the rest is: it keeps nothing (`free_inputs`).

use crate::ir::{self, BinOp, Body, Cond, Expr, Instr, Place, VarId, VarKind};
use crate::syntax::ast::UnOp;

/// What the clauses keep, by variable.
pub(super) struct Kept {
    /// The variable's value (for an array: its length).
    pub(super) vars: Vec<bool>,
    /// A followed array's cells.
    pub(super) cells: Vec<bool>,
}

/// What the clauses over `edges` keep, given which arrays have their
/// cells followed (`arrays::followed`) and whether inputs are unknowns.
pub(super) fn influencing(
    body: &Body,
    edges: &[&ir::Edge],
    followed_arrays: &[Option<usize>],
    inputs_unknown: bool,
    roots: &[VarId],
) -> Kept {
    let free = if inputs_unknown {
        free_inputs(body, edges)
    } else {
        vec![false; body.vars.len()]
    };
    let mut cone = Cone {
        kept: vec![false; body.vars.len()],
        cells: vec![false; body.vars.len()],
        followed_arrays,
        free,
        memory: false,
        changed: false,
    };
    for &v in roots {
        cone.keep(v);
    }
    let mut taken = vec![false; body.vars.len()];
    for e in edges {
        e.instr.walk_exprs(&mut |x| {
            if let Expr::AddrOf(v) = x {
                taken[*v as usize] = true;
            }
        });
    }
    loop {
        cone.changed = false;
        for e in edges {
            cone.step(&e.instr);
        }
        if !cone.memory && cone.kept.iter().zip(&taken).any(|(k, t)| *k && *t) {
            cone.memory = true;
            cone.changed = true;
        }
        if !cone.changed {
            return Kept {
                vars: cone.kept,
                cells: cone.cells,
            };
        }
    }
}

struct Cone<'a> {
    kept: Vec<bool>,
    cells: Vec<bool>,
    followed_arrays: &'a [Option<usize>],
    /// The temporaries `free_inputs` finds.
    free: Vec<bool>,
    /// Whether what pointers reach is kept.
    memory: bool,
    changed: bool,
}

impl Cone<'_> {
    fn step(&mut self, instr: &Instr) {
        match instr {
            Instr::Assume(c) | Instr::Assert(c, _) => self.keep_cond(c),
            Instr::Assign(place, x) => {
                if self.writes_kept(place) {
                    place.walk_exprs(&mut |e| self.keep_expr(e));
                    // A literal's elements are cells, state only for a
                    // followed array's kept cells; its length always is.
                    let cells = matches!(x, Expr::Array(_) | Expr::Record(_));
                    if !cells || self.keeps_cells_of(place) {
                        x.walk(&mut |e| self.keep_expr(e));
                    }
                }
            }
            Instr::Alloc(p, x) => {
                if self.kept[*p as usize] {
                    x.walk(&mut |e| self.keep_expr(e));
                }
            }
            // What the callee does with its arguments and memory is not
            // followed here: all of it is kept.
            Instr::Call { args, .. } => {
                for a in args {
                    a.walk(&mut |e| self.keep_expr(e));
                }
                self.keep_memory();
            }
            Instr::Output(_) | Instr::Enter(_) | Instr::Skip => {}
        }
    }

    fn keep_cond(&mut self, c: &Cond) {
        if has_free_term(c, &|v| self.free[v as usize]) {
            return;
        }
        if let Cond::Initialized { place, .. } = c
            && let Some(v) = place.root_var()
        {
            self.keep(v);
        }
        c.walk_exprs(&mut |e| self.keep_expr(e));
    }

    /// Whether an assignment into `place` may change what is kept: its
    /// variable is, or it writes through a pointer and memory is, or into
    /// a kept followed array. Other cells of local arrays and records are
    /// never state (an array's length, which may be, does not change with
    /// its cells).
    fn writes_kept(&self, place: &Place) -> bool {
        match place {
            Place::Var(v) => self.kept[*v as usize],
            Place::Deref(_) => self.memory,
            Place::Index(..) => self.keeps_cells_of(place),
            Place::Field(..) => false,
        }
    }

    /// Whether `place` is a followed array whose cells are kept, or one of
    /// those cells.
    fn keeps_cells_of(&self, place: &Place) -> bool {
        let array = match place {
            Place::Index(base, _) => &**base,
            place => place,
        };
        matches!(array, Place::Var(a) if self.cells[*a as usize])
    }

    /// Keeps the variable `e` reads (or memory, if it reads through a
    /// pointer), for one node of an expression's walk.
    fn keep_expr(&mut self, e: &Expr) {
        match e {
            Expr::Var(v) | Expr::AddrOf(v) => self.keep(*v),
            Expr::Index(a, _) => {
                if let Expr::Var(a) = **a
                    && self.followed_arrays[a as usize].is_some()
                    && !self.cells[a as usize]
                {
                    self.cells[a as usize] = true;
                    self.changed = true;
                }
            }
            Expr::Load(_) => self.keep_memory(),
            _ => {}
        }
    }

    fn keep(&mut self, v: VarId) {
        if !self.kept[v as usize] {
            self.kept[v as usize] = true;
            self.changed = true;
        }
    }

    fn keep_memory(&mut self) {
        if !self.memory {
            self.memory = true;
            self.changed = true;
        }
    }
}

/// The temporaries that hold a fresh input (`$t := $in[$ic]`) and are only
/// compared, once per comparison and all at one branch point (a condition
/// and its negation), as a term of a sum. Whatever values the rest of such
/// a comparison takes, some input makes it hold and another makes it fail.
fn free_inputs(body: &Body, edges: &[&ir::Edge]) -> Vec<bool> {
    let mut free: Vec<bool> = (0..body.vars.len() as VarId)
        .map(|v| body.var(v).kind == VarKind::Temp && body.var(v).ty.is_int())
        .collect();
    let candidates = free.clone();
    let mut branch: Vec<Option<&Cond>> = vec![None; free.len()];
    let spoil_all = |e: &Expr, free: &mut Vec<bool>| {
        e.walk(&mut |x| {
            if let Expr::Var(v) | Expr::AddrOf(v) = x {
                free[*v as usize] = false;
            }
        })
    };
    for e in edges {
        match &e.instr {
            Instr::Assign(Place::Var(_), Expr::Index(a, _)) if is_input_stream(body, a) => {}
            Instr::Assign(Place::Var(t), x) => {
                free[*t as usize] = false;
                spoil_all(x, &mut free);
            }
            Instr::Assume(c) | Instr::Assert(c, _) => {
                let mut used = Vec::new();
                c.walk_exprs(&mut |x| {
                    if let Expr::Var(v) = x
                        && candidates[*v as usize]
                    {
                        used.push(*v);
                    }
                });
                for &t in &used {
                    let once = used.iter().filter(|u| **u == t).count() == 1;
                    let same_branch = match branch[t as usize] {
                        None => true,
                        Some(first) => first == c || *first == c.negate(),
                    };
                    branch[t as usize].get_or_insert(c);
                    if !(once && same_branch && has_free_term(c, &|v| v == t)) {
                        free[t as usize] = false;
                    }
                }
            }
            other => other.walk_exprs(&mut |x| spoil_all(x, &mut free)),
        }
    }
    free
}

fn is_input_stream(body: &Body, e: &Expr) -> bool {
    matches!(e, Expr::Var(v) if body.var(*v).name == ir::INPUT_STREAM)
}

/// Whether one side of the comparison `c` has a variable that `is_free`
/// says as a term of a sum.
fn has_free_term(c: &Cond, is_free: &impl Fn(VarId) -> bool) -> bool {
    matches!(c, Cond::Cmp(_, a, b) if is_term(a, is_free) || is_term(b, is_free))
}

/// Whether `e` adds or subtracts a variable that `is_free` says as one of
/// its terms.
fn is_term(e: &Expr, is_free: &impl Fn(VarId) -> bool) -> bool {
    match e {
        Expr::Var(t) => is_free(*t),
        Expr::Binary(BinOp::Add | BinOp::Sub, a, b) => is_term(a, is_free) || is_term(b, is_free),
        Expr::Unary(UnOp::Neg, a) => is_term(a, is_free),
        _ => false,
    }
}
