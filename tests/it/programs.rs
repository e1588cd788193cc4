//! Every program of `tests/programs/` runs under `apc run` with the outputs,
//! return value and runtime error (kind and line:col) its `// @run` lines
//! expect. The expectations were worked out by hand from the papers and the
//! semantics in `docs/microc.md`, independently of the interpreter.

use crate::common::*;

#[test]
fn every_listing_runs_as_expected() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for path in programs() {
        let text = std::fs::read_to_string(&path).unwrap();
        let runs = annotations(&text, "run");
        assert!(!runs.is_empty(), "{} has no // @run line", path.display());
        for (given, expected) in runs {
            let expected = expected.expect("@run needs `=> {expected}`");
            let mut args = vec![
                "run".to_string(),
                path.display().to_string(),
                "--format".into(),
                "json".into(),
            ];
            for key in ["args", "input", "max_steps"] {
                if let Some(v) = given.get(key) {
                    let v = v
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string());
                    args.push(format!("--{}={v}", key.replace('_', "-")));
                }
            }
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = apc(&argv);
            let stdout = String::from_utf8_lossy(&out.stdout);
            let actual: serde_json::Value = match serde_json::from_str(stdout.trim()) {
                Ok(v) => v,
                Err(_) => {
                    failures.push(format!(
                        "{} {given}: no JSON on stdout (exit {:?}): {}",
                        path.display(),
                        out.status.code(),
                        String::from_utf8_lossy(&out.stderr)
                    ));
                    continue;
                }
            };
            for (field, want) in expected.as_object().expect("expected is an object") {
                if actual.get(field) != Some(want) {
                    failures.push(format!(
                        "{} {given}: `{field}` is {} but {want} was expected (whole output: {actual})",
                        path.file_name().unwrap().to_string_lossy(),
                        actual.get(field).map(|v| v.to_string()).unwrap_or("missing".into())
                    ));
                }
            }
            // The exit status follows the outcome.
            let want_code = if !actual["error"].is_null() {
                1
            } else if !actual["limit"].is_null() {
                4
            } else {
                0
            };
            if out.status.code() != Some(want_code) {
                failures.push(format!(
                    "{}: exit {:?}, expected {want_code}",
                    path.display(),
                    out.status.code()
                ));
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} runs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= 30, "only {checked} runs checked");
}
