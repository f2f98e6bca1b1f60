//! `tempi bench`: measure tempi against what a user would reach for instead, in the same run.
//!
//! Every comparison metric times tempi and its peer back to back in this process and reports
//! `ratio = peer_ns / tempi_ns`, i.e. how many times faster tempi is. Absolute numbers depend
//! on the machine and its load; the ratios are what the project tracks. Each number is the
//! median of several repetitions taken after a warm-up run. Progress goes to stderr, results to
//! stdout (a table, or one JSON object with `--json`).
//!
//! Metrics:
//! - `switch.roundtrip`: two equal-priority tempi threads on one real-time CPU yielding to each
//!   other (A -> B -> A), against two OS threads pinned to one CPU handing a token through a
//!   mutex and condition variable (`switch.roundtrip.channel`: through two `mpsc` channels).
//! - `spawn`: create a tempi thread from a thread, let it run to completion and join it,
//!   against `std::thread::spawn(|| {}).join()`.
//! - `sim.events_per_sec` / `sim.jobs_per_sec`: throughput of the virtual-time simulator on a
//!   fixed periodic workload (see [`SIM_WORKLOAD`]).

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use tempi::clock::{RealClock, VirtualClock};
use tempi::policy::sched::Edf;
use tempi::{Config, Runtime, ThreadOutcome, ThreadSpec, Time};

/// The CPU both tempi's dispatcher and the OS-thread peers are pinned to.
const BENCH_CPU: usize = 0;

/// Number of periodic threads in the simulator workload.
const SIM_THREADS: u64 = 20;

/// Human description of the simulator workload, printed with its results.
const SIM_WORKLOAD: &str =
    "20 periodic threads on 1 CPU, EDF, periods 1..20 ms, wcet = 0.045 x period (U = 0.9), each job cx.work(wcet)";

/// How much work each benchmark does; `--quick` shrinks everything so a test can run it.
struct Sizes {
    reps: usize,
    switch_tempi: u64,
    switch_peer: u64,
    spawn_tempi: u64,
    spawn_peer: u64,
    sim_seconds: u64,
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
            }
        } else {
            Sizes {
                reps: 5,
                switch_tempi: 300_000,
                switch_peer: 40_000,
                spawn_tempi: 30_000,
                spawn_peer: 4_000,
                sim_seconds: 200,
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

/// Warm up once, then take the median of `reps` runs of `f` (each returns one sample).
fn sample(reps: usize, mut f: impl FnMut() -> Result<f64, String>) -> Result<f64, String> {
    f()?;
    let mut xs = Vec::with_capacity(reps);
    for _ in 0..reps {
        xs.push(f()?);
    }
    Ok(median(xs))
}

fn progress(msg: &str) {
    eprintln!("bench: {msg}");
}

// ----- OS helpers ---------------------------------------------------------------------------

/// Pin the calling OS thread to `cpu`.
fn pin_current(cpu: usize) -> Result<(), String> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(format!("CPU {cpu} is beyond CPU_SETSIZE"));
    }
    // SAFETY: cpu_set_t is a plain bit array; the all-zero pattern is the valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below CPU_SETSIZE (checked above), so the bit written lies inside `set`.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: pid 0 means the calling thread; the pointer is to a live, initialised cpu_set_t
    // and the size passed is exactly its size, so the kernel reads only memory we own.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().to_string())
    }
}

/// Run `a` and `b` on two OS threads, each first pinned to `BENCH_CPU`. Returns what `a`
/// returned and the pinning errors, if any.
fn pinned_pair<A, B>(a: A, b: B) -> Result<(f64, Vec<String>), String>
where
    A: FnOnce() -> f64 + Send + 'static,
    B: FnOnce() + Send + 'static,
{
    let hb = std::thread::spawn(move || {
        let pinned = pin_current(BENCH_CPU);
        b();
        pinned
    });
    let ha = std::thread::spawn(move || {
        let pinned = pin_current(BENCH_CPU);
        (a(), pinned)
    });
    let (ns, pa) = ha.join().map_err(|_| "peer thread panicked".to_string())?;
    let pb = hb.join().map_err(|_| "peer thread panicked".to_string())?;
    let notes = [pa, pb].into_iter().filter_map(Result::err).collect();
    Ok((ns, notes))
}

// ----- switch.roundtrip ---------------------------------------------------------------------

/// tempi: two equal-priority threads on one pinned real-time CPU, each yielding `n` times.
/// Returns ns per round trip (A -> B -> A) and the runtime's warnings.
fn tempi_switch(n: u64) -> Result<(f64, Vec<String>), String> {
    let cfg = Config::new(1).trace_capacity(0).pin(true);
    let mut rt = Runtime::<RealClock>::new(cfg).map_err(|e| e.to_string())?;
    let base = Instant::now();
    let start = Arc::new(AtomicU64::new(0));
    let end = Arc::new(AtomicU64::new(0));
    let (s, e) = (start.clone(), end.clone());
    // The first yield also creates B's coroutine, so the clock starts after it.
    rt.spawn(ThreadSpec::new("a"), move |cx| {
        cx.yield_now();
        s.store(base.elapsed().as_nanos() as u64, Ordering::Relaxed);
        for _ in 0..n {
            cx.yield_now();
        }
        e.store(base.elapsed().as_nanos() as u64, Ordering::Relaxed);
    })
    .map_err(|e| e.to_string())?;
    rt.spawn(ThreadSpec::new("b"), move |cx| {
        for _ in 0..=n {
            cx.yield_now();
        }
    })
    .map_err(|e| e.to_string())?;
    let out = rt.run().map_err(|e| e.to_string())?;
    check_completed(&out)?;
    let span = end.load(Ordering::Relaxed).saturating_sub(start.load(Ordering::Relaxed));
    Ok((span as f64 / n as f64, out.warnings))
}

/// Peer: two pinned OS threads passing a token through `Mutex<bool>` + `Condvar`.
fn condvar_switch(n: u64) -> Result<(f64, Vec<String>), String> {
    // `true`: A's turn; `false`: B's turn.
    let pair = Arc::new((Mutex::new(true), Condvar::new()));
    let pb = pair.clone();
    let b = move || {
        let (m, cv) = &*pb;
        for _ in 0..=n {
            let mut turn = m.lock().unwrap();
            while *turn {
                turn = cv.wait(turn).unwrap();
            }
            *turn = true;
            cv.notify_one();
        }
    };
    let a = move || {
        let (m, cv) = &*pair;
        let mut t0 = Instant::now();
        for i in 0..=n {
            // Round 0 is a warm-up that also waits for B to be running.
            if i == 1 {
                t0 = Instant::now();
            }
            let mut turn = m.lock().unwrap();
            *turn = false;
            cv.notify_one();
            while !*turn {
                turn = cv.wait(turn).unwrap();
            }
        }
        t0.elapsed().as_nanos() as f64 / n as f64
    };
    pinned_pair(a, b)
}

/// Peer: two pinned OS threads passing a token through two `mpsc` channels.
fn channel_switch(n: u64) -> Result<(f64, Vec<String>), String> {
    let (to_b, from_a) = mpsc::channel::<u64>();
    let (to_a, from_b) = mpsc::channel::<u64>();
    let b = move || {
        while let Ok(x) = from_a.recv() {
            if to_a.send(black_box(x)).is_err() {
                break;
            }
        }
    };
    let a = move || {
        let mut t0 = Instant::now();
        for i in 0..=n {
            if i == 1 {
                t0 = Instant::now();
            }
            to_b.send(i).expect("peer alive");
            black_box(from_b.recv().expect("peer alive"));
        }
        let ns = t0.elapsed().as_nanos() as f64 / n as f64;
        // Dropping `to_b` ends B's loop.
        drop(to_b);
        ns
    };
    pinned_pair(a, b)
}

// ----- spawn --------------------------------------------------------------------------------

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

/// Peer: `std::thread::spawn(|| {}).join()` `n` times from a thread pinned to the same CPU
/// (children inherit the affinity, as tempi's threads share their dispatcher's CPU).
fn os_spawn(n: u64) -> Result<(f64, Vec<String>), String> {
    let h = std::thread::spawn(move || {
        let pinned = pin_current(BENCH_CPU);
        let t0 = Instant::now();
        for _ in 0..n {
            std::thread::spawn(|| black_box(())).join().expect("empty thread");
        }
        (t0.elapsed().as_nanos() as f64 / n as f64, pinned)
    });
    let (ns, pinned) = h.join().map_err(|_| "peer thread panicked".to_string())?;
    Ok((ns, pinned.err().into_iter().collect()))
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

// ----- simulator throughput -----------------------------------------------------------------

struct SimSample {
    events: u64,
    jobs: u64,
    wall: Duration,
}

/// Run the [`SIM_WORKLOAD`] for `seconds` of virtual time and time `run_until`.
fn sim_run(seconds: u64) -> Result<SimSample, String> {
    // Jobs per simulated second: sum over periods of 1000 / period_ms (about 3598). A job
    // writes a release, run, stop and completion record, plus a run/stop pair per preemption;
    // twelve per job leaves ample room.
    let jobs_per_sec: u64 = (1..=SIM_THREADS).map(|p| 1000 / p + 1).sum();
    let capacity = (seconds * jobs_per_sec * 12 + 4096) as usize;
    let cfg = Config::new(1).trace_capacity(capacity).scheduler(|| Box::new(Edf::new()));
    let mut rt = Runtime::<VirtualClock>::new(cfg).map_err(|e| e.to_string())?;
    for p in 1..=SIM_THREADS {
        let period = Duration::from_millis(p);
        let c = Duration::from_micros(45 * p);
        rt.spawn(ThreadSpec::new(format!("p{p}")).periodic(period).wcet(c), move |cx| cx.work(c))
            .map_err(|e| e.to_string())?;
    }
    let t0 = Instant::now();
    let out = rt.run_until(Time::from_secs(seconds)).map_err(|e| e.to_string())?;
    let wall = t0.elapsed();
    if out.trace_dropped != 0 {
        return Err(format!("simulator benchmark dropped {} trace records; capacity too small", out.trace_dropped));
    }
    if out.total_misses() != 0 {
        return Err(format!("simulator workload missed {} deadlines; it should be feasible", out.total_misses()));
    }
    let jobs = out.threads.iter().map(|t| t.stats.completed).sum();
    let events = out.trace.len() as u64;
    // Freeing the trace is not part of the measurement.
    drop(black_box(out));
    Ok(SimSample { events, jobs, wall })
}

// ----- driver -------------------------------------------------------------------------------

fn measure(quick: bool) -> Result<Vec<Metric>, String> {
    let sz = Sizes::new(quick);
    let mut metrics = Vec::new();

    // switch.roundtrip
    progress(&format!("switch.roundtrip: tempi, {} round trips x {} (+ warm-up)", sz.switch_tempi, sz.reps));
    let mut tempi_notes = Vec::new();
    let t_switch = sample(sz.reps, || {
        let (ns, w) = tempi_switch(sz.switch_tempi)?;
        tempi_notes = w;
        Ok(ns)
    })?;
    progress(&format!("switch.roundtrip: condvar peer, {} round trips x {}", sz.switch_peer, sz.reps));
    let mut peer_notes = Vec::new();
    let p_condvar = sample(sz.reps, || {
        let (ns, w) = condvar_switch(sz.switch_peer)?;
        peer_notes = w;
        Ok(ns)
    })?;
    progress(&format!("switch.roundtrip: channel peer, {} round trips x {}", sz.switch_peer, sz.reps));
    let p_channel = sample(sz.reps, || {
        let (ns, w) = channel_switch(sz.switch_peer)?;
        peer_notes.extend(w);
        Ok(ns)
    })?;
    peer_notes.sort();
    peer_notes.dedup();
    let pin_note = pin_note(&tempi_notes, &peer_notes);
    metrics.push(compare(
        "switch.roundtrip",
        t_switch,
        "os-thread condvar handoff, same CPU",
        p_condvar,
        pin_note.clone(),
    ));
    metrics.push(compare(
        "switch.roundtrip.channel",
        t_switch,
        "os-thread mpsc channel pair, same CPU",
        p_channel,
        pin_note,
    ));

    // spawn
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

    // sim throughput
    progress(&format!("sim: {} simulated s of the workload x {}", sz.sim_seconds, sz.reps));
    // Warm-up on a shorter run, then keep every repetition and take medians of both rates.
    sim_run(sz.sim_seconds.div_ceil(5))?;
    let mut ev = Vec::with_capacity(sz.reps);
    let mut jobs = Vec::with_capacity(sz.reps);
    let mut last = None;
    for _ in 0..sz.reps {
        let s = sim_run(sz.sim_seconds)?;
        let secs = s.wall.as_secs_f64().max(1e-9);
        ev.push(s.events as f64 / secs);
        jobs.push(s.jobs as f64 / secs);
        last = Some(s);
    }
    let last = last.expect("at least one repetition");
    let note = format!(
        "{SIM_WORKLOAD}; {} simulated s per run, {} trace records and {} jobs per run, median wall {:.3} s",
        sz.sim_seconds,
        last.events,
        last.jobs,
        last.events as f64 / median(ev.clone())
    );
    metrics.push(throughput("sim.events_per_sec", median(ev), "events/s", &note));
    metrics.push(throughput("sim.jobs_per_sec", median(jobs), "jobs/s", "same runs as sim.events_per_sec"));
    Ok(metrics)
}

fn pin_note(tempi: &[String], peer: &[String]) -> Option<String> {
    let mut parts = Vec::new();
    if !tempi.is_empty() {
        parts.push(format!("tempi: {}", tempi.join("; ")));
    }
    if !peer.is_empty() {
        parts.push(format!("peer could not pin: {}", peer.join("; ")));
    }
    (!parts.is_empty()).then(|| parts.join(" | "))
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
                [m.name.clone(), fmt_ns(t), m.peer.clone().unwrap_or_default(), fmt_ns(p), format!("{r:.1}x")]
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
    out
}

/// Run every benchmark and print a table, or JSON with `json`.
pub fn run(json: bool, quick: bool) -> Result<(), String> {
    let metrics = measure(quick)?;
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
    fn table_lists_every_metric() {
        let ms = vec![
            compare("switch.roundtrip", 100.0, "p", 5000.0, None),
            throughput("sim.events_per_sec", 1e6, "events/s", "w"),
        ];
        let t = table(&ms);
        assert!(t.contains("switch.roundtrip") && t.contains("50.0x") && t.contains("1.00 M events/s"));
    }
}
