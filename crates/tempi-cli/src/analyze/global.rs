//! `tempi analyze` under a global policy (`global-edf`, `global-fp`): every analysed thread of
//! the scenario in one task set, judged for all of its CPUs at once by the library's global
//! tests ([`TaskSet::global_edf_tests`], [`TaskSet::global_fp_response_times`]).
//!
//! Owns the text and JSON of that verdict. Must not build the task model (the parent module
//! does) nor contain formulas (they live in `tempi::analysis`).

use serde_json::{json, Value};
use tempi::analysis::{GlobalBound, TaskSet};

use super::{dur, infeasible_json, infeasible_text, CpuModel};

/// The global verdict: the text, the JSON object and whether the set is shown schedulable
/// (`None`: a sufficient test failed or none applies).
pub(super) struct GlobalVerdict {
    pub text: String,
    pub json: Value,
    pub schedulable: Option<bool>,
}

/// Judge the union of `cpus`' task sets on `m` CPUs; `edf` chooses global EDF, else global FP.
/// A broken necessary condition ([`TaskSet::infeasibility`]) makes the verdict "not
/// schedulable" whatever the sufficient tests say (they can only fail then).
pub(super) fn judge(cpus: &[CpuModel], m: usize, edf: bool) -> GlobalVerdict {
    let mut ts = TaskSet::new();
    for c in cpus {
        for t in &c.tasks.tasks {
            ts.add_task(t.clone());
        }
    }
    let mut text = format!("all CPUs ({m}), global: {} task(s)\n", ts.tasks.len());
    let mut demand = TaskSet::new();
    for c in cpus {
        demand.tasks.extend(c.demand().tasks);
    }
    let infeasible = demand.infeasibility(m);
    if let Some(why) = &infeasible {
        text.push_str(&format!("  {}\n", infeasible_text(&demand, why, None)));
    }
    let mut v = sufficient(&ts, text, m, edf);
    if infeasible.is_some() {
        v.schedulable = Some(false);
        v.json["schedulable"] = Value::Bool(false);
    }
    v.json["infeasible"] = infeasible_json(&demand, infeasible.as_ref());
    v
}

/// The sufficient tests of the policy over `ts`, after `text`.
fn sufficient(ts: &TaskSet, mut text: String, m: usize, edf: bool) -> GlobalVerdict {
    let policy = if edf { "global-edf" } else { "global-fp" };
    if edf {
        match ts.global_edf_tests(m) {
            Err(e) => not_applicable(text, policy, &e.to_string()),
            Ok(g) => {
                text.push_str(&format!(
                    "  density test (Goossens-Funk-Baruah): sum C/D = {:.4} {} m - (m-1) max C/D = {:.4}: {}\n",
                    g.density,
                    if g.density_passed { "<" } else { ">=" },
                    g.density_bound,
                    pass(g.density_passed)
                ));
                text.push_str(&format!("  window test (Bertogna-Cirinei-Lipari): {}\n", pass(g.bcl_passed)));
                GlobalVerdict {
                    text,
                    json: json!({
                        "policy": policy,
                        "cpus": m,
                        "density": g.density,
                        "density_bound": g.density_bound,
                        "density_passed": g.density_passed,
                        "bcl_passed": g.bcl_passed,
                        "schedulable": if g.passed() { Value::Bool(true) } else { Value::Null },
                    }),
                    schedulable: g.passed().then_some(true),
                }
            }
        }
    } else {
        match ts.global_fp_response_times(m) {
            Err(e) => not_applicable(text, policy, &e.to_string()),
            Ok(bounds) => {
                text.push_str(&format!(
                    "  {:<14} {:>9} {:>9} {:>9} {:>5} {:>11} {:>5}\n",
                    "thread", "C", "T", "D", "prio", "R bound", "test"
                ));
                let mut rows = Vec::new();
                for (t, b) in ts.tasks.iter().zip(&bounds) {
                    let (r, verdict, r_ns) = match *b {
                        GlobalBound::Proven(r) => (dur(r), "ok", r.as_nanos() as u64),
                        GlobalBound::NotProven(r) => (format!("> {}", dur(t.deadline)), "?", r.as_nanos() as u64),
                    };
                    text.push_str(&format!(
                        "  {:<14} {:>9} {:>9} {:>9} {:>5} {:>11} {:>5}\n",
                        t.name,
                        dur(t.wcet),
                        dur(t.period),
                        dur(t.deadline),
                        t.priority,
                        r,
                        verdict
                    ));
                    rows.push(json!({
                        "name": t.name,
                        "wcet_ns": t.wcet.as_nanos() as u64,
                        "period_ns": t.period.as_nanos() as u64,
                        "deadline_ns": t.deadline.as_nanos() as u64,
                        "priority": t.priority,
                        "response_bound_ns": r_ns,
                        "proven": b.proven().is_some(),
                    }));
                }
                let all = bounds.iter().all(|b| b.proven().is_some());
                text.push_str(&format!(
                    "  response-time bounds (Bertogna-Cirinei): {}\n",
                    if all { "every task proven" } else { "not every task proven" }
                ));
                GlobalVerdict {
                    text,
                    json: json!({
                        "policy": policy,
                        "cpus": m,
                        "tasks": rows,
                        "schedulable": if all { Value::Bool(true) } else { Value::Null },
                    }),
                    schedulable: all.then_some(true),
                }
            }
        }
    }
}

fn pass(passed: bool) -> &'static str {
    if passed {
        "passed"
    } else {
        "failed (sufficient test: inconclusive)"
    }
}

fn not_applicable(mut text: String, policy: &str, why: &str) -> GlobalVerdict {
    text.push_str(&format!("  no {policy} test applies: {why}\n"));
    GlobalVerdict { text, json: json!({ "policy": policy, "why": why, "schedulable": Value::Null }), schedulable: None }
}
