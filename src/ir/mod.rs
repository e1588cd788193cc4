//! The flowgraph IR: one graph per function, edges labelled with
//! instructions, as in the program model of Strejček and Trtík's technical
//! report *Abstracting Path Conditions for Effective Symbolic Execution*
//! (§2; `docs/necessary-conditions.md` §2).
//!
//! - Edges carry `assign`, `assume(γ)`, `assert(γ)`, `skip`, plus `alloc`,
//!   `call` and `output`, which the analyses give their own meaning.
//! - Expressions on edges are pure: they cannot fail and have no side
//!   effects. Everything that can fail is checked first by a *check vertex*
//!   with two out-edges: `assume(fail)` to the target's own error vertex and
//!   `assert(¬fail)` onward. So every target is an explicit edge to an
//!   error location, and reaching a target means reaching its error vertex.
//! - Predicates are connective-free atoms: `&&`, `||` and `!` in conditions
//!   are lowered to branching; a branching vertex has exactly the two
//!   out-edges `assume(γ)` and `assume(¬γ)`.
//! - `input` is a read `$in[$ic]` followed by `$ic := $ic + 1`: `$in` is the
//!   input stream (an input array) and `$ic` an ordinary integer variable,
//!   global to the program, so loops that read input summarise like array
//!   scans.
//! - Every in-edge of a loop header is `skip` (the papers' normalisation).
//!
//! Spans are function-relative (see `syntax::ast`). Knows the AST and the
//! types; knows nothing of terms, solvers or the interpreter.

mod alias;
mod definite_assignment;
mod dependencies;
mod facts;
mod inline;
mod loops;
mod lower;
mod print;
mod ranges;
mod scalarise;
mod slice;
mod summarised;

pub use alias::{Sharing, type_of};
pub use definite_assignment::{DefiniteAssignment, definite_assignment};
pub use dependencies::{CallGraph, call_graph, called_from, runs_before};
pub use facts::{ValueFacts, value_facts};
pub use inline::{
    Program as InlinedProgram, TargetOrigin, append, inline_function, inline_program, natural_loops,
};
pub use loops::{Backbones, backbones, loop_backbones};
pub use lower::lower_function;
pub use print::{TargetMark, cond as condition_text, to_dot, to_dot_with, to_text};
pub use scalarise::scalarise;
pub use slice::slice;
pub use summarised::{Summaries, Summary, with_summaries};

use crate::TargetKind;
use crate::syntax::Span;
use crate::syntax::ast::Program;
use crate::syntax::ast::UnOp;
use crate::types::ProgramTypes;
use crate::types::Type;
use num_bigint::BigInt;

pub type NodeId = u32;
pub type EdgeId = u32;
pub type VarId = u32;
pub type TargetId = u32;
pub type LoopId = u32;

/// The name of the input-stream array, shared by all functions.
pub const INPUT_STREAM: &str = "$in";
/// The name of the input-stream position, shared by all functions.
pub const INPUT_COUNTER: &str = "$ic";
/// The name of the variable that holds the return value.
pub const RETURN_VAR: &str = "$ret";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VarKind {
    Param,
    Local,
    /// A temporary made by lowering (a call result, an input read, …).
    Temp,
    /// The function's return value.
    Return,
    /// Program-wide: the input stream and its position.
    Global,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VarInfo {
    pub name: String,
    pub kind: VarKind,
    pub ty: Type,
    /// For parameters of `main` that are arrays: unbounded, never out of bounds.
    pub input_array: bool,
}

impl VarInfo {
    /// Whether the variable holds input the analyses see as a symbolic
    /// array: an array parameter of `main`, or the input stream `$in`
    /// (which lowering does not flag, so that the printed flowgraphs stay
    /// as they are).
    pub fn is_input(&self) -> bool {
        self.input_array || self.name == INPUT_STREAM
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// Truncating division; the divisor was checked non-zero before.
    Div,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub fn negate(self) -> CmpOp {
        match self {
            CmpOp::Eq => CmpOp::Ne,
            CmpOp::Ne => CmpOp::Eq,
            CmpOp::Lt => CmpOp::Ge,
            CmpOp::Le => CmpOp::Gt,
            CmpOp::Gt => CmpOp::Le,
            CmpOp::Ge => CmpOp::Lt,
        }
    }
    /// Whether `a op b` holds when `a` compares with `b` as `ord` says.
    pub fn holds(self, ord: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            CmpOp::Eq => ord == Equal,
            CmpOp::Ne => ord != Equal,
            CmpOp::Lt => ord == Less,
            CmpOp::Le => ord != Greater,
            CmpOp::Gt => ord == Greater,
            CmpOp::Ge => ord != Less,
        }
    }
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// A pure expression: no side effects, cannot fail.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    Int(BigInt),
    Null,
    Var(VarId),
    /// `-e`, or `!e` (1 if e == 0, else 0).
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// A comparison used as a value: 1 if it holds, else 0.
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    /// The value in the cell a (non-null) pointer points to.
    Load(Box<Expr>),
    /// Element of an array value (index checked in bounds before).
    Index(Box<Expr>, Box<Expr>),
    /// Field of a record value.
    Field(Box<Expr>, String),
    AddrOf(VarId),
    Array(Vec<Expr>),
    Record(Vec<(String, Expr)>),
}

impl Expr {
    /// The value of an expression of literals only (`2 + 5`), if it has
    /// one (a division by zero has none).
    pub fn constant(&self) -> Option<BigInt> {
        match self {
            Expr::Int(n) => Some(n.clone()),
            Expr::Unary(UnOp::Neg, a) => Some(-a.constant()?),
            Expr::Binary(op, a, b) => {
                let (a, b) = (a.constant()?, b.constant()?);
                match op {
                    BinOp::Add => Some(a + b),
                    BinOp::Sub => Some(a - b),
                    BinOp::Mul => Some(a * b),
                    // BigInt's division truncates, as microc's does.
                    BinOp::Div => (b != BigInt::from(0)).then(|| a / b),
                }
            }
            _ => None,
        }
    }

    /// Calls `f` on this expression and every subexpression, parents first.
    pub fn walk(&self, f: &mut impl FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Unary(_, a) | Expr::Load(a) | Expr::Field(a, _) => a.walk(f),
            Expr::Binary(_, a, b) | Expr::Cmp(_, a, b) | Expr::Index(a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Expr::Array(xs) => xs.iter().for_each(|x| x.walk(f)),
            Expr::Record(fs) => fs.iter().for_each(|(_, x)| x.walk(f)),
            Expr::Int(_) | Expr::Null | Expr::Var(_) | Expr::AddrOf(_) => {}
        }
    }
}

/// A storage place written by an assignment.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    Var(VarId),
    /// The cell a (non-null) pointer points to.
    Deref(Expr),
    Index(Box<Place>, Expr),
    Field(Box<Place>, String),
}

impl Place {
    /// The current value stored at this place.
    pub fn value(&self) -> Expr {
        match self {
            Place::Var(v) => Expr::Var(*v),
            Place::Deref(e) => Expr::Load(Box::new(e.clone())),
            Place::Index(b, i) => Expr::Index(Box::new(b.value()), Box::new(i.clone())),
            Place::Field(b, f) => Expr::Field(Box::new(b.value()), f.clone()),
        }
    }

    /// The variable whose cells a write to this place writes into, or
    /// `None` for a cell behind a pointer.
    pub fn root_var(&self) -> Option<VarId> {
        match self {
            Place::Var(v) => Some(*v),
            Place::Deref(_) => None,
            Place::Index(b, _) | Place::Field(b, _) => b.root_var(),
        }
    }
}

/// A connective-free predicate.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    Cmp(CmpOp, Expr, Expr),
    /// Whether the place holds a value (`positive`) or was never assigned.
    Initialized {
        place: Place,
        positive: bool,
    },
    /// Whether `0 <= index < length(array)`; always true for input arrays.
    InBounds {
        array: Expr,
        index: Expr,
        positive: bool,
    },
}

impl Cond {
    /// Whether the condition fails on every run by its form alone: a
    /// comparison of two literals, or of an expression with itself (the
    /// generator's `7 != 7`, `x > x`), that does not hold.
    pub fn never_holds(&self) -> bool {
        match self {
            Cond::Cmp(op, a, b) if a == b => !op.holds(std::cmp::Ordering::Equal),
            Cond::Cmp(op, a, b) => match (a.constant(), b.constant()) {
                (Some(a), Some(b)) => !op.holds(a.cmp(&b)),
                _ => false,
            },
            _ => false,
        }
    }

    pub fn negate(&self) -> Cond {
        match self {
            Cond::Cmp(op, a, b) => Cond::Cmp(op.negate(), a.clone(), b.clone()),
            Cond::Initialized { place, positive } => Cond::Initialized {
                place: place.clone(),
                positive: !positive,
            },
            Cond::InBounds {
                array,
                index,
                positive,
            } => Cond::InBounds {
                array: array.clone(),
                index: index.clone(),
                positive: !positive,
            },
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Instr {
    Assign(Place, Expr),
    /// `v := alloc e`: a fresh cell holding e.
    Alloc(VarId, Expr),
    /// `v := f(args)`.
    Call {
        dst: VarId,
        func: String,
        args: Vec<Expr>,
    },
    Output(Expr),
    Assume(Cond),
    /// The run continues only if the condition holds; the other out-edge of
    /// the same vertex goes to the target's error vertex.
    Assert(Cond, TargetId),
    Skip,
    /// A new activation of an inlined function begins: its locals (these
    /// variables) are fresh cells that hold nothing yet. Only in the
    /// whole-program graph, at the entry of each inlined copy: a copy
    /// entered again in a loop must not inherit the previous activation's
    /// assignments or cells.
    Enter(Vec<VarId>),
}

impl Place {
    /// Calls `f` on every expression the place reads (pointers, indices).
    pub fn walk_exprs(&self, f: &mut impl FnMut(&Expr)) {
        match self {
            Place::Var(_) => {}
            Place::Deref(e) => e.walk(f),
            Place::Index(b, i) => {
                b.walk_exprs(f);
                i.walk(f);
            }
            Place::Field(b, _) => b.walk_exprs(f),
        }
    }
}

impl Cond {
    /// Calls `f` on every expression the condition reads.
    pub fn walk_exprs(&self, f: &mut impl FnMut(&Expr)) {
        match self {
            Cond::Cmp(_, a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Cond::Initialized { place, .. } => place.walk_exprs(f),
            Cond::InBounds { array, index, .. } => {
                array.walk(f);
                index.walk(f);
            }
        }
    }
}

impl Instr {
    /// Calls `f` on every expression (and subexpression) the instruction
    /// reads, those inside the places it writes included.
    pub fn walk_exprs(&self, f: &mut impl FnMut(&Expr)) {
        match self {
            Instr::Assign(p, e) => {
                p.walk_exprs(f);
                e.walk(f);
            }
            Instr::Alloc(_, e) | Instr::Output(e) => e.walk(f),
            Instr::Call { args, .. } => args.iter().for_each(|a| a.walk(f)),
            Instr::Assume(c) | Instr::Assert(c, _) => c.walk_exprs(f),
            Instr::Skip | Instr::Enter(_) => {}
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Edge {
    pub from: NodeId,
    pub to: NodeId,
    pub instr: Instr,
    /// The source construct (function-relative).
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    pub id: TargetId,
    pub kind: TargetKind,
    /// Where the failure is reported (function-relative): the operator token.
    pub span: Span,
    /// The error vertex; reaching it means hitting the target.
    pub node: NodeId,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Loop {
    pub id: LoopId,
    /// The loop entry: every in-edge is `skip`.
    pub header: NodeId,
    /// Vertices on cycles through the header (inner loops included), sorted.
    pub nodes: Vec<NodeId>,
    /// Edges from inside the loop back to the header.
    pub back_edges: Vec<EdgeId>,
    /// Edges leaving the loop to its exit vertex (when the condition fails).
    pub exit_edges: Vec<EdgeId>,
    pub parent: Option<LoopId>,
    /// The `while` statement (function-relative).
    pub span: Span,
}

/// The flowgraph of one function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Body {
    pub name: String,
    pub vars: Vec<VarInfo>,
    /// The first `params` variables are the parameters, in order.
    pub params: usize,
    pub node_count: u32,
    pub edges: Vec<Edge>,
    pub entry: NodeId,
    /// Reached after `$ret` is assigned.
    pub exit: NodeId,
    pub targets: Vec<Target>,
    pub loops: Vec<Loop>,
    /// Error vertex -> target, and the vertex of each loop header.
    pub node_kinds: Vec<NodeKind>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeKind {
    Plain,
    Entry,
    Exit,
    Error(TargetId),
    LoopHeader(LoopId),
}

impl Body {
    /// A new vertex of `kind`, after the others.
    pub fn add_vertex(&mut self, kind: NodeKind) -> NodeId {
        self.node_kinds.push(kind);
        self.node_count += 1;
        self.node_count - 1
    }

    pub fn var(&self, id: VarId) -> &VarInfo {
        &self.vars[id as usize]
    }
    pub fn var_id(&self, name: &str) -> Option<VarId> {
        self.vars
            .iter()
            .position(|v| v.name == name)
            .map(|i| i as VarId)
    }
    /// Out-edges of each vertex, by edge id.
    pub fn successors(&self) -> Vec<Vec<EdgeId>> {
        let mut out = vec![Vec::new(); self.node_count as usize];
        for (i, e) in self.edges.iter().enumerate() {
            out[e.from as usize].push(i as EdgeId);
        }
        out
    }
    /// The vertices from which one of `targets` can be reached along
    /// `edges` (the targets included).
    pub fn reaching(&self, targets: &[NodeId], edges: &[EdgeId]) -> Vec<bool> {
        let mut into: Vec<Vec<EdgeId>> = vec![Vec::new(); self.node_count as usize];
        for &e in edges {
            into[self.edges[e as usize].to as usize].push(e);
        }
        let mut reaches = vec![false; self.node_count as usize];
        for &t in targets {
            reaches[t as usize] = true;
        }
        let mut work: Vec<NodeId> = targets.to_vec();
        while let Some(n) = work.pop() {
            for &e in &into[n as usize] {
                let from = self.edges[e as usize].from;
                if !reaches[from as usize] {
                    reaches[from as usize] = true;
                    work.push(from);
                }
            }
        }
        reaches
    }

    /// The variables whose address is taken (`&v`) somewhere in the body:
    /// the only ones a write through a pointer may change.
    pub fn address_taken(&self) -> Vec<VarId> {
        let mut out = Vec::new();
        for e in &self.edges {
            e.instr.walk_exprs(&mut |x| {
                if let Expr::AddrOf(v) = x {
                    out.push(*v);
                }
            });
        }
        out.sort();
        out.dedup();
        out
    }
    pub fn is_back_edge(&self, e: EdgeId) -> bool {
        self.loops.iter().any(|l| l.back_edges.contains(&e))
    }
    /// Edges that leave a loop when its condition fails, as a mask (the
    /// `while` rule of the symbolic executor continues them first).
    pub fn exit_edge_mask(&self) -> Vec<bool> {
        let mut mask = vec![false; self.edges.len()];
        for l in &self.loops {
            for &e in &l.exit_edges {
                mask[e as usize] = true;
            }
        }
        mask
    }
    /// `is_back_edge` for every edge at once (for passes over all edges:
    /// one scan of the loops instead of one per edge).
    pub fn back_edge_mask(&self) -> Vec<bool> {
        let mut mask = vec![false; self.edges.len()];
        for l in &self.loops {
            for &e in &l.back_edges {
                mask[e as usize] = true;
            }
        }
        mask
    }
}

/// Lowers every function of a well-typed program (without the database).
/// A dereference may read an unassigned cell if any function takes the
/// address of a variable it may leave unassigned.
pub fn lower_program(program: &Program, types: &ProgramTypes) -> Vec<Body> {
    let das: Vec<DefiniteAssignment> = program.functions.iter().map(definite_assignment).collect();
    let deref_uninit = das.iter().any(|d| d.unassigned_address_taken);
    program
        .functions
        .iter()
        .zip(&types.functions)
        .zip(&das)
        .map(|((f, t), da)| lower_function(f, t, da, deref_uninit))
        .collect()
}

/// Each vertex's place in a reverse postorder from `entry`, the vertices
/// after each one given by `next` (unreached vertices last): the order
/// in which a forward analysis visits a vertex after those before it.
pub(crate) fn reverse_postorder(entry: usize, next: &[Vec<usize>]) -> Vec<usize> {
    let n = next.len();
    let mut seen = vec![false; n];
    let mut post = Vec::with_capacity(n);
    // (vertex, index of the next successor to visit)
    let mut stack = vec![(entry, 0usize)];
    seen[entry] = true;
    while let Some((v, i)) = stack.pop() {
        match next[v].get(i) {
            Some(&to) => {
                stack.push((v, i + 1));
                if !std::mem::replace(&mut seen[to], true) {
                    stack.push((to, 0));
                }
            }
            None => post.push(v),
        }
    }
    let mut order = vec![n; n];
    for (k, v) in post.iter().rev().enumerate() {
        order[*v] = k;
    }
    order
}

#[cfg(test)]
mod tests;
