//! Helpers shared by the integration tests: turning a run's trace into short, exact strings.
#![allow(dead_code)]

use std::time::Duration;

use tempi::trace::{StopReason, TraceKind};
use tempi::RunOutcome;

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// Milliseconds, without decimals when whole.
pub fn fmt_ms(ns: u64) -> String {
    if ns % 1_000_000 == 0 {
        format!("{}", ns / 1_000_000)
    } else {
        let s = format!("{:.6}", ns as f64 / 1e6);
        s.trim_end_matches('0').to_string()
    }
}

fn name(out: &RunOutcome, r: &tempi::trace::TraceRecord) -> String {
    out.thread(r.thread).map(|t| t.name.clone()).unwrap_or_else(|| "?".into())
}

/// Execution segments as `name:start-end:reason`, in trace order. Open segments end at `out.end`
/// with reason `open`.
pub fn segments(out: &RunOutcome) -> Vec<String> {
    let mut open: Vec<Option<(String, u64)>> = vec![None; out.cpus];
    let mut segs = Vec::new();
    for r in &out.trace {
        let cpu = r.cpu as usize;
        match r.kind {
            TraceKind::Run => open[cpu] = Some((name(out, r), r.time.as_nanos())),
            TraceKind::Stop => {
                let (n, s) = open[cpu].take().expect("stop without run");
                let reason = StopReason::from_code(r.arg).unwrap().name();
                segs.push(format!("{n}:{}-{}:{reason}", fmt_ms(s), fmt_ms(r.time.as_nanos())));
            }
            _ => {}
        }
    }
    for (n, s) in open.into_iter().flatten() {
        segs.push(format!("{n}:{}-{}:open", fmt_ms(s), fmt_ms(out.end.as_nanos())));
    }
    segs
}

/// Segments with CPU prefix, for multi-CPU runs: `cpuN/name:start-end`.
pub fn cpu_segments(out: &RunOutcome) -> Vec<String> {
    let mut open: Vec<Option<(String, u64)>> = vec![None; out.cpus];
    let mut segs = Vec::new();
    for r in &out.trace {
        let cpu = r.cpu as usize;
        match r.kind {
            TraceKind::Run => open[cpu] = Some((name(out, r), r.time.as_nanos())),
            TraceKind::Stop => {
                let (n, s) = open[cpu].take().expect("stop without run");
                segs.push(format!("cpu{cpu}/{n}:{}-{}", fmt_ms(s), fmt_ms(r.time.as_nanos())));
            }
            _ => {}
        }
    }
    segs
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
