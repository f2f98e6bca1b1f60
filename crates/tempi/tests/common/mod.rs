//! Helpers shared by the integration tests: turning a run's trace into short, exact strings.
#![allow(dead_code)]

use std::time::Duration;

pub mod counting;
pub mod global;
pub mod handlers;
pub mod kills;
pub mod payloads;
pub mod registered;

use tempi::analysis::TaskSet;
use tempi::clock::VirtualClock;
use tempi::trace::{StopReason, TraceKind};
use tempi::{RunOutcome, Runtime, Time};

/// The least common multiple (a hyperperiod from periods).
pub fn lcm(a: u64, b: u64) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    a / gcd(a, b) * b
}

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// `n` quarter milliseconds: the unit of the cross-checks' generated work.
pub fn quarter_ms(n: u64) -> Duration {
    Duration::from_micros(250 * n)
}

/// Rate-monotonic priorities for tasks of the given periods, all distinct: the shortest period
/// gets the highest (the number of tasks), equal periods are ranked by index.
pub fn rate_monotonic(periods: &[u64]) -> Vec<i32> {
    let mut order: Vec<usize> = (0..periods.len()).collect();
    order.sort_by_key(|&i| (periods[i], i));
    let mut prio = vec![0; periods.len()];
    for (rank, &i) in order.iter().enumerate() {
        prio[i] = (periods.len() - rank) as i32;
    }
    prio
}

/// Milliseconds, without decimals when whole.
pub fn fmt_ms(ns: u64) -> String {
    if ns.is_multiple_of(1_000_000) {
        format!("{}", ns / 1_000_000)
    } else {
        let s = format!("{:.6}", ns as f64 / 1e6);
        s.trim_end_matches('0').to_string()
    }
}

fn name(out: &RunOutcome, r: &tempi::trace::TraceRecord) -> String {
    out.thread(r.thread).map(|t| t.name.clone()).unwrap_or_else(|| "?".into())
}

/// Every execution segment as (cpu, name, start ns, end ns, stop reason); segments still open
/// end at `out.end` with reason `open`.
fn raw_segments(out: &RunOutcome) -> Vec<(usize, String, u64, u64, &'static str)> {
    let mut open: Vec<Option<(String, u64)>> = vec![None; out.cpus];
    let mut segs = Vec::new();
    for r in &out.trace {
        let cpu = r.cpu as usize;
        match r.kind {
            TraceKind::Run => open[cpu] = Some((name(out, r), r.time.as_nanos())),
            TraceKind::Stop => {
                let (n, s) = open[cpu].take().expect("stop without run");
                let reason = StopReason::from_code(r.arg).unwrap().name();
                segs.push((cpu, n, s, r.time.as_nanos(), reason));
            }
            _ => {}
        }
    }
    for (cpu, o) in open.into_iter().enumerate() {
        if let Some((n, s)) = o {
            segs.push((cpu, n, s, out.end.as_nanos(), "open"));
        }
    }
    segs
}

/// Execution segments as `name:start-end:reason`, in trace order.
pub fn segments(out: &RunOutcome) -> Vec<String> {
    raw_segments(out).into_iter().map(|(_, n, s, e, why)| format!("{n}:{}-{}:{why}", fmt_ms(s), fmt_ms(e))).collect()
}

/// Closed segments with CPU prefix, for multi-CPU runs: `cpuN/name:start-end`.
pub fn cpu_segments(out: &RunOutcome) -> Vec<String> {
    raw_segments(out)
        .into_iter()
        .filter(|seg| seg.4 != "open")
        .map(|(cpu, n, s, e, _)| format!("cpu{cpu}/{n}:{}-{}", fmt_ms(s), fmt_ms(e)))
        .collect()
}

/// Instant markers of one kind as `name#job@time`.
pub fn markers(out: &RunOutcome, kind: TraceKind) -> Vec<String> {
    out.trace
        .iter()
        .filter(|r| r.kind == kind)
        .map(|r| format!("{}#{}@{}", name(out, r), r.job, fmt_ms(r.time.as_nanos())))
        .collect()
}

/// Completed jobs in completion order as `name#job`.
pub fn completion_order(out: &RunOutcome) -> Vec<String> {
    out.trace
        .iter()
        .filter(|r| r.kind == TraceKind::JobComplete)
        .map(|r| format!("{}#{}", name(out, r), r.job))
        .collect()
}

/// The process body of the switch tests: it answers every message with itself, fused with its
/// next read (`Flow::Reply`) when `fused`, else with `reply` and `Flow::Continue`; the message
/// with id 0 is answered with `reply` and ends the process.
pub fn echo(cx: &tempi::Ctx<'_>, m: tempi::message::Message, fused: bool) -> tempi::message::Flow {
    use tempi::message::Flow;
    if fused && m.id != 0 {
        return Flow::Reply(m);
    }
    cx.reply(m).expect("reply");
    if m.id == 0 {
        Flow::Stop
    } else {
        Flow::Continue
    }
}

/// Run `rt`, whose threads are `ts`'s tasks (by name), from `latest_phase` (no task starts
/// later) for two hyperperiods and the longest deadline, by when a periodic set that ever
/// misses a deadline has missed one; each task's misses, in `ts`'s order.
pub fn misses_over_two_hyperperiods(rt: Runtime<VirtualClock>, ts: &TaskSet, latest_phase: Duration) -> Vec<u64> {
    let out = rt.run_until(two_hyperperiods_after(ts, latest_phase)).unwrap();
    ts.tasks.iter().map(|t| out.thread_named(&t.name).unwrap().stats.misses).collect()
}

/// The horizon of a run of `ts` whose tasks start by `latest_phase`: two hyperperiods and the
/// longest deadline after it (exclusive, so a deadline at the end is checked too).
pub fn two_hyperperiods_after(ts: &TaskSet, latest_phase: Duration) -> Time {
    let hyper = ts.hyperperiod().unwrap();
    let longest = ts.tasks.iter().map(|t| t.deadline).max().unwrap_or_default();
    Time::ZERO + latest_phase + 2 * hyper + longest + Duration::from_nanos(1)
}

/// Each of the threads `names`' misses and worst response time (zero if none completed), in
/// that order.
pub fn misses_and_worst_responses<S: AsRef<str>>(
    out: &RunOutcome,
    names: impl IntoIterator<Item = S>,
) -> Vec<(u64, Duration)> {
    names
        .into_iter()
        .map(|name| {
            let s = out.thread_named(name.as_ref()).unwrap().stats;
            (s.misses, s.response_max.unwrap_or_default())
        })
        .collect()
}
