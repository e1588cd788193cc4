//! Compositional symbolic execution as an engine of the contract
//! (`compositional`): the run goes until the target is reached (a
//! replayed witness) or ends with no unknown leaf, which proves it
//! unreachable (docs/compositional-se.md §11.2). It has something to say
//! on programs with functions besides `main`: with `main` alone it is the
//! executor again.

use super::{End, Options};
use crate::db;
use crate::deadline::Stop;
use crate::engine::{Decider, Decision, How, Method, Question};
use std::time::Instant;

/// Compositional symbolic execution.
pub struct Compositional;

impl Decider for Compositional {
    fn name(&self) -> &'static str {
        "compositional"
    }

    fn about(&self) -> &'static str {
        "compositional symbolic execution: per-function summaries (integers, no recursion)"
    }

    fn niceness(&self, _q: &Question) -> i32 {
        5
    }

    fn takes(&self, q: &Question) -> bool {
        !q.every_target() && db::parse(q.db, q.file).program.functions.len() > 1
    }

    fn decide(&self, q: &Question, stop: &Stop) -> Decision {
        let Some(solver) = q.options.solvers.first() else {
            return Decision::unknown("no solver");
        };
        let target = q.target();
        let mut opts = Options::new(solver.clone());
        opts.timeout = stop
            .deadline()
            .map(|d| d.saturating_duration_since(Instant::now()));
        opts.goal = Some(target.clone());
        let outcome = match super::run(q.db, q.file, &opts) {
            Ok(o) => o,
            Err(why) => return Decision::unknown(why),
        };
        let solver = Some(solver.name.clone());
        if let Some(r) = outcome.reached.iter().find(|r| r.target == *target) {
            let method = Method::new(self.name(), How::PathFound);
            return Decision::reachable(r.witness.clone(), method, solver);
        }
        match outcome.end {
            End::Terminated if outcome.stats.replay_failures.is_empty() => {
                Decision::unreachable(Method::new(self.name(), How::Terminated), solver)
            }
            End::Terminated => Decision::unknown(format!(
                "a witness did not replay: {}",
                outcome.stats.replay_failures.join("; ")
            )),
            End::GoalReached => Decision::unknown("the goal was reached without a witness"),
            End::Stopped(why) => Decision::unknown(why),
        }
    }
}
