//! What proved an `unreachable` verdict, in the program's terms
//! (docs/explanations.md): the invariant at each loop head, every path
//! explored, a condition with no model, a value fact. Every engine's
//! proof is one of these; `apc check --explain` prints it under the
//! verdict, and the JSON carries it as `proof`.

use super::{How, Method, Stats};
use crate::smt::Variant;

/// Why no run reaches the target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proof {
    /// The value facts, with no solver: which one.
    ValueFact(String),
    /// A query the target's necessary condition implies has no model;
    /// with the facts it assumed at loop heads (invariants from runs, each
    /// proved inductive), if any.
    ConditionUnsat(Variant, Vec<Invariant>),
    /// The target's necessary condition is `false` as built.
    ConditionFalse,
    /// An inductive invariant at each loop head between the entry and the
    /// target, and a summary of each recursive function, each clause
    /// re-checked; none if no path leads there.
    Invariants(Vec<Invariant>),
    /// The executor ended every path without reaching the target.
    EveryPath(PathCounts),
    /// The compact tree is complete, and no error leaf is satisfiable.
    CompactTree,
    /// The compositional run ended with no leaf left unknown.
    Compositional,
}

/// An invariant at one place of the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invariant {
    pub at: Place,
    /// A microc condition over the program's variables, or the solver's
    /// definition where it has none.
    pub text: String,
    /// Whether `text` parses as a microc condition over the program's
    /// variables (not over internal state such as `init(x)`).
    pub microc: bool,
}

/// Where an invariant holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// At the head of the loop of the `while` statement here (1-based).
    Loop { line: u32, col: u32 },
    /// Between the arguments of every call of this function and its
    /// `result`: a summary of it.
    Function(String),
}

/// What an exhaustive exploration did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathCounts {
    pub paths: u64,
    pub merged: u64,
    pub subsumed: u64,
}

impl Proof {
    /// The proof a method gives when its engine says no more: what the
    /// way of deciding itself shows (counts from `stats`).
    pub fn of_method(method: &Method, stats: &Stats) -> Proof {
        let count = |name: &str| {
            (stats.counts.iter())
                .find(|(n, _)| *n == name)
                .map_or(0, |(_, c)| *c)
        };
        match method.how {
            How::ValueFacts => Proof::ValueFact("a value fact".into()),
            How::Refuted(v) | How::NoWitness(v) | How::Model { variant: v, .. } => {
                Proof::ConditionUnsat(v, vec![])
            }
            How::ConditionFalse => Proof::ConditionFalse,
            How::Invariant => Proof::Invariants(vec![]),
            How::EveryPath if method.engine == "compact" => Proof::CompactTree,
            How::EveryPath
            | How::PathFound
            | How::Counterexample
            | How::EarlierWitness
            | How::Tested => Proof::EveryPath(PathCounts {
                paths: count("paths"),
                merged: count("states merged"),
                subsumed: count("subsumed"),
            }),
            How::Terminated => Proof::Compositional,
        }
    }

    /// A stable name for scripts: `invariant`, `every-path`,
    /// `condition-unsat`, `condition-false`, `value-fact`, `compact-tree`,
    /// `compositional`.
    pub fn kind(&self) -> &'static str {
        match self {
            Proof::ValueFact(_) => "value-fact",
            Proof::ConditionUnsat(..) => "condition-unsat",
            Proof::ConditionFalse => "condition-false",
            Proof::Invariants(_) => "invariant",
            Proof::EveryPath(_) => "every-path",
            Proof::CompactTree => "compact-tree",
            Proof::Compositional => "compositional",
        }
    }

    /// One line: what was shown.
    pub fn summary(&self) -> String {
        match self {
            Proof::ValueFact(fact) => format!("{fact}, with no solver"),
            Proof::ConditionUnsat(v, facts) if facts.is_empty() => format!(
                "no input satisfies the target's necessary condition ({}): {}",
                v.method(),
                condition_words(*v)
            ),
            Proof::ConditionUnsat(v, facts) => format!(
                "no input satisfies the target's necessary condition ({}) with the facts at {} (invariants from runs, each proved inductive): {}",
                v.method(),
                plural(facts.len() as u64, "loop head"),
                condition_words(*v)
            ),
            Proof::ConditionFalse => {
                "the target's necessary condition is false as built: no path's branch conditions can all hold".into()
            }
            Proof::Invariants(invs) if invs.is_empty() => {
                "no path from the entry leads to the target".into()
            }
            Proof::Invariants(invs) => {
                let loops = invs.iter().filter(|i| matches!(i.at, Place::Loop { .. })).count();
                let functions = invs.len() - loops;
                let mut at = vec![];
                if loops > 0 {
                    at.push(format!("at {}", plural(loops as u64, "loop head")));
                }
                if functions > 0 {
                    at.push(format!("summarising {}", plural(functions as u64, "function")));
                }
                format!(
                    "an inductive invariant {} that excludes the target (each clause re-checked)",
                    at.join(" and ")
                )
            }
            Proof::EveryPath(c) => {
                let mut s = format!("every path explored: {}", plural(c.paths, "path"));
                if c.merged > 0 {
                    s += &format!(", {} merged", plural(c.merged, "state"));
                }
                if c.subsumed > 0 {
                    s += &format!(", {} subsumed", c.subsumed);
                }
                s + "; none reaches the target"
            }
            Proof::CompactTree => {
                "the compact execution tree is complete, and no error leaf's condition is satisfiable".into()
            }
            Proof::Compositional => {
                "the compositional run ended with no leaf left unknown, and none at the target".into()
            }
        }
    }
}

/// What each query of the conditions is, for people.
fn condition_words(v: Variant) -> &'static str {
    match v {
        Variant::Quantified => "its loops summarised with path counters",
        Variant::Unfolded(_) => "its loops' summaries unfolded K times, a weakening",
        Variant::QuantifierFree => "exact, with no loop to summarise",
        Variant::Sliced(_) => "the condition of the target's slice, which it implies",
        // Never a proof (its `unsat` is not one); named for completeness.
        Variant::Bounded(_) => "its loops' first iterations only",
    }
}

fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
