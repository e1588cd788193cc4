//! From "the clauses have a counterexample" to the inputs of one: the
//! clauses unrolled step by step, as bounded model checking in the warm
//! incremental session (docs/horn-clauses.md, "Counterexamples").
//!
//! Step `i` takes the state `s{i}_…` at location `l{i}` (a loop header,
//! or none yet at step 0) by one clause to `s{i+1}_…` at `l{i+1}`; the
//! query's clauses lead to location −1. At depth `k` the session asks
//! whether `l{k} = −1`, and a model's initial state (the encoding's own
//! state variables) holds main's arguments and the input stream. The
//! clauses over-approximate the runs, so a model is only a candidate: the
//! caller's judge replays it, and a rejected one is blocked.

use super::encode::{Encoding, Rule};
use crate::ir::{NodeId, VarId};
use crate::smt::{Answer, Judgement, Warm};
use crate::term::{Subst, TermId, Terms, Var, VarKind};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeSet;

/// The deepest unrolling tried: each step is one block between loop
/// headers, so this many loop iterations in all.
pub const MAX_STEPS: usize = 100;

/// The location of the query's head (`false`).
const QUERY: i64 = -1;

/// How a counterexample search ended.
#[derive(Debug)]
pub enum Search<W> {
    /// A candidate the judge accepted, and the depth it was found at.
    Found(W, usize),
    /// No accepted candidate, and why.
    NotFound(String),
}

/// Unrolls `enc` in `session` depth by depth up to [`MAX_STEPS`], asking
/// `judge` about up to `max_models` candidates per depth.
pub fn search<W>(
    enc: &Encoding,
    session: &mut Warm,
    judge: impl Fn(&mut Warm) -> Result<Judgement<W>, String>,
    max_models: usize,
) -> Search<W> {
    match deepen(enc, session, judge, max_models) {
        Ok(found) => found,
        Err(why) => Search::NotFound(why),
    }
}

/// Depth after depth: the step, then the query in a scope of its own.
fn deepen<W>(
    enc: &Encoding,
    solver: &mut Warm,
    judge: impl Fn(&mut Warm) -> Result<Judgement<W>, String>,
    max_models: usize,
) -> Result<Search<W>, String> {
    let mut unrolling = Unrolling::new(enc);
    for k in 0..unrolling.states[0].len() {
        let t = unrolling.terms.var(unrolling.states[0][k]);
        solver.declare(&unrolling.terms, t);
    }
    // Blocked inputs stay blocked at every depth: a replay is a whole run.
    let mut blocks: Vec<String> = Vec::new();
    let mut last_miss = String::new();
    for depth in 1..=MAX_STEPS {
        crate::deadline::check();
        let Some(step) = unrolling.step(depth - 1) else {
            let why = format!(
                "every path of the clauses (none has more than {} blocks) was tried, and none replayed{last_miss}",
                depth - 1
            );
            return Ok(Search::NotFound(why));
        };
        solver.assert(&unrolling.terms, step);
        solver.push();
        let at_query = unrolling.at_location(depth, QUERY);
        solver.assert(&unrolling.terms, at_query);
        blocks.iter().for_each(|b| solver.raw(b));
        for _ in 0..max_models.max(1) {
            match solver.check() {
                Answer::Unsat => break,
                Answer::Unknown(why) => return Err(format!("{why} at depth {depth}")),
                Answer::Sat => {}
            }
            match judge(solver)? {
                Judgement::Accept(w) => return Ok(Search::Found(w, depth)),
                Judgement::Reject { block, why } => {
                    last_miss = format!(" (the last candidate did not replay: {why})");
                    solver.raw(&block);
                    blocks.push(block);
                }
            }
        }
        solver.pop(1);
    }
    let why = format!("no replayable counterexample within {MAX_STEPS} steps{last_miss}");
    Ok(Search::NotFound(why))
}

/// The SMT name of a variable's value in the initial state, if the
/// clauses keep it: what a model says main's argument (or the input
/// stream) `v` was.
pub fn initial_symbol(enc: &Encoding, v: VarId) -> Option<String> {
    let slot = enc.value_slot(v)?;
    Some(crate::smt::smtlib::name(&enc.terms, enc.state[slot].var))
}

/// The clauses as steps, and which locations each step can be at.
struct Unrolling<'a> {
    enc: &'a Encoding,
    /// The encoding's terms, and the steps' variables and formulas.
    terms: Terms,
    /// The state at each step so far (step 0: the encoding's own).
    states: Vec<Vec<Var>>,
    /// The location variable of each step.
    locations: Vec<Var>,
    /// The locations reachable at the current step (none before the first).
    at: BTreeSet<Option<NodeId>>,
}

impl<'a> Unrolling<'a> {
    fn new(enc: &'a Encoding) -> Unrolling<'a> {
        let mut terms = enc.terms.clone();
        let l0 = terms.new_var(VarKind::Symbol, "l0");
        Unrolling {
            enc,
            terms,
            states: vec![enc.state_vars()],
            locations: vec![l0],
            at: BTreeSet::from([None]),
        }
    }

    /// `l{i} = location`.
    fn at_location(&mut self, i: usize, location: i64) -> TermId {
        let l = self.terms.var(self.locations[i]);
        let k = self.terms.int(location);
        self.terms.eq(l, k)
    }

    /// Step `i`: one clause leads from state `i` to state `i + 1` (made
    /// now); `None` when no clause can be taken from any location
    /// reachable at step `i`.
    fn step(&mut self, i: usize) -> Option<TermId> {
        let rules: Vec<&Rule> = (self.enc.rules.iter())
            .filter(|r| self.at.contains(&r.from))
            .collect();
        if rules.is_empty() {
            return None;
        }
        let next: Vec<Var> = (self.enc.state.iter())
            .map(|s| {
                let name = format!("s{}_{}", i + 1, self.terms.var_name(s.var));
                self.terms.new_var(s.var.kind, name)
            })
            .collect();
        self.states.push(next);
        let l = self.terms.new_var(VarKind::Symbol, format!("l{}", i + 1));
        self.locations.push(l);
        let choices = (rules.iter().enumerate())
            .map(|(j, r)| self.taking(r, i, j))
            .collect();
        self.at = rules.iter().filter_map(|r| r.to.map(Some)).collect();
        Some(self.terms.or(choices))
    }

    /// Clause `r` taken at step `i` (as the `j`-th choice): its state read
    /// at step `i`, its unknowns copied for this choice.
    fn taking(&mut self, r: &Rule, i: usize, j: usize) -> TermId {
        let mut at_step = Subst::new();
        let mut bound = HashSet::default();
        for k in 0..self.states[0].len() {
            let (v, s) = (self.states[0][k], self.states[i][k]);
            let s = self.terms.var(s);
            at_step.bind(v, s);
            bound.insert(v);
        }
        for v in r.vars.iter().filter(|v| !bound.contains(*v)) {
            let name = format!("c{i}_{j}_{}", self.terms.var_name(*v));
            let copy = self.terms.new_var(v.kind, name);
            let copy = self.terms.var(copy);
            at_step.bind(*v, copy);
        }
        // One memo for the rule: its guards and arguments share subterms.
        let mut memo = HashMap::default();
        let mut parts = Vec::new();
        if let Some(from) = r.from {
            parts.push(self.at_location(i, i64::from(from)));
        }
        for g in &r.guards {
            parts.push(at_step.apply_memo(&mut self.terms, *g, &mut memo));
        }
        match r.to {
            Some(to) => {
                parts.push(self.at_location(i + 1, i64::from(to)));
                let arity = self.states[i + 1].len();
                for (k, a) in r.args.iter().take(arity).enumerate() {
                    let s = self.terms.var(self.states[i + 1][k]);
                    let a = at_step.apply_memo(&mut self.terms, *a, &mut memo);
                    parts.push(self.terms.eq(s, a));
                }
            }
            None => parts.push(self.at_location(i + 1, QUERY)),
        }
        self.terms.and(parts)
    }
}
