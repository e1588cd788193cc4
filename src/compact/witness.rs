//! Valuations of a leaf's path condition as concrete runs of `main`
//! (`docs/compact-se.md` §7.6): a model with every input array 0 past a
//! window (the interpreter reads 0 there) gives main's arguments and the
//! input stream, the parameters κ included in the model, and the value the
//! leaf says `main` returns. The differential tests replay them on the
//! interpreter (Theorems 1 and 2).

use super::run::Tree;
use super::solver::Solver;
use super::state::Value;
use crate::interp::{ArgValue, Witness};
use crate::ir::{INPUT_STREAM, RETURN_VAR};
use crate::term::{TermId, VarKind};
use num_bigint::BigInt;

/// A concrete run read from a leaf's path condition.
#[derive(Clone, Debug)]
pub struct Sample {
    pub witness: Witness,
    /// What the leaf's memory says `main` returns (exit leaves).
    pub ret: Option<BigInt>,
}

/// The input arrays of the run (main's array parameters and the input
/// stream): (name, cells).
fn inputs(tree: &Tree) -> Vec<(String, TermId, bool)> {
    let body = &tree.prog.funcs[tree.start];
    tree.vertices[0]
        .state
        .theta
        .iter()
        .enumerate()
        .filter_map(|(i, v)| match v {
            Value::Array { cells, .. } if i < body.params || body.vars[i].name == INPUT_STREAM => {
                Some((body.vars[i].name.clone(), *cells, true))
            }
            Value::Int(t) if i < body.params => Some((body.vars[i].name.clone(), *t, false)),
            _ => None,
        })
        .collect()
}

/// ∀j (j ≥ window → A(j) = 0) for each input array.
fn window_facts(tree: &mut Tree, window: usize) -> Vec<TermId> {
    let mut out = Vec::new();
    for (_, cells, is_array) in inputs(tree) {
        if !is_array {
            continue;
        }
        let t = &mut tree.terms;
        let j = t.new_var(VarKind::Bound, "j");
        let jt = t.var(j);
        let (w, zero) = (t.int(window as i64), t.int(0));
        let past = t.le(w, jt);
        let read = t.select(cells, vec![jt]);
        let is_zero = t.eq(read, zero);
        let body = t.implies(past, is_zero);
        out.push(t.forall(vec![j], body));
    }
    out
}

/// The leaf's path condition with the input arrays' axioms.
pub fn condition(tree: &Tree, v: usize) -> Vec<TermId> {
    super::run::with_axioms(&tree.terms, &tree.vertices[v].state.pc, &tree.axioms)
}

/// A model of `extra` and leaf `v`'s path condition, as a run of `main`.
pub fn sample(
    tree: &mut Tree,
    v: usize,
    extra: &[TermId],
    solver: &mut Solver,
    window: usize,
) -> Result<Sample, String> {
    let mut phi = condition(tree, v);
    phi.extend(extra);
    // Every input array's axiom, so the model is the interpreter's array.
    phi.extend(tree.axioms.iter().map(|(_, ax)| *ax));
    phi.extend(window_facts(tree, window));
    let ins = inputs(tree);
    let mut wanted = Vec::new();
    for (_, t, is_array) in &ins {
        if *is_array {
            for j in 0..window {
                let jt = tree.terms.int(j as i64);
                wanted.push(tree.terms.select(*t, vec![jt]));
            }
        } else {
            wanted.push(*t);
        }
    }
    let ret = returned(tree, v);
    if let Some(r) = ret {
        wanted.push(r);
    }
    let values = solver.model(&mut tree.terms, &phi, &wanted)?;
    let mut it = values.into_iter();
    let mut witness = Witness::default();
    for (name, _, is_array) in &ins {
        if *is_array {
            let list: Vec<BigInt> = it.by_ref().take(window).collect();
            if name == INPUT_STREAM {
                witness.input = list;
            } else {
                witness.args.push((
                    name.clone(),
                    ArgValue::List(list.into_iter().map(ArgValue::Int).collect()),
                ));
            }
        } else {
            let n = it.next().ok_or("a missing value")?;
            witness.args.push((name.clone(), ArgValue::Int(n)));
        }
    }
    Ok(Sample {
        witness,
        ret: ret.and_then(|_| it.next()),
    })
}

/// The return value at an exit leaf of the starting function.
pub fn returned(tree: &Tree, v: usize) -> Option<TermId> {
    let s = &tree.vertices[v].state;
    let body = &tree.prog.funcs[s.func];
    match s.theta[body.var_id(RETURN_VAR)? as usize] {
        Value::Int(t) => Some(t),
        _ => None,
    }
}

/// Equalities pinning the run's inputs to a witness: each integer
/// parameter to its value, each input array to its list (0 elsewhere).
pub fn pin(tree: &mut Tree, w: &Witness) -> Vec<TermId> {
    let mut out = Vec::new();
    for (name, t, is_array) in inputs(tree) {
        let given: Option<&ArgValue> = w.args.iter().find(|(n, _)| *n == name).map(|(_, a)| a);
        let terms = &mut tree.terms;
        if is_array {
            let list: Vec<BigInt> = match given {
                Some(ArgValue::List(xs)) => xs
                    .iter()
                    .map(|x| match x {
                        ArgValue::Int(n) => n.clone(),
                        ArgValue::List(_) => BigInt::from(0),
                    })
                    .collect(),
                _ if name == INPUT_STREAM => w.input.clone(),
                _ => vec![],
            };
            let j = terms.new_var(VarKind::Bound, "j");
            let jt = terms.var(j);
            let mut value = terms.int(0);
            for (k, x) in list.iter().enumerate().rev() {
                let (kt, xt) = (terms.int(k as i64), terms.int(x.clone()));
                let here = terms.eq(jt, kt);
                value = terms.ite(here, xt, value);
            }
            let read = terms.select(t, vec![jt]);
            let eq = terms.eq(read, value);
            out.push(terms.forall(vec![j], eq));
        } else if let Some(ArgValue::Int(n)) = given {
            let nt = terms.int(n.clone());
            out.push(terms.eq(t, nt));
        }
    }
    out
}

/// The windows of input cells a leaf's model is asked for, one after the
/// other while the replay misses.
const WINDOWS: [usize; 2] = [8, 64];

/// Each of `leaves` (error leaves) with a replayed witness or why it has
/// none, in order; after the first witness only if `all`.
pub fn witnesses(
    tree: &mut Tree,
    leaves: &[usize],
    solver: &mut Solver,
    replay: &crate::witness::Replayer,
    all: bool,
) -> Vec<(usize, Result<Witness, String>)> {
    let mut out = Vec::new();
    for &v in leaves {
        let w = replayed(tree, v, solver, replay);
        let found = w.is_ok();
        out.push((v, w));
        if found && !all {
            break;
        }
    }
    out
}

/// A witness for error leaf `v`, from a model of its path condition (the
/// parameters κ included), that `replay` accepts, shrunk; or why none.
pub fn replayed(
    tree: &mut Tree,
    v: usize,
    solver: &mut Solver,
    replay: &crate::witness::Replayer,
) -> Result<Witness, String> {
    use crate::witness::Replay;
    let mut last = String::new();
    for window in WINDOWS {
        let s = sample(tree, v, &[], solver, window)?;
        match replay.hits(&s.witness) {
            Ok(()) => return Ok(crate::witness::shrunk(s.witness, replay)),
            Err(why) => last = why,
        }
    }
    Err(last)
}

/// The error leaves of the tree at the targets asked about, breadth first.
pub fn error_leaves(tree: &Tree, targets: &[crate::db::Target]) -> Vec<usize> {
    (0..tree.vertices.len())
        .filter(|&v| target_of(tree, v, targets).is_some())
        .collect()
}

/// The target of `targets` that vertex `v` ends at, if it is an error leaf.
pub fn target_of<'t>(
    tree: &Tree,
    v: usize,
    targets: &'t [crate::db::Target],
) -> Option<&'t crate::db::Target> {
    let vx = &tree.vertices[v];
    let super::End::Error(id) = vx.end else {
        return None;
    };
    let function = &tree.prog.funcs[vx.state.func].name;
    (targets.iter()).find(|t| t.id == id && t.function == *function)
}
