//! The operating-system services a runtime asks for: CPU pinning, `SCHED_FIFO`, memory
//! locking and a fine timer slack for real-time dispatchers; a stack-overflow report for every kernel
//! (`overflow.rs`); huge-page advice for large arenas allocated up front (`huge_pages.rs`).
//!
//! The context switch between a thread's stack and the dispatcher's (`context.rs`). A value
//! behind a busy flag, entered without waiting (`busy_cell.rs`: a handler's function). The
//! primitives of the cross-CPU protocols, standard or loom's (`loom_shim.rs`).
//!
//! One of the few places `unsafe` is allowed (with `sync`'s data cell). Every call reports a
//! refusal as a readable warning instead of failing the run: a machine without the privilege still runs, less predictably, and says so.

pub(crate) mod busy_cell;
pub(crate) mod context;
pub(crate) mod huge_pages;
pub(crate) mod loom_shim;
pub(crate) mod overflow;
pub(crate) mod worker;

pub use worker::stop_signal;

use std::time::Duration;

/// What a real-time dispatcher asks of the OS for its thread: the parts of the runtime's
/// `Config` (`pin`, `fifo_priority`, `lock_memory`) this module reads, so that it needs nothing
/// above it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DispatcherSetup {
    /// Pin the dispatcher to its CPU.
    pub(crate) pin: bool,
    /// Ask for `SCHED_FIFO` at this priority.
    pub(crate) fifo_priority: Option<i32>,
    /// Lock the process's memory (done once, by CPU 0's dispatcher).
    pub(crate) lock_memory: bool,
}

/// Prepare the calling OS thread to be the dispatcher of `cpu`. Returns one warning per thing
/// that could not be done.
pub(crate) fn prepare_dispatcher(cpu: usize, config: DispatcherSetup) -> Vec<String> {
    let mut warnings = Vec::new();
    if config.pin
        && let Err(e) = pin_to_cpu(cpu)
    {
        warnings.push(format!("CPU {cpu}: could not pin the dispatcher: {e}"));
    }
    // Under SCHED_FIFO Linux ignores the slack anyway; under the time-sharing policy (FIFO not
    // asked for, or refused) the default 50 µs of slack would let the idle sleep end up to
    // 50 µs late, past the spin margin the clock keeps before a wake-up.
    if let Err(e) = set_timer_slack(Duration::from_nanos(1)) {
        warnings.push(format!("CPU {cpu}: could not reduce the timer slack ({e}); idle wake-ups may be late"));
    }
    if let Some(prio) = config.fifo_priority
        && let Err(e) = set_fifo(prio)
    {
        warnings.push(format!(
            "CPU {cpu}: SCHED_FIFO priority {prio} refused ({e}); running under the default time-sharing policy"
        ));
    }
    if config.lock_memory
        && cpu == 0
        && let Err(e) = lock_memory()
    {
        warnings.push(format!("mlockall refused ({e}); pages may be swapped out"));
    }
    warnings
}

/// Pin the calling OS thread to one CPU (what a real-time dispatcher does for its CPU; useful
/// for the OS threads of a comparison, too).
///
/// ```no_run
/// tempi::os::pin_to_cpu(0).expect("CPU 0 exists");
/// ```
pub fn pin_to_cpu(cpu: usize) -> Result<(), std::io::Error> {
    let online = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    if cpu >= online || cpu >= libc::CPU_SETSIZE as usize {
        return Err(std::io::Error::other(format!("the machine has {online} CPU(s)")));
    }
    // SAFETY: cpu_set_t is a plain bit array for which all-zero is a valid (empty) value.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` was checked against CPU_SETSIZE above, so CPU_SET stays inside `set`.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: pid 0 names the calling thread; `set` is a valid, initialised cpu_set_t of the size
    // passed.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Put the calling OS thread under `SCHED_FIFO` at `priority` (1-99); needs the privilege.
///
/// ```no_run
/// if let Err(e) = tempi::os::set_fifo(10) { eprintln!("SCHED_FIFO refused: {e}"); }
/// ```
pub fn set_fifo(priority: i32) -> Result<(), std::io::Error> {
    let param = libc::sched_param { sched_priority: priority };
    // SAFETY: pid 0 names the calling thread and `param` is a valid sched_param that outlives
    // the call.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Lock current and future pages of the process in memory (`mlockall`).
///
/// ```no_run
/// if let Err(e) = tempi::os::lock_memory() { eprintln!("mlockall refused: {e}"); }
/// ```
pub fn lock_memory() -> Result<(), std::io::Error> {
    // SAFETY: mlockall takes only flags and has no memory-safety preconditions.
    let rc = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Set the calling OS thread's timer slack (`PR_SET_TIMERSLACK`): how much later than asked
/// Linux may end its sleeps, to batch wake-ups. The default is 50 µs; a real-time dispatcher
/// asks for 1 ns so that an idle wait wakes within its spin margin. Zero is refused (to Linux
/// it means "back to the default"); `SCHED_FIFO` threads have no slack whatever is set.
///
/// ```no_run
/// use std::time::Duration;
/// tempi::os::set_timer_slack(Duration::from_nanos(1)).expect("Linux accepts any slack >= 1 ns");
/// ```
pub fn set_timer_slack(slack: Duration) -> Result<(), std::io::Error> {
    let ns = u64::try_from(slack.as_nanos()).unwrap_or(u64::MAX);
    if ns == 0 {
        return Err(std::io::Error::other("a timer slack of zero would restore the default"));
    }
    let ns = libc::c_ulong::try_from(ns).unwrap_or(libc::c_ulong::MAX);
    // SAFETY: PR_SET_TIMERSLACK takes its value as an integer and touches no memory of ours;
    // the unused arguments are zero as prctl(2) asks.
    let rc =
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns, 0 as libc::c_ulong, 0 as libc::c_ulong, 0 as libc::c_ulong) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
