//! Bézout ghosts: slots that write down how a loop's entry values are
//! made of its current ones, so that a divisibility fact becomes a
//! polynomial equality (docs/horn-clauses.md, "Bézout ghosts").
//!
//! Euclid's loop by subtraction (`x = x - y` or `y = y - x` until they
//! meet) keeps every common divisor of `x` and `y` a divisor of the
//! entry values. That is no polynomial over `x`, `y` and the entry
//! values. But each step is a unimodular map `v' = A·v` (an integer
//! matrix with an integer inverse), so the entry values `o` stay integer
//! combinations of the current ones, `o = M·v`, with `M' = M·A⁻¹`. Ghost
//! slots for `o` and `M` make that an equality of degree 2 at the header;
//! when `x = y` it says `o₀ = (M₀₀ + M₀₁)·x`, so `x` divides `o₀`.
//!
//! The ghosts are written and never read by the program's own slots, so
//! every run of the clauses is a run of the ghosted ones with the ghosts
//! forgotten: an invariant of the ghosted clauses that excludes the
//! error proves the original clauses safe. The equalities are only
//! candidates: Houdini and the certificate checks judge them like any
//! other.

use super::encode::{Encoding, Rule, StateVar};
use crate::ir::NodeId;
use crate::term::{Sort, TermId, Terms, Var, VarKind};
use num_bigint::BigInt;
use num_traits::{ToPrimitive, Zero};
use rustc_hash::FxHashMap as HashMap;

/// How many of a loop's slots the ghosts follow: two (6 ghost slots).
const TRACKED: usize = 2;

/// An integer matrix over the tracked slots, row by row.
type Matrix = [[i128; TRACKED]; TRACKED];

/// The ghosted clauses, and per header the equalities `oᵢ = Σⱼ Mᵢⱼ·vⱼ`.
pub(super) struct Ghosted {
    pub enc: Encoding,
    pub candidates: HashMap<NodeId, Vec<TermId>>,
}

/// The clauses with Bézout ghosts at the first loop header whose
/// iterations map two integer slots unimodularly and mix them; `None`
/// if no header does, or the ghosts would pass `max_ints` integer slots.
pub(super) fn bezout(enc: &Encoding, max_ints: usize) -> Option<Ghosted> {
    if !enc.summaries.is_empty() {
        return None;
    }
    let ints = (enc.state.iter())
        .filter(|s| Terms::var_sort(s.var) == Sort::Int)
        .count();
    if ints + TRACKED + TRACKED * TRACKED > max_ints {
        return None;
    }
    let (header, tracked, inverses) = (enc.predicates.iter())
        .find_map(|&h| unimodular_loop(enc, h).map(|(v, inv)| (h, v, inv)))?;
    Some(instrument(enc, header, tracked, &inverses))
}

/// The two slots that `h`'s loop maps unimodularly and mixes, with the
/// inverse map of each rule around the loop (by rule index).
fn unimodular_loop(enc: &Encoding, h: NodeId) -> Option<([usize; 2], HashMap<usize, Matrix>)> {
    let around: Vec<usize> = (0..enc.rules.len())
        .filter(|&k| enc.rules[k].from == Some(h) && enc.rules[k].to == Some(h))
        .collect();
    let tracked = closed_slots(enc, &around);
    let [a, b] = tracked[..] else { return None };
    let mut inverses = HashMap::default();
    let mut mixes = false;
    for &k in &around {
        let rule = &enc.rules[k];
        let row = |slot: usize| -> Option<[i128; 2]> {
            linear_row(enc, rule.args[slot], &[a, b])?.try_into().ok()
        };
        let m: Matrix = [row(a)?, row(b)?];
        mixes |= m[0][1] != 0 || m[1][0] != 0;
        inverses.insert(k, inverse(&m)?);
    }
    mixes.then_some(([a, b], inverses))
}

/// The integer slots that some rule around the loop changes and that
/// every such rule updates as a combination of those slots only, with no
/// constant (the greatest such set).
fn closed_slots(enc: &Encoding, around: &[usize]) -> Vec<usize> {
    let unchanged = |r: &Rule, k: usize| r.args[k] == enc.terms.var_const(enc.state[k].var);
    let mut slots: Vec<usize> = (0..enc.state.len())
        .filter(|&k| Terms::var_sort(enc.state[k].var) == Sort::Int)
        .filter(|&k| around.iter().any(|&r| !unchanged(&enc.rules[r], k)))
        .collect();
    loop {
        let before = slots.len();
        let current = slots.clone();
        slots.retain(|&k| {
            (around.iter()).all(|&r| linear_row(enc, enc.rules[r].args[k], &current).is_some())
        });
        if slots.len() == before {
            return slots;
        }
    }
}

/// The coefficients of `t = Σ cⱼ·sⱼ` over the slots `over` (integers,
/// no constant); `None` if `t` has another form.
fn linear_row(enc: &Encoding, t: TermId, over: &[usize]) -> Option<Vec<i128>> {
    let (constant, summands) = enc.terms.linear(t);
    if !constant.is_zero() {
        return None;
    }
    let mut row = vec![0i128; over.len()];
    for (c, atom) in summands {
        let j = over.iter().position(|&s| slot_term(enc, s) == atom)?;
        row[j] = c.to_i128()?;
    }
    Some(row)
}

fn slot_term(enc: &Encoding, slot: usize) -> TermId {
    enc.terms.var_const(enc.state[slot].var)
}

/// The integer inverse of a 2×2 matrix whose determinant is ±1.
fn inverse(m: &Matrix) -> Option<Matrix> {
    let det = m[0][0]
        .checked_mul(m[1][1])?
        .checked_sub(m[0][1].checked_mul(m[1][0])?)?;
    if det != 1 && det != -1 {
        return None;
    }
    // det = ±1, so dividing by it is multiplying by it.
    Some([
        [det * m[1][1], -det * m[0][1]],
        [-det * m[1][0], det * m[0][0]],
    ])
}

/// The ghost slots `o` and `M`, added at the end of the state.
struct Ghosts {
    origin: [Var; TRACKED],
    matrix: [[Var; TRACKED]; TRACKED],
}

impl Ghosts {
    fn vars(&self) -> Vec<Var> {
        let rows = self.matrix.iter().flatten();
        self.origin.iter().chain(rows).copied().collect()
    }
}

fn instrument(
    enc: &Encoding,
    header: NodeId,
    tracked: [usize; 2],
    inverses: &HashMap<usize, Matrix>,
) -> Ghosted {
    let mut g = enc.clone();
    let ghosts = add_slots(&mut g, tracked);
    for k in 0..g.rules.len() {
        let args = ghost_args(&mut g, k, header, tracked, &ghosts, inverses.get(&k));
        let rule = &mut g.rules[k];
        if rule.to.is_some() {
            rule.args.extend(args);
        }
        if rule.from.is_some() {
            rule.vars.extend(ghosts.vars());
        }
    }
    let equalities = combinations(&mut g.terms, tracked, &ghosts, &enc.state);
    let candidates = std::iter::once((header, equalities)).collect();
    Ghosted { enc: g, candidates }
}

/// The ghost slots, labelled as microc names so that an invariant over
/// them prints as a condition: `x_at_entry`, and `bezout_x_y` for the
/// coefficient of `y` in `x`'s entry value.
fn add_slots(g: &mut Encoding, tracked: [usize; 2]) -> Ghosts {
    let names: Vec<String> = (tracked.iter())
        .map(|&s| identifier(&g.state[s].label))
        .collect();
    let slot = |g: &mut Encoding, name: String| {
        let var = g.terms.new_var(VarKind::Symbol, name.clone());
        g.terms.var(var);
        g.state.push(StateVar { var, label: name });
        var
    };
    let origin = [0, 1].map(|i| slot(g, format!("{}_at_entry", names[i])));
    let matrix =
        [0, 1].map(|i| [0, 1].map(|j| slot(g, format!("bezout_{}_{}", names[i], names[j]))));
    Ghosts { origin, matrix }
}

/// `label` with every character that cannot be in a microc name
/// replaced by `_`.
fn identifier(label: &str) -> String {
    let name: String = (label.chars())
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    name.trim_matches('_').to_string()
}

/// The ghosts' new values along rule `k`: around the header's loop `o`
/// stays and `M` becomes `M·A⁻¹`; into the header from elsewhere `o` is
/// the tracked slots' new values and `M` the identity; out of the header
/// (or between other vertices) the ghosts stay; a fact elsewhere sets
/// them to 0.
fn ghost_args(
    g: &mut Encoding,
    k: usize,
    header: NodeId,
    tracked: [usize; 2],
    ghosts: &Ghosts,
    inverse: Option<&Matrix>,
) -> Vec<TermId> {
    let (from, to) = (g.rules[k].from, g.rules[k].to);
    let entered: Vec<TermId> = match to == Some(header) {
        true => tracked.iter().map(|&s| g.rules[k].args[s]).collect(),
        false => vec![],
    };
    let t = &mut g.terms;
    if let Some(inv) = inverse {
        let mut args: Vec<TermId> = ghosts.origin.iter().map(|v| t.var(*v)).collect();
        // (M·A⁻¹)ᵢⱼ = Σₗ Mᵢₗ·(A⁻¹)ₗⱼ
        for row in &ghosts.matrix {
            for j in 0..TRACKED {
                let summands = (row.iter().zip(inv))
                    .map(|(m, inv_row)| (BigInt::from(inv_row[j]), t.var(*m)))
                    .collect();
                args.push(t.sum(BigInt::zero(), summands));
            }
        }
        return args;
    }
    if to == Some(header) {
        let mut args = entered;
        for i in 0..TRACKED {
            args.extend((0..TRACKED).map(|j| t.int(i128::from(i == j))));
        }
        return args;
    }
    match from {
        Some(_) => ghosts.vars().into_iter().map(|v| t.var(v)).collect(),
        None => ghosts.vars().iter().map(|_| t.int(0)).collect(),
    }
}

/// `oᵢ = Σⱼ Mᵢⱼ·vⱼ` for each tracked slot `i`.
fn combinations(
    t: &mut Terms,
    tracked: [usize; 2],
    ghosts: &Ghosts,
    state: &[StateVar],
) -> Vec<TermId> {
    (0..TRACKED)
        .map(|i| {
            let mut summands = vec![(BigInt::from(1), t.var(ghosts.origin[i]))];
            for (j, &slot) in tracked.iter().enumerate() {
                let (m, v) = (t.var(ghosts.matrix[i][j]), t.var(state[slot].var));
                summands.push((BigInt::from(-1), t.mul(m, v)));
            }
            let (sum, zero) = (t.sum(BigInt::zero(), summands), t.int(0));
            t.eq(sum, zero)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unimodular_maps_have_integer_inverses() {
        let subtract: Matrix = [[1, -1], [0, 1]];
        assert_eq!(inverse(&subtract), Some([[1, 1], [0, 1]]));
        let swap: Matrix = [[0, 1], [1, 0]];
        assert_eq!(inverse(&swap), Some(swap));
        assert_eq!(inverse(&[[2, 0], [0, 1]]), None);
        assert_eq!(inverse(&[[1, 1], [1, 1]]), None);
    }
}
