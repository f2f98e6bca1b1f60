//! The calls a thread makes into the runtime, and the code that runs on a thread's own stack.
//!
//! A thread talks to its kernel only by message: it suspends its coroutine with a [`Request`]
//! and is resumed with a [`Response`]. The kernel's state is therefore never borrowed while user
//! code runs, and every runtime call is a preemption point (a task boundary, in Spring's terms).
//! This module owns [`Ctx`], the handle a thread body receives, with its calls on time, work,
//! threads and priorities, and the raw lock, condition-variable and semaphore calls `sync`
//! builds its objects on. The messages are in `protocol.rs`, the set, clock and budget calls
//! in `ctx_control.rs`, the job loop in `job_loop.rs`, the handlers' `EventCtx` in
//! `event_ctx.rs`.
//!
//! Must not: reach kernel state: everything goes through a request.
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

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use crate::os::busy_cell::KernelId;
use crate::os::context::Yielder;

use crate::clock::RealClock;
use crate::error::Error;
use crate::objects::{LockError, LockSpec, SemSpec};
use crate::plain::ThreadId;
use crate::plain::{CondId, LockId, SemId};
use crate::policy::sched::Urgency;
use crate::thread::{ThreadOutcome, ThreadSpec};
use crate::time::{nanos, Time};

use crate::kernel::thread_side::calls::{self, answer_of_another_kind, Call, UserCall, WhileUnwinding};
use crate::kernel::thread_side::protocol::{Control, Interrupt, JobInfo, LockAnswer, Op, Request, Response};
use crate::kernel::thread_side::unwinds::unwind_for;

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
    pub(in crate::kernel) yielder: &'a Yielder<Response, Request>,
    /// The identity of the thread's runtime: objects of other runtimes are refused.
    pub(in crate::kernel) runtime: u64,
    /// Its kernel, the serial executor it runs under: what a handler it invokes is bound to.
    pub(in crate::kernel) executor: KernelId,
    pub(in crate::kernel) id: ThreadId,
    pub(in crate::kernel) cpu: usize,
    /// Runs on an OS thread of its own that the dispatcher may stop anywhere (real time,
    /// `ThreadSpec::os_backed`): it takes no lock on the fast path.
    pub(in crate::kernel) os_backed: bool,
    pub(in crate::kernel) now: Cell<Time>,
    pub(in crate::kernel) job: Cell<JobInfo>,
    pub(in crate::kernel) real_clock: Option<RealClock>,
    /// Real time: what [`Ctx::checkpoint`] compares with; `None` in virtual time.
    pub(in crate::kernel) watch: Option<Rc<crate::kernel::CheckpointWatch>>,
    /// Locks this thread holds through the fast path; shared with its control block.
    pub(in crate::kernel) fast_held: Rc<Cell<u32>>,
    /// Message fields to and from the kernel; shared with its control block.
    pub(in crate::kernel) mail: Rc<crate::kernel::messaging::messages::Exchange>,
    /// Something waits for the thread's next runtime call: releasing calls made while it
    /// unwound, or an interrupt that came back to a call that could not unwind.
    pub(in crate::kernel) owed: Cell<bool>,
    /// Releasing requests made while unwinding, in order (see "Runtime calls while unwinding").
    pub(in crate::kernel) deferred: RefCell<Vec<Request>>,
    /// An interrupt that came back to a deferred request, delivered at the next call.
    pub(in crate::kernel) stashed: Cell<Option<Interrupt>>,
    /// The unwind under way, if any, is the runtime's own (abort, stop, kill), not a panic: a
    /// guard it drops unlocks without poisoning. Cleared when the job loop catches it.
    pub(in crate::kernel) runtime_unwind: Cell<bool>,
}

impl<'a> Ctx<'a> {
    // Inlined into every runtime call, as are the lock calls: a thread resumed by the
    // dispatcher then continues in its own code instead of returning through frames whose
    // return addresses the CPU's return predictor no longer holds (the dispatcher's calls
    // and returns replaced them while the thread was suspended).
    /// Make `call` and return its answer; an interrupt unwinds the thread from here.
    #[inline(always)]
    pub(in crate::kernel) fn invoke<R: UserCall>(&self, call: R) -> R::Answer {
        self.invoke_with(move || call)
    }

    /// [`Ctx::invoke`] of the call `make` builds, built on each path separately: built once
    /// before the test, a call of more than two words is kept in memory for the cold path and
    /// copied from there into the request, and those copies read back bytes just written with
    /// stores of other sizes (a store-forwarding stall on each message call).
    #[inline(always)]
    pub(in crate::kernel) fn invoke_with<R: UserCall>(&self, make: impl FnOnce() -> R) -> R::Answer {
        if self.owed.get() || std::thread::panicking() {
            return self.call_cold(make());
        }
        self.call_now(make())
    }

    #[inline(always)]
    fn call_now<R: Call>(&self, call: R) -> R::Answer {
        match self.exchange(call) {
            Ok(answer) => answer,
            Err(interrupt) => self.unwind(interrupt),
        }
    }

    /// Suspend with `call` and read the kernel's reply as `call`'s answer or an interrupt.
    /// The one place an answer is read off the wire: the kernel answers each request with
    /// its own call's kind (see `protocol.rs`).
    #[inline(always)]
    pub(in crate::kernel) fn exchange<R: Call>(&self, call: R) -> Result<R::Answer, Interrupt> {
        let request = call.request();
        // Known when this is inlined: only a yield or a message request may be handled on this
        // stack (`cpu/direct.rs`).
        let r = if matches!(request, Request::Op(Op::Yield | Op::Msg(_))) {
            self.yielder.suspend_hosted(request)
        } else {
            self.yielder.suspend(request)
        };
        self.now.set(r.now);
        self.job.set(r.job);
        match r.reply {
            Ok(answer) => match R::answer(answer) {
                Some(answer) => Ok(answer),
                None => answer_of_another_kind(),
            },
            Err(interrupt) => Err(interrupt),
        }
    }

    #[cold]
    fn unwind(&self, interrupt: Interrupt) -> ! {
        // Aborts, stops and kills end the job or the thread: the job loop, which catches them,
        // clears the mark. A restart is caught inside `Mutex::critical` and keeps a panic's
        // poisoning for the locks nested in the section.
        if interrupt != Interrupt::Restart {
            self.runtime_unwind.set(true);
        }
        unwind_for(interrupt)
    }

    /// A runtime call made while unwinding, or with something owed from an unwinding.
    #[cold]
    #[inline(never)]
    fn call_cold<R: UserCall>(&self, call: R) -> R::Answer {
        if std::thread::panicking() {
            // Answer without suspending the thread.
            return match call.while_unwinding() {
                WhileUnwinding::Defer(request, answer) => {
                    self.defer(request);
                    answer
                }
                WhileUnwinding::Answer(answer) => answer,
            };
        }
        self.settle_owed();
        if let Some(interrupt) = self.stashed.take() {
            drop(call);
            self.unwind(interrupt);
        }
        self.call_now(call)
    }

    fn defer(&self, request: Request) {
        self.deferred.borrow_mut().push(request);
        self.owed.set(true);
    }

    /// Keep an interrupt that came back to a call that cannot unwind, for the next call.
    #[cold]
    fn stash(&self, interrupt: Interrupt) {
        if self.stashed.get().is_none() {
            self.stashed.set(Some(interrupt));
        }
        self.owed.set(true);
    }

    /// Make the requests deferred while unwinding, now that the unwind is over. An
    /// interrupt answering one of them is kept for the next call.
    fn settle_owed(&self) {
        let deferred = std::mem::take(&mut *self.deferred.borrow_mut());
        for request in deferred {
            let r = self.yielder.suspend(request);
            self.now.set(r.now);
            self.job.set(r.job);
            if let Err(interrupt) = r.reply
                && self.stashed.get().is_none()
            {
                self.stashed.set(Some(interrupt));
            }
        }
        self.owed.set(self.stashed.get().is_some());
    }

    /// At the end of a job or of the thread: make what is owed, forget a stashed interrupt
    /// (the kernel repeats what still holds: a kill, a stop).
    pub(in crate::kernel) fn settle_at_end(&self) {
        if self.owed.get() {
            self.settle_owed();
            self.stashed.set(None);
            self.owed.set(false);
        }
    }

    /// The runtime stops: nothing will take the deferred requests any more.
    pub(in crate::kernel) fn forget_owed(&self) {
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
    /// The identity of the runtime this thread belongs to ([`crate::Runtime::id`]).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let id = rt.id();
    /// rt.spawn(tempi::ThreadSpec::new("t"), move |cx| assert_eq!(cx.runtime_id(), id)).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn runtime_id(&self) -> crate::RuntimeId {
        crate::RuntimeId(self.runtime)
    }

    pub(crate) fn runtime(&self) -> u64 {
        self.runtime
    }

    /// The kernel it runs under, as an executor.
    #[inline]
    pub(crate) fn executor(&self) -> KernelId {
        self.executor
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
        self.invoke(calls::Work(nanos(d)));
    }

    /// Give the CPU to the next ready thread the policy chooses (possibly this one again).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("y"), |cx| cx.yield_now()).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn yield_now(&self) {
        self.invoke(calls::Yield);
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
        self.invoke(calls::SleepUntil(t));
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
        self.invoke(calls::Spawn(spec, Box::new(body)))
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
        self.invoke(calls::Join(t))
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
        self.invoke(calls::SetPriority(priority));
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
            match self.invoke(calls::Lock { lock, deadline, try_only, restartable }) {
                LockAnswer::Granted => return Ok(()),
                LockAnswer::Retry => continue,
                LockAnswer::Refused(e) => return Err(e),
                // Only global locks are answered so.
                LockAnswer::Spin => return Err(LockError::NotForGlobal),
            }
        }
    }

    /// Take global lock `g` (protocol `msrp`): the kernel makes this thread non-preemptible
    /// and, in virtual time, answers once the lock is its own; in real time the thread then
    /// takes its ticket and spins for it here, keeping its dispatcher (see
    /// `kernel::global_locks`).
    pub(crate) fn global_lock_raw(&self, g: &crate::objects::GlobalLock, try_only: bool) -> Result<(), LockError> {
        match self.invoke(calls::GlobalLock { global: g.index, try_only }) {
            LockAnswer::Granted => Ok(()),
            LockAnswer::Spin => {
                let ticket = g.take_ticket();
                // When the lock became this thread's: the spin's end, or without a spin the
                // kernel's instant of the request (no clock read on the uncontended path).
                let got = if !g.serves(ticket) {
                    // Held on another CPU: the spin's start and end go to the kernel with the
                    // release, which traces them and counts the spin (`ThreadStats::spin_time`).
                    let since = self.now();
                    while !g.serves(ticket) {
                        std::hint::spin_loop();
                    }
                    let until = self.now();
                    self.mail.spun.set(Some((since, until)));
                    until
                } else {
                    self.now.get()
                };
                g.owner.store(self.id.to_word(), std::sync::atomic::Ordering::Relaxed);
                if g.traced {
                    // Never before the release this acquisition follows (`GlobalLock::stamp`).
                    g.stamp_acquired(got);
                }
                Ok(())
            }
            LockAnswer::Retry => Err(LockError::WouldBlock),
            LockAnswer::Refused(e) => Err(e),
        }
    }

    /// Release global lock `g`, without unwinding (it runs in a guard's destructor). In real
    /// time the next ticket is served here at once, also while unwinding; the kernel is then
    /// told, so the thread becomes preemptible again.
    pub(crate) fn global_unlock_raw(&self, g: &crate::objects::GlobalLock) {
        use std::sync::atomic::Ordering;
        let (mut acquired, mut released) = (Time::ZERO, Time::ZERO);
        if let Some(clock) = &self.real_clock
            && g.owner.load(Ordering::Relaxed) == self.id.to_word()
        {
            if g.traced {
                // The release is stamped before the next ticket is served: once it is,
                // another CPU's thread may take the lock and stamp its acquisition, which
                // must not precede this release in the trace.
                (acquired, released) = g.stamp_release(clock.read());
            }
            g.serve_next();
        }
        let call = calls::GlobalUnlock(g.index, acquired, released);
        if std::thread::panicking() {
            self.defer(call.request());
            return;
        }
        if self.owed.get() {
            self.settle_owed();
        }
        if let Err(interrupt) = self.exchange(call) {
            self.stash(interrupt);
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
        self.unlock_now(lock, poison);
    }

    /// The answer to an unlock never carries an interrupt (the kernel keeps one pending for
    /// the next call); one that did would be kept for the next call too, not dropped.
    #[inline(always)]
    fn unlock_now(&self, lock: LockId, poison: bool) {
        if let Err(interrupt) = self.exchange(calls::Unlock(lock, poison)) {
            self.stash(interrupt);
        }
    }

    #[cold]
    #[inline(never)]
    fn unlock_cold(&self, lock: LockId, poison: bool) {
        if std::thread::panicking() {
            // Only a panic poisons: the runtime's own unwinds end code that did nothing wrong.
            let poison = poison && !self.runtime_unwind.get();
            self.defer(calls::Unlock(lock, poison).request());
            return;
        }
        // An unlock cannot unwind: a stashed interrupt waits for the next call.
        self.settle_owed();
        self.unlock_now(lock, poison);
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
        self.invoke(calls::CondWait { cond, lock, deadline })
    }

    pub(crate) fn cond_signal_raw(&self, cond: CondId, all: bool) -> Result<(), LockError> {
        self.invoke(calls::CondSignal { cond, all })
    }

    pub(crate) fn procure_raw(&self, sem: SemId, timeout: Option<Duration>, try_only: bool) -> Result<(), LockError> {
        let deadline = timeout.map(|d| self.now() + d);
        self.invoke(calls::Procure { sem, deadline, try_only }).map(|_unit| ())
    }

    pub(crate) fn vacate_raw(&self, sem: SemId) -> Result<(), LockError> {
        self.invoke(calls::Vacate(sem))
    }

    /// Create a lock from `spec` on this thread's CPU; `Mutex` wraps the id it answers.
    pub(crate) fn create_lock_raw(&self, spec: LockSpec) -> Result<LockId, Error> {
        self.invoke(Control::create_lock(spec.cpu(self.cpu)))
    }

    /// Create a condition variable on this thread's CPU.
    pub(crate) fn create_cond_raw(&self) -> Result<CondId, Error> {
        self.invoke(Control::create_cond(self.cpu))
    }

    /// Create a semaphore from `spec` on this thread's CPU.
    pub(crate) fn create_sem_raw(&self, spec: SemSpec) -> Result<SemId, Error> {
        self.invoke(Control::create_sem(spec.cpu(self.cpu)))
    }

    pub(crate) fn adopt_raw(&self, lock: LockId) {
        self.invoke(calls::Adopt(lock));
    }

    /// The thread runs on an OS thread of its own that its dispatcher may stop anywhere
    /// (`ThreadSpec::os_backed`, real time): it must not take the lock fast paths.
    #[inline(always)]
    pub(crate) fn os_backed(&self) -> bool {
        self.os_backed
    }

    /// Count a lock taken (`1`) or released (`-1`) through the fast path: the kernel defers
    /// aborts and kills while any lock is held.
    pub(crate) fn fast_held_add(&self, delta: i32) {
        self.fast_held.set(self.fast_held.get().wrapping_add_signed(delta));
    }

    pub(crate) fn clear_poison_raw(&self, lock: LockId) {
        self.invoke(calls::ClearPoison(lock));
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
        self.invoke(calls::UrgencyQuery)
    }

    /// Switch this thread's preemption on (`true`, the default) or off; returns the previous
    /// setting, which is what a section should restore (never switch it blindly back on:
    /// sections nest).
    ///
    /// While preemption is off, a more urgent thread that becomes ready does not take the CPU
    /// from this one, and the end of its time slice does not rotate it: both are held back and
    /// carried out the moment it switches preemption back on (a
    /// [`TraceKind::PreemptionDeferred`](crate::trace::TraceKind::PreemptionDeferred) record
    /// marks the instant). If it blocks, sleeps, yields or ends first, it gives up the CPU as
    /// usual and what was held back is dropped; the setting stays with the thread until it
    /// changes it. Budgets still apply: a demoted thread loses the CPU, a suspended or killed
    /// one stops, whatever this setting.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::{Runtime, ThreadSpec, Time};
    ///
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("low").priority(1), |cx| {
    ///     let old = cx.preemption(false);
    ///     assert!(old);
    ///     cx.work(Duration::from_millis(3)); // "high" is released at 1 ms and waits
    ///     cx.preemption(old); // "high" takes the CPU here, at 3 ms
    ///     cx.work(Duration::from_millis(1));
    /// }).unwrap();
    /// let high = ThreadSpec::new("high").priority(5).periodic(Duration::from_millis(10));
    /// let high = high.phase(Duration::from_millis(1)).max_jobs(1);
    /// rt.spawn(high, |cx| {
    ///     assert_eq!(cx.now(), Time::from_millis(3));
    ///     cx.work(Duration::from_millis(2));
    /// }).unwrap();
    /// assert_eq!(rt.run().unwrap().end, Time::from_millis(6));
    /// ```
    pub fn preemption(&self, on: bool) -> bool {
        self.invoke(calls::Preemption(on))
    }

    /// End thread `t` at its next task boundary, as a budget's kill does: it is unwound at
    /// its next runtime call (after its last unlock), or at once if it waits or sleeps, and
    /// ends as [`ThreadOutcome::Killed`]. From the kill on it is released no more (a release
    /// due before it has run its end starts no job and is not counted). `t` may run on another CPU: in real time the request
    /// is posted to that CPU's queue, and fails with [`Error::QueueFull`] when the queue has
    /// no room. A thread that has ended is an error ([`Error::UnknownThread`]) on this CPU; on
    /// another CPU in real time the call returns once the request is posted, and a request the
    /// target CPU cannot carry out is counted in [`crate::CrossCpuStats::refused`] and traced
    /// ([`crate::trace::TraceKind::CrossCpuRefused`]) on this CPU.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(2);
    /// let victim = rt.spawn(tempi::ThreadSpec::new("victim").cpu(1), |cx| cx.sleep(Duration::from_secs(1))).unwrap();
    /// rt.spawn(tempi::ThreadSpec::new("killer"), move |cx| cx.kill(victim).unwrap()).unwrap();
    /// let out = rt.run().unwrap();
    /// assert_eq!(out.thread(victim).unwrap().outcome, Some(tempi::ThreadOutcome::Killed));
    /// ```
    pub fn kill(&self, t: ThreadId) -> Result<(), Error> {
        self.invoke(calls::Kill(t))
    }

    /// Change thread `t`'s base priority (see [`Ctx::set_priority`]); `t` may run on another
    /// CPU, with the same errors as [`Ctx::kill`].
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(2);
    /// let t = rt.spawn(tempi::ThreadSpec::new("t").cpu(1).priority(1), |cx| cx.work(Duration::from_millis(1))).unwrap();
    /// rt.spawn(tempi::ThreadSpec::new("boss"), move |cx| cx.set_priority_of(t, 9).unwrap()).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_priority_of(&self, t: ThreadId, priority: i32) -> Result<(), Error> {
        self.invoke(calls::SetPriorityOf(t, priority))
    }

    /// A cooperative preemption point for code that computes for long without calling the
    /// runtime: if the kernel has something due on this CPU — a timer (a release, a wake-up,
    /// a time slice, a deadline), an execution-time event (a budget or a CPU-time timer), the
    /// run's end — or another CPU posted a request, the thread yields to the kernel, which
    /// does what it does at any runtime call (and preempts the thread if something more
    /// urgent is now ready); otherwise it returns at once, after one atomic load and one
    /// clock read.
    ///
    /// Without checkpoints a thread (unless OS-backed: [`crate::ThreadSpec::os_backed`]) is
    /// preempted only at its runtime calls, so the longest
    /// stretch of its code between two runtime calls or checkpoints bounds how late a more
    /// urgent release on its CPU starts (plus the dispatcher's own switch time). In virtual
    /// time nothing happens between runtime calls (time passes only in `work`, `sleep` and
    /// waits, where the kernel handles every event at its instant), so a checkpoint returns
    /// at once.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::real_time(1);
    /// rt.spawn(tempi::ThreadSpec::new("loop"), |cx| {
    ///     let mut x = 0u64;
    ///     for i in 0..10_000u64 {
    ///         x = x.wrapping_mul(31).wrapping_add(i);
    ///         cx.checkpoint();
    ///     }
    ///     std::hint::black_box(x);
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    #[inline]
    pub fn checkpoint(&self) {
        let (Some(watch), Some(clock)) = (&self.watch, &self.real_clock) else { return };
        if watch.bell.load(std::sync::atomic::Ordering::Relaxed)
            || clock.read().as_nanos() >= watch.due.load(std::sync::atomic::Ordering::Relaxed)
        {
            self.invoke(calls::Checkpoint);
        }
    }

    /// Release a job of sporadic thread `t` now (deferred if the minimum inter-arrival time
    /// has not passed since its last release). `t` may run on another CPU, with the same
    /// errors as [`Ctx::kill`] (plus [`Error::NotSporadic`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let s = rt.spawn(tempi::ThreadSpec::new("s").sporadic(Duration::from_millis(1)).max_jobs(1), |_| {}).unwrap();
    /// rt.spawn(tempi::ThreadSpec::new("trigger"), move |cx| cx.release(s).unwrap()).unwrap();
    /// assert_eq!(rt.run().unwrap().thread(s).unwrap().stats.completed, 1);
    /// ```
    pub fn release(&self, t: ThreadId) -> Result<(), Error> {
        self.invoke(calls::Release(t))
    }
}
