//! From the model of a reached error leaf to main's inputs, replayed (and
//! shrunk) by the witness layer: a target is called reachable only with a
//! witness that runs to it (`docs/compositional-se.md` §11.2).

use super::program::Subject;
use super::reach::Reach;
use crate::db::Target;
use crate::interp::{ArgValue, Witness};
use crate::smt::smtlib;
use crate::term::Terms;
use crate::witness::{Replay, Replayer};

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
    let replay = Replayer::new(&subject.ast, &subject.source, std::slice::from_ref(target));
    let mut last = String::new();
    for window in WINDOWS {
        let w = witness(subject, reach, terms, window)?;
        match replay.hits(&w) {
            Ok(()) => return Ok(crate::witness::shrunk(w, &replay)),
            Err(why) => last = why,
        }
    }
    Err(last)
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
