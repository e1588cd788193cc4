//! Runs of the clauses: the states they reach at each loop header, from
//! random starting values and random unknowns (docs/horn-clauses.md,
//! "Invariants from runs"). A rule fires when its guards hold on the
//! values drawn; of the rules that fire, one is taken at random. Every
//! state found is one the clauses reach, so every invariant of the
//! clauses holds on it: a candidate that fails on a sample is no
//! invariant, and one that holds is only a candidate.

use super::super::encode::{Encoding, Rule};
use crate::ir::NodeId;
use crate::term::{Node, Sort, TermId, Terms, Var};
use num_traits::ToPrimitive;
use rand::RngExt;
use rand::rngs::SmallRng;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeSet;
use std::time::Instant;

/// The integer slots' values at a loop header.
pub type Sample = Vec<i128>;

/// The distinct states sampled at each header, over the integer slots
/// (`int_slots`, indices into the state).
pub struct Samples {
    pub int_slots: Vec<usize>,
    pub at: HashMap<NodeId, BTreeSet<Sample>>,
    /// Whether some run fired a query: the clauses may reach the error.
    pub reached_error: bool,
}

/// How far the sampling goes.
pub struct Budget {
    pub runs: usize,
    pub steps_per_run: usize,
    /// Tries to draw a start whose guards hold, per run.
    pub starts: usize,
    pub until: Instant,
}

/// Runs of `enc`'s clauses, each from a random start, sampling the
/// states at loop headers.
pub fn sample(enc: &Encoding, rng: &mut SmallRng, budget: &Budget) -> Samples {
    let int_slots: Vec<usize> = (0..enc.state.len())
        .filter(|&k| Terms::var_sort(enc.state[k].var) == Sort::Int)
        .collect();
    let mut samples = Samples {
        int_slots,
        at: HashMap::default(),
        reached_error: false,
    };
    let facts: Vec<&Rule> = enc.rules.iter().filter(|r| r.from.is_none()).collect();
    for run in 0..budget.runs {
        if facts.is_empty() || Instant::now() >= budget.until {
            break;
        }
        // Runs start near zero, and later runs further out.
        let spread = 4 + 4 * (run as i128 % 8);
        let mut machine = Machine::new(&enc.terms, rng, spread);
        let Some(mut at) = machine.start(&facts, budget.starts) else {
            continue;
        };
        for _ in 0..budget.steps_per_run {
            crate::deadline::tick();
            if Instant::now() >= budget.until {
                break;
            }
            samples.record(at.0, &at.1);
            match machine.step(enc, at.0, &at.1) {
                Step::To(next) => at = next,
                Step::Error => {
                    samples.reached_error = true;
                    break;
                }
                Step::Stuck => break,
            }
        }
        samples.record(at.0, &at.1);
    }
    samples
}

impl Samples {
    fn record(&mut self, header: NodeId, state: &[Value]) {
        let ints: Option<Sample> = (self.int_slots.iter())
            .map(|&k| match state[k] {
                Value::Int(n) => Some(n),
                _ => None,
            })
            .collect();
        if let Some(ints) = ints {
            self.at.entry(header).or_default().insert(ints);
        }
    }
}

/// A value in a run of the clauses: an array is a random function, drawn
/// as it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    Int(i128),
    Bool(bool),
    Array(u32),
}

/// Values beyond this are not sampled: the products of degree 3 of the
/// candidates must stay exact in `i128`.
const MAX_MAGNITUDE: i128 = 1 << 30;

/// The random choices of one run.
struct Machine<'a> {
    terms: &'a Terms,
    rng: &'a mut SmallRng,
    spread: i128,
    arrays: u32,
    cells: HashMap<(u32, Vec<i128>), i128>,
}

impl<'a> Machine<'a> {
    fn new(terms: &'a Terms, rng: &'a mut SmallRng, spread: i128) -> Machine<'a> {
        Machine {
            terms,
            rng,
            spread,
            arrays: 0,
            cells: HashMap::default(),
        }
    }

    fn draw(&mut self, v: Var) -> Value {
        match Terms::var_sort(v) {
            Sort::Int => Value::Int(self.small()),
            Sort::Bool => Value::Bool(self.rng.random_bool(0.5)),
            Sort::Array(_) => {
                self.arrays += 1;
                Value::Array(self.arrays)
            }
        }
    }

    fn small(&mut self) -> i128 {
        self.rng.random_range(-self.spread..=self.spread)
    }

    /// A first state at a header: a fact fired from random values.
    fn start(&mut self, facts: &[&Rule], tries: usize) -> Option<(NodeId, Vec<Value>)> {
        for _ in 0..tries {
            crate::deadline::tick();
            let fact = facts[self.rng.random_range(0..facts.len())];
            let env: HashMap<Var, Value> = fact.vars.iter().map(|v| (*v, self.draw(*v))).collect();
            if let Some(Some(next)) = self.fire(fact, env) {
                return Some(next);
            }
        }
        None
    }

    /// One step from `state` at `header`: a rule out of it that fires on
    /// random unknowns, taken at random.
    fn step(&mut self, enc: &Encoding, header: NodeId, state: &[Value]) -> Step {
        let mut fired = Vec::new();
        let at: HashMap<Var, Value> = (enc.state.iter().zip(state))
            .map(|(slot, value)| (slot.var, *value))
            .collect();
        for rule in enc.rules.iter().filter(|r| r.from == Some(header)) {
            let mut env = at.clone();
            for v in &rule.vars {
                if !env.contains_key(v) {
                    let drawn = self.draw(*v);
                    env.insert(*v, drawn);
                }
            }
            if let Some(next) = self.fire(rule, env) {
                fired.push(next);
            }
        }
        if fired.is_empty() {
            return Step::Stuck;
        }
        let k = self.rng.random_range(0..fired.len());
        match fired.swap_remove(k) {
            Some(next) => Step::To(next),
            None => Step::Error,
        }
    }

    /// `rule` under `env`: `None` if a guard fails or cannot be
    /// evaluated, else the state it leads to (`None` for a query).
    fn fire(
        &mut self,
        rule: &Rule,
        env: HashMap<Var, Value>,
    ) -> Option<Option<(NodeId, Vec<Value>)>> {
        let mut eval = Eval {
            env,
            memo: HashMap::default(),
        };
        for g in &rule.guards {
            if eval.value(self, *g)? != Value::Bool(true) {
                return None;
            }
        }
        let Some(to) = rule.to else {
            return Some(None);
        };
        let args: Option<Vec<Value>> = rule.args.iter().map(|a| eval.value(self, *a)).collect();
        Some(Some((to, args?)))
    }
}

/// Where a step of a run went.
enum Step {
    To((NodeId, Vec<Value>)),
    /// A query fired.
    Error,
    /// No rule fired on the values drawn.
    Stuck,
}

/// The values of one rule's terms.
struct Eval {
    env: HashMap<Var, Value>,
    memo: HashMap<TermId, Value>,
}

impl Eval {
    /// `t`'s value; `None` where the run cannot go on (an overflow, a
    /// division by zero, a binder).
    fn value(&mut self, m: &mut Machine, t: TermId) -> Option<Value> {
        if let Some(v) = self.memo.get(&t) {
            return Some(*v);
        }
        let v = self.compute(m, t)?;
        if let Value::Int(n) = v
            && n.abs() > MAX_MAGNITUDE
        {
            return None;
        }
        self.memo.insert(t, v);
        Some(v)
    }

    fn int(&mut self, m: &mut Machine, t: TermId) -> Option<i128> {
        match self.value(m, t)? {
            Value::Int(n) => Some(n),
            _ => None,
        }
    }

    fn bool(&mut self, m: &mut Machine, t: TermId) -> Option<bool> {
        match self.value(m, t)? {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    fn compute(&mut self, m: &mut Machine, t: TermId) -> Option<Value> {
        let terms = m.terms;
        Some(match terms.node(t) {
            Node::Int(n) => Value::Int(n.to_i128()?),
            Node::Bool(b) => Value::Bool(*b),
            Node::Star => Value::Int(m.small()),
            Node::Var(v) => match self.env.get(v) {
                Some(value) => *value,
                None => {
                    let drawn = m.draw(*v);
                    self.env.insert(*v, drawn);
                    drawn
                }
            },
            Node::Add(c, summands) => {
                let mut sum = c.to_i128()?;
                for (k, x) in summands.iter() {
                    let product = k.to_i128()?.checked_mul(self.int(m, *x)?)?;
                    sum = sum.checked_add(product)?;
                }
                Value::Int(sum)
            }
            Node::Mul(a, b) => Value::Int(self.int(m, *a)?.checked_mul(self.int(m, *b)?)?),
            Node::Div(a, b) => Value::Int(self.int(m, *a)?.checked_div(self.int(m, *b)?)?),
            Node::Max(a, b) => Value::Int(self.int(m, *a)?.max(self.int(m, *b)?)),
            Node::Ite(c, a, b) => {
                if self.bool(m, *c)? {
                    self.value(m, *a)?
                } else {
                    self.value(m, *b)?
                }
            }
            Node::Eq(a, b) => Value::Bool(self.value(m, *a)? == self.value(m, *b)?),
            Node::Le(a, b) => Value::Bool(self.int(m, *a)? <= self.int(m, *b)?),
            Node::Not(a) => Value::Bool(!self.bool(m, *a)?),
            Node::And(xs) => Value::Bool(self.all(m, xs, true)?),
            Node::Or(xs) => Value::Bool(!self.all(m, xs, false)?),
            Node::Select(array, index) => {
                let Value::Array(id) = self.value(m, *array)? else {
                    return None;
                };
                let index: Option<Vec<i128>> = index.iter().map(|i| self.int(m, *i)).collect();
                let key = (id, index?);
                let drawn = m.small();
                Value::Int(*m.cells.entry(key).or_insert(drawn))
            }
            Node::Lambda(..) | Node::Quant(..) => return None,
        })
    }

    /// Whether every one of `xs` is `want` (for `and`: all true; for
    /// `or`, with `want` false: none true).
    fn all(&mut self, m: &mut Machine, xs: &[TermId], want: bool) -> Option<bool> {
        for x in xs {
            if self.bool(m, *x)? != want {
                return Some(false);
            }
        }
        Some(true)
    }
}
