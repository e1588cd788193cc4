//! The salsa database at the centre: the source file is an input; parsing,
//! types and each function's IR are tracked queries.
//!
//! Incrementality: a function's AST is stored in a tracked struct keyed by
//! (file, name) with function-relative spans and its offset kept apart, so
//! editing one function leaves the others' ASTs equal. Whole-program results
//! (types, the address-taken flag) are re-derived, but the per-function
//! slices that the IR reads are backdated when unchanged, so the IR of an
//! untouched function is not recomputed. `tests/incremental.rs` shows it
//! from salsa's event log.

use crate::ir::{self, Body, DefiniteAssignment};
use crate::syntax::ast::{Function, Program};
use crate::syntax::{self, Diagnostic};
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

/// The summary of one loop of the whole-program flowgraph (seed 004/001):
/// computed once per loop and shared by every target's condition.
/// `opts` are the engine options (counter inference, helper solver, limits).
#[salsa::tracked(returns(ref), no_eq)]
pub fn loop_summary(
    db: &dyn salsa::Database,
    file: SourceFile,
    l: u32,
    opts: crate::nc::Options,
) -> crate::nc::Portable<crate::nc::Summary> {
    let body = &program(db, file)
        .as_ref()
        .expect("summaries are asked of programs with main")
        .body;
    let mut eng = crate::nc::Engine::with_db(body, opts, crate::nc::DbSource { db, file });
    let value = eng.compute_summary(l);
    crate::nc::Portable {
        terms: eng.terms,
        value,
    }
}

/// The necessary condition φ̂ of a target of a function: reaching any
/// inlined copy of it in the whole-program flowgraph.
#[salsa::tracked(returns(ref), no_eq)]
pub fn necessary_condition(
    db: &dyn salsa::Database,
    file: SourceFile,
    function: String,
    target: u32,
    opts: crate::nc::Options,
) -> crate::nc::Portable<crate::term::TermId> {
    let prog = program(db, file)
        .as_ref()
        .expect("conditions are asked of programs with main");
    let mut eng = crate::nc::Engine::with_db(&prog.body, opts, crate::nc::DbSource { db, file });
    let value = eng.condition_of(&prog.copies_of(&function, target));
    crate::nc::Portable {
        terms: eng.terms,
        value,
    }
}

/// The necessary condition of a target after e-graph simplification
/// (`simplify`), with what the simplifier did. The raw condition stays
/// available from `necessary_condition`; this copy adds the simplified terms
/// to a clone of its store.
#[salsa::tracked(returns(ref), no_eq)]
pub fn simplified_condition(
    db: &dyn salsa::Database,
    file: SourceFile,
    function: String,
    target: u32,
    opts: crate::nc::Options,
) -> crate::nc::Portable<(crate::term::TermId, crate::simplify::Stats)> {
    let raw = necessary_condition(db, file, function, target, opts);
    let mut terms = raw.terms.clone();
    let value = crate::simplify::simplify_one(&mut terms, raw.value);
    crate::nc::Portable { terms, value }
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
