//! Checking an invariant that the fixed-point engine returns: nothing it
//! says is taken on trust. Each clause, with every predicate replaced by
//! the solver's definition, must be valid: its negation is sent as its own
//! quantifier-free query, and only `unsat` for every one of them makes the
//! invariant a proof.

use super::encode::{Encoding, predicate_name};
use std::fmt::Write;

/// The solver's definitions of the predicates, as `define-fun`s.
#[derive(Clone, Debug)]
pub struct Certificate {
    pub definitions: Vec<String>,
}

impl Certificate {
    /// The definitions in a model (`(get-model)`'s answer) for the
    /// encoding's predicates. A predicate the model leaves out is `false`
    /// (the checks decide whether it may be). A quantified definition is
    /// refused: the checks are to be quantifier-free.
    pub fn from_model(model: &str, enc: &Encoding) -> Result<Certificate, String> {
        let found = top_level_definitions(model);
        if found
            .iter()
            .any(|d| d.contains("forall") || d.contains("exists"))
        {
            return Err(
                "the invariant has quantifiers; apc checks quantifier-free ones only".into(),
            );
        }
        let params = enc.parameters();
        let definitions = enc
            .predicates
            .iter()
            .map(|&p| {
                let name = predicate_name(p);
                found
                    .iter()
                    .find(|d| defined_name(d) == Some(name.as_str()))
                    .cloned()
                    .unwrap_or_else(|| format!("(define-fun {name} ({params}) Bool false)"))
            })
            .collect();
        Ok(Certificate { definitions })
    }

    /// Every predicate `true`: the invariant of clauses whose queries
    /// cannot run (checked like any other).
    pub fn trivial(enc: &Encoding) -> Certificate {
        let params = enc.parameters();
        let definitions = (enc.predicates.iter())
            .map(|&p| format!("(define-fun {} ({params}) Bool true)", predicate_name(p)))
            .collect();
        Certificate { definitions }
    }

    /// One script: the definitions, then per clause the negation of its
    /// implication in a `push`/`pop` frame with its own `check-sat`.
    pub fn checks(&self, enc: &Encoding) -> String {
        let mut out = String::from("(set-logic ALL)\n");
        out.push_str(&enc.definitions());
        for d in &self.definitions {
            out.push_str(d);
            out.push('\n');
        }
        for c in &enc.clauses {
            let _ = writeln!(out, "; {}\n(push 1)", c.origin);
            for (n, s) in &c.vars {
                let _ = writeln!(out, "(declare-const {n} {s})");
            }
            let _ = writeln!(
                out,
                "(assert (not (=> {} {})))\n(check-sat)\n(pop 1)",
                c.body, c.head
            );
        }
        out
    }
}

/// The `(define-fun …)` forms at the top level of a model.
fn top_level_definitions(model: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, None);
    for (i, ch) in model.char_indices() {
        match ch {
            '(' => {
                depth += 1;
                if depth == 2 {
                    start = Some(i);
                }
            }
            ')' => {
                if depth == 2
                    && let Some(s) = start.take()
                {
                    out.push(model[s..=i].to_string());
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
    }
    out.retain(|d| d.starts_with("(define-fun "));
    out
}

fn defined_name(definition: &str) -> Option<&str> {
    definition
        .strip_prefix("(define-fun ")?
        .split_whitespace()
        .next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_read_at_the_top_level_only() {
        let model = "(\n  (define-fun P1 ((x!0 Int)) Bool\n    (let ((a!1 (<= x!0 3))) (and a!1 (>= x!0 0))))\n  (define-fun P2 ((x!0 Int)) Bool true)\n)";
        let d = top_level_definitions(model);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(defined_name(&d[0]), Some("P1"));
        assert!(d[0].ends_with("(>= x!0 0))))"), "{}", d[0]);
    }
}
