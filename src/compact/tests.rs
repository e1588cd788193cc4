//! Unit tests of renaming, the closed forms of templates, the part
//! detector, and refusals where no exact rule applies.

use super::state::{Value, rename_vars};
use crate::term::{Terms, VarKind};
use rustc_hash::FxHashMap as HashMap;

#[test]
fn renaming_a_bound_variable_renames_its_binder() {
    let mut t = Terms::new();
    let tau = t.new_var(VarKind::Bound, "τ");
    let kappa = t.new_var(VarKind::Counter, "κ");
    let (tt, kt) = (t.var(tau), t.var(kappa));
    let lt = t.lt(tt, kt);
    let all = t.forall(vec![tau], lt);
    let (tau2, kappa2) = (
        t.new_var(VarKind::Bound, "τ"),
        t.new_var(VarKind::Counter, "κ"),
    );
    let map: HashMap<_, _> = [(tau, tau2), (kappa, kappa2)].into_iter().collect();
    let r = rename_vars(&mut t, all, &map);
    assert_eq!(t.free_vars(r), vec![kappa2]);
    assert!(!t.mentions(r, tau));
    assert_ne!(Value::Int(r), Value::Int(all));
}

use super::exec::Program;
use super::solver::Solver;
use super::template::{Outcome, derive, parts};

/// The parts of `main` in `source` and what the detector makes of each.
fn outcomes(source: &str) -> (Terms, Program, Vec<Outcome>) {
    let (db, file) = crate::db::Database::with_file("t.mc", source);
    let prog = Program::load(&db, file);
    let main = prog.index("main").unwrap();
    let profile = crate::smt::default_z3().expect("z3 on PATH");
    let mut sat = Solver::new(profile, std::time::Duration::from_secs(10), None);
    let mut terms = Terms::new();
    let out = parts(&prog.funcs[main])
        .iter()
        .map(|p| derive(&mut terms, &prog, main, p, &mut sat))
        .collect();
    (terms, prog, out)
}

fn template(o: &Outcome) -> &super::template::Template {
    match o {
        Outcome::Template(t) => t,
        other => panic!("no template: {other:?}"),
    }
}

#[test]
fn rules_n_and_l_close_a_counter_and_its_last_value() {
    let (terms, prog, out) = outcomes(
        "main(n) { var i, last; i = 0; last = -1; \
         while (i < n) { last = 2 * i; i = i + 1; } return last; }",
    );
    assert_eq!(out.len(), 1);
    let t = template(&out[0]);
    let body = &prog.funcs[0];
    let show = |name: &str| match t.closed[body.var_id(name).unwrap() as usize] {
        Value::Int(x) => terms.show(x),
        v => panic!("{v:?}"),
    };
    assert_eq!(show("i"), "i₀ + κ");
    let last = show("last");
    assert!(
        last.contains("ite") && last.contains("2·i₀ + 2·κ - 2"),
        "{last}"
    );
    assert_eq!(t.exits.len(), 1, "one way out: i >= n");
}

#[test]
fn an_array_written_in_the_cycle_refuses_the_template() {
    let (_, _, out) = outcomes(
        "main(n) { var i, a; a = [0, 0, 0]; i = 0; \
         while (i < n) { a[0] = i; i = i + 1; } return 0; }",
    );
    assert!(
        out.iter()
            .any(|o| matches!(o, Outcome::Refused(why) if why.contains("rule A"))),
        "{out:?}"
    );
}

#[test]
fn an_infeasible_cycle_gives_no_template_and_an_impossible_exit_is_dropped() {
    let (_, _, out) = outcomes(
        "main(n) { var i; i = 0; \
         while (i < n) { if (i < i) { i = i + 2; } else { i = i + 1; } } return i; }",
    );
    assert!(out.iter().any(|o| matches!(o, Outcome::NoCycle)), "{out:?}");
    let t = out.iter().find_map(|o| match o {
        Outcome::Template(t) => Some(t),
        _ => None,
    });
    assert!(t.is_some_and(|t| t.exits.len() == 1), "{out:?}");
}

#[test]
fn a_loop_with_two_cycles_gets_a_part_per_cycle_and_one_for_both() {
    let (_, _, out) = outcomes(
        "main(A, n, x) { var k, i; k = 0; i = 0; \
         while (i < n) { if (A[i] == x) { k = k + 1; } i = i + 1; } return k; }",
    );
    assert_eq!(out.len(), 3);
    let params: Vec<usize> = out.iter().map(|o| template(o).more_params.len()).collect();
    // κ₂ and the two trip-count functions for the template of both cycles.
    assert_eq!(params, vec![0, 0, 3]);
}

#[test]
fn a_write_into_a_copied_array_stops_the_path_instead_of_a_wrong_value() {
    // b = a makes b and a the same cells: this model copies values, so the
    // write must not go on as if a were untouched.
    let text = "main() { var a, b, r; a = [1, 2, 3]; b = a; b[0] = 7; r = a[0]; return r; }";
    let (db, file) = crate::db::Database::with_file("t.mc", text);
    let profile = crate::smt::default_z3().expect("z3 on PATH");
    let opts = super::Options {
        compact: true,
        one_parameter: false,
        max_vertices: 50,
        timeout: None,
        per_query: std::time::Duration::from_secs(10),
    };
    let (tree, _) = super::execute(&db, file, "main", &profile, &opts).unwrap();
    assert!(!tree.is_complete());
    assert!(
        tree.vertices
            .iter()
            .any(|v| matches!(&v.end, super::End::Stuck(why) if why.contains("array b")))
    );
    assert!(tree.leaves().all(|v| v.end != super::End::Exit));
}
