//! How `tempi analyze` writes figures: durations, response times and broken necessary
//! conditions as text and JSON, lists of thread names, and the progress line of a long
//! response-time analysis.
//!
//! Owns the wording and number formats of those pieces. Must not decide a verdict.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tempi::analysis::{Infeasible, Response, TaskSet};

pub(super) fn dur(d: Duration) -> String {
    format!("{d:?}")
}

pub(super) fn opt(d: Option<Duration>) -> String {
    d.map_or_else(|| "unbounded".to_string(), dur)
}

pub(super) fn response_text(r: Response) -> (String, &'static str) {
    match r {
        Response::Bounded(d) => (dur(d), "ok"),
        Response::ExceedsDeadline(d) => (format!(">{}", dur(d)), "MISS"),
        Response::Unbounded => ("unbounded".into(), "MISS"),
        Response::NotCovered(d) => (format!("{}?", dur(d)), "n/a"),
        Response::Overloaded => ("overloaded".into(), "MISS"),
        Response::GaveUp(d) => (format!(">={}?", dur(d)), "n/a"),
    }
}

pub(super) fn response_json(r: Response) -> Value {
    match r {
        Response::Bounded(d) => json!({ "kind": "bounded", "ns": d.as_nanos() as u64 }),
        Response::ExceedsDeadline(d) => json!({ "kind": "exceeds_deadline", "ns": d.as_nanos() as u64 }),
        Response::Unbounded => json!({ "kind": "unbounded" }),
        Response::NotCovered(d) => json!({ "kind": "not_covered", "ns": d.as_nanos() as u64 }),
        Response::Overloaded => json!({ "kind": "overloaded" }),
        Response::GaveUp(d) => json!({ "kind": "gave_up", "ns": d.as_nanos() as u64 }),
    }
}

pub(super) fn ns(d: Option<Duration>) -> Value {
    d.map_or(Value::Null, |d| json!(d.as_nanos() as u64))
}

/// A progress reporter for one CPU's response-time analysis: silent for the first two
/// seconds, then a line on stderr at most every two seconds.
pub(super) fn progress(cpu: usize, total: usize) -> impl FnMut(usize) {
    let start = Instant::now();
    let mut next = Duration::from_secs(2);
    move |done| {
        let elapsed = start.elapsed();
        if elapsed >= next && done < total {
            eprintln!(
                "tempi analyze: CPU {cpu}: response times of {done} of {total} threads ({} s)",
                elapsed.as_secs()
            );
            next = elapsed + Duration::from_secs(2);
        }
    }
}

/// The line that states a broken necessary condition ([`TaskSet::infeasibility`]) of `ts`;
/// `cpu` names the CPU of a partitioned set (`None`: all `m` CPUs of a global one).
pub(super) fn infeasible_text(ts: &TaskSet, why: &Infeasible, cpu: Option<usize>) -> String {
    match *why {
        Infeasible::Utilisation { utilisation, cpus } => {
            let u = above(utilisation, cpus);
            match cpu {
                Some(n) => format!("NOT schedulable: utilisation {u} > 1 on CPU {n}"),
                None => format!("NOT schedulable: utilisation {u} > {cpus} on {cpus} CPUs"),
            }
        }
        Infeasible::WcetAboveDeadline { task } => {
            let t = &ts.tasks[task];
            format!(
                "NOT schedulable: thread \"{}\" needs C = {} within D = {}, whatever the policy",
                t.name,
                dur(t.wcet),
                dur(t.deadline)
            )
        }
        Infeasible::TaskUtilisation { task, utilisation } => format!(
            "NOT schedulable: thread \"{}\" alone has utilisation {utilisation:.3} > 1 (its jobs run one at a time)",
            ts.tasks[task].name
        ),
    }
}

/// A utilisation the exact comparison found above `bound`, written so that it reads as above
/// it: three decimals, or as many as it takes when those round it down to the bound.
fn above(utilisation: f64, bound: usize) -> String {
    let short = format!("{utilisation:.3}");
    if short.parse::<f64>().is_ok_and(|u| u > bound as f64) {
        short
    } else if utilisation > bound as f64 {
        format!("{utilisation}")
    } else {
        format!("{bound} plus less than a floating-point rounding")
    }
}

pub(super) fn infeasible_json(ts: &TaskSet, why: Option<&Infeasible>) -> Value {
    match why {
        None => Value::Null,
        Some(Infeasible::Utilisation { utilisation, cpus }) => {
            json!({ "kind": "utilisation", "utilisation": utilisation, "cpus": cpus })
        }
        Some(Infeasible::WcetAboveDeadline { task }) => {
            json!({ "kind": "wcet_above_deadline", "thread": ts.tasks[*task].name })
        }
        Some(Infeasible::TaskUtilisation { task, utilisation }) => {
            json!({ "kind": "task_utilisation", "thread": ts.tasks[*task].name, "utilisation": utilisation })
        }
    }
}

/// What a failed sufficient test says: nothing, unless the set is already known infeasible.
pub(super) fn failed(infeasible: bool) -> &'static str {
    if infeasible {
        "fails"
    } else {
        "inconclusive"
    }
}

/// Threads named in a line, the first few only: a scenario may leave out thousands.
pub(super) fn some_names<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    const SHOWN: usize = 3;
    let total = names.len();
    let mut text: Vec<String> = names.take(SHOWN).map(|n| format!("\"{n}\"")).collect();
    if total > SHOWN {
        text.push(format!("and {} more", total - SHOWN));
    }
    text.join(", ")
}
