//! Code actions on a target, each a command whose outcome is shown to the
//! user (`window/showMessage`):
//!
//! - "Replay the witness" (a reachable target): runs it on the
//!   interpreter and shows what the run printed and where it failed, as
//!   `apc run --args … --input …` would;
//! - "Show the necessary condition": φ̂ and φ̂^K, as `apc nc` prints them;
//! - "Dump the queries": the SMT-LIB scripts of the conditions' race, as
//!   `apc nc --dump-queries` writes them, into a directory it names.

use super::document::Document;
use super::verdicts::target_range;
use crate::check::CheckOptions;
use crate::db::{self, Target};
use crate::engine::Verdict;
use crate::interp::{self, Limits, Outcome};
use crate::nc;
use lsp_types::{CodeActionOrCommand, CodeActionParams, Command, Range};
use serde_json::{Value, json};
use std::collections::HashMap;

/// The command that replays a target's witness.
pub(super) const REPLAY: &str = "apc.replayWitness";
/// The command that shows a target's necessary condition.
pub(super) const CONDITION: &str = "apc.showCondition";
/// The command that writes a target's queries.
pub(super) const DUMP: &str = "apc.dumpQueries";
/// Every command, for the capabilities.
pub(super) const COMMANDS: [&str; 3] = [REPLAY, CONDITION, DUMP];

/// The actions at the request's range: for each target there, a replay
/// if it is reachable, its condition and its queries.
pub(super) fn code_actions(
    documents: &HashMap<String, Document>,
    params: &CodeActionParams,
) -> Vec<CodeActionOrCommand> {
    let uri = &params.text_document.uri;
    let Some(doc) = documents.get(uri.as_str()).filter(|d| d.is_clean()) else {
        return Vec::new();
    };
    let command = |title: String, command: &str, t: &Target| {
        CodeActionOrCommand::Command(Command {
            title,
            command: command.into(),
            arguments: Some(vec![
                json!({"uri": uri.as_str(), "line": t.line, "col": t.col}),
            ]),
        })
    };
    let mut actions = Vec::new();
    for t in db::targets(&doc.db, doc.file) {
        if !overlaps(&target_range(doc, &t), &params.range) {
            continue;
        }
        let verdict = doc.reports.iter().find(|r| r.target == t);
        if let Some(Verdict::Reachable(w)) = verdict.map(|r| &r.verdict) {
            actions.push(command(format!("Replay the witness {w}"), REPLAY, &t));
        }
        let what = t.label();
        actions.push(command(
            format!("Show the necessary condition of the {what}"),
            CONDITION,
            &t,
        ));
        actions.push(command(format!("Dump the queries of the {what}"), DUMP, &t));
    }
    actions
}

/// The document and the target the command's arguments name.
fn target_of<'d>(
    documents: &'d HashMap<String, Document>,
    args: &[Value],
) -> Result<(&'d Document, Target), String> {
    let arg = args.first().ok_or("which target: no argument")?;
    let doc = (arg["uri"].as_str())
        .and_then(|u| documents.get(u))
        .ok_or("the document is not open")?;
    let at = |k: &str| arg[k].as_u64().map(|v| v as u32);
    let target = (db::targets(&doc.db, doc.file).into_iter())
        .find(|t| Some(t.line) == at("line") && Some(t.col) == at("col"))
        .ok_or("no target there (the document changed?)")?;
    if db::program(&doc.db, doc.file).is_none() {
        return Err("the program has no `main`".into());
    }
    Ok((doc, target))
}

/// The target's necessary condition, φ̂ and φ̂^K simplified, as `apc nc`
/// prints it.
pub(super) fn condition(
    documents: &HashMap<String, Document>,
    args: &[Value],
    opts: &CheckOptions,
) -> Result<String, String> {
    let (doc, t) = target_of(documents, args)?;
    let loc = |span: crate::syntax::Span| {
        let p = doc.position(span.start as usize);
        format!("{}:{}", p.line + 1, p.character + 1)
    };
    let nc_opts = nc::decider::engine_options(opts);
    Ok(nc::render(
        &doc.db,
        doc.file,
        &t,
        &nc_opts,
        Some(opts.k),
        &loc,
        opts.simplify,
    ))
}

/// Writes the target's queries into a directory of the system's
/// temporary one; what was written, and where.
pub(super) fn dump(
    documents: &HashMap<String, Document>,
    args: &[Value],
    opts: &CheckOptions,
) -> Result<String, String> {
    let (doc, t) = target_of(documents, args)?;
    let dir = std::env::temp_dir().join("apc-queries");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let race = nc::query::Race {
        k: opts.k,
        simplify: opts.simplify,
    };
    let nc_opts = nc::decider::engine_options(opts);
    let (written, left_out) =
        nc::query::dump_race(&doc.db, doc.file, &t, &nc_opts, race, &opts.solvers, &dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut message = format!(
        "wrote {written} queries of the {} to {} (each runs as `z3 FILE` or `cvc5 FILE`)",
        t.label(),
        dir.display()
    );
    for why in left_out {
        message += &format!("; not written, as apc check does not send it either: {why}");
    }
    Ok(message)
}

fn overlaps(a: &Range, b: &Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// Runs the replay the arguments name; what to show the user.
pub(super) fn replay(
    documents: &HashMap<String, Document>,
    args: &[Value],
) -> Result<String, String> {
    let (doc, t) = target_of(documents, args)?;
    let report = (doc.reports.iter())
        .find(|r| r.target == t)
        .ok_or("no verdict there yet")?;
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
