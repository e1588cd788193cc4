//! The portfolio's schedule: the order in which its engines start on a
//! program, from a cost model measured per engine on program features
//! (docs/portfolio.md §5a).
//!
//! A program falls in one [`Class`] of its [`Features`]: no loops, loops,
//! nested loops, loops over arrays, loops over the heap, recursion. For
//! each class, `apc bench engines` ran every engine alone on every target
//! of the corpus and of generated programs, and kept each one's time to
//! its answer. On those times it simulated the portfolio's race (the
//! head at once, each undecided end passing its turn, the rest after the
//! delay, the cores shared) under every order of the engines. A class is
//! given the order with the least mean time to a verdict only if it is no
//! worse in median and geometric mean and gains at least 5 % in each
//! family of programs (corpus, generated) with enough of the class's
//! targets; otherwise it keeps the unscheduled order ([`ORDERS`]). In the
//! checked-in run, no class's best order passed that test. The same rule
//! chooses how far apart the engines after the first waiting one start
//! ([`STAGGERS`]): loops get 500 ms.
//!
//! The order and the stagger change how soon a verdict comes, never which: every engine
//! of the portfolio still runs, and every answer is checked as before.

use crate::db::{self, Database, SourceFile};
use crate::ir::{Body, INPUT_STREAM};
use crate::types::Type;
use std::time::Duration;

/// What the model reads off a program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Features {
    /// Loops in all functions.
    pub loops: usize,
    /// The deepest nesting of loops (1: loops, none inside another).
    pub nesting: usize,
    /// A call from `main` that recurses: one the whole-program flowgraph
    /// cuts (`ir::InlinedProgram::recurses`).
    pub recursion: bool,
    /// Arrays: local ones, or main's input arrays.
    pub arrays: bool,
    /// Pointers or records (`alloc`, `&x`).
    pub heap: bool,
}

/// The classes of programs the model tells apart, first match wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    Recursion,
    NoLoops,
    NestedLoops,
    LoopsOverArrays,
    LoopsOverHeap,
    Loops,
}

impl Class {
    pub const ALL: [Class; 6] = [
        Class::NoLoops,
        Class::Loops,
        Class::NestedLoops,
        Class::LoopsOverArrays,
        Class::LoopsOverHeap,
        Class::Recursion,
    ];

    pub fn of(f: &Features) -> Class {
        if f.recursion {
            Class::Recursion
        } else if f.loops == 0 {
            Class::NoLoops
        } else if f.nesting >= 2 {
            Class::NestedLoops
        } else if f.arrays {
            Class::LoopsOverArrays
        } else if f.heap {
            Class::LoopsOverHeap
        } else {
            Class::Loops
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Class::Recursion => "recursion",
            Class::NoLoops => "no loops",
            Class::NestedLoops => "nested loops",
            Class::LoopsOverArrays => "loops over arrays",
            Class::LoopsOverHeap => "loops over the heap",
            Class::Loops => "loops",
        }
    }
}

impl Features {
    /// The features of the program in `file` (an empty program's are all
    /// zero).
    pub fn of(db: &Database, file: SourceFile) -> Features {
        let bodies = db::bodies(db, file);
        let vars = || bodies.values().flat_map(|b| b.vars.iter());
        let program = db::program(db, file).as_ref();
        Features {
            loops: bodies.values().map(|b| b.loops.len()).sum(),
            nesting: bodies.values().map(|b| nesting(b)).max().unwrap_or(0),
            recursion: program.is_some_and(|p| p.recurses()),
            arrays: vars().any(|v| matches!(v.ty, Type::Array(_)) && v.name != INPUT_STREAM),
            heap: vars().any(|v| matches!(v.ty, Type::Ptr(_) | Type::Record(_))),
        }
    }
}

/// The deepest chain of loops inside loops in one function.
fn nesting(body: &Body) -> usize {
    let depth = |mut l: Option<u32>| {
        let mut d = 0;
        while let Some(id) = l {
            d += 1;
            l = body.loops[id as usize].parent;
        }
        d
    };
    (body.loops.iter())
        .map(|l| depth(Some(l.id)))
        .max()
        .unwrap_or(0)
}

/// The portfolio's engines in the class's order; engines the order does
/// not name keep theirs, after the named ones.
pub fn order(class: Class, engines: &[&'static str]) -> Vec<&'static str> {
    let schedule = order_of(class);
    let rank = |e: &str| schedule.iter().position(|s| *s == e).unwrap_or(usize::MAX);
    let mut ordered = engines.to_vec();
    // A stable sort: the engines the schedule does not name keep the given
    // order.
    ordered.sort_by_key(|e| rank(e));
    ordered
}

/// The engines of a race in the order they start, and how much later
/// each one after the first waiting one starts than the one before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub order: Vec<&'static str>,
    pub stagger: Duration,
}

impl Schedule {
    /// `order`, every engine after the head starting together.
    pub fn unstaggered(order: Vec<&'static str>) -> Schedule {
        Schedule {
            order,
            stagger: Duration::ZERO,
        }
    }
}

/// The schedule for the program in `file`: its class's order of
/// `engines`, and its class's stagger.
pub fn for_program(db: &Database, file: SourceFile, engines: &[&'static str]) -> Schedule {
    let class = Class::of(&Features::of(db, file));
    Schedule {
        order: order(class, engines),
        stagger: stagger_of(class),
    }
}

/// The class's measured stagger (none if none was measured).
pub fn stagger_of(class: Class) -> Duration {
    (STAGGERS.iter())
        .find(|(c, _)| *c == class)
        .map_or(Duration::ZERO, |(_, s)| *s)
}

/// Per class, how much later each engine after the first waiting one
/// starts: fewer engines share the two cores while the first ones may
/// still decide. Chosen by the rule that chooses the orders, on the same
/// checked-in runs (`apc bench engines --portfolio-stagger MS`,
/// docs/portfolio.md §5a): only loops gain 5 % in each family with enough
/// targets. Nested loops gain in the corpus and lose in the generator's
/// programs; loops over arrays and recursion lose.
pub static STAGGERS: &[(Class, Duration)] = &[(Class::Loops, Duration::from_millis(500))];

/// The class's measured order (empty if none was measured).
pub fn order_of(class: Class) -> &'static [&'static str] {
    ORDERS
        .iter()
        .find(|(c, _)| *c == class)
        .map_or(&[], |(_, o)| o)
}

/// Per class, the order `apc bench engines` recommends on its checked-in
/// runs (docs/portfolio.md §5a gives the run and its table). In that run
/// no order gained on the unscheduled one in both families of programs
/// (the corpus and the generator's), so every class has it.
pub static ORDERS: &[(Class, &[&str])] = &[
    (Class::NoLoops, &UNSCHEDULED),
    (Class::Loops, &UNSCHEDULED),
    (Class::NestedLoops, &UNSCHEDULED),
    (Class::LoopsOverArrays, &UNSCHEDULED),
    (Class::LoopsOverHeap, &UNSCHEDULED),
    (Class::Recursion, &UNSCHEDULED),
];

const UNSCHEDULED: [&str; 7] = crate::engine::DEFAULT_PORTFOLIO;

#[cfg(test)]
mod tests {
    use super::*;

    fn features(src: &str) -> Features {
        let db = Database::default();
        let file = SourceFile::new(&db, "t.mc".into(), src.to_string());
        Features::of(&db, file)
    }

    #[test]
    fn features_are_read_off_the_program() {
        let f = features(
            "f(n) { var r; if (n < 1) { r = 0; } else { r = f(n - 1); } return r; }
             main(a, n) { var i, j, p; i = 0; p = alloc 1;
               while (i < n) { j = 0; while (j < i) { j = j + a[j]; } i = i + 1; }
               return f(input); }",
        );
        assert_eq!(f.loops, 2);
        assert_eq!(f.nesting, 2);
        assert!(f.recursion && f.arrays && f.heap);
        assert_eq!(Class::of(&f), Class::Recursion);
        let g = features("main(n) { var x; x = 1 / n; return x; }");
        assert_eq!(g, Features::default());
        assert_eq!(Class::of(&g), Class::NoLoops);
    }

    #[test]
    fn every_class_orders_every_engine_of_the_portfolio() {
        for class in Class::ALL {
            let mut ordered = order(class, &crate::engine::DEFAULT_PORTFOLIO);
            assert_eq!(ordered[..order_of(class).len()], *order_of(class));
            ordered.sort();
            let mut all = crate::engine::DEFAULT_PORTFOLIO.to_vec();
            all.sort();
            assert_eq!(ordered, all, "{class:?}");
            assert_eq!(
                order_of(class).len(),
                all.len(),
                "{class:?} has no full order"
            );
        }
    }
}
