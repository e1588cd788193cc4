//! `apc compact`: compact symbolic execution (`docs/compact-se.md`; the
//! contract: `docs/cli.md`).

use super::check::{SolverArgs, witness_json};
use super::{ExitStatus, Format, bad, limits, load};
use crate::compact::{self, Options, print};
use crate::engine::picture::Mark;
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct CompactArgs {
    /// The microc source file.
    pub file: PathBuf,
    /// The starting function (its parameters symbolic; array parameters are
    /// input arrays).
    #[arg(long, default_value = "main")]
    pub function: String,
    /// Build the classic (King's) tree instead, without templates: the
    /// baseline, bounded by --max-vertices and --timeout.
    #[arg(long)]
    pub classic: bool,
    /// Only templates with one parameter, as in the paper (a loop with
    /// several cycles then gives a chain instead of one template per loop).
    #[arg(long)]
    pub one_parameter: bool,
    /// Stop after this many tree vertices (the classic tree, and a compact
    /// one with a loop no template covers, can be infinite).
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub max_vertices: usize,
    /// Wall-clock limit in seconds for the whole run (greater than 0).
    #[arg(long, default_value = "30", value_name = "SECS", value_parser = limits::seconds, allow_negative_numbers = true)]
    pub timeout: Duration,
    /// Print the parts the detector found and what became of each.
    #[arg(long)]
    pub parts: bool,
    /// Draw the tree as `apc explore --tree` draws its own: `dot` or `svg`
    /// (also `png`, `pdf`) on standard output in place of the listing, or a
    /// file whose extension says the format. Formats other than DOT need
    /// Graphviz's `dot`.
    #[arg(long, value_name = "FORMAT|FILE", value_parser = super::tree_output::parse)]
    pub tree: Option<super::tree_output::TreeOutput>,
    /// Output format: the indented tree, or one JSON object.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub solvers: SolverArgs,
}

pub fn compact(a: CompactArgs) -> ExitCode {
    let solver = match a.solvers.locate_one("compact") {
        Ok(s) => s,
        Err(code) => return code,
    };
    if a.max_vertices == 0 {
        return bad("--max-vertices must be at least 1");
    }
    let loaded = match load(&a.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let opts = Options {
        compact: !a.classic,
        one_parameter: a.one_parameter,
        max_vertices: a.max_vertices,
        timeout: Some(a.timeout),
        per_query: a.timeout,
    };
    let (mut tree, parts) =
        match compact::execute(&loaded.db, loaded.file, &a.function, &solver, &opts) {
            Ok(r) => r,
            Err(compact::Failure::BadInput(e)) => return bad(&e),
            Err(compact::Failure::Timeout(e)) => {
                eprintln!("apc: {e}");
                return ExitStatus::Undecided.into();
            }
        };
    let errors = error_witnesses(&loaded, &mut tree, &solver, a.timeout);
    if let Some(out) = &a.tree
        && let Err(e) = draw(&a, &loaded.path, &tree, &errors, out)
    {
        return bad(&e);
    }
    let shown = a.tree.as_ref().is_none_or(|t| !t.replaces_report());
    match a.format {
        _ if !shown => {}
        Format::Json => outln!("{}", report_json(&tree, &errors, &parts)),
        Format::Text => print_text(&a, &tree, &errors, &parts),
    }
    let status = if errors.iter().any(|e| e.witness.is_ok()) {
        ExitStatus::Found
    } else if tree.is_complete() && tree.unknown_answers == 0 && errors.is_empty() {
        ExitStatus::Ok
    } else {
        ExitStatus::Undecided
    };
    status.into()
}

/// `--tree`: the tree drawn where asked.
fn draw(
    a: &CompactArgs,
    path: &str,
    tree: &compact::Tree,
    errors: &[ErrorLeaf],
    out: &super::tree_output::TreeOutput,
) -> Result<(), String> {
    let kind = if a.classic { "classic" } else { "compact" };
    let title = format!("{path}: {kind} tree of {}", a.function);
    let picture = print::picture(tree, &title, &|v| error_mark(errors, v));
    out.write(&picture.to_dot())
}

fn report_json(
    tree: &compact::Tree,
    errors: &[ErrorLeaf],
    parts: &[compact::PartReport],
) -> serde_json::Value {
    let (cv, cl) = tree.condensed_size();
    let mut j = print::json(tree);
    j["complete"] = json!(tree.is_complete());
    j["stopped"] = json!(tree.stopped);
    j["vertices_total"] = json!(tree.vertices.len());
    j["leaves"] = json!(cl);
    j["condensed_vertices"] = json!(cv);
    j["queries"] = json!(tree.queries);
    j["errors"] = json!(errors.iter().map(error_json).collect::<Vec<_>>());
    j["quantified_queries"] = json!(tree.quantified_queries);
    j["unknown_answers"] = json!(tree.unknown_answers);
    j["parts"] = json!(
        parts
            .iter()
            .map(|p| json!({"function": p.function, "entry": p.entry, "recursive": p.recursive, "cycle": p.cycle, "outcome": p.outcome}))
            .collect::<Vec<_>>()
    );
    j
}

fn print_text(
    a: &CompactArgs,
    tree: &compact::Tree,
    errors: &[ErrorLeaf],
    parts: &[compact::PartReport],
) {
    if a.parts {
        for p in parts {
            outln!(
                "part {}@{} {} cycle {:?}: {}",
                p.function,
                p.entry,
                if p.recursive { "(recursion)" } else { "(loop)" },
                p.cycle,
                p.outcome
            );
        }
    }
    out!("{}", print::text(tree));
    for e in errors {
        outln!("{}", error_line(e));
    }
    let (cv, cl) = tree.condensed_size();
    outln!(
        "{} tree: {} vertices, {} leaves; condensed (the figures' granularity): {} vertices; {}; {} solver queries ({} quantified, {} unknown) in {:.2} s",
        if a.classic { "classic" } else { "compact" },
        tree.vertices.len(),
        cl,
        cv,
        match &tree.stopped {
            Some(why) => format!("incomplete: stopped at the {why}"),
            None if tree.is_complete() => "complete".to_string(),
            None => "incomplete: a path could not go on".to_string(),
        },
        tree.queries,
        tree.quantified_queries,
        tree.unknown_answers,
        tree.elapsed.as_secs_f64()
    );
}

/// An error leaf of the tree with its replayed witness, or why it has none.
struct ErrorLeaf {
    vertex: usize,
    target: Option<crate::db::Target>,
    witness: Result<crate::interp::Witness, String>,
}

/// Every error leaf of the tree, each with a witness from a model of its
/// path condition that the interpreter replayed to its target.
fn error_witnesses(
    loaded: &super::Loaded,
    tree: &mut compact::Tree,
    profile: &crate::smt::Profile,
    timeout: Duration,
) -> Vec<ErrorLeaf> {
    let targets = crate::db::targets(&loaded.db, loaded.file);
    let leaves = compact::witness::error_leaves(tree, &targets);
    let parsed = crate::db::parse(&loaded.db, loaded.file);
    let replay =
        crate::witness::Replayer::new(&parsed.program, loaded.file.text(&loaded.db), &targets);
    let deadline = std::time::Instant::now() + timeout;
    let mut solver = compact::solver::Solver::new(profile.clone(), timeout, Some(deadline));
    let found = compact::witness::witnesses(tree, &leaves, &mut solver, &replay, true);
    (found.into_iter())
        .map(|(v, witness)| {
            let target = compact::witness::target_of(tree, v, &targets).cloned();
            ErrorLeaf {
                vertex: v,
                target,
                witness,
            }
        })
        .collect()
}

/// An error vertex's mark in the picture: its witness, or why none.
fn error_mark(errors: &[ErrorLeaf], vertex: usize) -> Mark {
    let Some(e) = errors.iter().find(|e| e.vertex == vertex) else {
        return Mark::Undecided("an error vertex without a target".into());
    };
    let target = match &e.target {
        Some(t) => t.label(),
        None => "an error".into(),
    };
    match &e.witness {
        Ok(w) => Mark::Error {
            target,
            witness: w.to_string(),
        },
        Err(why) => Mark::Undecided(format!("{target}: no witness that replays ({why})")),
    }
}

fn error_line(e: &ErrorLeaf) -> String {
    let at = match &e.target {
        Some(t) => format!("{} in {}", t.label(), t.function),
        None => "an error".into(),
    };
    match &e.witness {
        Ok(w) => format!("v{}: {at}: reachable with {} (replayed)", e.vertex, w),
        Err(why) => format!("v{}: {at}: no witness that replays ({why})", e.vertex),
    }
}

fn error_json(e: &ErrorLeaf) -> serde_json::Value {
    let (witness, reason) = match &e.witness {
        Ok(w) => (witness_json(w), serde_json::Value::Null),
        Err(why) => (serde_json::Value::Null, json!(why)),
    };
    json!({
        "vertex": e.vertex,
        "kind": e.target.as_ref().map(|t| t.kind.as_str()),
        "function": e.target.as_ref().map(|t| t.function.clone()),
        "line": e.target.as_ref().map(|t| t.line),
        "col": e.target.as_ref().map(|t| t.col),
        "witness": witness,
        "reason": reason,
    })
}
