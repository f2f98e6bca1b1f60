//! Fixed-priority tests: Liu and Layland with blocking, exact response-time analysis and
//! the whole-set [`Verdict`] ([`TaskSet::analyze`]).
//!
//! Owns the fixed-priority tests and their result types. Must not define blocking terms (it
//! asks `blocking.rs`) nor EDF tests (`edf.rs`).

use std::time::Duration;

use super::arith::{from_nanos, nanos, secs, utilisation_reaches_one};
use super::index::Index;
use super::{BlockingTable, Protocol, TaskSet};

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
    /// Response bounded and within the deadline. For a soft task ([`super::Task::criticality`])
    /// false is a target missed in the worst case, which leaves [`Verdict::schedulable`] as it is.
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
    /// Every hard task is schedulable by response-time analysis (the exact test); a soft
    /// task's worst case may exceed its deadline (its [`TaskVerdict::schedulable`] is false).
    pub schedulable: bool,
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

impl TaskSet {
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
        // By increasing period: no task may have a higher priority than one of a shorter period.
        let mut order: Vec<usize> = (0..self.tasks.len()).collect();
        order.sort_by_key(|&i| self.tasks[i].period);
        let mut lowest_shorter: Option<i32> = None;
        let mut k = 0;
        while k < order.len() {
            let period = self.tasks[order[k]].period;
            let end = k + order[k..].iter().take_while(|&&i| self.tasks[i].period == period).count();
            let group = order[k..end].iter().map(|&i| self.tasks[i].priority);
            if lowest_shorter.is_some_and(|low| group.clone().any(|p| p > low)) {
                return false;
            }
            lowest_shorter = group.chain(lowest_shorter).min();
            k = end;
        }
        true
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
        self.liu_layland_with(&Index::new(self))
    }

    /// [`TaskSet::liu_layland`] with the index built.
    fn liu_layland_with(&self, index: &Index) -> Option<LiuLayland> {
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
            let (load, passed) = match self.blocking_with(index, i) {
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
    /// fixed point, stopping as soon as it passes the deadline. Under RCS a higher-priority
    /// job's request may also abort a preempted holder of at least `i`'s priority (`i`
    /// itself or another interfering task), which recovers and redoes its section: that
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
        self.response_times_with(&Index::new(self), &mut |_| {})
    }

    /// [`TaskSet::response_times`] with the index built. Tasks are taken by decreasing
    /// priority, and the interference of the tasks above is kept summed per period
    /// (`Σ_j ⌈R/T_j⌉ C_j` is `Σ_T ⌈R/T⌉ Σ_{T_j = T} C_j`), so one step of the recurrence
    /// costs one term per distinct period rather than one per task. A task low enough that an
    /// RCS request of an interfering job may abort it or another interfering job (whose
    /// redone work then depends on the task analysed) takes the per-task path.
    fn response_times_with(&self, index: &Index, progress: &mut dyn FnMut(usize)) -> Vec<Response> {
        let order = self.by_priority();
        let mut out = vec![Response::Unbounded; self.tasks.len()];
        // Period -> summed WCET of the tasks at or above the current priority (nanoseconds).
        // (period, summed WCET) by increasing period; under rate-monotonic priorities each new
        // period comes last, so inserting is a push.
        let mut level: Vec<(u128, u128)> = Vec::new();
        // Below this priority an RCS request of one interfering task may abort another (or
        // the task itself), whose redone work depends on the task analysed.
        let victims = (0..self.resources.len())
            .filter(|&r| self.resources[r].protocol == Protocol::Rcs)
            .filter_map(|r| index.highest_victim(r))
            .max();
        let mut k = 0;
        while k < order.len() {
            let p = self.tasks[order[k]].priority;
            let end = k + order[k..].iter().take_while(|&&i| self.tasks[i].priority == p).count();
            let group = &order[k..end];
            for &i in group {
                let (period, wcet) = (nanos(self.tasks[i].period), nanos(self.tasks[i].wcet));
                match level.binary_search_by_key(&period, |&(q, _)| q) {
                    Ok(at) => level[at].1 += wcet,
                    Err(at) => level.insert(at, (period, wcet)),
                }
            }
            for &i in group {
                let t = &self.tasks[i];
                if victims.is_some_and(|v| t.priority <= v) {
                    out[i] = self.response_time_with(index, i);
                    continue;
                }
                let Some(b) = self.blocking_with(index, i) else {
                    continue;
                };
                // Everyone at or above p but i itself: take its own work out for the while.
                let wcet = nanos(t.wcet);
                let at = level.binary_search_by_key(&nanos(t.period), |&(q, _)| q).expect("i's period is in");
                level[at].1 -= wcet;
                out[i] = self.iterate(i, b, &level);
                level[at].1 += wcet;
            }
            k = end;
            progress(k);
        }
        out
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
        self.response_time_with(&Index::new(self), i)
    }

    /// [`TaskSet::response_time`] with the index built: one term per interfering task.
    fn response_time_with(&self, index: &Index, i: usize) -> Response {
        let Some(b) = self.blocking_with(index, i) else {
            return Response::Unbounded;
        };
        // By increasing priority, so that the victims of each one's requests (the priorities
        // from P_i up to its own) only grow.
        let mut order: Vec<usize> = self.higher(i).collect();
        order.sort_by_key(|&j| self.tasks[j].priority);
        let mut aborts = Aborts::new(self, index, self.tasks[i].priority);
        // Each interfering task as (its period, the work one of its jobs costs task i).
        let hp: Vec<(u128, u128)> = order
            .iter()
            .map(|&j| (nanos(self.tasks[j].period), nanos(self.tasks[j].wcet) + nanos(aborts.penalty(j))))
            .collect();
        self.iterate(i, b, &hp)
    }

    /// The recurrence for task `i` with blocking `b` and the interference `hp`, as (period,
    /// work one job of those periods costs task `i`) in nanoseconds.
    fn iterate(&self, i: usize, b: Duration, hp: &[(u128, u128)]) -> Response {
        let t = &self.tasks[i];
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
                .map(|&(period, cost)| ceil_div(r, period).saturating_mul(cost))
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

    /// Everything for a fixed-priority task set: per-task blocking (and the table per
    /// protocol), Liu and Layland, response times, and the verdict (schedulable iff every
    /// hard task's response time is bounded and within its deadline; see
    /// [`super::Task::criticality`] for soft ones). The EDF tests are in
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
        self.analyze_with_progress(&mut |_| {})
    }

    /// [`TaskSet::analyze`], calling `progress` with the number of tasks whose response time
    /// is known so far as the analysis goes (by decreasing priority, a priority level at a
    /// time), for a caller that reports on long runs.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut ts = tempi::analysis::TaskSet::new();
    /// ts.add_task(tempi::analysis::Task::new("a", Duration::from_millis(1), Duration::from_millis(2)).priority(2));
    /// ts.add_task(tempi::analysis::Task::new("b", Duration::from_millis(1), Duration::from_millis(4)).priority(1));
    /// let mut seen = Vec::new();
    /// assert!(ts.analyze_with_progress(&mut |done| seen.push(done)).schedulable);
    /// assert_eq!(seen, [1, 2]);
    /// ```
    pub fn analyze_with_progress(&self, progress: &mut dyn FnMut(usize)) -> Verdict {
        let index = Index::new(self);
        let responses = self.response_times_with(&index, progress);
        let tasks: Vec<TaskVerdict> = (0..self.tasks.len())
            .map(|i| TaskVerdict {
                task: i,
                blocking: self.blocking_with(&index, i),
                blocking_by_protocol: self.blocking_all_with(&index, i),
                response: responses[i],
                schedulable: matches!(responses[i], Response::Bounded(_)),
            })
            .collect();
        // A soft task's deadline is a target: its miss is reported in its own row, and what it
        // costs the hard ones is already in their response times.
        let schedulable = tasks.iter().all(|t| t.schedulable || self.tasks[t.task].is_soft());
        Verdict { tasks, liu_layland: self.liu_layland_with(&index), schedulable }
    }
}

/// Under RCS, the work that one job of a task `j` of priority at least `P_i` can add to task
/// `i`'s response by aborting sections ([`Aborts::penalty`]), for the interfering tasks of one
/// `i` taken by increasing priority.
///
/// Each request of `j` on an RCS resource `r` can abort a preempted holder less urgent than
/// `j`, whose recovery and redone section (`z_{v,r} + restart_cost(r)`, `v`'s longest
/// restartable section) fall inside `i`'s response when `v` is `i` or another task of
/// priority at least `P_i`. (A holder below `P_i` costs its recovery only, which `B_i`
/// counts.) Within one job of `j` each resource is aborted at most once (after `j` releases
/// it nobody below `j` takes it while `j`'s job is pending) and so is each victim (it would
/// have to run to enter its section again): at most `k` aborts, `k` the smaller of the number
/// of `j`'s RCS resources and the number of possible victims, each on a different resource.
/// The penalty is the sum of the `k` largest, over `j`'s RCS resources, of the costliest
/// victim there.
struct Aborts<'a> {
    ts: &'a TaskSet,
    index: &'a Index,
    /// Per resource: where its restartable users from `P_i` on begin, how far into them the
    /// victims have been read, and the largest `z + restart_cost` among those read.
    read: Vec<(usize, usize, Duration)>,
    /// Where the possible victims (tasks with a restartable rcs section) from `P_i` on begin
    /// in [`Index::victims`], and how far they have been read.
    victims: (usize, usize),
    /// The costliest victim of each of `j`'s resources (reused from one `j` to the next).
    costs: Vec<Duration>,
}

impl<'a> Aborts<'a> {
    fn new(ts: &'a TaskSet, index: &'a Index, p: i32) -> Aborts<'a> {
        let read = (0..ts.resources.len())
            .map(|r| {
                let first = index.restartable(r).partition_point(|&(q, _)| q < p);
                (first, first, Duration::ZERO)
            })
            .collect();
        let first = index.victims().partition_point(|&q| q < p);
        Aborts { ts, index, read, victims: (first, first), costs: Vec::new() }
    }

    /// The penalty of one job of task `j`; the tasks must come by increasing priority.
    fn penalty(&mut self, j: usize) -> Duration {
        let pj = self.ts.tasks[j].priority;
        let all = self.index.victims();
        let (first, at) = &mut self.victims;
        while *at < all.len() && all[*at] < pj {
            *at += 1;
        }
        let victims = *at - *first;
        if victims == 0 {
            return Duration::ZERO;
        }
        self.costs.clear();
        let sections = &self.ts.tasks[j].sections;
        for (x, s) in sections.iter().enumerate() {
            let r = s.resource;
            if self.ts.resources[r].protocol != Protocol::Rcs || sections[..x].iter().any(|o| o.resource == r) {
                continue;
            }
            let users = self.index.restartable(r);
            let restart = self.ts.resources[r].restart_cost;
            let (first, at, max) = &mut self.read[r];
            while *at < users.len() && users[*at].0 < pj {
                *max = (*max).max(users[*at].1 + restart);
                *at += 1;
            }
            if *at > *first {
                self.costs.push(*max);
            }
        }
        if self.costs.len() > victims {
            self.costs.sort_unstable_by(|a, b| b.cmp(a));
        }
        self.costs.iter().take(victims).sum()
    }
}

/// `⌈r/period⌉`, in 64 bits when both fit (the usual case, and several times faster than a
/// 128-bit division).
fn ceil_div(r: u128, period: u128) -> u128 {
    match (u64::try_from(r), u64::try_from(period)) {
        (Ok(r), Ok(period)) => r.div_ceil(period) as u128,
        _ => r.div_ceil(period),
    }
}
