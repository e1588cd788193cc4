//! One function of the bytecode lowered to Cranelift IR.
//!
//! Each bytecode register is two variables (tag and payload); the
//! frontend builds SSA from them, so a loop's integers stay in machine
//! registers. Each bytecode operation gets a block. An operation handed
//! to the interpreter first stores the registers it reads in the
//! function's spill area and reloads the one it writes.

use super::super::code::{Arith, Code, FuncCode, Instr, Mask, Op, Reg, tag};
use super::{EXIT, Helpers, TAKEN, offset};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, Block, Function, InstBuilder, MemFlagsData, Signature, StackSlot, StackSlotData,
    StackSlotKind, Type, UserFuncName, Value, types,
};
use cranelift_codegen::isa::TargetIsa;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};

const I64: Type = types::I64;

/// Every memory access of native code is to memory it owns or was given.
const TRUSTED: MemFlagsData = MemFlagsData::trusted();

/// Bytes of one slot in the spill area.
const SLOT: i64 = 16;

/// A status a function returns when it ran off its end, which the
/// compiler never lets happen.
const FELL_OFF: i64 = 3;

/// A bound on the host stack one native call of any function of `code`
/// takes: its spill area, room for the register allocator's own spills,
/// and the frame's fixed part.
pub(super) fn frame_bound(code: &Code) -> usize {
    let most = code.funcs.iter().map(|f| f.n_regs as usize).max();
    most.unwrap_or(0) * 4 * SLOT as usize + 1024
}

/// The signature of every native function and of every helper.
fn signature(isa: &dyn TargetIsa, params: usize) -> Signature {
    let mut sig = Signature::new(isa.default_call_conv());
    sig.params
        .extend(std::iter::repeat_n(AbiParam::new(I64), params));
    sig.returns.push(AbiParam::new(I64));
    sig
}

/// Lowers function `func` of `code` into `out`.
pub(super) fn function(
    code: &Code,
    func: usize,
    isa: &dyn TargetIsa,
    out: &mut Function,
    builder: &mut FunctionBuilderContext,
) {
    out.signature = signature(isa, 3);
    out.name = UserFuncName::user(0, func as u32);
    let start = code.funcs[func].entry as usize;
    let end = code
        .funcs
        .get(func + 1)
        .map_or(code.instrs.len(), |f| f.entry as usize);
    let b = FunctionBuilder::new(out, builder);
    let mut lower = Lower::new(code, func, start..end, isa, b);
    lower.prologue();
    for pc in start..end {
        lower.operation(pc);
    }
    lower.finish();
}

struct Lower<'a> {
    code: &'a Code,
    func: usize,
    f: &'a FuncCode,
    start: usize,
    end: usize,
    b: FunctionBuilder<'a>,
    tags: Vec<Variable>,
    bits: Vec<Variable>,
    fuel: Variable,
    /// One block per operation, and one past the end.
    blocks: Vec<Block>,
    /// Ends the run with the status in its parameter.
    exit: Block,
    spill: StackSlot,
    context: Value,
    helper_sig: cranelift_codegen::ir::SigRef,
    call_sig: cranelift_codegen::ir::SigRef,
    helpers: Helpers,
    /// For each operation's block, the last operation that jumps or
    /// falls into it, if any does.
    last_predecessor: Vec<Option<usize>>,
    /// For each operation, the loop heads to seal once it is lowered.
    closes: Vec<Vec<usize>>,
    frontend: cranelift_codegen::isa::TargetFrontendConfig,
}

impl<'a> Lower<'a> {
    fn new(
        code: &'a Code,
        func: usize,
        range: std::ops::Range<usize>,
        isa: &dyn TargetIsa,
        mut b: FunctionBuilder<'a>,
    ) -> Lower<'a> {
        let f = &code.funcs[func];
        let n = f.n_regs as usize;
        let tags = (0..n).map(|_| b.declare_var(I64)).collect();
        let bits = (0..n).map(|_| b.declare_var(I64)).collect();
        let fuel = b.declare_var(I64);
        let blocks = (range.start..=range.end)
            .map(|_| b.create_block())
            .collect();
        let exit = b.create_block();
        b.append_block_param(exit, I64);
        let size = (n.max(1) as i64 * SLOT) as u32;
        let spill =
            b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, size, 4));
        let helper_sig = b.import_signature(signature(isa, 4));
        let last_predecessor = last_predecessors(code, range.clone());
        let call_sig = b.import_signature(signature(isa, 3));
        Lower {
            code,
            func,
            f,
            start: range.start,
            end: range.end,
            b,
            tags,
            bits,
            fuel,
            blocks,
            exit,
            spill,
            context: Value::from_u32(0),
            helper_sig,
            call_sig,
            helpers: super::helpers(),
            closes: loop_heads_closed(&last_predecessor, range.start),
            last_predecessor,
            frontend: isa.frontend_config(),
        }
    }

    /// Goes on in `block`, all of whose predecessors are emitted: sealed
    /// at once, so that the frontend builds SSA as it goes instead of
    /// leaving a parameter per variable on every block (which made
    /// compiling a hundred times slower).
    fn enter(&mut self, block: Block) {
        self.b.switch_to_block(block);
        self.b.seal_block(block);
    }

    fn block(&self, pc: usize) -> Block {
        self.blocks[pc - self.start]
    }

    // ---- the function's frame ---------------------------------------------------

    /// Parameters from the arguments, locals unset, the fuel from the
    /// context, and the address-taken slots moved into cells.
    fn prologue(&mut self) {
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.enter(entry);
        let params = self.b.block_params(entry).to_vec();
        let (context, args, call_at) = (params[0], params[1], params[2]);
        self.context = context;
        // The other registers are left undefined: the frontend reads an
        // undefined variable as zero, which is `tag::UNINIT`, and leaving
        // them so keeps them out of the register allocator's way until
        // they are written (defining them all here made compiling slow).
        for r in 0..self.f.n_params {
            let at = (r as i64 * SLOT) as i32;
            let t = self.b.ins().load(I64, TRUSTED, args, at);
            let v = self.b.ins().load(I64, TRUSTED, args, at + 8);
            self.set(r, t, v);
        }
        let fuel = self.load_context(offset::FUEL);
        self.b.def_var(self.fuel, fuel);
        if !self.f.celled.is_empty() {
            self.make_cells(call_at);
        }
        let first = self.block(self.start);
        self.b.ins().jump(first, &[]);
    }

    fn make_cells(&mut self, call_at: Value) {
        for s in 0..self.f.n_slots {
            self.spill_register(s);
        }
        let func = self.b.ins().iconst(I64, self.func as i64);
        let frame = self.spill_address(0);
        let status = self.helper(self.helpers.make_cells, [func, frame, call_at]);
        self.exit_unless_zero(status);
        for s in self.f.celled.clone() {
            self.reload_register(s);
        }
    }

    /// The exit block, and the block past the end.
    fn finish(mut self) {
        let past_end = self.blocks[self.end - self.start];
        self.b.switch_to_block(past_end);
        let fell_off = self.b.ins().iconst(I64, FELL_OFF);
        self.b.ins().jump(self.exit, &[fell_off.into()]);
        self.b.switch_to_block(self.exit);
        // The fuel is already in the context: stored before every helper
        // and call, and by `ret`; a callee's or helper's exit stored its own.
        let status = self.b.block_params(self.exit)[0];
        self.b.ins().return_(&[status]);
        self.b.seal_all_blocks();
        self.b.finalize(self.frontend);
    }

    // ---- registers ----------------------------------------------------------------

    fn tag(&mut self, r: Reg) -> Value {
        self.b.use_var(self.tags[r as usize])
    }

    fn bits(&mut self, r: Reg) -> Value {
        self.b.use_var(self.bits[r as usize])
    }

    fn set(&mut self, r: Reg, tag: Value, bits: Value) {
        self.b.def_var(self.tags[r as usize], tag);
        self.b.def_var(self.bits[r as usize], bits);
    }

    fn set_tag(&mut self, r: Reg, t: u64) {
        let tag = self.b.ins().iconst(I64, t as i64);
        let zero = self.b.ins().iconst(I64, 0);
        self.set(r, tag, zero);
    }

    fn set_int(&mut self, r: Reg, n: Value) {
        let tag = self.b.ins().iconst(I64, tag::INT as i64);
        self.set(r, tag, n);
    }

    fn spill_address(&mut self, r: Reg) -> Value {
        self.b
            .ins()
            .stack_addr(I64, self.spill, (r as i64 * SLOT) as i32)
    }

    fn spill_register(&mut self, r: Reg) {
        let at = (r as i64 * SLOT) as i32;
        let (t, v) = (self.tag(r), self.bits(r));
        self.b.ins().stack_store(I64, t, self.spill, at);
        self.b.ins().stack_store(I64, v, self.spill, at + 8);
    }

    fn reload_register(&mut self, r: Reg) {
        let at = (r as i64 * SLOT) as i32;
        let t = self.b.ins().stack_load(I64, I64, self.spill, at);
        let v = self.b.ins().stack_load(I64, I64, self.spill, at + 8);
        self.set(r, t, v);
    }

    /// Whether every register of `regs` holds an integer.
    fn all_ints(&mut self, regs: &[Reg]) -> Value {
        let mut all = None;
        for &r in regs {
            let t = self.tag(r);
            let is = self.b.ins().icmp_imm_s(IntCC::Equal, t, tag::INT as i64);
            all = Some(match all {
                None => is,
                Some(a) => self.b.ins().band(a, is),
            });
        }
        all.expect("at least one register")
    }

    // ---- the context and the helpers ---------------------------------------------

    fn load_context(&mut self, at: i32) -> Value {
        self.b.ins().load(I64, TRUSTED, self.context, at)
    }

    fn store_context(&mut self, v: Value, at: i32) {
        self.b.ins().store(TRUSTED, v, self.context, at);
    }

    fn store_fuel(&mut self) {
        let fuel = self.b.use_var(self.fuel);
        self.store_context(fuel, offset::FUEL);
    }

    /// Calls the helper at `address` (the fuel stored first, for the
    /// steps an error reports); its status.
    fn helper(&mut self, address: usize, args: [Value; 3]) -> Value {
        self.store_fuel();
        let callee = self.b.ins().iconst(I64, address as i64);
        let call = self.b.ins().call_indirect(
            self.helper_sig,
            callee,
            &[self.context, args[0], args[1], args[2]],
        );
        self.b.inst_results(call)[0]
    }

    /// Ends the run unless `status` is 0; goes on in a new block.
    fn exit_unless_zero(&mut self, status: Value) {
        let go_on = self.b.create_block();
        self.b
            .ins()
            .brif(status, self.exit, &[status.into()], go_on, &[]);
        self.enter(go_on);
    }

    // ---- operations -----------------------------------------------------------------

    /// Lowers the operation at `pc`, then seals the loop heads whose last
    /// predecessor it is.
    fn operation(&mut self, pc: usize) {
        self.lower_operation(pc);
        for k in std::mem::take(&mut self.closes[pc - self.start]) {
            self.b.seal_block(self.blocks[k]);
        }
    }

    fn lower_operation(&mut self, pc: usize) {
        let block = self.block(pc);
        self.b.switch_to_block(block);
        if self.last_predecessor[pc - self.start].is_none_or(|last| last < pc) {
            self.b.seal_block(block);
        }
        let ins = self.code.instrs[pc];
        self.count_steps(&ins);
        let next = self.block(pc + 1);
        match ins.op {
            Op::Nop => {}
            Op::Const { dst, k } => {
                let k = self.b.ins().iconst(I64, k);
                self.set_int(dst, k);
            }
            Op::Null { dst } => self.set_tag(dst, tag::NULL),
            Op::Move { dst, src } => {
                let (t, v) = (self.tag(src), self.bits(src));
                self.set(dst, t, v);
            }
            Op::Read { dst, src, .. } => {
                let t = self.tag(src);
                let set = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::NotEqual, t, tag::UNINIT as i64);
                self.fast_or_interpreted(pc, set, |l| {
                    let (t, v) = (l.tag(src), l.bits(src));
                    l.set(dst, t, v);
                });
            }
            Op::Neg { dst, src, .. } => {
                let ok = self.all_ints(&[src]);
                let x = self.bits(src);
                let not_min = self.b.ins().icmp_imm_s(IntCC::NotEqual, x, i64::MIN);
                let ok = self.b.ins().band(ok, not_min);
                self.fast_or_interpreted(pc, ok, |l| {
                    let n = l.b.ins().ineg(x);
                    l.set_int(dst, n);
                });
            }
            Op::Not { dst, src, .. } => {
                let ok = self.all_ints(&[src]);
                self.fast_or_interpreted(pc, ok, |l| {
                    let x = l.bits(src);
                    let zero = l.b.ins().icmp_imm_s(IntCC::Equal, x, 0);
                    let n = l.b.ins().uextend(I64, zero);
                    l.set_int(dst, n);
                });
            }
            Op::Add { dst, a, b, .. } => self.arith(pc, Arith::Add, dst, a, Operand::Reg(b)),
            Op::AddK { dst, a, k, .. } => self.arith(pc, Arith::Add, dst, a, Operand::K(k)),
            Op::Bin { op, dst, a, b, .. } => self.arith(pc, op, dst, a, Operand::Reg(b)),
            Op::BinK { op, dst, a, k, .. } => self.arith(pc, op, dst, a, Operand::K(k)),
            Op::Cmp {
                mask, dst, a, b, ..
            } => self.compare(pc, mask, dst, a, Operand::Reg(b)),
            Op::CmpK {
                mask, dst, a, k, ..
            } => self.compare(pc, mask, dst, a, Operand::K(k)),
            Op::Jump { to } => {
                let to = self.block(to as usize);
                self.b.ins().jump(to, &[]);
                return;
            }
            Op::JumpIf { src, want, to, .. } => {
                let ok = self.all_ints(&[src]);
                let cc = if want { IntCC::NotEqual } else { IntCC::Equal };
                let x = self.bits(src);
                let holds = self.b.ins().icmp_imm_s(cc, x, 0);
                self.branch(pc, ok, holds, to);
                return;
            }
            Op::Branch { mask, a, b, to, .. } => {
                self.compare_and_branch(pc, mask, a, Operand::Reg(b), to);
                return;
            }
            Op::BranchK { mask, a, k, to, .. } => {
                self.compare_and_branch(pc, mask, a, Operand::K(k), to);
                return;
            }
            Op::BranchNull { mask, a, to, .. } => {
                let t = self.tag(a);
                let null = self.b.ins().icmp_imm_s(IntCC::Equal, t, tag::NULL as i64);
                let ptr = self.b.ins().icmp_imm_s(IntCC::Equal, t, tag::PTR as i64);
                let ok = self.b.ins().bor(null, ptr);
                let holds = if mask == Mask::EQ { null } else { ptr };
                self.branch(pc, ok, holds, to);
                return;
            }
            Op::Assert { src, .. } | Op::Assume { src, .. } => {
                let ok = self.all_ints(&[src]);
                let x = self.bits(src);
                let holds = self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0);
                let ok = self.b.ins().band(ok, holds);
                self.fast_or_interpreted(pc, ok, |_| {});
            }
            Op::Clear { first, n } => {
                for r in first..first + n {
                    self.set_tag(r, tag::UNINIT);
                }
            }
            Op::Enter { at } => {
                self.depth_check(at);
            }
            Op::Call {
                func,
                first,
                dst,
                at,
            } => self.call(func, first, dst, at),
            Op::Ret { src, at } => {
                self.ret(src, at);
                return;
            }
            Op::Deref { dst, src, .. } | Op::ReadCell { dst, cell: src, .. } => {
                self.fast_with_guards(pc, |l, slow| {
                    let cell = l.pointed_cell(src, slow);
                    l.read_cell_into(dst, cell, slow);
                });
            }
            Op::PtrCheck { dst, src, .. } => {
                self.fast_with_guards(pc, |l, slow| {
                    l.pointed_cell(src, slow);
                    let (t, v) = (l.tag(src), l.bits(src));
                    l.set(dst, t, v);
                });
            }
            Op::WriteCell { cell, src } => {
                self.fast_with_guards(pc, |l, slow| {
                    let cell = l.pointed_cell(cell, slow);
                    l.write_cell(cell, src);
                });
            }
            Op::Elem { dst, arr, idx, .. } => {
                self.fast_with_guards(pc, |l, slow| {
                    let cell = l.element_cell(arr, idx, slow);
                    l.read_cell_into(dst, cell, slow);
                });
            }
            Op::ElemCell { dst, arr, idx, .. } => {
                self.fast_with_guards(pc, |l, slow| {
                    let cell = l.element_cell(arr, idx, slow);
                    l.set_pointer(dst, cell);
                });
            }
            Op::StoreElem { arr, idx, src, .. } => {
                self.fast_with_guards(pc, |l, slow| {
                    let cell = l.element_cell(arr, idx, slow);
                    l.write_cell(cell, src);
                });
            }
            Op::Field {
                dst, base, name, ..
            } => {
                self.fast_with_guards(pc, |l, slow| {
                    let cell = l.field_cell(base, name, slow);
                    l.read_cell_into(dst, cell, slow);
                });
            }
            Op::FieldCell {
                dst, base, name, ..
            } => {
                self.fast_with_guards(pc, |l, slow| {
                    let cell = l.field_cell(base, name, slow);
                    l.set_pointer(dst, cell);
                });
            }
            _ => {
                self.interpreted(pc);
                self.b.ins().jump(next, &[]);
                return;
            }
        }
        self.b.ins().jump(next, &[]);
    }

    /// The steps before an operation, from the fuel; one by one by the
    /// interpreter when the fuel runs short.
    fn count_steps(&mut self, ins: &Instr) {
        if ins.steps == 0 {
            return;
        }
        let n = i64::from(ins.steps);
        let fuel = self.b.use_var(self.fuel);
        let enough = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, fuel, n);
        self.diamond(
            enough,
            |l| {
                let left = l.b.ins().iadd_imm_s(fuel, -n);
                l.b.def_var(l.fuel, left);
            },
            |l| {
                let n = l.b.ins().iconst(I64, n);
                let at = l.b.ins().iconst(I64, i64::from(ins.step_at));
                let zero = l.b.ins().iconst(I64, 0);
                let status = l.helper(l.helpers.take_steps, [n, at, zero]);
                l.exit_unless_zero(status);
                let fuel = l.load_context(offset::FUEL);
                l.b.def_var(l.fuel, fuel);
            },
        );
    }

    /// `then` where `holds`, else `otherwise`; both go on in a new block.
    fn diamond(
        &mut self,
        holds: Value,
        then: impl FnOnce(&mut Self),
        otherwise: impl FnOnce(&mut Self),
    ) {
        let (then_block, else_block, go_on) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(holds, then_block, &[], else_block, &[]);
        self.enter(then_block);
        then(self);
        self.b.ins().jump(go_on, &[]);
        self.enter(else_block);
        otherwise(self);
        self.b.ins().jump(go_on, &[]);
        self.enter(go_on);
    }

    /// `fast` where `ok` holds, else the interpreter runs the operation;
    /// both go on in a new block.
    fn fast_or_interpreted(&mut self, pc: usize, ok: Value, fast: impl FnOnce(&mut Self)) {
        self.diamond(ok, fast, |l| {
            l.interpreted(pc);
        });
    }

    /// The interpreter runs the operation at `pc` on the registers it
    /// reads; the one it writes reloaded. Goes on in a new block; a
    /// conditional jump's status ([`TAKEN`] or 0) is returned.
    fn interpreted(&mut self, pc: usize) -> Value {
        let touches = self.code.instrs[pc].op.touches(&self.code.shapes);
        for r in touches.reads() {
            self.spill_register(r);
        }
        let at = self.b.ins().iconst(I64, pc as i64);
        let frame = self.spill_address(0);
        let zero = self.b.ins().iconst(I64, 0);
        let status = self.helper(self.helpers.execute_one, [at, frame, zero]);
        let is_exit = self.b.ins().icmp_imm_s(IntCC::Equal, status, EXIT as i64);
        let go_on = self.b.create_block();
        self.b
            .ins()
            .brif(is_exit, self.exit, &[status.into()], go_on, &[]);
        self.enter(go_on);
        if let Some(w) = touches.write {
            self.reload_register(w);
        }
        status
    }

    /// A conditional jump to `to`: `holds` decides where `ok` holds, else
    /// the interpreter does.
    fn branch(&mut self, pc: usize, ok: Value, holds: Value, to: u32) {
        let (target, next) = (self.block(to as usize), self.block(pc + 1));
        let (fast, slow) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        self.enter(fast);
        self.b.ins().brif(holds, target, &[], next, &[]);
        self.enter(slow);
        let status = self.interpreted(pc);
        let taken = self.b.ins().icmp_imm_s(IntCC::Equal, status, TAKEN as i64);
        self.b.ins().brif(taken, target, &[], next, &[]);
    }

    /// Jumps to `to` when `a` compares to `b` as `mask` says; integers
    /// natively, anything else (and a mask that is none of the six
    /// comparisons) by the interpreter.
    fn compare_and_branch(&mut self, pc: usize, mask: Mask, a: Reg, b: Operand, to: u32) {
        let (ok, holds) = self.comparison(mask, a, b).unwrap_or_else(|| {
            let never = self.b.ins().iconst(types::I8, 0);
            (never, never)
        });
        self.branch(pc, ok, holds, to);
    }

    /// Whether both operands are integers, and whether `a` compares to
    /// `b` as `mask` says; `None` for a mask none of the six comparisons.
    fn comparison(&mut self, mask: Mask, a: Reg, b: Operand) -> Option<(Value, Value)> {
        let cc = condition(mask)?;
        let ints = self.all_ints(&Self::operand_regs(a, b));
        let (x, y) = (self.bits(a), self.operand(b));
        Some((ints, self.b.ins().icmp(cc, x, y)))
    }

    fn operand(&mut self, o: Operand) -> Value {
        match o {
            Operand::Reg(r) => self.bits(r),
            Operand::K(k) => self.b.ins().iconst(I64, k),
        }
    }

    fn operand_regs(a: Reg, o: Operand) -> Vec<Reg> {
        match o {
            Operand::Reg(b) => vec![a, b],
            Operand::K(_) => vec![a],
        }
    }

    /// Integer arithmetic; an overflow, a division by zero, or a value
    /// that is not an integer is the interpreter's.
    fn arith(&mut self, pc: usize, op: Arith, dst: Reg, a: Reg, b: Operand) {
        let ints = self.all_ints(&Self::operand_regs(a, b));
        let (x, y) = (self.bits(a), self.operand(b));
        let (value, ok) = match op {
            Arith::Add => {
                let sum = self.b.ins().sadd_overflow(x, y);
                self.checked(ints, sum)
            }
            Arith::Sub => {
                let difference = self.b.ins().ssub_overflow(x, y);
                self.checked(ints, difference)
            }
            Arith::Mul => {
                let product = self.b.ins().smul_overflow(x, y);
                self.checked(ints, product)
            }
            Arith::Div => {
                // Division by zero, and MIN / -1, are left to the interpreter.
                let zero = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
                let min = self.b.ins().icmp_imm_s(IntCC::Equal, x, i64::MIN);
                let minus_one = self.b.ins().icmp_imm_s(IntCC::Equal, y, -1);
                let overflow = self.b.ins().band(min, minus_one);
                let bad = self.b.ins().bor(zero, overflow);
                let good = self.b.ins().bxor_imm_u(bad, 1);
                let ok = self.b.ins().band(ints, good);
                // The divisor made safe where the fast path is not taken.
                let one = self.b.ins().iconst(I64, 1);
                let safe = self.b.ins().select(ok, y, one);
                (self.b.ins().sdiv(x, safe), ok)
            }
        };
        self.fast_or_interpreted(pc, ok, |l| l.set_int(dst, value));
    }

    fn checked(&mut self, ints: Value, (value, overflow): (Value, Value)) -> (Value, Value) {
        let no_overflow = self.b.ins().bxor_imm_u(overflow, 1);
        (value, self.b.ins().band(ints, no_overflow))
    }

    fn compare(&mut self, pc: usize, mask: Mask, dst: Reg, a: Reg, b: Operand) {
        let Some((ok, holds)) = self.comparison(mask, a, b) else {
            self.interpreted(pc);
            return;
        };
        self.fast_or_interpreted(pc, ok, |l| {
            let n = l.b.ins().uextend(I64, holds);
            l.set_int(dst, n);
        });
    }

    // ---- the heap ------------------------------------------------------------------

    /// `fast` with the guards it places (each jumps to the block it is
    /// given when it fails), else the interpreter runs the operation.
    fn fast_with_guards(&mut self, pc: usize, fast: impl FnOnce(&mut Self, Block)) {
        let (slow, go_on) = (self.b.create_block(), self.b.create_block());
        fast(self, slow);
        self.b.ins().jump(go_on, &[]);
        self.enter(slow);
        self.interpreted(pc);
        self.b.ins().jump(go_on, &[]);
        self.enter(go_on);
    }

    /// Goes on where `holds`, else to `slow`.
    fn guard(&mut self, holds: Value, slow: Block) {
        let go_on = self.b.create_block();
        self.b.ins().brif(holds, go_on, &[], slow, &[]);
        self.enter(go_on);
    }

    fn guard_tag(&mut self, r: Reg, t: u64, slow: Block) {
        let tag = self.tag(r);
        let is = self.b.ins().icmp_imm_s(IntCC::Equal, tag, t as i64);
        self.guard(is, slow);
    }

    fn low_word(&mut self, v: Value) -> Value {
        self.b.ins().band_imm_u(v, 0xffff_ffff)
    }

    fn high_word(&mut self, v: Value) -> Value {
        self.b.ins().ushr_imm_u(v, 32)
    }

    /// The cell a pointer in `r` points to (its index).
    fn pointed_cell(&mut self, r: Reg, slow: Block) -> Value {
        self.guard_tag(r, tag::PTR, slow);
        let bits = self.bits(r);
        self.low_word(bits)
    }

    /// Entry `at` of the cell lists: a cell's index.
    fn list_entry(&mut self, at: Value) -> Value {
        let lists = self.load_context(offset::LISTS);
        let offset = self.b.ins().ishl_imm_u(at, 2);
        let address = self.b.ins().iadd(lists, offset);
        let entry = self.b.ins().load(types::I32, TRUSTED, address, 0);
        self.b.ins().uextend(I64, entry)
    }

    /// Where cell `cell` is (a `Val`: a `u32` tag, the payload at 8).
    fn cell_address(&mut self, cell: Value) -> Value {
        let cells = self.load_context(offset::CELLS);
        let offset = self.b.ins().ishl_imm_u(cell, 4);
        self.b.ins().iadd(cells, offset)
    }

    fn load_cell(&mut self, cell: Value) -> (Value, Value) {
        let address = self.cell_address(cell);
        let t = self.b.ins().load(types::I32, TRUSTED, address, 0);
        let t = self.b.ins().uextend(I64, t);
        let v = self.b.ins().load(I64, TRUSTED, address, 8);
        (t, v)
    }

    /// `dst` set to the value in `cell`; an unset cell is the interpreter's.
    fn read_cell_into(&mut self, dst: Reg, cell: Value, slow: Block) {
        let (t, v) = self.load_cell(cell);
        let set = self
            .b
            .ins()
            .icmp_imm_s(IntCC::NotEqual, t, tag::UNINIT as i64);
        self.guard(set, slow);
        self.set(dst, t, v);
    }

    fn write_cell(&mut self, cell: Value, src: Reg) {
        let address = self.cell_address(cell);
        let (t, v) = (self.tag(src), self.bits(src));
        let t = self.b.ins().ireduce(types::I32, t);
        self.b.ins().store(TRUSTED, t, address, 0);
        self.b.ins().store(TRUSTED, v, address, 8);
    }

    fn set_pointer(&mut self, dst: Reg, cell: Value) {
        let t = self.b.ins().iconst(I64, tag::PTR as i64);
        self.set(dst, t, cell);
    }

    /// The cell of `arr[idx]`, for an array and an index within it.
    fn element_cell(&mut self, arr: Reg, idx: Reg, slow: Block) -> Value {
        self.guard_tag(arr, tag::ARR, slow);
        self.guard_tag(idx, tag::INT, slow);
        let (a, i) = (self.bits(arr), self.bits(idx));
        let len = self.high_word(a);
        let within = self.b.ins().icmp(IntCC::UnsignedLessThan, i, len);
        self.guard(within, slow);
        let start = self.low_word(a);
        let at = self.b.ins().iadd(start, i);
        self.list_entry(at)
    }

    /// The cell of field `name` of the record a pointer in `base` points
    /// to. (A record held in a register is the interpreter's.)
    fn field_cell(&mut self, base: Reg, name: u32, slow: Block) -> Value {
        let cell = self.pointed_cell(base, slow);
        let (t, record) = self.load_cell(cell);
        let is_record = self.b.ins().icmp_imm_s(IntCC::Equal, t, tag::REC as i64);
        self.guard(is_record, slow);
        let shape = self.high_word(record);
        let row = self.b.ins().imul_imm_s(shape, i64::from(self.code.n_names));
        let at = self.b.ins().iadd_imm_s(row, i64::from(name));
        // The table lives in `Code`, beside this code (`fast::Ready`).
        let table = self.b.ins().iconst(I64, self.code.field_at.as_ptr() as i64);
        let offset = self.b.ins().ishl_imm_u(at, 2);
        let address = self.b.ins().iadd(table, offset);
        let k = self.b.ins().load(types::I32, TRUSTED, address, 0);
        let k = self.b.ins().uextend(I64, k);
        let has = self
            .b
            .ins()
            .icmp_imm_u(IntCC::NotEqual, k, i64::from(u32::MAX));
        self.guard(has, slow);
        let start = self.low_word(record);
        let at = self.b.ins().iadd(start, k);
        self.list_entry(at)
    }

    // ---- calls ----------------------------------------------------------------------

    /// The depth a call at `at` makes, checked against the native bound
    /// (the least of the run's limit and the host stack's room); past it,
    /// a helper says which exit the run takes.
    fn depth_check(&mut self, at: u32) -> Value {
        let depth = self.load_context(offset::DEPTH);
        let deeper = self.b.ins().iadd_imm_s(depth, 1);
        let bound = self.load_context(offset::MAX_DEPTH);
        let too_deep = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, deeper, bound);
        let (slow, go_on) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(too_deep, slow, &[], go_on, &[]);
        self.enter(slow);
        let at = self.b.ins().iconst(I64, i64::from(at));
        let zero = self.b.ins().iconst(I64, 0);
        let status = self.helper(self.helpers.depth_reached, [deeper, at, zero]);
        self.b.ins().jump(self.exit, &[status.into()]);
        self.enter(go_on);
        deeper
    }

    fn call(&mut self, func: u32, first: Reg, dst: Reg, at: u32) {
        let deeper = self.depth_check(at);
        let callee = &self.code.funcs[func as usize];
        for r in first..first + callee.n_params {
            self.spill_register(r);
        }
        self.store_fuel();
        self.store_context(deeper, offset::DEPTH);
        let table = self.load_context(offset::TABLE);
        let entry = self.b.ins().load(I64, TRUSTED, table, (func as i32) * 8);
        let args = self.spill_address(first);
        let at = self.b.ins().iconst(I64, i64::from(at));
        let call = self
            .b
            .ins()
            .call_indirect(self.call_sig, entry, &[self.context, args, at]);
        let status = self.b.inst_results(call)[0];
        let depth = self.b.ins().iadd_imm_s(deeper, -1);
        self.store_context(depth, offset::DEPTH);
        self.exit_unless_zero(status);
        let t = self.load_context(offset::RET_TAG);
        let v = self.load_context(offset::RET_BITS);
        self.set(dst, t, v);
        let fuel = self.load_context(offset::FUEL);
        self.b.def_var(self.fuel, fuel);
    }

    fn ret(&mut self, src: Reg, at: u32) {
        let t = self.tag(src);
        let set = self
            .b
            .ins()
            .icmp_imm_s(IntCC::NotEqual, t, tag::UNINIT as i64);
        let (fast, slow) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(set, fast, &[], slow, &[]);
        self.enter(slow);
        let at = self.b.ins().iconst(I64, i64::from(at) + 1);
        let zero = self.b.ins().iconst(I64, 0);
        let status = self.helper(self.helpers.uninitialised, [at, zero, zero]);
        self.b.ins().jump(self.exit, &[status.into()]);
        self.enter(fast);
        let v = self.bits(src);
        self.store_context(t, offset::RET_TAG);
        self.store_context(v, offset::RET_BITS);
        self.store_fuel();
        let ok = self.b.ins().iconst(I64, 0);
        self.b.ins().jump(self.exit, &[ok.into()]);
    }
}

/// For each operation of `range` (and the one past it), the last
/// operation that jumps or falls into it, if any does (the prologue,
/// which jumps to the first, comes before them all).
fn last_predecessors(code: &Code, range: std::ops::Range<usize>) -> Vec<Option<usize>> {
    let mut last = vec![None; range.len() + 1];
    let mut note = |to: usize, from: usize| {
        let slot = &mut last[to - range.start];
        *slot = (*slot).max(Some(from));
    };
    for pc in range.clone() {
        let op = code.instrs[pc].op;
        if !matches!(op, Op::Jump { .. } | Op::Ret { .. }) {
            note(pc + 1, pc);
        }
        if let Op::Jump { to }
        | Op::JumpIf { to, .. }
        | Op::Branch { to, .. }
        | Op::BranchK { to, .. }
        | Op::BranchNull { to, .. } = op
        {
            note(to as usize, pc);
        }
    }
    last
}

/// For each operation of `range`, the blocks (by operation) that a jump
/// back from it completes: loop heads, sealed once it is lowered.
fn loop_heads_closed(last: &[Option<usize>], start: usize) -> Vec<Vec<usize>> {
    let mut closed = vec![vec![]; last.len()];
    for (k, &from) in last.iter().enumerate() {
        if let Some(from) = from.filter(|&from| from >= start + k) {
            closed[from - start].push(k);
        }
    }
    closed
}

#[derive(Clone, Copy)]
enum Operand {
    Reg(Reg),
    K(i64),
}

/// The comparison a mask is, if it is one of the six.
fn condition(mask: Mask) -> Option<IntCC> {
    Some(match mask {
        Mask::LT => IntCC::SignedLessThan,
        Mask::LE => IntCC::SignedLessThanOrEqual,
        Mask::GT => IntCC::SignedGreaterThan,
        Mask::GE => IntCC::SignedGreaterThanOrEqual,
        Mask::EQ => IntCC::Equal,
        Mask::NE => IntCC::NotEqual,
        _ => return None,
    })
}
