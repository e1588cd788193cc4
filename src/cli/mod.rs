//! The command line: clap-derived commands, output formats, exit codes.
//!
//! Thin by design: it loads the file into the database, asks queries and
//! prints. No analysis logic lives here.

/// `println!` through `output`: quiet when stdout is closed (`apc … |
/// head`), an error at the end of the command if it cannot be written.
macro_rules! outln {
    () => {
        $crate::cli::output::write(format_args!("\n"))
    };
    ($($t:tt)*) => {{
        $crate::cli::output::write(format_args!($($t)*));
        $crate::cli::output::write(format_args!("\n"));
    }};
}

/// `print!` through `output`.
macro_rules! out {
    ($($t:tt)*) => {
        $crate::cli::output::write(format_args!($($t)*))
    };
}

mod bench;
mod bench_engines;
mod bench_thesis;
mod cfg;
mod check;
mod compact;
mod compositional;
mod exit;
mod explain;
mod explore;
mod generate;
mod input_flags;
mod limits;
mod lsp;
mod nc;
mod output;
mod places;
mod run;
mod sarif;
mod tree_output;

use crate::db::{self, Database, SourceFile};
use crate::syntax::diagnostic::render;
use crate::syntax::{LineIndex, Span};
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

pub use exit::ExitStatus;
pub use input_flags::{parse_args, parse_input};

#[derive(Parser, Debug)]
#[command(
    name = "apc",
    version,
    about = "Necessary conditions for reaching targets in microc programs",
    long_about = "apc analyses programs in microc, a small C-like language. For a target (an assert, a \
division, a dereference, an array index or a variable read that can fail) it computes a necessary \
condition on the program's inputs to reach it, following Strejček and Trtík's Abstracting Path \
Conditions.\n\nErrors go to stderr; machine-readable output only where asked (--format json). Exit \
status 2 means the input or the command line is bad."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a program concretely on a witness (main's arguments and an input stream).
    ///
    /// Prints each `output` value on its own line, then `return N`; or the runtime error
    /// with its kind and location. Exit status: 0 the run ended (returned, or an assume
    /// failed), 1 a runtime error, 2 bad input, 4 a step or call-depth limit was hit.
    Run(run::RunArgs),
    /// Print the control-flow graph of each function: edges, targets, loops and backbones.
    ///
    /// The text form lists every edge with its instruction and source location, every
    /// target with its error vertex, every loop (per `while`, with its nesting) with the
    /// backbones of its body, and the backbones from entry to exit. `--dot` writes
    /// Graphviz instead (render with `dot -Tpng`).
    Cfg(cfg::CfgArgs),
    /// Print the necessary condition φ̂ of a target, and its quantifier-free weakening φ̂^K.
    ///
    /// φ̂ is a formula over main's inputs (symbols written `n₀`, `A₀(…)`, the input
    /// stream `$in₀`) and path counters κ (how often each kind of loop iteration runs),
    /// which every run reaching the target satisfies: if it is unsatisfiable the target is
    /// unreachable. The summary of every loop is shown first: the iterated state θ
    /// (⋆ = unknown) and the looping condition φ^κ. Shared subterms are named `sN`.
    Nc(nc::NcArgs),
    /// Decide each target: unreachable (proved), reachable (with a witness the
    /// interpreter replays) or unknown (with a reason).
    ///
    /// For each target the necessary condition φ̂ goes to the solver(s) as SMT-LIB: the
    /// quantified φ̂ and its unfolding φ̂^K race, and the first definite answer wins.
    /// UNSAT proves the target unreachable. A model becomes main's arguments and the
    /// input stream, which the interpreter replays; only a replay that hits the target
    /// makes it `reachable` (otherwise further models are asked, with the previous
    /// inputs blocked). One line per target (or JSON with --format json). Exit status:
    /// 0 all unreachable, 1 some reachable, 3 none reachable but some unknown, 2 bad
    /// input or command line (e.g. a solver not installed).
    Check(check::CheckArgs),
    /// Explore the program's paths with the thesis's symbolic executor.
    ///
    /// Runs `main` on symbolic inputs, one path at a time from a worklist (the search
    /// strategy picks), pruning infeasible branches with one warm solver session and
    /// optionally merging states that meet. Every check (assert, division, index,
    /// dereference, uninitialised read) is asked of the solver; an error is reported
    /// only with a witness the interpreter replays to it. Stops at the first error
    /// (unless --all-errors). Exit status: 1 an error was found, 0 every path was
    /// explored without one, 3 stopped at a limit (or some path was not decided) with
    /// none found, 2 bad input or command line.
    Explore(explore::ExploreArgs),
    /// Compact symbolic execution (Trtík): loops and recursion as templates.
    ///
    /// Derives a template for each cycle of the program (by executing the cycle once,
    /// never by matching loop syntax) and builds Algorithm 1's compact tree breadth
    /// first from the starting function, a fresh parameter per instantiation, each
    /// branch kept only if the solver finds its (quantified) path condition
    /// satisfiable; a solver `unknown` keeps the branch and says so. Prints the tree
    /// (text, --format json, or --tree dot). Exit status: 0 the tree is complete with
    /// every branch decided, 3 a limit stopped it, a path could not go on, or a branch
    /// was kept on a solver `unknown`, 2 bad input or command line.
    Compact(compact::CompactArgs),
    /// Run compositional symbolic execution and show its per-function summaries.
    ///
    /// Each function is explored once, whatever the number of callers: its leaves are
    /// unknown, finished (returned), unreachable (for now) or failed (at a target); a
    /// call is one step through the callee's return condition and values, interpreted
    /// from its finished leaves at every check (docs/compositional-se.md). A target is
    /// reachable when a leaf at it passes its check (the model, replayed by the
    /// interpreter, is the witness); unreachable only when the run terminates with no
    /// unknown leaf. Exit status: 1 a target was reached, 0 terminated with none, 3
    /// stopped at a limit (or outside the engine: integers only, no recursion), 2 bad
    /// input or command line.
    Compositional(compositional::CompositionalArgs),
    /// Generate random microc programs with the thesis's generator.
    ///
    /// Seeded and deterministic: the same seed, index and parameters give the same
    /// program on every machine. Only `main`; every variable is assigned before it is
    /// read; array indices are literals below the first length the array had. Loops
    /// come with their own probabilities, every other statement and expression form is
    /// drawn uniformly. `--set` starts from one of the thesis's 18 sets (Table 6.16).
    /// One program goes to stdout; `--count N --out DIR` writes a set.
    Gen(generate::GenArgs),
    /// Measure apc on the papers' benchmarks (not part of the test suite).
    Bench(bench::BenchArgs),
    /// Serve editors as a language server (LSP 3.17 over stdin and stdout).
    ///
    /// On every change of an open `.mc` document it publishes the parser's and the
    /// type checker's diagnostics at once, then checks every target as `apc check`
    /// does, on a thread the next change cancels: a reachable target becomes an error
    /// with its witness and its trace, an unknown one a warning with its reason
    /// (`--show-proofs`: an unreachable one a hint with its proof). Hover on a target
    /// shows its verdict and explanation; code actions replay a witness, show a
    /// target's necessary condition or dump its queries; `$/progress` follows a check.
    ///
    /// Verdicts are remembered by what they depend on (the functions a run may execute
    /// before the target): an edit checks again only the targets it can change, first
    /// by replaying their earlier witnesses; proofs that hold for any call of a
    /// function, made while the editor is idle, outlive edits of its callers. Setup for
    /// Neovim, VS Code, Helix and Emacs: docs/editors.md.
    Lsp(lsp::LspArgs),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// Entry point of the binary: runs on a thread with a large stack, since
/// the analyses recurse over (bounded-height) expression trees.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return command_line_error(e),
    };
    let worker = crate::deadline::analysis_thread().spawn(move || match cli.command {
        Command::Run(a) => run::run(a),
        Command::Cfg(a) => cfg::cfg(a),
        Command::Nc(a) => nc::nc(a),
        Command::Check(a) => check::check(a),
        Command::Explore(a) => explore::explore(a),
        Command::Compact(a) => compact::compact(a),
        Command::Compositional(a) => compositional::compositional(a),
        Command::Gen(a) => generate::generate(a),
        Command::Bench(a) => bench::bench(a),
        Command::Lsp(a) => lsp::lsp(a),
    });
    let code = match worker.map(|h| h.join()) {
        Ok(Ok(code)) => code,
        _ => {
            eprintln!("apc: internal error (please report it with the input that caused it)");
            return ExitStatus::Internal.into();
        }
    };
    let finished = output::finish();
    crate::smt::Helper::stop_spare();
    match finished {
        Ok(()) => code,
        Err(e) => bad(&format!("cannot write the output: {e}")),
    }
}

/// clap's verdict on the command line: `--help` and `--version` print as
/// clap prints them; an error is one line on stderr and exit status 2.
fn command_line_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            ExitStatus::BadInput.into()
        } else {
            ExitStatus::Ok.into()
        };
    }
    // The message up to the first blank line (a list of missing
    // arguments continues on the lines after a colon), as one line.
    let text = e.to_string();
    let lines: Vec<&str> = (text.lines())
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let joined = if lines.is_empty() {
        "bad command line".to_string()
    } else {
        lines.join(" ")
    };
    let first = joined.strip_prefix("error: ").unwrap_or(&joined);
    bad(&format!("{first} (see --help)"))
}

/// A bad command line or input: one line on stderr, exit status 2.
fn bad(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitStatus::BadInput.into()
}

/// A progress bar on an interactive stderr (hidden otherwise: never in the
/// output), for `steps` steps, drawn by an indicatif template.
fn progress(steps: usize, template: &str) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::new(steps as u64);
    b.set_style(
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    b
}

/// Milliseconds rounded to `decimals` places (for JSON).
fn rounded_ms(d: std::time::Duration, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (d.as_secs_f64() * 1e3 * scale).round() / scale
}

/// Makes `dir` (and its parents) and checks that a file can be written in
/// it, so that `--dump-queries` fails at once rather than after the work.
fn writable_dir(dir: &std::path::Path) -> Result<(), String> {
    let shown = dir.display();
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {shown}: {e}"))?;
    let probe = dir.join(format!(".apc-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| format!("cannot write files in {shown}: {e}"))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// The text of a source file, at most `MAX_SOURCE_BYTES` of UTF-8.
fn read_source(path: &PathBuf, shown: &str) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let mut bytes = Vec::new();
    // One byte past the limit tells a file at the limit from a larger one
    // (and a device such as /dev/zero is never read to its end).
    file.take(limits::MAX_SOURCE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > limits::MAX_SOURCE_BYTES {
        return Err(format!(
            "{shown} is larger than {} MiB, the most apc reads; is it a microc program?",
            limits::MAX_SOURCE_BYTES >> 20
        ));
    }
    String::from_utf8(bytes)
        .map_err(|_| format!("{shown} is not UTF-8 text; microc sources are plain text"))
}

/// A file loaded into the database and checked by the front end.
pub struct Loaded {
    pub db: Database,
    pub file: SourceFile,
    pub path: String,
    pub text: String,
    pub lines: LineIndex,
}

impl Loaded {
    /// "line:col" of an absolute span's start.
    pub fn loc(&self, span: Span) -> (u32, u32) {
        self.lines.line_col(&self.text, span.start)
    }
}

/// Reads and checks a file; prints diagnostics (warnings too) to stderr.
/// On any error returns the exit code to use.
pub fn load(path: &PathBuf) -> Result<Loaded, ExitCode> {
    load_quietly(path).map_err(|e| bad(&e))
}

/// [`load`] with the error as a message (the diagnostics still go to
/// stderr): for batches, where one bad file does not stop the others.
pub fn load_quietly(path: &PathBuf) -> Result<Loaded, String> {
    let shown = path.display().to_string();
    let text = read_source(path, &shown)?;
    let (db, file) = Database::with_file(&shown, &text);
    let diags = db::diagnostics(&db, file);
    if !diags.is_empty() {
        eprint!("{}", render(&shown, &text, &diags));
    }
    let errors = diags.iter().filter(|d| d.is_error()).count();
    if errors > 0 {
        return Err(format!(
            "{shown} was rejected ({errors} error{})",
            if errors == 1 { "" } else { "s" }
        ));
    }
    let lines = LineIndex::new(&text);
    Ok(Loaded {
        db,
        file,
        path: shown,
        text,
        lines,
    })
}
