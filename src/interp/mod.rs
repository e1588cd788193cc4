//! The concrete interpreter: the reference semantics of microc, and the
//! fast engine beside it (`fast`, docs/microc.md "Fast execution"), which
//! [`run`] uses and which hands back to the reference whatever it cannot
//! run exactly.
//!
//! Every other part of apc must agree with it, and every `reachable` verdict
//! is confirmed by replaying its witness here. [`run`] executes `main` on a
//! [`Witness`] (values for main's parameters plus an input stream) and
//! reports the outputs and how the run ended.
//!
//! Semantics in brief (the details are documented where implemented):
//! - Integers are unbounded; `/` truncates toward zero.
//! - Memory is cells plus frames. Arrays and records hold references to
//!   cells, one per element or field: assignment, argument passing,
//!   `return` and `alloc` copy the references, so copies share their
//!   elements (docs/microc.md, "Memory model"). Pointers point to whole
//!   cells (`&x`, `alloc e`); cells are never freed.
//! - Evaluation is left to right; in `lhs = rhs` the rhs is evaluated first,
//!   then the place `lhs` is resolved (its base read before its index).
//! - A read of `a[i]` evaluates `a` (its cells) before `i`: when `i`
//!   contains a call that assigns `a` anew, the element is read from the
//!   cells `a` held before the call.
//! - The first runtime error (a target) ends the run; so does a failed
//!   `assume`, the step limit, or the call-depth limit.
//! - Steps: one per executed statement (blocks included), one per later
//!   evaluation of a loop condition (the first one is the `while`'s own
//!   step), one per call. The `return` of a function is part of its call.
//!   `RunResult::steps` is the number of steps taken; it never exceeds
//!   `max_steps`.
//! - Resource limits beyond the two in [`Limits`]: a multiplication whose
//!   result would exceed 2^20 bits ends the run as `StepLimit` (the run is
//!   not going to finish in reasonable time or memory anyway), and
//!   exhausting the host stack ends it as `CallDepthLimit`, at the call
//!   that would overflow; more than `MAX_CELLS` cells end it as
//!   `StepLimit`.
//!
//! Input arrays (parameters of `main` that are indexed) are never out of
//! bounds: an element the witness did not give reads as 0, or as an empty
//! input array when the elements are arrays. Input arrays are the witness's
//! read-only data, held by value: writes to a local copy of one go to that
//! copy only. See `value.rs` and `main_args.rs`.

mod exec;
mod fast;
mod main_args;
pub mod trace;
mod value;

#[cfg(test)]
mod tests;

use crate::TargetKind;
use crate::syntax::Span;
use crate::syntax::ast::Program;
use exec::{Interp, Stop};
use num_bigint::BigInt;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

/// A value given for a parameter of main: an integer, or a (possibly nested)
/// list for an input array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgValue {
    Int(BigInt),
    List(Vec<ArgValue>),
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Witness {
    pub args: Vec<(String, ArgValue)>,
    pub input: Vec<BigInt>,
}

impl std::fmt::Display for ArgValue {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            ArgValue::Int(n) => write!(f, "{n}"),
            ArgValue::List(xs) => {
                let items: Vec<String> = xs.iter().map(ArgValue::to_string).collect();
                write!(f, "[{}]", items.join(", "))
            }
        }
    }
}

/// `n=3 s=[72, 101] input=[5, -2]`, as `apc run --args … --input …` takes it.
impl std::fmt::Display for Witness {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        for (n, v) in &self.args {
            write!(f, "{n}={v} ")?;
        }
        write!(f, "input=[{}]", input_runs(&self.input))
    }
}

/// Runs at least this long print as `value*count`, as `--input` takes
/// them: a witness of a long loop may read millions of inputs.
const SHORTEST_PRINTED_RUN: usize = 16;

/// `5, -2, 0*1999994`: the input stream, long runs of one value shortened.
pub fn input_runs(input: &[BigInt]) -> String {
    let mut items: Vec<String> = Vec::new();
    for (value, run) in runs_of(input) {
        if run >= SHORTEST_PRINTED_RUN {
            items.push(format!("{value}*{run}"));
        } else {
            items.extend(std::iter::repeat_n(value.to_string(), run));
        }
    }
    items.join(", ")
}

/// The stream as runs of one value: (value, how many times).
pub fn runs_of(input: &[BigInt]) -> Vec<(&BigInt, usize)> {
    let mut out = Vec::new();
    let mut rest = input;
    while let Some(first) = rest.first() {
        let run = rest.iter().take_while(|v| *v == first).count();
        out.push((first, run));
        rest = &rest[run..];
    }
    out
}

/// Most values an input stream may hold (runs `v*count` included): a
/// stream is held in memory, 32 bytes a value.
pub const MAX_INPUT_VALUES: usize = 20_000_000;

#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_steps: u64,
    pub max_call_depth: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_steps: 10_000_000,
            max_call_depth: 10_000,
        }
    }
}

impl Limits {
    /// The limits of a witness's replay: under a deadline (a replay within
    /// `apc check`'s time for its target), no step limit, so the replay
    /// gets the time left to its target and no less; without one, the
    /// default limits.
    pub fn for_replay() -> Limits {
        match crate::deadline::current() {
            Some(_) => Limits {
                max_steps: u64::MAX,
                ..Limits::default()
            },
            None => Limits::default(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Returned(BigInt),
    /// A runtime error (a target was hit). `span` is ABSOLUTE (file offsets).
    Error {
        kind: TargetKind,
        span: Span,
    },
    /// An `assume(e)` with e == 0: the run ends silently.
    AssumeFailed {
        span: Span,
    },
    /// max_steps reached, or the deadline of the caller (a replay within
    /// `apc check`'s time) passed; span = the statement being executed.
    StepLimit {
        span: Span,
    },
    /// max_call_depth reached; span = the call expression.
    CallDepthLimit {
        span: Span,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunResult {
    pub outputs: Vec<BigInt>,
    pub outcome: Outcome,
    pub input_exhausted: bool,
    pub steps: u64,
}

/// Errors that are not runtime errors of the program: a bad witness (unknown
/// parameter name, missing parameter, an Int given for a parameter used as an
/// array or vice versa), or an internal inconsistency (ill-typed program).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    BadWitness(String),
    Internal(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::BadWitness(m) => write!(f, "bad witness: {m}"),
            RunError::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for RunError {}

/// Replays a witness (the check of every `reachable` verdict): `Ok(())` if
/// the run fails with `kind` at `at` (line, column in `text`), else what the
/// run did instead.
pub fn replay_hits(
    program: &Program,
    text: &str,
    lines: &crate::syntax::LineIndex,
    w: &Witness,
    kind: TargetKind,
    at: (u32, u32),
) -> Result<(), String> {
    let (k, place) = replay_error(program, text, lines, w)?;
    if (k, place) == (kind, at) {
        Ok(())
    } else {
        Err(hit_elsewhere(k, place))
    }
}

/// Why a replay that ended with the error `kind` at `(line, col)` is not
/// the target's.
pub fn hit_elsewhere(kind: TargetKind, (line, col): (u32, u32)) -> String {
    format!("the replay hit {} at {line}:{col}", kind.as_str())
}

/// The error a run ended with and where (line, column), or what the run
/// did instead.
pub type ErrorPlace = Result<(TargetKind, (u32, u32)), String>;

/// The error a witness's run ends with, and where (line, column in
/// `text`); what the run did instead if it ends otherwise. Within the
/// time left to its target ([`Limits::for_replay`]).
pub fn replay_error(
    program: &Program,
    text: &str,
    lines: &crate::syntax::LineIndex,
    w: &Witness,
) -> ErrorPlace {
    Prepared::new(program)
        .replay_within(text, lines, w, Limits::for_replay(), false)
        .0
}

/// A program made ready for many runs: what the fast engine compiles from
/// it is built at the first run and kept for the next ones. An engine
/// that replays a witness per error it finds replays through one.
pub struct Prepared<'p> {
    program: &'p Program,
    fast: std::sync::OnceLock<Result<fast::Ready, fast::Handback>>,
}

impl<'p> Prepared<'p> {
    pub fn new(program: &'p Program) -> Prepared<'p> {
        Prepared {
            program,
            fast: std::sync::OnceLock::new(),
        }
    }

    pub fn program(&self) -> &'p Program {
        self.program
    }

    /// [`run`] (with the cells of the witness read, when `reads`).
    fn run_fast(
        &self,
        w: &Witness,
        limits: Limits,
        reads: Option<&Rc<RefCell<InputReads>>>,
    ) -> Option<(RunResult, usize)> {
        let ready = self.ready().ok()?;
        fast_or_handed_back(|| fast::run_ready(ready, self.program, w, limits, reads))
    }

    /// The fast engine's native tier alone, from the first step (a run
    /// of the fast engine tiers up to it only when it is long): its
    /// result, or why it handed the run back. For the differential tests.
    pub fn run_native(&self, w: &Witness, limits: Limits) -> Result<RunResult, &'static str> {
        fast::run_native(self.ready()?, self.program, w, limits)
    }

    /// The program compiled for the fast engine, at the first call.
    fn ready(&self) -> Result<&fast::Ready, fast::Handback> {
        let ready = self.fast.get_or_init(|| fast::prepare(self.program));
        ready.as_ref().map_err(|why| *why)
    }

    /// [`run`] of the prepared program.
    pub fn run(&self, w: &Witness, limits: Limits) -> Result<RunResult, RunError> {
        match self.run_fast(w, limits, None) {
            Some((result, _)) => Ok(result),
            None => run_reference(self.program, w, limits),
        }
    }

    /// [`run_reading`] of the prepared program.
    pub fn run_reading(
        &self,
        w: &Witness,
        limits: Limits,
    ) -> Result<(RunResult, InputReads), RunError> {
        let reads = Rc::new(RefCell::new(InputReads::default()));
        if let Some((result, stream)) = self.run_fast(w, limits, Some(&reads)) {
            let mut reads = reads.take();
            reads.stream = stream;
            return Ok((result, reads));
        }
        run_with_stack(self.program, w, limits, STACK_SIZE, true)
    }

    /// [`replay_error`] within `limits`, and, when `reading`, which of the
    /// witness's input cells the run read.
    pub fn replay_within(
        &self,
        text: &str,
        lines: &crate::syntax::LineIndex,
        w: &Witness,
        limits: Limits,
        reading: bool,
    ) -> (ErrorPlace, InputReads) {
        let run = if reading {
            self.run_reading(w, limits)
        } else {
            self.run(w, limits).map(|r| (r, InputReads::default()))
        };
        match run {
            Ok((r, reads)) => (error_place(r, text, lines), reads),
            Err(e) => (Err(e.to_string()), InputReads::default()),
        }
    }
}

pub fn error_place(r: RunResult, text: &str, lines: &crate::syntax::LineIndex) -> ErrorPlace {
    match r.outcome {
        Outcome::Error { kind, span } => Ok((kind, lines.line_col(text, span.start))),
        Outcome::Returned(v) => Err(format!("the replay returned {v}")),
        Outcome::AssumeFailed { .. } => Err("the replay stopped at a failed assume".into()),
        Outcome::StepLimit { .. } => Err(STEP_LIMIT_MISS.into()),
        Outcome::CallDepthLimit { .. } => Err("the replay hit the call-depth limit".into()),
    }
}

/// Why a replay that ended at the step limit (or its deadline) missed.
const STEP_LIMIT_MISS: &str = "the replay hit the step limit";

/// Whether a replay ended at the step limit or its deadline (a longer
/// replay might still hit).
pub fn ended_at_step_limit(error: &ErrorPlace) -> bool {
    error.as_ref().err().map(String::as_str) == Some(STEP_LIMIT_MISS)
}

/// Which cells of its witness a run read: the integer elements of main's
/// input arrays, by the parameter's position and the index path (given by
/// the witness or not; negative indices are left out, as a witness cannot
/// give them), and how many values of the input stream. A model's judge
/// asks the solver for exactly these (docs/necessary-conditions.md §9).
#[derive(Clone, Debug, Default)]
pub struct InputReads {
    pub cells: BTreeSet<(usize, Vec<usize>)>,
    pub stream: usize,
    /// More than [`InputReads::MAX_CELLS`] distinct cells were read; the
    /// rest are not recorded.
    pub overflow: bool,
    /// The key of the last read already recorded, kept for the next: a
    /// run that reads the same cells again allocates nothing.
    spare_key: Vec<usize>,
}

impl InputReads {
    pub const MAX_CELLS: usize = 1 << 16;

    /// Records a read of element `i` of the array at `path` in main's
    /// parameter `param`.
    pub(crate) fn record(&mut self, param: usize, path: &[usize], i: usize) {
        let mut key = std::mem::take(&mut self.spare_key);
        key.clear();
        key.extend_from_slice(path);
        key.push(i);
        let key = (param, key);
        if self.cells.contains(&key) {
            self.spare_key = key.1;
        } else if self.cells.len() < Self::MAX_CELLS {
            self.cells.insert(key);
        } else {
            self.overflow = true;
            self.spare_key = key.1;
        }
    }
}

/// How deep the lists of each of `main`'s parameters nest, as a witness
/// gives them (0: an integer), in order; `None` without a `main`.
pub fn main_depths(program: &Program) -> Option<Vec<u32>> {
    let main = program.function("main")?;
    Some(main_args::index_depths(program, main))
}

/// Host stack for a run: deep microc recursion recurses on the host.
pub(crate) const STACK_SIZE: usize = 1 << 30;

/// Runs `main` of `program` on `witness`: by the fast engine where it
/// can, else by the reference interpreter (see [`run_reference`]); the
/// two give the same result (docs/microc.md, "Fast execution").
pub fn run(program: &Program, witness: &Witness, limits: Limits) -> Result<RunResult, RunError> {
    Prepared::new(program).run(witness, limits)
}

/// The fast engine's run, or `None` when it hands the run back. A panic
/// of the fast engine (a bug: the differential tests, which call it
/// directly, would show it) hands the run back too, as the reference ran
/// on a thread of its own whose panics are internal errors.
fn fast_or_handed_back<T>(run: impl FnOnce() -> Result<T, &'static str>) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
        .ok()
        .and_then(Result::ok)
}

/// The fast engine alone: its result, or why it handed the run back to
/// the reference (the differential tests and `apc bench run` use it).
pub fn run_fast(
    program: &Program,
    witness: &Witness,
    limits: Limits,
) -> Result<RunResult, &'static str> {
    fast::run(program, witness, limits, None).map(|(result, _)| result)
}

/// Runs `main` of `program` on `witness` with the reference interpreter.
///
/// Runs on a fresh thread with a 1 GiB stack (only touched pages are
/// committed), so deep recursion is fine. Never panics on a parsed program,
/// even an ill-typed one: type confusion is `RunError::Internal` (or
/// `BadWitness` when a witness list is used as an integer).
pub fn run_reference(
    program: &Program,
    witness: &Witness,
    limits: Limits,
) -> Result<RunResult, RunError> {
    run_with_stack(program, witness, limits, STACK_SIZE, false).map(|(r, _)| r)
}

/// [`run`], recording which of the witness's input cells the run reads.
pub fn run_reading(
    program: &Program,
    witness: &Witness,
    limits: Limits,
) -> Result<(RunResult, InputReads), RunError> {
    Prepared::new(program).run_reading(witness, limits)
}

/// [`run_reading`] by the reference interpreter alone.
pub fn run_reading_reference(
    program: &Program,
    witness: &Witness,
    limits: Limits,
) -> Result<(RunResult, InputReads), RunError> {
    run_with_stack(program, witness, limits, STACK_SIZE, true)
}

fn run_with_stack(
    program: &Program,
    witness: &Witness,
    limits: Limits,
    stack_size: usize,
    reading: bool,
) -> Result<(RunResult, InputReads), RunError> {
    // The caller's token (a replay within `apc check`'s per-target time,
    // or an editor's check that an edit cancels) holds on the
    // interpreter's own thread too: its deadline and its being stopped.
    let stop = crate::deadline::current_stop();
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("apc-interp".into())
            .stack_size(stack_size)
            .spawn_scoped(scope, move || {
                let run = || run_here(program, witness, limits, stack_size, reading);
                match stop {
                    // The interpreter reads the token, it never stops at
                    // it by unwinding: it ends the run as a limit.
                    Some(stop) => (stop.run(run))
                        .unwrap_or_else(|_| Err(RunError::Internal("deadline".into()))),
                    None => run(),
                }
            })
            .map_err(|e| RunError::Internal(format!("cannot start the interpreter thread: {e}")))?;
        handle.join().unwrap_or_else(|panic| {
            Err(RunError::Internal(format!(
                "the interpreter panicked: {}",
                panic_message(panic.as_ref())
            )))
        })
    })
}

/// The run itself, on the current thread (which has `stack_size` bytes);
/// `reading`: record the witness cells it reads.
fn run_here(
    program: &Program,
    witness: &Witness,
    limits: Limits,
    stack_size: usize,
    reading: bool,
) -> Result<(RunResult, InputReads), RunError> {
    let Some(main) = program.functions.iter().position(|f| f.name.name == "main") else {
        return Err(RunError::Internal("the program has no `main`".into()));
    };
    let reads = reading.then(|| Rc::new(RefCell::new(InputReads::default())));
    let args = main_args::main_args(
        program,
        &program.functions[main],
        &witness.args,
        reads.as_ref(),
    )?;
    let mut interp = Interp::new(program, main, &witness.input, limits, stack_size);
    let outcome = match interp.run_main(args) {
        Ok(n) => Outcome::Returned(n),
        Err(Stop::Outcome(o)) => o,
        Err(Stop::Error(e)) => return Err(e),
    };
    let result = RunResult {
        outputs: std::mem::take(&mut interp.outputs),
        outcome,
        input_exhausted: interp.input_reads > witness.input.len(),
        steps: interp.steps,
    };
    let mut reads = reads.map(|r| r.take()).unwrap_or_default();
    reads.stream = interp.input_reads;
    Ok((result, reads))
}

/// The message of a caught panic (`panic!` with a literal or a format).
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}
