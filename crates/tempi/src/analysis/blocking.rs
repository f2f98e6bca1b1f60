//! The blocking terms `B_i` of each protocol ([`TaskSet::blocking`] and its variants).
//!
//! Owns the per-protocol bounds (Tokuda and Nakajima 1993, section 2.3; Sha, Rajkumar and
//! Lehoczky 1990; Baker 1991). Must not run a schedulability test: the tests in
//! `fixed_priority.rs` and `edf.rs` take the terms from here.

use std::time::Duration;

use super::index::Index;
use super::{Protocol, TaskSet};

/// A blocking term per protocol, for comparisons.
///
/// ```
/// use std::time::Duration;
/// use tempi::analysis::{Protocol, Task, TaskSet, Resource};
/// let mut ts = TaskSet::new();
/// ts.add_resource(Resource::new("m", Protocol::Bpi));
/// ts.add_task(Task::new("a", Duration::from_millis(1), Duration::from_millis(4)).priority(2));
/// let all = ts.blocking_all(0);
/// assert_eq!(all.len(), Protocol::ALL.len());
/// ```
pub type BlockingTable = Vec<(Protocol, Option<Duration>)>;

impl TaskSet {
    /// The worst-case blocking term `B_i` of task `i` with every resource under `protocol`
    /// (whatever the resources declare). `None` means unbounded (basic priority with a task of
    /// intermediate priority that can prolong the inversion).
    ///
    /// | protocol | `B_i` |
    /// |---|---|
    /// | km | longest section of any lower-priority task |
    /// | bp | unbounded if some lower task `j` shares a resource with `i` and a task lies strictly between `j` and `i`; else as bpi over the resources `i` locks (no inheritance, so no push-through) |
    /// | bpi | min(Σ over lower tasks of their longest section on a resource with ceiling ≥ `P_i`, Σ over such resources of the longest lower-priority section on it) |
    /// | pcp, srp | the single longest lower-priority section on a resource with ceiling ≥ `P_i` |
    /// | rcs | as bpi, with a lower task's section counted for its restart cost, or its length if held with a guard ([`crate::analysis::Task::guarded_section`]) |
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Protocol, Resource, Task, TaskSet};
    /// let ms = Duration::from_millis;
    /// let mut ts = TaskSet::new();
    /// let a = ts.add_resource(Resource::new("a", Protocol::Bpi));
    /// let b = ts.add_resource(Resource::new("b", Protocol::Bpi));
    /// ts.add_task(Task::new("h", ms(2), ms(10)).priority(3).section(a, ms(1)).section(b, ms(1)));
    /// ts.add_task(Task::new("m", ms(3), ms(20)).priority(2).section(a, ms(2)));
    /// ts.add_task(Task::new("l", ms(4), ms(40)).priority(1).section(b, ms(3)));
    /// assert_eq!(ts.blocking_under(0, Protocol::Bpi), Some(ms(5))); // m's 2 + l's 3
    /// assert_eq!(ts.blocking_under(0, Protocol::Pcp), Some(ms(3))); // only the longest
    /// assert_eq!(ts.blocking_under(0, Protocol::Bp), None);         // m can prolong l's inversion
    /// ```
    pub fn blocking_under(&self, i: usize, protocol: Protocol) -> Option<Duration> {
        self.blocking_under_with(&Index::new(self), i, protocol)
    }

    /// [`TaskSet::blocking_under`] with the index built.
    pub(super) fn blocking_under_with(&self, index: &Index, i: usize, protocol: Protocol) -> Option<Duration> {
        let all: Vec<usize> = (0..self.resources.len()).collect();
        self.blocking_on(index, i, protocol, &all)
    }

    /// The blocking term of task `i` under `protocol`, counting only the resources in `rs`
    /// (distinct indices). Reads the users of each resource from `index`, so the cost grows
    /// with the resources and the tasks that lock, not with the whole task set.
    fn blocking_on(&self, index: &Index, i: usize, protocol: Protocol, rs: &[usize]) -> Option<Duration> {
        let p = self.tasks[i].priority;
        let own = |r: usize| self.tasks[i].sections.iter().any(|s| s.resource == r);
        match protocol {
            // MSRP on one CPU: a lower task's global section (its spin included, once the
            // task set is inflated) is not preemptible, whoever it blocks.
            Protocol::Km | Protocol::Msrp => {
                rs.iter().filter_map(|&r| index.longest_below(r, p)).max().or(Some(Duration::ZERO))
            }
            Protocol::Pcp | Protocol::Srp => rs
                .iter()
                .filter(|&&r| index.can_block(r, p))
                .filter_map(|&r| index.longest_below(r, p))
                .max()
                .or(Some(Duration::ZERO)),
            Protocol::Bpi => Some(self.inheritance_bound(index, rs, p, false)),
            Protocol::Bp => {
                // Without inheritance, a lower task j that holds a resource `i` wants can be
                // preempted for as long as tasks strictly between j and i keep running; the
                // lowest such j leaves the widest gap.
                let direct: Vec<usize> = rs.iter().copied().filter(|&r| own(r)).collect();
                let lowest = direct.iter().filter_map(|&r| index.lowest_user(r)).filter(|&q| q < p).min();
                if lowest.is_some_and(|q| index.any_between(q, p)) {
                    return None;
                }
                // Bounded: only direct blocking, on the resources `i` itself locks.
                Some(self.inheritance_bound(index, &direct, p, false))
            }
            // The paper (section 2.3): B_i is the abort-and-recovery time. A lower task runs
            // while a job of priority at least P_i is pending only to recover a section it
            // entered before (at the aborter's urgency, so also when the aborter is a more
            // urgent task and i locks nothing), or to finish a section it holds with a guard
            // (inheritance, as bpi). Either way it then holds nothing: the inheritance bounds
            // with each section at its RCS cost.
            Protocol::Rcs => Some(self.inheritance_bound(index, rs, p, true)),
        }
    }

    /// Sha, Rajkumar and Lehoczky's two bounds for priority inheritance, the smaller one:
    /// each lower task blocks at most once, and each resource blocks at most once. With `rcs`
    /// a section blocks for its RCS cost (the restart cost, or the section if guarded).
    fn inheritance_bound(&self, index: &Index, rs: &[usize], p: i32, rcs: bool) -> Duration {
        let by_task = index.lower_task_sum(self, rs, p, rcs);
        let below = |r: usize| if rcs { index.costliest_below(r, p) } else { index.longest_below(r, p) };
        let by_resource: Duration = rs.iter().filter(|&&r| index.can_block(r, p)).filter_map(|&r| below(r)).sum();
        by_task.min(by_resource)
    }

    /// The blocking term of task `i` under the resources' own protocols. When several
    /// protocols are mixed, the per-protocol terms (each over its own resources) are added, a
    /// conservative combination; `None` if any is unbounded. The exception is MSRP: its
    /// global sections and the local resources under SRP block a task at most once in all,
    /// before it starts, so those two terms combine by their maximum (Gai, Lipari and Di
    /// Natale's `B_i = max(B_local, B_global)`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Protocol, Resource, Task, TaskSet};
    /// let ms = Duration::from_millis;
    /// let mut ts = TaskSet::new();
    /// ts.add_resource(Resource::new("m", Protocol::Km));
    /// ts.add_task(Task::new("h", ms(1), ms(10)).priority(2));
    /// ts.add_task(Task::new("l", ms(3), ms(20)).priority(1).section(0, ms(2)));
    /// assert_eq!(ts.blocking(0), Some(ms(2))); // KM blocks even tasks that never lock
    /// ```
    pub fn blocking(&self, i: usize) -> Option<Duration> {
        self.blocking_with(&Index::new(self), i)
    }

    /// [`TaskSet::blocking`] with the index built.
    pub(super) fn blocking_with(&self, index: &Index, i: usize) -> Option<Duration> {
        let mut total = Duration::ZERO;
        // `None`: no resource under the protocol; `Some(None)`: an unbounded term.
        let of = |protocol: Protocol| -> Option<Option<Duration>> {
            let rs: Vec<usize> =
                (0..self.resources.len()).filter(|&r| self.resources[r].protocol == protocol).collect();
            (!rs.is_empty()).then(|| self.blocking_on(index, i, protocol, &rs))
        };
        let global = match of(Protocol::Msrp) {
            Some(b) => Some(b?),
            None => None,
        };
        for protocol in Protocol::ALL {
            if protocol == Protocol::Srp && global.is_some() {
                continue;
            }
            if let Some(b) = of(protocol) {
                total += b?;
            }
        }
        if let Some(g) = global {
            let srp = match of(Protocol::Srp) {
                Some(b) => b?,
                None => Duration::ZERO,
            };
            total += g.max(srp);
        }
        Some(total)
    }

    /// The blocking term of task `i` under each protocol in turn (every resource switched to
    /// it), for comparison.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Protocol, Resource, Task, TaskSet};
    /// let mut ts = TaskSet::new();
    /// ts.add_resource(Resource::new("m", Protocol::Bpi));
    /// ts.add_task(Task::new("a", Duration::from_millis(1), Duration::from_millis(4)).priority(2));
    /// assert!(ts.blocking_all(0).iter().all(|(_, b)| *b == Some(Duration::ZERO)));
    /// ```
    pub fn blocking_all(&self, i: usize) -> BlockingTable {
        self.blocking_all_with(&Index::new(self), i)
    }

    /// [`TaskSet::blocking_all`] with the index built.
    pub(super) fn blocking_all_with(&self, index: &Index, i: usize) -> BlockingTable {
        Protocol::ALL.iter().map(|&p| (p, self.blocking_under_with(index, i, p))).collect()
    }
}
