//! The one warm incremental session: a solver process kept for a whole run
//! of an engine, asked many questions in `push`/`pop` scopes. Terms are
//! made known once, at the top level (`define-fun e!N`, through the
//! [`Incremental`] printer), so a later question that mentions a known
//! term sends its name only; commands are buffered and sent with the next
//! check. The process follows the token of the work that started it (its
//! deadline, its switch): a check cut short answers `unknown`, never
//! `unsat`.

use super::smtlib::Incremental;
use super::{Answer, Profile, Session};
use crate::term::{TermId, Terms};
use num_bigint::BigInt;
use std::time::{Duration, Instant};

/// A warm session.
pub struct Warm {
    session: Session,
    printer: Incremental,
    /// Commands not yet sent.
    pending: String,
    /// Open scopes.
    depth: usize,
    /// The profile's commands that set and lift a per-check time limit.
    check_limit: Option<(String, String)>,
    /// The per-check limit in force (`None`: lifted).
    limit_set: Option<Duration>,
    pub stats: WarmStats,
    /// Every command sent, when kept (for `--dump-queries`).
    transcript: Option<String>,
}

/// What a session was asked.
#[derive(Clone, Copy, Debug, Default)]
pub struct WarmStats {
    pub checks: u64,
    /// Bytes of SMT-LIB sent.
    pub sent: u64,
    /// Time spent waiting for answers.
    pub time: Duration,
}

impl Warm {
    /// Starts `profile`'s solver (stopped at `deadline` as well as by the
    /// thread's token) and sends `head` (options, declarations).
    pub fn start(profile: &Profile, deadline: Option<Instant>, head: &str) -> Result<Warm, String> {
        let session = Session::start_until(profile, deadline)?;
        let mut warm = Warm {
            session,
            printer: Incremental::default(),
            pending: String::new(),
            depth: 0,
            check_limit: profile.check_limit.clone(),
            limit_set: None,
            stats: WarmStats::default(),
            transcript: None,
        };
        warm.raw(head);
        warm.flush()?;
        Ok(warm)
    }

    /// Queues SMT-LIB commands that produce no response.
    pub fn raw(&mut self, text: &str) {
        self.pending.push_str(text);
        if !text.ends_with('\n') {
            self.pending.push('\n');
        }
    }

    /// Declares the variable `v` (a variable's term) now, so that a
    /// model can be asked about it whether or not an assertion mentions it.
    pub fn declare(&mut self, terms: &Terms, v: TermId) {
        let mut text = String::new();
        self.printer.prepare(terms, v, &mut text);
        self.pending.push_str(&text);
    }

    /// Keeps from now on a copy of every command sent ([`Warm::transcript`]).
    pub fn keep_transcript(&mut self) {
        self.transcript.get_or_insert_with(String::new);
    }

    /// What was sent since [`Warm::keep_transcript`] (empty without it).
    pub fn transcript(&self) -> &str {
        self.transcript.as_deref().unwrap_or("")
    }

    /// Opens a scope.
    pub fn push(&mut self) {
        self.pending.push_str("(push 1)\n");
        self.depth += 1;
    }

    /// Closes the `n` innermost scopes.
    pub fn pop(&mut self, n: usize) {
        let n = n.min(self.depth);
        if n > 0 {
            self.pending.push_str(&format!("(pop {n})\n"));
            self.depth -= n;
        }
    }

    /// The open scopes.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Asserts `t` (a closed quantifier-free term) in the innermost scope.
    /// The names it defines stay known after the scope closes only if the
    /// session was started with `(set-option :global-declarations true)`,
    /// which a session that asserts this way needs.
    pub fn assert(&mut self, terms: &Terms, t: TermId) {
        let mut text = String::new();
        let name = self.printer.prepare(terms, t, &mut text);
        self.pending.push_str(&text);
        self.pending.push_str(&format!("(assert {name})\n"));
    }

    /// Sets (or lifts) the per-check limit, if the solver has one and it
    /// differs from the one in force.
    pub fn limit(&mut self, limit: Option<Duration>) {
        let Some((set, lift)) = &self.check_limit else {
            return;
        };
        if self.limit_set == limit {
            return;
        }
        let command = match limit {
            Some(l) => set.replace("{ms}", &l.as_millis().max(1).to_string()),
            None => lift.clone(),
        };
        self.raw(&command);
        self.limit_set = limit;
    }

    fn flush(&mut self) -> Result<(), String> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let text = std::mem::take(&mut self.pending);
        self.stats.sent += text.len() as u64;
        if let Some(kept) = &mut self.transcript {
            kept.push_str(&text);
        }
        self.session.send(&text)
    }

    /// Whether what is asserted in every open scope is satisfiable.
    pub fn check(&mut self) -> Answer {
        if let Err(e) = self.flush() {
            return Answer::Unknown(e);
        }
        if let Some(kept) = &mut self.transcript {
            kept.push_str("(check-sat)\n");
        }
        let started = Instant::now();
        let answer = self.session.check();
        self.stats.time += started.elapsed();
        self.stats.checks += 1;
        answer
    }

    /// After `sat`: the values of integer terms.
    pub fn values(&mut self, terms: &Terms, ts: &[TermId]) -> Result<Vec<BigInt>, String> {
        let mut text = String::new();
        let names: Vec<String> = (ts.iter())
            .map(|t| self.printer.prepare(terms, *t, &mut text))
            .collect();
        self.pending.push_str(&text);
        self.values_of(&names)
    }

    /// After `sat`: the values of SMT-LIB integer expressions.
    pub fn values_of(&mut self, exprs: &[String]) -> Result<Vec<BigInt>, String> {
        self.flush()?;
        self.session.int_values(exprs)
    }

    /// Whether the session's token stopped (its answers are cut short).
    pub fn is_stopped(&self) -> bool {
        self.session.is_stopped()
    }
}
