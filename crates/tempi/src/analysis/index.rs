//! What the blocking terms and response times ask of a task set again and again, computed
//! once: each resource's ceiling, its users sorted by priority with their longest section
//! and their cost under RCS (and the running maxima of those), its users with a restartable
//! section (the victims an RCS request can abort), the tasks that lock anything, and every
//! priority in order. With it a blocking term costs a few binary searches per resource instead of a pass
//! over every task (and, for each section, another pass to find the ceiling).
//!
//! Owns this index only. Must not hold a bound or a test: `blocking.rs` and
//! `fixed_priority.rs` read it.

use std::cell::RefCell;
use std::time::Duration;

use super::{Protocol, TaskSet};

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

/// A resource set, whether its sections count at their RCS cost, and its [`Bands`] (`None`: too
/// large, sum directly).
type CachedBands = (Vec<usize>, bool, Option<Bands>);

/// A task set's resource users and priorities, sorted for lookups by priority.
pub(super) struct Index {
    /// The ceiling of each resource ([`TaskSet::ceiling`]).
    ceiling: Vec<Option<i32>>,
    /// Per resource: `(priority, longest section on it, its cost under RCS)` of each task
    /// that uses it, by increasing priority. The RCS cost is what the task's holding can cost
    /// a more urgent requester: the resource's restart cost for a restartable section, the
    /// section for a guarded one, whichever is larger.
    users: Vec<Vec<(i32, Duration, Duration)>>,
    /// Per resource: `longest[k]` is the longest of `users[..=k]`.
    longest: Vec<Vec<Duration>>,
    /// Per resource: `costliest[k]` is the largest RCS cost of `users[..=k]`.
    costliest: Vec<Vec<Duration>>,
    /// Per resource: `(priority, longest restartable section on it)` of each task with a
    /// restartable (not guarded) section on it, by increasing priority: the victims an RCS
    /// request can abort.
    restartable: Vec<Vec<(i32, Duration)>>,
    /// The priorities of the tasks with a restartable section on an RCS resource, in
    /// increasing order.
    victims: Vec<i32>,
    /// The tasks with at least one section, by increasing priority.
    lockers: Vec<usize>,
    /// Every task's priority, in increasing order.
    priorities: Vec<i32>,
    /// [`Bands`] per resource set asked about, and whether its sections count at their RCS
    /// cost (`None`: too large, sum directly).
    bands: RefCell<Vec<CachedBands>>,
}

impl Index {
    /// Index `ts` (sections must name existing resources, as [`TaskSet::validate`] checks;
    /// others are ignored).
    pub(super) fn new(ts: &TaskSet) -> Index {
        let n = ts.resources.len();
        let mut users: Vec<Vec<(i32, Duration, Duration)>> = vec![Vec::new(); n];
        let mut restartable: Vec<Vec<(i32, Duration)>> = vec![Vec::new(); n];
        let mut victims = Vec::new();
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
                let r = s.resource;
                let restart = Some(ts.resources[r].restart_cost);
                let (longest, cost) = (t.longest_on(r), t.blocking_cost_on(r, restart));
                users[r].push((t.priority, longest.unwrap_or_default(), cost.unwrap_or_default()));
                if let Some(z) = t.longest_restartable_on(r) {
                    restartable[r].push((t.priority, z));
                }
            }
            let rcs = |r: usize| ts.resources.get(r).is_some_and(|x| x.protocol == Protocol::Rcs);
            if t.sections.iter().any(|s| !s.guarded && rcs(s.resource)) {
                victims.push(t.priority);
            }
        }
        victims.sort_unstable();
        lockers.sort_by_key(|&i| ts.tasks[i].priority);
        let mut ceiling = Vec::with_capacity(n);
        let mut longest = Vec::with_capacity(n);
        let mut costliest = Vec::with_capacity(n);
        for (r, u) in users.iter_mut().enumerate() {
            u.sort_by_key(|&(p, _, _)| p);
            restartable[r].sort_by_key(|&(p, _)| p);
            ceiling.push(ts.resources[r].ceiling.or_else(|| u.last().map(|&(p, _, _)| p)));
            longest.push(running_max(u.iter().map(|&(_, d, _)| d)));
            costliest.push(running_max(u.iter().map(|&(_, _, c)| c)));
        }
        let mut priorities: Vec<i32> = ts.tasks.iter().map(|t| t.priority).collect();
        priorities.sort_unstable();
        Index {
            ceiling,
            users,
            longest,
            costliest,
            restartable,
            victims,
            lockers,
            priorities,
            bands: RefCell::new(Vec::new()),
        }
    }

    /// Whether resource `r` can block a task of priority `p`: its ceiling is at least `p`.
    pub(super) fn can_block(&self, r: usize, p: i32) -> bool {
        self.ceiling.get(r).copied().flatten().is_some_and(|c| c >= p)
    }

    /// The longest section on `r` of a task of priority below `p`, if one uses it.
    pub(super) fn longest_below(&self, r: usize, p: i32) -> Option<Duration> {
        let k = self.users[r].partition_point(|&(q, _, _)| q < p);
        k.checked_sub(1).map(|k| self.longest[r][k])
    }

    /// The largest RCS cost (restart cost of a restartable section, or a guarded section) on
    /// `r` of a task of priority below `p`, if one uses it.
    pub(super) fn costliest_below(&self, r: usize, p: i32) -> Option<Duration> {
        let k = self.users[r].partition_point(|&(q, _, _)| q < p);
        k.checked_sub(1).map(|k| self.costliest[r][k])
    }

    /// The lowest priority among the users of `r`, if any.
    pub(super) fn lowest_user(&self, r: usize) -> Option<i32> {
        self.users[r].first().map(|&(p, _, _)| p)
    }

    /// The highest priority among the users of `r`, if any.
    pub(super) fn highest_user(&self, r: usize) -> Option<i32> {
        self.users[r].last().map(|&(p, _, _)| p)
    }

    /// The tasks with a restartable section on `r`, as `(priority, longest restartable
    /// section on r)`, by increasing priority.
    pub(super) fn restartable(&self, r: usize) -> &[(i32, Duration)] {
        &self.restartable[r]
    }

    /// The highest priority of a task with a restartable section on `r` below another user of
    /// `r` (a task an RCS request on `r` can abort), if any.
    pub(super) fn highest_victim(&self, r: usize) -> Option<i32> {
        let top = self.highest_user(r)?;
        let v = &self.restartable[r];
        v[..v.partition_point(|&(q, _)| q < top)].last().map(|&(q, _)| q)
    }

    /// The priorities of the tasks with a restartable section on an RCS resource, in
    /// increasing order.
    pub(super) fn victims(&self) -> &[i32] {
        &self.victims
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
    ///
    /// With `rcs`, each section counts for what it costs under RCS
    /// ([`super::model::Section::blocking_cost`]) instead of its length.
    pub(super) fn lower_task_sum(&self, ts: &TaskSet, rs: &[usize], p: i32, rcs: bool) -> Duration {
        let mut cache = self.bands.borrow_mut();
        let at = match cache.iter().position(|(key, flag, _)| *flag == rcs && key == rs) {
            Some(at) => Some(at),
            None if cache.len() < MAX_SETS => {
                cache.push((rs.to_vec(), rcs, self.build_bands(ts, rs, rcs)));
                Some(cache.len() - 1)
            }
            None => None,
        };
        match at.and_then(|at| cache[at].2.as_ref()) {
            Some(b) => {
                let band = b.ceilings.partition_point(|&c| c < p);
                let below = self.lockers.partition_point(|&j| ts.tasks[j].priority < p);
                b.sums.get(band).map_or(Duration::ZERO, |sums| sums[below])
            }
            None => self.lockers_below(ts, p).iter().filter_map(|&j| self.longest_blocking(ts, j, rs, p, rcs)).sum(),
        }
    }

    /// Task `j`'s longest section on a resource of `rs` that can block priority `p` (with
    /// `rcs`, its costliest under RCS).
    fn longest_blocking(&self, ts: &TaskSet, j: usize, rs: &[usize], p: i32, rcs: bool) -> Option<Duration> {
        ts.tasks[j]
            .sections
            .iter()
            .filter(|s| rs.contains(&s.resource) && self.can_block(s.resource, p))
            .map(|s| s.blocking_cost(rcs.then(|| ts.resources[s.resource].restart_cost)))
            .max()
    }

    fn build_bands(&self, ts: &TaskSet, rs: &[usize], rcs: bool) -> Option<Bands> {
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
                        sum += self.longest_blocking(ts, j, rs, c, rcs).unwrap_or_default();
                        sum
                    }))
                    .collect()
            })
            .collect();
        Some(Bands { ceilings, sums })
    }
}

/// The running maximum of `values`.
fn running_max(values: impl Iterator<Item = Duration>) -> Vec<Duration> {
    let mut max = Duration::ZERO;
    values
        .map(|d| {
            max = max.max(d);
            max
        })
        .collect()
}
