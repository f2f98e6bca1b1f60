//! Schedulability analysis of periodic tasks that share resources under a locking protocol.
//!
//! Pure functions over a task-set model ([`TaskSet`]): no runtime, no clock. The formulas and
//! their sources are listed in `docs/ANALYSIS.md`; in short:
//!
//! - [`TaskSet::blocking`]: the worst-case blocking term `B_i` of each protocol (Tokuda and
//!   Nakajima 1993, section 2.3, for the protocols; Sha, Rajkumar and Lehoczky 1990 for the
//!   inheritance and ceiling bounds; Baker 1991 for SRP).
//! - [`TaskSet::liu_layland`]: the rate-monotonic utilisation test with blocking, in the form
//!   of Tokuda and Nakajima's section 2.3.
//! - [`TaskSet::response_times`]: exact response-time analysis with blocking (Joseph and
//!   Pandya 1986; Audsley et al. 1993, with the blocking term added).
//! - [`TaskSet::edf_tests`]: EDF with critical sections: the paper's kernelized-monitor bound
//!   and Baker's (1991) SRP test.
//! - [`TaskSet::analyze`]: all of it, as a [`Verdict`].
//!
//! Conventions: a larger `priority` is more urgent (as in [`crate::ThreadSpec::priority`]);
//! `hp(i)` is every other task with a priority at least `P_i` (equal priorities are counted as
//! interference, which is safe under FIFO order among equals); `lp(i)` is every task with a
//! priority strictly below `P_i`. Critical sections are not nested; a task may have several.
//!
//! ```
//! use std::time::Duration;
//! use tempi::analysis::{Protocol, Resource, Task, TaskSet};
//!
//! let ms = Duration::from_millis;
//! let mut ts = TaskSet::new();
//! let r = ts.add_resource(Resource::new("bus", Protocol::Pcp));
//! ts.add_task(Task::new("high", ms(1), ms(5)).priority(3).section(r, ms(1)));
//! ts.add_task(Task::new("mid", ms(2), ms(10)).priority(2));
//! ts.add_task(Task::new("low", ms(3), ms(20)).priority(1).section(r, ms(2)));
//! let v = ts.analyze();
//! assert_eq!(v.tasks[0].blocking, Some(ms(2))); // low's section on the bus
//! assert_eq!(v.tasks[0].response.bounded(), Some(ms(3)));
//! assert!(v.schedulable);
//! ```

use std::fmt;
use std::time::Duration;

#[cfg(test)]
mod tests;

/// A locking protocol, as far as the analysis is concerned.
///
/// ```
/// use tempi::analysis::Protocol;
/// assert_eq!(Protocol::from_name("icpp"), Some(Protocol::Srp));
/// assert_eq!(Protocol::Pcp.name(), "pcp");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// Kernelized monitor: critical sections are not preemptable.
    Km,
    /// Basic priority: priority-ordered waiting, no inheritance (blocking is unbounded).
    Bp,
    /// Basic priority inheritance.
    Bpi,
    /// Priority ceiling protocol (Sha, Rajkumar and Lehoczky).
    Pcp,
    /// Stack resource policy / immediate ceiling (Baker).
    Srp,
    /// Restartable critical sections: the higher-priority task aborts the holder's section.
    Rcs,
}

impl Protocol {
    /// Every protocol, in the order reports list them.
    ///
    /// ```
    /// assert_eq!(tempi::analysis::Protocol::ALL.len(), 6);
    /// ```
    pub const ALL: [Protocol; 6] =
        [Protocol::Km, Protocol::Bp, Protocol::Bpi, Protocol::Pcp, Protocol::Srp, Protocol::Rcs];

    /// The protocol a registry name denotes (the names of [`crate::policy::lock::by_name`]).
    ///
    /// ```
    /// assert_eq!(tempi::analysis::Protocol::from_name("pi"), Some(tempi::analysis::Protocol::Bpi));
    /// assert_eq!(tempi::analysis::Protocol::from_name("spin"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Protocol> {
        Some(match name {
            "km" => Protocol::Km,
            "bp" => Protocol::Bp,
            "bpi" | "pi" => Protocol::Bpi,
            "pcp" => Protocol::Pcp,
            "srp" | "icpp" => Protocol::Srp,
            "rcs" => Protocol::Rcs,
            _ => return None,
        })
    }

    /// The registry name.
    ///
    /// ```
    /// assert_eq!(tempi::analysis::Protocol::Rcs.name(), "rcs");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Km => "km",
            Protocol::Bp => "bp",
            Protocol::Bpi => "bpi",
            Protocol::Pcp => "pcp",
            Protocol::Srp => "srp",
            Protocol::Rcs => "rcs",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A shared resource (a lock) and its protocol.
///
/// ```
/// use std::time::Duration;
/// use tempi::analysis::{Protocol, Resource};
/// let r = Resource::new("bus", Protocol::Rcs).ceiling(4).restart_cost(Duration::from_micros(816));
/// assert_eq!(r.ceiling, Some(4));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    /// Name, for reports.
    pub name: String,
    /// Its locking protocol.
    pub protocol: Protocol,
    /// Declared ceiling (a priority); `None` means the highest priority of the tasks using it.
    pub ceiling: Option<i32>,
    /// Under RCS, the cost of aborting a holder's section and recovering the resource's state
    /// (the paper's `C_abort + C_recover`). Zero by default.
    pub restart_cost: Duration,
}

impl Resource {
    /// A resource without a declared ceiling and with no restart cost.
    ///
    /// ```
    /// let r = tempi::analysis::Resource::new("m", tempi::analysis::Protocol::Bpi);
    /// assert_eq!(r.ceiling, None);
    /// ```
    pub fn new(name: impl Into<String>, protocol: Protocol) -> Resource {
        Resource { name: name.into(), protocol, ceiling: None, restart_cost: Duration::ZERO }
    }

    /// Declare the ceiling priority.
    ///
    /// ```
    /// let r = tempi::analysis::Resource::new("m", tempi::analysis::Protocol::Pcp).ceiling(9);
    /// assert_eq!(r.ceiling, Some(9));
    /// ```
    pub fn ceiling(mut self, priority: i32) -> Resource {
        self.ceiling = Some(priority);
        self
    }

    /// Set the RCS abort-and-recovery cost.
    ///
    /// ```
    /// use std::time::Duration;
    /// let r = tempi::analysis::Resource::new("m", tempi::analysis::Protocol::Rcs).restart_cost(Duration::from_micros(5));
    /// assert_eq!(r.restart_cost, Duration::from_micros(5));
    /// ```
    pub fn restart_cost(mut self, cost: Duration) -> Resource {
        self.restart_cost = cost;
        self
    }
}

/// One critical section of a task's job: a resource (index into [`TaskSet::resources`]) held
/// for `duration` of execution. Sections are not nested.
///
/// ```
/// let s = tempi::analysis::Section { resource: 0, duration: std::time::Duration::from_millis(2) };
/// assert_eq!(s.resource, 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    /// Index of the resource in the task set.
    pub resource: usize,
    /// Execution time spent holding it.
    pub duration: Duration,
}

/// A periodic task: worst-case execution time `C` (sections included), period `T`, relative
/// deadline `D` (default `T`), fixed priority (larger is more urgent) and critical sections.
///
/// ```
/// use std::time::Duration;
/// let ms = Duration::from_millis;
/// let t = tempi::analysis::Task::new("t", ms(2), ms(10)).deadline(ms(8)).priority(5).section(0, ms(1));
/// assert_eq!((t.deadline, t.priority, t.sections.len()), (ms(8), 5, 1));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// Name, for reports.
    pub name: String,
    /// Worst-case execution time per job, critical sections included.
    pub wcet: Duration,
    /// Period (or minimum inter-arrival time).
    pub period: Duration,
    /// Relative deadline.
    pub deadline: Duration,
    /// Fixed priority; larger is more urgent.
    pub priority: i32,
    /// Critical sections of one job.
    pub sections: Vec<Section>,
}

impl Task {
    /// A task with `D = T`, priority 0 and no critical section.
    ///
    /// ```
    /// use std::time::Duration;
    /// let t = tempi::analysis::Task::new("t", Duration::from_millis(1), Duration::from_millis(4));
    /// assert_eq!(t.deadline, t.period);
    /// ```
    pub fn new(name: impl Into<String>, wcet: Duration, period: Duration) -> Task {
        Task { name: name.into(), wcet, period, deadline: period, priority: 0, sections: Vec::new() }
    }

    /// Set the relative deadline.
    ///
    /// ```
    /// use std::time::Duration;
    /// let t = tempi::analysis::Task::new("t", Duration::from_millis(1), Duration::from_millis(4)).deadline(Duration::from_millis(3));
    /// assert_eq!(t.deadline, Duration::from_millis(3));
    /// ```
    pub fn deadline(mut self, deadline: Duration) -> Task {
        self.deadline = deadline;
        self
    }

    /// Set the priority (larger is more urgent).
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(tempi::analysis::Task::new("t", Duration::ZERO, Duration::from_millis(4)).priority(7).priority, 7);
    /// ```
    pub fn priority(mut self, priority: i32) -> Task {
        self.priority = priority;
        self
    }

    /// Add a critical section on resource `resource` lasting `duration`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let t = tempi::analysis::Task::new("t", Duration::from_millis(3), Duration::from_millis(9)).section(1, Duration::from_millis(1));
    /// assert_eq!(t.sections[0].resource, 1);
    /// ```
    pub fn section(mut self, resource: usize, duration: Duration) -> Task {
        self.sections.push(Section { resource, duration });
        self
    }

    /// Utilisation `C/T`.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(tempi::analysis::Task::new("t", Duration::from_millis(1), Duration::from_millis(4)).utilisation(), 0.25);
    /// ```
    pub fn utilisation(&self) -> f64 {
        secs(self.wcet) / secs(self.period)
    }

    /// The longest section on resource `r`, if the task uses it.
    fn longest_on(&self, r: usize) -> Option<Duration> {
        self.sections.iter().filter(|s| s.resource == r).map(|s| s.duration).max()
    }
}

/// Why a task set cannot be analysed.
///
/// ```
/// use std::time::Duration;
/// let mut ts = tempi::analysis::TaskSet::new();
/// ts.add_task(tempi::analysis::Task::new("t", Duration::from_millis(1), Duration::ZERO));
/// assert!(matches!(ts.validate(), Err(tempi::analysis::ModelError::ZeroPeriod { .. })));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelError {
    /// A task has a zero period.
    ZeroPeriod {
        /// The task's name.
        task: String,
    },
    /// A task has a zero deadline.
    ZeroDeadline {
        /// The task's name.
        task: String,
    },
    /// A section names a resource that does not exist.
    UnknownResource {
        /// The task's name.
        task: String,
        /// The index it used.
        resource: usize,
    },
    /// A task's sections add up to more than its WCET.
    SectionsExceedWcet {
        /// The task's name.
        task: String,
    },
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::ZeroPeriod { task } => write!(f, "task \"{task}\": the period must be positive"),
            ModelError::ZeroDeadline { task } => write!(f, "task \"{task}\": the deadline must be positive"),
            ModelError::UnknownResource { task, resource } => {
                write!(f, "task \"{task}\": critical section on unknown resource #{resource}")
            }
            ModelError::SectionsExceedWcet { task } => {
                write!(f, "task \"{task}\": its critical sections add up to more than its WCET")
            }
        }
    }
}

impl std::error::Error for ModelError {}

/// A set of periodic tasks on one processor and the resources they share.
///
/// ```
/// use std::time::Duration;
/// use tempi::analysis::{Protocol, Resource, Task, TaskSet};
/// let mut ts = TaskSet::new();
/// let r = ts.add_resource(Resource::new("m", Protocol::Bpi));
/// let t = ts.add_task(Task::new("t", Duration::from_millis(1), Duration::from_millis(4)).section(r, Duration::from_millis(1)));
/// assert_eq!((r, t), (0, 0));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskSet {
    /// The tasks, in any order.
    pub tasks: Vec<Task>,
    /// The resources; sections refer to them by index.
    pub resources: Vec<Resource>,
}

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
    /// An empty task set.
    ///
    /// ```
    /// assert!(tempi::analysis::TaskSet::new().tasks.is_empty());
    /// ```
    pub fn new() -> TaskSet {
        TaskSet::default()
    }

    /// Add a resource; returns its index.
    ///
    /// ```
    /// let mut ts = tempi::analysis::TaskSet::new();
    /// assert_eq!(ts.add_resource(tempi::analysis::Resource::new("m", tempi::analysis::Protocol::Km)), 0);
    /// ```
    pub fn add_resource(&mut self, r: Resource) -> usize {
        self.resources.push(r);
        self.resources.len() - 1
    }

    /// Add a task; returns its index.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut ts = tempi::analysis::TaskSet::new();
    /// assert_eq!(ts.add_task(tempi::analysis::Task::new("t", Duration::ZERO, Duration::from_millis(1))), 0);
    /// ```
    pub fn add_task(&mut self, t: Task) -> usize {
        self.tasks.push(t);
        self.tasks.len() - 1
    }

    /// Check the model: positive periods and deadlines, known resources, sections within the
    /// WCET.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut ts = tempi::analysis::TaskSet::new();
    /// ts.add_task(tempi::analysis::Task::new("t", Duration::from_millis(1), Duration::from_millis(2)).section(3, Duration::ZERO));
    /// assert!(ts.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), ModelError> {
        for t in &self.tasks {
            let task = t.name.clone();
            if t.period.is_zero() {
                return Err(ModelError::ZeroPeriod { task });
            }
            if t.deadline.is_zero() {
                return Err(ModelError::ZeroDeadline { task });
            }
            if let Some(s) = t.sections.iter().find(|s| s.resource >= self.resources.len()) {
                return Err(ModelError::UnknownResource { task, resource: s.resource });
            }
            if t.sections.iter().map(|s| s.duration).sum::<Duration>() > t.wcet {
                return Err(ModelError::SectionsExceedWcet { task });
            }
        }
        Ok(())
    }

    /// The ceiling of resource `r`: declared, else the highest priority among the tasks that
    /// use it (`None` if nobody does).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Protocol, Resource, Task, TaskSet};
    /// let mut ts = TaskSet::new();
    /// ts.add_resource(Resource::new("m", Protocol::Pcp));
    /// ts.add_task(Task::new("a", Duration::from_millis(1), Duration::from_millis(4)).priority(3).section(0, Duration::from_millis(1)));
    /// ts.add_task(Task::new("b", Duration::from_millis(1), Duration::from_millis(8)).priority(1).section(0, Duration::from_millis(1)));
    /// assert_eq!(ts.ceiling(0), Some(3));
    /// ```
    pub fn ceiling(&self, r: usize) -> Option<i32> {
        self.resources.get(r)?.ceiling.or_else(|| {
            self.tasks.iter().filter(|t| t.sections.iter().any(|s| s.resource == r)).map(|t| t.priority).max()
        })
    }

    /// Indices of the tasks of lower priority than task `i`.
    fn lower(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let p = self.tasks[i].priority;
        (0..self.tasks.len()).filter(move |&j| self.tasks[j].priority < p)
    }

    /// Indices of the other tasks of priority at least task `i`'s (interference).
    fn higher(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let p = self.tasks[i].priority;
        (0..self.tasks.len()).filter(move |&j| j != i && self.tasks[j].priority >= p)
    }

    /// Whether resource `r` can block a task of priority `p`: its ceiling is at least `p`.
    fn can_block(&self, r: usize, p: i32) -> bool {
        self.ceiling(r).is_some_and(|c| c >= p)
    }

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
    /// | rcs | Σ over `i`'s own sections on resources that a lower task uses of the resource's restart cost |
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
        let all: Vec<usize> = (0..self.resources.len()).collect();
        self.blocking_on(i, protocol, &all)
    }

    /// The blocking term of task `i` under `protocol`, counting only the resources in `rs`.
    fn blocking_on(&self, i: usize, protocol: Protocol, rs: &[usize]) -> Option<Duration> {
        let p = self.tasks[i].priority;
        let lower: Vec<usize> = self.lower(i).collect();
        // Sections of lower-priority tasks on resources (of `rs`) that can block priority p.
        let blocking_sections = |j: usize| {
            self.tasks[j].sections.iter().filter(|s| rs.contains(&s.resource) && self.can_block(s.resource, p))
        };
        match protocol {
            Protocol::Km => lower
                .iter()
                .flat_map(|&j| self.tasks[j].sections.iter().filter(|s| rs.contains(&s.resource)))
                .map(|s| s.duration)
                .max()
                .or(Some(Duration::ZERO)),
            Protocol::Pcp | Protocol::Srp => {
                lower.iter().flat_map(|&j| blocking_sections(j)).map(|s| s.duration).max().or(Some(Duration::ZERO))
            }
            Protocol::Bpi => Some(self.inheritance_bound(&lower, rs, p)),
            Protocol::Bp => {
                // Without inheritance, a lower task j that holds a resource `i` wants can be
                // preempted for as long as tasks strictly between j and i keep running.
                let own: Vec<usize> = self.tasks[i].sections.iter().map(|s| s.resource).collect();
                for &j in &lower {
                    let shares =
                        self.tasks[j].sections.iter().any(|s| rs.contains(&s.resource) && own.contains(&s.resource));
                    let pj = self.tasks[j].priority;
                    let between =
                        self.tasks.iter().enumerate().any(|(k, t)| k != i && t.priority > pj && t.priority < p);
                    if shares && between {
                        return None;
                    }
                }
                // Bounded: only direct blocking, on the resources `i` itself locks.
                let direct: Vec<usize> = rs.iter().copied().filter(|r| own.contains(r)).collect();
                Some(self.inheritance_bound(&lower, &direct, p))
            }
            Protocol::Rcs => {
                // The paper (section 2.3): B_i is the abort-and-recovery time. Each of i's own
                // sections may find its resource held by a lower task and pay one restart.
                let cost = self.tasks[i]
                    .sections
                    .iter()
                    .filter(|s| rs.contains(&s.resource))
                    .filter(|s| lower.iter().any(|&j| self.tasks[j].longest_on(s.resource).is_some()))
                    .map(|s| self.resources[s.resource].restart_cost)
                    .sum();
                Some(cost)
            }
        }
    }

    /// Sha, Rajkumar and Lehoczky's two bounds for priority inheritance, the smaller one:
    /// each lower task blocks at most once, and each resource blocks at most once.
    fn inheritance_bound(&self, lower: &[usize], rs: &[usize], p: i32) -> Duration {
        let by_task: Duration = lower
            .iter()
            .filter_map(|&j| {
                self.tasks[j]
                    .sections
                    .iter()
                    .filter(|s| rs.contains(&s.resource) && self.can_block(s.resource, p))
                    .map(|s| s.duration)
                    .max()
            })
            .sum();
        let by_resource: Duration = rs
            .iter()
            .filter(|&&r| self.can_block(r, p))
            .filter_map(|&r| lower.iter().filter_map(|&j| self.tasks[j].longest_on(r)).max())
            .sum();
        by_task.min(by_resource)
    }

    /// The blocking term of task `i` under the resources' own protocols. When several
    /// protocols are mixed, the per-protocol terms (each over its own resources) are added, a
    /// conservative combination; `None` if any is unbounded.
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
        let mut total = Duration::ZERO;
        for protocol in Protocol::ALL {
            let rs: Vec<usize> =
                (0..self.resources.len()).filter(|&r| self.resources[r].protocol == protocol).collect();
            if !rs.is_empty() {
                total += self.blocking_on(i, protocol, &rs)?;
            }
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
        Protocol::ALL.iter().map(|&p| (p, self.blocking_under(i, p))).collect()
    }

    /// Task indices by decreasing priority (ties keep their order).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Task, TaskSet};
    /// let mut ts = TaskSet::new();
    /// ts.add_task(Task::new("lo", Duration::ZERO, Duration::from_millis(8)).priority(1));
    /// ts.add_task(Task::new("hi", Duration::ZERO, Duration::from_millis(4)).priority(2));
    /// assert_eq!(ts.by_priority(), vec![1, 0]);
    /// ```
    pub fn by_priority(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.tasks.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.tasks[i].priority));
        order
    }

    /// Whether priorities follow rate-monotonic order (a shorter period never has a lower
    /// priority), which the Liu and Layland bound assumes.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Task, TaskSet};
    /// let mut ts = TaskSet::new();
    /// ts.add_task(Task::new("a", Duration::ZERO, Duration::from_millis(4)).priority(1));
    /// ts.add_task(Task::new("b", Duration::ZERO, Duration::from_millis(8)).priority(2));
    /// assert!(!ts.is_rate_monotonic());
    /// ```
    pub fn is_rate_monotonic(&self) -> bool {
        self.tasks.iter().all(|a| self.tasks.iter().all(|b| !(a.period < b.period && a.priority < b.priority)))
    }

    /// The Liu and Layland test with blocking, as Tokuda and Nakajima (1993, section 2.3) state
    /// it for inheritance protocols under rate-monotonic scheduling: for every task `i` (by
    /// decreasing priority, numbered from 1),
    /// `B_i/T_i + Σ_{j≤i} C_j/T_j ≤ i(2^{1/i} − 1)`. Sufficient only: a failure is
    /// inconclusive. Not applicable (`None`) unless priorities are rate monotonic and every
    /// deadline is at least its period.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Protocol, Resource, Task, TaskSet};
    /// let ms = Duration::from_millis;
    /// let mut ts = TaskSet::new();
    /// ts.add_resource(Resource::new("m", Protocol::Pcp));
    /// ts.add_task(Task::new("a", ms(1), ms(4)).priority(2).section(0, ms(1)));
    /// ts.add_task(Task::new("b", ms(2), ms(8)).priority(1).section(0, ms(1)));
    /// let ll = ts.liu_layland().unwrap();
    /// assert!(ll.passed); // a: 0.25 + 1/4 <= 1; b: 0.5 <= 0.828
    /// ```
    pub fn liu_layland(&self) -> Option<LiuLayland> {
        if !self.is_rate_monotonic() || self.tasks.iter().any(|t| t.deadline < t.period) {
            return None;
        }
        let mut rows = Vec::with_capacity(self.tasks.len());
        let mut sum = 0.0;
        for (k, &i) in self.by_priority().iter().enumerate() {
            let t = &self.tasks[i];
            sum += t.utilisation();
            let n = (k + 1) as f64;
            let bound = n * (2f64.powf(1.0 / n) - 1.0);
            let (load, passed) = match self.blocking(i) {
                Some(b) => {
                    let load = sum + secs(b) / secs(t.period);
                    (Some(load), load <= bound + 1e-12)
                }
                None => (None, false),
            };
            rows.push(LiuLaylandRow { task: i, load, bound, passed });
        }
        let passed = rows.iter().all(|r| r.passed);
        Some(LiuLayland { rows, passed })
    }

    /// The most iterations [`TaskSet::response_time`] makes for one task before it gives up
    /// with [`Response::GaveUp`]. Realistic task sets reach their fixed point in far fewer;
    /// only an interfering utilisation within a hair of 1 with very short periods needs more.
    ///
    /// ```
    /// assert_eq!(tempi::analysis::TaskSet::MAX_RTA_ITERATIONS, 1_000_000);
    /// ```
    pub const MAX_RTA_ITERATIONS: u32 = 1_000_000;

    /// Exact response-time analysis with blocking, under fixed priorities:
    /// `R_i = C_i + B_i + Σ_{j∈hp(i)} ⌈R_i/T_j⌉ C_j`, iterated from `C_i + B_i` to the least
    /// fixed point, stopping as soon as it passes the deadline. Under RCS each higher-priority
    /// job that shares a resource with `i` may also throw away one of `i`'s sections: that
    /// re-executed work is added per interfering job (see `docs/ANALYSIS.md`).
    ///
    /// Before iterating, the utilisation of the interfering tasks, `Σ_{j∈hp(i)} C_j/T_j`
    /// (with the RCS re-executed work), is compared with 1 exactly, in integers: at 1 or more
    /// there is no fixed point and the task is [`Response::Overloaded`] (the iteration would
    /// otherwise creep up to the deadline one step at a time). Below 1 the iteration is
    /// bounded by the deadline and by [`TaskSet::MAX_RTA_ITERATIONS`], after which the
    /// answer is [`Response::GaveUp`], not a guess.
    ///
    /// The recurrence assumes a job finishes before its task's next release; a result above
    /// the period with `D > T` is reported as [`Response::NotCovered`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Response, Task, TaskSet};
    /// let ms = Duration::from_millis;
    /// let mut ts = TaskSet::new();
    /// ts.add_task(Task::new("t1", ms(1), ms(4)).priority(3));
    /// ts.add_task(Task::new("t2", ms(2), ms(6)).priority(2));
    /// ts.add_task(Task::new("t3", ms(3), ms(13)).priority(1));
    /// let r = ts.response_times();
    /// assert_eq!(r[2], Response::Bounded(ms(10))); // the textbook answer
    /// ```
    pub fn response_times(&self) -> Vec<Response> {
        (0..self.tasks.len()).map(|i| self.response_time(i)).collect()
    }

    /// Response time of task `i` (see [`TaskSet::response_times`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Response, Task, TaskSet};
    /// let mut ts = TaskSet::new();
    /// ts.add_task(Task::new("t", Duration::from_millis(5), Duration::from_millis(4)));
    /// assert_eq!(ts.response_time(0), Response::ExceedsDeadline(Duration::from_millis(5)));
    ///
    /// // A task that runs 1 µs every 1 µs leaves nothing to the one below it.
    /// let us = Duration::from_micros;
    /// let mut ts = TaskSet::new();
    /// ts.add_task(Task::new("full", us(1), us(1)).priority(2));
    /// ts.add_task(Task::new("slow", us(1), Duration::from_secs(100_000)).priority(1));
    /// assert_eq!(ts.response_time(1), Response::Overloaded);
    /// ```
    pub fn response_time(&self, i: usize) -> Response {
        let Some(b) = self.blocking(i) else {
            return Response::Unbounded;
        };
        let t = &self.tasks[i];
        // Each interfering task as (its period, the work one of its jobs costs task i).
        let hp: Vec<(u128, u128)> = self
            .higher(i)
            .map(|j| (nanos(self.tasks[j].period), nanos(self.tasks[j].wcet) + nanos(self.restart_penalty(i, j))))
            .collect();
        let base = nanos(t.wcet).saturating_add(nanos(b));
        let deadline = nanos(t.deadline);
        if base > deadline {
            return Response::ExceedsDeadline(from_nanos(base));
        }
        // With no demand of its own the task is done at once, whatever the others do.
        if base > 0 && utilisation_reaches_one(hp.iter().map(|&(period, cost)| (cost, period))) {
            return Response::Overloaded;
        }
        let mut r = base;
        for _ in 0..Self::MAX_RTA_ITERATIONS {
            let next = hp
                .iter()
                .map(|&(period, cost)| r.div_ceil(period).saturating_mul(cost))
                .fold(base, u128::saturating_add);
            if next == r {
                if r > nanos(t.period) && t.deadline > t.period {
                    return Response::NotCovered(from_nanos(r));
                }
                return Response::Bounded(from_nanos(r));
            }
            if next > deadline {
                return Response::ExceedsDeadline(from_nanos(next));
            }
            r = next;
        }
        Response::GaveUp(from_nanos(r))
    }

    /// Under RCS, the work of task `i` that one job of higher-priority task `j` can make it
    /// redo: its longest section on an RCS resource that `j` also uses.
    fn restart_penalty(&self, i: usize, j: usize) -> Duration {
        self.tasks[i]
            .sections
            .iter()
            .filter(|s| self.resources[s.resource].protocol == Protocol::Rcs)
            .filter(|s| self.tasks[j].longest_on(s.resource).is_some())
            .map(|s| s.duration + self.resources[s.resource].restart_cost)
            .max()
            .unwrap_or(Duration::ZERO)
    }

    /// The EDF tests with critical sections.
    ///
    /// - `km_bound` — Tokuda and Nakajima (1993, section 2.3), kernelized monitor under EDF:
    ///   `Σ_j (C_j + CS)/T_j ≤ 1`, with `CS` the longest critical section of the set.
    /// - `baker` — Baker (1991), SRP under EDF (and any protocol that blocks at most once, by
    ///   one section of a task with a longer relative deadline: km, pcp, srp): with tasks by
    ///   increasing `D`, for every `k`, `Σ_{j≤k} C_j/D_j + B_k/D_k ≤ 1`, where `B_k` is the
    ///   longest section of a task with a longer deadline on a resource used by a task whose
    ///   deadline is at most `D_k` (km: any section of such a task). `None` for bp, bpi and rcs,
    ///   which it does not cover.
    ///
    /// Both are sufficient tests.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Protocol, Resource, Task, TaskSet};
    /// let ms = Duration::from_millis;
    /// let mut ts = TaskSet::new();
    /// ts.add_resource(Resource::new("m", Protocol::Srp));
    /// ts.add_task(Task::new("a", ms(2), ms(5)).section(0, ms(1)));
    /// ts.add_task(Task::new("b", ms(4), ms(10)).section(0, ms(2)));
    /// let e = ts.edf_tests();
    /// assert!(!e.km_bound.passed); // (2+2)/5 + (4+2)/10 = 1.4
    /// assert!(e.baker.unwrap().passed); // a: 0.4 + 2/5 = 0.8; b: 0.4 + 0.4 = 0.8
    /// ```
    pub fn edf_tests(&self) -> EdfTests {
        let cs = self.tasks.iter().flat_map(|t| t.sections.iter()).map(|s| s.duration).max().unwrap_or_default();
        let load: f64 = self.tasks.iter().map(|t| (secs(t.wcet) + secs(cs)) / secs(t.period)).sum();
        let km_bound = EdfTest { load, passed: load <= 1.0 + 1e-12 };

        let protocols: Vec<Protocol> = self.resources.iter().map(|r| r.protocol).collect();
        let covered = protocols.iter().all(|p| matches!(p, Protocol::Km | Protocol::Pcp | Protocol::Srp));
        let baker = covered.then(|| {
            let mut order: Vec<usize> = (0..self.tasks.len()).collect();
            order.sort_by_key(|&i| self.tasks[i].deadline);
            let mut sum = 0.0;
            let mut worst: f64 = 0.0;
            for (k, &i) in order.iter().enumerate() {
                let t = &self.tasks[i];
                sum += secs(t.wcet) / secs(t.deadline);
                // Resources used by a task at least as urgent as i (preemption level >= i's).
                let urgent = &order[..=k];
                let used = |r: usize| urgent.iter().any(|&u| self.tasks[u].longest_on(r).is_some());
                let b = self
                    .tasks
                    .iter()
                    .filter(|o| o.deadline > t.deadline)
                    .flat_map(|o| o.sections.iter())
                    .filter(|s| self.resources[s.resource].protocol == Protocol::Km || used(s.resource))
                    .map(|s| s.duration)
                    .max()
                    .unwrap_or_default();
                worst = worst.max(sum + secs(b) / secs(t.deadline));
            }
            EdfTest { load: worst, passed: worst <= 1.0 + 1e-12 }
        });
        EdfTests { km_bound, baker }
    }

    /// Everything for a fixed-priority task set: per-task blocking (and the table per
    /// protocol), Liu and Layland, response times, and the verdict (schedulable iff every
    /// response time is bounded and within its deadline). The EDF tests are in
    /// [`TaskSet::edf_tests`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Protocol, Resource, Task, TaskSet};
    /// let ms = Duration::from_millis;
    /// let mut ts = TaskSet::new();
    /// ts.add_resource(Resource::new("m", Protocol::Bp));
    /// ts.add_task(Task::new("h", ms(1), ms(10)).priority(3).section(0, ms(1)));
    /// ts.add_task(Task::new("m", ms(1), ms(20)).priority(2));
    /// ts.add_task(Task::new("l", ms(2), ms(40)).priority(1).section(0, ms(2)));
    /// let v = ts.analyze();
    /// assert_eq!(v.tasks[0].blocking, None); // basic priority: unbounded inversion
    /// assert!(!v.schedulable);
    /// ```
    pub fn analyze(&self) -> Verdict {
        let responses = self.response_times();
        let tasks: Vec<TaskVerdict> = (0..self.tasks.len())
            .map(|i| TaskVerdict {
                task: i,
                blocking: self.blocking(i),
                blocking_by_protocol: self.blocking_all(i),
                response: responses[i],
                schedulable: matches!(responses[i], Response::Bounded(_)),
            })
            .collect();
        let schedulable = tasks.iter().all(|t| t.schedulable);
        Verdict { tasks, liu_layland: self.liu_layland(), schedulable }
    }

    /// The hyperperiod (least common multiple of the periods), if it fits in a `Duration`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Task, TaskSet};
    /// let mut ts = TaskSet::new();
    /// ts.add_task(Task::new("a", Duration::ZERO, Duration::from_millis(4)));
    /// ts.add_task(Task::new("b", Duration::ZERO, Duration::from_millis(6)));
    /// assert_eq!(ts.hyperperiod(), Some(Duration::from_millis(12)));
    /// ```
    pub fn hyperperiod(&self) -> Option<Duration> {
        let mut l: u128 = 1;
        for t in &self.tasks {
            let p = nanos(t.period);
            if p == 0 {
                return None;
            }
            l = l / gcd(l, p) * p;
            if l > u64::MAX as u128 {
                return None;
            }
        }
        Some(from_nanos(l))
    }
}

/// One row of the Liu and Layland test.
///
/// ```
/// let r = tempi::analysis::LiuLaylandRow { task: 0, load: Some(0.5), bound: 1.0, passed: true };
/// assert!(r.passed);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LiuLaylandRow {
    /// Task index.
    pub task: usize,
    /// `B_i/T_i + Σ_{j≤i} C_j/T_j`, or `None` when `B_i` is unbounded.
    pub load: Option<f64>,
    /// `i(2^{1/i} − 1)`.
    pub bound: f64,
    /// `load ≤ bound`.
    pub passed: bool,
}

/// The Liu and Layland test with blocking, per task in decreasing priority order.
///
/// ```
/// use std::time::Duration;
/// let mut ts = tempi::analysis::TaskSet::new();
/// ts.add_task(tempi::analysis::Task::new("a", Duration::from_millis(1), Duration::from_millis(2)));
/// assert!(ts.liu_layland().unwrap().passed);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LiuLayland {
    /// One row per task, by decreasing priority.
    pub rows: Vec<LiuLaylandRow>,
    /// Every row passed (sufficient for schedulability; failing is inconclusive).
    pub passed: bool,
}

/// One EDF utilisation test.
///
/// ```
/// let t = tempi::analysis::EdfTest { load: 0.9, passed: true };
/// assert!(t.passed);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdfTest {
    /// The left-hand side (for Baker's test, its largest value over `k`).
    pub load: f64,
    /// `load ≤ 1`.
    pub passed: bool,
}

/// The EDF tests of [`TaskSet::edf_tests`].
///
/// ```
/// let ts = tempi::analysis::TaskSet::new();
/// assert!(ts.edf_tests().km_bound.passed);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdfTests {
    /// The paper's kernelized-monitor bound `Σ (C_j + CS)/T_j ≤ 1`.
    pub km_bound: EdfTest,
    /// Baker's SRP test, when every resource's protocol is covered by it.
    pub baker: Option<EdfTest>,
}

/// The outcome of response-time analysis for one task.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(tempi::analysis::Response::Bounded(Duration::from_millis(3)).bounded(), Some(Duration::from_millis(3)));
/// assert_eq!(tempi::analysis::Response::Unbounded.bounded(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Response {
    /// The worst-case response time, within the deadline.
    Bounded(Duration),
    /// The iteration passed the deadline at this value: not schedulable.
    ExceedsDeadline(Duration),
    /// The blocking term is unbounded (basic priority): not schedulable.
    Unbounded,
    /// Within the deadline but beyond the period, where the simple recurrence does not apply
    /// (arbitrary deadlines need a busy-period analysis): inconclusive.
    NotCovered(Duration),
    /// The tasks that interfere with it (priority at least its own) have a utilisation of 1 or
    /// more: they can keep the processor busy for ever, so its response time is unbounded.
    /// Not schedulable.
    Overloaded,
    /// The iteration had not converged after [`TaskSet::MAX_RTA_ITERATIONS`] steps; the
    /// response time is at least this value, still within the deadline: inconclusive.
    GaveUp(Duration),
}

impl Response {
    /// The response time when it is bounded and within the deadline.
    ///
    /// ```
    /// assert_eq!(tempi::analysis::Response::Unbounded.bounded(), None);
    /// ```
    pub fn bounded(self) -> Option<Duration> {
        match self {
            Response::Bounded(r) => Some(r),
            _ => None,
        }
    }

    /// Whether the task is shown to miss (or may be blocked without bound), as opposed to
    /// shown schedulable or left undecided ([`Response::NotCovered`], [`Response::GaveUp`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::Response;
    /// assert!(Response::Overloaded.misses());
    /// assert!(!Response::GaveUp(Duration::from_secs(1)).misses());
    /// ```
    pub fn misses(self) -> bool {
        matches!(self, Response::ExceedsDeadline(_) | Response::Unbounded | Response::Overloaded)
    }
}

/// The analysis of one task.
///
/// ```
/// use std::time::Duration;
/// let mut ts = tempi::analysis::TaskSet::new();
/// ts.add_task(tempi::analysis::Task::new("a", Duration::from_millis(1), Duration::from_millis(2)));
/// let v = ts.analyze();
/// assert_eq!(v.tasks[0].blocking, Some(Duration::ZERO));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TaskVerdict {
    /// Task index.
    pub task: usize,
    /// `B_i` under the resources' own protocols (`None`: unbounded).
    pub blocking: Option<Duration>,
    /// `B_i` if every resource used each protocol in turn.
    pub blocking_by_protocol: BlockingTable,
    /// The response-time analysis.
    pub response: Response,
    /// Response bounded and within the deadline.
    pub schedulable: bool,
}

/// The analysis of a whole fixed-priority task set.
///
/// ```
/// let v = tempi::analysis::TaskSet::new().analyze();
/// assert!(v.schedulable && v.tasks.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// One entry per task, in task order.
    pub tasks: Vec<TaskVerdict>,
    /// The Liu and Layland test, when applicable.
    pub liu_layland: Option<LiuLayland>,
    /// Every task is schedulable by response-time analysis (the exact test).
    pub schedulable: bool,
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn nanos(d: Duration) -> u128 {
    d.as_nanos()
}

fn from_nanos(n: u128) -> Duration {
    Duration::from_nanos(n.min(u64::MAX as u128) as u64)
}

/// Whether `Σ numerator/denominator ≥ 1` over `terms` (denominators positive), exactly. The
/// running sum is kept as a reduced fraction of `u128`s while it fits, which it does for
/// periods with a common multiple below 2^128 (any set of whole microseconds or
/// milliseconds in practice), and continues in arbitrary precision otherwise.
fn utilisation_reaches_one(terms: impl Iterator<Item = (u128, u128)>) -> bool {
    // Below 1 the numerator is smaller than the denominator, so both fit when it does.
    let (mut num, mut den): (u128, u128) = (0, 1);
    let mut wide: Option<(BigNat, BigNat)> = None;
    for (c, t) in terms {
        if c == 0 {
            continue;
        }
        if c >= t {
            return true;
        }
        if let Some((wn, wd)) = &mut wide {
            *wn = wn.mul(&BigNat::from(t)).add(&wd.mul(&BigNat::from(c)));
            *wd = wd.mul(&BigNat::from(t));
            if *wn >= *wd {
                return true;
            }
            continue;
        }
        let g = gcd(den, t);
        let sum = (den / g).checked_mul(t).and_then(|d| {
            let n = num.checked_mul(t / g)?.checked_add(c.checked_mul(den / g)?)?;
            Some((n, d))
        });
        match sum {
            Some((n, d)) => {
                if n >= d {
                    return true;
                }
                let h = gcd(n, d);
                (num, den) = (n / h, d / h);
            }
            None => {
                let (wn, wd) = (BigNat::from(num), BigNat::from(den));
                let n = wn.mul(&BigNat::from(t)).add(&wd.mul(&BigNat::from(c)));
                let d = wd.mul(&BigNat::from(t));
                if n >= d {
                    return true;
                }
                wide = Some((n, d));
            }
        }
    }
    false
}

/// A natural number in base 2^64, least significant limb first, without trailing zero limbs:
/// just enough arithmetic for [`utilisation_reaches_one`].
#[derive(Clone, Debug, PartialEq, Eq)]
struct BigNat(Vec<u64>);

impl From<u128> for BigNat {
    fn from(v: u128) -> BigNat {
        BigNat(vec![v as u64, (v >> 64) as u64]).trimmed()
    }
}

impl BigNat {
    fn trimmed(mut self) -> BigNat {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        self
    }

    fn add(&self, other: &BigNat) -> BigNat {
        let mut out = Vec::with_capacity(self.0.len().max(other.0.len()) + 1);
        let mut carry = 0u128;
        for k in 0..self.0.len().max(other.0.len()) {
            let s = carry + *self.0.get(k).unwrap_or(&0) as u128 + *other.0.get(k).unwrap_or(&0) as u128;
            out.push(s as u64);
            carry = s >> 64;
        }
        out.push(carry as u64);
        BigNat(out).trimmed()
    }

    fn mul(&self, other: &BigNat) -> BigNat {
        let mut out = vec![0u64; self.0.len() + other.0.len() + 1];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &b) in other.0.iter().enumerate() {
                let s = out[i + j] as u128 + a as u128 * b as u128 + carry;
                out[i + j] = s as u64;
                carry = s >> 64;
            }
            let mut k = i + other.0.len();
            while carry != 0 {
                let s = out[k] as u128 + carry;
                out[k] = s as u64;
                carry = s >> 64;
                k += 1;
            }
        }
        BigNat(out).trimmed()
    }
}

impl PartialOrd for BigNat {
    fn partial_cmp(&self, other: &BigNat) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for BigNat {
    fn cmp(&self, other: &BigNat) -> std::cmp::Ordering {
        self.0.len().cmp(&other.0.len()).then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
