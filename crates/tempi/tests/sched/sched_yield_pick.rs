//! The fused yield hook of every policy of the registry (`Scheduler::on_yield_pick`, through
//! `common::registered`) against
//! what it stands for, `on_schedule(Yield)` then `pick_next`: over random sequences of
//! readied threads, preemptions, yields and picks, both leave the same queue and pick the
//! same threads. And a virtual-time run of yielding threads, whose schedule goes through the
//! kernel's yield path, checked exactly.

use crate::common;
use common::registered;

use proptest::prelude::*;
use std::time::Duration;
use tempi::policy::sched::{ReadyReason, SchedInfo, Schedule, Scheduler, Urgency};
use tempi::{Runtime, ThreadId, ThreadSpec, Time};

/// What is done to both schedulers.
#[derive(Debug, Clone)]
enum Op {
    /// Thread `k` (if not queued) becomes ready with this urgency, for this reason.
    Ready(usize, i64, bool),
    /// The next thread is picked (and runs).
    Pick,
    /// Thread `k` (if not queued), running with this urgency, yields: the fused hook on one
    /// side, the two separate hooks on the other.
    Yield(usize, i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0usize..8, 0i64..4, any::<bool>()).prop_map(|(k, u, p)| Op::Ready(k, u, p)),
        Just(Op::Pick),
        (0usize..8, 0i64..4).prop_map(|(k, u)| Op::Yield(k, u)),
    ]
}

fn info(id: ThreadId, u: i64) -> SchedInfo {
    SchedInfo {
        id,
        cpu: 0,
        priority: u as i32,
        urgency: Urgency(u),
        importance: 0,
        release: Time::ZERO,
        deadline: None,
        period: None,
        relative_deadline: None,
        wcet: Duration::ZERO,
        job_cpu_time: Duration::ZERO,
        job: 0,
    }
}

/// Run `ops` on `fused` and `split` (two fresh schedulers of one policy) and compare every
/// answer, then drain both queues and compare their order.
fn same_answers(ids: &[ThreadId], mut fused: Box<dyn Scheduler>, mut split: Box<dyn Scheduler>, ops: &[Op]) {
    let mut queued = [false; 8];
    let now = Time::ZERO;
    for op in ops {
        match *op {
            Op::Ready(k, u, preempted) if !queued[k] => {
                let why = if preempted { ReadyReason::Preempted } else { ReadyReason::Woken };
                fused.on_ready(&info(ids[k], u), why);
                split.on_ready(&info(ids[k], u), why);
                queued[k] = true;
            }
            Op::Pick => {
                let a = fused.pick_next(now);
                assert_eq!(a, split.pick_next(now), "after {ops:?}");
                if let Some(a) = a {
                    queued[ids.iter().position(|&i| i == a).unwrap()] = false;
                }
            }
            Op::Yield(k, u) if !queued[k] => {
                let a = fused.on_yield_pick(&info(ids[k], u), now);
                split.on_schedule(&info(ids[k], u), Schedule::Yield);
                assert_eq!(a, split.pick_next(now), "after {ops:?}");
                queued[k] = true;
                if let Some(a) = a {
                    queued[ids.iter().position(|&i| i == a).unwrap()] = false;
                }
            }
            _ => {}
        }
    }
    loop {
        let a = fused.pick_next(now);
        assert_eq!(a, split.pick_next(now), "draining after {ops:?}");
        if a.is_none() {
            break;
        }
    }
}

fn thread_ids() -> Vec<ThreadId> {
    let mut rt = Runtime::simulated(1);
    (0..8).map(|k| rt.spawn(ThreadSpec::new(format!("t{k}")), |_| {}).unwrap()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn fused_yield_matches_the_two_hooks(ops in proptest::collection::vec(op(), 0..60)) {
        let ids = thread_ids();
        let q = Duration::from_millis(1);
        for policy in registered::schedulers(q, |_| true) {
            let make = registered::scheduler(&policy, q);
            same_answers(&ids, make(), make(), &ops);
        }
    }
}

/// Three threads of one priority and one above them, on one virtual CPU: the equal ones
/// yield in turn (each to the next in FIFO order), the urgent one preempts them when it
/// wakes. Every instant is exact.
#[test]
fn yields_rotate_equal_threads_and_wakes_preempt_them() {
    use std::sync::{Arc, Mutex};
    let mut rt = Runtime::simulated(1);
    let log: Arc<Mutex<Vec<(String, u64)>>> = Arc::default();
    for name in ["a", "b", "c"] {
        let log = log.clone();
        rt.spawn(ThreadSpec::new(name).priority(1), move |cx| {
            for _ in 0..3 {
                log.lock().unwrap().push((name.to_string(), cx.now().as_nanos()));
                cx.work(Duration::from_micros(10));
                cx.yield_now();
            }
        })
        .unwrap();
    }
    let urgent_log = log.clone();
    rt.spawn(ThreadSpec::new("u").priority(2), move |cx| {
        cx.sleep(Duration::from_micros(25));
        urgent_log.lock().unwrap().push(("u".to_string(), cx.now().as_nanos()));
        cx.work(Duration::from_micros(5));
    })
    .unwrap();
    rt.run().unwrap();
    let got: Vec<(String, u64)> = log.lock().unwrap().clone();
    let us = |x: u64| x * 1_000;
    let want: Vec<(String, u64)> = [
        ("a", us(0)),
        ("b", us(10)),
        ("c", us(20)),
        // `u` wakes at 25 us, in the middle of `c`'s work, and preempts it for 5 us.
        ("u", us(25)),
        ("a", us(35)),
        ("b", us(45)),
        ("c", us(55)),
        ("a", us(65)),
        ("b", us(75)),
        ("c", us(85)),
    ]
    .into_iter()
    .map(|(n, t)| (n.to_string(), t))
    .collect();
    assert_eq!(got, want);
}
