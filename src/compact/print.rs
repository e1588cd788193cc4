//! The tree as text, JSON and Graphviz: each vertex with its function and
//! location, each edge with its label (a guard, or s.θ⟨t.φᵢ⟦κ⟧⟩ for an
//! instantiation), and a mark where the solver could not decide.

use super::run::{End, Step, Tree, Vertex};
use crate::engine::picture::{Mark, Picture, Way};
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

/// The tree as a picture, drawn as the executor's (`engine::picture`):
/// a node per stretch between forks (the figures' granularity), a
/// template's instantiation one bold edge, the guards met along a stretch
/// on the edge into it, and error leaves with what `error_leaf` says of
/// them (their witness, or why there is none).
pub fn picture(tree: &Tree, title: &str, error_leaf: &dyn Fn(usize) -> Mark) -> Picture {
    let mut p = Picture::new(title, tree.vertices.len() + 1);
    let Some(root) = tree.vertices.first() else {
        return p;
    };
    p.fork_at(0, location(tree, root));
    // Per vertex: the picture's node of its stretch.
    let mut node_of = vec![0usize; tree.vertices.len()];
    for (i, v) in tree.vertices.iter().enumerate().skip(1) {
        let parent = v.parent.expect("only the root has none");
        let label = v.label.map(|l| tree.terms.show(l)).unwrap_or_default();
        let summary = matches!(v.step, Step::Instantiate { .. } | Step::Return { .. });
        let forks = tree.vertices[parent].children.len() != 1;
        node_of[i] = if forks || summary || v.children.is_empty() {
            let (label, way) = match summary {
                true => (format!("{}: {label}", step(tree, v)), Way::Summary),
                false => (label, Way::Branch),
            };
            let mark = leaf_mark(tree, v, i, error_leaf);
            p.child(node_of[parent], mark, label, way)
                .expect("the limit allows every vertex")
        } else {
            let node = node_of[parent];
            p.extend_label(node, &label);
            node
        };
        p.fork_at(node_of[i], vertex_place(tree, v));
    }
    p
}

/// A vertex's mark: a stretch, or how its path ended.
fn leaf_mark(tree: &Tree, v: &Vertex, i: usize, error_leaf: &dyn Fn(usize) -> Mark) -> Mark {
    match &v.end {
        End::Inner => Mark::Stretch,
        End::Exit => Mark::Exit { paths: 1 },
        End::Error(_) => error_leaf(i),
        End::Stuck(why) => Mark::Undecided(why.clone()),
        End::Open => Mark::NotRun(match &tree.stopped {
            Some(why) => format!("stopped at the {why}"),
            None => "not expanded".into(),
        }),
    }
}

/// Where a vertex is, and whether the solver left its path undecided.
fn vertex_place(tree: &Tree, v: &Vertex) -> String {
    let mut at = location(tree, v);
    if let Some(why) = &v.unknown {
        at.push_str(&format!("\n(kept: solver unknown: {why})"));
    }
    at
}
