//! Spring plan execution on the runtime: thread groups guaranteed by the
//! [planner](crate::policy::admit::planner) run at their planned times, above every unplanned
//! thread, each task held to its planned window.
//!
//! Owns [`Spring`] (one runtime's planner, its queue of group releases, the executing threads'
//! code, the enforcement pool and the logs), its [`SpringSpec`], the group declarations
//! ([`GroupSpec`], [`GroupThread`]) and the records ([`TaskRecord`], [`GroupDecision`]). Built
//! only on public runtime calls (spawn, sleep, thread sets, budgets) and on the planner and
//! [`PlanFirst`]; it must not reach into the kernel or change the planner's search.
//!
//! # How a plan runs
//!
//! - **The planner's thread.** A sporadic thread on CPU 0 at [`PLANNER_PRIORITY`] is released
//!   at each declared group's release time; it submits the groups due then, in release order
//!   (then declaration order). It does no `work`: in virtual time planning takes no simulated
//!   CPU time, and its modelled cost (the planner's cost model) is the time at which the
//!   answer is known ([`GroupDecision::decided`]). No task of the group starts before the
//!   cutoff line, which is at least that instant.
//! - **Executing threads.** Each thread of an accepted group becomes one kernel thread, spawned
//!   at once on the CPU the plan placed it on, at [`PLANNED_PRIORITY`]. A [`PlanFirst`]
//!   scheduler wraps each CPU's scheduler: the planned band runs above everything else, and
//!   the CPU's own scheduler runs the unplanned threads in the gaps. The plan never overlaps
//!   two tasks on one CPU, so an executing thread is never kept waiting by another.
//! - **Task boundaries.** Between two tasks (and before the first) the thread reads its next
//!   task's planned start from the plan and sleeps until then: a task starts exactly at its
//!   planned start, never earlier (the simple rule that keeps every reservation). The plan may
//!   be changed while it sleeps: the planner only delays a guaranteed task that has not
//!   started, never advances it and never moves its thread to another CPU, so waking at the
//!   old start and reading the plan again is enough.
//! - **Overrun policy.** Each running task is in a thread set of its CPU, taken from a pool
//!   sized by [`SpringSpec::sets_per_cpu`] at the task's start and given back at its end
//!   (planned tasks of one CPU do not overlap, so one or two sets per CPU are in use at any
//!   instant, however many threads wait for their tasks). Its budget is refilled to the
//!   task's planned window at its start, with the `Kill` action: a task still running at the end of its window is
//!   stopped there ([`TaskOutcome::Overrun`]), and its group is killed, so no later task of it
//!   runs on a broken precondition; the group's reservations after that instant are freed.
//!   The budget counts CPU time, so a task that waits inside its window (a synchronous spawn)
//!   and ends after it is reported as an overrun too, and its group killed.
//! - **Kill.** [`Spring::kill`] marks a group killed and removes its tasks that have not
//!   started from the plan. Each of its threads ends at its next task boundary: a running
//!   task finishes (a task is the unit the plan reserves resources for, so a kill never falls
//!   inside a task's resource holding).
//! - **Spawning from a thread.** [`Spring::spawn_sync`] plans a group now and answers once the
//!   modelled planner time has passed (the caller sleeps until then); [`Spring::spawn_async`]
//!   plans it now and returns a [`Ticket`] whose [`Spring::status`] is unknown until then.
//!
//! # Real time
//!
//! The planner runs on an OS thread of its own (`tempi-spring-planner`), off every
//! dispatcher's path, and owns the working plan. It is pinned to [`SpringSpec::planner_cpu`]
//! and scheduled as [`SpringSpec::planner_priority`] says (by default one `SCHED_FIFO` level
//! above `SCHED_FIFO` dispatchers, which would otherwise starve it); a refusal is a run
//! warning. It is started by [`Spring::new`] and stopped
//! and joined when the runtime tears its threads down (at the end of the run, or when a
//! runtime that never ran is dropped).
//!
//! - **Requests** reach it through a bounded queue ([`SpringSpec::max_groups`] entries, at
//!   least 16): group releases (posted by the planner's runtime thread on CPU 0, released by
//!   a timer as in virtual time), [`Spring::spawn_sync`] and [`Spring::spawn_async`] from
//!   threads, and kills. Posting never blocks and never allocates; a full queue refuses the
//!   request with an error.
//! - **Bounded planning time** is enforced on the wall clock: the search may not run past the
//!   request's budget measured from when planning began
//!   ([`Planner::submit_wall`](crate::policy::admit::planner::Planner::submit_wall)); it
//!   answers "no" ([`Rejection::BudgetExhausted`](crate::policy::admit::planner::Rejection))
//!   when it would. The cutoff line is the planning instant plus that budget, so the
//!   dispatchers keep running every task planned before it while the planner works. The
//!   answer's cost and [`GroupDecision::decided`] are measured.
//! - **Answers.** The planner publishes the plan (copied, under the executor's lock, into the
//!   plan the executing threads read at their task boundaries), records the decisions and
//!   leaves the threads of accepted groups to the planner's runtime thread, which wakes
//!   every [`SpringSpec::poll`] while answers are owed and spawns them on their planned CPUs.
//!   The spawn is late by at most about one poll: a task's first window absorbs it.
//! - **Spawns from threads.** [`Spring::spawn_sync`] waits, in wall time, at most the
//!   group's `max_wait` (or the planner's WCET): with no answer by then it returns "no"
//!   (`BudgetExhausted`) and the request is withdrawn (refused even if the planner accepts
//!   it afterwards). [`Spring::spawn_async`]'s ticket reads unknown until the answer is
//!   recorded.
//! - **Kill** marks the group at once (its threads stop at their next task boundary) and
//!   takes its tasks out of the published plan; the planner's thread is told, so the working
//!   plan frees the reservations too.
//! - **Failures.** A panic while planning is caught on the planner's thread: that request and
//!   every later one get an error (their `spawn_sync` returns it; the events list says so),
//!   and the run goes on.
//! - **Overruns.** A task is held to the end of its planned window, so one that starts late
//!   (dispatch latency, a busy machine) has less room; a task whose work equals its WCET
//!   leaves no margin for that in real time.

//! # Memory
//!
//! Planning never allocates (the planner's tables are sized up front); accepting a group
//! spawns its threads and extends the records, which allocates as any spawn does. In real
//! time the dispatchers' side only posts to the preallocated queue and reads the published
//! plan; the planner's thread copies the plan into preallocated tables.
//!
//! ```
//! use std::time::Duration;
//! use tempi::policy::admit::planner::{PlannerConfig, TaskRequest};
//! use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec};
//! use tempi::{Runtime, Time};
//! let ms = Duration::from_millis;
//! let mut rt = Runtime::simulated(1);
//! let planner = PlannerConfig { planner_wcet: ms(2), safety: Duration::ZERO, ..PlannerConfig::new(1, 0) };
//! let spring = Spring::new(&mut rt, SpringSpec::new(planner)).unwrap();
//! let g = GroupSpec::new("g", Time::ZERO, Time::from_millis(10))
//!     .thread(GroupThread::new("a").work(TaskRequest::new(ms(3)), ms(3)));
//! spring.add_group(&mut rt, g).unwrap();
//! rt.run().unwrap();
//! let t = &spring.tasks()[0];
//! // Planned after the 2 ms cutoff, and run exactly there.
//! assert_eq!((t.planned_start, t.actual_start), (Time::from_millis(2), Some(Time::from_millis(2))));
//! assert_eq!(t.actual_finish, Some(Time::from_millis(5)));
//! ```

mod decide;
mod exec;
mod groups;
mod model;
mod realtime;

pub use model::{
    GroupDecision, GroupSpec, GroupThread, Status, TaskBody, TaskCx, TaskOutcome, TaskRecord, TaskSpec, Ticket,
};

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::clock::{Clock, ClockMode};
use crate::error::Error;
use crate::kernel::Ctx;
use crate::policy::admit::planner::{GroupId, Planner, PlannerConfig};
use crate::policy::budget::Kill;
use crate::policy::sched::{PlanFirst, PLANNED_PRIORITY, PLANNER_PRIORITY};
use crate::runtime::Runtime;
use crate::sets::{Budget, Replenishment};
use crate::thread::ThreadSpec;
use crate::SetId;
use crate::ThreadId;
use crate::Time;

/// How a [`Spring`] is set up.
///
/// ```
/// let s = tempi::spring::SpringSpec::new(tempi::policy::admit::planner::PlannerConfig::new(2, 0));
/// assert_eq!((s.sets_per_cpu, s.max_groups), (8, 256));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SpringSpec {
    /// The planner (its CPU count must be the runtime's).
    pub planner: PlannerConfig,
    /// Executing threads alive at once per CPU that can be held to their windows; one more
    /// runs unenforced and the overrun is not caught (an event says so). One thread set each,
    /// counted against [`crate::Config::max_sets`]; at most [`SpringSpec::MAX_SETS_PER_CPU`].
    pub sets_per_cpu: usize,
    /// Group releases declared before the run that may be pending at once; in real time
    /// also the capacity of the planner's request queue (at least 16). At most
    /// [`SpringSpec::MAX_GROUPS`].
    pub max_groups: usize,
    /// Real time: how often the planner's runtime thread, and a thread waiting in
    /// [`Spring::spawn_sync`], look for the planner's answer while it is owed.
    pub poll: Duration,
    /// Real time: the CPU the planner's OS thread is pinned to (default CPU 0); `None`
    /// leaves it free to run anywhere. A CPU the machine does not have is a run warning.
    /// No effect in virtual time.
    pub planner_cpu: Option<usize>,
    /// Real time: the scheduling class of the planner's OS thread (default: one `SCHED_FIFO`
    /// level above the dispatchers when they run under `SCHED_FIFO`). No effect in virtual
    /// time.
    pub planner_priority: PlannerPriority,
}

/// Real time: how the planner's OS thread is scheduled by the operating system
/// ([`SpringSpec::planner_priority`]).
///
/// Dispatchers under `SCHED_FIFO` keep their CPUs busy while they have work, and Linux runs
/// no time-sharing thread on a CPU a `SCHED_FIFO` thread wants: a planner left under the
/// time-sharing policy would get no CPU until a dispatcher idles, and its answers would come
/// too late for the groups they guarantee. One level above the dispatchers, it preempts the
/// dispatcher of its CPU for the (bounded) time it plans, and sleeps otherwise.
///
/// ```
/// use tempi::spring::{PlannerPriority, SpringSpec};
/// let spec = SpringSpec::new(tempi::policy::admit::planner::PlannerConfig::new(1, 0));
/// assert_eq!(spec.planner_priority, PlannerPriority::AboveDispatchers);
/// // Dispatchers at SCHED_FIFO 50: the planner at 51; without SCHED_FIFO: time-sharing.
/// assert_eq!(PlannerPriority::AboveDispatchers.fifo_level(Some(50)), Some(51));
/// assert_eq!(PlannerPriority::AboveDispatchers.fifo_level(None), None);
/// assert_eq!(PlannerPriority::Fifo(20).fifo_level(Some(50)), Some(20));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlannerPriority {
    /// `SCHED_FIFO` one level above the dispatchers' ([`crate::Config::fifo_priority`]; 99 if
    /// theirs is 99) when they run under `SCHED_FIFO`, else the time-sharing policy.
    #[default]
    AboveDispatchers,
    /// `SCHED_FIFO` at this priority (1-99), whatever the dispatchers run at.
    Fifo(i32),
    /// The operating system's default time-sharing policy.
    TimeSharing,
}

impl PlannerPriority {
    /// The `SCHED_FIFO` priority the planner's thread asks for when the dispatchers ask for
    /// `dispatchers` (`None`: no `SCHED_FIFO`), or `None` for the time-sharing policy.
    ///
    /// ```
    /// use tempi::spring::PlannerPriority;
    /// assert_eq!(PlannerPriority::AboveDispatchers.fifo_level(Some(99)), Some(99));
    /// assert_eq!(PlannerPriority::TimeSharing.fifo_level(Some(50)), None);
    /// ```
    pub fn fifo_level(self, dispatchers: Option<i32>) -> Option<i32> {
        match self {
            PlannerPriority::AboveDispatchers => dispatchers.map(|p| (p + 1).min(99)),
            PlannerPriority::Fifo(p) => Some(p),
            PlannerPriority::TimeSharing => None,
        }
    }
}

impl SpringSpec {
    /// The most enforcement sets per CPU ([`SpringSpec::sets_per_cpu`], 2^20, the most thread
    /// sets a runtime numbers; [`crate::Config::max_sets`] usually bounds it first).
    ///
    /// ```
    /// use tempi::policy::admit::planner::PlannerConfig;
    /// use tempi::spring::{Spring, SpringSpec};
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let spec = SpringSpec { sets_per_cpu: SpringSpec::MAX_SETS_PER_CPU + 1, ..SpringSpec::new(PlannerConfig::new(1, 0)) };
    /// assert!(Spring::new(&mut rt, spec).is_err());
    /// ```
    pub const MAX_SETS_PER_CPU: usize = 1 << 20;
    /// The most group releases pending at once ([`SpringSpec::max_groups`], 65 536).
    ///
    /// ```
    /// use tempi::policy::admit::planner::PlannerConfig;
    /// use tempi::spring::{Spring, SpringSpec};
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let spec = SpringSpec { max_groups: SpringSpec::MAX_GROUPS + 1, ..SpringSpec::new(PlannerConfig::new(1, 0)) };
    /// assert!(Spring::new(&mut rt, spec).is_err());
    /// ```
    pub const MAX_GROUPS: usize = 1 << 16;

    /// 8 enforcement sets per CPU, 256 pending releases, answers looked for every 200 µs;
    /// in real time the planner's OS thread on CPU 0, one `SCHED_FIFO` level above the
    /// dispatchers when they are under `SCHED_FIFO`.
    ///
    /// ```
    /// let s = tempi::spring::SpringSpec::new(tempi::policy::admit::planner::PlannerConfig::new(1, 0));
    /// assert_eq!(s.poll, std::time::Duration::from_micros(200));
    /// assert_eq!(s.planner_cpu, Some(0));
    /// ```
    pub fn new(planner: PlannerConfig) -> SpringSpec {
        SpringSpec {
            planner,
            sets_per_cpu: 8,
            max_groups: 256,
            poll: Duration::from_micros(200),
            planner_cpu: Some(0),
            planner_priority: PlannerPriority::AboveDispatchers,
        }
    }
}

/// One runtime's plan executor; see the [module documentation](self). Cloning gives another
/// handle on the same executor.
///
/// It belongs to the runtime it was made on: [`Spring::add_group`] with another runtime, and
/// every call from a thread of another runtime ([`Spring::spawn_sync`],
/// [`Spring::spawn_async`], [`Spring::status`], [`Spring::kill`], [`Spring::kill_id`]), are
/// refused with [`Error::ForeignRuntime`] and change nothing.
#[derive(Clone)]
pub struct Spring {
    state: Arc<Mutex<State>>,
    /// The identity of the runtime it executes plans on: every other runtime, and every
    /// thread of another runtime, is refused with [`Error::ForeignRuntime`].
    runtime: crate::RuntimeId,
}

/// A declared or spawned group.
struct GroupEntry {
    name: String,
    spec: Option<GroupSpec>,
    id: Option<GroupId>,
    killed: bool,
    /// Decision row, once planned.
    decision: Option<usize>,
    /// Real time: the requester stopped waiting before the answer came.
    abandoned: bool,
    /// Real time: why the request got no answer (the planner failed).
    error: Option<String>,
}

impl GroupEntry {
    fn new(name: String, spec: Option<GroupSpec>) -> GroupEntry {
        GroupEntry { name, spec, id: None, killed: false, decision: None, abandoned: false, error: None }
    }
}

/// An enforcement set of the pool.
struct Slot {
    set: SetId,
    /// The record of the task its member is running, and the task's group entry.
    record: Option<(usize, usize)>,
    busy: bool,
}

struct State {
    planner: Planner,
    planner_thread: Option<ThreadId>,
    groups: Vec<GroupEntry>,
    /// Declared groups waiting for their release, by (release, declaration).
    pending: VecDeque<(Time, usize)>,
    /// Release instants a timer already covers.
    timed: Vec<Time>,
    records: Vec<TaskRecord>,
    decisions: Vec<GroupDecision>,
    pool: Vec<Vec<Slot>>,
    events: Vec<String>,
    /// Real time: the planner's OS thread.
    rt: Option<realtime::Link>,
    /// Added to every task's WCET in the plan ([`crate::Config::job_overhead`]): a task's
    /// window leaves room for the dispatch that starts it late, as admission's budgets do.
    job_overhead: Duration,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

impl Spring {
    /// Set up plan execution on `rt`: wrap its scheduler in a [`PlanFirst`], create the
    /// enforcement pool and the planner's thread.
    ///
    /// In real time it also starts the planner's OS thread (see the
    /// [module documentation](self)) and waits until that thread has been pinned to
    /// [`SpringSpec::planner_cpu`] and given [`SpringSpec::planner_priority`]; what the
    /// operating system refuses is a warning of the run ([`crate::RunOutcome::warnings`]), and
    /// the planner runs without it.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for a planner of another CPU count or an invalid planner
    /// configuration, for [`SpringSpec::sets_per_cpu`] or [`SpringSpec::max_groups`] above its
    /// limit or a [`PlannerPriority::Fifo`] outside 1..=99 (checked before anything is
    /// allocated), or for a pool the allocator refuses; [`Error::Os`] if the planner's OS thread cannot be started; the
    /// runtime's errors creating sets or the thread.
    ///
    /// ```
    /// use tempi::policy::admit::planner::PlannerConfig;
    /// let mut rt = tempi::Runtime::simulated(2);
    /// assert!(tempi::spring::Spring::new(&mut rt, tempi::spring::SpringSpec::new(PlannerConfig::new(1, 0))).is_err());
    /// ```
    pub fn new<C: Clock>(rt: &mut Runtime<C>, spec: SpringSpec) -> Result<Spring, Error> {
        let sizes = [
            ("sets_per_cpu", spec.sets_per_cpu, SpringSpec::MAX_SETS_PER_CPU, "MAX_SETS_PER_CPU"),
            ("max_groups", spec.max_groups, SpringSpec::MAX_GROUPS, "MAX_GROUPS"),
        ];
        for (field, value, max, name) in sizes {
            if value > max {
                let why = crate::sizes::too_large(field, value, max);
                return Err(Error::InvalidConfig(format!("spring: {why} (SpringSpec::{name})")));
            }
        }
        if let PlannerPriority::Fifo(p) = spec.planner_priority
            && !(1..=99).contains(&p)
        {
            return Err(Error::InvalidConfig(format!(
                "spring: the planner's SCHED_FIFO priority {p} is outside 1..=99"
            )));
        }
        let cpus = rt.config().cpus();
        if spec.planner.cpus != cpus {
            return Err(Error::InvalidConfig(format!(
                "the planner spans {} CPU(s), the runtime has {cpus}",
                spec.planner.cpus
            )));
        }
        let planner = Planner::new(spec.planner).map_err(|e| Error::InvalidConfig(format!("planner: {e}")))?;
        let inner = rt.config().chosen_scheduler();
        // A plan places each thread on one CPU; a global policy would move it.
        let probe = inner();
        if probe.global() {
            return Err(Error::InvalidConfig(format!(
                "thread groups need a per-CPU scheduler: `{}` is global (threads migrate between CPUs)",
                probe.name()
            )));
        }
        let wrapped = PlanFirst::wrap(inner);
        rt.set_scheduler(move || wrapped());
        let state = Arc::new(Mutex::new(State {
            planner,
            planner_thread: None,
            groups: Vec::new(),
            pending: crate::sizes::deque_with_capacity(spec.max_groups, "spring's pending releases (max_groups)")?,
            timed: crate::sizes::vec_with_capacity(spec.max_groups, "spring's release timers (max_groups)")?,
            records: Vec::new(),
            decisions: Vec::new(),
            pool: Vec::with_capacity(cpus),
            events: Vec::new(),
            rt: None,
            job_overhead: rt.config().job_overhead_reserved(),
        }));
        let spring = Spring { state, runtime: rt.id() };
        for cpu in 0..cpus {
            let mut slots = crate::sizes::vec_with_capacity(spec.sets_per_cpu, "spring's sets (sets_per_cpu)")?;
            for i in 0..spec.sets_per_cpu {
                let set = rt.create_set(&format!("spring-cpu{cpu}-{i}"), cpu)?;
                let budget = Budget::new(Duration::from_nanos(1))
                    .replenish(Replenishment::Manual)
                    .action(Kill)
                    .on_event(exec::overrun_handler(spring.clone(), cpu, i));
                rt.set_budget(set, budget)?;
                slots.push(Slot { set, record: None, busy: false });
            }
            lock(&spring.state).pool.push(slots);
        }
        let me = spring.clone();
        let thread = ThreadSpec::new("spring-planner")
            .sporadic(Duration::ZERO)
            .release_queue(spec.max_groups.max(1))
            .priority(PLANNER_PRIORITY)
            .cpu(0);
        let id = if C::MODE == ClockMode::Real {
            let working = lock(&spring.state).planner.clone();
            let placement = realtime::Placement {
                cpu: spec.planner_cpu,
                fifo: spec.planner_priority.fifo_level(rt.config().chosen_fifo_priority()),
            };
            let (link, warnings) = realtime::start(&spring, working, spec.max_groups.max(16), spec.poll, placement)?;
            for w in warnings {
                rt.warn(w);
            }
            lock(&spring.state).rt = Some(link);
            // Dropped with the thread's body: stops and joins the planner's OS thread.
            let shutdown = realtime::Shutdown(spring.clone());
            rt.spawn(thread, move |cx| {
                let _ = &shutdown;
                me.rt_job(cx);
            })?
        } else {
            rt.spawn(thread, move |cx| me.plan_due(cx))?
        };
        lock(&spring.state).planner_thread = Some(id);
        Ok(spring)
    }

    /// Refuse a thread of another runtime.
    fn check_caller(&self, cx: &Ctx<'_>) -> Result<(), Error> {
        if cx.runtime_id() != self.runtime {
            return Err(Error::ForeignRuntime);
        }
        Ok(())
    }

    /// Kill the most recently accepted live group called `name`: its tasks that have not
    /// started leave the plan (their reservations are freed for later requests) and each of
    /// its threads ends at its next task boundary. Returns the group's id and how many tasks
    /// left the plan, or `None` if no live group has that name.
    ///
    /// # Errors
    /// [`Error::ForeignRuntime`] for a thread of another runtime (nothing is killed).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::{PlannerConfig, TaskRequest};
    /// use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec, TaskOutcome};
    /// use tempi::{Runtime, ThreadSpec, Time};
    /// let ms = Duration::from_millis;
    /// let mut rt = Runtime::simulated(2);
    /// let planner = PlannerConfig { planner_wcet: ms(1), safety: Duration::ZERO, ..PlannerConfig::new(2, 0) };
    /// let spring = Spring::new(&mut rt, SpringSpec::new(planner)).unwrap();
    /// spring.add_group(&mut rt, GroupSpec::new("victim", Time::ZERO, Time::from_millis(20))
    ///     .thread(GroupThread::new("a").work(TaskRequest::new(ms(2)), ms(2)).work(TaskRequest::new(ms(2)), ms(2)))).unwrap();
    /// let s = spring.clone();
    /// // On CPU 1: on the victim's CPU 0, planned work runs above it.
    /// rt.spawn(ThreadSpec::new("killer").cpu(1), move |cx| {
    ///     cx.sleep_until(Time::from_millis(2)); // the first task runs from 1 to 3 ms
    ///     assert_eq!(s.kill(cx, "victim").unwrap().map(|(_, n)| n), Some(1));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// let outcomes: Vec<_> = spring.tasks().iter().map(|t| t.outcome).collect();
    /// assert_eq!(outcomes, [TaskOutcome::Completed, TaskOutcome::Killed]);
    /// ```
    pub fn kill(&self, cx: &Ctx<'_>, name: &str) -> Result<Option<(GroupId, usize)>, Error> {
        self.check_caller(cx)?;
        let mut st = lock(&self.state);
        let Some(g) = st.groups.iter().rposition(|g| g.name == name && g.id.is_some() && !g.killed) else {
            return Ok(None);
        };
        Ok(st.kill_group(g, cx.now()))
    }

    /// Kill the live group `id`, as [`Spring::kill`] does by name.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::{PlannerConfig, TaskRequest};
    /// use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec, TaskOutcome};
    /// use tempi::{Runtime, ThreadSpec, Time};
    /// let ms = Duration::from_millis;
    /// let mut rt = Runtime::simulated(1);
    /// let planner = PlannerConfig { planner_wcet: ms(2), safety: Duration::ZERO, ..PlannerConfig::new(1, 0) };
    /// let spring = Spring::new(&mut rt, SpringSpec::new(planner)).unwrap();
    /// spring.add_group(&mut rt, GroupSpec::new("g", Time::ZERO, Time::from_millis(20))
    ///     .thread(GroupThread::new("a").work(TaskRequest::new(ms(2)), ms(2)))).unwrap();
    /// let s = spring.clone();
    /// rt.spawn(ThreadSpec::new("killer").priority(1), move |cx| {
    ///     // Decided at 0 + 2 ms of planner time; killed before its task starts.
    ///     let id = s.decisions()[0].id.expect("accepted");
    ///     assert_eq!(s.kill_id(cx, id), Ok(Some((id, 1))));
    ///     assert_eq!(s.kill_id(cx, id), Ok(None)); // no longer live
    /// }).unwrap();
    /// rt.run().unwrap();
    /// assert_eq!(spring.tasks()[0].outcome, TaskOutcome::Killed);
    /// ```
    pub fn kill_id(&self, cx: &Ctx<'_>, id: GroupId) -> Result<Option<(GroupId, usize)>, Error> {
        self.check_caller(cx)?;
        let mut st = lock(&self.state);
        let Some(g) = st.groups.iter().position(|g| g.id == Some(id) && !g.killed) else {
            return Ok(None);
        };
        Ok(st.kill_group(g, cx.now()))
    }

    /// Every task of every accepted group, in acceptance order, then by thread and task.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::{PlannerConfig, TaskRequest};
    /// use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec, TaskOutcome};
    /// use tempi::{Runtime, Time};
    /// let ms = Duration::from_millis;
    /// let mut rt = Runtime::simulated(1);
    /// let planner = PlannerConfig { planner_wcet: ms(2), safety: Duration::ZERO, ..PlannerConfig::new(1, 0) };
    /// let spring = Spring::new(&mut rt, SpringSpec::new(planner)).unwrap();
    /// spring.add_group(&mut rt, GroupSpec::new("g", Time::ZERO, Time::from_millis(10))
    ///     .thread(GroupThread::new("a").work(TaskRequest::new(ms(1)), ms(1)).work(TaskRequest::new(ms(1)), ms(1))))
    ///     .unwrap();
    /// rt.run().unwrap();
    /// let tasks = spring.tasks();
    /// assert_eq!(tasks.len(), 2);
    /// assert!(tasks.iter().all(|t| t.outcome == TaskOutcome::Completed));
    /// // Back to back after the planner's 2 ms.
    /// assert_eq!(tasks[1].actual_start, Some(Time::from_millis(3)));
    /// ```
    pub fn tasks(&self) -> Vec<TaskRecord> {
        lock(&self.state).records.clone()
    }

    /// Every planner answer, in request order.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::{PlannerConfig, TaskRequest};
    /// use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec};
    /// use tempi::{Runtime, Time};
    /// let ms = Duration::from_millis;
    /// let mut rt = Runtime::simulated(1);
    /// let planner = PlannerConfig { planner_wcet: ms(2), safety: Duration::ZERO, ..PlannerConfig::new(1, 0) };
    /// let spring = Spring::new(&mut rt, SpringSpec::new(planner)).unwrap();
    /// spring.add_group(&mut rt, GroupSpec::new("fits", Time::ZERO, Time::from_millis(10))
    ///     .thread(GroupThread::new("a").work(TaskRequest::new(ms(3)), ms(3)))).unwrap();
    /// spring.add_group(&mut rt, GroupSpec::new("too-much", Time::ZERO, Time::from_millis(10))
    ///     .thread(GroupThread::new("b").work(TaskRequest::new(ms(7)), ms(7)))).unwrap();
    /// rt.run().unwrap();
    /// let d = spring.decisions();
    /// assert_eq!(d.iter().map(|d| (d.group.as_str(), d.id.is_some())).collect::<Vec<_>>(),
    ///     [("fits", true), ("too-much", false)]);
    /// ```
    pub fn decisions(&self) -> Vec<GroupDecision> {
        lock(&self.state).decisions.clone()
    }

    /// What went wrong without stopping the run (a group whose threads could not be
    /// spawned, a task that ran without enforcement), in order.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::{PlannerConfig, TaskRequest};
    /// use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec};
    /// use tempi::{Runtime, Time};
    /// let ms = Duration::from_millis;
    /// let mut rt = Runtime::simulated(1);
    /// let planner = PlannerConfig { planner_wcet: ms(2), safety: Duration::ZERO, ..PlannerConfig::new(1, 0) };
    /// let spring = Spring::new(&mut rt, SpringSpec::new(planner)).unwrap();
    /// spring.add_group(&mut rt, GroupSpec::new("g", Time::ZERO, Time::from_millis(10))
    ///     .thread(GroupThread::new("a").work(TaskRequest::new(ms(1)), ms(1)))).unwrap();
    /// rt.run().unwrap();
    /// assert!(spring.events().is_empty()); // a run without trouble has none
    /// ```
    pub fn events(&self) -> Vec<String> {
        lock(&self.state).events.clone()
    }

    /// A copy of the planner as it stands (its plan included).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let s = tempi::spring::Spring::new(&mut rt, tempi::spring::SpringSpec::new(
    ///     tempi::policy::admit::planner::PlannerConfig::new(1, 0))).unwrap();
    /// assert_eq!(s.planner().plan().task_count(), 0);
    /// ```
    pub fn planner(&self) -> Planner {
        lock(&self.state).planner.clone()
    }
}

impl State {
    /// Mark group `g` killed and take its tasks that have not started out of the plan.
    fn kill_group(&mut self, g: usize, now: Time) -> Option<(GroupId, usize)> {
        let id = self.groups[g].id?;
        self.groups[g].killed = true;
        let removed = self.planner.kill(id, now).unwrap_or(0);
        // In real time the working plan is the planner's thread's: it is told too. A full
        // queue only delays freeing the reservations (the group's threads stop anyway).
        if let Some(link) = &self.rt
            && let Err(e) = link.post(realtime::Request::Kill { id, at: now })
        {
            let message = format!("{now}: group \"{}\": kill not passed to the planner: {e}", self.groups[g].name);
            self.events.push(message);
        }
        Some((id, removed))
    }

    /// The records and thread bodies of accepted group `g`.
    fn prepare(&mut self, g: usize, id: GroupId, spec: GroupSpec) -> Vec<(ThreadSpec, exec::ThreadBody)> {
        let mut out = Vec::with_capacity(spec.threads.len());
        let group_name = spec.name;
        for (i, thread) in spec.threads.into_iter().enumerate() {
            let base = self.records.len();
            let mut cpu = 0;
            for planned in self.planner.plan().tasks().filter(|t| t.group == id && t.thread == i) {
                cpu = planned.cpu;
                self.records.push(TaskRecord {
                    group: group_name.clone(),
                    thread: thread.name.clone(),
                    task: planned.task,
                    cpu: planned.cpu,
                    planned_start: planned.start,
                    planned_finish: planned.finish,
                    actual_start: None,
                    actual_finish: None,
                    outcome: TaskOutcome::Planned,
                });
            }
            let spec = ThreadSpec::new(format!("{group_name}/{}", thread.name)).priority(PLANNED_PRIORITY).cpu(cpu);
            let bodies: Vec<TaskBody> = thread.tasks.into_iter().map(|t| t.body).collect();
            out.push((spec, exec::ThreadBody { g, id, thread: i, base, bodies }));
        }
        out
    }
}
