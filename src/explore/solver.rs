//! The executor's one warm solver session (docs/thesis-executor.md,
//! "Pruning"): every feasibility question of a run goes to the same
//! process, each in a `push`/`pop` scope. Terms and path-condition
//! prefixes are defined once at the top level (`smt::smtlib::Incremental`),
//! so a check sends two names, not the whole path condition.
//!
//! A watchdog cancels the session at the run's deadline: a check cut short
//! answers `unknown`, and `unknown` is never taken for `unsat`.

use super::state::PathCond;
use crate::smt::smtlib::Incremental;
use crate::smt::{Cancel, CheckResult, Profile, Session, Watchdog};
use crate::term::{TermId, Terms};
use num_bigint::BigInt;
use std::time::{Duration, Instant};

/// The answer to "can this happen?".
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Feasibility {
    Sat,
    Unsat,
    Unknown(String),
}

pub(crate) struct Solver {
    session: Session,
    printer: Incremental,
    /// Path-condition prefixes already defined (`pc!id`).
    defined_pcs: rustc_hash::FxHashSet<u64>,
    pub queries: u64,
    pub time: Duration,
    /// The profile's commands that set and lift a per-check time limit.
    check_limit: Option<(String, String)>,
    _watchdog: Option<Watchdog>,
}

impl Solver {
    pub(crate) fn start(profile: &Profile, deadline: Option<Instant>) -> Result<Solver, String> {
        let cancel = Cancel::new();
        let mut session = Session::start(profile, &cancel)?;
        // Definitions made inside a check's scope (values asked after a
        // kept `sat`) must outlive its `pop`: the printer remembers them.
        session.send("(set-option :global-declarations true)\n(set-logic ALL)")?;
        Ok(Solver {
            session,
            printer: Incremental::default(),
            defined_pcs: Default::default(),
            queries: 0,
            time: Duration::ZERO,
            check_limit: profile.check_limit.clone(),
            _watchdog: deadline.map(|d| cancel.at_deadline(d)),
        })
    }

    /// The name of a path condition in the session, defining its prefixes
    /// that are new.
    fn pc_name(&mut self, terms: &Terms, pc: &PathCond, out: &mut String) -> String {
        let mut pending = Vec::new();
        let mut cur = pc.0.clone();
        while let Some(n) = cur {
            if self.defined_pcs.contains(&n.id) {
                break;
            }
            pending.push(n.clone());
            cur = n.parent.0.clone();
        }
        for n in pending.into_iter().rev() {
            let c = self.printer.prepare(terms, n.conjunct, out);
            let parent = match &n.parent.0 {
                Some(p) => format!("pc!{}", p.id),
                None => "true".into(),
            };
            out.push_str(&format!(
                "(define-fun pc!{} () Bool (and {parent} {c}))\n",
                n.id
            ));
            self.defined_pcs.insert(n.id);
        }
        match &pc.0 {
            Some(n) => format!("pc!{}", n.id),
            None => "true".into(),
        }
    }

    /// Whether `pc ∧ extra` is satisfiable. With `keep`, the scope stays
    /// open on `sat` so that values can be asked ([`Solver::values`]);
    /// the caller closes it with [`Solver::close`].
    pub(crate) fn check(
        &mut self,
        terms: &Terms,
        pc: &PathCond,
        extra: TermId,
        keep: bool,
    ) -> Feasibility {
        let mut text = String::new();
        let p = self.pc_name(terms, pc, &mut text);
        let e = self.printer.prepare(terms, extra, &mut text);
        text.push_str(&format!("(push 1)\n(assert {p})\n(assert {e})"));
        if let Err(e) = self.session.send(&text) {
            return Feasibility::Unknown(e);
        }
        let started = Instant::now();
        let answer = self.session.check();
        let took = started.elapsed();
        self.queries += 1;
        self.time += took;
        let f = match answer {
            CheckResult::Sat => Feasibility::Sat,
            CheckResult::Unsat => Feasibility::Unsat,
            CheckResult::Unknown(why) => Feasibility::Unknown(why),
        };
        if !(keep && f == Feasibility::Sat) {
            self.close();
        }
        f
    }

    /// [`Solver::check`] within `limit` (`unknown` past it) where the solver
    /// takes a per-check limit; without one, as `check`.
    pub(crate) fn check_within(
        &mut self,
        terms: &Terms,
        pc: &PathCond,
        extra: TermId,
        limit: Duration,
    ) -> Feasibility {
        let Some((set, lift)) = self.check_limit.clone() else {
            return self.check(terms, pc, extra, false);
        };
        let ms = limit.as_millis().max(1).to_string();
        if let Err(e) = self.session.send(&set.replace("{ms}", &ms)) {
            return Feasibility::Unknown(e);
        }
        let f = self.check(terms, pc, extra, false);
        if let Err(e) = self.session.send(&lift) {
            return Feasibility::Unknown(e);
        }
        f
    }

    /// Closes the scope of the last check.
    pub(crate) fn close(&mut self) {
        let _ = self.session.send("(pop 1)");
    }

    /// After a `sat` kept open: the values of integer terms.
    pub(crate) fn values(&mut self, terms: &Terms, ts: &[TermId]) -> Result<Vec<BigInt>, String> {
        let mut text = String::new();
        let names: Vec<String> = ts
            .iter()
            .map(|t| self.printer.prepare(terms, *t, &mut text))
            .collect();
        if !text.is_empty() {
            self.session.send(&text)?;
        }
        self.session.int_values(&names)
    }
}
