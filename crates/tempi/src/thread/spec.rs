//! [`ThreadSpec`], the description of one thread that a runtime spawns, with its chained
//! setters and their limits, and the priority assignments over a set of specs (rate and
//! deadline monotonic). It must not hold runtime state: the kernel copies what it needs at
//! spawn.

use std::fmt;
use std::time::Duration;

use crate::time::Time;

use super::{Criticality, MissEvent, MissHandler, MissPolicy, Timing, MIN_STACK_SIZE};

/// Everything the kernel needs to know to create a thread: name, placement, timing and
/// scheduling attributes, miss handling, stack size.
///
/// Built with chained setters; every attribute has a default (one-shot, CPU 0, priority 0, no
/// deadline, 64 KiB stack).
///
/// ```
/// use std::time::Duration;
/// use tempi::{MissPolicy, ThreadSpec};
/// let ms = Duration::from_millis;
/// let spec = ThreadSpec::new("sensor")
///     .periodic(ms(10))
///     .wcet(ms(2))
///     .deadline(ms(8))
///     .priority(5)
///     .cpu(0)
///     .miss_policy(MissPolicy::SkipNext);
/// assert_eq!(spec.relative_deadline(), Some(ms(8)));
/// ```
pub struct ThreadSpec {
    pub(crate) name: String,
    pub(crate) cpu: usize,
    pub(crate) timing: Timing,
    pub(crate) wcet: Duration,
    pub(crate) deadline: Option<Duration>,
    pub(crate) first_deadline: Option<Time>,
    pub(crate) abort_after: Option<Duration>,
    pub(crate) priority: i32,
    pub(crate) importance: u32,
    pub(crate) criticality: Criticality,
    pub(crate) miss_policy: MissPolicy,
    pub(crate) on_miss: Option<MissHandler>,
    pub(crate) stack_size: Option<usize>,
    pub(crate) max_jobs: Option<u32>,
    pub(crate) release_queue: usize,
    pub(crate) mailbox: usize,
    pub(crate) save_queues: usize,
    pub(crate) message_queue: Option<Box<dyn crate::policy::queue::QueuePolicy>>,
    pub(crate) os_backed: bool,
    pub(crate) tame_prio_inv: bool,
    /// Properties of the scheduling policy's own, handed to it at spawn
    /// ([`crate::policy::sched::Scheduler::on_properties`]).
    pub(crate) sched_properties: Option<Box<dyn std::any::Any + Send>>,
}

impl fmt::Debug for ThreadSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadSpec")
            .field("name", &self.name)
            .field("cpu", &self.cpu)
            .field("timing", &self.timing)
            .field("wcet", &self.wcet)
            .field("deadline", &self.deadline)
            .field("priority", &self.priority)
            .finish_non_exhaustive()
    }
}

impl ThreadSpec {
    /// The most messages a thread's new queue holds, and each of its save queues
    /// ([`ThreadSpec::mailbox`], 2^20).
    ///
    /// ```
    /// use tempi::{Error, Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// let err = rt.spawn(ThreadSpec::new("t").mailbox(ThreadSpec::MAX_MAILBOX + 1), |_| {}).unwrap_err();
    /// assert!(matches!(err, Error::InvalidSpec { ref reason, .. } if reason.contains("mailbox")));
    /// ```
    pub const MAX_MAILBOX: usize = crate::sizes::MAX_QUEUE;
    /// The most releases of a sporadic thread that wait at once ([`ThreadSpec::release_queue`],
    /// 2^20).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let spec = tempi::ThreadSpec::new("s").release_queue(tempi::ThreadSpec::MAX_RELEASE_QUEUE + 1);
    /// assert!(rt.spawn(spec, |_| {}).is_err());
    /// ```
    pub const MAX_RELEASE_QUEUE: usize = crate::sizes::MAX_QUEUE;
    /// The most save queues a thread has ([`ThreadSpec::save_queues`], 1024).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let spec = tempi::ThreadSpec::new("s").save_queues(tempi::ThreadSpec::MAX_SAVE_QUEUES + 1);
    /// assert!(rt.spawn(spec, |_| {}).is_err());
    /// ```
    pub const MAX_SAVE_QUEUES: usize = crate::sizes::MAX_SAVE_QUEUES;
    /// The most messages a thread's save queues hold together, `save_queues × mailbox` (2^22).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let spec = tempi::ThreadSpec::new("s").save_queues(1024).mailbox(1 << 13);
    /// assert!(rt.spawn(spec, |_| {}).is_err());
    /// ```
    pub const MAX_SAVED: usize = crate::sizes::MAX_SAVED;

    /// A one-shot thread named `name` with default attributes.
    ///
    /// ```
    /// let s = tempi::ThreadSpec::new("worker");
    /// assert_eq!(s.name(), "worker");
    /// ```
    pub fn new(name: impl Into<String>) -> ThreadSpec {
        ThreadSpec {
            name: name.into(),
            cpu: 0,
            timing: Timing::OneShot,
            wcet: Duration::ZERO,
            deadline: None,
            first_deadline: None,
            abort_after: None,
            priority: 0,
            importance: 0,
            criticality: Criticality::Hard,
            miss_policy: MissPolicy::Continue,
            on_miss: None,
            stack_size: None,
            max_jobs: None,
            release_queue: 8,
            mailbox: 8,
            save_queues: 1,
            message_queue: None,
            os_backed: false,
            tame_prio_inv: false,
            sched_properties: None,
        }
    }

    /// Periodic with `period` and phase zero; the relative deadline defaults to the period.
    ///
    /// ```
    /// use std::time::Duration;
    /// let s = tempi::ThreadSpec::new("p").periodic(Duration::from_millis(5));
    /// assert_eq!(s.relative_deadline(), Some(Duration::from_millis(5)));
    /// ```
    pub fn periodic(mut self, period: Duration) -> ThreadSpec {
        self.timing = Timing::Periodic { period, phase: Duration::ZERO };
        self
    }

    /// Offset of a periodic thread's first release. Ignored for other kinds.
    ///
    /// ```
    /// use std::time::Duration;
    /// let s = tempi::ThreadSpec::new("p").periodic(Duration::from_millis(5)).phase(Duration::from_millis(1));
    /// assert!(matches!(s.timing(), tempi::Timing::Periodic { phase, .. } if phase == Duration::from_millis(1)));
    /// ```
    pub fn phase(mut self, offset: Duration) -> ThreadSpec {
        if let Timing::Periodic { phase, .. } = &mut self.timing {
            *phase = offset;
        }
        self
    }

    /// Sporadic: jobs released on demand, at least `min_interarrival` apart.
    ///
    /// ```
    /// use std::time::Duration;
    /// let s = tempi::ThreadSpec::new("s").sporadic(Duration::from_millis(20));
    /// assert!(matches!(s.timing(), tempi::Timing::Sporadic { .. }));
    /// ```
    pub fn sporadic(mut self, min_interarrival: Duration) -> ThreadSpec {
        self.timing = Timing::Sporadic { min_interarrival };
        self
    }

    /// Worst-case execution time per job (C). Used by analysis, reports and policies such as
    /// least laxity; the kernel does not enforce it (budgets do, later).
    ///
    /// ```
    /// use std::time::Duration;
    /// let s = tempi::ThreadSpec::new("w").wcet(Duration::from_millis(1));
    /// assert_eq!(s.wcet_value(), Duration::from_millis(1));
    /// ```
    pub fn wcet(mut self, c: Duration) -> ThreadSpec {
        self.wcet = c;
        self
    }

    /// Relative deadline (D) of every job, from its release.
    ///
    /// ```
    /// use std::time::Duration;
    /// let s = tempi::ThreadSpec::new("d").deadline(Duration::from_millis(3));
    /// assert_eq!(s.relative_deadline(), Some(Duration::from_millis(3)));
    /// ```
    pub fn deadline(mut self, d: Duration) -> ThreadSpec {
        self.deadline = Some(d);
        self
    }

    /// The first job's absolute deadline, in place of its release plus the relative deadline;
    /// later jobs keep the relative one ([`ThreadSpec::deadline`]).
    ///
    /// For work whose deadline was fixed before the thread exists: an admitted job's
    /// deadline is the one its admission test was made for, however late the dispatcher
    /// carries out the spawn (in real time a few microseconds after the test).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::{Runtime, ThreadSpec, Time};
    /// let mut rt = Runtime::simulated(1);
    /// let spec = ThreadSpec::new("j").deadline(Duration::from_millis(4)).first_deadline_at(Time::from_millis(3));
    /// assert_eq!(spec.first_deadline(), Some(Time::from_millis(3)));
    /// rt.spawn(spec, |cx| assert_eq!(cx.job().deadline, Some(Time::from_millis(3)))).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn first_deadline_at(mut self, deadline: Time) -> ThreadSpec {
        self.first_deadline = Some(deadline);
        self
    }

    /// The first job's absolute deadline, if one was set ([`ThreadSpec::first_deadline_at`]).
    ///
    /// ```
    /// assert_eq!(tempi::ThreadSpec::new("j").first_deadline(), None);
    /// ```
    pub fn first_deadline(&self) -> Option<Time> {
        self.first_deadline
    }

    /// Abort time (Real-Time Mach): a job still unfinished this long after its release is
    /// abandoned at its next task boundary, whatever the miss policy.
    ///
    /// ```
    /// use std::time::Duration;
    /// let s = tempi::ThreadSpec::new("a").abort_after(Duration::from_millis(9));
    /// # let _ = s;
    /// ```
    pub fn abort_after(mut self, after_release: Duration) -> ThreadSpec {
        self.abort_after = Some(after_release);
        self
    }

    /// Base priority for fixed-priority policies; larger is more urgent.
    ///
    /// ```
    /// let s = tempi::ThreadSpec::new("p").priority(3);
    /// assert_eq!(s.priority_value(), 3);
    /// ```
    pub fn priority(mut self, priority: i32) -> ThreadSpec {
        self.priority = priority;
        self
    }

    /// Semantic importance (V in the papers): what to keep when not everything fits.
    ///
    /// ```
    /// let s = tempi::ThreadSpec::new("v").importance(10);
    /// # let _ = s;
    /// ```
    pub fn importance(mut self, importance: u32) -> ThreadSpec {
        self.importance = importance;
        self
    }

    /// Hard (the default) or soft deadline ([`Criticality`]): whether a miss is a fault of the
    /// run ([`crate::RunOutcome::hard_misses`]) or a target missed, and whether response-time
    /// analysis may let this thread's worst case exceed its deadline. Scheduling and the
    /// [`MissPolicy`] are the same for both.
    ///
    /// ```
    /// let s = tempi::ThreadSpec::new("v").criticality(tempi::Criticality::Soft);
    /// assert_eq!(s.criticality_value(), tempi::Criticality::Soft);
    /// ```
    pub fn criticality(mut self, c: Criticality) -> ThreadSpec {
        self.criticality = c;
        self
    }

    /// The CPU the thread is pinned to, from 0.
    ///
    /// ```
    /// let s = tempi::ThreadSpec::new("c").cpu(1);
    /// assert_eq!(s.cpu_index(), 1);
    /// ```
    pub fn cpu(mut self, cpu: usize) -> ThreadSpec {
        self.cpu = cpu;
        self
    }

    /// What happens to a late job after the miss handler ran.
    ///
    /// ```
    /// let s = tempi::ThreadSpec::new("m").miss_policy(tempi::MissPolicy::AbortJob);
    /// # let _ = s;
    /// ```
    pub fn miss_policy(mut self, policy: MissPolicy) -> ThreadSpec {
        self.miss_policy = policy;
        self
    }

    /// A handler the kernel runs at the instant a deadline passes with the job unfinished. It
    /// runs inside the runtime, on no thread of its own: keep it short and do not block.
    ///
    /// ```
    /// let s = tempi::ThreadSpec::new("m").on_miss(|m| eprintln!("late: {m:?}"));
    /// # let _ = s;
    /// ```
    pub fn on_miss(mut self, handler: impl FnMut(&MissEvent) + Send + 'static) -> ThreadSpec {
        self.on_miss = Some(Box::new(handler));
        self
    }

    /// Stack size in bytes for this thread (rounded up to whole pages, plus a guard page); at
    /// least [`MIN_STACK_SIZE`].
    ///
    /// ```
    /// let s = tempi::ThreadSpec::new("deep").stack_size(1 << 20);
    /// # let _ = s;
    /// ```
    pub fn stack_size(mut self, bytes: usize) -> ThreadSpec {
        self.stack_size = Some(bytes);
        self
    }

    /// Run the thread on an OS thread of its own, which its dispatcher stops wherever it is
    /// when something more urgent is due on its CPU (a release, a budget running out, the
    /// run's end), so a body that computes for long without runtime calls is still
    /// preempted. In virtual time this changes nothing: the thread runs as any other.
    ///
    /// Everything else is as for any thread (scheduling, accounting, budgets, every `Ctx`
    /// call), except: its locks are never taken on the fast path, it cannot run a restartable
    /// section (`Mutex::critical` returns `LockError::NotForOsBacked`), and, stopped while it
    /// holds an OS-level lock (the C allocator's, a `std::sync::Mutex`), it holds that lock
    /// until it runs again: see "OS-backed threads" in the architecture guide.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let spec = tempi::ThreadSpec::new("loop").os_backed().periodic(Duration::from_millis(10)).max_jobs(1);
    /// rt.spawn(spec, |cx| cx.work(Duration::from_millis(1))).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn os_backed(mut self) -> ThreadSpec {
        self.os_backed = true;
        self
    }

    /// FREE JAZZ's `tame_prio_inv` for a process, from the thread's start (it can change it
    /// at run time with [`crate::Ctx::tame_prio_inv`]): its blocking at a busy handler or a
    /// semaphore is reported to a scheduler that hears of CALL and PROCURE only for such
    /// threads ([`crate::policy::sched::Events::TAMED_ONLY`]), and every handler it invokes
    /// runs with preemption off. Off by default.
    ///
    /// ```
    /// let spec = tempi::ThreadSpec::new("careful").tame_prio_inv(true);
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(spec, |cx| assert!(cx.tame_prio_inv(false))).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn tame_prio_inv(mut self, on: bool) -> ThreadSpec {
        self.tame_prio_inv = on;
        self
    }

    /// Properties of the scheduling policy's own for this thread (Boost.Fiber's scheduler
    /// properties): a value of a type the policy defines, such as a rank, a weight or a
    /// class, handed to the policy once at spawn through
    /// [`Scheduler::on_properties`](crate::policy::sched::Scheduler::on_properties), which
    /// reads it by its type. A policy that needs a per-thread attribute defines one, and no
    /// kernel file changes; one that knows nothing of the type ignores it. Replaces what an
    /// earlier call set. Boxed once here, when the spec is built, never on a dispatch path.
    ///
    /// ```
    /// /// The share of the CPU a proportional-share policy gives a thread.
    /// struct Tickets(u32);
    /// let spec = tempi::ThreadSpec::new("worker").sched_properties(Tickets(40));
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(spec, |_| {}).unwrap(); // fixed priority ignores them
    /// rt.run().unwrap();
    /// ```
    pub fn sched_properties<P: std::any::Any + Send>(mut self, properties: P) -> ThreadSpec {
        self.sched_properties = Some(Box::new(properties));
        self
    }

    /// Stop the thread after this many jobs (periodic and sporadic threads otherwise run until
    /// the runtime stops). A release of a sporadic thread asked after its last job was
    /// released makes no job: it is counted in [`crate::ThreadStats::beyond_limit`] and
    /// traced ([`crate::trace::TraceKind::ReleaseBeyondLimit`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// let s = tempi::ThreadSpec::new("p").periodic(Duration::from_millis(1)).max_jobs(3);
    /// # let _ = s;
    /// ```
    pub fn max_jobs(mut self, jobs: u32) -> ThreadSpec {
        self.max_jobs = Some(jobs);
        self
    }

    /// How many releases of a sporadic thread may wait while one of its jobs runs (default 8,
    /// at most [`ThreadSpec::MAX_RELEASE_QUEUE`]; more is [`crate::Error::InvalidSpec`] at spawn).
    /// The queue is sized when the thread is created; a release that finds it full is dropped,
    /// counted in [`crate::ThreadStats::overflows`] and traced as
    /// [`crate::trace::TraceKind::ReleaseOverflow`]. Periodic threads need no queue: their
    /// waiting releases are counted, and each still becomes a job with its own deadline.
    ///
    /// ```
    /// use std::time::Duration;
    /// let s = tempi::ThreadSpec::new("s").sporadic(Duration::from_millis(1)).release_queue(32);
    /// # let _ = s;
    /// ```
    pub fn release_queue(mut self, capacity: usize) -> ThreadSpec {
        self.release_queue = capacity;
        self
    }

    /// How many messages its new queue holds, and each of its save queues (default 8, at most
    /// [`ThreadSpec::MAX_MAILBOX`]; more is [`crate::Error::InvalidSpec`] at spawn). The
    /// queues are sized when the thread is created; a send that finds the new queue full fails
    /// with [`crate::message::MsgError::QueueFull`] and is traced.
    ///
    /// ```
    /// let s = tempi::ThreadSpec::new("server").mailbox(64);
    /// # let _ = s;
    /// ```
    pub fn mailbox(mut self, capacity: usize) -> ThreadSpec {
        self.mailbox = capacity;
        self
    }

    /// How many save queues it has (default 1), numbered from 0 (see
    /// [`crate::Ctx::save`]): at most [`ThreadSpec::MAX_SAVE_QUEUES`], and with
    /// `save_queues × mailbox` at most [`ThreadSpec::MAX_SAVED`]; more is
    /// [`crate::Error::InvalidSpec`] at spawn.
    ///
    /// ```
    /// let s = tempi::ThreadSpec::new("server").save_queues(3);
    /// # let _ = s;
    /// ```
    pub fn save_queues(mut self, n: usize) -> ThreadSpec {
        self.save_queues = n;
        self
    }

    /// The order of its new queue: `policy` ranks each incoming message
    /// ([`crate::policy::queue::QueuePolicy::rank_message`]) and may refuse it, which fails the
    /// send with [`crate::message::MsgError::Refused`]. Without one, messages are read in the
    /// order they arrive.
    ///
    /// ```
    /// let s = tempi::ThreadSpec::new("server").message_queue(tempi::policy::queue::ByDeadline);
    /// # let _ = s;
    /// ```
    pub fn message_queue(mut self, policy: impl crate::policy::queue::QueuePolicy + 'static) -> ThreadSpec {
        self.message_queue = Some(Box::new(policy));
        self
    }

    /// The thread's name.
    ///
    /// ```
    /// assert_eq!(tempi::ThreadSpec::new("n").name(), "n");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }
    /// How jobs are released.
    ///
    /// ```
    /// assert_eq!(tempi::ThreadSpec::new("n").timing(), tempi::Timing::OneShot);
    /// ```
    pub fn timing(&self) -> Timing {
        self.timing
    }
    /// The relative deadline: the one set, else the period of a periodic thread, else none.
    ///
    /// ```
    /// assert_eq!(tempi::ThreadSpec::new("n").relative_deadline(), None);
    /// ```
    pub fn relative_deadline(&self) -> Option<Duration> {
        self.deadline.or(match self.timing {
            Timing::Periodic { period, .. } => Some(period),
            _ => None,
        })
    }
    /// The period of a periodic thread.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(tempi::ThreadSpec::new("n").periodic(Duration::from_millis(2)).period(), Some(Duration::from_millis(2)));
    /// ```
    pub fn period(&self) -> Option<Duration> {
        match self.timing {
            Timing::Periodic { period, .. } => Some(period),
            _ => None,
        }
    }
    /// Worst-case execution time.
    ///
    /// ```
    /// assert_eq!(tempi::ThreadSpec::new("n").wcet_value(), std::time::Duration::ZERO);
    /// ```
    pub fn wcet_value(&self) -> Duration {
        self.wcet
    }
    /// Hard or soft ([`ThreadSpec::criticality`]).
    ///
    /// ```
    /// assert_eq!(tempi::ThreadSpec::new("n").criticality_value(), tempi::Criticality::Hard);
    /// ```
    pub fn criticality_value(&self) -> Criticality {
        self.criticality
    }
    /// Base priority.
    ///
    /// ```
    /// assert_eq!(tempi::ThreadSpec::new("n").priority_value(), 0);
    /// ```
    pub fn priority_value(&self) -> i32 {
        self.priority
    }
    /// The CPU the thread is pinned to.
    ///
    /// ```
    /// assert_eq!(tempi::ThreadSpec::new("n").cpu_index(), 0);
    /// ```
    pub fn cpu_index(&self) -> usize {
        self.cpu
    }

    pub(crate) fn validate(&self) -> Result<(), crate::Error> {
        use crate::Error::InvalidSpec;
        let bad = |what: &str| Err(InvalidSpec { thread: self.name.clone(), reason: what.to_string() });
        match self.timing {
            Timing::Periodic { period, .. } if period.is_zero() => return bad("period must be positive"),
            _ => {}
        }
        if self.deadline == Some(Duration::ZERO) {
            return bad("relative deadline must be positive");
        }
        if self.max_jobs == Some(0) {
            return bad("max_jobs must be at least 1");
        }
        let sizes = [
            ("mailbox", self.mailbox, ThreadSpec::MAX_MAILBOX, "MAX_MAILBOX"),
            ("release_queue", self.release_queue, ThreadSpec::MAX_RELEASE_QUEUE, "MAX_RELEASE_QUEUE"),
            ("save_queues", self.save_queues, ThreadSpec::MAX_SAVE_QUEUES, "MAX_SAVE_QUEUES"),
        ];
        for (field, value, max, name) in sizes {
            if value > max {
                return Err(InvalidSpec {
                    thread: self.name.clone(),
                    reason: format!("{} (ThreadSpec::{name})", crate::sizes::too_large(field, value, max)),
                });
            }
        }
        if self.save_queues * self.mailbox > ThreadSpec::MAX_SAVED {
            return Err(InvalidSpec {
                thread: self.name.clone(),
                reason: format!(
                    "save_queues × mailbox = {} × {} is above its limit of {} (ThreadSpec::MAX_SAVED)",
                    self.save_queues,
                    self.mailbox,
                    ThreadSpec::MAX_SAVED
                ),
            });
        }
        if let Some(size) = self.stack_size.filter(|&s| s < MIN_STACK_SIZE) {
            return Err(InvalidSpec {
                thread: self.name.clone(),
                reason: format!(
                    "a stack of {size} bytes is too small: the runtime needs at least {MIN_STACK_SIZE} (MIN_STACK_SIZE) to unwind and report a panic on it"
                ),
            });
        }
        Ok(())
    }
}

/// Fixed priorities by rate-monotonic order: the shorter the period, the higher the priority.
/// Threads without a period get the lowest priority. Ties keep their order (earlier = higher).
/// Priorities assigned are `n-1` down to `0`.
///
/// ```
/// use std::time::Duration;
/// use tempi::{assign_rate_monotonic, ThreadSpec};
/// let ms = Duration::from_millis;
/// let mut set = vec![
///     ThreadSpec::new("slow").periodic(ms(30)),
///     ThreadSpec::new("fast").periodic(ms(10)),
/// ];
/// assign_rate_monotonic(&mut set);
/// assert!(set[1].priority_value() > set[0].priority_value());
/// ```
pub fn assign_rate_monotonic(specs: &mut [ThreadSpec]) {
    assign_by_key(specs, |s| s.period());
}

/// Fixed priorities by deadline-monotonic order: the shorter the relative deadline, the higher
/// the priority. Threads without a deadline get the lowest priority.
///
/// ```
/// use std::time::Duration;
/// use tempi::{assign_deadline_monotonic, ThreadSpec};
/// let ms = Duration::from_millis;
/// let mut set = vec![
///     ThreadSpec::new("a").periodic(ms(10)).deadline(ms(9)),
///     ThreadSpec::new("b").periodic(ms(20)).deadline(ms(5)),
/// ];
/// assign_deadline_monotonic(&mut set);
/// assert!(set[1].priority_value() > set[0].priority_value());
/// ```
pub fn assign_deadline_monotonic(specs: &mut [ThreadSpec]) {
    assign_by_key(specs, |s| s.relative_deadline());
}

fn assign_by_key(specs: &mut [ThreadSpec], key: impl Fn(&ThreadSpec) -> Option<Duration>) {
    let mut order: Vec<usize> = (0..specs.len()).collect();
    // None sorts last: it is the least urgent.
    order.sort_by_key(|&i| (key(&specs[i]).is_none(), key(&specs[i]), i));
    let n = specs.len() as i32;
    for (rank, i) in order.into_iter().enumerate() {
        specs[i].priority = n - 1 - rank as i32;
    }
}
