//! Predictable memory for messages: after start-up, message traffic (send, call, reply, read,
//! save, read_saved, refusals for a full queue, timed messages armed, delivered, cancelled and
//! refused at expiry, typed payloads attached, taken, and given back by the runtime for
//! messages refused or read past) does not allocate. A counting global allocator
//! compares a run with a run four times as long: the allocation counts must be equal.

use crate::common;

use common::counting::allocations;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::{ms, us};
use tempi::message::{Flow, Message, MsgError, Read, Selection};
use tempi::{Config, Runtime, ThreadSpec, Time};

/// Allocations during the run, refusals, rounds of the timer loop, refusals of its messages.
fn allocations_for(horizon_ms: u64) -> (u64, u64, u64, u64) {
    let cfg = Config::new(2).trace_capacity(400_000).message_pool(16);
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(cfg).unwrap();
    // Payloads on the calls (taken by the server), on the sends to the sink and on the timed
    // messages (read past untaken, or refused: given back by the runtime). Any leak would
    // exhaust the pool and fail an `attach`.
    let pay = rt.payload_pool::<[u64; 4]>(32).unwrap();
    let server_pay = pay.clone();
    // A server that answers calls at once, but parks every third one in its save queue and
    // serves it at the next call.
    let mut n = 0u64;
    let server = rt
        .spawn_process(ThreadSpec::new("server").priority(5).mailbox(4), move |cx, m| {
            n += 1;
            if m.expects_reply {
                assert_eq!(server_pay.take(&m).unwrap()[0], m.id as u64);
            }
            if m.expects_reply && n.is_multiple_of(3) {
                cx.save(0, m).unwrap();
                return Flow::Continue;
            }
            cx.work(ms(1));
            if m.expects_reply {
                cx.reply(Message::new(m.id, m.value + 1, 0)).unwrap();
                if let Ok(parked) = cx.read_saved(0, Selection::any()) {
                    cx.reply(Message::new(parked.id, parked.value + 1, 0)).unwrap();
                }
            }
            Flow::Continue
        })
        .unwrap();
    // A sink on the other CPU that drains what it is sent.
    let sink = rt
        .spawn(ThreadSpec::new("sink").cpu(1).priority(1).mailbox(2), |cx| loop {
            if cx.read(Read::Timeout(ms(3))).is_ok() {
                cx.work(ms(2));
            }
        })
        .unwrap();
    let jobs = (horizon_ms / 5) as u32;
    for i in 0..2u64 {
        let pay = pay.clone();
        rt.spawn(
            ThreadSpec::new(format!("client{i}")).periodic(ms(5)).priority(i as i32 + 1).max_jobs(jobs),
            move |cx| {
                let a = cx.call(server, pay.attach(Message::new(i as i64, 1, 0), [i; 4]).unwrap()).unwrap();
                assert_eq!(a.value, 2);
                for _ in 0..3 {
                    match cx.send(sink, pay.attach(Message::new(0, 0, 0), [7; 4]).unwrap()) {
                        Ok(()) | Err(MsgError::QueueFull) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
                cx.send(server, Message::new(9, 0, 0)).unwrap();
            },
        )
        .unwrap();
    }
    // A loop driven by its own bounced timers, which also arms and cancels a second one each
    // round and sends a timed message to the sink that is often refused at expiry for a full
    // queue.
    let rounds = Arc::new(AtomicU64::new(0));
    let r = rounds.clone();
    let tick_pay = pay.clone();
    rt.spawn(ThreadSpec::new("ticker").priority(3), move |cx| {
        cx.bounce_after(ms(2), Message::new(0, 0, 0)).unwrap();
        loop {
            let m = cx.read(Read::Wait).unwrap();
            let spare = cx.bounce_after(ms(1), Message::new(1, 0, 0)).unwrap();
            cx.work(us(100));
            r.fetch_add(1, Ordering::Relaxed);
            assert_eq!(cx.cancel_timer(spare).unwrap().id, 1);
            match cx.send_after(ms(1), sink, tick_pay.attach(Message::new(7, 0, 0), [3; 4]).unwrap()) {
                Ok(_) | Err(MsgError::PoolFull) => {}
                Err(e) => panic!("{e}"),
            }
            cx.bounce_after(ms(2), Message::new(m.id + 1, 0, 0)).unwrap();
        }
    })
    .unwrap();
    let before = allocations();
    let out = rt.run_until(Time::from_millis(horizon_ms + 10)).unwrap();
    let after = allocations();
    assert_eq!(out.trace_dropped, 0);
    // Every payload is back: taken, or given back with its message.
    assert_eq!(pay.available(), 32);
    let completed: u64 = out.threads.iter().map(|t| t.stats.completed).sum();
    assert_eq!(completed, 2 * jobs as u64);
    let refused = out.trace.iter().filter(|r| r.kind == tempi::trace::TraceKind::MessageRefused).count() as u64;
    let timed_refused = out
        .trace
        .iter()
        .filter(|r| {
            r.kind == tempi::trace::TraceKind::MessageRefused
                && out.thread(r.thread).is_some_and(|t| t.name == "ticker")
        })
        .count() as u64;
    (after - before, refused, rounds.load(Ordering::Relaxed), timed_refused)
}

#[test]
fn messages_steady_state_traffic_does_not_allocate() {
    let (short, refused_short, rounds_short, timed_short) = allocations_for(1_000);
    let (long, refused_long, rounds_long, timed_long) = allocations_for(4_000);
    // The timer loop ran all along, and some of its timed messages were refused (at the
    // request for a full pool, at expiry for a full queue).
    assert!(rounds_short > 300 && rounds_long > 4 * rounds_short - 100, "{rounds_short} {rounds_long}");
    assert!(timed_short > 0 && timed_long > timed_short);
    // Full queues were hit, and more often in the longer run: the refusals are on the path
    // measured too.
    assert!(refused_short > 0 && refused_long > refused_short);
    assert_eq!(short, long, "a longer run allocated more ({short} vs {long})");
}
