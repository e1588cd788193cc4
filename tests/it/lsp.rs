//! `apc lsp` as an editor sees it: the binary on stdio, spoken to with
//! `lsp-server`'s framing. Opening a program publishes the front end's
//! diagnostics, then the verdicts (a reachable target an error with its
//! witness and its trace); hover explains a target; a syntax error comes
//! back at once and cancels the check in flight; the original text again
//! is answered from the memo, with no target checked anew.

use crate::common::{programs_dir, undecided_program};
use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{Value, json};
use std::io::BufReader;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: mpsc::Receiver<Message>,
    /// Notifications that came while a response was awaited.
    pending: std::collections::VecDeque<Message>,
    next_id: i32,
}

impl Client {
    fn start(args: &[&str], options: Value) -> Client {
        Client::start_with(args, options, json!({}))
    }

    /// A client of these capabilities.
    fn start_with(args: &[&str], options: Value, capabilities: Value) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_apc"))
            .arg("lsp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("apc lsp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Ok(Some(m)) = Message::read(&mut r) {
                if tx.send(m).is_err() {
                    break;
                }
            }
        });
        let mut c = Client {
            child,
            stdin,
            messages,
            pending: Default::default(),
            next_id: 0,
        };
        let init = c.request(
            "initialize",
            json!({"capabilities": capabilities, "initializationOptions": options}),
        );
        assert_eq!(init["capabilities"]["hoverProvider"], true, "{init}");
        c.notify("initialized", json!({}));
        c
    }

    fn send(&mut self, m: Message) {
        m.write(&mut self.stdin).expect("the server reads");
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(Message::Notification(Notification::new(
            method.into(),
            params,
        )));
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.send(Message::Request(Request::new(
            id.clone(),
            method.into(),
            params,
        )));
        loop {
            match self.receive(Duration::from_secs(60)) {
                Message::Response(r) if r.id == id => {
                    return r.response_result.expect("a result, not an error");
                }
                other => self.pending.push_back(other),
            }
        }
    }

    /// The next message from the server itself.
    fn receive(&self, within: Duration) -> Message {
        self.messages
            .recv_timeout(within)
            .expect("the server answers in time")
    }

    /// The next message, those set aside while awaiting a response first.
    fn next(&mut self, within: Duration) -> Message {
        match self.pending.pop_front() {
            Some(m) => m,
            None => self.receive(within),
        }
    }

    /// The next notification `method`, skipping others.
    fn wait_for(&mut self, method: &str, within: Duration) -> Value {
        let end = Instant::now() + within;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            if let Message::Notification(n) = self.next(left)
                && n.method == method
            {
                return n.params;
            }
        }
    }

    /// The hover's text at `line`:`character` of `uri` (empty if none).
    fn hover(&mut self, uri: &str, line: u32, character: u32) -> String {
        let hover = self.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        );
        hover["contents"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The next line of the server's log about a check (one per check;
    /// the lines about idle-time proofs are skipped).
    fn logged(&mut self, within: Duration) -> String {
        loop {
            let log = self.wait_for("window/logMessage", within);
            let line = log["message"].as_str().unwrap_or_default();
            if line.contains(" remembered (") {
                return line.to_string();
            }
        }
    }

    fn shutdown(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            if let Ok(Some(status)) = self.child.try_wait() {
                assert!(status.success(), "{status}");
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        panic!("apc lsp did not exit after `exit`");
    }
}

fn open(c: &mut Client, uri: &str, text: &str) {
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "microc", "version": 1, "text": text}}),
    );
}

fn change(c: &mut Client, uri: &str, version: i32, text: &str) {
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
    );
}

#[test]
fn the_server_publishes_verdicts_explains_them_and_follows_edits() {
    let text = std::fs::read_to_string(programs_dir().join("triangular_sum.mc")).unwrap();
    let uri = "file:///work/triangular_sum.mc";
    let mut c = Client::start(&["--timeout", "20"], json!({}));
    open(&mut c, uri, &text);
    let long = Duration::from_secs(60);
    // First the front end (nothing to say), then the verdicts.
    let front = c.wait_for("textDocument/publishDiagnostics", long);
    assert_eq!(front["diagnostics"], json!([]), "{front}");
    let verdicts = c.wait_for("textDocument/publishDiagnostics", long);
    let d = &verdicts["diagnostics"][0];
    assert_eq!(d["severity"], 1, "{verdicts}");
    assert_eq!(d["code"], "reachable", "{d}");
    assert_eq!(
        d["range"]["start"],
        json!({"line": 8, "character": 4}),
        "{d}"
    );
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("reachable with n=5"),
        "{d}"
    );
    let steps = d["relatedInformation"].as_array().expect("the trace");
    assert!(
        steps
            .iter()
            .any(|s| s["message"].as_str().unwrap().contains("5 iterations")),
        "{d}"
    );
    let log = c.logged(long);
    assert!(
        log.contains("0 remembered (0 for any call), 1 checked"),
        "{log}"
    );
    // Hover on the assert explains it.
    let shown = c.hover(uri, 8, 6);
    assert!(
        shown.contains("**reachable**") && shown.contains("witness: `n=5"),
        "{shown}"
    );
    assert!(shown.contains("5 iterations, then left"), "{shown}");
    // The code action on the assert replays its witness.
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri},
               "range": {"start": {"line": 8, "character": 4}, "end": {"line": 8, "character": 4}},
               "context": {"diagnostics": []}}),
    );
    let replay = &actions[0];
    assert_eq!(replay["command"], "apc.replayWitness", "{actions}");
    c.request(
        "workspace/executeCommand",
        json!({"command": replay["command"], "arguments": replay["arguments"]}),
    );
    let shown = c.wait_for("window/showMessage", long);
    let message = shown["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("n=5") && message.contains("assert at 9:5"),
        "{shown}"
    );
    // A syntax error: the parser's diagnostic, at once; no verdicts.
    let broken = text.replacen("x = x + y;", "x = x + ;", 1);
    assert_ne!(broken, text);
    let sent = Instant::now();
    change(&mut c, uri, 2, &broken);
    let errors = c.wait_for("textDocument/publishDiagnostics", long);
    eprintln!("syntax diagnostics after {:?}", sent.elapsed());
    assert_eq!(errors["version"], 2, "{errors}");
    assert_eq!(errors["diagnostics"][0]["severity"], 1, "{errors}");
    // The original text again: its verdict is remembered, nothing checked.
    change(&mut c, uri, 3, &text);
    let again = c.wait_for("textDocument/publishDiagnostics", long);
    assert_eq!(again["diagnostics"], json!([]), "{again}");
    let verdicts = c.wait_for("textDocument/publishDiagnostics", long);
    assert_eq!(
        verdicts["diagnostics"][0]["code"], "reachable",
        "{verdicts}"
    );
    let log = c.logged(long);
    assert!(
        log.contains("1 remembered (0 for any call), 0 checked"),
        "{log}"
    );
    // A 1,000-line program with a syntax error: its diagnostic (the
    // figure goes to the test's output; speed is not asserted here).
    let big = thousand_lines_with_a_syntax_error();
    let sent = Instant::now();
    open(&mut c, "file:///work/big.mc", &big);
    let errors = c.wait_for("textDocument/publishDiagnostics", long);
    eprintln!(
        "syntax diagnostics of a {}-line file after {:?}",
        big.lines().count(),
        sent.elapsed()
    );
    assert_eq!(errors["diagnostics"][0]["severity"], 1, "{errors}");
    c.shutdown();
}

/// 100 functions of 10 lines, one with a missing operand, and `main`.
fn thousand_lines_with_a_syntax_error() -> String {
    let mut text = String::new();
    for i in 0..100 {
        let step = if i == 50 { "" } else { "1" };
        text.push_str(&format!(
            "f{i}(n) {{\n  var s, k;\n  s = 0;\n  k = 0;\n  while (k < n) {{\n    s = s + k * {i};\n    k = k + {step};\n  }}\n  return s;\n}}\n"
        ));
    }
    text.push_str("main(n) {\n  return f0(n);\n}\n");
    text
}

/// An edit while a slow target is being checked: the check stops, and
/// the new text's diagnostics come well before the target's deadline.
#[test]
fn an_edit_cancels_the_check_in_flight() {
    let text = std::fs::read_to_string(undecided_program()).unwrap();
    let uri = "file:///work/undecided_doubling.mc";
    let mut c = Client::start(&[], json!({"timeout": 30}));
    open(&mut c, uri, &text);
    let front = c.wait_for("textDocument/publishDiagnostics", Duration::from_secs(60));
    assert_eq!(front["version"], 1);
    // Let the engines get going on the target that takes them long.
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    change(&mut c, uri, 2, &format!("{text}\n// an edit\n"));
    let next = c.wait_for("textDocument/publishDiagnostics", Duration::from_secs(60));
    let took = sent.elapsed();
    eprintln!("cancelled and re-published after {took:?}");
    assert_eq!(next["version"], 2, "{next}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    c.shutdown();
}

/// A real editor: headless Neovim (installed by `solvers/install.sh`)
/// attaches `apc lsp` to a program (`tests/lsp/nvim-test.lua`), receives
/// the reachable assert as an error, then, after an edit inside one
/// function makes it unreachable, the diagnostics of the new text.
#[test]
fn neovim_shows_the_verdicts_and_follows_an_edit() {
    let have = Command::new("nvim").arg("--version").output().is_ok();
    assert!(have, "Neovim (`nvim`) is missing: run solvers/install.sh");
    let dir = std::env::temp_dir().join(format!("apc-nvim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join("helper.mc");
    std::fs::write(
        &program,
        "helper(n) {\n  return n + 1;\n}\n\nmain(n) {\n  var r;\n  r = helper(n);\n  assert(r != 5);\n  return 0;\n}\n",
    )
    .unwrap();
    let out = dir.join("received.json");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp/nvim-test.lua");
    let status = Command::new("nvim")
        .args(["--headless", "--clean", "-n", "-u"])
        .arg(&script)
        .env("APC_BIN", env!("CARGO_BIN_EXE_apc"))
        .env("APC_NVIM_FILE", &program)
        .env("APC_NVIM_EDIT", "  return 1;")
        .env("APC_NVIM_OUT", &out)
        .stdin(Stdio::null())
        .status()
        .expect("nvim runs");
    assert!(status.success(), "{status}");
    let received: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("the editor's report")).unwrap();
    assert_eq!(received["ok"], true, "{received}");
    let before = &received["before"][0];
    assert_eq!(before["code"], "reachable", "{received}");
    assert_eq!(before["range"]["start"]["line"], 7, "{received}");
    assert!(
        before["message"].as_str().unwrap().contains("n=4"),
        "{received}"
    );
    assert_eq!(received["diagnostics_in_editor"], 1, "{received}");
    assert_eq!(received["after"], json!([]), "{received}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The editor's verdicts are `apc check`'s: every program of the corpus
/// opened in the server (with `showProofs`, so that proved targets show
/// too), each target's verdict compared with `apc check --format json`
/// wherever both are definite (a deadline may leave either side
/// `unknown` on a busy machine). Long: two checks of the corpus.
#[test]
#[ignore]
fn the_editor_shows_the_verdicts_of_apc_check_on_the_corpus() {
    let mut c = Client::start(&["--timeout", "10"], json!({"showProofs": true}));
    let (mut compared, mut targets) = (0, 0);
    for path in crate::common::programs() {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let uri = format!("file://{file}");
        open(&mut c, &uri, &text);
        let long = Duration::from_secs(600);
        let front = c.wait_for("textDocument/publishDiagnostics", long);
        if front["diagnostics"]
            .as_array()
            .is_some_and(|d| d.iter().any(|d| d["severity"] == 1))
        {
            continue; // rejected by the front end: nothing to check
        }
        let published = c.wait_for("textDocument/publishDiagnostics", long);
        c.wait_for("window/logMessage", long);
        let out = crate::common::apc(&["check", &file, "--timeout", "10", "--format", "json"]);
        let checked: Value = serde_json::from_slice(&out.stdout).expect("apc check's JSON");
        for t in checked["targets"].as_array().into_iter().flatten() {
            targets += 1;
            let (line, col) = (t["line"].as_u64().unwrap(), t["col"].as_u64().unwrap());
            let shown = (published["diagnostics"].as_array().into_iter().flatten()).find(|d| {
                d["range"]["start"]["line"] == line - 1
                    && d["range"]["start"]["character"] == col - 1
                    && d["message"]
                        .as_str()
                        .unwrap_or_default()
                        .starts_with(t["kind"].as_str().unwrap())
            });
            let in_editor = shown.map_or("missing", |d| d["code"].as_str().unwrap_or(""));
            assert_ne!(in_editor, "missing", "{file}:{line}:{col}: {published}");
            let definite = |v: &str| v == "reachable" || v == "unreachable";
            let by_check = t["verdict"].as_str().unwrap();
            if definite(by_check) && definite(in_editor) {
                assert_eq!(in_editor, by_check, "{file}:{line}:{col}");
                compared += 1;
            }
        }
        c.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        );
        c.wait_for("textDocument/publishDiagnostics", Duration::from_secs(60));
    }
    eprintln!("{compared} of {targets} targets compared (definite on both sides)");
    assert!(compared * 10 >= targets * 8, "{compared} of {targets}");
    c.shutdown();
}

/// Three functions behind a dispatcher, each with a reachable target.
const DISPATCHER: &str = "f1(x) {
  var r;
  r = 100 / (x - 3);
  return r;
}
f2(x) {
  assert(x != 7);
  return x;
}
f3(x) {
  var a;
  a = [1, 2, 3];
  return a[x - 10];
}
main(op, x) {
  var r;
  r = 0;
  if (op == 1) {
    r = f1(x);
  } else {
    if (op == 2) {
      r = f2(x);
    } else {
      r = f3(x);
    }
  }
  return r;
}
";

/// The published verdict diagnostics, as (line, code, message).
fn verdicts(published: &Value) -> Vec<(u64, String, String)> {
    (published["diagnostics"].as_array().into_iter().flatten())
        .map(|d| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
            let line = d["range"]["start"]["line"].as_u64().unwrap();
            (line, text(&d["code"]), text(&d["message"]))
        })
        .collect()
}

/// An edit inside one function checks again only the targets a run may
/// reach through it; the others keep their verdicts, with no solver
/// check, and move with their functions when lines are added above them.
#[test]
fn an_edit_in_one_function_checks_only_the_targets_it_can_change() {
    let uri = "file:///work/dispatcher.mc";
    let shows_progress = json!({"window": {"workDoneProgress": true}});
    let mut c = Client::start_with(&["--timeout", "20"], json!({}), shows_progress);
    open(&mut c, uri, DISPATCHER);
    let long = Duration::from_secs(60);
    c.wait_for("textDocument/publishDiagnostics", long);
    let begun = c.wait_for("$/progress", long);
    assert_eq!(begun["value"]["kind"], "begin", "{begun}");
    assert_eq!(begun["value"]["message"], "checking 3 targets", "{begun}");
    let first = verdicts(&c.wait_for("textDocument/publishDiagnostics", long));
    assert_eq!(first.len(), 3, "{first:?}");
    assert!(
        first.iter().all(|(_, code, _)| code == "reachable"),
        "{first:?}"
    );
    let log = c.logged(long);
    assert!(
        log.contains("0 remembered (0 for any call), 3 checked"),
        "{log}"
    );
    // f2's assert changes: f2's target alone is checked again.
    let edited = DISPATCHER.replace("x != 7", "x != 8");
    change(&mut c, uri, 2, &edited);
    c.wait_for("textDocument/publishDiagnostics", long);
    let second = verdicts(&c.wait_for("textDocument/publishDiagnostics", long));
    assert!(second[1].2.contains("x=8"), "{second:?}");
    let log = c.logged(long);
    assert!(
        log.contains("2 remembered (0 for any call), 1 checked"),
        "{log}"
    );
    // A line added inside f1: f1's target is checked again; f2's and
    // f3's are remembered and move one line down, traces included.
    let grown = edited.replace("  var r;\n  r = 100", "  var r;\n  r = 0;\n  r = 100");
    change(&mut c, uri, 3, &grown);
    c.wait_for("textDocument/publishDiagnostics", long);
    let published = c.wait_for("textDocument/publishDiagnostics", long);
    let third = verdicts(&published);
    let lines: Vec<u64> = third.iter().map(|v| v.0).collect();
    assert_eq!(lines, [3, 7, 13], "{third:?}");
    let log = c.logged(long);
    // f1's earlier witness still divides by zero: replayed, no solver.
    assert!(
        log.contains("2 remembered (0 for any call), 1 checked"),
        "{log}"
    );
    assert!(
        log.contains("(1 by an earlier witness, 0 solver checks)"),
        "{log}"
    );
    assert!(third[0].2.contains("[earlier-witness]"), "{third:?}");
    // f2's condition, and its queries written where the message says.
    let at_f2 = json!({"start": {"line": 7, "character": 2}, "end": {"line": 7, "character": 2}});
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": at_f2, "context": {"diagnostics": []}}),
    );
    let titles: Vec<&str> = (actions.as_array().unwrap().iter())
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles.len(), 3, "{actions}");
    assert!(titles[1].starts_with("Show the necessary condition of the assert at 8:3"));
    for action in &actions.as_array().unwrap()[1..] {
        c.request(
            "workspace/executeCommand",
            json!({"command": action["command"], "arguments": action["arguments"]}),
        );
        let shown = c.wait_for("window/showMessage", long);
        let message = shown["message"].as_str().unwrap_or_default();
        assert_eq!(shown["type"], 3, "{shown}");
        if action["command"] == "apc.showCondition" {
            assert!(message.contains("op₀ = 2 ∧ x₀ = 8"), "{message}");
        } else {
            let dir = message
                .split(" to ")
                .nth(1)
                .unwrap()
                .split(" (")
                .next()
                .unwrap();
            let written = (std::fs::read_dir(dir).unwrap().flatten())
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("dispatcher-f2-8-3-")
                })
                .count();
            assert!(
                written > 0 && message.starts_with(&format!("wrote {written} ")),
                "{message}"
            );
        }
    }
    let f3 = &published["diagnostics"][2];
    let last_step = (f3["relatedInformation"].as_array())
        .and_then(|s| s.last())
        .expect("f3's trace");
    assert_eq!(last_step["location"]["range"]["start"]["line"], 13, "{f3}");
    c.shutdown();
}

/// The engine, the solver and the deadline come from the client's
/// initialization options; one apc cannot use is said, not dropped.
#[test]
fn the_client_chooses_the_engine_and_the_solver() {
    let options = json!({"engine": "nc", "solver": "cvc5", "timeout": "soon"});
    let mut c = Client::start(&[], options);
    let refused = c.wait_for("window/showMessage", Duration::from_secs(10));
    let message = refused["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("ignores the option timeout \"soon\""),
        "{refused}"
    );
    let uri = "file:///work/dispatcher.mc";
    open(&mut c, uri, DISPATCHER);
    let long = Duration::from_secs(60);
    c.wait_for("textDocument/publishDiagnostics", long);
    let published = c.wait_for("textDocument/publishDiagnostics", long);
    for (_, code, message) in verdicts(&published) {
        assert_eq!(code, "reachable", "{message}");
        assert!(message.contains("[nc-"), "{message}");
    }
    let shown = c.hover(uri, 6, 3);
    assert!(shown.contains("with cvc5"), "{shown}");
    c.shutdown();
}

/// `main` calls `f1`, then `f2`, whose assert no run fails.
const SEQUENCE: &str = "f1(x) {
  var r;
  r = 100 / (x - 3);
  return r;
}
f2(n) {
  var s, k;
  s = 0;
  k = 0;
  while (k < n) {
    s = s + 2;
    k = k + 1;
  }
  assert(s != 2 * k + 1);
  return s;
}
main(x, n) {
  var r;
  r = f1(x);
  r = r + f2(n);
  return r;
}
";

/// An edit in `f1` changes what a run does before it reaches `f2`'s
/// assert, but the server, idle after the first check, proved the assert
/// for any call of `f2`: that proof is kept by `f2` alone, so the assert
/// is not checked again.
#[test]
fn a_proof_for_any_call_outlives_an_edit_in_a_caller() {
    let uri = "file:///work/sequence.mc";
    let mut c = Client::start(&["--timeout", "20"], json!({}));
    open(&mut c, uri, SEQUENCE);
    let long = Duration::from_secs(60);
    let log = c.logged(long);
    assert!(
        log.contains("0 remembered (0 for any call), 2 checked"),
        "{log}"
    );
    let idle = c.wait_for("window/logMessage", long);
    let idle = idle["message"].as_str().unwrap_or_default().to_string();
    assert!(idle.contains("1 of 1 proofs hold for any call"), "{idle}");
    change(&mut c, uri, 2, &SEQUENCE.replace("x - 3", "x - 4"));
    let log = c.logged(long);
    assert!(
        log.contains("1 remembered (1 for any call), 1 checked"),
        "{log}"
    );
    let shown = c.hover(uri, 13, 3);
    assert!(
        shown.contains("**unreachable**") && shown.contains("proved for any call of `f2`"),
        "{shown}"
    );
    c.shutdown();
}
