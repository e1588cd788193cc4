//! `apc cfg`: the flowgraphs, as text or Graphviz.

use super::{ExitStatus, load};
use crate::check::{self, Verdict};
use crate::db;
use crate::ir;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CfgArgs {
    /// The microc source file.
    pub file: PathBuf,
    /// Write Graphviz (one cluster per function) instead of text.
    #[arg(long)]
    pub dot: bool,
    /// Only this function.
    #[arg(long)]
    pub function: Option<String>,
    /// With `--dot`: check every target first (as `apc check` does) and colour each
    /// target's error vertex and the edges into it by its verdict: red reachable, green
    /// unreachable, orange unknown, the verdict under its label.
    #[arg(long, requires = "dot")]
    pub verdicts: bool,
    /// With `--verdicts`: the time limit per target in seconds.
    #[arg(long, default_value = "30", value_name = "SECS", value_parser = super::limits::seconds, requires = "verdicts")]
    pub timeout: std::time::Duration,
    #[command(flatten)]
    pub solvers: super::check::SolverArgs,
}

/// Every target's verdict, by `apc check`'s portfolio.
fn verdicts(
    a: &CfgArgs,
    loaded: &super::Loaded,
) -> Result<Vec<(check::Target, Verdict)>, ExitCode> {
    if db::program(&loaded.db, loaded.file).is_none() {
        eprintln!("error: {}: the program has no `main`", loaded.path);
        return Err(ExitStatus::BadInput.into());
    }
    let opts = check::CheckOptions::new(a.solvers.locate()?, a.timeout);
    let targets = check::targets(&loaded.db, loaded.file);
    let bar = super::progress(targets.len(), "{bar:30} {pos}/{len} targets {elapsed}");
    let reports = check::check_all(&loaded.db, loaded.file, &targets, &opts, &|_| bar.inc(1));
    bar.finish_and_clear();
    Ok(reports.into_iter().map(|r| (r.target, r.verdict)).collect())
}

pub fn cfg(a: CfgArgs) -> ExitCode {
    let loaded = match load(&a.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let db = &loaded.db;
    let items: Vec<_> = db::functions(db, loaded.file)
        .iter()
        .copied()
        .filter(|f| a.function.as_ref().is_none_or(|n| f.name(db) == n))
        .collect();
    if items.is_empty() {
        eprintln!(
            "error: no function named `{}`",
            a.function.unwrap_or_default()
        );
        return ExitStatus::BadInput.into();
    }
    let loc = |offset: u32, span: crate::syntax::Span| {
        let (l, c) = loaded.loc(span.shift(offset));
        format!("{l}:{c}")
    };
    if a.dot {
        let bodies: Vec<&ir::Body> = items.iter().map(|f| db::function_body(db, *f)).collect();
        let offsets: Vec<(String, u32)> = items
            .iter()
            .map(|f| (f.name(db).clone(), f.offset(db)))
            .collect();
        let find = |b: &ir::Body| {
            offsets
                .iter()
                .find(|(n, _)| *n == b.name)
                .map(|(_, o)| *o)
                .unwrap_or(0)
        };
        let verdicts = match a.verdicts {
            true => match verdicts(&a, &loaded) {
                Ok(v) => v,
                Err(code) => return code,
            },
            false => vec![],
        };
        let mark = |b: &ir::Body, t: ir::TargetId| -> Option<ir::TargetMark> {
            let (_, verdict) = verdicts
                .iter()
                .find(|(r, _)| r.function == b.name && r.id == t)?;
            let (vertex, edges) = match verdict {
                Verdict::Reachable(_) => (", color=red, fontcolor=red, penwidth=2", "red"),
                Verdict::Unreachable => {
                    (", color=forestgreen, fontcolor=forestgreen", "forestgreen")
                }
                Verdict::Unknown(_) => (", color=orange, fontcolor=darkorange", "orange"),
            };
            Some(ir::TargetMark {
                vertex,
                edges,
                word: verdict.name().to_string(),
            })
        };
        out!(
            "{}",
            ir::to_dot_with(&bodies, &|b, s| loc(find(b), s), &mark)
        );
    } else {
        for (i, f) in items.iter().enumerate() {
            if i > 0 {
                outln!();
            }
            let offset = f.offset(db);
            out!(
                "{}",
                ir::to_text(db::function_body(db, *f), &|s| loc(offset, s))
            );
        }
    }
    ExitStatus::Ok.into()
}
