//! The tracked (salsa) queries of the necessary-condition layer. They live here,
//! with what they compute, as rust-analyzer's `hir` crates own theirs; the
//! database module holds only the inputs and the front-end queries.
//!
//! Each result is `Portable`: it carries the term store its ids live in,
//! so that the asking engine (or `check`) can import or read it.

use super::state::Slots;
use super::summary::Roots;
use super::{Engine, Options, Portable, Stats, Summary};
use crate::db::{self, SourceFile};
use crate::ir::LoopId;
use crate::term::TermId;
use crate::term::{Node, Terms, VarKind};

/// The summary of one loop of the whole-program flowgraph: computed once
/// per loop and shared by every target's condition. `opts` are the engine
/// options (counter inference, helper solver, limits).
#[salsa::tracked(returns(ref), no_eq)]
pub fn loop_summary(
    db: &dyn salsa::Database,
    file: SourceFile,
    l: LoopId,
    opts: Options,
) -> Portable<Summary> {
    summary_in(Engine::new(db, file, opts), l)
}

/// A loop's summary computed by `eng`, with the store it lives in.
fn summary_in(eng: Option<Engine>, l: LoopId) -> Portable<Summary> {
    let _p = crate::deadline::phase("summarising loops");
    let mut eng = eng.expect("summaries are asked of programs with main");
    let value = eng.compute_summary(l);
    Portable {
        terms: eng.terms,
        value,
    }
}

/// The summary of a loop of a target's slice (`db::target_slice`) that the
/// slice changed; the others are the whole graph's (`loop_summary`).
#[salsa::tracked(returns(ref), no_eq)]
pub fn sliced_loop_summary(
    db: &dyn salsa::Database,
    file: SourceFile,
    function: String,
    target: u32,
    l: LoopId,
    opts: Options,
) -> Portable<Summary> {
    summary_in(Engine::for_target(db, file, &function, target, opts), l)
}

/// A target's necessary condition and what it was built from.
pub struct Condition {
    /// φ̂ as computed.
    pub phi: TermId,
    /// The summaries of the loops φ̂ applied and of the loops inside them,
    /// by loop id, as imported into this store, for explanations. Loops off
    /// every way to the target are left out: importing each loop of the
    /// program for each target made the work per target grow with the
    /// program.
    pub summaries: Vec<(LoopId, Summary)>,
    /// The work behind φ̂ (the summaries it applied included).
    pub stats: Stats,
    /// The program's slots and their symbols in this store.
    pub slots: Slots,
}

/// The necessary condition φ̂ of a target of a function: reaching any
/// inlined copy of it in the whole-program flowgraph.
#[salsa::tracked(returns(ref), no_eq)]
pub fn necessary_condition(
    db: &dyn salsa::Database,
    file: SourceFile,
    function: String,
    target: u32,
    opts: Options,
) -> Portable<Condition> {
    let prog = db::program(db, file)
        .as_ref()
        .expect("conditions are asked of programs with main");
    let _p = crate::deadline::phase("building the condition");
    let eng = Engine::new(db, file, opts).expect("a program with main");
    condition_in(eng, &prog.body, &prog.copies_of(&function, target))
}

/// φ̂ of a target on its slice (`db::target_slice`): a weaker condition
/// (the slice forgets what the target does not depend on, the exits of
/// loops that change nothing it reads included), whose `unsat` is a proof
/// all the same. `None` when the slice drops nothing.
#[salsa::tracked(returns(ref), no_eq)]
pub fn sliced_condition(
    db: &dyn salsa::Database,
    file: SourceFile,
    function: String,
    target: u32,
    opts: Options,
) -> Option<Portable<Condition>> {
    db::target_slice(db, file, function.clone(), target).as_ref()?;
    let prog = db::program(db, file).as_ref()?;
    let _p = crate::deadline::phase("building the condition");
    let eng = Engine::for_target(db, file, &function, target, opts)?;
    Some(condition_in(
        eng,
        &prog.body,
        &prog.copies_of(&function, target),
    ))
}

/// φ̂ of reaching `nodes` on the engine's flowgraph, in a store of its own.
fn condition_in(
    mut eng: Engine,
    whole: &crate::ir::Body,
    nodes: &[crate::ir::NodeId],
) -> Portable<Condition> {
    let phi = eng.condition_of(nodes);
    let stats = eng.stats.clone();
    let summaries: Vec<(LoopId, Summary)> = explained_loops(whole, &eng)
        .into_iter()
        .map(|l| (l, Summary::clone(&eng.summary(l))))
        .collect();
    compact(whole, &eng.terms, phi, summaries, stats)
}

/// The loops an explanation shows: those φ̂ applied and the loops inside
/// them (whose own summaries the outer one used), in id order. Those
/// not applied yet are imported after φ̂ was built, so that φ̂'s counters
/// are numbered as if they were not.
fn explained_loops(whole: &crate::ir::Body, eng: &Engine) -> Vec<LoopId> {
    let applied: Vec<LoopId> = eng.summaries.keys().copied().collect();
    (whole.loops.iter())
        .filter(|lp| {
            let mut outer = Some(lp.id);
            while let Some(l) = outer {
                if applied.contains(&l) {
                    return true;
                }
                outer = whole.loops[l as usize].parent;
            }
            false
        })
        .map(|lp| lp.id)
        .collect()
}

/// The condition in a store of its own holding only its terms: the
/// engine's store also holds every state and guard of the pass, and one is
/// cached per target (2,000 asserts in one file ran out of 24 GB). Symbols
/// are made first, as in an engine, and the terms are copied in their order
/// of creation, so the condition prints as it did; only the variables' ids
/// (and with them their SMT names' suffixes) are new.
fn compact(
    body: &crate::ir::Body,
    src: &Terms,
    phi: TermId,
    summaries: Vec<(LoopId, Summary)>,
    stats: Stats,
) -> Portable<Condition> {
    let mut terms = Terms::new();
    let slots = Slots::new(&mut terms, body);
    super::state::State::general(&mut terms, &slots);
    let parts: Vec<Roots> = (summaries.iter())
        .map(|(_, sum)| Roots::of(src, sum))
        .collect();
    let mut roots = vec![phi];
    for r in &parts {
        roots.extend(r.all.iter().copied());
    }
    let copied = terms.import(src, &roots, &mut |terms, v, name| match src.numbered(v) {
        Some((what, n)) => terms.new_numbered(what, n),
        None if v.kind == VarKind::FreshBool => {
            let t = terms.fresh_bool();
            match terms.node(t) {
                Node::Var(v) => *v,
                _ => unreachable!("a fresh Boolean is a variable"),
            }
        }
        None => terms.new_var(v.kind, name),
    });
    let phi = copied[0];
    let mut at = 1;
    let summaries = summaries
        .iter()
        .zip(&parts)
        .map(|((l, sum), r)| {
            let mine = copied[at..at + r.all.len()].to_vec();
            at += r.all.len();
            (*l, r.read_back(&terms, sum, mine))
        })
        .collect();
    Portable {
        terms,
        value: Condition {
            phi,
            summaries,
            stats,
            slots,
        },
    }
}

/// A target's condition after e-graph simplification, with what the
/// simplifier did. The simplified terms are added to a clone of the raw
/// condition's store (so the two share their variables: a model of either
/// names the same symbols); a condition the simplifier leaves alone keeps
/// no store of its own.
pub struct Simplified {
    /// The clone holding the simplified terms, if the simplifier ran.
    terms: Option<Terms>,
    pub phi: TermId,
    pub stats: crate::simplify::Stats,
}

impl Simplified {
    /// The store `phi` lives in (`raw` is the condition's own).
    pub fn terms<'a>(&'a self, raw: &'a Portable<Condition>) -> &'a Terms {
        self.terms_or(&raw.terms)
    }

    /// The store `phi` lives in, `raw` if the simplifier did not run.
    pub fn terms_or<'a>(&'a self, raw: &'a Terms) -> &'a Terms {
        self.terms.as_ref().unwrap_or(raw)
    }
}

/// The necessary condition of a target after e-graph simplification
/// (`simplify`). The raw condition stays available from
/// `necessary_condition`.
#[salsa::tracked(returns(ref), no_eq)]
pub fn simplified_condition(
    db: &dyn salsa::Database,
    file: SourceFile,
    function: String,
    target: u32,
    opts: Options,
) -> Simplified {
    let raw = necessary_condition(db, file, function, target, opts);
    simplify_condition(&raw.terms, raw.value.phi)
}

/// `phi` (in `terms`) after e-graph simplification, when it has
/// quantifiers; as it is otherwise.
pub fn simplify_condition(terms: &Terms, phi: TermId) -> Simplified {
    let _p = crate::deadline::phase("simplifying");
    if !terms.has_quantifier(phi) {
        // The e-graph is for the quantified conditions, whose instantiation
        // depends on their shape; a quantifier-free one goes to a solver
        // that simplifies it itself. Per target, the e-graph's work grows
        // with the condition: 2,000 asserts in a row (one more conjunct
        // each) cost it 450 s, for nothing.
        let size = terms.dag_size(&[phi]);
        let stats = crate::simplify::Stats {
            nodes_before: size,
            nodes_after: size,
            time: std::time::Duration::ZERO,
            stop: "kept: quantifier-free".into(),
        };
        return Simplified {
            terms: None,
            phi,
            stats,
        };
    }
    let mut own = terms.clone();
    let (phi, stats) = crate::simplify::simplify_one(&mut own, phi);
    Simplified {
        terms: Some(own),
        phi,
        stats,
    }
}

/// The condition a target's queries encode: simplified, or as computed.
pub fn encoded<'db>(
    db: &'db dyn salsa::Database,
    file: SourceFile,
    function: &str,
    target: u32,
    opts: &Options,
    simplify: bool,
) -> (&'db Terms, TermId) {
    let raw = necessary_condition(db, file, function.to_string(), target, opts.clone());
    if simplify {
        let s = simplified_condition(db, file, function.to_string(), target, opts.clone());
        (s.terms(raw), s.phi)
    } else {
        (&raw.terms, raw.value.phi)
    }
}
