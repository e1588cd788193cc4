//! Algorithm 1 (`docs/compact-se.md` §5): the compact symbolic execution
//! tree, breadth first, with a fresh κ per instantiation, the (t, κ)
//! records of recursion templates, and satisfiability filtering by a
//! quantifier-capable solver. Without templates it is the classic
//! (King's) tree, the baseline.

use super::exec::{Program, classic_successors, is_final, start_memory};
use super::solver::{SatCheck, Solver};
use super::state::{PState, Record, Value, apply_value, rename_value, rename_vars, substitution};
use super::template::Template;
use crate::ir::NodeKind;
use crate::smt::Answer;
use crate::term::{Numbered, TermId, Terms, Var, VarKind};
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How a vertex was reached from its parent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Root,
    Classic,
    /// An instantiation of template `template` with parameter `kappa`.
    Instantiate {
        template: usize,
        kappa: Var,
    },
    /// The returning phase of a recursion template.
    Return {
        template: usize,
        kappa: Var,
    },
}

/// What became of a vertex.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// Has successors (or none feasible).
    Inner,
    /// The exit of the starting function.
    Exit,
    /// An error location (a target of the program).
    Error(u32),
    /// The executor cannot go on (an unsupported construct): why.
    Stuck(String),
    /// Not expanded: the run stopped first.
    Open,
}

#[derive(Clone, Debug)]
pub struct Vertex {
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    pub state: PState,
    /// The edge's label: the evaluated guard, or s.θ⟨t.φᵢ⟦κ⟧⟩.
    pub label: Option<TermId>,
    pub step: Step,
    pub end: End,
    /// The solver could not decide this vertex's path condition: kept.
    pub unknown: Option<String>,
}

/// Options of a run.
pub struct Options {
    pub compact: bool,
    /// Only templates with one parameter (the paper's; a loop with several
    /// cycles then gives a chain).
    pub one_parameter: bool,
    pub max_vertices: usize,
    pub timeout: Option<Duration>,
    pub per_query: Duration,
}

/// A finished run.
pub struct Tree {
    pub terms: Terms,
    pub prog: Program,
    pub start: usize,
    pub vertices: Vec<Vertex>,
    /// The input arrays' axioms, by array symbol (added to the queries that
    /// mention the array).
    pub axioms: Vec<(Var, TermId)>,
    /// Why the run stopped before the tree was complete.
    pub stopped: Option<String>,
    pub templates: Vec<Template>,
    pub queries: u64,
    pub quantified_queries: u64,
    pub unknown_answers: u64,
    pub elapsed: Duration,
}

/// Runs Algorithm 1 from the entry of `start` with the given templates
/// (already imported into `terms`; empty for the classic tree).
pub fn run(
    mut terms: Terms,
    prog: Program,
    start: usize,
    templates: Vec<Template>,
    solver: &mut Solver,
    opts: &Options,
) -> Tree {
    let began = Instant::now();
    let body = &prog.funcs[start];
    let theta = start_memory(&mut terms, body);
    let axioms = input_axioms(&mut terms, &theta);
    let root = Vertex {
        parent: None,
        children: vec![],
        state: PState {
            func: start,
            theta,
            pc: vec![],
            stack: vec![],
            loc: body.entry,
        },
        label: None,
        step: Step::Root,
        end: End::Open,
        unknown: None,
    };
    let mut b = Builder {
        terms,
        prog,
        start,
        templates,
        axioms,
        vertices: vec![root],
        next_kappa: 1,
    };
    let stopped = b.breadth_first(solver, opts, opts.timeout.map(|t| began + t));
    Tree {
        terms: b.terms,
        prog: b.prog,
        start,
        vertices: b.vertices,
        axioms: b.axioms,
        stopped,
        templates: b.templates,
        queries: solver.queries,
        quantified_queries: solver.quantified,
        unknown_answers: solver.unknown,
        elapsed: began.elapsed(),
    }
}

/// The tree in construction and what its steps need.
struct Builder {
    terms: Terms,
    prog: Program,
    start: usize,
    templates: Vec<Template>,
    axioms: Vec<(Var, TermId)>,
    vertices: Vec<Vertex>,
    next_kappa: u32,
}

impl Builder {
    /// Lines 5–50: expand the oldest vertex until none is left or a limit
    /// stops the run (why, then).
    fn breadth_first(
        &mut self,
        solver: &mut Solver,
        opts: &Options,
        deadline: Option<Instant>,
    ) -> Option<String> {
        let mut queue = VecDeque::from([0usize]);
        while let Some(u) = queue.pop_front() {
            // Work stopped from outside (a portfolio decided) unwinds.
            crate::deadline::check();
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Some("timeout".to_string());
            }
            if self.vertices.len() >= opts.max_vertices {
                return Some(format!("vertex limit ({})", opts.max_vertices));
            }
            queue.extend(self.expand(u, solver, opts.compact));
        }
        None
    }

    /// A final vertex's end, or its feasible successors (their ids).
    fn expand(&mut self, u: usize, solver: &mut Solver, compact: bool) -> Vec<usize> {
        let s = self.vertices[u].state.clone();
        if is_final(&self.prog, self.start, &s) {
            self.vertices[u].end = match self.prog.funcs[s.func].node_kinds[s.loc as usize] {
                NodeKind::Error(t) => End::Error(t),
                _ => End::Exit,
            };
            return vec![];
        }
        let succ = successors(
            &mut self.terms,
            &self.prog,
            &self.templates,
            compact,
            &s,
            &mut self.next_kappa,
        );
        match succ {
            Ok(succ) => {
                self.vertices[u].end = End::Inner;
                self.add_feasible(u, succ, solver)
            }
            Err(why) => {
                self.vertices[u].end = End::Stuck(why);
                vec![]
            }
        }
    }

    /// Lines 43–46: the successors whose path condition the solver does
    /// not refute (an `unknown` keeps the branch, marked).
    fn add_feasible(&mut self, u: usize, succ: Vec<Successor>, solver: &mut Solver) -> Vec<usize> {
        let mut added = Vec::new();
        for (state, label, step) in succ {
            let mut unknown = None;
            if label.is_some() {
                let query = with_axioms(&self.terms, &state.pc, &self.axioms);
                match solver.check(&mut self.terms, &query) {
                    Answer::Unsat => continue,
                    Answer::Unknown(why) => unknown = Some(why),
                    Answer::Sat => {}
                }
            }
            let id = self.vertices.len();
            self.vertices.push(Vertex {
                parent: Some(u),
                children: vec![],
                state,
                label,
                step,
                end: End::Open,
                unknown,
            });
            self.vertices[u].children.push(id);
            added.push(id);
        }
        added
    }
}

/// The path condition with the axioms of the input arrays it mentions.
pub fn with_axioms(terms: &Terms, pc: &[TermId], axioms: &[(Var, TermId)]) -> Vec<TermId> {
    let mut out = pc.to_vec();
    let phi_vars: Vec<Var> = pc.iter().flat_map(|t| terms.free_vars(*t)).collect();
    for (a, ax) in axioms {
        if phi_vars.contains(a) {
            out.push(*ax);
        }
    }
    out
}

/// ∀j (j < 0 → A(j) = 0) for each input array: the interpreter reads 0
/// at a negative index of an input array (`docs/microc.md`).
pub fn input_axioms(terms: &mut Terms, theta: &[Value]) -> Vec<(Var, TermId)> {
    let mut out = Vec::new();
    for v in theta {
        if let Value::Array { cells, len } = v
            && terms.as_int(*len).is_some_and(|n| n < &0.into())
        {
            let j = terms.new_var(VarKind::Bound, "j");
            let jt = terms.var(j);
            let zero = terms.int(0);
            let neg = terms.lt(jt, zero);
            let read = terms.select(*cells, vec![jt]);
            let is_zero = terms.eq(read, zero);
            let body = terms.implies(neg, is_zero);
            if let Some(a) = super::state::leaf(terms, *cells) {
                out.push((a, terms.forall(vec![j], body)));
            }
        }
    }
    out
}

type Successor = (PState, Option<TermId>, Step);

/// Lines 12–39 of Algorithm 1.
fn successors(
    terms: &mut Terms,
    prog: &Program,
    templates: &[Template],
    compact: bool,
    s: &PState,
    next_kappa: &mut u32,
) -> Result<Vec<Successor>, String> {
    if compact {
        if let Some(Record::Recursion { template, kappa }) = s.stack.last()
            && templates[*template].func == s.func
            && prog.funcs[s.func].exit == s.loc
        {
            let st = return_step(terms, &templates[*template], *kappa, s);
            let step = Step::Return {
                template: *template,
                kappa: *kappa,
            };
            return Ok(vec![(st, None, step)]);
        }
        if let Some(ix) = choose_template(templates, s)
            && let Some(out) = instantiate(terms, &templates[ix], ix, s, next_kappa)
        {
            return Ok(out);
        }
    }
    let succ = classic_successors(terms, prog, s)?;
    Ok(succ
        .into_iter()
        .map(|x| (x.state, x.guard, Step::Classic))
        .collect())
}

/// s ∘ (t.θᵢ, t.φᵢ, [(t, κ)] ∘ t.Ξᵢ, t.lᵢ)⟦κ⟧ for every tuple, κ fresh.
/// `None` where the state does not fit the template (a variable the
/// template changes is unset here): classic steps then.
fn instantiate(
    terms: &mut Terms,
    t: &Template,
    ix: usize,
    s: &PState,
    next_kappa: &mut u32,
) -> Option<Vec<Successor>> {
    let n = *next_kappa;
    *next_kappa += 1;
    let kappa = terms.new_numbered(Numbered::Counter, n);
    let mut map: HashMap<Var, Var> = HashMap::default();
    map.insert(t.kappa, kappa);
    for b in &t.bound {
        map.insert(*b, terms.new_numbered(Numbered::Iteration, n));
    }
    for p in &t.more_params {
        let fresh = match p.kind {
            VarKind::Counter => {
                let m = *next_kappa;
                *next_kappa += 1;
                terms.new_numbered(Numbered::Counter, m)
            }
            kind => {
                let name = format!("{}_{n}", terms.var_name(*p));
                terms.new_var(kind, name)
            }
        };
        map.insert(*p, fresh);
    }
    let sigma = substitution(terms, &t.symbols, &s.theta);
    let mut out = Vec::new();
    for x in &t.exits {
        let mut theta = Vec::with_capacity(x.theta.len());
        for (a, v) in x.theta.iter().enumerate() {
            if *v == t.symbols[a] {
                theta.push(s.theta[a]);
                continue;
            }
            if s.theta[a] == Value::Unset && mentions_own_symbol(terms, &t.symbols[a], v) {
                return None;
            }
            let v = rename_value(terms, *v, &map);
            theta.push(apply_value(terms, &sigma, v));
        }
        let phi = rename_vars(terms, x.phi, &map);
        let label = sigma.apply(terms, phi);
        let mut pc = s.pc.clone();
        pc.push(label);
        let mut stack = s.stack.clone();
        if t.returning.is_some() {
            stack.push(Record::Recursion {
                template: ix,
                kappa,
            });
        }
        let state = PState {
            func: s.func,
            theta,
            pc,
            stack,
            loc: x.loc,
        };
        out.push((
            state,
            Some(label),
            Step::Instantiate {
                template: ix,
                kappa,
            },
        ));
    }
    Some(out)
}

/// chooseTemplate: of the templates at the state's location, the one with
/// the most parameters (a whole loop before one of its cycles), else the
/// first.
fn choose_template(templates: &[Template], s: &PState) -> Option<usize> {
    templates
        .iter()
        .enumerate()
        .filter(|(_, t)| t.func == s.func && t.entry == s.loc)
        .max_by_key(|(i, t)| (t.more_params.len(), std::cmp::Reverse(*i)))
        .map(|(i, _)| i)
}

fn mentions_own_symbol(terms: &Terms, sym: &Value, v: &Value) -> bool {
    let leaves = |x: &Value| match x {
        Value::Unset => vec![],
        Value::Int(t) => terms.free_vars(*t),
        Value::Array { cells, len } => {
            let mut o = terms.free_vars(*cells);
            o.extend(terms.free_vars(*len));
            o
        }
    };
    let own = leaves(sym);
    leaves(v).iter().any(|x| own.contains(x))
}

/// Line 16: (s.θ ∘ t.θ⟦κ⟧, s.φ, pop(s.Ξ), t.l′).
fn return_step(terms: &mut Terms, t: &Template, kappa: Var, s: &PState) -> PState {
    let returning = t.returning.as_ref().expect("a recursion template");
    let mut map: HashMap<Var, Var> = HashMap::default();
    map.insert(t.kappa, kappa);
    let sigma = substitution(terms, &t.symbols, &s.theta);
    let theta = returning
        .iter()
        .enumerate()
        .map(|(a, v)| {
            if *v == t.symbols[a] {
                s.theta[a]
            } else {
                let v = rename_value(terms, *v, &map);
                apply_value(terms, &sigma, v)
            }
        })
        .collect();
    let mut stack = s.stack.clone();
    stack.pop();
    PState {
        theta,
        stack,
        ..s.clone()
    }
}

impl Tree {
    pub fn leaves(&self) -> impl Iterator<Item = &Vertex> {
        self.vertices.iter().filter(|v| v.children.is_empty())
    }
    /// Whether every path was followed to its end.
    pub fn is_complete(&self) -> bool {
        self.stopped.is_none()
            && self
                .vertices
                .iter()
                .all(|v| !matches!(v.end, End::Open | End::Stuck(_)))
    }
    /// The tree at the granularity of the paper's figures
    /// (`docs/compact-se.md` §7.4): the root, the leaves, vertices at
    /// branching locations, and the vertices where a template step starts
    /// or ends. Returns which vertices are kept.
    pub fn condensed(&self) -> Vec<bool> {
        let branching: Vec<Vec<bool>> = self
            .prog
            .funcs
            .iter()
            .map(|b| {
                let mut deg = vec![0usize; b.node_count as usize];
                for e in &b.edges {
                    deg[e.from as usize] += 1;
                }
                deg.into_iter().map(|d| d >= 2).collect()
            })
            .collect();
        let templated =
            |v: &Vertex| matches!(v.step, Step::Instantiate { .. } | Step::Return { .. });
        self.vertices
            .iter()
            .map(|v| {
                v.parent.is_none()
                    || v.children.is_empty()
                    || branching[v.state.func][v.state.loc as usize]
                    || templated(v)
                    || v.children.iter().any(|c| templated(&self.vertices[*c]))
            })
            .collect()
    }
    /// (vertices, leaves) of the condensed tree.
    pub fn condensed_size(&self) -> (usize, usize) {
        let kept = self.condensed();
        let vertices = kept.iter().filter(|k| **k).count();
        let leaves = self.leaves().count();
        (vertices, leaves)
    }
}
