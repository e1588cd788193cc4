//! A test that reached its target, with its values made smaller where the
//! run still reaches it (docs/fuzzing.md §2): a random test's values
//! explain nothing, and a witness is read by people. Each integer (of a
//! parameter, a list, the input stream) is tried at 0, then the
//! dictionary's values nearer 0 are searched by halves for the nearest
//! that still reaches (as if the run needed a bound), within a small
//! budget of replays.

use super::Dictionary;
use crate::interp::{ArgValue, Witness};
use crate::witness::Replay;
use num_bigint::BigInt;
use num_traits::Signed;
use std::time::{Duration, Instant};

/// At most this many replays in all.
const MAX_TRIES: usize = 160;
/// At most this long.
const BUDGET: Duration = Duration::from_millis(3);
/// `w`, which `replay` accepts, with values made smaller while it still
/// accepts them.
pub fn smaller(mut w: Witness, dictionary: &Dictionary, replay: &impl Replay) -> Witness {
    let end = Instant::now() + BUDGET;
    let mut tries = 0;
    // Whether `w` with `v` at `place` is accepted (no more tries: no).
    let mut accepts = |w: &mut Witness, place: &Place, v: &BigInt| {
        if tries >= MAX_TRIES || Instant::now() >= end {
            return false;
        }
        tries += 1;
        let before = std::mem::replace(value_at(w, place), v.clone());
        let ok = replay.tries(w).is_ok();
        if !ok {
            *value_at(w, place) = before;
        }
        ok
    };
    for place in places(&w) {
        let current = value_at(&mut w, &place).clone();
        let zero = BigInt::from(0);
        if current == zero || accepts(&mut w, &place, &zero) {
            continue;
        }
        // `nearer[hi]` (or the current value, at the end) is accepted.
        let nearer = nearer_zero(&current, dictionary);
        let (mut lo, mut hi) = (0, nearer.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if accepts(&mut w, &place, &nearer[mid]) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        *value_at(&mut w, &place) = nearer.get(hi).cloned().unwrap_or(current);
    }
    w
}

/// Where an integer sits in a witness: a parameter and the indices into
/// its lists, or a place in the input stream.
enum Place {
    Arg(usize, Vec<usize>),
    Stream(usize),
}

/// Every integer of `w`: integer parameters first (a smaller bound makes
/// every later replay shorter), then the lists' cells, then the stream.
fn places(w: &Witness) -> Vec<Place> {
    fn walk(v: &ArgValue, arg: usize, path: &mut Vec<usize>, out: &mut Vec<Place>) {
        match v {
            ArgValue::Int(_) => out.push(Place::Arg(arg, path.clone())),
            ArgValue::List(xs) => {
                for (i, x) in xs.iter().enumerate() {
                    path.push(i);
                    walk(x, arg, path, out);
                    path.pop();
                }
            }
        }
    }
    let mut out = Vec::new();
    let (ints, lists): (Vec<_>, Vec<_>) =
        (w.args.iter().enumerate()).partition(|(_, (_, v))| matches!(v, ArgValue::Int(_)));
    for (arg, (_, v)) in ints.into_iter().chain(lists) {
        walk(v, arg, &mut Vec::new(), &mut out);
    }
    out.extend((0..w.input.len()).map(Place::Stream));
    out
}

/// The integer at `place`.
fn value_at<'w>(w: &'w mut Witness, place: &Place) -> &'w mut BigInt {
    match place {
        Place::Stream(i) => &mut w.input[*i],
        Place::Arg(arg, path) => {
            let mut v = &mut w.args[*arg].1;
            for &i in path {
                v = match v {
                    ArgValue::List(xs) => &mut xs[i],
                    ArgValue::Int(_) => unreachable!("a path leads through lists"),
                };
            }
            match v {
                ArgValue::Int(n) => n,
                ArgValue::List(_) => unreachable!("a path ends at an integer"),
            }
        }
    }
}

/// The dictionary's values other than 0 nearer 0 than `v` and of its
/// sign, nearest 0 first.
fn nearer_zero(v: &BigInt, dictionary: &Dictionary) -> Vec<BigInt> {
    let mut nearer: Vec<BigInt> = (dictionary.integers.iter())
        .filter(|c| c.sign() == v.sign() && c.abs() < v.abs())
        .cloned()
        .collect();
    nearer.sort_by_key(|c| c.abs());
    nearer
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Accepts a witness whose `n` is at least 5 and whose list's first
    /// cell is positive.
    struct Needs;

    impl Replay for Needs {
        fn hits(&self, w: &Witness) -> Result<(), String> {
            let n = match &w.args[0].1 {
                ArgValue::Int(n) => n.clone(),
                ArgValue::List(_) => return Err("a list".into()),
            };
            let positive = match &w.args[1].1 {
                ArgValue::List(xs) => {
                    matches!(xs.first(), Some(ArgValue::Int(x)) if x.is_positive())
                }
                ArgValue::Int(_) => false,
            };
            (n >= BigInt::from(5) && positive)
                .then_some(())
                .ok_or("missed".into())
        }

        fn hits_reading(&self, w: &Witness) -> (Result<(), String>, crate::interp::InputReads) {
            (self.hits(w), Default::default())
        }
    }

    #[test]
    fn values_shrink_to_the_smallest_that_still_reach() {
        let dictionary = Dictionary {
            integers: [-1, 0, 1, 2, 5, 6, 100]
                .into_iter()
                .map(BigInt::from)
                .collect(),
            tokens: vec![],
        };
        let int = |n: i64| ArgValue::Int(BigInt::from(n));
        let w = Witness {
            args: vec![
                ("n".into(), int(100)),
                ("a".into(), ArgValue::List(vec![int(77), int(-40)])),
            ],
            input: vec![BigInt::from(9)],
        };
        let small = smaller(w, &dictionary, &Needs);
        assert_eq!(small.args[0].1, int(5));
        assert_eq!(small.args[1].1, ArgValue::List(vec![int(1), int(0)]));
        assert_eq!(small.input, vec![BigInt::from(0)]);
    }
}
