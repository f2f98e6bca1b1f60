//! Condition variables and semaphores shared across real-time CPUs: a notification or a unit
//! given back from another CPU is posted to the object's CPU, whose kernel carries it out
//! (waiting on another CPU's object: `xcpu_remote_wait.rs`). Properties only, no timing: every wait that
//! must end by a notification has a timeout long enough that reaching it is a failure.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tempi::clock::RealClock;
use tempi::sync::{LockError, LockSpec, SemSpec};
use tempi::trace::TraceKind;
use tempi::{Config, CrossCpuStats, Runtime, ThreadOutcome, ThreadSpec};

fn real(cpus: usize) -> Runtime<RealClock> {
    Runtime::new(Config::new(cpus).pin(false)).unwrap()
}

/// 200 rounds: a thread of CPU 1 advances a counter and notifies a condition variable of
/// CPU 0 until the waiter there has seen it; the waiter is woken by the notification every
/// time, never by its (long) timeout.
#[test]
fn xcpu_sync_condvar_notified_from_another_cpu_wakes_its_waiter() {
    const ROUNDS: u64 = 200;
    let mut rt = real(2);
    let m = Arc::new(rt.create_mutex((), LockSpec::new("m").cpu(0)).unwrap());
    let cv = Arc::new(rt.create_condvar(0).unwrap());
    let (counter, seen) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (c, s, cv0) = (counter.clone(), seen.clone(), cv.clone());
    rt.spawn(ThreadSpec::new("waiter").cpu(0), move |cx| {
        let mut g = m.lock(cx).unwrap();
        for round in 1..=ROUNDS {
            while c.load(Ordering::Acquire) < round {
                let (next, timed_out) = cv0.wait_timeout(cx, g, Some(Duration::from_secs(10))).unwrap();
                assert!(!timed_out, "round {round}: the notification from CPU 1 never came");
                g = next;
            }
            s.store(round, Ordering::Release);
        }
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("notifier").cpu(1), move |cx| {
        for round in 1..=ROUNDS {
            counter.store(round, Ordering::Release);
            // The waiter may not be waiting yet: notify until it has seen the round.
            while seen.load(Ordering::Acquire) < round {
                if round % 2 == 0 { cv.notify_all(cx) } else { cv.notify_one(cx) }.unwrap();
                cx.sleep(Duration::from_micros(200));
            }
        }
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)));
    assert_eq!(out.cross_cpu, CrossCpuStats::default());
}

/// 2,000 units given back from CPUs 1 and 2 to a semaphore of CPU 0 reach the thread taking
/// them there, none lost and none made up; a full request queue is an error the giver retries.
#[test]
fn xcpu_sync_semaphore_units_given_from_other_cpus() {
    const EACH: u64 = 1000;
    let mut rt: Runtime<RealClock> = Runtime::new(Config::new(3).pin(false).cross_cpu_queue(8)).unwrap();
    let sem = Arc::new(rt.create_semaphore(SemSpec::new("s", 0).cpu(0)).unwrap());
    let full = Arc::new(AtomicU64::new(0));
    let s0 = sem.clone();
    rt.spawn(ThreadSpec::new("taker").cpu(0), move |cx| {
        for _ in 0..2 * EACH {
            s0.procure_timeout(cx, Duration::from_secs(10)).unwrap();
        }
        // Every unit given was taken: no more.
        assert_eq!(s0.try_procure(cx), Err(LockError::WouldBlock));
    })
    .unwrap();
    for cpu in 1..3 {
        let (s, f) = (sem.clone(), full.clone());
        rt.spawn(ThreadSpec::new(format!("giver{cpu}")).cpu(cpu), move |cx| {
            let mut given = 0;
            while given < EACH {
                match s.vacate(cx) {
                    Ok(()) => given += 1,
                    Err(LockError::QueueFull { cpu: 0, capacity: 8 }) => {
                        f.fetch_add(1, Ordering::Relaxed);
                        cx.sleep(Duration::from_micros(20));
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        })
        .unwrap();
    }
    let out = rt.run().unwrap();
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)), "{:?}", out.threads);
    assert_eq!(out.cross_cpu.refused, 0);
    // Each refusal for a full queue is counted and traced where it happened (no answer is
    // owed here, so nothing else finds a queue full); a record counts the refusals of the
    // same request that follow it until a post to that CPU fits again in its `job`.
    let traced: u64 = out.trace.iter().filter(|r| r.kind == TraceKind::QueueFull).map(|r| u64::from(r.job) + 1).sum();
    let full = full.load(Ordering::Relaxed);
    assert_eq!(out.cross_cpu.queue_full, full);
    if out.trace_dropped == 0 {
        assert_eq!(traced, full);
    } else {
        assert!(traced <= full);
    }
}

/// A unit given from another CPU to a semaphore whose count is at `u64::MAX` cannot be added:
/// the giver has gone on, and its kernel counts and traces the refusal.
#[test]
fn xcpu_sync_unit_that_would_overflow_is_refused_and_counted() {
    let mut rt = real(2);
    let sem = Arc::new(rt.create_semaphore(SemSpec::new("full", u64::MAX).cpu(0)).unwrap());
    let giver = rt
        .spawn(ThreadSpec::new("giver").cpu(1), move |cx| {
            sem.vacate(cx).unwrap();
        })
        .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(
        out.cross_cpu,
        CrossCpuStats {
            refused: 1,
            queue_full: 0,
            pending_at_end: 0,
            proxies_full: 0,
            proxies_at_end: 0,
            stale_answers: 0
        }
    );
    let r: Vec<_> = out.trace.iter().filter(|r| r.kind == TraceKind::CrossCpuRefused).collect();
    assert_eq!(r.len(), 1);
    assert_eq!((r[0].thread, r[0].job, r[0].arg), (giver, 3, 0));
}
