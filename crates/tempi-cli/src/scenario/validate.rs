//! The second pass of [`Scenario::parse`]: the raw structs checked for meaning and turned into
//! the validated types, for `[runtime]`, `[[resource]]` and `[[timer]]` tables, and the
//! command line's overrides (`--lock-protocol` before validation, through [`Overrides`];
//! `--policy` and `--quantum` on a loaded scenario).
//!
//! Owns the order tables are read in and the cross-table indices; `[[thread]]` tables are
//! checked in `threads.rs` and `[[set]]` tables in `sets.rs`. Policy names go through
//! `names.rs`, never to the library directly. It must not touch a runtime (`runtime.rs`) or
//! change the file format (`raw.rs`).

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use toml::{Spanned, Value};

use tempi::{Accounting, Costs, Time, TimerSpec, Timing};

use super::names::{self, DEFAULT_LOCK_PROTOCOL, DEFAULT_POLICY};
use super::raw::{RawFile, RawResource, RawTimer};
use super::sets::{set_def, NameIndices};
use super::source::Source;
use super::threads::thread_def;
use super::{Overrides, PriorityRule, ResourceDef, Scenario, ScenarioError, SetDef, Step, ThreadDef, TimerDef};

/// The most CPUs a scenario may ask for: every CPU gets preallocated pools, so a typo such as
/// `cpus = 10000` should be an error, not an out-of-memory.
const MAX_CPUS: i64 = 256;

impl Scenario {
    /// Read and validate a scenario file.
    ///
    /// ```
    /// let e = tempi_cli::Scenario::load(std::path::Path::new("no/such/file.toml")).unwrap_err();
    /// assert!(e.to_string().starts_with("no/such/file.toml: cannot read"));
    /// ```
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        Scenario::load_with(path, &Overrides::default())
    }

    /// Read and validate a scenario file with the command line's `overrides` applied before
    /// validation, so that a value given on the command line meets the checks the same value
    /// written in the file would.
    ///
    /// ```
    /// use tempi_cli::scenario::Overrides;
    /// let over = Overrides { lock_protocol: Some("km".into()) };
    /// let e = tempi_cli::Scenario::load_with(std::path::Path::new("no/such.toml"), &over).unwrap_err();
    /// assert!(e.to_string().starts_with("no/such.toml: cannot read"));
    /// ```
    pub fn load_with(path: &Path, overrides: &Overrides) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: file.clone(),
            line: None,
            message: format!("cannot read: {e}"),
        })?;
        Scenario::parse_with(&file, &text, overrides)
    }

    /// Validate scenario `text`; `file` names it in errors (what [`crate::parse`] calls).
    ///
    /// ```
    /// assert_eq!(tempi_cli::Scenario::parse("s.toml", "").unwrap().cpus, 1);
    /// ```
    pub fn parse(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse_with(file, text, &Overrides::default())
    }

    /// Validate scenario `text` with `overrides` applied first (what `--lock-protocol` does):
    /// every check then sees the overriding value, and an error it causes says where it
    /// came from.
    ///
    /// ```
    /// use tempi_cli::scenario::Overrides;
    /// let text = "[runtime]\ncpus = 2\n[[resource]]\nname = \"bus\"\nprotocol = \"msrp\"\n\
    ///             [[thread]]\nname = \"a\"\ncpu = 1\nsteps = [{ lock = \"bus\" }, { unlock = \"bus\" }]\n";
    /// assert!(tempi_cli::Scenario::parse("s.toml", text).is_ok());
    /// let over = Overrides { lock_protocol: Some("bpi".into()) };
    /// let e = tempi_cli::Scenario::parse_with("s.toml", text, &over).unwrap_err();
    /// assert_eq!(e.line, Some(9));
    /// assert!(e.message.contains("comes from --lock-protocol"));
    /// ```
    pub fn parse_with(file: &str, text: &str, overrides: &Overrides) -> Result<Scenario, ScenarioError> {
        let lock_override = overrides.lock_protocol.as_deref();
        if let Some(p) = lock_override.filter(|p| !names::known_lock_protocol(p)) {
            return Err(ScenarioError {
                file: file.to_string(),
                line: None,
                message: format!("--lock-protocol: {}", names::unknown_lock_protocol(p)),
            });
        }
        let src = Source::new(file, text);
        let raw: RawFile = toml::from_str(text).map_err(|e| src.toml_error(&e))?;
        let rt = raw.runtime.unwrap_or_default();
        let what = "[runtime]: ";

        let cpus = match &rt.cpus {
            None => 1,
            Some(c) if !(1..=MAX_CPUS).contains(c.get_ref()) => {
                return Err(src.field(what, "cpus", c, format!("must be between 1 and {MAX_CPUS}")))
            }
            Some(c) => *c.get_ref() as usize,
        };
        let quantum = match &rt.quantum {
            Some(q) => Some(src.positive(what, "quantum", q)?),
            None => None,
        };
        let policy = match &rt.policy {
            Some(p) if !names::known_policy(p.get_ref()) => {
                return Err(src.field(what, "policy", p, names::unknown_policy(p.get_ref())))
            }
            Some(p) => p.get_ref().clone(),
            None => DEFAULT_POLICY.to_string(),
        };
        let until = match &rt.until {
            Some(u) => Some(src.positive(what, "until", u)?),
            None => None,
        };
        let priorities = match &rt.priorities {
            None => None,
            Some(p) => match p.get_ref().as_str() {
                "rm" => Some(PriorityRule::RateMonotonic),
                "dm" => Some(PriorityRule::DeadlineMonotonic),
                other => {
                    return Err(src.field(
                        what,
                        "priorities",
                        p,
                        format!("unknown rule \"{other}\" (expected rm or dm)"),
                    ))
                }
            },
        };
        let priorities = priorities.or(names::implied_priority_rule(&policy));
        let seed = rt.seed.unwrap_or(0) as u64;
        let costs = match &rt.costs {
            None => Costs::default(),
            Some(c) => {
                let get = |field: &str, v: &Option<Spanned<Value>>| {
                    src.opt_duration(what, &format!("costs.{field}"), v).map(Option::unwrap_or_default)
                };
                Costs {
                    context_switch: get("context_switch", &c.context_switch)?,
                    lock_acquired: get("lock_acquired", &c.lock_acquired)?,
                    lock_not_acquired: get("lock_not_acquired", &c.lock_not_acquired)?,
                    unlock: get("unlock", &c.unlock)?,
                    abort: get("abort", &c.abort)?,
                }
            }
        };
        let job_overhead = src.opt_duration(what, "job_overhead", &rt.job_overhead)?.unwrap_or_default();
        let scheduler = names::scheduler(&policy, quantum, costs.context_switch, job_overhead).ok_or_else(|| {
            let at = rt.policy.as_ref().map_or(0, |p| p.span().start);
            src.err(
                at,
                format!("{what}field `quantum`: policy \"{policy}\" needs a time slice, e.g. quantum = \"2ms\""),
            )
        })?;
        let accounting = match &rt.accounting {
            None => Accounting::Group,
            Some(a) => match a.get_ref().as_str() {
                "off" => Accounting::Off,
                "thread" => Accounting::Thread,
                "group" => Accounting::Group,
                other => {
                    return Err(src.field(
                        what,
                        "accounting",
                        a,
                        format!("unknown accounting \"{other}\" (expected off, thread or group)"),
                    ))
                }
            },
        };

        // Names are looked up through indices built as the tables are read, so that a file with
        // many threads, resources or sets loads in time linear in its size.
        let mut resources: Vec<ResourceDef> = Vec::with_capacity(raw.resource.len());
        let mut resource_index: HashMap<String, usize> = HashMap::with_capacity(raw.resource.len());
        for r in &raw.resource {
            let mut def = resource_def(&src, r, cpus, &resources, &resource_index)?;
            if let Some(p) = lock_override {
                def.protocol = p.to_string();
            }
            resource_index.insert(def.name.clone(), resources.len());
            resources.push(def);
        }

        let mut threads: Vec<ThreadDef> = Vec::with_capacity(raw.thread.len());
        let mut thread_index: HashMap<String, usize> = HashMap::with_capacity(raw.thread.len());
        for t in &raw.thread {
            let def = thread_def(&src, t, cpus, &resources, &resource_index, lock_override)?;
            let index = threads.len();
            for s in &def.steps {
                // A thread's own lock steps come one after the other, so it is the last user
                // recorded if it already locked this resource.
                if let Step::Lock(r) = *s
                    && resources[r].users.last() != Some(&index)
                {
                    resources[r].users.push(index);
                }
            }
            if thread_index.contains_key(&def.name) {
                let n = &t.get_ref().name;
                return Err(src.field(&format!("thread \"{}\": ", def.name), "name", n, "duplicate thread name"));
            }
            thread_index.insert(def.name.clone(), index);
            threads.push(def);
        }

        check_ceilings(file, &resources).map_err(|e| from_lock_override(e, lock_override))?;

        let mut timers = Vec::with_capacity(raw.timer.len());
        for (i, t) in raw.timer.iter().enumerate() {
            timers.push(timer_def(&src, t, i + 1, cpus, &threads, &thread_index)?);
        }

        let mut sets: Vec<SetDef> = Vec::with_capacity(raw.set.len());
        let mut set_index: HashMap<String, usize> = HashMap::with_capacity(raw.set.len());
        // The set each thread already belongs to, by thread index.
        let mut set_of: Vec<Option<usize>> = vec![None; threads.len()];
        for t in &raw.set {
            let indices = NameIndices { threads: &thread_index, sets: &set_index };
            let def = set_def(&src, t, cpus, &sets, indices, &mut set_of)?;
            set_index.insert(def.name.clone(), sets.len());
            sets.push(def);
        }
        // Budgets are measured on the group clocks; with those switched off a budget would
        // silently never run out, which is worse than refusing the file.
        if accounting != Accounting::Group
            && let (Some(a), Some(set)) = (&rt.accounting, sets.iter().find(|s| s.budget.is_some()))
        {
            return Err(src.field(
                what,
                "accounting",
                a,
                format!("set \"{}\" (line {}) has a budget, which needs accounting = \"group\"", set.name, set.line),
            ));
        }

        let admission = super::requests::admission_def(&src, raw.admission.as_ref(), &raw.request, cpus, &policy)?;
        let (planner, groups) = super::groups::planner_and_groups(&src, raw.planner.as_ref(), &raw.group, cpus)?;

        let first_resource = resources.first().map(|r| (r.name.as_str(), r.line));
        if let Some(why) =
            names::global_refusal(&policy, &scheduler, first_resource, admission.is_some(), !groups.is_empty())
        {
            let at = rt.policy.as_ref().map_or(0, |p| p.span().start);
            return Err(src.err(at, format!("{what}{why}")));
        }

        Ok(Scenario {
            file: file.to_string(),
            cpus,
            policy,
            quantum,
            until,
            priorities,
            seed,
            threads,
            timers,
            sets,
            resources,
            accounting,
            costs,
            job_overhead,
            admission,
            planner,
            groups,
            warnings: src.take_warnings(),
            scheduler,
            policy_line: rt.policy.as_ref().map(|p| src.line(p.span().start)),
        })
    }

    /// Replace the scheduling policy (the command line's `--policy`).
    ///
    /// ```
    /// let mut sc = tempi_cli::parse("s.toml", "").unwrap();
    /// sc.set_policy("edf").unwrap();
    /// assert!(sc.set_policy("rr").is_err()); // needs a quantum
    /// ```
    pub fn set_policy(&mut self, name: &str) -> Result<(), ScenarioError> {
        let err = |message: String| ScenarioError { file: self.file.clone(), line: None, message };
        if !names::known_policy(name) {
            return Err(err(names::unknown_policy(name)));
        }
        let scheduler =
            names::scheduler(name, self.quantum, self.costs.context_switch, self.job_overhead).ok_or_else(|| {
                err(format!("policy \"{name}\" needs a time slice: set `quantum` in [runtime] or pass --quantum"))
            })?;
        let first_resource = self.resources.first().map(|r| (r.name.as_str(), r.line));
        if let Some(why) =
            names::global_refusal(name, &scheduler, first_resource, self.admission.is_some(), !self.groups.is_empty())
        {
            return Err(err(why));
        }
        self.scheduler = scheduler;
        if self.policy != name {
            self.policy_line = None;
        }
        self.policy = name.to_string();
        Ok(())
    }

    /// Which schedulability tests describe the scenario's policy: what the policy built from
    /// its name answers ([`tempi::policy::sched::PolicyClass::of`]), so an alias or a registered policy is judged
    /// by what it does.
    ///
    /// ```
    /// use tempi::policy::sched::PolicyClass;
    /// let sc = tempi_cli::parse("s.toml", "[runtime]\npolicy = \"rm\"\n").unwrap();
    /// assert_eq!(sc.policy_class(), PolicyClass::FixedPriority);
    /// let sc = tempi_cli::parse("s.toml", "[runtime]\ncpus = 2\npolicy = \"gedf\"\n").unwrap();
    /// assert_eq!(sc.policy_class(), PolicyClass::GlobalEdf);
    /// ```
    pub fn policy_class(&self) -> tempi::policy::sched::PolicyClass {
        tempi::policy::sched::PolicyClass::of(&*(self.scheduler)())
    }

    /// Refuse a policy that cannot run on the real clock (a global one: threads migrate
    /// between CPUs), at the line of `policy`, before anything is built: `tempi run` asks.
    ///
    /// ```
    /// let sc = tempi_cli::parse("s.toml", "[runtime]\ncpus = 2\npolicy = \"global-edf\"\n").unwrap();
    /// let e = sc.check_real_time().unwrap_err();
    /// assert_eq!(e.line, Some(3));
    /// assert!(tempi_cli::parse("s.toml", "").unwrap().check_real_time().is_ok());
    /// ```
    pub fn check_real_time(&self) -> Result<(), ScenarioError> {
        if !(self.scheduler)().global() {
            return Ok(());
        }
        let from = if self.policy_line.is_some() { "[runtime]: field `policy`" } else { "--policy" };
        Err(ScenarioError {
            file: self.file.clone(),
            line: self.policy_line,
            message: format!(
                "{from}: policy \"{}\" is global (threads migrate between CPUs): it runs in virtual time only \
                 (use `tempi simulate`, or a per-CPU policy such as fp or edf)",
                self.policy
            ),
        })
    }

    /// Set the round-robin time slice (the command line's `--quantum`), rebuilding the policy.
    ///
    /// ```
    /// let mut sc = tempi_cli::parse("s.toml", "").unwrap();
    /// sc.set_quantum(std::time::Duration::from_millis(2)).unwrap();
    /// sc.set_policy("rr").unwrap();
    /// ```
    pub fn set_quantum(&mut self, quantum: Duration) -> Result<(), ScenarioError> {
        if quantum.is_zero() {
            return Err(ScenarioError {
                file: self.file.clone(),
                line: None,
                message: "--quantum must be positive".into(),
            });
        }
        self.quantum = Some(quantum);
        let name = self.policy.clone();
        self.set_policy(&name)
    }
}

/// An error found with every resource's protocol replaced by `--lock-protocol`: it says so, as
/// the file alone would not have caused it.
pub(super) fn from_lock_override(mut e: ScenarioError, lock_override: Option<&str>) -> ScenarioError {
    if let Some(p) = lock_override {
        e.message.push_str(&format!("; the protocol \"{p}\" comes from --lock-protocol"));
    }
    e
}

/// A protocol that needs a ceiling gets it declared or computed from the threads that lock
/// the resource; a resource no thread locks and without a declared ceiling has none, and the
/// runtime would refuse to create its lock. Refusing it here says where, for every command.
fn check_ceilings(file: &str, resources: &[ResourceDef]) -> Result<(), ScenarioError> {
    match resources
        .iter()
        .find(|r| r.ceiling.is_none() && r.users.is_empty() && names::lock_protocol_needs_ceiling(&r.protocol))
    {
        None => Ok(()),
        Some(r) => Err(ScenarioError {
            file: file.to_string(),
            line: Some(r.line),
            message: format!(
                "resource \"{}\": protocol \"{}\" needs a ceiling, and no thread locks this resource to compute \
                 one from: declare `ceiling` or remove the resource",
                r.name, r.protocol
            ),
        }),
    }
}

fn resource_def(
    src: &Source<'_>,
    t: &Spanned<RawResource>,
    cpus: usize,
    earlier: &[ResourceDef],
    earlier_index: &HashMap<String, usize>,
) -> Result<ResourceDef, ScenarioError> {
    let line = src.line(t.span().start);
    let r = t.get_ref();
    let name = r.name.get_ref().clone();
    if name.trim().is_empty() {
        return Err(src.field("resource: ", "name", &r.name, "must not be empty"));
    }
    let what = format!("resource \"{name}\": ");
    let what = what.as_str();
    if let Some(&o) = earlier_index.get(&name) {
        return Err(src.field(
            what,
            "name",
            &r.name,
            format!("duplicate resource name (first used at line {})", earlier[o].line),
        ));
    }
    let protocol = match &r.protocol {
        None => DEFAULT_LOCK_PROTOCOL.to_string(),
        Some(p) if !names::known_lock_protocol(p.get_ref()) => {
            return Err(src.field(what, "protocol", p, names::unknown_lock_protocol(p.get_ref())))
        }
        Some(p) => p.get_ref().clone(),
    };
    let cpu = match &r.cpu {
        Some(c) if *c.get_ref() >= cpus => {
            return Err(src.field(
                what,
                "cpu",
                c,
                format!("CPU {} does not exist: [runtime] has cpus = {cpus}, numbered from 0", c.get_ref()),
            ))
        }
        Some(c) => *c.get_ref(),
        None => 0,
    };
    Ok(ResourceDef { name, line, protocol, ceiling: r.ceiling.as_ref().map(|c| *c.get_ref()), cpu, users: Vec::new() })
}

fn timer_def(
    src: &Source<'_>,
    t: &Spanned<RawTimer>,
    number: usize,
    cpus: usize,
    threads: &[ThreadDef],
    thread_index: &HashMap<String, usize>,
) -> Result<TimerDef, ScenarioError> {
    let line = src.line(t.span().start);
    let what = format!("timer #{number}: ");
    let what = what.as_str();
    let r = t.get_ref();
    let (spec, periodic) = match (&r.every, &r.at) {
        (Some(e), None) => {
            let period = src.positive(what, "every", e)?;
            let mut spec = TimerSpec::every(period);
            if let Some(s) = &r.start {
                spec = spec.starting(Time::ZERO + src.duration(what, "start", s)?);
            }
            (spec, true)
        }
        (None, Some(a)) => {
            if let Some(s) = &r.start {
                return Err(src.field(
                    what,
                    "start",
                    s,
                    "only applies to periodic timers (`every`); `at` is the firing time",
                ));
            }
            (TimerSpec::at(Time::ZERO + src.duration(what, "at", a)?), false)
        }
        (Some(e), Some(_)) => return Err(src.field(what, "at", e, "give either `every` or `at`, not both")),
        (None, None) => {
            return Err(src.err(t.span().start, format!("{what}field `every`: a timer needs `every` or `at`")))
        }
    };
    let cpu = match &r.cpu {
        Some(c) if *c.get_ref() >= cpus => {
            return Err(src.field(
                what,
                "cpu",
                c,
                format!("CPU {} does not exist: [runtime] has cpus = {cpus}, numbered from 0", c.get_ref()),
            ))
        }
        Some(c) => *c.get_ref(),
        None => 0,
    };
    let mut release = Vec::new();
    for name in r.release.iter().flatten() {
        let Some(&i) = thread_index.get(name.get_ref()) else {
            return Err(src.field(what, "release", name, format!("no thread named \"{}\"", name.get_ref())));
        };
        if !matches!(threads[i].timing, Timing::Sporadic { .. }) {
            return Err(src.field(
                what,
                "release",
                name,
                format!("thread \"{}\" is not sporadic: only sporadic threads are released on demand", name.get_ref()),
            ));
        }
        release.push(i);
    }
    Ok(TimerDef { line, spec: spec.cpu(cpu), periodic, release, cpu })
}
