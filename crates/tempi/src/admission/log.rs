//! What an [`Admission`](super::Admission) records: one [`Decision`] per admission test and
//! one [`JobEvent`] per job that did not run as admitted (an overrun, or enforcement that
//! could not be set up). Both logs are preallocated; entries past their capacity are counted,
//! not stored.

use std::sync::Arc;
use std::time::Duration;

use super::{lock, Admission};
use crate::error::Error;
use crate::time::Time;
use crate::trace::admissions::{AdmissionEventRecord, AdmissionRecord};
use crate::ThreadId;

/// One admission test and its answer.
///
/// ```
/// use std::time::Duration;
/// use tempi::admission::{Admission, AdmissionSpec, JobRequest};
/// use tempi::{Runtime, ThreadSpec, Time};
/// let mut rt = Runtime::simulated(1);
/// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
/// let adm = Admission::new(&mut rt, AdmissionSpec::new(0)).unwrap();
/// let a = adm.clone();
/// rt.spawn(ThreadSpec::new("submitter").deadline(Duration::from_nanos(1)), move |cx| {
///     let job = JobRequest::new("j", Duration::from_micros(3), Time::from_micros(10), |cx| cx.work(Duration::from_micros(2)));
///     a.admit(cx, job).unwrap();
/// }).unwrap();
/// rt.run().unwrap();
/// let d = &adm.decisions()[0];
/// assert_eq!((&*d.request, d.accepted, d.idle), ("j", true, Duration::from_micros(10)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The job's name.
    pub request: Arc<str>,
    /// When it was tested.
    pub time: Time,
    /// The CPU the request was made on (the submitter's).
    pub cpu: usize,
    /// The CPU whose admission tested it (the job's CPU if accepted).
    pub target_cpu: usize,
    /// The worst-case execution time asked for.
    pub wcet: Duration,
    /// The absolute deadline asked for.
    pub deadline: Time,
    /// Whether the job was admitted.
    pub accepted: bool,
    /// The idle time the CPU had before `deadline` when the request was tested.
    pub idle: Duration,
    /// Place in the order of all decisions made in this process, to merge the logs of
    /// several CPUs in the order the decisions were made.
    pub order: u64,
}

/// Something that happened to an admitted job after its admission.
///
/// ```
/// use tempi::admission::JobEventKind;
/// assert_ne!(JobEventKind::Overrun, JobEventKind::Unenforced(tempi::Error::Unwinding));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobEventKind {
    /// The job used its whole WCET without ending: it was killed at that instant (its thread
    /// ends as [`ThreadOutcome::Killed`](crate::ThreadOutcome::Killed)) and the rest of its
    /// reservation went back to the later jobs.
    Overrun,
    /// The execution-time budget could not be put on the job's thread, so its body was not
    /// run (it would have run unguarded); the job ended at once.
    Unenforced(Error),
    /// The job fitted, but its thread could not be created (for instance no free thread
    /// slot, [`Config::max_threads`](crate::Config::max_threads)): its reservation went back
    /// at once and the caller got the error
    /// ([`AdmissionError::NotStarted`](super::AdmissionError::NotStarted)). No decision is
    /// logged for it, as it was not admitted; the event has no thread.
    NotStarted(Error),
}

/// A [`JobEventKind`] with the job it happened to.
///
/// ```
/// use std::time::Duration;
/// use tempi::admission::{Admission, AdmissionSpec, JobEventKind, JobRequest};
/// use tempi::{Runtime, ThreadSpec, Time};
/// let mut rt = Runtime::simulated(1);
/// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
/// let adm = Admission::new(&mut rt, AdmissionSpec::new(0)).unwrap();
/// let a = adm.clone();
/// rt.spawn(ThreadSpec::new("submitter").deadline(Duration::from_nanos(1)), move |cx| {
///     // Claims 2 µs, runs for 5: stopped at 2.
///     let job = JobRequest::new("greedy", Duration::from_micros(2), Time::from_micros(10), |cx| cx.work(Duration::from_micros(5)));
///     a.admit(cx, job).unwrap();
/// }).unwrap();
/// rt.run().unwrap();
/// let e = &adm.job_events()[0];
/// assert_eq!((&*e.request, e.at, &e.kind), ("greedy", Time::from_micros(2), &JobEventKind::Overrun));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobEvent {
    /// The job's name.
    pub request: Arc<str>,
    /// The job's thread.
    pub thread: Option<ThreadId>,
    /// When it happened.
    pub at: Time,
    /// The job's WCET.
    pub wcet: Duration,
    /// What happened.
    pub kind: JobEventKind,
}

/// A log with room fixed up front: what does not fit is counted.
pub(super) struct Bounded<T> {
    pub(super) entries: Vec<T>,
    pub(super) dropped: u64,
}

impl<T> Bounded<T> {
    /// Room for `n` entries (`AdmissionSpec::log_capacity`), or an error if the allocator
    /// refuses it.
    pub(super) fn with_capacity(n: usize) -> Result<Bounded<T>, crate::Error> {
        Ok(Bounded { entries: crate::sizes::vec_with_capacity(n, "an admission log (log_capacity)")?, dropped: 0 })
    }

    pub(super) fn push(&mut self, entry: T) {
        if self.entries.len() < self.entries.capacity() {
            self.entries.push(entry);
        } else {
            self.dropped += 1;
        }
    }
}

impl Admission {
    /// The logs as rows of the JSON report
    /// ([`to_json_with_admissions`](crate::trace::admissions::to_json_with_admissions)).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// let a = tempi::admission::Admission::new(&mut rt, tempi::admission::AdmissionSpec::new(0)).unwrap();
    /// let (decisions, events) = a.report_rows();
    /// assert!(decisions.is_empty() && events.is_empty());
    /// ```
    pub fn report_rows(&self) -> (Vec<AdmissionRecord>, Vec<AdmissionEventRecord>) {
        let st = lock(&self.state);
        let ns = crate::time::nanos;
        let decisions = st
            .decisions
            .entries
            .iter()
            .map(|d| AdmissionRecord {
                request: d.request.to_string(),
                time: d.time.as_nanos(),
                cpu: d.cpu,
                target_cpu: (d.target_cpu != d.cpu).then_some(d.target_cpu),
                wcet: ns(d.wcet),
                deadline: d.deadline.as_nanos(),
                accepted: d.accepted,
                idle: ns(d.idle),
                order: d.order,
            })
            .collect();
        let events = st
            .events
            .entries
            .iter()
            .map(|e| AdmissionEventRecord {
                request: e.request.to_string(),
                time: e.at.as_nanos(),
                cpu: self.cpu,
                wcet: ns(e.wcet),
                kind: match &e.kind {
                    JobEventKind::Overrun => "overrun".to_string(),
                    JobEventKind::Unenforced(err) => format!("unenforced: {err}"),
                    JobEventKind::NotStarted(err) => format!("not started: {err}"),
                },
            })
            .collect();
        (decisions, events)
    }
}
