//! Waiting on condition variables and semaphores of another CPU: in real time the wait is a
//! request to the object's CPU, which queues a proxy of the waiter in the object's own ranked
//! queue; in virtual time one kernel holds every CPU and the waiter is queued directly.
//! Real-time tests check properties only (nothing lost, nothing duplicated, no unit leaked,
//! every proxy accounted for), never timing: a wait that must end by a grant has a timeout
//! long enough that reaching it is a failure. Virtual-time tests assert exact instants.

use crate::common;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use common::{ms, us};
use tempi::clock::{Clock, RealClock, VirtualClock};
use tempi::sync::{LockError, LockSpec, SemSpec};
use tempi::trace::TraceKind;
use tempi::{Config, CrossCpuStats, Runtime, ThreadOutcome, ThreadSpec, Time};

fn real(cpus: usize) -> Runtime<RealClock> {
    Runtime::new(Config::new(cpus).pin(false)).unwrap()
}

const LONG: Duration = Duration::from_secs(20);

fn all_completed(out: &tempi::RunOutcome) {
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)), "{:?}", out.threads);
}

/// 10,000 items from CPU 0 to CPU 1 through a bounded buffer guarded by two semaphores, each
/// waited on from the other CPU: `items` (CPU 0) is taken by the consumer on CPU 1, `space`
/// (CPU 1) by the producer on CPU 0. Every item arrives once, in order.
#[test]
fn xcpu_remote_wait_semaphore_producer_consumer() {
    const N: u64 = 10_000;
    let mut rt = real(2);
    let items = Arc::new(rt.create_semaphore(SemSpec::new("items", 0).cpu(0)).unwrap());
    let space = Arc::new(rt.create_semaphore(SemSpec::new("space", 16).cpu(1)).unwrap());
    let buf = Arc::new(StdMutex::new(VecDeque::new()));
    let (i0, s0, b0) = (items.clone(), space.clone(), buf.clone());
    rt.spawn(ThreadSpec::new("producer").cpu(0), move |cx| {
        for k in 0..N {
            s0.procure_timeout(cx, LONG).unwrap();
            b0.lock().unwrap().push_back(k);
            i0.vacate(cx).unwrap();
        }
    })
    .unwrap();
    let got = Arc::new(AtomicU64::new(0));
    let g = got.clone();
    rt.spawn(ThreadSpec::new("consumer").cpu(1), move |cx| {
        for k in 0..N {
            items.procure_timeout(cx, LONG).unwrap();
            assert_eq!(buf.lock().unwrap().pop_front(), Some(k), "item {k} lost, duplicated or out of order");
            g.fetch_add(1, Ordering::Relaxed);
            space.vacate(cx).unwrap();
        }
        // Every unit of `items` was taken, and the buffer is empty.
        assert_eq!(items.try_procure(cx), Err(LockError::WouldBlock));
        assert!(buf.lock().unwrap().is_empty());
    })
    .unwrap();
    let out = rt.run().unwrap();
    all_completed(&out);
    assert_eq!(got.load(Ordering::Relaxed), N);
    assert_eq!(out.cross_cpu, CrossCpuStats::default());
}

/// 10,000 items from CPU 0 to CPU 1 through condition variables of the other CPU: the
/// consumer (CPU 1) waits on `ready` (CPU 0) under a mutex of its own CPU, the producer
/// (CPU 0) waits for room on `room` (CPU 1) under a mutex of its CPU. The buffer itself is
/// shared memory, so a notification may pass a waiter about to wait: the waits are bounded
/// and the waiters look again, as with any condition variable. Nothing is lost or
/// duplicated; the notifications do wake waiters across the CPUs.
#[test]
fn xcpu_remote_wait_condvar_producer_consumer() {
    const N: u64 = 10_000;
    const ROOM: usize = 16;
    let mut rt = real(2);
    let ready = Arc::new(rt.create_condvar(0).unwrap());
    let room = Arc::new(rt.create_condvar(1).unwrap());
    let m0 = Arc::new(rt.create_mutex((), LockSpec::new("m0").cpu(0)).unwrap());
    let m1 = Arc::new(rt.create_mutex((), LockSpec::new("m1").cpu(1)).unwrap());
    let buf = Arc::new(StdMutex::new(VecDeque::new()));
    let notified = Arc::new(AtomicU64::new(0));
    let (r0, room0, b0, n0) = (ready.clone(), room.clone(), buf.clone(), notified.clone());
    rt.spawn(ThreadSpec::new("producer").cpu(0), move |cx| {
        let mut g = m0.lock(cx).unwrap();
        for k in 0..N {
            while b0.lock().unwrap().len() >= ROOM {
                let (next, timed_out) = room0.wait_timeout(cx, g, Some(ms(2))).unwrap();
                g = next;
                if !timed_out {
                    n0.fetch_add(1, Ordering::Relaxed);
                }
            }
            b0.lock().unwrap().push_back(k);
            r0.notify_one(cx).unwrap();
        }
    })
    .unwrap();
    let n1 = notified.clone();
    rt.spawn(ThreadSpec::new("consumer").cpu(1), move |cx| {
        let mut g = m1.lock(cx).unwrap();
        for k in 0..N {
            loop {
                if let Some(item) = buf.lock().unwrap().pop_front() {
                    assert_eq!(item, k, "item {k} lost, duplicated or out of order");
                    break;
                }
                let (next, timed_out) = ready.wait_timeout(cx, g, Some(ms(2))).unwrap();
                g = next;
                if !timed_out {
                    n1.fetch_add(1, Ordering::Relaxed);
                }
            }
            room.notify_all(cx).unwrap();
        }
    })
    .unwrap();
    let out = rt.run().unwrap();
    all_completed(&out);
    assert!(notified.load(Ordering::Relaxed) > 0, "no wait was ended by a notification");
    assert_eq!(out.cross_cpu.refused + out.cross_cpu.proxies_full + out.cross_cpu.proxies_at_end, 0);
}

/// A storm of short remote waits that mostly time out, while units trickle in: a unit
/// granted to a waiter that had just given up comes back to the semaphore, so at the end
/// the units taken plus those left are exactly the units given.
#[test]
fn xcpu_remote_wait_timeouts_leak_no_unit() {
    const GIVEN: u64 = 400;
    const WAITERS: usize = 3;
    let mut rt = real(2);
    let sem = Arc::new(rt.create_semaphore(SemSpec::new("s", 0).cpu(0)).unwrap());
    let taken = Arc::new(AtomicU64::new(0));
    let timeouts = Arc::new(AtomicU64::new(0));
    let mut waiters = Vec::new();
    for w in 0..WAITERS {
        let (s, t, o) = (sem.clone(), taken.clone(), timeouts.clone());
        let id = rt
            .spawn(ThreadSpec::new(format!("waiter{w}")).cpu(1), move |cx| {
                for i in 0..400u64 {
                    match s.procure_timeout(cx, us(20 + 15 * ((i + w as u64) % 7))) {
                        Ok(()) => {
                            t.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(LockError::Timeout) => {
                            o.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
            })
            .unwrap();
        waiters.push(id);
    }
    let s = sem.clone();
    let giver = rt
        .spawn(ThreadSpec::new("giver").cpu(0), move |cx| {
            for _ in 0..GIVEN {
                s.vacate(cx).unwrap();
                cx.sleep(us(25));
            }
        })
        .unwrap();
    let t = taken.clone();
    rt.spawn(ThreadSpec::new("counter").cpu(0), move |cx| {
        for w in &waiters {
            assert_eq!(cx.join(*w).unwrap(), ThreadOutcome::Completed);
        }
        assert_eq!(cx.join(giver).unwrap(), ThreadOutcome::Completed);
        // Units granted to waiters that had given up may still be on their way back.
        let left = GIVEN - t.load(Ordering::Relaxed);
        for _ in 0..left {
            sem.procure_timeout(cx, LONG).expect("a unit was lost");
        }
        cx.sleep(ms(20));
        assert_eq!(sem.try_procure(cx), Err(LockError::WouldBlock), "a unit was made up");
    })
    .unwrap();
    let out = rt.run().unwrap();
    all_completed(&out);
    assert!(timeouts.load(Ordering::Relaxed) > 0);
    assert_eq!(out.cross_cpu, CrossCpuStats::default());
}

/// A remote waiter that is killed, and one whose job is aborted at its abort time, withdraw
/// their proxies: none is left when the run ends (nothing else would take them out), and the
/// semaphore still serves a later remote waiter. A waiter still waiting when the run ends is
/// counted.
#[test]
fn xcpu_remote_wait_kill_and_abort_withdraw_the_proxy() {
    let mut rt = real(2);
    let sem = Arc::new(rt.create_semaphore(SemSpec::new("s", 0).cpu(0)).unwrap());
    // Never given nor notified: a proxy not withdrawn would stay queued to the end.
    let never = Arc::new(rt.create_semaphore(SemSpec::new("never", 0).cpu(0)).unwrap());
    let cv = Arc::new(rt.create_condvar(0).unwrap());
    let m = Arc::new(rt.create_mutex((), LockSpec::new("m").cpu(1)).unwrap());
    let s = never.clone();
    let victim = rt
        .spawn(ThreadSpec::new("killed").cpu(1).priority(2), move |cx| {
            let _ = s.procure(cx);
            panic!("the killed waiter got past its wait");
        })
        .unwrap();
    let (cv1, m1) = (cv.clone(), m.clone());
    rt.spawn(ThreadSpec::new("aborted").cpu(1).priority(2).abort_after(ms(5)), move |cx| {
        let g = m1.lock(cx).unwrap();
        let _ = cv1.wait(cx, g);
        panic!("the aborted waiter got past its wait");
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("killer").cpu(1).priority(1), move |cx| {
        cx.sleep(ms(2));
        cx.kill(victim).unwrap();
    })
    .unwrap();
    let s = sem.clone();
    rt.spawn(ThreadSpec::new("late").cpu(1).priority(1), move |cx| {
        cx.sleep(ms(10));
        s.procure_timeout(cx, LONG).unwrap();
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("giver").cpu(0), move |cx| {
        cx.sleep(ms(30));
        sem.vacate(cx).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("killed").unwrap().outcome, Some(ThreadOutcome::Killed));
    assert_eq!(out.thread_named("aborted").unwrap().stats.aborted, 1);
    for name in ["killer", "late", "giver"] {
        assert_eq!(out.thread_named(name).unwrap().outcome, Some(ThreadOutcome::Completed), "{name}");
    }
    assert_eq!(out.cross_cpu, CrossCpuStats::default());

    // Nobody gives up, nobody gives: the proxy is still queued when the run ends.
    let mut rt = real(2);
    let sem = Arc::new(rt.create_semaphore(SemSpec::new("s", 0).cpu(0)).unwrap());
    rt.spawn(ThreadSpec::new("stuck").cpu(1), move |cx| {
        let _ = sem.procure(cx);
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.cross_cpu, CrossCpuStats { proxies_at_end: 1, ..Default::default() });
}

/// A CPU holds at most `max_threads` waiters of other CPUs: with two thread slots on CPU 0,
/// two of four waiters from CPUs 1 and 2 are refused with `ProxiesFull`, counted and traced;
/// the two queued get the units given afterwards.
#[test]
fn xcpu_remote_wait_full_proxy_storage_is_an_error() {
    let mut rt: Runtime<RealClock> = Runtime::new(Config::new(3).pin(false).max_threads(2)).unwrap();
    let sem = Arc::new(rt.create_semaphore(SemSpec::new("s", 0).cpu(0)).unwrap());
    let answered = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    for cpu in 1..3 {
        for k in 0..2 {
            let (s, a, r) = (sem.clone(), answered.clone(), refused.clone());
            rt.spawn(ThreadSpec::new(format!("w{cpu}.{k}")).cpu(cpu), move |cx| match s.procure_timeout(cx, LONG) {
                Ok(()) => {
                    a.fetch_add(1, Ordering::Relaxed);
                }
                Err(LockError::ProxiesFull { cpu: 0, capacity: 2 }) => {
                    r.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => panic!("{e}"),
            })
            .unwrap();
        }
    }
    let r = refused.clone();
    rt.spawn(ThreadSpec::new("giver").cpu(0), move |cx| {
        // Once two waits were refused, the other two are queued here.
        while r.load(Ordering::Relaxed) < 2 {
            cx.sleep(us(200));
        }
        sem.vacate(cx).unwrap();
        sem.vacate(cx).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    all_completed(&out);
    assert_eq!((answered.load(Ordering::Relaxed), refused.load(Ordering::Relaxed)), (2, 2));
    assert_eq!(out.cross_cpu, CrossCpuStats { proxies_full: 2, ..Default::default() });
    if out.trace_dropped == 0 {
        let traced: Vec<_> = out.trace.iter().filter(|r| r.kind == TraceKind::CrossCpuRefused).collect();
        assert_eq!(traced.len(), 2);
        assert!(traced.iter().all(|r| r.job == 4 && r.arg == 0), "{traced:?}");
    }
    let json = tempi::trace::report::to_json(&out);
    assert!(json.contains("\"cross_cpu_proxies_full\": 2,"), "{json}");
}

/// Ping-pong across two CPUs through two semaphores, each taken from the other CPU, and a
/// condition variable of CPU 0 waited on from CPU 1: the order of the steps is determined by
/// the hand-offs, and is the same in real and in virtual time.
fn ping_pong<C: Clock>(rt: &mut Runtime<C>, rounds: u32) -> Arc<StdMutex<Vec<String>>> {
    let ping = Arc::new(rt.create_semaphore(SemSpec::new("ping", 0).cpu(0)).unwrap());
    let pong = Arc::new(rt.create_semaphore(SemSpec::new("pong", 0).cpu(1)).unwrap());
    let turn_cv = Arc::new(rt.create_condvar(0).unwrap());
    let m1 = Arc::new(rt.create_mutex((), LockSpec::new("m1").cpu(1)).unwrap());
    let turn = Arc::new(AtomicU64::new(0));
    let log = Arc::new(StdMutex::new(Vec::new()));
    let (pi, po, cv, t, l) = (ping.clone(), pong.clone(), turn_cv.clone(), turn.clone(), log.clone());
    rt.spawn(ThreadSpec::new("a").cpu(0), move |cx| {
        for i in 0..rounds {
            l.lock().unwrap().push(format!("a{i}"));
            cx.work(ms(1));
            pi.vacate(cx).unwrap();
            // Takes a unit of CPU 1's semaphore.
            po.procure_timeout(cx, LONG).unwrap();
            l.lock().unwrap().push(format!("a{i}'"));
            t.store(u64::from(i) + 1, Ordering::Release);
            cv.notify_all(cx).unwrap();
        }
    })
    .unwrap();
    let l = log.clone();
    rt.spawn(ThreadSpec::new("b").cpu(1), move |cx| {
        for i in 0..rounds {
            // Takes a unit of CPU 0's semaphore.
            ping.procure_timeout(cx, LONG).unwrap();
            l.lock().unwrap().push(format!("b{i}"));
            cx.work(ms(1));
            pong.vacate(cx).unwrap();
            // Waits on CPU 0's condition variable for `a` to have seen the round.
            let mut g = m1.lock(cx).unwrap();
            while turn.load(Ordering::Acquire) <= u64::from(i) {
                g = turn_cv.wait_timeout(cx, g, Some(ms(1))).unwrap().0;
            }
            drop(g);
            l.lock().unwrap().push(format!("b{i}'"));
        }
    })
    .unwrap();
    log
}

#[test]
fn xcpu_remote_wait_same_order_in_real_and_virtual_time() {
    const ROUNDS: u32 = 50;
    let mut v = Runtime::<VirtualClock>::new(Config::new(2)).unwrap();
    let vlog = ping_pong(&mut v, ROUNDS);
    let vout = v.run().unwrap();
    all_completed(&vout);
    // Virtual time: each round is a's 1 ms, then b's 1 ms; the hand-offs take no time.
    assert_eq!(vout.end, Time::from_millis(2 * u64::from(ROUNDS)));
    let mut r = real(2);
    let rlog = ping_pong(&mut r, ROUNDS);
    let rout = r.run().unwrap();
    all_completed(&rout);
    assert_eq!(rout.cross_cpu, CrossCpuStats::default());
    let (vlog, rlog) = (vlog.lock().unwrap().clone(), rlog.lock().unwrap().clone());
    // a{i}, b{i}, then a{i}' and b{i}' — a{i}' before b{i}' by the condition variable.
    for (name, log) in [("virtual", &vlog), ("real", &rlog)] {
        let order = |s: &str| log.iter().position(|x| x == s).unwrap_or_else(|| panic!("{name}: no {s}"));
        for i in 0..ROUNDS {
            assert!(order(&format!("a{i}")) < order(&format!("b{i}")), "{name} {log:?}");
            assert!(order(&format!("b{i}")) < order(&format!("a{i}'")), "{name} {log:?}");
            assert!(order(&format!("a{i}'")) < order(&format!("b{i}'")), "{name} {log:?}");
        }
    }
    // The steps of each thread, and the hand-offs between them, come in one order only.
    let only = |log: &[String], p: char| log.iter().filter(|x| x.starts_with(p)).cloned().collect::<Vec<_>>();
    assert_eq!(only(&vlog, 'a'), only(&rlog, 'a'));
    assert_eq!(only(&vlog, 'b'), only(&rlog, 'b'));
}

/// Virtual time, exact instants: a thread of CPU 1 waits on a semaphore and a condition
/// variable of CPU 0 and is woken at the instant of the grant; a bounded wait on CPU 0's
/// condition variable from CPU 1 times out at its instant, holding its lock again.
#[test]
fn xcpu_remote_wait_virtual_time_instants() {
    let mut rt = Runtime::simulated(2);
    let sem = Arc::new(rt.create_semaphore(SemSpec::new("s", 0).cpu(0)).unwrap());
    let cv = Arc::new(rt.create_condvar(0).unwrap());
    let m = Arc::new(rt.create_mutex((), LockSpec::new("m").cpu(1)).unwrap());
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let (s1, cv1, v) = (sem.clone(), cv.clone(), seen.clone());
    rt.spawn(ThreadSpec::new("waiter").cpu(1), move |cx| {
        s1.procure(cx).unwrap();
        v.lock().unwrap().push(("unit", cx.now()));
        let g = m.lock(cx).unwrap();
        let (g, timed_out) = cv1.wait_timeout(cx, g, Some(ms(2))).unwrap();
        v.lock().unwrap().push((if timed_out { "timeout" } else { "notified" }, cx.now()));
        assert_eq!(m.try_lock(cx).err(), Some(LockError::AlreadyHeld));
        let (_g, timed_out) = cv1.wait_timeout(cx, g, Some(ms(10))).unwrap();
        v.lock().unwrap().push((if timed_out { "timeout" } else { "notified" }, cx.now()));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("giver").cpu(0), move |cx| {
        cx.work(ms(3));
        sem.vacate(cx).unwrap();
        cx.work(ms(4));
        // The waiter timed out at 5 ms and waits again since then.
        cx.work(ms(1));
        cv.notify_one(cx).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    all_completed(&out);
    let ms_at = |n| Time::from_millis(n);
    assert_eq!(*seen.lock().unwrap(), [("unit", ms_at(3)), ("timeout", ms_at(5)), ("notified", ms_at(8))]);
}
