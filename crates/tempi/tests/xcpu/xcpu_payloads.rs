//! Typed payloads across real-time CPUs: a message's payload handle crosses with it, the
//! recipient on the other CPU takes the value, and a reply, a timed message and a handler's
//! call carry payloads the same way. Whatever is not delivered gives its slot back on the
//! CPU that drops it: each test ends with every slot free and every value dropped exactly
//! once. The same application in virtual time gives the same answers. Properties only, no
//! timing.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common;

use common::payloads::{tracked, Tracked};
use tempi::clock::{Clock, RealClock};
use tempi::message::{Handler, Message, MsgError, Read};
use tempi::{Config, Runtime, ThreadOutcome, ThreadSpec};

fn real(cpus: usize) -> Runtime<RealClock> {
    Runtime::new(Config::new(cpus).pin(false)).unwrap()
}

const N: i64 = 2_000;

/// `near` (CPU 0) calls `far` (CPU 1) `N` times, each call carrying a payload that `far`
/// takes, and each reply carrying a new payload back that `near` takes; then sends `N`
/// messages whose payloads `far` takes. Returns the tags `near` got back and those `far`
/// took, in order.
fn ping_pong<C: Clock>(mut rt: Runtime<C>) -> (Vec<i64>, Vec<i64>, usize) {
    let drops = Arc::new(AtomicUsize::new(0));
    let pool = rt.payload_pool::<Tracked>(4).unwrap();
    let far_seen = Arc::new(Mutex::new(Vec::new()));
    let (p, d, fs) = (pool.clone(), drops.clone(), far_seen.clone());
    let far = rt
        .spawn(ThreadSpec::new("far").cpu(1), move |cx| {
            let mut seen = Vec::with_capacity(2 * N as usize);
            for _ in 0..N {
                let m = cx.read(Read::Wait).unwrap();
                seen.push(p.take(&m).unwrap().tag);
                cx.reply(tracked(&p, &d, Message::new(m.id, 0, 0), 10 * m.value + 1)).unwrap();
            }
            for _ in 0..N {
                let m = cx.read(Read::Wait).unwrap();
                seen.push(p.take(&m).unwrap().tag);
            }
            *fs.lock().unwrap() = seen;
        })
        .unwrap();
    let near_seen = Arc::new(Mutex::new(Vec::new()));
    let (p, d, ns) = (pool.clone(), drops.clone(), near_seen.clone());
    rt.spawn(ThreadSpec::new("near").cpu(0), move |cx| {
        let mut seen = Vec::with_capacity(N as usize);
        for v in 0..N {
            let r = cx.call(far, tracked(&p, &d, Message::new(1, v, 0), v)).unwrap();
            seen.push(p.take(&r).unwrap().tag);
        }
        for v in 0..N {
            // The pool has 4 slots: the sends outrun `far` at most by what it holds.
            let m = loop {
                match p.attach(Message::new(2, v, 0), Tracked { tag: -v, drops: d.clone() }) {
                    Ok(m) => break m,
                    Err((MsgError::PayloadPoolFull, value)) => {
                        std::mem::forget(value);
                        cx.sleep(Duration::from_micros(10));
                    }
                    Err((e, _)) => panic!("{e}"),
                }
            };
            cx.send(far, m).unwrap();
        }
        *ns.lock().unwrap() = seen;
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)), "{:?}", out.threads);
    assert_eq!(pool.available(), 4, "every slot free at the end");
    let near = near_seen.lock().unwrap().clone();
    let far = far_seen.lock().unwrap().clone();
    (near, far, drops.load(Ordering::Relaxed))
}

/// Calls with payloads both ways and sends with payloads, across two real-time CPUs: every
/// value arrives once, in order, and the same as in virtual time.
#[test]
fn xcpu_payloads_cross_with_calls_replies_and_sends() {
    let (near, far, drops) = ping_pong(real(2));
    let expected_near: Vec<i64> = (0..N).map(|v| 10 * v + 1).collect();
    let expected_far: Vec<i64> = (0..N).chain((0..N).map(|v| -v)).collect();
    assert_eq!(near, expected_near);
    assert_eq!(far, expected_far);
    // Values forgotten after a full pool were never attached, so never counted.
    assert_eq!(drops, 3 * N as usize);
    let (vnear, vfar, vdrops) = ping_pong(Runtime::simulated(2));
    assert_eq!((vnear, vfar, vdrops), (near, far, drops));
}

/// A handler of CPU 1 called from CPU 0 takes the call's payload and replies with one; a
/// send's payload it leaves untaken goes back to the pool; a timed message crosses with its
/// payload. Every slot is free at the end and every value dropped once.
#[test]
fn xcpu_payloads_reach_handlers_and_timed_messages() {
    let mut rt = real(2);
    let drops = Arc::new(AtomicUsize::new(0));
    let pool = rt.payload_pool::<Tracked>(4).unwrap();
    let taken = Arc::new(Mutex::new(Vec::new()));
    let (p, d, tk) = (pool.clone(), drops.clone(), taken.clone());
    let h = Handler::new("doubler", 1, 4, move |hcx, m| {
        if m.expects_reply {
            let v = p.take(&m).unwrap().tag;
            tk.lock().unwrap().push(v);
            hcx.reply(tracked(&p, &d, Message::new(m.id, 0, 0), 2 * v));
        }
        // A send's payload is left untaken: the runtime gives it back.
    });
    let p = pool.clone();
    let far = rt
        .spawn(ThreadSpec::new("far").cpu(1), move |cx| {
            let m = cx.read(Read::Wait).unwrap();
            assert_eq!(m.id, 5);
            assert_eq!(p.take(&m).unwrap().tag, 55);
        })
        .unwrap();
    let (p, d) = (pool.clone(), drops.clone());
    rt.spawn(ThreadSpec::new("near").cpu(0), move |cx| {
        for v in 1..=50 {
            let r = h.call(cx, tracked(&p, &d, Message::new(3, 0, 0), v)).unwrap();
            assert_eq!(p.take(&r).unwrap().tag, 2 * v);
        }
        h.send(cx, tracked(&p, &d, Message::new(4, 0, 0), 44)).unwrap();
        cx.send_after(Duration::from_millis(1), far, tracked(&p, &d, Message::new(5, 0, 0), 55)).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)), "{:?}", out.threads);
    assert_eq!(*taken.lock().unwrap(), (1..=50).collect::<Vec<_>>());
    assert_eq!(drops.load(Ordering::Relaxed), 50 + 50 + 1 + 1);
    assert_eq!(pool.available(), 4);
}

/// Refusals and answers nobody takes, across CPUs: a send to a thread that has ended (its
/// payload released on the recipient's CPU) and a reply whose caller was killed while it
/// waited (released on the caller's CPU). Nothing leaks.
#[test]
fn xcpu_payloads_not_delivered_go_back_to_their_pool() {
    let mut rt = real(2);
    let drops = Arc::new(AtomicUsize::new(0));
    let pool = rt.payload_pool::<Tracked>(4).unwrap();
    let (got, killed) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let (p, d, g, k) = (pool.clone(), drops.clone(), got.clone(), killed.clone());
    let server = rt
        .spawn(ThreadSpec::new("server").cpu(1), move |cx| {
            let m = cx.read(Read::Wait).unwrap();
            assert_eq!(p.take(&m).unwrap().tag, 1);
            g.store(true, Ordering::Release);
            while !k.load(Ordering::Acquire) {
                cx.sleep(Duration::from_micros(100));
            }
            // The caller is gone: the reply's payload is released where it arrives.
            cx.reply(tracked(&p, &d, Message::new(0, 0, 0), 2)).unwrap();
        })
        .unwrap();
    let (p, d) = (pool.clone(), drops.clone());
    let caller = rt
        .spawn(ThreadSpec::new("caller").cpu(0), move |cx| {
            let _ = cx.call(server, tracked(&p, &d, Message::new(0, 0, 0), 1));
            unreachable!("killed while waiting for the reply");
        })
        .unwrap();
    let gone = rt.spawn(ThreadSpec::new("gone").cpu(1), |_| {}).unwrap();
    let (p, d) = (pool.clone(), drops.clone());
    rt.spawn(ThreadSpec::new("killer").cpu(0), move |cx| {
        cx.join(gone).unwrap();
        // A thread of another CPU that has ended: refused there, the payload released.
        let m = tracked(&p, &d, Message::new(9, 0, 0), 3);
        assert!(matches!(cx.send(gone, m), Err(MsgError::NoSuchThread(_))));
        // Let the call reach the server before the caller is killed.
        while !got.load(Ordering::Acquire) {
            cx.sleep(Duration::from_micros(100));
        }
        cx.kill(caller).unwrap();
        cx.join(caller).unwrap();
        killed.store(true, Ordering::Release);
    })
    .unwrap();
    let out = rt.run().unwrap();
    let outcome = |name: &str| out.threads.iter().find(|t| t.name == name).unwrap().outcome.clone();
    assert_eq!(outcome("server"), Some(ThreadOutcome::Completed));
    assert_eq!(outcome("caller"), Some(ThreadOutcome::Killed));
    assert_eq!(drops.load(Ordering::Relaxed), 3);
    assert_eq!(pool.available(), 4);
}
