//! The conditions' facts from runs (docs/necessary-conditions.md §9,
//! "Facts from runs"): the Horn engine's invariants from runs, proved
//! inductive at the headers of the whole-program flowgraph, handed to the
//! conditions. `check` joins the two engines; neither knows the other.

use crate::db::{self, SourceFile, Target};
use crate::nc::{Conditions, FactSource, HeaderFacts};
use std::sync::Arc;
use std::time::Instant;

/// The conditions, with facts from the Horn engine's runs.
pub static CONDITIONS: Conditions = Conditions {
    facts: Some(&InvariantsFromRuns),
};

/// [`crate::chc::header_facts`] on the ways to a target.
struct InvariantsFromRuns;

impl FactSource for InvariantsFromRuns {
    fn facts(
        &self,
        db: &dyn salsa::Database,
        file: SourceFile,
        target: &Target,
        deadline: Instant,
    ) -> Option<Arc<HeaderFacts>> {
        let prog = db::program(db, file).as_ref()?;
        if prog.body.loops.is_empty() {
            return None;
        }
        let errors = prog.copies_of(&target.function, target.id);
        let (solver, _) = crate::chc::horn_solver().ok()?;
        let facts = crate::chc::header_facts(&prog.body, &errors, &solver, deadline).ok()?;
        (!facts.is_empty()).then(|| Arc::new(HeaderFacts(facts.into_iter().collect())))
    }
}
