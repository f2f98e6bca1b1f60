//! `tempi bench`: measure tempi against what a user would reach for instead, in the same run.
//!
//! Every comparison metric times tempi and its peer back to back in this process and reports
//! `ratio = peer_ns / tempi_ns`, i.e. how many times faster tempi is. The exception is the
//! `switch.accounting.*` overhead metrics, where the "peer" is tempi itself with accounting off
//! and `ratio = tempi_ns / peer_ns` is the overhead factor (above 1 means slower), and
//! `admit.scaling`, where the "peer" is the same engine with a thousandth of the jobs and the
//! ratio is read the same way. Absolute
//! numbers depend on the machine and its load; the ratios are what the project tracks. Each
//! number is the median of several repetitions taken after a warm-up run. Progress goes to
//! stderr, results to stdout (a table, or one JSON object with `--json`).
//!
//! Metrics:
//! - `switch.roundtrip`: two equal-priority tempi threads on one real-time CPU yielding to each
//!   other (A -> B -> A), against two OS threads pinned to one CPU handing a token through a
//!   mutex and condition variable (`switch.roundtrip.channel`: through two `mpsc` channels;
//!   `switch.roundtrip.corosensei`: against a bare `corosensei` resume + suspend round trip;
//!   `switch.roundtrip.corosensei_clocked`: against that round trip reading tempi's clock and
//!   charging the elapsed time at each of its two switches, the least a kernel that accounts
//!   every thread's execution time pays).
//! - `switch.accounting.thread` / `.group` / `.budget`: the same round trip with both threads
//!   in one thread set, under `Accounting::Thread`, `Accounting::Group`, and `Group` with a
//!   never-exhausted budget armed on the set, each against `Accounting::Off`. The variants run
//!   interleaved (Off, Thread, Group, Budget, Off, ...) so drift hits them alike.
//! - `budget.notify`: real-time overrun notification latency, from the instant a set's budget
//!   runs out to its handler starting, against a POSIX CPU-time timer whose real-time signal
//!   wakes a handler thread blocked in `sigtimedwait`.
//! - `spawn`: create a tempi thread from a thread, let it run to completion and join it,
//!   against `std::thread::spawn(|| {}).join()`.
//! - `lock.uncontended.<protocol>` (`km`, `bp`, `bpi`, `pcp`, `srp`, `msrp`): one tempi thread locking
//!   and unlocking a free [`tempi::sync::Mutex`], against `std::sync::Mutex` lock + unlock on a
//!   pinned OS thread; `lock.uncontended.<protocol>.pthread-pi` is the same tempi number against
//!   a pthread mutex with `PTHREAD_PRIO_INHERIT`. All eight variants run interleaved.
//! - `lock.handoff.bpi`: from a low-priority owner's unlock to the blocked high-priority waiter
//!   holding the lock (priority inheritance), against the same hand-off between two
//!   `SCHED_FIFO` OS threads on one CPU through a pthread PI mutex.
//! - `latency.release.p99` / `.p50` / `.max`: from a periodic (1 ms) real-time thread's
//!   release to its body running, tempi's `SCHED_FIFO` dispatcher against the cyclictest loop
//!   (`clock_nanosleep` with `TIMER_ABSTIME`) on an OS thread of the same priority and CPU.
//! - `preempt.os_thread.p99` / `.p50` / `.max`: the same release latency while a
//!   lower-priority OS-backed thread (`ThreadSpec::os_backed`) computes without runtime calls
//!   on the CPU, so every release stops it in place, against the same periodic thread alone.
//! - `mem.alloc_free`: one allocation and one free of a random small block (8..256 bytes) on
//!   a [`tempi::mem::BoundedHeap`], against the system allocator on the same sequence.
//! - `xcpu.wake`: a cross-CPU wake-up round trip, a tempi thread on CPU 0 releasing one on
//!   CPU 1 which releases it back, against two OS threads pinned to CPUs 0 and 1 handing a
//!   token through a mutex and condition variable.
//! - `msg.call_process`: a call to a tempi process and its reply on one real-time CPU, against
//!   a round trip over two `std::sync::mpsc` channels between two OS threads pinned to one CPU;
//!   `msg.call_process.tokio`: the same tempi number against a ping-pong of two tasks over
//!   `tokio::sync::mpsc` on a current-thread tokio runtime. `msg.send_process`: one
//!   asynchronous send to a ready process, against one `std::sync::mpsc` send.
//! - `sim.events_per_sec` / `sim.jobs_per_sec`: throughput of the virtual-time simulator on a
//!   fixed periodic workload (see [`SIM_WORKLOAD`](sim::SIM_WORKLOAD)).
//! - `plan.100x4` / `plan.100x4.max` / `plan.budget_overruns`: wall time of the Spring planner
//!   on requests that plan 100 tasks over 4 CPUs, and the requests that passed their budget
//!   (see [`PLAN_WORKLOAD`](plan::PLAN_WORKLOAD)).
//! - `admit.3000`, `admit.3000.min-laxity`, `admit.3000.hashed`: one EDF admission (idle
//!   query + admit) with 3,000 accepted jobs, the `tree` engine against the `linear`,
//!   `min_laxity` and `hashed` slot lists.
//!   `admit.scaling`: the `tree` admission with 10^6 accepted jobs against 10^3; like the
//!   accounting metrics its `ratio = tempi_ns / peer_ns` (the growth factor, above 1 = slower).
//!   The workload is in `admit.rs`.
//!
//! - `capi.yield`: the `switch.roundtrip` loop through the C API (`tempi_yield` from a body
//!   with the C calling convention) against the same loop through the Rust API, interleaved;
//!   an overhead like the accounting metrics (`ratio = tempi_ns / peer_ns`, bar 1.2).
//! - `warp.rollback`: a Time Warp straggler cycle on a 1 KiB state (undo by the reverse
//!   handler, run the straggler, re-run) against the same cycle from a fresh `Clone`;
//!   `warp.phold.seq`: committed PHOLD events per second in the sequential mode;
//!   `warp.phold.speedup`: the same model optimistic on 2 real-time CPUs against the sequential
//!   mode, same run (ratio = speedup, bar 1.3; efficiency in the note) (`warp.rs`).
//!
//! The files of this module; each owns one part and leaves the others alone:
//! - `mod.rs` (this file): the driver, i.e. the groups and `--only` ([`GROUPS`]), the sizes of
//!   `--quick` and full runs, repetitions and medians, progress on stderr, and the report (table
//!   or JSON). It knows how to run a group, not what a group measures.
//! - `switch.rs`, `budget.rs`, `spawn.rs`, `lock.rs`, `mem.rs`, `sim.rs`, `plan.rs`, `admit.rs`,
//!   `latency.rs`, `preempt.rs`, `xcpu.rs`, `msg.rs`, `capi.rs`, `warp.rs`: one file per metric group, each owning the tempi side of its
//!   measurements and how its metrics and notes read. The locking-protocol names live in
//!   `lock.rs`.
//! - `peers.rs`: every OS-thread peer (`std`, pthread, POSIX-timer and cyclictest routes).
//! - `posix.rs`: the `unsafe` POSIX wrappers the peers use; nothing else calls `libc`.

mod admit;
mod budget;
mod capi;
mod job;
mod latency;
mod lock;
mod mem;
pub(crate) mod msg;
mod peers;
mod plan;
mod posix;
mod preempt;
mod sim;
mod spawn;
mod switch;
mod warp;
mod xcpu;

use serde::Serialize;
use tempi::ThreadOutcome;

use admit::admit_metrics;
use budget::notify_metrics;
use lock::{handoff_metrics, uncontended_metrics};
use mem::mem_metrics;
use plan::plan_metrics;
use sim::sim_metrics;
use spawn::spawn_metrics;
use switch::{accounting_metrics, switch_metrics};

/// The CPU both tempi's dispatcher and the OS-thread peers are pinned to.
const BENCH_CPU: usize = 0;

/// How much work each benchmark does; `--quick` shrinks everything so a test can run it.
struct Sizes {
    reps: usize,
    switch_tempi: u64,
    switch_peer: u64,
    spawn_tempi: u64,
    spawn_peer: u64,
    sim_seconds: u64,
    /// Interleaved repetitions of every accounting variant (after one warm-up round).
    acct_reps: usize,
    acct_switches: u64,
    /// Overruns per `budget.notify` run, tempi side and POSIX side.
    notify_tempi: usize,
    notify_peer: usize,
    /// Lock + unlock pairs per `lock.uncontended` run, tempi side and OS-thread side.
    lock_tempi: u64,
    lock_peer: u64,
    /// Hand-offs per `lock.handoff.bpi` run, tempi side and OS-thread side.
    handoff_tempi: usize,
    handoff_peer: usize,
    /// Requests per `plan.*` run.
    plan_requests: usize,
    /// `latency`: releases per side in all, over interleaved rounds.
    latency_releases: usize,
    latency_rounds: usize,
    /// Allocation + free pairs per `mem.alloc_free` run (both sides).
    mem_pairs: u64,
    /// Blocks of `admit::BLOCK` admissions per `admit.*` repetition, and the list length of
    /// the large side of `admit.scaling`.
    admit_blocks: usize,
    admit_scaling_jobs: usize,
    /// Cross-CPU round trips per `xcpu.wake` run, tempi side and OS-thread side.
    xcpu_tempi: u64,
    xcpu_peer: u64,
    /// Straggler cycles per `warp.rollback` run (both sides), and the end time of a
    /// `warp.phold.seq` run (about 1,000 x 4 / 8.5 events per tick).
    warp_cycles: u64,
    warp_phold_end: u64,
}

impl Sizes {
    fn new(quick: bool) -> Sizes {
        if quick {
            Sizes {
                reps: 3,
                switch_tempi: 20_000,
                switch_peer: 2_000,
                spawn_tempi: 2_000,
                spawn_peer: 300,
                sim_seconds: 5,
                acct_reps: 3,
                acct_switches: 20_000,
                notify_tempi: 100,
                notify_peer: 8,
                lock_tempi: 5_000,
                lock_peer: 50_000,
                handoff_tempi: 100,
                handoff_peer: 30,
                plan_requests: 200,
                latency_releases: 1_000,
                latency_rounds: 1,
                mem_pairs: 20_000,
                admit_blocks: 20,
                admit_scaling_jobs: 100_000,
                xcpu_tempi: 2_000,
                xcpu_peer: 2_000,
                warp_cycles: 20_000,
                warp_phold_end: 200,
            }
        } else {
            Sizes {
                reps: 5,
                switch_tempi: 300_000,
                switch_peer: 40_000,
                spawn_tempi: 30_000,
                spawn_peer: 4_000,
                sim_seconds: 200,
                acct_reps: 31,
                acct_switches: 100_000,
                notify_tempi: 500,
                notify_peer: 40,
                lock_tempi: 200_000,
                lock_peer: 2_000_000,
                handoff_tempi: 2_000,
                handoff_peer: 1_000,
                plan_requests: 1_000,
                latency_releases: 10_000,
                latency_rounds: 5,
                mem_pairs: 2_000_000,
                admit_blocks: 300,
                admit_scaling_jobs: 1_000_000,
                xcpu_tempi: 50_000,
                xcpu_peer: 50_000,
                warp_cycles: 500_000,
                warp_phold_end: 5_000,
            }
        }
    }
}

/// One line of the result. Comparison metrics fill `tempi_ns`/`peer`/`peer_ns`/`ratio`,
/// throughput metrics fill `value`/`unit`.
#[derive(Serialize, Debug, Clone)]
struct Metric {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    tempi_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    peer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    peer_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

#[derive(Serialize)]
struct Report {
    metrics: Vec<Metric>,
}

fn round_to(x: f64, decimals: i32) -> f64 {
    let f = 10f64.powi(decimals);
    (x * f).round() / f
}

fn compare(name: &str, tempi_ns: f64, peer: &str, peer_ns: f64, note: Option<String>) -> Metric {
    // Round first and derive the ratio from the rounded values, so a reader can recompute it.
    let tempi_ns = round_to(tempi_ns, 1);
    let peer_ns = round_to(peer_ns, 1);
    let ratio = if tempi_ns > 0.0 { round_to(peer_ns / tempi_ns, 3) } else { 0.0 };
    Metric {
        name: name.into(),
        tempi_ns: Some(tempi_ns),
        peer: Some(peer.into()),
        peer_ns: Some(peer_ns),
        ratio: Some(ratio),
        value: None,
        unit: None,
        note,
    }
}

/// An overhead metric: tempi with a feature against tempi without it. Here
/// `ratio = tempi_ns / peer_ns`, the overhead factor (above 1 means the feature costs time).
fn overhead(name: &str, with_ns: f64, without: &str, without_ns: f64, note: String) -> Metric {
    let tempi_ns = round_to(with_ns, 1);
    let peer_ns = round_to(without_ns, 1);
    let ratio = if peer_ns > 0.0 { round_to(tempi_ns / peer_ns, 3) } else { 0.0 };
    Metric {
        name: name.into(),
        tempi_ns: Some(tempi_ns),
        peer: Some(without.into()),
        peer_ns: Some(peer_ns),
        ratio: Some(ratio),
        value: None,
        unit: None,
        note: Some(note),
    }
}

/// Whether a metric's ratio is an overhead factor (tempi / peer) rather than a speed-up.
fn is_overhead(m: &Metric) -> bool {
    m.name.starts_with("switch.accounting.") || m.name == "admit.scaling"
}

fn throughput(name: &str, value: f64, unit: &str, note: &str) -> Metric {
    Metric {
        name: name.into(),
        tempi_ns: None,
        peer: None,
        peer_ns: None,
        ratio: None,
        value: Some(value.round()),
        unit: Some(unit.into()),
        note: Some(note.into()),
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// The `p`-th percentile (0..=100, nearest rank) of `xs`.
fn percentile(mut xs: Vec<f64>, p: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * xs.len() as f64).ceil() as usize;
    xs[rank.clamp(1, xs.len()) - 1]
}

/// Warm up once, then take the median of `reps` runs of `f` (each returns one sample).
fn sample(reps: usize, mut f: impl FnMut() -> Result<f64, String>) -> Result<f64, String> {
    f()?;
    let mut xs = Vec::with_capacity(reps);
    for _ in 0..reps {
        xs.push(f()?);
    }
    Ok(median(xs))
}

/// Like [`sample`] for runs that keep their raw data: the median of `value(run)` over the
/// repetitions, and every run (the warm-up first) for the notes.
fn sample_runs<R>(
    reps: usize,
    mut run: impl FnMut() -> Result<R, String>,
    value: impl Fn(&R) -> &[f64],
) -> Result<(f64, Vec<R>), String> {
    let mut runs = Vec::with_capacity(reps + 1);
    let m = sample(reps, || {
        let r = run()?;
        let m = median(value(&r).to_vec());
        runs.push(r);
        Ok(m)
    })?;
    Ok((m, runs))
}

fn progress(msg: &str) {
    eprintln!("bench: {msg}");
}

fn check_completed(out: &tempi::RunOutcome) -> Result<(), String> {
    for t in &out.threads {
        match &t.outcome {
            Some(ThreadOutcome::Completed) => {}
            other => return Err(format!("benchmark thread `{}` ended as {other:?}", t.name)),
        }
    }
    Ok(())
}

/// The benchmark groups, in the order they run; `--only` takes these names.
pub const GROUPS: &[&str] = &[
    "switch.roundtrip",
    "switch.accounting",
    "budget.notify",
    "spawn",
    "lock.uncontended",
    "lock.handoff",
    "mem",
    "sim",
    "plan",
    "latency",
    "preempt",
    "admit",
    "xcpu",
    "msg",
    "job",
    "capi",
    "warp",
];

fn measure(quick: bool, only: &[String]) -> Result<Vec<Metric>, String> {
    let sz = Sizes::new(quick);
    let mut metrics = Vec::new();
    let wanted = |group: &str| only.is_empty() || only.iter().any(|o| o == group);

    if wanted("switch.roundtrip") {
        switch_metrics(&sz, &mut metrics)?;
    }
    if wanted("switch.accounting") {
        accounting_metrics(&sz, &mut metrics)?;
    }
    if wanted("budget.notify") {
        notify_metrics(&sz, &mut metrics)?;
    }
    if wanted("spawn") {
        spawn_metrics(&sz, &mut metrics)?;
    }
    if wanted("lock.uncontended") {
        uncontended_metrics(&sz, &mut metrics)?;
    }
    if wanted("lock.handoff") {
        handoff_metrics(&sz, &mut metrics)?;
    }
    if wanted("mem") {
        mem_metrics(&sz, &mut metrics)?;
    }
    if wanted("sim") {
        sim_metrics(&sz, &mut metrics)?;
    }
    if wanted("plan") {
        plan_metrics(&sz, &mut metrics)?;
    }
    if wanted("latency") {
        latency::latency_metrics(&sz, &mut metrics)?;
    }
    if wanted("preempt") {
        preempt::preempt_metrics(&sz, &mut metrics)?;
    }
    if wanted("admit") {
        admit_metrics(&sz, &mut metrics)?;
    }
    if wanted("xcpu") {
        xcpu::xcpu_metrics(&sz, &mut metrics)?;
    }
    if wanted("msg") {
        msg::msg_metrics(&sz, &mut metrics)?;
    }
    if wanted("job") {
        job::job_metrics(sz.reps, if quick { 50 } else { 1000 }, &mut metrics)?;
    }
    if wanted("capi") {
        capi::capi_metrics(&sz, &mut metrics)?;
    }
    if wanted("warp") {
        warp::warp_metrics(&sz, &mut metrics)?;
    }
    Ok(metrics)
}

fn fmt_ns(ns: f64) -> String {
    if ns >= 1_000_000.0 {
        format!("{:.2} ms", ns / 1_000_000.0)
    } else if ns >= 1_000.0 {
        format!("{:.2} us", ns / 1_000.0)
    } else {
        format!("{ns:.1} ns")
    }
}

fn fmt_rate(v: f64, unit: &str) -> String {
    if v >= 1e6 {
        format!("{:.2} M {unit}", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} k {unit}", v / 1e3)
    } else {
        format!("{v:.0} {unit}")
    }
}

fn table(metrics: &[Metric]) -> String {
    let header = ["metric", "tempi", "peer", "peer time", "ratio"];
    let rows: Vec<[String; 5]> = metrics
        .iter()
        .map(|m| match (m.tempi_ns, m.peer_ns, m.ratio) {
            (Some(t), Some(p), Some(r)) => {
                let ratio = if is_overhead(m) {
                    format!("{r:.3}x ({:+.1}%)", (r - 1.0) * 100.0)
                } else if r < 1.0 {
                    // tempi slower than its peer: keep the digits that matter.
                    format!("{r:.3}x")
                } else {
                    format!("{r:.1}x")
                };
                [m.name.clone(), fmt_ns(t), m.peer.clone().unwrap_or_default(), fmt_ns(p), ratio]
            }
            _ => [
                m.name.clone(),
                fmt_rate(m.value.unwrap_or(0.0), m.unit.as_deref().unwrap_or("")),
                "-".into(),
                "-".into(),
                "-".into(),
            ],
        })
        .collect();
    let mut width = header.map(str::len);
    for r in &rows {
        for (w, cell) in width.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 5]| {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(width).enumerate() {
            // Text columns left-aligned, numbers right-aligned.
            if i == 0 || i == 2 {
                s.push_str(&format!("{cell:<w$}  "));
            } else {
                s.push_str(&format!("{cell:>w$}  "));
            }
        }
        s.trim_end().to_string()
    };
    let mut out = String::new();
    out.push_str(&line(header));
    out.push('\n');
    out.push_str(&"-".repeat(width.iter().sum::<usize>() + 2 * (width.len() - 1)));
    out.push('\n');
    for r in &rows {
        out.push_str(&line([&r[0], &r[1], &r[2], &r[3], &r[4]]));
        out.push('\n');
    }
    let notes: Vec<String> =
        metrics.iter().filter_map(|m| m.note.as_ref().map(|n| format!("  {}: {n}", m.name))).collect();
    if !notes.is_empty() {
        out.push_str("\nnotes:\n");
        for n in notes {
            out.push_str(&n);
            out.push('\n');
        }
    }
    out.push_str("\nratio = peer time / tempi time (how many times faster tempi is); medians of repeated runs.\n");
    if metrics.iter().any(is_overhead) {
        out.push_str(
            "except switch.accounting.* and admit.scaling: ratio = tempi time / peer time, the overhead factor \
             (above 1 = slower; +x% is the added time).\n",
        );
    }
    out
}

/// Run the benchmarks (every group, or those named in `only`, see [`GROUPS`]) and print a
/// table, or JSON with `json`.
pub fn run(json: bool, quick: bool, only: &[String]) -> Result<(), String> {
    let metrics = measure(quick, only)?;
    if json {
        let s = serde_json::to_string(&Report { metrics }).map_err(|e| e.to_string())?;
        println!("{s}");
    } else {
        print!("{}", table(&metrics));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn ratio_is_recomputable() {
        let m = compare("x", 123.456, "p", 9876.54, None);
        let r = m.peer_ns.unwrap() / m.tempi_ns.unwrap();
        assert!((m.ratio.unwrap() - r).abs() < 1e-3);
    }

    #[test]
    fn overhead_ratio_is_with_over_without() {
        let m = overhead("switch.accounting.group", 105.0, "off", 100.0, "n".into());
        assert_eq!(m.ratio, Some(1.05));
        assert!(table(&[m]).contains("1.050x (+5.0%)"));
    }

    #[test]
    fn percentile_nearest_rank() {
        let xs: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(xs.clone(), 99.0), 99.0);
        assert_eq!(percentile(xs, 100.0), 100.0);
        assert_eq!(percentile(vec![], 50.0), 0.0);
    }

    #[test]
    fn ratio_below_one_keeps_its_digits() {
        let m = compare("lock.uncontended.bpi", 200.0, "std", 5.0, None);
        assert!(table(&[m]).contains("0.025x"));
    }

    #[test]
    fn table_lists_every_metric() {
        let ms = vec![
            compare("switch.roundtrip", 100.0, "p", 5000.0, None),
            throughput("sim.events_per_sec", 1e6, "events/s", "w"),
        ];
        let t = table(&ms);
        assert!(t.contains("switch.roundtrip") && t.contains("50.0x") && t.contains("1.00 M events/s"));
    }
}
