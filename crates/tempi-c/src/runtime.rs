//! Runtimes from C: `tempi_runtime_new` with a size-first parameter struct, spawning
//! threads whose bodies are C functions, running until a horizon into a `tempi_outcome`.
//!
//! Owns the `tempi_runtime` handle and the C-body trampoline; must not reach into the
//! kernel (everything goes through `tempi::Runtime`).

use std::ffi::{c_char, c_void};
use std::time::Duration;

use tempi::clock::{RealClock, VirtualClock};
use tempi::policy::sched::{by_name, SchedParams};
use tempi::{Config, Runtime, ThreadId, ThreadSpec, Time};

use crate::ctx::{run_body, tempi_body};
use crate::outcome::tempi_outcome;
use crate::params::{put, read_sized, text, Sized0};
use crate::status::{guard, tempi_status, Failure};

/// Which clock a runtime runs on (`tempi_runtime_params.clock`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tempi_clock {
    /// Deterministic virtual time: `tempi_work` is CPU demand, runs are reproducible.
    TEMPI_CLOCK_VIRTUAL = 0,
    /// `CLOCK_MONOTONIC`, one dispatcher OS thread per CPU.
    TEMPI_CLOCK_REAL = 1,
}

/// How a thread's jobs are released (`tempi_thread_params.timing`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tempi_timing {
    /// One job, at the start of the run.
    TEMPI_APERIODIC = 0,
    /// A job every `period_ns`, the first at `phase_ns`.
    TEMPI_PERIODIC = 1,
    /// A job at each `tempi_release`, at least `period_ns` apart.
    TEMPI_SPORADIC = 2,
}

/// A thread, as one non-zero word; valid in calls on its runtime's threads (and refused
/// with `TEMPI_FOREIGN` or `TEMPI_UNKNOWN_THREAD` elsewhere).
pub type tempi_thread = u64;

/// What `tempi_runtime_new` builds. Set `size` to `sizeof(tempi_runtime_params)` (or call
/// `tempi_runtime_params_init`); a zero field means the default.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_runtime_params {
    /// `sizeof(tempi_runtime_params)` as the caller compiled it.
    pub size: usize,
    /// A `tempi_clock` value.
    pub clock: u32,
    /// Number of CPUs (at least 1).
    pub cpus: u32,
    /// The scheduler's registry name (`"fp"`, `"edf"`, `"fifo"`, `"rr"`, `"collator"`,
    /// `"global-edf"`, `"global-fp"`, or an alias such as `"rm"`); NULL for `"fp"`.
    pub scheduler: *const c_char,
    /// The round-robin time slice, in ns (needed by `"rr"`).
    pub quantum_ns: u64,
    /// Thread slots per CPU (default 256).
    pub max_threads: u32,
    /// Timing events per CPU (default 256).
    pub max_timers: u32,
    /// Thread sets (default 64).
    pub max_sets: u32,
    /// Locks per CPU (default 256).
    pub max_locks: u32,
    /// Trace records kept per CPU (default 1 048 576).
    pub trace_capacity: u64,
    /// Stack size in bytes of threads whose parameters give none (default 256 KiB).
    pub default_stack: u64,
    /// 1: keep no trace records at all (trace capacity 0, as `Config::trace_capacity(0)`):
    /// the job records, the report's jobs, the trace and the Gantt chart are then empty, and
    /// a thread switch costs less. Added after the first version: a caller's struct may end
    /// before it.
    pub trace_off: u32,
    /// Reserved, zero.
    pub reserved: u32,
}

// SAFETY: repr(C), size first, integer and pointer fields only.
unsafe impl Sized0 for tempi_runtime_params {
    fn defaults() -> tempi_runtime_params {
        tempi_runtime_params {
            size: std::mem::size_of::<tempi_runtime_params>(),
            clock: tempi_clock::TEMPI_CLOCK_VIRTUAL as u32,
            cpus: 1,
            scheduler: std::ptr::null(),
            quantum_ns: 0,
            max_threads: 0,
            max_timers: 0,
            max_sets: 0,
            max_locks: 0,
            trace_capacity: 0,
            default_stack: 0,
            trace_off: 0,
            reserved: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::offset_of!(tempi_runtime_params, trace_off);
}

/// What `tempi_runtime_spawn` creates. Set `size` to `sizeof(tempi_thread_params)` (or call
/// `tempi_thread_params_init`); a zero field means the default.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_thread_params {
    /// `sizeof(tempi_thread_params)` as the caller compiled it.
    pub size: usize,
    /// The thread's name (copied); NULL for `"thread"`.
    pub name: *const c_char,
    /// A `tempi_timing` value.
    pub timing: u32,
    /// The CPU it runs on.
    pub cpu: u32,
    /// Period (periodic) or minimum inter-arrival time (sporadic), in ns.
    pub period_ns: u64,
    /// Release of a periodic thread's first job, in ns from the start.
    pub phase_ns: u64,
    /// Worst-case execution time, in ns (for analysis, admission and budgets).
    pub wcet_ns: u64,
    /// Relative deadline in ns; 0: the period (periodic, sporadic) or none (aperiodic).
    pub deadline_ns: u64,
    /// Abort each job this long after its release, in ns; 0: never.
    pub abort_after_ns: u64,
    /// Base priority: higher is more urgent under `"fp"`.
    pub priority: i32,
    /// Jobs after which the thread ends; 0: no limit.
    pub max_jobs: u32,
    /// Stack size in bytes; 0: the runtime's default.
    pub stack_size: u64,
    /// Messages its queue, and each of its save queues, hold (default 8). Added after the
    /// first version: a caller's struct may end before it.
    pub mailbox: u32,
    /// Its save queues (`tempi_save`; default 1).
    pub save_queues: u32,
}

// SAFETY: repr(C), size first, integer and pointer fields only.
unsafe impl Sized0 for tempi_thread_params {
    fn defaults() -> tempi_thread_params {
        tempi_thread_params {
            size: std::mem::size_of::<tempi_thread_params>(),
            name: std::ptr::null(),
            timing: tempi_timing::TEMPI_APERIODIC as u32,
            cpu: 0,
            period_ns: 0,
            phase_ns: 0,
            wcet_ns: 0,
            deadline_ns: 0,
            abort_after_ns: 0,
            priority: 0,
            max_jobs: 0,
            stack_size: 0,
            mailbox: 0,
            save_queues: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::offset_of!(tempi_thread_params, mailbox);
}

/// A runtime: virtual or real time, with the threads spawned on it, until it runs.
///
/// Created by `tempi_runtime_new`, released by `tempi_runtime_free`. Used by one OS thread
/// at a time (it may move between OS threads between calls).
pub struct tempi_runtime {
    pub(crate) state: State,
    /// The thread sets made on it, by C id.
    pub(crate) sets: crate::sets::Sets,
    /// The mutexes, condition variables and semaphores made on it, alive until it is freed.
    pub(crate) objects: crate::sync::Objects,
    /// The admissions and handlers made on it, alive until it is freed.
    pub(crate) owned: Owned,
}

/// What a runtime handle keeps alive besides its synchronisation objects: handles C code
/// holds pointers to, valid until `tempi_runtime_free`.
#[derive(Default)]
pub(crate) struct Owned {
    pub(crate) admissions: Vec<std::sync::Arc<crate::admission::tempi_admission>>,
    pub(crate) handlers: Vec<std::sync::Arc<crate::message::tempi_handler>>,
    /// The plan executor, if one was set up.
    pub(crate) spring: Option<std::sync::Arc<crate::spring::tempi_spring>>,
}

pub(crate) enum State {
    Virtual(Runtime<VirtualClock>),
    Real(Runtime<RealClock>),
    /// It ran (or failed to start): only `tempi_runtime_free` is accepted.
    Ended,
}

impl tempi_runtime {
    /// Borrow the runtime behind `rt` for a call that needs it not yet run.
    ///
    /// # Safety
    ///
    /// `rt` is null or a live handle from `tempi_runtime_new`, used by this OS thread only.
    pub(crate) unsafe fn live<'a>(rt: *mut tempi_runtime) -> Result<&'a mut State, Failure> {
        // SAFETY: rt is null or live and not used elsewhere meanwhile (caller's contract).
        let Some(rt) = (unsafe { rt.as_mut() }) else { return Err(Failure::null("rt")) };
        match rt.state {
            State::Ended => Err(Failure::new(tempi_status::TEMPI_ENDED, "the runtime has already run")),
            ref mut s => Ok(s),
        }
    }

    /// The whole handle behind `rt`, for a call that needs it not yet run.
    ///
    /// # Safety
    ///
    /// As for [`tempi_runtime::live`].
    pub(crate) unsafe fn live_handle<'a>(rt: *mut tempi_runtime) -> Result<&'a mut tempi_runtime, Failure> {
        // SAFETY: rt is null or live and not used elsewhere meanwhile (caller's contract).
        let Some(rt) = (unsafe { rt.as_mut() }) else { return Err(Failure::null("rt")) };
        match rt.state {
            State::Ended => Err(Failure::new(tempi_status::TEMPI_ENDED, "the runtime has already run")),
            _ => Ok(rt),
        }
    }

    /// [`tempi_runtime::live`], with the runtime's sets.
    ///
    /// # Safety
    ///
    /// As for [`tempi_runtime::live`].
    pub(crate) unsafe fn live_with_sets<'a>(
        rt: *mut tempi_runtime,
    ) -> Result<(&'a mut State, &'a mut crate::sets::Sets), Failure> {
        // SAFETY: rt is null or live and not used elsewhere meanwhile (caller's contract).
        let Some(rt) = (unsafe { rt.as_mut() }) else { return Err(Failure::null("rt")) };
        match rt.state {
            State::Ended => Err(Failure::new(tempi_status::TEMPI_ENDED, "the runtime has already run")),
            ref mut s => Ok((s, &mut rt.sets)),
        }
    }

    /// [`tempi_runtime::live`], with the runtime's synchronisation objects.
    ///
    /// # Safety
    ///
    /// As for [`tempi_runtime::live`].
    pub(crate) unsafe fn live_with_objects<'a>(
        rt: *mut tempi_runtime,
    ) -> Result<(&'a mut State, &'a mut crate::sync::Objects), Failure> {
        // SAFETY: rt is null or live and not used elsewhere meanwhile (caller's contract).
        let Some(rt) = (unsafe { rt.as_mut() }) else { return Err(Failure::null("rt")) };
        match rt.state {
            State::Ended => Err(Failure::new(tempi_status::TEMPI_ENDED, "the runtime has already run")),
            ref mut s => Ok((s, &mut rt.objects)),
        }
    }
}

/// Fill `params` with the defaults: one CPU, virtual time, `"fp"`, `size` set.
///
/// Thread-safe (touches only `*params`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_params_init(params: *mut tempi_runtime_params) -> tempi_status {
    guard("tempi_runtime_params_init", || {
        // SAFETY: params is null or writable (the header's contract).
        unsafe { put(params, tempi_runtime_params::defaults(), "params") }
    })
}

/// Fill `params` with the defaults: an aperiodic thread named `"thread"` on CPU 0, priority 0.
///
/// Thread-safe (touches only `*params`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_thread_params_init(params: *mut tempi_thread_params) -> tempi_status {
    guard("tempi_thread_params_init", || {
        // SAFETY: params is null or writable (the header's contract).
        unsafe { put(params, tempi_thread_params::defaults(), "params") }
    })
}

fn config_of(p: &tempi_runtime_params, scheduler: &str) -> Result<Config, Failure> {
    let invalid = |what: String| Failure::new(tempi_status::TEMPI_INVALID_ARGUMENT, what);
    if p.cpus == 0 {
        return Err(invalid("params->cpus is 0: a runtime has at least one CPU".into()));
    }
    let quantum = (p.quantum_ns != 0).then(|| Duration::from_nanos(p.quantum_ns));
    let Some(factory) = by_name(scheduler, SchedParams::from(quantum)) else {
        let known = tempi::policy::sched::names().join(", ");
        return Err(Failure::new(
            tempi_status::TEMPI_UNKNOWN_NAME,
            format!("no scheduler \"{scheduler}\" with these parameters (known: {known}; \"rr\" needs quantum_ns)"),
        ));
    };
    let mut config = Config::new(p.cpus as usize).scheduler_factory(factory);
    let size = |n: u64, what: &str| {
        usize::try_from(n).map_err(|_| invalid(format!("params->{what} is {n}: too large for this machine")))
    };
    if p.max_threads != 0 {
        config = config.max_threads(p.max_threads as usize);
    }
    if p.max_timers != 0 {
        config = config.max_timers(p.max_timers as usize);
    }
    if p.max_sets != 0 {
        config = config.max_sets(p.max_sets as usize);
    }
    if p.max_locks != 0 {
        config = config.max_locks(p.max_locks as usize);
    }
    match (p.trace_off, p.trace_capacity) {
        (0, 0) => {}
        (0, n) => config = config.trace_capacity(size(n, "trace_capacity")?),
        (1, 0) => config = config.trace_capacity(0),
        (1, _) => return Err(invalid("params->trace_off is 1 with a trace_capacity: choose one".into())),
        (other, _) => return Err(invalid(format!("params->trace_off is {other}: 0 or 1"))),
    }
    if p.default_stack != 0 {
        config = config.default_stack(size(p.default_stack, "default_stack")?);
    }
    Ok(config)
}

/// Create a runtime as `params` says, into `*out` (written only on success). Sizes above
/// their documented limits, an unknown scheduler name and a bad `clock` are refused.
///
/// Thread-safe. The handle is the caller's until `tempi_runtime_free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_new(
    params: *const tempi_runtime_params,
    out: *mut *mut tempi_runtime,
) -> tempi_status {
    guard("tempi_runtime_new", || {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: params is null or holds `size` readable bytes (the header's contract).
        let p = unsafe { read_sized(params, "params") }?;
        // SAFETY: p.scheduler is null or NUL-terminated (the header's contract).
        let scheduler = unsafe { text(p.scheduler, "params->scheduler") }?.unwrap_or("fp");
        let config = config_of(&p, scheduler)?;
        let state = match p.clock {
            0 => State::Virtual(Runtime::new(config)?),
            1 => State::Real(Runtime::new(config)?),
            other => {
                return Err(Failure::new(
                    tempi_status::TEMPI_INVALID_ARGUMENT,
                    format!("params->clock is {other}: TEMPI_CLOCK_VIRTUAL or TEMPI_CLOCK_REAL"),
                ))
            }
        };
        let handle = Box::into_raw(Box::new(tempi_runtime {
            state,
            sets: crate::sets::Sets::new(),
            objects: Default::default(),
            owned: Owned::default(),
        }));
        // SAFETY: out is non-null and writable (checked above; the header's contract).
        unsafe { put(out, handle, "out") }
    })
}

/// Release a runtime, run or not (threads never run are dropped with it). NULL is ignored.
///
/// Not thread-safe with other calls on the same handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_free(rt: *mut tempi_runtime) {
    guard("tempi_runtime_free", || {
        if !rt.is_null() {
            // SAFETY: rt came from Box::into_raw in tempi_runtime_new and is freed once
            // (the header's contract).
            drop(unsafe { Box::from_raw(rt) });
        }
        Ok(())
    });
}

/// The Rust spec `p` describes.
pub(crate) fn spec_of(p: &tempi_thread_params, name: &str) -> Result<ThreadSpec, Failure> {
    let ns = Duration::from_nanos;
    let mut spec = ThreadSpec::new(name).cpu(p.cpu as usize).priority(p.priority);
    spec = match p.timing {
        0 => spec,
        1 => spec.periodic(ns(p.period_ns)).phase(ns(p.phase_ns)),
        2 => spec.sporadic(ns(p.period_ns)),
        other => {
            return Err(Failure::new(
                tempi_status::TEMPI_INVALID_ARGUMENT,
                format!("params->timing is {other}: TEMPI_APERIODIC, TEMPI_PERIODIC or TEMPI_SPORADIC"),
            ))
        }
    };
    if p.wcet_ns != 0 {
        spec = spec.wcet(ns(p.wcet_ns));
    }
    if p.deadline_ns != 0 {
        spec = spec.deadline(ns(p.deadline_ns));
    }
    if p.abort_after_ns != 0 {
        spec = spec.abort_after(ns(p.abort_after_ns));
    }
    if p.max_jobs != 0 {
        spec = spec.max_jobs(p.max_jobs);
    }
    if p.mailbox != 0 {
        spec = spec.mailbox(p.mailbox as usize);
    }
    if p.save_queues != 0 {
        spec = spec.save_queues(p.save_queues as usize);
    }
    if p.stack_size != 0 {
        let bytes = usize::try_from(p.stack_size).map_err(|_| {
            Failure::new(tempi_status::TEMPI_INVALID_ARGUMENT, "params->stack_size is too large for this machine")
        })?;
        spec = spec.stack_size(bytes);
    }
    Ok(spec)
}

/// A C user pointer, moved into a closure the runtime may run on another OS thread.
pub(crate) struct SendPtr(pub(crate) *mut c_void);

// SAFETY: the header's contract: user pointers are used by the OS thread that runs the
// thread or handler they were given for.
unsafe impl Send for SendPtr {}

/// A C body and its user pointer, moved into the thread.
#[derive(Clone, Copy)]
pub(crate) struct CBody {
    pub(crate) body: unsafe extern "C" fn(*mut crate::ctx::tempi_ctx, *mut c_void),
    pub(crate) userdata: *mut c_void,
}

// SAFETY: the C API's contract: a body and its userdata may be used from the OS thread that
// runs the thread (a real-time CPU's dispatcher), which the header documents.
unsafe impl Send for CBody {}

/// Spawn a thread before the run: `body(cx, userdata)` is called once per job. `*out`
/// (written only on success) names it. A NULL `out` is allowed: the id is not returned.
///
/// Not thread-safe with other calls on the same runtime. `userdata` is used by the OS thread
/// that runs the thread's CPU (in real time, that CPU's dispatcher) while the run lasts.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_spawn(
    rt: *mut tempi_runtime,
    params: *const tempi_thread_params,
    body: tempi_body,
    userdata: *mut c_void,
    out: *mut tempi_thread,
) -> tempi_status {
    guard("tempi_runtime_spawn", || {
        // SAFETY: rt is null or a live handle (the header's contract).
        let state = unsafe { tempi_runtime::live(rt) }?;
        // SAFETY: params is null or holds `size` readable bytes (the header's contract).
        let p = unsafe { read_sized(params, "params") }?;
        let Some(body) = body else { return Err(Failure::null("body")) };
        // SAFETY: p.name is null or NUL-terminated (the header's contract).
        let name = unsafe { text(p.name, "params->name") }?.unwrap_or("thread");
        let spec = spec_of(&p, name)?;
        let c = CBody { body, userdata };
        let id: ThreadId = match state {
            State::Virtual(r) => r.spawn(spec, move |cx| run_body(cx, c))?,
            State::Real(r) => r.spawn(spec, move |cx| run_body(cx, c))?,
            State::Ended => unreachable!("live() refuses an ended runtime"),
        };
        if !out.is_null() {
            // SAFETY: out is non-null and writable (the header's contract).
            unsafe { put(out, id.to_raw(), "out") }?;
        }
        Ok(())
    })
}

/// Run the runtime until `until_ns` (virtual or real ns from its start; `UINT64_MAX`: until
/// every thread has ended) and write the result to `*out` (only on success). The runtime is
/// then ended: every later call on it but `tempi_runtime_free` returns `TEMPI_ENDED`, even
/// when the run failed.
///
/// Blocks the calling OS thread for the run. Not thread-safe with other calls on `rt`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_run(
    rt: *mut tempi_runtime,
    until_ns: u64,
    out: *mut *mut tempi_outcome,
) -> tempi_status {
    guard("tempi_runtime_run", || {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: rt is null or a live handle (the header's contract).
        let handle = unsafe { tempi_runtime::live_handle(rt) }?;
        let until = Time::from_nanos(until_ns);
        let ran = match std::mem::replace(&mut handle.state, State::Ended) {
            State::Virtual(r) if until_ns == u64::MAX => r.run(),
            State::Virtual(r) => r.run_until(until),
            State::Real(r) if until_ns == u64::MAX => r.run(),
            State::Real(r) => r.run_until(until),
            State::Ended => unreachable!("live() refuses an ended runtime"),
        }?;
        let plan = handle.owned.spring.as_deref().map(crate::spring::PlanRecords::of);
        let outcome = Box::into_raw(Box::new(tempi_outcome::new(ran, plan)));
        // SAFETY: out is non-null and writable (checked above; the header's contract).
        unsafe { put(out, outcome, "out") }
    })
}
