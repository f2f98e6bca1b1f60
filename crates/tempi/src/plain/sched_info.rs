//! What a scheduling policy is told of a thread: its [`Urgency`] on the one scale every policy
//! and protocol compares, and its [`SchedInfo`]. Re-exported by `tempi::policy::sched`, where
//! the hooks that receive them are described.

use std::time::Duration;

use crate::plain::ids::ThreadId;
use crate::time::Time;

/// How urgent a thread is, as one totally ordered number: larger runs first.
///
/// A policy maps its own notion (a priority, a deadline) onto this scale in
/// [`Scheduler::base_urgency`](crate::policy::sched::Scheduler::base_urgency); the kernel keeps it per thread and raises it when a more urgent
/// thread waits on it (inheritance), so protocols can compare urgencies without knowing the
/// policy.
///
/// ```
/// use tempi::policy::sched::Urgency;
/// use tempi::Time;
/// assert!(Urgency::from_priority(5) > Urgency::from_priority(2));
/// assert!(Urgency::from_deadline(Some(Time::from_millis(1))) > Urgency::from_deadline(Some(Time::from_millis(2))));
/// assert!(Urgency::from_deadline(Some(Time::MAX)) > Urgency::from_deadline(None));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Urgency(pub i64);

impl Urgency {
    /// The least urgent value.
    ///
    /// ```
    /// assert!(tempi::policy::sched::Urgency::LOWEST < tempi::policy::sched::Urgency::from_priority(i32::MIN));
    /// ```
    pub const LOWEST: Urgency = Urgency(i64::MIN);

    /// The urgency of a thread demoted by its budget
    /// ([`crate::policy::budget::Enforcement::Demote`]): below every thread not demoted and
    /// above [`Urgency::LOWEST`], so demoted threads still run before threads without a
    /// deadline under EDF. No policy maps a thread below it: [`Urgency::from_priority`] gives
    /// an `i32`, and [`Urgency::from_deadline`] reaches it only for a deadline beyond 292
    /// years, which it clamps there.
    ///
    /// ```
    /// use tempi::policy::sched::Urgency;
    /// use tempi::Time;
    /// assert!(Urgency::DEMOTED > Urgency::LOWEST);
    /// assert!(Urgency::DEMOTED < Urgency::from_deadline(Some(Time::from_secs(9_000_000_000))));
    /// assert!(Urgency::DEMOTED < Urgency::from_priority(i32::MIN));
    /// ```
    pub const DEMOTED: Urgency = Urgency(i64::MIN + 1);

    /// A fixed priority: larger is more urgent.
    ///
    /// ```
    /// assert_eq!(tempi::policy::sched::Urgency::from_priority(3).0, 3);
    /// ```
    pub fn from_priority(priority: i32) -> Urgency {
        Urgency(priority as i64)
    }

    /// An absolute deadline: earlier is more urgent; no deadline is least urgent.
    ///
    /// ```
    /// use tempi::policy::sched::Urgency;
    /// assert_eq!(Urgency::from_deadline(None), Urgency::LOWEST);
    /// ```
    pub fn from_deadline(deadline: Option<Time>) -> Urgency {
        match deadline {
            // Deadlines beyond 292 years clamp; they stay above `LOWEST`.
            Some(d) => Urgency(-(d.as_nanos().min(i64::MAX as u64) as i64)),
            None => Urgency::LOWEST,
        }
    }
}

/// What a scheduler may know about a thread: a snapshot the kernel builds at each call.
///
/// ```
/// use tempi::policy::sched::SchedInfo;
/// fn slack(t: &SchedInfo) -> Option<std::time::Duration> {
///     Some(t.deadline? - t.release)
/// }
/// # let _ = slack;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedInfo {
    /// The thread.
    pub id: ThreadId,
    /// The CPU it is pinned to (under a global policy, the CPU it last ran on, or the one it
    /// was spawned on before it first ran).
    pub cpu: usize,
    /// Base priority from its spec.
    pub priority: i32,
    /// Effective urgency: the base urgency, or more while a more urgent thread waits on it.
    pub urgency: Urgency,
    /// Semantic importance.
    pub importance: u32,
    /// Release of the current job.
    pub release: Time,
    /// Absolute deadline of the current job, if it has one.
    pub deadline: Option<Time>,
    /// Period of a periodic thread.
    pub period: Option<Duration>,
    /// Relative deadline.
    pub relative_deadline: Option<Duration>,
    /// Declared worst-case execution time per job.
    pub wcet: Duration,
    /// CPU time the current job has consumed so far.
    pub job_cpu_time: Duration,
    /// Job number of the current job, from 0.
    pub job: u32,
}

impl SchedInfo {
    /// A job of no thread at a given level: priority `priority`, relative deadline
    /// `relative_deadline`, released at `now` (so its deadline is `now` plus the relative one),
    /// on CPU 0, with no WCET and no CPU time used. What a policy is asked about when a level
    /// rather than a thread is to be ranked, as a lock ceiling computed from its users is.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::sched::SchedInfo;
    /// use tempi::Time;
    /// let job = SchedInfo::at_level(4, Some(Duration::from_nanos(10)), Time::from_nanos(5));
    /// assert_eq!((job.priority, job.deadline), (4, Some(Time::from_nanos(15))));
    /// ```
    pub fn at_level(priority: i32, relative_deadline: Option<Duration>, now: Time) -> SchedInfo {
        SchedInfo {
            id: ThreadId::new(u32::MAX, 0),
            cpu: 0,
            priority,
            urgency: Urgency::LOWEST,
            importance: 0,
            release: now,
            deadline: relative_deadline.map(|d| now + d),
            period: None,
            relative_deadline,
            wcet: Duration::ZERO,
            job_cpu_time: Duration::ZERO,
            job: 0,
        }
    }
}
