//! Property test: the EDF tests against the simulator, with deadlines shorter than, equal to and
//! longer than the periods. Protocol: km (a critical section is not preemptible). Scheduler:
//! EDF.
//!
//! Random small periodic sets (2-4 tasks, work in half milliseconds, random phases, one
//! resource) whose jobs do `work before; lock; work inside; unlock; work after`, simulated from
//! the last phase for two hyperperiods and the longest deadline. Whenever one of the EDF tests passes (the
//! kernelized-monitor bound, Baker's test, or `CpuTest::Edf`, which `tempi analyze` reports),
//! the simulation must miss no deadline.

use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use tempi::analysis::{CpuTest, Protocol, Resource, Task, TaskSet};
use tempi::policy::sched::Edf;
use tempi::sync::LockSpec;
use tempi::{Runtime, ThreadSpec, Time};

/// Periods (ms) whose LCM is at most 60 ms.
const PERIODS: [u64; 7] = [2, 3, 4, 5, 6, 10, 12];

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Work comes in half milliseconds.
fn work(halves: u64) -> Duration {
    Duration::from_micros(500 * halves)
}

/// One generated task: period index, phase (ms), work before, section (if any), after (in half
/// milliseconds), and the
/// deadline in quarters of the period (1 to 12: `T/4` to `3T`, at least `C`).
#[derive(Clone, Copy, Debug)]
struct Gen {
    period: usize,
    phase: u64,
    before: u64,
    inside: Option<u64>,
    after: u64,
    quarters: u64,
}

impl Gen {
    fn wcet(&self) -> u64 {
        self.before + self.inside.unwrap_or(0) + self.after
    }

    fn deadline(&self) -> Duration {
        let d = Duration::from_micros(PERIODS[self.period] * 250 * self.quarters);
        d.max(work(self.wcet()))
    }
}

fn gen_task() -> impl Strategy<Value = Gen> {
    (0..PERIODS.len(), 0u64..=3, 0u64..=2, proptest::option::weighted(0.5, 1u64..=2), 0u64..=2, 1u64..=12).prop_map(
        |(period, phase, before, inside, after, quarters)| {
            let before = if inside.is_none() && before + after == 0 { 1 } else { before };
            // A job ends with work, not with an unlock (a runtime call, hence a preemption
            // point), as in the other cross-checks.
            let after = if inside.is_some() { after.max(1) } else { after };
            Gen { period, phase, before, inside, after, quarters }
        },
    )
}

fn model(gens: &[Gen]) -> TaskSet {
    let mut ts = TaskSet::new();
    let r = ts.add_resource(Resource::new("K", Protocol::Km));
    for (i, g) in gens.iter().enumerate() {
        let mut t = Task::new(format!("t{i}"), work(g.wcet()), ms(PERIODS[g.period])).deadline(g.deadline());
        if let Some(d) = g.inside {
            t = t.section(r, work(d));
        }
        ts.add_task(t);
    }
    ts
}

/// Simulate under EDF; the number of deadline misses per task.
fn simulate(ts: &TaskSet, gens: &[Gen]) -> Vec<u64> {
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(Edf::new()));
    let lock = Arc::new(rt.create_mutex((), LockSpec::new("K").protocol("km")).unwrap());
    for (t, g) in ts.tasks.iter().zip(gens) {
        let g = *g;
        let lock = lock.clone();
        let spec =
            ThreadSpec::new(t.name.clone()).periodic(t.period).phase(ms(g.phase)).wcet(t.wcet).deadline(t.deadline);
        rt.spawn(spec, move |cx| {
            if g.before > 0 {
                cx.work(work(g.before));
            }
            if let Some(d) = g.inside {
                let _guard = lock.lock(cx).unwrap();
                cx.work(work(d));
            }
            if g.after > 0 {
                cx.work(work(g.after));
            }
        })
        .unwrap();
    }
    let hyper = ts.hyperperiod().unwrap();
    let longest = ts.tasks.iter().map(|t| t.deadline).max().unwrap_or_default();
    let until = Time::from_millis(3) + 2 * hyper + longest + Duration::from_nanos(1);
    let out = rt.run_until(until).unwrap();
    ts.tasks.iter().map(|t| out.thread_named(&t.name).unwrap().stats.misses).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn edf_tests_that_pass_bound_the_simulation(gens in proptest::collection::vec(gen_task(), 2..=4)) {
        let ts = model(&gens);
        prop_assert!(ts.validate().is_ok());
        let e = ts.edf_tests();
        let baker = e.baker.expect("km is covered by Baker's test");
        let cpu = CpuTest::Edf.passes(&ts);
        if e.km_bound.passed || baker.passed || cpu {
            let misses = simulate(&ts, &gens);
            prop_assert!(
                misses.iter().all(|&m| m == 0),
                "misses {:?}; km {:?}, baker {:?}, cpu test {}; {:?}", misses, e.km_bound, baker, cpu, ts
            );
        }
    }
}

/// By hand: two tasks of 3 ms every 4 ms, due 8 ms after release, ask for 6 ms every 4 ms. No
/// EDF test passes, and the simulation misses. (Baker's test with `C/D` gave 0.75.)
#[test]
fn an_overloaded_set_with_late_deadlines_is_refused_and_misses() {
    let gens = [Gen { period: 2, phase: 0, before: 6, inside: None, after: 0, quarters: 8 }; 2];
    let ts = model(&gens);
    let e = ts.edf_tests();
    assert!(!e.km_bound.passed && !e.baker.unwrap().passed, "{e:?}");
    assert!(!CpuTest::Edf.passes(&ts));
    assert!(simulate(&ts, &gens).iter().sum::<u64>() > 0);
}
