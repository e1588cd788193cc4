//! Unification-based inference over a union-find of type terms.

use super::resolve::resolve;
use crate::syntax::ast::*;
use crate::syntax::{Diagnostic, Span};
use std::collections::{BTreeSet, HashMap};
use std::fmt;

/// An inferred type, as a finite tree. A recursive type refers back to an
/// enclosing node with `Back(n)`: the n-th enclosing constructor (1 = parent).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Int,
    Ptr(Box<Type>),
    Array(Box<Type>),
    /// Present fields only, sorted by name.
    Record(Vec<(String, Type)>),
    /// Nothing constrains it (e.g. a variable that is never used).
    Unknown,
    Back(u32),
}

impl Type {
    pub fn is_int(&self) -> bool {
        matches!(self, Type::Int)
    }
    /// Number of array levels around an integer (`array(array(int))` is 2).
    pub fn array_depth(&self) -> Option<u32> {
        match self {
            Type::Int => Some(0),
            Type::Array(t) => t.array_depth().map(|d| d + 1),
            _ => None,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Int => write!(f, "int"),
            Type::Ptr(t) => write!(f, "ptr({t})"),
            Type::Array(t) => write!(f, "array({t})"),
            Type::Record(fields) => {
                write!(f, "{{")?;
                for (i, (n, t)) in fields.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{n}: {t}")?;
                }
                write!(f, "}}")
            }
            Type::Unknown => write!(f, "?"),
            Type::Back(n) => write!(f, "^{n}"),
        }
    }
}

/// The types of one function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionTypes {
    pub name: String,
    /// Parameters then locals, in declaration order.
    pub vars: Vec<(String, Type)>,
    /// The type of each expression, indexed by `ExprId`.
    pub exprs: Vec<Type>,
    pub ret: Type,
}

impl FunctionTypes {
    pub fn var(&self, name: &str) -> Option<&Type> {
        self.vars.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProgramTypes {
    /// Name-resolution and type errors (absolute spans). Empty if well typed.
    pub diagnostics: Vec<Diagnostic>,
    /// One entry per function of the program, in program order.
    pub functions: Vec<FunctionTypes>,
}

impl ProgramTypes {
    pub fn is_ok(&self) -> bool {
        self.diagnostics.iter().all(|d| !d.is_error())
    }
    pub fn function(&self, name: &str) -> Option<&FunctionTypes> {
        self.functions.iter().find(|f| f.name == name)
    }
}

type Node = u32;

#[derive(Clone, Debug)]
enum Term {
    Var,
    Int,
    Ptr(Node),
    Array(Node),
    /// One slot per field name of the program (see `Checker::fields`).
    Record(Vec<Node>),
    Absent,
}

impl Term {
    fn describe(&self) -> &'static str {
        match self {
            Term::Var => "anything",
            Term::Int => "an integer",
            Term::Ptr(_) => "a pointer",
            Term::Array(_) => "an array",
            Term::Record(_) => "a record",
            Term::Absent => "a missing record field",
        }
    }
}

/// Why two type terms do not unify: the roots `x` (from the first side)
/// and `y` (from the second) have different constructors. `field` is the
/// innermost pair of records whose slots led there, with the slot, so that
/// a conflict with an absent field can name the field and the records.
struct Conflict {
    x: Node,
    y: Node,
    field: Option<(usize, Node, Node)>,
}

/// An access `e.f`, resolved after the other constraints.
#[derive(Clone, Copy)]
struct FieldAccess {
    base: Node,
    field: usize,
    result: Node,
    /// The `.` (where a pointer base's record is reported).
    dot: Span,
    /// The whole `e.f`, absolute.
    span: Span,
    /// Whether `e.f` is the place an assignment writes.
    write: bool,
}

struct Checker<'p> {
    program: &'p Program,
    parent: Vec<Node>,
    term: Vec<Term>,
    /// Where each constructor node came from, for error messages.
    origin: Vec<Option<Span>>,
    /// All field names of the program, sorted; a record term has one slot each.
    fields: Vec<String>,
    field_index: HashMap<String, usize>,
    /// Per function: variable nodes by name, first expression node, return node.
    var_nodes: Vec<HashMap<String, Node>>,
    expr_base: Vec<Node>,
    ret_nodes: Vec<Node>,
    params: HashMap<String, (Vec<Node>, Node)>,
    /// `e.f` constraints resolved after the rest.
    deferred_fields: Vec<FieldAccess>,
    /// The expression an assignment being checked writes: (function, id).
    assigned: Option<(usize, ExprId)>,
    /// Operands of `==`/`!=`, checked to be integers or pointers at the end.
    equality_operands: Vec<(Node, Span)>,
    diags: Vec<Diagnostic>,
}

/// Resolves names and infers types for the whole program.
pub fn check_program(program: &Program) -> ProgramTypes {
    let mut diags = resolve(program);
    let mut c = Checker::new(program);
    c.run();
    diags.append(&mut c.diags);
    let functions = program
        .functions
        .iter()
        .enumerate()
        .map(|(fi, f)| c.function_types(fi, f))
        .collect();
    ProgramTypes {
        diagnostics: diags,
        functions,
    }
}

impl<'p> Checker<'p> {
    fn new(program: &'p Program) -> Checker<'p> {
        let mut names = BTreeSet::new();
        for f in &program.functions {
            f.walk_exprs(&mut |e| match &e.kind {
                ExprKind::Field(_, n) => {
                    names.insert(n.name.clone());
                }
                ExprKind::Record(fs) => names.extend(fs.iter().map(|(n, _)| n.name.clone())),
                _ => {}
            });
        }
        let fields: Vec<String> = names.into_iter().collect();
        let field_index = fields
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        Checker {
            program,
            parent: vec![],
            term: vec![],
            origin: vec![],
            fields,
            field_index,
            var_nodes: vec![],
            expr_base: vec![],
            ret_nodes: vec![],
            params: HashMap::new(),
            deferred_fields: vec![],
            assigned: None,
            equality_operands: vec![],
            diags: vec![],
        }
    }

    fn node(&mut self, term: Term, origin: Option<Span>) -> Node {
        let n = self.parent.len() as Node;
        self.parent.push(n);
        self.term.push(term);
        self.origin.push(origin);
        n
    }
    fn fresh(&mut self) -> Node {
        self.node(Term::Var, None)
    }
    fn find(&mut self, mut n: Node) -> Node {
        while self.parent[n as usize] != n {
            let p = self.parent[n as usize];
            self.parent[n as usize] = self.parent[p as usize];
            n = p;
        }
        n
    }

    /// Unifies; on a conflict reports both origins (`at` is the use that
    /// added the constraint, for when a node has no origin of its own).
    fn unify(&mut self, a: Node, b: Node, at: Span) {
        if let Err(c) = self.unify_inner(a, b) {
            self.report(c, at, None);
        }
    }

    /// Reports a conflict. `access` is the `e.f` whose resolution found it.
    fn report(&mut self, c: Conflict, at: Span, access: Option<FieldAccess>) {
        let Conflict { x, y, field } = c;
        let absent = |t: &Term| matches!(t, Term::Absent);
        if let Some((i, rx, ry)) = field {
            // One record has field i and the other has not.
            let (x_absent, y_absent) = (
                absent(&self.term[x as usize]),
                absent(&self.term[y as usize]),
            );
            if x_absent != y_absent {
                let (with, absent) = if y_absent { (rx, y) } else { (ry, x) };
                self.missing_field(i, with, absent, at, access);
                return;
            }
        }
        let (dx, dy) = (
            self.term[x as usize].describe(),
            self.term[y as usize].describe(),
        );
        let ox = self.origin[x as usize].unwrap_or(at);
        let oy = self.origin[y as usize].unwrap_or(at);
        let mut d = Diagnostic::error(format!("type error: {dy} is used where {dx} is expected"))
            .primary(oy, format!("this is {dy}"));
        if ox != oy {
            d = d.secondary(ox, format!("this makes it {dx}"));
        }
        self.diags.push(d);
    }

    fn unify_inner(&mut self, a: Node, b: Node) -> Result<(), Conflict> {
        let (a, b) = (self.find(a), self.find(b));
        if a == b {
            return Ok(());
        }
        match (self.term[a as usize].clone(), self.term[b as usize].clone()) {
            (Term::Var, _) => {
                self.parent[a as usize] = b;
                Ok(())
            }
            (_, Term::Var) => {
                self.parent[b as usize] = a;
                Ok(())
            }
            (Term::Int, Term::Int) | (Term::Absent, Term::Absent) => {
                self.parent[a as usize] = b;
                Ok(())
            }
            (Term::Ptr(x), Term::Ptr(y)) | (Term::Array(x), Term::Array(y)) => {
                // Link first: recursive types then meet `a == b` and stop.
                self.parent[a as usize] = b;
                self.unify_inner(x, y)
            }
            (Term::Record(xs), Term::Record(ys)) => {
                self.parent[a as usize] = b;
                for (i, (x, y)) in xs.into_iter().zip(ys).enumerate() {
                    self.unify_inner(x, y).map_err(|mut c| {
                        c.field.get_or_insert((i, a, b));
                        c
                    })?;
                }
                Ok(())
            }
            _ => Err(Conflict {
                x: a,
                y: b,
                field: None,
            }),
        }
    }

    /// Field `i` is in record `with` but absent from another record
    /// (`absent` is its slot: absent slots come from record literals, whose
    /// span is their origin). Reported at the `e.f` that uses the field when
    /// there is one, with the literal that lacks it as context.
    fn missing_field(
        &mut self,
        i: usize,
        with: Node,
        absent: Node,
        at: Span,
        access: Option<FieldAccess>,
    ) {
        let name = self.fields[i].clone();
        let lacking = self.origin[absent as usize];
        let d = match access.filter(|a| a.field == i) {
            Some(a) => {
                let verb = if a.write { "written" } else { "read" };
                let mut d = Diagnostic::error(format!(
                    "record field `{name}` is {verb} but this record has no field `{name}`"
                ))
                .primary(a.span, format!("`{name}` is {verb} here"));
                if let Some(o) = lacking.filter(|&o| o != a.span) {
                    d = d.secondary(o, format!("this record has no field `{name}`"));
                }
                d
            }
            None => {
                let mut d = Diagnostic::error(format!(
                    "records with different fields: one has `{name}`, the other has not"
                ))
                .primary(
                    lacking.unwrap_or(at),
                    format!("this record has no field `{name}`"),
                );
                if let Some(o) = self.origin[with as usize].filter(|&o| Some(o) != lacking) {
                    d = d.secondary(o, format!("this one has field `{name}`"));
                }
                d
            }
        };
        self.diags.push(
            d.note("a record has the fields of the literal `{…}` that built it, and no others"),
        );
    }

    fn int(&mut self, origin: Span) -> Node {
        self.node(Term::Int, Some(origin))
    }

    fn run(&mut self) {
        let program = self.program;
        for f in &program.functions {
            let mut vars = HashMap::new();
            for v in f.params.iter().chain(&f.locals) {
                let n = self.fresh();
                vars.entry(v.name.clone()).or_insert(n);
            }
            let params: Vec<Node> = f.params.iter().map(|p| vars[&p.name]).collect();
            let ret = self.fresh();
            self.params
                .entry(f.name.name.clone())
                .or_insert((params, ret));
            self.var_nodes.push(vars);
            let base = self.parent.len() as Node;
            for _ in 0..f.expr_count {
                self.fresh();
            }
            self.expr_base.push(base);
            self.ret_nodes.push(ret);
        }
        for (fi, f) in program.functions.iter().enumerate() {
            for s in &f.body {
                self.stmt(fi, f, s);
            }
            let r = self.expr(fi, f, &f.ret);
            let ret = self.ret_nodes[fi];
            self.unify(ret, r, f.abs(f.ret.span));
            if f.name.name == "main" {
                let i = self.int(f.abs(f.ret.span));
                self.unify(ret, i, f.abs(f.ret_span));
            }
        }
        self.resolve_fields();
        self.check_main();
        self.post_checks();
    }

    fn var(&mut self, fi: usize, name: &str) -> Node {
        match self.var_nodes[fi].get(name) {
            Some(n) => *n,
            // Undeclared (already reported): give it a private variable.
            None => {
                let n = self.fresh();
                self.var_nodes[fi].insert(name.to_string(), n);
                n
            }
        }
    }

    fn stmt(&mut self, fi: usize, f: &Function, s: &Stmt) {
        match &s.kind {
            StmtKind::Assign { lhs, rhs } => {
                let r = self.expr(fi, f, rhs);
                self.assigned = Some((fi, lhs.id));
                let l = self.expr(fi, f, lhs);
                self.assigned = None;
                self.unify(l, r, f.abs(s.span));
            }
            StmtKind::Output(e) | StmtKind::Assert(e) | StmtKind::Assume(e) => {
                self.int_expr(fi, f, e)
            }
            StmtKind::If { cond, then, els } => {
                self.int_expr(fi, f, cond);
                self.stmt(fi, f, then);
                if let Some(e) = els {
                    self.stmt(fi, f, e);
                }
            }
            StmtKind::While { cond, body } => {
                self.int_expr(fi, f, cond);
                self.stmt(fi, f, body);
            }
            StmtKind::Block(b) => {
                for s in b {
                    self.stmt(fi, f, s);
                }
            }
        }
    }

    /// An expression that must be an integer (conditions, operands).
    fn int_expr(&mut self, fi: usize, f: &Function, e: &Expr) {
        let t = self.expr(fi, f, e);
        let i = self.node(Term::Int, None);
        self.unify(i, t, f.abs(e.span));
    }

    fn expr(&mut self, fi: usize, f: &Function, e: &Expr) -> Node {
        let me = self.expr_base[fi] + e.id;
        let span = f.abs(e.span);
        let t = match &e.kind {
            ExprKind::Num(_) | ExprKind::Input => self.int(span),
            ExprKind::Var(name) => self.var(fi, name),
            ExprKind::Null => {
                let a = self.fresh();
                self.node(Term::Ptr(a), Some(span))
            }
            ExprKind::Alloc(x) => {
                let tx = self.expr(fi, f, x);
                self.node(Term::Ptr(tx), Some(span))
            }
            ExprKind::AddrOf(id) => {
                let tx = self.var(fi, &id.name);
                self.node(Term::Ptr(tx), Some(span))
            }
            ExprKind::Deref(x) => {
                let tx = self.expr(fi, f, x);
                let a = self.fresh();
                let p = self.node(Term::Ptr(a), Some(f.abs(e.op)));
                self.unify(p, tx, span);
                a
            }
            ExprKind::Unary(_, x) => {
                self.int_expr(fi, f, x);
                self.int(span)
            }
            ExprKind::Binary(op, a, b) => {
                if matches!(op, BinOp::Eq | BinOp::Ne) {
                    let ta = self.expr(fi, f, a);
                    let tb = self.expr(fi, f, b);
                    self.unify(ta, tb, span);
                    self.equality_operands.push((ta, f.abs(a.span)));
                } else {
                    self.int_expr(fi, f, a);
                    self.int_expr(fi, f, b);
                }
                self.int(span)
            }
            ExprKind::Index(a, i) => {
                let ta = self.expr(fi, f, a);
                self.int_expr(fi, f, i);
                let elem = self.fresh();
                let arr = self.node(Term::Array(elem), Some(f.abs(e.op)));
                self.unify(arr, ta, span);
                elem
            }
            ExprKind::Field(base, name) => {
                let write = self.assigned == Some((fi, e.id));
                let tb = self.expr(fi, f, base);
                let result = self.fresh();
                let idx = self.field_index[&name.name];
                self.deferred_fields.push(FieldAccess {
                    base: tb,
                    field: idx,
                    result,
                    dot: f.abs(e.op),
                    span,
                    write,
                });
                result
            }
            ExprKind::Call(callee, args) => {
                let sig = self.params.get(&callee.name).cloned();
                let targs: Vec<Node> = args.iter().map(|a| self.expr(fi, f, a)).collect();
                match sig {
                    Some((ps, ret)) if ps.len() == targs.len() => {
                        for ((p, a), arg) in ps.into_iter().zip(targs).zip(args) {
                            self.unify(p, a, f.abs(arg.span));
                        }
                        ret
                    }
                    // Undefined function or wrong arity: already reported.
                    _ => self.fresh(),
                }
            }
            ExprKind::Array(elems) => {
                let elem = self.fresh();
                for x in elems {
                    let tx = self.expr(fi, f, x);
                    self.unify(elem, tx, f.abs(x.span));
                }
                self.node(Term::Array(elem), Some(span))
            }
            ExprKind::Record(fs) => {
                let mut slots: Vec<Node> = (0..self.fields.len())
                    .map(|_| self.node(Term::Absent, Some(span)))
                    .collect();
                for (name, x) in fs {
                    slots[self.field_index[&name.name]] = self.expr(fi, f, x);
                }
                self.node(Term::Record(slots), Some(span))
            }
            ExprKind::Error => self.fresh(),
        };
        self.unify(me, t, span);
        me
    }

    /// A record type with `result` in slot `idx` and fresh variables elsewhere.
    fn record_with(&mut self, idx: usize, result: Node, origin: Span) -> Node {
        let slots = (0..self.fields.len())
            .map(|i| if i == idx { result } else { self.fresh() })
            .collect();
        self.node(Term::Record(slots), Some(origin))
    }

    /// `e.f`: through a pointer if `e` is one, else on the record itself.
    /// Accesses whose base is still unknown wait until others resolve it.
    fn resolve_fields(&mut self) {
        let mut pending = std::mem::take(&mut self.deferred_fields);
        loop {
            let before = pending.len();
            pending.retain(|&a| {
                let b = self.find(a.base);
                match self.term[b as usize].clone() {
                    Term::Var => true,
                    Term::Ptr(target) => {
                        self.resolve_field(a, target);
                        false
                    }
                    _ => {
                        self.resolve_field(a, a.base);
                        false
                    }
                }
            });
            if pending.is_empty() {
                return;
            }
            if pending.len() == before {
                // Nothing else decides these bases: they are records.
                let a = pending.remove(0);
                self.resolve_field(a, a.base);
            }
        }
    }

    /// `record` (the base, or what it points to) has field `a.field`.
    fn resolve_field(&mut self, a: FieldAccess, record: Node) {
        let r = self.record_with(a.field, a.result, a.dot);
        if let Err(c) = self.unify_inner(r, record) {
            self.report(c, a.dot, Some(a));
        }
    }

    /// Parameters of main are inputs: integers or (nested) input arrays of
    /// integers. Unconstrained ones default to integers.
    fn check_main(&mut self) {
        let Some((fi, f)) = self
            .program
            .functions
            .iter()
            .enumerate()
            .find(|(_, f)| f.name.name == "main")
        else {
            return;
        };
        for p in &f.params {
            let mut n = self.var(fi, &p.name);
            let mut seen = std::collections::HashSet::new();
            loop {
                let r = self.find(n);
                if !seen.insert(r) {
                    // `A[0] = A`: an array that holds itself has no finite
                    // depth, and no witness list can give it.
                    self.diags.push(
                        Diagnostic::error(format!(
                            "parameter `{}` of `main` is an array that contains itself, but inputs are integers or input arrays of finite depth",
                            p.name
                        ))
                        .primary(f.abs(p.span), "main's parameters are the program's inputs"),
                    );
                    break;
                }
                match self.term[r as usize].clone() {
                    Term::Var => {
                        let i = self.int(f.abs(p.span));
                        self.unify(r, i, f.abs(p.span));
                        break;
                    }
                    Term::Int => break,
                    Term::Array(elem) => n = elem,
                    other => {
                        self.diags.push(
                            Diagnostic::error(format!(
                                "parameter `{}` of `main` is {}, but inputs are integers or input arrays",
                                p.name,
                                other.describe()
                            ))
                            .primary(f.abs(p.span), "main's parameters are the program's inputs"),
                        );
                        break;
                    }
                }
            }
            let root = self.find(self.var_nodes[fi][&p.name]);
            if matches!(self.term[root as usize], Term::Array(_)) {
                self.check_read_only(f, p);
            }
        }
    }

    /// An input array of main cannot be assigned or have its address taken.
    fn check_read_only(&mut self, f: &Function, p: &Ident) {
        let mut bad = Vec::new();
        for s in &f.body {
            s.walk(&mut |s| {
                if let StmtKind::Assign { lhs, .. } = &s.kind {
                    let mut root = lhs;
                    while let ExprKind::Index(b, _) | ExprKind::Field(b, _) = &root.kind {
                        root = b;
                    }
                    if matches!(&root.kind, ExprKind::Var(v) if *v == p.name) {
                        bad.push((lhs.span, "assigned here"));
                    }
                }
                for e in s.exprs() {
                    e.walk(&mut |e| {
                        if matches!(&e.kind, ExprKind::AddrOf(v) if v.name == p.name) {
                            bad.push((e.span, "address taken here"));
                        }
                    });
                }
            });
        }
        for (span, what) in bad {
            self.diags.push(
                Diagnostic::error(format!("input array `{}` is read-only", p.name))
                    .primary(f.abs(span), what)
                    .secondary(f.abs(p.span), "an input array of `main`")
                    .note("copy it into a local variable first (`b = p;`) to modify a copy"),
            );
        }
    }

    fn post_checks(&mut self) {
        for (n, span) in std::mem::take(&mut self.equality_operands) {
            let r = self.find(n);
            if matches!(
                self.term[r as usize],
                Term::Array(_) | Term::Record(_) | Term::Absent
            ) {
                let what = self.term[r as usize].describe();
                self.diags.push(
                    Diagnostic::error(format!(
                        "`==` and `!=` compare integers or pointers, not {what}"
                    ))
                    .primary(span, format!("this is {what}")),
                );
            }
        }
        // No nested records; no reads of fields a record does not have.
        for n in 0..self.parent.len() as Node {
            if self.find(n) != n {
                continue;
            }
            if let Term::Record(slots) = self.term[n as usize].clone() {
                for (i, s) in slots.into_iter().enumerate() {
                    let r = self.find(s);
                    if let Term::Record(_) = self.term[r as usize] {
                        let mut d = Diagnostic::error(format!("record field `{}` holds a record", self.fields[i]))
                            .note("microc records cannot be nested; store a pointer to the inner record instead");
                        if let Some(o) = self.origin[r as usize] {
                            d = d.primary(o, "this record is stored in a field");
                        }
                        if let Some(o) = self.origin[n as usize] {
                            d = d.secondary(o, "of this record");
                        }
                        self.diags.push(d);
                    }
                }
            }
        }
        let program = self.program;
        for (fi, f) in program.functions.iter().enumerate() {
            f.walk_exprs(&mut |e| {
                if let ExprKind::Field(_, name) = &e.kind {
                    // A read of an absent field whose value nothing else
                    // constrains (so unification had no conflict).
                    let r = self.find(self.expr_base[fi] + e.id);
                    if let Term::Absent = self.term[r as usize] {
                        let name = &name.name;
                        let span = f.abs(e.span);
                        let mut d = Diagnostic::error(format!(
                            "record field `{name}` is read but this record has no field `{name}`"
                        ))
                        .primary(span, format!("`{name}` is read here"));
                        if let Some(o) = self.origin[r as usize].filter(|&o| o != span) {
                            d = d.secondary(o, format!("this record has no field `{name}`"));
                        }
                        self.diags.push(d.note(
                            "a record has the fields of the literal `{…}` that built it, and no others",
                        ));
                    }
                }
            });
        }
    }

    fn function_types(&mut self, fi: usize, f: &Function) -> FunctionTypes {
        let vars = f
            .params
            .iter()
            .chain(&f.locals)
            .map(|v| (v.name.clone(), self.export(self.var_nodes[fi][&v.name])))
            .collect();
        let exprs = (0..f.expr_count)
            .map(|i| self.export(self.expr_base[fi] + i))
            .collect();
        let ret = self.export(self.ret_nodes[fi]);
        FunctionTypes {
            name: f.name.name.clone(),
            vars,
            exprs,
            ret,
        }
    }

    fn export(&mut self, n: Node) -> Type {
        let mut stack = Vec::new();
        self.export_rec(n, &mut stack)
    }

    fn export_rec(&mut self, n: Node, stack: &mut Vec<Node>) -> Type {
        let r = self.find(n);
        if let Some(pos) = stack.iter().rposition(|&s| s == r) {
            return Type::Back((stack.len() - pos) as u32);
        }
        stack.push(r);
        let t = match self.term[r as usize].clone() {
            Term::Var | Term::Absent => Type::Unknown,
            Term::Int => Type::Int,
            Term::Ptr(x) => Type::Ptr(Box::new(self.export_rec(x, stack))),
            Term::Array(x) => Type::Array(Box::new(self.export_rec(x, stack))),
            Term::Record(slots) => {
                let mut fields = Vec::new();
                for (i, s) in slots.into_iter().enumerate() {
                    let rs = self.find(s);
                    if !matches!(self.term[rs as usize], Term::Absent) {
                        fields.push((self.fields[i].clone(), self.export_rec(s, stack)));
                    }
                }
                Type::Record(fields)
            }
        };
        stack.pop();
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse;

    fn check(src: &str) -> ProgramTypes {
        let (p, d) = parse(src);
        assert!(d.iter().all(|d| !d.is_error()), "{d:?}");
        check_program(&p)
    }
    fn errors(src: &str) -> Vec<String> {
        check(src)
            .diagnostics
            .into_iter()
            .filter(|d| d.is_error())
            .map(|d| d.message)
            .collect()
    }

    #[test]
    fn infers_pointers_arrays_records() {
        let t = check(
            "main(n, A) { var p, a, r, x; p = alloc n; a = [1, 2]; r = {f: p, g: 3}; x = *r.f + a[0] + A[n][0]; return x; }",
        );
        assert!(t.is_ok(), "{:?}", t.diagnostics);
        let m = t.function("main").unwrap();
        insta::assert_snapshot!(m.var("p").unwrap().to_string(), @"ptr(int)");
        insta::assert_snapshot!(m.var("a").unwrap().to_string(), @"array(int)");
        insta::assert_snapshot!(m.var("r").unwrap().to_string(), @"{f: ptr(int), g: int}");
        insta::assert_snapshot!(m.var("A").unwrap().to_string(), @"array(array(int))");
    }

    #[test]
    fn conflict_names_both_uses() {
        let t = check("main() { var x; x = 5; *x = 3; return 0; }");
        let d = &t.diagnostics[0];
        assert!(d.message.starts_with("type error"), "{d:?}");
        assert_eq!(d.labels.len(), 2, "{d:?}");
    }

    /// Found by the front-end fuzz test on a mutated program: the check of
    /// main's parameters followed the element type of `A` forever.
    #[test]
    fn an_input_array_that_holds_itself_is_an_error_not_a_hang() {
        let e = errors("main(A) { var b; b = [A]; b = A; return 0; }");
        assert!(e.iter().any(|m| m.contains("contains itself")), "{e:?}");
    }

    #[test]
    fn recursive_types_terminate() {
        let t = check(
            "main() { var p; p = alloc {next: null, v: 1}; (*p).next = p; p = (*p).next; return (*p).v; }",
        );
        assert!(t.is_ok(), "{:?}", t.diagnostics);
        assert_eq!(
            t.function("main").unwrap().var("p").unwrap().to_string(),
            "ptr({next: ^2, v: int})"
        );
    }

    #[test]
    fn field_through_pointer() {
        let t = check("main() { var p; p = alloc {v: 1}; p.v = 2; return p.v; }");
        assert!(t.is_ok(), "{:?}", t.diagnostics);
    }

    #[test]
    fn name_errors() {
        let e = errors("f(a) { return a; } main() { var x, x; y = f(1, 2); return g(); }");
        assert_eq!(e.len(), 4, "{e:?}");
    }

    #[test]
    fn nested_records_and_bad_main_params_are_rejected() {
        assert_eq!(
            errors("main() { var r; r = {a: {b: 1}}; return 0; }").len(),
            1
        );
        assert_eq!(errors("main(p) { var x; x = *p; return x; }").len(), 1);
        assert_eq!(errors("main(A) { A[0] = 1; return A[1]; }").len(), 1);
    }

    #[test]
    fn long_chains_type_check() {
        // Inference recurses over the expression tree: a chain of the
        // longest accepted length is that tall (run on the CLI's stack).
        crate::syntax::parser::on_big_stack(|| {
            let n = crate::syntax::parser::MAX_CHAIN_OPERANDS as usize;
            let t = check(&format!(
                "main(x, A) {{ var s, b; s = {}; b = {}; return s + b; }}",
                vec!["x"; n / 2].join(" - A[0] + "),
                vec!["x"; n].join(" && ")
            ));
            assert!(t.is_ok(), "{:?}", t.diagnostics);
            let m = t.function("main").unwrap();
            assert_eq!(m.var("A").unwrap().to_string(), "array(int)");
            let mut ops = vec!["x"; n];
            ops[n - 1] = "null";
            assert_eq!(
                errors(&format!("main(x) {{ return {}; }}", ops.join(" + "))).len(),
                1
            );
        });
    }

    /// The one error of `src`, with the text of its primary label and of
    /// its secondary labels.
    fn one_error(src: &str) -> (String, String, Vec<String>) {
        let t = check(src);
        let errs: Vec<&Diagnostic> = t.diagnostics.iter().filter(|d| d.is_error()).collect();
        assert_eq!(errs.len(), 1, "{errs:?}");
        let text = |l: &crate::syntax::diagnostic::Label| {
            src[l.span.start as usize..l.span.end as usize].to_string()
        };
        let primary: Vec<String> = errs[0]
            .labels
            .iter()
            .filter(|l| l.primary)
            .map(text)
            .collect();
        assert_eq!(primary.len(), 1, "{:?}", errs[0]);
        let secondary = errs[0]
            .labels
            .iter()
            .filter(|l| !l.primary)
            .map(text)
            .collect();
        (errs[0].message.clone(), primary[0].clone(), secondary)
    }

    #[test]
    fn a_missing_field_is_named_at_its_use() {
        // The report: "a missing record field is used where an integer is
        // expected", at the record literal, without the field's name.
        let read = "record field `b` is read but this record has no field `b`";
        for (src, use_) in [
            ("main() { var r; r = {a: 1}; return r.b + 1; }", "r.b"),
            ("main() { var r, x; r = {a: 1}; x = r.b; return x; }", "r.b"),
            // Nothing else constrains the value read.
            ("main() { var r, x; r = {a: 1}; x = r.b; return 0; }", "r.b"),
            // Through a pointer.
            ("main() { var p; p = alloc {a: 1}; return p.b; }", "p.b"),
        ] {
            assert_eq!(
                one_error(src),
                (
                    read.to_string(),
                    use_.to_string(),
                    vec!["{a: 1}".to_string()]
                ),
                "{src}"
            );
        }
        // Through a parameter: the use is in the callee.
        assert_eq!(
            one_error("f(r) { return r.b; } main() { return f({a: 1}); }"),
            (
                read.to_string(),
                "r.b".to_string(),
                vec!["{a: 1}".to_string()]
            )
        );
        assert_eq!(
            one_error("main() { var r; r = {a: 1}; r.b = 2; return r.a; }"),
            (
                "record field `b` is written but this record has no field `b`".to_string(),
                "r.b".to_string(),
                vec!["{a: 1}".to_string()]
            )
        );
        // Two records with different fields meet, no access involved.
        assert_eq!(
            one_error("main() { var r, q; r = {a: 1}; q = {b: 2, a: 3}; q = r; return 0; }"),
            (
                "records with different fields: one has `b`, the other has not".to_string(),
                "{a: 1}".to_string(),
                vec!["{b: 2, a: 3}".to_string()]
            )
        );
    }

    #[test]
    fn missing_field_and_array_equality() {
        assert_eq!(
            errors("main() { var r, x; r = {a: 1}; x = r.b; return 0; }").len(),
            1
        );
        assert_eq!(errors("main() { var a; a = [1]; return a == a; }").len(), 1);
    }
}
