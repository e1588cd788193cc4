//! Parts and templates (`docs/compact-se.md` §3, §4): the part detector
//! (cycles per loop path, recursive call edges, entries, exits), loop
//! templates by running the small program P′ classically (§5.1) and
//! recursion templates from the calling and returning phases (§5.2).
//! Nothing here looks at loop syntax: a template is what executing the
//! cycle once gives, closed over κ by exact rules only.

use super::exec::{self, Program, step_edge, symbols};
use super::solver::SatCheck;
use super::state::{PState, Value, substitution};
use crate::ir::{Body, EdgeId, Instr, NodeId, VarKind};
use crate::smt::Answer;
use crate::term::{Subst, TermId, Terms, Var, VarKind as TermVar};

/// A program part: one cyclic path with its entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Part {
    pub entry: NodeId,
    /// The cycle's edges from the entry back to it. For a recursion part the
    /// last one is the recursive call edge (closed by the artificial edge).
    pub cycle: Vec<EdgeId>,
    /// `Some(call edge)` for the calling phase of a recursion.
    pub recursive_call: Option<EdgeId>,
    /// The loop's other cycles, for a template with one parameter per
    /// cycle (`docs/compact-se.md` §7.5); empty for one parameter.
    pub others: Vec<Vec<EdgeId>>,
}

/// The most cycles of a template with one parameter per cycle.
const MAX_CYCLES: usize = 8;

/// Every part of a function: one per body backbone of each loop (a cycle
/// through its header), and one per path from the entry to each recursive
/// call edge.
pub fn parts(body: &Body) -> Vec<Part> {
    const LIMIT: usize = 64;
    let mut out = Vec::new();
    for l in &body.loops {
        let cycles = crate::ir::loop_backbones(body, l, LIMIT).paths;
        for cycle in &cycles {
            out.push(Part {
                entry: l.header,
                cycle: cycle.clone(),
                recursive_call: None,
                others: vec![],
            });
        }
        if (2..=MAX_CYCLES).contains(&cycles.len()) {
            out.push(Part {
                entry: l.header,
                cycle: cycles[0].clone(),
                recursive_call: None,
                others: cycles[1..].to_vec(),
            });
        }
    }
    for (i, e) in body.edges.iter().enumerate() {
        if matches!(&e.instr, Instr::Call { func, .. } if *func == body.name) {
            for path in crate::ir::backbones(body, e.from, LIMIT).paths {
                let mut cycle = path;
                cycle.push(i as EdgeId);
                out.push(Part {
                    entry: body.entry,
                    cycle,
                    recursive_call: Some(i as EdgeId),
                    others: vec![],
                });
            }
        }
    }
    out
}

/// One tuple (θₓ, φₓ, [], x)⟦κ⟧ of a template: leaving through `edge`.
#[derive(Clone, Debug)]
pub struct ExitTuple {
    pub edge: EdgeId,
    pub loc: NodeId,
    pub theta: Vec<Value>,
    pub phi: TermId,
}

/// A template (loop or recursion), in the store it was computed in.
#[derive(Clone, Debug)]
pub struct Template {
    pub func: usize,
    pub entry: NodeId,
    pub kappa: Var,
    /// Further parameters: one κ per other cycle and the trip-count
    /// functions of a template with several (renamed at each instantiation).
    pub more_params: Vec<Var>,
    /// Bound variables of its ∀τ prefixes (renamed at each instantiation).
    pub bound: Vec<Var>,
    /// Θ of the function, the symbols the tuples are written over.
    pub symbols: Vec<Value>,
    /// θ⟦κ⟧ of the cycle.
    pub closed: Vec<Value>,
    pub exits: Vec<ExitTuple>,
    /// Exits dropped because no path leaves through them (with why).
    pub dropped: Vec<(EdgeId, String)>,
    /// For a recursion template: the returning phase's θ⟦κ⟧ (l′ is the
    /// function's exit).
    pub returning: Option<Vec<Value>>,
    /// Exits kept because the solver could not decide them.
    pub undecided: Vec<String>,
}

/// What the detector made of a part.
#[derive(Clone, Debug)]
pub enum Outcome {
    Template(Box<Template>),
    /// No real path goes round the cycle.
    NoCycle,
    /// No exact template: the reason.
    Refused(String),
}

/// §5.1 / §5.2: the template of one part of function `func`.
pub fn derive(
    terms: &mut Terms,
    prog: &Program,
    func: usize,
    part: &Part,
    sat: &mut dyn SatCheck,
) -> Outcome {
    let derived = if part.others.is_empty() {
        derive_inner(terms, prog, func, part, sat)
    } else {
        super::multi::derive(terms, prog, func, part, sat)
    };
    match derived {
        Ok(o) => o,
        Err(why) => Outcome::Refused(why),
    }
}

fn derive_inner(
    terms: &mut Terms,
    prog: &Program,
    func: usize,
    part: &Part,
    sat: &mut dyn SatCheck,
) -> Result<Outcome, String> {
    let body = &prog.funcs[func];
    refuse_unsupported_cycle(body, part)?;
    let theta0 = symbols(terms, body);
    // P′, run classically: one trip round the cycle to e′ …
    let Some(states) = one_trip(terms, prog, func, part, &theta0)? else {
        return Ok(Outcome::NoCycle);
    };
    let trip = states.last().expect("a trip has a state").clone();
    let mut undecided = Vec::new();
    match sat.check(terms, &trip.pc) {
        Answer::Unsat => return Ok(Outcome::NoCycle),
        Answer::Unknown(why) => undecided.push(format!("round the cycle: {why}")),
        Answer::Sat => {}
    }
    let kappa = terms.new_var(TermVar::Counter, "κ");
    let tau = terms.new_var(TermVar::Bound, "τ");
    let closed = close(terms, body, &theta0, &trip.theta, kappa)?;
    let closed_tau = close(terms, body, &theta0, &trip.theta, tau)?;
    let forms = ClosedForms {
        theta0: &theta0,
        closed: &closed,
        closed_tau: &closed_tau,
        kappa,
        tau,
        phi_trip: conj(terms, &trip.pc),
    };
    // … and each exit edge to its exit x (an error location of P′).
    let (exits, dropped) = exit_tuples(terms, prog, part, &states, &forms, sat, &mut undecided)?;
    let returning = match part.recursive_call {
        Some(call) => Some(returning_phase(terms, body, call, kappa)?),
        None => None,
    };
    Ok(Outcome::Template(Box::new(Template {
        func,
        entry: part.entry,
        kappa,
        more_params: vec![],
        bound: vec![tau],
        symbols: theta0,
        closed,
        exits,
        dropped,
        returning,
        undecided,
    })))
}

/// The states along one trip round the part's cycle from Θ (the last one
/// at e′); `None` if a guard on it is false.
fn one_trip(
    terms: &mut Terms,
    prog: &Program,
    func: usize,
    part: &Part,
    theta0: &[Value],
) -> Result<Option<Vec<PState>>, String> {
    let body = &prog.funcs[func];
    let mut cur = PState {
        func,
        theta: theta0.to_vec(),
        pc: vec![],
        stack: vec![],
        loc: part.entry,
    };
    let mut states = vec![cur.clone()];
    for (k, &e) in part.cycle.iter().enumerate() {
        let last = k + 1 == part.cycle.len();
        cur = match (last, part.recursive_call) {
            (true, Some(call)) => artificial_call(terms, body, &cur, call)?,
            _ => match step_edge(terms, prog, &cur, e)? {
                Some(s) => s.state,
                None => return Ok(None),
            },
        };
        states.push(cur.clone());
    }
    Ok(Some(states))
}

/// θ⟦κ⟧, θ⟦τ⟧ and the trip's φ: what every exit tuple is built from.
struct ClosedForms<'a> {
    theta0: &'a [Value],
    closed: &'a [Value],
    closed_tau: &'a [Value],
    kappa: Var,
    tau: Var,
    phi_trip: TermId,
}

pub(super) type Dropped = Vec<(EdgeId, String)>;

/// The state after exit edge `id`, if a path may leave through it: an exit
/// whose guard is false or whose condition is unsatisfiable goes to
/// `dropped`; one the solver cannot decide is kept, and noted in
/// `undecided` (a solver `unknown` never drops an exit).
pub(super) fn leave_through(
    terms: &mut Terms,
    prog: &Program,
    state: &PState,
    id: EdgeId,
    sat: &mut dyn SatCheck,
    dropped: &mut Dropped,
    undecided: &mut Vec<String>,
) -> Result<Option<exec::Succ>, String> {
    let Some(out) = step_edge(terms, prog, state, id)? else {
        dropped.push((id, "its guard is false".to_string()));
        return Ok(None);
    };
    match sat.check(terms, &out.state.pc) {
        Answer::Unsat => {
            dropped.push((id, "no path leaves through it".to_string()));
            return Ok(None);
        }
        Answer::Unknown(why) => undecided.push(format!("exit e{id}: {why}")),
        Answer::Sat => {}
    }
    Ok(Some(out))
}

/// One tuple per exit edge that a path can take: (θ⟦κ⟧ ∘ θ̂, φₓ, [], x).
fn exit_tuples(
    terms: &mut Terms,
    prog: &Program,
    part: &Part,
    states: &[PState],
    f: &ClosedForms,
    sat: &mut dyn SatCheck,
    undecided: &mut Vec<String>,
) -> Result<(Vec<ExitTuple>, Dropped), String> {
    let body = &prog.funcs[states[0].func];
    let mut exits = Vec::new();
    let mut dropped = Vec::new();
    for (k, &on_cycle) in part.cycle.iter().enumerate() {
        let u = body.edges[on_cycle as usize].from;
        for (i, e) in body.edges.iter().enumerate() {
            let id = i as EdgeId;
            if e.from != u || part.cycle.contains(&id) {
                continue;
            }
            let Some(out) =
                leave_through(terms, prog, &states[k], id, sat, &mut dropped, undecided)?
            else {
                continue;
            };
            let phi_hat = conj(terms, &out.state.pc);
            let phi = exit_condition(terms, f, phi_hat);
            let s = substitution(terms, f.theta0, f.closed);
            let theta = out
                .state
                .theta
                .iter()
                .map(|v| super::state::apply_value(terms, &s, *v))
                .collect();
            exits.push(ExitTuple {
                edge: id,
                loc: e.to,
                theta,
                phi,
            });
        }
    }
    Ok((exits, dropped))
}

/// The paper's assumptions, checked on the cycle: no calls (other than
/// the closing recursive call), no reads that may be of unassigned
/// variables (P′ starts with every variable set).
pub(super) fn refuse_unsupported_cycle(body: &Body, part: &Part) -> Result<(), String> {
    for (k, &e) in part.cycle.iter().enumerate() {
        let last = k + 1 == part.cycle.len();
        let edge = &body.edges[e as usize];
        if matches!(edge.instr, Instr::Call { .. }) && !(last && part.recursive_call.is_some()) {
            return Err("the cycle passes through a call".into());
        }
        for (_, other) in body
            .edges
            .iter()
            .enumerate()
            .filter(|(_, o)| o.from == edge.from)
        {
            if let Instr::Assume(c) | Instr::Assert(c, _) = &other.instr
                && matches!(c, crate::ir::Cond::Initialized { .. })
            {
                return Err("the cycle reads a variable that may be unassigned".into());
            }
        }
    }
    Ok(())
}

/// The artificial edge that closes the calling phase: the arguments bound
/// to the parameters, without a frame; the locals are as at the entry.
fn artificial_call(
    terms: &mut Terms,
    body: &Body,
    s: &PState,
    call: EdgeId,
) -> Result<PState, String> {
    let Instr::Call { args, .. } = &body.edges[call as usize].instr else {
        unreachable!("a recursion part ends with its call edge")
    };
    let entry = symbols(terms, body);
    let mut theta = entry.clone();
    for (i, a) in args.iter().enumerate() {
        theta[i] = exec::eval(terms, &s.theta, a)?;
    }
    for (i, v) in body.vars.iter().enumerate() {
        if v.kind == VarKind::Global {
            theta[i] = s.theta[i];
        }
    }
    Ok(PState {
        theta,
        loc: body.entry,
        ..s.clone()
    })
}

/// §5.2's returning phase: from the exit, the artificial return edge to
/// the call's target v, then v … x, which must not branch and may read
/// only the call's result and the globals. θ⟦κ⟧ over `$ret` and globals.
fn returning_phase(
    terms: &mut Terms,
    body: &Body,
    call: EdgeId,
    kappa: Var,
) -> Result<Vec<Value>, String> {
    let Instr::Call { dst, .. } = &body.edges[call as usize].instr else {
        unreachable!("a call edge")
    };
    let entry = symbols(terms, body);
    let ret = body
        .var_id(crate::ir::RETURN_VAR)
        .ok_or("a function without a return variable")? as usize;
    let mut theta = vec![Value::Unset; body.vars.len()];
    theta[*dst as usize] = entry[ret];
    for (i, v) in body.vars.iter().enumerate() {
        if v.kind == VarKind::Global {
            theta[i] = entry[i];
        }
    }
    let mut loc = body.edges[call as usize].to;
    let succ = body.successors();
    let mut steps = 0;
    while loc != body.exit {
        let out = &succ[loc as usize];
        if out.len() != 1 {
            return Err("branching after the recursive call".into());
        }
        let edge = &body.edges[out[0] as usize];
        match &edge.instr {
            Instr::Skip | Instr::Output(_) => {}
            Instr::Assign(crate::ir::Place::Var(v), x) => {
                theta[*v as usize] = exec::eval(terms, &theta, x)
                    .map_err(|_| "the return path reads the caller's locals".to_string())?;
            }
            _ => return Err("the return path does more than assignments".into()),
        }
        loc = edge.to;
        steps += 1;
        if steps > body.edges.len() {
            return Err("the return path is cyclic".into());
        }
    }
    let mut kept = entry.clone();
    kept[ret] = theta[ret];
    for (i, v) in body.vars.iter().enumerate() {
        if v.kind == VarKind::Global {
            kept[i] = theta[i];
        }
    }
    let mut closed = close(terms, body, &entry, &kept, kappa)?;
    for (i, v) in body.vars.iter().enumerate() {
        if i != ret && v.kind != VarKind::Global {
            closed[i] = entry[i];
        }
    }
    Ok(closed)
}

/// φₓ⟦κ⟧ = 0 ≤ κ ∧ ∀τ (0 ≤ τ < κ → θ⟦τ⟧⟨φ⟩) ∧ θ⟦κ⟧⟨φ̂⟩.
fn exit_condition(terms: &mut Terms, f: &ClosedForms, phi_hat: TermId) -> TermId {
    let (k, t, zero) = (terms.var(f.kappa), terms.var(f.tau), terms.int(0));
    let nonneg = terms.le(zero, k);
    let at_tau = substitution(terms, f.theta0, f.closed_tau);
    let trip_at_tau = at_tau.apply(terms, f.phi_trip);
    let low = terms.le(zero, t);
    let high = terms.lt(t, k);
    let range = terms.and(vec![low, high]);
    let body = terms.implies(range, trip_at_tau);
    let every = terms.forall(vec![f.tau], body);
    let at_kappa = substitution(terms, f.theta0, f.closed);
    let leave = at_kappa.apply(terms, phi_hat);
    terms.and(vec![nonneg, every, leave])
}

pub(super) fn conj(terms: &mut Terms, pc: &[TermId]) -> TermId {
    terms.and(pc.to_vec())
}

/// θ⟦κ⟧ from one trip's θ, variable by variable, with exact rules only
/// (`docs/compact-se.md` §3, §7.3): (N) Θ(a) + c ↦ Θ(a) + c·κ; (A) a
/// variable (an array included) the trip leaves alone stays; (L) a value
/// e that does not read a's own entry value, over variables closed by N or
/// A, is the value of the last trip: ite(κ = 0, Θ(a), θ⟦κ−1⟧⟨e⟩).
/// Anything else: no template.
fn close(
    terms: &mut Terms,
    body: &Body,
    theta0: &[Value],
    trip: &[Value],
    kappa: Var,
) -> Result<Vec<Value>, String> {
    let k = terms.var(kappa);
    let mut first: Vec<Option<Value>> = Vec::with_capacity(trip.len());
    for (a, b) in theta0.iter().zip(trip) {
        first.push(match (a, b) {
            _ if a == b => Some(*a),
            (Value::Int(a0), Value::Int(t)) => {
                let diff = terms.sub(*t, *a0);
                terms.as_int(diff).cloned().map(|c| {
                    let step = terms.scale(c, k);
                    Value::Int(terms.add(*a0, step))
                })
            }
            _ => None,
        });
    }
    // θ⟦κ−1⟧ over the variables closed so far.
    let closed_vars: Vec<Var> = theta0
        .iter()
        .zip(&first)
        .filter(|(_, c)| c.is_some())
        .flat_map(|(a, _)| leaves(terms, a))
        .collect();
    let mut previous = Subst::new();
    let one_less = terms.add_int(k, -1);
    previous.bind(kappa, one_less);
    let before_last: Vec<Value> = first
        .iter()
        .zip(theta0)
        .map(|(c, a)| match c {
            Some(v) => super::state::apply_value(terms, &previous, *v),
            None => *a,
        })
        .collect();
    let at_last_trip = substitution(terms, theta0, &before_last);
    let mut out = Vec::with_capacity(trip.len());
    for (i, ((a, b), c)) in theta0.iter().zip(trip).zip(first).enumerate() {
        let name = &body.vars[i].name;
        if let Some(v) = c {
            out.push(v);
            continue;
        }
        match (a, b) {
            (Value::Int(a0), Value::Int(t))
                if terms.free_vars(*t).iter().all(|v| closed_vars.contains(v)) =>
            {
                let last = at_last_trip.apply(terms, *t);
                let zero = terms.int(0);
                let none_yet = terms.eq(k, zero);
                out.push(Value::Int(terms.ite(none_yet, *a0, last)));
            }
            (Value::Array { .. }, _) => {
                return Err(format!("array {name} is written in the cycle (rule A)"));
            }
            _ => return Err(format!("no exact closed form for {name}")),
        }
    }
    Ok(out)
}

fn leaves(terms: &Terms, v: &Value) -> Vec<Var> {
    match v {
        Value::Unset => vec![],
        Value::Int(t) => terms.free_vars(*t),
        Value::Array { cells, len } => {
            let mut out = terms.free_vars(*cells);
            out.extend(terms.free_vars(*len));
            out
        }
    }
}

/// θ⟨·⟩ as a reusable substitution (for composition elsewhere).
pub fn theta_subst(terms: &Terms, symbols: &[Value], theta: &[Value]) -> Subst {
    substitution(terms, symbols, theta)
}
