//! The `spawn` metric: create, run and join an empty tempi thread, against
//! `std::thread::spawn(|| {}).join()`.
//!
//! Owns the tempi side; the OS-thread peer is in `peers.rs`. It must not time anything else.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use tempi::clock::RealClock;
use tempi::{Config, Runtime, ThreadSpec};

use super::peers::os_spawn;
use super::{check_completed, compare, progress, sample, Metric, Sizes};

/// tempi: one thread spawning and joining `n` empty threads, one at a time.
fn tempi_spawn(n: u64) -> Result<f64, String> {
    let cfg = Config::new(1).trace_capacity(0).pin(true);
    let mut rt = Runtime::<RealClock>::new(cfg).map_err(|e| e.to_string())?;
    let ns = Arc::new(AtomicU64::new(0));
    let out_ns = ns.clone();
    rt.spawn(ThreadSpec::new("main"), move |cx| {
        let t0 = Instant::now();
        for _ in 0..n {
            let c = cx.spawn(ThreadSpec::new("c"), |_| {}).expect("spawn");
            black_box(cx.join(c).expect("join"));
        }
        out_ns.store(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
    })
    .map_err(|e| e.to_string())?;
    let out = rt.run().map_err(|e| e.to_string())?;
    check_completed(&out)?;
    Ok(ns.load(Ordering::Relaxed) as f64 / n as f64)
}

pub(super) fn spawn_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    progress(&format!("spawn: tempi, {} spawn+join x {}", sz.spawn_tempi, sz.reps));
    let t_spawn = sample(sz.reps, || tempi_spawn(sz.spawn_tempi))?;
    progress(&format!("spawn: std::thread peer, {} spawn+join x {}", sz.spawn_peer, sz.reps));
    let mut spawn_notes = Vec::new();
    let p_spawn = sample(sz.reps, || {
        let (ns, w) = os_spawn(sz.spawn_peer)?;
        spawn_notes = w;
        Ok(ns)
    })?;
    let spawn_note = (!spawn_notes.is_empty()).then(|| format!("peer not pinned: {}", spawn_notes.join("; ")));
    metrics.push(compare("spawn", t_spawn, "std::thread::spawn + join", p_spawn, spawn_note));

    Ok(())
}
