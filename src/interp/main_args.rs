//! Turning a witness into the values of `main`'s parameters.
//!
//! The spec makes a parameter of `main` an input array when the program
//! indexes it (`p[e]`), and a matrix when it indexes it twice. The witness
//! says the same thing with its shape (an integer, a list, a list of lists).
//! Types are not available here (the interpreter is below the type checker
//! in the layering, and must run ill-typed programs without panicking), so
//! how deeply a parameter is indexed is found by a small analysis of its own:
//! [`index_depths`]. It follows a variable through copies (`q = p`), calls
//! (`f(p)`), returns and partial indexing (`r = p[i]; r[j]`), which is what
//! the type checker's unification would also equate; it does not look through
//! pointers or records. It therefore never claims more depth than the types
//! would, so a witness rejected by it is really ill-shaped. A list given for a
//! parameter the analysis saw no indexing of is accepted: if the program then
//! uses it as an integer, the run reports a bad witness at that point.

use super::InputReads;
use super::RunError;
use super::value::{InputArray, Origin, Value};
use crate::syntax::ast::{Expr, ExprKind, Function, Program, StmtKind};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::ArgValue;

/// Depths beyond this are not tracked (they only arise from ill-typed
/// programs such as `x = x[0]`, whose constraints have no finite solution).
const MAX_DEPTH: i64 = 64;
/// Deepest witness list accepted (deeper ones are surely not meant).
const MAX_WITNESS_NESTING: usize = 1000;

/// A node of the analysis: a variable of a function, or its return value.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Node<'p> {
    Var(usize, &'p str),
    Ret(usize),
}

struct Analysis<'p> {
    fn_index: HashMap<&'p str, usize>,
    program: &'p Program,
    ids: HashMap<Node<'p>, usize>,
    /// `depth[a] >= depth[b] + w` for each `(a, b, w)`.
    edges: Vec<(usize, usize, i64)>,
    depth: Vec<i64>,
}

impl<'p> Analysis<'p> {
    fn node(&mut self, n: Node<'p>) -> usize {
        let next = self.ids.len();
        let id = *self.ids.entry(n).or_insert(next);
        if id == next {
            self.depth.push(0);
        }
        id
    }

    /// For `root[i1]…[ik]` (k >= 0) with root a variable or a call: the
    /// root's node and k.
    fn chain(&mut self, fi: usize, mut e: &'p Expr) -> Option<(usize, i64)> {
        let mut len = 0;
        while let ExprKind::Index(base, _) = &e.kind {
            len += 1;
            e = base;
        }
        let root = match &e.kind {
            ExprKind::Var(x) => Node::Var(fi, x),
            ExprKind::Call(g, _) => Node::Ret(*self.fn_index.get(g.name.as_str())?),
            _ => return None,
        };
        Some((self.node(root), len))
    }

    /// `a` indexed `ka` times has the same type as `b` indexed `kb` times.
    fn equate(&mut self, (a, ka): (usize, i64), (b, kb): (usize, i64)) {
        self.edges.push((a, b, ka - kb));
        self.edges.push((b, a, kb - ka));
    }

    fn observe(&mut self, (a, k): (usize, i64)) {
        self.depth[a] = self.depth[a].max(k.min(MAX_DEPTH));
    }

    fn function(&mut self, fi: usize, f: &'p Function) {
        let mut assigns = Vec::new();
        for s in &f.body {
            s.walk(&mut |s| {
                if let StmtKind::Assign { lhs, rhs } = &s.kind {
                    assigns.push((lhs, rhs));
                }
            });
        }
        for (lhs, rhs) in assigns {
            if let (Some(l), Some(r)) = (self.chain(fi, lhs), self.chain(fi, rhs)) {
                self.equate(l, r);
            }
        }
        if let Some(r) = self.chain(fi, &f.ret) {
            let ret = self.node(Node::Ret(fi));
            self.equate((ret, 0), r);
        }
        let mut exprs = Vec::new();
        f.walk_exprs(&mut |e| exprs.push(e));
        for e in exprs {
            match &e.kind {
                ExprKind::Index(..) => {
                    if let Some(c) = self.chain(fi, e) {
                        self.observe(c);
                    }
                }
                ExprKind::Call(g, args) => {
                    let program = self.program;
                    let Some(&gi) = self.fn_index.get(g.name.as_str()) else {
                        continue;
                    };
                    let callee = &program.functions[gi];
                    if callee.params.len() != args.len() {
                        continue;
                    }
                    for (p, a) in callee.params.iter().zip(args) {
                        if let Some(c) = self.chain(fi, a) {
                            let p = self.node(Node::Var(gi, &p.name));
                            self.equate((p, 0), c);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn solve(&mut self) {
        // Depths only grow and are capped, so this terminates.
        let mut changed = true;
        while changed {
            changed = false;
            for &(a, b, w) in &self.edges {
                let d = (self.depth[b] + w).min(MAX_DEPTH);
                if d > self.depth[a] {
                    self.depth[a] = d;
                    changed = true;
                }
            }
        }
    }
}

/// How many times each parameter of `main` is (at least) indexed.
pub(crate) fn index_depths<'p>(program: &'p Program, main: &'p Function) -> Vec<u32> {
    let mut fn_index = HashMap::new();
    for (i, f) in program.functions.iter().enumerate() {
        fn_index.entry(f.name.name.as_str()).or_insert(i);
    }
    let mut a = Analysis {
        fn_index,
        program,
        ids: HashMap::new(),
        edges: Vec::new(),
        depth: Vec::new(),
    };
    for (i, f) in program.functions.iter().enumerate() {
        a.function(i, f);
    }
    a.solve();
    let main_index = a.fn_index.get(main.name.name.as_str()).copied();
    main.params
        .iter()
        .map(|p| match main_index {
            Some(mi) => {
                let n = a.node(Node::Var(mi, &p.name));
                a.depth[n] as u32
            }
            None => 0,
        })
        .collect()
}

/// The nesting depth of a witness value.
#[derive(Clone, Copy)]
enum Shape {
    Exact(u32),
    /// An empty list (possibly inside lists): at least this deep.
    AtLeast(u32),
}

fn shape(v: &ArgValue, level: usize) -> Result<Shape, String> {
    if level > MAX_WITNESS_NESTING {
        return Err(format!(
            "a list is nested more than {MAX_WITNESS_NESTING} levels deep"
        ));
    }
    let xs = match v {
        ArgValue::Int(_) => return Ok(Shape::Exact(0)),
        ArgValue::List(xs) => xs,
    };
    let mut acc: Option<Shape> = None;
    for x in xs {
        let s = shape(x, level + 1)?;
        acc = Some(match (acc, s) {
            (None, s) => s,
            (Some(Shape::Exact(a)), Shape::Exact(b)) if a == b => Shape::Exact(a),
            (Some(Shape::Exact(a)), Shape::AtLeast(b))
            | (Some(Shape::AtLeast(b)), Shape::Exact(a))
                if a >= b =>
            {
                Shape::Exact(a)
            }
            (Some(Shape::AtLeast(a)), Shape::AtLeast(b)) => Shape::AtLeast(a.max(b)),
            _ => {
                return Err(
                    "the elements of a list must be all integers or all lists of the same depth"
                        .to_string(),
                );
            }
        });
    }
    Ok(match acc {
        None => Shape::AtLeast(1),
        Some(Shape::Exact(d)) => Shape::Exact(d + 1),
        Some(Shape::AtLeast(d)) => Shape::AtLeast(d + 1),
    })
}

/// The value of a witness argument; `origin`: where it sits in the
/// witness, when the run records the cells it reads.
fn convert(v: &ArgValue, dims: u32, origin: Option<Origin>) -> Value {
    match v {
        ArgValue::Int(n) => Value::Int(n.clone()),
        ArgValue::List(xs) => Value::Input(InputArray::new(
            (xs.iter().enumerate())
                .map(|(i, x)| {
                    // Only rows need their own origin; an integer's is its
                    // array's, with its index.
                    let row = matches!(x, ArgValue::List(_));
                    let child = origin.as_ref().filter(|_| row).map(|o| o.child(i));
                    convert(x, dims.saturating_sub(1), child)
                })
                .collect(),
            dims,
            origin,
        )),
    }
}

fn show(v: &ArgValue) -> String {
    match v {
        ArgValue::Int(n) => n.to_string(),
        ArgValue::List(xs) => {
            let inner: Vec<String> = xs.iter().take(5).map(show).collect();
            let more = if xs.len() > 5 { ", …" } else { "" };
            format!("[{}{more}]", inner.join(", "))
        }
    }
}

/// The values of `main`'s parameters, in order, from the witness; with
/// `reads`, its input arrays record the cells the run reads there.
pub(crate) fn main_args(
    program: &Program,
    main: &Function,
    args: &[(String, ArgValue)],
    reads: Option<&Rc<RefCell<InputReads>>>,
) -> Result<Vec<Value>, RunError> {
    main_args_at(main, args, reads, &index_depths(program, main))
}

/// [`main_args`] with the depths of main's parameters known
/// ([`index_depths`]).
pub(crate) fn main_args_at(
    main: &Function,
    args: &[(String, ArgValue)],
    reads: Option<&Rc<RefCell<InputReads>>>,
    depths: &[u32],
) -> Result<Vec<Value>, RunError> {
    let bad = |m: String| Err(RunError::BadWitness(m));
    let params: Vec<&str> = main.params.iter().map(|p| p.name.as_str()).collect();
    let mut given: HashMap<&str, &ArgValue> = HashMap::new();
    for (name, v) in args {
        if !params.contains(&name.as_str()) {
            let list = if params.is_empty() {
                "main has no parameters".to_string()
            } else {
                format!("the parameters of main are: {}", params.join(", "))
            };
            return bad(format!("`{name}` is not a parameter of main ({list})"));
        }
        if given.insert(name, v).is_some() {
            return bad(format!("parameter `{name}` is given twice"));
        }
    }
    let mut values = Vec::with_capacity(params.len());
    for (position, (p, &depth)) in params.iter().zip(depths).enumerate() {
        let Some(v) = given.get(p) else {
            return bad(format!("no value given for parameter `{p}` of main"));
        };
        let dims = match shape(v, 0) {
            Err(m) => return bad(format!("parameter `{p}`: {m}")),
            Ok(Shape::Exact(0)) if depth > 0 => {
                return bad(format!(
                    "parameter `{p}` of main is an input array (the program indexes it), \
                     but the witness gives the integer {}: give a list",
                    show(v)
                ));
            }
            Ok(Shape::Exact(0)) => 0,
            Ok(Shape::Exact(d)) if d < depth => {
                return bad(format!(
                    "parameter `{p}` of main is indexed {depth} times (an array of arrays), \
                     but the witness gives {}, which is only {d} deep",
                    show(v)
                ));
            }
            Ok(Shape::Exact(d) | Shape::AtLeast(d)) => d.max(depth),
        };
        let origin = reads.map(|r| Origin::new(r.clone(), position));
        values.push(convert(v, dims, origin));
    }
    Ok(values)
}
