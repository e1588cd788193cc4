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
//! then every write through a pointer keeps what it reads.

use crate::ir::{self, Body, Cond, Expr, Instr, Place, VarId};

/// For each variable, whether the clauses over `edges` keep it.
pub(super) fn influencing(body: &Body, edges: &[&ir::Edge]) -> Vec<bool> {
    let mut cone = Cone {
        kept: vec![false; body.vars.len()],
        memory: false,
        changed: false,
    };
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
            return cone.kept;
        }
    }
}

struct Cone {
    kept: Vec<bool>,
    /// Whether what pointers reach is kept.
    memory: bool,
    changed: bool,
}

impl Cone {
    fn step(&mut self, instr: &Instr) {
        match instr {
            Instr::Assume(c) | Instr::Assert(c, _) => self.keep_cond(c),
            Instr::Assign(place, x) => {
                if self.writes_kept(place) {
                    place.walk_exprs(&mut |e| self.keep_expr(e));
                    // A literal's elements are cells, never state; only
                    // its length is.
                    if !matches!(x, Expr::Array(_) | Expr::Record(_)) {
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
        if let Cond::Initialized { place, .. } = c
            && let Some(v) = place.root_var()
        {
            self.keep(v);
        }
        c.walk_exprs(&mut |e| self.keep_expr(e));
    }

    /// Whether an assignment into `place` may change what is kept: its
    /// variable is, or it writes through a pointer and memory is. The
    /// cells of local arrays and records are never state (an array's
    /// length, which may be, does not change with its cells).
    fn writes_kept(&self, place: &Place) -> bool {
        match place {
            Place::Var(v) => self.kept[*v as usize],
            Place::Deref(_) => self.memory,
            Place::Index(..) | Place::Field(..) => false,
        }
    }

    /// Keeps the variable `e` reads (or memory, if it reads through a
    /// pointer), for one node of an expression's walk.
    fn keep_expr(&mut self, e: &Expr) {
        match e {
            Expr::Var(v) | Expr::AddrOf(v) => self.keep(*v),
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
