//! Tests drawn from the dictionary (docs/fuzzing.md §2): values for
//! main's parameters, by their depth (an integer, a list, a list of
//! lists), and for its input stream when it reads one.

use super::dictionary::Dictionary;
use crate::interp::{ArgValue, Witness};
use num_bigint::BigInt;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

/// The longest list a test gives (a read past it gives 0).
const MAX_LENGTH: usize = 64;

/// The most rows a list of lists of lists (or deeper) has at each outer
/// level: a test's cells stay in the thousands however deep the lists.
const MAX_OUTER_ROWS: usize = 4;

/// What main takes: each parameter's name and how deep its lists nest
/// (0: an integer), and whether it reads the input stream.
#[derive(Clone, Debug)]
pub struct Shape {
    pub params: Vec<(String, u32)>,
    pub reads_stream: bool,
}

/// An endless, reproducible sequence of tests of one shape.
pub struct Tests<'d> {
    dictionary: &'d Dictionary,
    shape: Shape,
    /// The dictionary's integers that make a list's length.
    lengths: Vec<usize>,
    /// The value being drawn nests three or more lists deep.
    deep: bool,
    rng: ChaCha8Rng,
}

impl<'d> Tests<'d> {
    pub fn new(dictionary: &'d Dictionary, shape: Shape, seed: u64) -> Tests<'d> {
        let lengths = (dictionary.integers.iter())
            .filter_map(|n| usize::try_from(n).ok())
            .filter(|&n| n <= MAX_LENGTH)
            .collect();
        Tests {
            dictionary,
            shape,
            lengths,
            deep: false,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// The next test.
    pub fn next_test(&mut self) -> Witness {
        let params = self.shape.params.clone();
        let args = (params.into_iter())
            .map(|(name, depth)| {
                self.deep = depth >= 3;
                (name, self.value(depth))
            })
            .collect();
        let input = if self.shape.reads_stream {
            let n = self.length();
            (0..n).map(|_| self.integer()).collect()
        } else {
            vec![]
        };
        Witness { args, input }
    }

    /// A value for a parameter whose lists nest `depth` deep.
    fn value(&mut self, depth: u32) -> ArgValue {
        match depth {
            0 => ArgValue::Int(self.integer()),
            1 => ArgValue::List(self.row().into_iter().map(ArgValue::Int).collect()),
            _ => self.rows(depth),
        }
    }

    /// A list of lists: all alike half the time (a matrix filled with one
    /// pattern), else each its own. Only a matrix's rows come in any
    /// number; lists three or more deep have a few at each level above
    /// their rows of integers.
    fn rows(&mut self, depth: u32) -> ArgValue {
        let n = match depth {
            2 if !self.deep => self.length(),
            _ => self.below(MAX_OUTER_ROWS + 1),
        };
        if self.chance(2) {
            let row = self.value(depth - 1);
            ArgValue::List(vec![row; n])
        } else {
            ArgValue::List((0..n).map(|_| self.value(depth - 1)).collect())
        }
    }

    /// A list of integers: tokens one after another, one value repeated,
    /// or values each drawn alone.
    fn row(&mut self) -> Vec<BigInt> {
        match self.below(3) {
            0 if !self.dictionary.tokens.is_empty() => self.tokens(),
            1 => {
                let v = self.integer();
                vec![v; self.length()]
            }
            _ => (0..self.length()).map(|_| self.integer()).collect(),
        }
    }

    /// One to four tokens, one after another (sometimes a value between).
    fn tokens(&mut self) -> Vec<BigInt> {
        let count = 1 + self.below(4);
        let mut row = Vec::new();
        for _ in 0..count {
            let t = self.below(self.dictionary.tokens.len());
            row.extend(self.dictionary.tokens[t].iter().cloned());
            if self.chance(4) {
                row.push(self.integer());
            }
        }
        row.truncate(MAX_LENGTH);
        row
    }

    /// An integer: the dictionary's mostly, else a small one.
    fn integer(&mut self) -> BigInt {
        if self.chance(8) {
            BigInt::from(self.below(201) as i64 - 100)
        } else {
            let i = self.below(self.dictionary.integers.len());
            self.dictionary.integers[i].clone()
        }
    }

    /// A list's length: small half the time, else one of the dictionary's.
    fn length(&mut self) -> usize {
        if self.chance(2) || self.lengths.is_empty() {
            self.below(9)
        } else {
            let i = self.below(self.lengths.len());
            self.lengths[i]
        }
    }

    /// Uniform in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n.max(1) as u64) as usize
    }

    /// True once in `n`.
    fn chance(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> Shape {
        Shape {
            params: vec![
                ("n".into(), 0),
                ("a".into(), 1),
                ("m".into(), 2),
                ("deep".into(), 5),
            ],
            reads_stream: true,
        }
    }

    /// Whether `v` is a value of depth `d` (an empty list fits any list
    /// depth).
    fn fits(v: &ArgValue, d: u32) -> bool {
        match v {
            ArgValue::Int(_) => d == 0,
            ArgValue::List(xs) => d > 0 && xs.iter().all(|x| fits(x, d - 1)),
        }
    }

    /// How many integers `v` holds.
    fn integers(v: &ArgValue) -> usize {
        match v {
            ArgValue::Int(_) => 1,
            ArgValue::List(xs) => xs.iter().map(integers).sum(),
        }
    }

    #[test]
    fn tests_have_the_shape_and_repeat_with_the_seed() {
        let (program, _) =
            crate::syntax::parse("main(n, a, m) { var s; s = [3, 4]; return n + 7; }");
        let d = Dictionary::of(&program);
        let made = |seed| {
            let mut t = Tests::new(&d, shape(), seed);
            (0..200).map(|_| t.next_test()).collect::<Vec<_>>()
        };
        let tests = made(7);
        assert_eq!(tests, made(7));
        assert_ne!(tests, made(8));
        for w in &tests {
            let names: Vec<&str> = w.args.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names, ["n", "a", "m", "deep"]);
            let cells = integers(&w.args[3].1);
            assert!(cells <= MAX_OUTER_ROWS.pow(4) * MAX_LENGTH, "{cells} cells");
            for ((_, v), (_, d)) in w.args.iter().zip(&shape().params) {
                assert!(fits(v, *d), "{v:?} is no value of depth {d}");
            }
        }
        let sevens = tests
            .iter()
            .filter(|w| w.args[0].1 == ArgValue::Int(7.into()));
        assert!(sevens.count() > 0, "the literal 7 is drawn");
        assert!(tests.iter().any(|w| !w.input.is_empty()));
        let token = [ArgValue::Int(3.into()), ArgValue::Int(4.into())];
        let starts_with_token =
            |w: &Witness| matches!(&w.args[1].1, ArgValue::List(xs) if xs.starts_with(&token));
        assert!(
            tests.iter().any(starts_with_token),
            "the token [3, 4] is drawn"
        );
    }
}
