//! Timed messages in virtual time: bounced timers in a periodic loop, cancelling before and
//! after expiry, a full queue and an ended recipient at expiry (errors traced on the sender,
//! the message back in the pool), and the pool taken at the request.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{markers, ms};
use tempi::message::{Message, MsgError, Read};
use tempi::trace::TraceKind;
use tempi::{Config, Runtime, ThreadSpec, Time};

type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

fn note(log: &Log, cx: &tempi::Ctx<'_>, what: String) {
    log.lock().unwrap().push(format!("{}@{}", what, cx.now().as_nanos() / 1_000_000));
}

fn take(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

fn refusal_args(out: &tempi::RunOutcome) -> Vec<u64> {
    out.trace.iter().filter(|r| r.kind == TraceKind::MessageRefused).map(|r| r.arg).collect()
}

fn sim(pool: usize) -> Runtime<tempi::clock::VirtualClock> {
    Runtime::new(Config::new(1).message_pool(pool)).unwrap()
}

/// A loop driven by its own bounced messages, each carrying its due instant and re-armed for
/// that instant plus 10 ms: a more urgent thread that holds the CPU from 20 to 23 ms delays
/// one read, not the instants that follow. Two messages of pool suffice (the one being read
/// and the next).
#[test]
fn messages_timers_periodic_bounce_loop_keeps_its_instants() {
    let mut rt = sim(2);
    let l = log();
    let l1 = l.clone();
    rt.spawn(ThreadSpec::new("tick").priority(1), move |cx| {
        cx.send_at(Time::from_millis(10), cx.id(), Message::new(0, 10_000_000, 0)).unwrap();
        loop {
            let m = cx.read(Read::Wait).unwrap();
            assert_eq!(m.from, Some(cx.id()));
            note(&l1, cx, format!("{}", m.id));
            if m.id == 4 {
                return;
            }
            let next = Time::from_nanos(m.value as u64 + 10_000_000);
            cx.send_at(next, cx.id(), Message::new(m.id + 1, next.as_nanos() as i64, 0)).unwrap();
            cx.work(ms(1));
        }
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("hog").priority(5), |cx| {
        cx.sleep_until(Time::from_millis(20));
        cx.work(ms(3));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&l), ["0@10", "1@23", "2@30", "3@40", "4@50"]);
    assert!(refusal_args(&out).is_empty());
    assert_eq!(out.end, Time::from_millis(50));
}

/// `bounce_after` from the read instant: each period starts when the message is read.
#[test]
fn messages_timers_bounce_after_delivers_at_exact_instants() {
    let mut rt = sim(2);
    let l = log();
    let l1 = l.clone();
    rt.spawn(ThreadSpec::new("t"), move |cx| {
        cx.bounce_after(ms(3), Message::new(0, 0, 0)).unwrap();
        for _ in 0..3 {
            let m = cx.read(Read::Wait).unwrap();
            note(&l1, cx, format!("{}", m.id));
            cx.work(ms(1));
            cx.bounce_after(ms(3), Message::new(m.id + 1, 0, 0)).unwrap();
        }
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&l), ["0@3", "1@7", "2@11"]);
    // The last message was armed at 12 for 15 and the thread ended at 12: the message went
    // back to the pool then, traced on its sender (arg 3).
    assert_eq!(markers(&out, TraceKind::MessageRefused), ["t#0@12"]);
    assert_eq!(refusal_args(&out), [3]);
}

/// Cancelling before expiry returns the message and nothing is delivered; cancelling again,
/// or after delivery, is `NoSuchTimer`; another thread cannot cancel it.
#[test]
fn messages_timers_cancel_before_expiry_returns_the_message() {
    let mut rt = sim(1);
    let l = log();
    let l1 = l.clone();
    let shared = Arc::new(Mutex::new(None));
    let sh = shared.clone();
    let t = rt
        .spawn(ThreadSpec::new("t").priority(1), move |cx| {
            let h = cx.bounce_after(ms(5), Message::new(1, 11, 0)).unwrap();
            *sh.lock().unwrap() = Some(h);
            cx.sleep(ms(2));
            let m = cx.cancel_timer(h).unwrap();
            assert_eq!((m.id, m.value, m.from), (1, 11, Some(cx.id())));
            assert_eq!(cx.cancel_timer(h), Err(MsgError::NoSuchTimer));
            assert_eq!(cx.read(Read::Timeout(ms(10))), Err(MsgError::Timeout));
            note(&l1, cx, "nothing".into());
            // The slot went back to the pool: a pool of one serves the next timer.
            let h2 = cx.bounce_after(ms(1), Message::new(2, 0, 0)).unwrap();
            assert_ne!(h, h2);
            let m = cx.read(Read::Wait).unwrap();
            note(&l1, cx, format!("{}", m.id));
            assert_eq!(cx.cancel_timer(h2), Err(MsgError::NoSuchTimer));
        })
        .unwrap();
    let _ = t;
    rt.spawn(ThreadSpec::new("other").priority(2), move |cx| {
        cx.sleep(ms(1));
        let h = shared.lock().unwrap().expect("armed at 0");
        assert_eq!(cx.cancel_timer(h), Err(MsgError::NoSuchTimer));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&l), ["nothing@12", "2@13"]);
    assert!(refusal_args(&out).is_empty());
}

/// The message is taken from the pool at the request: a full pool is an error to the caller
/// at once (traced, arg 0), never at expiry.
#[test]
fn messages_timers_full_pool_is_an_error_at_the_request() {
    let mut rt = sim(2);
    let l = log();
    let l1 = l.clone();
    rt.spawn(ThreadSpec::new("t"), move |cx| {
        cx.bounce_after(ms(4), Message::new(1, 0, 0)).unwrap();
        cx.bounce_after(ms(2), Message::new(2, 0, 0)).unwrap();
        assert_eq!(cx.bounce_after(ms(1), Message::new(3, 0, 0)), Err(MsgError::PoolFull));
        for _ in 0..2 {
            let m = cx.read(Read::Wait).unwrap();
            note(&l1, cx, format!("{}", m.id));
        }
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&l), ["2@2", "1@4"]);
    assert_eq!(markers(&out, TraceKind::MessageRefused), ["t#0@0"]);
    assert_eq!(refusal_args(&out), [0]);
}

/// At expiry the recipient's new queue is full: the message is refused as a send would be,
/// traced on the sender (arg 1) at the expiry instant, and its slot returns to the pool.
#[test]
fn messages_timers_full_queue_at_expiry_is_traced_on_the_sender() {
    let mut rt = sim(2);
    let l = log();
    let l1 = l.clone();
    let r = rt
        .spawn(ThreadSpec::new("r").priority(1).mailbox(1), move |cx| {
            cx.sleep_until(Time::from_millis(20));
            while let Ok(m) = cx.read(Read::Poll) {
                note(&l1, cx, format!("{}", m.id));
            }
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("s").priority(2), move |cx| {
        cx.send(r, Message::new(1, 0, 0)).unwrap();
        cx.send_after(ms(5), r, Message::new(2, 0, 0)).unwrap();
        cx.sleep(ms(6));
        // Both slots are free again: the one refused at 5 came back.
        let a = cx.send_after(ms(30), r, Message::new(3, 0, 0)).unwrap();
        cx.cancel_timer(a).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&l), ["1@20"]);
    assert_eq!(markers(&out, TraceKind::MessageRefused), ["s#0@5"]);
    assert_eq!(refusal_args(&out), [1]);
}

/// The recipient ends before expiry: the message goes back to the pool when it ends and the
/// refusal is traced on the sender (arg 3); the pool of one serves the next request.
#[test]
fn messages_timers_recipient_ended_before_expiry() {
    let mut rt = sim(1);
    let r = rt
        .spawn(ThreadSpec::new("r").priority(1), |cx| {
            cx.work(ms(1));
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("s").priority(2), move |cx| {
        cx.send_after(ms(5), r, Message::new(1, 0, 0)).unwrap();
        cx.sleep(ms(6));
        assert_eq!(cx.send_after(ms(2), r, Message::new(2, 0, 0)), Err(MsgError::NoSuchThread(r)));
        // The pool of one is free again.
        let h = cx.bounce_after(ms(4), Message::new(3, 0, 0)).unwrap();
        assert_eq!(cx.cancel_timer(h).unwrap().id, 3);
        // Armed, then the thread ends at 6: its own message goes back to the pool.
        cx.bounce_after(ms(6), Message::new(4, 0, 0)).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(markers(&out, TraceKind::MessageRefused), ["s#0@1", "s#0@6"]);
    assert_eq!(refusal_args(&out), [3, 3]);
}

/// A send to a recipient that does not exist fails at the request; timed messages cross CPUs
/// in virtual time and arrive at their instant.
#[test]
fn messages_timers_errors_at_request_and_across_cpus_in_virtual_time() {
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(Config::new(2)).unwrap();
    let l = log();
    let l1 = l.clone();
    let far = rt
        .spawn(ThreadSpec::new("far").cpu(1), move |cx| {
            let m = cx.read(Read::Wait).unwrap();
            note(&l1, cx, format!("{}", m.id));
        })
        .unwrap();
    let gone = rt.spawn(ThreadSpec::new("gone").cpu(0).priority(3), |_| {}).unwrap();
    rt.spawn(ThreadSpec::new("s").cpu(0), move |cx| {
        assert_eq!(cx.send_after(ms(1), gone, Message::new(0, 0, 0)), Err(MsgError::NoSuchThread(gone)));
        cx.send_after(ms(7), far, Message::new(9, 0, 0)).unwrap();
    })
    .unwrap();
    rt.run().unwrap();
    assert_eq!(take(&l), ["9@7"]);
}
