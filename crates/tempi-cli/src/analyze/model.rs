//! The task model of `tempi analyze`: a scenario's threads as one [`TaskSet`] per CPU, with
//! what the model leaves out ([`Notes`]), and MSRP's inflation of those sets by the other
//! CPUs' global sections.
//!
//! Owns how a thread becomes a task (its `C`, `T`, `D`, priority and critical sections) and
//! how a resource becomes an analysis resource. Must not run a test nor write the report
//! (the parent module does).

use std::time::Duration;

use serde_json::{json, Value};
use tempi::analysis::{Protocol, Resource, Task, TaskSet};
use tempi::Timing;

use tempi_cli::scenario::{Scenario, Step, ThreadDef};

use super::text::dur;

/// One CPU's task set, with the scenario's thread index of each task and remarks.
pub(super) struct CpuModel {
    pub(super) cpu: usize,
    pub(super) tasks: TaskSet,
    pub(super) threads: Vec<usize>,
    /// Per task, the sleep its `C` includes (see `analysed_wcet`): time, not CPU demand.
    pub(super) sleeps: Vec<Duration>,
}

impl CpuModel {
    /// The tasks with the CPU time they ask for only, which the necessary conditions judge: a
    /// sleep counted in `C` bounds a response, but does not load the CPU.
    pub(super) fn demand(&self) -> TaskSet {
        let mut ts = self.tasks.clone();
        for (t, s) in ts.tasks.iter_mut().zip(&self.sleeps) {
            t.wcet = t.wcet.saturating_sub(*s);
        }
        ts
    }
}

/// What the model leaves out or cannot vouch for.
#[derive(Default)]
pub(super) struct Notes {
    /// Remarks printed as `note:` lines.
    pub(super) lines: Vec<String>,
    /// Figures of the scenario the analysis does not take as written, printed as `warning:`.
    pub(super) warnings: Vec<String>,
    /// The threads left out of the model, as (CPU, name): a verdict over their CPU (or, under
    /// a global policy, over all CPUs) cannot be "schedulable".
    pub(super) unanalysed: Vec<(usize, String)>,
}

/// Build the per-CPU task sets.
pub(super) fn model(sc: &Scenario, notes: &mut Notes) -> Vec<CpuModel> {
    let specs = sc.specs();
    // Every CPU's task set starts with all the resources, their ceilings computed once.
    let resources = resources(sc);
    let mut cpus: Vec<CpuModel> = Vec::new();
    for (i, def) in sc.threads.iter().enumerate() {
        let period = match def.timing {
            Timing::Periodic { period, .. } => period,
            Timing::Sporadic { min_interarrival } if !min_interarrival.is_zero() => min_interarrival,
            Timing::Sporadic { .. } => {
                notes.lines.push(format!("thread \"{}\": sporadic without min_interarrival: not analysed", def.name));
                notes.unanalysed.push((def.cpu, def.name.clone()));
                continue;
            }
            Timing::OneShot => {
                notes.lines.push(format!("thread \"{}\": one-shot: not analysed", def.name));
                notes.unanalysed.push((def.cpu, def.name.clone()));
                continue;
            }
        };
        if def.forever {
            notes.lines.push(format!("thread \"{}\": `forever` never completes a job: its C is unbounded", def.name));
        }
        let deadline = def.deadline.unwrap_or(period);
        let (wcet, sleeps) = analysed_wcet(def, notes);
        let mut task = Task::new(def.name.clone(), wcet, period)
            .deadline(deadline)
            .priority(specs[i].priority_value())
            .criticality(def.criticality);
        // Walk the steps: each open lock accumulates the work done while it is held.
        let mut open: Vec<(usize, Duration)> = Vec::new();
        let mut sections: Vec<(usize, Duration)> = Vec::new();
        let mut nested = false;
        let mut suspends = false;
        for s in &def.steps {
            match *s {
                Step::Work(d) | Step::WorkBetween(_, d) => open.iter_mut().for_each(|(_, acc)| *acc += d),
                // Counted as work of the section, as it is of C (see `analysed_wcet`): the lock
                // stays held through the sleep.
                Step::Sleep(d) if !open.is_empty() => {
                    suspends = true;
                    open.iter_mut().for_each(|(_, acc)| *acc += d);
                }
                Step::Lock(r) => {
                    nested |= !open.is_empty();
                    open.push((r, Duration::ZERO));
                }
                Step::Unlock(_) => sections.extend(open.pop()),
                _ => {}
            }
        }
        while let Some(s) = open.pop() {
            sections.push(s);
        }
        if nested {
            notes.lines.push(format!(
                "thread \"{}\": nested critical sections are analysed as separate sections; the bpi bound ignores \
                 the chains nesting can add",
                def.name
            ));
        }
        if suspends {
            notes.lines.push(format!(
                "thread \"{}\": sleeps while holding a lock: the sleep counts in the section's length, as in C",
                def.name
            ));
        }
        // A `lock` step holds a guard: under rcs such a section is waited for, not aborted.
        for (r, d) in sections {
            task = task.guarded_section(r, d);
        }
        let at = match cpus.iter().position(|c| c.cpu == def.cpu) {
            Some(at) => at,
            None => {
                cpus.push(CpuModel { cpu: def.cpu, tasks: resources.clone(), threads: Vec::new(), sleeps: Vec::new() });
                cpus.len() - 1
            }
        };
        cpus[at].tasks.add_task(task);
        cpus[at].threads.push(i);
        cpus[at].sleeps.push(sleeps);
    }
    cpus.sort_by_key(|c| c.cpu);
    cpus
}

/// The `C` of a thread: its declared `wcet`, unless its steps can ask for more, plus the time it
/// sleeps within a job. The kernel does not hold a job to its `wcet`, so a job whose steps are
/// longer runs them all, and an analysis on the declared figure would vouch for less work than
/// the job does. A job that sleeps is a self-suspending task, which none of the tests model:
/// counting the sleep as if the job ran then (suspension-oblivious) bounds both its own
/// response and what it can cost the others.
/// Returns `C` and the sleep it includes.
fn analysed_wcet(def: &ThreadDef, notes: &mut Notes) -> (Duration, Duration) {
    if def.forever {
        return (def.wcet, Duration::ZERO);
    }
    let (mut longest, mut sleeps) = (Duration::ZERO, Duration::ZERO);
    for s in &def.steps {
        match *s {
            Step::Work(d) | Step::WorkBetween(_, d) => longest += d,
            Step::Sleep(d) => sleeps += d,
            _ => {}
        }
    }
    if longest > def.wcet {
        notes.warnings.push(format!(
            "thread \"{}\": its steps can take {} of work per job, more than its wcet of {}: analysed with C = {}",
            def.name,
            dur(longest),
            dur(def.wcet),
            dur(longest + sleeps)
        ));
    }
    let work = longest.max(def.wcet);
    if !sleeps.is_zero() {
        notes.lines.push(format!(
            "thread \"{}\": sleeps {} within a job, analysed as if it ran then: C = {} + {}",
            def.name,
            dur(sleeps),
            dur(work),
            dur(sleeps)
        ));
    }
    (work + sleeps, sleeps)
}

/// The scenario's resources as analysis resources (all of them, so indices match), each with
/// the ceiling the run gives its lock ([`Scenario::lock_ceilings`]): computed from all its
/// users, the threads the model leaves out included. A global (msrp) resource keeps the
/// analysis's own rule instead, a ceiling per CPU from that CPU's tasks (MSRP's local
/// ceiling), unless one is declared.
fn resources(sc: &Scenario) -> TaskSet {
    let mut ts = TaskSet::new();
    for (r, ceiling) in sc.resources.iter().zip(sc.lock_ceilings()) {
        // A protocol the analysis cannot take is analysed as bpi, with a note saying why.
        let protocol = Protocol::from_name(&r.protocol).unwrap_or(Protocol::Bpi);
        let mut res = Resource::new(r.name.clone(), protocol);
        let ceiling = if protocol == Protocol::Msrp { r.ceiling } else { ceiling.map(|c| c.priority()) };
        if let Some(c) = ceiling {
            res = res.ceiling(c);
        }
        ts.add_resource(res);
    }
    ts
}

/// MSRP: when a resource is global (protocol `msrp`) and used, each CPU's task set is
/// inflated by what the other CPUs do ([`TaskSet::msrp_inflated`]): every request for a
/// global resource spins at most the sum over the other CPUs of their longest section on it,
/// which is added to the requester's `C` and to its section (a lower task's section and spin
/// are not preemptible). Returns the lines stating each spin bound, and their JSON.
pub(super) fn msrp(cpus: &mut [CpuModel], notes: &mut Notes) -> (String, Vec<Value>) {
    let (mut text, mut json) = (String::new(), Vec::new());
    if !cpus.iter().any(|c| c.tasks.uses_msrp()) {
        return (text, json);
    }
    let originals: Vec<TaskSet> = cpus.iter().map(|c| c.tasks.clone()).collect();
    for (k, c) in cpus.iter_mut().enumerate() {
        let others: Vec<&TaskSet> = originals.iter().enumerate().filter(|&(o, _)| o != k).map(|(_, t)| t).collect();
        let own = &originals[k];
        for (r, res) in own.resources.iter().enumerate() {
            let used = own.tasks.iter().any(|t| t.sections.iter().any(|s| s.resource == r));
            if res.protocol != Protocol::Msrp || !used {
                continue;
            }
            let spin = own.msrp_spin(r, &others);
            text.push_str(&format!(
                "MSRP: a request for \"{}\" on CPU {} spins at most {}\n",
                res.name,
                c.cpu,
                dur(spin)
            ));
            json.push(json!({ "cpu": c.cpu, "resource": res.name, "spin_ns": spin.as_nanos() as u64 }));
        }
        c.tasks = own.msrp_inflated(&others);
    }
    notes.lines.push(
        "global resources (msrp): each C includes the spin of its requests, and B the longest global section plus \
         spin of a lower-priority thread of the CPU (or the local srp term, whichever is larger)"
            .to_string(),
    );
    (text, json)
}
