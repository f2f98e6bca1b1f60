//! What an application declares (groups, threads, tasks and their code) and what a run of
//! plans records (decisions, per-task planned and actual times).

use std::time::Duration;

use crate::kernel::Ctx;
use crate::policy::admit::planner::{GroupId, GroupRequest, Locality, PlanOutcome, TaskRequest, ThreadRequest};
use crate::Time;

use super::Spring;

/// The code of one task, run once when the task's planned start has come.
pub type TaskBody = Box<dyn FnOnce(&Ctx<'_>, &TaskCx<'_>) + Send>;

/// What a task's code is told about its task.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::admit::planner::GroupId;
/// use tempi::spring::TaskCx;
/// # let mut rt = tempi::Runtime::simulated(1);
/// # let spring = tempi::spring::Spring::new(&mut rt, tempi::spring::SpringSpec::new(
/// #     tempi::policy::admit::planner::PlannerConfig::new(1, 0))).unwrap();
/// let t = TaskCx {
///     spring: &spring, group: GroupId(1), thread: 0, task: 0,
///     planned_start: tempi::Time::ZERO, planned_finish: tempi::Time::from_millis(4),
///     wcet: Duration::from_millis(5),
/// };
/// // The plan gave it 4 ms for a 5 ms WCET (it runs on its home CPU): 5 ms of demand is 4.
/// assert_eq!(t.scaled(Duration::from_millis(5)), Duration::from_millis(4));
/// ```
pub struct TaskCx<'s> {
    /// The plan executor, for spawning and killing groups from a task.
    pub spring: &'s Spring,
    /// The task's group.
    pub group: GroupId,
    /// Its thread, by index in the group.
    pub thread: usize,
    /// The task, by index in its thread.
    pub task: usize,
    /// Where the plan starts it.
    pub planned_start: Time,
    /// Where the plan ends it: the task is stopped if it runs longer than its window.
    pub planned_finish: Time,
    /// Its declared worst-case execution time.
    pub wcet: Duration,
}

impl TaskCx<'_> {
    /// `demand`, stated against the task's WCET, scaled to its planned window (the planner
    /// shortens the window of a task on its process's home CPU and lengthens it by switch
    /// costs): `demand × window / wcet`, rounded down. With neither, it is `demand`.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # let mut rt = tempi::Runtime::simulated(1);
    /// # let spring = tempi::spring::Spring::new(&mut rt, tempi::spring::SpringSpec::new(
    /// #     tempi::policy::admit::planner::PlannerConfig::new(1, 0))).unwrap();
    /// # let t = tempi::spring::TaskCx { spring: &spring, group: tempi::policy::admit::planner::GroupId(1),
    /// #     thread: 0, task: 0, planned_start: tempi::Time::ZERO,
    /// #     planned_finish: tempi::Time::from_millis(5), wcet: Duration::from_millis(5) };
    /// assert_eq!(t.scaled(Duration::from_millis(3)), Duration::from_millis(3));
    /// ```
    pub fn scaled(&self, demand: Duration) -> Duration {
        let window = (self.planned_finish - self.planned_start).as_nanos();
        let wcet = self.wcet.as_nanos();
        if wcet == 0 {
            return demand;
        }
        let ns = demand.as_nanos().saturating_mul(window) / wcet;
        Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }
}

/// A task of a group's thread: what the planner reserves and the code that runs in it.
pub struct TaskSpec {
    pub(super) request: TaskRequest,
    pub(super) body: TaskBody,
}

/// A thread of a group: its tasks in order, its predecessors and its locality.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::admit::planner::TaskRequest;
/// use tempi::spring::GroupThread;
/// let t = GroupThread::new("sense").task(TaskRequest::new(Duration::from_millis(2)), |cx, _| {
///     cx.work(Duration::from_millis(1))
/// });
/// assert_eq!(t.name(), "sense");
/// ```
pub struct GroupThread {
    pub(super) name: String,
    pub(super) after: Vec<usize>,
    pub(super) locality: Option<Locality>,
    pub(super) tasks: Vec<TaskSpec>,
}

impl GroupThread {
    /// A thread without tasks yet.
    ///
    /// ```
    /// assert_eq!(tempi::spring::GroupThread::new("a").name(), "a");
    /// ```
    pub fn new(name: impl Into<String>) -> GroupThread {
        GroupThread { name: name.into(), after: Vec::new(), locality: None, tasks: Vec::new() }
    }

    /// Its name.
    ///
    /// ```
    /// assert_eq!(tempi::spring::GroupThread::new("b").name(), "b");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Starts only after every task of thread `thread` (an index in the group, smaller than
    /// this thread's).
    ///
    /// ```
    /// let _ = tempi::spring::GroupThread::new("b").after(0);
    /// ```
    pub fn after(mut self, thread: usize) -> GroupThread {
        self.after.push(thread);
        self
    }

    /// Belongs to a process (see the planner's locality model).
    ///
    /// ```
    /// use tempi::policy::admit::planner::Locality;
    /// let _ = tempi::spring::GroupThread::new("b").locality(Locality { process: 1, home_cpu: 0 });
    /// ```
    pub fn locality(mut self, locality: Locality) -> GroupThread {
        self.locality = Some(locality);
        self
    }

    /// Add a task: what the planner reserves (`request`) and its code.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::TaskRequest;
    /// let _ = tempi::spring::GroupThread::new("b").task(TaskRequest::new(Duration::from_millis(1)), |_, _| {});
    /// ```
    pub fn task(
        mut self,
        request: TaskRequest,
        body: impl FnOnce(&Ctx<'_>, &TaskCx<'_>) + Send + 'static,
    ) -> GroupThread {
        self.tasks.push(TaskSpec { request, body: Box::new(body) });
        self
    }

    /// Add a task that works `actual` (stated against its WCET, scaled to its window with
    /// [`TaskCx::scaled`]) and does nothing else.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::TaskRequest;
    /// let ms = Duration::from_millis;
    /// let _ = tempi::spring::GroupThread::new("b").work(TaskRequest::new(ms(2)), ms(1));
    /// ```
    pub fn work(self, request: TaskRequest, actual: Duration) -> GroupThread {
        self.task(request, move |cx, t| cx.work(t.scaled(actual)))
    }
}

/// A thread group: released at `release`, every task done by `deadline`, guaranteed whole or
/// refused.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::admit::planner::TaskRequest;
/// use tempi::spring::{GroupSpec, GroupThread};
/// use tempi::Time;
/// let g = GroupSpec::new("g", Time::ZERO, Time::from_millis(10))
///     .thread(GroupThread::new("a").work(TaskRequest::new(Duration::from_millis(2)), Duration::from_millis(2)));
/// assert_eq!(g.request().task_count(), 1);
/// ```
pub struct GroupSpec {
    pub(super) name: String,
    pub(super) release: Time,
    pub(super) deadline: Time,
    pub(super) importance: u32,
    pub(super) max_wait: Option<Duration>,
    pub(super) threads: Vec<GroupThread>,
    pub(super) dependents: Vec<GroupSpec>,
}

impl GroupSpec {
    /// A group without threads yet.
    ///
    /// ```
    /// let _ = tempi::spring::GroupSpec::new("g", tempi::Time::ZERO, tempi::Time::from_secs(1));
    /// ```
    pub fn new(name: impl Into<String>, release: Time, deadline: Time) -> GroupSpec {
        GroupSpec {
            name: name.into(),
            release,
            deadline,
            importance: 0,
            max_wait: None,
            threads: Vec::new(),
            dependents: Vec::new(),
        }
    }

    /// Its importance (recorded with the plan).
    ///
    /// ```
    /// let _ = tempi::spring::GroupSpec::new("g", tempi::Time::ZERO, tempi::Time::from_secs(1)).importance(3);
    /// ```
    pub fn importance(mut self, importance: u32) -> GroupSpec {
        self.importance = importance;
        self
    }

    /// The most its request may wait for an answer (when shorter than the planner's WCET).
    ///
    /// ```
    /// let g = tempi::spring::GroupSpec::new("g", tempi::Time::ZERO, tempi::Time::from_secs(1));
    /// let _ = g.max_wait(std::time::Duration::from_millis(5));
    /// ```
    pub fn max_wait(mut self, wait: Duration) -> GroupSpec {
        self.max_wait = Some(wait);
        self
    }

    /// Add a thread.
    ///
    /// ```
    /// let g = tempi::spring::GroupSpec::new("g", tempi::Time::ZERO, tempi::Time::from_secs(1));
    /// let _ = g.thread(tempi::spring::GroupThread::new("a"));
    /// ```
    pub fn thread(mut self, thread: GroupThread) -> GroupSpec {
        self.threads.push(thread);
        self
    }

    /// A dependent group: planned together with this one, whenever this one is planned, and
    /// guaranteed with it or not at all (this group is refused if both do not fit). Its own
    /// release and deadline stay its own (a release before the planning instant is raised
    /// to it). Nothing more is asked at the point where its parent's code relies on it. Its
    /// own dependents are planned in the same request too (breadth first), all or nothing.
    ///
    /// ```
    /// use tempi::spring::GroupSpec;
    /// use tempi::Time;
    /// let halt = GroupSpec::new("halt", Time::from_secs(2), Time::from_secs(4));
    /// let _ = GroupSpec::new("react", Time::ZERO, Time::from_secs(1)).dependent(halt);
    /// ```
    pub fn dependent(mut self, child: GroupSpec) -> GroupSpec {
        self.dependents.push(child);
        self
    }

    /// Its name.
    ///
    /// ```
    /// assert_eq!(tempi::spring::GroupSpec::new("g", tempi::Time::ZERO, tempi::Time::MAX).name(), "g");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The planner's request for this group.
    ///
    /// ```
    /// let g = tempi::spring::GroupSpec::new("g", tempi::Time::ZERO, tempi::Time::from_secs(1));
    /// assert_eq!(g.request().threads.len(), 0);
    /// ```
    pub fn request(&self) -> GroupRequest {
        self.request_reserving(Duration::ZERO)
    }

    /// [`GroupSpec::request`] with `overhead` added to every task's WCET: what the planner
    /// reserves for the task under [`crate::Config::job_overhead`].
    pub(crate) fn request_reserving(&self, overhead: Duration) -> GroupRequest {
        let mut g = GroupRequest::new(self.release, self.deadline).importance(self.importance);
        for t in &self.threads {
            let mut r = ThreadRequest::new();
            r.after = t.after.clone();
            r.locality = t.locality;
            r.tasks = t
                .tasks
                .iter()
                .map(|t| {
                    let mut task = t.request.clone();
                    task.wcet = task.wcet.saturating_add(overhead);
                    task
                })
                .collect();
            g = g.thread(r);
        }
        g
    }
}

/// How a task of a guaranteed group ended up.
///
/// ```
/// assert_ne!(tempi::spring::TaskOutcome::Completed, tempi::spring::TaskOutcome::Overrun);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskOutcome {
    /// Not started (yet).
    Planned,
    /// Started, not finished when the run ended.
    Running,
    /// Ran to its end within its window.
    Completed,
    /// Reached the end of its window unfinished and was stopped there (overrun policy).
    Overrun,
    /// Never ran: its group was killed (by a call, or after an overrun) before it started,
    /// or its thread ended (an earlier task of the thread panicked). Or, with an actual
    /// finish, stopped while it ran by a kill of its thread ([`crate::Ctx::kill`]).
    Killed,
    /// Its code panicked: stopped at the panic, which ended its thread (the thread's outcome
    /// has the message, the Spring events a line).
    Panicked,
}

impl TaskOutcome {
    /// The report's name for it.
    ///
    /// ```
    /// assert_eq!(tempi::spring::TaskOutcome::Killed.name(), "killed");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            TaskOutcome::Planned => "planned",
            TaskOutcome::Running => "running",
            TaskOutcome::Completed => "completed",
            TaskOutcome::Overrun => "overrun",
            TaskOutcome::Killed => "killed",
            TaskOutcome::Panicked => "panicked",
        }
    }
}

/// One task of a guaranteed group: planned and actual times.
///
/// ```
/// use tempi::spring::{TaskOutcome, TaskRecord};
/// use tempi::Time;
/// let r = TaskRecord {
///     group: "g".into(), thread: "a".into(), task: 0, cpu: 0,
///     planned_start: Time::ZERO, planned_finish: Time::from_millis(1),
///     actual_start: None, actual_finish: None, outcome: TaskOutcome::Planned,
/// };
/// assert!(r.actual_start.is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRecord {
    /// Group name.
    pub group: String,
    /// Thread name.
    pub thread: String,
    /// Task index in its thread.
    pub task: usize,
    /// Its CPU.
    pub cpu: usize,
    /// Planned start: as planned when accepted, then as the plan stood when it started.
    pub planned_start: Time,
    /// Planned finish, likewise.
    pub planned_finish: Time,
    /// When it started running.
    pub actual_start: Option<Time>,
    /// When it ended (completed, stopped at its window's end, or panicked).
    pub actual_finish: Option<Time>,
    /// How it ended.
    pub outcome: TaskOutcome,
}

/// The planner's answer to one group.
///
/// ```
/// let _ = |d: &tempi::spring::GroupDecision| d.outcome.decision.is_accepted();
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupDecision {
    /// Group name.
    pub group: String,
    /// Its id in the plan, if accepted.
    pub id: Option<GroupId>,
    /// When the request was made (the planning instant).
    pub requested: Time,
    /// When the answer was known: the request plus the planner time (modelled in virtual
    /// time, measured in real time).
    pub decided: Time,
    /// The planner's answer and cost.
    pub outcome: PlanOutcome,
}

/// The answer to an asynchronous request, read with [`Spring::status`].
///
/// ```
/// assert_ne!(tempi::spring::Status::Yes, tempi::spring::Status::Unknown);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Guaranteed.
    Yes,
    /// Refused.
    No,
    /// The planner's answer is not known yet.
    Unknown,
}

/// A handle on an asynchronous request ([`Spring::spawn_async`]). It belongs to the runtime
/// whose thread made the request: [`Spring::status`] refuses a ticket of another runtime with
/// [`crate::Error::ForeignRuntime`] (request numbers of two runtimes coincide).
///
/// ```
/// let _ = |t: tempi::spring::Ticket| t;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket {
    /// The request's group entry.
    pub(super) group: usize,
    /// The identity of the runtime whose executor planned it.
    pub(super) runtime: crate::RuntimeId,
}
