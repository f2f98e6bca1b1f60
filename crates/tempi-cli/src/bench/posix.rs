//! Thin wrappers over the POSIX calls the peers need (`SCHED_FIFO`, PI mutexes, CPU-time
//! clocks and timers, blocked signals), one `unsafe` block each.
//!
//! Owns every `unsafe` block of the benchmarks, each with its safety argument. It must not
//! measure anything or know about metrics: `peers.rs` builds the measurements on top.

use std::time::Duration;

fn os_error(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// Put the calling thread under `SCHED_FIFO` at `priority`.
pub fn set_fifo(priority: i32) -> Result<(), String> {
    let param = libc::sched_param { sched_priority: priority };
    // SAFETY: pid 0 names the calling thread; `param` is a valid sched_param that outlives
    // the call, which only reads it.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(os_error("sched_setscheduler"))
    }
}

/// A pthread mutex with `PTHREAD_PRIO_INHERIT`: a waiter lends its priority to the owner
/// (Linux: a PI futex, so an uncontended lock or unlock stays in user space). Boxed, so it
/// never moves once initialised.
pub struct PiMutex(Box<std::cell::UnsafeCell<libc::pthread_mutex_t>>);

// SAFETY: a pthread mutex exists to be locked and unlocked from several threads; the value
// is only ever touched through pthread calls, never read or written directly.
unsafe impl Send for PiMutex {}
// SAFETY: as above; every access goes through pthread_mutex_lock / _unlock.
unsafe impl Sync for PiMutex {}

impl PiMutex {
    pub fn new() -> Result<PiMutex, String> {
        let m = Box::new(std::cell::UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER));
        // SAFETY: pthread_mutexattr_t is plain data, and pthread_mutexattr_init initialises
        // it before any other use; it is destroyed once, after the mutex is initialised
        // (the mutex does not keep a reference to it). The mutex lives in a Box that is
        // neither moved nor freed while the PiMutex exists, and `m.get()` is valid for
        // writes.
        let rc = unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            let mut rc = libc::pthread_mutexattr_init(&mut attr);
            if rc == 0 {
                rc = libc::pthread_mutexattr_setprotocol(&mut attr, libc::PTHREAD_PRIO_INHERIT);
                if rc == 0 {
                    rc = libc::pthread_mutex_init(m.get(), &attr);
                }
                libc::pthread_mutexattr_destroy(&mut attr);
            }
            rc
        };
        if rc == 0 {
            Ok(PiMutex(m))
        } else {
            Err(format!("PTHREAD_PRIO_INHERIT mutex: {}", std::io::Error::from_raw_os_error(rc)))
        }
    }

    #[inline]
    pub fn lock(&self) {
        // SAFETY: the mutex was initialised in `new`, has not moved (boxed) and is destroyed
        // only in Drop, which cannot run while `&self` is alive.
        let rc = unsafe { libc::pthread_mutex_lock(self.0.get()) };
        assert_eq!(rc, 0, "pthread_mutex_lock");
    }

    /// Callers unlock only what they locked.
    #[inline]
    pub fn unlock(&self) {
        // SAFETY: as in `lock`; the benchmark unlocks only from the thread that locked.
        let rc = unsafe { libc::pthread_mutex_unlock(self.0.get()) };
        assert_eq!(rc, 0, "pthread_mutex_unlock");
    }
}

impl Drop for PiMutex {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, destroyed exactly once, here; `&mut self` means no
        // thread can be using it.
        unsafe { libc::pthread_mutex_destroy(self.0.get()) };
    }
}

/// The calling thread's CPU-time clock and its kernel thread id.
pub fn this_thread() -> Result<(libc::clockid_t, libc::pid_t), String> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: pthread_self() names the calling thread, alive for the whole call; `clock` is
    // a valid, writable clockid_t. gettid has no preconditions.
    let (rc, tid) = unsafe { (libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock), libc::gettid()) };
    if rc == 0 {
        Ok((clock, tid))
    } else {
        Err(format!("pthread_getcpuclockid: {}", std::io::Error::from_raw_os_error(rc)))
    }
}

/// Read `clock` in nanoseconds.
pub fn read(clock: libc::clockid_t) -> Result<u64, String> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; an invalid clock id is reported through the
    // return value, not by touching other memory.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    if rc == 0 {
        Ok(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
    } else {
        Err(os_error("clock_gettime"))
    }
}

/// A signal blocked in the calling thread, so that it stays pending until accepted.
pub struct BlockedSignal {
    set: libc::sigset_t,
}

impl BlockedSignal {
    /// Block `sig` in the calling thread (other threads keep their masks).
    pub fn new(sig: libc::c_int) -> Result<BlockedSignal, String> {
        // SAFETY: sigset_t is a plain bit array for which all-zero is a valid value;
        // sigemptyset and sigaddset write only into `set`, which we own; pthread_sigmask
        // reads `set` and changes only the calling thread's mask (old mask not wanted:
        // null is allowed).
        let (set, rc) = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            (set, rc)
        };
        if rc == 0 {
            Ok(BlockedSignal { set })
        } else {
            Err(format!("pthread_sigmask: {}", std::io::Error::from_raw_os_error(rc)))
        }
    }

    /// Wait for the signal; `false` if `timeout` passed first.
    pub fn wait(&self, timeout: Duration) -> Result<bool, String> {
        let ts = libc::timespec { tv_sec: timeout.as_secs() as libc::time_t, tv_nsec: timeout.subsec_nanos() as _ };
        loop {
            // SAFETY: `self.set` is an initialised sigset_t; a null siginfo pointer is
            // allowed (we do not need the details); `ts` is a valid timespec. All three
            // outlive the call.
            let rc = unsafe { libc::sigtimedwait(&self.set, std::ptr::null_mut(), &ts) };
            if rc >= 0 {
                return Ok(true);
            }
            match std::io::Error::last_os_error().raw_os_error() {
                Some(libc::EAGAIN) => return Ok(false),
                Some(libc::EINTR) => continue,
                _ => return Err(os_error("sigtimedwait")),
            }
        }
    }
}

/// A POSIX timer on a CPU-time clock that sends a signal to one thread when it expires.
pub struct CpuTimer(libc::timer_t);

impl CpuTimer {
    /// A disarmed timer on `clock` that sends `sig` to thread `tid` (`SIGEV_THREAD_ID`).
    pub fn new(clock: libc::clockid_t, sig: libc::c_int, tid: libc::pid_t) -> Result<CpuTimer, String> {
        let mut timer: libc::timer_t = std::ptr::null_mut();
        // SAFETY: sigevent is plain data for which all-zero is valid; we then fill in the
        // fields SIGEV_THREAD_ID needs. timer_create only reads `ev` and writes the new
        // timer's id into `timer`, both valid for the call.
        let rc = unsafe {
            let mut ev: libc::sigevent = std::mem::zeroed();
            ev.sigev_notify = libc::SIGEV_THREAD_ID;
            ev.sigev_signo = sig;
            ev.sigev_notify_thread_id = tid;
            libc::timer_create(clock, &mut ev, &mut timer)
        };
        if rc == 0 {
            Ok(CpuTimer(timer))
        } else {
            Err(os_error("timer_create"))
        }
    }

    /// Expire once, when the clock reaches `at_ns`.
    pub fn arm_at(&self, at_ns: u64) -> Result<(), String> {
        let value =
            libc::timespec { tv_sec: (at_ns / 1_000_000_000) as libc::time_t, tv_nsec: (at_ns % 1_000_000_000) as _ };
        let spec = libc::itimerspec { it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 }, it_value: value };
        // SAFETY: `self.0` came from a successful timer_create and is deleted only in Drop;
        // `spec` is valid for the call; the old value is not wanted (null is allowed).
        let rc = unsafe { libc::timer_settime(self.0, libc::TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
        if rc == 0 {
            Ok(())
        } else {
            Err(os_error("timer_settime"))
        }
    }
}

impl Drop for CpuTimer {
    fn drop(&mut self) {
        // SAFETY: `self.0` came from a successful timer_create and is deleted exactly once,
        // here.
        unsafe { libc::timer_delete(self.0) };
    }
}

/// `CLOCK_MONOTONIC` now, in nanoseconds.
pub fn monotonic_ns() -> Result<u64, String> {
    read(libc::CLOCK_MONOTONIC)
}

/// Sleep until `CLOCK_MONOTONIC` reads `at_ns` (`clock_nanosleep` with `TIMER_ABSTIME`, as
/// cyclictest does): an absolute wake-up, so a late wake-up does not push the next one.
pub fn sleep_until_monotonic(at_ns: u64) -> Result<(), String> {
    let ts = libc::timespec { tv_sec: (at_ns / 1_000_000_000) as libc::time_t, tv_nsec: (at_ns % 1_000_000_000) as _ };
    loop {
        // SAFETY: `ts` is a valid timespec that outlives the call; with TIMER_ABSTIME the
        // remaining-time pointer is not used, and null is allowed.
        let rc =
            unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
        match rc {
            0 => return Ok(()),
            // A signal handler ran; the deadline is absolute, so just sleep again.
            libc::EINTR => continue,
            e => return Err(format!("clock_nanosleep: {}", std::io::Error::from_raw_os_error(e))),
        }
    }
}
