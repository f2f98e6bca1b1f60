//! The answers of an admission besides an admitted job: the negative acknowledgement
//! ([`Nack`]), the errors ([`AdmissionError`]) and their union ([`Refused`]).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::error::Error;
use crate::policy::admit;
use crate::time::Time;

/// A negative acknowledgement: the job does not fit on `cpu` before its deadline.
///
/// ```
/// use std::time::Duration;
/// let n = tempi::admission::Nack { request: "j".into(), cpu: 1, deadline: tempi::Time::from_micros(5), idle: Duration::from_micros(2) };
/// assert!(n.to_string().contains("2µs"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nack {
    /// The job that was refused.
    pub request: Arc<str>,
    /// The CPU that refused it.
    pub cpu: usize,
    /// Its deadline.
    pub deadline: Time,
    /// The idle time that CPU had before the deadline: a job needing at most this fits.
    pub idle: Duration,
}

impl fmt::Display for Nack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "job `{}` refused on CPU {}: {:?} idle before {}", self.request, self.cpu, self.idle, self.deadline)
    }
}

/// Why a call on an [`Admission`](super::Admission) could not be carried out (not a refusal: see [`Refused`]).
///
/// ```
/// assert!(tempi::admission::AdmissionError::ZeroWcet.to_string().contains("WCET"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AdmissionError {
    /// No engine has this name.
    UnknownEngine(String),
    /// The runtime's scheduler is not EDF, so admitted jobs would not run in the order the
    /// test assumes.
    NotEdf {
        /// The scheduler's name.
        scheduler: String,
    },
    /// The admission belongs to another runtime.
    ForeignRuntime,
    /// A submission from another real-time CPU got no answer: the submission thread that
    /// carried it to CPU `cpu` ended before answering (it was killed, or panicked).
    Unanswered {
        /// The admission's CPU.
        cpu: usize,
        /// How the submission thread ended.
        outcome: String,
    },
    /// The job's release is after the request: only released jobs can be admitted.
    FutureRelease {
        /// The job's release.
        release: Time,
        /// The instant of the request.
        now: Time,
    },
    /// A job needs some CPU time.
    ZeroWcet,
    /// The engine holds its capacity of entries (they leave when their deadline passes).
    Full {
        /// The engine's capacity.
        capacity: usize,
    },
    /// The deadline is after the latest an engine accepts
    /// ([`MAX_DEADLINE_NS`](crate::policy::admit::MAX_DEADLINE_NS), about 146 years).
    DeadlineTooLate {
        /// The deadline asked for.
        deadline: Time,
    },
    /// [`AdmissionSpec::max_live`](super::AdmissionSpec::max_live) admitted jobs are alive.
    TooManyLive {
        /// The limit.
        max: usize,
    },
    /// The job fitted, but its thread could not be created (for instance no free thread
    /// slot, [`Config::max_threads`](crate::Config::max_threads)): it was withdrawn from the
    /// engine at once (its reservation and its entry) and a
    /// [`JobEventKind::NotStarted`](super::JobEventKind::NotStarted) was logged.
    NotStarted(Error),
    /// A runtime call failed (creating the sets, reading a job's clock, crossing to another
    /// CPU).
    Runtime(Error),
}

impl fmt::Display for AdmissionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdmissionError::UnknownEngine(n) => {
                write!(f, "unknown admission engine `{n}` (known: {})", admit::NAMES.join(", "))
            }
            AdmissionError::NotEdf { scheduler } => {
                write!(f, "admission needs the EDF scheduler, the runtime uses `{scheduler}`")
            }
            AdmissionError::ForeignRuntime => write!(f, "the admission belongs to another runtime"),
            AdmissionError::Unanswered { cpu, outcome } => {
                write!(f, "the submission to CPU {cpu} got no answer (its submission thread {outcome})")
            }
            AdmissionError::FutureRelease { release, now } => {
                write!(f, "job released at {release} requested at {now}: only released jobs can be admitted")
            }
            AdmissionError::ZeroWcet => write!(f, "a job's WCET must be positive"),
            AdmissionError::Full { capacity } => write!(f, "admission engine full ({capacity} entries)"),
            AdmissionError::DeadlineTooLate { deadline } => write!(
                f,
                "deadline {deadline} is after the latest an admission engine accepts ({} ns)",
                admit::MAX_DEADLINE_NS
            ),
            AdmissionError::TooManyLive { max } => write!(f, "{max} admitted jobs are alive (max_live)"),
            AdmissionError::NotStarted(e) => write!(f, "the job fitted but could not be started: {e}"),
            AdmissionError::Runtime(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for AdmissionError {}

/// Why [`Admission::admit`](super::Admission::admit) did not admit a job.
///
/// ```
/// use tempi::admission::{AdmissionError, Refused};
/// let r = Refused::Error(AdmissionError::ZeroWcet);
/// assert!(r.nack().is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The admission test refused it.
    Nack(Nack),
    /// The request could not be tested or the job not started.
    Error(AdmissionError),
}

impl Refused {
    /// The negative acknowledgement, if the test refused the job.
    ///
    /// ```
    /// use tempi::admission::{Nack, Refused};
    /// let n = Nack { request: "j".into(), cpu: 0, deadline: tempi::Time::ZERO, idle: std::time::Duration::ZERO };
    /// assert_eq!(Refused::Nack(n.clone()).nack(), Some(&n));
    /// ```
    pub fn nack(&self) -> Option<&Nack> {
        match self {
            Refused::Nack(n) => Some(n),
            Refused::Error(_) => None,
        }
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Nack(n) => n.fmt(f),
            Refused::Error(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Refused {}

impl From<AdmissionError> for Refused {
    fn from(e: AdmissionError) -> Refused {
        Refused::Error(e)
    }
}
