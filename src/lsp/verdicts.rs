//! The verdicts of a document's targets: checked by the portfolio on a
//! worker thread under a token the next edit throws, memoized across
//! edits, and shown as diagnostics (a reachable target an error with its
//! witness and its trace, an unknown one a warning with its reason, an
//! unreachable one a hint with its proof when asked).
//!
//! What the memo ([`super::memo`]) cannot answer goes to the portfolio.

use super::Settings;
use super::document::Document;
use super::memo::Memo;
use super::progress::Progress;
use crate::check::{self, Report};
use crate::db::{self, Database, Dependencies, SourceFile, Target};
use crate::deadline::{self, Stop};
use crate::engine::Verdict;
use crossbeam_channel::Sender;
use lsp_server::Message;
use lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri,
};
use std::thread::JoinHandle;

/// A check in flight: its token, and its worker.
pub(super) struct Checking {
    cancel: Stop,
    worker: JoinHandle<()>,
}

impl Checking {
    /// Stops the check and waits for its worker, which then holds no
    /// handle on the database.
    pub fn cancel(self) {
        self.cancel.stop();
        let _ = self.worker.join();
    }
}

/// What a worker tells the server.
pub(super) enum News {
    /// The verdicts of one version of a document.
    Checked(Checked),
    /// Its idle-time proofs from any call (`Memo::prove_from_any_call`).
    ProvedFromAnyCall {
        uri: Uri,
        version: i32,
        tried: usize,
        proved: usize,
        took: std::time::Duration,
    },
}

/// What a worker checked: the reports of one version of a document.
pub(super) struct Checked {
    pub uri: Uri,
    pub version: i32,
    pub reports: Vec<Report>,
    pub tally: Tally,
    pub took: std::time::Duration,
}

/// How a check's reports came: from the memo, by an earlier witness, or
/// from the engines (and their `check-sat`s).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Tally {
    pub remembered: usize,
    /// Of the remembered, how many by a proof from any call.
    pub from_any_call: usize,
    pub replayed: usize,
    pub solver_checks: u64,
}

/// Starts checking `doc`'s targets; the reports go to `done` unless the
/// check is cancelled first.
/// Its progress goes to `to_client` when given (`$/progress`).
pub(super) fn start(
    doc: &Document,
    uri: &Uri,
    settings: &Settings,
    memo: &Memo,
    done: &Sender<News>,
    to_client: Option<Sender<Message>>,
) -> Checking {
    let cancel = Stop::new();
    let mut opts = settings.check.clone();
    opts.cancel = cancel.clone();
    let (db, file, version, uri) = (doc.db.clone(), doc.file, doc.version, uri.clone());
    let (memo, done) = (memo.clone(), done.clone());
    let worker = deadline::analysis_thread()
        .name("apc-lsp-check".into())
        .spawn(move || {
            let start = std::time::Instant::now();
            let progress = |total| {
                let name = format!("{}#{version}", uri.as_str());
                Some(Progress::begin(to_client.clone()?, name, total))
            };
            let (reports, tally) = check_remembering(&db, file, &opts, &memo, &progress);
            if opts.cancel.is_thrown() {
                return;
            }
            let checked = Checked {
                uri: uri.clone(),
                version,
                reports: reports.clone(),
                tally,
                took: start.elapsed(),
            };
            let _ = done.send(News::Checked(checked));
            // Idle time, until the next edit: proofs that hold for any
            // call of the targets' functions, for the edits to come.
            let start = std::time::Instant::now();
            let (tried, proved) = memo.prove_from_any_call(&db, file, &reports, &opts);
            if !opts.cancel.is_thrown() {
                let took = start.elapsed();
                let _ = done.send(News::ProvedFromAnyCall {
                    uri,
                    version,
                    tried,
                    proved,
                    took,
                });
            }
        })
        .expect("spawning the checking thread");
    Checking { cancel, worker }
}

/// Every target's report: the memo's where it has one that still holds
/// (a verdict under the same dependencies, or a proof from any call of
/// its function), then a reachable one where the target's earlier
/// witness still reaches it, the portfolio's for the others (all of which the memo then keeps,
/// unless the check was cancelled); and how they came.
fn check_remembering(
    db: &Database,
    file: SourceFile,
    opts: &check::CheckOptions,
    memo: &Memo,
    progress: &dyn Fn(usize) -> Option<Progress>,
) -> (Vec<Report>, Tally) {
    let targets = db::targets(db, file);
    let deps: Vec<Dependencies> = (targets.iter())
        .map(|t| db::dependencies(db, file, t))
        .collect();
    let (mut remembered, mut replayed) = (0, 0);
    let known: Vec<Option<Report>> = (targets.iter().zip(&deps))
        .map(|(t, d)| {
            let recalled =
                (memo.recall(db, file, t, d)).or_else(|| memo.recall_from_any_call(db, file, t));
            remembered += usize::from(recalled.is_some());
            recalled.or_else(|| {
                let r = memo.replay_earlier_witness(db, file, t);
                replayed += usize::from(r.is_some());
                r
            })
        })
        .collect();
    let from_any_call = known.iter().flatten().filter(|r| r.note.is_some()).count();
    let missing: Vec<Target> = (targets.iter().zip(&known))
        .filter(|(_, r)| r.is_none())
        .map(|(t, _)| t.clone())
        .collect();
    let fresh = check_showing_progress(db, file, &missing, opts, progress);
    let solver_checks = fresh.iter().map(|r| r.solver_use.checks).sum();
    let mut fresh = fresh.into_iter();
    let reports: Vec<Report> = (known.into_iter())
        .map(|r| r.unwrap_or_else(|| fresh.next().expect("one report per target checked")))
        .collect();
    if !opts.cancel.is_thrown() {
        memo.keep_all(db, file, &deps, &reports);
    }
    let tally = Tally {
        remembered,
        from_any_call,
        replayed,
        solver_checks,
    };
    (reports, tally)
}

/// The portfolio's reports on `targets`, each shown as progress as it
/// comes.
fn check_showing_progress(
    db: &Database,
    file: SourceFile,
    targets: &[Target],
    opts: &check::CheckOptions,
    progress: &dyn Fn(usize) -> Option<Progress>,
) -> Vec<Report> {
    let shown = if targets.is_empty() {
        None
    } else {
        progress(targets.len())
    };
    let decided = |r: &Report| {
        if let Some(p) = &shown {
            p.decided(r);
        }
    };
    let fresh = check::check_all(db, file, targets, opts, &decided);
    if let Some(p) = shown {
        p.end(if opts.cancel.is_thrown() {
            "cancelled by an edit".into()
        } else {
            let [unreachable, reachable, unknown] = check::verdict_counts(&fresh);
            format!("{unreachable} unreachable, {reachable} reachable, {unknown} unknown")
        });
    }
    fresh
}

/// The document's diagnostics: the front end's warnings, then one per
/// target that is not proved (and one per proof with `show_proofs`).
pub(super) fn diagnostics(doc: &Document, uri: &Uri, show_proofs: bool) -> Vec<Diagnostic> {
    let mut out = doc.front_end_diagnostics();
    for r in &doc.reports {
        if let Some(d) = verdict_diagnostic(doc, uri, r, show_proofs) {
            out.push(d);
        }
    }
    out
}

fn verdict_diagnostic(
    doc: &Document,
    uri: &Uri,
    r: &Report,
    show_proofs: bool,
) -> Option<Diagnostic> {
    let t = &r.target;
    let what = format!("{} in {}", t.kind.as_str(), t.function);
    let how = r
        .method
        .as_ref()
        .map(|m| format!(" [{m}]"))
        .unwrap_or_default();
    let (severity, message) = match &r.verdict {
        Verdict::Reachable(w) => (
            DiagnosticSeverity::ERROR,
            format!("{what} is reachable with {w}{how}"),
        ),
        Verdict::Unknown(why) => (
            DiagnosticSeverity::WARNING,
            format!(
                "{what}: unknown ({})",
                r.short_reason.as_deref().unwrap_or(why)
            ),
        ),
        Verdict::Unreachable if show_proofs => (
            DiagnosticSeverity::HINT,
            format!(
                "{what} is unreachable{how}: {}",
                r.proof.as_ref().map(|p| p.summary()).unwrap_or_default()
            ),
        ),
        Verdict::Unreachable => return None,
    };
    Some(Diagnostic {
        range: target_range(doc, t),
        severity: Some(severity),
        code: Some(NumberOrString::String(r.verdict.name().to_string())),
        source: Some("apc".into()),
        message,
        related_information: trace_steps(doc, uri, r),
        ..Diagnostic::default()
    })
}

/// The token a target is reported at: `assert`, or the operator.
pub(super) fn target_range(doc: &Document, t: &Target) -> lsp_types::Range {
    let width = match t.kind {
        crate::TargetKind::Assert => "assert".len() as u32,
        _ => 1,
    };
    doc.range_at(t.line, t.col, width)
}

/// A reachable target's trace, one related location per step.
fn trace_steps(doc: &Document, uri: &Uri, r: &Report) -> Option<Vec<DiagnosticRelatedInformation>> {
    let Some(Ok(steps)) = &r.trace else {
        return None;
    };
    let related = (steps.iter())
        .map(|s| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), doc.range_at(s.line, s.col, 1)),
            message: s.text(),
        })
        .collect();
    Some(related)
}
