//! Diagnostics: what every layer reports about the user's program.
//!
//! A diagnostic carries absolute byte spans into one source file. Rendering
//! (file:line:col, the source line with a caret) is delegated to
//! `codespan-reporting`; this module only owns the data and the line index.

use std::fmt::Write as _;

/// A half-open byte range `[start, end)` in a source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }
    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
    /// Moves a span by `offset` bytes (function-relative to absolute).
    pub fn shift(self, offset: u32) -> Span {
        Span::new(self.start + offset, self.end + offset)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    pub span: Span,
    pub message: String,
    /// The primary label gets the caret; secondary ones are context.
    pub primary: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            labels: vec![],
            notes: vec![],
        }
    }
    pub fn warning(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            message: message.into(),
            labels: vec![],
            notes: vec![],
        }
    }
    pub fn primary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: true,
        });
        self
    }
    pub fn secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }
    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Maps byte offsets to 1-based line and column numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    line_starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        LineIndex { line_starts }
    }
    /// 1-based (line, column); the column counts characters, not bytes.
    pub fn line_col(&self, text: &str, offset: u32) -> (u32, u32) {
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line] as usize;
        let end = (offset as usize).min(text.len());
        let col = text
            .get(start..end)
            .map(|s| s.chars().count())
            .unwrap_or(end - start);
        (line as u32 + 1, col as u32 + 1)
    }
}

/// Renders diagnostics for one file as plain text, in the format of
/// rustc/codespan: `error: …`, `┌─ file:line:col`, the line, a caret.
pub fn render(path: &str, text: &str, diagnostics: &[Diagnostic]) -> String {
    use codespan_reporting::diagnostic as cs;
    use codespan_reporting::files::SimpleFile;
    use codespan_reporting::term;

    let file = SimpleFile::new(path, text);
    let config = term::Config::default();
    let mut out = String::new();
    for d in diagnostics {
        let base = match d.severity {
            Severity::Error => cs::Diagnostic::error(),
            Severity::Warning => cs::Diagnostic::warning(),
        };
        let labels = d
            .labels
            .iter()
            .map(|l| {
                let range = clamp(l.span, text.len());
                let label = if l.primary {
                    cs::Label::primary((), range)
                } else {
                    cs::Label::secondary((), range)
                };
                label.with_message(l.message.clone())
            })
            .collect();
        let diag = base
            .with_message(d.message.clone())
            .with_labels(labels)
            .with_notes(d.notes.clone());
        match term::emit_into_string(&config, &file, &diag) {
            Ok(s) => out.push_str(&s),
            Err(_) => {
                let _ = writeln!(out, "{}: {}", path, d.message);
            }
        }
    }
    out
}

fn clamp(span: Span, len: usize) -> std::ops::Range<usize> {
    let start = (span.start as usize).min(len);
    let end = (span.end as usize).clamp(start, len);
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_is_one_based_and_counts_chars() {
        let text = "ab\ncé\nx";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_col(text, 0), (1, 1));
        assert_eq!(idx.line_col(text, 3), (2, 1));
        // 'é' is two bytes; the 'x' after the newline is line 3 col 1.
        assert_eq!(idx.line_col(text, text.find('x').unwrap() as u32), (3, 1));
    }
}
