//! A thread that keeps retrying a post against another real-time CPU's full request queue
//! (a `yield_now` between tries): every refusal is counted exactly, and the trace keeps one
//! `queue-full` record per run of refusals instead of one per try, so the flood cannot fill
//! the CPU's trace buffer. Real time only (virtual time has no queue); the checks are
//! properties of counts, with no timing bound.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tempi::clock::RealClock;
use tempi::message::{Message, MsgError};
use tempi::trace::TraceKind;
use tempi::{Config, Error, Runtime, ThreadOutcome, ThreadSpec};

/// Refusals the retrying thread sees before it stops.
const TRIES: u64 = 20_000;

/// Real-time tests take turns: on a 2-core machine two runs of two dispatchers each would
/// steal each other's CPUs.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn xcpu_retries_against_a_full_queue_are_counted_exactly_and_traced_once_per_run() {
    let _turn = serial();
    // Room for the retrier's own records (a stop and a run per yield), not for a queue-full
    // record per try besides.
    let cfg = Config::new(2).pin(false).cross_cpu_queue(1).trace_capacity(2 * TRIES as usize + 4096);
    let mut rt = Runtime::<RealClock>::new(cfg).unwrap();
    let (hogging, done) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let (h, d) = (hogging.clone(), done.clone());
    // Holds CPU 1 without a runtime call, so its dispatcher drains nothing meanwhile.
    rt.spawn(ThreadSpec::new("hog").cpu(1).priority(9), move |_| {
        h.store(true, Ordering::Release);
        let start = Instant::now();
        while !d.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(20) {
            std::hint::spin_loop();
        }
    })
    .unwrap();
    let target = rt.spawn(ThreadSpec::new("target").cpu(1).sporadic(Duration::ZERO).max_jobs(1), |_| {}).unwrap();
    let refusals = Arc::new(AtomicU64::new(0));
    let seen = refusals.clone();
    rt.spawn(ThreadSpec::new("retrier").cpu(0), move |cx| {
        while !hogging.load(Ordering::Acquire) {
            cx.sleep(Duration::from_micros(100));
        }
        // Fills the queue of one.
        assert_eq!(cx.release(target), Ok(()));
        for _ in 0..TRIES {
            assert_eq!(cx.kill(target), Err(Error::QueueFull { cpu: 1, capacity: 1 }));
            seen.fetch_add(1, Ordering::Relaxed);
            cx.yield_now();
        }
        done.store(true, Ordering::Release);
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(refusals.load(Ordering::Relaxed), TRIES);
    assert_eq!(out.thread_named("retrier").unwrap().outcome, Some(ThreadOutcome::Completed));
    // Exact, in the outcome and the report.
    assert_eq!(out.cross_cpu.queue_full, TRIES);
    let report = tempi::trace::report::to_json(&out);
    assert!(report.contains(&format!("\"cross_cpu_queue_full\": {TRIES}")), "{report}");
    // One record for the whole run of refusals: the first, which counts the others.
    let full: Vec<_> = out.trace.iter().filter(|r| r.kind == TraceKind::QueueFull).collect();
    assert_eq!(full.len(), 1);
    assert_eq!((full[0].cpu, full[0].thread, full[0].arg), (0, target, 1));
    assert_eq!(u64::from(full[0].job) + 1, TRIES);
    assert_eq!(out.trace_dropped, 0);
}

/// The same with a message: a send retried against a full queue leaves one `queue-full`
/// record and one `message-refused` record (reason 4) for the whole run of refusals, while
/// the caller sees every one.
#[test]
fn xcpu_message_retries_against_a_full_queue_are_traced_once_per_run() {
    let _turn = serial();
    let cfg = Config::new(2).pin(false).cross_cpu_queue(1).trace_capacity(2 * TRIES as usize + 4096);
    let mut rt = Runtime::<RealClock>::new(cfg).unwrap();
    let (hogging, done) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let (h, d) = (hogging.clone(), done.clone());
    rt.spawn(ThreadSpec::new("hog").cpu(1).priority(9), move |_| {
        h.store(true, Ordering::Release);
        let start = Instant::now();
        while !d.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(20) {
            std::hint::spin_loop();
        }
    })
    .unwrap();
    let target = rt.spawn(ThreadSpec::new("target").cpu(1).sporadic(Duration::ZERO).max_jobs(1), |_| {}).unwrap();
    let sink = rt.spawn(ThreadSpec::new("sink").cpu(1), |_| {}).unwrap();
    let refusals = Arc::new(AtomicU64::new(0));
    let seen = refusals.clone();
    let sender = rt
        .spawn(ThreadSpec::new("sender").cpu(0), move |cx| {
            while !hogging.load(Ordering::Acquire) {
                cx.sleep(Duration::from_micros(100));
            }
            assert_eq!(cx.release(target), Ok(()));
            for _ in 0..TRIES {
                assert_eq!(cx.send(sink, Message::new(0, 1, 0)), Err(MsgError::CpuQueueFull { cpu: 1, capacity: 1 }));
                seen.fetch_add(1, Ordering::Relaxed);
                cx.yield_now();
            }
            done.store(true, Ordering::Release);
        })
        .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(refusals.load(Ordering::Relaxed), TRIES);
    assert_eq!(out.cross_cpu.queue_full, TRIES);
    let full: Vec<_> = out.trace.iter().filter(|r| r.kind == TraceKind::QueueFull).collect();
    assert_eq!(full.len(), 1);
    assert_eq!((full[0].thread, full[0].arg, u64::from(full[0].job) + 1), (sink, 1, TRIES));
    let refused: Vec<_> = out.trace.iter().filter(|r| r.kind == TraceKind::MessageRefused).collect();
    assert_eq!(refused.len(), 1);
    assert_eq!((refused[0].thread, refused[0].arg), (sender, 4));
}
