//! The path dependency automaton of a loop (the thesis's §4.4.2.1 and
//! §5.4.4.1; Proteus): its vertices are the paths through the loop (exit
//! paths included), an edge s → t says that t can follow a run of s.
//!
//! - Vertex: a path whose condition is satisfiable (the thesis's Init set
//!   is all of them). A body path's condition with `!=` is split first
//!   (see `classify`), and every body path must have IV conditions and
//!   expressible updates.
//! - Edge s → t: C_s(σ after k − 1 runs of s) ∧ C_t(σ after k runs) ∧
//!   k > 0 is satisfiable, for a fresh counter k and the general state σ.
//! - Cycles: each strongly connected part must be one simple cycle
//!   (connected cycles are irregular); each of its paths must run a fixed
//!   number of times (its period) whenever it is entered from its
//!   predecessor and left to its successor in the cycle. The period is a
//!   model's value p of the counter, and the re-query with k ≠ p must be
//!   unsatisfiable.
//!
//! A solver `unknown` anywhere here makes the loop unsummarisable.

use super::Summariser;
use super::classify::{self, Step};
use super::paths::LoopPath;
use super::{MAX_PATHS, Symbols};
use crate::explore::state::PathCond;
use crate::ir::EdgeId;
use crate::smt::Answer;
use crate::term::TermId;
use num_bigint::BigInt;

pub(crate) struct Vertex {
    pub step: Step,
    /// The loop-exit edge of an exit path (it has no successors).
    pub exit: Option<EdgeId>,
    /// `p1`, `p2`, …: exit paths first, as the thesis numbers them.
    pub name: String,
}

/// A periodic cycle: its vertices in order, each with its period (`None`
/// if no run passes through it from its predecessor to its successor).
pub(crate) struct Cycle {
    pub members: Vec<usize>,
    pub periods: Vec<Option<BigInt>>,
}

pub(crate) struct Pda {
    pub vertices: Vec<Vertex>,
    pub succ: Vec<Vec<usize>>,
    /// Each edge's condition (source, target, condition), for inspection.
    #[cfg_attr(not(test), allow(dead_code))]
    pub edges: Vec<(usize, usize, TermId)>,
    pub cycles: Vec<Cycle>,
    /// The cycle each vertex is on, if any.
    pub cycle_of: Vec<Option<usize>>,
}

impl Pda {
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn vertex(&self, name: &str) -> Option<usize> {
        self.vertices.iter().position(|v| v.name == name)
    }
}

type Found<T> = Result<T, String>;

impl Summariser<'_, '_> {
    pub(super) fn build_pda(&mut self, sy: &Symbols, paths: Vec<LoopPath>) -> Found<Pda> {
        let vertices = self.vertices(sy, paths)?;
        let (succ, edges) = self.pda_edges(sy, &vertices)?;
        let (members, cycle_of) = cycles(&succ, &vertices)?;
        let mut cycles = Vec::new();
        for m in members {
            let periods = self.periods(sy, &vertices, &m)?;
            cycles.push(Cycle {
                members: m,
                periods,
            });
        }
        Ok(Pda {
            vertices,
            succ,
            edges,
            cycles,
            cycle_of,
        })
    }

    /// The satisfiable paths, exit paths first, body paths split on `!=`
    /// and checked (IV conditions, expressible updates).
    fn vertices(&mut self, sy: &Symbols, paths: Vec<LoopPath>) -> Found<Vec<Vertex>> {
        let (exits, bodies): (Vec<_>, Vec<_>) = paths.into_iter().partition(|p| p.exit.is_some());
        let mut steps = Vec::new();
        for p in exits {
            let changes = vec![classify::Change::Other; p.delta.len()];
            let step = Step {
                atoms: p.atoms,
                delta: p.delta,
                changes,
            };
            steps.push((step, p.exit));
        }
        for p in bodies {
            for atoms in classify::split_ne(self.m.terms_mut(), &p.atoms) {
                let step = Step::new(self.m.terms_mut(), sy, atoms, p.delta.clone());
                steps.push((step, None));
            }
        }
        let mut out = Vec::new();
        for (step, exit) in steps {
            let c = self.m.terms_mut().and(step.atoms.clone());
            if !self.satisfiable(c, "whether a path through the loop is feasible")? {
                continue;
            }
            if exit.is_none() {
                if let Some(why) = classify::niv_condition(self.m.terms(), sy, &step) {
                    return Err(why);
                }
                if let Some(why) = classify::inexpressible(self.m.terms(), sy, &step) {
                    return Err(why);
                }
            }
            let name = format!("p{}", out.len() + 1);
            out.push(Vertex { step, exit, name });
        }
        if out.len() > MAX_PATHS {
            return Err(format!(
                "more than {MAX_PATHS} feasible paths through the loop"
            ));
        }
        Ok(out)
    }

    /// The edges s → t (s a body path, t ≠ s) the solver finds possible.
    #[allow(clippy::type_complexity)]
    fn pda_edges(
        &mut self,
        sy: &Symbols,
        vs: &[Vertex],
    ) -> Found<(Vec<Vec<usize>>, Vec<(usize, usize, TermId)>)> {
        let general = sy.general(self.m.terms_mut());
        let mut succ = vec![Vec::new(); vs.len()];
        let mut edges = Vec::new();
        for s in 0..vs.len() {
            if vs[s].exit.is_some() {
                continue;
            }
            for t in 0..vs.len() {
                if s == t {
                    continue;
                }
                let k = self.new_counter("k");
                let tm = self.m.terms_mut();
                let kt = tm.var(k);
                let mut atoms = vec![classify::positive(tm, k)];
                let km1 = tm.add_int(kt, -1);
                let before = classify::shifted(tm, sy, &vs[s].step, &general, km1);
                atoms.extend(classify::holds(tm, sy, &vs[s].step, &before));
                let after = classify::after(tm, sy, &vs[s].step, &general, kt);
                atoms.extend(classify::holds(tm, sy, &vs[t].step, &after));
                let c = tm.and(atoms);
                if self.satisfiable(c, "an edge of the path dependency automaton")? {
                    succ[s].push(t);
                    edges.push((s, t, c));
                }
            }
        }
        Ok((succ, edges))
    }

    /// The period of each vertex of a cycle.
    fn periods(
        &mut self,
        sy: &Symbols,
        vs: &[Vertex],
        cycle: &[usize],
    ) -> Found<Vec<Option<BigInt>>> {
        let m = cycle.len();
        let mut out = Vec::new();
        for i in 0..m {
            let (u, v, w) = (cycle[(i + m - 1) % m], cycle[i], cycle[(i + 1) % m]);
            out.push(self.period(sy, vs, (u, v, w))?);
        }
        Ok(out)
    }

    /// How many times `v` runs when entered from `u` and left to `w`: a
    /// model's value p, unique if the re-query with k ≠ p is unsatisfiable.
    fn period(
        &mut self,
        sy: &Symbols,
        vs: &[Vertex],
        (u, v, w): (usize, usize, usize),
    ) -> Found<Option<BigInt>> {
        let general = sy.general(self.m.terms_mut());
        let (ku, k) = (self.new_counter("k"), self.new_counter("k"));
        let t = self.m.terms_mut();
        let (kut, kt) = (t.var(ku), t.var(k));
        let mut atoms = vec![classify::positive(t, ku), classify::positive(t, k)];
        atoms.extend(classify::holds_throughout(
            t,
            sy,
            &vs[u].step,
            &general,
            kut,
        ));
        let entered = classify::after(t, sy, &vs[u].step, &general, kut);
        atoms.extend(classify::holds_throughout(t, sy, &vs[v].step, &entered, kt));
        let left = classify::after(t, sy, &vs[v].step, &entered, kt);
        atoms.extend(classify::holds(t, sy, &vs[w].step, &left));
        let f = t.and(atoms);
        let what = "a period in the path dependency automaton";
        let p = match self.m.check_for_values(&PathCond::default(), f) {
            Answer::Unsat => return Ok(None),
            Answer::Unknown(why) => {
                return Err(format!("the solver could not decide {what} ({why})"));
            }
            Answer::Sat => {
                let value = self.m.values(&[kt]);
                self.m.close_check();
                value
                    .map_err(|e| format!("no model for {what}: {e}"))?
                    .remove(0)
            }
        };
        let t = self.m.terms_mut();
        let pt = t.int(p.clone());
        let other = t.ne(kt, pt);
        let again = t.and2(f, other);
        if self.satisfiable(again, what)? {
            let names = cycle_names(vs, u, v, w);
            return Err(format!(
                "irregular: {} runs {p} times or another number of times between {} and {}, so its cycle is not periodic",
                names.1, names.0, names.2
            ));
        }
        Ok(Some(p))
    }

    /// Whether `c` is satisfiable on its own; `unknown` is an error.
    pub(super) fn satisfiable(&mut self, c: TermId, what: &str) -> Found<bool> {
        if let Some(b) = self.m.terms().as_bool(c) {
            return Ok(b);
        }
        match self.m.check(&PathCond::default(), c) {
            Answer::Sat => Ok(true),
            Answer::Unsat => Ok(false),
            Answer::Unknown(why) => Err(format!("the solver could not decide {what} ({why})")),
        }
    }
}

fn cycle_names(vs: &[Vertex], u: usize, v: usize, w: usize) -> (&str, &str, &str) {
    (&vs[u].name, &vs[v].name, &vs[w].name)
}

/// The cycles of the automaton (each strongly connected part of two or
/// more vertices must be one simple cycle), in order, and each vertex's.
#[allow(clippy::type_complexity)]
fn cycles(succ: &[Vec<usize>], vs: &[Vertex]) -> Found<(Vec<Vec<usize>>, Vec<Option<usize>>)> {
    let n = succ.len();
    let reach: Vec<Vec<bool>> = (0..n).map(|i| reachable(succ, i)).collect();
    let mut cycle_of = vec![None; n];
    let mut out: Vec<Vec<usize>> = Vec::new();
    for i in 0..n {
        if !reach[i][i] || cycle_of[i].is_some() {
            continue;
        }
        let part: Vec<usize> = (0..n).filter(|&j| reach[i][j] && reach[j][i]).collect();
        let inside = |v: usize| -> Vec<usize> {
            succ[v]
                .iter()
                .copied()
                .filter(|w| part.contains(w))
                .collect()
        };
        if let Some(&v) = part.iter().find(|&&v| inside(v).len() != 1) {
            let names: Vec<&str> = part.iter().map(|v| vs[*v].name.as_str()).collect();
            return Err(format!(
                "irregular: connected cycles in the path dependency automaton ({} has {} successors among {})",
                vs[v].name,
                inside(v).len(),
                names.join(", ")
            ));
        }
        let mut order = vec![i];
        let mut cur = inside(i)[0];
        while cur != i {
            order.push(cur);
            cur = inside(cur)[0];
        }
        for &v in &order {
            cycle_of[v] = Some(out.len());
        }
        out.push(order);
    }
    Ok((out, cycle_of))
}

/// The vertices reachable from `from` by one edge or more.
fn reachable(succ: &[Vec<usize>], from: usize) -> Vec<bool> {
    let mut seen = vec![false; succ.len()];
    let mut stack = succ[from].clone();
    while let Some(v) = stack.pop() {
        if !seen[v] {
            seen[v] = true;
            stack.extend(succ[v].iter().copied());
        }
    }
    seen
}
