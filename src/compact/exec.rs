//! The program model and classic steps over it (`docs/compact-se.md` §2,
//! §7.2): King's symbolic execution on the per-function flowgraphs, calls
//! pushing frames. It is both the baseline and the sub-engine that runs
//! the small programs P′ of the template detectors.
//!
//! Supported: integers, arrays of integers (input arrays unbounded, local
//! ones with a length), calls. Pointers, records, nested arrays and
//! allocation stop a path with a reason (`Stuck`).

use super::state::{PState, Record, Value};
use crate::db::{self, SourceFile};
use crate::ir::{Body, Cond, EdgeId, Expr, Instr, NodeKind, Place, VarKind};
use crate::symbolic;
use crate::term::{TermId, Terms, VarKind as TermVar};
use crate::types::Type;

/// Why a path cannot go on.
pub type Stuck = String;

/// The functions of a file, as flowgraphs.
#[derive(Clone, Debug)]
pub struct Program {
    pub funcs: Vec<Body>,
}

impl Program {
    pub fn load(db: &dyn salsa::Database, file: SourceFile) -> Program {
        let funcs = db::functions(db, file)
            .iter()
            .map(|f| db::function_body(db, *f).clone())
            .collect();
        Program { funcs }
    }
    pub fn index(&self, name: &str) -> Option<usize> {
        self.funcs.iter().position(|b| b.name == name)
    }
}

/// Θ: a fresh symbol per variable of a function (`a₀`; an array gives its
/// cells `A₀` and its length `#A₀`). Variables of other types have none.
pub fn symbols(terms: &mut Terms, body: &Body) -> Vec<Value> {
    body.vars
        .iter()
        .map(|v| match &v.ty {
            Type::Array(inner) if inner.is_int() => Value::Array {
                cells: sym(terms, TermVar::ArraySymbol(1), &format!("{}₀", v.name)),
                len: sym(terms, TermVar::Symbol, &format!("#{}₀", v.name)),
            },
            Type::Int | Type::Unknown => {
                Value::Int(sym(terms, TermVar::Symbol, &format!("{}₀", v.name)))
            }
            _ => Value::Unset,
        })
        .collect()
}

fn sym(terms: &mut Terms, kind: TermVar, name: &str) -> TermId {
    let v = terms.symbol(kind, name);
    terms.var(v)
}

/// The memory at the entry of the starting function: every parameter a
/// symbol, array parameters and the input stream input arrays
/// (unbounded), the stream's position 0, locals unset.
pub fn start_memory(terms: &mut Terms, body: &Body) -> Vec<Value> {
    let syms = symbols(terms, body);
    let minus_one = terms.int(-1);
    let zero = terms.int(0);
    body.vars
        .iter()
        .zip(syms)
        .enumerate()
        .map(|(i, (v, s))| {
            let is_param = i < body.params;
            let global = v.kind == VarKind::Global;
            match s {
                Value::Array { cells, .. } if is_param || global => Value::Array {
                    cells,
                    len: minus_one,
                },
                Value::Int(_) if v.name == crate::ir::INPUT_COUNTER => Value::Int(zero),
                Value::Int(_) if is_param || global => s,
                _ => Value::Unset,
            }
        })
        .collect()
}

/// A successor of a classic step, with the guard it added (if any).
pub struct Succ {
    pub state: PState,
    pub guard: Option<TermId>,
}

/// Every classic successor of a non-final state whose path condition is
/// not syntactically false.
pub fn classic_successors(
    terms: &mut Terms,
    prog: &Program,
    s: &PState,
) -> Result<Vec<Succ>, Stuck> {
    let body = &prog.funcs[s.func];
    if s.loc == body.exit {
        return return_from_call(prog, s).map(|st| {
            vec![Succ {
                state: st,
                guard: None,
            }]
        });
    }
    let mut out = Vec::new();
    for (i, e) in body.edges.iter().enumerate() {
        if e.from == s.loc
            && let Some(succ) = step_edge(terms, prog, s, i as EdgeId)?
        {
            out.push(succ);
        }
    }
    Ok(out)
}

/// The classic return at a function's exit: pop the caller's frame.
fn return_from_call(prog: &Program, s: &PState) -> Result<PState, Stuck> {
    let Some(Record::Frame {
        func,
        sigma,
        ret,
        dst,
    }) = s.stack.last().cloned()
    else {
        return Err("a return with no caller frame".into());
    };
    let callee = &prog.funcs[s.func];
    let caller = &prog.funcs[func];
    let mut theta = sigma;
    copy_globals(callee, &s.theta, caller, &mut theta);
    let r = callee
        .var_id(crate::ir::RETURN_VAR)
        .map(|v| s.theta[v as usize]);
    theta[dst as usize] = r.unwrap_or(Value::Unset);
    let mut stack = s.stack.clone();
    stack.pop();
    Ok(PState {
        func,
        theta,
        pc: s.pc.clone(),
        stack,
        loc: ret,
    })
}

fn copy_globals(from: &Body, from_theta: &[Value], to: &Body, to_theta: &mut [Value]) {
    for (i, v) in to.vars.iter().enumerate() {
        if v.kind == VarKind::Global
            && let Some(j) = from.var_id(&v.name)
        {
            to_theta[i] = from_theta[j as usize];
        }
    }
}

/// One edge from `s` (whose location is the edge's source). `None` when
/// its guard is false.
pub fn step_edge(
    terms: &mut Terms,
    prog: &Program,
    s: &PState,
    edge: EdgeId,
) -> Result<Option<Succ>, Stuck> {
    let body = &prog.funcs[s.func];
    let e = &body.edges[edge as usize];
    let mut next = s.clone();
    next.loc = e.to;
    let mut guard = None;
    match &e.instr {
        Instr::Skip | Instr::Output(_) => {}
        Instr::Assign(place, x) => {
            if let Place::Index(base, _) = place
                && let Place::Var(a) = **base
                && may_share_cells(body, a)
            {
                return Err(format!(
                    "a write into array {} whose cells another variable may share",
                    body.var(a).name
                ));
            }
            let v = eval(terms, &s.theta, x)?;
            assign(terms, &mut next.theta, place, v, s)?;
        }
        Instr::Assume(c) | Instr::Assert(c, _) => {
            let g = cond(terms, &s.theta, c)?;
            match terms.as_bool(g) {
                Some(false) => return Ok(None),
                Some(true) => {}
                None => {
                    next.pc.push(g);
                    guard = Some(g);
                }
            }
        }
        Instr::Call { dst, func, args } => {
            let callee_ix = prog
                .index(func)
                .ok_or_else(|| format!("call of unknown function {func}"))?;
            let callee = &prog.funcs[callee_ix];
            let mut theta = vec![Value::Unset; callee.vars.len()];
            for (i, a) in args.iter().enumerate() {
                theta[i] = eval(terms, &s.theta, a)?;
            }
            copy_globals(body, &s.theta, callee, &mut theta);
            next.stack.push(Record::Frame {
                func: s.func,
                sigma: s.theta.clone(),
                ret: e.to,
                dst: *dst,
            });
            next.func = callee_ix;
            next.theta = theta;
            next.loc = callee.entry;
        }
        Instr::Alloc(..) => return Err("allocation (pointers) is not supported".into()),
        Instr::Enter(_) => return Err("an inlined-graph instruction".into()),
    }
    Ok(Some(Succ { state: next, guard }))
}

/// Whether array variable `a` may share its cells with another variable
/// (arrays are references in microc, and this model copies values): a
/// parameter; copied, passed or returned anywhere in the function; or
/// assigned anything but a fresh array literal (a copy of another array,
/// a call's result).
fn may_share_cells(body: &Body, a: u32) -> bool {
    let whole = |x: &Expr| matches!(x, Expr::Var(v) if *v == a);
    (a as usize) < body.params
        || body.edges.iter().any(|e| match &e.instr {
            Instr::Assign(Place::Var(v), x) if *v == a => !matches!(x, Expr::Array(_)),
            Instr::Assign(_, x) => whole(x),
            Instr::Call { args, dst, .. } => *dst == a || args.iter().any(whole),
            Instr::Alloc(..) => true,
            _ => false,
        })
}

/// Whether a location ends a path: an error vertex, or the exit of the
/// starting function with no caller.
pub fn is_final(prog: &Program, start: usize, s: &PState) -> bool {
    let body = &prog.funcs[s.func];
    matches!(body.node_kinds[s.loc as usize], NodeKind::Error(_))
        || (s.func == start && s.loc == body.exit && s.stack.is_empty())
}

fn int_of(v: Value) -> Result<TermId, Stuck> {
    match v {
        Value::Int(t) => Ok(t),
        Value::Unset => Err("a read of an unassigned variable".into()),
        Value::Array { .. } => Err("an array used as an integer".into()),
    }
}

/// A pure expression's value (the one translation, `symbolic`, over the
/// parametrised memory θ).
pub fn eval(terms: &mut Terms, theta: &[Value], x: &Expr) -> Result<Value, Stuck> {
    symbolic::value(&mut Theta { terms, theta }, x)
}

/// θ as the translation reads it.
struct Theta<'a> {
    terms: &'a mut Terms,
    theta: &'a [Value],
}

impl symbolic::Reads for Theta<'_> {
    type Value = Value;
    type Error = Stuck;

    fn terms(&mut self) -> &mut Terms {
        self.terms
    }

    fn int_value(&mut self, t: TermId) -> Value {
        Value::Int(t)
    }

    fn to_int(&mut self, v: Value) -> Result<TermId, Stuck> {
        int_of(v)
    }

    fn var(&mut self, v: u32) -> Result<Value, Stuck> {
        match self.theta[v as usize] {
            Value::Unset => Err("a read of an unassigned variable".into()),
            v => Ok(v),
        }
    }

    fn element(&mut self, array: Value, i: TermId) -> Result<Value, Stuck> {
        let Value::Array { cells, .. } = array else {
            return Err("indexing a non-array (nested arrays are not supported)".into());
        };
        Ok(Value::Int(self.terms.select(cells, vec![i])))
    }

    fn other(&mut self, x: &Expr) -> Result<Value, Stuck> {
        match x {
            Expr::Array(xs) => {
                let elems: Vec<TermId> = (xs.iter())
                    .map(|x| symbolic::int(self, x))
                    .collect::<Result<_, _>>()?;
                Ok(array_literal(self.terms, &elems))
            }
            Expr::Field(..) | Expr::Record(_) => Err("records are not supported".into()),
            _ => Err("pointers are not supported".into()),
        }
    }
}

/// An array literal: λj. ite(j = 0, e0, ite(j = 1, e1, … 0)), its length.
fn array_literal(terms: &mut Terms, elems: &[TermId]) -> Value {
    let j = terms.new_var(TermVar::Bound, "j");
    let jt = terms.var(j);
    let mut body = terms.int(0);
    for (k, v) in elems.iter().enumerate().rev() {
        let kt = terms.int(k as i64);
        let at = terms.eq(jt, kt);
        body = terms.ite(at, *v, body);
    }
    let cells = terms.lambda(vec![j], body);
    let len = terms.int(elems.len() as i64);
    Value::Array { cells, len }
}

/// A condition as a Boolean term.
pub fn cond(terms: &mut Terms, theta: &[Value], c: &Cond) -> Result<TermId, Stuck> {
    let (t, positive) = match c {
        Cond::Cmp(op, a, b) => {
            let mut reads = Theta { terms, theta };
            (symbolic::compare(&mut reads, *op, a, b)?, true)
        }
        Cond::Initialized {
            place: Place::Var(v),
            positive,
        } => {
            let set = theta[*v as usize] != Value::Unset;
            (terms.bool(set), *positive)
        }
        Cond::Initialized { .. } => {
            return Err("initialisation of an element or field".into());
        }
        Cond::InBounds {
            array,
            index,
            positive,
        } => {
            let Value::Array { len, .. } = eval(terms, theta, array)? else {
                return Err("bounds of a non-array".into());
            };
            let i = int_of(eval(terms, theta, index)?)?;
            // A negative length is an input array: every index is in bounds.
            let zero = terms.int(0);
            let unbounded = terms.lt(len, zero);
            let low = terms.le(zero, i);
            let high = terms.lt(i, len);
            let inside = terms.and(vec![low, high]);
            (terms.or(vec![unbounded, inside]), *positive)
        }
    };
    Ok(if positive { t } else { terms.not(t) })
}

fn assign(
    terms: &mut Terms,
    theta: &mut [Value],
    place: &Place,
    v: Value,
    s: &PState,
) -> Result<(), Stuck> {
    match place {
        Place::Var(x) => theta[*x as usize] = v,
        Place::Index(base, i) => {
            let Place::Var(a) = **base else {
                return Err("a write into a nested array or record".into());
            };
            let Value::Array { cells, len } = s.theta[a as usize] else {
                return Err("a write into a non-array".into());
            };
            let i = int_of(eval(terms, &s.theta, i)?)?;
            let v = int_of(v)?;
            let j = terms.new_var(TermVar::Bound, "j");
            let jt = terms.var(j);
            let old = terms.select(cells, vec![jt]);
            let here = terms.eq(jt, i);
            let body = terms.ite(here, v, old);
            let cells = terms.lambda(vec![j], body);
            theta[a as usize] = Value::Array { cells, len };
        }
        Place::Deref(_) => return Err("a write through a pointer".into()),
        Place::Field(..) => return Err("records are not supported".into()),
    }
    Ok(())
}
