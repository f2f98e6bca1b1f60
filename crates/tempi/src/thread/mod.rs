//! What a thread is, as the application describes it: identity, timing attributes, miss policy.
//!
//! Owns the public description types ([`ThreadSpec`], [`Timing`], [`MissPolicy`]) and the values
//! the kernel reports back ([`ThreadOutcome`], [`MissEvent`]). It holds no runtime state: the
//! kernel's thread control blocks live in `kernel::tcb`.

use std::time::Duration;

use crate::time::Time;

mod spec;

pub use crate::plain::ThreadId;
pub use spec::{assign_deadline_monotonic, assign_rate_monotonic, ThreadSpec};

/// How a thread's jobs are released.
///
/// ```
/// use std::time::Duration;
/// use tempi::Timing;
/// let t = Timing::Periodic { period: Duration::from_millis(10), phase: Duration::ZERO };
/// assert!(matches!(t, Timing::Periodic { .. }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// One job, released when the thread is spawned. The body runs once.
    OneShot,
    /// A job every `period`, the first at `phase` after start (or after spawn, for threads
    /// spawned while running).
    Periodic {
        /// Time between releases (T).
        period: Duration,
        /// Offset of the first release (the paper's phase / start time).
        phase: Duration,
    },
    /// Jobs released on demand ([`crate::Ctx::release`], [`crate::EventCtx::release`]); two
    /// releases are at least `min_interarrival` apart: an early request is deferred to that
    /// instant. An aperiodic thread is a sporadic one with a zero minimum.
    Sporadic {
        /// Minimum time between two releases.
        min_interarrival: Duration,
    },
}

/// Whether a missed deadline is a fault of the system (hard) or a target missed (soft), in
/// Real-Time Mach's sense: a hard thread must complete each job by its deadline; a soft
/// thread's deadline is a target, and a job finished late still has value.
///
/// The kernel schedules and handles misses alike for both (the miss handler and
/// [`MissPolicy`] run whatever the criticality). What differs is how a miss is judged:
///
/// - in a run's report, a miss by a hard thread is a fault of the run, counted by
///   [`crate::RunOutcome::hard_misses`] and named on a `faults:` line of
///   [`crate::trace::report::summary_text`]; a soft thread's misses are only counted;
/// - in fixed-priority response-time analysis ([`crate::analysis::Task::criticality`]), a
///   soft thread whose worst-case response exceeds its deadline is a soft target missed, and
///   does not make the set unschedulable; tests that judge a set as a whole (EDF, utilisation
///   bounds, global tests) judge soft threads as hard.
///
/// Real-Time Mach also lets a soft thread carry an abort time of its own; here a soft job's
/// lateness is bounded the way any job's is: [`MissPolicy::AbortJob`] abandons it at its
/// deadline, [`ThreadSpec::abort_after`] a given time after its release.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Criticality, Runtime, ThreadSpec, Time};
/// assert_eq!(Criticality::default(), Criticality::Hard);
/// let mut rt = Runtime::simulated(1);
/// // Each needs 30 ms every 20 ms: both miss, only h's misses are faults.
/// for (name, c) in [("h", Criticality::Hard), ("s", Criticality::Soft)] {
///     let spec = ThreadSpec::new(name).periodic(Duration::from_millis(20)).criticality(c);
///     rt.spawn(spec, |cx| cx.work(Duration::from_millis(30))).unwrap();
/// }
/// let out = rt.run_until(Time::from_millis(100)).unwrap();
/// assert!(out.hard_misses() > 0);
/// assert_eq!(out.hard_misses(), out.thread_named("h").unwrap().stats.misses);
/// assert!(out.total_misses() > out.hard_misses());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Criticality {
    /// The deadline must be met: a miss is a fault of the system.
    #[default]
    Hard,
    /// The deadline is a target: a miss lowers the value of the result, and finishing the
    /// job late still makes sense.
    Soft,
}

impl Criticality {
    /// The scenario and report word: `"hard"` or `"soft"`.
    ///
    /// ```
    /// assert_eq!(tempi::Criticality::Soft.name(), "soft");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Criticality::Hard => "hard",
            Criticality::Soft => "soft",
        }
    }
}

/// What the kernel does to a job that has missed its deadline, after the miss handler ran.
///
/// A closed set rather than a policy trait, on purpose: each answer is a kernel operation on
/// the job (leave it, abandon it by unwinding its stack, drop the next release), done at the
/// instant of the miss, with the job's timers and the thread's release count in a state only
/// the kernel may touch. What an application wants beyond these is a reaction, and goes in the
/// miss handler ([`crate::ThreadSpec::on_miss`]), which runs first and is shown the miss.
///
/// ```
/// assert_eq!(tempi::MissPolicy::default(), tempi::MissPolicy::Continue);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MissPolicy {
    /// The late job runs on to completion.
    #[default]
    Continue,
    /// The late job is abandoned at the deadline instant, which is its end in the report: a
    /// job that has not begun is removed; one that has unwinds out of its body (destructors
    /// run) when the thread next runs, in no simulated time, or at its first runtime call after
    /// its last unlock if it is inside a critical section (and ends then). The thread goes on
    /// with its next job.
    AbortJob,
    /// The late job runs on, and the thread's next release is dropped so it can catch up; if
    /// jobs already wait, the oldest of them is abandoned when the late job ends instead.
    SkipNext,
}

/// Passed to a miss handler at the instant a deadline passes with its job unfinished.
///
/// ```
/// use tempi::{MissEvent, MissPolicy, Runtime, ThreadSpec, Time};
/// use std::time::Duration;
/// use std::sync::{Arc, Mutex};
/// let seen: Arc<Mutex<Vec<MissEvent>>> = Arc::default();
/// let log = seen.clone();
/// let mut rt = Runtime::simulated(1);
/// let spec = ThreadSpec::new("late")
///     .deadline(Duration::from_millis(1))
///     .on_miss(move |m| log.lock().unwrap().push(*m));
/// rt.spawn(spec, |cx| cx.work(Duration::from_millis(3))).unwrap();
/// rt.run().unwrap();
/// let seen = seen.lock().unwrap();
/// assert_eq!(seen[0].deadline, Time::from_millis(1));
/// assert_eq!(seen[0].at, Time::from_millis(1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MissEvent {
    /// The late thread.
    pub thread: ThreadId,
    /// Job number, from 0.
    pub job: u32,
    /// The job's absolute release.
    pub release: Time,
    /// The job's absolute deadline.
    pub deadline: Time,
    /// When the kernel noticed: the deadline itself in virtual time; within timer latency in
    /// real time.
    pub at: Time,
}

pub(crate) type MissHandler = Box<dyn FnMut(&MissEvent) + Send>;

/// The smallest stack a thread may have, in bytes: what the runtime's own paths need on the
/// thread's stack — unwinding an aborted job, a kill or a stop, and a panic's report with a
/// symbolised backtrace (`RUST_BACKTRACE=1`) — with a margin. Smaller stacks are refused by
/// [`ThreadSpec`] validation (at spawn) and [`crate::Config`] checks.
///
/// ```
/// let mut rt = tempi::Runtime::simulated(1);
/// let tiny = tempi::ThreadSpec::new("tiny").stack_size(tempi::MIN_STACK_SIZE - 1);
/// assert!(rt.spawn(tiny, |_| {}).is_err());
/// ```
pub const MIN_STACK_SIZE: usize = 64 * 1024;

/// How a thread ended.
///
/// ```
/// use tempi::{Runtime, ThreadOutcome, ThreadSpec};
/// let mut rt = Runtime::simulated(1);
/// let t = rt.spawn(ThreadSpec::new("boom"), |_| panic!("bad sensor")).unwrap();
/// let out = rt.run().unwrap();
/// assert!(matches!(out.thread(t).unwrap().outcome, Some(ThreadOutcome::Panicked(ref m)) if m == "bad sensor"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThreadOutcome {
    /// The body returned (one-shot) or the thread was stopped at the end of its jobs.
    Completed,
    /// The body panicked; the message is recorded. Other threads were not affected.
    Panicked(String),
    /// The thread was killed at a task boundary (its set's budget action was
    /// [`crate::policy::budget::Kill`]).
    Killed,
    /// The thread could not be started when it was first to run and ran none of its code: its
    /// stack could not be mapped, or (an OS-backed thread in real time) its OS thread could
    /// not be created. The system's reason is recorded. Other threads were not affected.
    NotStarted(String),
}
