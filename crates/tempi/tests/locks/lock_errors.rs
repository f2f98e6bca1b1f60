//! Error paths of the synchronisation objects: no error leaves a lock held, specs are checked
//! at creation, a leaked guard is handled alike in both tracing modes, cross-CPU refusals
//! name both CPUs, counts and clocks saturate instead of wrapping, limits are errors.

use crate::common;

use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use common::ms;
use tempi::sync::{LockError, LockSpec, SemSpec};
use tempi::{Config, Error, Runtime, ThreadOutcome, ThreadSpec, Time};

type Sim = Runtime<tempi::clock::VirtualClock>;

/// A condition wait on a condition variable of another CPU is not refused (virtual time: one
/// kernel queues waiters of every CPU): it times out at its instant with the lock held again,
/// and the lock is released again by the next wait.
#[test]
fn condvar_wait_on_another_cpu_times_out_holding_the_lock() {
    let mut rt = Runtime::simulated(2);
    let m = Arc::new(rt.create_mutex(0, LockSpec::new("m").cpu(0)).unwrap());
    let cv = Arc::new(rt.create_condvar(1).unwrap());
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let v = seen.clone();
    rt.spawn(ThreadSpec::new("t").cpu(0), move |cx| {
        let g = m.lock(cx).unwrap();
        let (g, timed_out) = cv.wait_timeout(cx, g, Some(ms(1))).unwrap();
        v.lock().unwrap().push((timed_out, cx.now(), m.try_lock(cx).err()));
        drop(g);
        v.lock().unwrap().push((false, cx.now(), m.try_lock(cx).err()));
    })
    .unwrap();
    rt.run().unwrap();
    let at = Time::from_millis(1);
    assert_eq!(*seen.lock().unwrap(), [(true, at, Some(LockError::AlreadyHeld)), (false, at, None)]);
}

/// The wait succeeds but the lock cannot be taken back (a thread panicked holding it): the
/// waiter gets the error and holds nothing.
#[test]
fn condvar_wait_that_cannot_relock_holds_nothing() {
    let mut rt = Runtime::simulated(1);
    let m = Arc::new(rt.create_mutex(0, LockSpec::new("m")).unwrap());
    let cv = Arc::new(rt.create_condvar(0).unwrap());
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let (m1, cv1, v) = (m.clone(), cv.clone(), seen.clone());
    rt.spawn(ThreadSpec::new("waiter").priority(2), move |cx| {
        let g = m1.lock(cx).unwrap();
        let r = cv1.wait(cx, g).err();
        v.lock().unwrap().push(r);
        // Not held: the next attempt is refused as poisoned, not as already held.
        v.lock().unwrap().push(m1.try_lock(cx).err());
        m1.clear_poison(cx).unwrap();
        v.lock().unwrap().push(m1.try_lock(cx).err());
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("crasher").priority(1), move |cx| {
        let _g = m.lock(cx).unwrap();
        cv.notify_one(cx).unwrap();
        panic!("while holding the lock");
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(*seen.lock().unwrap(), [Some(LockError::Poisoned), Some(LockError::Poisoned), None]);
    assert_eq!(out.thread_named("waiter").unwrap().outcome, Some(ThreadOutcome::Completed));
}

#[test]
fn specs_are_checked_at_creation() {
    let mut rt = Runtime::simulated(1);
    assert!(matches!(rt.create_mutex((), LockSpec::new("m").protocol("nope")), Err(Error::InvalidConfig(_))));
    assert!(matches!(rt.create_mutex((), LockSpec::new("m").protocol("pcp")), Err(Error::InvalidConfig(_))));
    assert!(matches!(rt.create_mutex((), LockSpec::new("m").protocol("srp")), Err(Error::InvalidConfig(_))));
    assert!(matches!(rt.create_semaphore(SemSpec::new("s", 1).queue_name("nope")), Err(Error::InvalidConfig(_))));
    let t = rt.spawn(ThreadSpec::new("t"), |_| {}).unwrap();
    let (a, b) = (rt.create_set("a", 0).unwrap(), rt.create_set("b", 0).unwrap());
    rt.add_to_set(a, t).unwrap();
    assert_eq!(rt.add_to_set(b, t), Err(Error::AlreadyInSet { thread: t, set: a }));
    assert_eq!(rt.add_to_set(a, t), Err(Error::AlreadyInSet { thread: t, set: a }));
    // What was refused left nothing behind: the run starts.
    assert!(rt.run().is_ok());

    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("t"), |cx| {
        assert!(matches!(cx.create_mutex((), LockSpec::new("m").protocol("nope")), Err(Error::InvalidConfig(_))));
        assert!(matches!(cx.create_mutex((), LockSpec::new("m").protocol("pcp")), Err(Error::InvalidConfig(_))));
        assert!(matches!(cx.create_semaphore(SemSpec::new("s", 1).queue_name("x")), Err(Error::InvalidConfig(_))));
    })
    .unwrap();
    assert_eq!(rt.run().unwrap().threads[0].outcome, Some(ThreadOutcome::Completed));
}

/// A guard given to `mem::forget` holds the lock until its job ends; then the lock is
/// released and poisoned. The same with tracing on (every lock through the kernel) and off
/// (BP and BPI free locks taken on the fast path).
fn leaked_guard(protocol: &'static str, tracing: bool) -> Vec<Result<u32, LockError>> {
    let config = Config::new(1).trace_capacity(if tracing { 1000 } else { 0 });
    let mut rt = Sim::new(config).unwrap();
    let m = Arc::new(rt.create_mutex(0u32, LockSpec::new("m").protocol(protocol)).unwrap());
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let (m1, v1) = (m.clone(), seen.clone());
    // Two jobs: the first leaks its guard, the second finds the lock poisoned.
    rt.spawn(ThreadSpec::new("leaker").priority(2).periodic(ms(10)).max_jobs(2), move |cx| {
        if cx.job().number == 0 {
            let mut g = m1.lock(cx).unwrap();
            *g += 1;
            std::mem::forget(g);
            // Still held until the job ends.
            v1.lock().unwrap().push(m1.try_lock(cx).map(|_| 0));
        } else {
            v1.lock().unwrap().push(m1.lock(cx).map(|g| *g));
        }
    })
    .unwrap();
    let v2 = seen.clone();
    rt.spawn(ThreadSpec::new("other").priority(1).periodic(ms(10)).phase(ms(1)).max_jobs(1), move |cx| {
        v2.lock().unwrap().push(m.lock(cx).map(|g| *g));
        m.clear_poison(cx).unwrap();
        v2.lock().unwrap().push(m.lock(cx).map(|g| *g));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)));

    seen.lock().unwrap().clone()
}

#[test]
fn leaked_guard_is_released_poisoned_at_job_end_in_both_tracing_modes() {
    let want = vec![Err(LockError::AlreadyHeld), Err(LockError::Poisoned), Ok(1), Ok(1)];
    // BP and BPI take a free lock on the fast path when tracing is off; KM never does.
    for protocol in ["bpi", "bp", "km"] {
        for tracing in [false, true] {
            assert_eq!(leaked_guard(protocol, tracing), want, "{protocol}, tracing {tracing}");
        }
    }
}

/// A one-shot thread that leaks a guard ends; the lock is released poisoned, in both modes.
#[test]
fn leaked_guard_of_an_ended_thread_poisons_in_both_tracing_modes() {
    for tracing in [false, true] {
        let mut rt = Sim::new(Config::new(1).trace_capacity(if tracing { 1000 } else { 0 })).unwrap();
        let m = Arc::new(rt.create_mutex((), LockSpec::new("m")).unwrap());
        let m1 = m.clone();
        rt.spawn(ThreadSpec::new("leaker").priority(2), move |cx| std::mem::forget(m1.lock(cx).unwrap())).unwrap();
        let seen = Arc::new(StdMutex::new(None));
        let s = seen.clone();
        rt.spawn(ThreadSpec::new("next").priority(1), move |cx| *s.lock().unwrap() = Some(m.lock(cx).err())).unwrap();
        rt.run().unwrap();
        assert_eq!(*seen.lock().unwrap(), Some(Some(LockError::Poisoned)), "tracing {tracing}");
    }
}

/// In real time, locking a single-CPU mutex of another CPU is refused with both CPU numbers;
/// joining and releasing a thread of another CPU, notifying its condition variables, giving
/// its semaphore units back and taking them go through its request queue.
#[test]
fn cross_cpu_refusals_name_both_cpus_in_real_time() {
    let mut rt = Runtime::<tempi::clock::RealClock>::new(Config::new(2).pin(false)).unwrap();
    let target = rt.spawn(ThreadSpec::new("target").cpu(0).sporadic(Duration::ZERO).max_jobs(1), |_| {}).unwrap();
    let s = Arc::new(rt.create_semaphore(SemSpec::new("s", 0).cpu(0)).unwrap());
    let cv = Arc::new(rt.create_condvar(0).unwrap());
    let m = Arc::new(rt.create_mutex((), LockSpec::new("m").cpu(0)).unwrap());
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let v = seen.clone();
    let s1 = s.clone();
    rt.spawn(ThreadSpec::new("caller").cpu(1), move |cx| {
        let mut v = v.lock().unwrap();
        v.push(format!("{:?}", cx.join(target)));
        v.push(format!("{:?}", cx.release(target)));
        v.push(format!("{:?}", s1.vacate(cx)));
        v.push(format!("{:?}", s1.try_procure(cx)));
        v.push(format!("{:?}", cv.notify_one(cx)));
        v.push(format!("{:?}", cv.notify_all(cx)));
        v.push(format!("{:?}", m.try_lock(cx).map(|_| ())));
    })
    .unwrap();
    // Let the target end, so the run ends.
    rt.spawn(ThreadSpec::new("local").cpu(0), move |cx| {
        cx.release(target).unwrap();
        s.vacate(cx).unwrap();
    })
    .unwrap();
    rt.run_until(Time::from_millis(200)).unwrap();
    let e = "Err(CrossCpu { from: 1, to: 0 })";
    // The join waits for the target to end; the release after its end is posted, then dropped.
    // The unit given back reaches the semaphore before the request to take one (one queue,
    // first in first out), so the take finds it.
    assert_eq!(*seen.lock().unwrap(), ["Ok(Completed)", "Ok(())", "Ok(())", "Ok(())", "Ok(())", "Ok(())", e]);
}

#[test]
fn cross_cpu_notify_and_vacate_work_in_virtual_time() {
    let mut rt = Runtime::simulated(2);
    let s = Arc::new(rt.create_semaphore(SemSpec::new("s", 0).cpu(0)).unwrap());
    let m = Arc::new(rt.create_mutex(false, LockSpec::new("m").cpu(0)).unwrap());
    let cv = Arc::new(rt.create_condvar(0).unwrap());
    let (s1, m1, cv1) = (s.clone(), m.clone(), cv.clone());
    rt.spawn(ThreadSpec::new("waiter").cpu(0), move |cx| {
        s1.procure(cx).unwrap();
        let mut g = m1.lock(cx).unwrap();
        while !*g {
            g = cv1.wait(cx, g).unwrap();
        }
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("other-cpu").cpu(1), move |cx| {
        cx.work(ms(1));
        s.vacate(cx).unwrap();
        cx.work(ms(1));
        cv.notify_all(cx).unwrap();
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("setter").cpu(0).periodic(ms(100)).phase(ms(3)).max_jobs(1), move |cx| {
        *m.lock(cx).unwrap() = true;
    })
    .unwrap();
    let out = rt.run_until(Time::from_millis(50)).unwrap();
    // The waiter got the unit at 1 ms; it waits for the flag, notified at 2 ms (still false)
    // and never again: it is still waiting when the run stops.
    assert_eq!(out.thread_named("other-cpu").unwrap().outcome, Some(ThreadOutcome::Completed));
}

#[test]
fn times_counts_and_clocks_saturate() {
    assert_eq!(Time::from_secs(u64::MAX), Time::MAX);
    assert_eq!(Time::from_millis(u64::MAX), Time::MAX);
    assert_eq!(Time::from_micros(u64::MAX), Time::MAX);
    assert_eq!(Time::from_secs(u64::MAX / 1_000_000_000 + 1), Time::MAX);
    assert_eq!(Time::from_secs(3) + Duration::MAX, Time::MAX);

    let mut rt = Runtime::simulated(1);
    let s = Arc::new(rt.create_semaphore(SemSpec::new("s", u64::MAX)).unwrap());
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let v = seen.clone();
    rt.spawn(ThreadSpec::new("t"), move |cx| {
        let mut v = v.lock().unwrap();
        v.push(format!("{:?}", s.vacate(cx)));
        v.push(format!("{:?}", s.try_procure(cx)));
        v.push(format!("{:?}", s.vacate(cx)));
        v.push(format!("{:?}", s.vacate(cx)));
        // A thread clock set to its end stays there.
        cx.set_thread_cpu_time(cx.id(), Duration::MAX).unwrap();
        cx.work(ms(1));
        v.push(format!("{:?}", cx.thread_cpu_time(cx.id())));
        let set = cx.create_set("s").unwrap();
        cx.add_to_set(set, cx.id()).unwrap();
        cx.set_set_cpu_time(set, Duration::MAX).unwrap();
        cx.set_budget(set, tempi::Budget::new(ms(5))).unwrap();
        cx.work(ms(1));
        v.push(format!("{:?}", cx.set_cpu_time(set)));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.threads[0].outcome, Some(ThreadOutcome::Completed));
    let max = format!("{:?}", Ok::<_, Error>(Duration::from_nanos(u64::MAX)));
    assert_eq!(
        *seen.lock().unwrap(),
        ["Err(Overflow)".to_string(), "Ok(())".into(), "Ok(())".into(), "Err(Overflow)".into(), max.clone(), max]
    );
}

#[test]
fn per_cpu_limits_are_errors_at_creation() {
    let mut rt = Sim::new(Config::new(1).max_locks(1).max_timers(1)).unwrap();
    rt.create_mutex((), LockSpec::new("a")).unwrap();
    assert!(matches!(rt.create_mutex((), LockSpec::new("b")), Err(Error::InvalidConfig(_))));
    rt.create_condvar(0).unwrap();
    assert!(matches!(rt.create_condvar(0), Err(Error::InvalidConfig(_))));
    rt.create_semaphore(SemSpec::new("a", 0)).unwrap();
    assert!(matches!(rt.create_semaphore(SemSpec::new("b", 0)), Err(Error::InvalidConfig(_))));
    rt.add_timer(tempi::TimerSpec::at(Time::from_millis(1)), |_| {}).unwrap();
    assert!(matches!(rt.add_timer(tempi::TimerSpec::at(Time::from_millis(1)), |_| {}), Err(Error::InvalidConfig(_))));
    rt.spawn(ThreadSpec::new("t"), |cx| {
        assert!(matches!(cx.create_mutex((), LockSpec::new("c")), Err(Error::InvalidConfig(_))));
        assert!(matches!(cx.create_condvar(), Err(Error::InvalidConfig(_))));
        assert!(matches!(cx.create_semaphore(SemSpec::new("c", 0)), Err(Error::InvalidConfig(_))));
    })
    .unwrap();
    assert_eq!(rt.run().unwrap().threads[0].outcome, Some(ThreadOutcome::Completed));
}
