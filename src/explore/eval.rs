//! Evaluation of the IR's pure expressions, conditions and places on a
//! symbolic state (docs/thesis-executor.md, "Evaluation"): methods of the
//! [`Machine`], whose terms the values are built in and whose solver
//! decides which cells a symbolic index may select.
//!
//! The IR has already made every check explicit (a check vertex before
//! each division, index, dereference and read that may fail), so
//! evaluation itself never fails. It may stop, though: a symbolic index
//! into a cell array in `--index fork` mode forks the state ([`Halt::Fork`]),
//! and a solver `unknown` while choosing the feasible cells leaves the path
//! undecided ([`Halt::Undecided`]).

use super::IndexMode;
use super::machine::Machine;
use super::state::{CellId, InputArray, State, Value};
use crate::ir::{CmpOp, Cond, Expr, Place, VarId};
use crate::smt::Answer;
use crate::symbolic::{self, comparison};
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

impl Machine<'_> {
    /// An expression's value on `st` (the one translation, `symbolic`).
    pub(crate) fn eval(&mut self, st: &mut State, e: &Expr) -> Eval<Value> {
        symbolic::value(&mut OnState { m: self, st }, e)
    }

    /// The expressions the translation leaves to the executor's model:
    /// pointers, loads, fields, and literals of arrays and records.
    fn eval_other(&mut self, st: &mut State, e: &Expr) -> Eval<Value> {
        Ok(match e {
            Expr::Null => Value::Null,
            Expr::Load(p) => {
                let p = self.eval(st, p)?;
                self.load(st, &p)
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
            other => symbolic::value(&mut OnState { m: self, st }, other)?,
        })
    }

    /// An expression's value as an integer term.
    pub(crate) fn int(&mut self, st: &mut State, e: &Expr) -> Eval<TermId> {
        let v = self.eval(st, e)?;
        Ok(v.int(self.terms_mut()))
    }

    /// A condition of the IR as a Boolean term.
    pub(crate) fn cond(&mut self, st: &mut State, c: &Cond) -> Eval<TermId> {
        let (t, positive) = match c {
            Cond::Cmp(op, a, b) => {
                let on = &mut OnState { m: self, st };
                (symbolic::compare(on, *op, a, b)?, true)
            }
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
        Ok(if positive { t } else { self.terms_mut().not(t) })
    }

    /// Two values compared: pointers by identity, the rest as integers.
    fn compare_values(&mut self, op: CmpOp, va: Value, vb: Value) -> TermId {
        if is_pointer(&va) || is_pointer(&vb) {
            let eq = self.same_pointer(&va, &vb);
            return match op {
                CmpOp::Ne => self.terms_mut().not(eq),
                _ => eq,
            };
        }
        let (x, y) = (va.int(self.terms_mut()), vb.int(self.terms_mut()));
        comparison(self.terms_mut(), op, x, y)
    }

    /// Whether two pointer values (null or cells, possibly `ite`) are equal.
    fn same_pointer(&mut self, a: &Value, b: &Value) -> TermId {
        let (la, lb) = (a.leaves(self.terms_mut()), b.leaves(self.terms_mut()));
        let mut cases = Vec::new();
        for (ga, x) in &la {
            for (gb, y) in &lb {
                if x == y {
                    cases.push(self.terms_mut().and2(*ga, *gb));
                }
            }
        }
        self.terms_mut().or(cases)
    }

    fn initialized(&mut self, v: &Value) -> TermId {
        let cases = v
            .leaves(self.terms_mut())
            .into_iter()
            .filter(|(_, x)| *x != Value::Uninit)
            .map(|(g, _)| g)
            .collect();
        self.terms_mut().or(cases)
    }

    fn in_bounds(&mut self, a: &Value, i: TermId) -> TermId {
        let mut cases = Vec::new();
        for (g, leaf) in a.leaves(self.terms_mut()) {
            let t = self.terms_mut();
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
        self.terms_mut().or(cases)
    }

    /// The value behind a pointer.
    fn load(&mut self, st: &State, p: &Value) -> Value {
        let leaves = p.leaves(self.terms_mut());
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
        let leaves = r.leaves(self.terms_mut());
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
        for (g, leaf) in a.leaves(self.terms_mut()) {
            match leaf {
                Value::Array(cells) => {
                    for (h, c) in self.index_cells(st, &cells, i)? {
                        let gh = self.terms_mut().and2(g, h);
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
            acc = Value::ite(self.terms_mut(), g, v, acc);
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
        let truth = self.terms_mut().bool(true);
        let concrete = (self.terms())
            .as_int(i)
            .and_then(num_traits::ToPrimitive::to_usize)
            .or_else(|| st.pinned(i));
        if let Some(j) = concrete {
            return Ok(cells.get(j).map(|c| vec![(truth, *c)]).unwrap_or_default());
        }
        let mut feasible = Vec::new();
        for (j, c) in cells.iter().enumerate() {
            let jt = self.terms_mut().int(j);
            let eq = self.terms_mut().eq(i, jt);
            match self.check(&st.pc, eq) {
                Answer::Sat => feasible.push((j, eq, *c)),
                Answer::Unsat => {}
                Answer::Unknown(why) => return Err(Halt::Undecided(why)),
            }
        }
        if feasible.len() == 1 {
            return Ok(vec![(truth, feasible[0].2)]);
        }
        if self.options().index_mode == IndexMode::Fork && feasible.len() > 1 {
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
            let t = self.terms_mut();
            let zero = t.int(0);
            let nonneg = prefix.iter().map(|p| t.le(zero, *p)).collect();
            let all = t.and(nonneg);
            let array = t.var(a.symbol);
            let sel = t.select(array, prefix);
            Value::Int(t.ite(all, sel, zero))
        };
        a.writes.iter().fold(base, |acc, (k, v)| {
            let hit = self.terms_mut().eq(i, *k);
            Value::ite(self.terms_mut(), hit, v.clone(), acc)
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
                    .leaves(self.terms_mut())
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
                    .leaves(self.terms_mut())
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
        for (g, leaf) in b.leaves(self.terms_mut()) {
            match leaf {
                Value::Array(cells) => {
                    for (h, c) in self.index_cells(st, &cells, i)? {
                        targets.push((self.terms_mut().and2(g, h), c));
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
                Value::ite(self.terms_mut(), *c, x, y)
            }
            other => other.clone(),
        }
    }

    /// Writes `v` into each cell whose guard holds.
    fn write_guarded(&mut self, st: &mut State, targets: Vec<(TermId, CellId)>, v: Value) {
        for (g, c) in targets {
            let new = match self.terms().as_bool(g) {
                Some(true) => v.clone(),
                _ => {
                    let old = st.read(c).clone();
                    Value::ite(self.terms_mut(), g, v.clone(), old)
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
    symbolic::int(&mut General { t, var, array }, e)
}

/// A general state: a variable is read when its use is known (as an
/// integer, or as an input array at an index).
struct General<'a> {
    t: &'a mut Terms,
    var: &'a dyn Fn(&mut Terms, VarId) -> Result<TermId, String>,
    array: &'a dyn Fn(&mut Terms, VarId) -> Option<TermId>,
}

/// A value on a general state: a term, or a variable not read yet.
enum Read {
    Term(TermId),
    Var(VarId),
}

impl symbolic::Reads for General<'_> {
    type Value = Read;
    type Error = String;

    fn terms(&mut self) -> &mut Terms {
        self.t
    }

    fn int_value(&mut self, t: TermId) -> Read {
        Read::Term(t)
    }

    fn to_int(&mut self, v: Read) -> Result<TermId, String> {
        match v {
            Read::Term(t) => Ok(t),
            Read::Var(v) => (self.var)(self.t, v),
        }
    }

    fn var(&mut self, v: VarId) -> Result<Read, String> {
        Ok(Read::Var(v))
    }

    fn element(&mut self, array: Read, index: TermId) -> Result<Read, String> {
        let a = match array {
            Read::Var(v) => (self.array)(self.t, v),
            Read::Term(_) => None,
        };
        let a = a.ok_or("an array other than the input")?;
        Ok(Read::Term(symbolic::input_element(self.t, a, index)))
    }

    fn other(&mut self, e: &Expr) -> Result<Read, String> {
        Err(match e {
            Expr::Array(_) | Expr::Record(_) => "an array or a record built",
            _ => "pointers or records",
        }
        .into())
    }
}

fn is_pointer(v: &Value) -> bool {
    match v {
        Value::Null | Value::Ptr(_) => true,
        Value::Ite(_, a, b) => is_pointer(a) || is_pointer(b),
        _ => false,
    }
}

/// A state on the machine as the translation reads it.
struct OnState<'a, 'p> {
    m: &'a mut Machine<'p>,
    st: &'a mut State,
}

impl symbolic::Reads for OnState<'_, '_> {
    type Value = Value;
    type Error = Halt;

    fn terms(&mut self) -> &mut Terms {
        self.m.terms_mut()
    }

    fn int_value(&mut self, t: TermId) -> Value {
        Value::Int(t)
    }

    fn to_int(&mut self, v: Value) -> Eval<TermId> {
        Ok(v.int(self.m.terms_mut()))
    }

    fn var(&mut self, v: VarId) -> Eval<Value> {
        Ok(self.st.read(self.st.cell_of(v)).clone())
    }

    fn element(&mut self, array: Value, index: TermId) -> Eval<Value> {
        self.m.element(self.st, &array, index)
    }

    fn other(&mut self, e: &Expr) -> Eval<Value> {
        self.m.eval_other(self.st, e)
    }

    fn compare(&mut self, op: CmpOp, a: Value, b: Value) -> Eval<TermId> {
        Ok(self.m.compare_values(op, a, b))
    }
}
