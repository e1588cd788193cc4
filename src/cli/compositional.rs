//! `apc compositional`: the compositional engine alone, with its summaries
//! (the contract: `docs/cli.md`).

use super::check::{SolverArgs, witness_json};
use super::{ExitStatus, Format, limits, load};
use crate::compositional::{self, End, Options, Outcome};
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct CompositionalArgs {
    /// The microc source file.
    pub file: PathBuf,
    /// Wall-clock limit of the run (seconds).
    #[arg(long, default_value = "30", value_name = "SECS", value_parser = limits::seconds, allow_negative_numbers = true)]
    pub timeout: Duration,
    /// Most steps (a step checks one chosen leaf and interprets it).
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u64>,
    /// Also print every leaf (function, status, flowgraph vertex as `apc cfg`
    /// numbers it, depth, path condition over the function's own
    /// symbols) and every invocation (caller, callee, globals at the call, the
    /// caller's path condition).
    #[arg(long)]
    pub show: bool,
    #[command(flatten)]
    pub solvers: SolverArgs,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn compositional(a: CompositionalArgs) -> ExitCode {
    let solver = match a.solvers.locate_one("compositional") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let loaded = match load(&a.file) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let mut opts = Options::new(solver);
    opts.timeout = Some(a.timeout);
    opts.max_steps = a.max_steps.unwrap_or(u64::MAX);
    opts.show = a.show;
    let outcome = match compositional::run(&loaded.db, loaded.file, &opts) {
        Ok(o) => o,
        Err(why) => {
            eprintln!("apc: {}: {why}", loaded.path);
            return ExitStatus::Undecided.into();
        }
    };
    let targets = crate::check::targets(&loaded.db, loaded.file);
    match a.format {
        Format::Text => print_text(&loaded.path, &targets, &outcome),
        Format::Json => print_json(&loaded.path, &targets, &outcome),
    }
    exit_status(&outcome).into()
}

fn exit_status(o: &Outcome) -> ExitStatus {
    if !o.reached.is_empty() {
        ExitStatus::Found
    } else if o.end == End::Terminated && o.stats.replay_failures.is_empty() {
        ExitStatus::Ok
    } else {
        ExitStatus::Undecided
    }
}

fn end_text(o: &Outcome) -> String {
    match &o.end {
        End::Terminated => "terminated: no unknown leaf is left".into(),
        End::GoalReached => "stopped at the goal".into(),
        End::Stopped(why) => format!("stopped with unknown leaves left: {why}"),
    }
}

/// A target's verdict after the run: reached, unreachable (only after
/// termination), or open.
fn verdict(o: &Outcome, t: &crate::db::Target) -> &'static str {
    if o.reached.iter().any(|r| r.target == *t) {
        "reachable"
    } else if o.end == End::Terminated && o.stats.replay_failures.is_empty() {
        "unreachable"
    } else {
        "unknown"
    }
}

fn print_text(path: &str, targets: &[crate::db::Target], o: &Outcome) {
    for t in targets {
        let v = verdict(o, t);
        let how = match o.reached.iter().find(|r| r.target == *t) {
            Some(r) => format!(" with {} (step {})", &r.witness, r.step),
            None => String::new(),
        };
        outln!(
            "{path}:{}:{}: {} in {}: {v}{how}",
            t.line,
            t.col,
            t.kind.as_str(),
            t.function
        );
    }
    outln!("function  leaves: unknown finished unreachable failed  in-rs  invoked  depth");
    for f in &o.functions {
        outln!(
            "{:<9} {:>16} {:>8} {:>11} {:>6} {:>6} {:>8} {:>6}",
            f.name,
            f.unknown,
            f.finished,
            f.unreachable,
            f.failed,
            f.in_rs,
            f.invoked,
            f.depth
        );
    }
    for l in &o.leaves {
        outln!(
            "  leaf {} {:?} at vertex {} (depth {}): {}",
            l.function,
            l.stat,
            l.node,
            l.depth,
            l.pc
        );
    }
    for i in &o.invocations {
        outln!(
            "  invocation {} -> {}({}) when {}",
            i.caller,
            i.callee,
            i.globals.join(", "),
            i.pc
        );
    }
    let s = &o.stats;
    outln!(
        "{} steps, {} queries ({} checks without the solver, {} unknown answers), {:.1} ms in the solver, {} invocations, {} leaves revived, {} ms in all",
        s.steps,
        s.queries,
        s.trivial_checks,
        s.unknown_answers,
        super::rounded_ms(s.solver_time, 1),
        s.invocations,
        s.revived,
        super::rounded_ms(s.elapsed, 1)
    );
    for f in &s.replay_failures {
        outln!("a witness did not replay (a bug): {f}");
    }
    outln!("{}", end_text(o));
}

fn print_json(path: &str, targets: &[crate::db::Target], o: &Outcome) {
    let s = &o.stats;
    let ts: Vec<_> = targets
        .iter()
        .map(|t| {
            let r = o.reached.iter().find(|r| r.target == *t);
            json!({
                "kind": t.kind.as_str(),
                "function": t.function,
                "line": t.line,
                "col": t.col,
                "verdict": verdict(o, t),
                "witness": r.map(|r| witness_json(&r.witness)),
                "step": r.map(|r| r.step),
            })
        })
        .collect();
    let fs: Vec<_> = o
        .functions
        .iter()
        .map(|f| {
            json!({
                "name": f.name, "unknown": f.unknown, "finished": f.finished,
                "unreachable": f.unreachable, "failed": f.failed, "in_rs": f.in_rs,
                "invoked": f.invoked, "depth": f.depth,
            })
        })
        .collect();
    let (end, reason) = match &o.end {
        End::Terminated => ("terminated", None),
        End::GoalReached => ("goal-reached", None),
        End::Stopped(why) => ("stopped", Some(why.clone())),
    };
    let leaves: Vec<_> = o
        .leaves
        .iter()
        .map(|l| {
            json!({
                "function": l.function, "status": format!("{:?}", l.stat).to_lowercase(),
                "node": l.node, "depth": l.depth, "pc": l.pc,
            })
        })
        .collect();
    let invocations: Vec<_> = o
        .invocations
        .iter()
        .map(|i| json!({"caller": i.caller, "callee": i.callee, "globals": i.globals, "pc": i.pc}))
        .collect();
    let v = json!({
        "leaves": leaves,
        "invocations": invocations,
        "file": path,
        "engine": "compositional",
        "end": end,
        "reason": reason,
        "targets": ts,
        "functions": fs,
        "stats": {
            "steps": s.steps, "queries": s.queries, "trivial_checks": s.trivial_checks,
            "unknown_answers": s.unknown_answers, "invocations": s.invocations,
            "revived": s.revived, "solver_ms": super::rounded_ms(s.solver_time, 1),
            "smt_bytes": s.smt_bytes, "replay_failures": s.replay_failures,
            "time_ms": super::rounded_ms(s.elapsed, 1),
        },
    });
    outln!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
}
