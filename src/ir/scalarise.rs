//! Scalar replacement of local arrays (docs/necessary-conditions.md,
//! "Scalar cells"), as compilers replace aggregates by scalars: a local
//! array of integers whose cells nothing else can reach, and which is only
//! ever indexed by literals, becomes one integer variable per cell
//! (`sum[0]`). Loop summaries then treat its cells as the scalars they
//! are: `sum[0] = sum[0] + 1` in a loop is a progression, as `s = s + 1`.
//!
//! An array qualifies when every value it is ever assigned is a literal of
//! one length L ≥ 1 (new cells, the same number each time), whose elements
//! do not read it, and every other use is `a[k]` (read or written), a
//! bounds check `in_bounds(a, k)`, or whether `a` or `a[k]` holds a value,
//! with k a literal in 0..L. It is then never copied, passed, returned,
//! stored, output or compared, and no other variable shares its cells.
//!
//! The rewrite is exact: `a := [e₀, …]` becomes `a[0] := e₀; …` on a chain
//! of new vertices (the elements read no cell of `a`, so the order is
//! free); `a[k]` becomes the variable `a[k]`; a bounds check becomes a
//! comparison of literals that always holds (or never, negated); and `a`
//! holds a value exactly when its cell `a[0]` does. Vertices, edges and
//! targets keep their ids; the new vertices and edges come after them.

use super::VarKind;
use super::{Body, CmpOp, Cond, Edge, Expr, Instr, NodeId, NodeKind, Place, VarId, VarInfo};
use crate::types::Type;

/// `body` with its qualifying arrays replaced by their cells, or `None`
/// when no array qualifies.
pub fn scalarise(body: &Body) -> Option<Body> {
    let widths = widths(body);
    if widths.iter().all(Option::is_none) {
        return None;
    }
    let mut out = body.clone();
    let first_cell = add_cells(&mut out, &widths);
    let end = out.vars.len() as VarId;
    let cells = Cells { first_cell, end };
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

/// Per variable: the number of cells it is replaced by, or `None` when it
/// does not qualify.
fn widths(body: &Body) -> Vec<Option<usize>> {
    let mut uses = Uses {
        width: vec![None; body.vars.len()],
        spoiled: (body.vars.iter()).map(|v| !is_candidate(v)).collect(),
        indices: vec![Vec::new(); body.vars.len()],
    };
    for e in &body.edges {
        uses.instr(&e.instr);
    }
    (0..body.vars.len())
        .map(|v| {
            let width = uses.width[v].filter(|w| *w > 0 && !uses.spoiled[v])?;
            let in_range = uses.indices[v]
                .iter()
                .all(|k| (0..width as i64).contains(k));
            in_range.then_some(width)
        })
        .collect()
}

/// A local array of integers (not one of `main`'s inputs).
fn is_candidate(v: &VarInfo) -> bool {
    matches!(v.kind, VarKind::Local | VarKind::Temp)
        && !v.is_input()
        && matches!(&v.ty, Type::Array(inner) if inner.is_int())
}

/// What the instructions do with each variable.
struct Uses {
    /// The length of the literals it is assigned.
    width: Vec<Option<usize>>,
    /// Used otherwise than as the module says.
    spoiled: Vec<bool>,
    /// The literal indices it is used with.
    indices: Vec<Vec<i64>>,
}

impl Uses {
    fn instr(&mut self, instr: &Instr) {
        match instr {
            Instr::Assign(Place::Var(v), Expr::Array(xs)) => {
                let width = *self.width[*v as usize].get_or_insert(xs.len());
                if width != xs.len() || xs.iter().any(|x| reads_var(x, *v)) {
                    self.spoil(*v);
                }
                xs.iter().for_each(|x| self.expr(x));
            }
            Instr::Assign(place, e) => {
                self.place(place);
                self.expr(e);
            }
            Instr::Assume(c) | Instr::Assert(c, _) => self.cond(c),
            Instr::Call { dst, .. } | Instr::Alloc(dst, _) => {
                self.spoil(*dst);
                instr.walk_exprs(&mut |x| {
                    if let Expr::Var(v) = x {
                        self.spoil(*v);
                    }
                })
            }
            other => other.walk_exprs(&mut |x| {
                if let Expr::Var(v) = x {
                    self.spoil(*v);
                }
            }),
        }
    }

    fn cond(&mut self, c: &Cond) {
        match c {
            Cond::Cmp(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            Cond::Initialized { place, .. } => match place {
                Place::Var(_) => {}
                other => self.place(other),
            },
            Cond::InBounds { array, index, .. } => match array {
                Expr::Var(v) => self.indexed(*v, index),
                other => {
                    self.expr(other);
                    self.expr(index);
                }
            },
        }
    }

    fn place(&mut self, place: &Place) {
        match place {
            Place::Var(v) => self.spoil(*v),
            Place::Index(base, index) => match &**base {
                Place::Var(v) => self.indexed(*v, index),
                other => {
                    self.place(other);
                    self.expr(index);
                }
            },
            Place::Deref(e) => self.expr(e),
            Place::Field(base, _) => self.place(base),
        }
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Var(v) | Expr::AddrOf(v) => self.spoil(*v),
            Expr::Index(base, index) if matches!(**base, Expr::Var(_)) => {
                let Expr::Var(v) = **base else { return };
                self.indexed(v, index);
            }
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

    /// `v[index]`: a use of `v`'s cell when the index is a literal.
    fn indexed(&mut self, v: VarId, index: &Expr) {
        match index.constant().and_then(|k| i64::try_from(k).ok()) {
            Some(k) => self.indices[v as usize].push(k),
            None => {
                self.spoil(v);
                self.expr(index);
            }
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

/// Appends a variable per cell of each replaced array; the first cell's
/// id per variable.
fn add_cells(body: &mut Body, widths: &[Option<usize>]) -> Vec<Option<VarId>> {
    let mut first = vec![None; widths.len()];
    for (v, width) in widths.iter().enumerate() {
        let Some(width) = width else { continue };
        first[v] = Some(body.vars.len() as VarId);
        let (name, kind) = (body.vars[v].name.clone(), body.vars[v].kind);
        for k in 0..*width {
            body.vars.push(VarInfo {
                name: format!("{name}[{k}]"),
                kind,
                ty: Type::Int,
                input_array: false,
            });
        }
    }
    first
}

/// Where each replaced array's cells are.
struct Cells {
    first_cell: Vec<Option<VarId>>,
    /// One past the last cell.
    end: VarId,
}

impl Cells {
    /// The variable of `v`'s cell at the literal `index`, if `v` is
    /// replaced.
    fn cell(&self, v: VarId, index: &Expr) -> Option<VarId> {
        let first = self.first_cell[v as usize]?;
        let k = u32::try_from(index.constant()?).ok()?;
        Some(first + k)
    }

    /// The variables of `v`'s cells (none when it is not replaced).
    fn cells_of(&self, v: VarId) -> Vec<VarId> {
        let Some(first) = self.first_cell[v as usize] else {
            return vec![];
        };
        let next = (self.first_cell.iter().skip(v as usize + 1).flatten().next()).copied();
        (first..next.unwrap_or(self.end)).collect()
    }

    /// The edge rewritten: one edge, or a chain of them through new
    /// vertices for an array literal.
    fn rewrite(&self, e: Edge, body: &mut Body) -> Vec<Edge> {
        let instr = match e.instr {
            Instr::Assign(Place::Var(v), Expr::Array(xs))
                if self.first_cell[v as usize].is_some() =>
            {
                return self.literal_chain(v, xs, e.from, e.to, e.span, body);
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
        xs: Vec<Expr>,
        from: NodeId,
        to: NodeId,
        span: crate::syntax::Span,
        body: &mut Body,
    ) -> Vec<Edge> {
        let first = self.first_cell[v as usize].expect("a replaced array");
        let last = xs.len() - 1;
        let mut at = from;
        let mut chain = Vec::new();
        for (k, x) in xs.into_iter().enumerate() {
            let next = if k == last { to } else { new_vertex(body) };
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
            Cond::Initialized { place, positive } => {
                let place = match place {
                    Place::Var(v) => match self.cell(v, &Expr::Int(0.into())) {
                        Some(cell) => Place::Var(cell),
                        None => Place::Var(v),
                    },
                    other => self.place(other),
                };
                Cond::Initialized { place, positive }
            }
            Cond::InBounds {
                array: Expr::Var(v),
                index,
                positive,
            } if self.cell(v, &index).is_some() => {
                // The index is in range by the module's condition.
                let op = if positive { CmpOp::Eq } else { CmpOp::Ne };
                Cond::Cmp(op, Expr::Int(0.into()), Expr::Int(0.into()))
            }
            Cond::InBounds {
                array,
                index,
                positive,
            } => Cond::InBounds {
                array: self.expr(array),
                index: self.expr(index),
                positive,
            },
        }
    }

    fn place(&self, place: Place) -> Place {
        match place {
            Place::Index(base, index) => match *base {
                Place::Var(v) if self.cell(v, &index).is_some() => {
                    Place::Var(self.cell(v, &index).expect("checked"))
                }
                base => Place::Index(Box::new(self.place(base)), self.expr(index)),
            },
            Place::Deref(e) => Place::Deref(self.expr(e)),
            Place::Field(base, f) => Place::Field(Box::new(self.place(*base)), f),
            Place::Var(v) => Place::Var(v),
        }
    }

    fn expr(&self, e: Expr) -> Expr {
        let re = |x: Box<Expr>| Box::new(self.expr(*x));
        match e {
            Expr::Index(base, index) => match *base {
                Expr::Var(v) if self.cell(v, &index).is_some() => {
                    Expr::Var(self.cell(v, &index).expect("checked"))
                }
                base => Expr::Index(Box::new(self.expr(base)), re(index)),
            },
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

fn new_vertex(body: &mut Body) -> NodeId {
    let id = body.node_count;
    body.node_count += 1;
    body.node_kinds.push(NodeKind::Plain);
    id
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
