//! Prints an AST back as microc, with every compound subexpression in
//! parentheses so that the parse (precedence, associativity) is visible.
//! The output parses again to the same tree (modulo spans).
//!
//! A long chain of one precedence level (`x + x - x + …`, more than
//! [`PARENTHESIZED_CHAIN`] operands) is printed flat instead: it reads the
//! same (all binary operators are left-associative), and one pair of
//! parentheses per operand would be nested too deeply to parse again
//! (`MAX_EXPR_NESTING`). The printer walks such a chain iteratively; the
//! rest recurses over the tree, whose height the parser bounds.

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

/// Chains of up to this many operands print with every level in
/// parentheses, `((a + b) + c) + d`; longer ones print flat.
pub const PARENTHESIZED_CHAIN: usize = 16;

/// A subexpression, in parentheses unless atomic.
fn sub(e: &Expr) -> String {
    let s = expr(e);
    if is_atomic(e) { s } else { format!("({s})") }
}

/// The precedence level of a binary operator (0 binds loosest).
fn level(op: BinOp) -> u8 {
    match op {
        BinOp::Or => 0,
        BinOp::And => 1,
        BinOp::Eq | BinOp::Ne => 2,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 3,
        BinOp::Add | BinOp::Sub => 4,
        BinOp::Mul | BinOp::Div => 5,
    }
}

/// A chain longer than [`PARENTHESIZED_CHAIN`], flat: `a + b - c + …`.
fn flat_chain(e: &Expr) -> Option<String> {
    let ExprKind::Binary(op, ..) = &e.kind else {
        return None;
    };
    let mut spine = vec![e];
    let mut leftmost = e;
    while let ExprKind::Binary(_, a, _) = &leftmost.kind
        && matches!(&a.kind, ExprKind::Binary(o, ..) if level(*o) == level(*op))
    {
        leftmost = a;
        spine.push(a);
    }
    if spine.len() < PARENTHESIZED_CHAIN {
        return None;
    }
    let ExprKind::Binary(_, a, _) = &leftmost.kind else {
        return None;
    };
    let mut out = sub(a);
    for node in spine.iter().rev() {
        if let ExprKind::Binary(op, _, b) = &node.kind {
            let _ = write!(out, " {} {}", op.symbol(), sub(b));
        }
    }
    Some(out)
}

/// One expression, compound subexpressions parenthesised.
pub fn expr(e: &Expr) -> String {
    if let Some(s) = flat_chain(e) {
        return s;
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse;

    /// Printing, parsing the print and printing again gives the same text.
    fn round_trip(src: &str) -> String {
        let (p, d) = parse(src);
        assert!(d.iter().all(|d| !d.is_error()), "{d:?}");
        let printed = program(&p);
        let (q, d) = parse(&printed);
        assert!(d.iter().all(|d| !d.is_error()), "{:?}", d.first());
        assert_eq!(program(&q), printed);
        printed
    }

    #[test]
    fn short_chains_show_their_associativity() {
        let printed = round_trip("main(x) { return x - x + x * x * x; }");
        assert!(
            printed.contains("return (x - x) + ((x * x) * x);"),
            "{printed}"
        );
    }

    #[test]
    fn long_chains_print_flat_and_parse_back() {
        crate::syntax::parser::on_big_stack(|| {
            let n = crate::syntax::parser::MAX_CHAIN_OPERANDS as usize;
            let mixed: String = (1..n)
                .map(|i| if i % 2 == 1 { " - (x * 2)" } else { " + x" })
                .collect();
            let src = format!(
                "main(x) {{ var a, b; a = {}; b = x{mixed}; return (a && b) || x; }}",
                vec!["x < 1"; n].join(" && ")
            );
            let printed = round_trip(&src);
            // One pair of parentheses per operand would nest 10,000 deep.
            assert!(
                printed.contains("a = (x < 1) && (x < 1) && (x < 1)"),
                "{printed:.200}"
            );
            assert!(
                printed.contains("b = x - (x * 2) + x - (x * 2)"),
                "{printed:.200}"
            );
            assert!(printed.contains("return (a && b) || x;"));
        });
    }
}
