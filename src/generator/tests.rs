//! Unit tests of the generator: determinism, the sets' parameters, and
//! that every program parses, type-checks and runs.

use super::*;
use crate::syntax::parser::parse;
use crate::types::check_program;

/// Parses and type-checks `src`; any diagnostic (warnings included) fails.
fn well_formed(src: &str) -> Result<(), String> {
    let (ast, diags) = parse(src);
    let types = check_program(&ast);
    let all: Vec<String> = (diags.iter().chain(&types.diagnostics))
        .map(|d| d.message.clone())
        .collect();
    if all.is_empty() {
        Ok(())
    } else {
        Err(format!("{all:?} in\n{src}"))
    }
}

/// 20 programs of each set by default; `GENERATOR_PROGRAMS=150` (or more)
/// for the long run.
#[test]
fn every_program_of_every_set_parses_and_type_checks() {
    let n: u64 = std::env::var("GENERATOR_PROGRAMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    for set in &THESIS_SETS {
        for seed in 0..n {
            let src = generate_source(&set.params(), seed, seed % 7);
            well_formed(&src).unwrap_or_else(|e| panic!("{} seed {seed}: {e}", set.name));
        }
    }
}

#[test]
fn the_same_seed_and_index_give_the_same_program() {
    let p = THESIS_SETS[6].params();
    assert_eq!(generate_source(&p, 7, 3), generate_source(&p, 7, 3));
    assert_ne!(generate_source(&p, 7, 3), generate_source(&p, 7, 4));
    assert_ne!(generate_source(&p, 7, 3), generate_source(&p, 8, 3));
}

#[test]
fn depth_and_statement_counts_stay_within_the_parameters() {
    fn depth(stmts: &[Stmt]) -> u32 {
        (stmts.iter())
            .map(|s| match s {
                Stmt::If(_, a, b) => 1 + depth(a).max(b.as_deref().map_or(0, depth)),
                Stmt::While(_, body) => 1 + depth(body),
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }
    for max_block_depth in 1..=4 {
        let p = Params {
            max_block_depth,
            for_loop_gen_prob: 0.3,
            loop_gen_prob: 0.3,
            ..Params::default()
        };
        for seed in 0..200 {
            let prog = generate(&p, seed, 0);
            assert!(depth(&prog.body) <= max_block_depth, "seed {seed}");
            // Counted loops may add up to two statements that set their
            // counter and bound.
            let drawn = prog.body.len() - prog.vars;
            assert!(drawn <= 3 * p.max_top_lvl_stmts_count as usize);
        }
    }
}

#[test]
fn loop_probabilities_shape_the_programs() {
    let loops = |p: &Params| {
        (0..300)
            .map(|seed| generate_source(p, seed, 0).matches("while").count())
            .sum::<usize>()
    };
    let none = Params {
        for_loop_gen_prob: 0.0,
        loop_gen_prob: 0.0,
        ..Params::default()
    };
    assert_eq!(loops(&none), 0);
    let few = loops(&Params::default());
    let many = loops(&Params {
        loop_gen_prob: 0.5,
        ..Params::default()
    });
    assert!(few > 0 && many > 2 * few, "{few} vs {many}");
}

#[test]
fn divisions_and_guaranteed_errors_appear_only_when_asked() {
    let src = |error_guaranteed, generate_divisions, seed| {
        let p = Params {
            error_guaranteed,
            generate_divisions,
            ..Params::default()
        };
        generate_source(&p, seed, 0)
    };
    let body = |s: String| s.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert!((0..300).all(|seed| !body(src(false, false, seed)).contains('/')));
    assert!((0..300).any(|seed| body(src(false, true, seed)).contains(" / ")));
    // The failing statements are drawn after the body: the program with
    // them is the one without, plus one or two statements, all at main's
    // top level, where the thesis's generator plugs its error.
    fn statements(stmts: &[Stmt]) -> usize {
        (stmts.iter())
            .map(|s| match s {
                Stmt::If(_, a, b) => 1 + statements(a) + b.as_deref().map_or(0, statements),
                Stmt::While(_, body) => 1 + statements(body),
                _ => 1,
            })
            .sum()
    }
    for seed in 0..100 {
        let p = Params::default();
        let with = Params {
            error_guaranteed: true,
            ..p.clone()
        };
        let (a, b) = (generate(&p, seed, 0), generate(&with, seed, 0));
        let added = statements(&b.body) - statements(&a.body);
        assert!((1..=2).contains(&added), "seed {seed}: {added}");
        assert_eq!(b.body.len() - a.body.len(), added, "seed {seed}");
    }
}

#[test]
fn main_starts_by_assigning_a_constant_to_every_variable_in_order() {
    let constant = |e: &Expr| match e {
        Expr::Num(n) => (-1..=8).contains(n),
        Expr::Alloc(x) => matches!(**x, Expr::Num(_)),
        Expr::Array(xs) => xs.iter().all(|x| matches!(x, Expr::Num(_))),
        _ => false,
    };
    for set in &THESIS_SETS {
        let p = Params {
            error_guaranteed: false,
            ..set.params()
        };
        for seed in 0..40 {
            let prog = generate(&p, seed, 0);
            for (v, s) in prog.body.iter().take(prog.vars).enumerate() {
                assert!(
                    matches!(s, Stmt::Assign(Place::Var(w), e) if *w == v && constant(e)),
                    "{} seed {seed}: statement {v} is {s:?}",
                    set.name
                );
            }
        }
    }
}

#[test]
fn the_parameters_are_checked() {
    let bad = |p: Params| p.validate().unwrap_err();
    let base = Params::default;
    assert!(
        bad(Params {
            for_loop_gen_prob: 1.5,
            ..base()
        })
        .contains("forLoopGenProb")
    );
    assert!(
        bad(Params {
            for_loop_gen_prob: 0.6,
            loop_gen_prob: 0.6,
            ..base()
        })
        .contains("at most 1")
    );
    assert!(
        bad(Params {
            max_block_depth: 0,
            ..base()
        })
        .contains("maxBlockDepth")
    );
    for set in &THESIS_SETS {
        set.params().validate().unwrap();
    }
}

#[test]
fn the_sets_are_named_by_their_parameters() {
    for set in &THESIS_SETS {
        let p = set.params();
        let flag = |b| if b { "t" } else { "f" };
        let name = format!(
            "{}-{}-{}-{}-{}",
            (p.for_loop_gen_prob * 100.0).round(),
            (p.loop_gen_prob * 100.0).round(),
            p.max_block_depth,
            flag(p.error_guaranteed),
            flag(p.generate_divisions)
        );
        assert_eq!(name, set.name);
    }
}
