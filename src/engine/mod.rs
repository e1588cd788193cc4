//! The engine contract: every engine answers one [`Question`] (a program,
//! its target or targets, the options) under one [`Stop`] token with one
//! [`Decision`] (a verdict, the [`Method`] that decided, the solver, and
//! statistics). Each engine implements [`Decider`] in its own layer; the
//! portfolio (`check`) lists them in one registry and reaches them only
//! through this trait.
//!
//! What a verdict guarantees is the engine's to keep: `Reachable` carries a
//! witness the interpreter replayed to the target; `Unreachable` is a
//! checked proof (an `unsat` of a query the target's condition implies, an
//! invariant re-checked clause by clause, every path explored, a compact
//! tree with no satisfiable error leaf). Anything else is `Unknown`, with
//! the reason, which never names the engine itself: whoever shows several
//! engines' reasons puts the names in front.
//!
//! Knows the front end (through `db`), the solver profiles and witnesses;
//! not any engine.

pub mod picture;
pub mod proof;

pub use proof::{Invariant, PathCounts, Place, Proof};

use crate::db::{Database, SourceFile, Target};
use crate::deadline::Stop;
use crate::interp::Witness;
use crate::smt::{DumpFailure, Profile, Variant};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Which queries of the necessary conditions run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// φ̂ and φ̂^K (and φ̂^k for small k) in parallel.
    Race,
    Quantified,
    Unfolded,
}

/// The unfolding bound K of the ISSTA paper, `apc check`'s default.
pub const DEFAULT_K: u32 = 25;

/// What an engine is asked: can a run of the program reach a target?
/// With several targets: can it reach any of them? (`Unreachable` then
/// proves every one; `Reachable` names the one its witness hits.)
#[derive(Clone, Copy)]
pub struct Question<'a> {
    pub db: &'a Database,
    pub file: SourceFile,
    pub targets: &'a [Target],
    pub options: &'a CheckOptions,
}

impl<'a> Question<'a> {
    /// The question about one target.
    pub fn one(
        db: &'a Database,
        file: SourceFile,
        target: &'a Target,
        options: &'a CheckOptions,
    ) -> Self {
        Question {
            db,
            file,
            targets: std::slice::from_ref(target),
            options,
        }
    }

    /// The first target asked about (the only one, mostly).
    pub fn target(&self) -> &'a Target {
        &self.targets[0]
    }

    /// Whether every target of several is asked about at once.
    pub fn every_target(&self) -> bool {
        self.targets.len() > 1
    }

    /// The method of `engine` deciding this question in way `how`.
    pub fn method(&self, engine: &'static str, how: How) -> Method {
        let m = Method::new(engine, how);
        if self.every_target() {
            m.for_every_target()
        } else {
            m
        }
    }
}

/// The options of `apc check`, which every engine reads from (each the
/// parts it needs). [`CheckOptions::new`] gives the command line's
/// defaults.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The solvers to race (located).
    pub solvers: Vec<Profile>,
    pub mode: Mode,
    pub k: u32,
    /// Wall-clock limit per target, everything it costs included.
    pub timeout: Duration,
    pub jobs: usize,
    pub dump_queries: Option<PathBuf>,
    /// The first dump that could not be written (the run's error).
    pub dump_failure: DumpFailure,
    pub counter_inference: bool,
    /// How many models a query may give before `nc-sat-no-witness`.
    pub max_models: usize,
    /// Simplify the condition (e-graph) before encoding it.
    pub simplify: bool,
    /// Which engine decides: a registered engine's name, or a way of
    /// combining them (`all`, the portfolio; `nc+explore`).
    pub engine: &'static str,
    /// The portfolio starts the engines after its head this long after
    /// the head's (if those have not decided by then).
    pub portfolio_delay: Duration,
    /// Each next engine after the head starts this much later than the one
    /// before it (0: all of them at `portfolio_delay`); `None`: as the
    /// schedule gives the program's class.
    pub portfolio_stagger: Option<Duration>,
    /// How many of the portfolio's first engines start at once.
    pub portfolio_head: usize,
    /// The engines of the portfolio (registered names), in order.
    pub portfolio: Vec<&'static str>,
    /// Start the portfolio's engines in the order `check::schedule` gives
    /// the program's class rather than in `portfolio`'s.
    pub portfolio_scheduled: bool,
    /// Run the portfolio's engines at their CPU priorities
    /// ([`Decider::niceness`]), not all alike.
    pub portfolio_priorities: bool,
    /// The engine shares the cores with another engine started at the same
    /// time (the portfolio's head): the conditions' race then starts φ̂
    /// alone (measured: docs/portfolio.md §3). Set by the portfolio.
    pub sharing_cores: bool,
    /// With the portfolio: before the targets one by one, ask about all of
    /// a program's targets at once, within one `timeout`.
    pub all_targets_first: bool,
    /// Explain the verdicts for people: engines may spend time on it (a
    /// simpler invariant, each step checked).
    pub explain: bool,
    /// Trace each reachable target's witness (the report's `trace`).
    pub trace: bool,
    /// The token every target's work descends from: throwing it stops the
    /// whole check (the language server, when an edit arrives).
    pub cancel: Stop,
}

/// How many models a query may give by default before `nc-sat-no-witness`.
pub const DEFAULT_MAX_MODELS: usize = 5;

/// The portfolio's default head start of its first engines (measured:
/// docs/portfolio.md §3).
pub const DEFAULT_PORTFOLIO_DELAY: Duration = Duration::from_millis(100);

/// How many engines start at once by default: the witness search and the
/// conditions (measured: docs/portfolio.md §3).
pub const DEFAULT_PORTFOLIO_HEAD: usize = 2;

/// The head on this machine: [`DEFAULT_PORTFOLIO_HEAD`], or fewer on a
/// machine with fewer cores, so that no more engines start at once than
/// there are cores to run them.
pub fn default_portfolio_head() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.min(DEFAULT_PORTFOLIO_HEAD)
}

/// The portfolio's engines by default, in the order they start (measured:
/// docs/portfolio.md §3).
pub const DEFAULT_PORTFOLIO: [&str; 7] = [
    "fuzz",
    "nc",
    "explore-search",
    "chc",
    "explore",
    "compositional",
    "compact",
];

/// The name of the portfolio as an engine choice.
pub const PORTFOLIO: &str = "all";

impl CheckOptions {
    /// `apc check`'s defaults on these solvers: the portfolio, the race
    /// with K = 25, one job, no dumps, counter inference, 5 models,
    /// simplification.
    pub fn new(solvers: Vec<Profile>, timeout: Duration) -> CheckOptions {
        CheckOptions {
            solvers,
            mode: Mode::Race,
            k: DEFAULT_K,
            timeout,
            jobs: 1,
            dump_queries: None,
            dump_failure: DumpFailure::default(),
            counter_inference: true,
            max_models: DEFAULT_MAX_MODELS,
            simplify: true,
            engine: PORTFOLIO,
            portfolio_delay: DEFAULT_PORTFOLIO_DELAY,
            portfolio_stagger: None,
            portfolio_head: default_portfolio_head(),
            portfolio: DEFAULT_PORTFOLIO.to_vec(),
            portfolio_scheduled: true,
            portfolio_priorities: true,
            sharing_cores: false,
            all_targets_first: false,
            explain: false,
            trace: false,
            cancel: Stop::new(),
        }
    }

    /// The same options with one engine deciding alone.
    pub fn alone(&self, engine: &'static str) -> CheckOptions {
        CheckOptions {
            engine,
            ..self.clone()
        }
    }
}

/// An engine.
pub trait Decider: Sync {
    /// The name `--engine`, `--portfolio`, the reports and the JSON use.
    fn name(&self) -> &'static str;

    /// One line on what it decides, for `--help`.
    fn about(&self) -> &'static str;

    /// The niceness of its thread and solver processes in the portfolio:
    /// on few cores the engines compete, and the ones that decide most
    /// targets soonest go first (measured: docs/portfolio.md §3).
    fn niceness(&self, _q: &Question) -> i32 {
        0
    }

    /// Whether it has something to say on the question: by default, on
    /// one target at a time.
    fn takes(&self, q: &Question) -> bool {
        !q.every_target()
    }

    /// Decides the question before `stop` stops. The caller has made
    /// `stop` this thread's token ([`decide`]), so phases that run out of
    /// time unwind to it.
    fn decide(&self, q: &Question, stop: &Stop) -> Decision;
}

/// `d` on `q` under `stop`: every way the work can end early (the token
/// stopped, a salsa cancellation, a defect) becomes an `unknown` with its
/// reason. The one place engines' early ends are caught.
pub fn decide(d: &dyn Decider, q: &Question, stop: &Stop) -> Decision {
    let started = std::time::Instant::now();
    let _engine = crate::deadline::working_for(d.name());
    let mut decision = stop
        .guard(|| d.decide(q, stop))
        .unwrap_or_else(|ended| Decision::unknown(ended.reason()));
    decision.stats.time = started.elapsed();
    decision
}

/// The verdict on a question.
#[derive(Clone, Debug)]
pub enum Verdict {
    Unreachable,
    Reachable(Witness),
    Unknown(String),
}

impl Verdict {
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Unreachable => "unreachable",
            Verdict::Reachable(_) => "reachable",
            Verdict::Unknown(_) => "unknown",
        }
    }

    pub fn is_definite(&self) -> bool {
        !matches!(self, Verdict::Unknown(_))
    }
}

/// An engine's answer.
#[derive(Clone, Debug)]
pub struct Decision {
    pub verdict: Verdict,
    /// How it was decided (`None` for `unknown`).
    pub method: Option<Method>,
    /// The solver that decided.
    pub solver: Option<String>,
    /// With several targets asked about: the one the witness hits.
    pub reached: Option<Target>,
    /// For `unreachable`: what proved it, if the engine says more than its
    /// method does ([`Decision::proof`] gives one in any case).
    pub proof: Option<Proof>,
    /// For an `unknown` of several engines: each one's reason, by name.
    pub attempts: Vec<(&'static str, String)>,
    pub stats: Stats,
}

impl Decision {
    pub fn unknown(why: impl Into<String>) -> Decision {
        Decision {
            verdict: Verdict::Unknown(why.into()),
            method: None,
            solver: None,
            reached: None,
            proof: None,
            attempts: vec![],
            stats: Stats::default(),
        }
    }

    pub fn unreachable(method: Method, solver: Option<String>) -> Decision {
        Decision {
            verdict: Verdict::Unreachable,
            method: Some(method),
            solver,
            reached: None,
            proof: None,
            attempts: vec![],
            stats: Stats::default(),
        }
    }

    pub fn reachable(witness: Witness, method: Method, solver: Option<String>) -> Decision {
        Decision {
            verdict: Verdict::Reachable(witness),
            method: Some(method),
            solver,
            reached: None,
            proof: None,
            attempts: vec![],
            stats: Stats::default(),
        }
    }

    /// The same decision, proved by `proof`.
    pub fn with_proof(self, proof: Proof) -> Decision {
        Decision {
            proof: Some(proof),
            ..self
        }
    }

    /// What proved an `unreachable` verdict: the engine's own proof, else
    /// what its method shows (`None` for the other verdicts).
    pub fn proof(&self) -> Option<Proof> {
        match (&self.verdict, &self.method) {
            (Verdict::Unreachable, _) if self.proof.is_some() => self.proof.clone(),
            (Verdict::Unreachable, Some(m)) => Some(Proof::of_method(m, &self.stats)),
            _ => None,
        }
    }

    /// The reason of an `unknown` (empty otherwise).
    pub fn reason(&self) -> &str {
        match &self.verdict {
            Verdict::Unknown(why) => why,
            _ => "",
        }
    }
}

/// What a decision cost.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// The engine's wall-clock time.
    pub time: Duration,
    /// The engine's own counts, by name (paths, vertices, queries).
    pub counts: Vec<(&'static str, u64)>,
}

/// How a verdict was reached: by which engine, in which way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Method {
    /// The engine's registered name (`facts` for the value facts).
    pub engine: &'static str,
    pub how: How,
    /// Decided for every target asked about at once.
    pub every_target: bool,
}

/// The ways of deciding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// Never-null pointers and array lengths, with no solver.
    ValueFacts,
    /// The `unsat` of a query that the target's condition implies.
    Refuted(Variant),
    /// The target's condition is `false` as built: the terms' smart
    /// constructors, which keep only equivalents, reduced it (no solver).
    ConditionFalse,
    /// A model of a query whose witness replayed (`varied`: a variation of
    /// the model's inputs did).
    Model { variant: Variant, varied: bool },
    /// An invariant, checked clause by clause.
    Invariant,
    /// A counterexample to the Horn clauses whose inputs replayed.
    Counterexample,
    /// A path to the target, found by executing the program, replayed.
    PathFound,
    /// A random test that reached the target, replayed.
    Tested,
    /// Every path explored (or a compact tree complete) without an error.
    EveryPath,
    /// A compositional run that ended with no unknown leaf.
    Terminated,
    /// A witness found for an earlier text of the program (in the
    /// editor), replayed on this one to the target.
    EarlierWitness,
    /// Not a verdict: the query was satisfiable, but no model's witness
    /// replayed (the method of an `unknown`).
    NoWitness(Variant),
}

impl Method {
    pub fn new(engine: &'static str, how: How) -> Method {
        Method {
            engine,
            how,
            every_target: false,
        }
    }

    /// The method of a decision for every target at once.
    pub fn for_every_target(self) -> Method {
        Method {
            every_target: true,
            ..self
        }
    }
}

/// The method's name in the reports and the JSON (stable: scripts read
/// it), e.g. `nc-unfolded:k=25`, `chc`, `explore-every-path`.
impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let base = match self.how {
            How::ValueFacts => "value-facts".to_string(),
            How::ConditionFalse => format!("{}-condition-false", self.engine),
            How::Refuted(v) | How::NoWitness(v) => v.method(),
            How::Model { variant, varied } => {
                let varied = if varied { "+varied-model" } else { "" };
                format!("{}{varied}", variant.method())
            }
            How::Invariant => self.engine.to_string(),
            How::Counterexample => format!("{}-counterexample", self.engine),
            How::PathFound => match self.engine {
                "explore" if self.every_target => "explore-whole-program".into(),
                "explore-search" if self.every_target => "explore-sweep".into(),
                "explore" => "explore-guided".into(),
                "compact" => "compact-error-leaf".into(),
                other => other.to_string(),
            },
            How::EveryPath => match self.engine {
                "explore-search" => "explore-every-path".into(),
                other => format!("{other}-every-path"),
            },
            How::Terminated => format!("{}-terminated", self.engine),
            How::Tested => self.engine.to_string(),
            How::EarlierWitness => "earlier-witness".into(),
        };
        let whole = matches!(self.how, How::EveryPath | How::PathFound)
            && self.engine.starts_with("explore");
        if self.every_target && !whole {
            write!(f, "{base}-every-target")
        } else {
            f.write_str(&base)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The method names scripts read stay what they were before the
    /// contract had a type for them.
    #[test]
    fn methods_print_their_stable_names() {
        let m = |e, h| Method::new(e, h).to_string();
        assert_eq!(m("facts", How::ValueFacts), "value-facts");
        assert_eq!(m("nc", How::ConditionFalse), "nc-condition-false");
        assert_eq!(
            m("nc", How::Refuted(Variant::Unfolded(25))),
            "nc-unfolded:k=25"
        );
        let varied = How::Model {
            variant: Variant::Quantified,
            varied: true,
        };
        assert_eq!(m("nc", varied), "nc-quantified+varied-model");
        assert_eq!(m("chc", How::Invariant), "chc");
        assert_eq!(m("chc", How::Counterexample), "chc-counterexample");
        assert_eq!(m("explore", How::PathFound), "explore-guided");
        assert_eq!(m("explore-search", How::PathFound), "explore-search");
        assert_eq!(m("explore", How::EveryPath), "explore-every-path");
        assert_eq!(m("explore-search", How::EveryPath), "explore-every-path");
        assert_eq!(m("compositional", How::PathFound), "compositional");
        assert_eq!(
            m("compositional", How::Terminated),
            "compositional-terminated"
        );
        assert_eq!(m("compact", How::PathFound), "compact-error-leaf");
        assert_eq!(m("compact", How::EveryPath), "compact-every-path");
        let every = |e, h| Method::new(e, h).for_every_target().to_string();
        assert_eq!(every("chc", How::Invariant), "chc-every-target");
        assert_eq!(
            every("nc", How::Refuted(Variant::Quantified)),
            "nc-quantified-every-target"
        );
        assert_eq!(every("explore", How::PathFound), "explore-whole-program");
        assert_eq!(every("explore", How::EveryPath), "explore-every-path");
    }
}
