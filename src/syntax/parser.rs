//! Recursive-descent parser for microc with error recovery.
//!
//! - C precedence (`||` < `&&` < `== !=` < `< <= > >=` < `+ -` < `* /`), all
//!   binary operators left-associative; a warning where `&&` and `||` are
//!   mixed without parentheses, since the thesis's grammar reads them on one
//!   level.
//! - Recovery: a bad statement is skipped up to `;` or `}`; a bad function up
//!   to the next `name(` at brace depth zero, so one run reports the errors of
//!   every function.
//! - No input makes it panic or overflow the stack. Five documented limits
//!   bound every recursion, here and in every later pass (they all recurse
//!   over statements and expressions):
//!   - [`MAX_STMT_NESTING`]: `if`/`while` statements and blocks inside one
//!     another;
//!   - [`MAX_EXPR_NESTING`]: parentheses, brackets, braces, argument lists,
//!     `alloc` operands and prefix operators inside one another;
//!   - [`MAX_CHAIN_OPERANDS`]: operands of one left-associative chain of one
//!     precedence level (`a + b - c + …`, `a && b && …`). A chain is *not*
//!     nesting: the parser builds it in a loop, but the tree it builds is
//!     left-deep (one level per operand), and the later passes recurse
//!     along that spine. The cap keeps them within the big stacks they run
//!     on (see [`MAX_EXPR_HEIGHT`]);
//!   - [`MAX_POSTFIX_CHAIN`]: postfix operations in a row (`a[i][j]…`);
//!   - [`MAX_EXPR_HEIGHT`]: the height of an expression tree, the real bound
//!     on the recursion depth of the later passes; it is only reached by
//!     long chains nested in other long chains.
//!
//!   Each one gets one diagnostic naming the limit, and the construct beyond
//!   it is skipped iteratively.

use super::ast::*;
use super::diagnostic::{Diagnostic, Span};
use super::lexer::{Tok, Token, lex};
use num_bigint::BigInt;

/// Deepest nesting of statements: an `if`, a `while` or a free-standing
/// block `{ … }` inside another opens one level (the block that is the body
/// of an `if`/`while`/`else` belongs to that statement's level). Simple
/// statements open none. 49 nested `if (…) { … }` are 49 levels.
pub const MAX_STMT_NESTING: u32 = 100;
/// Deepest nesting of expressions: every `( … )`, array literal or index
/// `[ … ]`, record `{ … }`, argument list, `alloc` operand and prefix
/// operator (`-`, `!`, `*`) opens one level inside the statement's
/// expression (which is level 1). Binary operators do not: their depth is
/// bounded by the six precedence levels and by [`MAX_CHAIN_OPERANDS`].
/// Separate from [`MAX_STMT_NESTING`]: deep statements do not eat it.
pub const MAX_EXPR_NESTING: u32 = 200;
/// Most operands in one chain of left-associative operators of one
/// precedence level (`x + x - x + …`, `a && b && …`, `a * b / c * …`).
/// Generous: such chains come from generated code. Beyond it the parser
/// reports one diagnostic naming this limit.
pub const MAX_CHAIN_OPERANDS: u32 = 10_000;
/// Most postfix operations in a row (`a[i][j]…`, `p.next.next…`). Each one
/// peels a level off the operand's type, so a long chain means a deep type,
/// and type inference exports a type per subexpression (cubic in the chain
/// length); this is the height bound expressions had before chains were
/// accepted.
pub const MAX_POSTFIX_CHAIN: u32 = 200;
/// Tallest expression tree. The later passes (names and types, definite
/// assignment, lowering and the IR printers and evaluators, the interpreter,
/// the pretty-printer) recurse over expression trees, a chain being a
/// left-deep tree with one level per operand; this is what bounds their
/// stack use. It leaves room for a maximal chain inside a maximally nested
/// expression (each of the [`MAX_EXPR_NESTING`] levels adds at most a few
/// tree levels), so it is only reached by long chains nested in other long
/// chains. Callers run the passes
/// on big-stack threads: the CLI and the `check` workers on 256 MiB stacks,
/// the parser and the interpreter on their own. At this height the
/// hungriest pass (lowering) needs about 50 MiB in a debug build; the
/// interpreter walks chains iteratively, as its stack is shared with microc
/// recursion.
pub const MAX_EXPR_HEIGHT: u32 = MAX_CHAIN_OPERANDS + 2_000;
/// Runs `f` on a thread with the stack the CLI gives the passes (256 MiB,
/// see `cli::main`), for tests of the passes on expressions near
/// [`MAX_EXPR_HEIGHT`], far beyond a test thread's 2 MiB.
#[cfg(test)]
pub(crate) fn on_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        crate::deadline::analysis_thread()
            .spawn_scoped(scope, f)
            .expect("spawning a big-stack test thread")
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}

/// After this many errors the parser stops reporting (it still recovers).
const MAX_ERRORS: usize = 100;

/// Host stack of the parser thread. The parser recurses once per nesting
/// level, and a debug build spends about 25 KiB of stack per expression
/// level ([`MAX_EXPR_NESTING`] of them), more than a test thread's 2 MiB;
/// only the touched pages of the reservation are committed.
const PARSER_STACK: usize = 64 << 20;

/// Parses a whole file. The program is usable only if no diagnostic is an error.
///
/// Runs on a thread of its own with a [`PARSER_STACK`] stack (as the
/// interpreter does), so that the nesting limits hold whatever stack the
/// caller has.
pub fn parse(text: &str) -> (Program, Vec<Diagnostic>) {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("apc-parser".into())
            .stack_size(PARSER_STACK)
            .spawn_scoped(scope, || parse_here(text))
            .ok()
            .and_then(|h| h.join().ok())
            .unwrap_or_else(|| {
                let d = Diagnostic::error("internal error: the parser thread could not run").note(
                    "apc parses on a thread of its own; the system may be out of threads or memory",
                );
                (Program { functions: vec![] }, vec![d])
            })
    })
}

/// [`parse`] on the current thread.
fn parse_here(text: &str) -> (Program, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let toks = lex(text, &mut diags);
    let mut p = Parser {
        toks,
        pos: 0,
        diags,
        offset: 0,
        next_id: 0,
        heights: vec![],
        parenthesized: vec![],
        stmt_depth: 0,
        expr_depth: 0,
        height_reported: false,
    };
    let program = p.program();
    let mut diags = p.diags;
    if diags.iter().filter(|d| d.is_error()).count() > MAX_ERRORS {
        let mut kept = 0;
        diags.retain(|d| {
            kept += usize::from(d.is_error());
            !d.is_error() || kept <= MAX_ERRORS
        });
        diags.push(Diagnostic::error(format!(
            "too many errors; only the first {MAX_ERRORS} are shown"
        )));
    }
    (program, diags)
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    diags: Vec<Diagnostic>,
    /// Absolute offset of the function being parsed; AST spans are relative to it.
    offset: u32,
    next_id: ExprId,
    /// Height of each expression built so far in this function, by id.
    heights: Vec<u32>,
    /// Whether each expression was written in parentheses, by id.
    parenthesized: Vec<bool>,
    /// Statement nesting levels open (see [`MAX_STMT_NESTING`]).
    stmt_depth: u32,
    /// Expression nesting levels open (see [`MAX_EXPR_NESTING`]).
    expr_depth: u32,
    /// Whether the current statement already has a "too deeply" diagnostic;
    /// one per statement is enough.
    height_reported: bool,
}

/// Raised when a construct could not be parsed; the caller recovers.
struct Fail;
type PResult<T> = Result<T, Fail>;

impl Parser {
    // ---- token helpers -------------------------------------------------

    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }
    fn peek_at(&self, n: usize) -> &Tok {
        &self.toks[(self.pos + n).min(self.toks.len() - 1)].tok
    }
    fn span(&self) -> Span {
        self.toks[self.pos].span
    }
    fn prev_span(&self) -> Span {
        self.toks[self.pos.saturating_sub(1)].span
    }
    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == t {
            self.bump();
            true
        } else {
            false
        }
    }
    /// Function-relative span.
    fn rel(&self, s: Span) -> Span {
        Span::new(
            s.start.saturating_sub(self.offset),
            s.end.saturating_sub(self.offset),
        )
    }
    fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }
    /// Reports "expected X, found Y" at the current token.
    fn expected(&mut self, what: &str) -> Fail {
        let found = self.peek().describe();
        let span = self.span();
        self.error(
            Diagnostic::error(format!("expected {what}, found {found}"))
                .primary(span, format!("expected {what}")),
        );
        Fail
    }
    fn expect(&mut self, t: Tok) -> PResult<Span> {
        if self.peek() == &t {
            Ok(self.bump().span)
        } else {
            Err(self.expected(&format!("`{}`", t.text())))
        }
    }
    fn ident(&mut self, what: &str) -> PResult<Ident> {
        if let Tok::Ident(name) = self.peek().clone() {
            let span = self.bump().span;
            Ok(Ident {
                name,
                span: self.rel(span),
            })
        } else {
            Err(self.expected(what))
        }
    }

    // ---- program and functions -------------------------------------------

    fn program(&mut self) -> Program {
        let mut functions = Vec::new();
        while self.peek() != &Tok::Eof {
            let start = self.pos;
            match self.function() {
                Ok(f) => functions.push(f),
                Err(Fail) => {
                    if self.pos == start {
                        self.bump();
                    }
                    self.sync_function();
                }
            }
        }
        Program { functions }
    }

    /// Skips to the next `name (` at brace depth zero.
    fn sync_function(&mut self) {
        let mut depth = 0i64;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    depth -= 1;
                    if depth <= 0 {
                        self.bump();
                        if depth < 0 {
                            depth = 0;
                        }
                        if depth == 0
                            && matches!(self.peek(), Tok::Ident(_))
                            && self.peek_at(1) == &Tok::LParen
                        {
                            return;
                        }
                        continue;
                    }
                }
                Tok::Ident(_) if depth == 0 && self.peek_at(1) == &Tok::LParen => return,
                _ => {}
            }
            self.bump();
        }
    }

    fn function(&mut self) -> PResult<Function> {
        let start = self.span().start;
        self.offset = start;
        self.next_id = 0;
        self.heights.clear();
        self.parenthesized.clear();
        let name = match self.peek() {
            Tok::Ident(_) => self.ident("a function name")?,
            _ => return Err(self.expected("a function declaration `name(params) { … }`")),
        };
        self.expect(Tok::LParen)?;
        let mut params = Vec::new();
        if self.peek() != &Tok::RParen {
            loop {
                params.push(self.ident("a parameter name")?);
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        self.expect(Tok::RParen)?;
        self.expect(Tok::LBrace)?;
        let mut locals = Vec::new();
        while self.peek() == &Tok::Var {
            let _ = self.var_decl(&mut locals);
        }
        let mut body = Vec::new();
        loop {
            match self.peek() {
                Tok::Return | Tok::RBrace | Tok::Eof => break,
                Tok::Var => {
                    let span = self.span();
                    self.error(
                        Diagnostic::error("variable declarations must come before the statements")
                            .primary(span, "`var` after a statement")
                            .note("microc functions declare all their variables first, then the statements, then one `return`"),
                    );
                    let _ = self.var_decl(&mut locals);
                }
                _ => {
                    if let Some(s) = self.stmt_recovering() {
                        body.push(s);
                    }
                }
            }
        }
        let ret_start = self.span();
        let (ret, ret_span) = if self.eat(&Tok::Return) {
            let e = self.expr_recovering();
            let semi = self.expect(Tok::Semi);
            let end = if semi.is_ok() {
                self.prev_span()
            } else {
                self.span()
            };
            (e, self.rel(ret_start.to(end)))
        } else {
            let span = self.span();
            self.error(
                Diagnostic::error(format!(
                    "function `{}` has no `return` at its end",
                    name.name
                ))
                .primary(span, "expected `return <expr>;` here")
                .note("every microc function ends with exactly one `return`"),
            );
            (self.error_expr(span), self.rel(span))
        };
        // Anything between the return and the closing brace is misplaced.
        if !matches!(self.peek(), Tok::RBrace | Tok::Eof) {
            let span = self.span();
            self.error(Diagnostic::error("statements after `return`").primary(
                span,
                "the `return` must be the last statement of the function",
            ));
            while !matches!(self.peek(), Tok::RBrace | Tok::Eof) {
                if self.stmt_recovering().is_none() && self.peek() == &Tok::Return {
                    self.bump();
                }
            }
        }
        let end = self.expect(Tok::RBrace)?;
        Ok(Function {
            name,
            params,
            locals,
            body,
            ret,
            ret_span,
            span: self.rel(Span::new(start, end.end)),
            offset: start,
            expr_count: self.next_id,
        })
    }

    fn var_decl(&mut self, locals: &mut Vec<Ident>) -> PResult<()> {
        self.expect(Tok::Var)?;
        let r = (|| {
            loop {
                locals.push(self.ident("a variable name")?);
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
            self.expect(Tok::Semi)?;
            Ok(())
        })();
        if r.is_err() {
            self.sync_stmt();
        }
        r
    }

    // ---- statements --------------------------------------------------------

    /// Skips to just after the next `;`, or to a `}` or a statement keyword.
    fn sync_stmt(&mut self) {
        let mut depth = 0i64;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Semi if depth <= 0 => {
                    self.bump();
                    return;
                }
                Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
                Tok::RParen | Tok::RBracket => depth -= 1,
                Tok::RBrace => {
                    if depth <= 0 {
                        return;
                    }
                    depth -= 1;
                }
                Tok::If
                | Tok::While
                | Tok::Output
                | Tok::Return
                | Tok::Var
                | Tok::Assert
                | Tok::Assume
                    if depth <= 0 =>
                {
                    return;
                }
                _ => {}
            }
            self.bump();
        }
    }

    fn stmt_recovering(&mut self) -> Option<Stmt> {
        let start = self.pos;
        match self.stmt() {
            Ok(s) => Some(s),
            Err(Fail) => {
                self.sync_stmt();
                if self.pos == start {
                    // Never loop without progress.
                    self.bump();
                }
                None
            }
        }
    }

    /// A statement; an `if`, a `while` or a block opens a nesting level.
    fn stmt(&mut self) -> PResult<Stmt> {
        match self.peek() {
            Tok::If | Tok::While | Tok::LBrace => self.stmt_level(Parser::stmt_inner),
            _ => self.stmt_inner(),
        }
    }

    /// The body of an `if`, `while` or `else`: a block there belongs to the
    /// level its statement opened (so that `if (c) { … }` is one level); an
    /// `if` or `while` there opens its own (`else if` included: the AST
    /// nests it, and every later pass recurses into it).
    fn body(&mut self) -> PResult<Stmt> {
        match self.peek() {
            Tok::LBrace => self.stmt_inner(),
            _ => self.stmt(),
        }
    }

    /// Runs `step` one statement level deeper; past [`MAX_STMT_NESTING`]
    /// reports the construct that opens the level (the current token) and
    /// skips it, with its `else` branches, without recursing.
    fn stmt_level(&mut self, step: impl FnOnce(&mut Parser) -> PResult<Stmt>) -> PResult<Stmt> {
        if self.stmt_depth >= MAX_STMT_NESTING {
            let span = self.span();
            let opener = match self.peek() {
                Tok::If => "`if` statement",
                Tok::While => "`while` statement",
                _ => "block",
            };
            let else_if =
                self.peek() == &Tok::If && self.pos > 0 && self.toks[self.pos - 1].tok == Tok::Else;
            let mut d = Diagnostic::error(format!(
                "`if`/`while` statements and blocks nested too deeply: more than {MAX_STMT_NESTING} levels"
            ))
            .primary(
                span,
                format!("this {opener} opens level {}", MAX_STMT_NESTING + 1),
            )
            .note(format!(
                "apc accepts at most {MAX_STMT_NESTING} nested `if`/`while` statements and blocks (`MAX_STMT_NESTING` in src/syntax/parser.rs)"
            ));
            if else_if {
                d = d.note(
                    "an `else if` is an `if` nested in the `else`, so each one opens a level",
                );
            }
            self.error(
                d.note("to fix it, move the inner part into a function of its own and call it"),
            );
            self.skip_balanced();
            while self.eat(&Tok::Else) {
                self.skip_balanced();
            }
            return Err(Fail);
        }
        self.stmt_depth += 1;
        let r = step(self);
        self.stmt_depth -= 1;
        r
    }

    fn stmt_inner(&mut self) -> PResult<Stmt> {
        self.height_reported = false;
        let start = self.span();
        let kind = match self.peek().clone() {
            Tok::Output => {
                self.bump();
                let e = self.expr()?;
                self.expect(Tok::Semi)?;
                StmtKind::Output(e)
            }
            Tok::Assert | Tok::Assume => {
                let is_assert = self.bump().tok == Tok::Assert;
                self.expect(Tok::LParen)?;
                let e = self.expr()?;
                self.expect(Tok::RParen)?;
                self.expect(Tok::Semi)?;
                if is_assert {
                    StmtKind::Assert(e)
                } else {
                    StmtKind::Assume(e)
                }
            }
            Tok::If => {
                self.bump();
                self.expect(Tok::LParen)?;
                let cond = self.expr()?;
                self.expect(Tok::RParen)?;
                let then = Box::new(self.body()?);
                let els = if self.eat(&Tok::Else) {
                    Some(Box::new(self.body()?))
                } else {
                    None
                };
                StmtKind::If { cond, then, els }
            }
            Tok::While => {
                self.bump();
                self.expect(Tok::LParen)?;
                let cond = self.expr()?;
                self.expect(Tok::RParen)?;
                let body = Box::new(self.body()?);
                StmtKind::While { cond, body }
            }
            Tok::LBrace => {
                self.bump();
                let mut stmts = Vec::new();
                while !matches!(self.peek(), Tok::RBrace | Tok::Eof) {
                    if self.peek() == &Tok::Var {
                        let span = self.span();
                        self.error(
                            Diagnostic::error(
                                "variable declarations are only allowed at the start of a function",
                            )
                            .primary(span, "`var` inside a block"),
                        );
                        // Consume `var` first: recovery stops *at* keywords.
                        self.bump();
                        self.sync_stmt();
                        continue;
                    }
                    if self.peek() == &Tok::Return {
                        let span = self.span();
                        self.error(
                            Diagnostic::error("`return` inside a block")
                                .primary(span, "a function has one `return`, at its end"),
                        );
                        // Skip `return e;` and go on with the block.
                        self.bump();
                        self.sync_stmt();
                        continue;
                    }
                    if let Some(s) = self.stmt_recovering() {
                        stmts.push(s);
                    }
                }
                self.expect(Tok::RBrace)?;
                StmtKind::Block(stmts)
            }
            Tok::Else => {
                let span = self.span();
                self.error(
                    Diagnostic::error("`else` without a matching `if`")
                        .primary(span, "unexpected `else`"),
                );
                self.bump();
                return Err(Fail);
            }
            _ => {
                let lhs = self.expr()?;
                if self.peek() != &Tok::Assign {
                    let span = self.span();
                    let mut d = Diagnostic::error(format!(
                        "expected `=`, found {}",
                        self.peek().describe()
                    ))
                    .primary(span, "expected `=` here");
                    if self.peek() == &Tok::Semi {
                        d = d.note("microc has no expression statements: assign the value, e.g. `x = f(a);`");
                    }
                    self.error(d);
                    return Err(Fail);
                }
                self.bump();
                let rhs = self.expr()?;
                self.expect(Tok::Semi)?;
                StmtKind::Assign { lhs, rhs }
            }
        };
        Ok(Stmt {
            kind,
            span: self.rel(start.to(self.prev_span())),
        })
    }

    /// Skips one construct without recursion: up to a `;` or the bracket
    /// that closes an enclosing construct, keeping brackets balanced.
    fn skip_balanced(&mut self) {
        let mut depth = 0i64;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
                Tok::RParen | Tok::RBracket | Tok::RBrace => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                    if depth == 0 && self.toks[self.pos].tok == Tok::RBrace {
                        self.bump();
                        return;
                    }
                }
                Tok::Semi if depth == 0 => return,
                _ => {}
            }
            self.bump();
        }
    }

    // ---- expressions -------------------------------------------------------

    fn error_expr(&mut self, abs: Span) -> Expr {
        let span = self.rel(abs);
        self.mk(ExprKind::Error, span)
    }

    /// Parses an expression; on failure reports and returns an error node.
    fn expr_recovering(&mut self) -> Expr {
        let span = self.span();
        match self.expr() {
            Ok(e) => e,
            Err(Fail) => {
                self.sync_stmt();
                self.error_expr(span)
            }
        }
    }

    /// Builds an expression node, enforcing the height bound.
    fn mk(&mut self, kind: ExprKind, span: Span) -> Expr {
        self.mk_op(kind, span, Span::new(span.start, span.start + 1))
    }

    /// Builds an expression whose failures are reported at `op` (relative).
    fn mk_op(&mut self, kind: ExprKind, span: Span, op: Span) -> Expr {
        let id = self.next_id;
        self.next_id += 1;
        let mut e = Expr { id, kind, span, op };
        let h = 1 + e
            .children()
            .iter()
            .map(|c| self.heights[c.id as usize])
            .max()
            .unwrap_or(0);
        if h > MAX_EXPR_HEIGHT {
            // Only long chains nested in long chains get here: operator
            // and postfix chains and nesting are bounded separately, and
            // more tightly.
            if !self.height_reported {
                self.height_reported = true;
                self.error(
                    Diagnostic::error(format!(
                        "expression too large: its tree is more than {MAX_EXPR_HEIGHT} levels tall"
                    ))
                    .primary(op.shift(self.offset), format!("this operation is at level {h}"))
                    .note(format!(
                        "the tree has a level per operation on its longest path (a chain such as `a + b + …` one per operator, and here chains are inside chains); apc accepts trees of at most {MAX_EXPR_HEIGHT} levels (`MAX_EXPR_HEIGHT` in src/syntax/parser.rs)"
                    ))
                    .note("to fix it, split the expression with temporary variables"),
                );
            }
            e.kind = ExprKind::Error;
            self.heights.push(1);
        } else {
            self.heights.push(h);
        }
        self.parenthesized.push(false);
        e
    }

    /// A whole expression: one nesting level, opened by the token before it
    /// (`(`, `[`, `,`, `:`, `alloc`, or the statement's own).
    fn expr(&mut self) -> PResult<Expr> {
        self.expr_level(|p| p.binary(0))
    }

    /// Runs `step` one expression level deeper; past [`MAX_EXPR_NESTING`]
    /// reports the token that opened the level (the one just consumed) and
    /// skips the construct without recursing.
    fn expr_level(&mut self, step: impl FnOnce(&mut Parser) -> PResult<Expr>) -> PResult<Expr> {
        if self.expr_depth >= MAX_EXPR_NESTING {
            let opener = self.prev_span();
            let what = self.toks[self.pos.saturating_sub(1)].tok.describe();
            self.error(
                Diagnostic::error(format!(
                    "expression nested too deeply: more than {MAX_EXPR_NESTING} levels"
                ))
                .primary(opener, format!("this {what} opens level {}", MAX_EXPR_NESTING + 1))
                .note(format!(
                    "parentheses, brackets, braces, argument lists, `alloc` and prefix operators (`-`, `!`, `*`) each open a level; apc accepts at most {MAX_EXPR_NESTING} (`MAX_EXPR_NESTING` in src/syntax/parser.rs)"
                ))
                .note("to fix it, compute the inner part first into a temporary variable, or move it into a function"),
            );
            self.skip_balanced();
            return Err(Fail);
        }
        self.expr_depth += 1;
        let r = step(self);
        self.expr_depth -= 1;
        r
    }

    fn binop_at(&self, level: usize) -> Option<BinOp> {
        let op = match (level, self.peek()) {
            (0, Tok::OrOr) => BinOp::Or,
            (1, Tok::AndAnd) => BinOp::And,
            (2, Tok::EqEq) => BinOp::Eq,
            (2, Tok::NotEq) => BinOp::Ne,
            (3, Tok::Lt) => BinOp::Lt,
            (3, Tok::Le) => BinOp::Le,
            (3, Tok::Gt) => BinOp::Gt,
            (3, Tok::Ge) => BinOp::Ge,
            (4, Tok::Plus) => BinOp::Add,
            (4, Tok::Minus) => BinOp::Sub,
            (5, Tok::Star) => BinOp::Mul,
            (5, Tok::Slash) => BinOp::Div,
            _ => return None,
        };
        Some(op)
    }

    /// Precedence levels 0 (`||`) to 5 (`* /`), then unary.
    fn binary(&mut self, level: usize) -> PResult<Expr> {
        if level > 5 {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        // The chain `lhs op rhs op rhs …` is built in this loop, not by
        // recursion; its length is capped for the passes after this one.
        // Past the cap the rest of the chain is parsed and dropped, and the
        // whole chain becomes one error node (no cascade of diagnostics).
        let mut operands = 1;
        while let Some(op) = self.binop_at(level) {
            let op_span = self.bump().span;
            operands += 1;
            if operands > MAX_CHAIN_OPERANDS {
                if operands == MAX_CHAIN_OPERANDS + 1 {
                    self.chain_too_long(level, op_span);
                }
                let rhs = self.binary(level + 1)?;
                lhs.span = lhs.span.to(rhs.span);
                continue;
            }
            let rhs = self.binary(level + 1)?;
            if op.is_logical() {
                self.warn_mixed_logic(op, op_span, &lhs, &rhs);
            }
            let span = lhs.span.to(rhs.span);
            let op_span = self.rel(op_span);
            lhs = self.mk_op(
                ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
                op_span,
            );
        }
        if operands > MAX_CHAIN_OPERANDS {
            let span = lhs.span;
            lhs = self.mk(ExprKind::Error, span);
        }
        Ok(lhs)
    }

    /// Reports a chain of precedence `level` longer than
    /// [`MAX_CHAIN_OPERANDS`], at the operator `op_span` (absolute) that
    /// starts the operand past the limit.
    #[cold]
    #[inline(never)]
    fn chain_too_long(&mut self, level: usize, op_span: Span) {
        let ops = match level {
            0 => "`||`",
            1 => "`&&`",
            2 => "`==`/`!=`",
            3 => "comparison",
            4 => "`+`/`-`",
            _ => "`*`/`/`",
        };
        self.error(
            Diagnostic::error(format!(
                "chain of {ops} operators too long: more than {MAX_CHAIN_OPERANDS} operands"
            ))
            .primary(
                op_span,
                format!("operand {} starts after this operator", MAX_CHAIN_OPERANDS + 1),
            )
            .note(format!(
                "apc accepts at most {MAX_CHAIN_OPERANDS} operands in one chain (`MAX_CHAIN_OPERANDS` in src/syntax/parser.rs)"
            ))
            .note("to fix it, compute the chain in parts into temporary variables"),
        );
    }

    fn warn_mixed_logic(&mut self, op: BinOp, op_span: Span, lhs: &Expr, rhs: &Expr) {
        let other = if op == BinOp::Or {
            BinOp::And
        } else {
            BinOp::Or
        };
        for side in [lhs, rhs] {
            if let ExprKind::Binary(inner, ..) = side.kind
                && inner == other
                && !self.parenthesized[side.id as usize]
            {
                self.diags.push(
                    Diagnostic::warning("`&&` and `||` mixed without parentheses")
                        .primary(op_span, format!("`{}` here", op.symbol()))
                        .secondary(side.span.shift(self.offset), "this operand is read as one group (C precedence: `&&` binds tighter)")
                        .note("the thesis's grammar puts `&&` and `||` on one level, so the two readings differ: add parentheses"),
                );
                return;
            }
        }
    }

    /// The operand of a prefix operator, one nesting level deeper.
    fn prefix_operand(&mut self) -> PResult<Expr> {
        self.expr_level(Parser::unary)
    }

    fn unary(&mut self) -> PResult<Expr> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Star => {
                self.bump();
                let e = self.prefix_operand()?;
                let span = self.rel(start).to(e.span);
                Ok(self.mk(ExprKind::Deref(Box::new(e)), span))
            }
            Tok::Amp => {
                self.bump();
                let id = self.ident("a variable name after `&` (only variables have addresses)")?;
                let span = self.rel(start).to(id.span);
                Ok(self.mk(ExprKind::AddrOf(id), span))
            }
            Tok::Input => {
                self.bump();
                let span = self.rel(start);
                Ok(self.mk(ExprKind::Input, span))
            }
            Tok::Null => {
                self.bump();
                let span = self.rel(start);
                Ok(self.mk(ExprKind::Null, span))
            }
            Tok::Alloc => {
                self.bump();
                let e = self.expr()?;
                let span = self.rel(start).to(e.span);
                Ok(self.mk(ExprKind::Alloc(Box::new(e)), span))
            }
            Tok::Bang => {
                self.bump();
                let e = self.prefix_operand()?;
                let span = self.rel(start).to(e.span);
                Ok(self.mk(ExprKind::Unary(UnOp::Not, Box::new(e)), span))
            }
            Tok::Minus => {
                self.bump();
                // `-5` is a literal in the thesis grammar; keep it one.
                if let Tok::Num(n) = self.peek().clone() {
                    let is_postfix =
                        matches!(self.peek_at(1), Tok::LBracket | Tok::Dot | Tok::LParen);
                    if !is_postfix {
                        let end = self.bump().span;
                        let v: BigInt = -n.parse::<BigInt>().unwrap_or_default();
                        let span = self.rel(start.to(end));
                        return Ok(self.mk(ExprKind::Num(v), span));
                    }
                }
                let e = self.prefix_operand()?;
                let span = self.rel(start).to(e.span);
                Ok(self.mk(ExprKind::Unary(UnOp::Neg, Box::new(e)), span))
            }
            _ => self.postfix(),
        }
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        // Postfix operations in a row, capped at MAX_POSTFIX_CHAIN; past
        // the cap they are still parsed, and the whole becomes an error.
        let mut ops = 0;
        loop {
            if matches!(self.peek(), Tok::Dot | Tok::LBracket | Tok::LParen) {
                ops += 1;
                if ops == MAX_POSTFIX_CHAIN + 1 {
                    self.postfix_too_long();
                }
            }
            match self.peek() {
                Tok::Dot => {
                    let dot = self.bump().span;
                    let f = self.ident("a field name after `.`")?;
                    let span = e.span.to(f.span);
                    let dot = self.rel(dot);
                    e = self.mk_op(ExprKind::Field(Box::new(e), f), span, dot);
                }
                Tok::LBracket => {
                    let lb = self.bump().span;
                    let idx = self.expr()?;
                    let end = self.expect(Tok::RBracket)?;
                    let span = e.span.to(self.rel(end));
                    let lb = self.rel(lb);
                    e = self.mk_op(ExprKind::Index(Box::new(e), Box::new(idx)), span, lb);
                }
                Tok::LParen => {
                    let lp = self.bump().span;
                    let args = self.list(Tok::RParen, |p| p.expr())?;
                    let end = self.prev_span();
                    let span = e.span.to(self.rel(end));
                    let callee = match &e.kind {
                        ExprKind::Var(name) if !self.parenthesized[e.id as usize] => Ident {
                            name: name.clone(),
                            span: e.span,
                        },
                        _ => {
                            self.error(
                                Diagnostic::error("only functions can be called, by name")
                                    .primary(lp, "call of something that is not a function name")
                                    .note("microc has no function values: write `f(args)` with `f` a function"),
                            );
                            return Err(Fail);
                        }
                    };
                    e = self.mk(ExprKind::Call(callee, args), span);
                }
                _ if ops > MAX_POSTFIX_CHAIN => {
                    let span = e.span;
                    return Ok(self.mk(ExprKind::Error, span));
                }
                _ => return Ok(e),
            }
        }
    }

    /// Reports a postfix chain longer than [`MAX_POSTFIX_CHAIN`], at the
    /// operator (the current token) past the limit.
    #[cold]
    #[inline(never)]
    fn postfix_too_long(&mut self) {
        let span = self.span();
        self.error(
            Diagnostic::error(format!(
                "chain of postfix operations (`.f`, `[i]`) too long: more than {MAX_POSTFIX_CHAIN}"
            ))
            .primary(span, format!("operation {} of the chain", MAX_POSTFIX_CHAIN + 1))
            .note(format!(
                "apc accepts at most {MAX_POSTFIX_CHAIN} in a row (`MAX_POSTFIX_CHAIN` in src/syntax/parser.rs)"
            ))
            .note("to fix it, store part of the way into a temporary variable"),
        );
        // The tree may still grow past MAX_EXPR_HEIGHT: one report is enough.
        self.height_reported = true;
    }

    /// Parses `item, item, …` up to and including `close`.
    fn list<T>(
        &mut self,
        close: Tok,
        mut item: impl FnMut(&mut Parser) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        let mut items = Vec::new();
        if self.eat(&close) {
            return Ok(items);
        }
        loop {
            items.push(item(self)?);
            if self.eat(&Tok::Comma) {
                continue;
            }
            if self.eat(&close) {
                return Ok(items);
            }
            return Err(self.expected(&format!("`,` or `{}`", close.text())));
        }
    }

    fn primary(&mut self) -> PResult<Expr> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Num(n) => {
                self.bump();
                let v: BigInt = n.parse().unwrap_or_default();
                let span = self.rel(start);
                Ok(self.mk(ExprKind::Num(v), span))
            }
            Tok::Ident(name) => {
                self.bump();
                let span = self.rel(start);
                Ok(self.mk(ExprKind::Var(name), span))
            }
            Tok::LParen => {
                self.bump();
                let e = self.expr()?;
                self.expect(Tok::RParen)?;
                self.parenthesized[e.id as usize] = true;
                Ok(e)
            }
            Tok::LBracket => {
                self.bump();
                let elems = self.list(Tok::RBracket, |p| p.expr())?;
                let span = self.rel(start.to(self.prev_span()));
                Ok(self.mk(ExprKind::Array(elems), span))
            }
            Tok::LBrace => {
                self.bump();
                let fields = self.list(Tok::RBrace, |p| {
                    let name = p.ident("a field name")?;
                    p.expect(Tok::Colon)?;
                    let e = p.expr()?;
                    Ok((name, e))
                })?;
                let span = self.rel(start.to(self.prev_span()));
                Ok(self.mk(ExprKind::Record(fields), span))
            }
            _ => Err(self.expected("an expression")),
        }
    }
}

/// For tests of long chains: `x - y + z - y + x …` with `n` operands over
/// `[x, y, z]` (the operators alternate, so it is no sum of equals).
#[cfg(test)]
pub(crate) fn mixed_chain(n: usize, [x, y, z]: [&str; 3]) -> String {
    let mut chain = x.to_string();
    for i in 1..n {
        let (op, v) = [("+", x), ("-", y), ("+", z)][i % 3];
        chain.push_str(&format!(" {op} {v}"));
    }
    chain
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(src: &str) -> Vec<String> {
        parse(src)
            .1
            .into_iter()
            .filter(|d| d.is_error())
            .map(|d| d.message)
            .collect()
    }

    #[test]
    fn precedence_is_c_like() {
        let (p, d) = parse("main() { var x; x = 1 + 2 * 3 == 7 && 1 || 0; return x; }");
        assert!(d.iter().all(|d| !d.is_error()), "{d:?}");
        let StmtKind::Assign { rhs, .. } = &p.functions[0].body[0].kind else {
            panic!()
        };
        let ExprKind::Binary(BinOp::Or, lhs, _) = &rhs.kind else {
            panic!("{rhs:?}")
        };
        let ExprKind::Binary(BinOp::And, eq, _) = &lhs.kind else {
            panic!()
        };
        let ExprKind::Binary(BinOp::Eq, sum, _) = &eq.kind else {
            panic!()
        };
        assert!(
            matches!(&sum.kind, ExprKind::Binary(BinOp::Add, _, m) if matches!(m.kind, ExprKind::Binary(BinOp::Mul, ..)))
        );
    }

    #[test]
    fn mixed_logic_warns_once_unless_parenthesized() {
        let (_, d) = parse("main() { var x; x = 1 && 2 || 3; return x; }");
        assert_eq!(d.iter().filter(|d| !d.is_error()).count(), 1);
        let (_, d) = parse("main() { var x; x = (1 && 2) || 3; return x; }");
        assert!(d.is_empty(), "{d:?}");
    }

    #[test]
    fn recovers_and_reports_errors_in_several_functions() {
        let errs = errors(
            "f() { var x; x = ; return 0; }\n g() { var y; y = 1 return y; }\n main() { return 0 }",
        );
        assert_eq!(errs.len(), 3, "{errs:?}");
    }

    #[test]
    fn deep_parentheses_give_one_diagnostic() {
        let src = format!(
            "main() {{ var x; x = {}1{}; return x; }}",
            "(".repeat(10_000),
            ")".repeat(10_000)
        );
        let errs = errors(&src);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].contains("expression nested too deeply"));
    }

    #[test]
    fn long_operator_chains_are_bounded() {
        let src = format!(
            "main() {{ var x; x = 1{}; return x; }}",
            " + 1".repeat(100_000)
        );
        let errs = errors(&src);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].contains("chain of `+`/`-` operators too long")
                && errs[0].contains(&MAX_CHAIN_OPERANDS.to_string()),
            "{errs:?}"
        );
    }

    /// `n` operands: `x + x + …`, `x && x && …`, `x - y + z - y + …`.
    fn chains(n: usize) -> [String; 3] {
        [
            vec!["x"; n].join(" + "),
            vec!["x"; n].join(" && "),
            super::mixed_chain(n, ["x", "y", "z"]),
        ]
    }

    #[test]
    fn long_chains_are_not_nesting() {
        // The report: a flat sum of 201 terms was "nested too deeply".
        on_big_stack(|| {
            for n in [201, MAX_CHAIN_OPERANDS as usize] {
                for chain in chains(n) {
                    let src = format!("main(x, y, z) {{ var r; r = {chain}; return r; }}");
                    let (p, d) = parse(&src);
                    assert!(d.is_empty(), "{n}: {:?}", d.first());
                    let StmtKind::Assign { rhs, .. } = &p.functions[0].body[0].kind else {
                        panic!()
                    };
                    // Left-deep, as left-associativity wants.
                    let mut depth = 1;
                    let mut e = rhs;
                    while let ExprKind::Binary(_, a, b) = &e.kind {
                        assert!(!matches!(b.kind, ExprKind::Binary(..)));
                        depth += 1;
                        e = a;
                    }
                    assert_eq!(depth, n);
                }
            }
        });
    }

    #[test]
    fn chains_beyond_the_cap_name_the_limit() {
        on_big_stack(|| {
            let n = MAX_CHAIN_OPERANDS as usize + 1;
            for (chain, ops) in chains(n).iter().zip(["`+`/`-`", "`&&`", "`+`/`-`"]) {
                let src = format!("main(x, y, z) {{ var r; r = {chain}; return r; }}");
                let d = error_diags(&src);
                assert_eq!(d.len(), 1, "{d:?}");
                assert_eq!(
                    d[0].message,
                    format!(
                        "chain of {ops} operators too long: more than {MAX_CHAIN_OPERANDS} operands"
                    )
                );
                // At the operator before the operand past the limit.
                let last_op = src.rfind(['+', '-', '&']).unwrap() as u32;
                let at = d[0].labels[0].span;
                assert!(
                    at.start <= last_op && last_op < at.end.max(at.start + 1),
                    "{at:?}"
                );
                assert!(d[0].notes.iter().any(|n| n.contains("MAX_CHAIN_OPERANDS")));
            }
        });
    }

    #[test]
    fn chains_nested_in_chains_are_bounded_by_height() {
        on_big_stack(|| {
            // A `*` chain as the first operand of a `+` chain: each is
            // within the cap, the tree (their sum) is not.
            let half = MAX_EXPR_HEIGHT as usize / 2 + 1;
            let src = format!(
                "main(x) {{ var r; r = {}{}; return r; }}",
                vec!["x"; half].join(" * "),
                " + x".repeat(half)
            );
            let d = error_diags(&src);
            assert_eq!(d.len(), 1, "{d:?}");
            assert_eq!(
                d[0].message,
                format!(
                    "expression too large: its tree is more than {MAX_EXPR_HEIGHT} levels tall"
                )
            );
            assert!(d[0].notes.iter().any(|n| n.contains("MAX_EXPR_HEIGHT")));
            // Genuinely nested expressions inside a long chain still get
            // the nesting diagnostic, not a stack overflow.
            let n = MAX_EXPR_NESTING as usize + 1;
            let src = format!(
                "main(x) {{ var r; r = {} + {}x{}; return r; }}",
                vec!["x"; 5_000].join(" + "),
                "-(".repeat(n),
                ")".repeat(n)
            );
            let d = error_diags(&src);
            assert_eq!(d.len(), 1, "{d:?}");
            assert!(d[0].message.starts_with("expression nested too deeply"));
        });
    }

    #[test]
    fn postfix_chains_are_capped() {
        let n = MAX_POSTFIX_CHAIN as usize;
        let ok = format!("main(A) {{ return A{}; }}", "[0]".repeat(n));
        assert!(error_diags(&ok).is_empty());
        for k in [n + 1, 100_000] {
            let src = format!(
                "main(A, p) {{ var x; x = A{} + p.f; return x; }}",
                "[0]".repeat(k)
            );
            let d = error_diags(&src);
            assert_eq!(d.len(), 1, "{d:?}");
            assert_eq!(
                d[0].message,
                format!(
                    "chain of postfix operations (`.f`, `[i]`) too long: more than {MAX_POSTFIX_CHAIN}"
                )
            );
            assert_eq!(d[0].labels[0].span, nth(&src, "[", n + 1));
        }
    }

    /// `depth` nested `if (x > k) { … }` around `x = 1;` inside main.
    fn nested_ifs(depth: usize) -> String {
        let mut src = String::from("main(x) {\n");
        for k in 1..=depth {
            src += &format!("if (x > {k}) {{\n");
        }
        src += "x = 1;\n";
        src += &"}\n".repeat(depth);
        src + "return x;\n}\n"
    }

    fn error_diags(src: &str) -> Vec<Diagnostic> {
        parse(src).1.into_iter().filter(|d| d.is_error()).collect()
    }

    /// The absolute span of the `n`-th (from 1) occurrence of `pat`.
    fn nth(src: &str, pat: &str, n: usize) -> Span {
        let (at, _) = src.match_indices(pat).nth(n - 1).unwrap();
        Span::new(at as u32, (at + pat.len()) as u32)
    }

    #[test]
    fn nested_ifs_count_one_level_each_and_are_not_expressions() {
        // The report: 49 nested `if`s used to be "expression nested too
        // deeply" at `x > 49` (statements and expressions shared a budget,
        // and a braced body counted twice).
        assert!(error_diags(&nested_ifs(49)).is_empty());
        assert!(error_diags(&nested_ifs(MAX_STMT_NESTING as usize)).is_empty());
        let src = nested_ifs(MAX_STMT_NESTING as usize + 1);
        let d = error_diags(&src);
        assert_eq!(d.len(), 1, "{d:?}");
        let d = &d[0];
        assert_eq!(
            d.message,
            format!(
                "`if`/`while` statements and blocks nested too deeply: more than {MAX_STMT_NESTING} levels"
            )
        );
        let primary: Vec<_> = d.labels.iter().filter(|l| l.primary).collect();
        assert_eq!(primary.len(), 1);
        // At the `if` keyword that opens level 101, not at its condition.
        assert_eq!(
            primary[0].span,
            nth(&src, "if", MAX_STMT_NESTING as usize + 1)
        );
        assert!(primary[0].message.contains("`if` statement"), "{d:?}");
        assert!(
            d.notes.iter().any(
                |n| n.contains("MAX_STMT_NESTING") && n.contains(&MAX_STMT_NESTING.to_string())
            )
        );
        assert!(d.notes.iter().any(|n| n.contains("into a function")));
    }

    #[test]
    fn nested_blocks_and_whiles_are_reported_at_their_opener() {
        let n = MAX_STMT_NESTING as usize + 1;
        let src = format!(
            "main(x) {{ {} x = 1; {} return x; }}",
            "{".repeat(n + 1),
            "}".repeat(n + 1)
        );
        let d = error_diags(&src);
        assert_eq!(d.len(), 1, "{d:?}");
        // The function's own brace is no level; the n-th block's brace is
        // the (n+1)-th `{` of the text.
        assert_eq!(d[0].labels[0].span, nth(&src, "{", n + 1));
        assert!(d[0].labels[0].message.contains("block"));
        let src = format!("main(x) {{ {} x = 1; return x; }}", "while (x) ".repeat(n));
        let d = error_diags(&src);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].labels[0].span, nth(&src, "while", n));
    }

    #[test]
    fn long_else_if_chains_are_explained() {
        let n = MAX_STMT_NESTING as usize + 1;
        let src = format!(
            "main(x) {{ if (x == 0) {{ x = 1; }}{} return x; }}",
            " else if (x == 1) { x = 2; }".repeat(n)
        );
        let d = error_diags(&src);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].notes.iter().any(|n| n.contains("`else if`")), "{d:?}");
    }

    #[test]
    fn statement_and_expression_nesting_have_separate_budgets() {
        // 100 statement levels around 199 parentheses (200 expression
        // levels): both at their limit, neither eats the other.
        let depth = MAX_STMT_NESTING as usize;
        let parens = MAX_EXPR_NESTING as usize - 1;
        let cond = format!("{}x{} > 0", "(".repeat(parens), ")".repeat(parens));
        let src = nested_ifs(depth).replacen("x > 1)", &format!("{cond})"), 1);
        let src = src.replacen(&format!("x > {depth})"), &format!("{cond})"), 1);
        assert!(error_diags(&src).is_empty(), "{:?}", error_diags(&src));
    }

    #[test]
    fn deep_expressions_are_reported_at_the_opener_of_the_level() {
        let n = MAX_EXPR_NESTING as usize;
        let ok = format!(
            "main(x) {{ x = {}1{}; return x; }}",
            "(".repeat(n - 1),
            ")".repeat(n - 1)
        );
        assert!(error_diags(&ok).is_empty());
        // The statement's expression is level 1, so the 200th `(` opens 201.
        let src = format!(
            "main(x) {{ x = {}1{}; return x; }}",
            "(".repeat(n + 1),
            ")".repeat(n + 1)
        );
        let d = error_diags(&src);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            d[0].message,
            format!("expression nested too deeply: more than {MAX_EXPR_NESTING} levels")
        );
        assert_eq!(d[0].labels[0].span, nth(&src, "(", n + 1));
        assert!(d[0].notes.iter().any(|n| n.contains("MAX_EXPR_NESTING")));
        // Prefix operators open levels too: `-(-(-(…)))` is two per `-(`.
        let src = format!(
            "main(x) {{ x = {}x{}; return x; }}",
            "-(".repeat(n),
            ")".repeat(n)
        );
        let d = error_diags(&src);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].message.starts_with("expression nested too deeply"));
        let src = format!("main(x) {{ x = {}x; return x; }}", "!".repeat(10 * n));
        let d = error_diags(&src);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].labels[0].span, nth(&src, "!", n));
    }

    #[test]
    fn return_inside_a_block_is_one_error() {
        // Found by cargo-fuzz: an early `return` used to end the function.
        assert_eq!(
            errors("main() { while (1) { return 0; } return 1; }").len(),
            1
        );
        assert_eq!(
            errors("main() { while (1) { while (1) { return 0; } } return 1; }").len(),
            1
        );
        assert_eq!(
            errors("main() { if (1) { return 0; } return 1; }\nf() { return 2; }").len(),
            1
        );
    }

    #[test]
    fn var_inside_a_block_is_reported_and_skipped() {
        // Found by the fuzz test: recovery used to stop at `var` forever.
        assert!(!errors("main ( ) { while ( n ) { var").is_empty());
        assert_eq!(
            errors("main() { var x; { var y; x = 1; } return x; }").len(),
            1
        );
    }

    #[test]
    fn negative_literal_and_unary_minus() {
        let (p, d) = parse("main() { var x; x = -5 - -x; return -1; }");
        assert!(d.is_empty(), "{d:?}");
        let StmtKind::Assign { rhs, .. } = &p.functions[0].body[0].kind else {
            panic!()
        };
        let ExprKind::Binary(BinOp::Sub, a, b) = &rhs.kind else {
            panic!()
        };
        assert_eq!(a.kind, ExprKind::Num(BigInt::from(-5)));
        assert!(matches!(b.kind, ExprKind::Unary(UnOp::Neg, _)));
    }

    #[test]
    fn spans_are_function_relative() {
        let (p, _) = parse("f() { return 1; }\nmain() { return 2; }");
        assert_eq!(p.functions[1].offset, 18);
        assert_eq!(p.functions[1].name.span.start, 0);
    }
}
