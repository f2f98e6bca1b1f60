//! The Spring planner: guarantees a thread group before it starts, by planning every one of
//! its tasks onto the CPUs together with the work already guaranteed, or refusing it whole.
//!
//! Owns the planner ([`Planner`]), its configuration and its answers. It is a pure data
//! structure and algorithm: it never reads a clock (the present instant is a parameter), never
//! touches the kernel, and after construction never allocates (see *Memory*). Executing a
//! plan, spawning and killing threads belong to the kernel, not here.
//!
//! Files: `model.rs` (requests and errors), `plan.rs` (the plan: reservations, kill,
//! retirement), `search.rs` (the heuristic search), `heuristic.rs` (H, by name),
//! `placement.rs` (choosing a thread's CPU, by name).
//!
//! # The request and the guarantee
//!
//! A request is a thread group: a DAG of threads, each a sequence of tasks, each task with a
//! WCET and the resources it holds (shared or exclusive) for its whole interval, plus the
//! group's release time, end-to-end deadline and importance. Within a thread, tasks run in
//! order on one CPU; a thread starts after every task of the threads it comes after. The
//! planner accepts the request only if every task of it, and every guaranteed task it
//! replans, gets an interval that meets its deadline. A refused request leaves the plan exactly
//! as it was. A guaranteed task never misses: the plan reserves its CPU and resources.
//!
//! Each task is held to an *effective deadline*: the group's deadline minus the WCETs of the
//! longest chain of tasks that must follow it (the rest of its thread, then its successor
//! threads). Meeting every effective deadline is necessary for the group to finish in time,
//! and it orders the search sensibly along chains.
//!
//! # The cutoff line
//!
//! A request planned at `now` gets a budget `b` (below). Every task planned to start before
//! `now + b` (the cutoff line) stays where it is: the dispatchers may be running it while the
//! planner works. Only tasks starting at or after the cutoff are replanned together with the
//! request, and none of them starts before the cutoff. The tasks that stay shape the starting
//! availability of the CPUs and resources.
//!
//! # The search
//!
//! The state of a partial schedule is, per CPU, when it is next free; per resource, when it is
//! next free for a shared and for an exclusive holder; per thread, its CPU once placed. A
//! task's earliest start time (EST) on a CPU is the latest of its release, the cutoff, the end
//! of its predecessors (the previous task of its thread; for a thread's first task, the last
//! task of every predecessor thread), the availability of each resource it holds in its mode,
//! and the CPU's availability. At each step:
//!
//! 1. take, in effective-deadline order, the first `k` *eligible* unplanned tasks (those whose
//!    predecessors are all planned); for each, choose its CPU (its thread's CPU if placed,
//!    else by the [`Placement`] rule) and compute its EST and H ([`Heuristic`]);
//! 2. strong feasibility: if any of them cannot finish by its deadline starting at its EST,
//!    the partial schedule is a dead end. When `k` covers every remaining task, the tasks
//!    that are not yet eligible are checked too, with a lower bound of their end;
//! 3. otherwise plan the candidate with the smallest H (with the stay-within-process rule,
//!    first among the candidates whose CPU last ran their own process) at its EST, and raise
//!    the CPU's and resources' availability to its end;
//! 4. at a dead end, undo the last step and take its next-best candidate instead (a
//!    backtrack), at most [`PlannerConfig::max_backtracks`] times per request.
//!
//! Availability times only rise, so no planned interval is ever overlapped by a later one
//! on its CPU or (beyond what the modes allow) on its resources.
//!
//! # Bounded planning time and the cost model
//!
//! The planner's time is modelled, deterministically: `cost = fixed + per_evaluation × E`,
//! where `E` counts evaluations (one task's EST and H, or one lower-bound check).
//! The budget of a request is `min(planner WCET, caller's max_wait) − safety window`. With
//! `n` tasks to plan, a step evaluates at most `min(k, remaining)` tasks, so a search without
//! backtracking costs at most `fixed + per_evaluation × (k(k+1)/2 + (n−k)k)`; the planner
//! picks the largest `k` whose bound fits the budget (`k = n`, all, when it fits) and answers
//! "no" at once if even `k = 1` does not. Backtracks spend what is left; a search that would
//! pass its budget stops and answers "no". The reported cost never exceeds the budget.
//!
//! # Complexity
//!
//! With `n` tasks to plan (request plus replanned), `c` CPUs, `r` resources per task and no
//! backtracking: each of the `n` steps evaluates at most `k` candidates at O(c + r) each and
//! walks the deadline-ordered list (O(n)), so a search is O(n·(k·(c + r) + n)), O(n²) in
//! the worst case with `k = n`. Loading the plan is O(plan size) plus an O(n log n) sort. A
//! backtrack costs one step. Kill is O(tasks of the group), retirement O(plan size).
//!
//! # Memory
//!
//! The plan's tables and the search's scratch are sized once from [`Capacity`]; a request
//! that would not fit is refused with [`PlanError::Full`] before anything changes. Planning,
//! committing, killing and retiring never allocate. Building a [`GroupRequest`] allocates,
//! on the caller's side, before planning.
//!
//! [`Planner`]: crate::policy::admit::planner::Planner
//! [`Placement`]: crate::policy::admit::planner::Placement
//! [`Heuristic`]: crate::policy::admit::planner::Heuristic
//! [`PlannerConfig::max_backtracks`]: crate::policy::admit::planner::PlannerConfig::max_backtracks
//! [`Capacity`]: crate::policy::admit::planner::Capacity
//! [`PlanError::Full`]: crate::policy::admit::planner::PlanError::Full
//! [`GroupRequest`]: crate::policy::admit::planner::GroupRequest

mod heuristic;
mod model;
mod placement;
mod plan;
mod search;

pub use heuristic::Heuristic;
pub use model::{
    GroupId, GroupRequest, Locality, Mode, PlanError, ResourceId, ResourceUse, TaskRequest, ThreadRequest,
};
pub use placement::Placement;
pub use plan::{Capacity, GroupInfo, Plan, PlannedTask};

use std::time::Duration;

use crate::Time;
use search::{Ending, Limits, Search};

/// The planner's modelled running time: a fixed cost per request plus a cost per evaluation.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::admit::planner::CostModel;
/// let c = CostModel { fixed: Duration::from_micros(50), per_evaluation: Duration::from_micros(2) };
/// assert_eq!(c.cost(10), Duration::from_micros(70));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CostModel {
    /// Setting up a request, whatever its size.
    pub fixed: Duration,
    /// One evaluation of one task.
    pub per_evaluation: Duration,
}

impl CostModel {
    /// The modelled time of `evaluations` evaluations, fixed cost included (saturating).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::CostModel;
    /// let c = CostModel { fixed: Duration::from_micros(1), per_evaluation: Duration::ZERO };
    /// assert_eq!(c.cost(1_000), Duration::from_micros(1));
    /// ```
    pub fn cost(&self, evaluations: u64) -> Duration {
        let per = u128::from(crate::time::nanos(self.per_evaluation));
        let total = u128::from(crate::time::nanos(self.fixed)) + per * u128::from(evaluations);
        Duration::from_nanos(u64::try_from(total).unwrap_or(u64::MAX))
    }
}

/// Everything fixed when a planner is built.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::admit::planner::{Heuristic, PlannerConfig};
/// let c = PlannerConfig::new(3, 2);
/// assert_eq!(c.heuristic, Heuristic::DPlusWEst { weight_milli: 1000 });
/// assert_eq!(c.planner_wcet, Duration::from_millis(450));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannerConfig {
    /// How many CPUs plans span (1 to 65 536).
    pub cpus: usize,
    /// How many resources tasks may hold (at most 65 536).
    pub resources: usize,
    /// How candidates are ranked.
    pub heuristic: Heuristic,
    /// How a thread's CPU is chosen.
    pub placement: Placement,
    /// Prefer, among the candidates, those whose CPU last ran a task of their own process.
    pub stay_within_process: bool,
    /// Backtracks allowed per request.
    pub max_backtracks: u32,
    /// The planner's declared worst-case time per request.
    pub planner_wcet: Duration,
    /// Taken off the declared WCET to make the budget, for what the model does not see.
    pub safety: Duration,
    /// The modelled cost of planning.
    pub cost: CostModel,
    /// A task on its process's home CPU runs in this percentage of its WCET (1 to 100).
    pub local_percent: u32,
    /// Switching a CPU between tasks of one process.
    pub fast_switch: Duration,
    /// Switching a CPU between processes (or into a process from an idle CPU).
    pub slow_switch: Duration,
    /// Room preallocated for the plan and the search.
    pub capacity: Capacity,
}

impl PlannerConfig {
    /// A configuration for `cpus` CPUs and `resources` resources: `d+w*est` with W = 1,
    /// `earliest` placement, stay-within-process off, 8 backtracks, a 450 ms planner WCET
    /// with a 50 ms safety window, 1 µs fixed and 100 ns per evaluation, no locality speed-up,
    /// free switches, room for 1024 tasks.
    ///
    /// ```
    /// let c = tempi::policy::admit::planner::PlannerConfig::new(1, 0);
    /// assert_eq!((c.max_backtracks, c.local_percent), (8, 100));
    /// ```
    pub fn new(cpus: usize, resources: usize) -> PlannerConfig {
        PlannerConfig {
            cpus,
            resources,
            heuristic: Heuristic::DPlusWEst { weight_milli: 1000 },
            placement: Placement::Earliest,
            stay_within_process: false,
            max_backtracks: 8,
            planner_wcet: Duration::from_millis(450),
            safety: Duration::from_millis(50),
            cost: CostModel { fixed: Duration::from_micros(1), per_evaluation: Duration::from_nanos(100) },
            local_percent: 100,
            fast_switch: Duration::ZERO,
            slow_switch: Duration::ZERO,
            capacity: Capacity::for_tasks(1024),
        }
    }

    fn validate(&self) -> Result<(), PlanError> {
        if self.cpus == 0 || self.cpus > usize::from(u16::MAX) + 1 {
            return Err(PlanError::Config("cpus must be between 1 and 65536"));
        }
        if self.resources > usize::from(u16::MAX) + 1 {
            return Err(PlanError::Config("at most 65536 resources"));
        }
        if !(1..=100).contains(&self.local_percent) {
            return Err(PlanError::Config("local_percent must be between 1 and 100"));
        }
        let c = self.capacity;
        let tables = [
            ("capacity.groups", c.groups),
            ("capacity.threads", c.threads),
            ("capacity.tasks", c.tasks),
            ("capacity.links", c.links),
            ("capacity.uses", c.uses),
        ];
        if let Some(&(field, value)) = tables.iter().find(|(_, n)| *n > Capacity::MAX) {
            return Err(PlanError::TooLarge { field, value, max: Capacity::MAX });
        }
        Ok(())
    }
}

/// Why a planned request was refused. The plan is unchanged.
///
/// ```
/// use tempi::policy::admit::planner::Rejection;
/// assert_ne!(Rejection::Infeasible, Rejection::BudgetExhausted);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The budget does not cover even one evaluation per task (`k = 1`): the search did not
    /// start.
    BudgetTooSmall {
        /// What `k = 1` would have needed.
        needed: Duration,
    },
    /// The search ran out of budget before finding a plan.
    BudgetExhausted,
    /// Every schedule the search tried (within its backtracks) missed a deadline.
    Infeasible,
}

/// The planner's answer.
///
/// ```
/// use tempi::policy::admit::planner::{Decision, GroupId};
/// assert!(Decision::Accepted(GroupId(1)).is_accepted());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The group is guaranteed, under this id.
    Accepted(GroupId),
    /// The group is not; nothing changed.
    Rejected(Rejection),
}

impl Decision {
    /// Whether the group was accepted.
    ///
    /// ```
    /// use tempi::policy::admit::planner::{Decision, Rejection};
    /// assert!(!Decision::Rejected(Rejection::Infeasible).is_accepted());
    /// ```
    pub fn is_accepted(self) -> bool {
        matches!(self, Decision::Accepted(_))
    }
}

/// The answer to one request and what it cost.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::admit::planner::*;
/// use tempi::Time;
/// let mut p = Planner::new(PlannerConfig::new(1, 0)).unwrap();
/// let g = GroupRequest::new(Time::ZERO, Time::from_secs(1))
///     .thread(ThreadRequest::new().task(TaskRequest::new(Duration::from_millis(3))));
/// let out = p.submit(&g, Time::ZERO, None).unwrap();
/// assert!(out.decision.is_accepted());
/// assert_eq!((out.tasks, out.k, out.evaluations), (1, 1, 1));
/// assert!(out.cost <= out.budget);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanOutcome {
    /// Accepted or refused, and why.
    pub decision: Decision,
    /// Tasks planned: the request's plus the replanned guaranteed ones.
    pub tasks: usize,
    /// Candidates per step (equal to `tasks` when every task was considered; 0 when the
    /// search did not start).
    pub k: usize,
    /// Evaluations made.
    pub evaluations: u64,
    /// Backtracks made.
    pub backtracks: u32,
    /// Modelled planner time (zero when the search did not start).
    pub cost: Duration,
    /// The budget the request had.
    pub budget: Duration,
    /// The cutoff line: tasks planned to start before it were left where they were.
    pub cutoff: Time,
}

/// The Spring planner: a plan and the search that extends it; see the
/// [module documentation](self).
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::admit::planner::*;
/// use tempi::Time;
/// let ms = Duration::from_millis;
/// let config = PlannerConfig { safety: Duration::ZERO, ..PlannerConfig::new(2, 1) };
/// let mut p = Planner::new(config).unwrap();
/// // Two threads; the second waits for the first and needs resource 0 exclusively.
/// let g = GroupRequest::new(Time::ZERO, Time::from_millis(20))
///     .thread(ThreadRequest::new().task(TaskRequest::new(ms(4))))
///     .thread(ThreadRequest::new().after(0).task(TaskRequest::new(ms(5)).exclusive(ResourceId(0))));
/// let out = p.submit(&g, Time::ZERO, Some(ms(1))).unwrap();
/// assert!(out.decision.is_accepted());
/// // The budget is 1 ms (the caller's wait, under the planner's WCET), so nothing starts
/// // before the 1 ms cutoff.
/// let starts: Vec<_> = p.plan().tasks().map(|t| t.start).collect();
/// assert_eq!(starts, [Time::from_millis(1), Time::from_millis(5)]);
/// ```
///
/// Cloning a planner (it allocates) gives a copy of its plan with every table preallocated
/// again, e.g. to try requests against the same starting plan.
#[derive(Debug)]
pub struct Planner {
    config: PlannerConfig,
    plan: Plan,
    search: Search,
}

impl Planner {
    /// A planner with an empty plan, every table preallocated.
    ///
    /// ```
    /// use tempi::policy::admit::planner::{PlanError, Planner, PlannerConfig};
    /// assert!(Planner::new(PlannerConfig::new(4, 5)).is_ok());
    /// assert!(matches!(Planner::new(PlannerConfig::new(0, 5)), Err(PlanError::Config(_))));
    /// ```
    pub fn new(config: PlannerConfig) -> Result<Planner, PlanError> {
        config.validate()?;
        Ok(Planner {
            plan: Plan::new(config.cpus, config.resources, config.capacity)?,
            search: Search::new(&config)?,
            config,
        })
    }

    /// The configuration.
    ///
    /// ```
    /// use tempi::policy::admit::planner::{Planner, PlannerConfig};
    /// assert_eq!(Planner::new(PlannerConfig::new(2, 0)).unwrap().config().cpus, 2);
    /// ```
    pub fn config(&self) -> &PlannerConfig {
        &self.config
    }

    /// The current plan.
    ///
    /// ```
    /// use tempi::policy::admit::planner::{Planner, PlannerConfig};
    /// assert_eq!(Planner::new(PlannerConfig::new(2, 0)).unwrap().plan().task_count(), 0);
    /// ```
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The budget of a request whose caller waits at most `max_wait`: the smaller of the
    /// planner's WCET and `max_wait`, minus the safety window.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::{Planner, PlannerConfig};
    /// let p = Planner::new(PlannerConfig::new(1, 0)).unwrap();
    /// assert_eq!(p.budget(None), Duration::from_millis(400));
    /// assert_eq!(p.budget(Some(Duration::from_millis(100))), Duration::from_millis(50));
    /// ```
    pub fn budget(&self, max_wait: Option<Duration>) -> Duration {
        let limit = max_wait.map_or(self.config.planner_wcet, |w| w.min(self.config.planner_wcet));
        limit.saturating_sub(self.config.safety)
    }

    /// Plan `request` at `now` for a caller that waits at most `max_wait` (see the
    /// [module documentation](self)). `Err` means the request could not be planned at all
    /// (malformed, or the tables are full); the plan is unchanged then and on a rejection.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::*;
    /// use tempi::Time;
    /// let mut p = Planner::new(PlannerConfig::new(1, 0)).unwrap();
    /// let too_tight = GroupRequest::new(Time::ZERO, Time::from_millis(2))
    ///     .thread(ThreadRequest::new().task(TaskRequest::new(Duration::from_millis(3))));
    /// let out = p.submit(&too_tight, Time::ZERO, Some(Duration::from_millis(60))).unwrap();
    /// assert_eq!(out.decision, Decision::Rejected(Rejection::Infeasible));
    /// assert_eq!(p.plan().task_count(), 0);
    /// ```
    pub fn submit(
        &mut self,
        request: &GroupRequest,
        now: Time,
        max_wait: Option<Duration>,
    ) -> Result<PlanOutcome, PlanError> {
        self.submit_inner(request, now, max_wait, None)
    }

    /// Plan `request` at `now` as [`Planner::submit`] does, but hold the search to its budget
    /// in wall-clock time: it may not run past `started + budget` (`started` is when planning
    /// began), whatever the cost model says. Every evaluation reads the monotonic clock; a
    /// search that reaches the limit stops and answers [`Rejection::BudgetExhausted`], and
    /// the plan is unchanged. `k` is still chosen by the cost model, which stands for the
    /// planner's estimate of its own speed (a zero per-evaluation cost means `k` = all), and
    /// the answer's `cost` is the measured time. This is how the planner runs in real time.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use tempi::policy::admit::planner::*;
    /// use tempi::Time;
    /// let free = CostModel { fixed: Duration::ZERO, per_evaluation: Duration::ZERO };
    /// let config = PlannerConfig { planner_wcet: Duration::from_millis(100), safety: Duration::ZERO, cost: free,
    ///     ..PlannerConfig::new(1, 0) };
    /// let mut p = Planner::new(config).unwrap();
    /// let g = GroupRequest::new(Time::ZERO, Time::from_secs(1))
    ///     .thread(ThreadRequest::new().task(TaskRequest::new(Duration::from_millis(3))));
    /// // Planning began long ago: the budget has already run out.
    /// let long_ago = Instant::now() - Duration::from_secs(1);
    /// let out = p.submit_wall(&g, Time::ZERO, None, long_ago).unwrap();
    /// assert_eq!(out.decision, Decision::Rejected(Rejection::BudgetExhausted));
    /// assert!(p.submit_wall(&g, Time::ZERO, None, Instant::now()).unwrap().decision.is_accepted());
    /// ```
    pub fn submit_wall(
        &mut self,
        request: &GroupRequest,
        now: Time,
        max_wait: Option<Duration>,
        started: std::time::Instant,
    ) -> Result<PlanOutcome, PlanError> {
        let deadline = started.checked_add(self.budget(max_wait)).unwrap_or(started);
        let mut out = self.submit_inner(request, now, max_wait, Some(deadline))?;
        out.cost = started.elapsed();
        Ok(out)
    }

    fn submit_inner(
        &mut self,
        request: &GroupRequest,
        now: Time,
        max_wait: Option<Duration>,
        wall_deadline: Option<std::time::Instant>,
    ) -> Result<PlanOutcome, PlanError> {
        let config = &self.config;
        request.validate(config.cpus, config.resources)?;
        self.plan.check_room(Capacity {
            groups: 1,
            threads: request.threads.len(),
            tasks: request.task_count(),
            links: request.threads.iter().map(|t| t.after.len()).sum(),
            uses: request.threads.iter().flat_map(|t| &t.tasks).map(|t| t.resources.len()).sum(),
        })?;
        let budget = self.budget(max_wait);
        let cutoff = now.saturating_add(budget);
        self.search.load(&self.plan, request, cutoff.as_nanos(), config);
        let n = self.search.items.len();
        let mut out = PlanOutcome {
            decision: Decision::Rejected(Rejection::Infeasible),
            tasks: n,
            k: 0,
            evaluations: 0,
            backtracks: 0,
            cost: Duration::ZERO,
            budget,
            cutoff,
        };
        let max_evaluations = evaluations_within(config.cost, budget);
        let Some(k) = max_evaluations.and_then(|max| largest_k(n, max)) else {
            let needed = config.cost.cost(n as u64);
            out.decision = Decision::Rejected(Rejection::BudgetTooSmall { needed });
            return Ok(out);
        };
        // In wall-clock mode the clock, not the model, bounds the evaluations.
        let max_evaluations = if wall_deadline.is_some() { u64::MAX } else { max_evaluations.unwrap_or(0) };
        let limits = Limits { k, max_evaluations, wall_deadline };
        let ending = self.search.run(config, &limits);
        out.k = k;
        out.evaluations = self.search.evaluations;
        out.backtracks = self.search.backtracks;
        out.cost = config.cost.cost(self.search.evaluations);
        out.decision = match ending {
            Ending::Feasible => Decision::Accepted(self.plan.commit(&self.search, request)),
            Ending::Infeasible => Decision::Rejected(Rejection::Infeasible),
            Ending::BudgetExhausted => Decision::Rejected(Rejection::BudgetExhausted),
        };
        Ok(out)
    }

    /// Make this planner's plan a copy of `other`'s, without allocating (both were built
    /// with the same configuration; the tables are preallocated). How a plan worked on
    /// elsewhere is published to its readers.
    ///
    /// # Errors
    /// [`PlanError::Config`] if the two planners' configurations differ.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::*;
    /// use tempi::Time;
    /// let mut work = Planner::new(PlannerConfig::new(1, 0)).unwrap();
    /// let mut shown = Planner::new(PlannerConfig::new(1, 0)).unwrap();
    /// let g = GroupRequest::new(Time::ZERO, Time::from_secs(1))
    ///     .thread(ThreadRequest::new().task(TaskRequest::new(Duration::from_millis(3))));
    /// work.submit(&g, Time::ZERO, None).unwrap();
    /// shown.copy_plan_from(&work).unwrap();
    /// assert_eq!(shown.plan().task_count(), 1);
    /// ```
    pub fn copy_plan_from(&mut self, other: &Planner) -> Result<(), PlanError> {
        if self.config != other.config {
            return Err(PlanError::Config("the planners' configurations differ"));
        }
        self.plan.copy_from(&other.plan);
        Ok(())
    }

    /// Remove group `id`'s tasks that have not started by `now`; see [`Plan::kill`].
    ///
    /// ```
    /// use tempi::policy::admit::planner::{GroupId, PlanError, Planner, PlannerConfig};
    /// use tempi::Time;
    /// let mut p = Planner::new(PlannerConfig::new(1, 0)).unwrap();
    /// assert_eq!(p.kill(GroupId(9), Time::ZERO), Err(PlanError::UnknownGroup(GroupId(9))));
    /// ```
    pub fn kill(&mut self, id: GroupId, now: Time) -> Result<usize, PlanError> {
        self.plan.kill(id, now)
    }

    /// Remove the groups finished by `now`; see [`Plan::retire`].
    ///
    /// ```
    /// use tempi::policy::admit::planner::{Planner, PlannerConfig};
    /// use tempi::Time;
    /// assert_eq!(Planner::new(PlannerConfig::new(1, 0)).unwrap().retire(Time::MAX), 0);
    /// ```
    pub fn retire(&mut self, now: Time) -> usize {
        self.plan.retire(now)
    }
}

impl Clone for Planner {
    fn clone(&self) -> Planner {
        let config = self.config;
        // A copy needs the tables its original got: only memory running out refuses them.
        fn refused<T>(e: PlanError) -> T {
            panic!("cloning a planner: {e}")
        }
        let mut plan = Plan::new(config.cpus, config.resources, config.capacity).unwrap_or_else(refused);
        plan.copy_from(&self.plan);
        Planner { plan, search: Search::new(&config).unwrap_or_else(refused), config }
    }
}

/// An empty table of `entries` for the planner, or [`PlanError::NoMemory`] if the allocator
/// refuses it.
pub(super) fn table<T>(table: &'static str, entries: usize) -> Result<Vec<T>, PlanError> {
    let mut v = Vec::new();
    v.try_reserve_exact(entries).map_err(|_| PlanError::NoMemory { table, entries })?;
    Ok(v)
}

/// How many evaluations fit in `budget` after the fixed cost (`None` if not even the fixed
/// cost does).
fn evaluations_within(cost: CostModel, budget: Duration) -> Option<u64> {
    let left = budget.checked_sub(cost.fixed)?;
    let per = crate::time::nanos(cost.per_evaluation);
    Some(crate::time::nanos(left).checked_div(per).unwrap_or(u64::MAX))
}

/// The most evaluations a search of `n` tasks with `k` candidates per step makes without
/// backtracking: step `i` (with `n − i` tasks left) evaluates `min(k, n − i)`.
fn evaluations_bound(n: usize, k: usize) -> u128 {
    let (n, k) = (n as u128, k.min(n) as u128);
    k * (k + 1) / 2 + (n - k) * k
}

/// The largest `k` in `1..=n` whose bound fits `max` evaluations (`n` means all).
fn largest_k(n: usize, max: u64) -> Option<usize> {
    if evaluations_bound(n, 1) > u128::from(max) {
        return None;
    }
    let (mut lo, mut hi) = (1, n.max(1));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if evaluations_bound(n, mid) <= u128::from(max) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_is_triangular_when_k_covers_everything() {
        assert_eq!(evaluations_bound(10, 10), 55);
        assert_eq!(evaluations_bound(10, 100), 55);
        assert_eq!(evaluations_bound(10, 1), 10);
        assert_eq!(evaluations_bound(10, 3), 6 + 21);
    }

    #[test]
    fn k_is_the_largest_that_fits() {
        assert_eq!(largest_k(10, 55), Some(10));
        assert_eq!(largest_k(10, 54), Some(9));
        assert_eq!(largest_k(10, 27), Some(3));
        assert_eq!(largest_k(10, 9), None);
    }
}
