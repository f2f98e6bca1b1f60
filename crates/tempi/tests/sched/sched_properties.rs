//! Property tests: utilisation bounds hold in simulation, for every per-CPU policy of the
//! registry of the class the bound is about (`PolicyClass`: EDF, fixed priority with rate
//! monotonic priorities).
//! Random implicit-deadline periodic sets, released together (the critical instant), simulated
//! over one hyperperiod.

use crate::common;

use std::time::Duration;

use proptest::prelude::*;
use tempi::policy::sched::PolicyClass;
use tempi::{assign_rate_monotonic, Config, Runtime, ThreadSpec, Time};

use common::{lcm, registered};

/// Periods (ms) whose pairwise LCMs stay small, so a hyperperiod is short to simulate.
const PERIODS: [u64; 8] = [2, 3, 4, 5, 6, 8, 10, 12];

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
        let i = set.iter().enumerate().max_by_key(|&(_, &(c, _))| c).map(|(i, _)| i).unwrap();
        set[i].0 -= 1;
    }
    (set, hyper)
}

/// The registry's per-CPU policies of `class`: each is held to the bound of its class.
fn policies(class: PolicyClass) -> Vec<String> {
    registered::schedulers(Duration::from_millis(1), |s| PolicyClass::of(s) == class)
}

fn simulate(set: &[(u64, u64)], hyper: u64, policy: &str) -> u64 {
    let config =
        Config::new(1).trace_capacity(0).scheduler_factory(registered::scheduler(policy, Duration::from_millis(1)));
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(config).unwrap();
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
        for policy in policies(PolicyClass::Edf) {
            prop_assert_eq!(simulate(&set, hyper, &policy), 0, "{} set {:?}", policy, set);
        }
    }

    #[test]
    fn sched_rm_never_misses_under_liu_layland_bound(
        weights in prop::collection::vec((0..PERIODS.len(), 1u32..100), 1..7)
    ) {
        let n = weights.len() as f64;
        let bound = n * (2f64.powf(1.0 / n) - 1.0);
        let (set, hyper) = task_set(&weights, bound);
        for policy in policies(PolicyClass::FixedPriority) {
            prop_assert_eq!(simulate(&set, hyper, &policy), 0, "{} set {:?}", policy, set);
        }
    }
}

#[test]
fn sched_overloaded_set_is_caught() {
    // Guard against a simulator that never reports misses: U = 1.05 must miss under EDF.
    let set = [(2_100_000, 4_000_000), (2_100_000, 4_000_000)];
    for policy in policies(PolicyClass::Edf) {
        assert!(simulate(&set, 4_000_000, &policy) > 0, "{policy}");
    }
}

/// One operation on a ready queue: thread index, urgency, kind.
#[derive(Clone, Debug)]
enum QueueOp {
    Back(usize, i64),
    Front(usize, i64),
    Update(usize, i64),
    Remove(usize),
    Pop,
    /// `push_back_front_pop`: the first thread queued at the back, the second at the front.
    HandOver(usize, i64, usize, i64),
}

fn queue_op() -> impl Strategy<Value = QueueOp> {
    prop_oneof![
        4 => (0..40usize, 0..6i64).prop_map(|(t, u)| QueueOp::Back(t, u)),
        2 => (0..40usize, 0..6i64).prop_map(|(t, u)| QueueOp::Front(t, u)),
        1 => (0..40usize, 0..6i64).prop_map(|(t, u)| QueueOp::Update(t, u)),
        1 => (0..40usize).prop_map(QueueOp::Remove),
        2 => Just(QueueOp::Pop),
        2 => (0..40usize, 0..6i64, 0..40usize, 0..6i64).prop_map(|(a, u, b, v)| QueueOp::HandOver(a, u, b, v)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The ready queue serves the most urgent first; among equals, threads queued at the
    /// front (the last of them first), then threads queued at the back in arrival order; an
    /// urgency update keeps a thread's place among equals; the fused hand-over step leaves
    /// what its three steps leave. Checked against a plain list, through short queues and
    /// queues long enough to be searched.
    #[test]
    fn sched_ready_queue_orders_like_its_specification(ops in proptest::collection::vec(queue_op(), 1..300)) {
        use tempi::policy::sched::{ReadyQueue, Urgency};
        let mut rt = Runtime::simulated(1);
        let ids: Vec<_> = (0..40).map(|i| rt.spawn(ThreadSpec::new(format!("t{i}")), |_| {}).unwrap()).collect();
        let mut queue = ReadyQueue::with_capacity(4);
        // Model: (urgency, rank, thread); the next to run has the largest (urgency, rank).
        let mut model: Vec<(i64, i64, usize)> = Vec::new();
        let (mut back, mut front) = (0i64, 0i64);
        for op in ops {
            match op {
                QueueOp::Back(t, u) | QueueOp::Front(t, u) if model.iter().any(|e| e.2 == t) => {
                    let _ = (t, u);
                }
                QueueOp::HandOver(a, _, b, _) if a == b || model.iter().any(|e| e.2 == a || e.2 == b) => {}
                QueueOp::HandOver(a, u, b, v) => {
                    back -= 1;
                    model.push((u, back, a));
                    front += 1;
                    model.push((v, front, b));
                    let best = model.iter().enumerate().max_by_key(|(_, e)| (e.0, e.1)).map(|(i, _)| i);
                    let expected = best.map(|i| ids[model.remove(i).2]);
                    prop_assert_eq!(queue.push_back_front_pop((ids[a], Urgency(u)), (ids[b], Urgency(v))), expected);
                }
                QueueOp::Back(t, u) => {
                    back -= 1;
                    model.push((u, back, t));
                    queue.push_back(ids[t], Urgency(u));
                }
                QueueOp::Front(t, u) => {
                    front += 1;
                    model.push((u, front, t));
                    queue.push_front(ids[t], Urgency(u));
                }
                QueueOp::Update(t, u) => {
                    let queued = model.iter_mut().find(|e| e.2 == t).map(|e| e.0 = u).is_some();
                    prop_assert_eq!(queue.update(ids[t], Urgency(u)), queued);
                }
                QueueOp::Remove(t) => {
                    let at = model.iter().position(|e| e.2 == t);
                    if let Some(at) = at {
                        model.remove(at);
                    }
                    prop_assert_eq!(queue.remove(ids[t]), at.is_some());
                }
                QueueOp::Pop => {
                    let best = model.iter().enumerate().max_by_key(|(_, e)| (e.0, e.1)).map(|(i, _)| i);
                    let expected = best.map(|i| ids[model.remove(i).2]);
                    prop_assert_eq!(queue.pop(), expected);
                }
            }
            prop_assert_eq!(queue.len(), model.len());
            let best = model.iter().max_by_key(|e| (e.0, e.1)).map(|e| (ids[e.2], Urgency(e.0)));
            prop_assert_eq!(queue.peek(), best);
        }
    }
}
