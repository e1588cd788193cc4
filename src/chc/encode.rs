//! The inlined flowgraph as constrained Horn clauses (docs/horn-clauses.md):
//! over the program's state (integer variables, whether a local is
//! assigned where that is asked, main's input arrays and the input stream
//! as SMT arrays), a rule per edge between the entry and the target's
//! error vertices, then every vertex but the loop headers removed by
//! resolution; the query "an error vertex is reached" has head `false`.
//! The clauses are terms, printed by the solver layer (`smt::horn`).
//!
//! The encoding over-approximates the runs: integers and input arrays are
//! exact; values in shared local arrays, records and behind most pointers
//! are unknown (see `state`). So an invariant of the clauses is one of the
//! program.

use super::dead;
use super::state::State;
use crate::ir::Summaries;
use crate::ir::{self, Body, Instr, NodeId, VarId};
use crate::smt::horn::{self, Application, Relation};
use crate::syntax::Span;
use crate::term::{Subst, TermId, Terms, Var};
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeSet, HashSet};

/// A slot of the state the predicates range over.
#[derive(Clone, Debug)]
pub struct StateVar {
    /// Its current value in a clause (`x3`, `init3`, an array value for an
    /// input array).
    pub var: Var,
    /// What it is, for people (`n`, `init(x)`).
    pub label: String,
}

/// The clauses of one target, as terms in their own store.
#[derive(Clone, Debug)]
pub struct Encoding {
    pub terms: Terms,
    pub state: Vec<StateVar>,
    /// The predicates, by vertex.
    pub predicates: Vec<NodeId>,
    /// Each predicate's loop: its `while` statement (absolute in the file).
    pub loop_spans: Vec<Span>,
    /// The clauses as steps from vertex to vertex.
    pub(super) rules: Vec<Rule>,
    /// Whether the clauses multiply or divide two unknowns (exact
    /// arithmetic), or left such a product or quotient unknown (linear).
    pub nonlinear: bool,
    /// Whether the clauses left unknown the cells of an array they could
    /// follow, which a guard reads ([`Cells::Unknown`]).
    pub cells_left_unknown: bool,
    /// The summaries of functions the clauses relate calls by
    /// (`summary`), besides the predicates.
    pub summaries: Vec<Relation>,
    /// The labels of each summary's parameters: its arguments', then
    /// `result`.
    pub summary_labels: Vec<Vec<String>>,
}

/// How the clauses read what is not plain integer state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    pub arithmetic: Arithmetic,
    pub inputs: Inputs,
    pub cells: Cells,
}

impl Reading {
    /// The most precise reading, with the input stream for unrolling.
    pub const EXACT: Reading = Reading {
        arithmetic: Arithmetic::Exact,
        inputs: Inputs::Stream,
        cells: Cells::Followed,
    };
}

/// How the clauses read a product or a quotient of two unknowns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arithmetic {
    /// As it is: `(* x y)`, `(tdiv x y)`. Spacer often gives up on these.
    Exact,
    /// As an unknown value: the clauses stay linear and over-approximate
    /// the runs more, so their checked invariant is still a proof
    /// (docs/horn-clauses.md §2).
    Linear,
}

/// How the clauses read `input`, which lowering makes `$in[$ic]` with
/// `$ic` counted up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inputs {
    /// From the input stream `$in`, an SMT array, at the counter `$ic`:
    /// both are state, so that a counterexample's first state says what
    /// the run read (`unroll`).
    Stream,
    /// Each read an unknown value. As no index of the stream is read
    /// twice, the runs are the same; the predicates lose an array and a
    /// counter, which is what Spacer's invariants are spared: with the
    /// array it may leave `∃` in them (docs/horn-clauses.md §2).
    Unknown,
}

/// How the clauses read the cells of the local arrays that nothing else
/// reaches (`arrays`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cells {
    /// As state, where a guard reads them.
    Followed,
    /// As unknown values: fewer slots, which Spacer often proves faster
    /// with when the cells do not matter; a counterexample is then
    /// refined with them (docs/horn-clauses.md §2).
    Unknown,
}

impl Encoding {
    /// Whether some clause leads to the error (has head `false`): without
    /// one, the target is unreachable under any invariant.
    pub fn has_query(&self) -> bool {
        self.rules
            .iter()
            .any(|r| r.to.is_none() && r.summary.is_none())
    }

    /// The slot that holds variable `v`'s value, if the state keeps it.
    pub fn value_slot(&self, v: VarId) -> Option<usize> {
        let name = value_name(v);
        (self.state.iter()).position(|s| self.terms.var_name(s.var) == name)
    }

    /// How many clauses there are (one check each).
    pub fn clause_count(&self) -> usize {
        self.rules.len()
    }

    /// The state's variables, in slot order.
    pub fn state_vars(&self) -> Vec<Var> {
        self.state.iter().map(|s| s.var).collect()
    }

    /// The predicate of vertex `p`, over the state.
    pub fn relation(&self, p: NodeId) -> Relation {
        Relation {
            name: predicate_name(p),
            params: self.state_vars(),
        }
    }

    /// The clauses, for the solver layer to print.
    pub fn clauses(&self) -> Vec<horn::Clause> {
        // Every slot's variable was made a term by the entry rule.
        let state: Vec<TermId> = (self.state.iter())
            .map(|s| self.terms.var_const(s.var))
            .collect();
        self.rules.iter().map(|r| r.clause(&state)).collect()
    }

    /// The scripts for Z3's fixed-point engine, one per set of solver
    /// options (keyword, value): declarations, clauses, `(check-sat)` and
    /// `(get-model)`.
    pub fn scripts(&self, option_sets: &[Vec<(&str, String)>]) -> Vec<String> {
        let mut relations: Vec<Relation> =
            self.predicates.iter().map(|p| self.relation(*p)).collect();
        relations.extend(self.summaries.iter().cloned());
        let legend = format!("state: {}", self.legend());
        horn::fixedpoint(
            &self.terms,
            &relations,
            &self.clauses(),
            option_sets,
            &legend,
        )
    }

    /// Which variable is which program variable.
    pub fn legend(&self) -> String {
        let parts: Vec<String> = (self.state.iter())
            .map(|v| format!("{} = {}", self.terms.var_name(v.var), v.label))
            .collect();
        parts.join(", ")
    }
}

/// The name of the state's variable for program variable `v`'s value.
pub(super) fn value_name(v: VarId) -> String {
    format!("x{v}")
}

/// The name of a vertex's predicate.
pub fn predicate_name(node: NodeId) -> String {
    format!("P{node}")
}

/// The clauses for reaching any of `errors` (the error vertices of a
/// target's copies: one per inlined call site, and those in callees cut by
/// recursion), or why the program cannot be encoded.
pub fn encode(body: &Body, errors: &[NodeId]) -> Result<Encoding, String> {
    encode_as(body, errors, Reading::EXACT)
}

/// [`encode`], with products and quotients of unknowns, `input` and array
/// cells read as `reading` says.
pub fn encode_as(body: &Body, errors: &[NodeId], reading: Reading) -> Result<Encoding, String> {
    encode_with(body, errors, reading, &Summaries::default())
}

/// [`encode_as`] on a body with the flowgraphs of `summaries` beside the
/// program's: the clauses also define each summary, from its function's
/// entry to its exit, and relate the calls cut by recursion by it.
pub fn encode_with(
    body: &Body,
    errors: &[NodeId],
    reading: Reading,
    summaries: &Summaries,
) -> Result<Encoding, String> {
    let takeable: Vec<bool> = body.edges.iter().map(|e| !never_taken(e)).collect();
    let mut starts = vec![body.entry];
    let mut ends = errors.to_vec();
    for s in &summaries.list {
        starts.push(s.entry);
        ends.push(s.exit);
    }
    let relevant = between(body, &takeable, &starts, &ends);
    let mut terms = Terms::new();
    if !errors.iter().any(|e| relevant[*e as usize]) {
        // No path at all: no clause, and every check holds.
        return Ok(Encoding {
            terms,
            state: vec![],
            predicates: vec![],
            loop_spans: vec![],
            rules: vec![],
            nonlinear: false,
            cells_left_unknown: false,
            summaries: vec![],
            summary_labels: vec![],
        });
    }
    let edges: Vec<&ir::Edge> = (body.edges.iter().zip(&takeable))
        .filter(|(e, takeable)| **takeable && relevant[e.from as usize] && relevant[e.to as usize])
        .map(|(e, _)| e)
        .collect();
    let state = State::of(body, &edges, reading, &mut terms, summaries);
    let mut rules = vec![state.entry_rule(&mut terms, body.entry)];
    for s in summaries.list.iter().filter(|s| relevant[s.entry as usize]) {
        let mut entry = state.entry_rule(&mut terms, s.entry);
        entry.origin = format!("entry of {}", s.function);
        rules.push(entry);
    }
    for e in &edges {
        rules.push(state.edge_rule(&mut terms, body, e));
    }
    for &error in errors.iter().filter(|e| relevant[**e as usize]) {
        rules.push(Rule {
            vars: state.vars(),
            from: Some(error),
            calls: vec![],
            guards: vec![],
            to: None,
            summary: None,
            args: vec![],
            origin: format!("query: the target's error vertex {error}"),
        });
    }
    let mut relations = Vec::new();
    let mut summary_labels = Vec::new();
    for s in summaries.list.iter().filter(|s| relevant[s.exit as usize]) {
        let (rule, relation) = state.summary_rule(&mut terms, s)?;
        rules.push(rule);
        let label = |v: &Var| {
            (state.slots.iter())
                .find(|slot| slot.var == *v)
                .map_or_else(|| "result".to_string(), |slot| slot.label.clone())
        };
        summary_labels.push(relation.params.iter().map(label).collect());
        relations.push(relation);
    }
    // Large blocks: a predicate at each loop header only. (Z3 would
    // inline the others itself, and then define them with ∃, which the
    // quantifier-free certificate checks cannot take.)
    let headers: BTreeSet<NodeId> = body
        .loops
        .iter()
        .map(|l| l.header)
        .filter(|h| relevant[*h as usize])
        .collect();
    let mut rules = eliminate(&mut terms, rules, &headers, &state.vars())?;
    let dead = dead::forget_dead(&mut terms, &mut rules, &state.slots);
    // A block whose guard is `false` cannot run: it holds under any
    // invariant, and a query made of such blocks only is no query.
    rules.retain(|r| !r.guards.iter().any(|g| terms.as_bool(*g) == Some(false)));
    let state_vars = dead::drop_unread_slots(&terms, &mut rules, &state.slots, &dead);
    let loop_spans = (headers.iter())
        .filter_map(|h| body.loops.iter().find(|l| l.header == *h))
        .map(|l| l.span)
        .collect();
    Ok(Encoding {
        terms,
        state: state_vars,
        predicates: headers.into_iter().collect(),
        loop_spans,
        rules,
        nonlinear: state.nonlinear.get(),
        cells_left_unknown: state.cells_left_unknown,
        summaries: relations,
        summary_labels,
    })
}

/// A clause under construction: `P_from(x⃗) ∧ guards → P_to(args)`, with
/// no `P_from` for a fact and `false` for no `P_to`.
#[derive(Clone, Debug)]
pub(super) struct Rule {
    /// Every variable the rule mentions (the state's and its unknowns).
    pub(super) vars: Vec<Var>,
    pub(super) from: Option<NodeId>,
    /// The summaries of the calls it makes (`summary`).
    pub(super) calls: Vec<Atom>,
    pub(super) guards: Vec<TermId>,
    pub(super) to: Option<NodeId>,
    /// With no `to`: the summary it derives, if not `false`.
    pub(super) summary: Option<Atom>,
    pub(super) args: Vec<TermId>,
    pub(super) origin: String,
}

/// A summary applied: `S_f(arguments…, result)`.
#[derive(Clone, Debug)]
pub(super) struct Atom {
    pub(super) relation: String,
    pub(super) args: Vec<TermId>,
}

impl Atom {
    fn application(&self) -> Application {
        Application {
            relation: self.relation.clone(),
            args: self.args.clone(),
        }
    }
}

impl Rule {
    /// The clause, with `state` the predicates' arguments in the body.
    fn clause(&self, state: &[TermId]) -> horn::Clause {
        let apply = |node: NodeId, args: &[TermId]| Application {
            relation: predicate_name(node),
            args: args.to_vec(),
        };
        let head = match (self.to, &self.summary) {
            (Some(t), _) => Some(apply(t, &self.args)),
            (None, summary) => summary.as_ref().map(Atom::application),
        };
        horn::Clause {
            vars: self.vars.clone(),
            body: self.from.map(|f| apply(f, state)),
            calls: self.calls.iter().map(Atom::application).collect(),
            guards: self.guards.clone(),
            head,
            origin: self.origin.clone(),
        }
    }

    /// `self` then `next` (whose `from` is `self`'s `to`): `next`'s guards
    /// and arguments read the state `self` leaves, by substitution. The
    /// terms share what the steps share, and the printer names each shared
    /// subterm once, so a long composition stays linear in size.
    fn then(&self, terms: &mut Terms, next: &Rule, state: &[Var]) -> Rule {
        let mut after = Subst::new();
        for (v, a) in state.iter().zip(&self.args) {
            after.bind(*v, *a);
        }
        let mut memo = HashMap::default();
        let mut read = |t: &TermId| after.apply_memo(terms, *t, &mut memo);
        let mut guards = self.guards.clone();
        guards.extend(next.guards.iter().map(&mut read));
        let args = next.args.iter().map(&mut read).collect();
        let mut read_atom = |a: &Atom| Atom {
            relation: a.relation.clone(),
            args: a.args.iter().map(&mut read).collect(),
        };
        let mut calls = self.calls.clone();
        calls.extend(next.calls.iter().map(&mut read_atom));
        let summary = next.summary.as_ref().map(read_atom);
        let mut vars = self.vars.clone();
        let known: HashSet<Var> = self.vars.iter().copied().collect();
        vars.extend(next.vars.iter().filter(|v| !known.contains(v)));
        Rule {
            vars,
            from: self.from,
            calls,
            guards,
            to: next.to,
            summary,
            args,
            origin: format!("{}; {}", self.origin, next.origin),
        }
    }

    /// Its guards and arguments: its size as the budget counts it.
    fn parts(&self) -> usize {
        let atoms = self.calls.iter().chain(&self.summary);
        self.guards.len() + self.args.len() + atoms.map(|a| a.args.len()).sum::<usize>()
    }

    /// The terms it reads besides its arguments: its guards, and the
    /// arguments of the summaries it applies or derives.
    pub(super) fn reads(&self) -> impl Iterator<Item = &TermId> {
        let atoms = self.calls.iter().chain(&self.summary);
        self.guards.iter().chain(atoms.flat_map(|a| &a.args))
    }
}

/// The most the composed clauses may make (new terms, guards and
/// arguments): a program whose blocks hold too many paths is refused
/// rather than sent.
const MAX_CLAUSE_SIZE: usize = 1 << 20;

/// Removes every predicate but `keep`'s by resolution: each rule into a
/// vertex is composed with each rule out of it.
fn eliminate(
    terms: &mut Terms,
    mut rules: Vec<Rule>,
    keep: &BTreeSet<NodeId>,
    state: &[Var],
) -> Result<Vec<Rule>, String> {
    let mut nodes: Vec<NodeId> = rules.iter().filter_map(|r| r.to).collect();
    nodes.sort_unstable();
    nodes.dedup();
    // The clauses' size, kept up to date: the terms the compositions made,
    // and each rule's guards and arguments.
    let mut size: usize = rules.iter().map(Rule::parts).sum();
    for node in nodes.into_iter().filter(|n| !keep.contains(n)) {
        crate::deadline::tick();
        let (ins, rest): (Vec<Rule>, Vec<Rule>) =
            rules.into_iter().partition(|r| r.to == Some(node));
        let (outs, mut rest): (Vec<Rule>, Vec<Rule>) =
            rest.into_iter().partition(|r| r.from == Some(node));
        size -= ins.iter().chain(&outs).map(Rule::parts).sum::<usize>();
        for i in &ins {
            for o in &outs {
                crate::deadline::tick();
                let made = terms.len();
                let composed = i.then(terms, o, state);
                size += composed.parts() + (terms.len() - made);
                if size > MAX_CLAUSE_SIZE {
                    return Err(
                        "unsupported: too many paths between loop headers for the Horn encoding"
                            .into(),
                    );
                }
                rest.push(composed);
            }
        }
        rules = rest;
    }
    Ok(rules)
}

/// Whether no run takes the edge: its guard fails by its form alone.
fn never_taken(e: &ir::Edge) -> bool {
    matches!(&e.instr, Instr::Assume(c) if c.never_holds())
}

/// The vertices on some path from one of `from` to one of `to`, through
/// the edges `takeable` marks.
fn between(body: &Body, takeable: &[bool], from: &[NodeId], to: &[NodeId]) -> Vec<bool> {
    let n = body.node_count as usize;
    let (mut fwd, mut bwd) = (vec![Vec::new(); n], vec![Vec::new(); n]);
    for (e, _) in body.edges.iter().zip(takeable).filter(|(_, t)| **t) {
        fwd[e.from as usize].push(e.to);
        bwd[e.to as usize].push(e.from);
    }
    let reach = |starts: &[NodeId], adj: &[Vec<NodeId>]| {
        let mut seen = vec![false; n];
        let mut stack = starts.to_vec();
        for s in starts {
            seen[*s as usize] = true;
        }
        while let Some(v) = stack.pop() {
            for &w in &adj[v as usize] {
                if !seen[w as usize] {
                    seen[w as usize] = true;
                    stack.push(w);
                }
            }
        }
        seen
    };
    let (a, b) = (reach(from, &fwd), reach(to, &bwd));
    a.iter().zip(&b).map(|(x, y)| *x && *y).collect()
}
