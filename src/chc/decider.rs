//! The Horn clauses as an engine of the contract (`chc`): a checked
//! invariant proves the targets; a counterexample's inputs, found by
//! unrolling the clauses, are a witness once they replay. With several
//! targets, one invariant for reaching any of them proves them all.

use super::{Encoding, Scripts, Search, Verdict};
use crate::db::{self, Target};
use crate::deadline::{self, Stop};
use crate::engine::{Decider, Decision, How, Invariant, Place, Proof, Question};
use crate::interp::Witness;
use crate::smt::{self, DumpName};
use crate::syntax::LineIndex;
use crate::witness::{Access, InputModel, Replayer};
use std::time::Instant;

/// Horn clauses with a checked invariant.
pub struct HornClauses;

impl Decider for HornClauses {
    fn name(&self) -> &'static str {
        "chc"
    }

    fn about(&self) -> &'static str {
        "Horn clauses: an invariant apc re-checks clause by clause; a counterexample that replays"
    }

    /// Low priority, as it rarely decides first; but not on every target
    /// at once, nor on a program with recursion, whose calls only its
    /// summaries relate (the executors unroll recursion, the compositional
    /// engine refuses it).
    fn niceness(&self, q: &Question) -> i32 {
        let recursive = db::summarised_program(q.db, q.file).is_some();
        if q.every_target() || recursive { 0 } else { 10 }
    }

    fn takes(&self, _q: &Question) -> bool {
        true
    }

    fn decide(&self, q: &Question, stop: &Stop) -> Decision {
        let Some(prog) = db::program(q.db, q.file).as_ref() else {
            return Decision::unknown("unsupported: the program has no main");
        };
        let deadline = stop
            .deadline()
            .unwrap_or_else(|| Instant::now() + q.options.timeout);
        let _p = deadline::phase("horn clauses");
        let errors: Vec<_> = (q.targets.iter())
            .flat_map(|t| prog.copies_of(&t.function, t.id))
            .collect();
        let summarised = db::summarised_program(q.db, q.file).as_ref();
        let program = super::Program {
            body: &prog.body,
            summarised,
        };
        let (verdict, mut scripts) = super::decide_with(program, &errors, deadline);
        let solver = super::horn_solver().ok().map(|(p, _)| p.name);
        let method = |how| q.method("chc", how);
        let decision = match verdict {
            Verdict::Unreachable(mut cert) => {
                if q.options.explain {
                    super::simplify_explained(&mut cert, deadline);
                }
                Decision::unreachable(method(How::Invariant), solver)
                    .with_proof(Proof::Invariants(invariants(q, &cert)))
            }
            Verdict::Counterexample(_) if q.every_target() => {
                Decision::unknown("the clauses have a counterexample (not replayed here)")
            }
            Verdict::Counterexample(enc) => {
                let _p = deadline::phase("horn counterexample");
                let (found, unrolling) = replayed_counterexample(q, &prog.body, &enc, deadline);
                scripts.unrolling = Some(unrolling);
                match found {
                    Ok(w) => Decision::reachable(w, method(How::Counterexample), solver),
                    Err(why) => Decision::unknown(why),
                }
            }
            Verdict::Unknown(why) => Decision::unknown(why),
        };
        dump(q, &scripts);
        decision
    }
}

/// The certificate's invariants, at their places in the file.
fn invariants(q: &Question, cert: &super::Certificate) -> Vec<Invariant> {
    let text = q.file.text(q.db);
    let lines = LineIndex::new(text);
    (cert.explained.iter())
        .map(|inv| Invariant {
            at: match &inv.place {
                super::certificate::Place::Loop(span) => {
                    let (line, col) = lines.line_col(text, span.start);
                    Place::Loop { line, col }
                }
                super::certificate::Place::Summary(f) => Place::Function(f.clone()),
            },
            text: inv.text.clone(),
            microc: inv.microc,
        })
        .collect()
}

/// Writes what one Horn decision sent, for `--dump-queries`.
fn dump(q: &Question, scripts: &Scripts) {
    let Some(dir) = &q.options.dump_queries else {
        return;
    };
    let path = q.file.path(q.db);
    let name = match q.targets {
        [t] => DumpName::new(dir, path, &t.function, t.line, t.col),
        _ => DumpName::every_target(dir, path),
    };
    let name = name.reporting_to(&q.options.dump_failure);
    for (text, part) in [
        (&scripts.horn, "chc-z3"),
        (&scripts.checks, "chc-certificate-z3"),
        (&scripts.unrolling, "chc-counterexample-z3"),
        (&scripts.guesses, "chc-runs-z3"),
    ] {
        if let Some(text) = text {
            name.write_part(part, text);
        }
    }
}

/// The inputs of a counterexample to the Horn clauses, found by unrolling
/// them and replayed on the interpreter; and the unrolling sent.
fn replayed_counterexample(
    q: &Question,
    body: &crate::ir::Body,
    enc: &Encoding,
    deadline: Instant,
) -> (Result<Witness, String>, String) {
    let parsed = db::parse(q.db, q.file);
    let program = &parsed.program;
    let symbol = |name: &str| {
        body.var_id(name)
            .and_then(|v| super::initial_symbol(enc, v))
    };
    let inputs = InputModel::named(program, body, symbol, Access::Select);
    let targets: &[Target] = q.targets;
    let replay = Replayer::new(program, q.file.text(q.db), targets);
    let judge = |session: &mut smt::Warm| inputs.judge(session, &replay);
    let (found, unrolling) = super::find_counterexample(enc, judge, q.options.max_models, deadline);
    let found = match found {
        Search::Found((witness, _), _) => Ok(witness),
        // Past the deadline the session was cancelled: its error says no more.
        Search::NotFound(_) if Instant::now() >= deadline => {
            Err("timeout: the Horn clauses have a counterexample, not yet replayed".into())
        }
        Search::NotFound(why) => Err(format!("the Horn clauses have a counterexample, but {why}")),
    };
    (found, unrolling)
}
