//! The fast execution engine: the same semantics as the reference
//! interpreter (`exec.rs`), run from a register bytecode with 64-bit
//! integers (docs/microc.md, "Fast execution").
//!
//! The reference stays the definition. A run the fast engine cannot
//! finish exactly (a program it does not compile, a write into an input
//! array, an integer beyond 64 bits, a value of the wrong kind) is handed back
//! whole: [`run`] answers `None` and the caller runs the reference from
//! the start, which gives the same run because runs are deterministic.
//! Whatever the fast engine does answer (outputs, outcome and its place,
//! steps, input reads) is the reference's answer, which the differential
//! tests check.

mod code;
mod compile;
mod native;
mod vm;

use super::main_args::main_args_at;
use super::value::Value;
use super::{InputReads, Limits, Outcome, RunResult, Witness};
use crate::syntax::ast::Program;
use code::Val;
use num_bigint::BigInt;
use num_traits::ToPrimitive;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::OnceLock;
use vm::{Exit, Machine};

/// [`run`] by the native tier from the first step, whatever the run's
/// length (the differential tests use it).
pub(super) fn run_native(
    ready: &Ready,
    program: &Program,
    witness: &Witness,
    limits: Limits,
) -> Result<RunResult, Handback> {
    let native = ready.native()?;
    run_tier(ready, program, witness, limits, None, Tier::Native(native)).map(|(r, _)| r)
}

/// Why the fast engine handed a run back to the reference.
pub type Handback = &'static str;

/// Runs `main` on `witness` if the fast engine can, on the calling thread
/// (it needs no deep host stack): the result and how many values of the
/// input stream it read.
/// `reads`: where the input arrays record the cells the run reads.
pub(super) fn run(
    program: &Program,
    witness: &Witness,
    limits: Limits,
    reads: Option<&Rc<RefCell<InputReads>>>,
) -> Result<(RunResult, usize), Handback> {
    run_ready(&prepare(program)?, program, witness, limits, reads)
}

/// What a run needs of its program before it starts, built once for
/// many runs (`interp::Prepared`): the bytecode, and how deep main's
/// parameters are indexed. Building it walks the whole program, which a
/// file of 300 asserts paid at each of its 300 replays.
pub(super) struct Ready {
    code: code::Code,
    depths: Vec<u32>,
    /// The native tier's code, compiled at the first run that needs it.
    native: OnceLock<Result<native::Native, Handback>>,
}

/// Steps a run takes in the interpreter's loop before it is run again
/// from the start, natively (docs/microc.md, "Native tier"): at least
/// this many, and more for a bigger program, since compiling costs about
/// 0.1–0.25 ms per bytecode operation. The factor per operation is low
/// because most of a big program's operations are straight-line (an
/// array literal's elements), which compile fast; at `1 << 15` the array
/// sweep of `apc bench run` never went native and ran at 13x the
/// reference instead of 35x.
const NATIVE_AFTER_STEPS: u64 = 1 << 18;
const NATIVE_AFTER_STEPS_PER_OPERATION: u64 = 1 << 11;

impl Ready {
    fn native(&self) -> Result<&native::Native, Handback> {
        let native = self.native.get_or_init(|| native::compile(&self.code));
        native.as_ref().map_err(|why| *why)
    }

    /// The steps a run takes in the loop before it goes native.
    fn native_after(&self) -> u64 {
        let size = self.code.instrs.len() as u64;
        NATIVE_AFTER_STEPS.max(size.saturating_mul(NATIVE_AFTER_STEPS_PER_OPERATION))
    }
}

/// Which of the fast engine's tiers runs a program.
#[derive(Clone, Copy)]
enum Tier<'n> {
    Loop,
    Native(&'n native::Native),
}

/// The program compiled for [`run_ready`], or why the fast engine cannot
/// run it.
pub(super) fn prepare(program: &Program) -> Result<Ready, Handback> {
    let code = compile::compile(program)?;
    let main = &program.functions[code.main];
    let depths = super::main_args::index_depths(program, main);
    Ok(Ready {
        code,
        depths,
        native: OnceLock::new(),
    })
}

/// [`run`] of the program `ready` was prepared from: in the
/// interpreter's loop, and natively from the start once the run is long.
/// Runs are deterministic, so the native run is the same run.
pub(super) fn run_ready(
    ready: &Ready,
    program: &Program,
    witness: &Witness,
    limits: Limits,
    reads: Option<&Rc<RefCell<InputReads>>>,
) -> Result<(RunResult, usize), Handback> {
    let short = Limits {
        max_steps: limits.max_steps.min(ready.native_after()),
        ..limits
    };
    let first = run_tier(ready, program, witness, short, reads, Tier::Loop)?;
    let cut_short = short.max_steps < limits.max_steps
        && matches!(first.0.outcome, Outcome::StepLimit { .. })
        && first.0.steps == short.max_steps;
    if !cut_short {
        return Ok(first);
    }
    // A program the native tier cannot compile, or a recursion deeper
    // than its stack allows, is the loop's to run whole.
    let Ok(native) = ready.native() else {
        return run_tier(ready, program, witness, limits, reads, Tier::Loop);
    };
    match run_tier(ready, program, witness, limits, reads, Tier::Native(native)) {
        Err(native::NATIVE_STACK) => run_tier(ready, program, witness, limits, reads, Tier::Loop),
        other => other,
    }
}

fn run_tier(
    ready: &Ready,
    program: &Program,
    witness: &Witness,
    limits: Limits,
    reads: Option<&Rc<RefCell<InputReads>>>,
    tier: Tier,
) -> Result<(RunResult, usize), Handback> {
    let code = &ready.code;
    let main = &program.functions[code.main];
    let values =
        main_args_at(main, &witness.args, reads, &ready.depths).map_err(|_| "a bad witness")?;
    let mut machine = Machine::new(code, &witness.input, limits);
    let mut args = Vec::with_capacity(values.len());
    for v in values {
        args.push(match v {
            Value::Int(n) => n
                .to_i64()
                .map(Val::Int)
                .ok_or("an argument beyond 64 bits")?,
            Value::Input(a) => machine.input_array(a),
            _ => return Err("an argument that is neither an integer nor an input array"),
        });
    }
    let returned = match tier {
        Tier::Loop => machine.run_main(&args),
        Tier::Native(native) => native::run(native, &mut machine, &args),
    };
    let outcome = match returned {
        Ok(n) => Outcome::Returned(BigInt::from(n)),
        Err(Exit::Outcome(o)) => o,
        Err(Exit::Bail(why)) => return Err(why),
    };
    let result = RunResult {
        outputs: machine.outputs.iter().map(|&n| BigInt::from(n)).collect(),
        outcome,
        input_exhausted: machine.input_reads > witness.input.len(),
        steps: machine.steps(),
    };
    Ok((result, machine.input_reads))
}
