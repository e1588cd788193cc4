//! The program as constrained Horn clauses for Z3's fixed-point engine,
//! with the certificate checks that make an invariant a proof: apc
//! re-verifies every invariant with its own quantifier-free queries before
//! it says `unreachable` (docs/horn-clauses.md).
//!
//! - [`encode`]: the inlined flowgraph as clauses (terms, printed by
//!   `smt::horn`), exact or refused;
//! - `state`: the state the predicates range over, and an edge as a rule;
//! - [`certificate`]: the invariant Z3 returns, and its checks;
//! - [`unroll`]: a counterexample's inputs, by unrolling the clauses;
//! - [`decide`]: proof or counterexample, within a deadline;
//! - [`decider`]: the engine of the contract ([`HornClauses`]): a
//!   counterexample's candidate inputs judged by a replay.
//!
//! Knows the IR, the solver layer and witnesses; nothing of the other
//! engines.

mod arrays;
mod cells;
mod certificate;
mod dead;
pub mod decider;
mod encode;
mod ghosts;
mod quotients;
pub mod readable;
mod sampled;
mod slice;
mod state;
mod unroll;

pub use certificate::Certificate;
pub use decider::HornClauses;
use encode::{Arithmetic, Cells, Inputs, Reading, encode_as};
pub use encode::{Encoding, encode};
pub use sampled::header_facts;
pub use unroll::{MAX_STEPS, Search, initial_symbol};

use crate::deadline::{Entrant, Finish};
use crate::ir::{Body, NodeId, Summaries};
use crate::smt::horn::model;
use crate::smt::smtlib;
use crate::smt::{self, Answer, Profile};
use crate::term::TermId;
use rustc_hash::FxHashMap as HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The Horn engine's answer for one target.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// Every clause holds under the invariant: checked, a proof.
    Unreachable(Certificate),
    /// The clauses have a counterexample: a candidate only (they
    /// over-approximate the runs) until [`find_counterexample`] finds
    /// inputs that the caller replays to the target.
    Counterexample(Box<Encoding>),
    /// Not proved, and why.
    Unknown(String),
}

/// The scripts one decision sent, for `--dump-queries`: the Horn query and
/// the certificate checks.
#[derive(Clone, Debug, Default)]
pub struct Scripts {
    pub horn: Option<String>,
    pub checks: Option<String>,
    /// The unrolling that looked for a counterexample's inputs.
    pub unrolling: Option<String>,
    /// The last round of checks of the invariants guessed from runs.
    pub guesses: Option<String>,
}

/// The solver for Horn queries, and whether it is the newer Z3 that
/// `solvers/install.sh` puts in `solvers/bin/z3-horn` (or
/// `$APC_Z3_HORN`), which gets the option sets of [`SPACER_RUNS`]; else
/// the `z3` that `apc check` uses, with Spacer's defaults. Looked up once
/// per process.
pub fn horn_solver() -> Result<(Profile, bool), String> {
    static SOLVER: OnceLock<Result<(Profile, bool), String>> = OnceLock::new();
    SOLVER.get_or_init(find_horn_solver).clone()
}

fn find_horn_solver() -> Result<(Profile, bool), String> {
    let base = smt::default_z3().ok_or("z3 not found: run solvers/install.sh")?;
    match smt::locate_binary("z3-horn", "APC_Z3_HORN")? {
        Some(path) => {
            let mut p = base;
            p.name = "z3-horn".into();
            p.command = path.to_string_lossy().into_owned();
            Ok((p, true))
        }
        None => Ok((base, false)),
    }
}

/// Tries to prove a target unreachable in `body` (the inlined program):
/// none of `errors`, the error vertices of its copies, is reached. When
/// Spacer gives up on clauses that multiply or divide unknowns, the
/// clauses are sent again with those values unknown (linear, and an
/// over-approximation: only a proof can come of them).
pub fn decide(body: &Body, errors: &[NodeId], deadline: Instant) -> (Verdict, Scripts) {
    decide_with(
        Program {
            body,
            summarised: None,
        },
        errors,
        deadline,
    )
}

/// The program the clauses are made of: the inlined `main`, and the same
/// with the flowgraphs of the functions its calls cut beside it, if they
/// can be summarised (`summary`).
#[derive(Clone, Copy)]
pub struct Program<'a> {
    pub body: &'a Body,
    pub summarised: Option<&'a (Body, Summaries)>,
}

impl Program<'_> {
    /// The clauses that prove: with the summaries, if there are any (and
    /// they can be made), else without.
    fn encode_to_prove(&self, errors: &[NodeId], reading: Reading) -> Result<Encoding, String> {
        if let Some((body, summaries)) = self.summarised
            && let Ok(enc) = encode::encode_with(body, errors, reading, summaries)
        {
            return Ok(enc);
        }
        encode_as(self.body, errors, reading)
    }
}

/// [`decide`] on `program`, whose cut calls are related by summaries of
/// their functions where it has them. A counterexample is looked for
/// without them (the unrolling follows no summary).
pub fn decide_with(program: Program, errors: &[NodeId], deadline: Instant) -> (Verdict, Scripts) {
    let (exact, scripts, nonlinear) = decide_as(program, errors, Arithmetic::Exact, deadline);
    let why = match exact {
        Verdict::Unknown(why) if nonlinear && Instant::now() < deadline => why,
        exact => return (exact, scripts),
    };
    match decide_as(program, errors, Arithmetic::Linear, deadline) {
        (Verdict::Unreachable(cert), linear, _) => (Verdict::Unreachable(cert), linear),
        (Verdict::Counterexample(_), ..) => {
            let why = format!(
                "{why}; with products and quotients of unknowns left unknown, the clauses have a counterexample"
            );
            (Verdict::Unknown(why), scripts)
        }
        (Verdict::Unknown(linear), linear_scripts, _) => {
            let why = format!("{why}; linear: {linear}");
            (Verdict::Unknown(why), linear_scripts)
        }
    }
}

/// [`decide`] on the clauses as `arithmetic` reads them; also whether
/// they multiply or divide unknowns. The cells of local arrays are left
/// unknown first, and followed only when those clauses have a
/// counterexample: the smaller clauses prove most targets sooner, and
/// some only (docs/horn-clauses.md §2).
fn decide_as(
    program: Program,
    errors: &[NodeId],
    arithmetic: Arithmetic,
    deadline: Instant,
) -> (Verdict, Scripts, bool) {
    let mut cells = Cells::Unknown;
    loop {
        let reading = Reading {
            arithmetic,
            inputs: Inputs::Unknown,
            cells,
        };
        let enc = match program.encode_to_prove(errors, reading) {
            Ok(enc) => enc,
            Err(why) => return (Verdict::Unknown(why), Scripts::default(), false),
        };
        let (nonlinear, refinable) = (enc.nonlinear, enc.cells_left_unknown);
        let (mut from_runs, mut guesses) = (None, None);
        if arithmetic == Arithmetic::Exact
            && nonlinear
            && enc.has_query()
            && enc.summaries.is_empty()
            && sampled::multiplies_state(&enc)
        {
            let mut scripts = Scripts::default();
            match prove_from_runs(&enc, deadline, &mut scripts) {
                Ok(cert) => return (Verdict::Unreachable(cert), scripts, nonlinear),
                Err(why) => (from_runs, guesses) = (Some(why), scripts.guesses),
            }
        }
        let (verdict, mut scripts) = solve(enc, deadline);
        scripts.guesses = guesses;
        let verdict = match (verdict, from_runs) {
            (Verdict::Unknown(why), Some(runs)) => {
                Verdict::Unknown(format!("{why}; invariants from runs: {runs}"))
            }
            (verdict, _) => verdict,
        };
        if !matches!(verdict, Verdict::Counterexample(_)) {
            return (verdict, scripts, nonlinear);
        }
        if refinable && Instant::now() < deadline {
            cells = Cells::Followed;
            continue;
        }
        // The same runs, with the stream the unrolling reads inputs from.
        let stream = Reading {
            arithmetic,
            inputs: Inputs::Stream,
            cells: Cells::Followed,
        };
        let verdict = match encode_as(program.body, errors, stream) {
            Ok(enc) => Verdict::Counterexample(Box::new(enc)),
            Err(why) => Verdict::Unknown(why),
        };
        return (verdict, scripts, nonlinear);
    }
}

/// An invariant guessed from runs of the clauses (`sampled`), for clauses
/// that multiply unknowns, where Spacer's linear reasoning finds none; then
/// checked clause by clause like Spacer's. It gets a third of the time
/// left, and at most [`RUNS_TIME`]. When the clauses' own slots give no
/// invariant, the same is tried with Bézout ghosts (`ghosts`), whose
/// equalities express divisibility.
fn prove_from_runs(
    enc: &Encoding,
    deadline: Instant,
    scripts: &mut Scripts,
) -> Result<Certificate, String> {
    let plain = guess_and_check(enc, &Default::default(), deadline, scripts);
    let Err(why) = plain else { return plain };
    let Some(ghosted) = ghosts::bezout(enc, sampled::MAX_SLOTS) else {
        return Err(why);
    };
    guess_and_check(&ghosted.enc, &ghosted.candidates, deadline, scripts)
        .map_err(|again| format!("{why}; with Bézout ghosts: {again}"))
}

/// [`sampled::invariant`] with `extra` candidates, checked.
fn guess_and_check(
    enc: &Encoding,
    extra: &HashMap<NodeId, Vec<TermId>>,
    deadline: Instant,
    scripts: &mut Scripts,
) -> Result<Certificate, String> {
    let (solver, _) = horn_solver()?;
    let own = Instant::now() + (left(deadline) / 3).min(RUNS_TIME);
    let cert = sampled::invariant(enc, extra, &solver, own, &mut scripts.guesses)?;
    checked_or_weakened(&solver, enc, cert, deadline, scripts)
}

/// The most time the invariants from runs take before Spacer is asked.
const RUNS_TIME: Duration = Duration::from_secs(4);

/// Spacer's invariant for the clauses, checked clause by clause, or its
/// counterexample.
fn solve(enc: Encoding, deadline: Instant) -> (Verdict, Scripts) {
    let mut scripts = Scripts::default();
    let (solver, newer) = match horn_solver() {
        Ok(s) => s,
        Err(why) => return (Verdict::Unknown(why), scripts),
    };
    let mut outcome = attempt(&solver, newer, &enc, &[], deadline, &mut scripts);
    if let Outcome::CheckFailed(why) = &outcome
        && newer
        && Instant::now() < deadline
    {
        outcome = match attempt(
            &solver,
            newer,
            &enc,
            NO_EAGER_INLINING,
            deadline,
            &mut scripts,
        ) {
            Outcome::CheckFailed(again) => {
                Outcome::CheckFailed(format!("{why}; without eager inlining: {again}"))
            }
            other => other,
        };
    }
    let verdict = match outcome {
        Outcome::Proved(cert) => Verdict::Unreachable(cert),
        Outcome::Counterexample => Verdict::Counterexample(Box::new(enc)),
        Outcome::Undecided(why) | Outcome::CheckFailed(why) => Verdict::Unknown(why),
    };
    (verdict, scripts)
}

/// What one race of Spacer's runs gave.
enum Outcome {
    /// An invariant that passed its checks.
    Proved(Certificate),
    Counterexample,
    Undecided(String),
    /// An invariant of Spacer's that failed its checks.
    CheckFailed(String),
}

/// Z3 5.4's eager inlining of clauses can give back a model that fails its
/// check: a predicate defined `true` whose successor is `false` (measured
/// on a generated program; docs/horn-clauses.md). Such a model is sent
/// again without it.
const NO_EAGER_INLINING: &[SolverOption] = &[("fp.xform.inline_eager", "false")];

/// Spacer's runs on `enc`, with `extra` options, raced; their invariant
/// checked.
fn attempt(
    solver: &Profile,
    newer: bool,
    enc: &Encoding,
    extra: &[SolverOption],
    deadline: Instant,
    scripts: &mut Scripts,
) -> Outcome {
    let runs = spacer_runs(enc, newer, extra);
    scripts.horn = Some(runs[0].0.clone());
    // The certificate to check, and why it is not Spacer's (if it is not).
    let (cert, instead_of) = if enc.has_query() {
        let reply = race_runs(solver, runs, deadline);
        let model = match reply.answer {
            Answer::Sat => reply.values,
            Answer::Unsat => return Outcome::Counterexample,
            Answer::Unknown(why) => return Outcome::Undecided(why),
        };
        // An invariant whose quantifiers Z3 cannot eliminate is not
        // checked; `true` may still do.
        let eliminate = |d: &str| eliminate_quantifiers(solver, d, deadline);
        match Certificate::from_model(&model, enc, eliminate) {
            Ok(cert) => (cert, None),
            Err(why) => (Certificate::trivial(enc), Some(why)),
        }
    } else {
        // No clause reaches the error: no solver needed to find the invariant.
        (Certificate::trivial(enc), None)
    };
    let checked = checked_or_weakened(solver, enc, cert, deadline, scripts);
    match (checked, instead_of) {
        (Ok(cert), _) => Outcome::Proved(cert),
        (Err(_), Some(why)) => Outcome::Undecided(format!("{why}, and `true` is not an invariant")),
        (Err(why), None) => Outcome::CheckFailed(why),
    }
}

/// `cert` if it passes its checks. Where clauses into a predicate fail,
/// the predicate is weakened to `true` and everything checked again,
/// until the checks pass or a query's clause fails: Spacer's slicing
/// sometimes defines `false` a predicate whose invariant is `true`
/// (docs/horn-clauses.md, "Weakening"). The checks alone make it a proof.
fn checked_or_weakened(
    solver: &Profile,
    enc: &Encoding,
    mut cert: Certificate,
    deadline: Instant,
    scripts: &mut Scripts,
) -> Result<Certificate, String> {
    let mut first_failure = None;
    let clause_checks = smt::horn::clause_checks(&enc.terms, &enc.clauses());
    // For the second opinion on nonlinear clauses (`check`).
    let named = enc.nonlinear.then(|| {
        let (terms, clauses) = quotients::named(&enc.terms, enc.clauses());
        smt::horn::clause_checks(&terms, &clauses)
    });
    for _ in 0..=enc.predicates.len() {
        let checks = CheckScripts {
            z3: cert.checks_with(&clause_checks),
            cvc5: named.as_ref().map(|n| cert.checks_with(n)),
        };
        let failed = check(solver, &checks, enc.clause_count(), deadline);
        scripts.checks = Some(checks.z3);
        let failed = match failed {
            Ok(failed) if failed.is_empty() => {
                let checks = certificate::Checks::of(enc, &clause_checks, named.as_ref());
                explained(solver, &mut cert, checks, deadline);
                return Ok(cert);
            }
            Ok(failed) => failed,
            Err(why) => return Err(first_failure.unwrap_or(why)),
        };
        let (k, answer) = &failed[0];
        first_failure.get_or_insert(format!(
            "the invariant failed its check on clause {k} ({answer:?}): not a proof"
        ));
        let heads: Option<Vec<NodeId>> = failed.iter().map(|(k, _)| enc.rules[*k].to).collect();
        match heads {
            Some(heads) if Instant::now() < deadline => cert.weaken(enc, &heads),
            // A query's clause failed: no weakening can mend that.
            _ => break,
        }
    }
    Err(first_failure.unwrap_or_default())
}

/// The invariants of `cert`, which passed its checks, in the program's
/// terms: as microc conditions if each has that form and, parsed back
/// from the text printed, they pass the checks again; else as the solver
/// defined them. Keeps the checks in `cert`, for [`simplify_explained`].
fn explained(
    solver: &Profile,
    cert: &mut Certificate,
    checks: certificate::Checks,
    deadline: Instant,
) {
    let _p = crate::deadline::phase("re-checking the invariant as printed");
    let checks = Arc::new(checks);
    cert.explained = cert.as_defined();
    let microc = cert.microc_clauses();
    if microc.iter().any(Option::is_some) && holds(solver, cert, &checks, &microc, deadline) {
        set_texts(cert, &microc);
    }
    cert.checks = Some(checks);
}

/// Each definition's clauses, where it has a microc form.
type MicrocForms = [Option<readable::Clauses>];

/// Whether `cert`, each definition that `microc` has a form for defined
/// by its condition (printed, then parsed back), passes `checks`.
fn holds(
    solver: &Profile,
    cert: &Certificate,
    checks: &certificate::Checks,
    microc: &MicrocForms,
    deadline: Instant,
) -> bool {
    let texts: Vec<Option<String>> = (microc.iter())
        .map(|c| c.as_ref().map(|c| readable::text_of(c)))
        .collect();
    let Some(again) = cert.defined_by(&texts, checks) else {
        return false;
    };
    let script = CheckScripts {
        z3: again.checks_with(&checks.clauses),
        cvc5: checks.named.as_ref().map(|n| again.checks_with(n)),
    };
    let failed = check(solver, &script, checks.count, deadline);
    matches!(failed, Ok(failed) if failed.is_empty())
}

fn set_texts(cert: &mut Certificate, microc: &MicrocForms) {
    for (inv, c) in cert.explained.iter_mut().zip(microc) {
        if let Some(c) = c {
            inv.text = readable::text_of(c);
            inv.microc = true;
        }
    }
}

/// A simpler invariant than the solver's, each step checked: every clause
/// of each condition dropped if the rest still passes the checks, then
/// every disjunction left replaced by one of its parts if that does. At
/// most [`SIMPLIFYING_CHECKS`] checks, within `deadline`.
pub fn simplify_explained(cert: &mut Certificate, deadline: Instant) {
    let Some(checks) = cert.checks.clone() else {
        return;
    };
    let Ok((solver, _)) = horn_solver() else {
        return;
    };
    if !cert.explained.iter().any(|i| i.microc) {
        return;
    }
    let _p = crate::deadline::phase("simplifying the invariant");
    let mut microc = cert.microc_clauses();
    let mut budget = SIMPLIFYING_CHECKS;
    let mut tried = |candidate: &MicrocForms| {
        budget > 0 && Instant::now() < deadline && {
            budget -= 1;
            holds(&solver, cert, &checks, candidate, deadline)
        }
    };
    for l in 0..microc.len() {
        let Some(clauses) = microc[l].clone() else {
            continue;
        };
        let mut kept = clauses;
        let mut j = 0;
        while j < kept.len() {
            let mut fewer = kept.clone();
            fewer.remove(j);
            let mut candidate = microc.clone();
            candidate[l] = Some(fewer.clone());
            if tried(&candidate) {
                kept = fewer;
            } else {
                j += 1;
            }
        }
        for j in 0..kept.len() {
            for d in kept[j].clone().into_iter().filter(|_| kept[j].len() > 1) {
                let mut one = kept.clone();
                one[j] = vec![d];
                let mut candidate = microc.clone();
                candidate[l] = Some(one.clone());
                if tried(&candidate) {
                    kept = one;
                    break;
                }
            }
        }
        microc[l] = Some(kept);
    }
    set_texts(cert, &microc);
}

/// The most checks [`simplify_explained`] runs.
const SIMPLIFYING_CHECKS: usize = 40;

/// Looks for inputs of a counterexample to `enc` by unrolling its clauses
/// (see [`unroll`]) in a warm session of the Horn solver, each candidate
/// judged by `judge`; also the unrolling sent, for `--dump-queries`.
pub fn find_counterexample<W>(
    enc: &Encoding,
    judge: impl Fn(&mut smt::Warm) -> Result<smt::Judgement<W>, String>,
    max_models: usize,
    deadline: Instant,
) -> (Search<W>, String) {
    let solver = match horn_solver() {
        Ok((solver, _)) => solver,
        Err(why) => return (Search::NotFound(why), String::new()),
    };
    let head = unrolling_head();
    match smt::Warm::start(&solver, Some(deadline), &head) {
        Ok(mut warm) => {
            warm.keep_transcript();
            let found = unroll::search(enc, &mut warm, judge, max_models);
            (found, format!("{head}\n{}", warm.transcript()))
        }
        Err(why) => (Search::NotFound(why), String::new()),
    }
}

/// The unrolling session's options: models, and definitions that outlive
/// the scope they were made in (the warm session's terms).
fn unrolling_head() -> String {
    let options = [("global-declarations", "true"), ("produce-models", "true")];
    let lines: Vec<String> = options
        .iter()
        .map(|(k, v)| smtlib::set_option(k, v))
        .collect();
    lines.join("\n")
}

/// Spacer's runs raced on the same clauses: its search depends so much
/// on its random seed that one seed may take ten times another's time on
/// the same query, and as much on its options (docs/horn-clauses.md, "The
/// solver"). The first definite answer wins; the other processes are
/// stopped. Each run starts `after` the race began (or as soon as the
/// runs before it have ended undecided), so that an easy query costs one
/// process, not three.
pub const SPACER_RUNS: [SpacerRun; 3] = [
    SpacerRun {
        options: FARKAS,
        seed: 0,
        after: Duration::ZERO,
    },
    // Global guidance proves in 60–400 ms the sums on which plain Farkas
    // lemmas run past 4 s; 100 ms lets the many queries that plain
    // Farkas answers at once end in one process.
    SpacerRun {
        options: GLOBAL,
        seed: 0,
        after: Duration::from_millis(100),
    },
    // Another seed, for the rare query where the first one wanders.
    SpacerRun {
        options: FARKAS,
        seed: 1,
        after: Duration::from_millis(1100),
    },
];

/// One run of Spacer in the race: its options, its seed, and how late it
/// starts.
pub struct SpacerRun {
    pub options: &'static [SolverOption],
    pub seed: u32,
    pub after: Duration,
}

/// A solver option: its keyword (without the colon) and its value.
type SolverOption = (&'static str, &'static str);

/// Interpolants from plain Farkas lemmas: the fastest on the corpus's
/// queries and on the generated programs'.
const FARKAS: &[SolverOption] = &[("fp.spacer.iuc.arith", "0")];

/// Global guidance: finds invariants with large constants the others do
/// not, and gives up on others.
const GLOBAL: &[SolverOption] = &[("fp.spacer.global", "true"), ("fp.spacer.iuc", "0")];

/// The scripts of [`SPACER_RUNS`], each with `extra` options too (for an
/// older Z3, Spacer's defaults with seeds 0, 1, 2), and when each starts.
fn spacer_runs(enc: &Encoding, newer: bool, extra: &[SolverOption]) -> Vec<(String, Duration)> {
    let option_sets: Vec<Vec<(&str, String)>> = (SPACER_RUNS.iter().enumerate())
        .map(|(i, run)| {
            let (options, seed) = if newer {
                (run.options, run.seed)
            } else {
                (&[][..], i as u32)
            };
            let mut run: Vec<(&str, String)> = (options.iter().chain(extra))
                .map(|&(key, value)| (key, value.to_string()))
                .collect();
            run.push(("fp.spacer.random_seed", seed.to_string()));
            run
        })
        .collect();
    let starts = SPACER_RUNS.iter().map(|run| run.after);
    enc.scripts(&option_sets).into_iter().zip(starts).collect()
}

/// Spacer's runs raced, each started at its time (or as soon as as many
/// runs have ended undecided): the first `sat` or `unsat` wins.
fn race_runs(solver: &Profile, runs: Vec<(String, Duration)>, deadline: Instant) -> smt::Reply {
    // Runs that ended undecided: the next one need not wait its turn.
    let ended = &AtomicUsize::new(0);
    let entrants = (runs.into_iter().enumerate())
        .map(|(i, (script, after))| {
            let start = Instant::now() + after;
            crate::deadline::Entrant::now(move || {
                let _ended = Ended(ended);
                while Instant::now() < start && ended.load(Ordering::SeqCst) < i {
                    crate::deadline::check();
                    std::thread::sleep(Duration::from_millis(5));
                }
                smt::run_script(solver, &script, left(deadline))
            })
        })
        .collect();
    let definite = |r: &smt::Reply| r.answer.is_definite();
    let race = || crate::deadline::race(entrants, definite, Duration::ZERO);
    let unknown = |why: String| smt::Reply {
        answer: Answer::Unknown(why),
        values: String::new(),
    };
    match crate::deadline::run(deadline, race) {
        Ok(crate::deadline::Finish::Definite(_, reply)) => reply,
        Ok(crate::deadline::Finish::Undecided { mut answers, .. }) => {
            answers.sort_by_key(|(i, _)| *i);
            match answers.pop() {
                Some((_, Ok(reply))) => reply,
                Some((_, Err(ended))) => unknown(ended.reason()),
                None => unknown("no run answered".into()),
            }
        }
        Err(t) => unknown(format!("timeout: {}", t.phase)),
    }
}

/// Counts a run as ended when it goes, however it goes.
struct Ended<'a>(&'a AtomicUsize);

impl Drop for Ended<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A definition of Spacer's with its quantifiers eliminated by Z3's `qe`
/// tactic (Spacer sometimes leaves `∃` in an invariant; the checks that
/// follow take quantifier-free formulas only, and judge the result).
fn eliminate_quantifiers(
    solver: &Profile,
    definition: &str,
    deadline: Instant,
) -> Result<String, String> {
    let script = model::elimination_script(definition).ok_or("not a definition")?;
    let goals = smt::run_for_output(solver, &script, left(deadline))?;
    model::definition_from_goals(definition, &goals)
}

/// A certificate's checks: for Z3, and for cvc5 with the clauses'
/// quotients named (`quotients`), where the clauses are nonlinear.
struct CheckScripts {
    z3: String,
    cvc5: Option<String>,
}

/// The clauses whose check did not answer `unsat`, with their answers
/// (none: the invariant holds); `Err` if the checks gave too few answers.
/// Nonlinear clauses (with a script for cvc5) go to Z3 and to cvc5 at
/// once, for at most [`NONLINEAR_CHECK`] each: cvc5's nonlinear integer
/// reasoning decides some that Z3's does not (a quotient of two state
/// values, docs/horn-clauses.md, "Bézout ghosts"). Either solver's `unsat`
/// makes a clause hold: each is sound alone.
fn check(
    solver: &Profile,
    scripts: &CheckScripts,
    clauses: usize,
    deadline: Instant,
) -> Result<Vec<(usize, Answer)>, String> {
    let answers = match &scripts.cvc5 {
        None => smt::run_batch(solver, &scripts.z3, clauses, left(deadline)),
        Some(named) => checked_by_either(solver, &scripts.z3, named, clauses, deadline),
    };
    let failed: Vec<(usize, Answer)> = (answers.iter().enumerate())
        .filter(|(_, a)| **a != Answer::Unsat)
        .map(|(k, a)| (k, a.clone()))
        .collect();
    if failed.is_empty() && answers.len() < clauses {
        return Err("the certificate checks gave too few answers".into());
    }
    Ok(failed)
}

/// How long each solver may take over one clause of nonlinear clauses.
const NONLINEAR_CHECK: Duration = Duration::from_millis(500);

/// Each clause's answer: `unsat` if Z3 (on `script`) or cvc5 (on `named`,
/// when it is installed) says so. The two race (`deadline::race_detached`):
/// when one proves every clause, the other is not waited for (its process
/// ends within its limit).
fn checked_by_either(
    solver: &Profile,
    script: &str,
    named: &str,
    clauses: usize,
    deadline: Instant,
) -> Vec<Answer> {
    let each = left(deadline).min(NONLINEAR_CHECK);
    let Some(cvc5) = smt::default_cvc5() else {
        return smt::run_batch_each(solver, script, clauses, each, left(deadline));
    };
    let entrants = [(solver.clone(), script), (cvc5, named)]
        .map(|(profile, text)| {
            let (text, wall) = (text.to_string(), left(deadline));
            Entrant::now(move || smt::run_batch_each(&profile, &text, clauses, each, wall))
        })
        .into();
    let proves_all = |answers: &Vec<Answer>| answers.iter().all(|a| *a == Answer::Unsat);
    match crate::deadline::race_detached(entrants, proves_all, Duration::ZERO) {
        Finish::Definite(_, answers) => answers,
        Finish::Undecided { answers, .. } => {
            let mut merged = vec![Answer::Unknown("no answer".into()); clauses];
            for (_, got) in answers {
                for (a, b) in merged.iter_mut().zip(got.into_iter().flatten()) {
                    *a = stronger(a, b);
                }
            }
            merged
        }
    }
}

/// Two solvers' answers on one clause: `sat` (a counterexample, which
/// fails the clause) over `unsat` over `unknown`. The two disagree only if
/// one of them is wrong, and then the clause is not taken to hold.
fn stronger(a: &Answer, b: Answer) -> Answer {
    match (a, &b) {
        (Answer::Sat, _) | (Answer::Unsat, Answer::Unknown(_)) => a.clone(),
        _ => b,
    }
}

fn left(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1))
}

#[cfg(test)]
mod tests;
