//! The traces of a summary (the thesis's §4.4.2.3–4 and §5.4.4.2): a
//! depth-first search over the automaton from each Init vertex to the
//! exit paths, composing conditions and updates with a fresh path counter
//! per run of a path.
//!
//! A run of a path s for k ≥ 1 iterations adds k ≥ 1 and s's condition at
//! its first and its k-th iteration (the thesis's edge condition asks the
//! k-th only; the first matters for the path a trace starts with, and
//! with IV conditions the two endpoints stand for every iteration); the
//! next path's condition after the k-th iteration is its own first. A
//! trace ends with an exit path: the zero-iteration trace is the exit
//! path alone. A body path without successors never leaves the loop, so
//! no trace ends there (the thesis's Accept set is "no successors", which
//! for an exit path is the same thing).
//!
//! A periodic cycle c₁ → … → c_m is a meta-vertex. Entered at c_a (its
//! first run free) and left from c_b (its last run free), the runs in
//! between are each entered from their predecessor and left to their
//! successor in the cycle, so each runs exactly its period: either K ≥ 1
//! whole rounds (one step iterated K times, its condition again at the
//! first and the K-th round) followed by the part of a round up to c_b, or
//! only that part.

use super::Summariser;
use super::classify::{self, Step, conjuncts};
use super::pda::Pda;
use super::{MAX_TRACES, Symbols, Trace};
use crate::term::{Node, Subst, TermId, Terms, Var};
use num_bigint::BigInt;

/// A trace under construction.
#[derive(Clone)]
struct Partial {
    atoms: Vec<TermId>,
    state: Vec<TermId>,
    counters: Vec<Var>,
    shape: Vec<String>,
}

type Found<T> = Result<T, String>;

impl Summariser<'_, '_> {
    pub(super) fn traces(&mut self, sy: &Symbols, pda: &Pda) -> Found<Vec<Trace>> {
        let general = sy.general(self.m.terms_mut());
        let start = Partial {
            atoms: Vec::new(),
            state: general,
            counters: Vec::new(),
            shape: Vec::new(),
        };
        let mut out = Vec::new();
        for v in 0..pda.vertices.len() {
            self.extend(sy, pda, v, start.clone(), &mut out)?;
        }
        // A trace no run can take is dropped (one the solver cannot
        // decide is kept: applying it asks again).
        let mut kept = Vec::new();
        for t in out {
            if self.satisfiable(t.cond, "a trace").unwrap_or(true) {
                kept.push(t);
            }
        }
        Ok(kept)
    }

    /// Continues a trace at vertex `v`.
    fn extend(
        &mut self,
        sy: &Symbols,
        pda: &Pda,
        v: usize,
        p: Partial,
        out: &mut Vec<Trace>,
    ) -> Found<()> {
        crate::deadline::tick();
        if pda.vertices[v].exit.is_some() {
            if let Some(t) = self.finish(sy, pda, v, p) {
                out.push(t);
            }
            if out.len() > MAX_TRACES {
                return Err(format!("more than {MAX_TRACES} traces"));
            }
            return Ok(());
        }
        if let Some(c) = pda.cycle_of[v] {
            return self.through_cycle(sy, pda, c, v, p, out);
        }
        let q = self.free(sy, &pda.vertices[v].step, &pda.vertices[v].name, p);
        for &w in &pda.succ[v] {
            self.extend(sy, pda, w, q.clone(), out)?;
        }
        Ok(())
    }

    /// The ways through cycle `c` entered at `v`.
    fn through_cycle(
        &mut self,
        sy: &Symbols,
        pda: &Pda,
        c: usize,
        v: usize,
        p: Partial,
        out: &mut Vec<Trace>,
    ) -> Found<()> {
        let cyc = &pda.cycles[c];
        let m = cyc.members.len();
        let a = cyc
            .members
            .iter()
            .position(|x| *x == v)
            .expect("v is on the cycle");
        let leaving = |x: usize| -> Vec<usize> {
            pda.succ[x]
                .iter()
                .copied()
                .filter(|w| pda.cycle_of[*w] != Some(c))
                .collect()
        };
        let first = self.free(sy, &pda.vertices[v].step, &pda.vertices[v].name, p);
        for w in leaving(v) {
            self.extend(sy, pda, w, first.clone(), out)?;
        }
        for b in 0..m {
            let exits = leaving(cyc.members[b]);
            if exits.is_empty() {
                continue;
            }
            let between: Vec<usize> = (0..(b + 2 * m - a - 1) % m)
                .map(|d| (a + 1 + d) % m)
                .collect();
            for rounds in [false, true] {
                let mut q = first.clone();
                if rounds {
                    let Some(step) = self.round(sy, pda, c, (a + 1) % m)? else {
                        continue;
                    };
                    q = self.repeat(sy, &step, q, round_name(pda, c, (a + 1) % m));
                }
                let mut possible = true;
                for &i in &between {
                    match &cyc.periods[i] {
                        Some(n) => q = self.fixed(sy, pda, cyc.members[i], n, q),
                        None => possible = false,
                    }
                }
                if !possible {
                    continue;
                }
                let cb = cyc.members[b];
                q = self.free(sy, &pda.vertices[cb].step, &pda.vertices[cb].name, q);
                for &w in &exits {
                    self.extend(sy, pda, w, q.clone(), out)?;
                }
            }
        }
        Ok(())
    }

    /// One round of cycle `c` from its member `s`, each path run its period
    /// (`None` if some member has none: no run goes round).
    fn round(&mut self, sy: &Symbols, pda: &Pda, c: usize, s: usize) -> Found<Option<Step>> {
        let cyc = &pda.cycles[c];
        let m = cyc.members.len();
        let general = sy.general(self.m.terms_mut());
        let mut q = Partial {
            atoms: Vec::new(),
            state: general,
            counters: Vec::new(),
            shape: Vec::new(),
        };
        for d in 0..m {
            let i = (s + d) % m;
            let Some(n) = &cyc.periods[i] else {
                return Ok(None);
            };
            q = self.fixed(sy, pda, cyc.members[i], n, q);
        }
        let step = Step::new(self.m.terms_mut(), sy, q.atoms, q.state);
        let why = classify::niv_condition(self.m.terms(), sy, &step)
            .or_else(|| classify::inexpressible(self.m.terms(), sy, &step));
        match why {
            Some(why) => Err(format!(
                "a round of the cycle {}: {why}",
                round_name(pda, c, s)
            )),
            None => Ok(Some(step)),
        }
    }

    /// A run of `k ≥ 1` iterations of `step`, k a fresh counter.
    fn free(&mut self, sy: &Symbols, step: &Step, name: &str, p: Partial) -> Partial {
        let k = self.new_counter("κ");
        let t = self.m.terms_mut();
        let kt = t.var(k);
        let mut q = p;
        q.atoms.push(classify::positive(t, k));
        q.atoms
            .extend(classify::holds_throughout(t, sy, step, &q.state, kt));
        q.state = classify::after(t, sy, step, &q.state, kt);
        q.counters.push(k);
        q.shape.push(name.to_string());
        q
    }

    /// A run of exactly `n` iterations of vertex `v` (its period).
    fn fixed(&mut self, sy: &Symbols, pda: &Pda, v: usize, n: &BigInt, p: Partial) -> Partial {
        let step = &pda.vertices[v].step;
        let t = self.m.terms_mut();
        let nt = t.int(n.clone());
        let mut q = p;
        q.atoms
            .extend(classify::holds_throughout(t, sy, step, &q.state, nt));
        q.state = classify::after(t, sy, step, &q.state, nt);
        q.shape.push(format!("{}×{n}", pda.vertices[v].name));
        q
    }

    /// K ≥ 1 rounds of a cycle.
    fn repeat(&mut self, sy: &Symbols, round: &Step, p: Partial, name: String) -> Partial {
        let mut q = self.free(sy, round, &name, p);
        if let Some(last) = q.shape.last_mut() {
            *last = format!("{name}*");
        }
        q
    }

    /// Ends a trace with exit path `v`.
    fn finish(&mut self, sy: &Symbols, pda: &Pda, v: usize, p: Partial) -> Option<Trace> {
        let vx = &pda.vertices[v];
        let t = self.m.terms_mut();
        let mut q = p;
        q.atoms.extend(classify::holds(t, sy, &vx.step, &q.state));
        let s = classify::at(sy, &q.state);
        let cond = t.and(q.atoms);
        if t.as_bool(cond) == Some(false) {
            return None;
        }
        let effect = (0..sy.syms.len())
            .map(|i| {
                let after = s.apply(t, vx.step.delta[i]);
                (after != t.var(sy.syms[i])).then_some(after)
            })
            .collect();
        q.shape.push(vx.name.clone());
        Some(Trace {
            cond,
            effect,
            counters: q.counters,
            exit: vx.exit.expect("an exit path"),
            shape: q.shape.join(" → "),
        })
    }
}

/// `(p3×1 p2×1)`: one round of cycle `c` from member `s`.
fn round_name(pda: &Pda, c: usize, s: usize) -> String {
    let cyc = &pda.cycles[c];
    let m = cyc.members.len();
    let parts: Vec<String> = (0..m)
        .map(|d| {
            let i = (s + d) % m;
            let n = cyc.periods[i]
                .as_ref()
                .map(|n| n.to_string())
                .unwrap_or("?".into());
            format!("{}×{n}", pda.vertices[cyc.members[i]].name)
        })
        .collect();
    format!("({})", parts.join(" "))
}

/// A trace with the counters its condition fixes solved away.
pub(crate) struct Solved {
    pub atoms: Vec<TermId>,
    pub effect: Vec<Option<TermId>>,
    /// The counters left.
    pub counters: Vec<Var>,
}

/// Solves the counters the condition fixes (a lower and an upper bound
/// that are equal, or an equation, with coefficient ±1), one after the
/// other; `None` if the condition turns out false.
pub(crate) fn eliminate(terms: &mut Terms, t: &Trace) -> Option<Solved> {
    let mut atoms = Vec::new();
    conjuncts(terms, t.cond, &mut atoms)?;
    let mut effect = t.effect.clone();
    let mut counters = t.counters.clone();
    while let Some((i, value)) = counters
        .iter()
        .enumerate()
        .find_map(|(i, c)| fixed_value(terms, &atoms, *c).map(|v| (i, v)))
    {
        let mut s = Subst::new();
        s.bind(counters[i], value);
        let mut next = Vec::new();
        for a in &atoms {
            let a = s.apply(terms, *a);
            conjuncts(terms, a, &mut next)?;
        }
        atoms = next;
        for e in effect.iter_mut().flatten() {
            *e = s.apply(terms, *e);
        }
        counters.remove(i);
    }
    Some(Solved {
        atoms,
        effect,
        counters,
    })
}

enum Bound {
    Lower(TermId),
    Upper(TermId),
    Exact(TermId),
}

/// The value the atoms fix for counter `c`, if they do.
fn fixed_value(terms: &mut Terms, atoms: &[TermId], c: Var) -> Option<TermId> {
    let ct = terms.var(c);
    let (mut lower, mut upper) = (Vec::new(), Vec::new());
    for &a in atoms {
        match bound(terms, a, ct, c) {
            Some(Bound::Exact(t)) => return Some(t),
            Some(Bound::Lower(t)) => lower.push(t),
            Some(Bound::Upper(t)) => upper.push(t),
            None => {}
        }
    }
    for &l in &lower {
        for &u in &upper {
            let d = terms.sub(u, l);
            if terms.as_int(d).is_some_and(|n| *n == BigInt::from(0)) {
                return Some(l);
            }
        }
    }
    None
}

/// What an atom says of counter `c` when its coefficient is ±1.
fn bound(terms: &mut Terms, atom: TermId, ct: TermId, c: Var) -> Option<Bound> {
    let (d, is_eq) = match terms.node(atom).clone() {
        Node::Le(d, _) => (d, false),
        Node::Eq(d, _) => (d, true),
        // d > 0 over the integers: 1 − d ≤ 0.
        Node::Not(x) => match terms.node(x).clone() {
            Node::Le(d, _) => {
                let one = terms.int(1);
                (terms.sub(one, d), false)
            }
            _ => return None,
        },
        _ => return None,
    };
    let (_, xs) = terms.linear(d);
    let coef = xs.iter().find(|(_, t)| *t == ct).map(|(k, _)| k.clone())?;
    let one = BigInt::from(1);
    if coef != one && coef != -one.clone() {
        return None;
    }
    let scaled = terms.scale(coef.clone(), ct);
    let rest = terms.sub(d, scaled);
    if terms.mentions(rest, c) {
        return None;
    }
    let minus_rest = terms.neg(rest);
    Some(match (is_eq, coef == one) {
        (true, true) => Bound::Exact(minus_rest),
        (true, false) => Bound::Exact(rest),
        (false, true) => Bound::Upper(minus_rest),
        (false, false) => Bound::Lower(rest),
    })
}
