//! What the blocking terms and response times ask of a task set again and again, computed
//! once: each resource's ceiling, its users sorted by priority with their longest section
//! (and the running maximum of those), the tasks that lock anything, and every priority in
//! order. With it a blocking term costs a few binary searches per resource instead of a pass
//! over every task (and, for each section, another pass to find the ceiling).
//!
//! Owns this index only. Must not hold a bound or a test: `blocking.rs` and
//! `fixed_priority.rs` read it.

use std::cell::RefCell;
use std::time::Duration;

use super::TaskSet;

/// How many resource sets [`Index::lower_task_sum`] keeps prefix sums for, and how many
/// entries (bands times tasks that lock) one set may take; past either it sums directly. (A
/// few sets only under test, so that the comparison with the reference takes both ways.)
const MAX_SETS: usize = if cfg!(test) { 3 } else { 64 };
const MAX_ENTRIES: usize = 1 << 22;

/// For one set of resources `rs`: its distinct ceilings, and per ceiling band the running sums,
/// over the tasks that lock by increasing priority, of each one's longest section on a
/// resource of `rs` whose ceiling reaches the band.
struct Bands {
    ceilings: Vec<i32>,
    sums: Vec<Vec<Duration>>,
}

/// A task set's resource users and priorities, sorted for lookups by priority.
pub(super) struct Index {
    /// The ceiling of each resource ([`TaskSet::ceiling`]).
    ceiling: Vec<Option<i32>>,
    /// Per resource: `(priority, longest section on it)` of each task that uses it, by
    /// increasing priority.
    users: Vec<Vec<(i32, Duration)>>,
    /// Per resource: `longest[k]` is the longest of `users[..=k]`.
    longest: Vec<Vec<Duration>>,
    /// The tasks with at least one section, by increasing priority.
    lockers: Vec<usize>,
    /// Every task's priority, in increasing order.
    priorities: Vec<i32>,
    /// [`Bands`] per resource set asked about (`None`: too large, sum directly).
    bands: RefCell<Vec<(Vec<usize>, Option<Bands>)>>,
}

impl Index {
    /// Index `ts` (sections must name existing resources, as [`TaskSet::validate`] checks;
    /// others are ignored).
    pub(super) fn new(ts: &TaskSet) -> Index {
        let n = ts.resources.len();
        let mut users: Vec<Vec<(i32, Duration)>> = vec![Vec::new(); n];
        let mut lockers = Vec::new();
        for (i, t) in ts.tasks.iter().enumerate() {
            if !t.sections.is_empty() {
                lockers.push(i);
            }
            for (k, s) in t.sections.iter().enumerate() {
                // One entry per task and resource: its longest section there.
                if s.resource >= n || t.sections[..k].iter().any(|o| o.resource == s.resource) {
                    continue;
                }
                users[s.resource].push((t.priority, t.longest_on(s.resource).unwrap_or_default()));
            }
        }
        lockers.sort_by_key(|&i| ts.tasks[i].priority);
        let mut ceiling = Vec::with_capacity(n);
        let mut longest = Vec::with_capacity(n);
        for (r, u) in users.iter_mut().enumerate() {
            u.sort_by_key(|&(p, _)| p);
            ceiling.push(ts.resources[r].ceiling.or_else(|| u.last().map(|&(p, _)| p)));
            let mut max = Duration::ZERO;
            longest.push(
                u.iter()
                    .map(|&(_, d)| {
                        max = max.max(d);
                        max
                    })
                    .collect(),
            );
        }
        let mut priorities: Vec<i32> = ts.tasks.iter().map(|t| t.priority).collect();
        priorities.sort_unstable();
        Index { ceiling, users, longest, lockers, priorities, bands: RefCell::new(Vec::new()) }
    }

    /// Whether resource `r` can block a task of priority `p`: its ceiling is at least `p`.
    pub(super) fn can_block(&self, r: usize, p: i32) -> bool {
        self.ceiling.get(r).copied().flatten().is_some_and(|c| c >= p)
    }

    /// The longest section on `r` of a task of priority below `p`, if one uses it.
    pub(super) fn longest_below(&self, r: usize, p: i32) -> Option<Duration> {
        let k = self.users[r].partition_point(|&(q, _)| q < p);
        k.checked_sub(1).map(|k| self.longest[r][k])
    }

    /// The lowest priority among the users of `r`, if any.
    pub(super) fn lowest_user(&self, r: usize) -> Option<i32> {
        self.users[r].first().map(|&(p, _)| p)
    }

    /// The tasks with a section and a priority below `p`.
    pub(super) fn lockers_below<'a>(&'a self, ts: &'a TaskSet, p: i32) -> &'a [usize] {
        &self.lockers[..self.lockers.partition_point(|&j| ts.tasks[j].priority < p)]
    }

    /// Whether some task has a priority strictly between `lo` and `hi`.
    pub(super) fn any_between(&self, lo: i32, hi: i32) -> bool {
        let from = self.priorities.partition_point(|&q| q <= lo);
        self.priorities.get(from).is_some_and(|&q| q < hi)
    }

    /// `Σ` over the tasks of priority below `p` of each one's longest section on a resource
    /// of `rs` that can block priority `p` (the by-task bound of priority inheritance). The
    /// resources that can block `p` change only where `p` passes one of their ceilings, so for
    /// each set `rs` the sums are kept per ceiling band and read with two binary searches.
    pub(super) fn lower_task_sum(&self, ts: &TaskSet, rs: &[usize], p: i32) -> Duration {
        let mut cache = self.bands.borrow_mut();
        let at = match cache.iter().position(|(key, _)| key == rs) {
            Some(at) => Some(at),
            None if cache.len() < MAX_SETS => {
                cache.push((rs.to_vec(), self.build_bands(ts, rs)));
                Some(cache.len() - 1)
            }
            None => None,
        };
        match at.and_then(|at| cache[at].1.as_ref()) {
            Some(b) => {
                let band = b.ceilings.partition_point(|&c| c < p);
                let below = self.lockers.partition_point(|&j| ts.tasks[j].priority < p);
                b.sums.get(band).map_or(Duration::ZERO, |sums| sums[below])
            }
            None => self.lockers_below(ts, p).iter().filter_map(|&j| self.longest_blocking(ts, j, rs, p)).sum(),
        }
    }

    /// Task `j`'s longest section on a resource of `rs` that can block priority `p`.
    fn longest_blocking(&self, ts: &TaskSet, j: usize, rs: &[usize], p: i32) -> Option<Duration> {
        ts.tasks[j]
            .sections
            .iter()
            .filter(|s| rs.contains(&s.resource) && self.can_block(s.resource, p))
            .map(|s| s.duration)
            .max()
    }

    fn build_bands(&self, ts: &TaskSet, rs: &[usize]) -> Option<Bands> {
        let mut ceilings: Vec<i32> = rs.iter().filter_map(|&r| self.ceiling.get(r).copied().flatten()).collect();
        ceilings.sort_unstable();
        ceilings.dedup();
        if ceilings.len().saturating_mul(self.lockers.len() + 1) > MAX_ENTRIES {
            return None;
        }
        // In band k every resource of rs with a ceiling of at least ceilings[k] can block.
        let sums = ceilings
            .iter()
            .map(|&c| {
                let mut sum = Duration::ZERO;
                std::iter::once(Duration::ZERO)
                    .chain(self.lockers.iter().map(|&j| {
                        sum += self.longest_blocking(ts, j, rs, c).unwrap_or_default();
                        sum
                    }))
                    .collect()
            })
            .collect();
        Some(Bands { ceilings, sums })
    }
}
