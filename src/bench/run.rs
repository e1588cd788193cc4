//! `apc bench run`: the speed of concrete runs. A small family of
//! programs (counting loops, nested loops, array sweeps, pointer chasing
//! over `alloc`ed records, recursion) run by the fast engine and by the
//! reference interpreter, and, where the family is integers and integer
//! arrays only, the same program in C compiled by `cc -O0`.
//!
//! Both engines must give the same run; a family where they do not is
//! reported, not timed.

use crate::interp::{self, Limits, Witness};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A family: its microc program and, where one can be printed, its C.
pub struct Family {
    pub name: &'static str,
    pub what: &'static str,
    pub microc: String,
    pub c: Option<String>,
}

/// The measurements of a family.
pub struct Row {
    pub name: &'static str,
    pub what: &'static str,
    pub steps: u64,
    pub fast: Duration,
    /// Why the fast engine handed the run back, if it did.
    pub handed_back: Option<String>,
    pub reference: Duration,
    /// `cc -O0`'s time, or why there is none.
    pub c: Result<Duration, String>,
}

/// The families at `scale` (1 = about 30 million steps each).
pub fn families(scale: f64) -> Vec<Family> {
    let n = |base: f64| ((base * scale).round() as i64).max(1);
    vec![
        counting(n(10_000_000.0)),
        nested(n(2_000.0), 2_500),
        sweep(1_000, n(5_000.0)),
        chase(10_000, n(500.0)),
        recursion(fib_depth(scale)),
    ]
}

/// fib(n) takes about fib(n) calls: 27 is about 20 million steps.
fn fib_depth(scale: f64) -> i64 {
    (27.0 + scale.max(1e-3).log(1.618)).round().clamp(5.0, 40.0) as i64
}

fn counting(n: i64) -> Family {
    let limit = 2 * n;
    Family {
        name: "counting",
        what: "one counting loop",
        microc: format!(
            "main() {{\n  var x;\n  x = 0;\n  while (x < {limit}) {{ x = x + 2; }}\n  return x;\n}}\n"
        ),
        c: Some(format!(
            "int main(void) {{\n  long x;\n  x = 0;\n  while (x < {limit}) {{ x = x + 2; }}\n  return (int)(x & 1);\n}}\n"
        )),
    }
}

fn nested(outer: i64, inner: i64) -> Family {
    let body = format!(
        "  i = 0;\n  s = 0;\n  while (i < {outer}) {{\n    j = 0;\n    while (j < {inner}) {{ s = s + j; j = j + 1; }}\n    i = i + 1;\n  }}\n"
    );
    Family {
        name: "nested",
        what: "two nested loops",
        microc: format!("main() {{\n  var i, j, s;\n{body}  return s;\n}}\n"),
        c: Some(format!(
            "int main(void) {{\n  long i, j, s;\n{body}  return (int)(s & 1);\n}}\n"
        )),
    }
}

fn sweep(len: usize, rounds: i64) -> Family {
    let zeros = vec!["0"; len].join(", ");
    let body = format!(
        "  r = 0;\n  while (r < {rounds}) {{\n    i = 0;\n    while (i < {len}) {{ a[i] = a[i] + i; i = i + 1; }}\n    r = r + 1;\n  }}\n"
    );
    Family {
        name: "sweep",
        what: "sweeps over an array",
        microc: format!(
            "main() {{\n  var a, i, r;\n  a = [{zeros}];\n{body}  return a[{}];\n}}\n",
            len - 1
        ),
        c: Some(format!(
            "int main(void) {{\n  long a[{len}] = {{0}};\n  long i, r;\n{body}  return (int)(a[{}] & 1);\n}}\n",
            len - 1
        )),
    }
}

fn chase(len: i64, rounds: i64) -> Family {
    Family {
        name: "chase",
        what: "pointer chasing over alloc'ed records",
        microc: format!(
            "main() {{\n  var p, q, i, r, s;\n  p = null;\n  i = 0;\n  while (i < {len}) {{ p = alloc {{v: i, next: p}}; i = i + 1; }}\n  s = 0;\n  r = 0;\n  while (r < {rounds}) {{\n    q = p;\n    while (q != null) {{ s = s + q.v; q = q.next; }}\n    r = r + 1;\n  }}\n  return s;\n}}\n"
        ),
        c: None,
    }
}

fn recursion(n: i64) -> Family {
    let fib = "fib(n) {\n  var r;\n  if (n < 2) { r = n; } else { r = fib(n - 1) + fib(n - 2); }\n  return r;\n}\n";
    Family {
        name: "recursion",
        what: "recursive calls (fib)",
        microc: format!("{fib}\nmain() {{\n  return fib({n});\n}}\n"),
        c: Some(format!(
            "long fib(long n) {{\n  long r;\n  if (n < 2) {{ r = n; }} else {{ r = fib(n - 1) + fib(n - 2); }}\n  return r;\n}}\nint main(void) {{\n  return (int)(fib({n}) & 1);\n}}\n"
        )),
    }
}

/// Measures a family: the median of `runs` runs of each engine and of the
/// C program (compiled in `dir` by `cc`).
pub fn measure(f: &Family, runs: usize, cc: &str, dir: &Path) -> Result<Row, String> {
    let (program, errors) = crate::syntax::parse(&f.microc);
    if !errors.is_empty() {
        return Err(format!("{}: the family's program does not parse", f.name));
    }
    let limits = Limits {
        max_steps: u64::MAX,
        ..Limits::default()
    };
    let w = Witness::default();
    let (reference, expected) = super::timed(runs, Duration::MAX, || {
        interp::run_reference(&program, &w, limits)
    });
    let expected = expected.map_err(|e| format!("{}: {e}", f.name))?;
    let (fast, got) = super::timed(runs, Duration::MAX, || {
        interp::run_fast(&program, &w, limits)
    });
    let handed_back = match got {
        Ok(r) if r == expected => None,
        Ok(r) => return Err(format!("{}: the engines disagree: {r:?}", f.name)),
        Err(why) => Some(why.to_string()),
    };
    let c = match &f.c {
        Some(c) => compiled_c(f.name, c, runs, cc, dir),
        None => Err("records and pointers are not printed as C".into()),
    };
    Ok(Row {
        name: f.name,
        what: f.what,
        steps: expected.steps,
        fast,
        handed_back,
        reference,
        c,
    })
}

/// Compiles `source` with `cc -O0` and times its runs.
fn compiled_c(
    name: &str,
    source: &str,
    runs: usize,
    cc: &str,
    dir: &Path,
) -> Result<Duration, String> {
    let c_file = dir.join(format!("{name}.c"));
    let exe = dir.join(name);
    std::fs::write(&c_file, source)
        .map_err(|e| format!("cannot write {}: {e}", c_file.display()))?;
    let compiled = Command::new(cc)
        .arg("-O0")
        .arg("-o")
        .arg(&exe)
        .arg(&c_file)
        .output()
        .map_err(|e| format!("cannot run `{cc}`: {e}"))?;
    if !compiled.status.success() {
        let err = String::from_utf8_lossy(&compiled.stderr);
        return Err(format!("`{cc} -O0` failed: {}", err.trim()));
    }
    let (time, status) = super::timed(runs, Duration::MAX, || Command::new(&exe).status());
    status.map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    Ok(time)
}
