//! `[admission]` scenarios end to end: a job killed by its budget at the instant a request
//! arrives ends then and frees its `max_live` slot, and a CPU takes as many `[[request]]`s as
//! the file has.

use crate::common;
use common::{scratch, tempi, text};

const MS: u64 = 1_000_000;

/// Simulate `body` (written to `name` under this test's scratch folder) and return its JSON
/// report.
fn report_of(test: &str, body: &str) -> serde_json::Value {
    let dir = scratch("admission_cli", test);
    let (file, report) = (dir.join("scenario.toml"), dir.join("report.json"));
    std::fs::write(&file, body).unwrap();
    let out = tempi(&["simulate", file.to_str().unwrap(), "--report", report.to_str().unwrap(), "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap()
}

/// "a" overruns its 1 ms budget at 1 ms, the instant "b" is admitted and preempts it: "a" is
/// killed at 1 ms, so only "b" is alive at 2 ms and "c" is admitted under `max_live = 2`.
#[test]
fn a_job_preempted_as_its_budget_runs_out_is_killed_then_and_the_next_request_is_admitted() {
    let v = report_of(
        "preempted_at_overrun",
        r#"
[runtime]
cpus = 1
policy = "edf"

[admission]
engine = "tree"
max_live = 2

[[request]]
name = "a"
time = "0ms"
wcet = "1ms"
deadline = "10ms"
work = "2ms"

[[request]]
name = "b"
time = "1ms"
wcet = "2ms"
deadline = "3ms"

[[request]]
name = "c"
time = "2ms"
wcet = "1ms"
deadline = "5ms"
"#,
    );
    let jobs = v["jobs"].as_array().unwrap();
    let a = jobs.iter().find(|j| j["thread"] == "a").unwrap();
    assert_eq!(
        (a["finish"].as_u64(), a["ended_by"].as_str(), a["missed"].as_bool()),
        (Some(MS), Some("kill"), Some(false))
    );
    let decisions: Vec<(&str, u64, bool)> = v["admissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["request"].as_str().unwrap(), d["time"].as_u64().unwrap(), d["accepted"].as_bool().unwrap()))
        .collect();
    assert_eq!(decisions, [("a", 0, true), ("b", MS, true), ("c", 2 * MS, true)]);
    let events: Vec<(&str, u64, &str)> = v["admission_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["request"].as_str().unwrap(), e["time"].as_u64().unwrap(), e["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(events, [("a", MS, "overrun")]);
    let c = jobs.iter().find(|j| j["thread"] == "c").unwrap();
    assert_eq!(c["finish"].as_u64(), Some(4 * MS));
}

/// 600 requests arriving on one CPU, more than the runtime's default of 256 timing events per
/// CPU: the pool is sized from the file, and every request is tested at its time.
#[test]
fn six_hundred_requests_on_one_cpu_are_all_tested() {
    let mut body = String::from("[runtime]\ncpus = 2\npolicy = \"edf\"\n\n[admission]\ncapacity = 1024\n");
    for k in 0..600 {
        body.push_str(&format!(
            "\n[[request]]\nname = \"r{k}\"\ntime = \"{}us\"\nwcet = \"1us\"\ndeadline = \"5us\"\n",
            10 * k
        ));
    }
    let v = report_of("six_hundred", &body);
    let decisions = v["admissions"].as_array().unwrap();
    assert_eq!(decisions.len(), 600);
    assert!(decisions.iter().all(|d| d["accepted"] == true));
    let last = &decisions[599];
    assert_eq!((last["request"].as_str(), last["time"].as_u64()), (Some("r599"), Some(5990 * 1000)));
    assert!(v["admission_events"].as_array().unwrap().is_empty(), "{}", v["admission_events"]);
}
