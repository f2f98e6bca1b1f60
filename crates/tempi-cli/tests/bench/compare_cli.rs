//! `tempi compare` over the shipped examples that have a real-time meaning (a per-CPU policy
//! and a horizon): the command works, prints the side-by-side table and a verdict that
//! matches its exit status and its report, flags exactly the differences its report's numbers
//! show, and shows none that load cannot cause.
//!
//! Nothing here asserts that the two runs agree, nor that real time is never better: load
//! and latency shift real time later, and that can make it better elsewhere. A kill frees a
//! CPU for the others, and an exact tie of the simulation falls the other way: in
//! `locks-msrp.toml` the simulation's `sensor` is released at 1 ms just as `logger` reaches
//! its lock, and waits for it; in real time `logger` started a little late, so `sensor` comes
//! first and responds 2 ms sooner. What load cannot do is release a periodic thread more
//! often than the clock does.

use std::path::Path;

use serde_json::Value;

use crate::common;
use common::{example, scratch, tempi, text};

/// The examples `tempi run` can run as they are: a per-CPU policy and an `until`.
fn real_time_examples() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .filter(|n| {
            let path = example(n);
            let sc = tempi_cli::Scenario::load(Path::new(&path)).unwrap();
            sc.until.is_some() && sc.check_real_time().is_ok()
        })
        .collect();
    names.sort();
    names
}

#[test]
fn compare_over_the_real_time_examples_shows_no_difference_load_cannot_cause() {
    let examples = real_time_examples();
    assert!(examples.len() >= 10, "{examples:?}");
    assert!(examples.iter().any(|n| n == "spring-exec.toml"));
    let dir = scratch("compare_cli", "examples");
    for name in &examples {
        let report = dir.join(name.replace(".toml", ".json"));
        let out = tempi(&["compare", &example(name), "--report", report.to_str().unwrap()]);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        let code = out.status.code();
        assert!(matches!(code, Some(0 | 1)), "{name}: exit {code:?}\n{stdout}\n{stderr}");
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(doc["agree"].as_bool(), Some(code == Some(0)), "{name}: {stdout}");

        // The table: a header, then one row per thread of either run, then the verdict.
        let mut lines = stdout.lines();
        assert!(lines.next().unwrap().starts_with(&format!("compare: {}", example(name))), "{stdout}");
        assert!(lines.next().unwrap().starts_with("thread "), "{stdout}");
        let threads = doc["threads"].as_array().unwrap();
        assert!(!threads.is_empty(), "{name}");
        for t in threads {
            let row = t["name"].as_str().unwrap();
            assert!(stdout.lines().any(|l| l.starts_with(&format!("{row} "))), "{name}: no row for {row}\n{stdout}");
            // Every thread the simulation has, with its numbers.
            if let Some(sim) = t["simulation"].as_object() {
                assert!(sim["jobs"].is_u64(), "{name}: {t}");
            }
        }
        let verdict = if code == Some(0) { "agree: " } else { "differ: " };
        assert!(stdout.lines().any(|l| l.starts_with(verdict)), "{name}: {stdout}");

        // Every difference flagged follows from the two sides' numbers and the tolerance, and
        // every difference the numbers show is flagged.
        let differences = doc["differences"].as_array().unwrap();
        assert_eq!(differences.is_empty(), code == Some(0), "{name}");
        let flagged = |subject: &str, what: &str| {
            differences.iter().any(|d| d["subject"] == subject && d["what"].as_str().unwrap().starts_with(what))
        };
        let (n, tol) =
            (doc["tolerance"]["horizon_jobs"].as_u64().unwrap(), doc["tolerance"]["response"].as_u64().unwrap());
        for t in threads {
            let row = t["name"].as_str().unwrap();
            let (Some(s), Some(r)) = (t["simulation"].as_object(), t["real_time"].as_object()) else {
                let by_design = doc["real_time_only_by_design"].as_array().unwrap();
                if t["simulation"].is_null() && by_design.iter().any(|b| b == row) {
                    // A cross-CPU admission request's submission thread: listed, not flagged.
                    assert!(!differences.iter().any(|d| d["subject"] == row), "{name}: {row}: {differences:?}");
                    assert!(stdout.contains(&format!("{row}: a request's crossing")), "{name}: {stdout}");
                    continue;
                }
                let side = if t["simulation"].is_null() { "not in the simulation" } else { "not in the real-time run" };
                assert!(flagged(row, side), "{name}: {row}: {differences:?}");
                continue;
            };
            let num = |side: &serde_json::Map<String, Value>, k: &str| side[k].as_u64();
            for (key, what) in [("jobs", "jobs released"), ("completed", "jobs completed")] {
                let apart = num(s, key).unwrap().abs_diff(num(r, key).unwrap()) > n;
                assert_eq!(flagged(row, what), apart, "{name}: {row} {key}: {t}");
            }
            for (key, what) in [("misses", "deadline misses"), ("aborted", "aborted jobs")] {
                let one_side = (num(s, key) == Some(0)) != (num(r, key) == Some(0));
                assert_eq!(flagged(row, what), one_side, "{name}: {row} {key}: {t}");
            }
            assert_eq!(flagged(row, "killed"), s["killed"] != r["killed"], "{name}: {row}: {t}");
            let worst = num(s, "worst_response").zip(num(r, "worst_response"));
            assert_eq!(flagged(row, "worst response"), worst.is_some_and(|(a, b)| a.abs_diff(b) > tol), "{name}: {t}");

            // What load cannot cause: a periodic thread's releases follow the clock, and a late
            // dispatcher only loses some at the horizon, so real time never has more (unless
            // the simulation killed the thread early).
            if s["period"].is_u64() && s["killed"] == false {
                assert!(num(r, "jobs").unwrap() <= num(s, "jobs").unwrap() + n, "{name}: {row}: {t}");
            }
            assert!(num(r, "completed").unwrap() <= num(r, "jobs").unwrap(), "{name}: {t}");
        }
    }
}

#[test]
fn compare_refuses_what_cannot_be_compared_with_exit_2() {
    let dir = scratch("compare_cli", "refusals");
    let cases: [(Vec<String>, &str); 5] = [
        (vec![example("global-dhall.toml")], "global-dhall.toml:18: [runtime]: field `policy`: policy \"global-edf\""),
        (vec![example("spring-plan.toml")], "a comparison needs a finite horizon"),
        (vec![example("no-such-file.toml")], "no-such-file.toml"),
        (vec![example("rm-textbook.toml"), "--tolerance".into(), "1 ms".into()], "--tolerance"),
        (
            vec![example("rm-textbook.toml"), "--report".into(), dir.join("missing/out.json").display().to_string()],
            "does not exist (tempi does not create directories)",
        ),
    ];
    for (args, want) in cases {
        let mut all = vec!["compare"];
        all.extend(args.iter().map(String::as_str));
        let out = tempi(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stdout));
        let err = text(&out.stderr);
        assert!(err.starts_with("tempi: ") && err.contains(want), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing runs: {}", text(&out.stdout));
    }
}

#[test]
fn compare_takes_the_horizon_from_the_command_line() {
    // spring-plan has no `until`: --until gives it one, and both runs stop there.
    let dir = scratch("compare_cli", "until");
    let report = dir.join("plan.json");
    let out =
        tempi(&["compare", &example("spring-plan.toml"), "--until", "30ms", "--report", report.to_str().unwrap()]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(doc["until"], 30_000_000);
    assert_eq!(doc["tolerance"]["horizon_jobs"], 1);
    assert_eq!(doc["tolerance"]["response"], 1_000_000);
    // The planner's decisions of both runs are listed.
    assert!(!doc["groups"]["simulation"].as_array().unwrap().is_empty(), "{doc}");
    assert!(text(&out.stdout).lines().any(|l| l.starts_with("group ")), "{}", text(&out.stdout));
}
