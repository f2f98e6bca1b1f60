//! RCS: a restartable section aborted right after a semaphore unit was granted inside it (the
//! owner has the unit but has not run since) is restarted, and the unit it never saw goes back
//! to the semaphore. Virtual time, fixed priority, exact timelines.

use crate::common;

use std::sync::{Arc, Mutex as StdMutex};

use common::ms;
use tempi::sync::{LockError, LockSpec, SemSpec};
use tempi::{Runtime, ThreadSpec, Time};

/// A one-job thread `name` released at `t` ms.
fn at(name: &str, t: u64) -> ThreadSpec {
    ThreadSpec::new(name).periodic(ms(1000)).phase(ms(t)).max_jobs(1)
}

type Log = Arc<StdMutex<Vec<(&'static str, Time, u32)>>>;

/// `low` enters a restartable section on `a` at 0 and waits inside it for a unit of `s`
/// (none free). `mid`, released at 1, vacates a unit, which goes to `low`, and works on to 3.
/// `high`, released at 2, asks for `a` while `low` has the unit but has not run since: that
/// aborts `low`'s section. With `rival`, a thread more urgent than all of them also waits for
/// a unit of `s` from 1 (behind `low`).
fn procure_then_abort(rival: bool) -> Vec<(&'static str, Time, u32)> {
    let mut rt = Runtime::simulated(1);
    let a = Arc::new(rt.create_mutex(0u32, LockSpec::new("a").protocol("rcs")).unwrap());
    let s = Arc::new(rt.create_semaphore(SemSpec::new("s", 0)).unwrap());
    let log: Log = Arc::default();
    let (a1, s1, log1) = (a.clone(), s.clone(), log.clone());
    rt.spawn(at("low", 0).priority(1), move |cx| {
        a1.critical(cx, |n| {
            log1.lock().unwrap().push(("low enters", cx.now(), *n));
            s1.procure(cx).unwrap(); // granted at 1; `high` aborts the section at 2
            log1.lock().unwrap().push(("low has a unit", cx.now(), *n));
            cx.work(ms(2));
            s1.vacate(cx).unwrap();
            *n += 1;
            log1.lock().unwrap().push(("low leaves", cx.now(), *n));
        })
        .unwrap();
    })
    .unwrap();
    let (s2, log2) = (s.clone(), log.clone());
    rt.spawn(at("mid", 1).priority(2), move |cx| {
        s2.vacate(cx).unwrap();
        log2.lock().unwrap().push(("mid vacates", cx.now(), 0));
        cx.work(ms(2));
    })
    .unwrap();
    if rival {
        let (s3, log3) = (s.clone(), log.clone());
        rt.spawn(at("rival", 1).priority(4), move |cx| {
            s3.procure(cx).unwrap();
            log3.lock().unwrap().push(("rival has a unit", cx.now(), 0));
            s3.vacate(cx).unwrap();
        })
        .unwrap();
    }
    let (s4, log4) = (s.clone(), log.clone());
    rt.spawn(at("high", 2).priority(3), move |cx| {
        let outer = a.lock(cx).unwrap();
        log4.lock().unwrap().push(("high holds a", cx.now(), *outer));
        let free = s4.try_procure(cx).is_ok();
        log4.lock().unwrap().push(("high takes a unit", cx.now(), u32::from(free)));
        if free {
            s4.vacate(cx).unwrap();
        }
    })
    .unwrap();
    // Once everyone is done: the units left in `s` (one was vacated by `mid`; no one keeps one).
    let log5 = log.clone();
    rt.spawn(at("check", 10).priority(0), move |cx| {
        let mut units = 0;
        while s.try_procure(cx).is_ok() {
            units += 1;
        }
        assert_eq!(s.try_procure(cx), Err(LockError::WouldBlock));
        log5.lock().unwrap().push(("units left", cx.now(), units));
    })
    .unwrap();
    let out = rt.run().unwrap();
    for t in &out.threads {
        assert_eq!((t.stats.completed, t.stats.aborted), (1, 0), "{}: {:?}", t.name, t.outcome);
    }
    Arc::try_unwrap(log).unwrap().into_inner().unwrap()
}

#[test]
fn lock_rcs_restart_after_a_procure_gives_the_unit_back() {
    assert_eq!(
        procure_then_abort(false),
        [
            ("low enters", Time::ZERO, 0),
            ("mid vacates", Time::from_millis(1), 0),
            // `low` never sees the unit: its section is abandoned, the unit goes back to `s`
            // and `a` to `high` at once.
            ("high holds a", Time::from_millis(2), 0),
            ("high takes a unit", Time::from_millis(2), 1),
            // The section reruns from the start once `high` and `mid` are done, and finds the
            // unit `high` put back.
            ("low enters", Time::from_millis(3), 0),
            ("low has a unit", Time::from_millis(3), 0),
            ("low leaves", Time::from_millis(5), 1),
            ("units left", Time::from_millis(10), 1),
        ]
    );
}

#[test]
fn lock_rcs_restart_after_a_procure_hands_the_unit_to_the_next_waiter() {
    assert_eq!(
        procure_then_abort(true),
        [
            ("low enters", Time::ZERO, 0),
            ("mid vacates", Time::from_millis(1), 0),
            // The unit `low` gives back goes to the next waiter, more urgent than `low` (which
            // runs at `high`'s urgency while it abandons its section): it runs first.
            ("rival has a unit", Time::from_millis(2), 0),
            ("high holds a", Time::from_millis(2), 0),
            ("high takes a unit", Time::from_millis(2), 1),
            ("low enters", Time::from_millis(3), 0),
            ("low has a unit", Time::from_millis(3), 0),
            ("low leaves", Time::from_millis(5), 1),
            ("units left", Time::from_millis(10), 1),
        ]
    );
}
