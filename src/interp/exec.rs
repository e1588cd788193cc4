//! The interpreter proper: statements, expressions, places, calls.
//!
//! Everything here runs on the big-stack thread that `run` spawns. Host
//! recursion follows microc recursion (a call recurses into the callee's
//! statements and expressions); a stack guard turns host-stack exhaustion
//! into a `CallDepthLimit` outcome instead of an abort, whatever limits the
//! caller chose.

use super::trace::{Event, EventKind};
use super::value::{CellId, Value};
use super::{Limits, Outcome, RunError};
use crate::TargetKind;
use crate::syntax::Span;
use crate::syntax::ast::{BinOp, Expr, ExprKind, Function, Program, Stmt, StmtKind, UnOp};
use num_bigint::BigInt;
use num_traits::{ToPrimitive, Zero};
use std::borrow::Cow;
use std::collections::HashMap;

/// Why execution stopped early: an outcome of the program, or an error of
/// the interpreter's caller (bad witness, ill-typed program).
pub(crate) enum Stop {
    Outcome(Outcome),
    Error(RunError),
}

pub(crate) type R<T> = Result<T, Stop>;

fn internal<T>(msg: impl Into<String>) -> R<T> {
    Err(Stop::Error(RunError::Internal(msg.into())))
}

fn target(kind: TargetKind, span: Span) -> Stop {
    Stop::Outcome(Outcome::Error { kind, span })
}

/// A value of the wrong kind for an operation. In a program that passed the
/// type checker, only a witness of the wrong shape can cause this, and an
/// input array where something else is expected is always the witness's
/// fault (input arrays come only from it).
fn type_error<T>(what: &str, got: &Value, at: Span) -> R<T> {
    let msg = format!(
        "{what}, but the value is {} (at byte {})",
        got.describe(),
        at.start
    );
    match got {
        Value::Input(_) => Err(Stop::Error(RunError::BadWitness(format!(
            "{msg}: a witness argument is a list where the program does not use an array"
        )))),
        _ => internal(format!("ill-typed program: {msg}")),
    }
}

/// Results of multiplications are capped at this many bits: a program that
/// squares a number in a loop would otherwise exhaust memory within a few
/// dozen steps. Reaching the cap ends the run like the step limit does.
const MAX_INT_BITS: u64 = 1 << 20;

/// Cells are never freed (as in the thesis's store), and every array or
/// record literal makes a cell per element: a loop that builds arrays
/// would fill memory long before the step limit. A run that needs more
/// cells than this (about 160 MB) ends like the step limit does.
pub(crate) const MAX_CELLS: usize = 4_000_000;

/// Outputs are kept for the run's result: a run that outputs more ends
/// like the step limit does (a replay, which has no step limit but its
/// time, would otherwise fill memory with the outputs of a loop).
pub(crate) const MAX_OUTPUTS: usize = 1_000_000;

/// Marks "no such variable / function" in the per-expression tables.
const NONE: u32 = u32::MAX;

/// What the interpreter precomputes about a function.
struct FnInfo<'p> {
    f: &'p Function,
    /// Variable slot of each `Var` and `AddrOf` expression, by expression id.
    /// Slots are the parameters, then the locals.
    slot_of: Vec<u32>,
    /// Index of the called function, for each `Call` expression by id.
    callee_of: Vec<u32>,
    /// Whether an expression contains no call, by id: evaluating it cannot
    /// change any existing cell (`input` and `alloc` do not either).
    call_free: Vec<bool>,
    n_slots: usize,
    /// Slots whose address is taken (`&x`) somewhere in the function. Only
    /// these need a store cell; the others live in the frame and vanish with
    /// it, which keeps long runs from filling the store with dead locals.
    addr_taken: Vec<bool>,
}

impl<'p> FnInfo<'p> {
    fn new(f: &'p Function, fn_index: &HashMap<&str, usize>) -> FnInfo<'p> {
        let mut slots: HashMap<&str, u32> = HashMap::new();
        for (i, v) in f.params.iter().chain(&f.locals).enumerate() {
            // A repeated name refers to its first declaration.
            slots.entry(v.name.as_str()).or_insert(i as u32);
        }
        let n_slots = f.params.len() + f.locals.len();
        let n = f.expr_count as usize;
        let mut info = FnInfo {
            f,
            slot_of: vec![NONE; n],
            callee_of: vec![NONE; n],
            call_free: vec![false; n],
            n_slots,
            addr_taken: vec![false; n_slots],
        };
        let mut exprs = Vec::new();
        f.walk_exprs(&mut |e| exprs.push(e));
        for e in &exprs {
            let id = e.id as usize;
            if id >= n {
                continue; // not from the parser; lookups of it fail cleanly
            }
            match &e.kind {
                ExprKind::Var(x) => {
                    info.slot_of[id] = slots.get(x.as_str()).copied().unwrap_or(NONE);
                }
                ExprKind::AddrOf(x) => {
                    let s = slots.get(x.name.as_str()).copied().unwrap_or(NONE);
                    info.slot_of[id] = s;
                    if s != NONE {
                        info.addr_taken[s as usize] = true;
                    }
                }
                ExprKind::Call(g, _) => {
                    info.callee_of[id] = fn_index.get(g.name.as_str()).map_or(NONE, |&i| i as u32);
                }
                _ => {}
            }
        }
        // `exprs` lists parents before children: fill `call_free` backwards.
        for e in exprs.iter().rev() {
            let free = !matches!(e.kind, ExprKind::Call(..))
                && e.children()
                    .iter()
                    .all(|c| info.call_free.get(c.id as usize) == Some(&true));
            if let Some(slot) = info.call_free.get_mut(e.id as usize) {
                *slot = free;
            }
        }
        info
    }
}

/// The variables of one activation of a function.
struct Frame<'p> {
    func: usize,
    f: &'p Function,
    /// Values of the slots that live in the frame (`None`: uninitialised).
    vals: Vec<Option<Value>>,
    /// For each slot, the store cell holding it if its address is taken.
    cells: Vec<Option<usize>>,
}

/// A storage location: a slot of the current frame or a store cell.
#[derive(Clone, Copy, Debug)]
enum Loc {
    Slot(usize),
    Cell(usize),
}

/// An index into an input array held at a place. Input arrays are values,
/// not cells, so a write into one goes through the value that holds it.
struct Step {
    index: BigInt,
    /// Where this step's failure is reported (absolute).
    op: Span,
}

/// A resolved place: a location, then index steps into an input array held
/// there. Arrays, records and pointers met on the way have been followed:
/// the location is the cell of the element, the field or the pointee.
struct Place {
    loc: Loc,
    /// Where reading the location uninitialised is reported (absolute).
    root_span: Span,
    steps: Vec<Step>,
}

pub(crate) struct Interp<'p> {
    funcs: Vec<FnInfo<'p>>,
    store: Vec<Option<Value>>,
    frame: Frame<'p>,
    /// Number of active frames, main included.
    depth: u32,
    limits: Limits,
    input: &'p [BigInt],
    /// How many values the run read from the input stream, past its end
    /// included (a read there gives 0: a position the witness did not
    /// give, and the input is exhausted).
    pub(crate) input_reads: usize,
    pub(crate) outputs: Vec<BigInt>,
    pub(crate) steps: u64,
    /// The statement being executed (absolute), for the step limit.
    cur_stmt: Span,
    /// The run's branches and failure, when it is traced (`trace`).
    pub(crate) trace: Option<super::trace::Recorder>,
    /// Host stack address at the start of the run, and how much of the
    /// stack calls (resp. everything else) may use below it.
    stack_base: usize,
    call_stack_budget: usize,
    hard_stack_budget: usize,
}

/// An approximation of the current host stack pointer.
#[inline(always)]
pub(crate) fn stack_address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

impl<'p> Interp<'p> {
    pub(crate) fn new(
        program: &'p Program,
        main: usize,
        input: &'p [BigInt],
        limits: Limits,
        stack_size: usize,
    ) -> Interp<'p> {
        let mut fn_index: HashMap<&str, usize> = HashMap::new();
        for (i, f) in program.functions.iter().enumerate() {
            fn_index.entry(f.name.name.as_str()).or_insert(i);
        }
        let funcs = program
            .functions
            .iter()
            .map(|f| FnInfo::new(f, &fn_index))
            .collect();
        // Calls stop well before the stack ends; other recursion (only deep
        // in ASTs not made by the parser) may use part of the rest.
        let headroom = (stack_size / 16).max(4 << 20).min(stack_size / 2);
        Interp {
            funcs,
            store: Vec::new(),
            // Replaced by main's real frame when main is invoked.
            frame: Frame {
                func: main,
                f: &program.functions[main],
                vals: vec![],
                cells: vec![],
            },
            depth: 0,
            limits,
            input,
            input_reads: 0,
            outputs: Vec::new(),
            steps: 0,
            cur_stmt: Span::default(),
            trace: None,
            stack_base: stack_address(),
            call_stack_budget: stack_size - headroom,
            hard_stack_budget: stack_size - headroom / 2,
        }
    }

    fn stack_used(&self) -> usize {
        self.stack_base.saturating_sub(stack_address())
    }

    fn abs(&self, span: Span) -> Span {
        self.frame.f.abs(span)
    }

    fn info(&self) -> &FnInfo<'p> {
        &self.funcs[self.frame.func]
    }

    fn step(&mut self, span: Span) -> R<()> {
        // The deadline of the work that asked for the run (a replay) is a
        // limit too: a step on numbers of a million bits takes a while.
        let late = self.steps.is_multiple_of(64) && crate::deadline::passed();
        if self.steps >= self.limits.max_steps || late {
            return Err(Stop::Outcome(Outcome::StepLimit { span }));
        }
        self.steps += 1;
        Ok(())
    }

    /// Runs `main` with the given argument values; returns its result.
    pub(crate) fn run_main(&mut self, args: Vec<Value>) -> R<BigInt> {
        let main = self.frame.func;
        let f = self.funcs[main].f;
        let v = self.invoke(main, args, f.abs(f.name.span))?;
        match v {
            Value::Int(n) => Ok(n),
            other => type_error("main must return an integer", &other, f.abs(f.ret.span)),
        }
    }

    // ---- variables and locations ------------------------------------------

    fn slot(&self, e: &Expr) -> R<usize> {
        match self.info().slot_of.get(e.id as usize) {
            Some(&s) if s != NONE => Ok(s as usize),
            _ => {
                let name = match &e.kind {
                    ExprKind::Var(x) => x.as_str(),
                    ExprKind::AddrOf(x) => x.name.as_str(),
                    _ => "?",
                };
                internal(format!(
                    "`{name}` is not a variable of function `{}`",
                    self.frame.f.name.name
                ))
            }
        }
    }

    fn var_loc(&self, slot: usize) -> Loc {
        match self.frame.cells.get(slot) {
            Some(Some(c)) => Loc::Cell(*c),
            _ => Loc::Slot(slot),
        }
    }

    fn cell(&self, loc: Loc) -> R<&Option<Value>> {
        let c = match loc {
            Loc::Slot(s) => self.frame.vals.get(s),
            Loc::Cell(c) => self.store.get(c),
        };
        match c {
            Some(c) => Ok(c),
            None => internal(format!("dangling location {loc:?}")),
        }
    }

    fn cell_mut(&mut self, loc: Loc) -> R<&mut Option<Value>> {
        let c = match loc {
            Loc::Slot(s) => self.frame.vals.get_mut(s),
            Loc::Cell(c) => self.store.get_mut(c),
        };
        match c {
            Some(c) => Ok(c),
            None => internal(format!("dangling location {loc:?}")),
        }
    }

    // ---- places -------------------------------------------------------------

    /// Resolves a place expression, left to right: the base first (a read of
    /// the base variable must find it initialised), then each index, checked
    /// against the array as it is then. Used for assignments, and for reads
    /// of call-free `a[i]` / `r.f` chains.
    fn place(&mut self, e: &'p Expr) -> R<Place> {
        match &e.kind {
            ExprKind::Var(_) => {
                let slot = self.slot(e)?;
                Ok(Place {
                    loc: self.var_loc(slot),
                    root_span: self.abs(e.span),
                    steps: vec![],
                })
            }
            ExprKind::Deref(inner) => {
                let c = self.eval_ptr(inner, e)?;
                Ok(Place {
                    loc: Loc::Cell(c),
                    root_span: self.abs(e.op),
                    steps: vec![],
                })
            }
            ExprKind::Index(base, index) => {
                let p = self.place(base)?;
                self.lookup(&p, true)?;
                let i = self.eval_int(index)?;
                self.element_place(p, i, self.abs(e.op))
            }
            ExprKind::Field(base, name) => {
                let p = self.place(base)?;
                self.field_place(p, &name.name, self.abs(e.op))
            }
            _ => internal("assignment to something that is not a variable, `*e`, `e[i]` or `e.f`"),
        }
    }

    /// Element `i` of the array at `p` (as it is now): its cell, or a step
    /// into an input array.
    fn element_place(&mut self, mut p: Place, i: BigInt, op: Span) -> R<Place> {
        let cell = match &*self.lookup(&p, true)? {
            Value::Array(cells) if p.steps.is_empty() => {
                i.to_usize().and_then(|u| cells.get(u).copied())
            }
            Value::Input(_) => {
                p.steps.push(Step { index: i, op });
                return Ok(p);
            }
            other => return type_error("indexing a value that is not an array", other, op),
        };
        match cell {
            Some(c) => Ok(Place {
                loc: Loc::Cell(c),
                root_span: op,
                steps: vec![],
            }),
            None => Err(target(TargetKind::OutOfBounds, op)),
        }
    }

    /// Field `name` of the record at `p`, or of the record a pointer at `p`
    /// points to: its cell.
    fn field_place(&mut self, p: Place, name: &str, op: Span) -> R<Place> {
        let record = match &*self.lookup(&p, false)? {
            Value::Ptr(c) => match self.cell(Loc::Cell(*c))? {
                Some(v) => v.clone(),
                None => return Err(target(TargetKind::Uninitialized, op)),
            },
            Value::Null => return Err(target(TargetKind::NullDeref, op)),
            v => v.clone(),
        };
        let c = field_cell(&record, name, op)?;
        Ok(Place {
            loc: Loc::Cell(c),
            root_span: op,
            steps: vec![],
        })
    }

    /// The value at a place. `want_array`: the caller indexes it again.
    fn lookup(&self, p: &Place, want_array: bool) -> R<Cow<'_, Value>> {
        let Some(root) = self.cell(p.loc)? else {
            return Err(target(TargetKind::Uninitialized, p.root_span));
        };
        let mut cur = Cow::Borrowed(root);
        for (k, st) in p.steps.iter().enumerate() {
            let want = k + 1 < p.steps.len() || want_array;
            cur = match cur {
                Cow::Borrowed(v) => input_element(v, st, want)?,
                Cow::Owned(v) => Cow::Owned(input_element(&v, st, want)?.into_owned()),
            };
        }
        Ok(cur)
    }

    /// Stores `v` at a place (initialising a variable or cell written whole).
    fn store_at(&mut self, p: Place, v: Value) -> R<()> {
        let cell = self.cell_mut(p.loc)?;
        if p.steps.is_empty() {
            *cell = Some(v);
            return Ok(());
        }
        let Some(mut cur) = cell.as_mut() else {
            return Err(target(TargetKind::Uninitialized, p.root_span));
        };
        for (k, st) in p.steps.iter().enumerate() {
            let Value::Input(a) = cur else {
                return type_error("indexing a value that is not an array", cur, st.op);
            };
            cur = a.get_mut(&st.index, k + 1 < p.steps.len());
        }
        *cur = v;
        Ok(())
    }

    /// A fresh cell holding `v`.
    fn new_cell(&mut self, v: Option<Value>) -> R<CellId> {
        if self.store.len() >= MAX_CELLS {
            return Err(Stop::Outcome(Outcome::StepLimit {
                span: self.cur_stmt,
            }));
        }
        self.store.push(v);
        Ok(self.store.len() - 1)
    }

    /// The value in a cell that an array or record holds (always assigned).
    fn element(&self, c: CellId, op: Span) -> R<Value> {
        match self.cell(Loc::Cell(c))? {
            Some(v) => Ok(v.clone()),
            None => Err(target(TargetKind::Uninitialized, op)),
        }
    }

    // ---- expressions ----------------------------------------------------------

    fn eval(&mut self, e: &'p Expr) -> R<Value> {
        self.eval_at(e, false)
    }

    fn eval_int(&mut self, e: &'p Expr) -> R<BigInt> {
        match self.eval(e)? {
            Value::Int(n) => Ok(n),
            other => {
                let at = self.abs(e.span);
                type_error("expected an integer", &other, at)
            }
        }
    }

    /// Evaluates a pointer for `*e` or `e.f`; null fails at `user.op`.
    fn eval_ptr(&mut self, e: &'p Expr, user: &'p Expr) -> R<usize> {
        match self.eval(e)? {
            Value::Ptr(c) => Ok(c),
            Value::Null => Err(target(TargetKind::NullDeref, self.abs(user.op))),
            other => {
                let at = self.abs(user.op);
                type_error("dereferencing a value that is not a pointer", &other, at)
            }
        }
    }

    /// `want_array`: the result is indexed again (matters only for reads of
    /// input-array elements the witness did not give).
    fn eval_at(&mut self, e: &'p Expr, want_array: bool) -> R<Value> {
        if self.stack_used() > self.hard_stack_budget {
            return internal("expression nested too deeply for the interpreter's stack");
        }
        match &e.kind {
            ExprKind::Num(n) => Ok(Value::Int(n.clone())),
            ExprKind::Null => Ok(Value::Null),
            ExprKind::Var(_) => {
                let slot = self.slot(e)?;
                match self.cell(self.var_loc(slot))? {
                    Some(v) => Ok(v.clone()),
                    None => Err(target(TargetKind::Uninitialized, self.abs(e.span))),
                }
            }
            ExprKind::Input => {
                let v = self.input.get(self.input_reads).cloned();
                self.input_reads += 1;
                Ok(Value::Int(v.unwrap_or_default()))
            }
            ExprKind::AddrOf(_) => {
                let slot = self.slot(e)?;
                match self.var_loc(slot) {
                    Loc::Cell(c) => Ok(Value::Ptr(c)),
                    Loc::Slot(_) => internal("address of a variable without a cell"),
                }
            }
            ExprKind::Deref(inner) => {
                let c = self.eval_ptr(inner, e)?;
                match self.cell(Loc::Cell(c))? {
                    Some(v) => Ok(v.clone()),
                    None => Err(target(TargetKind::Uninitialized, self.abs(e.op))),
                }
            }
            ExprKind::Alloc(inner) => {
                let v = self.eval(inner)?;
                Ok(Value::Ptr(self.new_cell(Some(v))?))
            }
            ExprKind::Unary(op, inner) => {
                let n = self.eval_int(inner)?;
                Ok(Value::Int(match op {
                    UnOp::Neg => -n,
                    UnOp::Not => BigInt::from(u8::from(n.is_zero())),
                }))
            }
            ExprKind::Binary(..) => self.binary_chain(e),
            ExprKind::Index(..) | ExprKind::Field(..) => {
                if self.info().call_free.get(e.id as usize) == Some(&true) && is_place_chain(e) {
                    // No call can run between reading the base and reading
                    // the element, so resolving the place (which reads the
                    // base again after the index) reads what `eval_copy`
                    // would, without cloning the base.
                    let p = self.place(e)?;
                    Ok(self.lookup(&p, want_array)?.into_owned())
                } else {
                    self.eval_copy(e, want_array)
                }
            }
            ExprKind::Call(g, args) => {
                let callee = self.info().callee_of.get(e.id as usize).copied();
                let Some(callee) = callee.filter(|&c| c != NONE) else {
                    return internal(format!("call of unknown function `{}`", g.name));
                };
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a)?);
                }
                self.call(callee as usize, vals, e)
            }
            ExprKind::Array(elems) => {
                let mut cells = Vec::with_capacity(elems.len());
                for x in elems {
                    let v = self.eval(x)?;
                    cells.push(self.new_cell(Some(v))?);
                }
                Ok(Value::Array(cells.into()))
            }
            ExprKind::Record(fields) => {
                let mut cells = Vec::with_capacity(fields.len());
                for (name, x) in fields {
                    let v = self.eval(x)?;
                    cells.push((name.name.clone(), self.new_cell(Some(v))?));
                }
                Ok(Value::Record(cells.into()))
            }
            ExprKind::Error => internal("the program has a syntax error node"),
        }
    }

    /// `a[i]` and `e.f` with a call inside: the base value (the array's or
    /// record's cells) is taken before the index is evaluated, so a call in
    /// the index that assigns the base variable anew does not change which
    /// cells are read; a call that writes into those cells does.
    fn eval_copy(&mut self, e: &'p Expr, want_array: bool) -> R<Value> {
        let op = self.abs(e.op);
        match &e.kind {
            ExprKind::Index(base, index) => {
                let b = self.eval_at(base, true)?;
                let i = self.eval_int(index)?;
                match &b {
                    Value::Array(cells) => match i.to_usize().and_then(|u| cells.get(u)) {
                        Some(&c) => self.element(c, op),
                        None => Err(target(TargetKind::OutOfBounds, op)),
                    },
                    _ => {
                        let step = Step { index: i, op };
                        Ok(input_element(&b, &step, want_array)?.into_owned())
                    }
                }
            }
            ExprKind::Field(base, name) => {
                let mut b = self.eval(base)?;
                match b {
                    Value::Ptr(c) => match self.cell(Loc::Cell(c))? {
                        Some(v) => b = v.clone(),
                        None => return Err(target(TargetKind::Uninitialized, op)),
                    },
                    Value::Null => return Err(target(TargetKind::NullDeref, op)),
                    _ => {}
                }
                let c = field_cell(&b, &name.name, op)?;
                self.element(c, op)
            }
            _ => internal("eval_copy of a non-place expression"),
        }
    }

    /// A binary expression, iteratively along its left spine: a chain such
    /// as `x + x + … + x` (up to `MAX_CHAIN_OPERANDS` operands) is a
    /// left-deep tree, and recursing down it would cost host stack per
    /// operand *per microc call* (a call at the bottom of a chain would
    /// multiply the two), so that a recursion the program ends at a modest
    /// depth could hit the stack guard. The leftmost operand is evaluated
    /// first, then each right operand bottom-up: the order of evaluation
    /// (and so of the failures and of `input` reads) is the recursive one.
    fn binary_chain(&mut self, e: &'p Expr) -> R<Value> {
        if let ExprKind::Binary(op, a, b) = &e.kind
            && !matches!(a.kind, ExprKind::Binary(..))
        {
            // No chain (the common case): no spine to allocate.
            let l = self.eval(a)?;
            return self.binary(e, *op, l, a, b);
        }
        let mut spine = Vec::new();
        let mut leftmost = e;
        while let ExprKind::Binary(_, a, _) = &leftmost.kind {
            spine.push(leftmost);
            leftmost = a;
        }
        let mut v = self.eval(leftmost)?;
        for node in spine.into_iter().rev() {
            let ExprKind::Binary(op, a, b) = &node.kind else {
                return internal("binary spine without a binary node");
            };
            v = self.binary(node, *op, v, a, b)?;
        }
        Ok(v)
    }

    /// The integer of an operand's value `v` (of expression `a`).
    fn int_of(&self, v: Value, a: &'p Expr) -> R<BigInt> {
        match v {
            Value::Int(n) => Ok(n),
            other => type_error("expected an integer", &other, self.abs(a.span)),
        }
    }

    /// `a op b` where `l` is the value of `a`, already evaluated.
    fn binary(&mut self, e: &'p Expr, op: BinOp, l: Value, a: &'p Expr, b: &'p Expr) -> R<Value> {
        let bool_val = |b: bool| Value::Int(BigInt::from(u8::from(b)));
        match op {
            BinOp::And | BinOp::Or => {
                let l = !self.int_of(l, a)?.is_zero();
                // `&&` stops at false, `||` at true.
                if l == (op == BinOp::Or) {
                    return Ok(bool_val(l));
                }
                let r = !self.eval_int(b)?.is_zero();
                Ok(bool_val(r))
            }
            BinOp::Eq | BinOp::Ne => {
                let r = self.eval(b)?;
                let eq = match (&l, &r) {
                    (Value::Int(x), Value::Int(y)) => x == y,
                    (Value::Null, Value::Null) => true,
                    (Value::Ptr(x), Value::Ptr(y)) => x == y,
                    (Value::Null, Value::Ptr(_)) | (Value::Ptr(_), Value::Null) => false,
                    _ => {
                        let bad = if matches!(l, Value::Int(_) | Value::Null | Value::Ptr(_)) {
                            &r
                        } else {
                            &l
                        };
                        let at = self.abs(e.op);
                        return type_error("`==`/`!=` compare integers or pointers", bad, at);
                    }
                };
                Ok(bool_val(eq == (op == BinOp::Eq)))
            }
            _ => {
                let l = self.int_of(l, a)?;
                let r = self.eval_int(b)?;
                Ok(match op {
                    BinOp::Lt => bool_val(l < r),
                    BinOp::Le => bool_val(l <= r),
                    BinOp::Gt => bool_val(l > r),
                    BinOp::Ge => bool_val(l >= r),
                    BinOp::Add => Value::Int(l + r),
                    BinOp::Sub => Value::Int(l - r),
                    BinOp::Mul => {
                        if l.bits() + r.bits() > MAX_INT_BITS {
                            return Err(Stop::Outcome(Outcome::StepLimit {
                                span: self.cur_stmt,
                            }));
                        }
                        Value::Int(l * r)
                    }
                    BinOp::Div => {
                        if r.is_zero() {
                            return Err(target(TargetKind::DivByZero, self.abs(e.op)));
                        }
                        // BigInt division truncates toward zero, as C does.
                        Value::Int(l / r)
                    }
                    BinOp::And | BinOp::Or | BinOp::Eq | BinOp::Ne => {
                        return internal("logical operator in arithmetic");
                    }
                })
            }
        }
    }

    // ---- calls ------------------------------------------------------------------

    fn call(&mut self, callee: usize, args: Vec<Value>, e: &'p Expr) -> R<Value> {
        let span = self.abs(e.span);
        let f = self.funcs[callee].f;
        if f.params.len() != args.len() {
            return internal(format!(
                "`{}` takes {} arguments but is called with {}",
                f.name.name,
                f.params.len(),
                args.len()
            ));
        }
        self.step(self.cur_stmt)?;
        let saved_stmt = self.cur_stmt;
        let v = self.invoke(callee, args, span)?;
        self.cur_stmt = saved_stmt;
        Ok(v)
    }

    /// Pushes a frame for `callee`, runs its body and return expression.
    /// `span`: the call (absolute), where a depth limit is reported.
    fn invoke(&mut self, callee: usize, args: Vec<Value>, span: Span) -> R<Value> {
        if self.depth >= self.limits.max_call_depth || self.stack_used() > self.call_stack_budget {
            return Err(Stop::Outcome(Outcome::CallDepthLimit { span }));
        }
        let info = &self.funcs[callee];
        let f = info.f;
        let mut vals: Vec<Option<Value>> = Vec::with_capacity(info.n_slots);
        vals.extend(args.into_iter().map(Some));
        vals.resize(info.n_slots, None);
        let mut cells = vec![None; info.n_slots];
        for slot in 0..info.n_slots {
            if self.funcs[callee].addr_taken[slot] {
                cells[slot] = Some(self.new_cell(vals[slot].take())?);
            }
        }
        let frame = Frame {
            func: callee,
            f,
            vals,
            cells,
        };
        let saved = std::mem::replace(&mut self.frame, frame);
        self.depth += 1;
        for s in &f.body {
            self.exec(s)?;
        }
        self.cur_stmt = f.abs(f.ret_span);
        let v = match self.eval(&f.ret) {
            Err(Stop::Outcome(Outcome::Error { kind, span })) => {
                if self.trace.as_ref().is_some_and(|t| !t.has_failure()) {
                    self.failed_at_return(f, span);
                }
                return Err(Stop::Outcome(Outcome::Error { kind, span }));
            }
            v => v?,
        };
        self.depth -= 1;
        self.frame = saved;
        Ok(v)
    }

    // ---- statements -------------------------------------------------------------

    fn cond(&mut self, e: &'p Expr) -> R<bool> {
        Ok(!self.eval_int(e)?.is_zero())
    }

    /// A condition's value, recorded in a traced run with the values of
    /// the variables it reads.
    fn branch(&mut self, kind: EventKind, s: &'p Stmt, e: &'p Expr) -> R<bool> {
        let taken = self.cond(e)?;
        if self.trace.is_some() {
            let event = Event {
                kind,
                statement: self.abs(s.span),
                condition: self.abs(e.span),
                depth: self.depth,
                taken,
                values: self.values_read(e),
            };
            if let Some(t) = self.trace.as_mut() {
                t.push(event);
            }
        }
        Ok(taken)
    }

    /// The variables `e` reads, with their values now (`?` unassigned).
    fn values_read(&self, e: &Expr) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut todo = vec![e];
        while let Some(e) = todo.pop() {
            if let ExprKind::Var(name) = &e.kind
                && !out.iter().any(|(n, _)| n == name)
                && let Ok(slot) = self.slot(e)
            {
                let shown = match self.cell(self.var_loc(slot)) {
                    Ok(Some(v)) => self.show(v),
                    _ => "?".to_string(),
                };
                out.push((name.clone(), shown));
            }
            todo.extend(e.children().into_iter().rev());
        }
        out.sort();
        out
    }

    /// A value as a trace shows it: integers, up to 8 elements of an
    /// array, `null`, `&…` for a pointer.
    fn show(&self, v: &Value) -> String {
        match v {
            Value::Int(n) => n.to_string(),
            Value::Null => "null".into(),
            Value::Ptr(_) => "&…".into(),
            Value::Array(cells) => {
                let shown: Vec<String> = (cells.iter().take(8))
                    .map(|c| match self.store.get(*c) {
                        Some(Some(Value::Int(n))) => n.to_string(),
                        Some(None) => "?".into(),
                        _ => "…".into(),
                    })
                    .collect();
                let more = if cells.len() > 8 { ", …" } else { "" };
                format!("[{}{more}]", shown.join(", "))
            }
            Value::Record(_) => "{…}".into(),
            Value::Input(_) => "input array".into(),
        }
    }

    /// In a traced run, the statement `s` where the run failed at `place`,
    /// with the values of what it reads.
    fn failed_at(&mut self, s: &'p Stmt, place: Span) {
        let read = |e: &Expr| self.values_read(e);
        let values = match &s.kind {
            // A variable written is not read; an index or a pointer is.
            StmtKind::Assign { lhs, rhs } if matches!(lhs.kind, ExprKind::Var(_)) => read(rhs),
            StmtKind::Assign { lhs, rhs } => [read(lhs), read(rhs)].concat(),
            StmtKind::Output(e) | StmtKind::Assert(e) | StmtKind::Assume(e) => read(e),
            StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => read(cond),
            StmtKind::Block(_) => vec![],
        };
        let event = Event {
            kind: EventKind::Failed,
            statement: self.abs(s.span),
            condition: place,
            depth: self.depth,
            taken: false,
            values,
        };
        if let Some(t) = self.trace.as_mut() {
            t.failed(event);
        }
    }

    /// In a traced run, `f`'s `return` where the run failed at `place`.
    fn failed_at_return(&mut self, f: &'p Function, place: Span) {
        let event = Event {
            kind: EventKind::Failed,
            statement: f.abs(f.ret_span),
            condition: place,
            depth: self.depth,
            taken: false,
            values: self.values_read(&f.ret),
        };
        if let Some(t) = self.trace.as_mut() {
            t.failed(event);
        }
    }

    fn exec(&mut self, s: &'p Stmt) -> R<()> {
        let done = self.exec_here(s);
        if let Err(Stop::Outcome(Outcome::Error { span, .. })) = &done
            && self.trace.as_ref().is_some_and(|t| !t.has_failure())
        {
            self.failed_at(s, *span);
        }
        done
    }

    fn exec_here(&mut self, s: &'p Stmt) -> R<()> {
        if self.stack_used() > self.hard_stack_budget {
            return internal("statements nested too deeply for the interpreter's stack");
        }
        let span = self.abs(s.span);
        self.cur_stmt = span;
        self.step(span)?;
        match &s.kind {
            StmtKind::Assign { lhs, rhs } => {
                let v = self.eval(rhs)?;
                let p = self.place(lhs)?;
                self.store_at(p, v)
            }
            StmtKind::Output(e) => {
                let n = self.eval_int(e)?;
                if self.outputs.len() >= MAX_OUTPUTS {
                    return Err(Stop::Outcome(Outcome::StepLimit { span }));
                }
                self.outputs.push(n);
                Ok(())
            }
            StmtKind::If { cond, then, els } => {
                if self.branch(EventKind::If, s, cond)? {
                    self.exec(then)
                } else if let Some(els) = els {
                    self.exec(els)
                } else {
                    Ok(())
                }
            }
            StmtKind::While { cond, body } => {
                // The statement's own step covers the first test; each later
                // test is a step of its own.
                while self.branch(EventKind::While, s, cond)? {
                    self.exec(body)?;
                    self.cur_stmt = span;
                    self.step(span)?;
                }
                Ok(())
            }
            StmtKind::Block(stmts) => {
                for s in stmts {
                    self.exec(s)?;
                }
                Ok(())
            }
            StmtKind::Assert(e) => {
                if self.cond(e)? {
                    Ok(())
                } else {
                    Err(target(TargetKind::Assert, span))
                }
            }
            StmtKind::Assume(e) => {
                if self.cond(e)? {
                    Ok(())
                } else {
                    Err(Stop::Outcome(Outcome::AssumeFailed { span }))
                }
            }
        }
    }
}

/// `a[i]…`, `r.f…` down to a variable or a dereference.
fn is_place_chain(mut e: &Expr) -> bool {
    loop {
        match &e.kind {
            ExprKind::Index(base, _) | ExprKind::Field(base, _) => e = base,
            ExprKind::Var(_) | ExprKind::Deref(_) => return true,
            _ => return false,
        }
    }
}

/// Element `st.index` of an input array (never out of bounds).
fn input_element<'a>(v: &'a Value, st: &Step, want_array: bool) -> R<Cow<'a, Value>> {
    match v {
        Value::Input(a) => Ok(a.get(&st.index, want_array)),
        other => type_error("indexing a value that is not an array", other, st.op),
    }
}

/// The cell of field `name` of a record value.
fn field_cell(record: &Value, name: &str, op: Span) -> R<CellId> {
    match record {
        Value::Record(fs) => match fs.iter().find(|(n, _)| n == name) {
            Some((_, c)) => Ok(*c),
            None => internal(format!(
                "record has no field `{name}` (at byte {})",
                op.start
            )),
        },
        other => type_error("field access on a value that is not a record", other, op),
    }
}
