//! A thread whose stack cannot be mapped never runs: it ends with
//! `ThreadOutcome::NotStarted` and the reason, not as a panic, and the reports list it under
//! its own heading. Its released job ends with it.

use crate::common;

use common::{markers, ms};
use tempi::trace::{report, JobEnd, TraceKind};
use tempi::{RunOutcome, Runtime, ThreadOutcome, ThreadSpec, Time};

/// `big` asks for a stack far beyond any address space; `fine` runs beside it.
fn run() -> RunOutcome {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("big").stack_size(1 << 60).priority(2), |cx| cx.work(ms(1))).unwrap();
    rt.spawn(ThreadSpec::new("fine").priority(1), |cx| cx.work(ms(2))).unwrap();
    rt.run_until(Time::from_millis(10)).unwrap()
}

#[test]
fn thread_not_started_when_its_stack_cannot_be_mapped() {
    let out = run();
    let big = out.thread_named("big").unwrap();
    match &big.outcome {
        Some(ThreadOutcome::NotStarted(why)) => assert!(why.starts_with("cannot allocate a thread stack"), "{why}"),
        other => panic!("expected NotStarted, got {other:?}"),
    }
    assert_eq!(big.stats.cpu_time, ms(0));
    assert_eq!(out.thread_named("fine").unwrap().outcome, Some(ThreadOutcome::Completed));
    // Its job ends with it, as not started; the exit record says so with code 3.
    assert_eq!(markers(&out, TraceKind::JobAbort), ["big#0@0"]);
    let codes: Vec<u64> = out
        .trace
        .iter()
        .filter(|r| r.thread == big.id && matches!(r.kind, TraceKind::JobAbort | TraceKind::Exit))
        .map(|r| r.arg)
        .collect();
    assert_eq!(codes, [3, 3]);
    let job = report::jobs(&out).into_iter().find(|j| j.thread == "big").unwrap();
    assert_eq!((job.finish, job.ended_by), (Some(Time::ZERO), Some(JobEnd::NotStarted)));
}

#[test]
fn thread_not_started_is_listed_apart_from_panicked_threads() {
    let out = run();
    let text = report::summary_text(&out);
    assert!(!text.contains("panicked"), "{text}");
    let heading = text.lines().position(|l| l == "threads not started:").expect("a heading of its own");
    let line = text.lines().nth(heading + 1).unwrap();
    assert!(line.starts_with("  big: cannot allocate a thread stack"), "{line}");

    let v: serde_json::Value = serde_json::from_str(&report::to_json(&out)).unwrap();
    let outcome = v["threads"][0]["outcome"].as_str().unwrap();
    assert!(outcome.starts_with("not started: cannot allocate a thread stack"), "{outcome}");
    assert_eq!(v["jobs"][0]["ended_by"], "not-started");
}
