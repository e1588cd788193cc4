//! A reachable target's witness replayed once more, traced (`--trace`,
//! SARIF's code flows): the trace comes from this replay on the reference
//! interpreter, never from a model, and is given only if the replay fails
//! at the target.

use super::{CheckOptions, Report, Verdict};
use crate::db::{self, Database, SourceFile, Target};
use crate::interp::trace::{self, Step};
use crate::interp::{Limits, Outcome, Witness};
use crate::syntax::LineIndex;

/// With `opts.trace`, the trace of a reachable report's witness.
pub fn add_trace(db: &Database, file: SourceFile, r: &mut Report, opts: &CheckOptions) {
    if let (Verdict::Reachable(w), true) = (&r.verdict, opts.trace) {
        r.trace = Some(trace(db, file, &r.target, w));
    }
}

/// The folded trace of `w`'s run, which must fail at `t`.
pub fn trace(
    db: &Database,
    file: SourceFile,
    t: &Target,
    w: &Witness,
) -> Result<Vec<Step>, String> {
    let program = &db::parse(db, file).program;
    let text = file.text(db);
    let (result, trace) =
        trace::run_traced(program, w, Limits::for_replay()).map_err(|e| e.to_string())?;
    let Outcome::Error { kind, span } = result.outcome else {
        return Err(format!(
            "the traced run ended otherwise: {:?}",
            result.outcome
        ));
    };
    let at = LineIndex::new(text).line_col(text, span.start);
    if (kind, at) != (t.kind, (t.line, t.col)) {
        return Err(crate::interp::hit_elsewhere(kind, at));
    }
    if trace.failure.is_none() {
        return Err("the traced run recorded no failing statement".into());
    }
    let mut steps = trace.steps(text);
    if trace.cut {
        let note = format!("the trace keeps the first {} branches", trace::MAX_EVENTS);
        if let Some(last) = steps.last_mut() {
            last.what += &format!(" ({note})");
        }
    }
    Ok(steps)
}
