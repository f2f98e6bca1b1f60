//! The blocking terms, the rate-monotonic check, response-time analysis and partitioning as
//! they were written first, one pass over the task set per question (and, for partitioning,
//! every candidate CPU judged by its full test): the reference the indexed versions are
//! compared with (`reference_tests.rs`).

use std::time::Duration;

use super::arith::{from_nanos, nanos, utilisation_reaches_one};
use super::{CpuTest, Fit, Partition, PartitionError, Protocol, Response, SortKey, TaskSet};

pub(super) struct Reference<'a>(pub(super) &'a TaskSet);

impl std::ops::Deref for Reference<'_> {
    type Target = TaskSet;
    fn deref(&self) -> &TaskSet {
        self.0
    }
}

impl Reference<'_> {
    fn lower(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let p = self.tasks[i].priority;
        (0..self.tasks.len()).filter(move |&j| self.tasks[j].priority < p)
    }

    fn can_block(&self, r: usize, p: i32) -> bool {
        self.ceiling(r).is_some_and(|c| c >= p)
    }

    fn blocking_on(&self, i: usize, protocol: Protocol, rs: &[usize]) -> Option<Duration> {
        let p = self.tasks[i].priority;
        let lower: Vec<usize> = self.lower(i).collect();
        // Sections of lower-priority tasks on resources (of `rs`) that can block priority p.
        let blocking_sections = |j: usize| {
            self.tasks[j].sections.iter().filter(|s| rs.contains(&s.resource) && self.can_block(s.resource, p))
        };
        match protocol {
            // MSRP on one CPU: a lower task's global section (its spin included, once the
            // task set is inflated) is not preemptible, whoever it blocks.
            Protocol::Km | Protocol::Msrp => lower
                .iter()
                .flat_map(|&j| self.tasks[j].sections.iter().filter(|s| rs.contains(&s.resource)))
                .map(|s| s.duration)
                .max()
                .or(Some(Duration::ZERO)),
            Protocol::Pcp | Protocol::Srp => {
                lower.iter().flat_map(|&j| blocking_sections(j)).map(|s| s.duration).max().or(Some(Duration::ZERO))
            }
            Protocol::Bpi => Some(self.inheritance_bound(&lower, rs, p, false)),
            Protocol::Bp => {
                // Without inheritance, a lower task j that holds a resource `i` wants can be
                // preempted for as long as tasks strictly between j and i keep running.
                let own: Vec<usize> = self.tasks[i].sections.iter().map(|s| s.resource).collect();
                for &j in &lower {
                    let shares =
                        self.tasks[j].sections.iter().any(|s| rs.contains(&s.resource) && own.contains(&s.resource));
                    let pj = self.tasks[j].priority;
                    let between =
                        self.tasks.iter().enumerate().any(|(k, t)| k != i && t.priority > pj && t.priority < p);
                    if shares && between {
                        return None;
                    }
                }
                // Bounded: only direct blocking, on the resources `i` itself locks.
                let direct: Vec<usize> = rs.iter().copied().filter(|r| own.contains(r)).collect();
                Some(self.inheritance_bound(&lower, &direct, p, false))
            }
            // A lower task holds at most one section when i's busy period begins, and is aborted
            // (its recovery) or waited for (a guarded section) at most once.
            Protocol::Rcs => Some(self.inheritance_bound(&lower, rs, p, true)),
        }
    }

    fn inheritance_bound(&self, lower: &[usize], rs: &[usize], p: i32, rcs: bool) -> Duration {
        let cost = |s: &super::Section| match rcs && !s.guarded {
            true => self.resources[s.resource].restart_cost,
            false => s.duration,
        };
        let by_task: Duration = lower
            .iter()
            .filter_map(|&j| {
                self.tasks[j]
                    .sections
                    .iter()
                    .filter(|s| rs.contains(&s.resource) && self.can_block(s.resource, p))
                    .map(cost)
                    .max()
            })
            .sum();
        let by_resource: Duration = rs
            .iter()
            .filter(|&&r| self.can_block(r, p))
            .filter_map(|&r| {
                lower
                    .iter()
                    .flat_map(|&j| self.tasks[j].sections.iter().filter(move |s| s.resource == r))
                    .map(cost)
                    .max()
            })
            .sum();
        by_task.min(by_resource)
    }

    pub(super) fn blocking(&self, i: usize) -> Option<Duration> {
        let mut total = Duration::ZERO;
        // `None`: no resource under the protocol; `Some(None)`: an unbounded term.
        let of = |protocol: Protocol| -> Option<Option<Duration>> {
            let rs: Vec<usize> =
                (0..self.resources.len()).filter(|&r| self.resources[r].protocol == protocol).collect();
            (!rs.is_empty()).then(|| self.blocking_on(i, protocol, &rs))
        };
        let global = match of(Protocol::Msrp) {
            Some(b) => Some(b?),
            None => None,
        };
        for protocol in Protocol::ALL {
            if protocol == Protocol::Srp && global.is_some() {
                continue;
            }
            if let Some(b) = of(protocol) {
                total += b?;
            }
        }
        if let Some(g) = global {
            let srp = match of(Protocol::Srp) {
                Some(b) => b?,
                None => Duration::ZERO,
            };
            total += g.max(srp);
        }
        Some(total)
    }

    pub(super) fn blocking_under(&self, i: usize, protocol: Protocol) -> Option<Duration> {
        let all: Vec<usize> = (0..self.resources.len()).collect();
        self.blocking_on(i, protocol, &all)
    }

    pub(super) fn is_rate_monotonic(&self) -> bool {
        self.tasks.iter().all(|a| self.tasks.iter().all(|b| !(a.period < b.period && a.priority < b.priority)))
    }

    pub(super) fn response_time(&self, i: usize) -> Response {
        let Some(b) = self.blocking(i) else {
            return Response::Unbounded;
        };
        let t = &self.tasks[i];
        // Each interfering task as (its period, the work one of its jobs costs task i).
        let hp: Vec<(u128, u128)> = self
            .higher(i)
            .map(|j| (nanos(self.tasks[j].period), nanos(self.tasks[j].wcet) + nanos(self.restart_penalty(i, j))))
            .collect();
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
        for _ in 0..TaskSet::MAX_RTA_ITERATIONS {
            let next = hp
                .iter()
                .map(|&(period, cost)| r.div_ceil(period).saturating_mul(cost))
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

    fn restart_penalty(&self, i: usize, j: usize) -> Duration {
        let (p, pj) = (self.tasks[i].priority, self.tasks[j].priority);
        let rcs = |r: usize| self.resources[r].protocol == Protocol::Rcs;
        // Possible victims: the tasks from P_i up to but not including P_j with a restartable
        // section on an rcs resource.
        let in_range = |v: usize| self.tasks[v].priority >= p && self.tasks[v].priority < pj;
        let victims = (0..self.tasks.len())
            .filter(|&v| in_range(v) && self.tasks[v].sections.iter().any(|s| !s.guarded && rcs(s.resource)))
            .count();
        let mut resources: Vec<usize> = self.tasks[j].sections.iter().map(|s| s.resource).filter(|&r| rcs(r)).collect();
        resources.sort_unstable();
        resources.dedup();
        // Per resource of j, its costliest victim.
        let mut costs: Vec<Duration> = resources
            .iter()
            .filter_map(|&r| {
                (0..self.tasks.len())
                    .filter(|&v| in_range(v))
                    .flat_map(|v| self.tasks[v].sections.iter().filter(|s| s.resource == r && !s.guarded))
                    .map(|s| s.duration + self.resources[r].restart_cost)
                    .max()
            })
            .collect();
        costs.sort_unstable_by(|a, b| b.cmp(a));
        costs.iter().take(victims).sum()
    }
}

impl Reference<'_> {
    /// [`TaskSet::partition`] as first written: each candidate CPU's subset gathered from the
    /// whole task set and judged by the full test.
    pub(super) fn partition(
        &self,
        cpus: usize,
        fit: Fit,
        key: SortKey,
        test: CpuTest,
    ) -> Result<Partition, PartitionError> {
        if cpus == 0 {
            return Err(PartitionError::NoCpus);
        }
        self.0.validate()?;
        let mut order: Vec<usize> = (0..self.0.tasks.len()).collect();
        // Stable: equal keys keep task order.
        order.sort_by(|&a, &b| key.of(&self.0.tasks[b]).total_cmp(&key.of(&self.0.tasks[a])));
        let mut cpu_of: Vec<Option<usize>> = vec![None; self.0.tasks.len()];
        let mut resource_cpu: Vec<Option<usize>> = vec![None; self.0.resources.len()];
        let mut load = vec![0.0_f64; cpus];
        // The candidate subset of one CPU, reused: every resource, the CPU's tasks, the new one.
        let mut trial = TaskSet { tasks: Vec::new(), resources: self.0.resources.clone() };
        for &i in &order {
            let task = &self.0.tasks[i];
            let mut bound_to: Option<usize> = None;
            for s in &task.sections {
                if let Some(c) = resource_cpu[s.resource] {
                    match bound_to {
                        Some(b) if b != c => {
                            return Err(PartitionError::SplitResources {
                                task: task.name.clone(),
                                cpus: (b.min(c), b.max(c)),
                            })
                        }
                        _ => bound_to = Some(c),
                    }
                }
            }
            let mut candidates: Vec<usize> = match bound_to {
                Some(c) => vec![c],
                None => (0..cpus).collect(),
            };
            if fit == Fit::Worst {
                // Stable: equal loads keep CPU order.
                candidates.sort_by(|&a, &b| load[a].total_cmp(&load[b]));
            }
            let fits = |cpu: usize, trial: &mut TaskSet| {
                trial.tasks.clear();
                trial.tasks.extend(
                    (0..self.0.tasks.len()).filter(|&j| cpu_of[j] == Some(cpu)).map(|j| self.0.tasks[j].clone()),
                );
                trial.tasks.push(task.clone());
                test.passes(trial)
            };
            let Some(cpu) = candidates.into_iter().find(|&c| fits(c, &mut trial)) else {
                return Err(PartitionError::DoesNotFit { task: task.name.clone(), bound_to });
            };
            cpu_of[i] = Some(cpu);
            load[cpu] += key.of(task);
            for s in &task.sections {
                resource_cpu[s.resource] = Some(cpu);
            }
        }
        Ok(Partition { cpu_of: cpu_of.into_iter().map(|c| c.expect("every task placed")).collect(), cpus })
    }
}
