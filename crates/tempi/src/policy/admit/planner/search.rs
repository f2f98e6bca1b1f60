//! The heuristic search: builds a schedule one task at a time from the tasks of a request and
//! the guaranteed tasks after the cutoff line, with bounded backtracking.
//!
//! Owns the search's scratch tables (preallocated once, cleared per request) and the search
//! itself. It reads the plan and the request and writes only its own tables; the plan is
//! changed only by [`Plan::commit`](super::plan::Plan) after an accepted search.
//!
//! State of a partial schedule (all instants in nanoseconds): each CPU's earliest-available
//! time and the process of its last task; each resource's earliest-available times for a
//! shared and an exclusive holder; each thread's CPU once placed; each planned task's
//! interval; and per task, how many of its predecessors are still unplanned. A step only ever
//! raises these times, so a planned task is never overlapped by a later one, and a step is
//! undone by restoring the few values it changed (kept in a [`Level`]).

use super::heuristic::Candidate;
use super::model::{GroupRequest, Locality, Mode, ResourceUse};
use super::plan::Plan;
use super::PlannerConfig;

/// A thread in the search: one of a replanned group's threads, or one of the request's.
#[derive(Clone, Copy, Debug, Default)]
struct WorkThread {
    locality: Option<Locality>,
    /// Fixed by a task that starts before the cutoff, or chosen when its first item is planned.
    cpu: Option<u16>,
    /// Whether some of its tasks start before the cutoff (they stay; `fixed_finish` is the
    /// last one's end).
    has_fixed: bool,
    fixed_finish: u64,
    first_item: u32,
    item_len: u32,
    first_link: u32,
    link_len: u32,
    first_succ: u32,
    succ_len: u32,
    /// For the request's threads while loading: the longest WCET chain after its last task.
    tail: u64,
}

/// A task to plan.
#[derive(Clone, Copy, Debug)]
pub(super) struct Item {
    /// Index in the plan's task table, or (for the request's tasks) `u32::MAX`.
    pub plan_task: u32,
    thread: u32,
    pub wcet: u64,
    pub deadline: u64,
    release: u64,
    first_use: u32,
    use_len: u32,
}

/// Where a planned item went.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Placed {
    pub cpu: u16,
    pub start: u64,
    pub finish: u64,
}

/// One step of the partial schedule, with what it changed.
#[derive(Clone, Copy, Debug)]
struct Level {
    item: u32,
    /// Which candidate (0 = best) this step took; a backtrack retries with the next.
    rank: u32,
    cpu: u16,
    old_cpu_avail: u64,
    old_cpu_last: Option<u32>,
    old_thread_cpu: Option<u16>,
    first_undo: u32,
}

#[derive(Clone, Copy, Debug)]
struct Cand {
    /// (not staying within the process, H, deadline, item): smaller is better.
    key: (bool, i128, u64, u32),
    cpu: u16,
    est: u64,
    duration: u64,
}

/// How a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ending {
    Feasible,
    Infeasible,
    BudgetExhausted,
}

enum Step {
    Placed,
    /// The partial schedule is not strongly feasible, or no candidate of that rank is left.
    DeadEnd,
    BudgetExhausted,
}

/// The search's preallocated scratch; see the [module documentation](self).
#[derive(Debug)]
pub(super) struct Search {
    threads: Vec<WorkThread>,
    links: Vec<u32>,
    succs: Vec<u32>,
    pub items: Vec<Item>,
    uses: Vec<ResourceUse>,
    /// Item indices by (deadline, index).
    order: Vec<u32>,
    scheduled: Vec<bool>,
    pending: Vec<u32>,
    pub placed: Vec<Placed>,
    cpu_avail: Vec<u64>,
    cpu_last: Vec<Option<u32>>,
    /// The end of the latest task before the cutoff on each CPU, to know its last process.
    cpu_last_end: Vec<u64>,
    eat_shared: Vec<u64>,
    eat_exclusive: Vec<u64>,
    levels: Vec<Level>,
    undo: Vec<(u16, u64, u64)>,
    cands: Vec<Cand>,
    /// Index of the request's first item.
    pub new_items: usize,
    pub evaluations: u64,
    pub backtracks: u32,
}

/// What a search run is allowed to do.
pub(super) struct Limits {
    /// Candidates per step; `usize::MAX` or anything ≥ the task count means all.
    pub k: usize,
    pub max_evaluations: u64,
    /// A wall-clock instant the search must not run past (real time): checked at every
    /// evaluation, in place of the modelled cost.
    pub wall_deadline: Option<std::time::Instant>,
}

impl Search {
    pub(super) fn new(config: &PlannerConfig) -> Result<Search, super::PlanError> {
        use super::table;
        let c = config.capacity;
        Ok(Search {
            threads: table("search threads", c.threads)?,
            links: table("search links", c.links)?,
            succs: table("search succs", c.links)?,
            items: table("search items", c.tasks)?,
            uses: table("search uses", c.uses)?,
            order: table("search order", c.tasks)?,
            scheduled: table("search scheduled", c.tasks)?,
            pending: table("search pending", c.tasks)?,
            placed: table("search placed", c.tasks)?,
            cpu_avail: table("search cpu_avail", config.cpus)?,
            cpu_last: table("search cpu_last", config.cpus)?,
            cpu_last_end: table("search cpu_last_end", config.cpus)?,
            eat_shared: table("search eat_shared", config.resources)?,
            eat_exclusive: table("search eat_exclusive", config.resources)?,
            levels: table("search levels", c.tasks)?,
            undo: table("search undo", c.uses)?,
            cands: table("search cands", c.tasks)?,
            new_items: 0,
            evaluations: 0,
            backtracks: 0,
        })
    }

    /// Fill the tables from the plan (tasks starting before `cutoff` stay and only shape the
    /// availability times) and the request. The caller has checked that the plan has room for
    /// the request, which bounds every table here.
    pub(super) fn load(&mut self, plan: &Plan, request: &GroupRequest, cutoff: u64, config: &PlannerConfig) {
        self.clear(config, cutoff);
        for g in &plan.groups {
            let tasks = &plan.tasks[g.task_base..g.task_base + g.task_len];
            let replanned = tasks.iter().any(|t| !t.killed && t.start >= cutoff);
            let thread_base = self.threads.len() as u32;
            for th in &plan.threads[g.thread_base..g.thread_base + g.thread_len] {
                let mut w =
                    WorkThread { locality: th.locality, first_item: self.items.len() as u32, ..Default::default() };
                for (i, t) in tasks[th.first_task as usize..(th.first_task + th.task_len) as usize].iter().enumerate() {
                    if t.killed {
                        continue;
                    }
                    if t.start < cutoff {
                        self.reserve_fixed(t.cpu, t.finish, th.locality);
                        let uses = g.use_base + t.first_use as usize;
                        self.reserve_fixed_uses(&plan.uses[uses..uses + t.use_len as usize], t.finish);
                        w.cpu = Some(t.cpu);
                        w.has_fixed = true;
                        w.fixed_finish = t.finish;
                    } else if replanned {
                        // A replanned thread keeps its CPU (threads never migrate: the
                        // executing thread already lives there) and a replanned task is
                        // never moved earlier (its thread may be waiting for its start).
                        w.cpu = Some(t.cpu);
                        let uses = g.use_base + t.first_use as usize;
                        let first_use = self.uses.len() as u32;
                        self.uses.extend_from_slice(&plan.uses[uses..uses + t.use_len as usize]);
                        self.items.push(Item {
                            plan_task: (g.task_base + th.first_task as usize + i) as u32,
                            thread: self.threads.len() as u32,
                            wcet: t.wcet,
                            deadline: t.deadline,
                            release: g.release.max(cutoff).max(t.start),
                            first_use,
                            use_len: t.use_len,
                        });
                        w.item_len += 1;
                    }
                }
                if replanned {
                    w.first_link = self.links.len() as u32;
                    w.link_len = th.link_len;
                    let links = g.link_base + th.first_link as usize;
                    for &p in &plan.links[links..links + th.link_len as usize] {
                        self.links.push(thread_base + p);
                    }
                    self.threads.push(w);
                }
            }
        }
        self.load_request(request, cutoff);
        self.link_successors();
        let n = self.items.len();
        self.scheduled.resize(n, false);
        self.placed.resize(n, Placed::default());
        for x in 0..n {
            let it = self.items[x];
            let th = self.threads[it.thread as usize];
            let pending = if x as u32 != th.first_item {
                1
            } else if th.has_fixed {
                0
            } else {
                self.preds(it.thread).iter().filter(|&&p| self.threads[p as usize].item_len > 0).count() as u32
            };
            self.pending.push(pending);
            self.order.push(x as u32);
        }
        let items = &self.items;
        self.order.sort_unstable_by_key(|&x| (items[x as usize].deadline, x));
    }

    fn clear(&mut self, config: &PlannerConfig, cutoff: u64) {
        self.threads.clear();
        self.links.clear();
        self.succs.clear();
        self.items.clear();
        self.uses.clear();
        self.order.clear();
        self.scheduled.clear();
        self.pending.clear();
        self.placed.clear();
        self.levels.clear();
        self.undo.clear();
        self.cands.clear();
        self.cpu_avail.clear();
        self.cpu_avail.resize(config.cpus, cutoff);
        self.cpu_last.clear();
        self.cpu_last.resize(config.cpus, None);
        self.cpu_last_end.clear();
        self.cpu_last_end.resize(config.cpus, 0);
        self.eat_shared.clear();
        self.eat_shared.resize(config.resources, 0);
        self.eat_exclusive.clear();
        self.eat_exclusive.resize(config.resources, 0);
        self.evaluations = 0;
        self.backtracks = 0;
    }

    fn reserve_fixed(&mut self, cpu: u16, finish: u64, locality: Option<Locality>) {
        let c = usize::from(cpu);
        self.cpu_avail[c] = self.cpu_avail[c].max(finish);
        if finish >= self.cpu_last_end[c] {
            self.cpu_last_end[c] = finish;
            self.cpu_last[c] = locality.map(|l| l.process);
        }
    }

    fn reserve_fixed_uses(&mut self, uses: &[ResourceUse], finish: u64) {
        for u in uses {
            let r = u.resource.index();
            self.eat_exclusive[r] = self.eat_exclusive[r].max(finish);
            if u.mode == Mode::Exclusive {
                self.eat_shared[r] = self.eat_shared[r].max(finish);
            }
        }
    }

    /// Append the request's threads and tasks, each task held to the group's deadline minus
    /// the longest WCET chain that must follow it.
    fn load_request(&mut self, request: &GroupRequest, cutoff: u64) {
        self.new_items = self.items.len();
        let base = self.threads.len();
        for th in &request.threads {
            let first_link = self.links.len() as u32;
            for &p in &th.after {
                self.links.push((base + p) as u32);
            }
            self.threads.push(WorkThread {
                locality: th.locality,
                first_link,
                link_len: th.after.len() as u32,
                ..Default::default()
            });
        }
        // Threads come after their predecessors, so walking backwards sees every successor
        // of a thread before the thread itself.
        for (i, th) in request.threads.iter().enumerate().rev() {
            let own: u64 = th.tasks.iter().map(|t| nanos(t.wcet)).fold(0, u64::saturating_add);
            let chain = own.saturating_add(self.threads[base + i].tail);
            for &p in &th.after {
                let tail = &mut self.threads[base + p].tail;
                *tail = (*tail).max(chain);
            }
        }
        let deadline = request.deadline.as_nanos();
        let release = request.release.as_nanos().max(cutoff);
        for (i, th) in request.threads.iter().enumerate() {
            let w = base + i;
            self.threads[w].first_item = self.items.len() as u32;
            self.threads[w].item_len = th.tasks.len() as u32;
            let mut after = self.threads[w].tail;
            let first = self.items.len();
            for task in th.tasks.iter().rev() {
                let wcet = nanos(task.wcet);
                self.items.push(Item {
                    plan_task: u32::MAX,
                    thread: w as u32,
                    wcet,
                    deadline: deadline.saturating_sub(after),
                    release,
                    first_use: 0,
                    use_len: task.resources.len() as u32,
                });
                after = after.saturating_add(wcet);
            }
            self.items[first..].reverse();
            for (j, task) in th.tasks.iter().enumerate() {
                self.items[first + j].first_use = self.uses.len() as u32;
                self.uses.extend_from_slice(&task.resources);
            }
        }
    }

    /// Build each thread's successor list from the predecessor lists.
    fn link_successors(&mut self) {
        for t in 0..self.threads.len() {
            let (first, len) = (self.threads[t].first_link as usize, self.threads[t].link_len as usize);
            for l in first..first + len {
                self.threads[self.links[l] as usize].succ_len += 1;
            }
        }
        let mut at = 0;
        for t in &mut self.threads {
            t.first_succ = at;
            at += t.succ_len;
            t.succ_len = 0;
        }
        self.succs.resize(at as usize, 0);
        for t in 0..self.threads.len() {
            let (first, len) = (self.threads[t].first_link as usize, self.threads[t].link_len as usize);
            for l in first..first + len {
                let p = &mut self.threads[self.links[l] as usize];
                self.succs[(p.first_succ + p.succ_len) as usize] = t as u32;
                p.succ_len += 1;
            }
        }
    }

    fn preds(&self, thread: u32) -> &[u32] {
        let t = &self.threads[thread as usize];
        &self.links[t.first_link as usize..(t.first_link + t.link_len) as usize]
    }

    fn item_uses(&self, x: usize) -> &[ResourceUse] {
        let it = &self.items[x];
        &self.uses[it.first_use as usize..(it.first_use + it.use_len) as usize]
    }

    /// When a thread's work is all done, if it is planned (or has no work left to plan).
    fn thread_finish(&self, thread: u32) -> Option<u64> {
        let t = &self.threads[thread as usize];
        if t.item_len == 0 {
            return Some(t.fixed_finish);
        }
        let last = (t.first_item + t.item_len - 1) as usize;
        self.scheduled[last].then(|| self.placed[last].finish)
    }

    /// The earliest start of `x` ignoring the CPU: release (never before the cutoff), planned
    /// predecessors' ends and its resources' availability. Unplanned predecessors are skipped,
    /// which makes this a lower bound for a task that is not yet eligible.
    fn ready_time(&self, x: usize) -> u64 {
        let it = &self.items[x];
        let th = &self.threads[it.thread as usize];
        let mut t = it.release;
        if x as u32 != th.first_item {
            if self.scheduled[x - 1] {
                t = t.max(self.placed[x - 1].finish);
            }
        } else if th.has_fixed {
            t = t.max(th.fixed_finish);
        } else {
            for &p in self.preds(it.thread) {
                t = t.max(self.thread_finish(p).unwrap_or(0));
            }
        }
        for u in self.item_uses(x) {
            let r = u.resource.index();
            t = t.max(match u.mode {
                Mode::Shared => self.eat_shared[r],
                Mode::Exclusive => self.eat_exclusive[r],
            });
        }
        t
    }

    fn home(&self, x: usize) -> Option<usize> {
        self.threads[self.items[x].thread as usize].locality.map(|l| usize::from(l.home_cpu))
    }

    /// How long `x` occupies `cpu`: the switch into it, then its execution (shortened on its
    /// process's home CPU).
    fn duration(&self, x: usize, cpu: usize, config: &PlannerConfig) -> u64 {
        let it = &self.items[x];
        let process = self.threads[it.thread as usize].locality.map(|l| l.process);
        let switch = if self.cpu_last[cpu] == process { config.fast_switch } else { config.slow_switch };
        let exec = if self.home(x) == Some(cpu) { local_exec(it.wcet, config.local_percent) } else { it.wcet };
        nanos(switch).saturating_add(exec)
    }

    /// Where and when an eligible `x` would go now.
    fn place(&self, x: usize, config: &PlannerConfig) -> (usize, u64, u64) {
        let ready = self.ready_time(x);
        let cpu = match self.threads[self.items[x].thread as usize].cpu {
            Some(c) => usize::from(c),
            None => config.placement.choose(config.cpus, self.home(x), |c| ready.max(self.cpu_avail[c])),
        };
        (cpu, ready.max(self.cpu_avail[cpu]), self.duration(x, cpu, config))
    }

    /// A lower bound of the end of a not-yet-eligible `x`.
    fn finish_lower_bound(&self, x: usize, config: &PlannerConfig) -> u64 {
        let ready = self.ready_time(x);
        let wcet = self.items[x].wcet;
        let switch = nanos(config.fast_switch.min(config.slow_switch));
        let (start, exec) = match self.threads[self.items[x].thread as usize].cpu {
            Some(c) => {
                let c = usize::from(c);
                let exec = if self.home(x) == Some(c) { local_exec(wcet, config.local_percent) } else { wcet };
                (ready.max(self.cpu_avail[c]), exec)
            }
            None => {
                let exec = if self.home(x).is_some() { local_exec(wcet, config.local_percent).min(wcet) } else { wcet };
                (ready.max(self.cpu_avail.iter().copied().min().unwrap_or(0)), exec)
            }
        };
        start.saturating_add(switch).saturating_add(exec)
    }

    /// Run the search; on [`Ending::Feasible`], `placed` holds every item's place.
    pub(super) fn run(&mut self, config: &PlannerConfig, limits: &Limits) -> Ending {
        let mut rank = 0;
        loop {
            if self.levels.len() == self.items.len() {
                return Ending::Feasible;
            }
            match self.step(rank, config, limits) {
                Step::Placed => rank = 0,
                Step::BudgetExhausted => return Ending::BudgetExhausted,
                Step::DeadEnd => {
                    if self.backtracks >= config.max_backtracks {
                        return Ending::Infeasible;
                    }
                    let Some(level) = self.levels.pop() else { return Ending::Infeasible };
                    self.undo(level);
                    self.backtracks += 1;
                    rank = level.rank + 1;
                }
            }
        }
    }

    /// Charge one evaluation, if the budget allows it.
    fn charge(&mut self, limits: &Limits) -> bool {
        if self.evaluations >= limits.max_evaluations {
            return false;
        }
        if limits.wall_deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            return false;
        }
        self.evaluations += 1;
        true
    }

    /// Check strong feasibility over the window, rank the eligible candidates in it, and plan
    /// the one of rank `rank`.
    fn step(&mut self, rank: u32, config: &PlannerConfig, limits: &Limits) -> Step {
        let remaining = self.items.len() - self.levels.len();
        let all = limits.k >= remaining;
        self.cands.clear();
        for i in 0..self.order.len() {
            let x = self.order[i] as usize;
            if self.scheduled[x] {
                continue;
            }
            if !all && self.cands.len() == limits.k {
                break;
            }
            if self.pending[x] > 0 {
                // Only a window that covers every remaining task checks the not-yet-eligible
                // ones (by a lower bound of their end).
                if all {
                    if !self.charge(limits) {
                        return Step::BudgetExhausted;
                    }
                    if self.finish_lower_bound(x, config) > self.items[x].deadline {
                        return Step::DeadEnd;
                    }
                }
                continue;
            }
            if !self.charge(limits) {
                return Step::BudgetExhausted;
            }
            let (cpu, est, duration) = self.place(x, config);
            let deadline = self.items[x].deadline;
            if est.saturating_add(duration) > deadline {
                return Step::DeadEnd;
            }
            let h = config.heuristic.score(Candidate { deadline, est, duration });
            let process = self.threads[self.items[x].thread as usize].locality.map(|l| l.process);
            let leaves = config.stay_within_process && !(process.is_some() && self.cpu_last[cpu] == process);
            self.cands.push(Cand { key: (leaves, h, deadline, x as u32), cpu: cpu as u16, est, duration });
        }
        self.cands.sort_unstable_by_key(|c| c.key);
        let Some(&c) = self.cands.get(rank as usize) else { return Step::DeadEnd };
        self.apply(c, rank);
        Step::Placed
    }

    fn apply(&mut self, c: Cand, rank: u32) {
        let x = c.key.3 as usize;
        let cpu = usize::from(c.cpu);
        let thread = self.items[x].thread as usize;
        let finish = c.est.saturating_add(c.duration);
        self.levels.push(Level {
            item: x as u32,
            rank,
            cpu: c.cpu,
            old_cpu_avail: self.cpu_avail[cpu],
            old_cpu_last: self.cpu_last[cpu],
            old_thread_cpu: self.threads[thread].cpu,
            first_undo: self.undo.len() as u32,
        });
        self.cpu_avail[cpu] = finish;
        self.cpu_last[cpu] = self.threads[thread].locality.map(|l| l.process);
        self.threads[thread].cpu = Some(c.cpu);
        let it = self.items[x];
        for u in &self.uses[it.first_use as usize..(it.first_use + it.use_len) as usize] {
            let r = u.resource.index();
            self.undo.push((u.resource.0, self.eat_shared[r], self.eat_exclusive[r]));
            self.eat_exclusive[r] = self.eat_exclusive[r].max(finish);
            if u.mode == Mode::Exclusive {
                self.eat_shared[r] = self.eat_shared[r].max(finish);
            }
        }
        self.scheduled[x] = true;
        self.placed[x] = Placed { cpu: c.cpu, start: c.est, finish };
        self.for_each_successor(x, |pending| *pending -= 1);
    }

    fn undo(&mut self, level: Level) {
        let x = level.item as usize;
        let cpu = usize::from(level.cpu);
        self.cpu_avail[cpu] = level.old_cpu_avail;
        self.cpu_last[cpu] = level.old_cpu_last;
        self.threads[self.items[x].thread as usize].cpu = level.old_thread_cpu;
        while self.undo.len() > level.first_undo as usize {
            let (r, shared, exclusive) = self.undo.pop().unwrap_or_default();
            self.eat_shared[usize::from(r)] = shared;
            self.eat_exclusive[usize::from(r)] = exclusive;
        }
        self.scheduled[x] = false;
        self.for_each_successor(x, |pending| *pending += 1);
    }

    /// Apply `f` to the pending-predecessor count of each item that directly follows `x`.
    fn for_each_successor(&mut self, x: usize, mut f: impl FnMut(&mut u32)) {
        let t = self.threads[self.items[x].thread as usize];
        if (x as u32) + 1 < t.first_item + t.item_len {
            f(&mut self.pending[x + 1]);
            return;
        }
        for s in t.first_succ..t.first_succ + t.succ_len {
            let succ = self.threads[self.succs[s as usize] as usize];
            if succ.item_len > 0 {
                f(&mut self.pending[succ.first_item as usize]);
            }
        }
    }
}

/// Execution time on the process's home CPU: `percent` of the WCET, rounded up.
fn local_exec(wcet: u64, percent: u32) -> u64 {
    let scaled = (u128::from(wcet) * u128::from(percent)).div_ceil(100);
    u64::try_from(scaled).unwrap_or(u64::MAX)
}

fn nanos(d: std::time::Duration) -> u64 {
    crate::time::nanos(d)
}
