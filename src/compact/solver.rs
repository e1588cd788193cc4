//! Satisfiability of path conditions, quantified ones included, through
//! the solver layer: one script per question, answered by a warm helper
//! process (`smt::Helper`: a scope per quantifier-free script, a reset
//! and the profile's quantified options per quantified one), so that no
//! question pays for a process start. A solver `unknown` is never `unsat`:
//! the caller keeps the branch and says so.

use crate::smt::{self, Answer, Profile};
use crate::term::{TermId, Terms};
use std::time::{Duration, Instant};

/// Something that answers "is this conjunction satisfiable?".
pub trait SatCheck {
    fn check(&mut self, terms: &mut Terms, conjuncts: &[TermId]) -> Answer;
}

/// A solver profile with a per-query limit and a run deadline.
pub struct Solver {
    pub profile: Profile,
    helper: smt::Helper,
    pub per_query: Duration,
    pub deadline: Option<Instant>,
    pub queries: u64,
    pub quantified: u64,
    pub unknown: u64,
    pub time: Duration,
}

impl Solver {
    pub fn new(profile: Profile, per_query: Duration, deadline: Option<Instant>) -> Solver {
        Solver {
            helper: smt::Helper::new(Some(profile.clone()), per_query),
            profile,
            per_query,
            deadline,
            queries: 0,
            quantified: 0,
            unknown: 0,
            time: Duration::ZERO,
        }
    }

    /// A model of the conjunction: the values of `wanted` integer terms
    /// (each named by a fresh constant equal to it).
    pub fn model(
        &mut self,
        terms: &mut Terms,
        conjuncts: &[TermId],
        wanted: &[TermId],
    ) -> Result<Vec<num_bigint::BigInt>, String> {
        let mut all = conjuncts.to_vec();
        let mut vars = Vec::new();
        for (i, w) in wanted.iter().enumerate() {
            let v = terms.new_var(crate::term::VarKind::Fresh, format!("want{i}"));
            let vt = terms.var(v);
            all.push(terms.eq(vt, *w));
            vars.push(v);
        }
        let phi = terms.and(all);
        let quantified = terms.has_quantifier(phi);
        let mq = smt::smtlib::model_query(terms, phi, &vars);
        self.queries += 1;
        let reply = self.ask(quantified, &mq.text);
        match reply.answer {
            Answer::Sat => {
                let parsed = smt::reply::int_values(&reply.values)?;
                mq.names
                    .iter()
                    .map(|n| {
                        parsed
                            .iter()
                            .find(|(k, _)| k == n)
                            .map(|(_, v)| v.clone())
                            .ok_or_else(|| format!("no value for {n}"))
                    })
                    .collect()
            }
            Answer::Unsat => Err("unsat".into()),
            Answer::Unknown(why) => Err(why),
        }
    }

    /// `query` (with its `check-sat`, and `get-value`s if any) answered by
    /// the warm helper: a quantified one with the profile's options for
    /// those. The run's deadline cuts a script short as `unknown`; work
    /// stopped from outside unwinds.
    fn ask(&mut self, quantified: bool, query: &str) -> smt::Reply {
        let script = if quantified {
            self.profile.preamble(true, query)
        } else {
            query.to_string()
        };
        let helper = &mut self.helper;
        match crate::deadline::run_until(self.deadline, || helper.run(&script, quantified)) {
            Ok(reply) => reply,
            Err(_) if crate::deadline::passed() => crate::deadline::stop(),
            Err(_) => smt::Reply {
                answer: Answer::Unknown("timeout".into()),
                values: String::new(),
            },
        }
    }
}

impl SatCheck for Solver {
    fn check(&mut self, terms: &mut Terms, conjuncts: &[TermId]) -> Answer {
        let phi = terms.and(conjuncts.to_vec());
        match terms.as_bool(phi) {
            Some(true) => return Answer::Sat,
            Some(false) => return Answer::Unsat,
            None => {}
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.unknown += 1;
            return Answer::Unknown("timeout".into());
        }
        let quantified = terms.has_quantifier(phi);
        let query = smt::smtlib::script(terms, &[phi]);
        let started = Instant::now();
        let answer = self.ask(quantified, &query).answer;
        self.time += started.elapsed();
        self.queries += 1;
        self.quantified += u64::from(quantified);
        match answer {
            Answer::Sat => Answer::Sat,
            Answer::Unsat => Answer::Unsat,
            Answer::Unknown(why) => {
                self.unknown += 1;
                Answer::Unknown(format!("{} answered unknown ({why})", self.profile.name))
            }
        }
    }
}
