//! A handler belongs to one runtime at a time: the first invocation by a thread of a runtime
//! binds it to that runtime (to the kernel of the handler's CPU) until the runtime's run
//! ends, and a thread of another runtime meanwhile is refused with
//! `MsgError::ForeignRuntime` on every path (its own CPU's, through the request queue of
//! another real-time CPU, from a handler running on a dispatcher), its payload given back.
//! Once the run is over, however it ended, the handler serves the next runtime.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::payloads::{tracked, Tracked};
use tempi::clock::RealClock;
use tempi::message::{Handler, Message, MsgError};
use tempi::{Config, Runtime, ThreadOutcome, ThreadSpec, Time};

/// An echo handler of CPU 0 counting its invocations.
fn echo(served: &Arc<AtomicUsize>) -> Handler {
    let served = served.clone();
    Handler::new("echo", 0, 4, move |hcx, m| {
        served.fetch_add(1, Ordering::Relaxed);
        hcx.reply(m);
    })
}

/// Run `rt` on an OS thread of its own and wait for it: the runtime of the calling thread
/// is still running meanwhile.
fn run_beside<C: tempi::clock::Clock>(rt: Runtime<C>) -> tempi::RunOutcome {
    std::thread::spawn(move || rt.run().unwrap()).join().unwrap()
}

/// Runtime `a` calls the handler, then runs runtime `b` beside it: `b`'s thread is refused
/// on a send (whose payload goes back to `b`'s pool at once) and on a call. Once `a`'s run is
/// over, runtime `c` calls the handler and is answered.
#[test]
fn a_handler_is_one_runtimes_until_that_runtimes_run_ends() {
    let served = Arc::new(AtomicUsize::new(0));
    let h = echo(&served);
    let answers: Arc<Mutex<Vec<String>>> = Arc::default();
    let drops = Arc::new(AtomicUsize::new(0));
    let mut a = Runtime::simulated(1);
    let (ha, log, d) = (h.clone(), answers.clone(), drops.clone());
    a.spawn(ThreadSpec::new("a"), move |cx| {
        let r = ha.call(cx, Message::new(1, 10, 0));
        log.lock().unwrap().push(format!("a: {:?}", r.map(|m| m.value)));
        let mut b = Runtime::simulated(1);
        let pool = b.payload_pool::<Tracked>(1).unwrap();
        let (hb, log, d) = (ha.clone(), log.clone(), d.clone());
        b.spawn(ThreadSpec::new("b"), move |cx| {
            let sent = hb.send(cx, tracked(&pool, &d, Message::new(2, 20, 0), 7));
            let free = pool.available();
            let called = hb.call(cx, Message::new(3, 30, 0));
            log.lock().unwrap().push(format!("b: send {sent:?} (pool slots free {free}), call {called:?}"));
        })
        .unwrap();
        let out = run_beside(b);
        assert_eq!(out.thread_named("b").unwrap().outcome, Some(ThreadOutcome::Completed));
    })
    .unwrap();
    a.run().unwrap();
    let mut c = Runtime::simulated(1);
    let log = answers.clone();
    c.spawn(ThreadSpec::new("c"), move |cx| {
        let r = h.call(cx, Message::new(4, 40, 0));
        log.lock().unwrap().push(format!("c: {:?}", r.map(|m| m.value)));
    })
    .unwrap();
    c.run().unwrap();
    assert_eq!(
        *answers.lock().unwrap(),
        ["a: Ok(10)", "b: send Err(ForeignRuntime) (pool slots free 1), call Err(ForeignRuntime)", "c: Ok(40)",]
    );
    assert_eq!(served.load(Ordering::Relaxed), 2, "the refused messages never reached the function");
    assert_eq!(drops.load(Ordering::Relaxed), 1, "the refused send's payload was dropped once");
}

/// A real-time runtime running beside the one the handler belongs to is refused on each
/// path a real-time thread can take: a thread of the handler's CPU (which would run it on
/// its stack), a thread of another CPU (through the handler's CPU's queue, a send and a
/// call), and a handler that CPU's dispatcher runs for that thread, invoking it. The other
/// handler, which nobody had, serves that runtime.
#[test]
fn every_path_of_a_real_time_runtime_is_refused_while_another_has_the_handler() {
    let served = Arc::new(AtomicUsize::new(0));
    let h = echo(&served);
    let answers: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut a = Runtime::simulated(1);
    let (ha, log) = (h.clone(), answers.clone());
    a.spawn(ThreadSpec::new("a"), move |cx| {
        ha.call(cx, Message::new(1, 10, 0)).unwrap();
        let mut b: Runtime<RealClock> = Runtime::new(Config::new(2).pin(false)).unwrap();
        // Runs on CPU 0's dispatcher for a thread of CPU 1: invokes `h` from there.
        let hr = ha.clone();
        let relay = Handler::new("relay", 0, 4, move |hcx, m| {
            let inner = hcx.call_handler(&hr, m);
            hcx.reply(Message::new(m.id, if inner == Err(MsgError::ForeignRuntime) { 1 } else { 0 }, 0));
        });
        let (hn, ln) = (ha.clone(), log.clone());
        b.spawn(ThreadSpec::new("near").cpu(0), move |cx| {
            let called = hn.call(cx, Message::new(2, 20, 0));
            ln.lock().unwrap().push(format!("near: call {called:?}"));
        })
        .unwrap();
        let (hf, lf) = (ha.clone(), log.clone());
        b.spawn(ThreadSpec::new("far").cpu(1), move |cx| {
            let sent = hf.send(cx, Message::new(3, 30, 0));
            let called = hf.call(cx, Message::new(4, 40, 0));
            let relayed = relay.call(cx, Message::new(5, 50, 0)).map(|m| m.value);
            lf.lock().unwrap().push(format!("far: send {sent:?}, call {called:?}, relay {relayed:?}"));
        })
        .unwrap();
        let out = run_beside(b);
        assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)), "{:?}", out.threads);
    })
    .unwrap();
    a.run().unwrap();
    let mut answers = answers.lock().unwrap().clone();
    answers.sort();
    assert_eq!(
        answers,
        ["far: send Err(ForeignRuntime), call Err(ForeignRuntime), relay Ok(1)", "near: call Err(ForeignRuntime)",]
    );
    assert_eq!(served.load(Ordering::Relaxed), 1);
}

/// A run that ends at its horizon while a thread is inside the handler, with a message
/// queued there, counts the message and frees the handler: the next runtime finds it idle
/// and its own.
#[test]
fn a_run_cut_short_inside_the_handler_frees_it_for_the_next_runtime() {
    let slow = Handler::new("slow", 0, 4, |hcx, m| {
        hcx.work(Duration::from_millis(10));
        hcx.reply(m);
    });
    let mut a = Runtime::simulated(1);
    let h1 = slow.clone();
    a.spawn(ThreadSpec::new("holder").priority(1), move |cx| {
        let _ = h1.call(cx, Message::new(1, 0, 0));
    })
    .unwrap();
    let h2 = slow.clone();
    a.spawn(ThreadSpec::new("sender").priority(2), move |cx| {
        cx.sleep(Duration::from_millis(1));
        h2.send(cx, Message::new(2, 0, 0)).unwrap();
    })
    .unwrap();
    let out = a.run_until(Time::from_millis(5)).unwrap();
    assert_eq!(out.messages.queued_at_end, 1);
    assert!(!slow.is_busy(), "the holder's stack was unwound at the run's end");
    assert_eq!(slow.queued(), 0);
    let mut c = Runtime::simulated(1);
    let answer = Arc::new(Mutex::new(None));
    let (h3, seen) = (slow.clone(), answer.clone());
    c.spawn(ThreadSpec::new("next"), move |cx| {
        *seen.lock().unwrap() = Some((h3.call(cx, Message::new(3, 33, 0)).map(|m| m.value), cx.now()));
    })
    .unwrap();
    c.run().unwrap();
    assert_eq!(*answer.lock().unwrap(), Some((Ok(33), Time::from_millis(10))));
}

/// Fifty real-time runs one after another share one handler, each calling it from both of
/// its CPUs (on the handler's CPU's stacks and through its queue): each run binds it and its
/// end frees it, with every answer right and every call served once.
#[test]
fn runs_one_after_another_bind_and_free_the_handler_in_turn() {
    let served = Arc::new(AtomicUsize::new(0));
    let s = served.clone();
    let h = Handler::new("affine", 0, 8, move |hcx, m| {
        s.fetch_add(1, Ordering::Relaxed);
        hcx.reply(Message::new(m.id, 3 * m.value + 1, 0));
    });
    const RUNS: usize = 50;
    const CALLS: i64 = 200;
    for run in 0..RUNS {
        let mut rt: Runtime<RealClock> = Runtime::new(Config::new(2).pin(false)).unwrap();
        for cpu in 0..2 {
            let h = h.clone();
            rt.spawn(ThreadSpec::new(format!("c{cpu}")).cpu(cpu), move |cx| {
                for v in 0..CALLS {
                    assert_eq!(h.call(cx, Message::new(cpu as i64, v, 0)).map(|m| m.value), Ok(3 * v + 1));
                }
            })
            .unwrap();
        }
        let out = rt.run().unwrap();
        assert!(
            out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)),
            "run {run}: {:?}",
            out.threads
        );
    }
    assert_eq!(served.load(Ordering::Relaxed), RUNS * 2 * CALLS as usize);
}

/// Two real-time runtimes started together race for one handler: every call is either
/// answered right or refused with `ForeignRuntime` (never misanswered, never lost), the
/// handler served exactly the calls answered, and whichever runtime had it first was never
/// refused while it ran.
#[test]
fn two_runtimes_racing_for_a_handler_never_share_it() {
    let served = Arc::new(AtomicUsize::new(0));
    let s = served.clone();
    let h = Handler::new("affine", 0, 8, move |hcx, m| {
        s.fetch_add(1, Ordering::Relaxed);
        hcx.reply(Message::new(m.id, 3 * m.value + 1, 0));
    });
    const CALLS: i64 = 20_000;
    let barrier = Arc::new(std::sync::Barrier::new(2));
    let racers: Vec<_> = (0..2)
        .map(|r| {
            let (h, barrier) = (h.clone(), barrier.clone());
            std::thread::spawn(move || {
                let mut rt: Runtime<RealClock> = Runtime::new(Config::new(1).pin(false)).unwrap();
                let tally = Arc::new(Mutex::new((0usize, 0usize, None::<i64>)));
                let t = tally.clone();
                rt.spawn(ThreadSpec::new(format!("r{r}")), move |cx| {
                    let (mut answered, mut refused, mut first_refusal) = (0, 0, None);
                    for v in 0..CALLS {
                        match h.call(cx, Message::new(r, v, 0)) {
                            Ok(m) => {
                                assert_eq!(m.value, 3 * v + 1);
                                answered += 1;
                            }
                            Err(MsgError::ForeignRuntime) => {
                                refused += 1;
                                first_refusal.get_or_insert(v);
                            }
                            Err(e) => panic!("call {v}: {e:?}"),
                        }
                    }
                    *t.lock().unwrap() = (answered, refused, first_refusal);
                })
                .unwrap();
                barrier.wait();
                let out = rt.run().unwrap();
                assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)), "{:?}", out.threads);

                *tally.lock().unwrap()
            })
        })
        .collect();
    let tallies: Vec<(usize, usize, Option<i64>)> = racers.into_iter().map(|t| t.join().unwrap()).collect();
    let answered: usize = tallies.iter().map(|t| t.0).sum();
    assert_eq!(tallies.iter().map(|t| t.0 + t.1).sum::<usize>(), 2 * CALLS as usize);
    assert_eq!(served.load(Ordering::Relaxed), answered);
    // The runtime that called first kept the handler until its run ended: it was never
    // refused.
    assert!(tallies.iter().any(|t| t.1 == 0), "{tallies:?}");
}
