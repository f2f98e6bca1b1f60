//! The JSON report and the text summary of a run, and the trace reconstruction the other
//! exporters share.
//!
//! Owns the reading of a finished trace into execution [`Segment`]s and per-job
//! [`JobRecord`]s, the budget events of thread sets ([`budget_events`]), the machine-readable
//! report ([`to_json`]) and the human-readable table ([`summary_text`]). Per-thread figures come from [`crate::ThreadStats`], which the kernel
//! keeps exactly; per-job figures come from the trace and are cut short when the trace buffer
//! overflowed (the report then says `"jobs_truncated": true`).
//!
//! Every function here accepts any [`RunOutcome`], including an empty or a truncated one,
//! without panicking: inconsistent records are skipped rather than trusted.

use std::collections::{BTreeMap, HashMap};

#[cfg(feature = "export")]
use serde::Serialize;

use crate::plain::BudgetEventKind;
use crate::plain::ThreadId;
use crate::plain::{JobEnd, StopReason, TraceKind};
use crate::stats::{RunOutcome, ThreadSummary};
#[cfg(feature = "export")]
use crate::thread::ThreadOutcome;
#[cfg(feature = "export")]
use crate::time::nanos;
use crate::time::Time;

pub use super::summary::summary_text;

/// One stretch of execution: a thread held a CPU from `start` to `end`.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Runtime, ThreadSpec};
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("w"), |cx| cx.work(Duration::from_millis(2))).unwrap();
/// let out = rt.run().unwrap();
/// let seg = tempi::trace::report::segments(&out)[0];
/// assert_eq!(seg.end - seg.start, Duration::from_millis(2));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The thread that ran.
    pub thread: ThreadId,
    /// Its current job number while it ran.
    pub job: u32,
    /// The CPU it ran on.
    pub cpu: u16,
    /// When it was dispatched.
    pub start: Time,
    /// When it stopped (or when the segment was closed for want of a stop record).
    pub end: Time,
    /// Why it stopped; `None` when no stop record closed the segment (still running when the
    /// run ended, records lost to a full buffer, or an unknown stop code).
    pub stop: Option<StopReason>,
}

/// The execution segments of a run, in the order they started.
///
/// A segment with no stop record is closed at `out.end`. When records were dropped, the end of
/// the run is not a credible end for it (the thread may have stopped long before the buffer
/// filled up), so it is closed at the last record seen on its CPU instead.
///
/// ```
/// use std::time::Duration;
/// use tempi::trace::{report, StopReason};
/// use tempi::{Runtime, ThreadSpec};
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("w"), |cx| cx.work(Duration::from_millis(1))).unwrap();
/// let segs = report::segments(&rt.run().unwrap());
/// assert_eq!(segs.len(), 1);
/// assert_eq!(segs[0].stop, Some(StopReason::Exited));
/// ```
pub fn segments(out: &RunOutcome) -> Vec<Segment> {
    let mut segs: Vec<Segment> = Vec::new();
    // Per CPU: the index in `segs` of the segment still running there.
    let mut open: BTreeMap<u16, usize> = BTreeMap::new();
    let mut last_seen: BTreeMap<u16, Time> = BTreeMap::new();
    for r in &out.trace {
        last_seen.insert(r.cpu, r.time);
        match r.kind {
            TraceKind::Run => {
                // A run with one already open means its stop was lost; end the old one here
                // rather than let two segments overlap on one CPU.
                if let Some(i) = open.remove(&r.cpu) {
                    segs[i].end = r.time.max(segs[i].start);
                }
                open.insert(r.cpu, segs.len());
                segs.push(Segment { thread: r.thread, job: r.job, cpu: r.cpu, start: r.time, end: r.time, stop: None });
            }
            TraceKind::Stop => {
                if let Some(i) = open.remove(&r.cpu) {
                    segs[i].end = r.time.max(segs[i].start);
                    segs[i].stop = StopReason::from_code(r.arg);
                }
            }
            _ => {}
        }
    }
    for (cpu, i) in open {
        let end = if out.trace_dropped > 0 { last_seen.get(&cpu).copied().unwrap_or(out.end) } else { out.end };
        segs[i].end = end.max(segs[i].start);
    }
    segs
}

/// What the trace tells about one job of one thread.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Runtime, ThreadSpec, Time};
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("w"), |cx| cx.work(Duration::from_millis(2))).unwrap();
/// let job = &tempi::trace::report::jobs(&rt.run().unwrap())[0];
/// assert_eq!(job.finish, Some(Time::from_millis(2)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRecord {
    /// The thread's name (`T<slot>` if the run does not know the thread).
    pub thread: String,
    /// The thread.
    pub thread_id: ThreadId,
    /// Job number, from 0.
    pub job: u32,
    /// When the job was released.
    pub release: Time,
    /// When it first ran; `None` if it never did.
    pub start: Option<Time>,
    /// When it completed or was abandoned; `None` if neither happened within the trace.
    pub finish: Option<Time>,
    /// Its absolute deadline, if it had one.
    pub deadline: Option<Time>,
    /// Whether its deadline passed with the job unfinished.
    pub missed: bool,
    /// Whether it was abandoned rather than completed (by the miss policy, the abort time,
    /// or the end of its thread: see `ended_by`).
    pub aborted: bool,
    /// When the end of its thread cut it short (a kill, a panic of the body), which; `None`
    /// for a job that completed, was abandoned by its miss policy or abort time, or had not
    /// ended when the run did.
    pub ended_by: Option<JobEnd>,
    /// How many times it was preempted.
    pub preemptions: u32,
}

/// Every job released in the trace, ordered by release time, then thread, then job number.
///
/// Only jobs whose release record survived are listed; see [`RunOutcome::trace_dropped`].
///
/// ```
/// use std::time::Duration;
/// use tempi::{Runtime, ThreadSpec, Time};
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("p").periodic(Duration::from_millis(5)), |cx| cx.work(Duration::from_millis(1))).unwrap();
/// let jobs = tempi::trace::report::jobs(&rt.run_until(Time::from_millis(10)).unwrap());
/// assert_eq!(jobs.len(), 2);
/// assert_eq!(jobs[1].release, Time::from_millis(5));
/// assert_eq!(jobs[1].deadline, Some(Time::from_millis(10)));
/// ```
pub fn jobs(out: &RunOutcome) -> Vec<JobRecord> {
    let mut list: Vec<JobRecord> = Vec::new();
    let mut index: HashMap<(ThreadId, u32), usize> = HashMap::new();
    let names = names(out);
    for r in &out.trace {
        if r.kind == TraceKind::Release {
            index.insert((r.thread, r.job), list.len());
            list.push(JobRecord {
                thread: display_name(&names, r.thread),
                thread_id: r.thread,
                job: r.job,
                release: r.time,
                start: None,
                finish: None,
                deadline: (r.arg != u64::MAX).then(|| Time::from_nanos(r.arg)),
                missed: false,
                aborted: false,
                ended_by: None,
                preemptions: 0,
            });
            continue;
        }
        let Some(&i) = index.get(&(r.thread, r.job)) else { continue };
        let job = &mut list[i];
        match r.kind {
            TraceKind::Run if job.start.is_none() && r.time >= job.release => job.start = Some(r.time),
            TraceKind::Stop if StopReason::from_code(r.arg) == Some(StopReason::Preempted) => {
                job.preemptions = job.preemptions.saturating_add(1);
            }
            TraceKind::JobComplete => job.finish = Some(r.time),
            TraceKind::JobAbort => {
                job.finish = Some(r.time);
                job.aborted = true;
                job.ended_by = JobEnd::from_code(r.arg);
            }
            TraceKind::Miss => job.missed = true,
            _ => {}
        }
    }
    list.sort_by_key(|j| (j.release, j.thread_id, j.job));
    list
}

/// Thread names by id, so exporters walking a long trace need not search `out.threads` for
/// every record.
pub(crate) fn names(out: &RunOutcome) -> HashMap<ThreadId, &str> {
    let mut map = HashMap::with_capacity(out.threads.len());
    for t in &out.threads {
        // Ids are unique per run; should one repeat, the first summary wins, as in
        // `RunOutcome::thread`.
        map.entry(t.id).or_insert(t.name.as_str());
    }
    map
}

/// The name the run gave a thread, or `T<slot>` when it names no such thread.
pub(crate) fn display_name(names: &HashMap<ThreadId, &str>, id: ThreadId) -> String {
    names.get(&id).map_or_else(|| format!("T{}", id.index()), |n| (*n).to_string())
}

/// A budget event read back from the trace: a thread set's budget ran out or got time back.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Budget, BudgetEventKind, Runtime, ThreadSpec, Time};
/// let ms = Duration::from_millis;
/// let mut rt = Runtime::simulated(1);
/// let t = rt.spawn(ThreadSpec::new("greedy"), move |cx| cx.work(ms(3))).unwrap();
/// let set = rt.create_set("box", 0).unwrap();
/// rt.add_to_set(set, t).unwrap();
/// rt.set_budget(set, Budget::new(ms(2))).unwrap();
/// let events = tempi::trace::report::budget_events(&rt.run().unwrap());
/// assert_eq!(events[0].set, "box");
/// assert_eq!((events[0].kind, events[0].time, events[0].value), (BudgetEventKind::Exhausted, Time::from_millis(2), ms(2)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetRecord {
    /// The set's name (`S<index>` if the run does not know the set).
    pub set: String,
    /// The set's index ([`crate::SetId::index`]).
    pub set_index: usize,
    /// Exhausted or replenished.
    pub kind: BudgetEventKind,
    /// When.
    pub time: Time,
    /// For an exhaustion, the set's group clock (CPU time consumed so far); for a
    /// replenishment, the budget left after it.
    pub value: std::time::Duration,
}

/// Every budget exhaustion and replenishment in the trace, in trace order.
///
/// A constant bandwidth server refills at the instant it runs out; that refill is counted in
/// [`crate::SetSummary::replenishments`] but leaves no record of its own, so only its
/// exhaustion is listed.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Budget, Runtime, ThreadSpec, Time};
/// let ms = Duration::from_millis;
/// let mut rt = Runtime::simulated(1);
/// let t = rt.spawn(ThreadSpec::new("busy"), move |cx| cx.work(ms(5))).unwrap();
/// let set = rt.create_set("srv", 0).unwrap();
/// rt.add_to_set(set, t).unwrap();
/// rt.set_budget(set, Budget::deferrable_server(ms(2), ms(10))).unwrap();
/// let events = tempi::trace::report::budget_events(&rt.run().unwrap());
/// let times: Vec<u64> = events.iter().map(|e| e.time.as_nanos() / 1_000_000).collect();
/// assert_eq!(times, [2, 10, 12, 20]);
/// ```
pub fn budget_events(out: &RunOutcome) -> Vec<BudgetRecord> {
    let sets = set_names(out);
    out.trace
        .iter()
        .filter_map(|r| {
            let kind = match r.kind {
                TraceKind::BudgetExhausted => BudgetEventKind::Exhausted,
                TraceKind::BudgetReplenished => BudgetEventKind::Replenished,
                _ => return None,
            };
            let index = r.job as usize;
            Some(BudgetRecord {
                set: display_set(&sets, index),
                set_index: index,
                kind,
                time: r.time,
                value: std::time::Duration::from_nanos(r.arg),
            })
        })
        .collect()
}

/// Set names by index, for the exporters that label budget records.
pub(crate) fn set_names(out: &RunOutcome) -> HashMap<usize, &str> {
    let mut map = HashMap::with_capacity(out.sets.len());
    for s in &out.sets {
        map.entry(s.id.index()).or_insert(s.name.as_str());
    }
    map
}

/// The name the run gave a set, or `S<index>` when it names no such set.
pub(crate) fn display_set(sets: &HashMap<usize, &str>, index: usize) -> String {
    sets.get(&index).map_or_else(|| format!("S{index}"), |n| (*n).to_string())
}

/// Mean response time in ns, computed without [`crate::ThreadStats::mean_response`], whose
/// `u32` divisor cannot represent every job count.
pub(super) fn mean_response_ns(t: &ThreadSummary) -> Option<u64> {
    let n = t.stats.completed;
    (n > 0).then(|| (t.stats.response_total.as_nanos() / u128::from(n)).try_into().unwrap_or(u64::MAX))
}

#[cfg(feature = "export")]
fn outcome_text(o: &Option<ThreadOutcome>) -> Option<String> {
    match o {
        None => None,
        Some(ThreadOutcome::Completed) => Some("completed".into()),
        Some(ThreadOutcome::Panicked(msg)) => Some(format!("panicked: {msg}")),
        Some(ThreadOutcome::Killed) => Some("killed".into()),
        Some(ThreadOutcome::NotStarted(why)) => Some(format!("not started: {why}")),
    }
}

#[cfg(feature = "export")]
#[derive(Serialize)]
struct ReportJson<'a> {
    mode: &'static str,
    scheduler: &'a str,
    cpus: usize,
    end: u64,
    trace_dropped: u64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    jobs_truncated: bool,
    warnings: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    migrations: Option<u64>,
    /// Real time: requests to another CPU refused there (see `CrossCpuStats`).
    #[serde(skip_serializing_if = "is_zero")]
    cross_cpu_refused: u64,
    /// Real time: posts that found another CPU's queue full.
    #[serde(skip_serializing_if = "is_zero")]
    cross_cpu_queue_full: u64,
    /// Real time: requests still queued when the run ended.
    #[serde(skip_serializing_if = "is_zero")]
    cross_cpu_pending_at_end: u64,
    /// Real time: waits on another CPU's condition variable or semaphore refused for want of
    /// room for a proxy there.
    #[serde(skip_serializing_if = "is_zero")]
    cross_cpu_proxies_full: u64,
    /// Real time: waiters of other CPUs still queued when the run ended.
    #[serde(skip_serializing_if = "is_zero")]
    cross_cpu_proxies_at_end: u64,
    /// Real time: answers to spawns and joins on another CPU that came after their thread gave up.
    #[serde(skip_serializing_if = "is_zero")]
    cross_cpu_stale_answers: u64,
    /// Releases asked by timing events that could not be carried out.
    #[serde(skip_serializing_if = "is_zero")]
    event_releases_refused: u64,
    /// Messages refused by busy handlers' full queues.
    #[serde(skip_serializing_if = "is_zero")]
    handler_queue_full: u64,
    /// Timed messages still waiting for their instant when the run ended.
    #[serde(skip_serializing_if = "is_zero")]
    timed_messages_pending_at_end: u64,
    /// Messages still in a thread's or a handler's queue or save queues when the run ended.
    #[serde(skip_serializing_if = "is_zero")]
    messages_queued_at_end: u64,
    /// Messages still queued for a thread when it ended before the run did.
    #[serde(skip_serializing_if = "is_zero")]
    messages_unserved_at_receiver_end: u64,
    /// Messages handlers did not serve because they had panicked.
    #[serde(skip_serializing_if = "is_zero")]
    messages_unserved_by_panicked_handler: u64,
    /// Timed messages refused at their instant, by cause (see `MessageStats`).
    #[serde(skip_serializing_if = "is_zero")]
    timed_messages_refused_queue_full: u64,
    #[serde(skip_serializing_if = "is_zero")]
    timed_messages_refused_by_policy: u64,
    #[serde(skip_serializing_if = "is_zero")]
    timed_messages_refused_recipient_ended: u64,
    #[serde(skip_serializing_if = "is_zero")]
    timed_messages_refused_cpu_queue_full: u64,
    #[serde(skip_serializing_if = "is_zero")]
    timed_messages_refused_pool_full: u64,
    /// Real time: the names of the OS-backed threads the end of the run left stopped.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    os_backed_left_stopped: Vec<String>,
    /// Real time: per CPU, the nanoseconds its dispatcher spent in the runtime's own code
    /// ([`RunOutcome::kernel_time`]); absent when all are zero (virtual time).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    kernel_time_ns: Vec<u64>,
    /// Deadline misses by hard threads, the faults of the run ([`RunOutcome::hard_misses`]).
    hard_misses: u64,
    threads: Vec<ThreadJson<'a>>,
    sets: Vec<SetJson<'a>>,
    jobs: Vec<JobJson>,
    budget_events: Vec<BudgetJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    admissions: Option<&'a [super::admissions::AdmissionRecord]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    admission_events: Option<&'a [super::admissions::AdmissionEventRecord]>,
}

#[cfg(feature = "export")]
#[derive(Serialize)]
struct SetJson<'a> {
    id: usize,
    name: &'a str,
    members: Vec<String>,
    cpu_time: u64,
    exhaustions: u64,
    replenishments: u64,
    destroyed: bool,
    /// Per thread that was ever a member: exhaustions while it ran, overruns, overrun time.
    per_member: Vec<MemberJson>,
    /// Exhaustions at which no member was running, when there were any.
    #[serde(skip_serializing_if = "is_zero")]
    exhaustions_idle: u64,
}

/// One member's share of its set's budget events (`"thread": "(others)"` for the threads
/// past the set's room for counts).
#[cfg(feature = "export")]
#[derive(Serialize)]
struct MemberJson {
    thread: String,
    exhaustions: u64,
    overruns: u64,
    overrun_time: u64,
}

#[cfg(feature = "export")]
#[derive(Serialize)]
struct BudgetJson {
    set: String,
    kind: &'static str,
    time: u64,
    value: u64,
}

#[cfg(feature = "export")]
#[derive(Serialize)]
struct ThreadJson<'a> {
    id: usize,
    name: &'a str,
    cpu: usize,
    /// `"hard"` or `"soft"`: whether this thread's misses are faults of the run.
    criticality: &'static str,
    jobs: u64,
    completed: u64,
    aborted: u64,
    misses: u64,
    skipped: u64,
    overflows: u64,
    /// Releases asked after the thread's last job (`max_jobs`), when there were any.
    #[serde(skip_serializing_if = "Option::is_none")]
    beyond_limit: Option<u64>,
    preemptions: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    migrations: Option<u64>,
    response_min: Option<u64>,
    response_mean: Option<u64>,
    response_max: Option<u64>,
    cpu_time: u64,
    /// CPU time spent spinning for global locks, when there was any.
    #[serde(skip_serializing_if = "Option::is_none")]
    spin_time: Option<u64>,
    outcome: Option<String>,
    /// Per job, in ns: response time, start latency, tardiness and execution time, each
    /// with its percentiles and its histogram's non-empty buckets (a metric with no values
    /// is left out).
    distributions: BTreeMap<&'static str, HistogramJson>,
    /// Largest minus smallest response time of the completed jobs (ns); null before one.
    response_jitter: Option<u64>,
    /// Largest minus smallest start latency of the jobs that ran (ns); null before one.
    start_jitter: Option<u64>,
}

/// One histogram in the JSON report (ns).
#[cfg(feature = "export")]
#[derive(Serialize)]
struct HistogramJson {
    count: u64,
    min: Option<u64>,
    mean: Option<u64>,
    p50: Option<u64>,
    p90: Option<u64>,
    p99: Option<u64>,
    #[serde(rename = "p99.9")]
    p99_9: Option<u64>,
    max: Option<u64>,
    /// `[lowest, highest, count]` per non-empty bucket, lowest first.
    buckets: Vec<[u64; 3]>,
}

#[cfg(feature = "export")]
fn histogram_json(h: &crate::Histogram) -> HistogramJson {
    HistogramJson {
        count: h.count(),
        min: h.min().map(nanos),
        mean: h.mean().map(nanos),
        p50: h.percentile(50.0).map(nanos),
        p90: h.percentile(90.0).map(nanos),
        p99: h.percentile(99.0).map(nanos),
        p99_9: h.percentile(99.9).map(nanos),
        max: h.max().map(nanos),
        buckets: h.buckets().map(|(lo, hi, n)| [lo, hi, n]).collect(),
    }
}

/// The thread's distributions by name, those with values only.
#[cfg(feature = "export")]
fn distributions_json(d: &crate::ThreadDistributions) -> BTreeMap<&'static str, HistogramJson> {
    [
        ("response", &d.response),
        ("start_latency", &d.start_latency),
        ("tardiness", &d.tardiness),
        ("execution", &d.execution),
    ]
    .into_iter()
    .filter(|(_, h)| h.count() > 0)
    .map(|(name, h)| (name, histogram_json(h)))
    .collect()
}

#[cfg(feature = "export")]
#[derive(Serialize)]
struct JobJson {
    thread: String,
    thread_id: usize,
    job: u32,
    release: u64,
    start: Option<u64>,
    finish: Option<u64>,
    deadline: Option<u64>,
    missed: bool,
    aborted: bool,
    /// `"kill"` or `"panic"` when the end of its thread cut the job short.
    #[serde(skip_serializing_if = "Option::is_none")]
    ended_by: Option<&'static str>,
    preemptions: u32,
}

/// The JSON report of a run: run settings, per-thread statistics, per-set CPU time and budget
/// counts, per-job records and budget events, every time in integer nanoseconds.
///
/// A set's `members` are the threads still in it when the run ended (a thread that ended,
/// for instance killed by its budget, has left it). A budget event's `value` is the set's
/// consumed CPU time for `"exhausted"`, the budget left for `"replenished"`. A run under a
/// global policy also has `migrations`, the total, at the top and in each thread's row
/// ([`crate::ThreadStats::migrations`]); other runs have neither key. A real-time run whose
/// end left OS-backed threads stopped lists their names in `os_backed_left_stopped`
/// ([`RunOutcome::os_backed_left_stopped`]); other runs have no such key. A real-time run
/// has `kernel_time_ns`, per CPU the time its dispatcher spent in the runtime's own code
/// ([`RunOutcome::kernel_time`]); a virtual-time run, where it is zero, has no such key.
/// Each thread's row has its `criticality`, `"hard"` or `"soft"`, and `hard_misses`, at the
/// top, counts the misses of hard threads: the faults of the run ([`RunOutcome::hard_misses`]).
///
/// ```
/// use std::time::Duration;
/// use tempi::{Runtime, ThreadSpec};
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("w"), |cx| cx.work(Duration::from_millis(2))).unwrap();
/// let json = tempi::trace::report::to_json(&rt.run().unwrap());
/// let v: serde_json::Value = serde_json::from_str(&json).unwrap();
/// assert_eq!(v["threads"][0]["cpu_time"], 2_000_000);
/// assert_eq!(v["jobs"][0]["finish"], 2_000_000);
/// assert_eq!(v["threads"][0]["criticality"], "hard");
/// assert_eq!(v["hard_misses"], 0);
/// ```
#[cfg(feature = "export")]
pub fn to_json(out: &RunOutcome) -> String {
    render(out, None, None)
}

/// [`to_json`], with the admission keys when a run used admission.
#[cfg(feature = "export")]
pub(super) fn render(
    out: &RunOutcome,
    admissions: Option<&[super::admissions::AdmissionRecord]>,
    admission_events: Option<&[super::admissions::AdmissionEventRecord]>,
) -> String {
    let threads = out
        .threads
        .iter()
        .map(|t| ThreadJson {
            id: t.id.index(),
            name: &t.name,
            cpu: t.cpu,
            criticality: t.criticality.name(),
            jobs: t.stats.released,
            completed: t.stats.completed,
            aborted: t.stats.aborted,
            misses: t.stats.misses,
            skipped: t.stats.skipped,
            overflows: t.stats.overflows,
            beyond_limit: (t.stats.beyond_limit > 0).then_some(t.stats.beyond_limit),
            preemptions: t.stats.preemptions,
            migrations: out.global.then_some(t.stats.migrations),
            response_min: t.stats.response_min.map(nanos),
            response_mean: mean_response_ns(t),
            response_max: t.stats.response_max.map(nanos),
            cpu_time: nanos(t.stats.cpu_time),
            spin_time: (!t.stats.spin_time.is_zero()).then(|| nanos(t.stats.spin_time)),
            outcome: outcome_text(&t.outcome),
            distributions: distributions_json(&t.distributions),
            response_jitter: t.distributions.response_jitter().map(nanos),
            start_jitter: t.distributions.start_jitter().map(nanos),
        })
        .collect();
    let jobs = jobs(out)
        .into_iter()
        .map(|j| JobJson {
            thread: j.thread,
            thread_id: j.thread_id.index(),
            job: j.job,
            release: j.release.as_nanos(),
            start: j.start.map(Time::as_nanos),
            finish: j.finish.map(Time::as_nanos),
            deadline: j.deadline.map(Time::as_nanos),
            missed: j.missed,
            aborted: j.aborted,
            ended_by: j.ended_by.map(JobEnd::name),
            preemptions: j.preemptions,
        })
        .collect();
    let names_by_id = names(out);
    let sets = out
        .sets
        .iter()
        .map(|s| SetJson {
            id: s.id.index(),
            name: &s.name,
            members: s.members.iter().map(|&m| display_name(&names_by_id, m)).collect(),
            cpu_time: nanos(s.cpu_time),
            exhaustions: s.exhaustions,
            replenishments: s.replenishments,
            destroyed: s.destroyed,
            per_member: s
                .per_member
                .iter()
                .map(|m| MemberJson {
                    thread: m.thread.map_or_else(|| String::from("(others)"), |id| display_name(&names_by_id, id)),
                    exhaustions: m.exhaustions,
                    overruns: m.overruns,
                    overrun_time: nanos(m.overrun_time),
                })
                .collect(),
            exhaustions_idle: s.exhaustions_idle,
        })
        .collect();
    let budget_events = budget_events(out)
        .into_iter()
        .map(|e| BudgetJson {
            set: e.set,
            kind: budget_kind_name(e.kind),
            time: e.time.as_nanos(),
            value: nanos(e.value),
        })
        .collect();
    let report = ReportJson {
        mode: out.mode.name(),
        scheduler: &out.scheduler,
        cpus: out.cpus,
        end: out.end.as_nanos(),
        trace_dropped: out.trace_dropped,
        jobs_truncated: out.trace_dropped > 0,
        warnings: &out.warnings,
        migrations: out.global.then(|| out.migrations()),
        cross_cpu_refused: out.cross_cpu.refused,
        cross_cpu_queue_full: out.cross_cpu.queue_full,
        cross_cpu_pending_at_end: out.cross_cpu.pending_at_end,
        cross_cpu_proxies_full: out.cross_cpu.proxies_full,
        cross_cpu_proxies_at_end: out.cross_cpu.proxies_at_end,
        cross_cpu_stale_answers: out.cross_cpu.stale_answers,
        event_releases_refused: out.event_releases_refused,
        handler_queue_full: out.messages.handler_queue_full,
        timed_messages_pending_at_end: out.messages.timed_pending_at_end,
        messages_queued_at_end: out.messages.queued_at_end,
        messages_unserved_at_receiver_end: out.messages.unserved_at_receiver_end,
        messages_unserved_by_panicked_handler: out.messages.handler_panicked,
        timed_messages_refused_queue_full: out.messages.timed_refused_queue_full,
        timed_messages_refused_by_policy: out.messages.timed_refused_by_policy,
        timed_messages_refused_recipient_ended: out.messages.timed_refused_recipient_ended,
        timed_messages_refused_cpu_queue_full: out.messages.timed_refused_cpu_queue_full,
        timed_messages_refused_pool_full: out.messages.timed_refused_pool_full,
        os_backed_left_stopped: {
            let names_by_id = names(out);
            out.os_backed_left_stopped.iter().map(|&id| display_name(&names_by_id, id)).collect()
        },
        kernel_time_ns: if out.kernel_time.iter().any(|k| !k.is_zero()) {
            out.kernel_time.iter().map(|k| u64::try_from(k.as_nanos()).unwrap_or(u64::MAX)).collect()
        } else {
            Vec::new()
        },
        hard_misses: out.hard_misses(),
        threads,
        sets,
        jobs,
        budget_events,
        admissions,
        admission_events,
    };
    // Plain data with string keys: serialising it cannot fail, but an empty object beats a panic.
    serde_json::to_string_pretty(&report).unwrap_or_else(|_| String::from("{}"))
}

/// The report's word for a budget event kind.
#[cfg(feature = "export")]
fn budget_kind_name(kind: BudgetEventKind) -> &'static str {
    match kind {
        BudgetEventKind::Exhausted => "exhausted",
        BudgetEventKind::Replenished => "replenished",
    }
}

/// Serde: leave a zero count out of the report.
#[cfg(feature = "export")]
fn is_zero(n: &u64) -> bool {
    *n == 0
}
