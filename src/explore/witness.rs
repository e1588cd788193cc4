//! From a model of an error path to a witness, and its replay on the
//! interpreter: an error is reported only with a witness that runs to the
//! same target. A replay that misses is a bug of the executor (its
//! semantics and the interpreter's differ), never a result.

use super::FoundError;
use super::exec::Executor;
use crate::db::Target;
use crate::interp::{ArgValue, Witness};
use crate::term::{Node, TermId, Var};
use crate::witness::{Replay, Replayer};
use num_bigint::BigInt;
use num_traits::ToPrimitive;
use std::collections::BTreeMap;

/// Longest input list a witness may need (an index past it is no witness
/// anyone can replay).
const MAX_WITNESS_INDEX: usize = 100_000;

/// The elements of one input array the path reads: index tuple → value.
type Elements = BTreeMap<Vec<usize>, BigInt>;

impl Executor<'_> {
    /// The witness of the model the solver holds for `conjuncts`.
    pub(crate) fn witness(&mut self, conjuncts: &[TermId]) -> Result<Witness, String> {
        let reads = self.input_reads(conjuncts);
        let scalars: Vec<(String, Var)> = self
            .inputs
            .iter()
            .filter(|(_, _, d)| *d == 0)
            .map(|(n, v, _)| (n.clone(), *v))
            .collect();
        let mut asked: Vec<TermId> = scalars.iter().map(|(_, v)| self.terms.var(*v)).collect();
        for (_, idx) in &reads {
            asked.extend(idx.iter().copied());
        }
        asked.extend(reads.iter().map(|(sel, _)| *sel));
        let values = self.solver.values(&self.terms, &asked)?;
        let (scalar_values, rest) = values.split_at(scalars.len());
        let index_count: usize = reads.iter().map(|(_, i)| i.len()).sum();
        let (index_values, read_values) = rest.split_at(index_count);
        let arrays = self.elements(&reads, index_values, read_values)?;
        self.assemble(&scalars, scalar_values, &arrays)
    }

    /// Every `A(i…)` over an input array in the formula, with its indices.
    fn input_reads(&self, conjuncts: &[TermId]) -> Vec<(TermId, Vec<TermId>)> {
        let mut seen = rustc_hash::FxHashSet::default();
        let mut stack: Vec<TermId> = conjuncts.to_vec();
        let mut out = Vec::new();
        while let Some(t) = stack.pop() {
            if !seen.insert(t) {
                continue;
            }
            let node = self.terms.node(t);
            if let Node::Select(a, idx) = node
                && matches!(self.terms.node(*a), Node::Var(_))
            {
                out.push((t, idx.to_vec()));
            }
            stack.extend(self.terms.children(node));
        }
        out.sort();
        out
    }

    /// The concrete elements read, per array symbol.
    fn elements(
        &self,
        reads: &[(TermId, Vec<TermId>)],
        index_values: &[BigInt],
        read_values: &[BigInt],
    ) -> Result<BTreeMap<Var, Elements>, String> {
        let mut out: BTreeMap<Var, Elements> = BTreeMap::new();
        let mut next = index_values.iter();
        for ((sel, idx), value) in reads.iter().zip(read_values) {
            let Node::Select(a, _) = self.terms.node(*sel) else {
                continue;
            };
            let Node::Var(array) = self.terms.node(*a) else {
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

    fn assemble(
        &self,
        scalars: &[(String, Var)],
        scalar_values: &[BigInt],
        arrays: &BTreeMap<Var, Elements>,
    ) -> Result<Witness, String> {
        let mut w = Witness::default();
        let mut scalar = scalars.iter().zip(scalar_values);
        for (name, v, dims) in &self.inputs {
            let value = if *dims == 0 {
                let (_, n) = scalar.next().ok_or("get-value: too few values")?;
                ArgValue::Int(n.clone())
            } else {
                list(arrays.get(v), *dims as usize, &[])
            };
            w.args.push((name.clone(), value));
        }
        if let Some(stream) = self.stream
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

    /// Replays a witness; records the error if it reaches the target.
    pub(crate) fn record_error(&mut self, target: Target, witness: Result<Witness, String>) {
        if self.errors.iter().any(|e| e.target == target) {
            self.stop_if_first(&target);
            return;
        }
        // A witness the solver could not give (a session cancelled at the
        // deadline) leaves the path undecided; only one that was built and
        // did not replay is a replay failure.
        let witness = match witness {
            Ok(w) => w,
            Err(why) => {
                self.stats.undecided_paths += 1;
                self.stats.note_undecided(format!(
                    "an error path to {}:{} has no witness ({why})",
                    target.line, target.col
                ));
                return;
            }
        };
        let replayed = self.replays(&witness, &target).map(|()| witness);
        match replayed {
            Ok(w) => {
                self.stop_if_first(&target);
                self.errors.push(FoundError {
                    target,
                    witness: w,
                    found_after: self.stats.started.elapsed(),
                });
            }
            Err(why) => {
                self.stats.replay_failures += 1;
                self.stats.note_undecided(format!(
                    "an error path to {}:{} has no witness that replays ({why})",
                    target.line, target.col
                ));
            }
        }
    }

    /// Whether the interpreter, run on `w`, fails at `target`.
    fn replays(&self, w: &Witness, target: &Target) -> Result<(), String> {
        let p = self.prog;
        let replay = Replayer::new(&p.ast, &p.source, std::slice::from_ref(target));
        replay.hits(w)
    }

    /// A guided run stops at its goal (and only there), a search for one
    /// target at that target; otherwise the first error stops the
    /// thesis's executor.
    fn stop_if_first(&mut self, target: &Target) {
        let stop = match (&self.guidance, &self.opts.stop_at) {
            (Some(g), _) => g.goal == *target,
            (None, Some(t)) => t == target,
            (None, None) => self.opts.stop_at_first_error,
        };
        if stop {
            self.stats.stopped_at_error = true;
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
