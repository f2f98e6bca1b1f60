//! Handlers' save queues in virtual time: FREE JAZZ's monitor semantics. Saving a caller's
//! message is WAIT (the caller blocks until some later invocation serves it), taking it back
//! and replying is SIGNAL; the exact order (by value, then save order) and timelines, calls
//! saved from a busy handler's queue, asynchronous messages saved and answered, and every
//! error.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{ms, segments};
use tempi::message::{Handler, Message, MsgError, Read, Selection};
use tempi::{Runtime, ThreadSpec, Time};

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, s: String) {
    log.lock().unwrap().push(s);
}

fn at(t: Time) -> u64 {
    t.as_nanos() / 1_000_000
}

const GET: i64 = 0;
const PUT: i64 = 1;

/// A one-place buffer as a monitor: `GET` calls wait (saved, ordered by their value) while it
/// is empty; a `PUT` hands its item to the first waiting `GET` (SIGNAL) or keeps it.
fn buffer(log: &Log) -> Handler {
    let l = log.clone();
    let mut item: Option<i64> = None;
    Handler::new("buffer", 0, 4, move |hcx, m| match m.id {
        GET => match item.take() {
            Some(v) => hcx.reply(Message::new(GET, v, 0)),
            None => {
                push(&l, format!("wait {}@{}", m.value, at(hcx.now())));
                hcx.save(0, m).unwrap();
            }
        },
        _ => match hcx.read_saved(0, Selection::any().id(GET)) {
            Ok(w) => {
                push(&l, format!("signal {} with {}@{}", w.value, m.value, at(hcx.now())));
                hcx.reply(Message::new(GET, m.value, 0));
            }
            Err(e) => {
                assert_eq!(e, MsgError::NoMatch);
                item = Some(m.value);
            }
        },
    })
    .save_queues(1)
}

/// `c1` (3) and `c2` (2) call `GET` on the empty buffer at 0 ms, each running the idle
/// handler on its own stack: both are saved and wait. The producer (1) puts 10 at 1 ms and
/// 20 at 2 ms: the save queue is ordered by value, so `c2` (saved with value 1) is served
/// before `c1` (value 5) although it was saved later; each served consumer, more urgent than
/// the producer, runs at once. A third put finds no waiter and is kept for `c3`, which gets
/// it without waiting.
#[test]
fn handler_saves_wait_and_signal_in_value_order() {
    let log = Log::default();
    let buf = buffer(&log);
    let mut rt = Runtime::simulated(1);
    for (name, prio, value) in [("c1", 3, 5), ("c2", 2, 1)] {
        let (b, l) = (buf.clone(), log.clone());
        rt.spawn(ThreadSpec::new(name).priority(prio), move |cx| {
            let got = b.call(cx, Message::new(GET, value, 0)).unwrap();
            push(&l, format!("{name} got {}@{}", got.value, at(cx.now())));
        })
        .unwrap();
    }
    let (b, l) = (buf.clone(), log.clone());
    rt.spawn(ThreadSpec::new("c3").priority(4), move |cx| {
        cx.sleep(ms(4));
        let got = b.call(cx, Message::new(GET, 0, 0)).unwrap();
        push(&l, format!("c3 got {}@{}", got.value, at(cx.now())));
    })
    .unwrap();
    let l = log.clone();
    rt.spawn(ThreadSpec::new("producer").priority(1), move |cx| {
        for v in [10, 20, 30] {
            cx.sleep(ms(1));
            buf.send(cx, Message::new(PUT, v, 0)).unwrap();
            push(&l, format!("put {v}@{}", at(cx.now())));
        }
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "wait 5@0",
            "wait 1@0",
            "signal 1 with 10@1",
            "c2 got 10@1",
            "put 10@1",
            "signal 5 with 20@2",
            "c1 got 20@2",
            "put 20@2",
            "put 30@3",
            "c3 got 30@4",
        ]
    );
    assert_eq!(
        segments(&out),
        [
            "c3:0-0:sleep",
            "c1:0-0:block",
            "c2:0-0:block",
            "producer:0-0:sleep",
            "producer:1-1:preempt",
            "c2:1-1:exit",
            "producer:1-1:sleep",
            "producer:2-2:preempt",
            "c1:2-2:exit",
            "producer:2-2:sleep",
            "producer:3-3:exit",
            "c3:4-4:exit",
        ]
    );
}

/// A caller queued at a busy handler and saved when the handler drains its queue keeps
/// waiting after the drain, until a later invocation serves it; an asynchronous message
/// saved and answered later comes back to its sender as a message from the thread whose
/// stack served it. `low` (1) runs a 2 ms message from 0 ms; `caller` (5) and `sender` (4)
/// queue theirs at 1 ms; the drain at 2 ms saves both; `low`'s message at 5 ms serves them
/// in value order (7, then 8), each woken thread running at once.
#[test]
fn handler_saves_a_queued_call_and_a_sent_message_wait_until_served() {
    let log = Log::default();
    let l = log.clone();
    let h = Handler::new("h", 0, 2, move |hcx, m| {
        push(&l, format!("h {}@{}", m.id, at(hcx.now())));
        match m.id {
            1 => hcx.work(ms(2)),
            2 | 3 => hcx.save(0, m).unwrap(),
            _ => {
                for _ in 0..2 {
                    let w = hcx.read_saved(0, Selection::any()).unwrap();
                    hcx.reply(Message::new(w.id, w.value * 10, 0));
                }
            }
        }
    })
    .save_queues(1);
    let mut rt = Runtime::simulated(1);
    let (h1, h2, h3) = (h.clone(), h.clone(), h.clone());
    let low = rt
        .spawn(ThreadSpec::new("low").priority(1), move |cx| {
            h1.send(cx, Message::new(1, 0, 0)).unwrap();
            cx.sleep(ms(3));
            h1.send(cx, Message::new(9, 0, 0)).unwrap();
        })
        .unwrap();
    let l = log.clone();
    rt.spawn(ThreadSpec::new("caller").priority(5), move |cx| {
        cx.sleep(ms(1));
        let r = h2.call(cx, Message::new(2, 7, 0)).unwrap();
        push(&l, format!("caller got {} {}@{}", r.id, r.value, at(cx.now())));
    })
    .unwrap();
    let l = log.clone();
    rt.spawn(ThreadSpec::new("sender").priority(4), move |cx| {
        cx.sleep(ms(1));
        h3.send(cx, Message::new(3, 8, 0)).unwrap();
        let back = cx.read(Read::Wait).unwrap();
        assert_eq!(back.from, Some(low));
        push(&l, format!("sender read {} {}@{}", back.id, back.value, at(cx.now())));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(*log.lock().unwrap(), ["h 1@0", "h 2@2", "h 3@2", "h 9@5", "caller got 2 70@5", "sender read 3 80@5"]);
    assert_eq!(
        segments(&out),
        [
            "caller:0-0:sleep",
            "sender:0-0:sleep",
            "low:0-1:preempt",
            "caller:1-1:block",
            "sender:1-1:block",
            "low:1-2:sleep",
            "low:5-5:preempt",
            "caller:5-5:exit",
            "low:5-5:preempt",
            "sender:5-5:exit",
            "low:5-5:exit",
        ]
    );
}

/// The handler serves its invoking thread's own saved call in the same stay (the thread has
/// not begun to wait): the answer is kept for it, and it does not wait. A saved message taken
/// and not answered is answered `Unanswered` when the handler's function returns.
#[test]
fn handler_saves_own_call_served_at_once_and_a_taken_call_left_unanswered() {
    let h = Handler::new("h", 0, 2, |hcx, m| {
        hcx.save(0, m).unwrap();
        let w = hcx.read_saved(0, Selection::any()).unwrap();
        if m.id == 1 {
            hcx.reply(Message::new(w.id, w.value + 1, 0));
        }
    })
    .save_queues(1);
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("t"), move |cx| {
        assert_eq!(h.call(cx, Message::new(1, 41, 0)).unwrap().value, 42);
        assert_eq!(h.call(cx, Message::new(2, 0, 0)), Err(MsgError::Unanswered));
        assert_eq!(cx.now(), Time::ZERO);
    })
    .unwrap();
    rt.run().unwrap();
}

/// Every misuse is a clear error, and the message stays current after a refused save.
#[test]
fn handler_saves_errors() {
    let inner = Handler::new("inner", 0, 1, |hcx, m| {
        // Called inline from another handler: its caller may not wait.
        assert_eq!(hcx.save(0, m), Err(MsgError::WouldBlock));
        hcx.reply(m);
    })
    .save_queues(1);
    let h = Handler::new("h", 0, 1, move |hcx, m| {
        assert_eq!(hcx.save(1, m), Err(MsgError::NoSuchSaveQueue(1)));
        assert_eq!(hcx.read_saved(1, Selection::any()), Err(MsgError::NoSuchSaveQueue(1)));
        assert_eq!(hcx.read_saved(0, Selection::any()), Err(MsgError::NoMatch));
        if m.id == 0 {
            hcx.save(0, m).unwrap();
            assert_eq!(hcx.save(0, m), Err(MsgError::NoCurrent));
        } else {
            // The queue (capacity 1) is full: the message stays current and is answered.
            assert_eq!(hcx.save(0, m), Err(MsgError::QueueFull));
            assert_eq!(hcx.call_handler(&inner, m).unwrap().id, m.id);
            hcx.reply(Message::new(m.id, 5, 0));
            assert_eq!(hcx.save(0, m), Err(MsgError::NoCurrent));
        }
    })
    .save_queues(1);
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("t"), move |cx| {
        h.send(cx, Message::new(0, 0, 0)).unwrap();
        assert_eq!(h.call(cx, Message::new(1, 0, 0)).unwrap().value, 5);
    })
    .unwrap();
    rt.run().unwrap();
}
