//! The fast engine's machine: runs [`Code`] with 64-bit integers.
//!
//! Anything outside its fast path (an overflow, a value of the wrong kind,
//! a literal or input beyond 64 bits, the cell limit within one literal)
//! ends the run as [`Exit::Bail`]; the caller then runs the reference
//! interpreter from the start, which is deterministic.

use super::code::{Arith, At, Code, FuncCode, Mask, Op, Reg, Val};
use crate::TargetKind;
use crate::interp::exec::{MAX_CELLS, MAX_OUTPUTS};
use crate::interp::value::{InputArray, Value};
use crate::interp::{Limits, Outcome};
use crate::syntax::Span;
use num_bigint::BigInt;
use num_traits::ToPrimitive;

/// How a run left the machine before `main` returned.
#[derive(Debug)]
pub(super) enum Exit {
    Outcome(Outcome),
    /// The reference must decide this run.
    Bail(&'static str),
}

type R<T> = Result<T, Exit>;

/// Where the interpreter's loop stopped.
enum Stop {
    /// `main` returned this value.
    Returned(Val),
    /// One operation was run (`execute_one`); the next one's index.
    After(usize),
}

/// Steps between two looks at the caller's deadline.
const CHECK_EVERY: u64 = 1 << 16;

/// Past this depth the reference's host stack, not its depth limit, may
/// end a run first: deeper runs are the reference's to decide.
const HOST_DEPTH: u32 = 50_000;

/// Rows read from input arrays are kept for the run; a run that reads
/// more is the reference's.
const MAX_INPUT_ROWS: usize = 1 << 20;

/// A suspended caller.
struct Frame {
    ret_pc: u32,
    base: usize,
    dst: Reg,
}

pub(super) struct Machine<'c> {
    code: &'c Code,
    limits: Limits,
    regs: Vec<Val>,
    /// The current frame's first register.
    base: usize,
    frames: Vec<Frame>,
    cells: Vec<Val>,
    /// The cells of arrays and records, each a run of this list.
    lists: Vec<u32>,
    /// The input arrays: main's, and the rows read from them.
    inputs: Vec<InputArray>,
    input: &'c [BigInt],
    pub input_reads: usize,
    pub outputs: Vec<i64>,
    /// Steps left before the next look at the limit and the deadline, out
    /// of `given`; `steps_done` counts those of earlier grants.
    fuel: u64,
    given: u64,
    steps_done: u64,
}

impl<'c> Machine<'c> {
    pub(super) fn new(code: &'c Code, input: &'c [BigInt], limits: Limits) -> Machine<'c> {
        Machine {
            code,
            limits,
            regs: Vec::new(),
            base: 0,
            frames: Vec::new(),
            cells: Vec::new(),
            lists: Vec::new(),
            inputs: Vec::new(),
            input,
            input_reads: 0,
            outputs: Vec::new(),
            fuel: 0,
            given: 0,
            steps_done: 0,
        }
    }

    pub(super) fn steps(&self) -> u64 {
        self.steps_done + self.given - self.fuel
    }

    /// Runs `main` on its arguments; its return value.
    pub(super) fn run_main(&mut self, args: &[Val]) -> R<i64> {
        if self.limits.max_call_depth == 0 {
            return Err(Exit::Bail("a call-depth limit of 0"));
        }
        let main = &self.code.funcs[self.code.main];
        self.regs.resize(main.n_regs as usize, Val::Uninit);
        self.regs[..args.len()].copy_from_slice(args);
        self.make_cells(main, Span::default())?;
        match self.execute(main.entry as usize)? {
            Val::Int(n) => Ok(n),
            _ => Err(Exit::Bail("main returned a non-integer")),
        }
    }

    // ---- for the native tier -------------------------------------------------------

    pub(super) fn code(&self) -> &'c Code {
        self.code
    }

    /// Where the cells and the cell lists are now: native code reads and
    /// writes them in place (until the next allocation moves them).
    pub(super) fn heap(&mut self) -> (*mut Val, *const u32) {
        (self.cells.as_mut_ptr(), self.lists.as_ptr())
    }

    /// The limits of the run.
    pub(super) fn limits(&self) -> Limits {
        self.limits
    }

    /// A frame of `n` registers at 0, in which the native tier runs single
    /// operations (`execute_one`) on the registers it hands over.
    pub(super) fn scratch_frame(&mut self, n: usize) {
        self.base = 0;
        if self.regs.len() < n {
            self.regs.resize(n, Val::Uninit);
        }
    }

    pub(super) fn fuel(&self) -> u64 {
        self.fuel
    }

    /// Counts `n` steps from `fuel` one by one (near the limit, or at a
    /// look at the deadline); [`Machine::fuel`] is then what is left.
    pub(super) fn take_steps(&mut self, fuel: u64, n: u64, step_at: u32) -> R<()> {
        self.fuel = fuel;
        self.steps_one_by_one(n, step_at)
    }

    /// Ends a native run with `fuel` left, for [`Machine::steps`].
    pub(super) fn set_fuel(&mut self, fuel: u64) {
        self.fuel = fuel;
    }

    /// An uninitialised value used at `at`.
    pub(super) fn uninitialised(&self, at: At) -> Exit {
        self.fail(TargetKind::Uninitialized, at)
    }

    /// The cells of function `func`'s address-taken slots, made on entry
    /// by a call whose spans start at `call_at` (`None`: main's run).
    pub(super) fn make_cells_of(&mut self, func: usize, call_at: Option<At>) -> R<()> {
        let stmt = call_at.map_or(Span::default(), |at| self.span(at + 1));
        let code = self.code;
        self.make_cells(&code.funcs[func], stmt)
    }

    // ---- registers and cells --------------------------------------------------

    #[inline(always)]
    pub(super) fn get(&self, r: Reg) -> Val {
        self.regs[self.base + r as usize]
    }

    /// `get`, read field by field when it is an integer or a pointer: a
    /// whole-value load just after the narrower stores that wrote it would
    /// wait for them (no store-to-load forwarding), and copies are mostly
    /// of integers and pointers. Halved the time of pointer chasing.
    #[inline(always)]
    fn copy_of(&self, r: Reg) -> Val {
        match self.regs[self.base + r as usize] {
            Val::Int(n) => Val::Int(n),
            Val::Ptr(p) => Val::Ptr(p),
            v => v,
        }
    }

    #[inline(always)]
    pub(super) fn set(&mut self, r: Reg, v: Val) {
        self.regs[self.base + r as usize] = v;
    }

    fn span(&self, at: At) -> Span {
        self.code.spans[at as usize]
    }

    fn fail(&self, kind: TargetKind, at: At) -> Exit {
        Exit::Outcome(Outcome::Error {
            kind,
            span: self.span(at),
        })
    }

    /// An operand's value, failing at `at` when it is uninitialised.
    #[inline(always)]
    fn val(&self, r: Reg, at: At) -> R<Val> {
        match self.copy_of(r) {
            Val::Uninit => Err(self.fail(TargetKind::Uninitialized, at)),
            v => Ok(v),
        }
    }

    #[inline(always)]
    fn int(&self, r: Reg, at: At) -> R<i64> {
        match self.get(r) {
            Val::Int(n) => Ok(n),
            other => Err(self.not_int(other, at)),
        }
    }

    #[cold]
    fn not_int(&self, v: Val, at: At) -> Exit {
        match v {
            Val::Uninit => self.fail(TargetKind::Uninitialized, at),
            _ => Exit::Bail("an integer expected"),
        }
    }

    fn new_cell(&mut self, v: Val, stmt: Span) -> R<u32> {
        if self.cells.len() >= MAX_CELLS {
            return Err(Exit::Outcome(Outcome::StepLimit { span: stmt }));
        }
        self.cells.push(v);
        Ok((self.cells.len() - 1) as u32)
    }

    /// Moves the current frame's address-taken slots into new cells.
    fn make_cells(&mut self, f: &FuncCode, stmt: Span) -> R<()> {
        for &s in &f.celled {
            let c = self.new_cell(self.copy_of(s), stmt)?;
            self.set(s, Val::Ptr(c));
        }
        Ok(())
    }

    /// The cell a pointer or cell reference in `r` names.
    fn cell_of(&self, r: Reg) -> R<usize> {
        match self.get(r) {
            Val::Ptr(c) => Ok(c as usize),
            _ => Err(Exit::Bail("a cell reference expected")),
        }
    }

    /// The value in cell `c`; uninitialised fails at `at`.
    fn read_cell(&self, c: usize, at: At) -> R<Val> {
        // Integers and pointers rebuilt field by field (see `copy_of`).
        match self.cells[c] {
            Val::Int(n) => Ok(Val::Int(n)),
            Val::Ptr(p) => Ok(Val::Ptr(p)),
            Val::Uninit => Err(self.fail(TargetKind::Uninitialized, at)),
            v => Ok(v),
        }
    }

    /// `first..first + n` in new cells, listed together; the list's start.
    fn new_list(&mut self, first: Reg, n: u32) -> R<u32> {
        if self.cells.len() + n as usize > MAX_CELLS {
            // The reference makes the cells one by one, between the
            // elements' evaluations: which failure comes first is its call.
            return Err(Exit::Bail("the cell limit within a literal"));
        }
        let start = self.lists.len() as u32;
        for k in 0..n {
            let v = self.copy_of(first + k);
            self.cells.push(v);
            self.lists.push((self.cells.len() - 1) as u32);
        }
        Ok(start)
    }

    /// An input array of main's, as a value of the machine.
    pub(super) fn input_array(&mut self, a: InputArray) -> Val {
        self.inputs.push(a);
        Val::Input((self.inputs.len() - 1) as u32)
    }

    /// The cell of element `idx` of the array in `arr`.
    fn elem_cell(&self, arr: Reg, idx: Reg, at: At) -> R<usize> {
        let a = self.val(arr, at + 1)?;
        let i = self.int(idx, at + 2)?;
        let Val::Arr { start, len } = a else {
            return Err(Exit::Bail("indexing a value that is not an array"));
        };
        self.elem_of(start, len, i, at)
    }

    #[inline(always)]
    fn elem_of(&self, start: u32, len: u32, i: i64, at: At) -> R<usize> {
        match u32::try_from(i) {
            Ok(i) if i < len => Ok(self.lists[(start + i) as usize] as usize),
            _ => Err(self.fail(TargetKind::OutOfBounds, at)),
        }
    }

    /// `arr[idx]`'s value, of an array or an input array.
    fn elem(&mut self, arr: Reg, idx: Reg, at: At, again: bool) -> R<Val> {
        let a = self.val(arr, at + 1)?;
        let i = self.int(idx, at + 2)?;
        match a {
            Val::Arr { start, len } => self.read_cell(self.elem_of(start, len, i, at)?, at),
            Val::Input(k) => self.input_elem(k, i, again),
            _ => Err(Exit::Bail("indexing a value that is not an array")),
        }
    }

    /// Element `i` of input array `k` (never out of bounds).
    fn input_elem(&mut self, k: u32, i: i64, again: bool) -> R<Val> {
        let v = match self.inputs[k as usize].get_small(i, again) {
            std::borrow::Cow::Borrowed(v) => v.clone(),
            std::borrow::Cow::Owned(v) => v,
        };
        match v {
            Value::Int(n) => n
                .to_i64()
                .map(Val::Int)
                .ok_or(Exit::Bail("an input beyond 64 bits")),
            Value::Input(row) if self.inputs.len() < MAX_INPUT_ROWS => Ok(self.input_array(row)),
            _ => Err(Exit::Bail("an input array's element")),
        }
    }

    /// The cell of field `name` of the record in `base`, or of the record
    /// a pointer in `base` points to.
    fn field_cell(&self, base: Reg, name: u32, at: At) -> R<usize> {
        let record = match self.val(base, at + 1)? {
            Val::Ptr(c) => self.read_cell(c as usize, at)?,
            Val::Null => return Err(self.fail(TargetKind::NullDeref, at)),
            v => v,
        };
        let Val::Rec { start, shape } = record else {
            return Err(Exit::Bail("a field of a value that is not a record"));
        };
        let code = self.code;
        match code.field_at[(shape * code.n_names + name) as usize] {
            u32::MAX => Err(Exit::Bail("a record without the field")),
            k => Ok(self.lists[(start + k) as usize] as usize),
        }
    }

    // ---- steps -----------------------------------------------------------------

    /// Near the limit (or a look at the deadline): the steps one at a
    /// time, so that the limit is reported at the right statement.
    #[cold]
    fn steps_one_by_one(&mut self, n: u64, step_at: u32) -> R<()> {
        for k in 0..n {
            if self.fuel == 0 {
                let at = self.code.step_spans[step_at as usize + k as usize];
                self.refuel(at)?;
            }
            self.fuel -= 1;
        }
        Ok(())
    }

    fn refuel(&mut self, at: At) -> R<()> {
        self.steps_done += self.given - self.fuel;
        self.given = 0;
        self.fuel = 0;
        let left = self.limits.max_steps - self.steps_done;
        if left == 0 || crate::deadline::passed() {
            let span = self.span(at);
            return Err(Exit::Outcome(Outcome::StepLimit { span }));
        }
        self.given = left.min(CHECK_EVERY);
        self.fuel = self.given;
        Ok(())
    }

    // ---- the loop ----------------------------------------------------------------

    /// Runs from `pc` until `main` returns; the returned value.
    fn execute(&mut self, pc: usize) -> R<Val> {
        // The fuel is a local of the loop: kept in a register, not
        // reloaded after every store to the registers or cells.
        let mut fuel = self.fuel;
        let result = self.execute_with::<false>(pc, &mut fuel);
        self.fuel = fuel;
        match result? {
            Stop::Returned(v) => Ok(v),
            Stop::After(_) => unreachable!("a whole run stops only at main's return"),
        }
    }

    /// Runs the one operation at `pc`, its steps not counted (the native
    /// tier counts them): where the run goes next. Not for calls and
    /// returns, which the native tier makes itself.
    pub(super) fn execute_one(&mut self, pc: usize) -> R<usize> {
        let mut no_fuel = 0;
        match self.execute_with::<true>(pc, &mut no_fuel)? {
            Stop::After(next) => Ok(next),
            Stop::Returned(_) => unreachable!("a return is the native tier's own"),
        }
    }

    /// The interpreter's loop; with `ONE`, it stops after one operation
    /// (and counts no steps). One loop for both keeps a single copy of
    /// each operation's semantics; `ONE` is a constant, so the whole run's
    /// loop is compiled without the test.
    fn execute_with<const ONE: bool>(&mut self, mut pc: usize, fuel: &mut u64) -> R<Stop> {
        let code = self.code;
        let instrs = &code.instrs[..];
        loop {
            let ins = &instrs[pc];
            pc += 1;
            if ins.steps != 0 && !ONE {
                let n = u64::from(ins.steps);
                if *fuel >= n {
                    *fuel -= n;
                } else {
                    self.fuel = *fuel;
                    let taken = self.steps_one_by_one(n, ins.step_at);
                    *fuel = self.fuel;
                    taken?;
                }
            }
            match ins.op {
                Op::Nop => {}
                Op::Const { dst, k } => self.set(dst, Val::Int(k)),
                Op::Null { dst } => self.set(dst, Val::Null),
                Op::Move { dst, src } => self.set(dst, self.copy_of(src)),
                Op::Read { dst, src, at } => match self.copy_of(src) {
                    Val::Uninit => return Err(self.fail(TargetKind::Uninitialized, at)),
                    v => self.set(dst, v),
                },
                Op::ReadCell { dst, cell, at } => {
                    let v = self.read_cell(self.cell_of(cell)?, at)?;
                    self.set(dst, v);
                }
                Op::WriteCell { cell, src } => {
                    let c = self.cell_of(cell)?;
                    self.cells[c] = self.copy_of(src);
                }
                Op::Input { dst } => {
                    let v = match self.input.get(self.input_reads) {
                        Some(n) => n.to_i64().ok_or(Exit::Bail("an input beyond 64 bits"))?,
                        None => 0,
                    };
                    self.input_reads += 1;
                    self.set(dst, Val::Int(v));
                }
                Op::Deref { dst, src, at } => {
                    let c = self.pointer(src, at)?;
                    let v = self.read_cell(c as usize, at)?;
                    self.set(dst, v);
                }
                Op::PtrCheck { dst, src, at } => {
                    let c = self.pointer(src, at)?;
                    self.set(dst, Val::Ptr(c));
                }
                Op::Alloc { dst, src, at } => {
                    let v = self.val(src, at + 1)?;
                    let c = self.new_cell(v, self.span(at))?;
                    self.set(dst, Val::Ptr(c));
                }
                Op::Neg { dst, src, at } => {
                    let n = self.int(src, at + 1)?;
                    let n = n.checked_neg().ok_or(Exit::Bail("an overflow"))?;
                    self.set(dst, Val::Int(n));
                }
                Op::Not { dst, src, at } => {
                    let n = self.int(src, at + 1)?;
                    self.set(dst, Val::Int(i64::from(n == 0)));
                }
                Op::Add { dst, a, b, at } => {
                    let x = self.int(a, at + 1)?;
                    let y = self.int(b, at + 2)?;
                    let v = x.checked_add(y).ok_or(Exit::Bail("an overflow"))?;
                    self.set(dst, Val::Int(v));
                }
                Op::AddK { dst, a, k, at } => {
                    let x = self.int(a, at + 1)?;
                    let v = x.checked_add(k).ok_or(Exit::Bail("an overflow"))?;
                    self.set(dst, Val::Int(v));
                }
                Op::Bin { op, dst, a, b, at } => {
                    let x = self.int(a, at + 1)?;
                    let y = self.int(b, at + 2)?;
                    let v = self.arith(op, x, y, at)?;
                    self.set(dst, Val::Int(v));
                }
                Op::BinK { op, dst, a, k, at } => {
                    let x = self.int(a, at + 1)?;
                    let v = self.arith(op, x, k, at)?;
                    self.set(dst, Val::Int(v));
                }
                Op::Cmp {
                    mask,
                    dst,
                    a,
                    b,
                    at,
                } => {
                    let holds = self.compare(mask, a, b, at)?;
                    self.set(dst, Val::Int(i64::from(holds)));
                }
                Op::CmpK {
                    mask,
                    dst,
                    a,
                    k,
                    at,
                } => {
                    let holds = mask.holds(self.int(a, at + 1)?, k);
                    self.set(dst, Val::Int(i64::from(holds)));
                }
                Op::Jump { to } => pc = to as usize,
                Op::JumpIf { src, want, to, at } => {
                    if (self.int(src, at + 1)? != 0) == want {
                        pc = to as usize;
                    }
                }
                Op::Branch { mask, a, b, to, at } => {
                    if self.compare(mask, a, b, at)? {
                        pc = to as usize;
                    }
                }
                Op::BranchK { mask, a, k, to, at } => {
                    if mask.holds(self.int(a, at + 1)?, k) {
                        pc = to as usize;
                    }
                }
                Op::MakeArray { dst, first, n } => {
                    let start = self.new_list(first, n)?;
                    self.set(dst, Val::Arr { start, len: n });
                }
                Op::MakeRecord { dst, first, shape } => {
                    let n = code.shapes[shape as usize].len() as u32;
                    let start = self.new_list(first, n)?;
                    self.set(dst, Val::Rec { start, shape });
                }
                Op::Elem {
                    dst,
                    arr,
                    idx,
                    at,
                    again,
                } => {
                    let v = self.elem(arr, idx, at, again)?;
                    self.set(dst, v);
                }
                Op::StoreElem { arr, idx, src, at } => {
                    let c = self.elem_cell(arr, idx, at)?;
                    self.cells[c] = self.copy_of(src);
                }
                Op::BranchNull { mask, a, to, at } => {
                    let equal = match self.val(a, at + 1)? {
                        Val::Null => true,
                        Val::Ptr(_) => false,
                        _ => return Err(Exit::Bail("`==` on values that are not pointers")),
                    };
                    if equal == (mask == Mask::EQ) {
                        pc = to as usize;
                    }
                }
                Op::ElemCell { dst, arr, idx, at } => {
                    let c = self.elem_cell(arr, idx, at)?;
                    self.set(dst, Val::Ptr(c as u32));
                }
                Op::Field {
                    dst,
                    base,
                    name,
                    at,
                } => {
                    let c = self.field_cell(base, name, at)?;
                    let v = self.read_cell(c, at)?;
                    self.set(dst, v);
                }
                Op::FieldCell {
                    dst,
                    base,
                    name,
                    at,
                } => {
                    let c = self.field_cell(base, name, at)?;
                    self.set(dst, Val::Ptr(c as u32));
                }
                Op::Call {
                    func,
                    first,
                    dst,
                    at,
                } => pc = self.call(func, first, dst, at, pc)?,
                Op::Ret { src, at } => {
                    let v = match self.copy_of(src) {
                        Val::Uninit => return Err(self.fail(TargetKind::Uninitialized, at + 1)),
                        v => v,
                    };
                    let Some(caller) = self.frames.pop() else {
                        return Ok(Stop::Returned(v));
                    };
                    self.base = caller.base;
                    self.set(caller.dst, v);
                    pc = caller.ret_pc as usize;
                }
                Op::Enter { at } => self.enter(at)?,
                Op::Clear { first, n } => {
                    let from = self.base + first as usize;
                    self.regs[from..from + n as usize].fill(Val::Uninit);
                }
                Op::Output { src, at } => {
                    let n = self.int(src, at + 1)?;
                    if self.outputs.len() >= MAX_OUTPUTS {
                        let span = self.span(at);
                        return Err(Exit::Outcome(Outcome::StepLimit { span }));
                    }
                    self.outputs.push(n);
                }
                Op::Assert { src, at } => {
                    if self.int(src, at + 1)? == 0 {
                        return Err(self.fail(TargetKind::Assert, at));
                    }
                }
                Op::Assume { src, at } => {
                    if self.int(src, at + 1)? == 0 {
                        let span = self.span(at);
                        return Err(Exit::Outcome(Outcome::AssumeFailed { span }));
                    }
                }
            }
            if ONE {
                return Ok(Stop::After(pc));
            }
        }
    }

    /// The cell a pointer operand points to; null fails at `at`.
    fn pointer(&self, src: Reg, at: At) -> R<u32> {
        match self.val(src, at + 1)? {
            Val::Ptr(c) => Ok(c),
            Val::Null => Err(self.fail(TargetKind::NullDeref, at)),
            _ => Err(Exit::Bail("dereferencing a value that is not a pointer")),
        }
    }

    #[inline(always)]
    fn arith(&self, op: Arith, x: i64, y: i64, at: At) -> R<i64> {
        let v = match op {
            Arith::Add => x.checked_add(y),
            Arith::Sub => x.checked_sub(y),
            Arith::Mul => x.checked_mul(y),
            Arith::Div => {
                if y == 0 {
                    return Err(self.fail(TargetKind::DivByZero, at));
                }
                // Truncates toward zero, as the reference's BigInt does.
                x.checked_div(y)
            }
        };
        v.ok_or(Exit::Bail("an overflow"))
    }

    /// Whether `a` compares to `b` as `mask` says.
    #[inline(always)]
    fn compare(&self, mask: Mask, a: Reg, b: Reg, at: At) -> R<bool> {
        match (self.get(a), self.get(b)) {
            (Val::Int(x), Val::Int(y)) => Ok(mask.holds(x, y)),
            _ => self.compare_values(mask, a, b, at),
        }
    }

    /// [`Machine::compare`] off the integers: `==` and `!=` on pointers,
    /// an uninitialised operand, or a value of the wrong kind.
    #[cold]
    fn compare_values(&self, mask: Mask, a: Reg, b: Reg, at: At) -> R<bool> {
        let x = self.val(a, at + 1)?;
        let y = self.val(b, at + 2)?;
        let equal = match (x, y) {
            _ if !mask.is_equality() => return Err(Exit::Bail("an integer expected")),
            (Val::Int(x), Val::Int(y)) => x == y,
            (Val::Null, Val::Null) => true,
            (Val::Ptr(x), Val::Ptr(y)) => x == y,
            (Val::Null, Val::Ptr(_)) | (Val::Ptr(_), Val::Null) => false,
            _ => {
                return Err(Exit::Bail(
                    "`==` on values that are not integers or pointers",
                ));
            }
        };
        Ok(equal == (mask == Mask::EQ))
    }

    /// The depth limits of a call at `at`, from the current frame.
    #[inline(always)]
    fn enter(&self, at: At) -> R<()> {
        self.depth_limits(self.frames.len() as u32 + 1, at)
    }

    /// The depth limits of a call at `at` that makes the call depth `depth`.
    #[inline(always)]
    pub(super) fn depth_limits(&self, depth: u32, at: At) -> R<()> {
        if depth >= self.limits.max_call_depth {
            let span = self.span(at);
            return Err(Exit::Outcome(Outcome::CallDepthLimit { span }));
        }
        if depth >= HOST_DEPTH {
            return Err(Exit::Bail(
                "a recursion deeper than the host stack may allow",
            ));
        }
        Ok(())
    }

    /// Enters `func` with its arguments in `first..`; the callee's entry.
    fn call(&mut self, func: u32, first: Reg, dst: Reg, at: At, ret_pc: usize) -> R<usize> {
        self.enter(at)?;
        let code = self.code;
        let f = &code.funcs[func as usize];
        // The callee's frame starts at its arguments, the caller's last
        // live registers (temporaries are allocated as a stack): its
        // parameters need no copy. Its locals start uninitialised; its
        // temporaries are written before they are read.
        let new_base = self.base + first as usize;
        let top = new_base + f.n_regs as usize;
        if self.regs.len() < top {
            self.regs.resize(top.max(2 * self.regs.len()), Val::Uninit);
        }
        self.regs[new_base + f.n_params as usize..new_base + f.n_slots as usize].fill(Val::Uninit);
        self.frames.push(Frame {
            ret_pc: ret_pc as u32,
            base: self.base,
            dst,
        });
        self.base = new_base;
        if !f.celled.is_empty() {
            self.make_cells(f, self.span(at + 1))?;
        }
        Ok(f.entry as usize)
    }
}
