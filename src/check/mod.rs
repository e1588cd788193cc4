//! Verdicts: from a target's necessary condition to `unreachable`,
//! `reachable` (with a replayed witness) or `unknown` (with a reason).
//!
//! For each target: φ̂ from the database, the queries (φ̂ with quantifiers,
//! φ̂^K, and a cheap φ̂^k with small k), a race of those queries on the
//! chosen solvers, and for each model a witness that the interpreter
//! replays. `reachable` is only ever said of a witness that hit the target.

mod model;

use crate::TargetKind;
use crate::db::{self, Database, SourceFile};
use crate::interp::Witness;
use crate::nc::{self, Options};
use crate::smt::{self, Contender, Profile, RaceOutcome, Undecided};
use crate::syntax::LineIndex;
use crate::term::Terms;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use model::InputModel;

/// Which queries run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// φ̂ and φ̂^K (and φ̂^k for a small k) in parallel.
    Race,
    Quantified,
    Unfolded,
}

/// The small unfolding bounds raced next to K, one after the other (an
/// iterative deepening): many conditions are decided, or give a replayable
/// model, long before the solver is done with φ̂^25 (MatrIR: φ̂^25 over a
/// minute in Z3 4.8.12, φ̂^3 in milliseconds); when φ̂^k is too weak for its
/// models to replay, a deeper one often is. Before the deepest, the chain
/// tries it with every counter bounded by its k (φ̂^14 ∧ κ ≤ 14), a witness
/// search: HWM on Z3 gave models of φ̂^14 that run past the unfolded
/// iterations, five in a row, and φ̂^25 did not finish in 30 s; the bounded
/// query gives a replayable model in 7–9 s, and HW's witness came 3.3 →
/// 1.3 s. On the 135 targets of tests/programs no other verdict changed.
pub const DEEPENING: [u32; 2] = [3, 14];

#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The solvers to race (located).
    pub solvers: Vec<Profile>,
    pub mode: Mode,
    pub k: u32,
    /// Wall-clock limit per target, necessary condition included.
    pub timeout: Duration,
    pub jobs: usize,
    pub dump_queries: Option<PathBuf>,
    pub counter_inference: bool,
    /// How many models a query may give before `nc-sat-no-witness`.
    pub max_models: usize,
    /// Simplify the condition (e-graph) before encoding it.
    pub simplify: bool,
}

/// A target of the file.
#[derive(Clone, Debug)]
pub struct Target {
    pub function: String,
    pub id: u32,
    pub kind: TargetKind,
    pub line: u32,
    pub col: u32,
}

#[derive(Clone, Debug)]
pub enum Verdict {
    Unreachable,
    Reachable(Witness),
    Unknown(String),
}

impl Verdict {
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Unreachable => "unreachable",
            Verdict::Reachable(_) => "reachable",
            Verdict::Unknown(_) => "unknown",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Report {
    pub target: Target,
    pub verdict: Verdict,
    /// The query that decided, e.g. `nc-unfolded:k=25`.
    pub method: Option<String>,
    /// The solver that decided.
    pub solver: Option<String>,
    pub time: Duration,
}

/// Every target of the file, in source order.
pub fn targets(db: &Database, file: SourceFile) -> Vec<Target> {
    let text = file.text(db);
    let lines = LineIndex::new(text);
    let mut out = Vec::new();
    for f in db::functions(db, file) {
        let offset = f.offset(db);
        for t in &db::function_body(db, *f).targets {
            let (line, col) = lines.line_col(text, t.span.shift(offset).start);
            out.push(Target {
                function: f.name(db).clone(),
                id: t.id,
                kind: t.kind,
                line,
                col,
            });
        }
    }
    out.sort_by_key(|t| (t.line, t.col));
    out
}

/// Checks the targets, `opts.jobs` at a time; `done` is told of each
/// report as it comes (for progress). Reports are in the targets' order.
pub fn check_all(
    db: &Database,
    file: SourceFile,
    targets: &[Target],
    opts: &CheckOptions,
    done: &(dyn Fn(&Report) + Sync),
) -> Vec<Report> {
    let next = AtomicUsize::new(0);
    let reports: Mutex<Vec<Option<Report>>> = Mutex::new(vec![None; targets.len()]);
    let jobs = opts.jobs.clamp(1, targets.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let db = db.clone();
            let (next, reports) = (&next, &reports);
            // The engine recurses over (bounded) term heights: a big stack.
            std::thread::Builder::new()
                .stack_size(256 << 20)
                .spawn_scoped(scope, move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(t) = targets.get(i) else { break };
                        // A defect in one target's analysis must not take
                        // the others down: it becomes that target's reason.
                        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            check_target(&db, file, t, opts)
                        }))
                        .unwrap_or_else(|e| internal_error(t, e.as_ref()));
                        done(&r);
                        reports.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                    }
                })
                .expect("spawning a worker thread");
        }
    });
    reports
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every target was checked"))
        .collect()
}

fn internal_error(t: &Target, panic: &(dyn std::any::Any + Send)) -> Report {
    let msg = crate::interp::panic_message(panic);
    Report {
        target: t.clone(),
        verdict: Verdict::Unknown(format!(
            "internal error: {msg} (please report it with the program)"
        )),
        method: None,
        solver: None,
        time: Duration::ZERO,
    }
}

/// One query of a race.
struct Query {
    /// e.g. `nc-unfolded:k=25`.
    method: String,
    quantified: bool,
    /// Whether its `unsat` is a proof (not for a bounded witness search).
    refutes: bool,
    /// SMT-LIB without options and `(check-sat)`.
    text: String,
}

impl Query {
    fn new(method: impl Into<String>, quantified: bool, text: String) -> Query {
        Query {
            method: method.into(),
            quantified,
            refutes: true,
            text,
        }
    }
}

/// The queries of `mode` for a condition, in chains: the chains race;
/// within a chain a query runs when the one before it ended undecided.
///
/// The quantified φ̂ goes out as computed (`raw`), everything else from
/// the simplified condition (`simplified`; the same when `--no-simplify`):
/// quantifier instantiation is at the mercy of the exact shape of the
/// quantifier bodies, and the simplifier's small changes to them (two
/// bounds of a body merged) took MatrIR's φ̂ from 0.2 s to a timeout on
/// cvc5, with nothing to gain (the sizes change by under 1%).
fn queries(
    raw: (&Terms, crate::term::TermId),
    simplified: (&Terms, crate::term::TermId),
    mode: Mode,
    k: u32,
) -> Vec<Vec<Query>> {
    let (terms, phi) = simplified;
    let terms_have_quantifier = terms.has_quantifier(phi);
    let body = |terms: &Terms, t| crate::term::smtlib_query(terms, &[t]);
    let mut variants = Vec::new();
    // Each unfolding starts from the condition's own store, so that a
    // query's text (its fresh names) does not depend on which other
    // queries were built: φ̂^10 in the race is the query `--mode unfolded
    // --k 10` sends, and gets the same model.
    let unfold = |k: u32| {
        let mut own = terms.clone();
        let phik = nc::unfold(&mut own, phi, k);
        (own, phik)
    };
    let unfolded = |k: u32| {
        let (own, phik) = unfold(k);
        Query::new(format!("nc-unfolded:k={k}"), false, body(&own, phik))
    };
    if !terms_have_quantifier {
        // Nothing to unfold: one exact query.
        variants.push(vec![Query::new(
            "nc-quantifier-free",
            false,
            body(terms, phi),
        )]);
    } else {
        if mode != Mode::Unfolded {
            variants.push(vec![Query::new("nc-quantified", true, body(raw.0, raw.1))]);
        }
        if mode != Mode::Quantified {
            variants.push(vec![unfolded(k)]);
        }
        if mode == Mode::Race {
            let small: Vec<u32> = DEEPENING.iter().copied().filter(|d| *d < k).collect();
            if let Some((&deepest, shallower)) = small.split_last() {
                let mut chain: Vec<Query> = shallower.iter().map(|&k| unfolded(k)).collect();
                // φ̂^3 → φ̂^14 ∧ κ ≤ 14 → φ̂^14: the bounded search first,
                // since its models are the likelier to replay (measured: HWM
                // 7–9 s this way, 13–14 s after φ̂^14's five misses). It is a
                // witness search for when φ̂^k's models run past the unfolded
                // iterations: its `unsat` proves nothing. One unfolding serves
                // both (the bounds are added after φ̂^14 is printed).
                let (mut own, phik) = unfold(deepest);
                let plain = body(&own, phik);
                let strong = nc::bound_counters(&mut own, phik, deepest);
                chain.push(Query {
                    refutes: false,
                    ..Query::new(format!("nc-bounded:k={deepest}"), false, body(&own, strong))
                });
                chain.push(Query::new(format!("nc-unfolded:k={deepest}"), false, plain));
                variants.push(chain);
            }
        }
    }
    variants
}

/// The unfolding bound K of the ISSTA paper, `apc check`'s default.
pub const DEFAULT_K: u32 = 25;
/// How many models a query may give by default before `nc-sat-no-witness`.
pub const DEFAULT_MAX_MODELS: usize = 5;

impl CheckOptions {
    /// `apc check`'s defaults on these solvers: the race with K = 25, one
    /// job, no dumps, counter inference, 5 models, simplification.
    pub fn new(solvers: Vec<Profile>, timeout: Duration) -> CheckOptions {
        CheckOptions {
            solvers,
            mode: Mode::Race,
            k: DEFAULT_K,
            timeout,
            jobs: 1,
            dump_queries: None,
            counter_inference: true,
            max_models: DEFAULT_MAX_MODELS,
            simplify: true,
        }
    }
}

/// The engine options a check runs with (the key of its conditions in the
/// database).
pub fn engine_options(opts: &CheckOptions) -> Options {
    Options {
        counter_inference: opts.counter_inference,
        solver_timeout: opts.timeout.min(Duration::from_secs(10)),
        helper: opts.solvers.first().cloned(),
        ..Options::default()
    }
}

/// Decides one target.
pub fn check_target(db: &Database, file: SourceFile, t: &Target, opts: &CheckOptions) -> Report {
    let start = Instant::now();
    let deadline = start + opts.timeout;
    let report = |verdict, method: Option<String>, solver: Option<String>| Report {
        target: t.clone(),
        verdict,
        method,
        solver,
        time: start.elapsed(),
    };
    let parsed = db::parse(db, file);
    let Some(prog) = db::program(db, file).as_ref() else {
        return report(
            Verdict::Unknown("unsupported: the program has no main".into()),
            None,
            None,
        );
    };
    let engine_opts = engine_options(opts);
    let raw = db::necessary_condition(db, file, t.function.clone(), t.id, engine_opts.clone());
    let (terms, phi) = if opts.simplify {
        let s = db::simplified_condition(db, file, t.function.clone(), t.id, engine_opts);
        (&s.terms, s.value.0)
    } else {
        (&raw.terms, raw.value)
    };
    if Instant::now() >= deadline {
        return report(
            Verdict::Unknown("timeout (computing the necessary condition)".into()),
            None,
            None,
        );
    }
    let inputs = InputModel::new(&parsed.program, &prog.body, terms, phi);
    let chains = queries((&raw.terms, raw.value), (terms, phi), opts.mode, opts.k);
    // Named by file, target and variant, so that the dumps of several
    // programs can share a directory.
    let stem = std::path::Path::new(file.path(db))
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = format!("{stem}-{}-{}-{}", t.function, t.line, t.col);
    let mut contenders = Vec::new();
    for chain in &chains {
        for profile in &opts.solvers {
            let mut next: Option<Box<Contender>> = None;
            for q in chain.iter().rev() {
                let dump = opts.dump_queries.as_ref().map(|dir| {
                    let variant = q.method.trim_start_matches("nc-").replace([':', '='], "-");
                    dir.join(format!("{name}-{variant}-{}", profile.name))
                });
                next = Some(Box::new(Contender {
                    method: q.method.clone(),
                    profile: profile.clone(),
                    quantified: q.quantified,
                    refutes: q.refutes,
                    query: q.text.clone(),
                    dump,
                    then: next.take(),
                }));
            }
            contenders.extend(next.map(|c| *c));
        }
    }
    let text: &str = file.text(db);
    let lines = LineIndex::new(text);
    let program = &parsed.program;
    let judge =
        |session: &mut smt::Session| inputs.judge(session, |w| hits(program, text, &lines, w, t));
    match smt::race(&contenders, judge, opts.max_models, deadline) {
        RaceOutcome::Unsat { method, solver } => {
            report(Verdict::Unreachable, Some(method), Some(solver))
        }
        RaceOutcome::Accepted {
            method,
            solver,
            witness: (witness, varied),
        } => {
            let method = if varied {
                format!("{method}+varied-model")
            } else {
                method
            };
            report(Verdict::Reachable(witness), Some(method), Some(solver))
        }
        RaceOutcome::Timeout(why) => undecided(&why, true, report),
        RaceOutcome::Undecided(why) => undecided(&why, false, report),
    }
}

/// The verdict when no contender was definite (by the deadline, if
/// `timed_out`): a satisfiable condition without a replayable witness says
/// more than a solver that gave up, which says more than a bare timeout.
fn undecided(
    why: &[(String, String, Undecided)],
    timed_out: bool,
    report: impl Fn(Verdict, Option<String>, Option<String>) -> Report,
) -> Report {
    let no_witness = why.iter().find_map(|(m, s, u)| match u {
        Undecided::NoWitness(miss) => Some((m, s, miss)),
        Undecided::Solver(_) => None,
    });
    let then = if timed_out { " (then timeout)" } else { "" };
    match no_witness {
        Some((m, s, miss)) => report(
            Verdict::Unknown(format!("nc-sat-no-witness: {miss}{then}")),
            Some(m.clone()),
            Some(s.clone()),
        ),
        None if timed_out => report(Verdict::Unknown("timeout".into()), None, None),
        None => {
            let reasons: Vec<String> = why
                .iter()
                .map(|(m, s, u)| match u {
                    Undecided::Solver(r) | Undecided::NoWitness(r) => format!("{m} on {s}: {r}"),
                })
                .collect();
            report(
                Verdict::Unknown(format!("solver-unknown: {}", reasons.join("; "))),
                None,
                None,
            )
        }
    }
}

/// Replays a witness: `Ok(())` if the run hits the target, else what it did.
fn hits(
    program: &crate::syntax::ast::Program,
    text: &str,
    lines: &LineIndex,
    w: &Witness,
    t: &Target,
) -> Result<(), String> {
    use crate::interp::{Limits, Outcome};
    let r = crate::interp::run(program, w, Limits::default()).map_err(|e| e.to_string())?;
    match r.outcome {
        Outcome::Error { kind, span } => {
            let (line, col) = lines.line_col(text, span.start);
            if kind == t.kind && (line, col) == (t.line, t.col) {
                Ok(())
            } else {
                Err(format!("the replay hit {} at {line}:{col}", kind.as_str()))
            }
        }
        Outcome::Returned(v) => Err(format!("the replay returned {v}")),
        Outcome::AssumeFailed { .. } => Err("the replay stopped at a failed assume".into()),
        Outcome::StepLimit { .. } => Err("the replay hit the step limit".into()),
        Outcome::CallDepthLimit { .. } => Err("the replay hit the call-depth limit".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{ArgValue, Limits, Outcome};

    /// A program with a 10,000-operand sum, `&&` chain and mixed `-`/`+`
    /// chain (the longest the parser accepts), each returned by `main`
    /// for `which` = 0, 1, 2, and an assert on each.
    fn chains_program() -> String {
        let n = crate::syntax::parser::MAX_CHAIN_OPERANDS as usize;
        let mixed: String = (1..n)
            .map(|i| match i % 3 {
                0 => " + a",
                1 => " - b",
                _ => " + c",
            })
            .collect();
        format!(
            "main(which, a, b, c) {{\n  var s, t, m, r;\n  s = {};\n  t = {};\n  m = a{mixed};\n  assert(s == {n} * a);\n  assert(t == 0 || a != 0);\n  assert(m != 7);\n  if (which == 0) {{ r = s; }} else {{ if (which == 1) {{ r = t; }} else {{ r = m; }} }}\n  return r;\n}}\n",
            vec!["a"; n].join(" + "),
            vec!["a"; n].join(" && "),
        )
    }

    #[test]
    fn long_chains_go_through_every_stage() {
        // What the CLI does, on the CLI's stack: parse, types, lowering,
        // the interpreter, and `check` (conditions, solver, replay).
        crate::syntax::parser::on_big_stack(|| {
            let n = crate::syntax::parser::MAX_CHAIN_OPERANDS as i64;
            let text = chains_program();
            let db = Database::default();
            let file = SourceFile::new(&db, "chains.mc".into(), text.clone());
            let diags = db::diagnostics(&db, file);
            assert!(diags.is_empty(), "{:?}", diags.first());
            let program = &db::parse(&db, file).program;
            let types = db::program_types(&db, file);
            let bodies = crate::ir::lower_program(program, types);
            let _ = crate::ir::to_text(&bodies[0], &|_| String::new());
            // a = 1, b = 2, c = 3: the mixed chain is 1 + Σ (−2, +3, +1).
            let mixed = 1 + (1..n).map(|i| [1, -2, 3][(i % 3) as usize]).sum::<i64>();
            for (which, want) in [(0, n), (1, 1), (2, mixed)] {
                let w = Witness {
                    args: [("which", which), ("a", 1), ("b", 2), ("c", 3)]
                        .iter()
                        .map(|(p, v)| (p.to_string(), ArgValue::Int((*v).into())))
                        .collect(),
                    input: vec![],
                };
                let r = crate::interp::run(program, &w, Limits::default()).unwrap();
                assert_eq!(r.outcome, Outcome::Returned(want.into()));
            }
            let Some(z3) = smt::default_z3() else {
                panic!("z3 is needed (solvers/install.sh)");
            };
            let targets = targets(&db, file);
            assert_eq!(targets.len(), 3);
            let opts = CheckOptions::new(vec![z3], Duration::from_secs(20));
            let reports = check_all(&db, file, &targets, &opts, &|_| {});
            let verdicts: Vec<&str> = reports.iter().map(|r| r.verdict.name()).collect();
            // The sum is n·a and `t` is 0 or a ≠ 0: both asserts hold. The
            // mixed chain can be 7.
            assert_eq!(
                verdicts,
                ["unreachable", "unreachable", "reachable"],
                "{reports:?}"
            );
        });
    }
}
