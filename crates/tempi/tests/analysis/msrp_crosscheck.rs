//! Property test: the MSRP analysis against the simulator. Two CPUs, fixed priority (rate
//! monotonic on each CPU), one global resource under `msrp` and one local resource per CPU
//! under `srp`.
//!
//! Random small partitioned sets (1-3 tasks per CPU, whole milliseconds, random phases) whose
//! jobs do `work before; lock; work inside; unlock; work after`, simulated in virtual time
//! for two hyperperiods past the last phase. Whenever the analysis says every CPU is
//! schedulable, the simulation must miss no deadline and no job may take longer than its
//! analysed response time.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use tempi::analysis::{msrp_analyze, Protocol, Resource, Response, Task, TaskSet};
use tempi::sync::LockSpec;
use tempi::{Config, Runtime, ThreadSpec, Time};

use common::{lcm, ms};

/// Periods (ms) whose LCM is at most 120 ms.
const PERIODS: [u64; 8] = [5, 6, 8, 10, 12, 15, 20, 30];
/// Resource 0 is global; resource `1 + k` is CPU `k`'s local one.
const GLOBAL: usize = 0;

/// One generated task: CPU, period index, phase, work before, resource use (none, the
/// global one, the CPU's local one), inside, after (ms).
#[derive(Clone, Copy, Debug)]
struct Gen {
    cpu: usize,
    period: usize,
    phase: u64,
    before: u64,
    uses: u8,
    inside: u64,
    after: u64,
}

impl Gen {
    fn resource(&self) -> Option<usize> {
        match self.uses {
            0 => None,
            1 => Some(GLOBAL),
            _ => Some(1 + self.cpu),
        }
    }
    fn wcet(&self) -> u64 {
        self.before + self.after + if self.uses > 0 { self.inside } else { 0 }
    }
}

fn gen_task(cpu: usize) -> impl Strategy<Value = Gen> {
    (
        0..PERIODS.len(),
        0u64..=3,
        0u64..=1,
        prop_oneof![1 => Just(0u8), 3 => Just(1u8), 1 => Just(2u8)],
        1u64..=2,
        0u64..=1,
    )
        .prop_map(move |(period, phase, before, uses, inside, after)| {
            let before = if uses == 0 && before + after == 0 { 1 } else { before };
            // A job ends with work: its unlock is a preemption point (see docs/ANALYSIS.md).
            let after = if uses > 0 { after.max(1) } else { after };
            Gen { cpu, period, phase, before, uses, inside, after }
        })
}

fn case() -> impl Strategy<Value = Vec<Gen>> {
    (proptest::collection::vec(gen_task(0), 1..=3), proptest::collection::vec(gen_task(1), 1..=3))
        .prop_map(|(a, b)| a.into_iter().chain(b).collect())
}

/// Rate-monotonic priorities per CPU, distinct: ties by index.
fn priorities(gens: &[Gen]) -> Vec<i32> {
    let mut prio = vec![0; gens.len()];
    for cpu in 0..2 {
        let mut order: Vec<usize> = (0..gens.len()).filter(|&i| gens[i].cpu == cpu).collect();
        order.sort_by_key(|&i| (PERIODS[gens[i].period], i));
        let n = order.len();
        for (rank, &i) in order.iter().enumerate() {
            prio[i] = (n - rank) as i32;
        }
    }
    prio
}

/// One task set per CPU, sharing the resource list.
fn model(gens: &[Gen], prio: &[i32]) -> Vec<TaskSet> {
    (0..2)
        .map(|cpu| {
            let mut ts = TaskSet::new();
            ts.add_resource(Resource::new("G", Protocol::Msrp));
            ts.add_resource(Resource::new("L0", Protocol::Srp));
            ts.add_resource(Resource::new("L1", Protocol::Srp));
            for (i, g) in gens.iter().enumerate().filter(|(_, g)| g.cpu == cpu) {
                let mut t = Task::new(format!("t{i}"), ms(g.wcet()), ms(PERIODS[g.period])).priority(prio[i]);
                if let Some(r) = g.resource() {
                    t = t.section(r, ms(g.inside));
                }
                ts.add_task(t);
            }
            ts
        })
        .collect()
}

/// Simulate; per task, in `gens` order: (misses, longest response).
fn simulate(cpus: &[TaskSet], gens: &[Gen], prio: &[i32]) -> Vec<(u64, Duration)> {
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(Config::new(2).trace_capacity(0)).unwrap();
    let global = Arc::new(rt.create_mutex((), LockSpec::new("G").protocol("msrp")).unwrap());
    let locals: Vec<Arc<tempi::sync::Mutex<()>>> = (0..2)
        .map(|k| {
            let ceiling = cpus[k].ceiling(1 + k).unwrap_or(0);
            let spec = LockSpec::new(format!("L{k}")).protocol("srp").ceiling(ceiling).cpu(k);
            Arc::new(rt.create_mutex((), spec).unwrap())
        })
        .collect();
    for (i, g) in gens.iter().enumerate() {
        let g = *g;
        let lock = match g.uses {
            0 => None,
            1 => Some(global.clone()),
            _ => Some(locals[g.cpu].clone()),
        };
        let spec = ThreadSpec::new(format!("t{i}"))
            .cpu(g.cpu)
            .periodic(ms(PERIODS[g.period]))
            .phase(ms(g.phase))
            .wcet(ms(g.wcet()))
            .priority(prio[i]);
        rt.spawn(spec, move |cx| {
            if g.before > 0 {
                cx.work(ms(g.before));
            }
            if let Some(l) = &lock {
                let _guard = l.lock(cx).unwrap();
                cx.work(ms(g.inside));
            }
            if g.after > 0 {
                cx.work(ms(g.after));
            }
        })
        .unwrap();
    }
    let hyper = gens.iter().map(|g| PERIODS[g.period]).fold(1, lcm);
    let out = rt.run_until(Time::from_millis(3 + 2 * hyper) + Duration::from_nanos(1)).unwrap();
    common::misses_and_worst_responses(&out, (0..gens.len()).map(|i| format!("t{i}")))
}

/// The analysed response of task `i` (in `gens` order), if every CPU is schedulable.
fn bounds(gens: &[Gen], cpus: &[TaskSet]) -> Option<Vec<Duration>> {
    let verdicts = msrp_analyze(cpus);
    if !verdicts.iter().all(|(_, v)| v.schedulable) {
        return None;
    }
    let mut seen = [0usize; 2];
    Some(
        gens.iter()
            .map(|g| {
                let k = seen[g.cpu];
                seen[g.cpu] += 1;
                match verdicts[g.cpu].1.tasks[k].response {
                    Response::Bounded(r) => r,
                    other => panic!("schedulable, yet {other:?}"),
                }
            })
            .collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn msrp_analysis_bounds_the_simulation(gens in case()) {
        let prio = priorities(&gens);
        let cpus = model(&gens, &prio);
        for ts in &cpus {
            prop_assert!(ts.validate().is_ok());
        }
        if let Some(bounds) = bounds(&gens, &cpus) {
            let sim = simulate(&cpus, &gens, &prio);
            for (i, (misses, worst)) in sim.iter().enumerate() {
                prop_assert_eq!(*misses, 0, "task {} missed; analysis said R = {:?}", i, bounds[i]);
                prop_assert!(*worst <= bounds[i], "task {}: simulated {:?} > analysed {:?} ({:?})", i, worst, bounds[i], gens);
            }
        }
    }
}

/// By hand: a low task of CPU 0 spinning and then holding the global resource blocks the
/// high task of CPU 0 for its spin and its section, within the analysed bound.
#[test]
fn msrp_blocking_includes_the_spin_of_a_lower_task() {
    let gens = [
        // CPU 0: high (5 ms period) released at 1; low (30 ms) works 1 ms, then asks for the
        // global resource at 1 and holds it for 1 ms.
        Gen { cpu: 0, period: 0, phase: 1, before: 1, uses: 0, inside: 1, after: 0 },
        Gen { cpu: 0, period: 7, phase: 0, before: 1, uses: 1, inside: 1, after: 1 },
        // CPU 1: holds the global resource from 0 to 2.
        Gen { cpu: 1, period: 7, phase: 0, before: 0, uses: 1, inside: 2, after: 1 },
    ];
    let prio = priorities(&gens);
    let cpus = model(&gens, &prio);
    let b = bounds(&gens, &cpus).expect("schedulable");
    // high: C 1 + B (low's section 1 + its spin 2) = 4.
    assert_eq!(b[0], ms(4));
    let sim = simulate(&cpus, &gens, &prio);
    // low asks at 1 (its work ends before high's release at 1 is handled), spins to 2 and
    // holds to 3, without preemption; high runs 3-4.
    assert_eq!(sim[0], (0, ms(3)));
    assert!(sim.iter().zip(&b).all(|(s, b)| s.0 == 0 && s.1 <= *b));
}
