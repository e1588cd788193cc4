//! Slots the predicates need not carry (docs/horn-clauses.md §2): a slot
//! is dead at a loop header when every path from it writes the slot
//! before reading it. Most are lowering's temporaries, read only in the
//! block that writes them; the generated programs have hundreds.

use super::encode::{Rule, StateVar};
use crate::ir::NodeId;
use crate::term::{TermId, Terms, Var};
use std::collections::{HashMap, HashSet};

/// At each loop header, the slots that no path from it reads before it
/// writes them are dead (lowering's temporaries, mostly): the rules into
/// the header pass an unknown `dead.k` for them instead of a value, so
/// that Spacer's invariants need not carry what the program no longer
/// reads. Returns which slots are live at some header, and each slot's
/// unknown (if one was passed).
pub(super) fn forget_dead(
    terms: &mut Terms,
    rules: &mut [Rule],
    state: &[StateVar],
) -> (Vec<bool>, Vec<Option<Var>>) {
    let slot_of: HashMap<Var, usize> = (state.iter().enumerate())
        .map(|(k, s)| (s.var, k))
        .collect();
    let slots = |t: &TermId| -> Vec<usize> {
        (terms.free_vars(*t).into_iter())
            .filter_map(|v| slot_of.get(&v).copied())
            .collect()
    };
    // Per rule: the slots its guards (and summaries) read, and those each
    // argument reads.
    let reads: Vec<(Vec<usize>, Vec<Vec<usize>>)> = (rules.iter())
        .map(|r| {
            let guards = r.reads().flat_map(slots).collect();
            (guards, r.args.iter().map(slots).collect())
        })
        .collect();
    let live = live_at_headers(rules, &reads, state.len());
    let mut unknown: Vec<Option<Var>> = vec![None; state.len()];
    for r in rules.iter_mut() {
        let Some(at) = r.to.map(|t| live.get(&t)) else {
            continue;
        };
        for (k, slot) in state.iter().enumerate() {
            if at.is_none_or(|l| !l[k]) {
                let u = *unknown[k]
                    .get_or_insert_with(|| terms.new_var(slot.var.kind, format!("dead.{k}")));
                r.args[k] = terms.var(u);
                r.vars.push(u);
            }
        }
    }
    let live_somewhere = (0..state.len())
        .map(|k| live.values().any(|l| l[k]))
        .collect();
    (live_somewhere, unknown)
}

/// The slots live at each header: read by a rule out of it, by its
/// guards or by an argument that is live where the rule leads.
fn live_at_headers(
    rules: &[Rule],
    reads: &[(Vec<usize>, Vec<Vec<usize>>)],
    slots: usize,
) -> HashMap<NodeId, Vec<bool>> {
    let mut live: HashMap<NodeId, Vec<bool>> = HashMap::new();
    loop {
        let mut changed = false;
        for (r, (guards, args)) in rules.iter().zip(reads) {
            let Some(from) = r.from else { continue };
            let after = r.to.and_then(|t| live.get(&t)).cloned();
            let mut read: Vec<usize> = guards.clone();
            for (k, arg) in args.iter().enumerate() {
                if after.as_ref().is_some_and(|l| l[k]) {
                    read.extend(arg);
                }
            }
            let at = live.entry(from).or_insert_with(|| vec![false; slots]);
            for k in read {
                changed |= !at[k];
                at[k] = true;
            }
        }
        if !changed {
            return live;
        }
    }
}

/// Takes out of the state the slots no predicate needs: dead at every
/// header (a temporary read only in the block that writes it) and not
/// read by a fact, whose variables are the first state a counterexample's
/// inputs are read from (`unroll`). Returns the state left.
pub(super) fn drop_unread_slots(
    terms: &Terms,
    rules: &mut [Rule],
    state: &[StateVar],
    (live, unknowns): &(Vec<bool>, Vec<Option<Var>>),
) -> Vec<StateVar> {
    let slot_of: HashMap<Var, usize> = (state.iter().enumerate())
        .map(|(k, s)| (s.var, k))
        .collect();
    let mut keep = live.clone();
    for r in rules.iter().filter(|r| r.from.is_none()) {
        for t in r.reads().chain(&r.args) {
            for k in (terms.free_vars(*t).iter()).filter_map(|v| slot_of.get(v)) {
                keep[*k] = true;
            }
        }
    }
    // The slots dropped, and the unknowns `forget_dead` passed for them.
    let dropped: HashSet<Var> = (0..state.len())
        .filter(|k| !keep[*k])
        .flat_map(|k| std::iter::once(state[k].var).chain(unknowns[k]))
        .collect();
    for r in rules.iter_mut() {
        if r.to.is_some() {
            r.args = (r.args.iter().zip(&keep))
                .filter(|(_, k)| **k)
                .map(|(a, _)| *a)
                .collect();
        }
        r.vars.retain(|v| !dropped.contains(v));
    }
    (state.iter().zip(&keep))
        .filter(|(_, k)| **k)
        .map(|(v, _)| v.clone())
        .collect()
}
