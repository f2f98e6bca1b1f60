//! A payload pool made by one runtime and carried by the messages of another: every message
//! the second runtime does not deliver gives its slot back to the pool, as with the
//! runtime's own pool.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::ms;
use common::payloads::{tracked, Tracked};
use tempi::message::{Message, MsgError, PayloadPool};
use tempi::{Runtime, ThreadSpec};

/// In `rt`, with `pool` (of 4 slots): a send to an ended thread, a send to a full queue and a
/// message left unread when its recipient ends. Returns the three sends' answers.
fn three_undelivered(
    mut rt: Runtime<tempi::clock::VirtualClock>,
    pool: PayloadPool<Tracked>,
    drops: &Arc<AtomicUsize>,
) -> Vec<Result<(), MsgError>> {
    let gone = rt.spawn(ThreadSpec::new("gone").priority(3), |_| {}).unwrap();
    // Never reads; one message fills its queue; it ends at 1 ms with it unread.
    let deaf = rt.spawn(ThreadSpec::new("deaf").mailbox(1).priority(1), |cx| cx.work(ms(1))).unwrap();
    let answers = Arc::new(Mutex::new(Vec::new()));
    let (a, d) = (answers.clone(), drops.clone());
    rt.spawn(ThreadSpec::new("sender").priority(2), move |cx| {
        let mut a = a.lock().unwrap();
        a.push(cx.send(deaf, tracked(&pool, &d, Message::new(1, 0, 0), 1)));
        a.push(cx.send(deaf, tracked(&pool, &d, Message::new(2, 0, 0), 2)));
        a.push(cx.send(gone, tracked(&pool, &d, Message::new(3, 0, 0), 3)));
    })
    .unwrap();
    rt.run().unwrap();

    answers.lock().unwrap().clone()
}

#[test]
fn foreign_payloads_a_pool_of_another_runtime_gets_every_slot_back() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut a = Runtime::simulated(1);
    let pool = a.payload_pool::<Tracked>(4).unwrap();
    let b = Runtime::simulated(1);
    let answers = three_undelivered(b, pool.clone(), &drops);
    assert_eq!(answers[0], Ok(()));
    assert_eq!(answers[1], Err(MsgError::QueueFull));
    assert!(matches!(answers[2], Err(MsgError::NoSuchThread(_))));
    assert_eq!(pool.available(), 4);
    assert_eq!(drops.load(Ordering::Relaxed), 3);
    drop(a);
}

#[test]
fn foreign_payloads_the_runtimes_own_pool_gets_every_slot_back() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut b = Runtime::simulated(1);
    let pool = b.payload_pool::<Tracked>(4).unwrap();
    let answers = three_undelivered(b, pool.clone(), &drops);
    assert_eq!(answers[0], Ok(()));
    assert_eq!(answers[1], Err(MsgError::QueueFull));
    assert!(matches!(answers[2], Err(MsgError::NoSuchThread(_))));
    assert_eq!(pool.available(), 4);
    assert_eq!(drops.load(Ordering::Relaxed), 3);
}

/// A pool dropped everywhere but in a message of another runtime: the slot has nowhere to go,
/// and the value is dropped with the pool.
#[test]
fn foreign_payloads_a_dropped_pool_is_not_needed() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut a = Runtime::simulated(1);
    let pool = a.payload_pool::<Tracked>(1).unwrap();
    let msg = tracked(&pool, &drops, Message::new(1, 0, 0), 1);
    drop(a);
    drop(pool);
    assert_eq!(drops.load(Ordering::Relaxed), 1);
    let mut b = Runtime::simulated(1);
    let gone = b.spawn(ThreadSpec::new("gone").priority(2), |_| {}).unwrap();
    let answer = Arc::new(Mutex::new(None));
    let s = answer.clone();
    b.spawn(ThreadSpec::new("sender"), move |cx| *s.lock().unwrap() = Some(cx.send(gone, msg))).unwrap();
    b.run().unwrap();
    assert!(matches!(*answer.lock().unwrap(), Some(Err(MsgError::NoSuchThread(_)))));
    assert_eq!(drops.load(Ordering::Relaxed), 1);
}
