//! `apc lsp`: the language server on stdio (the contract: `docs/cli.md`;
//! editors: `docs/editors.md`).

use super::check::SolverArgs;
use super::{bad, limits};
use crate::check::CheckOptions;
use crate::lsp::{self, Settings};
use clap::Args;
use lsp_server::Connection;
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
    #[command(flatten)]
    pub solvers: SolverArgs,
}

pub fn lsp(a: LspArgs) -> ExitCode {
    let solvers = match a.solvers.locate() {
        Ok(s) => s,
        Err(code) => return code,
    };
    let (connection, io_threads) = Connection::stdio();
    let result =
        initialize(&connection, &a, solvers).and_then(|settings| lsp::serve(&connection, settings));
    drop(connection);
    let _ = io_threads.join();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => bad(&e),
    }
}

/// The `initialize` handshake: apc's capabilities out, the client's
/// options in.
fn initialize(
    connection: &Connection,
    a: &LspArgs,
    solvers: Vec<crate::smt::Profile>,
) -> Result<Settings, String> {
    let capabilities =
        serde_json::to_value(lsp::capabilities()).map_err(|e| format!("capabilities: {e}"))?;
    let params = connection
        .initialize(capabilities)
        .map_err(|e| format!("the client's initialize: {e}"))?;
    let options = &params["initializationOptions"];
    let timeout = options["timeout"]
        .as_f64()
        .filter(|t| *t > 0.0 && t.is_finite())
        .map_or(a.timeout, Duration::from_secs_f64);
    let mut check = CheckOptions::new(solvers, timeout);
    check.trace = true;
    Ok(Settings {
        check,
        show_proofs: options["showProofs"].as_bool().unwrap_or(a.show_proofs),
    })
}
