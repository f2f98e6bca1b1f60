//! Timing events from C, as MaRTE OS and Ada's `Ada.Real_Time.Timing_Events` have them: a C
//! handler run inside the runtime at an instant (once, or then periodically), with the
//! release of sporadic threads and its own cancellation; and execution-time timers, a C
//! handler run when a thread's or a set's CPU-time clock reaches a value
//! (`Ada.Execution_Time.Timers`, `Group_Budgets`).
//!
//! Owns `tempi_event` and the timer parameters; must not reach into the kernel.

use std::ffi::c_void;
use std::time::Duration;

use tempi::{EventCtx, ThreadId, Time, TimerSpec};

use crate::ctx::{tempi_ctx, thread_call};
use crate::params::{put, read_sized, Sized0};
use crate::runtime::{tempi_runtime, tempi_thread, State};
use crate::sets::tempi_set;
use crate::status::{guard, tempi_status, Failure};

/// A timing event's or an execution-time timer's handle on the runtime, valid inside the
/// handler call it was passed to and nowhere else.
pub struct tempi_event {
    ev: *mut EventCtx<'static>,
}

/// A timing-event or execution-time handler: called inside the runtime, between thread
/// executions, on no thread of its own. It may call only the `tempi_event_*` calls and must
/// return promptly.
pub type tempi_event_fn = Option<unsafe extern "C" fn(ev: *mut tempi_event, userdata: *mut c_void)>;

/// A handler and its user pointer, moved into the runtime.
#[derive(Clone, Copy)]
struct CHandler {
    call: unsafe extern "C" fn(*mut tempi_event, *mut c_void),
    userdata: *mut c_void,
}

// SAFETY: the header's contract: a handler and its userdata are used by the OS thread that
// runs the event's CPU.
unsafe impl Send for CHandler {}

impl CHandler {
    fn of(f: tempi_event_fn, userdata: *mut c_void) -> Result<CHandler, Failure> {
        let call = f.ok_or_else(|| Failure::null("handler"))?;
        Ok(CHandler { call, userdata })
    }

    /// The Rust handler that calls this one.
    fn rust(self) -> impl FnMut(&mut EventCtx<'_>) + Send + 'static {
        move |ev| self.invoke(ev)
    }

    fn invoke(&self, ev: &mut EventCtx<'_>) {
        let mut handle = tempi_event { ev: std::ptr::from_mut(ev).cast::<EventCtx<'static>>() };
        // SAFETY: the handler is a C function of this signature (the header's contract); the
        // handle lives for the call and points at the event's context, alive for it. A C
        // function does not unwind.
        unsafe { (self.call)(&mut handle, self.userdata) };
    }
}

/// When a timing event fires (`tempi_runtime_add_timer`). Set `size` to
/// `sizeof(tempi_timer_params)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_timer_params {
    /// `sizeof(tempi_timer_params)` as the caller compiled it.
    pub size: usize,
    /// The first firing, in ns from the run's start (an absolute instant; an event set
    /// before the run is relative to its start).
    pub first_ns: u64,
    /// Then every `period_ns`; 0: only once.
    pub period_ns: u64,
    /// The CPU whose dispatcher runs the handler.
    pub cpu: u32,
    /// Reserved, zero.
    pub reserved: u32,
}

// SAFETY: repr(C), size first, integer fields only.
unsafe impl Sized0 for tempi_timer_params {
    fn defaults() -> tempi_timer_params {
        tempi_timer_params {
            size: std::mem::size_of::<tempi_timer_params>(),
            first_ns: 0,
            period_ns: 0,
            cpu: 0,
            reserved: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_timer_params>();
}

/// Set a timing event before the run: `handler(ev, userdata)` runs inside the runtime at
/// `params->first_ns`, then every `params->period_ns` if it is not zero, until it cancels
/// itself (`tempi_event_cancel`). More events than `tempi_runtime_params.max_timers` on a CPU
/// is `TEMPI_INVALID_ARGUMENT` (the runtime's configuration does not hold them: "more than N
/// timing events"); a CPU the runtime does not have `TEMPI_NO_SUCH_CPU`.
///
/// Not thread-safe with other calls on the same runtime. The handler runs on the OS thread
/// that runs `params->cpu`.
///
/// ```
/// use tempi_c::*;
/// unsafe extern "C" fn tick(ev: *mut tempi_event, userdata: *mut std::ffi::c_void) {
///     // SAFETY: userdata is the counter below; ev the live event.
///     unsafe { *userdata.cast::<u64>() += 1; tempi_event_cancel(ev); }
/// }
/// unsafe extern "C" fn idle(cx: *mut tempi_ctx, _: *mut std::ffi::c_void) {
///     // SAFETY: cx is the running body's.
///     unsafe { tempi_sleep(cx, 5_000) };
/// }
/// let (mut p, mut tp, mut rt, mut out, mut n) = (std::mem::MaybeUninit::uninit(), std::mem::MaybeUninit::uninit(),
///     std::ptr::null_mut(), std::ptr::null_mut(), 0u64);
/// let t = tempi_timer_params { size: std::mem::size_of::<tempi_timer_params>(), first_ns: 1_000, period_ns: 1_000, cpu: 0, reserved: 0 };
/// // SAFETY: the pointers are valid for the calls.
/// unsafe {
///     tempi_runtime_params_init(p.as_mut_ptr());
///     tempi_runtime_new(p.as_ptr(), &mut rt);
///     tempi_thread_params_init(tp.as_mut_ptr());
///     tempi_runtime_spawn(rt, tp.as_ptr(), Some(idle), std::ptr::null_mut(), std::ptr::null_mut());
///     let user = (&raw mut n).cast();
///     assert_eq!(tempi_runtime_add_timer(rt, &t, Some(tick), user), tempi_status::TEMPI_OK);
///     tempi_runtime_run(rt, 10_000, &mut out);
///     tempi_outcome_free(out);
///     tempi_runtime_free(rt);
/// }
/// assert_eq!(n, 1); // cancelled at its first firing
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_add_timer(
    rt: *mut tempi_runtime,
    params: *const tempi_timer_params,
    handler: tempi_event_fn,
    userdata: *mut c_void,
) -> tempi_status {
    guard("tempi_runtime_add_timer", || {
        // SAFETY: rt is null or a live handle (the header's contract).
        let state = unsafe { tempi_runtime::live(rt) }?;
        // SAFETY: params is null or holds `size` readable bytes.
        let p = unsafe { read_sized(params, "params") }?;
        let h = CHandler::of(handler, userdata)?;
        let first = Time::from_nanos(p.first_ns);
        let spec = if p.period_ns == 0 {
            TimerSpec::at(first)
        } else {
            TimerSpec::every(Duration::from_nanos(p.period_ns)).starting(first)
        }
        .cpu(p.cpu as usize);
        match state {
            State::Virtual(r) => r.add_timer(spec, h.rust())?,
            State::Real(r) => r.add_timer(spec, h.rust())?,
            State::Ended => unreachable!("live refuses an ended runtime"),
        }
        Ok(())
    })
}

/// # Safety
///
/// `ev` is null or the live handle passed to the running handler.
unsafe fn event<'a>(ev: *mut tempi_event) -> Result<&'a mut EventCtx<'static>, Failure> {
    // SAFETY: the caller's contract; the context outlives the handler call.
    let e = unsafe { ev.as_mut() }.ok_or_else(|| Failure::null("ev"))?;
    // SAFETY: as above.
    Ok(unsafe { &mut *e.ev })
}

/// The instant the event fired, in ns, into `*out`.
///
/// Only from the running handler, with its own `ev`.
///
/// ```
/// let _ = tempi_c::tempi_event_now; // see tempi_runtime_add_timer and tests/c/timers.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_event_now(ev: *mut tempi_event, out: *mut u64) -> tempi_status {
    guard("tempi_event_now", || {
        // SAFETY: the header's contract.
        let e = unsafe { event(ev) }?;
        // SAFETY: out is null or writable.
        unsafe { put(out, e.now().as_nanos(), "out") }
    })
}

/// Release a job of sporadic thread `t` when the handler returns. A thread of another
/// runtime is `TEMPI_FOREIGN`; more releases in one firing than the runtime has thread slots
/// `TEMPI_FULL`. A release the runtime cannot make then (the thread ended, or is not
/// sporadic) is counted in the outcome, not answered here.
///
/// Only from the running handler, with its own `ev`.
///
/// ```
/// let _ = tempi_c::tempi_event_release; // see tests/c/timers.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_event_release(ev: *mut tempi_event, t: tempi_thread) -> tempi_status {
    guard("tempi_event_release", || {
        // SAFETY: the header's contract.
        let e = unsafe { event(ev) }?;
        let id = ThreadId::from_raw(t)
            .ok_or_else(|| Failure::new(tempi_status::TEMPI_UNKNOWN_THREAD, "thread 0 names no thread"))?;
        Ok(e.release(id)?)
    })
}

/// Stop a periodic timing event from firing again.
///
/// Only from the running handler, with its own `ev`.
///
/// ```
/// let _ = tempi_c::tempi_event_cancel; // see tempi_runtime_add_timer
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_event_cancel(ev: *mut tempi_event) -> tempi_status {
    guard("tempi_event_cancel", || {
        // SAFETY: the header's contract.
        unsafe { event(ev) }?.cancel();
        Ok(())
    })
}

/// Arm an execution-time timer before the run: `handler` runs inside the runtime when thread
/// `t`'s CPU-time clock reaches `at_ns` (Ada's `Execution_Time.Timers.Set_Handler`). One per
/// thread: it replaces any.
///
/// Not thread-safe with other calls on the same runtime.
///
/// ```
/// let _ = tempi_c::tempi_runtime_arm_thread_timer; // see tests/c/timers.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_arm_thread_timer(
    rt: *mut tempi_runtime,
    t: tempi_thread,
    at_ns: u64,
    handler: tempi_event_fn,
    userdata: *mut c_void,
) -> tempi_status {
    guard("tempi_runtime_arm_thread_timer", || {
        // SAFETY: rt is null or a live handle (the header's contract).
        let state = unsafe { tempi_runtime::live(rt) }?;
        let h = CHandler::of(handler, userdata)?;
        let id = ThreadId::from_raw(t)
            .ok_or_else(|| Failure::new(tempi_status::TEMPI_UNKNOWN_THREAD, "thread 0 names no thread"))?;
        let at = Duration::from_nanos(at_ns);
        match state {
            State::Virtual(r) => r.arm_thread_timer(id, at, h.rust())?,
            State::Real(r) => r.arm_thread_timer(id, at, h.rust())?,
            State::Ended => unreachable!("live refuses an ended runtime"),
        }
        Ok(())
    })
}

/// Arm an execution-time timer on set `set`'s group clock before the run: `handler` runs
/// when its members together have consumed `at_ns` (one per set; it replaces any).
///
/// Not thread-safe with other calls on the same runtime.
///
/// ```
/// let _ = tempi_c::tempi_runtime_arm_set_timer; // see tests/c/timers.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_arm_set_timer(
    rt: *mut tempi_runtime,
    set: tempi_set,
    at_ns: u64,
    handler: tempi_event_fn,
    userdata: *mut c_void,
) -> tempi_status {
    guard("tempi_runtime_arm_set_timer", || {
        // SAFETY: rt is null or a live handle (the header's contract).
        let (state, sets) = unsafe { tempi_runtime::live_with_sets(rt) }?;
        let id = sets.id(set)?;
        let h = CHandler::of(handler, userdata)?;
        let at = Duration::from_nanos(at_ns);
        match state {
            State::Virtual(r) => r.arm_set_timer(id, at, h.rust())?,
            State::Real(r) => r.arm_set_timer(id, at, h.rust())?,
            State::Ended => unreachable!("live refuses an ended runtime"),
        }
        Ok(())
    })
}

/// Arm an execution-time timer from a running thread: `handler` runs when thread `t`'s
/// CPU-time clock reaches `at_ns` (the thread may be the caller, `tempi_self`). It replaces
/// any timer armed on that clock.
///
/// Only from the running body, with its own `cx`.
///
/// ```
/// let _ = tempi_c::tempi_arm_thread_timer; // see tests/c/timers.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_arm_thread_timer(
    cx: *mut tempi_ctx,
    t: tempi_thread,
    at_ns: u64,
    handler: tempi_event_fn,
    userdata: *mut c_void,
) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe {
        thread_call("tempi_arm_thread_timer", cx, |h| {
            let c = CHandler::of(handler, userdata)?;
            let id = ThreadId::from_raw(t)
                .ok_or_else(|| Failure::new(tempi_status::TEMPI_UNKNOWN_THREAD, "thread 0 names no thread"))?;
            Ok(h.rust().arm_thread_timer(id, Duration::from_nanos(at_ns), c.rust())?)
        })
    }
}

/// The CPU time thread `t` has consumed, in ns, into `*out` (only on success).
///
/// Only from the running body, with its own `cx`.
///
/// ```
/// let _ = tempi_c::tempi_thread_cpu_time; // see tests/c/timers.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_thread_cpu_time(cx: *mut tempi_ctx, t: tempi_thread, out: *mut u64) -> tempi_status {
    // SAFETY: forwarded contract; out is null or writable.
    unsafe {
        thread_call("tempi_thread_cpu_time", cx, |h| {
            let id = ThreadId::from_raw(t)
                .ok_or_else(|| Failure::new(tempi_status::TEMPI_UNKNOWN_THREAD, "thread 0 names no thread"))?;
            let d = h.rust().thread_cpu_time(id)?;
            put(out, d.as_nanos() as u64, "out")
        })
    }
}
