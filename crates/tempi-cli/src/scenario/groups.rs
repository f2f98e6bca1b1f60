//! Thread groups for the Spring planner: the `[[group]]` and `[planner]` tables, their serde
//! shape, their validation, and turning them into planner requests and a planner
//! configuration.
//!
//! Owns everything about groups in a scenario file. It must not run anything: `tempi plan`
//! (in the binary) plans the groups, and nothing here touches a runtime or the kernel.
//! `raw.rs` only names the two tables and `validate.rs` only calls [`planner_and_groups`].

use std::collections::HashMap;
use std::time::Duration;

use serde::Deserialize;
use toml::{Spanned, Value};

use tempi::policy::admit::planner::{
    Capacity, CostModel, GroupRequest, Heuristic, Locality, Mode, Placement, PlannerConfig, ResourceId, ResourceUse,
    TaskRequest, ThreadRequest,
};
use tempi::Time;

use super::source::Source;
use super::ScenarioError;

// ---------------------------------------------------------------------------------------------
// Serde shape.

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPlanner {
    heuristic: Option<Spanned<String>>,
    weight: Option<Spanned<f64>>,
    placement: Option<Spanned<String>>,
    stay_within_process: Option<bool>,
    max_backtracks: Option<Spanned<i64>>,
    wcet: Option<Spanned<Value>>,
    safety: Option<Spanned<Value>>,
    cost_fixed: Option<Spanned<Value>>,
    cost_per_evaluation: Option<Spanned<Value>>,
    local_percent: Option<Spanned<i64>>,
    fast_switch: Option<Spanned<Value>>,
    slow_switch: Option<Spanned<Value>>,
    resources: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    process: Vec<Spanned<RawProcess>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProcess {
    name: Spanned<String>,
    home_cpu: Spanned<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGroup {
    name: Spanned<String>,
    release: Option<Spanned<Value>>,
    deadline: Spanned<Value>,
    importance: Option<u32>,
    max_wait: Option<Spanned<Value>>,
    spawned: Option<bool>,
    dependent: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    thread: Vec<Spanned<RawGroupThread>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGroupThread {
    name: Spanned<String>,
    process: Option<Spanned<String>>,
    after: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    task: Vec<Spanned<RawGroupTask>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGroupTask {
    wcet: Spanned<Value>,
    actual: Option<Spanned<Value>>,
    #[serde(default)]
    resources: Vec<Spanned<RawUse>>,
    #[serde(default)]
    spawn: Vec<Spanned<RawSpawn>>,
    kill: Option<Vec<Spanned<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpawn {
    group: Spanned<String>,
    mode: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUse {
    name: Spanned<String>,
    mode: Option<Spanned<String>>,
}

// ---------------------------------------------------------------------------------------------
// Validated form.

/// A validated `[planner]` table: how the groups are planned.
///
/// ```
/// let sc = tempi_cli::parse("s.toml", "[planner]\nheuristic = \"min-d\"\nresources = [\"bus\"]\n").unwrap();
/// assert_eq!(sc.planner.heuristic.name(), "min-d");
/// assert_eq!(sc.planner.resources, ["bus"]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PlannerDef {
    /// How candidates are ranked.
    pub heuristic: Heuristic,
    /// How a thread's CPU is chosen.
    pub placement: Placement,
    /// Prefer candidates whose CPU last ran their own process.
    pub stay_within_process: bool,
    /// Backtracks allowed per request.
    pub max_backtracks: u32,
    /// The planner's declared worst-case time per request.
    pub wcet: Duration,
    /// Taken off the WCET to make the budget.
    pub safety: Duration,
    /// The modelled planner cost.
    pub cost: CostModel,
    /// Percentage of its WCET a task needs on its process's home CPU.
    pub local_percent: u32,
    /// Switching a CPU between tasks of one process.
    pub fast_switch: Duration,
    /// Switching a CPU between processes.
    pub slow_switch: Duration,
    /// The planner's resources, by name, in file order.
    pub resources: Vec<String>,
    /// The processes, in file order.
    pub processes: Vec<ProcessDef>,
}

/// A process of `[[planner.process]]`: a name and the CPU that holds its address space.
///
/// ```
/// let sc = tempi_cli::parse("s.toml", "[runtime]\ncpus = 2\n[[planner.process]]\nname = \"db\"\nhome_cpu = 1\n").unwrap();
/// assert_eq!(sc.planner.processes[0].home_cpu, 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessDef {
    /// Unique name.
    pub name: String,
    /// The CPU holding its address space.
    pub home_cpu: usize,
}

/// A validated `[[group]]`: a thread group the planner guarantees whole or refuses.
///
/// ```
/// let text = "[[group]]\nname = \"g\"\ndeadline = \"10ms\"\n[[group.thread]]\nname = \"a\"\n\
///             [[group.thread.task]]\nwcet = \"2ms\"\n";
/// let sc = tempi_cli::parse("s.toml", text).unwrap();
/// assert_eq!((sc.groups[0].name.as_str(), sc.groups[0].threads[0].tasks.len()), ("g", 1));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDef {
    /// Unique name.
    pub name: String,
    /// Line of its `[[group]]` table.
    pub line: usize,
    /// No task starts before this instant; the group is planned at it.
    pub release: Duration,
    /// Every task finishes by `release + deadline`.
    pub deadline: Duration,
    /// The group's value.
    pub importance: u32,
    /// The most the request may wait for its answer, if less than the planner's WCET.
    pub max_wait: Option<Duration>,
    /// The threads, each listed after its predecessors (not necessarily in file order).
    pub threads: Vec<GroupThreadDef>,
    /// Released only when a task spawns it (or as a dependent); its `release` then counts
    /// from that instant.
    pub spawned: bool,
    /// Groups planned together with this one, all or nothing (their `release` counts from
    /// this group's).
    pub dependents: Vec<String>,
}

/// How a task spawns a group.
///
/// ```
/// assert_ne!(tempi_cli::scenario::SpawnMode::Sync, tempi_cli::scenario::SpawnMode::Async);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpawnMode {
    /// Wait for the planner's answer.
    Sync,
    /// Go on at once; the answer comes later.
    Async,
}

/// A thread of a group.
///
/// ```
/// let text = "[[group]]\nname = \"g\"\ndeadline = \"10ms\"\n[[group.thread]]\nname = \"b\"\nafter = [\"a\"]\n\
///             [[group.thread.task]]\nwcet = \"1ms\"\n[[group.thread]]\nname = \"a\"\n[[group.thread.task]]\nwcet = \"1ms\"\n";
/// let g = &tempi_cli::parse("s.toml", text).unwrap().groups[0];
/// assert_eq!((g.threads[0].name.as_str(), g.threads[1].after.as_slice()), ("a", &[0][..]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupThreadDef {
    /// Name, unique in its group.
    pub name: String,
    /// Index into [`PlannerDef::processes`].
    pub process: Option<usize>,
    /// Indices (in [`GroupDef::threads`], all smaller than this thread's) of its predecessors.
    pub after: Vec<usize>,
    /// Its tasks, in order.
    pub tasks: Vec<GroupTaskDef>,
}

/// A task of a group's thread.
///
/// ```
/// use tempi::policy::admit::planner::Mode;
/// let text = "[planner]\nresources = [\"r\"]\n[[group]]\nname = \"g\"\ndeadline = \"10ms\"\n[[group.thread]]\nname = \"a\"\n\
///             [[group.thread.task]]\nwcet = \"1ms\"\nresources = [{ name = \"r\", mode = \"exclusive\" }]\n";
/// let t = &tempi_cli::parse("s.toml", text).unwrap().groups[0].threads[0].tasks[0];
/// assert_eq!(t.resources, [(0, Mode::Exclusive)]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupTaskDef {
    /// Worst-case execution time.
    pub wcet: Duration,
    /// What the task works when `tempi simulate` executes the plan (default: its WCET; more
    /// than the WCET makes it overrun).
    pub actual: Duration,
    /// Resources held (indices into [`PlannerDef::resources`]) and how.
    pub resources: Vec<(usize, Mode)>,
    /// Groups the task spawns as it starts, in order.
    pub spawns: Vec<(String, SpawnMode)>,
    /// Groups the task kills as it starts (after its spawns), by name.
    pub kills: Vec<String>,
}

impl Default for PlannerDef {
    fn default() -> PlannerDef {
        let c = PlannerConfig::new(1, 0);
        PlannerDef {
            heuristic: c.heuristic,
            placement: c.placement,
            stay_within_process: c.stay_within_process,
            max_backtracks: c.max_backtracks,
            wcet: c.planner_wcet,
            safety: c.safety,
            cost: c.cost,
            local_percent: c.local_percent,
            fast_switch: c.fast_switch,
            slow_switch: c.slow_switch,
            resources: Vec::new(),
            processes: Vec::new(),
        }
    }
}

impl PlannerDef {
    /// The planner configuration for `cpus` CPUs, with room for `tasks` tasks at once.
    ///
    /// ```
    /// let sc = tempi_cli::parse("s.toml", "[planner]\nmax_backtracks = 2\n").unwrap();
    /// assert_eq!(sc.planner.config(3, 10).max_backtracks, 2);
    /// ```
    pub fn config(&self, cpus: usize, tasks: usize) -> PlannerConfig {
        PlannerConfig {
            heuristic: self.heuristic,
            placement: self.placement,
            stay_within_process: self.stay_within_process,
            max_backtracks: self.max_backtracks,
            planner_wcet: self.wcet,
            safety: self.safety,
            cost: self.cost,
            local_percent: self.local_percent,
            fast_switch: self.fast_switch,
            slow_switch: self.slow_switch,
            capacity: Capacity::for_tasks(tasks.max(1)),
            ..PlannerConfig::new(cpus, self.resources.len())
        }
    }

    /// The planner request for `group`.
    ///
    /// ```
    /// let text = "[[group]]\nname = \"g\"\nrelease = \"1ms\"\ndeadline = \"10ms\"\n[[group.thread]]\nname = \"a\"\n\
    ///             [[group.thread.task]]\nwcet = \"2ms\"\n";
    /// let sc = tempi_cli::parse("s.toml", text).unwrap();
    /// let r = sc.planner.request(&sc.groups[0]);
    /// assert_eq!(r.deadline, tempi::Time::from_millis(11));
    /// ```
    pub fn request(&self, group: &GroupDef) -> GroupRequest {
        let release = Time::ZERO + group.release;
        let mut g = GroupRequest::new(release, release + group.deadline).importance(group.importance);
        for t in &group.threads {
            let mut thread = ThreadRequest::new();
            for &p in &t.after {
                thread = thread.after(p);
            }
            if let Some(p) = t.process {
                // The process number is its index: unique, which is all locality needs.
                let home_cpu = u16::try_from(self.processes[p].home_cpu).unwrap_or(u16::MAX);
                thread = thread.locality(Locality { process: p as u32, home_cpu });
            }
            for task in &t.tasks {
                let mut req = TaskRequest::new(task.wcet);
                req.resources = task
                    .resources
                    .iter()
                    .map(|&(r, mode)| ResourceUse { resource: ResourceId(r as u16), mode })
                    .collect();
                thread = thread.task(req);
            }
            g = g.thread(thread);
        }
        g
    }
}

/// The most resources a `[planner]` may declare (the planner numbers them in 16 bits).
const MAX_RESOURCES: usize = 65_536;

/// Check `[planner]` and every `[[group]]` for a scenario of `cpus` CPUs.
pub(super) fn planner_and_groups(
    src: &Source<'_>,
    raw_planner: Option<&RawPlanner>,
    raw_groups: &[Spanned<RawGroup>],
    cpus: usize,
) -> Result<(PlannerDef, Vec<GroupDef>), ScenarioError> {
    let planner = match raw_planner {
        Some(p) => planner_def(src, p, cpus)?,
        None => PlannerDef::default(),
    };
    let mut groups: Vec<GroupDef> = Vec::with_capacity(raw_groups.len());
    let mut names: HashMap<String, usize> = HashMap::with_capacity(raw_groups.len());
    for g in raw_groups {
        let def = group_def(src, g, &planner)?;
        if names.insert(def.name.clone(), groups.len()).is_some() {
            let what = format!("group \"{}\": ", def.name);
            return Err(src.field(&what, "name", &g.get_ref().name, "duplicate group name"));
        }
        groups.push(def);
    }
    // Spawn, kill and dependent names refer to groups of the file.
    for (g, raw) in groups.iter().zip(raw_groups) {
        let at = raw.span().start;
        let tasks = g.threads.iter().flat_map(|t| &t.tasks);
        let named = g.dependents.iter().chain(tasks.flat_map(|t| t.spawns.iter().map(|(n, _)| n).chain(&t.kills)));
        for n in named {
            if !names.contains_key(n) {
                let what = format!("group \"{}\": ", g.name);
                return Err(src.err(
                    at,
                    format!("{what}unknown group \"{n}\" (spawn, kill and dependent name groups of this file)"),
                ));
            }
        }
        if g.dependents.contains(&g.name) {
            return Err(src.err(at, format!("group \"{}\": a group cannot depend on itself", g.name)));
        }
        // Dependents of dependents are planned with the group too; a chain must not loop.
        if let Some(path) = dependent_cycle(&groups, &names, g) {
            let msg = format!("group \"{}\": dependent groups form a cycle: {}", g.name, path.join(" -> "));
            return Err(src.err(at, msg));
        }
    }
    Ok((planner, groups))
}

/// A chain of dependents from `g` back to a group already on it, if there is one (names
/// all refer to groups of the file).
fn dependent_cycle(groups: &[GroupDef], names: &HashMap<String, usize>, g: &GroupDef) -> Option<Vec<String>> {
    fn walk<'a>(
        groups: &'a [GroupDef],
        names: &HashMap<String, usize>,
        g: &'a GroupDef,
        path: &mut Vec<&'a str>,
    ) -> bool {
        if path.contains(&g.name.as_str()) {
            path.push(&g.name);
            return true;
        }
        path.push(&g.name);
        for d in &g.dependents {
            if let Some(&i) = names.get(d)
                && walk(groups, names, &groups[i], path)
            {
                return true;
            }
        }
        path.pop();
        false
    }
    let mut path = Vec::new();
    walk(groups, names, g, &mut path).then(|| path.into_iter().map(str::to_string).collect())
}

fn planner_def(src: &Source<'_>, p: &RawPlanner, cpus: usize) -> Result<PlannerDef, ScenarioError> {
    let what = "[planner]: ";
    let mut def = PlannerDef::default();
    if let Some(h) = &p.heuristic {
        def.heuristic = Heuristic::by_name(h.get_ref()).ok_or_else(|| {
            let msg = format!("unknown heuristic \"{}\" (known: {})", h.get_ref(), Heuristic::NAMES.join(", "));
            src.field(what, "heuristic", h, msg)
        })?;
    }
    if let Some(w) = &p.weight {
        let weight = *w.get_ref();
        if !matches!(def.heuristic, Heuristic::DPlusWEst { .. }) {
            return Err(src.field(what, "weight", w, "only the d+w*est heuristic has a weight"));
        }
        if !(0.0..=1e9).contains(&weight) {
            return Err(src.field(what, "weight", w, "must be between 0 and 1e9"));
        }
        def.heuristic = def.heuristic.with_weight_milli((weight * 1000.0).round() as u64);
    }
    if let Some(pl) = &p.placement {
        def.placement = Placement::by_name(pl.get_ref()).ok_or_else(|| {
            let msg = format!("unknown placement \"{}\" (known: {})", pl.get_ref(), Placement::NAMES.join(", "));
            src.field(what, "placement", pl, msg)
        })?;
    }
    def.stay_within_process = p.stay_within_process.unwrap_or(def.stay_within_process);
    if let Some(b) = &p.max_backtracks {
        def.max_backtracks =
            u32::try_from(*b.get_ref()).map_err(|_| src.field(what, "max_backtracks", b, "must be 0 or more"))?;
    }
    let duration = |field: &str, v: &Option<Spanned<Value>>, default: Duration| {
        src.opt_duration(what, field, v).map(|d| d.unwrap_or(default))
    };
    def.wcet = duration("wcet", &p.wcet, def.wcet)?;
    def.safety = duration("safety", &p.safety, def.safety)?;
    if def.safety >= def.wcet {
        let at = p.safety.as_ref().or(p.wcet.as_ref()).map_or(0, |v| v.span().start);
        return Err(src.err(at, format!("{what}the safety window must be shorter than the planner's wcet")));
    }
    def.cost = CostModel {
        fixed: duration("cost_fixed", &p.cost_fixed, def.cost.fixed)?,
        per_evaluation: duration("cost_per_evaluation", &p.cost_per_evaluation, def.cost.per_evaluation)?,
    };
    if let Some(l) = &p.local_percent {
        let v = *l.get_ref();
        if !(1..=100).contains(&v) {
            return Err(src.field(what, "local_percent", l, "must be between 1 and 100"));
        }
        def.local_percent = v as u32;
    }
    def.fast_switch = duration("fast_switch", &p.fast_switch, def.fast_switch)?;
    def.slow_switch = duration("slow_switch", &p.slow_switch, def.slow_switch)?;
    for r in p.resources.iter().flatten() {
        let name = r.get_ref();
        if name.is_empty() {
            return Err(src.field(what, "resources", r, "a resource name must not be empty"));
        }
        if def.resources.contains(name) {
            return Err(src.field(what, "resources", r, format!("resource \"{name}\" is listed twice")));
        }
        if def.resources.len() == MAX_RESOURCES {
            return Err(src.field(what, "resources", r, format!("at most {MAX_RESOURCES} resources")));
        }
        def.resources.push(name.clone());
    }
    for proc in &p.process {
        let proc = proc.get_ref();
        let name = proc.name.get_ref();
        let pwhat = format!("[[planner.process]] \"{name}\": ");
        if name.is_empty() {
            return Err(src.field(&pwhat, "name", &proc.name, "must not be empty"));
        }
        if def.processes.iter().any(|q| &q.name == name) {
            return Err(src.field(&pwhat, "name", &proc.name, "duplicate process name"));
        }
        let cpu = *proc.home_cpu.get_ref();
        if cpu < 0 || cpu as usize >= cpus {
            let msg = format!("CPU {cpu} does not exist (the scenario has {cpus}: 0 to {})", cpus - 1);
            return Err(src.field(&pwhat, "home_cpu", &proc.home_cpu, msg));
        }
        def.processes.push(ProcessDef { name: name.clone(), home_cpu: cpu as usize });
    }
    Ok(def)
}

fn group_def(src: &Source<'_>, g: &Spanned<RawGroup>, planner: &PlannerDef) -> Result<GroupDef, ScenarioError> {
    let line = src.line(g.span().start);
    let g = g.get_ref();
    let name = g.name.get_ref().clone();
    let what = format!("group \"{name}\": ");
    if name.is_empty() {
        return Err(src.field("group: ", "name", &g.name, "must not be empty"));
    }
    let release = src.opt_duration(&what, "release", &g.release)?.unwrap_or_default();
    let deadline = src.positive(&what, "deadline", &g.deadline)?;
    if (Time::ZERO + release + deadline) == Time::MAX {
        return Err(src.field(&what, "deadline", &g.deadline, "release + deadline is too far in the future"));
    }
    let max_wait = match &g.max_wait {
        Some(w) => Some(src.positive(&what, "max_wait", w)?),
        None => None,
    };
    if g.thread.is_empty() {
        return Err(src.err(g.name.span().start, format!("{what}needs at least one [[group.thread]]")));
    }

    // Threads in file order first; predecessors are resolved once every name is known.
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(g.thread.len());
    for (i, t) in g.thread.iter().enumerate() {
        let t = t.get_ref();
        if t.name.get_ref().is_empty() {
            return Err(src.field(&format!("{what}thread: "), "name", &t.name, "must not be empty"));
        }
        if index.insert(t.name.get_ref(), i).is_some() {
            let msg = format!("duplicate thread name \"{}\" in this group", t.name.get_ref());
            return Err(src.field(&what, "name", &t.name, msg));
        }
    }
    let mut file_threads: Vec<GroupThreadDef> = Vec::with_capacity(g.thread.len());
    for t in &g.thread {
        let t = t.get_ref();
        let twhat = format!("{what}thread \"{}\": ", t.name.get_ref());
        let process = match &t.process {
            None => None,
            Some(p) => Some(planner.processes.iter().position(|q| &q.name == p.get_ref()).ok_or_else(|| {
                let known: Vec<&str> = planner.processes.iter().map(|q| q.name.as_str()).collect();
                let known = if known.is_empty() { "none declared".to_string() } else { known.join(", ") };
                src.field(&twhat, "process", p, format!("unknown process \"{}\" (known: {known})", p.get_ref()))
            })?),
        };
        let mut after = Vec::new();
        for a in t.after.iter().flatten() {
            if a.get_ref() == t.name.get_ref() {
                return Err(src.field(&twhat, "after", a, "a thread cannot come after itself"));
            }
            let Some(&p) = index.get(a.get_ref().as_str()) else {
                let msg = format!("unknown predecessor \"{}\" (not a thread of this group)", a.get_ref());
                return Err(src.field(&twhat, "after", a, msg));
            };
            if after.contains(&p) {
                return Err(src.field(&twhat, "after", a, format!("predecessor \"{}\" named twice", a.get_ref())));
            }
            after.push(p);
        }
        if t.task.is_empty() {
            return Err(src.err(t.name.span().start, format!("{twhat}needs at least one [[group.thread.task]]")));
        }
        let mut tasks = Vec::with_capacity(t.task.len());
        for task in &t.task {
            let task = task.get_ref();
            let wcet = src.positive(&twhat, "wcet", &task.wcet)?;
            let actual = src.opt_duration(&twhat, "actual", &task.actual)?.unwrap_or(wcet);
            let mut resources: Vec<(usize, Mode)> = Vec::with_capacity(task.resources.len());
            for u in &task.resources {
                let u = u.get_ref();
                let r = planner.resources.iter().position(|n| n == u.name.get_ref()).ok_or_else(|| {
                    let known = if planner.resources.is_empty() {
                        "none declared".to_string()
                    } else {
                        planner.resources.join(", ")
                    };
                    let msg = format!(
                        "unknown resource \"{}\" (declare it in [planner] resources; known: {known})",
                        u.name.get_ref()
                    );
                    src.field(&twhat, "resources", &u.name, msg)
                })?;
                let mode = match &u.mode {
                    None => Mode::Exclusive,
                    Some(m) => match m.get_ref().as_str() {
                        "exclusive" => Mode::Exclusive,
                        "shared" => Mode::Shared,
                        other => {
                            let msg = format!("unknown mode \"{other}\" (expected shared or exclusive)");
                            return Err(src.field(&twhat, "resources", m, msg));
                        }
                    },
                };
                if resources.iter().any(|&(q, _)| q == r) {
                    let msg = format!("resource \"{}\" named twice in one task", u.name.get_ref());
                    return Err(src.field(&twhat, "resources", &u.name, msg));
                }
                resources.push((r, mode));
            }
            let mut spawns = Vec::with_capacity(task.spawn.len());
            for sp in &task.spawn {
                let sp = sp.get_ref();
                let mode = match sp.mode.as_ref().map(|m| m.get_ref().as_str()) {
                    None | Some("async") => SpawnMode::Async,
                    Some("sync") => SpawnMode::Sync,
                    Some(other) => {
                        let msg = format!("unknown spawn mode \"{other}\" (expected sync or async)");
                        return Err(src.field(&twhat, "spawn", sp.mode.as_ref().expect("given"), msg));
                    }
                };
                spawns.push((sp.group.get_ref().clone(), mode));
            }
            let kills = task.kill.iter().flatten().map(|k| k.get_ref().clone()).collect();
            tasks.push(GroupTaskDef { wcet, actual, resources, spawns, kills });
        }
        file_threads.push(GroupThreadDef { name: t.name.get_ref().clone(), process, after, tasks });
    }

    let order = precedence_order(&file_threads).map_err(|cycle| {
        let names: Vec<&str> = cycle.iter().map(|&i| file_threads[i].name.as_str()).collect();
        let at = g.thread[cycle[0]].get_ref().name.span().start;
        src.err(at, format!("{what}threads wait for each other in a cycle: {}", names.join(" -> ")))
    })?;
    // Renumber so every thread comes after its predecessors, as the planner requires.
    let mut new_index = vec![0; file_threads.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    let threads = order
        .iter()
        .map(|&old| {
            let mut t = file_threads[old].clone();
            t.after = t.after.iter().map(|&p| new_index[p]).collect();
            t
        })
        .collect();
    Ok(GroupDef {
        name,
        line,
        release,
        deadline,
        importance: g.importance.unwrap_or(0),
        max_wait,
        threads,
        spawned: g.spawned.unwrap_or(false),
        dependents: g.dependent.iter().flatten().map(|d| d.get_ref().clone()).collect(),
    })
}

/// A precedence order of `threads` (each after its predecessors, otherwise in file order), or
/// the threads of one cycle, the first one repeated at the end.
fn precedence_order(threads: &[GroupThreadDef]) -> Result<Vec<usize>, Vec<usize>> {
    let n = threads.len();
    let mut waiting: Vec<usize> = threads.iter().map(|t| t.after.len()).collect();
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    // Quadratic in the threads of one group, which stay few; it keeps file order among equals.
    while order.len() < n {
        let Some(next) = (0..n).find(|&i| !placed[i] && waiting[i] == 0) else {
            return Err(cycle(threads, &placed));
        };
        placed[next] = true;
        order.push(next);
        for (i, t) in threads.iter().enumerate() {
            waiting[i] -= t.after.iter().filter(|&&p| p == next).count();
        }
    }
    Ok(order)
}

/// A cycle among the threads not `placed` (each of them waits for another one of them).
fn cycle(threads: &[GroupThreadDef], placed: &[bool]) -> Vec<usize> {
    let start = placed.iter().position(|&p| !p).unwrap_or(0);
    let mut path = vec![start];
    let mut at = start;
    loop {
        at = threads[at].after.iter().copied().find(|&p| !placed[p]).unwrap_or(start);
        if let Some(pos) = path.iter().position(|&v| v == at) {
            let mut c = path.split_off(pos);
            c.push(at);
            // Reported in the direction of waiting reversed: predecessor first.
            c.reverse();
            return c;
        }
        path.push(at);
    }
}
