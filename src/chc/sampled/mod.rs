//! Invariants from runs, for clauses that multiply unknowns
//! (docs/horn-clauses.md, "Invariants from runs"), after Sharma et al.,
//! *A Data Driven Approach for Algebraic Loop Invariants* (ESOP 2013):
//!
//! 1. [`runs`]: the clauses are run from random starts, and the states
//!    at each loop header kept;
//! 2. candidates per header: the equalities over monomials of degree up
//!    to 3 that hold on every sample ([`algebra`], exact), and the
//!    octagonal bounds (`x ± y ≤ c`) the samples meet;
//! 3. Houdini: a candidate that does not follow, along some clause into
//!    its header, from the candidates at the clause's start is dropped,
//!    until what is left is inductive;
//! 4. what is left is a certificate, which the caller checks clause by
//!    clause like any other before it says `unreachable`. A candidate the
//!    solver does not prove is never used.

mod algebra;
mod facts;
mod runs;

pub use facts::header_facts;

use super::certificate::Certificate;
use super::encode::Encoding;
use super::left;
use crate::ir::NodeId;
use crate::smt::horn::{self, Consequences};
use crate::smt::{self, Answer, Profile};
use crate::term::{Node, Subst, TermId, Terms, Var, VarKind};
use num_bigint::BigInt;
use num_traits::Zero;
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::time::{Duration, Instant};

/// The most monomials a header's equalities range over: degree 3 over 5
/// variables, 2 over 9. More candidates cost more checks, nonlinear ones,
/// each round.
const MAX_MONOMIALS: usize = 56;
/// Headers with more integer slots than this get no pairwise bounds.
const MAX_PAIRED: usize = 6;
/// Clauses with more integer slots than this are not sampled: their
/// candidates would be too many to check.
pub(super) const MAX_SLOTS: usize = 12;
/// The highest degree of a monomial.
const MAX_DEGREE: u8 = 3;
/// The most samples per header the algebra takes: the elimination costs
/// rows × columns², in big integers.
const MAX_POINTS: usize = 200;

/// At most `n` of `points`, evenly spread over them (they are sorted, so
/// the small and the large values both stay).
fn spread(points: &[Vec<i128>], n: usize) -> Vec<Vec<i128>> {
    if points.len() <= n {
        return points.to_vec();
    }
    (0..n)
        .map(|k| points[k * points.len() / n].clone())
        .collect()
}

/// Z3's time for one consequence check.
const CHECK_MS: u64 = 250;

/// Whether some product or quotient in the clauses multiplies two values
/// of the state (`s = n·n`), not only unknowns read on the way (`input /
/// input`): only then may a polynomial over the state be the invariant
/// that is missing.
pub(super) fn multiplies_state(enc: &Encoding) -> bool {
    let state: HashSet<Var> = enc.state.iter().map(|s| s.var).collect();
    let roots: Vec<TermId> = (enc.rules.iter())
        .flat_map(|r| r.guards.iter().chain(&r.args).copied())
        .collect();
    // Per term, bottom up (linear in the clauses' DAG): whether it reads a
    // slot of the state, and whether it reads anything else.
    let mut reads: HashMap<TermId, (bool, bool)> = HashMap::default();
    let of_state = |reads: &HashMap<TermId, (bool, bool)>, t: &TermId| reads[t] == (true, false);
    for t in enc.terms.post_order(&roots) {
        let node = enc.terms.node(t);
        if let Node::Mul(a, b) | Node::Div(a, b) = node
            && of_state(&reads, a)
            && of_state(&reads, b)
        {
            return true;
        }
        let here = match node {
            Node::Var(v) => (state.contains(v), !state.contains(v)),
            Node::Star => (false, true),
            _ => (enc.terms.children(node).iter()).fold((false, false), |(s, o), c| {
                let (cs, co) = reads[c];
                (s || cs, o || co)
            }),
        };
        reads.insert(t, here);
    }
    false
}

/// The candidates that survived, as a certificate for the caller to check;
/// or why there is none.
/// The last round of checks is left in `script` (for `--dump-queries`).
/// `extra`: more candidates per header, besides those the runs suggest.
pub(super) fn invariant(
    enc: &Encoding,
    extra: &HashMap<NodeId, Vec<TermId>>,
    solver: &Profile,
    deadline: Instant,
    script: &mut Option<String>,
) -> Result<Certificate, String> {
    let checks = Checks {
        solver,
        deadline,
        script,
    };
    let (mut terms, candidates) = inductive(enc, extra, checks, Sampling::UntilTheError)?;
    let definitions = (enc.predicates.iter())
        .map(|&h| {
            let body = terms.and(candidates[&h].clone());
            horn::definition(&terms, &enc.relation(h), body)
        })
        .collect();
    Ok(Certificate {
        definitions,
        context: super::certificate::Context::of(enc),
        explained: vec![],
        checks: None,
    })
}

/// Whether a sampled run that reaches the error ends the search: it does
/// for a proof (the target is reachable), not for facts at the headers
/// (the states sampled before the error are states of runs all the same).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sampling {
    UntilTheError,
    PastTheError,
}

/// The candidates at each header that Houdini keeps (inductive), in a
/// copy of the encoding's terms.
fn inductive(
    enc: &Encoding,
    extra: &HashMap<NodeId, Vec<TermId>>,
    mut checks: Checks,
    sampling: Sampling,
) -> Result<(Terms, HashMap<NodeId, Vec<TermId>>), String> {
    let deadline = checks.deadline;
    let ints = (enc.state.iter())
        .filter(|s| Terms::var_sort(s.var) == crate::term::Sort::Int)
        .count();
    if ints > MAX_SLOTS {
        return Err(format!("{ints} integer slots, more than {MAX_SLOTS}"));
    }
    let mut rng = SmallRng::seed_from_u64(0x5eed);
    let budget = runs::Budget {
        runs: 64,
        steps_per_run: 400,
        starts: 64,
        until: Instant::now() + left(deadline).min(Duration::from_millis(300)),
    };
    let samples = runs::sample(enc, &mut rng, &budget);
    if samples.reached_error && sampling == Sampling::UntilTheError {
        return Err("a run of the clauses reaches the error".into());
    }
    let mut terms = enc.terms.clone();
    let ints: Vec<Var> = (samples.int_slots.iter())
        .map(|&k| enc.state[k].var)
        .collect();
    let mut candidates: HashMap<NodeId, Vec<TermId>> = HashMap::default();
    for &h in &enc.predicates {
        let points: Vec<Vec<i128>> = samples.at.get(&h).into_iter().flatten().cloned().collect();
        let mut guessed = guesses(&mut terms, &ints, &points);
        guessed.extend(extra.get(&h).into_iter().flatten());
        candidates.insert(h, guessed);
    }
    houdini(
        &mut terms,
        enc,
        &samples.int_slots,
        &mut candidates,
        &mut checks,
    )?;
    Ok((terms, candidates))
}

/// The candidates at one header from its sampled states: each variable
/// constant on them as an equality, the equalities over monomials of the
/// others, and their octagonal bounds.
fn guesses(terms: &mut Terms, vars: &[Var], points: &[Vec<i128>]) -> Vec<TermId> {
    if points.is_empty() {
        return vec![];
    }
    let mut out = Vec::new();
    let mut moving = Vec::new();
    for (k, v) in vars.iter().enumerate() {
        let first = points[0][k];
        if points.iter().all(|p| p[k] == first) {
            let (x, c) = (terms.var(*v), terms.int(first));
            out.push(terms.eq(x, c));
        } else {
            moving.push(k);
        }
    }
    let moving_vars: Vec<Var> = moving.iter().map(|&k| vars[k]).collect();
    let projected: Vec<Vec<i128>> = (points.iter())
        .map(|p| moving.iter().map(|&k| p[k]).collect())
        .collect();
    out.extend(equalities(terms, &moving_vars, &projected));
    out.extend(bounds(terms, &moving_vars, &projected));
    out
}

/// The highest degree whose monomials over `vars` variables stay within
/// [`MAX_MONOMIALS`] and below the number of samples (fewer samples than
/// monomials leave equalities that only the few samples satisfy).
fn degree_for(vars: usize, samples: usize) -> u8 {
    (1..=MAX_DEGREE)
        .rev()
        .find(|&d| {
            let count = algebra::monomial_count(vars, d);
            count <= MAX_MONOMIALS && count < samples
        })
        .unwrap_or(0)
}

/// `Σ cₘ·m = 0` for each vector of the null space of [`MAX_POINTS`]
/// samples that holds on ten times as many.
fn equalities(terms: &mut Terms, vars: &[Var], points: &[Vec<i128>]) -> Vec<TermId> {
    let some = spread(points, MAX_POINTS);
    let degree = degree_for(vars.len(), some.len());
    if vars.is_empty() || degree == 0 {
        return vec![];
    }
    let monomials = algebra::monomials(vars.len(), degree);
    let zero = terms.int(0);
    // Checked on more of them, not all: the rest is Houdini's.
    let more = spread(points, 10 * MAX_POINTS);
    let holds = |c: &Vec<BigInt>| {
        (more.iter()).all(|p| {
            crate::deadline::tick();
            let sum: BigInt = (monomials.iter().zip(c))
                .filter(|(_, c)| !c.is_zero())
                .map(|(m, c)| c * algebra::value(m, p))
                .sum();
            sum.is_zero()
        })
    };
    (algebra::equalities(vars.len(), degree, &some).into_iter())
        .filter(holds)
        .map(|coefficients| {
            let summands: Vec<(BigInt, TermId)> = (monomials.iter().zip(coefficients))
                .filter(|(_, c)| !c.is_zero())
                .map(|(m, c)| (c, monomial_term(terms, vars, m)))
                .collect();
            let sum = summands.into_iter().fold(zero, |acc, (c, m)| {
                let scaled = terms.scale(c, m);
                terms.add(acc, scaled)
            });
            terms.eq(sum, zero)
        })
        .collect()
}

fn monomial_term(terms: &mut Terms, vars: &[Var], m: &algebra::Monomial) -> TermId {
    let mut product = terms.int(1);
    for (v, e) in vars.iter().zip(m) {
        for _ in 0..*e {
            let x = terms.var(*v);
            product = terms.mul(product, x);
        }
    }
    product
}

/// `x ≥ min`, `x ≤ max` for each variable, and `x − y`, `x + y` between
/// their least and greatest sampled values for each pair.
fn bounds(terms: &mut Terms, vars: &[Var], points: &[Vec<i128>]) -> Vec<TermId> {
    let mut forms: Vec<Vec<(i64, usize)>> = (0..vars.len()).map(|k| vec![(1, k)]).collect();
    let paired = if vars.len() <= MAX_PAIRED {
        vars.len()
    } else {
        0
    };
    for x in 0..paired {
        for y in x + 1..paired {
            forms.push(vec![(1, x), (-1, y)]);
            forms.push(vec![(1, x), (1, y)]);
        }
    }
    let mut out = Vec::new();
    for form in forms {
        let value = |p: &Vec<i128>| -> i128 { form.iter().map(|(k, x)| *k as i128 * p[*x]).sum() };
        let (lo, hi) = (
            points.iter().map(value).min(),
            points.iter().map(value).max(),
        );
        let (Some(lo), Some(hi)) = (lo, hi) else {
            continue;
        };
        let summands: Vec<(BigInt, TermId)> = (form.iter())
            .map(|(k, x)| (BigInt::from(*k), terms.var(vars[*x])))
            .collect();
        let t = terms.sum(BigInt::zero(), summands);
        let (lo, hi) = (terms.int(lo), terms.int(hi));
        out.push(terms.ge(t, lo));
        out.push(terms.le(t, hi));
    }
    out
}

/// Drops, round by round, each candidate that does not follow along some
/// clause into its header from the candidates at the clause's start
/// (and its guards), until none is dropped: what is left is inductive.
fn houdini(
    terms: &mut Terms,
    enc: &Encoding,
    int_slots: &[usize],
    candidates: &mut HashMap<NodeId, Vec<TermId>>,
    checks: &mut Checks,
) -> Result<(), String> {
    let deadline = checks.deadline;
    let post: Vec<Var> = (int_slots.iter())
        .map(|k| terms.new_var(VarKind::Fresh, format!("post!{k}")))
        .collect();
    let mut after = Subst::new();
    for (k, p) in int_slots.iter().zip(&post) {
        let t = terms.var(*p);
        after.bind(enc.state[*k].var, t);
    }
    loop {
        if Instant::now() >= deadline {
            return Err("timeout: invariants from runs".into());
        }
        let (frames, goals) = frames(terms, enc, int_slots, &post, &after, candidates);
        if goals.is_empty() {
            return Ok(());
        }
        let answers = checks.run(terms, &frames);
        let mut failed: Vec<(NodeId, TermId)> = (goals.iter().zip(&answers))
            .filter(|(_, a)| **a != Answer::Unsat)
            .map(|(g, _)| *g)
            .collect();
        if failed.is_empty() {
            return Ok(());
        }
        failed.sort_unstable();
        failed.dedup();
        for (h, c) in failed {
            candidates.entry(h).or_default().retain(|x| *x != c);
        }
    }
}

/// Where the consequence checks go, until when, and the last script.
struct Checks<'a> {
    solver: &'a Profile,
    deadline: Instant,
    script: &'a mut Option<String>,
}

impl Checks<'_> {
    /// Each goal's answer, in order.
    fn run(&mut self, terms: &Terms, frames: &[Consequences]) -> Vec<Answer> {
        let (script, count) = horn::consequence_checks(terms, frames, CHECK_MS);
        let answers = smt::run_batch(self.solver, &script, count, left(self.deadline));
        *self.script = Some(script);
        answers
    }
}

/// Per clause into a header with candidates: the hypothesis (its guards,
/// the candidates at its start, the state after it named by `post`), and
/// each candidate at its end over `post` as a goal; also which candidate
/// each goal is.
fn frames(
    terms: &mut Terms,
    enc: &Encoding,
    int_slots: &[usize],
    post: &[Var],
    after: &Subst,
    candidates: &HashMap<NodeId, Vec<TermId>>,
) -> (Vec<Consequences>, Vec<(NodeId, TermId)>) {
    let mut frames = Vec::new();
    let mut goals = Vec::new();
    for rule in &enc.rules {
        let Some(to) = rule.to else { continue };
        let wanted = candidates.get(&to).cloned().unwrap_or_default();
        if wanted.is_empty() {
            continue;
        }
        let mut hypotheses = rule.guards.clone();
        if let Some(from) = rule.from {
            hypotheses.extend(candidates.get(&from).into_iter().flatten());
        }
        for (k, p) in int_slots.iter().zip(post) {
            let p = terms.var(*p);
            hypotheses.push(terms.eq(p, rule.args[*k]));
        }
        let mut vars = rule.vars.clone();
        vars.extend(post);
        frames.push(Consequences {
            vars,
            hypothesis: terms.and(hypotheses),
            goals: wanted.iter().map(|c| after.apply(terms, *c)).collect(),
            origin: rule.origin.clone(),
        });
        goals.extend(wanted.iter().map(|c| (to, *c)));
    }
    (frames, goals)
}
