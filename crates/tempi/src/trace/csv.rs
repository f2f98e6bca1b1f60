//! Per-job CSV export: one row per job read back from a finished trace ([`to_csv`]), and how
//! many jobs the trace lost ([`missing_jobs`]).
//!
//! Everything here reads the finished [`RunOutcome`]: the rows are built from the trace's job
//! records ([`super::report::jobs`]) and execution segments, after the run, so the kernel does
//! nothing more per job for them. Every time is in integer nanoseconds.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Duration;

use super::report::{jobs, JobRecord};
use crate::plain::{JobEnd, ThreadId, TraceKind};
use crate::stats::RunOutcome;
use crate::time::Time;

/// The CSV header: the columns of every row, in order (see `docs/SCENARIOS.md`, "Per-job CSV").
pub const CSV_HEADER: &str = "thread,thread_id,cpu,job,release,start,finish,deadline,response,execution,lateness,\
preemptions,missed,outcome";

/// One job as a CSV row: the trace's [`JobRecord`], the CPU it first ran on and the time it
/// held a CPU.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Runtime, ThreadSpec};
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("w"), |cx| cx.work(Duration::from_millis(2))).unwrap();
/// let rows = tempi::trace::csv::rows(&rt.run().unwrap());
/// assert_eq!((rows[0].cpu, rows[0].execution), (0, Duration::from_millis(2)));
/// assert_eq!(rows[0].outcome(), "met");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRow {
    /// What the trace tells about the job.
    pub record: JobRecord,
    /// The CPU it first ran on; for a job that never ran, its thread's CPU.
    pub cpu: usize,
    /// How long it held a CPU: the sum of its execution segments (a segment that goes on
    /// after the job ended, into the thread's next job, is split there).
    pub execution: Duration,
}

impl JobRow {
    /// The job's outcome, one word: `met` (completed by its deadline, or completed and had
    /// none), `missed` (completed after its deadline), `aborted` (abandoned by its miss
    /// policy or abort time), `killed` (its thread was killed), `panicked` (its thread's body
    /// panicked), `not-started` (its thread could not be started), `running` (had run and had
    /// not ended when the run did) or `waiting` (had never run and had not ended).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::{Runtime, ThreadSpec, Time};
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("w"), |cx| cx.work(Duration::from_millis(5))).unwrap();
    /// let rows = tempi::trace::csv::rows(&rt.run_until(Time::from_millis(1)).unwrap());
    /// assert_eq!(rows[0].outcome(), "running");
    /// ```
    pub fn outcome(&self) -> &'static str {
        let r = &self.record;
        match (r.finish, r.aborted, r.ended_by) {
            (Some(_), true, Some(end)) => match end {
                JobEnd::Killed => "killed",
                JobEnd::Panicked => "panicked",
                JobEnd::NotStarted => "not-started",
            },
            (Some(_), true, None) => "aborted",
            (Some(_), false, _) if r.missed => "missed",
            (Some(_), false, _) => "met",
            (None, _, _) if r.start.is_some() => "running",
            (None, _, _) => "waiting",
        }
    }
}

/// Per thread while the trace is read: the segment it is running, if any.
struct Running {
    since: Time,
    cpu: u16,
    /// The row of the job the running time belongs to; `None` between jobs.
    row: Option<usize>,
}

/// Every job of the trace with its CPU and execution time, in the order of
/// [`super::report::jobs`] (release time, then thread, then job number).
///
/// ```
/// use std::time::Duration;
/// use tempi::{Runtime, ThreadSpec, Time};
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("p").periodic(Duration::from_millis(5)), |cx| cx.work(Duration::from_millis(1))).unwrap();
/// let rows = tempi::trace::csv::rows(&rt.run_until(Time::from_millis(10)).unwrap());
/// assert_eq!(rows.len(), 2);
/// assert_eq!(rows[1].record.start, Some(Time::from_millis(5)));
/// ```
pub fn rows(out: &RunOutcome) -> Vec<JobRow> {
    let cpu_of: HashMap<ThreadId, usize> = out.threads.iter().map(|t| (t.id, t.cpu)).collect();
    let mut rows: Vec<JobRow> = jobs(out)
        .into_iter()
        .map(|record| {
            let cpu = cpu_of.get(&record.thread_id).copied().unwrap_or(0);
            JobRow { record, cpu, execution: Duration::ZERO }
        })
        .collect();
    let index: HashMap<(ThreadId, u32), usize> =
        rows.iter().enumerate().map(|(i, r)| ((r.record.thread_id, r.record.job), i)).collect();
    let mut first_cpu: Vec<Option<u16>> = vec![None; rows.len()];
    let mut running: HashMap<ThreadId, Running> = HashMap::new();
    let mut last_seen: HashMap<u16, Time> = HashMap::new();
    let charge = |rows: &mut Vec<JobRow>, row: Option<usize>, from: Time, to: Time| {
        if let Some(i) = row {
            rows[i].execution += to.saturating_since(from);
        }
    };
    for r in &out.trace {
        last_seen.insert(r.cpu, r.time);
        let row = index.get(&(r.thread, r.job)).copied();
        match r.kind {
            TraceKind::Run => {
                if let Some(old) = running.remove(&r.thread) {
                    // Its stop was lost: the old segment ends here.
                    charge(&mut rows, old.row, old.since, r.time);
                }
                if let Some(i) = row {
                    first_cpu[i].get_or_insert(r.cpu);
                }
                running.insert(r.thread, Running { since: r.time, cpu: r.cpu, row });
            }
            TraceKind::Stop => {
                if let Some(old) = running.remove(&r.thread) {
                    charge(&mut rows, old.row, old.since, r.time);
                }
            }
            TraceKind::JobComplete | TraceKind::JobAbort => {
                if let Some(seg) = running.get_mut(&r.thread).filter(|s| s.row.is_some() && s.row == row) {
                    charge(&mut rows, seg.row, seg.since, r.time);
                    seg.since = r.time.max(seg.since);
                    seg.row = None;
                }
            }
            TraceKind::Release => {
                // A job released while its thread runs between jobs begins at once, without a
                // dispatch of its own.
                if let Some(seg) = running.get_mut(&r.thread).filter(|s| s.row.is_none()) {
                    seg.since = r.time.max(seg.since);
                    seg.row = row;
                    if let Some(i) = row {
                        first_cpu[i].get_or_insert(seg.cpu);
                        let start = rows[i].record.start.map_or(seg.since, |s| s.min(seg.since));
                        rows[i].record.start = Some(start);
                    }
                }
            }
            _ => {}
        }
    }
    for seg in running.into_values() {
        // Still running at the end: to the end of the run, or, when records were lost, to the
        // last record seen on its CPU (as the execution segments are closed).
        let end = if out.trace_dropped > 0 { last_seen.get(&seg.cpu).copied().unwrap_or(out.end) } else { out.end };
        charge(&mut rows, seg.row, seg.since, end.max(seg.since));
    }
    for (row, cpu) in rows.iter_mut().zip(first_cpu) {
        if let Some(c) = cpu {
            row.cpu = usize::from(c);
        }
    }
    rows
}

/// How many jobs the run released that have no row: the jobs whose release record the trace
/// lost (a full trace buffer, [`RunOutcome::trace_dropped`]). Counted per thread against its
/// exact statistics ([`crate::ThreadStats::released`]), so it is 0 when nothing was dropped.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Config, Runtime, ThreadSpec, Time};
/// let mut rt = Runtime::<tempi::clock::VirtualClock>::new(Config::new(1).trace_capacity(4)).unwrap();
/// rt.spawn(ThreadSpec::new("p").periodic(Duration::from_millis(1)), |cx| cx.work(Duration::from_micros(100))).unwrap();
/// let out = rt.run_until(Time::from_millis(10)).unwrap();
/// assert_eq!(tempi::trace::csv::rows(&out).len() as u64 + tempi::trace::csv::missing_jobs(&out), 10);
/// ```
pub fn missing_jobs(out: &RunOutcome) -> u64 {
    let mut listed: HashMap<ThreadId, u64> = HashMap::new();
    for r in out.trace.iter().filter(|r| r.kind == TraceKind::Release) {
        *listed.entry(r.thread).or_default() += 1;
    }
    out.threads.iter().map(|t| t.stats.released.saturating_sub(listed.get(&t.id).copied().unwrap_or(0))).sum()
}

/// A field as CSV has it: quoted (with quotes doubled) when it holds a comma, a quote or a
/// line break.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// The per-job CSV of a run: [`CSV_HEADER`], then one row per job of [`rows`], times in integer
/// nanoseconds, an empty cell where a value does not apply (no start, no finish, no deadline).
///
/// - `response` = `finish − release`, of every job that finished (completed or ended);
/// - `execution`: the time the job held a CPU ([`JobRow::execution`]);
/// - `lateness` = `finish − deadline`, negative when early, of a finished job with a deadline;
/// - `missed`: `true` when its deadline passed with the job unfinished;
/// - `outcome`: [`JobRow::outcome`].
///
/// Lines end with `\n`. A job whose release record the trace lost has no row:
/// [`missing_jobs`] says how many.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Runtime, ThreadSpec, Time};
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("p").periodic(Duration::from_millis(10)).deadline(Duration::from_millis(3)),
///     |cx| cx.work(Duration::from_millis(4))).unwrap();
/// let csv = tempi::trace::csv::to_csv(&rt.run_until(Time::from_millis(10)).unwrap());
/// let id = csv.lines().nth(1).unwrap().split(',').nth(1).unwrap().to_string();
/// assert_eq!(csv.lines().nth(1).unwrap(), format!("p,{id},0,0,0,0,4000000,3000000,4000000,4000000,1000000,0,true,missed"));
/// ```
pub fn to_csv(out: &RunOutcome) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{CSV_HEADER}");
    let ns = |t: Option<Time>| t.map_or_else(String::new, |t| t.as_nanos().to_string());
    for row in rows(out) {
        let r = &row.record;
        let response = r.finish.map_or_else(String::new, |f| f.saturating_since(r.release).as_nanos().to_string());
        let lateness = match (r.finish, r.deadline) {
            (Some(f), Some(d)) => (i128::from(f.as_nanos()) - i128::from(d.as_nanos())).to_string(),
            _ => String::new(),
        };
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            field(&r.thread),
            r.thread_id.index(),
            row.cpu,
            r.job,
            r.release.as_nanos(),
            ns(r.start),
            ns(r.finish),
            ns(r.deadline),
            response,
            row.execution.as_nanos(),
            lateness,
            r.preemptions,
            r.missed,
            row.outcome(),
        );
    }
    s
}
