//! PORTS admission from C: a CPU's admission made on a runtime before it runs, jobs with C
//! bodies submitted to it from a running body, the negative acknowledgement as its own status
//! (`TEMPI_NACK`) with the idle time the CPU had, and the decisions read after the run.
//!
//! Owns the `tempi_admission` handle and its parameter and answer structs; must not reach
//! into the admission's engine or the kernel (everything goes through
//! `tempi::admission::Admission`).

use std::ffi::{c_char, c_void, CString};
use std::sync::Mutex;
use std::time::Duration;

use tempi::admission::{Admission, AdmissionSpec, JobRequest, Refused};
use tempi::Time;

use crate::ctx::{run_body, tempi_body, tempi_ctx, thread_call};
use crate::params::{put, read_sized, text, writable_size, write_sized, Sized0};
use crate::runtime::{tempi_runtime, tempi_thread, CBody, State};
use crate::status::{guard, tempi_status, Failure};

/// One CPU's admission test over the jobs it admitted. Owned by its runtime handle: valid
/// until `tempi_runtime_free`, also after the run (to read its decisions).
pub struct tempi_admission {
    admission: Admission,
    /// The decisions' job names, NUL-terminated, in decision order: each made once, when a
    /// decision is first read, and kept so that the pointers given out stay valid.
    names: Mutex<Vec<CString>>,
}

/// What `tempi_runtime_create_admission` builds. Set `size` to
/// `sizeof(tempi_admission_params)` (or call `tempi_admission_params_init`); a zero field
/// means the default.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_admission_params {
    /// `sizeof(tempi_admission_params)` as the caller compiled it.
    pub size: usize,
    /// The CPU whose jobs it tests.
    pub cpu: u32,
    /// Reserved, zero.
    pub reserved: u32,
    /// The engine by name: `"tree"` (NULL), `"linear"`, `"min_laxity"`, `"hashed"`.
    pub engine: *const c_char,
    /// Entries the engine holds: admitted jobs until their deadline passes (default 256).
    pub capacity: u64,
    /// Admitted jobs alive at once, one thread set each (default 8).
    pub max_live: u64,
    /// Entries of each log, decisions and job events (default 1024).
    pub log_capacity: u64,
}

// SAFETY: repr(C), size first, integer and pointer fields only.
unsafe impl Sized0 for tempi_admission_params {
    fn defaults() -> tempi_admission_params {
        tempi_admission_params {
            size: std::mem::size_of::<tempi_admission_params>(),
            cpu: 0,
            reserved: 0,
            engine: std::ptr::null(),
            capacity: 0,
            max_live: 0,
            log_capacity: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_admission_params>();
}

/// A job to submit (`tempi_admit`). Set `size` to `sizeof(tempi_job_request)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_job_request {
    /// `sizeof(tempi_job_request)` as the caller compiled it.
    pub size: usize,
    /// The job's name (copied); NULL for `"job"`. Its thread has this name.
    pub name: *const c_char,
    /// Its worst-case execution time, in ns: what it is reserved and held to.
    pub wcet_ns: u64,
    /// Its absolute deadline, in ns from the start.
    pub deadline_ns: u64,
    /// Its body, called once if the job is admitted, on the admission's CPU.
    pub body: tempi_body,
    /// Passed to `body`.
    pub userdata: *mut c_void,
}

// SAFETY: repr(C), size first, integer, pointer and nullable function-pointer fields only.
unsafe impl Sized0 for tempi_job_request {
    fn defaults() -> tempi_job_request {
        tempi_job_request {
            size: std::mem::size_of::<tempi_job_request>(),
            name: std::ptr::null(),
            wcet_ns: 0,
            deadline_ns: 0,
            body: None,
            userdata: std::ptr::null_mut(),
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_job_request>();
}

/// What `tempi_admit` answers, on `TEMPI_OK` and on `TEMPI_NACK`. Set `size` to
/// `sizeof(tempi_admit_answer)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_admit_answer {
    /// Set by the caller to `sizeof(tempi_admit_answer)`.
    pub size: usize,
    /// The admitted job's thread; 0 on `TEMPI_NACK`.
    pub thread: tempi_thread,
    /// The CPU that admitted or refused it.
    pub cpu: u32,
    /// 1 if admitted, 0 if refused.
    pub admitted: u32,
    /// The idle time that CPU had before the job's deadline, in ns, before the test: a job
    /// of at most this WCET is admitted.
    pub idle_ns: u64,
}

// SAFETY: repr(C), size first, integer fields only.
unsafe impl Sized0 for tempi_admit_answer {
    fn defaults() -> tempi_admit_answer {
        tempi_admit_answer {
            size: std::mem::size_of::<tempi_admit_answer>(),
            thread: 0,
            cpu: 0,
            admitted: 0,
            idle_ns: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_admit_answer>();
}

/// One admission test and its answer (`tempi_admission_decision`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_decision_record {
    /// Set by the caller to `sizeof(tempi_decision_record)`.
    pub size: usize,
    /// The job's name, valid until the runtime is freed.
    pub request: *const c_char,
    /// When it was tested, in ns.
    pub time_ns: u64,
    /// The CPU the request was made on (the submitter's).
    pub cpu: u32,
    /// The CPU whose admission tested it.
    pub target_cpu: u32,
    /// The WCET asked for, in ns.
    pub wcet_ns: u64,
    /// The absolute deadline asked for, in ns.
    pub deadline_ns: u64,
    /// The idle time the CPU had before the deadline, in ns.
    pub idle_ns: u64,
    /// 1 if the job was admitted.
    pub accepted: u32,
    /// Reserved, zero.
    pub reserved: u32,
}

// SAFETY: repr(C), size first, integer and pointer fields only.
unsafe impl Sized0 for tempi_decision_record {
    fn defaults() -> tempi_decision_record {
        tempi_decision_record {
            size: std::mem::size_of::<tempi_decision_record>(),
            request: std::ptr::null(),
            time_ns: 0,
            cpu: 0,
            target_cpu: 0,
            wcet_ns: 0,
            deadline_ns: 0,
            idle_ns: 0,
            accepted: 0,
            reserved: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_decision_record>();
}

/// Fill `params` with the defaults: CPU 0, engine `"tree"`, `size` set.
///
/// Thread-safe (touches only `*params`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_admission_params_init(params: *mut tempi_admission_params) -> tempi_status {
    guard("tempi_admission_params_init", || {
        // SAFETY: params is null or writable (the header's contract).
        unsafe { put(params, tempi_admission_params::defaults(), "params") }
    })
}

/// The size `n` of field `what`, as a `usize`, or its default for 0.
fn count(n: u64, what: &str, default: usize) -> Result<usize, Failure> {
    if n == 0 {
        return Ok(default);
    }
    usize::try_from(n).map_err(|_| {
        Failure::new(tempi_status::TEMPI_INVALID_ARGUMENT, format!("params->{what} is {n}: too large for this machine"))
    })
}

/// Create the admission of `params->cpu` on `rt`; `*out` (only on success) is valid until the
/// runtime is freed. The runtime must be scheduled EDF (`"edf"`): otherwise
/// `TEMPI_REFUSED`; an unknown engine is `TEMPI_UNKNOWN_NAME`; a CPU the runtime lacks
/// `TEMPI_NO_SUCH_CPU`; sizes above their limits (2^20 each) `TEMPI_INVALID_ARGUMENT`; more
/// live jobs than the runtime's `max_sets` leaves room for `TEMPI_FULL`.
///
/// Not thread-safe with other calls on the same runtime.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_create_admission(
    rt: *mut tempi_runtime,
    params: *const tempi_admission_params,
    out: *mut *mut tempi_admission,
) -> tempi_status {
    guard("tempi_runtime_create_admission", || {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: rt is null or live (the header's contract).
        let handle = unsafe { tempi_runtime::live_handle(rt) }?;
        // SAFETY: params is null or holds `size` readable bytes.
        let p = unsafe { read_sized(params, "params") }?;
        // SAFETY: p.engine is null or NUL-terminated.
        let engine = unsafe { text(p.engine, "params->engine") }?.unwrap_or("tree");
        let spec = AdmissionSpec::new(p.cpu as usize)
            .engine(engine)
            .capacity(count(p.capacity, "capacity", 256)?)
            .max_live(count(p.max_live, "max_live", 8)?)
            .log_capacity(count(p.log_capacity, "log_capacity", 1024)?);
        let admission = match &mut handle.state {
            State::Virtual(r) => Admission::new(r, spec)?,
            State::Real(r) => Admission::new(r, spec)?,
            State::Ended => unreachable!("live_handle refuses an ended runtime"),
        };
        let owned = std::sync::Arc::new(tempi_admission { admission, names: Mutex::new(Vec::new()) });
        let ptr = std::sync::Arc::as_ptr(&owned).cast_mut();
        handle.owned.admissions.push(owned);
        // SAFETY: out is non-null and writable.
        unsafe { put(out, ptr, "out") }
    })
}

/// The admission behind a handle argument.
///
/// # Safety
///
/// `p` is null or a handle its runtime still owns.
unsafe fn admission<'a>(p: *const tempi_admission) -> Result<&'a tempi_admission, Failure> {
    // SAFETY: p is null or kept alive by its runtime handle (caller's contract).
    unsafe { p.as_ref() }.ok_or_else(|| Failure::null("adm"))
}

/// The idle time `adm`'s CPU has now before instant `deadline_ns`, into `*out` (only on
/// success): what a job due then could use. From a thread of another real-time CPU the
/// question is asked on the admission's CPU (the caller waits for the answer).
///
/// Only from a running body of `adm`'s runtime, with its own `cx` (another runtime's
/// thread gets `TEMPI_FOREIGN`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_admission_idle_before(
    cx: *mut tempi_ctx,
    adm: *mut tempi_admission,
    deadline_ns: u64,
    out: *mut u64,
) -> tempi_status {
    // SAFETY: forwarded contract; adm is null or owned by its live runtime handle.
    unsafe {
        thread_call("tempi_admission_idle_before", cx, |h| {
            let a = admission(adm)?;
            if out.is_null() {
                return Err(Failure::null("out"));
            }
            let idle = a.admission.idle_before(h.rust(), Time::from_nanos(deadline_ns))?;
            put(out, idle.as_nanos() as u64, "out")
        })
    }
}

/// Submit the job `request` describes to `adm`: tested now and, if it fits, started as a
/// thread on the admission's CPU, due at `request->deadline_ns` and killed if it runs past its
/// WCET. `TEMPI_OK`: admitted, `*out` says its thread, its CPU and the idle time there was.
/// `TEMPI_NACK`: refused, nothing changed; `*out` is written all the same (`thread` 0,
/// `admitted` 0, `idle_ns` the idle time before the deadline), so that the caller may
/// resubmit a job of at most that WCET, here or to another CPU's admission. Other statuses:
/// `TEMPI_INVALID_ARGUMENT` (a zero WCET, a deadline past 2^62 ns), `TEMPI_FULL` (the
/// engine full, `max_live` jobs alive, no thread slot), `TEMPI_FOREIGN`, and from another
/// real-time CPU `TEMPI_UNANSWERED`; `*out` is then untouched.
///
/// Only from a running body of `adm`'s runtime, with its own `cx`. The job's `body` and
/// `userdata` are used on the OS thread that runs the admission's CPU.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_admit(
    cx: *mut tempi_ctx,
    adm: *mut tempi_admission,
    request: *const tempi_job_request,
    out: *mut tempi_admit_answer,
) -> tempi_status {
    // SAFETY: forwarded contract; adm is null or owned by its live runtime handle; request
    // null or holding `size` readable bytes; out null or holding (*out).size writable bytes.
    unsafe {
        thread_call("tempi_admit", cx, |h| {
            let a = admission(adm)?;
            let r = read_sized(request, "request")?;
            // The size is checked before the test, so that an answer is never lost to it.
            writable_size(out, "out")?;
            let Some(body) = r.body else { return Err(Failure::null("request->body")) };
            let name = text(r.name, "request->name")?.unwrap_or("job");
            let c = CBody { body, userdata: r.userdata };
            let job =
                JobRequest::new(name, Duration::from_nanos(r.wcet_ns), Time::from_nanos(r.deadline_ns), move |cx| {
                    run_body(cx, c)
                });
            match a.admission.admit(h.rust(), job) {
                Ok(ok) => {
                    let answer = tempi_admit_answer {
                        size: std::mem::size_of::<tempi_admit_answer>(),
                        thread: ok.thread.to_raw(),
                        cpu: ok.cpu as u32,
                        admitted: 1,
                        idle_ns: ok.idle.as_nanos() as u64,
                    };
                    write_sized(out, &answer, "out")
                }
                Err(Refused::Nack(n)) => {
                    let answer = tempi_admit_answer {
                        size: std::mem::size_of::<tempi_admit_answer>(),
                        thread: 0,
                        cpu: n.cpu as u32,
                        admitted: 0,
                        idle_ns: n.idle.as_nanos() as u64,
                    };
                    write_sized(out, &answer, "out")?;
                    Err(Failure::new(tempi_status::TEMPI_NACK, n.to_string()))
                }
                Err(Refused::Error(e)) => Err(e.into()),
            }
        })
    }
}

/// How many decisions `adm` has logged (up to its `log_capacity`), into `*out`.
///
/// Thread-safe; also after the run, until the runtime is freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_admission_decision_count(adm: *const tempi_admission, out: *mut usize) -> tempi_status {
    guard("tempi_admission_decision_count", || {
        // SAFETY: adm is null or owned by its live runtime handle; out null or writable.
        unsafe { put(out, admission(adm)?.admission.decisions().len(), "out") }
    })
}

/// Decision `index` of `adm` (in the order made), into `*out`, whose `size` the caller set.
///
/// Thread-safe; also after the run, until the runtime is freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_admission_decision(
    adm: *const tempi_admission,
    index: usize,
    out: *mut tempi_decision_record,
) -> tempi_status {
    guard("tempi_admission_decision", || {
        // SAFETY: adm is null or owned by its live runtime handle.
        let a = unsafe { admission(adm) }?;
        let decisions = a.admission.decisions();
        let Some(d) = decisions.get(index) else {
            return Err(Failure::new(
                tempi_status::TEMPI_OUT_OF_RANGE,
                format!("decision index {index}: the admission has logged {}", decisions.len()),
            ));
        };
        let mut names = a.names.lock().unwrap_or_else(|e| e.into_inner());
        while names.len() <= index {
            let name = &decisions[names.len()].request;
            names.push(CString::new(name.replace('\0', "")).unwrap_or_default());
        }
        let decision = tempi_decision_record {
            size: std::mem::size_of::<tempi_decision_record>(),
            request: names[index].as_ptr(),
            time_ns: d.time.as_nanos(),
            cpu: d.cpu as u32,
            target_cpu: d.target_cpu as u32,
            wcet_ns: d.wcet.as_nanos() as u64,
            deadline_ns: d.deadline.as_nanos(),
            idle_ns: d.idle.as_nanos() as u64,
            accepted: u32::from(d.accepted),
            reserved: 0,
        };
        // SAFETY: out is null or holds (*out).size writable bytes.
        unsafe { write_sized(out, &decision, "out") }
    })
}
