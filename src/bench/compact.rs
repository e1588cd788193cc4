//! `apc bench compact`: the sizes of the classic and the compact symbolic
//! execution trees (`docs/compact-se.md` §7.7) on the paper's figures and
//! the thesis's listings. The classic tree is bounded by a vertex limit
//! and a time limit, and says so when one stopped it.

use crate::compact::{self, Options, Tree};
use crate::db::Database;
use crate::smt::Profile;
use std::time::Duration;

macro_rules! program {
    ($file:literal, $start:literal) => {
        (
            $file,
            $start,
            include_str!(concat!("../../tests/programs/", $file)),
        )
    };
}

/// (file, starting function, source): the figures, from the function the
/// figure draws and from `main`, then the thesis's listings.
pub const PROGRAMS: &[(&str, &str, &str)] = &[
    program!("compact_linsrch.mc", "linSrch"),
    program!("compact_linsrch.mc", "main"),
    program!("compact_countif.mc", "countIf"),
    program!("compact_linsrch_rec.mc", "linSrch"),
    program!("compact_linsrch_rec.mc", "main"),
    program!("compact_last_value.mc", "main"),
    program!("thesis_2_1.mc", "main"),
    program!("thesis_3_1.mc", "main"),
    program!("thesis_3_2.mc", "main"),
    program!("thesis_4_1.mc", "main"),
    program!("thesis_4_2.mc", "main"),
    program!("thesis_4_3.mc", "main"),
    program!("thesis_4_5.mc", "main"),
    program!("thesis_4_6.mc", "main"),
    program!("thesis_4_8.mc", "main"),
    program!("thesis_4_9.mc", "main"),
    program!("thesis_4_10.mc", "main"),
    program!("thesis_4_11.mc", "main"),
    program!("thesis_4_12.mc", "main"),
    program!("thesis_4_13.mc", "main"),
    program!("thesis_5_3.mc", "main"),
    program!("thesis_5_4.mc", "main"),
    program!("thesis_5_5.mc", "main"),
    program!("thesis_5_6.mc", "main"),
    program!("thesis_5_7.mc", "main"),
];

/// One tree's figures.
#[derive(Clone, Debug)]
pub struct Size {
    pub vertices: usize,
    pub leaves: usize,
    /// At the figures' granularity (`Tree::condensed_size`).
    pub condensed: usize,
    /// `complete`, or why not.
    pub end: String,
    pub queries: u64,
    pub time: Duration,
}

/// One program's row.
#[derive(Clone, Debug)]
pub struct Row {
    pub program: &'static str,
    pub start: &'static str,
    pub classic: Size,
    pub compact: Size,
    /// Templates the compact run could use.
    pub templates: usize,
}

fn size(t: &Tree) -> Size {
    let (condensed, leaves) = t.condensed_size();
    let end = match (&t.stopped, t.is_complete()) {
        (Some(why), _) => format!("stopped: {why}"),
        (None, true) => "complete".to_string(),
        (None, false) => {
            let why = t
                .vertices
                .iter()
                .find_map(|v| match &v.end {
                    compact::End::Stuck(w) => Some(w.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            format!("stuck: {why}")
        }
    };
    Size {
        vertices: t.vertices.len(),
        leaves,
        condensed,
        end,
        queries: t.queries,
        time: t.elapsed,
    }
}

fn tree(
    source: &str,
    file: &str,
    start: &str,
    profile: &Profile,
    opts: &Options,
) -> Result<Tree, String> {
    let (db, f) = Database::with_file(file, source);
    match compact::execute(&db, f, start, profile, opts) {
        Ok((t, _)) => Ok(t),
        Err(e) => Err(format!("{e:?}")),
    }
}

/// Every program's row: the classic tree bounded by `max_vertices` and
/// `timeout`, the compact one under the same limits.
pub fn rows(profile: &Profile, max_vertices: usize, timeout: Duration) -> Vec<Result<Row, String>> {
    PROGRAMS
        .iter()
        .map(|(file, start, source)| {
            let opts = |compact| Options {
                compact,
                one_parameter: false,
                max_vertices,
                timeout: Some(timeout),
                per_query: timeout,
            };
            let classic = tree(source, file, start, profile, &opts(false))?;
            let compact_tree = tree(source, file, start, profile, &opts(true))?;
            Ok(Row {
                program: file,
                start,
                classic: size(&classic),
                compact: size(&compact_tree),
                templates: compact_tree.templates.len(),
            })
        })
        .collect()
}
