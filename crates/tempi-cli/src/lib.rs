//! The library behind the `tempi` command line: the scenario file format.
//!
//! [`parse`] turns the text of a scenario file into a validated [`Scenario`] or a
//! [`ScenarioError`] that names the file and line; [`Scenario::runtime`] builds a runtime of
//! either clock from it, and [`simulate`] runs it in virtual time ([`simulate_briefly`] for a
//! bounded look). The `tempi` binary is built on these, and so is the fuzz target under
//! `fuzz/`. The format is described in
//! `docs/SCENARIOS.md`.
//!
//! ```
//! use tempi::Time;
//! let text = "[[thread]]\nname = \"t\"\nperiod = \"4ms\"\nwcet = \"1ms\"\n";
//! let sc = tempi_cli::parse("t.toml", text).unwrap();
//! let out = tempi_cli::simulate(&sc, Time::from_millis(8)).unwrap();
//! assert_eq!(out.thread_named("t").unwrap().stats.completed, 2);
//!
//! let err = tempi_cli::parse("t.toml", "[[thread]]\nname = \"t\"\nperiod = \"4 ms\"\n").unwrap_err();
//! assert_eq!(err.line, Some(3));
//! ```

pub mod scenario;

pub use scenario::{parse_duration, AdmissionDef, Admissions, RequestDef, Scenario, ScenarioError};

use std::time::Duration;

use tempi::clock::VirtualClock;
use tempi::{RunOutcome, Time};

/// Parse and validate the text of a scenario file; `file` names it in error messages, which
/// read `FILE:LINE: MESSAGE`.
///
/// ```
/// let sc = tempi_cli::parse("s.toml", "[runtime]\ncpus = 2\n").unwrap();
/// assert_eq!(sc.cpus, 2);
/// let err = tempi_cli::parse("s.toml", "[runtime]\ncpus = 0\n").unwrap_err();
/// assert!(err.to_string().starts_with("s.toml:2: [runtime]: field `cpus`"));
/// ```
pub fn parse(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse(file, text)
}

/// Simulate `scenario` in virtual time up to `until` (exclusive), with the scenario's own
/// configuration. A failure to build the runtime is reported at the line that caused it; a
/// failure of the run itself has no line.
///
/// ```
/// use tempi::Time;
/// let sc = tempi_cli::parse("s.toml", "[[thread]]\nname = \"once\"\nwcet = \"3ms\"\n").unwrap();
/// let out = tempi_cli::simulate(&sc, Time::MAX).unwrap();
/// assert_eq!(out.end, Time::from_millis(3));
/// ```
pub fn simulate(scenario: &Scenario, until: Time) -> Result<RunOutcome, ScenarioError> {
    let rt = scenario.runtime::<VirtualClock>(scenario.config())?;
    rt.run_until(until).map_err(|e| scenario.error(format!("run failed: {e}")))
}

/// Trace records per CPU kept by [`simulate_briefly`]: enough to exercise the trace, small
/// enough that any scenario's run stays small in memory.
const BRIEF_TRACE_CAPACITY: usize = 4096;

/// Simulate `scenario` for at most `limit` of virtual time (to its `until` if that is
/// sooner), keeping a small trace: a quick check that a scenario runs, as the fuzz target and
/// the property tests make. Errors as in [`simulate`].
///
/// ```
/// use std::time::Duration;
/// let sc = tempi_cli::parse("s.toml", "[[thread]]\nname = \"t\"\nperiod = \"1ms\"\nwcet = \"1us\"\n").unwrap();
/// let out = tempi_cli::simulate_briefly(&sc, Duration::from_millis(3)).unwrap();
/// assert_eq!(out.thread_named("t").unwrap().stats.completed, 3);
/// ```
pub fn simulate_briefly(scenario: &Scenario, limit: Duration) -> Result<RunOutcome, ScenarioError> {
    let horizon = scenario.until.map_or(limit, |until| until.min(limit));
    let rt = scenario.runtime::<VirtualClock>(scenario.config().trace_capacity(BRIEF_TRACE_CAPACITY))?;
    rt.run_until(Time::ZERO + horizon).map_err(|e| scenario.error(format!("run failed: {e}")))
}
