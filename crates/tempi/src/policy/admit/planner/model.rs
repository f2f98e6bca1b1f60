//! What a caller hands the planner: a thread group (a DAG of threads, each a sequence of tasks
//! with a worst-case execution time and the resources it holds), and the errors a malformed
//! one gets.
//!
//! Owns the request types and their validation. Building a request allocates (it happens
//! before planning, on the caller's side); nothing here plans, and nothing here is kept in a
//! plan: the planner copies what it needs into its preallocated tables.

use std::fmt;
use std::time::Duration;

use crate::Time;

/// A resource the planner reserves, numbered `0..resources` of the planner's configuration.
///
/// ```
/// use tempi::policy::admit::planner::ResourceId;
/// assert_eq!(ResourceId(3).index(), 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceId(pub u16);

impl ResourceId {
    /// The resource's number as an index.
    ///
    /// ```
    /// assert_eq!(tempi::policy::admit::planner::ResourceId(0).index(), 0);
    /// ```
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// How a task holds a resource for its whole planned interval.
///
/// ```
/// use tempi::policy::admit::planner::Mode;
/// assert_ne!(Mode::Shared, Mode::Exclusive);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// May overlap other shared holders, never an exclusive one.
    Shared,
    /// Overlaps no other holder.
    Exclusive,
}

/// One resource a task holds, and how.
///
/// ```
/// use tempi::policy::admit::planner::{Mode, ResourceId, ResourceUse};
/// let u = ResourceUse { resource: ResourceId(1), mode: Mode::Shared };
/// assert_eq!(u.resource.index(), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ResourceUse {
    /// Which resource.
    pub resource: ResourceId,
    /// Shared or exclusive.
    pub mode: Mode,
}

/// Where a thread's process lives: its address space is on `home_cpu`, where its tasks run
/// faster and between whose tasks a CPU switches cheaply.
///
/// ```
/// use tempi::policy::admit::planner::Locality;
/// let l = Locality { process: 7, home_cpu: 1 };
/// assert_eq!(l.home_cpu, 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Locality {
    /// The process the thread belongs to (any number the caller chooses).
    pub process: u32,
    /// The CPU holding the process's address space.
    pub home_cpu: u16,
}

/// A task: an indivisible piece of a thread with a worst-case execution time and the
/// resources it holds from its start to its end.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::admit::planner::{ResourceId, TaskRequest};
/// let t = TaskRequest::new(Duration::from_millis(2)).exclusive(ResourceId(0)).shared(ResourceId(1));
/// assert_eq!(t.resources.len(), 2);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRequest {
    /// Worst-case execution time (away from the process's home CPU).
    pub wcet: Duration,
    /// The resources held for the task's whole interval; each resource at most once.
    pub resources: Vec<ResourceUse>,
}

impl TaskRequest {
    /// A task of `wcet` holding nothing.
    ///
    /// ```
    /// use std::time::Duration;
    /// let t = tempi::policy::admit::planner::TaskRequest::new(Duration::from_micros(5));
    /// assert!(t.resources.is_empty());
    /// ```
    pub fn new(wcet: Duration) -> TaskRequest {
        TaskRequest { wcet, resources: Vec::new() }
    }

    /// Also hold `resource` shared.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::{Mode, ResourceId, TaskRequest};
    /// let t = TaskRequest::new(Duration::from_micros(5)).shared(ResourceId(2));
    /// assert_eq!(t.resources[0].mode, Mode::Shared);
    /// ```
    pub fn shared(mut self, resource: ResourceId) -> TaskRequest {
        self.resources.push(ResourceUse { resource, mode: Mode::Shared });
        self
    }

    /// Also hold `resource` exclusively.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::{Mode, ResourceId, TaskRequest};
    /// let t = TaskRequest::new(Duration::from_micros(5)).exclusive(ResourceId(2));
    /// assert_eq!(t.resources[0].mode, Mode::Exclusive);
    /// ```
    pub fn exclusive(mut self, resource: ResourceId) -> TaskRequest {
        self.resources.push(ResourceUse { resource, mode: Mode::Exclusive });
        self
    }
}

/// A thread of a group: its tasks run in sequence on one CPU, after every task of the
/// threads it comes `after`.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::admit::planner::{TaskRequest, ThreadRequest};
/// let t = ThreadRequest::new().task(TaskRequest::new(Duration::from_millis(1))).after(0);
/// assert_eq!((t.tasks.len(), t.after.as_slice()), (1, &[0][..]));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadRequest {
    /// The tasks, in the order they run.
    pub tasks: Vec<TaskRequest>,
    /// Indices (in the group) of the threads this one starts after; each must be smaller
    /// than this thread's own index, so the group is listed in a precedence order.
    pub after: Vec<usize>,
    /// The thread's process, if placement should know it.
    pub locality: Option<Locality>,
}

impl ThreadRequest {
    /// A thread with no tasks yet, no predecessors and no process.
    ///
    /// ```
    /// assert!(tempi::policy::admit::planner::ThreadRequest::new().tasks.is_empty());
    /// ```
    pub fn new() -> ThreadRequest {
        ThreadRequest::default()
    }

    /// Append a task.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::{TaskRequest, ThreadRequest};
    /// let t = ThreadRequest::new().task(TaskRequest::new(Duration::from_millis(1)));
    /// assert_eq!(t.tasks.len(), 1);
    /// ```
    pub fn task(mut self, task: TaskRequest) -> ThreadRequest {
        self.tasks.push(task);
        self
    }

    /// Start only after every task of thread `thread` (an index in the group) has finished.
    ///
    /// ```
    /// let t = tempi::policy::admit::planner::ThreadRequest::new().after(0).after(2);
    /// assert_eq!(t.after, [0, 2]);
    /// ```
    pub fn after(mut self, thread: usize) -> ThreadRequest {
        self.after.push(thread);
        self
    }

    /// Belong to a process (see [`Locality`]).
    ///
    /// ```
    /// use tempi::policy::admit::planner::{Locality, ThreadRequest};
    /// let t = ThreadRequest::new().locality(Locality { process: 1, home_cpu: 0 });
    /// assert!(t.locality.is_some());
    /// ```
    pub fn locality(mut self, locality: Locality) -> ThreadRequest {
        self.locality = Some(locality);
        self
    }
}

/// A scheduling request: a thread group with its release time (no task starts earlier), its
/// end-to-end deadline (every task finishes by it) and its importance.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::admit::planner::{GroupRequest, TaskRequest, ThreadRequest};
/// use tempi::Time;
/// let g = GroupRequest::new(Time::from_millis(1), Time::from_millis(9))
///     .importance(3)
///     .thread(ThreadRequest::new().task(TaskRequest::new(Duration::from_millis(2))));
/// assert_eq!(g.task_count(), 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRequest {
    /// No task of the group starts before this instant.
    pub release: Time,
    /// Every task of the group finishes by this instant.
    pub deadline: Time,
    /// The group's value; carried in the plan, not used to evict anything.
    pub importance: u32,
    /// The threads, each listed after its predecessors.
    pub threads: Vec<ThreadRequest>,
}

impl GroupRequest {
    /// An empty group released at `release` and due at `deadline`, importance 0.
    ///
    /// ```
    /// use tempi::policy::admit::planner::GroupRequest;
    /// use tempi::Time;
    /// assert!(GroupRequest::new(Time::ZERO, Time::from_millis(1)).threads.is_empty());
    /// ```
    pub fn new(release: Time, deadline: Time) -> GroupRequest {
        GroupRequest { release, deadline, importance: 0, threads: Vec::new() }
    }

    /// Set the importance.
    ///
    /// ```
    /// use tempi::policy::admit::planner::GroupRequest;
    /// use tempi::Time;
    /// assert_eq!(GroupRequest::new(Time::ZERO, Time::MAX).importance(4).importance, 4);
    /// ```
    pub fn importance(mut self, importance: u32) -> GroupRequest {
        self.importance = importance;
        self
    }

    /// Append a thread.
    ///
    /// ```
    /// use tempi::policy::admit::planner::{GroupRequest, ThreadRequest};
    /// use tempi::Time;
    /// let g = GroupRequest::new(Time::ZERO, Time::MAX).thread(ThreadRequest::new());
    /// assert_eq!(g.threads.len(), 1);
    /// ```
    pub fn thread(mut self, thread: ThreadRequest) -> GroupRequest {
        self.threads.push(thread);
        self
    }

    /// How many tasks the group has.
    ///
    /// ```
    /// use tempi::policy::admit::planner::GroupRequest;
    /// use tempi::Time;
    /// assert_eq!(GroupRequest::new(Time::ZERO, Time::MAX).task_count(), 0);
    /// ```
    pub fn task_count(&self) -> usize {
        self.threads.iter().map(|t| t.tasks.len()).sum()
    }

    /// Check the request against a planner of `cpus` CPUs and `resources` resources.
    pub(crate) fn validate(&self, cpus: usize, resources: usize) -> Result<(), PlanError> {
        if self.threads.is_empty() {
            return Err(PlanError::EmptyGroup);
        }
        if self.deadline < self.release {
            return Err(PlanError::DeadlineBeforeRelease { release: self.release, deadline: self.deadline });
        }
        for (i, thread) in self.threads.iter().enumerate() {
            if thread.tasks.is_empty() {
                return Err(PlanError::EmptyThread { thread: i });
            }
            for (j, &p) in thread.after.iter().enumerate() {
                if p >= i {
                    return Err(PlanError::PredecessorNotEarlier { thread: i, predecessor: p });
                }
                if thread.after[..j].contains(&p) {
                    return Err(PlanError::DuplicatePredecessor { thread: i, predecessor: p });
                }
            }
            if let Some(l) = thread.locality
                && usize::from(l.home_cpu) >= cpus
            {
                return Err(PlanError::UnknownCpu { thread: i, cpu: usize::from(l.home_cpu), cpus });
            }
            for (t, task) in thread.tasks.iter().enumerate() {
                for (k, u) in task.resources.iter().enumerate() {
                    if u.resource.index() >= resources {
                        return Err(PlanError::UnknownResource { resource: u.resource, resources });
                    }
                    if task.resources[..k].iter().any(|v| v.resource == u.resource) {
                        return Err(PlanError::DuplicateResource { thread: i, task: t, resource: u.resource });
                    }
                }
            }
        }
        Ok(())
    }
}

/// The id of an accepted group, handed out in acceptance order and never reused by a plan.
///
/// ```
/// use tempi::policy::admit::planner::GroupId;
/// assert!(GroupId(1) < GroupId(2));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupId(pub u64);

/// Why a request or a plan operation could not be carried out at all (as opposed to a
/// request that was planned and refused, see [`Decision`](super::Decision)). The plan is
/// unchanged.
///
/// ```
/// use tempi::policy::admit::planner::PlanError;
/// assert_eq!(PlanError::EmptyGroup.to_string(), "a thread group needs at least one thread");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// The group has no thread.
    EmptyGroup,
    /// A thread has no task.
    EmptyThread {
        /// Its index in the group.
        thread: usize,
    },
    /// The deadline is before the release.
    DeadlineBeforeRelease {
        /// The release asked for.
        release: Time,
        /// The deadline asked for.
        deadline: Time,
    },
    /// A thread names a predecessor that is not listed before it.
    PredecessorNotEarlier {
        /// The thread's index.
        thread: usize,
        /// The predecessor it names.
        predecessor: usize,
    },
    /// A thread names the same predecessor twice.
    DuplicatePredecessor {
        /// The thread's index.
        thread: usize,
        /// The predecessor named twice.
        predecessor: usize,
    },
    /// A task names a resource the planner does not have.
    UnknownResource {
        /// The resource named.
        resource: ResourceId,
        /// How many resources the planner has.
        resources: usize,
    },
    /// A task names the same resource twice.
    DuplicateResource {
        /// The thread's index.
        thread: usize,
        /// The task's index in the thread.
        task: usize,
        /// The resource named twice.
        resource: ResourceId,
    },
    /// A thread's home CPU is not one of the planner's.
    UnknownCpu {
        /// The thread's index.
        thread: usize,
        /// The CPU named.
        cpu: usize,
        /// How many CPUs the planner has.
        cpus: usize,
    },
    /// A preallocated table would overflow; retire finished groups or build a larger planner.
    Full {
        /// Which table.
        table: &'static str,
        /// Its capacity.
        capacity: usize,
    },
    /// The planner's configuration cannot work; the text says why.
    Config(&'static str),
    /// A table of the planner's [`super::Capacity`] is above [`super::Capacity::MAX`].
    TooLarge {
        /// Which table, as `capacity.FIELD`.
        field: &'static str,
        /// The size asked for.
        value: usize,
        /// The limit.
        max: usize,
    },
    /// The allocator refused a table of the planner (its [`super::Capacity`] is too large for
    /// the memory the process may use).
    NoMemory {
        /// Which table.
        table: &'static str,
        /// Its entries.
        entries: usize,
    },
    /// No group in the plan has this id (never accepted, or already retired).
    UnknownGroup(GroupId),
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::EmptyGroup => write!(f, "a thread group needs at least one thread"),
            PlanError::EmptyThread { thread } => write!(f, "thread {thread} has no task"),
            PlanError::DeadlineBeforeRelease { release, deadline } => {
                write!(f, "deadline {deadline:?} is before the release {release:?}")
            }
            PlanError::PredecessorNotEarlier { thread, predecessor } => write!(
                f,
                "thread {thread} comes after thread {predecessor}, which is not listed before it \
                 (list every thread after its predecessors)"
            ),
            PlanError::DuplicatePredecessor { thread, predecessor } => {
                write!(f, "thread {thread} names predecessor {predecessor} twice")
            }
            PlanError::UnknownResource { resource, resources } => {
                write!(f, "resource {} does not exist (the planner has {resources})", resource.0)
            }
            PlanError::DuplicateResource { thread, task, resource } => {
                write!(f, "task {task} of thread {thread} names resource {} twice", resource.0)
            }
            PlanError::UnknownCpu { thread, cpu, cpus } => {
                write!(f, "thread {thread}'s home CPU {cpu} does not exist (the planner has {cpus})")
            }
            PlanError::Full { table, capacity } => {
                write!(f, "the planner's {table} table is full ({capacity} entries)")
            }
            PlanError::Config(why) => write!(f, "bad planner configuration: {why}"),
            PlanError::NoMemory { table, entries } => {
                write!(f, "cannot allocate the planner's {table} table ({entries} entries)")
            }
            PlanError::TooLarge { field, value, max } => {
                write!(f, "bad planner configuration: {field} = {value} is above its limit of {max} (Capacity::MAX)")
            }
            PlanError::UnknownGroup(id) => write!(f, "no planned group has id {}", id.0),
        }
    }
}

impl std::error::Error for PlanError {}
