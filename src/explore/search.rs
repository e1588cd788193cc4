//! The worklist and the thesis's six search strategies (docs/thesis-executor.md,
//! "Search strategies"): `bfs` (oldest first), `dfs` (newest first),
//! `random` (uniform, seeded), `tree` (KLEE's random path: a random walk
//! from the root of the execution tree to a leaf), `coverage` (random,
//! weighted by 1 / distance to the nearest statement not yet run), and
//! `klee` (tree and coverage in turn).
//!
//! With merging on, states that arrive where paths meet are *parked*: a
//! parked state is picked when no other state can run (or every 4th pick,
//! so that an unbounded loop elsewhere cannot starve it), so that the
//! states bound for the same join point get there and merge first.
//!
//! With path subsumption on, a loop iteration past the thesis's `_t` is
//! *deferred*: it runs only when no other state waits, so that the loop's
//! exit (and the annotations it brings) is explored first.

use super::Strategy;
use super::state::State;
use crate::ir::NodeId;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;

/// Every this many picks, a parked state runs even if others wait.
const PARKED_TURN: u64 = 4;

const ACTIVE: usize = 0;
const PARKED: usize = 1;
const DEFERRED: usize = 2;
const POOLS: usize = 3;

/// Where a waiting state waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pool {
    Active,
    /// At a join, for merging.
    Parked,
    /// Until nothing else can run.
    Deferred,
}

impl Pool {
    fn index(self) -> usize {
        match self {
            Pool::Active => ACTIVE,
            Pool::Parked => PARKED,
            Pool::Deferred => DEFERRED,
        }
    }
    fn of(index: usize) -> Pool {
        [Pool::Active, Pool::Parked, Pool::Deferred][index]
    }
}

type Location = Vec<(usize, NodeId)>;

struct Entry {
    state: State,
    pool: usize,
}

#[derive(Default)]
struct TreeNode {
    parent: Option<usize>,
    /// States in the worklist below this node, per pool.
    live: [u32; POOLS],
    children: Vec<usize>,
    /// The worklist slot of the state at this leaf.
    slot: Option<usize>,
}

pub(crate) struct Worklist {
    strategy: Strategy,
    rng: SmallRng,
    /// The waiting states by slot; a slot is never reused, so an old
    /// entry of `order` cannot name a newer state.
    slots: HashMap<usize, Entry>,
    next_slot: usize,
    /// Insertion order per pool (removed slots are skipped lazily).
    order: [VecDeque<usize>; POOLS],
    /// The live slots per pool, and each slot's position there.
    live: [Vec<usize>; POOLS],
    position: HashMap<usize, usize>,
    by_location: HashMap<Location, Vec<usize>>,
    tree: Vec<TreeNode>,
    picks: u64,
}

impl Worklist {
    pub(crate) fn new(strategy: Strategy, seed: u64) -> Worklist {
        Worklist {
            strategy,
            rng: SmallRng::seed_from_u64(seed),
            slots: HashMap::default(),
            next_slot: 0,
            order: Default::default(),
            live: Default::default(),
            position: HashMap::default(),
            by_location: HashMap::default(),
            tree: vec![TreeNode::default()],
            picks: 0,
        }
    }

    /// The waiting states, in no particular order.
    pub(crate) fn states(&self) -> impl Iterator<Item = &State> {
        self.slots.values().map(|e| &e.state)
    }

    pub(crate) fn len(&self) -> usize {
        self.live.iter().map(Vec::len).sum()
    }

    /// New leaves under `parent`, one per state it forked into.
    pub(crate) fn branch(&mut self, parent: usize, count: usize) -> Vec<usize> {
        (0..count)
            .map(|_| {
                self.tree.push(TreeNode {
                    parent: Some(parent),
                    ..TreeNode::default()
                });
                let id = self.tree.len() - 1;
                self.tree[parent].children.push(id);
                id
            })
            .collect()
    }

    pub(crate) fn push(&mut self, state: State, pool: Pool) {
        let pool = pool.index();
        let slot = self.next_slot;
        self.next_slot += 1;
        self.order[pool].push_back(slot);
        self.position.insert(slot, self.live[pool].len());
        self.live[pool].push(slot);
        self.by_location
            .entry(state.location())
            .or_default()
            .push(slot);
        self.count_leaf(state.tree_node, pool, slot, true);
        self.slots.insert(slot, Entry { state, pool });
    }

    fn count_leaf(&mut self, leaf: usize, pool: usize, slot: usize, add: bool) {
        self.tree[leaf].slot = add.then_some(slot);
        let mut n = Some(leaf);
        while let Some(i) = n {
            let l = &mut self.tree[i].live[pool];
            *l = if add { *l + 1 } else { l.saturating_sub(1) };
            n = self.tree[i].parent;
        }
    }

    /// The slots of the states waiting at `location`.
    pub(crate) fn at(&self, location: &Location) -> Vec<usize> {
        self.by_location.get(location).cloned().unwrap_or_default()
    }

    pub(crate) fn state(&self, slot: usize) -> &State {
        &self.slots[&slot].state
    }

    /// Takes a state out of the worklist.
    pub(crate) fn remove(&mut self, slot: usize) -> (State, Pool) {
        let Entry { state, pool } = self.slots.remove(&slot).expect("a live slot");
        let at = self
            .position
            .remove(&slot)
            .expect("a live slot has a position");
        self.live[pool].swap_remove(at);
        if let Some(&moved) = self.live[pool].get(at) {
            self.position.insert(moved, at);
        }
        let loc = state.location();
        if let Some(v) = self.by_location.get_mut(&loc) {
            v.retain(|s| *s != slot);
            if v.is_empty() {
                self.by_location.remove(&loc);
            }
        }
        self.count_leaf(state.tree_node, pool, slot, false);
        (state, Pool::of(pool))
    }

    /// The next state to run, by the strategy; `distance` is a state's
    /// distance to the nearest statement not run yet (for `coverage`).
    pub(crate) fn pick(&mut self, distance: &mut dyn FnMut(&State) -> u32) -> Option<State> {
        let pool = self.pool_to_pick()?;
        let slot = match self.strategy {
            Strategy::Bfs => self.oldest_or_newest(pool, true),
            Strategy::Dfs => self.oldest_or_newest(pool, false),
            Strategy::Random => {
                let i = self.rng.random_range(0..self.live[pool].len());
                self.live[pool][i]
            }
            Strategy::Tree => self.random_path(pool),
            Strategy::Coverage => self.by_coverage(pool, distance),
            Strategy::Klee if self.picks.is_multiple_of(2) => self.random_path(pool),
            Strategy::Klee => self.by_coverage(pool, distance),
        };
        Some(self.remove(slot).0)
    }

    /// The state nearest to a goal (`distance`), the oldest among equals;
    /// parked states by the same turns as in [`Worklist::pick`].
    pub(crate) fn pick_nearest(
        &mut self,
        distance: &mut dyn FnMut(&State) -> u32,
    ) -> Option<State> {
        let pool = self.pool_to_pick()?;
        let slot = (self.live[pool].iter().copied())
            .min_by_key(|s| (distance(self.state(*s)), *s))
            .expect("a non-empty pool");
        Some(self.remove(slot).0)
    }

    /// The pool the next pick takes from. A parked state also runs every
    /// PARKED_TURN-th pick: otherwise an unbounded loop or recursion
    /// elsewhere would starve it for ever; a deferred one only when
    /// nothing else waits.
    fn pool_to_pick(&mut self) -> Option<usize> {
        self.picks += 1;
        let parked_turn = self.picks.is_multiple_of(PARKED_TURN);
        let [active, parked, deferred] = self.live.each_ref().map(|l| !l.is_empty());
        if parked && (parked_turn || !active) {
            Some(PARKED)
        } else if active {
            Some(ACTIVE)
        } else if deferred {
            Some(DEFERRED)
        } else {
            None
        }
    }

    fn oldest_or_newest(&mut self, pool: usize, oldest: bool) -> usize {
        loop {
            let s = if oldest {
                self.order[pool].pop_front()
            } else {
                self.order[pool].pop_back()
            }
            .expect("a non-empty pool has an order entry");
            if self.slots.get(&s).is_some_and(|e| e.pool == pool) {
                return s;
            }
        }
    }

    /// KLEE's random-path selection: from the root, a uniformly random
    /// child with live states below, down to a leaf.
    fn random_path(&mut self, pool: usize) -> usize {
        let mut n = 0;
        loop {
            if let Some(slot) = self.tree[n].slot
                && self.slots.get(&slot).is_some_and(|e| e.pool == pool)
            {
                return slot;
            }
            let live: Vec<usize> = self.tree[n]
                .children
                .iter()
                .copied()
                .filter(|c| self.tree[*c].live[pool] > 0)
                .collect();
            if live.is_empty() {
                // Counts and leaves disagree: fall back to any state.
                return self.live[pool][0];
            }
            n = live[self.rng.random_range(0..live.len())];
        }
    }

    /// Random, each state weighted by 1 / (1 + distance to new coverage).
    fn by_coverage(&mut self, pool: usize, distance: &mut dyn FnMut(&State) -> u32) -> usize {
        let weights: Vec<f64> = self.live[pool]
            .iter()
            .map(|s| 1.0 / (1.0 + distance(self.state(*s)) as f64))
            .collect();
        let total: f64 = weights.iter().sum();
        let mut x = self.rng.random_range(0.0..total.max(f64::MIN_POSITIVE));
        for (i, w) in weights.iter().enumerate() {
            if x < *w {
                return self.live[pool][i];
            }
            x -= w;
        }
        *self.live[pool].last().expect("a non-empty pool")
    }
}
