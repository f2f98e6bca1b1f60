//! `tempi analyze` says no more than it knows: a utilisation above 1 is NOT schedulable under
//! every policy, a thread left out of the model leaves the verdict "not shown", a job whose
//! steps can outgrow its `wcet` is analysed at their longest, and the exit status is the
//! verdict (0 schedulable, 1 not shown schedulable, 2 an error).

use crate::common;
use common::{example, scratch, tempi, text};

/// Write `body` as `NAME.toml` in the test's scratch directory; returns its path.
fn scenario(test: &str, body: &str) -> String {
    let file = scratch("analyze_verdict_cli", test).join("s.toml");
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
fn a_utilisation_above_one_is_not_schedulable_under_every_policy() {
    // U = 100,000 on one CPU.
    let body = "[runtime]\nquantum = \"1ms\"\n[[thread]]\nname = \"big\"\nperiod = \"1ms\"\nwcet = \"100s\"\n";
    let file = scenario("u_100000", body);
    for policy in ["fp", "edf", "fifo", "rr", "collator"] {
        let (code, s) = analyze(&[&file, "--policy", policy]);
        assert_eq!(code, Some(1), "{policy}: {s}");
        assert!(
            s.contains("CPU 0: 1 task(s)\n  NOT schedulable: utilisation 100000.000 > 1 on CPU 0\n"),
            "{policy}: {s}"
        );
        assert!(s.ends_with("overall: NOT schedulable\n"), "{policy}: {s}");
        assert!(!s.contains("inconclusive"), "{policy}: {s}");
    }
    let (_, s) = analyze(&[&file, "--policy", "fp"]);
    assert!(s.contains("  Liu & Layland with blocking: fails (big 100000.000<=1.000 FAIL)\n"), "{s}");
    let (code, json) = analyze(&[&file, "--policy", "edf", "--json"]);
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["schedulable"], false);
    assert_eq!(v["cpus"][0]["schedulable"], false);
    assert_eq!(v["cpus"][0]["infeasible"]["kind"], "utilisation");
    assert_eq!(v["cpus"][0]["infeasible"]["utilisation"], 100000.0);
    // Global policies: the sum against the number of CPUs.
    let mut body = String::from("[runtime]\ncpus = 2\n");
    for i in 0..5 {
        body.push_str(&format!("[[thread]]\nname = \"t{i}\"\nperiod = \"10ms\"\nwcet = \"5ms\"\n"));
    }
    let file = scenario("global", &body);
    for policy in ["global-edf", "global-fp"] {
        let (code, s) = analyze(&[&file, "--policy", policy]);
        assert_eq!(code, Some(1), "{policy}: {s}");
        assert!(
            s.contains("all CPUs (2), global: 5 task(s)\n  NOT schedulable: utilisation 2.500 > 2 on 2 CPUs\n"),
            "{s}"
        );
        assert!(s.ends_with("overall: NOT schedulable\n"), "{policy}: {s}");
    }
    // Exactly the CPU is not too much: EDF meets it, and says so.
    let (code, s) = analyze(&[&example("edf-full-utilisation.toml")]);
    assert_eq!(code, Some(0), "{s}");
    assert!(s.ends_with("overall: schedulable\n") && !s.contains("NOT"), "{s}");
}

#[test]
fn a_thread_left_out_of_the_model_leaves_the_verdict_not_shown() {
    let (code, s) = analyze(&[&example("two-cpu-traffic.toml")]);
    assert_eq!(code, Some(1), "{s}");
    assert!(
        s.contains("  response-time analysis: schedulable\n  not shown schedulable: not analysed: \"log\"\nCPU 1:"),
        "{s}"
    );
    assert!(
        s.contains("  response-time analysis: schedulable\n  not shown schedulable: not analysed: \"filter\"\n"),
        "{s}"
    );
    assert!(s.contains("note: thread \"log\": sporadic without min_interarrival: not analysed\n"), "{s}");
    assert!(s.ends_with("overall: not shown schedulable (2 threads not analysed: \"log\", \"filter\")\n"), "{s}");
    let (code, json) = analyze(&[&example("two-cpu-traffic.toml"), "--json"]);
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["schedulable"].is_null(), "{v}");
    assert!(v["cpus"][0]["schedulable"].is_null() && v["cpus"][1]["schedulable"].is_null(), "{v}");
    assert_eq!(v["cpus"][0]["not_analysed"], serde_json::json!(["log"]));
    assert_eq!(v["not_analysed"], serde_json::json!([{ "thread": "log", "cpu": 0 }, { "thread": "filter", "cpu": 1 }]));
    // A CPU whose only thread is left out has no section of its own, and still counts.
    let body = "[runtime]\ncpus = 2\n[[thread]]\nname = \"p\"\ncpu = 0\nperiod = \"10ms\"\nwcet = \"1ms\"\n\
                [[thread]]\nname = \"once\"\ncpu = 1\nkind = \"oneshot\"\nwcet = \"1ms\"\n";
    let (code, s) = analyze(&[&scenario("alone", body)]);
    assert_eq!(code, Some(1), "{s}");
    assert!(
        !s.contains("CPU 1:") && s.ends_with("overall: not shown schedulable (1 thread not analysed: \"once\")\n"),
        "{s}"
    );
    // Under a global policy the one verdict covers every CPU.
    let (code, s) = analyze(&[&scenario("alone_global", body), "--policy", "global-edf"]);
    assert_eq!(code, Some(1), "{s}");
    assert!(s.contains("  not shown schedulable: not analysed: \"once\"\n"), "{s}");
    // Known misses still say so: a left-out thread cannot make a failing CPU pass.
    let body = format!("{body}[[thread]]\nname = \"over\"\ncpu = 0\nperiod = \"10ms\"\nwcet = \"10ms\"\n");
    let (code, s) = analyze(&[&scenario("over", &body)]);
    assert_eq!(code, Some(1), "{s}");
    assert!(s.ends_with("overall: NOT schedulable\n"), "{s}");
}

/// The shape reported: `wcet = "8ms"` with steps of 6 to 14 ms. On its declared C the low
/// thread's response was 16 ms within 17 ms and the set "schedulable", while the simulation
/// missed 4 deadlines.
#[test]
fn steps_longer_than_the_wcet_are_analysed_at_their_longest() {
    let body = "[runtime]\npolicy = \"rm\"\nuntil = \"200ms\"\n\n\
                [[thread]]\nname = \"a\"\nperiod = \"20ms\"\nwcet = \"8ms\"\nsteps = [{ work = \"6ms..14ms\" }]\n\n\
                [[thread]]\nname = \"b\"\nperiod = \"40ms\"\ndeadline = \"17ms\"\nwcet = \"8ms\"\n";
    let file = scenario("steps", body);
    let (code, s) = analyze(&[&file]);
    assert_eq!(code, Some(1), "{s}");
    assert!(s.contains("  a                   14ms      20ms      20ms     1        0ns        14ms    ok\n"), "{s}");
    assert!(s.contains("  b                    8ms      40ms      17ms     0        0ns       >22ms  MISS\n"), "{s}");
    assert!(
        s.contains(
            "warning: thread \"a\": its steps can take 14ms of work per job, more than its wcet of 8ms: analysed with \
             C = 14ms\n"
        ),
        "{s}"
    );
    assert!(s.ends_with("overall: NOT schedulable\n"), "{s}");
    let (_, json) = analyze(&[&file, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["cpus"][0]["tasks"][0]["c_ns"], 14_000_000);
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(1));
    // The simulation agrees that b misses.
    let out = tempi(&["simulate", &file]);
    assert!(text(&out.stdout).contains("total misses: 4"), "{}", text(&out.stdout));
    // Steps that stay within the wcet leave the declared figure, without a warning.
    let (code, s) = analyze(&[&scenario("within", &body.replace("6ms..14ms", "6ms..7ms"))]);
    assert_eq!(code, Some(0), "{s}");
    assert!(s.contains("  a                    8ms") && !s.contains("warning"), "{s}");
}

#[test]
fn the_exit_status_is_the_verdict() {
    // 0: shown schedulable.
    assert_eq!(analyze(&[&example("rm-textbook.toml")]).0, Some(0));
    assert_eq!(analyze(&[&example("locks-pcp.toml"), "--json"]).0, Some(0));
    // 1: NOT schedulable, inconclusive, a thread left out, no partition found.
    assert_eq!(analyze(&[&example("locks-inversion.toml")]).0, Some(1));
    assert_eq!(analyze(&[&example("global-dhall.toml")]).0, Some(1));
    assert_eq!(analyze(&[&example("servers.toml")]).0, Some(1));
    let nowhere = "[runtime]\ncpus = 2\npolicy = \"rm\"\n[[thread]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"6ms\"\n\
                   [[thread]]\nname = \"b\"\nperiod = \"10ms\"\nwcet = \"6ms\"\n\
                   [[thread]]\nname = \"c\"\nperiod = \"10ms\"\nwcet = \"6ms\"\n";
    let out = tempi(&["analyze", &scenario("nowhere", nowhere), "--partition", "ffd"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    // 2: an error.
    assert_eq!(analyze(&["no/such/file.toml"]).0, Some(2));
    assert_eq!(analyze(&[&example("rm-textbook.toml"), "--policy", "nope"]).0, Some(2));
    assert_eq!(analyze(&[&example("global-dhall.toml"), "--partition", "wfd"]).0, Some(2));
    // And the help says so.
    let out = tempi(&["analyze", "--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    assert!(help.contains("Exit status: 0 when the scenario is shown schedulable; 1 when it is not shown"), "{help}");
    assert!(help.contains("2 on an error"), "{help}");
}

/// 3 ms of work, 6 ms asleep, 3 ms of work every 10 ms: on its work alone (C = 6 ms) the
/// thread looked "schedulable" while every job but the first missed. A sleep is counted as if
/// the job ran then, which bounds its response, and a miss found so proves nothing: not shown.
#[test]
fn a_job_that_sleeps_is_analysed_as_if_it_ran_then() {
    let body = "[runtime]\nuntil = \"100ms\"\n[[thread]]\nname = \"s\"\nperiod = \"10ms\"\n\
                steps = [{ work = \"3ms\" }, { sleep = \"6ms\" }, { work = \"3ms\" }]\n";
    let file = scenario("sleeps", body);
    let (code, s) = analyze(&[&file]);
    assert_eq!(code, Some(1), "{s}");
    assert!(s.contains("  s                   12ms      10ms      10ms     0        0ns       >12ms  MISS\n"), "{s}");
    assert!(
        s.contains("  response-time analysis: inconclusive (a miss with sleeps counted as work proves none)\n"),
        "{s}"
    );
    assert!(
        s.contains("note: thread \"s\": sleeps 6ms within a job, analysed as if it ran then: C = 6ms + 6ms\n"),
        "{s}"
    );
    // The sleep is not CPU demand: 0.6 of the CPU is no proof of a miss either.
    assert!(!s.contains("NOT schedulable"), "{s}");
    assert!(s.ends_with("overall: not shown schedulable (a sufficient test failed or no test applies)\n"), "{s}");
    let out = tempi(&["simulate", &file]);
    assert!(text(&out.stdout).contains("total misses: 9"), "{}", text(&out.stdout));
    // A short sleep leaves room: 1 + 2 + 1 ms every 10 ms is shown schedulable on C = 4 ms.
    let (code, s) = analyze(&[&scenario("short_sleep", &body.replace("3ms", "1ms").replace("6ms", "2ms"))]);
    assert_eq!(code, Some(0), "{s}");
    assert!(s.contains("  s                    4ms      10ms      10ms     0        0ns         4ms    ok\n"), "{s}");
}

#[test]
fn a_policy_is_analysed_as_what_it_does_not_by_its_name() {
    // Aliases build the same policies as the names `--policy` accepts, so the analysis reads
    // which test applies from the policy built, as admission does: each alias gets the
    // report of the policy it builds, from the heading on.
    let threads = "[[thread]]\nname = \"a\"\nperiod = \"10ms\"\nwcet = \"2ms\"\npriority = 2\n\
                   [[thread]]\nname = \"b\"\nperiod = \"20ms\"\nwcet = \"5ms\"\npriority = 1\n";
    for (alias, name, cpus) in [("fixed-priority", "fp", 1), ("gedf", "global-edf", 2), ("gfp", "global-fp", 2)] {
        let report = |policy: &str| {
            let file = scenario(
                &format!("alias_{policy}"),
                &format!("[runtime]\ncpus = {cpus}\npolicy = \"{policy}\"\n{threads}"),
            );
            let (code, s) = analyze(&[&file]);
            (code, s.split_once('\n').map(|(_, rest)| rest.to_string()).unwrap_or_default())
        };
        let (by_alias, by_name) = (report(alias), report(name));
        assert_eq!(by_alias, by_name, "{alias} and {name}");
        assert_eq!(by_alias.0, Some(0), "{alias}: {}", by_alias.1);
        assert!(!by_alias.1.contains("no analysis applies"), "{alias}: {}", by_alias.1);
    }
}
