//! The `admit.*` metrics: what one EDF admission costs in the engines of
//! [`tempi::policy::admit`], with a steady number of accepted jobs.
//!
//! Owns the workload ([`Workload`]), its replay against an engine and the `admit.*` metrics.
//! Nothing here runs a runtime or an OS thread: the engines are pure data structures, timed
//! in this thread.
//!
//! Workload (the same for every engine, generated before any timing from a fixed seed):
//! the engine holds `n` accepted jobs, all finished early (their slots stay until their
//! deadline passes, as PORTS keeps processed slots). Then, in blocks of [`BLOCK`] jobs:
//! - *admission* (timed): for each job, `idle_before(d, now)` then `admit(1 µs, d, now)`, with
//!   `d = now + 1 ms + U(0, 1 s)` drawn uniformly, so a new job lands at a random place in the
//!   list rather than at its end. Every job is accepted (the harness checks);
//! - *upkeep* (timed separately): `finish` each job of the block (the dispatcher reports it
//!   ended), then `expire` at the instant just after the block's earliest `BLOCK` deadlines, so
//!   exactly `BLOCK` entries leave and the list is back to `n` entries.
//!
//! The list therefore moves between `n` and `n + BLOCK` entries. Each phase of a block is timed
//! as a whole (two clock reads per [`BLOCK`] operations). The engines compared take turns of
//! [`TURN`] blocks, so a burst of load on the machine hits them alike; the figure is the median,
//! over all blocks of all repetitions, of a block's mean per job (robust against the blocks
//! during which another process ran).
//!
//! Metrics (see the parent module for `ratio`):
//! - `admit.3000`: one admission (idle query + admit) with 3,000 accepted jobs, `tree` against
//!   `linear` (the paper's original slot list); `ratio = linear / tree`. The note gives the
//!   upkeep per job of each engine.
//! - `admit.3000.min-laxity`: the same `tree` figure against `min_laxity` (the paper's
//!   improved list with best-guess search).
//! - `admit.3000.hashed`: the same `tree` figure against `hashed` (that list with the
//!   paper's hashed search, rehashed at every `expire`).
//! - `admit.scaling`: `tree` with 10^6 accepted jobs (`tempi_ns`) against `tree` with 10^3
//!   (`peer_ns`); here `ratio = tempi_ns / peer_ns`, the growth factor of the admission cost
//!   over a thousandfold longer list (an O(log n) structure should stay near 2; above 1 means
//!   slower).

use std::collections::{BinaryHeap, HashSet};
use std::time::{Duration, Instant};

use std::cmp::Reverse;
use tempi::policy::admit::{self, Admission, AdmissionEngine, AdmitId};
use tempi::Time;

use super::{compare, fmt_ns, median, overhead, progress, Metric, Sizes};

/// Jobs per timed batch: the list grows by this much during admission and shrinks back during
/// upkeep.
pub(super) const BLOCK: usize = 32;

/// Every job's worst-case execution time.
const WCET: Duration = Duration::from_micros(1);
/// The shortest relative deadline: room for a block's unfinished WCETs.
const MIN_RELATIVE_NS: u64 = 1_000_000;
/// Relative deadlines spread uniformly over this much beyond the shortest.
const SPREAD_NS: u64 = 1_000_000_000;

/// A precomputed admission sequence: the initial fill, then blocks of admissions each followed
/// by the instant at which exactly that many entries expire.
pub(super) struct Workload {
    start: Time,
    /// Deadlines of the initial `n` jobs, admitted at `start`.
    fill: Vec<Time>,
    blocks: Vec<Block>,
}

struct Block {
    now: Time,
    deadlines: [Time; BLOCK],
    /// Just after the earliest `BLOCK` deadlines held once the block is in.
    expire_at: Time,
}

/// xorshift64*: a fixed-seed generator, so every run replays the same workload.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A deadline no held job has, so that expiring after a given one removes exactly the
    /// jobs counted.
    fn deadline(&mut self, now: u64, held: &mut HashSet<u64>) -> u64 {
        loop {
            let d = now + MIN_RELATIVE_NS + self.next() % SPREAD_NS;
            if held.insert(d) {
                return d;
            }
        }
    }
}

impl Workload {
    /// `n` accepted jobs, then `blocks` blocks of [`BLOCK`] admissions.
    pub(super) fn new(n: usize, blocks: usize, seed: u64) -> Workload {
        let mut rng = Rng(seed | 1);
        let start = 1_000_000u64;
        // The deadlines held, earliest on top: tells when exactly `BLOCK` of them have passed.
        let mut held = BinaryHeap::with_capacity(n + BLOCK);
        let mut distinct = HashSet::with_capacity(n + BLOCK);
        let fill: Vec<Time> = (0..n)
            .map(|_| {
                let d = rng.deadline(start, &mut distinct);
                held.push(Reverse(d));
                Time::from_nanos(d)
            })
            .collect();
        let mut now = start;
        let mut out = Vec::with_capacity(blocks);
        for _ in 0..blocks {
            let mut deadlines = [Time::ZERO; BLOCK];
            for d in &mut deadlines {
                let x = rng.deadline(now, &mut distinct);
                held.push(Reverse(x));
                *d = Time::from_nanos(x);
            }
            // Pop the earliest BLOCK; `expire(t)` removes deadlines before `t`, so expire just
            // after the last of them.
            let mut last = now;
            for _ in 0..BLOCK {
                last = held.pop().map_or(last, |Reverse(d)| d);
                distinct.remove(&last);
            }
            out.push(Block { now: Time::from_nanos(now), deadlines, expire_at: Time::from_nanos(last + 1) });
            now = last + 1;
        }
        Workload { start: Time::from_nanos(start), fill, blocks: out }
    }
}

/// An engine being replayed against a [`Workload`]: where it is in the block list.
pub(super) struct Replay {
    engine: Box<dyn AdmissionEngine>,
    next_block: usize,
}

impl Replay {
    /// Build `name` and admit (and finish) the workload's fill.
    pub(super) fn new(name: &str, w: &Workload) -> Result<Replay, String> {
        let capacity = w.fill.len() + BLOCK;
        let mut engine = admit::by_name(name, capacity).ok_or_else(|| format!("no admission engine `{name}`"))?;
        for &d in &w.fill {
            let id = accepted(engine.admit(WCET, d, w.start), name)?;
            engine.finish(id).map_err(|e| e.to_string())?;
        }
        Ok(Replay { engine, next_block: 0 })
    }

    /// Replay the next block: the time its admissions took and the time its upkeep took.
    pub(super) fn block(&mut self, w: &Workload) -> Result<(Duration, Duration), String> {
        let name = self.engine.name();
        let b = w.blocks.get(self.next_block).ok_or("admission workload too short")?;
        let mut ids = [None::<AdmitId>; BLOCK];
        let t0 = Instant::now();
        for (d, id) in b.deadlines.iter().zip(&mut ids) {
            let idle = self.engine.idle_before(*d, b.now);
            *id = Some(match self.engine.admit(WCET, *d, b.now) {
                Ok(Admission::Accepted(id)) if idle >= WCET => id,
                other => return Err(format!("{name}: a benchmark job was not accepted: {other:?}")),
            });
        }
        let t1 = Instant::now();
        for id in ids.iter().flatten() {
            self.engine.finish(*id).map_err(|e| e.to_string())?;
        }
        let gone = self.engine.expire(b.expire_at);
        let t2 = Instant::now();
        if gone != BLOCK {
            return Err(format!("{name}: expected {BLOCK} entries to expire, {gone} did"));
        }
        self.next_block += 1;
        Ok((t1 - t0, t2 - t1))
    }
}

fn accepted(r: Result<Admission, admit::AdmitError>, name: &str) -> Result<AdmitId, String> {
    match r {
        Ok(Admission::Accepted(id)) => Ok(id),
        other => Err(format!("{name}: a benchmark job was not accepted: {other:?}")),
    }
}

/// Blocks an engine replays per turn. Engines taking turns block by block would each start
/// their turn with caches the others just filled (a 3,000-job list is about 100 KB in every
/// engine), timing cache refills rather than admissions; this many blocks per turn keeps that
/// refill under about 1 % of a turn, while turns stay short enough that a burst of load on
/// the machine hits every engine.
const TURN: usize = 50;

/// Per-job admission and upkeep, in ns, of each engine (by name, on its workload): the median
/// over every block of `reps` repetitions of `blocks` blocks (after one warm-up repetition) of
/// the block's mean, the engines taking turns of [`TURN`] blocks. A median of blocks rather
/// than a mean of everything: on a busy machine a block now and then includes the
/// milliseconds another process ran, which would swamp a mean.
fn interleaved(runs: &[(&str, &Workload)], blocks: usize, reps: usize) -> Result<Vec<(f64, f64)>, String> {
    let mut replays = runs.iter().map(|(name, w)| Replay::new(name, w)).collect::<Result<Vec<_>, _>>()?;
    let mut samples = vec![(Vec::with_capacity(reps * blocks), Vec::with_capacity(reps * blocks)); runs.len()];
    let per_job = |d: Duration| d.as_nanos() as f64 / BLOCK as f64;
    for rep in 0..=reps {
        for turn in (0..blocks).step_by(TURN) {
            for ((replay, (_, w)), s) in replays.iter_mut().zip(runs).zip(&mut samples) {
                for _ in turn..(turn + TURN).min(blocks) {
                    let (admit, upkeep) = replay.block(w)?;
                    // The first round is the warm-up.
                    if rep > 0 {
                        s.0.push(per_job(admit));
                        s.1.push(per_job(upkeep));
                    }
                }
            }
        }
    }
    Ok(samples.into_iter().map(|(a, u)| (median(a), median(u))).collect())
}

/// `admit.3000`, `admit.3000.min-laxity` and `admit.scaling`.
pub(super) fn admit_metrics(sz: &Sizes, out: &mut Vec<Metric>) -> Result<(), String> {
    progress("admit: 3,000 accepted jobs, tree / linear / min_laxity / hashed");
    let blocks = sz.admit_blocks * (sz.reps + 1);
    let w = Workload::new(3_000, blocks, 0x5EED_AD41);
    let r = interleaved(&[("tree", &w), ("linear", &w), ("min_laxity", &w), ("hashed", &w)], sz.admit_blocks, sz.reps)?;
    let (tree, linear, min_laxity, hashed) = (r[0], r[1], r[2], r[3]);
    let upkeep = format!(
        "3,000 accepted jobs, deadlines uniform over 1 s (random insertion places); upkeep per job \
         (finish + expire, not in the ratio): tree {}, linear {}, min_laxity {}, hashed {}",
        fmt_ns(tree.1),
        fmt_ns(linear.1),
        fmt_ns(min_laxity.1),
        fmt_ns(hashed.1)
    );
    out.push(compare("admit.3000", tree.0, "linear slot list", linear.0, Some(upkeep)));
    out.push(compare(
        "admit.3000.min-laxity",
        tree.0,
        "min-laxity slot list",
        min_laxity.0,
        Some("same run; best-guess search from the last insertion".into()),
    ));
    out.push(compare(
        "admit.3000.hashed",
        tree.0,
        "hashed slot list",
        hashed.0,
        Some("same run; min-laxity slot list with the paper's hashed search".into()),
    ));

    let big = sz.admit_scaling_jobs;
    progress(&format!("admit: tree with 1,000 and {big} accepted jobs"));
    let (w_small, w_large) = (Workload::new(1_000, blocks, 0x5EED_AD42), Workload::new(big, blocks, 0x5EED_AD43));
    let r = interleaved(&[("tree", &w_small), ("tree", &w_large)], sz.admit_blocks, sz.reps)?;
    let (small, large) = (r[0], r[1]);
    out.push(overhead(
        "admit.scaling",
        large.0,
        "tree at 10^3 jobs",
        small.0,
        format!(
            "tree admission with {big} accepted jobs against 1,000; ratio = growth factor (log2 ratio {:.1}); \
             upkeep per job {} vs {}",
            (big as f64).log2() / 1000f64.log2(),
            fmt_ns(large.1),
            fmt_ns(small.1)
        ),
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_keeps_the_list_length_and_engines_agree() {
        let w = Workload::new(200, 20, 7);
        let mut lens = Vec::new();
        for name in admit::NAMES {
            let mut r = Replay::new(name, &w).unwrap();
            for _ in 0..20 {
                r.block(&w).unwrap();
            }
            lens.push(r.engine.len());
        }
        assert_eq!(lens, [200; admit::NAMES.len()]);
    }

    #[test]
    fn a_replay_past_the_workload_is_an_error() {
        let w = Workload::new(10, 2, 7);
        let mut r = Replay::new("tree", &w).unwrap();
        assert!(r.block(&w).is_ok() && r.block(&w).is_ok());
        assert!(r.block(&w).is_err());
    }
}
