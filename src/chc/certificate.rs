//! Checking an invariant that the fixed-point engine returns: nothing it
//! says is taken on trust. Each clause, with every predicate replaced by
//! the solver's definition, must be valid: its negation is sent as its own
//! quantifier-free query, and only `unsat` for every one of them makes the
//! invariant a proof.

use super::encode::{Encoding, predicate_name};
use super::readable;
use crate::ir::NodeId;
use crate::smt::horn::{self, model};
use crate::syntax::Span;
use crate::term::Terms;
use std::sync::Arc;

/// The solver's definitions of the predicates, as `define-fun`s.
#[derive(Clone, Debug)]
pub struct Certificate {
    pub definitions: Vec<String>,
    /// What the predicates are about, for people.
    pub context: Context,
    /// The invariants in the program's terms, once the certificate passed
    /// its checks ([`super::explained`]).
    pub explained: Vec<ReadableInvariant>,
    /// The checks it passed, for checking a simpler invariant.
    pub checks: Option<Arc<Checks>>,
}

/// The clauses' part of the checks, how many clauses there are, and what
/// a definition is made of again: the encoding's terms and each
/// definition's relation (parallel to the definitions).
#[derive(Debug)]
pub struct Checks {
    pub clauses: horn::ClauseChecks,
    /// The same with quotients named, for cvc5's second opinion on
    /// nonlinear clauses (`quotients`); `None` for linear ones.
    pub named: Option<horn::ClauseChecks>,
    pub count: usize,
    pub terms: Terms,
    pub relations: Vec<horn::Relation>,
}

impl Checks {
    pub fn of(
        enc: &Encoding,
        clauses: &horn::ClauseChecks,
        named: Option<&horn::ClauseChecks>,
    ) -> Checks {
        let loops = enc.predicates.iter().map(|p| enc.relation(*p));
        Checks {
            clauses: clauses.clone(),
            named: named.cloned(),
            count: enc.clause_count(),
            terms: enc.terms.clone(),
            relations: loops.chain(enc.summaries.iter().cloned()).collect(),
        }
    }
}

/// What each definition is about: its place, and the labels of its
/// parameters (the state's slots for a loop's predicate; the arguments and
/// `result` for a function's summary). Parallel to the definitions.
#[derive(Clone, Debug, Default)]
pub struct Context {
    pub places: Vec<Place>,
    pub labels: Vec<Vec<String>>,
}

/// Where an invariant holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// At the head of the loop of this `while` statement (absolute in the
    /// file).
    Loop(Span),
    /// Between the arguments of a call of this function and its result.
    Summary(String),
}

impl Context {
    pub fn of(enc: &Encoding) -> Context {
        let state: Vec<String> = enc.state.iter().map(|s| s.label.clone()).collect();
        let mut places: Vec<Place> = enc.loop_spans.iter().map(|s| Place::Loop(*s)).collect();
        let mut labels = vec![state; places.len()];
        for (r, params) in enc.summaries.iter().zip(&enc.summary_labels) {
            let function = r.name.strip_prefix("S_").unwrap_or(&r.name).to_string();
            // The function's own names for its parameters (the combined
            // body calls them `f$n@entry`).
            let own = |label: &String| {
                let label = label.strip_prefix(&format!("{function}$")).unwrap_or(label);
                label.strip_suffix("@entry").unwrap_or(label).to_string()
            };
            labels.push(params.iter().map(own).collect());
            places.push(Place::Summary(function));
        }
        Context { places, labels }
    }
}

/// A definition in the program's terms: the invariant at the head of a
/// loop, or a function's summary.
#[derive(Clone, Debug)]
pub struct ReadableInvariant {
    pub place: Place,
    /// A microc condition, or the solver's definition where it has none.
    pub text: String,
    /// Whether `text` is a microc condition over the program's variables,
    /// which, parsed back, passed the clauses' checks again.
    pub microc: bool,
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
        Ok(Certificate {
            definitions,
            context: Context::of(enc),
            explained: vec![],
            checks: None,
        })
    }

    /// Every predicate `true`: the invariant of clauses whose queries
    /// cannot run (checked like any other).
    pub fn trivial(enc: &Encoding) -> Certificate {
        let mut definitions: Vec<String> = (enc.predicates.iter())
            .map(|&p| constant(enc, p, true))
            .collect();
        definitions.extend(summaries(enc, true, |_| None));
        Certificate {
            definitions,
            context: Context::of(enc),
            explained: vec![],
            checks: None,
        }
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

    /// The invariants as the solver defined them.
    pub fn as_defined(&self) -> Vec<ReadableInvariant> {
        (self.context.places.iter().zip(&self.definitions))
            .map(|(place, d)| ReadableInvariant {
                place: place.clone(),
                text: d.clone(),
                microc: false,
            })
            .collect()
    }

    /// Each invariant as a microc condition over the program's variables,
    /// in clauses, where it has that form.
    pub fn microc_clauses(&self) -> Vec<Option<readable::Clauses>> {
        (self.definitions.iter().zip(&self.context.labels))
            .map(|(d, labels)| {
                let names = labels.iter().all(|l| readable::is_microc_name(l));
                readable::microc_clauses(d, labels).filter(|_| names)
            })
            .collect()
    }

    /// The certificate with each definition that `texts` has a microc
    /// condition for defined by it (parsed back, made a term over the
    /// relation's parameters, printed by the solver layer).
    pub fn defined_by(&self, texts: &[Option<String>], checks: &Checks) -> Option<Certificate> {
        let mut again = self.clone();
        let mut terms = checks.terms.clone();
        let parts = (texts.iter().zip(&mut again.definitions))
            .zip(self.context.labels.iter().zip(&checks.relations));
        for ((text, d), (labels, relation)) in parts {
            if let Some(text) = text {
                let body =
                    readable::condition_term(text, &mut terms, &relation.params, labels).ok()?;
                *d = horn::definition(&terms, relation, body);
            }
        }
        Some(again)
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
