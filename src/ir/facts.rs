//! Value facts: what every value a variable or cell holds at a point has
//! in common, on every run — whether a pointer may be null, and which
//! lengths an array may have. An abstract interpretation over every
//! function's flowgraph that proves the null and bounds checks the
//! program's values make true: a pointer that only ever holds `alloc` or
//! `&x`, an array indexed by a literal below every length it can have
//! there. `docs/portfolio.md` §5 says why and what it gives.
//!
//! Two passes:
//!
//! 1. **The summary**, flow- and context-insensitive: one abstract value
//!    per variable of each function, one for `heap`, which stands for every
//!    cell that is not a variable's own (elements, fields, `alloc`ed cells)
//!    and for the variables whose address is taken (a write through any
//!    pointer may change them). Calls join the arguments into the callee's
//!    parameters and the callee's `$ret` into the result; `main`'s
//!    parameters may be anything.
//! 2. **Per function, flow-sensitive**: a state per vertex for the
//!    variables that only their own assignments change (not integers, not
//!    address-taken); an assignment replaces the value, and a test that
//!    a run gets past only with a non-null value (`assume(p != null)`,
//!    `assert(p != null)`) clears its null. Everything else is read from
//!    the summary.
//!
//! Both apply the edges until nothing changes: the last pass, which
//! changes nothing, is the check that the facts are closed under every
//! edge, and so hold of every run.

use super::{
    Body, CmpOp, Cond, Edge, EdgeId, Expr, Instr, NodeId, Place, RETURN_VAR, TargetId, VarId,
};
use crate::types::Type;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

/// What the values of one location have in common: whether one may be
/// null, and the lengths an array may have — bit `i` for the program's
/// `i`-th literal length ([`Lengths`]), or any.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Abstract {
    may_be_null: bool,
    any_length: bool,
    lengths: u64,
}

impl Abstract {
    /// No value at all (nothing flows here yet): the default.
    const NONE: Abstract = Abstract {
        may_be_null: false,
        any_length: false,
        lengths: 0,
    };

    const ANYTHING: Abstract = Abstract {
        may_be_null: true,
        any_length: true,
        lengths: 0,
    };

    const NULL: Abstract = Abstract {
        may_be_null: true,
        ..Abstract::NONE
    };

    /// Joins `other` in; whether that changed anything.
    fn absorb(&mut self, other: Abstract) -> bool {
        let before = *self;
        self.may_be_null |= other.may_be_null;
        self.any_length |= other.any_length;
        self.lengths |= other.lengths;
        *self != before
    }
}

/// The distinct lengths of the program's array literals, one bit each (the
/// first 64; a longer list's rest counts as any length).
struct Lengths(Vec<usize>);

impl Lengths {
    fn of(bodies: &BTreeMap<String, &Body>) -> Lengths {
        let mut all = Vec::new();
        for body in bodies.values() {
            for edge in &body.edges {
                edge.instr.walk_exprs(&mut |x| {
                    if let Expr::Array(xs) = x {
                        all.push(xs.len());
                    }
                });
            }
        }
        all.sort_unstable();
        all.dedup();
        Lengths(all)
    }

    fn array_of(&self, length: usize) -> Abstract {
        match self.0.binary_search(&length) {
            Ok(bit) if bit < 64 => Abstract {
                lengths: 1 << bit,
                ..Abstract::NONE
            },
            _ => Abstract {
                any_length: true,
                ..Abstract::NONE
            },
        }
    }

    /// The shortest length `a` allows, if it is one of a known set.
    fn shortest(&self, a: Abstract) -> Option<usize> {
        (!a.any_length && a.lengths != 0).then(|| self.0[a.lengths.trailing_zeros() as usize])
    }
}

/// The targets the facts prove unreachable: for each function, each such
/// target's id with the reason.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ValueFacts {
    proofs: BTreeMap<String, BTreeMap<TargetId, String>>,
}

impl ValueFacts {
    /// Why the facts make target `target` of `function` unreachable, if
    /// they do.
    pub fn proves(&self, function: &str, target: TargetId) -> Option<&str> {
        self.proofs.get(function)?.get(&target).map(String::as_str)
    }
}

/// The facts of the program made of `bodies` (every function, by name);
/// `None` without `main`.
pub fn value_facts(bodies: &BTreeMap<String, &Body>) -> Option<ValueFacts> {
    let summary = Summary::of(bodies)?;
    let proofs = bodies
        .iter()
        .map(|(name, body)| (name.clone(), Flow::new(&summary, name, body).proofs()))
        .collect();
    Some(ValueFacts { proofs })
}

/// The flow-insensitive pass: a value per variable of each function, and
/// one for the heap.
struct Summary {
    lengths: Lengths,
    vars: BTreeMap<String, Vec<Abstract>>,
    heap: Abstract,
    /// Per function, the variables whose address is taken.
    shared: BTreeMap<String, Vec<VarId>>,
    /// Per function, its `$ret`.
    results: BTreeMap<String, Option<VarId>>,
}

impl Summary {
    fn of(bodies: &BTreeMap<String, &Body>) -> Option<Summary> {
        let main = bodies.get("main")?;
        let mut s = Summary {
            lengths: Lengths::of(bodies),
            vars: (bodies.iter())
                .map(|(name, b)| (name.clone(), vec![Abstract::NONE; b.vars.len()]))
                .collect(),
            heap: Abstract::NONE,
            shared: (bodies.iter())
                .map(|(name, b)| (name.clone(), b.address_taken()))
                .collect(),
            results: (bodies.iter())
                .map(|(name, b)| (name.clone(), b.var_id(RETURN_VAR)))
                .collect(),
        };
        let entry = s.vars.get_mut("main").expect("main's variables");
        entry[..main.params].fill(Abstract::ANYTHING);
        if (0..main.params).any(|p| main.vars[p].input_array) {
            // Rows of an input array are read from its cells.
            s.heap = Abstract::ANYTHING;
        }
        while s.apply_every_edge(bodies) {
            crate::deadline::tick();
        }
        Some(s)
    }

    /// One pass over every edge of every function; whether a fact grew.
    fn apply_every_edge(&mut self, bodies: &BTreeMap<String, &Body>) -> bool {
        let mut changed = false;
        for (name, body) in bodies {
            for edge in &body.edges {
                changed |= self.apply(name, &edge.instr, bodies);
            }
            changed |= self.share_with_the_heap(name);
        }
        changed
    }

    /// A variable whose address is taken is one of the heap's cells.
    fn share_with_the_heap(&mut self, function: &str) -> bool {
        let vars = self.vars.get_mut(function).expect("every function's facts");
        let mut changed = false;
        for &v in &self.shared[function] {
            changed |= self.heap.absorb(vars[v as usize]);
            changed |= vars[v as usize].absorb(self.heap);
        }
        changed
    }

    /// The effect of one instruction of `function`.
    fn apply(&mut self, function: &str, instr: &Instr, bodies: &BTreeMap<String, &Body>) -> bool {
        let read = |e: &Expr| self.eval(function, e, &|v| self.vars[function][v as usize]);
        let mut into_heap = new_cells(instr, &read);
        let mut into_var: Vec<(&str, VarId, Abstract)> = (self.assigned(instr, &read))
            .map(|(v, value)| (function, v, value))
            .into_iter()
            .collect();
        match instr {
            Instr::Assign(Place::Deref(_) | Place::Index(..) | Place::Field(..), e) => {
                into_heap.push(read(e))
            }
            Instr::Call { func, args, .. } => {
                // Names are resolved before lowering: the callee is there.
                if let Some(callee) = bodies.get(func.as_str()) {
                    for (k, a) in args.iter().enumerate().take(callee.params) {
                        into_var.push((func.as_str(), k as VarId, read(a)));
                    }
                }
            }
            _ => {}
        }
        let mut changed = false;
        for value in into_heap {
            changed |= self.heap.absorb(value);
        }
        for (f, v, value) in into_var {
            changed |=
                self.vars.get_mut(f).expect("every function's facts")[v as usize].absorb(value);
        }
        changed
    }

    /// The variable `instr` assigns, in its own function, and the value,
    /// its right side read by `read`: both passes follow assignments so.
    fn assigned(
        &self,
        instr: &Instr,
        read: &dyn Fn(&Expr) -> Abstract,
    ) -> Option<(VarId, Abstract)> {
        match instr {
            Instr::Assign(Place::Var(v), e) => Some((*v, read(e))),
            Instr::Alloc(v, _) => Some((*v, Abstract::NONE)),
            Instr::Call { dst, func, .. } => Some((*dst, self.result_of(func))),
            _ => None,
        }
    }

    /// What a call of `name` returns.
    fn result_of(&self, name: &str) -> Abstract {
        match self.results.get(name) {
            Some(&Some(r)) => self.vars[name][r as usize],
            _ => Abstract::ANYTHING,
        }
    }

    /// What every value of `e` (in `function`) has in common, with the
    /// variables' values from `var` where the summary does not decide.
    fn eval(&self, function: &str, e: &Expr, var: &dyn Fn(VarId) -> Abstract) -> Abstract {
        match e {
            Expr::Null => Abstract::NULL,
            Expr::Var(v) if self.shared[function].binary_search(v).is_ok() => {
                self.vars[function][*v as usize]
            }
            Expr::Var(v) => var(*v),
            Expr::Load(_) | Expr::Index(..) | Expr::Field(..) => self.heap,
            Expr::Array(xs) => self.lengths.array_of(xs.len()),
            // Integers, and pointers or records that are never null.
            Expr::Int(_)
            | Expr::Unary(..)
            | Expr::Binary(..)
            | Expr::Cmp(..)
            | Expr::AddrOf(_)
            | Expr::Record(_) => Abstract::NONE,
        }
    }
}

/// The values the elements and fields of the literals `instr` builds put
/// into new cells of the heap.
fn new_cells(instr: &Instr, read: &dyn Fn(&Expr) -> Abstract) -> Vec<Abstract> {
    let mut parts = Vec::new();
    instr.walk_exprs(&mut |x| match x {
        Expr::Array(xs) => parts.extend(xs.iter().map(read)),
        Expr::Record(fs) => parts.extend(fs.iter().map(|(_, x)| read(x))),
        _ => {}
    });
    if let Instr::Alloc(_, e) = instr {
        parts.push(read(e));
    }
    parts
}

/// The flow-sensitive pass over one function, one variable at a time: for
/// each variable that only its own assignments change (not integers, not
/// address-taken) and whose assignments give different values, its value
/// at each vertex. An assignment's right side reads the other variables
/// from the summary, which holds at every vertex: one variable's states
/// settle within a few visits of each vertex, where a state of all of them
/// at once took ~70 visits per vertex on a 2,000-line program.
struct Flow<'a> {
    summary: &'a Summary,
    function: &'a str,
    body: &'a Body,
    successors: Vec<Vec<EdgeId>>,
    order: Vec<usize>,
    /// Per variable with states: its value at each vertex (`None` where no
    /// path reaches).
    states: BTreeMap<VarId, Vec<Option<Abstract>>>,
}

impl<'a> Flow<'a> {
    fn new(summary: &'a Summary, function: &'a str, body: &'a Body) -> Flow<'a> {
        let successors = body.successors();
        let next: Vec<Vec<usize>> = (successors.iter())
            .map(|out| {
                out.iter()
                    .map(|&e| body.edges[e as usize].to as usize)
                    .collect()
            })
            .collect();
        let order = super::reverse_postorder(body.entry as usize, &next);
        let mut flow = Flow {
            summary,
            function,
            body,
            successors,
            order,
            states: BTreeMap::new(),
        };
        for v in flow.worth_following() {
            let states = flow.follow(v);
            flow.states.insert(v, states);
        }
        flow
    }

    /// The variables whose value depends on where the run is: not integers
    /// or records (never null, no length), not address-taken (a write
    /// through a pointer may change them), assigned values that differ.
    /// A variable tested against null is followed too: past the test (a
    /// branch's `assume`, a dereference's `assert`) it is not null until
    /// it is assigned again.
    fn worth_following(&self) -> Vec<VarId> {
        let shared = &self.summary.shared[self.function];
        let mut assigned: BTreeMap<VarId, Vec<Abstract>> = BTreeMap::new();
        let mut tested = BTreeSet::new();
        for edge in &self.body.edges {
            if let Some((v, value)) = self.assignment(&edge.instr, None) {
                assigned.entry(v).or_default().push(value);
            }
            tested.extend(not_null_past(&edge.instr));
        }
        let varies = |v: &VarId| {
            (assigned.get(v)).is_some_and(|values| values.iter().any(|x| *x != values[0]))
        };
        let candidates: BTreeSet<VarId> = assigned.keys().chain(&tested).copied().collect();
        (candidates.into_iter())
            .filter(|v| {
                let ty = &self.body.vars[*v as usize].ty;
                !matches!(ty, Type::Int | Type::Record(_))
                    && shared.binary_search(v).is_err()
                    && (varies(v) || tested.contains(v))
            })
            .collect()
    }

    /// The variable `instr` assigns and its value, `v`'s own value read
    /// from `own` (the summary's without).
    fn assignment(
        &self,
        instr: &Instr,
        own: Option<(VarId, Abstract)>,
    ) -> Option<(VarId, Abstract)> {
        self.summary.assigned(instr, &|e| self.eval_with(e, own))
    }

    fn eval_with(&self, e: &Expr, own: Option<(VarId, Abstract)>) -> Abstract {
        let var = |w: VarId| match own {
            Some((v, value)) if v == w => value,
            _ => self.summary.vars[self.function][w as usize],
        };
        self.summary.eval(self.function, e, &var)
    }

    /// `v`'s value at each vertex, vertices taken in reverse postorder.
    fn follow(&self, v: VarId) -> Vec<Option<Abstract>> {
        let entry = self.body.entry;
        let mut states = vec![None; self.body.node_count as usize];
        // A parameter holds what the calls pass; a local, nothing yet.
        states[entry as usize] = Some(match (v as usize) < self.body.params {
            true => self.summary.vars[self.function][v as usize],
            false => Abstract::NONE,
        });
        let mut queued = vec![false; states.len()];
        let mut work = BinaryHeap::from([Reverse((self.order[entry as usize], entry))]);
        while let Some(Reverse((_, n))) = work.pop() {
            crate::deadline::tick();
            queued[n as usize] = false;
            let here = states[n as usize].expect("reached");
            for &e in &self.successors[n as usize] {
                let edge = &self.body.edges[e as usize];
                let after = self.transfer(v, here, &edge.instr);
                let to = edge.to as usize;
                let changed = match &mut states[to] {
                    slot @ None => {
                        *slot = Some(after);
                        true
                    }
                    Some(old) => old.absorb(after),
                };
                if changed && !queued[to] {
                    queued[to] = true;
                    work.push(Reverse((self.order[to], edge.to)));
                }
            }
        }
        states
    }

    /// `v`'s value after `instr`, `here` before it.
    fn transfer(&self, v: VarId, here: Abstract, instr: &Instr) -> Abstract {
        match instr {
            // A new activation's locals hold nothing yet.
            Instr::Enter(vars) if vars.contains(&v) => Abstract::NONE,
            // A run goes on past the test only if `v` is not null.
            _ if not_null_past(instr) == Some(v) => Abstract {
                may_be_null: false,
                ..here
            },
            _ => match self.assignment(instr, Some((v, here))) {
                Some((w, value)) if w == v => value,
                _ => here,
            },
        }
    }

    /// `e`'s value at vertex `n`.
    fn eval_at(&self, n: NodeId, e: &Expr) -> Abstract {
        let var = |w: VarId| {
            let followed = self.states.get(&w).and_then(|s| s[n as usize]);
            followed.unwrap_or(self.summary.vars[self.function][w as usize])
        };
        self.summary.eval(self.function, e, &var)
    }

    /// Every target all of whose checks hold where they stand (by these
    /// facts or by the value ranges), with why. The ranges cost more (a
    /// range per variable at each vertex), so they are solved only when
    /// these facts leave a check open.
    fn proofs(&self) -> BTreeMap<TargetId, String> {
        let checks: Vec<(&Edge, TargetId, Option<String>)> = (self.body.edges.iter())
            .filter_map(|edge| match &edge.instr {
                Instr::Assert(c, t) => Some((edge, *t, self.holds(edge.from, c))),
                _ => None,
            })
            .collect();
        let some_open = checks.iter().any(|(_, _, why)| why.is_none());
        let ranges = some_open
            .then(|| super::ranges::Ranges::of(self.body))
            .flatten();
        let (mut proofs, mut open) = (BTreeMap::new(), BTreeSet::new());
        for (edge, t, why) in checks {
            let by_ranges = || ranges.as_ref()?.proves(edge);
            match why.or_else(by_ranges) {
                Some(why) => {
                    proofs.entry(t).or_insert(why);
                }
                None => {
                    open.insert(t);
                }
            }
        }
        proofs.retain(|t, _| !open.contains(t));
        proofs
    }

    /// Why the check `c` at vertex `n` always holds, if the facts say so.
    fn holds(&self, n: NodeId, c: &Cond) -> Option<String> {
        match c {
            Cond::Cmp(CmpOp::Ne, p, Expr::Null) | Cond::Cmp(CmpOp::Ne, Expr::Null, p) => {
                let value = self.eval_at(n, p);
                (!value.may_be_null).then(|| "no null value ever reaches the pointer".into())
            }
            Cond::InBounds {
                array,
                index: Expr::Int(k),
                positive: true,
            } => {
                let shortest = self.summary.lengths.shortest(self.eval_at(n, array))?;
                let k = usize::try_from(k).ok()?;
                (k < shortest).then(|| {
                    format!(
                        "index {k} is below every length the array can have there (≥ {shortest})"
                    )
                })
            }
            _ => None,
        }
    }
}

/// The variable a run that goes on past `instr` holds a non-null value
/// in: `assume(v != null)` (a branch) or `assert(v != null)` (a
/// dereference's check).
fn not_null_past(instr: &Instr) -> Option<VarId> {
    match instr {
        Instr::Assume(c) | Instr::Assert(c, _) => match c {
            Cond::Cmp(CmpOp::Ne, Expr::Var(v), Expr::Null)
            | Cond::Cmp(CmpOp::Ne, Expr::Null, Expr::Var(v)) => Some(*v),
            _ => None,
        },
        _ => None,
    }
}
