//! The `xcpu.wake` metric: a wake-up round trip between two tempi threads on two real-time
//! CPUs (A on CPU 0 releases B on CPU 1, B releases A back), against the same hand-off
//! between two OS threads pinned to those CPUs through a `Mutex` and a `Condvar`.
//!
//! Owns the tempi side; the OS-thread peer is in `peers.rs`. It must not time anything else.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tempi::clock::RealClock;
use tempi::{Config, Runtime, ThreadId, ThreadSpec};

use super::peers::condvar_across;
use super::{check_completed, compare, progress, sample, Metric, Sizes};

/// tempi: `n` round trips A (CPU 0) -> B (CPU 1) -> A; ns per round trip.
fn tempi_wake(n: u64) -> Result<f64, String> {
    let cfg = Config::new(2).trace_capacity(0).pin(true);
    let mut rt = Runtime::<RealClock>::new(cfg).map_err(|e| e.to_string())?;
    let jobs = u32::try_from(n + 1).map_err(|_| "too many round trips".to_string())?;
    let spec = |name: &str, cpu| ThreadSpec::new(name).cpu(cpu).sporadic(Duration::ZERO).max_jobs(jobs).priority(5);
    let ids: Arc<Mutex<Option<(ThreadId, ThreadId)>>> = Arc::new(Mutex::new(None));
    let start = Arc::new(Mutex::new(None::<Instant>));
    let ns = Arc::new(AtomicU64::new(0));
    let (ids_a, start_a) = (ids.clone(), start.clone());
    let a = rt
        .spawn(spec("a", 0), move |cx| {
            // Job 0 is a warm-up round that also waits for B's dispatcher to be running.
            if cx.job().number == 1 {
                *start_a.lock().expect("start") = Some(Instant::now());
            }
            let (_, b) = ids_a.lock().expect("ids").expect("both spawned");
            cx.release(b).expect("release b");
        })
        .map_err(|e| e.to_string())?;
    let (ids_b, out_ns) = (ids.clone(), ns.clone());
    let b = rt
        .spawn(spec("b", 1), move |cx| {
            if u64::from(cx.job().number) == n {
                let t0 = start.lock().expect("start").expect("round 1 started");
                out_ns.store(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
                return;
            }
            let (a, _) = ids_b.lock().expect("ids").expect("both spawned");
            cx.release(a).expect("release a");
        })
        .map_err(|e| e.to_string())?;
    *ids.lock().map_err(|_| "poisoned")? = Some((a, b));
    rt.spawn(ThreadSpec::new("serve").cpu(0), move |cx| cx.release(a).expect("release a"))
        .map_err(|e| e.to_string())?;
    let out = rt.run().map_err(|e| e.to_string())?;
    check_completed(&out)?;
    Ok(ns.load(Ordering::Relaxed) as f64 / n as f64)
}

pub(super) fn xcpu_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
        progress("xcpu: skipped, the machine has one CPU");
        return Ok(());
    }
    progress(&format!("xcpu: tempi, {} cross-CPU round trips x {}", sz.xcpu_tempi, sz.reps));
    let t = sample(sz.reps, || tempi_wake(sz.xcpu_tempi))?;
    progress(&format!("xcpu: Mutex + Condvar peer, {} round trips x {}", sz.xcpu_peer, sz.reps));
    let mut notes = Vec::new();
    let p = sample(sz.reps, || {
        let (ns, w) = condvar_across(sz.xcpu_peer)?;
        notes = w;
        Ok(ns)
    })?;
    let note = (!notes.is_empty()).then(|| format!("peer not pinned: {}", notes.join("; ")));
    metrics.push(compare("xcpu.wake", t, "Mutex + Condvar, OS threads on CPUs 0 and 1", p, note));
    Ok(())
}
