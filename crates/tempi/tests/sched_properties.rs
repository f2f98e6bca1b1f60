//! Property tests: utilisation bounds hold in simulation. Policies: edf, fp (rate monotonic).
//! Random implicit-deadline periodic sets, released together (the critical instant), simulated
//! over one hyperperiod.

mod common;

use std::time::Duration;

use proptest::prelude::*;
use tempi::policy::sched::Edf;
use tempi::{assign_rate_monotonic, Config, Runtime, ThreadSpec, Time};

/// Periods (ms) whose pairwise LCMs stay small, so a hyperperiod is short to simulate.
const PERIODS: [u64; 8] = [2, 3, 4, 5, 6, 8, 10, 12];

fn lcm(a: u64, b: u64) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    a / gcd(a, b) * b
}

/// Tasks (C, T) in ns whose utilisation is at most `bound`, scaled from random weights.
/// Utilisation is checked exactly in integers over the hyperperiod.
fn task_set(weights: &[(usize, u32)], bound: f64) -> (Vec<(u64, u64)>, u64) {
    let periods: Vec<u64> = weights.iter().map(|&(p, _)| PERIODS[p] * 1_000_000).collect();
    let hyper = periods.iter().fold(1, |a, &b| lcm(a, b));
    let total: u32 = weights.iter().map(|&(_, w)| w).sum();
    let mut set: Vec<(u64, u64)> = weights
        .iter()
        .zip(&periods)
        .map(|(&(_, w), &t)| {
            let u = bound * w as f64 / total as f64;
            ((u * t as f64).floor().max(1.0) as u64, t)
        })
        .collect();
    // Rounding can only have lowered C, except where the max(1) floor kicked in; fix any excess.
    while set.iter().map(|&(c, t)| c as u128 * (hyper / t) as u128).sum::<u128>() as f64 > bound * hyper as f64 {
        let i = set.iter().enumerate().max_by_key(|(_, &(c, _))| c).map(|(i, _)| i).unwrap();
        set[i].0 -= 1;
    }
    (set, hyper)
}

fn simulate(set: &[(u64, u64)], hyper: u64, edf: bool) -> u64 {
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(Config::new(1).trace_capacity(0)).unwrap();
    if edf {
        rt.set_scheduler(|| Box::new(Edf::new()));
    }
    let mut specs: Vec<ThreadSpec> = set
        .iter()
        .enumerate()
        .map(|(i, &(c, t))| {
            ThreadSpec::new(format!("t{i}")).periodic(Duration::from_nanos(t)).wcet(Duration::from_nanos(c))
        })
        .collect();
    assign_rate_monotonic(&mut specs);
    for s in specs {
        let c = s.wcet_value();
        rt.spawn(s, move |cx| cx.work(c)).unwrap();
    }
    // One extra nanosecond so deadlines at the hyperperiod are checked too.
    let out = rt.run_until(Time::from_nanos(hyper + 1)).unwrap();
    out.total_misses()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn sched_edf_never_misses_when_utilisation_at_most_one(
        weights in prop::collection::vec((0..PERIODS.len(), 1u32..100), 1..7)
    ) {
        let (set, hyper) = task_set(&weights, 1.0);
        prop_assert_eq!(simulate(&set, hyper, true), 0, "set {:?}", set);
    }

    #[test]
    fn sched_rm_never_misses_under_liu_layland_bound(
        weights in prop::collection::vec((0..PERIODS.len(), 1u32..100), 1..7)
    ) {
        let n = weights.len() as f64;
        let bound = n * (2f64.powf(1.0 / n) - 1.0);
        let (set, hyper) = task_set(&weights, bound);
        prop_assert_eq!(simulate(&set, hyper, false), 0, "set {:?}", set);
    }
}

#[test]
fn sched_overloaded_set_is_caught() {
    // Guard against a simulator that never reports misses: U = 1.05 must miss under EDF.
    let set = [(2_100_000, 4_000_000), (2_100_000, 4_000_000)];
    assert!(simulate(&set, 4_000_000, true) > 0);
}
