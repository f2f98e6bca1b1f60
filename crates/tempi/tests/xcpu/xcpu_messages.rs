//! Messages between threads of different CPUs in real time (each CPU its own kernel and
//! pool; requests and answers through the CPUs' queues), checked against the same
//! application in virtual time. Properties only, no timing.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tempi::clock::{Clock, RealClock};
use tempi::message::{Flow, Message, MsgError, Read};
use tempi::{Config, Runtime, ThreadOutcome, ThreadSpec};

fn real(cpus: usize) -> Runtime<RealClock> {
    Runtime::new(Config::new(cpus).pin(false)).unwrap()
}

/// 10,000 calls from CPU 0 to a server on CPU 1 (20,000 messages), then 10,000 asynchronous
/// sends whose replies come back as messages: nothing is lost, everything in order.
#[test]
fn xcpu_messages_ping_pong_loses_nothing() {
    const N: i64 = 10_000;
    let mut rt = real(2);
    let server = rt
        .spawn(ThreadSpec::new("server").cpu(1), |cx| {
            for _ in 0..2 * N {
                let m = cx.read(Read::Wait).unwrap();
                cx.reply(Message::new(m.id, m.value + 1, 0)).unwrap();
            }
        })
        .unwrap();
    let replies = Arc::new(Mutex::new((Vec::new(), Vec::new())));
    let r = replies.clone();
    rt.spawn(ThreadSpec::new("client").cpu(0), move |cx| {
        let mut calls = Vec::with_capacity(N as usize);
        for v in 0..N {
            let a = cx.call(server, Message::new(1, v, 0)).unwrap();
            assert_eq!(a.from, Some(server));
            calls.push(a.value);
        }
        let mut sends = Vec::with_capacity(N as usize);
        for v in 0..N {
            cx.send(server, Message::new(2, v, 0)).unwrap();
            // The reply to an asynchronous message comes back as a message.
            let m = cx.read(Read::Wait).unwrap();
            assert_eq!((m.from, m.expects_reply), (Some(server), false));
            sends.push(m.value);
        }
        *r.lock().unwrap() = (calls, sends);
    })
    .unwrap();
    let out = rt.run().unwrap();
    let (calls, sends) = replies.lock().unwrap().clone();
    let want: Vec<i64> = (1..=N).collect();
    assert_eq!(calls, want);
    assert_eq!(sends, want);
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)));
    assert_eq!(out.cross_cpu.queue_full, 0);
}

/// What the client of [`app`] saw: each call's result, in order.
type Seen = Arc<Mutex<Vec<Result<i64, MsgError>>>>;

/// One application on any clock: a server on CPU 1 with a queue of two and a pool, a process
/// that ends, and a client on CPU 0 exercising replies, refusals and errors.
fn app<C: Clock>(rt: &mut Runtime<C>) -> Seen {
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let gate = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let g = gate.clone();
    let server = rt
        .spawn(ThreadSpec::new("server").cpu(1).mailbox(2), move |cx| {
            // Wait until the client has filled the queue (and seen it full).
            while !g.load(std::sync::atomic::Ordering::Acquire) {
                cx.sleep(Duration::from_micros(50));
            }
            for _ in 0..2 {
                let m = cx.read(Read::Wait).unwrap();
                assert_eq!(m.id, 1);
            }
            g.store(false, std::sync::atomic::Ordering::Release);
            // A call read and then read past: its caller gets `Unanswered`.
            let _ = cx.read(Read::Wait).unwrap();
            let m = cx.read(Read::Wait).unwrap();
            cx.reply(Message::new(0, m.value * 10, 0)).unwrap();
        })
        .unwrap();
    let quits = rt.spawn_process(ThreadSpec::new("quits").cpu(1), |_, _| Flow::Stop).unwrap();
    let s = seen.clone();
    rt.spawn(ThreadSpec::new("client").cpu(0), move |cx| {
        let push = |r: Result<i64, MsgError>| s.lock().unwrap().push(r);
        push(cx.send(server, Message::new(1, 0, 0)).map(|()| 1));
        push(cx.send(server, Message::new(1, 0, 0)).map(|()| 2));
        push(cx.send(server, Message::new(1, 0, 0)).map(|()| 3));
        gate.store(true, std::sync::atomic::Ordering::Release);
        // Wait for the server to have emptied its queue.
        while gate.load(std::sync::atomic::Ordering::Acquire) {
            cx.sleep(Duration::from_micros(50));
        }
        push(cx.call(server, Message::new(2, 4, 0)).map(|m| m.value));
        push(cx.call(server, Message::new(3, 5, 0)).map(|m| m.value));
        push(cx.send(quits, Message::new(0, 0, 0)).map(|()| 6));
        // Wait for it to have ended; then it cannot be sent to any more.
        while cx.send(quits, Message::new(0, 0, 0)).is_ok() {
            cx.sleep(Duration::from_micros(50));
        }
        push(cx.send(quits, Message::new(0, 0, 0)).map(|()| 7));
        push(cx.call(cx.id(), Message::new(0, 0, 0)).map(|m| m.value));
    })
    .unwrap();
    seen
}

/// The same sends, calls and errors on both clocks give the same results.
#[test]
fn xcpu_messages_real_time_answers_as_virtual_time() {
    let expected = |quits| {
        vec![
            Ok(1),
            Ok(2),
            Err(MsgError::QueueFull),
            Err(MsgError::Unanswered),
            Ok(50),
            Ok(6),
            Err(MsgError::NoSuchThread(quits)),
            Err(MsgError::CallSelf),
        ]
    };
    let mut sim = Runtime::simulated(2);
    let virtual_seen = app(&mut sim);
    let out = sim.run().unwrap();
    assert_eq!(*virtual_seen.lock().unwrap(), expected(out.thread_named("quits").unwrap().id));
    let mut rt = real(2);
    let real_seen = app(&mut rt);
    let out = rt.run().unwrap();
    assert_eq!(*real_seen.lock().unwrap(), expected(out.thread_named("quits").unwrap().id));
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)));
}

/// A timed message to another CPU's thread arrives there, no earlier than asked; one whose
/// recipient has ended is traced as refused, on the sender.
#[test]
fn xcpu_messages_timed_message_to_another_cpu() {
    let mut rt = real(2);
    let far = rt
        .spawn(ThreadSpec::new("far").cpu(1), |cx| {
            let m = cx.read(Read::Wait).unwrap();
            assert_eq!(m.id, 9);
            assert!(cx.now().as_nanos() >= m.value as u64, "delivered before its instant");
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("near").cpu(0), move |cx| {
        let at = cx.now() + Duration::from_millis(2);
        cx.send_at(at, far, Message::new(9, at.as_nanos() as i64, 0)).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)));
}

/// A request queue of one entry, flooded: a send that finds it full fails with
/// `CpuQueueFull`, counted; none is dropped silently.
#[test]
fn xcpu_messages_full_request_queue_is_an_error() {
    let mut rt: Runtime<RealClock> = Runtime::new(Config::new(3).pin(false).cross_cpu_queue(1)).unwrap();
    let got = Arc::new(Mutex::new(0u64));
    let g = got.clone();
    let sink = rt
        .spawn(ThreadSpec::new("sink").cpu(2).mailbox(4096), move |cx| {
            while cx.read(Read::Timeout(Duration::from_millis(200))).is_ok() {
                *g.lock().unwrap() += 1;
            }
        })
        .unwrap();
    let (sent, fails) = (Arc::new(Mutex::new(0u64)), Arc::new(Mutex::new(0u64)));
    for cpu in 0..2 {
        let (s, f) = (sent.clone(), fails.clone());
        rt.spawn(ThreadSpec::new(format!("flood{cpu}")).cpu(cpu), move |cx| {
            for v in 0..1000 {
                match cx.send(sink, Message::new(0, v, 0)) {
                    Ok(()) => *s.lock().unwrap() += 1,
                    Err(MsgError::CpuQueueFull { cpu: 2, capacity: 1 }) => *f.lock().unwrap() += 1,
                    Err(e) => panic!("{e:?}"),
                }
            }
        })
        .unwrap();
    }
    let out = rt.run().unwrap();
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)));
    // Every message a send reported delivered was received; every refusal was counted where
    // it happened (answers that had to wait for room count too).
    assert_eq!(*got.lock().unwrap(), *sent.lock().unwrap());
    assert_eq!(*sent.lock().unwrap() + *fails.lock().unwrap(), 2000);
    assert!(out.cross_cpu.queue_full >= *fails.lock().unwrap());
}
