//! Typed queries: what a query is (its variant), its SMT-LIB text, the
//! script a solver profile makes of it, and the one name its dump gets.
//! `apc check` sends these, `apc nc --dump-queries` writes them and the
//! benchmarks time them, so a dumped file is byte for byte what was sent.

use super::profile::Profile;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The variants of a necessary-condition query (see `nc::query`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// φ̂ with its quantifiers.
    Quantified,
    /// φ̂ when it has no quantifiers: nothing to unfold, one exact query.
    QuantifierFree,
    /// φ̂^K, the quantifier-free weakening.
    Unfolded(u32),
    /// φ̂^K ∧ κ ≤ K: a witness search; its `unsat` proves nothing.
    Bounded(u32),
    /// φ̂ of the target's slice (with quantifiers, if it has them): a
    /// proof search; its models are not judged (the slice's inputs are
    /// not all the program's).
    Sliced(bool),
}

impl Variant {
    /// The method a verdict names, e.g. `nc-unfolded:k=25`.
    pub fn method(self) -> String {
        match self {
            Variant::Quantified => "nc-quantified".into(),
            Variant::QuantifierFree => "nc-quantifier-free".into(),
            Variant::Unfolded(k) => format!("nc-unfolded:k={k}"),
            Variant::Bounded(k) => format!("nc-bounded:k={k}"),
            Variant::Sliced(_) => "nc-sliced".into(),
        }
    }

    /// The variant's part of a dump's file name, e.g. `unfolded-k-25`.
    pub fn file_part(self) -> String {
        match self {
            Variant::Quantified => "quantified".into(),
            Variant::QuantifierFree => "quantifier-free".into(),
            Variant::Unfolded(k) => format!("unfolded-k-{k}"),
            Variant::Bounded(k) => format!("bounded-k-{k}"),
            Variant::Sliced(_) => "sliced".into(),
        }
    }

    /// Whether the query has quantifiers (selects the profile's options).
    pub fn is_quantified(self) -> bool {
        matches!(self, Variant::Quantified | Variant::Sliced(true))
    }

    /// Whether its `unsat` is a proof: not for a bounded witness search,
    /// whose `unsat` only means "no witness within the bound".
    pub fn refutes(self) -> bool {
        !matches!(self, Variant::Bounded(_))
    }

    /// Whether its models are judged as witnesses: not the slice's.
    pub fn witnesses(self) -> bool {
        !matches!(self, Variant::Sliced(_))
    }
}

/// One query: its variant and its SMT-LIB text (declarations,
/// definitions, assertions; no options, no `(check-sat)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    pub variant: Variant,
    pub text: String,
}

impl Query {
    /// What a session is sent first: the profile's options for this
    /// variant, then the query.
    pub fn preamble(&self, profile: &Profile) -> String {
        profile.preamble(self.variant.is_quantified(), &self.text)
    }

    /// The self-contained script of a check after the assertions
    /// `blocks` (blocked models): what a dump holds.
    pub fn script(&self, profile: &Profile, blocks: &[String]) -> String {
        profile.script(self.variant.is_quantified(), &self.text, blocks)
    }
}

/// A query built when a race's contender first needs it, on that
/// contender's thread: the race starts on the cheap queries while the
/// expensive ones (φ̂^25's unfolding) are still being built, and a query
/// whose race is decided first is never finished. Contenders of several
/// solvers share one: it is built once. `Err` says why it was left out
/// (an unfolding too large to build).
pub struct PendingQuery<'a> {
    pub variant: Variant,
    built: OnceLock<Result<Query, String>>,
    build: Builder<'a>,
}

type Builder<'a> = Box<dyn Fn() -> Result<Query, String> + Send + Sync + 'a>;

impl<'a> PendingQuery<'a> {
    pub fn new(
        variant: Variant,
        build: impl Fn() -> Result<Query, String> + Send + Sync + 'a,
    ) -> Self {
        PendingQuery {
            variant,
            built: OnceLock::new(),
            build: Box::new(build),
        }
    }

    /// The query, built now if no thread has built it yet (a thread that
    /// asks meanwhile waits for that build).
    pub fn get(&self) -> Result<&Query, &str> {
        self.built
            .get_or_init(|| (self.build)())
            .as_ref()
            .map_err(String::as_str)
    }
}

impl std::fmt::Debug for PendingQuery<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingQuery")
            .field("variant", &self.variant)
            .field("built", &self.built.get().map(|q| q.is_ok()))
            .finish()
    }
}

/// Where the dumps of one target's queries go: `DIR/STEM-VARIANT-SOLVER.smt2`,
/// and `…-modelM.smt2` for the same query asked again with the inputs of
/// the first M−1 models blocked. The stem names the program, the function
/// and the target's place, so that the dumps of several programs can share
/// a directory.
#[derive(Clone, Debug)]
pub struct DumpName {
    pub dir: PathBuf,
    pub stem: String,
    /// Where a failed write is reported (shared by the clones): a dump
    /// that cannot be written is an error of the run, never dropped.
    pub failure: DumpFailure,
}

/// The first dump that could not be written, if any.
#[derive(Clone, Debug, Default)]
pub struct DumpFailure(Arc<Mutex<Option<String>>>);

impl DumpFailure {
    fn note(&self, msg: String) {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(msg);
    }

    /// The failure, if one happened.
    pub fn get(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The program's file name without its extension.
fn program_stem(source: &str) -> String {
    Path::new(source)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl DumpName {
    /// For the target at `line:col` of `function` in the program at `source`.
    pub fn new(dir: &Path, source: &str, function: &str, line: u32, col: u32) -> DumpName {
        let program = program_stem(source);
        DumpName {
            dir: dir.to_path_buf(),
            stem: format!("{program}-{function}-{line}-{col}"),
            failure: DumpFailure::default(),
        }
    }

    /// For the query about every target at once of the program at `source`.
    pub fn every_target(dir: &Path, source: &str) -> DumpName {
        DumpName {
            dir: dir.to_path_buf(),
            stem: format!("{}-every-target", program_stem(source)),
            failure: DumpFailure::default(),
        }
    }

    /// Reports failed writes to `failure` (shared with the caller).
    pub fn reporting_to(mut self, failure: &DumpFailure) -> DumpName {
        self.failure = failure.clone();
        self
    }

    /// Writes the script of `variant` on `solver` (the `model`-th time it is
    /// asked); a failure is noted in `failure`.
    pub fn write(&self, variant: Variant, solver: &str, model: usize, text: &str) {
        let path = self.path(variant, solver, model);
        if let Err(e) = std::fs::write(&path, text) {
            self.failure
                .note(format!("cannot write {}: {e}", path.display()));
        }
    }

    /// Writes a script that is not a necessary-condition query (the Horn
    /// engine's) as `<stem>-<part>.smt2`; a failure is noted in `failure`.
    pub fn write_part(&self, part: &str, text: &str) {
        let path = self.dir.join(format!("{}-{part}.smt2", self.stem));
        if let Err(e) = std::fs::write(&path, text) {
            self.failure
                .note(format!("cannot write {}: {e}", path.display()));
        }
    }

    /// The file of `variant` on `solver`, the `model`-th time it is asked
    /// (from 1). Appended, not `with_extension`: a stem may hold dots.
    pub fn path(&self, variant: Variant, solver: &str, model: usize) -> PathBuf {
        let base = format!("{}-{}-{solver}", self.stem, variant.file_part());
        let name = if model <= 1 {
            format!("{base}.smt2")
        } else {
            format!("{base}-model{model}.smt2")
        };
        self.dir.join(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_names_keep_dotted_stems() {
        let d = DumpName::new(Path::new("/tmp/q"), "dir/my.prog.mc", "main", 3, 5);
        assert_eq!(
            d.path(Variant::Unfolded(25), "z3", 1),
            Path::new("/tmp/q/my.prog-main-3-5-unfolded-k-25-z3.smt2")
        );
        assert_eq!(
            d.path(Variant::Bounded(14), "cvc5", 3),
            Path::new("/tmp/q/my.prog-main-3-5-bounded-k-14-cvc5-model3.smt2")
        );
        assert_eq!(Variant::Unfolded(3).method(), "nc-unfolded:k=3");
        assert!(!Variant::Bounded(14).refutes() && Variant::Unfolded(14).refutes());
    }
}
