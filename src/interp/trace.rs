//! A run's trace, as CBMC prints its counterexamples (docs/explanations.md,
//! "Traces"): the branches the run took, with the values of the variables
//! each condition read, and the statement where it failed. Loops are
//! folded into iteration counts: a loop's branches are summed up per
//! place. The reference interpreter records it (`run_traced`); nothing in
//! it comes from a solver's model.

use super::exec::Interp;
use super::{Limits, Outcome, RunError, RunResult, Witness};
use crate::syntax::ast::Program;
use crate::syntax::{LineIndex, Span};

/// What a traced statement did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    If,
    While,
    /// The run failed here.
    Failed,
}

/// One branch of a run, or its failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub kind: EventKind,
    /// The statement (absolute in the file).
    pub statement: Span,
    /// Its condition; for a failure, the place of the failure (absolute).
    pub condition: Span,
    /// How many calls deep the run was (main is 1).
    pub depth: u32,
    /// Whether the condition held.
    pub taken: bool,
    /// The variables the condition (or the failed statement) read, and
    /// their values then, by name.
    pub values: Vec<(String, String)>,
}

/// The most branches a trace keeps; a longer run's trace says it was cut
/// (its failure is kept in any case).
pub const MAX_EVENTS: usize = 200_000;

/// Records a traced run's events.
#[derive(Debug, Default)]
pub struct Recorder {
    events: Vec<Event>,
    failure: Option<Event>,
    cut: bool,
}

impl Recorder {
    pub(crate) fn push(&mut self, e: Event) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(e);
        } else {
            self.cut = true;
        }
    }

    pub(crate) fn failed(&mut self, e: Event) {
        self.failure = Some(e);
    }

    pub(crate) fn has_failure(&self) -> bool {
        self.failure.is_some()
    }
}

/// A traced run: its branches in order, where it failed, and whether the
/// branches were cut at [`MAX_EVENTS`].
#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub events: Vec<Event>,
    pub failure: Option<Event>,
    pub cut: bool,
}

/// Runs `witness` on the reference interpreter, recording its trace.
pub fn run_traced(
    program: &Program,
    witness: &Witness,
    limits: Limits,
) -> Result<(RunResult, Trace), RunError> {
    let Some(main) = program.functions.iter().position(|f| f.name.name == "main") else {
        return Err(RunError::Internal("the program has no `main`".into()));
    };
    let stack = super::STACK_SIZE;
    std::thread::scope(|scope| {
        let run = move || {
            let f = &program.functions[main];
            let args = super::main_args::main_args(program, f, &witness.args, None)?;
            let mut interp = Interp::new(program, main, &witness.input, limits, stack);
            interp.trace = Some(Recorder::default());
            let outcome = match interp.run_main(args) {
                Ok(n) => Outcome::Returned(n),
                Err(super::exec::Stop::Outcome(o)) => o,
                Err(super::exec::Stop::Error(e)) => return Err(e),
            };
            let r = interp.trace.take().unwrap_or_default();
            let result = RunResult {
                outputs: std::mem::take(&mut interp.outputs),
                outcome,
                input_exhausted: interp.input_reads > witness.input.len(),
                steps: interp.steps,
            };
            let trace = Trace {
                events: r.events,
                failure: r.failure,
                cut: r.cut,
            };
            Ok((result, trace))
        };
        std::thread::Builder::new()
            .name("apc-trace".into())
            .stack_size(stack)
            .spawn_scoped(scope, run)
            .map_err(|e| RunError::Internal(format!("cannot start the interpreter thread: {e}")))?
            .join()
            .unwrap_or_else(|_| Err(RunError::Internal("the interpreter panicked".into())))
    })
}

/// One line of a folded trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// Where (1-based), and how deep in calls (main is 0).
    pub line: u32,
    pub col: u32,
    pub depth: u32,
    /// The statement's head: `if (x < n)`, `while (i < n)`, `assert(…)`.
    pub code: String,
    /// What happened: `true`, `false`, `3 iterations, then left`,
    /// `true 2×, false 1×`, `fails`.
    pub what: String,
    /// The values read, at the last time.
    pub values: Vec<(String, String)>,
}

impl Step {
    /// `while (y < n): 5 iterations, then left  [n = 5, y = 5]`: the step
    /// as every report of a trace writes it (`--trace`, SARIF, the editor).
    pub fn text(&self) -> String {
        format!("{}: {}{}", self.code, self.what, self.values_text())
    }

    /// `  [i = 3, n = 5]`, or nothing.
    pub fn values_text(&self) -> String {
        if self.values.is_empty() {
            return String::new();
        }
        let parts: Vec<String> = (self.values.iter())
            .map(|(n, v)| format!("{n} = {v}"))
            .collect();
        format!("  [{}]", parts.join(", "))
    }
}

impl Trace {
    /// The trace folded: each loop one step with its iteration count, and
    /// the branches inside it summed up per place; then the failure.
    pub fn steps(&self, text: &str) -> Vec<Step> {
        let lines = LineIndex::new(text);
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.events.len() {
            let e = &self.events[i];
            let base = self.events[0].depth.min(e.depth);
            if e.kind == EventKind::While && e.taken {
                let end = self.loop_end(i);
                out.push(self.folded_loop(i, end, text, &lines, base));
                i = end;
            } else {
                out.push(step(e, text, &lines, base, plain(e.taken)));
                i += 1;
            }
        }
        if let Some(f) = &self.failure {
            let base = self
                .events
                .first()
                .map_or(f.depth, |e| e.depth.min(f.depth));
            out.push(step(f, text, &lines, base, "fails".into()));
        }
        out
    }

    /// The index after the loop whose first test is event `start`: after
    /// its failed test at the same depth, or the end.
    fn loop_end(&self, start: usize) -> usize {
        let head = &self.events[start];
        (self.events.iter().enumerate().skip(start + 1))
            .find(|(_, e)| e.depth == head.depth && e.statement == head.statement && !e.taken)
            .map_or(self.events.len(), |(k, _)| k + 1)
    }

    /// The loop of events `start..end` as one step, and the branches in
    /// it summed up per place (in the order first reached).
    fn folded_loop(
        &self,
        start: usize,
        end: usize,
        text: &str,
        lines: &LineIndex,
        base: u32,
    ) -> Step {
        let head = &self.events[start];
        let body = &self.events[start..end];
        let iterations = (body.iter())
            .filter(|e| e.statement == head.statement && e.depth == head.depth && e.taken)
            .count();
        let left = body
            .last()
            .is_some_and(|e| e.statement == head.statement && !e.taken);
        let mut what = plural(iterations, "iteration");
        what += if left {
            ", then left"
        } else {
            ", the last unfinished"
        };
        // Per place inside: its first event, how often true, how often false.
        let mut places: Vec<(&Event, usize, usize)> = Vec::new();
        for e in body
            .iter()
            .filter(|e| e.statement != head.statement || e.depth != head.depth)
        {
            match (places.iter_mut()).find(|p| p.0.statement == e.statement && p.0.depth == e.depth)
            {
                Some(p) if e.taken => p.1 += 1,
                Some(p) => p.2 += 1,
                None => places.push((e, e.taken as usize, !e.taken as usize)),
            }
        }
        let inner: Vec<String> = (places.iter())
            .map(|(e, yes, no)| {
                let (line, col) = lines.line_col(text, e.statement.start);
                let word = if e.kind == EventKind::While {
                    "while"
                } else {
                    "if"
                };
                format!("{word} at {line}:{col} true {yes}×, false {no}×")
            })
            .collect();
        if !inner.is_empty() {
            what += &format!(" (inside: {})", inner.join("; "));
        }
        let last = body.last().unwrap_or(head);
        Step {
            values: last.values.clone(),
            ..step(head, text, lines, base, what)
        }
    }
}

fn plain(taken: bool) -> String {
    if taken { "true" } else { "false" }.into()
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// The step of one event.
fn step(e: &Event, text: &str, lines: &LineIndex, base: u32, what: String) -> Step {
    let place = match e.kind {
        EventKind::Failed => e.condition,
        _ => e.statement,
    };
    let (line, col) = lines.line_col(text, place.start);
    Step {
        line,
        col,
        depth: e.depth.saturating_sub(base),
        code: head(e, text),
        what,
        values: e.values.clone(),
    }
}

/// `if (cond)`, `while (cond)`, or the failed statement's first line.
fn head(e: &Event, text: &str) -> String {
    let slice = |s: Span| text.get(s.start as usize..s.end as usize).unwrap_or("");
    let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    match e.kind {
        EventKind::If => format!("if ({})", one_line(slice(e.condition))),
        EventKind::While => format!("while ({})", one_line(slice(e.condition))),
        EventKind::Failed => {
            let s = one_line(slice(e.statement));
            let s = s.strip_suffix(';').unwrap_or(&s).to_string();
            if s.chars().count() > 60 {
                format!("{}…", s.chars().take(59).collect::<String>())
            } else {
                s
            }
        }
    }
}
