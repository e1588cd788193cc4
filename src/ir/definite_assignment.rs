//! Definite assignment: which variable reads may see a never-assigned
//! variable, and so are `uninitialized` targets.
//!
//! A forward must-analysis over the structured AST. The set of definitely
//! assigned variables grows with assignments and with *reads*: a read of an
//! unassigned variable stops the run, so after a successful read the
//! variable is known to hold a value and later reads are not targets. At an
//! `if` the branches meet by intersection; a `while` body may run zero
//! times, so after the loop only what its condition established holds. The
//! right operand of `&&`/`||` may not run, so its effects are dropped.

use crate::syntax::ast::*;
use std::collections::{BTreeSet, HashSet};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct DefiniteAssignment {
    /// Variable reads (expression ids) that may read a never-assigned variable.
    pub uninit_reads: BTreeSet<ExprId>,
    /// Whether `&x` is taken somewhere where x may be unassigned, so that a
    /// dereference may read a never-assigned cell.
    pub unassigned_address_taken: bool,
}

pub fn definite_assignment(f: &Function) -> DefiniteAssignment {
    let mut a = Analysis {
        out: DefiniteAssignment::default(),
    };
    let mut s: HashSet<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
    for st in &f.body {
        a.stmt(st, &mut s);
    }
    a.expr(&f.ret, &mut s);
    a.out
}

struct Analysis {
    out: DefiniteAssignment,
}

impl Analysis {
    fn stmt<'a>(&mut self, st: &'a Stmt, s: &mut HashSet<&'a str>) {
        match &st.kind {
            StmtKind::Assign { lhs, rhs } => {
                self.expr(rhs, s);
                self.place(lhs, s);
            }
            StmtKind::Output(e) | StmtKind::Assert(e) | StmtKind::Assume(e) => self.expr(e, s),
            StmtKind::If { cond, then, els } => {
                self.expr(cond, s);
                let mut t = s.clone();
                self.stmt(then, &mut t);
                let mut e = s.clone();
                if let Some(els) = els {
                    self.stmt(els, &mut e);
                }
                *s = t.intersection(&e).copied().collect();
            }
            StmtKind::While { cond, body } => {
                self.expr(cond, s);
                let mut b = s.clone();
                self.stmt(body, &mut b);
            }
            StmtKind::Block(stmts) => {
                for st in stmts {
                    self.stmt(st, s);
                }
            }
        }
    }

    /// The left side of an assignment: a whole variable is written; the base
    /// of `x[i] = …` / `x.f = …` is read first.
    fn place<'a>(&mut self, e: &'a Expr, s: &mut HashSet<&'a str>) {
        match &e.kind {
            ExprKind::Var(x) => {
                s.insert(x);
            }
            ExprKind::Index(base, i) => {
                self.place_base(base, s);
                self.expr(i, s);
            }
            ExprKind::Field(base, _) => self.place_base(base, s),
            _ => self.expr(e, s),
        }
    }

    fn place_base<'a>(&mut self, base: &'a Expr, s: &mut HashSet<&'a str>) {
        match &base.kind {
            ExprKind::Index(..) | ExprKind::Field(..) => self.place(base, s),
            _ => self.expr(base, s),
        }
    }

    fn expr<'a>(&mut self, e: &'a Expr, s: &mut HashSet<&'a str>) {
        match &e.kind {
            ExprKind::Var(x) => {
                if s.insert(x) {
                    self.out.uninit_reads.insert(e.id);
                }
            }
            ExprKind::AddrOf(x) => {
                if !s.contains(x.name.as_str()) {
                    self.out.unassigned_address_taken = true;
                }
            }
            ExprKind::Binary(BinOp::And | BinOp::Or, a, b) => {
                self.expr(a, s);
                let mut t = s.clone();
                self.expr(b, &mut t);
            }
            _ => {
                for c in e.children() {
                    self.expr(c, s);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse;

    fn reads(src: &str) -> Vec<String> {
        let (p, d) = parse(src);
        assert!(d.iter().all(|d| !d.is_error()), "{d:?}");
        let f = p.function("main").unwrap();
        let da = definite_assignment(f);
        let mut out = vec![];
        f.walk_exprs(&mut |e| {
            if let ExprKind::Var(x) = &e.kind
                && da.uninit_reads.contains(&e.id)
            {
                out.push(x.clone());
            }
        });
        out
    }

    #[test]
    fn second_read_is_not_a_target() {
        assert_eq!(
            reads("main() { var a, r; r = a + a; return r; }"),
            vec!["a"]
        );
    }

    #[test]
    fn branches_meet_by_intersection_and_loops_may_not_run() {
        assert_eq!(
            reads(
                "main(n) { var x, y; if (n) { x = 1; y = 1; } else { x = 2; } y = y + x; return y; }"
            ),
            vec!["y"]
        );
        assert_eq!(
            reads("main(n) { var x; while (n) { x = 1; n = n - 1; } return x; }"),
            vec!["x"]
        );
    }

    #[test]
    fn short_circuit_right_operand_does_not_count() {
        assert_eq!(
            reads("main(n) { var x, r; r = n && x; r = x; return r; }"),
            vec!["x", "x"]
        );
    }

    #[test]
    fn params_are_assigned_and_address_of_is_tracked() {
        let (p, _) = parse("main(n) { var x, p; p = &x; return n; }");
        assert!(definite_assignment(p.function("main").unwrap()).unassigned_address_taken);
    }
}
