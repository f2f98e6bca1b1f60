//! The `sim.events_per_sec` and `sim.jobs_per_sec` metrics: throughput of the virtual-time
//! simulator on a fixed periodic workload ([`SIM_WORKLOAD`]).
//!
//! Owns the workload and the event count it is measured in. It has no peer and must not use
//! a real-time clock.

use std::hint::black_box;
use std::time::{Duration, Instant};

use tempi::clock::VirtualClock;
use tempi::policy::sched::Edf;
use tempi::{Config, Runtime, ThreadSpec, Time};

use super::{median, progress, throughput, Metric, Sizes};

/// Number of periodic threads in the simulator workload.
const SIM_THREADS: u64 = 20;

/// Human description of the simulator workload, printed with its results.
pub(super) const SIM_WORKLOAD: &str =
    "20 periodic threads on 1 CPU, EDF, periods 1..20 ms, wcet = 0.045 x period (U = 0.9), each job cx.work(wcet)";

struct SimSample {
    events: u64,
    jobs: u64,
    wall: Duration,
}

/// The trace records a run of the [`SIM_WORKLOAD`] writes, counted from the statistics the
/// kernel keeps: a spawn per thread, a release and a completion per job, and a run and a stop
/// per dispatch (each completed job is dispatched once, and once more after each preemption).
/// A thread still running when the run ends has a run record more, which the statistics do
/// not show: the count is exact to one record per CPU. The measured runs do not record a
/// trace; a recorded warm-up run checks this count against its trace.
fn sim_events(out: &tempi::RunOutcome) -> u64 {
    out.threads
        .iter()
        .map(|t| 1 + t.stats.released + t.stats.completed + 2 * (t.stats.completed + t.stats.preemptions))
        .sum()
}

/// Run the [`SIM_WORKLOAD`] for `seconds` of virtual time and time `run_until`; with
/// `traced`, record the trace and check [`sim_events`] against it.
fn sim_run(seconds: u64, traced: bool) -> Result<SimSample, String> {
    // Jobs per simulated second: sum over periods of 1000 / period_ms (about 3598). A job
    // writes a release, run, stop and completion record, plus a run/stop pair per preemption;
    // twelve per job leaves ample room.
    let jobs_per_sec: u64 = (1..=SIM_THREADS).map(|p| 1000 / p + 1).sum();
    let capacity = if traced { (seconds * jobs_per_sec * 12 + 4096) as usize } else { 0 };
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
    let events = sim_events(&out);
    if traced && !(events..=events + out.cpus as u64).contains(&(out.trace.len() as u64)) {
        return Err(format!(
            "simulator benchmark: {events} events counted from the statistics, {} trace records",
            out.trace.len()
        ));
    }
    // Freeing the trace is not part of the measurement.
    drop(black_box(out));
    Ok(SimSample { events, jobs, wall })
}

pub(super) fn sim_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    progress(&format!("sim: {} simulated s of the workload x {}", sz.sim_seconds, sz.reps));
    // Warm-up on a shorter run, recorded to check the event count, then keep every
    // repetition, untraced as `tempi simulate` runs without trace outputs, and take medians
    // of both rates.
    sim_run(sz.sim_seconds.div_ceil(5), true)?;
    let mut ev = Vec::with_capacity(sz.reps);
    let mut jobs = Vec::with_capacity(sz.reps);
    let mut last = None;
    for _ in 0..sz.reps {
        let s = sim_run(sz.sim_seconds, false)?;
        let secs = s.wall.as_secs_f64().max(1e-9);
        ev.push(s.events as f64 / secs);
        jobs.push(s.jobs as f64 / secs);
        last = Some(s);
    }
    let last = last.expect("at least one repetition");
    let note = format!(
        "{SIM_WORKLOAD}; trace off; {} simulated s per run, {} events (the trace records a traced run \
         writes) and {} jobs per run, median wall {:.3} s",
        sz.sim_seconds,
        last.events,
        last.jobs,
        last.events as f64 / median(ev.clone())
    );
    metrics.push(throughput("sim.events_per_sec", median(ev), "events/s", &note));
    metrics.push(throughput("sim.jobs_per_sec", median(jobs), "jobs/s", "same runs as sim.events_per_sec"));
    Ok(())
}
