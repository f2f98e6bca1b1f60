//! End-to-end tests of the `tempi` binary: every example simulates, bad input is reported with
//! file, line and field and exit code 2, simulations are reproducible, a short real-time run
//! works.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const EXAMPLES: &[&str] = &[
    "rm-textbook.toml",
    "edf-full-utilisation.toml",
    "round-robin.toml",
    "sporadic-timer.toml",
    "miss-policies.toml",
    "two-cpus.toml",
];

fn tempi(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tempi")).args(args).output().expect("the tempi binary starts")
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name).display().to_string()
}

/// A fresh directory per test, so tests running in parallel do not share files.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli").join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn every_example_simulates_and_writes_its_files() {
    let dir = scratch("examples");
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
    let dir = scratch(test);
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
    for cmd in ["simulate", "run", "bench"] {
        assert!(help.contains(cmd), "{help}");
    }
    for cmd in ["simulate", "run", "bench"] {
        let out = tempi(&[cmd, "--help"]);
        assert!(out.status.success(), "{cmd} --help");
    }
    assert!(text(&tempi(&["run", "--help"]).stdout).contains("--no-pin"));
}

#[test]
fn simulation_is_byte_for_byte_reproducible() {
    let dir = scratch("determinism");
    for name in ["rm-textbook.toml", "miss-policies.toml"] {
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

#[test]
fn real_time_run_needs_a_horizon() {
    let dir = scratch("no_horizon");
    let file = dir.join("forever.toml");
    std::fs::write(&file, "[[thread]]\nname = \"p\"\nperiod = \"1ms\"\n").unwrap();
    let out = tempi(&["run", file.to_str().unwrap(), "--no-pin"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--until"));
}
