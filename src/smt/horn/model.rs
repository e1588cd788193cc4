//! Reading the Horn solver's answers: the predicates' definitions in a
//! model, and a definition rebuilt after Z3's `qe` tactic eliminated its
//! quantifiers. Text in, text out: a definition goes back to a solver as
//! it came.

use std::fmt::Write;

/// Whether a definition has a quantifier.
pub fn has_quantifier(definition: &str) -> bool {
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
pub fn definitions(model: &str) -> Vec<String> {
    (items(model).into_iter())
        .filter_map(|group| group.strip_prefix('(')?.strip_suffix(')'))
        .flat_map(items)
        .filter(|d| d.starts_with("(define-fun "))
        .map(str::to_string)
        .collect()
}

pub fn defined_name(definition: &str) -> Option<&str> {
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
        let d = definitions(model);
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
