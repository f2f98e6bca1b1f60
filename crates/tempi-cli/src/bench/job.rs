//! The `job` metrics: the per-job overhead of real time, what [`tempi::Config::job_overhead`]
//! must cover. A periodic thread whose body is `work(wcet)` runs under `SCHED_FIFO`; for each
//! job, the time from its dispatch to its completion minus its WCET is what the runtime and the
//! OS added to it (dispatch, the thread's own calls, interrupts), counted from its first
//! dispatch so that a job held up does not count against the ones queued behind it. Reported as
//! median, 99th percentile and maximum over every job of every run.
//!
//! Owns the measurement and its metrics only.

use std::time::Duration;

use tempi::clock::RealClock;
use tempi::trace::report::jobs;
use tempi::{Config, Runtime, ThreadSpec, Time};

use super::{check_completed, median, percentile, progress, throughput, Metric};

/// `SCHED_FIFO` priority of the dispatcher, as `tempi run --fifo 50` gives.
const JOB_FIFO: i32 = 50;
/// The job's WCET and its whole body, and its period.
const JOB_WCET: Duration = Duration::from_micros(200);
const JOB_PERIOD: Duration = Duration::from_millis(1);

/// First-dispatch-to-completion minus WCET, in ns, of each of `count` jobs after the first (a warm-up).
fn excess_per_job(count: u32) -> Result<Vec<f64>, String> {
    let cfg = Config::new(1).fifo_priority(Some(JOB_FIFO)).trace_capacity(8 * count as usize + 64);
    let mut rt = Runtime::<RealClock>::new(cfg).map_err(|e| e.to_string())?;
    let spec = ThreadSpec::new("job").periodic(JOB_PERIOD).wcet(JOB_WCET).max_jobs(count + 1);
    rt.spawn(spec, |cx| cx.work(JOB_WCET)).map_err(|e| e.to_string())?;
    let out = rt.run_until(Time::ZERO + JOB_PERIOD * (count + 2)).map_err(|e| e.to_string())?;
    check_completed(&out)?;
    let wcet = JOB_WCET.as_nanos() as f64;
    Ok(jobs(&out)
        .into_iter()
        .skip(1)
        // From its first dispatch: a job released while an earlier one was held up waits for
        // it, and that wait is the earlier job's, not its own.
        .filter_map(|j| Some((j.finish? - j.start?.max(j.release)).as_nanos() as f64 - wcet))
        .collect())
}

pub(super) fn job_metrics(reps: usize, jobs_per_run: u32, metrics: &mut Vec<Metric>) -> Result<(), String> {
    progress("job: per-job overhead of real time (SCHED_FIFO 50)");
    let mut all = Vec::new();
    for _ in 0..reps.max(1) {
        all.extend(excess_per_job(jobs_per_run)?);
    }
    if all.is_empty() {
        return Err("job: no job completed".into());
    }
    let max = all.iter().copied().fold(0.0, f64::max);
    let (med, p99) = (median(all.clone()), percentile(all.clone(), 99.0));
    let note = format!(
        "first dispatch to completion minus WCET of a periodic work(wcet) job (WCET {} us, period {} ms), {} jobs: \
         median {:.1} us, p99 {:.1} us, max {:.1} us; Config::MEASURED_JOB_OVERHEAD is {} us",
        JOB_WCET.as_micros(),
        JOB_PERIOD.as_millis(),
        all.len(),
        med / 1e3,
        p99 / 1e3,
        max / 1e3,
        Config::MEASURED_JOB_OVERHEAD.as_micros()
    );
    metrics.push(throughput("job.overhead.median", med, "ns", &note));
    metrics.push(throughput("job.overhead.p99", p99, "ns", "see job.overhead.median"));
    metrics.push(throughput("job.overhead.max", max, "ns", "see job.overhead.median"));
    Ok(())
}
