//! From a model to a witness: main's arguments and the input stream.
//!
//! A model interprets the input symbols of the condition: main's integer
//! parameters (`n₀`), its input arrays (`A₀`, a function of one index per
//! dimension) and the input stream (`$in₀`, read at 0, 1, …). The values
//! are asked with `get-value` on a narrow window of indices first; the
//! replay then tells which cells the run read outside it, and those are
//! asked for next, until the run reads only values of the model
//! (docs/necessary-conditions.md §9). Cells never asked read as 0.

use crate::interp::{ArgValue, InputReads, Witness};
use crate::ir::{Body, INPUT_STREAM};
use crate::smt::smtlib::{self, name as smt_name};
use crate::smt::{Judgement, Session, Warm};
use crate::syntax::ast::Program;
use crate::term::{TermId, Terms};
use num_bigint::BigInt;
use num_traits::Zero;
use std::collections::{BTreeSet, HashMap};

/// The inputs of the program as the condition names them.
#[derive(Clone, Debug)]
pub struct InputModel {
    /// main's parameters in order: (name, array dimensions (0: integer),
    /// the SMT name of its symbol if the condition mentions it).
    params: Vec<(String, u32, Option<String>)>,
    /// The SMT name of the input stream's symbol, if mentioned.
    stream: Option<String>,
    /// How an element of an input array or the stream is named.
    access: Access,
}

/// How the symbols of input arrays are read at an index.
#[derive(Clone, Copy, Debug)]
pub enum Access {
    /// A function of one index per dimension (the conditions': `(A i j)`).
    Apply,
    /// A (nested) SMT array (the Horn clauses': `(select (select A i) j)`).
    Select,
}

impl Access {
    fn at(self, symbol: &str, index: &[usize]) -> String {
        match self {
            Access::Apply => smtlib::application(symbol, index),
            Access::Select => smtlib::nested_select(symbol, index),
        }
    }
}

/// The window of indices asked first, per dimension.
fn window(dims: u32) -> usize {
    match dims {
        1 => 64,
        2 => 8,
        _ => 3,
    }
}

impl InputModel {
    /// The inputs as the condition `phi` names them.
    pub fn new(program: &Program, body: &Body, terms: &Terms, phi: TermId) -> InputModel {
        let free = terms.free_vars(phi);
        let smt_of = |name: &str| {
            let symbol = format!("{name}₀");
            free.iter()
                .find(|v| terms.var_name(**v) == symbol)
                .map(|v| smt_name(terms, *v))
        };
        InputModel::named(program, body, smt_of, Access::Apply)
    }

    /// The inputs as `symbol` names them, by variable name (main's
    /// parameters and the input stream), read by `access`.
    pub fn named(
        program: &Program,
        body: &Body,
        symbol: impl Fn(&str) -> Option<String>,
        access: Access,
    ) -> InputModel {
        let params = program
            .function("main")
            .map(|main| {
                main.params
                    .iter()
                    .map(|p| {
                        let dims = body.vars[..body.params.min(body.vars.len())]
                            .iter()
                            .find(|v| v.name == p.name)
                            .and_then(|v| v.ty.array_depth())
                            .unwrap_or(0);
                        (p.name.clone(), dims, symbol(&p.name))
                    })
                    .collect()
            })
            .unwrap_or_default();
        InputModel {
            params,
            stream: symbol(INPUT_STREAM),
            access,
        }
    }

    /// The cells asked first, in the order of their terms: the integer
    /// parameters and the window of each array, in main's order, then the
    /// stream's window.
    fn window_cells(&self) -> Vec<Cell> {
        let mut out = Vec::new();
        for (p, (_, dims, smt)) in self.params.iter().enumerate() {
            match (smt, *dims) {
                (None, _) => {}
                (Some(_), 0) => out.push(Cell::Param(p)),
                (Some(_), d) => {
                    out.extend((indices(d, window(d)).into_iter()).map(|i| Cell::Element(p, i)))
                }
            }
        }
        if self.stream.is_some() {
            out.extend((0..window(1)).map(Cell::Stream));
        }
        out
    }

    /// The terms to ask for first (of [`Self::window_cells`]).
    fn terms(&self) -> Vec<String> {
        (self.window_cells().iter())
            .filter_map(|c| self.term(c))
            .collect()
    }

    /// Builds the witness from the values of [`Self::terms`].
    fn witness(&self, values: &[BigInt]) -> Witness {
        let mut it = values.iter();
        let mut args = Vec::new();
        for (name, dims, smt) in &self.params {
            let v = match (smt, dims) {
                (None, 0) => ArgValue::Int(BigInt::zero()),
                (None, _) => ArgValue::List(vec![]),
                (Some(_), 0) => ArgValue::Int(it.next().cloned().unwrap_or_default()),
                (Some(_), d) => {
                    let n = window(*d);
                    let flat: Vec<BigInt> = it.by_ref().take(n.pow(*d)).cloned().collect();
                    nest(&flat, *d, n)
                }
            };
            args.push((name.clone(), v));
        }
        let mut input: Vec<BigInt> = if self.stream.is_some() {
            it.cloned().collect()
        } else {
            vec![]
        };
        while input.last().is_some_and(|x| x.is_zero()) {
            input.pop();
        }
        Witness { args, input }
    }

    /// Judges the current model: a witness that `replay` accepts (and
    /// whether it is a variation of the model's), or a blocking assertion.
    pub fn judge(
        &self,
        session: &mut impl Values,
        replay: &impl Replay,
    ) -> Result<Judgement<(Witness, bool)>, String> {
        let terms = self.terms();
        let values = session.int_values(&terms)?;
        let narrow = self.witness(&values);
        let why = match self.complete(session, narrow.clone(), replay)? {
            Ok((w, reads)) => return Ok(Judgement::Accept((shrink(w, &reads, replay), false))),
            Err(why) => why,
        };
        // Where the condition is weak (⋆ values), a model is a guess near a
        // real run: try a few deterministic variations of its inputs first.
        if let Some(w) = vary(&narrow, replay) {
            let (_, reads) = replay.hits_reading(&w);
            return Ok(Judgement::Accept((shrink(w, &reads, replay), true)));
        }
        // The block speaks of the narrow window only: any assertion that
        // excludes this model will do, and a short one keeps the solver fast
        // (1024 equalities made cvc5 100× slower on WinDriver).
        // No inputs: every model is the same run, and the block is `false`.
        let block = smtlib::blocking(&terms, &values);
        Ok(Judgement::Reject { block, why })
    }

    /// The model's own run: replays `w` (the narrow window's witness), and
    /// while the run reads input cells whose model value was not asked
    /// yet, asks for them and replays again. The run then reads only the
    /// model's values, so a further miss is the model's, not the window's.
    /// A witness that hits (with what its run read), or why the last
    /// replay missed.
    fn complete(
        &self,
        session: &mut impl Values,
        mut w: Witness,
        replay: &impl Replay,
    ) -> Result<Result<(Witness, InputReads), String>, String> {
        let mut asked: BTreeSet<Cell> = self.window_cells().into_iter().collect();
        let mut budget = DEMAND_LIMIT;
        let mut round = 0;
        loop {
            let (hit, reads) = replay.judges_reading(&w);
            let why = match hit {
                Ok(()) => return Ok(Ok((w, reads))),
                Err(why) => why,
            };
            let wanted = self.unasked(&reads, &asked, budget);
            if wanted.is_empty() || round == DEMAND_ROUNDS {
                return Ok(Err(why));
            }
            let (cells, terms): (Vec<Cell>, Vec<String>) = (wanted.into_iter())
                .filter_map(|c| Some((c.clone(), self.term(&c)?)))
                .unzip();
            let values = session.int_values(&terms)?;
            for (cell, v) in cells.into_iter().zip(values) {
                self.set(&mut w, &cell, v);
                asked.insert(cell);
            }
            budget = budget.saturating_sub(terms.len());
            round += 1;
        }
    }

    /// The cells a run read that were not asked yet, at most `budget`:
    /// elements of the arrays the condition mentions (at their depth), and
    /// positions of the stream.
    fn unasked(&self, reads: &InputReads, asked: &BTreeSet<Cell>, budget: usize) -> Vec<Cell> {
        let elements = (reads.cells.iter()).filter_map(|(p, path)| {
            let (_, dims, smt) = self.params.get(*p)?;
            (smt.is_some() && path.len() == *dims as usize).then(|| Cell::Element(*p, path.clone()))
        });
        let stream = (0..reads.stream)
            .map(Cell::Stream)
            .filter(|_| self.stream.is_some());
        elements
            .chain(stream)
            .filter(|c| !asked.contains(c))
            .take(budget)
            .collect()
    }

    /// The SMT term of a cell.
    fn term(&self, cell: &Cell) -> Option<String> {
        match cell {
            Cell::Param(p) => self.params.get(*p)?.2.clone(),
            Cell::Element(p, path) => {
                let symbol = self.params.get(*p)?.2.as_ref()?;
                Some(self.access.at(symbol, path))
            }
            Cell::Stream(i) => Some(self.access.at(self.stream.as_ref()?, &[*i])),
        }
    }

    /// Writes a cell's value into the witness, growing its lists (with 0
    /// and empty rows, which read as if absent).
    fn set(&self, w: &mut Witness, cell: &Cell, v: BigInt) {
        match cell {
            Cell::Param(p) => {
                if let Some((_, x)) = w.args.get_mut(*p) {
                    *x = ArgValue::Int(v);
                }
            }
            Cell::Stream(i) => {
                if w.input.len() <= *i {
                    w.input.resize(i + 1, BigInt::zero());
                }
                w.input[*i] = v;
            }
            Cell::Element(p, path) => {
                if let Some((_, list)) = w.args.get_mut(*p) {
                    set_element(list, path, v);
                }
            }
        }
    }
}

/// How many times the judge asks for the cells a replay read beyond those
/// asked, and how many cells it asks for in all. (A fixed wide window of
/// 1024 cells, which this replaced, took 5–27 ms of `get-value` on
/// MatrIR, and missed runs that read beyond it.)
const DEMAND_ROUNDS: usize = 8;
const DEMAND_LIMIT: usize = 4096;

/// An input cell: one of main's integer parameters (its position), an
/// element of one of its arrays (the parameter's position, the index
/// path) or a position of the input stream.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Cell {
    Param(usize),
    Element(usize, Vec<usize>),
    Stream(usize),
}

/// Sets the element at `path` of a (nested) list, growing it as needed.
/// A list whose shape disagrees with the path is left as it is.
fn set_element(list: &mut ArgValue, path: &[usize], v: BigInt) {
    let (ArgValue::List(xs), Some((&i, rest))) = (list, path.split_first()) else {
        return;
    };
    let filler = if rest.is_empty() {
        ArgValue::Int(BigInt::zero())
    } else {
        ArgValue::List(vec![])
    };
    if xs.len() <= i {
        xs.resize(i + 1, filler);
    }
    match (&mut xs[i], rest.is_empty()) {
        (ArgValue::Int(x), true) => *x = v,
        (row @ ArgValue::List(_), false) => set_element(row, rest, v),
        _ => {}
    }
}

/// A solver after `sat`, asked for the values of integer expressions.
pub trait Values {
    fn int_values(&mut self, exprs: &[String]) -> Result<Vec<BigInt>, String>;
}

impl Values for Session {
    fn int_values(&mut self, exprs: &[String]) -> Result<Vec<BigInt>, String> {
        Session::int_values(self, exprs)
    }
}

impl Values for Warm {
    fn int_values(&mut self, exprs: &[String]) -> Result<Vec<BigInt>, String> {
        self.values_of(exprs)
    }
}

/// How a judge runs a witness on the interpreter.
pub trait Replay {
    /// `Ok(())` if the run hits the target, else what it did.
    fn hits(&self, w: &Witness) -> Result<(), String>;
    /// [`Replay::hits`], and which of the witness's input cells it read.
    fn hits_reading(&self, w: &Witness) -> (Result<(), String>, InputReads);
    /// [`Replay::hits`] for a variation being tried (shrinking, varying a
    /// model): within the default step limit rather than the time left,
    /// so that a variation that runs forever costs little.
    fn tries(&self, w: &Witness) -> Result<(), String> {
        self.hits(w)
    }
    /// [`Replay::hits_reading`] of a model's witness, which may be wrong
    /// (the condition is necessary, not sufficient): within the default
    /// step limit, and the time left only for the program's one run (a
    /// witness with no arguments whose run read no input).
    fn judges_reading(&self, w: &Witness) -> (Result<(), String>, InputReads) {
        self.hits_reading(w)
    }
}

/// A shorter witness that still hits: the model fills the whole window
/// (with its default value), the run usually reads a prefix. Each list
/// (main's arrays, their rows, the input stream) is first cut past the
/// last cell its run read (`reads`: the same run, so no replay is needed
/// but one that confirms it), then to the shortest prefix found by
/// bisection that still replays to the target.
pub(crate) fn shrink(w: Witness, reads: &InputReads, replay: &impl Replay) -> Witness {
    let mut w = match cut_to_reads(&w, reads) {
        Some(cut) if cut != w && replay.tries(&cut).is_ok() => cut,
        _ => w,
    };
    fn bisect<T: Clone>(
        w: &mut Witness,
        get: impl Fn(&mut Witness) -> &mut Vec<T>,
        replay: &impl Replay,
    ) {
        let full = get(w).clone();
        let (mut lo, mut hi) = (0, full.len());
        // Invariant: the prefix of length `hi` hits.
        while lo < hi {
            let mid = (lo + hi) / 2;
            *get(w) = full[..mid].to_vec();
            if replay.tries(w).is_ok() {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        *get(w) = full[..hi].to_vec();
    }
    fn list(v: &mut ArgValue) -> &mut Vec<ArgValue> {
        match v {
            ArgValue::List(xs) => xs,
            ArgValue::Int(_) => unreachable!("only lists are shrunk"),
        }
    }
    for i in 0..w.args.len() {
        if !matches!(w.args[i].1, ArgValue::List(_)) {
            continue;
        }
        bisect(&mut w, |w| list(&mut w.args[i].1), replay);
        let rows = list(&mut w.args[i].1).len();
        for r in 0..rows {
            if matches!(list(&mut w.args[i].1)[r], ArgValue::List(_)) {
                bisect(&mut w, |w| list(&mut list(&mut w.args[i].1)[r]), replay);
            }
        }
    }
    bisect(&mut w, |w| &mut w.input, replay);
    w
}

/// `w` without the list elements past the last one its run read (`None`
/// when the run read more cells than it recorded). Elements past a list's
/// end read as 0 or an empty row, and a run never observes a list's
/// length, so only what was read decides the run.
fn cut_to_reads(w: &Witness, reads: &InputReads) -> Option<Witness> {
    if reads.overflow {
        return None;
    }
    // How far each list was read: (parameter, row) → last index + 1, the
    // row `None` for the parameter's own list.
    let mut extent: HashMap<(usize, Option<usize>), usize> = HashMap::new();
    for (p, path) in &reads.cells {
        let (list, row) = match path.as_slice() {
            [i] => (*i, None),
            [r, j, ..] => {
                let e = extent.entry((*p, Some(*r))).or_default();
                *e = (*e).max(j + 1);
                (*r, None)
            }
            [] => continue,
        };
        let e = extent.entry((*p, row)).or_default();
        *e = (*e).max(list + 1);
    }
    let read = |p: usize, row: Option<usize>| extent.get(&(p, row)).copied().unwrap_or(0);
    let mut cut = w.clone();
    for (p, (_, v)) in cut.args.iter_mut().enumerate() {
        let ArgValue::List(xs) = v else { continue };
        xs.truncate(read(p, None));
        for (r, x) in xs.iter_mut().enumerate() {
            if let ArgValue::List(row) = x {
                row.truncate(read(p, Some(r)));
            }
        }
    }
    cut.input.truncate(reads.stream);
    Some(cut)
}

/// How many variations of a model's witness are replayed before it is
/// blocked.
const VARIATIONS: u64 = 32;

/// Variations of a witness: each element of each list (main's arrays and
/// the input stream) replaced, with probability ¼, by a value the model
/// uses or one of -1, 0, 1, 2; the integer parameters are kept (the
/// condition constrains them most). Deterministic: the same model gives
/// the same variations.
fn vary(w: &Witness, replay: &impl Replay) -> Option<Witness> {
    fn pool(v: &ArgValue, out: &mut Vec<BigInt>) {
        match v {
            ArgValue::Int(n) => out.push(n.clone()),
            ArgValue::List(xs) => xs.iter().for_each(|x| pool(x, out)),
        }
    }
    fn mutate(v: &ArgValue, pool: &[BigInt], rng: &mut u64) -> ArgValue {
        match v {
            ArgValue::Int(n) => {
                if next(rng).is_multiple_of(4) {
                    ArgValue::Int(pool[(next(rng) % pool.len() as u64) as usize].clone())
                } else {
                    ArgValue::Int(n.clone())
                }
            }
            ArgValue::List(xs) => ArgValue::List(xs.iter().map(|x| mutate(x, pool, rng)).collect()),
        }
    }
    fn next(state: &mut u64) -> u64 {
        // xorshift64*
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    let has_lists =
        !w.input.is_empty() || w.args.iter().any(|(_, v)| matches!(v, ArgValue::List(_)));
    if !has_lists {
        return None;
    }
    let mut values: Vec<BigInt> = [-1, 0, 1, 2].iter().map(|&x| x.into()).collect();
    for (_, v) in &w.args {
        if matches!(v, ArgValue::List(_)) {
            pool(v, &mut values);
        }
    }
    values.extend(w.input.iter().cloned());
    values.sort();
    values.dedup();
    if let Some(w) = compactions(w).into_iter().find(|c| replay.tries(c).is_ok()) {
        return Some(w);
    }
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..VARIATIONS {
        let args = w
            .args
            .iter()
            .map(|(n, v)| match v {
                ArgValue::List(_) => (n.clone(), mutate(v, &values, &mut rng)),
                ArgValue::Int(_) => (n.clone(), v.clone()),
            })
            .collect();
        let input = w
            .input
            .iter()
            .map(
                |x| match mutate(&ArgValue::Int(x.clone()), &values, &mut rng) {
                    ArgValue::Int(n) => n,
                    ArgValue::List(_) => x.clone(),
                },
            )
            .collect();
        let candidate = Witness { args, input };
        if replay.tries(&candidate).is_ok() {
            return Some(candidate);
        }
    }
    None
}

/// Compacted variations of a witness's flat lists (main's 1-D arrays, the
/// input stream): for each value v of a list, the list without all but the
/// last occurrence of v, and without every v but with one v appended. A
/// weakened condition (φ̂^K constrains only K iterations of a loop) admits
/// models that put what the run needs after a terminator, e.g. the words
/// of HWM after a 0 in the string; removing the interior terminators turns
/// such a model into a run. Every candidate is replayed, so this is only a
/// search order.
fn compactions(w: &Witness) -> Vec<Witness> {
    fn variants(xs: &[BigInt]) -> Vec<Vec<BigInt>> {
        let mut values: Vec<&BigInt> = xs.iter().collect();
        values.sort();
        values.dedup();
        let mut out = Vec::new();
        for v in values {
            let others: Vec<BigInt> = xs.iter().filter(|x| *x != v).cloned().collect();
            if others.len() + 1 >= xs.len() {
                continue; // v occurs once: nothing to compact
            }
            let last = xs.iter().rposition(|x| x == v).unwrap_or(0);
            let keep_last: Vec<BigInt> = xs
                .iter()
                .enumerate()
                .filter(|(i, x)| *x != v || *i == last)
                .map(|(_, x)| x.clone())
                .collect();
            let mut appended = others;
            appended.push(v.clone());
            out.push(keep_last);
            out.push(appended);
        }
        out
    }
    let ints = |xs: &[ArgValue]| -> Option<Vec<BigInt>> {
        xs.iter()
            .map(|x| match x {
                ArgValue::Int(n) => Some(n.clone()),
                ArgValue::List(_) => None,
            })
            .collect()
    };
    let mut out = Vec::new();
    for (i, (_, v)) in w.args.iter().enumerate() {
        let ArgValue::List(xs) = v else { continue };
        let Some(flat) = ints(xs) else { continue };
        for c in variants(&flat) {
            let mut cand = w.clone();
            cand.args[i].1 = ArgValue::List(c.into_iter().map(ArgValue::Int).collect());
            out.push(cand);
        }
    }
    for c in variants(&w.input) {
        out.push(Witness {
            args: w.args.clone(),
            input: c,
        });
    }
    out
}

/// All index tuples of `dims` dimensions of width `n`, row-major.
fn indices(dims: u32, n: usize) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for _ in 0..dims {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..n).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    out
}

/// A row-major block of `n^dims` values as nested lists, trailing zeros
/// (and trailing empty rows) dropped: they read as 0 anyway.
fn nest(flat: &[BigInt], dims: u32, n: usize) -> ArgValue {
    let mut items: Vec<ArgValue> = if dims <= 1 {
        flat.iter().map(|x| ArgValue::Int(x.clone())).collect()
    } else {
        let row = n.pow(dims - 1);
        flat.chunks(row).map(|c| nest(c, dims - 1, n)).collect()
    };
    while items.last().is_some_and(|x| match x {
        ArgValue::Int(v) => v.is_zero(),
        ArgValue::List(xs) => xs.is_empty(),
    }) {
        items.pop();
    }
    ArgValue::List(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nests_and_trims() {
        let flat: Vec<BigInt> = [1, 0, 0, 0, 2, 0, 0, 0, 0]
            .iter()
            .map(|&x| x.into())
            .collect();
        let v = nest(&flat, 2, 3);
        let row =
            |xs: &[i64]| ArgValue::List(xs.iter().map(|&x| ArgValue::Int(x.into())).collect());
        assert_eq!(v, ArgValue::List(vec![row(&[1]), row(&[0, 2])]));
        assert_eq!(
            indices(2, 2),
            vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]
        );
    }

    #[test]
    fn a_witness_is_cut_past_the_last_cell_its_run_read() {
        let ints =
            |xs: &[i64]| ArgValue::List(xs.iter().map(|&x| ArgValue::Int(x.into())).collect());
        let w = Witness {
            args: vec![
                ("n".into(), ArgValue::Int(7.into())),
                ("A".into(), ints(&[1, 2, 3, 4, 5])),
                (
                    "B".into(),
                    ArgValue::List(vec![ints(&[1, 2, 3]), ints(&[4, 5]), ints(&[6])]),
                ),
            ],
            input: [8, 9, 10].iter().map(|&x| x.into()).collect(),
        };
        let mut reads = InputReads::default();
        reads
            .cells
            .extend([(1, vec![2]), (1, vec![0]), (2, vec![1, 0]), (2, vec![0, 7])]);
        reads.stream = 1;
        let cut = cut_to_reads(&w, &reads).expect("every read recorded");
        assert_eq!(cut.args[0].1, ArgValue::Int(7.into()));
        assert_eq!(cut.args[1].1, ints(&[1, 2, 3]));
        // B[0][7] lies past its row's end: the row stays whole.
        assert_eq!(
            cut.args[2].1,
            ArgValue::List(vec![ints(&[1, 2, 3]), ints(&[4])])
        );
        assert_eq!(cut.input, vec![BigInt::from(8)]);
        reads.overflow = true;
        assert_eq!(cut_to_reads(&w, &reads), None);
    }
}
