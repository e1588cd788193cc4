//! `apc check --format sarif`: the verdicts as one SARIF 2.1.0 log
//! (docs/cli.md, "SARIF"), for GitHub code scanning and SARIF viewers.
//!
//! One run; one rule per target kind; one result per target: a reachable
//! target is a failure (`error`) with its witness and its replayed run as
//! a code flow, an unknown one is
//! `open` (the tool could not tell), an unreachable one a `pass` whose
//! proof is a property. SARIF requires level `none` for every kind but
//! `fail`.

use super::explain::proof_json;
use crate::check::{Report, Verdict};
use crate::interp::trace::Step;
use crate::target_kind::TargetKind;
use serde_json::{Value, json};

/// A file's reports, or why it was rejected.
pub type FileEntry<'a> = (&'a str, Result<&'a [Report], &'a str>);

/// The SARIF log of the files' reports.
pub fn log(files: &[FileEntry]) -> Value {
    let mut results = Vec::new();
    let mut notifications = Vec::new();
    for (path, entry) in files {
        match entry {
            Ok(reports) => results.extend(reports.iter().map(|r| result(path, r))),
            Err(why) => notifications.push(json!({
                "level": "error",
                "message": {"text": why},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri(path)}}}],
            })),
        }
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "apc",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": TargetKind::ALL.iter().map(|k| rule(*k)).collect::<Vec<_>>(),
            }},
            "invocations": [{
                "executionSuccessful": notifications.is_empty(),
                "toolExecutionNotifications": notifications,
            }],
            "results": results,
        }],
    })
}

/// The rule of a target kind: what a run that reaches it does.
fn rule(kind: TargetKind) -> Value {
    let what = match kind {
        TargetKind::Assert => "an assert fails",
        TargetKind::DivByZero => "a division divides by zero",
        TargetKind::NullDeref => "a null pointer is dereferenced",
        TargetKind::OutOfBounds => "an array index is out of bounds",
        TargetKind::Uninitialized => "a variable is read before it is assigned",
    };
    json!({
        "id": kind.as_str(),
        "shortDescription": {"text": format!("A run where {what}.")},
        "defaultConfiguration": {"level": "error"},
    })
}

fn result(path: &str, r: &Report) -> Value {
    let t = &r.target;
    let place = format!("{} in {}", t.kind.as_str(), t.function);
    let (kind, level, message) = match &r.verdict {
        Verdict::Reachable(w) => ("fail", "error", format!("{place} is reachable, with {w}")),
        Verdict::Unknown(why) => (
            "open",
            "none",
            format!(
                "{place} is undecided: {}",
                r.short_reason.as_deref().unwrap_or(why)
            ),
        ),
        Verdict::Unreachable => {
            let proof = r.proof.as_ref().map(|p| p.summary()).unwrap_or_default();
            ("pass", "none", format!("{place} is unreachable: {proof}"))
        }
    };
    let mut properties = json!({
        "verdict": r.verdict.name(),
        "engine": r.engine,
        "method": r.method.as_ref().map(ToString::to_string),
        "solver": r.solver,
        "time_ms": r.time.as_secs_f64() * 1000.0,
    });
    match &r.verdict {
        Verdict::Reachable(w) => properties["witness"] = super::check::witness_json(w),
        Verdict::Unknown(why) => properties["reason"] = json!(why),
        Verdict::Unreachable => properties["proof"] = json!(r.proof.as_ref().map(proof_json)),
    }
    let mut result = json!({
        "ruleId": t.kind.as_str(),
        "ruleIndex": TargetKind::ALL.iter().position(|k| *k == t.kind),
        "kind": kind,
        "level": level,
        "message": {"text": message},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": uri(path)},
            "region": {"startLine": t.line, "startColumn": t.col},
        }}],
        "properties": properties,
    });
    if let Some(Ok(steps)) = &r.trace {
        result["codeFlows"] = json!([{"threadFlows": [{"locations": steps
            .iter()
            .map(|s| step_location(path, s))
            .collect::<Vec<_>>()}]}]);
    }
    result
}

/// A step of the witness's run as a location of its thread flow.
fn step_location(path: &str, s: &Step) -> Value {
    json!({
        "location": {
            "physicalLocation": {
                "artifactLocation": {"uri": uri(path)},
                "region": {"startLine": s.line, "startColumn": s.col},
            },
            "message": {"text": s.text()},
        },
        "nestingLevel": s.depth,
    })
}

/// A path as a relative URI reference: `/` separators, and the characters
/// a URI cannot hold percent-encoded.
fn uri(path: &str) -> String {
    let mut out = String::new();
    for c in path.replace('\\', "/").chars() {
        if c.is_ascii_alphanumeric() || "/-._~".contains(c) {
            out.push(c);
        } else {
            let mut buf = [0; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}
