//! The verdicts of a document's targets: checked by the portfolio on a
//! worker thread under a token the next edit throws, memoized across
//! edits, and shown as diagnostics (a reachable target an error with its
//! witness and its trace, an unknown one a warning with its reason, an
//! unreachable one a hint with its proof when asked).
//!
//! The memo is keyed by the document's whole text and the target: a
//! target's reachability from `main` depends on every function a run may
//! pass through before it, callers included, so the key is the program
//! (docs/editors.md, "What is checked again").

use super::Settings;
use super::document::Document;
use crate::check::{self, Report};
use crate::db::{self, Database, SourceFile, Target};
use crate::deadline::{self, Stop};
use crate::engine::Verdict;
use crossbeam_channel::Sender;
use lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri,
};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
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

/// What a worker checked: the reports of one version of a document.
pub(super) struct Checked {
    pub uri: Uri,
    pub version: i32,
    pub reports: Vec<Report>,
    /// How many of the reports came from the memo.
    pub remembered: usize,
    pub took: std::time::Duration,
}

/// The definite verdicts of earlier checks, by program and target.
#[derive(Clone, Default)]
pub(super) struct Memo(Arc<Mutex<HashMap<u64, Report>>>);

impl Memo {
    fn get(&self, key: u64) -> Option<Report> {
        self.0.lock().ok()?.get(&key).cloned()
    }

    fn keep(&self, key: u64, report: &Report) {
        if let Ok(mut m) = self.0.lock() {
            m.insert(key, report.clone());
        }
    }
}

/// Starts checking `doc`'s targets; the reports go to `done` unless the
/// check is cancelled first.
pub(super) fn start(
    doc: &Document,
    uri: &Uri,
    settings: &Settings,
    memo: &Memo,
    done: &Sender<Checked>,
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
            let (reports, remembered) = check_remembering(&db, file, &opts, &memo);
            drop(db);
            if !opts.cancel.is_thrown() {
                let _ = done.send(Checked {
                    uri,
                    version,
                    reports,
                    remembered,
                    took: start.elapsed(),
                });
            }
        })
        .expect("spawning the checking thread");
    Checking { cancel, worker }
}

/// Every target's report: the memo's where it has one, the portfolio's
/// for the others (which the memo then keeps, if definite); and how many
/// the memo gave.
fn check_remembering(
    db: &Database,
    file: SourceFile,
    opts: &check::CheckOptions,
    memo: &Memo,
) -> (Vec<Report>, usize) {
    let targets = db::targets(db, file);
    let program = program_key(file.text(db));
    let keys: Vec<u64> = targets.iter().map(|t| target_key(program, t)).collect();
    let remembered: Vec<Option<Report>> = keys.iter().map(|&k| memo.get(k)).collect();
    let missing: Vec<Target> = (targets.iter().zip(&remembered))
        .filter(|(_, r)| r.is_none())
        .map(|(t, _)| t.clone())
        .collect();
    let remembered_count = targets.len() - missing.len();
    let mut fresh = check::check_all(db, file, &missing, opts, &|_| {}).into_iter();
    let reports: Vec<Report> = (remembered.into_iter())
        .map(|r| r.unwrap_or_else(|| fresh.next().expect("one report per target checked")))
        .collect();
    if !opts.cancel.is_thrown() {
        for (k, r) in keys.iter().zip(&reports) {
            if r.verdict.is_definite() {
                memo.keep(*k, r);
            }
        }
    }
    (reports, remembered_count)
}

fn program_key(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

fn target_key(program: u64, t: &Target) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    // The text fixes everything else about the target (its kind, place).
    (program, &t.function, t.id).hash(&mut h);
    h.finish()
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
