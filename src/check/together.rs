//! Every target of a program at once: one necessary condition for reaching
//! *any* of them (docs/portfolio.md §4). φ̂ for a set of vertices is built
//! in the same single pass as for one; if it is unsatisfiable, no target
//! can be reached, and each is `unreachable` with the same guarantee as a
//! proof of its own condition. A satisfiable or undecided condition proves
//! nothing: the targets are then checked one by one. The Horn clauses for
//! reaching any of them ([`proved_by_horn_clauses`]) are the other way:
//! their checked invariant proves them all as well.

use super::model::InputModel;
use super::{CheckOptions, Replayer, contenders, engine_options};
use crate::chc;
use crate::db::{self, Database, SourceFile, Target};
use crate::deadline;
use crate::interp::Witness;
use crate::nc::{self, query};
use crate::smt::{self, RaceOutcome};
use crate::term::{TermId, Terms};
use std::time::Instant;

/// What one condition for every target decided.
#[derive(Debug)]
pub enum Together {
    /// Its `unsat`, by this query (e.g. `nc-quantified`): every target is
    /// unreachable.
    Unreachable(String),
    /// A model whose replay hit this target.
    Reachable(Target, Witness),
    /// Nothing: satisfiable without a replayed witness, unknown, too large
    /// or out of time.
    Undecided,
}

/// One condition for reaching any of `targets`, raced before `deadline`;
/// each model is replayed, and a run that hits one of the targets is a
/// witness for it.
pub fn decide(
    db: &Database,
    file: SourceFile,
    targets: &[Target],
    opts: &CheckOptions,
    deadline: Instant,
) -> Together {
    let decided = deadline::run(deadline, || {
        let prog = db::program(db, file).as_ref()?;
        let nodes = error_vertices(prog, targets);
        let mut eng = nc::Engine::new(db, file, engine_options(opts))?;
        let phi = {
            let _p = deadline::phase("building the condition");
            eng.condition_of(&nodes)
        };
        let program = &db::parse(db, file).program;
        let at = Replayer::new(program, file.text(db), targets);
        let inputs = InputModel::new(program, &prog.body, &eng.terms, phi);
        Some(race(&eng.terms, phi, &inputs, &at, opts, deadline))
    });
    decided.ok().flatten().unwrap_or(Together::Undecided)
}

/// Whether one checked invariant of the Horn clauses for reaching any of
/// `targets` proves them all before `deadline`.
pub fn proved_by_horn_clauses(
    db: &Database,
    file: SourceFile,
    targets: &[Target],
    deadline: Instant,
) -> bool {
    let proved = deadline::run(deadline, || {
        let prog = db::program(db, file).as_ref()?;
        let nodes = error_vertices(prog, targets);
        let (verdict, _) = chc::decide(&prog.body, &nodes, deadline);
        matches!(verdict, chc::Verdict::Unreachable(_)).then_some(())
    });
    matches!(proved, Ok(Some(())))
}

/// The error vertices of every copy of every target.
fn error_vertices(prog: &crate::ir::InlinedProgram, targets: &[Target]) -> Vec<crate::ir::NodeId> {
    (targets.iter())
        .flat_map(|t| prog.copies_of(&t.function, t.id))
        .collect()
}

/// The race of the condition's queries; a model counts when its run hits
/// one of the targets.
fn race(
    terms: &Terms,
    phi: TermId,
    inputs: &InputModel,
    at: &Replayer,
    opts: &CheckOptions,
    deadline: Instant,
) -> Together {
    let simplified = opts.simplify.then(|| nc::simplify_condition(terms, phi));
    let simple = simplified
        .as_ref()
        .map_or((terms, phi), |s| (s.terms_or(terms), s.phi));
    let chains = query::pending((terms, phi), simple, opts.mode, opts.k);
    let contenders = contenders(chains, &opts.solvers, None, opts.sharing_cores);
    let judge = |session: &mut smt::Session| inputs.judge(session, at);
    let _p = deadline::phase("solving");
    match smt::race(&contenders, judge, opts.max_models, deadline) {
        RaceOutcome::Unsat { method, .. } => Together::Unreachable(method),
        RaceOutcome::Accepted {
            witness: (w, _), ..
        } => match at.hit(&w) {
            Ok(t) => Together::Reachable(t.clone(), w),
            Err(_) => Together::Undecided,
        },
        _ => Together::Undecided,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn decided(text: &str) -> Together {
        let (db, file) = Database::with_file("together.mc", text);
        let targets = db::targets(&db, file);
        assert!(targets.len() > 1, "{targets:?}");
        let z3 = smt::default_z3().expect("z3 (solvers/install.sh)");
        let opts = CheckOptions::new(vec![z3], Duration::from_secs(20));
        decide(&db, file, &targets, &opts, Instant::now() + opts.timeout)
    }

    /// Three safe targets, one inside a loop, are proved by one condition;
    /// with one of them reachable, its witness is found and replays.
    #[test]
    fn one_condition_proves_every_target_or_finds_one() {
        let safe = "main(n) { var a, i, x; a = [1, 2, 3]; x = a[1]; i = 0; \
            while (i < n) { x = x + 10 / a[2]; i = i + 1; } return x; }";
        assert!(matches!(decided(safe), Together::Unreachable(_)));
        let one_reachable = "main(n) { var a, i, x; a = [1, 2, 3]; x = a[1]; i = 0; \
            while (i < n) { x = x + 10 / a[2]; i = i + 1; } return x / (n - 3); }";
        let Together::Reachable(t, w) = decided(one_reachable) else {
            panic!("no witness")
        };
        assert_eq!((t.kind, t.line), (crate::TargetKind::DivByZero, 1), "{t:?}");
        assert!(
            w.args
                .iter()
                .any(|(p, v)| p == "n" && *v == crate::interp::ArgValue::Int(3.into())),
            "{w:?}"
        );
    }

    /// Two asserts that need a loop invariant (x ≥ y) are proved by one
    /// checked invariant of the Horn clauses for reaching either; with one
    /// of them violated, nothing is proved.
    #[test]
    fn one_invariant_proves_every_target() {
        let proved = |text: &str| {
            let (db, file) = Database::with_file("together.mc", text);
            let targets = db::targets(&db, file);
            assert_eq!(targets.len(), 2, "{targets:?}");
            let deadline = Instant::now() + Duration::from_secs(20);
            proved_by_horn_clauses(&db, file, &targets, deadline)
        };
        let with = |second: &str| {
            format!(
                "main() {{ var x, y, n; n = input; x = 1; y = 0; \
                 while (y < n) {{ x = x + y; y = y + 1; }} assert(x >= y); assert({second}); return 0; }}"
            )
        };
        assert!(proved(&with("x + 1 > y")));
        let one_violated = with("n != 3");
        assert!(!proved(&one_violated));
    }
}
