//! From the model of a reached error leaf to main's inputs, by the witness
//! layer's judge (a window of input cells, then the cells the replay read,
//! variations of the model, shrinking): a target is called reachable only
//! with a witness that runs to it (`docs/compositional-se.md` §11.2).

use super::program::Subject;
use super::reach::Reach;
use crate::db::Target;
use crate::interp::Witness;
use crate::ir::INPUT_STREAM;
use crate::smt::{Judgement, smtlib};
use crate::term::Terms;
use crate::witness::{Access, InputModel, Replayer};

/// The witness of the model the session holds, replayed to `target`; the
/// replay's complaint if none hits.
pub(crate) fn replayed(
    subject: &Subject,
    reach: &mut Reach,
    terms: &Terms,
    target: &Target,
) -> Result<Witness, String> {
    let symbol = |name: &str| {
        let input = if name == INPUT_STREAM {
            Some(subject.stream)
        } else {
            (subject.main_inputs.iter())
                .find(|i| i.name == name)
                .map(|i| i.symbol)
        };
        input.map(|v| smtlib::name(terms, v))
    };
    let main = &subject.funcs[subject.main].body;
    let inputs = InputModel::named(&subject.ast, main, symbol, Access::Apply);
    let replay = Replayer::new(&subject.ast, &subject.source, std::slice::from_ref(target));
    match inputs.judge(reach.warm(), &replay)? {
        Judgement::Accept((w, _)) => Ok(w),
        Judgement::Reject { why, .. } => Err(why),
    }
}
