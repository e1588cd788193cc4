//! A target proved unreachable from *any* call of its function, not only
//! from the calls `main` makes: the program with `main` renamed and a new
//! `main` that calls the function on free integer inputs. When every
//! parameter is an integer, the function's runs depend only on its
//! arguments, the input stream (what is left of a stream is a stream)
//! and its callees, so the proof holds in every program that has the same
//! function and callees, whatever their callers do. The editor keeps such
//! proofs keyed by those alone (`db::dependencies_from_any_call`,
//! docs/editors.md, "What is checked again").

use super::{CheckOptions, Report, Verdict, check_target};
use crate::db::{self, Database, SourceFile, Target};
use crate::types::Type;

/// Target `t` proved unreachable from any call of its function, if its
/// function qualifies (not `main`, integer parameters, no call back to
/// `main`) and the portfolio proves it within `opts`. The report is of
/// `t`; its proof's places are the program's own (only `main`'s name and
/// an appended `main` differ).
pub fn unreachable_from_any_call(
    db: &Database,
    file: SourceFile,
    t: &Target,
    opts: &CheckOptions,
) -> Option<Report> {
    let text = with_free_caller(db, file, &t.function)?;
    check_in(db, file, t, &text, opts)
}

fn check_in(
    db: &Database,
    file: SourceFile,
    t: &Target,
    text: &str,
    opts: &CheckOptions,
) -> Option<Report> {
    let (free_db, free_file) = Database::with_file(file.path(db), text);
    if db::diagnostics(&free_db, free_file)
        .iter()
        .any(|d| d.is_error())
    {
        return None;
    }
    let same = (db::targets(&free_db, free_file).into_iter()).find(|u| u == t)?;
    let mut report = check_target(&free_db, free_file, &same, opts);
    report.trace = None;
    matches!(report.verdict, Verdict::Unreachable).then_some(report)
}

/// The program's text with `main` renamed (a name of the same length, so
/// that every place keeps its line and column) and a new `main` that
/// calls `function` on its own parameters; `None` if `function` does not
/// qualify.
pub fn with_free_caller(db: &Database, file: SourceFile, function: &str) -> Option<String> {
    let functions = db::functions(db, file);
    let item = functions.iter().find(|f| f.name(db) == function)?;
    let main = functions.iter().find(|f| f.name(db) == "main")?;
    let params = item.ast(db).params.len();
    let types = db::function_types(db, *item);
    let integers =
        (types.vars.iter().take(params)).all(|(_, ty)| matches!(ty, Type::Int | Type::Unknown));
    let calls_main = crate::ir::called_from(db::call_graph(db, file), function).contains("main");
    if function == "main" || !integers || calls_main {
        return None;
    }
    let names: Vec<&String> = functions.iter().map(|f| f.name(db)).collect();
    let renamed = (0..10)
        .map(|i| format!("m{i}in"))
        .find(|n| !names.contains(&n))?;
    let text = file.text(db);
    let at = main.offset(db) as usize;
    text.get(at..at + 4).filter(|name| *name == "main")?;
    let args: Vec<String> = (0..params).map(|i| format!("p{i}")).collect();
    let args = args.join(", ");
    Some(format!(
        "{}{renamed}{}\nmain({args}) {{\n  var r;\n  r = {function}({args});\n  return r;\n}}\n",
        &text[..at],
        &text[at + 4..]
    ))
}
