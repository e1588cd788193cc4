//! The text form of a necessary condition, as `apc nc` prints it and the
//! snapshot tests record it: the summary of each loop of the function,
//! then φ̂ and φ̂^K with shared subterms named.

use super::state::Slot;
use super::{Engine, unfold};
use crate::term::Printer;
use std::fmt::Write;

/// Everything `apc nc` shows for one target. `loc` maps a function-relative
/// span to "line:col".
pub fn render(
    eng: &mut Engine,
    title: &str,
    nodes: &[crate::ir::NodeId],
    k: Option<u32>,
    loc: &dyn Fn(crate::syntax::Span) -> String,
    simplify: bool,
) -> String {
    let body = eng.body;
    let mut out = String::new();
    let _ = writeln!(out, "{title}");
    let phi = eng.condition_of(nodes);
    for l in &body.loops {
        let sum = eng.summary(l.id);
        let counters: Vec<&str> = sum
            .counters
            .iter()
            .map(|c| eng.terms.var_name(*c))
            .collect();
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
                eng.terms.show(*f)
            );
        }
        let mut slots: Vec<&Slot> = sum.theta.values.keys().collect();
        slots.sort();
        for s in slots {
            let v = sum.theta.values[s];
            let sym = eng.slots.symbols[s];
            if v == eng.terms.var_const(sym) {
                continue; // unchanged
            }
            let _ = writeln!(out, "  θ({}) = {}", slot_name(eng, *s), eng.terms.show(v));
        }
        let (defs, roots) = Printer::with_sharing(&eng.terms, &[sum.looping]);
        let _ = writeln!(out, "  φ^κ = {}", roots[0]);
        for (n, d) in defs {
            let _ = writeln!(out, "    where {n} = {d}");
        }
    }
    // The simplifier's time and stop reason vary with the machine's load:
    // only the sizes are shown, so that the output can be snapshot.
    let (phi, before) = if simplify {
        let (s, stats) = crate::simplify::simplify_one(&mut eng.terms, phi);
        (s, format!(", {} before simplification", stats.nodes_before))
    } else {
        (phi, String::new())
    };
    write_formula(&mut out, eng, "φ̂", phi, &before);
    if let Some(k) = k {
        let phik = unfold(&mut eng.terms, phi, k);
        write_formula(&mut out, eng, &format!("φ̂^{k}"), phik, "");
    }
    out
}

fn write_formula(out: &mut String, eng: &Engine, name: &str, t: crate::term::TermId, note: &str) {
    let (defs, roots) = Printer::with_sharing(&eng.terms, &[t]);
    let size = eng.terms.dag_size(&[t]);
    let _ = writeln!(out, "{name} ({size} DAG nodes{note}) =");
    let _ = writeln!(out, "  {}", roots[0]);
    for (n, d) in defs {
        let _ = writeln!(out, "  where {n} = {d}");
    }
}

fn slot_name(eng: &Engine, s: Slot) -> String {
    let name = |v: u32| eng.body.var(v).name.clone();
    match s {
        Slot::Value(v) => name(v),
        Slot::Len(v, level) => format!("len({}{})", name(v), "[·]".repeat(level as usize)),
        Slot::Init(v) => format!("init({})", name(v)),
        Slot::Field(v, k) => match &eng.body.var(v).ty {
            crate::types::Type::Record(fs) => format!("{}.{}", name(v), fs[k as usize].0),
            _ => format!("{}.?", name(v)),
        },
        Slot::Heap => "heap".to_string(),
        Slot::Next => "next".to_string(),
    }
}
