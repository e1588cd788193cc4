//! `apc explore` against the interpreter and `apc check`, on generated
//! programs. Every error the executor reports has a witness it replayed
//! (a replay failure is fatal here); when it explored every path, every
//! target a random run hits must be among its errors, and `apc check` must
//! not call one of its errors unreachable nor a target it proved free of
//! errors reachable.
//!
//! With path subsumption, the same checks hold, and the executor without
//! it is one more reference: when the run with subsumption explored every
//! path, it must have found every error the plain run found (a pruned path
//! that reaches an error is the bug this looks for).
//!
//! `EXPLORE_PROGRAMS=500 cargo test --release --test it soundness::explore -- --ignored`
//! is the long run (`SOUNDNESS_SEED`, `SOUNDNESS_KNOBS` as elsewhere).

use super::generator::{Knobs, Rng, program, witness};
use super::{Findings, generated_db, run_flags, run_generated, seed_or};
use crate::common::env_or;
use apc::check::{self, CheckOptions, Verdict};
use apc::db;
use apc::explore::{self, AtChecks, End, Merging, Options, Strategy};
use apc::interp::Outcome;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

#[derive(Default, Debug)]
struct Tally {
    programs: usize,
    complete: usize,
    errors_found: usize,
    hit_targets: usize,
    checked: usize,
    /// With subsumption: runs of the plain executor that completed, and
    /// errors it found.
    plain_complete: usize,
    plain_errors: usize,
    /// Guided runs (to targets known reachable), and those that reached it.
    guided: usize,
    guided_found: usize,
}

/// Which executor is on trial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    Plain,
    Subsumption,
}

const STRATEGIES: [Strategy; 6] = Strategy::ALL;

fn options(p: usize, variant: Variant) -> Options {
    let z3 = apc::smt::locate(apc::smt::SolverKind::Z3, None).expect("z3 installed");
    let mut o = Options::new(z3);
    o.strategy = STRATEGIES[p % STRATEGIES.len()];
    o.merging = [Merging::None, Merging::Aggressive, Merging::Lattice][p % 3];
    o.timeout = Some(Duration::from_secs(env_or("EXPLORE_TIMEOUT", 3)));
    o.max_steps = 5_000;
    o.max_call_depth = 100;
    o.stop_at_first_error = false;
    o.seed = p as u64;
    if variant == Variant::Subsumption {
        o.subsumption = Some([AtChecks::Conjoin, AtChecks::Block][p % 2]);
        o.merging = [Merging::None, Merging::Lattice][(p / 2) % 2];
    }
    o
}

fn campaign(seed: u64, programs: usize, variant: Variant) -> (Tally, Findings) {
    let mut r = Rng(seed);
    let mut findings = Findings::new(seed);
    let mut tally = Tally::default();
    let z3 = apc::smt::locate(apc::smt::SolverKind::Z3, None).expect("z3");
    let check_opts = CheckOptions {
        max_models: 3,
        ..CheckOptions::new(vec![z3], Duration::from_secs(5))
    };
    for p in 0..programs {
        let src = program(&mut r, &Knobs::from_env());
        let (db, file) = generated_db(p, &src);
        let parsed = db::parse(&db, file);
        let lines = apc::syntax::LineIndex::new(&src);
        let targets = check::targets(&db, file);
        let mut hit: BTreeMap<usize, String> = BTreeMap::new();
        for _ in 0..12 {
            let w = witness(&mut r);
            let Ok(res) = run_generated(&parsed.program, &w) else {
                continue;
            };
            if let Outcome::Error { kind, span } = res.outcome {
                let (line, col) = lines.line_col(&src, span.start);
                if let Some(i) = targets
                    .iter()
                    .position(|t| t.kind == kind && (t.line, t.col) == (line, col))
                {
                    hit.entry(i).or_insert_with(|| run_flags(&w));
                }
            }
        }
        let o = options(p, variant);
        let how = format!("{:?}/{:?}/{:?}", o.strategy, o.merging, o.subsumption);
        let report = match explore::explore(&db, file, &o) {
            Ok(r) => r,
            Err(e) => {
                findings.add(
                    true,
                    "explore-error",
                    p,
                    format!("explore failed: {e}"),
                    &src,
                );
                continue;
            }
        };
        tally.programs += 1;
        tally.hit_targets += hit.len();
        tally.errors_found += report.errors.len();
        if report.stats.replay_failures > 0 {
            let what = format!(
                "{how}: a witness did not replay: {:?}",
                report.stats.undecided_reasons
            );
            findings.add(true, "replay", p, what, &src);
        }
        let found = |i: usize| report.errors.iter().any(|e| e.target == targets[i]);
        let complete = report.end == End::Complete;
        if variant == Variant::Subsumption {
            let plain = explore::explore(&db, file, &options(p, Variant::Plain))
                .expect("the plain executor runs where subsumption did");
            tally.plain_errors += plain.errors.len();
            tally.plain_complete += usize::from(plain.end == End::Complete);
            guided_to_each(
                &db,
                file,
                &plain,
                &hit,
                &targets,
                p,
                &src,
                &mut findings,
                &mut tally,
            );
            for e in &plain.errors {
                if complete && !report.errors.iter().any(|f| f.target == e.target) {
                    let t = &e.target;
                    let what = format!(
                        "{how}: explored every path but missed {} at {}:{} that the plain executor reaches with {:?}",
                        t.kind.as_str(),
                        t.line,
                        t.col,
                        e.witness
                    );
                    findings.add(true, "pruned-error", p, what, &src);
                }
            }
        }
        if complete {
            tally.complete += 1;
            for (i, flags) in &hit {
                if !found(*i) {
                    let t = &targets[*i];
                    let what = format!(
                        "{how}: explored every path but missed {} at {}:{} that a run hits ({flags})",
                        t.kind.as_str(),
                        t.line,
                        t.col
                    );
                    findings.add(true, "missed", p, what, &src);
                }
            }
        }
        for (i, t) in targets.iter().enumerate() {
            let by_explore = found(i);
            if !by_explore && !complete {
                continue;
            }
            tally.checked += 1;
            let v = check::check_target(&db, file, t, &check_opts).verdict;
            let place = format!("{} at {}:{}", t.kind.as_str(), t.line, t.col);
            match (&v, by_explore) {
                (Verdict::Unreachable, true) => {
                    let what = format!("{how}: explore reached {place}, check says unreachable");
                    findings.add(true, "disagree", p, what, &src);
                }
                (Verdict::Reachable(w), false) => {
                    let what = format!(
                        "{how}: explore explored every path without {place}, check reaches it with {w:?}"
                    );
                    findings.add(true, "disagree", p, what, &src);
                }
                _ => {}
            }
        }
    }
    (tally, findings)
}

/// Guided to each target that the plain executor or a run reached, with
/// subsumption on: the run must not end "every path explored" without it
/// (a state dropped by the target's condition, or pruned, that reaches it).
#[allow(clippy::too_many_arguments)]
fn guided_to_each(
    db: &apc::db::Database,
    file: apc::db::SourceFile,
    plain: &explore::Report,
    hit: &BTreeMap<usize, String>,
    targets: &[check::Target],
    p: usize,
    src: &str,
    findings: &mut Findings,
    tally: &mut Tally,
) {
    let reached = (plain.errors.iter().map(|e| e.target.clone()))
        .chain(hit.keys().map(|i| targets[*i].clone()));
    let mut seen: Vec<check::Target> = Vec::new();
    for goal in reached {
        if seen.contains(&goal) {
            continue;
        }
        seen.push(goal.clone());
        let mut o = options(p, Variant::Subsumption);
        let z3 = o.solver.clone();
        let check_opts = CheckOptions::new(vec![z3], Duration::from_secs(5));
        o.guide = Some(explore::Guide {
            goal: goal.clone(),
            nc: check::engine_options(&check_opts),
        });
        let r = explore::explore(db, file, &o).expect("a guided run");
        tally.guided += 1;
        let found = r.errors.iter().any(|e| e.target == goal);
        tally.guided_found += usize::from(found);
        if r.end == End::Complete && !found {
            let what = format!(
                "guided to {} at {}:{}: every path explored without it, but it is reachable",
                goal.kind.as_str(),
                goal.line,
                goal.col
            );
            findings.add(true, "guided-missed", p, what, src);
        }
    }
}

fn run(programs: usize, seed: u64, variant: Variant) {
    let start = Instant::now();
    let (tally, findings) = campaign(seed, programs, variant);
    eprintln!("seed {seed:#x}: {tally:?} in {:.1?}", start.elapsed());
    findings.assert_none_fatal();
    assert!(tally.complete * 4 >= tally.programs, "{tally:?}");
}

#[test]
fn explore_agrees_with_runs_and_check() {
    run(
        env_or("EXPLORE_PROGRAMS", 12),
        seed_or(0x5eed_e8b1_0000_0001),
        Variant::Plain,
    );
}

#[test]
fn subsumption_prunes_no_error() {
    run(
        env_or("EXPLORE_PROGRAMS", 8),
        seed_or(0x5eed_e8b1_0000_0101),
        Variant::Subsumption,
    );
}

#[test]
#[ignore]
fn subsumption_long_run() {
    run(
        env_or("EXPLORE_PROGRAMS", 1000),
        seed_or(0x5eed_e8b1_0000_0142),
        Variant::Subsumption,
    );
}

#[test]
#[ignore]
fn explore_long_run() {
    run(
        env_or("EXPLORE_PROGRAMS", 500),
        seed_or(0x5eed_e8b1_0000_0042),
        Variant::Plain,
    );
}
