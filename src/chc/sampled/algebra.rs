//! The equalities over monomials that hold on every sample, by exact
//! linear algebra over the integers (Sharma et al., ESOP 2013;
//! docs/horn-clauses.md, "Invariants from runs"): each sample is a row of
//! its monomials' values, and every vector of the matrix's null space is
//! an equality `Σ cₘ·m = 0` that all of them satisfy. Integer rows, made
//! primitive by their gcd after each elimination step: no rational and
//! no float is ever rounded.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

/// A monomial: how many times each variable (by position) divides it;
/// the empty one is the constant 1.
pub type Monomial = Vec<u8>;

/// The monomials over `vars` variables of degree at most `degree`, the
/// constant first, in graded order.
pub fn monomials(vars: usize, degree: u8) -> Vec<Monomial> {
    let mut out = vec![vec![0; vars]];
    let mut last: Vec<Monomial> = vec![vec![0; vars]];
    for _ in 0..degree {
        let mut next = Vec::new();
        for m in &last {
            // Multiply by variables no earlier than m's last: each
            // monomial is made once.
            let from = m.iter().rposition(|e| *e > 0).unwrap_or(0);
            for v in from..vars {
                let mut grown = m.clone();
                grown[v] += 1;
                next.push(grown);
            }
        }
        out.extend(next.iter().cloned());
        last = next;
    }
    out
}

/// How many monomials of degree at most `degree` there are over `vars`
/// variables: C(vars + degree, degree).
pub fn monomial_count(vars: usize, degree: u8) -> usize {
    let mut count: usize = 1;
    for k in 1..=degree as usize {
        count = count * (vars + k) / k;
    }
    count
}

/// `m`'s value at `point`.
pub fn value(m: &Monomial, point: &[i128]) -> BigInt {
    let mut v = BigInt::one();
    for (x, e) in point.iter().zip(m) {
        for _ in 0..*e {
            v *= *x;
        }
    }
    v
}

/// A basis of the integer vectors `c` with `Σ cₘ·m(p) = 0` at every one
/// of `points`, each vector primitive (its entries' gcd 1).
pub fn null_space(monomials: &[Monomial], points: &[Vec<i128>]) -> Vec<Vec<BigInt>> {
    let rows: Vec<Vec<BigInt>> = (points.iter())
        .map(|p| monomials.iter().map(|m| value(m, p)).collect())
        .collect();
    let (reduced, pivots) = reduced_echelon(rows, monomials.len());
    let free = (0..monomials.len()).filter(|c| !pivots.contains(c));
    free.map(|f| kernel_vector(&reduced, &pivots, f, monomials.len()))
        .collect()
}

/// The equalities over monomials of degree at most `degree` that hold at
/// every one of `points`, lowest degree first, without those that follow
/// from lower ones: at each degree, a vector of the null space is kept
/// only if it is not a combination of the equalities kept so far, each
/// times every monomial that keeps it within the degree (`s = i·i` makes
/// `s·i = i·i·i` no new candidate). Fewer candidates, fewer nonlinear
/// checks. The vectors range over `monomials(vars, degree)`.
pub fn equalities(vars: usize, degree: u8, points: &[Vec<i128>]) -> Vec<Vec<BigInt>> {
    let all = monomials(vars, degree);
    let index: std::collections::HashMap<&Monomial, usize> =
        all.iter().enumerate().map(|(k, m)| (m, k)).collect();
    let mut kept: Vec<Vec<BigInt>> = Vec::new();
    for d in 1..=degree {
        let these = monomials(vars, d);
        let pad = |mut v: Vec<BigInt>| {
            v.resize(all.len(), BigInt::zero());
            v
        };
        let mut implied: Vec<Vec<BigInt>> = (kept.iter())
            .flat_map(|e| multiples(e, &all, &index, d))
            .collect();
        for v in null_space(&these, points).into_iter().map(pad) {
            let rank = reduced_echelon(implied.clone(), all.len()).1.len();
            implied.push(v.clone());
            if reduced_echelon(implied.clone(), all.len()).1.len() > rank {
                kept.push(v);
            }
        }
    }
    kept
}

/// `e` times each monomial that keeps it within degree `d` (`e` itself
/// included), over `all`.
fn multiples(
    e: &[BigInt],
    all: &[Monomial],
    index: &std::collections::HashMap<&Monomial, usize>,
    d: u8,
) -> Vec<Vec<BigInt>> {
    let degree = |m: &Monomial| m.iter().map(|x| *x as u32).sum::<u32>();
    let top = (e.iter().zip(all))
        .filter(|(c, _)| !c.is_zero())
        .map(|(_, m)| degree(m))
        .max()
        .unwrap_or(0);
    (all.iter())
        .filter(|m| degree(m) + top <= d as u32)
        .map(|m| {
            let mut out = vec![BigInt::zero(); all.len()];
            for (c, term) in e.iter().zip(all).filter(|(c, _)| !c.is_zero()) {
                let product: Monomial = term.iter().zip(m).map(|(a, b)| a + b).collect();
                out[index[&product]] += c;
            }
            out
        })
        .collect()
}

/// The rows in reduced echelon form over the integers (each pivot the only
/// non-zero entry of its column), and the pivots' columns, row by row.
fn reduced_echelon(mut rows: Vec<Vec<BigInt>>, columns: usize) -> (Vec<Vec<BigInt>>, Vec<usize>) {
    let mut pivots = Vec::new();
    let mut r = 0;
    for c in 0..columns {
        let Some(p) = (r..rows.len()).find(|&i| !rows[i][c].is_zero()) else {
            continue;
        };
        rows.swap(r, p);
        let pivot_row = rows[r].clone();
        for (i, row) in rows.iter_mut().enumerate() {
            if i != r && !row[c].is_zero() {
                eliminate(row, &pivot_row, c);
            }
        }
        pivots.push(c);
        r += 1;
        if r == rows.len() {
            break;
        }
    }
    rows.truncate(r);
    (rows, pivots)
}

/// `row := pivot[c]·row − row[c]·pivot`, made primitive: zero at `c`.
fn eliminate(row: &mut [BigInt], pivot: &[BigInt], c: usize) {
    let (a, b) = (pivot[c].clone(), row[c].clone());
    for (x, y) in row.iter_mut().zip(pivot) {
        *x = &a * &*x - &b * y;
    }
    make_primitive(row);
}

/// The null-space vector with 1 (scaled) at free column `f`: each pivot
/// variable solved from its row.
fn kernel_vector(rows: &[Vec<BigInt>], pivots: &[usize], f: usize, columns: usize) -> Vec<BigInt> {
    let scale = (rows.iter().zip(pivots)).fold(BigInt::one(), |l, (row, &c)| l.lcm(&row[c]));
    let mut v = vec![BigInt::zero(); columns];
    v[f] = scale.clone();
    for (row, &c) in rows.iter().zip(pivots) {
        // row[c]·x_c + row[f]·x_f = 0
        v[c] = -(&row[f] * &scale) / &row[c];
    }
    make_primitive(&mut v);
    v
}

/// Divides the entries by their gcd, and makes the first non-zero one
/// positive.
fn make_primitive(v: &mut [BigInt]) {
    let g = v.iter().fold(BigInt::zero(), |g, x| g.gcd(x));
    if g.is_zero() {
        return;
    }
    let negative = v
        .iter()
        .find(|x| !x.is_zero())
        .is_some_and(|x| x.is_negative());
    let g = if negative { -g } else { g };
    for x in v.iter_mut() {
        *x = &*x / &g;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monomials_are_each_made_once() {
        let ms = monomials(3, 3);
        assert_eq!(ms.len(), monomial_count(3, 3));
        let distinct: std::collections::BTreeSet<_> = ms.iter().collect();
        assert_eq!(distinct.len(), 20);
        assert_eq!(monomial_count(2, 2), 6);
    }

    #[test]
    fn the_null_space_of_squares_is_the_square_law() {
        // States (i, s) of `s = s + 2i + 1; i = i + 1` from (0, 0).
        let points: Vec<Vec<i128>> = (0..6).map(|i| vec![i, i * i]).collect();
        let ms = monomials(2, 2);
        // 1, i, s, i², i·s, s²: six points on s = i² span all but one
        // direction.
        assert_eq!(ms[2], vec![0, 1]);
        assert_eq!(ms[3], vec![2, 0]);
        let square_law: Vec<BigInt> = [0, 0, 1, -1, 0, 0].map(BigInt::from).into();
        assert_eq!(null_space(&ms, &points), vec![square_law]);
    }

    #[test]
    fn equalities_that_follow_from_lower_ones_are_not_candidates() {
        // (i, s) on s = i²: at degree 3, i·s = i³ and s² = ... follow from
        // s = i² times a monomial; only s = i² itself is kept.
        let points: Vec<Vec<i128>> = (0..12).map(|i| vec![i, i * i]).collect();
        let kept = equalities(2, 3, &points);
        let square_law: Vec<BigInt> = [0, 0, 1, -1, 0, 0, 0, 0, 0, 0].map(BigInt::from).into();
        assert_eq!(kept, vec![square_law]);
    }

    #[test]
    fn no_equality_holds_on_points_in_general_position() {
        let points: Vec<Vec<i128>> = vec![vec![0, 0], vec![1, 0], vec![0, 1], vec![2, 3]];
        assert!(null_space(&monomials(2, 1), &points).is_empty());
    }
}
