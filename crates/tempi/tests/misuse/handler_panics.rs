//! A handler whose function panics strands nobody: the callers queued behind it are answered
//! `HandlerPanicked` at the instant of the panic, the messages sent to it are counted and
//! traced as not delivered, and the handler, poisoned, refuses every later message at once.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{markers, ms, segments};
use tempi::message::{Handler, Message, MsgError};
use tempi::trace::TraceKind;
use tempi::{Runtime, ThreadOutcome, ThreadSpec};

type Log = Arc<Mutex<Vec<String>>>;

fn at(cx: &tempi::Ctx<'_>) -> u64 {
    cx.now().as_nanos() / 1_000_000
}

/// `holder` (priority 1) calls the handler, which works 2 ms and panics. At 1 ms three more
/// urgent threads find it busy: `b` (4) and `a` (3) call and wait behind it, `c` (2) sends,
/// which is queued and returns. `holder` resumes at 1 ms and panics at 2 ms: at that instant
/// `b` and `a` are answered `HandlerPanicked` (and run, most urgent first), `c`'s message is
/// counted and traced as not delivered, and a second call of `b` and `a` is refused at once.
#[test]
fn handler_panics_answer_the_callers_queued_behind_it_at_the_panic() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let h = Handler::new("h", 0, 4, move |hcx, m| {
        hcx.work(ms(2));
        if m.id == 1 {
            panic!("broken");
        }
        hcx.reply(m);
    });
    let mut rt = Runtime::simulated(1);
    let h0 = h.clone();
    let holder = rt
        .spawn(ThreadSpec::new("holder").priority(1), move |cx| {
            let _ = h0.call(cx, Message::new(1, 0, 0));
        })
        .unwrap();
    for (name, prio) in [("b", 4), ("a", 3)] {
        let (h, l) = (h.clone(), log.clone());
        rt.spawn(ThreadSpec::new(name).priority(prio), move |cx| {
            cx.sleep(ms(1));
            assert!(h.is_busy());
            let first = h.call(cx, Message::new(2, 0, 0));
            l.lock().unwrap().push(format!("{name}: {first:?}@{}", at(cx)));
            let again = h.call(cx, Message::new(3, 0, 0));
            l.lock().unwrap().push(format!("{name} again: {again:?}@{}", at(cx)));
        })
        .unwrap();
    }
    let (h2, l) = (h.clone(), log.clone());
    rt.spawn(ThreadSpec::new("c").priority(2), move |cx| {
        cx.sleep(ms(1));
        let sent = h2.send(cx, Message::new(4, 0, 0));
        l.lock().unwrap().push(format!("c: {sent:?}@{}", at(cx)));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "c: Ok(())@1",
            "b: Err(HandlerPanicked)@2",
            "b again: Err(HandlerPanicked)@2",
            "a: Err(HandlerPanicked)@2",
            "a again: Err(HandlerPanicked)@2",
        ]
    );
    assert_eq!(out.thread(holder).unwrap().outcome, Some(ThreadOutcome::Panicked("broken".into())));
    // `holder` ends at 2 ms after `b` and `a`: answered as its unwind ends, they preempt it.
    assert_eq!(
        segments(&out),
        [
            "b:0-0:sleep",
            "a:0-0:sleep",
            "c:0-0:sleep",
            "holder:0-1:preempt",
            "b:1-1:block",
            "a:1-1:block",
            "c:1-1:exit",
            "holder:1-2:preempt",
            "b:2-2:exit",
            "a:2-2:exit",
            "holder:2-2:exit"
        ]
    );
    // The message it was serving, the two calls and the send queued behind it, then the two
    // later calls: each traced on its sender.
    assert_eq!(markers(&out, TraceKind::MessageRefused), ["holder#0@2", "b#0@2", "a#0@2", "c#0@2", "b#0@2", "a#0@2"]);
    assert!(out.trace.iter().filter(|r| r.kind == TraceKind::MessageRefused).all(|r| r.arg == 7));
    assert_eq!(out.messages.handler_panicked, 6);
    assert_eq!(out.messages.queued_at_end, 0);
    assert!(h.is_poisoned());
    assert!(!h.is_busy());
    assert_eq!(h.queued(), 0);
}

/// A call the handler saved (its caller waiting for a later invocation to serve it) is
/// answered too when the handler panics on another message.
#[test]
fn handler_panics_answer_a_saved_call() {
    let h = Handler::new("monitor", 0, 2, |hcx, m| {
        if m.id == 1 {
            hcx.save(0, m).unwrap();
        } else {
            panic!("broken");
        }
    })
    .save_queues(1);
    let mut rt = Runtime::simulated(1);
    let (h1, h2) = (h.clone(), h.clone());
    let waiter = rt
        .spawn(ThreadSpec::new("waiter").priority(2), move |cx| {
            assert_eq!(h1.call(cx, Message::new(1, 0, 0)), Err(MsgError::HandlerPanicked));
            assert_eq!(at(cx), 3);
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("breaker").priority(1), move |cx| {
        cx.work(ms(3));
        let _ = h2.send(cx, Message::new(2, 0, 0));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread(waiter).unwrap().outcome, Some(ThreadOutcome::Completed));
    assert_eq!(out.messages.handler_panicked, 2);
    assert_eq!(out.messages.queued_at_end, 0);
}

/// Real time, across CPUs: a thread of CPU 0 calls a handler of CPU 1 while a thread there
/// holds it; the call waits in the handler's queue, and when the handler panics it is
/// answered `HandlerPanicked` through CPU 0's queue. Later calls and sends from CPU 0, served
/// on CPU 1's dispatcher, are refused the same way.
#[test]
fn handler_panics_answer_a_caller_of_another_cpu() {
    use std::time::{Duration, Instant};
    let mut rt: Runtime<tempi::clock::RealClock> = Runtime::new(tempi::Config::new(2).pin(false)).unwrap();
    // The handler looks at its own queue (the cycle leaks it, which a test can afford).
    let itself: Arc<std::sync::OnceLock<Handler>> = Arc::default();
    let me = itself.clone();
    let h = Handler::new("h", 1, 4, move |hcx, m| {
        if m.id == 1 {
            // Until the call from CPU 0 is queued behind this one (bounded: a failure, not a hang).
            let start = Instant::now();
            while me.get().map_or(0, Handler::queued) == 0 && start.elapsed() < Duration::from_secs(5) {
                hcx.work(Duration::from_micros(100));
            }
            panic!("broken");
        }
        hcx.reply(m);
    });
    let (h0, h1) = (h.clone(), h.clone());
    itself.set(h.clone()).ok();
    let holder = rt
        .spawn(ThreadSpec::new("holder").cpu(1), move |cx| {
            let _ = h1.call(cx, Message::new(1, 0, 0));
        })
        .unwrap();
    let far = rt
        .spawn(ThreadSpec::new("far").cpu(0), move |cx| {
            let start = Instant::now();
            while !h0.is_busy() && start.elapsed() < Duration::from_secs(5) {
                cx.sleep(Duration::from_micros(100));
            }
            assert_eq!(h0.call(cx, Message::new(2, 0, 0)), Err(MsgError::HandlerPanicked));
            assert_eq!(h0.call(cx, Message::new(3, 0, 0)), Err(MsgError::HandlerPanicked));
            assert_eq!(h0.send(cx, Message::new(4, 0, 0)), Err(MsgError::HandlerPanicked));
        })
        .unwrap();
    // Bounded: without the answer, `far` would wait for ever.
    let out = rt.run_until(tempi::Time::from_millis(10_000)).unwrap();
    assert_eq!(out.thread(holder).unwrap().outcome, Some(ThreadOutcome::Panicked("broken".into())));
    assert_eq!(out.thread(far).unwrap().outcome, Some(ThreadOutcome::Completed));
    // The holder's own message, the queued call, then the call and the send refused at once.
    assert_eq!(out.messages.handler_panicked, 4);
    assert_eq!(out.messages.queued_at_end, 0);
    assert!(h.is_poisoned());
}

/// A kill of the thread a handler runs on unwinds the handler's function too, but it is the
/// runtime's doing, not a panic: the handler is not poisoned and serves the next call.
#[test]
fn handler_panics_a_kill_inside_a_handler_poisons_nothing() {
    let h = Handler::new("h", 0, 4, |hcx, m| {
        hcx.work(ms(5));
        hcx.reply(m);
    });
    let mut rt = Runtime::simulated(1);
    let (h1, h2) = (h.clone(), h.clone());
    let victim = rt
        .spawn(ThreadSpec::new("victim").priority(1), move |cx| {
            let _ = h1.call(cx, Message::new(1, 0, 0));
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("killer").priority(2), move |cx| {
        cx.sleep(ms(1));
        cx.kill(victim).unwrap();
        cx.sleep(ms(1));
        assert_eq!(h2.call(cx, Message::new(2, 7, 0)).map(|m| m.value), Ok(7));
        assert_eq!(at(cx), 7);
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread(victim).unwrap().outcome, Some(ThreadOutcome::Killed));
    assert!(!h.is_poisoned());
    assert_eq!(out.messages.handler_panicked, 0);
}

/// Real time: a handler that panics on its CPU's dispatcher, serving a thread of another CPU,
/// ends the run, and the error names a handler, not the scheduler.
#[test]
fn handler_panics_on_a_dispatcher_end_the_run_as_a_handler() {
    let mut rt: Runtime<tempi::clock::RealClock> = Runtime::new(tempi::Config::new(2).pin(false)).unwrap();
    let h = Handler::new("h", 1, 4, |_, _| panic!("broken"));
    rt.spawn(ThreadSpec::new("far").cpu(0), move |cx| {
        let _ = h.call(cx, Message::new(1, 0, 0));
    })
    .unwrap();
    match rt.run() {
        Err(tempi::Error::Panicked { source, what, message }) => assert_eq!(
            (source, what.as_str(), message.as_str()),
            (tempi::PanicSource::Handler, "the message handler `h` of CPU 1, serving another CPU's thread", "broken")
        ),
        other => panic!("expected a panicked run, got {other:?}"),
    }
}
