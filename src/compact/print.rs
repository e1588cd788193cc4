//! The tree as text, JSON and Graphviz: each vertex with its function and
//! location, each edge with its label (a guard, or s.θ⟨t.φᵢ⟦κ⟧⟩ for an
//! instantiation), and a mark where the solver could not decide.

use super::run::{End, Step, Tree, Vertex};
use serde_json::{Value as Json, json};

fn location(tree: &Tree, v: &Vertex) -> String {
    format!("{}@{}", tree.prog.funcs[v.state.func].name, v.state.loc)
}

fn step(tree: &Tree, v: &Vertex) -> String {
    match &v.step {
        Step::Root => "root".into(),
        Step::Classic => "classic".into(),
        Step::Instantiate { template, kappa } => format!(
            "instantiate t{template} with {}",
            tree.terms.var_name(*kappa)
        ),
        Step::Return { template, kappa } => {
            format!(
                "return phase of t{template} with {}",
                tree.terms.var_name(*kappa)
            )
        }
    }
}

fn end(e: &End) -> String {
    match e {
        End::Inner => "inner".into(),
        End::Exit => "exit".into(),
        End::Error(t) => format!("error T{t}"),
        End::Stuck(why) => format!("stuck: {why}"),
        End::Open => "open".into(),
    }
}

/// An indented listing, one vertex per line, children under parents.
pub fn text(tree: &Tree) -> String {
    let mut out = String::new();
    let mut stack = vec![(0usize, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        let vx = &tree.vertices[v];
        let label = vx
            .label
            .map(|l| format!("  [{}]", tree.terms.show(l)))
            .unwrap_or_default();
        let unknown = vx
            .unknown
            .as_ref()
            .map(|w| format!("  (kept: solver unknown: {w})"))
            .unwrap_or_default();
        let shown_end = match vx.end {
            End::Inner => String::new(),
            ref e => format!("  <{}>", end(e)),
        };
        out.push_str(&format!(
            "{}v{v} {} ({}){label}{shown_end}{unknown}\n",
            "  ".repeat(depth),
            location(tree, vx),
            step(tree, vx),
        ));
        for c in vx.children.iter().rev() {
            stack.push((*c, depth + 1));
        }
    }
    out
}

/// The tree as JSON.
pub fn json(tree: &Tree) -> Json {
    let kept = tree.condensed();
    let vertices: Vec<Json> = tree
        .vertices
        .iter()
        .enumerate()
        .map(|(i, v)| {
            json!({
                "id": i,
                "parent": v.parent,
                "function": tree.prog.funcs[v.state.func].name,
                "location": v.state.loc,
                "step": step(tree, v),
                "label": v.label.map(|l| tree.terms.show(l)),
                "end": end(&v.end),
                "unknown": v.unknown,
                "condensed": kept[i],
            })
        })
        .collect();
    json!({ "vertices": vertices })
}

/// Graphviz: one node per vertex, edges labelled.
pub fn dot(tree: &Tree) -> String {
    let mut out = String::from("digraph compact {\n  node [shape=box, fontsize=10];\n");
    for (i, v) in tree.vertices.iter().enumerate() {
        let style = if v.unknown.is_some() {
            ", style=dashed"
        } else {
            ""
        };
        out.push_str(&format!(
            "  v{i} [label=\"{}\\n{}\"{style}];\n",
            escape(&location(tree, v)),
            escape(&end(&v.end))
        ));
        if let Some(p) = v.parent {
            let label = v.label.map(|l| tree.terms.show(l)).unwrap_or_default();
            out.push_str(&format!("  v{p} -> v{i} [label=\"{}\"];\n", escape(&label)));
        }
    }
    out.push_str("}\n");
    out
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
