//! Compact symbolic execution (Trtík, *Compact Symbolic Execution*;
//! `docs/compact-se.md`): parts, loop and recursion templates derived by
//! executing the cycle (never by matching loop syntax), and Algorithm 1's
//! compact tree. Exact, where the necessary conditions over-approximate.
//!
//! - [`state`]: parametrised states, composition, capture-free renaming;
//! - [`exec`]: the program model and classic steps (the baseline, and the
//!   sub-engine that runs P′);
//! - [`template`]: the part detector, §5.1 loop and §5.2 recursion templates;
//! - [`run`]: Algorithm 1 and the tree;
//! - [`solver`]: satisfiability through the solver layer;
//! - [`tracked`]: templates as salsa queries per function and part;
//! - [`print`]: the tree as text, JSON and Graphviz;
//! - [`witness`]: an error leaf's model as a replayed witness;
//! - [`decider`]: the engine of the contract ([`Compact`]).
//!
//! Knows the front end (through `db`), the IR, terms, the solver layer and
//! witnesses; not the other engines, not the command line.

pub mod decider;
pub mod exec;
pub mod multi;
pub mod print;
pub mod run;
pub mod solver;
pub mod state;
pub mod template;
pub mod tracked;
pub mod witness;

#[cfg(test)]
mod tests;

pub use decider::Compact;

use crate::db::{self, SourceFile};
use crate::smt::Profile;
use crate::term::{Terms, Var};
pub use run::{End, Options, Step, Tree, Vertex};
use rustc_hash::FxHashMap as HashMap;
use state::Value;
use template::{Outcome, Template};

/// What the detector said of each part, for reports.
#[derive(Clone, Debug)]
pub struct PartReport {
    pub function: String,
    pub entry: u32,
    pub recursive: bool,
    pub cycle: Vec<u32>,
    /// "template (n exits)", "no template: …", "refused: …".
    pub outcome: String,
}

/// Why a run gave no tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The command asked for something the file does not have.
    BadInput(String),
    /// The deadline passed while the templates were derived.
    Timeout(String),
}

/// Runs compact (or, with `opts.compact` false, classic) symbolic
/// execution of `start` (default `main`). The deadline covers the
/// templates' derivation and the run.
pub fn execute(
    db: &dyn salsa::Database,
    file: SourceFile,
    start: &str,
    profile: &Profile,
    opts: &Options,
) -> Result<(Tree, Vec<PartReport>), Failure> {
    let began = std::time::Instant::now();
    let prog = exec::Program::load(db, file);
    let start_ix = prog
        .index(start)
        .ok_or_else(|| Failure::BadInput(format!("no function named {start}")))?;
    let derive = || detect(db, file, profile, opts);
    let (terms, templates, reports) = match opts.timeout {
        Some(t) => crate::deadline::run(began + t, derive)
            .map_err(|t| Failure::Timeout(format!("timeout: {}", t.phase)))?,
        None => derive(),
    };
    let mut solver = solver::Solver::new(
        profile.clone(),
        opts.per_query,
        opts.timeout.map(|t| began + t),
    );
    let tree = run::run(terms, prog, start_ix, templates, &mut solver, opts);
    Ok((tree, reports))
}

/// Line 1 of Algorithm 1: every part's template (tracked, so computed once
/// per function and part), imported into a fresh store for the run.
fn detect(
    db: &dyn salsa::Database,
    file: SourceFile,
    profile: &Profile,
    opts: &Options,
) -> (Terms, Vec<Template>, Vec<PartReport>) {
    let mut terms = Terms::new();
    let mut templates = Vec::new();
    let mut reports = Vec::new();
    for (f, item) in db::functions(db, file).iter().enumerate() {
        for (p, part) in tracked::function_parts(db, *item).iter().enumerate() {
            let d = tracked::part_template(db, *item, p as u32, profile.clone());
            let outcome = match &d.outcome {
                Outcome::Template(t) => {
                    let allowed = !opts.one_parameter || t.more_params.is_empty();
                    if opts.compact && allowed {
                        templates.push(import(&mut terms, &d.terms, t, f));
                    }
                    let params = 1 + t
                        .more_params
                        .iter()
                        .filter(|p| p.kind == crate::term::VarKind::Counter)
                        .count();
                    format!(
                        "template with {params} parameter(s) ({} exits kept, {} dropped{})",
                        t.exits.len(),
                        t.dropped.len(),
                        if t.undecided.is_empty() {
                            String::new()
                        } else {
                            format!("; kept undecided: {}", t.undecided.join(", "))
                        }
                    )
                }
                Outcome::NoCycle => "no template: no real path round the cycle".into(),
                Outcome::Refused(why) => format!("refused: {why}"),
            };
            reports.push(PartReport {
                function: item.name(db).clone(),
                entry: part.entry,
                recursive: part.recursive_call.is_some(),
                cycle: part.cycle.clone(),
                outcome,
            });
        }
    }
    (terms, templates, reports)
}

/// Copies a template into the run's store: symbols by name, κ and τ as
/// new variables.
fn import(terms: &mut Terms, src: &Terms, t: &Template, func: usize) -> Template {
    let mut roots = Vec::new();
    let push_value = |roots: &mut Vec<_>, v: &Value| match v {
        Value::Unset => {}
        Value::Int(x) => roots.push(*x),
        Value::Array { cells, len } => {
            roots.push(*cells);
            roots.push(*len);
        }
    };
    for v in t.symbols.iter().chain(&t.closed) {
        push_value(&mut roots, v);
    }
    for x in &t.exits {
        x.theta.iter().for_each(|v| push_value(&mut roots, v));
        roots.push(x.phi);
    }
    if let Some(r) = &t.returning {
        r.iter().for_each(|v| push_value(&mut roots, v));
    }
    for p in std::iter::once(&t.kappa).chain(&t.more_params) {
        let pt = src.var_const(*p);
        if pt.0 != u32::MAX {
            roots.push(pt);
        }
    }
    let mut renamed: HashMap<Var, Var> = HashMap::default();
    let new = terms.import(src, &roots, &mut |this, v, name| {
        let w = this.new_var(v.kind, name);
        renamed.insert(v, w);
        w
    });
    let map: HashMap<crate::term::TermId, crate::term::TermId> =
        roots.iter().copied().zip(new).collect();
    let value = |v: &Value| match v {
        Value::Unset => Value::Unset,
        Value::Int(x) => Value::Int(map[x]),
        Value::Array { cells, len } => Value::Array {
            cells: map[cells],
            len: map[len],
        },
    };
    let mut var = |v: Var| match renamed.get(&v) {
        Some(w) => *w,
        // Symbols (the trip-count functions) are shared by name.
        None => terms.symbol(v.kind, src.var_name(v)),
    };
    Template {
        func,
        entry: t.entry,
        kappa: var(t.kappa),
        more_params: t.more_params.iter().map(|p| var(*p)).collect(),
        bound: t.bound.iter().map(|b| var(*b)).collect(),
        symbols: t.symbols.iter().map(value).collect(),
        closed: t.closed.iter().map(value).collect(),
        exits: t
            .exits
            .iter()
            .map(|x| template::ExitTuple {
                edge: x.edge,
                loc: x.loc,
                theta: x.theta.iter().map(value).collect(),
                phi: map[&x.phi],
            })
            .collect(),
        dropped: t.dropped.clone(),
        returning: t.returning.as_ref().map(|r| r.iter().map(value).collect()),
        undecided: t.undecided.clone(),
    }
}
