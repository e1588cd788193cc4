//! Human-readable and Graphviz renderings of a flowgraph.

use super::*;
use std::fmt::Write;

/// How many backbones `to_text` lists before it only counts.
const LISTED_BACKBONES: usize = 8;

/// Writes `name` in the vertex/edge notation used by `apc cfg`.
pub fn expr(b: &Body, e: &Expr) -> String {
    let sub = |e: &Expr| {
        let s = expr(b, e);
        if matches!(e, Expr::Binary(..) | Expr::Cmp(..) | Expr::Unary(..)) {
            format!("({s})")
        } else {
            s
        }
    };
    match e {
        Expr::Int(n) => n.to_string(),
        Expr::Null => "null".into(),
        Expr::Var(v) => b.var(*v).name.clone(),
        Expr::Unary(UnOp::Neg, x) => format!("-{}", sub(x)),
        Expr::Unary(UnOp::Not, x) => format!("!{}", sub(x)),
        Expr::Binary(op, x, y) => {
            let o = match op {
                BinOp::Add => "+",
                BinOp::Sub => "-",
                BinOp::Mul => "*",
                BinOp::Div => "/",
            };
            format!("{} {o} {}", sub(x), sub(y))
        }
        Expr::Cmp(op, x, y) => format!("{} {} {}", sub(x), op.symbol(), sub(y)),
        Expr::Load(p) => format!("*{}", sub(p)),
        Expr::Index(a, i) => format!("{}[{}]", sub(a), expr(b, i)),
        Expr::Field(r, f) => format!("{}.{f}", sub(r)),
        Expr::AddrOf(v) => format!("&{}", b.var(*v).name),
        Expr::Array(xs) => format!(
            "[{}]",
            xs.iter().map(|x| expr(b, x)).collect::<Vec<_>>().join(", ")
        ),
        Expr::Record(fs) => {
            format!(
                "{{{}}}",
                fs.iter()
                    .map(|(f, x)| format!("{f}: {}", expr(b, x)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }
}

pub fn place(b: &Body, p: &Place) -> String {
    match p {
        Place::Var(v) => b.var(*v).name.clone(),
        Place::Deref(e) => format!("*{}", expr(b, e)),
        Place::Index(p, i) => format!("{}[{}]", place(b, p), expr(b, i)),
        Place::Field(p, f) => format!("{}.{f}", place(b, p)),
    }
}

pub fn cond(b: &Body, c: &Cond) -> String {
    match c {
        Cond::Cmp(op, x, y) => format!("{} {} {}", expr(b, x), op.symbol(), expr(b, y)),
        Cond::Initialized { place: p, positive } => {
            format!(
                "{}initialized({})",
                if *positive { "" } else { "!" },
                place(b, p)
            )
        }
        Cond::InBounds {
            array,
            index,
            positive,
        } => {
            format!(
                "{}in_bounds({}, {})",
                if *positive { "" } else { "!" },
                expr(b, array),
                expr(b, index)
            )
        }
    }
}

pub fn instr(b: &Body, i: &Instr) -> String {
    match i {
        Instr::Assign(p, e) => format!("{} := {}", place(b, p), expr(b, e)),
        Instr::Alloc(v, e) => format!("{} := alloc {}", b.var(*v).name, expr(b, e)),
        Instr::Call { dst, func, args } => {
            format!(
                "{} := {func}({})",
                b.var(*dst).name,
                args.iter()
                    .map(|a| expr(b, a))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        Instr::Output(e) => format!("output {}", expr(b, e)),
        Instr::Assume(c) => format!("assume({})", cond(b, c)),
        Instr::Assert(c, t) => format!("assert({}) [T{t}]", cond(b, c)),
        Instr::Skip => "skip".into(),
        Instr::Enter(vs) => {
            let names: Vec<&str> = vs.iter().map(|v| b.var(*v).name.as_str()).collect();
            format!("enter {}", names.join(", "))
        }
    }
}

fn node_label(b: &Body, v: NodeId) -> String {
    match b.node_kinds[v as usize] {
        NodeKind::Plain => format!("{v}"),
        NodeKind::Entry => format!("{v} (entry)"),
        NodeKind::Exit => format!("{v} (exit)"),
        NodeKind::Error(t) => format!("{v} (error T{t})"),
        NodeKind::LoopHeader(l) => format!("{v} (loop L{l})"),
    }
}

/// The text form printed by `apc cfg`. `loc` turns a function-relative span
/// into "line:col".
pub fn to_text(b: &Body, loc: &dyn Fn(Span) -> String) -> String {
    let mut out = String::new();
    let params: Vec<String> = b.vars[..b.params].iter().map(|v| v.name.clone()).collect();
    let _ = writeln!(out, "function {}({})", b.name, params.join(", "));
    let vars: Vec<String> = b
        .vars
        .iter()
        .map(|v| {
            format!(
                "{}: {}{}",
                v.name,
                v.ty,
                if v.input_array { " (input array)" } else { "" }
            )
        })
        .collect();
    let _ = writeln!(out, "  vars: {}", vars.join(", "));
    let _ = writeln!(
        out,
        "  vertices: {}, edges: {}, entry {}, exit {}",
        b.node_count,
        b.edges.len(),
        b.entry,
        b.exit
    );
    let _ = writeln!(out, "  edges:");
    for (i, e) in b.edges.iter().enumerate() {
        let _ = writeln!(
            out,
            "    e{i}: {} -> {}  {}  @{}",
            node_label(b, e.from),
            node_label(b, e.to),
            instr(b, &e.instr),
            loc(e.span)
        );
    }
    let _ = writeln!(out, "  targets:");
    if b.targets.is_empty() {
        let _ = writeln!(out, "    (none)");
    }
    for t in &b.targets {
        let n = backbones(b, t.node, 0).count;
        let _ = writeln!(
            out,
            "    T{}: {} at {} -> vertex {} ({} backbones)",
            t.id,
            t.kind,
            loc(t.span),
            t.node,
            n
        );
    }
    let _ = writeln!(out, "  loops:");
    if b.loops.is_empty() {
        let _ = writeln!(out, "    (none)");
    }
    for l in &b.loops {
        let bb = loop_backbones(b, l, LISTED_BACKBONES);
        let parent = l
            .parent
            .map(|p| format!("L{p}"))
            .unwrap_or_else(|| "none".into());
        let nodes: Vec<String> = l.nodes.iter().map(|v| v.to_string()).collect();
        let _ = writeln!(
            out,
            "    L{}: while at {}, header {}, parent {}, vertices {{{}}}, {} body backbone(s)",
            l.id,
            loc(l.span),
            l.header,
            parent,
            nodes.join(", "),
            bb.count
        );
        for p in &bb.paths {
            let _ = writeln!(out, "      {}", path_text(b, p));
        }
    }
    let bb = backbones(b, b.exit, LISTED_BACKBONES);
    let _ = writeln!(out, "  backbones entry -> exit: {}", bb.count);
    for p in &bb.paths {
        let _ = writeln!(out, "    {}", path_text(b, p));
    }
    if bb.count > bb.paths.len() as u128 {
        let _ = writeln!(out, "    … {} more", bb.count - bb.paths.len() as u128);
    }
    out
}

fn path_text(b: &Body, p: &[EdgeId]) -> String {
    let mut s = String::new();
    if let Some(&first) = p.first() {
        s.push_str(&b.edges[first as usize].from.to_string());
    }
    for &e in p {
        let _ = write!(s, " -> {}", b.edges[e as usize].to);
    }
    s
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Graphviz for `apc cfg --dot`: one cluster per function.
pub fn to_dot(bodies: &[&Body], loc: &dyn Fn(&Body, Span) -> String) -> String {
    to_dot_with(bodies, loc, &|_, _| None)
}

/// A target's mark in a drawing: the Graphviz attributes of its error
/// vertex, the colour of the edges into it, and a word under its label
/// (`reachable`, …).
pub struct TargetMark {
    pub vertex: &'static str,
    pub edges: &'static str,
    pub word: String,
}

/// [`to_dot`], each target's error vertex and the edges into it marked as
/// `mark` says (`apc cfg --dot --verdicts`).
pub fn to_dot_with(
    bodies: &[&Body],
    loc: &dyn Fn(&Body, Span) -> String,
    mark: &dyn Fn(&Body, TargetId) -> Option<TargetMark>,
) -> String {
    let mut out = String::from(
        "digraph cfg {\n  node [shape=circle, fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"monospace\", fontsize=9];\n",
    );
    for (fi, b) in bodies.iter().enumerate() {
        let _ = writeln!(
            out,
            "  subgraph cluster_{fi} {{\n    label=\"{}\";",
            dot_escape(&b.name)
        );
        for v in 0..b.node_count {
            let (shape, extra, label) = match b.node_kinds[v as usize] {
                NodeKind::Plain => ("circle", "", v.to_string()),
                NodeKind::Entry => ("doublecircle", "", format!("{v}\\nentry")),
                NodeKind::Exit => ("doublecircle", "", format!("{v}\\nexit")),
                NodeKind::Error(t) => {
                    let tg = &b.targets[t as usize];
                    let label = format!("T{t} {}\\n{}", tg.kind, loc(b, tg.span));
                    match mark(b, t) {
                        Some(m) => (
                            "box",
                            m.vertex,
                            format!("{label}\\n{}", dot_escape(&m.word)),
                        ),
                        None => ("box", ", color=red, fontcolor=red", label),
                    }
                }
                NodeKind::LoopHeader(l) => ("diamond", ", color=blue", format!("{v}\\nL{l}")),
            };
            let _ = writeln!(
                out,
                "    f{fi}_{v} [shape={shape}, label=\"{label}\"{extra}];"
            );
        }
        for (i, e) in b.edges.iter().enumerate() {
            let mut style = if b.is_back_edge(i as EdgeId) {
                ", style=dashed".to_string()
            } else {
                String::new()
            };
            if let NodeKind::Error(t) = b.node_kinds[e.to as usize]
                && let Some(m) = mark(b, t)
            {
                style += &format!(", color={}, penwidth=2", m.edges);
            }
            let _ = writeln!(
                out,
                "    f{fi}_{} -> f{fi}_{} [label=\"{}\"{style}];",
                e.from,
                e.to,
                dot_escape(&instr(b, &e.instr))
            );
        }
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}
