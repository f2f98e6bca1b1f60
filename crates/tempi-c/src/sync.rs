//! Mutexes under every locking protocol by name, condition variables and semaphores, from
//! C: created on a runtime before it runs (the runtime handle owns them), used by its
//! threads' bodies.
//!
//! A C body locks with `tempi_mutex_lock` and unlocks with `tempi_mutex_unlock`; the guard
//! the Rust API would give is kept in the thread's `tempi_ctx` meanwhile (at most
//! [`crate::TEMPI_MAX_HELD_LOCKS`] at once) and dropped, unlocking, when the body returns if
//! the body did not unlock. `tempi_mutex_critical` runs a C function as a critical section,
//! which a restartable protocol (`rcs`) may run again.
//!
//! Owns the `tempi_mutex`, `tempi_condvar` and `tempi_semaphore` handles; must not reach
//! into the kernel.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use tempi::sync::{Condvar, LockSpec, Mutex, MutexGuard, SemSpec, Semaphore};

use crate::ctx::{tempi_ctx, thread_call};
use crate::params::{put, read_sized, text, Sized0};
use crate::runtime::{tempi_runtime, State};
use crate::status::{guard, tempi_status, Failure};

/// A mutex of one runtime (no data: the C code keeps its own). Owned by the runtime handle:
/// valid until `tempi_runtime_free`.
pub struct tempi_mutex {
    lock: Mutex<()>,
}

/// A condition variable of one runtime, used with a `tempi_mutex`. Owned by the runtime handle.
pub struct tempi_condvar {
    cond: Condvar,
}

/// A counting semaphore of one runtime. Owned by the runtime handle.
pub struct tempi_semaphore {
    sem: Semaphore,
}

/// The objects a runtime handle made, kept until it is freed.
#[derive(Default)]
pub(crate) struct Objects {
    mutexes: Vec<Arc<tempi_mutex>>,
    condvars: Vec<Arc<tempi_condvar>>,
    semaphores: Vec<Arc<tempi_semaphore>>,
}

/// A mutex a thread holds through `tempi_mutex_lock`, with its guard.
pub(crate) struct Held {
    mutex: *const tempi_mutex,
    guard: MutexGuard<'static, ()>,
}

/// What `tempi_runtime_create_mutex` creates. Set `size` to `sizeof(tempi_mutex_params)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_mutex_params {
    /// `sizeof(tempi_mutex_params)` as the caller compiled it.
    pub size: usize,
    /// Its name (copied); NULL for `"mutex"`.
    pub name: *const c_char,
    /// The locking protocol by name: `"km"`, `"bp"`, `"bpi"` (NULL), `"pcp"`, `"srp"`,
    /// `"rcs"`, `"msrp"` (global, across CPUs), or one registered from Rust.
    pub protocol: *const c_char,
    /// The CPU whose threads use it (single-CPU protocols).
    pub cpu: u32,
    /// 1: `ceiling` is its priority ceiling; 0: computed from the users (PCP, SRP).
    pub has_ceiling: u32,
    /// Its priority ceiling, if `has_ceiling`.
    pub ceiling: i32,
    /// Reserved, zero.
    pub reserved: u32,
}

// SAFETY: repr(C), size first, integer and pointer fields only.
unsafe impl Sized0 for tempi_mutex_params {
    fn defaults() -> tempi_mutex_params {
        tempi_mutex_params {
            size: std::mem::size_of::<tempi_mutex_params>(),
            name: std::ptr::null(),
            protocol: std::ptr::null(),
            cpu: 0,
            has_ceiling: 0,
            ceiling: 0,
            reserved: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_mutex_params>();
}

/// What `tempi_runtime_create_semaphore` creates. Set `size` to `sizeof(tempi_semaphore_params)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_semaphore_params {
    /// `sizeof(tempi_semaphore_params)` as the caller compiled it.
    pub size: usize,
    /// Its name (copied); NULL for `"semaphore"`.
    pub name: *const c_char,
    /// The units it starts with.
    pub count: u64,
    /// The waiters' order by name: `"fifo"` (NULL), `"urgency"`, `"deadline"`.
    pub queue: *const c_char,
    /// The CPU that keeps its queue.
    pub cpu: u32,
    /// Reserved, zero.
    pub reserved: u32,
}

// SAFETY: repr(C), size first, integer and pointer fields only.
unsafe impl Sized0 for tempi_semaphore_params {
    fn defaults() -> tempi_semaphore_params {
        tempi_semaphore_params {
            size: std::mem::size_of::<tempi_semaphore_params>(),
            name: std::ptr::null(),
            count: 0,
            queue: std::ptr::null(),
            cpu: 0,
            reserved: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_semaphore_params>();
}

fn unknown(kind: &str, name: &str, known: Vec<String>) -> Failure {
    Failure::new(tempi_status::TEMPI_UNKNOWN_NAME, format!("no {kind} \"{name}\" (known: {})", known.join(", ")))
}

/// Create a mutex as `params` says; `*out` (only on success) is valid until the runtime is
/// freed. An unknown protocol is `TEMPI_UNKNOWN_NAME`.
///
/// Not thread-safe with other calls on the same runtime.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_create_mutex(
    rt: *mut tempi_runtime,
    params: *const tempi_mutex_params,
    out: *mut *mut tempi_mutex,
) -> tempi_status {
    guard("tempi_runtime_create_mutex", || {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: rt is null or live (the header's contract).
        let (state, objects) = unsafe { tempi_runtime::live_with_objects(rt) }?;
        // SAFETY: params is null or holds `size` readable bytes.
        let p = unsafe { read_sized(params, "params") }?;
        // SAFETY: the names are null or NUL-terminated.
        let name = unsafe { text(p.name, "params->name") }?.unwrap_or("mutex");
        // SAFETY: as above.
        let protocol = unsafe { text(p.protocol, "params->protocol") }?.unwrap_or("bpi");
        if tempi::policy::lock::by_name(protocol).is_none() {
            return Err(unknown("locking protocol", protocol, tempi::policy::lock::names()));
        }
        let mut spec = LockSpec::new(name).protocol(protocol).cpu(p.cpu as usize);
        if p.has_ceiling != 0 {
            spec = spec.ceiling(p.ceiling);
        }
        let lock = match state {
            State::Virtual(r) => r.create_mutex((), spec)?,
            State::Real(r) => r.create_mutex((), spec)?,
            State::Ended => unreachable!("live refuses an ended runtime"),
        };
        let m = Arc::new(tempi_mutex { lock });
        let ptr = Arc::as_ptr(&m).cast_mut();
        objects.mutexes.push(m);
        // SAFETY: out is non-null and writable.
        unsafe { put(out, ptr, "out") }
    })
}

/// Create a condition variable whose queue `cpu` keeps; `*out` is valid until the runtime
/// is freed.
///
/// Not thread-safe with other calls on the same runtime.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_create_condvar(
    rt: *mut tempi_runtime,
    cpu: u32,
    out: *mut *mut tempi_condvar,
) -> tempi_status {
    guard("tempi_runtime_create_condvar", || {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: rt is null or live (the header's contract).
        let (state, objects) = unsafe { tempi_runtime::live_with_objects(rt) }?;
        let cond = match state {
            State::Virtual(r) => r.create_condvar(cpu as usize)?,
            State::Real(r) => r.create_condvar(cpu as usize)?,
            State::Ended => unreachable!("live refuses an ended runtime"),
        };
        let c = Arc::new(tempi_condvar { cond });
        let ptr = Arc::as_ptr(&c).cast_mut();
        objects.condvars.push(c);
        // SAFETY: out is non-null and writable.
        unsafe { put(out, ptr, "out") }
    })
}

/// Create a semaphore as `params` says; `*out` is valid until the runtime is freed.
///
/// Not thread-safe with other calls on the same runtime.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_create_semaphore(
    rt: *mut tempi_runtime,
    params: *const tempi_semaphore_params,
    out: *mut *mut tempi_semaphore,
) -> tempi_status {
    guard("tempi_runtime_create_semaphore", || {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: rt is null or live (the header's contract).
        let (state, objects) = unsafe { tempi_runtime::live_with_objects(rt) }?;
        // SAFETY: params is null or holds `size` readable bytes.
        let p = unsafe { read_sized(params, "params") }?;
        // SAFETY: the names are null or NUL-terminated.
        let name = unsafe { text(p.name, "params->name") }?.unwrap_or("semaphore");
        // SAFETY: as above.
        let queue = unsafe { text(p.queue, "params->queue") }?.unwrap_or("fifo");
        if tempi::policy::queue::by_name(queue).is_none() {
            return Err(unknown("queue policy", queue, tempi::policy::queue::names()));
        }
        let spec = SemSpec::new(name, p.count).queue_name(queue).cpu(p.cpu as usize);
        let sem = match state {
            State::Virtual(r) => r.create_semaphore(spec)?,
            State::Real(r) => r.create_semaphore(spec)?,
            State::Ended => unreachable!("live refuses an ended runtime"),
        };
        let s = Arc::new(tempi_semaphore { sem });
        let ptr = Arc::as_ptr(&s).cast_mut();
        objects.semaphores.push(s);
        // SAFETY: out is non-null and writable.
        unsafe { put(out, ptr, "out") }
    })
}

/// The object behind a handle argument.
///
/// # Safety
///
/// `p` is null or a handle its runtime still owns.
unsafe fn object<'a, T>(p: *const T, what: &str) -> Result<&'a T, Failure> {
    // SAFETY: p is null or points to an object its runtime handle keeps alive (caller's contract).
    unsafe { p.as_ref() }.ok_or_else(|| Failure::null(what))
}

fn not_held() -> Failure {
    Failure::new(tempi_status::TEMPI_NOT_OWNER, "the calling thread does not hold this mutex")
}

/// Keep `guard` of `m` among `h`'s held locks.
fn keep(h: &tempi_ctx, m: *const tempi_mutex, guard: MutexGuard<'_, ()>) -> Result<(), Failure> {
    // SAFETY: the guard borrows the mutex, which its runtime handle keeps alive for the run,
    // and the thread's context, alive while the body runs; it is kept in the body's
    // tempi_ctx, which is dropped (dropping the guard) before the body's call returns.
    let guard = unsafe { std::mem::transmute::<MutexGuard<'_, ()>, MutexGuard<'static, ()>>(guard) };
    let mut held = h.held.borrow_mut();
    let Some(slot) = held.iter_mut().find(|s| s.is_none()) else {
        drop(held);
        drop(guard);
        return Err(Failure::new(
            tempi_status::TEMPI_FULL,
            format!("a thread holds at most {} mutexes at once", crate::TEMPI_MAX_HELD_LOCKS),
        ));
    };
    *slot = Some(Held { mutex: m, guard });
    Ok(())
}

/// Take `m`'s guard out of `h`'s held locks.
fn take(h: &tempi_ctx, m: *const tempi_mutex) -> Option<MutexGuard<'static, ()>> {
    let mut held = h.held.borrow_mut();
    let slot = held.iter_mut().find(|s| s.as_ref().is_some_and(|held| held.mutex == m))?;
    slot.take().map(|held| held.guard)
}

/// Lock `m`, waiting as its protocol says; the calling thread holds it until
/// `tempi_mutex_unlock` (or the end of its body call).
///
/// Only from a running body of `m`'s runtime, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_mutex_lock(cx: *mut tempi_ctx, m: *mut tempi_mutex) -> tempi_status {
    // SAFETY: forwarded contract; m is null or owned by its live runtime handle.
    unsafe {
        thread_call("tempi_mutex_lock", cx, |h| {
            let mutex = object(m, "m")?;
            let guard = mutex.lock.lock(h.rust())?;
            keep(h, m, guard)
        })
    }
}

/// Lock `m` if that needs no wait; `TEMPI_WOULD_BLOCK` otherwise.
///
/// Only from a running body of `m`'s runtime, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_mutex_try_lock(cx: *mut tempi_ctx, m: *mut tempi_mutex) -> tempi_status {
    // SAFETY: forwarded contract; m is null or owned by its live runtime handle.
    unsafe {
        thread_call("tempi_mutex_try_lock", cx, |h| {
            let mutex = object(m, "m")?;
            let guard = mutex.lock.try_lock(h.rust())?;
            keep(h, m, guard)
        })
    }
}

/// Unlock `m`, which the calling thread holds (`TEMPI_NOT_OWNER` otherwise).
///
/// Only from a running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_mutex_unlock(cx: *mut tempi_ctx, m: *mut tempi_mutex) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe {
        thread_call("tempi_mutex_unlock", cx, |h| {
            let guard = take(h, m).ok_or_else(not_held)?;
            drop(guard);
            Ok(())
        })
    }
}

/// A critical section: a C function run with a mutex held.
pub type tempi_section = Option<unsafe extern "C" fn(cx: *mut tempi_ctx, userdata: *mut c_void)>;

/// Run `section(cx, userdata)` with `m` locked, then unlock it. Under a restartable protocol
/// (`rcs`) the section may be abandoned (its next call answers `TEMPI_INTERRUPTED`: it must
/// return) and run again from the start; it must then be idempotent until its last call.
///
/// Only from a running body of `m`'s runtime, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_mutex_critical(
    cx: *mut tempi_ctx,
    m: *mut tempi_mutex,
    section: tempi_section,
    userdata: *mut c_void,
) -> tempi_status {
    // SAFETY: forwarded contract; m is null or owned by its live runtime handle.
    unsafe {
        thread_call("tempi_mutex_critical", cx, |h| {
            let mutex = object(m, "m")?;
            let Some(section) = section else { return Err(Failure::null("section")) };
            let user = crate::runtime::SendPtr(userdata);
            mutex.lock.critical(h.rust(), |_| {
                let user = &user;
                // SAFETY: section is a C function of this signature (the header's contract);
                // calls it makes catch every unwind, resumed below in Rust frames only.
                h.interrupts.enter_c(section as usize, cx as usize, user.0 as usize, 0);
                h.resume_pending();
            })?;
            Ok(())
        })
    }
}

/// Wait on `cv`, releasing `m` (which the caller holds) meanwhile; `m` is held again when
/// the call returns `TEMPI_OK`. On any other status the caller no longer holds `m`.
///
/// Only from a running body of `cv`'s runtime, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_condvar_wait(
    cx: *mut tempi_ctx,
    cv: *mut tempi_condvar,
    m: *mut tempi_mutex,
) -> tempi_status {
    // SAFETY: forwarded contract; cv is null or owned by its live runtime handle.
    unsafe {
        thread_call("tempi_condvar_wait", cx, |h| {
            let cond = object(cv, "cv")?;
            let guard = take(h, m).ok_or_else(not_held)?;
            let guard = cond.cond.wait(h.rust(), guard)?;
            keep(h, m, guard)
        })
    }
}

/// Wake the most urgent waiter of `cv`, if any.
///
/// Only from a running body of `cv`'s runtime, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_condvar_notify_one(cx: *mut tempi_ctx, cv: *mut tempi_condvar) -> tempi_status {
    // SAFETY: forwarded contract; cv is null or owned by its live runtime handle.
    unsafe { thread_call("tempi_condvar_notify_one", cx, |h| Ok(object(cv, "cv")?.cond.notify_one(h.rust())?)) }
}

/// Wake every waiter of `cv`.
///
/// Only from a running body of `cv`'s runtime, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_condvar_notify_all(cx: *mut tempi_ctx, cv: *mut tempi_condvar) -> tempi_status {
    // SAFETY: forwarded contract; cv is null or owned by its live runtime handle.
    unsafe { thread_call("tempi_condvar_notify_all", cx, |h| Ok(object(cv, "cv")?.cond.notify_all(h.rust())?)) }
}

/// Take a unit of `s`, waiting for one if there is none.
///
/// Only from a running body of `s`'s runtime, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_semaphore_procure(cx: *mut tempi_ctx, s: *mut tempi_semaphore) -> tempi_status {
    // SAFETY: forwarded contract; s is null or owned by its live runtime handle.
    unsafe { thread_call("tempi_semaphore_procure", cx, |h| Ok(object(s, "s")?.sem.procure(h.rust())?)) }
}

/// Take a unit of `s` if one is there; `TEMPI_WOULD_BLOCK` otherwise.
///
/// Only from a running body of `s`'s runtime, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_semaphore_try_procure(cx: *mut tempi_ctx, s: *mut tempi_semaphore) -> tempi_status {
    // SAFETY: forwarded contract; s is null or owned by its live runtime handle.
    unsafe { thread_call("tempi_semaphore_try_procure", cx, |h| Ok(object(s, "s")?.sem.try_procure(h.rust())?)) }
}

/// Give a unit back to `s` (waking its first waiter, if any).
///
/// Only from a running body of `s`'s runtime, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_semaphore_vacate(cx: *mut tempi_ctx, s: *mut tempi_semaphore) -> tempi_status {
    // SAFETY: forwarded contract; s is null or owned by its live runtime handle.
    unsafe { thread_call("tempi_semaphore_vacate", cx, |h| Ok(object(s, "s")?.sem.vacate(h.rust())?)) }
}
