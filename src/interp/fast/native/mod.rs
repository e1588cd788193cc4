//! The native tier: the fast engine's bytecode compiled to machine code
//! with Cranelift, for runs too long for the interpreter's loop
//! (docs/microc.md, "Native tier").
//!
//! Registers live in machine registers, tagged as [`Slot`]s. Integer
//! arithmetic, comparisons, jumps, calls and returns run natively. Every
//! other operation, and every operation whose fast path fails (an
//! uninitialised operand, an overflow, a value that is not an integer),
//! is handed to the interpreter's own code for that one operation
//! (`Machine::execute_one`), with the registers it touches: the semantics,
//! the errors and their places stay the interpreter's. The heap, the input
//! and the outputs are the interpreter's machine's too.

mod lower;
mod memory;

use super::Handback;
use super::code::{At, Code, Op, Slot, Val};
use super::vm::{Exit, Machine};
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::isa::{OwnedTargetIsa, TargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use memory::Executable;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

/// Why a native run gave up where the interpreter's loop may go on: the
/// host stack it may use is spent. The run is then the interpreter's.
pub(super) const NATIVE_STACK: Handback = "a recursion deeper than the native tier's stack";

/// A program compiled to machine code.
pub(super) struct Native {
    _memory: Executable,
    /// Each function's entry, by function index.
    entries: Vec<usize>,
    /// The most registers of any function: the interpreter's scratch frame.
    max_regs: usize,
    /// A bound on the host stack one native call takes.
    frame_bytes: usize,
}

/// A native function: `(context, arguments, call_at) -> status`.
type Entry = unsafe extern "C" fn(*mut Context, *mut Slot, u64) -> u64;

/// What native code reads and writes of a run, at fixed offsets.
#[repr(C)]
pub(super) struct Context<'m, 'c> {
    fuel: u64,
    depth: u64,
    max_depth: u64,
    ret: Slot,
    table: *const usize,
    /// The machine's cells (`Val`s) and cell lists, refreshed after
    /// every helper (which may allocate).
    cells: *mut Val,
    lists: *const u32,
    machine: &'m mut Machine<'c>,
    code: &'c Code,
    exit: Option<Exit>,
}

/// Statuses: a helper's `0` goes on, [`EXIT`] ends the run (its exit kept
/// in the context); `TAKEN` is a conditional jump's "jump".
const EXIT: u64 = 2;
const TAKEN: u64 = 1;

/// Compiles `code`, or says why not.
pub(super) fn compile(code: &Code) -> Result<Native, Handback> {
    let isa = host()?;
    let mut context = cranelift_codegen::Context::new();
    let mut builder = cranelift_frontend::FunctionBuilderContext::new();
    let mut bodies = Vec::with_capacity(code.funcs.len());
    for func in 0..code.funcs.len() {
        context.clear();
        lower::function(code, func, isa, &mut context.func, &mut builder);
        let compiled = context
            .compile(isa, &mut ControlPlane::default())
            .map_err(|_| "Cranelift refused a function")?;
        if !compiled.buffer.relocs().is_empty() {
            return Err("native code that needs relocation");
        }
        bodies.push(compiled.code_buffer().to_vec());
    }
    let (memory, entries) = Executable::new(&bodies)?;
    let max_regs = code.funcs.iter().map(|f| f.n_regs as usize).max();
    Ok(Native {
        _memory: memory,
        entries,
        max_regs: max_regs.unwrap_or(0),
        frame_bytes: lower::frame_bound(code),
    })
}

/// The host's code generator, made once.
fn host() -> Result<&'static dyn TargetIsa, Handback> {
    static HOST: OnceLock<Result<OwnedTargetIsa, Handback>> = OnceLock::new();
    let isa = HOST.get_or_init(|| {
        let mut flags = settings::builder();
        // The backtracking allocator's code runs loops about 4x faster
        // than the single-pass one's, for about 2.5x the compile time; the
        // verifier is for Cranelift's own development.
        for (setting, value) in [
            ("opt_level", "speed"),
            ("regalloc_algorithm", "backtracking"),
            ("enable_verifier", "false"),
        ] {
            flags
                .set(setting, value)
                .map_err(|_| "a Cranelift setting")?;
        }
        let flags = settings::Flags::new(flags);
        let builder = cranelift_native::builder().map_err(|_| "no native code for this host")?;
        builder
            .finish(flags)
            .map_err(|_| "no native code for this host")
    });
    match isa {
        Ok(isa) => Ok(&**isa),
        Err(why) => Err(why),
    }
}

/// Stack kept free below the deepest native frame, for the helpers.
const STACK_MARGIN: usize = 512 << 10;

/// Runs `main` natively on `args`: its return value, as
/// `Machine::run_main` gives it.
pub(super) fn run(native: &Native, machine: &mut Machine, args: &[Val]) -> Result<i64, Exit> {
    let limits = machine.limits();
    if limits.max_call_depth == 0 {
        return Err(Exit::Bail("a call-depth limit of 0"));
    }
    machine.scratch_frame(native.max_regs);
    let mut arguments: Vec<Slot> = args.iter().map(|v| v.to_slot()).collect();
    arguments.push(Slot::default());
    let frames = memory::stack_left().saturating_sub(STACK_MARGIN) / native.frame_bytes;
    let code = machine.code();
    let (cells, lists) = machine.heap();
    let mut context = Context {
        cells,
        lists,
        fuel: machine.fuel(),
        depth: 0,
        max_depth: u64::from(limits.max_call_depth).min(frames as u64),
        ret: Slot::default(),
        table: native.entries.as_ptr(),
        machine,
        code,
        exit: None,
    };
    // SAFETY: the entry was compiled for this signature, and the context
    // and arguments outlive the call.
    let status = unsafe {
        let main: Entry = std::mem::transmute(native.entries[code.main]);
        main(&mut context, arguments.as_mut_ptr(), u64::from(u32::MAX))
    };
    context.machine.set_fuel(context.fuel);
    if status != 0 {
        return Err(context
            .exit
            .take()
            .unwrap_or(Exit::Bail("a native run ended without a reason")));
    }
    match Val::from_slot(context.ret) {
        Val::Int(n) => Ok(n),
        _ => Err(Exit::Bail("main returned a non-integer")),
    }
}

// ---- helpers, called from native code ----------------------------------------

/// Runs `body` on the context behind `context`, turning its error (or a
/// panic, which must not unwind through native frames) into [`EXIT`].
fn guarded(context: *mut Context, body: impl FnOnce(&mut Context) -> Result<u64, Exit>) -> u64 {
    // SAFETY: native code passes the context `run` made, and nothing else
    // holds a reference to it during a helper.
    let context = unsafe { &mut *context };
    let result = catch_unwind(AssertUnwindSafe(|| body(context)));
    (context.cells, context.lists) = context.machine.heap();
    match result {
        Ok(Ok(status)) => status,
        Ok(Err(exit)) => {
            context.exit = Some(exit);
            EXIT
        }
        Err(_) => {
            context.exit = Some(Exit::Bail("a failure inside the native tier"));
            EXIT
        }
    }
}

/// `n` steps taken one by one from the context's fuel.
extern "C" fn take_steps(context: *mut Context, n: u64, step_at: u64, _: u64) -> u64 {
    guarded(context, |c| {
        let taken = c.machine.take_steps(c.fuel, n, step_at as u32);
        // Also after the limit: the steps an exit reports are counted.
        c.fuel = c.machine.fuel();
        taken.map(|()| 0)
    })
}

/// The operation at `pc` run by the interpreter on the registers of
/// `frame` it touches: `0`, or for a conditional jump [`TAKEN`] or `0`.
extern "C" fn execute_one(context: *mut Context, pc: u64, frame: u64, _: u64) -> u64 {
    guarded(context, |c| {
        let pc = pc as usize;
        let op = c.code.instrs[pc].op;
        let touches = op.touches(&c.code.shapes);
        let frame = frame as *mut Slot;
        for r in touches.reads() {
            // SAFETY: `frame` is the caller's spill area of its registers.
            let v = Val::from_slot(unsafe { *frame.add(r as usize) });
            c.machine.set(r, v);
        }
        let next = c.machine.execute_one(pc)?;
        if let Some(w) = touches.write {
            // SAFETY: as above.
            unsafe { *frame.add(w as usize) = c.machine.get(w).to_slot() };
        }
        let jumps = matches!(
            op,
            Op::JumpIf { .. } | Op::Branch { .. } | Op::BranchK { .. } | Op::BranchNull { .. }
        );
        Ok(if jumps && next != pc + 1 { TAKEN } else { 0 })
    })
}

/// A call that makes the depth `depth` reached the native bound: the
/// interpreter's limits say which exit it is.
extern "C" fn depth_reached(context: *mut Context, depth: u64, at: u64, _: u64) -> u64 {
    guarded(context, |c| {
        c.machine.depth_limits(depth as u32, at as At)?;
        Err(Exit::Bail(NATIVE_STACK))
    })
}

/// Function `func`'s address-taken slots moved into cells, in `frame`.
extern "C" fn make_cells(context: *mut Context, func: u64, frame: u64, call_at: u64) -> u64 {
    guarded(context, |c| {
        let f = &c.code.funcs[func as usize];
        let frame = frame as *mut Slot;
        for &s in &f.celled {
            // SAFETY: `frame` is the callee's spill area.
            let v = Val::from_slot(unsafe { *frame.add(s as usize) });
            c.machine.set(s, v);
        }
        let call_at = u32::try_from(call_at).ok().filter(|&at| at != u32::MAX);
        c.machine.make_cells_of(func as usize, call_at)?;
        for &s in &f.celled {
            // SAFETY: as above.
            unsafe { *frame.add(s as usize) = c.machine.get(s).to_slot() };
        }
        Ok(0)
    })
}

/// An uninitialised value returned, at `at`.
extern "C" fn uninitialised(context: *mut Context, at: u64, _: u64, _: u64) -> u64 {
    guarded(context, |c| Err(c.machine.uninitialised(at as At)))
}

/// The helpers' addresses, for native code to call.
pub(super) struct Helpers {
    pub take_steps: usize,
    pub execute_one: usize,
    pub depth_reached: usize,
    pub make_cells: usize,
    pub uninitialised: usize,
}

type Helper = extern "C" fn(*mut Context, u64, u64, u64) -> u64;

pub(super) fn helpers() -> Helpers {
    Helpers {
        take_steps: take_steps as Helper as usize,
        execute_one: execute_one as Helper as usize,
        depth_reached: depth_reached as Helper as usize,
        make_cells: make_cells as Helper as usize,
        uninitialised: uninitialised as Helper as usize,
    }
}

/// The context's fields native code reads and writes.
pub(super) mod offset {
    use super::{Context, Slot};
    use std::mem::offset_of;
    pub const FUEL: i32 = offset_of!(Context, fuel) as i32;
    pub const DEPTH: i32 = offset_of!(Context, depth) as i32;
    pub const MAX_DEPTH: i32 = offset_of!(Context, max_depth) as i32;
    pub const RET_TAG: i32 = (offset_of!(Context, ret) + offset_of!(Slot, tag)) as i32;
    pub const RET_BITS: i32 = (offset_of!(Context, ret) + offset_of!(Slot, bits)) as i32;
    pub const TABLE: i32 = offset_of!(Context, table) as i32;
    pub const CELLS: i32 = offset_of!(Context, cells) as i32;
    pub const LISTS: i32 = offset_of!(Context, lists) as i32;
}
