//! `apc lsp`: a language server (LSP 3.17 over stdio, on `lsp-server` and
//! `lsp-types`; docs/editors.md). It keeps one salsa database per open
//! document across edits, publishes the front end's errors at once on
//! every change, then each target's verdict as it is checked on a thread
//! of its own, which the next edit cancels.
//!
//! - [`document`]: an open document (its database, text, line index) and
//!   the front end's diagnostics in LSP terms;
//! - [`verdicts`]: the checks of a document's targets on a worker thread,
//!   and their diagnostics;
//! - [`memo`]: what earlier checks found (verdicts by what they depend
//!   on, witnesses);
//! - [`progress`]: `$/progress` while targets are checked;
//! - [`hover`]: a target's verdict, engine, time and explanation;
//! - [`actions`]: replaying a witness, showing a condition, dumping
//!   queries;
//! - here: the settings, the main loop and the protocol's bookkeeping.
//!
//! Knows the front end (through `db`), the portfolio (`check`) and the
//! contract's proofs (`engine`); not the command line.

mod actions;
mod document;
mod hover;
mod memo;
mod progress;
mod verdicts;

use crate::check::{CheckOptions, verdict_counts};
use crossbeam_channel::{Receiver, Sender, select};
use document::Document;
use lsp_server::{Connection, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument,
    Notification as NotificationTrait, PublishDiagnostics,
};
use lsp_types::request::{
    CodeActionRequest, ExecuteCommand, HoverRequest, Request as RequestTrait,
};
use lsp_types::{
    HoverProviderCapability, PositionEncodingKind, PublishDiagnosticsParams, ServerCapabilities,
    TextDocumentSyncCapability, TextDocumentSyncKind, Uri,
};
use memo::Memo;
use std::collections::HashMap;
use verdicts::{Checked, News};

/// What the server checks with, from the command line and the client's
/// initialization options.
#[derive(Clone)]
pub struct Settings {
    pub check: CheckOptions,
    /// Also publish `unreachable` targets, as hints with their proofs.
    pub show_proofs: bool,
    /// Whether the client shows `$/progress`.
    pub progress: bool,
}

/// The capabilities apc's server offers.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::UTF16),
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        code_action_provider: Some(lsp_types::CodeActionProviderCapability::Simple(true)),
        execute_command_provider: Some(lsp_types::ExecuteCommandOptions {
            commands: actions::COMMANDS.map(String::from).to_vec(),
            ..Default::default()
        }),
        ..ServerCapabilities::default()
    }
}

/// Serves one client on `connection` after its `initialize` until it asks
/// to shut down.
pub fn serve(connection: &Connection, settings: Settings) -> Result<(), String> {
    let (done_tx, done_rx) = crossbeam_channel::unbounded();
    let mut server = Server {
        connection,
        settings,
        documents: HashMap::new(),
        memo: Memo::default(),
        done: done_tx,
    };
    server.main_loop(&done_rx)
}

struct Server<'c> {
    connection: &'c Connection,
    settings: Settings,
    /// The open documents, by URI.
    documents: HashMap<String, Document>,
    /// The verdicts of earlier checks, shared with the workers.
    memo: Memo,
    /// Where the workers send what they checked.
    done: Sender<News>,
}

impl Server<'_> {
    fn main_loop(&mut self, done: &Receiver<News>) -> Result<(), String> {
        loop {
            select! {
                recv(self.connection.receiver) -> msg => match msg {
                    Ok(Message::Request(req)) => {
                        if self.connection.handle_shutdown(&req).map_err(|e| e.to_string())? {
                            self.cancel_all();
                            return Ok(());
                        }
                        self.request(req);
                    }
                    Ok(Message::Notification(n)) => self.notification(n),
                    Ok(Message::Response(_)) => {}
                    Err(_) => return Ok(()),
                },
                recv(done) -> news => match news {
                    Ok(News::Checked(c)) => self.checked(c),
                    Ok(News::ProvedFromAnyCall { uri, version, tried, proved, took }) => {
                        self.log(format!(
                            "{} version {version}: {proved} of {tried} proofs hold for any call of their function, in {:.1} ms",
                            uri.as_str(),
                            took.as_secs_f64() * 1000.0
                        ));
                    }
                    Err(_) => {}
                }
            }
        }
    }

    fn request(&mut self, req: Request) {
        let response = match req.method.as_str() {
            HoverRequest::METHOD => match serde_json::from_value(req.params) {
                Ok(params) => Response::new_ok(req.id, hover::hover(&self.documents, &params)),
                Err(e) => Response::new_err(req.id, invalid_params(), e.to_string()),
            },
            CodeActionRequest::METHOD => match serde_json::from_value(req.params) {
                Ok(params) => {
                    Response::new_ok(req.id, actions::code_actions(&self.documents, &params))
                }
                Err(e) => Response::new_err(req.id, invalid_params(), e.to_string()),
            },
            ExecuteCommand::METHOD => self.execute(req),
            _ => Response::new_err(
                req.id,
                lsp_server::ErrorCode::MethodNotFound as i32,
                format!("apc does not answer {}", req.method),
            ),
        };
        self.send(Message::Response(response));
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidOpenTextDocumentParams>(n.params)
                {
                    let d = p.text_document;
                    self.changed(d.uri, d.version, d.text);
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidChangeTextDocumentParams>(n.params)
                    && let Some(change) = p.content_changes.into_iter().last()
                {
                    let d = p.text_document;
                    self.changed(d.uri, d.version, change.text);
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidCloseTextDocumentParams>(n.params)
                    && let Some(mut doc) = self.documents.remove(p.text_document.uri.as_str())
                {
                    doc.cancel();
                    self.publish(&p.text_document.uri, Vec::new(), None);
                }
            }
            _ => {}
        }
    }

    /// A document's new text: the check in flight stops, the front end's
    /// diagnostics go out at once, and the targets are checked anew.
    fn changed(&mut self, uri: Uri, version: i32, text: String) {
        let key = uri.as_str().to_string();
        let doc = match self.documents.get_mut(&key) {
            Some(doc) => {
                doc.cancel();
                doc.set_text(version, text);
                doc
            }
            None => self
                .documents
                .entry(key)
                .or_insert(Document::new(&uri, version, text)),
        };
        let front = doc.front_end_diagnostics();
        let clean = doc.is_clean();
        self.publish(&uri, front, Some(version));
        if clean {
            let doc = self.documents.get_mut(uri.as_str()).expect("just opened");
            let to_client = (self.settings.progress).then(|| self.connection.sender.clone());
            doc.checking = Some(verdicts::start(
                doc,
                &uri,
                &self.settings,
                &self.memo,
                &self.done,
                to_client,
            ));
        }
    }

    /// A worker's verdicts, published if they are of the document's
    /// current version.
    fn checked(&mut self, c: Checked) {
        let Some(doc) = self.documents.get_mut(c.uri.as_str()) else {
            return;
        };
        if doc.version != c.version {
            return;
        }
        doc.reports = c.reports;
        let diagnostics = verdicts::diagnostics(doc, &c.uri, self.settings.show_proofs);
        let [unreachable, reachable, unknown] = verdict_counts(&doc.reports);
        let total = doc.reports.len();
        self.publish(&c.uri, diagnostics, Some(c.version));
        self.log(format!(
            "{} version {}: {total} targets ({unreachable} unreachable, {reachable} reachable, {unknown} unknown), {} remembered ({} for any call), {} checked in {:.1} ms ({} by an earlier witness, {} solver checks)",
            c.uri.as_str(),
            c.version,
            c.tally.remembered,
            c.tally.from_any_call,
            total - c.tally.remembered,
            c.took.as_secs_f64() * 1000.0,
            c.tally.replayed,
            c.tally.solver_checks,
        ));
    }

    /// `workspace/executeCommand`: the replay, its outcome shown to the
    /// user (`window/showMessage`).
    fn execute(&self, req: Request) -> Response {
        let params: lsp_types::ExecuteCommandParams = match serde_json::from_value(req.params) {
            Ok(p) => p,
            Err(e) => return Response::new_err(req.id, invalid_params(), e.to_string()),
        };
        let (docs, args, opts) = (&self.documents, &params.arguments, &self.settings.check);
        let outcome = match params.command.as_str() {
            actions::REPLAY => actions::replay(docs, args),
            actions::CONDITION => actions::condition(docs, args, opts),
            actions::DUMP => actions::dump(docs, args, opts),
            _ => {
                let why = format!("apc has no command {}", params.command);
                return Response::new_err(req.id, invalid_params(), why);
            }
        };
        let (typ, message) = match outcome {
            Ok(m) => (lsp_types::MessageType::INFO, m),
            Err(e) => (
                lsp_types::MessageType::ERROR,
                format!("apc could not do {}: {e}", params.command),
            ),
        };
        show_message(self.connection, typ, message);
        Response::new_ok(req.id, serde_json::Value::Null)
    }

    /// A line in the client's log (`window/logMessage`).
    fn log(&self, message: String) {
        let params = lsp_types::LogMessageParams {
            typ: lsp_types::MessageType::INFO,
            message,
        };
        self.send(Message::Notification(Notification::new(
            lsp_types::notification::LogMessage::METHOD.to_string(),
            params,
        )));
    }

    fn publish(&self, uri: &Uri, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let params = PublishDiagnosticsParams {
            uri: uri.clone(),
            diagnostics,
            version,
        };
        self.send(Message::Notification(Notification::new(
            PublishDiagnostics::METHOD.to_string(),
            params,
        )));
    }

    fn send(&self, msg: Message) {
        // The client is gone if this fails; the receiver then ends the loop.
        let _ = self.connection.sender.send(msg);
    }

    fn cancel_all(&mut self) {
        for doc in self.documents.values_mut() {
            doc.cancel();
        }
    }
}

/// A message in the client's window (`window/showMessage`): a command's
/// outcome, or, before the server is serving, an option it ignores.
pub fn show_message(connection: &Connection, typ: lsp_types::MessageType, message: String) {
    let params = lsp_types::ShowMessageParams { typ, message };
    let _ = connection
        .sender
        .send(Message::Notification(Notification::new(
            lsp_types::notification::ShowMessage::METHOD.to_string(),
            params,
        )));
}

fn invalid_params() -> i32 {
    lsp_server::ErrorCode::InvalidParams as i32
}
