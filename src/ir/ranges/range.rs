//! The integer domain of the value ranges: a few exact values, or an
//! interval. A handful of values keeps what an interval loses (`x ∈ {-1,
//! 5, 2, 7}` is never 0; `[-1, 7]` may be), and the interval takes over
//! once there are more. A range is small and `Copy`: every vertex's state
//! holds one per variable.

use super::super::CmpOp;
use std::fmt;

/// The most values a set holds before it becomes an interval.
pub(super) const MAX_SET: usize = 6;
/// Bounds at or beyond ±CAP count as infinite (an upper bound) or are
/// pulled back to ±CAP (a lower bound), so that no arithmetic on bounds
/// overflows into a wrong finite value: a weaker bound is always sound.
/// A set holds 32-bit values only, so that a product of two fits.
const CAP: i64 = 1 << 62;
const NEG_INF: i64 = i64::MIN;
const POS_INF: i64 = i64::MAX;

/// A set of integers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Range {
    /// Exactly these values: the first `len` of `xs`, sorted, distinct.
    Set { len: u8, xs: [i32; MAX_SET] },
    /// Every integer from `lo` to `hi` (non-empty); `i64::MIN` and
    /// `i64::MAX` stand for −∞ and +∞.
    Span { lo: i64, hi: i64 },
}

impl Range {
    pub(super) const EMPTY: Range = Range::Set {
        len: 0,
        xs: [0; MAX_SET],
    };
    pub(super) const ANY: Range = Range::Span {
        lo: NEG_INF,
        hi: POS_INF,
    };

    pub(super) fn constant(x: i64) -> Range {
        Range::of_values(&[x])
    }

    /// `{0, 1}` as `may_be_one`, `may_be_zero` say: a comparison's value.
    pub(super) fn truth(may_be_one: bool, may_be_zero: bool) -> Range {
        let values: Vec<i64> = [(may_be_zero, 0), (may_be_one, 1)]
            .iter()
            .filter_map(|&(m, x)| m.then_some(x))
            .collect();
        Range::of_values(&values)
    }

    /// The values given, as a set while they are few and small, else their
    /// interval.
    pub(super) fn of_values(values: &[i64]) -> Range {
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let small = sorted.iter().all(|&x| i32::try_from(x).is_ok());
        match (sorted.first(), sorted.last()) {
            (Some(&lo), Some(&hi)) if sorted.len() > MAX_SET || !small => Range::span(lo, hi),
            _ => {
                let mut xs = [0; MAX_SET];
                for (slot, x) in xs.iter_mut().zip(&sorted) {
                    *slot = *x as i32;
                }
                Range::Set {
                    len: sorted.len() as u8,
                    xs,
                }
            }
        }
    }

    /// The interval from `lo` to `hi`, bounds beyond ±CAP weakened.
    pub(super) fn span(lo: i64, hi: i64) -> Range {
        let lo = match lo {
            _ if lo <= -CAP => NEG_INF,
            _ if lo >= CAP => CAP,
            _ => lo,
        };
        let hi = match hi {
            _ if hi >= CAP => POS_INF,
            _ if hi <= -CAP => -CAP,
            _ => hi,
        };
        match lo <= hi {
            true => Range::Span { lo, hi },
            false => Range::EMPTY,
        }
    }

    /// The values, if they are a set.
    pub(super) fn values(&self) -> Option<Vec<i64>> {
        self.elements()
            .map(|v| v.iter().map(|&x| x as i64).collect())
    }

    fn elements(&self) -> Option<&[i32]> {
        match self {
            Range::Set { len, xs } => Some(&xs[..*len as usize]),
            Range::Span { .. } => None,
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.elements().is_some_and(|v| v.is_empty())
    }

    /// The least and the greatest value (±∞ as `i64::MIN`/`MAX`).
    pub(super) fn bounds(&self) -> Option<(i64, i64)> {
        match self {
            Range::Span { lo, hi } => Some((*lo, *hi)),
            Range::Set { .. } => {
                let v = self.elements()?;
                Some((*v.first()? as i64, *v.last()? as i64))
            }
        }
    }

    pub(super) fn contains(&self, x: i64) -> bool {
        match self {
            Range::Span { lo, hi } => *lo <= x && x <= *hi,
            Range::Set { .. } => {
                i32::try_from(x).is_ok_and(|x| self.elements().is_some_and(|v| v.contains(&x)))
            }
        }
    }

    /// The only value, if there is exactly one.
    pub(super) fn single(&self) -> Option<i64> {
        match self.bounds()? {
            (lo, hi) if lo == hi => Some(lo),
            _ => None,
        }
    }

    pub(super) fn is_subset(&self, other: &Range) -> bool {
        match (self.elements(), other.elements()) {
            (Some(v), _) => v.iter().all(|&x| other.contains(x as i64)),
            (None, Some(_)) => false,
            (None, None) => {
                let ((a, b), (c, d)) = (self.bounds().unwrap(), other.bounds().unwrap());
                c <= a && b <= d
            }
        }
    }

    pub(super) fn join(&self, other: &Range) -> Range {
        match (self.values(), other.values()) {
            (Some(a), Some(b)) => Range::of_values(&[a, b].concat()),
            _ => match (self.bounds(), other.bounds()) {
                (None, _) => *other,
                (_, None) => *self,
                (Some((a, b)), Some((c, d))) => Range::span(a.min(c), b.max(d)),
            },
        }
    }

    /// The join, with a bound that moved pushed out to the next of
    /// `thresholds` (sorted; the program's constants), or to infinity past
    /// them: what a loop header keeps after a few visits, so that the
    /// fixpoint is reached (a counter that stops at 7 stays below 7).
    pub(super) fn widen(&self, newer: &Range, thresholds: &[i64]) -> Range {
        let joined = self.join(newer);
        if joined.is_subset(self) || joined.elements().is_some() {
            return joined;
        }
        let (Some((a, b)), Some((c, d))) = (self.bounds(), joined.bounds()) else {
            return joined;
        };
        let lo = match c < a {
            true => thresholds
                .iter()
                .rev()
                .find(|&&t| t <= c)
                .copied()
                .unwrap_or(NEG_INF),
            false => c,
        };
        let hi = match d > b {
            true => thresholds
                .iter()
                .find(|&&t| t >= d)
                .copied()
                .unwrap_or(POS_INF),
            false => d,
        };
        Range::span(lo, hi)
    }

    /// The values within `lo..=hi`.
    pub(super) fn clamp(&self, lo: i64, hi: i64) -> Range {
        match self.values() {
            Some(v) => Range::of_values(
                &v.iter()
                    .copied()
                    .filter(|x| lo <= *x && *x <= hi)
                    .collect::<Vec<_>>(),
            ),
            None => {
                let (a, b) = self.bounds().unwrap();
                Range::span(a.max(lo), b.min(hi))
            }
        }
    }

    pub(super) fn meet(&self, other: &Range) -> Range {
        match (self.values(), other.values()) {
            (Some(v), _) => filtered(&v, |x| other.contains(x)),
            (None, Some(w)) => filtered(&w, |x| self.contains(x)),
            (None, None) => {
                let (c, d) = other.bounds().unwrap();
                self.clamp(c, d)
            }
        }
    }

    /// Whether `x op y` for some x here and y in `other`.
    pub(super) fn may(&self, op: CmpOp, other: &Range) -> bool {
        let (Some((a, b)), Some((c, d))) = (self.bounds(), other.bounds()) else {
            return false;
        };
        match op {
            CmpOp::Lt => a < d,
            CmpOp::Le => a <= d,
            CmpOp::Gt => b > c,
            CmpOp::Ge => b >= c,
            CmpOp::Eq => !self.meet(other).is_empty(),
            CmpOp::Ne => !(self.single().is_some() && self.single() == other.single()),
        }
    }

    /// The values x here with `x op y` for some y in `other`.
    pub(super) fn such_that(&self, op: CmpOp, other: &Range) -> Range {
        let Some((c, d)) = other.bounds() else {
            return Range::EMPTY;
        };
        match op {
            CmpOp::Lt => self.clamp(NEG_INF, below(d)),
            CmpOp::Le => self.clamp(NEG_INF, d),
            CmpOp::Gt => self.clamp(above(c), POS_INF),
            CmpOp::Ge => self.clamp(c, POS_INF),
            CmpOp::Eq => self.meet(other),
            CmpOp::Ne => match other.single() {
                Some(y) => self.without(y),
                None => *self,
            },
        }
    }

    /// The values here but `y` (an interval loses only an end).
    fn without(&self, y: i64) -> Range {
        match self.values() {
            Some(v) => filtered(&v, |x| x != y),
            None => match self.bounds().unwrap() {
                (lo, hi) if lo == y => Range::span(above(lo), hi),
                (lo, hi) if hi == y => Range::span(lo, below(hi)),
                _ => *self,
            },
        }
    }

    pub(super) fn neg(&self) -> Range {
        match self.values() {
            Some(v) => Range::of_values(&v.iter().map(|x| -x).collect::<Vec<_>>()),
            None => {
                let (lo, hi) = self.bounds().unwrap();
                Range::span(hi.saturating_neg(), lo.saturating_neg())
            }
        }
    }

    /// `!x`: 1 where x is 0, else 0.
    pub(super) fn not(&self) -> Range {
        Range::truth(self.contains(0), !self.without(0).is_empty())
    }

    pub(super) fn add(&self, other: &Range) -> Range {
        self.combine(
            other,
            |x, y| Some(x + y),
            |(a, b), (c, d)| Range::span(a.saturating_add(c), b.saturating_add(d)),
        )
    }

    pub(super) fn sub(&self, other: &Range) -> Range {
        self.add(&other.neg())
    }

    pub(super) fn mul(&self, other: &Range) -> Range {
        self.combine(
            other,
            |x, y| Some(x * y),
            |(a, b), (c, d)| {
                let corners = [
                    a.saturating_mul(c),
                    a.saturating_mul(d),
                    b.saturating_mul(c),
                    b.saturating_mul(d),
                ];
                Range::span(
                    *corners.iter().min().unwrap(),
                    *corners.iter().max().unwrap(),
                )
            },
        )
    }

    /// Truncating division; a zero divisor has no value (the run stopped
    /// at the division's check).
    pub(super) fn div(&self, other: &Range) -> Range {
        let divisor = other.without(0);
        self.combine(
            &divisor,
            |x, y| (y != 0).then(|| x / y),
            |(a, b), (c, d)| {
                if c <= 0 && 0 <= d {
                    // The divisor spans 0 (0 itself excluded): |x / y| ≤ |x|.
                    let m = a.saturating_abs().max(b.saturating_abs());
                    return Range::span(m.saturating_neg(), m);
                }
                // i64::MIN / -1 is the only quotient that overflows: +∞.
                let q = |x: i64, y: i64| x.checked_div(y).unwrap_or(POS_INF);
                let corners = [q(a, c), q(a, d), q(b, c), q(b, d)];
                Range::span(
                    *corners.iter().min().unwrap(),
                    *corners.iter().max().unwrap(),
                )
            },
        )
    }

    /// A binary operation: value by value on two small sets (`exact`;
    /// `None` for no value), else on the intervals' bounds (`bounded`).
    fn combine(
        &self,
        other: &Range,
        exact: impl Fn(i64, i64) -> Option<i64>,
        bounded: impl Fn((i64, i64), (i64, i64)) -> Range,
    ) -> Range {
        let (Some(x), Some(y)) = (self.bounds(), other.bounds()) else {
            return Range::EMPTY;
        };
        if let (Some(v), Some(w)) = (self.values(), other.values()) {
            let all: Vec<i64> = v
                .iter()
                .flat_map(|a| w.iter().filter_map(|b| exact(*a, *b)))
                .collect();
            return Range::of_values(&all);
        }
        bounded(x, y)
    }
}

fn filtered(values: &[i64], keep: impl Fn(i64) -> bool) -> Range {
    Range::of_values(
        &values
            .iter()
            .copied()
            .filter(|x| keep(*x))
            .collect::<Vec<_>>(),
    )
}

/// `x - 1`, ±∞ kept.
fn below(x: i64) -> i64 {
    match x {
        POS_INF | NEG_INF => x,
        _ => x - 1,
    }
}

/// `x + 1`, ±∞ kept.
fn above(x: i64) -> i64 {
    match x {
        POS_INF | NEG_INF => x,
        _ => x + 1,
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bound = |x: i64| match x {
            NEG_INF => "-∞".to_string(),
            POS_INF => "+∞".to_string(),
            _ => x.to_string(),
        };
        match (self.values(), self.bounds()) {
            (Some(v), _) => {
                let v: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                write!(f, "{{{}}}", v.join(", "))
            }
            (None, Some((lo, hi))) => write!(f, "[{}, {}]", bound(lo), bound(hi)),
            (None, None) => write!(f, "{{}}"),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Every operation keeps every value it should: for ranges around
    //! random values, the concrete result is in the abstract one.
    use super::*;
    use proptest::prelude::*;

    /// A range holding `x`: a set of it and a few others, or an interval
    /// around it (unbounded on a side now and then).
    fn around(x: i64) -> impl Strategy<Value = Range> {
        let others = proptest::collection::vec(-20i64..20, 0..MAX_SET + 2);
        let set = others.prop_map(move |mut v| {
            v.push(x);
            Range::of_values(&v)
        });
        let span = (0i64..50, 0i64..50, any::<bool>(), any::<bool>()).prop_map(
            move |(below, above, open_lo, open_hi)| {
                let lo = if open_lo {
                    NEG_INF
                } else {
                    x.saturating_sub(below)
                };
                let hi = if open_hi {
                    POS_INF
                } else {
                    x.saturating_add(above)
                };
                Range::span(lo, hi)
            },
        );
        prop_oneof![set, span]
    }

    /// Small values, and values at the edges of the sets and the bounds.
    fn value() -> impl Strategy<Value = i64> {
        let edges = [
            i32::MAX as i64,
            i32::MIN as i64,
            i32::MAX as i64 + 1,
            CAP - 1,
            -CAP + 1,
            CAP + 5,
        ];
        prop_oneof![-30i64..30, proptest::sample::select(edges.to_vec())]
    }

    /// (x, a range holding x, y, a range holding y)
    fn pair() -> impl Strategy<Value = (i64, Range, i64, Range)> {
        (value(), value()).prop_flat_map(|(x, y)| (Just(x), around(x), Just(y), around(y)))
    }

    /// Whether `r` holds the exact value `v` (beyond 64 bits: whether `r`
    /// is unbounded on that side).
    fn keeps(r: Range, v: i128) -> bool {
        match (i64::try_from(v), r.bounds()) {
            (Ok(x), _) => r.contains(x),
            (Err(_), Some((_, hi))) if v > 0 => hi == POS_INF,
            (Err(_), Some((lo, _))) => lo == NEG_INF,
            (Err(_), None) => false,
        }
    }

    const OPS: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];

    proptest! {
        #[test]
        fn arithmetic_keeps_the_concrete_result((x, a, y, b) in pair()) {
            prop_assert!(a.contains(x) && b.contains(y), "{a} {b}");
            let (x2, y2) = (x as i128, y as i128);
            prop_assert!(keeps(a.add(&b), x2 + y2), "{a} + {b}");
            prop_assert!(keeps(a.sub(&b), x2 - y2), "{a} - {b}");
            prop_assert!(keeps(a.mul(&b), x2 * y2), "{a} * {b}");
            if y != 0 {
                prop_assert!(keeps(a.div(&b), x2 / y2), "{a} / {b}");
            }
            prop_assert!(keeps(a.neg(), -x2));
            prop_assert!(a.not().contains((x == 0) as i64));
            prop_assert!(a.join(&b).contains(x) && a.join(&b).contains(y));
            prop_assert!(a.widen(&b, &[-3, 0, 7]).contains(y));
        }

        #[test]
        fn comparisons_keep_the_concrete_pairs((x, a, y, b) in pair()) {
            for op in OPS {
                let holds = op.holds(x.cmp(&y));
                prop_assert!(Range::truth(a.may(op, &b), a.may(op.negate(), &b)).contains(holds as i64));
                if holds {
                    prop_assert!(a.may(op, &b), "{a} {op:?} {b}");
                    prop_assert!(a.such_that(op, &b).contains(x), "{a} {op:?} {b}");
                }
            }
        }
    }
}
