//! SMT-LIB 2 from terms: the one printer of every script apc sends or
//! dumps. Commands and terms are built as S-expressions in an easy-smt
//! arena (no solver attached) and printed by it, so the text is
//! well-formed by construction: one space between list elements, integer
//! literals as `5` and `(- 5)`.
//!
//! Shared closed subterms become `define-fun`s and subterms shared under a
//! binder are `let`-bound there, so a script stays linear in the size of
//! the term DAG.

use crate::term::shared_subterms;
use crate::term::{Node, Quantifier, Sort, TermId, Terms, Var, VarKind, scoped_shared};
use easy_smt::{Context, ContextBuilder, SExpr};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeSet;
use std::fmt::Write;

/// A self-contained script asserting all `roots` (Boolean terms), then
/// `(check-sat)`: declarations of every free variable (counters with
/// `(>= κ 0)`), the truncating-division helper if needed.
pub fn script(terms: &Terms, roots: &[TermId]) -> String {
    let mut out = query(terms, roots);
    out.push_str("(check-sat)\n");
    out
}

/// [`script`] without the `(check-sat)`: the query that options go
/// before and blocking assertions after.
pub fn query(terms: &Terms, roots: &[TermId]) -> String {
    let ctx = arena();
    let p = ScriptPrinter::new(terms, &ctx);
    let mut out = p.header(roots, &[]);
    p.assertions(&mut out, roots);
    out
}

/// A script that checks each root on its own: shared declarations, then
/// `(push 1) (assert r) (check-sat) (pop 1)` per root.
pub fn batch(terms: &Terms, roots: &[TermId]) -> String {
    let ctx = arena();
    let p = ScriptPrinter::new(terms, &ctx);
    let mut out = p.header(roots, &[]);
    let none = HashMap::default();
    for r in roots {
        let a = p.term(*r, &none);
        let assert = p.command("assert", vec![a]);
        let _ = writeln!(
            out,
            "(push 1)\n{}\n(check-sat)\n(pop 1)",
            p.ctx.display(assert)
        );
    }
    out
}

/// A script asking for a model of `formula` with the values of `vars`
/// (declared even where the formula does not mention them), and the SMT
/// names of those variables in order.
pub struct ModelQuery {
    pub text: String,
    pub names: Vec<String>,
}

pub fn model_query(terms: &Terms, formula: TermId, vars: &[Var]) -> ModelQuery {
    let names: Vec<String> = vars.iter().map(|v| name(terms, *v)).collect();
    let free = terms.free_vars(formula);
    let missing: Vec<Var> = vars.iter().copied().filter(|v| !free.contains(v)).collect();
    let ctx = arena();
    let p = ScriptPrinter::new(terms, &ctx);
    let mut text = p.header(&[formula], &missing);
    p.assertions(&mut text, &[formula]);
    text.push_str("(check-sat)\n");
    if !names.is_empty() {
        let atoms: Vec<SExpr> = names.iter().map(|n| p.ctx.atom(n.as_str())).collect();
        let list = p.ctx.list(atoms);
        let get = p.command("get-value", vec![list]);
        p.line(&mut text, get);
    }
    ModelQuery { text, names }
}

/// An SMT-LIB identifier for a variable: its name made safe, plus its id.
pub fn name(terms: &Terms, v: Var) -> String {
    let raw = terms.var_name(v);
    let mut s: String = raw
        .chars()
        .map(|c| match c {
            '₀' => '0',
            c if c.is_ascii_alphanumeric() || c == '_' => c,
            'κ' => 'k',
            'τ' => 't',
            'ν' => 'n',
            _ => '_',
        })
        .collect();
    let _ = write!(s, "!{}", v.id);
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'v');
    }
    s
}

/// An integer literal in SMT-LIB (`(- 5)` for negatives).
pub fn int(n: &BigInt) -> String {
    if n.is_negative() {
        format!("(- {})", n.abs())
    } else {
        n.to_string()
    }
}

/// `(set-option :key value)`.
pub fn set_option(key: &str, value: &str) -> String {
    format!("(set-option :{key} {value})")
}

/// `(set-logic logic)`.
pub fn set_logic(logic: &str) -> String {
    format!("(set-logic {logic})")
}

/// `(f i j)`: a function of integers applied to literal indices (how the
/// conditions read an input array's cell).
pub fn application(function: &str, index: &[usize]) -> String {
    let args: Vec<String> = index.iter().map(|i| i.to_string()).collect();
    format!("({function} {})", args.join(" "))
}

/// `(select (select a i) j)`: a cell of a nested SMT array (how the Horn
/// clauses hold an input array).
pub fn nested_select(array: &str, index: &[usize]) -> String {
    (index.iter()).fold(array.to_string(), |a, i| format!("(select {a} {i})"))
}

/// The assertion that excludes one model: not every named term has its
/// value (`false` when there is none: every model is then the same).
pub fn blocking(terms: &[String], values: &[BigInt]) -> String {
    if terms.is_empty() {
        return "(assert false)".into();
    }
    let eqs: Vec<String> = (terms.iter().zip(values))
        .map(|(t, v)| format!("(= {t} {})", int(v)))
        .collect();
    format!("(assert (not (and {})))", eqs.join(" "))
}

/// The printer of an interactive session that lives as long as a run:
/// every variable is declared once and every compound term is defined
/// once (`define-fun e!N`), at the top level, the first time a command
/// needs it. A later check that mentions a known term sends its name only,
/// so the text sent over a run stays linear in the number of distinct
/// terms, however long the path conditions grow.
pub struct Incremental {
    ctx: Context,
    names: HashMap<TermId, SExpr>,
    declared: std::collections::HashSet<Var>,
    tdiv_defined: bool,
}

impl Default for Incremental {
    fn default() -> Incremental {
        Incremental {
            ctx: arena(),
            names: HashMap::default(),
            declared: Default::default(),
            tdiv_defined: false,
        }
    }
}

impl Incremental {
    /// The commands that make `t` (a closed quantifier-free term) known to
    /// the session, appended to `out`; returns the text that names `t`.
    pub fn prepare(&mut self, terms: &Terms, t: TermId, out: &mut String) -> String {
        let order = self.unnamed_post_order(terms, t);
        let p = ScriptPrinter::new(terms, &self.ctx);
        for u in order {
            match terms.node(u) {
                Node::Var(v) => {
                    if self.declared.insert(*v) {
                        p.declare(out, *v);
                    }
                    continue;
                }
                Node::Int(_) | Node::Bool(_) => continue,
                Node::Div(..) if !self.tdiv_defined => {
                    self.tdiv_defined = true;
                    p.line(out, p.tdiv());
                }
                _ => {}
            }
            let sort = match terms.sort(u) {
                Sort::Bool => "Bool",
                _ => "Int",
            };
            let body = p.term(u, &self.names);
            let name = self.ctx.atom(format!("e!{}", u.0));
            let empty = self.ctx.list(vec![]);
            let def = p.command("define-fun", vec![name, empty, self.ctx.atom(sort), body]);
            p.line(out, def);
            self.names.insert(u, name);
        }
        let p = ScriptPrinter::new(terms, &self.ctx);
        self.ctx.display(p.term(t, &self.names)).to_string()
    }

    /// The subterms of `t` not yet named, children before parents (an
    /// explicit stack: path conditions can be deep).
    fn unnamed_post_order(&self, terms: &Terms, t: TermId) -> Vec<TermId> {
        let mut order = Vec::new();
        let mut seen: std::collections::HashSet<TermId> = Default::default();
        let mut stack = vec![(t, false)];
        while let Some((u, expanded)) = stack.pop() {
            if expanded {
                order.push(u);
                continue;
            }
            if self.names.contains_key(&u) || !seen.insert(u) {
                continue;
            }
            if let Node::Var(v) = terms.node(u)
                && self.declared.contains(v)
            {
                continue;
            }
            stack.push((u, true));
            for c in terms.children(terms.node(u)) {
                stack.push((c, false));
            }
        }
        order
    }
}

/// `(declare-fun v () Int)` (or the array's or Boolean's declaration) of
/// one variable, for a session that declares its symbols itself.
pub fn declaration(terms: &Terms, v: Var) -> String {
    let ctx = arena();
    let p = ScriptPrinter::new(terms, &ctx);
    let mut out = String::new();
    p.declare(&mut out, v);
    out
}

/// `(define-fun f ((p Int)…) S body)`: a function of the `params` (integer
/// variables of `body`), named as the array symbol `function` prints, so
/// that a `Select` on `function` applies it. The subterms shared inside the
/// body are `let`-bound there (as in a quantifier's body); `body` may apply
/// functions defined before.
pub fn define_fun(terms: &Terms, function: Var, params: &[Var], body: TermId) -> String {
    let ctx = arena();
    let p = ScriptPrinter::new(terms, &ctx);
    let decls: Vec<SExpr> = params
        .iter()
        .map(|v| ctx.list(vec![ctx.atom(name(terms, *v)), ctx.atom("Int")]))
        .collect();
    let none: HashMap<TermId, SExpr> = HashMap::default();
    let mut local: HashMap<TermId, SExpr> = HashMap::default();
    let lets = p.bind(scoped_shared(terms, body, params, &none, 2), &mut local);
    let inner = p.under_lets(lets, p.term(body, &local));
    let sort = if terms.sort(body) == Sort::Bool {
        "Bool"
    } else {
        "Int"
    };
    let f = ctx.atom(name(terms, function));
    let def = p.command(
        "define-fun",
        vec![f, ctx.list(decls), ctx.atom(sort), inner],
    );
    let mut out = String::new();
    p.line(&mut out, def);
    out
}

/// `(assert t)` for a closed formula whose variables and functions the
/// session has already declared or defined: its shared subterms become
/// `define-fun`s first (meant for a `push` scope), `tdiv` included if the
/// session has not defined it (`tdiv_defined`).
pub fn scoped_assertion(terms: &Terms, t: TermId, tdiv_defined: bool) -> String {
    let ctx = arena();
    let p = ScriptPrinter::new(terms, &ctx);
    let mut out = String::new();
    if !tdiv_defined {
        p.tdiv_if_divides(&mut out, &[t]);
    }
    p.assertions(&mut out, &[t]);
    out
}

/// The definition of `tdiv` as a command, for sessions that define it once.
pub fn truncating_division_command() -> String {
    let terms = Terms::new();
    let ctx = arena();
    let p = ScriptPrinter::new(&terms, &ctx);
    let mut out = String::new();
    p.line(&mut out, p.tdiv());
    out
}

/// Whether `t` is an array value (read with `select`).
fn is_array_value(terms: &Terms, t: TermId) -> bool {
    matches!(terms.node(t), Node::Var(v) if matches!(v.kind, VarKind::ArrayValue(_)))
}

/// Builds the S-expressions of one script.
pub(super) struct ScriptPrinter<'a> {
    pub(super) terms: &'a Terms,
    pub(super) ctx: &'a Context,
    /// Comparisons printed with a side for each sign ([`Self::balanced`]).
    balanced: bool,
}

/// An S-expression arena with no solver attached.
pub(super) fn arena() -> Context {
    ContextBuilder::new()
        .build()
        .expect("a context without a solver starts no process")
}

impl<'a> ScriptPrinter<'a> {
    pub(super) fn new(terms: &'a Terms, ctx: &'a Context) -> ScriptPrinter<'a> {
        ScriptPrinter {
            terms,
            ctx,
            balanced: false,
        }
    }

    /// A printer that writes a comparison `c + Σ kᵢ·xᵢ ≤ 0` (the terms'
    /// canonical form) as `P ≤ N`, the summands with positive
    /// coefficients on the left and the others, negated, on the right:
    /// `x < 1000` prints as `(not (<= 1000 x))`, not as
    /// `(not (<= (+ (* (- 1) x) 1000) 0))`. Spacer's global guidance finds
    /// the invariant `x ≥ y` of a counting loop in 0.3 s from the first
    /// and not in 30 s from the second (docs/horn-clauses.md §2).
    pub(super) fn balanced(terms: &'a Terms, ctx: &'a Context) -> ScriptPrinter<'a> {
        ScriptPrinter {
            balanced: true,
            ..ScriptPrinter::new(terms, ctx)
        }
    }

    /// `(op a b)`; balanced when the printer is and `b` is 0.
    fn comparison(&self, op: &str, a: TermId, b: TermId, names: &HashMap<TermId, SExpr>) -> SExpr {
        let zero = self.terms.as_int(b).is_some_and(Zero::is_zero);
        if !self.balanced || !zero || names.contains_key(&a) {
            return self.command(op, vec![self.term(a, names), self.term(b, names)]);
        }
        let (c, xs) = self.terms.linear(a);
        let (mut left, mut right) = (Vec::new(), Vec::new());
        for (k, x) in &xs {
            let side = if k.is_positive() {
                &mut left
            } else {
                &mut right
            };
            side.push((k.abs(), *x));
        }
        let (lc, rc) = if c.is_positive() {
            (c, BigInt::zero())
        } else {
            (BigInt::zero(), -c)
        };
        let sides = vec![self.sum(&lc, &left, names), self.sum(&rc, &right, names)];
        self.command(op, sides)
    }

    /// `(op args…)`.
    pub(super) fn command(&self, op: &str, args: Vec<SExpr>) -> SExpr {
        let mut items = vec![self.ctx.atom(op)];
        items.extend(args);
        self.ctx.list(items)
    }

    /// The shared closed subterms of `roots` as definitions, then each
    /// root asserted.
    fn assertions(&self, out: &mut String, roots: &[TermId]) {
        let terms = self.terms;
        let mut names: HashMap<TermId, SExpr> = HashMap::default();
        for (i, t) in shared_subterms(terms, roots).into_iter().enumerate() {
            crate::deadline::tick();
            let sort = match terms.sort(t) {
                Sort::Int => "Int",
                Sort::Bool => "Bool",
                Sort::Array(_) => continue, // λ-terms are never printed whole
            };
            let body = self.term(t, &names);
            let name = self.ctx.atom(format!("s!{}", i + 1));
            let empty = self.ctx.list(vec![]);
            let def = self.command("define-fun", vec![name, empty, self.ctx.atom(sort), body]);
            self.line(out, def);
            names.insert(t, name);
        }
        for r in roots {
            let a = self.term(*r, &names);
            let assert = self.command("assert", vec![a]);
            self.line(out, assert);
        }
    }

    pub(super) fn line(&self, out: &mut String, e: SExpr) {
        let _ = writeln!(out, "{}", self.ctx.display(e));
    }

    /// The logic, `tdiv` if some root divides, and the declarations of the
    /// roots' free variables and of `extra` ones.
    fn header(&self, roots: &[TermId], extra: &[Var]) -> String {
        let mut out = String::new();
        let logic = self.command("set-logic", vec![self.ctx.atom("ALL")]);
        self.line(&mut out, logic);
        for v in extra {
            let d = self.declare_const(*v);
            self.line(&mut out, d);
        }
        self.tdiv_if_divides(&mut out, roots);
        let mut free: BTreeSet<Var> = BTreeSet::new();
        for r in roots {
            free.extend(self.terms.free_vars(*r));
        }
        for v in free {
            self.declare(&mut out, v);
        }
        out
    }

    /// `tdiv`'s definition, if a term under `roots` divides. Only then: an
    /// unused definition with `div` changes Z3's strategy (it answered
    /// `unknown` on the Alg. 8 queries with it).
    pub(super) fn tdiv_if_divides(&self, out: &mut String, roots: &[TermId]) {
        let divides = |r: &TermId| self.terms.any_node(*r, |n| matches!(n, Node::Div(..)));
        if roots.iter().any(divides) {
            self.line(out, self.tdiv());
        }
    }

    /// C's truncating division (SMT-LIB's `div` rounds towards −∞ for a
    /// positive divisor):
    /// `(ite (= (>= a 0) (> b 0)) (div (abs a) (abs b)) (- (div (abs a) (abs b))))`.
    pub(super) fn tdiv(&self) -> SExpr {
        let c = &self.ctx;
        let (a, b, zero) = (c.atom("a"), c.atom("b"), c.atom("0"));
        let params = c.list(vec![
            c.list(vec![a, c.atom("Int")]),
            c.list(vec![b, c.atom("Int")]),
        ]);
        let same_sign = self.command(
            "=",
            vec![
                self.command(">=", vec![a, zero]),
                self.command(">", vec![b, zero]),
            ],
        );
        let quotient = self.command(
            "div",
            vec![self.command("abs", vec![a]), self.command("abs", vec![b])],
        );
        let body = self.command(
            "ite",
            vec![same_sign, quotient, self.command("-", vec![quotient])],
        );
        self.command(
            "define-fun",
            vec![c.atom("tdiv"), params, c.atom("Int"), body],
        )
    }

    /// `(declare-fun v () S)` for a variable taken as a constant of its
    /// sort ([`ScriptPrinter::var_sort`]).
    pub(super) fn declare_const(&self, v: Var) -> SExpr {
        let n = self.ctx.atom(name(self.terms, v));
        let empty = self.ctx.list(vec![]);
        self.command("declare-fun", vec![n, empty, self.var_sort(v)])
    }

    fn declare(&self, out: &mut String, v: Var) {
        let n = self.ctx.atom(name(self.terms, v));
        match Terms::var_sort(v) {
            Sort::Array(k) if !matches!(v.kind, VarKind::ArrayValue(_)) => {
                let args = self.ctx.list(vec![self.ctx.atom("Int"); k as usize]);
                let d = self.command("declare-fun", vec![n, args, self.ctx.atom("Int")]);
                self.line(out, d);
            }
            _ => {
                self.line(out, self.declare_const(v));
                if v.kind == VarKind::Counter {
                    let nonneg = self.command(">=", vec![n, self.ctx.atom("0")]);
                    let a = self.command("assert", vec![nonneg]);
                    self.line(out, a);
                }
            }
        }
    }

    /// The sort of a variable as a constant: `Int`, `Bool`, or an array
    /// value's `(Array Int …)`.
    pub(super) fn var_sort(&self, v: Var) -> SExpr {
        let c = self.ctx;
        match v.kind {
            VarKind::ArrayValue(depth) => {
                (0..depth).fold(c.atom("Int"), |inner, _| c.array_sort(c.atom("Int"), inner))
            }
            _ if Terms::var_sort(v) == Sort::Bool => c.atom("Bool"),
            _ => c.atom("Int"),
        }
    }

    fn int(&self, n: &BigInt) -> SExpr {
        if n.is_negative() {
            self.command("-", vec![self.ctx.atom(n.abs().to_string())])
        } else {
            self.ctx.atom(n.to_string())
        }
    }

    /// An n-ary connective, with SMT-LIB's arity rules (cvc5 rejects
    /// `(and x)`).
    pub(super) fn nary(&self, op: &str, unit: &str, mut parts: Vec<SExpr>) -> SExpr {
        match parts.len() {
            0 => self.ctx.atom(unit),
            1 => parts.pop().expect("one part"),
            _ => self.command(op, parts),
        }
    }

    /// A term; `names` are the subterms already named (definitions, `let`s).
    pub(super) fn term(&self, t: TermId, names: &HashMap<TermId, SExpr>) -> SExpr {
        if let Some(n) = names.get(&t) {
            return *n;
        }
        crate::deadline::tick();
        let tm = self.terms;
        let r = |x: &TermId| self.term(*x, names);
        match tm.node(t) {
            Node::Int(n) => self.int(n),
            Node::Bool(b) => self.ctx.atom(b.to_string()),
            Node::Star => self.ctx.atom("0"), // never printed: ⋆ is removed before emission
            Node::Var(v) => self.ctx.atom(name(tm, *v)),
            Node::Add(c, xs) => self.sum(c, xs, names),
            Node::Mul(a, b) => self.command("*", vec![r(a), r(b)]),
            Node::Div(a, b) => self.command("tdiv", vec![r(a), r(b)]),
            Node::Max(a, b) => {
                let (x, y) = (r(a), r(b));
                let ge = self.command(">=", vec![x, y]);
                self.command("ite", vec![ge, x, y])
            }
            Node::Ite(c, a, b) => self.command("ite", vec![r(c), r(a), r(b)]),
            Node::Eq(a, b) => self.comparison("=", *a, *b, names),
            Node::Le(a, b) => self.comparison("<=", *a, *b, names),
            Node::Not(a) => self.command("not", vec![r(a)]),
            Node::And(xs) => self.nary("and", "true", xs.iter().map(r).collect()),
            Node::Or(xs) => self.nary("or", "false", xs.iter().map(r).collect()),
            Node::Select(a, xs) if is_array_value(tm, *a) => {
                (xs.iter()).fold(r(a), |array, i| self.ctx.select(array, r(i)))
            }
            Node::Select(a, xs) => {
                let mut items = vec![r(a)];
                items.extend(xs.iter().map(r));
                self.ctx.list(items)
            }
            Node::Lambda(..) => self.command("_", vec![self.ctx.atom("lambda-not-applied")]),
            Node::Quant(q, vs, b) => self.quantifier(*q, vs, *b, names),
        }
    }

    /// `c + Σ kᵢ·xᵢ` as `(+ …)`, with SMT-LIB's arity (`+` takes at least
    /// two arguments: cvc5 insists).
    fn sum(&self, c: &BigInt, xs: &[(BigInt, TermId)], names: &HashMap<TermId, SExpr>) -> SExpr {
        let mut parts: Vec<SExpr> = xs
            .iter()
            .map(|(k, x)| {
                let x = self.term(*x, names);
                if k.is_one() {
                    x
                } else {
                    self.command("*", vec![self.int(k), x])
                }
            })
            .collect();
        if !c.is_zero() {
            parts.push(self.int(c));
        }
        self.nary("+", "0", parts)
    }

    /// `((v S) …)`: variables with their sorts, as a binder lists them.
    pub(super) fn sorted_vars(&self, vs: &[Var]) -> Vec<SExpr> {
        (vs.iter())
            .map(|v| {
                let n = self.ctx.atom(name(self.terms, *v));
                self.ctx.list(vec![n, self.var_sort(*v)])
            })
            .collect()
    }

    /// Names each of `shared` `l!N` in `names`, in order (each printed
    /// with the names before it): the bindings, for [`Self::under_lets`].
    pub(super) fn bind(
        &self,
        shared: impl IntoIterator<Item = TermId>,
        names: &mut HashMap<TermId, SExpr>,
    ) -> Vec<(SExpr, SExpr)> {
        let mut lets = Vec::new();
        for t in shared {
            let e = self.term(t, names);
            let n = self.ctx.atom(format!("l!{}", t.0));
            lets.push((n, e));
            names.insert(t, n);
        }
        lets
    }

    /// `body` under the `lets`, the first binding outermost.
    pub(super) fn under_lets(&self, lets: Vec<(SExpr, SExpr)>, body: SExpr) -> SExpr {
        (lets.into_iter().rev()).fold(body, |inner, (n, e)| {
            let binding = self.ctx.list(vec![self.ctx.list(vec![n, e])]);
            self.command("let", vec![binding, inner])
        })
    }

    /// A quantifier; the subterms shared inside its body are `let`-bound
    /// there, so the script stays linear in the DAG under binders too.
    fn quantifier(
        &self,
        q: Quantifier,
        vs: &[Var],
        b: TermId,
        names: &HashMap<TermId, SExpr>,
    ) -> SExpr {
        let tm = self.terms;
        let decls = self.sorted_vars(vs);
        let mut local = names.clone();
        let lets = self.bind(scoped_shared(tm, b, vs, names, 2), &mut local);
        let inner = self.under_lets(lets, self.term(b, &local));
        let q = if q == Quantifier::Forall {
            "forall"
        } else {
            "exists"
        };
        self.command(q, vec![self.ctx.list(decls), inner])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declares_free_variables_and_bounds_counters() {
        let mut t = Terms::new();
        let a = t.new_var(VarKind::Symbol, "a₀");
        let at = t.var(a);
        let k = t.new_var(VarKind::Counter, "κ1");
        let kt = t.var(k);
        let four_k = t.scale(BigInt::from(4), kt);
        let f = t.eq(four_k, at);
        let text = script(&t, &[f]);
        let (a, k) = (name(&t, a), name(&t, k));
        assert_eq!(
            text,
            format!(
                "(set-logic ALL)\n(declare-fun {a} () Int)\n(declare-fun {k} () Int)\n\
                 (assert (>= {k} 0))\n(assert (= (+ {a} (* (- 4) {k})) 0))\n(check-sat)\n"
            )
        );
    }

    #[test]
    fn truncating_division_is_defined_only_when_used() {
        let mut t = Terms::new();
        let a = t.new_var(VarKind::Symbol, "a₀");
        let at = t.var(a);
        let two = t.int(2);
        let q = t.div(at, two);
        let f = t.eq(q, two);
        assert!(script(&t, &[f]).contains(
            "(define-fun tdiv ((a Int) (b Int)) Int (ite (= (>= a 0) (> b 0)) \
             (div (abs a) (abs b)) (- (div (abs a) (abs b)))))"
        ));
        let g = t.eq(at, two);
        assert!(!script(&t, &[g]).contains("tdiv"));
    }

    /// The session printer defines each variable, term and `tdiv` once:
    /// a term asked again costs nothing, a larger one only its new nodes.
    #[test]
    fn incremental_printing_defines_each_term_once() {
        let mut t = Terms::new();
        let a = t.new_var(VarKind::Symbol, "a");
        let at = t.var(a);
        let two = t.int(2);
        let q = t.div(at, two);
        let small = t.lt(q, two);
        let mut p = Incremental::default();
        let mut first = String::new();
        let name = p.prepare(&t, small, &mut first);
        assert_eq!(first.matches("declare-fun").count(), 1, "{first}");
        assert_eq!(first.matches("define-fun tdiv").count(), 1, "{first}");
        assert!(name.starts_with("e!"), "{name}");
        let mut again = String::new();
        assert_eq!(p.prepare(&t, small, &mut again), name);
        assert!(again.is_empty(), "{again}");
        let three = t.int(3);
        let q3 = t.div(at, three);
        let big = t.lt(q3, three);
        let both = t.and2(small, big);
        let mut more = String::new();
        p.prepare(&t, both, &mut more);
        assert!(
            !more.contains("declare-fun") && !more.contains("tdiv ((a"),
            "{more}"
        );
        assert!(
            more.contains(&name),
            "the known conjunct is used by name: {more}"
        );
    }
}
