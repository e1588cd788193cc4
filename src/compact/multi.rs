//! Templates with one parameter per cycle (the paper's §6;
//! `docs/compact-se.md` §7.5): a loop whose cycles all move every variable
//! by constants (rule N) or leave it alone (rule A) is folded as a whole.
//! After κ₁ … κₘ trips round cycles 1 … m, in any order, each variable is
//! Θ(a) + Σⱼ dⱼ(a)·κⱼ. Which cycle each trip takes is fixed by the state
//! (the cycles' conditions exclude each other), so the path condition
//! says it exactly with trip-count functions cⱼ (cⱼ(τ): trips round cycle
//! j among the first τ): cⱼ(0) = 0, every trip τ < K = Σκⱼ takes a cycle
//! whose condition holds at θ_τ and counts it, and cⱼ(K) = κⱼ. Exact: the
//! functions are determined by the path, not guessed.

use super::exec::{Program, step_edge, symbols};
use super::solver::SatCheck;
use super::state::{PState, Value, apply_value, substitution};
use super::template::{
    ExitTuple, Outcome, Part, Template, conj, leave_through, refuse_unsupported_cycle,
};
use crate::ir::EdgeId;
use crate::smt::Answer;
use crate::term::{TermId, Terms, Var, VarKind as TermVar};
use num_bigint::BigInt;

/// One cycle's trip from Θ: the states along it and its increments.
struct Trip {
    cycle: Vec<EdgeId>,
    states: Vec<PState>,
    phi: TermId,
    /// dⱼ(a) per variable (`None` for arrays and unset, unchanged).
    steps: Vec<Option<BigInt>>,
}

pub fn derive(
    terms: &mut Terms,
    prog: &Program,
    func: usize,
    part: &Part,
    sat: &mut dyn SatCheck,
) -> Result<Outcome, String> {
    let body = &prog.funcs[func];
    let theta0 = symbols(terms, body);
    let all_cycles: Vec<Vec<EdgeId>> = std::iter::once(part.cycle.clone())
        .chain(part.others.iter().cloned())
        .collect();
    let mut trips = Vec::new();
    let mut undecided = Vec::new();
    for cycle in &all_cycles {
        let one = Part {
            cycle: cycle.clone(),
            others: vec![],
            ..part.clone()
        };
        refuse_unsupported_cycle(body, &one)?;
        if let Some(trip) = run_trip(terms, prog, func, part.entry, cycle, &theta0)? {
            match sat.check(terms, &trip.states.last().expect("a trip").pc) {
                Answer::Unsat => continue,
                Answer::Unknown(why) => undecided.push(format!("a cycle: {why}")),
                Answer::Sat => {}
            }
            trips.push(trip);
        }
    }
    if trips.is_empty() {
        return Ok(Outcome::NoCycle);
    }
    let m = trips.len();
    let kappas: Vec<Var> = (0..m)
        .map(|_| terms.new_var(TermVar::Counter, "κ"))
        .collect();
    let counts: Vec<Var> = (0..m)
        .map(|j| terms.new_var(TermVar::ArraySymbol(1), format!("#c{}", j + 1)))
        .collect();
    let tau = terms.new_var(TermVar::Bound, "τ");
    let every = all_trips(terms, &theta0, &trips, &kappas, &counts, tau);
    let kappa_terms: Vec<TermId> = kappas.iter().map(|k| terms.var(*k)).collect();
    let after = memory_after(terms, &theta0, &trips, &kappa_terms);
    let on_some_cycle: Vec<EdgeId> = all_cycles.iter().flatten().copied().collect();
    let mut exits = Vec::new();
    let mut dropped = Vec::new();
    let mut seen: Vec<(Vec<EdgeId>, EdgeId)> = Vec::new();
    for trip in &trips {
        for (k, state) in trip.states.iter().enumerate().take(trip.cycle.len()) {
            let u = state.loc;
            for (i, e) in body.edges.iter().enumerate() {
                let id = i as EdgeId;
                let prefix = trip.cycle[..k].to_vec();
                if e.from != u
                    || on_some_cycle.contains(&id)
                    || seen.contains(&(prefix.clone(), id))
                {
                    continue;
                }
                seen.push((prefix, id));
                let Some(out) =
                    leave_through(terms, prog, state, id, sat, &mut dropped, &mut undecided)?
                else {
                    continue;
                };
                let phi_hat = conj(terms, &out.state.pc);
                let s = substitution(terms, &theta0, &after);
                let leave = s.apply(terms, phi_hat);
                let theta = out
                    .state
                    .theta
                    .iter()
                    .map(|v| apply_value(terms, &s, *v))
                    .collect();
                let phi = terms.and(vec![every, leave]);
                exits.push(ExitTuple {
                    edge: id,
                    loc: e.to,
                    theta,
                    phi,
                });
            }
        }
    }
    let mut more_params: Vec<Var> = kappas[1..].to_vec();
    more_params.extend(&counts);
    Ok(Outcome::Template(Box::new(Template {
        func,
        entry: part.entry,
        kappa: kappas[0],
        more_params,
        bound: vec![tau],
        symbols: theta0,
        closed: after,
        exits,
        dropped,
        returning: None,
        undecided,
    })))
}

/// One trip round a cycle from Θ; `None` if a guard on it is false.
fn run_trip(
    terms: &mut Terms,
    prog: &Program,
    func: usize,
    entry: u32,
    cycle: &[EdgeId],
    theta0: &[Value],
) -> Result<Option<Trip>, String> {
    let body = &prog.funcs[func];
    let mut cur = PState {
        func,
        theta: theta0.to_vec(),
        pc: vec![],
        stack: vec![],
        loc: entry,
    };
    let mut states = vec![cur.clone()];
    for &e in cycle {
        cur = match step_edge(terms, prog, &cur, e)? {
            Some(s) => s.state,
            None => return Ok(None),
        };
        states.push(cur.clone());
    }
    let mut steps = Vec::new();
    for (i, (a, b)) in theta0.iter().zip(&cur.theta).enumerate() {
        steps.push(match (a, b) {
            _ if a == b => None,
            (Value::Int(a0), Value::Int(t)) => {
                let d = terms.sub(*t, *a0);
                match terms.as_int(d) {
                    Some(c) => Some(c.clone()),
                    None => {
                        return Err(format!(
                            "{} does not move by a constant on every cycle",
                            body.vars[i].name
                        ));
                    }
                }
            }
            _ => return Err(format!("{} is written in a cycle", body.vars[i].name)),
        });
    }
    let phi = conj(terms, &cur.pc);
    Ok(Some(Trip {
        cycle: cycle.to_vec(),
        states,
        phi,
        steps,
    }))
}

/// Θ(a) + Σⱼ dⱼ(a)·nⱼ.
fn memory_after(terms: &mut Terms, theta0: &[Value], trips: &[Trip], n: &[TermId]) -> Vec<Value> {
    theta0
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::Int(a0) => {
                let summands: Vec<(BigInt, TermId)> = trips
                    .iter()
                    .zip(n)
                    .filter_map(|(t, nj)| t.steps[i].clone().map(|d| (d, *nj)))
                    .collect();
                if summands.is_empty() {
                    *v
                } else {
                    let moved = terms.sum(BigInt::from(0), summands);
                    Value::Int(terms.add(*a0, moved))
                }
            }
            _ => *v,
        })
        .collect()
}

/// 0 ≤ κⱼ, cⱼ(0) = 0, cⱼ(K) = κⱼ, and ∀τ (0 ≤ τ < K → ⋁ⱼ (trip j's
/// condition at θ_τ ∧ cⱼ counts it ∧ the others stay)).
fn all_trips(
    terms: &mut Terms,
    theta0: &[Value],
    trips: &[Trip],
    kappas: &[Var],
    counts: &[Var],
    tau: Var,
) -> TermId {
    let zero = terms.int(0);
    let t = terms.var(tau);
    let t1 = terms.add_int(t, 1);
    let ks: Vec<TermId> = kappas.iter().map(|k| terms.var(*k)).collect();
    let total = terms.sum(
        BigInt::from(0),
        ks.iter().map(|k| (BigInt::from(1), *k)).collect(),
    );
    let cs: Vec<TermId> = counts.iter().map(|c| terms.var(*c)).collect();
    let at = |terms: &mut Terms, c: TermId, x: TermId| terms.select(c, vec![x]);
    let mut facts = Vec::new();
    for (k, c) in ks.iter().zip(&cs) {
        facts.push(terms.le(zero, *k));
        let c0 = at(terms, *c, zero);
        facts.push(terms.eq(c0, zero));
        let ck = at(terms, *c, total);
        facts.push(terms.eq(ck, *k));
    }
    let now: Vec<TermId> = cs.iter().map(|c| at(terms, *c, t)).collect();
    let next: Vec<TermId> = cs.iter().map(|c| at(terms, *c, t1)).collect();
    let state_at_tau = memory_after(terms, theta0, trips, &now);
    let s = substitution(terms, theta0, &state_at_tau);
    let mut choices = Vec::new();
    for (j, trip) in trips.iter().enumerate() {
        let mut parts = vec![s.apply(terms, trip.phi)];
        for i in 0..trips.len() {
            let bumped = terms.add_int(now[i], i64::from(i == j));
            parts.push(terms.eq(next[i], bumped));
        }
        choices.push(terms.and(parts));
    }
    let some = terms.or(choices);
    let low = terms.le(zero, t);
    let high = terms.lt(t, total);
    let range = terms.and(vec![low, high]);
    let body = terms.implies(range, some);
    facts.push(terms.forall(vec![tau], body));
    terms.and(facts)
}
