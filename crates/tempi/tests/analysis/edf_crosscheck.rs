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

use crate::common;

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
    // Phases are at most 3 ms.
    common::misses_over_two_hyperperiods(rt, ts, ms(3))
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
        // A set that breaks a necessary condition can pass no sufficient test.
        if let Some(why) = ts.infeasibility(1) {
            prop_assert!(!(e.km_bound.passed || baker.passed || cpu), "{:?} passed: {:?}", why, ts);
        }
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

/// By hand: under bp a holder is not helped, so a job waits for the holder and for every more
/// urgent job that preempts it. `l` takes R at 0 for 2 ms; at 1 `h` (due at 11) asks for R and
/// waits, `m` (due at 51) runs 1-11 ahead of `l` (due at 100), `l` releases R at 12 and `h`
/// ends at 14: a miss. The kernelized-monitor bound, which counts one section per job, would
/// give (3+2)/100 + (2+2)/10 + (10+2)/50 = 0.69; it must not pass with a bp (or bpi, rcs)
/// resource in use, and Baker's test does not apply.
#[test]
fn the_kernelized_monitor_bound_does_not_vouch_for_basic_priority() {
    let mut ts = TaskSet::new();
    let r = ts.add_resource(Resource::new("R", Protocol::Bp));
    ts.add_task(Task::new("l", ms(3), ms(100)).section(r, ms(2)));
    ts.add_task(Task::new("h", ms(2), ms(100)).deadline(ms(10)).section(r, ms(1)));
    ts.add_task(Task::new("m", ms(10), ms(100)).deadline(ms(50)));
    let e = ts.edf_tests();
    assert!((e.km_bound.load - 0.69).abs() < 1e-9, "{e:?}");
    assert!(!e.km_bound.passed && e.baker.is_none(), "{e:?}");
    assert!(!CpuTest::Edf.passes(&ts));
    // The same resource under km or bpi: the holder finishes its section first, h ends at 4.
    for protocol in [Protocol::Km, Protocol::Bpi] {
        ts.resources[r].protocol = protocol;
        assert_eq!(simulate_by_hand(&ts, protocol), [0, 0, 0], "{protocol}");
    }
    ts.resources[r].protocol = Protocol::Bp;
    assert_eq!(simulate_by_hand(&ts, Protocol::Bp), [0, 1, 0]);
}

/// `l` from 0: lock, 2 ms, unlock, 1 ms; `h` from 1: lock, 1 ms, unlock, 1 ms; `m` from 1: 10
/// ms. Deadline misses per task under EDF.
fn simulate_by_hand(ts: &TaskSet, protocol: Protocol) -> Vec<u64> {
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(Edf::new()));
    let lock = Arc::new(rt.create_mutex((), LockSpec::new("R").protocol(protocol.name())).unwrap());
    for (t, (phase, inside)) in ts.tasks.iter().zip([(0, Some(2)), (1, Some(1)), (1, None)]) {
        let lock = lock.clone();
        let rest = t.wcet - ms(inside.unwrap_or(0));
        let spec =
            ThreadSpec::new(t.name.clone()).periodic(t.period).phase(ms(phase)).wcet(t.wcet).deadline(t.deadline);
        rt.spawn(spec, move |cx| {
            if let Some(d) = inside {
                let _guard = lock.lock(cx).unwrap();
                cx.work(ms(d));
            }
            cx.work(rest);
        })
        .unwrap();
    }
    let out = rt.run_until(Time::from_millis(100)).unwrap();
    ts.tasks.iter().map(|t| out.thread_named(&t.name).unwrap().stats.misses).collect()
}
