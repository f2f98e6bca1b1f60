//! Property tests of `TaskSet::partition`: every partition returned passes its one-CPU test
//! on every CPU, and simulating the partitioned threads in virtual time (synchronous release,
//! the critical instant, over one hyperperiod) shows no deadline miss: under EDF for EDF
//! partitions, under fixed priority for response-time partitions.

use std::time::Duration;

use proptest::prelude::*;
use tempi::analysis::{CpuTest, Fit, PartitionError, SortKey, TaskSet};
use tempi::policy::sched::Edf;
use tempi::{assign_deadline_monotonic, Runtime, ThreadSpec, Time};

/// Periods (ms) with a small common multiple (120 ms), so a hyperperiod is quick to simulate.
const PERIODS: [u64; 8] = [2, 3, 4, 5, 6, 8, 10, 12];

/// One random task: period index, WCET as a fraction of the period (per mille), deadline as a
/// fraction of the slack between `C` and `T` (per mille; 1000 is `D = T`).
type RawTask = (usize, u64, u64);

fn specs(raw: &[RawTask]) -> Vec<ThreadSpec> {
    let mut specs: Vec<ThreadSpec> = raw
        .iter()
        .enumerate()
        .map(|(i, &(p, c_pm, d_pm))| {
            let t = PERIODS[p] * 1_000_000;
            let c = (t * c_pm / 1000).max(1);
            let d = c + (t - c) * d_pm / 1000;
            ThreadSpec::new(format!("t{i}"))
                .periodic(Duration::from_nanos(t))
                .wcet(Duration::from_nanos(c))
                .deadline(Duration::from_nanos(d))
        })
        .collect();
    assign_deadline_monotonic(&mut specs);
    specs
}

fn hyperperiod(ts: &TaskSet) -> Time {
    Time::ZERO + ts.hyperperiod().expect("small periods")
}

/// Simulate the partitioned specs on `cpus` CPUs; the number of deadline misses.
fn misses(specs: Vec<ThreadSpec>, cpus: usize, edf: bool, until: Time) -> u64 {
    let mut rt = Runtime::simulated(cpus);
    if edf {
        rt.set_scheduler(|| Box::new(Edf::new()));
    }
    for s in specs {
        let c = s.wcet_value();
        rt.spawn(s, move |cx| cx.work(c)).expect("valid spec");
    }
    // One extra nanosecond so deadlines at the hyperperiod are checked too.
    rt.run_until(until + Duration::from_nanos(1)).expect("the run completes").total_misses()
}

fn fit() -> impl Strategy<Value = Fit> {
    prop_oneof![Just(Fit::First), Just(Fit::Worst)]
}

fn key() -> impl Strategy<Value = SortKey> {
    prop_oneof![Just(SortKey::Utilisation), Just(SortKey::Density)]
}

fn test() -> impl Strategy<Value = CpuTest> {
    prop_oneof![Just(CpuTest::Edf), Just(CpuTest::ResponseTime), Just(CpuTest::LiuLayland)]
}

fn raw_tasks() -> impl Strategy<Value = Vec<RawTask>> {
    let deadline = prop_oneof![Just(1000u64), 0u64..1000];
    prop::collection::vec((0..PERIODS.len(), 1u64..700, deadline), 1..9)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_partition_passes_its_test_and_simulates_without_misses(
        raw in raw_tasks(), cpus in 1usize..5, fit in fit(), key in key(), test in test()
    ) {
        let mut specs = specs(&raw);
        let ts = TaskSet::from_specs(&specs).expect("periodic specs");
        match ts.partition(cpus, fit, key, test) {
            Ok(p) => {
                prop_assert_eq!(p.cpu_of.len(), ts.tasks.len());
                prop_assert!(p.cpu_of.iter().all(|&c| c < cpus));
                for cpu in 0..cpus {
                    prop_assert!(test.passes(&p.subset(&ts, cpu)), "CPU {} fails {:?}: {:?}", cpu, test, p);
                }
                p.apply(&mut specs);
                let edf = test == CpuTest::Edf;
                prop_assert_eq!(misses(specs, cpus, edf, hyperperiod(&ts)), 0, "{:?} {:?} {:?}: {:?}", fit, key, test, p);
            }
            Err(PartitionError::DoesNotFit { task, bound_to }) => {
                prop_assert!(ts.tasks.iter().any(|t| t.name == task));
                prop_assert_eq!(bound_to, None, "no resources, so nothing binds a task");
            }
            Err(e) => prop_assert!(false, "unexpected error {}", e),
        }
    }

    /// Implicit deadlines and a total utilisation of at most one fit on a single CPU under
    /// EDF, so neither heuristic may give up.
    #[test]
    fn edf_never_refuses_a_set_one_cpu_could_take(
        raw in prop::collection::vec((0..PERIODS.len(), 1u64..400), 1..7), cpus in 1usize..4, fit in fit()
    ) {
        let raw: Vec<RawTask> = raw.into_iter().map(|(p, c)| (p, c, 1000)).collect();
        let ts = TaskSet::from_specs(&specs(&raw)).expect("periodic specs");
        let u: f64 = ts.tasks.iter().map(|t| t.utilisation()).sum();
        prop_assume!(u <= 1.0 - 1e-9);
        prop_assert!(ts.partition(cpus, fit, SortKey::Utilisation, CpuTest::Edf).is_ok());
    }
}

#[test]
fn an_edf_partition_of_a_full_two_cpu_set_simulates_without_misses() {
    // The worst-fit example of the docs: 0.4 + 0.3 + 0.3 on each CPU, each exactly full.
    let ms = Duration::from_millis;
    let mut specs: Vec<ThreadSpec> = [4, 4, 3, 3, 3, 3]
        .iter()
        .enumerate()
        .map(|(i, &c)| ThreadSpec::new(format!("t{i}")).periodic(ms(10)).wcet(ms(c)))
        .collect();
    let ts = TaskSet::from_specs(&specs).unwrap();
    assert!(ts.partition(2, Fit::First, SortKey::Utilisation, CpuTest::Edf).is_err());
    let p = ts.partition(2, Fit::Worst, SortKey::Utilisation, CpuTest::Edf).unwrap();
    p.apply(&mut specs);
    assert_eq!(misses(specs, 2, true, Time::from_millis(10)), 0);
    // The guard: the same six threads on one CPU (U = 2) do miss.
    let one: Vec<ThreadSpec> = [4, 4, 3, 3, 3, 3]
        .iter()
        .enumerate()
        .map(|(i, &c)| ThreadSpec::new(format!("t{i}")).periodic(ms(10)).wcet(ms(c)))
        .collect();
    assert!(misses(one, 1, true, Time::from_millis(10)) > 0);
}
