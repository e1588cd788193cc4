//! What earlier checks found, for the checks after an edit
//! (docs/editors.md, "What is checked again"):
//!
//! - every verdict, keyed by what it depends on (`db::dependencies`: the
//!   call graph and the functions a run may execute before the target,
//!   callers included), so an edit elsewhere leaves it as it was; its
//!   places move with their functions;
//! - the last witness of each target found reachable, replayed first
//!   when its key changed.

use crate::TargetKind;
use crate::check::{self, Report};
use crate::db::{self, Database, Dependencies, SourceFile, Target};
use crate::engine::{Decision, How, Method, Place, Proof, Verdict};
use crate::interp::Witness;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// What earlier checks found, shared by the workers.
#[derive(Clone, Default)]
pub(super) struct Memo(Arc<Mutex<Kept>>);

#[derive(Default)]
struct Kept {
    /// Each verdict, by what it depends on (`db::dependencies`).
    verdicts: HashMap<u64, Remembered>,
    /// Proofs from any call of a target's function, by that function and
    /// its callees (`db::dependencies_from_any_call`).
    from_any_call: HashMap<u64, Remembered>,
    /// The same keys, where the try found no proof.
    not_from_any_call: HashSet<u64>,
    /// The last witness of each target found reachable, by its function,
    /// id and kind: replayed first when the target is checked again.
    witnesses: HashMap<(String, u32, TargetKind), Witness>,
}

/// A verdict as it was given, and the line each function it depends on
/// started at then (to move its places with the function).
#[derive(Clone)]
struct Remembered {
    report: Report,
    starts: BTreeMap<String, u32>,
}

fn witness_key(t: &Target) -> (String, u32, TargetKind) {
    (t.function.clone(), t.id, t.kind)
}

impl Memo {
    /// Keeps every report, with where its functions start.
    pub fn keep_all(
        &self,
        db: &Database,
        file: SourceFile,
        deps: &[Dependencies],
        reports: &[Report],
    ) {
        for (d, r) in deps.iter().zip(reports) {
            let starts = starts_of(db, file, d);
            let report = r.clone();
            self.keep(d.fingerprint, Remembered { report, starts });
        }
    }

    /// Target `t` reachable by the witness an earlier text of the program
    /// had for it, if the reference interpreter, replaying it on this text,
    /// fails at `t` (the replay is the trace). No solver: an edit that keeps
    /// the way to a target open costs one run.
    pub fn replay_earlier_witness(
        &self,
        db: &Database,
        file: SourceFile,
        t: &Target,
    ) -> Option<Report> {
        let w = self.earlier_witness(t)?;
        let start = std::time::Instant::now();
        let trace = check::traced::trace(db, file, t, &w).ok()?;
        let method = Method::new("editor", How::EarlierWitness);
        let decision = Decision::reachable(w, method, None);
        let mut report = Report::decided_outside(t, decision, start.elapsed());
        report.trace = Some(Ok(trace));
        Some(report)
    }

    /// A remembered verdict for target `t` of the program now, its places
    /// moved with their functions; `None` if it cannot be carried over: an
    /// unknown whose reason may name a moved line, a witness that no longer
    /// replays to the target. A witness is replayed when its functions moved
    /// (the replay gives the trace at the new lines); when none moved, the
    /// run up to the target is the one traced before.
    pub fn recall(
        &self,
        db: &Database,
        file: SourceFile,
        t: &Target,
        deps: &Dependencies,
    ) -> Option<Report> {
        let then = self.get(deps.fingerprint)?;
        carry_over(db, file, t, then)
    }

    /// A proof that target `t` is unreachable from any call of its
    /// function, kept for the function and callees it has now.
    pub fn recall_from_any_call(
        &self,
        db: &Database,
        file: SourceFile,
        t: &Target,
    ) -> Option<Report> {
        let key = db::dependencies_from_any_call(db, file, t).fingerprint;
        let then = self.0.lock().ok()?.from_any_call.get(&key).cloned()?;
        carry_over(db, file, t, then)
    }

    /// Proves, for each target the portfolio proved unreachable in a
    /// function other than `main`, that no call of that function reaches
    /// it (`check::anywhere`), unless that was tried already for the same
    /// function and callees; how many it tried and proved. Work for idle
    /// time: `opts.cancel` stops it.
    pub fn prove_from_any_call(
        &self,
        db: &Database,
        file: SourceFile,
        reports: &[Report],
        opts: &check::CheckOptions,
    ) -> (usize, usize) {
        let (mut tried, mut proved) = (0, 0);
        let candidates = (reports.iter())
            .filter(|r| matches!(r.verdict, Verdict::Unreachable) && r.note.is_none())
            .filter(|r| r.target.function != "main");
        for r in candidates {
            let deps = db::dependencies_from_any_call(db, file, &r.target);
            let key = deps.fingerprint;
            let known = (self.0.lock().ok()).is_some_and(|k| {
                k.from_any_call.contains_key(&key) || k.not_from_any_call.contains(&key)
            });
            if known || opts.cancel.is_thrown() {
                continue;
            }
            tried += 1;
            let found = check::anywhere::unreachable_from_any_call(db, file, &r.target, opts);
            let Ok(mut kept) = self.0.lock() else {
                continue;
            };
            match found {
                Some(mut report) => {
                    proved += 1;
                    report.note = Some(from_any_call_note(&r.target.function));
                    let starts = starts_of(db, file, &deps);
                    kept.from_any_call
                        .insert(key, Remembered { report, starts });
                }
                // Not again for the same function and callees, unless an
                // edit stopped this try.
                None if !opts.cancel.is_thrown() => {
                    kept.not_from_any_call.insert(key);
                }
                None => {}
            }
        }
        (tried, proved)
    }
}

/// What a proof from any call says of itself, in hover.
fn from_any_call_note(function: &str) -> String {
    format!(
        "proved for any call of `{function}` (kept while `{function}` and its callees stay as they are)"
    )
}

/// Where each of the functions a verdict depends on starts now.
fn starts_of(db: &Database, file: SourceFile, deps: &Dependencies) -> BTreeMap<String, u32> {
    let starts = db::function_starts(db, file);
    (deps.functions.iter())
        .filter_map(|f| Some((f.clone(), starts.get(f)?.0)))
        .collect()
}

/// A remembered verdict for target `t` of the program now, its places
/// moved with their functions (see [`Memo::recall`]).
fn carry_over(db: &Database, file: SourceFile, t: &Target, then: Remembered) -> Option<Report> {
    let now = db::function_starts(db, file);
    let shift = |line: u32| -> Option<u32> {
        let (f, start) = (then.starts.iter())
            .filter(|(_, s)| **s <= line)
            .max_by_key(|(_, s)| **s)?;
        Some(line - start + now.get(f)?.0)
    };
    let moved = (then.starts.iter()).any(|(f, s)| now.get(f).map(|n| n.0) != Some(*s));
    let mut report = then.report;
    report.target = t.clone();
    match &mut report.verdict {
        Verdict::Unknown(_) if moved => return None,
        Verdict::Unknown(_) => {}
        Verdict::Reachable(_) if !moved => {}
        Verdict::Reachable(w) => {
            let trace = check::traced::trace(db, file, t, w);
            trace.as_ref().ok()?;
            report.trace = report.trace.is_some().then_some(trace);
        }
        Verdict::Unreachable => {
            if let Some(Proof::Invariants(invariants) | Proof::ConditionUnsat(_, invariants)) =
                &mut report.proof
            {
                for inv in invariants {
                    if let Place::Loop { line, .. } = &mut inv.at {
                        *line = shift(*line)?;
                    }
                }
            }
        }
    }
    Some(report)
}

impl Memo {
    fn get(&self, key: u64) -> Option<Remembered> {
        self.0.lock().ok()?.verdicts.get(&key).cloned()
    }

    fn earlier_witness(&self, t: &Target) -> Option<Witness> {
        self.0.lock().ok()?.witnesses.get(&witness_key(t)).cloned()
    }

    fn keep(&self, key: u64, remembered: Remembered) {
        if let Ok(mut kept) = self.0.lock() {
            if let Verdict::Reachable(w) = &remembered.report.verdict {
                let target = witness_key(&remembered.report.target);
                kept.witnesses.insert(target, w.clone());
            }
            kept.verdicts.insert(key, remembered);
        }
    }
}
