//! The abstract syntax tree of a microc program.
//!
//! Spans inside a [`Function`] are relative to the function's `offset`, so
//! that editing one function leaves the ASTs of the others bit-for-bit equal
//! (the salsa database relies on this to reuse their downstream results).
//! Use [`Function::abs`] to get an absolute span for a diagnostic.

use super::diagnostic::Span;
use num_bigint::BigInt;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    pub functions: Vec<Function>,
}

impl Program {
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name.name == name)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Function {
    pub name: Ident,
    pub params: Vec<Ident>,
    /// Variables declared in the `var` block, in order.
    pub locals: Vec<Ident>,
    pub body: Vec<Stmt>,
    /// The expression of the final `return`.
    pub ret: Expr,
    /// Span of the whole `return e;` statement.
    pub ret_span: Span,
    /// Span of the whole function (relative: starts at 0).
    pub span: Span,
    /// Absolute byte offset of the function in the file.
    pub offset: u32,
    /// Number of expression ids handed out: ids are `0..expr_count`.
    pub expr_count: u32,
}

impl Function {
    /// The absolute span of a function-relative span.
    pub fn abs(&self, span: Span) -> Span {
        span.shift(self.offset)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StmtKind {
    Assign {
        lhs: Expr,
        rhs: Expr,
    },
    Output(Expr),
    If {
        cond: Expr,
        then: Box<Stmt>,
        els: Option<Box<Stmt>>,
    },
    While {
        cond: Expr,
        body: Box<Stmt>,
    },
    Block(Vec<Stmt>),
    Assert(Expr),
    Assume(Expr),
}

/// Identifies an expression within its function (dense, from 0).
pub type ExprId = u32;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Expr {
    pub id: ExprId,
    pub kind: ExprKind,
    pub span: Span,
    /// Where a failure of this expression is reported: the operator token
    /// (`/`, `[`, `.`, `*`) for operators, otherwise the start of `span`.
    /// Distinct failing operations of one expression get distinct places.
    pub op: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "||",
            BinOp::And => "&&",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
        }
    }
    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `-e`
    Neg,
    /// `!e`
    Not,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ExprKind {
    Num(BigInt),
    Var(String),
    Null,
    Input,
    Alloc(Box<Expr>),
    AddrOf(Ident),
    Deref(Box<Expr>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Index(Box<Expr>, Box<Expr>),
    Field(Box<Expr>, Ident),
    Call(Ident, Vec<Expr>),
    Array(Vec<Expr>),
    Record(Vec<(Ident, Expr)>),
    /// Placeholder after a syntax error; never survives a successful parse.
    Error,
}

impl Expr {
    /// The direct subexpressions, in evaluation order.
    pub fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Num(_)
            | ExprKind::Var(_)
            | ExprKind::Null
            | ExprKind::Input
            | ExprKind::AddrOf(_)
            | ExprKind::Error => {
                vec![]
            }
            ExprKind::Alloc(e)
            | ExprKind::Deref(e)
            | ExprKind::Unary(_, e)
            | ExprKind::Field(e, _) => vec![e],
            ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => vec![a, b],
            ExprKind::Call(_, args) | ExprKind::Array(args) => args.iter().collect(),
            ExprKind::Record(fields) => fields.iter().map(|(_, e)| e).collect(),
        }
    }

    /// Calls `f` on this expression and every subexpression, parents first.
    pub fn walk<'a>(&'a self, f: &mut impl FnMut(&'a Expr)) {
        f(self);
        for c in self.children() {
            c.walk(f);
        }
    }
}

impl Stmt {
    /// The expressions directly in this statement (not in nested statements).
    pub fn exprs(&self) -> Vec<&Expr> {
        match &self.kind {
            StmtKind::Assign { lhs, rhs } => vec![lhs, rhs],
            StmtKind::Output(e) | StmtKind::Assert(e) | StmtKind::Assume(e) => vec![e],
            StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => vec![cond],
            StmtKind::Block(_) => vec![],
        }
    }

    /// The statements directly nested in this one.
    pub fn children(&self) -> Vec<&Stmt> {
        match &self.kind {
            StmtKind::If { then, els, .. } => {
                let mut v = vec![&**then];
                if let Some(e) = els {
                    v.push(e);
                }
                v
            }
            StmtKind::While { body, .. } => vec![body],
            StmtKind::Block(b) => b.iter().collect(),
            _ => vec![],
        }
    }

    /// Calls `f` on this statement and every nested one, parents first.
    pub fn walk<'a>(&'a self, f: &mut impl FnMut(&'a Stmt)) {
        f(self);
        for c in self.children() {
            c.walk(f);
        }
    }
}

impl Function {
    /// Calls `f` on every expression of the function, the return included.
    pub fn walk_exprs<'a>(&'a self, f: &mut impl FnMut(&'a Expr)) {
        for s in &self.body {
            s.walk(&mut |s| {
                for e in s.exprs() {
                    e.walk(f);
                }
            });
        }
        self.ret.walk(f);
    }

    /// For each expression id: whether evaluating it runs no call (so no
    /// other function can change a variable or a cell while it runs).
    pub fn call_free(&self) -> Vec<bool> {
        let mut exprs = Vec::new();
        self.walk_exprs(&mut |e| exprs.push(e));
        let n = exprs.iter().map(|e| e.id as usize + 1).max().unwrap_or(0);
        let mut free = vec![false; n];
        // Parents come before children: fill backwards.
        for e in exprs.iter().rev() {
            free[e.id as usize] = !matches!(e.kind, ExprKind::Call(..))
                && e.children().iter().all(|c| free[c.id as usize]);
        }
        free
    }
}
