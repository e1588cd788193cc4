//! Hover on a target: its verdict, the engine and method that decided it,
//! its time, and its explanation (the proof, the witness and its trace,
//! or the reason), as `apc check --explain --trace` would print them.

use super::document::Document;
use super::verdicts::target_range;
use crate::check::Report;
use crate::engine::Verdict;
use lsp_types::{Hover, HoverContents, HoverParams, MarkupContent, MarkupKind, Position, Range};
use std::collections::HashMap;
use std::fmt::Write;

pub(super) fn hover(documents: &HashMap<String, Document>, params: &HoverParams) -> Option<Hover> {
    let at = &params.text_document_position_params;
    let doc = documents.get(at.text_document.uri.as_str())?;
    let (report, range) = (doc.reports.iter())
        .map(|r| (r, target_range(doc, &r.target)))
        .find(|(_, range)| contains(range, at.position))?;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: explained(report),
        }),
        range: Some(range),
    })
}

fn contains(r: &Range, p: Position) -> bool {
    r.start <= p && p <= r.end
}

/// The report as Markdown.
fn explained(r: &Report) -> String {
    let t = &r.target;
    let mut out = format!(
        "**{}** in `{}` at {}:{}: **{}**",
        t.kind.as_str(),
        t.function,
        t.line,
        t.col,
        r.verdict.name()
    );
    if let Some(m) = &r.method {
        let _ = write!(out, " [{m}]");
    }
    if let Some(solver) = &r.solver {
        let _ = write!(out, " with {solver}");
    }
    let _ = write!(out, " in {:.1} ms", r.time.as_secs_f64() * 1000.0);
    match &r.verdict {
        Verdict::Unreachable => {
            if let Some(p) = &r.proof {
                let _ = write!(out, "\n\nproof: {}", p.summary());
            }
            if let Some(note) = &r.note {
                let _ = write!(out, "\n\n{note}");
            }
        }
        Verdict::Reachable(w) => {
            let _ = write!(out, "\n\nwitness: `{w}`");
            if let Some(Ok(steps)) = &r.trace {
                out.push_str("\n\ntrace (the witness's run, replayed):\n");
                for s in steps {
                    let values = s.values_text();
                    let _ = write!(out, "\n- {}:{} `{}`: {}", s.line, s.col, s.code, s.what);
                    if !values.is_empty() {
                        let _ = write!(out, " {}", values.trim_start());
                    }
                }
            }
        }
        Verdict::Unknown(why) => {
            let _ = write!(
                out,
                "\n\n{}\n\nevery engine's reason: {why}",
                r.short_reason.as_deref().unwrap_or("")
            );
        }
    }
    out
}
