//! The simplifier's soundness on real conditions: for every target of every
//! test program, a solver proves the simplified necessary condition
//! equivalent to the one computed (`orig ≠ simplified` is unsatisfiable).
//! The random-term check by evaluation is `simplification_preserves_the_value`
//! in `src/simplify/tests.rs`.
//!
//! Equivalence of ∀∃ formulas is beyond the solvers (Z3 answers `unknown`
//! on HW's), so quantifiers are paired first, innermost first: a simplified
//! `Q v⃗. B'` and a computed `Q v⃗. B` (same quantifier, same bound
//! variables) whose bodies the solver proves equivalent for all values of
//! all variables (nested quantifiers already replaced by their pair's
//! name) denote the same function of the free variables, so both are
//! replaced by one fresh Boolean; unpaired quantifiers get Booleans of their
//! own. The final, quantifier-free check is then valid only if the
//! conditions are equivalent: the fresh Booleans range over every value,
//! the quantifiers' true values among them.

use crate::common::*;
use apc::check;
use apc::db::{self, Database};
use apc::nc::Options;
use apc::smt::{Answer, Profile, SolverKind, run_script};
use apc::term::{Node, TermId, Terms, VarKind, rebuild_public};
use std::collections::HashMap;
use std::time::Duration;

/// Replaces every quantifier by its name (a fresh Boolean when unnamed).
fn abstracted(
    terms: &mut Terms,
    t: TermId,
    names: &mut HashMap<TermId, TermId>,
    memo: &mut HashMap<TermId, TermId>,
) -> TermId {
    if let Some(&r) = memo.get(&t) {
        return r;
    }
    let node = terms.node(t).clone();
    let r = if let Node::Quant(..) = node {
        *names.entry(t).or_insert_with(|| proposition(terms))
    } else {
        let kids = terms.children(&node);
        let new: Vec<TermId> = kids
            .iter()
            .map(|k| abstracted(terms, *k, names, memo))
            .collect();
        if new == kids {
            t
        } else {
            rebuild_public(terms, &node, &new)
        }
    };
    memo.insert(t, r);
    r
}

/// A fresh Boolean naming a quantified formula. Not a ⋆ predicate
/// (`fresh_bool`): an integer `ite` on one of those collapses to ⋆, which
/// would make the abstraction lose the values that quantified conditions
/// choose (TR Table 2's ∃p form).
fn proposition(terms: &mut Terms) -> TermId {
    let v = terms.new_var(VarKind::Proposition, "q");
    terms.var(v)
}

/// The quantifier nodes under `t`, innermost first.
fn quantifiers(terms: &Terms, t: TermId, seen: &mut Vec<TermId>) {
    if seen.contains(&t) {
        return;
    }
    for k in terms.children(terms.node(t)) {
        quantifiers(terms, k, seen);
    }
    if matches!(terms.node(t), Node::Quant(..)) {
        seen.push(t);
    }
}

fn valid_equivalence(z3: &Profile, terms: &mut Terms, a: TermId, b: TermId) -> Answer {
    let differ = terms.ne(a, b);
    let script = apc::smt::smtlib::script(terms, &[differ]);
    run_script(z3, &script, Duration::from_secs(20)).answer
}

/// Whether `raw` and `simp` (in one store) are proved equivalent.
fn equivalent(z3: &Profile, terms: &mut Terms, raw: TermId, simp: TermId) -> Result<(), String> {
    let mut names: HashMap<TermId, TermId> = HashMap::new();
    let (mut raw_qs, mut simp_qs) = (Vec::new(), Vec::new());
    quantifiers(terms, raw, &mut raw_qs);
    quantifiers(terms, simp, &mut simp_qs);
    for &q in &simp_qs {
        let Node::Quant(kind, vars, body) = terms.node(q).clone() else {
            unreachable!()
        };
        for &r in &raw_qs {
            let Node::Quant(rk, rvars, rbody) = terms.node(r).clone() else {
                unreachable!()
            };
            if (rk, &rvars) != (kind, &vars) || names.contains_key(&r) {
                continue;
            }
            // A trial naming: a failed attempt must not name the raw
            // quantifiers inside (they could not be paired later).
            let mut trial = names.clone();
            let mut memo = HashMap::new();
            let b1 = abstracted(terms, rbody, &mut trial, &mut memo);
            let b2 = abstracted(terms, body, &mut trial, &mut memo);
            if b1 == b2 || valid_equivalence(z3, terms, b1, b2) == Answer::Unsat {
                let name = proposition(terms);
                names.insert(r, name);
                names.insert(q, name);
                break;
            }
        }
    }
    let mut memo = HashMap::new();
    let a = abstracted(terms, raw, &mut names, &mut memo);
    let b = abstracted(terms, simp, &mut names, &mut memo);
    match valid_equivalence(z3, terms, a, b) {
        Answer::Unsat => Ok(()),
        other => Err(format!(
            "orig ≠ simplified is not unsat: {other:?}\norig: {}\nsimplified: {}",
            terms.show(raw),
            terms.show(simp)
        )),
    }
}

/// The corpus in two halves, two tests, so that the default run's
/// threads share the work.
#[test]
fn simplified_conditions_are_equivalent_to_the_computed_ones() {
    let all = programs();
    equivalent_on(&all[..all.len() / 2]);
}

#[test]
fn simplified_conditions_are_equivalent_on_the_rest_of_the_corpus() {
    let all = programs();
    equivalent_on(&all[all.len() / 2..]);
}

/// Every target's simplified condition is equivalent to the computed one
/// (Z3 proves it), on these programs; enough of them were checked, and
/// enough changed.
fn equivalent_on(programs: &[std::path::PathBuf]) {
    let z3 = apc::smt::locate(SolverKind::Z3, None).expect("z3 installed");
    let (mut checked, mut changed) = (0, 0);
    let mut failures = Vec::new();
    for path in programs {
        let text = std::fs::read_to_string(path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (db, file) = Database::with_file(&name, &text);
        if db::program(&db, file).is_none() {
            continue;
        }
        for t in check::targets(&db, file) {
            let opts = Options::default();
            let raw =
                apc::nc::necessary_condition(&db, file, t.function.clone(), t.id, opts.clone());
            let simp = apc::nc::simplified_condition(&db, file, t.function.clone(), t.id, opts);
            checked += 1;
            let s = simp.phi;
            if s == raw.value.phi {
                continue;
            }
            changed += 1;
            // The simplified store extends a clone of the raw one: both ids
            // are valid in it.
            let mut terms = simp.terms(raw).clone();
            if let Err(e) = equivalent(&z3, &mut terms, raw.value.phi, s) {
                failures.push(format!("{name} {}:{}: {e}", t.line, t.col));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        checked > 50 && changed >= 5,
        "{checked} conditions, {changed} changed"
    );
}
