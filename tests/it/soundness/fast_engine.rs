//! The fast execution engine against the reference interpreter, on the
//! soundness generator's programs and the thesis generator's: outputs,
//! return values, errors and their places, failed assumes, step and depth
//! limits (with small limits, so that runs hit them), steps taken and the
//! witness cells read must all be the same. A run the fast engine hands
//! back is the reference's by definition; the tests also require that it
//! hands back few, so that they test something.
//!
//! Long run: `FAST_PROGRAMS=100000 cargo test --release --test it
//! fast_engine_long -- --ignored` (and `SOUNDNESS_SEED`).

use super::generator::{Knobs, Rng, program, witness};
use super::seed_or;
use crate::common::env_or;
use apc::generator::{THESIS_SETS, generate_source};
use apc::interp::{self, Limits, Witness};
use apc::syntax::ast::Program;
use num_bigint::BigInt;

#[derive(Default, Debug)]
struct Tally {
    runs: usize,
    handed_back: usize,
    disagreements: Vec<String>,
}

impl Tally {
    /// Runs `w` on both engines and compares.
    fn compare(&mut self, program: &Program, w: &Witness, limits: Limits, src: &str) {
        self.runs += 1;
        let fast = interp::run_fast(program, w, limits);
        let reference = interp::run_reference(program, w, limits);
        let fast = match fast {
            Ok(r) => r,
            Err(_) => {
                self.handed_back += 1;
                return;
            }
        };
        let same = match &reference {
            Ok(r) => *r == fast,
            Err(_) => false,
        };
        if !same {
            self.disagree(
                format!("fast {fast:?}\nreference {reference:?}"),
                w,
                limits,
                src,
            );
            return;
        }
        self.compare_reads(program, w, limits, src);
    }

    /// The witness cells read, which a model's judge asks the solver for.
    fn compare_reads(&mut self, program: &Program, w: &Witness, limits: Limits, src: &str) {
        let fast = interp::run_reading(program, w, limits).map(|(_, r)| r);
        let reference = interp::run_reading_reference(program, w, limits).map(|(_, r)| r);
        let key = |r: &interp::InputReads| (r.cells.clone(), r.stream, r.overflow);
        match (fast, reference) {
            (Ok(f), Ok(r)) if key(&f) == key(&r) => {}
            (f, r) => self.disagree(
                format!("reads: fast {f:?}\nreference {r:?}"),
                w,
                limits,
                src,
            ),
        }
    }

    fn disagree(&mut self, what: String, w: &Witness, limits: Limits, src: &str) {
        let what = format!("{what}\nwitness {w:?} limits {limits:?}\n{src}");
        eprintln!("DISAGREEMENT: {what}");
        self.disagreements.push(what);
    }

    fn assert_sound(&self, min_fast_share: f64) {
        assert!(
            self.disagreements.is_empty(),
            "{} disagreements of {} runs; the first:\n{}",
            self.disagreements.len(),
            self.runs,
            self.disagreements[0]
        );
        let fast = (self.runs - self.handed_back) as f64 / self.runs.max(1) as f64;
        assert!(
            fast >= min_fast_share,
            "the fast engine finished only {:.0}% of {} runs itself",
            fast * 100.0,
            self.runs
        );
    }
}

/// Limits that generated runs hit now and then.
fn limits(r: &mut Rng) -> Limits {
    Limits {
        max_steps: [20_000, 20_000, 500, 60, 7][r.below(5) as usize],
        max_call_depth: [100, 100, 3][r.below(3) as usize],
    }
}

fn soundness_programs(seed: u64, programs: usize, tally: &mut Tally) {
    let mut r = Rng(seed);
    let knobs = Knobs::defaults();
    for _ in 0..programs {
        let src = program(&mut r, &knobs);
        let (ast, _) = apc::syntax::parse(&src);
        for _ in 0..4 {
            let w = witness(&mut r);
            let limits = limits(&mut r);
            tally.compare(&ast, &w, limits, &src);
        }
    }
}

fn thesis_programs(seed: u64, per_set: u64, tally: &mut Tally) {
    let mut r = Rng(seed);
    for set in &THESIS_SETS {
        for index in 0..per_set {
            let src = generate_source(&set.params(), seed, index);
            let (ast, _) = apc::syntax::parse(&src);
            for _ in 0..2 {
                let w = Witness {
                    args: vec![],
                    input: (0..r.below(24))
                        .map(|_| BigInt::from(r.int(-4, 12)))
                        .collect(),
                };
                let limits = limits(&mut r);
                tally.compare(&ast, &w, limits, &src);
            }
        }
    }
}

#[test]
fn the_fast_engine_agrees_with_the_reference() {
    let mut tally = Tally::default();
    soundness_programs(seed_or(0xfa57), 250, &mut tally);
    thesis_programs(seed_or(0xfa57), 6, &mut tally);
    eprintln!("{tally:?}");
    tally.assert_sound(0.8);
}

#[test]
#[ignore]
fn fast_engine_long() {
    let programs = env_or("FAST_PROGRAMS", 100_000usize);
    let mut tally = Tally::default();
    let started = std::time::Instant::now();
    soundness_programs(seed_or(0xfa571), programs, &mut tally);
    thesis_programs(seed_or(0xfa571), (programs / 180).max(1) as u64, &mut tally);
    eprintln!(
        "{} runs, {} handed back, {} disagreements, {:.0} s",
        tally.runs,
        tally.handed_back,
        tally.disagreements.len(),
        started.elapsed().as_secs_f64()
    );
    tally.assert_sound(0.8);
}
