//! `tempi analyze FILE --partition ffd|wfd`: the placement printed, the analysis run on it, a
//! set that fits nowhere reported with the task that does not fit.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common;
use common::{example, tempi};

fn scenario(test: &str, toml: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("analyze_partition").join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.toml");
    std::fs::write(&file, toml).unwrap();
    file
}

/// The report of a run that ends with exit status 1: not shown schedulable.
fn not_shown(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "tempi: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn worst_fit_spreads_the_two_cpu_example() {
    // Densities: control 2/5 = 0.4, logger 4/10 = 0.4, sensor (2 ms of work and a 2 ms sleep,
    // counted as if it ran) 4/6 = 0.667. Worst fit: sensor on 0, control on 1 (empty), logger
    // on the less loaded, 1.
    let text = not_shown(&tempi(&["analyze", &example("two-cpus.toml"), "--partition", "wfd"]));
    assert!(text.contains("partition: wfd over 2 CPU(s), tasks by density, each CPU judged by edf"), "{text}");
    assert!(text.contains("control        -> CPU 1"), "{text}");
    assert!(text.contains("logger         -> CPU 1"), "{text}");
    assert!(text.contains("sensor         -> CPU 0"), "{text}");
    assert!(text.contains("CPU 1: 2 task(s)\n  utilisation 0.800"), "{text}");
    // The placed threads pass, but the one-shot `startup` (left on CPU 1) is not analysed.
    assert!(text.contains("note: thread \"sensor\": sleeps 2ms within a job, analysed as if it ran then"), "{text}");
    assert!(
        text.contains(
            "response-time analysis: not applicable under EDF\n  not shown schedulable: not analysed: \"startup\"\n"
        ),
        "{text}"
    );
    assert!(text.ends_with("overall: not shown schedulable (1 thread not analysed: \"startup\")\n"), "{text}");
    // First fit keeps filling CPU 0 while it passes: sensor, then logger (0.5 + 0.4 of it).
    let text = not_shown(&tempi(&["analyze", &example("two-cpus.toml"), "--partition", "ffd"]));
    assert!(text.contains("logger         -> CPU 0") && text.contains("control        -> CPU 1"), "{text}");
}

#[test]
fn json_carries_the_placement() {
    let out = not_shown(&tempi(&["analyze", &example("two-cpus.toml"), "--partition", "ffd", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["partition"]["fit"], "ffd");
    assert_eq!(v["partition"]["test"], "edf");
    let cpus: Vec<(String, u64)> = v["partition"]["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["thread"].as_str().unwrap().to_string(), t["cpu"].as_u64().unwrap()))
        .collect();
    assert_eq!(cpus, [("control".into(), 1), ("logger".into(), 0), ("sensor".into(), 0)]);
}

#[test]
fn a_set_that_fits_nowhere_names_the_task() {
    let file = scenario(
        "nowhere",
        "[runtime]\ncpus = 2\npolicy = \"rm\"\n\n\
         [[thread]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"6ms\"\n\n\
         [[thread]]\nname = \"b\"\nperiod = \"10ms\"\nwcet = \"6ms\"\n\n\
         [[thread]]\nname = \"c\"\nperiod = \"20ms\"\nwcet = \"9ms\"\n",
    );
    // a (0.6) and b (0.6) take one CPU each; c (0.45) under RM with either: R = 9 + 2 * 6 = 21
    // > 20.
    let out = tempi(&["analyze", file.to_str().unwrap(), "--partition", "ffd"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no partition found: task \"c\" does not fit on any CPU"), "{err}");
}

#[test]
fn policies_without_a_test_are_refused() {
    // A request that cannot be met is an error (2), not a verdict (1).
    let out = tempi(&["analyze", &example("round-robin.toml"), "--partition", "wfd"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no per-CPU test to partition with"));
}

#[test]
fn edf_tests_reported_as_passed_cover_deadlines_shorter_and_longer_than_periods() {
    // C = 3 ms > D = 2 ms misses every job, though C/T = 0.3: divided by min(D, T), both tests
    // see 1.5.
    let file = scenario(
        "short_deadline",
        "[runtime]\npolicy = \"edf\"\n\n[[thread]]\nname = \"a\"\nperiod = \"10ms\"\ndeadline = \"2ms\"\nwcet = \"3ms\"\n",
    );
    // Both are known to miss, whatever the policy: a job needs more than its deadline, and the
    // pair more than the CPU. The sufficient tests fail, and the verdict says what is known.
    let text = not_shown(&tempi(&["analyze", file.to_str().unwrap()]));
    assert!(
        text.contains(
            "CPU 0: 1 task(s)\n  NOT schedulable: thread \"a\" needs C = 3ms within D = 2ms, whatever the policy\n"
        ),
        "{text}"
    );
    assert!(text.contains("sum (C+CS)/min(D,T) <= 1: 1.500 fails"), "{text}");
    assert!(text.contains("+ B_k/D_k <= 1: 1.500 fails"), "{text}");
    assert!(!text.contains("passes"), "{text}");
    assert!(text.ends_with("overall: NOT schedulable\n"), "{text}");
    // Two threads of 3 ms every 4 ms due 8 ms after release ask for 150% of the CPU: C/D
    // (0.375 each) would pass Baker's test.
    let thread =
        |name: &str| format!("[[thread]]\nname = \"{name}\"\nperiod = \"4ms\"\ndeadline = \"8ms\"\nwcet = \"3ms\"\n");
    let file = scenario("long_deadline", &format!("[runtime]\npolicy = \"edf\"\n\n{}\n{}", thread("a"), thread("b")));
    let text = not_shown(&tempi(&["analyze", file.to_str().unwrap()]));
    assert!(text.contains("CPU 0: 2 task(s)\n  NOT schedulable: utilisation 1.500 > 1 on CPU 0\n"), "{text}");
    assert!(text.contains("+ B_k/D_k <= 1: 1.500 fails"), "{text}");
    assert!(!text.contains("passes"), "{text}");
    assert!(text.ends_with("overall: NOT schedulable\n"), "{text}");
}
