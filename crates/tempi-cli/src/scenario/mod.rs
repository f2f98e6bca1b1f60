//! Scenario files: the TOML format `tempi simulate` and `tempi run` read, and the duration
//! syntax shared with the command line.
//!
//! Owns parsing (with `toml` + serde, so the runtime library stays free of file formats),
//! validation with `file:line:` error messages, and turning a validated [`Scenario`] into
//! threads, timing events and thread sets (with their budgets) on a
//! [`Runtime`](tempi::Runtime) of either clock. The format is documented in
//! `docs/SCENARIOS.md`; keep the two in step.
//!
//! Parsing happens in two passes. Serde fills "raw" structs whose validated fields are wrapped
//! in [`toml::Spanned`], so that the second pass, which checks meaning (durations, names, CPU
//! numbers, cross references), can still point at the line a value came from. Errors that
//! `toml` itself raises (syntax, unknown keys, wrong types) carry a byte span, which is turned
//! into a line number the same way.
//!
//! The files of this module, one stage each; a file does not reach into another's stage:
//! - `mod.rs` (this file): the public surface, i.e. [`ScenarioError`] and the validated types
//!   ([`Scenario`], [`ThreadDef`], ...). Declarations only: no parsing, no checks, no runtime.
//! - `duration.rs`: the duration syntax ([`parse_duration`]) and `work` ranges, without
//!   positions.
//! - `raw.rs`: the serde model, i.e. the structs `toml` fills; shapes only, no checks.
//! - `source.rs`: byte offsets to `FILE:LINE:` errors naming the table and key.
//! - `names.rs`: policy, locking-protocol and budget-action names: defaults, library lookups
//!   and the lists errors quote. Nothing else names a policy.
//! - `validate.rs`: the second pass ([`Scenario::parse`]) for `[runtime]`, `[[resource]]` and
//!   `[[timer]]`, and the command line's overrides; `threads.rs` and `sets.rs` check
//!   `[[thread]]` and `[[set]]` tables. They build the validated types and never touch a
//!   runtime.
//! - `requests.rs`: `[admission]` and `[[request]]`: their shapes, checks, submitter threads
//!   and the admission part of the report.
//! - `runtime.rs`: a validated scenario onto a runtime ([`Scenario::runtime`],
//!   [`Scenario::populate`]). It relies on validation instead of re-checking the file; its
//!   errors come from the runtime or from what a real-time clock cannot do.
//! - `groups.rs`: `[planner]` and `[[group]]` (thread groups for the Spring planner): their
//!   serde shape, checks and planner requests; nothing there runs.
//! - `group_run.rs`: the groups onto the library's Spring plan executor, and the plan's part
//!   of the report, the Gantt chart and the trace.
//! - `tests.rs`: unit tests.

mod duration;
mod group_run;
mod groups;
mod names;
mod raw;
mod requests;
mod runtime;
mod sets;
mod source;
mod threads;
mod validate;

#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

use tempi::policy::sched::SchedulerFactory;
use tempi::{Accounting, Costs, Criticality, MissPolicy, Replenishment, TimerSpec, Timing};

pub use duration::{parse_duration, DURATION_HINT};
pub use group_run::{overlay, report_with_groups, spring_json, spring_summary};
pub use groups::{GroupDef, GroupTaskDef, GroupThreadDef, PlannerDef, ProcessDef, SpawnMode};
pub use requests::{AdmissionDef, Admissions, RequestDef};

/// A scenario error, located in its file: printed as `FILE:LINE: MESSAGE` (or `FILE: MESSAGE`
/// when no line applies, e.g. the file cannot be read).
///
/// ```
/// let e = tempi_cli::parse("s.toml", "[[thread]]\nname = \"\"\n").unwrap_err();
/// assert_eq!((e.file.as_str(), e.line), ("s.toml", Some(2)));
/// assert_eq!(e.to_string(), "s.toml:2: thread: field `name`: must not be empty");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The scenario file as given on the command line.
    pub file: String,
    /// 1-based line of the offending value, when known.
    pub line: Option<usize>,
    /// What is wrong, naming the thread or timer and the field.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Values from the command line that replace the file's before it is validated, so that they
/// meet the same checks (and give the same errors, at the same lines) as the file's own.
///
/// ```
/// let over = tempi_cli::scenario::Overrides { lock_protocol: Some("pcp".into()) };
/// let sc = tempi_cli::Scenario::parse_with("s.toml", "[[resource]]\nname = \"r\"\nceiling = 2\n", &over).unwrap();
/// assert_eq!(sc.resources[0].protocol, "pcp");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// The locking protocol of every `[[resource]]` (`--lock-protocol`).
    pub lock_protocol: Option<String>,
}

impl Scenario {
    /// An error about the scenario as a whole, with no line.
    ///
    /// ```
    /// let sc = tempi_cli::parse("s.toml", "").unwrap();
    /// assert_eq!(sc.error("no threads").to_string(), "s.toml: no threads");
    /// ```
    pub fn error(&self, message: impl Into<String>) -> ScenarioError {
        ScenarioError { file: self.file.clone(), line: None, message: message.into() }
    }
}

// ---------------------------------------------------------------------------------------------
// Validated form.

/// How fixed priorities are assigned to threads that do not set one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriorityRule {
    /// Rate monotonic: shorter period, higher priority.
    RateMonotonic,
    /// Deadline monotonic: shorter relative deadline, higher priority.
    DeadlineMonotonic,
}

/// One step of a job body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Consume this much CPU time.
    Work(Duration),
    /// Consume a uniformly drawn amount in `[lo, hi]`, from the thread's seeded generator.
    WorkBetween(Duration, Duration),
    /// Sleep this long.
    Sleep(Duration),
    /// Give the CPU to the policy's next choice.
    Yield,
    /// Lock a resource (index into [`Scenario::resources`]).
    Lock(usize),
    /// Unlock a resource; validation made sure it is the innermost one held.
    Unlock(usize),
}

/// A validated `[[resource]]`: a lock the threads' `lock`/`unlock` steps use.
///
/// ```text
/// [[resource]]
/// name = "bus"
/// protocol = "pcp"   # km, bp, bpi (default), pcp, srp
/// ceiling = 3        # optional: else computed from the threads that lock it
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDef {
    /// Unique name.
    pub name: String,
    /// Line of its `[[resource]]` table.
    pub line: usize,
    /// Locking protocol (a name `tempi::policy::lock::by_name` knows).
    pub protocol: String,
    /// Declared ceiling priority.
    pub ceiling: Option<i32>,
    /// The CPU whose threads use it.
    pub cpu: usize,
    /// Indices into [`Scenario::threads`] of the threads that lock it.
    pub users: Vec<usize>,
}

/// A validated thread description.
///
/// ```
/// let sc = tempi_cli::parse("s.toml", "[[thread]]\nname = \"t\"\nperiod = \"4ms\"\nwcet = \"1ms\"\n").unwrap();
/// assert_eq!((sc.threads[0].name.as_str(), sc.threads[0].line), ("t", 1));
/// ```
#[derive(Debug, Clone)]
pub struct ThreadDef {
    /// Unique name.
    pub name: String,
    /// Line of its `[[thread]]` table, for errors raised when it is spawned.
    pub line: usize,
    /// Release pattern.
    pub timing: Timing,
    /// Declared worst-case execution time.
    pub wcet: Duration,
    /// Relative deadline, if set explicitly.
    pub deadline: Option<Duration>,
    /// Abort time after release.
    pub abort_after: Option<Duration>,
    /// Explicit fixed priority; wins over `priorities = "rm" | "dm"`.
    pub priority: Option<i32>,
    /// Semantic importance.
    pub importance: u32,
    /// CPU it is pinned to.
    pub cpu: usize,
    /// Hard or soft.
    pub criticality: Criticality,
    /// What happens to a late job.
    pub miss_policy: MissPolicy,
    /// Stop after this many jobs.
    pub max_jobs: Option<u32>,
    /// Stack size in bytes.
    pub stack: Option<usize>,
    /// The job body.
    pub steps: Vec<Step>,
    /// Whether the body repeats forever inside one job (a runaway that never completes).
    pub forever: bool,
    /// Run on an OS thread of its own in real time ([`tempi::ThreadSpec::os_backed`]), so
    /// that a long `work` step can be preempted without a runtime call; no effect in virtual
    /// time.
    pub os_backed: bool,
}

/// A validated timing event.
///
/// ```
/// let sc = tempi_cli::parse("s.toml", "[[timer]]\nevery = \"5ms\"\n").unwrap();
/// assert!(sc.timers[0].periodic && sc.timers[0].release.is_empty());
/// ```
#[derive(Debug, Clone)]
pub struct TimerDef {
    /// Line of its `[[timer]]` table.
    pub line: usize,
    /// When it fires and on which CPU.
    pub spec: TimerSpec,
    /// Whether it fires periodically.
    pub periodic: bool,
    /// The CPU whose dispatcher runs it.
    pub cpu: usize,
    /// Indices into [`Scenario::threads`] of the sporadic threads it releases.
    pub release: Vec<usize>,
}

/// The server shorthand of a `[[set]]`: a ready-made budget from the library.
///
/// ```text
/// server = "deferrable"  ->  Budget::deferrable_server(budget, period)
/// server = "sporadic"    ->  Budget::sporadic_server(budget, period)
/// server = "cbs"         ->  Budget::constant_bandwidth_server(budget, period)
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    /// Full refill every period, members suspended when it runs out.
    Deferrable,
    /// Sporadic-server replenishment, members suspended when it runs out.
    Sporadic,
    /// Constant bandwidth server (meant for EDF).
    ConstantBandwidth,
}

/// A validated budget of a thread set.
///
/// ```text
/// budget = "2ms", replenish = "periodic", period = "10ms", action = "suspend"
///   -> BudgetDef { amount: 2ms, replenish: Periodic { period: 10ms }, action: "suspend", server: None }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetDef {
    /// CPU time per replenishment period (or in total, when replenished by hand).
    pub amount: Duration,
    /// How it comes back (servers fill this in from their kind).
    pub replenish: Replenishment,
    /// What exhaustion does to the members: `notify`, `demote`, `suspend` or `kill`.
    pub action: String,
    /// Set when the table used the `server` shorthand.
    pub server: Option<ServerKind>,
}

/// A validated `[[set]]`: a named group of threads sharing one execution-time clock, with an
/// optional budget.
///
/// ```text
/// [[set]]
/// name = "sandbox"
/// members = ["runaway"]
/// budget = "2ms"
/// period = "10ms"
/// server = "deferrable"
/// ```
#[derive(Debug, Clone)]
pub struct SetDef {
    /// Unique set name.
    pub name: String,
    /// Line of its `[[set]]` table.
    pub line: usize,
    /// The CPU the set is created on (its budget events are handled there).
    pub cpu: usize,
    /// Indices into [`Scenario::threads`] of its members.
    pub members: Vec<usize>,
    /// Its budget, if any.
    pub budget: Option<BudgetDef>,
}

/// A scenario ready to run: runtime settings, threads, timing events and thread sets, all
/// checked.
///
/// ```
/// let sc = tempi_cli::parse("s.toml", "[runtime]\npolicy = \"edf\"\nuntil = \"10ms\"\n").unwrap();
/// assert_eq!((sc.policy.as_str(), sc.until), ("edf", Some(std::time::Duration::from_millis(10))));
/// ```
#[derive(Clone)]
pub struct Scenario {
    /// The file it came from, as named on the command line.
    pub file: String,
    /// Number of CPUs.
    pub cpus: usize,
    /// Scheduling policy name.
    pub policy: String,
    /// Round-robin time slice.
    pub quantum: Option<Duration>,
    /// Default horizon.
    pub until: Option<Duration>,
    /// Priority assignment rule.
    pub priorities: Option<PriorityRule>,
    /// Seed of the work-range generators.
    pub seed: u64,
    /// Threads, in file order.
    pub threads: Vec<ThreadDef>,
    /// Timing events, in file order.
    pub timers: Vec<TimerDef>,
    /// Thread sets, in file order.
    pub sets: Vec<SetDef>,
    /// Resources (locks), in file order.
    pub resources: Vec<ResourceDef>,
    /// Which execution-time clocks the kernel keeps.
    pub accounting: Accounting,
    /// Simulated overheads (`[runtime.costs]`), zero unless given. The policy is built with
    /// its `context_switch` when the file is parsed (and again by [`Scenario::set_policy`]),
    /// so a change made here afterwards reaches the kernel but not a policy such as the
    /// collator, until the policy is set again.
    pub costs: Costs,
    /// `[runtime] job_overhead`: reserved per job on top of its WCET by admission and the
    /// collator ([`tempi::Config::job_overhead`]); zero unless given.
    /// Like `costs`, the policy is built with it when the file is parsed.
    pub job_overhead: Duration,
    /// `[admission]` with its `[[request]]` tables, if the file has them.
    pub admission: Option<AdmissionDef>,
    /// How thread groups are planned (`[planner]`), defaults unless given.
    pub planner: PlannerDef,
    /// Thread groups for the Spring planner (`[[group]]`), in file order.
    pub groups: Vec<GroupDef>,
    /// What the file probably did not mean, though it is valid (a bare integer read as
    /// nanoseconds next to millisecond values, a `wcet` above the `period`, ...): each is
    /// `FILE:LINE: MESSAGE`, and `tempi` prints them on stderr before running.
    pub warnings: Vec<ScenarioError>,
    scheduler: SchedulerFactory,
    /// Line of `[runtime] policy`, while the policy is the file's (not `--policy`'s).
    policy_line: Option<usize>,
}

impl fmt::Debug for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scenario")
            .field("file", &self.file)
            .field("cpus", &self.cpus)
            .field("policy", &self.policy)
            .field("threads", &self.threads)
            .field("timers", &self.timers)
            .field("sets", &self.sets)
            .field("resources", &self.resources)
            .field("accounting", &self.accounting)
            .finish_non_exhaustive()
    }
}
