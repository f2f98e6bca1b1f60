//! The calls a C thread body makes on its `tempi_ctx`, and how the runtime's unwinds reach a
//! C body as a status instead.
//!
//! # Interrupts
//!
//! The runtime ends a job, a thread or a run (an abort, a kill, a budget's kill, the run's
//! stop, a thread torn down at the end) by unwinding the thread's stack from inside the
//! runtime call it is in. A C frame cannot be unwound, so every call here runs the Rust call
//! under `catch_unwind`; a caught unwind is kept in the body's `tempi_ctx` and the call
//! returns `TEMPI_INTERRUPTED`. Every later call returns the same at once, without entering
//! the runtime; when the body returns, its trampoline (`run_body`) resumes the kept unwind
//! in Rust frames only, and the job loop sees exactly what it would have seen from a Rust
//! body. Inside a critical section (`tempi_mutex_critical`) the unwind is resumed when the
//! section's C function returns, so that a restartable section (`rcs`) is run again.
//!
//! # A body that ignores its interrupt
//!
//! A body that ignores the status and keeps calling would never end: it cannot be unwound,
//! and while it runs nothing else runs on its CPU. After [`TEMPI_IGNORED_INTERRUPT_LIMIT`]
//! further calls, each answered at once, the next call does not return: the C function is
//! abandoned (see `abandon.rs`): its frames are discarded without being unwound, the call
//! into it returns as if it had, and the kept unwind goes on in Rust frames (the job is
//! aborted, the thread killed or stopped, as it would have been). The thread is named in the
//! run's warnings and counted in its `tempi_thread_stats.abandoned`. Nothing aborts the
//! process.
//!
//! Owns `tempi_ctx` and the thread-side entry points; must not reach into the kernel.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::time::Duration;

use tempi::{Ctx, ThreadId, Time};

use crate::abandon::{self, call_c, JumpBuf};
use crate::params::{put, Sized0};
use crate::runtime::{tempi_thread, CBody};
use crate::status::{set_last_error, tempi_status, Failure};

/// A thread body: called once per job with the thread's context and the `userdata` given
/// at spawn. It returns to end the job; after a call answered `TEMPI_INTERRUPTED` it must
/// return without further work.
pub type tempi_body = Option<unsafe extern "C" fn(cx: *mut tempi_ctx, userdata: *mut c_void)>;

/// How many calls a body (or a critical section's or handler's C function) may make after
/// its interrupt, each answered `TEMPI_INTERRUPTED` at once, before it is abandoned: the next
/// call does not return, the function's frames are discarded without being unwound, and the
/// runtime goes on as if it had returned (see docs/C-API.md, "Interrupts").
pub const TEMPI_IGNORED_INTERRUPT_LIMIT: u32 = 1_000;

/// A running thread's handle on its runtime: valid inside the body call it was passed to,
/// on the OS thread running it, and nowhere else.
pub struct tempi_ctx {
    /// The thread's Rust context, alive for the body call.
    cx: *const Ctx<'static>,
    /// The runtime's unwind caught at the boundary, if any.
    pub(crate) interrupts: Interrupts,
    /// The mutexes locked through `tempi_mutex_lock` and not yet unlocked, with their guards.
    pub(crate) held: RefCell<[Option<crate::sync::Held>; TEMPI_MAX_HELD_LOCKS]>,
}

/// How many mutexes one thread may hold at once through `tempi_mutex_lock`.
pub const TEMPI_MAX_HELD_LOCKS: usize = 16;

/// The runtime's unwind caught at the boundary of a C function (a thread body, a handler's
/// function), kept until the C function returns and then resumed in Rust frames; and the
/// status its calls answer meanwhile.
pub(crate) struct Interrupts {
    /// The caught unwind, resumed when the C frames have returned.
    pending: Cell<Option<Box<dyn Any + Send>>>,
    /// The status returned since then.
    pending_status: Cell<tempi_status>,
    /// Calls made since then.
    ignored: Cell<u32>,
    /// Where the innermost C function running with these interrupts was entered (null
    /// outside one): an ignoring function is left there.
    entered: Cell<*mut JumpBuf>,
    /// The raw id of the thread the C function runs on, for the record of abandonments.
    thread: u64,
}

impl Interrupts {
    pub(crate) fn new(thread: u64) -> Interrupts {
        Interrupts {
            pending: Cell::new(None),
            pending_status: Cell::new(tempi_status::TEMPI_OK),
            ignored: Cell::new(0),
            entered: Cell::new(std::ptr::null_mut()),
            thread,
        }
    }

    /// Call C function `f(a0, a1, a2)` with these interrupts; whether it was abandoned for
    /// ignoring its interrupt (see "A body that ignores its interrupt") rather than returned.
    ///
    /// # Safety
    ///
    /// `f` is a C function of at most three pointer or integer arguments, these, whose
    /// runtime calls go through these interrupts.
    pub(crate) unsafe fn enter_c(&self, f: usize, a0: usize, a1: usize, a2: usize) -> bool {
        let mut buf = JumpBuf::new();
        let outer = self.entered.replace(&raw mut buf);
        // SAFETY: the caller's contract; buf stays in this frame for the call.
        let abandoned = unsafe { call_c(&mut buf, f, a0, a1, a2) };
        self.entered.set(outer);
        abandoned
    }

    /// Run call `name` of the C function these interrupts belong to (see "Interrupts"):
    /// once interrupted, answer the same status at once.
    #[inline(always)]
    pub(crate) fn call(&self, name: &str, call: impl FnOnce() -> Result<(), Failure>) -> tempi_status {
        if self.pending_status.get() != tempi_status::TEMPI_OK {
            // Nothing of the call is kept: the function may be left from here.
            drop(call);
            return self.interrupted_again(name);
        }
        match catch_unwind(AssertUnwindSafe(call)) {
            Ok(Ok(())) => tempi_status::TEMPI_OK,
            Ok(Err(f)) => {
                set_last_error(&format!("{name}: {}", f.message));
                f.status
            }
            Err(payload) => self.caught(name, payload),
        }
    }

    /// Keep the unwind `payload` caught in call `name`; the status the call answers.
    #[cold]
    fn caught(&self, name: &str, payload: Box<dyn Any + Send>) -> tempi_status {
        let status = match tempi::UnwindCause::of(payload.as_ref()) {
            tempi::UnwindCause::Panic(m) => {
                set_last_error(&format!("{name}: panic: {m}"));
                tempi_status::TEMPI_PANIC
            }
            // Which of the runtime's unwinds it is (abort, kill, stop), in the message.
            cause => {
                set_last_error(&format!("{name}: interrupted: {cause}"));
                tempi_status::TEMPI_INTERRUPTED
            }
        };
        self.pending.set(Some(payload));
        self.pending_status.set(status);
        status
    }

    #[cold]
    fn interrupted_again(&self, name: &str) -> tempi_status {
        let ignored = self.ignored.get().saturating_add(1);
        self.ignored.set(ignored);
        let entered = self.entered.get();
        if ignored > TEMPI_IGNORED_INTERRUPT_LIMIT && !entered.is_null() {
            abandon::record(self.thread);
            // SAFETY: entered is the buffer of the enter_c running the C function that made
            // this call, on this stack; between it and here are that function's frames and
            // this call's, which hold nothing to drop (the call's closure was dropped, the
            // messages below are not made yet).
            unsafe { abandon::leave(entered) }
        }
        set_last_error(&format!("{name}: interrupted earlier: the body must return"));
        self.pending_status.get()
    }

    /// Why the C function was interrupted.
    pub(crate) fn cause(&self) -> tempi_interrupt {
        let pending = self.pending.take();
        let cause = match pending.as_deref().map(tempi::UnwindCause::of) {
            None => tempi_interrupt::TEMPI_INTERRUPT_NONE,
            Some(tempi::UnwindCause::Abort | tempi::UnwindCause::Restart) => tempi_interrupt::TEMPI_INTERRUPT_ABORT,
            Some(tempi::UnwindCause::Kill) => tempi_interrupt::TEMPI_INTERRUPT_KILL,
            Some(_) => tempi_interrupt::TEMPI_INTERRUPT_STOP,
        };
        self.pending.set(pending);
        cause
    }

    /// Resume here, in Rust frames, an unwind a call inside the C code just returned from
    /// caught (see "Interrupts").
    pub(crate) fn resume_pending(&self) {
        if let Some(payload) = self.pending.take() {
            self.ignored.set(0);
            self.pending_status.set(tempi_status::TEMPI_OK);
            resume_unwind(payload);
        }
    }
}

impl tempi_ctx {
    /// The thread's Rust context.
    pub(crate) fn rust(&self) -> &Ctx<'static> {
        // SAFETY: cx is the body's context, alive while the body runs (run_body), and the
        // handle is reachable only from inside that body.
        unsafe { &*self.cx }
    }

    /// Resume here, in Rust frames, an unwind a call inside the C code just returned from
    /// caught (see "Interrupts").
    pub(crate) fn resume_pending(&self) {
        self.interrupts.resume_pending();
    }
}

/// Call C body `c` for one job on thread context `cx`; an unwind a call caught is resumed
/// here, after the C frames have returned.
pub(crate) fn run_body(cx: &Ctx<'_>, c: CBody) {
    // SAFETY: the body is a C function taking (tempi_ctx *, void *) (the header's contract).
    unsafe { run_c(cx, c.body as usize, c.userdata as usize, 0) }
}

/// Call C function `f(handle, a1, a2)` on a `tempi_ctx` made for thread context `cx`; an
/// unwind a call on the handle caught is resumed here, after the C frames have returned (or
/// were abandoned).
///
/// # Safety
///
/// `f` is a C function whose first argument is a `tempi_ctx *` and whose others (at most
/// two, pointers or integers) are `a1` and `a2`.
pub(crate) unsafe fn run_c(cx: &Ctx<'_>, f: usize, a1: usize, a2: usize) {
    let handle = tempi_ctx {
        cx: std::ptr::from_ref(cx).cast::<Ctx<'static>>(),
        interrupts: Interrupts::new(cx.id().to_raw()),
        held: RefCell::new(Default::default()),
    };
    let me = std::ptr::from_ref(&handle).cast_mut();
    // SAFETY: the caller's contract for f; handle outlives the call, and calls on it catch
    // every unwind, so none crosses the C frames. The handle is only read through shared
    // references.
    unsafe { handle.interrupts.enter_c(f, me as usize, a1, a2) };
    handle.resume_pending();
    // Locks the body left held are unlocked here, as a Rust guard is at the end of its scope.
}

/// Run thread call `name` on `cx` (see "Interrupts").
///
/// # Safety
///
/// `cx` is null or the context passed to the running body.
#[inline(always)]
pub(crate) unsafe fn thread_call(
    name: &str,
    cx: *mut tempi_ctx,
    call: impl FnOnce(&tempi_ctx) -> Result<(), Failure>,
) -> tempi_status {
    // SAFETY: cx is null or the live context of the running body (the header's contract).
    // Only shared references to it are made, so calls nested in a critical section's C code
    // may reach it again.
    let Some(h) = (unsafe { cx.cast_const().as_ref() }) else {
        set_last_error(&format!("{name}: cx is null"));
        return tempi_status::TEMPI_NULL_ARGUMENT;
    };
    h.interrupts.call(name, || call(h))
}

/// Consume `ns` of CPU time (virtual time: pure demand; real time: spinning).
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_work(cx: *mut tempi_ctx, ns: u64) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe {
        thread_call("tempi_work", cx, |h| {
            let c = h.rust();
            c.work(Duration::from_nanos(ns));
            Ok(())
        })
    }
}

/// Give the CPU to the next ready thread the scheduler picks (possibly this one).
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_yield(cx: *mut tempi_ctx) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe {
        thread_call("tempi_yield", cx, |h| {
            let c = h.rust();
            c.yield_now();
            Ok(())
        })
    }
}

/// Sleep until instant `t_ns` (returns at once if it has passed).
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_sleep_until(cx: *mut tempi_ctx, t_ns: u64) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe {
        thread_call("tempi_sleep_until", cx, |h| {
            let c = h.rust();
            c.sleep_until(Time::from_nanos(t_ns));
            Ok(())
        })
    }
}

/// Sleep for `ns`.
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_sleep(cx: *mut tempi_ctx, ns: u64) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe {
        thread_call("tempi_sleep", cx, |h| {
            let c = h.rust();
            c.sleep(Duration::from_nanos(ns));
            Ok(())
        })
    }
}

/// A cooperative preemption point for long computations (real time; returns at once in
/// virtual time).
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_checkpoint(cx: *mut tempi_ctx) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe {
        thread_call("tempi_checkpoint", cx, |h| {
            let c = h.rust();
            c.checkpoint();
            Ok(())
        })
    }
}

/// The current instant in ns, into `*out` (only on success).
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_now(cx: *mut tempi_ctx, out: *mut u64) -> tempi_status {
    // SAFETY: forwarded contract; out is null or writable.
    unsafe { thread_call("tempi_now", cx, |h| put(out, h.rust().now().as_nanos(), "out")) }
}

/// Why a body's calls return `TEMPI_INTERRUPTED` ([`tempi_interrupt_cause`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum tempi_interrupt {
    /// Not interrupted: the body's calls go on.
    TEMPI_INTERRUPT_NONE = 0,
    /// The job was abandoned (its abort time passed, or its miss policy abandoned it).
    TEMPI_INTERRUPT_ABORT = 1,
    /// The thread was killed (by another thread, or by its set's budget).
    TEMPI_INTERRUPT_KILL = 2,
    /// The run ended, or the thread was stopped, while the body ran.
    TEMPI_INTERRUPT_STOP = 3,
}

/// Why the running body was interrupted, into `*out` (only on success):
/// `TEMPI_INTERRUPT_NONE` before any of its calls returned `TEMPI_INTERRUPTED`. Unlike the
/// other calls of an interrupted body, it answers `TEMPI_OK` and does not count towards
/// [`TEMPI_IGNORED_INTERRUPT_LIMIT`].
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_interrupt_cause(cx: *const tempi_ctx, out: *mut tempi_interrupt) -> tempi_status {
    // SAFETY: cx is null or the live context of the running body (the header's contract).
    let Some(h) = (unsafe { cx.as_ref() }) else {
        set_last_error("tempi_interrupt_cause: cx is null");
        return tempi_status::TEMPI_NULL_ARGUMENT;
    };
    let cause = h.interrupts.cause();
    // SAFETY: out is null or writable (the header's contract).
    match unsafe { put(out, cause, "out") } {
        Ok(()) => tempi_status::TEMPI_OK,
        Err(f) => {
            set_last_error(&format!("tempi_interrupt_cause: {}", f.message));
            f.status
        }
    }
}

/// The job being executed.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_job {
    /// Set by the caller to `sizeof(tempi_job)`.
    pub size: usize,
    /// Job number, from 0.
    pub number: u32,
    /// 1 if the job has a deadline, else 0.
    pub has_deadline: u32,
    /// Absolute release, in ns.
    pub release_ns: u64,
    /// Absolute deadline in ns (0 without one).
    pub deadline_ns: u64,
}

// SAFETY: repr(C), size first, integer fields only.
unsafe impl Sized0 for tempi_job {
    fn defaults() -> tempi_job {
        tempi_job { size: std::mem::size_of::<tempi_job>(), number: 0, has_deadline: 0, release_ns: 0, deadline_ns: 0 }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_job>();
}

/// The current job, into `*out`, whose `size` the caller set (written only on success).
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_current_job(cx: *mut tempi_ctx, out: *mut tempi_job) -> tempi_status {
    // SAFETY: forwarded contract; out is null or holds (*out).size writable bytes.
    unsafe {
        thread_call("tempi_current_job", cx, |h| {
            let c = h.rust();
            let j = c.job();
            let job = tempi_job {
                size: std::mem::size_of::<tempi_job>(),
                number: j.number,
                has_deadline: u32::from(j.deadline.is_some()),
                release_ns: j.release.as_nanos(),
                deadline_ns: j.deadline.map_or(0, Time::as_nanos),
            };
            crate::params::write_sized(out, &job, "out")
        })
    }
}

/// The calling thread's id, into `*out` (only on success).
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_self(cx: *mut tempi_ctx, out: *mut tempi_thread) -> tempi_status {
    // SAFETY: forwarded contract; out is null or writable.
    unsafe { thread_call("tempi_self", cx, |h| put(out, h.rust().id().to_raw(), "out")) }
}

/// The CPU the calling thread runs on, into `*out` (only on success).
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_cpu(cx: *mut tempi_ctx, out: *mut u32) -> tempi_status {
    // SAFETY: forwarded contract; out is null or writable.
    unsafe { thread_call("tempi_cpu", cx, |h| put(out, h.rust().cpu() as u32, "out")) }
}

/// The thread `t` names, or the failure of a zero id.
fn thread_of(t: tempi_thread) -> Result<ThreadId, Failure> {
    ThreadId::from_raw(t).ok_or_else(|| Failure::new(tempi_status::TEMPI_UNKNOWN_THREAD, "thread 0 names no thread"))
}

/// Release a job of sporadic thread `t` now (deferred to its minimum inter-arrival time);
/// `t` may run on another CPU.
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_release(cx: *mut tempi_ctx, t: tempi_thread) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe { thread_call("tempi_release", cx, |h| Ok(h.rust().release(thread_of(t)?)?)) }
}

/// Kill thread `t` at its next runtime call (a C body sees `TEMPI_INTERRUPTED` there);
/// `t` may run on another CPU.
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_kill(cx: *mut tempi_ctx, t: tempi_thread) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe { thread_call("tempi_kill", cx, |h| Ok(h.rust().kill(thread_of(t)?)?)) }
}

/// Change the calling thread's base priority.
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_set_priority(cx: *mut tempi_ctx, priority: i32) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe {
        thread_call("tempi_set_priority", cx, |h| {
            let c = h.rust();
            c.set_priority(priority);
            Ok(())
        })
    }
}

/// Change thread `t`'s base priority; `t` may run on another CPU.
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_set_priority_of(cx: *mut tempi_ctx, t: tempi_thread, priority: i32) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe { thread_call("tempi_set_priority_of", cx, |h| Ok(h.rust().set_priority_of(thread_of(t)?, priority)?)) }
}
