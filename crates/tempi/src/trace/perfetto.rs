//! Chrome trace-event JSON of a run, for <https://ui.perfetto.dev> or `chrome://tracing`.
//!
//! Owns the mapping from the trace to trace events: one process per CPU (`pid` = CPU index,
//! named `CPU n`), one track per thread (`tid` = slot index + 1, named after the thread), a
//! `timers` track (`tid` 0) per CPU that ran timing events or handled budget events.
//! Execution segments become complete (`"X"`) events; releases, completions, aborts, misses,
//! skipped releases, thread ends and timing events become thread-scoped instant (`"i"`)
//! events. Budget events are instants on the `timers` track of the set's CPU, named
//! `budget exhausted: SET` / `budget replenished: SET` so they read without opening them.
//!
//! Timestamps are microseconds written with exactly three decimals, so nanoseconds survive
//! without going through floating point, and the same outcome always gives the same bytes.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::plain::ThreadId;
use crate::plain::{StopReason, TraceKind};
use crate::stats::RunOutcome;
use crate::trace::report::{display_name, display_set, names, segments, set_names};

/// The `tid` of the per-CPU track that shows timing events; thread tracks start at 1.
const TIMER_TID: u64 = 0;

/// A JSON string literal.
fn js(s: &str) -> String {
    // Serialising a `str` cannot fail; the fallback only keeps the output well-formed.
    serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\""))
}

/// Nanoseconds as a JSON number of microseconds, exact to the nanosecond.
fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1_000, ns % 1_000)
}

fn tid(id: ThreadId) -> u64 {
    id.index() as u64 + 1
}

/// A deadline-like `arg` (`u64::MAX` = none) as a JSON value.
fn opt_ns(arg: u64) -> String {
    if arg == u64::MAX {
        String::from("null")
    } else {
        arg.to_string()
    }
}

/// The run as Chrome trace-event JSON, loadable in ui.perfetto.dev.
///
/// The result is `{"traceEvents":[...],"displayTimeUnit":"ns"}` with one event per line.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Runtime, ThreadSpec, Time};
/// let ms = Duration::from_millis;
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("p").periodic(ms(5)), move |cx| cx.work(ms(1))).unwrap();
/// let out = rt.run_until(Time::from_millis(10)).unwrap();
/// let json = tempi::trace::perfetto::to_json(&out);
/// let v: serde_json::Value = serde_json::from_str(&json).unwrap();
/// let runs = v["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X").count();
/// assert_eq!(runs, 2);
/// assert!(json.contains(r#""ts":5000.000"#));
/// ```
pub fn to_json(out: &RunOutcome) -> String {
    let names = names(out);
    let name_of = |id: ThreadId| js(&display_name(&names, id));

    // Metadata first: Perfetto names tracks from it wherever it appears, but readers of the
    // raw file find it more easily at the top.
    let mut meta: Vec<String> = Vec::new();
    let mut cpus: BTreeSet<u64> = (0..out.cpus as u64).collect();
    cpus.extend(out.trace.iter().map(|r| u64::from(r.cpu)));
    cpus.extend(out.threads.iter().map(|t| t.cpu as u64));
    for &cpu in &cpus {
        let label = js(&format!("CPU {cpu}"));
        meta.push(format!(r#"{{"name":"process_name","ph":"M","pid":{cpu},"tid":0,"args":{{"name":{label}}}}}"#));
        meta.push(format!(
            r#"{{"name":"process_sort_index","ph":"M","pid":{cpu},"tid":0,"args":{{"sort_index":{cpu}}}}}"#
        ));
    }
    // Budget events share the timers track: they too happen inside the runtime, on no thread.
    let timer_cpus: BTreeSet<u16> = out
        .trace
        .iter()
        .filter(|r| matches!(r.kind, TraceKind::Timer | TraceKind::BudgetExhausted | TraceKind::BudgetReplenished))
        .map(|r| r.cpu)
        .collect();
    let sets = set_names(out);
    for cpu in timer_cpus {
        meta.push(format!(
            r#"{{"name":"thread_name","ph":"M","pid":{cpu},"tid":{TIMER_TID},"args":{{"name":"timers"}}}}"#
        ));
    }
    for t in &out.threads {
        let (pid, tid, name) = (t.cpu, tid(t.id), js(&t.name));
        meta.push(format!(r#"{{"name":"thread_name","ph":"M","pid":{pid},"tid":{tid},"args":{{"name":{name}}}}}"#));
        meta.push(format!(
            r#"{{"name":"thread_sort_index","ph":"M","pid":{pid},"tid":{tid},"args":{{"sort_index":{tid}}}}}"#
        ));
    }

    // Timed events, tagged with their time so segments and markers interleave chronologically.
    let mut timed: Vec<(u64, String)> = Vec::new();
    for r in &out.trace {
        let (track, args) = match r.kind {
            TraceKind::Release => (tid(r.thread), format!(r#"{{"job":{},"deadline_ns":{}}}"#, r.job, opt_ns(r.arg))),
            TraceKind::JobComplete => (tid(r.thread), format!(r#"{{"job":{},"response_ns":{}}}"#, r.job, r.arg)),
            TraceKind::JobAbort => match crate::plain::JobEnd::from_code(r.arg) {
                Some(end) => (tid(r.thread), format!(r#"{{"job":{},"ended_by":"{}"}}"#, r.job, end.name())),
                None => (tid(r.thread), format!(r#"{{"job":{}}}"#, r.job)),
            },
            TraceKind::Miss => (tid(r.thread), format!(r#"{{"job":{},"deadline_ns":{}}}"#, r.job, r.arg)),
            TraceKind::ReleaseSkipped | TraceKind::ReleaseOverflow | TraceKind::ReleaseBeyondLimit => {
                (tid(r.thread), format!(r#"{{"job":{},"nominal_ns":{}}}"#, r.job, r.arg))
            }
            TraceKind::Exit if r.arg == 3 => {
                (tid(r.thread), r#"{"panicked":false,"killed":false,"not_started":true}"#.to_string())
            }
            TraceKind::Exit => (tid(r.thread), format!(r#"{{"panicked":{},"killed":{}}}"#, r.arg == 1, r.arg == 2)),
            TraceKind::Timer => (TIMER_TID, format!(r#"{{"event":{}}}"#, r.arg)),
            TraceKind::BudgetExhausted | TraceKind::BudgetReplenished => {
                let field = if r.kind == TraceKind::BudgetExhausted { "consumed_ns" } else { "remaining_ns" };
                let set = js(&display_set(&sets, r.job as usize));
                (TIMER_TID, format!(r#"{{"set":{set},"set_index":{},"{field}":{}}}"#, r.job, r.arg))
            }
            TraceKind::LockAcquired | TraceKind::LockReleased | TraceKind::Spin => {
                (tid(r.thread), format!(r#"{{"lock":{}}}"#, r.arg))
            }
            TraceKind::Inherit => (tid(r.thread), format!(r#"{{"urgency":{}}}"#, r.arg as i64)),
            TraceKind::MessageRefused => (tid(r.thread), format!(r#"{{"reason":{}}}"#, r.arg)),
            TraceKind::CrossCpuRefused => (tid(r.thread), format!(r#"{{"request":{},"cpu":{}}}"#, r.job, r.arg)),
            TraceKind::QueueFull => (tid(r.thread), format!(r#"{{"cpu":{},"repeats":{}}}"#, r.arg, r.job)),
            TraceKind::EventReleaseRefused => (tid(r.thread), format!(r#"{{"event":{}}}"#, r.arg)),
            TraceKind::StaleAnswer => (tid(r.thread), format!(r#"{{"request":{},"created":{}}}"#, r.job, r.arg as i64)),
            TraceKind::PreemptionDeferred => (tid(r.thread), format!(r#"{{"slice":{}}}"#, r.arg == 1)),
            TraceKind::Spawn | TraceKind::Run | TraceKind::Stop | TraceKind::Wake => continue,
        };
        let name = match r.kind {
            TraceKind::Timer => js(&format!("timer {}", r.arg)),
            TraceKind::BudgetExhausted => js(&format!("budget exhausted: {}", display_set(&sets, r.job as usize))),
            TraceKind::BudgetReplenished => js(&format!("budget replenished: {}", display_set(&sets, r.job as usize))),
            kind => js(kind.name()),
        };
        let cat = match r.kind {
            TraceKind::Timer => "timer",
            TraceKind::BudgetExhausted | TraceKind::BudgetReplenished => "budget",
            TraceKind::LockAcquired | TraceKind::LockReleased | TraceKind::Inherit | TraceKind::Spin => "lock",
            _ => "job",
        };
        let t = r.time.as_nanos();
        timed.push((
            t,
            format!(
                r#"{{"name":{name},"cat":"{cat}","ph":"i","s":"t","pid":{},"tid":{track},"ts":{},"args":{args}}}"#,
                r.cpu,
                us(t)
            ),
        ));
    }
    for s in segments(out) {
        let start = s.start.as_nanos();
        let dur = s.end.as_nanos().saturating_sub(start);
        let stop = js(s.stop.map_or("open", StopReason::name));
        timed.push((
            start,
            format!(
                r#"{{"name":{},"cat":"run","ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"job":{},"stop":{stop}}}}}"#,
                name_of(s.thread),
                s.cpu,
                tid(s.thread),
                us(start),
                us(dur),
                s.job
            ),
        ));
    }
    // Stable: at equal times markers come before the segments starting then (a release before
    // the run it causes, a completion before the next thread's run), each in trace order.
    timed.sort_by_key(|(t, _)| *t);

    let mut s = String::from("{\"traceEvents\":[");
    let mut first = true;
    for ev in meta.iter().chain(timed.iter().map(|(_, e)| e)) {
        s.push_str(if first { "\n" } else { ",\n" });
        first = false;
        s.push_str(ev);
    }
    let _ = write!(s, "\n],\"displayTimeUnit\":\"ns\"}}");
    s.push('\n');
    s
}
