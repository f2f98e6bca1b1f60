//! Messages and handlers in real time: between threads of one CPU they work as in virtual time;
//! a handler of another real-time CPU is served there (more in `xcpu_handlers.rs`; messages to
//! threads of another CPU are in `xcpu_messages.rs`). Properties only, no timing.

use std::sync::{Arc, Mutex};

use tempi::clock::RealClock;
use tempi::message::{Flow, Message, MsgError};
use tempi::{Config, Runtime, ThreadOutcome, ThreadSpec};

#[test]
fn messages_real_time_calls_on_one_cpu_and_across_cpus() {
    let mut rt: Runtime<RealClock> = Runtime::new(Config::new(2).pin(false)).unwrap();
    let server = rt
        .spawn_process(ThreadSpec::new("server").cpu(0).priority(1), |cx, m| {
            cx.reply(Message::new(m.id, m.value * 3, 0)).unwrap();
            if m.id == 0 {
                Flow::Stop
            } else {
                Flow::Continue
            }
        })
        .unwrap();
    let far = rt.spawn_process(ThreadSpec::new("far").cpu(1), |_, _| Flow::Stop).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    rt.spawn(ThreadSpec::new("client").cpu(0).priority(2), move |cx| {
        for v in 1..=100 {
            let a = cx.call(server, Message::new(1, v, 0)).unwrap();
            s.lock().unwrap().push(a.value);
        }
        // A call to another CPU's process that ends without replying.
        assert_eq!(cx.call(far, Message::new(0, 0, 0)), Err(MsgError::Unanswered));
        cx.call(server, Message::new(0, 0, 0)).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(*seen.lock().unwrap(), (1..=100).map(|v| v * 3).collect::<Vec<i64>>());
    assert_eq!(out.thread_named("server").unwrap().outcome, Some(ThreadOutcome::Completed));
    assert_eq!(out.thread_named("far").unwrap().outcome, Some(ThreadOutcome::Completed));
}

/// A handler of CPU 0 runs on the stacks of CPU 0's threads in real time; invoked from
/// another real-time CPU, the request goes through CPU 0's queue and is answered the same.
#[test]
fn messages_real_time_handlers_serve_their_cpu_and_others() {
    use tempi::message::Handler;
    let mut rt: Runtime<RealClock> = Runtime::new(Config::new(2).pin(false)).unwrap();
    let h = Handler::new("double", 0, 4, |hcx, m| hcx.reply(Message::new(m.id, m.value * 2, 0)));
    let (h0, h1) = (h.clone(), h.clone());
    rt.spawn(ThreadSpec::new("near").cpu(0), move |cx| {
        for v in 0..1000 {
            assert_eq!(h0.call(cx, Message::new(0, v, 0)).unwrap().value, 2 * v);
        }
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("far").cpu(1), move |cx| {
        assert_eq!(h1.call(cx, Message::new(0, 21, 0)).unwrap().value, 42);
        assert_eq!(h1.send(cx, Message::new(0, 1, 0)), Ok(()));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)));
}

/// Bounced timers on a real-time CPU: a loop of five arrives in order, each no earlier than
/// asked; a cancelled one never arrives; a timed message to another real-time CPU's process
/// arrives there (and ends it).
#[test]
fn messages_real_time_bounced_timers_on_one_cpu() {
    let mut rt: Runtime<RealClock> = Runtime::new(Config::new(2).pin(false)).unwrap();
    let far = rt.spawn_process(ThreadSpec::new("far").cpu(1), |_, _| Flow::Stop).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    rt.spawn(ThreadSpec::new("ticker").cpu(0).priority(2), move |cx| {
        let d = std::time::Duration::from_millis(1);
        cx.send_after(d, far, Message::new(0, 0, 0)).unwrap();
        let never = cx.bounce_after(std::time::Duration::from_secs(60), Message::new(-1, 0, 0)).unwrap();
        let mut asked = cx.now() + d;
        cx.bounce_after(d, Message::new(0, 0, 0)).unwrap();
        for _ in 0..5 {
            let m = cx.read(tempi::message::Read::Wait).unwrap();
            assert!(cx.now() >= asked, "delivered before its instant");
            s.lock().unwrap().push(m.id);
            asked = cx.now() + d;
            cx.bounce_after(d, Message::new(m.id + 1, 0, 0)).unwrap();
        }
        assert_eq!(cx.cancel_timer(never).unwrap().id, -1);
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(*seen.lock().unwrap(), [0, 1, 2, 3, 4]);
    assert_eq!(out.thread_named("ticker").unwrap().outcome, Some(ThreadOutcome::Completed));
    assert_eq!(out.thread_named("far").unwrap().outcome, Some(ThreadOutcome::Completed));
}
