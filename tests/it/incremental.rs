//! The salsa database reuses per-function results: editing one function's
//! body recomputes that function's IR only. Shown from salsa's event log.

use apc::db::{self, Database, SourceFile};
use salsa::Setter;

const ORIGINAL: &str = "\
helper(x) {
  var y;
  y = x + 1;
  return y;
}

other(a) {
  var b;
  b = 0;
  while (b < a) { b = b + 2; }
  return b;
}

main(n) {
  var r;
  r = helper(n) + other(n);
  if (r > 10) { assert(r != 11); }
  return r;
}
";

fn all_bodies(db: &Database, file: SourceFile) -> Vec<String> {
    db::functions(db, file)
        .iter()
        .map(|f| format!("{}:{}", f.name(db), db::function_body(db, *f).edges.len()))
        .collect()
}

fn executed(log: &std::sync::Mutex<Vec<String>>, query: &str) -> Vec<String> {
    log.lock()
        .unwrap()
        .iter()
        .filter(|e| e.starts_with(query))
        .cloned()
        .collect()
}

#[test]
fn editing_one_function_recomputes_only_its_ir() {
    let (mut db, log) = Database::with_execution_log();
    let file = SourceFile::new(&db, "t.mc".to_string(), ORIGINAL.to_string());
    let before = all_bodies(&db, file);
    assert_eq!(
        executed(&log, "function_body").len(),
        3,
        "first run computes all three"
    );
    log.lock().unwrap().clear();

    // Edit the body of the FIRST function, and make it longer, so that every
    // later function moves in the file.
    let edited = ORIGINAL.replace("y = x + 1;", "y = x + 1;\n  y = y * 2;");
    file.set_text(&mut db).to(edited);
    let after = all_bodies(&db, file);

    let recomputed = executed(&log, "function_body");
    assert_eq!(
        recomputed.len(),
        1,
        "only helper's IR is recomputed: {recomputed:?}"
    );
    assert!(
        executed(&log, "parse").len() == 1,
        "the file itself is re-parsed"
    );
    assert_ne!(before[0], after[0], "helper's IR did change");
    assert_eq!(before[1..], after[1..]);
}

#[test]
fn a_type_change_in_one_function_reaches_its_callers_only_if_their_types_change() {
    let (mut db, log) = Database::with_execution_log();
    let file = SourceFile::new(&db, "t.mc".to_string(), ORIGINAL.to_string());
    all_bodies(&db, file);
    log.lock().unwrap().clear();
    // Same types, different body of `other`: main's IR stays.
    file.set_text(&mut db)
        .to(ORIGINAL.replace("b = b + 2;", "b = b + 3;"));
    all_bodies(&db, file);
    let recomputed = executed(&log, "function_body");
    assert_eq!(recomputed.len(), 1, "{recomputed:?}");
    assert!(recomputed[0].contains("function_body"));
}

#[test]
fn checking_every_target_computes_each_loop_summary_once() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/programs/hello.mc"
    ))
    .unwrap();
    let (db, log) = Database::with_execution_log();
    let file = SourceFile::new(&db, "hello.mc".to_string(), text);
    let main = *db::functions(&db, file)
        .iter()
        .find(|f| f.name(&db) == "main")
        .unwrap();
    let body = db::function_body(&db, main);
    let (targets, loops) = (body.targets.len(), body.loops.len());
    assert!(
        targets >= 4 && loops == 2,
        "{targets} targets, {loops} loops"
    );
    log.lock().unwrap().clear();
    for t in 0..targets as u32 {
        apc::nc::necessary_condition(
            &db,
            file,
            "main".to_string(),
            t,
            apc::nc::Options::default(),
        );
    }
    assert_eq!(executed(&log, "necessary_condition").len(), targets);
    let summaries = executed(&log, "loop_summary");
    assert_eq!(
        summaries.len(),
        loops,
        "each loop summarised once: {summaries:?}"
    );
}
