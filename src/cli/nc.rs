//! `apc nc`: print the necessary condition φ̂ (and φ̂^K) of a target.

use super::{bad, load};
use crate::check;
use crate::db;
use crate::nc::{self, Engine, Options};
use clap::Args;
use std::path::PathBuf;
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
    #[arg(long, default_value_t = 25)]
    pub k: u32,
    /// Do not infer relations between inner and outer loop counts (TR Alg. 8): the
    /// values that depend on an inner loop's count become ⋆.
    #[arg(long)]
    pub no_counter_inference: bool,
    /// Print the conditions as computed, without the e-graph simplification that
    /// `apc check` applies before encoding.
    #[arg(long)]
    pub raw: bool,
    /// Also write the SMT-LIB scripts of φ̂ (with the quantifier options of Z3) and of
    /// φ̂^K into DIR, one self-contained file each (`<function>-<line>-<col>-quantified.smt2`,
    /// `<function>-<line>-<col>-unfolded-k<K>.smt2`), runnable as `z3 FILE`.
    #[arg(long, value_name = "DIR")]
    pub dump_queries: Option<PathBuf>,
}

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
/// file's targets (`check::targets`); a bad or empty place is a bad
/// command line.
pub fn targets_at_places(
    path: &str,
    all: &[check::Target],
    places: &[String],
) -> Result<Vec<check::Target>, ExitCode> {
    let mut out: Vec<check::Target> = Vec::new();
    for place in places {
        let Some((line, col)) = parse_place(place) else {
            return Err(bad(&format!("--target {place}: expected LINE or LINE:COL")));
        };
        let here: Vec<&check::Target> = all
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

pub fn nc(a: NcArgs) -> ExitCode {
    let loaded = match load(&a.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let opts = Options {
        counter_inference: !a.no_counter_inference,
        ..Options::default()
    };
    let db = &loaded.db;
    let Some(prog) = db::program(db, loaded.file) else {
        return bad("the program has no `main`");
    };
    let all = check::targets(db, loaded.file);
    let chosen = match targets_at_places(&loaded.path, &all, &a.target) {
        Ok(c) => c,
        Err(code) => return code,
    };
    for (i, t) in chosen.iter().enumerate() {
        let (func, l, c) = (&t.function, t.line, t.col);
        if i > 0 {
            outln!();
        }
        let copies = prog.copies_of(func, t.id);
        let mut eng = Engine::with_db(
            &prog.body,
            opts.clone(),
            nc::DbSource {
                db,
                file: loaded.file,
            },
        );
        let loc = |s: crate::syntax::Span| {
            let (l, c) = loaded.loc(s);
            format!("{l}:{c}")
        };
        let title = format!(
            "target {} at {l}:{c} in {func} ({} inlined cop{})",
            t.kind.as_str(),
            copies.len(),
            if copies.len() == 1 { "y" } else { "ies" }
        );
        out!(
            "{}",
            nc::render(&mut eng, &title, &copies, Some(a.k), &loc, !a.raw)
        );
        if let Some(dir) = &a.dump_queries
            && let Err(e) = dump(
                &mut eng,
                &copies,
                a.k,
                dir,
                &format!("{func}-{l}-{c}"),
                !a.raw,
            )
        {
            return bad(&format!("cannot write queries to {}: {e}", dir.display()));
        }
    }
    ExitCode::SUCCESS
}

/// Writes the two queries of a target as self-contained SMT-LIB files.
fn dump(
    eng: &mut Engine,
    nodes: &[crate::ir::NodeId],
    k: u32,
    dir: &std::path::Path,
    name: &str,
    simplify: bool,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut phi = eng.condition_of(nodes);
    if simplify {
        phi = crate::simplify::simplify_one(&mut eng.terms, phi).0;
    }
    let z3 = crate::smt::SolverKind::Z3.profile();
    let query = crate::term::smtlib_query(&eng.terms, &[phi]);
    let quantified = z3.script(true, &query, &[]);
    std::fs::write(dir.join(format!("{name}-quantified.smt2")), quantified)?;
    let phik = nc::unfold(&mut eng.terms, phi, k);
    let query = crate::term::smtlib_query(&eng.terms, &[phik]);
    let unfolded = z3.script(false, &query, &[]);
    std::fs::write(dir.join(format!("{name}-unfolded-k{k}.smt2")), unfolded)?;
    Ok(())
}
