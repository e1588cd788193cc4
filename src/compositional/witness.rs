//! From the model of a reached error leaf to main's inputs, and their
//! replay on the interpreter: a target is called reachable only with a
//! witness that runs to it (`docs/compositional-se.md` §11.2).

use super::program::Subject;
use super::reach::Reach;
use crate::db::Target;
use crate::interp::{self, ArgValue, Witness};
use crate::smt::smtlib;
use crate::term::Terms;

/// Input-stream and input-array elements asked first, then after a miss.
const WINDOWS: [usize; 3] = [4, 64, 1024];

/// The witness of the model the session holds, replayed to `target` (its
/// lists then cut short where a shorter one still hits); the replay's
/// complaint if no window gives one that hits.
pub(crate) fn replayed(
    subject: &Subject,
    reach: &mut Reach,
    terms: &Terms,
    target: &Target,
) -> Result<Witness, String> {
    let mut last = String::new();
    for window in WINDOWS {
        let w = witness(subject, reach, terms, window)?;
        match hits(subject, &w, target) {
            Ok(()) => return Ok(shrunk(subject, w, target)),
            Err(why) => last = why,
        }
    }
    Err(last)
}

fn hits(subject: &Subject, w: &Witness, target: &Target) -> Result<(), String> {
    interp::replay_hits(
        &subject.ast,
        &subject.source,
        &subject.lines,
        w,
        target.kind,
        (target.line, target.col),
    )
}

/// The witness with each list cut to the shortest of 0, 1, 2, 4, … elements
/// that still hits (the window's tail is the model's noise).
fn shrunk(subject: &Subject, mut w: Witness, target: &Target) -> Witness {
    let cut = |len: usize| {
        (0..)
            .map(|k| if k == 0 { 0 } else { 1 << (k - 1) })
            .take_while(move |n| *n < len)
    };
    for n in cut(w.input.len()) {
        let mut shorter = w.clone();
        shorter.input.truncate(n);
        if hits(subject, &shorter, target).is_ok() {
            w = shorter;
            break;
        }
    }
    for a in 0..w.args.len() {
        let ArgValue::List(xs) = &w.args[a].1 else {
            continue;
        };
        for n in cut(xs.len()) {
            let mut shorter = w.clone();
            if let ArgValue::List(ys) = &mut shorter.args[a].1 {
                ys.truncate(n);
            }
            if hits(subject, &shorter, target).is_ok() {
                w = shorter;
                break;
            }
        }
    }
    w
}

fn witness(
    subject: &Subject,
    reach: &mut Reach,
    terms: &Terms,
    window: usize,
) -> Result<Witness, String> {
    let elements =
        |array: &str| -> Vec<String> { (0..window).map(|i| format!("({array} {i})")).collect() };
    let mut asked = Vec::new();
    for i in &subject.main_inputs {
        let n = smtlib::name(terms, i.symbol);
        if i.array {
            asked.extend(elements(&n));
        } else {
            asked.push(n);
        }
    }
    asked.extend(elements(&smtlib::name(terms, subject.stream)));
    let values = reach.values(&asked)?;
    let mut next = values.into_iter();
    let mut args = Vec::new();
    for i in &subject.main_inputs {
        let v = if i.array {
            ArgValue::List(next.by_ref().take(window).map(ArgValue::Int).collect())
        } else {
            ArgValue::Int(next.next().ok_or("a value missing from the model")?)
        };
        args.push((i.name.clone(), v));
    }
    Ok(Witness {
        args,
        input: next.collect(),
    })
}
