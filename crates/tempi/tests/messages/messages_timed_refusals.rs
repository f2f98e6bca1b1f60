//! Timed messages refused at their instant leave a count whatever the trace capacity: with
//! tracing off, each is counted in `MessageStats` by cause, shown in the text summary and the
//! JSON report, and its sender can read what its messages met (`Ctx::timed_refusals`).

use crate::common;

use std::sync::{Arc, Mutex};

use common::ms;
use tempi::message::{Message, MsgError, Read, TimedRefusal, TimedRefusals};
use tempi::policy::queue::QueuePolicy;
use tempi::policy::sched::SchedInfo;
use tempi::trace::report;
use tempi::{Config, MessageStats, Runtime, ThreadSpec, Time};

/// Refuses every message with a negative constraint.
struct NoNegatives;

impl QueuePolicy for NoNegatives {
    fn name(&self) -> &str {
        "no-negatives"
    }
    fn rank(&self, _: &SchedInfo) -> i64 {
        0
    }
    fn rank_message(&self, msg: &Message, _: &SchedInfo) -> Option<i64> {
        (msg.constraint >= 0).then_some(0)
    }
}

/// Five timed messages, tracing off: to `full` (a queue of one it never reads) at 1 and 2 ms,
/// the second refused for a full queue; to `picky` at 3 ms, refused by its policy; to `brief`
/// (which ends at 1 ms) at 4 ms, dropped at its end. `sender` reads its record at 0.5, 2.5 and
/// 5 ms. The first to `full` stays unread in its queue, the bounce at 5 ms is read; the other
/// three are refused.
#[test]
fn messages_timed_refusals_are_counted_reported_and_told_to_the_sender_with_tracing_off() {
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(Config::new(1).trace_capacity(0)).unwrap();
    let full = rt.spawn(ThreadSpec::new("full").priority(3).mailbox(1), |cx| cx.sleep(ms(10))).unwrap();
    let picky = rt
        .spawn(ThreadSpec::new("picky").priority(3).message_queue(NoNegatives), |cx| {
            assert_eq!(cx.read(Read::Timeout(ms(10))), Err(MsgError::Timeout));
        })
        .unwrap();
    let brief = rt.spawn(ThreadSpec::new("brief").priority(3), |cx| cx.sleep(ms(1))).unwrap();
    let seen: Arc<Mutex<Vec<TimedRefusals>>> = Arc::default();
    let record = seen.clone();
    rt.spawn(ThreadSpec::new("sender").priority(1), move |cx| {
        cx.send_at(Time::from_millis(1), full, Message::new(1, 0, 0)).unwrap();
        cx.send_at(Time::from_millis(2), full, Message::new(2, 0, 0)).unwrap();
        cx.send_at(Time::from_millis(3), picky, Message::new(3, 0, -1)).unwrap();
        cx.send_at(Time::from_millis(4), brief, Message::new(4, 0, 0)).unwrap();
        cx.bounce_after(ms(5), Message::new(5, 0, 0)).unwrap();
        for at in [Time::from_nanos(500_000), Time::from_nanos(2_500_000)] {
            cx.sleep_until(at);
            record.lock().unwrap().push(cx.timed_refusals().unwrap());
        }
        assert_eq!(cx.read(Read::Wait).unwrap().id, 5);
        assert_eq!(cx.now(), Time::from_millis(5));
        record.lock().unwrap().push(cx.timed_refusals().unwrap());
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(out.trace.is_empty());
    assert_eq!(
        out.messages,
        MessageStats {
            timed_refused_queue_full: 1,
            timed_refused_by_policy: 1,
            timed_refused_recipient_ended: 1,
            // The one `full` never read, at its end.
            unserved_at_receiver_end: 1,
            ..Default::default()
        }
    );
    assert_eq!(out.messages.timed_refused(), 3);
    let refusal = |to, id, constraint, error, at_ms| TimedRefusal {
        to,
        msg: Message { from: Some(out.thread_named("sender").unwrap().id), ..Message::new(id, 0, constraint) },
        error,
        at: Time::from_millis(at_ms),
    };
    assert_eq!(
        *seen.lock().unwrap(),
        [
            // `brief` ended at 1 ms, after this read: nothing yet.
            TimedRefusals { count: 0, last: None },
            TimedRefusals { count: 2, last: Some(refusal(full, 2, 0, MsgError::QueueFull, 2)) },
            TimedRefusals { count: 3, last: Some(refusal(picky, 3, -1, MsgError::Refused, 3)) },
        ]
    );
    let text = report::summary_text(&out);
    for line in [
        "timed messages refused at their instant, recipient's queue full: 1",
        "timed messages refused at their instant by the recipient's queue policy: 1",
        "timed messages dropped, their recipient ended: 1",
    ] {
        assert!(text.contains(line), "{text}");
    }
    assert!(!text.contains("request queue full"), "{text}");
    let json = report::to_json(&out);
    for field in [
        r#""timed_messages_refused_queue_full": 1"#,
        r#""timed_messages_refused_by_policy": 1"#,
        r#""timed_messages_refused_recipient_ended": 1"#,
    ] {
        assert!(json.contains(field), "{json}");
    }
    assert!(!json.contains("timed_messages_refused_cpu_queue_full"), "{json}");
    assert!(!json.contains("timed_messages_refused_pool_full"), "{json}");
}

/// Real time: a timed message refused on the recipient's CPU (its queue of one is full) is
/// counted there and told back to its sender on the other CPU. Properties only: the sender
/// polls for the answer with a generous bound.
#[test]
fn messages_timed_refusals_on_another_real_time_cpu_come_back_to_the_sender() {
    let cfg = Config::new(2).pin(false);
    let mut rt = Runtime::<tempi::clock::RealClock>::new(cfg).unwrap();
    let full = rt.spawn(ThreadSpec::new("full").cpu(1).mailbox(1), |cx| cx.sleep(ms(300))).unwrap();
    let told: Arc<Mutex<Option<TimedRefusals>>> = Arc::default();
    let record = told.clone();
    rt.spawn(ThreadSpec::new("sender").cpu(0), move |cx| {
        cx.send_after(ms(20), full, Message::new(1, 0, 0)).unwrap();
        cx.send_after(ms(20), full, Message::new(2, 0, 0)).unwrap();
        for _ in 0..200 {
            cx.sleep(ms(1));
            let seen = cx.timed_refusals().unwrap();
            if seen.count > 0 {
                *record.lock().unwrap() = Some(seen);
                break;
            }
        }
    })
    .unwrap();
    let out = rt.run().unwrap();
    let seen = told.lock().unwrap().expect("the refusal came back within 200 ms");
    assert_eq!(seen.count, 1);
    let last = seen.last.unwrap();
    assert_eq!((last.to, last.msg.id, last.error), (full, 2, MsgError::QueueFull));
    assert_eq!(out.messages.timed_refused_queue_full, 1);
    assert_eq!(out.messages.timed_refused(), 1);
}
