//! Helpers shared by the CLI's integration tests: running the `tempi` binary, finding a
//! built-in example, a scratch directory per test, and reading output bytes.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Run the `tempi` binary with `args` and wait for it.
pub fn tempi(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tempi")).args(args).output().expect("the tempi binary starts")
}

/// The path of a built-in example, by file name.
pub fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name).display().to_string()
}

/// A fresh, empty directory for one test of one suite, so tests running in parallel do not
/// share files.
pub fn scratch(suite: &str, test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(suite).join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Output bytes as text (lossy).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Run `tempi bench --only GROUP --quick --json` and return its metrics, after checking that
/// they are `names` in that order (p99, p50, max of one figure) and that on both sides
/// (`tempi_ns`, `peer_ns`) each is a finite, non-negative number and p50 <= p99 <= max. No
/// timing is asserted.
pub fn bench_percentiles(group: &str, names: [&str; 3]) -> Vec<serde_json::Value> {
    let out = tempi(&["bench", "--only", group, "--quick", "--json"]);
    assert!(out.status.success(), "tempi bench failed: {}\n{}", out.status, text(&out.stderr));
    let v: serde_json::Value =
        serde_json::from_str(String::from_utf8(out.stdout).expect("utf-8").trim()).expect("one JSON object");
    let metrics = v["metrics"].as_array().expect("a `metrics` array").clone();
    let found: Vec<&str> = metrics.iter().map(|m| m["name"].as_str().expect("a name")).collect();
    assert_eq!(found, names);
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
    metrics
}
