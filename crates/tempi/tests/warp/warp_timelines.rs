//! Exact rollback and re-execution timelines on hand-built cases, the workers stepped and the
//! messages delivered by hand.

use tempi::warp::{Engine, EventKey, LpId, LpSpec, Rollback, Scenario, StepOutcome, WarpConfig};

use super::{short_log, Script, Scripted};

fn none() -> Script {
    Script(Vec::new())
}

fn send(to: u32, delay: u64, then: Script) -> Script {
    Script(vec![(to, delay, then)])
}

/// A scenario with one LP per entry of `lps` (worker, rollback).
fn scenario(lps: &[(usize, Rollback)]) -> Scenario<Scripted> {
    let mut s = Scenario::new(Scripted);
    for &(worker, rollback) in lps {
        s.add_lp(LpSpec { state: Vec::new(), rollback, worker });
    }
    s
}

fn config(workers: usize) -> WarpConfig {
    WarpConfig { workers, log_capacity: 256, ..WarpConfig::default() }
}

fn finish(e: &mut Engine<Scripted>) {
    e.collect(EventKey::MAX, |_| {}).unwrap();
    assert_eq!(e.gvt(), EventKey::MAX, "everything committed");
}

#[test]
fn one_straggler_rolls_back_and_reexecutes() {
    let mut s = scenario(&[(0, Rollback::Reverse), (1, Rollback::Reverse)]);
    s.schedule(LpId(1), 10, none()).unwrap();
    s.schedule(LpId(1), 20, none()).unwrap();
    s.schedule(LpId(0), 5, send(1, 10, none())).unwrap();
    let mut e = Engine::new(s, config(2)).unwrap();
    assert_eq!(e.step(1).unwrap(), StepOutcome::Processed);
    assert_eq!(e.step(1).unwrap(), StepOutcome::Processed);
    assert_eq!(e.step(0).unwrap(), StepOutcome::Processed);
    assert_eq!(e.flush(0), 1);
    e.step(1).unwrap(); // the straggler at 15 undoes 20, then 15 runs
    e.step(1).unwrap();
    finish(&mut e);
    assert_eq!(short_log(e.log()), "P1@10 P1@20 P0@5 R1@20 P1@15 P1@20 C0@5 C1@10 C1@15 C1@20");
    assert_eq!(e.state(LpId(1)).unwrap(), &vec![10, 15, 20]);
    let c = e.counters(LpId(1)).unwrap();
    assert_eq!((c.processed, c.rolled_back, c.redone, c.committed, c.antis_sent), (4, 1, 1, 3, 0));
}

#[test]
fn anti_messages_cascade_across_three_lps() {
    // A (0) sends to B (1) at 25, which sends to C (2) at 30; D (3) sends A a straggler at 15.
    let mut s = scenario(&[
        (0, Rollback::Reverse),
        (1, Rollback::StateSaving),
        (2, Rollback::Reverse),
        (3, Rollback::StateSaving),
    ]);
    s.schedule(LpId(0), 20, send(1, 5, send(2, 5, none()))).unwrap();
    s.schedule(LpId(2), 40, none()).unwrap();
    s.schedule(LpId(3), 10, send(0, 5, none())).unwrap();
    let mut e = Engine::new(s, config(4)).unwrap();
    e.step(0).unwrap();
    e.flush(0);
    e.step(1).unwrap();
    e.flush(1);
    e.step(2).unwrap();
    e.step(2).unwrap();
    e.step(3).unwrap();
    e.flush(3);
    e.step(0).unwrap(); // straggler: A undoes 20 and cancels B's 25
    e.flush(0);
    assert_eq!(e.step(1).unwrap(), StepOutcome::Handled); // B undoes 25, cancels C's 30
    e.flush(1);
    e.step(2).unwrap(); // C undoes 40 and 30, then runs 40 again
    e.step(0).unwrap(); // A re-executes 20: the same message to B, with the same key
    e.flush(0);
    e.step(1).unwrap();
    e.flush(1);
    e.step(2).unwrap(); // 30 is now a straggler for C
    e.step(2).unwrap();
    finish(&mut e);
    assert_eq!(
        short_log(e.log()),
        "P0@20 P1@25 P2@30 P2@40 P3@10 \
         R0@20 A0>1@25 P0@15 \
         R1@25 A1>2@30 X1@25 \
         R2@40 R2@30 X2@30 P2@40 \
         P0@20 P1@25 R2@40 P2@30 P2@40 \
         C0@15 C0@20 C1@25 C2@30 C2@40 C3@10"
    );
    assert_eq!(e.state(LpId(2)).unwrap(), &vec![30, 40]);
    assert_eq!(e.counters(LpId(2)).unwrap().rolled_back, 3);
    let out = e.outcome();
    assert_eq!((out.committed, out.processed, out.antis_sent), (6, 11, 2));
}

#[test]
fn a_rollback_extends_while_it_waits_for_outbox_room() {
    // The outbox holds one message, so LP 0's rollback waits for delivery between undos; a
    // second, earlier straggler arrives meanwhile and deepens it.
    let mut s = scenario(&[(0, Rollback::StateSaving), (1, Rollback::Reverse), (1, Rollback::Reverse)]);
    for t in [10, 20, 30] {
        s.schedule(LpId(0), t, send(1, 100, none())).unwrap();
    }
    s.schedule(LpId(2), 1, send(0, 24, none())).unwrap();
    s.schedule(LpId(2), 2, send(0, 13, none())).unwrap();
    let cfg = WarpConfig { outbox_capacity: 1, max_sends_per_event: 1, ..config(2) };
    let mut e = Engine::new(s, cfg).unwrap();
    e.step(0).unwrap();
    e.flush(0);
    e.step(0).unwrap();
    e.flush(0);
    e.step(0).unwrap(); // the outbox is now full
    e.step(1).unwrap();
    e.flush(1);
    assert_eq!(e.step(0).unwrap(), StepOutcome::Handled); // straggler 25: the rollback waits
    e.step(1).unwrap();
    e.flush(1);
    e.step(0).unwrap(); // straggler 15 arrives during the rollback to 25
    let waiting = e.compute_gvt();
    assert_eq!(waiting.time, 15, "the unfinished rollback holds GVT down");
    assert_eq!(e.flush(0), 1);
    e.step(0).unwrap(); // undoes 30 (its anti-message fills the outbox)
    e.flush(0);
    e.step(0).unwrap(); // undoes 20: the rollback reached below 15's
    e.flush(0);
    e.step(0).unwrap();
    e.step(0).unwrap();
    e.flush(0);
    e.step(0).unwrap();
    e.step(0).unwrap();
    e.flush(0);
    for _ in 0..4 {
        e.step(1).unwrap();
    }
    finish(&mut e);
    assert_eq!(
        short_log(e.log()),
        "P0@10 P0@20 P0@30 P2@1 P2@2 \
         R0@30 A0>1@130 R0@20 A0>1@120 \
         P0@15 P0@20 P0@25 P0@30 \
         X1@130 X1@120 P1@110 P1@120 P1@130 \
         C0@10 C0@15 C0@20 C0@25 C0@30 C1@110 C1@120 C1@130 C2@1 C2@2"
    );
    assert_eq!(e.state(LpId(0)).unwrap(), &vec![10, 15, 20, 25, 30]);
}

#[test]
fn an_anti_message_before_its_message_annihilates_it_on_arrival() {
    let mut s = scenario(&[(0, Rollback::Reverse), (1, Rollback::Reverse), (1, Rollback::Reverse)]);
    s.schedule(LpId(0), 20, send(1, 5, none())).unwrap();
    s.schedule(LpId(2), 1, send(0, 14, none())).unwrap();
    let mut e = Engine::new(s, config(2)).unwrap();
    e.step(0).unwrap();
    e.step(1).unwrap();
    e.flush(1);
    e.step(0).unwrap(); // rollback: the outbox holds the message, then its anti-message
    assert_eq!(e.outbox_len(0), 2);
    assert!(e.deliver(0, 1)); // the anti-message overtakes
    assert_eq!(e.step(1).unwrap(), StepOutcome::Handled); // it waits for its message
    assert_eq!(e.compute_gvt().time, 20, "A's re-execution of 20 is still to come");
    assert!(e.deliver(0, 0));
    assert_eq!(e.step(1).unwrap(), StepOutcome::Handled); // the message meets it: both vanish
    e.step(0).unwrap();
    e.flush(0);
    e.step(1).unwrap();
    finish(&mut e);
    assert_eq!(short_log(e.log()), "P0@20 P2@1 R0@20 A0>1@25 P0@15 X1@25 P0@20 P1@25 C0@15 C0@20 C1@25 C2@1");
    assert_eq!(e.state(LpId(1)).unwrap(), &vec![25]);
}

#[test]
fn a_never_rollback_lp_sees_only_committed_events() {
    // LP 1 is conservative: the message it gets at 25 is cancelled and re-sent before GVT
    // reaches it, and it runs only the final copy.
    let mut s = scenario(&[(0, Rollback::Reverse), (1, Rollback::NeverRollback), (1, Rollback::Reverse)]);
    s.schedule(LpId(0), 20, send(1, 5, none())).unwrap();
    s.schedule(LpId(2), 1, send(0, 14, none())).unwrap();
    let mut e = Engine::new(s, config(2)).unwrap();
    e.step(0).unwrap();
    e.flush(0);
    e.step(1).unwrap(); // takes the message in, runs LP 2's event
    e.flush(1);
    assert_eq!(e.step(1).unwrap(), StepOutcome::Idle); // 25 is above GVT: it waits
    e.step(0).unwrap();
    e.flush(0);
    e.step(1).unwrap(); // the anti-message annihilates the waiting copy
    e.step(0).unwrap();
    e.flush(0);
    assert_eq!(e.step(1).unwrap(), StepOutcome::Handled);
    let gvt = e.compute_gvt();
    assert_eq!(gvt.time, 25);
    e.collect(gvt, |_| {}).unwrap();
    assert_eq!(e.step(1).unwrap(), StepOutcome::Processed); // at GVT now: safe
    finish(&mut e);
    assert_eq!(short_log(e.log()), "P0@20 P2@1 R0@20 A0>1@25 P0@15 X1@25 P0@20 C0@15 C0@20 C2@1 P1@25 C1@25");
    let c = e.counters(LpId(1)).unwrap();
    assert_eq!((c.processed, c.rolled_back, c.committed), (1, 0, 1));
}

#[test]
fn the_log_is_bounded_and_counts_what_it_drops() {
    let mut s = scenario(&[(0, Rollback::Reverse)]);
    for t in 0..10 {
        s.schedule(LpId(0), t, none()).unwrap();
    }
    let mut e = Engine::new(s, WarpConfig { log_capacity: 4, ..WarpConfig::default() }).unwrap();
    let out = e.run(tempi::warp::Schedule::RoundRobin, |_| {}).unwrap();
    assert_eq!(e.log().len(), 4);
    assert_eq!(out.log_dropped, 16); // 10 processes + 10 commits, 4 kept
}

/// The cascade case of `anti_messages_cascade_across_three_lps`, run in the same order with
/// lazy or aggressive cancellation: the log and A's anti-messages.
fn cascade(lazy_cancellation: bool) -> (String, u64, Vec<Vec<u64>>) {
    let mut s = scenario(&[
        (0, Rollback::Reverse),
        (1, Rollback::StateSaving),
        (2, Rollback::Reverse),
        (3, Rollback::StateSaving),
    ]);
    s.schedule(LpId(0), 20, send(1, 5, send(2, 5, none()))).unwrap();
    s.schedule(LpId(2), 40, none()).unwrap();
    s.schedule(LpId(3), 10, send(0, 5, none())).unwrap();
    let mut e = Engine::new(s, WarpConfig { lazy_cancellation, ..config(4) }).unwrap();
    for w in [0, 1, 2, 2, 3, 0, 1, 2, 0, 1, 2, 0, 1, 2] {
        e.step(w).unwrap();
        e.flush(w);
    }
    finish(&mut e);
    let states = (0..4).map(|lp| e.state(LpId(lp)).unwrap().clone()).collect();
    (short_log(e.log()), e.counters(LpId(0)).unwrap().antis_sent, states)
}

#[test]
fn lazy_cancellation_keeps_a_message_the_re_execution_sends_again() {
    // D's straggler at 15 sends nothing, so A's re-execution of 20 sends B the very message it
    // sent before (same key, same payload): lazily, no anti-message, and B and C keep their
    // work; aggressively, the cascade of the other test.
    let (lazy, lazy_antis, lazy_states) = cascade(true);
    let (aggressive, antis, states) = cascade(false);
    assert_eq!(lazy, "P0@20 P1@25 P2@30 P2@40 P3@10 R0@20 P0@15 P0@20 C0@15 C0@20 C1@25 C2@30 C2@40 C3@10");
    assert_eq!(lazy_antis, 0);
    assert_eq!(
        aggressive,
        "P0@20 P1@25 P2@30 P2@40 P3@10 R0@20 A0>1@25 P0@15 R1@25 A1>2@30 X1@25 R2@40 R2@30 X2@30 P2@40 P0@20 \
         P1@25 R2@40 P2@30 P2@40 C0@15 C0@20 C1@25 C2@30 C2@40 C3@10"
    );
    assert_eq!(antis, 1);
    assert_eq!(lazy_states, states);
    assert_eq!(states, vec![vec![15, 20], vec![25], vec![30, 40], vec![10]]);
}
