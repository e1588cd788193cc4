//! Code actions on a reachable target: "Replay the witness" runs it on
//! the interpreter and shows what the run printed and where it failed
//! (`window/showMessage`), as `apc run --args … --input …` would.

use super::document::Document;
use super::verdicts::target_range;
use crate::engine::Verdict;
use crate::interp::{self, Limits, Outcome};
use lsp_types::{CodeActionOrCommand, CodeActionParams, Command, Range};
use serde_json::{Value, json};
use std::collections::HashMap;

/// The command that replays a target's witness.
pub(super) const REPLAY: &str = "apc.replayWitness";

/// The actions at the request's range: one replay per reachable target
/// there.
pub(super) fn code_actions(
    documents: &HashMap<String, Document>,
    params: &CodeActionParams,
) -> Vec<CodeActionOrCommand> {
    let uri = &params.text_document.uri;
    let Some(doc) = documents.get(uri.as_str()) else {
        return Vec::new();
    };
    (doc.reports.iter())
        .filter(|r| matches!(r.verdict, Verdict::Reachable(_)))
        .filter(|r| overlaps(&target_range(doc, &r.target), &params.range))
        .map(|r| {
            let Verdict::Reachable(w) = &r.verdict else {
                unreachable!("filtered")
            };
            CodeActionOrCommand::Command(Command {
                title: format!("Replay the witness {w}"),
                command: REPLAY.into(),
                arguments: Some(vec![json!({
                    "uri": uri.as_str(),
                    "line": r.target.line,
                    "col": r.target.col,
                })]),
            })
        })
        .collect()
}

fn overlaps(a: &Range, b: &Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// Runs the replay the arguments name; what to show the user.
pub(super) fn replay(
    documents: &HashMap<String, Document>,
    args: &[Value],
) -> Result<String, String> {
    let arg = args.first().ok_or("which target: no argument")?;
    let doc = (arg["uri"].as_str())
        .and_then(|u| documents.get(u))
        .ok_or("the document is not open")?;
    let at = |k: &str| arg[k].as_u64().map(|v| v as u32);
    let report = (doc.reports.iter())
        .find(|r| Some(r.target.line) == at("line") && Some(r.target.col) == at("col"))
        .ok_or("no verdict there (the document changed?)")?;
    let Verdict::Reachable(w) = &report.verdict else {
        return Err("the target there is not reachable".into());
    };
    let program = &crate::db::parse(&doc.db, doc.file).program;
    let run = interp::run(program, w, Limits::default()).map_err(|e| e.to_string())?;
    let outputs: Vec<String> = run.outputs.iter().map(ToString::to_string).collect();
    let end = match run.outcome {
        Outcome::Error { kind, span } => {
            let p = doc.position(span.start as usize);
            format!("{} at {}:{}", kind.as_str(), p.line + 1, p.character + 1)
        }
        Outcome::Returned(v) => format!("returned {v}"),
        Outcome::AssumeFailed { .. } => "an assume failed".into(),
        Outcome::StepLimit { .. } => "the step limit".into(),
        _ => "stopped".into(),
    };
    Ok(format!(
        "replay of {w}: outputs [{}]; {end} ({} steps)",
        outputs.join(", "),
        run.steps
    ))
}
