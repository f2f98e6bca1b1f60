//! Messages that never reach their recipient are never silent: a busy handler's full queue
//! (on both clocks) and timed messages still waiting when the run ends are each a
//! `MessageRefused` trace record and a count in the run's outcome and its JSON report.

use crate::common;

use std::sync::{Arc, Mutex, OnceLock};

use common::{markers, ms};
use tempi::clock::RealClock;
use tempi::message::{Handler, Message, MsgError, Read};
use tempi::trace::TraceKind;
use tempi::{Config, MessageStats, Runtime, ThreadSpec, Time};

fn refusals(out: &tempi::RunOutcome) -> Vec<(String, u64, u64)> {
    out.trace
        .iter()
        .filter(|r| r.kind == TraceKind::MessageRefused)
        .map(|r| (out.thread(r.thread).unwrap().name.clone(), r.time.as_nanos() / 1_000_000, r.arg))
        .collect()
}

/// `low` runs a 3 ms message in a handler whose queue holds one message; `high` wakes at
/// 1 ms and sends it two: the first is queued, the second refused (`QueueFull`, traced with
/// `arg` 5 at 1 ms, counted). The queued one is served when `low` drains the queue at 3 ms.
#[test]
fn messages_accounting_full_handler_queue_is_traced_and_counted_in_virtual_time() {
    let served = Arc::new(Mutex::new(Vec::new()));
    let s = served.clone();
    let h = Handler::new("h", 0, 1, move |hcx, m| {
        s.lock().unwrap().push((m.id, hcx.now().as_nanos() / 1_000_000));
        hcx.work(ms(m.value as u64));
    });
    let mut rt = Runtime::simulated(1);
    let h1 = h.clone();
    rt.spawn(ThreadSpec::new("low").priority(1), move |cx| h1.send(cx, Message::new(1, 3, 0)).unwrap()).unwrap();
    rt.spawn(ThreadSpec::new("high").priority(5), move |cx| {
        cx.sleep(ms(1));
        assert_eq!(h.send(cx, Message::new(2, 1, 0)), Ok(()));
        assert_eq!(h.send(cx, Message::new(3, 1, 0)), Err(MsgError::QueueFull));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(*served.lock().unwrap(), [(1, 0), (2, 3)]);
    assert_eq!(refusals(&out), [("high".to_string(), 1, 5)]);
    assert_eq!(
        out.messages,
        MessageStats {
            handler_queue_full: 1,
            timed_pending_at_end: 0,
            queued_at_end: 0,
            unserved_at_receiver_end: 0,
            handler_panicked: 0,
            ..Default::default()
        }
    );
    let json = tempi::trace::report::to_json(&out);
    assert!(json.contains(r#""handler_queue_full": 1"#), "{json}");
    assert!(!json.contains("timed_messages_pending_at_end"), "{json}");
}

/// A handler that sends itself two messages while busy (its queue holds one): the second is
/// refused on both clocks, traced on the invoking thread and counted; the queued one is
/// served before the invocation returns.
fn self_sender(served: Arc<Mutex<Vec<i64>>>) -> Handler {
    let me: Arc<OnceLock<Handler>> = Arc::new(OnceLock::new());
    let m2 = me.clone();
    let h = Handler::new("self", 0, 1, move |hcx, m| {
        served.lock().unwrap().push(m.id);
        if m.id == 0 {
            let h = m2.get().unwrap();
            assert_eq!(hcx.send_handler(h, Message::new(1, 0, 0)), Ok(()));
            assert_eq!(hcx.send_handler(h, Message::new(2, 0, 0)), Err(MsgError::QueueFull));
        }
    });
    let _ = me.set(h.clone());
    h
}

#[test]
fn messages_accounting_full_handler_queue_is_traced_and_counted_in_real_time() {
    let served = Arc::new(Mutex::new(Vec::new()));
    let h = self_sender(served.clone());
    let mut rt: Runtime<RealClock> = Runtime::new(Config::new(1).pin(false)).unwrap();
    rt.spawn(ThreadSpec::new("t"), move |cx| {
        for _ in 0..3 {
            h.send(cx, Message::new(0, 0, 0)).unwrap();
        }
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(*served.lock().unwrap(), [0, 1, 0, 1, 0, 1]);
    let codes: Vec<(String, u64)> = refusals(&out).into_iter().map(|(n, _, a)| (n, a)).collect();
    assert_eq!(codes, vec![("t".to_string(), 5); 3]);
    assert_eq!(out.messages.handler_queue_full, 3);
    assert!(tempi::trace::report::summary_text(&out).contains("messages refused by a busy handler's full queue: 3"));
}

/// Timed messages whose instant is beyond the run's horizon: at the end each is traced on its
/// sender (`arg` 6, at the end's instant), counted, and its slot is back in the pool; one
/// delivered before the end and one cancelled are not counted.
#[test]
fn messages_accounting_timed_messages_pending_at_the_end_are_reported() {
    let mut rt: Runtime<tempi::clock::VirtualClock> = Runtime::new(Config::new(1).message_pool(4)).unwrap();
    let r = rt
        .spawn(ThreadSpec::new("r").priority(1), |cx| {
            assert_eq!(cx.read(Read::Wait).unwrap().id, 1);
            assert_eq!(cx.now(), Time::from_millis(2));
            let _ = cx.read(Read::Wait);
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("s").priority(2), move |cx| {
        cx.send_at(Time::from_millis(2), r, Message::new(1, 0, 0)).unwrap();
        cx.send_at(Time::from_millis(20), r, Message::new(2, 0, 0)).unwrap();
        cx.bounce_after(ms(30), Message::new(3, 0, 0)).unwrap();
        let h = cx.send_at(Time::from_millis(40), r, Message::new(4, 0, 0)).unwrap();
        assert_eq!(cx.cancel_timer(h).unwrap().id, 4);
        let _ = cx.read(Read::Wait);
    })
    .unwrap();
    let out = rt.run_until(Time::from_millis(10)).unwrap();
    assert_eq!(
        out.messages,
        MessageStats {
            handler_queue_full: 0,
            timed_pending_at_end: 2,
            queued_at_end: 0,
            unserved_at_receiver_end: 0,
            handler_panicked: 0,
            ..Default::default()
        }
    );
    assert_eq!(markers(&out, TraceKind::MessageRefused), ["s#0@10", "s#0@10"]);
    assert_eq!(refusals(&out).iter().map(|r| r.2).collect::<Vec<_>>(), [6, 6]);
    let json = tempi::trace::report::to_json(&out);
    assert!(json.contains(r#""timed_messages_pending_at_end": 2"#), "{json}");
    assert!(tempi::trace::report::summary_text(&out)
        .contains("timed messages still waiting for their instant at the end of the run: 2"));
}

/// A run that ends with nothing timed reports nothing: no record, zero counts, and no field
/// in the JSON report.
#[test]
fn messages_accounting_nothing_pending_reports_nothing() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("t"), |cx| {
        cx.bounce_after(ms(1), Message::new(1, 0, 0)).unwrap();
        assert_eq!(cx.read(Read::Wait).unwrap().id, 1);
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.messages, MessageStats::default());
    assert!(refusals(&out).is_empty());
    let json = tempi::trace::report::to_json(&out);
    assert!(!json.contains("handler_queue_full") && !json.contains("timed_messages"), "{json}");
}

/// `r` ends at 2 ms without reading: the two messages `s` sent it at 0 ms and the call `s`
/// made at 1 ms were never served. The call is answered `Unanswered` when `r` ends, and all
/// three are counted as left by their receiver (not as queued at the run's end, which comes
/// later, at 5 ms).
#[test]
fn messages_accounting_messages_left_by_an_ending_thread_are_counted() {
    let mut rt = Runtime::simulated(1);
    let r = rt.spawn(ThreadSpec::new("r").priority(1), |cx| cx.sleep(ms(2))).unwrap();
    let answer = Arc::new(Mutex::new(None));
    let a = answer.clone();
    rt.spawn(ThreadSpec::new("s").priority(2), move |cx| {
        cx.send(r, Message::new(1, 0, 0)).unwrap();
        cx.send(r, Message::new(2, 0, 0)).unwrap();
        cx.sleep(ms(1));
        let got = cx.call(r, Message::new(3, 0, 0)).map(|m| m.id);
        *a.lock().unwrap() = Some((got, cx.now()));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("late").priority(0), |cx| cx.sleep_until(Time::from_millis(5))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(*answer.lock().unwrap(), Some((Err(MsgError::Unanswered), Time::from_millis(2))));
    assert_eq!(out.messages.unserved_at_receiver_end, 3);
    assert_eq!(out.messages.queued_at_end, 0);
    let json = tempi::trace::report::to_json(&out);
    assert!(json.contains(r#""messages_unserved_at_receiver_end": 3"#), "{json}");
    assert!(tempi::trace::report::summary_text(&out).contains("never served: 3"));
}
