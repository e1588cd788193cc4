//! The AST to the fast engine's bytecode, once per program.
//!
//! The order of evaluation, of failures and of steps is the reference's
//! (`exec.rs`). A variable is used directly as an operand (no copy, its
//! initialisation checked by the operation) only when nothing evaluated
//! between its read and its use can fail or have an effect; otherwise it
//! is read into a temporary first, where the reference reads it.

use super::code::{Arith, At, Code, FuncCode, Instr, Mask, Op, Reg};
use crate::syntax::Span;
use crate::syntax::ast::{BinOp, Expr, ExprKind, Function, Program, Stmt, StmtKind, UnOp};
use num_traits::ToPrimitive;
use std::collections::HashMap;

/// Why a program is left to the reference interpreter as a whole.
pub(super) type Unsupported = &'static str;

type C<T> = Result<T, Unsupported>;

/// Deeper expressions and statements are left to the reference (whose
/// stack guard reports them); the compiler recurses on the host stack.
const MAX_NESTING: u32 = 2_000;

pub(super) fn compile(program: &Program) -> C<Code> {
    let mut fn_index: HashMap<&str, u32> = HashMap::new();
    for (i, f) in program.functions.iter().enumerate() {
        fn_index.entry(f.name.name.as_str()).or_insert(i as u32);
    }
    let main = *fn_index.get("main").ok_or("no main")? as usize;
    let mut code = Code {
        main,
        ..Code::default()
    };
    let mut shared = Shared {
        program,
        fn_index,
        inlinable: program.functions.iter().map(inlinable).collect(),
        names: HashMap::new(),
        shapes: HashMap::new(),
    };
    for f in &program.functions {
        let func = FnCompiler::new(&mut code, &mut shared, f).compile()?;
        code.funcs.push(func);
    }
    let n_names = shared.names.len();
    code.shapes = order_shapes(shared.shapes);
    code.field_at = field_table(&code.shapes, n_names);
    code.n_names = n_names as u32;
    Ok(code)
}

/// What the compilers of a program's functions share.
struct Shared<'p> {
    program: &'p Program,
    /// Each name's function (the first of that name, as the reference).
    fn_index: HashMap<&'p str, u32>,
    /// Whether calls of each function are compiled in place.
    inlinable: Vec<bool>,
    /// Field names, interned.
    names: HashMap<String, u32>,
    /// Record shapes (their field names), interned.
    shapes: HashMap<Vec<u32>, u32>,
}

fn order_shapes(shapes: HashMap<Vec<u32>, u32>) -> Vec<Vec<u32>> {
    let mut ordered: Vec<(u32, Vec<u32>)> = shapes.into_iter().map(|(s, i)| (i, s)).collect();
    ordered.sort();
    ordered.into_iter().map(|(_, s)| s).collect()
}

/// For each shape and field name, the field's position in the shape
/// (the first field of that name), or `u32::MAX`.
fn field_table(shapes: &[Vec<u32>], n_names: usize) -> Vec<u32> {
    let mut table = vec![u32::MAX; shapes.len() * n_names];
    for (s, names) in shapes.iter().enumerate() {
        for (k, &name) in names.iter().enumerate().rev() {
            table[s * n_names + name as usize] = k as u32;
        }
    }
    table
}

/// A jump target, bound once its position is known.
#[derive(Clone, Copy)]
struct Label(usize);

/// Where an assignment writes: a slot of the frame, or the cell a
/// temporary refers to.
enum Loc {
    Slot(Reg),
    Cell(Reg),
}

/// A place and where reading it uninitialised is reported.
struct Place {
    loc: Loc,
    root: Span,
}

struct FnCompiler<'a, 'p> {
    code: &'a mut Code,
    shared: &'a mut Shared<'p>,
    f: &'p Function,
    slots: HashMap<&'p str, Reg>,
    celled: Vec<bool>,
    /// The frame variables assigned on every path to here: reading one
    /// cannot fail, so it is used in place wherever it is an operand.
    assigned: Vec<bool>,
    n_slots: u32,
    next_temp: Reg,
    max_reg: Reg,
    /// Steps to charge to the next instruction.
    pending: Vec<At>,
    labels: Vec<Option<u32>>,
    /// Jumps to patch: (instruction, label).
    patches: Vec<(usize, Label)>,
    /// The statement being compiled (`cur_stmt` in the reference).
    stmt: Span,
    depth: u32,
}

impl<'a, 'p> FnCompiler<'a, 'p> {
    fn new(code: &'a mut Code, shared: &'a mut Shared<'p>, f: &'p Function) -> Self {
        Self::at_register(code, shared, f, 0)
    }

    /// A compiler for `f` whose slots start at register `base`: 0 for a
    /// function's own frame, the first free one for a call inlined there.
    fn at_register(
        code: &'a mut Code,
        shared: &'a mut Shared<'p>,
        f: &'p Function,
        base: Reg,
    ) -> Self {
        let mut slots = HashMap::new();
        for (i, v) in f.params.iter().chain(&f.locals).enumerate() {
            slots.entry(v.name.as_str()).or_insert(base + i as Reg);
        }
        let n_slots = (f.params.len() + f.locals.len()) as u32;
        let mut celled = vec![false; (base + n_slots) as usize];
        f.walk_exprs(&mut |e| {
            if let ExprKind::AddrOf(x) = &e.kind
                && let Some(&s) = slots.get(x.name.as_str())
            {
                celled[s as usize] = true;
            }
        });
        let mut assigned = vec![false; (base + n_slots) as usize];
        let params = base as usize..(base as usize + f.params.len());
        assigned[params].fill(true);
        FnCompiler {
            code,
            shared,
            f,
            slots,
            celled,
            assigned,
            n_slots,
            next_temp: base + n_slots,
            max_reg: base + n_slots,
            pending: vec![],
            labels: vec![],
            patches: vec![],
            stmt: Span::default(),
            depth: 0,
        }
    }

    fn compile(mut self) -> C<FuncCode> {
        let entry = self.code.instrs.len() as u32;
        for s in &self.f.body {
            self.stmt(s)?;
        }
        self.stmt = self.f.abs(self.f.ret_span);
        let src = self.operand(&self.f.ret, true)?;
        let ret = self.abs(self.f.ret.span);
        let at = self.spans(ret, ret, ret);
        self.emit(Op::Ret { src, at });
        self.patch()?;
        let celled = (0..self.n_slots).filter(|&s| self.celled[s as usize]);
        Ok(FuncCode {
            entry,
            n_params: self.f.params.len() as u32,
            n_slots: self.n_slots,
            n_regs: self.max_reg,
            celled: celled.collect(),
        })
    }

    // ---- emitting -----------------------------------------------------------

    fn emit(&mut self, op: Op) {
        let step_at = self.code.step_spans.len() as u32;
        let steps = self.pending.len() as u16;
        self.code.step_spans.append(&mut self.pending);
        self.code.instrs.push(Instr { op, steps, step_at });
    }

    /// A step at `span` before the next instruction.
    fn step(&mut self, span: Span) {
        if self.pending.len() == u16::MAX as usize {
            self.emit(Op::Nop);
        }
        let at = self.span(span);
        self.pending.push(at);
    }

    fn span(&mut self, span: Span) -> At {
        self.code.spans.push(span);
        (self.code.spans.len() - 1) as At
    }

    /// Spans `[op, a, b]` of an operation (absolute).
    fn spans(&mut self, op: Span, a: Span, b: Span) -> At {
        let at = self.span(op);
        self.span(a);
        self.span(b);
        at
    }

    fn abs(&self, span: Span) -> Span {
        self.f.abs(span)
    }

    fn temp(&mut self) -> Reg {
        let r = self.next_temp;
        self.next_temp += 1;
        self.max_reg = self.max_reg.max(self.next_temp);
        r
    }

    fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Binds `l` here. Steps still pending belong before it.
    fn bind(&mut self, l: Label) {
        if !self.pending.is_empty() {
            self.emit(Op::Nop);
        }
        self.labels[l.0] = Some(self.code.instrs.len() as u32);
    }

    fn emit_jump(&mut self, op: Op, l: Label) {
        self.patches.push((self.code.instrs.len(), l));
        self.emit(op);
    }

    fn patch(&mut self) -> C<()> {
        for &(i, l) in &self.patches {
            let target = self.labels[l.0].ok_or("unbound label")?;
            match &mut self.code.instrs[i].op {
                Op::Jump { to }
                | Op::JumpIf { to, .. }
                | Op::Branch { to, .. }
                | Op::BranchK { to, .. }
                | Op::BranchNull { to, .. } => *to = target,
                _ => return Err("patching a non-jump"),
            }
        }
        self.thread_jumps_to_returns();
        Ok(())
    }

    /// A jump to a return (with no step of its own) returns at once.
    fn thread_jumps_to_returns(&mut self) {
        let instrs = &mut self.code.instrs;
        for &(i, _) in &self.patches {
            if let Op::Jump { to } = instrs[i].op
                && let ret @ Op::Ret { .. } = instrs[to as usize].op
                && instrs[to as usize].steps == 0
            {
                instrs[i].op = ret;
            }
        }
    }

    fn nest(&mut self) -> C<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err("nested too deeply");
        }
        Ok(())
    }

    // ---- statements ----------------------------------------------------------

    fn stmt(&mut self, s: &'p Stmt) -> C<()> {
        self.nest()?;
        let span = self.abs(s.span);
        self.stmt = span;
        self.step(span);
        let mark = self.next_temp;
        match &s.kind {
            StmtKind::Assign { lhs, rhs } => self.assign(lhs, rhs)?,
            StmtKind::Output(e) => {
                let src = self.operand(e, true)?;
                let at = self.spans(span, self.abs(e.span), span);
                self.emit(Op::Output { src, at });
            }
            StmtKind::If { cond, then, els } => {
                let (other, end) = (self.label(), self.label());
                self.cond(cond, false, other)?;
                let before = self.assigned.clone();
                self.stmt(then)?;
                let after_then = std::mem::replace(&mut self.assigned, before);
                if let Some(els) = els {
                    self.emit_jump(Op::Jump { to: 0 }, end);
                    self.bind(other);
                    self.stmt(els)?;
                    for (a, t) in self.assigned.iter_mut().zip(after_then) {
                        *a &= t;
                    }
                } else {
                    self.bind(other);
                }
                self.bind(end);
            }
            StmtKind::While { cond, body } => {
                // The first test is covered by the statement's step; each
                // later one takes a step of its own (the loop is rotated).
                let (body_l, exit) = (self.label(), self.label());
                self.cond(cond, false, exit)?;
                self.bind(body_l);
                // What the body assigns is assigned at its end, not after
                // a loop that may not run.
                let before = self.assigned.clone();
                self.stmt(body)?;
                self.stmt = span;
                self.step(span);
                self.cond(cond, true, body_l)?;
                self.assigned = before;
                self.bind(exit);
            }
            StmtKind::Block(stmts) => {
                for s in stmts {
                    self.stmt(s)?;
                }
            }
            StmtKind::Assert(e) => {
                let src = self.operand(e, true)?;
                let at = self.spans(span, self.abs(e.span), span);
                self.emit(Op::Assert { src, at });
            }
            StmtKind::Assume(e) => {
                let src = self.operand(e, true)?;
                let at = self.spans(span, self.abs(e.span), span);
                self.emit(Op::Assume { src, at });
            }
        }
        self.next_temp = mark;
        self.depth -= 1;
        Ok(())
    }

    /// `lhs = rhs`: the value first, then the place.
    fn assign(&mut self, lhs: &'p Expr, rhs: &'p Expr) -> C<()> {
        if let ExprKind::Var(x) = &lhs.kind {
            let slot = self.slot(x)?;
            if !self.celled[slot as usize] {
                self.expr(rhs, slot)?;
                self.assigned[slot as usize] = true;
                return Ok(());
            }
        }
        let v = self.temp();
        self.expr(rhs, v)?;
        let place = self.place(lhs)?;
        match place.loc {
            Loc::Slot(dst) => self.emit(Op::Move { dst, src: v }),
            Loc::Cell(cell) => self.write_cell(cell, v),
        }
        Ok(())
    }

    /// Stores `src` into the cell `cell` refers to; when the last
    /// instruction found that cell as an array's element, the two become
    /// one.
    fn write_cell(&mut self, cell: Reg, src: Reg) {
        let last = self.code.instrs.last_mut();
        if let Some(last) = last
            && let Op::ElemCell { dst, arr, idx, at } = last.op
            && dst == cell
        {
            last.op = Op::StoreElem { arr, idx, src, at };
            return;
        }
        self.emit(Op::WriteCell { cell, src });
    }

    /// Jumps to `to` when `e`'s truth is `want`; falls through otherwise.
    fn cond(&mut self, e: &'p Expr, want: bool, to: Label) -> C<()> {
        self.nest()?;
        match &e.kind {
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
                // `&&` decides at a false operand, `||` at a true one.
                let decides = *op == BinOp::Or;
                if want == decides {
                    self.cond(a, want, to)?;
                    self.cond(b, want, to)?;
                } else {
                    let skip = self.label();
                    self.cond(a, decides, skip)?;
                    self.cond(b, want, to)?;
                    self.bind(skip);
                }
            }
            ExprKind::Unary(UnOp::Not, a) => self.cond(a, !want, to)?,
            ExprKind::Binary(op, a, b) if mask_of(*op).is_some() => {
                let mask = mask_of(*op).ok_or("no comparison")?;
                let mask = if want { mask } else { mask.not() };
                let mark = self.next_temp;
                let ra = self.operand(a, is_simple(b, &self.slots, &self.celled))?;
                let at = self.spans(self.abs(e.op), self.abs(a.span), self.abs(b.span));
                let a = ra;
                let op = match (small_num(b), &b.kind) {
                    (Some(k), _) => Op::BranchK {
                        mask,
                        a,
                        k,
                        to: 0,
                        at,
                    },
                    (None, ExprKind::Null) if mask.is_equality() => {
                        Op::BranchNull { mask, a, to: 0, at }
                    }
                    _ => {
                        let b = self.operand(b, true)?;
                        Op::Branch {
                            mask,
                            a,
                            b,
                            to: 0,
                            at,
                        }
                    }
                };
                self.emit_jump(op, to);
                self.next_temp = mark;
            }
            ExprKind::Num(_) => {
                let k = small_num(e).ok_or("a literal beyond 64 bits")?;
                if (k != 0) == want {
                    self.emit_jump(Op::Jump { to: 0 }, to);
                }
            }
            _ => {
                let mark = self.next_temp;
                let src = self.operand(e, true)?;
                let at = self.spans(self.abs(e.span), self.abs(e.span), self.abs(e.span));
                self.emit_jump(
                    Op::JumpIf {
                        src,
                        want,
                        to: 0,
                        at,
                    },
                    to,
                );
                self.next_temp = mark;
            }
        }
        self.depth -= 1;
        Ok(())
    }

    // ---- places ---------------------------------------------------------------

    fn slot(&self, x: &str) -> C<Reg> {
        self.slots.get(x).copied().ok_or("an unknown variable")
    }

    /// Resolves a place as the reference's `place` does: the base first,
    /// then each index, the base read again after an index with a call.
    fn place(&mut self, e: &'p Expr) -> C<Place> {
        self.nest()?;
        let place = match &e.kind {
            ExprKind::Var(x) => {
                let slot = self.slot(x)?;
                let loc = if self.celled[slot as usize] {
                    Loc::Cell(slot)
                } else {
                    Loc::Slot(slot)
                };
                Place {
                    loc,
                    root: self.abs(e.span),
                }
            }
            ExprKind::Deref(inner) => {
                let src = self.operand(inner, true)?;
                let dst = self.temp();
                let at = self.spans(self.abs(e.op), self.abs(inner.span), self.abs(inner.span));
                self.emit(Op::PtrCheck { dst, src, at });
                Place {
                    loc: Loc::Cell(dst),
                    root: self.abs(e.op),
                }
            }
            ExprKind::Index(base, index) => {
                let p = self.place(base)?;
                let arr = match p.loc {
                    // Checked by the element's operation, in order.
                    Loc::Slot(slot) if is_simple(index, &self.slots, &self.celled) => slot,
                    _ => self.load(&p)?,
                };
                let idx = self.operand(index, true)?;
                let arr = if calls(index) { self.load(&p)? } else { arr };
                let dst = self.temp();
                let at = self.spans(self.abs(e.op), p.root, self.abs(index.span));
                self.emit(Op::ElemCell { dst, arr, idx, at });
                Place {
                    loc: Loc::Cell(dst),
                    root: self.abs(e.op),
                }
            }
            ExprKind::Field(base, name) => {
                let p = self.place(base)?;
                let base = self.load(&p)?;
                let dst = self.temp();
                let name = self.name(&name.name);
                let at = self.spans(self.abs(e.op), p.root, p.root);
                self.emit(Op::FieldCell {
                    dst,
                    base,
                    name,
                    at,
                });
                Place {
                    loc: Loc::Cell(dst),
                    root: self.abs(e.op),
                }
            }
            _ => return Err("an assignment to a non-place"),
        };
        self.depth -= 1;
        Ok(place)
    }

    /// The value at a place, into a temporary (uninitialised fails at the
    /// place's root).
    fn load(&mut self, p: &Place) -> C<Reg> {
        let dst = self.temp();
        let at = self.span(p.root);
        match p.loc {
            Loc::Slot(src) => self.emit(Op::Read { dst, src, at }),
            Loc::Cell(cell) => self.emit(Op::ReadCell { dst, cell, at }),
        }
        Ok(dst)
    }

    fn name(&mut self, name: &str) -> u32 {
        let names = &mut self.shared.names;
        let next = names.len() as u32;
        *names.entry(name.to_string()).or_insert(next)
    }

    // ---- expressions ------------------------------------------------------------

    /// A register holding `e`'s value: the variable's own register when
    /// `direct` (nothing between this read and the use can fail or have
    /// an effect) and it lives in the frame; else a new temporary.
    fn operand(&mut self, e: &'p Expr, direct: bool) -> C<Reg> {
        if let ExprKind::Var(x) = &e.kind {
            let slot = self.slot(x)?;
            if !self.celled[slot as usize] && (direct || self.assigned[slot as usize]) {
                return Ok(slot);
            }
        }
        let t = self.temp();
        self.expr(e, t)?;
        Ok(t)
    }

    /// Compiles `e` so that its value ends in `dst`, written only by the
    /// last instruction(s), after every operand has been read.
    fn expr(&mut self, e: &'p Expr, dst: Reg) -> C<()> {
        self.nest()?;
        let mark = self.next_temp;
        let here = self.abs(e.span);
        match &e.kind {
            ExprKind::Num(_) => {
                let k = small_num(e).ok_or("a literal beyond 64 bits")?;
                self.emit(Op::Const { dst, k });
            }
            ExprKind::Null => self.emit(Op::Null { dst }),
            ExprKind::Var(x) => {
                let src = self.slot(x)?;
                let at = self.span(here);
                if self.celled[src as usize] {
                    self.emit(Op::ReadCell { dst, cell: src, at });
                } else {
                    self.emit(Op::Read { dst, src, at });
                }
            }
            ExprKind::Input => self.emit(Op::Input { dst }),
            ExprKind::AddrOf(x) => {
                let src = self.slot(&x.name)?;
                self.emit(Op::Move { dst, src });
            }
            ExprKind::Deref(inner) => {
                let src = self.operand(inner, true)?;
                let at = self.spans(self.abs(e.op), self.abs(inner.span), here);
                self.emit(Op::Deref { dst, src, at });
            }
            ExprKind::Alloc(inner) => {
                let src = self.operand(inner, true)?;
                let at = self.spans(self.stmt, self.abs(inner.span), here);
                self.emit(Op::Alloc { dst, src, at });
            }
            ExprKind::Unary(op, inner) => {
                let src = self.operand(inner, true)?;
                let at = self.spans(here, self.abs(inner.span), here);
                self.emit(match op {
                    UnOp::Neg => Op::Neg { dst, src, at },
                    UnOp::Not => Op::Not { dst, src, at },
                });
            }
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
                // Through branches: the value is 0 or 1.
                let (decided, end) = (self.label(), self.label());
                let decides = *op == BinOp::Or;
                self.cond(a, decides, decided)?;
                let rb = self.operand(b, true)?;
                let at = self.spans(here, self.abs(b.span), here);
                self.emit(Op::Not { dst, src: rb, at });
                self.emit(Op::Not { dst, src: dst, at });
                self.emit_jump(Op::Jump { to: 0 }, end);
                self.bind(decided);
                self.emit(Op::Const {
                    dst,
                    k: i64::from(decides),
                });
                self.bind(end);
            }
            ExprKind::Binary(op, a, b) => self.binary(e, *op, a, b, dst)?,
            ExprKind::Index(base, index) => self.index(e, base, index, dst, false)?,
            ExprKind::Field(base, name) => {
                let base_r = self.operand(base, true)?;
                let name = self.name(&name.name);
                let at = self.spans(self.abs(e.op), self.abs(base.span), here);
                self.emit(Op::Field {
                    dst,
                    base: base_r,
                    name,
                    at,
                });
            }
            ExprKind::Call(g, args) => self.call(e, g.name.as_str(), args, dst)?,
            ExprKind::Array(elems) => {
                let first = self.consecutive(elems.iter())?;
                let n = elems.len() as u32;
                self.emit(Op::MakeArray { dst, first, n });
            }
            ExprKind::Record(fields) => {
                let first = self.consecutive(fields.iter().map(|(_, x)| x))?;
                let names: Vec<u32> = fields.iter().map(|(n, _)| self.name(&n.name)).collect();
                let shapes = &mut self.shared.shapes;
                let next = shapes.len() as u32;
                let shape = *shapes.entry(names).or_insert(next);
                self.emit(Op::MakeRecord { dst, first, shape });
            }
            ExprKind::Error => return Err("a syntax error node"),
        }
        self.next_temp = mark;
        self.depth -= 1;
        Ok(())
    }

    /// `base[index]` into `dst`; `again`: the value is indexed again.
    fn index(
        &mut self,
        e: &'p Expr,
        base: &'p Expr,
        index: &'p Expr,
        dst: Reg,
        again: bool,
    ) -> C<()> {
        let arr = match &base.kind {
            ExprKind::Index(b, i) => {
                let t = self.temp();
                self.nest()?;
                self.index(base, b, i, t, true)?;
                self.depth -= 1;
                t
            }
            _ => self.operand(base, is_simple(index, &self.slots, &self.celled))?,
        };
        let idx = self.operand(index, true)?;
        let at = self.spans(self.abs(e.op), self.abs(base.span), self.abs(index.span));
        self.emit(Op::Elem {
            dst,
            arr,
            idx,
            at,
            again,
        });
        Ok(())
    }

    fn binary(&mut self, e: &'p Expr, op: BinOp, a: &'p Expr, b: &'p Expr, dst: Reg) -> C<()> {
        let ra = self.operand(a, is_simple(b, &self.slots, &self.celled))?;
        let at = self.spans(self.abs(e.op), self.abs(a.span), self.abs(b.span));
        let right = match small_num(b) {
            Some(k) => Right::Const(k),
            None => Right::Reg(self.operand(b, true)?),
        };
        self.emit(binary_op(op, dst, ra, right, at)?);
        Ok(())
    }

    fn call(&mut self, e: &'p Expr, g: &str, args: &'p [Expr], dst: Reg) -> C<()> {
        let func = *(self.shared.fn_index.get(g)).ok_or("a call of an unknown function")?;
        let callee = &self.shared.program.functions[func as usize];
        if callee.params.len() != args.len() {
            return Err("a call with the wrong number of arguments");
        }
        if self.shared.inlinable[func as usize] {
            return self.inline(e, callee, args, dst);
        }
        let first = self.consecutive(args.iter())?;
        // The call's own step, after its arguments, at the statement.
        self.step(self.stmt);
        let at = self.span(self.abs(e.span));
        self.span(self.stmt);
        self.emit(Op::Call {
            func,
            first,
            dst,
            at,
        });
        Ok(())
    }

    /// A call of a small function that calls none, compiled in place: the
    /// arguments become its parameters' registers, and what a call does
    /// besides (its step, the depth limit, fresh locals) is kept.
    fn inline(&mut self, e: &'p Expr, callee: &'p Function, args: &'p [Expr], dst: Reg) -> C<()> {
        let first = self.consecutive(args.iter())?;
        self.step(self.stmt);
        let at = self.span(self.abs(e.span));
        self.emit(Op::Enter { at });
        let mut inner = FnCompiler::at_register(self.code, self.shared, callee, first);
        inner.depth = self.depth;
        let n_locals = callee.locals.len() as u32;
        if n_locals > 0 {
            let from = first + callee.params.len() as u32;
            inner.emit(Op::Clear {
                first: from,
                n: n_locals,
            });
        }
        for s in &callee.body {
            inner.stmt(s)?;
        }
        inner.stmt = callee.abs(callee.ret_span);
        inner.expr(&callee.ret, dst)?;
        inner.patch()?;
        self.max_reg = self.max_reg.max(inner.max_reg);
        Ok(())
    }

    /// Evaluates `exprs` in order into consecutive new temporaries; the first.
    fn consecutive(&mut self, exprs: impl ExactSizeIterator<Item = &'p Expr>) -> C<Reg> {
        let n = exprs.len() as u32;
        let first = self.next_temp;
        for _ in 0..n {
            self.temp();
        }
        for (k, x) in exprs.enumerate() {
            self.expr(x, first + k as u32)?;
        }
        Ok(first)
    }
}

/// Calls of functions this small are compiled in place.
const MAX_INLINED_EXPRS: u32 = 64;

/// Whether calls of `f` are compiled in place: `f` is small, calls no
/// function (so the call depth inside it is its caller's plus one, checked
/// once) and takes no variable's address (its variables need no cells).
fn inlinable(f: &Function) -> bool {
    let mut leaf = f.expr_count <= MAX_INLINED_EXPRS;
    f.walk_exprs(&mut |e| {
        leaf &= !matches!(e.kind, ExprKind::Call(..) | ExprKind::AddrOf(_));
    });
    leaf
}

/// A literal that fits 64 bits.
fn small_num(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Num(n) => n.to_i64(),
        _ => None,
    }
}

/// Evaluating `e` can neither fail nor have an effect, other than a read
/// of a frame variable whose check its user makes in order.
fn is_simple(e: &Expr, slots: &HashMap<&str, Reg>, celled: &[bool]) -> bool {
    match &e.kind {
        ExprKind::Num(_) => small_num(e).is_some(),
        ExprKind::Null => true,
        ExprKind::Var(x) => slots.get(x.as_str()).is_some_and(|&s| !celled[s as usize]),
        _ => false,
    }
}

/// Whether `e` contains a call (which may assign any variable's cell).
fn calls(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Call(..)) || e.children().iter().any(|c| calls(c))
}

/// The right operand of a binary operation: a literal, or a register.
#[derive(Clone, Copy)]
enum Right {
    Const(i64),
    Reg(Reg),
}

/// The instruction for `a op right` into `dst`.
fn binary_op(op: BinOp, dst: Reg, a: Reg, right: Right, at: At) -> C<Op> {
    let (arith, mask) = (arith_of(op), mask_of(op));
    Ok(match (right, arith, mask) {
        (Right::Const(k), Some(Arith::Add), _) => Op::AddK { dst, a, k, at },
        (Right::Const(k), Some(op), _) => Op::BinK { op, dst, a, k, at },
        (Right::Const(k), _, Some(mask)) => Op::CmpK {
            mask,
            dst,
            a,
            k,
            at,
        },
        (Right::Reg(b), Some(Arith::Add), _) => Op::Add { dst, a, b, at },
        (Right::Reg(b), Some(op), _) => Op::Bin { op, dst, a, b, at },
        (Right::Reg(b), _, Some(mask)) => Op::Cmp {
            mask,
            dst,
            a,
            b,
            at,
        },
        _ => return Err("an unknown operator"),
    })
}

fn arith_of(op: BinOp) -> Option<Arith> {
    Some(match op {
        BinOp::Add => Arith::Add,
        BinOp::Sub => Arith::Sub,
        BinOp::Mul => Arith::Mul,
        BinOp::Div => Arith::Div,
        _ => return None,
    })
}

fn mask_of(op: BinOp) -> Option<Mask> {
    Some(match op {
        BinOp::Lt => Mask::LT,
        BinOp::Le => Mask::LE,
        BinOp::Gt => Mask::GT,
        BinOp::Ge => Mask::GE,
        BinOp::Eq => Mask::EQ,
        BinOp::Ne => Mask::NE,
        _ => return None,
    })
}
