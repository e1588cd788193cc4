//! Lowering a function's AST to its flowgraph.
//!
//! Evaluation order is the interpreter's: left to right, the right side of
//! an assignment before the places on its left, the base of `a[i]` before
//! the index. Each check is emitted at the point the interpreter would fail.

use super::*;
use crate::syntax::ast::{self, ExprKind, Function, StmtKind};
use crate::types::FunctionTypes;
use std::collections::HashMap;

/// Lowers one function. `deref_may_read_uninit` says whether some `&x` in
/// the program may take the address of a never-assigned variable (then
/// every dereference read is an `uninitialized` target too).
pub fn lower_function(
    f: &Function,
    types: &FunctionTypes,
    da: &DefiniteAssignment,
    deref_may_read_uninit: bool,
) -> Body {
    let is_main = f.name.name == "main";
    let mut l = Lower {
        types,
        da,
        deref_may_read_uninit,
        vars: vec![],
        var_ids: HashMap::new(),
        edges: vec![],
        node_kinds: vec![],
        targets: vec![],
        loops: vec![],
        loop_stack: vec![],
        cur: 0,
        temps: 0,
        call_free: f.call_free(),
        address_taken: address_taken(f),
    };
    for p in &f.params {
        let ty = types.var(&p.name).cloned().unwrap_or(Type::Unknown);
        let input_array = is_main && matches!(ty, Type::Array(_));
        l.add_var(&p.name, VarKind::Param, ty, input_array);
    }
    for v in &f.locals {
        let ty = types.var(&v.name).cloned().unwrap_or(Type::Unknown);
        l.add_var(&v.name, VarKind::Local, ty, false);
    }
    let ret = l.add_var(RETURN_VAR, VarKind::Return, types.ret.clone(), false);
    l.add_var(
        INPUT_STREAM,
        VarKind::Global,
        Type::Array(Box::new(Type::Int)),
        false,
    );
    l.add_var(INPUT_COUNTER, VarKind::Global, Type::Int, false);

    let entry = l.new_node(NodeKind::Entry);
    l.cur = entry;
    for s in &f.body {
        l.stmt(s);
    }
    let r = l.value(&f.ret);
    let exit = l.new_node(NodeKind::Exit);
    l.edge(l.cur, exit, Instr::Assign(Place::Var(ret), r), f.ret_span);
    Body {
        name: f.name.name.clone(),
        params: f.params.len(),
        vars: l.vars,
        node_count: l.node_kinds.len() as u32,
        edges: l.edges,
        entry,
        exit,
        targets: l.targets,
        loops: l.loops,
        node_kinds: l.node_kinds,
    }
}

struct Lower<'a> {
    types: &'a FunctionTypes,
    da: &'a DefiniteAssignment,
    deref_may_read_uninit: bool,
    vars: Vec<VarInfo>,
    var_ids: HashMap<String, VarId>,
    edges: Vec<Edge>,
    node_kinds: Vec<NodeKind>,
    targets: Vec<Target>,
    loops: Vec<Loop>,
    loop_stack: Vec<LoopId>,
    /// The vertex where the next instruction starts.
    cur: NodeId,
    /// Temporaries made so far (`$t0`, `$t1`, …).
    temps: usize,
    /// By expression id: whether evaluating it runs no call.
    call_free: Vec<bool>,
    /// Variables whose address the function takes (`&x`): a callee may
    /// change them.
    address_taken: std::collections::HashSet<String>,
}

fn int(v: i64) -> Expr {
    Expr::Int(BigInt::from(v))
}

/// The condition "e is true" (non-zero), without a redundant comparison.
fn truth(e: Expr) -> Cond {
    match e {
        Expr::Cmp(op, a, b) => Cond::Cmp(op, *a, *b),
        Expr::Unary(UnOp::Not, x) => Cond::Cmp(CmpOp::Eq, *x, int(0)),
        e => Cond::Cmp(CmpOp::Ne, e, int(0)),
    }
}

fn cmp_op(op: ast::BinOp) -> Option<CmpOp> {
    Some(match op {
        ast::BinOp::Eq => CmpOp::Eq,
        ast::BinOp::Ne => CmpOp::Ne,
        ast::BinOp::Lt => CmpOp::Lt,
        ast::BinOp::Le => CmpOp::Le,
        ast::BinOp::Gt => CmpOp::Gt,
        ast::BinOp::Ge => CmpOp::Ge,
        _ => return None,
    })
}

impl<'a> Lower<'a> {
    fn add_var(&mut self, name: &str, kind: VarKind, ty: Type, input_array: bool) -> VarId {
        let id = self.vars.len() as VarId;
        self.vars.push(VarInfo {
            name: name.to_string(),
            kind,
            ty,
            input_array,
        });
        self.var_ids.insert(name.to_string(), id);
        id
    }
    fn temp(&mut self, ty: Type) -> VarId {
        let name = format!("$t{}", self.temps);
        self.temps += 1;
        self.add_var(&name, VarKind::Temp, ty, false)
    }
    fn var(&self, name: &str) -> VarId {
        self.var_ids[name]
    }
    fn expr_type(&self, e: &ast::Expr) -> Type {
        self.types
            .exprs
            .get(e.id as usize)
            .cloned()
            .unwrap_or(Type::Unknown)
    }
    fn new_node(&mut self, kind: NodeKind) -> NodeId {
        self.node_kinds.push(kind);
        (self.node_kinds.len() - 1) as NodeId
    }
    fn edge(&mut self, from: NodeId, to: NodeId, instr: Instr, span: Span) -> EdgeId {
        self.edges.push(Edge {
            from,
            to,
            instr,
            span,
        });
        (self.edges.len() - 1) as EdgeId
    }
    /// Appends an instruction at the current vertex.
    fn emit(&mut self, instr: Instr, span: Span) {
        let v = self.new_node(NodeKind::Plain);
        self.edge(self.cur, v, instr, span);
        self.cur = v;
    }

    /// A check vertex: `assume(¬ok)` to a new error vertex (the target),
    /// `assert(ok)` onward.
    fn check(&mut self, kind: TargetKind, span: Span, ok: Cond) {
        let id = self.targets.len() as TargetId;
        let err = self.new_node(NodeKind::Error(id));
        self.targets.push(Target {
            id,
            kind,
            span,
            node: err,
        });
        self.edge(self.cur, err, Instr::Assume(ok.negate()), span);
        self.emit(Instr::Assert(ok, id), span);
    }

    // ---- statements --------------------------------------------------------

    fn stmt(&mut self, s: &ast::Stmt) {
        match &s.kind {
            StmtKind::Assign { lhs, rhs } => {
                let r = self.value(rhs);
                let p = self.place(lhs);
                self.emit(Instr::Assign(p, r), s.span);
            }
            StmtKind::Output(e) => {
                let v = self.value(e);
                self.emit(Instr::Output(v), s.span);
            }
            StmtKind::Assert(e) => {
                let v = self.value(e);
                // Reported at the `assert` keyword.
                let kw = Span::new(s.span.start, s.span.start + "assert".len() as u32);
                self.check(TargetKind::Assert, kw, truth(v));
            }
            StmtKind::Assume(e) => {
                // A failed assume ends the run: its false edge goes nowhere.
                let cont = self.new_node(NodeKind::Plain);
                self.cond(e, Some(cont), None);
                self.cur = cont;
            }
            StmtKind::If { cond, then, els } => {
                let t = self.new_node(NodeKind::Plain);
                let f = self.new_node(NodeKind::Plain);
                let join = self.new_node(NodeKind::Plain);
                self.cond(cond, Some(t), Some(f));
                self.cur = t;
                self.stmt(then);
                self.edge(self.cur, join, Instr::Skip, s.span);
                self.cur = f;
                if let Some(e) = els {
                    self.stmt(e);
                }
                self.edge(self.cur, join, Instr::Skip, s.span);
                self.cur = join;
            }
            StmtKind::While { cond, body } => self.while_loop(s, cond, body),
            StmtKind::Block(stmts) => {
                for s in stmts {
                    self.stmt(s);
                }
            }
        }
    }

    fn while_loop(&mut self, s: &ast::Stmt, cond: &ast::Expr, body: &ast::Stmt) {
        let id = self.loops.len() as LoopId;
        let header = self.new_node(NodeKind::LoopHeader(id));
        // The papers' normalisation: every in-edge of a loop entry is skip.
        self.edge(self.cur, header, Instr::Skip, s.span);
        self.loops.push(Loop {
            id,
            header,
            nodes: vec![],
            back_edges: vec![],
            exit_edges: vec![],
            parent: self.loop_stack.last().copied(),
            span: s.span,
        });
        self.loop_stack.push(id);
        let first_edge = self.edges.len();
        let body_start = self.new_node(NodeKind::Plain);
        let exit = self.new_node(NodeKind::Plain);
        self.cur = header;
        self.cond(cond, Some(body_start), Some(exit));
        self.cur = body_start;
        self.stmt(body);
        let back = self.edge(self.cur, header, Instr::Skip, s.span);
        self.loop_stack.pop();
        // Without break or goto, every non-error vertex made for the loop
        // (except its exit) lies on a cycle through the header.
        let end = self.node_kinds.len() as NodeId;
        let nodes: Vec<NodeId> = (header..end)
            .filter(|&v| v != exit && !matches!(self.node_kinds[v as usize], NodeKind::Error(_)))
            .collect();
        let exit_edges = (first_edge..self.edges.len())
            .filter(|&e| self.edges[e].to == exit)
            .map(|e| e as EdgeId)
            .collect();
        let l = &mut self.loops[id as usize];
        l.nodes = nodes;
        l.back_edges = vec![back];
        l.exit_edges = exit_edges;
        self.cur = exit;
    }

    /// Lowers a condition: control goes to `t` when it holds and to `f`
    /// when it does not (`None`: that outcome ends the run). `&&`, `||` and
    /// `!` become branching, so every `assume` carries one atom.
    fn cond(&mut self, e: &ast::Expr, t: Option<NodeId>, f: Option<NodeId>) {
        match &e.kind {
            ExprKind::Binary(ast::BinOp::And, a, b) => {
                let mid = self.new_node(NodeKind::Plain);
                self.cond(a, Some(mid), f);
                self.cur = mid;
                self.cond(b, t, f);
            }
            ExprKind::Binary(ast::BinOp::Or, a, b) => {
                let mid = self.new_node(NodeKind::Plain);
                self.cond(a, t, Some(mid));
                self.cur = mid;
                self.cond(b, t, f);
            }
            ExprKind::Unary(UnOp::Not, x) => self.cond(x, f, t),
            _ => {
                let c = match &e.kind {
                    ExprKind::Binary(op, a, b) => match cmp_op(*op) {
                        Some(c) => {
                            let (a, b) = self.operands(a, b);
                            Cond::Cmp(c, a, b)
                        }
                        None => truth(self.value(e)),
                    },
                    _ => truth(self.value(e)),
                };
                if let Some(t) = t {
                    self.edge(self.cur, t, Instr::Assume(c.clone()), e.span);
                }
                if let Some(f) = f {
                    self.edge(self.cur, f, Instr::Assume(c.negate()), e.span);
                }
            }
        }
    }

    // ---- expressions -------------------------------------------------------

    /// Lowers an expression to a pure one, emitting its checks and side
    /// effects (input reads, allocations, calls) in evaluation order.
    fn value(&mut self, e: &ast::Expr) -> Expr {
        match &e.kind {
            ExprKind::Num(n) => Expr::Int(n.clone()),
            ExprKind::Null => Expr::Null,
            ExprKind::Var(x) => Expr::Var(self.read_var(e, x)),
            ExprKind::Input => self.input(e.span),
            ExprKind::Alloc(x) => {
                let v = self.value(x);
                let t = self.temp(self.expr_type(e));
                self.emit(Instr::Alloc(t, v), e.span);
                Expr::Var(t)
            }
            ExprKind::AddrOf(x) => Expr::AddrOf(self.var(&x.name)),
            ExprKind::Deref(p) => {
                let p = self.value(p);
                self.deref_checks(&p, e.op, true);
                Expr::Load(Box::new(p))
            }
            ExprKind::Unary(op, x) => {
                let x = self.value(x);
                Expr::Unary(*op, Box::new(x))
            }
            ExprKind::Binary(ast::BinOp::And | ast::BinOp::Or, ..) => self.logical_value(e),
            ExprKind::Binary(op, a, b) => self.binary(e, *op, a, b),
            ExprKind::Index(a, i) => self.index(e, a, i),
            ExprKind::Field(base, name) => {
                let through_pointer = matches!(self.expr_type(base), Type::Ptr(_));
                let b = self.value(base);
                let record = if through_pointer {
                    self.deref_checks(&b, e.op, true);
                    Expr::Load(Box::new(b))
                } else {
                    b
                };
                Expr::Field(Box::new(record), name.name.clone())
            }
            ExprKind::Call(callee, args) => {
                let args = self.in_order(args.iter());
                let t = self.temp(self.expr_type(e));
                self.emit(
                    Instr::Call {
                        dst: t,
                        func: callee.name.clone(),
                        args,
                    },
                    e.span,
                );
                Expr::Var(t)
            }
            ExprKind::Array(elems) => Expr::Array(self.in_order(elems.iter())),
            ExprKind::Record(fields) => {
                let values = self.in_order(fields.iter().map(|(_, x)| x));
                let names = fields.iter().map(|(n, _)| n.name.clone());
                Expr::Record(names.zip(values).collect())
            }
            // The parser never hands over error nodes in a program that parsed.
            ExprKind::Error => int(0),
        }
    }

    /// `input`: `$t := $in[$ic]; $ic := $ic + 1`.
    fn input(&mut self, span: Span) -> Expr {
        let t = self.temp(Type::Int);
        let (inp, ic) = (self.var(INPUT_STREAM), self.var(INPUT_COUNTER));
        let read = Expr::Index(Box::new(Expr::Var(inp)), Box::new(Expr::Var(ic)));
        self.emit(Instr::Assign(Place::Var(t), read), span);
        let next = Expr::Binary(BinOp::Add, Box::new(Expr::Var(ic)), Box::new(int(1)));
        self.emit(Instr::Assign(Place::Var(ic), next), span);
        Expr::Var(t)
    }

    /// A logical value (`a && b` as a value): branch, then join with 0 or 1.
    fn logical_value(&mut self, e: &ast::Expr) -> Expr {
        let t = self.temp(Type::Int);
        let (yes, no, join) = (
            self.new_node(NodeKind::Plain),
            self.new_node(NodeKind::Plain),
            self.new_node(NodeKind::Plain),
        );
        self.cond(e, Some(yes), Some(no));
        self.edge(yes, join, Instr::Assign(Place::Var(t), int(1)), e.span);
        self.edge(no, join, Instr::Assign(Place::Var(t), int(0)), e.span);
        self.cur = join;
        Expr::Var(t)
    }

    /// An arithmetic or comparison operator; a division by what may be 0
    /// is a target.
    fn binary(&mut self, e: &ast::Expr, op: ast::BinOp, a: &ast::Expr, b: &ast::Expr) -> Expr {
        let (a, b) = self.operands(a, b);
        if let Some(c) = cmp_op(op) {
            return Expr::Cmp(c, Box::new(a), Box::new(b));
        }
        let op = match op {
            ast::BinOp::Add => BinOp::Add,
            ast::BinOp::Sub => BinOp::Sub,
            ast::BinOp::Mul => BinOp::Mul,
            _ => BinOp::Div,
        };
        if op == BinOp::Div && !matches!(&b, Expr::Int(n) if n.sign() != num_bigint::Sign::NoSign) {
            self.check(
                TargetKind::DivByZero,
                e.op,
                Cond::Cmp(CmpOp::Ne, b.clone(), int(0)),
            );
        }
        Expr::Binary(op, Box::new(a), Box::new(b))
    }

    /// `a[i]`: out of bounds is a target, except on an input array.
    fn index(&mut self, e: &ast::Expr, a: &ast::Expr, i: &ast::Expr) -> Expr {
        let unbounded = self.is_input_array(a);
        let (a, i) = self.operands(a, i);
        if !unbounded {
            self.check(
                TargetKind::OutOfBounds,
                e.op,
                Cond::InBounds {
                    array: a.clone(),
                    index: i.clone(),
                    positive: true,
                },
            );
        }
        Expr::Index(Box::new(a), Box::new(i))
    }

    /// Two operands, left to right. A pure expression is read where it is
    /// used, so the left one is saved in a temporary when the right one
    /// runs a call: the callee may change what it reads (a variable whose
    /// address it got, a heap cell), and the interpreter reads it first.
    fn operands(&mut self, a: &ast::Expr, b: &ast::Expr) -> (Expr, Expr) {
        let va = self.value(a);
        let va = self.before_call(va, a, b);
        (va, self.value(b))
    }

    /// Several operands left to right, each saved when a later one runs a
    /// call (see `operands`).
    fn in_order<'e>(&mut self, es: impl Iterator<Item = &'e ast::Expr>) -> Vec<Expr> {
        let es: Vec<&ast::Expr> = es.collect();
        let mut out = Vec::with_capacity(es.len());
        for (k, e) in es.iter().enumerate() {
            let v = self.value(e);
            let v = match es[k + 1..].iter().find(|later| !self.runs_no_call(later)) {
                Some(later) => self.before_call(v, e, later),
                None => v,
            };
            out.push(v);
        }
        out
    }

    fn runs_no_call(&self, e: &ast::Expr) -> bool {
        self.call_free.get(e.id as usize) == Some(&true)
    }

    /// `v` (the value of `e`) in a temporary if `later` runs a call that
    /// may change what `v` reads; as it is otherwise.
    fn before_call(&mut self, v: Expr, e: &ast::Expr, later: &ast::Expr) -> Expr {
        if self.runs_no_call(later) || self.no_call_changes(&v) {
            return v;
        }
        let t = self.temp(self.expr_type(e));
        self.emit(Instr::Assign(Place::Var(t), v), e.span);
        Expr::Var(t)
    }

    /// Whether no call can change the value of `v`: it reads only
    /// temporaries and scalar variables whose address is never taken.
    /// Arrays, records and memory behind pointers may be reached by a
    /// callee.
    fn no_call_changes(&self, v: &Expr) -> bool {
        let mut stack = vec![v];
        while let Some(x) = stack.pop() {
            match x {
                Expr::Int(_) | Expr::Null | Expr::AddrOf(_) => {}
                Expr::Var(id) => {
                    let info = &self.vars[*id as usize];
                    let scalar = matches!(info.ty, Type::Int | Type::Ptr(_));
                    let reachable = self.address_taken.contains(&info.name);
                    if info.kind != VarKind::Temp && (!scalar || reachable) {
                        return false;
                    }
                }
                Expr::Unary(_, a) => stack.push(a),
                Expr::Binary(_, a, b) | Expr::Cmp(_, a, b) => stack.extend([&**a, &**b]),
                _ => return false,
            }
        }
        true
    }

    /// Null check, and (for reads) the uninitialised-cell check, of `*p`.
    fn deref_checks(&mut self, p: &Expr, op: Span, read: bool) {
        self.check(
            TargetKind::NullDeref,
            op,
            Cond::Cmp(CmpOp::Ne, p.clone(), Expr::Null),
        );
        if read && self.deref_may_read_uninit {
            self.check(
                TargetKind::Uninitialized,
                op,
                Cond::Initialized {
                    place: Place::Deref(p.clone()),
                    positive: true,
                },
            );
        }
    }

    /// Whether `a` is an input array of main (or a row of a 2-D one):
    /// unbounded, so indexing it is never out of bounds.
    fn is_input_array(&self, a: &ast::Expr) -> bool {
        match &a.kind {
            ExprKind::Var(x) => self
                .var_ids
                .get(x)
                .is_some_and(|&v| self.vars[v as usize].input_array),
            ExprKind::Index(b, _) => self.is_input_array(b),
            _ => false,
        }
    }

    /// The place on the left of an assignment (after the right side ran).
    fn place(&mut self, e: &ast::Expr) -> Place {
        match &e.kind {
            ExprKind::Var(x) => Place::Var(self.var(x)),
            ExprKind::Deref(p) => {
                let p = self.value(p);
                self.deref_checks(&p, e.op, false);
                Place::Deref(p)
            }
            ExprKind::Index(base, i) => {
                let unbounded = self.is_input_array(base);
                let b = self.place_base(base);
                let i = self.value(i);
                if !unbounded {
                    let array = b.value();
                    self.check(
                        TargetKind::OutOfBounds,
                        e.op,
                        Cond::InBounds {
                            array,
                            index: i.clone(),
                            positive: true,
                        },
                    );
                }
                Place::Index(Box::new(b), i)
            }
            ExprKind::Field(base, name) => {
                if matches!(self.expr_type(base), Type::Ptr(_)) {
                    // Writing a field reads the record it is in: that cell
                    // must hold one (the interpreter fails at the `.`).
                    let p = self.value(base);
                    self.deref_checks(&p, e.op, true);
                    Place::Field(Box::new(Place::Deref(p)), name.name.clone())
                } else {
                    let b = self.place_base(base);
                    Place::Field(Box::new(b), name.name.clone())
                }
            }
            // Rejected by name resolution; keep lowering total.
            _ => {
                let t = self.temp(Type::Unknown);
                Place::Var(t)
            }
        }
    }

    /// The base of `b[i] = …` or `b.f = …`: its current value is read, so
    /// a variable must be assigned and a cell behind `*p` must hold a value
    /// (the interpreter fails at the `*` otherwise).
    fn place_base(&mut self, base: &ast::Expr) -> Place {
        match &base.kind {
            ExprKind::Var(x) => Place::Var(self.read_var(base, x)),
            ExprKind::Deref(p) => {
                let p = self.value(p);
                self.deref_checks(&p, base.op, true);
                Place::Deref(p)
            }
            _ => self.place(base),
        }
    }

    /// A read of variable `x` (expression `e`), with the `uninitialized`
    /// target where definite assignment cannot rule it out.
    fn read_var(&mut self, e: &ast::Expr, x: &str) -> VarId {
        let v = self.var(x);
        if self.da.uninit_reads.contains(&e.id) {
            self.check(
                TargetKind::Uninitialized,
                e.op,
                Cond::Initialized {
                    place: Place::Var(v),
                    positive: true,
                },
            );
        }
        v
    }
}

/// The variables whose address the function takes.
fn address_taken(f: &Function) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    f.walk_exprs(&mut |e| {
        if let ExprKind::AddrOf(x) = &e.kind {
            out.insert(x.name.clone());
        }
    });
    out
}
