//! Locking protocols in virtual time, exact timelines. Protocols: km, bp, bpi, pcp, srp.
//! Scheduler: fixed priority.

use crate::common;

use std::sync::{Arc, Mutex as StdMutex};

use common::{ms, segments, us};
use tempi::policy::sched::Urgency;
use tempi::sync::{LockError, LockSpec};
use tempi::trace::{StopReason, TraceKind};
use tempi::{RunOutcome, Runtime, ThreadSpec, Time};

fn at(t: u64) -> ThreadSpec {
    at_us(t * 1000)
}

/// A one-job thread released at `t` µs.
fn at_us(t: u64) -> ThreadSpec {
    ThreadSpec::new("x").periodic(ms(1000)).phase(us(t)).max_jobs(1)
}

/// The classic inversion: `low` holds the lock for 4 ms from 0, `high` wants it at 1,
/// `medium` (no lock) computes `m` ms from 2.
fn inversion(protocol: &str, m: u64) -> RunOutcome {
    let mut rt = Runtime::simulated(1);
    let mut spec = LockSpec::new("L").protocol(protocol);
    if matches!(protocol, "pcp" | "srp") {
        spec = spec.ceiling(3);
    }
    let lock = Arc::new(rt.create_mutex((), spec).unwrap());
    let l = lock.clone();
    rt.spawn(at(0).priority(1), move |cx| {
        let _g = l.lock(cx).unwrap();
        cx.work(ms(4));
    })
    .unwrap();
    let l = lock.clone();
    rt.spawn(at(1).priority(3), move |cx| {
        let _g = l.lock(cx).unwrap();
        cx.work(ms(1));
    })
    .unwrap();
    rt.spawn(at(2).priority(2), move |cx| cx.work(ms(m))).unwrap();
    let mut out = rt.run().unwrap();
    for (t, n) in out.threads.iter_mut().zip(["low", "high", "medium"]) {
        t.name = n.into();
    }
    out
}

fn high_response(out: &RunOutcome) -> u64 {
    out.thread_named("high").unwrap().stats.response_max.unwrap().as_nanos() as u64 / 1_000_000
}

#[test]
fn lock_bp_inversion_grows_with_medium_work() {
    let out = inversion("bp", 3);
    assert_eq!(
        segments(&out),
        [
            "low:0-1:preempt",
            "high:1-1:block",
            "low:1-2:preempt",
            "medium:2-5:exit",
            "low:5-7:preempt", // the unlock is a preemption point: `high` takes over at once
            "high:7-8:exit",
            "low:8-8:exit"
        ]
    );
    assert_eq!(high_response(&out), 7);
    assert_eq!(high_response(&inversion("bp", 6)), 10);
}

#[test]
fn lock_bpi_pcp_srp_km_bound_inversion_by_one_critical_section() {
    for protocol in ["bpi", "pcp"] {
        let out = inversion(protocol, 3);
        assert_eq!(
            segments(&out),
            [
                "low:0-1:preempt",
                "high:1-1:block",
                "low:1-4:preempt",
                "high:4-5:exit",
                "medium:5-8:exit",
                "low:8-8:exit"
            ],
            "{protocol}"
        );
        assert_eq!(high_response(&out), 4, "{protocol}");
        assert_eq!(high_response(&inversion(protocol, 6)), 4, "{protocol}");
    }
    for protocol in ["srp", "km"] {
        // The owner runs at the ceiling (or above everything): `high` is not even dispatched
        // before the lock is free, and then never blocks.
        let out = inversion(protocol, 3);
        assert_eq!(
            segments(&out),
            ["low:0-4:preempt", "high:4-5:exit", "medium:5-8:exit", "low:8-8:exit"],
            "{protocol}"
        );
        assert_eq!(high_response(&out), 4, "{protocol}");
        assert_eq!(high_response(&inversion(protocol, 6)), 4, "{protocol}");
    }
}

#[test]
fn lock_bpi_chain_of_three_inheritances() {
    // t1 holds A; t2 holds B and waits for A; t3 holds C and waits for B; t4 waits for C.
    let log = Arc::new(StdMutex::new(Vec::new()));
    let mut rt = Runtime::simulated(1);
    let a = Arc::new(rt.create_mutex((), LockSpec::new("A")).unwrap());
    let b = Arc::new(rt.create_mutex((), LockSpec::new("B")).unwrap());
    let c = Arc::new(rt.create_mutex((), LockSpec::new("C")).unwrap());
    let (a1, lg) = (a.clone(), log.clone());
    rt.spawn(at(0).priority(1), move |cx| {
        let _ga = a1.lock(cx).unwrap();
        for _ in 0..6 {
            cx.work(ms(1));
            lg.lock().unwrap().push((cx.now(), cx.urgency()));
        }
    })
    .unwrap();
    let (a2, b2) = (a.clone(), b.clone());
    rt.spawn(at(1).priority(2), move |cx| {
        let _gb = b2.lock(cx).unwrap();
        let _ga = a2.lock(cx).unwrap();
    })
    .unwrap();
    let (b3, c3) = (b.clone(), c.clone());
    rt.spawn(at(2).priority(3), move |cx| {
        let _gc = c3.lock(cx).unwrap();
        let _gb = b3.lock(cx).unwrap();
    })
    .unwrap();
    let c4 = c.clone();
    rt.spawn(at(3).priority(4), move |cx| {
        let _gc = c4.lock(cx).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    let urgencies: Vec<(u64, i64)> = log.lock().unwrap().iter().map(|(t, u)| (t.as_nanos() / 1_000_000, u.0)).collect();
    assert_eq!(urgencies, [(1, 1), (2, 2), (3, 3), (4, 4), (5, 4), (6, 4)]);
    // Once t1 lets go of A at 6, each unlock hands the next lock to a more urgent thread,
    // which preempts at once: they end in urgency order.
    let order: Vec<u32> =
        out.trace.iter().filter(|r| r.kind == TraceKind::Exit).map(|r| r.thread.index() as u32).collect();
    assert_eq!(order, [3, 2, 1, 0]);
    assert_eq!(out.end, Time::from_millis(6));
}

#[test]
fn lock_bpi_releasing_one_of_several_locks_restores_the_right_urgency() {
    let log = Arc::new(StdMutex::new(Vec::new()));
    let mut rt = Runtime::simulated(1);
    let a = Arc::new(rt.create_mutex((), LockSpec::new("A")).unwrap());
    let b = Arc::new(rt.create_mutex((), LockSpec::new("B")).unwrap());
    let (a1, b1, lg) = (a.clone(), b.clone(), log.clone());
    rt.spawn(at(0).priority(1), move |cx| {
        let ga = a1.lock(cx).unwrap();
        let gb = b1.lock(cx).unwrap();
        cx.work(ms(3));
        lg.lock().unwrap().push(("both held", cx.urgency()));
        drop(ga); // the thread waiting for A (priority 9) leaves; B's waiter (5) stays
        lg.lock().unwrap().push(("B held", cx.urgency()));
        drop(gb);
        lg.lock().unwrap().push(("none held", cx.urgency()));
    })
    .unwrap();
    let b2 = b.clone();
    rt.spawn(at(1).priority(5), move |cx| drop(b2.lock(cx).unwrap())).unwrap();
    let a3 = a.clone();
    rt.spawn(at(2).priority(9), move |cx| drop(a3.lock(cx).unwrap())).unwrap();
    rt.run().unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(log, [("both held", Urgency(9)), ("B held", Urgency(5)), ("none held", Urgency(1))]);
}

/// `low` takes A then B; `high` (arriving while `low` holds A) takes B then A.
fn crossing(protocol: &str) -> (RunOutcome, Vec<Result<(), LockError>>) {
    let results = Arc::new(StdMutex::new(Vec::new()));
    let mut rt = Runtime::simulated(1);
    let spec = |n: &str| LockSpec::new(n).protocol(protocol).ceiling(2);
    let a = Arc::new(rt.create_mutex((), spec("A")).unwrap());
    let b = Arc::new(rt.create_mutex((), spec("B")).unwrap());
    let (a1, b1, r) = (a.clone(), b.clone(), results.clone());
    rt.spawn(at(0).priority(1), move |cx| {
        let _ga = a1.lock(cx).unwrap();
        cx.work(ms(1));
        let gb = b1.lock(cx);
        r.lock().unwrap().push(gb.as_ref().map(|_| ()).map_err(|e| *e));
        cx.work(ms(1));
    })
    .unwrap();
    let (a2, b2, r) = (a.clone(), b.clone(), results.clone());
    rt.spawn(at_us(500).priority(2), move |cx| {
        let _gb = b2.lock(cx).unwrap();
        cx.work(ms(1));
        let ga = a2.lock(cx);
        r.lock().unwrap().push(ga.as_ref().map(|_| ()).map_err(|e| *e));
    })
    .unwrap();
    let out = rt.run().unwrap();
    let results = results.lock().unwrap().clone();
    (out, results)
}

#[test]
fn lock_bpi_detects_the_deadlock_pcp_prevents() {
    let (_, results) = crossing("bpi");
    // `high` waits for A (held by `low`); `low` asking for B would close the cycle.
    assert_eq!(results[0], Err(LockError::Deadlock));
    let (out, results) = crossing("pcp");
    assert_eq!(results, [Ok(()), Ok(())]);
    // `high` is held off by the ceiling at 0.5 and runs once `low` is done with both locks.
    let high_blocks = out
        .trace
        .iter()
        .filter(|r| r.kind == TraceKind::Stop && r.arg == StopReason::Blocked as u64 && r.thread.index() == 1)
        .count();
    assert_eq!(high_blocks, 1);
    assert_eq!(out.total_misses(), 0);
}

/// `t1` holds A (2 ms), `t2` takes B at 0.5 (2 ms), `t3` needs A then B at 1.
fn chained(protocol: &str) -> usize {
    let mut rt = Runtime::simulated(1);
    let spec = |n: &str| LockSpec::new(n).protocol(protocol).ceiling(3);
    let a = Arc::new(rt.create_mutex((), spec("A")).unwrap());
    let b = Arc::new(rt.create_mutex((), spec("B")).unwrap());
    let a1 = a.clone();
    rt.spawn(at(0).priority(1), move |cx| {
        let _g = a1.lock(cx).unwrap();
        cx.work(ms(2));
    })
    .unwrap();
    let b2 = b.clone();
    rt.spawn(at_us(500).priority(2), move |cx| {
        let _g = b2.lock(cx).unwrap();
        cx.work(ms(2));
    })
    .unwrap();
    let (a3, b3) = (a.clone(), b.clone());
    rt.spawn(at(1).priority(3), move |cx| {
        let _ga = a3.lock(cx).unwrap();
        let _gb = b3.lock(cx).unwrap();
        cx.work(ms(1));
    })
    .unwrap();
    let out = rt.run().unwrap();
    out.trace
        .iter()
        .filter(|r| r.kind == TraceKind::Stop && r.arg == StopReason::Blocked as u64 && r.thread.index() == 2)
        .count()
}

#[test]
fn lock_pcp_prevents_chained_blocking() {
    assert_eq!(chained("bpi"), 2, "under BPI t3 blocks on A, then again on B");
    assert_eq!(chained("pcp"), 1, "under PCP t3 blocks at most once");
}

/// `low` runs a 4 ms restartable section from 0 (adding 1), `high` wants the lock at 1
/// (adding 10).
fn restartable(protocol: &str, abort_cost: std::time::Duration) -> (RunOutcome, u32) {
    let costs = tempi::Costs { abort: abort_cost, ..Default::default() };
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(tempi::Config::new(1).costs(costs)).unwrap();
    let m = Arc::new(rt.create_mutex(0u32, LockSpec::new("shared").protocol(protocol)).unwrap());
    let m1 = m.clone();
    rt.spawn(at(0).priority(1), move |cx| {
        m1.critical(cx, |n| {
            *n += 1;
            cx.work(ms(4));
        })
        .unwrap();
    })
    .unwrap();
    let m2 = m.clone();
    rt.spawn(at(1).priority(3), move |cx| {
        m2.critical(cx, |n| {
            *n += 10;
            cx.work(ms(1));
        })
        .unwrap();
    })
    .unwrap();
    let m3 = m.clone();
    let total = Arc::new(StdMutex::new(0));
    let t = total.clone();
    rt.spawn(at(10).priority(2), move |cx| *t.lock().unwrap() = *m3.lock(cx).unwrap()).unwrap();
    let mut out = rt.run().unwrap();
    for (t, n) in out.threads.iter_mut().zip(["low", "high", "reader"]) {
        t.name = n.into();
    }
    let total = *total.lock().unwrap();
    (out, total)
}

#[test]
fn lock_rcs_restores_the_data_and_restarts_the_holder() {
    let (out, total) = restartable("rcs", std::time::Duration::ZERO);
    assert_eq!(
        segments(&out),
        [
            "low:0-1:preempt",
            "high:1-1:block",
            "low:1-1:preempt", // recovery: restore the data, release, at high's urgency
            "high:1-2:exit",
            "low:2-6:exit", // the section reruns from the start
            "reader:10-10:exit"
        ]
    );
    assert_eq!(total, 11, "low's first, abandoned increment was undone");
    // The aborter never waits for the whole section: 1 ms response instead of 4.
    assert_eq!(high_response(&out), 1);
    let (bpi, total) = restartable("bpi", std::time::Duration::ZERO);
    assert_eq!(high_response(&bpi), 4);
    assert_eq!(total, 11);
}

#[test]
fn lock_rcs_charges_the_abort_cost_to_the_recovery() {
    let (out, _) = restartable("rcs", us(300));
    assert_eq!(segments(&out)[2], "low:1-1.3:preempt");
    assert_eq!(out.threads[1].stats.response_max, Some(us(1_300)));
}

#[test]
fn lock_srp_under_edf_uses_preemption_levels_from_relative_deadlines() {
    // EDF. `low` (D = 20) locks L at 0 for 4 ms; `high` (D = 5, a user of L) arrives at 1 and
    // must not start before L is free; `other` (D = 2, no lock) arrives at 1 and may preempt.
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    let low_spec = at(0).deadline(ms(20));
    let high_spec = at(1).deadline(ms(5));
    let other_spec = at(1).deadline(ms(2));
    // Users must exist before the lock that names them.
    let holder = Arc::new(StdMutex::new(None::<Arc<tempi::sync::Mutex<()>>>));
    let h1 = holder.clone();
    let low = rt
        .spawn(low_spec, move |cx| {
            let m = h1.lock().unwrap().clone().unwrap();
            let _g = m.lock(cx).unwrap();
            cx.work(ms(4));
        })
        .unwrap();
    let h2 = holder.clone();
    let high = rt
        .spawn(high_spec, move |cx| {
            let m = h2.lock().unwrap().clone().unwrap();
            let _g = m.lock(cx).unwrap();
            cx.work(ms(1));
        })
        .unwrap();
    rt.spawn(other_spec, |cx| cx.work(ms(1))).unwrap();
    let m = rt.create_mutex((), LockSpec::new("L").protocol("srp").users(&[low, high])).unwrap();
    *holder.lock().unwrap() = Some(Arc::new(m));
    let mut out = rt.run().unwrap();
    for (t, n) in out.threads.iter_mut().zip(["low", "high", "other"]) {
        t.name = n.into();
    }
    assert_eq!(
        segments(&out),
        ["low:0-1:preempt", "other:1-2:exit", "low:2-5:preempt", "high:5-6:exit", "low:6-6:exit"]
    );
    assert_eq!(out.total_misses(), 0);
    // `high` never blocked on the lock: SRP blocks before a job starts, never after.
    assert!(!out.trace.iter().any(|r| r.kind == TraceKind::Stop && r.arg == StopReason::Blocked as u64));
}

#[test]
fn lock_rcs_abort_before_the_section_begins_gives_the_lock_back() {
    // `low` is granted the lock but preempted by `mid` while still paying the 1 ms acquisition
    // cost; `high` then asks: `low` has not entered its section, so it just gives the lock back
    // and asks again; nothing is aborted, nothing stays held.
    let costs = tempi::Costs { lock_acquired: ms(1), ..Default::default() };
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(tempi::Config::new(1).costs(costs)).unwrap();
    let m = Arc::new(rt.create_mutex(0u32, LockSpec::new("shared").protocol("rcs")).unwrap());
    let m1 = m.clone();
    rt.spawn(at(0).priority(1), move |cx| {
        m1.critical(cx, |n| {
            *n += 1;
            cx.work(ms(5));
        })
        .unwrap();
    })
    .unwrap();
    rt.spawn(at_us(500).priority(2), |cx| cx.work(ms(2))).unwrap();
    let m3 = m.clone();
    let got = Arc::new(StdMutex::new(None));
    let g = got.clone();
    rt.spawn(at(1).priority(3), move |cx| {
        *g.lock().unwrap() = Some(m3.critical(cx, |n| {
            *n += 10;
            *n
        }));
    })
    .unwrap();
    let (m4, total) = (m.clone(), Arc::new(StdMutex::new(0)));
    let t = total.clone();
    rt.spawn(at(20), move |cx| *t.lock().unwrap() = *m4.try_lock(cx).unwrap()).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(*got.lock().unwrap(), Some(Ok(10)));
    let low = &out.threads[0];
    assert_eq!((low.stats.completed, low.stats.aborted), (1, 0));
    assert_eq!(low.outcome, Some(tempi::ThreadOutcome::Completed));
    assert_eq!(*total.lock().unwrap(), 11, "the lock is free and both sections ran once");
}
