//! `$/progress` while a document's targets are checked: the server asks
//! the client for a token (`window/workDoneProgress/create`), begins with
//! the number of targets, reports each verdict as it comes, and ends with
//! the counts, or with "cancelled" when an edit stopped the check. Only
//! for clients that say they show progress.

use crate::check::Report;
use crossbeam_channel::Sender;
use lsp_server::{Message, Notification, Request, RequestId};
use lsp_types::notification::{Notification as _, Progress as ProgressNotification};
use lsp_types::request::{Request as _, WorkDoneProgressCreate};
use lsp_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress, WorkDoneProgressBegin,
    WorkDoneProgressCreateParams, WorkDoneProgressEnd, WorkDoneProgressReport,
};
use std::sync::atomic::{AtomicUsize, Ordering};

/// One check's progress, shown in the client.
pub(super) struct Progress {
    to_client: Sender<Message>,
    token: NumberOrString,
    total: usize,
    done: AtomicUsize,
}

impl Progress {
    /// Asks the client for a token and begins: `total` targets to check,
    /// `remembered` of them answered already.
    pub fn begin(to_client: Sender<Message>, name: String, total: usize) -> Progress {
        let token = NumberOrString::String(format!("apc-check:{name}"));
        let create = WorkDoneProgressCreateParams {
            token: token.clone(),
        };
        let _ = to_client.send(Message::Request(Request::new(
            RequestId::from(format!("apc-progress:{name}")),
            WorkDoneProgressCreate::METHOD.to_string(),
            create,
        )));
        let p = Progress {
            to_client,
            token,
            total,
            done: AtomicUsize::new(0),
        };
        p.send(WorkDoneProgress::Begin(WorkDoneProgressBegin {
            title: "apc".into(),
            cancellable: Some(false),
            message: Some(format!("checking {total} targets")),
            percentage: Some(0),
        }));
        p
    }

    /// One more target decided.
    pub fn decided(&self, r: &Report) {
        let done = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        let percentage = (done * 100 / self.total.max(1)) as u32;
        self.send(WorkDoneProgress::Report(WorkDoneProgressReport {
            cancellable: Some(false),
            message: Some(format!(
                "{done}/{}: {} {}",
                self.total,
                r.target.label(),
                r.verdict.name()
            )),
            percentage: Some(percentage),
        }));
    }

    /// The end, with what to say.
    pub fn end(self, message: String) {
        self.send(WorkDoneProgress::End(WorkDoneProgressEnd {
            message: Some(message),
        }));
    }

    fn send(&self, value: WorkDoneProgress) {
        let params = ProgressParams {
            token: self.token.clone(),
            value: ProgressParamsValue::WorkDone(value),
        };
        let _ = self.to_client.send(Message::Notification(Notification::new(
            ProgressNotification::METHOD.to_string(),
            params,
        )));
    }
}
