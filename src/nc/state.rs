//! Symbolic states over the IR: what each storage slot holds, and the
//! evaluation of IR expressions and conditions in a state.
//!
//! A *slot* is a variable's value, plus two shadow slots the analysis
//! needs: an array variable's lengths (`len(a)`, and for nested arrays the
//! common length of the rows `len(a[·])`, of their rows `len(a[·][·])`, …,
//! ⋆ once rows of different lengths may exist), and whether a variable
//! that may be read unassigned holds a value (`init(a)`, 0 or 1). Each slot
//! has a basic symbol (`a₀`, `len(a)₀`, …): its value where the analysed
//! (sub)program is entered.
//!
//! Pointers are integers: null is 0, `&x` a distinct negative constant,
//! `alloc` hands out 1, 2, … (slot `Next`) and stores into `Heap`. A write
//! through a pointer p updates the heap at p and, guarded by `p = &x`, every
//! variable x whose address is taken, so aliasing without loops is exact.
//! Record variables are flattened into one slot per field. What the state
//! cannot express becomes ⋆, soundly: records and arrays stored behind
//! pointers or in arrays.

use crate::ir::{self, Body, Cond, Expr, Place, VarId, VarKind};
use crate::symbolic;
use crate::term::{Sort, Subst, TermId, Terms, Var, VarKind as TVar};
use crate::types::Type;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    Value(VarId),
    /// The length of the arrays at a nesting level of an array variable:
    /// level 0 is the variable's own length, level 1 the common length of
    /// its rows, and so on.
    Len(VarId, u8),
    Init(VarId),
    /// A field of a record variable (records are flattened).
    Field(VarId, u32),
    /// The heap: allocated cells by address (an array ℤ → ℤ).
    Heap,
    /// The next address `alloc` hands out.
    Next,
}

/// The slots of one flowgraph and their basic symbols.
#[derive(Clone, Debug)]
pub struct Slots {
    pub all: Vec<Slot>,
    pub symbols: HashMap<Slot, Var>,
    /// Variables whose address is taken somewhere (`&x`): a write through a
    /// pointer may change them.
    pub address_taken: Vec<VarId>,
    /// Why parts of the state are ⋆ (shown with the condition).
    pub notes: Vec<String>,
    /// Variables of inlined frames entered inside a loop: a new cell per
    /// activation, so `&x` is not a constant.
    pub reentered: Vec<VarId>,
    /// Which array and record variables may share cells: a write into one
    /// makes the others ⋆.
    pub sharing: ir::Sharing,
}

/// How many arrays are nested in a type (`array(array(pointer))` is 2).
pub fn array_levels(ty: &Type) -> u8 {
    match ty {
        Type::Array(t) => 1 + array_levels(t),
        _ => 0,
    }
}

/// The array arity of a type (`array(array(int))` is 2), if an integer array.
pub fn array_arity(ty: &Type) -> Option<u8> {
    ty.array_depth().filter(|d| *d > 0).map(|d| d as u8)
}

impl Slots {
    pub fn new(terms: &mut Terms, body: &Body) -> Slots {
        let mut all = Vec::new();
        let mut symbols = HashMap::default();
        let address_taken = body.address_taken();
        for (i, v) in body.vars.iter().enumerate() {
            let id = i as VarId;
            let name = &v.name;
            let value_kind = match array_arity(&v.ty) {
                Some(n) => TVar::ArraySymbol(n),
                None => TVar::Symbol,
            };
            let sym = terms.symbol(value_kind, &format!("{name}₀"));
            all.push(Slot::Value(id));
            symbols.insert(Slot::Value(id), sym);
            if !v.input_array && v.kind != VarKind::Global {
                for level in 0..array_levels(&v.ty) {
                    let rows = "[·]".repeat(level as usize);
                    let s = terms.symbol(TVar::Symbol, &format!("len({name}{rows})₀"));
                    all.push(Slot::Len(id, level));
                    symbols.insert(Slot::Len(id, level), s);
                }
            }
            if matches!(v.kind, VarKind::Local | VarKind::Temp) {
                let s = terms.symbol(TVar::Symbol, &format!("init({name})₀"));
                all.push(Slot::Init(id));
                symbols.insert(Slot::Init(id), s);
            }
            if let Type::Record(fields) = &v.ty {
                for (k, (f, _)) in fields.iter().enumerate() {
                    let s = terms.symbol(TVar::Symbol, &format!("{name}.{f}₀"));
                    all.push(Slot::Field(id, k as u32));
                    symbols.insert(Slot::Field(id, k as u32), s);
                }
            }
        }
        let heap = terms.symbol(TVar::ArraySymbol(1), "heap₀");
        all.push(Slot::Heap);
        symbols.insert(Slot::Heap, heap);
        let next = terms.symbol(TVar::Symbol, "next₀");
        all.push(Slot::Next);
        symbols.insert(Slot::Next, next);
        Slots {
            all,
            symbols,
            address_taken,
            notes: vec![],
            reentered: reentered(body),
            sharing: ir::Sharing::of(body),
        }
    }
}

/// The variables of the inlined frames entered inside a loop.
fn reentered(body: &Body) -> Vec<VarId> {
    let mut out = Vec::new();
    for e in &body.edges {
        if let ir::Instr::Enter(locals) = &e.instr
            && body
                .loops
                .iter()
                .any(|l| l.nodes.binary_search(&e.from).is_ok())
        {
            out.extend(locals.iter().copied());
        }
    }
    out.sort_unstable();
    out
}

/// The address of a variable: distinct, negative (allocated cells are
/// positive, null is 0).
pub fn address_of(v: VarId) -> i64 {
    -(v as i64) - 1
}

/// The index of a field in a record variable's type.
fn field_index(body: &Body, v: VarId, f: &str) -> Option<u32> {
    match &body.var(v).ty {
        Type::Record(fields) => fields.iter().position(|(n, _)| n == f).map(|k| k as u32),
        _ => None,
    }
}

/// A symbolic state: a term per slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    /// Ordered, so that evaluation order (and fresh names) is deterministic.
    pub values: BTreeMap<Slot, TermId>,
}

impl State {
    /// θ_G: every slot holds its basic symbol.
    pub fn general(terms: &mut Terms, slots: &Slots) -> State {
        let values = slots
            .all
            .iter()
            .map(|s| (*s, terms.var(slots.symbols[s])))
            .collect();
        State { values }
    }

    pub fn get(&self, s: Slot) -> TermId {
        self.values[&s]
    }
    pub fn set(&mut self, s: Slot, t: TermId) {
        self.values.insert(s, t);
    }

    /// The substitution `a₀ ↦ θ(a)` for every slot.
    pub fn as_subst(&self, slots: &Slots) -> Subst {
        let mut s = Subst::new();
        for (slot, t) in &self.values {
            s.bind(slots.symbols[slot], *t);
        }
        s
    }

    /// θ ∘ θ': first this state, then θ' (whose terms speak of the values
    /// at its own start): (θ∘θ')(a) = θ⟨θ'(a)⟩.
    pub fn compose(&self, terms: &mut Terms, slots: &Slots, then: &State) -> State {
        let s = self.as_subst(slots);
        let mut memo = HashMap::default();
        let values = then
            .values
            .iter()
            .map(|(k, t)| (*k, s.apply_memo(terms, *t, &mut memo)))
            .collect();
        State { values }
    }
}

/// Evaluates IR expressions and conditions in a state.
pub struct Eval<'a> {
    pub body: &'a Body,
    /// Shared with the engine, which mutates its terms while evaluating.
    pub slots: std::rc::Rc<Slots>,
}

impl<'a> Eval<'a> {
    fn is_array_var(&self, v: VarId) -> bool {
        array_arity(&self.body.var(v).ty).is_some()
    }

    /// θ(e) for an integer (or array) valued expression (the one
    /// translation, `symbolic`, over the slots).
    pub fn expr(&self, terms: &mut Terms, st: &State, e: &Expr) -> TermId {
        let reads = &mut OnSlots {
            eval: self,
            terms,
            st,
        };
        match symbolic::value(reads, e) {
            Ok(t) => t,
            Err(never) => match never {},
        }
    }

    /// The expressions the translation leaves to the slots' model:
    /// pointers, loads, fields, and literals of arrays and records.
    fn other(&self, terms: &mut Terms, st: &State, e: &Expr) -> TermId {
        match e {
            Expr::Null => terms.int(0),
            // A frame entered again in a loop has new cells each time:
            // its variables' addresses are not one constant.
            Expr::AddrOf(v) if self.slots.reentered.contains(v) => terms.star(),
            Expr::AddrOf(v) => terms.int(address_of(*v)),
            Expr::Load(p) => {
                let p = self.expr(terms, st, p);
                self.load(terms, st, p)
            }
            Expr::Field(r, f) => self.field_of(terms, st, r, f),
            // A record value as a whole is only used through its fields.
            Expr::Record(_) => terms.star(),
            Expr::Array(elems) => self.array_literal(terms, st, elems),
            other => self.expr(terms, st, other),
        }
    }

    /// λx. ite(x = 0, e0, ite(x = 1, e1, … 0)); rows of a nested literal
    /// are λs applied to the remaining arguments y⃗.
    fn array_literal(&self, terms: &mut Terms, st: &State, elems: &[Expr]) -> TermId {
        let vals: Vec<TermId> = elems.iter().map(|el| self.expr(terms, st, el)).collect();
        let row_arity = match vals.first().map(|v| terms.sort(*v)) {
            None | Some(Sort::Int) => 0,
            Some(Sort::Array(m)) => m,
            Some(_) => return terms.star(),
        };
        if vals.iter().any(|v| {
            let sort = terms.sort(*v);
            sort != if row_arity == 0 {
                Sort::Int
            } else {
                Sort::Array(row_arity)
            }
        }) {
            return terms.star();
        }
        let x = terms.new_var(TVar::Bound, "x");
        let xt = terms.var(x);
        let ys: Vec<Var> = (0..row_arity)
            .map(|_| terms.new_var(TVar::Bound, "y"))
            .collect();
        let yts: Vec<TermId> = ys.iter().map(|y| terms.var(*y)).collect();
        let mut body = terms.int(0);
        for (k, v) in vals.into_iter().enumerate().rev() {
            let cell = if row_arity == 0 {
                v
            } else {
                terms.select(v, yts.clone())
            };
            let kt = terms.int(k as i64);
            let c = terms.eq(xt, kt);
            body = terms.ite(c, cell, body);
        }
        let mut params = vec![x];
        params.extend(ys);
        terms.lambda(params, body)
    }

    /// The cell a pointer points to: the variable it is the address of, or
    /// the heap cell.
    pub fn load(&self, terms: &mut Terms, st: &State, p: TermId) -> TermId {
        let heap = st.get(Slot::Heap);
        let mut acc = terms.select(heap, vec![p]);
        for &x in self.slots.address_taken.iter().rev() {
            let v = st.get(Slot::Value(x));
            if terms.sort(v) != Sort::Int {
                continue;
            }
            let a = terms.int(address_of(x));
            let c = terms.eq(p, a);
            acc = terms.ite(c, v, acc);
        }
        acc
    }

    /// `*p := v`: the heap cell and, if p is its address, each variable.
    fn store(&self, terms: &mut Terms, st: &mut State, p: TermId, v: TermId) {
        if terms.sort(v) != Sort::Int {
            self.havoc_memory(terms, st);
            return;
        }
        let heap = st.get(Slot::Heap);
        let new_heap = self.write(terms, heap, &[p], v);
        st.set(Slot::Heap, new_heap);
        for &x in &self.slots.address_taken.clone() {
            let old = st.get(Slot::Value(x));
            if terms.sort(old) != Sort::Int {
                continue;
            }
            let a = terms.int(address_of(x));
            let c = terms.eq(p, a);
            let nv = terms.ite(c, v, old);
            st.set(Slot::Value(x), nv);
            if let Some(&init) = st.values.get(&Slot::Init(x)) {
                let one = terms.int(1);
                let ni = terms.ite(c, one, init);
                st.set(Slot::Init(x), ni);
            }
        }
    }

    /// `a[i]`: a read, or (for a multi-dimensional array) the row as a λ.
    pub fn index(&self, terms: &mut Terms, arr: TermId, i: TermId) -> TermId {
        match terms.sort(arr) {
            Sort::Array(1) => terms.select(arr, vec![i]),
            Sort::Array(n) => {
                let rest: Vec<Var> = (1..n).map(|_| terms.new_var(TVar::Bound, "y")).collect();
                let mut args = vec![i];
                args.extend(rest.iter().map(|v| terms.var(*v)));
                let body = terms.select(arr, args);
                terms.lambda(rest, body)
            }
            _ => terms.star(),
        }
    }

    fn cmp(&self, terms: &mut Terms, st: &State, op: ir::CmpOp, a: &Expr, b: &Expr) -> TermId {
        let reads = &mut OnSlots {
            eval: self,
            terms,
            st,
        };
        match symbolic::compare(reads, op, a, b) {
            Ok(t) => t,
            Err(never) => match never {},
        }
    }

    /// θ(γ) for a connective-free predicate.
    pub fn cond(&self, terms: &mut Terms, st: &State, c: &Cond) -> TermId {
        match c {
            Cond::Cmp(op, a, b) => self.cmp(terms, st, *op, a, b),
            Cond::Initialized {
                place: Place::Var(v),
                positive,
            } => {
                let flag = match st.values.get(&Slot::Init(*v)) {
                    Some(t) => *t,
                    None => return terms.bool(*positive), // params and globals are always assigned
                };
                let one = terms.int(1);
                let p = terms.eq(flag, one);
                if *positive { p } else { terms.not(p) }
            }
            Cond::Initialized {
                place: Place::Deref(p),
                positive,
            } => {
                // Heap cells are assigned by `alloc`; a variable's cell may not be.
                let p = self.expr(terms, st, p);
                let mut parts = Vec::new();
                for &x in &self.slots.address_taken {
                    if let Some(&init) = st.values.get(&Slot::Init(x)) {
                        let a = terms.int(address_of(x));
                        let is_x = terms.eq(p, a);
                        let one = terms.int(1);
                        let assigned = terms.eq(init, one);
                        parts.push(terms.implies(is_x, assigned));
                    }
                }
                let c = terms.and(parts);
                if *positive { c } else { terms.not(c) }
            }
            Cond::Initialized { .. } => terms.fresh_bool(),
            Cond::InBounds {
                array,
                index,
                positive,
            } => {
                let Some(len) = self.length(terms, st, array, 0) else {
                    // Input arrays are unbounded: never out of bounds.
                    if self.is_input_array(array) {
                        return terms.bool(*positive);
                    }
                    return terms.fresh_bool();
                };
                // An array of unknown length may be a copy of an input
                // array (`B = A`, a callee's parameter), which is unbounded:
                // even `B[-1]` reads 0. So nothing is known, not even the
                // lower bound.
                if terms.contains_star(len) {
                    return terms.fresh_bool();
                }
                let i = self.expr(terms, st, index);
                let zero = terms.int(0);
                let lo = terms.le(zero, i);
                let hi = terms.lt(i, len);
                let p = terms.and2(lo, hi);
                if *positive { p } else { terms.not(p) }
            }
        }
    }

    fn is_input_array(&self, e: &Expr) -> bool {
        match e {
            Expr::Var(v) => self.body.var(*v).input_array,
            Expr::Index(a, _) => self.is_input_array(a),
            _ => false,
        }
    }

    /// The length of the arrays `level` levels inside the array `e` (0: of
    /// `e` itself), when the state knows it.
    fn length(&self, terms: &mut Terms, st: &State, e: &Expr, level: u8) -> Option<TermId> {
        match e {
            Expr::Var(v) => st.values.get(&Slot::Len(*v, level)).copied(),
            Expr::Index(a, _) => self.length(terms, st, a, level + 1),
            Expr::Array(xs) if level == 0 => Some(terms.int(xs.len() as i64)),
            Expr::Array(xs) => {
                // The rows' common length, if all rows agree.
                let first = self.length(terms, st, xs.first()?, level - 1)?;
                for x in &xs[1..] {
                    if self.length(terms, st, x, level - 1)? != first {
                        return None;
                    }
                }
                Some(first)
            }
            _ => None,
        }
    }

    /// The length slots of `v` after `v = e` (or, with `depth` > 0, after
    /// a write of `e` to an element `depth` levels inside `v`): a level
    /// inside the written element keeps its length only if `e` has the
    /// same one; ⋆ when unknown.
    fn assign_lengths(&self, terms: &mut Terms, st: &mut State, v: VarId, depth: u8, e: &Expr) {
        let levels = array_levels(&self.body.var(v).ty);
        let mut new = Vec::new();
        for level in depth..levels {
            let Some(&old) = st.values.get(&Slot::Len(v, level)) else {
                continue;
            };
            let len = self.length(terms, st, e, level - depth);
            let len = match len {
                Some(l) if depth == 0 || l == old => l,
                _ => terms.star(),
            };
            new.push((Slot::Len(v, level), len));
        }
        for (slot, len) in new {
            st.set(slot, len);
        }
    }

    /// Every length of `v` becomes ⋆ (its value was replaced by an unknown).
    fn havoc_lengths(&self, terms: &mut Terms, st: &mut State, v: VarId) {
        self.havoc_lengths_from(terms, st, v, 0);
    }

    /// The lengths of `v`'s arrays `from` levels down and deeper become ⋆.
    fn havoc_lengths_from(&self, terms: &mut Terms, st: &mut State, v: VarId, from: u8) {
        for level in from..array_levels(&self.body.var(v).ty) {
            if st.values.contains_key(&Slot::Len(v, level)) {
                let s = terms.star();
                st.set(Slot::Len(v, level), s);
            }
        }
    }

    /// Executes an assignment.
    pub fn assign(&self, terms: &mut Terms, st: &mut State, p: &Place, e: &Expr) {
        self.assign_place(terms, st, p, e);
        // A write into a variable's elements or fields (`b[i] = e`,
        // `r.f[0] = e`, `a[i].g = e`) is a write into cells it may share.
        if let (false, Some(v)) = (matches!(p, Place::Var(_)), p.root_var()) {
            self.forget_sharers(terms, st, v);
        }
    }

    fn assign_place(&self, terms: &mut Terms, st: &mut State, p: &Place, e: &Expr) {
        match p {
            Place::Var(v) if matches!(self.body.var(*v).ty, Type::Record(_)) => {
                self.assign_record(terms, st, *v, e);
                self.mark_init(terms, st, *v);
            }
            Place::Var(v) => {
                let val = self.expr(terms, st, e);
                let val = self.fit(terms, *v, val);
                // Lengths first: `e` may read v's own (`a = a`).
                self.assign_lengths(terms, st, *v, 0, e);
                st.set(Slot::Value(*v), val);
                self.mark_init(terms, st, *v);
            }
            Place::Index(..) => {
                let mut idx = Vec::new();
                let mut root = p;
                while let Place::Index(base, i) = root {
                    idx.push(self.expr(terms, st, i));
                    root = base;
                }
                idx.reverse();
                let val = self.expr(terms, st, e);
                if let Place::Var(v) = root {
                    self.assign_lengths(terms, st, *v, idx.len() as u8, e);
                }
                match root {
                    Place::Var(v) if self.is_array_var(*v) => {
                        let old = st.get(Slot::Value(*v));
                        let new = self.write(terms, old, &idx, val);
                        st.set(Slot::Value(*v), new);
                    }
                    Place::Var(v) => {
                        let s = terms.star();
                        st.set(Slot::Value(*v), s);
                    }
                    // An element write through a pointer needs an array in
                    // the cell: no cell becomes assigned by it.
                    _ => self.havoc_contents(terms, st),
                }
            }
            Place::Field(base, f) if matches!(&**base, Place::Var(v) if field_index(self.body, *v, f).is_some()) =>
            {
                let Place::Var(v) = &**base else {
                    unreachable!("matched above")
                };
                let k = field_index(self.body, *v, f).unwrap_or(0);
                let val = self.expr(terms, st, e);
                let val = if terms.sort(val) == Sort::Int {
                    val
                } else {
                    terms.star()
                };
                st.set(Slot::Field(*v, k), val);
            }
            Place::Field(..) => match p.root_var() {
                Some(v) => {
                    let s = self.star_for(terms, v);
                    st.set(Slot::Value(v), s);
                }
                // Likewise a field write needs a record in the cell.
                None => self.havoc_contents(terms, st),
            },
            Place::Deref(p) => {
                // Only an integer cell is stored exactly: a record or array
                // stored whole (`*pr = s`, `*pa = *pb`) may evaluate to an
                // integer-sorted ⋆ or heap read, yet changes fields, rows
                // and sharers.
                let int_cell = matches!(ir::type_of(self.body, e), Some(Type::Int));
                let (p, v) = (self.expr(terms, st, p), self.expr(terms, st, e));
                if int_cell {
                    self.store(terms, st, p, v);
                } else {
                    self.havoc_memory(terms, st);
                }
            }
        }
    }

    /// Field `f` of a record value: of a record variable or a literal;
    /// records behind pointers or in arrays are not modelled (⋆).
    fn field_of(&self, terms: &mut Terms, st: &State, r: &Expr, f: &str) -> TermId {
        let v = match r {
            Expr::Var(v) => field_index(self.body, *v, f)
                .and_then(|k| st.values.get(&Slot::Field(*v, k)).copied()),
            Expr::Record(fs) => fs
                .iter()
                .find(|(n, _)| n == f)
                .map(|(_, x)| self.expr(terms, st, x)),
            _ => None,
        };
        v.unwrap_or_else(|| terms.star())
    }

    /// `r = e` for a record variable: field by field.
    fn assign_record(&self, terms: &mut Terms, st: &mut State, v: VarId, e: &Expr) {
        let Type::Record(fields) = &self.body.var(v).ty else {
            return;
        };
        for (k, (name, _)) in fields.iter().enumerate() {
            let val = self.field_of(terms, st, e, name);
            let val = if terms.sort(val) == Sort::Int {
                val
            } else {
                terms.star()
            };
            st.set(Slot::Field(v, k as u32), val);
        }
    }

    /// A value of the variable's sort: ⋆ for an array variable is a λ of ⋆.
    fn fit(&self, terms: &mut Terms, v: VarId, val: TermId) -> TermId {
        match (array_arity(&self.body.var(v).ty), terms.sort(val)) {
            (Some(n), Sort::Array(m)) if n == m => val,
            (Some(_), _) => self.star_for(terms, v),
            (None, Sort::Int) => val,
            (None, _) => terms.star(),
        }
    }

    /// The unknown value of a variable: ⋆, or λx⃗.⋆ for arrays.
    pub fn star_for(&self, terms: &mut Terms, v: VarId) -> TermId {
        match array_arity(&self.body.var(v).ty) {
            Some(n) => {
                let xs: Vec<Var> = (0..n).map(|_| terms.new_var(TVar::Bound, "x")).collect();
                let s = terms.star();
                terms.lambda(xs, s)
            }
            None => terms.star(),
        }
    }

    /// λx⃗. ite(x⃗ = i⃗, v, old(x⃗)), for a write of a whole element.
    fn write(&self, terms: &mut Terms, old: TermId, idx: &[TermId], val: TermId) -> TermId {
        let Sort::Array(n) = terms.sort(old) else {
            return old;
        };
        if n as usize != idx.len() || terms.sort(val) != Sort::Int {
            let xs: Vec<Var> = (0..n).map(|_| terms.new_var(TVar::Bound, "x")).collect();
            let s = terms.star();
            return terms.lambda(xs, s);
        }
        let xs: Vec<Var> = (0..n)
            .map(|k| terms.new_var(TVar::Bound, placeholder(n, k)))
            .collect();
        let xts: Vec<TermId> = xs.iter().map(|x| terms.var(*x)).collect();
        let eqs: Vec<TermId> = xts.iter().zip(idx).map(|(x, i)| terms.eq(*x, *i)).collect();
        let c = terms.and(eqs);
        let prev = terms.select(old, xts);
        let body = terms.ite(c, val, prev);
        terms.lambda(xs, body)
    }

    /// A new activation of an inlined function: its locals hold nothing.
    pub fn enter(&self, terms: &mut Terms, st: &mut State, locals: &[VarId]) {
        for &v in locals {
            if st.values.contains_key(&Slot::Init(v)) {
                let zero = terms.int(0);
                st.set(Slot::Init(v), zero);
            }
        }
    }

    fn mark_init(&self, terms: &mut Terms, st: &mut State, v: VarId) {
        if st.values.contains_key(&Slot::Init(v)) {
            let one = terms.int(1);
            st.set(Slot::Init(v), one);
        }
    }

    /// A write through a pointer: every variable whose address is taken
    /// may have changed, and may have become assigned.
    pub fn havoc_memory(&self, terms: &mut Terms, st: &mut State) {
        self.havoc_contents(terms, st);
        for &v in &self.slots.address_taken {
            if st.values.contains_key(&Slot::Init(v)) {
                let s = terms.star();
                st.set(Slot::Init(v), s);
            }
        }
    }

    /// A write into an array or record through a pointer: every variable
    /// whose address is taken may have changed, but none became assigned
    /// (the write fails on a cell that holds nothing, so the cell it went
    /// to was assigned already).
    fn havoc_contents(&self, terms: &mut Terms, st: &mut State) {
        let x = terms.new_var(TVar::Bound, "x");
        let s = terms.star();
        let h = terms.lambda(vec![x], s);
        st.set(Slot::Heap, h);
        let s = terms.star();
        st.set(Slot::Next, s);
        // `*p = [..]` may rebind a whole variable: its own length too.
        for &v in &self.slots.address_taken {
            self.forget(terms, st, v, 0);
        }
        // Arrays and records whose cells memory may reach (`q = alloc a`,
        // `&a`) change with a write through a pointer into them.
        for &v in self.slots.sharing.in_memory() {
            self.forget(terms, st, v, 0);
        }
    }

    /// A write into `v`'s elements or fields: every variable that may
    /// share cells with `v` may have changed. (Memory holds no array or
    /// record exactly, and no integer cell is an element: nothing else
    /// changes.)
    fn forget_sharers(&self, terms: &mut Terms, st: &mut State, v: VarId) {
        // Rows of a nested array may be one another's cells: a write
        // into one row is not a write into that row only.
        // An array's own length never changes while a variable holds it;
        // its rows' may (`b = m; b[0] = [1, 2, 3];`): lengths from level 1.
        if array_levels(&self.body.var(v).ty) >= 2 && self.slots.sharing.rows_may_share(v) {
            self.forget(terms, st, v, 1);
        }
        for w in self.slots.sharing.others(v) {
            self.forget(terms, st, w, 1);
        }
    }

    /// `v`'s value, its lengths `lengths_from` levels down and deeper, and
    /// its fields become ⋆ (not whether it is assigned). A record variable
    /// lives in its field slots: they change with it (they were kept, and
    /// `pr.g = n` left `r.g` at its old value).
    fn forget(&self, terms: &mut Terms, st: &mut State, v: VarId, lengths_from: u8) {
        let s = self.star_for(terms, v);
        st.set(Slot::Value(v), s);
        self.havoc_lengths_from(terms, st, v, lengths_from);
        if let Type::Record(fields) = &self.body.var(v).ty {
            for k in 0..fields.len() as u32 {
                let s = terms.star();
                st.set(Slot::Field(v, k), s);
            }
        }
    }

    /// Executes a call: not modelled yet, so its result, the input
    /// position and everything reachable through pointers become ⋆.
    pub fn call(&self, terms: &mut Terms, st: &mut State, dst: VarId) {
        let s = self.star_for(terms, dst);
        st.set(Slot::Value(dst), s);
        self.havoc_lengths(terms, st, dst);
        self.mark_init(terms, st, dst);
        if let Some(ic) = self.body.var_id(ir::INPUT_COUNTER) {
            let s = terms.star();
            st.set(Slot::Value(ic), s);
        }
        self.havoc_memory(terms, st);
    }

    /// `dst := alloc e`: the next address, holding e.
    pub fn alloc(&self, terms: &mut Terms, st: &mut State, dst: VarId, e: &Expr) {
        let p = st.get(Slot::Next);
        let v = self.expr(terms, st, e);
        if terms.sort(v) == Sort::Int {
            let heap = st.get(Slot::Heap);
            let new_heap = self.write(terms, heap, &[p], v);
            st.set(Slot::Heap, new_heap);
        }
        // A cell holding a record or array: by typing it is only read
        // through fields or indexing, which give ⋆.
        st.set(Slot::Value(dst), p);
        let next = terms.add_int(p, 1);
        st.set(Slot::Next, next);
        self.mark_init(terms, st, dst);
    }
}

/// The name of the k-th argument placeholder of an n-dimensional λ.
pub fn placeholder(n: u8, k: u8) -> String {
    if n == 1 {
        "x".to_string()
    } else {
        format!("x{}", k + 1)
    }
}

/// A state of the slots as the translation reads it. Nothing fails: what
/// the model cannot say is ⋆.
struct OnSlots<'a, 'e> {
    eval: &'a Eval<'e>,
    terms: &'a mut Terms,
    st: &'a State,
}

impl symbolic::Reads for OnSlots<'_, '_> {
    type Value = TermId;
    type Error = std::convert::Infallible;

    fn terms(&mut self) -> &mut Terms {
        self.terms
    }

    fn int_value(&mut self, t: TermId) -> TermId {
        t
    }

    fn to_int(&mut self, t: TermId) -> Result<TermId, Self::Error> {
        Ok(t)
    }

    fn var(&mut self, v: VarId) -> Result<TermId, Self::Error> {
        Ok(self.st.get(Slot::Value(v)))
    }

    fn element(&mut self, array: TermId, i: TermId) -> Result<TermId, Self::Error> {
        Ok(self.eval.index(self.terms, array, i))
    }

    fn other(&mut self, e: &Expr) -> Result<TermId, Self::Error> {
        Ok(self.eval.other(self.terms, self.st, e))
    }

    /// A comparison of values that are not integers (⋆ arrays) is a fresh
    /// Boolean: ⋆ with its polarity kept.
    fn compare(&mut self, op: ir::CmpOp, a: TermId, b: TermId) -> Result<TermId, Self::Error> {
        if self.terms.sort(a) != Sort::Int || self.terms.sort(b) != Sort::Int {
            return Ok(self.terms.fresh_bool());
        }
        Ok(symbolic::comparison(self.terms, op, a, b))
    }
}
