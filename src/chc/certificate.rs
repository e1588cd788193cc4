//! Checking an invariant that the fixed-point engine returns: nothing it
//! says is taken on trust. Each clause, with every predicate replaced by
//! the solver's definition, must be valid: its negation is sent as its own
//! quantifier-free query, and only `unsat` for every one of them makes the
//! invariant a proof.

use super::encode::{Encoding, predicate_name};
use crate::ir::NodeId;
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
    /// A quantified definition goes through `eliminate`, whose
    /// quantifier-free answer is kept (and checked like the others).
    pub fn from_model(
        model: &str,
        enc: &Encoding,
        eliminate: impl Fn(&str) -> Result<String, String>,
    ) -> Result<Certificate, String> {
        let mut found = top_level_definitions(model);
        for d in found.iter_mut().filter(|d| has_quantifier(d)) {
            let free = eliminate(d).map_err(|why| {
                format!("the invariant has quantifiers, and eliminating them failed: {why}")
            })?;
            if has_quantifier(&free) {
                return Err(
                    "the invariant has quantifiers that Z3 did not eliminate; apc checks quantifier-free ones only".into(),
                );
            }
            *d = free;
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
                    .unwrap_or_else(|| constant(p, &params, false))
            })
            .collect();
        Ok(Certificate { definitions })
    }

    /// Every predicate `true`: the invariant of clauses whose queries
    /// cannot run (checked like any other).
    pub fn trivial(enc: &Encoding) -> Certificate {
        let params = enc.parameters();
        let definitions = (enc.predicates.iter())
            .map(|&p| constant(p, &params, true))
            .collect();
        Certificate { definitions }
    }

    /// Each of `ps` defined `true`: what a clause into it needs, whatever
    /// it is.
    pub fn weaken(&mut self, enc: &Encoding, ps: &[NodeId]) {
        let params = enc.parameters();
        for (&p, definition) in enc.predicates.iter().zip(&mut self.definitions) {
            if ps.contains(&p) {
                *definition = constant(p, &params, true);
            }
        }
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

/// `p` defined as the constant `value` over the parameters `params`.
pub fn constant(p: NodeId, params: &str, value: bool) -> String {
    format!("(define-fun {} ({params}) Bool {value})", predicate_name(p))
}

fn has_quantifier(definition: &str) -> bool {
    definition.contains("forall") || definition.contains("exists")
}

/// The script that asks Z3 to eliminate the quantifiers of a definition
/// `(define-fun P (params) Bool body)`: its parameters as constants, the
/// body asserted, then the `qe` tactic; `None` if it is not of that form.
pub fn elimination_script(definition: &str) -> Option<String> {
    let (_, params, body) = definition_parts(definition)?;
    let mut out = String::new();
    for param in items(params.strip_prefix('(')?.strip_suffix(')')?) {
        let (name, sort) = param
            .strip_prefix('(')?
            .strip_suffix(')')?
            .split_once(' ')?;
        let _ = writeln!(out, "(declare-const {name} {})", sort.trim());
    }
    let _ = writeln!(out, "(assert {body})\n(apply (then qe simplify))");
    Some(out)
}

/// The definition again with the body that the `qe` tactic's `goals`
/// answer gives: one goal, its formulas conjoined.
pub fn definition_from_goals(definition: &str, goals: &str) -> Result<String, String> {
    let (name, params, _) = definition_parts(definition).ok_or("not a definition")?;
    // `(goals` and each `(goal`: one goal is two matches.
    if goals.matches("(goal").count() != 2 {
        return Err(format!("not one goal: {}", goals.trim()));
    }
    let goal = goals.split_once("(goal\n").ok_or("no goal")?.1;
    let formulas = goal.split_once(":precision").ok_or("no goal's end")?.0;
    let conjuncts = items(formulas);
    let body = match conjuncts.len() {
        0 => "true".to_string(),
        1 => conjuncts[0].to_string(),
        _ => format!("(and {})", conjuncts.join(" ")),
    };
    Ok(format!("(define-fun {name} {params} Bool {body})"))
}

/// A definition's name, parameter list (with its parentheses) and body.
fn definition_parts(definition: &str) -> Option<(&str, &str, &str)> {
    let rest = definition.strip_prefix("(define-fun ")?.strip_suffix(')')?;
    let parts = items(rest);
    match parts.as_slice() {
        [name, params, "Bool", body] => Some((name, params, body)),
        _ => None,
    }
}

/// The top-level atoms and parenthesised groups of `text`, in order.
fn items(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, None);
    for (i, ch) in text.char_indices() {
        match ch {
            '(' => {
                if depth == 0 {
                    start = Some(i);
                }
                depth += 1;
            }
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0
                    && let Some(s) = start.take()
                {
                    out.push(&text[s..=i]);
                }
            }
            c if c.is_whitespace() && depth == 0 => {
                if let Some(s) = start.take() {
                    out.push(&text[s..i]);
                }
            }
            _ if depth == 0 && start.is_none() => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start
        && depth == 0
    {
        out.push(&text[s..]);
    }
    out
}

/// The `(define-fun …)` forms at the top level of a model: the items of
/// its outermost groups.
fn top_level_definitions(model: &str) -> Vec<String> {
    (items(model).into_iter())
        .filter_map(|group| group.strip_prefix('(')?.strip_suffix(')'))
        .flat_map(items)
        .filter(|d| d.starts_with("(define-fun "))
        .map(str::to_string)
        .collect()
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

    #[test]
    fn a_definition_is_taken_apart_and_rebuilt_from_goals() {
        let d = "(define-fun P1 ((x!0 Int) (x!1 (Array Int Int))) Bool (exists ((y Int)) (= x!0 (+ y 1))))";
        let script = elimination_script(d).expect("a definition");
        assert!(script.contains("(declare-const x!0 Int)"), "{script}");
        assert!(
            script.contains("(declare-const x!1 (Array Int Int))"),
            "{script}"
        );
        assert!(
            script.contains("(assert (exists ((y Int)) (= x!0 (+ y 1))))"),
            "{script}"
        );
        let goals = "(goals\n(goal\n  (>= x!0 1)\n  (<= x!0 9)\n  :precision precise :depth 2)\n)";
        let rebuilt = definition_from_goals(d, goals).expect("one goal");
        let want =
            "(define-fun P1 ((x!0 Int) (x!1 (Array Int Int))) Bool (and (>= x!0 1) (<= x!0 9)))";
        assert_eq!(rebuilt, want);
        let empty = "(goals\n(goal\n  :precision precise :depth 2)\n)";
        assert!(
            definition_from_goals(d, empty)
                .unwrap()
                .ends_with("Bool true)")
        );
        let two =
            "(goals\n(goal\n  false\n  :precision precise)\n(goal\n  true :precision precise)\n)";
        assert!(definition_from_goals(d, two).is_err());
        assert!(elimination_script("(define-fun P1 () Int 3)").is_none());
    }
}
