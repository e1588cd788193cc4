//! `apc gen`: the thesis's random program generator (docs/generator.md).

use super::{ExitStatus, bad, writable_dir};
use crate::generator::{self, Params, THESIS_SETS, ThesisSet};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct GenArgs {
    /// The seed: the same seed, index and parameters give the same program on every
    /// machine.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Start at this program of the seed's sequence (program i of a set is index i).
    #[arg(long, default_value_t = 0)]
    pub index: u64,
    /// How many programs (indices `--index` onwards). More than one needs --out.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub count: u64,
    /// Write the programs into this directory (made if missing) as `<prefix>-<index>.mc`
    /// instead of printing one program to stdout.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The file name prefix with --out (default: the set's name, or `program`).
    #[arg(long)]
    pub prefix: Option<String>,
    /// Start from one of the thesis's 18 program sets (Table 6.16), e.g. `15-10-3-t-t`:
    /// forLoopGenProb %, loopGenProb %, maxBlockDepth, errorGuaranteed, generateDivisions.
    /// The flags below override its parameters.
    #[arg(long, value_name = "NAME", value_parser = set_name)]
    pub set: Option<String>,
    /// Probability that a statement is a counted loop `while (i < n) { …; i = i + 1; }`
    /// (0 to 1) [default: 0.15].
    #[arg(long, alias = "forLoopGenProb", value_name = "P")]
    pub for_loop_gen_prob: Option<f64>,
    /// Probability that a statement is a general `while` loop with a random guard and
    /// body (0 to 1; with --for-loop-gen-prob at most 1) [default: 0.10].
    #[arg(long, alias = "loopGenProb", value_name = "P")]
    pub loop_gen_prob: Option<f64>,
    /// Deepest nesting of blocks; statements at this depth are not `if` or `while`
    /// [default: 3].
    #[arg(long, alias = "maxBlockDepth", value_name = "N")]
    pub max_block_depth: Option<u32>,
    /// main has 1 to N statements (declarations not counted) [default: 10].
    #[arg(long, alias = "maxTopLvlStmtsCount", value_name = "N")]
    pub max_top_lvl_stmts_count: Option<u32>,
    /// A nested block has 1 to N statements [default: 5].
    #[arg(long, alias = "maxStmtsWithinABlock", value_name = "N")]
    pub max_stmts_within_a_block: Option<u32>,
    /// Plug a statement that certainly fails (division by zero, index past the end, read
    /// through null) at a random place, possibly an unreachable one.
    #[arg(long, alias = "errorGuaranteed")]
    pub error_guaranteed: bool,
    /// Let `/` appear, with random divisors (which may be zero).
    #[arg(long, alias = "generateDivisions")]
    pub generate_divisions: bool,
}

fn set_name(s: &str) -> Result<String, String> {
    match ThesisSet::named(s) {
        Some(_) => Ok(s.to_string()),
        None => {
            let names: Vec<&str> = THESIS_SETS.iter().map(|s| s.name).collect();
            Err(format!(
                "not one of the thesis's sets: {}",
                names.join(", ")
            ))
        }
    }
}

/// The parameters: the set's (or the defaults), then the flags.
fn params(a: &GenArgs) -> Params {
    let mut p = match a.set.as_deref().and_then(ThesisSet::named) {
        Some(set) => set.params(),
        None => Params::default(),
    };
    p.for_loop_gen_prob = a.for_loop_gen_prob.unwrap_or(p.for_loop_gen_prob);
    p.loop_gen_prob = a.loop_gen_prob.unwrap_or(p.loop_gen_prob);
    p.max_block_depth = a.max_block_depth.unwrap_or(p.max_block_depth);
    p.max_top_lvl_stmts_count = a
        .max_top_lvl_stmts_count
        .unwrap_or(p.max_top_lvl_stmts_count);
    p.max_stmts_within_a_block = (a.max_stmts_within_a_block).unwrap_or(p.max_stmts_within_a_block);
    p.error_guaranteed |= a.error_guaranteed;
    p.generate_divisions |= a.generate_divisions;
    p
}

pub fn generate(a: GenArgs) -> ExitCode {
    let p = params(&a);
    if let Err(e) = p.validate() {
        return bad(&e);
    }
    let Some(dir) = &a.out else {
        if a.count > 1 {
            return bad("--count above 1 needs --out DIR (one program goes to stdout)");
        }
        out!("{}", generator::generate_source(&p, a.seed, a.index));
        return ExitStatus::Ok.into();
    };
    if let Err(e) = writable_dir(dir) {
        return bad(&e);
    }
    let prefix = (a.prefix.clone())
        .or_else(|| a.set.clone())
        .unwrap_or_else(|| "program".into());
    for index in a.index..a.index.saturating_add(a.count) {
        let path = dir.join(format!("{prefix}-{index:03}.mc"));
        let text = generator::generate_source(&p, a.seed, index);
        if let Err(e) = std::fs::write(&path, text) {
            return bad(&format!("cannot write {}: {e}", path.display()));
        }
    }
    outln!("wrote {} program(s) to {}", a.count, dir.display());
    ExitStatus::Ok.into()
}
