//! Satisfiability of path conditions, quantified ones included, through
//! the solver layer: one script per question (`smt::run_script`), with the
//! profile's options for quantified queries. A solver `unknown` is never
//! `unsat`: the caller keeps the branch and says so.

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
        let mut script: String = self
            .profile
            .file_options
            .iter()
            .map(|o| format!("{o}\n"))
            .collect();
        script.push_str(&self.profile.preamble(quantified, &mq.text));
        self.queries += 1;
        let reply = smt::run_script(&self.profile, &script, self.limit());
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

    fn limit(&self) -> Duration {
        let deadline = match (self.deadline, crate::deadline::current()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match deadline {
            Some(d) => self
                .per_query
                .min(d.saturating_duration_since(Instant::now()))
                .max(Duration::from_millis(1)),
            None => self.per_query,
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
        let query = smt::smtlib::query(terms, &[phi]);
        let script = self.profile.script(quantified, &query, &[]);
        let started = Instant::now();
        let answer = smt::run_script(&self.profile, &script, self.limit()).answer;
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
