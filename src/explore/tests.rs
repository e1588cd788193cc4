use super::*;
use crate::db::{self, Database};
use crate::syntax::LineIndex;

fn program(name: &str) -> (Database, SourceFile, String) {
    let path = format!("{}/tests/programs/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("the program exists");
    let (db, file) = Database::with_file(&path, &text);
    (db, file, text)
}

/// main's body, and the vertex where the statement on `line` starts (the
/// source of its first edge).
fn vertex_at(db: &Database, file: SourceFile, text: &str, line: u32) -> (crate::ir::Body, u32) {
    let main = db::functions(db, file)
        .iter()
        .find(|f| f.name(db) == "main")
        .copied()
        .expect("main");
    let body = db::function_body(db, main).clone();
    let lines = LineIndex::new(text);
    let e = body
        .edges
        .iter()
        .find(|e| lines.line_col(text, e.span.start + main.offset(db)).0 == line)
        .expect("an edge on that line");
    let from = e.from;
    (body, from)
}

/// The thesis's worked example (listing 4.8): with κ = 1, the future
/// queries about `arg` at the outer loop on line 19 are 8, and the
/// thesis's annotations of the lines after it hold too.
#[test]
fn query_count_of_listing_4_8() {
    let (db, file, text) = program("thesis_4_8.mc");
    // line → (Q(arg), Q(r)), from the listing's comments.
    let thesis = [
        (19, 8, 3),
        (21, 7, 2),
        (23, 7, 2),
        (25, 4, 1),
        (27, 4, 1),
        (30, 1, 1),
    ];
    for (line, q_arg, q_r) in thesis {
        let (body, n) = vertex_at(&db, file, &text, line);
        let q = query_count::recursive(&body, 1);
        let (arg, r) = (
            body.var_id("arg").expect("arg"),
            body.var_id("r").expect("r"),
        );
        assert_eq!((q.at(n, arg), q.at(n, r)), (q_arg, q_r), "line {line}");
    }
    let (body, header) = vertex_at(&db, file, &text, 19);
    let arg = body.var_id("arg").expect("arg");
    // More iterations counted, more queries.
    assert!(query_count::recursive(&body, 2).at(header, arg) > 8);
    // The lattice variant saturates in the loops, at its cap.
    assert_eq!(
        query_count::lattice(&body).at(header, arg),
        query_count::LATTICE_CAP
    );
}
