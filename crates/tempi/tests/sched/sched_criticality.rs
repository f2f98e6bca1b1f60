//! Criticality in a run's report: a hard and a soft thread both miss every deadline, and only
//! the hard thread's misses are faults of the run.

use std::time::Duration;
use tempi::{Criticality, Runtime, ThreadSpec, Time};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Under fixed priority, every 10 ms: `top` runs 0–2 ms (due at 10), the hard `h` 2–5 ms (due
/// at 4) and the soft `s` 5–7 ms (due at 6), so `h` and `s` miss every job, `top` none.
fn run(until_ms: u64) -> tempi::RunOutcome {
    let mut rt = Runtime::simulated(1);
    let spec = |name, prio, deadline| ThreadSpec::new(name).periodic(ms(10)).deadline(ms(deadline)).priority(prio);
    rt.spawn(spec("top", 3, 10), |cx| cx.work(ms(2))).unwrap();
    rt.spawn(spec("h", 2, 4).criticality(Criticality::Hard), |cx| cx.work(ms(3))).unwrap();
    rt.spawn(spec("s", 1, 6).criticality(Criticality::Soft), |cx| cx.work(ms(2))).unwrap();
    rt.run_until(Time::from_millis(until_ms)).unwrap()
}

#[test]
fn hard_misses_count_the_hard_thread_only() {
    let out = run(100);
    let misses = |name| out.thread_named(name).unwrap().stats.misses;
    assert_eq!((misses("top"), misses("h"), misses("s")), (0, 10, 10));
    assert_eq!(out.total_misses(), 20);
    assert_eq!(out.hard_misses(), 10);
    let crit: Vec<Criticality> = out.threads.iter().map(|t| t.criticality).collect();
    assert_eq!(crit, [Criticality::Hard, Criticality::Hard, Criticality::Soft]);
}

#[test]
fn the_summary_names_the_fault_and_the_soft_targets() {
    let text = tempi::trace::report::summary_text(&run(30));
    assert!(
        text.contains(
            "total misses: 6\nfaults: 3 deadline misses by hard threads (h 3)\nsoft targets missed, not faults: 3 \
             deadline misses by soft threads (s 3)\n"
        ),
        "{text}"
    );
}

#[cfg(feature = "export")]
#[test]
fn the_json_report_has_each_criticality_and_the_hard_total() {
    let v: serde_json::Value = serde_json::from_str(&tempi::trace::report::to_json(&run(30))).unwrap();
    assert_eq!(v["hard_misses"], 3);
    let rows: Vec<(&str, &str, u64)> = v["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["criticality"].as_str().unwrap(), t["misses"].as_u64().unwrap()))
        .collect();
    assert_eq!(rows, [("top", "hard", 0), ("h", "hard", 3), ("s", "soft", 3)]);
}
