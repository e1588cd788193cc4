//! `--target LINE[:COL]`: choosing targets by their place in the source.

use super::bad;
use crate::db::Target;
use std::process::ExitCode;

/// A `LINE[:COL]` place.
fn parse_place(s: &str) -> Option<(u32, Option<u32>)> {
    let (l, c) = match s.split_once(':') {
        Some((l, c)) => (l, Some(c.trim().parse().ok()?)),
        None => (s, None),
    };
    Some((l.trim().parse().ok()?, c))
}

/// The targets at the `--target LINE[:COL]` places of `path`, in order
/// and each once (a place may hold several, two places one), among the
/// file's targets; a bad or empty place is a bad command line.
pub fn targets_at_places(
    path: &str,
    all: &[Target],
    places: &[String],
) -> Result<Vec<Target>, ExitCode> {
    let mut out: Vec<Target> = Vec::new();
    for place in places {
        let Some((line, col)) = parse_place(place) else {
            return Err(bad(&format!("--target {place}: expected LINE or LINE:COL")));
        };
        let here: Vec<&Target> = all
            .iter()
            .filter(|t| t.line == line && col.is_none_or(|c| c == t.col))
            .collect();
        if here.is_empty() {
            return Err(bad(&format!(
                "no target at {path}:{place} (`apc cfg {path}` lists the targets)"
            )));
        }
        for t in here {
            if !out
                .iter()
                .any(|o| (&o.function, o.id) == (&t.function, t.id))
            {
                out.push(t.clone());
            }
        }
    }
    Ok(out)
}
