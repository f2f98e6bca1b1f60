//! An interrupt pending for a thread waits for a reply that may carry it: not the answer to
//! an unlock (it comes back into a destructor), and, for one that ends the job or the thread,
//! not while the thread is inside a critical section. Virtual time, fixed priority, exact
//! timelines.

use crate::common;

use std::sync::{Arc, Mutex as StdMutex};

use common::ms;
use tempi::sync::LockSpec;
use tempi::{Runtime, ThreadOutcome, ThreadSpec, Time};

type Log = Arc<StdMutex<Vec<(&'static str, Time)>>>;

/// `low` (one job, abandoned 3 ms after its release) holds `l` from 0 to 2, when `high`
/// takes it from the unlock and preempts `low`. `low`'s job is abandoned at 3 while it
/// waits, ready, for the answer to that unlock: its thread is to end. When it runs again at
/// 4, it takes `m` and works in it for 1 ms: the end of its thread waits for `m` to be
/// released, and lands on its next call after it.
#[test]
fn kernel_pending_end_waits_for_the_unlock_answer_and_the_critical_section() {
    let mut rt = Runtime::simulated(1);
    let l = Arc::new(rt.create_mutex((), LockSpec::new("l").protocol("bpi")).unwrap());
    let m = Arc::new(rt.create_mutex((), LockSpec::new("m").protocol("bp")).unwrap());
    let log: Log = Arc::default();
    let (l1, log1) = (l.clone(), log.clone());
    let low = rt
        .spawn(ThreadSpec::new("low").periodic(ms(100)).max_jobs(1).priority(1).abort_after(ms(3)), move |cx| {
            let held = l1.lock(cx).unwrap();
            log1.lock().unwrap().push(("low holds l", cx.now()));
            cx.work(ms(2));
            drop(held);
            let inner = m.lock(cx).unwrap();
            log1.lock().unwrap().push(("low holds m", cx.now()));
            cx.work(ms(1));
            log1.lock().unwrap().push(("low leaves m", cx.now()));
            drop(inner);
            cx.work(ms(1));
            log1.lock().unwrap().push(("low carries on", cx.now()));
        })
        .unwrap();
    let log2 = log.clone();
    let high = rt
        .spawn(ThreadSpec::new("high").periodic(ms(100)).phase(ms(1)).max_jobs(1).priority(3), move |cx| {
            let _held = l.lock(cx).unwrap();
            log2.lock().unwrap().push(("high holds l", cx.now()));
            cx.work(ms(2));
        })
        .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            ("low holds l", Time::ZERO),
            ("high holds l", Time::from_millis(2)),
            ("low holds m", Time::from_millis(4)),
            ("low leaves m", Time::from_millis(5)),
        ]
    );
    let low = out.thread(low).unwrap();
    assert_eq!((low.stats.completed, low.stats.aborted), (0, 1));
    assert_eq!(low.outcome, Some(ThreadOutcome::Completed));
    assert_eq!(out.thread(high).unwrap().stats.completed, 1);
    assert_eq!(out.end, Time::from_millis(5));
}
