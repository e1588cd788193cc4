//! `apc explore`: the thesis's symbolic executor (the contract: `docs/cli.md`).

use super::check::{SolverArgs, witness_json};
use super::{ExitStatus, Format, bad, limits, load};
use crate::explore::{self, End, IndexMode, Merging, Options, Report, Stats, Strategy};
use clap::{Args, ValueEnum};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StrategyChoice {
    /// Oldest state first.
    Bfs,
    /// Newest state first.
    Dfs,
    /// A uniformly random state (reproducible with --seed).
    Random,
    /// KLEE's random path: a random walk down the execution tree.
    Tree,
    /// Random, weighted by 1 / distance to the nearest statement not run yet.
    Coverage,
    /// `tree` and `coverage` in turn.
    Klee,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MergingChoice {
    /// Never merge: one state per path.
    None,
    /// Merge every two states at the same location and call stack.
    Aggressive,
    /// Merge when the query-count estimate (a data-flow fixpoint, capped at
    /// 10) of the differing variables sums below --limit-cost.
    Lattice,
    /// As `lattice`, with the estimate counting each loop at most --kappa times.
    Recursive,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum IndexChoice {
    /// A symbolic index reads an `ite` over the cells it may select.
    Ite,
    /// A symbolic index forks one state per cell it may select.
    Fork,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ChecksChoice {
    /// A check's safety condition joins the annotation (the thesis's
    /// listing 5.7): paths through checks can still be pruned.
    Conjoin,
    /// Nothing propagates past a check (the thesis's own tool, listing 5.6).
    Block,
}

#[derive(Args, Debug)]
pub struct ExploreArgs {
    /// The microc source file.
    pub file: PathBuf,
    /// Which waiting state runs next.
    #[arg(long, value_enum, default_value_t = StrategyChoice::Bfs)]
    pub strategy: StrategyChoice,
    /// When two states at the same location and call stack become one.
    #[arg(long, value_enum, default_value_t = MergingChoice::None)]
    pub merging: MergingChoice,
    /// `lattice`/`recursive`: merge when the estimated future queries over the
    /// variables whose values differ sum below this (at least 0).
    #[arg(long, default_value_t = 1.0, value_name = "X", value_parser = cost)]
    pub limit_cost: f64,
    /// `recursive`: how many iterations of each loop the estimate counts (0 to 255).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=255))]
    pub kappa: u32,
    /// What a symbolic index into a local array makes of the state.
    #[arg(long, value_enum, default_value_t = IndexChoice::Ite)]
    pub index: IndexChoice,
    /// Path subsumption: when a path ends, the vertices of main it ran
    /// through are annotated with conditions under which no error follows
    /// (weakest preconditions; loop invariants when found inductive), and
    /// a state whose path condition implies its vertex's annotation is
    /// pruned. Proves programs error-free that plain exploration cannot
    /// finish (unbounded loops).
    #[arg(long)]
    pub subsumption: bool,
    /// With --subsumption: what an annotation makes of a statement that may fail.
    #[arg(long, value_enum, default_value_t = ChecksChoice::Conjoin, value_name = "HOW", requires = "subsumption")]
    pub at_checks: ChecksChoice,
    /// Explore towards the target at this place only (`LINE` or `LINE:COL`):
    /// states whose path condition contradicts the target's necessary
    /// condition are dropped, the state nearest to the target runs first,
    /// and the run stops when the target is reached. "every path explored"
    /// then proves that target unreachable (and says nothing of the others).
    #[arg(long, value_name = "LINE[:COL]")]
    pub guided: Option<String>,
    /// With --subsumption: print main's annotations at the end, by source
    /// line, as the thesis writes them beside its listings.
    #[arg(long, requires = "subsumption")]
    pub show_annotations: bool,
    /// Wall-clock limit in seconds for the whole exploration (greater than 0).
    #[arg(long, default_value = "30", value_name = "SECS", value_parser = limits::seconds, allow_negative_numbers = true)]
    pub timeout: Duration,
    /// Stop after running this many edges over all paths.
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u64>,
    /// Stop after this many paths ran to their end.
    #[arg(long, value_name = "N")]
    pub max_paths: Option<u64>,
    /// Stop (incomplete, exit 3) when the run has allocated this much memory (live, in
    /// MiB, at least 64), rather than be killed by the system.
    #[arg(long, value_name = "MIB", default_value_t = explore::DEFAULT_MAX_MEMORY_MIB, value_parser = clap::value_parser!(u64).range(64..=1 << 30))]
    pub max_memory: u64,
    /// Seed of the random choices (`random`, `tree`, `coverage`, `klee`).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Loop summarisation (the thesis's §4.4): a state that enters a loop
    /// leaves it at once, one state per trace of the loop's summary (its
    /// path dependency automaton, with path counters for the iterations).
    /// Loops that are not summarisable (calls, pointers, arrays, outputs,
    /// possible errors in the body, NIV conditions, irregular interleaving)
    /// run as usual; the report says why.
    #[arg(long)]
    pub summarization: bool,
    /// Witnesses through loops with no summary: a state entering such a loop also
    /// leaves it as blocks, each one path repeated a symbolic number of times, reading
    /// one input value per read in the block (a run such as `0*1999994` in the
    /// witness). The states go beside the loop's own iterations, so proofs are
    /// unchanged.
    #[arg(long)]
    pub block_schedules: bool,
    /// Report every target an error path reaches (once each) and go on;
    /// by default exploration stops at the first error, as the thesis's does.
    #[arg(long)]
    pub all_errors: bool,
    /// Ask the other solver (cvc5 for z3, z3 for cvc5) about a check the
    /// chosen one leaves `unknown` within 300 ms (nonlinear arithmetic)
    #[arg(long)]
    pub second_opinion: bool,
    /// Draw the symbolic execution tree: `dot` or `svg` (also `png`, `pdf`)
    /// on standard output in place of the report, or a file whose extension
    /// says the format (`tree.dot`, `tree.svg`). Forks are labelled with
    /// their branch conditions; merged states meet in joins; subsumed,
    /// infeasible and dropped states are marked leaves; a summarised loop is
    /// one bold edge per way out; each error leaf carries its witness.
    /// Formats other than DOT need Graphviz's `dot`.
    #[arg(long, value_name = "FORMAT|FILE", value_parser = super::tree_output::parse)]
    pub tree: Option<super::tree_output::TreeOutput>,
    /// With --tree: the most nodes drawn (the picture says where it was cut).
    #[arg(long, value_name = "N", default_value_t = 500, requires = "tree", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub tree_nodes: u64,
    #[command(flatten)]
    pub solvers: SolverArgs,
    /// Output format: text, or one JSON object.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

fn cost(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("expected a number at least 0 (got `{s}`)")),
    }
}

pub fn explore(a: ExploreArgs) -> ExitCode {
    let solver = match a.solvers.locate_one("explore") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let loaded = match load(&a.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let mut opts = options(&a, solver.clone());
    if a.second_opinion {
        let (kind, flag) = match solver.name.as_str() {
            "z3" => (crate::smt::SolverKind::Cvc5, a.solvers.cvc5.as_deref()),
            _ => (crate::smt::SolverKind::Z3, a.solvers.z3.as_deref()),
        };
        match crate::smt::locate(kind, flag) {
            Ok(p) => opts.second_opinion = Some(p),
            Err(e) => return bad(&e),
        }
    }
    if let Some(place) = &a.guided {
        let all = crate::check::targets(&loaded.db, loaded.file);
        let goal =
            match super::places::targets_at_places(&loaded.path, &all, std::slice::from_ref(place))
            {
                Ok(mut ts) if ts.len() == 1 => ts.remove(0),
                Ok(_) => {
                    return bad(&format!(
                        "--guided {place}: several targets there; give LINE:COL"
                    ));
                }
                Err(code) => return code,
            };
        let check_opts = crate::check::CheckOptions::new(vec![solver], a.timeout);
        opts.guide = Some(explore::Guide {
            goal,
            nc: crate::nc::engine_options(&check_opts),
        });
    }
    let bar = super::progress(0, "{spinner} {elapsed} {msg}");
    let shown = bar.clone();
    opts.progress = Some(Box::new(move |s: &Stats| {
        shown.set_message(format!(
            "{} paths, {} waiting, {} queries, {}/{} edges",
            s.paths, s.worklist, s.queries, s.covered_edges, s.total_edges
        ));
        shown.tick();
    }));
    let report = explore::explore(&loaded.db, loaded.file, &opts);
    bar.finish_and_clear();
    let mut report = match report {
        Ok(r) => r,
        Err(e) => return bad(&e),
    };
    if let Some(out) = &a.tree {
        if let Err(e) = draw(&loaded.path, &mut report, out) {
            return bad(&e);
        }
        if out.replaces_report() {
            return exit_status(&report).into();
        }
    }
    match a.format {
        Format::Text => print_text(&loaded.path, &a, &report),
        Format::Json => print_json(&loaded.path, &a, &report),
    }
    exit_status(&report).into()
}

/// `--tree`: the run's tree, titled with the file and how the run ended.
fn draw(path: &str, r: &mut Report, out: &super::tree_output::TreeOutput) -> Result<(), String> {
    let title = format!("{path}: {}", end_text(r));
    let Some(tree) = &mut r.tree else {
        return Err("the run drew no tree".into());
    };
    tree.title = title;
    out.write(&tree.to_dot())?;
    if tree.cut {
        eprintln!(
            "apc: the tree was cut at {} nodes (--tree-nodes)",
            tree.limit
        );
    }
    Ok(())
}

pub(super) fn strategy(s: StrategyChoice) -> Strategy {
    match s {
        StrategyChoice::Bfs => Strategy::Bfs,
        StrategyChoice::Dfs => Strategy::Dfs,
        StrategyChoice::Random => Strategy::Random,
        StrategyChoice::Tree => Strategy::Tree,
        StrategyChoice::Coverage => Strategy::Coverage,
        StrategyChoice::Klee => Strategy::Klee,
    }
}

pub(super) fn merging(m: MergingChoice) -> Merging {
    match m {
        MergingChoice::None => Merging::None,
        MergingChoice::Aggressive => Merging::Aggressive,
        MergingChoice::Lattice => Merging::Lattice,
        MergingChoice::Recursive => Merging::Recursive,
    }
}

fn options(a: &ExploreArgs, solver: crate::smt::Profile) -> Options {
    let mut o = Options::new(solver);
    o.strategy = strategy(a.strategy);
    o.merging = merging(a.merging);
    o.subsumption = a.subsumption.then_some(match a.at_checks {
        ChecksChoice::Conjoin => explore::AtChecks::Conjoin,
        ChecksChoice::Block => explore::AtChecks::Block,
    });
    o.index_mode = match a.index {
        IndexChoice::Ite => IndexMode::Ite,
        IndexChoice::Fork => IndexMode::Fork,
    };
    o.limit_cost = a.limit_cost;
    o.kappa = a.kappa;
    o.timeout = Some(a.timeout);
    o.max_steps = a.max_steps.unwrap_or(u64::MAX);
    o.max_paths = a.max_paths.unwrap_or(u64::MAX);
    o.max_memory_mib = a.max_memory;
    o.seed = a.seed;
    o.stop_at_first_error = !a.all_errors;
    o.summarization = a.summarization;
    o.block_schedules = a.block_schedules;
    o.tree = a.tree.is_some().then_some(a.tree_nodes as usize);
    o
}

/// 1 an error was found, 0 every path explored without one, 3 stopped
/// at a limit (or some paths were not decided) with none found.
fn exit_status(r: &Report) -> ExitStatus {
    if !r.errors.is_empty() {
        ExitStatus::Found
    } else if r.end == End::Complete {
        ExitStatus::Ok
    } else {
        ExitStatus::Undecided
    }
}

fn end_text(r: &Report) -> String {
    match &r.end {
        End::Complete if r.errors.is_empty() => "every path explored: no error".into(),
        End::Complete => "every path explored".into(),
        End::ErrorFound => "stopped at the first error".into(),
        End::Incomplete(why) => format!("stopped before every path was explored: {why}"),
    }
}

fn print_text(path: &str, a: &ExploreArgs, r: &Report) {
    for e in &r.errors {
        let t = &e.target;
        outln!(
            "{path}:{}:{}: {} in {}: reachable with {} (found after {:.1} ms)",
            t.line,
            t.col,
            t.kind.as_str(),
            t.function,
            &e.witness,
            super::rounded_ms(e.found_after, 1)
        );
    }
    let s = &r.stats;
    outln!(
        "{} paths in {} runs ({} error paths, {} not decided), {} pruned branches, {} merges, {} queries ({} decided without the solver, {:.1} ms in the solver), {}/{} edges covered, {} steps",
        s.paths,
        s.runs,
        s.error_paths,
        s.undecided_paths,
        s.pruned,
        s.states_merged,
        s.queries,
        s.decided_locally,
        super::rounded_ms(s.solver_time, 1),
        s.covered_edges,
        s.total_edges,
        s.steps
    );
    if a.subsumption {
        outln!(
            "subsumption: {} paths pruned ({} states checked), {} loop invariants kept, {} candidates not inductive",
            s.subsumed,
            s.annotation_checks,
            s.invariants,
            s.invariants_refuted
        );
    }
    if let Some(g) = &a.guided {
        outln!(
            "guided to {g}: {} states dropped (cannot reach it){}",
            s.off_course,
            s.guide_note
                .as_ref()
                .map(|n| format!("; not guided by its condition: {n}"))
                .unwrap_or_default()
        );
    }
    if a.show_annotations {
        for (line, text) in &r.annotations {
            outln!("  line {line}: {text}");
        }
    }
    if a.summarization {
        outln!(
            "loop summarisation: {} loops summarised, {} not summarisable, {} summaries applied",
            s.loops_summarised,
            s.loops_not_summarisable,
            s.summaries_applied
        );
        for why in &s.not_summarisable_reasons {
            outln!("  not summarisable: {why}");
        }
    }
    if a.block_schedules {
        outln!(
            "block schedules: {} states left a loop by one",
            s.schedules_applied
        );
    }
    outln!(
        "{}; strategy {}, merging {} ({:.1} ms)",
        end_text(r),
        value_name(a.strategy.to_possible_value()),
        value_name(a.merging.to_possible_value()),
        super::rounded_ms(s.elapsed, 1)
    );
}

/// A flag value as the command line spells it.
fn value_name(v: Option<clap::builder::PossibleValue>) -> String {
    v.map(|v| v.get_name().to_string()).unwrap_or_default()
}

fn print_json(path: &str, a: &ExploreArgs, r: &Report) {
    let errors: Vec<serde_json::Value> = r
        .errors
        .iter()
        .map(|e| {
            let t = &e.target;
            json!({
                "kind": t.kind.as_str(),
                "function": t.function,
                "line": t.line,
                "col": t.col,
                "witness": witness_json(&e.witness),
                "found_after_ms": super::rounded_ms(e.found_after, 1),
            })
        })
        .collect();
    let s = &r.stats;
    let (end, reason) = match &r.end {
        End::Complete => ("complete", None),
        End::ErrorFound => ("error-found", None),
        End::Incomplete(why) => ("incomplete", Some(why.clone())),
    };
    let out = json!({
        "file": path,
        "strategy": value_name(a.strategy.to_possible_value()),
        "merging": value_name(a.merging.to_possible_value()),
        "summarization": a.summarization,
        "block_schedules": a.block_schedules,
        "end": end,
        "reason": reason,
        "errors": errors,
        "first_error": errors.first(),
        "stats": {
            "paths": s.paths,
            "runs": s.runs,
            "error_paths": s.error_paths,
            "undecided_paths": s.undecided_paths,
            "undecided_reasons": s.undecided_reasons,
            "pruned_branches": s.pruned,
            "states_merged": s.states_merged,
            "merges_refused": s.merges_refused,
            "merge_sites_blacklisted": s.blacklisted,
            "queries": s.queries,
            "decided_without_solver": s.decided_locally,
            "second_opinions": s.second_opinions,
            "solver_ms": super::rounded_ms(s.solver_time, 1),
            "steps": s.steps,
            "covered_edges": s.covered_edges,
            "total_edges": s.total_edges,
            "replay_failures": s.replay_failures,
            "subsumed_paths": s.subsumed,
            "annotation_checks": s.annotation_checks,
            "invariants": s.invariants,
            "invariants_refuted": s.invariants_refuted,
            "off_course": s.off_course,
            "loops_summarised": s.loops_summarised,
            "loops_not_summarisable": s.loops_not_summarisable,
            "not_summarisable_reasons": s.not_summarisable_reasons,
            "summaries_applied": s.summaries_applied,
            "schedules_applied": s.schedules_applied,
        },
        "tree": r.tree.as_ref().map(|t| json!({"nodes": t.nodes.len(), "cut": t.cut})),
        "guided": a.guided,
        "guide_note": s.guide_note,
        "subsumption": a.subsumption.then(|| value_name(a.at_checks.to_possible_value())),
        "annotations": r.annotations.iter().map(|(line, text)| json!({"line": line, "annotation": text})).collect::<Vec<_>>(),
        "time_ms": super::rounded_ms(s.elapsed, 1),
    });
    outln!("{out:#}");
}
