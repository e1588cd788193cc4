//! `apc nc`: print the necessary condition φ̂ (and φ̂^K) of a target, and
//! dump the queries `apc check` would send for it.

use super::check::SolverArgs;
use super::places::targets_at_places;
use super::{ExitStatus, bad, limits, load};
use crate::db::{self, Target};
use crate::nc::query::{self, DEFAULT_K};
use crate::nc::{self, Options};
use crate::smt::Profile;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct NcArgs {
    /// The microc source file.
    pub file: PathBuf,
    /// The target(s) at this place: `LINE` or `LINE:COL` (repeatable). `apc cfg` lists
    /// every target with its place.
    #[arg(long, value_name = "LINE[:COL]", required = true)]
    pub target: Vec<String>,
    /// Unfolding bound K of φ̂^K: each ∀τ (0 ≤ τ < κ → ρ) becomes ρ(0) ∧ … ∧ ρ(K)
    /// guarded by τ < κ (the ISSTA paper uses 25).
    #[arg(long, default_value_t = DEFAULT_K, value_parser = clap::value_parser!(u32).range(0..=limits::MAX_K))]
    pub k: u32,
    /// Do not infer relations between inner and outer loop counts (TR Alg. 8): the
    /// values that depend on an inner loop's count become ⋆.
    #[arg(long)]
    pub no_counter_inference: bool,
    /// Print the conditions as computed, without the e-graph simplification that
    /// `apc check` applies before encoding (the dumps are then those of
    /// `apc check --no-simplify`).
    #[arg(long)]
    pub raw: bool,
    /// Also write the SMT-LIB scripts that `apc check --mode race --k K` sends for the
    /// target into DIR, byte for byte, under the same names:
    /// `<file>-<function>-<line>-<col>-<variant>-<solver>.smt2`, one per query of the
    /// race (φ̂, φ̂^K, φ̂^3, φ̂^14 ∧ κ ≤ 14, φ̂^14) and solver. Each runs as `z3 FILE` or
    /// `cvc5 FILE`.
    #[arg(long, value_name = "DIR")]
    pub dump_queries: Option<PathBuf>,
    #[command(flatten)]
    pub solvers: SolverArgs,
}

pub fn nc(a: NcArgs) -> ExitCode {
    let loaded = match load(&a.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let db = &loaded.db;
    if db::program(db, loaded.file).is_none() {
        return bad("the program has no `main`");
    }
    // The solvers matter for the dumps (one file each) and as the helper
    // of the condition's own queries; without dumps a missing solver only
    // means no helper, as for `apc check` without one.
    let solvers = match (a.solvers.locate_quietly(), &a.dump_queries) {
        (Ok(s), _) => s,
        (Err(e), Some(_)) => return bad(&e),
        (Err(_), None) => vec![],
    };
    let all = db::targets(db, loaded.file);
    let chosen = match targets_at_places(&loaded.path, &all, &a.target) {
        Ok(c) => c,
        Err(code) => return code,
    };
    // The options `apc check` computes its conditions with (the helper
    // solver is its first solver), so the condition is the one it sends.
    let opts = Options {
        counter_inference: !a.no_counter_inference,
        helper: solvers.first().cloned().or_else(crate::smt::default_z3),
        ..Options::default()
    };
    let loc = |s: crate::syntax::Span| {
        let (l, c) = loaded.loc(s);
        format!("{l}:{c}")
    };
    for (i, t) in chosen.iter().enumerate() {
        if i > 0 {
            outln!();
        }
        let text = nc::render(db, loaded.file, t, &opts, Some(a.k), &loc, !a.raw);
        out!("{text}");
        if let Some(dir) = &a.dump_queries {
            let written = dump(db, loaded.file, t, &opts, &a, &solvers, dir);
            if let Err(e) = written {
                return bad(&format!("cannot write queries to {}: {e}", dir.display()));
            }
        }
    }
    ExitStatus::Ok.into()
}

/// Writes every query of the target's race, for every solver, as
/// `apc check` would write it when sending it first.
fn dump(
    db: &dyn salsa::Database,
    file: db::SourceFile,
    t: &Target,
    opts: &Options,
    a: &NcArgs,
    solvers: &[Profile],
    dir: &Path,
) -> std::io::Result<()> {
    super::writable_dir(dir).map_err(std::io::Error::other)?;
    let race = query::Race {
        k: a.k,
        simplify: !a.raw,
    };
    let (_, left_out) = query::dump_race(db, file, t, opts, race, solvers, dir)?;
    // `apc check` races without them too; say so rather than leave a gap.
    for why in &left_out {
        eprintln!(
            "note: {}:{}: not written, as `apc check` does not send it either: {why}",
            t.line, t.col
        );
    }
    Ok(())
}
