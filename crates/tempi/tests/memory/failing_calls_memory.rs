//! Predictable memory on the failing paths: after start-up, a runtime call that is refused
//! allocates nothing, as one that succeeds does not. A counting global allocator (per OS
//! thread: a virtual-time run, and a real-time CPU's dispatcher with its threads, each stay on
//! one) counts what the dispatch, lock, message and accounting paths allocate while a thread
//! makes hundreds of refused calls: the count must be zero.

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::counting::allocations;
use common::ms;
use tempi::clock::{RealClock, VirtualClock};
use tempi::message::{Message, MsgError};
use tempi::sync::{LockError, LockSpec, SemSpec};
use tempi::{Config, Error, Runtime, ThreadOutcome, ThreadSpec};

/// Refused calls of each kind made by the measured thread.
const ROUNDS: u64 = 200;

/// In virtual time, `ROUNDS` rounds of refusals of every kind the calls of one CPU can meet:
/// releases of an ended and of a periodic thread, a kill and a priority change of an ended
/// thread, a join of itself (and one of the ended thread), a lock taken by another thread and one held already, a semaphore
/// with no unit and one at its maximum, and messages to a full queue and to an ended thread.
/// Returns the allocations the refusals made and the calls refused.
fn refusals_in_virtual_time() -> (u64, u64) {
    let cfg = Config::new(1).trace_capacity(0);
    let mut rt = Runtime::<VirtualClock>::new(cfg).unwrap();
    let ended = rt.spawn(ThreadSpec::new("ended").priority(9), |_| {}).unwrap();
    let periodic = rt.spawn(ThreadSpec::new("periodic").periodic(ms(1000)).max_jobs(1), |_| {}).unwrap();
    // A recipient that never reads: its queue of one is full after the first send.
    let inbox = rt.spawn(ThreadSpec::new("inbox").mailbox(1), |cx| cx.sleep(ms(100))).unwrap();
    let taken = Arc::new(rt.create_mutex(0u32, LockSpec::new("taken")).unwrap());
    let mine = Arc::new(rt.create_mutex(0u32, LockSpec::new("mine")).unwrap());
    let empty = Arc::new(rt.create_semaphore(SemSpec::new("empty", 0)).unwrap());
    let full = Arc::new(rt.create_semaphore(SemSpec::new("full", u64::MAX)).unwrap());
    let holding = Arc::new(AtomicBool::new(false));
    let (taken1, holding1) = (taken.clone(), holding.clone());
    rt.spawn(ThreadSpec::new("holder").priority(8), move |cx| {
        let _g = taken1.lock(cx).unwrap();
        holding1.store(true, Ordering::Relaxed);
        cx.sleep(ms(50));
    })
    .unwrap();
    let counts = Arc::new((AtomicU64::new(u64::MAX), AtomicU64::new(0)));
    let seen = counts.clone();
    rt.spawn(ThreadSpec::new("refused").priority(1), move |cx| {
        assert!(holding.load(Ordering::Relaxed), "the holder took its lock first");
        assert_eq!(cx.send(inbox, Message::new(0, 0, 0)), Ok(()));
        let me = cx.id();
        let _held = mine.lock(cx).unwrap();
        let mut refused = 0;
        let mut count = |ok: bool| {
            assert!(ok);
            refused += 1;
        };
        let before = allocations();
        for _ in 0..ROUNDS {
            count(cx.release(ended) == Err(Error::UnknownThread(ended)));
            count(cx.release(periodic) == Err(Error::NotSporadic(periodic)));
            count(cx.kill(ended) == Err(Error::UnknownThread(ended)));
            count(cx.set_priority_of(ended, 3) == Err(Error::UnknownThread(ended)));
            count(cx.join(me) == Err(Error::JoinSelf));
            // Not a refusal, but the same path: the outcome of an ended thread comes back settled.
            count(cx.join(ended) == Ok(ThreadOutcome::Completed));
            count(matches!(taken.try_lock(cx), Err(LockError::WouldBlock)));
            count(matches!(mine.try_lock(cx), Err(LockError::AlreadyHeld)));
            count(empty.try_procure(cx) == Err(LockError::WouldBlock));
            count(full.vacate(cx) == Err(LockError::Overflow));
            count(cx.send(inbox, Message::new(1, 0, 0)) == Err(MsgError::QueueFull));
            count(cx.send(ended, Message::new(2, 0, 0)) == Err(MsgError::NoSuchThread(ended)));
        }
        let after = allocations();
        seen.0.store(after - before, Ordering::Relaxed);
        seen.1.store(refused, Ordering::Relaxed);
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("refused").unwrap().outcome, Some(ThreadOutcome::Completed));
    (counts.0.load(Ordering::Relaxed), counts.1.load(Ordering::Relaxed))
}

#[test]
fn failing_calls_in_virtual_time_allocate_nothing() {
    let (allocated, refused) = refusals_in_virtual_time();
    assert_eq!(refused, 12 * ROUNDS);
    assert_eq!(allocated, 0, "{refused} refused calls made {allocated} allocations");
}

/// In real time, releases, kills and priority changes of a thread of another CPU whose
/// request queue is full (its dispatcher is held by a thread that makes no runtime call), and
/// a message posted there: each is refused with the queue's error, counted and traced, and
/// allocates nothing on the caller's CPU.
#[test]
fn failing_calls_against_a_full_queue_of_another_cpu_allocate_nothing() {
    let cfg = Config::new(2).pin(false).cross_cpu_queue(1).trace_capacity(4096);
    let mut rt = Runtime::<RealClock>::new(cfg).unwrap();
    let (hogging, done) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let (h, d) = (hogging.clone(), done.clone());
    rt.spawn(ThreadSpec::new("hog").cpu(1).priority(9), move |_| {
        h.store(true, Ordering::Release);
        let start = Instant::now();
        while !d.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(20) {
            std::hint::spin_loop();
        }
    })
    .unwrap();
    let target = rt.spawn(ThreadSpec::new("target").cpu(1).sporadic(Duration::ZERO).max_jobs(1), |_| {}).unwrap();
    let counts = Arc::new((AtomicU64::new(u64::MAX), AtomicU64::new(0)));
    let seen = counts.clone();
    rt.spawn(ThreadSpec::new("caller").cpu(0), move |cx| {
        while !hogging.load(Ordering::Acquire) {
            cx.sleep(Duration::from_micros(100));
        }
        // Fills the queue of one.
        assert_eq!(cx.release(target), Ok(()));
        let full = Error::QueueFull { cpu: 1, capacity: 1 };
        let mut refused = 0;
        let before = allocations();
        for _ in 0..ROUNDS {
            assert_eq!(cx.release(target), Err(full.clone()));
            assert_eq!(cx.kill(target), Err(full.clone()));
            assert_eq!(cx.set_priority_of(target, 2), Err(full.clone()));
            assert_eq!(cx.send(target, Message::new(0, 0, 0)), Err(MsgError::CpuQueueFull { cpu: 1, capacity: 1 }));
            refused += 4;
        }
        let after = allocations();
        seen.0.store(after - before, Ordering::Relaxed);
        seen.1.store(refused, Ordering::Relaxed);
        // A timed message meets the same full queue at its instant: counted, and told.
        cx.send_after(Duration::ZERO, target, Message::new(7, 0, 0)).unwrap();
        cx.sleep(Duration::from_millis(1));
        let told = cx.timed_refusals().unwrap();
        assert_eq!(told.count, 1);
        let last = told.last.unwrap();
        assert_eq!((last.to, last.msg.id, last.error), (target, 7, MsgError::CpuQueueFull { cpu: 1, capacity: 1 }));
        done.store(true, Ordering::Release);
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("caller").unwrap().outcome, Some(ThreadOutcome::Completed));
    let (allocated, refused) = (counts.0.load(Ordering::Relaxed), counts.1.load(Ordering::Relaxed));
    assert_eq!(refused, 4 * ROUNDS);
    assert_eq!(out.cross_cpu.queue_full, 4 * ROUNDS + 1);
    assert_eq!(out.messages.timed_refused_cpu_queue_full, 1);
    assert_eq!(allocated, 0, "{refused} refused calls made {allocated} allocations");
}
