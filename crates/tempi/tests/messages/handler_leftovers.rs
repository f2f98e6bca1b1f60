//! Handlers leave nothing behind: a message queued at a busy handler while its invoker makes
//! its last runtime calls of the stay (restoring preemption, NICE) is served before the stack
//! is given back, so a sender's message is run and a caller is answered; and what handlers
//! and threads still hold in their queues when the run ends is counted in the run's outcome
//! and its report, its payload given back to its pool at once.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::handlers::{logging, push, take, Log};
use common::payloads::tracked;
use common::{ms, segments};
use tempi::clock::VirtualClock;
use tempi::message::{Handler, Message, MsgError, Selection};
use tempi::policy::sched::{FixedPriority, WaitInheritance};
use tempi::{Config, Runtime, ThreadSpec, Time};

/// `low` has `tame_prio_inv` on: its handler runs with preemption off. `high` is released at
/// 1 ms and waits until `low`, its message done at 4 ms, restores preemption: `high` takes the
/// CPU there, inside that runtime call, while the handler is still `low`'s. Its send is
/// queued and its call waits; `low`, resumed, finds them in the queue after leaving the
/// handler and serves both (the send at 4 ms, the call at 5 ms) before returning.
#[test]
fn leftovers_queued_while_preemption_is_restored_are_served() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let h = logging(&log);
    let mut rt = Runtime::simulated(1);
    let (h1, h2) = (h.clone(), h.clone());
    let l1 = log.clone();
    rt.spawn(ThreadSpec::new("low").priority(1).tame_prio_inv(true), move |cx| {
        assert_eq!(h1.call(cx, Message::new(1, 0, 0)).unwrap().value, 0);
        push(&l1, format!("low back@{}", cx.now().as_nanos() / 1_000_000));
    })
    .unwrap();
    let l2 = log.clone();
    rt.spawn(ThreadSpec::new("high").priority(2), move |cx| {
        cx.sleep(ms(1));
        push(&l2, format!("high woke@{} busy {}", cx.now().as_nanos() / 1_000_000, h2.is_busy()));
        h2.send(cx, Message::new(2, 1, 0)).unwrap();
        let a = h2.call(cx, Message::new(2, 2, 0)).unwrap();
        push(&l2, format!("high got {}@{}", a.value, cx.now().as_nanos() / 1_000_000));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&log), ["run 0@0", "high woke@4 busy true", "run 1@4", "run 2@5", "high got 20@6", "low back@6"]);
    assert_eq!(h.queued(), 0);
    assert_eq!(
        segments(&out),
        ["high:0-0:sleep", "low:0-4:preempt", "high:4-4:block", "low:4-6:preempt", "high:6-6:exit", "low:6-6:exit"]
    );
}

/// As above with a send only: `high` queues it and ends. Nobody invokes the handler again,
/// so, left in the queue, it would never run.
#[test]
fn leftovers_a_send_queued_while_preemption_is_restored_runs() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let h = logging(&log);
    let mut rt = Runtime::simulated(1);
    let (h1, h2) = (h.clone(), h.clone());
    let l1 = log.clone();
    rt.spawn(ThreadSpec::new("low").priority(1).tame_prio_inv(true), move |cx| {
        h1.send(cx, Message::new(1, 0, 0)).unwrap();
        push(&l1, format!("low back@{}", cx.now().as_nanos() / 1_000_000));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("high").priority(2), move |cx| {
        cx.sleep(ms(1));
        h2.send(cx, Message::new(2, 1, 0)).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&log), ["run 0@0", "run 1@4", "low back@5"]);
    assert_eq!(h.queued(), 0);
    assert_eq!(segments(&out), ["high:0-0:sleep", "low:0-4:preempt", "high:4-4:exit", "low:4-5:exit"]);
}

/// The same through NICE: with priority inheritance, `high` (10) calling the busy handler at
/// 1 ms lends its urgency to `low` (1), which serves that call at 4 ms and, leaving the
/// handler, gives the lend back (NICE, a runtime call): `high`, answered, takes the CPU there
/// and calls the handler again, still busy, lending again. `low` serves that second call
/// before returning.
#[test]
fn leftovers_queued_during_nice_are_served() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let h = logging(&log);
    let mut rt: Runtime<VirtualClock> = Runtime::new(Config::new(1).verify(true)).unwrap();
    rt.set_scheduler(|| Box::new(FixedPriority::new()));
    rt.stack_scheduler(|prev| Box::new(WaitInheritance::new(prev)));
    let (h1, h2) = (h.clone(), h.clone());
    let l1 = log.clone();
    rt.spawn(ThreadSpec::new("low").priority(1), move |cx| {
        h1.send(cx, Message::new(1, 0, 0)).unwrap();
        push(&l1, format!("low back@{} u{}", cx.now().as_nanos() / 1_000_000, cx.urgency().0));
    })
    .unwrap();
    let l2 = log.clone();
    rt.spawn(ThreadSpec::new("high").priority(10), move |cx| {
        cx.sleep(ms(1));
        for v in [1, 2] {
            let a = h2.call(cx, Message::new(2, v, 0)).unwrap();
            push(&l2, format!("high got {}@{}", a.value, cx.now().as_nanos() / 1_000_000));
        }
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&log), ["run 0@0", "run 1@4", "high got 10@5", "run 2@5", "high got 20@6", "low back@6 u1"]);
    assert_eq!(h.queued(), 0);
    assert_eq!(
        segments(&out),
        [
            "high:0-0:sleep",
            "low:0-1:preempt",
            "high:1-1:block",
            "low:1-5:preempt",
            "high:5-5:block",
            "low:5-6:preempt",
            "high:6-6:exit",
            "low:6-6:exit"
        ]
    );
}

/// A one-place buffer as a monitor. `consumer` (1, `tame_prio_inv` on) calls GET on the empty
/// buffer: the handler saves its call (WAIT) and works 2 ms. `producer` (2), released at 1 ms,
/// takes the CPU only when `consumer` restores preemption at 2 ms, and PUTs 7 into the
/// still-busy handler: queued. `consumer`, serving that PUT before it returns, answers its
/// own saved call (SIGNAL) and so gets 7 without waiting.
#[test]
fn leftovers_served_on_the_way_out_can_answer_the_invokers_own_saved_call() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let h = Handler::new("buffer", 0, 4, move |hcx, m| {
        push(&l, format!("{} {}@{}", if m.id == 0 { "get" } else { "put" }, m.value, hcx.now().as_nanos() / 1_000_000));
        if m.id == 0 {
            hcx.save(0, m).unwrap();
            hcx.work(ms(2));
        } else if hcx.read_saved(0, Selection::any()).is_ok() {
            hcx.reply(Message::new(0, m.value, 0));
        }
    })
    .save_queues(1);
    let mut rt = Runtime::simulated(1);
    let (h1, h2) = (h.clone(), h.clone());
    let l1 = log.clone();
    rt.spawn(ThreadSpec::new("consumer").priority(1).tame_prio_inv(true), move |cx| {
        let got = h1.call(cx, Message::new(0, 0, 0)).unwrap();
        push(&l1, format!("consumer got {}@{}", got.value, cx.now().as_nanos() / 1_000_000));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("producer").priority(2), move |cx| {
        cx.sleep(ms(1));
        h2.send(cx, Message::new(1, 7, 0)).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&log), ["get 0@0", "put 7@2", "consumer got 7@2"]);
    assert_eq!(out.messages.queued_at_end, 0);
    assert_eq!(
        segments(&out),
        ["producer:0-0:sleep", "consumer:0-2:preempt", "producer:2-2:exit", "consumer:2-2:exit"]
    );
}

/// The run ends at 5 ms with messages held everywhere a message can wait: `saver` (3) sent one
/// message and called with another, both saved by the handler (its call waits for ever);
/// `low` (1) runs a 10 ms message in the handler, so `high` (2), at 1 ms, finds it busy and
/// queues a send and a call; and `deaf` never reads the message `high` sent it. All five are
/// counted as queued at the end, in the outcome, the JSON report and the summary, and each
/// payload is dropped by the run's end, every slot of the pool free again, while the test
/// still holds the handler.
#[test]
fn leftovers_held_at_the_runs_end_are_counted_and_their_payloads_released() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut rt = Runtime::simulated(1);
    let pool = rt.payload_pool::<common::payloads::Tracked>(8).unwrap();
    let h = Handler::new("h", 0, 4, |hcx, m| match m.id {
        0 => hcx.work(ms(10)),
        1 => hcx.save(0, m).unwrap(),
        _ => {}
    })
    .save_queues(1);
    let (h1, p, d) = (h.clone(), pool.clone(), drops.clone());
    rt.spawn(ThreadSpec::new("saver").priority(3), move |cx| {
        h1.send(cx, tracked(&p, &d, Message::new(1, 0, 0), 1)).unwrap();
        let _ = h1.call(cx, tracked(&p, &d, Message::new(1, 0, 0), 2));
        unreachable!("its call is saved for ever");
    })
    .unwrap();
    let h2 = h.clone();
    rt.spawn(ThreadSpec::new("low").priority(1), move |cx| h2.send(cx, Message::new(0, 0, 0)).unwrap()).unwrap();
    let deaf = rt.spawn(ThreadSpec::new("deaf"), |cx| cx.sleep(ms(100))).unwrap();
    let (h3, p, d) = (h.clone(), pool.clone(), drops.clone());
    rt.spawn(ThreadSpec::new("high").priority(2), move |cx| {
        cx.send(deaf, tracked(&p, &d, Message::new(9, 0, 0), 5)).unwrap();
        cx.sleep(ms(1));
        assert!(h3.is_busy());
        h3.send(cx, tracked(&p, &d, Message::new(2, 0, 0), 3)).unwrap();
        let _ = h3.call(cx, tracked(&p, &d, Message::new(2, 0, 0), 4));
        unreachable!("its call is queued at the busy handler when the run ends");
    })
    .unwrap();
    let out = rt.run_until(Time::from_millis(5)).unwrap();
    assert_eq!(out.messages.queued_at_end, 5);
    assert_eq!((out.messages.handler_queue_full, out.messages.timed_pending_at_end), (0, 0));
    assert_eq!(drops.load(Ordering::Relaxed), 5);
    assert_eq!(pool.available(), 8);
    assert_eq!(h.queued(), 0);
    let json = tempi::trace::report::to_json(&out);
    assert!(json.contains(r#""messages_queued_at_end": 5"#), "{json}");
    assert!(tempi::trace::report::summary_text(&out)
        .contains("messages still queued, never served, at the end of the run: 5"));
    // The handler serves its next run afresh: nothing of this one is left in it.
    let mut rt = Runtime::simulated(1);
    let h4 = h.clone();
    rt.spawn(ThreadSpec::new("t"), move |cx| assert_eq!(h4.call(cx, Message::new(3, 0, 0)), Err(MsgError::Unanswered)))
        .unwrap();
    assert_eq!(rt.run().unwrap().messages.queued_at_end, 0);
}
