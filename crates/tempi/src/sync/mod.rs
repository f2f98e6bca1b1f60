//! Real-time synchronisation: a mutex that owns its data, under a pluggable locking protocol.
//!
//! Owns the user-facing types ([`Mutex`], [`MutexGuard`], [`LockSpec`], [`LockId`],
//! [`LockError`]). The lock's state (owner, waiters, ceiling) lives in the kernel of the lock's
//! CPU (`kernel::locks`); the protocol is a [`crate::policy::lock::LockPolicy`]. Locking and
//! unlocking are runtime calls, so they are preemption points, except on the uncontended fast
//! path of BP and BPI locks (see [`Mutex::lock`]). This module holds the `unsafe` that lets the
//! lock's owner reach the data without a second lock.
//!
//! # Every object belongs to one runtime and one CPU
//!
//! A [`Mutex`], [`Condvar`] or [`Semaphore`] is bound to the runtime that created it (each
//! runtime has an identity no other runtime in the process shares) and to one CPU of it. A
//! thread of another runtime that uses it gets [`LockError::ForeignRuntime`]. A mutex under a
//! single-CPU protocol refuses a thread of another CPU with [`LockError::CrossCpu`] (both
//! CPU numbers); condition variables and semaphores serve every CPU of their runtime —
//! waiting, notifying, taking and giving units back — in virtual time directly, in real time
//! through requests to the object's CPU, which keeps its queue (see ARCHITECTURE.md,
//! "Cross-CPU operations"). Nothing is touched before these checks, so sharing an
//! `Arc<Mutex<_>>` between two runtimes on two OS threads is refused, never a race.
//!
//! # Errors never leave a lock held
//!
//! A call that fails holds no lock afterwards: `lock`, `try_lock`, `lock_timeout` and
//! `critical` hold nothing when they fail, and [`Condvar::wait`] / [`Condvar::wait_timeout`],
//! which consume the guard, release the lock on every error (refused before waiting, or the
//! lock could not be taken back after it), so the caller may lock again.
//!
//! # A leaked guard
//!
//! A guard given to `std::mem::forget` keeps its lock held by its thread, as any held lock
//! is kept, until the job that took it ends. A guard cannot outlive the job (it borrows the
//! job's [`Ctx`]), so the kernel then releases the lock and marks it poisoned, since the data
//! may be half-updated: the next `lock` gets [`LockError::Poisoned`] until
//! [`Mutex::clear_poison`]. This is the same whether the lock was taken on the fast path or
//! through the kernel, with tracing on or off.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use tempi::sync::LockSpec;
//! use tempi::{Runtime, ThreadSpec};
//!
//! let mut rt = Runtime::simulated(1);
//! let counter = Arc::new(rt.create_mutex(0u32, LockSpec::new("counter").protocol("bpi")).unwrap());
//! for name in ["a", "b"] {
//!     let c = counter.clone();
//!     rt.spawn(ThreadSpec::new(name), move |cx| {
//!         let mut n = c.lock(cx).unwrap();
//!         cx.work(Duration::from_millis(1)); // inside the critical section
//!         *n += 1;
//!     }).unwrap();
//! }
//! rt.run().unwrap();
//! ```

mod ctx_objects;

use std::cell::UnsafeCell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::kernel::Ctx;

pub use crate::objects::{CondId, LockError, LockId, LockSpec, SemId, SemSpec};
pub(crate) use crate::objects::{GlobalLock, LockWord};

/// A mutual-exclusion lock that owns its data, under a real-time locking protocol.
///
/// Shared between threads with an `Arc`. Only threads of the lock's runtime and CPU may lock
/// it: others get [`LockError::ForeignRuntime`] or [`LockError::CrossCpu`].
pub struct Mutex<T> {
    id: LockId,
    cpu: usize,
    /// The identity of the runtime that created it.
    runtime: u64,
    word: Arc<LockWord>,
    /// A global lock (protocol `msrp`): its shared ticket lock. `None` for a CPU-local lock.
    global: Option<Arc<GlobalLock>>,
    data: UnsafeCell<T>,
}

// SAFETY: the data and the lock word are reached only by threads of the lock's own runtime and
// CPU, and every such access happens on one OS thread, one at a time:
// - A thread reaches the data only through a `MutexGuard` or inside `Mutex::critical`, which
//   exist only once `try_fast` or the kernel has made the calling thread the owner. Both are
//   reached only after checking that the caller's `Ctx` is of the lock's runtime (runtime
//   identities are unique in the process and never reused) and of the lock's CPU; any other
//   caller is refused before it touches the word or the data.
// - Every thread of one runtime's CPU is a coroutine resumed by a single dispatcher, on one OS
//   thread (the only kernel of a virtual-time runtime, or the CPU's dispatcher in real time),
//   and coroutines of one dispatcher never run at the same time. The kernel reads and writes
//   the word on that same OS thread. So the fast path's load of the word and its store cannot
//   be interleaved with another thread's, and a free word gives the lock to one thread.
// - An OS-backed thread (`ThreadSpec::os_backed`, real time) runs its code on an OS thread of
//   its own and may be stopped anywhere, so it never takes the fast paths (`try_fast` and
//   `release_fast` decline before touching the word): it locks and unlocks only through the
//   kernel, on the dispatcher's OS thread. Its dispatcher waits while it runs, and the
//   handover either way is ordered by a release/acquire pair (`os/worker.rs`), so its
//   accesses to the data as owner are ordered with every other owner's.
// - The kernel grants a lock to one thread at a time, and only while the word says free (it
//   adopts a fast-path owner before deciding).
// - A guard borrows its thread's `Ctx` (not `Send`), so it stays on that OS thread and ends
//   with its job; the lock is not released while a guard lives, except by the guard itself
//   or by the condition wait that consumes it.
// No two threads therefore reach the data at once, and `T: Send` lets it be used from
// whichever OS thread runs the lock's CPU. The word is atomic only so that the type is
// `Sync`; relaxed order suffices since every access is on one OS thread.
// A global lock (protocol `msrp`) is reached by threads of every CPU of its runtime, on
// several OS threads in real time. Its guard exists only once the calling thread owns the
// lock's ticket: granted by the one kernel that serves the tickets (virtual time, one OS
// thread), or, in real time, once `serving` equals the ticket the thread took from `next`
// (a fetch-and-add: each ticket goes to one thread). The owner serves the next ticket only
// after its last access to the data, with a release store that the next owner's acquire
// load of `serving` observes, so accesses from different OS threads are ordered and never
// overlap; `T: Send` lets the data move between them.
unsafe impl<T: Send> Sync for Mutex<T> {}

impl<T: fmt::Debug> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Mutex");
        d.field("id", &self.id);
        if let Some(g) = &self.global {
            d.field("global", &g.name);
        }
        d.finish_non_exhaustive()
    }
}

impl<T> Mutex<T> {
    pub(crate) fn new(id: LockId, cpu: usize, runtime: u64, word: Arc<LockWord>, value: T) -> Mutex<T> {
        Mutex { id, cpu, runtime, word, global: None, data: UnsafeCell::new(value) }
    }

    /// A global lock (protocol `msrp`) of runtime `runtime`, used from any of its CPUs.
    pub(crate) fn new_global(runtime: u64, lock: Arc<GlobalLock>, value: T) -> Mutex<T> {
        Mutex {
            id: lock.id(),
            cpu: usize::MAX,
            runtime,
            word: Arc::default(),
            global: Some(lock),
            data: UnsafeCell::new(value),
        }
    }

    /// The data, once no thread can reach the lock any more (the `Mutex` is owned: take it
    /// back from its `Arc` with `Arc::try_unwrap` after the run).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let m = std::sync::Arc::new(rt.create_mutex(1u32, tempi::sync::LockSpec::new("m")).unwrap());
    /// let m2 = m.clone();
    /// rt.spawn(tempi::ThreadSpec::new("t"), move |cx| *m2.lock(cx).unwrap() += 1).unwrap();
    /// rt.run().unwrap();
    /// assert_eq!(std::sync::Arc::try_unwrap(m).unwrap().into_inner(), 2);
    /// ```
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }

    /// Whether this is a global lock (protocol `msrp`), shared by the runtime's CPUs.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(2);
    /// let g = rt.create_mutex((), tempi::sync::LockSpec::new("g").protocol("msrp")).unwrap();
    /// let l = rt.create_mutex((), tempi::sync::LockSpec::new("l").protocol("srp").ceiling(1)).unwrap();
    /// assert!(g.is_global() && !l.is_global());
    /// ```
    pub fn is_global(&self) -> bool {
        self.global.is_some()
    }

    /// Take the lock without a kernel call if it is free and the fast path is open. Only a
    /// thread of the lock's runtime and CPU gets past the first test; it is then the only
    /// thread that can touch the word (see the `Sync` impl), so nothing can slip in between
    /// the check and the store.
    #[inline(always)]
    fn try_fast(&self, cx: &Ctx<'_>) -> bool {
        let w = &self.word;
        if cx.runtime() != self.runtime
            || cx.cpu() != self.cpu
            || cx.os_backed()
            || !w.fast.load(Ordering::Relaxed)
            || w.owner.load(Ordering::Relaxed) != 0
        {
            return false;
        }
        w.owner.store(cx.id().to_word(), Ordering::Relaxed);
        cx.fast_held_add(1);
        true
    }

    /// The lock's id.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let m = rt.create_mutex(0, tempi::sync::LockSpec::new("m")).unwrap();
    /// let _ = m.id();
    /// ```
    pub fn id(&self) -> LockId {
        self.id
    }

    /// Refuse a thread of another runtime or CPU before anything is touched.
    #[inline(always)]
    fn check_home(&self, cx: &Ctx<'_>) -> Result<(), LockError> {
        if cx.runtime() != self.runtime {
            return Err(LockError::ForeignRuntime);
        }
        if cx.cpu() != self.cpu && self.global.is_none() {
            return Err(LockError::CrossCpu { from: cx.cpu(), to: self.cpu });
        }
        Ok(())
    }

    /// The kernel path of every lock call, once the fast path has declined.
    #[inline(always)]
    fn lock_slow(
        &self,
        cx: &Ctx<'_>,
        timeout: Option<Duration>,
        try_only: bool,
        restartable: bool,
    ) -> Result<(), LockError> {
        self.check_home(cx)?;
        if let Some(g) = &self.global {
            if timeout.is_some() || restartable {
                return Err(LockError::NotForGlobal);
            }
            return cx.global_lock_raw(g, try_only);
        }
        cx.lock_raw(self.id, timeout, try_only, restartable)
    }

    #[inline(always)]
    fn guard<'a>(&'a self, cx: &'a Ctx<'a>) -> MutexGuard<'a, T> {
        MutexGuard { id: self.id, cx, held: true, mutex: self }
    }

    /// Release through the fast path if the kernel does not manage this ownership.
    #[inline(always)]
    fn release_fast(&self, cx: &Ctx<'_>) -> bool {
        let w = &self.word;
        if cx.os_backed() || w.managed.load(Ordering::Relaxed) || w.owner.load(Ordering::Relaxed) != cx.id().to_word() {
            return false;
        }
        w.owner.store(0, Ordering::Relaxed);
        cx.fast_held_add(-1);
        true
    }

    /// Run `section` on the data under the lock, as a *restartable* critical section: under
    /// the RCS protocol a more urgent thread that wants the lock while this one is preempted
    /// inside `section` aborts it; the data is put back as it was on entry (a clone taken
    /// then), the lock is released, and `section` runs again from the start once the lock is
    /// free. Under the other protocols this is plainly lock, run, unlock. `section` must
    /// therefore have no effect outside the data that it cannot repeat.
    ///
    /// A panic inside `section` releases the lock and marks it poisoned. An error means the
    /// lock was not taken and `section` did not run. An OS-backed thread in real time
    /// ([`crate::ThreadSpec::os_backed`]) may be stopped anywhere in `section`, not only at a
    /// runtime call, so it cannot be rolled back safely: it gets
    /// [`LockError::NotForOsBacked`].
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let m = std::sync::Arc::new(rt.create_mutex(0u32, tempi::sync::LockSpec::new("m").protocol("rcs")).unwrap());
    /// rt.spawn(tempi::ThreadSpec::new("t"), move |cx| {
    ///     let n = m.critical(cx, |n| { *n += 1; *n }).unwrap();
    ///     assert_eq!(n, 1);
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn critical<R>(&self, cx: &Ctx<'_>, mut section: impl FnMut(&mut T) -> R) -> Result<R, LockError>
    where
        T: Clone,
    {
        if cx.os_backed() {
            return Err(LockError::NotForOsBacked);
        }
        loop {
            self.lock_slow(cx, None, false, true)?;
            // SAFETY: this thread owns the lock from `lock_raw` until the `unlock_raw` below
            // (see the `Sync` impl), and `data` does not outlive that span.
            let data = unsafe { &mut *self.data.get() };
            let snapshot = data.clone();
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| section(data)));
            match outcome {
                Ok(r) => {
                    cx.unlock_raw(self.id, false);
                    return Ok(r);
                }
                Err(payload) if crate::kernel::is_restart(&*payload) => {
                    *data = snapshot;
                    cx.unlock_raw(self.id, false);
                }
                Err(payload) => {
                    cx.unlock_raw(self.id, crate::kernel::is_panic(&*payload));
                    std::panic::resume_unwind(payload);
                }
            }
        }
    }

    /// Lock, waiting as long as it takes (under the lock's protocol).
    ///
    /// Under BP and BPI, with tracing off and no simulated lock costs, a free lock is taken
    /// without a runtime call (the kernel takes the ownership over if another thread has to
    /// wait); such an acquisition is then not a preemption point.
    ///
    /// # Errors
    /// [`LockError::ForeignRuntime`] / [`LockError::CrossCpu`] for a thread of another runtime
    /// or CPU, [`LockError::AlreadyHeld`], [`LockError::Poisoned`], [`LockError::Deadlock`];
    /// the lock is not held then.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let m = std::sync::Arc::new(rt.create_mutex(vec![1], tempi::sync::LockSpec::new("m")).unwrap());
    /// rt.spawn(tempi::ThreadSpec::new("t"), move |cx| m.lock(cx).unwrap().push(2)).unwrap();
    /// rt.run().unwrap();
    /// ```
    #[inline(always)]
    pub fn lock<'a>(&'a self, cx: &'a Ctx<'a>) -> Result<MutexGuard<'a, T>, LockError> {
        if !self.try_fast(cx) {
            self.lock_slow(cx, None, false, false)?;
        }
        Ok(self.guard(cx))
    }

    /// Lock, or fail with [`LockError::Timeout`] after `timeout`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let m = std::sync::Arc::new(rt.create_mutex((), tempi::sync::LockSpec::new("m")).unwrap());
    /// rt.spawn(tempi::ThreadSpec::new("t"), move |cx| { m.lock_timeout(cx, Duration::from_millis(1)).unwrap(); }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn lock_timeout<'a>(&'a self, cx: &'a Ctx<'a>, timeout: Duration) -> Result<MutexGuard<'a, T>, LockError> {
        self.lock_slow(cx, Some(timeout), false, false)?;
        Ok(self.guard(cx))
    }

    /// Lock only if that needs no waiting.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let m = std::sync::Arc::new(rt.create_mutex((), tempi::sync::LockSpec::new("m")).unwrap());
    /// rt.spawn(tempi::ThreadSpec::new("t"), move |cx| {
    ///     let g = m.try_lock(cx).unwrap();
    ///     assert_eq!(m.try_lock(cx).err(), Some(tempi::sync::LockError::AlreadyHeld));
    ///     drop(g);
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn try_lock<'a>(&'a self, cx: &'a Ctx<'a>) -> Result<MutexGuard<'a, T>, LockError> {
        if !self.try_fast(cx) {
            self.lock_slow(cx, None, true, false)?;
        }
        Ok(self.guard(cx))
    }

    /// Clear the poisoned mark after checking the data.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let m = std::sync::Arc::new(rt.create_mutex((), tempi::sync::LockSpec::new("m")).unwrap());
    /// rt.spawn(tempi::ThreadSpec::new("t"), move |cx| m.clear_poison(cx).unwrap()).unwrap();
    /// rt.run().unwrap();
    /// ```
    ///
    /// # Errors
    /// [`LockError::ForeignRuntime`] / [`LockError::CrossCpu`] for a thread of another runtime
    /// or CPU.
    pub fn clear_poison(&self, cx: &Ctx<'_>) -> Result<(), LockError> {
        self.check_home(cx)?;
        cx.clear_poison_raw(self.id);
        Ok(())
    }
}

/// Access to a locked [`Mutex`]'s data; dropping it unlocks (also when a panic, an abort or a
/// kill unwinds through it, in which case the lock is marked poisoned for a panic).
pub struct MutexGuard<'a, T> {
    id: LockId,
    cx: &'a Ctx<'a>,
    /// `false` once the guard has let go of the lock (dropped, or handed to a condition wait).
    held: bool,
    mutex: &'a Mutex<T>,
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: a guard is made only once its thread, of the lock's runtime and CPU, owns the
        // lock, and the lock stays its own while the guard lives (see the `Sync` impl): no
        // other thread reaches the data meanwhile. `held` is cleared only by the condition
        // wait that consumes the guard.
        unsafe { &*self.mutex.data.get() }
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`; `&mut self` makes this the only reference through the guard.
        unsafe { &mut *self.mutex.data.get() }
    }
}

impl<T> Drop for MutexGuard<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        if std::mem::take(&mut self.held) {
            if let Some(g) = &self.mutex.global {
                // A global lock is never poisoned: its section runs to its end or its
                // thread's, and nothing else waits inside it.
                self.cx.global_unlock_raw(g);
                return;
            }
            let poison = std::thread::panicking();
            if poison || !self.mutex.release_fast(self.cx) {
                self.cx.unlock_raw(self.id, poison);
            }
        }
    }
}

/// A condition variable for [`Mutex`]es of its CPU. Waiters are served most urgent first
/// (arrival order among equals), as the locking protocols order their waiters; waiting
/// releases the lock, and waking reacquires it under the lock's protocol.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use tempi::{Runtime, ThreadSpec};
/// use tempi::sync::LockSpec;
///
/// let mut rt = Runtime::simulated(1);
/// let ready = Arc::new(rt.create_mutex(false, LockSpec::new("ready")).unwrap());
/// let cv = Arc::new(rt.create_condvar(0).unwrap());
/// let (r, c) = (ready.clone(), cv.clone());
/// rt.spawn(ThreadSpec::new("consumer").priority(2), move |cx| {
///     let mut g = r.lock(cx).unwrap();
///     while !*g {
///         g = c.wait(cx, g).unwrap();
///     }
///     assert_eq!(cx.now(), tempi::Time::from_millis(3));
/// }).unwrap();
/// rt.spawn(ThreadSpec::new("producer").priority(1), move |cx| {
///     cx.work(Duration::from_millis(3));
///     *ready.lock(cx).unwrap() = true;
///     cv.notify_one(cx).unwrap();
/// }).unwrap();
/// rt.run().unwrap();
/// ```
#[derive(Debug)]
pub struct Condvar {
    id: CondId,
    cpu: usize,
    /// The identity of the runtime that created it.
    runtime: u64,
}

/// Refuse a caller of another runtime, or (when `same_cpu`) of another CPU than `cpu`.
#[inline(always)]
fn check_home(cx: &Ctx<'_>, runtime: u64, cpu: usize, same_cpu: bool) -> Result<(), LockError> {
    if cx.runtime() != runtime {
        return Err(LockError::ForeignRuntime);
    }
    if same_cpu && cx.cpu() != cpu {
        return Err(LockError::CrossCpu { from: cx.cpu(), to: cpu });
    }
    Ok(())
}

/// The kernel's answer about an object of CPU `to`, with the CPU numbers of a cross-CPU
/// refusal filled in (the kernel of one real-time CPU does not know the other CPUs' objects).
fn with_cpus<R>(r: Result<R, LockError>, cx: &Ctx<'_>, to: usize) -> Result<R, LockError> {
    r.map_err(|e| match e {
        LockError::CrossCpu { .. } => LockError::CrossCpu { from: cx.cpu(), to },
        e => e,
    })
}

impl Condvar {
    pub(crate) fn new(id: CondId, cpu: usize, runtime: u64) -> Condvar {
        Condvar { id, cpu, runtime }
    }

    /// The condition variable's id.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// assert_ne!(rt.create_condvar(0).unwrap().id(), rt.create_condvar(0).unwrap().id());
    /// ```
    pub fn id(&self) -> CondId {
        self.id
    }

    /// Release the guard's lock, wait for a notification, and lock again.
    ///
    /// # Errors
    /// On any error the lock is released (the guard is given back to the lock) and not
    /// taken again: [`LockError::ForeignRuntime`] (the condition variable belongs to another
    /// runtime; refused before waiting), in real time [`LockError::QueueFull`] or
    /// [`LockError::ProxiesFull`] for a condition variable of another CPU (the wait could not
    /// be queued there), or an error of taking the lock back after the wait
    /// ([`LockError::Poisoned`], [`LockError::Deadlock`], [`LockError::CrossCpu`] for a
    /// single-CPU lock of another CPU).
    ///
    /// A thread of any CPU may wait. In real time, waiting on a condition variable of another
    /// CPU is a request to that CPU, where the waiter is queued in the order a local waiter
    /// would be; the lock (of the waiter's own CPU) is released before and taken back after
    /// on the waiter's CPU.
    ///
    /// ```
    /// # let _ = tempi::sync::Condvar::wait::<()>;
    /// ```
    pub fn wait<'a, T>(&self, cx: &'a Ctx<'a>, guard: MutexGuard<'a, T>) -> Result<MutexGuard<'a, T>, LockError> {
        self.wait_timeout(cx, guard, None).map(|(g, _)| g)
    }

    /// Like [`Condvar::wait`], giving up after `timeout`; the flag says whether it timed out.
    /// The lock is held again either way. On an error the lock is released, as for
    /// [`Condvar::wait`].
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let m = std::sync::Arc::new(rt.create_mutex((), tempi::sync::LockSpec::new("m")).unwrap());
    /// let cv = std::sync::Arc::new(rt.create_condvar(0).unwrap());
    /// rt.spawn(tempi::ThreadSpec::new("t"), move |cx| {
    ///     let g = m.lock(cx).unwrap();
    ///     let (_g, timed_out) = cv.wait_timeout(cx, g, Some(Duration::from_millis(2))).unwrap();
    ///     assert!(timed_out);
    ///     assert_eq!(cx.now(), tempi::Time::from_millis(2));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn wait_timeout<'a, T>(
        &self,
        cx: &'a Ctx<'a>,
        mut guard: MutexGuard<'a, T>,
        timeout: Option<Duration>,
    ) -> Result<(MutexGuard<'a, T>, bool), LockError> {
        // Refused before waiting: dropping the guard releases the lock.
        check_home(cx, self.runtime, self.cpu, false)?;
        if guard.mutex.global.is_some() {
            return Err(LockError::NotForGlobal);
        }
        let mutex = guard.mutex;
        // Hand the lock to the kernel: the guard must not unlock it again when dropped.
        guard.held = false;
        drop(guard);
        // The kernel must know this ownership to release it inside the wait.
        if !mutex.word.managed.load(Ordering::Relaxed) {
            cx.adopt_raw(mutex.id);
        }
        // The kernel releases the lock whether the wait succeeds or is refused.
        let timed_out = with_cpus(cx.cond_wait_raw(self.id, mutex.id, timeout), cx, self.cpu)?;
        if !mutex.try_fast(cx) {
            cx.lock_raw(mutex.id, None, false, false)?;
        }
        Ok((mutex.guard(cx), timed_out))
    }

    /// Wake the most urgent waiter, if any. From a thread of another real-time CPU the
    /// notification is posted to the condition variable's CPU, whose kernel wakes the waiter
    /// when it takes the request; the call returns once it is posted (virtual time wakes the
    /// waiter at once).
    ///
    /// # Errors
    /// [`LockError::ForeignRuntime`] for a thread of another runtime; in real time,
    /// [`LockError::QueueFull`] if the request queue of the condition variable's CPU is full.
    ///
    /// ```
    /// # let _ = tempi::sync::Condvar::notify_one;
    /// ```
    pub fn notify_one(&self, cx: &Ctx<'_>) -> Result<(), LockError> {
        check_home(cx, self.runtime, self.cpu, false)?;
        with_cpus(cx.cond_signal_raw(self.id, false), cx, self.cpu)
    }

    /// Wake every waiter.
    ///
    /// # Errors
    /// As [`Condvar::notify_one`].
    ///
    /// ```
    /// # let _ = tempi::sync::Condvar::notify_all;
    /// ```
    pub fn notify_all(&self, cx: &Ctx<'_>) -> Result<(), LockError> {
        check_home(cx, self.runtime, self.cpu, false)?;
        with_cpus(cx.cond_signal_raw(self.id, true), cx, self.cpu)
    }
}

/// A counting semaphore (FREE JAZZ's `procure` / `vacate`), with a pluggable waiter order.
/// When a thread blocks on it the scheduler is told (`Scheduler::on_blocked`).
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// let mut rt = tempi::Runtime::simulated(1);
/// let s = Arc::new(rt.create_semaphore(tempi::sync::SemSpec::new("one", 1)).unwrap());
/// for name in ["a", "b"] {
///     let s = s.clone();
///     rt.spawn(tempi::ThreadSpec::new(name), move |cx| {
///         s.procure(cx).unwrap();
///         cx.work(Duration::from_millis(1));
///         s.vacate(cx).unwrap();
///     }).unwrap();
/// }
/// assert_eq!(rt.run().unwrap().end, tempi::Time::from_millis(2));
/// ```
#[derive(Debug)]
pub struct Semaphore {
    id: SemId,
    cpu: usize,
    /// The identity of the runtime that created it.
    runtime: u64,
}

impl Semaphore {
    pub(crate) fn new(id: SemId, cpu: usize, runtime: u64) -> Semaphore {
        Semaphore { id, cpu, runtime }
    }
    /// The semaphore's id.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let _ = rt.create_semaphore(tempi::sync::SemSpec::new("s", 1)).unwrap().id();
    /// ```
    pub fn id(&self) -> SemId {
        self.id
    }
    /// Take a unit, waiting as long as it takes.
    ///
    /// ```
    /// # let _ = tempi::sync::Semaphore::procure;
    /// ```
    ///
    /// A thread of any CPU may take a unit. In real time, from another CPU, the request goes
    /// to the semaphore's CPU, where the thread waits in the order a local waiter would.
    ///
    /// # Errors
    /// [`LockError::ForeignRuntime`] for a thread of another runtime; in real time, from
    /// another CPU, [`LockError::QueueFull`] (the request could not be posted) or
    /// [`LockError::ProxiesFull`] (no room for another CPU's waiter there).
    pub fn procure(&self, cx: &Ctx<'_>) -> Result<(), LockError> {
        check_home(cx, self.runtime, self.cpu, false)?;
        with_cpus(cx.procure_raw(self.id, None, false), cx, self.cpu)
    }
    /// Take a unit, or fail with [`LockError::Timeout`] after `timeout`.
    ///
    /// ```
    /// # let _ = tempi::sync::Semaphore::procure_timeout;
    /// ```
    pub fn procure_timeout(&self, cx: &Ctx<'_>, timeout: Duration) -> Result<(), LockError> {
        check_home(cx, self.runtime, self.cpu, false)?;
        with_cpus(cx.procure_raw(self.id, Some(timeout), false), cx, self.cpu)
    }
    /// Take a unit only if one is free ([`LockError::WouldBlock`] otherwise).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let s = std::sync::Arc::new(rt.create_semaphore(tempi::sync::SemSpec::new("s", 0)).unwrap());
    /// rt.spawn(tempi::ThreadSpec::new("t"), move |cx| {
    ///     assert_eq!(s.try_procure(cx), Err(tempi::sync::LockError::WouldBlock));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn try_procure(&self, cx: &Ctx<'_>) -> Result<(), LockError> {
        check_home(cx, self.runtime, self.cpu, false)?;
        with_cpus(cx.procure_raw(self.id, None, true), cx, self.cpu)
    }
    /// Give a unit back: to the first waiter, if any, else to the count.
    ///
    /// # Errors
    /// [`LockError::Overflow`] when the count is already `u64::MAX` (it stays so);
    /// [`LockError::ForeignRuntime`] for a thread of another runtime; in real time, from
    /// another CPU, [`LockError::QueueFull`] if the request queue of the semaphore's CPU is
    /// full. From another real-time CPU the unit is posted to the semaphore's CPU and the call
    /// returns once it is posted; if the count there is at `u64::MAX` the unit is refused
    /// there, and the refusal counted ([`crate::CrossCpuStats::refused`]) and traced
    /// ([`TraceKind::CrossCpuRefused`](crate::trace::TraceKind::CrossCpuRefused), request 3)
    /// instead of returned.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let s = std::sync::Arc::new(rt.create_semaphore(tempi::sync::SemSpec::new("s", u64::MAX)).unwrap());
    /// rt.spawn(tempi::ThreadSpec::new("t"), move |cx| {
    ///     assert_eq!(s.vacate(cx), Err(tempi::sync::LockError::Overflow));
    ///     s.procure(cx).unwrap();
    ///     s.vacate(cx).unwrap();
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn vacate(&self, cx: &Ctx<'_>) -> Result<(), LockError> {
        check_home(cx, self.runtime, self.cpu, false)?;
        with_cpus(cx.vacate_raw(self.id), cx, self.cpu)
    }
}
