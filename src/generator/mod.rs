//! The thesis's random program generator (Rozhoň, *Nested loops and path
//! explosion in symbolic execution*, §5 `generateProgram` and §6.1;
//! `docs/generator.md`): seeded, deterministic, well-typed microc programs
//! with only `main`, for the experiments of `apc bench thesis`.
//! (The design card calls this layer `gen`, a reserved word in Rust 2024.)
//!
//! Owns the parameters, the 18 program sets of Table 6.16 and the
//! generation itself. Knows nothing of the analyses: it writes source text.

mod program;
mod sets;

pub use program::{Expr, Place, Program, Stmt};
pub use sets::{Published, TECHNIQUES, THESIS_PROGRAMS_PER_SET, THESIS_SETS, ThesisSet};

use program::Builder;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

/// The generator's parameters, named as the thesis's `generateProgram`
/// names them.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// Probability that a statement is a counted ("for") loop.
    pub for_loop_gen_prob: f64,
    /// Probability that a statement is a general `while` loop.
    pub loop_gen_prob: f64,
    /// Deepest nesting of blocks; at this depth no `if` or `while` is made.
    pub max_block_depth: u32,
    /// main's statements are 1..=this many (declarations not counted).
    pub max_top_lvl_stmts_count: u32,
    /// A nested block's statements are 1..=this many.
    pub max_stmts_within_a_block: u32,
    /// Plug one statement that certainly fails somewhere in the program.
    pub error_guaranteed: bool,
    /// Whether `/` may appear (divisors are random expressions).
    pub generate_divisions: bool,
}

impl Default for Params {
    /// The thesis's "small programs" (Table 6.1 and §6.3.2).
    fn default() -> Params {
        Params {
            for_loop_gen_prob: 0.15,
            loop_gen_prob: 0.10,
            max_block_depth: 3,
            max_top_lvl_stmts_count: 10,
            max_stmts_within_a_block: 5,
            error_guaranteed: false,
            generate_divisions: false,
        }
    }
}

impl Params {
    /// The thesis's constraints on the parameters, plus limits that keep
    /// a program printable.
    pub fn validate(&self) -> Result<(), String> {
        let prob = |name: &str, p: f64| {
            if (0.0..=1.0).contains(&p) {
                Ok(())
            } else {
                Err(format!("{name} must be between 0 and 1, not {p}"))
            }
        };
        prob("forLoopGenProb", self.for_loop_gen_prob)?;
        prob("loopGenProb", self.loop_gen_prob)?;
        if self.for_loop_gen_prob + self.loop_gen_prob > 1.0 {
            return Err(format!(
                "forLoopGenProb + loopGenProb must be at most 1, not {}",
                self.for_loop_gen_prob + self.loop_gen_prob
            ));
        }
        let count = |name: &str, n: u32, most: u32| {
            if (1..=most).contains(&n) {
                Ok(())
            } else {
                Err(format!("{name} must be between 1 and {most}, not {n}"))
            }
        };
        count("maxBlockDepth", self.max_block_depth, 20)?;
        count("maxTopLvlStmtsCount", self.max_top_lvl_stmts_count, 1000)?;
        count("maxStmtsWithinABlock", self.max_stmts_within_a_block, 1000)
    }
}

/// Program `index` of the set generated from `seed` with `params`: the
/// same on every machine (ChaCha8 is specified bit for bit, and every
/// choice is drawn from it in a fixed order).
pub fn generate(params: &Params, seed: u64, index: u64) -> Program {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(index);
    Builder::new(params, rng).program()
}

/// The program's text, headed by the command that makes it again.
pub fn generate_source(params: &Params, seed: u64, index: u64) -> String {
    let body = generate(params, seed, index);
    let header = format!(
        "// apc gen --seed {seed} --index {index} --for-loop-gen-prob {} --loop-gen-prob {} \
         --max-block-depth {} --max-top-lvl-stmts-count {} --max-stmts-within-a-block {}{}{}\n",
        params.for_loop_gen_prob,
        params.loop_gen_prob,
        params.max_block_depth,
        params.max_top_lvl_stmts_count,
        params.max_stmts_within_a_block,
        if params.error_guaranteed {
            " --error-guaranteed"
        } else {
            ""
        },
        if params.generate_divisions {
            " --generate-divisions"
        } else {
            ""
        },
    );
    header + &program::print(&body)
}

#[cfg(test)]
mod tests;
