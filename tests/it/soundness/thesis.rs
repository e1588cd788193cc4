//! The techniques of `apc bench thesis` on the thesis's generated programs
//! (`apc gen`): every error is replayed by the interpreter, and every
//! target a technique proves unreachable is attacked by random concrete
//! runs and by the errors the other techniques found.
//!
//! `THESIS_PROGRAMS=10 cargo test --release --test it soundness::thesis -- --ignored`
//! is the long run: every set, every technique (`THESIS_TIMEOUT` seconds
//! each, `SOUNDNESS_SEED`).

use super::seed_or;
use crate::common::env_or;
use apc::bench::thesis::{self, ProgramRun, Technique, ThesisOptions};
use apc::generator::THESIS_SETS;
use std::time::Duration;

fn campaign(
    sets: usize,
    programs: u32,
    techniques: Vec<Technique>,
    timeout: u64,
) -> Vec<ProgramRun> {
    let solver = apc::smt::locate(apc::smt::SolverKind::Z3, None).expect("z3 installed");
    let opts = ThesisOptions {
        // Every set when all are asked for, else a spread of them.
        sets: THESIS_SETS
            .iter()
            .step_by(THESIS_SETS.len() / sets)
            .collect(),
        programs_per_set: programs,
        timeout: Duration::from_secs(timeout),
        jobs: 2,
        seed: seed_or(1),
        techniques,
        solver,
        random_runs: 200,
    };
    thesis::run(&opts, &|_| {})
}

fn assert_sound(runs: &[ProgramRun]) {
    let mut failures = Vec::new();
    for r in runs {
        let at = format!("{}-{:03} {}", r.set, r.index, r.technique.name());
        if let Some(Err(why)) = r.error.as_ref().map(|e| &e.replay) {
            failures.push(format!("{at}: replay failure: {why}"));
        }
        for t in &r.refuted {
            failures.push(format!("{at}: proved {t:?} unreachable, yet it is hit"));
        }
    }
    let proved = runs.iter().filter(|r| r.proved_safe).count();
    let found = runs.iter().filter(|r| r.error.is_some()).count();
    eprintln!(
        "thesis programs: {} runs, {proved} proved safe, {found} errors found",
        runs.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn techniques_on_generated_programs_are_sound() {
    let runs = campaign(
        6,
        1,
        vec![
            Technique::Subsumption,
            Technique::Combined,
            Technique::Check,
        ],
        1,
    );
    assert_sound(&runs);
}

#[test]
#[ignore = "long run: THESIS_PROGRAMS programs per set, every technique"]
fn techniques_on_generated_programs_long_run() {
    let runs = campaign(
        THESIS_SETS.len(),
        env_or("THESIS_PROGRAMS", 10),
        Technique::ALL.to_vec(),
        env_or("THESIS_TIMEOUT", 5),
    );
    assert_sound(&runs);
}
