//! The SMT queries of a target's necessary condition: the one place that
//! decides what `apc check` sends, `apc nc --dump-queries` writes and the
//! benchmarks time.
//!
//! The queries come in chains: the chains race each other, and within a
//! chain a query runs only when the one before it ended undecided (an
//! iterative deepening).

use super::{Options, tracked, unfold};
use crate::db::{SourceFile, Target};
use crate::smt::{PendingQuery, Query, Variant, smtlib};
use crate::term::{TermId, Terms};
use std::sync::{Arc, OnceLock};

pub use crate::engine::{DEFAULT_K, Mode};

/// The small unfolding bounds raced next to K, one after the other (an
/// iterative deepening): many conditions are decided, or give a replayable
/// model, long before the solver is done with φ̂^25 (MatrIR: φ̂^25 over a
/// minute in Z3 4.8.12, φ̂^3 in milliseconds); when φ̂^k is too weak for its
/// models to replay, a deeper one often is. Before the deepest, the chain
/// tries it with every counter bounded by its k (φ̂^14 ∧ κ ≤ 14), a witness
/// search: HWM on Z3 gave models of φ̂^14 that run past the unfolded
/// iterations, five in a row, and φ̂^25 did not finish in 30 s; the bounded
/// query gives a replayable model in 7–9 s, and HW's witness came 3.3 →
/// 1.3 s. On the 135 targets of tests/programs no other verdict changed.
pub const DEEPENING: [u32; 2] = [3, 14];

/// The queries of a target, in chains, and why a query was left out (an
/// unfolding too large to build).
#[derive(Clone, Debug, Default)]
pub struct Chains {
    pub chains: Vec<Vec<Query>>,
    pub left_out: Vec<String>,
}

/// The queries of a target, in chains, each built when first asked for
/// (`PendingQuery`): the race starts its solvers on the cheap queries
/// while the unfoldings are still being built. Measured on MatrIR: the
/// unfoldings took ~300 ms of its 470 ms before the race began, and φ̂,
/// printed in milliseconds, decides it.
pub type PendingChains<'a> = Vec<Vec<PendingQuery<'a>>>;

/// The queries of `mode` for a condition, in chains.
///
/// The quantified φ̂ goes out as computed (`raw`), everything else from
/// the simplified condition (`simplified`; the same when not simplifying):
/// quantifier instantiation is at the mercy of the exact shape of the
/// quantifier bodies, and the simplifier's small changes to them (two
/// bounds of a body merged) took MatrIR's φ̂ from 0.2 s to a timeout on
/// cvc5, with nothing to gain (the sizes change by under 1%).
pub fn pending<'a>(
    raw: (&'a Terms, TermId),
    simplified: (&'a Terms, TermId),
    mode: Mode,
    k: u32,
) -> PendingChains<'a> {
    let (terms, phi) = simplified;
    if !terms.has_quantifier(phi) {
        // Nothing to unfold: one exact query.
        return vec![vec![printed(Variant::QuantifierFree, simplified)]];
    }
    let mut out = Vec::new();
    if mode != Mode::Unfolded {
        out.push(vec![printed(Variant::Quantified, raw)]);
    }
    if mode != Mode::Quantified {
        out.push(vec![PendingQuery::new(Variant::Unfolded(k), move || {
            unfolded(simplified, k)
        })]);
    }
    if mode == Mode::Race {
        out.extend(deepening(simplified, k));
    }
    out
}

/// Whether a chain of [`pending`] starts late in the race
/// ([`crate::smt::Contender::late`]): φ̂^K on its own. Its unfolding took
/// a core for 100+ ms on MatrIR while φ̂, already printed, decided; in the
/// corpus it decides first for 2 targets of 258 (docs/necessary-conditions.md
/// §9).
pub fn starts_late(chain: &[PendingQuery]) -> bool {
    matches!(chain, [q] if matches!(q.variant, Variant::Unfolded(_)))
}

/// Whether a chain of [`pending`] is φ̂ alone (or the one exact query of
/// a quantifier-free condition): what a race that shares its cores with
/// another engine starts at once, the other chains waiting their head
/// start.
pub fn is_quantified_alone(chain: &[PendingQuery]) -> bool {
    matches!(chain, [q] if matches!(q.variant, Variant::Quantified | Variant::QuantifierFree | Variant::Sliced(_)))
}

/// Every query of `pending`, built now (for `apc nc --dump-queries`).
pub fn build_all(pending: PendingChains) -> Chains {
    let mut out = Chains::default();
    for chain in pending {
        let mut built = Vec::new();
        for q in &chain {
            match q.get() {
                Ok(q) => built.push(q.clone()),
                Err(why) if !out.left_out.iter().any(|w| w == why) => {
                    out.left_out.push(why.to_string())
                }
                Err(_) => {}
            }
        }
        if !built.is_empty() {
            out.chains.push(built);
        }
    }
    out
}

/// The queries of a target of `file` as `apc check` sends them, from the
/// database's (simplified, if `simplify`) condition, each built when the
/// race first needs it.
pub fn of_target<'db>(
    db: &'db dyn salsa::Database,
    file: SourceFile,
    target: &Target,
    opts: &Options,
    simplify: bool,
    mode: Mode,
    k: u32,
) -> PendingChains<'db> {
    let (function, id) = (target.function.clone(), target.id);
    let raw = tracked::necessary_condition(db, file, function.clone(), id, opts.clone());
    let encoded = tracked::encoded(db, file, &function, id, opts, simplify);
    let mut chains = pending((&raw.terms, raw.value.phi), encoded, mode, k);
    // The slice's condition has no facts (they are about the whole
    // program's runs): with facts, its queries already ran without them.
    if mode != Mode::Race || opts.header_facts.is_some() {
        return chains;
    }
    if let Some(sliced) = tracked::sliced_condition(db, file, function, id, opts.clone()) {
        let phi = (&sliced.terms, sliced.value.phi);
        let quantified = sliced.terms.has_quantifier(sliced.value.phi);
        chains.insert(0, vec![printed(Variant::Sliced(quantified), phi)]);
    }
    chains
}

/// The query of `variant` for the condition `phi` (already in the
/// variant's form: unfolded, bounded, …).
pub fn query(variant: Variant, terms: &Terms, phi: TermId) -> Query {
    Query {
        variant,
        text: smtlib::query(terms, &[phi]),
    }
}

/// The query of `variant` printed from `condition` as it is.
fn printed(variant: Variant, condition: (&Terms, TermId)) -> PendingQuery<'_> {
    PendingQuery::new(variant, move || {
        let _p = crate::deadline::phase("printing the queries");
        Ok(query(variant, condition.0, condition.1))
    })
}

/// φ̂^k, unfolded in a copy of the condition's own store, so that a
/// query's text (its fresh names) does not depend on which other queries
/// were built: φ̂^10 in the race is the query `--mode unfolded --k 10`
/// sends, and gets the same model. `Err` says why it was left out.
fn unfold_in_copy((terms, phi): (&Terms, TermId), k: u32) -> Result<(Terms, TermId), String> {
    let _p = crate::deadline::phase("unfolding");
    let mut own = terms.clone();
    match unfold(&mut own, phi, k) {
        Ok(phik) => Ok((own, phik)),
        Err(_) => Err(format!(
            "φ̂^{k} left out: more than {} terms",
            super::unfold::MAX_UNFOLDED_TERMS
        )),
    }
}

fn unfolded(condition: (&Terms, TermId), k: u32) -> Result<Query, String> {
    let (own, phik) = unfold_in_copy(condition, k)?;
    let _p = crate::deadline::phase("printing the queries");
    Ok(query(Variant::Unfolded(k), &own, phik))
}

/// The deepening chain below K: φ̂^3 → φ̂^14 ∧ κ ≤ 14 → φ̂^14. The bounded
/// search goes first, since its models are the likelier to replay
/// (measured: HWM 7–9 s this way, 13–14 s after φ̂^14's five misses). One
/// unfolding serves both (the bounds are added after φ̂^14 is printed);
/// whichever is built first builds it.
fn deepening(condition: (&Terms, TermId), k: u32) -> Option<Vec<PendingQuery<'_>>> {
    let small: Vec<u32> = DEEPENING.iter().copied().filter(|d| *d < k).collect();
    let (&deepest, shallower) = small.split_last()?;
    let mut chain: Vec<PendingQuery> = shallower
        .iter()
        .map(|&k| PendingQuery::new(Variant::Unfolded(k), move || unfolded(condition, k)))
        .collect();
    let both = Arc::new(OnceLock::new());
    let pair = move || -> Result<(Query, Query), String> {
        let (mut own, phik) = unfold_in_copy(condition, deepest)?;
        let _p = crate::deadline::phase("printing the queries");
        let plain = query(Variant::Unfolded(deepest), &own, phik);
        let strong = super::bound_counters(&mut own, phik, deepest);
        Ok((query(Variant::Bounded(deepest), &own, strong), plain))
    };
    let (strong, plain) = (both.clone(), both);
    chain.push(PendingQuery::new(Variant::Bounded(deepest), move || {
        strong.get_or_init(pair).clone().map(|(q, _)| q)
    }));
    chain.push(PendingQuery::new(Variant::Unfolded(deepest), move || {
        plain.get_or_init(pair).clone().map(|(_, q)| q)
    }));
    Some(chain)
}

/// Which race a dump writes: its bound K, and whether the conditions are
/// simplified first (as `apc check` does unless `--no-simplify`).
#[derive(Clone, Copy, Debug)]
pub struct Race {
    pub k: u32,
    pub simplify: bool,
}

/// Writes into `dir` every query of target `t`'s race (`apc check --mode
/// race`), for every solver, byte for byte as `apc check` would send it
/// first, under `DumpName`'s names. Returns how many scripts it wrote, and
/// the queries the race leaves out, and why.
pub fn dump_race(
    db: &dyn salsa::Database,
    file: SourceFile,
    t: &Target,
    opts: &Options,
    race: Race,
    solvers: &[crate::smt::Profile],
    dir: &std::path::Path,
) -> std::io::Result<(usize, Vec<String>)> {
    let name = crate::smt::DumpName::new(dir, file.path(db), &t.function, t.line, t.col);
    let pending = of_target(db, file, t, opts, race.simplify, Mode::Race, race.k);
    let built = build_all(pending);
    let mut written = 0;
    for chain in built.chains {
        for q in &chain {
            for profile in solvers {
                name.write(q.variant, &profile.name, 1, &q.script(profile, &[]));
                written += 1;
            }
        }
    }
    match name.failure.get() {
        Some(e) => Err(std::io::Error::other(e.clone())),
        None => Ok((written, built.left_out)),
    }
}
