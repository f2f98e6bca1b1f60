//! The error type of every fallible runtime call.

use std::fmt;

use crate::plain::SetId;
use crate::plain::ThreadId;

/// Why a runtime call failed. Every variant says what was wrong and with what.
///
/// ```
/// use tempi::{Error, Runtime, ThreadSpec};
/// let mut rt = Runtime::simulated(1);
/// let err = rt.spawn(ThreadSpec::new("x").cpu(3), |_| {}).unwrap_err();
/// assert_eq!(err, Error::NoSuchCpu { cpu: 3, cpus: 1 });
/// assert!(err.to_string().contains("CPU 3"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A thread spec is inconsistent.
    InvalidSpec {
        /// The thread's name.
        thread: String,
        /// What is wrong.
        reason: String,
    },
    /// The spec names a CPU the runtime does not have.
    NoSuchCpu {
        /// The CPU asked for.
        cpu: usize,
        /// How many the runtime has.
        cpus: usize,
    },
    /// Every thread slot of the CPU is in use.
    TooManyThreads {
        /// The configured maximum.
        max: usize,
    },
    /// As many runtimes as thread ids have tags for (4 096) are alive: drop one first. (A
    /// process that has spawned some 2^43 threads over all its runtimes has used up the ids'
    /// generations too, and gets this error from then on.)
    ///
    /// ```
    /// let e = tempi::Error::TooManyRuntimes { max: 4096 };
    /// assert!(e.to_string().contains("4096 runtimes"));
    /// ```
    TooManyRuntimes {
        /// How many may be alive at once.
        max: usize,
    },
    /// No live or finished thread has this id.
    UnknownThread(ThreadId),
    /// The thread id was made by another runtime: ids are bound to their runtime (see
    /// [`ThreadId`]).
    ForeignThread(ThreadId),
    /// The set id was made by another runtime.
    ForeignSet(SetId),
    /// An object bound to one runtime (a [`crate::spring::Spring`]) was used by another
    /// runtime, or by a thread of another runtime.
    ///
    /// ```
    /// use tempi::policy::admit::planner::PlannerConfig;
    /// use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec};
    /// let mut a = tempi::Runtime::simulated(1);
    /// let spring = Spring::new(&mut a, SpringSpec::new(PlannerConfig::new(1, 0))).unwrap();
    /// let mut b = tempi::Runtime::simulated(1);
    /// let g = GroupSpec::new("g", tempi::Time::ZERO, tempi::Time::MAX).thread(GroupThread::new("t"));
    /// assert_eq!(spring.add_group(&mut b, g), Err(tempi::Error::ForeignRuntime));
    /// ```
    ForeignRuntime,
    /// A thread tried to join itself.
    JoinSelf,
    /// Jobs can only be released on demand for sporadic threads.
    NotSporadic(ThreadId),
    /// The operation would cross from one real-time dispatcher to another, which this
    /// version does not support for it: thread sets and synchronisation objects stay on
    /// their CPU in real time (virtual time has no such limit). Releasing, killing,
    /// re-prioritising, spawning and joining threads of another CPU do cross.
    CrossCpu {
        /// The CPU the caller runs on.
        from: usize,
        /// The CPU of the target.
        to: usize,
    },
    /// The request queue of the target CPU is full: the request was not made (see
    /// [`crate::Config::cross_cpu_queue`]).
    QueueFull {
        /// The CPU whose queue is full.
        cpu: usize,
        /// Its capacity.
        capacity: usize,
    },
    /// No set has this id (or it was destroyed).
    UnknownSet(SetId),
    /// Every set slot of the CPU is in use.
    TooManySets {
        /// The configured maximum.
        max: usize,
    },
    /// A thread belongs to at most one set.
    AlreadyInSet {
        /// The thread.
        thread: ThreadId,
        /// The set it already belongs to.
        set: SetId,
    },
    /// The thread is not a member of the set.
    NotInSet {
        /// The thread.
        thread: ThreadId,
        /// The set.
        set: SetId,
    },
    /// The set has no budget.
    NoBudget(SetId),
    /// The configuration is unusable.
    InvalidConfig(String),
    /// A stack could not be mapped.
    Stack(String),
    /// The operating system refused something the runtime needs.
    Os(String),
    /// The calling thread is unwinding (a panic, an aborted job, a kill, the runtime
    /// stopping): a runtime call made by one of its destructors cannot create anything or
    /// wait.
    ///
    /// ```
    /// use tempi::{Error, Runtime, ThreadSpec};
    /// struct Spawner<'a>(&'a tempi::Ctx<'a>);
    /// impl Drop for Spawner<'_> {
    ///     fn drop(&mut self) {
    ///         assert_eq!(self.0.spawn(ThreadSpec::new("late"), |_| {}).err(), Some(Error::Unwinding));
    ///     }
    /// }
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("t"), |cx| {
    ///     let _s = Spawner(cx);
    ///     panic!("failed");
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    Unwinding,
    /// Code the kernel called panicked — a timing-event, execution-time-timer, miss or budget
    /// handler, a budget action, the scheduler, a lock or queue policy, the progress hook — or a
    /// real-time dispatcher failed; `source` says which kind, `what` which one. The run was
    /// stopped there: every thread still alive was unwound (its destructors ran) and the
    /// run's results are lost. A thread body's panic is not one of these: it ends only its
    /// thread, with [`crate::ThreadOutcome::Panicked`].
    ///
    /// ```
    /// use tempi::{Error, Runtime, ThreadSpec, TimerSpec, Time};
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("t"), |cx| cx.work(std::time::Duration::from_millis(2))).unwrap();
    /// rt.add_timer(TimerSpec::at(Time::from_millis(1)), |_| panic!("bad handler")).unwrap();
    /// let err = rt.run().unwrap_err();
    /// assert!(matches!(err, Error::Panicked { ref message, .. } if message == "bad handler"));
    /// assert!(matches!(err, Error::Panicked { source: tempi::PanicSource::Handler, .. }));
    /// ```
    Panicked {
        /// Which kind of code panicked.
        source: PanicSource,
        /// What panicked, in words, e.g. "the handler of timing event 0", "the lock policy
        /// `pcp` of lock `door`", "the queue policy `deadline` of semaphore `buffers`".
        what: String,
        /// The panic's message.
        message: String,
    },
    /// A scheduling policy handed back a thread that is not ready on the CPU it picks for
    /// (not queued there, ended, or of another CPU). The run stops at that instant; its
    /// threads are unwound as at any end of a run.
    BadPick {
        /// The policy's name ([`crate::policy::sched::Scheduler::name`]).
        scheduler: String,
        /// The CPU it picked for.
        cpu: usize,
        /// The thread it picked.
        thread: ThreadId,
    },
    /// Every timer slot of a CPU is in use. The timer table is sized at start-up (four
    /// timers per thread slot, one per timing event, eight per thread set, two more) and
    /// never grows; the run stops at that instant.
    TooManyTimers {
        /// The timer slots of the CPU's kernel.
        max: usize,
    },
    /// A thread holding a global lock (protocol `msrp`) made a call that waits: a sleep or
    /// a join (lock, condition and semaphore waits are refused with
    /// [`crate::sync::LockError::GlobalHeld`] instead). A global section runs without
    /// preemption and its length bounds the spinning of every other CPU, so a sleep inside
    /// it ends the run at that instant; a join is refused with this error.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tempi::{Error, Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(2);
    /// let m = Arc::new(rt.create_mutex((), tempi::sync::LockSpec::new("g").protocol("msrp")).unwrap());
    /// rt.spawn(ThreadSpec::new("t"), move |cx| {
    ///     let _g = m.lock(cx).unwrap();
    ///     cx.sleep(std::time::Duration::from_millis(1));
    /// }).unwrap();
    /// assert!(matches!(rt.run(), Err(Error::GlobalLockHeld { call: "sleep", .. })));
    /// ```
    GlobalLockHeld {
        /// The thread.
        thread: ThreadId,
        /// The call it made.
        call: &'static str,
    },
    /// A global scheduling policy ([`crate::policy::sched::Scheduler::global`]) was asked
    /// for something it does not support: a run in real time, or a lock, condition variable
    /// or semaphore. Real time is refused when a thread is spawned and when the run starts;
    /// a synchronisation object when the run starts (one created before it) or when a thread
    /// creates it.
    ///
    /// ```
    /// use tempi::policy::sched::GlobalEdf;
    /// use tempi::{Error, GlobalRefusal, Runtime, ThreadSpec};
    /// let mut rt = Runtime::real_time(2);
    /// rt.set_scheduler(|| Box::new(GlobalEdf::new()));
    /// let err = rt.spawn(ThreadSpec::new("t"), |_| {}).unwrap_err();
    /// assert_eq!(err, Error::Global { scheduler: "global-edf".into(), reason: GlobalRefusal::RealTime });
    /// ```
    Global {
        /// The policy's name.
        scheduler: String,
        /// What it was asked for.
        reason: GlobalRefusal,
    },
}

/// The kind of code whose panic ended a run ([`Error::Panicked`]).
///
/// ```
/// assert_eq!(tempi::PanicSource::LockPolicy.name(), "lock policy");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PanicSource {
    /// The scheduling policy ([`crate::policy::sched::Scheduler`]) or its factory. Also
    /// named when the kernel's own code fails outside any call below, which should not
    /// happen.
    Scheduler,
    /// A lock policy ([`crate::policy::lock::LockPolicy`]), when its lock was created or
    /// used.
    LockPolicy,
    /// A queue policy ([`crate::policy::queue::QueuePolicy`]): a semaphore's, ranking a
    /// waiter (of the semaphore's CPU or of another), or the one ordering a thread's new
    /// queue of messages ([`crate::ThreadSpec::message_queue`]), ranking a message (sent
    /// from any CPU).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tempi::policy::{queue::QueuePolicy, sched::SchedInfo};
    /// use tempi::{Error, PanicSource, Runtime, ThreadSpec};
    /// struct Broken;
    /// impl QueuePolicy for Broken {
    ///     fn name(&self) -> &str { "broken" }
    ///     fn rank(&self, _: &SchedInfo) -> i64 { panic!("no rank") }
    /// }
    /// let mut rt = Runtime::simulated(1);
    /// let s = Arc::new(rt.create_semaphore(tempi::sync::SemSpec::new("s", 0).queue(Broken)).unwrap());
    /// rt.spawn(ThreadSpec::new("t"), move |cx| { let _ = s.procure(cx); }).unwrap();
    /// let err = rt.run().unwrap_err();
    /// assert!(matches!(err, Error::Panicked { source: PanicSource::QueuePolicy, ref what, .. }
    ///     if what == "the queue policy `broken` of semaphore `s`"));
    /// assert_eq!(PanicSource::QueuePolicy.name(), "queue policy");
    /// ```
    QueuePolicy,
    /// A handler the application gave the runtime: a timing event's, an execution-time
    /// timer's, a miss handler, a budget handler or action, or, in real time, a message
    /// [`crate::message::Handler`] its CPU's dispatcher runs for a thread of another CPU (on
    /// a thread's stack, a handler's panic is that thread's, and poisons the handler).
    Handler,
    /// The progress hook.
    Hook,
    /// A real-time dispatcher, outside any of the above.
    Dispatcher,
}

impl PanicSource {
    /// A short name, as in error messages.
    pub fn name(self) -> &'static str {
        match self {
            PanicSource::Scheduler => "scheduler",
            PanicSource::LockPolicy => "lock policy",
            PanicSource::QueuePolicy => "queue policy",
            PanicSource::Handler => "handler",
            PanicSource::Hook => "hook",
            PanicSource::Dispatcher => "dispatcher",
        }
    }
}

/// What a global scheduling policy refuses ([`Error::Global`]).
///
/// ```
/// assert_ne!(tempi::GlobalRefusal::RealTime, tempi::GlobalRefusal::Synchronisation);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlobalRefusal {
    /// A run in real time: there a started thread never leaves its CPU's OS thread, so it
    /// cannot migrate.
    RealTime,
    /// A lock, condition variable or semaphore: their protocols (ceilings, inheritance, the
    /// hand-off of a CPU to a waiter) are defined for one CPU's scheduler, and no
    /// multiprocessor protocol is implemented for global scheduling.
    Synchronisation,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidSpec { thread, reason } => write!(f, "thread `{thread}`: {reason}"),
            Error::NoSuchCpu { cpu, cpus } => {
                write!(f, "CPU {cpu} does not exist: the runtime has {cpus} CPU(s), numbered from 0")
            }
            Error::TooManyThreads { max } => write!(f, "no free thread slot: at most {max} threads per CPU"),
            Error::TooManyRuntimes { max } => {
                write!(f, "no thread-id tag is free: at most {max} runtimes are alive at once in a process")
            }
            Error::UnknownThread(t) => write!(f, "no thread {t:?}"),
            Error::ForeignThread(t) => write!(f, "thread id {t:?} belongs to another runtime"),
            Error::ForeignSet(s) => write!(f, "thread set id {s:?} belongs to another runtime"),
            Error::ForeignRuntime => write!(f, "the object belongs to another runtime"),
            Error::JoinSelf => write!(f, "a thread cannot join itself"),
            Error::NotSporadic(t) => write!(f, "thread {t:?} is not sporadic: its jobs cannot be released on demand"),
            Error::CrossCpu { from, to } => write!(
                f,
                "operation from CPU {from} on a thread of CPU {to}: this operation does not cross CPUs in real time"
            ),
            Error::QueueFull { cpu, capacity } => {
                write!(f, "the request queue of CPU {cpu} is full ({capacity} requests): the request was not made")
            }
            Error::UnknownSet(s) => write!(f, "no thread set {s:?}"),
            Error::TooManySets { max } => write!(f, "no free thread-set slot: at most {max} sets per CPU"),
            Error::AlreadyInSet { thread, set } => {
                write!(f, "thread {thread:?} already belongs to set {set:?}: a thread belongs to at most one set")
            }
            Error::NotInSet { thread, set } => write!(f, "thread {thread:?} is not a member of set {set:?}"),
            Error::NoBudget(s) => write!(f, "thread set {s:?} has no budget"),
            Error::InvalidConfig(why) => write!(f, "invalid configuration: {why}"),
            Error::Stack(why) => write!(f, "cannot allocate a thread stack: {why}"),
            Error::Os(why) => write!(f, "operating system: {why}"),
            Error::Unwinding => {
                write!(f, "the thread is unwinding: a runtime call from a destructor cannot create anything or wait")
            }
            Error::Panicked { what, message, .. } => {
                write!(f, "{what} panicked: {message}; the run was stopped and its threads unwound")
            }
            Error::BadPick { scheduler, cpu, thread } => write!(
                f,
                "scheduler `{scheduler}` picked {thread:?} on CPU {cpu}, which is not a ready thread of that CPU"
            ),
            Error::Global { scheduler, reason: GlobalRefusal::RealTime } => write!(
                f,
                "scheduler `{scheduler}` is global (threads migrate between CPUs): it runs in virtual time only"
            ),
            Error::Global { scheduler, reason: GlobalRefusal::Synchronisation } => write!(
                f,
                "scheduler `{scheduler}` is global: locks, condition variables and semaphores are not supported under it"
            ),
            Error::GlobalLockHeld { thread, call } => write!(
                f,
                "{thread:?} called `{call}` while holding a global (msrp) lock, inside which a thread may not wait"
            ),
            Error::TooManyTimers { max } => {
                write!(f, "no free timer slot: at most {max} pending timers (sized from Config::max_threads, max_timers and max_sets)")
            }
        }
    }
}

impl std::error::Error for Error {}
