//! insta snapshots (in `snapshots/`) of the parsed AST and the CFG of every
//! program in `tests/programs/`. A change in parsing or lowering shows up
//! as a reviewable diff (`cargo insta review`).

use crate::common::*;
use apc::db::{self, Database};
use apc::syntax::LineIndex;

#[test]
fn ast_and_cfg_of_every_program() {
    for path in programs() {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let (database, file) = Database::with_file(&name, &text);
        let diags = db::diagnostics(&database, file);
        assert!(diags.iter().all(|d| !d.is_error()), "{name}: {diags:?}");
        let ast = apc::syntax::pretty::program(&db::parse(&database, file).program);
        let lines = LineIndex::new(&text);
        let mut cfg = String::new();
        for f in db::functions(&database, file) {
            let offset = f.offset(&database);
            let loc = |s: apc::syntax::Span| {
                let (l, c) = lines.line_col(&text, s.shift(offset).start);
                format!("{l}:{c}")
            };
            cfg.push_str(&apc::ir::to_text(db::function_body(&database, *f), &loc));
        }
        insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!(format!("{name}.ast"), ast);
            insta::assert_snapshot!(format!("{name}.cfg"), cfg);
        });
    }
}

#[test]
fn pretty_printed_ast_parses_back_to_the_same_program() {
    for path in programs() {
        let text = std::fs::read_to_string(&path).unwrap();
        let (p1, _) = apc::syntax::parse(&text);
        let printed = apc::syntax::pretty::program(&p1);
        let (p2, d) = apc::syntax::parse(&printed);
        assert!(
            d.iter().all(|d| !d.is_error()),
            "{}: {d:?}\n{printed}",
            path.display()
        );
        assert_eq!(
            printed,
            apc::syntax::pretty::program(&p2),
            "{}",
            path.display()
        );
    }
}
