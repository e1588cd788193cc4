//! A reachable target's witness replayed once more, traced (`--trace`,
//! SARIF's code flows): the trace comes from this replay on the reference
//! interpreter, never from a model, and is given only if the replay fails
//! at the target.

use super::{CheckOptions, Report, Verdict};
use crate::db::{self, Database, SourceFile, Target};
use crate::interp::trace::{self, Step};
use crate::interp::{Limits, Witness};
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
    // The witness replayed to the target already, so its run ends: no
    // step limit (a block schedule's witness runs millions of steps).
    let limits = Limits {
        max_steps: u64::MAX,
        ..Limits::default()
    };
    let (result, trace) = trace::run_traced(program, w, limits).map_err(|e| e.to_string())?;
    let (kind, at) = crate::interp::error_place(result, text, &LineIndex::new(text))?;
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
