//! The thread/kernel protocol on the wire: the [`Request`] a thread suspends with, the
//! [`Response`] it is resumed with, the [`Interrupt`]s that unwind it, the operations on sets,
//! clocks, budgets and synchronisation objects ([`ControlOp`]), and the unwind payloads.
//!
//! # The typed protocol
//!
//! A thread's coroutine carries one message type each way, but every runtime call is typed
//! end to end:
//!
//! - **Calls.** Each kind of request is a type implementing [`Call`](crate::kernel::thread_side::calls::Call) (in
//!   `calls.rs`) that names its `Answer`: `Lock` answers a [`LockAnswer`], `Procure` a
//!   semaphore grant or refusal, `Join` the joined thread's outcome, a [`Control`] operation
//!   the value its constructor fixed (a `SetId` for `create_set`, a `Duration` for a clock).
//!   The thread side sends a call and gets `Result<Call::Answer, Interrupt>`; the interrupts
//!   become unwinds in one place (`Ctx::invoke`). Decoding the wire [`Answer`] into the call's
//!   answer is the call's own partial function, checked once for every call in
//!   `Ctx::exchange`.
//! - **Answers on the kernel side.** The kernel answers a request with the type of that
//!   request's family: `lock_request` yields a [`LockAnswer`], `procure` a [`SemAnswer`],
//!   `cond_wait` a [`CondAnswer`]; a thread blocked on a lock, a condition variable, a
//!   semaphore or a join is answered later by the function of that wait, which takes that
//!   family's type only (`Kernel::answer_lock_waiter` and its siblings, and [`Wait`]'s
//!   timeout answer): a lock waiter cannot be woken with a semaphore unit.
//! - **Interrupts** (abort, stop, kill, restart) never travel as answers: the kernel keeps a
//!   pending one in its own slot (`Tcb::interrupt`), apart from the answer, and
//!   [`Interrupt::max`] decides which of two wins. A pending interrupt is delivered only with
//!   a reply that may unwind: the answer to an unlock (which comes back into a destructor)
//!   never carries one, and the interrupt waits in its slot for the next call instead of
//!   being lost.
//! - **Ownership.** [`Op`] requests and [`Value`] answers own nothing and are `Copy`: the
//!   hot paths (`work`, lock, unlock, a job's end) take them apart with no drop glue to run.
//!   The requests and answers that own heap values (a spawned thread's body, a control
//!   operation, an error, a joined thread's outcome) sit behind one variant each, so dropping
//!   a message costs one test of its tag.
//!
//! [`Wait`]: crate::kernel::threads::tcb::Wait
//!
//! Must not: touch kernel state or a thread's `Ctx`: both sides build on these types.

use std::time::Duration;

use crate::error::Error;
use crate::objects::{LockError, LockSpec, SemSpec};
use crate::plain::SetId;
use crate::plain::ThreadId;
use crate::plain::{CondId, LockId, SemId};
use crate::policy::sched::Urgency;
use crate::sets::Budget;
use crate::thread::{ThreadOutcome, ThreadSpec};
use crate::time::Time;

use crate::kernel::thread_side::ctx::Ctx;

pub(crate) type Body = Box<dyn FnMut(&Ctx<'_>) + Send>;

/// What a thread asks of its kernel.
pub(crate) enum Request {
    /// A request that owns nothing.
    Op(Op),
    /// A request that owns heap values; boxed, as before the split, so a `Request` stays
    /// small.
    Setup(Box<Setup>),
}

/// The operations a thread's jobs ask for — work, yield, sleep, join, lock and unlock, waits,
/// messages, the calls on sets and clocks made in every job — each carrying only ids and
/// numbers. Being `Copy`, they have no drop glue: taking one apart leaves nothing to drop,
/// which is why the kernel's short paths for `Work` and `Unlock` need no special care.
#[derive(Clone, Copy)]
pub(crate) enum Op {
    Work(u64),
    Yield,
    SleepUntil(Time),
    Join(ThreadId),
    Release(ThreadId),
    SetPriority(i32),
    /// Kill a thread (of this CPU or, in real time, another).
    Kill(ThreadId),
    /// Set a thread's priority (of this CPU or, in real time, another).
    SetPriorityOf(ThreadId, i32),
    /// A cooperative preemption point: the kernel does what is due, then resumes the thread
    /// if it is still the one to run.
    Checkpoint,
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
    /// Ask for global lock `0` (an index among the runtime's global locks): become
    /// non-preemptible and, in virtual time, take a ticket and spin until it is served.
    GlobalLock {
        global: u32,
        try_only: bool,
    },
    /// Release global lock `global` (virtual time: serve the next ticket; real time: the
    /// thread has served it) and become preemptible again. Real time: `acquired` and
    /// `released` are the instants of the thread's `lock` and `unlock` records, fixed by the
    /// thread before it served the ticket (`GlobalLock::stamp_release`); virtual time: zero.
    GlobalUnlock {
        global: u32,
        acquired: Time,
        released: Time,
    },
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
    /// Switch the thread's own preemption on or off; answered with the previous setting.
    Preemption(bool),
    /// The current job ended; `aborted` if it was abandoned.
    JobDone {
        aborted: bool,
    },
    /// A message call; the fields travel in the thread's mail cell (`messaging/messages.rs`).
    Msg(MsgOp),
    /// A set, clock or budget operation that owns nothing (see [`SetOp`]).
    Set(SetOp),
}

/// The message calls (see `messaging/messages.rs`).
#[derive(Clone, Copy)]
pub(crate) enum MsgOp {
    /// Send the message to `to`.
    Send {
        to: ThreadId,
    },
    /// Send the message to `to` and wait for the reply. (A variant of its own rather than a
    /// flag of `Send`: a byte-wide field would be written with a byte store and read back
    /// with a wider load, a stall on every call.)
    Call {
        to: ThreadId,
    },
    Reply,
    /// Reply with the message in the mail cell, then read the next message (waiting) in the
    /// same request; answered `Empty` when the read is still to be made (see `messaging/short_path.rs`).
    ReplyRead,
    /// Read the next message, waiting (until `deadline`, if any) when `wait`.
    Read {
        wait: bool,
        deadline: Option<Time>,
    },
    Save(u32),
    ReadSaved(u32),
    /// Send the message to `to` when the time is `at`; the handle comes back in the mail cell.
    SendAt {
        to: ThreadId,
        at: Time,
    },
    /// Cancel the timed message whose handle is in the mail cell; the message comes back there.
    CancelTimer,
    /// What the thread's timed messages met at their instants; the record comes back in the
    /// mail cell.
    TimedRefusals,
    /// Wait for a busy handler to answer the call queued with `token` (see `message/handler.rs`).
    /// The mail cell's message says which handler (`id`), the thread it runs on (`from`) and
    /// the call's constraint, for CALL.
    AwaitHandler {
        token: u32,
    },
    /// The thread left a handler for which it holds lent urgency (NICE).
    LeftHandler(crate::plain::HandlerId),
    /// PRIO SAVE for a message with this constraint; the id comes back in the mail cell.
    PrioSave(i64),
    /// PRIO RESTORE of this PRIO SAVE.
    PrioRestore(crate::policy::sched::InheritId),
    /// A handler answers `caller`'s queued call `token`: with the message in the mail cell, or
    /// `Unanswered`.
    AnswerCaller {
        caller: ThreadId,
        token: u32,
        answered: bool,
    },
    /// Invoke the handler in the mail cell, of another real-time CPU, with the message in the
    /// mail cell; `wait`: until it has run, queued or refused it (see `xcpu/handlers.rs`).
    RemoteHandler {
        wait: bool,
    },
    /// A handler answers `caller`, a thread of another real-time CPU waiting on `stamp`: with
    /// the message in the mail cell, or `Unanswered`.
    AnswerRemote {
        caller: ThreadId,
        stamp: u32,
        answered: bool,
    },
    /// A busy handler's full queue refused the thread's message (in the mail cell): traced and
    /// counted, its payload released.
    HandlerRefused,
    /// The payload of the message in the mail cell goes back to its pool (a handler's message
    /// not delivered on).
    DropPayload,
    /// A poisoned handler did not serve the message in the mail cell: counted and traced, and
    /// the caller, if it still waits, answered `HandlerPanicked` (see `xcpu/handlers.rs`).
    HandlerUnserved(Option<crate::kernel::Caller>),
    /// The thread's unwind poisoned handlers: refuse what they held (made once the unwind is
    /// over, see `message/handler.rs`).
    SettleHandlers,
}

/// A message call's answer: done (what it yields is in the thread's mail cell), or why not.
pub(crate) type MsgAnswer = Result<(), crate::plain::MsgError>;

/// The requests that set something up and hand the kernel what it is made of (heap values):
/// spawning a thread with its spec and body, and the control operations that create or
/// configure sets, clocks, budgets and synchronisation objects.
pub(crate) enum Setup {
    Spawn(ThreadSpec, Body),
    Control(ControlOp),
}

/// Why a thread is unwound instead of answered. Ordered by precedence: when two are pending
/// the greater one is delivered ([`Interrupt::max`]). A kill ends the thread whatever else
/// is pending; an abort (the job or the thread is abandoned) comes before a stop, so the
/// job's end is reported, and its deferred releases made, before the thread ends; a restart
/// only concerns a critical section, which every other interrupt ends anyway.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Interrupt {
    /// Abandon the restartable critical section (RCS): unwind to `Mutex::critical`.
    Restart,
    /// The runtime is stopping, or the thread has no job left: unwind and end.
    Stop,
    /// Abandon the current job.
    Abort,
    /// The thread is killed: unwind and end as `Killed`.
    Kill,
}

/// A lock request's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LockAnswer {
    /// The thread owns the lock.
    Granted,
    /// The lock was released while the thread waited, or the cost of a refused attempt was
    /// paid: ask again.
    Retry,
    Refused(LockError),
    /// Real time, a global lock: the thread is non-preemptible now; it takes its ticket and
    /// spins for it itself.
    Spin,
}

/// A condition wait's answer: whether it timed out, or why it was refused.
pub(crate) type CondAnswer = Result<bool, LockError>;

/// A procure's answer: the kernel-local index of the semaphore a unit was granted from (in
/// real time, for a semaphore of another CPU, its raw id with the top bit set: see
/// `xcpu/sync.rs`), or why none was. The index says where the unit goes back if the thread
/// is unwound before it sees the answer (an RCS restart, an abort: see `Kernel::forgo_unit`).
pub(crate) type SemAnswer = Result<u32, LockError>;

/// The answers that carry a value and own nothing: a grant, an outcome code, an id, a number.
/// Deliberately not `Copy`, though it could be: taking one out
/// of an [`Answer`] then moves it, which leaves the `Answer` with nothing to drop (a copy
/// would leave it whole, and its drop glue would run).
pub(crate) enum Value {
    /// The answer of the requests that return nothing.
    Go,
    Lock(LockAnswer),
    Cond(CondAnswer),
    Sem(SemAnswer),
    /// A condition-variable notification's or a vacate's outcome.
    Status(Result<(), LockError>),
    Urgency(Urgency),
    /// A setting's previous value (`Preemption`).
    Flag(bool),
    /// The thread was created.
    Spawned(ThreadId),
    /// The sporadic thread was released (or its release deferred).
    Released,
    /// A message call's outcome.
    Msg(MsgAnswer),
    /// What a set, clock or budget operation ([`SetOp`]) yields.
    Set(SetValue),
    /// The call (a release, a kill, a join, ...) failed with an error that owns nothing: no
    /// box is made for it, so a failing call allocates no more than a succeeding one.
    Failed(Failure),
    /// A join's answer: the thread ended `Completed`, or `Killed` if `killed` (an outcome
    /// holding a message travels boxed, in [`Report::Joined`]).
    Joined {
        killed: bool,
    },
}

/// The errors a runtime call can fail with that own nothing, as [`Value::Failed`] carries
/// them (an [`Error`] with a `String` in it travels boxed, in [`Report::Failed`]). Each
/// variant is the [`Error`] variant of its name, field for field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    NoSuchCpu { cpu: usize, cpus: usize },
    TooManyThreads { max: usize },
    UnknownThread(ThreadId),
    ForeignThread(ThreadId),
    ForeignSet(SetId),
    JoinSelf,
    NotSporadic(ThreadId),
    CrossCpu { from: usize, to: usize },
    QueueFull { cpu: usize, capacity: usize },
    UnknownSet(SetId),
    TooManySets { max: usize },
    AlreadyInSet { thread: ThreadId, set: SetId },
    NotInSet { thread: ThreadId, set: SetId },
    NoBudget(SetId),
    Unwinding,
    TooManyTimers { max: usize },
    GlobalLockHeld { thread: ThreadId, call: &'static str },
}

impl Failure {
    /// `e` in the form that owns nothing, or `e` itself if it owns something.
    pub(crate) fn of(e: Error) -> Result<Failure, Error> {
        Ok(match e {
            Error::NoSuchCpu { cpu, cpus } => Failure::NoSuchCpu { cpu, cpus },
            Error::TooManyThreads { max } => Failure::TooManyThreads { max },
            Error::UnknownThread(t) => Failure::UnknownThread(t),
            Error::ForeignThread(t) => Failure::ForeignThread(t),
            Error::ForeignSet(s) => Failure::ForeignSet(s),
            Error::JoinSelf => Failure::JoinSelf,
            Error::NotSporadic(t) => Failure::NotSporadic(t),
            Error::CrossCpu { from, to } => Failure::CrossCpu { from, to },
            Error::QueueFull { cpu, capacity } => Failure::QueueFull { cpu, capacity },
            Error::UnknownSet(s) => Failure::UnknownSet(s),
            Error::TooManySets { max } => Failure::TooManySets { max },
            Error::AlreadyInSet { thread, set } => Failure::AlreadyInSet { thread, set },
            Error::NotInSet { thread, set } => Failure::NotInSet { thread, set },
            Error::NoBudget(s) => Failure::NoBudget(s),
            Error::Unwinding => Failure::Unwinding,
            Error::TooManyTimers { max } => Failure::TooManyTimers { max },
            Error::GlobalLockHeld { thread, call } => Failure::GlobalLockHeld { thread, call },
            owning => return Err(owning),
        })
    }

    /// The error, as the caller gets it. Makes no allocation: none of these variants owns
    /// anything.
    pub(crate) fn error(self) -> Error {
        match self {
            Failure::NoSuchCpu { cpu, cpus } => Error::NoSuchCpu { cpu, cpus },
            Failure::TooManyThreads { max } => Error::TooManyThreads { max },
            Failure::UnknownThread(t) => Error::UnknownThread(t),
            Failure::ForeignThread(t) => Error::ForeignThread(t),
            Failure::ForeignSet(s) => Error::ForeignSet(s),
            Failure::JoinSelf => Error::JoinSelf,
            Failure::NotSporadic(t) => Error::NotSporadic(t),
            Failure::CrossCpu { from, to } => Error::CrossCpu { from, to },
            Failure::QueueFull { cpu, capacity } => Error::QueueFull { cpu, capacity },
            Failure::UnknownSet(s) => Error::UnknownSet(s),
            Failure::TooManySets { max } => Error::TooManySets { max },
            Failure::AlreadyInSet { thread, set } => Error::AlreadyInSet { thread, set },
            Failure::NotInSet { thread, set } => Error::NotInSet { thread, set },
            Failure::NoBudget(s) => Error::NoBudget(s),
            Failure::Unwinding => Error::Unwinding,
            Failure::TooManyTimers { max } => Error::TooManyTimers { max },
            Failure::GlobalLockHeld { thread, call } => Error::GlobalLockHeld { thread, call },
        }
    }
}

/// The answers that carry a report owning heap values: rare (a joined thread's outcome, a
/// control operation's value, a call failed with an error that owns a `String`), so they are
/// boxed and an [`Answer`] stays as small as a [`Value`] one.
pub(crate) enum Report {
    /// The call failed with an error that owns something (see [`Failure`] for the others).
    Failed(Error),
    Joined(ThreadOutcome),
    Control(ControlValue),
}

/// The kernel's answer to a request, on the wire.
pub(crate) enum Answer {
    Value(Value),
    Setup(Box<Report>),
}

impl Answer {
    pub(crate) const GO: Answer = Answer::Value(Value::Go);

    /// The answer of a call that yields `T` or fails with an [`Error`].
    pub(crate) fn fallible<T>(r: Result<T, Error>, answer: impl FnOnce(T) -> Answer) -> Answer {
        match r {
            Ok(value) => answer(value),
            Err(e) => Answer::failed(e),
        }
    }

    /// The answer of a failed call: boxed only for an error that owns something, so the
    /// refusals of the dispatch, lock, message and accounting paths allocate nothing.
    pub(crate) fn failed(e: Error) -> Answer {
        match Failure::of(e) {
            Ok(failure) => Answer::Value(Value::Failed(failure)),
            Err(owning) => Answer::Setup(Box::new(Report::Failed(owning))),
        }
    }

    /// Drop an answer. A settled one (nearly always `Go`) owns nothing: both arms move what
    /// they hold, so the general drop glue, an out-of-line call, never runs for it.
    #[inline(always)]
    pub(crate) fn discard(self) {
        match self {
            Answer::Value(_settled) => {}
            Answer::Setup(owned) => drop(owned),
        }
    }

    /// A join's answer: settled for an outcome that owns nothing, boxed for one with a
    /// message.
    pub(crate) fn joined(outcome: ThreadOutcome) -> Answer {
        match outcome {
            ThreadOutcome::Completed => Answer::Value(Value::Joined { killed: false }),
            ThreadOutcome::Killed => Answer::Value(Value::Joined { killed: true }),
            owning => Answer::Setup(Box::new(Report::Joined(owning))),
        }
    }

    /// The semaphore unit this answer grants, if it grants one.
    #[inline]
    pub(crate) fn granted_unit(&self) -> Option<u32> {
        match self {
            Answer::Value(Value::Sem(Ok(k))) => Some(*k),
            _ => None,
        }
    }
}

impl From<LockAnswer> for Answer {
    #[inline(always)]
    fn from(a: LockAnswer) -> Answer {
        Answer::Value(Value::Lock(a))
    }
}

impl From<Value> for Answer {
    #[inline(always)]
    fn from(a: Value) -> Answer {
        Answer::Value(a)
    }
}

impl From<Report> for Answer {
    fn from(a: Report) -> Answer {
        Answer::Setup(Box::new(a))
    }
}

/// What a thread is resumed with: the time, its current job, and the answer to its request
/// or the interrupt that unwinds it.
pub(crate) struct Response {
    pub(crate) now: Time,
    pub(crate) job: JobInfo,
    pub(crate) reply: Result<Answer, Interrupt>,
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

/// Operations on thread sets, execution-time clocks, budgets and synchronisation objects:
/// asked for by a thread (typed, through [`Control`]), or registered before the run and
/// replayed when the kernel is built.
pub(crate) enum ControlOp {
    CreateSet(String),
    /// An operation that owns nothing: asked for by a thread, it travels as
    /// [`Op::Set`] and is answered with [`Value::Set`], with no box either way.
    Set(SetOp),
    SetMembers(SetId),
    ThreadTimer(ThreadId, Duration, crate::kernel::EventHandler),
    SetTimer(SetId, Duration, crate::kernel::EventHandler),
    SetBudget(SetId, Budget),
    CreateLock(LockSpec),
    CreateCond(usize),
    CreateSem(SemSpec),
    StackScheduler(usize, crate::kernel::cpu::sched_stack::SchedWrap),
    UnstackScheduler(usize),
}

/// The set, clock and budget operations that own nothing. These are the control calls a thread
/// makes in every job (a Spring task moves its thread into the set of its window, replenishes
/// its budget and takes it out again), so they travel as a [`Op`] request and come back as
/// a [`SetValue`] in a [`Value`] answer: they allocate nothing, failing or not.
#[derive(Clone, Copy)]
pub(crate) enum SetOp {
    DestroySet(SetId),
    EmptySet(SetId),
    AddToSet(SetId, ThreadId),
    RemoveFromSet(SetId, ThreadId),
    SetContains(SetId, ThreadId),
    SetOf(ThreadId),
    ThreadClock(ThreadId),
    SetThreadClock(ThreadId, Duration),
    GroupClock(SetId),
    SetGroupClock(SetId, Duration),
    BudgetLeft(SetId),
    Replenish(SetId, Duration),
    AddBudget(SetId, i64),
}

/// What a [`SetOp`] yields: the [`ControlValue`]s that own nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SetValue {
    Unit,
    Bool(bool),
    SetOf(Option<SetId>),
    Time(Duration),
    Budget(Duration, bool),
}

impl From<SetValue> for ControlValue {
    #[inline]
    fn from(v: SetValue) -> ControlValue {
        match v {
            SetValue::Unit => ControlValue::Unit,
            SetValue::Bool(b) => ControlValue::Bool(b),
            SetValue::SetOf(s) => ControlValue::SetOf(s),
            SetValue::Time(t) => ControlValue::Time(t),
            SetValue::Budget(left, exhausted) => ControlValue::Budget(left, exhausted),
        }
    }
}

/// What a control operation yields, on the wire.
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

/// A value a control operation yields, read back from the wire.
pub(crate) trait ControlResult: Sized {
    fn from_value(v: ControlValue) -> Option<Self>;
}

macro_rules! control_results {
    ($($t:ty => $p:pat => $v:expr;)*) => {$(
        impl ControlResult for $t {
            #[inline]
            fn from_value(v: ControlValue) -> Option<Self> {
                match v {
                    $p => Some($v),
                    _ => None,
                }
            }
        }
    )*};
}

control_results! {
    () => ControlValue::Unit => ();
    SetId => ControlValue::Set(s) => s;
    bool => ControlValue::Bool(b) => b;
    Vec<ThreadId> => ControlValue::Members(m) => m;
    Option<SetId> => ControlValue::SetOf(s) => s;
    Duration => ControlValue::Time(t) => t;
    (Duration, bool) => ControlValue::Budget(left, exhausted) => (left, exhausted);
    LockId => ControlValue::Lock(l) => l;
    CondId => ControlValue::Cond(c) => c;
    SemId => ControlValue::Sem(s) => s;
}

/// A control operation asked for by a thread, with the type of the value it yields: built
/// only by the constructors below, each of which fixes that type for its operation.
pub(crate) struct Control<V> {
    pub(crate) op: ControlOp,
    _yields: std::marker::PhantomData<fn() -> V>,
}

macro_rules! control_ops {
    ($($name:ident($($arg:ident: $t:ty),*) -> $v:ty = $op:expr;)*) => {$(
        impl Control<$v> {
            pub(crate) fn $name($($arg: $t),*) -> Control<$v> {
                Control { op: $op, _yields: std::marker::PhantomData }
            }
        }
    )*};
}

control_ops! {
    create_set(name: String) -> SetId = ControlOp::CreateSet(name);
    destroy_set(set: SetId) -> () = ControlOp::Set(SetOp::DestroySet(set));
    empty_set(set: SetId) -> () = ControlOp::Set(SetOp::EmptySet(set));
    add_to_set(set: SetId, t: ThreadId) -> () = ControlOp::Set(SetOp::AddToSet(set, t));
    remove_from_set(set: SetId, t: ThreadId) -> () = ControlOp::Set(SetOp::RemoveFromSet(set, t));
    set_contains(set: SetId, t: ThreadId) -> bool = ControlOp::Set(SetOp::SetContains(set, t));
    set_members(set: SetId) -> Vec<ThreadId> = ControlOp::SetMembers(set);
    set_of(t: ThreadId) -> Option<SetId> = ControlOp::Set(SetOp::SetOf(t));
    thread_clock(t: ThreadId) -> Duration = ControlOp::Set(SetOp::ThreadClock(t));
    set_thread_clock(t: ThreadId, v: Duration) -> () = ControlOp::Set(SetOp::SetThreadClock(t, v));
    group_clock(set: SetId) -> Duration = ControlOp::Set(SetOp::GroupClock(set));
    set_group_clock(set: SetId, v: Duration) -> () = ControlOp::Set(SetOp::SetGroupClock(set, v));
    thread_timer(t: ThreadId, at: Duration, h: crate::kernel::EventHandler) -> () = ControlOp::ThreadTimer(t, at, h);
    set_timer(set: SetId, at: Duration, h: crate::kernel::EventHandler) -> () = ControlOp::SetTimer(set, at, h);
    set_budget(set: SetId, b: Budget) -> () = ControlOp::SetBudget(set, b);
    budget_left(set: SetId) -> (Duration, bool) = ControlOp::Set(SetOp::BudgetLeft(set));
    replenish(set: SetId, to: Duration) -> () = ControlOp::Set(SetOp::Replenish(set, to));
    add_budget(set: SetId, delta: i64) -> () = ControlOp::Set(SetOp::AddBudget(set, delta));
    create_lock(spec: LockSpec) -> LockId = ControlOp::CreateLock(spec);
    create_cond(cpu: usize) -> CondId = ControlOp::CreateCond(cpu);
    create_sem(spec: SemSpec) -> SemId = ControlOp::CreateSem(spec);
    stack_scheduler(cpu: usize, wrap: crate::kernel::cpu::sched_stack::SchedWrap) -> () = ControlOp::StackScheduler(cpu, wrap);
    unstack_scheduler(cpu: usize) -> () = ControlOp::UnstackScheduler(cpu);
}

// The hot paths rely on these: a plain request and a settled answer are taken apart with
// nothing to drop, and an answer is no larger than a settled one.
const _: () = assert!(!std::mem::needs_drop::<Op>() && !std::mem::needs_drop::<Value>());
const _: () = assert!(std::mem::size_of::<Answer>() == std::mem::size_of::<Value>());
// The error a failed call carries settled is no larger than the other settled answers: it
// does not make every answer bigger.
const _: () = assert!(std::mem::size_of::<Failure>() < std::mem::size_of::<crate::plain::MsgError>());
const _: () = assert!(std::mem::size_of::<Result<Answer, Interrupt>>() == std::mem::size_of::<Answer>());
// The set, clock and budget operations ride in a plain request and a settled answer without
// making either larger than the message calls already make them.
const _: () = assert!(std::mem::size_of::<Op>() == 40 && std::mem::size_of::<Value>() == 56);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_interrupt_precedence_is_kill_abort_stop_restart() {
        let order = [Interrupt::Restart, Interrupt::Stop, Interrupt::Abort, Interrupt::Kill];
        for (k, &low) in order.iter().enumerate() {
            for &high in &order[k..] {
                assert_eq!(low.max(high), high);
                assert_eq!(high.max(low), high);
            }
        }
    }

    #[test]
    fn protocol_control_values_read_back_only_as_their_own_type() {
        assert_eq!(SetId::from_value(ControlValue::Set(SetId { word: 3, runtime: 1 })).map(|s| s.word), Some(3));
        assert!(SetId::from_value(ControlValue::Bool(true)).is_none());
        assert_eq!(
            <(Duration, bool)>::from_value(ControlValue::Budget(Duration::from_millis(2), true)),
            Some((Duration::from_millis(2), true))
        );
        assert!(<()>::from_value(ControlValue::Time(Duration::ZERO)).is_none());
        assert_eq!(<()>::from_value(ControlValue::Unit), Some(()));
    }

    #[test]
    fn protocol_granted_unit_is_read_from_a_grant_only() {
        assert_eq!(Answer::Value(Value::Sem(Ok(4))).granted_unit(), Some(4));
        assert_eq!(Answer::Value(Value::Sem(Err(LockError::Timeout))).granted_unit(), None);
        assert_eq!(Answer::from(LockAnswer::Granted).granted_unit(), None);
        assert_eq!(Answer::GO.granted_unit(), None);
    }
}
