//! Unit tests of the engine's parts: the globals mapping, rec/rer, the
//! globalisation and the interpretations' SMT-LIB (no solver needed), and
//! one run on a real solver session.

use super::interpret::Interpreter;
use super::program::Subject;
use super::reach::globalise;
use super::state::{Analysis, Invocation, Leaf, Stat, Val};
use super::*;
use crate::term::Terms;
use std::rc::Rc;

const TWO_LEVELS: &str = "g(u) { var r; if (u > 0) { r = u; } else { r = 0 - u; } return r; }\n\
    f(x) { var y; y = g(x + 1); return y; }\n\
    main(a) { var b; b = f(a); assert(b != 3); return b; }\n";

fn subject(text: &str) -> (Subject, Terms) {
    let (db, file) = Database::with_file("t.mc", text);
    let mut terms = Terms::new();
    let s = Subject::new(&db, file, &mut terms).expect("supported");
    (s, terms)
}

fn leaf(terms: &mut Terms, stat: Stat, called: &[usize]) -> Leaf {
    Leaf {
        stat,
        node: 0,
        vals: Rc::new([]),
        ic: terms.int(0),
        pc: terms.bool(true),
        called: called.into(),
        depth: 0,
    }
}

#[test]
fn globals_are_parameters_then_the_input_position() {
    let (s, mut terms) = subject(TWO_LEVELS);
    let g = s.by_name["g"];
    assert_eq!(s.funcs[g].entry.len(), 2, "u, then $ic");
    let mut it = Interpreter {
        subject: &s,
        terms: &mut terms,
    };
    let entry = it.entry(g);
    let u = it.terms.var(s.funcs[g].entry[0]);
    assert_eq!(entry.vals[0], Val::Int(u));
    let ic = it.terms.var(s.funcs[g].entry[1]);
    assert_eq!(entry.ic, ic, "a callee starts where its caller's input was");
    let main = it.entry(s.main);
    assert_eq!(
        it.terms.as_int(main.ic),
        Some(&0.into()),
        "main starts at input 0"
    );
    assert_eq!(s.callee_first.last(), Some(&s.main), "callees first");
}

#[test]
fn rec_revives_the_callee_closure_only() {
    let mut terms = Terms::new();
    // 0 calls 1 calls 2; 3 is apart.
    let mut a = Analysis::new((0..4).map(|_| leaf(&mut terms, Stat::Unr, &[])).collect());
    a.queue.clear();
    let t = terms.bool(true);
    for (c, g) in [(0, 1), (1, 2)] {
        a.invoke(Invocation {
            caller: c,
            callee: g,
            args: vec![],
            pc: t,
            called: Rc::new([]),
        });
    }
    a.rec(1);
    let stats: Vec<Stat> = a.sums.iter().map(|s| s[0].stat).collect();
    assert_eq!(stats, [Stat::Unr, Stat::Unk, Stat::Unk, Stat::Unr]);
    assert_eq!(a.queue.len(), 2);
}

#[test]
fn rer_revives_what_depends_on_the_return_transitively() {
    let mut terms = Terms::new();
    // 0 calls 1 calls 2. A leaf of 0 that called 1 depends on 2's returns
    // (rc_1's interpretation holds rc_2); one that called nothing does not.
    let mut a = Analysis::new(vec![
        leaf(&mut terms, Stat::Unr, &[1]),
        leaf(&mut terms, Stat::Unr, &[]),
        leaf(&mut terms, Stat::Fin, &[]),
    ]);
    a.sums[0].push(leaf(&mut terms, Stat::Unr, &[]));
    a.queue.clear();
    let t = terms.bool(true);
    for (c, g) in [(0, 1), (1, 2)] {
        a.invoke(Invocation {
            caller: c,
            callee: g,
            args: vec![],
            pc: t,
            called: Rc::new([]),
        });
    }
    a.rer(2);
    assert_eq!(a.sums[0][0].stat, Stat::Unk, "called 1, which reaches 2");
    assert_eq!(a.sums[0][1].stat, Stat::Unr, "depends on no return");
    assert_eq!(
        a.sums[1][0].stat,
        Stat::Unr,
        "its pc and invocations do not depend"
    );
}

#[test]
fn globalisation_substitutes_each_invocation_and_is_false_before_any() {
    let (s, mut terms) = subject(TWO_LEVELS);
    let entries: Vec<Leaf> = {
        let mut it = Interpreter {
            subject: &s,
            terms: &mut terms,
        };
        (0..s.funcs.len()).map(|f| it.entry(f)).collect()
    };
    let mut a = Analysis::new(entries);
    let (f, g) = (s.by_name["f"], s.by_name["g"]);
    let u = terms.var(s.funcs[g].entry[0]);
    let zero = terms.int(0);
    let pc = terms.lt(zero, u);
    let none = globalise(&s, &a, &mut terms, g, pc);
    assert_eq!(terms.as_bool(none), Some(false));
    // main calls f(a) at input 0; f calls g(x + 1).
    let main_a = terms.var(s.main_inputs[0].symbol);
    let x = terms.var(s.funcs[f].entry[0]);
    let x1 = terms.add_int(x, 1);
    let (t, f_ic) = (terms.bool(true), terms.var(s.funcs[f].entry[1]));
    a.invoke(Invocation {
        caller: s.main,
        callee: f,
        args: vec![main_a, zero],
        pc: t,
        called: Rc::new([]),
    });
    a.invoke(Invocation {
        caller: f,
        callee: g,
        args: vec![x1, f_ic],
        pc: t,
        called: Rc::new([]),
    });
    let global = globalise(&s, &a, &mut terms, g, pc);
    let a1 = terms.add_int(main_a, 1);
    assert_eq!(global, terms.lt(zero, a1), "{}", terms.show(global));
}

#[test]
fn a_run_finds_the_reachable_assert_and_replays_it() {
    let (db, file) = Database::with_file("t.mc", TWO_LEVELS);
    let z3 = crate::smt::locate(crate::smt::SolverKind::Z3, None).expect("z3 installed");
    let out = run(&db, file, &Options::new(z3)).expect("runs");
    assert_eq!(out.end, End::Terminated);
    assert_eq!(out.reached.len(), 1);
    let w = &out.reached[0].witness;
    // b = |a + 1| = 3: a = 2 or a = -4.
    let a = match &w.args[0].1 {
        crate::interp::ArgValue::Int(a) => a.clone(),
        other => panic!("{other:?}"),
    };
    assert!(a == 2.into() || a == (-4).into(), "{a}");
    let g = out.functions.iter().find(|f| f.name == "g").unwrap();
    assert_eq!((g.finished, g.invoked), (2, 1), "{g:?}");
}
