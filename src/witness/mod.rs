//! Witnesses: from a solver's model to `main`'s arguments and input
//! stream, the replay that makes a witness a witness, and shrinking. Every
//! engine's `reachable` goes through [`Replayer`]: a run of the reference
//! interpreter that ends at the target.
//!
//! - [`model`]: a model of the input symbols as a witness (windows of
//!   cells, the cells a replay read asked for next, variations, blocks);
//! - here: the replayer, and [`shrunk`] for witnesses built elsewhere.
//!
//! Knows the front end, the interpreter and the solver layer; not the
//! engines.

pub mod model;

pub use model::{Access, InputModel, Replay, Values};

use crate::db::Target;
use crate::interp::{ErrorPlace, InputReads, Limits, Witness};
use crate::syntax::LineIndex;
use crate::syntax::ast::Program;

/// Replays witnesses on the interpreter, the yardstick of every engine's
/// `reachable`, and tells which of its targets (one, or all of a program's
/// asked about at once) the run hit.
pub struct Replayer<'a> {
    /// The program, compiled once for all the replays.
    program: crate::interp::Prepared<'a>,
    text: &'a str,
    lines: LineIndex,
    targets: &'a [Target],
    /// The last witness replayed within the time left, and its run: a
    /// model's judge, the engine that accepts it and a racing solver with
    /// the same model replay the same witness, and a witness's run may be
    /// long (hundreds of millions of steps). Held while replaying, so that
    /// a second replay of the same witness waits for the first.
    last: std::sync::Mutex<Option<Replayed>>,
}

/// A witness and what its run did.
struct Replayed {
    witness: Witness,
    error: ErrorPlace,
    reads: Option<InputReads>,
}

impl<'a> Replayer<'a> {
    pub fn new(program: &'a Program, text: &'a str, targets: &'a [Target]) -> Self {
        Replayer {
            program: crate::interp::Prepared::new(program),
            text,
            lines: LineIndex::new(text),
            targets,
            last: std::sync::Mutex::new(None),
        }
    }

    /// The target the run of `w` hits, or what the run did instead. Work
    /// whose token stopped stops here at once (a model's judge may replay
    /// dozens of times: shrinking, variations), rather than hold up the
    /// race's end (by 12–20 ms on MatrIR).
    pub fn hit(&self, w: &Witness) -> Result<&'a Target, String> {
        let error = self.replayed(w, false).0;
        self.target_of(error)
    }

    /// The target a run of `w` within `limits` fails at, or what the run
    /// did instead: neither remembered nor timed as a replay, for many
    /// short runs (the fuzzer's tests).
    pub fn run_within(&self, w: &Witness, limits: Limits) -> Result<&'a Target, String> {
        let (error, _) = (self.program).replay_within(self.text, &self.lines, w, limits, false);
        self.target_of(error)
    }

    /// A run of `w` within `limits` (with the cells it read when
    /// `reading`). Work whose token stopped stops here at once.
    fn replay(&self, w: &Witness, limits: Limits, reading: bool) -> (ErrorPlace, InputReads) {
        crate::deadline::check();
        let _t = crate::deadline::timed("replaying");
        (self.program).replay_within(self.text, &self.lines, w, limits, reading)
    }

    /// The run of `w` within the time left (with the cells it read when
    /// `reading`), replayed or remembered.
    fn replayed(&self, w: &Witness, reading: bool) -> (ErrorPlace, InputReads) {
        crate::deadline::check();
        let mut last = self
            .last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(r) = last.as_ref().filter(|r| r.witness == *w)
            && (r.reads.is_some() || !reading)
        {
            return (r.error.clone(), r.reads.clone().unwrap_or_default());
        }
        let (error, reads) = self.replay(w, Limits::for_replay(), reading);
        // A run stopped by its deadline says nothing for a caller with time.
        if !crate::interp::ended_at_step_limit(&error) {
            *last = Some(Replayed {
                witness: w.clone(),
                error: error.clone(),
                reads: reading.then(|| reads.clone()),
            });
        }
        (error, reads)
    }

    /// Whether the run of `w` fails at `target`, which need not be one of
    /// the replayer's own: an engine that replays a witness per target it
    /// finds keeps one replayer for them all.
    pub fn hits_target(&self, w: &Witness, target: &Target) -> Result<(), String> {
        let (kind, (line, col)) = self.replayed(w, false).0?;
        if target.kind == kind && (target.line, target.col) == (line, col) {
            Ok(())
        } else {
            Err(crate::interp::hit_elsewhere(kind, (line, col)))
        }
    }

    /// The target a run's error is, or why the run missed them all.
    fn target_of(&self, error: ErrorPlace) -> Result<&'a Target, String> {
        let (kind, (line, col)) = error?;
        (self.targets.iter())
            .find(|t| t.kind == kind && (t.line, t.col) == (line, col))
            .ok_or_else(|| crate::interp::hit_elsewhere(kind, (line, col)))
    }
}

impl Replay for Replayer<'_> {
    fn hits(&self, w: &Witness) -> Result<(), String> {
        self.hit(w).map(|_| ())
    }

    fn judges_reading(&self, w: &Witness) -> (Result<(), String>, InputReads) {
        let (error, reads) = self.replay(w, Limits::default(), true);
        let only_run = w.args.is_empty() && reads.stream == 0 && reads.cells.is_empty();
        if crate::interp::ended_at_step_limit(&error) && only_run {
            return self.hits_reading(w);
        }
        (self.target_of(error).map(|_| ()), reads)
    }

    fn tries(&self, w: &Witness) -> Result<(), String> {
        let error = self.replay(w, Limits::default(), false).0;
        self.target_of(error).map(|_| ())
    }

    fn hits_reading(&self, w: &Witness) -> (Result<(), String>, InputReads) {
        let (error, reads) = self.replayed(w, true);
        (self.target_of(error).map(|_| ()), reads)
    }
}

/// `w`, which `replay` accepts, with each list cut past the last cell its
/// run read and then to the shortest prefix that still hits.
pub fn shrunk(w: Witness, replay: &impl Replay) -> Witness {
    let (_, reads) = replay.hits_reading(&w);
    model::shrink(w, &reads, replay)
}
