//! `tempi plan FILE`: the scenario's thread groups planned by the Spring planner, in release
//! order, without running anything. Groups released only by a task (`spawned = true`) are
//! left out: when they are planned depends on the run (`tempi simulate` reports them). A
//! group's dependents (and theirs, breadth first) are planned in the same request, their
//! releases counted from the group's, all or nothing, as the executor does: a refused
//! dependent refuses the whole request and leaves the plan as it was.
//!
//! Owns the planning loop over a scenario's `[[group]]` tables and its two outputs (a table,
//! or JSON with `--json`). It must not execute a plan or touch a runtime: what the planner
//! decides and where it puts each task is the whole answer.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{json, Value};

use tempi::policy::admit::planner::{Capacity, Decision, GroupId, Mode, PlanOutcome, Planner, Rejection};
use tempi::Time;

use tempi_cli::scenario::{GroupDef, Scenario};

/// One request's answer, with the group it was for.
struct Answer<'a> {
    group: &'a GroupDef,
    /// The group's release, counted from the start of the run (a dependent's from its
    /// parent's).
    release: Duration,
    /// The group whose request planned this one, for a dependent.
    dependent_of: Option<&'a str>,
    outcome: PlanOutcome,
}

/// Plan every group of `sc` and render the answers and the final plan.
pub(crate) fn plan(sc: &Scenario, json: bool) -> Result<String, String> {
    if sc.groups.is_empty() {
        return Err(format!("{}: no [[group]] tables: nothing to plan", sc.file));
    }
    // Stable: groups released together are planned in file order.
    let mut order: Vec<&GroupDef> = sc.groups.iter().filter(|g| !g.spawned).collect();
    order.sort_by_key(|g| g.release);
    let requests: Vec<Vec<(&GroupDef, Duration, Option<&str>)>> =
        order.iter().map(|&g| with_dependents(sc, g)).collect();
    let mut config = sc.planner.config(sc.cpus, 1);
    config.capacity = capacity(requests.iter().flatten().map(|&(g, _, _)| g));
    let mut planner = Planner::new(config).map_err(|e| format!("{}: {e}", sc.file))?;

    let mut answers = Vec::with_capacity(requests.len());
    let mut names: HashMap<GroupId, &GroupDef> = HashMap::with_capacity(requests.len());
    for request in requests {
        // Dependents are tried on a copy, kept only if every group of the request fits.
        let mut trial = if request.len() > 1 { Some(planner.clone()) } else { None };
        let target = trial.as_mut().unwrap_or(&mut planner);
        let now = Time::ZERO + request[0].1;
        let mut outcomes: Vec<(&GroupDef, Duration, Option<&str>, PlanOutcome)> = Vec::new();
        let mut first_refusal: Option<PlanOutcome> = None;
        for (g, release, parent) in request {
            let mut req = sc.planner.request(g);
            req.release = Time::ZERO + release;
            req.deadline = req.release + g.deadline;
            let outcome = match first_refusal {
                // A refusal refuses the rest of the request without planning it.
                Some(first) => PlanOutcome { k: 0, evaluations: 0, backtracks: 0, cost: Duration::ZERO, ..first },
                None => target
                    .submit(&req, now, g.max_wait)
                    .map_err(|e| format!("{}:{}: group \"{}\": {e}", sc.file, g.line, g.name))?,
            };
            if first_refusal.is_none() && !outcome.decision.is_accepted() {
                first_refusal = Some(outcome);
            }
            outcomes.push((g, release, parent, outcome));
        }
        if first_refusal.is_none()
            && let Some(p) = trial
        {
            planner = p;
        }
        for (g, release, dependent_of, mut outcome) in outcomes {
            // A refusal anywhere refuses every group of the request, with the first reason.
            if let Some(refusal) = first_refusal {
                outcome.decision = refusal.decision;
            }
            if let Decision::Accepted(id) = outcome.decision {
                names.insert(id, g);
            }
            answers.push(Answer { group: g, release, dependent_of, outcome });
        }
    }
    let tasks = planned_tasks(sc, &planner, &names);
    Ok(if json { render_json(sc, &answers, &tasks) } else { render_table(sc, &answers, &tasks) })
}

/// `g` and its dependents, theirs too, breadth first, each with its release counted from the
/// start of the run and the group whose request plans it. The scenario refuses loops of
/// dependents, so this ends.
fn with_dependents<'a>(sc: &'a Scenario, g: &'a GroupDef) -> Vec<(&'a GroupDef, Duration, Option<&'a str>)> {
    let mut out = vec![(g, g.release, None)];
    let mut next = 0;
    while next < out.len() {
        let (parent, release, _) = out[next];
        for name in &parent.dependents {
            if let Some(d) = sc.groups.iter().find(|d| &d.name == name) {
                out.push((d, release + d.release, Some(parent.name.as_str())));
            }
        }
        next += 1;
    }
    out
}

/// Room for every group planned at once (a dependent once per request that plans it):
/// nothing is retired while planning.
fn capacity<'a>(groups: impl Iterator<Item = &'a GroupDef> + Clone) -> Capacity {
    let threads = groups.clone().map(|g| g.threads.len()).sum::<usize>();
    let tasks = groups.clone().flat_map(|g| &g.threads).map(|t| t.tasks.len()).sum::<usize>();
    let links = groups.clone().flat_map(|g| &g.threads).map(|t| t.after.len()).sum::<usize>();
    let uses = groups.clone().flat_map(|g| &g.threads).flat_map(|t| &t.tasks).map(|t| t.resources.len()).sum::<usize>();
    Capacity { groups: groups.count().max(1), threads, tasks, links: links.max(1), uses: uses.max(1) }
}

/// A task of the final plan, by name.
struct Row {
    group: String,
    thread: String,
    task: usize,
    cpu: usize,
    start: u64,
    finish: u64,
    resources: Vec<(String, Mode)>,
}

fn planned_tasks(sc: &Scenario, planner: &Planner, names: &HashMap<GroupId, &GroupDef>) -> Vec<Row> {
    let mut rows: Vec<Row> = planner
        .plan()
        .tasks()
        .map(|t| {
            let g = names.get(&t.group);
            Row {
                group: g.map_or_else(|| format!("#{}", t.group.0), |g| g.name.clone()),
                thread: g
                    .and_then(|g| g.threads.get(t.thread))
                    .map_or_else(|| t.thread.to_string(), |th| th.name.clone()),
                task: t.task,
                cpu: t.cpu,
                start: t.start.as_nanos(),
                finish: t.finish.as_nanos(),
                resources: t
                    .resources
                    .iter()
                    .map(|u| (sc.planner.resources.get(u.resource.index()).cloned().unwrap_or_default(), u.mode))
                    .collect(),
            }
        })
        .collect();
    rows.sort_by_key(|r| (r.cpu, r.start));
    rows
}

fn decision_name(d: Decision) -> (&'static str, Option<&'static str>) {
    match d {
        Decision::Accepted(_) => ("accepted", None),
        Decision::Rejected(Rejection::Infeasible) => ("rejected", Some("infeasible")),
        Decision::Rejected(Rejection::BudgetExhausted) => ("rejected", Some("budget-exhausted")),
        Decision::Rejected(Rejection::BudgetTooSmall { .. }) => ("rejected", Some("budget-too-small")),
    }
}

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Shared => "shared",
        Mode::Exclusive => "exclusive",
    }
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn render_json(sc: &Scenario, answers: &[Answer<'_>], rows: &[Row]) -> String {
    let requests: Vec<Value> = answers
        .iter()
        .map(|a| {
            let (decision, reason) = decision_name(a.outcome.decision);
            json!({
                "group": a.group.name,
                "dependent_of": a.dependent_of,
                "release": ns(a.release),
                "deadline": ns(a.release + a.group.deadline),
                "decision": decision,
                "reason": reason,
                "tasks": a.outcome.tasks,
                "k": a.outcome.k,
                "evaluations": a.outcome.evaluations,
                "backtracks": a.outcome.backtracks,
                "planner_time": ns(a.outcome.cost),
                "budget": ns(a.outcome.budget),
                "cutoff": a.outcome.cutoff.as_nanos(),
            })
        })
        .collect();
    let tasks: Vec<Value> = rows
        .iter()
        .map(|r| {
            let resources: Vec<Value> =
                r.resources.iter().map(|(n, m)| json!({ "name": n, "mode": mode_name(*m) })).collect();
            json!({
                "group": r.group, "thread": r.thread, "task": r.task, "cpu": r.cpu,
                "start": r.start, "finish": r.finish, "resources": resources,
            })
        })
        .collect();
    let doc = json!({
        "file": sc.file,
        "cpus": sc.cpus,
        "heuristic": sc.planner.heuristic.name(),
        "placement": sc.planner.placement.name(),
        "requests": requests,
        "plan": tasks,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

/// `12ms`, `250us` or `7ns`: exact, in the largest unit that divides the value.
fn short(ns: u64) -> String {
    if ns != 0 && ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns != 0 && ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

fn render_table(sc: &Scenario, answers: &[Answer<'_>], rows: &[Row]) -> String {
    let mut out = String::new();
    let accepted = answers.iter().filter(|a| a.outcome.decision.is_accepted()).count();
    let _ = writeln!(
        out,
        "{}: {} CPUs, heuristic {}, placement {}{}: {accepted} of {} groups accepted",
        sc.file,
        sc.cpus,
        sc.planner.heuristic.name(),
        sc.planner.placement.name(),
        if sc.planner.stay_within_process { ", stay within process" } else { "" },
        answers.len()
    );
    let _ = writeln!(out, "\nrequests (in release order):");
    let _ = writeln!(
        out,
        "  {:<16} {:>10} {:>10} {:<26} {:>6} {:>6} {:>8} {:>12} {:>10}",
        "group", "release", "deadline", "decision", "tasks", "k", "H evals", "planner time", "budget"
    );
    for a in answers {
        let (d, reason) = decision_name(a.outcome.decision);
        let decision = reason.map_or_else(|| d.to_string(), |r| format!("{d} ({r})"));
        let _ = writeln!(
            out,
            "  {:<16} {:>10} {:>10} {:<26} {:>6} {:>6} {:>8} {:>12} {:>10}",
            a.dependent_of.map_or_else(|| a.group.name.clone(), |p| format!("{} (of {p})", a.group.name)),
            short(ns(a.release)),
            short(ns(a.release + a.group.deadline)),
            decision,
            a.outcome.tasks,
            a.outcome.k,
            a.outcome.evaluations,
            short(ns(a.outcome.cost)),
            short(ns(a.outcome.budget)),
        );
    }
    let _ = writeln!(out, "\nplan (by CPU, then start):");
    let _ = writeln!(
        out,
        "  {:>3} {:>10} {:>10}  {:<16} {:<16} {:>4}  resources",
        "cpu", "start", "finish", "group", "thread", "task"
    );
    for r in rows {
        let res: Vec<String> = r.resources.iter().map(|(n, m)| format!("{n} ({})", mode_name(*m))).collect();
        let _ = writeln!(
            out,
            "  {:>3} {:>10} {:>10}  {:<16} {:<16} {:>4}  {}",
            r.cpu,
            short(r.start),
            short(r.finish),
            r.group,
            r.thread,
            r.task,
            if res.is_empty() { "-".to_string() } else { res.join(", ") }
        );
    }
    out
}
