//! Scenario files: the TOML format `tempi simulate` and `tempi run` read, and the duration
//! syntax shared with the command line.
//!
//! Owns parsing (with `toml` + serde, so the runtime library stays free of file formats),
//! validation with `file:line:` error messages, and turning a validated [`Scenario`] into
//! threads, timing events and thread sets (with their budgets) on a [`Runtime`] of either
//! clock. The format is documented in
//! `docs/SCENARIOS.md`; keep the two in step.
//!
//! Parsing happens in two passes. Serde fills "raw" structs whose validated fields are wrapped
//! in [`toml::Spanned`], so that the second pass, which checks meaning (durations, names, CPU
//! numbers, cross references), can still point at the line a value came from. Errors that
//! `toml` itself raises (syntax, unknown keys, wrong types) carry a byte span, which is turned
//! into a line number the same way.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::Deserialize;
use toml::{Spanned, Value};

use tempi::clock::{Clock, ClockMode};
use tempi::policy::sched::{by_name, SchedulerFactory, NAMES};
use tempi::sync::{LockSpec, Mutex, MutexGuard};
use tempi::{
    assign_deadline_monotonic, assign_rate_monotonic, Accounting, Budget, Config, Costs, Criticality, MissPolicy,
    Replenishment, Runtime, ThreadId, ThreadSpec, Time, TimerSpec, Timing,
};

/// What a valid duration looks like, quoted in every duration error.
///
/// ```
/// assert!(tempi_cli::parse_duration("4 ms").unwrap_err().contains(tempi_cli::scenario::DURATION_HINT));
/// ```
pub const DURATION_HINT: &str = "expected e.g. 12ms, 500us, 1.5s";

/// Parse a duration: a decimal number followed by a unit (`ns`, `us` or `µs`, `ms`, `s`), or a
/// bare integer meaning nanoseconds. No spaces, no sign; fractions must come out as whole
/// nanoseconds.
///
/// ```
/// use std::time::Duration;
/// use tempi_cli::parse_duration;
/// assert_eq!(parse_duration("12ms"), Ok(Duration::from_millis(12)));
/// assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
/// assert_eq!(parse_duration("250"), Ok(Duration::from_nanos(250)));
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("invalid duration \"{text}\" ({DURATION_HINT})");
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale: u64 = match unit {
        "" | "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return Err(bad()),
    };
    let (int, frac) = match number.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (number, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    // A bare number is nanoseconds, and a nanosecond has no fraction worth writing.
    if !digits(int) || (unit.is_empty() && frac.is_some()) {
        return Err(bad());
    }
    let too_big = || format!("invalid duration \"{text}\": too large");
    let whole = int.parse::<u64>().map_err(|_| too_big())?.checked_mul(scale).ok_or_else(too_big)?;
    let part = match frac {
        None => 0,
        Some(f) if !digits(f) => return Err(bad()),
        Some(f) => {
            // Trailing zeros add no precision; dropping them keeps the exponent small.
            let f = f.trim_end_matches('0');
            if f.is_empty() {
                0
            } else if f.len() > 9 {
                return Err(format!("invalid duration \"{text}\": finer than a nanosecond"));
            } else {
                let numer = f.parse::<u128>().map_err(|_| bad())? * scale as u128;
                let denom = 10u128.pow(f.len() as u32);
                if numer % denom != 0 {
                    return Err(format!("invalid duration \"{text}\": finer than a nanosecond"));
                }
                (numer / denom) as u64
            }
        }
    };
    whole.checked_add(part).map(Duration::from_nanos).ok_or_else(too_big)
}

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

// ---------------------------------------------------------------------------------------------
// Raw form: what serde reads. Spanned fields are the ones checked after parsing.

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawFile {
    runtime: Option<RawRuntime>,
    #[serde(default)]
    thread: Vec<Spanned<RawThread>>,
    #[serde(default)]
    timer: Vec<Spanned<RawTimer>>,
    #[serde(default)]
    set: Vec<Spanned<RawSet>>,
    #[serde(default)]
    resource: Vec<Spanned<RawResource>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResource {
    name: Spanned<String>,
    protocol: Option<Spanned<String>>,
    ceiling: Option<Spanned<i32>>,
    cpu: Option<Spanned<usize>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRuntime {
    cpus: Option<Spanned<i64>>,
    policy: Option<Spanned<String>>,
    quantum: Option<Spanned<Value>>,
    until: Option<Spanned<Value>>,
    priorities: Option<Spanned<String>>,
    seed: Option<i64>,
    accounting: Option<Spanned<String>>,
    costs: Option<RawCosts>,
}

/// `[runtime.costs]`: simulated overheads of the runtime's own operations.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawCosts {
    context_switch: Option<Spanned<Value>>,
    lock_acquired: Option<Spanned<Value>>,
    lock_not_acquired: Option<Spanned<Value>>,
    unlock: Option<Spanned<Value>>,
    abort: Option<Spanned<Value>>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
enum RawKind {
    Periodic,
    Sporadic,
    #[serde(alias = "one-shot")]
    Oneshot,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum RawCriticality {
    Hard,
    Soft,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum RawMissPolicy {
    Continue,
    Abort,
    SkipNext,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawThread {
    name: Spanned<String>,
    kind: Option<Spanned<RawKind>>,
    period: Option<Spanned<Value>>,
    phase: Option<Spanned<Value>>,
    deadline: Option<Spanned<Value>>,
    wcet: Option<Spanned<Value>>,
    min_interarrival: Option<Spanned<Value>>,
    abort_after: Option<Spanned<Value>>,
    priority: Option<i32>,
    importance: Option<u32>,
    cpu: Option<Spanned<usize>>,
    criticality: Option<RawCriticality>,
    miss_policy: Option<RawMissPolicy>,
    max_jobs: Option<Spanned<u32>>,
    stack: Option<Spanned<usize>>,
    steps: Option<Spanned<Vec<Spanned<RawStep>>>>,
    forever: Option<Spanned<bool>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    work: Option<Spanned<Value>>,
    sleep: Option<Spanned<Value>>,
    #[serde(rename = "yield")]
    yield_now: Option<Spanned<bool>>,
    lock: Option<Spanned<String>>,
    unlock: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTimer {
    every: Option<Spanned<Value>>,
    at: Option<Spanned<Value>>,
    start: Option<Spanned<Value>>,
    cpu: Option<Spanned<usize>>,
    release: Option<Vec<Spanned<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSet {
    name: Spanned<String>,
    cpu: Option<Spanned<usize>>,
    members: Option<Vec<Spanned<String>>>,
    budget: Option<Spanned<Value>>,
    replenish: Option<Spanned<String>>,
    period: Option<Spanned<Value>>,
    action: Option<Spanned<String>>,
    server: Option<Spanned<String>>,
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

impl BudgetDef {
    /// The library budget this describes.
    ///
    /// ```text
    /// BudgetDef { amount: 2ms, server: Some(Deferrable), replenish: Periodic { period: 10ms }, .. }.budget()
    ///   == Budget::deferrable_server(2ms, 10ms)
    /// ```
    pub fn budget(&self) -> Budget {
        let period = match self.replenish {
            Replenishment::Manual => Duration::ZERO,
            Replenishment::Periodic { period }
            | Replenishment::Sporadic { period }
            | Replenishment::ConstantBandwidth { period } => period,
        };
        match self.server {
            // The library's constructors are the reference definition of each server; going
            // through them keeps the file format and the API from drifting apart.
            Some(ServerKind::Deferrable) => Budget::deferrable_server(self.amount, period),
            Some(ServerKind::Sporadic) => Budget::sporadic_server(self.amount, period),
            Some(ServerKind::ConstantBandwidth) => Budget::constant_bandwidth_server(self.amount, period),
            None => {
                // Names were checked when the file was read; notify is the harmless fallback.
                let action = budget_action(&self.action).unwrap_or_else(|| Box::new(tempi::policy::budget::Notify));
                Budget::new(self.amount).replenish(self.replenish).boxed_action(action)
            }
        }
    }
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
    /// Simulated overheads (`[runtime.costs]`), zero unless given.
    pub costs: Costs,
    scheduler: SchedulerFactory,
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

/// The most CPUs a scenario may ask for: every CPU gets preallocated pools, so a typo such as
/// `cpus = 10000` should be an error, not an out-of-memory.
const MAX_CPUS: i64 = 256;

/// Smallest stack a thread may ask for: what the runtime needs to unwind and report a panic.
const MIN_STACK: usize = tempi::MIN_STACK_SIZE;
/// Largest stack a thread may ask for: 1 GiB.
const MAX_STACK: usize = 1 << 30;

/// Where errors are reported: the file name and its text, to turn byte offsets into lines.
struct Source<'a> {
    file: &'a str,
    text: &'a str,
    /// Byte offset of the start of every line after the first, in increasing order. Every
    /// table asks for its line, so counting newlines from the start each time would make
    /// loading quadratic in the size of the file.
    line_starts: Vec<usize>,
}

impl Source<'_> {
    fn new<'a>(file: &'a str, text: &'a str) -> Source<'a> {
        let line_starts = text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1).collect();
        Source { file, text, line_starts }
    }

    /// The 1-based line of byte `offset`: one more than the number of newlines before it.
    fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.line_starts.partition_point(|&start| start <= end) + 1
    }

    fn err(&self, offset: usize, message: impl Into<String>) -> ScenarioError {
        ScenarioError { file: self.file.to_string(), line: Some(self.line(offset)), message: message.into() }
    }

    /// `WHAT: field `FIELD`: MESSAGE` at the value's line.
    fn field<T>(&self, what: &str, field: &str, at: &Spanned<T>, message: impl fmt::Display) -> ScenarioError {
        self.err(at.span().start, format!("{what}field `{field}`: {message}"))
    }

    fn duration(&self, what: &str, field: &str, v: &Spanned<Value>) -> Result<Duration, ScenarioError> {
        duration_value(v.get_ref()).map_err(|m| self.field(what, field, v, m))
    }

    fn opt_duration(
        &self,
        what: &str,
        field: &str,
        v: &Option<Spanned<Value>>,
    ) -> Result<Option<Duration>, ScenarioError> {
        v.as_ref().map(|v| self.duration(what, field, v)).transpose()
    }

    fn positive(&self, what: &str, field: &str, v: &Spanned<Value>) -> Result<Duration, ScenarioError> {
        let d = self.duration(what, field, v)?;
        if d.is_zero() {
            return Err(self.field(what, field, v, "must be positive"));
        }
        Ok(d)
    }

    /// Turn one of `toml`'s own errors into ours: its span gives the line, the text around it
    /// the field and the table, so the message reads like the ones raised after parsing.
    fn toml_error(&self, e: &toml::de::Error) -> ScenarioError {
        // toml's messages may span lines ("invalid table header\nexpected ..."); ours are one.
        let message = e.message().trim().lines().map(str::trim).collect::<Vec<_>>().join("; ");
        let Some(span) = e.span() else {
            return ScenarioError { file: self.file.to_string(), line: None, message };
        };
        let mut prefix = section_context(self.text, span.start).map(|c| format!("{c}: ")).unwrap_or_default();
        if !message.contains("field `") {
            if let Some(key) = key_before(self.text, span.start) {
                prefix.push_str(&format!("field `{key}`: "));
            }
        }
        self.err(span.start, format!("{prefix}{message}"))
    }
}

/// A duration value from the file: a duration string, or an integer number of nanoseconds.
fn duration_value(v: &Value) -> Result<Duration, String> {
    match v {
        Value::String(s) => parse_duration(s),
        Value::Integer(n) => u64::try_from(*n)
            .map(Duration::from_nanos)
            .map_err(|_| format!("invalid duration {n}: durations cannot be negative")),
        other => Err(format!("invalid duration {other} ({DURATION_HINT}, or an integer number of nanoseconds)")),
    }
}

/// A `work` value: a duration or a range `"LO..HI"`.
fn work_value(v: &Value) -> Result<Step, String> {
    if let Value::String(s) = v {
        if let Some((lo, hi)) = s.split_once("..") {
            let (lo, hi) = (parse_duration(lo)?, parse_duration(hi)?);
            if lo > hi {
                return Err(format!("invalid range \"{s}\": the lower bound is above the upper"));
            }
            return Ok(if lo == hi { Step::Work(lo) } else { Step::WorkBetween(lo, hi) });
        }
    }
    duration_value(v).map(Step::Work)
}

/// The key whose value starts at or contains `offset`: the identifier before the last `=`
/// on that line, left of `offset`. Good enough for `key = value` and inline tables.
fn key_before(text: &str, offset: usize) -> Option<String> {
    let offset = floor_char_boundary(text, offset);
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let left = &text[line_start..offset];
    let eq = left.rfind('=')?;
    let key = left[..eq].trim_end();
    let start = key.rfind(|c: char| c.is_whitespace() || c == '{' || c == ',' || c == '[').map_or(0, |i| i + 1);
    let key = key[start..].trim_matches('"');
    (!key.is_empty()).then(|| key.to_string())
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// Which table `offset` falls in, from the table headers above it: `thread "NAME"` (or
/// `thread #N` if the table has no readable name), `set "NAME"` (or `set #N`), `timer #N`,
/// `[runtime]`.
fn section_context(text: &str, offset: usize) -> Option<String> {
    let offset = floor_char_boundary(text, offset);
    let lines: Vec<&str> = text.split('\n').collect();
    let target = text[..offset].matches('\n').count();
    let mut header: Option<(usize, &str)> = None;
    let (mut threads, mut timers, mut sets, mut resources) = (0, 0, 0, 0);
    for (i, line) in lines.iter().enumerate().take(target + 1) {
        let t = line.trim();
        if t.starts_with("[[thread]]") {
            threads += 1;
            header = Some((i, "thread"));
        } else if t.starts_with("[[timer]]") {
            timers += 1;
            header = Some((i, "timer"));
        } else if t.starts_with("[[set]]") {
            sets += 1;
            header = Some((i, "set"));
        } else if t.starts_with("[[resource]]") {
            resources += 1;
            header = Some((i, "resource"));
        } else if t.starts_with('[') {
            header = Some((i, if t.starts_with("[runtime]") { "runtime" } else { "" }));
        }
    }
    let (at, kind) = header?;
    match kind {
        "runtime" => Some("[runtime]".to_string()),
        "timer" => Some(format!("timer #{timers}")),
        "thread" | "set" | "resource" => {
            let name = lines[at + 1..].iter().take_while(|l| !l.trim().starts_with('[')).find_map(|l| {
                let (k, v) = l.split_once('=')?;
                let v = v.trim();
                (k.trim() == "name" && v.starts_with('"')).then(|| v[1..].split('"').next().unwrap_or("").to_string())
            });
            let number = match kind {
                "set" => sets,
                "resource" => resources,
                _ => threads,
            };
            Some(match name {
                Some(n) => format!("{kind} \"{n}\""),
                None => format!("{kind} #{number}"),
            })
        }
        _ => None,
    }
}

/// Whether `name` is a policy [`by_name`] knows (asking with a quantum, so `rr` counts).
fn known_policy(name: &str) -> bool {
    by_name(name, Some(Duration::from_millis(1))).is_some()
}

fn unknown_policy(name: &str) -> String {
    format!("unknown policy \"{name}\" (expected one of {})", NAMES.join(", "))
}

/// Budget action names the file accepts, in the order errors list them.
const ACTIONS: [&str; 4] = ["notify", "demote", "suspend", "kill"];

/// A built-in budget action by name (the library's own lookup).
fn budget_action(name: &str) -> Option<Box<dyn tempi::policy::budget::BudgetAction>> {
    tempi::policy::budget::by_name(name)
}

impl Scenario {
    /// Read and validate a scenario file.
    ///
    /// ```
    /// let e = tempi_cli::Scenario::load(std::path::Path::new("no/such/file.toml")).unwrap_err();
    /// assert!(e.to_string().starts_with("no/such/file.toml: cannot read"));
    /// ```
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            file: file.clone(),
            line: None,
            message: format!("cannot read: {e}"),
        })?;
        Scenario::parse(&file, &text)
    }

    /// Validate scenario `text`; `file` names it in errors (what [`crate::parse`] calls).
    ///
    /// ```
    /// assert_eq!(tempi_cli::Scenario::parse("s.toml", "").unwrap().cpus, 1);
    /// ```
    pub fn parse(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
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
            Some(p) if !known_policy(p.get_ref()) => {
                return Err(src.field(what, "policy", p, unknown_policy(p.get_ref())))
            }
            Some(p) => p.get_ref().clone(),
            None => "fp".to_string(),
        };
        let scheduler = by_name(&policy, quantum).ok_or_else(|| {
            let at = rt.policy.as_ref().map_or(0, |p| p.span().start);
            src.err(
                at,
                format!("{what}field `quantum`: policy \"{policy}\" needs a time slice, e.g. quantum = \"2ms\""),
            )
        })?;
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
        // The policy names "rm" and "dm" mean fixed priority with that assignment.
        let priorities = priorities.or(match policy.as_str() {
            "rm" => Some(PriorityRule::RateMonotonic),
            "dm" => Some(PriorityRule::DeadlineMonotonic),
            _ => None,
        });
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
            let def = resource_def(&src, r, cpus, &resources, &resource_index)?;
            resource_index.insert(def.name.clone(), resources.len());
            resources.push(def);
        }

        let mut threads: Vec<ThreadDef> = Vec::with_capacity(raw.thread.len());
        let mut thread_index: HashMap<String, usize> = HashMap::with_capacity(raw.thread.len());
        for t in &raw.thread {
            let def = thread_def(&src, t, cpus, &resources, &resource_index)?;
            let index = threads.len();
            for s in &def.steps {
                // A thread's own lock steps come one after the other, so it is the last user
                // recorded if it already locked this resource.
                if let Step::Lock(r) = *s {
                    if resources[r].users.last() != Some(&index) {
                        resources[r].users.push(index);
                    }
                }
            }
            if thread_index.contains_key(&def.name) {
                let n = &t.get_ref().name;
                return Err(src.field(&format!("thread \"{}\": ", def.name), "name", n, "duplicate thread name"));
            }
            thread_index.insert(def.name.clone(), index);
            threads.push(def);
        }

        check_ceilings(file, &resources)?;

        let mut timers = Vec::with_capacity(raw.timer.len());
        for (i, t) in raw.timer.iter().enumerate() {
            timers.push(timer_def(&src, t, i + 1, cpus, &threads, &thread_index)?);
        }

        let mut sets: Vec<SetDef> = Vec::with_capacity(raw.set.len());
        let mut set_index: HashMap<String, usize> = HashMap::with_capacity(raw.set.len());
        // The set each thread already belongs to, by thread index.
        let mut set_of: Vec<Option<usize>> = vec![None; threads.len()];
        for t in &raw.set {
            let names = Names { threads: &thread_index, sets: &set_index };
            let def = set_def(&src, t, cpus, &sets, names, &mut set_of)?;
            set_index.insert(def.name.clone(), sets.len());
            sets.push(def);
        }
        // Budgets are measured on the group clocks; with those switched off a budget would
        // silently never run out, which is worse than refusing the file.
        if accounting != Accounting::Group {
            if let (Some(a), Some(set)) = (&rt.accounting, sets.iter().find(|s| s.budget.is_some())) {
                return Err(src.field(
                    what,
                    "accounting",
                    a,
                    format!(
                        "set \"{}\" (line {}) has a budget, which needs accounting = \"group\"",
                        set.name, set.line
                    ),
                ));
            }
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
            scheduler,
        })
    }

    /// Replace every resource's locking protocol (the command line's `--lock-protocol`).
    ///
    /// ```
    /// let mut sc = tempi_cli::parse("s.toml", "[[resource]]\nname = \"r\"\n").unwrap();
    /// sc.set_lock_protocol("km").unwrap();
    /// assert_eq!(sc.resources[0].protocol, "km");
    /// assert!(sc.set_lock_protocol("pcp").is_err()); // unused, so no ceiling to compute
    /// ```
    pub fn set_lock_protocol(&mut self, name: &str) -> Result<(), ScenarioError> {
        if !known_lock_protocol(name) {
            return Err(ScenarioError { file: self.file.clone(), line: None, message: unknown_lock_protocol(name) });
        }
        for r in &mut self.resources {
            r.protocol = name.to_string();
        }
        check_ceilings(&self.file, &self.resources)
    }

    /// Every thread's spawn description, with the priority rule and explicit priorities
    /// applied (what [`Scenario::populate`] spawns).
    ///
    /// ```
    /// let text = "[runtime]\npriorities = \"rm\"\n[[thread]]\nname = \"a\"\nperiod = \"8ms\"\n\
    ///             [[thread]]\nname = \"b\"\nperiod = \"4ms\"\n";
    /// let specs = tempi_cli::parse("s.toml", text).unwrap().specs();
    /// assert!(specs[1].priority_value() > specs[0].priority_value());
    /// ```
    pub fn specs(&self) -> Vec<ThreadSpec> {
        let mut specs: Vec<ThreadSpec> = self.threads.iter().map(ThreadDef::spec).collect();
        match self.priorities {
            Some(PriorityRule::RateMonotonic) => assign_rate_monotonic(&mut specs),
            Some(PriorityRule::DeadlineMonotonic) => assign_deadline_monotonic(&mut specs),
            None => {}
        }
        specs
            .into_iter()
            .zip(&self.threads)
            .map(|(spec, def)| match def.priority {
                Some(p) => spec.priority(p),
                None => spec,
            })
            .collect()
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
        if !known_policy(name) {
            return Err(err(unknown_policy(name)));
        }
        self.scheduler = by_name(name, self.quantum).ok_or_else(|| {
            err(format!("policy \"{name}\" needs a time slice: set `quantum` in [runtime] or pass --quantum"))
        })?;
        self.policy = name.to_string();
        Ok(())
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

    /// Whether the scenario would run forever without a horizon: a periodic thread without
    /// `max_jobs`, a `forever` thread, or a periodic timer keeps producing work.
    ///
    /// ```
    /// let sc = tempi_cli::parse("s.toml", "[[thread]]\nname = \"p\"\nperiod = \"1ms\"\n").unwrap();
    /// assert!(sc.never_ends());
    /// ```
    pub fn never_ends(&self) -> bool {
        self.threads.iter().any(|t| t.forever || (matches!(t.timing, Timing::Periodic { .. }) && t.max_jobs.is_none()))
            || self.timers.iter().any(|t| t.periodic)
    }

    /// The runtime configuration: CPUs, policy, accounting, and enough thread and set slots
    /// for every thread and set.
    ///
    /// ```
    /// let sc = tempi_cli::parse("s.toml", "[runtime]\ncpus = 3\n").unwrap();
    /// assert_eq!(sc.config().cpus(), 3);
    /// ```
    pub fn config(&self) -> Config {
        Config::new(self.cpus)
            .scheduler_factory(self.scheduler.clone())
            .max_threads(self.threads.len().max(256))
            .max_sets(self.sets.len().max(64))
            .accounting(self.accounting)
            .costs(self.costs)
    }

    /// A runtime on clock `C` built from `config` (usually [`Scenario::config`], with the
    /// caller's additions), with every thread, lock, timing event and thread set of the
    /// scenario in place, ready to run.
    ///
    /// ```
    /// use tempi::clock::VirtualClock;
    /// let sc = tempi_cli::parse("s.toml", "[[thread]]\nname = \"t\"\nwcet = \"1ms\"\n").unwrap();
    /// let mut rt = sc.runtime::<VirtualClock>(sc.config().trace_capacity(0)).unwrap();
    /// assert_eq!(rt.run().unwrap().threads.len(), 1);
    /// ```
    pub fn runtime<C: Clock>(&self, config: Config) -> Result<Runtime<C>, ScenarioError> {
        let mut rt = Runtime::<C>::new(config).map_err(|e| self.error(e.to_string()))?;
        self.populate(&mut rt)?;
        Ok(rt)
    }

    /// An error about the scenario as a whole, with no line.
    ///
    /// ```
    /// let sc = tempi_cli::parse("s.toml", "").unwrap();
    /// assert_eq!(sc.error("no threads").to_string(), "s.toml: no threads");
    /// ```
    pub fn error(&self, message: impl Into<String>) -> ScenarioError {
        ScenarioError { file: self.file.clone(), line: None, message: message.into() }
    }

    /// Spawn every thread and register every timing event on `rt`. Errors the runtime raises
    /// are reported at the line of the thread or timer that caused them.
    ///
    /// ```
    /// let sc = tempi_cli::parse("s.toml", "[[thread]]\nname = \"t\"\nwcet = \"2ms\"\n").unwrap();
    /// let mut rt = tempi::Runtime::simulated(1);
    /// sc.populate(&mut rt).unwrap();
    /// assert_eq!(rt.run().unwrap().end, tempi::Time::from_millis(2));
    /// ```
    pub fn populate<C: Clock>(&self, rt: &mut Runtime<C>) -> Result<(), ScenarioError> {
        let at = |line: usize, message: String| ScenarioError { file: self.file.clone(), line: Some(line), message };
        // The locks need the threads' ids (their ceilings are computed from their users), and
        // the bodies need the locks: the bodies reach them through a cell filled once every
        // thread is spawned, before the run starts.
        let cell: Arc<OnceLock<Vec<Mutex<()>>>> = Arc::new(OnceLock::new());
        let names: Arc<Vec<String>> = Arc::new(self.resources.iter().map(|r| r.name.clone()).collect());
        let mut ids: Vec<ThreadId> = Vec::with_capacity(self.threads.len());
        for (index, (spec, def)) in self.specs().into_iter().zip(&self.threads).enumerate() {
            let steps = def.steps.clone();
            let forever = def.forever;
            let mut rng = SplitMix64::for_thread(self.seed, index);
            let (cell, names) = (cell.clone(), names.clone());
            let body = move |cx: &tempi::Ctx<'_>| loop {
                let locks = cell.get().map(Vec::as_slice).unwrap_or_default();
                // Guards of the locks held, innermost last.
                let mut held: Vec<MutexGuard<'_, ()>> = Vec::new();
                for step in &steps {
                    match *step {
                        Step::Work(d) => cx.work(d),
                        Step::WorkBetween(lo, hi) => cx.work(rng.between(lo, hi)),
                        Step::Sleep(d) => cx.sleep(d),
                        Step::Yield => cx.yield_now(),
                        Step::Lock(r) => match locks[r].lock(cx) {
                            Ok(g) => held.push(g),
                            // A deadlock, a poisoned lock: the job cannot go on as written.
                            Err(e) => panic!("lock \"{}\": {e}", names[r]),
                        },
                        Step::Unlock(_) => drop(held.pop()),
                    }
                }
                // Locks still held at the end of a pass are released innermost first.
                while let Some(g) = held.pop() {
                    drop(g);
                }
                // A runaway never leaves its first job; only the horizon, a budget action or
                // the end of the run stops it. Validation made sure each pass takes time, so
                // virtual time always advances.
                if !forever {
                    break;
                }
            };
            let id = rt.spawn(spec, body).map_err(|e| at(def.line, format!("thread \"{}\": {e}", def.name)))?;
            ids.push(id);
        }
        let mut locks = Vec::with_capacity(self.resources.len());
        for r in &self.resources {
            let users: Vec<ThreadId> = r.users.iter().map(|&i| ids[i]).collect();
            let mut spec = LockSpec::new(r.name.clone()).protocol(&r.protocol).cpu(r.cpu).users(&users);
            if let Some(c) = r.ceiling {
                spec = spec.ceiling(c);
            }
            let m = rt.create_mutex((), spec).map_err(|e| at(r.line, format!("resource \"{}\": {e}", r.name)))?;
            locks.push(m);
        }
        // Filled exactly once, here; no body has run yet.
        let _ = cell.set(locks);
        for (n, timer) in self.timers.iter().enumerate() {
            // Real-time dispatchers cannot yet release a thread of another CPU; say so at the
            // timer's line rather than failing inside the run.
            if C::MODE == ClockMode::Real {
                if let Some(&i) = timer.release.iter().find(|&&i| self.threads[i].cpu != timer.cpu) {
                    return Err(at(
                        timer.line,
                        format!(
                            "timer #{}: releases thread \"{}\" on CPU {} from CPU {}: real-time runs only support \
                             releases on the timer's own CPU (set the timer's `cpu`)",
                            n + 1,
                            self.threads[i].name,
                            self.threads[i].cpu,
                            timer.cpu
                        ),
                    ));
                }
            }
            let targets: Vec<ThreadId> = timer.release.iter().map(|&i| ids[i]).collect();
            rt.add_timer(timer.spec, move |ev| {
                for &t in &targets {
                    // The only failure is more releases in one firing than thread slots, which
                    // `config` rules out by sizing the slots to the thread count.
                    let _ = ev.release(t);
                }
            })
            .map_err(|e| at(timer.line, format!("timer #{}: {e}", n + 1)))?;
        }
        for set in &self.sets {
            let fail = |e: tempi::Error| at(set.line, format!("set \"{}\": {e}", set.name));
            // A real-time dispatcher only charges the threads it runs, so a set's members must
            // share its CPU there; virtual time simulates every CPU in one kernel and can mix.
            if C::MODE == ClockMode::Real {
                if let Some(&i) = set.members.iter().find(|&&i| self.threads[i].cpu != set.cpu) {
                    return Err(at(
                        set.line,
                        format!(
                            "set \"{}\": member \"{}\" is on CPU {} but the set is on CPU {}: real-time runs need \
                             every member on the set's CPU (set the set's `cpu`)",
                            set.name, self.threads[i].name, self.threads[i].cpu, set.cpu
                        ),
                    ));
                }
            }
            let id = rt.create_set(&set.name, set.cpu).map_err(fail)?;
            for &m in &set.members {
                rt.add_to_set(id, ids[m]).map_err(fail)?;
            }
            if let Some(b) = &set.budget {
                rt.set_budget(id, b.budget()).map_err(fail)?;
            }
        }
        Ok(())
    }
}

impl ThreadDef {
    fn spec(&self) -> ThreadSpec {
        let mut s = ThreadSpec::new(self.name.clone())
            .wcet(self.wcet)
            .importance(self.importance)
            .cpu(self.cpu)
            .criticality(self.criticality)
            .miss_policy(self.miss_policy);
        s = match self.timing {
            Timing::Periodic { period, phase } => s.periodic(period).phase(phase),
            Timing::Sporadic { min_interarrival } => s.sporadic(min_interarrival),
            Timing::OneShot => s,
        };
        if let Some(d) = self.deadline {
            s = s.deadline(d);
        }
        if let Some(a) = self.abort_after {
            s = s.abort_after(a);
        }
        if let Some(j) = self.max_jobs {
            s = s.max_jobs(j);
        }
        if let Some(b) = self.stack {
            s = s.stack_size(b);
        }
        s
    }
}

fn thread_def(
    src: &Source<'_>,
    t: &Spanned<RawThread>,
    cpus: usize,
    resources: &[ResourceDef],
    resource_index: &HashMap<String, usize>,
) -> Result<ThreadDef, ScenarioError> {
    let line = src.line(t.span().start);
    let t = t.get_ref();
    let name = t.name.get_ref().clone();
    if name.trim().is_empty() {
        return Err(src.field("thread: ", "name", &t.name, "must not be empty"));
    }
    let what = format!("thread \"{name}\": ");
    let what = what.as_str();

    let kind = match (&t.kind, &t.period) {
        (Some(k), _) => *k.get_ref(),
        (None, Some(_)) => RawKind::Periodic,
        (None, None) if t.min_interarrival.is_some() => RawKind::Sporadic,
        (None, None) => RawKind::Oneshot,
    };
    // Keys that belong to one kind only are errors elsewhere: silently ignoring `period` on a
    // sporadic thread would hide a mistake.
    let only_for = |v: &Option<Spanned<Value>>, field: &str, kind_name: &str, wanted: RawKind| match v {
        Some(v) if kind != wanted => Err(src.field(what, field, v, format!("only applies to {kind_name} threads"))),
        _ => Ok(()),
    };
    only_for(&t.period, "period", "periodic", RawKind::Periodic)?;
    only_for(&t.phase, "phase", "periodic", RawKind::Periodic)?;
    only_for(&t.min_interarrival, "min_interarrival", "sporadic", RawKind::Sporadic)?;

    let timing = match kind {
        RawKind::Periodic => {
            let Some(p) = &t.period else {
                let at = t.kind.as_ref().map_or(t.name.span().start, |k| k.span().start);
                return Err(src.err(at, format!("{what}field `period`: required for a periodic thread")));
            };
            let period = src.positive(what, "period", p)?;
            let phase = src.opt_duration(what, "phase", &t.phase)?.unwrap_or(Duration::ZERO);
            Timing::Periodic { period, phase }
        }
        RawKind::Sporadic => Timing::Sporadic {
            min_interarrival: src
                .opt_duration(what, "min_interarrival", &t.min_interarrival)?
                .unwrap_or(Duration::ZERO),
        },
        RawKind::Oneshot => Timing::OneShot,
    };

    let deadline = match &t.deadline {
        Some(d) => Some(src.positive(what, "deadline", d)?),
        None => None,
    };
    let abort_after = match &t.abort_after {
        Some(a) => Some(src.positive(what, "abort_after", a)?),
        None => None,
    };
    let wcet = src.opt_duration(what, "wcet", &t.wcet)?;
    let cpu = match &t.cpu {
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
    if let Some(j) = &t.max_jobs {
        if *j.get_ref() == 0 {
            return Err(src.field(what, "max_jobs", j, "must be at least 1"));
        }
    }
    if let Some(s) = &t.stack {
        // Stacks are mapped when the thread is spawned; an absurd size would only fail there,
        // far from the line that asked for it.
        if !(MIN_STACK..=MAX_STACK).contains(s.get_ref()) {
            return Err(src.field(what, "stack", s, format!("must be between {MIN_STACK} and {MAX_STACK} bytes")));
        }
    }

    let steps = match &t.steps {
        None => vec![Step::Work(wcet.unwrap_or(Duration::ZERO))],
        Some(list) => {
            let mut steps = Vec::with_capacity(list.get_ref().len());
            // The locks held so far, innermost last, to check that the steps nest.
            let mut held: Vec<usize> = Vec::new();
            for s in list.get_ref() {
                let st = step(src, what, s, resource_index)?;
                match st {
                    Step::Lock(r) => {
                        let at = s.get_ref().lock.as_ref().unwrap_or(&t.name);
                        if resources[r].cpu != cpu {
                            return Err(src.field(
                                what,
                                "lock",
                                at,
                                format!(
                                    "resource \"{}\" is on CPU {} but the thread runs on CPU {cpu} (set the resource's \
                                     `cpu`)",
                                    resources[r].name, resources[r].cpu
                                ),
                            ));
                        }
                        if held.contains(&r) {
                            return Err(src.field(
                                what,
                                "lock",
                                at,
                                format!(
                                    "resource \"{}\" is already held here (locks are not recursive)",
                                    resources[r].name
                                ),
                            ));
                        }
                        held.push(r);
                    }
                    Step::Unlock(r) => {
                        let at = s.get_ref().unlock.as_ref().unwrap_or(&t.name);
                        match held.last() {
                            Some(&top) if top == r => {
                                held.pop();
                            }
                            Some(&top) => {
                                return Err(src.field(
                                    what,
                                    "unlock",
                                    at,
                                    format!(
                                        "resource \"{}\" is not the innermost lock held (that is \"{}\"): unlock in \
                                         reverse order of locking",
                                        resources[r].name, resources[top].name
                                    ),
                                ))
                            }
                            None => {
                                return Err(src.field(
                                    what,
                                    "unlock",
                                    at,
                                    format!("resource \"{}\" is not held at this step", resources[r].name),
                                ))
                            }
                        }
                    }
                    _ => {}
                }
                steps.push(st);
            }
            steps
        }
    };
    let forever = t.forever.as_ref().is_some_and(|f| *f.get_ref());
    if let Some(f) = t.forever.as_ref().filter(|_| forever) {
        // Repeating steps that take no time would loop at one instant: the simulation would
        // never advance and the run would hang instead of failing.
        let least: Duration = steps
            .iter()
            .map(|s| match *s {
                Step::Work(d) | Step::WorkBetween(d, _) | Step::Sleep(d) => d,
                Step::Yield | Step::Lock(_) | Step::Unlock(_) => Duration::ZERO,
            })
            .sum();
        if least.is_zero() {
            return Err(src.field(
                what,
                "forever",
                f,
                "the repeated steps must take time (some `work` or `sleep` with a positive lower bound)",
            ));
        }
    }
    // Without a declared WCET, the largest amount of work a job can ask for is the honest
    // figure for reports and laxity-based policies.
    let wcet = wcet.unwrap_or_else(|| {
        steps
            .iter()
            .map(|s| match *s {
                Step::Work(d) | Step::WorkBetween(_, d) => d,
                _ => Duration::ZERO,
            })
            .sum()
    });

    Ok(ThreadDef {
        name,
        line,
        timing,
        wcet,
        deadline,
        abort_after,
        priority: t.priority,
        importance: t.importance.unwrap_or(0),
        cpu,
        criticality: match t.criticality {
            Some(RawCriticality::Soft) => Criticality::Soft,
            _ => Criticality::Hard,
        },
        miss_policy: match t.miss_policy {
            None | Some(RawMissPolicy::Continue) => MissPolicy::Continue,
            Some(RawMissPolicy::Abort) => MissPolicy::AbortJob,
            Some(RawMissPolicy::SkipNext) => MissPolicy::SkipNext,
        },
        max_jobs: t.max_jobs.as_ref().map(|j| *j.get_ref()),
        stack: t.stack.as_ref().map(|s| *s.get_ref()),
        steps,
        forever,
    })
}

fn step(
    src: &Source<'_>,
    what: &str,
    s: &Spanned<RawStep>,
    resource_index: &HashMap<String, usize>,
) -> Result<Step, ScenarioError> {
    let r = s.get_ref();
    let keys = r.work.is_some() as u8
        + r.sleep.is_some() as u8
        + r.yield_now.is_some() as u8
        + r.lock.is_some() as u8
        + r.unlock.is_some() as u8;
    if keys != 1 {
        let how = if keys == 0 { "has none" } else { "has several" };
        return Err(src.field(
            what,
            "steps",
            s,
            format!("each step needs exactly one of `work`, `sleep`, `yield`, `lock`, `unlock`; this one {how}"),
        ));
    }
    for (key, name, make) in [("lock", &r.lock, Step::Lock as fn(usize) -> Step), ("unlock", &r.unlock, Step::Unlock)] {
        if let Some(n) = name {
            let Some(&i) = resource_index.get(n.get_ref()) else {
                return Err(src.field(
                    what,
                    key,
                    n,
                    format!("no resource named \"{}\" (declare it in a [[resource]] table)", n.get_ref()),
                ));
            };
            return Ok(make(i));
        }
    }
    if let Some(w) = &r.work {
        return work_value(w.get_ref()).map_err(|m| src.field(what, "work", w, m));
    }
    if let Some(d) = &r.sleep {
        return src.duration(what, "sleep", d).map(Step::Sleep);
    }
    match &r.yield_now {
        Some(y) if !*y.get_ref() => Err(src.field(what, "yield", y, "must be true (remove the step to not yield)")),
        _ => Ok(Step::Yield),
    }
}

/// Whether `name` is a locking protocol the library knows.
fn known_lock_protocol(name: &str) -> bool {
    tempi::policy::lock::by_name(name).is_some()
}

/// A protocol that needs a ceiling gets it declared or computed from the threads that lock
/// the resource; a resource no thread locks and without a declared ceiling has none, and the
/// runtime would refuse to create its lock. Refusing it here says where, for every command.
fn check_ceilings(file: &str, resources: &[ResourceDef]) -> Result<(), ScenarioError> {
    let needs_ceiling = |protocol: &str| tempi::policy::lock::by_name(protocol).is_some_and(|p| p.needs_ceiling());
    match resources.iter().find(|r| r.ceiling.is_none() && r.users.is_empty() && needs_ceiling(&r.protocol)) {
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

fn unknown_lock_protocol(name: &str) -> String {
    format!("unknown locking protocol \"{name}\" (expected one of {})", tempi::policy::lock::NAMES.join(", "))
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
        None => "bpi".to_string(),
        Some(p) if !known_lock_protocol(p.get_ref()) => {
            return Err(src.field(what, "protocol", p, unknown_lock_protocol(p.get_ref())))
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

/// The name indices a `[[set]]` table is checked against.
#[derive(Clone, Copy)]
struct Names<'a> {
    threads: &'a HashMap<String, usize>,
    sets: &'a HashMap<String, usize>,
}

fn set_def(
    src: &Source<'_>,
    t: &Spanned<RawSet>,
    cpus: usize,
    earlier: &[SetDef],
    names: Names<'_>,
    set_of: &mut [Option<usize>],
) -> Result<SetDef, ScenarioError> {
    let line = src.line(t.span().start);
    let r = t.get_ref();
    let name = r.name.get_ref().clone();
    if name.trim().is_empty() {
        return Err(src.field("set: ", "name", &r.name, "must not be empty"));
    }
    let what = format!("set \"{name}\": ");
    let what = what.as_str();
    if let Some(&o) = names.sets.get(&name) {
        return Err(src.field(
            what,
            "name",
            &r.name,
            format!("duplicate set name (first used at line {})", earlier[o].line),
        ));
    }
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

    let mut members: Vec<usize> = Vec::new();
    for m in r.members.iter().flatten() {
        let Some(&i) = names.threads.get(m.get_ref()) else {
            return Err(src.field(what, "members", m, format!("no thread named \"{}\"", m.get_ref())));
        };
        if set_of[i] == Some(earlier.len()) {
            return Err(src.field(what, "members", m, format!("thread \"{}\" is listed twice", m.get_ref())));
        }
        // As in MaRTE OS and Ada 2005, a thread is charged to at most one group clock.
        if let Some(o) = set_of[i].map(|o| &earlier[o]) {
            return Err(src.field(
                what,
                "members",
                m,
                format!(
                    "thread \"{}\" is already in set \"{}\" (line {}): a thread belongs to at most one set",
                    m.get_ref(),
                    o.name,
                    o.line
                ),
            ));
        }
        set_of[i] = Some(earlier.len());
        members.push(i);
    }

    let budget = match &r.budget {
        None => {
            // Budget keys without a budget would be silently meaningless: point at the first.
            let stray = [
                ("replenish", r.replenish.as_ref().map(|v| v.span())),
                ("action", r.action.as_ref().map(|v| v.span())),
                ("server", r.server.as_ref().map(|v| v.span())),
                ("period", r.period.as_ref().map(|v| v.span())),
            ]
            .into_iter()
            .find_map(|(k, span)| span.map(|s| (k, s)));
            if let Some((key, span)) = stray {
                return Err(src.err(span.start, format!("{what}field `{key}`: only applies with a `budget`")));
            }
            None
        }
        Some(b) => Some(budget_def(src, what, r, b)?),
    };
    Ok(SetDef { name, line, cpu, members, budget })
}

fn budget_def(src: &Source<'_>, what: &str, r: &RawSet, b: &Spanned<Value>) -> Result<BudgetDef, ScenarioError> {
    let amount = src.positive(what, "budget", b)?;
    // The rule comes from `server` or from `replenish`; remember which key chose it, so a
    // missing period is reported where the rule was written.
    let (server, replenish_name, rule_at) = match (&r.server, &r.replenish, &r.action) {
        (Some(_), Some(other), _) | (Some(_), None, Some(other)) => {
            let key = if r.replenish.is_some() { "replenish" } else { "action" };
            return Err(src.field(
                what,
                key,
                other,
                "give either `server` or `replenish`/`action`, not both (a server sets both)",
            ));
        }
        (Some(s), None, None) => {
            let kind = match s.get_ref().as_str() {
                "deferrable" => ServerKind::Deferrable,
                "sporadic" => ServerKind::Sporadic,
                "cbs" => ServerKind::ConstantBandwidth,
                other => {
                    return Err(src.field(
                        what,
                        "server",
                        s,
                        format!("unknown server \"{other}\" (expected deferrable, sporadic or cbs)"),
                    ))
                }
            };
            let name = match kind {
                ServerKind::Deferrable => "periodic",
                ServerKind::Sporadic => "sporadic",
                ServerKind::ConstantBandwidth => "cbs",
            };
            (Some(kind), name, Some(s.span().start))
        }
        (None, replenish, _) => {
            let name = match replenish {
                None => "manual",
                Some(p) => match p.get_ref().as_str() {
                    n @ ("manual" | "periodic" | "sporadic" | "cbs") => n,
                    other => {
                        return Err(src.field(
                            what,
                            "replenish",
                            p,
                            format!("unknown replenishment \"{other}\" (expected manual, periodic, sporadic or cbs)"),
                        ))
                    }
                },
            };
            (None, name, replenish.as_ref().map(|p| p.span().start))
        }
    };

    let period = match (replenish_name, &r.period) {
        ("manual", Some(p)) => {
            return Err(src.field(
                what,
                "period",
                p,
                "a manual budget has no period (set replenish = \"periodic\", \"sporadic\" or \"cbs\")",
            ))
        }
        ("manual", None) => Duration::ZERO,
        (_, Some(p)) => src.positive(what, "period", p)?,
        (rule, None) => {
            let at = rule_at.unwrap_or(b.span().start);
            let how = match server {
                Some(_) => format!("required by server = \"{}\"", server_name(server)),
                None => format!("required when replenish = \"{rule}\""),
            };
            return Err(src.err(at, format!("{what}field `period`: {how}")));
        }
    };
    let replenish = match replenish_name {
        "periodic" => Replenishment::Periodic { period },
        "sporadic" => Replenishment::Sporadic { period },
        "cbs" => Replenishment::ConstantBandwidth { period },
        _ => Replenishment::Manual,
    };

    let action = match (server, &r.action) {
        (Some(ServerKind::ConstantBandwidth), _) => "notify".to_string(),
        (Some(_), _) => "suspend".to_string(),
        (None, None) => "notify".to_string(),
        (None, Some(a)) => {
            let name = a.get_ref().as_str();
            if budget_action(name).is_none() {
                return Err(src.field(
                    what,
                    "action",
                    a,
                    format!("unknown action \"{name}\" (expected one of {})", ACTIONS.join(", ")),
                ));
            }
            // A constant bandwidth server refills the moment it runs out, so nothing would
            // ever lift a demotion or a suspension: the members would be held for good.
            if replenish == (Replenishment::ConstantBandwidth { period }) && name != "notify" {
                return Err(src.field(
                    what,
                    "action",
                    a,
                    "a constant bandwidth server (replenish = \"cbs\") refills at once and only supports \
                     action = \"notify\"",
                ));
            }
            name.to_string()
        }
    };
    Ok(BudgetDef { amount, replenish, action, server })
}

fn server_name(kind: Option<ServerKind>) -> &'static str {
    match kind {
        Some(ServerKind::Deferrable) => "deferrable",
        Some(ServerKind::Sporadic) => "sporadic",
        Some(ServerKind::ConstantBandwidth) => "cbs",
        None => "",
    }
}

/// SplitMix64 (Steele, Lea and Flood 2014): a tiny, well-mixed generator, so that work ranges
/// draw the same values for the same file and seed on every machine and every run.
#[derive(Debug, Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    /// One independent stream per thread: the index is mixed into the scenario seed.
    fn for_thread(seed: u64, index: usize) -> SplitMix64 {
        SplitMix64(seed ^ (index as u64).wrapping_add(1).wrapping_mul(0xD1B5_4A32_D192_ED03))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi]` at nanosecond resolution (multiply-shift: no division, and the
    /// bias is below 2^-64 per value).
    fn between(&mut self, lo: Duration, hi: Duration) -> Duration {
        let span = tempi::time::nanos(hi.saturating_sub(lo)) as u128 + 1;
        let offset = ((self.next() as u128 * span) >> 64) as u64;
        lo + Duration::from_nanos(offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn durations_with_units() {
        assert_eq!(parse_duration("12ms"), Ok(ms(12)));
        assert_eq!(parse_duration("500us"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_duration("500µs"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_duration("250ns"), Ok(Duration::from_nanos(250)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1.5s"), Ok(ms(1500)));
        assert_eq!(parse_duration("0.25ms"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("1.000ms"), Ok(ms(1)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
    }

    #[test]
    fn bare_integers_are_nanoseconds() {
        assert_eq!(parse_duration("1500"), Ok(Duration::from_nanos(1500)));
        assert!(parse_duration("1.5").is_err());
    }

    #[test]
    fn malformed_durations_are_rejected() {
        for bad in ["", "4 ms", " 4ms", "4ms ", "ms", "4m", "4min", "-1ms", "1..2ms", ".5ms", "5.ms", "1e3ns", "4MS"] {
            let e = parse_duration(bad).unwrap_err();
            assert!(e.contains("invalid duration"), "{bad:?}: {e}");
        }
        assert_eq!(parse_duration("4 ms").unwrap_err(), "invalid duration \"4 ms\" (expected e.g. 12ms, 500us, 1.5s)");
    }

    #[test]
    fn sub_nanosecond_and_overflow_are_rejected() {
        assert!(parse_duration("1.5ns").unwrap_err().contains("finer than a nanosecond"));
        assert!(parse_duration("0.0000000001s").unwrap_err().contains("finer than a nanosecond"));
        assert_eq!(parse_duration("0.000000001s"), Ok(Duration::from_nanos(1)));
        assert!(parse_duration("99999999999999999999s").unwrap_err().contains("too large"));
        assert!(parse_duration("18446744074s").unwrap_err().contains("too large"));
    }

    #[test]
    fn work_ranges() {
        assert_eq!(work_value(&Value::String("1ms..3ms".into())), Ok(Step::WorkBetween(ms(1), ms(3))));
        assert_eq!(work_value(&Value::String("2ms..2ms".into())), Ok(Step::Work(ms(2))));
        assert!(work_value(&Value::String("3ms..1ms".into())).is_err());
        assert_eq!(work_value(&Value::Integer(7)), Ok(Step::Work(Duration::from_nanos(7))));
    }

    #[test]
    fn generator_is_deterministic_and_in_range() {
        let mut a = SplitMix64::for_thread(42, 3);
        let mut b = SplitMix64::for_thread(42, 3);
        let mut c = SplitMix64::for_thread(42, 4);
        let xs: Vec<Duration> = (0..100).map(|_| a.between(ms(1), ms(3))).collect();
        let ys: Vec<Duration> = (0..100).map(|_| b.between(ms(1), ms(3))).collect();
        let zs: Vec<Duration> = (0..100).map(|_| c.between(ms(1), ms(3))).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs, zs);
        assert!(xs.iter().all(|d| (ms(1)..=ms(3)).contains(d)));
    }

    fn error(text: &str) -> ScenarioError {
        Scenario::parse("s.toml", text).unwrap_err()
    }

    #[test]
    fn errors_name_line_thread_and_field() {
        let e = error("[runtime]\npolicy = \"fp\"\n\n[[thread]]\nname = \"t2\"\nwcet = \"1ms\"\nperiod = \"4 ms\"\n");
        assert_eq!(
            e.to_string(),
            "s.toml:7: thread \"t2\": field `period`: invalid duration \"4 ms\" (expected e.g. 12ms, 500us, 1.5s)"
        );
    }

    #[test]
    fn toml_errors_get_lines_and_context() {
        let e = error("[[thread]]\nname = \"a\"\nperiod = \"4ms\"\nperod = \"4ms\"\n");
        assert_eq!(e.line, Some(4));
        assert!(e.message.contains("thread \"a\"") && e.message.contains("perod"), "{e}");
        let e = error("[[thread]]\nname = \"a\"\npriority = \"high\"\n");
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("field `priority`"), "{e}");
        let e = error("[runtime]\ncpus = \n");
        assert_eq!(e.line, Some(2), "{e}");
    }

    #[test]
    fn semantic_checks() {
        let cases: &[(&str, usize, &str)] = &[
            ("[runtime]\npolicy = \"lottery\"\n", 2, "unknown policy"),
            ("[runtime]\npolicy = \"rr\"\n", 2, "field `quantum`"),
            ("[[thread]]\nname = \"a\"\n[[thread]]\nname = \"a\"\n", 4, "duplicate"),
            ("[[thread]]\nname = \"a\"\ncpu = 1\n", 3, "field `cpu`"),
            ("[[thread]]\nname = \"a\"\nperiod = \"0ms\"\n", 3, "must be positive"),
            ("[[thread]]\nname = \"a\"\nsteps = [{ work = \"1ms\", sleep = \"1ms\" }]\n", 3, "exactly one"),
            ("[[thread]]\nname = \"a\"\nsteps = [{}]\n", 3, "exactly one"),
            ("[[thread]]\nname = \"a\"\nkind = \"sporadic\"\nperiod = \"1ms\"\n", 4, "field `period`"),
            ("[[thread]]\nname = \"a\"\nkind = \"periodic\"\n", 3, "required"),
            ("[[timer]]\nevery = \"1ms\"\nrelease = [\"ghost\"]\n", 3, "no thread named"),
            (
                "[[thread]]\nname = \"p\"\nperiod = \"2ms\"\n[[timer]]\nat = \"1ms\"\nrelease = [\"p\"]\n",
                6,
                "not sporadic",
            ),
            ("[[timer]]\nevery = \"1ms\"\nat = \"1ms\"\n", 2, "not both"),
            ("[[thread]]\nname = \"a\"\nmax_jobs = 0\n", 3, "max_jobs"),
            ("[runtime]\ncpus = 0\n", 2, "field `cpus`"),
            ("[runtime]\naccounting = \"some\"\n", 2, "field `accounting`"),
            ("[[thread]]\nname = \"a\"\nforever = true\nsteps = [{ yield = true }]\n", 3, "field `forever`"),
        ];
        for &(text, line, needle) in cases {
            let e = error(text);
            assert_eq!(e.line, Some(line), "{text:?} -> {e}");
            assert!(e.message.contains(needle), "{text:?} -> {e}");
        }
    }

    /// Two threads, then `extra` (set tables).
    fn set_error(extra: &str) -> ScenarioError {
        error(&format!("[[thread]]\nname = \"a\"\n[[thread]]\nname = \"b\"\n{extra}"))
    }

    #[test]
    fn set_checks_name_line_and_field() {
        let cases: &[(&str, usize, &str)] = &[
            ("[[set]]\nname = \"s\"\nmembers = [\"a\",\n  \"ghost\"]\n", 8, "field `members`: no thread named \"ghost\""),
            ("[[set]]\nname = \"s\"\nmembers = [\"a\", \"a\"]\n", 7, "listed twice"),
            (
                "[[set]]\nname = \"s\"\nmembers = [\"a\"]\n[[set]]\nname = \"t\"\nmembers = [\"b\", \"a\"]\n",
                10,
                "set \"t\": field `members`: thread \"a\" is already in set \"s\" (line 5)",
            ),
            (
                "[[set]]\nname = \"s\"\nbudget = \"2ms\"\nreplenish = \"periodic\"\n",
                8,
                "field `period`: required when replenish = \"periodic\"",
            ),
            ("[[set]]\nname = \"s\"\nbudget = \"2ms\"\nserver = \"cbs\"\n", 8, "field `period`: required by server"),
            (
                "[[set]]\nname = \"s\"\nbudget = \"2ms\"\nperiod = \"5ms\"\nserver = \"sporadic\"\nreplenish = \"periodic\"\n",
                10,
                "field `replenish`: give either `server` or `replenish`/`action`",
            ),
            (
                "[[set]]\nname = \"s\"\nbudget = \"2ms\"\nperiod = \"5ms\"\nserver = \"deferrable\"\naction = \"kill\"\n",
                10,
                "field `action`: give either",
            ),
            ("[[set]]\nname = \"s\"\nbudget = \"2ms\"\naction = \"explode\"\n", 8, "unknown action \"explode\""),
            ("[[set]]\nname = \"s\"\nbudget = \"2ms\"\nserver = \"polling\"\n", 8, "unknown server"),
            ("[[set]]\nname = \"s\"\nbudget = \"2ms\"\nreplenish = \"weekly\"\n", 8, "unknown replenishment"),
            (
                "[[set]]\nname = \"s\"\nbudget = \"2ms\"\nreplenish = \"periodic\"\nperiod = \"0ms\"\n",
                9,
                "field `period`: must be positive",
            ),
            ("[[set]]\nname = \"s\"\nbudget = \"2ms\"\nperiod = \"5ms\"\n", 8, "a manual budget has no period"),
            ("[[set]]\nname = \"s\"\nbudget = \"0ms\"\n", 7, "field `budget`: must be positive"),
            ("[[set]]\nname = \"s\"\naction = \"kill\"\n", 7, "field `action`: only applies with a `budget`"),
            (
                "[[set]]\nname = \"s\"\nbudget = \"1ms\"\nreplenish = \"cbs\"\nperiod = \"4ms\"\naction = \"demote\"\n",
                10,
                "only supports action = \"notify\"",
            ),
            ("[[set]]\nname = \"s\"\ncpu = 1\n", 7, "field `cpu`"),
            ("[[set]]\nname = \"s\"\n[[set]]\nname = \"s\"\n", 8, "duplicate set name (first used at line 5)"),
            ("[[set]]\nname = \"s\"\nbugdet = \"1ms\"\n", 7, "set \"s\": unknown field `bugdet`"),
            (
                "[runtime]\naccounting = \"thread\"\n[[set]]\nname = \"s\"\nbudget = \"1ms\"\n",
                6,
                "field `accounting`: set \"s\" (line 7) has a budget",
            ),
        ];
        for &(extra, line, needle) in cases {
            let e = set_error(extra);
            assert_eq!(e.line, Some(line), "{extra:?} -> {e}");
            assert!(e.message.contains(needle), "{extra:?} -> {e}");
            assert!(e.message.starts_with("set \"") || e.message.starts_with("[runtime]"), "{extra:?} -> {e}");
        }
    }

    #[test]
    fn sets_budgets_and_servers() {
        let s = Scenario::parse(
            "s.toml",
            "[runtime]\naccounting = \"group\"\n[[thread]]\nname = \"a\"\nforever = true\nsteps = [{ work = \"1ms\" }]\n\
             [[thread]]\nname = \"b\"\n[[set]]\nname = \"box\"\nmembers = [\"a\"]\nbudget = \"2ms\"\n\
             replenish = \"sporadic\"\nperiod = \"10ms\"\naction = \"kill\"\n[[set]]\nname = \"srv\"\n\
             members = [\"b\"]\nbudget = \"1ms\"\nperiod = \"4ms\"\nserver = \"cbs\"\n[[set]]\nname = \"plain\"\n",
        )
        .unwrap();
        assert!(s.threads[0].forever && !s.threads[1].forever);
        assert!(s.never_ends(), "a runaway never ends");
        assert_eq!(s.sets.len(), 3);
        assert_eq!((s.sets[0].line, s.sets[0].cpu, s.sets[0].members.clone()), (9, 0, vec![0]));
        let b = s.sets[0].budget.as_ref().unwrap();
        assert_eq!(
            (b.amount, b.replenish, b.action.as_str(), b.server),
            (ms(2), Replenishment::Sporadic { period: ms(10) }, "kill", None)
        );
        assert_eq!(b.budget().action_name(), "kill");
        let c = s.sets[1].budget.as_ref().unwrap();
        assert_eq!(c.server, Some(ServerKind::ConstantBandwidth));
        assert_eq!(c.budget().replenishment(), Replenishment::ConstantBandwidth { period: ms(4) });
        assert!(s.sets[2].budget.is_none() && s.sets[2].members.is_empty());
        let d = Scenario::parse(
            "d.toml",
            "[[set]]\nname = \"d\"\nbudget = \"2ms\"\nperiod = \"10ms\"\nserver = \"deferrable\"\n",
        )
        .unwrap();
        let b = d.sets[0].budget.as_ref().unwrap().budget();
        assert_eq!((b.replenishment(), b.action_name()), (Replenishment::Periodic { period: ms(10) }, "suspend"));
    }

    #[test]
    fn resources_record_their_users_and_take_overrides() {
        let mut s = Scenario::parse(
            "s.toml",
            "[[resource]]\nname = \"R\"\n[[thread]]\nname = \"a\"\nsteps = [{ lock = \"R\" }, { work = \"1ms\" }]\n\
             [[thread]]\nname = \"b\"\n",
        )
        .unwrap();
        let r = &s.resources[0];
        assert_eq!((r.protocol.as_str(), r.ceiling, r.users.clone(), r.line), ("bpi", None, vec![0], 1));
        assert_eq!(s.threads[0].steps, vec![Step::Lock(0), Step::Work(ms(1))]);
        s.set_lock_protocol("pcp").unwrap();
        assert_eq!(s.resources[0].protocol, "pcp");
        assert!(s.set_lock_protocol("spin").unwrap_err().message.contains("unknown locking protocol"));
    }

    /// 20,000 threads that lock one resource, one set over half of them, a timer: every
    /// table's line, and the line of an error near the end of the file, are still exact.
    #[test]
    fn many_threads_load_and_errors_keep_their_lines() {
        let n = 20_000;
        let mut text = String::from("[runtime]\nuntil = \"1ms\"\n\n[[resource]]\nname = \"bus\"\n\n");
        for i in 0..n {
            text.push_str(&format!(
                "[[thread]]\nname = \"t{i}\"\nperiod = \"{}ms\"\nsteps = [{{ lock = \"bus\" }}, {{ work = \"1us\" }}, \
                 {{ unlock = \"bus\" }}]\n\n",
                1000 + i
            ));
        }
        let members: Vec<String> = (0..n).step_by(2).map(|i| format!("\"t{i}\"")).collect();
        text.push_str(&format!("[[set]]\nname = \"half\"\nmembers = [{}]\n", members.join(", ")));
        text.push_str("[[thread]]\nname = \"s\"\nkind = \"sporadic\"\n[[timer]]\nat = \"1ms\"\nrelease = [\"s\"]\n");
        let header = |i: usize| 7 + 5 * i;
        let s = Scenario::parse("big.toml", &text).unwrap();
        assert_eq!(s.threads.len(), n + 1);
        for i in [0, 1, n / 2, n - 1] {
            assert_eq!((s.threads[i].name.clone(), s.threads[i].line), (format!("t{i}"), header(i)));
        }
        assert_eq!((s.sets[0].line, s.sets[0].members.len()), (header(n), n / 2));
        assert_eq!((s.threads[n].line, s.timers[0].line), (header(n) + 3, header(n) + 6));
        assert_eq!(s.resources[0].users, (0..n).collect::<Vec<_>>());

        let last = format!("period = \"{}ms\"", 1000 + n - 1);
        let e = error(&text.replace(&last, "period = \"4 ms\""));
        assert_eq!(e.line, Some(header(n - 1) + 2), "{e}");
        assert!(e.message.starts_with(&format!("thread \"t{}\": field `period`", n - 1)), "{e}");
        let e = error(&text.replace("name = \"s\"", "name = \"t7\""));
        assert_eq!(e.line, Some(header(n) + 4), "{e}");
        assert!(e.message.contains("duplicate thread name"), "{e}");
        let e = error(&text.replace("\"t0\", \"t2\"", "\"t0\", \"t0\""));
        assert_eq!(e.line, Some(header(n) + 2), "{e}");
        assert!(e.message.contains("thread \"t0\" is listed twice"), "{e}");
    }

    #[test]
    fn line_lookup_counts_the_newlines_before_the_offset() {
        let text = "a\n\nbc\nd";
        let src = Source::new("s.toml", text);
        let naive =
            |offset: usize| text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1;
        for offset in 0..=text.len() + 2 {
            assert_eq!(src.line(offset), naive(offset), "offset {offset}");
        }
    }

    #[test]
    fn accounting_reaches_the_config() {
        let s = Scenario::parse("s.toml", "[runtime]\naccounting = \"off\"\n[[set]]\nname = \"x\"\n").unwrap();
        assert_eq!(s.accounting, Accounting::Off);
        assert_eq!(Scenario::parse("s.toml", "").unwrap().accounting, Accounting::Group);
    }

    #[test]
    fn defaults_and_kinds() {
        let s = Scenario::parse(
            "s.toml",
            "[[thread]]\nname = \"p\"\nperiod = \"4ms\"\nwcet = \"1ms\"\n[[thread]]\nname = \"o\"\n\
             steps = [{ work = \"1ms\" }, { sleep = \"2ms\" }, { yield = true }, { work = \"1ms..3ms\" }]\n",
        )
        .unwrap();
        assert_eq!(s.cpus, 1);
        assert_eq!(s.policy, "fp");
        assert_eq!(s.threads[0].timing, Timing::Periodic { period: ms(4), phase: Duration::ZERO });
        assert_eq!(s.threads[0].steps, vec![Step::Work(ms(1))]);
        assert_eq!(s.threads[1].timing, Timing::OneShot);
        assert_eq!(s.threads[1].wcet, ms(4));
        assert_eq!(s.threads[1].line, 5);
        assert!(s.never_ends());
    }

    fn example(name: &str) -> Scenario {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name);
        Scenario::load(&path).unwrap()
    }

    fn simulate(s: &Scenario) -> tempi::RunOutcome {
        let mut rt = Runtime::<tempi::clock::VirtualClock>::new(s.config()).unwrap();
        s.populate(&mut rt).unwrap();
        rt.run_until(Time::ZERO + s.until.unwrap()).unwrap()
    }

    #[test]
    fn rm_textbook_meets_every_deadline() {
        let out = simulate(&example("rm-textbook.toml"));
        assert_eq!(out.total_misses(), 0);
        assert_eq!(out.thread_named("t1").unwrap().stats.completed, 6);
    }

    #[test]
    fn edf_example_misses_only_under_fixed_priority() {
        let mut s = example("edf-full-utilisation.toml");
        assert_eq!(simulate(&s).total_misses(), 0);
        s.set_policy("fp").unwrap();
        assert!(simulate(&s).total_misses() > 0);
    }

    #[test]
    fn sporadic_timer_releases_the_handler() {
        let out = simulate(&example("sporadic-timer.toml"));
        assert!(out.thread_named("handler").unwrap().stats.completed > 0);
    }

    #[test]
    fn temporal_isolation_caps_the_runaway() {
        let out = simulate(&example("temporal-isolation.toml"));
        assert_eq!(out.total_misses(), 0);
        assert_eq!(out.thread_named("runaway").unwrap().stats.cpu_time, ms(40));
        assert_eq!((out.sets[0].name.as_str(), out.sets[0].cpu_time, out.sets[0].exhaustions), ("sandbox", ms(40), 20));
    }

    #[test]
    fn sporadic_server_serves_the_requests() {
        let out = simulate(&example("servers.toml"));
        assert_eq!(out.total_misses(), 0);
        let requests = out.thread_named("requests").unwrap().stats;
        assert_eq!((requests.completed, requests.response_max), (2, Some(ms(6))));
        // Swapping the server for a deferrable one shortens the first response to 4 ms.
        let mut s = example("servers.toml");
        let b = s.sets[0].budget.as_mut().unwrap();
        b.server = Some(ServerKind::Deferrable);
        b.replenish = Replenishment::Periodic { period: ms(5) };
        let out = simulate(&s);
        assert_eq!(out.thread_named("requests").unwrap().stats.response_min, Some(ms(4)));
    }

    #[test]
    fn miss_policies_differ() {
        let out = simulate(&example("miss-policies.toml"));
        let stats = |n: &str| out.thread_named(n).unwrap().stats;
        assert!(stats("continue").misses > 0);
        assert!(stats("abort").aborted > 0);
        assert!(stats("skip-next").skipped > 0);
    }
}

#[cfg(test)]
mod cost_tests {
    use super::*;

    #[test]
    fn costs_reach_the_config_and_bad_ones_name_their_field() {
        let s = Scenario::parse("c.toml", "[runtime]\n[runtime.costs]\ncontext_switch = \"50us\"\nunlock = \"10us\"\n")
            .unwrap();
        assert_eq!(s.costs.context_switch, Duration::from_micros(50));
        assert_eq!(s.costs.unlock, Duration::from_micros(10));
        assert_eq!(s.costs.lock_acquired, Duration::ZERO);
        let err = Scenario::parse("c.toml", "[runtime]\n[runtime.costs]\nabort = \"fast\"\n").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("c.toml:3") && text.contains("costs.abort"), "{text}");
    }
}
