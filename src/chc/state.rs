//! The program state as the predicates' arguments, and an edge as a rule
//! over it: the one translation of the IR's expressions, conditions and
//! instructions into the clauses' terms.
//!
//! Integers and input arrays are state, and so are a local array's length,
//! the cells of a pointer or a local array that nothing else reaches
//! (`cells`, `arrays`). Other pointers, records and arrays are not: what is
//! read from them is an unknown value, a write through a pointer may
//! change every integer whose address is taken, and a call left by
//! recursion may change what it can reach. That over-approximates every
//! run, so an invariant stays a proof; it only proves less.

use super::arrays;
use super::cells::Followed;
use super::encode::{Arithmetic, Atom, Cells, Inputs, Reading, Rule, StateVar, value_name};
use super::slice;
use crate::ir::{self, BinOp, Body, CmpOp, Cond, Expr, Instr, NodeId, Place, VarId, VarKind};
use crate::ir::{Summaries, Summary};
use crate::smt::horn::Relation;
use crate::symbolic::{self, Reads};
use crate::term::{TermId, Terms, Var, VarKind as TermVar};
use std::collections::BTreeSet;

/// The state's slots and where each program variable's parts are.
pub(super) struct State {
    pub(super) slots: Vec<StateVar>,
    /// The position of each variable's value in `slots`, by variable.
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
    pub(super) cells_left_unknown: bool,
    /// Set when an edge multiplies or divides two unknowns.
    pub(super) nonlinear: std::cell::Cell<bool>,
    /// The functions whose calls a summary relates.
    summaries: Summaries,
}

/// The unknown values one clause introduces.
#[derive(Default)]
struct Fresh {
    vars: Vec<Var>,
    tag: String,
    /// What the clause's edge reads but the encoding does not follow
    /// (memory, products left unknown), each with its unknown: one
    /// instruction writes nothing while it reads, so the same read twice
    /// (`*p >= *p`) is the same value.
    unfollowed: Vec<(Unfollowed, TermId)>,
}

/// A read the encoding does not follow, as its unknown's key.
#[derive(Clone, Debug, PartialEq)]
enum Unfollowed {
    /// A variable, a load, a field, then the indices read from it.
    Read(Expr, Vec<TermId>),
    /// A product or quotient of unknowns, read linearly.
    Arithmetic(BinOp, TermId, TermId),
}

impl Fresh {
    /// The unknown value of an expression the encoding does not follow.
    fn unknown_of(&mut self, t: &mut Terms, read: Unfollowed) -> TermId {
        if let Some((_, u)) = self.unfollowed.iter().find(|(r, _)| *r == read) {
            return *u;
        }
        let u = self.int(t);
        self.unfollowed.push((read, u));
        u
    }

    fn int(&mut self, t: &mut Terms) -> TermId {
        self.like(t, TermVar::Symbol)
    }

    /// An unknown of the kind of slot `like` (an integer or an array value).
    fn like(&mut self, t: &mut Terms, kind: TermVar) -> TermId {
        let v = t.new_var(kind, format!("u{}.{}", self.tag, self.vars.len()));
        self.vars.push(v);
        t.var(v)
    }
}

impl State {
    /// The variables the edges use that the state holds: integers and
    /// input arrays.
    pub(super) fn of(
        body: &Body,
        edges: &[&ir::Edge],
        reading: Reading,
        t: &mut Terms,
        summaries: &Summaries,
    ) -> State {
        let Reading {
            arithmetic,
            inputs,
            cells,
        } = reading;
        let (used, asked) = used_and_asked(edges);
        let n = body.vars.len();
        let mut s = State {
            slots: vec![],
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
            summaries: summaries.clone(),
        };
        let copies = input_copies(body, edges);
        let followed_arrays = arrays::followed(body, edges);
        let slice::Kept {
            vars: mut kept,
            cells: kept_cells,
        } = slice::influencing(
            body,
            edges,
            &followed_arrays,
            inputs == Inputs::Unknown,
            &summaries.roots(),
        );
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
            let kind = match info.ty.array_depth() {
                Some(depth) if input => TermVar::ArrayValue(depth as u8),
                _ if info.ty.is_int() => TermVar::Symbol,
                Some(_) if !taken.contains(&v) => {
                    s.add(
                        t,
                        TermVar::Symbol,
                        format!("len{v}"),
                        format!("length({})", info.name),
                    );
                    s.len[v as usize] = Some(s.slots.len() - 1);
                    if let (Some(width), true) =
                        (followed_arrays[v as usize], kept_cells[v as usize])
                    {
                        match cells {
                            Cells::Followed => s.add_cells(t, v, &info.name, width),
                            Cells::Unknown => s.cells_left_unknown = true,
                        }
                    }
                    continue;
                }
                _ => continue,
            };
            s.input_arrays[v as usize] = input;
            s.value[v as usize] = Some(s.slots.len());
            s.add(t, kind, value_name(v), info.name.clone());
            if matches!(info.kind, VarKind::Local | VarKind::Temp) && asked.contains(&v) {
                s.init[v as usize] = Some(s.slots.len());
                s.add(
                    t,
                    TermVar::Symbol,
                    format!("init{v}"),
                    format!("init({})", info.name),
                );
            }
        }
        s.address_taken = (taken.into_iter())
            .filter(|v| s.value[*v as usize].is_some())
            .collect();
        s.follow_cells(t, body, edges, &kept);
        s
    }

    /// A new slot at the end of the state.
    fn add(&mut self, t: &mut Terms, kind: TermVar, name: String, label: String) {
        let var = t.new_var(kind, name);
        self.slots.push(StateVar { var, label });
    }

    /// The state's variables, in slot order.
    pub(super) fn vars(&self) -> Vec<Var> {
        self.slots.iter().map(|s| s.var).collect()
    }

    /// Slot `k`'s current value.
    fn slot(&self, t: &mut Terms, k: usize) -> TermId {
        t.var(self.slots[k].var)
    }

    /// Slots for the cells of a followed array, `width` of them.
    fn add_cells(&mut self, t: &mut Terms, v: VarId, name: &str, width: usize) {
        self.elems[v as usize] = Some((self.slots.len(), width));
        for k in 0..width {
            self.add(
                t,
                TermVar::Symbol,
                format!("elem{v}.{k}"),
                format!("{name}[{k}]"),
            );
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
    fn assign_literal(&self, cx: &mut Edge, a: VarId, xs: &[Expr]) {
        for (k, slot) in self.cell_slots(a).enumerate() {
            cx.head[slot] = match xs.get(k) {
                Some(x) => self.expr(cx, x),
                None => cx.fresh.int(cx.t),
            };
        }
    }

    /// `a[i] := value` for a followed `a`: the cell at `i`, when `i` is
    /// known, or each cell that `i` may be.
    fn write_cell(&self, cx: &mut Edge, a: VarId, i: &Expr, value: TermId) {
        let i = self.expr(cx, i);
        if let Some(k) = literal_index(cx.t, i) {
            if let Some(slot) = self.cell_slot(a, k) {
                cx.head[slot] = value;
            }
            return;
        }
        for (k, slot) in self.cell_slots(a).enumerate() {
            let old = self.slot(cx.t, slot);
            let at = cx.t.int(k);
            let here = cx.t.eq(i, at);
            cx.head[slot] = cx.t.ite(here, value, old);
        }
    }

    /// What `a[i]` reads for a followed `a`: its cell at `i`, or any value
    /// past the cells (out of bounds).
    fn read_cell(&self, cx: &mut Edge, a: VarId, i: TermId) -> TermId {
        let past = |cx: &mut Edge| {
            cx.fresh
                .unknown_of(cx.t, Unfollowed::Read(Expr::Var(a), vec![i]))
        };
        if let Some(k) = literal_index(cx.t, i) {
            return match self.cell_slot(a, k) {
                Some(slot) => self.slot(cx.t, slot),
                None => past(cx),
            };
        }
        let past = past(cx);
        (self.cell_slots(a).enumerate().rev()).fold(past, |rest, (k, slot)| {
            let at = cx.t.int(k);
            let here = cx.t.eq(i, at);
            let cell = self.slot(cx.t, slot);
            cx.t.ite(here, cell, rest)
        })
    }

    /// The length of the array `x` evaluates to: a literal's, or a
    /// tracked local's; an unknown otherwise.
    fn length_of(&self, cx: &mut Edge, x: &Expr) -> TermId {
        match x {
            Expr::Array(xs) => cx.t.int(xs.len()),
            Expr::Var(w) => match self.len[*w as usize] {
                Some(k) => self.slot(cx.t, k),
                None => cx.fresh.int(cx.t),
            },
            _ => cx.fresh.int(cx.t),
        }
    }

    /// Slots for the cells of the pointers `cells` follows; a pointer to
    /// a variable that is not state is not followed.
    fn follow_cells(&mut self, t: &mut Terms, body: &Body, edges: &[&ir::Edge], kept: &[bool]) {
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
            self.cell[p] = Some(self.slots.len());
            self.add(t, TermVar::Symbol, format!("cell{p}"), format!("*{name}"));
            if !targets.is_empty() {
                self.tag[p] = Some(self.slots.len());
                self.add(
                    t,
                    TermVar::Symbol,
                    format!("tag{p}"),
                    format!("tag({name})"),
                );
            }
        }
        self.followed = followed;
    }

    /// What `*p` reads for a followed `p`: its cell, or the variable whose
    /// address it holds.
    fn read_through(&self, t: &mut Terms, p: VarId) -> TermId {
        let cell = self.slot(t, self.cell[p as usize].expect("a followed pointer"));
        let (Some(tag), Some(targets)) = (self.tag[p as usize], &self.followed.targets[p as usize])
        else {
            return cell;
        };
        let tag = self.slot(t, tag);
        (targets.iter().enumerate().rev()).fold(cell, |rest, (k, x)| {
            let x = self.slot(t, self.value[*x as usize].expect("a state variable"));
            let k = t.int(k + 1);
            let here = t.eq(tag, k);
            t.ite(here, x, rest)
        })
    }

    /// `*p = value` for a followed `p`: into its cell, or into the
    /// variable whose address it holds (which is then assigned).
    fn write_through(&self, cx: &mut Edge, p: VarId, value: TermId) {
        let cell = self.cell[p as usize].expect("a followed pointer");
        let (Some(tag), Some(targets)) = (self.tag[p as usize], &self.followed.targets[p as usize])
        else {
            cx.head[cell] = value;
            return;
        };
        let tag = self.slot(cx.t, tag);
        let when = |t: &mut Terms, k: usize, then: TermId, otherwise: TermId| {
            let k = t.int(k);
            let here = t.eq(tag, k);
            t.ite(here, then, otherwise)
        };
        let old = self.slot(cx.t, cell);
        cx.head[cell] = when(cx.t, 0, value, old);
        for (k, x) in targets.iter().enumerate() {
            let slot = self.value[*x as usize].expect("a state variable");
            let old = self.slot(cx.t, slot);
            cx.head[slot] = when(cx.t, k + 1, value, old);
            if let Some(i) = self.init[*x as usize] {
                let (one, old) = (cx.t.int(1), self.slot(cx.t, i));
                cx.head[i] = when(cx.t, k + 1, one, old);
            }
        }
    }

    /// The new tag (and cell) of a followed `p` assigned `x`: an address,
    /// or a copy handed on from the temporary of an `alloc`; `false` when
    /// `p` is not followed.
    fn point(&self, cx: &mut Edge, p: VarId, x: &Expr) -> bool {
        let Some(cell) = self.cell[p as usize] else {
            return false;
        };
        let tag = match x {
            Expr::AddrOf(v) => {
                let targets = self.followed.targets[p as usize].as_deref().unwrap_or(&[]);
                let k = targets.iter().position(|t| t == v).map_or(0, |k| k + 1);
                cx.t.int(k)
            }
            Expr::Var(from) => {
                let cell_from = self.cell[*from as usize].expect("a followed temporary");
                cx.head[cell] = self.slot(cx.t, cell_from);
                match self.tag[*from as usize] {
                    Some(k) => self.slot(cx.t, k),
                    None => cx.t.int(0),
                }
            }
            _ => unreachable!("a followed pointer is assigned an address or a copy"),
        };
        if let Some(t) = self.tag[p as usize] {
            cx.head[t] = tag;
        }
        true
    }

    /// `p := alloc x` for a followed `p`: a cell of its own; `false` when
    /// `p` is not followed.
    fn allocate(&self, cx: &mut Edge, p: VarId, x: &Expr) -> bool {
        let Some(cell) = self.cell[p as usize] else {
            return false;
        };
        cx.head[cell] = self.expr(cx, x);
        if let Some(t) = self.tag[p as usize] {
            cx.head[t] = cx.t.int(0);
        }
        true
    }

    /// Any values; every local unassigned; the input stream read from 0.
    pub(super) fn entry_rule(&self, t: &mut Terms, entry: NodeId) -> Rule {
        let mut facts = vec![];
        let zero = t.int(0);
        for (v, slot) in self.init.iter().enumerate() {
            if let Some(k) = slot {
                let flag = self.slot(t, *k);
                facts.push(t.eq(flag, zero));
            }
            if self.vars_label(v) == Some(ir::INPUT_COUNTER)
                && let Some(k) = self.value[v]
            {
                let counter = self.slot(t, k);
                facts.push(t.eq(counter, zero));
            }
        }
        let args = (0..self.slots.len()).map(|k| self.slot(t, k)).collect();
        Rule {
            vars: self.vars(),
            from: None,
            calls: vec![],
            guards: facts,
            to: Some(entry),
            summary: None,
            args,
            origin: "entry".into(),
        }
    }

    /// `P_exit(x) → S_f(params…, result)`: what a run of `f` from its
    /// entry to its exit derives; and the relation.
    pub(super) fn summary_rule(
        &self,
        t: &mut Terms,
        s: &Summary,
    ) -> Result<(Rule, Relation), String> {
        let unsummarised = || format!("unsupported: `{}`'s result is not state", s.function);
        let mut args = Vec::new();
        let mut params = Vec::new();
        for &(_, v) in &s.params {
            // A parameter the function never reads is no argument.
            if let Some(k) = self.value[v as usize] {
                args.push(self.slot(t, k));
                params.push(self.slots[k].var);
            }
        }
        let k = self.value[s.result as usize].ok_or_else(unsummarised)?;
        args.push(self.slot(t, k));
        params.push(t.new_var(TermVar::Symbol, format!("{}.result", relation_name(s))));
        let relation = Relation {
            name: relation_name(s),
            params,
        };
        let rule = Rule {
            vars: self.vars(),
            from: Some(s.exit),
            calls: vec![],
            guards: vec![],
            to: None,
            summary: Some(Atom {
                relation: relation_name(s),
                args,
            }),
            args: vec![],
            origin: format!("summary of {}", s.function),
        };
        Ok((rule, relation))
    }

    fn vars_label(&self, v: usize) -> Option<&str> {
        self.value[v].map(|k| self.slots[k].label.as_str())
    }

    /// `v` (and whether it is assigned) becomes unknown.
    fn havoc(&self, cx: &mut Edge, v: VarId) {
        let slots = [
            self.len[v as usize],
            self.value[v as usize],
            self.init[v as usize],
        ];
        self.forget(cx, v, slots);
    }

    /// The `slots` of `v`, and its cells' slots, take unknown values.
    fn forget<const N: usize>(&self, cx: &mut Edge, v: VarId, slots: [Option<usize>; N]) {
        for k in slots.into_iter().flatten().chain(self.cell_slots(v)) {
            cx.head[k] = cx.fresh.like(cx.t, self.slots[k].var.kind);
        }
    }

    /// `P_from(x) ∧ guard → P_to(x')` for one edge.
    pub(super) fn edge_rule(&self, t: &mut Terms, body: &Body, e: &ir::Edge) -> Rule {
        let head = (0..self.slots.len()).map(|k| self.slot(t, k)).collect();
        let mut cx = Edge {
            t,
            body,
            head,
            calls: Vec::new(),
            guards: Vec::new(),
            fresh: Fresh {
                tag: e.from.to_string(),
                ..Fresh::default()
            },
        };
        self.instr(&mut cx, &e.instr);
        let mut vars = self.vars();
        vars.extend(cx.fresh.vars);
        Rule {
            vars,
            from: Some(e.from),
            calls: cx.calls,
            guards: cx.guards,
            to: Some(e.to),
            summary: None,
            args: cx.head,
            origin: format!("edge {} -> {}", e.from, e.to),
        }
    }

    /// What one instruction does to the head's slots and the guards.
    fn instr(&self, cx: &mut Edge, instr: &Instr) {
        match instr {
            Instr::Alloc(p, x) if self.allocate(cx, *p, x) => {}
            Instr::Assign(Place::Var(p), x) if self.point(cx, *p, x) => {}
            Instr::Assign(Place::Deref(Expr::Var(p)), x) if self.followed.is_followed(*p) => {
                let value = self.expr(cx, x);
                self.write_through(cx, *p, value);
            }
            Instr::Assign(Place::Var(v), x) => self.assign(cx, *v, x),
            Instr::Assign(Place::Deref(_), _) => {
                for &v in &self.address_taken {
                    self.havoc(cx, v);
                }
            }
            Instr::Alloc(v, _) => {
                if let Some(k) = self.len[*v as usize] {
                    cx.head[k] = cx.fresh.int(cx.t);
                }
            }
            Instr::Assign(Place::Index(base, i), x) if self.is_followed_array(base) => {
                let Place::Var(a) = **base else {
                    unreachable!()
                };
                let value = self.expr(cx, x);
                self.write_cell(cx, a, i, value);
            }
            // Into another array or a record: not state.
            Instr::Assign(..) => {}
            Instr::Call { dst, func, args } => self.call(cx, *dst, func, args),
            Instr::Assume(c) | Instr::Assert(c, _) => {
                if let Some(g) = self.cond(cx, c) {
                    cx.guards.push(g);
                }
            }
            Instr::Enter(locals) => self.enter(cx, locals),
            Instr::Output(_) | Instr::Skip => {}
        }
    }

    /// `v := x`: its length, its cells for a literal, its value.
    fn assign(&self, cx: &mut Edge, v: VarId, x: &Expr) {
        if let Some(k) = self.len[v as usize] {
            cx.head[k] = self.length_of(cx, x);
        }
        if let Expr::Array(xs) = x {
            self.assign_literal(cx, v, xs);
        }
        if let Some(k) = self.value[v as usize] {
            cx.head[k] = self.expr(cx, x);
            if let Some(i) = self.init[v as usize] {
                cx.head[i] = cx.t.int(1);
            }
        }
    }

    /// A call left by recursion: its result, the inputs it reads and what
    /// it can reach become unknown; a summary of the function relates the
    /// result to the integer arguments.
    fn call(&self, cx: &mut Edge, dst: VarId, func: &str, args: &[Expr]) {
        let summary = self.summaries.of(func).map(|s| {
            let args: Vec<TermId> = (s.params.iter())
                .filter(|(_, v)| self.value[*v as usize].is_some())
                .filter_map(|(k, _)| args.get(*k))
                .map(|a| self.expr(cx, a))
                .collect();
            (relation_name(s), args)
        });
        self.havoc(cx, dst);
        if let (Some((relation, mut args)), Some(k)) = (summary, self.value[dst as usize]) {
            args.push(cx.head[k]);
            cx.calls.push(Atom { relation, args });
        }
        if let Some(k) = (cx.body.var_id(ir::INPUT_COUNTER)).and_then(|ic| self.value[ic as usize])
        {
            cx.head[k] = cx.fresh.int(cx.t);
        }
        for &v in &self.address_taken {
            self.havoc(cx, v);
        }
    }

    /// A new activation of `locals`: their values are whatever they are,
    /// and none is assigned.
    fn enter(&self, cx: &mut Edge, locals: &[VarId]) {
        for &v in locals {
            let slots = [
                self.value[v as usize],
                self.len[v as usize],
                self.cell[v as usize],
                self.tag[v as usize],
            ];
            self.forget(cx, v, slots);
            if let Some(i) = self.init[v as usize] {
                cx.head[i] = cx.t.int(0);
            }
        }
    }

    /// The value of `e` as an integer term, by the one translation
    /// (`symbolic`) over this state.
    fn expr(&self, cx: &mut Edge, e: &Expr) -> TermId {
        let mut r = Reader { state: self, cx };
        let Ok(t) = symbolic::int(&mut r, e);
        t
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

    fn cmp(&self, cx: &mut Edge, op: CmpOp, a: &Expr, b: &Expr) -> TermId {
        let mut r = Reader { state: self, cx };
        let Ok(t) = symbolic::compare(&mut r, op, a, b);
        t
    }

    /// The guard of a condition; `None` when it is not known (either
    /// outcome is possible).
    fn cond(&self, cx: &mut Edge, c: &Cond) -> Option<TermId> {
        let holds = match c {
            Cond::Cmp(op, a, b) => return Some(self.cmp(cx, *op, a, b)),
            Cond::Initialized {
                place: Place::Var(v),
                ..
            } if self.value[*v as usize].is_some() => match self.init[*v as usize] {
                Some(k) => {
                    let (flag, one) = (self.slot(cx.t, k), cx.t.int(1));
                    cx.t.eq(flag, one)
                }
                // Parameters and globals always hold a value.
                None => cx.t.bool(true),
            },
            // Input arrays are unbounded: never out of bounds.
            Cond::InBounds { array, .. } if self.is_input_array(array) => cx.t.bool(true),
            Cond::InBounds {
                array: Expr::Var(a),
                index,
                ..
            } if self.len[*a as usize].is_some() => {
                let len = self.slot(cx.t, self.len[*a as usize]?);
                let i = self.expr(cx, index);
                let zero = cx.t.int(0);
                let (above, below) = (cx.t.le(zero, i), cx.t.lt(i, len));
                cx.t.and2(above, below)
            }
            Cond::Initialized { .. } | Cond::InBounds { .. } => return None,
        };
        let positive = match c {
            Cond::Initialized { positive, .. } | Cond::InBounds { positive, .. } => *positive,
            Cond::Cmp(..) => true,
        };
        Some(if positive { holds } else { cx.t.not(holds) })
    }
}

/// One edge's rule under construction: the term store, the head's values
/// slot by slot, the guards, and the unknowns it introduces.
struct Edge<'a> {
    t: &'a mut Terms,
    body: &'a Body,
    head: Vec<TermId>,
    /// The summaries of the calls it makes.
    calls: Vec<Atom>,
    guards: Vec<TermId>,
    fresh: Fresh,
}

/// A value in the clauses' state model.
enum Held {
    Int(TermId),
    /// An input array (an array value) and the indices read so far: a
    /// row until every dimension is indexed.
    Input(TermId, Vec<TermId>),
    /// A followed local array: its cells are slots.
    Cells(VarId),
    /// What the encoding does not follow: unknown when read as an integer.
    Unfollowed(Expr, Vec<TermId>),
}

/// The state read by the one translation, for one edge.
struct Reader<'s, 'e, 'a> {
    state: &'s State,
    cx: &'e mut Edge<'a>,
}

impl Reads for Reader<'_, '_, '_> {
    type Value = Held;
    type Error = std::convert::Infallible;

    fn terms(&mut self) -> &mut Terms {
        self.cx.t
    }

    fn int_value(&mut self, t: TermId) -> Held {
        Held::Int(t)
    }

    fn to_int(&mut self, v: Held) -> Result<TermId, Self::Error> {
        let cx = &mut *self.cx;
        Ok(match v {
            Held::Int(t) => t,
            // A whole input array (`b = a` into a copy's slot) is the
            // array value itself.
            Held::Input(array, indices) if indices.is_empty() => array,
            Held::Input(array, indices) => cx.t.select(array, indices),
            Held::Cells(a) => cx
                .fresh
                .unknown_of(cx.t, Unfollowed::Read(Expr::Var(a), vec![])),
            Held::Unfollowed(e, indices) => cx.fresh.unknown_of(cx.t, Unfollowed::Read(e, indices)),
        })
    }

    fn var(&mut self, v: VarId) -> Result<Held, Self::Error> {
        let s = self.state;
        Ok(match s.value[v as usize] {
            Some(k) if s.input_arrays[v as usize] => Held::Input(s.slot(self.cx.t, k), vec![]),
            Some(k) => Held::Int(s.slot(self.cx.t, k)),
            None if s.elems[v as usize].is_some() => Held::Cells(v),
            None => Held::Unfollowed(Expr::Var(v), vec![]),
        })
    }

    fn element(&mut self, array: Held, index: TermId) -> Result<Held, Self::Error> {
        Ok(match array {
            Held::Input(a, mut indices) => {
                indices.push(index);
                Held::Input(a, indices)
            }
            Held::Cells(a) => Held::Int(self.state.read_cell(self.cx, a, index)),
            Held::Unfollowed(e, mut indices) => {
                indices.push(index);
                Held::Unfollowed(e, indices)
            }
            // An integer indexed: not a program the types accept.
            Held::Int(t) => Held::Unfollowed(Expr::Int(0.into()), vec![t, index]),
        })
    }

    /// Loads through a followed pointer read its cell; other loads and
    /// fields are unknown (the same for the same read); addresses, null
    /// and literals of arrays and records are unknown integers (a pointer
    /// compared with `==` is one too).
    fn other(&mut self, e: &Expr) -> Result<Held, Self::Error> {
        let cx = &mut *self.cx;
        Ok(match e {
            Expr::Load(p) if matches!(**p, Expr::Var(v) if self.state.followed.is_followed(v)) => {
                let Expr::Var(v) = **p else { unreachable!() };
                Held::Int(self.state.read_through(cx.t, v))
            }
            Expr::Load(_) | Expr::Field(..) => Held::Unfollowed(e.clone(), vec![]),
            _ => Held::Int(cx.fresh.int(cx.t)),
        })
    }

    /// A product of two non-constants, or a quotient by a non-constant,
    /// is beyond linear arithmetic: noted, and with the linear reading an
    /// unknown.
    fn arithmetic(&mut self, op: BinOp, x: TermId, y: TermId) -> Result<TermId, Self::Error> {
        let cx = &mut *self.cx;
        let constant = |t: TermId| cx.t.as_int(t).is_some();
        let nonlinear = match op {
            BinOp::Mul => !constant(x) && !constant(y),
            BinOp::Div => !constant(y),
            BinOp::Add | BinOp::Sub => false,
        };
        if nonlinear {
            self.state.nonlinear.set(true);
            if self.state.arithmetic == Arithmetic::Linear {
                return Ok(cx.fresh.unknown_of(cx.t, Unfollowed::Arithmetic(op, x, y)));
            }
        }
        Ok(symbolic::binary(cx.t, op, x, y))
    }
}

/// The variables the edges use, and the locals whose "assigned" flag a
/// condition asks about (state only where it is asked).
fn used_and_asked(edges: &[&ir::Edge]) -> (BTreeSet<VarId>, BTreeSet<VarId>) {
    let mut used = BTreeSet::new();
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
    (used, asked)
}

/// The index `i` is, when it is a literal in range of a slot.
fn literal_index(t: &Terms, i: TermId) -> Option<usize> {
    t.as_int(i).and_then(|n| usize::try_from(n).ok())
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

/// The name of the relation that summarises `s`'s function.
pub(super) fn relation_name(s: &Summary) -> String {
    format!("S_{}", s.function)
}
