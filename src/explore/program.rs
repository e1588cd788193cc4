//! The program as the executor walks it: one flowgraph per function (not
//! inlined: calls push frames), with what the search needs precomputed.

use crate::db::{self, SourceFile, Target};
use crate::ir::{Body, EdgeId, NodeId, NodeKind, TargetId};
use crate::syntax::ast;
use rustc_hash::FxHashMap as HashMap;

pub(crate) struct Explored {
    pub bodies: Vec<Body>,
    pub by_name: HashMap<String, usize>,
    pub main: usize,
    /// Out-edges of each vertex, per function.
    pub succ: Vec<Vec<Vec<EdgeId>>>,
    /// Vertices with two or more in-edges (where paths meet), per function.
    pub joins: Vec<Vec<bool>>,
    /// Edges that leave a loop when its condition fails, per function.
    pub loop_exits: Vec<Vec<bool>>,
    /// The file's targets, by function and id.
    pub targets: Vec<HashMap<TargetId, Target>>,
    /// The parsed program and its text, for replays.
    pub ast: ast::Program,
    pub source: String,
    pub lines: crate::syntax::LineIndex,
    /// Where each function starts in the file (spans are function-relative).
    pub offsets: Vec<u32>,
}

impl Explored {
    /// The program of a file that parsed and type-checked.
    pub(crate) fn new(db: &db::Database, file: SourceFile) -> Result<Explored, String> {
        let mut bodies = Vec::new();
        let mut offsets = Vec::new();
        for f in db::functions(db, file) {
            bodies.push(db::function_body(db, *f).clone());
            offsets.push(f.offset(db));
        }
        let by_name: HashMap<String, usize> = bodies
            .iter()
            .enumerate()
            .map(|(i, b)| (b.name.clone(), i))
            .collect();
        let main = *by_name.get("main").ok_or("the program has no `main`")?;
        let mut targets: Vec<HashMap<TargetId, Target>> = vec![HashMap::default(); bodies.len()];
        for t in db::targets(db, file) {
            targets[by_name[&t.function]].insert(t.id, t);
        }
        Ok(Explored {
            succ: bodies.iter().map(|b| b.successors()).collect(),
            joins: bodies.iter().map(joins).collect(),
            loop_exits: bodies.iter().map(Body::exit_edge_mask).collect(),
            targets,
            by_name,
            main,
            ast: db::parse(db, file).program.clone(),
            source: file.text(db).clone(),
            lines: crate::syntax::LineIndex::new(file.text(db)),
            bodies,
            offsets,
        })
    }

    pub(crate) fn is_error(&self, func: usize, node: NodeId) -> Option<TargetId> {
        match self.bodies[func].node_kinds[node as usize] {
            NodeKind::Error(t) => Some(t),
            _ => None,
        }
    }

    /// The line and column of a function-relative span's start.
    pub(crate) fn line_col(&self, func: usize, span: crate::syntax::Span) -> (u32, u32) {
        let at = span.start + self.offsets.get(func).copied().unwrap_or(0);
        self.lines.line_col(&self.source, at)
    }

    /// Number of edges over all functions (the statement-coverage total).
    pub(crate) fn edge_count(&self) -> usize {
        self.bodies.iter().map(|b| b.edges.len()).sum()
    }
}

fn joins(b: &Body) -> Vec<bool> {
    let mut indegree = vec![0u32; b.node_count as usize];
    for e in &b.edges {
        indegree[e.to as usize] += 1;
    }
    indegree.into_iter().map(|d| d >= 2).collect()
}
