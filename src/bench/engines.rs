//! The experiment behind the portfolio's schedule (`check::schedule`,
//! docs/portfolio.md §5a): every engine alone on every target of a set of
//! programs; then, per class of programs, the portfolio's race simulated
//! on those times under every order of the engines.

use crate::check::schedule::{self, Class, Features};
use crate::check::{self, CheckOptions};
use crate::db::{Database, SourceFile};
use std::collections::BTreeMap;
use std::time::Duration;

/// The families of programs the experiment measures on: an order is
/// given to a class only if it gains in each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Population {
    /// The files (and directories) given.
    Files,
    /// The thesis's generator's programs.
    Generated,
}

impl Population {
    pub const ALL: [Population; 2] = [Population::Files, Population::Generated];

    /// Its name in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Population::Files => "files",
            Population::Generated => "generated",
        }
    }
}

/// One target, and what each engine did on it alone.
#[derive(Clone, Debug)]
pub struct TargetRuns {
    pub file: String,
    pub population: Population,
    pub class: Class,
    pub line: u32,
    pub col: u32,
    /// Per engine (in the measured engines' order): whether it decided,
    /// and its time to its answer.
    pub runs: Vec<(bool, Duration)>,
}

/// What one engine did on one class.
#[derive(Clone, Debug)]
pub struct EngineRow {
    pub engine: &'static str,
    pub decided: usize,
    /// The median time of its decisions.
    pub median_decided: Option<Duration>,
}

/// The least number of targets some engine decided that a class needs
/// for an order of its own; a class with fewer takes the order of all
/// the programs together.
pub const MIN_TARGETS: usize = 20;

/// How much less mean time (a share of the unscheduled order's) the best
/// order must simulate for a class to be given it: smaller gains are
/// within what one run of the experiment to the next changes.
pub const MIN_GAIN: f64 = 0.05;

/// A group of targets: one class, or all of them (`None`). Its engines
/// alone, and the race simulated under orders.
#[derive(Clone, Debug)]
pub struct ClassRow {
    pub class: Option<Class>,
    pub targets: usize,
    /// Targets some engine decided (the race is simulated on these).
    pub decidable: usize,
    pub engines: Vec<EngineRow>,
    /// The order with the least mean simulated time among those whose
    /// median and geometric mean are no worse than the unscheduled
    /// order's.
    pub best: (Vec<&'static str>, Score),
    /// The order to build into apc: the best one if it gains at least
    /// [`MIN_GAIN`] on the unscheduled one in the whole group and in each
    /// family of programs with [`MIN_TARGETS`] of its targets (else the
    /// unscheduled one), or the recommended order of all the programs when
    /// the class has fewer than [`MIN_TARGETS`].
    pub recommended: Vec<&'static str>,
    /// The order built into apc for the class, and its simulated times.
    pub built_in: (Vec<&'static str>, Score),
    /// The portfolio's order without a schedule (`--portfolio`'s default
    /// list), and its simulated times.
    pub unscheduled: Score,
    /// The stagger to build into apc for the class, and its simulated times
    /// with the built-in order: the one of [`STAGGERS`] with the least mean
    /// that gains [`MIN_GAIN`] on none in the group and in each family (else
    /// none), or that of all the programs when the class has fewer than
    /// [`MIN_TARGETS`].
    pub recommended_stagger: (Duration, Score),
    /// The stagger built into apc for the class.
    pub built_in_stagger: Duration,
}

/// The staggers the experiment tries (ms).
pub const STAGGERS: [u64; 5] = [0, 100, 200, 300, 500];

/// The simulated race's times to a verdict over a group of targets.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Score {
    pub mean: Duration,
    pub median: Duration,
    pub geometric_mean: Duration,
}

impl Score {
    fn no_worse_than(&self, o: &Score) -> bool {
        self.median <= o.median && self.geometric_mean <= o.geometric_mean
    }
}

/// How the race is run: as `apc check`'s portfolio by default.
#[derive(Clone, Copy, Debug)]
pub struct Race {
    pub head: usize,
    pub delay: Duration,
    /// Each next late engine starts this much after the one before it.
    pub stagger: Duration,
    pub cores: usize,
}

/// Every engine of `engines` alone on every target of each program
/// (name, text, population), under `opts` (its timeout per target). `tick` is called
/// after each program.
pub fn measure(
    programs: &[(String, String, Population)],
    engines: &[&'static str],
    opts: &CheckOptions,
    tick: &dyn Fn(),
) -> Vec<TargetRuns> {
    let mut out = Vec::new();
    for (name, text, population) in programs {
        let db = Database::default();
        let file = SourceFile::new(&db, name.into(), text.clone());
        let class = Class::of(&Features::of(&db, file));
        for t in &check::targets(&db, file) {
            let runs = (engines.iter())
                .map(|e| {
                    let r = check::check_target(&db, file, t, &opts.alone(e));
                    (r.verdict.is_definite(), r.time)
                })
                .collect();
            out.push(TargetRuns {
                file: name.clone(),
                population: *population,
                class,
                line: t.line,
                col: t.col,
                runs,
            });
        }
        tick();
    }
    out
}

/// All the targets together, then each class: each engine's decisions,
/// and the race under the best order, the built-in one and the
/// unscheduled one.
pub fn by_class(targets: &[TargetRuns], engines: &[&'static str], race: Race) -> Vec<ClassRow> {
    let mut groups: Vec<(Option<Class>, Vec<usize>)> = vec![(None, (0..targets.len()).collect())];
    let mut classes: BTreeMap<Class, Vec<usize>> = BTreeMap::new();
    for (i, t) in targets.iter().enumerate() {
        classes.entry(t.class).or_default().push(i);
    }
    groups.extend(classes.into_iter().map(|(c, ts)| (Some(c), ts)));
    let secs: Vec<Vec<(bool, f64)>> = (targets.iter())
        .map(|t| t.runs.iter().map(|(d, t)| (*d, t.as_secs_f64())).collect())
        .collect();
    // The race is simulated on the targets some engine decided.
    let decidable: Vec<Vec<usize>> = (groups.iter())
        .map(|(_, ts)| {
            ts.iter()
                .copied()
                .filter(|&t| secs[t].iter().any(|r| r.0))
                .collect()
        })
        .collect();
    let searched = search(&secs, &decidable, engines.len(), race);
    let all_engines: Vec<usize> = (0..engines.len()).collect();
    let mut rows: Vec<ClassRow> = Vec::new();
    for (((class, ts), decidable), (unscheduled, best)) in
        groups.iter().zip(&decidable).zip(searched)
    {
        let names =
            |order: &[usize]| -> Vec<&'static str> { order.iter().map(|&i| engines[i]).collect() };
        let built_in = match class {
            Some(c) => schedule::order(*c, engines),
            None => engines.to_vec(),
        };
        let built_in_indices: Vec<usize> = (built_in.iter())
            .filter_map(|n| engines.iter().position(|e| e == n))
            .collect();
        let mut times = Vec::new();
        let group = (targets, &secs[..], &decidable[..]);
        let (recommended, stagger) = if class.is_some() && decidable.len() < MIN_TARGETS {
            // Too few targets to say: what all the programs recommend.
            let staggered = Race {
                stagger: rows[0].recommended_stagger.0,
                ..race
            };
            let score = group_score(&secs, decidable, &built_in_indices, staggered, &mut times);
            (rows[0].recommended.clone(), (staggered.stagger, score))
        } else {
            let takes_best = gains(&best.1, &unscheduled)
                && holds_in_each_population(group, (&best.0, race), (&all_engines, race));
            let order = if takes_best {
                names(&best.0)
            } else {
                engines.to_vec()
            };
            (order, recommended_stagger(group, &built_in_indices, race))
        };
        rows.push(ClassRow {
            class: *class,
            targets: ts.len(),
            decidable: decidable.len(),
            engines: (0..engines.len())
                .map(|e| engine_row(engines[e], ts.iter().map(|&t| targets[t].runs[e])))
                .collect(),
            recommended,
            best: (names(&best.0), best.1),
            built_in: (
                built_in,
                group_score(&secs, decidable, &built_in_indices, race, &mut times),
            ),
            unscheduled,
            recommended_stagger: stagger,
            built_in_stagger: class.map_or(Duration::ZERO, schedule::stagger_of),
        });
    }
    rows
}

/// Whether `s` is no worse than `baseline` in median and geometric mean,
/// and at least [`MIN_GAIN`] less in mean.
fn gains(s: &Score, baseline: &Score) -> bool {
    s.no_worse_than(baseline)
        && s.mean.as_secs_f64() <= baseline.mean.as_secs_f64() * (1.0 - MIN_GAIN)
}

/// Targets' runs, as `by_class` holds them: each target's, in seconds,
/// and a group of them.
type Group<'a> = (&'a [TargetRuns], &'a [Vec<(bool, f64)>], &'a [usize]);

/// Whether the race `candidate` (an order and its starts) gains on
/// `baseline` in every family of programs (given files, generated) that
/// has [`MIN_TARGETS`] of the group's targets: an order that only a
/// mixture of families favours is an artefact of the mixture (it was, for
/// nested loops: the corpus and the generator each preferred the
/// unscheduled order).
fn holds_in_each_population(
    (targets, secs, group): Group,
    candidate: (&[usize], Race),
    baseline: (&[usize], Race),
) -> bool {
    let mut buffer = Vec::new();
    Population::ALL.iter().all(|p| {
        let part: Vec<usize> = (group.iter().copied())
            .filter(|&t| targets[t].population == *p)
            .collect();
        part.len() < MIN_TARGETS
            || gains(
                &group_score(secs, &part, candidate.0, candidate.1, &mut buffer),
                &group_score(secs, &part, baseline.0, baseline.1, &mut buffer),
            )
    })
}

/// The stagger of [`STAGGERS`] with the least mean simulated time under
/// `order` that gains on none in the group and in each family; none if no
/// stagger does. With its score.
fn recommended_stagger(group: Group, order: &[usize], race: Race) -> (Duration, Score) {
    let (_, secs, members) = group;
    let with = |ms: u64| Race {
        stagger: Duration::from_millis(ms),
        ..race
    };
    let mut buffer = Vec::new();
    let none = group_score(secs, members, order, with(0), &mut buffer);
    let mut chosen = (Duration::ZERO, none);
    for ms in STAGGERS {
        let score = group_score(secs, members, order, with(ms), &mut buffer);
        if score.mean < chosen.1.mean
            && gains(&score, &none)
            && holds_in_each_population(group, (order, with(ms)), (order, with(0)))
        {
            chosen = (with(ms).stagger, score);
        }
    }
    chosen
}

/// For each group of targets: the score of the unscheduled order (the
/// engines as given), and the order with the least mean time among those
/// no worse than it in median and geometric mean (ties: the first in
/// lexicographic order). Every order of the `n` engines is simulated
/// once on every target.
fn search(
    targets: &[Vec<(bool, f64)>],
    groups: &[Vec<usize>],
    n: usize,
    race: Race,
) -> Vec<(Score, (Vec<usize>, Score))> {
    let mut order: Vec<usize> = (0..n).collect();
    let (mut times, mut buffer) = (vec![0.0; targets.len()], Vec::new());
    let mut found: Vec<(Score, (Vec<usize>, Score))> = Vec::new();
    loop {
        for (t, runs) in targets.iter().enumerate() {
            times[t] = simulate(runs, &order, race);
        }
        for (g, group) in groups.iter().enumerate() {
            buffer.clear();
            buffer.extend(group.iter().map(|&t| times[t]));
            let s = score(&mut buffer);
            match found.get_mut(g) {
                None => found.push((s, (order.clone(), s))),
                Some((baseline, best)) => {
                    if s.no_worse_than(baseline) && s.mean < best.1.mean {
                        *best = (order.clone(), s);
                    }
                }
            }
        }
        if !next_permutation(&mut order) {
            return found;
        }
    }
}

/// The score of one order on a group of targets.
fn group_score(
    targets: &[Vec<(bool, f64)>],
    group: &[usize],
    order: &[usize],
    race: Race,
    buffer: &mut Vec<f64>,
) -> Score {
    buffer.clear();
    buffer.extend(group.iter().map(|&t| simulate(&targets[t], order, race)));
    score(buffer)
}

fn engine_row(engine: &'static str, runs: impl Iterator<Item = (bool, Duration)>) -> EngineRow {
    let mut times: Vec<Duration> = runs.filter(|(d, _)| *d).map(|(_, t)| t).collect();
    times.sort();
    EngineRow {
        engine,
        decided: times.len(),
        median_decided: times.get(times.len() / 2).copied(),
    }
}

/// The next order in lexicographic order; false after the last.
fn next_permutation(p: &mut [usize]) -> bool {
    let Some(i) = (1..p.len()).rev().find(|&i| p[i - 1] < p[i]) else {
        return false;
    };
    let j = (i..p.len())
        .rev()
        .find(|&j| p[j] > p[i - 1])
        .expect("a larger one");
    p.swap(i - 1, j);
    p[i..].reverse();
    true
}

/// The mean, median and geometric mean of simulated times (seconds; the
/// slice is reordered).
fn score(times: &mut [f64]) -> Score {
    if times.is_empty() {
        return Score::default();
    }
    let n = times.len() as f64;
    // Times under 0.1 ms count as 0.1 ms in the geometric mean.
    let log_sum: f64 = times.iter().map(|t| t.max(1e-4).ln()).sum();
    let mean = times.iter().sum::<f64>() / n;
    let mid = times.len() / 2;
    let median = *times.select_nth_unstable_by(mid, f64::total_cmp).1;
    Score {
        mean: Duration::from_secs_f64(mean),
        median: Duration::from_secs_f64(median),
        geometric_mean: Duration::from_secs_f64((log_sum / n).exp()),
    }
}

/// Most engines a race is simulated with.
const MAX_ENGINES: usize = 8;

/// The portfolio's race on one target, each engine taking its measured
/// time (seconds) to its answer: the head starts at once, each undecided
/// end lets the next waiting engine start, and the waiting engines start
/// at the delay, one each stagger after the first; the running engines
/// share the cores equally. The time of the first decision (or of the last
/// end, if none decides).
pub fn simulate(runs: &[(bool, f64)], order: &[usize], race: Race) -> f64 {
    assert!(order.len() <= MAX_ENGINES, "at most {MAX_ENGINES} engines");
    let mut left = [0.0; MAX_ENGINES];
    for (l, r) in left.iter_mut().zip(runs) {
        *l = r.1;
    }
    let head = race.head.min(order.len());
    let (mut running, mut waiting) = (order[..head].to_vec(), &order[head..]);
    // Turns given by undecided ends, and the next waiting engine's turn.
    let (mut given, mut turn) = (0, 0);
    let mut now = 0.0;
    loop {
        while let Some((&e, rest)) = waiting.split_first()
            && (turn < given || now >= late_start(race, turn))
        {
            running.push(e);
            (waiting, turn) = (rest, turn + 1);
        }
        let rate = (race.cores as f64 / running.len().max(1) as f64).min(1.0);
        let first = (running.iter().enumerate())
            .map(|(i, &e)| (i, left[e] / rate))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let until_start = match waiting.is_empty() {
            true => f64::INFINITY,
            false => late_start(race, turn) - now,
        };
        let Some((k, end)) = first else {
            if waiting.is_empty() {
                return now;
            }
            now += until_start;
            continue;
        };
        let step = end.min(until_start);
        now += step;
        for &e in &running {
            left[e] = (left[e] - step * rate).max(0.0);
        }
        if step == end {
            let e = running.swap_remove(k);
            if runs[e].0 {
                return now;
            }
            given += 1;
        }
    }
}

/// When the `turn`-th engine after the head starts, in seconds.
fn late_start(race: Race, turn: usize) -> f64 {
    (race.delay + race.stagger * turn as u32).as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    const RACE: Race = Race {
        head: 2,
        delay: Duration::from_millis(100),
        stagger: Duration::ZERO,
        cores: 2,
    };

    fn at(runs: &[(bool, f64)], order: &[usize]) -> f64 {
        (simulate(runs, order, RACE) * 1e4).round() / 10.0
    }

    #[test]
    fn the_simulated_race_follows_the_portfolio() {
        // Engine 2 decides in 5 ms alone: in the head it wins at 5 ms.
        let runs = [(false, 0.020), (false, 1.0), (true, 0.005)];
        assert_eq!(at(&runs, &[2, 0, 1]), 5.0);
        // Third, it waits for engine 0's undecided end at 20 ms.
        assert_eq!(at(&runs, &[0, 1, 2]), 25.0);
        // Behind two engines that never end early, it starts at the delay
        // and shares two cores with them: 5 ms of work take 7.5 ms.
        let slow = [(false, 1.0), (false, 1.0), (true, 0.005)];
        assert_eq!(at(&slow, &[0, 1, 2]), 107.5);
        // No engine decides: the last end.
        let none = [(false, 0.020), (false, 0.030)];
        assert_eq!(at(&none, &[0, 1]), 30.0);
    }

    #[test]
    fn a_staggered_race_starts_the_waiting_engines_one_by_one() {
        let staggered = Race {
            stagger: Duration::from_millis(100),
            ..RACE
        };
        // Engines 0 and 1 run past 200 ms. Engine 2 joins them at 100 ms,
        // engine 3 at 200 ms: four engines on two cores do its 5 ms of
        // work in 10 ms.
        let runs = [(false, 1.0), (false, 1.0), (false, 1.0), (true, 0.005)];
        let time = simulate(&runs, &[0, 1, 2, 3], staggered);
        assert!((time - 0.210).abs() < 1e-9, "{time}");
        // Unstaggered, all four run from 100 ms: 110 ms.
        let time = simulate(&runs, &[0, 1, 2, 3], RACE);
        assert!((time - 0.110).abs() < 1e-9, "{time}");
    }

    #[test]
    fn the_search_keeps_the_least_mean_no_worse_in_median() {
        // Two targets. Engine 1 is fast on the first, engine 2 on the
        // second; engine 0 decides nothing and gives up at 20 ms.
        let targets = vec![
            vec![(false, 0.020), (true, 0.001), (true, 0.5)],
            vec![(false, 0.020), (true, 0.9), (true, 0.002)],
        ];
        let found = search(&targets, &[vec![0, 1]], 3, RACE);
        let (unscheduled, (best, score)) = &found[0];
        // Unscheduled (0, 1, 2): engines 0 and 1 start; the first target is
        // decided at 1 ms, the second when engine 2 starts at 20 ms.
        assert!(
            (unscheduled.mean.as_secs_f64() - 0.0115).abs() < 1e-9,
            "{unscheduled:?}"
        );
        // With engines 1 and 2 first, both are decided at once.
        assert_eq!(best[..2], [1, 2]);
        assert!(score.mean < unscheduled.mean && score.no_worse_than(unscheduled));
    }

    #[test]
    fn every_order_is_visited_once() {
        let mut p = vec![0, 1, 2, 3];
        let mut seen = std::collections::BTreeSet::from([p.clone()]);
        while next_permutation(&mut p) {
            assert!(seen.insert(p.clone()));
        }
        assert_eq!(seen.len(), 24);
    }
}
