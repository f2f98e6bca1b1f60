//! The analysis as first written, kept as the reference the production code is compared with
//! (`reference_tests.rs`): the blocking terms, the rate-monotonic check, response-time
//! analysis and partitioning (every candidate CPU judged by its full test).
//!
//! Owns these reference computations only; nothing outside the tests calls them.
//!
//! The blocking terms are derived here from the protocols' definitions, not from the
//! production formulas (`blocking.rs`, which reads the sorted index of `index.rs`). Every
//! critical section of a lower-priority task that could delay task `i` under a resource's
//! protocol is listed as a blocker with what it costs `i`; a protocol's rule is which
//! blockers can delay one job of `i` together, and its term is the worst total over every
//! admissible choice of blockers, found by enumeration:
//!
//! - km, pcp, srp, msrp: at most one blocker (the term is the longest);
//! - bpi, rcs, bounded bp: the smaller of Sha, Rajkumar and Lehoczky's two bounds, each the
//!   worst choice of blockers from pairwise different tasks, or on pairwise different
//!   resources (not a sum of per-task or per-resource maxima: the enumeration reaches the
//!   same number by another road).
//!
//! The protocols then combine by class rather than by a special case: the resources of one
//! class form one set of blockers with one rule, and the classes' terms add (the documented
//! conservative combination). SRP's local resources and MSRP's global ones are one class with
//! the at-most-one rule, since both kinds of blocking happen once at most, before the job
//! starts (Gai, Lipari and Di Natale); that gives the documented
//! `max(B_local, B_global)`. Because neither the list of blockers, nor the enumeration, nor the
//! combination shares code or shape with the production terms, an error in any of them there
//! (a bound summed where it should be the maximum, a term counted twice or dropped when
//! protocols mix) makes the two disagree.

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

/// One critical section of a lower-priority task that could delay the task analysed, and for
/// how long if it does.
#[derive(Clone, Copy, Debug)]
struct Blocker {
    task: usize,
    resource: usize,
    cost: Duration,
}

/// The resources whose blockers share one rule. MSRP's global sections join SRP's class: a job
/// meets at most one section of either kind, before it starts.
fn class(protocol: Protocol) -> Protocol {
    match protocol {
        Protocol::Msrp => Protocol::Srp,
        p => p,
    }
}

/// The worst total cost of a choice of `blockers` that are pairwise `compatible`, over every
/// such choice (the empty one included). Compatibility is pairwise, so a blocker that clashes
/// with one already chosen can be skipped without losing an admissible choice.
fn worst(blockers: &[Blocker], compatible: &impl Fn(&Blocker, &Blocker) -> bool) -> Duration {
    fn go(rest: &[Blocker], chosen: &mut Vec<Blocker>, compatible: &impl Fn(&Blocker, &Blocker) -> bool) -> Duration {
        let Some((next, rest)) = rest.split_first() else {
            return chosen.iter().map(|b| b.cost).sum();
        };
        let without = go(rest, chosen, compatible);
        if !chosen.iter().all(|c| compatible(c, next)) {
            return without;
        }
        chosen.push(*next);
        let with = go(rest, chosen, compatible);
        chosen.pop();
        without.max(with)
    }
    go(blockers, &mut Vec::new(), compatible)
}

impl Reference<'_> {
    /// The blockers of task `i` under `protocol` among the resources of `class_resources`, or
    /// `None` if basic priority leaves the inversion unbounded.
    fn blockers(&self, i: usize, protocol: Protocol, class_resources: &[usize]) -> Option<Vec<Blocker>> {
        let me = &self.tasks[i];
        let locks = |t: usize, r: usize| self.tasks[t].sections.iter().any(|s| s.resource == r);
        let ceiling_reaches_me = |r: usize| self.ceiling(r).is_some_and(|c| c >= me.priority);
        if protocol == Protocol::Bp {
            // No inheritance: a lower holder of a resource `i` wants can be preempted by any
            // task of intermediate priority for as long as that task runs.
            for j in (0..self.tasks.len()).filter(|&j| self.tasks[j].priority < me.priority) {
                let shared = class_resources.iter().any(|&r| locks(i, r) && locks(j, r));
                let pj = self.tasks[j].priority;
                let intermediate = self.tasks.iter().any(|k| pj < k.priority && k.priority < me.priority);
                if shared && intermediate {
                    return None;
                }
            }
        }
        let mut out = Vec::new();
        for (j, t) in self.tasks.iter().enumerate() {
            if t.priority >= me.priority {
                continue;
            }
            for s in t.sections.iter().filter(|s| class_resources.contains(&s.resource)) {
                let r = s.resource;
                let delays = match protocol {
                    // A non-preemptible section delays every more urgent task, whether or not
                    // it ever locks.
                    Protocol::Km | Protocol::Msrp => true,
                    Protocol::Bpi | Protocol::Pcp | Protocol::Srp | Protocol::Rcs => ceiling_reaches_me(r),
                    // Without inheritance nothing is pushed through: only direct blocking.
                    Protocol::Bp => ceiling_reaches_me(r) && locks(i, r),
                };
                if !delays {
                    continue;
                }
                // Under RCS a restartable holder is aborted: `i` waits for its recovery only.
                let cost = match protocol {
                    Protocol::Rcs if !s.guarded => self.resources[r].restart_cost,
                    _ => s.duration,
                };
                out.push(Blocker { task: j, resource: r, cost });
            }
        }
        Some(out)
    }

    /// The term of one class of resources (all under protocols of `protocol`'s class, each
    /// resource's own protocol given by `protocol_of`).
    fn class_term(&self, i: usize, protocol: Protocol, protocol_of: &impl Fn(usize) -> Protocol) -> Option<Duration> {
        let mut blockers = Vec::new();
        for p in every_protocol().into_iter().filter(|&p| class(p) == protocol) {
            let rs: Vec<usize> = (0..self.resources.len()).filter(|&r| protocol_of(r) == p).collect();
            blockers.extend(self.blockers(i, p, &rs)?);
        }
        let at_most_one = |_: &Blocker, _: &Blocker| false;
        let other_tasks = |a: &Blocker, b: &Blocker| a.task != b.task;
        let other_resources = |a: &Blocker, b: &Blocker| a.resource != b.resource;
        Some(match protocol {
            Protocol::Km | Protocol::Pcp | Protocol::Srp | Protocol::Msrp => worst(&blockers, &at_most_one),
            Protocol::Bp | Protocol::Bpi | Protocol::Rcs => {
                worst(&blockers, &other_tasks).min(worst(&blockers, &other_resources))
            }
        })
    }

    fn blocking_with(&self, i: usize, protocol_of: impl Fn(usize) -> Protocol) -> Option<Duration> {
        every_protocol().into_iter().filter(|&p| class(p) == p).map(|c| self.class_term(i, c, &protocol_of)).sum()
    }

    /// `B_i` with each resource under its own protocol.
    pub(super) fn blocking(&self, i: usize) -> Option<Duration> {
        self.blocking_with(i, |r| self.resources[r].protocol)
    }

    /// `B_i` with every resource under `protocol`.
    pub(super) fn blocking_under(&self, i: usize, protocol: Protocol) -> Option<Duration> {
        self.blocking_with(i, |_| protocol)
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

/// Every protocol, each once. The match fails to compile when a protocol is added, until it
/// is placed in the chain, so the reference and the tests that iterate over this list cannot
/// silently leave a new protocol out.
pub(super) fn every_protocol() -> Vec<Protocol> {
    let after = |p: Protocol| match p {
        Protocol::Km => Some(Protocol::Bp),
        Protocol::Bp => Some(Protocol::Bpi),
        Protocol::Bpi => Some(Protocol::Pcp),
        Protocol::Pcp => Some(Protocol::Srp),
        Protocol::Srp => Some(Protocol::Rcs),
        Protocol::Rcs => Some(Protocol::Msrp),
        Protocol::Msrp => None,
    };
    std::iter::successors(Some(Protocol::Km), |&p| after(p)).collect()
}
