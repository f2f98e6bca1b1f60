//! A handler whose holder the runtime unwinds (a kill or an abort of the thread whose stack it
//! runs on) is not poisoned, and what was queued there meanwhile is not stranded: once the
//! unwind is over, the oldest caller still waiting at the handler takes it over. Its call is
//! taken out of the queue and made again on its own stack, then the handler drains the rest
//! of its queue in order; a call the holder was serving when it was unwound is answered
//! `Unanswered`. Exact timelines in virtual time, and two real-time cases across CPUs.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::handlers::{logging, push, take, Log};
use common::{ms, segments};
use tempi::message::{Handler, Message};
use tempi::{Runtime, ThreadSpec};

fn at_ms(cx: &tempi::Ctx<'_>) -> u64 {
    cx.now().as_nanos() / 1_000_000
}

/// `low` (1) runs the handler from 0 ms for 4 ms. `high` (3) wakes at 1 ms, finds it busy,
/// queues a send (value 1) and a call (value 2), and waits. `killer` (4) kills `low` at 2 ms;
/// `low` is unwound out of the handler as it resumes. Then `high`, the oldest caller waiting,
/// takes the handler over: its call runs at 2 ms on its own stack, then the send it queued
/// before, at 3 ms; the reply reaches it at 4 ms. Nothing is left queued. The hand-over is
/// made as `low`'s unwind ends, before its end is handled: `high`, more urgent, runs first.
#[test]
fn the_oldest_waiting_caller_takes_over_a_handler_whose_holder_was_killed() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let h = logging(&log);
    let mut rt = Runtime::simulated(1);
    let (h1, h2) = (h.clone(), h.clone());
    let l1 = log.clone();
    let low = rt
        .spawn(ThreadSpec::new("low").priority(1), move |cx| {
            let _ = h1.call(cx, Message::new(1, 0, 0));
            push(&l1, format!("low back@{}", at_ms(cx)));
        })
        .unwrap();
    let l2 = log.clone();
    rt.spawn(ThreadSpec::new("high").priority(3), move |cx| {
        cx.sleep(ms(1));
        push(&l2, format!("high woke@{} busy {}", at_ms(cx), h2.is_busy()));
        h2.send(cx, Message::new(2, 1, 0)).unwrap();
        let a = h2.call(cx, Message::new(2, 2, 0)).unwrap();
        push(&l2, format!("high got {}@{}", a.value, at_ms(cx)));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("killer").priority(4), move |cx| {
        cx.sleep(ms(2));
        cx.kill(low).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&log), ["run 0@0", "high woke@1 busy true", "run 2@2", "run 1@3", "high got 20@4"]);
    assert_eq!(h.queued(), 0);
    assert!(!h.is_busy() && !h.is_poisoned());
    assert_eq!(
        segments(&out),
        [
            "killer:0-0:sleep",
            "high:0-0:sleep",
            "low:0-1:preempt",
            "high:1-1:block",
            "low:1-2:preempt",
            "killer:2-2:exit",
            "low:2-2:preempt",
            "high:2-4:exit",
            "low:4-4:exit"
        ]
    );
    assert_eq!(out.messages.queued_at_end, 0);
}

/// As above, but the oldest caller (`first`, 3) was killed while it waited: the next one
/// (`second`, 2) takes the handler over; `first`'s call, still queued, is dropped by the drain
/// (its caller is gone), unserved and unanswered.
#[test]
fn a_caller_no_longer_waiting_is_passed_over() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let h = logging(&log);
    let mut rt = Runtime::simulated(1);
    let (h1, h2, h3) = (h.clone(), h.clone(), h.clone());
    let l = log.clone();
    let low = rt
        .spawn(ThreadSpec::new("low").priority(1), move |cx| {
            let _ = h1.call(cx, Message::new(1, 0, 0));
        })
        .unwrap();
    let first = rt
        .spawn(ThreadSpec::new("first").priority(3), move |cx| {
            cx.sleep(ms(1));
            let _ = h2.call(cx, Message::new(2, 1, 0));
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("second").priority(2), move |cx| {
        cx.sleep(ms(1));
        let a = h3.call(cx, Message::new(3, 2, 0)).unwrap();
        push(&l, format!("second got {}@{}", a.value, at_ms(cx)));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("killer").priority(4), move |cx| {
        cx.sleep(ms(2));
        cx.kill(first).unwrap();
        cx.kill(low).unwrap();
    })
    .unwrap();
    rt.run().unwrap();
    // `first`'s message (value 1) runs in the drain after `second`'s own call: its caller is
    // gone, so its reply goes nowhere.
    assert_eq!(take(&log), ["run 0@0", "run 2@2", "run 1@3", "second got 20@4"]);
    assert_eq!(h.queued(), 0);
}

/// The same hand-over when the holder's job is aborted rather than the thread killed: `low`'s
/// one-shot job has an abort time of 2 ms and is inside the handler then; `high`, waiting with
/// its call since 1 ms, takes the handler over at 2 ms.
#[test]
fn the_oldest_waiting_caller_takes_over_a_handler_whose_holders_job_was_aborted() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let h = logging(&log);
    let mut rt = Runtime::simulated(1);
    let (h1, h2) = (h.clone(), h.clone());
    let l1 = log.clone();
    rt.spawn(ThreadSpec::new("low").priority(1).abort_after(ms(2)), move |cx| {
        let _ = h1.call(cx, Message::new(1, 0, 0));
        push(&l1, format!("low back@{}", at_ms(cx)));
    })
    .unwrap();
    let l2 = log.clone();
    rt.spawn(ThreadSpec::new("high").priority(3), move |cx| {
        cx.sleep(ms(1));
        let a = h2.call(cx, Message::new(2, 2, 0)).unwrap();
        push(&l2, format!("high got {}@{}", a.value, at_ms(cx)));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&log), ["run 0@0", "run 2@2", "high got 20@3"]);
    assert_eq!(h.queued(), 0);
    assert!(!h.is_busy() && !h.is_poisoned());
    assert_eq!(out.messages.queued_at_end, 0);
}

/// The caller the handler is handed to is itself killed before it runs: its call goes back at
/// the head of the queue (as a call whose caller is gone) and the handler is handed on to the
/// next caller waiting. Two CPUs in virtual time: `t` (CPU 1, priority 1) waits at the handler
/// from 1 ms, `u` (CPU 0, 2) from 1.2 ms; `low`, the holder, is killed at 2 ms and `t` gets
/// the handler, but `m` (CPU 1, 5) computes there until 3 ms and then kills `t`, still ready.
/// `t`'s unwind puts its message back and hands the handler to `u`, which runs its own call
/// at 3 ms and then `t`'s message.
#[test]
fn a_caller_killed_after_the_hand_over_passes_the_handler_on() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let h = logging(&log);
    let mut rt = Runtime::simulated(2);
    let (h1, h2, h3) = (h.clone(), h.clone(), h.clone());
    let low = rt
        .spawn(ThreadSpec::new("low").priority(1), move |cx| {
            let _ = h1.call(cx, Message::new(1, 0, 0));
        })
        .unwrap();
    let t = rt
        .spawn(ThreadSpec::new("t").cpu(1).priority(1), move |cx| {
            cx.sleep(ms(1));
            let _ = h2.call(cx, Message::new(2, 1, 0));
        })
        .unwrap();
    let l = log.clone();
    rt.spawn(ThreadSpec::new("u").priority(2), move |cx| {
        cx.sleep(std::time::Duration::from_micros(1_200));
        let a = h3.call(cx, Message::new(3, 2, 0)).unwrap();
        push(&l, format!("u got {}@{}", a.value, at_ms(cx)));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("m").cpu(1).priority(5), move |cx| {
        cx.sleep(std::time::Duration::from_micros(1_500));
        cx.work(std::time::Duration::from_micros(1_500));
        cx.kill(t).unwrap();
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("killer").priority(10), move |cx| {
        cx.sleep(ms(2));
        cx.kill(low).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&log), ["run 0@0", "run 2@3", "run 1@4", "u got 20@5"]);
    assert_eq!(h.queued(), 0);
    assert_eq!(out.messages.queued_at_end, 0);
}

/// Real time, two CPUs: the caller waiting at the handler is of another CPU (its request was
/// queued at the busy handler by this CPU's dispatcher), so it cannot take the handler over;
/// when the holder is killed, this CPU's dispatcher drains the queue and answers it.
#[test]
fn a_caller_of_another_cpu_is_served_by_the_dispatcher_when_the_holder_is_killed() {
    use tempi::clock::RealClock;
    use tempi::{Config, ThreadOutcome};
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let h = Handler::new("slow", 0, 4, move |hcx, m| {
        push(&l, format!("run {}", m.value));
        if m.value == 0 {
            hcx.work(ms(40));
        }
        hcx.reply(Message::new(m.id, m.value * 10, 0));
    });
    let mut rt = Runtime::<RealClock>::new(Config::new(2).pin(false)).unwrap();
    let (h1, h2) = (h.clone(), h.clone());
    let low = rt
        .spawn(ThreadSpec::new("low").cpu(0).priority(1), move |cx| {
            let _ = h1.call(cx, Message::new(1, 0, 0));
        })
        .unwrap();
    let got = Arc::new(Mutex::new(None));
    let g = got.clone();
    rt.spawn(ThreadSpec::new("far").cpu(1), move |cx| {
        cx.sleep(ms(5));
        *g.lock().unwrap() = Some(h2.call(cx, Message::new(2, 3, 0)).map(|r| r.value));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("killer").cpu(0).priority(5), move |cx| {
        cx.sleep(ms(20));
        cx.kill(low).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("low").unwrap().outcome, Some(ThreadOutcome::Killed));
    assert_eq!(*got.lock().unwrap(), Some(Ok(30)));
    assert_eq!(take(&log), ["run 0", "run 3"]);
    assert_eq!(h.queued(), 0);
}

/// `low` (1) runs the handler from 0 ms (value 0, 4 ms). `high` (3) wakes at 1 ms, finds it
/// busy and queues a call (value 2). At 4 ms `low` drains it: `high`'s call runs on `low`'s
/// stack, for 1 ms. `killer` (4) kills `low` at 4.5 ms, inside that call: the call's serving is
/// cut short, so nobody will reply to it, and `high` is answered `Unanswered` at once (as the
/// unwind ends) instead of waiting for good. The handler is neither poisoned nor busy after,
/// and serves `high`'s next call at once.
#[test]
fn a_call_whose_serving_a_kill_cuts_short_is_answered_unanswered() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let h = logging(&log);
    let mut rt = Runtime::simulated(1);
    let (h1, h2) = (h.clone(), h.clone());
    let low = rt
        .spawn(ThreadSpec::new("low").priority(1), move |cx| {
            let _ = h1.send(cx, Message::new(1, 0, 0));
        })
        .unwrap();
    let l2 = log.clone();
    rt.spawn(ThreadSpec::new("high").priority(3), move |cx| {
        cx.sleep(ms(1));
        let first = h2.call(cx, Message::new(2, 2, 0)).map(|m| m.value);
        push(&l2, format!("high got {first:?}@{}", cx.now().as_nanos() / 100_000));
        let again = h2.call(cx, Message::new(2, 3, 0)).map(|m| m.value);
        push(&l2, format!("high got {again:?}@{}", cx.now().as_nanos() / 100_000));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("killer").priority(4), move |cx| {
        cx.sleep(Duration::from_micros(4_500));
        cx.kill(low).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    // Instants of `high` in tenths of a millisecond.
    assert_eq!(take(&log), ["run 0@0", "run 2@4", "high got Err(Unanswered)@45", "run 3@4", "high got Ok(30)@55"]);
    assert!(!h.is_busy() && !h.is_poisoned());
    assert_eq!(out.thread_named("low").unwrap().outcome, Some(tempi::ThreadOutcome::Killed));
    assert_eq!(out.messages.queued_at_end, 0);
}

/// Real time, two CPUs: `low` (CPU 0) holds the handler until a call from `far` (CPU 1) is
/// queued there, then serves it on its own stack, where `killer` kills it. `far`, whose call
/// was cut short, is answered `Unanswered` through its CPU's queue instead of waiting for
/// good. Flags, not timings, order the steps, so a loaded machine changes nothing.
#[test]
fn a_caller_of_another_cpu_whose_call_a_kill_cuts_short_is_answered_unanswered() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::OnceLock;
    use tempi::clock::RealClock;
    use tempi::{Config, ThreadOutcome};
    let me: Arc<OnceLock<Handler>> = Arc::default();
    let serving_far = Arc::new(AtomicBool::new(false));
    let (m, s) = (me.clone(), serving_far.clone());
    let h = Handler::new("h", 0, 4, move |hcx, msg| {
        if msg.value == 0 {
            // Held until the other CPU's call is queued here.
            while m.get().unwrap().queued() == 0 {
                hcx.work(ms(1));
            }
        } else {
            s.store(true, Ordering::Release);
            // Until killed (bounded, so a broken kill cannot hang the test).
            for _ in 0..10_000 {
                hcx.work(ms(1));
            }
        }
        hcx.reply(msg);
    });
    me.set(h.clone()).unwrap();
    let mut rt = Runtime::<RealClock>::new(Config::new(2).pin(false)).unwrap();
    let (h1, h2) = (h.clone(), h.clone());
    let low = rt
        .spawn(ThreadSpec::new("low").cpu(0).priority(1), move |cx| {
            let _ = h1.send(cx, Message::new(1, 0, 0));
        })
        .unwrap();
    let got = Arc::new(Mutex::new(None));
    let g = got.clone();
    rt.spawn(ThreadSpec::new("far").cpu(1), move |cx| {
        while !h2.is_busy() {
            cx.sleep(ms(1));
        }
        *g.lock().unwrap() = Some(h2.call(cx, Message::new(2, 1, 0)).map(|r| r.value));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("killer").cpu(0).priority(5), move |cx| {
        while !serving_far.load(Ordering::Acquire) {
            cx.sleep(ms(1));
        }
        cx.kill(low).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("low").unwrap().outcome, Some(ThreadOutcome::Killed));
    assert_eq!(*got.lock().unwrap(), Some(Err(tempi::message::MsgError::Unanswered)));
    assert!(!h.is_busy() && !h.is_poisoned());
    assert_eq!(h.queued(), 0);
}
