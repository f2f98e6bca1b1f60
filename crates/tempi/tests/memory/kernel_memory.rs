//! Predictable memory: after start-up, the dispatch path does not allocate. A counting global
//! allocator compares a run with a run four times as long: the allocation counts must be equal.
//! (Aborting a job is left out: it unwinds the job, and the unwinder allocates its exception
//! object, one per abort.)

use crate::common;

use common::counting::allocations;
use common::ms;
use tempi::policy::sched::{Edf, RoundRobin};
use tempi::{Config, MissPolicy, Runtime, ThreadSpec, Time};

fn allocations_for(horizon_ms: u64, policy: &str) -> u64 {
    let cfg = Config::new(2).trace_capacity(200_000);
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(cfg).unwrap();
    match policy {
        "edf" => rt.set_scheduler(|| Box::new(Edf::new())),
        "rr" => rt.set_scheduler(|| Box::new(RoundRobin::new(ms(1)))),
        _ => {}
    }
    for i in 0..8u64 {
        let spec = ThreadSpec::new(format!("p{i}"))
            .cpu((i % 2) as usize)
            .periodic(ms(4 + i))
            .priority(i as i32)
            .miss_policy(if i == 7 { MissPolicy::SkipNext } else { MissPolicy::Continue })
            .on_miss(|_| {})
            // Every thread ends between jobs: a thread still inside a job when the run stops
            // is unwound, and the unwinder allocates, so the runs end at the same point.
            .max_jobs((horizon_ms / (4 + i)) as u32);
        rt.spawn(spec, move |cx| {
            cx.work(ms(1));
            cx.yield_now();
            cx.sleep(ms(1));
            cx.work(ms(i % 3));
        })
        .unwrap();
    }
    let before = allocations();
    let out = rt.run_until(Time::from_millis(2 * horizon_ms)).unwrap();
    let after = allocations();
    assert!(out.threads.iter().all(|t| t.stats.completed > 0 && t.outcome.is_some()));
    assert_eq!(out.trace_dropped, 0);
    after - before
}

#[test]
fn kernel_steady_state_dispatch_does_not_allocate() {
    for policy in ["fp", "edf", "rr"] {
        let short = allocations_for(1_000, policy);
        let long = allocations_for(4_000, policy);
        assert_eq!(short, long, "{policy}: a longer run allocated more ({short} vs {long})");
    }
}

/// Bounded waits that end early (a semaphore procured, a lock handed over, a condition
/// notified before their timeouts): every timeout is cancelled when its wait ends.
fn timed_waits(horizon_ms: u64) -> (u64, tempi::RunOutcome) {
    use std::sync::Arc;
    use tempi::sync::{LockSpec, SemSpec};
    // A table this small holds only what is pending at once: 16 for 4 thread slots, 1 timing
    // event, 8 for the set, 2 for the slice. Timeouts left to expire would fill it in a few
    // periods (each lasts ten thousand, longer than either run).
    let cfg = Config::new(1).max_threads(4).max_timers(1).max_sets(1).trace_capacity(100_000);
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(cfg).unwrap();
    let m = Arc::new(rt.create_mutex(0u64, LockSpec::new("m")).unwrap());
    let cv = Arc::new(rt.create_condvar(0).unwrap());
    let sem = Arc::new(rt.create_semaphore(SemSpec::new("s", 0)).unwrap());
    let (m1, cv1, sem1) = (m.clone(), cv.clone(), sem.clone());
    rt.spawn(ThreadSpec::new("waiter").periodic(ms(1)).priority(2), move |cx| {
        sem1.procure_timeout(cx, ms(10_000)).unwrap();
        let g = m1.lock_timeout(cx, ms(10_000)).unwrap();
        let (mut g, timed_out) = cv1.wait_timeout(cx, g, Some(ms(10_000))).unwrap();
        assert!(!timed_out);
        *g += 1;
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("holder").periodic(ms(1)).priority(1), move |cx| {
        let g = m.lock(cx).unwrap();
        cx.work(common::us(100));
        sem.vacate(cx).unwrap();
        cx.work(common::us(100));
        drop(g);
        cv.notify_one(cx).unwrap();
    })
    .unwrap();
    let before = allocations();
    let out = rt.run_until(Time::from_millis(horizon_ms)).unwrap();
    let after = allocations();
    (after - before, out)
}

#[test]
fn kernel_cancelled_timeouts_leave_the_timer_table() {
    let (short, out) = timed_waits(1_000);
    let (long, long_out) = timed_waits(4_000);
    assert_eq!(short, long, "a longer run allocated more ({short} vs {long})");
    assert_eq!(out.thread_named("waiter").unwrap().stats.completed, 1_000);
    assert_eq!(long_out.thread_named("waiter").unwrap().stats.completed, 4_000);
    assert_eq!(long_out.total_misses(), 0);
}
