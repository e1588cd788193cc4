//! Malformed input never panics: random token streams and random mutations
//! of the corpus programs go through the whole front end (parse, names and
//! types, IR lowering and printing, and a short interpreter run when the
//! program is well typed, which must never end in an internal error).
//!
//! The default run is small; `PROPTEST_CASES=200000 cargo test --release
//! --test it fuzz_frontend -- --ignored` is the long run (see `fuzz/README.md`
//! for the coverage-guided cargo-fuzz target).

use apc::interp::{self, ArgValue, Limits, RunError, Witness};
use apc::syntax::lexer::{Tok, lex};
use proptest::prelude::*;

const VOCAB: &[&str] = &[
    "main", "f", "x", "y", "p", "A", "(", ")", "{", "}", "[", "]", ",", ";", ":", ".", "=", "==",
    "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "&", "&&", "||", "!", "0", "1", "7", "-3",
    "var", "return", "if", "else", "while", "output", "input", "alloc", "null", "assert", "assume",
    "{a: 1}", "[1, 2]", "/*", "*/", "//\n",
];

/// Runs every stage that applies; a panic, or an internal error of the
/// interpreter on a well-typed program, is a failure.
fn front_end(text: &str) {
    if let Ok(path) = std::env::var("FUZZ_TRACE") {
        let _ = std::fs::write(path, text);
    }
    let (program, diags) = apc::syntax::parse(text);
    let _ = apc::syntax::diagnostic::render("fuzz.mc", text, &diags);
    if diags.iter().any(|d| d.is_error()) {
        return;
    }
    let types = apc::types::check_program(&program);
    let _ = apc::syntax::diagnostic::render("fuzz.mc", text, &types.diagnostics);
    if !types.is_ok() {
        return;
    }
    for body in apc::ir::lower_program(&program, &types) {
        let _ = apc::ir::to_text(&body, &|_| String::new());
        let _ = apc::ir::to_dot(&[&body], &|_, _| String::new());
    }
    let main = program
        .function("main")
        .expect("well-typed programs have main");
    let args = main
        .params
        .iter()
        .map(|p| {
            let ty = types.function("main").and_then(|t| t.var(&p.name).cloned());
            let v = match ty {
                Some(apc::types::Type::Array(_)) => ArgValue::List(vec![ArgValue::Int(1.into())]),
                _ => ArgValue::Int(1.into()),
            };
            (p.name.clone(), v)
        })
        .collect();
    let witness = Witness {
        args,
        input: vec![1.into(), 0.into(), (-1).into()],
    };
    let limits = Limits {
        max_steps: 2_000,
        max_call_depth: 50,
    };
    // A well-typed program runs to an outcome (a witness of the wrong
    // shape is the caller's error): never an internal error.
    if let Err(RunError::Internal(e)) = interp::run(&program, &witness, limits) {
        panic!("a well-typed program got an internal error: {e}\n{text}");
    }
}

fn corpus_tokens() -> Vec<Vec<String>> {
    crate::common::programs()
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            lex(&text, &mut vec![])
                .into_iter()
                .filter(|t| t.tok != Tok::Eof)
                .map(|t| t.tok.text().to_string())
                .collect()
        })
        .collect()
}

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Insert(usize, usize),
    Replace(usize, usize),
    Duplicate(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        (any::<usize>(), 0..VOCAB.len()).prop_map(|(a, b)| Mutation::Insert(a, b)),
        (any::<usize>(), 0..VOCAB.len()).prop_map(|(a, b)| Mutation::Replace(a, b)),
        (any::<usize>(), 1usize..20).prop_map(|(a, b)| Mutation::Duplicate(a, b)),
    ]
}

fn mutate(mut toks: Vec<String>, muts: &[Mutation]) -> String {
    for m in muts {
        if toks.is_empty() {
            break;
        }
        let n = toks.len();
        match *m {
            Mutation::Delete(i) => {
                toks.remove(i % n);
            }
            Mutation::Insert(i, v) => toks.insert(i % n, VOCAB[v].to_string()),
            Mutation::Replace(i, v) => toks[i % n] = VOCAB[v].to_string(),
            Mutation::Duplicate(i, len) => {
                let start = i % n;
                let chunk: Vec<String> = toks[start..(start + len).min(n)].to_vec();
                for (k, t) in chunk.into_iter().enumerate() {
                    toks.insert(start + k, t);
                }
            }
        }
    }
    toks.join(" ")
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn random_token_streams_never_panic(toks in prop::collection::vec(0..VOCAB.len(), 0..120)) {
        let text: Vec<&str> = toks.iter().map(|&i| VOCAB[i]).collect();
        front_end(&text.join(" "));
    }

    #[test]
    fn mutated_corpus_programs_never_panic(which in any::<prop::sample::Index>(), muts in prop::collection::vec(mutation(), 1..6)) {
        let corpus = corpus_tokens();
        let toks = corpus[which.index(corpus.len())].clone();
        front_end(&mutate(toks, &muts));
    }
}

#[test]
fn the_corpus_itself_goes_through_every_stage() {
    for toks in corpus_tokens() {
        front_end(&toks.join(" "));
    }
}

#[test]
fn pathological_nesting_is_diagnosed() {
    for src in [
        format!(
            "main() {{ var x; x = {}1{}; return x; }}",
            "(".repeat(10_000),
            ")".repeat(10_000)
        ),
        format!("main() {{ var x; x = {}1; return x; }}", "-".repeat(50_000)),
        format!("main() {{ var x; x = {}1; return x; }}", "!".repeat(50_000)),
        format!(
            "main() {{ var x; {} x = 1; {} return x; }}",
            "{".repeat(20_000),
            "}".repeat(20_000)
        ),
        format!(
            "main() {{ var x; {} x = 1; return x; }}",
            "while (1) ".repeat(20_000)
        ),
        format!(
            "main() {{ var x; x = [{}]; return x; }}",
            "[".repeat(20_000)
        ),
        format!(
            "main() {{ var x; x = 1{}; return x; }}",
            " * 2".repeat(100_000)
        ),
    ] {
        let (_, d) = apc::syntax::parse(&src);
        assert!(d.iter().any(|d| d.is_error()));
        front_end(&src);
    }
}

/// The long run for the issue note: `cargo test --release --test it fuzz_frontend -- --ignored`.
#[test]
#[ignore]
fn long_random_run() {
    let cases: u32 = crate::common::env_or("FUZZ_CASES", 100_000);
    let corpus = corpus_tokens();
    let mut runner = proptest::test_runner::TestRunner::new(config(cases));
    let strategy = (
        any::<prop::sample::Index>(),
        prop::collection::vec(mutation(), 1..8),
    );
    runner
        .run(&strategy, |(which, muts)| {
            front_end(&mutate(corpus[which.index(corpus.len())].clone(), &muts));
            Ok(())
        })
        .unwrap();
}
