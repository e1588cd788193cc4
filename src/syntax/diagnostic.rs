//! Diagnostics: what every layer reports about the user's program.
//!
//! A diagnostic carries absolute byte spans into one source file. Rendering
//! (file:line:col, the source line with a caret) is delegated to
//! `codespan-reporting`; this module owns the data, the line index, and the
//! windowing of long source lines (codespan prints a labelled line whole, so
//! a diagnostic on a 100 KB line would echo 100 KB: see [`render`]).

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

/// Source lines of up to this many characters are shown whole.
pub const MAX_LINE_CHARS: usize = 150;
/// On a longer line, this many characters are shown on each side of each
/// end of a label (so about 120 columns around a short label); the parts
/// cut away are shown as `…`.
pub const CONTEXT_CHARS: usize = 60;

/// Renders diagnostics for one file as plain text, in the format of
/// rustc/codespan: `error: …`, `┌─ file:line:col`, the line, a caret.
///
/// Lines longer than [`MAX_LINE_CHARS`] are cut around the labels
/// ([`CONTEXT_CHARS`] on each side of each label's ends, `…` where cut):
/// codespan renders from a windowed copy of the labelled lines, with the
/// labels moved along, and takes its line and column numbers from the
/// original text. Cuts fall on character boundaries.
pub fn render(path: &str, text: &str, diagnostics: &[Diagnostic]) -> String {
    use codespan_reporting::diagnostic as cs;
    use codespan_reporting::files::SimpleFile;
    use codespan_reporting::term;

    let file = SimpleFile::new(path, text);
    let index = LineIndex::new(text);
    let config = term::Config::default();
    let mut out = String::new();
    for d in diagnostics {
        let base = match d.severity {
            Severity::Error => cs::Diagnostic::error(),
            Severity::Warning => cs::Diagnostic::warning(),
        };
        let ranges: Vec<std::ops::Range<usize>> =
            d.labels.iter().map(|l| clamp(l.span, text.len())).collect();
        let window = Window::new(path, text, &index, &ranges);
        let labels = d
            .labels
            .iter()
            .zip(&ranges)
            .map(|(l, range)| {
                let range = match &window {
                    Some(w) => w.map(range.start)..w.map(range.end),
                    None => range.clone(),
                };
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
        let rendered = match &window {
            Some(w) => term::emit_into_string(&config, w, &diag),
            None => term::emit_into_string(&config, &file, &diag),
        };
        match rendered {
            Ok(s) => out.push_str(&s),
            Err(_) => {
                let _ = writeln!(out, "{}: {}", path, d.message);
            }
        }
    }
    out
}

/// The part of one source line shown: `len` bytes from `orig` in the
/// original text, at `out` in the windowed text.
#[derive(Clone, Copy, Debug)]
struct Segment {
    out: usize,
    orig: usize,
    len: usize,
}

/// A windowed copy of the lines a diagnostic's labels touch (from the
/// first label's line to the last one's), each line longer than
/// [`MAX_LINE_CHARS`] cut to segments around the labels' ends. Line numbers
/// and columns are the original ones.
struct Window<'t> {
    path: &'t str,
    original: &'t str,
    /// Line index (0-based, original) of the first line copied.
    first_line: usize,
    /// Original start of each copied line, and its windowed start.
    orig_starts: Vec<usize>,
    out_starts: Vec<usize>,
    /// The segments of each copied line (one whole-line segment if uncut).
    segments: Vec<Vec<Segment>>,
    text: String,
}

const ELLIPSIS: &str = "…";

impl<'t> Window<'t> {
    /// `None` when no labelled line is long: codespan gets the original.
    fn new(
        path: &'t str,
        original: &'t str,
        index: &LineIndex,
        ranges: &[std::ops::Range<usize>],
    ) -> Option<Window<'t>> {
        let line_of = |b: usize| match index.line_starts.binary_search(&(b as u32)) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let first = ranges.iter().map(|r| line_of(r.start)).min()?;
        let last = ranges.iter().map(|r| line_of(r.end)).max()?;
        let line_end = |i: usize| -> usize {
            // The line's content, without its newline.
            let next = index
                .line_starts
                .get(i + 1)
                .map_or(original.len(), |&s| s as usize - 1);
            next.max(index.line_starts[i] as usize)
        };
        let long = |i: usize| {
            let (a, b) = (index.line_starts[i] as usize, line_end(i));
            b - a > MAX_LINE_CHARS && original[a..b].chars().count() > MAX_LINE_CHARS
        };
        if !(first..=last).any(long) {
            return None;
        }
        let mut w = Window {
            path,
            original,
            first_line: first,
            orig_starts: vec![],
            out_starts: vec![],
            segments: vec![],
            text: String::new(),
        };
        for i in first..=last {
            let (a, b) = (index.line_starts[i] as usize, line_end(i));
            let out_start = w.text.len();
            w.orig_starts.push(a);
            w.out_starts.push(out_start);
            let line = &original[a..b];
            let segs = if long(i) {
                // The label ends on this line, as byte offsets in it.
                let points: Vec<usize> = ranges
                    .iter()
                    .flat_map(|r| [r.start, r.end])
                    .filter(|&p| a <= p && p <= b)
                    .map(|p| p - a)
                    .collect();
                cut(line, &points)
            } else {
                vec![(0, line.len())]
            };
            let mut line_segs = Vec::new();
            let mut at = 0;
            for (s, e) in segs {
                if s > at {
                    w.text.push_str(ELLIPSIS);
                }
                line_segs.push(Segment {
                    out: w.text.len(),
                    orig: a + s,
                    len: e - s,
                });
                w.text.push_str(&line[s..e]);
                at = e;
            }
            if at < line.len() {
                w.text.push_str(ELLIPSIS);
            }
            w.segments.push(line_segs);
            if b < original.len() {
                w.text.push('\n');
            }
        }
        Some(w)
    }

    /// Where an original byte offset (in the copied lines) is in the copy:
    /// inside a segment it moves with it; a cut-away offset goes to the `…`
    /// that replaces it. Always a character boundary of the copy.
    fn map(&self, pos: usize) -> usize {
        let mut out = self.map_bytes(pos).min(self.text.len());
        while !self.text.is_char_boundary(out) {
            out -= 1;
        }
        out
    }

    fn map_bytes(&self, pos: usize) -> usize {
        let i = match self.orig_starts.binary_search(&pos) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let mut out = self.out_starts[i];
        for seg in &self.segments[i] {
            if pos < seg.orig {
                return out;
            }
            if pos <= seg.orig + seg.len {
                return seg.out + (pos - seg.orig);
            }
            out = seg.out + seg.len;
        }
        out
    }

    /// The original byte offset of a byte of the copy.
    fn unmap(&self, line: usize, byte: usize) -> usize {
        let segs = &self.segments[line];
        let seg = segs.iter().rev().find(|s| s.out <= byte).or(segs.first());
        match seg {
            Some(s) => s.orig + (byte - s.out.min(byte)).min(s.len),
            None => self.orig_starts[line],
        }
    }
}

impl<'a> codespan_reporting::files::Files<'a> for Window<'_> {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, (): ()) -> Result<&'a str, codespan_reporting::files::Error> {
        Ok(self.path)
    }

    fn source(&'a self, (): ()) -> Result<&'a str, codespan_reporting::files::Error> {
        Ok(&self.text)
    }

    fn line_index(
        &'a self,
        (): (),
        byte: usize,
    ) -> Result<usize, codespan_reporting::files::Error> {
        Ok(match self.out_starts.binary_search(&byte) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        })
    }

    fn line_number(
        &'a self,
        (): (),
        line: usize,
    ) -> Result<usize, codespan_reporting::files::Error> {
        Ok(self.first_line + line + 1)
    }

    fn column_number(
        &'a self,
        (): (),
        line: usize,
        byte: usize,
    ) -> Result<usize, codespan_reporting::files::Error> {
        let line = line.min(self.segments.len().saturating_sub(1));
        let start = self.orig_starts[line];
        let orig = self.unmap(line, byte).max(start);
        let chars = self
            .original
            .get(start..orig)
            .map_or(orig - start, |s| s.chars().count());
        Ok(chars + 1)
    }

    fn line_range(
        &'a self,
        (): (),
        line: usize,
    ) -> Result<std::ops::Range<usize>, codespan_reporting::files::Error> {
        let start =
            *self
                .out_starts
                .get(line)
                .ok_or(codespan_reporting::files::Error::LineTooLarge {
                    given: line,
                    max: self.out_starts.len().saturating_sub(1),
                })?;
        let end = self
            .out_starts
            .get(line + 1)
            .copied()
            .unwrap_or(self.text.len());
        Ok(start..end)
    }
}

/// The parts of a long `line` to show: [`CONTEXT_CHARS`] characters on each
/// side of each point (byte offsets in the line), merged where they meet,
/// as byte ranges on character boundaries, in order.
fn cut(line: &str, points: &[usize]) -> Vec<(usize, usize)> {
    // Character boundaries: bounds[k] is the byte offset of character k.
    let bounds: Vec<usize> = line
        .char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(line.len()))
        .collect();
    let char_of = |b: usize| match bounds.binary_search(&b) {
        Ok(k) => k,
        Err(k) => k.saturating_sub(1),
    };
    let n = bounds.len() - 1;
    let mut spans: Vec<(usize, usize)> = points
        .iter()
        .map(|&p| {
            let k = char_of(p);
            (k.saturating_sub(CONTEXT_CHARS), (k + CONTEXT_CHARS).min(n))
        })
        .collect();
    if spans.is_empty() {
        // A line inside a multi-line label: its start.
        spans.push((0, (2 * CONTEXT_CHARS).min(n)));
    }
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (s, e) in spans {
        match merged.last_mut() {
            // Touching or a cut of a few characters only: one segment.
            Some((_, last)) if s <= *last + 3 => *last = (*last).max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
        .into_iter()
        .map(|(s, e)| (bounds[s], bounds[e]))
        .collect()
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

    /// The source line `n │ …` of a rendering and the line under it.
    fn shown_line(rendered: &str, n: u32) -> (String, String) {
        let prefix = format!("{n} │ ");
        let lines: Vec<&str> = rendered.lines().collect();
        let i = lines
            .iter()
            .position(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no line {n} in:\n{rendered}"));
        let gutter = prefix.chars().count();
        let under: String = lines[i + 1].chars().skip(gutter).collect();
        (lines[i][prefix.len()..].to_string(), under)
    }

    /// The characters of `line` above the carets of `under`.
    fn under_carets(line: &str, under: &str) -> String {
        let line: Vec<char> = line.chars().collect();
        under
            .chars()
            .enumerate()
            .filter(|&(_, c)| c == '^')
            .map(|(k, _)| line[k])
            .collect()
    }

    #[test]
    fn long_lines_are_cut_around_the_caret() {
        // The report: a diagnostic on a 100 KB line echoed the whole line.
        let mut line = "x".repeat(100_000);
        line.replace_range(49_999..50_000, "$");
        let text = format!("main() {{\n{line}\n}}\n");
        let (_, diags) = crate::syntax::parse(&text);
        assert_eq!(diags[0].message, "unexpected character `$`");
        let r = render("long.mc", &text, &diags[..1]);
        assert!(r.len() < 2_000, "{} bytes:\n{r}", r.len());
        assert!(r.contains("long.mc:2:50000"), "{r}");
        let (shown, under) = shown_line(&r, 2);
        assert!(shown.starts_with('…') && shown.ends_with('…'), "{shown}");
        assert_eq!(under_carets(&shown, &under), "$");
        // About 120 columns around the caret.
        assert!((120..=125).contains(&shown.chars().count()), "{shown}");
    }

    #[test]
    fn short_lines_are_shown_whole() {
        let text = "main() { return 1 $ 2; }\n";
        let (_, diags) = crate::syntax::parse(text);
        let r = render("short.mc", text, &diags[..1]);
        let (shown, under) = shown_line(&r, 1);
        assert_eq!(shown, text.trim_end());
        assert_eq!(under_carets(&shown, &under), "$");
        assert!(r.contains("short.mc:1:19"), "{r}");
    }

    #[test]
    fn cuts_never_split_a_character_and_columns_count_characters() {
        // Two-byte and three-byte characters (one column each) around the
        // label, at every alignment of the cut.
        for shift in 0..3 {
            let line = format!(
                "{}{}é∈@ж∈é{}",
                "x".repeat(shift),
                "ж∈".repeat(30_000),
                "é∈".repeat(30_000)
            );
            let at = line.find('@').unwrap();
            let col = line[..at].chars().count() as u32 + 1;
            let text = format!("{line}\n");
            let d = Diagnostic::error("here").primary(Span::new(at as u32, at as u32 + 1), "this");
            let r = render("u.mc", &text, &[d]);
            assert!(r.len() < 2_000, "{} bytes", r.len());
            assert!(r.contains(&format!("u.mc:1:{col}")), "{r}");
            let (shown, under) = shown_line(&r, 1);
            assert_eq!(under_carets(&shown, &under), "@");
        }
        // Wide characters: no panic, the right column.
        let line = format!("{}@{}", "🌏".repeat(500), "🗻".repeat(500));
        let d = Diagnostic::error("here").primary(Span::new(2000, 2001), "this");
        let r = render("w.mc", &line, &[d]);
        assert!(r.contains("w.mc:1:501"), "{r}");
        assert!(r.len() < 2_000, "{} bytes", r.len());
    }

    #[test]
    fn distant_labels_on_one_long_line_each_get_a_window() {
        let mut line = "y".repeat(100_000);
        line.replace_range(10..11, "A");
        line.replace_range(70_000..70_001, "B");
        let text = format!("{line}\n");
        let d = Diagnostic::error("two places")
            .primary(Span::new(70_000, 70_001), "primary")
            .secondary(Span::new(10, 11), "secondary");
        let r = render("two.mc", &text, &[d]);
        assert!(r.len() < 2_000, "{} bytes:\n{r}", r.len());
        assert!(r.contains("two.mc:1:70001"), "{r}");
        let (shown, under) = shown_line(&r, 1);
        assert!(!shown.starts_with('…'), "the first window starts the line");
        assert_eq!(shown.matches('…').count(), 2, "{shown}");
        assert_eq!(under_carets(&shown, &under), "B");
        // A label over most of the line is cut at both of its ends.
        let d = Diagnostic::error("long label").primary(Span::new(5, 99_990), "all this");
        let r = render("two.mc", &text, &[d]);
        assert!(r.len() < 2_000, "{} bytes:\n{r}", r.len());
        // A label over several long lines, and a label past the end.
        let text = format!("{line}\n{line}\n{line}\n");
        let d = Diagnostic::error("lines")
            .primary(Span::new(50_000, 250_000), "these")
            .secondary(Span::new(400_000, 400_010), "past the end");
        let r = render("three.mc", &text, &[d]);
        assert!(r.len() < 4_000, "{} bytes:\n{r}", r.len());
        assert!(r.contains("three.mc:1:50001"), "{r}");
    }
}
