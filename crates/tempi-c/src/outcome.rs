//! What a run gives back to C: per-thread summaries and statistics, the job records, totals,
//! and the JSON report, Perfetto trace and SVG Gantt chart written to files.
//!
//! Owns the `tempi_outcome` handle; must not touch a runtime.

use std::ffi::{c_char, CString};

use tempi::trace::report::{jobs, JobRecord};
use tempi::{RunOutcome, ThreadOutcome, Timing};

use crate::params::{put, text, write_sized, Sized0};
use crate::runtime::tempi_thread;
use crate::spring::{tempi_spring_decision, tempi_spring_task, PlanRecords};
use crate::status::{guard, tempi_status, Failure};

/// The result of a run: immutable, safe to read from several OS threads at once.
///
/// Created by `tempi_runtime_run`, released by `tempi_outcome_free`.
pub struct tempi_outcome {
    out: RunOutcome,
    jobs: Vec<JobRecord>,
    /// Each thread's name, NUL-terminated, in the order of `out.threads`.
    names: Vec<CString>,
    /// How many times each thread's C code ignored its interrupt and was abandoned, in the
    /// order of `out.threads`.
    abandoned: Vec<u64>,
    /// The run's warnings, NUL-terminated.
    warnings: Vec<CString>,
    /// The plan executor's records, if the runtime had one.
    plan: Option<PlanRecords>,
    /// Each set's name, NUL-terminated, in the order of `out.sets`.
    set_names: Vec<CString>,
}

impl tempi_outcome {
    /// The outcome of run `out`, with the abandonments of its threads' C code, each also a
    /// warning of the run (and so in its report).
    pub(crate) fn new(mut out: RunOutcome, plan: Option<PlanRecords>) -> tempi_outcome {
        let abandoned = crate::abandon::take(out.threads.iter().map(|t| t.id.to_raw()));
        for (t, &n) in out.threads.iter().zip(&abandoned) {
            if n > 0 {
                out.warnings.push(format!(
                    "thread \"{}\" ignored its interrupt: its C code was abandoned {n} time(s), each after {} \
                     further calls answered TEMPI_INTERRUPTED",
                    t.name,
                    crate::ctx::TEMPI_IGNORED_INTERRUPT_LIMIT
                ));
            }
        }
        let jobs = jobs(&out);
        let c = |s: &str| CString::new(s.replace('\0', "")).unwrap_or_default();
        let names = out.threads.iter().map(|t| c(&t.name)).collect();
        let warnings = out.warnings.iter().map(|w| c(w)).collect();
        let set_names = out.sets.iter().map(|t| c(&t.name)).collect();
        tempi_outcome { out, jobs, names, abandoned, warnings, plan, set_names }
    }

    /// # Safety
    ///
    /// `o` is null or a live handle from `tempi_runtime_run`.
    unsafe fn get<'a>(o: *const tempi_outcome) -> Result<&'a tempi_outcome, Failure> {
        // SAFETY: o is null or live (caller's contract).
        unsafe { o.as_ref() }.ok_or_else(|| Failure::null("outcome"))
    }
}

/// How a thread ended.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tempi_thread_end {
    /// Still alive when the run stopped.
    TEMPI_END_RUNNING = 0,
    /// Its body returned, or it was stopped at the end of its jobs.
    TEMPI_END_COMPLETED = 1,
    /// Its body panicked (a Rust panic in a call it made).
    TEMPI_END_PANICKED = 2,
    /// Killed (`tempi_kill`, a budget's kill).
    TEMPI_END_KILLED = 3,
    /// It could not be started (its stack could not be mapped).
    TEMPI_END_NOT_STARTED = 4,
}

/// One thread's summary and statistics. Times in ns.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_thread_stats {
    /// Set by the caller to `sizeof(tempi_thread_stats)`.
    pub size: usize,
    /// The thread's name, valid while the outcome lives.
    pub name: *const c_char,
    /// Its id.
    pub id: tempi_thread,
    /// Its CPU.
    pub cpu: u32,
    /// A `tempi_timing` value.
    pub timing: u32,
    /// Its base priority when spawned.
    pub priority: i32,
    /// A `tempi_thread_end` value.
    pub end: u32,
    /// Jobs released.
    pub released: u64,
    /// Jobs completed.
    pub completed: u64,
    /// Jobs aborted (miss policy, abort time, budget).
    pub aborted: u64,
    /// Deadlines missed.
    pub misses: u64,
    /// Times it was preempted.
    pub preemptions: u64,
    /// Shortest response time of a completed job (0 if none).
    pub response_min_ns: u64,
    /// Longest response time of a completed job (0 if none).
    pub response_max_ns: u64,
    /// Execution time consumed.
    pub cpu_time_ns: u64,
    /// Times its C code ignored an interrupt and was abandoned after
    /// `TEMPI_IGNORED_INTERRUPT_LIMIT` further calls (each is also a warning of the run).
    /// Added after the first version: a caller's struct may end before it.
    pub abandoned: u64,
}

// SAFETY: repr(C), size first, integer and pointer fields only.
unsafe impl Sized0 for tempi_thread_stats {
    fn defaults() -> tempi_thread_stats {
        tempi_thread_stats {
            size: std::mem::size_of::<tempi_thread_stats>(),
            name: std::ptr::null(),
            id: 0,
            cpu: 0,
            timing: 0,
            priority: 0,
            end: 0,
            released: 0,
            completed: 0,
            aborted: 0,
            misses: 0,
            preemptions: 0,
            response_min_ns: 0,
            response_max_ns: 0,
            cpu_time_ns: 0,
            abandoned: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::offset_of!(tempi_thread_stats, abandoned);
}

/// One job of the run, from its trace. Times in ns from the start.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_job_record {
    /// Set by the caller to `sizeof(tempi_job_record)`.
    pub size: usize,
    /// The thread's id.
    pub thread: tempi_thread,
    /// Index of the thread in the outcome's threads (`tempi_outcome_thread`).
    pub thread_index: u32,
    /// Job number, from 0.
    pub number: u32,
    /// Release instant.
    pub release_ns: u64,
    /// First instant it ran; `UINT64_MAX` if it never did.
    pub start_ns: u64,
    /// Instant it completed or was abandoned; `UINT64_MAX` if neither happened.
    pub finish_ns: u64,
    /// Absolute deadline; `UINT64_MAX` if none.
    pub deadline_ns: u64,
    /// 1 if its deadline passed with the job unfinished.
    pub missed: u32,
    /// 1 if it was abandoned rather than completed.
    pub aborted: u32,
    /// Times it was preempted.
    pub preemptions: u32,
    /// Reserved, zero.
    pub reserved: u32,
}

// SAFETY: repr(C), size first, integer fields only.
unsafe impl Sized0 for tempi_job_record {
    fn defaults() -> tempi_job_record {
        tempi_job_record {
            size: std::mem::size_of::<tempi_job_record>(),
            thread: 0,
            thread_index: 0,
            number: 0,
            release_ns: 0,
            start_ns: u64::MAX,
            finish_ns: u64::MAX,
            deadline_ns: u64::MAX,
            missed: 0,
            aborted: 0,
            preemptions: 0,
            reserved: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_job_record>();
}

/// Release an outcome. NULL is ignored.
///
/// Not thread-safe with other calls on the same handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_free(outcome: *mut tempi_outcome) {
    guard("tempi_outcome_free", || {
        if !outcome.is_null() {
            // SAFETY: outcome came from Box::into_raw in tempi_runtime_run and is freed once.
            drop(unsafe { Box::from_raw(outcome) });
        }
        Ok(())
    });
}

/// The instant the run stopped, in ns, into `*out`.
///
/// Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_end(outcome: *const tempi_outcome, out: *mut u64) -> tempi_status {
    guard("tempi_outcome_end", || {
        // SAFETY: outcome is null or live; out null or writable (the header's contract).
        unsafe { put(out, tempi_outcome::get(outcome)?.out.end.as_nanos(), "out") }
    })
}

/// The deadlines missed by all threads together, into `*out`.
///
/// Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_total_misses(outcome: *const tempi_outcome, out: *mut u64) -> tempi_status {
    guard("tempi_outcome_total_misses", || {
        // SAFETY: as in tempi_outcome_end.
        unsafe { put(out, tempi_outcome::get(outcome)?.out.total_misses(), "out") }
    })
}

/// The threads killed, into `*out`.
///
/// Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_kills(outcome: *const tempi_outcome, out: *mut u64) -> tempi_status {
    guard("tempi_outcome_kills", || {
        // SAFETY: as in tempi_outcome_end.
        let o = unsafe { tempi_outcome::get(outcome) }?;
        let kills = o.out.threads.iter().filter(|t| t.outcome == Some(ThreadOutcome::Killed)).count() as u64;
        // SAFETY: out is null or writable.
        unsafe { put(out, kills, "out") }
    })
}

/// The threads whose C code ignored an interrupt and was abandoned (see
/// `TEMPI_IGNORED_INTERRUPT_LIMIT`), into `*out`.
///
/// Thread-safe.
///
/// ```
/// use tempi_c::*;
/// let (mut p, mut rt, mut out) = (std::mem::MaybeUninit::uninit(), std::ptr::null_mut(), std::ptr::null_mut());
/// // SAFETY: the pointers are valid for the calls.
/// unsafe {
///     tempi_runtime_params_init(p.as_mut_ptr());
///     tempi_runtime_new(p.as_ptr(), &mut rt);
///     tempi_runtime_run(rt, 1_000_000, &mut out);
///     let mut n = 9;
///     assert_eq!(tempi_outcome_abandoned(out, &mut n), tempi_status::TEMPI_OK);
///     assert_eq!(n, 0); // no body ignored an interrupt
///     tempi_outcome_free(out);
///     tempi_runtime_free(rt);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_abandoned(outcome: *const tempi_outcome, out: *mut u64) -> tempi_status {
    guard("tempi_outcome_abandoned", || {
        // SAFETY: as in tempi_outcome_end.
        let o = unsafe { tempi_outcome::get(outcome) }?;
        let n = o.abandoned.iter().filter(|&&n| n > 0).count() as u64;
        // SAFETY: out is null or writable.
        unsafe { put(out, n, "out") }
    })
}

/// How many warnings the run gave (things it could not do as configured, C code abandoned
/// for ignoring its interrupt), into `*out`.
///
/// Thread-safe.
///
/// ```
/// use tempi_c::*;
/// let (mut p, mut rt, mut out) = (std::mem::MaybeUninit::uninit(), std::ptr::null_mut(), std::ptr::null_mut());
/// // SAFETY: the pointers are valid for the calls.
/// unsafe {
///     tempi_runtime_params_init(p.as_mut_ptr());
///     tempi_runtime_new(p.as_ptr(), &mut rt);
///     tempi_runtime_run(rt, 1_000_000, &mut out);
///     let mut n = 9;
///     assert_eq!(tempi_outcome_warning_count(out, &mut n), tempi_status::TEMPI_OK);
///     assert_eq!(n, 0);
///     tempi_outcome_free(out);
///     tempi_runtime_free(rt);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_warning_count(outcome: *const tempi_outcome, out: *mut usize) -> tempi_status {
    guard("tempi_outcome_warning_count", || {
        // SAFETY: as in tempi_outcome_end.
        unsafe { put(out, tempi_outcome::get(outcome)?.warnings.len(), "out") }
    })
}

/// Warning `index` of the run, into `*out`: a NUL-terminated string valid while the outcome
/// lives.
///
/// Thread-safe.
///
/// ```
/// use tempi_c::*;
/// let (mut p, mut rt, mut out) = (std::mem::MaybeUninit::uninit(), std::ptr::null_mut(), std::ptr::null_mut());
/// // SAFETY: the pointers are valid for the calls.
/// unsafe {
///     tempi_runtime_params_init(p.as_mut_ptr());
///     tempi_runtime_new(p.as_ptr(), &mut rt);
///     tempi_runtime_run(rt, 1_000_000, &mut out);
///     let mut w = std::ptr::null();
///     assert_eq!(tempi_outcome_warning(out, 0, &mut w), tempi_status::TEMPI_OUT_OF_RANGE);
///     tempi_outcome_free(out);
///     tempi_runtime_free(rt);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_warning(
    outcome: *const tempi_outcome,
    index: usize,
    out: *mut *const c_char,
) -> tempi_status {
    guard("tempi_outcome_warning", || {
        // SAFETY: as in tempi_outcome_end.
        let o = unsafe { tempi_outcome::get(outcome) }?;
        let Some(w) = o.warnings.get(index) else {
            return Err(Failure::new(
                tempi_status::TEMPI_OUT_OF_RANGE,
                format!("warning index {index}: the run has {} warnings", o.warnings.len()),
            ));
        };
        // SAFETY: out is null or writable.
        unsafe { put(out, w.as_ptr(), "out") }
    })
}

/// How many threads the run had, into `*out`.
///
/// Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_thread_count(outcome: *const tempi_outcome, out: *mut usize) -> tempi_status {
    guard("tempi_outcome_thread_count", || {
        // SAFETY: as in tempi_outcome_end.
        unsafe { put(out, tempi_outcome::get(outcome)?.out.threads.len(), "out") }
    })
}

/// Thread `index`'s summary (in spawn order), into `*out`, whose `size` the caller set.
///
/// Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_thread(
    outcome: *const tempi_outcome,
    index: usize,
    out: *mut tempi_thread_stats,
) -> tempi_status {
    guard("tempi_outcome_thread", || {
        // SAFETY: as in tempi_outcome_end.
        let o = unsafe { tempi_outcome::get(outcome) }?;
        let Some(t) = o.out.threads.get(index) else {
            return Err(Failure::new(
                tempi_status::TEMPI_OUT_OF_RANGE,
                format!("thread index {index}: the run had {}", o.out.threads.len()),
            ));
        };
        let ns = |d: Option<std::time::Duration>| d.map_or(0, |d| d.as_nanos() as u64);
        let stats = tempi_thread_stats {
            size: std::mem::size_of::<tempi_thread_stats>(),
            name: o.names[index].as_ptr(),
            id: t.id.to_raw(),
            cpu: t.cpu as u32,
            timing: match t.timing {
                Timing::Periodic { .. } => 1,
                Timing::Sporadic { .. } => 2,
                _ => 0,
            },
            priority: t.priority,
            end: match t.outcome {
                None => 0,
                Some(ThreadOutcome::Completed) => 1,
                Some(ThreadOutcome::Panicked(_)) => 2,
                Some(ThreadOutcome::Killed) => 3,
                Some(ThreadOutcome::NotStarted(_)) => 4,
            },
            released: t.stats.released,
            completed: t.stats.completed,
            aborted: t.stats.aborted,
            misses: t.stats.misses,
            preemptions: t.stats.preemptions,
            response_min_ns: ns(t.stats.response_min),
            response_max_ns: ns(t.stats.response_max),
            cpu_time_ns: t.stats.cpu_time.as_nanos() as u64,
            abandoned: o.abandoned[index],
        };
        // SAFETY: out is null or holds (*out).size writable bytes.
        unsafe { write_sized(out, &stats, "out") }
    })
}

/// How many job records the run's trace holds, into `*out`.
///
/// Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_job_count(outcome: *const tempi_outcome, out: *mut usize) -> tempi_status {
    guard("tempi_outcome_job_count", || {
        // SAFETY: as in tempi_outcome_end.
        unsafe { put(out, tempi_outcome::get(outcome)?.jobs.len(), "out") }
    })
}

/// Job record `index` (ordered by release, then thread, then number), into `*out`, whose
/// `size` the caller set.
///
/// Thread-safe.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_job(
    outcome: *const tempi_outcome,
    index: usize,
    out: *mut tempi_job_record,
) -> tempi_status {
    guard("tempi_outcome_job", || {
        // SAFETY: as in tempi_outcome_end.
        let o = unsafe { tempi_outcome::get(outcome) }?;
        let Some(j) = o.jobs.get(index) else {
            return Err(Failure::new(
                tempi_status::TEMPI_OUT_OF_RANGE,
                format!("job index {index}: the run has {} job records", o.jobs.len()),
            ));
        };
        let ns = |t: Option<tempi::Time>| t.map_or(u64::MAX, |t| t.as_nanos());
        let record = tempi_job_record {
            size: std::mem::size_of::<tempi_job_record>(),
            thread: j.thread_id.to_raw(),
            thread_index: o.out.threads.iter().position(|t| t.id == j.thread_id).map_or(u32::MAX, |i| i as u32),
            number: j.job,
            release_ns: j.release.as_nanos(),
            start_ns: ns(j.start),
            finish_ns: ns(j.finish),
            deadline_ns: ns(j.deadline),
            missed: u32::from(j.missed),
            aborted: u32::from(j.aborted),
            preemptions: j.preemptions,
            reserved: 0,
        };
        // SAFETY: out is null or holds (*out).size writable bytes.
        unsafe { write_sized(out, &record, "out") }
    })
}

/// Write `contents` to the file at `path`.
///
/// # Safety
///
/// `path` is null or NUL-terminated.
unsafe fn write_file(path: *const c_char, contents: impl FnOnce() -> String) -> Result<(), Failure> {
    // SAFETY: path is null or NUL-terminated (caller's contract).
    let Some(path) = (unsafe { text(path, "path") })? else { return Err(Failure::null("path")) };
    std::fs::write(path, contents()).map_err(|e| Failure::new(tempi_status::TEMPI_IO, format!("{path}: {e}")))
}

/// Write the run's JSON report (as `tempi simulate --report`) to the file `path`.
///
/// Thread-safe (two calls must not name the same file).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_write_report(
    outcome: *const tempi_outcome,
    path: *const c_char,
) -> tempi_status {
    guard("tempi_outcome_write_report", || {
        // SAFETY: outcome is null or live; path null or NUL-terminated (the header's contract).
        let o = unsafe { tempi_outcome::get(outcome) }?;
        // SAFETY: as above.
        unsafe { write_file(path, || tempi::trace::report::to_json(&o.out)) }
    })
}

/// Write the run's Perfetto (Chrome JSON) trace to the file `path`.
///
/// Thread-safe (two calls must not name the same file).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_write_trace(outcome: *const tempi_outcome, path: *const c_char) -> tempi_status {
    guard("tempi_outcome_write_trace", || {
        // SAFETY: as in tempi_outcome_write_report.
        let o = unsafe { tempi_outcome::get(outcome) }?;
        // SAFETY: as above.
        unsafe { write_file(path, || tempi::trace::perfetto::to_json(&o.out)) }
    })
}

/// Write the run's SVG Gantt chart to the file `path`.
///
/// Thread-safe (two calls must not name the same file).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_write_gantt(outcome: *const tempi_outcome, path: *const c_char) -> tempi_status {
    guard("tempi_outcome_write_gantt", || {
        // SAFETY: as in tempi_outcome_write_report.
        let o = unsafe { tempi_outcome::get(outcome) }?;
        // SAFETY: as above.
        unsafe { write_file(path, || tempi::trace::gantt::to_svg(&o.out)) }
    })
}

/// How many tasks of accepted thread groups the run's plan had (0 without
/// `tempi_runtime_create_spring`), into `*out`.
///
/// Thread-safe.
///
/// ```
/// let _ = tempi_c::tempi_outcome_spring_task_count; // see examples/c/spring.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_spring_task_count(
    outcome: *const tempi_outcome,
    out: *mut usize,
) -> tempi_status {
    guard("tempi_outcome_spring_task_count", || {
        // SAFETY: as in tempi_outcome_end.
        let o = unsafe { tempi_outcome::get(outcome) }?;
        // SAFETY: out is null or writable.
        unsafe { put(out, o.plan.as_ref().map_or(0, PlanRecords::task_count), "out") }
    })
}

/// Planned task `index` (accepted groups in acceptance order, then by thread and task):
/// planned and actual times, CPU and outcome, into `*out`, whose `size` the caller set.
///
/// Thread-safe.
///
/// ```
/// let _ = tempi_c::tempi_outcome_spring_task; // see examples/c/spring.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_spring_task(
    outcome: *const tempi_outcome,
    index: usize,
    out: *mut tempi_spring_task,
) -> tempi_status {
    guard("tempi_outcome_spring_task", || {
        // SAFETY: as in tempi_outcome_end.
        let o = unsafe { tempi_outcome::get(outcome) }?;
        let empty = PlanRecords::default();
        let record = o.plan.as_ref().unwrap_or(&empty).task(index)?;
        // SAFETY: out is null or holds (*out).size writable bytes.
        unsafe { write_sized(out, &record, "out") }
    })
}

/// How many answers the planner gave in the run, into `*out`.
///
/// Thread-safe.
///
/// ```
/// let _ = tempi_c::tempi_outcome_spring_decision_count; // see examples/c/spring.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_spring_decision_count(
    outcome: *const tempi_outcome,
    out: *mut usize,
) -> tempi_status {
    guard("tempi_outcome_spring_decision_count", || {
        // SAFETY: as in tempi_outcome_end.
        let o = unsafe { tempi_outcome::get(outcome) }?;
        // SAFETY: out is null or writable.
        unsafe { put(out, o.plan.as_ref().map_or(0, PlanRecords::decision_count), "out") }
    })
}

/// The planner's answer `index`, in request order, into `*out`, whose `size` the caller set.
///
/// Thread-safe.
///
/// ```
/// let _ = tempi_c::tempi_outcome_spring_decision; // see examples/c/spring.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_spring_decision(
    outcome: *const tempi_outcome,
    index: usize,
    out: *mut tempi_spring_decision,
) -> tempi_status {
    guard("tempi_outcome_spring_decision", || {
        // SAFETY: as in tempi_outcome_end.
        let o = unsafe { tempi_outcome::get(outcome) }?;
        let empty = PlanRecords::default();
        let record = o.plan.as_ref().unwrap_or(&empty).decision(index)?;
        // SAFETY: out is null or holds (*out).size writable bytes.
        unsafe { write_sized(out, &record, "out") }
    })
}

/// One thread set's summary (`tempi_outcome_set`). Times in ns.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_set_stats {
    /// Set by the caller to `sizeof(tempi_set_stats)`.
    pub size: usize,
    /// The set's name, valid while the outcome lives.
    pub name: *const c_char,
    /// CPU time its members consumed while they were members.
    pub cpu_time_ns: u64,
    /// Budget exhaustions.
    pub exhaustions: u64,
    /// Budget replenishments.
    pub replenishments: u64,
    /// Members when the run ended.
    pub members: u64,
}

// SAFETY: repr(C), size first, integer and pointer fields only.
unsafe impl Sized0 for tempi_set_stats {
    fn defaults() -> tempi_set_stats {
        tempi_set_stats {
            size: std::mem::size_of::<tempi_set_stats>(),
            name: std::ptr::null(),
            cpu_time_ns: 0,
            exhaustions: 0,
            replenishments: 0,
            members: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_set_stats>();
}

/// How many thread sets the run had (those made from C, servers included, and those the
/// runtime made for itself, e.g. a plan executor's), into `*out`.
///
/// Thread-safe.
///
/// ```
/// let _ = tempi_c::tempi_outcome_set_count; // see tests/c/timers.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_set_count(outcome: *const tempi_outcome, out: *mut usize) -> tempi_status {
    guard("tempi_outcome_set_count", || {
        // SAFETY: as in tempi_outcome_end.
        unsafe { put(out, tempi_outcome::get(outcome)?.out.sets.len(), "out") }
    })
}

/// Set `index`'s summary (in creation order), into `*out`, whose `size` the caller set.
///
/// Thread-safe.
///
/// ```
/// let _ = tempi_c::tempi_outcome_set; // see tests/c/timers.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_outcome_set(
    outcome: *const tempi_outcome,
    index: usize,
    out: *mut tempi_set_stats,
) -> tempi_status {
    guard("tempi_outcome_set", || {
        // SAFETY: as in tempi_outcome_end.
        let o = unsafe { tempi_outcome::get(outcome) }?;
        let Some(t) = o.out.sets.get(index) else {
            return Err(Failure::new(
                tempi_status::TEMPI_OUT_OF_RANGE,
                format!("set index {index}: the run had {}", o.out.sets.len()),
            ));
        };
        let stats = tempi_set_stats {
            size: std::mem::size_of::<tempi_set_stats>(),
            name: o.set_names[index].as_ptr(),
            cpu_time_ns: t.cpu_time.as_nanos() as u64,
            exhaustions: t.exhaustions,
            replenishments: t.replenishments,
            members: t.members.len() as u64,
        };
        // SAFETY: out is null or holds (*out).size writable bytes.
        unsafe { write_sized(out, &stats, "out") }
    })
}
