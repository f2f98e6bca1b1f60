//! Thread control blocks: everything the kernel keeps per thread.
//!
//! # States
//!
//! | state | meaning | leaves by |
//! |---|---|---|
//! | `Dormant` | between jobs (or before the first release) | a release |
//! | `Ready` | queued in its CPU's scheduler | dispatch |
//! | `Running` | current on its CPU (possibly inside `work`) | yield, sleep, block, job end, preemption, slice end |
//! | `Sleeping` | waits for an instant | its wake timer, an abort |
//! | `Blocked` | waits for another thread | that thread's end, an abort |
//! | `Held` | would be ready, but its set is suspended (budget exhausted) | replenishment, leaving the set, a kill |
//! | `Exited` | ended; the slot is freed at once | — |

use std::time::Duration;

use corosensei::stack::DefaultStack;
use corosensei::Coroutine;

use super::ctx::{Body, JobInfo, Reply, Request, Response};
use crate::policy::sched::{SchedInfo, Urgency};
use crate::runtime::ThreadStats;
use crate::thread::{MissHandler, MissPolicy, ThreadId, ThreadOutcome, Timing};
use crate::time::Time;

pub(crate) type Co = Coroutine<Response, Request, ThreadOutcome, DefaultStack>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    Join(ThreadId),
    /// Waits for a lock (kernel-local index): taken, or refused by a ceiling.
    Lock(u32),
    /// Waits on a condition variable (kernel-local index).
    Cond(u32),
    /// Waits for a semaphore unit (kernel-local index).
    Sem(u32),
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

/// A release that arrived while the previous job was still running.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Queued {
    pub(crate) number: u32,
    pub(crate) release: Time,
    pub(crate) deadline: Option<Time>,
    pub(crate) missed: bool,
    /// Its abort time passed while it waited.
    pub(crate) abandon: bool,
}

/// Fixed-capacity FIFO of queued releases: no allocation when a job overruns.
#[derive(Debug, Default)]
pub(crate) struct Backlog {
    items: [Queued; Backlog::CAPACITY],
    head: usize,
    len: usize,
}

impl Backlog {
    pub(crate) const CAPACITY: usize = 8;

    pub(crate) fn is_full(&self) -> bool {
        self.len == Self::CAPACITY
    }
    pub(crate) fn push(&mut self, q: Queued) {
        debug_assert!(!self.is_full());
        self.items[(self.head + self.len) % Self::CAPACITY] = q;
        self.len += 1;
    }
    pub(crate) fn pop(&mut self) -> Option<Queued> {
        if self.len == 0 {
            return None;
        }
        let q = self.items[self.head];
        self.head = (self.head + 1) % Self::CAPACITY;
        self.len -= 1;
        Some(q)
    }
    pub(crate) fn get_mut(&mut self, number: u32) -> Option<&mut Queued> {
        (0..self.len)
            .map(|i| (self.head + i) % Self::CAPACITY)
            .find(|&i| self.items[i].number == number)
            .map(|i| &mut self.items[i])
    }
}

pub(crate) struct Tcb {
    pub(crate) id: ThreadId,
    pub(crate) summary: usize,
    pub(crate) cpu: usize,
    pub(crate) timing: Timing,
    pub(crate) wcet: Duration,
    pub(crate) rel_deadline: Option<Duration>,
    pub(crate) abort_after: Option<Duration>,
    pub(crate) importance: u32,
    pub(crate) miss_policy: MissPolicy,
    pub(crate) on_miss: Option<MissHandler>,
    pub(crate) max_jobs: Option<u32>,
    pub(crate) stack_size: usize,

    pub(crate) state: State,
    pub(crate) body: Option<Body>,
    pub(crate) coroutine: Option<Co>,
    /// Delivered at the next resume; `None` means "go on".
    pub(crate) reply: Option<Reply>,
    pub(crate) abort_pending: bool,
    /// End the thread at its next task boundary.
    pub(crate) kill_pending: bool,
    /// The thread set it belongs to (kernel-local index).
    pub(crate) set: Option<u32>,
    /// At background urgency while its set's budget is exhausted.
    pub(crate) demoted: bool,
    /// Execution-time timer on this thread's clock.
    pub(crate) cpu_timer: Option<super::sets::ExecTimer>,
    /// Locks held (kernel-local indices), in the order taken.
    pub(crate) held: Vec<u32>,
    /// Locks taken through the fast path and not yet known to the kernel; shared with the
    /// thread's `Ctx`, which counts them.
    pub(crate) fast_held: std::rc::Rc<std::cell::Cell<u32>>,
    /// The reply to the request just handled must not carry an abort or a kill (an unlock
    /// made from a destructor cannot unwind).
    pub(crate) quiet_reply: bool,
    /// The cost of a refused lock attempt has been charged; the next refusal waits.
    pub(crate) paid_block_cost: bool,
    /// An unlock waiting for its simulated cost to be paid.
    pub(crate) pending_unlock: Option<(crate::sync::LockId, bool)>,
    /// Its restartable critical section was aborted (RCS): unwind it at the next resume.
    pub(crate) restart_pending: bool,
    /// The lock it asked for while it waits (it may be queued on another lock: ceiling
    /// blocking).
    pub(crate) wants: Option<u32>,
    /// Whether that request came from `Mutex::critical`.
    pub(crate) wants_restartable: bool,
    /// The thread is ending: what it still holds goes to the next waiters unconditionally.
    pub(crate) exiting: bool,
    /// Simulated CPU demand still to execute in the current `work` call, in ns.
    pub(crate) work_left: u64,
    /// Inside a `work` call (possibly with nothing left, waiting to be resumed).
    pub(crate) in_work: bool,
    /// Bumped whenever a sleep or wait ends, so stale wake timers are ignored.
    pub(crate) wait_token: u64,

    pub(crate) released: u32,
    pub(crate) finished: u32,
    pub(crate) job_active: bool,
    /// The current job; change it with [`Tcb::set_job`].
    pub(crate) job: JobInfo,
    /// The thread's execution-time clock, in ns; copied into `stats.cpu_time` when read out.
    pub(crate) cpu_ns: u64,
    pub(crate) backlog: Backlog,
    /// Threads blocked joining this one (an upper bound: an aborted joiner is not subtracted).
    pub(crate) joiners: u32,
    /// Kept here on the hot path; copied to the thread's summary when it ends.
    pub(crate) stats: ThreadStats,
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
        self.held.is_empty() && self.fast_held.get() == 0
    }

    /// Effective urgency.
    #[inline]
    pub(crate) fn urgency(&self) -> Urgency {
        self.sched.urgency
    }

    /// Add `ran` ns to the thread's execution-time clock and its job's CPU time.
    #[inline(always)]
    pub(crate) fn add_cpu_time(&mut self, ran: u64) {
        // A switch's share is far below a second: adding it needs no division.
        self.sched.job_cpu_time +=
            if ran < 1_000_000_000 { Duration::new(0, ran as u32) } else { Duration::from_nanos(ran) };
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

    /// Give the thread `reply` for its next resume. Replies are taken at every resume, so
    /// there is normally none to drop: the drop glue runs only when there is one (a plain
    /// assignment would call it every time).
    #[inline]
    pub(crate) fn set_reply(&mut self, reply: Reply) {
        if let Some(old) = self.reply.replace(reply) {
            drop(old);
        }
    }

    /// Start showing `job` as the current one, with no CPU time yet.
    pub(crate) fn set_job(&mut self, job: JobInfo) {
        self.job = job;
        self.sched.release = job.release;
        self.sched.deadline = job.deadline;
        self.sched.job = job.number;
        self.sched.job_cpu_time = Duration::ZERO;
    }
}
