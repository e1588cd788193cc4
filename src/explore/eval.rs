//! Evaluation of the IR's pure expressions, conditions and places on a
//! symbolic state (docs/thesis-executor.md, "Evaluation").
//!
//! The IR has already made every check explicit (a check vertex before
//! each division, index, dereference and read that may fail), so
//! evaluation itself never fails. It may stop, though: a symbolic index
//! into a cell array in `--index fork` mode forks the state ([`Halt::Fork`]),
//! and a solver `unknown` while choosing the feasible cells leaves the path
//! undecided ([`Halt::Undecided`]).

use super::IndexMode;
use super::exec::Executor;
use super::state::{CellId, InputArray, State, Value};
use crate::ir::{BinOp, CmpOp, Cond, Expr, Place, VarId};
use crate::smt::Answer;
use crate::syntax::ast::UnOp;
use crate::term::{TermId, Terms};
use std::sync::Arc;

/// Why evaluating an edge stopped before its end.
#[derive(Clone, Debug)]
pub(crate) enum Halt {
    /// Fork on `term == j` for each feasible cell index `j`.
    Fork(TermId, Vec<usize>),
    /// The solver could not say which cells an index may select.
    Undecided(String),
}

type Eval<T> = Result<T, Halt>;

impl Executor<'_> {
    pub(crate) fn eval(&mut self, st: &mut State, e: &Expr) -> Eval<Value> {
        crate::deadline::tick();
        Ok(match e {
            Expr::Int(n) => Value::Int(self.terms.int(n.clone())),
            Expr::Null => Value::Null,
            Expr::Var(v) => st.read(st.cell_of(*v)).clone(),
            Expr::Unary(op, a) => {
                let x = self.int(st, a)?;
                Value::Int(unary(&mut self.terms, *op, x))
            }
            Expr::Binary(op, a, b) => {
                let (x, y) = (self.int(st, a)?, self.int(st, b)?);
                Value::Int(binary(&mut self.terms, *op, x, y))
            }
            Expr::Cmp(op, a, b) => {
                let c = self.compare(st, *op, a, b)?;
                Value::Int(self.truth_value(c))
            }
            Expr::Load(p) => {
                let p = self.eval(st, p)?;
                self.load(st, &p)
            }
            Expr::Index(a, i) => {
                let a = self.eval(st, a)?;
                let i = self.int(st, i)?;
                self.element(st, &a, i)?
            }
            Expr::Field(r, f) => {
                let r = self.eval(st, r)?;
                self.field(st, &r, f)
            }
            Expr::AddrOf(v) => Value::Ptr(st.cell_of(*v)),
            Expr::Array(xs) => {
                let mut cells = Vec::with_capacity(xs.len());
                for x in xs {
                    let v = self.eval(st, x)?;
                    cells.push(st.new_cell(v));
                }
                Value::Array(cells.into())
            }
            Expr::Record(fs) => {
                let mut cells = Vec::with_capacity(fs.len());
                for (name, x) in fs {
                    let v = self.eval(st, x)?;
                    cells.push((name.clone(), st.new_cell(v)));
                }
                Value::Record(cells.into())
            }
        })
    }

    /// An expression's value as an integer term.
    pub(crate) fn int(&mut self, st: &mut State, e: &Expr) -> Eval<TermId> {
        let v = self.eval(st, e)?;
        Ok(v.int(&mut self.terms))
    }

    /// `1` if `c` holds, else `0`.
    fn truth_value(&mut self, c: TermId) -> TermId {
        truth_value(&mut self.terms, c)
    }

    /// A condition of the IR as a Boolean term.
    pub(crate) fn cond(&mut self, st: &mut State, c: &Cond) -> Eval<TermId> {
        let (t, positive) = match c {
            Cond::Cmp(op, a, b) => (self.compare(st, *op, a, b)?, true),
            Cond::Initialized { place, positive } => {
                let v = self.read_place(st, place)?;
                (self.initialized(&v), *positive)
            }
            Cond::InBounds {
                array,
                index,
                positive,
            } => {
                let a = self.eval(st, array)?;
                let i = self.int(st, index)?;
                (self.in_bounds(&a, i), *positive)
            }
        };
        Ok(if positive { t } else { self.terms.not(t) })
    }

    fn compare(&mut self, st: &mut State, op: CmpOp, a: &Expr, b: &Expr) -> Eval<TermId> {
        let (va, vb) = (self.eval(st, a)?, self.eval(st, b)?);
        if is_pointer(&va) || is_pointer(&vb) {
            let eq = self.same_pointer(&va, &vb);
            return Ok(match op {
                CmpOp::Ne => self.terms.not(eq),
                _ => eq,
            });
        }
        let (x, y) = (va.int(&mut self.terms), vb.int(&mut self.terms));
        Ok(comparison(&mut self.terms, op, x, y))
    }

    /// Whether two pointer values (null or cells, possibly `ite`) are equal.
    fn same_pointer(&mut self, a: &Value, b: &Value) -> TermId {
        let (la, lb) = (a.leaves(&mut self.terms), b.leaves(&mut self.terms));
        let mut cases = Vec::new();
        for (ga, x) in &la {
            for (gb, y) in &lb {
                if x == y {
                    cases.push(self.terms.and2(*ga, *gb));
                }
            }
        }
        self.terms.or(cases)
    }

    fn initialized(&mut self, v: &Value) -> TermId {
        let cases = v
            .leaves(&mut self.terms)
            .into_iter()
            .filter(|(_, x)| *x != Value::Uninit)
            .map(|(g, _)| g)
            .collect();
        self.terms.or(cases)
    }

    fn in_bounds(&mut self, a: &Value, i: TermId) -> TermId {
        let mut cases = Vec::new();
        for (g, leaf) in a.leaves(&mut self.terms) {
            let t = &mut self.terms;
            match leaf {
                Value::Array(cells) => {
                    let (zero, len) = (t.int(0), t.int(cells.len()));
                    let (lo, hi) = (t.le(zero, i), t.lt(i, len));
                    cases.push(t.and(vec![g, lo, hi]));
                }
                Value::Input(_) => cases.push(g),
                _ => {}
            }
        }
        self.terms.or(cases)
    }

    /// The value behind a pointer.
    fn load(&mut self, st: &State, p: &Value) -> Value {
        let leaves = p.leaves(&mut self.terms);
        let options = leaves
            .into_iter()
            .map(|(g, leaf)| match leaf {
                Value::Ptr(c) => (g, st.read(c).clone()),
                _ => (g, Value::Uninit),
            })
            .collect();
        self.choose(options)
    }

    fn field(&mut self, st: &State, r: &Value, f: &str) -> Value {
        let leaves = r.leaves(&mut self.terms);
        let options = leaves
            .into_iter()
            .map(|(g, leaf)| match leaf {
                Value::Record(fields) => match fields.iter().find(|(n, _)| n == f) {
                    Some((_, c)) => (g, st.read(*c).clone()),
                    None => (g, Value::Uninit),
                },
                _ => (g, Value::Uninit),
            })
            .collect();
        self.choose(options)
    }

    /// Element `i` of an array value.
    fn element(&mut self, st: &mut State, a: &Value, i: TermId) -> Eval<Value> {
        let mut options = Vec::new();
        for (g, leaf) in a.leaves(&mut self.terms) {
            match leaf {
                Value::Array(cells) => {
                    for (h, c) in self.index_cells(st, &cells, i)? {
                        let gh = self.terms.and2(g, h);
                        options.push((gh, st.read(c).clone()));
                    }
                }
                Value::Input(arr) => {
                    let v = self.input_element(&arr, i);
                    options.push((g, v));
                }
                _ => options.push((g, Value::Uninit)),
            }
        }
        Ok(self.choose(options))
    }

    /// One value out of guarded options (the guards partition the paths
    /// the checks allow): the last is the default.
    fn choose(&mut self, mut options: Vec<(TermId, Value)>) -> Value {
        let Some((_, mut acc)) = options.pop() else {
            return Value::Uninit;
        };
        while let Some((g, v)) = options.pop() {
            acc = Value::ite(&mut self.terms, g, v, acc);
        }
        acc
    }

    /// The cells index `i` may select in `cells`, each with its guard. A
    /// symbolic index asks the solver which cells are feasible (the
    /// thesis's enumeration); in fork mode more than one forks the state.
    fn index_cells(
        &mut self,
        st: &State,
        cells: &[CellId],
        i: TermId,
    ) -> Eval<Vec<(TermId, CellId)>> {
        let truth = self.terms.bool(true);
        let concrete = self
            .terms
            .as_int(i)
            .and_then(num_traits::ToPrimitive::to_usize)
            .or_else(|| st.pinned(i));
        if let Some(j) = concrete {
            return Ok(cells.get(j).map(|c| vec![(truth, *c)]).unwrap_or_default());
        }
        let mut feasible = Vec::new();
        for (j, c) in cells.iter().enumerate() {
            let jt = self.terms.int(j);
            let eq = self.terms.eq(i, jt);
            match self.solver.check(&self.terms, &st.pc, eq, false) {
                Answer::Sat => feasible.push((j, eq, *c)),
                Answer::Unsat => {}
                Answer::Unknown(why) => return Err(Halt::Undecided(why)),
            }
        }
        if feasible.len() == 1 {
            return Ok(vec![(truth, feasible[0].2)]);
        }
        if self.opts.index_mode == IndexMode::Fork && feasible.len() > 1 {
            return Err(Halt::Fork(i, feasible.iter().map(|f| f.0).collect()));
        }
        Ok(feasible.into_iter().map(|(_, g, c)| (g, c)).collect())
    }

    /// Element `i` of an input array, as the interpreter reads it.
    pub(crate) fn input_element(&mut self, a: &InputArray, i: TermId) -> Value {
        let mut prefix: Vec<TermId> = a.prefix.to_vec();
        prefix.push(i);
        let base = if prefix.len() < a.dims as usize {
            Value::Input(InputArray {
                symbol: a.symbol,
                dims: a.dims,
                prefix: prefix.into(),
                writes: Arc::new([]),
            })
        } else {
            let t = &mut self.terms;
            let zero = t.int(0);
            let nonneg = prefix.iter().map(|p| t.le(zero, *p)).collect();
            let all = t.and(nonneg);
            let array = t.var(a.symbol);
            let sel = t.select(array, prefix);
            Value::Int(t.ite(all, sel, zero))
        };
        a.writes.iter().fold(base, |acc, (k, v)| {
            let hit = self.terms.eq(i, *k);
            Value::ite(&mut self.terms, hit, v.clone(), acc)
        })
    }

    /// The current value of a place.
    pub(crate) fn read_place(&mut self, st: &mut State, p: &Place) -> Eval<Value> {
        Ok(match p {
            Place::Var(v) => st.read(st.cell_of(*v)).clone(),
            Place::Deref(e) => {
                let ptr = self.eval(st, e)?;
                self.load(st, &ptr)
            }
            Place::Index(base, i) => {
                let b = self.read_place(st, base)?;
                let i = self.int(st, i)?;
                self.element(st, &b, i)?
            }
            Place::Field(base, f) => {
                let b = self.read_place(st, base)?;
                self.field(st, &b, f)
            }
        })
    }

    /// `p := v`. Cells are written in place (so aliases see the write);
    /// an input array is updated as a value and written back to its place.
    pub(crate) fn assign(&mut self, st: &mut State, p: &Place, v: Value) -> Eval<()> {
        match p {
            Place::Var(x) => st.write(st.cell_of(*x), v),
            Place::Deref(e) => {
                let ptr = self.eval(st, e)?;
                let targets = ptr
                    .leaves(&mut self.terms)
                    .into_iter()
                    .filter_map(|(g, leaf)| match leaf {
                        Value::Ptr(c) => Some((g, c)),
                        _ => None,
                    })
                    .collect();
                self.write_guarded(st, targets, v);
            }
            Place::Field(base, f) => {
                let b = self.read_place(st, base)?;
                let targets = b
                    .leaves(&mut self.terms)
                    .into_iter()
                    .filter_map(|(g, leaf)| match leaf {
                        Value::Record(fs) => fs.iter().find(|(n, _)| n == f).map(|(_, c)| (g, *c)),
                        _ => None,
                    })
                    .collect();
                self.write_guarded(st, targets, v);
            }
            Place::Index(base, i) => {
                let b = self.read_place(st, base)?;
                let i = self.int(st, i)?;
                self.assign_element(st, base, &b, i, v)?;
            }
        }
        Ok(())
    }

    fn assign_element(
        &mut self,
        st: &mut State,
        base: &Place,
        b: &Value,
        i: TermId,
        v: Value,
    ) -> Eval<()> {
        let mut targets = Vec::new();
        let mut has_input = false;
        for (g, leaf) in b.leaves(&mut self.terms) {
            match leaf {
                Value::Array(cells) => {
                    for (h, c) in self.index_cells(st, &cells, i)? {
                        targets.push((self.terms.and2(g, h), c));
                    }
                }
                Value::Input(_) => has_input = true,
                _ => {}
            }
        }
        self.write_guarded(st, targets, v.clone());
        if has_input {
            let updated = self.with_input_write(b, i, &v);
            self.assign(st, base, updated)?;
        }
        Ok(())
    }

    /// `b` with element `i` of its input-array leaves set to `v`.
    fn with_input_write(&mut self, b: &Value, i: TermId, v: &Value) -> Value {
        match b {
            Value::Input(a) => {
                let mut writes = a.writes.to_vec();
                writes.push((i, v.clone()));
                Value::Input(InputArray {
                    writes: writes.into(),
                    ..a.clone()
                })
            }
            Value::Ite(c, x, y) => {
                let (x, y) = (
                    self.with_input_write(x, i, v),
                    self.with_input_write(y, i, v),
                );
                Value::ite(&mut self.terms, *c, x, y)
            }
            other => other.clone(),
        }
    }

    /// Writes `v` into each cell whose guard holds.
    fn write_guarded(&mut self, st: &mut State, targets: Vec<(TermId, CellId)>, v: Value) {
        for (g, c) in targets {
            let new = match self.terms.as_bool(g) {
                Some(true) => v.clone(),
                _ => {
                    let old = st.read(c).clone();
                    Value::ite(&mut self.terms, g, v.clone(), old)
                }
            };
            st.write(c, new);
        }
    }
}

/// An integer expression of the IR on a general state (loop summaries,
/// annotations): `var` gives a variable's term, `array` an input array's
/// (read as the interpreter reads one: 0 below index 0); `Err` says what
/// has no term (pointers, records, other arrays).
pub(crate) fn int_term(
    t: &mut Terms,
    e: &Expr,
    var: &dyn Fn(&mut Terms, VarId) -> Result<TermId, String>,
    array: &dyn Fn(&mut Terms, VarId) -> Option<TermId>,
) -> Result<TermId, String> {
    let term = |t: &mut Terms, x: &Expr| int_term(t, x, var, array);
    Ok(match e {
        Expr::Int(n) => t.int(n.clone()),
        Expr::Var(v) => var(t, *v)?,
        Expr::Unary(op, a) => {
            let x = term(t, a)?;
            unary(t, *op, x)
        }
        // A divisor was checked non-zero before.
        Expr::Binary(op, a, b) => {
            let (x, y) = (term(t, a)?, term(t, b)?);
            binary(t, *op, x, y)
        }
        Expr::Cmp(op, a, b) => {
            let (x, y) = (term(t, a)?, term(t, b)?);
            let c = comparison(t, *op, x, y);
            truth_value(t, c)
        }
        Expr::Index(a, i) => {
            let Some(a) = (match &**a {
                Expr::Var(v) => array(t, *v),
                _ => None,
            }) else {
                return Err("an array other than the input".into());
            };
            let i = term(t, i)?;
            let zero = t.int(0);
            let nonneg = t.le(zero, i);
            let sel = t.select(a, vec![i]);
            t.ite(nonneg, sel, zero)
        }
        Expr::Null | Expr::Load(_) | Expr::Field(..) | Expr::AddrOf(_) => {
            return Err("pointers or records".into());
        }
        Expr::Array(_) | Expr::Record(_) => return Err("an array or a record built".into()),
    })
}

/// An IR unary operator on an integer term (`!x` is `1` when x = 0, else
/// `0`, as the interpreter computes it). Shared by every executor over the
/// IR (this one, compact, compositional).
pub(crate) fn unary(t: &mut Terms, op: UnOp, x: TermId) -> TermId {
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
pub(crate) fn binary(t: &mut Terms, op: BinOp, x: TermId, y: TermId) -> TermId {
    match op {
        BinOp::Add => t.add(x, y),
        BinOp::Sub => t.sub(x, y),
        BinOp::Mul => t.mul(x, y),
        BinOp::Div => t.div(x, y),
    }
}

/// An IR comparison as a Boolean term, `x op y` over integer terms
/// (shared by the summaries and annotations).
pub(crate) fn comparison(t: &mut Terms, op: CmpOp, x: TermId, y: TermId) -> TermId {
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
pub(crate) fn truth_value(t: &mut Terms, c: TermId) -> TermId {
    let (one, zero) = (t.int(1), t.int(0));
    t.ite(c, one, zero)
}

fn is_pointer(v: &Value) -> bool {
    match v {
        Value::Null | Value::Ptr(_) => true,
        Value::Ite(_, a, b) => is_pointer(a) || is_pointer(b),
        _ => false,
    }
}
