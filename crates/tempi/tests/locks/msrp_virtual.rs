//! Global locks under MSRP in virtual time: exact timelines of spinning in FIFO order across
//! CPUs, spin time accounted, non-preemptive holders and spinners, and the refusals of waiting
//! inside a global section.

use crate::common;

use std::sync::Arc;

use common::{cpu_segments, markers, ms, us};
use tempi::sync::{LockError, LockSpec};
use tempi::trace::TraceKind;
use tempi::{Error, Runtime, ThreadSpec};

/// A one-job thread on `cpu`, released at `t` µs.
fn one(name: &str, cpu: usize, t: u64) -> ThreadSpec {
    ThreadSpec::new(name).cpu(cpu).periodic(ms(1000)).phase(us(t)).max_jobs(1)
}

#[test]
fn msrp_spinners_are_served_in_request_order_and_spin_time_is_accounted() {
    let mut rt = Runtime::simulated(3);
    let g = Arc::new(rt.create_mutex(0u32, LockSpec::new("G").protocol("msrp")).unwrap());
    // (name, cpu, release µs, priority, critical section ms)
    for (name, cpu, at, prio, cs) in [("a", 0, 0, 1, 3), ("b", 1, 1000, 1, 2), ("c", 2, 2000, 9, 1)] {
        let g = g.clone();
        rt.spawn(one(name, cpu, at).priority(prio), move |cx| {
            let mut n = g.lock(cx).unwrap();
            cx.work(ms(cs));
            *n += 1;
        })
        .unwrap();
    }
    let out = rt.run().unwrap();
    // `c` is more urgent than `b`, but asked later: FIFO, not priority, orders the spinners.
    assert_eq!(cpu_segments(&out), ["cpu0/a:0-3", "cpu1/b:1-5", "cpu2/c:2-6"]);
    assert_eq!(markers(&out, TraceKind::Spin), ["b#0@1", "c#0@2"]);
    assert_eq!(markers(&out, TraceKind::LockAcquired), ["a#0@0", "b#0@3", "c#0@5"]);
    assert_eq!(markers(&out, TraceKind::LockReleased), ["a#0@3", "b#0@5", "c#0@6"]);
    let stats = |n: &str| out.thread_named(n).unwrap().stats;
    assert_eq!(stats("a").spin_time, ms(0));
    assert_eq!(stats("b").spin_time, ms(2));
    assert_eq!(stats("c").spin_time, ms(3));
    // Spinning is CPU time: the spin plus the section.
    assert_eq!(stats("b").cpu_time, ms(4));
    assert_eq!(stats("c").cpu_time, ms(4));
    assert_eq!(stats("c").response_max, Some(ms(4)));
}

#[test]
fn msrp_holder_and_spinner_are_not_preempted_by_more_urgent_local_releases() {
    let mut rt = Runtime::simulated(2);
    let g = Arc::new(rt.create_mutex((), LockSpec::new("G").protocol("msrp")).unwrap());
    let g0 = g.clone();
    rt.spawn(one("holder", 0, 0).priority(1), move |cx| {
        let _g = g0.lock(cx).unwrap();
        cx.work(ms(4));
    })
    .unwrap();
    rt.spawn(one("urgent0", 0, 1000).priority(5), move |cx| cx.work(ms(1))).unwrap();
    let g1 = g.clone();
    rt.spawn(one("spinner", 1, 2000).priority(1), move |cx| {
        let _g = g1.lock(cx).unwrap();
        cx.work(ms(1));
    })
    .unwrap();
    rt.spawn(one("urgent1", 1, 3000).priority(5), move |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(
        cpu_segments(&out),
        [
            // The holder keeps CPU 0 until its release at 4, then the urgent thread runs.
            "cpu0/holder:0-4",
            "cpu0/urgent0:4-5",
            "cpu0/holder:5-5",
            // The spinner keeps CPU 1 from 2 (spinning to 4, then holding to 5).
            "cpu1/spinner:2-5",
            "cpu1/urgent1:5-6",
            "cpu1/spinner:6-6",
        ]
    );
    assert_eq!(out.thread_named("spinner").unwrap().stats.spin_time, ms(2));
    assert_eq!(out.thread_named("urgent0").unwrap().stats.response_max, Some(ms(4)));
    assert_eq!(out.thread_named("urgent1").unwrap().stats.response_max, Some(ms(3)));
}

#[test]
fn msrp_waiting_inside_a_global_section_is_refused() {
    let mut rt = Runtime::simulated(2);
    let g = Arc::new(rt.create_mutex((), LockSpec::new("G").protocol("msrp")).unwrap());
    let h = Arc::new(rt.create_mutex((), LockSpec::new("H").protocol("msrp")).unwrap());
    let local = Arc::new(rt.create_mutex((), LockSpec::new("L").protocol("bpi")).unwrap());
    let cv = Arc::new(rt.create_condvar(0).unwrap());
    let l = local.clone();
    rt.spawn(one("low", 0, 0).priority(1), move |cx| {
        let _l = l.lock(cx).unwrap();
        cx.work(ms(2));
    })
    .unwrap();
    let (g1, h1) = (g.clone(), h.clone());
    let other = rt.spawn(one("other", 1, 0), |cx| cx.work(ms(1))).unwrap();
    rt.spawn(one("high", 0, 1000).priority(5), move |cx| {
        let guard = g1.lock(cx).unwrap();
        assert_eq!(g1.try_lock(cx).err(), Some(LockError::AlreadyHeld));
        // A second global lock, a wait for a local lock that is taken, a condition wait:
        // all refused, and the global lock is still held.
        assert_eq!(h1.lock(cx).err(), Some(LockError::GlobalHeld));
        assert_eq!(local.lock(cx).err(), Some(LockError::GlobalHeld));
        assert_eq!(cx.join(other).err(), Some(Error::GlobalLockHeld { thread: cx.id(), call: "join" }));
        assert_eq!(cv.wait(cx, guard).err(), Some(LockError::NotForGlobal));
        // The refused wait released the global lock: it can be taken again, and a timed lock
        // is not for global locks.
        assert_eq!(g1.lock_timeout(cx, ms(1)).err(), Some(LockError::NotForGlobal));
        drop(g1.lock(cx).unwrap());
        assert!(cx.create_mutex((), LockSpec::new("late").protocol("msrp")).is_err());
    })
    .unwrap();
    rt.run().unwrap();
}

#[test]
fn msrp_sleeping_inside_a_global_section_ends_the_run() {
    let mut rt = Runtime::simulated(2);
    let g = Arc::new(rt.create_mutex((), LockSpec::new("G").protocol("msrp")).unwrap());
    let t = rt
        .spawn(one("t", 1, 0), move |cx| {
            let _g = g.lock(cx).unwrap();
            cx.sleep(ms(1));
        })
        .unwrap();
    assert_eq!(rt.run().unwrap_err(), Error::GlobalLockHeld { thread: t, call: "sleep" });
}

#[test]
fn msrp_a_leaked_guard_is_released_at_the_end_of_its_job() {
    let mut rt = Runtime::simulated(2);
    let g = Arc::new(rt.create_mutex((), LockSpec::new("G").protocol("msrp")).unwrap());
    let g0 = g.clone();
    rt.spawn(one("leaker", 0, 0), move |cx| {
        std::mem::forget(g0.lock(cx).unwrap());
        cx.work(ms(2));
    })
    .unwrap();
    rt.spawn(one("next", 1, 1000), move |cx| {
        let _g = g.lock(cx).unwrap();
        assert_eq!(cx.now(), tempi::Time::from_millis(2));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("next").unwrap().stats.spin_time, ms(1));
}
