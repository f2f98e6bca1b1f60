//! Condition variables and semaphores: waiter order under each queue policy, exact timeouts.
//! Scheduler: fixed priority (edf for the deadline queue).

use crate::common;

use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use common::{ms, us};
use tempi::policy::sched::Edf;
use tempi::sync::{LockError, LockSpec, SemSpec};
use tempi::{Runtime, ThreadSpec, Time};

fn at_us(t: u64) -> ThreadSpec {
    ThreadSpec::new("x").periodic(ms(1000)).phase(us(t)).max_jobs(1)
}

type Log = Arc<StdMutex<Vec<String>>>;

#[test]
fn lock_condvar_wakes_the_most_urgent_waiter_first() {
    let log: Log = Arc::default();
    let mut rt = Runtime::simulated(1);
    let m = Arc::new(rt.create_mutex(0u32, LockSpec::new("m")).unwrap());
    let cv = Arc::new(rt.create_condvar(0).unwrap());
    // Waiters arrive in the order 2, 5, 3 (priorities); signals come one by one later.
    for (i, prio) in [2, 5, 3].into_iter().enumerate() {
        let (m, cv, log) = (m.clone(), cv.clone(), log.clone());
        rt.spawn(at_us(i as u64 * 100).priority(prio), move |cx| {
            let mut g = m.lock(cx).unwrap();
            while *g == 0 {
                g = cv.wait(cx, g).unwrap();
            }
            *g -= 1;
            log.lock().unwrap().push(format!("p{prio}@{}", cx.now()));
        })
        .unwrap();
    }
    let (m2, cv2) = (m.clone(), cv.clone());
    rt.spawn(at_us(1000).priority(1), move |cx| {
        for _ in 0..3 {
            *m2.lock(cx).unwrap() += 1;
            cv2.notify_one(cx).unwrap();
            cx.work(ms(1));
        }
    })
    .unwrap();
    rt.run().unwrap();
    assert_eq!(*log.lock().unwrap(), ["p5@1.000000ms", "p3@2.000000ms", "p2@3.000000ms"]);
}

#[test]
fn lock_condvar_notify_all_and_timeout() {
    let log: Log = Arc::default();
    let mut rt = Runtime::simulated(1);
    let m = Arc::new(rt.create_mutex((), LockSpec::new("m")).unwrap());
    let cv = Arc::new(rt.create_condvar(0).unwrap());
    for (i, timeout) in [None, Some(ms(2)), None].into_iter().enumerate() {
        let (m, cv, log) = (m.clone(), cv.clone(), log.clone());
        rt.spawn(at_us(0).priority(3 - i as i32), move |cx| {
            let g = m.lock(cx).unwrap();
            let (_g, timed_out) = cv.wait_timeout(cx, g, timeout).unwrap();
            log.lock().unwrap().push(format!("w{i} {timed_out} @{}", cx.now()));
        })
        .unwrap();
    }
    let cv2 = cv.clone();
    rt.spawn(at_us(5000), move |cx| cv2.notify_all(cx).unwrap()).unwrap();
    rt.run().unwrap();
    assert_eq!(*log.lock().unwrap(), ["w1 true @2.000000ms", "w0 false @5.000000ms", "w2 false @5.000000ms"]);
}

/// Three waiters on an empty semaphore, arriving in the order given; one unit vacated per
/// millisecond from 10 ms by the least urgent thread. Returns who got a unit, in order.
fn semaphore_order(queue: &str, edf: bool) -> Vec<String> {
    let log: Log = Arc::default();
    let mut rt = Runtime::simulated(1);
    if edf {
        rt.set_scheduler(|| Box::new(Edf::new()));
    }
    let s = Arc::new(rt.create_semaphore(SemSpec::new("s", 0).queue_name(queue)).unwrap());
    // (name, priority, relative deadline)
    for (i, (name, prio, d)) in [("a", 1, 50), ("b", 3, 20), ("c", 2, 30)].into_iter().enumerate() {
        let (s, log) = (s.clone(), log.clone());
        let spec = ThreadSpec::new(name)
            .periodic(ms(1000))
            .phase(us(i as u64 * 100))
            .max_jobs(1)
            .priority(prio)
            .deadline(ms(d));
        rt.spawn(spec, move |cx| {
            s.procure(cx).unwrap();
            log.lock().unwrap().push(name.to_string());
        })
        .unwrap();
    }
    let s2 = s.clone();
    // The giver is the least urgent: each unit's new owner runs (and logs) at once.
    rt.spawn(
        ThreadSpec::new("giver").periodic(ms(1000)).phase(ms(10)).max_jobs(1).priority(0).deadline(ms(500)),
        move |cx| {
            for _ in 0..3 {
                s2.vacate(cx).unwrap();
                cx.work(ms(1));
            }
        },
    )
    .unwrap();
    rt.run().unwrap();

    log.lock().unwrap().clone()
}

#[test]
fn lock_semaphore_order_under_each_queue_policy() {
    assert_eq!(semaphore_order("fifo", false), ["a", "b", "c"]);
    assert_eq!(semaphore_order("urgency", false), ["b", "c", "a"]);
    assert_eq!(semaphore_order("deadline", true), ["b", "c", "a"]);
}

#[test]
fn lock_semaphore_counts_and_times_out_exactly() {
    let log: Log = Arc::default();
    let mut rt = Runtime::simulated(1);
    let s = Arc::new(rt.create_semaphore(SemSpec::new("two", 2)).unwrap());
    let (s1, l1) = (s.clone(), log.clone());
    rt.spawn(ThreadSpec::new("t"), move |cx| {
        s1.procure(cx).unwrap();
        s1.procure(cx).unwrap();
        assert_eq!(s1.try_procure(cx), Err(LockError::WouldBlock));
        let r = s1.procure_timeout(cx, Duration::from_micros(1500));
        l1.lock().unwrap().push(format!("{r:?} @{}", cx.now()));
        s1.vacate(cx).unwrap();
        assert_eq!(s1.try_procure(cx), Ok(()));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(*log.lock().unwrap(), ["Err(Timeout) @1.500000ms"]);
    assert_eq!(out.end, Time::from_micros(1500));
}
