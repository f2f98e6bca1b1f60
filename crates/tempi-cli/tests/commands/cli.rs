//! End-to-end tests of the `tempi` binary: every example simulates, bad input is reported with
//! file, line and field and exit code 2, simulations are reproducible, a short real-time run
//! works, thread sets and budgets show up in the reports with exact values.

use crate::common;
use common::{example, scratch, tempi, text};

const EXAMPLES: &[&str] = &[
    "rm-textbook.toml",
    "edf-full-utilisation.toml",
    "round-robin.toml",
    "sporadic-timer.toml",
    "miss-policies.toml",
    "two-cpus.toml",
    "temporal-isolation.toml",
    "servers.toml",
    "locks-inversion.toml",
    "locks-pcp.toml",
    "global-dhall.toml",
];

#[test]
fn every_example_simulates_and_writes_its_files() {
    let dir = scratch("cli", "examples");
    for name in EXAMPLES {
        let stem = name.trim_end_matches(".toml");
        let report = dir.join(format!("{stem}-report.json"));
        let trace = dir.join(format!("{stem}-trace.json"));
        let gantt = dir.join(format!("{stem}.svg"));
        let out = tempi(&[
            "simulate",
            &example(name),
            "--report",
            report.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
            "--gantt",
            gantt.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        for f in [&report, &trace, &gantt] {
            assert!(f.is_file(), "{name}: {} not written", f.display());
            assert!(stdout.contains(&f.display().to_string()), "{name}: no line about {}", f.display());
        }
    }
}

#[test]
fn quiet_prints_nothing() {
    let out = tempi(&["simulate", &example("rm-textbook.toml"), "--quiet"]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
}

/// Write `body` as a scenario, simulate it, and check exit code 2 and the message.
fn assert_bad(test: &str, body: &str, line: usize, needles: &[&str]) {
    let dir = scratch("cli", test);
    let file = dir.join("bad.toml");
    std::fs::write(&file, body).unwrap();
    let out = tempi(&["simulate", file.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{test}: {err}");
    assert!(err.starts_with("tempi: "), "{test}: {err}");
    let at = format!("{}:{line}: ", file.display());
    assert!(err.contains(&at), "{test}: expected {at:?} in {err}");
    for n in needles {
        assert!(err.contains(n), "{test}: expected {n:?} in {err}");
    }
    assert!(!err.contains("panicked"), "{test}: {err}");
}

#[test]
fn bad_duration_names_file_line_thread_and_field() {
    let body = "[runtime]\npolicy = \"fp\"\nuntil = \"10ms\"\n\n[[thread]]\nname = \"t1\"\nperiod = \"4ms\"\n\n\
                [[thread]]\nname = \"t2\"\nperiod = \"4 ms\"\n";
    assert_bad("bad_duration", body, 11, &["thread \"t2\"", "field `period`", "invalid duration \"4 ms\""]);
}

#[test]
fn bad_scenarios_are_input_errors() {
    assert_bad("unknown_field", "[[thread]]\nname = \"a\"\nperod = \"4ms\"\n", 3, &["perod"]);
    assert_bad(
        "unknown_policy",
        "[runtime]\nuntil = \"1ms\"\npolicy = \"lottery\"\n",
        3,
        &["field `policy`", "lottery"],
    );
    assert_bad("rr_without_quantum", "[runtime]\npolicy = \"rr\"\n", 2, &["field `quantum`"]);
    assert_bad("wrong_type", "[[thread]]\nname = \"a\"\n\npriority = \"high\"\n", 4, &["field `priority`"]);
    assert_bad("bad_cpu", "[runtime]\ncpus = 2\n[[thread]]\nname = \"a\"\ncpu = 2\n", 5, &["field `cpu`"]);
    assert_bad(
        "unknown_release",
        "[[thread]]\nname = \"s\"\nkind = \"sporadic\"\n[[timer]]\nat = \"1ms\"\nrelease = [\"nobody\"]\n",
        6,
        &["field `release`", "nobody"],
    );
    assert_bad("syntax", "[runtime]\ncpus = 1\n[[thread]\n", 3, &[]);
}

#[test]
fn bad_sets_are_input_errors() {
    let threads = "[runtime]\nuntil = \"10ms\"\n[[thread]]\nname = \"a\"\n[[thread]]\nname = \"b\"\n";
    let bad = |test: &str, set: &str, line: usize, needles: &[&str]| {
        assert_bad(test, &format!("{threads}{set}"), line, needles);
    };
    bad(
        "set_unknown_member",
        "[[set]]\nname = \"s\"\nmembers = [\"a\", \"ghost\"]\n",
        9,
        &["set \"s\"", "field `members`", "no thread named \"ghost\""],
    );
    bad(
        "set_double_membership",
        "[[set]]\nname = \"s\"\nmembers = [\"a\"]\n\n[[set]]\nname = \"t\"\nmembers = [\"b\", \"a\"]\n",
        13,
        &["set \"t\"", "field `members`", "already in set \"s\" (line 7)"],
    );
    bad(
        "set_budget_without_period",
        "[[set]]\nname = \"s\"\nbudget = \"2ms\"\nreplenish = \"sporadic\"\n",
        10,
        &["set \"s\"", "field `period`", "required"],
    );
    bad(
        "set_server_and_action",
        "[[set]]\nname = \"s\"\nbudget = \"2ms\"\nperiod = \"10ms\"\nserver = \"deferrable\"\naction = \"kill\"\n",
        12,
        &["field `action`", "not both"],
    );
    bad(
        "set_unknown_action",
        "[[set]]\nname = \"s\"\nbudget = \"2ms\"\naction = \"explode\"\n",
        10,
        &["field `action`", "explode", "notify, demote, suspend, kill"],
    );
    bad(
        "set_zero_period",
        "[[set]]\nname = \"s\"\nbudget = \"2ms\"\nreplenish = \"periodic\"\nperiod = \"0ms\"\n",
        11,
        &["field `period`", "must be positive"],
    );
    bad("set_unknown_key", "[[set]]\nname = \"s\"\nbugdet = \"2ms\"\n", 9, &["set \"s\"", "bugdet"]);
    bad(
        "runaway_without_time",
        "[[thread]]\nname = \"c\"\nforever = true\nsteps = [{ sleep = \"0ms\" }]\n",
        9,
        &["thread \"c\"", "field `forever`"],
    );
}

/// Simulate an example with a JSON report and return the parsed report and stdout.
fn report_of(test: &str, name: &str, extra: &[&str]) -> (serde_json::Value, String) {
    let dir = scratch("cli", test);
    let report = dir.join("report.json");
    let file = example(name);
    let mut args = vec!["simulate", file.as_str(), "--report", report.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = tempi(&args);
    assert!(out.status.success(), "{name}: {}", text(&out.stderr));
    let json = std::fs::read_to_string(&report).unwrap();
    (serde_json::from_str(&json).unwrap(), text(&out.stdout))
}

const MS: u64 = 1_000_000;

#[test]
fn temporal_isolation_caps_the_runaway_exactly() {
    let (v, stdout) = report_of("isolation", "temporal-isolation.toml", &[]);
    assert!(stdout.contains("total misses: 0"), "{stdout}");
    for t in v["threads"].as_array().unwrap() {
        assert_eq!(t["misses"], 0, "{}", t["name"]);
    }
    let runaway = &v["threads"][0];
    assert_eq!((runaway["name"].as_str(), runaway["cpu_time"].as_u64()), (Some("runaway"), Some(40 * MS)));
    assert_eq!((runaway["completed"].as_u64(), runaway["outcome"].is_null()), (Some(0), true));
    assert_eq!(v["threads"][1]["completed"], 20);
    assert_eq!(v["threads"][2]["completed"], 10);
    // Exactly one set: 2 ms per 10 ms over 200 ms, refilled at 10, 20, ..., 190.
    let sets = v["sets"].as_array().unwrap();
    assert_eq!(sets.len(), 1);
    let sandbox = &sets[0];
    assert_eq!(sandbox["id"], 0);
    assert_eq!(sandbox["name"], "sandbox");
    assert_eq!(sandbox["members"], serde_json::json!(["runaway"]));
    assert_eq!(sandbox["cpu_time"], 40 * MS);
    assert_eq!(sandbox["exhaustions"], 20);
    assert_eq!(sandbox["replenishments"], 19);
    assert_eq!(sandbox["destroyed"], false);
    let events = v["budget_events"].as_array().unwrap();
    assert_eq!(events.len(), 39);
    // Exhausted at 2 ms past every period boundary, with 2 ms more consumed each time;
    // refilled to the full 2 ms at each boundary.
    for (k, e) in events.iter().enumerate() {
        let n = k as u64 / 2;
        let expected = if k % 2 == 0 {
            serde_json::json!({"set": "sandbox", "kind": "exhausted", "time": (10 * n + 2) * MS, "value": 2 * (n + 1) * MS})
        } else {
            serde_json::json!({"set": "sandbox", "kind": "replenished", "time": 10 * (n + 1) * MS, "value": 2 * MS})
        };
        assert_eq!(e, &expected, "event {k}");
    }
    // The summary lists the set.
    let row = stdout.lines().find(|l| l.starts_with("sandbox")).expect("a row for the set");
    assert_eq!(row.split_whitespace().collect::<Vec<_>>(), ["sandbox", "40.000", "20", "19", "runaway"]);
}

#[test]
fn servers_example_serves_requests_and_keeps_the_task_on_time() {
    let (v, _) = report_of("servers", "servers.toml", &[]);
    let requests = v["threads"].as_array().unwrap().iter().find(|t| t["name"] == "requests").unwrap();
    // 3 ms each, 2 ms at once, the rest one server period after the activation began.
    assert_eq!((requests["completed"].as_u64(), requests["response_max"].as_u64()), (Some(2), Some(6 * MS)));
    assert_eq!(v["threads"][0]["misses"], 0);
    let server = &v["sets"][0];
    assert_eq!((server["cpu_time"].as_u64(), server["exhaustions"].as_u64()), (Some(6 * MS), Some(2)));
    let times: Vec<(String, u64)> = v["budget_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["kind"].as_str().unwrap().to_string(), e["time"].as_u64().unwrap() / MS))
        .collect();
    let expected: Vec<(String, u64)> = [
        ("exhausted", 4),
        ("replenished", 7),
        ("replenished", 12),
        ("exhausted", 23),
        ("replenished", 26),
        ("replenished", 31),
    ]
    .iter()
    .map(|&(k, t)| (k.to_string(), t))
    .collect();
    assert_eq!(times, expected);
}

#[test]
fn killed_runaway_is_reported() {
    let dir = scratch("cli", "killed");
    let file = dir.join("kill.toml");
    let body = std::fs::read_to_string(example("temporal-isolation.toml"))
        .unwrap()
        .replace("server = \"deferrable\"", "replenish = \"periodic\"\naction = \"kill\"");
    std::fs::write(&file, body).unwrap();
    let report = dir.join("report.json");
    let out = tempi(&["simulate", file.to_str().unwrap(), "--until", "40ms", "--report", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("killed threads (budget exhausted): runaway"), "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(v["threads"][0]["outcome"], "killed");
    assert_eq!(v["threads"][0]["cpu_time"], 2 * MS);
    // Killed threads leave their set.
    assert_eq!(v["sets"][0]["members"], serde_json::json!([]));
}

#[test]
fn bad_flags_exit_with_2() {
    let out = tempi(&["simulate", &example("rm-textbook.toml"), "--until", "4 ms"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("tempi: "));
    let out = tempi(&["simulate", "no/such/file.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no/such/file.toml"));
    let out = tempi(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn help_describes_every_subcommand() {
    let out = tempi(&["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for cmd in ["simulate", "run", "bench", "analyze"] {
        assert!(help.contains(cmd), "{help}");
    }
    for cmd in ["simulate", "run", "bench", "analyze"] {
        let out = tempi(&[cmd, "--help"]);
        assert!(out.status.success(), "{cmd} --help");
    }
    assert!(text(&tempi(&["run", "--help"]).stdout).contains("--no-pin"));
}

#[test]
fn simulation_is_byte_for_byte_reproducible() {
    let dir = scratch("cli", "determinism");
    for name in ["rm-textbook.toml", "miss-policies.toml", "temporal-isolation.toml"] {
        let mut traces = Vec::new();
        for run in 0..2 {
            let trace = dir.join(format!("{name}-{run}.json"));
            let report = dir.join(format!("{name}-{run}-report.json"));
            let out = tempi(&[
                "simulate",
                &example(name),
                "--quiet",
                "--trace",
                trace.to_str().unwrap(),
                "--report",
                report.to_str().unwrap(),
            ]);
            assert!(out.status.success(), "{}", text(&out.stderr));
            traces.push((std::fs::read(&trace).unwrap(), std::fs::read(&report).unwrap()));
        }
        assert!(traces[0] == traces[1], "{name}: two simulations differ");
    }
}

#[test]
fn real_time_run_of_the_textbook_example() {
    let out = tempi(&["run", &example("rm-textbook.toml"), "--until", "30ms", "--no-pin"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// `os_backed = true` on a `[[thread]]`: in real time the thread runs on an OS thread of its
/// own, beside an ordinary thread of its CPU; both complete their jobs.
#[test]
fn real_time_run_with_an_os_backed_thread() {
    let dir = scratch("cli", "os_backed");
    let file = dir.join("os-backed.toml");
    std::fs::write(
        &file,
        "[runtime]\npolicy = \"fp\"\n[[thread]]\nname = \"os\"\nperiod = \"4ms\"\nwcet = \"1ms\"\nmax_jobs = 3\npriority = 1\nos_backed = true\n\
         [[thread]]\nname = \"co\"\nperiod = \"2ms\"\nwcet = \"500us\"\nmax_jobs = 3\npriority = 2\n",
    )
    .unwrap();
    let report = dir.join("report.json");
    let out =
        tempi(&["run", file.to_str().unwrap(), "--until", "2s", "--no-pin", "--report", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    for t in v["threads"].as_array().unwrap() {
        assert_eq!(t["completed"], 3, "{}", t["name"]);
    }
}

#[test]
fn real_time_run_needs_a_horizon() {
    let dir = scratch("cli", "no_horizon");
    let file = dir.join("forever.toml");
    std::fs::write(&file, "[[thread]]\nname = \"p\"\nperiod = \"1ms\"\n").unwrap();
    let out = tempi(&["run", file.to_str().unwrap(), "--no-pin"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--until"));
}

#[test]
fn lock_protocol_flag_shows_the_inversion() {
    let out = tempi(&["simulate", &example("locks-inversion.toml")]);
    assert!(text(&out.stdout).contains("total misses: 2"), "{}", text(&out.stdout));
    let out = tempi(&["simulate", &example("locks-inversion.toml"), "--lock-protocol", "bpi"]);
    assert!(text(&out.stdout).contains("total misses: 0"), "{}", text(&out.stdout));
    let out = tempi(&["simulate", &example("locks-inversion.toml"), "--lock-protocol", "spin"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown locking protocol \"spin\""), "{}", text(&out.stderr));
}

#[test]
fn bad_locks_are_input_errors() {
    let two = "[[resource]]\nname = \"R\"\n[[resource]]\nname = \"S\"\n";
    let cases: &[(&str, usize, &[&str])] = &[
        (
            "[[resource]]\nname = \"R\"\nprotocol = \"spin\"\n",
            3,
            &["resource \"R\"", "field `protocol`", "unknown locking protocol"],
        ),
        ("[[resource]]\nname = \"R\"\ncpu = 2\n", 3, &["field `cpu`"]),
        ("[[resource]]\nname = \"R\"\n[[resource]]\nname = \"R\"\n", 4, &["duplicate resource name"]),
        ("[[resource]]\nname = \"R\"\nceling = 3\n", 3, &["resource \"R\"", "celing"]),
        (
            "[[thread]]\nname = \"a\"\nsteps = [{ lock = \"Q\" }]\n",
            3,
            &["thread \"a\"", "field `lock`", "no resource named \"Q\""],
        ),
    ];
    for (i, (body, line, needles)) in cases.iter().enumerate() {
        assert_bad(&format!("lock{i}"), body, *line, needles);
    }
    let nested = [
        (
            "steps = [\n  { lock = \"R\" },\n  { lock = \"S\" },\n  { unlock = \"R\" },\n]\n",
            10,
            "field `unlock`: resource \"R\" is not the innermost lock held (that is \"S\")",
        ),
        ("steps = [{ unlock = \"R\" }]\n", 7, "field `unlock`: resource \"R\" is not held"),
        ("steps = [{ lock = \"R\" }, { lock = \"R\" }]\n", 7, "already held"),
        ("steps = [{ lock = \"R\", work = \"1ms\" }]\n", 7, "exactly one"),
    ];
    for (i, (steps, line, needle)) in nested.iter().enumerate() {
        let body = format!("{two}[[thread]]\nname = \"a\"\n{steps}");
        assert_bad(&format!("nest{i}"), &body, *line, &["thread \"a\"", needle]);
    }
}

#[test]
fn analyze_prints_blocking_response_times_and_verdict() {
    let out = tempi(&["analyze", &example("locks-pcp.toml")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    for needle in ["sensor", "3ms", "Liu & Layland with blocking: passes", "overall: schedulable", "bpi 3ms"] {
        assert!(s.contains(needle), "{needle:?} in {s}");
    }
    let out = tempi(&["analyze", &example("locks-inversion.toml")]);
    let s = text(&out.stdout);
    assert!(s.contains("unbounded") && s.contains("overall: NOT schedulable"), "{s}");
    assert_eq!(out.status.code(), Some(1));
    let out = tempi(&["analyze", &example("locks-inversion.toml"), "--lock-protocol", "bpi", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schedulable"], true);
    let high = &v["cpus"][0]["tasks"][0];
    assert_eq!((high["thread"].as_str(), high["blocking_ns"].as_u64()), (Some("high"), Some(4_000_000)));
    assert_eq!(high["response"]["ns"].as_u64(), Some(5_000_000));
    assert_eq!(high["blocking_by_protocol"]["bp"], serde_json::Value::Null);
    // EDF: the EDF tests, no response times.
    let out = tempi(&["analyze", &example("edf-full-utilisation.toml")]);
    let s = text(&out.stdout);
    assert!(s.contains("EDF, kernelized-monitor bound") && s.contains("not applicable under EDF"), "{s}");
    // EDF with a bpi lock: only the test with inheritance blocking applies, and it passes.
    let out = tempi(&["analyze", &example("locks-inversion.toml"), "--policy", "edf", "--lock-protocol", "bpi"]);
    let s = text(&out.stdout);
    assert!(s.contains("Baker's SRP test: not applicable"), "{s}");
    assert!(s.contains("EDF with inheritance blocking") && s.contains("overall: schedulable"), "{s}");
    let out =
        tempi(&["analyze", &example("locks-inversion.toml"), "--policy", "edf", "--lock-protocol", "bpi", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["cpus"][0]["edf_inheritance"]["passed"], true);
    // A scenario's rcs lock is held with a guard, which RCS waits for: a guarded section blocks
    // for its length (4 ms, as under bpi), not for a restart cost, and nothing is redone.
    let out = tempi(&["analyze", &example("locks-inversion.toml"), "--lock-protocol", "rcs", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["notes"].to_string().contains("analysed as guarded sections"), "{v}");
    let high = &v["cpus"][0]["tasks"][0];
    assert_eq!(high["blocking_ns"].as_u64(), Some(4_000_000));
    assert_eq!(high["blocking_by_protocol"]["rcs"].as_u64(), Some(4_000_000));
    assert_eq!(high["response"]["ns"].as_u64(), Some(5_000_000));
    // Round robin: nothing applies, and it says so.
    let out = tempi(&["analyze", &example("round-robin.toml")]);
    assert!(text(&out.stdout).contains("no analysis applies"), "{}", text(&out.stdout));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn unused_ceiling_resource_is_refused_alike_by_every_command() {
    let dir = scratch("cli", "unused_ceiling");
    let file = dir.join("unused.toml");
    let body = "[runtime]\nuntil = \"10ms\"\n\n[[resource]]\nname = \"r\"\nprotocol = \"pcp\"\n\n\
                [[thread]]\nname = \"a\"\nperiod = \"5ms\"\nwcet = \"1ms\"\n";
    std::fs::write(&file, body).unwrap();
    let at = format!("{}:4: resource \"r\": protocol \"pcp\" needs a ceiling", file.display());
    for args in [&["simulate"][..], &["simulate", "--quiet"], &["run", "--no-pin"], &["analyze"]] {
        let mut all = args.to_vec();
        all.push(file.to_str().unwrap());
        let out = tempi(&all);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("tempi: ") && err.contains(&at), "{args:?}: {err}");
    }
    // The same resource with a declared ceiling, or under a protocol without one, is fine.
    let declared = body.replace("protocol = \"pcp\"\n", "protocol = \"pcp\"\nceiling = 3\n");
    std::fs::write(&file, declared).unwrap();
    for cmd in ["simulate", "analyze"] {
        let out = tempi(&[cmd, file.to_str().unwrap()]);
        assert!(out.status.success(), "{cmd}: {}", text(&out.stderr));
    }
    // Switching every resource to a ceiling protocol from the command line is checked too.
    std::fs::write(&file, body.replace("\"pcp\"", "\"bpi\"")).unwrap();
    for cmd in ["simulate", "analyze"] {
        let out = tempi(&[cmd, file.to_str().unwrap(), "--lock-protocol", "srp"]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {err}");
        assert!(err.contains("resource \"r\": protocol \"srp\" needs a ceiling"), "{cmd}: {err}");
    }
}

#[test]
fn zero_horizon_is_refused_by_the_flag_as_by_the_file() {
    let out = tempi(&["simulate", &example("rm-textbook.toml"), "--until", "0"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with("tempi: ") && err.contains("--until") && err.contains("must be positive"), "{err}");
    let out = tempi(&["run", &example("rm-textbook.toml"), "--until", "0ms"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let dir = scratch("cli", "zero_until");
    let file = dir.join("zero.toml");
    std::fs::write(&file, "[runtime]\nuntil = \"0\"\n").unwrap();
    let out = tempi(&["simulate", file.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("field `until`: must be positive"), "{err}");
    // A positive flag still overrides the file.
    let out = tempi(&["simulate", &example("rm-textbook.toml"), "--until", "1ns", "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn analyze_answers_at_once_when_higher_priorities_fill_the_cpu() {
    let dir = scratch("cli", "analyze_overloaded");
    let file = dir.join("full.toml");
    std::fs::write(
        &file,
        "[[thread]]\nname = \"full\"\nperiod = \"1us\"\nwcet = \"1us\"\npriority = 2\n\n\
         [[thread]]\nname = \"slow\"\nperiod = \"10s\"\nwcet = \"1us\"\npriority = 1\n",
    )
    .unwrap();
    let out = tempi(&["analyze", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    for needle in [
        "NOT schedulable: utilisation 1.0000001 > 1 on CPU 0",
        "overloaded",
        "thread \"slow\": the threads of its priority and above have a utilisation of 1 or more",
        "overall: NOT schedulable",
    ] {
        assert!(s.contains(needle), "{needle:?} in {s}");
    }
    let out = tempi(&["analyze", file.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["cpus"][0]["tasks"][1]["response"]["kind"], "overloaded");
    assert_eq!(v["schedulable"], false);
}

/// 300,000 jobs write more records than the default trace buffer holds: a run without trace
/// outputs must not record (nor warn about dropping) any, and its figures are the same.
#[test]
fn simulate_records_the_trace_only_for_outputs_that_use_it() {
    let dir = scratch("cli", "trace_only_when_used");
    let file = dir.join("long.toml");
    std::fs::write(
        &file,
        "[runtime]\nuntil = \"3s\"\n[[thread]]\nname = \"fast\"\nperiod = \"10us\"\nwcet = \"1us\"\n",
    )
    .unwrap();
    let out = tempi(&["simulate", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(!stderr.contains("dropped") && !stdout.contains("dropped"), "{stderr}{stdout}");
    assert!(stdout.contains("300000  300000"), "{stdout}");
    // With a report the trace is recorded, so the buffer overflows, and the statistics agree.
    let report = dir.join("report.json");
    let out = tempi(&["simulate", file.to_str().unwrap(), "--report", report.to_str().unwrap(), "--quiet"]);
    assert!(text(&out.stderr).contains("trace records were dropped"), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(v["trace_dropped"].as_u64().unwrap() > 0);
    assert_eq!(
        (v["threads"][0]["jobs"].as_u64(), v["threads"][0]["completed"].as_u64()),
        (Some(300_000), Some(300_000))
    );
    // A bp or bpi lock keeps the trace, so that the schedule does not depend on the outputs.
    let plain = tempi(&["simulate", &example("locks-inversion.toml")]);
    let with_report = tempi(&["simulate", &example("locks-inversion.toml"), "--report", report.to_str().unwrap()]);
    let summary = text(&with_report.stdout).lines().filter(|l| !l.starts_with("wrote")).collect::<Vec<_>>().join("\n");
    assert_eq!(text(&plain.stdout).trim_end(), summary.trim_end());
}
