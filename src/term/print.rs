//! Printing terms in a readable infix form (for `apc nc` and snapshots),
//! and which subterms a printer should name so that its output stays
//! linear in the DAG (the SMT-LIB printer in `smt` uses them too).

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
        // A query's build stops with its race (φ̂^25 is large).
        crate::deadline::tick();
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
        crate::deadline::tick();
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
pub fn scoped_shared<V>(
    tm: &Terms,
    body: TermId,
    vars: &[Var],
    named: &HashMap<TermId, V>,
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
