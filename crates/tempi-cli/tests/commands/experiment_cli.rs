//! `tempi experiment rtmach-{1,2,3}` and `ports-{1,2}`: the tables have the paper's shape,
//! the conclusion checks are printed, and the rtmach breakdown points are the exact ones of our
//! deterministic virtual-time runs (the ports timings are wall time, so only their shape and
//! the workload's counts are checked). Without simulated costs the breakdown points are the ones worked out by hand in
//! docs/EXPERIMENTS.md.

use serde_json::Value;

use crate::common;
use common::tempi;

fn text(name: &str) -> String {
    text_with(name, &[])
}

fn text_with(name: &str, extra: &[&str]) -> String {
    let mut args = vec!["experiment", name, "--quick"];
    args.extend_from_slice(extra);
    let out = tempi(&args);
    assert!(out.status.success(), "{name}: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn json(name: &str, extra: &[&str]) -> Value {
    let mut args = vec!["experiment", name, "--quick", "--json"];
    args.extend_from_slice(extra);
    let out = tempi(&args);
    assert!(out.status.success(), "{name}: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).expect("utf-8 output");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{name}: not one JSON object ({e}):\n{stdout}"))
}

fn rcs_available(v: &Value) -> bool {
    v["rcs_available"].as_bool().expect("`rcs_available` is a boolean")
}

/// `(policy, max EXE in µs)` of the main rows (not the supplementary one).
fn breakdowns(v: &Value) -> Vec<(String, Option<u64>)> {
    v["rows"]
        .as_array()
        .expect("a `rows` array")
        .iter()
        .filter(|r| r["deadlines_not_counted"].is_null())
        .map(|r| (r["policy"].as_str().unwrap().to_string(), r["max_exe_us"].as_u64()))
        .collect()
}

fn expected(v: &Value, rows: &[(&str, u64)]) -> Vec<(String, Option<u64>)> {
    rows.iter().filter(|(p, _)| *p != "rcs" || rcs_available(v)).map(|(p, e)| (p.to_string(), Some(*e))).collect()
}

fn conclusions(v: &Value) -> Vec<(String, Option<bool>)> {
    v["conclusions"]
        .as_array()
        .expect("a `conclusions` array")
        .iter()
        .map(|c| (c["claim"].as_str().unwrap().to_string(), c["holds"].as_bool()))
        .collect()
}

#[test]
fn text_tables_have_the_papers_shape_and_print_the_checks() {
    for (name, paper_rows) in [
        ("rtmach-1", ["BP", "BPI", "KM", "PCP", "RCS"].as_slice()),
        ("rtmach-2", ["BPI", "KM", "PCP"].as_slice()),
        ("rtmach-3", ["BPI", "RCS"].as_slice()),
    ] {
        let out = text(name);
        let header = out.lines().find(|l| l.starts_with("Lock policy")).unwrap_or_else(|| panic!("{name}:\n{out}"));
        for col in ["Max exec time (ms)", "U (%)", "paper: max exec (ms)"] {
            assert!(header.contains(col), "{name}: no `{col}` column:\n{out}");
        }
        let rcs = !out.contains("RCS: not available in this build");
        for p in ["BP", "BPI", "KM", "PCP", "RCS"] {
            if p == "RCS" && !rcs {
                continue;
            }
            let row = out
                .lines()
                .find(|l| l.split_whitespace().next() == Some(p))
                .unwrap_or_else(|| panic!("{name}: no {p} row:\n{out}"));
            // Our max exec time and utilisation, then the paper's where it has a number.
            let cells: Vec<&str> = row.split('|').collect();
            assert_eq!(cells.len(), 3, "{name}: {row}");
            let ours: Vec<&str> = cells[0].split_whitespace().collect();
            assert!(ours[1].parse::<f64>().is_ok() && ours[2].parse::<f64>().is_ok(), "{name}: {row}");
            let paper: Vec<&str> = cells[1].split_whitespace().collect();
            assert_eq!(paper[0] != "-", paper_rows.contains(&p), "{name}: {row}");
        }
        assert!(out.contains("Paper's conclusions, checked on these runs:"), "{name}:\n{out}");
        assert!(out.contains("[holds]") || out.contains("[does not hold]"), "{name}:\n{out}");
    }
}

#[test]
fn rtmach_1_breakdowns_and_conclusions() {
    let v = json("rtmach-1", &[]);
    assert_eq!(v["horizon_ms"], 12020);
    assert_eq!(
        breakdowns(&v),
        expected(&v, &[("bp", 18_000), ("bpi", 186_000), ("km", 187_000), ("pcp", 185_000), ("rcs", 174_000)])
    );
    let c = conclusions(&v);
    assert!(c[0].0.starts_with("BP breaks down far below"), "{c:?}");
    assert_eq!(c[0].1, Some(true), "{c:?}");
    assert!(c[1].0.starts_with("RCS reaches the highest"), "{c:?}");
    if rcs_available(&v) {
        // Checked, whatever the verdict (it does not hold: D's restarted section misses).
        assert!(c[1].1.is_some(), "{c:?}");
        let extra = v["rows"].as_array().unwrap().iter().find(|r| r["deadlines_not_counted"] == "D").unwrap();
        assert_eq!(extra["max_exe_us"], 205_000);
    } else {
        assert_eq!(c[1].1, None);
    }
}

#[test]
fn rtmach_2_breakdowns_and_conclusions() {
    let v = json("rtmach-2", &[]);
    assert_eq!(v["horizon_ms"], 410);
    assert_eq!(
        breakdowns(&v),
        expected(&v, &[("bp", 158_000), ("bpi", 158_000), ("km", 89_000), ("pcp", 88_000), ("rcs", 157_000)])
    );
    let c = conclusions(&v);
    assert_eq!(c.len(), 1);
    assert!(c[0].0.starts_with("BPI breaks down above KM and PCP"), "{c:?}");
    assert_eq!(c[0].1, Some(true));
}

#[test]
fn rtmach_3_breakdowns_and_conclusions() {
    let v = json("rtmach-3", &[]);
    assert_eq!(v["horizon_ms"], 1260);
    assert_eq!(
        breakdowns(&v),
        expected(&v, &[("bp", 63_000), ("bpi", 63_000), ("km", 63_000), ("pcp", 62_000), ("rcs", 16_000)])
    );
    let c = conclusions(&v);
    assert!(c[0].0.starts_with("BPI breaks down above RCS"), "{c:?}");
    assert_eq!(c[0].1, if rcs_available(&v) { Some(true) } else { None });
}

#[test]
fn without_costs_the_breakdowns_are_the_hand_computed_ones() {
    let v = json("rtmach-1", &["--no-costs"]);
    assert_eq!(v["costs"], "none");
    assert_eq!(
        breakdowns(&v),
        expected(&v, &[("bp", 20_000), ("bpi", 190_000), ("km", 190_000), ("pcp", 190_000), ("rcs", 180_000)])
    );
    let v = json("rtmach-2", &["--no-costs"]);
    // BP, BPI and RCS reach 100 % utilisation (EXE = 160 ms) without a miss.
    assert_eq!(
        breakdowns(&v),
        expected(&v, &[("bp", 160_000), ("bpi", 160_000), ("km", 89_000), ("pcp", 90_000), ("rcs", 160_000)])
    );
    let v = json("rtmach-3", &["--no-costs"]);
    assert_eq!(
        breakdowns(&v),
        expected(&v, &[("bp", 64_000), ("bpi", 64_000), ("km", 64_000), ("pcp", 64_000), ("rcs", 20_000)])
    );
}

#[test]
fn unknown_experiment_is_a_usage_error() {
    let out = tempi(&["experiment", "rtmach-9"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `(slots, accepted + rejected, engine names)` of each row of a `ports-*` JSON report.
fn ports_rows(v: &Value) -> Vec<(u64, u64, Vec<String>)> {
    v["rows"]
        .as_array()
        .expect("a `rows` array")
        .iter()
        .map(|r| {
            let engines = r["engines"].as_array().expect("an `engines` array");
            for e in engines {
                for key in ["insert_ns", "gc_ns", "finish_ns", "total_ns"] {
                    assert!(e[key].as_f64().is_some_and(|x| x >= 0.0), "{key} in {e}");
                }
                let parts = ["insert_ns", "gc_ns", "finish_ns"].map(|k| e[k].as_f64().unwrap());
                assert!((parts.iter().sum::<f64>() - e["total_ns"].as_f64().unwrap()).abs() <= 2.0, "{e}");
            }
            (
                r["slots"].as_u64().unwrap(),
                r["accepted"].as_u64().unwrap() + r["rejected"].as_u64().unwrap(),
                engines.iter().map(|e| e["engine"].as_str().unwrap().to_string()).collect(),
            )
        })
        .collect()
}

#[test]
fn ports_experiments_report_every_length_and_engine_with_checked_conclusions() {
    for (name, heading, paper) in
        [("ports-1", "PORTS table 1", "paper orig/g"), ("ports-2", "PORTS table 2", "paper orig/n")]
    {
        let t = text(name);
        assert!(t.starts_with(&format!("{name}: {heading}")), "{t}");
        assert!(t.contains(paper) && t.contains("8000 jobs per length"), "{t}");
        assert!(t.contains("Paper's conclusions, checked on these runs:"), "{t}");
        assert!(t.contains("[holds]") || t.contains("[does not hold]"), "{t}");
        let v = json(name, &[]);
        assert_eq!(v["experiment"], name);
        assert_eq!(v["jobs_per_length"], 8000);
        let engines = ["linear", "min_laxity", "hashed", "tree"].map(String::from).to_vec();
        assert_eq!(
            ports_rows(&v),
            [100, 500, 1000, 3000].map(|n| (n, 8000, engines.clone())).to_vec(),
            "every length schedules every job through every engine"
        );
        let rows = v["rows"].as_array().unwrap();
        // Garbage collection keeps each list at its length: it runs, and the list never
        // averages more than the length.
        for r in rows {
            assert!(r["collections"].as_u64().unwrap() > 0, "{r}");
            assert!(r["mean_list_length"].as_f64().unwrap() <= r["slots"].as_f64().unwrap(), "{r}");
        }
        let conclusions = v["conclusions"].as_array().unwrap();
        assert!(conclusions.iter().all(|c| c["holds"].is_boolean()), "every conclusion is checked: {v}");
    }
}

/// `--workload`: the seed-like workload is the default; `both` runs the two workloads on the
/// same jobs per length and checks the same conclusions under each; the choice is refused for
/// experiments other than `ports-*`.
#[test]
fn ports_workloads_default_to_seed_like_and_both_checks_every_conclusion_under_each() {
    let default = json("ports-1", &[]);
    assert_eq!(default["workload"], "seed-like");
    let random = json("ports-1", &["--workload", "random"]);
    assert_eq!(random["workload"], "random");
    let both = json("ports-2", &["--workload", "both"]);
    let workloads = both["workloads"].as_array().expect("a `workloads` array");
    let names: Vec<&str> = workloads.iter().map(|w| w["workload"].as_str().unwrap()).collect();
    assert_eq!(names, ["seed-like", "random"]);
    let claims = |w: &Value| -> Vec<String> {
        w["conclusions"].as_array().unwrap().iter().map(|c| c["claim"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(claims(&workloads[0]), claims(&workloads[1]));
    for w in workloads {
        let engines = ["linear", "min_laxity", "hashed", "tree"].map(String::from).to_vec();
        assert_eq!(ports_rows(w), [100, 500, 1000, 3000].map(|n| (n, 8000, engines.clone())).to_vec());
    }
    // Seed-like deadlines are a few worst cases ahead, so a collection empties nearly the whole
    // list and the next comes about N jobs later; random deadlines keep about N/2 slots live,
    // so collections come about every N/2 jobs.
    let collections = |w: &Value| -> Vec<u64> {
        w["rows"].as_array().unwrap().iter().map(|r| r["collections"].as_u64().unwrap()).collect()
    };
    for (seed_like, random) in collections(&workloads[0]).into_iter().zip(collections(&workloads[1])) {
        assert!(seed_like < random, "{seed_like} vs {random}");
    }
    let text = text_with("ports-2", &["--workload", "both"]);
    assert!(text.contains("Conclusions under each workload (seed-like | random):"), "{text}");
    let out = tempi(&["experiment", "rtmach-1", "--quick", "--workload", "random"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--workload is for ports-1 and ports-2"), "{out:?}");
}

/// `freejazz-2`: the four operations of FREE JAZZ's table 2, each timed with the scheduler
/// open and hard-wired, beside the paper's four platforms, and the conclusions computed from
/// our runs (timings are wall time: only their shape is checked).
#[test]
fn freejazz_experiment_reports_four_operations_both_variants_and_computed_conclusions() {
    let t = text("freejazz-2");
    assert!(t.starts_with("freejazz-2: FREE JAZZ table 2"), "{t}");
    assert!(t.contains("Paper's conclusions, checked on these runs:") && t.contains("Linux 2.0.30, P166"), "{t}");
    let v = json("freejazz-2", &[]);
    assert_eq!(v["experiment"], "freejazz-2");
    assert_eq!(v["operations_per_run"], 2000);
    let rows = v["rows"].as_array().expect("a `rows` array");
    let ops: Vec<&str> = rows.iter().map(|r| r["operation"].as_str().unwrap()).collect();
    assert_eq!(ops, ["send->process", "call<->process", "send->handler", "call<->handler"]);
    for r in rows {
        let (b, o) = (r["black_box_ns"].as_f64().unwrap(), r["open_ns"].as_f64().unwrap());
        assert!(b > 0.0 && o > 0.0, "{r}");
        let d = r["delta_pct"].as_f64().unwrap();
        assert!((d - (o / b - 1.0) * 100.0).abs() < 1.0, "delta computed from the figures: {r}");
        assert_eq!(r["paper"].as_array().unwrap().len(), 4, "{r}");
    }
    let checks = v["conclusions"].as_array().expect("a `conclusions` array");
    assert_eq!(checks.len(), 3);
    for c in checks {
        assert!(
            c["holds"].is_boolean() && c["detail"].as_str().is_some_and(|d| d.contains("ns") || d.contains('%')),
            "{c}"
        );
    }
    // The handler conclusion is computed from our own numbers.
    let ratio = rows[1]["open_ns"].as_f64().unwrap() / rows[3]["open_ns"].as_f64().unwrap();
    assert_eq!(checks[0]["holds"].as_bool(), Some(ratio >= 3.0), "{}", checks[0]);
}
