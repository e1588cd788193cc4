//! φ̂^K: the quantifier-free weakening of ISSTA §4.
//!
//! Every ∀ (they all come from looping conditions ∀τᵢ (0 ≤ τᵢ < κᵢ → ρ))
//! is replaced by its instances τᵢ = 0 … K, i.e. ⋀ (τᵢ < κᵢ → ρ(τᵢ)); the
//! counters stay unbounded (bounding κ ≤ K would be unsound). Existentials
//! in positive position become fresh constants, a fresh copy per unfolded
//! instance; nested quantifiers unfold recursively. A quantified formula in
//! a position of both polarities (an `ite` condition) is named by a fresh
//! Boolean b with b → W(Q) and ¬b → W(¬Q). Every step weakens, so φ̂^K stays
//! necessary: φ̂ ⊨ φ̂^K.

use crate::term::{Node, Quantifier, Subst, TermId, Terms, Var, VarKind};
use rustc_hash::FxHashMap as HashMap;

/// Most instances one quantifier is unfolded into.
const MAX_INSTANCES: u64 = 1024;

/// Most terms an unfolding may add to the store: past it, φ̂^K is too
/// large to be worth sending (and `--k 4294967295` would otherwise ask for
/// 100 GB).
pub const MAX_UNFOLDED_TERMS: usize = 1_000_000;

/// φ̂^K would need more than [`MAX_UNFOLDED_TERMS`] new terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLarge;

/// φ̂^K of `phi`, or `TooLarge`.
pub fn unfold(terms: &mut Terms, phi: TermId, k: u32) -> Result<TermId, TooLarge> {
    let mut u = Unfolder {
        k,
        memo: HashMap::default(),
        has_quant: HashMap::default(),
        side: Vec::new(),
        names: HashMap::default(),
        fresh: 1,
        budget: terms.len() + MAX_UNFOLDED_TERMS,
    };
    let main = u.weaken(terms, phi, true)?;
    let mut all = vec![main];
    all.append(&mut u.side);
    Ok(terms.and(all))
}

/// `t ∧ κ ≤ bound` for every free path counter κ of `t`: a
/// *strengthening*, not a weakening. It is a witness search only — its
/// models are ordinary inputs that the interpreter replays, but its `unsat`
/// proves nothing (a run may iterate more often). Why bother: bounded
/// counters let the solver settle the unfolded instances τ < κ at once,
/// where φ̂^K leaves κ free and Z3 wanders (HWM: φ̂^14 gives models that
/// run past the unfolded iterations; φ̂^14 ∧ κ ≤ 14 a replayable one).
pub fn bound_counters(terms: &mut Terms, t: TermId, bound: u32) -> TermId {
    let limit = terms.int(bound as i64);
    let mut parts = vec![t];
    for v in terms.free_vars(t) {
        if v.kind == VarKind::Counter {
            let kt = terms.var(v);
            parts.push(terms.le(kt, limit));
        }
    }
    terms.and(parts)
}

struct Unfolder {
    k: u32,
    memo: HashMap<(TermId, bool), TermId>,
    has_quant: HashMap<TermId, bool>,
    side: Vec<TermId>,
    names: HashMap<TermId, TermId>,
    /// Numbers the fresh constants, for readable names.
    fresh: u32,
    /// The store's size past which the unfolding stops.
    budget: usize,
}

impl Unfolder {
    fn quantified(&mut self, terms: &Terms, t: TermId) -> bool {
        if let Some(&b) = self.has_quant.get(&t) {
            return b;
        }
        let node = terms.node(t);
        let b = matches!(node, Node::Quant(..))
            || terms
                .children(node)
                .into_iter()
                .any(|c| self.quantified(terms, c));
        self.has_quant.insert(t, b);
        b
    }

    /// A quantifier-free formula implied by `t` (positive) or by `¬t`.
    fn weaken(&mut self, terms: &mut Terms, t: TermId, positive: bool) -> Result<TermId, TooLarge> {
        if !self.quantified(terms, t) {
            return Ok(if positive { t } else { terms.not(t) });
        }
        if let Some(&r) = self.memo.get(&(t, positive)) {
            return Ok(r);
        }
        crate::deadline::tick();
        if terms.len() > self.budget {
            return Err(TooLarge);
        }
        let node = terms.node(t).clone();
        let r = match node {
            Node::And(xs) | Node::Or(xs) => {
                let is_and = matches!(terms.node(t), Node::And(_));
                let parts: Vec<TermId> = xs
                    .iter()
                    .map(|x| self.weaken(terms, *x, positive))
                    .collect::<Result<_, _>>()?;
                // ¬(a ∧ b) = ¬a ∨ ¬b and ¬(a ∨ b) = ¬a ∧ ¬b.
                if is_and == positive {
                    terms.and(parts)
                } else {
                    terms.or(parts)
                }
            }
            Node::Not(x) => self.weaken(terms, x, !positive)?,
            Node::Quant(q, vars, body) => {
                // ∀ under positive polarity (or ∃ under negative) is a conjunction of instances.
                let universal = (q == Quantifier::Forall) == positive;
                if universal {
                    let parts = self.instances(terms, &vars, body, positive)?;
                    terms.and(parts)
                } else {
                    let mut s = Subst::new();
                    for v in vars.iter() {
                        // A fresh constant per unfolded instance: `τ2@7`.
                        let name = format!("{}@{}", terms.var_name(*v), self.fresh);
                        self.fresh += 1;
                        let c = terms.new_var(VarKind::Fresh, name);
                        let ct = terms.var(c);
                        s.bind(*v, ct);
                    }
                    let inst = s.apply(terms, body);
                    self.weaken(terms, inst, positive)?
                }
            }
            _ => {
                // Mixed polarity: name each quantified child by a fresh Boolean.
                let kids = terms.children(&node);
                let new: Vec<TermId> = kids
                    .iter()
                    .map(|c| self.name(terms, *c))
                    .collect::<Result<_, _>>()?;
                let r = crate::term::rebuild_public(terms, &node, &new);
                if positive { r } else { terms.not(r) }
            }
        };
        self.memo.insert((t, positive), r);
        Ok(r)
    }

    /// Instances of `body` with the variables set to 0 … K, weakened. Any
    /// set of instances is a weakening; when (K+1)ⁿ is too many (a negated
    /// ∃ over all the other counters of a loop), only the diagonal ones
    /// (every variable = k, for k = 0 … K) are taken.
    fn instances(
        &mut self,
        terms: &mut Terms,
        vars: &[Var],
        body: TermId,
        positive: bool,
    ) -> Result<Vec<TermId>, TooLarge> {
        let k = self.k as u64;
        let n = vars.len() as u32;
        let full = (k + 1).checked_pow(n).filter(|all| *all <= MAX_INSTANCES);
        // The assignments are enumerated, never built: (K+1)ⁿ of them for
        // the full set (at most MAX_INSTANCES), K+1 diagonal ones else.
        let count = full.unwrap_or(k + 1);
        let mut out = Vec::new();
        for i in 0..count {
            // The i-th assignment in lexicographic order (the first
            // variable most significant), or the i-th diagonal one.
            let mut values = vec![i; vars.len()];
            if full.is_some() {
                let mut rest = i;
                for value in values.iter_mut().rev() {
                    *value = rest % (k + 1);
                    rest /= k + 1;
                }
            }
            let mut s = Subst::new();
            for (v, value) in vars.iter().zip(values) {
                let kt = terms.int(value as i64);
                s.bind(*v, kt);
            }
            let inst = s.apply(terms, body);
            out.push(self.weaken(terms, inst, positive)?);
        }
        Ok(out)
    }

    /// A child of a mixed-polarity node: itself if quantifier-free, else a
    /// fresh Boolean b with b → W(t) and ¬b → W(¬t) (or, for integer terms,
    /// the child with its own quantified parts named).
    fn name(&mut self, terms: &mut Terms, t: TermId) -> Result<TermId, TooLarge> {
        if !self.quantified(terms, t) {
            return Ok(t);
        }
        if let Some(&b) = self.names.get(&t) {
            return Ok(b);
        }
        let r = if terms.sort(t) == crate::term::Sort::Bool {
            // Not a ⋆ predicate (`fresh_bool`): an integer `ite` on a ⋆
            // predicate collapses to ⋆, which lost every array value
            // chosen by a quantified condition (TR Table 2's ∃p form).
            let v = terms.new_var(VarKind::Proposition, format!("b{}", self.fresh));
            self.fresh += 1;
            let b = terms.var(v);
            let pos = self.weaken(terms, t, true)?;
            let neg = self.weaken(terms, t, false)?;
            let i1 = terms.implies(b, pos);
            let nb = terms.not(b);
            let i2 = terms.implies(nb, neg);
            self.side.push(i1);
            self.side.push(i2);
            b
        } else {
            let node = terms.node(t).clone();
            let kids = terms.children(&node);
            let new: Vec<TermId> = kids
                .iter()
                .map(|c| self.name(terms, *c))
                .collect::<Result<_, _>>()?;
            crate::term::rebuild_public(terms, &node, &new)
        };
        self.names.insert(t, r);
        Ok(r)
    }
}
