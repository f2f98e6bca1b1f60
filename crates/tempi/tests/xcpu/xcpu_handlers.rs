//! Handlers across real-time CPUs: a thread of CPU 0 invokes a handler of CPU 1; the request
//! travels through CPU 1's queue, CPU 1's dispatcher runs the idle handler (or the busy
//! handler's holder drains it), and the answer comes back through CPU 0's queue. The same
//! application runs in virtual time, where the handler runs on the caller's stack, and gives
//! the same answers. Properties only, no timing.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tempi::clock::{Clock, RealClock};
use tempi::message::{Handler, Message, MsgError, Read};
use tempi::{Config, Runtime, ThreadOutcome, ThreadSpec};

const N: i64 = 10_000;

fn real(cpus: usize) -> Runtime<RealClock> {
    Runtime::new(Config::new(cpus).pin(false)).unwrap()
}

/// What the application saw: replies to the calls from each CPU, replies to the sends (as
/// messages), and how many messages the handler served.
#[derive(Debug, Default, PartialEq)]
struct Seen {
    far_calls: Vec<i64>,
    near_calls: Vec<i64>,
    far_sends: Vec<i64>,
    served: i64,
}

/// A handler of CPU 1 answers `3 v + 1`; `far` (CPU 0) calls it `N` times and sends it 1,000
/// messages (each reply comes back as a message), while `near` (CPU 1) calls it 1,000 times
/// from the handler's own CPU.
fn app<C: Clock>(mut rt: Runtime<C>) -> Arc<Mutex<Seen>> {
    let served = Arc::new(AtomicI64::new(0));
    let s = served.clone();
    let h = Handler::new("affine", 1, 16, move |hcx, m| {
        s.fetch_add(1, Ordering::Relaxed);
        hcx.reply(Message::new(m.id, 3 * m.value + 1, 0));
    });
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (hf, hn, sf, sn) = (h.clone(), h.clone(), seen.clone(), seen.clone());
    rt.spawn(ThreadSpec::new("far").cpu(0), move |cx| {
        let mut calls = Vec::with_capacity(N as usize);
        for v in 0..N {
            let r = hf.call(cx, Message::new(7, v, 0)).unwrap();
            assert_eq!(r.id, 7);
            calls.push(r.value);
        }
        let mut sends = Vec::with_capacity(1000);
        for v in 0..1000 {
            hf.send(cx, Message::new(8, v, 0)).unwrap();
            let back = cx.read(Read::Wait).unwrap();
            assert_eq!(back.id, 8);
            sends.push(back.value);
        }
        let mut seen = sf.lock().unwrap();
        seen.far_calls = calls;
        seen.far_sends = sends;
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("near").cpu(1), move |cx| {
        let calls: Vec<i64> = (0..1000).map(|v| hn.call(cx, Message::new(9, v, 0)).unwrap().value).collect();
        sn.lock().unwrap().near_calls = calls;
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)), "{:?}", out.threads);
    seen.lock().unwrap().served = served.load(Ordering::Relaxed);
    seen
}

#[test]
fn xcpu_handlers_ten_thousand_calls_lose_nothing_and_match_virtual_time() {
    let real_seen = app(real(2));
    let virtual_seen = app(Runtime::simulated(2));
    let real_seen = real_seen.lock().unwrap();
    let expected: Vec<i64> = (0..N).map(|v| 3 * v + 1).collect();
    assert_eq!(real_seen.far_calls, expected);
    assert_eq!(real_seen.far_sends, expected[..1000]);
    assert_eq!(real_seen.near_calls, expected[..1000]);
    assert_eq!(real_seen.served, N + 2000);
    assert_eq!(*real_seen, *virtual_seen.lock().unwrap());
}

/// `holder` (CPU 1) calls the handler with a long message: inside, the handler waits until a
/// message is queued (computing in small steps). `far` (CPU 0) calls it meanwhile: the
/// handler is busy, so the call waits in its queue, and `holder`, draining it before leaving
/// the handler, answers `far` across the CPUs. Same log on both clocks.
fn busy<C: Clock>(mut rt: Runtime<C>) -> (Vec<String>, Vec<i64>) {
    let me: Arc<OnceLock<Handler>> = Arc::default();
    let inside = Arc::new(AtomicBool::new(false));
    let log = Arc::new(Mutex::new(Vec::new()));
    let (m2, i2, l2) = (me.clone(), inside.clone(), log.clone());
    let h = Handler::new("slow", 1, 4, move |hcx, m| {
        if m.id == 1 {
            i2.store(true, Ordering::Release);
            let myself = m2.get().expect("set before the run");
            // Bounded: 20,000 steps of 50 µs.
            let mut steps = 0;
            while myself.queued() == 0 && steps < 20_000 {
                hcx.work(Duration::from_micros(50));
                steps += 1;
            }
            l2.lock().unwrap().push(format!("hold saw {} queued", myself.queued()));
        } else {
            l2.lock().unwrap().push(format!("serve {}", m.value));
        }
        hcx.reply(Message::new(m.id, m.value * 10, 0));
    });
    me.set(h.clone()).unwrap();
    let answers = Arc::new(Mutex::new(Vec::new()));
    let (hh, hf, a1, a2) = (h.clone(), h.clone(), answers.clone(), answers.clone());
    rt.spawn(ThreadSpec::new("holder").cpu(1).priority(1), move |cx| {
        let r = hh.call(cx, Message::new(1, 4, 0)).unwrap();
        a1.lock().unwrap().push(r.value);
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("far").cpu(0), move |cx| {
        let mut waited = 0;
        while !inside.load(Ordering::Acquire) && waited < 20_000 {
            cx.sleep(Duration::from_micros(50));
            waited += 1;
        }
        assert!(inside.load(Ordering::Acquire), "the holder never entered the handler");
        let r = hf.call(cx, Message::new(2, 5, 0)).unwrap();
        a2.lock().unwrap().push(r.value);
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)), "{:?}", out.threads);
    let mut answers = answers.lock().unwrap().clone();
    answers.sort();
    let log = log.lock().unwrap().clone();
    (log, answers)
}

#[test]
fn xcpu_handlers_busy_handler_queues_a_call_from_another_cpu() {
    let real_run = busy(real(2));
    assert_eq!(real_run.0, ["hold saw 1 queued", "serve 5"]);
    assert_eq!(real_run.1, [40, 50]);
    assert_eq!(real_run, busy(Runtime::simulated(2)));
}

/// Misuse and limits: a handler of a CPU that does not exist is refused (a payload the
/// message carried goes back to its pool at once); from a handler
/// running on a thread's stack, calling a handler of another CPU would wait (refused), while
/// sending to it goes (its reply comes back as a message).
#[test]
fn xcpu_handlers_errors_and_nested_invocations() {
    let mut rt = real(2);
    let pool = rt.payload_pool::<u64>(1).unwrap();
    let nowhere = Handler::new("nowhere", 5, 1, |_, _| {});
    let far = Handler::new("far", 1, 4, |hcx, m| hcx.reply(Message::new(m.id, m.value + 100, 0)));
    let (f1, f2) = (far.clone(), far.clone());
    let near = Handler::new("near", 0, 4, move |hcx, m| {
        assert_eq!(hcx.call_handler(&f1, m), Err(MsgError::WouldBlock));
        hcx.send_handler(&f2, m).unwrap();
        hcx.reply(m);
    });
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    rt.spawn(ThreadSpec::new("t").cpu(0), move |cx| {
        assert_eq!(nowhere.call(cx, Message::new(0, 1, 0)), Err(MsgError::CrossCpu { from: 0, to: 5 }));
        let carrying = pool.attach(Message::new(0, 2, 0), 7).unwrap();
        assert_eq!(nowhere.send(cx, carrying), Err(MsgError::CrossCpu { from: 0, to: 5 }));
        assert_eq!(pool.available(), 1, "the refused message's payload is back");
        assert_eq!(near.call(cx, Message::new(3, 1, 0)).unwrap().value, 1);
        // `far` replies to the message `near` sent on this thread's behalf.
        let back = cx.read(Read::Wait).unwrap();
        g.lock().unwrap().push((back.id, back.value));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)), "{:?}", out.threads);
    assert_eq!(*got.lock().unwrap(), [(3, 101)]);
}

/// A handler that panics while serving another CPU's request on its dispatcher ends the run
/// with an error, as a panicking policy does; the process goes on.
#[test]
fn xcpu_handlers_a_panic_on_the_dispatcher_ends_the_run_with_an_error() {
    let mut rt = real(2);
    let h = Handler::new("bad", 1, 1, |_, _| panic!("handler bug"));
    rt.spawn(ThreadSpec::new("t").cpu(0), move |cx| {
        let _ = h.call(cx, Message::new(0, 1, 0));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("u").cpu(1), |cx| cx.sleep(Duration::from_millis(1))).unwrap();
    match rt.run() {
        Err(tempi::Error::Panicked { what, message, .. }) => {
            assert!(message.contains("handler bug"), "{what}: {message}")
        }
        other => panic!("expected Error::Panicked, got {other:?}"),
    }
}
