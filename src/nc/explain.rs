//! The text form of a necessary condition, as `apc nc` prints it and the
//! snapshot tests record it: the summary of each loop of the program,
//! then φ̂ and φ̂^K with shared subterms named. Everything comes from the
//! database's queries, so it is the condition `apc check` encodes.

use super::state::{Slot, Slots};
use super::{Condition, Options, Summary, tracked, unfold};
use crate::db::{self, SourceFile, Target};
use crate::ir::Body;
use crate::term::{Printer, TermId, Terms};
use std::fmt::Write;

/// Everything `apc nc` shows for one target: φ̂ simplified (unless
/// `simplify` is false) and, with `k`, φ̂^K. `loc` maps an absolute span
/// to "line:col".
pub fn render(
    db: &dyn salsa::Database,
    file: SourceFile,
    target: &Target,
    opts: &Options,
    k: Option<u32>,
    loc: &dyn Fn(crate::syntax::Span) -> String,
    simplify: bool,
) -> String {
    let prog = db::program(db, file)
        .as_ref()
        .expect("conditions are asked of programs with main");
    let (function, id) = (target.function.clone(), target.id);
    let raw = tracked::necessary_condition(db, file, function.clone(), id, opts.clone());
    let copies = prog.copies_of(&function, id).len();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "target {} at {}:{} in {function} ({copies} inlined cop{})",
        target.kind.as_str(),
        target.line,
        target.col,
        if copies == 1 { "y" } else { "ies" }
    );
    for group in raw.value.slots.sharing.groups(&prog.body) {
        let _ = writeln!(
            out,
            "note: {} may share cells: a write into one makes the others ⋆",
            group.join(", ")
        );
    }
    write_summaries(&mut out, &prog.body, &raw.terms, &raw.value, loc);
    // The simplifier's time and stop reason vary with the machine's load:
    // only the sizes are shown, so that the output can be snapshot.
    let (terms, phi, before) = if simplify {
        let s = tracked::simplified_condition(db, file, function, id, opts.clone());
        let before = format!(", {} before simplification", s.stats.nodes_before);
        (s.terms(raw), s.phi, before)
    } else {
        (&raw.terms, raw.value.phi, String::new())
    };
    write_formula(&mut out, terms, "φ̂", phi, &before);
    if let Some(k) = k {
        let mut own = terms.clone();
        match unfold(&mut own, phi, k) {
            Ok(phik) => write_formula(&mut out, &own, &format!("φ̂^{k}"), phik, ""),
            Err(_) => {
                let limit = super::unfold::MAX_UNFOLDED_TERMS;
                let _ = writeln!(out, "φ̂^{k}: not unfolded (more than {limit} terms)");
            }
        }
    }
    out
}

/// The summary of each loop φ̂ applied: counters, notes, inferred inner
/// counts, the slots θ changes, and φ^κ.
fn write_summaries(
    out: &mut String,
    body: &Body,
    terms: &Terms,
    cond: &Condition,
    loc: &dyn Fn(crate::syntax::Span) -> String,
) {
    for (l, sum) in &cond.summaries {
        let l = &body.loops[*l as usize];
        let counters: Vec<&str> = sum.counters.iter().map(|c| terms.var_name(*c)).collect();
        let _ = writeln!(
            out,
            "loop L{} (while at {}): {} body backbone(s), counters [{}]",
            l.id,
            loc(l.span),
            sum.counters.len(),
            counters.join(", ")
        );
        for note in &sum.notes {
            let _ = writeln!(out, "  note: {note}");
        }
        for (u, f) in &sum.inferred {
            let _ = writeln!(
                out,
                "  count of inner loop L{u} in the iteration after κ⃗: {}",
                terms.show(*f)
            );
        }
        write_theta(out, body, terms, &cond.slots, sum);
        let (defs, roots) = Printer::with_sharing(terms, &[sum.looping]);
        let _ = writeln!(out, "  φ^κ = {}", roots[0]);
        for (n, d) in defs {
            let _ = writeln!(out, "    where {n} = {d}");
        }
    }
}

/// θ's changed slots, in slot order.
fn write_theta(out: &mut String, body: &Body, terms: &Terms, slots: &Slots, sum: &Summary) {
    let mut changed: Vec<&Slot> = sum.theta.values.keys().collect();
    changed.sort();
    for s in changed {
        let v = sum.theta.values[s];
        if v == terms.var_const(slots.symbols[s]) {
            continue; // unchanged
        }
        let _ = writeln!(out, "  θ({}) = {}", slot_name(body, *s), terms.show(v));
    }
}

fn write_formula(out: &mut String, terms: &Terms, name: &str, t: TermId, note: &str) {
    let (defs, roots) = Printer::with_sharing(terms, &[t]);
    let size = terms.dag_size(&[t]);
    let _ = writeln!(out, "{name} ({size} DAG nodes{note}) =");
    let _ = writeln!(out, "  {}", roots[0]);
    for (n, d) in defs {
        let _ = writeln!(out, "  where {n} = {d}");
    }
}

fn slot_name(body: &Body, s: Slot) -> String {
    let name = |v: u32| body.var(v).name.clone();
    match s {
        Slot::Value(v) => name(v),
        Slot::Len(v, level) => format!("len({}{})", name(v), "[·]".repeat(level as usize)),
        Slot::Init(v) => format!("init({})", name(v)),
        Slot::Field(v, k) => match &body.var(v).ty {
            crate::types::Type::Record(fs) => format!("{}.{}", name(v), fs[k as usize].0),
            _ => format!("{}.?", name(v)),
        },
        Slot::Heap => "heap".to_string(),
        Slot::Next => "next".to_string(),
    }
}
