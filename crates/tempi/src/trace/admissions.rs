//! The admission part of the JSON report: one row per admission decision and one per job
//! event (an overrun), as plain data in integer nanoseconds.
//!
//! Owns the rows ([`AdmissionRecord`], [`AdmissionEventRecord`]) and [`to_json_with_admissions`].
//! It must not name the admission layer (which sits above the runtime): that layer turns its
//! logs into these rows. A report gets the keys `admissions` and `admission_events` only
//! through [`to_json_with_admissions`], so reports of runs without admission are unchanged.
//! The rows exist without the `export` feature too (the admission layer keeps its logs in
//! them); only the JSON needs it.

#[cfg(feature = "export")]
use serde::Serialize;

#[cfg(feature = "export")]
use crate::stats::RunOutcome;

/// One admission decision, as the report lists it.
///
/// ```
/// let r = tempi::trace::admissions::AdmissionRecord {
///     request: "j".into(), time: 0, cpu: 0, target_cpu: None, wcet: 2_000, deadline: 10_000, accepted: true, idle: 10_000, order: 0,
/// };
/// assert!(r.accepted);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "export", derive(Serialize))]
pub struct AdmissionRecord {
    /// The job's name.
    pub request: String,
    /// When it was tested (ns).
    pub time: u64,
    /// The CPU it was requested on.
    pub cpu: usize,
    /// The CPU that tested it, when not `cpu` (a cross-CPU submission).
    #[cfg_attr(feature = "export", serde(skip_serializing_if = "Option::is_none"))]
    pub target_cpu: Option<usize>,
    /// WCET asked for (ns).
    pub wcet: u64,
    /// Absolute deadline (ns).
    pub deadline: u64,
    /// Whether it was admitted.
    pub accepted: bool,
    /// The idle time before the deadline when it was tested (ns).
    pub idle: u64,
    /// Sort key for merging several CPUs' logs (not written).
    #[cfg_attr(feature = "export", serde(skip))]
    pub order: u64,
}

/// Something that happened to an admitted job (an overrun), as the report lists it.
///
/// ```
/// let e = tempi::trace::admissions::AdmissionEventRecord { request: "j".into(), time: 5, cpu: 0, wcet: 5, kind: "overrun".into() };
/// assert_eq!(e.kind, "overrun");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "export", derive(Serialize))]
pub struct AdmissionEventRecord {
    /// The job's name.
    pub request: String,
    /// When (ns).
    pub time: u64,
    /// The job's CPU.
    pub cpu: usize,
    /// The job's WCET (ns).
    pub wcet: u64,
    /// `overrun`, `unenforced: REASON`, `not started: REASON`, or what the application
    /// reports (the CLI adds `error: REASON` and `not tested: the run ended first`).
    pub kind: String,
}

/// The JSON report of [`crate::trace::report::to_json`] with two more keys: `admissions`
/// (every decision) and `admission_events`.
///
/// ```
/// use tempi::trace::admissions::{to_json_with_admissions, AdmissionRecord};
/// let out = tempi::Runtime::simulated(1).run().unwrap();
/// let row = AdmissionRecord { request: "j".into(), time: 0, cpu: 0, target_cpu: None, wcet: 1, deadline: 5, accepted: false, idle: 0, order: 0 };
/// let v: serde_json::Value = serde_json::from_str(&to_json_with_admissions(&out, &[row], &[])).unwrap();
/// assert_eq!(v["admissions"][0]["request"], "j");
/// assert!(v["admissions"][0].get("target_cpu").is_none());
/// ```
#[cfg(feature = "export")]
pub fn to_json_with_admissions(
    out: &RunOutcome,
    admissions: &[AdmissionRecord],
    events: &[AdmissionEventRecord],
) -> String {
    super::report::render(out, Some(admissions), Some(events))
}
