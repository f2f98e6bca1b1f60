//! Global scheduling from the command line: the Dhall example's miss and migrations in the
//! text summary and the JSON report, the same file partitioned without misses, and scenario
//! files a global policy cannot run, refused with file, line and reason.

use crate::common;
use common::{example, scratch, tempi, text};

#[test]
fn global_dhall_example_misses_and_reports_migrations() {
    let dir = scratch("global_cli", "dhall");
    let report = dir.join("report.json");
    let out = tempi(&["simulate", &example("global-dhall.toml"), "--report", report.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("scheduler global-edf, 2 CPUs"), "{stdout}");
    assert!(stdout.contains("total misses: 1"), "{stdout}");
    assert!(stdout.contains("total migrations: 5: light0 (2), light1 (1), heavy (2)"), "{stdout}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["migrations"], 5);
    let heavy = json["threads"].as_array().unwrap().iter().find(|t| t["name"] == "heavy").unwrap();
    assert_eq!((heavy["misses"].as_u64(), heavy["migrations"].as_u64()), (Some(1), Some(2)));
    let missed: Vec<&serde_json::Value> =
        json["jobs"].as_array().unwrap().iter().filter(|j| j["missed"] == true).collect();
    assert_eq!(missed.len(), 1);
    assert_eq!((missed[0]["deadline"].as_u64(), missed[0]["finish"].as_u64()), (Some(10_100_000), Some(10_200_000)));

    // Partitioned by the file's `cpu` fields, per-CPU EDF meets every deadline.
    let out = tempi(&["simulate", &example("global-dhall.toml"), "--policy", "edf"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("total misses: 0"), "{stdout}");
    assert!(!stdout.contains("migrations"), "{stdout}");
}

#[test]
fn global_policy_with_a_resource_is_refused_with_its_line() {
    let dir = scratch("global_cli", "resource");
    let file = dir.join("bad.toml");
    let body = "[runtime]\ncpus = 2\npolicy = \"global-fp\"\n\n[[resource]]\nname = \"r\"\n\n[[thread]]\nname = \"t\"\nperiod = \"10ms\"\nsteps = [{ lock = \"r\" }, { work = \"1ms\" }, { unlock = \"r\" }]\n";
    std::fs::write(&file, body).unwrap();
    let out = tempi(&["simulate", file.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{}:3: ", file.display())), "{err}");
    assert!(err.contains("policy \"global-fp\" is global"), "{err}");
    assert!(err.contains("[[resource]] \"r\" (line 5)"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    // The same file is refused when the policy comes from the command line.
    let fine = dir.join("fine.toml");
    std::fs::write(&fine, body.replace("global-fp", "fp")).unwrap();
    let out = tempi(&["simulate", fine.to_str().unwrap(), "--policy", "global-edf"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("locks are not supported"), "{}", text(&out.stderr));
}

#[test]
fn global_policy_in_real_time_is_refused() {
    let out = tempi(&["run", &example("global-dhall.toml"), "--no-pin"]);
    let err = text(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("virtual time only"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn global_policy_with_thread_groups_is_refused() {
    let out = tempi(&["simulate", &example("spring-exec.toml"), "--policy", "global-edf"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("[[group]] (plans place each thread on one CPU) is not supported"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn analyze_judges_global_policies_over_all_cpus() {
    // Not shown schedulable: exit status 1, with the report on stdout.
    let out = tempi(&["analyze", &example("global-dhall.toml")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("all CPUs (2), global: 3 task(s)"), "{stdout}");
    assert!(
        stdout.contains("density test (Goossens-Funk-Baruah): sum C/D = 1.0301 >= m - (m-1) max C/D = 1.0099"),
        "{stdout}"
    );
    assert!(stdout.contains("overall: not shown schedulable"), "{stdout}");

    let out = tempi(&["analyze", &example("global-dhall.toml"), "--policy", "global-fp", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tasks = json["global"]["tasks"].as_array().unwrap();
    let heavy = tasks.iter().find(|t| t["name"] == "heavy").unwrap();
    assert_eq!(heavy["proven"], false);
    let light = tasks.iter().find(|t| t["name"] == "light0").unwrap();
    assert_eq!((light["proven"].as_bool(), light["response_bound_ns"].as_u64()), (Some(true), Some(600_000)));
    assert!(json["schedulable"].is_null());

    // Partitioning has nothing to place under a policy that migrates.
    let out = tempi(&["analyze", &example("global-dhall.toml"), "--partition", "ffd"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("migrates threads between CPUs"), "{}", text(&out.stderr));

    // A light set (4 x 0.3 on 2 CPUs) is shown schedulable, and the simulation agrees.
    let dir = scratch("global_cli", "analyze");
    let file = dir.join("light.toml");
    let mut body = String::from("[runtime]\ncpus = 2\npolicy = \"global-edf\"\nuntil = \"40ms\"\n");
    for i in 0..4 {
        body.push_str(&format!("\n[[thread]]\nname = \"t{i}\"\nperiod = \"10ms\"\nwcet = \"3ms\"\n"));
    }
    std::fs::write(&file, body).unwrap();
    let out = tempi(&["analyze", file.to_str().unwrap()]);
    assert!(text(&out.stdout).contains("overall: schedulable"), "{}", text(&out.stdout));
    assert_eq!(out.status.code(), Some(0));
    let out = tempi(&["simulate", file.to_str().unwrap()]);
    assert!(text(&out.stdout).contains("total misses: 0"), "{}", text(&out.stdout));
}
