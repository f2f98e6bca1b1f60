//! Handlers in virtual time: an idle handler runs on the caller's stack at the caller's
//! urgency; a busy one queues (a sender goes on, a caller waits) and drains its queue before
//! giving the stack back; a handler never blocks; it is non-reentrant.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{ms, segments};
use tempi::message::{Handler, Message, MsgError};
use tempi::{Runtime, ThreadSpec};

type Log = Arc<Mutex<Vec<String>>>;

fn take(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// An idle handler runs inside the caller: no switch, the caller's thread is the invoker,
/// the reply comes back at once.
#[test]
fn handlers_idle_handler_runs_on_the_callers_stack() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let h = Handler::new("h", 0, 4, move |hcx, m| {
        hcx.work(ms(1));
        l.lock().unwrap().push(format!("h:{}@{}", m.value, hcx.now().as_nanos() / 1_000_000));
        assert_eq!(Some(hcx.invoker()), m.from);
        hcx.reply(Message::new(m.id, m.value + 1, 0));
    });
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("t"), move |cx| {
        assert!(!h.is_busy());
        assert_eq!(h.call(cx, Message::new(0, 1, 0)).unwrap().value, 2);
        h.send(cx, Message::new(0, 5, 0)).unwrap();
        assert!(!h.is_busy());
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&log), ["h:1@1", "h:5@2"]);
    // One segment: the handler never ran anywhere but on t.
    assert_eq!(segments(&out), ["t:0-2:exit"]);
}

/// `low` invokes the handler, which works 4 ms; `high` wakes at 1 ms, preempts `low` inside
/// the handler, finds it busy: its send is queued and its call waits. `low` resumes, finishes
/// its message and drains the queue on its own stack (the send, then the call), answering
/// `high`, which runs again at once.
#[test]
fn handlers_busy_handler_queues_and_drains_before_returning() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    let h = Handler::new("h", 0, 4, move |hcx, m| {
        let who = if m.id == 1 { "low" } else { "high" };
        l.lock().unwrap().push(format!(
            "run {} for {who} on {:?}@{}",
            m.value,
            hcx.invoker() == m.from.unwrap(),
            hcx.now().as_nanos() / 1_000_000
        ));
        hcx.work(ms(if m.value == 0 { 4 } else { 1 }));
        hcx.reply(Message::new(m.id, m.value * 10, 0));
    });
    let mut rt = Runtime::simulated(1);
    let (h1, h2) = (h.clone(), h.clone());
    let l1 = log.clone();
    rt.spawn(ThreadSpec::new("low").priority(1), move |cx| {
        assert_eq!(h1.call(cx, Message::new(1, 0, 0)).unwrap().value, 0);
        l1.lock().unwrap().push(format!("low back@{}", cx.now().as_nanos() / 1_000_000));
    })
    .unwrap();
    let l2 = log.clone();
    rt.spawn(ThreadSpec::new("high").priority(2), move |cx| {
        cx.sleep(ms(1));
        assert!(h2.is_busy());
        h2.send(cx, Message::new(2, 1, 0)).unwrap();
        let a = h2.call(cx, Message::new(2, 2, 0)).unwrap();
        l2.lock().unwrap().push(format!("high got {}@{}", a.value, cx.now().as_nanos() / 1_000_000));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(
        take(&log),
        [
            "run 0 for low on true@0",
            // Served on low's stack: the invoker is low, not the sender.
            "run 1 for high on false@4",
            "run 2 for high on false@5",
            "high got 20@6",
            "low back@6"
        ]
    );
    assert_eq!(
        segments(&out),
        ["high:0-0:sleep", "low:0-1:preempt", "high:1-1:block", "low:1-6:preempt", "high:6-6:exit", "low:6-6:exit"]
    );
}

/// A handler cannot wait: calling a busy handler (itself) from a handler is an error at once,
/// and sending to itself is queued and served after the current message (non-reentrant).
#[test]
fn handlers_never_block_and_are_not_reentrant() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let me: Arc<Mutex<Option<Handler>>> = Arc::new(Mutex::new(None));
    let (l, me1) = (log.clone(), me.clone());
    let h = Handler::new("h", 0, 2, move |hcx, m| {
        let me = me1.lock().unwrap().clone().unwrap();
        l.lock().unwrap().push(format!("start {}", m.value));
        if m.value == 0 {
            assert_eq!(hcx.call_handler(&me, Message::new(0, 9, 0)), Err(MsgError::WouldBlock));
            hcx.send_handler(&me, Message::new(0, 1, 0)).unwrap();
            hcx.send_handler(&me, Message::new(0, 2, 0)).unwrap();
            // The queue holds two.
            assert_eq!(hcx.send_handler(&me, Message::new(0, 3, 0)), Err(MsgError::QueueFull));
        }
        l.lock().unwrap().push(format!("end {}", m.value));
    });
    *me.lock().unwrap() = Some(h.clone());
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("t"), move |cx| {
        assert_eq!(h.call(cx, Message::new(0, 0, 0)), Err(MsgError::Unanswered));
    })
    .unwrap();
    rt.run().unwrap();
    assert_eq!(take(&log), ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]);
}

/// Nested handlers: an idle inner handler called from an outer one runs inline too.
#[test]
fn handlers_nest() {
    let inner = Handler::new("inner", 0, 1, |hcx, m| hcx.reply(Message::new(0, m.value * 2, 0)));
    let outer = Handler::new("outer", 0, 1, move |hcx, m| {
        let a = hcx.call_handler(&inner, m).unwrap();
        hcx.reply(Message::new(0, a.value + 1, 0));
    });
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("t"), move |cx| {
        assert_eq!(outer.call(cx, Message::new(0, 20, 0)).unwrap().value, 41);
    })
    .unwrap();
    rt.run().unwrap();
}
