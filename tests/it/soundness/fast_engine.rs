//! The fast execution engine against the reference interpreter, on the
//! soundness generator's programs and the thesis generator's: outputs,
//! return values, errors and their places, failed assumes, step and depth
//! limits (with small limits, so that runs hit them), steps taken and the
//! witness cells read must all be the same. A run the fast engine hands
//! back is the reference's by definition; the tests also require that it
//! hands back few, so that they test something. The native tier is run
//! from the first step on every twelfth program of up to 1,200 characters
//! (every program in the long run), whatever the run's length, and
//! compared the same way.
//!
//! Long run: `FAST_PROGRAMS=100000 cargo test --release --test it
//! fast_engine_long -- --ignored` (and `SOUNDNESS_SEED`, and
//! `FAST_NATIVE_EVERY`).

use super::generator::{Knobs, Rng, program, witness};
use super::seed_or;
use crate::common::env_or;
use apc::generator::{THESIS_SETS, generate_source};
use apc::interp::{self, Limits, Prepared, Witness};
use apc::syntax::ast::Program;
use num_bigint::BigInt;

#[derive(Default, Debug)]
struct Tally {
    runs: usize,
    handed_back: usize,
    /// Every how many programs the native tier, run from the first step,
    /// is compared too (0: never). Compiling with Cranelift costs about
    /// 0.1–0.25 ms per bytecode operation in a release build, and ten
    /// times that in a debug one.
    native_every: usize,
    /// Programs whose source is longer are not compiled natively.
    native_max_source: usize,
    programs: usize,
    native_runs: usize,
    /// Runs the native tier handed back.
    native_handed_back: usize,
    disagreements: Vec<String>,
}

impl Tally {
    /// Runs `w` on both engines and compares.
    fn compare(&mut self, prepared: &Prepared, w: &Witness, limits: Limits, src: &str) {
        self.runs += 1;
        let program = prepared.program();
        let reference = interp::run_reference(program, w, limits);
        let sampled = self.native_every != 0 && self.programs.is_multiple_of(self.native_every);
        if sampled && src.len() <= self.native_max_source {
            self.native_runs += 1;
            match prepared.run_native(w, limits) {
                Ok(native) if reference.as_ref().is_ok_and(|r| *r == native) => {}
                Ok(native) => self.disagree(
                    format!("native {native:?}\nreference {reference:?}"),
                    w,
                    limits,
                    src,
                ),
                Err(_) => self.native_handed_back += 1,
            }
        }
        let fast = interp::run_fast(program, w, limits);
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
        let native_runs = (self.native_every != 0).then_some(self.native_runs);
        for (engine, runs, handed_back) in [
            ("fast engine", Some(self.runs), self.handed_back),
            ("native tier", native_runs, self.native_handed_back),
        ] {
            let Some(runs) = runs else { continue };
            let share = (runs - handed_back) as f64 / runs.max(1) as f64;
            assert!(
                share >= min_fast_share,
                "the {engine} finished only {:.0}% of {runs} runs itself",
                share * 100.0,
            );
        }
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
        let prepared = Prepared::new(&ast);
        tally.programs += 1;
        for _ in 0..4 {
            let w = witness(&mut r);
            let limits = limits(&mut r);
            tally.compare(&prepared, &w, limits, &src);
        }
    }
}

fn thesis_programs(seed: u64, per_set: u64, tally: &mut Tally) {
    let mut r = Rng(seed);
    for set in &THESIS_SETS {
        for index in 0..per_set {
            let src = generate_source(&set.params(), seed, index);
            let (ast, _) = apc::syntax::parse(&src);
            let prepared = Prepared::new(&ast);
            tally.programs += 1;
            for _ in 0..2 {
                let w = Witness {
                    args: vec![],
                    input: (0..r.below(24))
                        .map(|_| BigInt::from(r.int(-4, 12)))
                        .collect(),
                };
                let limits = limits(&mut r);
                tally.compare(&prepared, &w, limits, &src);
            }
        }
    }
}

#[test]
fn the_fast_engine_agrees_with_the_reference() {
    let mut tally = Tally {
        native_every: 12,
        native_max_source: 1_200,
        ..Tally::default()
    };
    soundness_programs(seed_or(0xfa57), 250, &mut tally);
    thesis_programs(seed_or(0xfa57), 6, &mut tally);
    eprintln!("{tally:?}");
    tally.assert_sound(0.8);
}

#[test]
#[ignore]
fn fast_engine_long() {
    let programs = env_or("FAST_PROGRAMS", 100_000usize);
    let mut tally = Tally {
        native_every: env_or("FAST_NATIVE_EVERY", 1usize),
        native_max_source: usize::MAX,
        ..Tally::default()
    };
    let started = std::time::Instant::now();
    soundness_programs(seed_or(0xfa571), programs, &mut tally);
    thesis_programs(seed_or(0xfa571), (programs / 180).max(1) as u64, &mut tally);
    eprintln!(
        "{} runs, {} handed back; the native tier: {} runs, {} handed back; {} disagreements, {:.0} s",
        tally.runs,
        tally.handed_back,
        tally.native_runs,
        tally.native_handed_back,
        tally.disagreements.len(),
        started.elapsed().as_secs_f64()
    );
    tally.assert_sound(0.8);
}
