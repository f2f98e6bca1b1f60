//! EDF tests with critical sections: the kernelized-monitor bound and Baker's SRP test
//! ([`TaskSet::edf_tests`]).
//!
//! Owns the EDF tests and their result types. Must not define blocking terms nor
//! fixed-priority tests.

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
}

impl TaskSet {
    /// The EDF tests with critical sections. Both divide each task's demand by `min(D_j, T_j)`,
    /// so they hold for deadlines shorter than, equal to or longer than the periods.
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
    ///
    /// Both are sufficient tests. Why `min(D, T)`: in any window of length `t ≥ D_j` task `j`
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
        EdfTests { km_bound, baker }
    }
}
