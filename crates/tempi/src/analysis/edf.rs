//! EDF tests with critical sections: the kernelized-monitor bound, Baker's SRP test and the
//! test with inheritance-style blocking that also covers bp, bpi and rcs ([`TaskSet::edf_tests`]).
//!
//! Owns the EDF tests and their result types. Must not define blocking terms nor
//! fixed-priority tests.

use std::time::Duration;

use super::arith::secs;
use super::{Protocol, TaskSet};

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
    /// The paper's kernelized-monitor bound `Σ (C_j + CS)/min(D_j, T_j) ≤ 1` (never passed
    /// when a resource in use is under bp, bpi or rcs, see [`TaskSet::edf_tests`]).
    pub km_bound: EdfTest,
    /// Baker's SRP test, when every resource's protocol is covered by it.
    pub baker: Option<EdfTest>,
    /// The test with inheritance-style blocking, for every protocol: several blocking
    /// sections per job (at most one per job with a longer deadline and one per resource),
    /// RCS restarts, and the work an RCS abort makes the victim redo (see
    /// [`TaskSet::edf_tests`]). `None` when a bp resource can prolong a wait without bound.
    pub inheritance: Option<EdfTest>,
}

impl TaskSet {
    /// The EDF tests with critical sections. Each bounds a task's demand by at most
    /// `C_j/min(D_j, T_j)` per unit of time, so they hold for deadlines shorter than, equal to
    /// or longer than the periods.
    ///
    /// - `km_bound` — Tokuda and Nakajima (1993, section 2.3), kernelized monitor under EDF:
    ///   `Σ_j (C_j + CS)/min(D_j, T_j) ≤ 1`, with `CS` the longest critical section of the set
    ///   (the paper's `Σ_j (C_j + CS)/T_j` when every `D ≥ T`). It counts one section of
    ///   blocking per job, so it is not passed when a resource in use is under bp (a holder
    ///   without inheritance can be preempted for as long as more urgent jobs run), bpi (a job
    ///   can wait for several holders) or rcs; its load is still reported.
    /// - `baker` — Baker (1991), SRP under EDF (and any protocol that blocks at most once, by
    ///   one section of a task with a longer relative deadline: km, pcp, srp): with tasks by
    ///   increasing `D`, for every `k`, `Σ_{j≤k} C_j/min(D_j, T_j) + B_k/D_k ≤ 1`, where `B_k`
    ///   is the longest section of a task with a longer deadline on a resource used by a task
    ///   whose deadline is at most `D_k` (km: any section of such a task). `None` when a
    ///   resource in use is under bp, bpi or rcs, which it does not cover.
    /// - `inheritance` — the demand criterion with blocking in the manner of Spuri's EDF with
    ///   priority inheritance, for every protocol. With tasks by increasing `D`, for every `k`:
    ///   `Σ_{j≤k} C_j/T_j + (Σ_{j≤k} C_j·max(0, 1 − D_j/T_j) + V_k + B_k)/D_k ≤ 1`. The first
    ///   two sums bound the work due in a window of length `L ≥ D_k`
    ///   (`(⌊(L − D_j)/T_j⌋ + 1)C_j ≤ L·C_j/T_j + C_j·max(0, 1 − D_j/T_j)`), at most `L·C_j/min(D_j, T_j)`
    ///   summed, so this is never weaker than dividing by `min(D, T)`. `B_k`: only a job
    ///   with a longer relative deadline than `D_k` can delay such a window, and only with a
    ///   section it entered before the window began (afterwards it runs only by inheritance, a
    ///   ceiling or non-preemption, i.e. while it holds that lock), so
    ///   `B_k = min(Σ_j max_r cost_{j,r}, Σ_r max_j cost_{j,r})` over the tasks `j` with
    ///   `D_j > D_k` and the resources `r` that a task with `D ≤ D_k` locks (km, msrp: every
    ///   resource), `cost_{j,r}` being `j`'s longest section on `r`, or under rcs the
    ///   resource's `restart_cost` (the holder is aborted and recovers at the aborter's
    ///   urgency). `V_k` is the rcs victims' work inside the window: each request of a window
    ///   job on rcs resource `r` can abort a job of the window with a longer deadline, which
    ///   then recovers and redoes its section: per request, the largest `z_{v,r} +
    ///   restart_cost(r)` of such a victim `v` (with `D_j < D_v ≤ D_k`), counted with the
    ///   requester's jobs like its `C_j`. Under bp a waiting job is not helped, so the test is
    ///   `None` when a bp resource is locked by tasks of two different deadlines and the set
    ///   has a third task (which may run ahead of the holder); otherwise bp blocks as bpi. The
    ///   rcs terms are for sections entered with [`crate::sync::Mutex::critical`]; a section
    ///   held with a guard ([`crate::analysis::Task::guarded_section`]) is not aborted but
    ///   waited for, so in `B_k` it costs its length, as under bpi, and it is no victim in
    ///   `V_k`.
    ///
    /// All three are sufficient tests. Why `min(D, T)`: in any window of length `t ≥ D_j` task `j`
    /// has at most `(⌊(t − D_j)/T_j⌋ + 1) C_j ≤ t C_j/min(D_j, T_j)` of work due. Baker's
    /// `C_j/D_j` would understate a task with `D > T` (two tasks of 3 ms every 4 ms due in 8
    /// ms would pass at 0.75 while they ask for 150% of the processor).
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
    /// ts.resources[0].protocol = Protocol::Bpi;
    /// let e = ts.edf_tests();
    /// assert!(e.baker.is_none());
    /// // a (D = T): 0.4 + 2/5 = 0.8; b: 0.4 + 0.4 = 0.8: one blocker, one resource, as Baker
    /// assert!((e.inheritance.unwrap().load - 0.8).abs() < 1e-9);
    /// ```
    pub fn edf_tests(&self) -> EdfTests {
        let cs = self.tasks.iter().flat_map(|t| t.sections.iter()).map(|s| s.duration).max().unwrap_or_default();
        let load: f64 = self.tasks.iter().map(|t| (secs(t.wcet) + secs(cs)) / secs(t.deadline.min(t.period))).sum();
        // Both tests count one blocking section per job: every resource in use must be under a
        // protocol that blocks a job at most once.
        let mut used = vec![false; self.resources.len()];
        for s in self.tasks.iter().flat_map(|t| t.sections.iter()) {
            if let Some(u) = used.get_mut(s.resource) {
                *u = true;
            }
        }
        let covered =
            self.resources.iter().zip(&used).all(|(r, &u)| {
                !u || matches!(r.protocol, Protocol::Km | Protocol::Msrp | Protocol::Pcp | Protocol::Srp)
            });
        let km_bound = EdfTest { load, passed: covered && load <= 1.0 + 1e-12 };

        let baker = covered.then(|| {
            let mut order: Vec<usize> = (0..self.tasks.len()).collect();
            order.sort_by_key(|&i| self.tasks[i].deadline);
            let mut sum = 0.0;
            let mut worst: f64 = 0.0;
            for (k, &i) in order.iter().enumerate() {
                let t = &self.tasks[i];
                sum += secs(t.wcet) / secs(t.deadline.min(t.period));
                // Resources used by a task at least as urgent as i (preemption level >= i's).
                let urgent = &order[..=k];
                let used = |r: usize| urgent.iter().any(|&u| self.tasks[u].longest_on(r).is_some());
                let b = self
                    .tasks
                    .iter()
                    .filter(|o| o.deadline > t.deadline)
                    .flat_map(|o| o.sections.iter())
                    .filter(|s| {
                        matches!(self.resources[s.resource].protocol, Protocol::Km | Protocol::Msrp) || used(s.resource)
                    })
                    .map(|s| s.duration)
                    .max()
                    .unwrap_or_default();
                worst = worst.max(sum + secs(b) / secs(t.deadline));
            }
            EdfTest { load: worst, passed: worst <= 1.0 + 1e-12 }
        });
        EdfTests { km_bound, baker, inheritance: self.edf_inheritance() }
    }

    /// The `inheritance` test of [`TaskSet::edf_tests`]. One sweep by increasing deadline:
    /// the resources that can block grow, the tasks that can block shrink, and both sums of
    /// `B_k` are kept up to date as they do, so the cost is `O((n + sections) log n)`, plus,
    /// for each rcs resource, the product of the numbers of tasks that lock it (victims).
    fn edf_inheritance(&self) -> Option<EdfTest> {
        let n = self.tasks.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| self.tasks[i].deadline);
        let protocol = |r: usize| self.resources[r].protocol;
        // Per resource: (position, cost) of each user, by position. The cost of a user is what
        // its holding can cost a window job that wants the resource: its longest section, or
        // under rcs the restart cost of a restartable section (the holder is aborted and
        // recovers at the requester's urgency) or a guarded section (waited for, as bpi).
        let mut users: Vec<Vec<(usize, Duration)>> = vec![Vec::new(); self.resources.len()];
        for (k, &i) in order.iter().enumerate() {
            let t = &self.tasks[i];
            for (x, s) in t.sections.iter().enumerate() {
                let r = s.resource;
                if r < users.len() && !t.sections[..x].iter().any(|o| o.resource == r) {
                    let restart = (protocol(r) == Protocol::Rcs).then_some(self.resources[r].restart_cost);
                    users[r].push((k, t.blocking_cost_on(r, restart).unwrap_or_default()));
                }
            }
        }
        // Without inheritance a third task can run ahead of a preempted holder for as long as
        // its own jobs last (`tests/analysis/edf_crosscheck.rs` shows the miss).
        if n >= 3 {
            for (r, u) in users.iter().enumerate() {
                let deadline = |&(k, _): &(usize, Duration)| self.tasks[order[k]].deadline;
                if protocol(r) == Protocol::Bp && u.iter().map(deadline).min() != u.iter().map(deadline).max() {
                    return None;
                }
            }
        }
        // suffix[r][x]: the largest cost of users[r][x..].
        let suffix: Vec<Vec<Duration>> = users
            .iter()
            .map(|u| {
                let mut v = vec![Duration::ZERO; u.len() + 1];
                for x in (0..u.len()).rev() {
                    v[x] = v[x + 1].max(u[x].1);
                }
                v
            })
            .collect();
        // The largest cost of a user of r at position `from` or later.
        let tail = |r: usize, from: usize| suffix[r][users[r].partition_point(|&(k, _)| k < from)];
        // RCS victims. `requests[r]`: the tasks already in the window (deadline at most D_k) that
        // lock rcs resource r. A victim outside the window (a longer deadline than D_k) costs
        // its recovery only, which `B_k` counts.
        let mut requests: Vec<Vec<Request>> = vec![Vec::new(); self.resources.len()];
        // A task with deadline D and period T has at most (L - D)/T + 1 <= L/T + max(0, 1 - D/T)
        // jobs due in a window of length L >= D: a rate and a constant.
        let jobs = |t: &super::Task| (1.0 / secs(t.period), (1.0 - secs(t.deadline) / secs(t.period)).max(0.0));
        let mut relevant = vec![false; self.resources.len()];
        // Per position: its task's largest cost on a relevant resource.
        let mut task_cost = vec![Duration::ZERO; n];
        // `from`: the first position of a task that can block (a longer deadline than D_k).
        let mut from = 0usize;
        let (mut by_task, mut by_resource) = (Duration::ZERO, Duration::ZERO);
        let make_relevant = |r: usize,
                             from: usize,
                             relevant: &mut Vec<bool>,
                             task_cost: &mut Vec<Duration>,
                             by_task: &mut Duration,
                             by_resource: &mut Duration| {
            if std::mem::replace(&mut relevant[r], true) {
                return;
            }
            *by_resource += tail(r, from);
            for &(k, c) in &users[r] {
                if c > task_cost[k] {
                    if k >= from {
                        *by_task += c - task_cost[k];
                    }
                    task_cost[k] = c;
                }
            }
        };
        for r in 0..self.resources.len() {
            if matches!(protocol(r), Protocol::Km | Protocol::Msrp) {
                make_relevant(r, from, &mut relevant, &mut task_cost, &mut by_task, &mut by_resource);
            }
        }
        // The demand of the window's tasks is at most `rate * L + constant` (in seconds).
        let (mut rate, mut constant, mut worst) = (0.0, 0.0, 0.0_f64);
        for &i in &order {
            let t = &self.tasks[i];
            let (per, fixed) = jobs(t);
            for (x, sec) in t.sections.iter().enumerate() {
                let r = sec.resource;
                if r >= users.len() || protocol(r) != Protocol::Rcs || t.sections[..x].iter().any(|o| o.resource == r) {
                    continue;
                }
                // t may now be aborted by each earlier-deadline request on r in the window (if
                // it has a restartable section there): each such request costs the window the
                // victim's recovery and its redone section.
                if let Some(z) = t.longest_restartable_on(r) {
                    let z = z + self.resources[r].restart_cost;
                    for q in requests[r].iter_mut().filter(|q| q.deadline < t.deadline && z > q.victim) {
                        let extra = secs(z - q.victim) * q.count;
                        rate += extra * q.per;
                        constant += extra * q.fixed;
                        q.victim = z;
                    }
                }
                let count = t.sections.iter().filter(|o| o.resource == r).count() as f64;
                requests[r].push(Request { deadline: t.deadline, count, per, fixed, victim: Duration::ZERO });
            }
            rate += secs(t.wcet) * per;
            constant += secs(t.wcet) * fixed;
            for s in &t.sections {
                if s.resource < users.len() {
                    make_relevant(s.resource, from, &mut relevant, &mut task_cost, &mut by_task, &mut by_resource);
                }
            }
            // Tasks with a deadline of at most D_k no longer block.
            while from < n && self.tasks[order[from]].deadline <= t.deadline {
                by_task -= task_cost[from];
                let leaving = &self.tasks[order[from]];
                from += 1;
                for (x, s) in leaving.sections.iter().enumerate() {
                    let r = s.resource;
                    if r < users.len() && relevant[r] && !leaving.sections[..x].iter().any(|o| o.resource == r) {
                        by_resource -= tail(r, from - 1);
                        by_resource += tail(r, from);
                    }
                }
            }
            let b = by_task.min(by_resource);
            // rate * L + constant + B <= L for every L >= D_k iff it holds at D_k (rate <= 1).
            worst = worst.max(rate + (constant + secs(b)) / secs(t.deadline));
        }
        Some(EdfTest { load: worst, passed: worst <= 1.0 + 1e-12 })
    }
}

/// A task of the window that locks an rcs resource, as the victims of its requests are summed
/// ([`TaskSet::edf_tests`], `V_k`).
#[derive(Clone, Copy)]
struct Request {
    deadline: Duration,
    /// Its sections on the resource (requests per job).
    count: f64,
    /// Its jobs in a window of length `L`: at most `L * per + fixed`.
    per: f64,
    fixed: f64,
    /// The largest `z + restart_cost` of a window task with a longer deadline (and a
    /// restartable section on the resource) so far.
    victim: Duration,
}
