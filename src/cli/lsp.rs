//! `apc lsp`: the language server on stdio (the contract: `docs/cli.md`;
//! editors: `docs/editors.md`).

use super::check::{SolverArgs, SolverChoice};
use super::{bad, limits};
use crate::check::{self, CheckOptions};
use crate::lsp::{self, Settings};
use clap::Args;
use clap::ValueEnum;
use lsp_server::Connection;
use serde_json::Value;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct LspArgs {
    /// Wall-clock limit per target, in seconds (greater than 0); the
    /// client's initialization option `timeout` overrides it.
    #[arg(long, default_value = "10", value_name = "SECS", value_parser = limits::seconds, allow_negative_numbers = true)]
    pub timeout: Duration,
    /// Publish `unreachable` targets too, as hints with their proofs (the
    /// initialization option `showProofs`).
    #[arg(long)]
    pub show_proofs: bool,
    /// Which engine decides, as for `apc check --engine` (the
    /// initialization option `engine`).
    #[arg(long, default_value = crate::check::PORTFOLIO, value_parser = super::check::engine_parser())]
    pub engine: String,
    #[command(flatten)]
    pub solvers: SolverArgs,
}

pub fn lsp(a: LspArgs) -> ExitCode {
    if let Err(code) = a.solvers.locate() {
        return code;
    }
    let (connection, io_threads) = Connection::stdio();
    let result = initialize(&connection, &a).and_then(|settings| lsp::serve(&connection, settings));
    drop(connection);
    let _ = io_threads.join();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => bad(&e),
    }
}

/// The `initialize` handshake: apc's capabilities out, the client's
/// options in. An option apc cannot use is said in the client's window
/// and left at the command line's value.
fn initialize(connection: &Connection, a: &LspArgs) -> Result<Settings, String> {
    let capabilities =
        serde_json::to_value(lsp::capabilities()).map_err(|e| format!("capabilities: {e}"))?;
    let params = connection
        .initialize(capabilities)
        .map_err(|e| format!("the client's initialize: {e}"))?;
    let options = &params["initializationOptions"];
    let mut refused = Vec::new();
    let timeout = match &options["timeout"] {
        Value::Null => a.timeout,
        t => match t.as_f64().filter(|t| *t > 0.0 && t.is_finite()) {
            Some(t) => Duration::from_secs_f64(t),
            None => {
                refused.push(format!("timeout {t}: not a number of seconds above 0"));
                a.timeout
            }
        },
    };
    let engine = match options["engine"].as_str() {
        None => a.engine.as_str(),
        Some(e) if check::engine_choices().contains(&e) => e,
        Some(e) => {
            let known = check::engine_choices().join(", ");
            refused.push(format!("engine {e}: not one of {known}"));
            a.engine.as_str()
        }
    };
    let solvers = solvers(a, &options["solver"], &mut refused)?;
    let mut check = CheckOptions::new(solvers, timeout);
    check.engine = (check::engine_choices().into_iter())
        .find(|n| *n == engine)
        .expect("a known engine");
    check.trace = true;
    for why in refused {
        let warning = lsp_types::MessageType::WARNING;
        lsp::show_message(
            connection,
            warning,
            format!("apc lsp ignores the option {why}"),
        );
    }
    Ok(Settings {
        check,
        show_proofs: options["showProofs"].as_bool().unwrap_or(a.show_proofs),
        progress: params["capabilities"]["window"]["workDoneProgress"] == true,
    })
}

/// The solvers of the option `solver` (`z3`, `cvc5` or `all`), or of the
/// command line when there is none or it cannot be found.
fn solvers(
    a: &LspArgs,
    option: &Value,
    refused: &mut Vec<String>,
) -> Result<Vec<crate::smt::Profile>, String> {
    let mut args = a.solvers.clone();
    if let Some(name) = option.as_str() {
        match SolverChoice::from_str(name, true) {
            Ok(choice) => args.solver = choice,
            Err(_) => refused.push(format!("solver {name}: not z3, cvc5 or all")),
        }
    }
    args.locate_quietly().or_else(|e| {
        refused.push(format!("solver {option}: {e}"));
        a.solvers.locate_quietly()
    })
}
