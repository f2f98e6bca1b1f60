//! Lock misuse is an error, never undefined behaviour; timeouts fire exactly; no path leaves
//! a lock held. Protocols: bpi, bp, pcp. Scheduler: fixed priority.

use crate::common;

use std::sync::{Arc, Mutex as StdMutex};

use common::{ms, segments, us};
use tempi::sync::{LockError, LockSpec};
use tempi::{MissPolicy, Runtime, ThreadOutcome, ThreadSpec, Time};

fn at_us(t: u64) -> ThreadSpec {
    ThreadSpec::new("x").periodic(ms(1000)).phase(us(t)).max_jobs(1)
}

#[test]
fn lock_timeout_fires_exactly() {
    let got = Arc::new(StdMutex::new(None));
    let mut rt = Runtime::simulated(1);
    let m = Arc::new(rt.create_mutex(0, LockSpec::new("m")).unwrap());
    let m1 = m.clone();
    rt.spawn(ThreadSpec::new("holder").priority(1), move |cx| {
        let _g = m1.lock(cx).unwrap();
        cx.work(ms(5));
    })
    .unwrap();
    let (m2, g) = (m.clone(), got.clone());
    rt.spawn(at_us(1000).priority(2), move |cx| {
        let r = m2.lock_timeout(cx, ms(2)).map(|_| ());
        *g.lock().unwrap() = Some((r, cx.now()));
    })
    .unwrap();
    rt.run().unwrap();
    assert_eq!(*got.lock().unwrap(), Some((Err(LockError::Timeout), Time::from_millis(3))));
}

#[test]
fn lock_try_lock_and_ownership_errors() {
    let mut rt = Runtime::simulated(1);
    let m = Arc::new(rt.create_mutex(0, LockSpec::new("m")).unwrap());
    let m1 = m.clone();
    rt.spawn(ThreadSpec::new("a").priority(1), move |cx| {
        let _g = m1.lock(cx).unwrap();
        assert_eq!(m1.lock(cx).err(), Some(LockError::AlreadyHeld));
        cx.work(ms(2));
    })
    .unwrap();
    let m2 = m.clone();
    rt.spawn(at_us(1000).priority(2), move |cx| {
        assert_eq!(m2.try_lock(cx).err(), Some(LockError::WouldBlock));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)));
}

#[test]
fn lock_panic_inside_critical_section_releases_and_poisons() {
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let mut rt = Runtime::simulated(1);
    let m = Arc::new(rt.create_mutex(vec![1], LockSpec::new("m")).unwrap());
    let m1 = m.clone();
    rt.spawn(ThreadSpec::new("crasher").priority(2), move |cx| {
        let mut g = m1.lock(cx).unwrap();
        g.push(2);
        panic!("inside the critical section");
    })
    .unwrap();
    let (m2, s) = (m.clone(), seen.clone());
    rt.spawn(ThreadSpec::new("next").priority(1), move |cx| {
        s.lock().unwrap().push(m2.lock(cx).map(|g| g.clone()));
        m2.clear_poison(cx).unwrap();
        s.lock().unwrap().push(m2.lock(cx).map(|g| g.clone()));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(*seen.lock().unwrap(), [Err(LockError::Poisoned), Ok(vec![1, 2])]);
    assert!(matches!(out.threads[0].outcome, Some(ThreadOutcome::Panicked(_))));
}

#[test]
fn lock_abort_waits_for_the_critical_section_to_end() {
    // The job misses its deadline (1 ms) inside a 3 ms critical section: the abort takes effect
    // when the lock is released, never inside it.
    let mut rt = Runtime::simulated(1);
    let m = Arc::new(rt.create_mutex(0u32, LockSpec::new("m")).unwrap());
    let m1 = m.clone();
    rt.spawn(ThreadSpec::new("late").deadline(ms(1)).miss_policy(MissPolicy::AbortJob).priority(2), move |cx| {
        {
            let mut g = m1.lock(cx).unwrap();
            cx.work(ms(3));
            *g += 1;
        }
        cx.work(ms(5)); // abandoned: the abort lands at the first call after the unlock
    })
    .unwrap();
    let m2 = m.clone();
    let got = Arc::new(StdMutex::new(None));
    let g2 = got.clone();
    rt.spawn(ThreadSpec::new("after").priority(1), move |cx| {
        *g2.lock().unwrap() = Some(*m2.lock(cx).unwrap());
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(*got.lock().unwrap(), Some(1), "the critical section ran to its end");
    assert_eq!(segments(&out)[0], "late:0-3:exit");
    assert_eq!(common::markers(&out, tempi::trace::TraceKind::JobAbort), ["late#0@3"]);
    assert_eq!(out.thread_named("late").unwrap().stats.aborted, 1);
}

#[test]
fn lock_kill_and_shutdown_leave_no_lock_held() {
    // A thread still inside a critical section when the run stops is unwound; its guard
    // releases the lock (and destructors run), with no panic.
    let mut rt = Runtime::simulated(1);
    let m = Arc::new(rt.create_mutex(0, LockSpec::new("m")).unwrap());
    let m1 = m.clone();
    rt.spawn(ThreadSpec::new("forever"), move |cx| {
        let _g = m1.lock(cx).unwrap();
        loop {
            cx.work(ms(1));
        }
    })
    .unwrap();
    let out = rt.run_until(Time::from_millis(5)).unwrap();
    assert_eq!(out.threads[0].outcome, None);
}

#[test]
fn lock_pcp_needs_a_ceiling_and_unknown_protocols_are_errors() {
    // Refused at creation, not when the run starts.
    let mut rt = Runtime::simulated(1);
    let r = rt.create_mutex((), LockSpec::new("no-ceiling").protocol("pcp"));
    assert!(matches!(r, Err(tempi::Error::InvalidConfig(m)) if m.contains("ceiling")));
    let r = rt.create_mutex((), LockSpec::new("odd").protocol("spin"));
    assert!(matches!(r, Err(tempi::Error::InvalidConfig(m)) if m.contains("spin")));
    rt.run().unwrap();
}

#[test]
fn lock_ceiling_from_declared_users() {
    let mut rt = Runtime::simulated(1);
    let hi = rt.spawn(ThreadSpec::new("hi").priority(7), |_| {}).unwrap();
    let lo = rt.spawn(ThreadSpec::new("lo").priority(2), |_| {}).unwrap();
    let m = Arc::new(rt.create_mutex((), LockSpec::new("m").protocol("srp").users(&[hi, lo])).unwrap());
    let seen = Arc::new(StdMutex::new(None));
    let (m1, s) = (m.clone(), seen.clone());
    rt.spawn(ThreadSpec::new("user").priority(1), move |cx| {
        let _g = m1.lock(cx).unwrap();
        *s.lock().unwrap() = Some(cx.urgency());
    })
    .unwrap();
    rt.run().unwrap();
    assert_eq!(*seen.lock().unwrap(), Some(tempi::policy::sched::Urgency::from_priority(7)));
}

#[test]
fn lock_simulated_costs_are_charged_as_cpu_time() {
    let costs = tempi::Costs {
        context_switch: us(100),
        lock_acquired: us(20),
        lock_not_acquired: us(30),
        unlock: us(10),
        abort: std::time::Duration::ZERO,
    };
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(tempi::Config::new(1).costs(costs)).unwrap();
    let m = Arc::new(rt.create_mutex((), LockSpec::new("m")).unwrap());
    let m1 = m.clone();
    rt.spawn(ThreadSpec::new("low").priority(1), move |cx| {
        let _g = m1.lock(cx).unwrap(); // +20 µs
        cx.work(ms(1));
    }) // unlock +10 µs
    .unwrap();
    let m2 = m.clone();
    rt.spawn(at_us(500).priority(2), move |cx| {
        let _g = m2.lock(cx).unwrap(); // refused: +30 µs, waits; later acquired: +20 µs
        cx.work(ms(1));
    })
    .unwrap();
    let out = rt.run().unwrap();
    let cpu = |n: usize| out.threads[n].stats.cpu_time;
    // low: lock 20, work 1000, unlock 10, and two switches back in (at 0.63 after `high`
    // blocked, at 2.39 after `high` ended): 1230.
    assert_eq!(cpu(0), us(1_230));
    // high: switch in at 0.5 (100), refused attempt (30), switch in at 1.26 once the unlock
    // is paid (100), lock 20, work 1000, unlock 10: 1260.
    assert_eq!(cpu(1), us(1_260));
    assert_eq!(out.end, Time::from_micros(2_490));
}
