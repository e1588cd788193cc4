//! Symbolic interpretation, SyInt (`docs/compositional-se.md` §5): from a
//! leaf that passed its check, the leaves that follow it in its function.
//! Straight-line edges run on (several steps, as the report allows); a
//! branch makes one leaf per out-edge; a call is one step through the
//! callee's rc/rv symbols, with no split over the callee's paths.

use super::program::{Function, Subject, input_counter};
use super::state::{Invocation, Leaf, Stat, Val};
use crate::explore::{binary, comparison, truth_value, unary};
use crate::ir::{Cond, Expr, Instr, Place};
use crate::term::{TermId, Terms};
use std::rc::Rc;

/// Straight-line edges one step may run before it yields (a loop without
/// branches must not hold the fair queue).
const MAX_STRAIGHT: u32 = 256;

/// What one interpretation step made.
pub(crate) struct Stepped {
    pub leaves: Vec<Leaf>,
    /// A call: the invocation to add (then `rec` of its callee).
    pub invocation: Option<Invocation>,
    /// The leaf returned (then `rer` of its function).
    pub returned: bool,
}

pub(crate) struct Interpreter<'a> {
    pub subject: &'a Subject,
    pub terms: &'a mut Terms,
}

impl Interpreter<'_> {
    /// The initial leaf of function `f`: fresh entry symbols, locals
    /// unassigned, pc = true.
    pub(crate) fn entry(&mut self, f: usize) -> Leaf {
        let s = self.subject;
        let func = &s.funcs[f];
        let b = &func.body;
        let mut vals = vec![Val::Unset; b.vars.len()];
        let is_main = f == s.main;
        for (p, slot) in vals.iter_mut().enumerate().take(b.params) {
            *slot = if is_main {
                let input = &s.main_inputs[p];
                if input.array {
                    Val::Input(input.symbol)
                } else {
                    Val::Int(self.terms.var(input.symbol))
                }
            } else {
                Val::Int(self.terms.var(func.entry[p]))
            };
        }
        if let Some(v) = b.var_id(crate::ir::INPUT_STREAM) {
            vals[v as usize] = Val::Input(s.stream);
        }
        let ic = if is_main {
            self.terms.int(0)
        } else {
            let last = *func.entry.last().expect("an entry symbol for $ic");
            self.terms.var(last)
        };
        Leaf {
            stat: Stat::Unk,
            node: b.entry,
            vals: vals.into(),
            ic,
            pc: self.terms.bool(true),
            called: Rc::new([]),
            depth: 0,
        }
    }

    /// SyInt(a, f, ε) for a leaf that passed its check.
    pub(crate) fn step(&mut self, f: usize, leaf: &Leaf) -> Result<Stepped, String> {
        let func = &self.subject.funcs[f];
        let mut cur = leaf.clone();
        cur.depth += 1;
        let mut out = Stepped {
            leaves: Vec::new(),
            invocation: None,
            returned: false,
        };
        for _ in 0..MAX_STRAIGHT {
            crate::deadline::tick();
            if cur.node == func.body.exit {
                cur.stat = Stat::Fin;
                out.returned = true;
                out.leaves.push(cur);
                return Ok(out);
            }
            if self.subject.is_error(f, cur.node).is_some() {
                cur.stat = Stat::Failed;
                out.leaves.push(cur);
                return Ok(out);
            }
            let succ = &func.succ[cur.node as usize];
            let edges: Vec<&crate::ir::Edge> =
                succ.iter().map(|e| &func.body.edges[*e as usize]).collect();
            match edges.as_slice() {
                [] => {
                    return Err(format!(
                        "a vertex of `{}` without successors",
                        func.body.name
                    ));
                }
                [e] if !matches!(e.instr, Instr::Assume(_) | Instr::Assert(..)) => {
                    if let Instr::Call {
                        dst,
                        func: callee,
                        args,
                    } = &e.instr
                    {
                        let inv = self.call(f, &mut cur, *dst, callee, args)?;
                        cur.node = e.to;
                        out.invocation = Some(inv);
                        out.leaves.push(cur);
                        return Ok(out);
                    }
                    self.straight(func, &mut cur, &e.instr)?;
                    cur.node = e.to;
                }
                _ => {
                    for e in edges {
                        let c = match &e.instr {
                            Instr::Assume(c) | Instr::Assert(c, _) => self.cond(func, &cur, c)?,
                            _ => return Err("a branch with a plain edge".into()),
                        };
                        if self.terms.as_bool(c) == Some(false) {
                            continue;
                        }
                        let mut next = cur.clone();
                        next.pc = self.terms.and2(cur.pc, c);
                        next.node = e.to;
                        out.leaves.push(next);
                    }
                    return Ok(out);
                }
            }
        }
        out.leaves.push(cur);
        Ok(out)
    }

    /// An edge with one successor and no call: assignment, output, skip.
    fn straight(&mut self, func: &Function, cur: &mut Leaf, instr: &Instr) -> Result<(), String> {
        match instr {
            Instr::Assign(Place::Var(v), e) => {
                let t = self.expr(func, cur, e)?;
                if Some(*v) == input_counter(&func.body) {
                    cur.ic = t;
                } else {
                    Rc::make_mut(&mut cur.vals)[*v as usize] = Val::Int(t);
                }
                Ok(())
            }
            Instr::Output(_) | Instr::Skip => Ok(()),
            other => Err(format!(
                "an instruction the engine does not take: {other:?}"
            )),
        }
    }

    /// CALL: one continuation leaf with the callee's rv applied to its
    /// globals and pc ∧ rc(globals); the invocation ⟨f, g, ς_G, pc⟩.
    fn call(
        &mut self,
        f: usize,
        cur: &mut Leaf,
        dst: u32,
        callee: &str,
        args: &[Expr],
    ) -> Result<Invocation, String> {
        let s = self.subject;
        let g = *s
            .by_name
            .get(callee)
            .ok_or_else(|| format!("a call of `{callee}`, which is not defined"))?;
        let func = &s.funcs[f];
        let mut globals = Vec::with_capacity(args.len() + 1);
        for a in args {
            globals.push(self.expr(func, cur, a)?);
        }
        globals.push(cur.ic);
        let target = &s.funcs[g];
        let t = &mut *self.terms;
        let (rc, rv_ret, rv_ic) = (t.var(target.rc), t.var(target.rv_ret), t.var(target.rv_ic));
        let returns = t.select(rc, globals.clone());
        let one = t.int(1);
        let returns = t.eq(returns, one);
        let result = t.select(rv_ret, globals.clone());
        let ic_after = t.select(rv_ic, globals.clone());
        let inv = Invocation {
            caller: f,
            callee: g,
            args: globals,
            pc: cur.pc,
            called: cur.called.clone(),
        };
        cur.pc = t.and2(cur.pc, returns);
        cur.ic = ic_after;
        Rc::make_mut(&mut cur.vals)[dst as usize] = Val::Int(result);
        if let Err(at) = cur.called.binary_search(&g) {
            let mut called = cur.called.to_vec();
            called.insert(at, g);
            cur.called = called.into();
        }
        Ok(inv)
    }

    fn value(&mut self, func: &Function, cur: &Leaf, v: u32) -> Result<Val, String> {
        if Some(v) == input_counter(&func.body) {
            return Ok(Val::Int(cur.ic));
        }
        Ok(cur.vals[v as usize])
    }

    fn expr(&mut self, func: &Function, cur: &Leaf, e: &Expr) -> Result<TermId, String> {
        crate::deadline::tick();
        Ok(match e {
            Expr::Int(n) => self.terms.int(n.clone()),
            Expr::Var(v) => match self.value(func, cur, *v)? {
                Val::Int(t) => t,
                Val::Unset => {
                    let name = &func.body.var(*v).name;
                    return Err(format!("a read of `{name}` before any write, unchecked"));
                }
                Val::Input(_) => return Err("an input array used as a value".into()),
            },
            Expr::Unary(op, a) => {
                let x = self.expr(func, cur, a)?;
                unary(self.terms, *op, x)
            }
            Expr::Binary(op, a, b) => {
                let (x, y) = (self.expr(func, cur, a)?, self.expr(func, cur, b)?);
                binary(self.terms, *op, x, y)
            }
            Expr::Cmp(op, a, b) => {
                let (x, y) = (self.expr(func, cur, a)?, self.expr(func, cur, b)?);
                let c = comparison(self.terms, *op, x, y);
                truth_value(self.terms, c)
            }
            Expr::Index(a, i) => {
                let Expr::Var(v) = &**a else {
                    return Err("an element of an array expression".into());
                };
                let Val::Input(array) = self.value(func, cur, *v)? else {
                    return Err("an element of an array that is not an input".into());
                };
                let i = self.expr(func, cur, i)?;
                // As the interpreter reads it: 0 at a negative index.
                let t = &mut *self.terms;
                let zero = t.int(0);
                let nonneg = t.le(zero, i);
                let a = t.var(array);
                let sel = t.select(a, vec![i]);
                t.ite(nonneg, sel, zero)
            }
            other => return Err(format!("an expression the engine does not take: {other:?}")),
        })
    }

    fn cond(&mut self, func: &Function, cur: &Leaf, c: &Cond) -> Result<TermId, String> {
        let (t, positive) = match c {
            Cond::Cmp(op, a, b) => {
                let (x, y) = (self.expr(func, cur, a)?, self.expr(func, cur, b)?);
                (comparison(self.terms, *op, x, y), true)
            }
            Cond::Initialized {
                place: Place::Var(v),
                positive,
            } => {
                let set = self.value(func, cur, *v)? != Val::Unset;
                (self.terms.bool(set), *positive)
            }
            // Input arrays are never out of bounds.
            Cond::InBounds { positive, .. } => (self.terms.bool(true), *positive),
            other => return Err(format!("a condition the engine does not take: {other:?}")),
        };
        Ok(if positive { t } else { self.terms.not(t) })
    }
}
