//! A checked invariant in the program's terms: a predicate's definition
//! (SMT-LIB over the state's slots, as the solver gave it) printed as a
//! microc condition over the slots' labels (docs/explanations.md).
//!
//! Only linear integer arithmetic is printed: each comparison is brought
//! to `Σ a·x + c ⋈ 0`, negations are pushed into the comparisons, and the
//! sides are arranged so that no coefficient is negative. A definition
//! with anything else (arrays, quotients, products of unknowns, `ite` over
//! integers) has no readable form, and is shown as the solver gave it.

use crate::syntax::ast::{BinOp, Expr, ExprKind, UnOp};
use crate::syntax::{self, Severity};
use crate::term::{TermId, Terms, Var};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use std::collections::BTreeMap;

/// The definition `(define-fun P ((x!0 Int) …) Bool BODY)` as a microc
/// condition, the k-th parameter printed as `labels[k]`; `None` when it
/// has no readable form.
pub fn microc_condition(definition: &str, labels: &[String]) -> Option<String> {
    microc_clauses(definition, labels).map(|c| text_of(&c))
}

/// A condition as a conjunction of disjunctions, each disjunct printed.
pub type Clauses = Vec<Vec<String>>;

/// [`microc_condition`] as a conjunction of disjunctions (none: `1`).
pub fn microc_clauses(definition: &str, labels: &[String]) -> Option<Clauses> {
    let items = match parse(definition)? {
        Sexp::List(items) => items,
        Sexp::Atom(_) => return None,
    };
    let [Sexp::Atom(kw), _, Sexp::List(params), _, body] = items.as_slice() else {
        return None;
    };
    if kw != "define-fun" || params.len() != labels.len() {
        return None;
    }
    let mut env: Vec<(String, Value)> = Vec::new();
    for (k, p) in params.iter().enumerate() {
        let Sexp::List(p) = p else { return None };
        let Some(Sexp::Atom(name)) = p.first() else {
            return None;
        };
        env.push((name.clone(), Value::Int(Linear::slot(k))));
    }
    let f = match value(body, &mut env)? {
        Value::Bool(f) => f.normal(false),
        Value::Int(_) => return None,
    };
    let disjuncts = |f: &Formula| -> Vec<String> {
        match f {
            Formula::Or(fs) => fs.iter().map(|g| parenthesised(g, labels)).collect(),
            g => vec![print(g, labels)],
        }
    };
    Some(match &f {
        Formula::Constant(true) => vec![],
        Formula::And(fs) => fs.iter().map(disjuncts).collect(),
        g => vec![disjuncts(g)],
    })
}

/// The condition of `clauses`: `a && (b || c)`; `1` for none.
pub fn text_of(clauses: &[Vec<String>]) -> String {
    if clauses.is_empty() {
        return "1".into();
    }
    let parts: Vec<String> = (clauses.iter())
        .map(|c| match c.as_slice() {
            [one] => one.clone(),
            _ if clauses.len() == 1 => c.join(" || "),
            _ => format!("({})", c.join(" || ")),
        })
        .collect();
    parts.join(" && ")
}

/// Whether a label names something a microc condition can read: a
/// variable, or a cell of an array at a constant index.
pub fn is_microc_name(label: &str) -> bool {
    let ident = |s: &str| {
        let mut cs = s.chars();
        cs.next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    match label.split_once('[') {
        None => ident(label),
        Some((array, rest)) => {
            ident(array)
                && rest
                    .strip_suffix(']')
                    .is_some_and(|i| !i.is_empty() && i.chars().all(|c| c.is_ascii_digit()))
        }
    }
}

/// The microc condition `condition` (as [`microc_condition`] prints it)
/// as a term over `params`, the k-th read where `labels[k]` is named: what
/// the re-check of a printed invariant defines the predicate by (the
/// solver layer prints it).
pub fn condition_term(
    condition: &str,
    terms: &mut Terms,
    params: &[Var],
    labels: &[String],
) -> Result<TermId, String> {
    let expr = microc_expression(condition)?;
    Translation {
        terms,
        params,
        labels,
    }
    .boolean(&expr)
}

/// `text` parsed as a microc expression, by the language's own parser.
fn microc_expression(text: &str) -> Result<Expr, String> {
    let (program, diagnostics) = syntax::parse(&format!("main() {{ return {text}; }}"));
    if let Some(d) = diagnostics.iter().find(|d| d.severity == Severity::Error) {
        return Err(format!("not a microc expression: {}", d.message));
    }
    match program.functions.as_slice() {
        [f] => Ok(f.ret.clone()),
        _ => Err("not one microc expression".into()),
    }
}

/// A microc condition over the labels, as a term over the parameters.
struct Translation<'a> {
    terms: &'a mut Terms,
    params: &'a [Var],
    labels: &'a [String],
}

impl Translation<'_> {
    fn boolean(&mut self, e: &Expr) -> Result<TermId, String> {
        match &e.kind {
            ExprKind::Binary(op, a, b) if *op != BinOp::Div && !is_arithmetic(*op) => {
                if matches!(op, BinOp::And | BinOp::Or) {
                    let (a, b) = (self.boolean(a)?, self.boolean(b)?);
                    let t = &mut *self.terms;
                    return Ok(if *op == BinOp::And {
                        t.and(vec![a, b])
                    } else {
                        t.or(vec![a, b])
                    });
                }
                let (a, b) = (self.int(a)?, self.int(b)?);
                let t = &mut *self.terms;
                Ok(match op {
                    BinOp::Eq => t.eq(a, b),
                    BinOp::Ne => t.ne(a, b),
                    BinOp::Lt => t.lt(a, b),
                    BinOp::Le => t.le(a, b),
                    BinOp::Gt => t.gt(a, b),
                    _ => t.ge(a, b),
                })
            }
            ExprKind::Unary(UnOp::Not, a) => {
                let a = self.boolean(a)?;
                Ok(self.terms.not(a))
            }
            _ => {
                let n = self.int(e)?;
                let zero = self.terms.int(0);
                Ok(self.terms.ne(n, zero))
            }
        }
    }

    fn int(&mut self, e: &Expr) -> Result<TermId, String> {
        match &e.kind {
            ExprKind::Num(n) => Ok(self.terms.int(n.clone())),
            ExprKind::Unary(UnOp::Neg, a) => {
                let a = self.int(a)?;
                Ok(self.terms.neg(a))
            }
            ExprKind::Binary(op, a, b) if is_arithmetic(*op) => {
                let (a, b) = (self.int(a)?, self.int(b)?);
                let t = &mut *self.terms;
                Ok(match op {
                    BinOp::Add => t.add(a, b),
                    BinOp::Sub => t.sub(a, b),
                    _ => t.mul(a, b),
                })
            }
            ExprKind::Var(name) => self.slot(name),
            ExprKind::Index(a, i) => match (&a.kind, &i.kind) {
                (ExprKind::Var(a), ExprKind::Num(i)) => self.slot(&format!("{a}[{i}]")),
                _ => Err("an index that is not a constant".into()),
            },
            ExprKind::Binary(BinOp::Div, ..) => Err("a quotient".into()),
            ExprKind::Binary(..) | ExprKind::Unary(UnOp::Not, _) => {
                let c = self.boolean(e)?;
                let (one, zero) = (self.terms.int(1), self.terms.int(0));
                Ok(self.terms.ite(c, one, zero))
            }
            _ => Err("an expression an invariant does not print".into()),
        }
    }

    fn slot(&mut self, label: &str) -> Result<TermId, String> {
        let k = (self.labels.iter())
            .position(|l| l == label)
            .filter(|k| *k < self.params.len())
            .ok_or_else(|| format!("`{label}` is not in the state"))?;
        Ok(self.terms.var(self.params[k]))
    }
}

fn is_arithmetic(op: BinOp) -> bool {
    matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul)
}

#[derive(Clone, Debug)]
enum Sexp {
    Atom(String),
    List(Vec<Sexp>),
}

/// The s-expression of `text` (one, with nothing after it).
fn parse(text: &str) -> Option<Sexp> {
    let mut stack: Vec<Vec<Sexp>> = vec![Vec::new()];
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '(' => stack.push(Vec::new()),
            ')' => {
                let done = stack.pop()?;
                stack.last_mut()?.push(Sexp::List(done));
            }
            c if c.is_whitespace() => {}
            '|' => {
                let mut atom = String::new();
                for (_, c) in chars.by_ref() {
                    if c == '|' {
                        break;
                    }
                    atom.push(c);
                }
                stack.last_mut()?.push(Sexp::Atom(atom));
            }
            _ => {
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    if d.is_whitespace() || d == '(' || d == ')' {
                        break;
                    }
                    end = j + d.len_utf8();
                    chars.next();
                }
                stack.last_mut()?.push(Sexp::Atom(text[i..end].to_string()));
            }
        }
    }
    let mut top = stack.pop()?;
    (stack.is_empty() && top.len() == 1).then(|| top.remove(0))
}

/// `Σ coefficient·monomial + constant`, a monomial the slots it
/// multiplies (sorted; linear terms have one).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Linear {
    terms: BTreeMap<Vec<usize>, BigInt>,
    constant: BigInt,
}

impl Linear {
    fn constant(c: BigInt) -> Linear {
        Linear {
            terms: BTreeMap::new(),
            constant: c,
        }
    }

    fn slot(k: usize) -> Linear {
        Linear {
            terms: BTreeMap::from([(vec![k], BigInt::one())]),
            constant: BigInt::zero(),
        }
    }

    fn scaled(mut self, by: &BigInt) -> Linear {
        self.constant *= by;
        for a in self.terms.values_mut() {
            *a *= by;
        }
        self.terms.retain(|_, a| !a.is_zero());
        self
    }

    fn plus(mut self, other: Linear) -> Linear {
        self.constant += other.constant;
        for (k, a) in other.terms {
            *self.terms.entry(k).or_default() += a;
        }
        self.terms.retain(|_, a| !a.is_zero());
        self
    }

    fn minus(self, other: Linear) -> Linear {
        self.plus(other.scaled(&-BigInt::one()))
    }

    /// The product, monomial by monomial.
    fn times(&self, other: &Linear) -> Linear {
        let with_constant = |l: &Linear| {
            let mut all: Vec<(Vec<usize>, BigInt)> = l.terms.clone().into_iter().collect();
            all.push((vec![], l.constant.clone()));
            all
        };
        let mut product = Linear::constant(BigInt::zero());
        for (m, a) in with_constant(self) {
            for (n, b) in with_constant(other) {
                let mut mn = [m.clone(), n].concat();
                mn.sort_unstable();
                let c = &a * b;
                if mn.is_empty() {
                    product.constant += c;
                } else {
                    *product.terms.entry(mn).or_default() += c;
                }
            }
        }
        product.terms.retain(|_, a| !a.is_zero());
        product
    }

    fn as_constant(&self) -> Option<&BigInt> {
        self.terms.is_empty().then_some(&self.constant)
    }
}

/// How a linear term compares with 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Relation {
    AtMost,
    Equal,
    Different,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Formula {
    Constant(bool),
    /// `linear ⋈ 0`.
    Compare(Linear, Relation),
    And(Vec<Formula>),
    Or(Vec<Formula>),
    Not(Box<Formula>),
}

#[derive(Clone, Debug)]
enum Value {
    Bool(Formula),
    Int(Linear),
}

fn int(s: &Sexp, env: &mut Vec<(String, Value)>) -> Option<Linear> {
    match value(s, env)? {
        Value::Int(l) => Some(l),
        Value::Bool(_) => None,
    }
}

fn boolean(s: &Sexp, env: &mut Vec<(String, Value)>) -> Option<Formula> {
    match value(s, env)? {
        Value::Bool(f) => Some(f),
        Value::Int(_) => None,
    }
}

/// The value of `s` under the bindings `env` (innermost last).
fn value(s: &Sexp, env: &mut Vec<(String, Value)>) -> Option<Value> {
    let items = match s {
        Sexp::Atom(a) => return atom(a, env),
        Sexp::List(items) => items,
    };
    let (Sexp::Atom(head), args) = items.split_first()? else {
        return None;
    };
    match head.as_str() {
        "let" => binding(args, env),
        "and" | "or" | "not" | "=>" => connective(head, args, env),
        "ite" => {
            let [c, a, b] = args else { return None };
            let (c, a, b) = (boolean(c, env)?, boolean(a, env)?, boolean(b, env)?);
            let not_c = Formula::Not(Box::new(c.clone()));
            Some(Value::Bool(Formula::Or(vec![
                Formula::And(vec![c, a]),
                Formula::And(vec![not_c, b]),
            ])))
        }
        "=" | "distinct" | "<=" | "<" | ">=" | ">" => comparison(head, args, env),
        "+" | "-" | "*" => arithmetic(head, args, env),
        _ => None,
    }
}

fn atom(a: &str, env: &[(String, Value)]) -> Option<Value> {
    match a {
        "true" => Some(Value::Bool(Formula::Constant(true))),
        "false" => Some(Value::Bool(Formula::Constant(false))),
        _ if a.bytes().all(|b| b.is_ascii_digit()) => {
            Some(Value::Int(Linear::constant(a.parse().ok()?)))
        }
        _ => (env.iter().rev())
            .find(|(n, _)| n == a)
            .map(|(_, v)| v.clone()),
    }
}

/// `(let ((n e) …) body)`: the bindings are parallel.
fn binding(args: &[Sexp], env: &mut Vec<(String, Value)>) -> Option<Value> {
    let [Sexp::List(bindings), body] = args else {
        return None;
    };
    let mut bound = Vec::new();
    for b in bindings {
        let Sexp::List(pair) = b else { return None };
        let [Sexp::Atom(name), e] = pair.as_slice() else {
            return None;
        };
        bound.push((name.clone(), value(e, env)?));
    }
    let depth = env.len();
    env.extend(bound);
    let v = value(body, env);
    env.truncate(depth);
    v
}

fn connective(head: &str, args: &[Sexp], env: &mut Vec<(String, Value)>) -> Option<Value> {
    let fs = (args.iter())
        .map(|a| boolean(a, env))
        .collect::<Option<Vec<_>>>()?;
    let f = match (head, fs.as_slice()) {
        ("and", _) => Formula::And(fs),
        ("or", _) => Formula::Or(fs),
        ("not", [f]) => Formula::Not(Box::new(f.clone())),
        ("=>", [a, b]) => Formula::Or(vec![Formula::Not(Box::new(a.clone())), b.clone()]),
        _ => return None,
    };
    Some(Value::Bool(f))
}

/// A chain of comparisons `(<= a b c)`: each neighbouring pair.
fn comparison(head: &str, args: &[Sexp], env: &mut Vec<(String, Value)>) -> Option<Value> {
    if args.len() < 2 || (head == "distinct" && args.len() != 2) {
        return None;
    }
    let values = (args.iter())
        .map(|a| value(a, env))
        .collect::<Option<Vec<_>>>()?;
    let mut parts = Vec::new();
    for pair in values.windows(2) {
        parts.push(match (&pair[0], &pair[1]) {
            (Value::Int(a), Value::Int(b)) => compare(head, a.clone(), b.clone()),
            (Value::Bool(a), Value::Bool(b)) if head == "=" || head == "distinct" => {
                let same = Formula::Or(vec![
                    Formula::And(vec![a.clone(), b.clone()]),
                    Formula::And(vec![
                        Formula::Not(Box::new(a.clone())),
                        Formula::Not(Box::new(b.clone())),
                    ]),
                ]);
                if head == "=" {
                    same
                } else {
                    Formula::Not(Box::new(same))
                }
            }
            _ => return None,
        });
    }
    Some(Value::Bool(Formula::And(parts)))
}

/// `a ⋈ b` as a comparison of one linear term with 0.
fn compare(head: &str, a: Linear, b: Linear) -> Formula {
    let one = || Linear::constant(BigInt::one());
    match head {
        "<=" => Formula::Compare(a.minus(b), Relation::AtMost),
        "<" => Formula::Compare(a.minus(b).plus(one()), Relation::AtMost),
        ">=" => Formula::Compare(b.minus(a), Relation::AtMost),
        ">" => Formula::Compare(b.minus(a).plus(one()), Relation::AtMost),
        "=" => Formula::Compare(a.minus(b), Relation::Equal),
        _ => Formula::Compare(a.minus(b), Relation::Different),
    }
}

fn arithmetic(head: &str, args: &[Sexp], env: &mut Vec<(String, Value)>) -> Option<Value> {
    let ls = (args.iter())
        .map(|a| int(a, env))
        .collect::<Option<Vec<_>>>()?;
    let mut ls = ls.into_iter();
    let first = ls.next()?;
    let l = match head {
        "+" => ls.fold(first, Linear::plus),
        "-" if args.len() == 1 => first.scaled(&-BigInt::one()),
        "-" => ls.fold(first, Linear::minus),
        _ => ls.fold(first, |p, f| p.times(&f)),
    };
    Some(Value::Int(l))
}

impl Formula {
    /// The formula (negated if `negated`) with every negation pushed into
    /// a comparison, constants folded, nested conjunctions and
    /// disjunctions flattened, repeated parts dropped.
    fn normal(&self, negated: bool) -> Formula {
        match self {
            Formula::Constant(b) => Formula::Constant(*b != negated),
            Formula::Not(f) => f.normal(!negated),
            Formula::Compare(l, r) => compared(l, *r, negated),
            Formula::And(fs) if negated => junction(fs, false, true),
            Formula::Or(fs) if negated => junction(fs, true, true),
            Formula::And(fs) => junction(fs, true, false),
            Formula::Or(fs) => junction(fs, false, false),
        }
    }
}

/// `l ⋈ 0`, or its negation, as a normal comparison or a constant.
fn compared(l: &Linear, r: Relation, negated: bool) -> Formula {
    let (l, r) = match (r, negated) {
        (r, false) => (l.clone(), r),
        // ¬(l ≤ 0) is l ≥ 1, which is -l + 1 ≤ 0.
        (Relation::AtMost, true) => (
            l.clone()
                .scaled(&-BigInt::one())
                .plus(Linear::constant(BigInt::one())),
            Relation::AtMost,
        ),
        (Relation::Equal, true) => (l.clone(), Relation::Different),
        (Relation::Different, true) => (l.clone(), Relation::Equal),
    };
    match l.as_constant() {
        Some(c) => Formula::Constant(match r {
            Relation::AtMost => !c.is_positive(),
            Relation::Equal => c.is_zero(),
            Relation::Different => !c.is_zero(),
        }),
        None => Formula::Compare(l, r),
    }
}

/// The conjunction (`all`) or disjunction of `fs`, each negated if
/// `negated`, in normal form.
fn junction(fs: &[Formula], all: bool, negated: bool) -> Formula {
    let mut parts: Vec<Formula> = Vec::new();
    for f in fs {
        match f.normal(negated) {
            Formula::Constant(b) if b == all => {}
            Formula::Constant(b) => return Formula::Constant(b),
            Formula::And(inner) if all => parts.extend(inner),
            Formula::Or(inner) if !all => parts.extend(inner),
            g => parts.push(g),
        }
    }
    let mut kept: Vec<Formula> = Vec::new();
    for p in parts {
        if !kept.contains(&p) {
            kept.push(p);
        }
    }
    match kept.len() {
        0 => Formula::Constant(all),
        1 => kept.remove(0),
        _ if all => Formula::And(kept),
        _ => Formula::Or(kept),
    }
}

/// A normal formula in microc: `1` and `0` for the constants; `||` inside
/// `&&` (and the reverse) in parentheses.
fn print(f: &Formula, labels: &[String]) -> String {
    match f {
        Formula::Constant(b) => if *b { "1" } else { "0" }.to_string(),
        Formula::Compare(l, r) => comparison_text(l, *r, labels),
        Formula::And(fs) => joined(fs, " && ", labels),
        Formula::Or(fs) => joined(fs, " || ", labels),
        Formula::Not(f) => format!("!({})", print(f, labels)),
    }
}

fn joined(fs: &[Formula], op: &str, labels: &[String]) -> String {
    let parts: Vec<String> = fs.iter().map(|f| parenthesised(f, labels)).collect();
    parts.join(op)
}

/// `f` printed to be an operand of `&&` or `||`.
fn parenthesised(f: &Formula, labels: &[String]) -> String {
    match f {
        Formula::And(_) | Formula::Or(_) => format!("({})", print(f, labels)),
        _ => print(f, labels),
    }
}

/// `Σ a·x + c ⋈ 0` with the positive terms on the left and the negative
/// ones on the right: `x + 2*y <= z + 3`, `x >= 1`, `x < y`.
fn comparison_text(l: &Linear, r: Relation, labels: &[String]) -> String {
    let side = |positive: bool| -> Vec<(Vec<usize>, BigInt)> {
        (l.terms.iter())
            .filter(|(_, a)| a.is_positive() == positive)
            .map(|(m, a)| (m.clone(), a.abs()))
            .collect()
    };
    let (mut left, mut right) = (side(true), side(false));
    // The constant goes to the right: Σ⁺ ⋈ Σ⁻ - c.
    let mut constant = -l.constant.clone();
    let mut op = match r {
        Relation::AtMost => "<=",
        Relation::Equal => "==",
        Relation::Different => "!=",
    };
    // The first slot on the left (`x >= y`, not `y <= x`), and something
    // on the left (`x >= 0`, not `0 <= x`).
    let first = |s: &[(Vec<usize>, BigInt)]| s.first().map(|(m, _)| m.clone());
    if left.is_empty() || (!right.is_empty() && first(&right) < first(&left)) {
        std::mem::swap(&mut left, &mut right);
        constant = -constant;
        op = match op {
            "<=" => ">=",
            other => other,
        };
    }
    // x <= y - 1 is x < y (and x >= y + 1 is x > y).
    let strict = !right.is_empty()
        && match op {
            "<=" => constant == -BigInt::one(),
            ">=" => constant == BigInt::one(),
            _ => false,
        };
    if strict {
        constant = BigInt::zero();
        op = if op == "<=" { "<" } else { ">" };
    }
    let named = |s: &[(Vec<usize>, BigInt)]| -> Vec<(String, BigInt)> {
        let monomial = |m: &[usize]| -> String {
            let factors: Vec<&str> = m.iter().map(|k| labels[*k].as_str()).collect();
            factors.join("*")
        };
        s.iter().map(|(m, a)| (monomial(m), a.clone())).collect()
    };
    format!(
        "{} {op} {}",
        sum(&named(&left), None),
        sum(&named(&right), Some(&constant))
    )
}

/// `x + 2*y + 3`; `0` for nothing.
fn sum(terms: &[(String, BigInt)], constant: Option<&BigInt>) -> String {
    let mut text = String::new();
    for (name, a) in terms {
        if !text.is_empty() {
            text.push_str(" + ");
        }
        if a.is_one() {
            text.push_str(name);
        } else {
            text.push_str(&format!("{a}*{name}"));
        }
    }
    match constant.filter(|c| !c.is_zero()) {
        Some(c) if text.is_empty() => c.to_string(),
        Some(c) if c.is_negative() => format!("{text} - {}", c.abs()),
        Some(c) => format!("{text} + {c}"),
        None if text.is_empty() => "0".to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn spacers_definition_reads_as_a_condition() {
        let d = "(define-fun P3 ((x!0 Int) (x!1 Int)) Bool
            (let ((a!1 (not (<= (+ x!0 (* (- 1) x!1)) (- 1)))))
              (and a!1 (not (<= x!1 (- 1))) (<= x!1 100000))))";
        let text = microc_condition(d, &labels(&["x", "y"])).unwrap();
        assert_eq!(text, "x >= y && y >= 0 && y <= 100000");
    }

    #[test]
    fn negations_are_pushed_into_comparisons() {
        let d = "(define-fun P1 ((x!0 Int) (x!1 Int)) Bool
            (not (and (< x!0 x!1) (or (= x!0 3) (distinct x!1 0)))))";
        let text = microc_condition(d, &labels(&["i", "n"])).unwrap();
        assert_eq!(text, "i >= n || (i != 3 && n == 0)");
    }

    #[test]
    fn constants_fold_and_strictness_is_kept() {
        let d = "(define-fun P1 ((x!0 Int) (x!1 Int)) Bool
            (and true (<= 0 1) (<= x!0 (- x!1 1)) (>= (* 2 x!0) (+ x!1 1))))";
        let text = microc_condition(d, &labels(&["a", "b"])).unwrap();
        assert_eq!(text, "a < b && 2*a > b");
        let t = "(define-fun P1 ((x!0 Int)) Bool true)";
        assert_eq!(microc_condition(t, &labels(&["a"])).unwrap(), "1");
    }

    #[test]
    fn products_are_monomials() {
        let d = "(define-fun P4 ((x0!0 Int) (x1!1 Int)) Bool (and (= x0!0 (* x1!1 x1!1)) (<= (* 2 (+ x1!1 1) x0!0) 7)))";
        let text = microc_condition(d, &labels(&["s", "i"])).unwrap();
        assert_eq!(text, "s == i*i && 2*s + 2*s*i <= 7");
        // Printed, then parsed back into a term, printed by the solver layer.
        let mut terms = Terms::new();
        let vars = ["s", "i"].map(|n| terms.new_var(crate::term::VarKind::Symbol, n));
        let t = condition_term(&text, &mut terms, &vars, &labels(&["s", "i"])).unwrap();
        let relation = crate::smt::horn::Relation {
            name: "P4".into(),
            params: vars.to_vec(),
        };
        let again = crate::smt::horn::definition(&terms, &relation, t);
        assert_eq!(
            microc_condition(&again, &labels(&["s", "i"])).unwrap(),
            text
        );
    }

    #[test]
    fn what_microc_cannot_say_has_no_readable_form() {
        let quotient = "(define-fun P1 ((x!0 Int) (x!1 Int)) Bool (<= (div x!0 x!1) 3))";
        assert_eq!(microc_condition(quotient, &labels(&["a", "b"])), None);
        let array = "(define-fun P1 ((x!0 (Array Int Int))) Bool (= (select x!0 0) 1))";
        assert_eq!(microc_condition(array, &labels(&["A"])), None);
        assert!(is_microc_name("a[3]") && is_microc_name("x_1"));
        assert!(!is_microc_name("init(x)") && !is_microc_name("f#1.x") && !is_microc_name("$ic"));
    }
}
