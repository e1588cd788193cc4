//! `apc bench incremental`: the language server (`apc lsp`) in this
//! process, spoken to over an in-memory connection as an editor would,
//! on a generated program of many small functions (docs/editors.md,
//! "What is checked again"):
//!
//! 1. a cold check: the program opened;
//! 2. a one-line edit inside one function: the time until its verdicts
//!    are published, the targets checked again and their solver checks;
//! 3. the edit undone: everything is remembered (2 and 3 for five
//!    functions spread over the program, one after the other);
//! 4. an edit while a cold check is in flight: the time until the new
//!    text's diagnostics come, the check cancelled.
//!
//! The times are the client's, from the notification sent to the
//! diagnostics received. The counts are the server's log line. After
//! each step the client waits for the server's idle-time proofs (from any
//! call of a target's function), as a user who pauses would.

use crate::lsp::{self, Settings};
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How `main` reaches the functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `main` calls one function, chosen by its first input: a target
    /// depends on `main` and its own function.
    Dispatch,
    /// `main` calls every function, one after the other: a target depends
    /// on its function and every function called before it.
    Sequence,
}

impl Layout {
    pub fn name(self) -> &'static str {
        match self {
            Layout::Dispatch => "dispatch",
            Layout::Sequence => "sequence",
        }
    }
}

/// The program: `functions` functions of a loop and two targets each
/// (an assert no run fails, a division by zero some run reaches), and
/// `main`. `variant` changes every assert's constant (an odd number
/// either way), so that two variants share no verdict.
pub fn program(functions: usize, layout: Layout, variant: usize) -> String {
    let mut text = String::new();
    for i in 0..functions {
        let odd = 2 * ((i + variant) % 5) + 1;
        text += &format!(
            "f{i}(n) {{\n  var s, k;\n  s = 0;\n  k = 0;\n  while (k < n) {{\n    s = s + 2;\n    k = k + 1;\n  }}\n  assert(s != 2 * k + {odd});\n  return 100 / (s - k - {i});\n}}\n\n"
        );
    }
    text += "main(op, n) {\n  var r;\n  r = 0;\n";
    match layout {
        Layout::Dispatch => {
            for i in 0..functions {
                let head = if i == 0 { "  " } else { "  else " };
                text += &format!("{head}if (op == {i}) {{\n    r = f{i}(n);\n  }}\n");
            }
        }
        Layout::Sequence => {
            for i in 0..functions {
                text += &format!("  r = r + f{i}(n + op);\n");
            }
        }
    }
    text + "  return r;\n}\n"
}

/// The one-line edit inside function `f{which}`: its assert's constant.
pub fn edit(text: &str, which: usize) -> Result<String, String> {
    let start =
        (text.find(&format!("f{which}(n) {{"))).ok_or_else(|| format!("no function f{which}"))?;
    let at = start + text[start..].find("2 * k + ").ok_or("no assert")? + "2 * k + ".len();
    let end = at + text[at..].find(')').ok_or("no constant")?;
    let constant: u64 = text[at..end].parse().map_err(|_| "no constant")?;
    Ok(format!("{}{}{}", &text[..at], constant + 2, &text[end..]))
}

/// One step of the measurement.
#[derive(Clone, Debug)]
pub struct Step {
    pub what: String,
    pub time: Duration,
    /// The server's counts (none for the cancellation).
    pub counts: Option<Counts>,
    /// How many proofs from any call the server found after it (waited
    /// for before the next step, as a user pauses).
    pub proved_when_idle: Option<usize>,
}

/// What the server's log line of one check says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub targets: usize,
    pub remembered: usize,
    /// Of the remembered, how many by a proof from any call.
    pub from_any_call: usize,
    pub checked: usize,
    /// Of those checked, how many by replaying an earlier witness.
    pub replayed: usize,
    pub solver_checks: u64,
    /// Unreachable, reachable, unknown.
    pub verdicts: [usize; 3],
}

/// The four steps on a program of `functions` functions laid out so.
pub fn measure(settings: Settings, functions: usize, layout: Layout) -> Result<Vec<Step>, String> {
    let mut client = InProcess::start(settings)?;
    let text = program(functions, layout, 0);
    let uri = "file:///bench/incremental.mc";
    let mut steps = Vec::new();
    let mut step = |what: String, version: i32, text: &str, client: &mut InProcess| {
        let sent = Instant::now();
        client.send_text(uri, version, text)?;
        let counts = client.checked(version)?;
        let time = sent.elapsed();
        let proved_when_idle = Some(client.idle(version)?);
        steps.push(Step {
            what,
            time,
            counts: Some(counts),
            proved_when_idle,
        });
        Ok::<(), String>(())
    };
    step("cold check".into(), 1, &text, &mut client)?;
    let mut version = 1;
    for f in edited_functions(functions) {
        version += 2;
        let what = format!("one-line edit in f{f}");
        step(what, version - 1, &edit(&text, f)?, &mut client)?;
        step(format!("f{f}'s edit undone"), version, &text, &mut client)?;
    }
    steps.push(cancellation(&mut client, functions, layout)?);
    client.stop()?;
    Ok(steps)
}

/// The functions edited, one at a time: five spread over the program
/// (the first, the last, and three between).
pub fn edited_functions(functions: usize) -> Vec<usize> {
    let mut chosen: Vec<usize> = (0..5).map(|i| i * (functions - 1) / 4).collect();
    chosen.dedup();
    chosen
}

/// An edit while a cold check (of a variant nothing is remembered of) is
/// in flight: the time until the new text's first diagnostics.
fn cancellation(client: &mut InProcess, functions: usize, layout: Layout) -> Result<Step, String> {
    let uri = "file:///bench/cancelled.mc";
    let text = program(functions, layout, 1);
    client.send_text(uri, 1, &text)?;
    // A target decided: the check is under way.
    let decided =
        |m: &Notification| m.method == "$/progress" && m.params["value"]["kind"] == "report";
    client.wait_for(decided, Duration::from_secs(600))?;
    let sent = Instant::now();
    client.send_text(uri, 2, &edit(&text, 0)?)?;
    let finished_first = std::cell::Cell::new(false);
    client.wait_for(
        |m| {
            let logged = m.method == "window/logMessage";
            if logged
                && m.params["message"]
                    .as_str()
                    .is_some_and(|l| l.contains(" version 1: "))
            {
                finished_first.set(true);
            }
            published_version(m, uri) == Some(2)
        },
        Duration::from_secs(600),
    )?;
    let time = sent.elapsed();
    client.checked(2)?;
    if finished_first.get() {
        return Err("the first check ended before the edit came: nothing was cancelled".into());
    }
    Ok(Step {
        what: "an edit while a check is in flight".into(),
        time,
        counts: None,
        proved_when_idle: None,
    })
}

fn published_version(m: &Notification, uri: &str) -> Option<i64> {
    (m.method == "textDocument/publishDiagnostics" && m.params["uri"] == uri)
        .then(|| m.params["version"].as_i64())
        .flatten()
}

/// The server on a thread of this process, and the client's end.
struct InProcess {
    client: Connection,
    server: std::thread::JoinHandle<Result<(), String>>,
    opened: std::collections::BTreeSet<String>,
}

impl InProcess {
    fn start(settings: Settings) -> Result<InProcess, String> {
        let (server_end, client) = Connection::memory();
        let server = std::thread::spawn(move || {
            let capabilities =
                serde_json::to_value(lsp::capabilities()).map_err(|e| e.to_string())?;
            server_end
                .initialize(capabilities)
                .map_err(|e| e.to_string())?;
            lsp::serve(&server_end, settings)
        });
        let me = InProcess {
            client,
            server,
            opened: Default::default(),
        };
        me.request(0, "initialize", json!({"capabilities": {}}))?;
        me.notify("initialized", json!({}))?;
        Ok(me)
    }

    fn notify(&self, method: &str, params: Value) -> Result<(), String> {
        (self.client.sender)
            .send(Message::Notification(Notification::new(
                method.into(),
                params,
            )))
            .map_err(|_| "the server is gone".to_string())
    }

    fn request(&self, id: i32, method: &str, params: Value) -> Result<(), String> {
        let request = Request::new(RequestId::from(id), method.into(), params);
        (self.client.sender)
            .send(Message::Request(request))
            .map_err(|_| "the server is gone".to_string())?;
        loop {
            match self.client.receiver.recv_timeout(Duration::from_secs(60)) {
                Ok(Message::Response(_)) => return Ok(()),
                Ok(_) => {}
                Err(_) => return Err(format!("no answer to {method}")),
            }
        }
    }

    /// Opens the document, or sends its new text.
    fn send_text(&mut self, uri: &str, version: i32, text: &str) -> Result<(), String> {
        if self.opened.insert(uri.to_string()) {
            let document =
                json!({"uri": uri, "languageId": "microc", "version": version, "text": text});
            self.notify("textDocument/didOpen", json!({"textDocument": document}))
        } else {
            self.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
            )
        }
    }

    /// The next notification that `matches`.
    fn wait_for(
        &self,
        matches: impl Fn(&Notification) -> bool,
        within: Duration,
    ) -> Result<Notification, String> {
        let end = Instant::now() + within;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.client.receiver.recv_timeout(left) {
                Ok(Message::Notification(n)) if matches(&n) => return Ok(n),
                Ok(_) => {}
                Err(_) => return Err("the server did not answer in time".into()),
            }
        }
    }

    /// The counts of the check of `version`, from the server's log line
    /// (which follows its diagnostics).
    fn checked(&self, version: i32) -> Result<Counts, String> {
        let line = self.logged(version, " remembered (")?;
        parse_log(&line).ok_or_else(|| format!("an unexpected log line: {line}"))
    }

    /// Waits for the server's idle-time proofs after the check of
    /// `version` (as a user who pauses would); how many it proved.
    fn idle(&self, version: i32) -> Result<usize, String> {
        let line = self.logged(version, " hold for any call")?;
        let proved = line.split(": ").nth(1).and_then(|r| r.split(' ').next());
        (proved.and_then(|p| p.parse().ok()))
            .ok_or_else(|| format!("an unexpected log line: {line}"))
    }

    /// The server's next log line about `version` that says `what`.
    fn logged(&self, version: i32, what: &str) -> Result<String, String> {
        let mark = format!(" version {version}: ");
        let says = |m: &str| m.contains(&mark) && m.contains(what);
        let log = self.wait_for(
            |n| n.method == "window/logMessage" && n.params["message"].as_str().is_some_and(says),
            Duration::from_secs(600),
        )?;
        Ok(log.params["message"]
            .as_str()
            .unwrap_or_default()
            .to_string())
    }

    fn stop(self) -> Result<(), String> {
        self.request(1, "shutdown", Value::Null)?;
        self.notify("exit", Value::Null)?;
        drop(self.client);
        self.server
            .join()
            .map_err(|_| "the server panicked".to_string())?
    }
}

/// The numbers of a log line: "… N targets (A unreachable, B reachable, C
/// unknown), R remembered (A for any call), M checked in T ms (W by an
/// earlier witness, Q solver checks)".
fn parse_log(line: &str) -> Option<Counts> {
    let before = |label: &str| -> Option<u64> {
        let head = &line[..line.find(label)?];
        let digits = head.len() - head.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        head[head.len() - digits..].parse().ok()
    };
    Some(Counts {
        targets: before(" targets (")? as usize,
        remembered: before(" remembered (")? as usize,
        from_any_call: before(" for any call)")? as usize,
        checked: before(" checked in")? as usize,
        replayed: before(" by an earlier witness")? as usize,
        solver_checks: before(" solver checks")?,
        verdicts: [
            before(" unreachable,")? as usize,
            before(" reachable,")? as usize,
            before(" unknown)")? as usize,
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_line_reads_back() {
        let line = "file:///bench/incremental2.mc version 2: 60 targets (30 unreachable, 29 reachable, 1 unknown), 58 remembered (3 for any call), 2 checked in 41.5 ms (1 by an earlier witness, 7 solver checks)";
        let c = parse_log(line).unwrap();
        let read = (c.targets, c.remembered, c.from_any_call, c.checked);
        assert_eq!((read, c.replayed, c.solver_checks), ((60, 58, 3, 2), 1, 7));
        assert_eq!(c.verdicts, [30, 29, 1]);
    }

    #[test]
    fn the_edit_changes_one_line_of_one_function() {
        let text = program(30, Layout::Dispatch, 0);
        let edited = edit(&text, 18).unwrap();
        let changed: Vec<(&str, &str)> = (text.lines().zip(edited.lines()))
            .filter(|(a, b)| a != b)
            .collect();
        assert_eq!(
            changed,
            [("  assert(s != 2 * k + 7);", "  assert(s != 2 * k + 9);")]
        );
        assert_eq!(text.lines().count(), edited.lines().count());
    }
}
