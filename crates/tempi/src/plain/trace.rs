//! The trace's records: what happened ([`TraceKind`]), when, to which thread on which CPU
//! ([`TraceRecord`]), and the codes some kinds carry (why a thread stopped, how a job ended).
//! Re-exported by `tempi::trace`, which owns the per-CPU buffers and the exporters.

use crate::plain::ids::ThreadId;
use crate::time::Time;

/// What happened. Stored as one byte.
///
/// ```
/// assert_eq!(tempi::trace::TraceKind::Run.name(), "run");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TraceKind {
    /// A thread was created; `arg` is its CPU.
    Spawn,
    /// A job was released; `job` is its number, `arg` its absolute deadline in ns
    /// (`u64::MAX` when it has none). The record's time is the nominal release instant.
    Release,
    /// A release was dropped by the [`crate::MissPolicy::SkipNext`] policy; `arg` is the
    /// nominal release time.
    ReleaseSkipped,
    /// The thread starts executing on the CPU (dispatch or resumption).
    Run,
    /// The thread stops executing; `arg` is a [`StopReason`] code.
    Stop,
    /// The thread woke up from sleep or a wait and became ready.
    Wake,
    /// The job finished; `arg` is its response time in ns.
    JobComplete,
    /// The job was abandoned: `arg` is 0 when its miss policy or abort time abandoned it, else
    /// the code of a [`JobEnd`]: the end of its thread (a kill, a panic of its body) cut it
    /// short, while it ran or waited to run. Every job released ends with a `JobComplete` or a
    /// `JobAbort` record, unless the run ended first.
    JobAbort,
    /// The job's deadline passed unfinished; `arg` is the deadline in ns.
    Miss,
    /// The thread ended; `arg` is 0 for a normal end, 1 for a panic, 2 for a kill, 3 for a
    /// thread that could not be started ([`crate::ThreadOutcome::NotStarted`]).
    Exit,
    /// A timing event's handler ran; `arg` is the event's index.
    Timer,
    /// A thread set's budget ran out; `job` is the set's index, `arg` its group clock in ns.
    /// `thread` is a placeholder.
    BudgetExhausted,
    /// A thread set's budget got time back; `job` is the set's index, `arg` the budget left
    /// in ns. `thread` is a placeholder.
    BudgetReplenished,
    /// The thread got a lock; `arg` is the lock's index.
    LockAcquired,
    /// The thread released a lock; `arg` is the lock's index.
    LockReleased,
    /// The thread's effective urgency changed because of the locks it holds (inheritance, a
    /// ceiling); `arg` is the new urgency as the bits of an `i64`.
    Inherit,
    /// A release of a sporadic thread was dropped because its queue of waiting releases was
    /// full ([`crate::ThreadSpec::release_queue`]); `arg` is the nominal release time. Counted
    /// in [`crate::ThreadStats::overflows`].
    ReleaseOverflow,
    /// A release of a sporadic thread came after all of its jobs
    /// ([`crate::ThreadSpec::max_jobs`]) were released, so it made no job; `arg` is the
    /// release time. Counted in [`crate::ThreadStats::beyond_limit`].
    ReleaseBeyondLimit,
    /// A message call of the thread failed for want of room or was refused: `arg` is 0 when
    /// the message pool was exhausted, 1 when the queue was full, 2 when the recipient's queue
    /// policy refused it, 3 when the recipient of a timed message ended before its instant, 4
    /// when the request queue of the recipient's real-time CPU was full (a retry counted on
    /// the same [`TraceKind::QueueFull`] record as the refusal before it writes none), 5 when
    /// a busy handler's queue was full, 6 for a timed message whose instant had not come when
    /// the run ended (written at the end, on its sender), 7 for a message a handler did not
    /// serve because it had panicked (on its sender; see [`crate::message::MsgError`],
    /// [`crate::Ctx::send_at`] and [`crate::MessageStats`]).
    MessageRefused,
    /// The thread started spinning for a global (MSRP) lock that another CPU's thread holds;
    /// `arg` is the lock's id (global locks are numbered from 2^31, above the CPU-local
    /// locks' indices, and `LockAcquired` and `LockReleased` give them the same way). The
    /// spin ends at the thread's next `LockAcquired`, and its length counts in
    /// [`crate::ThreadStats::spin_time`]. In real time, where the thread spins in its own
    /// code, both records are written when it releases the lock, stamped with the instants
    /// the thread read before and after its spin.
    Spin,
    /// Real time: a release, kill, priority change or semaphore unit this CPU posted to
    /// another was refused there (the thread had ended, or is not sporadic; the semaphore's
    /// count is at its maximum); `thread` is the thread it named (the giver, for a unit),
    /// `job` the request (0 release, 1 kill, 2 set priority, 3 semaphore unit), `arg` the CPU
    /// that refused it. Counted in [`crate::CrossCpuStats::refused`]. Also a wait on a
    /// condition variable or semaphore of another CPU refused for want of room for its proxy
    /// there (`job` 4, `thread` the waiter), counted in [`crate::CrossCpuStats::proxies_full`].
    CrossCpuRefused,
    /// Real time: a post from this CPU found another CPU's queue full
    /// ([`crate::Config::cross_cpu_queue`]); `thread` is the thread the request named, `arg`
    /// the full queue's CPU. Counted in [`crate::CrossCpuStats::queue_full`]. Posts retried
    /// against the same full queue do not write one record each: the refusals that follow,
    /// of the same request about the same thread, until a post to that CPU fits again, are
    /// counted in `job`
    /// (the record's time is the first refusal's), so a record stands for `job + 1`
    /// refusals, and the records of a run add up to `queue_full` (unless the trace buffer
    /// was full).
    QueueFull,
    /// The thread switched its preemption back on ([`crate::Ctx::preemption`]) with a
    /// preemption held back while it was off, which is carried out now: `arg` is 0 when a
    /// more urgent thread became ready (or the thread lost urgency) meanwhile, and the policy
    /// now chooses who runs; 1 when its time slice expired meanwhile, and it goes to the end
    /// of its queue.
    PreemptionDeferred,
    /// A timing event asked to release a thread that had ended or is not sporadic; `thread`
    /// is that thread, `arg` the event's index, or `u64::MAX` for the handler of an
    /// execution-time timer ([`crate::Runtime::arm_thread_timer`],
    /// [`crate::Runtime::arm_set_timer`]). Counted in
    /// [`crate::RunOutcome::event_releases_refused`].
    EventReleaseRefused,
    /// Real time: an answer from another CPU reached this one after the thread it was for had
    /// stopped waiting for it (its job was aborted, or it was killed, meanwhile): the answer
    /// to a spawn or a join it gave up on. `thread` is that thread, `job` the request (5
    /// spawn, 6 join), `arg` the index ([`crate::ThreadId::index`]) of the thread created
    /// (it runs and is reported as any other; `u64::MAX` when the spawn failed there) or
    /// joined. Counted in [`crate::CrossCpuStats::stale_answers`].
    StaleAnswer,
}

impl TraceKind {
    /// A short lowercase name, used by exporters.
    ///
    /// ```
    /// assert_eq!(tempi::trace::TraceKind::JobComplete.name(), "complete");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            TraceKind::Spawn => "spawn",
            TraceKind::Release => "release",
            TraceKind::ReleaseSkipped => "release-skipped",
            TraceKind::Run => "run",
            TraceKind::Stop => "stop",
            TraceKind::Wake => "wake",
            TraceKind::JobComplete => "complete",
            TraceKind::JobAbort => "abort",
            TraceKind::Miss => "miss",
            TraceKind::Exit => "exit",
            TraceKind::Timer => "timer",
            TraceKind::BudgetExhausted => "budget-exhausted",
            TraceKind::BudgetReplenished => "budget-replenished",
            TraceKind::LockAcquired => "lock",
            TraceKind::LockReleased => "unlock",
            TraceKind::Inherit => "inherit",
            TraceKind::ReleaseOverflow => "release-overflow",
            TraceKind::ReleaseBeyondLimit => "release-beyond-limit",
            TraceKind::MessageRefused => "message-refused",
            TraceKind::Spin => "spin",
            TraceKind::CrossCpuRefused => "xcpu-refused",
            TraceKind::QueueFull => "queue-full",
            TraceKind::EventReleaseRefused => "event-release-refused",
            TraceKind::StaleAnswer => "stale-answer",
            TraceKind::PreemptionDeferred => "preemption-deferred",
        }
    }
}

/// Why a thread stopped executing: the `arg` of a [`TraceKind::Stop`] record.
///
/// ```
/// use tempi::trace::StopReason;
/// assert_eq!(StopReason::from_code(StopReason::Preempted as u64), Some(StopReason::Preempted));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum StopReason {
    /// A more urgent thread took the CPU.
    Preempted = 0,
    /// The thread yielded.
    Yielded = 1,
    /// Its time slice ran out.
    SliceExpired = 2,
    /// It waits for something (a join, later a lock or a message).
    Blocked = 3,
    /// It sleeps until a time.
    Sleeping = 4,
    /// Its job is done; it waits for the next release.
    JobDone = 5,
    /// Its job was abandoned.
    Aborted = 6,
    /// It ended.
    Exited = 7,
    /// Its thread set's budget ran out and the set is suspended.
    Suspended = 8,
}

impl StopReason {
    /// Decode a stop record's `arg`.
    ///
    /// ```
    /// assert_eq!(tempi::trace::StopReason::from_code(99), None);
    /// ```
    pub fn from_code(code: u64) -> Option<StopReason> {
        use StopReason::*;
        Some(match code {
            0 => Preempted,
            1 => Yielded,
            2 => SliceExpired,
            3 => Blocked,
            4 => Sleeping,
            5 => JobDone,
            6 => Aborted,
            7 => Exited,
            8 => Suspended,
            _ => return None,
        })
    }

    /// A short lowercase name.
    ///
    /// ```
    /// assert_eq!(tempi::trace::StopReason::Yielded.name(), "yield");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            StopReason::Preempted => "preempt",
            StopReason::Yielded => "yield",
            StopReason::SliceExpired => "slice",
            StopReason::Blocked => "block",
            StopReason::Sleeping => "sleep",
            StopReason::JobDone => "done",
            StopReason::Aborted => "abort",
            StopReason::Exited => "exit",
            StopReason::Suspended => "suspend",
        }
    }
}

/// What ended a job its thread's end cut short: the `arg` of its [`TraceKind::JobAbort`]
/// record (0 is a job abandoned by its miss policy or abort time).
///
/// ```
/// use tempi::trace::JobEnd;
/// assert_eq!(JobEnd::from_code(JobEnd::Killed.code()), Some(JobEnd::Killed));
/// assert_eq!(JobEnd::from_code(0), None);
/// assert_eq!(JobEnd::Panicked.name(), "panic");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobEnd {
    /// Its thread was killed ([`crate::Ctx::kill`], a budget with the action Kill, a Spring
    /// group's kill) while the job ran or waited to run.
    Killed,
    /// Its thread's body panicked in this job, or in an earlier one while this job waited.
    Panicked,
    /// Its thread could not be started ([`crate::ThreadOutcome::NotStarted`]).
    NotStarted,
}

impl JobEnd {
    /// The `arg` of the job's [`TraceKind::JobAbort`] record: 1 for a panic, 2 for a kill, 3
    /// for a thread not started, the codes of the thread's [`TraceKind::Exit`] record.
    pub fn code(self) -> u64 {
        match self {
            JobEnd::Panicked => 1,
            JobEnd::Killed => 2,
            JobEnd::NotStarted => 3,
        }
    }

    /// Decode a [`TraceKind::JobAbort`] record's `arg`; `None` for 0 (miss policy, abort
    /// time) and unknown codes.
    pub fn from_code(code: u64) -> Option<JobEnd> {
        match code {
            1 => Some(JobEnd::Panicked),
            2 => Some(JobEnd::Killed),
            3 => Some(JobEnd::NotStarted),
            _ => None,
        }
    }

    /// The report's word for it: `"kill"`, `"panic"` or `"not-started"`.
    pub fn name(self) -> &'static str {
        match self {
            JobEnd::Killed => "kill",
            JobEnd::Panicked => "panic",
            JobEnd::NotStarted => "not-started",
        }
    }
}

/// One kernel transition. Fixed size (at most 48 bytes), `Copy`, written
/// without allocation.
///
/// ```
/// use tempi::trace::{TraceKind, TraceRecord};
/// assert!(std::mem::size_of::<TraceRecord>() <= 48);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// When.
    pub time: Time,
    /// Kind-specific value; see [`TraceKind`].
    pub arg: u64,
    /// The thread concerned (for [`TraceKind::Timer`], a placeholder).
    pub thread: ThreadId,
    /// The thread's current job number.
    pub job: u32,
    /// Order of writing within the kernel that wrote it; breaks ties between records of the
    /// same instant on different CPUs of one simulated machine.
    pub seq: u32,
    /// The CPU it happened on.
    pub cpu: u16,
    /// What happened.
    pub kind: TraceKind,
}
