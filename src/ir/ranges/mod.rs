//! Value ranges (docs/portfolio.md §5, "Value ranges"): an abstract
//! interpretation of one flowgraph that keeps, at each vertex, a range for
//! every integer variable (a few exact values, or an interval) and, for
//! every array or record variable, the literals that may have made its
//! value. The cells of each literal (an element per index, a field per
//! name) hold one range for the whole run, grown by every write that a
//! reachable edge makes. A branch whose condition no value allows is not
//! taken, so the code behind it is dead, and its targets are proved
//! unreachable: the thesis's generated programs nest loops whose guards
//! never hold, and the shorter array assigned there never reaches the
//! index that would overflow.
//!
//! Phases: [`Ranges::ascend`] applies the edges until nothing changes,
//! widening at loop headers after a few visits; [`Ranges::narrow`] gives
//! back the bounds the widening lost; [`Ranges::closed`] checks that every
//! edge maps the states and cells into themselves, so that they hold of
//! every run whatever the phases before did (else the narrowed states are
//! dropped).
//!
//! Arrays and records are shared by reference in microc (`b = a; b[0] =
//! 7` changes `a[0]`): so a cell is a literal's, never a variable's, and a
//! write through a value of unknown origin (read through a pointer, a
//! parameter) or a call may write any cell.

mod range;
mod split;

use super::{BinOp, Body, CmpOp, Cond, Edge, Expr, Instr, Place, UnOp, VarId};
use crate::types::Type;
use num_traits::ToPrimitive;
use range::Range;
use rustc_hash::FxHashMap as HashMap;
use split::{Split, Vertex};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::rc::Rc;

/// Visits of a loop header before its ranges widen.
const WIDEN_AFTER: u32 = 3;
/// Passes over the whole graph before the cells' ranges widen.
const HEAP_WIDEN_AFTER: u32 = 3;
/// Descending passes after the fixpoint.
const NARROWING_PASSES: usize = 2;
/// Edge applications allowed per edge of the graph (and a floor), after
/// which the analysis gives up: it must stay cheap beside the engines.
const VISITS_PER_EDGE: usize = 60;
const MIN_VISITS: usize = 10_000;

type SiteId = u32;

/// What every value of a variable or cell at a point has in common.
#[derive(Clone, Debug, PartialEq)]
enum Val {
    /// No value (no run gets here with one).
    Nothing,
    Int(Range),
    /// An array or record made by one of these literals (sorted).
    Made(Rc<[SiteId]>),
    /// Any value: pointers, and what the analysis does not follow.
    Anything,
}

impl Val {
    /// The integers it may be (a value it does not follow may be any).
    fn int(&self) -> Range {
        match self {
            Val::Int(r) => *r,
            Val::Nothing => Range::EMPTY,
            Val::Made(_) | Val::Anything => Range::ANY,
        }
    }

    fn join(&self, other: &Val) -> Val {
        match (self, other) {
            (Val::Nothing, x) | (x, Val::Nothing) => x.clone(),
            (Val::Int(a), Val::Int(b)) => Val::Int(a.join(b)),
            (Val::Made(a), Val::Made(b)) => {
                let mut all = [&a[..], &b[..]].concat();
                all.sort_unstable();
                all.dedup();
                Val::Made(all.into())
            }
            _ => Val::Anything,
        }
    }

    fn widen(&self, newer: &Val, thresholds: &[i64]) -> Val {
        match (self, newer) {
            (Val::Int(a), Val::Int(b)) => Val::Int(a.widen(b, thresholds)),
            _ => self.join(newer),
        }
    }

    fn is_within(&self, other: &Val) -> bool {
        match (self, other) {
            (Val::Nothing, _) | (_, Val::Anything) => true,
            (Val::Int(a), Val::Int(b)) => a.is_subset(b),
            (Val::Made(a), Val::Made(b)) => a.iter().all(|s| b.contains(s)),
            _ => false,
        }
    }
}

/// An array or record literal of the graph: the values it makes share
/// its cells.
struct Site {
    /// A record's field names, in the literal's order; `None` for an array.
    fields: Option<Vec<String>>,
    /// How many cells: the array's length, or the number of fields.
    len: usize,
}

/// Which cells of a literal an access touches.
enum Pick<'a> {
    Index(Range),
    Field(&'a str),
}

/// Every variable's value at one vertex.
type State = Vec<Val>;

/// What an edge does to the cells: values joined into cells; a value
/// joined into every element of every array (`None`) or into every field
/// of a name (a write through a value of unknown origin); and, for a
/// call, anything into every cell.
#[derive(Default)]
struct Effects {
    writes: Vec<(SiteId, usize, Val)>,
    unknown: Vec<(Option<String>, Val)>,
    call: bool,
}

impl Effects {
    /// Each write as (site, cell, value), those into unknown places
    /// spread over the cells they may be.
    fn each<'s>(&'s self, sites: &'s [Site]) -> impl Iterator<Item = (usize, usize, &'s Val)> {
        let known = self.writes.iter().map(|(s, k, v)| (*s as usize, *k, v));
        let unknown = self.unknown.iter().flat_map(move |(field, v)| {
            (sites.iter().enumerate()).flat_map(move |(s, site)| {
                (0..site.len)
                    .filter(move |&k| match (field, &site.fields) {
                        (None, None) => true,
                        (Some(f), Some(names)) => &names[k] == f,
                        _ => false,
                    })
                    .map(move |k| (s, k, v))
            })
        });
        let every = (sites.iter().enumerate())
            .filter(|_| self.call)
            .flat_map(|(s, site)| (0..site.len).map(move |k| (s, k, &Val::Anything)));
        known.chain(unknown).chain(every)
    }
}

/// The ranges of one flowgraph, once solved.
pub(super) struct Ranges<'a> {
    body: &'a Body,
    sites: Vec<Site>,
    /// Each literal expression of the graph by address: the graph is
    /// borrowed for the whole analysis, so the addresses are stable.
    site_of: HashMap<*const Expr, SiteId>,
    /// Each variable's slot in the states, for those they follow (see
    /// [`slots`]); the others may hold anything.
    slot: Vec<Option<usize>>,
    graph: Split,
    /// Per vertex of the split graph, `None` where no run gets.
    states: Vec<Option<State>>,
    cells: Vec<Vec<Val>>,
    /// Where widening stops a moving bound: the graph's integer literals,
    /// each with its neighbours.
    thresholds: Vec<i64>,
    visits_left: usize,
}

impl<'a> Ranges<'a> {
    /// The ranges of `body`, or `None` if they did not settle within the
    /// budget (or were not closed under some edge).
    pub(super) fn of(body: &'a Body) -> Option<Ranges<'a>> {
        let mut r = Ranges::new(body);
        r.ascend()?;
        let widened = r.states.clone();
        r.narrow();
        if !r.closed() {
            r.states = widened;
            if !r.closed() {
                return None;
            }
        }
        Some(r)
    }

    fn new(body: &'a Body) -> Ranges<'a> {
        let (sites, site_of) = literal_sites(body);
        let (slot, followed) = slots(body);
        let graph = Split::of(body);
        let mut states = vec![None; graph.vertex_count()];
        states[body.entry as usize] = Some(vec![Val::Anything; followed]);
        Ranges {
            cells: sites.iter().map(|s| vec![Val::Nothing; s.len]).collect(),
            sites,
            site_of,
            slot,
            graph,
            states,
            thresholds: thresholds(body),
            visits_left: VISITS_PER_EDGE * body.edges.len() + MIN_VISITS,
            body,
        }
    }

    // ---- the fixpoint --------------------------------------------------

    /// Applies the edges until neither a state nor a cell changes; `None`
    /// when the budget runs out.
    fn ascend(&mut self) -> Option<()> {
        let mut visits = vec![0u32; self.states.len()];
        for pass in 0.. {
            let mut work: BinaryHeap<Reverse<(usize, Vertex)>> = (0..self.states.len())
                .filter(|&n| self.states[n].is_some())
                .map(|n| Reverse((self.graph.order[n], n)))
                .collect();
            let mut queued: Vec<bool> = self.states.iter().map(Option::is_some).collect();
            let mut cells_changed = false;
            while let Some(Reverse((_, n))) = work.pop() {
                crate::deadline::tick();
                queued[n] = false;
                for k in 0..self.graph.successors[n].len() {
                    let i = self.graph.successors[n][k];
                    self.visits_left = self.visits_left.checked_sub(1)?;
                    let (_, to, e) = self.graph.edges[i];
                    let mut fx = Effects::default();
                    let after = self.transfer(n, &self.body.edges[e as usize].instr, &mut fx);
                    cells_changed |= self.apply(fx, pass >= HEAP_WIDEN_AFTER);
                    let widen = self.graph.widens_at(to) && visits[to] >= WIDEN_AFTER;
                    if let Some(after) = after
                        && self.merge(to, after, widen)
                    {
                        visits[to] += 1;
                        if !std::mem::replace(&mut queued[to], true) {
                            work.push(Reverse((self.graph.order[to], to)));
                        }
                    }
                }
            }
            if !cells_changed {
                return Some(());
            }
        }
        unreachable!("the passes end when the cells stop changing")
    }

    /// Joins (or widens) `after` into vertex `to`'s state; whether it grew.
    fn merge(&mut self, to: usize, after: State, widen: bool) -> bool {
        let Some(old) = &mut self.states[to] else {
            self.states[to] = Some(after);
            return true;
        };
        let mut changed = false;
        for (o, a) in old.iter_mut().zip(after) {
            if !a.is_within(o) {
                *o = match widen {
                    true => o.widen(&a, &self.thresholds),
                    false => o.join(&a),
                };
                changed = true;
            }
        }
        changed
    }

    /// Joins an edge's writes into the cells; whether one grew.
    fn apply(&mut self, fx: Effects, widen: bool) -> bool {
        let mut changed = false;
        for (site, k, v) in fx.each(&self.sites) {
            let cell = &mut self.cells[site][k];
            if !v.is_within(cell) {
                *cell = match widen {
                    true => cell.widen(v, &self.thresholds),
                    false => cell.join(v),
                };
                changed = true;
            }
        }
        changed
    }

    /// Each vertex's state recomputed from its predecessors', in order,
    /// a few times: the bounds that widening pushed to infinity come back
    /// where the loop's exit or guard bounds them. The cells stay.
    fn narrow(&mut self) {
        let mut by_order: Vec<usize> = (0..self.states.len())
            .filter(|&n| self.states[n].is_some() && n != self.body.entry as usize)
            .collect();
        by_order.sort_by_key(|&n| self.graph.order[n]);
        for _ in 0..NARROWING_PASSES {
            for &n in &by_order {
                crate::deadline::tick();
                self.states[n] = self.incoming(n);
            }
        }
    }

    /// The join of what vertex `n`'s in-edges bring.
    fn incoming(&self, n: usize) -> Option<State> {
        let mut joined: Option<State> = None;
        for &i in &self.graph.predecessors[n] {
            let (from, _, e) = self.graph.edges[i];
            let instr = &self.body.edges[e as usize].instr;
            let Some(after) = self.transfer(from, instr, &mut Effects::default()) else {
                continue;
            };
            joined = Some(match joined {
                None => after,
                Some(j) => j.iter().zip(&after).map(|(a, b)| a.join(b)).collect(),
            });
        }
        joined
    }

    /// Whether every edge maps the states and cells into themselves: then
    /// they hold of every run, by induction on its steps.
    fn closed(&self) -> bool {
        self.graph.edges.iter().all(|&(from, to, e)| {
            crate::deadline::tick();
            let mut fx = Effects::default();
            let after = self.transfer(from, &self.body.edges[e as usize].instr, &mut fx);
            let state_ok = match (after, &self.states[to]) {
                (None, _) => true,
                (Some(_), None) => false,
                (Some(a), Some(s)) => a.iter().zip(s).all(|(x, y)| x.is_within(y)),
            };
            let cells_ok =
                (fx.each(&self.sites)).all(|(site, k, v)| v.is_within(&self.cells[site][k]));
            state_ok && cells_ok
        })
    }

    // ---- one edge ------------------------------------------------------

    /// The state after `instr` from vertex `n`'s, its writes into `fx`;
    /// `None` if no run takes the edge.
    fn transfer(&self, n: usize, instr: &Instr, fx: &mut Effects) -> Option<State> {
        let mut s = self.states[n].clone()?;
        match instr {
            Instr::Assign(Place::Var(v), e) => {
                let value = self.eval(&s, e, fx);
                self.set(&mut s, *v, value);
            }
            Instr::Assign(place, e) => {
                let value = self.eval(&s, e, fx);
                self.write(&s, place, value, fx);
            }
            Instr::Alloc(v, e) => {
                self.eval(&s, e, fx);
                self.set(&mut s, *v, Val::Anything);
            }
            Instr::Call { dst, args, .. } => {
                args.iter().for_each(|a| drop(self.eval(&s, a, fx)));
                // The callee may write any cell its arguments or the heap
                // reach.
                fx.call = true;
                self.set(&mut s, *dst, Val::Anything);
            }
            Instr::Output(e) => drop(self.eval(&s, e, fx)),
            Instr::Assume(c) | Instr::Assert(c, _) => return self.assume(s, c, fx),
            Instr::Enter(vars) => vars
                .iter()
                .for_each(|v| self.set(&mut s, *v, Val::Anything)),
            Instr::Skip => {}
        }
        Some(s)
    }

    fn set(&self, s: &mut State, v: VarId, value: Val) {
        if let Some(k) = self.slot[v as usize] {
            s[k] = value;
        }
    }

    fn var(&self, s: &State, v: VarId) -> Val {
        self.slot[v as usize].map_or(Val::Anything, |k| s[k].clone())
    }

    /// A write into a cell: joined into every cell the place may be.
    fn write(&self, s: &State, place: &Place, value: Val, fx: &mut Effects) {
        let (base, pick) = match place {
            Place::Var(_) | Place::Deref(_) => return,
            Place::Index(b, i) => (b, Pick::Index(self.eval(s, i, fx).int())),
            Place::Field(b, f) => (b, Pick::Field(f)),
        };
        match self.place_value(s, base, fx) {
            Val::Made(sites) => {
                for &site in sites.iter() {
                    for k in self.picked(site, &pick) {
                        fx.writes.push((site, k, value.clone()));
                    }
                }
            }
            Val::Nothing => {}
            Val::Int(_) | Val::Anything => {
                let field = match pick {
                    Pick::Index(_) => None,
                    Pick::Field(f) => Some(f.to_string()),
                };
                fx.unknown.push((field, value));
            }
        }
    }

    /// The value a place holds (its own expressions evaluated in place:
    /// their literals are the graph's).
    fn place_value(&self, s: &State, place: &Place, fx: &mut Effects) -> Val {
        match place {
            Place::Var(v) => self.var(s, *v),
            Place::Deref(p) => {
                self.eval(s, p, fx);
                Val::Anything
            }
            Place::Index(b, i) => {
                let base = self.place_value(s, b, fx);
                let pick = Pick::Index(self.eval(s, i, fx).int());
                self.read(&base, &pick)
            }
            Place::Field(b, f) => self.read(&self.place_value(s, b, fx), &Pick::Field(f)),
        }
    }

    /// The state past a test that runs pass only if `c` holds; `None` if
    /// no value allows it.
    fn assume(&self, mut s: State, c: &Cond, fx: &mut Effects) -> Option<State> {
        match c {
            Cond::Cmp(op, a, b) => {
                let (ra, rb) = (self.eval(&s, a, fx).int(), self.eval(&s, b, fx).int());
                if !ra.may(*op, &rb) {
                    return None;
                }
                let ra = self.narrow_to(&mut s, a, ra.such_that(*op, &rb))?;
                self.narrow_to(&mut s, b, rb.such_that(flip(*op), &ra))?;
            }
            Cond::InBounds {
                array,
                index,
                positive,
            } => {
                // An array not known to come from literals may be a copy
                // of an input array, which no index puts out of bounds
                // (docs/microc.md): its check tells nothing.
                let lengths = self.lengths(&self.eval(&s, array, fx));
                let ri = self.eval(&s, index, fx).int();
                let Some((shortest, longest)) = lengths else {
                    return Some(s);
                };
                match positive {
                    true => drop(self.narrow_to(&mut s, index, ri.clamp(0, longest - 1))?),
                    false if ri.is_subset(&Range::span(0, shortest - 1)) => return None,
                    false => {}
                }
            }
            Cond::Initialized { .. } => {}
        }
        Some(s)
    }

    /// Narrows an integer variable `e` to `to`; `None` if that leaves it no
    /// value. Other expressions keep their values.
    fn narrow_to(&self, s: &mut State, e: &Expr, to: Range) -> Option<Range> {
        if to.is_empty() {
            return None;
        }
        if let Expr::Var(v) = e
            && self.body.vars[*v as usize].ty == Type::Int
        {
            self.set(s, *v, Val::Int(to));
        }
        Some(to)
    }

    /// The shortest and longest length an array value may have, if it is
    /// known to come from literals.
    fn lengths(&self, array: &Val) -> Option<(i64, i64)> {
        let Val::Made(sites) = array else {
            return None;
        };
        let lens = sites
            .iter()
            .filter(|&&s| self.sites[s as usize].fields.is_none());
        let lens: Vec<i64> = lens.map(|&s| self.sites[s as usize].len as i64).collect();
        Some((*lens.iter().min()?, *lens.iter().max()?))
    }

    // ---- values --------------------------------------------------------

    fn eval(&self, s: &State, e: &Expr, fx: &mut Effects) -> Val {
        let int = |r: Range| Val::Int(r);
        match e {
            Expr::Int(n) => int(n.to_i64().map_or(Range::ANY, Range::constant)),
            Expr::Var(v) => self.var(s, *v),
            Expr::Null | Expr::AddrOf(_) => Val::Anything,
            Expr::Load(p) => {
                self.eval(s, p, fx);
                Val::Anything
            }
            Expr::Unary(op, a) => {
                let a = self.eval(s, a, fx).int();
                int(match op {
                    UnOp::Neg => a.neg(),
                    UnOp::Not => a.not(),
                })
            }
            Expr::Binary(op, a, b) => {
                let (a, b) = (self.eval(s, a, fx).int(), self.eval(s, b, fx).int());
                int(match op {
                    BinOp::Add => a.add(&b),
                    BinOp::Sub => a.sub(&b),
                    BinOp::Mul => a.mul(&b),
                    BinOp::Div => a.div(&b),
                })
            }
            Expr::Cmp(op, a, b) => {
                let (a, b) = (self.eval(s, a, fx).int(), self.eval(s, b, fx).int());
                int(Range::truth(a.may(*op, &b), a.may(op.negate(), &b)))
            }
            Expr::Index(a, i) => {
                let base = self.eval(s, a, fx);
                let pick = Pick::Index(self.eval(s, i, fx).int());
                self.read(&base, &pick)
            }
            Expr::Field(r, f) => {
                let base = self.eval(s, r, fx);
                self.read(&base, &Pick::Field(f))
            }
            Expr::Array(xs) => self.make(e, xs.iter().map(|x| self.eval(s, x, fx)).collect(), fx),
            Expr::Record(fs) => {
                let values = fs.iter().map(|(_, x)| self.eval(s, x, fx)).collect();
                self.make(e, values, fx)
            }
        }
    }

    /// A literal's value: its site, its elements written into its cells.
    fn make(&self, literal: &Expr, values: Vec<Val>, fx: &mut Effects) -> Val {
        let Some(&site) = self.site_of.get(&(literal as *const Expr)) else {
            // Not one of the graph's own literals (never so): unknown.
            return Val::Anything;
        };
        fx.writes
            .extend(values.into_iter().enumerate().map(|(k, v)| (site, k, v)));
        Val::Made(Rc::from([site]))
    }

    /// The join of the cells an access may read.
    fn read(&self, base: &Val, pick: &Pick) -> Val {
        match base {
            Val::Made(sites) => (sites.iter())
                .flat_map(|&site| self.picked(site, pick).map(move |k| (site, k)))
                .fold(Val::Nothing, |acc, (site, k)| {
                    acc.join(&self.cells[site as usize][k])
                }),
            Val::Nothing => Val::Nothing,
            Val::Int(_) | Val::Anything => Val::Anything,
        }
    }

    /// The cells of `site` an access may touch (an index out of bounds
    /// touches none: the run stopped at its check).
    fn picked(&self, site: SiteId, pick: &Pick) -> impl Iterator<Item = usize> + use<> {
        let s = &self.sites[site as usize];
        let range = match (pick, &s.fields) {
            (Pick::Index(r), None) => {
                let r = r.clamp(0, s.len as i64 - 1);
                match r.values() {
                    Some(v) => v.iter().map(|&k| k as usize).collect(),
                    None => r
                        .bounds()
                        .map_or(vec![], |(lo, hi)| (lo as usize..=hi as usize).collect()),
                }
            }
            (Pick::Field(f), Some(names)) => {
                names.iter().position(|n| n == f).into_iter().collect()
            }
            _ => vec![],
        };
        range.into_iter()
    }

    // ---- proofs --------------------------------------------------------

    /// Why the check on `edge` (an `assert`) never fails, if the ranges
    /// say so.
    pub(super) fn proves(&self, edge: &Edge) -> Option<String> {
        let Instr::Assert(c, _) = &edge.instr else {
            return None;
        };
        let states: Vec<&State> = (self.graph.copies(edge.from))
            .filter_map(|v| self.states[v].as_ref())
            .collect();
        if states.is_empty() {
            return Some(
                "no run gets there: on every way to it some branch's condition fails for every \
                 value the ranges allow"
                    .into(),
            );
        }
        let why: Vec<String> = states
            .iter()
            .map(|s| self.holds(s, c))
            .collect::<Option<_>>()?;
        Some(why.join("; "))
    }

    /// Why check `c` holds in state `s`, if the ranges say it does.
    fn holds(&self, s: &State, c: &Cond) -> Option<String> {
        let fx = &mut Effects::default();
        match c {
            Cond::Cmp(op, a, b) => {
                let (ra, rb) = (self.eval(s, a, fx).int(), self.eval(s, b, fx).int());
                (!ra.is_empty() && !rb.is_empty() && !ra.may(op.negate(), &rb)).then(|| {
                    let text = super::print::cond(self.body, c);
                    format!("`{text}` holds for every value there (left {ra}, right {rb})")
                })
            }
            Cond::InBounds {
                array,
                index,
                positive: true,
            } => {
                let (shortest, _) = self.lengths(&self.eval(s, array, fx))?;
                let ri = self.eval(s, index, fx).int();
                (!ri.is_empty() && ri.is_subset(&Range::span(0, shortest - 1))).then(|| {
                    format!(
                        "the index is in {ri} there, below every length the array can have \
                         (≥ {shortest})"
                    )
                })
            }
            _ => None,
        }
    }
}

/// `b op' a` for `a op b`.
fn flip(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        CmpOp::Eq | CmpOp::Ne => op,
    }
}

/// The variables the states follow, each with its slot, and how many:
/// those a branch or check reads, or that a write into a cell or a
/// literal's element reads, and those whose values flow into them, except
/// the variables whose address is taken (a write through a pointer may
/// change those). The others are dead weight in every state: the
/// lowering's temporaries of `input`, values only printed.
fn slots(body: &Body) -> (Vec<Option<usize>>, usize) {
    // Per variable, the variables its assignments' right sides read.
    let mut feeds: Vec<Vec<VarId>> = vec![Vec::new(); body.vars.len()];
    let mut wanted_first = Vec::new();
    for edge in &body.edges {
        let (read, with_literal) = vars_read(&edge.instr);
        match &edge.instr {
            Instr::Assign(Place::Var(v), _) if !with_literal => feeds[*v as usize].extend(read),
            Instr::Assume(_) | Instr::Assert(..) | Instr::Assign(..) => wanted_first.extend(read),
            _ if with_literal => wanted_first.extend(read),
            _ => {}
        }
    }
    // Back along assignments, from what the branches, checks and cells read.
    let mut wanted = vec![false; body.vars.len()];
    while let Some(v) = wanted_first.pop() {
        if !std::mem::replace(&mut wanted[v as usize], true) {
            wanted_first.extend(&feeds[v as usize]);
        }
    }
    for v in body.address_taken() {
        wanted[v as usize] = false;
    }
    let mut count = 0;
    let slot = (wanted.iter())
        .map(|&w| {
            w.then(|| {
                count += 1;
                count - 1
            })
        })
        .collect();
    (slot, count)
}

/// The variables an instruction reads (a write into a cell reads the
/// variable holding the array or record), and whether it builds an array
/// or record literal (whose elements go into cells).
fn vars_read(instr: &Instr) -> (Vec<VarId>, bool) {
    let (mut read, mut with_literal) = (Vec::new(), false);
    instr.walk_exprs(&mut |x| match x {
        Expr::Var(v) => read.push(*v),
        Expr::Array(_) | Expr::Record(_) => with_literal = true,
        _ => {}
    });
    if let Instr::Assign(place @ (Place::Index(..) | Place::Field(..)), _) = instr {
        read.extend(place.root_var());
    }
    (read, with_literal)
}

/// The integer literals of `body` (with their negations: `-5` is `-`
/// applied to 5) and their neighbours, sorted.
fn thresholds(body: &Body) -> Vec<i64> {
    let mut all = vec![-1, 0, 1];
    for edge in &body.edges {
        edge.instr.walk_exprs(&mut |x| {
            if let Expr::Int(n) = x
                && let Some(n) = n.to_i64()
            {
                for k in [n, n.saturating_neg()] {
                    all.extend([k.saturating_sub(1), k, k.saturating_add(1)]);
                }
            }
        });
    }
    all.sort_unstable();
    all.dedup();
    all
}

/// Every array and record literal of `body`, with its cells.
fn literal_sites(body: &Body) -> (Vec<Site>, HashMap<*const Expr, SiteId>) {
    let (mut sites, mut site_of) = (Vec::new(), HashMap::default());
    for edge in &body.edges {
        edge.instr.walk_exprs(&mut |x| {
            let site = match x {
                Expr::Array(xs) => Site {
                    fields: None,
                    len: xs.len(),
                },
                Expr::Record(fs) => Site {
                    fields: Some(fs.iter().map(|(f, _)| f.clone()).collect()),
                    len: fs.len(),
                },
                _ => return,
            };
            site_of.insert(x as *const Expr, sites.len() as SiteId);
            sites.push(site);
        });
    }
    (sites, site_of)
}
