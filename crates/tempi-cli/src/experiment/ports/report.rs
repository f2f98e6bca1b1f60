//! The text and JSON reports of `ports-1` and `ports-2`.

use serde_json::{json, Value};

use super::conclusions::{us, Conclusion, GUESS, HASH, LINEAR, TREE};
use super::{Cost, WorkloadRun, ENGINES, INTERRUPTED_NS, PAPER_TABLE1, PAPER_TABLE2};

/// The text report: the shared header, then per workload its table, notes and checked
/// conclusions; with two workloads, the conclusions side by side at the end.
pub(super) fn to_text(table: u8, done: &[WorkloadRun], jobs: usize, overhead: f64, repeats: usize) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    if table == 1 {
        let _ = writeln!(s, "ports-1: PORTS table 1, cost of inserting a job into the slot list");
    } else {
        let _ = writeln!(
            s,
            "ports-2: PORTS table 2, total scheduling cost per job (admission + garbage collection + dispatch \
             bookkeeping)"
        );
    }
    let _ = writeln!(
        s,
        "workloads: {jobs} jobs per length, Poisson arrivals (mean gap 125 us), WCET U(50, 150) us, actual 50-100 % of \
         WCET, EDF dispatch; garbage collection when the list holds N"
    );
    let _ = writeln!(
        s,
        "engines: original = linear slot list, new = min_laxity (shared min-laxity pointers + best-guess search), \
         hash = the same with the hashed search (rehashed at every collection), tree = tempi's augmented B+-tree; \
         wall time on this machine, timer cost {overhead:.0} ns subtracted, cheapest of {repeats} runs"
    );
    for w in done {
        workload_text(&mut s, table, w);
    }
    if let [first, second] = done {
        let _ = writeln!(s);
        let _ =
            writeln!(s, "Conclusions under each workload ({} | {}):", first.workload.name(), second.workload.name());
        let mark = |c: &Conclusion| if c.holds { "holds" } else { "does not hold" };
        for (a, b) in first.checks.iter().zip(&second.checks) {
            let _ = writeln!(s, "  [{} | {}] {}", mark(a), mark(b), a.claim);
        }
    }
    s
}

/// One workload's table, notes and checked conclusions.
fn workload_text(s: &mut String, table: u8, w: &WorkloadRun) {
    use std::fmt::Write;
    let (runs, checks) = (&w.runs, &w.checks);
    let _ = writeln!(s);
    let _ = writeln!(s, "workload {}: {}", w.workload.name(), w.workload.deadline_rule());
    let _ = writeln!(
        s,
        "{:>6} {:>7} {:>6} {:>5} | {:>9} {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9} | {:>12} {:>12}",
        "slots",
        "mean N",
        "acc%",
        "GCs",
        "original",
        if table == 1 { "guess" } else { "new" },
        "hash",
        "tree",
        if table == 1 { "orig/guess" } else { "orig/new" },
        "orig/hash",
        "orig/tree",
        if table == 1 { "paper orig/g" } else { "paper orig/n" },
        if table == 1 { "paper orig/h" } else { "paper (us)" },
    );
    for r in runs {
        let cost = |k: usize| if table == 1 { r.insert_ns(k) } else { r.total_ns(k) };
        let (paper_ratio, paper_other) = if table == 1 {
            PAPER_TABLE1
                .iter()
                .find(|p| p.0 == r.length)
                .map_or(("-".into(), "-".into()), |p| (format!("{:.2}", p.1 / p.3), format!("{:.2}", p.1 / p.2)))
        } else {
            PAPER_TABLE2
                .iter()
                .find(|p| p.0 == r.length)
                .map_or(("-".into(), "-".into()), |p| (format!("{:.2}", p.1 / p.2), format!("{:.0}/{:.0}", p.1, p.2)))
        };
        let _ = writeln!(
            s,
            "{:>6} {:>7.0} {:>6.1} {:>5} | {:>9} {:>9} {:>9} {:>9} | {:>9.2} {:>9.2} {:>9.1} | {:>12} {:>12}",
            r.length,
            r.mean_len,
            100.0 * r.accepted as f64 / r.jobs as f64,
            r.collections,
            us(cost(LINEAR)),
            us(cost(GUESS)),
            us(cost(HASH)),
            us(cost(TREE)),
            cost(LINEAR) / cost(GUESS),
            cost(LINEAR) / cost(HASH),
            cost(LINEAR) / cost(TREE),
            paper_ratio,
            paper_other,
        );
    }
    let _ = writeln!(s, "(our costs in us per job on this machine; the paper's on a 20 MHz KSR-1, so compare ratios)");
    let _ = writeln!(
        s,
        "shared min-laxity pointers per slot (1.00: none shared, every update visits one per later slot): {}",
        runs.iter().map(|r| format!("{}: {:.2}", r.length, r.pointers_per_slot)).collect::<Vec<_>>().join(", ")
    );
    let interrupted: usize = runs.iter().flat_map(|r| r.costs.iter().map(Cost::interrupted)).sum();
    if interrupted > 0 {
        let _ = writeln!(
            s,
            "({interrupted} calls over {} us left out as interrupted by other processes, in the runs kept)",
            INTERRUPTED_NS / 1000.0
        );
    }
    if table == 2 {
        let _ = writeln!(s);
        let _ = writeln!(s, "breakdown per job (us): admission / garbage collection / finish");
        for r in runs {
            let part = |k: usize| {
                let c = r.costs[k];
                let j = r.jobs as f64;
                format!("{}/{}/{}", us(c.admit.total_ns() / j), us(c.gc.total_ns() / j), us(c.finish.total_ns() / j))
            };
            let _ = writeln!(
                s,
                "{:>6}: original {}  new {}  hash {}  tree {}",
                r.length,
                part(LINEAR),
                part(GUESS),
                part(HASH),
                part(TREE)
            );
        }
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "Paper's conclusions, checked on these runs:");
    for c in checks {
        let mark = if c.holds { "[holds]" } else { "[does not hold]" };
        let _ = writeln!(s, "  {mark} {}", c.claim);
        let _ = writeln!(s, "      {}", c.detail);
    }
}

/// The JSON report: one workload's rows and conclusions at the top level, or with two, a
/// `workloads` array of them.
pub(super) fn to_json(table: u8, done: &[WorkloadRun], jobs: usize, overhead: f64, repeats: usize) -> Value {
    let mut v = json!({
        "experiment": if table == 1 { "ports-1" } else { "ports-2" },
        "measure": if table == 1 { "insertion" } else { "total scheduling cost" },
        "jobs_per_length": jobs,
        "runs_per_length": repeats,
        "timer_overhead_ns": overhead.round(),
    });
    let each: Vec<Value> = done.iter().map(|w| workload_json(table, w)).collect();
    match <[Value; 1]>::try_from(each) {
        Ok([one]) => {
            if let (Value::Object(top), Value::Object(one)) = (&mut v, one) {
                top.extend(one);
            }
        }
        Err(each) => v["workloads"] = Value::Array(each),
    }
    v
}

/// One workload's rows and conclusions.
fn workload_json(table: u8, w: &WorkloadRun) -> Value {
    let (runs, checks) = (&w.runs, &w.checks);
    let rows: Vec<Value> = runs
        .iter()
        .map(|r| {
            let engines: Vec<Value> = ENGINES
                .iter()
                .enumerate()
                .map(|(k, name)| {
                    let c = r.costs[k];
                    let j = r.jobs as f64;
                    json!({
                        "engine": name,
                        "insert_ns": (c.admit.total_ns() / j).round(),
                        "gc_ns": (c.gc.total_ns() / j).round(),
                        "finish_ns": (c.finish.total_ns() / j).round(),
                        "interrupted_calls": c.interrupted(),
                        "total_ns": r.total_ns(k).round(),
                    })
                })
                .collect();
            let paper1 = PAPER_TABLE1.iter().find(|p| p.0 == r.length);
            let paper2 = PAPER_TABLE2.iter().find(|p| p.0 == r.length);
            json!({
                "slots": r.length,
                "jobs": r.jobs,
                "accepted": r.accepted,
                "rejected": r.rejected,
                "collections": r.collections,
                "collected": r.collected,
                "mean_list_length": (r.mean_len * 10.0).round() / 10.0,
                "min_laxity_pointers_per_slot": (r.pointers_per_slot * 1000.0).round() / 1000.0,
                "engines": engines,
                "paper_us": if table == 1 {
                    paper1.map(|p| json!({"original": p.1, "hash": p.2, "guess": p.3}))
                } else {
                    paper2.map(|p| json!({"original": p.1, "new": p.2}))
                },
            })
        })
        .collect();
    let checks: Vec<Value> =
        checks.iter().map(|c| json!({"claim": c.claim, "holds": c.holds, "detail": c.detail})).collect();
    json!({
        "workload": w.workload.name(),
        "deadline_rule": w.workload.deadline_rule(),
        "rows": rows,
        "conclusions": checks,
    })
}
