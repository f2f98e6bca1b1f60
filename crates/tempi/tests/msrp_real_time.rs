//! A global lock under MSRP in real time: two CPUs hammer one lock protecting a counter.
//! Properties only, with generous bounds: no increment is lost, and a holder is never
//! preempted by a more urgent thread of its CPU. Nothing here asserts timing.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use common::{ms, us};
use tempi::clock::RealClock;
use tempi::sync::LockSpec;
use tempi::{Config, Runtime, ThreadOutcome, ThreadSpec, Time};

const INCREMENTS: u64 = 10_000;

#[test]
fn msrp_two_cpus_hammer_a_shared_lock_and_lose_no_increment() {
    let mut rt: Runtime<RealClock> = Runtime::new(Config::new(2).pin(false)).unwrap();
    let counter = Arc::new(rt.create_mutex(0u64, LockSpec::new("counter").protocol("msrp")).unwrap());
    // Per CPU: whether that CPU's hammering thread is inside its global section.
    let inside: Arc<[AtomicBool; 2]> = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
    let violations = Arc::new(AtomicU32::new(0));
    for cpu in 0..2 {
        let (counter, flags) = (counter.clone(), inside.clone());
        rt.spawn(ThreadSpec::new(format!("hammer{cpu}")).cpu(cpu).priority(1), move |cx| {
            for i in 0..INCREMENTS {
                let mut n = counter.lock(cx).unwrap();
                flags[cpu].store(true, Ordering::Relaxed);
                // A read, a pause and a write: without mutual exclusion, increments are lost.
                let v = *n;
                std::hint::spin_loop();
                if i % 1000 == 0 {
                    // A runtime call inside the section: a preemption point, had the
                    // holder been preemptible.
                    cx.work(us(20));
                }
                *n = v + 1;
                flags[cpu].store(false, Ordering::Relaxed);
            }
        })
        .unwrap();
        // A more urgent periodic thread of the same CPU must never run inside the section.
        let (inside, violations) = (inside.clone(), violations.clone());
        rt.spawn(
            ThreadSpec::new(format!("urgent{cpu}")).cpu(cpu).priority(9).periodic(ms(1)).max_jobs(20),
            move |_| {
                if inside[cpu].load(Ordering::Relaxed) {
                    violations.fetch_add(1, Ordering::Relaxed);
                }
            },
        )
        .unwrap();
    }
    let check = counter.clone();
    rt.spawn(ThreadSpec::new("reader").cpu(0).priority(0).periodic(ms(1000)).phase(ms(1)).max_jobs(1), move |cx| {
        // Reads the counter through the lock from a third thread: never refused.
        let _ = *check.lock(cx).unwrap();
    })
    .unwrap();
    let out = rt.run_until(Time::from_secs(120)).unwrap();
    for name in ["hammer0", "hammer1"] {
        assert_eq!(out.thread_named(name).unwrap().outcome, Some(ThreadOutcome::Completed), "{name}");
    }
    assert_eq!(violations.load(Ordering::Relaxed), 0);
    let total = Arc::try_unwrap(counter).map(|m| m.into_inner()).unwrap_or_else(|_| panic!("threads ended"));
    assert_eq!(total, 2 * INCREMENTS);
}
