//! Property tests of global scheduling in virtual time (every global policy of the registry,
//! `common::registered`, judged by the order its class says: global EDF or global fixed
//! priority; 1 to 4 CPUs, random periodic sets): replayed from the trace, at every instant the running
//! threads are the most urgent ready ones and no CPU idles while a thread is ready; CPU time
//! and migration counts agree with the trace's segments.

use crate::common;

use common::global::{run_global_under, Plan, UNIT};
use common::registered;

use std::collections::{BTreeMap, BTreeSet};

use std::time::Duration;

use proptest::prelude::*;
use tempi::policy::sched::{PolicyClass, Scheduler};
use tempi::trace::TraceKind;
use tempi::{RunOutcome, ThreadId, Time};

fn plan() -> impl Strategy<Value = Plan> {
    (10u64..=60)
        .prop_flat_map(|t| (Just(t), 1..=t, 0..t, 0..=4i32))
        .prop_flat_map(|(t, c, phase, p)| (Just(t), Just(c), c..=t, Just(phase), Just(p)))
}

fn run(cpus: usize, plans: &[Plan], policy: &str) -> RunOutcome {
    run_global_under(cpus, plans, registered::scheduler(policy, Duration::from_millis(1)), Time::from_millis(40))
}

/// The global policies of the registry, each with whether it is EDF (else fixed priority):
/// the order `check` holds its run to.
fn global_policies() -> Vec<(String, bool)> {
    let global =
        |s: &dyn Scheduler| matches!(PolicyClass::of(s), PolicyClass::GlobalEdf | PolicyClass::GlobalFixedPriority);
    registered::schedulers(Duration::from_millis(1), global)
        .into_iter()
        .map(|name| {
            let edf =
                PolicyClass::of(&*registered::scheduler(&name, Duration::from_millis(1))()) == PolicyClass::GlobalEdf;
            (name, edf)
        })
        .collect()
}

/// Replay the trace; at the end of every instant check the global invariant. Returns the
/// per-thread CPU time and migrations seen in the trace.
fn check(out: &RunOutcome, plans: &[Plan], edf: bool) -> Result<BTreeMap<ThreadId, (u64, u64)>, TestCaseError> {
    let index: BTreeMap<ThreadId, usize> = out.threads.iter().enumerate().map(|(i, t)| (t.id, i)).collect();
    // Per thread: deadlines of its released, unfinished jobs (by job number).
    let mut jobs: BTreeMap<ThreadId, BTreeMap<u32, u64>> = BTreeMap::new();
    let mut running: Vec<Option<(ThreadId, u64)>> = vec![None; out.cpus];
    let mut last_cpu: BTreeMap<ThreadId, u16> = BTreeMap::new();
    let mut seen: BTreeMap<ThreadId, (u64, u64)> = BTreeMap::new();
    let urgency = |jobs: &BTreeMap<ThreadId, BTreeMap<u32, u64>>, id: ThreadId| -> i64 {
        if edf {
            -(*jobs[&id].values().next().expect("an unfinished job") as i64)
        } else {
            plans[index[&id]].4 as i64
        }
    };
    let records = &out.trace;
    let mut k = 0;
    while k < records.len() {
        let now = records[k].time;
        while k < records.len() && records[k].time == now {
            let r = &records[k];
            let d = plans.get(index.get(&r.thread).copied().unwrap_or(usize::MAX)).map(|p| p.2 * UNIT);
            match r.kind {
                TraceKind::Release => {
                    jobs.entry(r.thread).or_default().insert(r.job, r.time.as_nanos() + d.unwrap());
                }
                TraceKind::JobComplete => {
                    jobs.get_mut(&r.thread).map(|j| j.remove(&r.job));
                }
                TraceKind::Run => {
                    let c = r.cpu as usize;
                    prop_assert!(running[c].is_none(), "CPU {} runs two threads at {:?}", c, now);
                    prop_assert!(running.iter().flatten().all(|&(t, _)| t != r.thread), "one thread on two CPUs");
                    running[c] = Some((r.thread, r.time.as_nanos()));
                    let entry = seen.entry(r.thread).or_default();
                    if last_cpu.insert(r.thread, r.cpu).is_some_and(|before| before != r.cpu) {
                        entry.1 += 1;
                    }
                }
                TraceKind::Stop => {
                    let c = r.cpu as usize;
                    let (t, since) = running[c].take().expect("a stop after a run");
                    prop_assert_eq!(t, r.thread);
                    seen.entry(t).or_default().0 += r.time.as_nanos() - since;
                }
                _ => {}
            }
            k += 1;
        }
        if now >= out.end {
            break;
        }
        // The end of the instant: the running threads are the most urgent ready ones.
        let on_cpu: BTreeSet<ThreadId> = running.iter().flatten().map(|&(t, _)| t).collect();
        let ready: Vec<ThreadId> =
            jobs.iter().filter(|(t, j)| !j.is_empty() && !on_cpu.contains(t)).map(|(&t, _)| t).collect();
        if let Some(&q) = ready.iter().max_by_key(|&&q| urgency(&jobs, q)) {
            prop_assert!(on_cpu.len() == out.cpus, "a CPU idles at {:?} while {:?} is ready", now, q);
            let least = on_cpu.iter().map(|&r| urgency(&jobs, r)).min().unwrap();
            prop_assert!(urgency(&jobs, q) <= least, "at {:?} ready {:?} is more urgent than a running thread", now, q);
        }
        for &r in &on_cpu {
            prop_assert!(jobs.get(&r).is_some_and(|j| !j.is_empty()), "{:?} runs without a job at {:?}", r, now);
        }
    }
    for (c, open) in running.iter().enumerate() {
        if let Some((t, since)) = open {
            let _ = c;
            seen.entry(*t).or_default().0 += out.end.as_nanos() - since;
        }
    }
    Ok(seen)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn global_runs_the_most_urgent_ready_threads(
        cpus in 1usize..=4,
        plans in prop::collection::vec(plan(), 1..=8),
        (policy, edf) in prop::sample::select(global_policies()),
    ) {
        let out = run(cpus, &plans, &policy);
        prop_assert_eq!(out.trace_dropped, 0);
        let seen = check(&out, &plans, edf)?;
        for t in &out.threads {
            let (cpu, moved) = seen.get(&t.id).copied().unwrap_or_default();
            prop_assert_eq!(t.stats.cpu_time.as_nanos() as u64, cpu, "CPU time of {}", t.name);
            prop_assert_eq!(t.stats.migrations, moved, "migrations of {}", t.name);
        }
        if cpus == 1 {
            prop_assert_eq!(out.migrations(), 0);
        }
        // The same run again gives the same trace: ties are broken the same way.
        let again = run(cpus, &plans, &policy);
        let key = |o: &RunOutcome| -> Vec<(u64, u16, usize, u32, u64)> {
            o.trace.iter().map(|r| (r.time.as_nanos(), r.cpu, r.thread.index(), r.job, r.arg)).collect()
        };
        prop_assert!(key(&again) == key(&out), "the same run gave another trace");
    }
}
