//! The executor's one warm solver session (docs/thesis-executor.md,
//! "Solver session"): every feasibility question of a run goes to the same
//! process. Terms are defined once at the top level
//! (`smt::smtlib::Incremental`). The session keeps the conjuncts of the
//! last path condition asked asserted, one `push` scope each: a check of
//! another path condition pops to the prefix both share and pushes the
//! rest, then asks its extra condition in a scope of its own. A path that
//! runs on adds one scope per branch, and the solver keeps what it learnt
//! of the prefix, instead of taking in the whole path condition again at
//! every check.
//!
//! A check about bounds on single integers (`A[3] == 72` under a path
//! condition of such bounds, merged ones included) is decided without a
//! round trip (`explore::unary`), exactly. A check kept open for values
//! is answered there too when its whole path condition is of that kind
//! and the unary checks find a model; a value that model cannot give is
//! asked of the solver after all.
//!
//! With a *second opinion* (another solver), a check the first solver
//! leaves `unknown` within its per-check limit (nonlinear integer
//! arithmetic, which one solver may give up on and the other decide at
//! once) is asked of the second, in a session of its own kept the same way.
//!
//! A watchdog cancels the sessions at the run's deadline: a check cut short
//! answers `unknown`, and `unknown` is never taken for `unsat`.

use super::state::PathCond;
use super::unary::UnaryChecks;
use crate::smt::{Answer, Profile, Warm, smtlib};
use crate::term::{TermId, Terms};
use num_bigint::BigInt;
use std::time::{Duration, Instant};

/// One warm session and the path condition asserted in it.
struct Backend {
    warm: Warm,
    /// The path-condition nodes asserted, oldest first, one scope each.
    asserted: Vec<u64>,
}

impl Backend {
    fn start(profile: &Profile, deadline: Option<Instant>) -> Result<Backend, String> {
        // Definitions made inside a check's scope (values asked after a
        // kept `sat`) must outlive its `pop`.
        let head = format!(
            "{}\n{}",
            smtlib::set_option("global-declarations", "true"),
            smtlib::set_logic("ALL")
        );
        Ok(Backend {
            warm: Warm::start(profile, deadline, &head)?,
            asserted: Vec::new(),
        })
    }

    /// Makes the asserted scopes those of `pc`'s conjuncts: pops to the
    /// prefix the asserted ones share with `pc`, pushes the rest.
    fn assert_pc(&mut self, terms: &Terms, pc: &PathCond) {
        // Walk down from the newest conjunct to the first one asserted at
        // its place: node ids are run-wide and a node's parents never
        // change, so everything below it is asserted too.
        let mut missing = Vec::new();
        let mut cur = pc.0.as_ref();
        while let Some(n) = cur {
            if self.asserted.get(n.len - 1) == Some(&n.id) {
                break;
            }
            missing.push(n);
            cur = n.parent.0.as_ref();
        }
        let shared = cur.map_or(0, |n| n.len);
        if self.asserted.len() > shared {
            self.warm.pop(self.asserted.len() - shared);
            self.asserted.truncate(shared);
        }
        for n in missing.into_iter().rev() {
            self.warm.push();
            self.warm.assert(terms, n.conjunct);
            self.asserted.push(n.id);
        }
    }

    /// `pc ∧ extra` in a scope of its own, left open.
    fn check(
        &mut self,
        terms: &Terms,
        pc: &PathCond,
        extra: TermId,
        limit: Option<Duration>,
    ) -> Answer {
        self.warm.limit(limit);
        self.assert_pc(terms, pc);
        self.warm.push();
        self.warm.assert(terms, extra);
        self.warm.check()
    }

    fn close(&mut self) {
        self.warm.pop(1);
    }

    fn values(&mut self, terms: &Terms, ts: &[TermId]) -> Result<Vec<BigInt>, String> {
        self.warm.values(terms, ts)
    }
}

/// The second solver: its profile, started on first use (or why it could
/// not start), and its limits.
struct Second {
    profile: Profile,
    backend: Option<Result<Backend, String>>,
    deadline: Option<Instant>,
    /// How long the first solver gets on a check before the second is asked.
    first_limit: Duration,
    /// How long the second gets.
    limit: Duration,
}

pub(crate) struct Solver {
    first: Backend,
    second: Option<Second>,
    /// Which solver holds the scope of the last check open (`keep`).
    open_in_second: bool,
    pub queries: u64,
    /// Decides the checks about bounds on single integers (`None`: every
    /// check goes to the solver).
    unary: Option<UnaryChecks>,
    /// Checks the second solver decided after the first gave up.
    pub second_opinions: u64,
    pub time: Duration,
    /// The last check kept open, when decided without the solver: its
    /// model, and the question (asked of the solver if a value the model
    /// lacks is wanted).
    local: Option<LocalModel>,
}

/// A kept check's model found by the unary checks.
struct LocalModel {
    values: rustc_hash::FxHashMap<TermId, i64>,
    pc: PathCond,
    extra: TermId,
}

/// Per-check limits with a second opinion: the first solver's, and the
/// second's.
pub(crate) const FIRST_OPINION: Duration = Duration::from_millis(300);
pub(crate) const SECOND_OPINION: Duration = Duration::from_millis(1500);

impl Solver {
    pub(crate) fn start(profile: &Profile, deadline: Option<Instant>) -> Result<Solver, String> {
        Ok(Solver {
            first: Backend::start(profile, deadline)?,
            second: None,
            open_in_second: false,
            queries: 0,
            unary: Some(UnaryChecks::default()),
            second_opinions: 0,
            time: Duration::ZERO,
            local: None,
        })
    }

    /// Asks `profile` (started when first needed) whenever this solver
    /// leaves a check `unknown` within [`FIRST_OPINION`].
    pub(crate) fn with_second_opinion(
        mut self,
        profile: Profile,
        deadline: Option<Instant>,
    ) -> Self {
        self.second = Some(Second {
            profile,
            backend: None,
            deadline,
            first_limit: FIRST_OPINION,
            limit: SECOND_OPINION,
        });
        self
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
    ) -> Answer {
        self.check_limited(terms, pc, extra, keep, None)
    }

    fn check_limited(
        &mut self,
        terms: &Terms,
        pc: &PathCond,
        extra: TermId,
        keep: bool,
        limit: Option<Duration>,
    ) -> Answer {
        self.local = None;
        // A kept check is asked for values: its model, if the unary
        // checks find one, else the solver's.
        if keep
            && let Some(u) = &mut self.unary
            && let Some(values) = u.model_on(terms, pc, extra)
        {
            self.queries += 1;
            self.local = Some(LocalModel {
                values,
                pc: pc.clone(),
                extra,
            });
            return Answer::Sat;
        }
        let local = match &mut self.unary {
            Some(u) if !keep => u.decide_on(terms, pc, extra),
            _ => None,
        };
        if let Some(sat) = local {
            // Counted as a query; its time is the executor's, not the solver's.
            self.queries += 1;
            return if sat { Answer::Sat } else { Answer::Unsat };
        }
        let started = Instant::now();
        let first_limit = match (&self.second, limit) {
            (Some(s), Some(l)) => Some(l.min(s.first_limit)),
            (Some(s), None) => Some(s.first_limit),
            (None, l) => l,
        };
        let mut f = self.first.check(terms, pc, extra, first_limit);
        self.open_in_second = false;
        if let Answer::Unknown(why) = &f
            && why != "cancelled"
            && let Some(second) = &mut self.second
        {
            let past = second.deadline.is_some_and(|d| Instant::now() >= d);
            let backend = second
                .backend
                .get_or_insert_with(|| Backend::start(&second.profile, second.deadline));
            if let (Ok(b), false) = (backend, past) {
                let l = limit.map_or(second.limit, |l| l.min(second.limit));
                let g = b.check(terms, pc, extra, Some(l));
                if !matches!(g, Answer::Unknown(_)) {
                    self.second_opinions += 1;
                    self.first.close();
                    self.open_in_second = true;
                    f = g;
                } else {
                    b.close();
                }
            }
        }
        self.queries += 1;
        self.time += started.elapsed();
        if !(keep && f == Answer::Sat) {
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
    ) -> Answer {
        self.check_limited(terms, pc, extra, false, Some(limit))
    }

    /// Checks decided without a solver (counted in `queries` too).
    pub(crate) fn decided_locally(&self) -> u64 {
        self.unary.as_ref().map_or(0, |u| u.decided)
    }

    /// Every check to the solver (the reference the local decisions are
    /// tested against).
    #[cfg(test)]
    pub(crate) fn without_local_decisions(mut self) -> Self {
        self.unary = None;
        self
    }

    /// The backend that holds the scope of the last check.
    fn open_backend(&mut self) -> &mut Backend {
        match &mut self.second {
            Some(Second {
                backend: Some(Ok(b)),
                ..
            }) if self.open_in_second => b,
            _ => &mut self.first,
        }
    }

    /// Closes the scope of the last check.
    pub(crate) fn close(&mut self) {
        if self.local.take().is_some() {
            return; // no scope was opened
        }
        self.open_backend().close();
        self.open_in_second = false;
    }

    /// After a `sat` kept open: the values of integer terms.
    pub(crate) fn values(&mut self, terms: &Terms, ts: &[TermId]) -> Result<Vec<BigInt>, String> {
        let Some(local) = &self.local else {
            return self.open_backend().values(terms, ts);
        };
        if let Some(values) = local_values(terms, local, ts) {
            return Ok(values);
        }
        // A value the model does not hold: the solver's model instead.
        let LocalModel { pc, extra, .. } = self.local.take().expect("a local model");
        // Without the unary checks, or they would answer it again.
        let unary = self.unary.take();
        let answer = self.check(terms, &pc, extra, true);
        self.unary = unary;
        match answer {
            Answer::Sat => self.open_backend().values(terms, ts),
            other => Err(format!(
                "the unary checks' model was not confirmed: {other:?}"
            )),
        }
    }
}

/// The values of `ts` in a local model: an integer it bounds, a constant,
/// or a single integer the literals made to hold do not bound (it is free:
/// 0). `None` for anything else.
fn local_values(terms: &Terms, local: &LocalModel, ts: &[TermId]) -> Option<Vec<BigInt>> {
    (ts.iter())
        .map(|t| match local.values.get(t) {
            Some(v) => Some(BigInt::from(*v)),
            None if super::unary::is_single_integer(terms, *t) => Some(BigInt::default()),
            None => terms.as_int(*t).cloned(),
        })
        .collect()
}
