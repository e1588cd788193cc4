//! From a model of an error path to a witness, and its replay on the
//! interpreter: an error is reported only with a witness that runs to the
//! same target. A replay that misses is a bug of the executor (its
//! semantics and the interpreter's differ), never a result.
//!
//! Works on the [`Machine`] (its solver's model, main's inputs); which
//! errors were found and when a run stops are the stepping's (`exec`).

use super::machine::Machine;
use super::summary::StreamRun;
use crate::db::Target;
use crate::interp::{ArgValue, Witness};
use crate::term::{Node, TermId, Terms, Var};
use num_bigint::BigInt;
use num_traits::ToPrimitive;
use std::collections::BTreeMap;

/// Longest input list a witness may need (an index past it is no witness
/// anyone can replay); a block schedule's runs may make it long.
const MAX_WITNESS_INDEX: usize = crate::interp::MAX_INPUT_VALUES;

/// The elements of one input array the path reads: index tuple → value.
type Elements = BTreeMap<Vec<usize>, BigInt>;

/// The witness of the model the solver holds for `conjuncts` (a check
/// kept open for values), with the stream's `runs` written out.
pub(crate) fn from_model(
    m: &mut Machine,
    conjuncts: &[TermId],
    runs: &[StreamRun],
) -> Result<Witness, String> {
    let reads = input_reads(m, conjuncts);
    let scalars: Vec<Var> = (m.inputs().iter())
        .filter(|i| i.dims == 0)
        .map(|i| i.var)
        .collect();
    let mut asked: Vec<TermId> = (scalars.iter()).map(|v| m.terms_mut().var(*v)).collect();
    for (_, idx) in &reads {
        asked.extend(idx.iter().copied());
    }
    asked.extend(reads.iter().map(|(sel, _)| *sel));
    for r in runs {
        asked.extend([r.start, r.count]);
        asked.extend(&r.values);
    }
    let values = m.values(&asked)?;
    let (scalar_values, rest) = values.split_at(scalars.len());
    let index_count: usize = reads.iter().map(|(_, i)| i.len()).sum();
    let (index_values, rest) = rest.split_at(index_count);
    let (read_values, run_values) = rest.split_at(reads.len());
    let arrays = elements(m.terms(), &reads, index_values, read_values)?;
    let mut w = assemble(m, scalar_values, &arrays)?;
    written_out(runs, run_values, &mut w.input)?;
    Ok(w)
}

/// The stream's elements that the runs stand for, from the values of
/// their terms (start, count, then the values, run by run).
fn written_out(
    runs: &[StreamRun],
    mut values: &[BigInt],
    stream: &mut Vec<BigInt>,
) -> Result<(), String> {
    for r in runs {
        let (head, rest) = values.split_at(2 + r.values.len());
        values = rest;
        let start = head[0]
            .to_usize()
            .ok_or("a run of the stream starts before it")?;
        let count = head[1].to_usize().unwrap_or(usize::MAX);
        let width = r.values.len();
        let end = (count.checked_mul(width))
            .and_then(|n| n.checked_add(start))
            .filter(|end| *end <= MAX_WITNESS_INDEX)
            .ok_or_else(|| format!("the witness needs more than {MAX_WITNESS_INDEX} inputs"))?;
        if stream.len() < end {
            stream.resize(end, BigInt::from(0));
        }
        for (cell, value) in stream[start..end].iter_mut().zip(head[2..].iter().cycle()) {
            cell.clone_from(value);
        }
    }
    Ok(())
}

/// Every `A(i…)` over an input array in the conjuncts, with its indices.
/// Each conjunct's are found once per exploration: a path condition is
/// asked again at every error found under it.
fn input_reads(m: &mut Machine, conjuncts: &[TermId]) -> Vec<(TermId, Vec<TermId>)> {
    let mut out = Vec::new();
    for &c in conjuncts {
        out.extend(m.input_reads_of(c, reads_in).iter().cloned());
    }
    out.sort();
    out.dedup();
    out
}

/// [`input_reads`] of one conjunct.
fn reads_in(terms: &Terms, conjunct: TermId) -> Vec<(TermId, Vec<TermId>)> {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut stack: Vec<TermId> = vec![conjunct];
    let mut out = Vec::new();
    while let Some(t) = stack.pop() {
        if !seen.insert(t) {
            continue;
        }
        let node = terms.node(t);
        if let Node::Select(a, idx) = node
            && matches!(terms.node(*a), Node::Var(_))
        {
            out.push((t, idx.to_vec()));
        }
        stack.extend(terms.children(node));
    }
    out.sort();
    out
}

/// The concrete elements read, per array symbol.
fn elements(
    terms: &Terms,
    reads: &[(TermId, Vec<TermId>)],
    index_values: &[BigInt],
    read_values: &[BigInt],
) -> Result<BTreeMap<Var, Elements>, String> {
    let mut out: BTreeMap<Var, Elements> = BTreeMap::new();
    let mut next = index_values.iter();
    for ((sel, idx), value) in reads.iter().zip(read_values) {
        let Node::Select(a, _) = terms.node(*sel) else {
            continue;
        };
        let Node::Var(array) = terms.node(*a) else {
            continue;
        };
        let mut at = Vec::with_capacity(idx.len());
        let mut negative = false;
        for _ in idx {
            let i = next.next().ok_or("get-value: too few values")?;
            match i.to_usize() {
                Some(u) if u <= MAX_WITNESS_INDEX => at.push(u),
                Some(_) => return Err(format!("the witness needs an input index {i}")),
                None => negative = true, // read as the default, not from the list
            }
        }
        if !negative {
            out.entry(*array).or_default().insert(at, value.clone());
        }
    }
    Ok(out)
}

/// main's arguments (the scalars' values in order) and the input list.
fn assemble(
    m: &Machine,
    scalar_values: &[BigInt],
    arrays: &BTreeMap<Var, Elements>,
) -> Result<Witness, String> {
    let mut w = Witness::default();
    let mut scalar = scalar_values.iter();
    for input in m.inputs() {
        let value = if input.dims == 0 {
            let n = scalar.next().ok_or("get-value: too few values")?;
            ArgValue::Int(n.clone())
        } else {
            list(arrays.get(&input.var), input.dims as usize, &[])
        };
        w.args.push((input.name.clone(), value));
    }
    if let Some(stream) = m.stream()
        && let Some(elems) = arrays.get(&stream)
    {
        let len = elems.keys().map(|k| k[0] + 1).max().unwrap_or(0);
        w.input = vec![BigInt::from(0); len];
        for (k, v) in elems {
            w.input[k[0]] = v.clone();
        }
    }
    Ok(w)
}

/// The witness of an error path if the interpreter, run on it, fails at
/// `target`; otherwise `None`, the path counted as undecided (no witness
/// could be had: a session cancelled at the deadline) or as a replay
/// failure (one was built and did not replay).
pub(crate) fn replayed(
    m: &mut Machine,
    target: &Target,
    witness: Result<Witness, String>,
) -> Option<Witness> {
    let at = format!("an error path to {}:{}", target.line, target.col);
    let witness = match witness {
        Ok(w) => w,
        Err(why) => {
            m.stats_mut()
                .undecided_path(format!("{at} has no witness ({why})"));
            return None;
        }
    };
    match m.replayer().hits_target(&witness, target) {
        Ok(()) => Some(witness),
        // A replay the deadline cut says nothing of the witness.
        Err(why)
            if crate::interp::ended_at_step_limit(&Err(why.clone()))
                && crate::deadline::passed() =>
        {
            m.stats_mut().undecided_path(format!(
                "{at} has no witness yet (the deadline cut its replay)"
            ));
            None
        }
        Err(why) => {
            let s = m.stats_mut();
            s.replay_failures += 1;
            s.note_undecided(format!("{at} has no witness that replays ({why})"));
            None
        }
    }
}

/// The witness list of an array of `dims` dimensions, at index `prefix`.
fn list(elems: Option<&Elements>, dims: usize, prefix: &[usize]) -> ArgValue {
    let Some(elems) = elems else {
        return ArgValue::List(vec![]);
    };
    let below = elems
        .keys()
        .filter(|k| k.starts_with(prefix) && k.len() > prefix.len());
    let len = below.map(|k| k[prefix.len()] + 1).max().unwrap_or(0);
    let items = (0..len)
        .map(|i| {
            let mut at = prefix.to_vec();
            at.push(i);
            if at.len() == dims {
                ArgValue::Int(elems.get(&at).cloned().unwrap_or_default())
            } else {
                list(Some(elems), dims, &at)
            }
        })
        .collect();
    ArgValue::List(items)
}
