//! `apc bench scale`: how the cost grows with the program. Four families
//! of microc programs, generated on the fly, each with one `assert`:
//!
//! - `ifs`: n sequential `if`s (2ⁿ backbones) — the factored φ̂ must stay
//!   linear in n;
//! - `loops`: n sequential loops;
//! - `nested`: loops nested to depth n;
//! - `paths`: one loop whose body has n paths (n path counters).
//!
//! For each member: the time to build φ̂ (a fresh database each run), its
//! size (DAG nodes, bytes of the SMT-LIB query), and the time `apc check`
//! takes to decide the assert after the build. Growth is summarised by the
//! least-squares slope on a log–log scale (1 = linear, 2 = quadratic).
//!
//! A fifth family, `asserts`, grows in targets instead: n asserts of one
//! shape, `assert(x != i || y != 3i)`, each reachable. It is measured as
//! a user runs it ([`measure_targets`]): the whole `apc check` of the
//! file, and the solver work it asked (checks, SMT-LIB bytes), which
//! should grow linearly in n (docs/portfolio.md §4a).
//!
//! A sixth, `dispatch`, grows in functions: `main` calls one of n
//! functions, each with a loop, an assert no run fails and a division that
//! some run makes by zero, so each target sits behind a path of its own
//! (2n targets; docs/portfolio.md §4b). It is measured as `asserts` is.

use super::{Loaded, answer, check_options, solve, timed, timed_build};
use crate::smt::Profile;
use crate::target_kind::TargetKind;
use std::fmt::Write;
use std::time::Duration;

/// A family of generated programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Ifs,
    Loops,
    Nested,
    Paths,
    /// n targets, not one: measured by [`measure_targets`].
    Asserts,
    /// 2n targets in n functions: measured by [`measure_targets`].
    Dispatch,
}

impl Family {
    pub const ALL: [Family; 6] = [
        Family::Ifs,
        Family::Loops,
        Family::Nested,
        Family::Paths,
        Family::Asserts,
        Family::Dispatch,
    ];

    /// Whether a member has many targets, checked as a whole file
    /// ([`measure_targets`]), rather than one assert.
    pub fn many_targets(self) -> bool {
        matches!(self, Family::Asserts | Family::Dispatch)
    }

    /// Whether `v`, a verdict on a target of kind `kind` of a member, can
    /// be right: an `unknown` always can.
    pub fn allows(self, kind: TargetKind, v: &crate::check::Verdict) -> bool {
        use crate::check::Verdict;
        let reachable = match (self, kind) {
            (Family::Dispatch, TargetKind::Assert) => false,
            (Family::Dispatch, _) => true,
            _ => self.reachable(),
        };
        match v {
            Verdict::Unknown(_) => true,
            Verdict::Reachable(_) => reachable,
            Verdict::Unreachable => !reachable,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Family::Ifs => "ifs",
            Family::Loops => "loops",
            Family::Nested => "nested",
            Family::Paths => "paths",
            Family::Asserts => "asserts",
            Family::Dispatch => "dispatch",
        }
    }

    /// What n counts.
    pub fn what(self) -> &'static str {
        match self {
            Family::Ifs => "n sequential ifs (2^n backbones)",
            Family::Loops => "n sequential loops",
            Family::Nested => "loops nested to depth n",
            Family::Paths => "one loop body with n paths",
            Family::Asserts => "n asserts `assert(x != i || y != 3i)`, n targets",
            Family::Dispatch => {
                "main calls one of n functions, each a loop, an assert and a division: 2n targets"
            }
        }
    }

    /// The sizes measured by default: doubling, so that the log–log slope
    /// is well spread; `ifs` reaches 20 (2²⁰ backbones, the mark).
    pub fn default_sizes(self) -> &'static [usize] {
        match self {
            Family::Ifs => &[1, 2, 4, 8, 16, 20],
            Family::Loops => &[1, 2, 4, 8, 16],
            Family::Nested => &[1, 2, 3, 4, 5, 6],
            Family::Paths => &[1, 2, 4, 8, 16],
            Family::Asserts => &[30, 60, 120, 300],
            Family::Dispatch => &[6, 15, 30, 60],
        }
    }

    /// The paper's answer for the assert of every member (by construction;
    /// `dispatch`'s asserts hold, its divisions fail).
    pub fn reachable(self) -> bool {
        !matches!(self, Family::Loops | Family::Dispatch)
    }

    /// The program of size `n` (n ≥ 1).
    pub fn program(self, n: usize) -> String {
        let n = n.max(1);
        let mut s = String::new();
        match self {
            // Each `if` reads its own input cell; the assert needs all n.
            Family::Ifs => {
                s.push_str("main(a) {\n  var s;\n  s = 0;\n");
                for i in 0..n {
                    let _ = writeln!(s, "  if (a[{i}] > {i}) {{\n    s = s + 1;\n  }}");
                }
                let _ = writeln!(
                    s,
                    "  if (s == {n}) {{\n    assert(0);\n  }}\n  return s;\n}}"
                );
            }
            // Loop k adds 2 per iteration: s is even, the assert asks for
            // odd (TwoLoops' parity argument over n counters).
            Family::Loops => {
                let params: Vec<String> = (0..n).map(|k| format!("x{k}")).collect();
                let _ = writeln!(s, "main({}) {{\n  var s, i;\n  s = 0;", params.join(", "));
                for p in &params {
                    let _ = writeln!(
                        s,
                        "  i = 0;\n  while (i < {p}) {{\n    s = s + 2;\n    i = i + 1;\n  }}"
                    );
                }
                let _ = writeln!(
                    s,
                    "  if (s == {}) {{\n    assert(0);\n  }}\n  return s;\n}}",
                    2 * n + 1
                );
            }
            // s counts the innermost iterations (m^n); s == 1 needs m = 1.
            Family::Nested => {
                let vars: Vec<String> = (0..n).map(|k| format!("i{k}")).collect();
                let _ = writeln!(s, "main(m) {{\n  var s, {};\n  s = 0;", vars.join(", "));
                let mut indent = String::from("  ");
                for v in &vars {
                    let _ = writeln!(s, "{indent}{v} = 0;\n{indent}while ({v} < m) {{");
                    indent.push_str("  ");
                }
                let _ = writeln!(s, "{indent}s = s + 1;");
                for v in vars.iter().rev() {
                    let _ = writeln!(s, "{indent}{v} = {v} + 1;");
                    indent.truncate(indent.len() - 2);
                    let _ = writeln!(s, "{indent}}}");
                }
                s.push_str("  if (s == 1) {\n    assert(0);\n  }\n  return s;\n}\n");
            }
            // Path p adds p + 1; the assert asks for 2n + 1 in all.
            Family::Paths => {
                s.push_str("main(a, m) {\n  var i, s;\n  i = 0;\n  s = 0;\n  while (i < m) {\n");
                for p in 0..n {
                    let head = if p == 0 { "    " } else { " else " };
                    let add = p + 1;
                    if p + 1 < n {
                        let _ =
                            write!(s, "{head}if (a[i] == {p}) {{\n      s = s + {add};\n    }}");
                    } else if n == 1 {
                        let _ = write!(s, "    s = s + {add};");
                    } else {
                        let _ = write!(s, "{head}{{\n      s = s + {add};\n    }}");
                    }
                }
                let _ = writeln!(
                    s,
                    "\n    i = i + 1;\n  }}\n  if (s == {}) {{\n    assert(0);\n  }}\n  return s;\n}}",
                    2 * n + 1
                );
            }
            Family::Asserts => {
                s.push_str("main(x, y) {\n");
                for i in 0..n {
                    let _ = writeln!(s, "  assert(x != {i} || y != {});", 3 * i);
                }
                s.push_str("  return 0;\n}\n");
            }
            Family::Dispatch => {
                s = super::incremental::program(n, super::incremental::Layout::Dispatch, 0)
            }
        }
        s
    }
}

/// One member of a family, measured.
pub struct ScaleRow {
    pub family: Family,
    pub n: usize,
    /// Median build time of φ̂ (fresh database per run).
    pub build: Duration,
    pub dag_nodes: usize,
    /// Bytes of φ̂'s SMT-LIB query (declarations and assertion).
    pub smt_bytes: usize,
    /// Median time of `apc check` after the build, its answer and method.
    pub solve: Duration,
    pub answer: &'static str,
    pub method: String,
    /// Whether the answer is the one the family is built to have (an
    /// `unknown` is not wrong, only undecided).
    pub expected: bool,
}

/// Measures one member: builds (`runs` times), sizes, then decides.
pub fn measure(
    family: Family,
    n: usize,
    solver: &Profile,
    runs: usize,
    timeout: Duration,
) -> Result<ScaleRow, String> {
    let name = format!("{}-{n}.mc", family.name());
    let source = family.program(n);
    let check = check_options(solver, true, timeout);
    let opts = crate::nc::engine_options(&check);
    // From the source, a fresh database each run: parsing and lowering
    // count too.
    let (build, l) = timed_build(runs, &opts, || {
        Loaded::new(&name, &source, |t| t.kind == TargetKind::Assert)
    })?;
    let nc = l.condition(&opts);
    let dag_nodes = nc.terms.dag_size(&[nc.value.phi]);
    let smt_bytes = crate::smt::smtlib::query(&nc.terms, &[nc.value.phi]).len();
    // Simplified before the runs: each run times the solving only.
    l.simplified(&opts);
    let (solve, (v, method)) = timed(runs, timeout, || solve(&l, &check));
    let answer = answer(&v);
    let expected = answer == if family.reachable() { "sat" } else { "unsat" };
    Ok(ScaleRow {
        family,
        n,
        build,
        dag_nodes,
        smt_bytes,
        solve,
        answer,
        method,
        expected,
    })
}

/// One member of a family of many targets, checked as a whole.
pub struct TargetsRow {
    pub family: Family,
    pub n: usize,
    /// The member's targets.
    pub targets: usize,
    /// Median time of `apc check` on the file (a fresh database each run).
    pub time: Duration,
    /// Targets unreachable, reachable, unknown.
    pub verdicts: [usize; 3],
    /// Solver checks and SMT-LIB bytes of the run, all targets.
    pub solver: crate::deadline::SolverUse,
    /// Whether every verdict is one the family is built to allow
    /// ([`Family::allows`]); a reachable one was replayed by `check`.
    pub expected: bool,
}

/// Measures a member of a family of many targets: `apc check` of the
/// whole file (`runs` times), as the command line runs it.
pub fn measure_targets(
    family: Family,
    n: usize,
    solver: &Profile,
    runs: usize,
    timeout: Duration,
) -> Result<TargetsRow, String> {
    let source = family.program(n);
    let opts = crate::check::CheckOptions::new(vec![solver.clone()], timeout);
    let (time, reports) = timed(runs, Duration::MAX, || {
        let (db, file) =
            crate::db::Database::with_file(&format!("{}-{n}.mc", family.name()), &source);
        let targets = crate::db::targets(&db, file);
        crate::check::check_all(&db, file, &targets, &opts, &|_| {})
    });
    let wanted = if family == Family::Dispatch { 2 * n } else { n };
    if reports.len() != wanted {
        return Err(format!(
            "{}-{n}: {} targets, not {wanted}",
            family.name(),
            reports.len()
        ));
    }
    let verdicts = crate::check::verdict_counts(&reports);
    Ok(TargetsRow {
        family,
        n,
        targets: reports.len(),
        time,
        verdicts,
        solver: reports.iter().map(|r| r.solver_use).sum(),
        expected: (reports.iter()).all(|r| family.allows(r.target.kind, &r.verdict)),
    })
}

/// The least-squares slope of log y against log x over the points with
/// positive coordinates; `None` with fewer than two such points.
pub fn log_log_slope(points: &[(f64, f64)]) -> Option<f64> {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .map(|(x, y)| (x.ln(), y.ln()))
        .collect();
    if logs.len() < 2 {
        return None;
    }
    let k = logs.len() as f64;
    let mx = logs.iter().map(|p| p.0).sum::<f64>() / k;
    let my = logs.iter().map(|p| p.1).sum::<f64>() / k;
    let sxx: f64 = logs.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = logs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slopes_of_power_laws() {
        let line: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0].iter().map(|&x| (x, 3.0 * x)).collect();
        assert!((log_log_slope(&line).unwrap() - 1.0).abs() < 1e-9);
        let square: Vec<(f64, f64)> = [1.0, 2.0, 4.0].iter().map(|&x| (x, x * x)).collect();
        assert!((log_log_slope(&square).unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(log_log_slope(&[(1.0, 1.0)]), None);
    }

    /// Every generated member parses, type-checks, and runs as designed on
    /// the interpreter: the witness the family is built around hits the
    /// assert (and `loops`, whose assert is unreachable, returns).
    #[test]
    fn generated_programs_run_as_designed() {
        use crate::interp::{ArgValue, Limits, Outcome, Witness};
        let int = |v: usize| ArgValue::Int(v.into());
        let list = |vs: &[usize]| ArgValue::List(vs.iter().map(|&v| int(v)).collect());
        for family in Family::ALL {
            for &n in family.default_sizes().iter().take(4) {
                let source = family.program(n);
                let (program, errors) = crate::syntax::parse(&source);
                assert!(errors.is_empty(), "{source}");
                let args: Vec<(String, ArgValue)> = match family {
                    Family::Ifs => vec![("a".into(), list(&(1..=n).collect::<Vec<_>>()))],
                    Family::Loops => (0..n).map(|k| (format!("x{k}"), int(1))).collect(),
                    Family::Nested => vec![("m".into(), int(1))],
                    // Two iterations on the last path (2n), one on path 0
                    // (+1): a = [n-1, n-1, 0], m = 3.
                    Family::Paths => {
                        vec![("a".into(), list(&[n - 1, n - 1, 0])), ("m".into(), int(3))]
                    }
                    // The last assert: x = n - 1, y = 3(n - 1).
                    Family::Asserts => {
                        vec![("x".into(), int(n - 1)), ("y".into(), int(3 * (n - 1)))]
                    }
                    // The last function's division: n - 1 iterations.
                    Family::Dispatch => vec![("op".into(), int(n - 1)), ("n".into(), int(n - 1))],
                };
                let w = Witness {
                    args,
                    input: vec![],
                };
                let r = crate::interp::run(&program, &w, Limits::default()).unwrap();
                let wanted = if family == Family::Dispatch {
                    TargetKind::DivByZero
                } else {
                    TargetKind::Assert
                };
                let hit = matches!(r.outcome, Outcome::Error { kind, .. } if kind == wanted);
                assert_eq!(
                    hit,
                    family.reachable() || family == Family::Dispatch,
                    "{} {n}: {:?}\n{source}",
                    family.name(),
                    r.outcome
                );
            }
        }
    }
}
