//! The `preempt` group: how late a periodic real-time thread starts after its release when an
//! OS-backed thread of lower priority computes on the same CPU without any runtime call, so
//! that every release must stop it in place (`tempi::ThreadSpec::os_backed`).
//!
//! Owns the `preempt.os_thread.*` metrics. The peer is the same periodic thread in a run of
//! its own with no other thread: the difference is what stopping the OS-backed thread costs.
//! Both sides share the `latency` group's parameters and run interleaved.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use tempi::clock::RealClock;
use tempi::{Config, Runtime, ThreadSpec};

use super::latency::{lateness_ns, LATENCY_FIFO, LATENCY_PERIOD, LATENCY_WARMUP};
use super::{compare, fmt_ns, percentile, progress, Metric, Sizes, BENCH_CPU};

/// Release latencies (ns) of one run of the periodic thread, with an OS-backed loop beside it
/// if `with_loop`, and the run's warnings.
fn release_latencies(releases: usize, with_loop: bool) -> Result<(Vec<f64>, Vec<String>), String> {
    let jobs = LATENCY_WARMUP + releases;
    let max_jobs = u32::try_from(jobs).map_err(|_| format!("preempt: {jobs} releases is too many for one run"))?;
    let cfg = Config::new(1).trace_capacity(0).pin(true).fifo_priority(Some(LATENCY_FIFO));
    let mut rt = Runtime::<RealClock>::new(cfg).map_err(|e| e.to_string())?;
    let late: Arc<Vec<AtomicU64>> = Arc::new((0..jobs).map(|_| AtomicU64::new(u64::MAX)).collect());
    let done = Arc::new(AtomicBool::new(false));
    let (slots, last) = (late.clone(), done.clone());
    rt.spawn(ThreadSpec::new("periodic").priority(2).periodic(LATENCY_PERIOD).max_jobs(max_jobs), move |cx| {
        let now = cx.now();
        let job = cx.job();
        if let Some(slot) = slots.get(job.number as usize) {
            slot.store((now - job.release).as_nanos() as u64, Ordering::Relaxed);
        }
        if job.number as usize + 1 == jobs {
            last.store(true, Ordering::Relaxed);
        }
    })
    .map_err(|e| e.to_string())?;
    if with_loop {
        let stop = done.clone();
        rt.spawn(ThreadSpec::new("loop").priority(1).os_backed(), move |_| {
            // No runtime call: only stopping its OS thread gives the CPU back.
            let mut x = 0u64;
            while !stop.load(Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
            }
        })
        .map_err(|e| e.to_string())?;
    }
    let out = rt.run().map_err(|e| e.to_string())?;
    super::check_completed(&out)?;
    Ok((lateness_ns("preempt", &late)?, out.warnings))
}

pub(super) fn preempt_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    let rounds = sz.latency_rounds.max(1);
    let per_run = sz.latency_releases.div_ceil(rounds);
    progress(&format!(
        "preempt: {per_run} periodic releases ({} us period) x {rounds} rounds, with and without an \
         OS-backed loop on the same CPU, interleaved",
        LATENCY_PERIOD.as_micros()
    ));
    let (mut with, mut without, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (ns, n) = release_latencies(per_run, true)?;
        with.extend(ns);
        notes.extend(n);
        let (ns, n) = release_latencies(per_run, false)?;
        without.extend(ns);
        notes.extend(n);
    }
    notes.sort();
    notes.dedup();
    let stats =
        |xs: &[f64]| (percentile(xs.to_vec(), 50.0), percentile(xs.to_vec(), 99.0), percentile(xs.to_vec(), 100.0));
    let (w50, w99, wmax) = stats(&with);
    let (p50, p99, pmax) = stats(&without);
    let peer = "the same periodic thread alone on its CPU (no OS-backed thread to stop)";
    let mut note = format!(
        "release to the thread running while a lower-priority OS-backed thread computes without runtime \
         calls on the same CPU; {} releases pooled per side, period {} us, SCHED_FIFO {LATENCY_FIFO} \
         dispatcher, CPU {BENCH_CPU}; p50 / p99 / max: with the loop {} / {} / {}, alone {} / {} / {}",
        with.len(),
        LATENCY_PERIOD.as_micros(),
        fmt_ns(w50),
        fmt_ns(w99),
        fmt_ns(wmax),
        fmt_ns(p50),
        fmt_ns(p99),
        fmt_ns(pmax),
    );
    if !notes.is_empty() {
        note.push_str(&format!(" | {}", notes.join("; ")));
    }
    metrics.push(compare("preempt.os_thread.p99", w99, peer, p99, Some(note)));
    metrics.push(compare("preempt.os_thread.p50", w50, peer, p50, None));
    metrics.push(compare("preempt.os_thread.max", wmax, peer, pmax, None));
    Ok(())
}
