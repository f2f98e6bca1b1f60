//! Thread control blocks: everything the kernel keeps per thread.
//!
//! # States
//!
//! | state | meaning | leaves by |
//! |---|---|---|
//! | `Dormant` | between jobs (or before the first release), or aborted | a release, a kill |
//! | `Ready` | queued in its CPU's scheduler | dispatch, an abort |
//! | `Running` | current on its CPU (possibly inside `work`) | yield, sleep, block, job end, preemption, slice end, exit |
//! | `Sleeping` | waits for an instant | its wake timer, an abort, a kill |
//! | `Blocked(Join)` | waits for a thread to end | that thread's end, an abort, a kill |
//! | `Blocked(Lock)` | waits for a lock, taken or refused by a ceiling | the lock handed over, a retry, its timeout; an abort or a kill only once it holds no other lock |
//! | `Blocked(Cond)` | waits on a condition variable | a notification, its timeout, an abort, a kill |
//! | `Blocked(Sem)` | waits for a semaphore unit | a unit handed over, its timeout, an abort, a kill |
//! | `Blocked(Msg)` | waits in `read` for a message | a message, its timeout, an abort, a kill |
//! | `Blocked(Reply)` | waits for the reply to its call | the reply, the call put away unanswered, an abort, a kill |
//! | `Blocked(Handler)` | waits for a busy handler to answer its call | the handler's answer, an abort, a kill |
//! | `Held` | would be ready, but its set is suspended (budget exhausted) | replenishment, leaving the set, a kill |
//!
//! A thread that ends has no state: its control block leaves its slot at once (`Kernel::exit`).
//!
//! Must not: hold behaviour beyond bookkeeping on one thread; transitions are the kernel's.

use std::collections::VecDeque;
use std::time::Duration;

use crate::kernel::thread_side::protocol::{Answer, Body, Interrupt, JobInfo, LockAnswer, Request, Response, Value};
use crate::kernel::timing::timers::{TimerHandle, TimerQueue};
use crate::objects::LockError;
use crate::plain::ThreadId;
use crate::policy::sched::{SchedInfo, Urgency};
use crate::stats::ThreadStats;
use crate::thread::{MissHandler, MissPolicy, ThreadOutcome, Timing};
use crate::time::Time;

pub(crate) type Co = crate::os::context::Coroutine<Response, Request, ThreadOutcome>;

/// What a blocked thread waits for, which also says what kind of answer it is owed: each
/// kind is answered only through its own function (`Kernel::answer_joiner`,
/// `answer_lock_waiter`, `answer_cond_waiter`, `answer_sem_waiter`), which takes that
/// kind's answer type, or by [`Wait::timeout_answer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Waits for a thread to end; answered with its outcome.
    Join(ThreadId),
    /// Waits for another CPU to create a thread (real time), on a stamp that names this wait
    /// only (an answer to a spawn given up finds another stamp, or none); answered with the
    /// new thread's id.
    Spawn(u32),
    /// Waits for a lock (kernel-local index): taken, or refused by a ceiling. Answered with a
    /// `LockAnswer`.
    Lock(u32),
    /// Waits on a condition variable (kernel-local index); answered with a `CondAnswer`.
    Cond(u32),
    /// Waits for a semaphore unit (kernel-local index); answered with a `SemAnswer`.
    Sem(u32),
    /// Waits in `read` for a message; answered with a `MsgAnswer`.
    Msg,
    /// Waits for the reply to the call in this message slot; answered with a `MsgAnswer`.
    Reply(u32),
    /// Waits for a busy handler to answer its call (a token of the handler's queue); answered
    /// with a `MsgAnswer`.
    Handler(u32),
    /// Real time: waits on a condition variable of another CPU (its raw id), where a proxy
    /// stands in the queue (`xcpu/sync.rs`); answered with a `CondAnswer`.
    RemoteCond(u32),
    /// Real time: waits for a unit of a semaphore of another CPU (its raw id), where a proxy
    /// stands in the queue (`xcpu/sync.rs`); answered with a `SemAnswer`.
    RemoteSem(u32),
}

impl Wait {
    /// The answer a bounded wait of this kind ends with when it times out: the answer of
    /// the request that waits (a lock, a condition wait, a procure); `None` for a join,
    /// which is never bounded.
    pub(crate) fn timeout_answer(self) -> Option<Answer> {
        Some(match self {
            Wait::Lock(_) => LockAnswer::Refused(LockError::Timeout).into(),
            Wait::Cond(_) | Wait::RemoteCond(_) => Answer::Value(Value::Cond(Ok(true))),
            Wait::Sem(_) | Wait::RemoteSem(_) => Answer::Value(Value::Sem(Err(LockError::Timeout))),
            Wait::Msg => Answer::Value(Value::Msg(Err(crate::plain::MsgError::Timeout))),
            Wait::Join(_) | Wait::Spawn(_) | Wait::Reply(_) | Wait::Handler(_) => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    Dormant,
    Ready,
    Running,
    Sleeping,
    Blocked(Wait),
    /// Ready, but its set's budget is exhausted under the suspend action.
    Held,
}

pub(crate) struct Tcb {
    pub(crate) id: ThreadId,
    pub(crate) summary: usize,
    pub(crate) cpu: usize,
    pub(crate) timing: Timing,
    pub(crate) wcet: Duration,
    pub(crate) rel_deadline: Option<Duration>,
    /// Job 0's absolute deadline, when it was fixed before the thread existed
    /// (`ThreadSpec::first_deadline_at`).
    pub(crate) first_deadline: Option<Time>,
    pub(crate) abort_after: Option<Duration>,
    pub(crate) importance: u32,
    pub(crate) miss_policy: MissPolicy,
    pub(crate) on_miss: Option<MissHandler>,
    pub(crate) max_jobs: Option<u32>,
    pub(crate) stack_size: usize,

    pub(crate) state: State,
    pub(crate) body: Option<Body>,
    pub(crate) coroutine: Option<Co>,
    /// Asked to run on an OS thread of its own (`ThreadSpec::os_backed`); honoured in real
    /// time only.
    pub(crate) os_backed: bool,
    /// Real time, an OS-backed thread once started: its OS thread, which holds its coroutine
    /// (see `os_backed.rs`).
    pub(crate) worker: Option<Box<crate::kernel::threads::os_backed::Worker>>,
    /// The answer to the request being handled, delivered at the next resume: `Answer::GO`
    /// (the answer of the requests that return nothing) until another is set, only ever of
    /// that request's own kind (see `thread_side/protocol.rs`).
    pub(crate) answer: Answer,
    /// The interrupt pending for the thread, kept apart from the answer so that neither
    /// overwrites the other: raised with [`Tcb::raise`] (the more urgent of two stays, see
    /// [`Interrupt`]) and taken only by a reply that may unwind, once it is due
    /// ([`Tcb::interrupt_due`]).
    pub(crate) interrupt: Option<Interrupt>,
    pub(crate) abort_pending: bool,
    /// End the thread at its next task boundary.
    pub(crate) kill_pending: bool,
    /// The thread set it belongs to (kernel-local index).
    pub(crate) set: Option<u32>,
    /// Its place in its set's per-member budget counts (`u32::MAX`: none, the list was full).
    pub(crate) set_record: u32,
    /// At background urgency while its set's budget is exhausted.
    pub(crate) demoted: bool,
    /// Execution-time timer on this thread's clock.
    pub(crate) cpu_timer: Option<crate::kernel::timing::sets::ExecTimer>,
    /// Locks held (kernel-local indices), in the order taken.
    pub(crate) held: Vec<u32>,
    /// Locks taken through the fast path and not yet known to the kernel; shared with the
    /// thread's `Ctx`, which counts them.
    pub(crate) fast_held: std::rc::Rc<std::cell::Cell<u32>>,
    /// Message fields between the thread and the kernel; shared with the thread's `Ctx`.
    pub(crate) mail: std::rc::Rc<crate::kernel::messaging::messages::Exchange>,
    /// Its new queue, save queues and current message.
    pub(crate) mbox: crate::kernel::messaging::messages::Mailbox,
    /// Its part in the message-level scheduling events (lends, semaphores inside).
    pub(crate) meta: crate::kernel::cpu::sched_meta::MetaTcb,
    /// The reply to the request just handled must not carry an interrupt (an unlock made
    /// from a destructor cannot unwind): one pending waits in `interrupt`.
    pub(crate) quiet_reply: bool,
    /// The cost of a refused lock attempt has been charged; the next refusal waits.
    pub(crate) paid_block_cost: bool,
    /// The read of a fused reply + read waits for the thread's next resume (the reply let a
    /// more urgent thread run first; see `messaging/short_path.rs`).
    pub(crate) pending_read: bool,
    /// An unlock waiting for its simulated cost to be paid.
    pub(crate) pending_unlock: Option<(crate::plain::LockId, bool)>,
    /// The restartable lock (kernel-local index) whose critical section was aborted (RCS): the
    /// section is unwound at the first reply that may unwind, and the mark is dropped once the
    /// lock is released some other way (the section ended first).
    pub(crate) restart_section: Option<u32>,
    /// The lock it asked for while it waits (it may be queued on another lock: ceiling
    /// blocking).
    pub(crate) wants: Option<u32>,
    /// Whether that request came from `Mutex::critical`.
    pub(crate) wants_restartable: bool,
    /// The thread is ending: what it still holds goes to the next waiters unconditionally.
    pub(crate) exiting: bool,
    /// The global lock (index among the runtime's global locks) this thread asked for or
    /// holds: from the request to the release it runs without preemption (MSRP).
    pub(crate) global: Option<u32>,
    /// Virtual time: spinning for that lock since this instant.
    pub(crate) spin_since: Option<Time>,
    /// Preemption is on (`Ctx::preemption`). While off, a preemption or the end of a time
    /// slice that would take the CPU from the running thread is held back (the two flags
    /// below) and carried out when it switches preemption back on. It stays with the
    /// thread when it blocks, yields or ends a job.
    pub(crate) preemptible: bool,
    /// A preemption was held back while preemption was off (cleared when the thread leaves
    /// the CPU, which makes it moot).
    pub(crate) preempt_deferred: bool,
    /// Its time slice expired while preemption was off (cleared the same way).
    pub(crate) slice_deferred: bool,
    /// Simulated CPU demand still to execute in the current `work` call, in ns.
    pub(crate) work_left: u64,
    /// Inside a `work` call (possibly with nothing left, waiting to be resumed).
    pub(crate) in_work: bool,
    /// Bumped whenever a sleep or wait ends, so stale wake timers are ignored.
    pub(crate) wait_token: u64,
    /// The timer of its sleep or bounded wait, cancelled when the wait ends otherwise.
    pub(crate) wait_timer: Option<TimerHandle>,
    /// Its release, deadline and abort-time timers, cancelled when it ends. A deadline at the
    /// next release shares the release timer's entry and has no handle of its own.
    pub(crate) job_timers: [Option<TimerHandle>; 3],

    pub(crate) released: u32,
    pub(crate) finished: u32,
    pub(crate) job_active: bool,
    /// Released jobs waiting for the current one to end (numbers `released - pending` on).
    /// Counted, not stored: a periodic thread that falls behind keeps every release.
    pub(crate) pending: u32,
    /// Release of the oldest waiting job of a periodic thread; the others follow a period
    /// apart (a skip only ever drops the oldest, so there is no gap).
    pub(crate) pending_release: Time,
    /// Releases of the waiting jobs of a sporadic thread, bounded when the thread is created
    /// (`release_queue_cap`); a release that finds it full is reported as an overflow.
    pub(crate) release_queue: VecDeque<Time>,
    pub(crate) release_queue_cap: usize,
    /// Sporadic releases deferred to their minimum inter-arrival time: the release timer is
    /// armed for the first, the others follow `min_interarrival` apart.
    pub(crate) deferred: u32,
    /// The job whose deadline timer is armed, or is armed at its release: one timer per
    /// thread, moved on to the next unfinished job when it fires.
    pub(crate) deadline_next: u32,
    /// The same for abort times.
    pub(crate) abort_next: u32,
    /// Suspended at its job boundary (in the job loop, or not started yet): the current
    /// job's body has not begun.
    pub(crate) at_boundary: bool,
    /// Its stack still holds a job that has already ended (abandoned at its deadline or abort
    /// time while preempted or waiting): unwound, in no simulated time, when the thread next
    /// gets the CPU, before its next job's body.
    pub(crate) stale: bool,
    /// An abort or a kill was delivered and the job loop has not reported the unwind yet: the
    /// reply is delivered again only to a thread that caught it and carried on.
    pub(crate) unwind_sent: bool,
    /// The current job; change it with [`Tcb::set_job`].
    pub(crate) job: JobInfo,
    /// The thread's execution-time clock, in ns; copied into `stats.cpu_time` when read out.
    pub(crate) cpu_ns: u64,
    /// Threads blocked joining this one (an upper bound: an aborted joiner is not subtracted).
    pub(crate) joiners: u32,
    /// Kept here on the hot path; copied to the thread's summary when it ends, with the
    /// completed jobs and their response times taken from `dist.response` (see
    /// [`Tcb::final_stats`]), which the job path does not count twice.
    pub(crate) stats: ThreadStats,
    /// Per-job histograms, allocated at spawn; moved to the thread's summary when it ends.
    pub(crate) dist: crate::plain::ThreadDistributions,
    /// The current job has been dispatched (its start latency is recorded).
    pub(crate) job_ran: bool,
    /// Under a global policy: the thread has been dispatched at least once, so `cpu` is
    /// where it last ran and a dispatch elsewhere is a migration.
    pub(crate) has_run: bool,
    pub(crate) skip_next: u32,
    pub(crate) next_sporadic: Time,

    pub(crate) base_urgency: Urgency,
    /// Urgency lent by threads waiting on this one (inheritance protocols set it).
    pub(crate) inherited: Option<Urgency>,
    /// What the scheduler is shown of this thread, kept current as it changes (its
    /// priority, effective urgency, current job and that job's CPU time), so scheduler
    /// calls borrow it instead of assembling one. `sched.urgency` is the effective urgency:
    /// the larger of base and inherited (or background while demoted).
    pub(crate) sched: SchedInfo,
}

impl Tcb {
    /// Whether the thread holds no lock at all (kernel-managed or fast-path): the condition
    /// for an abort or a kill to take effect.
    pub(crate) fn holds_nothing(&self) -> bool {
        self.held.is_empty() && self.fast_held.get() == 0 && self.global.is_none()
    }

    /// Whether the thread, running, keeps its CPU against preemptions and the end of its
    /// time slice: preemption is off and its set's budget has not demoted it (a budget's
    /// action always applies).
    #[inline]
    pub(crate) fn holds_cpu(&self) -> bool {
        !self.preemptible && !self.demoted
    }

    /// Effective urgency.
    #[inline]
    pub(crate) fn urgency(&self) -> Urgency {
        self.sched.urgency
    }

    /// Add `ran` ns to the thread's execution-time clock and its job's CPU time.
    #[inline(always)]
    pub(crate) fn add_cpu_time(&mut self, ran: u64) {
        // A switch's share is far below a second: adding it needs no division, and while the
        // nanoseconds stay below a second not even a carry (nor `+=`'s overflow checks).
        let job = self.sched.job_cpu_time;
        let nanos = u64::from(job.subsec_nanos()) + ran;
        self.sched.job_cpu_time = if nanos < 1_000_000_000 {
            Duration::new(job.as_secs(), nanos as u32)
        } else {
            job.saturating_add(Duration::from_nanos(ran))
        };
        // A clock set near its end stops there rather than wrapping to zero.
        self.cpu_ns = self.cpu_ns.saturating_add(ran);
    }

    /// Make the thread spend `cost` of simulated runtime overhead before its next reply, as
    /// `work` would. Returns whether that starts its demand (it had none left).
    #[inline]
    pub(crate) fn add_overhead(&mut self, cost: Duration) -> bool {
        let fresh = self.work_left == 0;
        self.work_left += crate::time::nanos(cost);
        self.in_work = true;
        fresh
    }

    /// Give the thread `answer` for its next resume.
    #[inline]
    pub(crate) fn set_answer(&mut self, answer: impl Into<Answer>) {
        std::mem::replace(&mut self.answer, answer.into()).discard();
    }

    /// Take the answer for this resume, leaving `Answer::GO` for the next request.
    #[inline(always)]
    pub(crate) fn take_answer(&mut self) -> Answer {
        std::mem::replace(&mut self.answer, Answer::GO)
    }

    /// The pending interrupt, if it may be delivered now: a restart at once (the thread is in
    /// its section, which is what it ends); the others, which end the job or the thread, only
    /// once the thread holds no lock or is at a job boundary, as an abort waits.
    #[inline]
    pub(crate) fn interrupt_due(&self) -> Option<Interrupt> {
        self.interrupt.filter(|&i| i == Interrupt::Restart || self.holds_nothing() || self.at_boundary)
    }

    /// Make `interrupt` pending, unless a more urgent one already is.
    #[inline]
    pub(crate) fn raise(&mut self, interrupt: Interrupt) {
        self.interrupt = Some(self.interrupt.map_or(interrupt, |pending| pending.max(interrupt)));
    }

    /// Number of the oldest waiting job (meaningful while `pending > 0`).
    pub(crate) fn pending_front(&self) -> u32 {
        self.released - self.pending
    }

    /// Release and deadline of job `number`, which is current or waiting.
    pub(crate) fn job_times(&self, number: u32) -> (Time, Option<Time>) {
        if self.job_active && self.job.number == number {
            return (self.job.release, self.job.deadline);
        }
        let k = number - self.pending_front();
        let release = match self.timing {
            Timing::Periodic { period, .. } => self.pending_release + period * k,
            _ => self.release_queue.get(k as usize).copied().unwrap_or(self.pending_release),
        };
        (release, self.deadline_of(number, release))
    }

    /// The absolute deadline of job `number`, released at `release`.
    #[inline]
    pub(crate) fn deadline_of(&self, number: u32, release: Time) -> Option<Time> {
        match self.first_deadline {
            Some(d) if number == 0 => Some(d),
            _ => self.rel_deadline.map(|d| release + d),
        }
    }

    /// Whether job `number` has been released and has not ended.
    pub(crate) fn unfinished(&self, number: u32) -> bool {
        (self.job_active && self.job.number == number)
            || (self.pending > 0 && number >= self.pending_front() && number < self.released)
    }

    /// Take the oldest waiting job off the count: its number and release.
    pub(crate) fn pop_pending(&mut self) -> (u32, Time) {
        let number = self.pending_front();
        let release = match self.timing {
            Timing::Periodic { period, .. } => {
                let r = self.pending_release;
                self.pending_release = r + period;
                r
            }
            _ => self.release_queue.pop_front().unwrap_or(self.pending_release),
        };
        self.pending -= 1;
        (number, release)
    }

    /// Whether another job may come after the ones ended so far.
    pub(crate) fn more_jobs(&self) -> bool {
        !matches!(self.timing, Timing::OneShot) && self.max_jobs.is_none_or(|m| self.finished < m)
    }

    /// The first job that has not ended, or `released` when none is left.
    pub(crate) fn first_unfinished(&self) -> u32 {
        if self.job_active {
            self.job.number
        } else if self.pending > 0 {
            self.pending_front()
        } else {
            self.released
        }
    }

    /// The wait or sleep ends: its timer goes stale and is cancelled.
    #[inline]
    pub(crate) fn end_wait(&mut self, timers: &mut TimerQueue) {
        self.wait_token += 1;
        if let Some(h) = self.wait_timer.take() {
            timers.cancel(h);
        }
    }

    /// Start showing `job` as the current one, with no CPU time yet.
    pub(crate) fn set_job(&mut self, job: JobInfo) {
        self.job = job;
        self.sched.release = job.release;
        self.sched.deadline = job.deadline;
        self.sched.job = job.number;
        self.sched.job_cpu_time = Duration::ZERO;
        self.job_ran = false;
    }

    /// The current job runs for the first time at `now`: its start latency is recorded.
    #[inline]
    pub(crate) fn job_first_runs(&mut self, now: Time) {
        self.job_ran = true;
        self.dist.start_latency.record_nanos(now.as_nanos().saturating_sub(self.job.release.as_nanos()));
    }

    /// The statistics its summary reports: what the kernel counted, the execution-time clock,
    /// and the completed jobs with their response times, which the response histogram holds.
    pub(crate) fn final_stats(&self) -> ThreadStats {
        let response = &self.dist.response;
        ThreadStats {
            cpu_time: Duration::from_nanos(self.cpu_ns),
            completed: response.count(),
            response_min: response.min(),
            response_max: response.max(),
            response_total: response.sum(),
            ..self.stats
        }
    }
}
