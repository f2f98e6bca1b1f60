//! `tempi analyze`: schedulability analysis of a scenario, without running it.
//!
//! Owns turning a [`Scenario`] into [`tempi::analysis::TaskSet`]s (one per CPU) and printing
//! the results as text or JSON. The formulas live in the library (`tempi::analysis`) and are
//! documented in `docs/ANALYSIS.md`.
//!
//! Model: every periodic thread is a task (`C` = the larger of its `wcet` and the sum of its
//! work steps, a range counting as its upper bound, with a warning when the steps are longer,
//! plus the time a job sleeps, as if it ran then;
//! `T` = period; `D` = deadline, else `T`); a sporadic thread with a positive
//! `min_interarrival` is a task with that as `T`; one-shot threads and sporadic ones without
//! `min_interarrival` are left out (and listed), and a verdict over them is "not shown
//! schedulable", never "schedulable". Before any policy's test, every CPU is checked against
//! the necessary conditions of [`TaskSet::infeasibility`] (utilisation above 1, `C > D`), which
//! make it NOT schedulable whatever the policy. [`Report::schedulable`] is the exit status. A critical section is the work between a `lock` step and its
//! `unlock` (or the end of the job), nested sections included in the outer one. A `lock`
//! step holds a guard, so every section is a guarded one ([`Task::guarded_section`]): under
//! rcs it is waited for, not aborted.
//!
//! A soft thread (`criticality = "soft"`) keeps its `C` in everyone's interference, but under
//! fixed priority its own worst-case miss is reported as a soft target missed and decides
//! nothing, and the necessary conditions are those of the hard threads; the tests over a set
//! as a whole (EDF, global, the necessary conditions elsewhere) judge it as hard
//! (`soft_notes`).
//!
//! With `--partition ffd|wfd` ([`partition()`]) the scenario's own CPU placement of the analysed
//! threads is replaced by the one [`TaskSet::partition`] finds over the scenario's CPUs (tasks
//! by density, each CPU judged by the test the policy gets below), and the analysis then runs
//! on that placement.
//!
//! Which tests apply is read from the policy the scenario's name builds ([`kind`]: fixed
//! priority, EDF, global EDF or global fixed priority, as [`PolicyClass::of`] says), and each
//! resource's blocking bound from its lock protocol
//! ([`Protocol::for_lock_policy`]), both through the registries the runtime builds them from.
//!
//! Under a global policy (`global-edf`, `global-fp`) threads migrate, so the CPUs are judged
//! together: every analysed thread goes into one task set and the global tests of
//! [`tempi::analysis`] decide for all CPUs at once (`analyze/global.rs`).
//!
//! The parts, by concern: `model.rs` builds the task sets (and their MSRP inflation),
//! `text.rs` writes figures and verdict lines, `partition.rs` answers `--partition`, and
//! `global.rs` judges a global policy; this file runs the tests and assembles the report.

mod global;
mod model;
mod partition;
mod text;

use serde_json::{json, Value};
use tempi::analysis::{CpuTest, Protocol, Response, Task, TaskSet};
use tempi::policy::sched::PolicyClass;

use tempi_cli::scenario::Scenario;

use model::{model, msrp, CpuModel, Notes};
pub use partition::{partition, PartitionError};
use text::{
    dur, failed, infeasible_json, infeasible_text, ns, opt, progress, response_json, response_text, some_names,
};

/// How the scenario's policy is analysed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    FixedPriority,
    Edf,
    /// Global EDF or global fixed priority (`edf` says which): all CPUs judged together.
    Global {
        edf: bool,
    },
    Other,
}

/// A placement found by `--partition`, for the report: its text lines and its JSON.
pub struct Placement {
    text: String,
    json: Value,
}

/// What `tempi analyze` found: the text (or JSON) to print and the overall verdict, which the
/// exit status reports (`Some(true)`: shown schedulable; `Some(false)`: shown not schedulable;
/// `None`: not shown either way).
pub struct Report {
    pub text: String,
    pub schedulable: Option<bool>,
}

/// A CPU that could not be shown schedulable: the overall verdict becomes unknown, unless
/// another CPU is already known to miss.
fn inconclusive(overall: Option<bool>) -> Option<bool> {
    match overall {
        Some(false) => Some(false),
        _ => None,
    }
}

/// What the verdict makes of the soft threads. Response-time analysis judges each thread
/// against its own deadline, so a soft one's miss can be told apart; a test over the set as a
/// whole cannot say which thread would miss, so it judges soft threads as hard, which keeps a
/// "schedulable" verdict true of the hard ones.
fn soft_notes(cpus: &[CpuModel], kind: Kind, notes: &mut Notes) {
    let soft: Vec<&str> =
        cpus.iter().flat_map(|c| c.tasks.tasks.iter().filter(|t| t.is_soft()).map(|t| t.name.as_str())).collect();
    if soft.is_empty() {
        return;
    }
    let names = some_names(soft.iter().copied());
    notes.lines.push(match kind {
        Kind::FixedPriority => format!(
            "soft threads {names}: a worst-case response above the deadline is a soft target missed, which does \
             not decide the verdict; their C interferes in full with lower-priority threads; the Liu & Layland \
             bound judges them as hard (it cannot tell which thread misses)"
        ),
        Kind::Edf | Kind::Global { .. } => format!(
            "soft threads {names}: judged as hard, since the tests of this policy judge the set as a whole and \
             cannot tell which thread misses"
        ),
        Kind::Other => format!(
            "soft threads {names}: judged as hard by the necessary conditions, which judge the set as a whole and \
             cannot tell which thread misses"
        ),
    });
}

/// How the scenario's policy is analysed: by what the policy built from the registry answers
/// ([`PolicyClass::of`], as admission asks), not by its name, so an alias or a policy the
/// application registered is analysed as what it does.
fn kind(sc: &Scenario) -> Kind {
    match sc.policy_class() {
        PolicyClass::FixedPriority => Kind::FixedPriority,
        PolicyClass::Edf => Kind::Edf,
        PolicyClass::GlobalEdf => Kind::Global { edf: true },
        PolicyClass::GlobalFixedPriority => Kind::Global { edf: false },
        PolicyClass::Other => Kind::Other,
    }
}

/// Run the analysis. Returns the text (or JSON) to print and the verdict. `placement` is the
/// partition the scenario's CPUs come from, if [`partition()`] made them.
pub fn analyze(sc: &Scenario, as_json: bool, placement: Option<&Placement>) -> Result<Report, String> {
    let mut notes = Notes::default();
    for r in &sc.resources {
        match Protocol::for_lock_policy(&r.protocol) {
            Err(why) => notes.lines.push(format!("resource \"{}\": {why}: taken as bpi", r.name)),
            Ok(Protocol::Rcs) => notes.lines.push(format!(
                "resource \"{}\": rcs: a scenario's lock steps hold the lock with a guard, which RCS does not \
                 abort (the holder is waited for under inheritance): analysed as guarded sections, which block \
                 for their length and are never restarted",
                r.name
            )),
            Ok(_) => {}
        }
    }
    let mut cpus = model(sc, &mut notes);
    for c in &cpus {
        c.tasks.validate().map_err(|e| format!("{}: {e}", sc.file))?;
    }
    let kind = kind(sc);
    // Judged before MSRP adds its spin bounds: those are worst cases, not demand, and a
    // necessary condition broken only by them would prove nothing.
    // As (its line, its JSON), written now: the figures they quote are the unspun ones too.
    let infeasible: Vec<Option<(String, Value)>> = match kind {
        Kind::Global { .. } => vec![None; cpus.len()],
        _ => cpus
            .iter()
            .map(|c| {
                let mut demand = c.demand();
                if kind == Kind::FixedPriority {
                    // Response-time analysis decides per thread, so only the hard threads'
                    // conditions are necessary ones; the soft threads' load still enters their
                    // response times below.
                    let whole = demand.clone();
                    demand.tasks.retain(|t| !t.is_soft());
                    if let (None, Some(why)) = (demand.infeasibility(1), whole.infeasibility(1)) {
                        let line = infeasible_text(&whole, &why, Some(c.cpu));
                        let line = line.strip_prefix("NOT schedulable: ").unwrap_or(&line);
                        notes.lines.push(format!("CPU {}: soft targets cannot all be met: {line}", c.cpu));
                    }
                }
                let why = demand.infeasibility(1)?;
                Some((infeasible_text(&demand, &why, Some(c.cpu)), infeasible_json(&demand, Some(&why))))
            })
            .collect(),
    };
    soft_notes(&cpus, kind, &mut notes);
    let (msrp_text, msrp_json) = msrp(&mut cpus, &mut notes);
    let mut out = String::new();
    let mut json_cpus = Vec::new();
    let mut overall = Some(true);
    // Whether some CPU (or the global set) was left undecided by its tests, as opposed to by
    // threads the model leaves out: the two say different things in the overall line.
    let mut undecided = false;
    let protocols: Vec<String> = {
        let mut p: Vec<String> = sc.resources.iter().map(|r| r.protocol.clone()).collect();
        p.dedup();
        p
    };
    out.push_str(&format!(
        "{}: policy {}, locking {}\n",
        sc.file,
        sc.policy,
        if protocols.is_empty() { "none (no resources)".to_string() } else { protocols.join("+") }
    ));
    if let Some(p) = placement {
        out.push_str(&p.text);
    }
    out.push_str(&msrp_text);
    if cpus.is_empty() {
        out.push_str("no periodic or sporadic thread to analyse\n");
        overall = None;
        undecided = true;
        if kind == Kind::Other {
            out.push_str(&format!("policy \"{}\": no analysis applies (fixed priority or EDF only)\n", sc.policy));
        }
    }
    let mut global_json = None;
    if let (Kind::Global { edf }, false) = (kind, cpus.is_empty()) {
        let mut v = global::judge(&cpus, sc.cpus, edf);
        let tested = v.schedulable;
        if tested == Some(true) && !notes.unanalysed.is_empty() {
            let names = some_names(notes.unanalysed.iter().map(|(_, n)| n.as_str()));
            v.text.push_str(&format!("  not shown schedulable: not analysed: {names}\n"));
            v.schedulable = None;
            v.json["schedulable"] = Value::Null;
        }
        out.push_str(&v.text);
        match v.schedulable {
            Some(true) => {}
            Some(false) => overall = Some(false),
            None => {
                overall = inconclusive(overall);
                undecided |= tested.is_none();
            }
        }
        global_json = Some(v.json);
    }
    for (c, infeasible) in cpus.iter().zip(&infeasible).filter(|_| !matches!(kind, Kind::Global { .. })) {
        let ts = &c.tasks;
        out.push_str(&format!("CPU {}: {} task(s)\n", c.cpu, ts.tasks.len()));
        if let Some((line, _)) = infeasible {
            out.push_str(&format!("  {line}\n"));
        }
        let known_infeasible = infeasible.is_some();
        // What the policy's tests show: Some(false) only from a test that proves a miss.
        let tested: Option<bool>;
        let mut entry = match kind {
            Kind::FixedPriority => {
                let v = ts.analyze_with_progress(&mut progress(c.cpu, ts.tasks.len()));
                out.push_str(&format!(
                    "  {:<14} {:>9} {:>9} {:>9} {:>5} {:>10} {:>11} {:>5}\n",
                    "thread", "C", "T", "D", "prio", "B", "R", "RTA"
                ));
                let mut rows = Vec::new();
                let mut soft_missed = Vec::new();
                for (k, tv) in v.tasks.iter().enumerate() {
                    let t = &ts.tasks[k];
                    let (r, mut verdict) = response_text(tv.response);
                    if t.is_soft() && tv.response.misses() {
                        verdict = "soft";
                        soft_missed.push(format!("\"{}\" (R {r}, D {})", t.name, dur(t.deadline)));
                    }
                    match tv.response {
                        Response::Overloaded => notes.lines.push(format!(
                            "thread \"{}\": the threads of its priority and above have a utilisation of 1 or more: \
                             its response time is unbounded",
                            t.name
                        )),
                        Response::GaveUp(d) => notes.lines.push(format!(
                            "thread \"{}\": response-time analysis gave up after {} iterations at {} (within the \
                             deadline): inconclusive",
                            t.name,
                            TaskSet::MAX_RTA_ITERATIONS,
                            dur(d)
                        )),
                        _ => {}
                    }
                    out.push_str(&format!(
                        "  {:<14} {:>9} {:>9} {:>9} {:>5} {:>10} {:>11} {:>5}\n",
                        t.name,
                        dur(t.wcet),
                        dur(t.period),
                        dur(t.deadline),
                        t.priority,
                        opt(tv.blocking),
                        r,
                        verdict
                    ));
                    let by: Vec<String> =
                        tv.blocking_by_protocol.iter().map(|(p, b)| format!("{p} {}", opt(*b))).collect();
                    if !ts.resources.is_empty() {
                        out.push_str(&format!("  {:<14} B under each protocol: {}\n", "", by.join(", ")));
                    }
                    // Built only for --json: at 100,000 threads the rows cost more than the analysis.
                    if !as_json {
                        continue;
                    }
                    rows.push(json!({
                        "thread": t.name,
                        "c_ns": t.wcet.as_nanos() as u64,
                        "t_ns": t.period.as_nanos() as u64,
                        "d_ns": t.deadline.as_nanos() as u64,
                        "priority": t.priority,
                        "criticality": t.criticality.name(),
                        "blocking_ns": ns(tv.blocking),
                        "blocking_by_protocol": tv.blocking_by_protocol.iter().map(|(p, b)| (p.name().to_string(), ns(*b))).collect::<serde_json::Map<_, _>>(),
                        "sections": t.sections.iter().map(|s| json!({ "resource": ts.resources[s.resource].name, "ns": s.duration.as_nanos() as u64 })).collect::<Vec<_>>(),
                        "response": response_json(tv.response),
                        "schedulable": tv.schedulable,
                    }));
                }
                let ll = match &v.liu_layland {
                    None => {
                        out.push_str(
                            "  Liu & Layland with blocking: not applicable (needs rate-monotonic priorities and D >= T)\n",
                        );
                        Value::Null
                    }
                    Some(ll) => {
                        let loads: Vec<String> = ll
                            .rows
                            .iter()
                            .map(|r| {
                                let name = &ts.tasks[r.task].name;
                                match r.load {
                                    Some(l) => {
                                        format!("{name} {l:.3}<={:.3}{}", r.bound, if r.passed { "" } else { " FAIL" })
                                    }
                                    None => format!("{name} unbounded"),
                                }
                            })
                            .collect();
                        out.push_str(&format!(
                            "  Liu & Layland with blocking: {} ({})\n",
                            if ll.passed { "passes" } else { failed(known_infeasible) },
                            loads.join(", ")
                        ));
                        json!({ "passed": ll.passed, "rows": ll.rows.iter().map(|r| json!({ "thread": ts.tasks[r.task].name, "load": r.load, "bound": r.bound, "passed": r.passed })).collect::<Vec<_>>() })
                    }
                };
                if !soft_missed.is_empty() {
                    out.push_str(&format!(
                        "  soft targets missed in the worst case (not faults): {}\n",
                        soft_missed.join(", ")
                    ));
                }
                // A task the analysis could not decide leaves the CPU undecided, not failed; a
                // soft task's miss is a target missed, which decides nothing.
                let misses = v.tasks.iter().any(|tv| tv.response.misses() && !ts.tasks[tv.task].is_soft());
                // With sleeps counted as work the analysis over-approximates: a miss it finds
                // may be one the real job, idle while it sleeps, never has.
                let sleeps = c.sleeps.iter().any(|s| !s.is_zero());
                tested = if v.schedulable {
                    Some(true)
                } else if misses && !sleeps {
                    Some(false)
                } else {
                    None
                };
                out.push_str(&format!(
                    "  response-time analysis: {}\n",
                    match tested {
                        Some(true) => "schedulable",
                        Some(false) => "NOT schedulable",
                        None if misses => "inconclusive (a miss with sleeps counted as work proves none)",
                        None => "inconclusive",
                    }
                ));
                let soft_missed: Vec<&str> = v
                    .tasks
                    .iter()
                    .filter(|tv| tv.response.misses() && ts.tasks[tv.task].is_soft())
                    .map(|tv| ts.tasks[tv.task].name.as_str())
                    .collect();
                json!({ "cpu": c.cpu, "tasks": rows, "liu_layland": ll, "soft_targets_missed": soft_missed })
            }
            Kind::Edf => {
                let e = ts.edf_tests();
                let u: f64 = ts.tasks.iter().map(Task::utilisation).sum();
                out.push_str(&format!("  utilisation {u:.3}\n"));
                out.push_str(&format!(
                    "  EDF, kernelized-monitor bound sum (C+CS)/min(D,T) <= 1: {:.3} {}\n",
                    e.km_bound.load,
                    match (e.km_bound.passed, e.baker.is_some()) {
                        (true, _) => "passes",
                        (false, true) => failed(known_infeasible),
                        (false, false) => "not applicable (bp, bpi and rcs can block a job more than once)",
                    }
                ));
                match e.baker {
                    Some(b) => out.push_str(&format!(
                        "  EDF, Baker's SRP test max_k sum_(j<=k) C/min(D,T) + B_k/D_k <= 1: {:.3} {}\n",
                        b.load,
                        if b.passed { "passes" } else { failed(known_infeasible) }
                    )),
                    None => {
                        out.push_str("  EDF, Baker's SRP test: not applicable (covers km, msrp, pcp and srp only)\n")
                    }
                }
                match e.inheritance {
                    Some(b) => out.push_str(&format!(
                        "  EDF with inheritance blocking max_k sum_(j<=k) C/T + (sum_(j<=k) C(1-D/T)+ + B_k)/D_k <= 1: {:.3} {}\n",
                        b.load,
                        if b.passed { "passes" } else { failed(known_infeasible) }
                    )),
                    None => out.push_str(
                        "  EDF with inheritance blocking: not applicable (a bp resource shared by threads of different \
                         deadlines, and a third thread that can run ahead of its holder)\n",
                    ),
                }
                // Any test passing shows the CPU schedulable (each holds whatever the deadlines).
                let passed = CpuTest::Edf.passes(ts);
                out.push_str("  response-time analysis: not applicable under EDF\n");
                tested = passed.then_some(true);
                json!({
                    "cpu": c.cpu,
                    "utilisation": u,
                    "edf_km_bound": { "load": e.km_bound.load, "passed": e.km_bound.passed },
                    "edf_baker": e.baker.map(|b| json!({ "load": b.load, "passed": b.passed })),
                    "edf_inheritance": e.inheritance.map(|b| json!({ "load": b.load, "passed": b.passed })),
                })
            }
            // Global policies were judged above, over all CPUs at once.
            Kind::Other | Kind::Global { .. } => {
                out.push_str(&format!(
                    "  policy \"{}\": no analysis applies (fixed priority or EDF only)\n",
                    sc.policy
                ));
                tested = None;
                json!({ "cpu": c.cpu })
            }
        };
        let left_out: Vec<&str> =
            notes.unanalysed.iter().filter(|(cpu, _)| *cpu == c.cpu).map(|(_, n)| n.as_str()).collect();
        let schedulable = match tested {
            _ if known_infeasible => Some(false),
            Some(true) if !left_out.is_empty() => {
                out.push_str(&format!(
                    "  not shown schedulable: not analysed: {}\n",
                    some_names(left_out.iter().copied())
                ));
                None
            }
            other => other,
        };
        match schedulable {
            Some(true) => {}
            Some(false) => overall = Some(false),
            None => {
                overall = inconclusive(overall);
                undecided |= tested.is_none();
            }
        }
        entry["infeasible"] = infeasible.as_ref().map_or(Value::Null, |(_, json)| json.clone());
        entry["not_analysed"] = json!(left_out);
        entry["schedulable"] = schedulable.map_or(Value::Null, Value::Bool);
        json_cpus.push(entry);
    }
    // A CPU whose every thread is left out has no section above, but its threads still count.
    if !matches!(kind, Kind::Global { .. }) && overall == Some(true) && !notes.unanalysed.is_empty() {
        overall = None;
    }
    for w in &notes.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    for n in &notes.lines {
        out.push_str(&format!("note: {n}\n"));
    }
    let mut reasons = Vec::new();
    if undecided {
        reasons.push("a sufficient test failed or no test applies".to_string());
    }
    if !notes.unanalysed.is_empty() {
        let count = notes.unanalysed.len();
        reasons.push(format!(
            "{count} thread{} not analysed: {}",
            if count == 1 { "" } else { "s" },
            some_names(notes.unanalysed.iter().map(|(_, n)| n.as_str()))
        ));
    }
    match overall {
        Some(true) => out.push_str("overall: schedulable\n"),
        Some(false) => out.push_str("overall: NOT schedulable\n"),
        None => out.push_str(&format!("overall: not shown schedulable ({})\n", reasons.join("; "))),
    }
    if as_json {
        let v = json!({
            "file": sc.file,
            "policy": sc.policy,
            "resources": sc.resources.iter().map(|r| json!({ "name": r.name, "protocol": r.protocol, "ceiling": r.ceiling, "cpu": r.cpu })).collect::<Vec<_>>(),
            "cpus": json_cpus,
            "notes": notes.lines,
            "warnings": notes.warnings,
            "not_analysed": notes.unanalysed.iter().map(|(cpu, name)| json!({ "thread": name, "cpu": cpu })).collect::<Vec<_>>(),
            "schedulable": overall.map_or(Value::Null, Value::Bool),
            "soft_threads": cpus.iter().flat_map(|c| c.tasks.tasks.iter().filter(|t| t.is_soft()).map(|t| t.name.as_str())).collect::<Vec<_>>(),
            "soft_judged_as_hard": kind != Kind::FixedPriority && cpus.iter().any(|c| c.tasks.tasks.iter().any(Task::is_soft)),
        });
        let mut v = v;
        if let Some(p) = placement {
            v["partition"] = p.json.clone();
        }
        if !msrp_json.is_empty() {
            v["msrp"] = Value::Array(msrp_json);
        }
        if let Some(g) = global_json {
            v["global"] = g;
        }
        let text = serde_json::to_string_pretty(&v).map(|s| s + "\n").map_err(|e| e.to_string())?;
        return Ok(Report { text, schedulable: overall });
    }
    Ok(Report { text: out, schedulable: overall })
}
