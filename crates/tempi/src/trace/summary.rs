//! The readable summary of a run ([`summary_text`], re-exported by [`super::report`]): the
//! thread and set tables, then a line for anything that did not go as planned.

use std::fmt::Write as _;

/// The text a thread outcome of one kind carries (its panic message, why it never started).
type OutcomeText = fn(&ThreadOutcome) -> Option<&String>;

use super::report::{display_name, mean_response_ns, names};
use crate::stats::{RunOutcome, ThreadSummary};
use crate::thread::{Criticality, ThreadOutcome};
use crate::time::nanos;

/// Nanoseconds as milliseconds with three decimals, rounded to the nearest microsecond.
fn ms3(ns: u64) -> String {
    let us = ns / 1_000 + u64::from(ns % 1_000 >= 500);
    format!("{}.{:03}", us / 1_000, us % 1_000)
}

/// Rows as aligned text: the first column left-aligned (names), the others right-aligned
/// (numbers, except a last column marked `left_last`), a dashed rule under the header row.
fn write_table<const N: usize>(s: &mut String, rows: &[[String; N]], left_last: bool) {
    let mut widths = [0usize; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for (i, row) in rows.iter().enumerate() {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            if c > 0 {
                line.push_str("  ");
            }
            if c == 0 || (left_last && c == N - 1) {
                // Names read best left-aligned, numbers right-aligned.
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', pad));
            } else {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            }
        }
        let _ = writeln!(s, "{}", line.trim_end());
        if i == 0 {
            let _ = writeln!(s, "{}", "-".repeat(widths.iter().sum::<usize>() + 2 * (N - 1)));
        }
    }
}

/// Per thread with completed jobs: response-time percentiles, the 99th percentile of start
/// latency (release to first dispatch) and of execution time, the largest tardiness, and the
/// response and start jitter (largest minus smallest, [`crate::ThreadDistributions::response_jitter`]).
fn distribution_table(s: &mut String, out: &RunOutcome) {
    let header = [
        "thread",
        "resp p50",
        "resp p90",
        "resp p99",
        "resp p99.9",
        "start p99",
        "exec p99",
        "late max",
        "resp jitter",
        "start jitter",
    ];
    let dash = || String::from("-");
    let at = |h: &crate::Histogram, p: f64| h.percentile(p).map_or_else(dash, |d| ms3(nanos(d)));
    let ms = |d: Option<std::time::Duration>| d.map_or_else(dash, |d| ms3(nanos(d)));
    let mut rows: Vec<[String; 10]> = vec![header.map(String::from)];
    for t in out.threads.iter().filter(|t| t.distributions.response.count() > 0) {
        let d = &t.distributions;
        rows.push([
            t.name.clone(),
            at(&d.response, 50.0),
            at(&d.response, 90.0),
            at(&d.response, 99.0),
            at(&d.response, 99.9),
            at(&d.start_latency, 99.0),
            at(&d.execution, 99.0),
            ms(d.tardiness.max()),
            ms(d.response_jitter()),
            ms(d.start_jitter()),
        ]);
    }
    if rows.len() > 1 {
        let _ = writeln!(s);
        write_table(s, &rows, false);
    }
}

/// Per member of each set whose budget ran out: the exhaustions at which it was running, its
/// overruns (exhaustions past which it ran on) and the CPU time it used past them
/// ([`crate::MemberBudgetCounts`]); a row `(no member running)` for exhaustions at which none ran.
fn member_table(s: &mut String, out: &RunOutcome, names_by_id: &std::collections::HashMap<crate::ThreadId, &str>) {
    let header = ["set", "member", "exhaustions", "overruns", "overrun time"];
    let mut rows: Vec<[String; 5]> = vec![header.map(String::from)];
    for set in out.sets.iter().filter(|set| set.exhaustions > 0) {
        for m in &set.per_member {
            let who = m.thread.map_or_else(|| String::from("(others)"), |id| display_name(names_by_id, id));
            rows.push([
                set.name.clone(),
                who,
                m.exhaustions.to_string(),
                m.overruns.to_string(),
                ms3(nanos(m.overrun_time)),
            ]);
        }
        if set.exhaustions_idle > 0 {
            rows.push([
                set.name.clone(),
                String::from("(no member running)"),
                set.exhaustions_idle.to_string(),
                String::from("-"),
                String::from("-"),
            ]);
        }
    }
    if rows.len() > 1 {
        let _ = writeln!(s);
        write_table(s, &rows, false);
    }
}

/// A readable summary of a run: one aligned row per thread (times in milliseconds), one with
/// its percentiles (response time, start latency, execution time, tardiness), one per
/// thread set (CPU time, budget exhaustions and replenishments, members), the total of
/// deadline misses, a `faults:` line naming the hard threads that missed (a miss by a hard
/// thread is a fault of the run, [`RunOutcome::hard_misses`]) and one naming the soft threads
/// that did (targets missed, not faults), when there are any (and under a global policy the migrations, in total and per thread that
/// moved), then releases dropped for a full release queue, warnings, lost trace
/// records, panicked, not started and killed threads, and OS-backed threads the end of the
/// run left stopped ([`RunOutcome::os_backed_left_stopped`]), if any.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Runtime, ThreadSpec};
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("worker"), |cx| cx.work(Duration::from_millis(2))).unwrap();
/// let text = tempi::trace::report::summary_text(&rt.run().unwrap());
/// assert!(text.contains("worker"));
/// assert!(text.contains("total misses: 0"));
/// assert!(!text.contains("faults:"));
///
/// // 4 ms of work due within 3 ms, hard then soft.
/// let late = |c| ThreadSpec::new("late").periodic(Duration::from_millis(10)).deadline(Duration::from_millis(3)).criticality(c);
/// for (c, line) in [
///     (tempi::Criticality::Hard, "faults: 2 deadline misses by hard threads (late 2)\n"),
///     (tempi::Criticality::Soft, "soft targets missed, not faults: 2 deadline misses by soft threads (late 2)\n"),
/// ] {
///     let mut rt = Runtime::simulated(1);
///     rt.spawn(late(c), |cx| cx.work(Duration::from_millis(4))).unwrap();
///     let text = tempi::trace::report::summary_text(&rt.run_until(tempi::Time::from_millis(20)).unwrap());
///     assert!(text.contains(line), "{text}");
/// }
/// ```
pub fn summary_text(out: &RunOutcome) -> String {
    let mut s = String::new();
    let cpus = if out.cpus == 1 { "CPU" } else { "CPUs" };
    let _ = writeln!(
        s,
        "run: {} time, scheduler {}, {} {cpus}, end {} ms",
        out.mode.name(),
        out.scheduler,
        out.cpus,
        ms3(out.end.as_nanos())
    );

    let header = ["thread", "cpu", "jobs", "done", "misses", "resp min", "resp mean", "resp max", "cpu time"];
    let dash = || String::from("-");
    let mut rows: Vec<[String; 9]> = vec![header.map(String::from)];
    for t in &out.threads {
        let st = &t.stats;
        rows.push([
            t.name.clone(),
            t.cpu.to_string(),
            st.released.to_string(),
            st.completed.to_string(),
            st.misses.to_string(),
            st.response_min.map_or_else(dash, |d| ms3(nanos(d))),
            mean_response_ns(t).map_or_else(dash, ms3),
            st.response_max.map_or_else(dash, |d| ms3(nanos(d))),
            ms3(nanos(st.cpu_time)),
        ]);
    }
    write_table(&mut s, &rows, false);
    if out.threads.is_empty() {
        let _ = writeln!(s, "(no threads)");
    }
    distribution_table(&mut s, out);
    if !out.sets.is_empty() {
        let names_by_id = names(out);
        let header = ["set", "cpu time", "exhaustions", "replenishments", "members"];
        let mut rows: Vec<[String; 5]> = vec![header.map(String::from)];
        for set in &out.sets {
            let members: Vec<String> = set.members.iter().map(|&m| display_name(&names_by_id, m)).collect();
            let name = if set.destroyed { format!("{} (destroyed)", set.name) } else { set.name.clone() };
            rows.push([
                name,
                ms3(nanos(set.cpu_time)),
                set.exhaustions.to_string(),
                set.replenishments.to_string(),
                if members.is_empty() { String::from("-") } else { members.join(", ") },
            ]);
        }
        let _ = writeln!(s);
        write_table(&mut s, &rows, true);
        member_table(&mut s, out, &names_by_id);
    }
    let _ = writeln!(s, "(times in ms)");
    let _ = writeln!(s, "total misses: {}", out.threads.iter().map(|t| t.stats.misses).fold(0u64, u64::saturating_add));
    for (criticality, line) in [(Criticality::Hard, "faults:"), (Criticality::Soft, "soft targets missed, not faults:")]
    {
        let missed: Vec<&ThreadSummary> =
            out.threads.iter().filter(|t| t.criticality == criticality && t.stats.misses > 0).collect();
        if missed.is_empty() {
            continue;
        }
        let count = missed.iter().map(|t| t.stats.misses).fold(0u64, u64::saturating_add);
        let each: Vec<String> = missed.iter().map(|t| format!("{} {}", t.name, t.stats.misses)).collect();
        let what = match criticality {
            Criticality::Hard => "by hard threads",
            Criticality::Soft => "by soft threads",
        };
        let misses = if count == 1 { "miss" } else { "misses" };
        let _ = writeln!(s, "{line} {count} deadline {misses} {what} ({})", each.join(", "));
    }
    if out.global {
        let moved: Vec<String> = out
            .threads
            .iter()
            .filter(|t| t.stats.migrations > 0)
            .map(|t| format!("{} ({})", t.name, t.stats.migrations))
            .collect();
        let detail = if moved.is_empty() { String::new() } else { format!(": {}", moved.join(", ")) };
        let _ = writeln!(s, "total migrations: {}{detail}", out.migrations());
    }

    // Threads with a non-zero count, as `name (count)`.
    let per_thread = |count: fn(&ThreadSummary) -> u64| -> Vec<String> {
        out.threads.iter().filter(|t| count(t) > 0).map(|t| format!("{} ({})", t.name, count(t))).collect()
    };
    let overflowed = per_thread(|t| t.stats.overflows);
    if !overflowed.is_empty() {
        let _ = writeln!(s, "releases dropped, release queue full: {}", overflowed.join(", "));
    }
    let beyond = per_thread(|t| t.stats.beyond_limit);
    if !beyond.is_empty() {
        let _ = writeln!(s, "releases after the last job (max_jobs), no job made: {}", beyond.join(", "));
    }
    // Requests and messages that did not take effect: a line each, when there were any.
    let (m, x) = (&out.messages, &out.cross_cpu);
    for (count, what) in [
        (out.event_releases_refused, "releases by timing events refused (thread ended or not sporadic)"),
        (m.handler_queue_full, "messages refused by a busy handler's full queue"),
        (m.timed_pending_at_end, "timed messages still waiting for their instant at the end of the run"),
        (m.unserved_at_receiver_end, "messages still queued for a thread when it ended, never served"),
        (m.handler_panicked, "messages refused by a handler that had panicked"),
        (m.timed_refused_queue_full, "timed messages refused at their instant, recipient's queue full"),
        (m.timed_refused_by_policy, "timed messages refused at their instant by the recipient's queue policy"),
        (m.timed_refused_recipient_ended, "timed messages dropped, their recipient ended"),
        (m.timed_refused_cpu_queue_full, "timed messages not posted, the recipient CPU's request queue full"),
        (m.timed_refused_pool_full, "timed messages refused, the recipient CPU's message pool full"),
        (m.queued_at_end, "messages still queued, never served, at the end of the run"),
        (x.refused, "cross-CPU requests refused by their target CPU"),
        (x.pending_at_end, "cross-CPU requests still queued at the end of the run"),
        (x.queue_full, "cross-CPU posts that found a queue full"),
        (x.proxies_full, "cross-CPU waits refused for want of proxy room"),
        (x.proxies_at_end, "cross-CPU waiters still queued at the end of the run"),
        (x.stale_answers, "cross-CPU answers that came after their waiter gave up"),
    ] {
        if count > 0 {
            let _ = writeln!(s, "{what}: {count}");
        }
    }
    for w in &out.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    if out.trace_dropped > 0 {
        let _ = writeln!(
            s,
            "note: {} trace records were dropped (trace buffer full); per-job detail is incomplete, statistics are exact",
            out.trace_dropped
        );
    }
    // Threads that never ran for want of a stack (or an OS thread) did not panic: each kind
    // under its own heading.
    for (heading, pick) in [
        ("panicked threads:", (|o| if let ThreadOutcome::Panicked(m) = o { Some(m) } else { None }) as OutcomeText),
        ("threads not started:", |o| if let ThreadOutcome::NotStarted(why) = o { Some(why) } else { None }),
    ] {
        let listed: Vec<(&str, &str)> = out
            .threads
            .iter()
            .filter_map(|t| t.outcome.as_ref().and_then(pick).map(|text| (t.name.as_str(), text.as_str())))
            .collect();
        if !listed.is_empty() {
            let _ = writeln!(s, "{heading}");
            for (name, text) in listed {
                let _ = writeln!(s, "  {name}: {text}");
            }
        }
    }
    let killed: Vec<&str> =
        out.threads.iter().filter(|t| t.outcome == Some(ThreadOutcome::Killed)).map(|t| t.name.as_str()).collect();
    if !killed.is_empty() {
        let _ = writeln!(s, "killed threads (budget exhausted): {}", killed.join(", "));
    }
    if out.kernel_time.iter().any(|k| !k.is_zero()) {
        // Real time: what each dispatcher spent in the runtime's own code, charged to no thread.
        let per_cpu: Vec<String> = out
            .kernel_time
            .iter()
            .enumerate()
            .map(|(cpu, k)| format!("CPU {cpu} {:.3} ms", k.as_secs_f64() * 1e3))
            .collect();
        let _ = writeln!(s, "kernel time (the runtime's own, charged to no thread): {}", per_cpu.join(", "));
    }
    if !out.os_backed_left_stopped.is_empty() {
        let names_by_id = names(out);
        let left: Vec<String> = out.os_backed_left_stopped.iter().map(|&id| display_name(&names_by_id, id)).collect();
        let _ = writeln!(
            s,
            "OS-backed threads left stopped in their own code at the end of the run, not unwound: {}",
            left.join(", ")
        );
    }
    s
}
