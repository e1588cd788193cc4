//! Symbolic interpretation, SyInt (`docs/compositional-se.md` §5): from a
//! leaf that passed its check, the leaves that follow it in its function.
//! Straight-line edges run on (several steps, as the report allows); a
//! branch makes one leaf per out-edge; a call is one step through the
//! callee's rc/rv symbols, with no split over the callee's paths.

use super::program::{Function, Subject, input_counter};
use super::state::{Invocation, Leaf, Stat, Val};
use crate::ir::{Cond, Expr, Instr, Place};
use crate::symbolic;
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

    fn expr(&mut self, func: &Function, cur: &Leaf, e: &Expr) -> Result<TermId, String> {
        let terms = &mut *self.terms;
        symbolic::int(&mut LeafReads { terms, func, cur }, e)
    }

    fn cond(&mut self, func: &Function, cur: &Leaf, c: &Cond) -> Result<TermId, String> {
        let (t, positive) = match c {
            Cond::Cmp(op, a, b) => {
                let terms = &mut *self.terms;
                let mut reads = LeafReads { terms, func, cur };
                (symbolic::compare(&mut reads, *op, a, b)?, true)
            }
            Cond::Initialized {
                place: Place::Var(v),
                positive,
            } => {
                let set = value(func, cur, *v) != Val::Unset;
                (self.terms.bool(set), *positive)
            }
            // Input arrays are never out of bounds.
            Cond::InBounds { positive, .. } => (self.terms.bool(true), *positive),
            other => return Err(format!("a condition the engine does not take: {other:?}")),
        };
        Ok(if positive { t } else { self.terms.not(t) })
    }
}

/// A variable's value on a leaf: the input counter is the leaf's `ic`.
fn value(func: &Function, cur: &Leaf, v: u32) -> Val {
    if Some(v) == input_counter(&func.body) {
        return Val::Int(cur.ic);
    }
    cur.vals[v as usize]
}

/// A leaf's values as the translation reads them: integers, and input
/// arrays read at an index.
struct LeafReads<'a> {
    terms: &'a mut Terms,
    func: &'a Function,
    cur: &'a Leaf,
}

impl symbolic::Reads for LeafReads<'_> {
    type Value = Val;
    type Error = String;

    fn terms(&mut self) -> &mut Terms {
        self.terms
    }

    fn int_value(&mut self, t: TermId) -> Val {
        Val::Int(t)
    }

    fn to_int(&mut self, v: Val) -> Result<TermId, String> {
        match v {
            Val::Int(t) => Ok(t),
            Val::Unset => Err("a read before any write, unchecked".into()),
            Val::Input(_) => Err("an input array used as a value".into()),
        }
    }

    fn var(&mut self, v: u32) -> Result<Val, String> {
        match value(self.func, self.cur, v) {
            Val::Unset => {
                let name = &self.func.body.var(v).name;
                Err(format!("a read of `{name}` before any write, unchecked"))
            }
            val => Ok(val),
        }
    }

    fn element(&mut self, array: Val, i: TermId) -> Result<Val, String> {
        let Val::Input(array) = array else {
            return Err("an element of an array that is not an input".into());
        };
        let a = self.terms.var(array);
        Ok(Val::Int(symbolic::input_element(self.terms, a, i)))
    }

    fn other(&mut self, e: &Expr) -> Result<Val, String> {
        Err(format!("an expression the engine does not take: {e:?}"))
    }
}
