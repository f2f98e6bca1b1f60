//! A global lock under MSRP in real time: two CPUs hammer one lock protecting a counter.
//! Properties only, with generous bounds: no increment is lost, and a holder is never
//! preempted by a more urgent thread of its CPU. Nothing here asserts timing.

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use common::{ms, us};
use tempi::clock::RealClock;
use tempi::sync::LockSpec;
use tempi::trace::TraceKind;
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

/// A thread spinning in real time for a global lock held on another CPU leaves a `spin` record
/// when its spin starts and a `lock` record when it ends, and the spin counts in its
/// `spin_time`, as in virtual time. Properties only: the spin's length depends on the machine.
#[test]
fn msrp_a_real_time_spin_is_traced_and_counted() {
    let mut rt: Runtime<RealClock> = Runtime::new(Config::new(2).pin(false)).unwrap();
    let m = Arc::new(rt.create_mutex(0u64, LockSpec::new("shared").protocol("msrp")).unwrap());
    let lock = m.id().index() as u64;
    let (holding, asking) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let (m1, h, a) = (m.clone(), holding.clone(), asking.clone());
    // Holds the lock until well after the spinner asked for it.
    rt.spawn(ThreadSpec::new("holder").cpu(1), move |cx| {
        let mut n = m1.lock(cx).unwrap();
        h.store(true, Ordering::Release);
        let start = std::time::Instant::now();
        while !a.load(Ordering::Acquire) && start.elapsed() < std::time::Duration::from_secs(20) {
            std::hint::spin_loop();
        }
        cx.work(ms(20));
        *n += 1;
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("spinner").cpu(0), move |cx| {
        while !holding.load(Ordering::Acquire) {
            cx.sleep(us(100));
        }
        asking.store(true, Ordering::Release);
        *m.lock(cx).unwrap() += 1;
    })
    .unwrap();
    let out = rt.run_until(Time::from_secs(60)).unwrap();
    let (holder, spinner) = (out.thread_named("holder").unwrap(), out.thread_named("spinner").unwrap());
    assert_eq!(spinner.outcome, Some(ThreadOutcome::Completed));
    let of = |id, kind| -> Vec<_> { out.trace.iter().filter(|r| r.thread == id && r.kind == kind).collect() };
    // The holder took the lock at once: no spin.
    assert!(of(holder.id, TraceKind::Spin).is_empty());
    assert_eq!(holder.stats.spin_time, std::time::Duration::ZERO);
    assert_eq!(of(holder.id, TraceKind::LockAcquired).len(), 1);
    // The spinner spun once, on its CPU, for that lock; its spin ends where it got the lock.
    let spins = of(spinner.id, TraceKind::Spin);
    let got = of(spinner.id, TraceKind::LockAcquired);
    assert_eq!((spins.len(), got.len()), (1, 1));
    assert_eq!((spins[0].cpu, spins[0].arg, got[0].cpu, got[0].arg), (0, lock, 0, lock));
    assert!(spins[0].time < got[0].time);
    assert_eq!(spinner.stats.spin_time, got[0].time - spins[0].time);
    // The spinner's release comes after its acquisition, which comes after the holder's
    // release: the holder stamped that release before handing the lock on.
    assert!(got[0].time <= of(spinner.id, TraceKind::LockReleased)[0].time);
    assert!(of(holder.id, TraceKind::LockReleased)[0].time < got[0].time);
}
