//! Checking an invariant that the fixed-point engine returns: nothing it
//! says is taken on trust. Each clause, with every predicate replaced by
//! the solver's definition, must be valid: its negation is sent as its own
//! quantifier-free query, and only `unsat` for every one of them makes the
//! invariant a proof.

use super::encode::{Encoding, predicate_name};
use crate::ir::NodeId;
use crate::smt::horn::{self, model};

/// The solver's definitions of the predicates, as `define-fun`s.
#[derive(Clone, Debug)]
pub struct Certificate {
    pub definitions: Vec<String>,
}

impl Certificate {
    /// The definitions in a model (`(get-model)`'s answer) for the
    /// encoding's predicates. A predicate the model leaves out is `false`
    /// (the checks decide whether it may be). A quantified definition goes
    /// through `eliminate`, whose quantifier-free answer is kept (and
    /// checked like the others); if quantifiers remain, it is refused: the
    /// checks are to be quantifier-free.
    pub fn from_model(
        answer: &str,
        enc: &Encoding,
        eliminate: impl Fn(&str) -> Result<String, String>,
    ) -> Result<Certificate, String> {
        let mut found = model::definitions(answer);
        for d in found.iter_mut().filter(|d| model::has_quantifier(d)) {
            let free = eliminate(d).map_err(|why| {
                format!("the invariant has quantifiers, and eliminating them failed: {why}")
            })?;
            if model::has_quantifier(&free) {
                return Err(
                    "the invariant has quantifiers that Z3 did not eliminate; apc checks quantifier-free ones only".into(),
                );
            }
            *d = free;
        }
        let defined = |name: &str| {
            (found.iter())
                .find(|d| model::defined_name(d) == Some(name))
                .cloned()
        };
        let mut definitions: Vec<String> = (enc.predicates.iter())
            .map(|&p| defined(&predicate_name(p)).unwrap_or_else(|| constant(enc, p, false)))
            .collect();
        // The summaries after the predicates (`weaken` pairs the first
        // definitions with the predicates).
        definitions.extend(summaries(enc, false, defined));
        Ok(Certificate { definitions })
    }

    /// Every predicate `true`: the invariant of clauses whose queries
    /// cannot run (checked like any other).
    pub fn trivial(enc: &Encoding) -> Certificate {
        let mut definitions: Vec<String> = (enc.predicates.iter())
            .map(|&p| constant(enc, p, true))
            .collect();
        definitions.extend(summaries(enc, true, |_| None));
        Certificate { definitions }
    }

    /// Each of `ps` defined `true`: what a clause into it needs, whatever
    /// it is.
    pub fn weaken(&mut self, enc: &Encoding, ps: &[NodeId]) {
        for (&p, definition) in enc.predicates.iter().zip(&mut self.definitions) {
            if ps.contains(&p) {
                *definition = constant(enc, p, true);
            }
        }
    }

    /// One script: the definitions, then per clause the negation of its
    /// implication in a `push`/`pop` frame with its own `check-sat`.
    pub fn checks(&self, enc: &Encoding) -> String {
        self.checks_with(&horn::clause_checks(&enc.terms, &enc.clauses()))
    }

    /// [`Certificate::checks`] with the clauses' part printed already.
    pub fn checks_with(&self, clauses: &horn::ClauseChecks) -> String {
        clauses.with(&self.definitions)
    }
}

/// The summaries' definitions: as `defined` gives them, else the constant
/// `otherwise`.
fn summaries<'a>(
    enc: &'a Encoding,
    otherwise: bool,
    defined: impl Fn(&str) -> Option<String> + 'a,
) -> impl Iterator<Item = String> + 'a {
    (enc.summaries.iter()).map(move |r| {
        defined(&r.name).unwrap_or_else(|| horn::constant_definition(&enc.terms, r, otherwise))
    })
}

/// `p` defined as the constant `value` over the state.
pub fn constant(enc: &Encoding, p: NodeId, value: bool) -> String {
    horn::constant_definition(&enc.terms, &enc.relation(p), value)
}
