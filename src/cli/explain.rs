//! Verdicts explained (`apc check --explain`, and the JSON's `proof`):
//! what proved an `unreachable` target, in the program's terms
//! (docs/explanations.md).

use crate::engine::{Invariant, PathCounts, Place, Proof};
use crate::interp::trace::Step;
use serde_json::{Value, json};

/// The lines `--explain` prints under an `unreachable` verdict: the
/// proof's summary, then each loop's invariant.
pub fn proof_lines(proof: &Proof) -> Vec<String> {
    let mut lines = vec![format!("proof: {}", proof.summary())];
    if let Proof::Invariants(invs) | Proof::ConditionUnsat(_, invs) = proof {
        for inv in invs {
            let text = one_line(&inv.text);
            let form = if inv.microc { "" } else { " (not microc)" };
            let at = match &inv.at {
                Place::Loop { line, col } => format!("loop at {line}:{col}"),
                Place::Function(f) => format!("summary of {f}"),
            };
            lines.push(format!("  {at}: {text}{form}"));
        }
    }
    lines
}

/// The lines `--explain` prints under an `unknown` verdict: its whole
/// reason, an engine's per line (`timeout: nc: …; chc: …`).
pub fn reason_lines(why: &str) -> Vec<String> {
    let (prefix, rest) = match why.strip_prefix("timeout: ") {
        Some(rest) => ("timeout", rest),
        None => ("", why),
    };
    let mut lines = vec![];
    if !prefix.is_empty() {
        lines.push("out of time; what each engine said:".to_string());
    }
    lines.extend(engine_parts(rest).into_iter().map(|p| format!("  {p}")));
    lines
}

/// `nc: a; b; chc: c` split before each engine's name.
fn engine_parts(text: &str) -> Vec<String> {
    let engines = crate::check::engine_choices();
    let mut parts: Vec<String> = vec![];
    for piece in text.split("; ") {
        let starts_engine = (engines.iter()).any(|e| piece.starts_with(&format!("{e}: ")));
        match parts.last_mut() {
            Some(last) if !starts_engine => {
                last.push_str("; ");
                last.push_str(piece);
            }
            _ => parts.push(piece.to_string()),
        }
    }
    parts
}

/// `{"kind", "summary", …}`: with `invariants` for an invariant, `paths`,
/// `merged`, `subsumed` for every path explored, `fact` for a value fact.
pub fn proof_json(proof: &Proof) -> Value {
    let mut json = json!({"kind": proof.kind(), "summary": proof.summary()});
    match proof {
        Proof::Invariants(invs) => json["invariants"] = invariants_json(invs),
        Proof::EveryPath(PathCounts {
            paths,
            merged,
            subsumed,
        }) => {
            json["paths"] = json!(paths);
            json["merged"] = json!(merged);
            json["subsumed"] = json!(subsumed);
        }
        Proof::ValueFact(fact) => json["fact"] = json!(fact),
        Proof::ConditionUnsat(v, facts) => {
            json["query"] = json!(v.method());
            if !facts.is_empty() {
                json["facts"] = invariants_json(facts);
            }
        }
        _ => {}
    }
    json
}

/// Invariants (or facts) at their places: `invariant`, `microc`, and
/// `line` and `col` of a loop, or `function` of a summary.
fn invariants_json(invs: &[Invariant]) -> Value {
    (invs.iter())
        .map(|i| {
            let mut j = json!({"invariant": i.text, "microc": i.microc});
            match &i.at {
                Place::Loop { line, col } => {
                    j["line"] = json!(line);
                    j["col"] = json!(col);
                }
                Place::Function(f) => j["function"] = json!(f),
            }
            j
        })
        .collect()
}

/// The lines `--trace` prints under a reachable target: each step of the
/// replayed run, indented by call depth, with the values read.
pub fn trace_lines(trace: &Result<Vec<Step>, String>) -> Vec<String> {
    let steps = match trace {
        Ok(steps) => steps,
        Err(why) => return vec![format!("trace: none ({why})")],
    };
    let mut lines = vec!["trace (the witness's run, replayed):".to_string()];
    for s in steps {
        let indent = "  ".repeat(1 + s.depth as usize);
        lines.push(format!("{indent}{}:{} {}", s.line, s.col, s.text()));
    }
    lines
}

/// `[{"line", "col", "depth", "code", "what", "values": {NAME: VALUE}}]`,
/// or `{"error": why}`.
pub fn trace_json(trace: &Result<Vec<Step>, String>) -> Value {
    match trace {
        Ok(steps) => (steps.iter())
            .map(|s| {
                let values: serde_json::Map<String, Value> = (s.values.iter())
                    .map(|(n, v)| (n.clone(), json!(v)))
                    .collect();
                json!({"line": s.line, "col": s.col, "depth": s.depth, "code": s.code, "what": s.what, "values": values})
            })
            .collect(),
        Err(why) => json!({"error": why}),
    }
}

/// The solver's definitions span lines; a report line does not.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
