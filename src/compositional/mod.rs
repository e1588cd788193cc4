//! Compositional symbolic execution (Vanoverberghe and Piessens, *Precise
//! and Progressing Compositional Symbolic Execution*;
//! `docs/compositional-se.md`): per-function leaf summaries, one-step
//! calls through the rc/rv symbols, their interpretations recomputed from
//! the finished leaves at every check, the invocation graph, checks by
//! globalisation, revivals (`rec`, `rer`) and a fair FIFO choice. Precise
//! (what it calls reachable is, and the interpreter replays it) and
//! progressing (every reachable state is eventually found).
//!
//! - [`program`]: the functions, their "globals" interfaces and symbols,
//!   what the engine cannot encode exactly (it says `unsupported`);
//! - [`state`]: the analysis state, `rec` and `rer`;
//! - [`interpret`]: symbolic interpretation (SyInt);
//! - [`reach`]: Check, globalisation and the interpretations in SMT-LIB;
//! - [`witness`]: a reached target's witness and its replay;
//! - [`decider`]: the engine of the contract ([`Compositional`]);
//! - here: the options, the run loop (Step), its limits and statistics.
//!
//! Knows the front end (through `db`), the IR, terms, the solver layer and
//! witnesses; not the other engines.

pub mod decider;
mod interpret;
mod program;
mod reach;
mod state;
mod witness;

#[cfg(test)]
mod tests;

pub use decider::Compositional;

use crate::db::{Database, SourceFile, Target};
use crate::interp::Witness;
use crate::smt::Answer;
use crate::smt::Profile;
use crate::term::Terms;
use interpret::Interpreter;
use program::Subject;
use reach::Reach;
pub use state::Stat;
use state::{Analysis, Leaf};
use std::time::{Duration, Instant};

pub struct Options {
    pub solver: Profile,
    /// Most steps (chosen leaves).
    pub max_steps: u64,
    pub timeout: Option<Duration>,
    /// Stop when this target is reached.
    pub goal: Option<Target>,
    /// Keep every leaf and invocation, printed, in the outcome.
    pub show: bool,
}

impl Options {
    pub fn new(solver: Profile) -> Options {
        Options {
            solver,
            max_steps: u64::MAX,
            timeout: None,
            goal: None,
            show: false,
        }
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// No unknown leaf is left: every target not reached is unreachable.
    Terminated,
    /// The goal was reached.
    GoalReached,
    /// Stopped before the end (a limit, the deadline, the solver): proves
    /// reachability only.
    Stopped(String),
}

/// A target a leaf in rs stands at, with the replayed witness.
#[derive(Clone, Debug)]
pub struct Reached {
    pub target: Target,
    pub witness: Witness,
    /// The step that reached it.
    pub step: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub steps: u64,
    /// Solver queries (one per step at most).
    pub queries: u64,
    /// Checks decided without the solver (no invocation yet).
    pub trivial_checks: u64,
    pub solver_time: Duration,
    /// Bytes of SMT-LIB sent to the solver.
    pub smt_bytes: u64,
    /// Solver `unknown`s (each leaf stayed unknown and was re-queued).
    pub unknown_answers: u64,
    /// Unreachable leaves made unknown again by `rec` and `rer`.
    pub revived: u64,
    pub invocations: u64,
    /// Reached error leaves whose witness did not replay (a bug if ever
    /// non-zero; such a target is never called reachable).
    pub replay_failures: Vec<String>,
    pub elapsed: Duration,
}

/// One function's summary at the end of a run.
#[derive(Clone, Debug)]
pub struct FunctionSummary {
    pub name: String,
    pub unknown: usize,
    pub finished: usize,
    pub unreachable: usize,
    pub failed: usize,
    /// Leaves that passed their check (rs).
    pub in_rs: u64,
    /// Invocations of this function.
    pub invoked: usize,
    /// The deepest leaf (steps from the entry).
    pub depth: u32,
}

/// A leaf as `apc compositional --show` prints it.
#[derive(Clone, Debug)]
pub struct ShownLeaf {
    pub function: String,
    pub stat: Stat,
    /// The flowgraph vertex (`apc cfg` numbers them).
    pub node: u32,
    pub depth: u32,
    pub pc: String,
}

/// An invocation ⟨caller, callee, ς_G, pc⟩, printed.
#[derive(Clone, Debug)]
pub struct ShownInvocation {
    pub caller: String,
    pub callee: String,
    pub globals: Vec<String>,
    pub pc: String,
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub reached: Vec<Reached>,
    pub end: End,
    pub stats: Stats,
    pub functions: Vec<FunctionSummary>,
    /// With `Options::show`: every leaf, function by function.
    pub leaves: Vec<ShownLeaf>,
    /// With `Options::show`: the invocation graph.
    pub invocations: Vec<ShownInvocation>,
}

/// Runs the engine on the file's program; `Err` if it cannot (the
/// program is outside the engine: `unsupported: …`, or no solver).
pub fn run(db: &Database, file: SourceFile, opts: &Options) -> Result<Outcome, String> {
    let started = Instant::now();
    let _phase = crate::deadline::phase("compositional execution");
    let mut terms = Terms::new();
    let subject = Subject::new(db, file, &mut terms)?;
    let deadline = opts.timeout.map(|t| started + t);
    let solver_deadline = match (deadline, crate::deadline::current()) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let reach = Reach::start(&opts.solver, &subject, &terms, solver_deadline)?;
    let mut run = Run::new(&subject, terms, reach);
    let end = run.drive(opts, deadline);
    let mut stats = run.stats;
    let asked = run.reach.stats();
    stats.queries = asked.checks;
    stats.trivial_checks = run.reach.trivial;
    stats.solver_time = asked.time;
    stats.smt_bytes = asked.sent;
    stats.revived = run.analysis.revived;
    stats.invocations = run.analysis.invs.len() as u64;
    stats.elapsed = started.elapsed();
    let functions = summaries(&subject, &run.analysis);
    let (leaves, invocations) = if opts.show {
        shown(&subject, &run.analysis, &run.terms)
    } else {
        Default::default()
    };
    Ok(Outcome {
        reached: run.reached,
        end,
        stats,
        functions,
        leaves,
        invocations,
    })
}

fn shown(subject: &Subject, a: &Analysis, terms: &Terms) -> (Vec<ShownLeaf>, Vec<ShownInvocation>) {
    let name = |f: usize| subject.funcs[f].body.name.clone();
    let mut leaves = Vec::new();
    for (f, sum) in a.sums.iter().enumerate() {
        leaves.extend(sum.iter().map(|l| ShownLeaf {
            function: name(f),
            stat: l.stat,
            node: l.node,
            depth: l.depth,
            pc: terms.show(l.pc),
        }));
    }
    let invocations = a
        .invs
        .iter()
        .map(|i| ShownInvocation {
            caller: name(i.caller),
            callee: name(i.callee),
            globals: i.args.iter().map(|t| terms.show(*t)).collect(),
            pc: terms.show(i.pc),
        })
        .collect();
    (leaves, invocations)
}

fn summaries(subject: &Subject, a: &Analysis) -> Vec<FunctionSummary> {
    subject
        .funcs
        .iter()
        .enumerate()
        .map(|(f, func)| {
            let [unknown, finished, unreachable, failed] = a.counts(f);
            let in_rs = a.rs[f];
            FunctionSummary {
                name: func.body.name.clone(),
                unknown,
                finished,
                unreachable,
                failed,
                in_rs,
                invoked: a.into[f].len(),
                depth: a.sums[f].iter().map(|l| l.depth).max().unwrap_or(0),
            }
        })
        .collect()
}

/// One run: the analysis state, the terms and the solver.
struct Run<'a> {
    subject: &'a Subject,
    terms: Terms,
    analysis: Analysis,
    reach: Reach,
    reached: Vec<Reached>,
    stats: Stats,
}

impl<'a> Run<'a> {
    fn new(subject: &'a Subject, mut terms: Terms, reach: Reach) -> Run<'a> {
        let entries: Vec<Leaf> = {
            let mut it = Interpreter {
                subject,
                terms: &mut terms,
            };
            (0..subject.funcs.len()).map(|f| it.entry(f)).collect()
        };
        Run {
            subject,
            terms,
            analysis: Analysis::new(entries),
            reach,
            reached: Vec::new(),
            stats: Stats::default(),
        }
    }

    /// Steps until no unknown leaf is left, the goal is reached, or a limit.
    fn drive(&mut self, opts: &Options, deadline: Option<Instant>) -> End {
        loop {
            crate::deadline::check();
            if self.analysis.queue.is_empty() {
                return End::Terminated;
            }
            if self.stats.steps >= opts.max_steps {
                return End::Stopped(format!("step limit ({} steps)", opts.max_steps));
            }
            if deadline.is_some_and(|d| Instant::now() >= d) || self.reach.cancelled() {
                return End::Stopped("timeout".into());
            }
            if let Err(why) = self.step() {
                return End::Stopped(why);
            }
            if let Some(goal) = &opts.goal
                && self.reached.iter().any(|r| r.target == *goal)
            {
                return End::GoalReached;
            }
        }
    }

    /// Step(a): the oldest unknown leaf is checked; `sat` puts it in rs and
    /// interprets it, `unsat` marks it unreachable, `unknown` re-queues it.
    fn step(&mut self) -> Result<(), String> {
        let Some((f, i)) = self.analysis.queue.pop_front() else {
            return Ok(());
        };
        let leaf = self.analysis.sums[f][i].clone();
        if leaf.stat != Stat::Unk {
            // Queued once per marking; nothing else changes a queued leaf.
            return Err(format!(
                "internal: a queued leaf of `{}` is not unknown",
                self.subject.funcs[f].body.name
            ));
        }
        self.stats.steps += 1;
        let at_target = self.subject.is_error(f, leaf.node);
        let answer = self.reach.check(
            self.subject,
            &self.analysis,
            &mut self.terms,
            f,
            leaf.pc,
            at_target.is_some(),
        );
        match answer {
            Answer::Sat => {
                self.analysis.rs[f] += 1;
                if let Some(t) = at_target {
                    self.record_target(f, t);
                    self.reach.close();
                }
                self.interpret(f, i)
            }
            Answer::Unsat => {
                self.analysis.sums[f][i].stat = Stat::Unr;
                Ok(())
            }
            Answer::Unknown(why) => {
                if self.reach.cancelled() {
                    return Err("timeout".into());
                }
                if !why.ends_with("answered unknown") {
                    return Err(why);
                }
                self.stats.unknown_answers += 1;
                self.analysis.queue.push_back((f, i));
                Ok(())
            }
        }
    }

    /// A reached error leaf: the witness of the open model, replayed.
    fn record_target(&mut self, f: usize, t: crate::ir::TargetId) {
        let Some(target) = self.subject.funcs[f].targets.get(&t) else {
            return;
        };
        if self.reached.iter().any(|r| r.target == *target) {
            return;
        }
        match witness::replayed(self.subject, &mut self.reach, &self.terms, target) {
            Ok(w) => self.reached.push(Reached {
                target: target.clone(),
                witness: w,
                step: self.stats.steps,
            }),
            Err(why) => self.stats.replay_failures.push(format!(
                "{}:{}:{}: {why}",
                target.function, target.line, target.col
            )),
        }
    }

    /// SyInt, then the leaf's replacement, the invocation with `rec`, and
    /// `rer` after a return.
    fn interpret(&mut self, f: usize, i: usize) -> Result<(), String> {
        let leaf = self.analysis.sums[f][i].clone();
        let stepped = Interpreter {
            subject: self.subject,
            terms: &mut self.terms,
        }
        .step(f, &leaf)?;
        self.analysis.replace(f, i, stepped.leaves);
        if let Some(inv) = stepped.invocation {
            let callee = inv.callee;
            self.analysis.invoke(inv);
            self.analysis.rec(callee);
        }
        if stepped.returned {
            self.reach.forget(f);
            self.analysis.rer(f);
        }
        Ok(())
    }
}
