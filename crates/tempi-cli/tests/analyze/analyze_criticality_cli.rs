//! `tempi analyze` and soft threads: under fixed priority a soft thread's worst-case response
//! above its deadline is a soft target missed, which leaves the verdict to the hard threads
//! (while its `C` still counts against the threads below it); the same thread made hard makes
//! the set NOT schedulable. The EDF tests judge the set as a whole and say soft threads are
//! judged as hard there.

use crate::common;
use common::{scratch, tempi, text};

/// `a` (2 ms, top), the soft `s` (3 ms due within 4 ms: R = 5 ms) and `b` (4 ms every 20 ms:
/// R = 2 + 3 + 4 = 9 ms, `s` included).
const SCENARIO: &str = r#"
[runtime]
policy = "fp"

[[thread]]
name = "a"
period = "10ms"
wcet = "2ms"
priority = 3

[[thread]]
name = "s"
period = "10ms"
wcet = "3ms"
deadline = "4ms"
priority = 2
criticality = "soft"

[[thread]]
name = "b"
period = "20ms"
wcet = "4ms"
priority = 1
"#;

fn scenario(test: &str, body: &str) -> String {
    let file = scratch("analyze_criticality_cli", test).join("s.toml");
    std::fs::write(&file, body).unwrap();
    file.display().to_string()
}

/// `tempi analyze ARGS`: (exit status, stdout).
fn analyze(args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["analyze"];
    all.extend_from_slice(args);
    let out = tempi(&all);
    assert!(!text(&out.stderr).contains("panicked"), "{}", text(&out.stderr));
    (out.status.code(), text(&out.stdout))
}

#[test]
fn a_soft_thread_beyond_its_deadline_is_a_target_missed_not_a_verdict() {
    let file = scenario("soft", SCENARIO);
    let (code, s) = analyze(&[&file]);
    assert_eq!(code, Some(0), "{s}");
    assert!(s.contains("  s                    3ms      10ms       4ms     2        0ns        >5ms  soft\n"), "{s}");
    // The soft thread's 3 ms are in b's response time.
    assert!(s.contains("  b                    4ms      20ms      20ms     1        0ns         9ms    ok\n"), "{s}");
    assert!(s.contains("  soft targets missed in the worst case (not faults): \"s\" (R >5ms, D 4ms)\n"), "{s}");
    assert!(s.contains("  response-time analysis: schedulable\n"), "{s}");
    assert!(s.ends_with("overall: schedulable\n"), "{s}");
    assert!(!s.contains("MISS"), "{s}");

    let (code, json) = analyze(&[&file, "--json"]);
    assert_eq!(code, Some(0), "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["schedulable"], true);
    assert_eq!(v["soft_threads"], serde_json::json!(["s"]));
    assert_eq!(v["soft_judged_as_hard"], false);
    let cpu = &v["cpus"][0];
    assert_eq!(cpu["soft_targets_missed"], serde_json::json!(["s"]));
    let rows: Vec<(&str, &str, bool)> = cpu["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (t["thread"].as_str().unwrap(), t["criticality"].as_str().unwrap(), t["schedulable"].as_bool().unwrap())
        })
        .collect();
    assert_eq!(rows, [("a", "hard", true), ("s", "soft", false), ("b", "hard", true)]);
}

#[test]
fn the_same_thread_made_hard_is_not_schedulable() {
    let file = scenario("hard", &SCENARIO.replace("criticality = \"soft\"", "criticality = \"hard\""));
    let (code, s) = analyze(&[&file]);
    assert_eq!(code, Some(1), "{s}");
    assert!(s.contains("  s                    3ms      10ms       4ms     2        0ns        >5ms  MISS\n"), "{s}");
    assert!(s.contains("  response-time analysis: NOT schedulable\n"), "{s}");
    assert!(s.ends_with("overall: NOT schedulable\n"), "{s}");
    assert!(!s.contains("soft"), "{s}");
    let (code, json) = analyze(&[&file, "--json"]);
    assert_eq!(code, Some(1), "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["schedulable"], false);
    assert_eq!(v["cpus"][0]["tasks"][1]["criticality"], "hard");
    assert_eq!(v["cpus"][0]["soft_targets_missed"], serde_json::json!([]));
    assert_eq!(v["soft_threads"], serde_json::json!([]));
}

#[test]
fn a_soft_thread_that_overloads_the_cpu_leaves_the_hard_verdict_to_the_response_times() {
    // s alone asks 12 ms every 10 ms, below the hard threads: they are unaffected.
    let body = SCENARIO.replace("wcet = \"3ms\"", "wcet = \"12ms\"").replace("priority = 1", "priority = 4");
    let file = scenario("overload", &body);
    let (code, s) = analyze(&[&file]);
    assert_eq!(code, Some(0), "{s}");
    assert!(s.contains("note: CPU 0: soft targets cannot all be met: utilisation "), "{s}");
    assert!(s.ends_with("overall: schedulable\n"), "{s}");
    // Made hard, the necessary conditions decide.
    let file = scenario("overload_hard", &body.replace("criticality = \"soft\"", "criticality = \"hard\""));
    let (code, s) = analyze(&[&file]);
    assert_eq!(code, Some(1), "{s}");
    assert!(s.contains("  NOT schedulable: "), "{s}");
}

#[test]
fn edf_judges_soft_threads_as_hard_and_says_so() {
    let file = scenario("edf", SCENARIO);
    let (_, s) = analyze(&[&file, "--policy", "edf"]);
    assert!(
        s.contains(
            "note: soft threads \"s\": judged as hard, since the tests of this policy judge the set as a whole and \
             cannot tell which thread misses\n"
        ),
        "{s}"
    );
    let (_, json) = analyze(&[&file, "--policy", "edf", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["soft_judged_as_hard"], true);
}
