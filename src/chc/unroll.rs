//! From "the clauses have a counterexample" to the inputs of one: the
//! clauses unrolled step by step, as bounded model checking in a plain
//! SMT session (docs/horn-clauses.md, "Counterexamples").
//!
//! Step `i` takes the state `s{i}_…` at location `l{i}` (a loop header,
//! or none yet at step 0) by one clause to `s{i+1}_…` at `l{i+1}`; the
//! query's clauses lead to location −1. At depth `k` the session asks
//! whether `l{k} = −1`, and a model's initial state `s0_…` holds main's
//! arguments and the input stream. The clauses over-approximate the runs,
//! so a model is only a candidate: the caller's judge replays it, and a
//! rejected one is blocked.

use super::encode::{Encoding, Rule};
use crate::ir::{NodeId, VarId};
use crate::smt::{Answer, Judgement, Session};
use std::collections::BTreeSet;
use std::fmt::Write;

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
/// `judge` about up to `max_models` candidates per depth. `transcript`
/// receives every command sent, for `--dump-queries`.
pub fn search<W>(
    enc: &Encoding,
    session: &mut Session,
    judge: impl Fn(&mut Session) -> Result<Judgement<W>, String>,
    max_models: usize,
    transcript: &mut String,
) -> Search<W> {
    let mut solver = Transcribed {
        session,
        transcript,
    };
    match deepen(enc, &mut solver, judge, max_models) {
        Ok(found) => found,
        Err(why) => Search::NotFound(why),
    }
}

/// Depth after depth: the step, then the query in a frame of its own.
fn deepen<W>(
    enc: &Encoding,
    solver: &mut Transcribed,
    judge: impl Fn(&mut Session) -> Result<Judgement<W>, String>,
    max_models: usize,
) -> Result<Search<W>, String> {
    let mut unrolling = Unrolling::new(enc);
    solver.send(unrolling.preamble())?;
    // Blocked inputs stay blocked at every depth: a replay is a whole run.
    let mut blocks = String::new();
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
        solver.send(format!(
            "{step}(push 1)\n(assert (= l{depth} {QUERY}))\n{blocks}"
        ))?;
        for _ in 0..max_models.max(1) {
            match solver.check() {
                Answer::Unsat => break,
                Answer::Unknown(why) => return Err(format!("{why} at depth {depth}")),
                Answer::Sat => {}
            }
            match judge(solver.session)? {
                Judgement::Accept(w) => return Ok(Search::Found(w, depth)),
                Judgement::Reject { block, why } => {
                    last_miss = format!(" (the last candidate did not replay: {why})");
                    solver.send(format!("{block}\n"))?;
                    blocks.push_str(&block);
                    blocks.push('\n');
                }
            }
        }
        solver.send("(pop 1)\n".into())?;
    }
    let why = format!("no replayable counterexample within {MAX_STEPS} steps{last_miss}");
    Ok(Search::NotFound(why))
}

/// A session that keeps what it was sent.
struct Transcribed<'s> {
    session: &'s mut Session,
    transcript: &'s mut String,
}

impl Transcribed<'_> {
    fn send(&mut self, text: String) -> Result<(), String> {
        self.transcript.push_str(&text);
        self.session.send(&text)
    }

    fn check(&mut self) -> Answer {
        self.transcript.push_str("(check-sat)\n");
        self.session.check()
    }
}

/// The SMT name of a variable's value in the initial state, if the
/// clauses keep it: what a model says main's argument (or the input
/// stream) `v` was.
pub fn initial_symbol(enc: &Encoding, v: VarId) -> Option<String> {
    enc.value_name(v).map(|name| format!("s0_{name}"))
}

/// The clauses as steps, and which locations each step can be at.
struct Unrolling<'a> {
    enc: &'a Encoding,
    /// The locations reachable at the current step (none before the first).
    at: BTreeSet<Option<NodeId>>,
}

impl<'a> Unrolling<'a> {
    fn new(enc: &'a Encoding) -> Unrolling<'a> {
        Unrolling {
            enc,
            at: BTreeSet::from([None]),
        }
    }

    /// The helper definitions and the initial state.
    fn preamble(&self) -> String {
        let mut out = String::from("(set-option :produce-models true)\n");
        let _ = writeln!(out, "; state: {}", self.enc.legend());
        out.push_str(&self.enc.definitions());
        out.push_str(&self.declare_state(0));
        out
    }

    fn declare_state(&self, i: usize) -> String {
        let mut out = format!("(declare-const l{i} Int)\n");
        for v in &self.enc.state {
            let _ = writeln!(out, "(declare-const s{i}_{} {})", v.name, v.sort);
        }
        out
    }

    /// Step `i`: the next state's declarations and the assertion that one
    /// clause leads from state `i` to it; `None` when no clause can be
    /// taken from any location reachable at step `i`.
    fn step(&mut self, i: usize) -> Option<String> {
        let rules: Vec<&Rule> = (self.enc.rules.iter())
            .filter(|r| self.at.contains(&r.from))
            .collect();
        if rules.is_empty() {
            return None;
        }
        let mut out = self.declare_state(i + 1);
        let mut choices = Vec::new();
        for (j, r) in rules.iter().enumerate() {
            choices.push(self.taking(r, i, j, &mut out));
        }
        let _ = writeln!(out, "(assert (or {}))", choices.join("\n  "));
        self.at = rules.iter().filter_map(|r| r.to.map(Some)).collect();
        Some(out)
    }

    /// Clause `r` taken at step `i` (as the `j`-th choice): its unknowns
    /// declared in `out`, and the formula returned.
    fn taking(&self, r: &Rule, i: usize, j: usize, out: &mut String) -> String {
        let state: Vec<&str> = self.enc.state.iter().map(|v| v.name.as_str()).collect();
        let mut binds: Vec<String> = state.iter().map(|n| format!("({n} s{i}_{n})")).collect();
        for (name, sort) in r.vars.iter().filter(|(n, _)| !state.contains(&n.as_str())) {
            let copy = format!("c{i}_{j}_{name}");
            let _ = writeln!(out, "(declare-const {copy} {sort})");
            binds.push(format!("({name} {copy})"));
        }
        let mut parts = Vec::new();
        if let Some(from) = r.from {
            parts.push(format!("(= l{i} {from})"));
        }
        parts.extend(r.guards.iter().cloned());
        match r.to {
            Some(to) => {
                parts.push(format!("(= l{} {to})", i + 1));
                for (n, a) in state.iter().zip(&r.args) {
                    parts.push(format!("(= s{}_{n} {a})", i + 1));
                }
            }
            None => parts.push(format!("(= l{} {QUERY})", i + 1)),
        }
        if binds.is_empty() {
            format!("(and {})", parts.join(" "))
        } else {
            format!("(let ({}) (and {}))", binds.join(" "), parts.join(" "))
        }
    }
}
