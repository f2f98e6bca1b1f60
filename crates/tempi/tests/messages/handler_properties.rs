//! Property tests of a handler under random traffic in virtual time: threads of random
//! priorities on one or two CPUs send to and call one handler that computes for a while per
//! message (so it is found busy and queues), and a killer thread of the highest priority may
//! kill any of them at random instants (inside the handler, or waiting at it). Whatever
//! happens, no message is lost or served twice: every message accepted is served exactly once
//! or counted as still queued at the run's end; every caller that is not killed gets an
//! answer (a call whose serving a kill cut short is answered `Unanswered`), and every call
//! answered gets its own answer; a
//! sender's messages are served in the order it sent them; and the run is exactly the same
//! when repeated.

use crate::common;

use std::sync::{Arc, Mutex};

use common::kills::{client, spawn_handler_clients, spawn_killer, Client, Ledger, UNIT};
use proptest::prelude::*;
use tempi::message::{Handler, Message, MsgError};
use tempi::{Runtime, ThreadId, ThreadOutcome, ThreadSpec};

/// What one run showed: the handler's log (sender, sequence number) in the order served, the
/// answers the clients saw ((sender, sequence) -> value), the attempts, the threads'
/// outcomes and the run's message counts.
#[derive(Debug, PartialEq)]
struct Seen {
    served: Vec<(usize, u64)>,
    ledger: Ledger,
    outcomes: Vec<Option<ThreadOutcome>>,
    queue_full: u64,
    queued_at_end: u64,
}

/// Each message's `id` names its sender, its `value` its sequence number with that sender;
/// the handler computes `work` units per message and answers `1000 id + value`.
fn run(cpus: usize, capacity: usize, work: u64, clients: &[Client], kills: &[(u64, usize)]) -> Seen {
    let served = Arc::new(Mutex::new(Vec::new()));
    let log = served.clone();
    let h = Handler::new("h", 0, capacity, move |hcx, m| {
        log.lock().unwrap().push((m.id as usize, m.value as u64));
        hcx.work(UNIT * work as u32);
        hcx.reply(Message::new(m.id, 1000 * m.id + m.value, 0));
    });
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let mut rt = Runtime::simulated(cpus);
    let ids = spawn_handler_clients(&mut rt, clients, &ledger, std::slice::from_ref(&h));
    spawn_killer(&mut rt, 10, UNIT, kills.iter().map(|&(at, v)| (at, ids[v % ids.len()])).collect());
    let out = rt.run().unwrap();
    let seen = Seen {
        served: served.lock().unwrap().clone(),
        ledger: std::mem::take(&mut *ledger.lock().unwrap()),
        outcomes: out.threads.iter().map(|t| t.outcome.clone()).collect(),
        queue_full: out.messages.handler_queue_full,
        queued_at_end: out.messages.queued_at_end,
    };
    assert!(!h.is_busy(), "the handler is idle after the run");
    seen
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_handler_loses_nothing_serves_nothing_twice_and_keeps_each_senders_order(
        cpus in 1usize..3,
        capacity in 1usize..6,
        work in 1u64..4,
        clients in (1usize..3).prop_flat_map(|cpus| proptest::collection::vec(client(cpus, false), 1..5)),
        kills in proptest::collection::vec((0u64..40, 0usize..5), 0..3),
    ) {
        let cpus = cpus.max(clients.iter().map(|c| c.0 + 1).max().unwrap_or(1));
        let mut kills = kills;
        kills.sort();
        let seen = run(cpus, capacity, work, &clients, &kills);
        // Served once at most.
        let mut once = seen.served.clone();
        once.sort();
        once.dedup();
        prop_assert_eq!(once.len(), seen.served.len(), "a message served twice: {:?}", seen.served);
        // Every accepted message is served or still queued at the end (a refused one is
        // counted by the run, even if its sender was killed before it saw the refusal).
        prop_assert_eq!(
            seen.served.len() as u64 + seen.queued_at_end,
            seen.ledger.attempts - seen.queue_full,
            "{:?}", seen
        );
        // Nobody is left waiting: every thread completed, or was killed.
        prop_assert!(
            seen.outcomes.iter().all(|o| matches!(o, Some(ThreadOutcome::Completed | ThreadOutcome::Killed))),
            "{:?}", seen
        );
        // Every answer is its own, and nothing but a full queue refuses, or a kill of the
        // thread whose stack the handler ran on while it served the call (`Unanswered`).
        for &((c, seq), r) in &seen.ledger.answers {
            match r {
                Ok(v) => prop_assert!(v == -1 || v == 1000 * c as i64 + seq as i64, "{:?}", seen),
                Err(MsgError::QueueFull) => {}
                Err(MsgError::Unanswered) if !kills.is_empty() => {}
                Err(e) => prop_assert!(false, "call ({}, {}) answered {:?}", c, seq, e),
            }
        }
        // Without kills, each sender's messages are served in the order sent, and all of
        // them are (the queue drains before the handler goes idle).
        if kills.is_empty() {
            for c in 0..clients.len() {
                let mine: Vec<u64> = seen.served.iter().filter(|s| s.0 == c).map(|s| s.1).collect();
                prop_assert!(mine.windows(2).all(|w| w[0] < w[1]), "sender {}: {:?}", c, mine);
            }
            prop_assert_eq!(seen.queued_at_end, 0);
            prop_assert!(seen.outcomes.iter().all(|o| *o == Some(ThreadOutcome::Completed)), "{:?}", seen.outcomes);
        }
        // The same again, exactly.
        prop_assert_eq!(run(cpus, capacity, work, &clients, &kills), seen);
    }
}

/// A client of the gate: its CPU, its priority, and for each message whether it is a call
/// that waits at the gate (`true`) or one that is served and opens it (`false`), with the
/// work done outside the handler after it (units of 100 µs).
type GateClient = (usize, i32, Vec<(bool, u64)>);

fn gate_client(cpus: usize) -> impl Strategy<Value = GateClient> {
    (0..cpus, 1i32..6, proptest::collection::vec((any::<bool>(), 0u64..4), 1..8))
}

/// What a gate run showed: each message served (sender, sequence number, whether it waited
/// at the gate), in order, the answers, the attempts, the outcomes and the run's counts.
#[derive(Debug, PartialEq)]
struct GateSeen {
    served: Vec<(usize, u64, bool)>,
    answers: Vec<((usize, u64), Result<i64, MsgError>)>,
    attempts: u64,
    outcomes: Vec<Option<ThreadOutcome>>,
    queue_full: u64,
    queued_at_end: u64,
}

/// A monitor built from a handler's save queue: a call marked "wait" is saved (WAIT) unless
/// the save queue is full; any other message is served (2 units of work) and then opens the
/// gate, answering every saved call (SIGNAL). An opener of the lowest priority sends an
/// opening message every 10 units until 50 have gone, so no waiter is left at the end.
fn gate_run(cpus: usize, capacity: usize, clients: &[GateClient], kills: &[(u64, usize)]) -> GateSeen {
    let served = Arc::new(Mutex::new(Vec::new()));
    let log = served.clone();
    let gate = Handler::new("gate", 0, capacity, move |hcx, m| {
        let (sender, waits) = ((m.id / 10) as usize, m.id % 10 == 1);
        let answer = |m: Message| Message::new(m.id, 1000 * (m.id / 10) + m.value, 0);
        if waits && m.expects_reply && hcx.save(0, m).is_ok() {
            return;
        }
        log.lock().unwrap().push((sender, m.value as u64, waits));
        hcx.work(UNIT * 2);
        hcx.reply(answer(m));
        while let Ok(w) = hcx.read_saved(0, tempi::message::Selection::any()) {
            log.lock().unwrap().push(((w.id / 10) as usize, w.value as u64, true));
            hcx.reply(answer(w));
        }
    })
    .save_queues(1);
    let answers = Arc::new(Mutex::new(Vec::new()));
    let attempts = Arc::new(Mutex::new(0u64));
    let mut rt = Runtime::simulated(cpus);
    let mut ids: Vec<ThreadId> = Vec::new();
    for (c, (cpu, prio, msgs)) in clients.iter().cloned().enumerate() {
        let (gate, answers, attempts) = (gate.clone(), answers.clone(), attempts.clone());
        let id = rt
            .spawn(ThreadSpec::new(format!("c{c}")).cpu(cpu).priority(prio), move |cx| {
                for (seq, &(waits, after)) in msgs.iter().enumerate() {
                    let seq = seq as i64 + 1;
                    *attempts.lock().unwrap() += 1;
                    let r = gate.call(cx, Message::new(10 * (c as i64 + 1) + waits as i64, seq, 0));
                    answers.lock().unwrap().push(((c + 1, seq as u64), r.map(|m| m.value)));
                    if after > 0 {
                        cx.work(UNIT * after as u32);
                    }
                }
            })
            .unwrap();
        ids.push(id);
    }
    let opener = gate.clone();
    let open_attempts = attempts.clone();
    rt.spawn(ThreadSpec::new("opener").priority(0), move |cx| {
        for k in 1..=50u64 {
            cx.sleep_until(tempi::Time::from_nanos(k * 10 * UNIT.as_nanos() as u64));
            *open_attempts.lock().unwrap() += 1;
            let _ = opener.send(cx, Message::new(0, k as i64, 0));
        }
    })
    .unwrap();
    spawn_killer(&mut rt, 10, UNIT, kills.iter().map(|&(at, v)| (at, ids[v % ids.len()])).collect());
    let out = rt.run().unwrap();
    assert!(!gate.is_busy());

    GateSeen {
        served: served.lock().unwrap().clone(),
        answers: answers.lock().unwrap().clone(),
        attempts: *attempts.lock().unwrap(),
        outcomes: out.threads.iter().map(|t| t.outcome.clone()).collect(),
        queue_full: out.messages.handler_queue_full,
        queued_at_end: out.messages.queued_at_end,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_gate_of_saved_calls_releases_every_waiter_once(
        cpus in 1usize..3,
        capacity in 1usize..5,
        clients in (1usize..3).prop_flat_map(|cpus| proptest::collection::vec(gate_client(cpus), 1..5)),
        kills in proptest::collection::vec((0u64..60, 0usize..5), 0..3),
    ) {
        let cpus = cpus.max(clients.iter().map(|c| c.0 + 1).max().unwrap_or(1));
        let mut kills = kills;
        kills.sort();
        let seen = gate_run(cpus, capacity, &clients, &kills);
        let mut once = seen.served.clone();
        once.sort();
        once.dedup();
        prop_assert_eq!(once.len(), seen.served.len(), "a message served twice: {:?}", seen.served);
        prop_assert!(
            seen.outcomes.iter().all(|o| matches!(o, Some(ThreadOutcome::Completed | ThreadOutcome::Killed))),
            "a thread left waiting: {:?}", seen
        );
        prop_assert_eq!(
            seen.served.len() as u64 + seen.queued_at_end,
            seen.attempts - seen.queue_full,
            "{:?}", seen
        );
        for &((c, seq), r) in &seen.answers {
            match r {
                Ok(v) => prop_assert_eq!(v, 1000 * c as i64 + seq as i64),
                Err(MsgError::QueueFull) => {}
                Err(MsgError::Unanswered) if !kills.is_empty() => {}
                Err(e) => prop_assert!(false, "call ({}, {}) answered {:?}", c, seq, e),
            }
        }
        if kills.is_empty() {
            prop_assert_eq!(seen.queued_at_end, 0);
        }
        prop_assert_eq!(gate_run(cpus, capacity, &clients, &kills), seen);
    }
}

/// What a nested run showed: each message served (`'o'`uter or `'i'`nner, sender, sequence
/// number), the clients' ledger, and the threads' outcomes.
type NestedSeen = (Vec<(char, usize, u64)>, Ledger, Vec<Option<ThreadOutcome>>);

/// Two handlers, one invoking the other: `outer` calls `inner` from inside (or, when `inner`
/// is busy and a call would wait, which a handler may not, answers -2), with `tame_prio_inv`
/// on `inner` when `tame`; clients call or send to either; random kills. Nobody is left
/// waiting, no message reaches a handler's function twice, and every answer is its own.
fn nested_run(cpus: usize, tame: bool, clients: &[Client], kills: &[(u64, usize)]) -> NestedSeen {
    let served = Arc::new(Mutex::new(Vec::new()));
    let log = served.clone();
    let inner = Handler::new("inner", 0, 3, move |hcx, m| {
        log.lock().unwrap().push(('i', m.id as usize, m.value as u64));
        hcx.work(UNIT * 2);
        hcx.reply(Message::new(m.id, 1000 * m.id + m.value, 0));
    })
    .tame_prio_inv(tame);
    let log = served.clone();
    let inner2 = inner.clone();
    let outer = Handler::new("outer", 0, 3, move |hcx, m| {
        log.lock().unwrap().push(('o', m.id as usize, m.value as u64));
        hcx.work(UNIT);
        let v = match hcx.call_handler(&inner2, m) {
            Ok(r) => r.value,
            Err(MsgError::WouldBlock) => -2,
            Err(_) => -3,
        };
        hcx.reply(Message::new(m.id, v, 0));
    });
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let mut rt = Runtime::simulated(cpus);
    // Even values go to `outer`, odd ones to `inner`.
    let ids = spawn_handler_clients(&mut rt, clients, &ledger, &[outer.clone(), inner.clone()]);
    spawn_killer(&mut rt, 10, UNIT, kills.iter().map(|&(at, v)| (at, ids[v % ids.len()])).collect());
    let out = rt.run().unwrap();
    assert!(!inner.is_busy() && !outer.is_busy());
    let ledger = std::mem::take(&mut *ledger.lock().unwrap());
    let outcomes = out.threads.iter().map(|t| t.outcome.clone()).collect();
    let served = served.lock().unwrap().clone();
    (served, ledger, outcomes)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn nested_handlers_leave_nobody_waiting_and_answer_each_their_own(
        cpus in 1usize..3,
        tame in any::<bool>(),
        clients in (1usize..3).prop_flat_map(|cpus| proptest::collection::vec(client(cpus, false), 1..5)),
        kills in proptest::collection::vec((0u64..40, 0usize..5), 0..3),
    ) {
        let cpus = cpus.max(clients.iter().map(|c| c.0 + 1).max().unwrap_or(1));
        let mut kills = kills;
        kills.sort();
        let (served, ledger, outcomes) = nested_run(cpus, tame, &clients, &kills);
        prop_assert!(
            outcomes.iter().all(|o| matches!(o, Some(ThreadOutcome::Completed | ThreadOutcome::Killed))),
            "a thread left waiting: {:?}", outcomes
        );
        let mut once = served.clone();
        once.sort();
        once.dedup();
        prop_assert_eq!(once.len(), served.len(), "served twice: {:?}", served);
        for &((c, seq), r) in &ledger.answers {
            match r {
                Ok(v) => prop_assert!(
                    v == -1 || v == -2 || v == 1000 * c as i64 + seq as i64,
                    "({}, {}) answered {}", c, seq, v
                ),
                Err(MsgError::QueueFull) => {}
                Err(MsgError::Unanswered) if !kills.is_empty() => {}
                Err(e) => prop_assert!(false, "({}, {}) answered {:?}", c, seq, e),
            }
        }
        let again = nested_run(cpus, tame, &clients, &kills);
        prop_assert_eq!(format!("{:?}", again), format!("{:?}", (served, ledger, outcomes)));
    }
}
