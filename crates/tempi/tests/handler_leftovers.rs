//! Handlers leave nothing behind: a message queued at a busy handler while its invoker makes
//! its last runtime calls of the stay (restoring preemption, NICE) is served before the stack
//! is given back, so a sender's message is run and a caller is answered.

mod common;

use std::sync::{Arc, Mutex};

use common::{ms, segments};
use tempi::clock::VirtualClock;
use tempi::message::{Handler, Message};
use tempi::policy::sched::{FixedPriority, PriorityInheritance};
use tempi::{Config, Runtime, ThreadSpec};

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, s: String) {
    log.lock().unwrap().push(s);
}

fn take(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// A handler that logs each message (by value) and when it runs, works `value + 1` ms, and
/// replies with ten times the value.
fn logging(log: &Log) -> Handler {
    let l = log.clone();
    Handler::new("h", 0, 4, move |hcx, m| {
        push(&l, format!("run {}@{}", m.value, hcx.now().as_nanos() / 1_000_000));
        hcx.work(ms(if m.value == 0 { 4 } else { 1 }));
        hcx.reply(Message::new(m.id, m.value * 10, 0));
    })
}

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
    rt.stack_scheduler(|prev| Box::new(PriorityInheritance::new(prev)));
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
