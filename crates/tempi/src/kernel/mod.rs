//! The kernel: mechanism only. It owns thread control blocks, coroutines and stacks, the timer
//! queue, job release and deadline tracking, CPU-time accounting and the trace; it makes no
//! scheduling decision itself and asks its CPUs' [`Scheduler`]s at every transition.
//!
//! One kernel drives one or more CPUs on the OS thread that calls `Kernel::run`: all of them
//! in virtual time, exactly one per dispatcher thread in real time. The loop (`cpu/run.rs`) is the
//! same for both clocks:
//!
//! ```text
//! loop {
//!     every 65,536 turns: call the progress hook
//!     stop if another dispatcher of the run has failed
//!     real time: carry out the requests other CPUs posted (see `xcpu`)
//!     resume the threads whose `work` ended now   (their jobs end before what else is due now)
//!     fire every timer that is due                (releases, deadlines, abort times, wakes,
//!                                                  wait timeouts, slices, events, replenishments)
//!     fire the execution-time events reached      (thread and set timers, budgets)
//!     on every CPU, pass after pass until none progresses: fire timers due meanwhile,
//!                   carry out a preemption, pick if idle, resume the current thread until it
//!                   starts `work`, waits, yields or ends
//!     stop if no thread is left (real time: on any CPU) or the run failed (a wrong pick, a
//!                   full timer table)
//!     find the next instant: earliest timer, execution-time event, or end of a CPU's `work`;
//!                   none: stop; at or past the horizon: let the clock pass to it and stop
//!     let the clock pass to it                    (virtual: jump; real: spin if busy, else sleep;
//!                                                  a post from another CPU ends the wait)
//!     credit the work done meanwhile to each CPU's current thread
//! }
//! ```
//!
//! # Rooms
//!
//! Each room is a folder whose `mod.rs` says what it owns and what it must not touch. The
//! rooms add `impl Kernel` blocks on the one `Kernel` struct below. The state one room owns is
//! that room's own type, one field of `Kernel`: `table` (`threads::ThreadTable`), `exec`
//! (`timing::ExecTime`), `sync` (`locking::SyncObjects`), `mail` (`messaging::Mail`) and
//! `cross` (`xcpu::CrossCpu`); what every room reads (the clock, the CPUs, the timer queue,
//! the trace switches) stays on `Kernel` itself.
//!
//! | room | what it owns |
//! |---|---|
//! | `cpu/` | building a kernel (`seed`), the run loop (`run`), dispatch and urgency (`dispatch`), global policies (`global`), the direct switch (`direct`), scheduling messages (`sched_meta`), stacking schedulers (`sched_stack`) |
//! | `threads/` | thread control blocks (`tcb`), the stack pool (`stacks`), jobs, releases and deadlines (`jobs`), answering a thread's requests (`requests`, `restarts`), OS-backed threads (`os_backed`) |
//! | `timing/` | the timer queue (`timers`), thread sets and execution-time clocks (`sets`), budgets (`budgets`) |
//! | `locking/` | the lock mechanism (`locks`, `hand_off`), the urgency locks lend (`lending`), MSRP's global locks (`global_locks`), condition-variable and semaphore queues (`waits`) |
//! | `messaging/` | the message pool and queues (`messages`), timed messages (`messages_timed`), reply-and-read in one request (`short_path`), what the kernel knows of payload pools (`payload_stores`) |
//! | `xcpu/` | requests between real-time CPUs: the queues (`queue`), messages (`messages`), handlers (`handlers`) and the interface the kernel serves them through (`handler_host`), shared condition variables and semaphores (`sync`) |
//! | `thread_side/` | what runs on a thread's stack: [`Ctx`] and its calls (`ctx`, `ctx_control`, `ctx_messages`, `ctx_sched`), the wire protocol (`protocol`), the runtime's unwinds (`unwinds`), calls as types (`calls`), the job loop (`job_loop`), [`EventCtx`] |
//!
//! Must not: decide ordering (the scheduler does), allocate on the dispatch path (every
//! container is sized in `Kernel::new`), or know which clock it runs on beyond `C::MODE`
//! for reading the time after user code ran.

mod cpu;
mod locking;
mod messaging;
mod thread_side;
mod threads;
mod timing;
mod xcpu;

pub(crate) use cpu::seed::KernelSeed;
pub(crate) use messaging::payload_stores::{next_pool_id, register_pool, PayloadStore, PayloadStores};
pub use thread_side::ctx::Ctx;
pub use thread_side::event_ctx::EventCtx;
pub(crate) use thread_side::protocol::Body;
pub use thread_side::protocol::JobInfo;
pub(crate) use thread_side::protocol::{ControlOp, SetOp};
pub use thread_side::unwinds::UnwindCause;
pub(crate) use thread_side::unwinds::{is_panic, is_restart};
pub(crate) use xcpu::handler_host::{Caller, HandlerHooks, HandlerHost, RemoteHandler, Served};
pub(crate) use xcpu::Crossing;

use self::threads::tcb::Tcb;
use self::timing::timers::{TimerHandle, TimerQueue};
use crate::clock::{Clock, RealClock};
use crate::config::{Costs, TimerSpec};
use crate::error::Error;
use crate::os::busy_cell::KernelId;
use crate::plain::ThreadId;
use crate::plain::{TraceKind, TraceRecord};
use crate::policy::sched::{SchedInfo, Scheduler};
use crate::sets::SetSummary;
use crate::stats::{ThreadStats, ThreadSummary};
use crate::thread::Timing;
use crate::time::Time;
use crate::trace::TraceBuffer;

pub(crate) type EventHandler = Box<dyn FnMut(&mut EventCtx<'_>) + Send>;

/// What one kernel hands back when its run ends.
pub(crate) struct KernelPart {
    pub(crate) threads: Vec<ThreadSummary>,
    pub(crate) sets: Vec<SetSummary>,
    pub(crate) trace: Vec<TraceRecord>,
    pub(crate) trace_dropped: u64,
    pub(crate) cross_cpu: crate::stats::CrossCpuStats,
    pub(crate) event_releases_refused: u64,
    pub(crate) messages: crate::stats::MessageStats,
    pub(crate) direct_switches: u64,
    /// Per CPU of the kernel (its index): the time its dispatcher spent in the kernel.
    pub(crate) kernel_time: Vec<(usize, std::time::Duration)>,
    pub(crate) os_backed_left_stopped: Vec<ThreadId>,
    pub(crate) end: Time,
    /// Why the run stopped early, if it did (a policy's wrong pick).
    pub(crate) error: Option<Error>,
}

struct Cpu {
    index: usize,
    scheduler: Box<dyn Scheduler>,
    current: Option<ThreadId>,
    /// A more urgent thread became ready: preempt `current` at the next opportunity.
    preempt: bool,
    /// `current` became less urgent: offer the CPU to the queue at the next opportunity.
    requeue_current: bool,
    /// When `current` was dispatched (CPU-time accounting).
    /// Up to when `current`'s CPU time has been charged.
    charged_at: Time,
    /// Up to when `current`'s `work` has been charged.
    work_mark: Time,
    /// Real time: when the dispatcher entered the kernel (a thread came back to it, or its
    /// wait ended) and has not yet handed the CPU back (to a thread, or to a wait);
    /// [`Time::MAX`] outside the kernel, and always in virtual time. `current` is charged
    /// up to here at most: the time after is the kernel's ([`Cpu::leave_kernel`]).
    kernel_since: Time,
    /// Real time: the CPU time the dispatcher spent in the kernel, charged to no thread.
    kernel_ns: u64,
    /// Bumped at every dispatch and stop; a slice timer is valid only for its own dispatch.
    slice_token: u64,
    trace: TraceBuffer,
    /// The policy gives time slices (asked once, at start-up).
    sliced: bool,
    /// The message-level events the policy asked for (asked once, at start-up).
    events: crate::policy::sched::Events,
    /// The thread that last ran here (context-switch cost).
    last_ran: Option<ThreadId>,
    /// The timer of the current time slice, if the policy gives slices.
    slice_timer: Option<TimerHandle>,
    /// A thread yielded here on a simulated kernel of several CPUs: the run loop moves on to
    /// the other CPUs before this one goes on at the same instant (see `run_cpus`).
    yielded: bool,
}

impl Cpu {
    /// CPU time `current` ran since it was last charged, up to `now`, left uncharged.
    #[inline]
    fn uncharged(&self, now: Time) -> u64 {
        now.min(self.kernel_since).as_nanos().saturating_sub(self.charged_at.as_nanos())
    }

    /// CPU time `current` ran since it was last charged; it is charged up to `now`.
    #[inline]
    fn ran_until(&mut self, now: Time) -> u64 {
        // Inside the kernel the thread is charged up to the kernel's entry, no further.
        let upto = now.min(self.kernel_since);
        let ran = upto.as_nanos().saturating_sub(self.charged_at.as_nanos());
        self.charged_at = self.charged_at.max(upto);
        ran
    }

    /// Real time: the dispatcher enters the kernel at `at` (it stays entered since the first
    /// entry until it leaves).
    #[inline(always)]
    fn enter_kernel(&mut self, at: Time) {
        if self.kernel_since == Time::MAX {
            self.kernel_since = at;
        }
    }

    /// Real time: the dispatcher hands the CPU back at `at` (to `current`, or to a wait). The
    /// time since it entered the kernel is the kernel's: what `current` ran before the entry
    /// and was not charged yet stays owed to it, and its clock, like its `work`, goes on from
    /// `at`.
    #[inline(always)]
    fn leave_kernel(&mut self, at: Time) {
        let since = std::mem::replace(&mut self.kernel_since, Time::MAX);
        if since == Time::MAX {
            return;
        }
        let (since, at_ns) = (since.as_nanos(), at.as_nanos());
        self.kernel_ns = self.kernel_ns.saturating_add(at_ns.saturating_sub(since));
        let owed = since.saturating_sub(self.charged_at.as_nanos());
        self.charged_at = Time::from_nanos(at_ns.saturating_sub(owed).max(self.charged_at.as_nanos()));
        let owed_work = since.saturating_sub(self.work_mark.as_nanos());
        self.work_mark = Time::from_nanos(at_ns.saturating_sub(owed_work).max(self.work_mark.as_nanos()));
    }

    /// `current` leaves the CPU.
    #[inline]
    fn stop(&mut self) -> Option<ThreadId> {
        let id = self.current.take()?;
        self.slice_token += 1;
        Some(id)
    }

    /// `id` becomes `current` at `now`; returns whether another thread ran here last (a
    /// context switch).
    #[inline]
    fn start(&mut self, id: ThreadId, now: Time) -> bool {
        self.current = Some(id);
        // Dispatched inside the kernel: its clock starts when the kernel is left.
        let from = now.min(self.kernel_since);
        self.charged_at = from;
        self.work_mark = from;
        self.slice_token += 1;
        let switched = self.last_ran.is_some_and(|prev| prev != id);
        self.last_ran = Some(id);
        switched
    }

    /// Append a record to this CPU's trace, numbered from `seq` (tracing is on).
    #[inline]
    fn record(&mut self, seq: &mut u32, now: Time, kind: TraceKind, thread: ThreadId, job: u32, arg: u64) {
        *seq = seq.wrapping_add(1);
        self.trace.push(TraceRecord { time: now, arg, thread, job, seq: *seq, cpu: self.index as u16, kind });
    }
}

/// What the kernel is calling, to name it if it panics. Handlers and lock policies are named
/// where they are called; the scheduler, called on every dispatch, is the default.
#[derive(Clone, Copy)]
pub(crate) enum Culprit {
    Scheduler,
    /// The policy of lock `.0` (local index; one not yet in the table is being created).
    LockPolicy(u32),
    /// The queue policy of semaphore `.0` (local index).
    SemQueue(u32),
    /// The policy of thread `.0`'s new queue of messages.
    MessageQueue(ThreadId),
    /// A message handler run on this dispatcher for another CPU's thread (its name is kept
    /// as the panic unwinds, `xcpu/handlers.rs`).
    RemoteHandler,
    MissHandler(ThreadId),
    Event(u32),
    ExecTimer,
    Budget(u32),
    Progress,
}

struct TimingEvent {
    spec: TimerSpec,
    handler: Option<EventHandler>,
    cancelled: bool,
}

pub(crate) struct Kernel<C: Clock> {
    /// The identity of the runtime this kernel belongs to; its threads' `Ctx` carry it.
    runtime: u64,
    /// Whether an id is of this runtime: its tag and generation floor (`crate::id_space`).
    id_check: crate::id_space::IdCheck,
    /// The runtime's hold on its tag, given back when the runtime and its kernels are gone.
    ids: std::sync::Arc<crate::id_space::IdSpace>,
    /// The runtime's first kernel as an executor; this kernel is `executors.nth(first_cpu)`
    /// (one kernel per CPU in real time, one in all in virtual time).
    executors: KernelId,
    clock: C,
    now: Time,
    real_clock: Option<RealClock>,
    cpus: Vec<Cpu>,
    first_cpu: usize,
    timers: TimerQueue,
    events: Vec<TimingEvent>,
    release_buf: Vec<ThreadId>,
    total_cpus: usize,
    trace_seq: u32,
    tracing: bool,
    verify: bool,
    /// The handler runtime's settlements, installed by the runtime (`xcpu/handler_host.rs`).
    handler_hooks: HandlerHooks,
    direct_hand_off: bool,
    /// Threads are resumed hosted, for the direct thread-to-thread switch (`cpu/direct.rs`).
    direct_switch: bool,
    progress: Option<crate::config::ProgressHook>,
    costs: Costs,
    /// What the kernel is calling (see [`Culprit`]).
    culprit: std::cell::Cell<Culprit>,
    /// Real time: set when any dispatcher of the run failed, so the others stop too.
    halt: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The end of the run, exclusive.
    horizon: Time,
    /// Set when the run cannot go on (a policy picked a thread that is not ready): the loop
    /// stops at once and the run ends with this error.
    failed: Option<Error>,
    /// Real time: what a thread's [`Ctx::checkpoint`] compares with (shared with its `Ctx`).
    watch: Option<std::rc::Rc<CheckpointWatch>>,
    /// The last inheritance id handed out (`cpu/sched_meta.rs`).
    next_inherit: u64,
    /// The policy is global (virtual time only): the first CPU's scheduler serves every CPU
    /// and threads move between CPUs (see `cpu/global.rs`).
    global: bool,
    /// Releases asked by timing events that could not be carried out.
    event_releases_refused: u64,
    /// The thread resumed last (see `cpu/direct.rs`).
    resumed: cpu::direct::Resumed,
    /// Thread switches made directly from one thread's stack to the next's.
    direct_switches: u64,
    /// Set by a call or a reply that handed the CPU over (`messaging/short_path.rs`) once nothing
    /// was
    /// found due: the request being handled made that thread switch.
    switched_in_request: bool,
    /// The kernel's part in the requests between real-time CPUs (all empty in virtual time).
    cross: xcpu::CrossCpu,
    /// The locks, global locks, condition variables and semaphores of this kernel.
    sync: locking::SyncObjects,
    /// Thread sets, their execution-time accounting and the budget checks put off within an
    /// instant.
    exec: timing::ExecTime,
    /// The messages of this kernel's threads and what was refused.
    mail: messaging::Mail,
    /// The thread slots of this kernel: control blocks, their generations and free list, stacks and
    /// guards, the summaries of ended threads, and OS-backed threads left stopped.
    table: threads::ThreadTable,
}

/// What [`Ctx::checkpoint`] reads without calling the kernel: the instant of the next thing
/// the kernel must do on this CPU (published before each resume) and the CPU's doorbell.
pub(crate) struct CheckpointWatch {
    /// In ns; atomic because an OS-backed thread may still be reading it on its own OS thread
    /// for a moment after its dispatcher stopped it (see `threads/os_backed.rs`).
    pub(crate) due: std::sync::atomic::AtomicU64,
    pub(crate) bell: std::sync::Arc<crate::os::loom_shim::AtomicBool>,
}

impl<C: Clock> Kernel<C> {
    // ----- lookup -------------------------------------------------------------------------

    /// This kernel as an executor: what the handlers its threads invoke are bound to.
    pub(super) fn executor(&self) -> KernelId {
        self.executors.nth(self.first_cpu)
    }

    fn local(&self, id: ThreadId) -> Option<usize> {
        let i = id.slot().checked_sub(self.table.slot_base)? as usize;
        match self.table.slots.get(i)? {
            Some(t) if t.id == id => Some(i),
            _ => None,
        }
    }

    fn tcb(&mut self, id: ThreadId) -> &mut Tcb {
        let i = self.local(id).expect("kernel refers to a live thread");
        self.table.slots[i].as_mut().expect("live slot")
    }

    fn cpu_local(&self, cpu: usize) -> Option<usize> {
        cpu.checked_sub(self.first_cpu).filter(|&c| c < self.cpus.len())
    }

    /// Local index of the CPU thread `id` is on.
    fn cpu_of(&mut self, id: ThreadId) -> usize {
        let cpu = self.tcb(id).cpu;
        self.cpu_local(cpu).expect("thread on this kernel")
    }

    fn info(&self, id: ThreadId) -> SchedInfo {
        self.info_at(self.local(id).expect("live thread"))
    }

    /// [`Kernel::info`], borrowed rather than copied (it is the size of several cache lines'
    /// worth of words, and a lock request asks for it on every acquisition).
    fn info_ref(&self, id: ThreadId) -> &SchedInfo {
        &self.table.slots[self.local(id).expect("live thread")].as_ref().expect("live slot").sched
    }

    /// [`Kernel::info`] of the thread in slot `i`.
    fn info_at(&self, i: usize) -> SchedInfo {
        self.table.slots[i].as_ref().expect("live slot").sched
    }

    /// The local index of the CPU whose scheduler serves CPU `c`: `c` itself, or the first
    /// CPU under a global policy.
    #[inline(always)]
    fn sched_of(&self, c: usize) -> usize {
        if self.global {
            0
        } else {
            c
        }
    }

    /// The scheduler serving CPU `c` (see [`Kernel::sched_of`]).
    #[inline(always)]
    fn sched_mut(&mut self, c: usize) -> &mut dyn Scheduler {
        let s = self.sched_of(c);
        &mut *self.cpus[s].scheduler
    }

    /// Call CPU `c`'s scheduler with thread `id`'s `SchedInfo`, borrowed from its control
    /// block rather than copied.
    #[inline]
    fn sched_call<R>(&mut self, c: usize, id: ThreadId, f: impl FnOnce(&mut dyn Scheduler, &SchedInfo) -> R) -> R {
        let i = self.local(id).expect("live thread");
        self.sched_call_at(c, i, f)
    }

    /// [`Kernel::sched_call`] for the thread in slot `i`.
    #[inline(always)]
    fn sched_call_at<R>(&mut self, c: usize, i: usize, f: impl FnOnce(&mut dyn Scheduler, &SchedInfo) -> R) -> R {
        let s = self.sched_of(c);
        let info = &self.table.slots[i].as_ref().expect("live slot").sched;
        f(&mut *self.cpus[s].scheduler, info)
    }

    /// What the scheduler should be shown of a thread, assembled from its attributes and
    /// state; `Tcb::sched` must always equal it (checked under `Config::verify`).
    fn assemble_info(t: &Tcb) -> SchedInfo {
        SchedInfo {
            id: t.id,
            cpu: t.cpu,
            priority: t.sched.priority,
            urgency: t.sched.urgency,
            importance: t.importance,
            release: t.job.release,
            deadline: t.job.deadline,
            period: match t.timing {
                Timing::Periodic { period, .. } => Some(period),
                _ => None,
            },
            relative_deadline: t.rel_deadline,
            wcet: t.wcet,
            job_cpu_time: t.sched.job_cpu_time,
            job: t.job.number,
        }
    }

    #[inline]
    fn trace(&mut self, c: usize, kind: TraceKind, id: ThreadId, job: u32, arg: u64) {
        if !self.tracing {
            return;
        }
        self.cpus[c].record(&mut self.trace_seq, self.now, kind, id, job, arg);
    }

    #[inline(always)]
    fn trace_thread(&mut self, id: ThreadId, kind: TraceKind, arg: u64) {
        if self.tracing {
            self.trace_thread_record(id, kind, arg);
        }
    }

    fn trace_thread_record(&mut self, id: ThreadId, kind: TraceKind, arg: u64) {
        self.trace_thread_at(id, self.now, kind, arg);
    }

    /// A record of `id`'s at instant `at`, which may be past: a real-time thread's own reading
    /// of the clock, reported to the kernel later.
    fn trace_thread_at(&mut self, id: ThreadId, at: Time, kind: TraceKind, arg: u64) {
        if !self.tracing {
            return;
        }
        let t = self.tcb(id);
        let (cpu, job) = (t.cpu, t.job.number);
        let c = self.cpu_local(cpu).expect("thread on this kernel");
        self.cpus[c].record(&mut self.trace_seq, at, kind, id, job, arg);
    }

    fn stats(&mut self, id: ThreadId) -> &mut ThreadStats {
        &mut self.tcb(id).stats
    }
}

impl<C: Clock> Drop for Kernel<C> {
    /// Threads go before the kernel's memory: a thread's destructors may still refer to its
    /// locks, and a coroutine dropped with the rest would be unwound after them.
    fn drop(&mut self) {
        self.teardown_threads();
    }
}

/// The message of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}
