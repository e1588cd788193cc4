//! Loop summaries (TR Algs. 4–8, ISSTA §3.3–3.4), computed in phases:
//!
//! 1. `backbones`: execute every backbone πᵢ of the loop body (the induced
//!    program P(C, h): one kind of iteration each) from the general state,
//!    giving (θᵢ, pcᵢ), and prune the infeasible ones;
//! 2. give πᵢ a path counter κᵢ;
//! 3. `fixpoint`: the iterated state θ^κ as a least fixpoint of the ISSTA
//!    rules and TR Table 1 (`arrays`: Table 2 for arrays), with the inner
//!    loops' counts ν inferred by TR Alg. 8 (`inference`);
//! 4. `looping`: the looping condition
//!    φ^κ ≡ ⋀ᵢ ∀τᵢ (0 ≤ τᵢ < κᵢ → ∃τ⃗₋ᵢ (0⃗ ≤ τ⃗₋ᵢ ≤ κ⃗₋ᵢ ∧ ∃κ⃗′ ≥ 0. θ^κ[κ⃗/τ⃗]⟨pcᵢ⟩)).
//!
//! `import` brings a summary cached by the database into an engine.

mod arrays;
mod backbones;
mod fixpoint;
mod import;
mod inference;
mod looping;

pub(super) use import::{Roots, import};

use super::state::{Slot, State};
use super::{Engine, Stats};
use crate::ir::LoopId;
use crate::term::{Numbered, TermId, Terms, Var, VarKind};
use fixpoint::sigma_subst;
use looping::{AtIteration, at_fresh_taus};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct Summary {
    /// κ₁ … κₙ, one per backbone of the loop body (in backbone order).
    pub counters: Vec<Var>,
    /// Last-writer selectors ℓ of Table 1 chains: existential like the
    /// counters, renamed at each application.
    pub selectors: Vec<Var>,
    /// θ^κ: every slot's value after κ⃗ iterations, over the loop-entry symbols.
    pub theta: State,
    /// φ^κ.
    pub looping: TermId,
    /// τ₁ … τₙ and γᵢ = θ^κ[κ⃗/τ⃗]⟨pcᵢ⟩ (inner counters existentially bound),
    /// kept for the last-iteration form used by an enclosing loop's Alg. 8.
    pub taus: Vec<Var>,
    pub gammas: Vec<TermId>,
    /// Inner loops whose count was inferred (Alg. 8): the count in the
    /// iteration that starts after κ⃗ iterations.
    pub inferred: Vec<(LoopId, TermId)>,
    /// Slots whose iterated value is ⋆.
    pub unknown: Vec<Slot>,
    /// Number of body backbones and how many were infeasible on their own.
    pub backbones: usize,
    pub notes: Vec<String>,
    /// The work of computing it (inner summaries included).
    pub stats: Stats,
}

impl Summary {
    /// A summary without counters: θ as given, no looping condition.
    fn trivial(
        eng: &mut Engine,
        mut theta: State,
        mut unknown: Vec<Slot>,
        backbones: usize,
        note: String,
    ) -> Summary {
        let looping = eng.terms.bool(true);
        let selectors = monotone_next(eng, &mut theta, &mut unknown)
            .into_iter()
            .collect();
        Summary {
            counters: vec![],
            selectors,
            theta,
            looping,
            taus: vec![],
            gammas: vec![],
            inferred: vec![],
            unknown,
            backbones,
            notes: vec![note],
            stats: eng.stats.clone(),
        }
    }
}

/// What θ^κ is computed for: program slots and the ν of inner loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    Slot(Slot),
    Nu(LoopId),
}

/// The variables of a loop's summary besides its counters: the Table 1
/// selectors ℓ with their constraints over κ⃗, and the ν of inner loops.
struct LoopVars {
    selectors: Vec<(Var, TermId)>,
    nus: BTreeMap<LoopId, Var>,
}

/// The summary of loop `l`, phase by phase.
pub(super) fn compute(eng: &mut Engine, l: LoopId) -> Summary {
    let graph = eng.body;
    let lp = &graph.loops[l as usize];
    let body = match backbones::execute(eng, lp) {
        Ok(body) => body,
        Err(trivial) => return *trivial,
    };
    let counters: Vec<Var> = body
        .runs
        .iter()
        .map(|_| eng.fresh_numbered(Numbered::Counter))
        .collect();
    let fp = fixpoint::least_fixpoint(eng, &body.runs, &counters);
    let looping = looping::looping_condition(eng, &body.runs, &fp.theta, &counters, &fp.vars);
    let (mut theta, mut unknown) = final_state(eng, &fp.theta);
    let mut selectors: Vec<Var> = fp.vars.selectors.iter().map(|(l, _)| *l).collect();
    selectors.extend(monotone_next(eng, &mut theta, &mut unknown));
    Summary {
        counters,
        selectors,
        theta,
        looping: looping.condition,
        taus: looping.taus,
        gammas: looping.gammas,
        inferred: fp.inferred,
        unknown,
        backbones: body.backbones,
        notes: Vec::new(),
        stats: eng.stats.clone(),
    }
}

/// θ^κ as a state over the program's slots, and the slots that are ⋆.
fn final_state(eng: &Engine, theta: &BTreeMap<Key, TermId>) -> (State, Vec<Slot>) {
    let mut st = State {
        values: BTreeMap::new(),
    };
    let mut unknown = Vec::new();
    for s in &eng.slots.all {
        let v = theta[&Key::Slot(*s)];
        if eng.terms.contains_star(v) {
            unknown.push(*s);
        }
        st.values.insert(*s, v);
    }
    (st, unknown)
}

impl Engine<'_> {
    /// The basic symbol of a slot, as a term.
    pub(crate) fn terms_var_of(&mut self, s: Slot) -> TermId {
        let v = self.slots.symbols[&s];
        self.terms.var(v)
    }
}

/// λx⃗.⋆ of arity `n`.
fn star_array(terms: &mut Terms, n: u8) -> TermId {
    let xs: Vec<Var> = (0..n).map(|_| terms.new_var(VarKind::Bound, "x")).collect();
    let s = terms.star();
    terms.lambda(xs, s)
}

/// `next`, the address the next `alloc` hands out, only grows. Where the
/// rules leave it ⋆, it becomes next₀ + ℓ with a fresh selector ℓ, which
/// every application of the summary constrains to ℓ ≥ 0: a cell allocated
/// after the loop is still never null. Only the summary's final state gets
/// ℓ; the fixpoint's other slots saw ⋆, so none of them takes ℓ for a
/// value that is the same in every iteration.
fn monotone_next(eng: &mut Engine, theta: &mut State, unknown: &mut Vec<Slot>) -> Option<Var> {
    let value = *theta.values.get(&Slot::Next)?;
    if !eng.terms.contains_star(value) {
        return None;
    }
    let grown_by = eng.fresh_numbered(Numbered::Selector);
    let start = eng.terms_var_of(Slot::Next);
    let g = eng.terms.var(grown_by);
    let grown = eng.terms.add(start, g);
    theta.values.insert(Slot::Next, grown);
    unknown.retain(|s| *s != Slot::Next);
    Some(grown_by)
}
