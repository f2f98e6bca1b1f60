//! `tempi bench --only preempt --quick --json`: the three metrics of a periodic thread's
//! release latency while an OS-backed loop computes on its CPU, with their percentiles in
//! order on both sides. No timing is asserted: the machine running the tests may be slow or
//! loaded.

use std::process::Command;

use serde_json::Value;

#[test]
fn preempt_group_reports_ordered_percentiles_for_both_sides() {
    let out = Command::new(env!("CARGO_BIN_EXE_tempi"))
        .args(["bench", "--only", "preempt", "--quick", "--json"])
        .output()
        .expect("run the tempi binary");
    assert!(out.status.success(), "tempi bench failed: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_str(String::from_utf8(out.stdout).expect("utf-8").trim()).expect("one JSON object");
    let metrics = v["metrics"].as_array().expect("a `metrics` array");
    let names: Vec<&str> = metrics.iter().map(|m| m["name"].as_str().expect("a name")).collect();
    assert_eq!(names, ["preempt.os_thread.p99", "preempt.os_thread.p50", "preempt.os_thread.max"]);
    for key in ["tempi_ns", "peer_ns"] {
        let xs: Vec<f64> = metrics
            .iter()
            .map(|m| {
                let x = m[key].as_f64().unwrap_or_else(|| panic!("{}: `{key}` is not a number", m["name"]));
                assert!(x >= 0.0 && x.is_finite(), "{}: `{key}` = {x}", m["name"]);
                x
            })
            .collect();
        let [p99, p50, max] = xs[..] else { unreachable!("three metrics") };
        assert!(p50 <= p99 && p99 <= max, "{key}: p50 {p50}, p99 {p99}, max {max} out of order");
    }
    let note = metrics[0]["note"].as_str().expect("p99 carries the note");
    assert!(note.contains("OS-backed") && note.contains("1000 releases pooled per side"), "note: {note}");
}
