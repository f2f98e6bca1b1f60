//! The calls a thread makes into the runtime, and the code that runs on a thread's own stack.
//!
//! A thread talks to its kernel only by message: it suspends its coroutine with a [`Request`]
//! and is resumed with a [`Response`]. The kernel's state is therefore never borrowed while user
//! code runs, and every runtime call is a preemption point (a task boundary, in Spring's terms).
//! This module owns [`Ctx`] (the handle a thread body receives), [`EventCtx`] (the handle a
//! timing-event handler receives) and the per-thread job loop.
//!
//! # Cancellation
//!
//! Aborting a job or stopping the runtime unwinds the thread's stack from inside the runtime
//! call it is blocked in, with a private payload: destructors run, and the job loop (or the
//! thread's end) catches it. A body that catches that unwind itself and calls the runtime again
//! is unwound again at that call.
//!
//! # Runtime calls while unwinding
//!
//! While a thread unwinds (a panic, an aborted job, a kill, the runtime stopping, the kernel
//! tearing its threads down), its destructors may call the runtime, but such a call never
//! suspends the thread: a suspended unwind could be interrupted by another unwind (which
//! aborts the process), leaves the OS thread's panic count raised while other threads run, and
//! cannot be resumed at all once the coroutine is being dropped. Instead:
//!
//! - calls that release something take effect when the unwinding ends: unlocking a mutex,
//!   `Semaphore::vacate`, notifying a condition variable, clearing a poison mark, releasing a
//!   sporadic thread, changing the priority. They are kept in order and made at the thread's
//!   next runtime call after the unwind was caught: when its job or the thread ends (the kernel
//!   applies them before the thread's end is handled) or, if the body caught the unwind itself,
//!   at its next call. When the runtime stops at its horizon or tears its threads down nothing
//!   runs any more and they are dropped;
//! - calls that would wait do not: `work`, `yield_now` and `sleep` return at once; locking
//!   (other than a free lock taken on the fast path), `procure` and condition waits fail with
//!   `LockError::WouldBlock`;
//! - calls that create or wait for something fail with [`Error::Unwinding`] (`spawn`, `join`,
//!   sets, clocks, budgets, creating locks); `urgency` answers the lowest urgency.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::time::Duration;

use corosensei::Yielder;

use crate::clock::RealClock;
use crate::error::Error;
use crate::policy::sched::Urgency;
use crate::sets::{Budget, SetId};
use crate::sync::{CondId, Condvar, LockError, LockId, LockSpec, Mutex, SemId, SemSpec, Semaphore};
use crate::thread::{ThreadId, ThreadOutcome, ThreadSpec};
use crate::time::{nanos, Time};

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

/// Operations on thread sets, execution-time clocks and budgets, made from a thread.
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
fn unexpected_reply(reply: Reply, what: &str) -> ! {
    drop(reply);
    unreachable!("{what}")
}

/// A thread's handle on its runtime, passed to the thread body. Every method is a runtime
/// call and a preemption point.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Runtime, ThreadSpec, Time};
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("t"), |cx| {
///     cx.work(Duration::from_millis(2));
///     assert_eq!(cx.now(), Time::from_millis(2));
///     cx.sleep(Duration::from_millis(3));
///     assert_eq!(cx.now(), Time::from_millis(5));
/// }).unwrap();
/// rt.run().unwrap();
/// ```
pub struct Ctx<'a> {
    yielder: &'a Yielder<Response, Request>,
    /// The identity of the thread's runtime: objects of other runtimes are refused.
    runtime: u64,
    id: ThreadId,
    cpu: usize,
    now: Cell<Time>,
    job: Cell<JobInfo>,
    real_clock: Option<RealClock>,
    /// Locks this thread holds through the fast path; shared with its control block.
    fast_held: Rc<Cell<u32>>,
    /// Something waits for the thread's next runtime call: releasing calls made while it
    /// unwound, or an unwinding reply that arrived while those were being made.
    owed: Cell<bool>,
    /// Releasing requests made while unwinding, in order (see "Runtime calls while unwinding").
    deferred: RefCell<Vec<Request>>,
    /// An unwinding reply that came back to a deferred request, delivered at the next call.
    stashed: Cell<Option<Unwind>>,
    /// The unwind under way, if any, is the runtime's own (abort, stop, kill), not a panic: a
    /// guard it drops unlocks without poisoning. Cleared when the job loop catches it.
    runtime_unwind: Cell<bool>,
}

/// The replies that unwind the thread, without their payloads.
#[derive(Clone, Copy)]
enum Unwind {
    Abort,
    Stop,
    Kill,
    Restart,
}

impl Unwind {
    fn of(reply: &Reply) -> Option<Unwind> {
        match reply {
            Reply::Abort => Some(Unwind::Abort),
            Reply::Stop => Some(Unwind::Stop),
            Reply::Kill => Some(Unwind::Kill),
            Reply::Restart => Some(Unwind::Restart),
            _ => None,
        }
    }

    fn reply(self) -> Reply {
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
fn unwind_for(reply: Reply) -> ! {
    match reply {
        Reply::Abort => resume_unwind(Box::new(JobAborted)),
        Reply::Stop => resume_unwind(Box::new(Shutdown)),
        Reply::Kill => resume_unwind(Box::new(Killed)),
        Reply::Restart => resume_unwind(Box::new(RestartSection)),
        other => unexpected_reply(other, "only abort, stop, kill and restart unwind"),
    }
}

impl<'a> Ctx<'a> {
    // Inlined into every runtime call, as are the lock calls: a thread resumed by the
    // dispatcher then continues in its own code instead of returning through frames whose
    // return addresses the CPU's return predictor no longer holds (the dispatcher's calls
    // and returns replaced them while the thread was suspended).
    #[inline(always)]
    fn call(&self, request: Request) -> Reply {
        if self.owed.get() || std::thread::panicking() {
            return self.call_cold(request);
        }
        self.call_now(request)
    }

    #[inline(always)]
    fn call_now(&self, request: Request) -> Reply {
        let r = self.yielder.suspend(request);
        self.now.set(r.now);
        self.job.set(r.job);
        match r.reply {
            reply @ (Reply::Abort | Reply::Stop | Reply::Kill | Reply::Restart) => self.unwind(reply),
            other => other,
        }
    }

    #[cold]
    fn unwind(&self, reply: Reply) -> ! {
        // Aborts, stops and kills end the job or the thread: the job loop, which catches them,
        // clears the mark. A restart is caught inside `Mutex::critical` and keeps a panic's
        // poisoning for the locks nested in the section.
        if matches!(reply, Reply::Abort | Reply::Stop | Reply::Kill) {
            self.runtime_unwind.set(true);
        }
        unwind_for(reply)
    }

    /// A runtime call made while unwinding, or with something owed from an unwinding.
    #[cold]
    #[inline(never)]
    fn call_cold(&self, request: Request) -> Reply {
        if std::thread::panicking() {
            return self.call_unwinding(request);
        }
        self.settle_owed();
        if let Some(u) = self.stashed.take() {
            drop(request);
            self.unwind(u.reply());
        }
        self.call_now(request)
    }

    /// Answer a runtime call made while the thread unwinds, without suspending it.
    fn call_unwinding(&self, request: Request) -> Reply {
        match request {
            Request::Release(_) => {
                self.defer(request);
                Reply::Released(Ok(()))
            }
            Request::Unlock { .. }
            | Request::Vacate(_)
            | Request::CondSignal { .. }
            | Request::ClearPoison(_)
            | Request::SetPriority(_) => {
                self.defer(request);
                Reply::Go
            }
            Request::Work(_) | Request::Yield | Request::SleepUntil(_) | Request::Adopt(_) => Reply::Go,
            Request::Lock { .. } | Request::Procure { .. } | Request::CondWait { .. } => {
                Reply::Locked(Err(LockError::WouldBlock))
            }
            Request::Spawn(_) => Reply::Spawned(Err(Box::new(Error::Unwinding))),
            Request::Join(_) => Reply::Joined(Err(Box::new(Error::Unwinding))),
            Request::Control(_) => Reply::Control(Err(Box::new(Error::Unwinding))),
            Request::Urgency => Reply::Urgency(Urgency::LOWEST),
            Request::JobDone { .. } => unreachable!("the job loop reports a job's end, never a destructor"),
        }
    }

    fn defer(&self, request: Request) {
        self.deferred.borrow_mut().push(request);
        self.owed.set(true);
    }

    /// Make the requests deferred while unwinding, now that the unwind is over. An unwinding
    /// reply to one of them is kept for the next call.
    fn settle_owed(&self) {
        let deferred = std::mem::take(&mut *self.deferred.borrow_mut());
        for request in deferred {
            let r = self.yielder.suspend(request);
            self.now.set(r.now);
            self.job.set(r.job);
            if let Some(u) = Unwind::of(&r.reply) {
                if self.stashed.get().is_none() {
                    self.stashed.set(Some(u));
                }
            }
        }
        self.owed.set(self.stashed.get().is_some());
    }

    /// At the end of a job or of the thread: make what is owed, forget a stashed unwind (the
    /// kernel repeats what still holds: a kill, a stop).
    fn settle_at_end(&self) {
        if self.owed.get() {
            self.settle_owed();
            self.stashed.set(None);
            self.owed.set(false);
        }
    }

    /// The runtime stops: nothing will take the deferred requests any more.
    fn forget_owed(&self) {
        self.deferred.borrow_mut().clear();
        self.stashed.set(None);
        self.owed.set(false);
    }

    /// This thread's id.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let t = rt.spawn(tempi::ThreadSpec::new("me"), |cx| assert_eq!(cx.id().index(), 0)).unwrap();
    /// # let _ = t; rt.run().unwrap();
    /// ```
    pub fn id(&self) -> ThreadId {
        self.id
    }

    /// The CPU this thread runs on.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(2);
    /// rt.spawn(tempi::ThreadSpec::new("c").cpu(1), |cx| assert_eq!(cx.cpu(), 1)).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn cpu(&self) -> usize {
        self.cpu
    }

    /// The identity of this thread's runtime.
    #[inline(always)]
    pub(crate) fn runtime(&self) -> u64 {
        self.runtime
    }

    /// The current instant. In virtual time, code between runtime calls takes no time.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("c"), |cx| assert_eq!(cx.now(), tempi::Time::ZERO)).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn now(&self) -> Time {
        match &self.real_clock {
            Some(clock) => clock.read(),
            None => self.now.get(),
        }
    }

    /// The job being executed.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("c"), |cx| assert_eq!(cx.job().number, 0)).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn job(&self) -> JobInfo {
        self.job.get()
    }

    /// Consume `d` of CPU time. In virtual time this is pure demand: the clock advances by
    /// exactly `d` of this thread's execution, split wherever a more urgent thread preempts. In
    /// real time the dispatcher spins for `d`, checking its timers meanwhile.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("w"), |cx| cx.work(Duration::from_micros(10))).unwrap();
    /// assert_eq!(rt.run().unwrap().end, tempi::Time::from_micros(10));
    /// ```
    #[inline]
    pub fn work(&self, d: Duration) {
        self.call(Request::Work(nanos(d)));
    }

    /// Give the CPU to the next ready thread the policy chooses (possibly this one again).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("y"), |cx| cx.yield_now()).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn yield_now(&self) {
        self.call(Request::Yield);
    }

    /// Sleep until `t` (returns at once if `t` has passed).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("s"), |cx| {
    ///     cx.sleep_until(tempi::Time::from_millis(7));
    ///     assert_eq!(cx.now(), tempi::Time::from_millis(7));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn sleep_until(&self, t: Time) {
        self.call(Request::SleepUntil(t));
    }

    /// Sleep for `d`.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("s"), |cx| cx.sleep(std::time::Duration::from_millis(1))).unwrap();
    /// assert_eq!(rt.run().unwrap().end, tempi::Time::from_millis(1));
    /// ```
    pub fn sleep(&self, d: Duration) {
        let until = self.now() + d;
        self.sleep_until(until);
    }

    /// Create a thread from inside a thread. The new thread is placed on the CPU its spec
    /// names; in real time that must be this thread's CPU.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("parent"), |cx| {
    ///     let child = cx.spawn(tempi::ThreadSpec::new("child"), |_| {}).unwrap();
    ///     assert_eq!(cx.join(child), Ok(tempi::ThreadOutcome::Completed));
    /// }).unwrap();
    /// assert_eq!(rt.run().unwrap().threads.len(), 2);
    /// ```
    pub fn spawn(&self, spec: ThreadSpec, body: impl FnMut(&Ctx<'_>) + Send + 'static) -> Result<ThreadId, Error> {
        spec.validate()?;
        match self.call(Request::Spawn(Box::new((spec, Box::new(body))))) {
            Reply::Spawned(r) => r.map_err(|e| *e),
            _ => unreachable!("the kernel answers a spawn with Spawned"),
        }
    }

    /// Wait until thread `t` ends and return how it ended.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("j"), |cx| {
    ///     assert_eq!(cx.join(cx.id()), Err(tempi::Error::JoinSelf));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn join(&self, t: ThreadId) -> Result<ThreadOutcome, Error> {
        match self.call(Request::Join(t)) {
            Reply::Joined(r) => r.map_err(|e| *e),
            _ => unreachable!("the kernel answers a join with Joined"),
        }
    }

    /// Change this thread's base priority. The policy recomputes its urgency at once; if it
    /// dropped below a ready thread's, that thread preempts this one here.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("a").priority(5), |cx| {
    ///     cx.set_priority(0); // `b` (priority 1) runs now
    ///     assert_eq!(cx.now(), tempi::Time::from_millis(1));
    /// }).unwrap();
    /// rt.spawn(tempi::ThreadSpec::new("b").priority(1), |cx| cx.work(Duration::from_millis(1))).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_priority(&self, priority: i32) {
        self.call(Request::SetPriority(priority));
    }

    #[inline(always)]
    pub(crate) fn lock_raw(
        &self,
        lock: LockId,
        timeout: Option<Duration>,
        try_only: bool,
        restartable: bool,
    ) -> Result<(), LockError> {
        let deadline = timeout.map(|d| self.now() + d);
        loop {
            // Copying the result out of a `Reply` would leave the reply to its drop glue, an
            // out-of-line call on every hand-off; `Locked` and `LockRetry` own nothing.
            let reply = ManuallyDrop::new(self.call(Request::Lock { lock, deadline, try_only, restartable }));
            match *reply {
                Reply::Locked(r) => return r,
                Reply::LockRetry => continue,
                _ => unexpected_reply(
                    ManuallyDrop::into_inner(reply),
                    "the kernel answers a lock request with Locked or LockRetry",
                ),
            }
        }
    }

    /// Unlock without unwinding: it runs in a guard's destructor, possibly while unwinding.
    #[inline(always)]
    pub(crate) fn unlock_raw(&self, lock: LockId, poison: bool) {
        // Callers pass `poison` only while panicking or just after catching a panic: the
        // cold path tells the two apart.
        if poison || self.owed.get() {
            return self.unlock_cold(lock, poison);
        }
        let r = self.yielder.suspend(Request::Unlock { lock, poison });
        self.now.set(r.now);
        self.job.set(r.job);
    }

    #[cold]
    #[inline(never)]
    fn unlock_cold(&self, lock: LockId, poison: bool) {
        if std::thread::panicking() {
            // Only a panic poisons: the runtime's own unwinds end code that did nothing wrong.
            let poison = poison && !self.runtime_unwind.get();
            self.defer(Request::Unlock { lock, poison });
            return;
        }
        // An unlock cannot unwind: a stashed unwind waits for the next call.
        self.settle_owed();
        let r = self.yielder.suspend(Request::Unlock { lock, poison });
        self.now.set(r.now);
        self.job.set(r.job);
    }

    /// Release `lock` and wait on `cond`; returns whether the wait timed out. The caller
    /// reacquires the lock.
    pub(crate) fn cond_wait_raw(
        &self,
        cond: CondId,
        lock: LockId,
        timeout: Option<Duration>,
    ) -> Result<bool, LockError> {
        let deadline = timeout.map(|d| self.now() + d);
        match self.call(Request::CondWait { cond, lock, deadline }) {
            Reply::CondWoken(timed_out) => Ok(timed_out),
            Reply::Locked(Err(e)) => Err(e),
            _ => unreachable!("the kernel answers a condition wait with CondWoken"),
        }
    }

    pub(crate) fn cond_signal_raw(&self, cond: CondId, all: bool) -> Result<(), LockError> {
        match self.call(Request::CondSignal { cond, all }) {
            Reply::Locked(r) => r,
            _ => Ok(()),
        }
    }

    pub(crate) fn procure_raw(&self, sem: SemId, timeout: Option<Duration>, try_only: bool) -> Result<(), LockError> {
        let deadline = timeout.map(|d| self.now() + d);
        match self.call(Request::Procure { sem, deadline, try_only }) {
            Reply::Locked(r) => r,
            _ => unreachable!("the kernel answers a procure with Locked"),
        }
    }

    pub(crate) fn vacate_raw(&self, sem: SemId) -> Result<(), LockError> {
        match self.call(Request::Vacate(sem)) {
            Reply::Locked(r) => r,
            _ => Ok(()),
        }
    }

    /// Create a condition variable on this thread's CPU.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let cv = cx.create_condvar().unwrap();
    ///     cv.notify_one(cx).unwrap(); // nobody waits: nothing happens
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn create_condvar(&self) -> Result<Condvar, Error> {
        match self.control(ControlOp::CreateCond(self.cpu))? {
            ControlValue::Cond(id) => Ok(Condvar::new(id, self.cpu, self.runtime)),
            _ => unreachable!("creating a condition variable answers with its id"),
        }
    }

    /// Create a counting semaphore on this thread's CPU.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_semaphore(tempi::sync::SemSpec::new("slots", 2)).unwrap();
    ///     s.procure(cx).unwrap();
    ///     s.vacate(cx).unwrap();
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn create_semaphore(&self, spec: SemSpec) -> Result<Semaphore, Error> {
        let spec = spec.cpu(self.cpu);
        match self.control(ControlOp::CreateSem(spec))? {
            ControlValue::Sem(id) => Ok(Semaphore::new(id, self.cpu, self.runtime)),
            _ => unreachable!("creating a semaphore answers with its id"),
        }
    }

    pub(crate) fn adopt_raw(&self, lock: LockId) {
        self.call(Request::Adopt(lock));
    }

    /// Count a lock taken (`1`) or released (`-1`) through the fast path: the kernel defers
    /// aborts and kills while any lock is held.
    pub(crate) fn fast_held_add(&self, delta: i32) {
        self.fast_held.set(self.fast_held.get().wrapping_add_signed(delta));
    }

    pub(crate) fn clear_poison_raw(&self, lock: LockId) {
        self.call(Request::ClearPoison(lock));
    }

    /// This thread's effective urgency: its policy's base urgency, or more while it inherits
    /// from threads waiting for its locks, or a ceiling it holds.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t").priority(4), |cx| {
    ///     assert_eq!(cx.urgency(), tempi::policy::sched::Urgency::from_priority(4));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn urgency(&self) -> Urgency {
        match self.call(Request::Urgency) {
            Reply::Urgency(u) => u,
            _ => unreachable!("the kernel answers an urgency query with Urgency"),
        }
    }

    /// Create a mutex on this thread's CPU (see [`crate::sync`]).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let m = cx.create_mutex(5, tempi::sync::LockSpec::new("m").protocol("bp")).unwrap();
    ///     assert_eq!(*m.lock(cx).unwrap(), 5);
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn create_mutex<T>(&self, value: T, spec: LockSpec) -> Result<Mutex<T>, Error> {
        let spec = spec.cpu(self.cpu);
        let word = spec.word.clone();
        match self.control(ControlOp::CreateLock(spec))? {
            ControlValue::Lock(id) => Ok(Mutex::new(id, self.cpu, self.runtime, word, value)),
            _ => unreachable!("creating a lock answers with its id"),
        }
    }

    fn control(&self, op: ControlOp) -> Result<ControlValue, Error> {
        match self.call(Request::Control(Box::new(op))) {
            Reply::Control(r) => r.map_err(|e| *e),
            _ => unreachable!("the kernel answers a control request with Control"),
        }
    }

    fn control_unit(&self, op: ControlOp) -> Result<(), Error> {
        self.control(op).map(|_| ())
    }

    /// Create an empty thread set on this thread's CPU.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("workers").unwrap();
    ///     cx.add_to_set(s, cx.id()).unwrap();
    ///     assert_eq!(cx.set_of(cx.id()).unwrap(), Some(s));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn create_set(&self, name: &str) -> Result<SetId, Error> {
        match self.control(ControlOp::CreateSet(name.to_string()))? {
            ControlValue::Set(s) => Ok(s),
            _ => unreachable!("create answers with a set"),
        }
    }

    /// Destroy a set: its members leave it (and any enforcement on them is lifted).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("tmp").unwrap();
    ///     cx.destroy_set(s).unwrap();
    ///     assert!(cx.set_members(s).is_err());
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn destroy_set(&self, set: SetId) -> Result<(), Error> {
        self.control_unit(ControlOp::DestroySet(set))
    }

    /// Remove every member of a set.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.add_to_set(s, cx.id()).unwrap();
    ///     cx.empty_set(s).unwrap();
    ///     assert!(cx.set_members(s).unwrap().is_empty());
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn empty_set(&self, set: SetId) -> Result<(), Error> {
        self.control_unit(ControlOp::EmptySet(set))
    }

    /// Add a thread to a set. A thread belongs to at most one set: adding it to a second one
    /// is [`Error::AlreadyInSet`].
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let a = cx.create_set("a").unwrap();
    ///     let b = cx.create_set("b").unwrap();
    ///     cx.add_to_set(a, cx.id()).unwrap();
    ///     assert!(matches!(cx.add_to_set(b, cx.id()), Err(tempi::Error::AlreadyInSet { .. })));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn add_to_set(&self, set: SetId, thread: ThreadId) -> Result<(), Error> {
        self.control_unit(ControlOp::AddToSet(set, thread))
    }

    /// Remove a thread from a set.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     assert!(cx.remove_from_set(s, cx.id()).is_err());
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn remove_from_set(&self, set: SetId, thread: ThreadId) -> Result<(), Error> {
        self.control_unit(ControlOp::RemoveFromSet(set, thread))
    }

    /// Whether `thread` is a member of `set`.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     assert_eq!(cx.set_contains(s, cx.id()), Ok(false));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_contains(&self, set: SetId, thread: ThreadId) -> Result<bool, Error> {
        match self.control(ControlOp::SetContains(set, thread))? {
            ControlValue::Bool(b) => Ok(b),
            _ => unreachable!("contains answers with a bool"),
        }
    }

    /// The members of a set, in the order they joined (removals reorder).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.add_to_set(s, cx.id()).unwrap();
    ///     assert_eq!(cx.set_members(s).unwrap(), vec![cx.id()]);
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_members(&self, set: SetId) -> Result<Vec<ThreadId>, Error> {
        match self.control(ControlOp::SetMembers(set))? {
            ControlValue::Members(m) => Ok(m),
            _ => unreachable!("members answers with a list"),
        }
    }

    /// The set a thread belongs to.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| assert_eq!(cx.set_of(cx.id()), Ok(None))).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_of(&self, thread: ThreadId) -> Result<Option<SetId>, Error> {
        match self.control(ControlOp::SetOf(thread))? {
            ControlValue::SetOf(s) => Ok(s),
            _ => unreachable!("set_of answers with an optional set"),
        }
    }

    /// A thread's execution-time clock: CPU time consumed, including the running part. It
    /// saturates at `u64::MAX` ns (about 584 years) rather than wrapping.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     cx.work(Duration::from_millis(3));
    ///     assert_eq!(cx.thread_cpu_time(cx.id()), Ok(Duration::from_millis(3)));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn thread_cpu_time(&self, thread: ThreadId) -> Result<Duration, Error> {
        match self.control(ControlOp::ThreadClock(thread))? {
            ControlValue::Time(t) => Ok(t),
            _ => unreachable!("a clock answers with a time"),
        }
    }

    /// Set a thread's execution-time clock.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     cx.work(Duration::from_millis(3));
    ///     cx.set_thread_cpu_time(cx.id(), Duration::ZERO).unwrap();
    ///     assert_eq!(cx.thread_cpu_time(cx.id()), Ok(Duration::ZERO));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_thread_cpu_time(&self, thread: ThreadId, value: Duration) -> Result<(), Error> {
        self.control_unit(ControlOp::SetThreadClock(thread, value))
    }

    /// A set's group clock: CPU time consumed by its members while members, including the
    /// running parts. It saturates at `u64::MAX` ns rather than wrapping.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.work(Duration::from_millis(1)); // before joining: not counted
    ///     cx.add_to_set(s, cx.id()).unwrap();
    ///     cx.work(Duration::from_millis(2));
    ///     assert_eq!(cx.set_cpu_time(s), Ok(Duration::from_millis(2)));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_cpu_time(&self, set: SetId) -> Result<Duration, Error> {
        match self.control(ControlOp::GroupClock(set))? {
            ControlValue::Time(t) => Ok(t),
            _ => unreachable!("a clock answers with a time"),
        }
    }

    /// Set a group clock. A budget on the set keeps the amount it had left.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.set_set_cpu_time(s, Duration::from_millis(7)).unwrap();
    ///     assert_eq!(cx.set_cpu_time(s), Ok(Duration::from_millis(7)));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_set_cpu_time(&self, set: SetId, value: Duration) -> Result<(), Error> {
        self.control_unit(ControlOp::SetGroupClock(set, value))
    }

    /// Arm an execution-time timer on a thread's clock: `handler` runs inside the runtime when
    /// the clock reaches `at`. Replaces any timer armed on that clock.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     cx.arm_thread_timer(cx.id(), Duration::from_millis(2), |ev| assert_eq!(ev.now(), tempi::Time::from_millis(2))).unwrap();
    ///     cx.work(Duration::from_millis(5));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn arm_thread_timer(
        &self,
        thread: ThreadId,
        at: Duration,
        handler: impl FnMut(&mut EventCtx<'_>) + Send + 'static,
    ) -> Result<(), Error> {
        self.control_unit(ControlOp::ThreadTimer(thread, at, Box::new(handler)))
    }

    /// Arm an execution-time timer on a set's group clock (one per set; replaces any).
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.add_to_set(s, cx.id()).unwrap();
    ///     cx.arm_set_timer(s, Duration::from_millis(1), |ev| assert_eq!(ev.now(), tempi::Time::from_millis(1))).unwrap();
    ///     cx.work(Duration::from_millis(2));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn arm_set_timer(
        &self,
        set: SetId,
        at: Duration,
        handler: impl FnMut(&mut EventCtx<'_>) + Send + 'static,
    ) -> Result<(), Error> {
        self.control_unit(ControlOp::SetTimer(set, at, Box::new(handler)))
    }

    /// Give a set a budget (replacing any): from now on its members may consume
    /// `budget.amount()` before the budget's action applies.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.add_to_set(s, cx.id()).unwrap();
    ///     cx.set_budget(s, tempi::Budget::new(Duration::from_millis(4))).unwrap();
    ///     cx.work(Duration::from_millis(1));
    ///     assert_eq!(cx.budget_remaining(s), Ok(Duration::from_millis(3)));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_budget(&self, set: SetId, budget: Budget) -> Result<(), Error> {
        self.control_unit(ControlOp::SetBudget(set, budget))
    }

    /// Budget left on a set (Ada's `Budget_Remaining`).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     assert!(matches!(cx.budget_remaining(s), Err(tempi::Error::NoBudget(_))));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn budget_remaining(&self, set: SetId) -> Result<Duration, Error> {
        match self.control(ControlOp::BudgetLeft(set))? {
            ControlValue::Budget(left, _) => Ok(left),
            _ => unreachable!("a budget query answers with a budget"),
        }
    }

    /// Whether a set's budget is exhausted (Ada's `Budget_Has_Expired`).
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.add_to_set(s, cx.id()).unwrap();
    ///     cx.set_budget(s, tempi::Budget::new(Duration::from_millis(1))).unwrap();
    ///     cx.work(Duration::from_millis(2));
    ///     assert_eq!(cx.budget_exhausted(s), Ok(true));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn budget_exhausted(&self, set: SetId) -> Result<bool, Error> {
        match self.control(ControlOp::BudgetLeft(set))? {
            ControlValue::Budget(_, exhausted) => Ok(exhausted),
            _ => unreachable!("a budget query answers with a budget"),
        }
    }

    /// Set the budget left to `to` (Ada's `Replenish`); lifts an enforcement in force.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.set_budget(s, tempi::Budget::new(Duration::ZERO)).unwrap();
    ///     cx.replenish_budget(s, Duration::from_millis(5)).unwrap();
    ///     assert_eq!(cx.budget_remaining(s), Ok(Duration::from_millis(5)));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn replenish_budget(&self, set: SetId, to: Duration) -> Result<(), Error> {
        self.control_unit(ControlOp::Replenish(set, to))
    }

    /// Add `delta_ns` nanoseconds (negative to take away) to the budget left (Ada's `Add`).
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.set_budget(s, tempi::Budget::new(Duration::from_millis(2))).unwrap();
    ///     cx.add_budget(s, -1_000_000).unwrap();
    ///     assert_eq!(cx.budget_remaining(s), Ok(Duration::from_millis(1)));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn add_budget(&self, set: SetId, delta_ns: i64) -> Result<(), Error> {
        self.control_unit(ControlOp::AddBudget(set, delta_ns))
    }

    /// Release a job of sporadic thread `t` now (deferred if the minimum inter-arrival time
    /// has not passed since its last release).
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let s = rt.spawn(tempi::ThreadSpec::new("s").sporadic(Duration::from_millis(1)).max_jobs(1), |_| {}).unwrap();
    /// rt.spawn(tempi::ThreadSpec::new("trigger"), move |cx| cx.release(s).unwrap()).unwrap();
    /// assert_eq!(rt.run().unwrap().thread(s).unwrap().stats.completed, 1);
    /// ```
    pub fn release(&self, t: ThreadId) -> Result<(), Error> {
        match self.call(Request::Release(t)) {
            Reply::Released(r) => r.map_err(|e| *e),
            _ => unreachable!("the kernel answers a release with Released"),
        }
    }
}

enum JobEnd {
    Aborted,
    Killed,
    Panicked(String),
    Shutdown,
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

fn classify(payload: Box<dyn Any + Send>) -> JobEnd {
    if payload.is::<JobAborted>() {
        JobEnd::Aborted
    } else if payload.is::<RestartSection>() {
        // Only delivered inside `Mutex::critical`, which catches it; one that escapes (the
        // section was left some other way) ends the job like an abort.
        JobEnd::Aborted
    } else if payload.is::<Killed>() {
        JobEnd::Killed
    } else if payload.is::<Shutdown>() {
        JobEnd::Shutdown
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        JobEnd::Panicked((*s).to_string())
    } else if let Some(s) = payload.downcast_ref::<String>() {
        JobEnd::Panicked(s.clone())
    } else if FORCED_UNWIND.with(Cell::get) {
        // The coroutine library's forced unwind of a thread being dropped: it must keep going.
        resume_unwind(payload)
    } else {
        JobEnd::Panicked("a panic whose payload is not a message".to_string())
    }
}

thread_local! {
    /// The kernel is dropping a coroutine on this OS thread: an unwind that is neither the
    /// runtime's nor a message is the coroutine library's own, which must reach it.
    static FORCED_UNWIND: Cell<bool> = const { Cell::new(false) };
}

/// Drop a thread's coroutine, letting the coroutine library unwind it by force.
pub(crate) fn drop_coroutine<T>(co: T) {
    FORCED_UNWIND.with(|f| f.set(true));
    let dropped = catch_unwind(AssertUnwindSafe(move || drop(co)));
    FORCED_UNWIND.with(|f| f.set(false));
    // A panic escaping that unwind has nowhere to go.
    drop(dropped);
}

/// The code every thread runs on its own stack: jobs, one after another, until told to stop.
pub(crate) fn thread_main(
    yielder: &Yielder<Response, Request>,
    first: Response,
    (runtime, id, cpu): (u64, ThreadId, usize),
    real_clock: Option<RealClock>,
    fast_held: Rc<Cell<u32>>,
    mut body: Body,
) -> ThreadOutcome {
    let cx = Ctx {
        yielder,
        runtime,
        id,
        cpu,
        now: Cell::new(first.now),
        job: Cell::new(first.job),
        real_clock,
        fast_held,
        owed: Cell::new(false),
        deferred: RefCell::new(Vec::new()),
        stashed: Cell::new(None),
        runtime_unwind: Cell::new(false),
    };
    let mut reply = first.reply;
    loop {
        cx.runtime_unwind.set(false);
        let aborted = match reply {
            Reply::Go => match catch_unwind(AssertUnwindSafe(|| body(&cx))) {
                Ok(()) => false,
                Err(payload) => match classify(payload) {
                    JobEnd::Aborted => true,
                    JobEnd::Panicked(msg) => {
                        cx.settle_at_end();
                        return ThreadOutcome::Panicked(msg);
                    }
                    JobEnd::Shutdown => {
                        cx.forget_owed();
                        return ThreadOutcome::Completed;
                    }
                    JobEnd::Killed => {
                        cx.settle_at_end();
                        return ThreadOutcome::Killed;
                    }
                },
            },
            Reply::Kill => return ThreadOutcome::Killed,
            // Abandoned before it could start.
            Reply::Abort => true,
            _ => return ThreadOutcome::Completed,
        };
        cx.settle_at_end();
        let next = yielder.suspend(Request::JobDone { aborted });
        cx.now.set(next.now);
        cx.job.set(next.job);
        reply = next.reply;
    }
}

/// A timing-event handler's handle on the runtime. Handlers run inside the kernel, between
/// thread executions, on no thread of their own: they must not block.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Runtime, TimerSpec, Time};
/// let mut rt = Runtime::simulated(1);
/// rt.add_timer(TimerSpec::every(Duration::from_millis(2)), |ev| {
///     if ev.now() >= Time::from_millis(6) { ev.cancel() }
/// }).unwrap();
/// rt.run_until(Time::from_millis(20)).unwrap();
/// ```
pub struct EventCtx<'k> {
    pub(crate) now: Time,
    /// The tag of the runtime's thread ids: ids of other runtimes are refused.
    pub(crate) tag: u16,
    pub(crate) releases: &'k mut Vec<ThreadId>,
    pub(crate) cancelled: bool,
}

impl EventCtx<'_> {
    /// The instant the event fired.
    ///
    /// ```
    /// # let mut rt = tempi::Runtime::simulated(1);
    /// rt.add_timer(tempi::TimerSpec::at(tempi::Time::from_millis(3)), |ev| assert_eq!(ev.now(), tempi::Time::from_millis(3))).unwrap();
    /// # rt.run_until(tempi::Time::from_millis(5)).unwrap();
    /// ```
    pub fn now(&self) -> Time {
        self.now
    }

    /// Release a job of sporadic thread `t` (applied when the handler returns).
    ///
    /// # Errors
    /// [`Error::TooManyThreads`] if more releases are requested in one firing than the runtime
    /// has thread slots (the request list is pre-sized to that); [`Error::ForeignThread`] for
    /// an id of another runtime.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let s = rt.spawn(tempi::ThreadSpec::new("s").sporadic(Duration::ZERO).max_jobs(1), |_| {}).unwrap();
    /// rt.add_timer(tempi::TimerSpec::at(tempi::Time::from_millis(1)), move |ev| ev.release(s).unwrap()).unwrap();
    /// assert_eq!(rt.run().unwrap().thread(s).unwrap().stats.completed, 1);
    /// ```
    pub fn release(&mut self, t: ThreadId) -> Result<(), Error> {
        if t.tag() != self.tag {
            return Err(Error::ForeignThread(t));
        }
        if self.releases.len() == self.releases.capacity() {
            return Err(Error::TooManyThreads { max: self.releases.capacity() });
        }
        self.releases.push(t);
        Ok(())
    }

    /// Stop a periodic event from firing again.
    ///
    /// ```
    /// # let mut rt = tempi::Runtime::simulated(1);
    /// rt.add_timer(tempi::TimerSpec::every(std::time::Duration::from_millis(1)), |ev| ev.cancel()).unwrap();
    /// # rt.run_until(tempi::Time::from_millis(5)).unwrap();
    /// ```
    pub fn cancel(&mut self) {
        self.cancelled = true;
    }
}
