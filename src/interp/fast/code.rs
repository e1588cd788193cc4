//! The fast engine's code: a register bytecode, one flat instruction list
//! for the whole program (docs/microc.md, "Fast execution").
//!
//! Registers are numbered per frame: a function's parameters, then its
//! locals, then temporaries. A variable whose address is taken holds
//! `Val::Ptr` of its cell in its register. Places being written hold a
//! cell as `Val::Ptr` in a temporary ("cell references").

use crate::syntax::Span;

/// A register of the current frame.
pub(super) type Reg = u32;

/// An index into [`Code::spans`]: the first of the spans an instruction
/// reports failures at (see each instruction).
pub(super) type At = u32;

/// A value of the fast engine. Copying shares an array's or record's
/// cells, as the reference's `Rc` of cells does.
///
/// The layout is fixed (`repr(C, u32)`): the tag, a `u32` whose values
/// are [`tag`]'s, at offset 0, and the payload at offset 8 (two `u32`s
/// for arrays and records, low word first). The native tier reads cells
/// in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, u32)]
pub(super) enum Val {
    /// A variable (or a variable's cell) not assigned yet.
    Uninit,
    Int(i64),
    Null,
    Ptr(u32),
    /// `len` cells listed from `start` in the engine's cell lists.
    Arr {
        start: u32,
        len: u32,
    },
    /// An input array (read-only here: a write hands the run back), by
    /// its index in the machine's input arrays.
    Input(u32),
    /// The cells of a record's fields from `start`, named by `shape`.
    Rec {
        start: u32,
        shape: u32,
    },
}

/// Integer arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

/// A comparison as the set of orderings it holds for: bit 0 less, bit 1
/// equal, bit 2 greater. Testing it is a shift, not a branch on the kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Mask(pub u8);

impl Mask {
    pub const LT: Mask = Mask(0b001);
    pub const LE: Mask = Mask(0b011);
    pub const GT: Mask = Mask(0b100);
    pub const GE: Mask = Mask(0b110);
    pub const EQ: Mask = Mask(0b010);
    pub const NE: Mask = Mask(0b101);

    /// The opposite comparison.
    pub fn not(self) -> Mask {
        Mask(self.0 ^ 0b111)
    }

    #[inline(always)]
    pub fn holds(self, x: i64, y: i64) -> bool {
        let ordering = u8::from(x >= y) + u8::from(x > y);
        (self.0 >> ordering) & 1 == 1
    }

    /// `==` or `!=`, which also compare pointers.
    pub fn is_equality(self) -> bool {
        self == Mask::EQ || self == Mask::NE
    }
}

/// One operation. `at` spans, in order: `[op, a, b]` where `op` is where
/// the operation's own failure is reported and `a`, `b` are the operands'
/// expressions (a read of an uninitialised variable used directly as an
/// operand is reported there).
#[derive(Clone, Copy, Debug)]
pub(super) enum Op {
    Nop,
    Const {
        dst: Reg,
        k: i64,
    },
    Null {
        dst: Reg,
    },
    /// A copy with no check (an address held in a variable's register).
    Move {
        dst: Reg,
        src: Reg,
    },
    /// A variable's value; uninitialised fails at `at[0]`.
    Read {
        dst: Reg,
        src: Reg,
        at: At,
    },
    /// The value in the cell `cell` refers to; uninitialised fails at `at[0]`.
    ReadCell {
        dst: Reg,
        cell: Reg,
        at: At,
    },
    /// Stores `src` into the cell `cell` refers to.
    WriteCell {
        cell: Reg,
        src: Reg,
    },
    Input {
        dst: Reg,
    },
    /// `*src`: null fails at `at[0]`, and so does an uninitialised cell.
    Deref {
        dst: Reg,
        src: Reg,
        at: At,
    },
    /// The place `*src`: `src` itself, once it is known not to be null.
    PtrCheck {
        dst: Reg,
        src: Reg,
        at: At,
    },
    /// A new cell holding `src`; `at[0]` is the statement (the cell limit).
    Alloc {
        dst: Reg,
        src: Reg,
        at: At,
    },
    Neg {
        dst: Reg,
        src: Reg,
        at: At,
    },
    Not {
        dst: Reg,
        src: Reg,
        at: At,
    },
    Add {
        dst: Reg,
        a: Reg,
        b: Reg,
        at: At,
    },
    AddK {
        dst: Reg,
        a: Reg,
        k: i64,
        at: At,
    },
    /// `-`, `*`, `/` (the less common operators share one operation).
    Bin {
        op: Arith,
        dst: Reg,
        a: Reg,
        b: Reg,
        at: At,
    },
    BinK {
        op: Arith,
        dst: Reg,
        a: Reg,
        k: i64,
        at: At,
    },
    /// 1 if `a` compares to `b` as `mask` says, else 0; `==` and `!=`
    /// compare pointers too.
    Cmp {
        mask: Mask,
        dst: Reg,
        a: Reg,
        b: Reg,
        at: At,
    },
    CmpK {
        mask: Mask,
        dst: Reg,
        a: Reg,
        k: i64,
        at: At,
    },
    Jump {
        to: u32,
    },
    /// Jumps when `src`'s truth is `want`.
    JumpIf {
        src: Reg,
        want: bool,
        to: u32,
        at: At,
    },
    /// Jumps when `a` compares to `b` as `mask` says.
    Branch {
        mask: Mask,
        a: Reg,
        b: Reg,
        to: u32,
        at: At,
    },
    BranchK {
        mask: Mask,
        a: Reg,
        k: i64,
        to: u32,
        at: At,
    },
    /// An array of new cells holding `first..first + n`.
    MakeArray {
        dst: Reg,
        first: Reg,
        n: u32,
    },
    /// A record of new cells holding `first..`, one per field of `shape`.
    MakeRecord {
        dst: Reg,
        first: Reg,
        shape: u32,
    },
    /// `arr[idx]`'s value; out of bounds and uninitialised fail at `at[0]`.
    /// `again`: the value is indexed again (an input array's element the
    /// witness did not give is then an empty array).
    Elem {
        dst: Reg,
        arr: Reg,
        idx: Reg,
        at: At,
        again: bool,
    },
    /// `arr[idx] = src` (an element's cell found and written at once).
    StoreElem {
        arr: Reg,
        idx: Reg,
        src: Reg,
        at: At,
    },
    /// Jumps when `a` compares to `null` as `mask` (`==` or `!=`) says.
    BranchNull {
        mask: Mask,
        a: Reg,
        to: u32,
        at: At,
    },
    /// `arr[idx]`'s cell, as a cell reference.
    ElemCell {
        dst: Reg,
        arr: Reg,
        idx: Reg,
        at: At,
    },
    /// Field `name` of a record or of the record a pointer points to.
    Field {
        dst: Reg,
        base: Reg,
        name: u32,
        at: At,
    },
    FieldCell {
        dst: Reg,
        base: Reg,
        name: u32,
        at: At,
    },
    /// Calls `func` with its arguments in `first..`; `at` = `[call, statement]`.
    Call {
        func: u32,
        first: Reg,
        dst: Reg,
        at: At,
    },
    /// Returns `src` (a variable's own register: uninitialised fails at
    /// `at[1]`).
    Ret {
        src: Reg,
        at: At,
    },
    /// The entry of a call compiled in place: the depth limit, at `at[0]`.
    Enter {
        at: At,
    },
    /// Registers `first..first + n` made uninitialised (an inlined
    /// function's locals).
    Clear {
        first: Reg,
        n: u32,
    },
    Output {
        src: Reg,
        at: At,
    },
    Assert {
        src: Reg,
        at: At,
    },
    Assume {
        src: Reg,
        at: At,
    },
}

/// An operation and the steps taken just before it: `steps` statement
/// steps whose spans are `step_spans[step_at..step_at + steps]`. Nothing
/// happens between consecutive steps (a block's step and its first
/// statement's), so they are counted at once unless the limit is near.
#[derive(Clone, Copy, Debug)]
pub(super) struct Instr {
    pub op: Op,
    pub steps: u16,
    pub step_at: u32,
}

/// What a frame of a function needs.
#[derive(Clone, Debug)]
pub(super) struct FuncCode {
    pub entry: u32,
    pub n_params: u32,
    /// Parameters and locals: the registers a call must initialise.
    pub n_slots: u32,
    pub n_regs: u32,
    /// Slots whose address is taken: they live in cells.
    pub celled: Vec<u32>,
}

/// A compiled program.
#[derive(Debug, Default)]
pub(super) struct Code {
    pub instrs: Vec<Instr>,
    pub funcs: Vec<FuncCode>,
    pub main: usize,
    /// Absolute spans, indexed by `At` and by `step_spans`.
    pub spans: Vec<Span>,
    pub step_spans: Vec<At>,
    /// Each record shape's field names (interned), in the literal's order.
    pub shapes: Vec<Vec<u32>>,
    /// `field_at[shape * n_names + name]`: the field's position in the
    /// shape, `u32::MAX` where the shape has no such field.
    pub field_at: Vec<u32>,
    pub n_names: u32,
}

/// A value as the native tier holds it: a tag word and a payload word,
/// laid out for machine code (`Val`'s own layout is the compiler's).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Slot {
    pub tag: u64,
    pub bits: u64,
}

/// The tags of [`Slot`]: `Uninit` is 0, so that a zeroed slot is unset.
pub(super) mod tag {
    pub const UNINIT: u64 = 0;
    pub const INT: u64 = 1;
    pub const NULL: u64 = 2;
    pub const PTR: u64 = 3;
    pub const ARR: u64 = 4;
    pub const INPUT: u64 = 5;
    pub const REC: u64 = 6;
}

impl Val {
    pub fn to_slot(self) -> Slot {
        let pair = |lo: u32, hi: u32| u64::from(lo) | (u64::from(hi) << 32);
        let (tag, bits) = match self {
            Val::Uninit => (tag::UNINIT, 0),
            Val::Int(n) => (tag::INT, n as u64),
            Val::Null => (tag::NULL, 0),
            Val::Ptr(c) => (tag::PTR, u64::from(c)),
            Val::Arr { start, len } => (tag::ARR, pair(start, len)),
            Val::Input(k) => (tag::INPUT, u64::from(k)),
            Val::Rec { start, shape } => (tag::REC, pair(start, shape)),
        };
        Slot { tag, bits }
    }

    pub fn from_slot(s: Slot) -> Val {
        let (lo, hi) = (s.bits as u32, (s.bits >> 32) as u32);
        match s.tag {
            tag::INT => Val::Int(s.bits as i64),
            tag::NULL => Val::Null,
            tag::PTR => Val::Ptr(lo),
            tag::ARR => Val::Arr { start: lo, len: hi },
            tag::INPUT => Val::Input(lo),
            tag::REC => Val::Rec {
                start: lo,
                shape: hi,
            },
            _ => Val::Uninit,
        }
    }
}

/// The registers an operation reads and the one it writes, for the
/// native tier, which keeps registers in machine registers and hands the
/// interpreter only those an operation it runs there touches.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Touches {
    reads: [Reg; 3],
    n_reads: usize,
    /// A run of consecutive registers read: `(first, n)`.
    run: (Reg, u32),
    pub write: Option<Reg>,
}

impl Touches {
    /// Every register read, once or more.
    pub fn reads(&self) -> impl Iterator<Item = Reg> + '_ {
        let (first, n) = self.run;
        self.reads[..self.n_reads]
            .iter()
            .copied()
            .chain(first..first + n)
    }
}

impl Op {
    /// What the operation touches; `shapes` gives a record's size.
    pub fn touches(&self, shapes: &[Vec<u32>]) -> Touches {
        let t = |reads: &[Reg], write: Option<Reg>| {
            let mut fixed = [0; 3];
            fixed[..reads.len()].copy_from_slice(reads);
            Touches {
                reads: fixed,
                n_reads: reads.len(),
                run: (0, 0),
                write,
            }
        };
        let run = |first: Reg, n: u32, dst: Reg| Touches {
            run: (first, n),
            write: Some(dst),
            ..Touches::default()
        };
        match *self {
            Op::Nop | Op::Jump { .. } | Op::Enter { .. } => t(&[], None),
            Op::Const { dst, .. } | Op::Null { dst } | Op::Input { dst } => t(&[], Some(dst)),
            Op::Move { dst, src }
            | Op::Read { dst, src, .. }
            | Op::Deref { dst, src, .. }
            | Op::PtrCheck { dst, src, .. }
            | Op::Alloc { dst, src, .. }
            | Op::Neg { dst, src, .. }
            | Op::Not { dst, src, .. } => t(&[src], Some(dst)),
            Op::ReadCell { dst, cell, .. } => t(&[cell], Some(dst)),
            Op::WriteCell { cell, src } => t(&[cell, src], None),
            Op::Add { dst, a, b, .. } | Op::Bin { dst, a, b, .. } | Op::Cmp { dst, a, b, .. } => {
                t(&[a, b], Some(dst))
            }
            Op::AddK { dst, a, .. } | Op::BinK { dst, a, .. } | Op::CmpK { dst, a, .. } => {
                t(&[a], Some(dst))
            }
            Op::JumpIf { src, .. } | Op::Output { src, .. } | Op::Assert { src, .. } => {
                t(&[src], None)
            }
            Op::Assume { src, .. } | Op::Ret { src, .. } => t(&[src], None),
            Op::Branch { a, b, .. } => t(&[a, b], None),
            Op::BranchK { a, .. } | Op::BranchNull { a, .. } => t(&[a], None),
            Op::MakeArray { dst, first, n } => run(first, n, dst),
            Op::MakeRecord { dst, first, shape } => {
                run(first, shapes[shape as usize].len() as u32, dst)
            }
            Op::Elem { dst, arr, idx, .. } | Op::ElemCell { dst, arr, idx, .. } => {
                t(&[arr, idx], Some(dst))
            }
            Op::StoreElem { arr, idx, src, .. } => t(&[arr, idx, src], None),
            Op::Field { dst, base, .. } | Op::FieldCell { dst, base, .. } => t(&[base], Some(dst)),
            // Calls, and the clearing of an inlined call's locals, are
            // the native tier's own: the interpreter never runs them there.
            Op::Call { .. } | Op::Clear { .. } => t(&[], None),
        }
    }
}
