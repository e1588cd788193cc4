//! Constrained Horn clauses as SMT-LIB, printed from terms: the script for
//! Z3's fixed-point engine, the quantifier-free checks of an invariant,
//! and a predicate defined as a constant (docs/horn-clauses.md). The
//! subterms a clause shares are `let`-bound inside it, so that a clause
//! composed of many steps stays linear in the size of its term DAG.

pub mod model;

use super::smtlib::{ScriptPrinter, arena};
use crate::term::{TermId, Terms, Var, shared_subterms};
use easy_smt::SExpr;
use rustc_hash::FxHashMap as HashMap;
use std::fmt::Write;

/// A predicate: its name and its parameters (whose sorts it takes).
#[derive(Clone, Debug)]
pub struct Relation {
    pub name: String,
    pub params: Vec<Var>,
}

/// A predicate applied to arguments.
#[derive(Clone, Debug)]
pub struct Application {
    pub relation: String,
    pub args: Vec<TermId>,
}

/// `∀ vars. body ∧ guards → head`: no `body` for a fact, no `head` for a
/// query (whose head is `false`).
#[derive(Clone, Debug)]
pub struct Clause {
    pub vars: Vec<Var>,
    pub body: Option<Application>,
    /// Further body atoms: the summaries of the calls the clause makes
    /// (a call's arguments and result related by its function's summary).
    pub calls: Vec<Application>,
    pub guards: Vec<TermId>,
    pub head: Option<Application>,
    /// Where it comes from, printed as a comment.
    pub origin: String,
}

/// The scripts for Z3's fixed-point engine, one per set of solver
/// `options` (keyword, value): the options, a `comment`, the predicates'
/// declarations, each clause asserted with its quantifier, then
/// `(check-sat)` and `(get-model)`. The clauses are printed once for all
/// the scripts (they can be megabytes).
pub fn fixedpoint(
    terms: &Terms,
    relations: &[Relation],
    clauses: &[Clause],
    option_sets: &[Vec<(&str, String)>],
    comment: &str,
) -> Vec<String> {
    let body = fixedpoint_body(terms, relations, clauses, comment);
    (option_sets.iter())
        .map(|options| {
            let mut out = super::smtlib::set_logic("HORN") + "\n";
            for (key, value) in options {
                out.push_str(&super::smtlib::set_option(key, value));
                out.push('\n');
            }
            out + &body
        })
        .collect()
}

/// The part of [`fixedpoint`]'s scripts after the options.
fn fixedpoint_body(
    terms: &Terms,
    relations: &[Relation],
    clauses: &[Clause],
    comment: &str,
) -> String {
    let ctx = arena();
    let p = ScriptPrinter::balanced(terms, &ctx);
    let mut out = String::new();
    let _ = writeln!(out, "; {comment}");
    define_division(&p, &mut out, clauses);
    for r in relations {
        let sorts: Vec<SExpr> = r.params.iter().map(|v| p.var_sort(*v)).collect();
        let name = ctx.atom(r.name.as_str());
        let d = p.command("declare-fun", vec![name, ctx.list(sorts), ctx.atom("Bool")]);
        p.line(&mut out, d);
    }
    for c in clauses {
        let _ = writeln!(out, "; {}", c.origin);
        let mut claim = implication(&p, c, false);
        if !c.vars.is_empty() {
            claim = p.command("forall", vec![ctx.list(p.sorted_vars(&c.vars)), claim]);
        }
        p.line(&mut out, p.command("assert", vec![claim]));
    }
    out.push_str("(check-sat)\n(get-model)\n");
    out
}

/// One script that checks an invariant: the `definitions` of the
/// predicates (`define-fun`s), then per clause, in a `push`/`pop` frame
/// of its own, its variables as constants and the negation of its
/// implication, with a `(check-sat)` each. Every `unsat` makes the clause
/// hold under the invariant.
pub fn checks(terms: &Terms, definitions: &[String], clauses: &[Clause]) -> String {
    clause_checks(terms, clauses).with(definitions)
}

/// The part of [`checks`]' script that does not depend on the invariant
/// (the clauses' frames), printed once for every candidate invariant (a
/// weakened one is checked again).
#[derive(Clone, Debug)]
pub struct ClauseChecks {
    /// `tdiv`'s definition, if a clause divides.
    division: String,
    /// One frame per clause.
    frames: String,
}

impl ClauseChecks {
    /// The script that checks the invariant of `definitions`.
    pub fn with(&self, definitions: &[String]) -> String {
        let mut out = super::smtlib::set_logic("ALL") + "\n";
        out.push_str(&self.division);
        for d in definitions {
            out.push_str(d);
            out.push('\n');
        }
        out + &self.frames
    }
}

/// [`ClauseChecks`] of `clauses`.
pub fn clause_checks(terms: &Terms, clauses: &[Clause]) -> ClauseChecks {
    let ctx = arena();
    let p = ScriptPrinter::balanced(terms, &ctx);
    let mut division = String::new();
    define_division(&p, &mut division, clauses);
    let mut out = String::new();
    for c in clauses {
        let _ = writeln!(out, "; {}\n(push 1)", c.origin);
        for v in &c.vars {
            p.line(&mut out, p.declare_const(*v));
        }
        let negated = implication(&p, c, true);
        p.line(&mut out, p.command("assert", vec![negated]));
        out.push_str("(check-sat)\n(pop 1)\n");
    }
    ClauseChecks {
        division,
        frames: out,
    }
}

/// `(define-fun P ((p S) …) Bool value)`: the relation defined as a
/// constant over its parameters.
pub fn constant_definition(terms: &Terms, relation: &Relation, value: bool) -> String {
    let ctx = arena();
    let p = ScriptPrinter::balanced(terms, &ctx);
    let name = ctx.atom(relation.name.as_str());
    let params = ctx.list(p.sorted_vars(&relation.params));
    let def = p.command(
        "define-fun",
        vec![name, params, ctx.atom("Bool"), ctx.atom(value.to_string())],
    );
    ctx.display(def).to_string()
}

/// `(define-fun P ((p S) …) Bool body)`: the relation defined by a term
/// over its parameters.
pub fn definition(terms: &Terms, relation: &Relation, body: TermId) -> String {
    let ctx = arena();
    let p = ScriptPrinter::balanced(terms, &ctx);
    let name = ctx.atom(relation.name.as_str());
    let params = ctx.list(p.sorted_vars(&relation.params));
    let value = shared(&p, body);
    let def = p.command("define-fun", vec![name, params, ctx.atom("Bool"), value]);
    ctx.display(def).to_string()
}

/// A hypothesis and the goals that are to follow from it, over `vars`.
#[derive(Clone, Debug)]
pub struct Consequences {
    pub vars: Vec<Var>,
    pub hypothesis: TermId,
    pub goals: Vec<TermId>,
    /// Where it comes from, printed as a comment.
    pub origin: String,
}

/// One script that asks, per frame, whether each goal follows from the
/// hypothesis: the hypothesis asserted once in a frame with its variables
/// as constants, then each goal's negation in a frame of its own with a
/// `(check-sat)` (`unsat`: it follows). Each check gets at most
/// `check_ms` of Z3's time; also the number of checks.
pub fn consequence_checks(
    terms: &Terms,
    frames: &[Consequences],
    check_ms: u64,
) -> (String, usize) {
    let ctx = arena();
    let p = ScriptPrinter::balanced(terms, &ctx);
    let mut out = super::smtlib::set_logic("ALL") + "\n";
    out.push_str(&super::smtlib::set_option("timeout", &check_ms.to_string()));
    out.push('\n');
    let roots: Vec<TermId> = (frames.iter())
        .flat_map(|f| std::iter::once(f.hypothesis).chain(f.goals.iter().copied()))
        .collect();
    p.tdiv_if_divides(&mut out, &roots);
    let mut checks = 0;
    for f in frames {
        let _ = writeln!(out, "; {}\n(push 1)", f.origin);
        for v in &f.vars {
            p.line(&mut out, p.declare_const(*v));
        }
        p.line(
            &mut out,
            p.command("assert", vec![shared(&p, f.hypothesis)]),
        );
        for g in &f.goals {
            out.push_str("(push 1)\n");
            let negated = shared(&p, *g);
            let negated = p.command("not", vec![negated]);
            p.line(&mut out, p.command("assert", vec![negated]));
            out.push_str("(check-sat)\n(pop 1)\n");
            checks += 1;
        }
        out.push_str("(pop 1)\n");
    }
    (out, checks)
}

/// `t` with the subterms it shares `let`-bound.
fn shared(p: &ScriptPrinter, t: TermId) -> SExpr {
    let mut names: HashMap<TermId, SExpr> = HashMap::default();
    let lets = p.bind(shared_subterms(p.terms, &[t]), &mut names);
    p.under_lets(lets, p.term(t, &names))
}

/// `tdiv`'s definition, if some clause divides (only then: an unused
/// definition with `div` changes Z3's strategy).
fn define_division(p: &ScriptPrinter, out: &mut String, clauses: &[Clause]) {
    let roots: Vec<TermId> = clauses.iter().flat_map(roots).collect();
    p.tdiv_if_divides(out, &roots);
}

/// Every term a clause mentions.
fn roots(c: &Clause) -> Vec<TermId> {
    let apps = c.body.iter().chain(&c.calls).chain(&c.head);
    let mut out: Vec<TermId> = apps.flat_map(|a| a.args.iter().copied()).collect();
    out.extend(&c.guards);
    out
}

/// `(=> (and body guards…) head)`, or its negation, under `let`s of the
/// subterms the clause shares.
fn implication(p: &ScriptPrinter, c: &Clause, negated: bool) -> SExpr {
    let ctx = p.ctx;
    let mut names: HashMap<TermId, SExpr> = HashMap::default();
    let lets = p.bind(shared_subterms(p.terms, &roots(c)), &mut names);
    let apply = |a: &Application| {
        let args: Vec<SExpr> = a.args.iter().map(|t| p.term(*t, &names)).collect();
        let name = ctx.atom(a.relation.as_str());
        if args.is_empty() {
            name
        } else {
            p.command(&a.relation, args)
        }
    };
    let mut parts: Vec<SExpr> = c.body.iter().chain(&c.calls).map(apply).collect();
    parts.extend(c.guards.iter().map(|g| p.term(*g, &names)));
    let body = p.nary("and", "true", parts);
    let head = c.head.as_ref().map_or_else(|| ctx.atom("false"), apply);
    let mut claim = p.command("=>", vec![body, head]);
    if negated {
        claim = p.command("not", vec![claim]);
    }
    p.under_lets(lets, claim)
}

#[cfg(test)]
mod tests;
