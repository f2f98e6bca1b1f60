//! The MSRP terms of a partitioned system (Gai, Lipari and Di Natale 2001): spinning for
//! global resources, the inflated execution times, and the per-CPU analysis that follows.
//!
//! Owns the multiprocessor side of MSRP only: the spin bound and the inflation of a CPU's
//! task set by what the other CPUs do. Must not duplicate a single-CPU test: once inflated, a
//! CPU's task set goes through the ordinary blocking terms (`blocking.rs`, where a global
//! section blocks as a non-preemptive one and combines with SRP's term by the maximum) and
//! response-time analysis (`fixed_priority.rs`) or the EDF tests (`edf.rs`).

use std::time::Duration;

use super::{Protocol, TaskSet, Verdict};

impl TaskSet {
    /// Whether resource `r` is global (protocol [`Protocol::Msrp`]).
    fn is_global(&self, r: usize) -> bool {
        self.resources.get(r).is_some_and(|res| res.protocol == Protocol::Msrp)
    }

    /// The longest spin of one request for global resource `r` by a task of this CPU: the
    /// sum, over the other CPUs' task sets, of the longest critical section on `r` there
    /// (spinners are served in FIFO order and each CPU has at most one request at a time,
    /// held without preemption). The task sets share their resource list (the same indices).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Protocol, Resource, Task, TaskSet};
    /// let ms = Duration::from_millis;
    /// let cpu = |cs: u64| {
    ///     let mut ts = TaskSet::new();
    ///     let g = ts.add_resource(Resource::new("g", Protocol::Msrp));
    ///     ts.add_task(Task::new("t", ms(5), ms(20)).priority(1).section(g, ms(cs)));
    ///     ts
    /// };
    /// let (a, b, c) = (cpu(1), cpu(2), cpu(3));
    /// assert_eq!(a.msrp_spin(0, &[&b, &c]), ms(5));
    /// ```
    pub fn msrp_spin(&self, r: usize, others: &[&TaskSet]) -> Duration {
        others.iter().filter_map(|o| o.tasks.iter().filter_map(|t| t.longest_on(r)).max()).sum()
    }

    /// This CPU's task set with MSRP's inflation applied, given the other CPUs' task sets:
    /// each task's WCET grows by the spin of each of its requests for a global resource
    /// ([`TaskSet::msrp_spin`]), and each global section by its spin, since a lower-priority
    /// task's spin and section together are what is not preemptible. The usual analysis of
    /// the result ([`TaskSet::analyze`], [`TaskSet::edf_tests`]) is then MSRP's: blocking
    /// `B_i = max(B_local, B_global)` with `B_global` the longest global section plus spin of a
    /// lower-priority task of the CPU, and response times with the inflated WCETs.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Protocol, Resource, Task, TaskSet};
    /// let ms = Duration::from_millis;
    /// let mut cpu0 = TaskSet::new();
    /// let g = cpu0.add_resource(Resource::new("g", Protocol::Msrp));
    /// let mut cpu1 = cpu0.clone();
    /// cpu0.add_task(Task::new("hi", ms(1), ms(10)).priority(2));
    /// cpu0.add_task(Task::new("lo", ms(3), ms(20)).priority(1).section(g, ms(1)));
    /// cpu1.add_task(Task::new("other", ms(4), ms(20)).priority(1).section(g, ms(2)));
    /// let inflated = cpu0.msrp_inflated(&[&cpu1]);
    /// assert_eq!(inflated.tasks[1].wcet, ms(5)); // 3 + a spin of 2
    /// let v = inflated.analyze();
    /// assert_eq!(v.tasks[0].blocking, Some(ms(3))); // lo's section, 1, and its spin, 2
    /// assert_eq!(v.tasks[0].response.bounded(), Some(ms(4)));
    /// ```
    pub fn msrp_inflated(&self, others: &[&TaskSet]) -> TaskSet {
        let mut ts = self.clone();
        for t in &mut ts.tasks {
            for s in &mut t.sections {
                if self.resources.get(s.resource).is_some_and(|r| r.protocol == Protocol::Msrp) {
                    let spin = self.msrp_spin(s.resource, others);
                    t.wcet += spin;
                    s.duration += spin;
                }
            }
        }
        ts
    }

    /// Whether any task of the set uses a global (MSRP) resource.
    ///
    /// ```
    /// assert!(!tempi::analysis::TaskSet::new().uses_msrp());
    /// ```
    pub fn uses_msrp(&self) -> bool {
        self.tasks.iter().any(|t| t.sections.iter().any(|s| self.is_global(s.resource)))
    }
}

/// MSRP over a partitioned system: `cpus[k]` is CPU `k`'s task set (all sharing one resource
/// list); each is inflated by the others ([`TaskSet::msrp_inflated`]) and analysed under
/// fixed priority. Returns each CPU's inflated task set and its verdict.
///
/// ```
/// use std::time::Duration;
/// use tempi::analysis::{msrp_analyze, Protocol, Resource, Task, TaskSet};
/// let ms = Duration::from_millis;
/// let mut a = TaskSet::new();
/// let g = a.add_resource(Resource::new("g", Protocol::Msrp));
/// let mut b = a.clone();
/// a.add_task(Task::new("a", ms(2), ms(10)).priority(1).section(g, ms(1)));
/// b.add_task(Task::new("b", ms(3), ms(10)).priority(1).section(g, ms(2)));
/// let per_cpu = msrp_analyze(&[a, b]);
/// assert_eq!(per_cpu[0].1.tasks[0].response.bounded(), Some(ms(4))); // 2 + a spin of 2
/// assert_eq!(per_cpu[1].1.tasks[0].response.bounded(), Some(ms(4))); // 3 + a spin of 1
/// ```
pub fn msrp_analyze(cpus: &[TaskSet]) -> Vec<(TaskSet, Verdict)> {
    (0..cpus.len())
        .map(|k| {
            let others: Vec<&TaskSet> = cpus.iter().enumerate().filter(|&(o, _)| o != k).map(|(_, ts)| ts).collect();
            let inflated = cpus[k].msrp_inflated(&others);
            let verdict = inflated.analyze();
            (inflated, verdict)
        })
        .collect()
}
