//! The console examples of the README and of `docs/` run as written
//! (`trycmd`): each ```` ```console ```` block's `$ apc …` commands are run
//! from the repository's root, and what they print must match what the
//! page shows, `[..]` standing for a varying part of a line (a time, the
//! engine that won a race) and `...` for lines left out. A `? N` line gives
//! the exit status when it is not 0.

use std::path::Path;

#[test]
fn the_console_examples_of_the_readme_and_docs_hold() {
    let z3 = apc::smt::locate(apc::smt::SolverKind::Z3, None).expect("z3 installed");
    trycmd::TestCases::new()
        .register_bin("apc", Path::new(env!("CARGO_BIN_EXE_apc")))
        .register_bin("z3", Path::new(&z3.command))
        .case("README.md")
        .case("docs/*.md");
}
