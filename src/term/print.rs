//! Printing terms: a readable infix form (for `apc nc` and snapshots) and
//! SMT-LIB 2 (for solvers).

use super::*;
use rustc_hash::FxHashMap as HashMap;
use rustc_hash::FxHashSet as HashSet;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Subterms worth naming when printing `roots`: used more than once, not
/// atomic, and closed (no variable bound inside the roots), children first.
pub fn shared_subterms(terms: &Terms, roots: &[TermId]) -> Vec<TermId> {
    let mut refs: HashMap<TermId, usize> = HashMap::default();
    let mut order = Vec::new();
    let mut seen = HashSet::default();
    let mut stack: Vec<(TermId, bool)> = roots.iter().rev().map(|r| (*r, false)).collect();
    while let Some((t, done)) = stack.pop() {
        if done {
            order.push(t);
            continue;
        }
        if !seen.insert(t) {
            continue;
        }
        stack.push((t, true));
        for c in terms.children(terms.node(t)) {
            *refs.entry(c).or_default() += 1;
            stack.push((c, false));
        }
    }
    let free: BTreeSet<Var> = roots.iter().flat_map(|r| terms.free_vars(*r)).collect();
    let mut open: HashMap<TermId, bool> = HashMap::default();
    for &t in &order {
        let node = terms.node(t);
        let o = match node {
            Node::Var(v) => !free.contains(v),
            _ => terms.children(node).iter().any(|c| open[c]),
        };
        open.insert(t, o);
    }
    order
        .into_iter()
        .filter(|t| {
            refs.get(t).copied().unwrap_or(0) > 1
                && !open[t]
                && !matches!(
                    terms.node(*t),
                    Node::Int(_) | Node::Bool(_) | Node::Star | Node::Var(_)
                )
        })
        .collect()
}

/// Subterms of a binder's `body` to name at that binder: used more than
/// once inside it, not atomic, not named already, mentioning one of the
/// binder's `vars` and no variable bound further inside, and (unless
/// `min_size` ≤ 2) of at least `min_size` DAG nodes. Children first.
fn scoped_shared(
    tm: &Terms,
    body: TermId,
    vars: &[Var],
    named: &HashMap<TermId, String>,
    min_size: usize,
) -> Vec<TermId> {
    // Post-order over the body, not descending into named subterms.
    let mut order = Vec::new();
    let mut refs: HashMap<TermId, usize> = HashMap::default();
    let mut seen = HashSet::default();
    let mut stack = vec![(body, false)];
    while let Some((t, done)) = stack.pop() {
        if done {
            order.push(t);
            continue;
        }
        if !seen.insert(t) || named.contains_key(&t) {
            continue;
        }
        stack.push((t, true));
        for c in tm.children(tm.node(t)) {
            *refs.entry(c).or_default() += 1;
            stack.push((c, false));
        }
    }
    let mut inner_bound: BTreeSet<Var> = BTreeSet::new();
    for &t in &order {
        if let Node::Quant(_, vs, _) | Node::Lambda(vs, _) = tm.node(t) {
            inner_bound.extend(vs.iter().copied());
        }
    }
    // Which of the binder's variables, and which inner-bound ones, each mentions.
    let mut mentions_own: HashMap<TermId, bool> = HashMap::default();
    let mut mentions_inner: HashMap<TermId, bool> = HashMap::default();
    for &t in &order {
        let node = tm.node(t);
        let (own, inner) = match node {
            Node::Var(v) => (vars.contains(v), inner_bound.contains(v)),
            // A nested binder's body mentions its own variables: that is inside.
            Node::Quant(..) | Node::Lambda(..) => (false, true),
            _ => {
                let kids = tm.children(node);
                (
                    kids.iter()
                        .any(|k| mentions_own.get(k).copied().unwrap_or(false)),
                    kids.iter()
                        .any(|k| mentions_inner.get(k).copied().unwrap_or(false)),
                )
            }
        };
        mentions_own.insert(t, own);
        mentions_inner.insert(t, inner);
    }
    order
        .into_iter()
        .filter(|t| {
            t != &body
                && refs.get(t).copied().unwrap_or(0) > 1
                && mentions_own[t]
                && !mentions_inner[t]
                && !matches!(
                    tm.node(*t),
                    Node::Int(_) | Node::Bool(_) | Node::Star | Node::Var(_)
                )
                && (min_size <= 2 || tm.dag_size(&[*t]) >= min_size)
        })
        .collect()
}

/// Readable infix printing: `i₀ + κ1 < n₀ ∧ A₀(i₀ + κ1) = 1`.
pub struct Printer<'a> {
    terms: &'a Terms,
    /// Shared subterms printed by name.
    names: HashMap<TermId, String>,
}

impl<'a> Printer<'a> {
    pub fn new(terms: &'a Terms) -> Printer<'a> {
        Printer {
            terms,
            names: HashMap::default(),
        }
    }

    /// Prints `roots` with every shared subterm named once:
    /// `(definitions, printed roots)`.
    pub fn with_sharing(
        terms: &'a Terms,
        roots: &[TermId],
    ) -> (Vec<(String, String)>, Vec<String>) {
        let mut p = Printer::new(terms);
        let mut defs = Vec::new();
        for (i, t) in shared_subterms(terms, roots).into_iter().enumerate() {
            let body = p.term(t);
            let name = format!("s{}", i + 1);
            defs.push((name.clone(), body));
            p.names.insert(t, name);
        }
        let printed = roots.iter().map(|r| p.top(*r)).collect();
        (defs, printed)
    }

    /// A root: printed in full even when it is shared.
    fn top(&self, t: TermId) -> String {
        match self.names.get(&t) {
            Some(_) => {
                let mut p = Printer {
                    terms: self.terms,
                    names: self.names.clone(),
                };
                p.names.remove(&t);
                p.term(t)
            }
            None => self.term(t),
        }
    }

    fn prec(&self, t: TermId) -> u8 {
        match self.terms.node(t) {
            Node::Quant(..) => 0,
            Node::Or(_) => 1,
            Node::And(_) => 2,
            Node::Not(_) => 3,
            Node::Eq(..) | Node::Le(..) => 4,
            Node::Add(..) => 5,
            Node::Mul(..) | Node::Div(..) => 6,
            _ => 9,
        }
    }

    fn wrap(&self, t: TermId, min: u8) -> String {
        let s = self.term(t);
        if self.prec(t) < min {
            format!("({s})")
        } else {
            s
        }
    }

    /// `d op 0` printed with positive summands on the left and negative ones
    /// on the right (`flip` swaps the sides: ¬(d ≤ 0) is `-d < 0`, i.e. right < left).
    fn relation(&self, a: TermId, b: TermId, op: &str, flip: bool) -> String {
        let tm = self.terms;
        let is_zero = |t: TermId| matches!(tm.node(t), Node::Int(n) if n.is_zero());
        if !is_zero(b) || tm.sort(a) != Sort::Int {
            let (l, r) = (self.wrap(a, 5), self.wrap(b, 5));
            return if flip {
                format!("{r} {op} {l}")
            } else {
                format!("{l} {op} {r}")
            };
        }
        let (c, xs) = tm.linear(a);
        let side = |pos: bool| -> String {
            let mut parts: Vec<String> = Vec::new();
            for (k, x) in &xs {
                if k.is_positive() == pos {
                    let m = k.abs();
                    let t = if m.is_one() {
                        self.wrap(*x, 6)
                    } else {
                        format!("{m}·{}", self.wrap(*x, 7))
                    };
                    parts.push(t);
                }
            }
            if !c.is_zero() && c.is_positive() == pos {
                parts.push(c.abs().to_string());
            }
            if parts.is_empty() {
                "0".to_string()
            } else {
                parts.join(" + ")
            }
        };
        let (l, r) = (side(true), side(false));
        if flip {
            format!("{r} {op} {l}")
        } else {
            format!("{l} {op} {r}")
        }
    }

    pub fn term(&self, t: TermId) -> String {
        if let Some(n) = self.names.get(&t) {
            return n.clone();
        }
        let tm = self.terms;
        match tm.node(t) {
            Node::Int(n) => n.to_string(),
            Node::Bool(b) => if *b { "true" } else { "false" }.to_string(),
            Node::Star => "⋆".into(),
            Node::Var(v) => tm.var_name(*v).to_string(),
            Node::Add(c, xs) => {
                let mut s = String::new();
                for (i, (k, x)) in xs.iter().enumerate() {
                    let neg = k.is_negative();
                    let mag = k.abs();
                    if i == 0 {
                        if neg {
                            s.push('-');
                        }
                    } else {
                        s.push_str(if neg { " - " } else { " + " });
                    }
                    if !mag.is_one() {
                        let _ = write!(s, "{mag}·");
                        s.push_str(&self.wrap(*x, 7));
                    } else {
                        s.push_str(&self.wrap(*x, 6));
                    }
                }
                if !c.is_zero() {
                    let _ = write!(
                        s,
                        " {} {}",
                        if c.is_negative() { "-" } else { "+" },
                        c.abs()
                    );
                }
                s
            }
            Node::Mul(a, b) => format!("{}·{}", self.wrap(*a, 6), self.wrap(*b, 7)),
            Node::Div(a, b) => format!("{} / {}", self.wrap(*a, 6), self.wrap(*b, 7)),
            Node::Max(a, b) => format!("max({}, {})", self.term(*a), self.term(*b)),
            Node::Ite(c, a, b) => format!(
                "ite({}, {}, {})",
                self.term(*c),
                self.term(*a),
                self.term(*b)
            ),
            Node::Eq(a, b) => self.relation(*a, *b, "=", false),
            Node::Le(a, b) => self.relation(*a, *b, "≤", false),
            Node::Not(a) => match tm.node(*a) {
                Node::Eq(x, y) => self.relation(*x, *y, "≠", false),
                Node::Le(x, y) => self.relation(*x, *y, "<", true),
                _ => format!("¬{}", self.wrap(*a, 4)),
            },
            Node::And(xs) => xs
                .iter()
                .map(|x| self.wrap(*x, 3))
                .collect::<Vec<_>>()
                .join(" ∧ "),
            Node::Or(xs) => {
                // `¬a ∨ b` reads better as `a → b`.
                let negated: Vec<usize> = (0..xs.len())
                    .filter(|i| matches!(tm.node(xs[*i]), Node::Not(_)))
                    .collect();
                if let [i] = negated[..]
                    && xs.len() > 1
                    && let Node::Not(a) = tm.node(xs[i])
                {
                    let rest: Vec<String> = xs
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i)
                        .map(|(_, x)| self.wrap(*x, 2))
                        .collect();
                    let rest = if rest.len() > 1 {
                        format!("({})", rest.join(" ∨ "))
                    } else {
                        rest.join("")
                    };
                    format!("{} → {rest}", self.wrap(*a, 2))
                } else {
                    xs.iter()
                        .map(|x| self.wrap(*x, 2))
                        .collect::<Vec<_>>()
                        .join(" ∨ ")
                }
            }
            Node::Select(a, xs) => {
                let args: Vec<String> = xs.iter().map(|x| self.term(*x)).collect();
                format!("{}({})", self.wrap(*a, 9), args.join(", "))
            }
            Node::Lambda(ps, b) => {
                let ps: Vec<&str> = ps.iter().map(|p| tm.var_name(*p)).collect();
                format!("λ{}. {}", ps.join(","), self.term(*b))
            }
            Node::Quant(q, vs, b) => {
                let vs: Vec<&str> = vs.iter().map(|p| tm.var_name(*p)).collect();
                let q = if *q == Quantifier::Forall {
                    "∀"
                } else {
                    "∃"
                };
                let Node::Quant(_, bound, _) = tm.node(t) else {
                    unreachable!("matched above")
                };
                let mut inner = Printer {
                    terms: tm,
                    names: self.names.clone(),
                };
                let mut lets = Vec::new();
                // Only sizeable subterms: naming `0 ≤ τ1` would hurt reading.
                for c in scoped_shared(tm, *b, bound, &self.names, 12) {
                    let e = inner.term(c);
                    let name = format!("l{}", c.0);
                    lets.push(format!("let {name} = {e} in "));
                    inner.names.insert(c, name);
                }
                format!("{q}{}. {}{}", vs.join(","), lets.concat(), inner.term(*b))
            }
        }
    }
}

/// An n-ary connective, with SMT-LIB's arity rules (cvc5 rejects
/// `(and x)`).
fn nary(op: &str, unit: &str, mut parts: Vec<String>) -> String {
    match parts.len() {
        0 => unit.into(),
        1 => parts.pop().unwrap_or_default(),
        _ => format!("({op} {})", parts.join(" ")),
    }
}

/// An SMT-LIB identifier for a variable: its name made safe, plus its id.
pub fn smt_name(terms: &Terms, v: Var) -> String {
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

/// C's truncating division (SMT-LIB's `div` rounds towards −∞ for a
/// positive divisor).
const TDIV: &str = "(define-fun tdiv ((a Int) (b Int)) Int (ite (= (>= a 0) (> b 0)) (div (abs a) (abs b)) (- (div (abs a) (abs b)))))\n";

/// A script that checks each root on its own: shared declarations, then
/// `(push 1) (assert r) (check-sat) (pop 1)` per root.
pub fn to_smtlib_batch(terms: &Terms, roots: &[TermId]) -> String {
    let mut out = header(terms, roots);
    for r in roots {
        let _ = writeln!(
            out,
            "(push 1)\n(assert {})\n(check-sat)\n(pop 1)",
            smt_rec(terms, *r, &HashMap::default())
        );
    }
    out
}

/// The logic, `tdiv` if some root divides, and the roots' free variables.
fn header(terms: &Terms, roots: &[TermId]) -> String {
    let mut out = String::from("(set-logic ALL)\n");
    // Only when needed: an unused definition with `div` changes Z3's
    // strategy (it answered `unknown` on the Alg. 8 queries with it).
    if roots.iter().any(|r| mentions_div(terms, *r)) {
        out.push_str(TDIV);
    }
    let mut free: BTreeSet<Var> = BTreeSet::new();
    for r in roots {
        free.extend(terms.free_vars(*r));
    }
    declare(terms, &free, &mut out);
    out
}

fn declare(terms: &Terms, free: &BTreeSet<Var>, out: &mut String) {
    for v in free {
        let name = smt_name(terms, *v);
        match Terms::var_sort(*v) {
            Sort::Int => {
                let _ = writeln!(out, "(declare-fun {name} () Int)");
                if v.kind == VarKind::Counter {
                    let _ = writeln!(out, "(assert (>= {name} 0))");
                }
            }
            Sort::Bool => {
                let _ = writeln!(out, "(declare-fun {name} () Bool)");
            }
            Sort::Array(n) => {
                let args = vec!["Int"; n as usize].join(" ");
                let _ = writeln!(out, "(declare-fun {name} ({args}) Int)");
            }
        }
    }
}

/// A self-contained SMT-LIB script asserting all `roots` (Boolean terms):
/// declarations of every free variable, the truncating-division helper,
/// `(check-sat)`. Counters and iteration variables get `(>= v 0)`.
pub fn to_smtlib(terms: &Terms, roots: &[TermId]) -> String {
    let mut out = smtlib_query(terms, roots);
    out.push_str("(check-sat)\n");
    out
}

/// `to_smtlib` without the `(check-sat)`: the query that options go before
/// and blocking assertions after.
pub fn smtlib_query(terms: &Terms, roots: &[TermId]) -> String {
    let mut out = header(terms, roots);
    // Shared closed subterms become definitions, so the script stays
    // linear in the size of the DAG.
    let mut names: HashMap<TermId, String> = HashMap::default();
    for (i, t) in shared_subterms(terms, roots).into_iter().enumerate() {
        let sort = match terms.sort(t) {
            Sort::Int => "Int".to_string(),
            Sort::Bool => "Bool".to_string(),
            Sort::Array(_) => continue, // λ-terms are never printed whole
        };
        let body = smt_rec(terms, t, &names);
        let name = format!("s!{}", i + 1);
        let _ = writeln!(out, "(define-fun {name} () {sort} {body})");
        names.insert(t, name);
    }
    for r in roots {
        let _ = writeln!(out, "(assert {})", smt_rec(terms, *r, &names));
    }
    out
}

fn smt_rec(tm: &Terms, t: TermId, names: &HashMap<TermId, String>) -> String {
    if let Some(n) = names.get(&t) {
        return n.clone();
    }
    let seen = names;
    let r = |x: &TermId, seen: &HashMap<TermId, String>| smt_rec(tm, *x, seen);
    match tm.node(t) {
        Node::Int(n) => smt_int(n),
        Node::Bool(b) => b.to_string(),
        Node::Star => "0".into(), // never printed: ⋆ is removed before emission
        Node::Var(v) => smt_name(tm, *v),
        Node::Add(c, xs) => {
            let mut parts: Vec<String> = xs
                .iter()
                .map(|(k, x)| {
                    if k.is_one() {
                        r(x, seen)
                    } else {
                        format!("(* {} {})", smt_int(k), r(x, seen))
                    }
                })
                .collect();
            if !c.is_zero() {
                parts.push(smt_int(c));
            }
            // SMT-LIB's `+` takes at least two arguments (cvc5 insists).
            nary("+", "0", parts)
        }
        Node::Mul(a, b) => format!("(* {} {})", r(a, seen), r(b, seen)),
        Node::Div(a, b) => format!("(tdiv {} {})", r(a, seen), r(b, seen)),
        Node::Max(a, b) => {
            let (x, y) = (r(a, seen), r(b, seen));
            format!("(ite (>= {x} {y}) {x} {y})")
        }
        Node::Ite(c, a, b) => format!("(ite {} {} {})", r(c, seen), r(a, seen), r(b, seen)),
        Node::Eq(a, b) => format!("(= {} {})", r(a, seen), r(b, seen)),
        Node::Le(a, b) => format!("(<= {} {})", r(a, seen), r(b, seen)),
        Node::Not(a) => format!("(not {})", r(a, seen)),
        Node::And(xs) => nary("and", "true", xs.iter().map(|x| r(x, seen)).collect()),
        Node::Or(xs) => nary("or", "false", xs.iter().map(|x| r(x, seen)).collect()),
        Node::Select(a, xs) => {
            let args: Vec<String> = xs.iter().map(|x| r(x, seen)).collect();
            format!("({} {})", r(a, seen), args.join(" "))
        }
        Node::Lambda(..) => "(_ lambda-not-applied)".into(),
        Node::Quant(q, vs, b) => {
            let decls: Vec<String> = vs
                .iter()
                .map(|v| {
                    let sort = if Terms::var_sort(*v) == Sort::Bool {
                        "Bool"
                    } else {
                        "Int"
                    };
                    format!("({} {sort})", smt_name(tm, *v))
                })
                .collect();
            let q = if *q == Quantifier::Forall {
                "forall"
            } else {
                "exists"
            };
            // Subterms shared inside the binder are `let`-bound here, so the
            // script stays linear in the DAG under quantifiers too.
            let mut local = seen.clone();
            let mut lets = Vec::new();
            for c in scoped_shared(tm, *b, vs, seen, 2) {
                let e = smt_rec(tm, c, &local);
                let name = format!("l!{}", c.0);
                lets.push((name.clone(), e));
                local.insert(c, name);
            }
            let mut inner = smt_rec(tm, *b, &local);
            for (n, e) in lets.iter().rev() {
                inner = format!("(let (({n} {e})) {inner})");
            }
            format!("({q} ({}) {inner})", decls.join(" "))
        }
    }
}

/// An integer literal in SMT-LIB (`(- 5)` for negatives).
pub fn smt_int(n: &BigInt) -> String {
    if n.is_negative() {
        format!("(- {})", n.abs())
    } else {
        n.to_string()
    }
}

fn mentions_div(terms: &Terms, t: TermId) -> bool {
    terms.any_node(t, |n| matches!(n, Node::Div(..)))
}
