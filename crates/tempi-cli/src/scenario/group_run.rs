//! Executing a scenario's thread groups: the `[[group]]` tables onto a runtime's
//! [`Spring`] plan executor, and the plan's part of the outputs (the report's `spring` key,
//! the planned windows and cutoff lines of the Gantt chart and the trace).
//!
//! Owns only the translation from groups to the executor and from its records to JSON. It
//! must not plan or run anything itself: the library's [`Spring`] does.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tempi::clock::Clock;
use tempi::policy::admit::planner::{Decision, Rejection};
use tempi::policy::sched::PLANNED_PRIORITY;
use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec, TaskOutcome};
use tempi::trace::plans::{PlanOverlay, PlannedWindow};
use tempi::{Runtime, Time};

use super::{GroupDef, PlannerDef, Scenario, ScenarioError, SpawnMode};

/// Enforcement sets per CPU for executing threads (those alive at once on one CPU).
pub(super) const SETS_PER_CPU: usize = 8;

impl Scenario {
    /// Thread sets the groups need on each CPU (the executor's enforcement pool).
    pub(super) fn group_sets(&self) -> usize {
        if self.groups.is_empty() {
            0
        } else {
            SETS_PER_CPU
        }
    }

    /// Threads the groups may spawn (one per group thread) plus the planner's.
    pub(super) fn group_threads(&self) -> usize {
        self.groups.iter().map(|g| g.threads.len()).sum::<usize>() + usize::from(!self.groups.is_empty())
    }

    /// Set up plan execution on `rt` for the scenario's groups, if it has any: each group is
    /// planned at its release and, if accepted, runs its plan (each task works its `actual`).
    ///
    /// ```
    /// use tempi::clock::VirtualClock;
    /// let text = "[[group]]\nname = \"g\"\ndeadline = \"1s\"\n[[group.thread]]\nname = \"a\"\n\
    ///             [[group.thread.task]]\nwcet = \"2ms\"\n";
    /// let sc = tempi_cli::parse("s.toml", text).unwrap();
    /// let (rt, _) = sc.runtime_with_admission::<VirtualClock>(sc.config()).unwrap();
    /// let mut rt = rt;
    /// let spring = sc.populate_groups(&mut rt).unwrap().unwrap();
    /// rt.run().unwrap();
    /// assert_eq!(spring.tasks()[0].actual_finish, Some(tempi::Time::from_millis(402)));
    /// ```
    pub fn populate_groups<C: Clock>(&self, rt: &mut Runtime<C>) -> Result<Option<Spring>, ScenarioError> {
        if self.groups.is_empty() {
            return Ok(None);
        }
        // The planned band is the executor's: an unplanned thread there would run above the
        // plan, or be taken for a planned one.
        for t in &self.threads {
            if let Some(p) = t.priority.filter(|&p| p >= PLANNED_PRIORITY) {
                return Err(ScenarioError {
                    file: self.file.clone(),
                    line: Some(t.line),
                    message: format!(
                        "thread \"{}\": priority {p} is in the band reserved for the threads that execute \
                         [[group]] plans ({PLANNED_PRIORITY} and up); use a lower priority",
                        t.name
                    ),
                });
            }
        }
        let tasks: usize = self.groups.iter().flat_map(|g| &g.threads).map(|t| t.tasks.len()).sum();
        let spec = SpringSpec {
            planner: self.planner.config(self.cpus, tasks),
            sets_per_cpu: SETS_PER_CPU,
            max_groups: self.groups.len(),
            ..SpringSpec::new(self.planner.config(self.cpus, tasks))
        };
        let spring = Spring::new(rt, spec).map_err(|e| self.error(format!("[[group]]: {e}")))?;
        let book = Arc::new(Book { groups: self.groups.clone(), planner: self.planner.clone() });
        for (i, g) in self.groups.iter().enumerate().filter(|(_, g)| !g.spawned) {
            let spec = book.spec(i, Time::ZERO);
            let at = |e: tempi::Error| ScenarioError {
                file: self.file.clone(),
                line: Some(g.line),
                message: format!("group \"{}\": {e}", g.name),
            };
            spring.add_group(rt, spec).map_err(at)?;
        }
        Ok(Some(spring))
    }
}

/// The scenario's groups, shared by the task bodies that spawn them.
struct Book {
    groups: Vec<GroupDef>,
    planner: PlannerDef,
}

impl Book {
    /// The executor's group for `groups[i]`, its release counted from `base`, with its
    /// dependents (theirs counted from its release).
    fn spec(self: &Arc<Book>, i: usize, base: Time) -> GroupSpec {
        let g = &self.groups[i];
        let mut request = self.planner.request(g);
        let release = base + g.release;
        request.deadline = release + g.deadline;
        let mut spec = GroupSpec::new(g.name.clone(), release, request.deadline).importance(g.importance);
        if let Some(w) = g.max_wait {
            spec = spec.max_wait(w);
        }
        for (def, req) in g.threads.iter().zip(request.threads) {
            let mut t = GroupThread::new(def.name.clone());
            for &p in &def.after {
                t = t.after(p);
            }
            if let Some(l) = req.locality {
                t = t.locality(l);
            }
            for (task, r) in def.tasks.iter().zip(req.tasks) {
                let actual = task.actual;
                if task.spawns.is_empty() && task.kills.is_empty() {
                    t = t.work(r, actual);
                    continue;
                }
                let (book, spawns, kills) = (self.clone(), task.spawns.clone(), task.kills.clone());
                t = t.task(r, move |cx, tcx| {
                    // Spawns, then kills, as the task starts; then the rest of its `actual`
                    // (a synchronous spawn's wait counts in it). A refusal or an error is in
                    // the executor's decisions and events.
                    let started = cx.now();
                    for (name, mode) in &spawns {
                        let Some(j) = book.groups.iter().position(|g| &g.name == name) else { continue };
                        let child = book.spec(j, cx.now());
                        let _ = match mode {
                            SpawnMode::Sync => tcx.spring.spawn_sync(cx, child).map(|_| ()),
                            SpawnMode::Async => tcx.spring.spawn_async(cx, child).map(|_| ()),
                        };
                    }
                    for name in &kills {
                        // The executor is this run's own: only "no such live group" can come back.
                        let _ = tcx.spring.kill(cx, name);
                    }
                    cx.work(tcx.scaled(actual).saturating_sub(cx.now() - started));
                });
            }
            spec = spec.thread(t);
        }
        for name in &g.dependents {
            if let Some(j) = self.groups.iter().position(|d| &d.name == name) {
                spec = spec.dependent(self.spec(j, release));
            }
        }
        spec
    }
}

#[derive(Serialize)]
struct DecisionJson<'a> {
    group: &'a str,
    requested: u64,
    decided: u64,
    decision: &'static str,
    reason: Option<&'static str>,
    tasks: usize,
    k: usize,
    evaluations: u64,
    backtracks: u32,
    planner_time: u64,
    budget: u64,
    cutoff: u64,
}

#[derive(Serialize)]
struct TaskJson<'a> {
    group: &'a str,
    thread: &'a str,
    task: usize,
    cpu: usize,
    planned_start: u64,
    planned_finish: u64,
    actual_start: Option<u64>,
    actual_finish: Option<u64>,
    outcome: &'static str,
}

#[derive(Serialize)]
struct SpringJson<'a> {
    decisions: Vec<DecisionJson<'a>>,
    tasks: Vec<TaskJson<'a>>,
    events: Vec<String>,
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The report's `spring` value: every planner answer and every task of an accepted group,
/// planned and actual times in integer nanoseconds.
///
/// ```
/// use tempi::clock::VirtualClock;
/// let text = "[[group]]\nname = \"g\"\ndeadline = \"1s\"\n[[group.thread]]\nname = \"a\"\n\
///             [[group.thread.task]]\nwcet = \"2ms\"\n";
/// let sc = tempi_cli::parse("s.toml", text).unwrap();
/// let mut rt = sc.runtime::<VirtualClock>(sc.config()).unwrap();
/// let spring = sc.populate_groups(&mut rt).unwrap().unwrap();
/// rt.run().unwrap();
/// let v: serde_json::Value = serde_json::from_str(&tempi_cli::scenario::spring_json(&spring)).unwrap();
/// assert_eq!(v["tasks"][0]["outcome"], "completed");
/// assert_eq!(v["decisions"].as_array().unwrap().len(), 1);
/// ```
pub fn spring_json(spring: &Spring) -> String {
    let decisions = spring.decisions();
    let tasks = spring.tasks();
    let json = SpringJson {
        decisions: decisions
            .iter()
            .map(|d| {
                let o = &d.outcome;
                let reason = match o.decision {
                    Decision::Accepted(_) => None,
                    Decision::Rejected(Rejection::Infeasible) => Some("infeasible"),
                    Decision::Rejected(Rejection::BudgetExhausted) => Some("budget-exhausted"),
                    Decision::Rejected(Rejection::BudgetTooSmall { .. }) => Some("budget-too-small"),
                };
                DecisionJson {
                    group: &d.group,
                    requested: d.requested.as_nanos(),
                    decided: d.decided.as_nanos(),
                    decision: if o.decision.is_accepted() { "accepted" } else { "rejected" },
                    reason,
                    tasks: o.tasks,
                    k: o.k,
                    evaluations: o.evaluations,
                    backtracks: o.backtracks,
                    planner_time: ns(o.cost),
                    budget: ns(o.budget),
                    cutoff: o.cutoff.as_nanos(),
                }
            })
            .collect(),
        tasks: tasks
            .iter()
            .map(|t| TaskJson {
                group: &t.group,
                thread: &t.thread,
                task: t.task,
                cpu: t.cpu,
                planned_start: t.planned_start.as_nanos(),
                planned_finish: t.planned_finish.as_nanos(),
                actual_start: t.actual_start.map(Time::as_nanos),
                actual_finish: t.actual_finish.map(Time::as_nanos),
                outcome: t.outcome.name(),
            })
            .collect(),
        events: spring.events(),
    };
    serde_json::to_string_pretty(&json).unwrap_or_else(|e| format!("\"unserialisable: {e}\""))
}

/// Lines for the text summary naming the tasks of accepted groups that did not complete: one
/// line per outcome (`overrun`, `killed`, `panicked`) that some task had, each task as
/// `GROUP/THREAD#TASK`; empty when every task completed or had not ended.
///
/// ```
/// use tempi::clock::VirtualClock;
/// let text = "[[group]]\nname = \"g\"\ndeadline = \"1s\"\n[[group.thread]]\nname = \"a\"\n\
///             [[group.thread.task]]\nwcet = \"2ms\"\n";
/// let sc = tempi_cli::parse("s.toml", text).unwrap();
/// let mut rt = sc.runtime::<VirtualClock>(sc.config()).unwrap();
/// let spring = sc.populate_groups(&mut rt).unwrap().unwrap();
/// rt.run().unwrap();
/// // Every task completed: nothing to say.
/// assert_eq!(tempi_cli::scenario::spring_summary(&spring), "");
/// ```
pub fn spring_summary(spring: &Spring) -> String {
    let tasks = spring.tasks();
    let mut text = String::new();
    for outcome in [TaskOutcome::Overrun, TaskOutcome::Killed, TaskOutcome::Panicked] {
        let names: Vec<String> = tasks
            .iter()
            .filter(|t| t.outcome == outcome)
            .map(|t| format!("{}/{}#{}", t.group, t.thread, t.task))
            .collect();
        if !names.is_empty() {
            text.push_str(&format!("spring tasks {}: {}\n", outcome.name(), names.join(", ")));
        }
    }
    text
}

/// `report` (a JSON object, as the library writes it) with a `spring` key added last.
///
/// ```
/// use tempi::clock::VirtualClock;
/// let text = "[[group]]\nname = \"g\"\ndeadline = \"1s\"\n[[group.thread]]\nname = \"a\"\n\
///             [[group.thread.task]]\nwcet = \"2ms\"\n";
/// let sc = tempi_cli::parse("s.toml", text).unwrap();
/// let mut rt = sc.runtime::<VirtualClock>(sc.config()).unwrap();
/// let spring = sc.populate_groups(&mut rt).unwrap().unwrap();
/// let out = rt.run().unwrap();
/// let report = tempi_cli::scenario::report_with_groups(&tempi::trace::report::to_json(&out), &spring);
/// let v: serde_json::Value = serde_json::from_str(&report).unwrap();
/// assert_eq!(v["spring"]["tasks"][0]["actual_start"], 400_000_000);
/// ```
pub fn report_with_groups(report: &str, spring: &Spring) -> String {
    let trimmed = report.trim_end();
    let Some(body) = trimmed.strip_suffix('}') else { return report.to_string() };
    let body = body.trim_end();
    let sep = if body.ends_with('{') { "" } else { "," };
    let spring = spring_json(spring).replace('\n', "\n  ");
    format!("{body}{sep}\n  \"spring\": {spring}\n}}\n")
}

/// The plan's marks for the Gantt chart and the trace: each task's planned window on its
/// executing thread's lane, and each planning's cutoff line.
///
/// ```
/// use tempi::clock::VirtualClock;
/// let text = "[[group]]\nname = \"g\"\ndeadline = \"1s\"\n[[group.thread]]\nname = \"a\"\n\
///             [[group.thread.task]]\nwcet = \"2ms\"\n";
/// let sc = tempi_cli::parse("s.toml", text).unwrap();
/// let mut rt = sc.runtime::<VirtualClock>(sc.config()).unwrap();
/// let spring = sc.populate_groups(&mut rt).unwrap().unwrap();
/// rt.run().unwrap();
/// assert_eq!(tempi_cli::scenario::overlay(&spring).windows.len(), 1); // one task
/// ```
pub fn overlay(spring: &Spring) -> PlanOverlay {
    let windows = spring
        .tasks()
        .into_iter()
        .map(|t| PlannedWindow {
            thread: format!("{}/{}", t.group, t.thread),
            task: t.task,
            cpu: t.cpu,
            start: t.planned_start,
            finish: t.planned_finish,
            actual_start: t.actual_start,
            actual_finish: t.actual_finish,
        })
        .collect();
    let cutoffs = spring.decisions().into_iter().map(|d| (d.group, d.requested, d.outcome.cutoff)).collect();
    PlanOverlay { windows, cutoffs }
}
