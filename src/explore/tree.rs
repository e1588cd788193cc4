//! The symbolic execution tree of a run, drawn as it happens (`apc explore
//! --tree`; docs/explanations.md §4): a node per stretch of a path between
//! forks, edges labelled with the branch conditions, merged states as
//! joins, subsumed, infeasible and dropped states as marked leaves, a
//! loop left by its summary as bold edges, and each error leaf with its
//! witness.
//!
//! The run loop (`run`) tells the [`Drawing`] what became of each state;
//! the step itself (`exec`, `summary`) writes a [`StepNote`] on the
//! machine, only while a drawing is asked for. Every leaf and join here
//! is counted by the run's statistics too, and a test checks that the
//! two agree.

use super::exec::{Next, PathEnd};
use super::machine::Machine;
use super::state::State;
use crate::engine::picture::{Mark, Picture, Way};
use crate::ir::{EdgeId, Instr, Place, VarKind};

/// What one step did that the tree shows.
#[derive(Default, Debug)]
pub(crate) struct StepNote {
    /// Where the step forked (`line 7`).
    pub at: String,
    /// The label of each state the step made, in the order of [`Next`].
    pub taken: Vec<String>,
    /// The branches the solver found infeasible, by their conditions.
    pub pruned: Vec<String>,
    /// The error leaves the step found, each with its branch's condition.
    pub errors: Vec<(String, Mark)>,
    /// The step left a loop by its summary.
    pub summary: bool,
}

impl StepNote {
    fn outcomes(&self, states: usize) -> usize {
        states + self.pruned.len() + self.errors.len()
    }
}

/// The picture of a run in progress.
pub(crate) struct Drawing {
    pub picture: Picture,
}

impl Drawing {
    pub(crate) fn new(limit: usize) -> Drawing {
        Drawing {
            picture: Picture::new("symbolic execution tree", limit),
        }
    }

    /// A step from the stretch at `node` made `next`, as `note` says: a
    /// fork (new stretches, leaves for the pruned branches and errors),
    /// a path's end, or nothing to draw (the stretch goes on).
    pub(crate) fn step(&mut self, node: usize, note: StepNote, next: &mut Next) {
        let mut states: Vec<&mut State> = match next {
            Next::Continue(s) | Next::Park(s) => vec![s],
            Next::Split(first, rest) => std::iter::once(first).chain(rest.iter_mut()).collect(),
            Next::End(_) => Vec::new(),
        };
        if note.outcomes(states.len()) >= 2 || note.summary {
            self.fork(node, &note, &mut states);
        } else {
            self.errors(node, &note);
        }
        if let Next::End(end) = next {
            self.end(node, end);
        }
    }

    fn fork(&mut self, node: usize, note: &StepNote, states: &mut [&mut State]) {
        self.picture.fork_at(node, note.at.clone());
        let way = if note.summary {
            Way::Summary
        } else {
            Way::Branch
        };
        for (i, s) in states.iter_mut().enumerate() {
            let label = note.taken.get(i).cloned().unwrap_or_default();
            if let Some(c) = self.picture.child(node, Mark::Stretch, label, way) {
                s.shown = c;
            }
        }
        for p in &note.pruned {
            self.picture.child(node, Mark::Infeasible, p.clone(), way);
        }
        self.errors(node, note);
    }

    fn errors(&mut self, node: usize, note: &StepNote) {
        for (label, mark) in &note.errors {
            self.picture
                .child(node, mark.clone(), label.clone(), Way::Branch);
        }
    }

    /// How a path ended (its errors are drawn with the step's note).
    fn end(&mut self, node: usize, end: &PathEnd) {
        let mark = match end {
            PathEnd::Finished(0) => Mark::Endless,
            PathEnd::Finished(paths) => Mark::Exit { paths: *paths },
            PathEnd::Error => return,
            PathEnd::Undecided(why) => Mark::Undecided(why.clone()),
        };
        self.leaf(node, mark);
    }

    pub(crate) fn leaf(&mut self, node: usize, mark: Mark) {
        self.picture.child(node, mark, String::new(), Way::Branch);
    }

    /// Two states became `merged`.
    pub(crate) fn join(&mut self, a: &State, b: &State, merged: &mut State) {
        if let Some(j) = self.picture.join(a.shown, b.shown) {
            merged.shown = j;
        }
    }

    /// The states still waiting when the run stopped, and why it stopped.
    pub(crate) fn not_run<'s>(&mut self, waiting: impl Iterator<Item = &'s State>, why: &str) {
        let mut nodes: Vec<usize> = waiting.map(|s| s.shown).collect();
        nodes.sort_unstable();
        for n in nodes {
            self.leaf(n, Mark::NotRun(why.to_string()));
        }
    }
}

/// The notes the step writes (only when the tree is drawn).
impl Machine<'_> {
    /// A branch edge's condition as the program states it, and its line.
    fn branch_text(&self, func: usize, e: EdgeId) -> (String, u32) {
        let prog = self.program();
        let body = &prog.bodies[func];
        let edge = &body.edges[e as usize];
        let text = match &edge.instr {
            Instr::Assume(c) | Instr::Assert(c, _) => crate::ir::condition_text(body, c),
            _ => String::new(),
        };
        (
            self.without_temporaries(func, text),
            prog.line_col(func, edge.span).0,
        )
    }

    /// `$t0 != 0` as `input != 0`: each temporary of the lowering replaced
    /// by the source text of the expression it holds.
    fn without_temporaries(&self, func: usize, mut text: String) -> String {
        if !text.contains('$') {
            return text;
        }
        let prog = self.program();
        let body = &prog.bodies[func];
        let offset = prog.offsets.get(func).copied().unwrap_or(0) as usize;
        let mut temps: Vec<(&str, &str)> = (body.edges.iter())
            .filter_map(|e| match &e.instr {
                Instr::Assign(Place::Var(v), _) if body.var(*v).kind == VarKind::Temp => {
                    let (from, to) = (offset + e.span.start as usize, offset + e.span.end as usize);
                    Some((body.var(*v).name.as_str(), prog.source.get(from..to)?))
                }
                _ => None,
            })
            .collect();
        // `$t12` before `$t1`.
        temps.sort_by_key(|(name, _)| std::cmp::Reverse(name.len()));
        for (name, source) in temps {
            text = text.replace(name, source);
        }
        text
    }

    /// The branches a step goes on by.
    pub(crate) fn note_taken(&mut self, func: usize, edges: impl Iterator<Item = EdgeId>) {
        if self.note().is_none() {
            return;
        }
        let mut line = 0;
        let labels: Vec<String> = edges
            .map(|e| {
                let (text, l) = self.branch_text(func, e);
                line = l;
                text
            })
            .collect();
        let note = self.note().expect("drawing");
        note.at = format!("line {line}");
        note.taken = labels;
    }

    /// A branch the solver found infeasible.
    pub(crate) fn note_pruned(&mut self, func: usize, e: EdgeId) {
        if self.note().is_some() {
            let (text, _) = self.branch_text(func, e);
            self.note().expect("drawing").pruned.push(text);
        }
    }

    /// An error leaf, reached by error edge `e`.
    pub(crate) fn note_error(&mut self, func: usize, e: EdgeId, mark: Mark) {
        if self.note().is_some() {
            let (text, line) = self.branch_text(func, e);
            let note = self.note().expect("drawing");
            note.at = format!("line {line}");
            note.errors.push((text, mark));
        }
    }

    /// A fork of a symbolic index into one state per cell.
    pub(crate) fn note_index_fork(&mut self, func: usize, e: EdgeId, cells: &[usize]) {
        if let Some((note, line)) = self.note_at(func, e) {
            note.at = format!("line {line}");
            note.taken = cells.iter().map(|j| format!("index {j}")).collect();
        }
    }

    /// A loop entered by `e` and left at once by its summary's traces
    /// (each state's label noted as the summary made it).
    pub(crate) fn note_summary(&mut self, func: usize, e: EdgeId) {
        if let Some((note, line)) = self.note_at(func, e) {
            note.at = format!("loop at line {line}: summary");
            note.summary = true;
        }
    }

    /// The step's note, when drawing, and the line of edge `e`.
    fn note_at(&mut self, func: usize, e: EdgeId) -> Option<(&mut StepNote, u32)> {
        self.note()?;
        let prog = self.program();
        let line = prog
            .line_col(func, prog.bodies[func].edges[e as usize].span)
            .0;
        Some((self.note().expect("drawing"), line))
    }
}
