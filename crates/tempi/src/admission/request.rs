//! What an admission is built from and what it is asked: [`AdmissionSpec`] (its CPU, engine
//! and capacities) and [`JobRequest`] (a job's name, WCET, deadline and body). Plain
//! descriptions with builders; testing, starting and logging belong to the parent module.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::kernel::Ctx;
use crate::time::Time;

/// How to build an [`Admission`](super::Admission): its CPU, engine, capacities.
///
/// ```
/// let spec = tempi::admission::AdmissionSpec::new(1).engine("linear").capacity(32).max_live(4).log_capacity(100);
/// assert_eq!(spec.cpu(), 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmissionSpec {
    pub(super) cpu: usize,
    pub(super) engine: String,
    pub(super) capacity: usize,
    pub(super) max_live: usize,
    pub(super) log_capacity: usize,
}

impl AdmissionSpec {
    /// The most entries an admission's engine holds ([`AdmissionSpec::capacity`], 2^20).
    ///
    /// ```
    /// use tempi::admission::{Admission, AdmissionSpec};
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// assert!(Admission::new(&mut rt, AdmissionSpec::new(0).capacity(AdmissionSpec::MAX_CAPACITY + 1)).is_err());
    /// ```
    pub const MAX_CAPACITY: usize = 1 << 20;
    /// The most admitted jobs alive at once ([`AdmissionSpec::max_live`], 2^20, the most thread
    /// sets a runtime numbers; [`crate::Config::max_sets`] usually bounds it first).
    ///
    /// ```
    /// use tempi::admission::{Admission, AdmissionSpec};
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// assert!(Admission::new(&mut rt, AdmissionSpec::new(0).max_live(AdmissionSpec::MAX_LIVE + 1)).is_err());
    /// ```
    pub const MAX_LIVE: usize = 1 << 20;
    /// The most entries each log of an admission holds ([`AdmissionSpec::log_capacity`], 2^20).
    ///
    /// ```
    /// use tempi::admission::{Admission, AdmissionSpec};
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// assert!(Admission::new(&mut rt, AdmissionSpec::new(0).log_capacity(AdmissionSpec::MAX_LOG_CAPACITY + 1)).is_err());
    /// ```
    pub const MAX_LOG_CAPACITY: usize = 1 << 20;

    /// Each size against its limit, before anything is allocated.
    pub(super) fn check(&self) -> Result<(), crate::Error> {
        let sizes = [
            ("capacity", self.capacity, AdmissionSpec::MAX_CAPACITY, "MAX_CAPACITY"),
            ("max_live", self.max_live, AdmissionSpec::MAX_LIVE, "MAX_LIVE"),
            ("log_capacity", self.log_capacity, AdmissionSpec::MAX_LOG_CAPACITY, "MAX_LOG_CAPACITY"),
        ];
        for (field, value, max, name) in sizes {
            if value > max {
                return Err(crate::Error::InvalidConfig(format!(
                    "admission of CPU {}: {} (AdmissionSpec::{name})",
                    self.cpu,
                    crate::sizes::too_large(field, value, max)
                )));
            }
        }
        Ok(())
    }

    /// Admission on `cpu`: engine `tree`, 256 entries, 8 jobs alive at once, 1024 log entries.
    ///
    /// ```
    /// let _ = tempi::admission::AdmissionSpec::new(0);
    /// ```
    pub fn new(cpu: usize) -> AdmissionSpec {
        AdmissionSpec { cpu, engine: "tree".into(), capacity: 256, max_live: 8, log_capacity: 1024 }
    }

    /// The engine, by a name [`crate::policy::admit::by_name`] knows (`tree`, `linear`,
    /// `min_laxity`, `hashed`; `min-laxity` is accepted too).
    ///
    /// ```
    /// let _ = tempi::admission::AdmissionSpec::new(0).engine("min-laxity");
    /// ```
    pub fn engine(mut self, name: &str) -> AdmissionSpec {
        self.engine = name.replace('-', "_");
        self
    }

    /// How many entries the engine holds: admitted jobs until their deadline passes (a job
    /// whose body never ran leaves at once); at most [`AdmissionSpec::MAX_CAPACITY`].
    ///
    /// ```
    /// let _ = tempi::admission::AdmissionSpec::new(0).capacity(16);
    /// ```
    pub fn capacity(mut self, entries: usize) -> AdmissionSpec {
        self.capacity = entries;
        self
    }

    /// How many admitted jobs may be alive (not yet ended) at once: one thread set each,
    /// created with the admission and counted against [`crate::Config::max_sets`]; at most
    /// [`AdmissionSpec::MAX_LIVE`].
    ///
    /// ```
    /// let _ = tempi::admission::AdmissionSpec::new(0).max_live(2);
    /// ```
    pub fn max_live(mut self, jobs: usize) -> AdmissionSpec {
        self.max_live = jobs;
        self
    }

    /// Room in each log (decisions, job events); what does not fit is counted. At most
    /// [`AdmissionSpec::MAX_LOG_CAPACITY`].
    ///
    /// ```
    /// let _ = tempi::admission::AdmissionSpec::new(0).log_capacity(10);
    /// ```
    pub fn log_capacity(mut self, entries: usize) -> AdmissionSpec {
        self.log_capacity = entries;
        self
    }

    /// The CPU.
    ///
    /// ```
    /// assert_eq!(tempi::admission::AdmissionSpec::new(3).cpu(), 3);
    /// ```
    pub fn cpu(&self) -> usize {
        self.cpu
    }
}

/// A job to be tested: a name, a WCET, an absolute deadline and the body to run if it fits.
///
/// ```
/// use std::time::Duration;
/// let r = tempi::admission::JobRequest::new("plan", Duration::from_millis(2), tempi::Time::from_millis(9), |cx| {
///     cx.work(Duration::from_millis(1));
/// });
/// assert_eq!(r.name(), "plan");
/// ```
pub struct JobRequest {
    pub(super) name: Arc<str>,
    pub(super) wcet: Duration,
    pub(super) deadline: Time,
    pub(super) release: Option<Time>,
    pub(super) body: super::job::Body,
}

impl fmt::Debug for JobRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobRequest")
            .field("name", &self.name)
            .field("wcet", &self.wcet)
            .field("deadline", &self.deadline)
            .field("release", &self.release)
            .finish_non_exhaustive()
    }
}

impl JobRequest {
    /// A job named `name` that needs at most `wcet` of CPU time by `deadline` (absolute).
    ///
    /// ```
    /// use std::time::Duration;
    /// let r = tempi::admission::JobRequest::new("j", Duration::from_micros(1), tempi::Time::from_micros(5), |_| {});
    /// assert_eq!(r.wcet(), Duration::from_micros(1));
    /// ```
    pub fn new(
        name: impl Into<Arc<str>>,
        wcet: Duration,
        deadline: Time,
        body: impl FnOnce(&Ctx<'_>) + Send + 'static,
    ) -> JobRequest {
        JobRequest { name: name.into(), wcet, deadline, release: None, body: Box::new(body) }
    }

    /// The job's release, if it is not "now". Admission assumes released jobs: a release
    /// after the instant of the request is refused with [`AdmissionError::FutureRelease`](super::AdmissionError::FutureRelease).
    ///
    /// ```
    /// use std::time::Duration;
    /// let r = tempi::admission::JobRequest::new("j", Duration::from_micros(1), tempi::Time::from_micros(5), |_| {})
    ///     .released_at(tempi::Time::ZERO);
    /// # let _ = r;
    /// ```
    pub fn released_at(mut self, release: Time) -> JobRequest {
        self.release = Some(release);
        self
    }

    /// The name.
    ///
    /// ```
    /// let r = tempi::admission::JobRequest::new("x", std::time::Duration::from_nanos(1), tempi::Time::MAX, |_| {});
    /// assert_eq!(r.name(), "x");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The WCET.
    ///
    /// ```
    /// let r = tempi::admission::JobRequest::new("x", std::time::Duration::from_nanos(4), tempi::Time::MAX, |_| {});
    /// assert_eq!(r.wcet(), std::time::Duration::from_nanos(4));
    /// ```
    pub fn wcet(&self) -> Duration {
        self.wcet
    }

    /// The absolute deadline.
    ///
    /// ```
    /// let r = tempi::admission::JobRequest::new("x", std::time::Duration::from_nanos(4), tempi::Time::from_nanos(9), |_| {});
    /// assert_eq!(r.deadline(), tempi::Time::from_nanos(9));
    /// ```
    pub fn deadline(&self) -> Time {
        self.deadline
    }
}
