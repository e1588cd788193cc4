//! The conditions as an engine of the contract (`nc`): the target's
//! queries (φ̂, φ̂^K, the deepening chain) raced on the chosen solvers,
//! each model judged by a replay. With several targets, one condition for
//! reaching any of them, built in the same single pass
//! (docs/portfolio.md §4): its `unsat` proves every one.

use super::facts::{FactSource, HeaderFacts};
use super::query::{self, PendingChains};
use super::state::Slot;
use crate::db::{self, Target};
use crate::deadline::{self, Stop};
use crate::engine::{
    CheckOptions, Decider, Decision, How, Invariant, Method, Place, Proof, Question,
};
use crate::smt::{
    self, Contender, DumpName, PendingQuery, Profile, RaceOutcome, Undecided, Variant,
};
use crate::syntax::LineIndex;
use crate::term::{TermId, Terms};
use crate::witness::{InputModel, Replayer};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The necessary conditions' race; with `facts`, a single target's
/// condition assumes the facts at its loops' headers that the source
/// finds (docs/necessary-conditions.md §9, "Facts from runs").
pub struct Conditions {
    pub facts: Option<&'static dyn FactSource>,
}

impl Decider for Conditions {
    fn name(&self) -> &'static str {
        "nc"
    }

    fn about(&self) -> &'static str {
        "the necessary conditions (proofs and replayed witnesses)"
    }

    fn niceness(&self, q: &Question) -> i32 {
        if q.every_target() { 5 } else { 0 }
    }

    fn takes(&self, _q: &Question) -> bool {
        true
    }

    fn decide(&self, q: &Question, stop: &Stop) -> Decision {
        match q.targets {
            [t] => one_target(q, t, self.facts, stop),
            _ => every_target(q, stop),
        }
    }
}

/// The engine options a check runs with (the key of its conditions in the
/// database).
pub fn engine_options(opts: &CheckOptions) -> super::Options {
    super::Options {
        counter_inference: opts.counter_inference,
        solver_timeout: opts.timeout.min(Duration::from_secs(10)),
        helper: opts.solvers.first().cloned(),
        ..super::Options::default()
    }
}

/// Starts the conditions' helper solver while the programs are read
/// (docs/portfolio.md §3, "Solver starts and stops").
pub fn start_helper_ahead(nc: &crate::nc::Options) {
    if let Some(profile) = &nc.helper {
        smt::Helper::start_ahead(profile, nc.solver_timeout);
    }
}

fn one_target(q: &Question, t: &Target, facts: Option<&dyn FactSource>, stop: &Stop) -> Decision {
    let plain = engine_options(q.options);
    let until = stop
        .deadline()
        .unwrap_or_else(|| Instant::now() + q.options.timeout);
    let Some(source) = facts.filter(|_| reads_unknowns(q, t, &plain)) else {
        return race_condition(q, t, &plain, until);
    };
    // First without facts, for half the time: facts cost runs and solver
    // checks, and most conditions decide without them.
    let half = Instant::now() + until.saturating_duration_since(Instant::now()) / 2;
    let first = race_condition(q, t, &plain, half);
    if first.verdict.is_definite() || Instant::now() >= until {
        return first;
    }
    let found = {
        let _p = deadline::phase("facts from runs");
        let left = until.saturating_duration_since(Instant::now());
        source.facts(q.db, q.file, t, Instant::now() + (left / 3).min(FACTS_TIME))
    };
    let Some(found) = found else {
        return first;
    };
    let strengthened = super::Options {
        header_facts: Some(found.clone()),
        ..plain
    };
    let mut second = race_condition(q, t, &strengthened, until);
    if let Some(Method {
        how: How::Refuted(variant),
        ..
    }) = &second.method
    {
        second.proof = Some(Proof::ConditionUnsat(*variant, facts_at(q, &found)));
    }
    if second.verdict.is_definite() {
        return second;
    }
    Decision::unknown(format!(
        "{}; with facts from runs at the loops' headers: {}",
        first.reason(),
        second.reason()
    ))
}

/// The facts at their loops' heads in the file, each loop's as one
/// microc condition.
fn facts_at(q: &Question, facts: &HeaderFacts) -> Vec<Invariant> {
    let Some(prog) = db::program(q.db, q.file).as_ref() else {
        return vec![];
    };
    let text = q.file.text(q.db);
    let lines = LineIndex::new(text);
    (facts.0.iter())
        .filter_map(|(header, conds)| {
            let l = prog.body.loops.iter().find(|l| l.header == *header)?;
            let (line, col) = lines.line_col(text, l.span.start);
            let each: Vec<String> = (conds.iter())
                .map(|c| crate::ir::condition_text(&prog.body, c))
                .collect();
            Some(Invariant {
                at: Place::Loop { line, col },
                text: each.join(" && "),
                microc: true,
            })
        })
        .collect()
}

/// The race of the target's queries, with the conditions `engine_opts`
/// build, until `until`. Queries of a condition with facts are dumped as
/// `…-facts-…`.
fn race_condition(
    q: &Question,
    t: &Target,
    engine_opts: &super::Options,
    until: Instant,
) -> Decision {
    let Some(prog) = db::program(q.db, q.file).as_ref() else {
        return Decision::unknown("unsupported: the program has no main");
    };
    let opts = q.options;
    let parsed = db::parse(q.db, q.file);
    let chains = query::of_target(
        q.db,
        q.file,
        t,
        engine_opts,
        opts.simplify,
        opts.mode,
        opts.k,
    );
    let (terms, phi) = super::encoded(q.db, q.file, &t.function, t.id, engine_opts, opts.simplify);
    if terms.as_bool(phi) == Some(false) {
        return condition_false(q);
    }
    let inputs = InputModel::new(&parsed.program, &prog.body, terms, phi);
    let dump = opts.dump_queries.as_ref().map(|dir| {
        let mut name = DumpName::new(dir, q.file.path(q.db), &t.function, t.line, t.col)
            .reporting_to(&opts.dump_failure);
        if engine_opts.header_facts.is_some() {
            name.stem.push_str("-facts");
        }
        name
    });
    let contenders = contenders(chains, &opts.solvers, dump.as_ref(), opts.sharing_cores);
    let replay = Replayer::new(&parsed.program, q.file.text(q.db), q.targets);
    race(&contenders, &inputs, &replay, q, until)
}

/// Whether the target's condition, without facts, reads an integer
/// variable a loop's summary left ⋆ (a fresh Boolean stands for each
/// predicate over ⋆): only then can facts at the headers, which speak of
/// integer variables, make it stronger. The condition is the database's,
/// built once either way.
fn reads_unknowns(q: &Question, t: &Target, opts: &super::Options) -> bool {
    let Some(prog) = db::program(q.db, q.file).as_ref() else {
        return false;
    };
    let raw = super::necessary_condition(q.db, q.file, t.function.clone(), t.id, opts.clone());
    let unknown_integer = (raw.value.summaries.iter())
        .flat_map(|(_, s)| &s.unknown)
        .any(|slot| matches!(slot, Slot::Value(v) if prog.body.var(*v).ty.is_int()));
    unknown_integer
        && (raw.terms.free_vars(raw.value.phi).iter())
            .any(|v| v.kind == crate::term::VarKind::FreshBool)
}

/// The most time facts from runs take (a third of the time left, at
/// most this).
const FACTS_TIME: Duration = Duration::from_secs(2);

/// One condition for reaching any of the targets.
fn every_target(q: &Question, stop: &Stop) -> Decision {
    let Some(prog) = db::program(q.db, q.file).as_ref() else {
        return Decision::unknown("no condition (no main)");
    };
    let nodes: Vec<_> = (q.targets.iter())
        .flat_map(|t| prog.copies_of(&t.function, t.id))
        .collect();
    let Some(mut eng) = super::Engine::new(q.db, q.file, engine_options(q.options)) else {
        return Decision::unknown("no condition (unsupported)");
    };
    let phi = {
        let _p = deadline::phase("building the condition");
        eng.condition_of(&nodes)
    };
    let program = &db::parse(q.db, q.file).program;
    let replay = Replayer::new(program, q.file.text(q.db), q.targets);
    let inputs = InputModel::new(program, &prog.body, &eng.terms, phi);
    let opts = q.options;
    let simplified = opts
        .simplify
        .then(|| super::simplify_condition(&eng.terms, phi));
    let simple: (&Terms, TermId) = simplified
        .as_ref()
        .map_or((&eng.terms, phi), |s| (s.terms_or(&eng.terms), s.phi));
    if simple.0.as_bool(simple.1) == Some(false) {
        return condition_false(q);
    }
    let chains = query::pending((&eng.terms, phi), simple, opts.mode, opts.k);
    let contenders = contenders(chains, &opts.solvers, None, opts.sharing_cores);
    let until = stop
        .deadline()
        .unwrap_or_else(|| Instant::now() + opts.timeout);
    race(&contenders, &inputs, &replay, q, until)
}

/// Unreachable with no solver: the necessary condition is `false` as built.
fn condition_false(q: &Question) -> Decision {
    Decision::unreachable(q.method("nc", How::ConditionFalse), None)
}

/// The race of the queries; a model counts when its run hits a target
/// asked about.
fn race(
    contenders: &[Contender],
    inputs: &InputModel,
    replay: &Replayer,
    q: &Question,
    deadline: Instant,
) -> Decision {
    let judge = |session: &mut smt::Session| inputs.judge(session, replay);
    let _p = deadline::phase("solving");
    let method = |how| q.method("nc", how);
    match smt::race(contenders, judge, q.options.max_models, deadline) {
        RaceOutcome::Unsat { variant, solver } => {
            Decision::unreachable(method(How::Refuted(variant)), Some(solver))
        }
        RaceOutcome::Accepted {
            variant,
            solver,
            witness: (witness, varied),
        } => {
            let reached = match replay.hit(&witness) {
                Ok(t) => t.clone(),
                Err(why) => return Decision::unknown(why),
            };
            let how = How::Model { variant, varied };
            let mut d = Decision::reachable(witness, method(how), Some(solver));
            d.reached = Some(reached);
            d
        }
        RaceOutcome::Timeout(why) => undecided(&why, true),
        RaceOutcome::Undecided(why) => undecided(&why, false),
    }
}

/// One contender per chain and solver; a chain's later queries follow on
/// the same thread. `sharing_cores`: only φ̂ starts at once.
pub fn contenders<'a>(
    chains: PendingChains<'a>,
    solvers: &[Profile],
    dump: Option<&DumpName>,
    sharing_cores: bool,
) -> Vec<Contender<'a>> {
    let mut out = Vec::new();
    for chain in chains {
        let late =
            query::starts_late(&chain) || (sharing_cores && !query::is_quantified_alone(&chain));
        // Shared by the solvers: built once.
        let shared: Vec<Arc<PendingQuery>> = chain.into_iter().map(Arc::new).collect();
        for profile in solvers {
            let mut next: Option<Box<Contender>> = None;
            for q in shared.iter().rev() {
                next = Some(Box::new(Contender {
                    query: q.clone(),
                    profile: profile.clone(),
                    dump: dump.cloned(),
                    then: next.take(),
                    late,
                }));
            }
            out.extend(next.map(|c| *c));
        }
    }
    out
}

/// The decision when no contender was definite (by the deadline, if
/// `timed_out`): a satisfiable condition without a replayable witness says
/// more than a solver that gave up, which says more than a bare timeout.
/// Queries that were left out are named; with nothing else, the target
/// is `unsupported`.
fn undecided(why: &[(Variant, String, Undecided)], timed_out: bool) -> Decision {
    let mut left_out: Vec<&str> = Vec::new();
    for (_, _, u) in why {
        if let Undecided::LeftOut(l) = u
            && !left_out.contains(&l.as_str())
        {
            left_out.push(l);
        }
    }
    if !timed_out && !why.is_empty() && left_out.len() == why.len() {
        return Decision::unknown(format!("unsupported: {}", left_out.join("; ")));
    }
    let no_witness = why.iter().find_map(|(v, s, u)| match u {
        Undecided::NoWitness(miss) => Some((v, s, miss)),
        Undecided::Solver(_) | Undecided::LeftOut(_) => None,
    });
    let mut also = String::new();
    if timed_out {
        also.push_str(" (then timeout: solving)");
    }
    for l in &left_out {
        also.push_str(&format!(" ({l})"));
    }
    match no_witness {
        Some((&variant, s, miss)) => {
            let mut d = Decision::unknown(format!("nc-sat-no-witness: {miss}{also}"));
            d.method = Some(Method::new("nc", How::NoWitness(variant)));
            d.solver = Some(s.clone());
            d
        }
        None if timed_out => {
            let lo: String = left_out.iter().map(|l| format!(" ({l})")).collect();
            Decision::unknown(format!("timeout: solving{lo}"))
        }
        None => {
            let reasons: Vec<String> = why
                .iter()
                .filter_map(|(v, s, u)| match u {
                    Undecided::Solver(r) | Undecided::NoWitness(r) => {
                        Some(format!("{} on {s}: {r}", v.method()))
                    }
                    Undecided::LeftOut(_) => None,
                })
                .collect();
            Decision::unknown(format!("solver-unknown: {}{also}", reasons.join("; ")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{Database, SourceFile, targets};
    use crate::engine::{DEFAULT_K, Mode};

    /// Beside the witness search in the portfolio's head, the conditions'
    /// race starts φ̂ alone; on their own, every chain but φ̂^K at once.
    #[test]
    fn sharing_the_cores_the_race_starts_the_quantified_condition_alone() {
        let text = include_str!("../../tests/programs/matrir.mc");
        let db = Database::default();
        let file = SourceFile::new(&db, "matrir.mc".into(), text.to_string());
        let target = (targets(&db, file).into_iter())
            .find(|t| t.kind == crate::TargetKind::Assert)
            .expect("the assert is a target");
        let Some(z3) = smt::default_z3() else {
            panic!("z3 is needed (solvers/install.sh)");
        };
        let opts = CheckOptions::new(vec![z3], Duration::from_secs(20));
        let at_once = |sharing: bool| -> Vec<String> {
            let chains = query::of_target(
                &db,
                file,
                &target,
                &engine_options(&opts),
                true,
                Mode::Race,
                DEFAULT_K,
            );
            (contenders(chains, &opts.solvers, None, sharing).iter())
                .filter(|c| !c.late)
                .map(|c| format!("{:?}", c.query.variant))
                .collect()
        };
        assert_eq!(at_once(true), ["Quantified"]);
        assert_eq!(at_once(false), ["Quantified", "Unfolded(3)"]);
    }
}
