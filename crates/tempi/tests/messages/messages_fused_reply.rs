//! The fused reply + read of a process (`Flow::Reply`, `Ctx::reply_and_read`) and the short
//! path of a switch: in virtual time a process answering with `Flow::Reply` leaves exactly the
//! trace, timeline, statistics and outcomes of the same process answering with `reply` and
//! `Flow::Continue`, whether its caller is more urgent (the read waits for its next resume) or
//! less (the read is made at once), with a ranked queue, asynchronous senders, several callers,
//! and a kill landing while the read waits.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{ms, segments};
use tempi::clock::VirtualClock;
use tempi::message::{Flow, Message, MsgError, Read};
use tempi::policy::queue::ByDeadline;
use tempi::{Config, RunOutcome, Runtime, ThreadSpec};

/// How the server answers: `reply` then `Flow::Continue`, or `Flow::Reply`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Answer {
    Separate,
    Fused,
}

type Log = Arc<Mutex<Vec<String>>>;

fn answer(cx: &tempi::Ctx<'_>, how: Answer, reply: Message) -> Flow {
    match how {
        Answer::Separate => {
            // A reply that cannot be made is dropped, as `Flow::Reply` drops it.
            let _ = cx.reply(reply);
            Flow::Continue
        }
        Answer::Fused => Flow::Reply(reply),
    }
}

fn rt() -> Runtime<VirtualClock> {
    Runtime::new(Config::new(1).trace_capacity(100_000)).unwrap()
}

/// Everything a run leaves that the two ways of answering must agree on.
fn fingerprint(out: &RunOutcome, log: &Log) -> (String, Vec<String>, String, Vec<String>) {
    (format!("{:?}", out.trace), segments(out), format!("{:?}", out.threads), log.lock().unwrap().clone())
}

/// A server working `work_ms` per message, called `calls` times by each of the clients
/// (priority, work between calls); the clients log each answer.
fn callers(how: Answer, server_prio: i32, work_ms: u64, clients: &[(i32, u64)], calls: i64) -> (RunOutcome, Log) {
    let mut rt = rt();
    let log: Log = Arc::default();
    let server = rt
        .spawn_process(ThreadSpec::new("server").priority(server_prio), move |cx, m| {
            cx.work(ms(work_ms));
            answer(cx, how, Message::new(m.id, m.value * 2, 0))
        })
        .unwrap();
    for (k, &(prio, between)) in clients.iter().enumerate() {
        let l = log.clone();
        rt.spawn(ThreadSpec::new(format!("c{k}")).priority(prio), move |cx| {
            for i in 0..calls {
                let r = cx.call(server, Message::new(k as i64 + 1, i, 0)).unwrap();
                l.lock().unwrap().push(format!("c{k}:{}:{}@{}", r.id, r.value, cx.now().as_nanos()));
                cx.work(ms(between));
            }
        })
        .unwrap();
    }
    (rt.run().unwrap(), log)
}

#[test]
fn fused_reply_to_a_more_urgent_caller_matches_reply_then_read() {
    let run = |how| {
        let (out, log) = callers(how, 1, 1, &[(3, 2)], 4);
        fingerprint(&out, &log)
    };
    let fused = run(Answer::Fused);
    assert_eq!(fused, run(Answer::Separate));
    // The caller preempts its server at each reply; the server runs on with the next call.
    assert_eq!(fused.3, ["c0:1:0@1000000", "c0:1:2@4000000", "c0:1:4@7000000", "c0:1:6@10000000"]);
}

#[test]
fn fused_reply_to_a_less_urgent_caller_matches_reply_then_read() {
    let run = |how| {
        let (out, log) = callers(how, 5, 2, &[(1, 1), (2, 0)], 3);
        fingerprint(&out, &log)
    };
    let fused = run(Answer::Fused);
    assert_eq!(fused, run(Answer::Separate));
    assert_eq!(fused.3.len(), 6);
}

#[test]
fn fused_reply_with_callers_on_both_sides_and_zero_work_matches() {
    for server_prio in [1, 2, 3] {
        let run = |how| {
            let (out, log) = callers(how, server_prio, 0, &[(1, 1), (2, 0), (3, 0)], 5);
            fingerprint(&out, &log)
        };
        assert_eq!(run(Answer::Fused), run(Answer::Separate), "server priority {server_prio}");
    }
}

/// A ranked queue (earliest constraint first) fed asynchronously by a more urgent sender; the
/// server replies to each message, which goes back to the sender as a message.
#[test]
fn fused_reply_with_a_ranked_queue_and_asynchronous_senders_matches() {
    let run = |how| {
        let mut rt = rt();
        let log: Log = Arc::default();
        let l = log.clone();
        let server = rt
            .spawn_process(ThreadSpec::new("server").priority(1).message_queue(ByDeadline), move |cx, m| {
                l.lock().unwrap().push(format!("s:{}:{}@{}", m.id, m.constraint, cx.now().as_nanos()));
                cx.work(ms(1));
                if m.id == 0 {
                    return Flow::Stop;
                }
                answer(cx, how, Message::new(m.id, 10 * m.value, 0))
            })
            .unwrap();
        let l = log.clone();
        rt.spawn(ThreadSpec::new("sender").priority(2), move |cx| {
            for (id, c) in [(1, 30), (2, 5), (3, 10)] {
                cx.send(server, Message::new(id, id, c)).unwrap();
            }
            for _ in 0..3 {
                let back = cx.read(Read::Wait).unwrap();
                l.lock().unwrap().push(format!("back:{}:{}@{}", back.id, back.value, cx.now().as_nanos()));
                cx.send(server, Message::new(9, 0, 1)).unwrap();
            }
            cx.send(server, Message::new(0, 0, 100)).unwrap();
        })
        .unwrap();
        let out = rt.run().unwrap();
        fingerprint(&out, &log)
    };
    let fused = run(Answer::Fused);
    assert_eq!(fused, run(Answer::Separate));
    assert!(fused.3.iter().any(|e| e.starts_with("back:2:20")), "{:?}", fused.3);
}

/// The caller kills its server while the server's read waits (it was preempted by the reply):
/// the read is not made, the kill is delivered as after a plain reply.
#[test]
fn fused_reply_killed_while_the_read_waits_matches() {
    let run = |how| {
        let mut rt = rt();
        let log: Log = Arc::default();
        let server = rt
            .spawn_process(ThreadSpec::new("server").priority(1), move |cx, m| {
                cx.work(ms(1));
                answer(cx, how, m)
            })
            .unwrap();
        let l = log.clone();
        rt.spawn(ThreadSpec::new("client").priority(2), move |cx| {
            let r = cx.call(server, Message::new(1, 7, 0)).unwrap();
            l.lock().unwrap().push(format!("got {}", r.value));
            cx.send(server, Message::new(2, 0, 0)).unwrap();
            cx.kill(server).unwrap();
            cx.work(ms(1));
            let after = cx.call(server, Message::new(3, 0, 0)).err();
            l.lock().unwrap().push(format!("call after kill: {after:?}"));
        })
        .unwrap();
        let out = rt.run().unwrap();
        fingerprint(&out, &log)
    };
    let fused = run(Answer::Fused);
    assert_eq!(fused, run(Answer::Separate));
    assert_eq!(fused.3[0], "got 7");
}

/// `reply_and_read` with nothing to reply to reports the reply's error and reads nothing;
/// `Flow::Reply` of an already answered message goes on reading.
#[test]
fn fused_reply_errors_are_the_replys() {
    let mut rt = rt();
    let log: Log = Arc::default();
    let l = log.clone();
    rt.spawn(ThreadSpec::new("lonely").priority(3), move |cx| {
        l.lock().unwrap().push(format!("{:?}", cx.reply_and_read(Message::new(1, 0, 0))));
    })
    .unwrap();
    let l = log.clone();
    let server = rt
        .spawn_process(ThreadSpec::new("server").priority(1), move |cx, m| {
            cx.reply(m).unwrap();
            // Answered already: the fused reply is dropped and the process reads on.
            l.lock().unwrap().push(format!("served {}", m.id));
            Flow::Reply(m)
        })
        .unwrap();
    let l = log.clone();
    rt.spawn(ThreadSpec::new("client").priority(2), move |cx| {
        for id in 1..=2 {
            // The answer first: the log's lock is not held across a runtime call.
            let got = cx.call(server, Message::new(id, 0, 0)).map(|m| m.id);
            l.lock().unwrap().push(format!("call {id}: {got:?}"));
        }
    })
    .unwrap();
    rt.run().unwrap();
    let got = log.lock().unwrap().clone();
    assert_eq!(got[0], format!("{:?}", Err::<Message, _>(MsgError::NoCurrent)));
    // The more urgent client runs as soon as it is answered, before the server logs.
    assert_eq!(got[1..], ["call 1: Ok(1)", "served 1", "call 2: Ok(2)", "served 2"]);
}
