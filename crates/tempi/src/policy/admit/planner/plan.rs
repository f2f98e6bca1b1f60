//! The plan: every guaranteed task with its CPU and its reserved interval, grouped by the
//! thread group it belongs to.
//!
//! Owns the plan's tables and the operations that change them outside a search: committing
//! an accepted search, killing a group's unstarted tasks, retiring finished groups. It never
//! searches and never reads a clock; the time of a kill or retirement is a parameter.
//!
//! The tables are flat and preallocated ([`Capacity`]). A group's threads, tasks, thread
//! links and resource uses are contiguous, and every index inside a group is relative to the
//! group, so removing a group is a `drain` of its ranges and nothing else is renumbered.
//!
//! A task's reservation is the half-open interval `[start, finish)`: its CPU and each of its
//! resources (in the task's mode) are its alone, or shared with other shared holders, for
//! that interval. Per-CPU and per-resource earliest-available times are derived from the
//! tasks ([`Plan::cpu_available`], [`Plan::resource_available`]).

use std::time::Duration;

use super::model::{GroupId, GroupRequest, Locality, Mode, PlanError, ResourceUse};
use super::search::Search;
use crate::Time;

/// Room preallocated for each table of a plan (and of the planner's search, which holds at
/// most the plan plus one request).
///
/// ```
/// use tempi::policy::admit::planner::Capacity;
/// let c = Capacity::for_tasks(100);
/// assert_eq!((c.tasks, c.threads, c.groups), (100, 100, 100));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    /// Groups held at once.
    pub groups: usize,
    /// Threads held at once.
    pub threads: usize,
    /// Tasks held at once.
    pub tasks: usize,
    /// Thread-after-thread links held at once.
    pub links: usize,
    /// Resource uses (one per task per resource it holds) held at once.
    pub uses: usize,
}

impl Capacity {
    /// The most entries of each table (2^24, 16 Mi): [`super::Planner::new`] refuses a larger
    /// one with [`super::PlanError::TooLarge`] before anything is allocated.
    ///
    /// ```
    /// use tempi::policy::admit::planner::{Capacity, PlanError, Planner, PlannerConfig};
    /// let mut config = PlannerConfig::new(1, 0);
    /// config.capacity = Capacity::for_tasks(Capacity::MAX);
    /// assert_eq!(
    ///     Planner::new(config).err(),
    ///     Some(PlanError::TooLarge { field: "capacity.links", value: 1 << 25, max: Capacity::MAX })
    /// );
    /// ```
    pub const MAX: usize = 1 << 24;

    /// Room for `tasks` tasks, as many threads and groups, two links and four resource uses
    /// per task.
    ///
    /// ```
    /// let c = tempi::policy::admit::planner::Capacity::for_tasks(10);
    /// assert_eq!((c.links, c.uses), (20, 40));
    /// ```
    pub fn for_tasks(tasks: usize) -> Capacity {
        Capacity { groups: tasks, threads: tasks, tasks, links: tasks.saturating_mul(2), uses: tasks.saturating_mul(4) }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct GroupRec {
    pub id: GroupId,
    pub release: u64,
    pub deadline: u64,
    pub importance: u32,
    pub thread_base: usize,
    pub thread_len: usize,
    pub task_base: usize,
    pub task_len: usize,
    pub link_base: usize,
    pub link_len: usize,
    pub use_base: usize,
    pub use_len: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ThreadRec {
    pub locality: Option<Locality>,
    /// Group-relative index of the thread's first task; its tasks follow in order.
    pub first_task: u32,
    pub task_len: u32,
    /// Group-relative index of its first link (a group-relative predecessor thread index).
    pub first_link: u32,
    pub link_len: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct TaskRec {
    /// Group-relative thread index.
    pub thread: u32,
    pub wcet: u64,
    /// The group's deadline minus the longest chain of WCETs that must follow this task.
    pub deadline: u64,
    /// Group-relative index of its first resource use.
    pub first_use: u32,
    pub use_len: u32,
    pub cpu: u16,
    pub start: u64,
    pub finish: u64,
    pub killed: bool,
}

/// One planned task as the plan shows it.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::admit::planner::*;
/// use tempi::Time;
/// let mut p = Planner::new(PlannerConfig::new(1, 0)).unwrap();
/// let g = GroupRequest::new(Time::ZERO, Time::from_secs(1))
///     .thread(ThreadRequest::new().task(TaskRequest::new(Duration::from_millis(3))));
/// p.submit(&g, Time::ZERO, None).unwrap();
/// let t = p.plan().tasks().next().unwrap();
/// assert_eq!((t.cpu, t.finish - t.start), (0, Duration::from_millis(3)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedTask<'a> {
    /// The group it belongs to.
    pub group: GroupId,
    /// Its thread's index in the group's request.
    pub thread: usize,
    /// Its index in the thread.
    pub task: usize,
    /// The CPU it runs on.
    pub cpu: usize,
    /// When its CPU and resources are reserved for it.
    pub start: Time,
    /// When the reservation ends (start + switch + execution time).
    pub finish: Time,
    /// The WCET it was requested with.
    pub wcet: Duration,
    /// The deadline the planner held it to: the group's deadline minus the WCETs of the
    /// longest chain of tasks that must follow it.
    pub deadline: Time,
    /// The resources it holds.
    pub resources: &'a [ResourceUse],
}

/// One group of a plan as [`Plan::groups`] shows it.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::admit::planner::*;
/// use tempi::Time;
/// let mut p = Planner::new(PlannerConfig::new(1, 0)).unwrap();
/// let g = GroupRequest::new(Time::ZERO, Time::from_secs(1)).importance(2)
///     .thread(ThreadRequest::new().task(TaskRequest::new(Duration::from_millis(3))));
/// p.submit(&g, Time::ZERO, None).unwrap();
/// let info = p.plan().groups().next().unwrap();
/// assert_eq!((info.importance, info.deadline, info.tasks), (2, Time::from_secs(1), 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupInfo {
    /// Its id.
    pub id: GroupId,
    /// Its release time.
    pub release: Time,
    /// Its end-to-end deadline.
    pub deadline: Time,
    /// Its importance.
    pub importance: u32,
    /// How many of its tasks are planned and not killed.
    pub tasks: usize,
}

/// Every guaranteed task with its CPU and reserved interval `[start, finish)`, grouped by
/// thread group; see the [planner's documentation](super).
///
/// ```
/// use tempi::policy::admit::planner::{Planner, PlannerConfig};
/// let p = Planner::new(PlannerConfig::new(2, 1)).unwrap();
/// assert_eq!((p.plan().cpus(), p.plan().task_count()), (2, 0));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub(super) cpus: usize,
    pub(super) resources: usize,
    pub(super) capacity: Capacity,
    pub(super) groups: Vec<GroupRec>,
    pub(super) threads: Vec<ThreadRec>,
    pub(super) tasks: Vec<TaskRec>,
    pub(super) links: Vec<u32>,
    pub(super) uses: Vec<ResourceUse>,
    pub(super) next_id: u64,
}

impl Plan {
    pub(super) fn new(cpus: usize, resources: usize, capacity: Capacity) -> Result<Plan, super::PlanError> {
        use super::table;
        Ok(Plan {
            cpus,
            resources,
            capacity,
            groups: table("group", capacity.groups)?,
            threads: table("thread", capacity.threads)?,
            tasks: table("task", capacity.tasks)?,
            links: table("link", capacity.links)?,
            uses: table("use", capacity.uses)?,
            next_id: 1,
        })
    }

    /// How many CPUs the plan spans.
    ///
    /// ```
    /// use tempi::policy::admit::planner::{Planner, PlannerConfig};
    /// assert_eq!(Planner::new(PlannerConfig::new(3, 0)).unwrap().plan().cpus(), 3);
    /// ```
    pub fn cpus(&self) -> usize {
        self.cpus
    }

    /// How many resources the plan reserves.
    ///
    /// ```
    /// use tempi::policy::admit::planner::{Planner, PlannerConfig};
    /// assert_eq!(Planner::new(PlannerConfig::new(1, 4)).unwrap().plan().resources(), 4);
    /// ```
    pub fn resources(&self) -> usize {
        self.resources
    }

    /// How many groups the plan holds (killed and finished ones until they are retired).
    ///
    /// ```
    /// use tempi::policy::admit::planner::{Planner, PlannerConfig};
    /// assert_eq!(Planner::new(PlannerConfig::new(1, 0)).unwrap().plan().group_count(), 0);
    /// ```
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// How many tasks the plan holds, killed ones excluded.
    ///
    /// ```
    /// use tempi::policy::admit::planner::{Planner, PlannerConfig};
    /// assert_eq!(Planner::new(PlannerConfig::new(1, 0)).unwrap().plan().task_count(), 0);
    /// ```
    pub fn task_count(&self) -> usize {
        self.tasks.iter().filter(|t| !t.killed).count()
    }

    /// Whether the plan holds the group `id`.
    ///
    /// ```
    /// use tempi::policy::admit::planner::{GroupId, Planner, PlannerConfig};
    /// assert!(!Planner::new(PlannerConfig::new(1, 0)).unwrap().plan().contains(GroupId(1)));
    /// ```
    pub fn contains(&self, id: GroupId) -> bool {
        self.groups.iter().any(|g| g.id == id)
    }

    /// Every group, in acceptance order.
    ///
    /// ```
    /// use tempi::policy::admit::planner::{Planner, PlannerConfig};
    /// assert_eq!(Planner::new(PlannerConfig::new(1, 0)).unwrap().plan().groups().count(), 0);
    /// ```
    pub fn groups(&self) -> impl Iterator<Item = GroupInfo> + '_ {
        self.groups.iter().map(move |g| GroupInfo {
            id: g.id,
            release: Time::from_nanos(g.release),
            deadline: Time::from_nanos(g.deadline),
            importance: g.importance,
            tasks: self.tasks[g.task_base..g.task_base + g.task_len].iter().filter(|t| !t.killed).count(),
        })
    }

    /// Every planned task that is not killed, group by group in acceptance order, then by
    /// thread and task.
    ///
    /// ```
    /// use tempi::policy::admit::planner::{Planner, PlannerConfig};
    /// assert_eq!(Planner::new(PlannerConfig::new(1, 0)).unwrap().plan().tasks().count(), 0);
    /// ```
    pub fn tasks(&self) -> impl Iterator<Item = PlannedTask<'_>> + '_ {
        self.groups.iter().flat_map(move |g| {
            let tasks = self.tasks[g.task_base..g.task_base + g.task_len].iter().enumerate();
            tasks.filter(|(_, t)| !t.killed).map(move |(i, t)| {
                let th = &self.threads[g.thread_base + t.thread as usize];
                let uses = g.use_base + t.first_use as usize;
                PlannedTask {
                    group: g.id,
                    thread: t.thread as usize,
                    task: i - th.first_task as usize,
                    cpu: usize::from(t.cpu),
                    start: Time::from_nanos(t.start),
                    finish: Time::from_nanos(t.finish),
                    wcet: Duration::from_nanos(t.wcet),
                    deadline: Time::from_nanos(t.deadline),
                    resources: &self.uses[uses..uses + t.use_len as usize],
                }
            })
        })
    }

    /// The reservation on CPU `cpu` that starts first at or after `from` (ties: plan order),
    /// if any: walking a CPU's reservations in time order is calling this with each one's
    /// finish. O(tasks), no allocation.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::*;
    /// use tempi::Time;
    /// let mut p = Planner::new(PlannerConfig::new(1, 0)).unwrap();
    /// let g = GroupRequest::new(Time::ZERO, Time::from_secs(1))
    ///     .thread(ThreadRequest::new().task(TaskRequest::new(Duration::from_millis(3))));
    /// p.submit(&g, Time::ZERO, None).unwrap();
    /// let first = p.plan().next_on_cpu(0, Time::ZERO).unwrap();
    /// assert_eq!(first.start, Time::from_millis(400)); // after the 400 ms budget's cutoff
    /// assert!(p.plan().next_on_cpu(0, first.finish).is_none());
    /// ```
    pub fn next_on_cpu(&self, cpu: usize, from: Time) -> Option<PlannedTask<'_>> {
        self.tasks().filter(|t| t.cpu == cpu && t.start >= from).min_by_key(|t| t.start)
    }

    /// When CPU `cpu` is free of every planned task (zero if it has none, `None` if there is
    /// no such CPU).
    ///
    /// ```
    /// use tempi::policy::admit::planner::{Planner, PlannerConfig};
    /// use tempi::Time;
    /// let p = Planner::new(PlannerConfig::new(1, 0)).unwrap();
    /// assert_eq!(p.plan().cpu_available(0), Some(Time::ZERO));
    /// assert_eq!(p.plan().cpu_available(1), None);
    /// ```
    pub fn cpu_available(&self, cpu: usize) -> Option<Time> {
        (cpu < self.cpus).then(|| {
            Time::from_nanos(
                self.tasks
                    .iter()
                    .filter(|t| !t.killed && usize::from(t.cpu) == cpu)
                    .map(|t| t.finish)
                    .max()
                    .unwrap_or(0),
            )
        })
    }

    /// The earliest times resource `resource` is free for a shared holder and for an
    /// exclusive one (`None` if there is no such resource).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::*;
    /// use tempi::Time;
    /// let mut p = Planner::new(PlannerConfig::new(1, 1)).unwrap();
    /// let g = GroupRequest::new(Time::ZERO, Time::from_secs(1)).thread(
    ///     ThreadRequest::new().task(TaskRequest::new(Duration::from_millis(3)).shared(ResourceId(0))),
    /// );
    /// p.submit(&g, Time::ZERO, None).unwrap();
    /// let (shared, exclusive) = p.plan().resource_available(ResourceId(0)).unwrap();
    /// assert_eq!(shared, Time::ZERO);
    /// assert!(exclusive > shared);
    /// ```
    pub fn resource_available(&self, resource: super::ResourceId) -> Option<(Time, Time)> {
        if resource.index() >= self.resources {
            return None;
        }
        let (mut shared, mut exclusive) = (0, 0);
        for g in &self.groups {
            for t in self.tasks[g.task_base..g.task_base + g.task_len].iter().filter(|t| !t.killed) {
                let base = g.use_base + t.first_use as usize;
                for u in &self.uses[base..base + t.use_len as usize] {
                    if u.resource == resource {
                        exclusive = exclusive.max(t.finish);
                        if u.mode == Mode::Exclusive {
                            shared = shared.max(t.finish);
                        }
                    }
                }
            }
        }
        Some((Time::from_nanos(shared), Time::from_nanos(exclusive)))
    }

    /// Remove the tasks of group `id` that have not started by `now` (planned to start at or
    /// after it), freeing their CPU time and resources; tasks already started stay until they
    /// finish. Returns how many tasks were removed.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::*;
    /// use tempi::Time;
    /// let mut p = Planner::new(PlannerConfig::new(1, 0)).unwrap();
    /// let g = GroupRequest::new(Time::from_secs(1), Time::from_secs(2))
    ///     .thread(ThreadRequest::new().task(TaskRequest::new(Duration::from_millis(3))));
    /// let out = p.submit(&g, Time::ZERO, None).unwrap();
    /// let Decision::Accepted(id) = out.decision else { panic!() };
    /// assert_eq!(p.kill(id, Time::from_millis(1)), Ok(1));
    /// assert_eq!(p.plan().task_count(), 0);
    /// ```
    pub fn kill(&mut self, id: GroupId, now: Time) -> Result<usize, PlanError> {
        let g = self.groups.iter().find(|g| g.id == id).ok_or(PlanError::UnknownGroup(id))?;
        let mut removed = 0;
        for t in &mut self.tasks[g.task_base..g.task_base + g.task_len] {
            if !t.killed && t.start >= now.as_nanos() {
                t.killed = true;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// Remove every group whose remaining tasks have all finished by `now`, and return how
    /// many went. Their table entries become free for new requests.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::*;
    /// use tempi::Time;
    /// let mut p = Planner::new(PlannerConfig::new(1, 0)).unwrap();
    /// let g = GroupRequest::new(Time::ZERO, Time::from_secs(1))
    ///     .thread(ThreadRequest::new().task(TaskRequest::new(Duration::from_millis(3))));
    /// p.submit(&g, Time::ZERO, None).unwrap();
    /// assert_eq!(p.retire(Time::from_millis(1)), 0);
    /// assert_eq!(p.retire(Time::from_secs(1)), 1); // it ran from 400 to 403 ms
    /// assert_eq!(p.plan().group_count(), 0);
    /// ```
    pub fn retire(&mut self, now: Time) -> usize {
        let now = now.as_nanos();
        let mut retired = 0;
        let mut i = 0;
        while i < self.groups.len() {
            let g = &self.groups[i];
            let done = self.tasks[g.task_base..g.task_base + g.task_len].iter().all(|t| t.killed || t.finish <= now);
            if !done {
                i += 1;
                continue;
            }
            let g = self.groups.remove(i);
            self.threads.drain(g.thread_base..g.thread_base + g.thread_len);
            self.tasks.drain(g.task_base..g.task_base + g.task_len);
            self.links.drain(g.link_base..g.link_base + g.link_len);
            self.uses.drain(g.use_base..g.use_base + g.use_len);
            for later in &mut self.groups[i..] {
                later.thread_base -= g.thread_len;
                later.task_base -= g.task_len;
                later.link_base -= g.link_len;
                later.use_base -= g.use_len;
            }
            retired += 1;
        }
        retired
    }

    /// Write an accepted search into the plan: the replanned tasks' new places, then the
    /// request as a new group. Returns the group's id. Nothing allocates: the caller checked
    /// the room with [`check_room`](Plan::check_room).
    pub(super) fn commit(&mut self, search: &Search, request: &GroupRequest) -> GroupId {
        for (item, placed) in search.items[..search.new_items].iter().zip(&search.placed) {
            let t = &mut self.tasks[item.plan_task as usize];
            t.cpu = placed.cpu;
            t.start = placed.start;
            t.finish = placed.finish;
        }
        let id = GroupId(self.next_id);
        self.next_id += 1;
        let (thread_base, task_base, link_base, use_base) =
            (self.threads.len(), self.tasks.len(), self.links.len(), self.uses.len());
        let mut new = search.items[search.new_items..].iter().zip(&search.placed[search.new_items..]);
        for (i, th) in request.threads.iter().enumerate() {
            self.threads.push(ThreadRec {
                locality: th.locality,
                first_task: (self.tasks.len() - task_base) as u32,
                task_len: th.tasks.len() as u32,
                first_link: (self.links.len() - link_base) as u32,
                link_len: th.after.len() as u32,
            });
            self.links.extend(th.after.iter().map(|&p| p as u32));
            for (task, (item, placed)) in th.tasks.iter().zip(new.by_ref()) {
                self.tasks.push(TaskRec {
                    thread: i as u32,
                    wcet: item.wcet,
                    deadline: item.deadline,
                    first_use: (self.uses.len() - use_base) as u32,
                    use_len: task.resources.len() as u32,
                    cpu: placed.cpu,
                    start: placed.start,
                    finish: placed.finish,
                    killed: false,
                });
                self.uses.extend_from_slice(&task.resources);
            }
        }
        self.groups.push(GroupRec {
            id,
            release: request.release.as_nanos(),
            deadline: request.deadline.as_nanos(),
            importance: request.importance,
            thread_base,
            thread_len: self.threads.len() - thread_base,
            task_base,
            task_len: self.tasks.len() - task_base,
            link_base,
            link_len: self.links.len() - link_base,
            use_base,
            use_len: self.uses.len() - use_base,
        });
        id
    }

    /// Become a copy of `other` (same shape), keeping this plan's preallocated room.
    pub(super) fn copy_from(&mut self, other: &Plan) {
        self.groups.clone_from(&other.groups);
        self.threads.clone_from(&other.threads);
        self.tasks.clone_from(&other.tasks);
        self.links.clone_from(&other.links);
        self.uses.clone_from(&other.uses);
        self.next_id = other.next_id;
    }

    /// Whether `extra` more of each table's entries still fit.
    pub(super) fn check_room(&self, extra: Capacity) -> Result<(), PlanError> {
        let c = self.capacity;
        let checks = [
            ("group", self.groups.len() + extra.groups, c.groups),
            ("thread", self.threads.len() + extra.threads, c.threads),
            ("task", self.tasks.len() + extra.tasks, c.tasks),
            ("link", self.links.len() + extra.links, c.links),
            ("resource-use", self.uses.len() + extra.uses, c.uses),
        ];
        for (table, need, capacity) in checks {
            if need > capacity {
                return Err(PlanError::Full { table, capacity });
            }
        }
        Ok(())
    }
}
