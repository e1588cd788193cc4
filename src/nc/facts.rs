//! Facts at loop headers (docs/necessary-conditions.md §9, "Facts from
//! runs"): conditions over the program's variables that hold at every
//! visit of a loop's header on every run to the target. They come from
//! outside this layer (`check` asks the Horn engine's invariants from
//! runs, proved inductive); here they are assumed after the loop's
//! summary, which keeps φ̂ necessary: a run's state at its last visit of
//! the header satisfies them.

use super::Engine;
use super::state::{Slot, State};
use crate::db::{SourceFile, Target};
use crate::ir::{Cond, Expr, NodeId};
use crate::term::{Node, TermId, VarKind};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// The facts of one whole-program flowgraph, by header vertex.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct HeaderFacts(pub BTreeMap<NodeId, Vec<Cond>>);

/// Where facts come from: a layer above this one plugs its source in
/// ([`super::Conditions::facts`]).
pub trait FactSource: Sync {
    /// The facts at the headers of the whole-program flowgraph on the
    /// ways to `target`, found by `deadline`; `None` when there are none.
    fn facts(
        &self,
        db: &dyn salsa::Database,
        file: SourceFile,
        target: &Target,
        deadline: Instant,
    ) -> Option<Arc<HeaderFacts>>;
}

impl Engine<'_> {
    /// The facts at `header`, assumed in `st`, the state after the loop's
    /// summary: `true` when there are none. A value the summary left ⋆
    /// that a fact reads becomes an unknown of its own first (`s@exit`):
    /// a predicate over ⋆ says nothing (§4), a predicate over one unknown
    /// value says what that value is.
    pub(super) fn assume_facts(&mut self, header: NodeId, st: &mut State) -> TermId {
        let Some(facts) = self.opts.header_facts.clone() else {
            return self.terms.bool(true);
        };
        let Some(conds) = facts.0.get(&header) else {
            return self.terms.bool(true);
        };
        let mut read = Vec::new();
        for c in conds {
            if let Cond::Cmp(_, a, b) = c {
                for e in [a, b] {
                    e.walk(&mut |x| {
                        if let Expr::Var(v) = x {
                            read.push(*v);
                        }
                    });
                }
            }
        }
        read.sort_unstable();
        read.dedup();
        for v in read {
            let slot = Slot::Value(v);
            if let Some(&t) = st.values.get(&slot)
                && matches!(self.terms.node(t), Node::Star)
            {
                let name = format!("{}@exit", self.body.var(v).name);
                let fresh = self.terms.new_var(VarKind::Fresh, name);
                let value = self.terms.var(fresh);
                st.set(slot, value);
            }
        }
        let ev = self.eval();
        let parts: Vec<TermId> = (conds.iter())
            .map(|c| ev.cond(&mut self.terms, st, c))
            .collect();
        self.stats.assumed_facts += parts.len();
        self.terms.and(parts)
    }
}
