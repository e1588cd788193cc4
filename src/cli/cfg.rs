//! `apc cfg`: the flowgraphs, as text or Graphviz.

use super::{ExitStatus, load};
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
        out!("{}", ir::to_dot(&bodies, &|b, s| loc(find(b), s)));
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
