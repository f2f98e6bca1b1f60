//! The thread/kernel protocol: the [`Request`] a thread suspends with, the [`Reply`] it is
//! resumed with (inside a [`Response`], with the time and its current job), the operations on
//! sets, clocks, budgets and synchronisation objects a thread asks for ([`ControlOp`]), the
//! unwind payloads that end a job, a thread or a critical section, and how a reply becomes an
//! unwind.
//!
//! Must not: touch kernel state or a thread's `Ctx`: both sides build on these types.

use std::any::Any;
use std::panic::resume_unwind;
use std::time::Duration;

use crate::error::Error;
use crate::objects::{CondId, LockError, LockId, LockSpec, SemId, SemSpec};
use crate::policy::sched::Urgency;
use crate::sets::{Budget, SetId};
use crate::thread::{ThreadId, ThreadOutcome, ThreadSpec};
use crate::time::Time;

use super::ctx::Ctx;

pub(crate) type Body = Box<dyn FnMut(&Ctx<'_>) + Send>;

/// What a thread asks of its kernel.
pub(crate) enum Request {
    Work(u64),
    Yield,
    SleepUntil(Time),
    Spawn(Box<(ThreadSpec, Body)>),
    Join(ThreadId),
    Release(ThreadId),
    SetPriority(i32),
    Control(Box<ControlOp>),
    Lock {
        lock: LockId,
        deadline: Option<Time>,
        try_only: bool,
        restartable: bool,
    },
    Unlock {
        lock: LockId,
        poison: bool,
    },
    ClearPoison(LockId),
    /// Make the kernel manage a fast-path ownership (before a condition wait).
    Adopt(LockId),
    CondWait {
        cond: CondId,
        lock: LockId,
        deadline: Option<Time>,
    },
    CondSignal {
        cond: CondId,
        all: bool,
    },
    Procure {
        sem: SemId,
        deadline: Option<Time>,
        try_only: bool,
    },
    Vacate(SemId),
    Urgency,
    /// The current job ended; `aborted` if it was abandoned.
    JobDone {
        aborted: bool,
    },
}

/// The kernel's answer.
pub(crate) enum Reply {
    /// Go on (or: start the next job, after `JobDone`).
    Go,
    /// Abandon the current job.
    Abort,
    /// The runtime is stopping: unwind and end.
    Stop,
    /// The thread is killed: unwind and end as `Killed`.
    Kill,
    /// Abandon the restartable critical section (RCS): unwind to `Mutex::critical`.
    Restart,
    Control(Result<ControlValue, Box<Error>>),
    Locked(Result<(), LockError>),
    /// A unit of the semaphore of kernel-local index `.0` was granted (a refusal is a
    /// `Locked(Err)`). The index says where the unit goes back if the thread is unwound
    /// before it sees this reply (an RCS restart, see `settle_before_resume`); it also tells
    /// the grant apart from a lock's `Locked(Ok(()))`.
    Procured(u32),
    /// The lock was released while waiting: ask again.
    LockRetry,
    /// Back from a condition-variable wait; `true` if it timed out.
    CondWoken(bool),
    Urgency(Urgency),
    // Errors are boxed so the reply, copied at every resume, stays small.
    Spawned(Result<ThreadId, Box<Error>>),
    Joined(Result<ThreadOutcome, Box<Error>>),
    Released(Result<(), Box<Error>>),
}

impl Reply {
    /// Drop a reply the caller has no use for. `Go`, the answer to nearly every such call, owns
    /// nothing, but the compiler cannot see that through the enum's general drop glue: skipping
    /// it saves an out-of-line call per `work`, `yield` and job end.
    #[inline(always)]
    pub(crate) fn discard(self) {
        if let Reply::Go = self {
            std::mem::forget(self);
        }
    }
}

pub(crate) struct Response {
    pub(crate) now: Time,
    pub(crate) job: JobInfo,
    pub(crate) reply: Reply,
}

/// The job a thread is executing.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Runtime, ThreadSpec, Time};
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("p").periodic(Duration::from_millis(5)).max_jobs(2), |cx| {
///     let job = cx.job();
///     assert_eq!(job.release, Time::from_millis(5 * job.number as u64));
///     assert_eq!(job.deadline, Some(job.release + Duration::from_millis(5)));
/// }).unwrap();
/// rt.run().unwrap();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct JobInfo {
    /// Job number, from 0.
    pub number: u32,
    /// Absolute release.
    pub release: Time,
    /// Absolute deadline, if any.
    pub deadline: Option<Time>,
}

/// Payload of the unwind that abandons a job.
pub(crate) struct JobAborted;
/// Payload of the unwind that ends a thread when the runtime stops.
pub(crate) struct Shutdown;
/// Payload of the unwind that ends a killed thread.
pub(crate) struct Killed;
/// Payload of the unwind that abandons a restartable critical section.
pub(crate) struct RestartSection;

/// Operations on thread sets, execution-time clocks, budgets and synchronisation objects:
/// asked for by a thread, or registered before the run and replayed when the kernel is built.
pub(crate) enum ControlOp {
    CreateSet(String),
    DestroySet(SetId),
    EmptySet(SetId),
    AddToSet(SetId, ThreadId),
    RemoveFromSet(SetId, ThreadId),
    SetContains(SetId, ThreadId),
    SetMembers(SetId),
    SetOf(ThreadId),
    ThreadClock(ThreadId),
    SetThreadClock(ThreadId, Duration),
    GroupClock(SetId),
    SetGroupClock(SetId, Duration),
    ThreadTimer(ThreadId, Duration, super::EventHandler),
    SetTimer(SetId, Duration, super::EventHandler),
    SetBudget(SetId, Budget),
    BudgetLeft(SetId),
    Replenish(SetId, Duration),
    AddBudget(SetId, i64),
    CreateLock(LockSpec),
    CreateCond(usize),
    CreateSem(SemSpec),
}

pub(crate) enum ControlValue {
    Unit,
    Set(SetId),
    Bool(bool),
    Members(Vec<ThreadId>),
    SetOf(Option<SetId>),
    Time(Duration),
    Budget(Duration, bool),
    Lock(LockId),
    Cond(CondId),
    Sem(SemId),
}

/// A reply the protocol rules out; dropped out of line so the expected replies need no drop.
#[cold]
pub(super) fn unexpected_reply(reply: Reply, what: &str) -> ! {
    drop(reply);
    unreachable!("{what}")
}

/// The replies that unwind the thread, without their payloads.
#[derive(Clone, Copy)]
pub(super) enum Unwind {
    Abort,
    Stop,
    Kill,
    Restart,
}

impl Unwind {
    pub(super) fn of(reply: &Reply) -> Option<Unwind> {
        match reply {
            Reply::Abort => Some(Unwind::Abort),
            Reply::Stop => Some(Unwind::Stop),
            Reply::Kill => Some(Unwind::Kill),
            Reply::Restart => Some(Unwind::Restart),
            _ => None,
        }
    }

    pub(super) fn reply(self) -> Reply {
        match self {
            Unwind::Abort => Reply::Abort,
            Unwind::Stop => Reply::Stop,
            Unwind::Kill => Reply::Kill,
            Unwind::Restart => Reply::Restart,
        }
    }
}

/// Unwind the thread's stack for a reply that ends its job, its critical section or the
/// thread itself.
#[cold]
pub(super) fn unwind_for(reply: Reply) -> ! {
    match reply {
        Reply::Abort => resume_unwind(Box::new(JobAborted)),
        Reply::Stop => resume_unwind(Box::new(Shutdown)),
        Reply::Kill => resume_unwind(Box::new(Killed)),
        Reply::Restart => resume_unwind(Box::new(RestartSection)),
        other => unexpected_reply(other, "only abort, stop, kill and restart unwind"),
    }
}

/// Whether an unwind payload is the restart of a critical section.
pub(crate) fn is_restart(payload: &(dyn Any + Send)) -> bool {
    payload.is::<RestartSection>()
}

/// Whether an unwind payload is a genuine panic (not one of the runtime's own unwinds).
pub(crate) fn is_panic(payload: &(dyn Any + Send)) -> bool {
    !(payload.is::<JobAborted>()
        || payload.is::<Shutdown>()
        || payload.is::<Killed>()
        || payload.is::<RestartSection>())
}
