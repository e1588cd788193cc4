//! Scalar replacement of local arrays (docs/necessary-conditions.md,
//! "Scalar cells"), as compilers replace aggregates by scalars: a local
//! array of integers (of any depth) whose cells nothing else can reach, and
//! which is only ever indexed by literals, becomes one integer variable per
//! cell (`sum[0]`, `m[1][0]`). Loop summaries then treat its cells as the
//! scalars they are: `sum[0] = sum[0] + 1` in a loop is a progression, as
//! `s = s + 1`.
//!
//! An array qualifies when every value it is ever assigned is a
//! rectangular literal of one shape (new cells, the same number each
//! time), whose elements do not read it, and every other use is a cell
//! `a[k]…` (read or written, indexed down to its integers), a bounds check
//! `in_bounds(a[k]…, j)`, or whether `a`, a row or a cell holds a value,
//! with every index a literal within the shape. It is then never copied,
//! passed, returned, stored, output or compared, nor a row of it taken, and
//! no other variable shares its cells.
//!
//! The rewrite is exact: `a := [e₀, …]` becomes `a[0] := e₀; …` on a chain
//! of new vertices (the elements read no cell of `a`, so the order is
//! free); a cell becomes its variable; a bounds check becomes a comparison
//! of literals that always holds (or never, negated); and `a` or a row
//! holds a value exactly when its first cell does. Vertices, edges and
//! targets keep their ids; the new vertices and edges come after them.

use super::VarKind;
use super::{Body, CmpOp, Cond, Edge, Expr, Instr, NodeId, NodeKind, Place, VarId, VarInfo};
use crate::types::Type;

/// `body` with its qualifying arrays replaced by their cells, or `None`
/// when no array qualifies.
pub fn scalarise(body: &Body) -> Option<Body> {
    let shapes = shapes(body);
    if shapes.iter().all(Option::is_none) {
        return None;
    }
    let mut out = body.clone();
    let cells = Cells::add(&mut out, shapes);
    let old_edges = std::mem::take(&mut out.edges);
    let mut appended = Vec::new();
    for e in old_edges {
        let ends = (e.from, e.to);
        let mut chain = cells.rewrite(e, &mut out);
        out.edges.push(chain.remove(0));
        appended.extend(chain.into_iter().map(|c| (ends, c)));
    }
    for (ends, e) in appended {
        add_to_loops_of(&mut out, ends, e.from);
        out.edges.push(e);
    }
    Some(out)
}

/// Per variable: the lengths of its levels when it is replaced.
fn shapes(body: &Body) -> Vec<Option<Vec<usize>>> {
    let n = body.vars.len();
    let depth: Vec<Option<usize>> = body.vars.iter().map(depth_of).collect();
    let mut uses = Uses {
        shape: vec![None; n],
        spoiled: depth.iter().map(Option::is_none).collect(),
        depth: depth.iter().map(|d| d.unwrap_or(0)).collect(),
        paths: vec![Vec::new(); n],
    };
    for e in &body.edges {
        uses.instr(&e.instr);
    }
    (0..n)
        .map(|v| {
            let shape = uses.shape[v].take().filter(|s| !s.contains(&0))?;
            let fits =
                |p: &Vec<i64>| (p.iter().zip(&shape)).all(|(k, l)| (0..*l as i64).contains(k));
            (!uses.spoiled[v] && uses.paths[v].iter().all(fits)).then_some(shape)
        })
        .collect()
}

/// The depth of a local array of integers (not one of `main`'s inputs).
fn depth_of(v: &VarInfo) -> Option<usize> {
    let local = matches!(v.kind, VarKind::Local | VarKind::Temp) && !v.is_input();
    let depth = v.ty.array_depth().filter(|d| *d > 0)?;
    local.then_some(depth as usize)
}

/// The shape of a rectangular literal of integers `depth` levels deep.
fn literal_shape(e: &Expr, depth: usize) -> Option<Vec<usize>> {
    if depth == 0 {
        return (!matches!(e, Expr::Array(_))).then(Vec::new);
    }
    let Expr::Array(xs) = e else { return None };
    let inner = match xs.first() {
        Some(x) => literal_shape(x, depth - 1)?,
        None => return Some(vec![0]),
    };
    let same = xs[1..]
        .iter()
        .all(|x| literal_shape(x, depth - 1).as_ref() == Some(&inner));
    same.then(|| std::iter::once(xs.len()).chain(inner).collect())
}

/// `v[k₀]…[kⱼ]`: the variable and the literal indices, outermost first.
fn expr_path(e: &Expr) -> Option<(VarId, Vec<i64>)> {
    match e {
        Expr::Var(v) => Some((*v, vec![])),
        Expr::Index(base, index) => {
            let (v, mut path) = expr_path(base)?;
            path.push(literal(index)?);
            Some((v, path))
        }
        _ => None,
    }
}

/// [`expr_path`] for a place.
fn place_path(p: &Place) -> Option<(VarId, Vec<i64>)> {
    expr_path(&p.value())
}

fn literal(index: &Expr) -> Option<i64> {
    i64::try_from(index.constant()?).ok()
}

/// What the instructions do with each variable.
struct Uses {
    /// The shape of the literals it is assigned.
    shape: Vec<Option<Vec<usize>>>,
    /// Used otherwise than as the module says.
    spoiled: Vec<bool>,
    /// Its levels of arrays (0 for the others).
    depth: Vec<usize>,
    /// The literal index paths it is used with.
    paths: Vec<Vec<Vec<i64>>>,
}

impl Uses {
    fn instr(&mut self, instr: &Instr) {
        match instr {
            Instr::Assign(Place::Var(v), e @ Expr::Array(_)) if !self.spoiled[*v as usize] => {
                self.literal(*v, e);
            }
            Instr::Assign(place, e) => {
                self.place(place, true);
                self.expr(e);
            }
            Instr::Assume(c) | Instr::Assert(c, _) => self.cond(c),
            Instr::Call { dst, .. } | Instr::Alloc(dst, _) => {
                self.spoil(*dst);
                self.every_var(instr);
            }
            other => self.every_var(other),
        }
    }

    /// `v := e`, a literal: of one shape each time, not reading `v`.
    fn literal(&mut self, v: VarId, e: &Expr) {
        let shape = literal_shape(e, self.depth[v as usize]);
        let known = self.shape[v as usize].get_or_insert_with(|| shape.clone().unwrap_or_default());
        if shape.as_ref() != Some(known) || reads_var(e, v) {
            self.spoil(v);
        }
        self.expr(e);
    }

    fn every_var(&mut self, instr: &Instr) {
        instr.walk_exprs(&mut |x| {
            if let Expr::Var(v) | Expr::AddrOf(v) = x {
                self.spoil(*v);
            }
        });
    }

    fn cond(&mut self, c: &Cond) {
        match c {
            Cond::Cmp(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            Cond::Initialized { place, .. } => self.place(place, false),
            Cond::InBounds { array, index, .. } => match (expr_path(array), literal(index)) {
                (Some((v, mut path)), Some(k)) => {
                    path.push(k);
                    self.paths[v as usize].push(path);
                }
                _ => {
                    self.expr(array);
                    self.expr(index);
                }
            },
        }
    }

    /// A place written (`whole`: down to an integer) or asked whether it
    /// holds a value (any prefix).
    fn place(&mut self, place: &Place, whole: bool) {
        match place_path(place) {
            Some((v, path)) if !whole || path.len() == self.depth[v as usize] => {
                self.paths[v as usize].push(path);
            }
            _ => {
                if let Some(v) = place.root_var() {
                    self.spoil(v);
                }
                place.walk_exprs(&mut |x| self.expr(x));
            }
        }
    }

    /// An expression read: a cell of an array down to its integers is a
    /// use of that cell; any other mention of an array spoils it.
    fn expr(&mut self, e: &Expr) {
        if let Some((v, path)) = expr_path(e)
            && !path.is_empty()
            && path.len() == self.depth[v as usize]
        {
            self.paths[v as usize].push(path);
            return;
        }
        match e {
            Expr::Var(v) | Expr::AddrOf(v) => self.spoil(*v),
            Expr::Int(_) | Expr::Null => {}
            Expr::Unary(_, a) | Expr::Load(a) | Expr::Field(a, _) => self.expr(a),
            Expr::Binary(_, a, b) | Expr::Cmp(_, a, b) | Expr::Index(a, b) => {
                self.expr(a);
                self.expr(b);
            }
            Expr::Array(xs) => xs.iter().for_each(|x| self.expr(x)),
            Expr::Record(fs) => fs.iter().for_each(|(_, x)| self.expr(x)),
        }
    }

    fn spoil(&mut self, v: VarId) {
        self.spoiled[v as usize] = true;
    }
}

/// Whether `e` reads `v` at all.
fn reads_var(e: &Expr, v: VarId) -> bool {
    let mut reads = false;
    e.walk(&mut |x| reads |= matches!(x, Expr::Var(u) | Expr::AddrOf(u) if *u == v));
    reads
}

/// Where each replaced array's cells are.
struct Cells {
    /// Per variable: its shape and its first cell, if it is replaced.
    of: Vec<Option<(Vec<usize>, VarId)>>,
}

impl Cells {
    /// Appends a variable per cell of each replaced array, in row-major
    /// order.
    fn add(body: &mut Body, shapes: Vec<Option<Vec<usize>>>) -> Cells {
        let mut of = Vec::with_capacity(shapes.len());
        for (v, shape) in shapes.into_iter().enumerate() {
            let Some(shape) = shape else {
                of.push(None);
                continue;
            };
            let first = body.vars.len() as VarId;
            let (name, kind) = (body.vars[v].name.clone(), body.vars[v].kind);
            for path in all_paths(&shape) {
                let rows: String = path.iter().map(|k| format!("[{k}]")).collect();
                body.vars.push(VarInfo {
                    name: format!("{name}{rows}"),
                    kind,
                    ty: Type::Int,
                    input_array: false,
                });
            }
            of.push(Some((shape, first)));
        }
        Cells { of }
    }

    /// The variable of `v`'s cell at `path`, or of the first cell below
    /// it for a shorter path; `None` when `v` is not replaced.
    fn cell(&self, v: VarId, path: &[i64]) -> Option<VarId> {
        let (shape, first) = self.of[v as usize].as_ref()?;
        let mut offset = 0;
        for (level, length) in shape.iter().enumerate() {
            let k = path.get(level).copied().unwrap_or(0);
            offset = offset * *length as i64 + k;
        }
        Some(first + offset as VarId)
    }

    /// All of `v`'s cells (none when it is not replaced).
    fn cells_of(&self, v: VarId) -> Vec<VarId> {
        let Some((shape, first)) = &self.of[v as usize] else {
            return vec![];
        };
        let count: usize = shape.iter().product();
        (*first..*first + count as VarId).collect()
    }

    /// The edge rewritten: one edge, or a chain of them through new
    /// vertices for an array literal.
    fn rewrite(&self, e: Edge, body: &mut Body) -> Vec<Edge> {
        let instr = match e.instr {
            Instr::Assign(Place::Var(v), x) if self.of[v as usize].is_some() => {
                return self.literal_chain(v, x, (e.from, e.to, e.span), body);
            }
            Instr::Assign(place, x) => Instr::Assign(self.place(place), self.expr(x)),
            Instr::Assume(c) => Instr::Assume(self.cond(c)),
            Instr::Assert(c, t) => Instr::Assert(self.cond(c), t),
            // The cells are the array's: fresh with it.
            Instr::Enter(vars) => Instr::Enter(
                (vars.into_iter())
                    .flat_map(|v| std::iter::once(v).chain(self.cells_of(v)))
                    .collect(),
            ),
            other => other,
        };
        vec![Edge { instr, ..e }]
    }

    /// `v := [x₀, …]` as `v[0] := x₀; …` from `from` to `to`.
    fn literal_chain(
        &self,
        v: VarId,
        literal: Expr,
        (from, to, span): (NodeId, NodeId, crate::syntax::Span),
        body: &mut Body,
    ) -> Vec<Edge> {
        let mut elements = Vec::new();
        flatten(literal, &mut elements);
        let first = self.cell(v, &[]).expect("a replaced array");
        let last = elements.len() - 1;
        let mut at = from;
        let mut chain = Vec::new();
        for (k, x) in elements.into_iter().enumerate() {
            let next = if k == last {
                to
            } else {
                body.add_vertex(NodeKind::Plain)
            };
            let instr = Instr::Assign(Place::Var(first + k as VarId), self.expr(x));
            chain.push(Edge {
                from: at,
                to: next,
                instr,
                span,
            });
            at = next;
        }
        chain
    }

    fn cond(&self, c: Cond) -> Cond {
        match c {
            Cond::Cmp(op, a, b) => Cond::Cmp(op, self.expr(a), self.expr(b)),
            Cond::Initialized { place, positive } => Cond::Initialized {
                place: self.place(place),
                positive,
            },
            Cond::InBounds {
                array,
                index,
                positive,
            } => match expr_path(&array) {
                // Within the shape, by the module's condition.
                Some((v, _)) if self.of[v as usize].is_some() => {
                    let op = if positive { CmpOp::Eq } else { CmpOp::Ne };
                    Cond::Cmp(op, Expr::Int(0.into()), Expr::Int(0.into()))
                }
                _ => Cond::InBounds {
                    array: self.expr(array),
                    index: self.expr(index),
                    positive,
                },
            },
        }
    }

    fn place(&self, place: Place) -> Place {
        if let Some((v, path)) = place_path(&place)
            && let Some(cell) = self.cell(v, &path)
        {
            return Place::Var(cell);
        }
        match place {
            Place::Index(base, index) => {
                Place::Index(Box::new(self.place(*base)), self.expr(index))
            }
            Place::Deref(e) => Place::Deref(self.expr(e)),
            Place::Field(base, f) => Place::Field(Box::new(self.place(*base)), f),
            Place::Var(v) => Place::Var(v),
        }
    }

    fn expr(&self, e: Expr) -> Expr {
        if let Some((v, path)) = expr_path(&e)
            && !path.is_empty()
            && let Some(cell) = self.cell(v, &path)
        {
            return Expr::Var(cell);
        }
        let re = |x: Box<Expr>| Box::new(self.expr(*x));
        match e {
            Expr::Index(base, index) => Expr::Index(re(base), re(index)),
            Expr::Unary(op, a) => Expr::Unary(op, re(a)),
            Expr::Binary(op, a, b) => Expr::Binary(op, re(a), re(b)),
            Expr::Cmp(op, a, b) => Expr::Cmp(op, re(a), re(b)),
            Expr::Load(a) => Expr::Load(re(a)),
            Expr::Field(a, f) => Expr::Field(re(a), f),
            Expr::Array(xs) => Expr::Array(xs.into_iter().map(|x| self.expr(x)).collect()),
            Expr::Record(fs) => {
                Expr::Record(fs.into_iter().map(|(f, x)| (f, self.expr(x))).collect())
            }
            leaf @ (Expr::Int(_) | Expr::Null | Expr::Var(_) | Expr::AddrOf(_)) => leaf,
        }
    }
}

/// Every index path of a shape, in row-major order.
fn all_paths(shape: &[usize]) -> Vec<Vec<usize>> {
    shape.iter().fold(vec![vec![]], |paths, length| {
        (paths.iter())
            .flat_map(|p| (0..*length).map(move |k| p.iter().copied().chain([k]).collect()))
            .collect()
    })
}

/// A rectangular literal's integers, in row-major order.
fn flatten(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Array(xs) => xs.into_iter().for_each(|x| flatten(x, out)),
        leaf => out.push(leaf),
    }
}

/// Puts the new vertex `from` of a chain that replaced the edge between
/// `ends` into the loops that hold that edge (both its ends).
fn add_to_loops_of(body: &mut Body, (start, end): (NodeId, NodeId), from: NodeId) {
    for l in &mut body.loops {
        let holds = |n: NodeId| l.nodes.binary_search(&n).is_ok();
        if holds(start) && holds(end) && !holds(from) {
            let at = l.nodes.binary_search(&from).unwrap_err();
            l.nodes.insert(at, from);
        }
    }
}
