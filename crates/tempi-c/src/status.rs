//! The one status every fallible call returns, its messages, the thread-local last error,
//! and the guard every entry point runs its body under, which turns a panic into
//! [`tempi_status::TEMPI_PANIC`] so that no unwind ever crosses into C.
//!
//! Owns the error conventions; must not touch a runtime.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use tempi::Error;

/// What a call did. `TEMPI_OK` is zero; every other value is a failure whose message
/// `tempi_last_error()` gives on the same OS thread until its next failed call.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tempi_status {
    /// Success; out-parameters were written.
    TEMPI_OK = 0,
    /// A pointer argument was null.
    TEMPI_NULL_ARGUMENT = 1,
    /// An argument is out of range or inconsistent (a thread or run parameter, a size above
    /// its documented limit, text that is not UTF-8).
    TEMPI_INVALID_ARGUMENT = 2,
    /// A parameter struct's `size` is smaller than its first version, or larger than this
    /// library's version with non-zero bytes beyond the fields it knows.
    TEMPI_BAD_SIZE = 3,
    /// No scheduler, locking protocol or policy has that name.
    TEMPI_UNKNOWN_NAME = 4,
    /// The runtime has already run: it accepts no more calls but `tempi_runtime_free`.
    TEMPI_ENDED = 5,
    /// A thread, or an object, of another runtime.
    TEMPI_FOREIGN = 6,
    /// No live thread of this runtime has that id.
    TEMPI_UNKNOWN_THREAD = 7,
    /// The CPU index is not below the runtime's CPU count.
    TEMPI_NO_SUCH_CPU = 8,
    /// The thread is not sporadic (it cannot be released).
    TEMPI_NOT_SPORADIC = 9,
    /// The calling thread's job was aborted, the thread killed, or the run stopped: the body
    /// must return now. Every later call of the same body returns this status again at once.
    TEMPI_INTERRUPTED = 10,
    /// A pool or queue is full (threads, timers, sets, cross-CPU requests).
    TEMPI_FULL = 11,
    /// A file could not be written.
    TEMPI_IO = 12,
    /// The runtime refused the call for another reason (the message says which).
    TEMPI_REFUSED = 13,
    /// A Rust panic was caught at the boundary; the message says where.
    TEMPI_PANIC = 14,
    /// The index is past the end of the list.
    TEMPI_OUT_OF_RANGE = 15,
    /// A try-call found the lock taken or the semaphore empty (or a call that would wait was
    /// made while the thread unwinds).
    TEMPI_WOULD_BLOCK = 16,
    /// Waiting would close a cycle of threads waiting for each other's locks.
    TEMPI_DEADLOCK = 17,
    /// The caller already holds this lock (locks are not recursive), or does not hold the
    /// lock it unlocks or waits with.
    TEMPI_NOT_OWNER = 18,
    /// A thread ended while holding the lock: its data may be inconsistent; or the handler
    /// panicked and serves no more messages.
    TEMPI_POISONED = 19,
    /// The object belongs to another CPU and cannot be used from the caller's (a lock under a
    /// single-CPU protocol; a thread set in real time).
    TEMPI_CROSS_CPU = 20,
    /// The admission test refused the job (PORTS's negative acknowledgement, as
    /// `SCHED_DEADLINE` answers `EBUSY`): it does not fit before its deadline. Unlike every
    /// other failure, the call writes its answer: the idle time the CPU had before the
    /// deadline, so that a job of at most that WCET would have been admitted.
    TEMPI_NACK = 21,
    /// A read with a timeout found no message in time.
    TEMPI_TIMEOUT = 22,
    /// A reply or save with no current message (none read, or it was answered or saved).
    TEMPI_NO_CURRENT = 23,
    /// No saved message matches the selection.
    TEMPI_NO_MATCH = 24,
    /// A call was put away without a reply (the recipient read past it, ended, or the
    /// handler serving it was cut short), or a submission got no answer.
    TEMPI_UNANSWERED = 25,
    /// The message read was cancelled by the scheduler before it was served: it is the
    /// current message all the same (it may be answered or saved), and, unlike every other
    /// failure, the call writes it to its out-parameter.
    TEMPI_CANCELLED = 26,
    /// The Spring planner refused the thread group: it cannot guarantee every task by its
    /// deadline (or had no budget to find out). Nothing changed; like `TEMPI_NACK`, the call
    /// writes its answer (why).
    TEMPI_REJECTED = 27,
}

/// A failed call: its status and message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) status: tempi_status,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(status: tempi_status, message: impl Into<String>) -> Failure {
        Failure { status, message: message.into() }
    }

    pub(crate) fn null(what: &str) -> Failure {
        Failure::new(tempi_status::TEMPI_NULL_ARGUMENT, format!("{what} is null"))
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        use tempi_status::*;
        let status = match &e {
            Error::InvalidSpec { .. } | Error::InvalidConfig(_) | Error::JoinSelf => TEMPI_INVALID_ARGUMENT,
            Error::NoSuchCpu { .. } => TEMPI_NO_SUCH_CPU,
            Error::TooManyThreads { .. }
            | Error::TooManyRuntimes { .. }
            | Error::TooManySets { .. }
            | Error::TooManyTimers { .. }
            | Error::QueueFull { .. } => TEMPI_FULL,
            Error::UnknownThread(_) => TEMPI_UNKNOWN_THREAD,
            Error::ForeignThread(_) | Error::ForeignSet(_) | Error::ForeignRuntime => TEMPI_FOREIGN,
            Error::NotSporadic(_) => TEMPI_NOT_SPORADIC,
            Error::Panicked { .. } => TEMPI_PANIC,
            Error::CrossCpu { .. } => TEMPI_CROSS_CPU,
            _ => TEMPI_REFUSED,
        };
        Failure::new(status, e.to_string())
    }
}

impl From<tempi::sync::LockError> for Failure {
    fn from(e: tempi::sync::LockError) -> Failure {
        use tempi::sync::LockError as L;
        use tempi_status::*;
        let status = match e {
            L::WouldBlock | L::Timeout => TEMPI_WOULD_BLOCK,
            L::Deadlock => TEMPI_DEADLOCK,
            L::AlreadyHeld => TEMPI_NOT_OWNER,
            L::Poisoned => TEMPI_POISONED,
            L::CrossCpu { .. } => TEMPI_CROSS_CPU,
            L::ForeignRuntime => TEMPI_FOREIGN,
            L::QueueFull { .. } | L::ProxiesFull { .. } => TEMPI_FULL,
            _ => TEMPI_REFUSED,
        };
        Failure::new(status, e.to_string())
    }
}

impl From<tempi::message::MsgError> for Failure {
    fn from(e: tempi::message::MsgError) -> Failure {
        use tempi::message::MsgError as M;
        use tempi_status::*;
        let status = match e {
            M::PoolFull | M::QueueFull | M::CpuQueueFull { .. } | M::PayloadPoolFull => TEMPI_FULL,
            M::Refused => TEMPI_REFUSED,
            M::NoSuchThread(_) => TEMPI_UNKNOWN_THREAD,
            M::CallSelf | M::NoSuchTimer | M::NoPayload | M::WrongPayload | M::StalePayload => TEMPI_INVALID_ARGUMENT,
            M::CrossCpu { .. } => TEMPI_CROSS_CPU,
            M::Empty | M::WouldBlock | M::Unwinding => TEMPI_WOULD_BLOCK,
            M::Timeout => TEMPI_TIMEOUT,
            M::NoCurrent => TEMPI_NO_CURRENT,
            M::NoMatch => TEMPI_NO_MATCH,
            M::NoSuchSaveQueue(_) => TEMPI_OUT_OF_RANGE,
            M::Unanswered => TEMPI_UNANSWERED,
            M::HandlerPanicked => TEMPI_POISONED,
            M::ForeignRuntime => TEMPI_FOREIGN,
            M::Cancelled(_) => TEMPI_CANCELLED,
        };
        Failure::new(status, e.to_string())
    }
}

impl From<tempi::admission::AdmissionError> for Failure {
    fn from(e: tempi::admission::AdmissionError) -> Failure {
        use tempi::admission::AdmissionError as A;
        use tempi_status::*;
        let message = e.to_string();
        let status = match e {
            A::UnknownEngine(_) => TEMPI_UNKNOWN_NAME,
            A::NotEdf { .. } => TEMPI_REFUSED,
            A::ForeignRuntime => TEMPI_FOREIGN,
            A::Unanswered { .. } => TEMPI_UNANSWERED,
            A::FutureRelease { .. } | A::ZeroWcet | A::DeadlineTooLate { .. } => TEMPI_INVALID_ARGUMENT,
            A::Full { .. } | A::TooManyLive { .. } => TEMPI_FULL,
            A::NotStarted(e) | A::Runtime(e) => Failure::from(e).status,
        };
        Failure::new(status, message)
    }
}

/// What a call body answers: nothing (its out-parameters written) or a failure.
pub(crate) type Outcome = Result<(), Failure>;

thread_local! {
    /// The message of this OS thread's last failed call, NUL-terminated.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Record `message` as this OS thread's last error.
pub(crate) fn set_last_error(message: &str) {
    // An interior NUL would cut the message short; drop such bytes instead.
    let text = CString::new(message.replace('\0', "")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// The text of a caught panic's payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> Option<String> {
    if let Some(s) = payload.downcast_ref::<&str>() {
        Some((*s).to_string())
    } else {
        payload.downcast_ref::<String>().cloned()
    }
}

/// Run entry point `call`'s body: its failure becomes a status and this OS thread's last
/// error, and a panic becomes `TEMPI_PANIC` (the payload is dropped here, never unwound into C).
pub(crate) fn guard(call: &str, body: impl FnOnce() -> Outcome) -> tempi_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => tempi_status::TEMPI_OK,
        Ok(Err(failure)) => {
            set_last_error(&format!("{call}: {}", failure.message));
            failure.status
        }
        Err(payload) => {
            let what = panic_message(payload.as_ref()).unwrap_or_else(|| "a panic without a message".into());
            // Dropping a payload can panic in turn; that one is dropped without being looked at.
            drop(catch_unwind(AssertUnwindSafe(move || drop(payload))));
            set_last_error(&format!("{call}: panic: {what}"));
            tempi_status::TEMPI_PANIC
        }
    }
}

/// The name of `status`, e.g. `"TEMPI_OK"`, as a static NUL-terminated string; `"TEMPI_?"`
/// for a value that is not a status.
///
/// Thread-safe; never fails.
///
/// ```
/// use tempi_c::{tempi_status, tempi_status_str};
/// let s = unsafe { std::ffi::CStr::from_ptr(tempi_status_str(tempi_status::TEMPI_PANIC as i32)) };
/// assert_eq!(s.to_str().unwrap(), "TEMPI_PANIC");
/// ```
#[unsafe(no_mangle)]
pub extern "C" fn tempi_status_str(status: i32) -> *const c_char {
    let s: &'static [u8] = match status {
        0 => b"TEMPI_OK\0",
        1 => b"TEMPI_NULL_ARGUMENT\0",
        2 => b"TEMPI_INVALID_ARGUMENT\0",
        3 => b"TEMPI_BAD_SIZE\0",
        4 => b"TEMPI_UNKNOWN_NAME\0",
        5 => b"TEMPI_ENDED\0",
        6 => b"TEMPI_FOREIGN\0",
        7 => b"TEMPI_UNKNOWN_THREAD\0",
        8 => b"TEMPI_NO_SUCH_CPU\0",
        9 => b"TEMPI_NOT_SPORADIC\0",
        10 => b"TEMPI_INTERRUPTED\0",
        11 => b"TEMPI_FULL\0",
        12 => b"TEMPI_IO\0",
        13 => b"TEMPI_REFUSED\0",
        14 => b"TEMPI_PANIC\0",
        15 => b"TEMPI_OUT_OF_RANGE\0",
        16 => b"TEMPI_WOULD_BLOCK\0",
        17 => b"TEMPI_DEADLOCK\0",
        18 => b"TEMPI_NOT_OWNER\0",
        19 => b"TEMPI_POISONED\0",
        20 => b"TEMPI_CROSS_CPU\0",
        21 => b"TEMPI_NACK\0",
        22 => b"TEMPI_TIMEOUT\0",
        23 => b"TEMPI_NO_CURRENT\0",
        24 => b"TEMPI_NO_MATCH\0",
        25 => b"TEMPI_UNANSWERED\0",
        26 => b"TEMPI_CANCELLED\0",
        27 => b"TEMPI_REJECTED\0",
        _ => b"TEMPI_?\0",
    };
    s.as_ptr().cast()
}

/// The message of the last failed call made on the calling OS thread (`""` if none), as a
/// NUL-terminated string that stays valid until that thread's next failed call. In virtual
/// time every thread of a runtime runs on the OS thread that called `tempi_runtime_run`, so
/// a body reads it right after the call that failed.
///
/// Thread-safe (each OS thread has its own); never fails.
///
/// ```
/// use tempi_c::{tempi_last_error, tempi_status_str};
/// let _ = unsafe { std::ffi::CStr::from_ptr(tempi_last_error()) };
/// ```
#[unsafe(no_mangle)]
pub extern "C" fn tempi_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last() -> String {
        // SAFETY: tempi_last_error answers a NUL-terminated string alive until the next failure.
        unsafe { std::ffi::CStr::from_ptr(tempi_last_error()) }.to_str().unwrap().to_string()
    }

    #[test]
    fn a_panic_becomes_tempi_panic_with_its_message() {
        let status = guard("tempi_test", || panic!("inside the library"));
        assert_eq!(status, tempi_status::TEMPI_PANIC);
        assert_eq!(last(), "tempi_test: panic: inside the library");
    }

    #[test]
    fn a_failure_sets_the_last_error() {
        let status = guard("tempi_test", || Err(Failure::null("rt")));
        assert_eq!(status, tempi_status::TEMPI_NULL_ARGUMENT);
        assert_eq!(last(), "tempi_test: rt is null");
    }

    #[test]
    fn every_status_has_its_name() {
        for s in 0..=27 {
            // SAFETY: tempi_status_str answers a static NUL-terminated string.
            let name = unsafe { std::ffi::CStr::from_ptr(tempi_status_str(s)) }.to_str().unwrap();
            assert!(name.starts_with("TEMPI_") && name != "TEMPI_?", "{s}: {name}");
        }
        // SAFETY: as above.
        assert_eq!(unsafe { std::ffi::CStr::from_ptr(tempi_status_str(99)) }.to_str().unwrap(), "TEMPI_?");
    }
}
