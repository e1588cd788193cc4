//! `apc compact`: compact symbolic execution (`docs/compact-se.md`; the
//! contract: `docs/cli.md`).

use super::check::{SolverArgs, show_witness, witness_json};
use super::{ExitStatus, Format, bad, limits, load};
use crate::compact::{self, Options, print};
use clap::{Args, ValueEnum};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TreeFormat {
    /// Graphviz (render with `dot -Tpng`).
    Dot,
}

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
    /// Draw the tree instead of listing it.
    #[arg(long, value_enum)]
    pub tree: Option<TreeFormat>,
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
    let (cv, cl) = tree.condensed_size();
    let complete = tree.is_complete();
    if a.tree.is_some() {
        out!("{}", print::dot(&tree));
    } else if a.format == Format::Json {
        let mut j = print::json(&tree);
        j["complete"] = json!(complete);
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
        outln!("{j}");
    } else {
        if a.parts {
            for p in &parts {
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
        out!("{}", print::text(&tree));
        for e in &errors {
            outln!("{}", error_line(e));
        }
        outln!(
            "{} tree: {} vertices, {} leaves; condensed (the figures' granularity): {} vertices; {}; {} solver queries ({} quantified, {} unknown) in {:.2} s",
            if a.classic { "classic" } else { "compact" },
            tree.vertices.len(),
            cl,
            cv,
            match &tree.stopped {
                Some(why) => format!("incomplete: stopped at the {why}"),
                None if complete => "complete".to_string(),
                None => "incomplete: a path could not go on".to_string(),
            },
            tree.queries,
            tree.quantified_queries,
            tree.unknown_answers,
            tree.elapsed.as_secs_f64()
        );
    }
    let status = if errors.iter().any(|e| e.witness.is_ok()) {
        ExitStatus::Found
    } else if complete && tree.unknown_answers == 0 && errors.is_empty() {
        ExitStatus::Ok
    } else {
        ExitStatus::Undecided
    };
    status.into()
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

fn error_line(e: &ErrorLeaf) -> String {
    let at = match &e.target {
        Some(t) => format!(
            "{} at {}:{} in {}",
            t.kind.as_str(),
            t.line,
            t.col,
            t.function
        ),
        None => "an error".into(),
    };
    match &e.witness {
        Ok(w) => format!(
            "v{}: {at}: reachable with {} (replayed)",
            e.vertex,
            show_witness(w)
        ),
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
