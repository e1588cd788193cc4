//! Prints an AST back as microc, with every compound subexpression in
//! parentheses so that the parse (precedence, associativity) is visible.
//! The output parses again to the same tree (modulo spans).

use super::ast::*;
use std::fmt::Write;

pub fn program(p: &Program) -> String {
    let mut out = String::new();
    for (i, f) in p.functions.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        function(&mut out, f);
    }
    out
}

fn function(out: &mut String, f: &Function) {
    let params: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
    let _ = writeln!(out, "{}({}) {{", f.name.name, params.join(", "));
    if !f.locals.is_empty() {
        let locals: Vec<&str> = f.locals.iter().map(|p| p.name.as_str()).collect();
        let _ = writeln!(out, "  var {};", locals.join(", "));
    }
    for s in &f.body {
        stmt(out, s, 1);
    }
    let _ = writeln!(out, "  return {};", expr(&f.ret));
    out.push_str("}\n");
}

fn stmt(out: &mut String, s: &Stmt, level: usize) {
    let pad = "  ".repeat(level);
    match &s.kind {
        StmtKind::Assign { lhs, rhs } => {
            let _ = writeln!(out, "{pad}{} = {};", expr(lhs), expr(rhs));
        }
        StmtKind::Output(e) => {
            let _ = writeln!(out, "{pad}output {};", expr(e));
        }
        StmtKind::Assert(e) => {
            let _ = writeln!(out, "{pad}assert({});", expr(e));
        }
        StmtKind::Assume(e) => {
            let _ = writeln!(out, "{pad}assume({});", expr(e));
        }
        StmtKind::If { cond, then, els } => {
            let _ = writeln!(out, "{pad}if ({})", expr(cond));
            block(out, then, level);
            if let Some(e) = els {
                let _ = writeln!(out, "{pad}else");
                block(out, e, level);
            }
        }
        StmtKind::While { cond, body } => {
            let _ = writeln!(out, "{pad}while ({})", expr(cond));
            block(out, body, level);
        }
        StmtKind::Block(stmts) => {
            let _ = writeln!(out, "{pad}{{");
            for s in stmts {
                stmt(out, s, level + 1);
            }
            let _ = writeln!(out, "{pad}}}");
        }
    }
}

/// A nested statement, always printed as a block.
fn block(out: &mut String, s: &Stmt, level: usize) {
    if matches!(s.kind, StmtKind::Block(_)) {
        stmt(out, s, level);
    } else {
        let pad = "  ".repeat(level);
        let _ = writeln!(out, "{pad}{{");
        stmt(out, s, level + 1);
        let _ = writeln!(out, "{pad}}}");
    }
}

/// One expression, compound subexpressions parenthesised.
pub fn expr(e: &Expr) -> String {
    let sub = |e: &Expr| {
        let s = expr(e);
        if is_atomic(e) { s } else { format!("({s})") }
    };
    match &e.kind {
        ExprKind::Num(n) => n.to_string(),
        ExprKind::Var(v) => v.clone(),
        ExprKind::Null => "null".into(),
        ExprKind::Input => "input".into(),
        ExprKind::Alloc(x) => format!("alloc {}", sub(x)),
        ExprKind::AddrOf(x) => format!("&{}", x.name),
        ExprKind::Deref(x) => format!("*{}", sub(x)),
        ExprKind::Unary(UnOp::Neg, x) => format!("-{}", sub(x)),
        ExprKind::Unary(UnOp::Not, x) => format!("!{}", sub(x)),
        ExprKind::Binary(op, a, b) => format!("{} {} {}", sub(a), op.symbol(), sub(b)),
        ExprKind::Index(a, i) => format!("{}[{}]", sub(a), expr(i)),
        ExprKind::Field(a, f) => format!("{}.{}", sub(a), f.name),
        ExprKind::Call(f, args) => {
            let args: Vec<String> = args.iter().map(expr).collect();
            format!("{}({})", f.name, args.join(", "))
        }
        ExprKind::Array(elems) => {
            let elems: Vec<String> = elems.iter().map(expr).collect();
            format!("[{}]", elems.join(", "))
        }
        ExprKind::Record(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(f, e)| format!("{}: {}", f.name, expr(e)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        ExprKind::Error => "<error>".into(),
    }
}

fn is_atomic(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Num(n) => n.sign() != num_bigint::Sign::Minus,
        ExprKind::Var(_)
        | ExprKind::Null
        | ExprKind::Input
        | ExprKind::Call(..)
        | ExprKind::Array(_)
        | ExprKind::Record(_)
        | ExprKind::Index(..)
        | ExprKind::Field(..)
        | ExprKind::AddrOf(_) => true,
        _ => false,
    }
}
