//! An open document: one salsa database across its edits (the front end
//! recomputes only what an edit touched), its text, its lines in the
//! client's terms (UTF-16 columns), its check in flight and its last
//! verdicts; and the front end's diagnostics as LSP diagnostics.

use super::verdicts::Checking;
use crate::check::Report;
use crate::db::{self, Database, SourceFile};
use crate::syntax::{Diagnostic as FrontEnd, Severity, Span};
use lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, Position, Range, Uri,
};
use salsa::Setter;

pub(super) struct Document {
    pub uri: Uri,
    pub db: Database,
    pub file: SourceFile,
    pub version: i32,
    pub text: String,
    /// Where each line starts (byte offsets).
    line_starts: Vec<usize>,
    pub checking: Option<Checking>,
    /// The verdicts of the current version, once checked.
    pub reports: Vec<Report>,
}

impl Document {
    pub fn new(uri: &Uri, version: i32, text: String) -> Document {
        let (db, file) = Database::with_file(uri.as_str(), &text);
        Document {
            uri: uri.clone(),
            db,
            file,
            version,
            line_starts: line_starts(&text),
            text,
            checking: None,
            reports: Vec::new(),
        }
    }

    /// The new text of the document, in the same database: salsa keeps
    /// what the edit did not touch. The check in flight must have ended
    /// ([`Document::cancel`]): setting an input waits for every other
    /// handle on the database.
    pub fn set_text(&mut self, version: i32, text: String) {
        self.line_starts = line_starts(&text);
        self.file.set_text(&mut self.db).to(text.clone());
        self.text = text;
        self.version = version;
        self.reports.clear();
    }

    /// Stops the check in flight and waits for its worker to let go of the
    /// database.
    pub fn cancel(&mut self) {
        if let Some(c) = self.checking.take() {
            c.cancel();
        }
    }

    /// Whether the front end accepted the text (no error): only then are
    /// the targets checked.
    pub fn is_clean(&self) -> bool {
        !db::diagnostics(&self.db, self.file)
            .iter()
            .any(FrontEnd::is_error)
    }

    /// The parser's and the type checker's diagnostics.
    pub fn front_end_diagnostics(&self) -> Vec<Diagnostic> {
        (db::diagnostics(&self.db, self.file).iter())
            .map(|d| self.diagnostic(d))
            .collect()
    }

    fn diagnostic(&self, d: &FrontEnd) -> Diagnostic {
        let primary = d.labels.iter().find(|l| l.primary).or(d.labels.first());
        let range = primary.map_or_else(Range::default, |l| self.range(l.span));
        let mut message = d.message.clone();
        if let Some(l) = primary.filter(|l| !l.message.is_empty()) {
            message.push_str(&format!(": {}", l.message));
        }
        for note in &d.notes {
            message.push_str(&format!("\n{note}"));
        }
        let related: Vec<DiagnosticRelatedInformation> = (d.labels.iter())
            .filter(|l| !l.primary && !l.message.is_empty())
            .map(|l| DiagnosticRelatedInformation {
                location: Location::new(self.uri.clone(), self.range(l.span)),
                message: l.message.clone(),
            })
            .collect();
        Diagnostic {
            range,
            severity: Some(match d.severity {
                Severity::Error => DiagnosticSeverity::ERROR,
                Severity::Warning => DiagnosticSeverity::WARNING,
            }),
            source: Some("apc".into()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            ..Diagnostic::default()
        }
    }

    /// An absolute span as an LSP range.
    pub fn range(&self, span: Span) -> Range {
        Range::new(
            self.position(span.start as usize),
            self.position(span.end as usize),
        )
    }

    /// A byte offset as a line and a UTF-16 column.
    pub fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let column: usize = (self.text.get(start..offset).unwrap_or(""))
            .chars()
            .map(char::len_utf16)
            .sum();
        Position::new(line as u32, column as u32)
    }

    /// The range of the `line:col` (1-based, columns in characters) the
    /// reports use, `width` characters wide.
    pub fn range_at(&self, line: u32, col: u32, width: u32) -> Range {
        let Some(&start) = self.line_starts.get(line.saturating_sub(1) as usize) else {
            return Range::default();
        };
        let rest = self.text.get(start..).unwrap_or("");
        let byte = |chars: u32| {
            start
                + (rest.char_indices())
                    .nth(chars as usize)
                    .map_or(rest.len(), |(i, _)| i)
        };
        let from = byte(col.saturating_sub(1));
        let to = byte(col.saturating_sub(1) + width);
        Range::new(self.position(from), self.position(to))
    }
}

fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}
