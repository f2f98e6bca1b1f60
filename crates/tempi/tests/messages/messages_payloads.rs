//! Typed payloads: values carried by messages from pools sized before the run. Sends, calls,
//! replies, saves and handlers carry them; the receiver takes them back with a type check;
//! and every message the runtime does not deliver (refused, read past, left queued or timed
//! at a thread's or the run's end, refused by a handler's full queue) gives its slot back: each test ends with every slot free and every value dropped
//! exactly once.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::ms;
use common::payloads::{tracked, Tracked};
use tempi::clock::VirtualClock;
use tempi::message::{Handler, Message, MsgError, Read, Selection};
use tempi::{Config, Runtime, ThreadSpec, Time};

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, s: String) {
    log.lock().unwrap().push(s);
}

fn at(t: Time) -> u64 {
    t.as_nanos() / 1_000_000
}

/// A client calls a server with a `String` and gets a `Vec<u32>` back, then sends a string
/// that the server takes later; the exact order and instants, and both pools full again.
#[test]
fn messages_payloads_carried_by_call_reply_and_send() {
    let mut rt = Runtime::simulated(1);
    let texts = rt.payload_pool::<String>(2).unwrap();
    let lists = rt.payload_pool::<Vec<u32>>(1).unwrap();
    let log = Log::default();
    let (t, lst, l) = (texts.clone(), lists.clone(), log.clone());
    let server = rt
        .spawn(ThreadSpec::new("server").priority(2), move |cx| {
            for _ in 0..2 {
                let m = cx.read(Read::Wait).unwrap();
                let s = t.take(&m).unwrap();
                push(&l, format!("server got {s:?}@{}", at(cx.now())));
                cx.work(ms(1));
                if m.expects_reply {
                    let lens: Vec<u32> = s.split(' ').map(|w| w.len() as u32).collect();
                    cx.reply(lst.attach(Message::new(m.id, 0, 0), lens).unwrap()).unwrap();
                }
            }
        })
        .unwrap();
    let (t, lst, l) = (texts.clone(), lists.clone(), log.clone());
    rt.spawn(ThreadSpec::new("client").priority(1), move |cx| {
        let m = t.attach(Message::new(1, 0, 0), "three word question".to_string()).unwrap();
        let answer = cx.call(server, m).unwrap();
        assert_eq!(t.take(&answer), Err(MsgError::WrongPayload));
        push(&l, format!("client got {:?}@{}", lst.take(&answer).unwrap(), at(cx.now())));
        cx.send(server, t.attach(Message::new(2, 0, 0), "bye".to_string()).unwrap()).unwrap();
    })
    .unwrap();
    rt.run().unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        ["server got \"three word question\"@0", "client got [5, 4, 8]@1", "server got \"bye\"@1"]
    );
    assert_eq!((texts.available(), lists.available()), (2, 1));
}

/// Taking checks the pool and the use of the slot; a full pool gives the value back.
#[test]
fn messages_payloads_type_check_and_exhaustion() {
    let mut rt = Runtime::simulated(1);
    let ints = rt.payload_pool::<i64>(1).unwrap();
    let other_ints = rt.payload_pool::<i64>(1).unwrap();
    let m = ints.attach(Message::new(0, 0, 0), 5).unwrap();
    assert_eq!(ints.attach(Message::new(0, 0, 0), 6), Err((MsgError::PayloadPoolFull, 6)));
    assert_eq!(other_ints.take(&m), Err(MsgError::WrongPayload));
    assert_eq!(ints.take(&Message::new(0, 0, 0)), Err(MsgError::NoPayload));
    assert_eq!(ints.take(&m), Ok(5));
    assert_eq!(ints.take(&m), Err(MsgError::StalePayload));
    // The slot is reused under a new stamp: the old handle stays stale.
    let m2 = ints.attach(Message::new(0, 0, 0), 7).unwrap();
    assert_eq!(ints.take(&m), Err(MsgError::StalePayload));
    assert_eq!(ints.take(&m2), Ok(7));
    assert_eq!(MsgError::WrongPayload.to_string(), "the payload belongs to another pool (another type)");
}

/// Every way a message can fail to be delivered between threads gives its payload back:
/// refused for a full queue, read past without being taken, replied to with another payload,
/// timed for a recipient that ends, left in the queue of a thread that ends, still timed or
/// queued when the run ends. A cancelled timed message keeps its payload for its sender.
#[test]
fn messages_payloads_never_leak_between_threads() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut rt: Runtime<VirtualClock> = Runtime::new(Config::new(1).message_pool(16)).unwrap();
    let pool = rt.payload_pool::<Tracked>(16).unwrap();
    // Reads one message without taking its payload, replies with a new one to a call, and
    // ends at 5 ms with two messages queued.
    let (p, d) = (pool.clone(), drops.clone());
    let short = rt
        .spawn(ThreadSpec::new("short").priority(1).mailbox(2), move |cx| {
            let m = cx.read(Read::Wait).unwrap();
            assert!(m.expects_reply);
            cx.reply(tracked(&p, &d, Message::new(0, 0, 0), 100)).unwrap();
            let _ = cx.read(Read::Wait).unwrap();
            cx.sleep(ms(5));
        })
        .unwrap();
    // Never reads: what it is sent is still queued when the run ends.
    let deaf = rt.spawn(ThreadSpec::new("deaf").priority(0).mailbox(4), |cx| cx.sleep(ms(100))).unwrap();
    let (p, d) = (pool.clone(), drops.clone());
    rt.spawn(ThreadSpec::new("sender").priority(2), move |cx| {
        let answer = cx.call(short, tracked(&p, &d, Message::new(1, 0, 0), 1)).unwrap();
        assert_eq!(p.take(&answer).unwrap().tag, 100);
        cx.send(short, tracked(&p, &d, Message::new(2, 0, 0), 2)).unwrap();
        cx.sleep(ms(1));
        cx.send(short, tracked(&p, &d, Message::new(3, 0, 0), 3)).unwrap();
        cx.send(short, tracked(&p, &d, Message::new(4, 0, 0), 4)).unwrap();
        assert_eq!(cx.send(short, tracked(&p, &d, Message::new(5, 0, 0), 5)), Err(MsgError::QueueFull));
        cx.send_at(Time::from_millis(8), short, tracked(&p, &d, Message::new(6, 0, 0), 6)).unwrap();
        let h = cx.send_at(Time::from_millis(9), deaf, tracked(&p, &d, Message::new(7, 0, 0), 7)).unwrap();
        let back = cx.cancel_timer(h).unwrap();
        assert_eq!(p.take(&back).unwrap().tag, 7);
        cx.send(deaf, tracked(&p, &d, Message::new(8, 0, 0), 8)).unwrap();
        cx.send_at(Time::from_millis(50), deaf, tracked(&p, &d, Message::new(9, 0, 0), 9)).unwrap();
        assert_eq!(cx.send(cx.id(), tracked(&p, &d, Message::new(10, 0, 0), 10)), Ok(()));
        assert_eq!(cx.call(cx.id(), tracked(&p, &d, Message::new(11, 0, 0), 11)), Err(MsgError::CallSelf));
    })
    .unwrap();
    let out = rt.run_until(Time::from_millis(20)).unwrap();
    assert_eq!(out.messages.timed_pending_at_end, 1);
    // Twelve values made (ids 1 to 11 and the reply): each dropped once, every slot free.
    assert_eq!(drops.load(Ordering::Relaxed), 12);
    assert_eq!(pool.available(), 16);
}

/// Handlers: a payload not taken goes back when the function returns, a reply can carry the
/// same payload back, a saved message keeps it until served, and a busy handler's full queue
/// gives it back.
#[test]
fn messages_payloads_through_handlers() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut rt = Runtime::simulated(1);
    let pool = rt.payload_pool::<Tracked>(4).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (p, s) = (pool.clone(), seen.clone());
    let h = Handler::new("h", 0, 1, move |hcx, m| match m.id {
        // Echo: the reply carries the caller's payload back.
        0 => hcx.reply(m),
        // Work 2 ms, leaving the payload untaken.
        1 => hcx.work(ms(2)),
        // Park until a message with id 3.
        2 => hcx.save(0, m).unwrap(),
        _ => {
            let w = hcx.read_saved(0, Selection::any()).unwrap();
            s.lock().unwrap().push(p.take(&w).unwrap().tag);
            hcx.reply(Message::new(w.id, 0, 0));
        }
    })
    .save_queues(1);
    let (h1, h2, p, d) = (h.clone(), h.clone(), pool.clone(), drops.clone());
    rt.spawn(ThreadSpec::new("low").priority(1), move |cx| {
        let back = h1.call(cx, tracked(&p, &d, Message::new(0, 0, 0), 10)).unwrap();
        assert_eq!(p.take(&back).unwrap().tag, 10);
        h1.send(cx, tracked(&p, &d, Message::new(1, 0, 0), 11)).unwrap();
        h1.send(cx, tracked(&p, &d, Message::new(3, 0, 0), 13)).unwrap();
    })
    .unwrap();
    let (p, d) = (pool.clone(), drops.clone());
    rt.spawn(ThreadSpec::new("high").priority(3), move |cx| {
        cx.sleep(ms(1));
        // The handler is busy on `low`'s stack: the call is queued, then saved, then served.
        assert!(h2.call(cx, tracked(&p, &d, Message::new(2, 0, 0), 12)).is_ok());
        assert_eq!(cx.now(), Time::from_millis(2));
    })
    .unwrap();
    let (p, d, h3) = (pool.clone(), drops.clone(), h.clone());
    rt.spawn(ThreadSpec::new("mid").priority(2), move |cx| {
        cx.sleep(ms(1));
        // Queue full (one slot, taken by `high`'s call): refused, its payload back.
        assert_eq!(h3.send(cx, tracked(&p, &d, Message::new(9, 0, 0), 19)), Err(MsgError::QueueFull));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(*seen.lock().unwrap(), [12]);
    assert_eq!(out.messages.handler_queue_full, 1);
    assert_eq!(drops.load(Ordering::Relaxed), 5);
    assert_eq!(pool.available(), 4);
}

/// A handler that calls a busy handler (here itself, through a clone) gets `WouldBlock`, and
/// the payload of that call goes back to its pool.
#[test]
fn messages_payloads_released_when_a_handler_would_block() {
    let mut rt = Runtime::simulated(1);
    let drops = Arc::new(AtomicUsize::new(0));
    let pool = rt.payload_pool::<Tracked>(2).unwrap();
    let me: Arc<Mutex<Option<Handler>>> = Arc::default();
    let (p, d, m2) = (pool.clone(), drops.clone(), me.clone());
    let h = Handler::new("h", 0, 1, move |hcx, m| {
        if m.id == 1 {
            let again = m2.lock().unwrap().clone().unwrap();
            let inner = tracked(&p, &d, Message::new(2, 0, 0), 2);
            assert_eq!(hcx.call_handler(&again, inner), Err(MsgError::WouldBlock));
            assert_eq!(p.take(&inner).map(|t| t.tag), Err(MsgError::StalePayload));
        }
    });
    *me.lock().unwrap() = Some(h.clone());
    rt.spawn(ThreadSpec::new("t"), move |cx| h.send(cx, Message::new(1, 0, 0)).unwrap()).unwrap();
    rt.run().unwrap();
    assert_eq!(drops.load(Ordering::Relaxed), 1);
    assert_eq!(pool.available(), 2);
    me.lock().unwrap().take();
}
