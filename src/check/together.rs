//! Every target of a program at once: one necessary condition for reaching
//! *any* of them (docs/portfolio.md §4). φ̂ for a set of vertices is built
//! in the same single pass as for one; if it is unsatisfiable, no target
//! can be reached, and each is `unreachable` with the same guarantee as a
//! proof of its own condition. A satisfiable or undecided condition proves
//! nothing: the targets are then checked one by one.

use super::{CheckOptions, contenders, engine_options};
use crate::db::{self, Database, SourceFile, Target};
use crate::deadline;
use crate::nc::{self, query};
use crate::smt::{self, Judgement, RaceOutcome};
use std::time::Instant;

/// The method named for targets proved this way.
pub const METHOD: &str = "nc-every-target";

/// Whether one condition proves every one of `targets` unreachable
/// before `deadline`: `Some(query)` with the query that did (e.g.
/// `nc-quantified`), `None` otherwise (satisfiable, unknown, too large or
/// out of time).
pub fn all_unreachable(
    db: &Database,
    file: SourceFile,
    targets: &[Target],
    opts: &CheckOptions,
    deadline: Instant,
) -> Option<String> {
    let decided = deadline::run(deadline, || {
        let prog = db::program(db, file).as_ref()?;
        let nodes: Vec<_> = (targets.iter())
            .flat_map(|t| prog.copies_of(&t.function, t.id))
            .collect();
        let mut eng = nc::Engine::new(db, file, engine_options(opts))?;
        let phi = {
            let _p = deadline::phase("building the condition");
            eng.condition_of(&nodes)
        };
        race(&eng.terms, phi, opts, deadline)
    });
    decided.ok().flatten()
}

/// The race of the condition's queries in which any model ends the race
/// unproved: only an `unsat` of a refuting query counts.
fn race(
    terms: &crate::term::Terms,
    phi: crate::term::TermId,
    opts: &CheckOptions,
    deadline: Instant,
) -> Option<String> {
    let simplified = if terms.has_quantifier(phi) && opts.simplify {
        let _p = deadline::phase("simplifying");
        let mut own = terms.clone();
        let (s, _) = crate::simplify::simplify_one(&mut own, phi);
        Some((own, s))
    } else {
        None
    };
    let simple = simplified.as_ref().map_or((terms, phi), |(t, s)| (t, *s));
    let chains = query::pending((terms, phi), simple, opts.mode, opts.k);
    let contenders = contenders(chains, &opts.solvers, None);
    let judge = |_: &mut smt::Session| Ok(Judgement::Accept(()));
    let _p = deadline::phase("solving");
    match smt::race(&contenders, judge, 1, deadline) {
        RaceOutcome::Unsat { method, .. } => Some(method),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn proved(text: &str) -> Option<String> {
        let (db, file) = Database::with_file("together.mc", text);
        let targets = db::targets(&db, file);
        assert!(targets.len() > 1, "{targets:?}");
        let z3 = smt::default_z3().expect("z3 (solvers/install.sh)");
        let opts = CheckOptions::new(vec![z3], Duration::from_secs(20));
        all_unreachable(&db, file, &targets, &opts, Instant::now() + opts.timeout)
    }

    /// Three safe targets, one inside a loop, are proved by one condition;
    /// with one of them reachable, nothing is.
    #[test]
    fn one_condition_proves_every_target_or_none() {
        let safe = "main(n) { var a, i, x; a = [1, 2, 3]; x = a[1]; i = 0; \
            while (i < n) { x = x + 10 / a[2]; i = i + 1; } return x; }";
        assert!(proved(safe).is_some());
        let one_reachable = "main(n) { var a, i, x; a = [1, 2, 3]; x = a[1]; i = 0; \
            while (i < n) { x = x + 10 / a[2]; i = i + 1; } return x / (n - 3); }";
        assert_eq!(proved(one_reachable), None);
    }
}
