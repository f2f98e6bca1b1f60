//! The `latency` group: how late a periodic real-time thread starts after its release, tempi's
//! dispatcher against the cyclictest loop on an OS thread.
//!
//! Owns the tempi side (a periodic thread that compares each job's release with the clock at
//! the first line of its body), the parameters both sides share ([`LATENCY_FIFO`],
//! [`LATENCY_PERIOD`], [`LATENCY_WARMUP`]), the interleaving of the two sides and the
//! `latency.release.*` metrics. The cyclictest-style peer is in `peers.rs`; it must not time
//! anything else.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tempi::clock::RealClock;
use tempi::{Config, Runtime, ThreadSpec};

use super::peers::{cyclictest_latency, rt_tests_cyclictest};
use super::{compare, fmt_ns, percentile, progress, Metric, Sizes, BENCH_CPU};

/// `SCHED_FIFO` priority of tempi's dispatcher and of the cyclictest-style thread (the
/// priority cyclictest's documentation suggests; nothing else on the machine runs above it).
pub(super) const LATENCY_FIFO: i32 = 80;

/// Release period of both sides (cyclictest's `-i 1000`).
pub(super) const LATENCY_PERIOD: Duration = Duration::from_millis(1);

/// Releases at the start of every run that are not counted (both sides): the first ones meet
/// cold caches, page faults on fresh stacks and, for tempi, the dispatchers' start at time zero.
pub(super) const LATENCY_WARMUP: usize = 20;

/// The `p99` bar: tempi's p99 at most the cyclictest-style p99 plus this.
const LATENCY_BAR_SLACK: Duration = Duration::from_micros(5);

/// Release latencies of one run (ns, one per counted release) and its notes.
#[derive(Debug)]
pub(super) struct LatencyRun {
    pub(super) ns: Vec<f64>,
    pub(super) notes: Vec<String>,
}

/// tempi: one periodic thread ([`LATENCY_PERIOD`], no work) on a real-time runtime of one CPU,
/// dispatcher pinned to [`BENCH_CPU`] under `SCHED_FIFO` [`LATENCY_FIFO`], tracing off. Each
/// job's first line reads the clock; latency = that reading - the job's release instant. The
/// first [`LATENCY_WARMUP`] jobs are dropped.
fn tempi_latency(releases: usize) -> Result<LatencyRun, String> {
    let jobs = LATENCY_WARMUP + releases;
    let max_jobs = u32::try_from(jobs).map_err(|_| format!("latency: {jobs} releases is too many for one run"))?;
    let cfg = Config::new(1).trace_capacity(0).pin(true).fifo_priority(Some(LATENCY_FIFO));
    let mut rt = Runtime::<RealClock>::new(cfg).map_err(|e| e.to_string())?;
    // One slot per job, filled by the job itself: no allocation or lock inside the run.
    let late: Arc<Vec<AtomicU64>> = Arc::new((0..jobs).map(|_| AtomicU64::new(u64::MAX)).collect());
    let slots = late.clone();
    rt.spawn(ThreadSpec::new("periodic").periodic(LATENCY_PERIOD).max_jobs(max_jobs), move |cx| {
        let now = cx.now();
        let job = cx.job();
        if let Some(slot) = slots.get(job.number as usize) {
            slot.store((now - job.release).as_nanos() as u64, Ordering::Relaxed);
        }
    })
    .map_err(|e| e.to_string())?;
    let out = rt.run().map_err(|e| e.to_string())?;
    super::check_completed(&out)?;
    Ok(LatencyRun { ns: lateness_ns("latency", &late)?, notes: out.warnings })
}

/// The lateness (ns) each job of the periodic thread wrote in its slot, warm-up left out; a
/// slot still at `u64::MAX` is a job that never ran, an error naming `group`.
pub(super) fn lateness_ns(group: &str, late: &[AtomicU64]) -> Result<Vec<f64>, String> {
    let mut ns = Vec::with_capacity(late.len().saturating_sub(LATENCY_WARMUP));
    for (job, slot) in late.iter().enumerate().skip(LATENCY_WARMUP) {
        match slot.load(Ordering::Relaxed) {
            u64::MAX => return Err(format!("{group}: job {job} of the periodic thread never ran")),
            x => ns.push(x as f64),
        }
    }
    Ok(ns)
}

/// The three figures of one side: p50, p99, max.
fn stats(xs: &[f64]) -> (f64, f64, f64) {
    (percentile(xs.to_vec(), 50.0), percentile(xs.to_vec(), 99.0), percentile(xs.to_vec(), 100.0))
}

fn triple(xs: &[f64]) -> String {
    let (p50, p99, max) = stats(xs);
    format!("{} / {} / {}", fmt_ns(p50), fmt_ns(p99), fmt_ns(max))
}

pub(super) fn latency_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    let rounds = sz.latency_rounds.max(1);
    let per_run = sz.latency_releases.div_ceil(rounds);
    progress(&format!(
        "latency: {} periodic releases ({} us period) x {rounds} rounds; tempi, the cyclictest loop and \
         rt-tests' cyclictest (if installed) interleaved",
        per_run,
        LATENCY_PERIOD.as_micros()
    ));
    let (mut tempi, mut builtin, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    // `None` while cyclictest has not been found (or not tried).
    let mut rt_tests: Option<Vec<f64>> = Some(Vec::new());
    // Alternate the sides so that drift in the machine's load hits them alike.
    for _ in 0..rounds {
        let t = tempi_latency(per_run)?;
        tempi.extend(t.ns);
        notes.extend(t.notes);
        let p = cyclictest_latency(per_run)?;
        builtin.extend(p.ns);
        notes.extend(p.notes);
        if let Some(all) = &mut rt_tests {
            match rt_tests_cyclictest(per_run) {
                Some(Ok(run)) => all.extend(run.ns),
                // Installed but refused (no privilege for its priority, say): the built-in
                // loop stands in, and the note says why.
                Some(Err(e)) => {
                    notes.push(format!("rt-tests cyclictest not used: {e}"));
                    rt_tests = None;
                }
                None => rt_tests = None,
            }
        }
    }
    notes.sort();
    notes.dedup();
    let (t50, t99, tmax) = stats(&tempi);
    let (peer_name, peer) = match &rt_tests {
        Some(ns) => {
            ("rt-tests cyclictest -t1, same CPU and priority (clock_nanosleep TIMER_ABSTIME, CLOCK_MONOTONIC)", ns)
        }
        None => (
            "cyclictest-style OS thread: clock_nanosleep TIMER_ABSTIME, CLOCK_MONOTONIC, same CPU and priority",
            &builtin,
        ),
    };
    let (p50, p99, pmax) = stats(peer);
    let bar = p99 + LATENCY_BAR_SLACK.as_nanos() as f64;
    let mut note = format!(
        "release to the thread running, {} releases pooled per side, period {} us, SCHED_FIFO {LATENCY_FIFO}, CPU {BENCH_CPU}; \
         p50 / p99 / max: tempi {}, built-in cyclictest loop {}, rt-tests cyclictest {}; \
         bar (not a test): tempi p99 <= peer p99 + {} us = {}: {}",
        tempi.len(),
        LATENCY_PERIOD.as_micros(),
        triple(&tempi),
        triple(&builtin),
        rt_tests.as_deref().map_or_else(|| "not run".to_string(), triple),
        LATENCY_BAR_SLACK.as_micros(),
        fmt_ns(bar),
        if t99 <= bar { "met" } else { "NOT met" },
    );
    if !notes.is_empty() {
        note.push_str(&format!(" | {}", notes.join("; ")));
    }
    metrics.push(compare("latency.release.p99", t99, peer_name, p99, Some(note)));
    metrics.push(compare("latency.release.p50", t50, peer_name, p50, None));
    metrics.push(compare("latency.release.max", tmax, peer_name, pmax, None));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::peers::parse_cyclictest_histogram;

    #[test]
    fn cyclictest_histogram_is_read_with_its_overflows() {
        let out = "# /dev/cpu_dma_latency set to 0us\n# Histogram\n000015 000002\n000016 000000\n000020 000001\n\
                   # Total: 000000003\n# Min Latencies: 00015\n# Avg Latencies: 00017\n# Max Latencies: 12000\n\
                   # Histogram Overflows: 00001\n# Histogram Overflow at cycle number:\n# Thread 0: 00003\n";
        let run = parse_cyclictest_histogram(out, 4).unwrap();
        assert_eq!(run.ns, [15_000.0, 15_000.0, 20_000.0, 12_000_000.0]);
        assert!(parse_cyclictest_histogram(out, 5).unwrap_err().contains("holds 4 latencies"));
        assert!(parse_cyclictest_histogram("000001 000001\n", 1).unwrap_err().contains("Max Latencies"));
    }
}
