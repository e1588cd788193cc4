//! Block schedules: a witness-only summary of a loop that no PDA summary
//! expresses (`docs/thesis-executor.md` §11a).
//!
//! A run of the loop is taken as up to [`MAX_BLOCKS`] blocks, each one
//! body path repeated t ≥ 1 times (t a fresh counter), then an exit path.
//! Inside a block:
//!
//! - each read of the input stream in an iteration reads one block input
//!   ι, the same in every iteration: the block's stretch of the stream is
//!   a [`StreamRun`], which the witness writes out value by value;
//! - a variable no closed form follows (`j = j * 2`) keeps its value: its
//!   update must read only itself and variables the path leaves alone, and
//!   the block starts at a fixed point of it (`2·j = j`);
//! - the rest is as in a summary (`classify`): induction variables, values
//!   of the last iteration, IV conditions asked at the first and the last
//!   iteration.
//!
//! Every state a schedule makes is one that a run reaches, but most runs
//! are missing: a schedule is an under-approximation. Its states go
//! beside the loop's own iterations, never instead of them (`exec`), so
//! that an exploration that ends with every path explored has still run
//! every path, and what it proves does not rest on a schedule.

use super::classify::{self, Change, Step, conjuncts};
use super::paths::LoopPath;
use super::{Summariser, Symbols};
use crate::explore::program::Explored;
use crate::ir::{EdgeId, LoopId};
use crate::term::{Node, Subst, TermId, Terms, Var, VarKind};
use num_bigint::BigInt;
use num_traits::Signed;
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// Most blocks in one schedule, most schedules of one loop, and most
/// schedules tried (each one a solver check) to find them.
const MAX_BLOCKS: usize = 3;
const MAX_SCHEDULES: usize = 64;
const MAX_TRIED: usize = 256;

/// A stretch of the input stream that a block read: from position
/// `start`, `count` iterations, each reading `values` in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct StreamRun {
    pub start: TermId,
    pub count: TermId,
    pub values: Vec<TermId>,
}

/// One way through the loop as blocks: a condition over the entry
/// symbols, the counters and the block inputs, and the effect.
#[derive(Clone, Debug)]
pub(crate) struct Schedule {
    pub cond: TermId,
    /// Per variable of [`Symbols::vars`]: its value after the loop.
    pub effect: Vec<Option<TermId>>,
    /// The counters (over ℕ) and the block inputs (over ℤ), fresh at
    /// each use.
    pub counters: Vec<Var>,
    pub inputs: Vec<Var>,
    pub runs: Vec<StreamRun>,
    /// The loop-exit edge it leaves by.
    pub exit: EdgeId,
    /// `p2^κ1 p1^κ2 → exit1`.
    pub shape: String,
}

pub(crate) struct Schedules {
    pub symbols: Arc<Symbols>,
    pub schedules: Vec<Schedule>,
}

/// A body path that can be repeated as a block.
#[derive(Clone)]
struct Block {
    step: Step,
    /// Its entry condition: each fixed point.
    fixed: Vec<TermId>,
    /// Its block inputs, by offset from the stream position.
    inputs: Vec<Var>,
    name: String,
}

/// A schedule under construction.
#[derive(Clone, Default)]
struct Partial {
    atoms: Vec<TermId>,
    state: Vec<TermId>,
    counters: Vec<Var>,
    inputs: Vec<Var>,
    runs: Vec<StreamRun>,
    shape: Vec<String>,
}

type Found<T> = Result<T, String>;

impl Summariser<'_, '_> {
    /// The block schedules of loop `l` (`Err`: why there are none).
    pub(super) fn schedules(&mut self, func: usize, l: LoopId) -> Found<Schedules> {
        let symbols = self.symbols_of(func);
        let paths = self.loop_paths(func, l, &symbols)?;
        let stream = stream_of(self.m.program(), func, &symbols);
        let (exits, bodies): (Vec<_>, Vec<_>) = paths.into_iter().partition(|p| p.exit.is_some());
        let mut blocks = Vec::new();
        let mut refused = None;
        for p in &bodies {
            match self.blocks_of(&symbols, stream, p, blocks.len()) {
                Ok(bs) => blocks.extend(bs),
                Err(why) => refused = refused.or(Some(why)),
            }
        }
        if blocks.is_empty() {
            let why = refused.unwrap_or_else(|| "the loop has no body path".into());
            return Err(format!("no path can be repeated as a block: {why}"));
        }
        let schedules = self.compose(&symbols, stream, &blocks, &exits);
        Ok(Schedules { symbols, schedules })
    }

    /// The blocks of body path `p` (one per variant of its `!=` atoms).
    fn blocks_of(
        &mut self,
        sy: &Symbols,
        stream: Option<Stream>,
        p: &LoopPath,
        numbered: usize,
    ) -> Found<Vec<Block>> {
        let (atoms, delta, inputs) = self.reads_as_block_inputs(sy, stream, p)?;
        let mut out = Vec::new();
        for atoms in classify::split_ne(self.m.terms_mut(), &atoms) {
            let name = format!("p{}", numbered + out.len() + 1);
            let (step, fixed) = self.with_fixed_points(sy, atoms, delta.clone())?;
            let c = self.m.terms_mut().and(step.atoms.clone());
            if !self.satisfiable(c, "whether a path through the loop is feasible")? {
                continue;
            }
            out.push(Block {
                step,
                fixed,
                inputs: inputs.clone(),
                name,
            });
        }
        Ok(out)
    }

    /// The path's condition and updates with each read of the stream at
    /// `$ic + c` replaced by block input ι_c. A read is the interpreter's
    /// (`symbolic::input_element`: 0 at a negative position); the stream's
    /// position is never negative, so ι_c stands for the whole read.
    fn reads_as_block_inputs(
        &mut self,
        sy: &Symbols,
        stream: Option<Stream>,
        p: &LoopPath,
    ) -> Found<(Vec<TermId>, Vec<TermId>, Vec<Var>)> {
        let unchanged = Ok((p.atoms.clone(), p.delta.clone(), Vec::new()));
        let Some(s) = stream else {
            return unchanged;
        };
        let t = self.m.terms_mut();
        let (ic, array) = (t.var(sy.syms[s.counter]), t.var(s.array));
        let mut roots = p.atoms.clone();
        roots.extend(&p.delta);
        if !reads_array(t, &roots, array) {
            return unchanged;
        }
        let per_iteration = constant_offset(t, p.delta[s.counter], ic)
            .filter(|r| r.is_positive())
            .and_then(|r| usize::try_from(r).ok())
            .ok_or("the stream position does not advance by a constant")?;
        let mut memo: HashMap<TermId, TermId> = HashMap::default();
        let mut inputs = Vec::new();
        for c in 0..per_iteration {
            let input = t.new_var(VarKind::Symbol, format!("ι{c}"));
            let (position, value) = (t.add_int(ic, c as i64), t.var(input));
            memo.insert(crate::symbolic::input_element(t, array, position), value);
            inputs.push(input);
        }
        let atoms: Vec<TermId> = (p.atoms.iter())
            .map(|a| t.replace_subterms(*a, &mut memo))
            .collect();
        let delta: Vec<TermId> = (p.delta.iter())
            .map(|d| t.replace_subterms(*d, &mut memo))
            .collect();
        let mut rest = atoms.clone();
        rest.extend(&delta);
        if reads_array(t, &rest, array) {
            return Err("a read of the stream is not at a fixed offset from its position".into());
        }
        Ok((atoms, delta, inputs))
    }

    /// The step of a block, with each variable that has no closed form
    /// held at a fixed point of its update (and that fixed point as the
    /// block's entry condition); `Err` if some variable cannot be held so,
    /// or the condition is NIV.
    fn with_fixed_points(
        &mut self,
        sy: &Symbols,
        atoms: Vec<TermId>,
        mut delta: Vec<TermId>,
    ) -> Found<(Step, Vec<TermId>)> {
        let t = self.m.terms_mut();
        let step = Step::new(t, sy, atoms.clone(), delta.clone());
        let moving: Vec<usize> = (0..delta.len())
            .filter(|&i| step.changes[i] != Change::Same)
            .collect();
        let mut fixed = Vec::new();
        for &i in &moving {
            if step.changes[i] != Change::Other {
                continue;
            }
            let others: Vec<Var> = (moving.iter().filter(|&&j| j != i))
                .map(|&j| sy.syms[j])
                .collect();
            if t.mentions_any(delta[i], &others) {
                continue; // left Other: `inexpressible` says why
            }
            let own = t.var(sy.syms[i]);
            fixed.push(t.eq(delta[i], own));
            delta[i] = own;
        }
        let step = Step::new(t, sy, atoms, delta);
        let why =
            classify::inexpressible(t, sy, &step).or_else(|| classify::niv_condition(t, sy, &step));
        match why {
            Some(why) => Err(why),
            None => Ok((step, fixed)),
        }
    }

    /// The schedules: every sequence of up to [`MAX_BLOCKS`] blocks (no
    /// block twice in a row), shortest first, each followed by each exit
    /// path, the feasible ones, until [`MAX_SCHEDULES`] are found or
    /// [`MAX_TRIED`] were tried.
    fn compose(
        &mut self,
        sy: &Symbols,
        stream: Option<Stream>,
        blocks: &[Block],
        exits: &[LoopPath],
    ) -> Vec<Schedule> {
        let start = Partial {
            state: sy.general(self.m.terms_mut()),
            ..Partial::default()
        };
        let mut out = Vec::new();
        let mut tried = 0;
        let mut layer: Vec<(Partial, usize)> = vec![(start, usize::MAX)];
        for _ in 0..MAX_BLOCKS {
            let mut next = Vec::new();
            for (p, last) in &layer {
                for (b, block) in blocks.iter().enumerate().filter(|(b, _)| b != last) {
                    crate::deadline::tick();
                    let q = self.repeated(sy, stream, block, p.clone());
                    for (x, exit) in exits.iter().enumerate() {
                        if out.len() >= MAX_SCHEDULES || tried >= MAX_TRIED {
                            return out;
                        }
                        tried += 1;
                        if let Some(s) = self.left_by(sy, exit, x, &q) {
                            out.push(s);
                        }
                    }
                    next.push((q, b));
                }
            }
            layer = next;
        }
        out
    }

    /// A partial schedule followed by a run of `t ≥ 1` iterations of a
    /// block (t, and the block's inputs, fresh).
    fn repeated(
        &mut self,
        sy: &Symbols,
        stream: Option<Stream>,
        block: &Block,
        p: Partial,
    ) -> Partial {
        let k = self.new_counter("κ");
        let t = self.m.terms_mut();
        let mut renamed = Subst::new();
        let mut inputs = Vec::new();
        for i in &block.inputs {
            let fresh = t.new_var(VarKind::Symbol, "ι");
            renamed.bind(*i, t.var(fresh));
            inputs.push(fresh);
        }
        let step = renamed_step(t, &block.step, &renamed);
        let kt = t.var(k);
        let mut q = p;
        let at = classify::at(sy, &q.state);
        for f in &block.fixed {
            let f = renamed.apply(t, *f);
            let f = at.apply(t, f);
            q.atoms.push(f);
        }
        q.atoms.push(classify::positive(t, k));
        (q.atoms).extend(classify::holds_throughout(t, sy, &step, &q.state, kt));
        if let Some(s) = stream.filter(|_| !inputs.is_empty()) {
            // A witness holds at most so many inputs: a model past it
            // would be no witness.
            let most = crate::interp::MAX_INPUT_VALUES / inputs.len();
            let bound = t.int(most);
            q.atoms.push(t.le(kt, bound));
            q.runs.push(StreamRun {
                start: q.state[s.counter],
                count: kt,
                values: inputs.iter().map(|i| t.var(*i)).collect(),
            });
        }
        q.state = classify::after(t, sy, &step, &q.state, kt);
        q.counters.push(k);
        q.inputs.extend(inputs);
        q.shape.push(format!("{}^{}", block.name, t.var_name(k)));
        q
    }

    /// The schedule of a partial one left by exit path `exit` (number
    /// `x`), if the solver does not find it infeasible.
    fn left_by(
        &mut self,
        sy: &Symbols,
        exit: &LoopPath,
        x: usize,
        q: &Partial,
    ) -> Option<Schedule> {
        let t = self.m.terms_mut();
        let at = classify::at(sy, &q.state);
        let mut atoms = q.atoms.clone();
        for a in &exit.atoms {
            let a = at.apply(t, *a);
            conjuncts(t, a, &mut atoms)?;
        }
        let general = sy.general(t);
        let effect = (exit.delta.iter().zip(&general))
            .map(|(d, g)| {
                let after = at.apply(t, *d);
                (after != *g).then_some(after)
            })
            .collect();
        let cond = t.and(atoms);
        if !self.satisfiable(cond, "a block schedule").unwrap_or(true) {
            return None;
        }
        Some(Schedule {
            cond,
            effect,
            counters: q.counters.clone(),
            inputs: q.inputs.clone(),
            runs: q.runs.clone(),
            exit: exit.exit.expect("an exit path"),
            shape: format!("{} → exit{}", q.shape.join(" "), x + 1),
        })
    }
}

/// Where a function keeps the input stream: the slot of `$ic` among the
/// summary's variables and the symbol of `$in`.
#[derive(Clone, Copy)]
struct Stream {
    counter: usize,
    array: Var,
}

fn stream_of(prog: &Explored, func: usize, sy: &Symbols) -> Option<Stream> {
    let body = &prog.bodies[func];
    let counter = sy.slot(body.var_id(crate::ir::INPUT_COUNTER)?)?;
    let array = sy.array(body.var_id(crate::ir::INPUT_STREAM)?)?;
    Some(Stream { counter, array })
}

/// Whether a term of `roots` reads `array`.
fn reads_array(t: &Terms, roots: &[TermId], array: TermId) -> bool {
    (t.post_order(roots).into_iter())
        .any(|x| matches!(t.node(x), Node::Select(a, _) if *a == array))
}

/// `c` when `t` is `base + c`.
fn constant_offset(t: &mut Terms, term: TermId, base: TermId) -> Option<BigInt> {
    let d = t.sub(term, base);
    t.as_int(d).cloned()
}

/// A step with its block inputs renamed.
fn renamed_step(t: &mut Terms, step: &Step, s: &Subst) -> Step {
    let atoms = step.atoms.iter().map(|a| s.apply(t, *a)).collect();
    let delta = step.delta.iter().map(|d| s.apply(t, *d)).collect();
    let changes = (step.changes.iter())
        .map(|c| match c {
            Change::Induction(inc) => Change::Induction(s.apply(t, *inc)),
            other => other.clone(),
        })
        .collect();
    Step {
        atoms,
        delta,
        changes,
    }
}
