//! Tests of the EDF admission engines (`tempi::policy::admit`): hand-computed cases (withdrawals
//! among them), then random operation streams checked against a naive oracle that recomputes
//! everything from a plain list. Touches only the engines' public interface.

use proptest::prelude::*;
use std::time::Duration;
use tempi::policy::admit::{self, Admission, AdmissionEngine, AdmitError, AdmitId};
use tempi::Time;

fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

fn at(n: u64) -> Time {
    Time::from_nanos(n)
}

fn engines(capacity: usize) -> Vec<Box<dyn AdmissionEngine>> {
    admit::NAMES.iter().map(|name| admit::by_name(name, capacity).unwrap()).collect()
}

fn accepted(r: Result<Admission, AdmitError>) -> AdmitId {
    match r {
        Ok(Admission::Accepted(id)) => id,
        other => panic!("expected acceptance, got {other:?}"),
    }
}

#[test]
fn hand_computed_admissions_and_idle_times() {
    for mut e in engines(8) {
        let name = e.name();
        let t0 = at(0);
        let late = accepted(e.admit(ns(2), at(5), t0));
        // min(4 − 0 − 0, laxity of the deadline-5 job = 5 − 2) = 3.
        assert_eq!(e.idle_before(at(4), t0), ns(3), "{name}");
        assert_eq!(e.admit(ns(4), at(4), t0), Ok(Admission::Rejected { idle: ns(3) }), "{name}");
        let early = accepted(e.admit(ns(2), at(4), t0));
        // Both jobs come before deadline 10 and none after it: 10 − 0 − 4 = 6.
        assert_eq!(e.idle_before(at(10), t0), ns(6), "{name}");
        // min(4 − 0 − 2, laxity of the deadline-5 job = 5 − 4) = 1.
        assert_eq!(e.idle_before(at(4), t0), ns(1), "{name}");
        assert_eq!(e.idle_before(at(5), t0), ns(1), "{name}");
        // A rejection leaves everything as it was.
        assert_eq!(e.admit(ns(7), at(10), t0), Ok(Admission::Rejected { idle: ns(6) }), "{name}");
        assert_eq!(e.admit(ns(2), at(4), t0), Ok(Admission::Rejected { idle: ns(1) }), "{name}");
        assert_eq!(e.len(), 2, "{name}");
        // An equal deadline goes after the existing one: 5 − 0 − 4 = 1 fits exactly.
        let tie = accepted(e.admit(ns(1), at(5), t0));
        assert!(tie > late, "{name}");
        // Finishes 2, 4, 5; laxities 2, 1, 0.
        assert_eq!(e.idle_before(at(100), t0), ns(95), "{name}");
        assert_eq!(e.idle_before(at(4), t0), ns(0), "{name}");
        // Time passing uncharged lowers every laxity: at t = 1 the tie job is 1 late.
        assert_eq!(e.idle_before(at(100), at(1)), ns(94), "{name}");
        assert_eq!(e.idle_before(at(5), at(1)), ns(0), "{name}");
        // Run the deadline-4 job for 1: everything after it finishes 1 earlier (laxities 3, 2, 1).
        e.charge(early, ns(1)).unwrap();
        assert_eq!(e.remaining(early), Some(ns(1)), "{name}");
        assert_eq!(e.idle_before(at(4), t0), ns(1), "{name}");
        assert_eq!(e.idle_before(at(4), at(1)), ns(0), "{name}");
        // Reclaim: the deadline-4 job ends having used 1 of its 2.
        e.finish(early).unwrap();
        assert_eq!(e.remaining(early), Some(ns(0)), "{name}");
        assert_eq!(e.len(), 3, "{name}");
        // At t = 1 the deadline-5 jobs finish at 3 and 4: laxities 2 and 1.
        assert_eq!(e.idle_before(at(100), at(1)), ns(96), "{name}");
        assert_eq!(e.idle_before(at(4), at(1)), ns(1), "{name}");
        // Charging past the remaining time stops at zero; the tie job now finishes at 2.
        e.charge(late, ns(50)).unwrap();
        assert_eq!(e.remaining(late), Some(ns(0)), "{name}");
        assert_eq!(e.idle_before(at(4), at(1)), ns(3), "{name}");
        // Expiry is strict: a deadline equal to now stays.
        assert_eq!(e.expire(at(4)), 0, "{name}");
        assert_eq!(e.expire(at(5)), 1, "{name}");
        assert_eq!(e.len(), 2, "{name}");
        assert_eq!(e.charge(early, ns(1)), Err(AdmitError::UnknownJob(early)), "{name}");
        assert_eq!(e.finish(early), Err(AdmitError::UnknownJob(early)), "{name}");
        assert_eq!(e.remaining(early), None, "{name}");
        assert_eq!(e.expire(at(6)), 2, "{name}");
        assert!(e.is_empty(), "{name}");
        assert_eq!(e.idle_before(at(100), at(6)), ns(94), "{name}");
    }
}

#[test]
fn hand_computed_withdrawals() {
    for mut e in engines(8) {
        let name = e.name();
        let t0 = at(0);
        let a = accepted(e.admit(ns(2), at(5), t0));
        let b = accepted(e.admit(ns(2), at(4), t0));
        let c = accepted(e.admit(ns(1), at(9), t0));
        // EDF order b, a, c: finishes 2, 4, 5; laxities 2, 1, 4.
        assert_eq!(e.idle_before(at(4), t0), ns(1), "{name}");
        e.withdraw(b).unwrap();
        // a, c finish at 2 and 3: laxities 3 and 6; nothing is due at or before 4.
        assert_eq!(e.len(), 2, "{name}");
        assert_eq!(e.remaining(b), None, "{name}");
        assert_eq!(e.idle_before(at(4), t0), ns(3), "{name}");
        assert_eq!(e.idle_before(at(5), t0), ns(3), "{name}");
        assert_eq!(e.idle_before(at(100), t0), ns(97), "{name}");
        assert_eq!(e.withdraw(b), Err(AdmitError::UnknownJob(b)), "{name}");
        assert_eq!(e.charge(b, ns(1)), Err(AdmitError::UnknownJob(b)), "{name}");
        assert_eq!(e.finish(b), Err(AdmitError::UnknownJob(b)), "{name}");
        // A job charged part of its time gives back only what it has left: c then finishes at 1.
        e.charge(a, ns(1)).unwrap();
        e.withdraw(a).unwrap();
        assert_eq!(e.len(), 1, "{name}");
        assert_eq!(e.idle_before(at(9), t0), ns(8), "{name}");
        assert_eq!(e.idle_before(at(5), t0), ns(5), "{name}");
        // A finished job can be withdrawn too; then nothing is left, and expiry finds nothing.
        e.finish(c).unwrap();
        e.withdraw(c).unwrap();
        assert!(e.is_empty(), "{name}");
        assert_eq!(e.expire(at(10)), 0, "{name}");
        assert_eq!(e.idle_before(at(9), t0), ns(9), "{name}");
        // Handles are not reused: the next acceptance is the fourth.
        let d = accepted(e.admit(ns(9), at(9), t0));
        assert!(d > c && d.deadline() == at(9), "{name}");
        assert_eq!(e.idle_before(at(9), t0), ns(0), "{name}");
    }
}

#[test]
fn a_withdrawn_job_leaves_the_engine_as_if_never_admitted() {
    // Jobs due at 10, 20, ..., 80 with 3, 1, 4, 1, 5, 9, 2, 6 of work; the one due at 30
    // (the third) is withdrawn from one engine and never admitted to its twin.
    let work = [3, 1, 4, 1, 5, 9, 2, 6];
    for name in admit::NAMES {
        let mut e = admit::by_name(name, 8).unwrap();
        let mut twin = admit::by_name(name, 8).unwrap();
        let mut third = None;
        for (i, &c) in work.iter().enumerate() {
            let d = at(10 * (i as u64 + 1));
            let id = accepted(e.admit(ns(c), d, at(0)));
            if i == 2 {
                third = Some(id);
            } else {
                accepted(twin.admit(ns(c), d, at(0)));
            }
        }
        e.withdraw(third.unwrap()).unwrap();
        assert_eq!((e.len(), twin.len()), (7, 7), "{name}");
        for q in 0..95 {
            assert_eq!(e.idle_before(at(q), at(1)), twin.idle_before(at(q), at(1)), "{name} before {q}");
        }
        // The room is free: an eighth job fits in both, a ninth in neither.
        accepted(e.admit(ns(1), at(90), at(1)));
        accepted(twin.admit(ns(1), at(90), at(1)));
        assert_eq!(e.admit(ns(1), at(95), at(1)), Err(AdmitError::Full { capacity: 8 }), "{name}");
    }
}

/// The shared minimum-laxity pointers after a withdrawal: those of the list without it.
#[test]
fn withdrawing_a_new_minimum_splits_the_shared_pointer_again() {
    for mut e in [admit::MinLaxityEngine::with_capacity(4), admit::MinLaxityEngine::hashed(4)] {
        // Keys 5 − 1 = 4 and 7 − 3 = 4: two pointers.
        accepted(e.admit(ns(1), at(5), at(0)));
        accepted(e.admit(ns(2), at(7), at(0)));
        assert_eq!(e.shared_pointers(), 2);
        // 3 due at 6 cuts the deadline-7 job's key to 1: one pointer, shared by all three.
        let mid = accepted(e.admit(ns(3), at(6), at(0)));
        assert_eq!(e.shared_pointers(), 1);
        assert_eq!(e.idle_before(at(5), at(0)), ns(1));
        e.withdraw(mid).unwrap();
        assert_eq!(e.shared_pointers(), 2);
        assert_eq!(e.idle_before(at(5), at(0)), ns(4));
        assert_eq!(e.idle_before(at(6), at(0)), ns(4));
        assert_eq!(e.len(), 2);
    }
}

#[test]
fn past_deadlines_and_zero_work() {
    for mut e in engines(8) {
        let name = e.name();
        assert_eq!(e.admit(ns(1), at(3), at(5)), Ok(Admission::Rejected { idle: ns(0) }), "{name}");
        // Zero work due now fits; due before now does not.
        accepted(e.admit(ns(0), at(5), at(5)));
        assert_eq!(e.admit(ns(0), at(4), at(5)), Ok(Admission::Rejected { idle: ns(0) }), "{name}");
        assert_eq!(e.idle_before(at(5), at(5)), ns(0), "{name}");
    }
}

#[test]
fn deadlines_past_the_range_are_refused_by_every_engine_and_queries_still_answer() {
    let last = at(admit::MAX_DEADLINE_NS);
    let beyond = at(admit::MAX_DEADLINE_NS + 1);
    for mut e in engines(4) {
        let name = e.name();
        accepted(e.admit(ns(3), last, at(0)));
        assert_eq!(e.admit(ns(1), beyond, at(0)), Err(AdmitError::DeadlineTooLate { deadline: beyond }), "{name}");
        assert_eq!(
            e.admit(ns(1), Time::MAX, at(0)),
            Err(AdmitError::DeadlineTooLate { deadline: Time::MAX }),
            "{name}"
        );
        assert_eq!(e.len(), 1, "{name}");
        // A query is not an admission: any deadline has an answer.
        assert_eq!(e.idle_before(Time::MAX, at(0)), ns(u64::MAX - 3), "{name}");
        assert_eq!(e.idle_before(last, at(7)), ns(admit::MAX_DEADLINE_NS - 10), "{name}");
    }
}

#[test]
fn an_admission_after_a_query_sees_every_change_made_in_between() {
    for mut e in engines(8) {
        let name = e.name();
        let first = accepted(e.admit(ns(4), at(10), at(0)));
        // Asked with 4 ns of work ahead: 6 ns idle.
        assert_eq!(e.idle_before(at(10), at(0)), ns(6), "{name}");
        // The work ahead shrinks, then grows, between the query and the admission.
        e.finish(first).unwrap();
        accepted(e.admit(ns(5), at(8), at(0)));
        // Work ahead of deadline 10 is now 5 ns: 10 − 5 = 5 ns idle, not the 6 ns asked before.
        assert_eq!(e.admit(ns(6), at(10), at(0)), Ok(Admission::Rejected { idle: ns(5) }), "{name}");
        // A rejection changes nothing; the same deadline later in time has less idle time.
        assert_eq!(e.admit(ns(5), at(10), at(1)), Ok(Admission::Rejected { idle: ns(4) }), "{name}");
        accepted(e.admit(ns(4), at(10), at(1)));
        assert_eq!(e.idle_before(at(10), at(1)), ns(0), "{name}");
    }
}

#[test]
fn capacity_is_a_hard_limit_and_expiry_frees_it() {
    for mut e in engines(2) {
        let name = e.name();
        accepted(e.admit(ns(1), at(10), at(0)));
        accepted(e.admit(ns(1), at(20), at(0)));
        assert_eq!(e.admit(ns(1), at(30), at(0)), Err(AdmitError::Full { capacity: 2 }), "{name}");
        assert_eq!(e.expire(at(11)), 1, "{name}");
        accepted(e.admit(ns(1), at(30), at(11)));
        assert_eq!(e.len(), 2, "{name}");
        assert_eq!(e.admit(ns(1), at(40), at(11)), Err(AdmitError::Full { capacity: 2 }), "{name}");
    }
}

#[test]
fn handles_are_not_reused_after_expiry() {
    for mut e in engines(1) {
        let first = accepted(e.admit(ns(1), at(10), at(0)));
        assert_eq!(e.expire(at(11)), 1);
        let second = accepted(e.admit(ns(1), at(10), at(0)));
        assert_ne!(first, second);
        assert_eq!(e.remaining(first), None);
        assert_eq!(e.remaining(second), Some(ns(1)));
    }
}

#[test]
fn unknown_names_build_nothing() {
    assert!(admit::by_name("min_laxity_missing", 4).is_none());
    for name in admit::NAMES {
        assert_eq!(admit::by_name(name, 4).unwrap().name(), name);
    }
}

/// The naive oracle: a plain list, everything recomputed from the definition on each call.
#[derive(Clone, Debug, Default)]
struct Oracle {
    /// (deadline, acceptance number, remaining), in acceptance order.
    jobs: Vec<(u64, u64, u64)>,
    next_seq: u64,
    capacity: usize,
}

impl Oracle {
    fn edf_order(&self) -> Vec<(u64, u64, u64)> {
        let mut jobs = self.jobs.clone();
        jobs.sort_by_key(|&(d, seq, _)| (d, seq));
        jobs
    }

    /// Laxity of every job, in EDF order: (deadline, seq, remaining, laxity).
    fn laxities(&self, now: u64) -> Vec<(u64, u64, u64, i128)> {
        let mut finish = i128::from(now);
        self.edf_order()
            .into_iter()
            .map(|(d, seq, c)| {
                finish += i128::from(c);
                (d, seq, c, i128::from(d) - finish)
            })
            .collect()
    }

    fn signed_idle(&self, deadline: u64, now: u64) -> i128 {
        let work: i128 = self.jobs.iter().filter(|j| j.0 <= deadline).map(|j| i128::from(j.2)).sum();
        let mut idle = i128::from(deadline) - i128::from(now) - work;
        for (d, _, _, lax) in self.laxities(now) {
            if d > deadline {
                idle = idle.min(lax);
            }
        }
        idle
    }

    fn idle_before(&self, deadline: u64, now: u64) -> u64 {
        u64::try_from(self.signed_idle(deadline, now).max(0)).unwrap()
    }

    /// `Ok(Some(seq))` accepted, `Ok(None)` rejected, `Err(())` full.
    fn admit(&mut self, c: u64, d: u64, now: u64) -> Result<Option<u64>, ()> {
        if self.jobs.len() >= self.capacity {
            return Err(());
        }
        if self.signed_idle(d, now) < i128::from(c) {
            return Ok(None);
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.jobs.push((d, seq, c));
        Ok(Some(seq))
    }

    fn find(&mut self, seq: u64) -> Option<&mut (u64, u64, u64)> {
        self.jobs.iter_mut().find(|j| j.1 == seq)
    }

    fn expire(&mut self, now: u64) -> usize {
        let before = self.jobs.len();
        self.jobs.retain(|j| j.0 >= now);
        before - self.jobs.len()
    }

    /// Whether EDF, run from `now` on the jobs' remaining times, meets every deadline of a job
    /// with work left.
    fn edf_feasible(&self, now: u64) -> bool {
        let mut clock = now;
        for (d, _, c) in self.edf_order() {
            if c == 0 {
                continue;
            }
            clock += c;
            if clock > d {
                return false;
            }
        }
        true
    }
}

#[derive(Clone, Debug)]
enum Op {
    Admit {
        wcet: u64,
        deadline_in: u64,
    },
    Query {
        deadline_in: u64,
    },
    /// Time passes with the CPU running the accepted jobs EDF (a work-conserving dispatcher).
    Dispatch {
        elapsed: u64,
    },
    /// Time passes with no job of this CPU charged (idle, or running other work).
    Stall {
        elapsed: u64,
    },
    Charge {
        pick: usize,
        ran: u64,
    },
    Finish {
        pick: usize,
    },
    /// The job is taken back as if never admitted (its thread never started).
    Withdraw {
        pick: usize,
    },
    Expire,
}

fn op(allow_stall: bool) -> impl Strategy<Value = Op> {
    let stall = if allow_stall { 1 } else { 0 };
    prop_oneof![
        6 => (0u64..12, 0u64..60).prop_map(|(wcet, deadline_in)| Op::Admit { wcet, deadline_in }),
        3 => (0u64..80).prop_map(|deadline_in| Op::Query { deadline_in }),
        3 => (0u64..15).prop_map(|elapsed| Op::Dispatch { elapsed }),
        stall => (0u64..5).prop_map(|elapsed| Op::Stall { elapsed }),
        2 => (any::<usize>(), 0u64..8).prop_map(|(pick, ran)| Op::Charge { pick, ran }),
        2 => any::<usize>().prop_map(|pick| Op::Finish { pick }),
        1 => any::<usize>().prop_map(|pick| Op::Withdraw { pick }),
        1 => Just(Op::Expire),
    ]
}

/// Apply `ops` to the oracle and to every engine, comparing every answer. With
/// `check_invariants`, also check after every step that no job with work left (or a
/// deadline still ahead) has negative laxity and that the accepted set is EDF-feasible.
fn run(ops: &[Op], capacity: usize, check_invariants: bool) -> Result<(), TestCaseError> {
    let mut oracle = Oracle { capacity, ..Oracle::default() };
    let mut engines = engines(capacity);
    // Every handle ever accepted, indexed by acceptance number (expired ones included, so
    // stale handles are exercised too).
    let mut handles: Vec<AdmitId> = Vec::new();
    let mut now = 0u64;
    for op in ops {
        match *op {
            Op::Admit { wcet, deadline_in } => {
                let deadline = now + deadline_in;
                let want = oracle.admit(wcet, deadline, now);
                let mut ids = Vec::new();
                for e in &mut engines {
                    let got = e.admit(ns(wcet), at(deadline), at(now));
                    match (want, got) {
                        (Err(()), Err(AdmitError::Full { capacity: c })) => prop_assert_eq!(c, capacity),
                        (Ok(None), Ok(Admission::Rejected { idle })) => {
                            let expected = oracle.idle_before(deadline, now);
                            prop_assert_eq!(idle, ns(expected), "{} rejection idle", e.name());
                            prop_assert!(expected < wcet || oracle.signed_idle(deadline, now) < 0);
                        }
                        (Ok(Some(seq)), Ok(Admission::Accepted(id))) => {
                            prop_assert_eq!(id.deadline(), at(deadline));
                            prop_assert_eq!(seq as usize, handles.len());
                            ids.push(id);
                        }
                        (want, got) => prop_assert!(false, "{}: oracle {:?}, engine {:?}", e.name(), want, got),
                    }
                }
                if let Some(&first) = ids.first() {
                    prop_assert!(ids.iter().all(|&id| id == first), "engines disagree on handles");
                    handles.push(first);
                }
            }
            Op::Query { deadline_in } => {
                let deadline = now + deadline_in;
                let want = ns(oracle.idle_before(deadline, now));
                for e in &engines {
                    prop_assert_eq!(e.idle_before(at(deadline), at(now)), want, "{} idle_before", e.name());
                }
                // Deadlines before now too: always zero idle, but exercises the descent.
                let past = now.saturating_sub(deadline_in);
                let want = ns(oracle.idle_before(past, now));
                for e in &engines {
                    prop_assert_eq!(e.idle_before(at(past), at(now)), want, "{} idle_before past", e.name());
                }
            }
            Op::Dispatch { elapsed } => {
                // Work-conserving EDF: charge the earliest-deadline jobs with work left.
                let mut budget = elapsed;
                for (_, seq, c) in oracle.edf_order() {
                    if budget == 0 {
                        break;
                    }
                    let ran = c.min(budget);
                    if ran == 0 {
                        continue;
                    }
                    budget -= ran;
                    oracle.find(seq).unwrap().2 -= ran;
                    for e in &mut engines {
                        prop_assert_eq!(e.charge(handles[seq as usize], ns(ran)), Ok(()));
                    }
                }
                now += elapsed;
            }
            Op::Stall { elapsed } => now += elapsed,
            Op::Charge { .. } | Op::Finish { .. } | Op::Withdraw { .. } if handles.is_empty() => {}
            Op::Charge { pick, ran } => {
                let id = handles[pick % handles.len()];
                let seq = (pick % handles.len()) as u64;
                let known = match oracle.find(seq) {
                    Some(job) => {
                        job.2 = job.2.saturating_sub(ran);
                        true
                    }
                    None => false,
                };
                for e in &mut engines {
                    let want = if known { Ok(()) } else { Err(AdmitError::UnknownJob(id)) };
                    prop_assert_eq!(e.charge(id, ns(ran)), want, "{} charge", e.name());
                }
            }
            Op::Finish { pick } => {
                let id = handles[pick % handles.len()];
                let seq = (pick % handles.len()) as u64;
                let known = match oracle.find(seq) {
                    Some(job) => {
                        job.2 = 0;
                        true
                    }
                    None => false,
                };
                for e in &mut engines {
                    let want = if known { Ok(()) } else { Err(AdmitError::UnknownJob(id)) };
                    prop_assert_eq!(e.finish(id), want, "{} finish", e.name());
                }
            }
            Op::Withdraw { pick } => {
                let id = handles[pick % handles.len()];
                let seq = (pick % handles.len()) as u64;
                let before = oracle.jobs.len();
                oracle.jobs.retain(|j| j.1 != seq);
                let want = if oracle.jobs.len() < before { Ok(()) } else { Err(AdmitError::UnknownJob(id)) };
                for e in &mut engines {
                    prop_assert_eq!(e.withdraw(id), want, "{} withdraw", e.name());
                }
            }
            Op::Expire => {
                let want = oracle.expire(now);
                for e in &mut engines {
                    prop_assert_eq!(e.expire(at(now)), want, "{} expire", e.name());
                }
            }
        }
        // After every step: same entries, same remaining times, same length.
        for e in &engines {
            prop_assert_eq!(e.len(), oracle.jobs.len(), "{} len", e.name());
            for (seq, &id) in handles.iter().enumerate() {
                let want = oracle.jobs.iter().find(|j| j.1 == seq as u64).map(|j| ns(j.2));
                prop_assert_eq!(e.remaining(id), want, "{} remaining", e.name());
            }
        }
        if check_invariants {
            for (d, seq, c, lax) in oracle.laxities(now) {
                if c > 0 || d >= now {
                    prop_assert!(
                        lax >= 0,
                        "job {} (deadline {}, remaining {}) has laxity {} at {}",
                        seq,
                        d,
                        c,
                        lax,
                        now
                    );
                }
            }
            prop_assert!(oracle.edf_feasible(now), "accepted set not EDF-feasible at {}", now);
        }
    }
    Ok(())
}

/// Operations over a wide, lumpy range of deadlines (clusters, ties and far-off ones) with
/// longer lists: hash buckets wider than a nanosecond, deadlines past the hash table's range,
/// and long runs of shared minimum-laxity pointers that split and merge.
fn wide_op() -> impl Strategy<Value = Op> {
    let deadline_in = prop_oneof![0u64..40, 5_000u64..5_040, 0u64..1_000_000, Just(250_000u64)];
    prop_oneof![
        8 => (0u64..2_000, deadline_in).prop_map(|(wcet, deadline_in)| Op::Admit { wcet, deadline_in }),
        2 => (0u64..1_200_000).prop_map(|deadline_in| Op::Query { deadline_in }),
        3 => (0u64..20_000).prop_map(|elapsed| Op::Dispatch { elapsed }),
        2 => (any::<usize>(), 0u64..3_000).prop_map(|(pick, ran)| Op::Charge { pick, ran }),
        2 => any::<usize>().prop_map(|pick| Op::Finish { pick }),
        1 => any::<usize>().prop_map(|pick| Op::Withdraw { pick }),
        1 => Just(Op::Expire),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// Every engine gives the oracle's answer to every call, including when time passes
    /// uncharged and laxities go negative.
    #[test]
    fn engines_agree_with_the_oracle(ops in prop::collection::vec(op(true), 1..120), capacity in 1usize..24) {
        run(&ops, capacity, false)?;
    }

    /// Under a work-conserving EDF dispatcher, admission keeps every laxity at zero or more
    /// and the accepted set EDF-feasible, and the engines still agree with the oracle.
    #[test]
    fn admission_keeps_the_accepted_set_feasible(ops in prop::collection::vec(op(false), 1..120), capacity in 1usize..24) {
        run(&ops, capacity, true)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// The same checks on longer streams over wide, clustered deadlines.
    #[test]
    fn engines_agree_on_wide_clustered_deadlines(ops in prop::collection::vec(wide_op(), 1..400), capacity in 1usize..160) {
        run(&ops, capacity, true)?;
    }
}

/// A long stream with many entries, to exercise deep trees and arena reuse.
#[test]
fn long_stream_with_many_entries() {
    let mut ops = Vec::new();
    let mut x: u64 = 12345;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..4000 {
        let r = next();
        ops.push(match r % 10 {
            0..=5 => Op::Admit { wcet: next() % 4, deadline_in: next() % 2000 },
            6 => Op::Query { deadline_in: next() % 2500 },
            7 => Op::Dispatch { elapsed: next() % 20 },
            8 => match next() % 4 {
                0 => Op::Withdraw { pick: next() as usize },
                _ => Op::Finish { pick: next() as usize },
            },
            _ => Op::Expire,
        });
    }
    run(&ops, 600, true).unwrap();
}
