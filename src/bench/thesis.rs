//! `apc bench thesis`: the thesis's final experiment (§6.3.3) on programs
//! from our generator: the 18 sets of Table 6.16, each program run under
//! the thesis's techniques and ours, every error replayed by the
//! interpreter, every proof attacked by random runs (docs/generator.md §4).

use crate::check::{self, CheckOptions, Target, Verdict};
use crate::db::{self, Database, SourceFile};
use crate::explore::{self, AtChecks, End, Merging, Strategy};
use crate::generator::{self, ThesisSet};
use crate::interp::{self, Limits, Witness};
use crate::smt::Profile;
use crate::syntax::LineIndex;
use num_bigint::BigInt;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// How a program is analysed: the thesis's four techniques (Tree search,
/// stop at the first error, as §6.3.3 ran them), then ours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Technique {
    Base,
    /// Lattice merging, limit-cost 1 (Table 6.18).
    Merging,
    /// Path subsumption as the thesis's tool has it (listing 5.6: blocked
    /// at checks).
    Subsumption,
    Summarisation,
    /// Subsumption (listing 5.7: conjoined at checks) and summarisation.
    Combined,
    /// Each target in turn: the executor guided to it, with subsumption
    /// and summaries (`apc check --engine explore`).
    Guided,
    /// `apc check`: the conditions, then the guided executor.
    Check,
}

impl Technique {
    pub const ALL: [Technique; 7] = [
        Technique::Base,
        Technique::Merging,
        Technique::Subsumption,
        Technique::Summarisation,
        Technique::Combined,
        Technique::Guided,
        Technique::Check,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Technique::Base => "base",
            Technique::Merging => "merging",
            Technique::Subsumption => "subsumption",
            Technique::Summarisation => "summarisation",
            Technique::Combined => "subsumption+summarisation",
            Technique::Guided => "guided",
            Technique::Check => "check",
        }
    }

    pub fn named(name: &str) -> Option<Technique> {
        Technique::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The thesis's column for this technique (`ThesisSet::published`).
    pub fn published_column(self) -> Option<usize> {
        match self {
            Technique::Base => Some(0),
            Technique::Merging => Some(1),
            Technique::Subsumption => Some(2),
            Technique::Summarisation => Some(3),
            _ => None,
        }
    }

    /// Whether the technique decides target by target (`check`), rather
    /// than exploring the program's paths once.
    pub fn per_target(self) -> bool {
        matches!(self, Technique::Guided | Technique::Check)
    }

    /// Whether the technique's engines race on threads and solver
    /// processes of their own (`check`'s portfolio), taking every core:
    /// such a run has the machine to itself, whatever `--jobs` says.
    pub fn uses_every_core(self) -> bool {
        self == Technique::Check
    }
}

#[derive(Clone, Debug)]
pub struct ThesisOptions {
    pub sets: Vec<&'static ThesisSet>,
    pub programs_per_set: u32,
    /// Everything one program costs under one technique.
    pub timeout: Duration,
    pub jobs: usize,
    pub seed: u64,
    pub techniques: Vec<Technique>,
    pub solver: Profile,
    /// Random concrete runs per program that attack the proofs.
    pub random_runs: u32,
}

/// A program of a set: its place and its text.
#[derive(Clone, Debug)]
pub struct Generated {
    pub set: &'static str,
    pub index: u64,
    pub source: String,
}

/// An error a technique found, as replayed again by the interpreter.
#[derive(Clone, Debug)]
pub struct ErrorFound {
    pub target: Target,
    pub witness: Witness,
    /// `Ok` if the interpreter's run (as `apc run` does it) hits the target.
    pub replay: Result<(), String>,
}

/// One program under one technique.
#[derive(Clone, Debug)]
pub struct ProgramRun {
    pub set: &'static str,
    pub index: u64,
    pub technique: Technique,
    /// Paths explored (merged states count their paths); 0 for the
    /// per-target techniques.
    pub coverage: u64,
    pub time: Duration,
    /// Stopped before deciding the program: by the deadline or, for the
    /// per-target techniques, with a target left `unknown`.
    pub timed_out: bool,
    pub error: Option<ErrorFound>,
    /// Every target proved unreachable.
    pub proved_safe: bool,
    /// Why the run did not finish, when it did not.
    pub note: Option<String>,
    /// Targets claimed unreachable that a random run, or another
    /// technique's replayed error, hit: soundness failures.
    pub refuted: Vec<Target>,
}

/// The source of program `index` of `set` (the set's name joins the seed,
/// so the sets differ even where their parameters draw alike).
pub fn program(set: &'static ThesisSet, seed: u64, index: u64) -> Generated {
    let seed = seed ^ crate::fuzz::seed(set.name);
    Generated {
        set: set.name,
        index,
        source: generator::generate_source(&set.params(), seed, index),
    }
}

/// Runs every program of every set under every technique, `jobs`
/// programs at a time (a technique that uses every core alone);
/// `done` hears of each run as it ends.
pub fn run(opts: &ThesisOptions, done: &(dyn Fn(&ProgramRun) + Sync)) -> Vec<ProgramRun> {
    let programs: Vec<Generated> = (opts.sets.iter())
        .flat_map(|s| (0..opts.programs_per_set as u64).map(|i| program(s, opts.seed, i)))
        .collect();
    let next = AtomicUsize::new(0);
    let runs = Mutex::new(Vec::new());
    let cores = RwLock::new(());
    std::thread::scope(|scope| {
        for _ in 0..opts.jobs.clamp(1, programs.len().max(1)) {
            let (next, runs, programs, cores) = (&next, &runs, &programs, &cores);
            crate::deadline::analysis_thread()
                .spawn_scoped(scope, move || {
                    while let Some(p) = programs.get(next.fetch_add(1, Ordering::SeqCst)) {
                        let ran = run_program(p, opts, cores, done);
                        runs.lock().unwrap_or_else(|e| e.into_inner()).extend(ran);
                    }
                })
                .expect("spawning a worker thread");
        }
    });
    let mut runs = runs.into_inner().unwrap_or_else(|e| e.into_inner());
    let set_order = |name: &str| opts.sets.iter().position(|s| s.name == name);
    let technique_order = |t: Technique| opts.techniques.iter().position(|x| *x == t);
    runs.sort_by_key(|r| (set_order(r.set), r.index, technique_order(r.technique)));
    runs
}

/// A generated program loaded once for all its techniques: the database,
/// its line index and its targets.
struct Subject<'p> {
    generated: &'p Generated,
    db: Database,
    file: SourceFile,
    lines: LineIndex,
    targets: Vec<Target>,
}

impl<'p> Subject<'p> {
    fn load(generated: &'p Generated) -> Subject<'p> {
        let name = format!("{}-{:03}.mc", generated.set, generated.index);
        let (db, file) = Database::with_file(&name, &generated.source);
        let lines = LineIndex::new(&generated.source);
        let targets = check::targets(&db, file);
        Subject {
            generated,
            db,
            file,
            lines,
            targets,
        }
    }

    /// A run of this program that has found nothing yet.
    fn run(&self, technique: Technique) -> ProgramRun {
        ProgramRun {
            set: self.generated.set,
            index: self.generated.index,
            technique,
            coverage: 0,
            time: Duration::ZERO,
            timed_out: false,
            error: None,
            proved_safe: false,
            note: None,
            refuted: vec![],
        }
    }

    /// A run that could not be made.
    fn failed(&self, technique: Technique, why: String) -> ProgramRun {
        ProgramRun {
            timed_out: true,
            note: Some(why),
            ..self.run(technique)
        }
    }

    /// Replays a witness with the interpreter, as `apc run` does.
    fn replayed(&self, t: &Target, w: &Witness) -> ErrorFound {
        let program = &db::parse(&self.db, self.file).program;
        let (text, at) = (&self.generated.source, (t.line, t.col));
        ErrorFound {
            target: t.clone(),
            witness: w.clone(),
            replay: interp::replay_hits(program, text, &self.lines, w, t.kind, at),
        }
    }
}

/// One program under each technique, then the random runs (and the
/// errors the others found) that attack what each technique proved.
fn run_program(
    p: &Generated,
    opts: &ThesisOptions,
    cores: &RwLock<()>,
    done: &(dyn Fn(&ProgramRun) + Sync),
) -> Vec<ProgramRun> {
    let subject = {
        let _turn = Turn::take(cores, false);
        Subject::load(p)
    };
    let mut runs: Vec<(ProgramRun, Vec<Target>)> = (opts.techniques.iter())
        .map(|t| {
            // Taken before the run's clock starts: the wait is not its time.
            let _turn = Turn::take(cores, t.uses_every_core());
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                analyse(&subject, *t, opts)
            }))
            .unwrap_or_else(|e| {
                let msg = interp::panic_message(e.as_ref());
                (subject.failed(*t, format!("internal error: {msg}")), vec![])
            });
            done(&run.0);
            run
        })
        .collect();
    // What a random run hits, or another technique's replayed error hits,
    // is reachable.
    let mut hit = {
        let _turn = Turn::take(cores, false);
        random_hits(&subject, opts.random_runs)
    };
    for (run, _) in &runs {
        if let Some(e) = run.error.as_ref().filter(|e| e.replay.is_ok()) {
            hit.push(e.target.clone());
        }
    }
    for (run, unreachable) in &mut runs {
        run.refuted = (unreachable.iter())
            .filter(|t| hit.contains(t))
            .cloned()
            .collect();
    }
    runs.into_iter().map(|(r, _)| r).collect()
}

/// A worker's share of the machine, held while it works: all of it, or a
/// job's. Everything a worker does takes one, so that a run alone is.
struct Turn<'a> {
    _alone: Option<RwLockWriteGuard<'a, ()>>,
    _shared: Option<RwLockReadGuard<'a, ()>>,
}

impl<'a> Turn<'a> {
    fn take(cores: &'a RwLock<()>, alone: bool) -> Turn<'a> {
        Turn {
            _alone: alone.then(|| cores.write().unwrap_or_else(|e| e.into_inner())),
            _shared: (!alone).then(|| cores.read().unwrap_or_else(|e| e.into_inner())),
        }
    }
}

/// The run and the targets it claims unreachable.
fn analyse(s: &Subject, technique: Technique, opts: &ThesisOptions) -> (ProgramRun, Vec<Target>) {
    if technique.per_target() {
        check_program(s, technique, opts)
    } else {
        explore_program(s, technique, opts)
    }
}

fn explore_options(technique: Technique, opts: &ThesisOptions) -> explore::Options {
    let mut o = explore::Options::new(opts.solver.clone());
    o.strategy = Strategy::Tree;
    o.seed = opts.seed;
    o.timeout = Some(opts.timeout);
    // The thesis's columns run its techniques only; ours may go beyond.
    o.invariants_from_true = technique.published_column().is_none();
    if technique.published_column().is_none() {
        o.second_opinion = second_opinion(&opts.solver);
    }
    match technique {
        Technique::Merging => {
            o.merging = Merging::Lattice;
            o.limit_cost = 1.0;
        }
        Technique::Subsumption => o.subsumption = Some(AtChecks::Block),
        Technique::Summarisation => o.summarization = true,
        Technique::Combined => {
            o.subsumption = Some(AtChecks::Conjoin);
            o.summarization = true;
        }
        _ => {}
    }
    o
}

/// The other solver than `first`, if it can be found: asked when `first`
/// leaves a check `unknown` (our columns only).
fn second_opinion(first: &Profile) -> Option<Profile> {
    let other = (crate::smt::SolverKind::ALL.into_iter()).find(|k| k.name() != first.name)?;
    crate::smt::locate(other, None).ok()
}

fn explore_program(
    s: &Subject,
    technique: Technique,
    opts: &ThesisOptions,
) -> (ProgramRun, Vec<Target>) {
    let started = Instant::now();
    let report = match explore::explore(&s.db, s.file, &explore_options(technique, opts)) {
        Ok(r) => r,
        Err(e) => return (s.failed(technique, e), vec![]),
    };
    let error = (report.errors.first()).map(|e| s.replayed(&e.target, &e.witness));
    let note = match &report.end {
        End::Incomplete(why) => Some(why.clone()),
        _ => None,
    };
    let run = ProgramRun {
        coverage: report.stats.paths,
        time: started.elapsed(),
        timed_out: note.is_some(),
        proved_safe: report.end == End::Complete && error.is_none(),
        error,
        note,
        ..s.run(technique)
    };
    // Every path explored without an error: every target is unreachable.
    let claimed = if run.proved_safe {
        s.targets.clone()
    } else {
        vec![]
    };
    (run, claimed)
}

/// The targets one after the other, each with an equal share of the time
/// left; stops at the first reachable one, as the executor stops at its
/// first error. `check` first takes the targets the value facts prove
/// (no solver, one pass for all), then the whole program's phases
/// (`whole_program_first`, docs/generator.md §4).
fn check_program(
    s: &Subject,
    technique: Technique,
    opts: &ThesisOptions,
) -> (ProgramRun, Vec<Target>) {
    let started = Instant::now();
    let deadline = started + opts.timeout;
    let mut co = CheckOptions::new(vec![opts.solver.clone()], opts.timeout);
    co.engine = match technique {
        Technique::Guided => "explore",
        _ => check::PORTFOLIO,
    };
    let (mut unreachable, rest) = match technique {
        Technique::Check => by_value_facts(s),
        _ => (Vec::new(), s.targets.clone()),
    };
    let outcome = match technique {
        Technique::Check if !rest.is_empty() => whole_program_first(s, &rest, &co, opts, started),
        _ => None,
    };
    let (error, note) = match outcome {
        Some((error, proved)) => {
            unreachable.extend(proved);
            (error, None)
        }
        None => one_by_one(s, &rest, &mut co, deadline, &mut unreachable),
    };
    let proved_safe = unreachable.len() == s.targets.len();
    let run = ProgramRun {
        time: started.elapsed(),
        timed_out: error.is_none() && !proved_safe,
        error,
        proved_safe,
        note,
        ..s.run(technique)
    };
    (run, unreachable)
}

/// The share of a program's time `check` gives the whole-program race
/// before the targets one by one: a proof of every target at once is what
/// most undecided programs need, and the targets left get equal shares of
/// the rest (measured on 90 programs at 5 s: one more program decided
/// than with half, and the same errors; docs/generator.md §5).
const WHOLE_PROGRAM_SHARE: f64 = 0.7;

/// `check` over the whole program, for [`WHOLE_PROGRAM_SHARE`] of the time: one Horn
/// invariant for every target, the executor over the whole program and one
/// condition for every target race (`check::together`); `None` when they
/// leave the targets undecided.
fn whole_program_first(
    s: &Subject,
    targets: &[Target],
    co: &CheckOptions,
    opts: &ThesisOptions,
    started: Instant,
) -> Option<(Option<ErrorFound>, Vec<Target>)> {
    let until = started + opts.timeout.mul_f64(WHOLE_PROGRAM_SHARE);
    let stop = crate::deadline::Stop::until(until);
    let d = check::together::decide(&s.db, s.file, targets, co, &stop).ok()?;
    match (d.verdict, d.reached) {
        (Verdict::Unreachable, _) => Some((None, targets.to_vec())),
        (Verdict::Reachable(w), Some(t)) => Some((Some(s.replayed(&t, &w)), vec![])),
        _ => None,
    }
}

/// The targets the value facts prove, and the others.
fn by_value_facts(s: &Subject) -> (Vec<Target>, Vec<Target>) {
    (s.targets.iter().cloned()).partition(|t| db::proved_by_value_facts(&s.db, s.file, t).is_some())
}

/// Each target with an equal share of the time left, until the first
/// error; the proved ones go into `unreachable`. The error, and the first
/// reason a target was left undecided.
fn one_by_one(
    s: &Subject,
    targets: &[Target],
    co: &mut CheckOptions,
    deadline: Instant,
    unreachable: &mut Vec<Target>,
) -> (Option<ErrorFound>, Option<String>) {
    let mut note = None;
    for (i, t) in targets.iter().enumerate() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (None, Some("timeout".to_string()));
        }
        co.timeout = left / (targets.len() - i) as u32;
        match check::check_target(&s.db, s.file, t, co).verdict {
            Verdict::Unreachable => unreachable.push(t.clone()),
            Verdict::Reachable(w) => return (Some(s.replayed(t, &w)), note),
            Verdict::Unknown(why) => {
                note.get_or_insert(format!("{}:{}: {why}", t.line, t.col));
            }
        }
    }
    (None, note)
}

/// Steps one random run may take.
const RANDOM_RUN_STEPS: u64 = 100_000;
/// Values in one random input stream (reads past its end give 0).
const RANDOM_STREAM: usize = 64;

/// The targets that `runs` random concrete runs hit. The inputs are
/// small numbers mostly (the generated guards compare with 0..=10).
fn random_hits(s: &Subject, runs: u32) -> Vec<Target> {
    let program = &db::parse(&s.db, s.file).program;
    let text = &s.generated.source;
    // One replayer: the program compiled once for all the runs.
    let replay = crate::witness::Replayer::new(program, text, &s.targets);
    let mut rng = ChaCha8Rng::seed_from_u64(crate::fuzz::seed(text));
    let limits = Limits {
        max_steps: RANDOM_RUN_STEPS,
        ..Limits::default()
    };
    let mut hit: Vec<Target> = Vec::new();
    for _ in 0..runs {
        let w = Witness {
            args: vec![],
            input: (0..RANDOM_STREAM).map(|_| random_input(&mut rng)).collect(),
        };
        if let Ok(t) = replay.run_within(&w, limits)
            && !hit.contains(t)
        {
            hit.push(t.clone());
        }
    }
    hit
}

fn random_input(rng: &mut ChaCha8Rng) -> BigInt {
    let r = rng.next_u64();
    // One in four from -100..=100, the others from -2..=11.
    let (span, low) = if r.is_multiple_of(4) {
        (201, -100)
    } else {
        (14, -2)
    };
    BigInt::from(((r >> 8) % span) as i64 + low)
}

/// A set's figures under one technique (the thesis's row).
#[derive(Clone, Debug)]
pub struct SetRow {
    pub set: &'static str,
    pub technique: Technique,
    pub programs: u32,
    pub coverage: u64,
    pub time: Duration,
    pub timeouts: u32,
    pub errors: u32,
    pub proved_safe: u32,
    pub replay_failures: u32,
    pub soundness_failures: u32,
}

/// The runs summed per set and technique, in the runs' order.
pub fn rows(runs: &[ProgramRun]) -> Vec<SetRow> {
    let mut out: Vec<SetRow> = Vec::new();
    for r in runs {
        let i = match out
            .iter()
            .position(|x| x.set == r.set && x.technique == r.technique)
        {
            Some(i) => i,
            None => {
                out.push(SetRow {
                    set: r.set,
                    technique: r.technique,
                    programs: 0,
                    coverage: 0,
                    time: Duration::ZERO,
                    timeouts: 0,
                    errors: 0,
                    proved_safe: 0,
                    replay_failures: 0,
                    soundness_failures: 0,
                });
                out.len() - 1
            }
        };
        let row = &mut out[i];
        row.programs += 1;
        row.coverage += r.coverage;
        row.time += r.time;
        row.timeouts += r.timed_out as u32;
        row.errors += r.error.as_ref().is_some_and(|e| e.replay.is_ok()) as u32;
        row.replay_failures += r.error.as_ref().is_some_and(|e| e.replay.is_err()) as u32;
        row.proved_safe += r.proved_safe as u32;
        row.soundness_failures += r.refuted.len() as u32;
    }
    out
}
