//! The fuzzer (`fuzz`): random tests made of the program's own constants,
//! run on the interpreter's fast engine for a few milliseconds
//! (docs/fuzzing.md). A test whose run fails at a target is a witness,
//! replayed like every engine's. It never proves a target unreachable:
//! tests that all miss say nothing.
//!
//! - [`dictionary`]: the constants (integers and their neighbours, array
//!   literals as tokens);
//! - [`inputs`]: tests drawn from them, by the shape of main's inputs;
//! - [`smaller`]: a test that reached its target, with smaller values;
//! - here: the engine, and a campaign for several targets at once, each
//!   test run by the replayer (`witness::Replayer::run_within`).
//!
//! Knows the front end (through `db`), the interpreter, witnesses and the
//! engine contract; not the other engines.

mod dictionary;
mod inputs;
mod smaller;

pub use dictionary::Dictionary;
pub use inputs::{Shape, Tests};

use crate::db::{Database, SourceFile, Target};
use crate::deadline::{self, Pace, Stop};
use crate::engine::{Decider, Decision, How, Question};
use crate::interp::{Limits, Witness};
use crate::syntax::ast::{ExprKind, Program};
use crate::witness::Replayer;
use std::time::{Duration, Instant};

/// The longest a campaign runs: the fuzzer is the portfolio's cheap first
/// try, and the witness search waits for its turn (docs/fuzzing.md §3).
pub const BUDGET: Duration = Duration::from_millis(20);

/// A campaign for all of a file's targets goes on while it finds them at
/// this pace (docs/fuzzing.md §3): a file whose targets the tests miss
/// loses little before its exploration.
pub const PACE: Pace = Pace {
    head_start: Duration::from_millis(4),
    per_found: Duration::from_millis(1),
};

/// Steps one test's run may take: a test that loops long is not worth
/// more than hundreds of others.
const STEPS_PER_TEST: u64 = 10_000;

/// The fuzzer as an engine of the contract.
pub struct Fuzzer;

impl Decider for Fuzzer {
    fn name(&self) -> &'static str {
        "fuzz"
    }

    fn about(&self) -> &'static str {
        "random tests made of the program's constants, run for a few milliseconds (replayed witnesses only)"
    }

    fn decide(&self, q: &Question, stop: &Stop) -> Decision {
        let left = stop.remaining().unwrap_or(q.options.timeout);
        let c = match campaign(q.db, q.file, q.targets, Until::First(BUDGET.min(left))) {
            Ok(c) => c,
            Err(why) => return Decision::unknown(why),
        };
        let mut d = match c.found.into_iter().next() {
            Some((target, witness)) => {
                let method = q.method(self.name(), How::Tested);
                let mut d = Decision::reachable(witness, method, None);
                d.reached = Some(target);
                d
            }
            None if stop.is_stopped() => Decision::unknown("timeout"),
            None => Decision::unknown(format!("none of {} random tests reached it", c.tests)),
        };
        d.stats.counts = vec![("tests", c.tests)];
        d
    }
}

/// What a campaign found: each target a test reached, with the test
/// (shrunk and replayed), and how many tests ran.
pub struct Campaign {
    pub found: Vec<(Target, Witness)>,
    pub tests: u64,
}

/// How long a campaign goes on.
#[derive(Clone, Copy, Debug)]
pub enum Until {
    /// The first target reached, or the budget spent.
    First(Duration),
    /// Every target reached, the budget spent, or targets found more
    /// slowly than the pace.
    Paced(Duration, Pace),
}

/// Runs random tests of the program in `file` against `targets`, until
/// `until` says or this thread's token stops.
pub fn campaign(
    db: &Database,
    file: SourceFile,
    targets: &[Target],
    until: Until,
) -> Result<Campaign, String> {
    let _p = deadline::phase("testing");
    let parsed = crate::db::parse(db, file);
    let program = &parsed.program;
    let text = file.text(db);
    let shape = shape(program).ok_or("the program has no main")?;
    let dictionary = Dictionary::of(program);
    let mut tests = Tests::new(&dictionary, shape, seed(text));
    let runs = Replayer::new(program, text, targets);
    let start = Instant::now();
    let (budget, pace, first_only) = match until {
        Until::First(budget) => (budget, None, true),
        Until::Paced(budget, pace) => (budget, Some(pace), false),
    };
    let mut c = Campaign {
        found: vec![],
        tests: 0,
    };
    let going = |c: &Campaign| {
        let spent = start.elapsed();
        spent < budget
            && c.found.len() < targets.len()
            && pace.is_none_or(|p| spent < p.allowed(c.found.len()))
    };
    // A stopped campaign ends with what it found, replayed.
    while going(&c) && !deadline::passed() {
        let w = tests.next_test();
        c.tests += 1;
        let Some(target) = target_hit(&runs, &w).filter(|t| !c.found.iter().any(|(f, _)| f == *t))
        else {
            continue;
        };
        if let Some(w) = confirmed(program, text, w, target, &dictionary) {
            c.found.push((target.clone(), w));
            if first_only {
                break;
            }
        }
    }
    Ok(c)
}

/// The shape of main's inputs.
fn shape(program: &Program) -> Option<Shape> {
    let main = program.function("main")?;
    let depths = crate::interp::main_depths(program)?;
    let params = (main.params.iter().zip(depths))
        .map(|(p, d)| (p.name.clone(), d))
        .collect();
    let mut reads_stream = false;
    for f in &program.functions {
        f.walk_exprs(&mut |e| reads_stream |= matches!(e.kind, ExprKind::Input));
    }
    Some(Shape {
        params,
        reads_stream,
    })
}

/// A seed from a text (FNV-1a: stable across builds, unlike the standard
/// hasher): the tests' seed is the program's, so that a run repeats.
pub fn seed(text: &str) -> u64 {
    (text.bytes()).fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The target the run of test `w` fails at, within [`STEPS_PER_TEST`].
fn target_hit<'a>(replay: &Replayer<'a>, w: &Witness) -> Option<&'a Target> {
    let limits = Limits {
        max_steps: STEPS_PER_TEST,
        ..Limits::default()
    };
    replay.run_within(w, limits).ok()
}

/// `w`, which reached `target`, shrunk, its values made smaller, and
/// replayed to it as every engine's witness is.
fn confirmed(
    program: &Program,
    text: &str,
    w: Witness,
    target: &Target,
    dictionary: &Dictionary,
) -> Option<Witness> {
    let replay = Replayer::new(program, text, std::slice::from_ref(target));
    replay.hit(&w).ok()?;
    let w = crate::witness::shrunk(w, &replay);
    let w = smaller::smaller(w, dictionary, &replay);
    replay.hit(&w).ok().map(|_| w)
}
