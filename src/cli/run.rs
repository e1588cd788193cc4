//! `apc run`: concrete execution, by the fast engine (or the reference
//! interpreter with `--reference`).

use super::{ExitStatus, Format, Loaded, bad, load, parse_args, parse_input};
use crate::db;
use crate::interp::trace::Step;
use crate::interp::{self, ArgValue, Limits, Outcome, RunError, RunResult, Witness};
use crate::syntax::Span;
use crate::syntax::diagnostic::{Diagnostic, render};
use crate::types::{FunctionTypes, Type};
use clap::Args;
use num_bigint::BigInt;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The microc source file.
    pub file: PathBuf,
    /// Values of main's parameters: `n=3,s=[1,2]`; an input array as a list, nested for
    /// 2-D (`M=[[1,2],[3]]`). A parameter not given is 0 (an empty list for an array).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub args: String,
    /// The input stream read by `input`: `5,-2`; `0*1000` is 0 a thousand times. Reads
    /// past its end give 0 and are reported (`input_exhausted`).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub input: String,
    /// Stop a run that has not ended after this many steps (statements, loop tests and
    /// calls); exit status 4.
    #[arg(long, default_value_t = 10_000_000)]
    pub max_steps: u64,
    /// Run on the reference interpreter, the definition of microc's semantics, rather
    /// than the fast engine (docs/microc.md, "Fast execution"). Both give the same run;
    /// the reference is about 20 times slower.
    #[arg(long)]
    pub reference: bool,
    /// Print the run's trace first: each `if` taken and each loop folded into its
    /// iteration count, with the values each condition read, then the statement that
    /// failed (on the reference interpreter; JSON: `trace`).
    #[arg(long)]
    pub trace: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(a: RunArgs) -> ExitCode {
    let loaded = match load(&a.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let witness = match witness(&loaded, &a) {
        Ok(w) => w,
        Err(code) => return code,
    };
    let limits = Limits {
        max_steps: a.max_steps,
        ..Limits::default()
    };
    let program = &db::parse(&loaded.db, loaded.file).program;
    let run = if a.reference {
        interp::run_reference
    } else {
        interp::run
    };
    let (ran, trace) = if a.trace {
        match interp::trace::run_traced(program, &witness, limits) {
            Ok((r, t)) => (Ok(r), Some(t.steps(loaded.file.text(&loaded.db)))),
            Err(e) => (Err(e), None),
        }
    } else {
        (run(program, &witness, limits), None)
    };
    let result = match ran {
        Ok(r) => r,
        Err(RunError::BadWitness(e)) => return bad(&e),
        Err(RunError::Internal(e)) => {
            eprintln!("apc: internal error in the interpreter: {e}");
            return ExitStatus::Internal.into();
        }
    };
    if result.input_exhausted {
        eprintln!("note: the input stream ran out; the missing inputs were read as 0");
    }
    let ended = Ended::of(&result.outcome, &loaded);
    let trace = trace.map(Ok);
    match a.format {
        Format::Json => print_json(&result, &ended, trace.as_ref()),
        Format::Text => {
            if let Some(t) = &trace {
                outln!("trace:");
                for line in super::explain::trace_lines(t).iter().skip(1) {
                    outln!("{line}");
                }
            }
            print_text(&result, &ended, &loaded, a.max_steps)
        }
    }
    ended.status.into()
}

/// The witness of `--args` and `--input`, checked against main's
/// parameters (missing ones are 0 or empty, with a note).
fn witness(loaded: &Loaded, a: &RunArgs) -> Result<Witness, ExitCode> {
    let given = parse_args(&a.args).map_err(|e| bad(&format!("--args: {e}")))?;
    let input = parse_input(&a.input).map_err(|e| bad(&format!("--input: {e}")))?;
    let parsed = db::parse(&loaded.db, loaded.file);
    let types = db::program_types(&loaded.db, loaded.file);
    let (Some(main), Some(main_types)) = (parsed.program.function("main"), types.function("main"))
    else {
        return Err(bad("the program has no `main`"));
    };
    let params: Vec<String> = main.params.iter().map(|p| p.name.clone()).collect();
    let (args, notes) =
        complete_args(&params, main_types, given).map_err(|e| bad(&format!("--args: {e}")))?;
    for n in notes {
        eprintln!("note: {n}");
    }
    Ok(Witness { args, input })
}

/// How a run ended, with places as (line, col).
struct Ended {
    ret: Option<BigInt>,
    /// The runtime error: its kind, place and span.
    error: Option<(&'static str, (u32, u32), Span)>,
    assume_failed: Option<(u32, u32)>,
    /// The limit that stopped it (`steps`, `call-depth`) and where.
    limit: Option<(&'static str, (u32, u32))>,
    status: ExitStatus,
}

impl Ended {
    fn of(outcome: &Outcome, loaded: &Loaded) -> Ended {
        let mut e = Ended {
            ret: None,
            error: None,
            assume_failed: None,
            limit: None,
            status: ExitStatus::Ok,
        };
        match outcome {
            Outcome::Returned(v) => e.ret = Some(v.clone()),
            Outcome::Error { kind, span } => {
                e.error = Some((kind.as_str(), loaded.loc(*span), *span));
                e.status = ExitStatus::Found;
            }
            Outcome::AssumeFailed { span } => e.assume_failed = Some(loaded.loc(*span)),
            Outcome::StepLimit { span } => {
                e.limit = Some(("steps", loaded.loc(*span)));
                e.status = ExitStatus::Limit;
            }
            Outcome::CallDepthLimit { span } => {
                e.limit = Some(("call-depth", loaded.loc(*span)));
                e.status = ExitStatus::Limit;
            }
        }
        e
    }
}

fn print_json(result: &RunResult, ended: &Ended, trace: Option<&Result<Vec<Step>, String>>) {
    let error_json = match &ended.error {
        Some((kind, (line, col), _)) => json!({"kind": kind, "line": line, "col": col}),
        None => Value::Null,
    };
    let out = json!({
        "outputs": result.outputs.iter().map(big).collect::<Vec<_>>(),
        "return": ended.ret.as_ref().map(big).unwrap_or(Value::Null),
        "error": error_json,
        "input_exhausted": result.input_exhausted,
        "assume_failed": ended.assume_failed.is_some(),
        "limit": ended.limit.map(|(k, _)| Value::from(k)).unwrap_or(Value::Null),
        "steps": result.steps,
    });
    let mut out = out;
    if let Some(t) = trace {
        out["trace"] = super::explain::trace_json(t);
    }
    outln!("{out}");
}

fn print_text(result: &RunResult, ended: &Ended, loaded: &Loaded, max_steps: u64) {
    for o in &result.outputs {
        outln!("{o}");
    }
    if let Some(r) = &ended.ret {
        outln!("return {r}");
    }
    if let Some((kind, (line, col), span)) = &ended.error {
        outln!("error: {kind} at {}:{line}:{col}", loaded.path);
        let d =
            Diagnostic::error(format!("runtime error: {kind}")).primary(*span, kind.to_string());
        eprint!("{}", render(&loaded.path, &loaded.text, &[d]));
    }
    if let Some((line, col)) = ended.assume_failed {
        outln!(
            "assume failed at {}:{line}:{col}: the run ends here",
            loaded.path
        );
    }
    if let Some((what, (line, col))) = ended.limit {
        let why = if what == "steps" {
            format!("step limit ({max_steps} steps) reached; raise it with --max-steps")
        } else {
            "call depth limit reached (runaway recursion?)".to_string()
        };
        outln!("stopped at {}:{line}:{col}: {why}", loaded.path);
    }
}

/// A JSON number of any size.
pub(super) fn big(n: &BigInt) -> Value {
    serde_json::from_str(&n.to_string()).unwrap_or(Value::Null)
}

/// main's arguments, in parameter order, and notes about defaults used.
type CompletedArgs = (Vec<(String, ArgValue)>, Vec<String>);

/// Checks the given arguments against main's parameter types and fills in
/// the missing ones (0, or an empty input array), with a note for each.
pub fn complete_args(
    params: &[String],
    types: &FunctionTypes,
    mut given: Vec<(String, ArgValue)>,
) -> Result<CompletedArgs, String> {
    if let Some((unknown, _)) = given.iter().find(|(n, _)| !params.contains(n)) {
        return Err(format!(
            "`{unknown}` is not a parameter of main (its parameters: {})",
            if params.is_empty() {
                "none".to_string()
            } else {
                params.join(", ")
            }
        ));
    }
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for p in params {
        let ty = types.var(p).cloned().unwrap_or(Type::Int);
        let value = match given.iter().position(|(n, _)| n == p) {
            Some(i) => {
                let v = given.remove(i).1;
                conforms(&v, &ty).map_err(|e| format!("parameter `{p}`: {e}"))?;
                v
            }
            None => {
                let v = if ty.is_int() {
                    ArgValue::Int(BigInt::from(0))
                } else {
                    ArgValue::List(vec![])
                };
                notes.push(format!(
                    "parameter `{p}` not given; using {}",
                    if ty.is_int() { "0" } else { "[]" }
                ));
                v
            }
        };
        out.push((p.clone(), value));
    }
    Ok((out, notes))
}

fn conforms(v: &ArgValue, ty: &Type) -> Result<(), String> {
    match (v, ty) {
        (ArgValue::Int(_), Type::Int) => Ok(()),
        (ArgValue::List(items), Type::Array(elem)) => {
            items.iter().try_for_each(|i| conforms(i, elem))
        }
        (ArgValue::Int(_), Type::Array(_)) => Err(format!("expected a list (its type is {ty})")),
        (ArgValue::List(_), _) => Err(format!("expected an integer (its type is {ty})")),
        (ArgValue::Int(_), _) => Err(format!(
            "main's parameters are integers or input arrays, not {ty}"
        )),
    }
}
