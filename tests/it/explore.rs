//! `apc explore`, the thesis's symbolic executor: the thesis's listings
//! keep their outcomes under every strategy and merging strategy, merging
//! counts paths the thesis's way, and the command line keeps its contract.
//! (The differential test over generated programs is in `soundness`.)

use crate::common::{annotations, apc, on_two_threads, programs, programs_dir, renders_with_dot};
use apc::db::Database;
use apc::explore::{self, AtChecks, End, IndexMode, Merging, Options, Report, Strategy};
use std::time::Duration;

const STRATEGIES: [Strategy; 6] = Strategy::ALL;

fn options(strategy: Strategy, merging: Merging) -> Options {
    let z3 = apc::smt::locate(apc::smt::SolverKind::Z3, None).expect("z3 installed");
    let mut o = Options::new(z3);
    o.strategy = strategy;
    o.merging = merging;
    o.timeout = Some(Duration::from_secs(3));
    o.max_steps = 1_500;
    o.stop_at_first_error = false;
    o
}

fn explore_file(name: &str, o: &Options) -> Report {
    let path = programs_dir().join(name);
    let text = std::fs::read_to_string(&path).expect("program");
    let (db, file) = Database::with_file(&path.display().to_string(), &text);
    explore::explore(&db, file, o).expect("explores")
}

/// The drawn tree (`--tree`) shows what the statistics count: a leaf per
/// path run to its end (standing for the paths counted), per subsumed
/// state, per infeasible branch, per state dropped by guidance, per error
/// found; a join per merge; a summary fork per loop left by its summary.
/// A run stopped by its deadline mid-step, or a cut tree, is not compared.
fn tree_agrees_with_stats(r: &Report, how: &str) {
    use apc::engine::picture::{Mark, Way};
    let tree = r.tree.as_ref().expect("a tree was asked for");
    if tree.cut || matches!(&r.end, End::Incomplete(why) if why.contains("timeout")) {
        return;
    }
    let s = &r.stats;
    let count = |f: &dyn Fn(&Mark) -> bool| tree.count(f);
    let exit_paths: u64 = (tree.nodes.iter())
        .map(|n| match n.mark {
            Mark::Exit { paths } => paths,
            _ => 0,
        })
        .sum();
    let summaries = (tree.nodes.iter())
        .filter(|n| n.at.ends_with(": summary"))
        .count();
    let figures = [
        (
            "runs",
            count(&|m| matches!(m, Mark::Exit { .. } | Mark::Endless)) as u64,
            s.runs,
        ),
        ("paths", exit_paths, s.paths),
        (
            "merges",
            count(&|m| *m == Mark::Join) as u64,
            s.states_merged,
        ),
        (
            "merge edges",
            tree.ways(Way::Merge) as u64,
            2 * s.states_merged,
        ),
        (
            "subsumed",
            count(&|m| *m == Mark::Subsumed) as u64,
            s.subsumed,
        ),
        (
            "pruned",
            count(&|m| *m == Mark::Infeasible) as u64,
            s.pruned,
        ),
        (
            "off course",
            count(&|m| *m == Mark::OffCourse) as u64,
            s.off_course,
        ),
        (
            "errors",
            count(&|m| matches!(m, Mark::Error { .. })) as u64,
            r.errors.len() as u64,
        ),
        ("summaries", summaries as u64, s.summaries_applied),
    ];
    for (what, drawn, counted) in figures {
        assert_eq!(drawn, counted, "{how}: {what} drawn vs counted");
    }
    if r.end == End::Complete {
        assert_eq!(count(&|m| matches!(m, Mark::NotRun(_))), 0, "{how}");
    }
}

/// The thesis's listings 4.3 (subsumption), 4.6 (merging) and 4.9
/// (summarisation) draw the trees the thesis describes: one path and one
/// subsumed state; sixteen paths through three joins into two exits; the
/// loop left at once along its two traces.
#[test]
fn the_listings_draw_the_trees_the_thesis_describes() {
    use apc::engine::picture::{Mark, Way};
    let mut o = options(Strategy::Bfs, Merging::None);
    o.tree = Some(1_000);
    o.subsumption = Some(AtChecks::Conjoin);
    let r = explore_file("thesis_4_3.mc", &o);
    tree_agrees_with_stats(&r, "4.3");
    let t = r.tree.as_ref().unwrap();
    assert_eq!(t.count(|m| *m == Mark::Subsumed), 1);
    assert_eq!(t.count(|m| matches!(m, Mark::Exit { .. })), 1);
    let mut o = options(Strategy::Bfs, Merging::Aggressive);
    o.tree = Some(1_000);
    let r = explore_file("thesis_4_6.mc", &o);
    tree_agrees_with_stats(&r, "4.6");
    let t = r.tree.as_ref().unwrap();
    assert_eq!(t.count(|m| *m == Mark::Join), 3);
    assert_eq!(t.count(|m| *m == Mark::Exit { paths: 8 }), 2);
    let mut o = options(Strategy::Bfs, Merging::None);
    o.tree = Some(1_000);
    o.summarization = true;
    let r = explore_file("thesis_4_9.mc", &o);
    tree_agrees_with_stats(&r, "4.9");
    let t = r.tree.as_ref().unwrap();
    assert_eq!(t.ways(Way::Summary), 2);
    assert_eq!(t.count(|m| matches!(m, Mark::Exit { .. })), 2);
    // Without summarisation the same loop forks at every iteration and
    // the run stops at its step limit, with states still waiting.
    o.summarization = false;
    let r = explore_file("thesis_4_9.mc", &o);
    tree_agrees_with_stats(&r, "4.9 unsummarised");
    let t = r.tree.as_ref().unwrap();
    assert_eq!(t.ways(Way::Summary), 0);
    assert!(t.count(|m| matches!(m, Mark::NotRun(_))) > 0);
}

/// The places of the errors found.
fn found(r: &Report) -> Vec<(u32, u32)> {
    r.errors
        .iter()
        .map(|e| (e.target.line, e.target.col))
        .collect()
}

/// Every program with annotated verdicts, under every strategy (and each
/// merging strategy under bfs): an error is only ever reported at a target
/// that is not annotated unreachable, its witness replayed (no replay
/// failure), and a run that explored every path found every target
/// annotated reachable.
///
/// The explorations spend half their time waiting on the solver, so the
/// programs are shared out to two threads.
#[test]
fn annotated_outcomes_hold_under_every_strategy() {
    let counts = on_two_threads(programs(), |p| explore_annotated(p));
    let runs: usize = counts.iter().map(|c| c.0).sum();
    let complete: usize = counts.iter().map(|c| c.1).sum();
    eprintln!("{runs} explorations, {complete} explored every path");
    assert!(
        complete * 3 >= runs,
        "only {complete} of {runs} explorations were complete"
    );
}

/// The explorations of one program, as counts of runs and of complete runs.
fn explore_annotated(path: &std::path::Path) -> (usize, usize) {
    let (mut runs, mut complete) = (0, 0);
    let text = std::fs::read_to_string(path).expect("program");
    let targets = annotations(&text, "target");
    let name = path.file_name().unwrap().to_str().unwrap().to_string();
    if targets.is_empty() {
        return (0, 0);
    }
    let verdict = |line: u32, col: u32| {
        targets.iter().find_map(|(t, _)| {
            (t["line"] == line && t["col"] == col).then(|| t["verdict"].as_str().unwrap_or(""))
        })
    };
    // Every configuration on the thesis's listings, two on the
    // others (merging; path subsumption); path subsumption alone and
    // combined with merging.
    let (conjoin, block) = (Some(AtChecks::Conjoin), Some(AtChecks::Block));
    let configs: Vec<(Strategy, Merging, Option<AtChecks>)> = if name.starts_with("thesis_") {
        let merged = [Merging::Aggressive, Merging::Lattice, Merging::Recursive];
        STRATEGIES
            .iter()
            .map(|s| (*s, Merging::None, None))
            .chain(merged.map(|m| (Strategy::Bfs, m, None)))
            .chain([
                (Strategy::Dfs, Merging::None, block),
                (Strategy::Bfs, Merging::Lattice, conjoin),
            ])
            .collect()
    } else {
        vec![
            (Strategy::Bfs, Merging::Aggressive, None),
            (Strategy::Dfs, Merging::None, conjoin),
        ]
    };
    for (strategy, merging, subsumption) in configs {
        let started = std::time::Instant::now();
        let mut o = options(strategy, merging);
        o.subsumption = subsumption;
        // The lattice run with subsumption has summaries on too: all
        // three techniques at once.
        o.summarization = merging == Merging::Lattice && subsumption.is_some();
        o.max_steps = 600;
        o.timeout = Some(Duration::from_millis(300));
        o.tree = Some(100_000);
        let r = explore_file(&name, &o);
        runs += 1;
        if std::env::var("EXPLORE_VERBOSE").is_ok() {
            eprintln!(
                "{name} {strategy:?} {merging:?}: {:.1?} {:?} q={} solver={:?}",
                started.elapsed(),
                r.end,
                r.stats.queries,
                r.stats.solver_time
            );
        }
        let how =
            format!("{name} with {strategy:?}, merging {merging:?}, subsumption {subsumption:?}");
        assert_eq!(
            r.stats.replay_failures, 0,
            "{how}: {:?}",
            r.stats.undecided_reasons
        );
        tree_agrees_with_stats(&r, &how);
        for (line, col) in found(&r) {
            assert_ne!(
                verdict(line, col),
                Some("unreachable"),
                "{how}: error at {line}:{col}"
            );
        }
        if r.end == End::Complete {
            complete += 1;
            for (t, _) in &targets {
                if t["verdict"] == "reachable" {
                    let at = (
                        t["line"].as_u64().unwrap() as u32,
                        t["col"].as_u64().unwrap() as u32,
                    );
                    assert!(
                        found(&r).contains(&at),
                        "{how}: explored every path, missed {at:?}"
                    );
                }
            }
        }
    }
    (runs, complete)
}

/// Listings 4.3 and 4.5: the `1 / 0` after an unbounded loop (nested in
/// 4.5) is proved unreachable with path subsumption under every strategy,
/// alone and with merging, through an invariant found inductive; plain
/// exploration does not finish.
#[test]
fn subsumption_proves_the_unbounded_loops_safe() {
    for name in ["thesis_4_3.mc", "thesis_4_5.mc"] {
        let plain = explore_file(name, &options(Strategy::Bfs, Merging::None));
        assert!(
            matches!(plain.end, End::Incomplete(_)),
            "{name}: {:?}",
            plain.end
        );
        let merged = [Merging::None, Merging::Lattice, Merging::Aggressive];
        for (s, m) in STRATEGIES
            .iter()
            .map(|s| (*s, Merging::None))
            .chain(merged.map(|m| (Strategy::Bfs, m)))
        {
            for at in [AtChecks::Conjoin, AtChecks::Block] {
                let mut o = options(s, m);
                o.subsumption = Some(at);
                let r = explore_file(name, &o);
                let how = format!("{name} {s:?} {m:?} {at:?}");
                assert_eq!((r.end.clone(), found(&r)), (End::Complete, vec![]), "{how}");
                assert!(
                    r.stats.invariants >= 1 && r.stats.subsumed >= 1,
                    "{how}: {:?}",
                    r.stats
                );
            }
        }
    }
}

/// Listings 5.6 and 5.7, the thesis's own annotations: a division that may
/// fail blocks every annotation before it (5.6, the thesis's tool), or
/// adds its safety condition `i != 0` (5.7, the improvement, our default).
#[test]
fn annotations_follow_listings_5_6_and_5_7() {
    let mut o = options(Strategy::Dfs, Merging::None);
    o.subsumption = Some(AtChecks::Block);
    let block = explore_file("thesis_5_6.mc", &o).annotations;
    let lines = |a: &[(usize, String)]| {
        a.iter()
            .map(|(l, t)| format!("{l}: {t}"))
            .collect::<Vec<_>>()
    };
    assert_eq!(lines(&block), ["11: y ≤ x", "14: true"]);
    o.subsumption = Some(AtChecks::Conjoin);
    let conjoin = explore_file("thesis_5_6.mc", &o).annotations;
    let at = |l: usize| {
        conjoin
            .iter()
            .find(|(m, _)| *m == l)
            .map(|(_, t)| t.as_str())
    };
    assert_eq!(at(10), Some("y ≤ x ∧ i ≠ 0"), "{conjoin:?}");
    assert_eq!(at(8), Some("y ≤ x"), "{conjoin:?}");
    assert_eq!(at(4), Some("true"), "{conjoin:?}");
}

/// A run guided to one target: to a reachable one (hello's assert) it
/// stops there with a replayed witness, having dropped states that could
/// not reach it; to unreachable ones (4.2's and 4.3's `1 / 0`, the latter
/// behind an unbounded loop, with subsumption) it explores every path to
/// it, which proves it unreachable.
#[test]
fn guided_runs_reach_the_goal_or_prove_it_unreachable() {
    let guided = |name: &str, at: (u32, u32), subsumption: bool| {
        let path = programs_dir().join(name);
        let text = std::fs::read_to_string(&path).expect("program");
        let (db, file) = Database::with_file(&path.display().to_string(), &text);
        let goal = (apc::check::targets(&db, file).into_iter())
            .find(|t| (t.line, t.col) == at)
            .expect("the target");
        let mut o = options(Strategy::Bfs, Merging::None);
        o.timeout = Some(Duration::from_secs(20));
        o.max_steps = u64::MAX;
        o.subsumption = subsumption.then_some(AtChecks::Conjoin);
        let z3 = o.solver.clone();
        let check_opts = apc::check::CheckOptions::new(vec![z3], Duration::from_secs(20));
        o.guide = Some(explore::Guide {
            goal,
            nc: apc::nc::engine_options(&check_opts),
        });
        explore::explore(&db, file, &o).expect("explores")
    };
    let r = guided("hello.mc", (28, 5), false);
    assert_eq!((r.end.clone(), found(&r)), (End::ErrorFound, vec![(28, 5)]));
    assert!(r.stats.off_course > 0, "{:?}", r.stats);
    let r = guided("thesis_4_2.mc", (19, 11), false);
    assert_eq!((r.end.clone(), found(&r)), (End::Complete, vec![]));
    let r = guided("thesis_4_3.mc", (12, 11), true);
    assert_eq!((r.end.clone(), found(&r)), (End::Complete, vec![]));
}

/// The thesis's outcomes, stated: 4.2 has no error; 4.10 divides by zero;
/// 5.4 divides by zero with b = 2; 4.3 and 4.5 do not terminate.
#[test]
fn thesis_listings_give_the_thesis_outcomes() {
    for s in STRATEGIES {
        let mut o = options(s, Merging::None);
        o.stop_at_first_error = true;
        let r = explore_file("thesis_4_2.mc", &o);
        assert_eq!(
            (r.end.clone(), found(&r)),
            (End::Complete, vec![]),
            "4.2 {s:?}"
        );
        let r = explore_file("thesis_4_10.mc", &o);
        assert_eq!(
            (r.end.clone(), found(&r)),
            (End::ErrorFound, vec![(14, 12)]),
            "4.10 {s:?}"
        );
        let r = explore_file("thesis_5_4.mc", &o);
        assert_eq!(found(&r), vec![(19, 14)], "5.4 {s:?}");
        assert_eq!(
            r.errors[0].witness.input,
            vec![2.into()],
            "5.4 {s:?}: b = 2"
        );
        for name in ["thesis_4_3.mc", "thesis_4_5.mc"] {
            let r = explore_file(name, &o);
            assert!(
                matches!(r.end, End::Incomplete(_)),
                "{name} {s:?}: {:?}",
                r.end
            );
            assert!(r.errors.is_empty(), "{name} {s:?}");
        }
    }
}

/// Merging on listing 4.6 (an `if` in a loop of four): the 16 paths run as
/// fewer states, and are still reported as 16 paths.
#[test]
fn merging_runs_fewer_states_and_counts_every_path() {
    let plain = explore_file("thesis_4_6.mc", &options(Strategy::Bfs, Merging::None));
    assert_eq!(
        (plain.end.clone(), plain.stats.paths, plain.stats.runs),
        (End::Complete, 16, 16)
    );
    for m in [Merging::Aggressive, Merging::Lattice, Merging::Recursive] {
        let r = explore_file("thesis_4_6.mc", &options(Strategy::Bfs, m));
        assert_eq!((r.end.clone(), r.stats.paths), (End::Complete, 16), "{m:?}");
        assert!(
            r.stats.runs < 16 && r.stats.states_merged > 0,
            "{m:?}: {:?}",
            r.stats
        );
    }
    // Merging with the differing `s` costs queries nowhere after the
    // join... except `return s`, which asks none: the estimate allows it.
    // With --limit-cost 0 nothing is ever cheap enough.
    let mut o = options(Strategy::Bfs, Merging::Lattice);
    o.limit_cost = 0.0;
    let r = explore_file("thesis_4_6.mc", &o);
    assert_eq!((r.stats.runs, r.stats.states_merged), (16, 0));
}

/// Both symbolic-index modes find listing 5.3's paths (three indices).
#[test]
fn symbolic_indices_as_ite_or_as_forks() {
    let mut o = options(Strategy::Dfs, Merging::None);
    let ite = explore_file("thesis_5_3.mc", &o);
    o.index_mode = IndexMode::Fork;
    let fork = explore_file("thesis_5_3.mc", &o);
    assert_eq!(
        (ite.end.clone(), fork.end.clone()),
        (End::Complete, End::Complete)
    );
    assert!(
        fork.stats.runs > ite.stats.runs,
        "{:?} vs {:?}",
        fork.stats,
        ite.stats
    );
}

/// Exit codes 1 / 0 / 3, JSON a script can parse, one line on bad input.
#[test]
fn command_line_contract() {
    let file = |n: &str| programs_dir().join(n).display().to_string();
    let run = |args: &[&str]| {
        let o = apc(args);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).to_string(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let (code, out, _) = run(&["explore", &file("thesis_4_10.mc"), "--format", "json"]);
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["end"], "error-found");
    assert_eq!(v["first_error"]["kind"], "div-by-zero");
    assert!(v["stats"]["queries"].as_u64().is_some());
    let (code, out, _) = run(&[
        "explore",
        &file("thesis_4_2.mc"),
        "--strategy",
        "klee",
        "--seed",
        "7",
    ]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("every path explored: no error"), "{out}");
    let (code, out, _) = run(&["explore", &file("thesis_4_3.mc"), "--max-steps", "500"]);
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains("step limit"), "{out}");
    let (code, _, err) = run(&["explore", &file("thesis_4_2.mc"), "--solver", "all"]);
    assert_eq!(code, Some(2));
    assert_eq!(err.lines().count(), 1, "{err}");
    let (code, _, err) = run(&["explore", "/nonexistent.mc"]);
    assert_eq!(code, Some(2));
    assert_eq!(err.lines().count(), 1, "{err}");
    let (code, _, _) = run(&["explore", &file("thesis_4_2.mc"), "--limit-cost", "-1"]);
    assert_eq!(code, Some(2));
    // Options of a technique that is off are refused, not ignored.
    let (code, _, err) = run(&["explore", &file("thesis_4_3.mc"), "--show-annotations"]);
    assert_eq!(code, Some(2));
    assert!(
        err.lines().count() == 1 && err.contains("--subsumption"),
        "{err}"
    );
    // A guided run to a place without a target is refused.
    let (code, _, err) = run(&["explore", &file("thesis_4_3.mc"), "--guided", "99"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no target"), "{err}");
    // The JSON of a run with subsumption lists the annotations.
    let (code, out, _) = run(&[
        "explore",
        &file("thesis_4_3.mc"),
        "--subsumption",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{out}");
    let j: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(j["subsumption"], "conjoin");
    assert!(j["stats"]["invariants"].as_u64() >= Some(1), "{j}");
    assert!(
        j["annotations"].as_array().is_some_and(|a| !a.is_empty()),
        "{j}"
    );
}

/// A solver that answers `unknown` to every check: nothing is pruned as
/// infeasible and nothing is called "no error"; every branch it could not
/// decide is counted, and the run is incomplete (exit 3). The branches
/// relate two inputs, so none is decided without the solver.
#[test]
fn a_solver_unknown_is_never_unsat() {
    let dir = crate::common::fake_solver(
        "explore-unknown",
        "while read -r l; do case \"$l\" in *check-sat*) echo unknown;; esac; done",
    );
    let program = dir.join("relational.mc");
    std::fs::write(
        &program,
        "main(a, b) {\n  var x;\n  x = 0;\n  if (a < b) {\n    if (b < a) {\n      x = 1 / x;\n    }\n  }\n  return x;\n}\n",
    )
    .unwrap();
    let out = crate::common::with_path(
        &dir,
        &[
            "explore",
            &program.display().to_string(),
            "--format",
            "json",
            "--timeout",
            "20",
        ],
    )
    .output()
    .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(out.status.code(), Some(3), "{v:#}");
    assert_eq!(v["end"], "incomplete", "{v:#}");
    assert!(v["stats"]["undecided_paths"].as_u64().unwrap() > 0, "{v:#}");
    assert_eq!(v["stats"]["decided_without_solver"], 0, "{v:#}");
    assert_eq!(v["stats"]["pruned_branches"], 0, "{v:#}");
    assert_eq!(v["errors"], serde_json::json!([]), "{v:#}");
}

// ---- loop summarisation (--summarization) ------------------------------------

fn summarising(strategy: Strategy) -> Options {
    let mut o = options(strategy, Merging::None);
    o.summarization = true;
    o.stop_at_first_error = true;
    o
}

fn explore_text(text: &str, o: &Options) -> Report {
    let (db, file) = Database::with_file("inline.mc", text);
    explore::explore(&db, file, o).expect("explores")
}

/// Listing 4.9: without summaries the loop never ends (a step limit
/// stops the run); with them the run is complete and `a == 15` is
/// infeasible (2κ = 15), under every strategy.
#[test]
fn summarisation_makes_listing_4_9_terminate() {
    let plain = explore_file("thesis_4_9.mc", &options(Strategy::Bfs, Merging::None));
    assert!(matches!(plain.end, End::Incomplete(_)), "{:?}", plain.end);
    for s in STRATEGIES {
        let r = explore_file("thesis_4_9.mc", &summarising(s));
        assert_eq!((r.end.clone(), found(&r)), (End::Complete, vec![]), "{s:?}");
        assert_eq!(
            (r.stats.loops_summarised, r.stats.summaries_applied),
            (1, 1),
            "{s:?}"
        );
        // The zero-iteration trace and the κ > 0 one, each on to the `if`.
        assert_eq!(r.stats.paths, 2, "{s:?}");
    }
}

/// Listing 4.10 (periodic): summarised, and the division by zero is found
/// with a witness the interpreter replays, also when the loop must run
/// (`assume(x < n)` first), through the cycle's trace.
#[test]
fn summarised_periodic_loop_of_listing_4_10() {
    for s in STRATEGIES {
        let r = explore_file("thesis_4_10.mc", &summarising(s));
        assert_eq!(
            (r.end.clone(), found(&r)),
            (End::ErrorFound, vec![(14, 12)]),
            "{s:?}"
        );
        assert_eq!(r.stats.loops_summarised, 1, "{s:?}");
        assert_eq!(r.stats.replay_failures, 0, "{s:?}");
    }
    let entered = std::fs::read_to_string(programs_dir().join("thesis_4_10.mc"))
        .unwrap()
        .replace("  while (x < n) {", "  assume(x < n); while (x < n) {");
    for z_above in [false, true] {
        // Both ways into the cycle: z > x first (p2) or z <= x (p3).
        let text = entered.replace(
            "assume(x < n);",
            if z_above {
                "assume(x < n); assume(z > x + 1);"
            } else {
                "assume(x < n); assume(z < x);"
            },
        );
        let r = explore_text(&text, &summarising(Strategy::Bfs));
        assert_eq!(found(&r), vec![(14, 12)], "{:?}", r.stats);
        let w = &r.errors[0].witness.input;
        assert!(w[1] < w[0], "the loop ran: {w:?}");
        assert_eq!(r.stats.summaries_applied, 1);
    }
}

/// Listings 4.11 (irregular) and 4.12 (NIV condition) are not summarised,
/// and the report says why; they run as without summaries.
#[test]
fn listings_4_11_and_4_12_are_not_summarisable() {
    for (name, why) in [
        ("thesis_4_11.mc", "irregular"),
        ("thesis_4_12.mc", "is NIV"),
    ] {
        let r = explore_file(name, &summarising(Strategy::Bfs));
        assert_eq!(
            (
                r.stats.loops_summarised,
                r.stats.loops_not_summarisable,
                r.stats.summaries_applied
            ),
            (0, 1, 0),
            "{name}"
        );
        let reasons = r.stats.not_summarisable_reasons.join("; ");
        assert!(
            reasons.contains("the loop at 6:3 in main") && reasons.contains(why),
            "{name}: {reasons}"
        );
    }
}

/// Listing 4.13: the inner loop is summarised first, the outer one over
/// its traces; the run is complete and `1 / res` never fails (res = n·κ
/// with κ = n); without summaries it does not terminate.
#[test]
fn nested_loops_of_listing_4_13() {
    let plain = explore_file("thesis_4_13.mc", &options(Strategy::Bfs, Merging::None));
    assert!(matches!(plain.end, End::Incomplete(_)), "{:?}", plain.end);
    for (s, m) in [
        (Strategy::Bfs, Merging::None),
        (Strategy::Dfs, Merging::None),
        (Strategy::Bfs, Merging::Aggressive),
    ] {
        let mut o = summarising(s);
        o.merging = m;
        let r = explore_file("thesis_4_13.mc", &o);
        assert_eq!(
            (r.end.clone(), found(&r)),
            (End::Complete, vec![]),
            "{s:?} {m:?}"
        );
        assert_eq!(r.stats.loops_summarised, 2, "{s:?} {m:?}");
        assert_eq!(r.stats.loops_not_summarisable, 0, "{s:?} {m:?}");
    }
}

/// What makes a loop unsummarisable is said: a possible error in the body,
/// an output, a call, a record write, a non-induction update.
#[test]
fn unsummarisable_bodies_say_why() {
    let cases = [
        ("x = x + 10 / y;", "may fail (div-by-zero"),
        ("output x;", "`output`"),
        ("x = f(x);", "calls `f`"),
        ("a.f = x;", "writes a record field"),
        ("x = x * 2;", "`x` is updated by neither"),
    ];
    for (stmt, why) in cases {
        let text = format!(
            "f(v) {{ return v; }}\nmain() {{\n  var x, y, i, n, a;\n  a = {{f: 0}};\n  x = input; y = input; i = 0; n = input;\n  while (i < n) {{\n    {stmt}\n    i = i + 1;\n  }}\n  return x;\n}}\n"
        );
        let r = explore_text(&text, &summarising(Strategy::Bfs));
        let reasons = r.stats.not_summarisable_reasons.join("; ");
        assert!(reasons.contains(why), "{stmt}: {reasons}");
        assert_eq!(r.stats.summaries_applied, 0, "{stmt}");
    }
}

/// The flag on the command line, its counts in the JSON and the text.
#[test]
fn summarization_on_the_command_line() {
    let file = |n: &str| programs_dir().join(n).display().to_string();
    let o = apc(&[
        "explore",
        &file("thesis_4_9.mc"),
        "--summarization",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["end"], "complete", "{v:#}");
    assert_eq!(v["summarization"], true);
    assert_eq!(v["stats"]["loops_summarised"], 1, "{v:#}");
    assert_eq!(v["stats"]["summaries_applied"], 1, "{v:#}");
    let o = apc(&[
        "explore",
        &file("thesis_4_12.mc"),
        "--summarization",
        "--max-steps",
        "300",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("0 loops summarised, 1 not summarisable")
            && out.contains(
                "not summarisable: the loop at 6:3 in main: the condition `i < n` is NIV"
            ),
        "{out}"
    );
}

/// Block schedules reach a target two million iterations into a loop
/// that has no summary: the witness's stream is runs of one value, as
/// the text prints it and `apc run --input` takes it back, and the
/// interpreter replays it to the assert. Without the flag, a run of the
/// same time does not get there.
#[test]
fn block_schedules_find_a_witness_millions_of_iterations_deep() {
    let file = programs_dir().join("replay_past_timeout.mc");
    let file = file.display().to_string();
    let run = |timeout: &str, extra: &[&str]| {
        let args = [
            &["explore", &file, "--summarization", "--timeout", timeout],
            extra,
        ]
        .concat();
        let o = apc(&[&args[..], &["--format", "json"]].concat());
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        v
    };
    let v = run("20", &["--block-schedules"]);
    assert_eq!(v["end"], "error-found", "{}", v["stats"]);
    assert_eq!(v["block_schedules"], true);
    assert!(v["stats"]["schedules_applied"].as_u64() >= Some(1));
    assert_eq!(v["stats"]["replay_failures"], 0);
    let w = &v["first_error"]["witness"];
    let n = w["args"]["n"].as_i64().expect("n");
    // Two million values: given as runs in the JSON.
    assert_eq!(w["input"], serde_json::Value::Null);
    let runs = w["input_runs"].as_array().expect("runs");
    let values: i64 = (runs.iter()).map(|r| r[1].as_i64().expect("a count")).sum();
    assert!(n > 2_000_000 && values >= n - 7, "n = {n}, {runs:?}");
    let took = v["time_ms"].as_f64().expect("time_ms") / 1000.0;
    let plain = run(&format!("{:.3}", took.max(0.5)), &[]);
    assert_eq!(plain["end"], "incomplete", "{}", plain["stats"]);

    let text = apc(&["explore", &file, "--summarization", "--block-schedules"]);
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    let runs = (text.split("input=[").nth(1))
        .and_then(|rest| rest.split(']').next())
        .unwrap_or_else(|| panic!("no witness in {text}"));
    assert!(runs.contains('*'), "{runs}");
    let n = (text.split(" n=").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no n in {text}"));
    let replay = apc(&[
        "run",
        &file,
        "--args",
        &format!("n={n}"),
        "--input",
        runs,
        "--max-steps",
        "100000000",
    ]);
    let out = String::from_utf8_lossy(&replay.stdout);
    assert_eq!(replay.status.code(), Some(1), "{out}");
    assert!(out.contains("assert at") && out.contains(":9:22"), "{out}");
}

// ---- the generated programs' loops (docs/generator.md, "Why programs timed out") ----

/// A loop whose exit can no longer be taken after the first lap (its
/// guard stays true): with path subsumption, the second lap waits as the
/// thesis's `_t` says, even though it is the only way on, so the branch
/// waiting before the loop runs and its division is found. Without that,
/// the one path runs laps until the deadline.
#[test]
fn a_lap_past_t_waits_even_when_it_is_the_only_way_on() {
    let text = "main() { var a, b, x; a = input; b = 0;
        if (a != 5) { } else { x = 1 / 0; }
        while (b >= 0) { b = b + 1; }
        return 0; }";
    for s in [Strategy::Bfs, Strategy::Dfs, Strategy::Tree] {
        let mut o = options(s, Merging::None);
        o.subsumption = Some(AtChecks::Block);
        o.invariants_from_true = false;
        o.stop_at_first_error = true;
        o.max_steps = 200_000;
        let r = explore_text(text, &o);
        assert_eq!(found(&r), vec![(2, 38)], "{s:?}: {:?} {:?}", r.end, r.stats);
    }
}

/// A loop that never ends once entered (`x > 0` holds again after each
/// lap) guards a division by zero after it: the thesis's candidates (the
/// annotations after the loop: `false` here) prove nothing, the iteration
/// from `true` finds `x > 0` inductive, and every path is explored.
#[test]
fn an_invariant_from_true_proves_an_endless_loop_safe() {
    let text = "main() { var x, y; x = input;
        if (x > 0) { while (x > 0) { x = x + 1; } y = 1 / 0; }
        return 0; }";
    for from_true in [false, true] {
        let mut o = options(Strategy::Bfs, Merging::None);
        o.subsumption = Some(AtChecks::Conjoin);
        o.invariants_from_true = from_true;
        o.stop_at_first_error = true;
        o.max_steps = 5_000;
        let r = explore_text(text, &o);
        assert!(found(&r).is_empty(), "{from_true}: {:?}", r.errors);
        if from_true {
            assert_eq!(r.end, End::Complete, "{:?}", r.stats);
            assert!(r.stats.invariants >= 1, "{:?}", r.stats);
        } else {
            assert!(matches!(r.end, End::Incomplete(_)), "{:?}", r.end);
        }
    }
}

/// Two paths asked in turn, each with a long path condition of its own:
/// the session pops to the prefix they share and pushes the rest, and the
/// answers are those of the program (the division is reachable on one
/// path only, after 30 branches on the input).
#[test]
fn the_solver_session_follows_the_path_conditions() {
    let mut text = String::from("main() { var a, b, i, x; a = input; b = input; i = 0;\n");
    for k in 0..30 {
        text.push_str(&format!(
            "if (a > {k}) {{ i = i + 1; }} else {{ i = i - 1; }}\n"
        ));
    }
    text.push_str("if (i == 30) { if (b == a) { x = 1 / (b - 31); } }\nreturn 0; }");
    for s in [
        Strategy::Bfs,
        Strategy::Dfs,
        Strategy::Random,
        Strategy::Tree,
    ] {
        let mut o = options(s, Merging::None);
        o.max_steps = u64::MAX;
        o.timeout = Some(Duration::from_secs(20));
        let r = explore_text(&text, &o);
        assert_eq!(r.end, End::Complete, "{s:?}");
        assert_eq!(found(&r).len(), 1, "{s:?}");
        assert_eq!(r.stats.replay_failures, 0);
    }
}

/// `--tree`: a file whose extension says the format (and the JSON says how
/// big the tree is), `svg` on standard output in place of the report, a
/// cut tree that says so, and a refused file name; `apc compact --tree`
/// draws alike, each error leaf with its witness.
#[test]
fn the_tree_is_drawn_where_and_as_asked() {
    let file = |n: &str| programs_dir().join(n).display().to_string();
    let dir = std::env::temp_dir().join(format!("apc-tree-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dot = dir.join("t.dot");
    let out = apc(&[
        "explore",
        &file("thesis_4_6.mc"),
        "--merging",
        "aggressive",
        "--tree",
        dot.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let text = std::fs::read(&dot).expect("the tree's file");
    renders_with_dot(&text).expect("renders");
    let nodes = (String::from_utf8_lossy(&text).lines())
        .filter(|l| {
            let l = l.trim_start();
            l.starts_with('n')
                && l[1..].starts_with(|c: char| c.is_ascii_digit())
                && !l.contains("->")
        })
        .count();
    assert_eq!(j["tree"]["nodes"], nodes as u64, "{j}");
    assert_eq!(j["tree"]["cut"], false);
    let out = apc(&[
        "explore",
        &file("thesis_4_3.mc"),
        "--subsumption",
        "--tree",
        "svg",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let svg = String::from_utf8_lossy(&out.stdout);
    assert!(svg.contains("<svg") && svg.contains("subsumed"), "{svg}");
    let out = apc(&[
        "explore",
        &file("thesis_4_6.mc"),
        "--tree",
        "dot",
        "--tree-nodes",
        "3",
    ]);
    let (picture, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        picture.contains("cut at 3 nodes") && err.contains("cut at 3 nodes"),
        "{picture}{err}"
    );
    let out = apc(&["explore", &file("thesis_4_6.mc"), "--tree", "tree.txt"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("expected dot, svg"), "{err}");
    let out = apc(&[
        "compact",
        &file("compact_linsrch_found.mc"),
        "--tree",
        "svg",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let svg = String::from_utf8_lossy(&out.stdout);
    assert!(
        svg.contains("<svg") && svg.contains("error: assert at 20:5"),
        "{svg}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
