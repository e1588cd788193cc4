//! The editor's memo (`db::dependencies`) never carries a verdict over to
//! a program where it may not hold. A generated program has one integer
//! literal of one function changed; for every target whose dependency
//! key is the same in both programs, every random input must hit the
//! target in one program exactly when it hits it in the other. The test
//! also counts the targets the edit changed and the hits compared, so
//! that it fails if either is none.
//!
//! `SOUNDNESS_DEPENDENCY_PROGRAMS=5000` for a long run.

use super::generator::{Knobs, Rng, program, witness};
use super::{generated_db, run_generated, seed_or};
use crate::common::env_or;
use apc::db::{self, Database, SourceFile};
use apc::interp::Outcome;
use apc::syntax::LineIndex;

/// `src` with one integer literal, chosen at random, replaced by another
/// (lines stay as they are); `None` if it has none.
fn edit_one_literal(src: &str, r: &mut Rng) -> Option<String> {
    let bytes = src.as_bytes();
    let literals: Vec<(usize, usize)> = (0..bytes.len())
        .filter(|&i| bytes[i].is_ascii_digit())
        .filter(|&i| i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
        .map(|i| {
            let end = (i..bytes.len())
                .find(|&j| !bytes[j].is_ascii_digit())
                .unwrap_or(bytes.len());
            (i, end)
        })
        .collect();
    if literals.is_empty() {
        return None;
    }
    let (start, end) = literals[(r.next() % literals.len() as u64) as usize];
    let new = (r.next() % 12).to_string();
    (new != src[start..end]).then(|| format!("{}{new}{}", &src[..start], &src[end..]))
}

/// Where each run of the program failed first: its kind and place.
fn failures(
    db: &Database,
    file: SourceFile,
    src: &str,
    runs: &[apc::interp::Witness],
) -> Vec<Option<(apc::TargetKind, (u32, u32))>> {
    let program = &db::parse(db, file).program;
    let lines = LineIndex::new(src);
    (runs.iter())
        .map(|w| match run_generated(program, w).ok()?.outcome {
            Outcome::Error { kind, span } => Some((kind, lines.line_col(src, span.start))),
            _ => None,
        })
        .collect()
}

#[test]
fn a_remembered_verdict_holds_in_the_edited_program() {
    let n = env_or("SOUNDNESS_DEPENDENCY_PROGRAMS", 100);
    let mut r = Rng(seed_or(0x5eed_de95_0000_0001));
    let knobs = Knobs::with(&[("calls", 90), ("recursion", 30)]);
    let (mut kept, mut changed, mut compared_hits) = (0, 0, 0);
    for p in 0..n {
        let src = program(&mut r, &knobs);
        let Some(edited) = edit_one_literal(&src, &mut r) else {
            continue;
        };
        let (db, file) = generated_db(p, &src);
        let (db2, file2) = Database::with_file("gen.mc", &edited);
        if db::diagnostics(&db2, file2).iter().any(|d| d.is_error()) {
            continue;
        }
        let runs: Vec<_> = (0..12).map(|_| witness(&mut r)).collect();
        let (failed, failed2) = (
            failures(&db, file, &src, &runs),
            failures(&db2, file2, &edited, &runs),
        );
        let after = db::targets(&db2, file2);
        for t in db::targets(&db, file) {
            let Some(t2) = after
                .iter()
                .find(|u| (&u.function, u.id) == (&t.function, t.id))
            else {
                continue;
            };
            let key = db::dependencies(&db, file, &t).fingerprint;
            if key != db::dependencies(&db2, file2, t2).fingerprint {
                changed += 1;
                continue;
            }
            kept += 1;
            for (i, w) in runs.iter().enumerate() {
                let before = failed[i] == Some((t.kind, (t.line, t.col)));
                let now = failed2[i] == Some((t2.kind, (t2.line, t2.col)));
                assert_eq!(
                    before,
                    now,
                    "program {p}: {} kept its key, but {w:?} hits it in one program only\n--- before\n{src}\n--- after\n{edited}",
                    t.label()
                );
                compared_hits += usize::from(before);
            }
        }
    }
    eprintln!(
        "dependencies: {n} programs edited, {kept} targets kept their key ({compared_hits} runs hit one, the same in both), {changed} did not"
    );
    assert!(
        kept > 0 && changed > 0 && compared_hits > 0,
        "{kept} kept, {changed} changed, {compared_hits} hits"
    );
}

/// A target proved unreachable from any call of its function
/// (`check::anywhere`, kept by the editor across edits of the callers) is
/// hit by no run of the program itself. Generated programs with helper
/// functions; the test also counts the proofs, so that it fails if there
/// are none. `SOUNDNESS_ANY_CALL_PROGRAMS=500` for a long run.
#[test]
fn a_proof_for_any_call_holds_for_the_calls_made() {
    let n = env_or("SOUNDNESS_ANY_CALL_PROGRAMS", 6);
    let mut r = Rng(seed_or(0x5eed_a11c_0000_0001));
    let knobs = Knobs::with(&[("calls", 100), ("pointers", 0), ("records", 0)]);
    let mut opts = apc::check::CheckOptions::new(
        vec![apc::smt::locate(apc::smt::SolverKind::Z3, None).expect("z3 installed")],
        std::time::Duration::from_secs(2),
    );
    opts.engine = "nc";
    let (mut proved, mut hits_elsewhere) = (0, 0);
    for p in 0..n {
        let src = program(&mut r, &knobs);
        let (db, file) = generated_db(p, &src);
        let runs: Vec<_> = (0..20).map(|_| witness(&mut r)).collect();
        let failed = failures(&db, file, &src, &runs);
        for t in db::targets(&db, file) {
            let Some(_) = apc::check::anywhere::unreachable_from_any_call(&db, file, &t, &opts)
            else {
                continue;
            };
            proved += 1;
            // The program's own calls, and a caller that passes anything.
            let free = apc::check::anywhere::with_free_caller(&db, file, &t.function).unwrap();
            let (free_db, free_file) = Database::with_file("gen.mc", &free);
            let free_failed = failures(
                &free_db,
                free_file,
                &free,
                &free_runs(&free_db, free_file, &mut r),
            );
            for f in failed.iter().chain(&free_failed) {
                assert_ne!(
                    *f,
                    Some((t.kind, (t.line, t.col))),
                    "program {p}: {} proved for any call of {}, but a run hits it\n{src}\n--- with a free caller\n{free}",
                    t.label(),
                    t.function
                );
            }
            hits_elsewhere += failed.iter().chain(&free_failed).flatten().count();
        }
    }
    eprintln!(
        "from any call: {n} programs, {proved} targets proved, none hit ({hits_elsewhere} runs failed elsewhere)"
    );
    assert!(proved > 0, "no target was proved for any call");
}

/// Random inputs for a program whose `main` takes integers only: small
/// numbers, around the generator's constants, and an input stream.
fn free_runs(db: &Database, file: SourceFile, r: &mut Rng) -> Vec<apc::interp::Witness> {
    let params: Vec<String> = (db::functions(db, file).iter())
        .find(|f| f.name(db) == "main")
        .map(|f| f.ast(db).params.iter().map(|p| p.name.clone()).collect())
        .unwrap_or_default();
    (0..30)
        .map(|_| apc::interp::Witness {
            args: (params.iter())
                .map(|p| {
                    let v = ((r.next() % 41) as i64 - 20).into();
                    (p.clone(), apc::interp::ArgValue::Int(v))
                })
                .collect(),
            input: (0..(r.next() % 8))
                .map(|_| ((r.next() % 21) as i64 - 10).into())
                .collect(),
        })
        .collect()
}
