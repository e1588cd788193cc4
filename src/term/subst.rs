//! Simultaneous substitution of variables by terms, rebuilding with the
//! smart constructors (so the result is normalised again: constants fold,
//! λ-reads β-reduce, ⋆ spreads). Memoised over the DAG and iterative, so
//! long shared chains neither blow up nor overflow the stack.

use super::*;

#[derive(Clone, Debug, Default)]
pub struct Subst {
    map: HashMap<Var, TermId>,
}

impl Subst {
    pub fn new() -> Subst {
        Subst::default()
    }
    pub fn bind(&mut self, v: Var, t: TermId) {
        self.map.insert(v, t);
    }

    /// θ⟨t⟩: replaces every mapped variable in `t`, all at once.
    pub fn apply(&self, terms: &mut Terms, t: TermId) -> TermId {
        if self.map.is_empty() {
            return t;
        }
        let mut memo: HashMap<TermId, TermId> = HashMap::default();
        self.apply_memo(terms, t, &mut memo)
    }

    /// [`Subst::apply`] with a memo shared across calls (terms already
    /// rewritten are looked up, not walked again).
    pub fn apply_memo(
        &self,
        terms: &mut Terms,
        root: TermId,
        memo: &mut HashMap<TermId, TermId>,
    ) -> TermId {
        rewrite(terms, root, memo, &|v| self.map.get(&v).copied(), false)
    }
}

impl Terms {
    /// Replaces subterms by `memo`'s values: `memo` starts as the
    /// replacement map (a replaced term is not entered) and remembers every
    /// node rewritten, so shared subterms are visited once. Children are
    /// rebuilt left to right.
    pub fn replace_subterms(&mut self, t: TermId, memo: &mut HashMap<TermId, TermId>) -> TermId {
        rewrite(self, t, memo, &|_| None, true)
    }

    /// `t` without the `∃` that occur positively (and the `∀` that occur
    /// negatively) outside other binders and `ite` conditions: their
    /// integer and Boolean variables become fresh constants. The result is
    /// satisfiable exactly when `t` is, and its models are models of `t`
    /// (the constants are the witnesses), so a quantifier-free result can
    /// go to the solver's quantifier-free configuration.
    pub fn skolemize(&mut self, t: TermId) -> TermId {
        self.skolemize_at(t, true, &mut HashMap::default())
    }

    fn skolemize_at(
        &mut self,
        t: TermId,
        positive: bool,
        memo: &mut HashMap<(TermId, bool), TermId>,
    ) -> TermId {
        if let Some(r) = memo.get(&(t, positive)) {
            return *r;
        }
        let node = self.node(t).clone();
        let r = match &node {
            Node::Not(a) => {
                let a = self.skolemize_at(*a, !positive, memo);
                rebuild(self, &node, &[a])
            }
            Node::And(xs) | Node::Or(xs) => {
                let ys: Vec<TermId> = xs
                    .iter()
                    .map(|x| self.skolemize_at(*x, positive, memo))
                    .collect();
                rebuild(self, &node, &ys)
            }
            Node::Quant(q, vars, body) if (*q == Quantifier::Exists) == positive => {
                match self.witnesses(vars) {
                    Some(s) => {
                        let body = s.apply(self, *body);
                        self.skolemize_at(body, positive, memo)
                    }
                    None => t,
                }
            }
            _ => t,
        };
        memo.insert((t, positive), r);
        r
    }

    /// Fresh constants for `vars` (`None` if one is an array).
    fn witnesses(&mut self, vars: &[Var]) -> Option<Subst> {
        let mut s = Subst::new();
        for v in vars {
            let kind = match Terms::var_sort(*v) {
                Sort::Int => VarKind::Fresh,
                Sort::Bool => VarKind::FreshBool,
                Sort::Array(_) => return None,
            };
            let c = self.new_var(kind, "sk");
            let c = self.var(c);
            s.bind(*v, c);
        }
        Some(s)
    }
}

/// Rewrites `root` bottom up, iteratively (conditions can be deep), each
/// node once: a term in `memo` stands for its value there and is not
/// entered; a variable becomes `var`'s term for it, if any; any other node
/// is rebuilt from its rewritten children through the smart constructors,
/// or kept when none changed. `left_to_right` is the order in which
/// children are rewritten, and so the order of the terms it creates.
fn rewrite(
    terms: &mut Terms,
    root: TermId,
    memo: &mut HashMap<TermId, TermId>,
    var: &dyn Fn(Var) -> Option<TermId>,
    left_to_right: bool,
) -> TermId {
    let mut stack = vec![(root, false)];
    while let Some((t, expanded)) = stack.pop() {
        if memo.contains_key(&t) {
            continue;
        }
        crate::deadline::tick();
        let node = terms.node(t).clone();
        if let Node::Var(v) = node {
            memo.insert(t, var(v).unwrap_or(t));
            continue;
        }
        let kids = terms.children(&node);
        if !expanded {
            stack.push((t, true));
            if left_to_right {
                stack.extend(kids.iter().rev().map(|k| (*k, false)));
            } else {
                stack.extend(kids.iter().map(|k| (*k, false)));
            }
            continue;
        }
        let new: Vec<TermId> = kids.iter().map(|k| memo[k]).collect();
        let r = if new == kids {
            t
        } else {
            rebuild(terms, &node, &new)
        };
        memo.insert(t, r);
    }
    memo[&root]
}

/// Rebuilds a node with new children through the smart constructors.
pub(crate) fn rebuild(terms: &mut Terms, node: &Node, c: &[TermId]) -> TermId {
    match node {
        Node::Int(_) | Node::Bool(_) | Node::Star | Node::Var(_) => {
            unreachable!("leaves have no children")
        }
        Node::Add(k, xs) => {
            let summands = xs
                .iter()
                .zip(c)
                .map(|((coef, _), t)| (coef.clone(), *t))
                .collect();
            terms.sum(k.clone(), summands)
        }
        Node::Mul(..) => terms.mul(c[0], c[1]),
        Node::Div(..) => terms.div(c[0], c[1]),
        Node::Max(..) => terms.max(c[0], c[1]),
        Node::Ite(..) => terms.ite(c[0], c[1], c[2]),
        Node::Eq(..) => terms.eq(c[0], c[1]),
        Node::Le(..) => terms.le(c[0], c[1]),
        Node::Not(_) => terms.not(c[0]),
        Node::And(_) => terms.and(c.to_vec()),
        Node::Or(_) => terms.or(c.to_vec()),
        Node::Select(..) => terms.select(c[0], c[1..].to_vec()),
        Node::Lambda(ps, _) => terms.lambda(ps.to_vec(), c[0]),
        Node::Quant(q, vs, _) => terms.quant(*q, vs.to_vec(), c[0]),
    }
}
