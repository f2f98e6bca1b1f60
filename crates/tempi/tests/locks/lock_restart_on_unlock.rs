//! RCS: a restartable section aborted at the moment its owner unlocks an inner lock is
//! restarted, not carried on. Virtual time, fixed priority, exact timelines.

use crate::common;

use std::sync::{Arc, Mutex as StdMutex};

use common::ms;
use tempi::sync::LockSpec;
use tempi::{Runtime, ThreadSpec, Time};

/// A one-job thread released at `t` ms.
fn at(t: u64) -> ThreadSpec {
    ThreadSpec::new("x").periodic(ms(1000)).phase(ms(t)).max_jobs(1)
}

type Log = Arc<StdMutex<Vec<(&'static str, Time, u32)>>>;

/// `low` enters a restartable section on `a` at 0 and takes `b` inside it for 2 ms; `high`,
/// released at 1, waits for `b`, gets it when `low` unlocks it at 2, and at once asks for `a`,
/// which aborts `low`'s section while `low` is still in the unlock it was preempted in.
fn inner_unlock_then_abort() -> Vec<(&'static str, Time, u32)> {
    let mut rt = Runtime::simulated(1);
    let a = Arc::new(rt.create_mutex(0u32, LockSpec::new("a").protocol("rcs")).unwrap());
    let b = Arc::new(rt.create_mutex((), LockSpec::new("b").protocol("bpi")).unwrap());
    let log: Log = Arc::default();
    let (a1, b1, log1) = (a.clone(), b.clone(), log.clone());
    rt.spawn(at(0).priority(1), move |cx| {
        a1.critical(cx, |n| {
            log1.lock().unwrap().push(("low enters", cx.now(), *n));
            let inner = b1.lock(cx).unwrap();
            cx.work(ms(2));
            drop(inner); // `high` takes `b` here and aborts this section
            cx.work(ms(2));
            *n += 1;
            log1.lock().unwrap().push(("low leaves", cx.now(), *n));
        })
        .unwrap();
    })
    .unwrap();
    let log2 = log.clone();
    rt.spawn(at(1).priority(3), move |cx| {
        let _inner = b.lock(cx).unwrap();
        log2.lock().unwrap().push(("high holds b", cx.now(), 0));
        let outer = a.lock(cx).unwrap();
        log2.lock().unwrap().push(("high holds a", cx.now(), *outer));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(out.threads.iter().all(|t| t.stats.completed == 1 && t.stats.aborted == 0));
    Arc::try_unwrap(log).unwrap().into_inner().unwrap()
}

#[test]
fn lock_rcs_restart_answering_an_inner_unlock_restarts_the_section() {
    assert_eq!(
        inner_unlock_then_abort(),
        [
            ("low enters", Time::ZERO, 0),
            ("high holds b", Time::from_millis(2), 0),
            // The section is abandoned at once: its data is put back and `a` goes to `high`
            // without the 2 ms left of the section.
            ("high holds a", Time::from_millis(2), 0),
            // The section reruns from the start once `high` is done.
            ("low enters", Time::from_millis(2), 0),
            ("low leaves", Time::from_millis(6), 1),
        ]
    );
}

/// As above, but `low`'s next call after the inner unlock asks for a third lock, `c`: the
/// restart answers that call, and `c` is not left held by the abandoned section.
#[test]
fn lock_rcs_restart_waiting_for_an_unlock_answers_the_next_lock_request() {
    let mut rt = Runtime::simulated(1);
    let a = Arc::new(rt.create_mutex(0u32, LockSpec::new("a").protocol("rcs")).unwrap());
    let b = Arc::new(rt.create_mutex((), LockSpec::new("b").protocol("bpi")).unwrap());
    let c = Arc::new(rt.create_mutex((), LockSpec::new("c").protocol("bpi")).unwrap());
    let log: Log = Arc::default();
    let (a1, b1, c1, log1) = (a.clone(), b.clone(), c.clone(), log.clone());
    rt.spawn(at(0).priority(1), move |cx| {
        a1.critical(cx, |n| {
            log1.lock().unwrap().push(("low enters", cx.now(), *n));
            let inner = b1.lock(cx).unwrap();
            cx.work(ms(2));
            drop(inner);
            let _third = c1.lock(cx).unwrap();
            cx.work(ms(2));
            *n += 1;
            log1.lock().unwrap().push(("low leaves", cx.now(), *n));
        })
        .unwrap();
    })
    .unwrap();
    let log2 = log.clone();
    rt.spawn(at(1).priority(3), move |cx| {
        let _inner = b.lock(cx).unwrap();
        let outer = a.lock(cx).unwrap();
        log2.lock().unwrap().push(("high holds a", cx.now(), *outer));
        let third_free = c.try_lock(cx).is_ok();
        log2.lock().unwrap().push(("high takes c", cx.now(), u32::from(third_free)));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(out.threads.iter().all(|t| t.stats.completed == 1 && t.stats.aborted == 0));
    assert_eq!(
        *log.lock().unwrap(),
        [
            ("low enters", Time::ZERO, 0),
            ("high holds a", Time::from_millis(2), 0),
            ("high takes c", Time::from_millis(2), 1),
            ("low enters", Time::from_millis(2), 0),
            ("low leaves", Time::from_millis(6), 1),
        ]
    );
}
