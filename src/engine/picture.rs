//! An execution tree as a picture (docs/explanations.md §4): the thesis's
//! executor (`apc explore --tree`) and compact symbolic execution (`apc
//! compact --tree dot`) both draw theirs as a [`Picture`], so that the two
//! read alike.
//!
//! A node is a stretch of one path; its out-edges are what became of it
//! where it ended: the branches taken (labelled with their conditions), a
//! loop left by its summary or template (one bold edge per way out), or a
//! merge into a join. Leaves say how a path ended. The picture knows
//! nothing of either engine.

use std::fmt::Write;

/// What a node stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mark {
    /// The start of the run.
    Start,
    /// A stretch of a path; `at` says where it forked (empty until then).
    Stretch,
    /// Two states merged into one.
    Join,
    /// The path ended normally, standing for this many paths (merged
    /// states stand for several).
    Exit { paths: u64 },
    /// An error reached, with the witness that replays to it.
    Error { target: String, witness: String },
    /// An error reached at a target found before (not reported again).
    ErrorAgain { target: String },
    /// Pruned by path subsumption: its annotation held.
    Subsumed,
    /// A branch the solver found infeasible.
    Infeasible,
    /// Dropped by guidance: it cannot reach the goal.
    OffCourse,
    /// The solver could not decide it, or a limit cut it: why.
    Undecided(String),
    /// Still waiting when the run stopped: why it stopped.
    NotRun(String),
    /// A loop that never ends from here.
    Endless,
}

/// How an edge was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// A branch (or the only way on).
    Branch,
    /// Past a loop at once, by its summary or template.
    Summary,
    /// Into a join.
    Merge,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub mark: Mark,
    /// Where a stretch ended in a fork (`line 7`), or a leaf's detail.
    pub at: String,
}

#[derive(Clone, Debug)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    pub label: String,
    pub way: Way,
}

/// Nodes and edges, node 0 the start.
#[derive(Clone, Debug)]
pub struct Picture {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    /// The most nodes drawn: past it the picture stops growing and says so.
    pub limit: usize,
    /// Whether the limit cut the picture.
    pub cut: bool,
    /// The title drawn above the tree.
    pub title: String,
}

impl Picture {
    pub fn new(title: &str, limit: usize) -> Picture {
        Picture {
            nodes: vec![Node {
                mark: Mark::Start,
                at: String::new(),
            }],
            edges: Vec::new(),
            limit: limit.max(1),
            cut: false,
            title: title.to_string(),
        }
    }

    /// A new node reached from `from` by `label`; `None` past the limit.
    pub fn child(&mut self, from: usize, mark: Mark, label: String, way: Way) -> Option<usize> {
        if self.nodes.len() >= self.limit {
            self.cut = true;
            return None;
        }
        self.nodes.push(Node {
            mark,
            at: String::new(),
        });
        let to = self.nodes.len() - 1;
        self.edges.push(Edge {
            from,
            to,
            label,
            way,
        });
        Some(to)
    }

    /// A join of the stretches at `a` and `b`; `None` past the limit.
    pub fn join(&mut self, a: usize, b: usize) -> Option<usize> {
        let j = self.child(a, Mark::Join, String::new(), Way::Merge)?;
        self.edges.push(Edge {
            from: b,
            to: j,
            label: String::new(),
            way: Way::Merge,
        });
        Some(j)
    }

    /// Adds a guard met along the stretch at `node` to the label of the
    /// edge into it.
    pub fn extend_label(&mut self, node: usize, guard: &str) {
        if guard.is_empty() {
            return;
        }
        if let Some(e) = self.edges.iter_mut().rev().find(|e| e.to == node) {
            if !e.label.is_empty() {
                e.label.push_str(" ∧ ");
            }
            e.label.push_str(guard);
        }
    }

    /// Says where the stretch at `node` forked.
    pub fn fork_at(&mut self, node: usize, at: String) {
        if let Some(n) = self.nodes.get_mut(node) {
            n.at = at;
        }
    }

    /// How many nodes bear a mark `f` accepts.
    pub fn count(&self, f: impl Fn(&Mark) -> bool) -> usize {
        self.nodes.iter().filter(|n| f(&n.mark)).count()
    }

    /// How many edges were taken `way`.
    pub fn ways(&self, way: Way) -> usize {
        self.edges.iter().filter(|e| e.way == way).count()
    }

    /// Graphviz, top to bottom.
    pub fn to_dot(&self) -> String {
        let mut out = String::from("digraph tree {\n");
        out.push_str("  node [fontname=\"Helvetica\", fontsize=10];\n");
        out.push_str("  edge [fontname=\"Helvetica\", fontsize=9];\n");
        let mut title = self.title.clone();
        if self.cut {
            let _ = write!(title, " (cut at {} nodes)", self.limit);
        }
        let _ = writeln!(out, "  label=\"{}\"; labelloc=t;", escape(&title));
        for (i, n) in self.nodes.iter().enumerate() {
            let _ = writeln!(out, "  n{i} [{}];", node_style(n));
        }
        for e in &self.edges {
            let _ = writeln!(
                out,
                "  n{} -> n{} [label=\"{}\"{}];",
                e.from,
                e.to,
                escape(&e.label),
                edge_style(e.way)
            );
        }
        out.push_str("}\n");
        out
    }
}

fn node_style(n: &Node) -> String {
    let (label, attrs) = match &n.mark {
        Mark::Start => (join_lines("start", &n.at), "shape=box, style=bold"),
        Mark::Stretch if n.at.is_empty() => (String::new(), "shape=point"),
        Mark::Stretch => (n.at.clone(), "shape=ellipse"),
        Mark::Join => (join_lines("join", &n.at), "shape=diamond"),
        Mark::Exit { paths: 1 } => ("exit".into(), "shape=box"),
        Mark::Exit { paths } => (format!("exit ({paths} paths)"), "shape=box"),
        Mark::Error { target, witness } => (
            format!("error: {target}\n{witness}"),
            "shape=box, style=filled, fillcolor=\"#f4cccc\"",
        ),
        Mark::ErrorAgain { target } => (
            format!("error: {target}\n(found before)"),
            "shape=box, style=filled, fillcolor=\"#f4cccc\"",
        ),
        Mark::Subsumed => ("subsumed".into(), "shape=box, style=dashed"),
        Mark::Infeasible => ("infeasible".into(), "shape=plaintext, fontcolor=gray40"),
        Mark::OffCourse => (
            "cannot reach the goal".into(),
            "shape=box, style=dashed, color=gray40",
        ),
        Mark::Undecided(why) => (
            format!("undecided: {why}"),
            "shape=box, style=filled, fillcolor=\"#fff2cc\"",
        ),
        Mark::NotRun(why) => (format!("not run ({why})"), "shape=box, style=dotted"),
        Mark::Endless => ("the loop never ends".into(), "shape=box, style=dashed"),
    };
    // A leaf's place, when the engine gives one, under what it says.
    let label = match n.mark {
        Mark::Start | Mark::Stretch | Mark::Join => label,
        _ => join_lines(&label, &n.at),
    };
    format!("label=\"{}\", {attrs}", escape(&label))
}

fn join_lines(a: &str, b: &str) -> String {
    if b.is_empty() {
        a.to_string()
    } else {
        format!("{a}\n{b}")
    }
}

fn edge_style(way: Way) -> &'static str {
    match way {
        Way::Branch => "",
        Way::Summary => ", style=bold, color=\"#1f5fa8\"",
        Way::Merge => ", style=dashed",
    }
}

/// A Graphviz string's text: quotes and backslashes escaped, lines kept.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
