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
use vm::{Exit, Machine};

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
}

/// The program compiled for [`run_ready`], or why the fast engine cannot
/// run it.
pub(super) fn prepare(program: &Program) -> Result<Ready, Handback> {
    let code = compile::compile(program)?;
    let main = &program.functions[code.main];
    let depths = super::main_args::index_depths(program, main);
    Ok(Ready { code, depths })
}

/// [`run`] of the program `ready` was prepared from.
pub(super) fn run_ready(
    ready: &Ready,
    program: &Program,
    witness: &Witness,
    limits: Limits,
    reads: Option<&Rc<RefCell<InputReads>>>,
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
    let outcome = match machine.run_main(&args) {
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
