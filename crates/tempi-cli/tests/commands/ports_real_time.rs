//! The PORTS example (`examples/ports-admission.toml`) under `tempi run`: in real time its
//! cross-CPU request is tested by the target CPU, which answers a decision that appears in the
//! report like the others. Properties only (which requests fit depends on how late each one is
//! served on a loaded machine), never timings.

use crate::common;
use common::{example, scratch, tempi, text};

#[test]
fn real_time_run_sends_the_cross_cpu_request_to_its_target() {
    let dir = scratch("ports_real_time", "example");
    let report = dir.join("report.json");
    let out = tempi(&["run", &example("ports-admission.toml"), "--no-pin", "--report", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let decisions = json["admissions"].as_array().expect("an admissions array");
    let events = json["admission_events"].as_array().expect("an admission_events array");
    // Every request of the file is in the report: decided at least once (sim perhaps twice:
    // NACK, resubmit), or, on a machine so loaded that the 30 ms run ended before its
    // submitter reached it, reported as not tested.
    for name in ["plan", "map", "replan", "render", "sim", "late", "probe", "track"] {
        let decided = decisions.iter().any(|d| d["request"] == name);
        let not_tested = events.iter().any(|e| e["request"] == name && e["kind"] == "not tested: the run ended first");
        assert!(decided || not_tested, "{name} is not in the report: {json}");
    }
    // sim was decided by CPU 1's admission, asked from CPU 0 (its first request to another
    // CPU, made at 1 ms: decided unless the machine stalled the whole run).
    if let Some(sim) = decisions.iter().find(|d| d["request"] == "sim") {
        assert_eq!((sim["cpu"].as_u64(), sim["target_cpu"].as_u64()), (Some(0), Some(1)), "{sim}");
    }
    // The submitters themselves never miss: they are due at their CPU's shortest deadline.
    for t in json["threads"].as_array().unwrap() {
        if t["name"].as_str().unwrap().starts_with("requests@") {
            assert_eq!(t["completed"], t["jobs"], "{t}");
        }
    }
}
