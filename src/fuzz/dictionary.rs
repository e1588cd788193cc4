//! The program's own constants, which the tests are made of
//! (docs/fuzzing.md §1): every integer literal with its neighbours and
//! its negation, a few values that often sit on a boundary, and every
//! array literal of integers as a token (a string, mostly).

use crate::syntax::ast::{Expr, ExprKind, Program};
use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive};
use std::collections::BTreeSet;

/// Values that sit on common boundaries (sizes, bytes, counts), tried
/// besides the program's own.
const BOUNDARIES: [i64; 12] = [0, 1, -1, 2, 16, 32, 64, 100, 127, 128, 255, 1000];

/// Larger literals than this give their value, not their neighbours.
const NEIGHBOURS_UP_TO: u64 = 1 << 40;

/// What a test's values are drawn from.
#[derive(Clone, Debug, Default)]
pub struct Dictionary {
    /// Integers, without repeats, in increasing order.
    pub integers: Vec<BigInt>,
    /// The array literals of integers, each without its trailing zeros
    /// (a read past a witness's list gives 0, so the terminator of a
    /// string comes for free).
    pub tokens: Vec<Vec<BigInt>>,
}

impl Dictionary {
    /// The constants of every function of `program`.
    pub fn of(program: &Program) -> Dictionary {
        let mut integers: BTreeSet<BigInt> = BOUNDARIES.iter().map(|&n| BigInt::from(n)).collect();
        let mut tokens: BTreeSet<Vec<BigInt>> = BTreeSet::new();
        for f in &program.functions {
            f.walk_exprs(&mut |e| {
                if let ExprKind::Num(n) = &e.kind {
                    integers.extend(with_neighbours(n));
                }
                if let Some(token) = token(e) {
                    tokens.insert(token);
                }
            });
        }
        Dictionary {
            integers: integers.into_iter().collect(),
            tokens: tokens.into_iter().collect(),
        }
    }
}

/// `n`, `n ± 1` and `-n` (a small `n`'s; a huge one alone).
fn with_neighbours(n: &BigInt) -> Vec<BigInt> {
    let small = n.abs().to_u64().is_some_and(|m| m <= NEIGHBOURS_UP_TO);
    if small {
        vec![n.clone(), n + 1, n - 1, -n]
    } else {
        vec![n.clone()]
    }
}

/// An array literal of integer literals, without its trailing zeros
/// (`None` for other expressions, and for one of zeros only).
fn token(e: &Expr) -> Option<Vec<BigInt>> {
    let ExprKind::Array(items) = &e.kind else {
        return None;
    };
    let mut values: Vec<BigInt> = (items.iter())
        .map(|i| match &i.kind {
            ExprKind::Num(n) => Some(n.clone()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    while values.last().is_some_and(|v| *v == BigInt::from(0)) {
        values.pop();
    }
    (!values.is_empty()).then_some(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> Dictionary {
        let (program, diagnostics) = crate::syntax::parse(text);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        Dictionary::of(&program)
    }

    #[test]
    fn literals_give_their_neighbours_and_strings_their_text() {
        let d = of(
            "main(a, s) { var h; h = [72, 105, 0]; if (a == 42) { assert(s[0] != 7); } return 0; }",
        );
        for n in [42, 41, 43, -42, 7, 6, 8, -7, 72, 105, 0, 1, -1, 16] {
            assert!(
                d.integers.contains(&BigInt::from(n)),
                "{n} in {:?}",
                d.integers
            );
        }
        let hi: Vec<BigInt> = [72, 105].into_iter().map(BigInt::from).collect();
        assert_eq!(d.tokens, vec![hi]);
        assert!(d.integers.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn arrays_of_zeros_or_of_expressions_are_no_tokens() {
        let d = of("main(a) { var h, g; h = [0, 0]; g = [a, 1]; return 0; }");
        assert!(d.tokens.is_empty());
    }
}
