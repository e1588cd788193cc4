//! An `unknown` in one line a user can act on (docs/explanations.md):
//! which engine got furthest, and what it lacked. The engines' own
//! reasons stay whole in the JSON's `reason` and under `--explain`.

use crate::engine::{CheckOptions, Decision};
use std::time::Duration;

/// What an engine lacked, ranked: the higher, the further it got.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Lack {
    /// Random tests, none of which reached the target (the least: tests
    /// show nothing of why).
    NoTestReached,
    /// It ran out of time, or its solver gave up.
    Time,
    /// It stopped at one of its limits.
    Limit(String),
    /// It cannot read part of the program.
    Unsupported(String),
    /// Candidate runs, none of which replayed to the target.
    Witness(&'static str),
    /// Recursion, which it does not summarise.
    Recursion,
    /// A loop invariant that is not linear.
    NonlinearInvariant,
}

/// The one-line reason of an undecided `d` under `opts`.
pub fn one_line(d: &Decision, opts: &CheckOptions) -> String {
    let attempts: Vec<(&str, &str)> = if d.attempts.is_empty() {
        vec![(opts.engine, d.reason())]
    } else {
        (d.attempts.iter())
            .map(|(e, why)| (*e, why.as_str()))
            .collect()
    };
    let timed_out =
        d.reason().starts_with("timeout") || attempts.iter().any(|(_, w)| w.starts_with("timeout"));
    let furthest = (attempts.iter())
        .map(|(engine, why)| (lack(why), *engine))
        .max_by(|a, b| a.0.cmp(&b.0));
    let who = |engine: &str| match attempts.len() {
        1 => engine.to_string(),
        _ => format!("{engine} got furthest"),
    };
    let mut line = match furthest {
        Some((Lack::Witness(what), engine)) => format!("{}: {what}", who(engine)),
        Some((Lack::NoTestReached, engine)) => {
            format!("{engine}: none of its random tests reached the target")
        }
        Some((Lack::Recursion, engine)) => {
            format!("{}, and lacked a summary of the recursion", who(engine))
        }
        Some((Lack::NonlinearInvariant, engine)) => {
            format!("{}, and lacked a nonlinear loop invariant", who(engine))
        }
        // No engine got anywhere.
        Some((Lack::Time, engine)) if timed_out && attempts.len() == 1 => {
            format!("{engine} ran out of time")
        }
        _ if timed_out && attempts.len() > 1 => "every engine ran out of time".to_string(),
        Some((Lack::Unsupported(what), engine)) => {
            format!("no engine could read the program ({engine}: {what})")
        }
        Some((Lack::Limit(what), engine)) => format!("{engine} stopped at {what}"),
        Some((Lack::Time, engine)) => format!("{engine}'s solver gave up"),
        None => "no engine decided".to_string(),
    };
    if timed_out {
        line += &format!(
            "; the deadline of {}: try --timeout {}",
            seconds(opts.timeout),
            longer(opts.timeout)
        );
    }
    line
}

/// What an engine's reason says it lacked.
fn lack(why: &str) -> Lack {
    let w = why.to_lowercase();
    if w.contains("random tests reached it") {
        Lack::NoTestReached
    } else if w.contains("products and quotients")
        || w.contains("invariants from runs: the invariant")
    {
        Lack::NonlinearInvariant
    } else if w.contains("recursion") {
        Lack::Recursion
    } else if w.contains("nc-sat-no-witness") {
        Lack::Witness("its condition has models, but no model's run reaches the target")
    } else if w.contains("have a counterexample") {
        Lack::Witness("the Horn clauses have counterexamples, but none replays to the target")
    } else if let Some(what) = after(&w, "a path could not go on: ") {
        Lack::Unsupported(what)
    } else if let Some(what) = after(&w, "unsupported: ") {
        Lack::Unsupported(what)
    } else if w.contains("limit") {
        Lack::Limit(after(&w, "stopped at the ").unwrap_or_else(|| "a limit".into()))
    } else {
        Lack::Time
    }
}

/// What follows `marker` in `text`, up to the end of its clause, without
/// the documentation's reference.
fn after(text: &str, marker: &str) -> Option<String> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let end = rest.find(['(', ';', ':']).unwrap_or(rest.len());
    Some(rest[..end].trim().to_string())
}

/// `10 s`, `2 s` (a deadline shortened by a shared phase, rounded), `0.5 s`.
fn seconds(d: Duration) -> String {
    let tenths = format!("{:.1}", d.as_secs_f64());
    format!("{} s", tenths.strip_suffix(".0").unwrap_or(&tenths))
}

/// A deadline to suggest: the next of 10 s, 1 min, 5 min, 30 min, 2 h
/// beyond `d`.
fn longer(d: Duration) -> u64 {
    let s = d.as_secs_f64();
    [10, 60, 300, 1800, 7200]
        .into_iter()
        .find(|&n| n as f64 > s)
        .unwrap_or((s * 4.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn undecided(attempts: &[(&'static str, &str)], timeout: u64) -> String {
        let reasons: Vec<String> = attempts.iter().map(|(e, w)| format!("{e}: {w}")).collect();
        let mut d = Decision::unknown(format!("timeout: {}", reasons.join("; ")));
        d.attempts = (attempts.iter())
            .map(|(e, w)| (*e, w.to_string()))
            .collect();
        let opts = CheckOptions::new(vec![], Duration::from_secs(timeout));
        one_line(&d, &opts)
    }

    #[test]
    fn the_furthest_engine_and_what_it_lacked() {
        let gcd = undecided(
            &[
                ("explore-search", "timeout"),
                ("nc", "nc-sat-no-witness: the replay returned 1"),
                (
                    "chc",
                    "unknown; invariants from runs: the invariant failed its check on clause 3 (Sat): not a proof; with products and quotients of unknowns left unknown, the clauses have a counterexample",
                ),
                ("compact", "timeout: the analysis"),
            ],
            10,
        );
        assert_eq!(
            gcd,
            "chc got furthest, and lacked a nonlinear loop invariant; the deadline of 10 s: try --timeout 60"
        );
        let times = undecided(&[("nc", "timeout: solving"), ("explore", "timeout")], 1);
        assert_eq!(
            times,
            "every engine ran out of time; the deadline of 1 s: try --timeout 10"
        );
        let rec = undecided(
            &[
                (
                    "compositional",
                    "unsupported: recursion (`fib` calls `fib` while it runs); the report's …",
                ),
                ("explore", "timeout"),
            ],
            30,
        );
        assert!(
            rec.starts_with("compositional got furthest, and lacked a summary of the recursion"),
            "{rec}"
        );
        let tested = undecided(&[("fuzz", "none of 812 random tests reached it")], 30);
        let expected = "fuzz: none of its random tests reached the target";
        assert!(tested.starts_with(expected), "{tested}");
        let beside = undecided(
            &[
                ("fuzz", "none of 812 random tests reached it"),
                ("nc", "nc-sat-no-witness: the replay returned 1"),
            ],
            30,
        );
        assert!(beside.starts_with("nc got furthest"), "{beside}");
        let alone = undecided(&[("nc", "nc-sat-no-witness: the replay returned 0")], 30);
        assert!(alone.starts_with("nc: its condition has models"), "{alone}");
    }

    #[test]
    fn an_unsupported_construct_is_named_without_its_reference() {
        let u = undecided(
            &[
                (
                    "compositional",
                    "unsupported: `a` is not an integer (arrays, records, pointers) in `main` (docs/compositional-se.md §11.1)",
                ),
                ("explore", "timeout"),
            ],
            5,
        );
        assert_eq!(
            u,
            "every engine ran out of time; the deadline of 5 s: try --timeout 10"
        );
        let mut d = Decision::unknown("unsupported: `a` is not an integer (arrays) in `main`");
        d.attempts = vec![("compositional", d.reason().to_string())];
        let opts = CheckOptions::new(vec![], Duration::from_secs(5));
        assert_eq!(
            one_line(&d, &opts),
            "no engine could read the program (compositional: `a` is not an integer)"
        );
    }
}
