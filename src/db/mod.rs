//! The salsa database at the centre: the source file is an input; parsing,
//! types and each function's IR are tracked queries. The analyses own
//! their queries (`nc::tracked` for loop summaries and conditions) and
//! build on these.
//!
//! Incrementality: a function's AST is stored in a tracked struct keyed by
//! (file, name) with function-relative spans and its offset kept apart, so
//! editing one function leaves the others' ASTs equal. Whole-program results
//! (types, the address-taken flag) are re-derived, but the per-function
//! slices that the IR reads are backdated when unchanged, so the IR of an
//! untouched function is not recomputed. `tests/it/incremental.rs` shows it
//! from salsa's event log.

use crate::TargetKind;
use crate::ir::{self, Body, DefiniteAssignment};
use crate::syntax::ast::{Function, Program};
use crate::syntax::{self, Diagnostic, LineIndex};
use crate::types::{self, FunctionTypes, ProgramTypes};
use std::sync::{Arc, Mutex};

#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub path: String,
    #[returns(ref)]
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Parsed {
    pub program: Program,
    /// Syntax errors and warnings (absolute spans).
    pub diagnostics: Vec<Diagnostic>,
}

impl Parsed {
    pub fn is_ok(&self) -> bool {
        self.diagnostics.iter().all(|d| !d.is_error())
    }
}

#[salsa::tracked(returns(ref))]
pub fn parse(db: &dyn salsa::Database, file: SourceFile) -> Parsed {
    let (program, diagnostics) = syntax::parse(file.text(db));
    Parsed {
        program,
        diagnostics,
    }
}

/// One function of a file.
#[salsa::tracked(debug)]
pub struct FunctionItem<'db> {
    #[returns(copy)]
    pub file: SourceFile,
    #[returns(ref)]
    pub name: String,
    /// The AST with `offset` set to 0: spans inside are function-relative,
    /// so moving the function in the file leaves this field equal.
    #[tracked]
    #[returns(ref)]
    pub ast: Function,
    /// Where the function starts in the file.
    #[tracked]
    #[returns(copy)]
    pub offset: u32,
}

#[salsa::tracked(returns(ref))]
pub fn functions(db: &dyn salsa::Database, file: SourceFile) -> Vec<FunctionItem<'_>> {
    parse(db, file)
        .program
        .functions
        .iter()
        .map(|f| {
            let mut ast = f.clone();
            ast.offset = 0;
            FunctionItem::new(db, file, f.name.name.clone(), ast, f.offset)
        })
        .collect()
}

/// Name resolution and type inference for the whole program.
#[salsa::tracked(returns(ref))]
pub fn program_types(db: &dyn salsa::Database, file: SourceFile) -> ProgramTypes {
    types::check_program(&parse(db, file).program)
}

/// The slice of the program's types that one function's IR needs.
#[salsa::tracked(returns(ref))]
pub fn function_types<'db>(db: &'db dyn salsa::Database, item: FunctionItem<'db>) -> FunctionTypes {
    let name = item.name(db);
    program_types(db, item.file(db))
        .function(name)
        .cloned()
        .unwrap_or(FunctionTypes {
            name: name.clone(),
            vars: vec![],
            exprs: vec![],
            ret: types::Type::Unknown,
        })
}

#[salsa::tracked(returns(ref))]
pub fn definite_assignment<'db>(
    db: &'db dyn salsa::Database,
    item: FunctionItem<'db>,
) -> DefiniteAssignment {
    ir::definite_assignment(item.ast(db))
}

/// Whether a dereference anywhere may read a never-assigned cell.
#[salsa::tracked(returns(copy))]
pub fn takes_unassigned_address(db: &dyn salsa::Database, file: SourceFile) -> bool {
    functions(db, file)
        .iter()
        .any(|f| definite_assignment(db, *f).unassigned_address_taken)
}

/// The flowgraph of one function.
#[salsa::tracked(returns(ref))]
pub fn function_body<'db>(db: &'db dyn salsa::Database, item: FunctionItem<'db>) -> Body {
    let deref_uninit = takes_unassigned_address(db, item.file(db));
    ir::lower_function(
        item.ast(db),
        function_types(db, item),
        definite_assignment(db, item),
        deref_uninit,
    )
}

/// The whole-program flowgraph: `main` with calls inlined (recursion cut).
/// `None` if there is no `main`.
#[salsa::tracked(returns(ref))]
pub fn program(db: &dyn salsa::Database, file: SourceFile) -> Option<ir::InlinedProgram> {
    let bodies: std::collections::BTreeMap<String, (&Body, u32)> = functions(db, file)
        .iter()
        .map(|f| (f.name(db).clone(), (function_body(db, *f), f.offset(db))))
        .collect();
    ir::inline_program(&bodies)
}

/// The slice of the whole-program flowgraph for reaching any copy of a
/// function's target (`ir::slice`), with its local arrays indexed only by
/// literals replaced by their cells (`ir::scalarise`): what the necessary
/// conditions are built on. `None` when it would change nothing.
#[salsa::tracked(returns(ref))]
pub fn target_slice(
    db: &dyn salsa::Database,
    file: SourceFile,
    function: String,
    target: u32,
) -> Option<Body> {
    let prog = program(db, file).as_ref()?;
    let scalar = scalar_program(db, file).as_ref();
    let base = scalar.unwrap_or(&prog.body);
    ir::slice(base, &prog.copies_of(&function, target)).or_else(|| scalar.cloned())
}

/// The whole-program flowgraph with its local arrays indexed only by
/// literals replaced by their cells (`ir::scalarise`); `None` when none
/// is.
#[salsa::tracked(returns(ref))]
pub fn scalar_program(db: &dyn salsa::Database, file: SourceFile) -> Option<Body> {
    ir::scalarise(&program(db, file).as_ref()?.body)
}

/// The whole-program flowgraph with, beside it, the flowgraph of each
/// function that its calls cut (by recursion), for the Horn clauses'
/// summaries (`ir::with_summaries`). `None` if nothing is cut, or a cut
/// function cannot be summarised.
#[salsa::tracked(returns(ref))]
pub fn summarised_program(
    db: &dyn salsa::Database,
    file: SourceFile,
) -> Option<(ir::Body, ir::Summaries)> {
    let prog = program(db, file).as_ref()?;
    let bodies: std::collections::BTreeMap<String, (&Body, u32)> = functions(db, file)
        .iter()
        .map(|f| (f.name(db).clone(), (function_body(db, *f), f.offset(db))))
        .collect();
    ir::with_summaries(&prog.body, &bodies)
}

/// The value facts of the whole program (`ir::value_facts`): which
/// pointers are never null and which lengths each array may have. `None`
/// if there is no `main`.
#[salsa::tracked(returns(ref))]
pub fn value_facts(db: &dyn salsa::Database, file: SourceFile) -> Option<ir::ValueFacts> {
    ir::value_facts(&bodies(db, file))
}

/// Why the value facts make target `t` unreachable, if they do.
pub fn proved_by_value_facts(
    db: &dyn salsa::Database,
    file: SourceFile,
    t: &Target,
) -> Option<String> {
    let facts = value_facts(db, file).as_ref()?;
    facts.proves(&t.function, t.id).map(str::to_string)
}

/// The program's call graph (`ir::call_graph`).
#[salsa::tracked(returns(ref))]
pub fn call_graph(db: &dyn salsa::Database, file: SourceFile) -> ir::CallGraph {
    ir::call_graph(&bodies(db, file))
}

/// Each function's flowgraph, by name.
pub fn bodies(
    db: &dyn salsa::Database,
    file: SourceFile,
) -> std::collections::BTreeMap<String, &Body> {
    functions(db, file)
        .iter()
        .map(|f| (f.name(db).clone(), function_body(db, *f)))
        .collect()
}

/// Where each function starts: its line and column (1-based).
#[salsa::tracked(returns(ref))]
pub fn function_starts(
    db: &dyn salsa::Database,
    file: SourceFile,
) -> std::collections::BTreeMap<String, (u32, u32)> {
    let text = file.text(db);
    let lines = LineIndex::new(text);
    (functions(db, file).iter())
        .map(|f| (f.name(db).clone(), lines.line_col(text, f.offset(db))))
        .collect()
}

/// Each function's flowgraph and the column it starts at, hashed: what
/// the function adds to a fingerprint ([`fingerprinted`]). Computed once
/// per version of the file, not once per target that depends on it.
#[salsa::tracked(returns(ref))]
pub fn function_fingerprints(
    db: &dyn salsa::Database,
    file: SourceFile,
) -> std::collections::BTreeMap<String, u64> {
    use std::hash::{Hash, Hasher};
    let starts = function_starts(db, file);
    (functions(db, file).iter())
        .map(|f| {
            let name = f.name(db).clone();
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (function_body(db, *f), starts.get(&name).map(|s| s.1)).hash(&mut h);
            (name, h.finish())
        })
        .collect()
}

/// What a target's verdict depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dependencies {
    /// The functions a run may execute before it reaches the target
    /// (`ir::runs_before`).
    pub functions: std::collections::BTreeSet<String>,
    /// The call graph, and the flowgraph of each of `functions` with the
    /// column it starts at, as one number. Two programs that agree on
    /// these give every input the same run up to the target, so its
    /// verdict carries over; only places move, by whole lines.
    pub fingerprint: u64,
}

/// What target `t`'s verdict depends on.
pub fn dependencies(db: &dyn salsa::Database, file: SourceFile, t: &Target) -> Dependencies {
    let graph = call_graph(db, file);
    let functions = ir::runs_before(&bodies(db, file), graph, &t.function, t.id);
    // The whole call graph: a call added anywhere may put a function on
    // the way to the target.
    fingerprinted(db, file, ("from main", graph), t, functions)
}

/// What a proof of target `t` from any call of its function depends on
/// (`check::anywhere`): the function and every function it calls, with
/// their calls and flowgraphs.
pub fn dependencies_from_any_call(
    db: &dyn salsa::Database,
    file: SourceFile,
    t: &Target,
) -> Dependencies {
    let graph = call_graph(db, file);
    let functions = ir::called_from(graph, &t.function);
    let calls: Vec<_> = functions.iter().map(|f| graph.get(f)).collect();
    fingerprinted(db, file, ("from any call", calls), t, functions)
}

/// `functions` with one number for them: `scope`, the target, and each
/// function's fingerprint ([`function_fingerprints`]), hashed.
fn fingerprinted(
    db: &dyn salsa::Database,
    file: SourceFile,
    scope: impl std::hash::Hash,
    t: &Target,
    functions: std::collections::BTreeSet<String>,
) -> Dependencies {
    use std::hash::{Hash, Hasher};
    let each = function_fingerprints(db, file);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (scope, &t.function, t.id).hash(&mut h);
    for f in &functions {
        (f, each.get(f)).hash(&mut h);
    }
    Dependencies {
        functions,
        fingerprint: h.finish(),
    }
}

/// A target of the file: a place where a run can fail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub function: String,
    /// Its id in the function's flowgraph.
    pub id: u32,
    pub kind: TargetKind,
    pub line: u32,
    pub col: u32,
}

impl Target {
    /// `assert at 13:9`: the target's kind and place, as reports name it.
    pub fn label(&self) -> String {
        format!("{} at {}:{}", self.kind.as_str(), self.line, self.col)
    }
}

/// Every target of the file, in source order.
pub fn targets(db: &dyn salsa::Database, file: SourceFile) -> Vec<Target> {
    let text = file.text(db);
    let lines = LineIndex::new(text);
    let mut out = Vec::new();
    for f in functions(db, file) {
        let offset = f.offset(db);
        for t in &function_body(db, *f).targets {
            let (line, col) = lines.line_col(text, t.span.shift(offset).start);
            out.push(Target {
                function: f.name(db).clone(),
                id: t.id,
                kind: t.kind,
                line,
                col,
            });
        }
    }
    out.sort_by_key(|t| (t.line, t.col));
    out
}

/// Every error and warning of the front end: syntax, then (if the syntax is
/// fine) names and types.
pub fn diagnostics(db: &dyn salsa::Database, file: SourceFile) -> Vec<Diagnostic> {
    let parsed = parse(db, file);
    let mut out = parsed.diagnostics.clone();
    if parsed.is_ok() {
        out.extend(program_types(db, file).diagnostics.iter().cloned());
    }
    out
}

/// The database. Cloning shares storage (for parallel queries).
#[salsa::db]
#[derive(Clone, Default)]
pub struct Database {
    storage: salsa::Storage<Self>,
}

#[salsa::db]
impl salsa::Database for Database {}

impl Database {
    /// A database holding one source file: what the command line, the
    /// benchmarks and the tests all start from.
    pub fn with_file(path: &str, text: &str) -> (Database, SourceFile) {
        let db = Database::default();
        let file = SourceFile::new(&db, path.to_string(), text.to_string());
        (db, file)
    }

    /// A database that records every query execution as
    /// "query_name(key)" (salsa's `WillExecute` events), for tests.
    pub fn with_execution_log() -> (Database, Arc<Mutex<Vec<String>>>) {
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind
                && let Ok(mut l) = sink.lock()
            {
                l.push(format!("{database_key:?}"));
            }
        })));
        (Database { storage }, log)
    }
}
