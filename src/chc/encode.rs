//! The inlined flowgraph as constrained Horn clauses (docs/horn-clauses.md):
//! over the program's state (integer variables, whether a local is
//! assigned where that is asked, main's input arrays and the input stream
//! as SMT arrays), a rule per edge between the entry and the target's
//! error vertices, then every vertex but the loop headers removed by
//! resolution; the query "an error vertex is reached" has head `false`.
//!
//! The encoding over-approximates the runs: integers and input arrays are
//! exact; values in shared local arrays, records and behind most pointers
//! are unknown (see `State`). So an invariant of the clauses is one of the
//! program.

use super::arrays;
use super::cells::Followed;
use super::dead;
use super::slice;
use crate::ir::{self, BinOp, Body, CmpOp, Cond, Expr, Instr, NodeId, Place, VarId, VarKind};
use crate::smt::smtlib;
use crate::syntax::ast::UnOp;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write;

/// A slot of the state the predicates range over.
#[derive(Clone, Debug)]
pub struct StateVar {
    /// The SMT name of its current value (`x3`, `init3`).
    pub name: String,
    pub sort: String,
    /// What it is, for people (`n`, `init(x)`).
    pub label: String,
}

/// One Horn clause, `∀ vars. body → head`, kept apart so the certificate
/// checks can assert its negation without the quantifier.
#[derive(Clone, Debug)]
pub struct Clause {
    /// Declarations (name, sort) of every variable the clause uses.
    pub vars: Vec<(String, String)>,
    pub body: String,
    pub head: String,
    /// Which edge (or `entry`, `query`) it encodes.
    pub origin: String,
}

/// The clauses of one target.
#[derive(Clone, Debug)]
pub struct Encoding {
    pub state: Vec<StateVar>,
    /// The predicates, by vertex.
    pub predicates: Vec<NodeId>,
    pub clauses: Vec<Clause>,
    /// The same clauses as steps from vertex to vertex, for unrolling.
    pub(super) rules: Vec<Rule>,
    /// Whether the clauses multiply or divide two unknowns (exact
    /// arithmetic), or left such a product or quotient unknown (linear).
    pub nonlinear: bool,
    /// Whether the clauses left unknown the cells of an array they could
    /// follow, which a guard reads ([`Cells::Unknown`]).
    pub cells_left_unknown: bool,
}

/// How the clauses read what is not plain integer state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    pub arithmetic: Arithmetic,
    pub inputs: Inputs,
    pub cells: Cells,
}

impl Reading {
    /// The most precise reading, with the input stream for unrolling.
    pub const EXACT: Reading = Reading {
        arithmetic: Arithmetic::Exact,
        inputs: Inputs::Stream,
        cells: Cells::Followed,
    };
}

/// How the clauses read a product or a quotient of two unknowns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arithmetic {
    /// As it is: `(* x y)`, `(tdiv x y)`. Spacer often gives up on these.
    Exact,
    /// As an unknown value: the clauses stay linear and over-approximate
    /// the runs more, so their checked invariant is still a proof
    /// (docs/horn-clauses.md §2).
    Linear,
}

/// How the clauses read `input`, which lowering makes `$in[$ic]` with
/// `$ic` counted up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inputs {
    /// From the input stream `$in`, an SMT array, at the counter `$ic`:
    /// both are state, so that a counterexample's first state says what
    /// the run read (`unroll`).
    Stream,
    /// Each read an unknown value. As no index of the stream is read
    /// twice, the runs are the same; the predicates lose an array and a
    /// counter, which is what Spacer's invariants are spared: with the
    /// array it may leave `∃` in them (docs/horn-clauses.md §2).
    Unknown,
}

/// How the clauses read the cells of the local arrays that nothing else
/// reaches (`arrays`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cells {
    /// As state, where a guard reads them.
    Followed,
    /// As unknown values: fewer slots, which Spacer often proves faster
    /// with when the cells do not matter; a counterexample is then
    /// refined with them (docs/horn-clauses.md §2).
    Unknown,
}

impl Encoding {
    /// Whether some clause leads to the error (has head `false`): without
    /// one, the target is unreachable under any invariant.
    pub fn has_query(&self) -> bool {
        self.rules.iter().any(|r| r.to.is_none())
    }

    /// The SMT name of variable `v`'s value in the state, if it is kept.
    pub fn value_name(&self, v: VarId) -> Option<&str> {
        let name = value_name(v);
        (self.state.iter())
            .find(|s| s.name == name)
            .map(|s| s.name.as_str())
    }

    /// `(P7 x0 x1 …)` over `args`.
    fn app(node: NodeId, args: &[String]) -> String {
        if args.is_empty() {
            return predicate_name(node);
        }
        format!("({} {})", predicate_name(node), args.join(" "))
    }

    /// The script for Z3's fixed-point engine: declarations, clauses,
    /// `(check-sat)` and `(get-model)`.
    pub fn script(&self, options: &[String]) -> String {
        let mut out = String::from("(set-logic HORN)\n");
        for o in options {
            out.push_str(o);
            out.push('\n');
        }
        let _ = writeln!(out, "; state: {}", self.legend());
        out.push_str(&self.definitions());
        let sorts: Vec<&str> = self.state.iter().map(|v| v.sort.as_str()).collect();
        for &p in &self.predicates {
            let _ = writeln!(
                out,
                "(declare-fun {} ({}) Bool)",
                predicate_name(p),
                sorts.join(" ")
            );
        }
        for c in &self.clauses {
            let _ = writeln!(out, "; {}", c.origin);
            let decls: Vec<String> = c.vars.iter().map(|(n, s)| format!("({n} {s})")).collect();
            let implication = format!("(=> {} {})", c.body, c.head);
            if decls.is_empty() {
                let _ = writeln!(out, "(assert {implication})");
            } else {
                let _ = writeln!(out, "(assert (forall ({}) {implication}))", decls.join(" "));
            }
        }
        out.push_str("(check-sat)\n(get-model)\n");
        out
    }

    /// The helper functions the clauses use: `tdiv` where they divide
    /// (only then: an unused definition with `div` changes Z3's strategy).
    pub fn definitions(&self) -> String {
        let divides =
            (self.clauses.iter()).any(|c| c.body.contains("(tdiv ") || c.head.contains("(tdiv "));
        if divides {
            format!("{}\n", smtlib::truncating_division())
        } else {
            String::new()
        }
    }

    /// A predicate's parameter list for a `define-fun`: `(s0 Int) (s1 …)`.
    pub fn parameters(&self) -> String {
        let params: Vec<String> = (self.state.iter().enumerate())
            .map(|(k, v)| format!("(s{k} {})", v.sort))
            .collect();
        params.join(" ")
    }

    /// Which SMT name is which program variable.
    pub fn legend(&self) -> String {
        let parts: Vec<String> = self
            .state
            .iter()
            .map(|v| format!("{} = {}", v.name, v.label))
            .collect();
        parts.join(", ")
    }
}

/// A product of two non-literals, or a quotient by a non-literal: beyond
/// linear arithmetic.
fn is_nonlinear(op: BinOp, a: &Expr, b: &Expr) -> bool {
    let literal = |e: &Expr| matches!(e, Expr::Int(_));
    match op {
        BinOp::Mul => !literal(a) && !literal(b),
        BinOp::Div => !literal(b),
        BinOp::Add | BinOp::Sub => false,
    }
}

/// The state's name for variable `v`'s value.
fn value_name(v: VarId) -> String {
    format!("x{v}")
}

/// The name of a vertex's predicate.
pub fn predicate_name(node: NodeId) -> String {
    format!("P{node}")
}

/// The clauses for reaching any of `errors` (the error vertices of a
/// target's copies: one per inlined call site, and those in callees cut by
/// recursion), or why the program cannot be encoded.
pub fn encode(body: &Body, errors: &[NodeId]) -> Result<Encoding, String> {
    encode_as(body, errors, Reading::EXACT)
}

/// [`encode`], with products and quotients of unknowns, `input` and array
/// cells read as `reading` says.
pub fn encode_as(body: &Body, errors: &[NodeId], reading: Reading) -> Result<Encoding, String> {
    let takeable: Vec<bool> = body.edges.iter().map(|e| !never_taken(e)).collect();
    let relevant = between(body, &takeable, errors);
    if !errors.iter().any(|e| relevant[*e as usize]) {
        // No path at all: no clause, and every check holds.
        return Ok(Encoding {
            state: vec![],
            predicates: vec![],
            clauses: vec![],
            rules: vec![],
            nonlinear: false,
            cells_left_unknown: false,
        });
    }
    let edges: Vec<&ir::Edge> = (body.edges.iter().zip(&takeable))
        .filter(|(e, takeable)| **takeable && relevant[e.from as usize] && relevant[e.to as usize])
        .map(|(e, _)| e)
        .collect();
    let state = State::of(body, &edges, reading);
    let mut rules = vec![state.entry_rule(body.entry)];
    for e in &edges {
        rules.push(state.edge_rule(body, e));
    }
    for &error in errors.iter().filter(|e| relevant[**e as usize]) {
        rules.push(Rule {
            vars: state.decls(),
            from: Some(error),
            guards: vec![],
            to: None,
            args: vec![],
            origin: format!("query: the target's error vertex {error}"),
        });
    }
    // Large blocks: a predicate at each loop header only. (Z3 would
    // inline the others itself, and then define them with ∃, which the
    // quantifier-free certificate checks cannot take.)
    let headers: BTreeSet<NodeId> = body
        .loops
        .iter()
        .map(|l| l.header)
        .filter(|h| relevant[*h as usize])
        .collect();
    let mut rules = eliminate(rules, &headers, &state.names())?;
    let live = dead::forget_dead(&mut rules, &state.decls());
    // A block whose guard is `false` cannot run: it holds under any
    // invariant, and a query made of such blocks only is no query.
    rules.retain(|r| !r.guards.iter().any(|g| g == "false"));
    let state_vars = dead::drop_unread_slots(&mut rules, &state.vars, &live);
    let names: Vec<String> = state_vars.iter().map(|v| v.name.clone()).collect();
    let clauses = rules.iter().map(|r| r.clause(&names)).collect();
    Ok(Encoding {
        state: state_vars,
        predicates: headers.into_iter().collect(),
        clauses,
        rules,
        nonlinear: state.nonlinear.get(),
        cells_left_unknown: state.cells_left_unknown,
    })
}

/// A clause under construction: `P_from(x⃗) ∧ guards → P_to(args)`, with
/// no `P_from` for a fact and `false` for no `P_to`.
#[derive(Clone, Debug)]
pub(super) struct Rule {
    pub(super) vars: Vec<(String, String)>,
    pub(super) from: Option<NodeId>,
    pub(super) guards: Vec<String>,
    pub(super) to: Option<NodeId>,
    pub(super) args: Vec<String>,
    origin: String,
}

impl Rule {
    fn clause(&self, names: &[String]) -> Clause {
        let mut parts: Vec<String> = self
            .from
            .map(|f| Encoding::app(f, names))
            .into_iter()
            .collect();
        parts.extend(self.guards.iter().cloned());
        let body = match parts.len() {
            0 => "true".to_string(),
            1 => parts.remove(0),
            _ => format!("(and {})", parts.join(" ")),
        };
        let head = match self.to {
            Some(t) => Encoding::app(t, &self.args),
            None => "false".into(),
        };
        Clause {
            vars: self.vars.clone(),
            body,
            head,
            origin: self.origin.clone(),
        }
    }

    /// The length of its guards' and arguments' text.
    fn text_len(&self) -> usize {
        self.guards.iter().chain(&self.args).map(String::len).sum()
    }

    /// `self` then `next` (whose `from` is `self`'s `to`): `next`'s guards
    /// and arguments read the state `self` leaves, bound by a `let`.
    fn then(&self, next: &Rule, names: &[String], slot_of: &HashMap<&str, usize>) -> Rule {
        // Only the slots `self` changes are bound; a slot read as it is
        // becomes `self`'s value directly.
        let binds: Vec<(&String, &String)> = names
            .iter()
            .zip(&self.args)
            .filter(|(n, a)| n != a)
            .collect();
        let after = |text: &String| {
            if let Some(&k) = slot_of.get(text.as_str()) {
                return self.args[k].clone();
            }
            // Only the slots the text reads: binding all of them made the
            // text grow with every composed step (a straight run of
            // assignments before a loop).
            let read = symbols(text);
            let used: Vec<String> = (binds.iter())
                .filter(|(n, _)| read.contains(n.as_str()))
                .map(|(n, a)| format!("({n} {a})"))
                .collect();
            if used.is_empty() {
                text.clone()
            } else {
                format!("(let ({}) {text})", used.join(" "))
            }
        };
        let mut vars = self.vars.clone();
        let known: HashSet<&str> = self.vars.iter().map(|(n, _)| n.as_str()).collect();
        vars.extend(
            (next.vars.iter())
                .filter(|(n, _)| !known.contains(n.as_str()))
                .cloned(),
        );
        let mut guards = self.guards.clone();
        guards.extend(next.guards.iter().map(after));
        Rule {
            vars,
            from: self.from,
            guards,
            to: next.to,
            args: next.args.iter().map(after).collect(),
            origin: format!("{}; {}", self.origin, next.origin),
        }
    }
}

/// The symbols an SMT-LIB text mentions.
fn symbols(text: &str) -> HashSet<&str> {
    (dead::tokens(text))
        .filter(|token| *token != "(" && *token != ")")
        .collect()
}

/// The most text the composed clauses may have: a program whose blocks
/// hold too many paths is refused rather than sent.
const MAX_CLAUSE_TEXT: usize = 4 << 20;

/// Removes every predicate but `keep`'s by resolution: each rule into a
/// vertex is composed with each rule out of it.
fn eliminate(
    mut rules: Vec<Rule>,
    keep: &BTreeSet<NodeId>,
    names: &[String],
) -> Result<Vec<Rule>, String> {
    let slot_of: HashMap<&str, usize> = (names.iter().enumerate())
        .map(|(k, n)| (n.as_str(), k))
        .collect();
    let mut nodes: Vec<NodeId> = rules.iter().filter_map(|r| r.to).collect();
    nodes.sort_unstable();
    nodes.dedup();
    // The clauses' text, kept up to date: summing it anew at every vertex
    // took longer than the composition itself on large programs.
    let mut size: usize = rules.iter().map(Rule::text_len).sum();
    for node in nodes.into_iter().filter(|n| !keep.contains(n)) {
        crate::deadline::tick();
        let (ins, rest): (Vec<Rule>, Vec<Rule>) =
            rules.into_iter().partition(|r| r.to == Some(node));
        let (outs, mut rest): (Vec<Rule>, Vec<Rule>) =
            rest.into_iter().partition(|r| r.from == Some(node));
        size -= ins.iter().chain(&outs).map(Rule::text_len).sum::<usize>();
        for i in &ins {
            for o in &outs {
                crate::deadline::tick();
                let composed = i.then(o, names, &slot_of);
                size += composed.text_len();
                if size > MAX_CLAUSE_TEXT {
                    return Err(
                        "unsupported: too many paths between loop headers for the Horn encoding"
                            .into(),
                    );
                }
                rest.push(composed);
            }
        }
        rules = rest;
    }
    Ok(rules)
}

/// Whether no run takes the edge: its guard fails by its form alone.
fn never_taken(e: &ir::Edge) -> bool {
    matches!(&e.instr, Instr::Assume(c) if c.never_holds())
}

/// The vertices on some path from the entry to one of `to`, through the
/// edges `takeable` marks.
fn between(body: &Body, takeable: &[bool], to: &[NodeId]) -> Vec<bool> {
    let n = body.node_count as usize;
    let (mut fwd, mut bwd) = (vec![Vec::new(); n], vec![Vec::new(); n]);
    for (e, _) in body.edges.iter().zip(takeable).filter(|(_, t)| **t) {
        fwd[e.from as usize].push(e.to);
        bwd[e.to as usize].push(e.from);
    }
    let reach = |starts: &[NodeId], adj: &[Vec<NodeId>]| {
        let mut seen = vec![false; n];
        let mut stack = starts.to_vec();
        for s in starts {
            seen[*s as usize] = true;
        }
        while let Some(v) = stack.pop() {
            for &w in &adj[v as usize] {
                if !seen[w as usize] {
                    seen[w as usize] = true;
                    stack.push(w);
                }
            }
        }
        seen
    };
    let (a, b) = (reach(&[body.entry], &fwd), reach(to, &bwd));
    a.iter().zip(&b).map(|(x, y)| *x && *y).collect()
}

/// The program state as predicate arguments.
///
/// Integers and input arrays are state, and so are a local array's length,
/// the cells of a pointer or a local array that nothing else reaches
/// (`cells`, `arrays`). Other pointers, records and arrays are not: what is
/// read from them is an unknown value, a write through a pointer may
/// change every integer whose address is taken, and a call left by
/// recursion may change what it can reach. That over-approximates every
/// run, so an invariant stays a proof; it only proves less.
struct State {
    vars: Vec<StateVar>,
    /// The position of each variable's value in `vars`, by variable.
    value: Vec<Option<usize>>,
    /// The position of each local's "assigned" flag.
    init: Vec<Option<usize>>,
    /// Input arrays (read-only, never in a clause's update).
    input_arrays: Vec<bool>,
    /// Integer variables whose address is taken.
    address_taken: Vec<VarId>,
    /// The position of each local array's length (of the array it holds
    /// now), for its bounds checks.
    len: Vec<Option<usize>>,
    /// The cells of each followed local array (`arrays`): the position of
    /// its first cell, and how many follow.
    elems: Vec<Option<(usize, usize)>>,
    /// The pointers whose cell is followed (`cells`): the position of
    /// each one's cell value and, when it may hold an address, its tag.
    cell: Vec<Option<usize>>,
    tag: Vec<Option<usize>>,
    followed: Followed,
    arithmetic: Arithmetic,
    /// Whether `Cells::Unknown` left out cells that `Cells::Followed` keeps.
    cells_left_unknown: bool,
    /// Set when an edge multiplies or divides two unknowns.
    nonlinear: std::cell::Cell<bool>,
}

/// The unknown values one clause introduces.
#[derive(Default)]
struct Fresh {
    vars: Vec<(String, String)>,
    tag: String,
    /// The expressions the clause's edge reads but the encoding does not
    /// follow (memory, products left unknown), each with its unknown: one
    /// instruction writes nothing while it reads, so the same read twice
    /// (`*p >= *p`) is the same value.
    unfollowed: Vec<(Expr, String)>,
}

impl Fresh {
    /// The unknown value of an expression the encoding does not follow.
    fn unknown_of(&mut self, e: &Expr) -> String {
        if let Some((_, name)) = self.unfollowed.iter().find(|(r, _)| r == e) {
            return name.clone();
        }
        let name = self.int();
        self.unfollowed.push((e.clone(), name.clone()));
        name
    }

    fn int(&mut self) -> String {
        self.of_sort("Int")
    }

    fn of_sort(&mut self, sort: &str) -> String {
        let name = format!("u{}.{}", self.tag, self.vars.len());
        self.vars.push((name.clone(), sort.into()));
        name
    }
}

impl State {
    /// The variables the edges use that the state holds: integers and
    /// input arrays.
    fn of(body: &Body, edges: &[&ir::Edge], reading: Reading) -> State {
        let Reading {
            arithmetic,
            inputs,
            cells,
        } = reading;
        let mut used = BTreeSet::new();
        // Whether a local holds a value is state only where it is asked.
        let mut asked = BTreeSet::new();
        for e in edges {
            instr_vars(&e.instr, &mut used);
            if let Instr::Assume(Cond::Initialized {
                place: Place::Var(v),
                ..
            })
            | Instr::Assert(
                Cond::Initialized {
                    place: Place::Var(v),
                    ..
                },
                _,
            ) = &e.instr
            {
                asked.insert(*v);
            }
        }
        let n = body.vars.len();
        let mut s = State {
            vars: vec![],
            value: vec![None; n],
            init: vec![None; n],
            input_arrays: vec![false; n],
            address_taken: vec![],
            len: vec![None; n],
            elems: vec![None; n],
            cell: vec![None; n],
            tag: vec![None; n],
            followed: Followed::default(),
            arithmetic,
            cells_left_unknown: false,
            nonlinear: Default::default(),
        };
        let copies = input_copies(body, edges);
        let followed_arrays = arrays::followed(body, edges);
        let slice::Kept {
            vars: mut kept,
            cells: kept_cells,
        } = slice::influencing(body, edges, &followed_arrays, inputs == Inputs::Unknown);
        if inputs == Inputs::Unknown {
            // `$in[$ic]` is then an unknown (`expr`), and `$ic` only
            // counts reads.
            for name in [ir::INPUT_STREAM, ir::INPUT_COUNTER] {
                if let Some(v) = body.var_id(name) {
                    kept[v as usize] = false;
                }
            }
        }
        // In the order first taken, which the clauses' unknowns follow.
        let mut taken: Vec<VarId> = Vec::new();
        for e in edges {
            address_taken(&e.instr, &mut |v| {
                if !taken.contains(&v) {
                    taken.push(v);
                }
            });
        }
        for &v in used.iter().filter(|v| kept[**v as usize]) {
            let info = body.var(v);
            let input = info.is_input() || copies[v as usize];
            let sort = match info.ty.array_depth() {
                Some(depth) if input => array_sort(depth),
                _ if info.ty.is_int() => "Int".to_string(),
                Some(_) if !taken.contains(&v) => {
                    s.add_length(v, &info.name);
                    if let (Some(width), true) =
                        (followed_arrays[v as usize], kept_cells[v as usize])
                    {
                        match cells {
                            Cells::Followed => s.add_cells(v, &info.name, width),
                            Cells::Unknown => s.cells_left_unknown = true,
                        }
                    }
                    continue;
                }
                _ => continue,
            };
            s.input_arrays[v as usize] = input;
            s.value[v as usize] = Some(s.vars.len());
            s.vars.push(StateVar {
                name: value_name(v),
                sort,
                label: info.name.clone(),
            });
            if matches!(info.kind, VarKind::Local | VarKind::Temp) && asked.contains(&v) {
                s.init[v as usize] = Some(s.vars.len());
                s.vars.push(StateVar {
                    name: format!("init{v}"),
                    sort: "Int".into(),
                    label: format!("init({})", info.name),
                });
            }
        }
        s.address_taken = (taken.into_iter())
            .filter(|v| s.value[*v as usize].is_some())
            .collect();
        s.follow_cells(body, edges, &kept);
        s
    }

    /// A slot for the length of the array a local holds: an array's
    /// length never changes, so only assigning the local changes it.
    fn add_length(&mut self, v: VarId, name: &str) {
        self.len[v as usize] = Some(self.vars.len());
        self.vars.push(StateVar {
            name: format!("len{v}"),
            sort: "Int".into(),
            label: format!("length({name})"),
        });
    }

    /// Slots for the cells of a followed array, `width` of them.
    fn add_cells(&mut self, v: VarId, name: &str, width: usize) {
        self.elems[v as usize] = Some((self.vars.len(), width));
        for k in 0..width {
            self.vars.push(StateVar {
                name: format!("elem{v}.{k}"),
                sort: "Int".into(),
                label: format!("{name}[{k}]"),
            });
        }
    }

    /// The slots of a followed array's cells.
    fn cell_slots(&self, a: VarId) -> std::ops::Range<usize> {
        self.elems[a as usize].map_or(0..0, |(first, width)| first..first + width)
    }

    /// The slot of a followed array's cell at index `k`, if it has one.
    fn cell_slot(&self, a: VarId, k: usize) -> Option<usize> {
        self.elems[a as usize]
            .filter(|(_, width)| k < *width)
            .map(|(first, _)| first + k)
    }

    /// `a := [x0, …]` for a followed `a`: the literal's values, and any
    /// value in the cells past its end (a read there is out of bounds).
    fn assign_literal(
        &self,
        body: &Body,
        a: VarId,
        xs: &[Expr],
        head: &mut [String],
        fresh: &mut Fresh,
    ) {
        for (k, slot) in self.cell_slots(a).enumerate() {
            head[slot] = match xs.get(k) {
                Some(x) => self.expr(body, x, fresh),
                None => fresh.int(),
            };
        }
    }

    /// `a[i] := value` for a followed `a`: the cell at `i`, when `i` is
    /// known, or each cell that `i` may be.
    fn write_cell(
        &self,
        body: &Body,
        a: VarId,
        i: &Expr,
        value: &str,
        head: &mut [String],
        fresh: &mut Fresh,
    ) {
        if let Some(k) = literal_index(i) {
            if let Some(slot) = self.cell_slot(a, k) {
                head[slot] = value.to_string();
            }
            return;
        }
        let i = self.expr(body, i, fresh);
        for (k, slot) in self.cell_slots(a).enumerate() {
            let old = &self.vars[slot].name;
            head[slot] = format!("(ite (= {i} {k}) {value} {old})");
        }
    }

    /// What `a[i]` reads for a followed `a`: its cell at `i`, or any value
    /// past the cells (out of bounds).
    fn read_cell(&self, body: &Body, e: &Expr, a: VarId, i: &Expr, fresh: &mut Fresh) -> String {
        if let Some(k) = literal_index(i) {
            return match self.cell_slot(a, k) {
                Some(slot) => self.vars[slot].name.clone(),
                None => fresh.unknown_of(e),
            };
        }
        let i = self.expr(body, i, fresh);
        let past = fresh.unknown_of(e);
        (self.cell_slots(a).enumerate().rev()).fold(past, |rest, (k, slot)| {
            format!("(ite (= {i} {k}) {} {rest})", self.vars[slot].name)
        })
    }

    /// The length of the array `x` evaluates to: a literal's, or a
    /// tracked local's; an unknown otherwise.
    fn length_of(&self, x: &Expr, fresh: &mut Fresh) -> String {
        match x {
            Expr::Array(xs) => xs.len().to_string(),
            Expr::Var(w) => match self.len[*w as usize] {
                Some(k) => self.vars[k].name.clone(),
                None => fresh.int(),
            },
            _ => fresh.int(),
        }
    }

    /// Slots for the cells of the pointers `cells` follows; a pointer to
    /// a variable that is not state is not followed.
    fn follow_cells(&mut self, body: &Body, edges: &[&ir::Edge], kept: &[bool]) {
        let mut followed = Followed::of(body, edges, kept);
        for p in 0..body.vars.len() {
            let Some(targets) = &followed.targets[p] else {
                continue;
            };
            if targets.iter().any(|x| self.value[*x as usize].is_none()) {
                followed.targets[p] = None;
                continue;
            }
            let name = &body.var(p as VarId).name;
            self.cell[p] = Some(self.vars.len());
            self.vars.push(StateVar {
                name: format!("cell{p}"),
                sort: "Int".into(),
                label: format!("*{name}"),
            });
            if !targets.is_empty() {
                self.tag[p] = Some(self.vars.len());
                self.vars.push(StateVar {
                    name: format!("tag{p}"),
                    sort: "Int".into(),
                    label: format!("tag({name})"),
                });
            }
        }
        self.followed = followed;
    }

    /// What `*p` reads for a followed `p`: its cell, or the variable whose
    /// address it holds.
    fn read_through(&self, p: VarId) -> String {
        let cell = self.vars[self.cell[p as usize].expect("a followed pointer")]
            .name
            .clone();
        let (Some(tag), Some(targets)) = (self.tag[p as usize], &self.followed.targets[p as usize])
        else {
            return cell;
        };
        let tag = &self.vars[tag].name;
        (targets.iter().enumerate().rev()).fold(cell, |rest, (k, x)| {
            let x = &self.vars[self.value[*x as usize].expect("a state variable")].name;
            format!("(ite (= {tag} {}) {x} {rest})", k + 1)
        })
    }

    /// `*p = value` for a followed `p`: into its cell, or into the
    /// variable whose address it holds (which is then assigned).
    fn write_through(&self, p: VarId, value: &str, head: &mut [String]) {
        let cell = self.cell[p as usize].expect("a followed pointer");
        let (Some(tag), Some(targets)) = (self.tag[p as usize], &self.followed.targets[p as usize])
        else {
            head[cell] = value.to_string();
            return;
        };
        let tag = self.vars[tag].name.clone();
        let when = |k: usize, then: &str, otherwise: &str| {
            format!("(ite (= {tag} {k}) {then} {otherwise})")
        };
        head[cell] = when(0, value, &self.vars[cell].name);
        for (k, x) in targets.iter().enumerate() {
            let slot = self.value[*x as usize].expect("a state variable");
            head[slot] = when(k + 1, value, &self.vars[slot].name);
            if let Some(i) = self.init[*x as usize] {
                head[i] = when(k + 1, "1", &self.vars[i].name);
            }
        }
    }

    /// The new tag (and cell) of a followed `p` assigned `x`: an address,
    /// or a copy handed on from the temporary of an `alloc`; `false` when
    /// `p` is not followed.
    fn point(&self, p: VarId, x: &Expr, head: &mut [String]) -> bool {
        let Some(cell) = self.cell[p as usize] else {
            return false;
        };
        let tag = match x {
            Expr::AddrOf(v) => {
                let targets = self.followed.targets[p as usize].as_deref().unwrap_or(&[]);
                let k = targets.iter().position(|t| t == v).map_or(0, |k| k + 1);
                k.to_string()
            }
            Expr::Var(t) => {
                let from = self.cell[*t as usize].expect("a followed temporary");
                head[cell] = self.vars[from].name.clone();
                match self.tag[*t as usize] {
                    Some(k) => self.vars[k].name.clone(),
                    None => "0".into(),
                }
            }
            _ => unreachable!("a followed pointer is assigned an address or a copy"),
        };
        if let Some(t) = self.tag[p as usize] {
            head[t] = tag;
        }
        true
    }

    /// `p := alloc x` for a followed `p`: a cell of its own; `false` when
    /// `p` is not followed.
    fn allocate(
        &self,
        p: VarId,
        x: &Expr,
        head: &mut [String],
        fresh: &mut Fresh,
        body: &Body,
    ) -> bool {
        let Some(cell) = self.cell[p as usize] else {
            return false;
        };
        head[cell] = self.expr(body, x, fresh);
        if let Some(t) = self.tag[p as usize] {
            head[t] = "0".into();
        }
        true
    }

    fn names(&self) -> Vec<String> {
        self.vars.iter().map(|v| v.name.clone()).collect()
    }

    fn decls(&self) -> Vec<(String, String)> {
        (self.vars.iter())
            .map(|v| (v.name.clone(), v.sort.clone()))
            .collect()
    }

    /// Any values; every local unassigned; the input stream read from 0.
    fn entry_rule(&self, entry: NodeId) -> Rule {
        let mut facts = vec!["true".to_string()];
        for (v, slot) in self.init.iter().enumerate() {
            if let Some(k) = slot {
                facts.push(format!("(= {} 0)", self.vars[*k].name));
            }
            if self.vars_label(v) == Some(ir::INPUT_COUNTER) {
                facts.push(format!("(= {} 0)", value_name(v as VarId)));
            }
        }
        Rule {
            vars: self.decls(),
            from: None,
            guards: facts,
            to: Some(entry),
            args: self.names(),
            origin: "entry".into(),
        }
    }

    fn vars_label(&self, v: usize) -> Option<&str> {
        self.value[v].map(|k| self.vars[k].label.as_str())
    }

    /// `v` (and whether it is assigned) becomes unknown.
    fn havoc(&self, v: VarId, head: &mut [String], fresh: &mut Fresh) {
        if let Some(k) = self.len[v as usize] {
            head[k] = fresh.int();
        }
        for k in self.cell_slots(v) {
            head[k] = fresh.int();
        }
        if let Some(k) = self.value[v as usize] {
            head[k] = fresh.of_sort(&self.vars[k].sort);
        }
        if let Some(i) = self.init[v as usize] {
            head[i] = fresh.int();
        }
    }

    /// `P_from(x) ∧ guard → P_to(x')` for one edge.
    fn edge_rule(&self, body: &Body, e: &ir::Edge) -> Rule {
        let mut head = self.names();
        let mut guard = Vec::new();
        let mut fresh = Fresh {
            tag: e.from.to_string(),
            ..Fresh::default()
        };
        match &e.instr {
            Instr::Alloc(p, x) if self.allocate(*p, x, &mut head, &mut fresh, body) => {}
            Instr::Assign(Place::Var(p), x) if self.point(*p, x, &mut head) => {}
            Instr::Assign(Place::Deref(Expr::Var(p)), x) if self.followed.is_followed(*p) => {
                let value = self.expr(body, x, &mut fresh);
                self.write_through(*p, &value, &mut head);
            }
            Instr::Assign(Place::Var(v), x) => {
                if let Some(k) = self.len[*v as usize] {
                    head[k] = self.length_of(x, &mut fresh);
                }
                if let Expr::Array(xs) = x {
                    self.assign_literal(body, *v, xs, &mut head, &mut fresh);
                }
                if let Some(k) = self.value[*v as usize] {
                    head[k] = self.expr(body, x, &mut fresh);
                    if let Some(i) = self.init[*v as usize] {
                        head[i] = "1".into();
                    }
                }
            }
            Instr::Assign(Place::Deref(_), _) => {
                for &v in &self.address_taken {
                    self.havoc(v, &mut head, &mut fresh);
                }
            }
            Instr::Alloc(v, _) => {
                if let Some(k) = self.len[*v as usize] {
                    head[k] = fresh.int();
                }
            }
            Instr::Assign(Place::Index(base, i), x) if self.is_followed_array(base) => {
                let Place::Var(a) = **base else {
                    unreachable!()
                };
                let value = self.expr(body, x, &mut fresh);
                self.write_cell(body, a, i, &value, &mut head, &mut fresh);
            }
            // Into another array or a record: not state.
            Instr::Assign(..) => {}
            Instr::Call { dst, .. } => {
                self.havoc(*dst, &mut head, &mut fresh);
                if let Some(k) = body
                    .var_id(ir::INPUT_COUNTER)
                    .and_then(|ic| self.value[ic as usize])
                {
                    head[k] = fresh.int();
                }
                for &v in &self.address_taken {
                    self.havoc(v, &mut head, &mut fresh);
                }
            }
            Instr::Assume(c) | Instr::Assert(c, _) => {
                if let Some(g) = self.cond(body, c, &mut fresh) {
                    guard.push(g);
                }
            }
            Instr::Enter(locals) => {
                for &v in locals {
                    // A new activation: the value is whatever it is.
                    let slots = [
                        self.value[v as usize],
                        self.len[v as usize],
                        self.cell[v as usize],
                        self.tag[v as usize],
                    ];
                    for k in slots.into_iter().flatten().chain(self.cell_slots(v)) {
                        head[k] = fresh.of_sort(&self.vars[k].sort);
                    }
                    if let Some(i) = self.init[v as usize] {
                        head[i] = "0".into();
                    }
                }
            }
            Instr::Output(_) | Instr::Skip => {}
        }
        let mut vars = self.decls();
        vars.extend(fresh.vars);
        Rule {
            vars,
            from: Some(e.from),
            guards: guard,
            to: Some(e.to),
            args: head,
            origin: format!("edge {} -> {}", e.from, e.to),
        }
    }

    fn expr(&self, body: &Body, e: &Expr, fresh: &mut Fresh) -> String {
        match e {
            Expr::Int(n) => smtlib::int(n),
            Expr::Var(v) => match self.value[*v as usize] {
                Some(k) => self.vars[k].name.clone(),
                None => fresh.unknown_of(e),
            },
            Expr::Unary(UnOp::Neg, a) => format!("(- {})", self.expr(body, a, fresh)),
            Expr::Unary(UnOp::Not, a) => format!("(ite (= {} 0) 1 0)", self.expr(body, a, fresh)),
            Expr::Binary(op, x, y) if is_nonlinear(*op, x, y) => {
                self.nonlinear.set(true);
                if self.arithmetic == Arithmetic::Linear {
                    return fresh.unknown_of(e);
                }
                let (a, b) = (self.expr(body, x, fresh), self.expr(body, y, fresh));
                match op {
                    BinOp::Mul => format!("(* {a} {b})"),
                    _ => format!("(tdiv {a} {b})"),
                }
            }
            Expr::Binary(op, a, b) => {
                let (a, b) = (self.expr(body, a, fresh), self.expr(body, b, fresh));
                match op {
                    BinOp::Add => format!("(+ {a} {b})"),
                    BinOp::Sub => format!("(- {a} {b})"),
                    BinOp::Mul => format!("(* {a} {b})"),
                    // C's truncating division (`Encoding::definitions`).
                    BinOp::Div => format!("(tdiv {a} {b})"),
                }
            }
            Expr::Cmp(op, a, b) => format!("(ite {} 1 0)", self.cmp(body, *op, a, b, fresh)),
            Expr::Index(a, i) if self.is_input_array(a) => {
                let (a, i) = (self.expr(body, a, fresh), self.expr(body, i, fresh));
                format!("(select {a} {i})")
            }
            Expr::Index(a, i) if matches!(**a, Expr::Var(v) if self.elems[v as usize].is_some()) => {
                let Expr::Var(a) = **a else { unreachable!() };
                self.read_cell(body, e, a, i, fresh)
            }
            Expr::Load(p) if matches!(**p, Expr::Var(v) if self.followed.is_followed(v)) => {
                let Expr::Var(v) = **p else { unreachable!() };
                self.read_through(v)
            }
            // Local arrays, records, other pointers: an unknown integer (a
            // pointer compared with `==` is one too), the same for the
            // same read.
            Expr::Index(..) | Expr::Load(_) | Expr::Field(..) => fresh.unknown_of(e),
            Expr::Null | Expr::AddrOf(_) | Expr::Record(_) | Expr::Array(_) => fresh.int(),
        }
    }

    fn is_followed_array(&self, place: &Place) -> bool {
        matches!(place, Place::Var(a) if self.elems[*a as usize].is_some())
    }

    fn is_input_array(&self, e: &Expr) -> bool {
        match e {
            Expr::Var(v) => self.input_arrays[*v as usize],
            Expr::Index(a, _) => self.is_input_array(a),
            _ => false,
        }
    }

    fn cmp(&self, body: &Body, op: CmpOp, a: &Expr, b: &Expr, fresh: &mut Fresh) -> String {
        let (a, b) = (self.expr(body, a, fresh), self.expr(body, b, fresh));
        match op {
            CmpOp::Eq => format!("(= {a} {b})"),
            CmpOp::Ne => format!("(not (= {a} {b}))"),
            CmpOp::Lt => format!("(< {a} {b})"),
            CmpOp::Le => format!("(<= {a} {b})"),
            CmpOp::Gt => format!("(> {a} {b})"),
            CmpOp::Ge => format!("(>= {a} {b})"),
        }
    }

    /// The guard of a condition; `None` when it is not known (either
    /// outcome is possible).
    fn cond(&self, body: &Body, c: &Cond, fresh: &mut Fresh) -> Option<String> {
        match c {
            Cond::Cmp(op, a, b) => Some(self.cmp(body, *op, a, b, fresh)),
            Cond::Initialized {
                place: Place::Var(v),
                positive,
            } if self.value[*v as usize].is_some() => {
                let holds = match self.init[*v as usize] {
                    Some(k) => format!("(= {} 1)", self.vars[k].name),
                    // Parameters and globals always hold a value.
                    None => "true".into(),
                };
                Some(signed(holds, *positive))
            }
            Cond::InBounds {
                array, positive, ..
            } if self.is_input_array(array) => {
                // Input arrays are unbounded: never out of bounds.
                Some(if *positive { "true" } else { "false" }.into())
            }
            Cond::InBounds {
                array: Expr::Var(a),
                index,
                positive,
            } if self.len[*a as usize].is_some() => {
                let len = &self.vars[self.len[*a as usize]?].name;
                let i = self.expr(body, index, fresh);
                Some(signed(format!("(and (<= 0 {i}) (< {i} {len}))"), *positive))
            }
            Cond::Initialized { .. } | Cond::InBounds { .. } => None,
        }
    }
}

/// The index `i` is, when it is a literal in range of a slot.
fn literal_index(i: &Expr) -> Option<usize> {
    match i {
        Expr::Int(n) => usize::try_from(n).ok(),
        _ => None,
    }
}

/// `holds`, or its negation for a negative condition.
fn signed(holds: String, positive: bool) -> String {
    if positive {
        holds
    } else {
        format!("(not {holds})")
    }
}

/// The local arrays that only ever hold an unchanged copy of an input
/// array: assigned whole from an input array or another such local (a
/// callee's parameter bound to one, `b = A`), never written into, never
/// stored elsewhere or passed on, their address never taken. Such a copy
/// reads as the input array does (every index holds a value, docs/microc.md
/// "Memory model"), so it is state like one. Integer arrays only.
fn input_copies(body: &Body, edges: &[&ir::Edge]) -> Vec<bool> {
    let n = body.vars.len();
    let is_input = |v: VarId| body.var(v).is_input() && body.var(v).ty.array_depth() == Some(1);
    let mut copy: Vec<bool> = (0..n as VarId)
        .map(|v| {
            let info = body.var(v);
            !info.is_input()
                && info.ty.array_depth() == Some(1)
                && matches!(info.kind, VarKind::Local | VarKind::Temp | VarKind::Param)
        })
        .collect();
    // Whole assignments `c := a` between arrays, for the fixpoint below;
    // and the variables some instruction writes into, stores or passes on.
    let mut from: Vec<(VarId, VarId)> = Vec::new();
    let mut spoiled: Vec<VarId> = Vec::new();
    let values =
        |x: &Expr, spoiled: &mut Vec<VarId>| arrays::as_values(x, &mut |v| spoiled.push(v));
    for e in edges {
        match &e.instr {
            Instr::Assign(Place::Var(c), Expr::Var(a)) if copy[*c as usize] => from.push((*c, *a)),
            Instr::Assign(place, x) => {
                spoiled.extend(place.root_var());
                place.walk_exprs(&mut |i| values(i, &mut spoiled));
                values(x, &mut spoiled);
            }
            Instr::Alloc(v, x) => {
                spoiled.push(*v);
                values(x, &mut spoiled);
            }
            Instr::Call { dst, args, .. } => {
                spoiled.push(*dst);
                args.iter().for_each(|a| values(a, &mut spoiled));
            }
            Instr::Output(x) => values(x, &mut spoiled),
            Instr::Assume(Cond::Cmp(_, a, b)) | Instr::Assert(Cond::Cmp(_, a, b), _) => {
                values(a, &mut spoiled);
                values(b, &mut spoiled);
            }
            Instr::Assume(Cond::InBounds { array, index, .. })
            | Instr::Assert(Cond::InBounds { array, index, .. }, _) => {
                values(index, &mut spoiled);
                if !matches!(array, Expr::Var(_)) {
                    values(array, &mut spoiled);
                }
            }
            Instr::Assume(Cond::Initialized { .. })
            | Instr::Assert(Cond::Initialized { .. }, _)
            | Instr::Enter(_)
            | Instr::Skip => {}
        }
    }
    for v in spoiled {
        copy[v as usize] = false;
    }
    // A copy of what is not (or no longer) an input array or a copy is not
    // one; and a copy that passed its cells to what may be written is not.
    loop {
        let before = copy.clone();
        for &(c, a) in &from {
            if !(is_input(a) || copy[a as usize]) {
                copy[c as usize] = false;
            }
            if !copy[c as usize] {
                copy[a as usize] = false;
            }
        }
        if copy == before {
            return copy;
        }
    }
}

/// Calls `f` with every variable whose address an instruction takes.
fn address_taken(i: &Instr, f: &mut impl FnMut(VarId)) {
    let mut visit = |e: &Expr| {
        e.walk(&mut |x| {
            if let Expr::AddrOf(v) = x {
                f(*v);
            }
        })
    };
    match i {
        Instr::Assign(_, e) | Instr::Alloc(_, e) | Instr::Output(e) => visit(e),
        Instr::Call { args, .. } => args.iter().for_each(visit),
        _ => {}
    }
}

/// `Int`, `(Array Int Int)`, `(Array Int (Array Int Int))`, …
fn array_sort(depth: u32) -> String {
    (0..depth).fold("Int".to_string(), |inner, _| format!("(Array Int {inner})"))
}

/// The variables an instruction reads or writes.
fn instr_vars(i: &Instr, out: &mut BTreeSet<VarId>) {
    let expr = |e: &Expr, out: &mut BTreeSet<VarId>| {
        e.walk(&mut |x| {
            if let Expr::Var(v) | Expr::AddrOf(v) = x {
                out.insert(*v);
            }
        })
    };
    let place = |p: &Place, out: &mut BTreeSet<VarId>| {
        if let Some(v) = p.root_var() {
            out.insert(v);
        }
    };
    match i {
        Instr::Assign(p, e) => {
            place(p, out);
            expr(e, out);
        }
        Instr::Alloc(v, e) => {
            out.insert(*v);
            expr(e, out);
        }
        Instr::Call { dst, args, .. } => {
            out.insert(*dst);
            args.iter().for_each(|a| expr(a, out));
        }
        Instr::Output(e) => expr(e, out),
        Instr::Assume(c) | Instr::Assert(c, _) => match c {
            Cond::Cmp(_, a, b) => {
                expr(a, out);
                expr(b, out);
            }
            Cond::Initialized { place: p, .. } => place(p, out),
            Cond::InBounds { array, index, .. } => {
                expr(array, out);
                expr(index, out);
            }
        },
        Instr::Enter(_) | Instr::Skip => {}
    }
}
