//! The task-set model: [`Resource`], [`Section`], [`Task`], [`TaskSet`] and its validation,
//! ceilings and the priority relations the tests share.
//!
//! Owns the data and what is read straight off it. Must not hold any schedulability test or
//! blocking bound (those are `blocking.rs`, `fixed_priority.rs` and `edf.rs`).

use std::fmt;
use std::time::Duration;

use super::arith::{from_nanos, gcd, nanos, secs};
use super::Protocol;
use crate::policy::lock::LockCeiling;
use crate::Criticality;

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
/// `guarded` says how the lock is held, which matters under [`Protocol::Rcs`] only: a section
/// entered with [`crate::sync::Mutex::critical`] (`false`, the default of [`Task::section`])
/// can be aborted by a more urgent requester, which then waits for the holder's recovery (the
/// resource's `restart_cost`) only; a section held with a guard ([`crate::sync::Mutex::lock`],
/// `true`, [`Task::guarded_section`]) is not aborted, and a more urgent requester waits for
/// the rest of it under inheritance, as under [`Protocol::Bpi`].
///
/// ```
/// use std::time::Duration;
/// let s = tempi::analysis::Section { resource: 0, duration: Duration::from_millis(2), guarded: false };
/// assert_eq!(s.resource, 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    /// Index of the resource in the task set.
    pub resource: usize,
    /// Execution time spent holding it.
    pub duration: Duration,
    /// Held with a guard, so not restartable under RCS (see the type's docs).
    pub guarded: bool,
}

impl Section {
    /// What holding this section can cost a more urgent job that wants its resource: the whole
    /// section (the waiter may find it just begun), or under RCS (`restart`: the resource's
    /// `restart_cost`) only the recovery when it is restartable (the holder is aborted).
    pub(super) fn blocking_cost(&self, restart: Option<Duration>) -> Duration {
        match restart {
            Some(cost) if !self.guarded => cost,
            _ => self.duration,
        }
    }
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
    /// Hard (the default) or soft ([`Task::criticality`]).
    pub criticality: Criticality,
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
        Task {
            name: name.into(),
            wcet,
            period,
            deadline: period,
            priority: 0,
            sections: Vec::new(),
            criticality: Criticality::Hard,
        }
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

    /// Set the criticality. A soft task's deadline is a target: in response-time analysis
    /// ([`TaskSet::analyze`]) a soft task whose worst-case response exceeds its deadline is
    /// reported so ([`crate::analysis::TaskVerdict::schedulable`] is false) but does not make
    /// the set unschedulable, while its `C` still interferes in full with every lower-priority
    /// task. The tests that judge a set as a whole (the EDF tests, utilisation bounds, the
    /// global tests, [`TaskSet::infeasibility`]) cannot tell which task misses, and judge soft
    /// tasks as hard.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Task, TaskSet};
    /// use tempi::Criticality;
    /// let ms = Duration::from_millis;
    /// let mut ts = TaskSet::new();
    /// ts.add_task(Task::new("h", ms(2), ms(10)).priority(2));
    /// // Worst-case response 2 + 3 = 5 ms, beyond its 4 ms deadline.
    /// ts.add_task(Task::new("s", ms(3), ms(10)).deadline(ms(4)).priority(1).criticality(Criticality::Soft));
    /// let v = ts.analyze();
    /// assert!(!v.tasks[1].schedulable);
    /// assert!(v.schedulable);
    /// ts.tasks[1].criticality = Criticality::Hard;
    /// assert!(!ts.analyze().schedulable);
    /// ```
    pub fn criticality(mut self, criticality: Criticality) -> Task {
        self.criticality = criticality;
        self
    }

    /// Whether the task is soft ([`Task::criticality`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// let t = tempi::analysis::Task::new("t", Duration::ZERO, Duration::from_millis(4));
    /// assert!(!t.is_soft() && t.criticality(tempi::Criticality::Soft).is_soft());
    /// ```
    pub fn is_soft(&self) -> bool {
        self.criticality == Criticality::Soft
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

    /// Add a critical section on resource `resource` lasting `duration`. Under
    /// [`Protocol::Rcs`] it is a restartable section, entered with
    /// [`crate::sync::Mutex::critical`]; for one held with a guard use
    /// [`Task::guarded_section`].
    ///
    /// ```
    /// use std::time::Duration;
    /// let t = tempi::analysis::Task::new("t", Duration::from_millis(3), Duration::from_millis(9)).section(1, Duration::from_millis(1));
    /// assert_eq!(t.sections[0].resource, 1);
    /// assert!(!t.sections[0].guarded);
    /// ```
    pub fn section(mut self, resource: usize, duration: Duration) -> Task {
        self.sections.push(Section { resource, duration, guarded: false });
        self
    }

    /// Add a critical section on resource `resource` lasting `duration`, held with a guard
    /// ([`crate::sync::Mutex::lock`]). Under [`Protocol::Rcs`] such a section is not aborted:
    /// a more urgent requester waits for the rest of it, under inheritance, so it blocks as
    /// under [`Protocol::Bpi`] (its length, not the resource's `restart_cost`), and it is not
    /// redone. Under the other protocols it is the same as [`Task::section`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Protocol, Resource, Task, TaskSet};
    /// let ms = Duration::from_millis;
    /// let mut ts = TaskSet::new();
    /// let r = ts.add_resource(Resource::new("r", Protocol::Rcs).restart_cost(Duration::from_micros(100)));
    /// ts.add_task(Task::new("h", ms(1), ms(10)).priority(2).section(r, ms(1)));
    /// ts.add_task(Task::new("l", ms(3), ms(20)).priority(1).guarded_section(r, ms(2)));
    /// // h waits for the rest of l's guarded section, not for a 100 µs recovery.
    /// assert_eq!(ts.blocking(0), Some(ms(2)));
    /// ```
    pub fn guarded_section(mut self, resource: usize, duration: Duration) -> Task {
        self.sections.push(Section { resource, duration, guarded: true });
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
    pub(super) fn longest_on(&self, r: usize) -> Option<Duration> {
        self.sections.iter().filter(|s| s.resource == r).map(|s| s.duration).max()
    }

    /// The longest restartable (not guarded) section on resource `r`, if the task has one.
    pub(super) fn longest_restartable_on(&self, r: usize) -> Option<Duration> {
        self.sections.iter().filter(|s| s.resource == r && !s.guarded).map(|s| s.duration).max()
    }

    /// What this task can cost a more urgent job that wants `r` while the task holds it (see
    /// [`Section::blocking_cost`]), if it uses `r`.
    pub(super) fn blocking_cost_on(&self, r: usize, restart: Option<Duration>) -> Option<Duration> {
        self.sections.iter().filter(|s| s.resource == r).map(|s| s.blocking_cost(restart)).max()
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
    /// use it (`None` if nobody does). The rule is the runtime's ([`LockCeiling::of`]), so a lock
    /// and the resource that models it have the same ceiling.
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
        let users = self
            .tasks
            .iter()
            .filter(|t| t.sections.iter().any(|s| s.resource == r))
            .map(|t| (t.priority, Some(t.deadline)));
        LockCeiling::of(self.resources.get(r)?.ceiling, users).map(|c| c.priority())
    }

    /// Indices of the other tasks of priority at least task `i`'s (interference).
    pub(super) fn higher(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let p = self.tasks[i].priority;
        (0..self.tasks.len()).filter(move |&j| j != i && self.tasks[j].priority >= p)
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
