//! Message passing in virtual time: send, call, reply, read, save and read_saved with exact
//! orders and timelines; queue policies that order and refuse; full pools and queues as errors
//! and trace records; calls put away unanswered; messages between CPUs.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{markers, ms, segments};
use tempi::message::{Flow, Message, MsgError, Read, Selection};
use tempi::policy::queue::{ByDeadline, QueuePolicy};
use tempi::policy::sched::SchedInfo;
use tempi::trace::TraceKind;
use tempi::{Config, Runtime, ThreadSpec, Time};

type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

fn note(log: &Log, cx: &tempi::Ctx<'_>, what: String) {
    log.lock().unwrap().push(format!("{}@{}", what, cx.now().as_nanos() / 1_000_000));
}

fn take(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// A more urgent reader waits in `read`; each send wakes it at once, it works 1 ms per
/// message, and the sender goes on when it waits again.
#[test]
fn messages_send_wakes_a_waiting_reader_at_once() {
    let mut rt = Runtime::simulated(1);
    let l = log();
    let l1 = l.clone();
    let r = rt
        .spawn(ThreadSpec::new("r").priority(2), move |cx| {
            for _ in 0..3 {
                let m = cx.read(Read::Wait).unwrap();
                note(&l1, cx, format!("r:{}", m.id));
                cx.work(ms(1));
            }
        })
        .unwrap();
    let l2 = l.clone();
    rt.spawn(ThreadSpec::new("s").priority(1), move |cx| {
        for id in 1..=3 {
            cx.send(r, Message::new(id, 0, 0)).unwrap();
            note(&l2, cx, format!("s:sent{id}"));
            cx.work(ms(2));
        }
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&l), ["r:1@0", "s:sent1@1", "r:2@3", "s:sent2@4", "r:3@6", "s:sent3@7"]);
    assert_eq!(
        segments(&out),
        [
            "r:0-0:block",
            "s:0-0:preempt",
            "r:0-1:block",
            "s:1-3:preempt",
            "r:3-4:block",
            "s:4-6:preempt",
            "r:6-7:exit",
            "s:7-9:exit"
        ]
    );
}

/// A call blocks the caller until the reply; the process works 2 ms per message; replies
/// carry the answer and the replier as sender.
#[test]
fn messages_call_waits_for_the_reply_of_a_process() {
    let mut rt = Runtime::simulated(1);
    let server = rt
        .spawn_process(ThreadSpec::new("server").priority(1), |cx, m| {
            cx.work(ms(2));
            cx.reply(Message::new(m.id, m.value * 2, 0)).unwrap();
            if m.id == 0 {
                Flow::Stop
            } else {
                Flow::Continue
            }
        })
        .unwrap();
    let l = log();
    let l1 = l.clone();
    rt.spawn(ThreadSpec::new("client").priority(2), move |cx| {
        for (id, v) in [(1, 10), (2, 20), (0, 0)] {
            let a = cx.call(server, Message::new(id, v, 0)).unwrap();
            assert_eq!(a.from, Some(server));
            assert!(!a.expects_reply);
            note(&l1, cx, format!("{id}->{}", a.value));
            cx.work(ms(1));
        }
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&l), ["1->20@2", "2->40@5", "0->0@8"]);
    assert_eq!(
        segments(&out),
        [
            "client:0-0:block",
            "server:0-2:preempt",
            "client:2-3:block",
            "server:3-5:preempt",
            "client:5-6:block",
            "server:6-8:preempt",
            "client:8-9:exit",
            "server:9-9:exit"
        ]
    );
    assert_eq!(out.thread_named("server").unwrap().outcome, Some(tempi::ThreadOutcome::Completed));
}

/// A reply to an asynchronous message arrives as a new message in the sender's queue.
#[test]
fn messages_reply_to_a_send_is_a_new_message() {
    let mut rt = Runtime::simulated(1);
    let echo = rt
        .spawn_process(ThreadSpec::new("echo").priority(2), |cx, m| {
            cx.reply(Message::new(m.id + 100, m.value, m.constraint)).unwrap();
            Flow::Stop
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("s").priority(1), move |cx| {
        cx.send(echo, Message::new(1, 7, 0)).unwrap();
        let m = cx.read(Read::Poll).unwrap();
        assert_eq!((m.from, m.id, m.value, m.expects_reply), (Some(echo), 101, 7, false));
        assert_eq!(cx.read(Read::Poll), Err(MsgError::Empty));
    })
    .unwrap();
    rt.run().unwrap();
}

/// A message's constraint as its deadline orders the new queue: earliest first, no
/// constraint last, ties in arrival order.
#[test]
fn messages_deadline_queue_reads_earliest_constraint_first() {
    let mut rt = Runtime::simulated(1);
    let l = log();
    let l1 = l.clone();
    let r = rt
        .spawn(ThreadSpec::new("r").priority(1).message_queue(ByDeadline), move |cx| {
            for _ in 0..5 {
                let m = cx.read(Read::Wait).unwrap();
                note(&l1, cx, format!("{}:{}", m.id, m.constraint));
            }
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("s").priority(2), move |cx| {
        for (id, c) in [(1, 30), (2, 0), (3, 10), (4, 20), (5, 10)] {
            cx.send(r, Message::new(id, 0, c)).unwrap();
        }
    })
    .unwrap();
    rt.run().unwrap();
    assert_eq!(take(&l), ["3:10@0", "5:10@0", "4:20@0", "1:30@0", "2:0@0"]);
}

/// Refuses messages whose constraint is negative; earliest constraint first otherwise.
struct Strict;
impl QueuePolicy for Strict {
    fn name(&self) -> &str {
        "strict"
    }
    fn rank(&self, _: &SchedInfo) -> i64 {
        0
    }
    fn rank_message(&self, msg: &Message, _: &SchedInfo) -> Option<i64> {
        (msg.constraint >= 0).then_some(-msg.constraint)
    }
}

/// A refusal by the policy, a full new queue and an exhausted pool are errors to the sender
/// and `MessageRefused` records (arg 2, 1, 0); nothing is queued for them.
#[test]
fn messages_refusals_and_full_queues_are_errors_and_traced() {
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(Config::new(1).message_pool(3)).unwrap();
    let got = log();
    let g = got.clone();
    let r = rt
        .spawn(ThreadSpec::new("r").priority(1).mailbox(2).message_queue(Strict), move |cx| {
            while let Ok(m) = cx.read(Read::Poll) {
                note(&g, cx, format!("{}", m.id));
            }
        })
        .unwrap();
    let other = rt.spawn(ThreadSpec::new("o").priority(0), |_| {}).unwrap();
    rt.spawn(ThreadSpec::new("s").priority(2), move |cx| {
        assert_eq!(cx.send(r, Message::new(1, 0, -5)), Err(MsgError::Refused));
        assert_eq!(cx.send(r, Message::new(2, 0, 5)), Ok(()));
        assert_eq!(cx.send(r, Message::new(3, 0, 1)), Ok(()));
        assert_eq!(cx.send(r, Message::new(4, 0, 1)), Err(MsgError::QueueFull));
        assert_eq!(cx.send(other, Message::new(5, 0, 0)), Ok(()));
        // Three messages in use: the pool is empty.
        assert_eq!(cx.send(other, Message::new(6, 0, 0)), Err(MsgError::PoolFull));
        cx.work(ms(1));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(take(&got), ["3@1", "2@1"]);
    assert_eq!(markers(&out, TraceKind::MessageRefused), ["s#0@0", "s#0@0", "s#0@0"]);
    let args: Vec<u64> = out.trace.iter().filter(|r| r.kind == TraceKind::MessageRefused).map(|r| r.arg).collect();
    assert_eq!(args, [2, 1, 0]);
}

/// A semaphore of one unit built from a process and its save queue (the monitor reading):
/// a PROCURE while the unit is out is saved, so its caller waits; a VACATE serves the saved
/// caller first.
#[test]
fn messages_save_and_read_saved_make_callers_wait() {
    const PROCURE: i64 = 1;
    const VACATE: i64 = 2;
    let mut rt = Runtime::simulated(1);
    let mut free = 1;
    let sem = rt
        .spawn_process(ThreadSpec::new("sem").priority(9), move |cx, m| {
            match m.id {
                PROCURE if free == 0 => cx.save(0, m).unwrap(),
                PROCURE => {
                    free -= 1;
                    cx.reply(m).unwrap();
                }
                _ => {
                    cx.reply(m).unwrap();
                    match cx.read_saved(0, Selection::any().id(PROCURE)) {
                        Ok(waiting) => cx.reply(waiting).unwrap(),
                        Err(MsgError::NoMatch) => free += 1,
                        Err(e) => panic!("{e}"),
                    }
                }
            }
            Flow::Continue
        })
        .unwrap();
    let l = log();
    for (name, prio, start) in [("a", 1, 0u64), ("b", 2, 1)] {
        let l = l.clone();
        rt.spawn(ThreadSpec::new(name).priority(prio), move |cx| {
            cx.sleep(ms(start));
            cx.call(sem, Message::new(PROCURE, 0, 0)).unwrap();
            note(&l, cx, format!("{name}:in"));
            cx.work(ms(3));
            note(&l, cx, format!("{name}:out"));
            cx.call(sem, Message::new(VACATE, 0, 0)).unwrap();
            if name == "a" {
                cx.sleep(ms(10));
                cx.kill(sem).unwrap();
            }
        })
        .unwrap();
    }
    let out = rt.run().unwrap();
    // a holds the unit 0-3 (b arrives at 1 and is saved); a's VACATE hands it to b at 3.
    assert_eq!(take(&l), ["a:in@0", "a:out@3", "b:in@3", "b:out@6"]);
    assert_eq!(out.thread_named("sem").unwrap().outcome, Some(tempi::ThreadOutcome::Killed));
}

/// Save queues are ordered by value; a selection matches the fields it names.
#[test]
fn messages_read_saved_selects_by_fields_smallest_value_first() {
    let mut rt = Runtime::simulated(1);
    let me = Arc::new(Mutex::new(None));
    let me1 = me.clone();
    rt.spawn(ThreadSpec::new("t").save_queues(2), move |cx| {
        *me1.lock().unwrap() = Some(cx.id());
        for (id, v) in [(1, 30), (2, 10), (1, 20), (3, 10)] {
            cx.send(cx.id(), Message::new(id, v, 0)).unwrap();
        }
        for _ in 0..4 {
            let m = cx.read(Read::Poll).unwrap();
            cx.save(if m.id == 3 { 1 } else { 0 }, m).unwrap();
        }
        assert_eq!(cx.save(0, Message::new(0, 0, 0)), Err(MsgError::NoCurrent));
        assert_eq!(cx.save(2, Message::new(0, 0, 0)), Err(MsgError::NoCurrent));
        let pick = |sel: Selection, q| cx.read_saved(q, sel).map(|m| (m.id, m.value));
        assert_eq!(pick(Selection::any().id(3), 0), Err(MsgError::NoMatch));
        assert_eq!(pick(Selection::any().id(1), 0), Ok((1, 20)));
        // `save` rewrites the fields it is given.
        cx.save(0, Message::new(1, 5, 0)).unwrap();
        assert_eq!(pick(Selection::any(), 0), Ok((1, 5)));
        assert_eq!(pick(Selection::any().from(cx.id()), 0), Ok((2, 10)));
        assert_eq!(pick(Selection::any().value(30), 0), Ok((1, 30)));
        assert_eq!(pick(Selection::any(), 0), Err(MsgError::NoMatch));
        assert_eq!(pick(Selection::any().constraint(0), 1), Ok((3, 10)));
        assert_eq!(pick(Selection::any(), 2), Err(MsgError::NoSuchSaveQueue(2)));
    })
    .unwrap();
    rt.run().unwrap();
    assert!(me.lock().unwrap().is_some());
}

/// A call its recipient reads past, or holds when it ends, is answered `Unanswered`; a
/// thread cannot call itself; a bounded read ends at its timeout exactly.
#[test]
fn messages_unanswered_calls_and_timeouts() {
    let mut rt = Runtime::simulated(1);
    let l = log();
    let l1 = l.clone();
    let r = rt
        .spawn(ThreadSpec::new("r").priority(1), move |cx| {
            let _ignored = cx.read(Read::Wait).unwrap();
            cx.work(ms(1));
            // Reading on puts the first call away unanswered.
            assert_eq!(cx.read(Read::Timeout(ms(4))), Err(MsgError::Timeout));
            note(&l1, cx, "r:timeout".into());
            let _held = cx.read(Read::Wait).unwrap();
            // Ends holding the second call.
        })
        .unwrap();
    let l2 = l.clone();
    rt.spawn(ThreadSpec::new("c").priority(2), move |cx| {
        assert_eq!(cx.call(cx.id(), Message::new(0, 0, 0)), Err(MsgError::CallSelf));
        assert_eq!(cx.call(r, Message::new(1, 0, 0)), Err(MsgError::Unanswered));
        note(&l2, cx, "c:first".into());
        cx.sleep(ms(10));
        assert_eq!(cx.call(r, Message::new(2, 0, 0)), Err(MsgError::Unanswered));
        note(&l2, cx, "c:second".into());
        assert!(matches!(cx.send(r, Message::new(3, 0, 0)), Err(MsgError::NoSuchThread(_))));
    })
    .unwrap();
    rt.run().unwrap();
    assert_eq!(take(&l), ["c:first@1", "r:timeout@5", "c:second@11"]);
}

/// In virtual time a message crosses CPUs directly: the recipient on CPU 1 runs at once.
#[test]
fn messages_cross_cpus_in_virtual_time() {
    let mut rt = Runtime::simulated(2);
    let server = rt
        .spawn_process(ThreadSpec::new("server").cpu(1), |cx, m| {
            cx.work(ms(2));
            cx.reply(Message::new(m.id, m.value + 1, 0)).unwrap();
            Flow::Stop
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("client").cpu(0), move |cx| {
        cx.work(ms(1));
        let a = cx.call(server, Message::new(0, 1, 0)).unwrap();
        assert_eq!((a.value, cx.now()), (2, Time::from_millis(3)));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.end, Time::from_millis(3));
}

/// A caller killed while it waits is not answered; the reply to it is dropped and its
/// message goes back to the pool (the pool of one message is usable again).
#[test]
fn messages_reply_to_a_killed_caller_is_dropped() {
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(Config::new(1).message_pool(1)).unwrap();
    let server = rt
        .spawn(ThreadSpec::new("server").priority(1), |cx| {
            let m = cx.read(Read::Wait).unwrap();
            cx.work(ms(5));
            assert_eq!(cx.reply(m), Ok(()));
            let m = cx.read(Read::Wait).unwrap();
            assert_eq!(m.id, 2);
        })
        .unwrap();
    let caller = rt
        .spawn(ThreadSpec::new("caller").priority(2), move |cx| {
            let _ = cx.call(server, Message::new(1, 0, 0));
            unreachable!("killed while waiting");
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("killer").priority(3), move |cx| {
        cx.sleep(ms(2));
        cx.kill(caller).unwrap();
        cx.sleep(ms(5));
        cx.send(server, Message::new(2, 0, 0)).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("caller").unwrap().outcome, Some(tempi::ThreadOutcome::Killed));
    assert_eq!(out.thread_named("server").unwrap().outcome, Some(tempi::ThreadOutcome::Completed));
}
