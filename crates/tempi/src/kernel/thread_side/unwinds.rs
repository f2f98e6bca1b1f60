//! The thread's unwinds: the payload of each of the runtime's own (an abandoned job, the end of
//! the run, a kill, a restarted critical section), unwinding a thread for an [`Interrupt`], and
//! reading an unwind's cause back ([`UnwindCause`], public, for code that catches unwinds
//! around part of a body). Must not: decide when a thread is interrupted (the kernel does).

use std::any::Any;
use std::panic::resume_unwind;

use crate::kernel::thread_side::protocol::Interrupt;

/// Payload of the unwind that abandons a job.
pub(crate) struct JobAborted;
/// Payload of the unwind that ends a thread when the runtime stops.
pub(crate) struct Shutdown;
/// Payload of the unwind that ends a killed thread.
pub(crate) struct Killed;
/// Payload of the unwind that abandons a restartable critical section.
pub(crate) struct RestartSection;

/// Unwind the thread's stack for an interrupt: it ends its job, its critical section or the
/// thread itself.
#[cold]
pub(in crate::kernel) fn unwind_for(interrupt: Interrupt) -> ! {
    match interrupt {
        Interrupt::Abort => resume_unwind(Box::new(JobAborted)),
        Interrupt::Stop => resume_unwind(Box::new(Shutdown)),
        Interrupt::Kill => resume_unwind(Box::new(Killed)),
        Interrupt::Restart => resume_unwind(Box::new(RestartSection)),
    }
}

/// Why a thread's code is being unwound, read from the payload of the unwind: what code that
/// catches an unwind around part of a thread's body (to record it, as the Spring executor
/// records a task that panicked) learns before it lets the unwind go on. Every cause but
/// [`UnwindCause::Panic`] is the runtime's own: the catching code must resume it
/// (`std::panic::resume_unwind`) at once, without runtime calls that wait.
///
/// ```
/// use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
/// use std::sync::{Arc, Mutex};
/// use tempi::{Runtime, ThreadSpec, UnwindCause};
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = seen.clone();
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("t"), move |cx| {
///     let caught = catch_unwind(AssertUnwindSafe(|| {
///         if cx.now() == tempi::Time::ZERO {
///             panic!("bad sensor");
///         }
///     }));
///     if let Err(payload) = caught {
///         log.lock().unwrap().push(UnwindCause::of(&*payload));
///         resume_unwind(payload);
///     }
/// }).unwrap();
/// rt.run().unwrap();
/// assert_eq!(*seen.lock().unwrap(), vec![UnwindCause::Panic("bad sensor".to_string())]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnwindCause {
    /// A panic of the application's code, with its message.
    Panic(String),
    /// The runtime abandons the job (its abort time passed, or its miss policy abandons it).
    Abort,
    /// The thread is killed.
    Kill,
    /// The run ends, or the thread is stopped, while it still runs.
    Stop,
    /// A restartable critical section (RCS) is abandoned, to be run again.
    Restart,
    /// The thread's stack is torn down while it is suspended (its run ended without it).
    Teardown,
}

impl UnwindCause {
    /// The cause of the unwind whose payload is `payload`.
    ///
    /// ```
    /// let payload: Box<dyn std::any::Any + Send> = Box::new("oops");
    /// assert_eq!(tempi::UnwindCause::of(&*payload), tempi::UnwindCause::Panic("oops".into()));
    /// ```
    pub fn of(payload: &(dyn Any + Send)) -> UnwindCause {
        if payload.is::<JobAborted>() {
            UnwindCause::Abort
        } else if payload.is::<Killed>() {
            UnwindCause::Kill
        } else if payload.is::<Shutdown>() {
            UnwindCause::Stop
        } else if payload.is::<RestartSection>() {
            UnwindCause::Restart
        } else if payload.is::<crate::os::context::ForcedUnwind>() {
            UnwindCause::Teardown
        } else {
            UnwindCause::Panic(crate::kernel::panic_message(payload))
        }
    }

    /// Whether it is a panic of the application's code (not one of the runtime's unwinds).
    ///
    /// ```
    /// assert!(!tempi::UnwindCause::Kill.is_panic());
    /// ```
    pub fn is_panic(&self) -> bool {
        matches!(self, UnwindCause::Panic(_))
    }
}

/// A panic's message; the runtime's own unwinds in a few words.
///
/// ```
/// assert_eq!(tempi::UnwindCause::Panic("oops".into()).to_string(), "oops");
/// assert_eq!(tempi::UnwindCause::Kill.to_string(), "the thread was killed");
/// ```
impl std::fmt::Display for UnwindCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            UnwindCause::Panic(message) => message,
            UnwindCause::Abort => "the job was abandoned",
            UnwindCause::Kill => "the thread was killed",
            UnwindCause::Stop => "the run ended or the thread was stopped",
            UnwindCause::Restart => "a critical section is restarted",
            UnwindCause::Teardown => "the thread's stack was torn down",
        })
    }
}

/// Whether an unwind payload is the restart of a critical section.
pub(crate) fn is_restart(payload: &(dyn Any + Send)) -> bool {
    payload.is::<RestartSection>()
}

/// Whether an unwind payload is a genuine panic (not one of the runtime's own unwinds).
pub(crate) fn is_panic(payload: &(dyn Any + Send)) -> bool {
    !(payload.is::<JobAborted>()
        || payload.is::<Shutdown>()
        || payload.is::<Killed>()
        || payload.is::<RestartSection>())
}
