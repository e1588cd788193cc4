//! A generated program (a small AST of its own), its printing, and the
//! builder that draws it (docs/generator.md §2).

use super::Params;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::Rng;
use std::fmt::Write;

/// A variable, by number: printed `var{n + 1}`, as in the thesis's listing 6.1.
pub type Var = usize;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    Num(i64),
    Var(Var),
    Input,
    /// `a[k]`, k a literal.
    Elem(Var, u32),
    Deref(Var),
    Bin(&'static str, Box<Expr>, Box<Expr>),
    Array(Vec<Expr>),
    Alloc(Box<Expr>),
    AddrOf(Var),
    Null,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    Var(Var),
    Elem(Var, u32),
    Deref(Var),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    Assign(Place, Expr),
    Output(Expr),
    If(Expr, Vec<Stmt>, Option<Vec<Stmt>>),
    While(Expr, Vec<Stmt>),
}

/// main: its variables (all declared first, as microc requires) and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub vars: usize,
    pub body: Vec<Stmt>,
}

// ---------------------------------------------------------------- printing

/// The program as microc source.
pub fn print(program: &Program) -> String {
    let mut out = String::from("main() {\n");
    if program.vars > 0 {
        let names: Vec<String> = (0..program.vars).map(name).collect();
        let _ = writeln!(out, "  var {};", names.join(", "));
    }
    print_stmts(&mut out, &program.body, 1);
    out.push_str("  return 0;\n}\n");
    out
}

fn name(v: Var) -> String {
    format!("var{}", v + 1)
}

fn print_stmts(out: &mut String, stmts: &[Stmt], depth: usize) {
    for s in stmts {
        print_stmt(out, s, depth);
    }
}

fn print_stmt(out: &mut String, s: &Stmt, depth: usize) {
    let pad = "  ".repeat(depth);
    match s {
        Stmt::Assign(p, e) => {
            let _ = writeln!(out, "{pad}{} = {};", place(p), expr(e));
        }
        Stmt::Output(e) => {
            let _ = writeln!(out, "{pad}output {};", expr(e));
        }
        Stmt::If(c, then, els) => {
            let _ = writeln!(out, "{pad}if ({}) {{", expr(c));
            print_stmts(out, then, depth + 1);
            if let Some(els) = els {
                let _ = writeln!(out, "{pad}}} else {{");
                print_stmts(out, els, depth + 1);
            }
            let _ = writeln!(out, "{pad}}}");
        }
        Stmt::While(c, body) => {
            let _ = writeln!(out, "{pad}while ({}) {{", expr(c));
            print_stmts(out, body, depth + 1);
            let _ = writeln!(out, "{pad}}}");
        }
    }
}

fn place(p: &Place) -> String {
    match p {
        Place::Var(v) => name(*v),
        Place::Elem(v, k) => format!("{}[{k}]", name(*v)),
        Place::Deref(v) => format!("*{}", name(*v)),
    }
}

/// Fully parenthesised below the top, so precedence never matters.
fn expr(e: &Expr) -> String {
    match e {
        Expr::Bin(op, a, b) => format!("{} {op} {}", operand(a), operand(b)),
        _ => operand(e),
    }
}

fn operand(e: &Expr) -> String {
    match e {
        Expr::Num(n) if *n < 0 => format!("({n})"),
        Expr::Num(n) => n.to_string(),
        Expr::Var(v) => name(*v),
        Expr::Input => "input".into(),
        Expr::Elem(v, k) => format!("{}[{k}]", name(*v)),
        Expr::Deref(v) => format!("*{}", name(*v)),
        Expr::Bin(..) => format!("({})", expr(e)),
        Expr::Array(xs) => {
            let xs: Vec<String> = xs.iter().map(expr).collect();
            format!("[{}]", xs.join(", "))
        }
        Expr::Alloc(e) => format!("alloc {}", operand(e)),
        Expr::AddrOf(v) => format!("&{}", name(*v)),
        Expr::Null => "null".into(),
    }
}

// ---------------------------------------------------------------- drawing

/// What a variable holds, fixed when it is made (microc infers one type
/// per variable).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    /// An array of integers; indices drawn for it stay below the length of
    /// the first array it held (the thesis's rule, listing 6.1).
    Array {
        initial_len: u32,
    },
    Pointer,
}

/// What a block may read and write: the variables assigned on every path
/// to here (in the order they were assigned, so draws are reproducible),
/// and the counters and bounds of the enclosing counted loops, which the
/// loops' bodies must not assign.
#[derive(Clone, Default)]
struct Scope {
    assigned: Vec<Var>,
    fixed: Vec<Var>,
}

impl Scope {
    fn assign(&mut self, v: Var) {
        if !self.assigned.contains(&v) {
            self.assigned.push(v);
        }
    }
}

/// The kinds of statement drawn uniformly (loops have their own
/// probabilities).
#[derive(Clone, Copy, Debug)]
enum Shape {
    AssignInt,
    AssignArray,
    AssignElem,
    AssignPointer,
    WriteThrough,
    Output,
    /// `if`, with an `else` half the time.
    If,
}

const SHAPES: [Shape; 7] = [
    Shape::AssignInt,
    Shape::AssignArray,
    Shape::AssignElem,
    Shape::AssignPointer,
    Shape::WriteThrough,
    Shape::Output,
    Shape::If,
];

/// Operands nest at most this deep in an expression.
const MAX_EXPR_DEPTH: u32 = 2;
/// Literals are drawn from 0..=MAX_LITERAL.
const MAX_LITERAL: i64 = 10;
/// Array literals have 1..=MAX_ARRAY_LEN elements.
const MAX_ARRAY_LEN: u64 = 6;
/// The thesis's main block also holds its declaration and its `return`
/// (its `FunBlockStmt.body`), which the error placement draws among.
const MAIN_EXTRA_STATEMENTS: usize = 2;

pub(super) struct Builder<'p> {
    params: &'p Params,
    rng: ChaCha8Rng,
    kinds: Vec<Kind>,
}

impl<'p> Builder<'p> {
    pub(super) fn new(params: &'p Params, rng: ChaCha8Rng) -> Builder<'p> {
        Builder {
            params,
            rng,
            kinds: Vec::new(),
        }
    }

    /// main's body, after an assignment to each of its variables (as the
    /// thesis's main starts); then, if asked, the failing statement
    /// plugged in.
    pub(super) fn program(mut self) -> Program {
        let count = self.count(self.params.max_top_lvl_stmts_count);
        let drawn = self.block(0, &mut Scope::default(), count);
        let mut body = self.initialisations();
        body.extend(drawn);
        if self.params.error_guaranteed {
            self.plug_error(&mut body);
        }
        Program {
            vars: self.kinds.len(),
            body,
        }
    }

    // ---- randomness: every draw goes through these, in program order.

    fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n.max(1)
    }

    /// A uniform float in [0, 1) from 53 random bits.
    fn unit(&mut self) -> f64 {
        ((self.rng.next_u64() >> 11) as f64) / ((1u64 << 53) as f64)
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }

    /// 1..=most, uniformly.
    fn count(&mut self, most: u32) -> usize {
        1 + self.below(most as u64) as usize
    }

    fn literal(&mut self) -> Expr {
        Expr::Num(self.below(MAX_LITERAL as u64 + 1) as i64)
    }

    fn fresh(&mut self, kind: Kind) -> Var {
        self.kinds.push(kind);
        self.kinds.len() - 1
    }

    /// The assigned variables of a kind (`readable`) or those a statement
    /// may also write (`writable`: not a loop's counter or bound).
    fn vars(&self, scope: &Scope, writable: bool, want: fn(Kind) -> bool) -> Vec<Var> {
        (scope.assigned.iter().copied())
            .filter(|v| want(self.kinds[*v]))
            .filter(|v| !writable || !scope.fixed.contains(v))
            .collect()
    }

    // ---- statements

    /// `varN = constant;` for every variable, in order, as the thesis's
    /// generator starts main (docs/generator.md §2): an integer in
    /// `-1..=8`, an array of the length its indices are drawn below, or
    /// `alloc` of an integer. Drawn after the body, which makes the
    /// variables.
    fn initialisations(&mut self) -> Vec<Stmt> {
        (0..self.kinds.len())
            .map(|v| {
                let value = match self.kinds[v] {
                    Kind::Int => self.initial_int(),
                    Kind::Array { initial_len } => Expr::Array(
                        (0..initial_len.max(1))
                            .map(|_| self.initial_int())
                            .collect(),
                    ),
                    Kind::Pointer => Expr::Alloc(Box::new(self.initial_int())),
                };
                Stmt::Assign(Place::Var(v), value)
            })
            .collect()
    }

    /// The thesis's initial integers: `-1..=8`.
    fn initial_int(&mut self) -> Expr {
        Expr::Num(self.below(10) as i64 - 1)
    }

    fn block(&mut self, depth: u32, scope: &mut Scope, count: usize) -> Vec<Stmt> {
        let mut out = Vec::new();
        for _ in 0..count {
            self.stmt(depth, scope, &mut out);
        }
        out
    }

    /// A block nested in a compound statement: what it assigns is not
    /// assigned after it (it may not run).
    fn nested(&mut self, depth: u32, scope: &Scope) -> Vec<Stmt> {
        let count = self.count(self.params.max_stmts_within_a_block);
        self.block(depth + 1, &mut scope.clone(), count)
    }

    fn stmt(&mut self, depth: u32, scope: &mut Scope, out: &mut Vec<Stmt>) {
        if depth < self.params.max_block_depth {
            let (for_p, while_p) = (self.params.for_loop_gen_prob, self.params.loop_gen_prob);
            let r = self.unit();
            if r < for_p {
                return self.counted_loop(depth, scope, out);
            }
            if r < for_p + while_p {
                let guard = self.condition(scope);
                let body = self.nested(depth, scope);
                return out.push(Stmt::While(guard, body));
            }
        }
        let shapes: Vec<Shape> = (SHAPES.iter().copied())
            .filter(|s| self.possible(*s, depth, scope))
            .collect();
        let shape = self.pick(&shapes);
        let s = self.simple(shape, depth, scope);
        out.push(s);
    }

    fn possible(&self, shape: Shape, depth: u32, scope: &Scope) -> bool {
        match shape {
            Shape::AssignElem => !self.vars(scope, true, is_array).is_empty(),
            Shape::WriteThrough => !self.vars(scope, true, is_pointer).is_empty(),
            Shape::If => depth < self.params.max_block_depth,
            _ => true,
        }
    }

    fn simple(&mut self, shape: Shape, depth: u32, scope: &mut Scope) -> Stmt {
        match shape {
            Shape::AssignInt => {
                let value = self.expr(scope, 0);
                let v = self.target(scope, Kind::Int, is_int);
                Stmt::Assign(Place::Var(v), value)
            }
            Shape::AssignArray => self.assign_array(scope),
            Shape::AssignElem => {
                let a = self.pick(&self.vars(scope, true, is_array));
                let k = self.index(a);
                Stmt::Assign(Place::Elem(a, k), self.expr(scope, 0))
            }
            Shape::AssignPointer => {
                let value = self.pointer_value(scope);
                let p = self.target(scope, Kind::Pointer, is_pointer);
                Stmt::Assign(Place::Var(p), value)
            }
            Shape::WriteThrough => {
                let p = self.pick(&self.vars(scope, true, is_pointer));
                Stmt::Assign(Place::Deref(p), self.expr(scope, 0))
            }
            Shape::Output => Stmt::Output(self.expr(scope, 0)),
            Shape::If => {
                let c = self.condition(scope);
                let then = self.nested(depth, scope);
                let els = (self.below(2) == 0).then(|| self.nested(depth, scope));
                Stmt::If(c, then, els)
            }
        }
    }

    /// The variable an assignment writes: an assigned one of the kind
    /// (not a loop's counter or bound), or a new one; marked assigned.
    fn target(&mut self, scope: &mut Scope, kind: Kind, want: fn(Kind) -> bool) -> Var {
        let olds = self.vars(scope, true, want);
        let i = self.below(olds.len() as u64 + 1) as usize;
        let v = olds.get(i).copied().unwrap_or_else(|| self.fresh(kind));
        scope.assign(v);
        v
    }

    /// `a = [e, …]`: a new array (its first length bounds its indices) or
    /// an old one rebound, possibly to a shorter array (listing 6.1).
    fn assign_array(&mut self, scope: &mut Scope) -> Stmt {
        let len = 1 + self.below(MAX_ARRAY_LEN);
        let elems = (0..len).map(|_| self.expr(scope, 1)).collect();
        let a = self.target(scope, Kind::Array { initial_len: 0 }, is_array);
        if let Kind::Array { initial_len: 0 } = self.kinds[a] {
            self.kinds[a] = Kind::Array {
                initial_len: len as u32,
            };
        }
        Stmt::Assign(Place::Var(a), Expr::Array(elems))
    }

    /// `alloc e` or `&x`. No `null`: a random one makes null dereferences
    /// common, while the thesis's sets without plugged errors have few
    /// errors (docs/generator.md §2); `null` comes with a plugged error.
    fn pointer_value(&mut self, scope: &Scope) -> Expr {
        let ints = self.vars(scope, false, is_int);
        if ints.is_empty() || self.below(2) == 0 {
            Expr::Alloc(Box::new(self.expr(scope, MAX_EXPR_DEPTH)))
        } else {
            Expr::AddrOf(self.pick(&ints))
        }
    }

    fn index(&mut self, array: Var) -> u32 {
        match self.kinds[array] {
            Kind::Array { initial_len } => self.below(initial_len as u64) as u32,
            _ => unreachable!("indexing only arrays"),
        }
    }

    /// `while (i < n) { body; i = i + 1; }`: the thesis's iterative loop.
    /// The counter and the bound are integer variables of the program (a
    /// new one, assigned just before, when there are too few), and the
    /// body writes neither.
    fn counted_loop(&mut self, depth: u32, scope: &mut Scope, out: &mut Vec<Stmt>) {
        let counter = self.loop_variable(scope, None, out);
        let bound = self.loop_variable(scope, Some(counter), out);
        let mut inner = scope.clone();
        inner.fixed.extend([counter, bound]);
        let mut body = self.nested(depth, &inner);
        let step = Expr::Bin("+", Box::new(Expr::Var(counter)), Box::new(Expr::Num(1)));
        body.push(Stmt::Assign(Place::Var(counter), step));
        let guard = Expr::Bin(
            "<",
            Box::new(Expr::Var(counter)),
            Box::new(Expr::Var(bound)),
        );
        out.push(Stmt::While(guard, body));
    }

    fn loop_variable(&mut self, scope: &mut Scope, not: Option<Var>, out: &mut Vec<Stmt>) -> Var {
        let ints: Vec<Var> = (self.vars(scope, true, is_int).into_iter())
            .filter(|v| Some(*v) != not)
            .collect();
        if !ints.is_empty() {
            return self.pick(&ints);
        }
        let value = self.expr(scope, 0);
        let v = self.fresh(Kind::Int);
        scope.assign(v);
        out.push(Stmt::Assign(Place::Var(v), value));
        v
    }

    // ---- expressions

    fn condition(&mut self, scope: &Scope) -> Expr {
        let op = self.pick(&["==", "!=", "<", ">", "<=", ">="]);
        let (a, b) = (self.expr(scope, 1), self.expr(scope, 1));
        Expr::Bin(op, Box::new(a), Box::new(b))
    }

    /// An integer expression over assigned variables, uniformly one of the
    /// forms that are possible here.
    fn expr(&mut self, scope: &Scope, depth: u32) -> Expr {
        let ints = self.vars(scope, false, is_int);
        let arrays = self.vars(scope, false, is_array);
        let pointers = self.vars(scope, false, is_pointer);
        let mut forms = vec!['n', 'i'];
        for (form, there) in [('v', &ints), ('a', &arrays), ('p', &pointers)] {
            if !there.is_empty() {
                forms.push(form);
            }
        }
        if depth < MAX_EXPR_DEPTH {
            forms.push('b');
        }
        match self.pick(&forms) {
            'n' => self.literal(),
            'i' => Expr::Input,
            'v' => Expr::Var(self.pick(&ints)),
            'a' => {
                let a = self.pick(&arrays);
                Expr::Elem(a, self.index(a))
            }
            'p' => Expr::Deref(self.pick(&pointers)),
            _ => self.binary(scope, depth),
        }
    }

    fn binary(&mut self, scope: &Scope, depth: u32) -> Expr {
        let ops: &[&'static str] = if self.params.generate_divisions {
            &["+", "-", "*", "/"]
        } else {
            &["+", "-", "*"]
        };
        let op = self.pick(ops);
        let a = self.expr(scope, depth + 1);
        let b = self.expr(scope, depth + 1);
        Expr::Bin(op, Box::new(a), Box::new(b))
    }

    // ---- errorGuaranteed

    /// Plugs a statement that fails wherever it runs where the thesis's
    /// generator plugs it (docs/generator.md §2): into main's top level, at
    /// an index drawn below the length of a block found by descending from
    /// main's body. It may be unreachable (behind a loop that never ends),
    /// as the thesis says. The statement is a division by zero, an index
    /// past a new array's end, or a read through null.
    fn plug_error(&mut self, body: &mut Vec<Stmt>) {
        let len = self.drawn_block_len(body, MAIN_EXTRA_STATEMENTS);
        let at = (self.below(len as u64) as usize).min(body.len());
        let failing = self.failing_statements();
        body.splice(at..at, failing);
    }

    /// The thesis's descent: a statement of the block drawn uniformly; into
    /// an `if`'s then-block (its else-block when the then-block is empty)
    /// or a loop's body, otherwise this block is the one. Its length,
    /// counting `extra` statements that are never descended into.
    fn drawn_block_len(&mut self, block: &[Stmt], extra: usize) -> usize {
        let len = block.len() + extra;
        if len == 0 {
            return 0;
        }
        let inner = match block.get(self.below(len as u64) as usize) {
            Some(Stmt::If(_, then, _)) if !then.is_empty() => Some(then),
            Some(Stmt::If(_, _, Some(els))) if !els.is_empty() => Some(els),
            Some(Stmt::While(_, body)) if !body.is_empty() => Some(body),
            _ => None,
        };
        match inner {
            Some(inner) => self.drawn_block_len(inner, 0),
            None => len,
        }
    }

    fn failing_statements(&mut self) -> Vec<Stmt> {
        let into = self.fresh(Kind::Int);
        match self.below(3) {
            0 => {
                let e = Expr::Bin("/", Box::new(self.literal()), Box::new(Expr::Num(0)));
                vec![Stmt::Assign(Place::Var(into), e)]
            }
            1 => {
                let len = 1 + self.below(MAX_ARRAY_LEN) as u32;
                let a = self.fresh(Kind::Array { initial_len: len });
                let elems = (0..len).map(|_| self.literal()).collect();
                vec![
                    Stmt::Assign(Place::Var(a), Expr::Array(elems)),
                    Stmt::Assign(Place::Var(into), Expr::Elem(a, len)),
                ]
            }
            _ => {
                let p = self.fresh(Kind::Pointer);
                vec![
                    Stmt::Assign(Place::Var(p), Expr::Null),
                    Stmt::Assign(Place::Var(into), Expr::Deref(p)),
                ]
            }
        }
    }
}

fn is_int(k: Kind) -> bool {
    k == Kind::Int
}

fn is_array(k: Kind) -> bool {
    matches!(k, Kind::Array { .. })
}

fn is_pointer(k: Kind) -> bool {
    k == Kind::Pointer
}
