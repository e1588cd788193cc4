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
use super::{Findings, generated_db, place_of, run_flags, run_generated, seed_or};
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

/// The targets that some of 12 random runs hit, each with the first run's flags.
fn hit_by_runs(
    db: &apc::db::Database,
    file: apc::db::SourceFile,
    src: &str,
    targets: &[check::Target],
    mut witness: impl FnMut() -> apc::interp::Witness,
) -> BTreeMap<usize, String> {
    let parsed = db::parse(db, file);
    let lines = apc::syntax::LineIndex::new(src);
    let mut hit: BTreeMap<usize, String> = BTreeMap::new();
    for _ in 0..12 {
        let w = witness();
        let Ok(res) = run_generated(&parsed.program, &w) else {
            continue;
        };
        if let Outcome::Error { kind, span } = res.outcome {
            let (line, col) = lines.line_col(src, span.start);
            if let Some(i) = targets
                .iter()
                .position(|t| t.kind == kind && (t.line, t.col) == (line, col))
            {
                hit.entry(i).or_insert_with(|| run_flags(&w));
            }
        }
    }
    hit
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
        let targets = check::targets(&db, file);
        let hit = hit_by_runs(&db, file, &src, &targets, || witness(&mut r));
        let o = options(p, variant);
        let how = format!(
            "{:?}/{:?}/{:?}/schedules {}",
            o.strategy, o.merging, o.subsumption, o.block_schedules
        );
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
                    let what = format!(
                        "{how}: explored every path but missed {} that the plain executor reaches with {:?}",
                        place_of(&e.target),
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
            let place = place_of(t);
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
            nc: apc::nc::engine_options(&check_opts),
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
        env_or("EXPLORE_PROGRAMS", 6),
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

// ---- loop summarisation ---------------------------------------------------

#[derive(Default, Debug)]
struct SummaryTally {
    programs: usize,
    loops_summarised: u64,
    loops_not_summarisable: u64,
    summaries_applied: u64,
    complete_plain: usize,
    complete_summarised: usize,
    schedules_applied: u64,
    errors_plain: usize,
    errors_summarised: usize,
}

/// Each generated program explored without and with `--summarization`:
/// every error either reports has a witness that replayed; a run with
/// summaries that explored every path found every target a concrete run
/// hits and every error the plain executor found; and a plain run that
/// explored every path found every error the summarised one did.
fn summarisation_campaign(seed: u64, programs: usize) -> (SummaryTally, Findings) {
    let mut r = Rng(seed);
    let mut findings = Findings::new(seed);
    let mut tally = SummaryTally::default();
    for p in 0..programs {
        // Half the programs from the general generator, half loops of the
        // shapes summaries are about.
        let src = if p % 2 == 0 {
            program(&mut r, &Knobs::from_env())
        } else {
            loop_program(&mut r)
        };
        let (db, file) = generated_db(p, &src);
        let targets = check::targets(&db, file);
        let hit = hit_by_runs(&db, file, &src, &targets, || {
            if p % 2 == 0 {
                witness(&mut r)
            } else {
                loop_witness(&mut r)
            }
        });
        let mut o = options(p, Variant::Plain);
        o.merging = Merging::None;
        // Unbounded loops stop the plain run at a limit: keep it short.
        o.max_steps = 2_000;
        let plain = explore::explore(&db, file, &o);
        o.summarization = true;
        // Combined: summaries alone, with subsumption, and with
        // subsumption and merging, in turn.
        if p % 3 >= 1 {
            o.subsumption = Some(AtChecks::Conjoin);
        }
        if p % 3 == 2 {
            o.merging = Merging::Lattice;
        }
        // Block schedules on half the runs: their states go beside the
        // loop's iterations, so every claim below holds with them too, and
        // a witness of theirs that does not replay is a finding.
        o.block_schedules = p % 4 < 2;
        let summarised = explore::explore(&db, file, &o);
        let (plain, summarised) = match (plain, summarised) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => {
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
        let s = &summarised.stats;
        tally.loops_summarised += s.loops_summarised;
        tally.loops_not_summarisable += s.loops_not_summarisable;
        tally.summaries_applied += s.summaries_applied;
        tally.schedules_applied += s.schedules_applied;
        tally.errors_plain += plain.errors.len();
        tally.errors_summarised += summarised.errors.len();
        let how = format!(
            "{:?}/{:?}/{:?}/schedules {}",
            o.strategy, o.merging, o.subsumption, o.block_schedules
        );
        for (r, which) in [(&plain, "plain"), (&summarised, "summarised")] {
            if r.stats.replay_failures > 0 {
                let what = format!(
                    "{how} {which}: a witness did not replay: {:?}",
                    r.stats.undecided_reasons
                );
                findings.add(true, "replay", p, what, &src);
            }
        }
        let found =
            |r: &explore::Report, t: &apc::db::Target| r.errors.iter().any(|e| e.target == *t);
        if plain.end == End::Complete {
            tally.complete_plain += 1;
            for e in &summarised.errors {
                if !found(&plain, &e.target) {
                    let what = format!(
                        "{how}: summarised found {}, the plain run explored every path without it",
                        place_of(&e.target)
                    );
                    findings.add(true, "summary-extra", p, what, &src);
                }
            }
        }
        if summarised.end == End::Complete {
            tally.complete_summarised += 1;
            for e in &plain.errors {
                if !found(&summarised, &e.target) {
                    let what = format!(
                        "{how}: summarised explored every path without {} that the plain run found ({:?})",
                        place_of(&e.target),
                        s.not_summarisable_reasons
                    );
                    findings.add(true, "summary-missed", p, what, &src);
                }
            }
            for (i, flags) in &hit {
                if !found(&summarised, &targets[*i]) {
                    let what = format!(
                        "{how}: summarised explored every path but missed {} that a run hits ({flags})",
                        place_of(&targets[*i])
                    );
                    findings.add(true, "summary-missed", p, what, &src);
                }
            }
        }
    }
    (tally, findings)
}

fn run_summarisation(programs: usize, seed: u64) {
    let start = Instant::now();
    let (tally, findings) = summarisation_campaign(seed, programs);
    eprintln!("seed {seed:#x}: {tally:?} in {:.1?}", start.elapsed());
    findings.assert_none_fatal();
}

#[test]
fn summarisation_agrees_with_plain_runs() {
    run_summarisation(
        env_or("EXPLORE_SUMMARY_PROGRAMS", 8),
        seed_or(0x5eed_e8b1_0000_5a11),
    );
}

#[test]
#[ignore]
fn summarisation_long_run() {
    run_summarisation(
        env_or("EXPLORE_SUMMARY_PROGRAMS", 300),
        seed_or(0x5eed_e8b1_0000_5a42),
    );
}

/// A program around one loop of the shapes summaries handle (induction
/// updates, branches on induction variables, `!=` guards, an input read,
/// an inner loop), with a target after it; sometimes with something that
/// makes the loop unsummarisable. Every variable is assigned first.
fn loop_program(r: &mut Rng) -> String {
    let mut g = Small(r.0 | 1);
    // The campaign's generator moves on independently.
    r.0 =
        r.0.wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
            | 1;
    let vars = ["a", "b", "c", "i"];
    let mut out = String::from("main() {\n  var a, b, c, i, n, t;\n");
    out += "  a = input;\n  b = input;\n  c = input;\n  n = input;\n  t = 0;\n";
    out += if g.chance(50) {
        "  i = 0;\n"
    } else {
        "  i = input;\n"
    };
    let guard = match g.below(5) {
        0 => "i < n".to_string(),
        1 => "i != n".to_string(),
        2 => "i <= n".to_string(),
        3 => format!("i < n && a > {}", g.int(-3, 3)),
        _ => format!("i + {} < n + a", g.int(0, 2)),
    };
    out += &format!("  while ({guard}) {{\n");
    for _ in 0..g.int(1, 3) {
        out += &format!("    {}\n", loop_stmt(&mut g, &vars, 2));
    }
    if g.chance(85) {
        out += "    i = i + 1;\n";
    }
    out += "  }\n";
    let (x, y) = (g.pick(&vars), g.pick(&vars));
    out += &match g.below(3) {
        0 => format!("  if ({x} == {y} + {}) {{ assert(0); }}\n", g.int(-4, 6)),
        1 => format!("  t = 1 / ({x} - {y} - {});\n", g.int(-2, 2)),
        _ => format!("  assert({x} != {});\n", g.int(-3, 8)),
    };
    out += "  return a;\n}\n";
    out
}

fn loop_stmt(g: &mut Small, vars: &[&'static str], depth: u32) -> String {
    let (v, w) = (g.pick(vars), g.pick(vars));
    let k = g.int(-2, 3);
    match g.below(if depth > 0 { 10 } else { 7 }) {
        0 | 1 => format!("{v} = {v} + {k};"),
        2 => format!("{v} = {k};"),
        3 => format!("{v} = {w} + {k};"),
        4 => "t = input;".into(),
        5 => match g.below(4) {
            0 => format!("{v} = {v} + t;"),
            1 => format!("output {v};"),
            2 => format!("{v} = {v} * 2;"),
            _ => format!("t = 10 / ({v} - {w});"),
        },
        6 => format!("{v} = {v} - {};", g.int(1, 2)),
        7 | 8 => format!(
            "if ({} {} {w} + {k}) {{ {} }} else {{ {} }}",
            if g.chance(25) { "input" } else { v },
            g.pick(&["<", "<=", ">", "==", "!="]),
            loop_stmt(g, vars, depth - 1),
            loop_stmt(g, vars, depth - 1)
        ),
        _ => format!("while (c < {w}) {{ c = c + 1; }}"),
    }
}

/// A small xorshift of the loop generator's own.
struct Small(u64);

impl Small {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
    fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
}

/// Inputs for [`loop_program`]: a short stream of small numbers.
fn loop_witness(r: &mut Rng) -> apc::interp::Witness {
    let mut g = Small(r.0 | 1);
    r.0 =
        r.0.wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
            | 1;
    apc::interp::Witness {
        args: vec![],
        input: (0..g.int(0, 6)).map(|_| g.int(-3, 6).into()).collect(),
    }
}
