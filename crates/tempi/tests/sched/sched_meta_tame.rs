//! FREE JAZZ's `tame_prio_inv` for a process, in virtual time: a scheduler that hears of CALL
//! and PROCURE only for tamed threads (`Events::TAMED_ONLY`, `WaitInheritance::for_tamed`)
//! lends nothing for an untamed thread's blocking and the waiter's urgency for a tamed one's,
//! with the flag switched as a scope (`Ctx::tame_prio_inv`) or given at spawn
//! (`ThreadSpec::tame_prio_inv`); and a handler invoked by a tamed thread inside a critical
//! section runs with preemption off. Exact urgencies and schedules.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{ms, segments};
use tempi::message::{Handler, Message};
use tempi::policy::sched::WaitInheritance;
use tempi::sync::{LockSpec, SemSpec};
use tempi::{Runtime, ThreadSpec, Time};

type Log = Arc<Mutex<Vec<String>>>;

fn note(log: &Log, cx: &tempi::Ctx<'_>, what: &str) {
    log.lock().unwrap().push(format!("{what}@{}:{}", cx.now().as_nanos() / 1_000_000, cx.urgency().0));
}

/// `low` (1) holds the unit from 0 to 2 and from 3 to 5; `high` (9) blocks for it at 1 with
/// `tame_prio_inv` off and at 4 with it on (switched as a scope around the procure and the
/// section). Under `for_tamed` only the second blocking lends 9; under plain inheritance both
/// do. Returns `low`'s notes and `high`'s view of the flag.
fn two_blockings(for_tamed: bool, tamed_from_start: bool) -> (Vec<String>, Vec<bool>) {
    let mut rt = Runtime::simulated(1);
    if for_tamed {
        rt.stack_scheduler(|prev| Box::new(WaitInheritance::for_tamed(prev)));
    } else {
        rt.stack_scheduler(|prev| Box::new(WaitInheritance::new(prev)));
    }
    let s = Arc::new(rt.create_semaphore(SemSpec::new("s", 1)).unwrap());
    let log: Log = Arc::default();
    let flags = Arc::new(Mutex::new(Vec::new()));
    let (s1, s2, l, f) = (s.clone(), s.clone(), log.clone(), flags.clone());
    rt.spawn(ThreadSpec::new("low").priority(1), move |cx| {
        s1.procure(cx).unwrap();
        cx.work(ms(2));
        note(&l, cx, "first");
        s1.vacate(cx).unwrap();
        s1.procure(cx).unwrap();
        cx.work(ms(2));
        note(&l, cx, "second");
        s1.vacate(cx).unwrap();
        note(&l, cx, "after");
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("high").priority(9).tame_prio_inv(tamed_from_start), move |cx| {
        cx.sleep(ms(1));
        s2.procure(cx).unwrap();
        cx.work(ms(1));
        s2.vacate(cx).unwrap();
        cx.sleep_until(Time::from_millis(4));
        let old = cx.tame_prio_inv(true);
        s2.procure(cx).unwrap();
        cx.work(ms(1));
        s2.vacate(cx).unwrap();
        let was = cx.tame_prio_inv(old);
        f.lock().unwrap().extend([old, was]);
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(
        segments(&out),
        [
            "high:0-0:sleep",
            "low:0-1:preempt",
            "high:1-1:block",
            "low:1-2:preempt",
            "high:2-3:sleep",
            "low:3-4:preempt",
            "high:4-4:block",
            "low:4-5:preempt",
            "high:5-6:exit",
            "low:6-6:exit"
        ]
    );
    let notes = log.lock().unwrap().clone();
    let flags = flags.lock().unwrap().clone();
    (notes, flags)
}

#[test]
fn only_a_tamed_threads_blocking_lends_under_for_tamed() {
    let (notes, flags) = two_blockings(true, false);
    assert_eq!(notes, ["first@2:1", "second@5:9", "after@6:1"]);
    assert_eq!(flags, [false, true], "off before the scope, on inside it");
}

#[test]
fn a_thread_tamed_from_its_spawn_lends_at_every_blocking_under_for_tamed() {
    let (notes, flags) = two_blockings(true, true);
    assert_eq!(notes, ["first@2:9", "second@5:9", "after@6:1"]);
    assert_eq!(flags, [true, true]);
}

#[test]
fn plain_inheritance_hears_of_every_blocking_whatever_the_flag() {
    let (notes, _) = two_blockings(false, false);
    assert_eq!(notes, ["first@2:9", "second@5:9", "after@6:1"]);
}

/// `low` (1) locks a mutex (basic priority inheritance, preemptible) and, inside, calls a
/// handler that computes 3 ms, then computes 1 ms and unlocks; `high` (9) wakes at 1 ms for
/// 1 ms. Untamed, `high` preempts the handler at 1. With `tame_prio_inv` switched on inside
/// the critical section, the handler runs with preemption off: `high` waits until the
/// handler has drained, at 3, and the thread's own setting (preemptible) is back after it.
#[test]
fn a_handler_invoked_by_a_tamed_thread_inside_a_lock_runs_without_preemption() {
    let mut runs = Vec::new();
    for tame in [false, true] {
        let mut rt = Runtime::simulated(1);
        let m = Arc::new(rt.create_mutex(0u32, LockSpec::new("m").protocol("bpi")).unwrap());
        let h = Handler::new("slow", 0, 1, |hcx, msg| {
            hcx.work(ms(3));
            hcx.reply(msg);
        });
        let preemptible_after = Arc::new(Mutex::new(None));
        let p = preemptible_after.clone();
        rt.spawn(ThreadSpec::new("low").priority(1), move |cx| {
            let mut g = m.lock(cx).unwrap();
            let old = cx.tame_prio_inv(tame);
            *g += h.call(cx, Message::new(1, 2, 0)).unwrap().value as u32;
            cx.tame_prio_inv(old);
            let on = cx.preemption(true);
            *p.lock().unwrap() = Some(on);
            cx.work(ms(1));
            drop(g);
        })
        .unwrap();
        rt.spawn(ThreadSpec::new("high").priority(9), |cx| {
            cx.sleep(ms(1));
            cx.work(ms(1));
        })
        .unwrap();
        runs.push(segments(&rt.run().unwrap()));
        assert_eq!(*preemptible_after.lock().unwrap(), Some(true));
    }
    assert_eq!(runs[0], ["high:0-0:sleep", "low:0-1:preempt", "high:1-2:exit", "low:2-5:exit"]);
    assert_eq!(runs[1], ["high:0-0:sleep", "low:0-3:preempt", "high:3-4:exit", "low:4-5:exit"]);
}
