//! The program as the engine sees it (`docs/compositional-se.md` §11.1): one
//! flowgraph per function, each with its "globals" interface (the entry
//! symbols of its parameters and of the input position `$ic`) and its
//! uninterpreted symbols rc/rv; the static call graph, its callee-first
//! order, and what the engine cannot encode exactly (then it says so).

use crate::db::{self, SourceFile, Target};
use crate::ir::{
    Body, Cond, EdgeId, Expr, INPUT_COUNTER, INPUT_STREAM, Instr, NodeKind, Place, TargetId, VarId,
};
use crate::term::{Terms, Var, VarKind};
use rustc_hash::FxHashMap as HashMap;

/// One function with its symbols.
pub(crate) struct Function {
    pub body: Body,
    pub succ: Vec<Vec<EdgeId>>,
    /// m's entry symbols ς⁰: its parameters, then `$ic` (docs/compositional-se.md §11.1).
    pub entry: Vec<Var>,
    /// rc_m: 1 when m returns from the given globals, else 0.
    pub rc: Var,
    /// rv_{m,$ret} and rv_{m,$ic}: the result and the input position after.
    pub rv_ret: Var,
    pub rv_ic: Var,
    /// The file's targets of this function, by id.
    pub targets: HashMap<TargetId, Target>,
    /// Whether some instruction divides.
    pub divides: bool,
}

/// The program's functions reachable from `main`.
pub(crate) struct Subject {
    pub funcs: Vec<Function>,
    pub by_name: HashMap<String, usize>,
    pub main: usize,
    /// Callees before callers (the static call graph is acyclic).
    pub callee_first: Vec<usize>,
    /// `$in`, the input stream, one array symbol shared by all functions.
    pub stream: Var,
    /// main's integer parameters and input arrays, in order.
    pub main_inputs: Vec<MainInput>,
    pub ast: crate::syntax::ast::Program,
    pub source: String,
}

#[derive(Clone, Debug)]
pub(crate) struct MainInput {
    pub name: String,
    pub symbol: Var,
    /// An input array (1 dimension), else an integer.
    pub array: bool,
}

impl Subject {
    /// The functions of a file that parsed and type-checked, or why the
    /// engine cannot analyse it exactly (`unsupported: …`).
    pub(crate) fn new(
        db: &db::Database,
        file: SourceFile,
        terms: &mut Terms,
    ) -> Result<Subject, String> {
        let mut bodies = Vec::new();
        for f in db::functions(db, file) {
            bodies.push(db::function_body(db, *f).clone());
        }
        let all: HashMap<String, usize> = bodies
            .iter()
            .enumerate()
            .map(|(i, b)| (b.name.clone(), i))
            .collect();
        let main = *all.get("main").ok_or("the program has no `main`")?;
        let reachable = reachable_from(&bodies, &all, main);
        let callee_first = callee_first(&bodies, &all, &reachable)?;
        for &f in &reachable {
            supported(&bodies[f], f == main).map_err(|why| {
                format!(
                    "unsupported: {why} in `{}` (docs/compositional-se.md §11.1)",
                    bodies[f].name
                )
            })?;
        }
        let mut targets: Vec<HashMap<TargetId, Target>> = vec![HashMap::default(); bodies.len()];
        for t in db::targets(db, file) {
            targets[all[&t.function]].insert(t.id, t);
        }
        let stream = terms.symbol(VarKind::ArraySymbol(1), INPUT_STREAM);
        let main_inputs = main_inputs(&bodies[main], terms);
        // Keep only the reachable functions, renumbered.
        let index: HashMap<usize, usize> =
            reachable.iter().enumerate().map(|(i, f)| (*f, i)).collect();
        let funcs: Vec<Function> = reachable
            .iter()
            .map(|&f| function(bodies[f].clone(), std::mem::take(&mut targets[f]), terms))
            .collect();
        let by_name = funcs
            .iter()
            .enumerate()
            .map(|(i, f)| (f.body.name.clone(), i))
            .collect();
        Ok(Subject {
            main: index[&main],
            callee_first: callee_first.iter().map(|f| index[f]).collect(),
            funcs,
            by_name,
            stream,
            main_inputs,
            ast: db::parse(db, file).program.clone(),
            source: file.text(db).clone(),
        })
    }

    pub(crate) fn is_error(&self, f: usize, node: u32) -> Option<TargetId> {
        match self.funcs[f].body.node_kinds[node as usize] {
            NodeKind::Error(t) => Some(t),
            _ => None,
        }
    }

    pub(crate) fn divides(&self) -> bool {
        self.funcs.iter().any(|f| f.divides)
    }
}

fn function(body: Body, targets: HashMap<TargetId, Target>, terms: &mut Terms) -> Function {
    let name = body.name.clone();
    let mut entry: Vec<Var> = (0..body.params)
        .map(|p| terms.new_var(VarKind::Symbol, format!("{name}.{}₀", body.vars[p].name)))
        .collect();
    entry.push(terms.new_var(VarKind::Symbol, format!("{name}.$ic₀")));
    let arity = entry.len() as u8;
    let mut divides = false;
    for e in &body.edges {
        e.instr.walk_exprs(&mut |x| {
            divides |= matches!(x, Expr::Binary(crate::ir::BinOp::Div, ..));
        });
    }
    Function {
        succ: body.successors(),
        entry,
        rc: terms.new_var(VarKind::ArraySymbol(arity), format!("rc_{name}")),
        rv_ret: terms.new_var(VarKind::ArraySymbol(arity), format!("rv_{name}_ret")),
        rv_ic: terms.new_var(VarKind::ArraySymbol(arity), format!("rv_{name}_ic")),
        targets,
        divides,
        body,
    }
}

fn main_inputs(main: &Body, terms: &mut Terms) -> Vec<MainInput> {
    (0..main.params)
        .map(|p| {
            let v = &main.vars[p];
            let array = v.input_array;
            let kind = if array {
                VarKind::ArraySymbol(1)
            } else {
                VarKind::Symbol
            };
            MainInput {
                name: v.name.clone(),
                symbol: terms.symbol(kind, &v.name),
                array,
            }
        })
        .collect()
}

fn callees(b: &Body) -> impl Iterator<Item = &str> {
    b.edges.iter().filter_map(|e| match &e.instr {
        Instr::Call { func, .. } => Some(func.as_str()),
        _ => None,
    })
}

/// The functions `main` may call, transitively, `main` first.
fn reachable_from(bodies: &[Body], all: &HashMap<String, usize>, main: usize) -> Vec<usize> {
    let mut seen = vec![false; bodies.len()];
    let mut order = vec![main];
    seen[main] = true;
    let mut i = 0;
    while i < order.len() {
        for c in callees(&bodies[order[i]]) {
            if let Some(&g) = all.get(c)
                && !seen[g]
            {
                seen[g] = true;
                order.push(g);
            }
        }
        i += 1;
    }
    order
}

/// A topological order, callees first; a cycle is recursion, outside this
/// engine (docs/compositional-se.md §11.3).
fn callee_first(
    bodies: &[Body],
    all: &HashMap<String, usize>,
    reachable: &[usize],
) -> Result<Vec<usize>, String> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; bodies.len()];
    let mut order = Vec::new();
    for &root in reachable {
        if mark[root] != Mark::New {
            continue;
        }
        // Iterative DFS: (function, next callee index).
        let mut stack: Vec<(usize, Vec<usize>)> = Vec::new();
        mark[root] = Mark::Open;
        stack.push((root, direct_callees(&bodies[root], all)));
        while let Some((f, pending)) = stack.last_mut() {
            let f = *f;
            match pending.pop() {
                Some(g) if mark[g] == Mark::Open => {
                    return Err(format!(
                        "unsupported: recursion (`{}` calls `{}` while it runs); the \
                         report's precision argument needs an acyclic invocation graph \
                         (docs/compositional-se.md §11.3)",
                        bodies[f].name, bodies[g].name
                    ));
                }
                Some(g) if mark[g] == Mark::New => {
                    mark[g] = Mark::Open;
                    stack.push((g, direct_callees(&bodies[g], all)));
                }
                Some(_) => {}
                None => {
                    mark[f] = Mark::Done;
                    order.push(f);
                    stack.pop();
                }
            }
        }
    }
    Ok(order)
}

fn direct_callees(b: &Body, all: &HashMap<String, usize>) -> Vec<usize> {
    let mut out: Vec<usize> = callees(b).filter_map(|c| all.get(c).copied()).collect();
    out.sort();
    out.dedup();
    out
}

/// Whether every instruction of the body is one the engine encodes
/// exactly: integers, the input stream, main's input arrays read in main.
fn supported(b: &Body, is_main: bool) -> Result<(), String> {
    for (i, v) in b.vars.iter().enumerate() {
        let input = v.name == INPUT_STREAM || (is_main && v.input_array && i < b.params);
        if !input && !v.ty.is_int() && v.ty != crate::types::Type::Unknown {
            return Err(format!(
                "`{}` is not an integer (arrays, records, pointers)",
                v.name
            ));
        }
        if v.input_array && !is_main {
            return Err(format!("input array `{}` passed to a function", v.name));
        }
    }
    let input_var = |v: VarId| b.var(v).is_input();
    for e in &b.edges {
        match &e.instr {
            Instr::Assign(Place::Var(v), x) if !input_var(*v) => expr_ok(b, x)?,
            Instr::Assign(..) => return Err("a write into memory or an input array".into()),
            Instr::Alloc(..) => return Err("`alloc` (the heap)".into()),
            Instr::Call { args, .. } => args.iter().try_for_each(|a| expr_ok(b, a))?,
            Instr::Output(x) => expr_ok(b, x)?,
            Instr::Assume(c) | Instr::Assert(c, _) => cond_ok(b, c)?,
            Instr::Skip => {}
            Instr::Enter(_) => return Err("an inlined activation".into()),
        }
    }
    Ok(())
}

fn cond_ok(b: &Body, c: &Cond) -> Result<(), String> {
    match c {
        Cond::Cmp(_, x, y) => {
            expr_ok(b, x)?;
            expr_ok(b, y)
        }
        Cond::Initialized {
            place: Place::Var(_),
            ..
        } => Ok(()),
        Cond::Initialized { .. } => Err("an initialisation check through memory".into()),
        Cond::InBounds { array, index, .. } => match array {
            Expr::Var(v) if b.var(*v).is_input() => expr_ok(b, index),
            _ => Err("an array bounds check".into()),
        },
    }
}

fn expr_ok(b: &Body, e: &Expr) -> Result<(), String> {
    match e {
        Expr::Int(_) => Ok(()),
        Expr::Var(v) if b.var(*v).is_input() => Err("an input array used as a value".into()),
        Expr::Var(_) => Ok(()),
        Expr::Unary(_, a) => expr_ok(b, a),
        Expr::Binary(_, x, y) | Expr::Cmp(_, x, y) => {
            expr_ok(b, x)?;
            expr_ok(b, y)
        }
        Expr::Index(a, i) => match &**a {
            Expr::Var(v) if one_dimensional(b, *v) => expr_ok(b, i),
            _ => Err("an array element (not a one-dimensional input array)".into()),
        },
        Expr::Null | Expr::Load(_) | Expr::AddrOf(_) | Expr::Field(..) => {
            Err("pointers or records".into())
        }
        Expr::Array(_) | Expr::Record(_) => Err("an array or record literal".into()),
    }
}

fn one_dimensional(b: &Body, v: VarId) -> bool {
    let info = b.var(v);
    info.name == INPUT_STREAM || (info.input_array && info.ty.array_depth() == Some(1))
}

/// The variable that holds the input position, if the body reads input.
pub(crate) fn input_counter(b: &Body) -> Option<VarId> {
    b.var_id(INPUT_COUNTER)
}
