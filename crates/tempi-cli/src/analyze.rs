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
//! With `--partition ffd|wfd` ([`partition`]) the scenario's own CPU placement of the analysed
//! threads is replaced by the one [`TaskSet::partition`] finds over the scenario's CPUs (tasks
//! by density, each CPU judged by the test the policy gets below), and the analysis then runs
//! on that placement.
//!
//! Under a global policy (`global-edf`, `global-fp`) threads migrate, so the CPUs are judged
//! together: every analysed thread goes into one task set and the global tests of
//! [`tempi::analysis`] decide for all CPUs at once (`analyze/global.rs`).

mod global;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tempi::analysis::{CpuTest, Fit, Infeasible, Protocol, Resource, Response, SortKey, Task, TaskSet};
use tempi::Timing;

use tempi_cli::scenario::{Scenario, Step, ThreadDef};

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

/// One CPU's task set, with the scenario's thread index of each task and remarks.
struct CpuModel {
    cpu: usize,
    tasks: TaskSet,
    threads: Vec<usize>,
    /// Per task, the sleep its `C` includes (see `analysed_wcet`): time, not CPU demand.
    sleeps: Vec<Duration>,
}

impl CpuModel {
    /// The tasks with the CPU time they ask for only, which the necessary conditions judge: a
    /// sleep counted in `C` bounds a response, but does not load the CPU.
    fn demand(&self) -> TaskSet {
        let mut ts = self.tasks.clone();
        for (t, s) in ts.tasks.iter_mut().zip(&self.sleeps) {
            t.wcet = t.wcet.saturating_sub(*s);
        }
        ts
    }
}

/// What the model leaves out or cannot vouch for.
#[derive(Default)]
struct Notes {
    /// Remarks printed as `note:` lines.
    lines: Vec<String>,
    /// Figures of the scenario the analysis does not take as written, printed as `warning:`.
    warnings: Vec<String>,
    /// The threads left out of the model, as (CPU, name): a verdict over their CPU (or, under
    /// a global policy, over all CPUs) cannot be "schedulable".
    unanalysed: Vec<(usize, String)>,
}

/// Build the per-CPU task sets.
fn model(sc: &Scenario, notes: &mut Notes) -> Vec<CpuModel> {
    let specs = sc.specs();
    let mut cpus: Vec<CpuModel> = Vec::new();
    for (i, def) in sc.threads.iter().enumerate() {
        let period = match def.timing {
            Timing::Periodic { period, .. } => period,
            Timing::Sporadic { min_interarrival } if !min_interarrival.is_zero() => min_interarrival,
            Timing::Sporadic { .. } => {
                notes.lines.push(format!("thread \"{}\": sporadic without min_interarrival: not analysed", def.name));
                notes.unanalysed.push((def.cpu, def.name.clone()));
                continue;
            }
            Timing::OneShot => {
                notes.lines.push(format!("thread \"{}\": one-shot: not analysed", def.name));
                notes.unanalysed.push((def.cpu, def.name.clone()));
                continue;
            }
        };
        if def.forever {
            notes.lines.push(format!("thread \"{}\": `forever` never completes a job: its C is unbounded", def.name));
        }
        let deadline = def.deadline.unwrap_or(period);
        let (wcet, sleeps) = analysed_wcet(def, notes);
        let mut task = Task::new(def.name.clone(), wcet, period)
            .deadline(deadline)
            .priority(specs[i].priority_value())
            .criticality(def.criticality);
        // Walk the steps: each open lock accumulates the work done while it is held.
        let mut open: Vec<(usize, Duration)> = Vec::new();
        let mut sections: Vec<(usize, Duration)> = Vec::new();
        let mut nested = false;
        let mut suspends = false;
        for s in &def.steps {
            match *s {
                Step::Work(d) | Step::WorkBetween(_, d) => open.iter_mut().for_each(|(_, acc)| *acc += d),
                // Counted as work of the section, as it is of C (see `analysed_wcet`): the lock
                // stays held through the sleep.
                Step::Sleep(d) if !open.is_empty() => {
                    suspends = true;
                    open.iter_mut().for_each(|(_, acc)| *acc += d);
                }
                Step::Lock(r) => {
                    nested |= !open.is_empty();
                    open.push((r, Duration::ZERO));
                }
                Step::Unlock(_) => sections.extend(open.pop()),
                _ => {}
            }
        }
        while let Some(s) = open.pop() {
            sections.push(s);
        }
        if nested {
            notes.lines.push(format!(
                "thread \"{}\": nested critical sections are analysed as separate sections; the bpi bound ignores \
                 the chains nesting can add",
                def.name
            ));
        }
        if suspends {
            notes.lines.push(format!(
                "thread \"{}\": sleeps while holding a lock: the sleep counts in the section's length, as in C",
                def.name
            ));
        }
        // A `lock` step holds a guard: under rcs such a section is waited for, not aborted.
        for (r, d) in sections {
            task = task.guarded_section(r, d);
        }
        let at = match cpus.iter().position(|c| c.cpu == def.cpu) {
            Some(at) => at,
            None => {
                cpus.push(CpuModel { cpu: def.cpu, tasks: resources(sc), threads: Vec::new(), sleeps: Vec::new() });
                cpus.len() - 1
            }
        };
        cpus[at].tasks.add_task(task);
        cpus[at].threads.push(i);
        cpus[at].sleeps.push(sleeps);
    }
    cpus.sort_by_key(|c| c.cpu);
    cpus
}

/// The `C` of a thread: its declared `wcet`, unless its steps can ask for more, plus the time it
/// sleeps within a job. The kernel does not hold a job to its `wcet`, so a job whose steps are
/// longer runs them all, and an analysis on the declared figure would vouch for less work than
/// the job does. A job that sleeps is a self-suspending task, which none of the tests model:
/// counting the sleep as if the job ran then (suspension-oblivious) bounds both its own
/// response and what it can cost the others.
/// Returns `C` and the sleep it includes.
fn analysed_wcet(def: &ThreadDef, notes: &mut Notes) -> (Duration, Duration) {
    if def.forever {
        return (def.wcet, Duration::ZERO);
    }
    let (mut longest, mut sleeps) = (Duration::ZERO, Duration::ZERO);
    for s in &def.steps {
        match *s {
            Step::Work(d) | Step::WorkBetween(_, d) => longest += d,
            Step::Sleep(d) => sleeps += d,
            _ => {}
        }
    }
    if longest > def.wcet {
        notes.warnings.push(format!(
            "thread \"{}\": its steps can take {} of work per job, more than its wcet of {}: analysed with C = {}",
            def.name,
            dur(longest),
            dur(def.wcet),
            dur(longest + sleeps)
        ));
    }
    let work = longest.max(def.wcet);
    if !sleeps.is_zero() {
        notes.lines.push(format!(
            "thread \"{}\": sleeps {} within a job, analysed as if it ran then: C = {} + {}",
            def.name,
            dur(sleeps),
            dur(work),
            dur(sleeps)
        ));
    }
    (work + sleeps, sleeps)
}

/// The scenario's resources as analysis resources (all of them, so indices match).
fn resources(sc: &Scenario) -> TaskSet {
    let mut ts = TaskSet::new();
    for r in &sc.resources {
        // A protocol the analysis cannot take is analysed as bpi, with a note saying why.
        let protocol = Protocol::from_name(&r.protocol).unwrap_or(Protocol::Bpi);
        let mut res = Resource::new(r.name.clone(), protocol);
        if let Some(c) = r.ceiling {
            res = res.ceiling(c);
        }
        ts.add_resource(res);
    }
    ts
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

fn kind(policy: &str) -> Kind {
    match policy {
        "fp" | "rm" | "dm" => Kind::FixedPriority,
        "edf" => Kind::Edf,
        "global-edf" => Kind::Global { edf: true },
        "global-fp" => Kind::Global { edf: false },
        _ => Kind::Other,
    }
}

fn dur(d: Duration) -> String {
    format!("{d:?}")
}

fn opt(d: Option<Duration>) -> String {
    d.map_or_else(|| "unbounded".to_string(), dur)
}

fn response_text(r: Response) -> (String, &'static str) {
    match r {
        Response::Bounded(d) => (dur(d), "ok"),
        Response::ExceedsDeadline(d) => (format!(">{}", dur(d)), "MISS"),
        Response::Unbounded => ("unbounded".into(), "MISS"),
        Response::NotCovered(d) => (format!("{}?", dur(d)), "n/a"),
        Response::Overloaded => ("overloaded".into(), "MISS"),
        Response::GaveUp(d) => (format!(">={}?", dur(d)), "n/a"),
    }
}

fn response_json(r: Response) -> Value {
    match r {
        Response::Bounded(d) => json!({ "kind": "bounded", "ns": d.as_nanos() as u64 }),
        Response::ExceedsDeadline(d) => json!({ "kind": "exceeds_deadline", "ns": d.as_nanos() as u64 }),
        Response::Unbounded => json!({ "kind": "unbounded" }),
        Response::NotCovered(d) => json!({ "kind": "not_covered", "ns": d.as_nanos() as u64 }),
        Response::Overloaded => json!({ "kind": "overloaded" }),
        Response::GaveUp(d) => json!({ "kind": "gave_up", "ns": d.as_nanos() as u64 }),
    }
}

fn ns(d: Option<Duration>) -> Value {
    d.map_or(Value::Null, |d| json!(d.as_nanos() as u64))
}

/// MSRP: when a resource is global (protocol `msrp`) and used, each CPU's task set is
/// inflated by what the other CPUs do ([`TaskSet::msrp_inflated`]): every request for a
/// global resource spins at most the sum over the other CPUs of their longest section on it,
/// which is added to the requester's `C` and to its section (a lower task's section and spin
/// are not preemptible). Returns the lines stating each spin bound, and their JSON.
fn msrp(cpus: &mut [CpuModel], notes: &mut Notes) -> (String, Vec<Value>) {
    let (mut text, mut json) = (String::new(), Vec::new());
    if !cpus.iter().any(|c| c.tasks.uses_msrp()) {
        return (text, json);
    }
    let originals: Vec<TaskSet> = cpus.iter().map(|c| c.tasks.clone()).collect();
    for (k, c) in cpus.iter_mut().enumerate() {
        let others: Vec<&TaskSet> = originals.iter().enumerate().filter(|&(o, _)| o != k).map(|(_, t)| t).collect();
        let own = &originals[k];
        for (r, res) in own.resources.iter().enumerate() {
            let used = own.tasks.iter().any(|t| t.sections.iter().any(|s| s.resource == r));
            if res.protocol != Protocol::Msrp || !used {
                continue;
            }
            let spin = own.msrp_spin(r, &others);
            text.push_str(&format!(
                "MSRP: a request for \"{}\" on CPU {} spins at most {}\n",
                res.name,
                c.cpu,
                dur(spin)
            ));
            json.push(json!({ "cpu": c.cpu, "resource": res.name, "spin_ns": spin.as_nanos() as u64 }));
        }
        c.tasks = own.msrp_inflated(&others);
    }
    notes.lines.push(
        "global resources (msrp): each C includes the spin of its requests, and B the longest global section plus \
         spin of a lower-priority thread of the CPU (or the local srp term, whichever is larger)"
            .to_string(),
    );
    (text, json)
}

/// A progress reporter for one CPU's response-time analysis: silent for the first two
/// seconds, then a line on stderr at most every two seconds.
fn progress(cpu: usize, total: usize) -> impl FnMut(usize) {
    let start = Instant::now();
    let mut next = Duration::from_secs(2);
    move |done| {
        let elapsed = start.elapsed();
        if elapsed >= next && done < total {
            eprintln!(
                "tempi analyze: CPU {cpu}: response times of {done} of {total} threads ({} s)",
                elapsed.as_secs()
            );
            next = elapsed + Duration::from_secs(2);
        }
    }
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

/// The line that states a broken necessary condition ([`TaskSet::infeasibility`]) of `ts`;
/// `cpu` names the CPU of a partitioned set (`None`: all `m` CPUs of a global one).
fn infeasible_text(ts: &TaskSet, why: &Infeasible, cpu: Option<usize>) -> String {
    match *why {
        Infeasible::Utilisation { utilisation, cpus } => {
            let u = above(utilisation, cpus);
            match cpu {
                Some(n) => format!("NOT schedulable: utilisation {u} > 1 on CPU {n}"),
                None => format!("NOT schedulable: utilisation {u} > {cpus} on {cpus} CPUs"),
            }
        }
        Infeasible::WcetAboveDeadline { task } => {
            let t = &ts.tasks[task];
            format!(
                "NOT schedulable: thread \"{}\" needs C = {} within D = {}, whatever the policy",
                t.name,
                dur(t.wcet),
                dur(t.deadline)
            )
        }
        Infeasible::TaskUtilisation { task, utilisation } => format!(
            "NOT schedulable: thread \"{}\" alone has utilisation {utilisation:.3} > 1 (its jobs run one at a time)",
            ts.tasks[task].name
        ),
    }
}

/// A utilisation the exact comparison found above `bound`, written so that it reads as above
/// it: three decimals, or as many as it takes when those round it down to the bound.
fn above(utilisation: f64, bound: usize) -> String {
    let short = format!("{utilisation:.3}");
    if short.parse::<f64>().is_ok_and(|u| u > bound as f64) {
        short
    } else if utilisation > bound as f64 {
        format!("{utilisation}")
    } else {
        format!("{bound} plus less than a floating-point rounding")
    }
}

fn infeasible_json(ts: &TaskSet, why: Option<&Infeasible>) -> Value {
    match why {
        None => Value::Null,
        Some(Infeasible::Utilisation { utilisation, cpus }) => {
            json!({ "kind": "utilisation", "utilisation": utilisation, "cpus": cpus })
        }
        Some(Infeasible::WcetAboveDeadline { task }) => {
            json!({ "kind": "wcet_above_deadline", "thread": ts.tasks[*task].name })
        }
        Some(Infeasible::TaskUtilisation { task, utilisation }) => {
            json!({ "kind": "task_utilisation", "thread": ts.tasks[*task].name, "utilisation": utilisation })
        }
    }
}

/// What a failed sufficient test says: nothing, unless the set is already known infeasible.
fn failed(infeasible: bool) -> &'static str {
    if infeasible {
        "fails"
    } else {
        "inconclusive"
    }
}

/// Threads named in a line, the first few only: a scenario may leave out thousands.
fn some_names<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    const SHOWN: usize = 3;
    let total = names.len();
    let mut text: Vec<String> = names.take(SHOWN).map(|n| format!("\"{n}\"")).collect();
    if total > SHOWN {
        text.push(format!("and {} more", total - SHOWN));
    }
    text.join(", ")
}

/// Run the analysis. Returns the text (or JSON) to print and the verdict. `placement` is the
/// partition the scenario's CPUs come from, if [`partition`] made them.
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
    let kind = kind(&sc.policy);
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

/// Why [`partition`] gives no placement.
pub enum PartitionError {
    /// Nothing to partition, or no test to partition with: a request that cannot be met.
    Refused(String),
    /// Every placement the heuristic tried fails the policy's test: not shown schedulable.
    NotFound(String),
}

/// Place the scenario's analysed threads on its CPUs with `fit` (`ffd` or `wfd`; tasks by
/// density), each CPU judged by the policy's test (response-time analysis under fixed priority,
/// the EDF tests under EDF). Returns the scenario with those CPUs (a resource follows its
/// users) and the placement for the report, or why no placement was found: the first task, in
/// density order, that fits on no CPU.
pub fn partition(sc: &Scenario, fit: Fit) -> Result<(Scenario, Placement), PartitionError> {
    let test = match kind(&sc.policy) {
        Kind::FixedPriority => CpuTest::ResponseTime,
        Kind::Edf => CpuTest::Edf,
        Kind::Global { .. } => {
            return Err(PartitionError::Refused(format!(
                "{}: policy \"{}\" migrates threads between CPUs, so there is nothing to partition; choose a \
                 per-CPU policy with --policy edf or --policy fp",
                sc.file, sc.policy
            )))
        }
        Kind::Other => {
            return Err(PartitionError::Refused(format!(
                "{}: policy \"{}\": no per-CPU test to partition with (fixed priority or EDF only)",
                sc.file, sc.policy
            )))
        }
    };
    // Every analysed thread in one task set: the placement is what is being decided.
    let mut all = sc.clone();
    all.threads.iter_mut().for_each(|t| t.cpu = 0);
    let mut ignored = Notes::default();
    let models = model(&all, &mut ignored);
    let Some(m) = models.first() else {
        return Err(PartitionError::Refused(format!("{}: no periodic or sporadic thread to partition", sc.file)));
    };
    m.tasks.validate().map_err(|e| PartitionError::Refused(format!("{}: {e}", sc.file)))?;
    let heading = format!(
        "partition: {} over {} CPU(s), tasks by density, each CPU judged by {}\n",
        fit.name(),
        sc.cpus,
        test.name()
    );
    let p = match m.tasks.partition(sc.cpus, fit, SortKey::Density, test) {
        Ok(p) => p,
        Err(e) => {
            return Err(PartitionError::NotFound(format!("{heading}{}: no partition found: {e}", sc.file)));
        }
    };
    let mut placed = sc.clone();
    let mut text = heading;
    let mut rows = Vec::new();
    for (k, &thread) in m.threads.iter().enumerate() {
        let cpu = p.cpu_of[k];
        let t = &m.tasks.tasks[k];
        placed.threads[thread].cpu = cpu;
        text.push_str(&format!("  {:<14} -> CPU {cpu}  (density {:.3})\n", t.name, SortKey::Density.of(t)));
        rows.push(json!({ "thread": t.name, "cpu": cpu }));
    }
    for r in &mut placed.resources {
        if let Some(&u) = r.users.first() {
            r.cpu = placed.threads[u].cpu;
        }
    }
    let json = json!({ "fit": fit.name(), "key": "density", "test": test.name(), "cpus": sc.cpus, "threads": rows });
    Ok((placed, Placement { text, json }))
}
