//! `--csv`: one row per job, every column checked exactly on a hand-built scenario in virtual
//! time, the jobs a full trace lost counted on stderr, and the output path checked as
//! `--report`'s is.

use crate::common::{example, scratch, tempi, text};

/// One CPU, fixed priority: `hi` (3 ms every 10 ms) preempts `lo` (8 ms, due 9 ms after its
/// release), which misses and finishes at 14 ms; `ab` is abandoned at its deadline (15 ms)
/// after 1 ms of work; `tail` is still running when the run ends at 19 ms.
const SCENARIO: &str = r#"
[runtime]
cpus = 1
policy = "fp"
until = "19ms"

[[thread]]
name = "hi"
period = "10ms"
wcet = "3ms"
priority = 3

[[thread]]
name = "lo"
period = "20ms"
deadline = "9ms"
wcet = "8ms"
priority = 2

[[thread]]
name = "ab"
kind = "oneshot"
deadline = "15ms"
miss_policy = "abort"
wcet = "4ms"
priority = 1

[[thread]]
name = "tail"
kind = "oneshot"
wcet = "10ms"
priority = 0
"#;

#[test]
fn every_column_of_every_job_is_exact_in_virtual_time() {
    let dir = scratch("csv", "columns");
    let file = dir.join("jobs.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    let csv = dir.join("jobs.csv");
    for command in [&["simulate"][..], &["simulate", "--quiet"][..]] {
        let mut args = command.to_vec();
        args.extend([file.to_str().unwrap(), "--csv", csv.to_str().unwrap()]);
        let out = tempi(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stderr), "");
        assert_eq!(
            std::fs::read_to_string(&csv).unwrap(),
            "thread,thread_id,cpu,job,release,start,finish,deadline,response,execution,lateness,preemptions,missed,outcome\n\
             hi,0,0,0,0,0,3000000,10000000,3000000,3000000,-7000000,0,false,met\n\
             lo,1,0,0,0,3000000,14000000,9000000,14000000,8000000,5000000,1,true,missed\n\
             ab,2,0,0,0,14000000,15000000,15000000,15000000,1000000,0,0,true,aborted\n\
             tail,3,0,0,0,15000000,,,,4000000,,0,false,running\n\
             hi,0,0,1,10000000,10000000,13000000,20000000,3000000,3000000,-7000000,0,false,met\n"
        );
        if command.len() == 1 {
            assert!(text(&out.stdout).contains(&format!("wrote per-job CSV to {}\n", csv.display())));
        } else {
            assert_eq!(text(&out.stdout), "");
        }
    }
}

#[test]
fn a_full_trace_is_never_silently_short_of_rows() {
    let dir = scratch("csv", "truncated");
    let file = dir.join("fast.toml");
    // 300 000 jobs of 4 records each overflow the 2^20 records of the trace buffer.
    std::fs::write(
        &file,
        "[runtime]\ncpus = 1\nuntil = \"3s\"\n\n[[thread]]\nname = \"fast\"\nperiod = \"10us\"\nwcet = \"1us\"\n",
    )
    .unwrap();
    let csv = dir.join("fast.csv");
    let out = tempi(&["simulate", file.to_str().unwrap(), "--quiet", "--csv", csv.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;
    assert_eq!(rows, 262_144);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "tempi: warning: --csv {}: 37856 jobs have no row (their release records were among the 151425 trace \
             records dropped, per-CPU buffer full)",
            csv.display()
        )),
        "{stderr}"
    );
    assert_eq!(rows + 37_856, 300_000, "every job is a row or counted as missing");
}

#[test]
fn an_unwritable_csv_path_is_refused_before_the_run() {
    let dir = scratch("csv", "paths");
    let rm = example("rm-textbook.toml");
    let out = tempi(&["simulate", &rm, "--csv", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!("tempi: --csv {}: is a directory; give the name of a file to write\n", dir.display())
    );
    let missing = dir.join("no").join("j.csv");
    let out = tempi(&["run", &rm, "--until", "1ms", "--no-pin", "--csv", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!(
            "tempi: --csv {}: directory {} does not exist (tempi does not create directories)\n",
            missing.display(),
            dir.join("no").display()
        )
    );
    let same = dir.join("same");
    let out = tempi(&["simulate", &rm, "--report", same.to_str().unwrap(), "--csv", same.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!("tempi: --report and --csv both name {}: give each output its own file\n", same.display())
    );
    assert!(!same.exists());
}

#[test]
fn a_real_time_run_writes_one_row_per_job_too() {
    let dir = scratch("csv", "real_time");
    let (csv, report) = (dir.join("rm.csv"), dir.join("rm.json"));
    let rm = example("rm-textbook.toml");
    let out = tempi(&[
        "run",
        &rm,
        "--until",
        "24ms",
        "--no-pin",
        "--quiet",
        "--csv",
        csv.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let body = std::fs::read_to_string(&csv).unwrap();
    let mut lines = body.lines();
    assert_eq!(
        lines.next(),
        Some("thread,thread_id,cpu,job,release,start,finish,deadline,response,execution,lateness,preemptions,missed,outcome")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.iter().all(|r| r.len() == 14), "{body}");
    // As many rows per thread as the run released jobs (its exact statistics).
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    for t in v["threads"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        assert_eq!(rows.iter().filter(|r| r[0] == name).count() as u64, t["jobs"].as_u64().unwrap(), "{name}");
    }
}
