//! Bringing a cached summary (computed in a term store of its own by the
//! `loop_summary` query) into an engine's store.
//!
//! Its counters and selectors get new numbers, from this engine's
//! sequence, so that the summaries of different loops never share a name;
//! the bound variables that range alongside them (τn with κn, ℓn′ with ℓn)
//! follow their number. The pairing is the term store's data
//! (`Terms::numbered`), never read from the printed names.

use super::Summary;
use crate::nc::Engine;
use crate::nc::Portable;
use crate::nc::state::State;
use crate::term::{Node, TermId, Terms, Var, VarKind};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// `p`'s summary with its terms in `eng`'s store.
pub(in crate::nc) fn import(eng: &mut Engine, p: &Portable<Summary>) -> Summary {
    let sum = &p.value;
    let roots = Roots::of(&p.terms, sum);
    let renumber = renumbering(eng, &p.terms, &roots.all);
    let imported = eng
        .terms
        .import(&p.terms, &roots.all, &mut |terms, v, name| {
            rename(&p.terms, terms, v, name, &renumber)
        });
    roots.read_back(&eng.terms, sum, imported)
}

/// New numbers for the summary's counters and selectors, in the order of
/// their ids, from the engine's sequence (which moves past them).
fn renumbering(eng: &mut Engine, src: &Terms, roots: &[TermId]) -> HashMap<u32, u32> {
    let mut renumber = HashMap::default();
    for v in all_vars(src, roots) {
        if v.kind == VarKind::Counter
            && let Some((_, old)) = src.numbered(v)
        {
            renumber.insert(old, eng.next_counter);
            eng.next_counter += 1;
        }
    }
    renumber
}

/// A variable's counterpart in the engine's store.
fn rename(src: &Terms, terms: &mut Terms, v: Var, name: &str, renumber: &HashMap<u32, u32>) -> Var {
    if v.kind == VarKind::FreshBool {
        let t = terms.fresh_bool();
        return match terms.node(t) {
            Node::Var(v) => *v,
            _ => unreachable!("a fresh Boolean is a variable"),
        };
    }
    match src.numbered(v) {
        // A bound variable whose counter is not in the summary (an inner
        // loop's, renamed when it was applied) keeps its number.
        Some((what, n)) => terms.new_numbered(what, renumber.get(&n).copied().unwrap_or(n)),
        None => terms.new_var(v.kind, name),
    }
}

/// The summary's terms as one list of roots (what `Terms::import` takes)
/// and how to read them back: θ's values, φ^κ, the γ, the inferred
/// relations, then the counters, τ and selectors that occur as terms.
pub(in crate::nc) struct Roots {
    pub all: Vec<TermId>,
    /// Which counters, τ and selectors are among the roots (a variable
    /// that never became a term is not).
    counters: Vec<bool>,
    taus: Vec<bool>,
    selectors: Vec<bool>,
}

impl Roots {
    pub fn of(terms: &Terms, sum: &Summary) -> Roots {
        let mut all: Vec<TermId> = sum.theta.values.values().copied().collect();
        all.push(sum.looping);
        all.extend(sum.gammas.iter().copied());
        all.extend(sum.inferred.iter().map(|(_, t)| *t));
        let mut present = |vs: &[Var]| -> Vec<bool> {
            vs.iter()
                .map(|v| {
                    let t = terms.var_const(*v);
                    let here = t.0 != u32::MAX;
                    if here {
                        all.push(t);
                    }
                    here
                })
                .collect()
        };
        let counters = present(&sum.counters);
        let taus = present(&sum.taus);
        let selectors = present(&sum.selectors);
        Roots {
            all,
            counters,
            taus,
            selectors,
        }
    }

    pub fn read_back(&self, terms: &Terms, sum: &Summary, imported: Vec<TermId>) -> Summary {
        let mut it = imported.into_iter();
        let mut theta = State {
            values: BTreeMap::new(),
        };
        for slot in sum.theta.values.keys() {
            theta.values.insert(*slot, it.next().expect("one per root"));
        }
        let looping = it.next().expect("looping");
        let gammas: Vec<TermId> = (0..sum.gammas.len())
            .map(|_| it.next().expect("gamma"))
            .collect();
        let inferred: Vec<(crate::ir::LoopId, TermId)> = sum
            .inferred
            .iter()
            .map(|(l, _)| (*l, it.next().expect("relation")))
            .collect();
        let mut vars = |present: &[bool]| -> Vec<Var> {
            present
                .iter()
                .filter(|p| **p)
                .map(|_| match terms.node(it.next().expect("variable")) {
                    Node::Var(v) => *v,
                    _ => unreachable!("a variable imports as a variable"),
                })
                .collect()
        };
        let counters = vars(&self.counters);
        let taus = vars(&self.taus);
        let selectors = vars(&self.selectors);
        Summary {
            counters,
            selectors,
            theta,
            looping,
            taus,
            gammas,
            inferred,
            unknown: sum.unknown.clone(),
            backbones: sum.backbones,
            notes: sum.notes.clone(),
            stats: sum.stats.clone(),
        }
    }
}

/// Every variable occurring in the terms (free or bound), sorted.
fn all_vars(terms: &Terms, roots: &[TermId]) -> Vec<Var> {
    let mut out = std::collections::BTreeSet::new();
    for t in terms.post_order(roots) {
        match terms.node(t) {
            Node::Var(v) => {
                out.insert(*v);
            }
            Node::Lambda(vs, _) | Node::Quant(_, vs, _) => out.extend(vs.iter().copied()),
            _ => {}
        }
    }
    out.into_iter().collect()
}
