//! The kernel: mechanism only. It owns thread control blocks, coroutines and stacks, the timer
//! queue, job release and deadline tracking, CPU-time accounting and the trace; it makes no
//! scheduling decision itself and asks its CPUs' [`Scheduler`]s at every transition.
//!
//! One kernel drives one or more CPUs on the OS thread that calls `Kernel::run`: all of them
//! in virtual time, exactly one per dispatcher thread in real time. The loop is the same for
//! both clocks:
//!
//! ```text
//! loop {
//!     fire every timer that is due            (releases, deadlines, wakes, slices, events)
//!     on every CPU: preempt if asked, pick, resume the current thread until it makes a
//!                   request that stops it, or starts `work`
//!     find the next instant: earliest timer, or the end of a CPU's current work
//!     let the clock pass to it                (virtual: jump; real: spin if busy, else sleep)
//!     charge the work done meanwhile
//! }
//! ```
//!
//! Must not: decide ordering (the scheduler does), allocate on the dispatch path (every
//! container is sized in `Kernel::new`), or know which clock it runs on beyond `C::MODE`
//! for reading the time after user code ran.

mod ctx;
mod locks;
mod sets;
mod stacks;
mod tcb;
mod timers;
mod waits;

pub(crate) use ctx::Body;
pub(crate) use ctx::{is_panic, is_restart};
pub use ctx::{Ctx, EventCtx, JobInfo};

use std::time::Duration;

use corosensei::{Coroutine, CoroutineResult};

use self::ctx::{Reply, Request, Response};
use self::stacks::StackPool;
use self::tcb::{State, Tcb, Wait};
use self::timers::{TimerHandle, TimerKind, TimerQueue};
use crate::clock::{Clock, ClockMode, RealClock};
use crate::config::{Config, Costs, TimerSpec};
use crate::error::Error;
use crate::objects::{CondId, LockId, LockSpec, SemId, SemSpec};
use crate::policy::sched::{ReadyReason, SchedInfo, Scheduler, SchedulerFactory, Urgency};
use crate::sets::{Accounting, Budget, SetId, SetSummary};
use crate::stats::{ThreadStats, ThreadSummary};
use crate::thread::{MissEvent, MissPolicy, ThreadId, ThreadOutcome, ThreadSpec, Timing};
use crate::time::Time;
use crate::trace::{StopReason, TraceBuffer, TraceKind, TraceRecord};

pub(crate) type EventHandler = Box<dyn FnMut(&mut EventCtx<'_>) + Send>;

/// What a kernel is built from: settings plus the threads and timing events registered before
/// the run. It is `Send`, so a real-time dispatcher can build its kernel on its own OS thread
/// (coroutines must never move between OS threads).
pub(crate) struct KernelSeed {
    /// The identity of the runtime this kernel belongs to (see `Runtime`).
    runtime: u64,
    first_cpu: usize,
    cpu_count: usize,
    total_cpus: usize,
    slot_base: u32,
    capacity: usize,
    max_timers: usize,
    trace_capacity: usize,
    default_stack: usize,
    pub(crate) scheduler: SchedulerFactory,
    threads: Vec<(ThreadId, ThreadSpec, Body)>,
    timers: Vec<(TimerSpec, EventHandler)>,
    max_sets: usize,
    set_base: u32,
    accounting: Accounting,
    /// Set operations registered before the run, replayed in order when the kernel is built.
    setup: Vec<SetupOp>,
    sets_created: u32,
    max_locks: usize,
    lock_base: u32,
    locks_created: u32,
    conds_created: u32,
    sems_created: u32,
    costs: Costs,
    verify: bool,
    direct_hand_off: bool,
    progress: Option<crate::config::ProgressHook>,
}

/// A set operation registered before the run.
pub(crate) enum SetupOp {
    Create(String),
    Add(SetId, ThreadId),
    Budget(SetId, Budget),
    SetTimer(SetId, Duration, EventHandler),
    ThreadTimer(ThreadId, Duration, EventHandler),
    CreateLock(LockSpec),
    CreateCond(usize),
    CreateSem(SemSpec),
}

impl KernelSeed {
    /// Seed of kernel `k` of `kernels`: one kernel for all CPUs, or one per CPU, of runtime
    /// `runtime`. Thread and set ids carry the runtime's tag above their index
    /// (`Config::check` keeps the indices below it).
    pub(crate) fn new(runtime: u64, k: usize, kernels: usize, config: &Config) -> KernelSeed {
        let (first_cpu, cpu_count) = if kernels == 1 { (0, config.cpus) } else { (k, 1) };
        let capacity = config.max_threads * cpu_count;
        let tag = (ThreadId::runtime_tag(runtime) as u32) << ThreadId::TAG_SHIFT;
        KernelSeed {
            runtime,
            first_cpu,
            cpu_count,
            total_cpus: config.cpus,
            slot_base: tag | (k * config.max_threads) as u32,
            capacity,
            max_timers: config.max_timers * cpu_count,
            trace_capacity: config.trace_capacity,
            default_stack: config.default_stack,
            scheduler: config.scheduler.clone(),
            threads: Vec::new(),
            timers: Vec::new(),
            max_sets: config.max_sets * cpu_count,
            set_base: tag | (k * config.max_sets) as u32,
            accounting: config.accounting,
            setup: Vec::new(),
            sets_created: 0,
            max_locks: config.max_locks * cpu_count,
            lock_base: (k * config.max_locks) as u32,
            locks_created: 0,
            conds_created: 0,
            sems_created: 0,
            costs: config.costs,
            verify: config.verify,
            direct_hand_off: config.direct_hand_off,
            progress: config.progress.clone(),
        }
    }

    /// The next of `max` per-kernel ids counted by `created`, numbered from `base`.
    fn next_id(created: &mut u32, max: usize, base: u32, what: &str) -> Result<u32, Error> {
        if *created as usize >= max {
            return Err(Error::InvalidConfig(format!("more than {max} {what}")));
        }
        *created += 1;
        Ok(base + *created - 1)
    }

    pub(crate) fn create_cond(&mut self, cpu: usize) -> Result<CondId, Error> {
        let id = Self::next_id(&mut self.conds_created, self.max_locks, self.lock_base, "condition variables")?;
        self.setup.push(SetupOp::CreateCond(cpu));
        Ok(CondId(id))
    }

    pub(crate) fn create_sem(&mut self, spec: SemSpec) -> Result<SemId, Error> {
        let id = Self::next_id(&mut self.sems_created, self.max_locks, self.lock_base, "semaphores")?;
        self.setup.push(SetupOp::CreateSem(spec));
        Ok(SemId(id))
    }

    pub(crate) fn create_lock(&mut self, spec: LockSpec) -> Result<LockId, Error> {
        let id = Self::next_id(&mut self.locks_created, self.max_locks, self.lock_base, "locks")?;
        self.setup.push(SetupOp::CreateLock(spec));
        Ok(LockId(id))
    }

    pub(crate) fn create_set(&mut self, name: String) -> Result<SetId, Error> {
        if self.sets_created as usize >= self.max_sets {
            return Err(Error::TooManySets { max: self.max_sets });
        }
        let id = SetId(self.set_base + self.sets_created);
        self.sets_created += 1;
        self.setup.push(SetupOp::Create(name));
        Ok(id)
    }

    pub(crate) fn owns_set(&self, set: SetId) -> bool {
        set.0.checked_sub(self.set_base).is_some_and(|i| i < self.sets_created)
    }

    pub(crate) fn owns_thread(&self, id: ThreadId) -> bool {
        self.threads.iter().any(|(t, _, _)| *t == id)
    }

    pub(crate) fn push_setup(&mut self, op: SetupOp) {
        self.setup.push(op);
    }

    pub(crate) fn first_cpu(&self) -> usize {
        self.first_cpu
    }

    pub(crate) fn add_thread(&mut self, spec: ThreadSpec, body: Body) -> Result<ThreadId, Error> {
        if self.threads.len() >= self.capacity {
            return Err(Error::TooManyThreads { max: self.capacity / self.cpu_count });
        }
        let id = ThreadId::new(self.slot_base + self.threads.len() as u32, 0);
        self.threads.push((id, spec, body));
        Ok(id)
    }

    pub(crate) fn add_timer(&mut self, spec: TimerSpec, handler: EventHandler) -> Result<(), Error> {
        if self.timers.len() >= self.max_timers {
            return Err(Error::InvalidConfig(format!("more than {} timing events", self.max_timers)));
        }
        self.timers.push((spec, handler));
        Ok(())
    }
}

/// What one kernel hands back when its run ends.
pub(crate) struct KernelPart {
    pub(crate) threads: Vec<ThreadSummary>,
    pub(crate) sets: Vec<SetSummary>,
    pub(crate) trace: Vec<TraceRecord>,
    pub(crate) trace_dropped: u64,
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
    /// Bumped at every dispatch and stop; a slice timer is valid only for its own dispatch.
    slice_token: u64,
    trace: TraceBuffer,
    /// The policy gives time slices (asked once, at start-up).
    sliced: bool,
    /// The thread that last ran here (context-switch cost).
    last_ran: Option<ThreadId>,
    /// The timer of the current time slice, if the policy gives slices.
    slice_timer: Option<TimerHandle>,
}

impl Cpu {
    /// CPU time `current` ran since it was last charged; it is charged up to `now`.
    #[inline]
    fn ran_until(&mut self, now: Time) -> u64 {
        let ran = now.as_nanos().saturating_sub(self.charged_at.as_nanos());
        self.charged_at = now;
        ran
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
        self.charged_at = now;
        self.work_mark = now;
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

/// What the kernel is calling, to name it if it panics. Handlers are named where they are
/// called; the scheduler and lock-policy hooks, on the hot paths, are the default.
#[derive(Clone, Copy)]
pub(crate) enum Culprit {
    Policy,
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
    clock: C,
    now: Time,
    real_clock: Option<RealClock>,
    cpus: Vec<Cpu>,
    first_cpu: usize,
    slot_base: u32,
    slots: Vec<Option<Tcb>>,
    generations: Vec<u32>,
    free: Vec<u32>,
    live: usize,
    summaries: Vec<ThreadSummary>,
    timers: TimerQueue,
    events: Vec<TimingEvent>,
    release_buf: Vec<ThreadId>,
    stacks: StackPool,
    default_stack: usize,
    total_cpus: usize,
    trace_seq: u32,
    tracing: bool,
    sets: Vec<sets::SetState>,
    set_base: u32,
    locks: Vec<locks::LockState>,
    lock_base: u32,
    /// Pre-sized list the lock mechanism swaps with a lock's waiters to walk them.
    lock_scratch: Vec<ThreadId>,
    /// How many owned locks impose a ceiling: none, and no lock request needs the system
    /// ceiling.
    ceilings_held: u32,
    verify: bool,
    direct_hand_off: bool,
    progress: Option<crate::config::ProgressHook>,
    conds: Vec<waits::CondState>,
    sems: Vec<waits::SemState>,
    costs: Costs,
    accounting: Accounting,
    /// Armed execution-time events (thread timers, set timers, budgets); zero skips all checks.
    exec_watch: u32,
    /// What the kernel is calling (see [`Culprit`]).
    culprit: Culprit,
    /// Real time: set when any dispatcher of the run failed, so the others stop too.
    halt: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The end of the run, exclusive.
    horizon: Time,
    /// Per slot: the thread's stack, for the stack-overflow report. Sized once: the signal
    /// handler reads the table by address during the run.
    guards: Vec<crate::os::overflow::StackGuard>,
    /// Set when the run cannot go on (a policy picked a thread that is not ready): the loop
    /// stops at once and the run ends with this error.
    failed: Option<Error>,
}

impl<C: Clock> Kernel<C> {
    /// Build a kernel and size every pool. Threads and events from the seed are installed.
    pub(crate) fn new(seed: KernelSeed, clock: C) -> Result<Kernel<C>, Error> {
        let cap = seed.capacity;
        let cpus = (0..seed.cpu_count)
            .map(|i| (i, (seed.scheduler)()))
            .map(|(i, scheduler)| Cpu {
                index: seed.first_cpu + i,
                sliced: scheduler.time_sliced(),
                last_ran: None,
                slice_timer: None,
                scheduler,
                current: None,
                preempt: false,
                requeue_current: false,
                charged_at: Time::ZERO,
                work_mark: Time::ZERO,
                slice_token: 0,
                trace: TraceBuffer::new(seed.trace_capacity),
            })
            .collect();
        let mut stacks = StackPool::default();
        stacks.reserve(seed.default_stack, cap.min(32))?;
        let real_clock = clock.as_real().cloned();
        let pre = seed.threads.len();
        let mut k = Kernel {
            runtime: seed.runtime,
            // Threads and events registered before the run are placed at time zero; a real
            // clock gets the run's shared epoch once every CPU is ready (`Kernel::set_clock`).
            now: Time::ZERO,
            clock,
            real_clock,
            cpus,
            first_cpu: seed.first_cpu,
            slot_base: seed.slot_base,
            slots: (0..cap).map(|_| None).collect(),
            generations: vec![0; cap],
            free: (pre as u32..cap as u32).rev().collect(),
            live: 0,
            summaries: Vec::with_capacity(pre.max(16)),
            // Cancelled timers leave the table, so what is pending at once is bounded: per
            // thread a release, a deadline, an abort time and a wake or wait timeout; one
            // per timing event; a few replenishments per set; a slice end per CPU.
            timers: TimerQueue::with_capacity(cap * 4 + seed.max_timers + seed.max_sets * 8 + seed.cpu_count * 2),
            events: Vec::with_capacity(seed.max_timers),
            release_buf: Vec::with_capacity(cap),
            stacks,
            default_stack: seed.default_stack,
            total_cpus: seed.total_cpus,
            trace_seq: 0,
            tracing: seed.trace_capacity > 0,
            sets: Vec::with_capacity(seed.max_sets),
            set_base: seed.set_base,
            locks: Vec::with_capacity(seed.max_locks),
            lock_base: seed.lock_base,
            lock_scratch: Vec::with_capacity(cap),
            ceilings_held: 0,
            verify: seed.verify,
            direct_hand_off: seed.direct_hand_off,
            progress: seed.progress,
            conds: Vec::with_capacity(seed.max_locks),
            sems: Vec::with_capacity(seed.max_locks),
            costs: seed.costs,
            accounting: seed.accounting,
            exec_watch: 0,
            culprit: Culprit::Policy,
            halt: None,
            horizon: Time::MAX,
            guards: vec![crate::os::overflow::StackGuard::NONE; cap],
            failed: None,
        };
        for (id, spec, body) in seed.threads {
            k.install(id, spec, body);
        }
        for op in seed.setup {
            match op {
                SetupOp::Create(name) => k.create_set(name).map(|_| ())?,
                SetupOp::Add(set, id) => k.add_to_set(set, id)?,
                SetupOp::Budget(set, b) => k.set_budget(set, b)?,
                SetupOp::SetTimer(set, at, h) => k.arm_set_timer(set, at, h)?,
                SetupOp::ThreadTimer(id, at, h) => k.arm_thread_timer(id, at, h)?,
                SetupOp::CreateLock(spec) => k.create_lock(spec).map(|_| ())?,
                SetupOp::CreateCond(cpu) => k.create_cond(cpu).map(|_| ())?,
                SetupOp::CreateSem(spec) => k.create_sem(spec).map(|_| ())?,
            }
        }
        for (spec, handler) in seed.timers {
            let idx = k.events.len() as u32;
            k.events.push(TimingEvent { spec, handler: Some(handler), cancelled: false });
            k.timers.push(spec.first, TimerKind::Event(idx));
        }
        Ok(k)
    }

    // ----- lookup -------------------------------------------------------------------------

    fn local(&self, id: ThreadId) -> Option<usize> {
        let i = id.slot().checked_sub(self.slot_base)? as usize;
        match self.slots.get(i)? {
            Some(t) if t.id == id => Some(i),
            _ => None,
        }
    }

    fn tcb(&mut self, id: ThreadId) -> &mut Tcb {
        let i = self.local(id).expect("kernel refers to a live thread");
        self.slots[i].as_mut().expect("live slot")
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

    /// [`Kernel::info`] of the thread in slot `i`.
    fn info_at(&self, i: usize) -> SchedInfo {
        self.slots[i].as_ref().expect("live slot").sched
    }

    /// Call CPU `c`'s scheduler with thread `id`'s `SchedInfo`, borrowed from its control
    /// block rather than copied.
    #[inline]
    fn sched_call<R>(&mut self, c: usize, id: ThreadId, f: impl FnOnce(&mut dyn Scheduler, &SchedInfo) -> R) -> R {
        let i = self.local(id).expect("live thread");
        let info = &self.slots[i].as_ref().expect("live slot").sched;
        f(&mut *self.cpus[c].scheduler, info)
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
        let t = self.tcb(id);
        let (cpu, job) = (t.cpu, t.job.number);
        let c = self.cpu_local(cpu).expect("thread on this kernel");
        self.trace(c, kind, id, job, arg);
    }

    fn stats(&mut self, id: ThreadId) -> &mut ThreadStats {
        &mut self.tcb(id).stats
    }

    // ----- thread creation and end ---------------------------------------------------------

    fn install(&mut self, id: ThreadId, spec: ThreadSpec, body: Body) {
        let i = (id.slot() - self.slot_base) as usize;
        self.generations[i] = id.generation();
        let summary = self.summaries.len();
        self.summaries.push(ThreadSummary {
            id,
            name: spec.name.clone(),
            cpu: spec.cpu,
            timing: spec.timing,
            priority: spec.priority,
            wcet: spec.wcet,
            deadline: spec.relative_deadline(),
            outcome: None,
            stats: ThreadStats::default(),
        });
        let rel_deadline = spec.relative_deadline();
        let period = spec.period();
        let tcb = Tcb {
            id,
            summary,
            cpu: spec.cpu,
            timing: spec.timing,
            wcet: spec.wcet,
            rel_deadline,
            abort_after: spec.abort_after,
            importance: spec.importance,
            miss_policy: spec.miss_policy,
            on_miss: spec.on_miss,
            max_jobs: spec.max_jobs,
            stack_size: spec.stack_size.unwrap_or(self.default_stack),
            state: State::Dormant,
            body: Some(body),
            coroutine: None,
            reply: None,
            abort_pending: false,
            kill_pending: false,
            set: None,
            demoted: false,
            cpu_timer: None,
            held: Vec::with_capacity(4),
            fast_held: std::rc::Rc::new(std::cell::Cell::new(0)),
            quiet_reply: false,
            paid_block_cost: false,
            pending_unlock: None,
            restart_pending: false,
            wants: None,
            wants_restartable: false,
            exiting: false,
            work_left: 0,
            in_work: false,
            wait_token: 0,
            wait_timer: None,
            job_timers: [None; 3],
            released: 0,
            finished: 0,
            job_active: false,
            job: JobInfo::default(),
            cpu_ns: 0,
            pending: 0,
            pending_release: Time::ZERO,
            release_queue: std::collections::VecDeque::with_capacity(match spec.timing {
                Timing::Periodic { .. } => 0,
                _ => spec.release_queue,
            }),
            release_queue_cap: spec.release_queue,
            deferred: 0,
            deadline_next: 0,
            abort_next: 0,
            at_boundary: true,
            stale: false,
            unwind_sent: false,
            joiners: 0,
            stats: ThreadStats::default(),
            skip_next: 0,
            next_sporadic: Time::ZERO,
            base_urgency: Urgency::LOWEST,
            inherited: None,
            sched: SchedInfo {
                id,
                cpu: spec.cpu,
                priority: spec.priority,
                urgency: Urgency::LOWEST,
                importance: spec.importance,
                release: Time::ZERO,
                deadline: None,
                period,
                relative_deadline: rel_deadline,
                wcet: spec.wcet,
                job_cpu_time: Duration::ZERO,
                job: 0,
            },
        };
        self.slots[i] = Some(tcb);
        self.live += 1;
        let c = self.cpu_local(spec.cpu).expect("placement checked before install");
        self.trace(c, TraceKind::Spawn, id, 0, spec.cpu as u64);
        self.refresh_urgency(id);
        match spec.timing {
            Timing::OneShot => self.release_job(id, self.now, false),
            Timing::Periodic { phase, .. } => {
                let h = self.timers.push(self.now + phase, TimerKind::Release(id));
                self.tcb(id).job_timers[0] = h;
            }
            Timing::Sporadic { .. } => {}
        }
    }

    fn spawn_thread(&mut self, spec: ThreadSpec, body: Body, from_cpu: usize) -> Result<ThreadId, Error> {
        spec.validate()?;
        if self.cpu_local(spec.cpu).is_none() {
            return Err(match C::MODE {
                ClockMode::Real if spec.cpu < self.total_cpus => Error::CrossCpu { from: from_cpu, to: spec.cpu },
                _ => Error::NoSuchCpu { cpu: spec.cpu, cpus: self.total_cpus },
            });
        }
        let Some(i) = self.free.pop() else {
            return Err(Error::TooManyThreads { max: self.slots.len() / self.cpus.len() });
        };
        let generation = self.generations[i as usize].wrapping_add(1);
        let id = ThreadId::new(self.slot_base + i, generation);
        self.install(id, spec, body);
        Ok(id)
    }

    fn exit(&mut self, c: usize, id: ThreadId, outcome: ThreadOutcome) {
        let code = match outcome {
            ThreadOutcome::Completed => 0,
            ThreadOutcome::Panicked(_) => 1,
            ThreadOutcome::Killed => 2,
        };
        if self.cpus[c].current == Some(id) {
            self.stop_running(c, StopReason::Exited);
        }
        self.trace_thread(id, TraceKind::Exit, code);
        if let Some(s) = self.tcb(id).set {
            let set = self.sets[s as usize].id;
            let _ = self.remove_from_set(set, id);
        }
        self.release_all(id);
        if self.tcb(id).cpu_timer.take().is_some() {
            self.exec_watch -= 1;
        }
        let i = self.local(id).expect("exiting thread is live");
        let tcb = self.slots[i].take().expect("live slot");
        // Its stack goes back to the pool: it must not name this thread any more.
        self.guards[i] = crate::os::overflow::StackGuard::NONE;
        for h in tcb.job_timers.into_iter().chain([tcb.wait_timer]).flatten() {
            self.timers.cancel(h);
        }
        if tcb.state == State::Ready {
            self.cpus[c].scheduler.on_removed(id);
        }
        if let Some(co) = tcb.coroutine {
            if co.done() {
                self.stacks.give_back(tcb.stack_size, co.into_stack());
            }
        }
        self.summaries[tcb.summary].outcome = Some(outcome.clone());
        self.summaries[tcb.summary].stats = ThreadStats { cpu_time: Duration::from_nanos(tcb.cpu_ns), ..tcb.stats };
        self.free.push(i as u32);
        self.live -= 1;
        if tcb.joiners == 0 {
            return;
        }
        // Wake every joiner.
        for j in 0..self.slots.len() {
            let joiner = match &self.slots[j] {
                Some(t) if t.state == State::Blocked(Wait::Join(id)) => t.id,
                _ => continue,
            };
            self.tcb(joiner).reply = Some(Reply::Joined(Ok(outcome.clone())));
            self.wake(joiner);
        }
    }

    fn outcome_of(&self, id: ThreadId) -> Result<Option<ThreadOutcome>, Error> {
        if self.local(id).is_some() {
            return Ok(None);
        }
        match self.summaries.iter().find(|s| s.id == id) {
            Some(s) => Ok(s.outcome.clone()),
            None => Err(Error::UnknownThread(id)),
        }
    }

    // ----- jobs ---------------------------------------------------------------------------

    /// A release instant of thread `id` has come.
    ///
    /// `deadline_armed`: the caller armed the new job's deadline on the release timer's
    /// entry already.
    fn release_job(&mut self, id: ThreadId, at: Time, deadline_armed: bool) {
        let t = self.tcb(id);
        if t.max_jobs.is_some_and(|m| t.released >= m) {
            return;
        }
        // A skip drops the next release to come only when no job waits: waiting jobs are
        // dropped from the oldest when the current one ends, which keeps the waiting
        // releases a period apart.
        if t.skip_next > 0 && t.pending == 0 {
            t.skip_next -= 1;
            self.stats(id).skipped += 1;
            self.trace_thread(id, TraceKind::ReleaseSkipped, at.as_nanos());
            return;
        }
        let busy = t.job_active;
        let queued = !matches!(t.timing, Timing::Periodic { .. });
        if busy && queued && t.release_queue.len() >= t.release_queue_cap {
            self.stats(id).overflows += 1;
            self.trace_thread(id, TraceKind::ReleaseOverflow, at.as_nanos());
            return;
        }
        let number = t.released;
        t.released += 1;
        let deadline = t.rel_deadline.map(|d| at + d);
        let abort_at = t.abort_after.map(|a| at + a);
        let arm_deadline = t.deadline_next == number;
        let arm_abort = t.abort_next == number;
        if busy {
            if t.pending == 0 {
                t.pending_release = at;
            }
            if queued {
                t.release_queue.push_back(at);
            }
            t.pending += 1;
        }
        t.stats.released += 1;
        if self.tracing {
            let c = self.cpu_of(id);
            // Stamped with the nominal release, which a real clock may have passed a little
            // before the kernel got here: response times and the report count from the
            // nominal instant.
            let now = self.now;
            self.now = at;
            self.trace(c, TraceKind::Release, id, number, deadline.map_or(u64::MAX, Time::as_nanos));
            self.now = now;
        }
        // One deadline timer and one abort-time timer per thread, for the oldest job not yet
        // checked; each moves on to the next job when it fires.
        if let (Some(d), true, false) = (deadline, arm_deadline, deadline_armed) {
            // A deadline at the next release (D = T) rides on the release timer's entry: it
            // fires first, then the entry stays armed for the release, so a job that ends
            // in time costs no heap entry of its own.
            let t = self.tcb(id);
            let shared = matches!(t.timing, Timing::Periodic { .. })
                && t.job_timers[0].is_some_and(|h| self.timers.push_before(h, d, TimerKind::Deadline(id, number)));
            let h = if shared { None } else { self.timers.push(d, TimerKind::Deadline(id, number)) };
            self.tcb(id).job_timers[1] = h;
        }
        if let (Some(a), true) = (abort_at, arm_abort) {
            let h = self.timers.push(a, TimerKind::AbortTime(id, number));
            self.tcb(id).job_timers[2] = h;
        }
        if !busy {
            self.start_job(id, JobInfo { number, release: at, deadline });
        }
    }

    fn start_job(&mut self, id: ThreadId, job: JobInfo) {
        let t = self.tcb(id);
        t.set_job(job);
        t.job_active = true;
        t.abort_pending = false;
        self.refresh_urgency(id);
        self.make_ready(id, ReadyReason::Released);
    }

    /// The running thread `id` on CPU `c` reports its job ended.
    fn job_done(&mut self, c: usize, id: ThreadId, aborted: bool) {
        self.release_leaked(id);
        let now = self.now;
        let t = self.tcb(id);
        t.at_boundary = true;
        let interrupted = std::mem::take(&mut t.unwind_sent);
        let abort_pending = std::mem::take(&mut t.abort_pending);
        if std::mem::take(&mut t.stale) || !t.job_active {
            // The job on the stack ended at its deadline or abort time and is accounted for:
            // its unwinding took no time, and the next job, if one has started, begins now.
            if t.kill_pending {
                t.set_reply(Reply::Kill);
            } else if !t.job_active && !t.more_jobs() {
                t.set_reply(Reply::Stop);
            } else if !t.job_active {
                self.stop_running(c, StopReason::Aborted);
                self.tcb(id).state = State::Dormant;
                self.sched_call(c, id, |s, info| s.on_blocked(info));
            }
            return;
        }
        // An abort or a kill the body caught before returning still ends the job as abandoned.
        let aborted = aborted || interrupted || abort_pending;
        t.job_active = false;
        t.finished += 1;
        let (release, number) = (t.job.release, t.job.number);
        let more_jobs = t.more_jobs();
        if aborted {
            self.stats(id).aborted += 1;
            self.trace_thread(id, TraceKind::JobAbort, 0);
        } else {
            let response = now - release;
            let s = self.stats(id);
            s.completed += 1;
            s.response_total += response;
            s.response_min = Some(s.response_min.map_or(response, |m| m.min(response)));
            s.response_max = Some(s.response_max.map_or(response, |m| m.max(response)));
            self.trace_thread(id, TraceKind::JobComplete, crate::time::nanos(response));
        }
        let t = self.tcb(id);
        if t.deadline_next == number && t.pending == 0 && t.released == number + 1 && t.job_timers[1].is_none() {
            // Its deadline shares the release timer's entry (see `release_job`) and would find
            // the job ended, so it would only move the thread's deadline on to the next job,
            // which no release precedes: do that now and leave the entry to the release.
            if let Some(h) = t.job_timers[0] {
                if self.timers.drop_first(h, TimerKind::Deadline(id, number)) {
                    self.tcb(id).deadline_next = number + 1;
                }
            }
        }
        let t = self.tcb(id);
        if t.kill_pending {
            // A killed thread starts no other job: it ends at this boundary (a lock it still
            // holds was leaked by its job, not held by a critical section in progress).
            t.set_reply(Reply::Kill);
            return;
        }
        if !more_jobs {
            // It stays current and ends at its next resume.
            t.set_reply(Reply::Stop);
            return;
        }
        self.stop_running(c, if aborted { StopReason::Aborted } else { StopReason::JobDone });
        self.tcb(id).state = State::Dormant;
        self.sched_call(c, id, |s, info| s.on_blocked(info));
        self.start_next_queued(id);
    }

    /// Start the oldest waiting job of `id`, if any; jobs the skip policy drops are
    /// abandoned on the way.
    fn start_next_queued(&mut self, id: ThreadId) {
        loop {
            let t = self.tcb(id);
            if t.pending == 0 || t.job_active {
                return;
            }
            let (number, release) = t.pop_pending();
            let deadline = t.rel_deadline.map(|d| release + d);
            if t.skip_next > 0 {
                t.skip_next -= 1;
                t.finished += 1;
                self.stats(id).aborted += 1;
                let c = self.cpu_of(id);
                self.trace(c, TraceKind::JobAbort, id, number, 0);
                continue;
            }
            self.start_job(id, JobInfo { number, release, deadline });
            return;
        }
    }

    fn on_deadline(&mut self, id: ThreadId, number: u32) {
        if self.local(id).is_none() {
            return;
        }
        let t = self.tcb(id);
        if t.unfinished(number) {
            let (release, deadline) = t.job_times(number);
            let policy = t.miss_policy;
            let deadline = deadline.unwrap_or(self.now);
            self.stats(id).misses += 1;
            let c = self.cpu_of(id);
            self.trace(c, TraceKind::Miss, id, number, deadline.as_nanos());
            let event = MissEvent { thread: id, job: number, release, deadline, at: self.now };
            self.culprit = Culprit::MissHandler(id);
            if let Some(h) = self.tcb(id).on_miss.as_mut() {
                h(&event);
            }
            self.culprit = Culprit::Policy;
            match policy {
                MissPolicy::Continue => {}
                MissPolicy::AbortJob => self.abandon(id, number),
                MissPolicy::SkipNext => self.tcb(id).skip_next += 1,
            }
        }
        // Move the thread's deadline timer on to its next unfinished job.
        let t = self.tcb(id);
        let next = (number + 1).max(t.first_unfinished());
        t.deadline_next = next;
        if next < t.released {
            if let (_, Some(d)) = t.job_times(next) {
                let h = self.timers.push(d, TimerKind::Deadline(id, next));
                self.tcb(id).job_timers[1] = h;
            }
        }
    }

    fn on_abort_time(&mut self, id: ThreadId, number: u32) {
        if self.local(id).is_none() {
            return;
        }
        if self.tcb(id).unfinished(number) {
            // Abort time applies whatever the miss policy.
            self.abandon(id, number);
        }
        let t = self.tcb(id);
        let next = (number + 1).max(t.first_unfinished());
        t.abort_next = next;
        if let (true, Some(a)) = (next < t.released, t.abort_after) {
            let release = t.job_times(next).0;
            let h = self.timers.push(release + a, TimerKind::AbortTime(id, next));
            self.tcb(id).job_timers[2] = h;
        }
    }

    /// Abandon job `number` of `id` (current or waiting) at this instant.
    fn abandon(&mut self, id: ThreadId, number: u32) {
        let t = self.tcb(id);
        if t.job_active && t.job.number == number {
            self.abort_job(id);
        } else if t.pending > 0 && t.pending_front() == number {
            // A waiting job: removed before it starts.
            t.pop_pending();
            t.finished += 1;
            self.stats(id).aborted += 1;
            let c = self.cpu_of(id);
            self.trace(c, TraceKind::JobAbort, id, number, 0);
        }
    }

    /// Abandon the current job. One that has not begun, or that holds no lock, ends at this
    /// instant: the thread leaves its CPU, queue or wait, and a started job's stack is
    /// unwound when the thread next runs (in no simulated time). A job inside a critical
    /// section is unwound at its next task boundary after its last unlock, and ends then.
    fn abort_job(&mut self, id: ThreadId) {
        let t = self.tcb(id);
        let begun = !(t.at_boundary || t.stale);
        if begun && !t.holds_nothing() {
            t.abort_pending = true;
            match t.state {
                // A thread waiting for a lock while holding another is aborted once it has let go.
                State::Blocked(Wait::Lock(_)) => {}
                State::Sleeping | State::Blocked(_) => self.wake(id),
                State::Running | State::Ready | State::Dormant | State::Held => {}
            }
            return;
        }
        t.job_active = false;
        t.finished += 1;
        t.abort_pending = false;
        t.stale |= begun;
        t.work_left = 0;
        t.in_work = false;
        self.stats(id).aborted += 1;
        self.trace_thread(id, TraceKind::JobAbort, 0);
        let t = self.tcb(id);
        if !t.more_jobs() {
            // The thread ends as soon as it runs (after unwinding its stack, if it began).
            t.set_reply(Reply::Stop);
            if matches!(t.state, State::Sleeping | State::Blocked(_)) {
                self.wake(id);
            }
            return;
        }
        self.park(id);
        self.start_next_queued(id);
    }

    /// Take `id` off its CPU, out of its scheduler's queue or out of its wait: it becomes
    /// dormant.
    fn park(&mut self, id: ThreadId) {
        let c = self.cpu_of(id);
        match self.tcb(id).state {
            State::Running => self.stop_running(c, StopReason::Aborted),
            State::Ready => self.cpus[c].scheduler.on_removed(id),
            State::Sleeping | State::Blocked(_) => {
                self.leave_lock_wait(id);
                self.leave_queue_wait(id);
                self.end_wait(id);
                self.tcb(id).wants = None;
            }
            State::Held | State::Dormant => {}
        }
        let t = self.tcb(id);
        t.reply = None;
        if t.state != State::Dormant {
            t.state = State::Dormant;
            self.member_idle(id);
        }
    }

    // ----- urgency ---------------------------------------------------------------------------

    /// Recompute a thread's base urgency (its policy's view of its attributes and current job)
    /// and its effective urgency; tell the scheduler and re-check preemption if it changed.
    fn refresh_urgency(&mut self, id: ThreadId) {
        let i = self.local(id).expect("live thread");
        let t = self.slots[i].as_ref().expect("live slot");
        let c = self.cpu_local(t.cpu).expect("thread on this kernel");
        let base = match t.set.and_then(|_| self.server_deadline(id)) {
            Some(d) => {
                // A constant bandwidth server schedules its members by the server deadline.
                let mut info = t.sched;
                info.deadline = Some(d);
                self.cpus[c].scheduler.base_urgency(&info)
            }
            None => self.cpus[c].scheduler.base_urgency(&t.sched),
        };
        self.slots[i].as_mut().expect("live slot").base_urgency = base;
        self.update_effective_at(i);
    }

    /// Lend (or with `None`, withdraw) urgency to a thread: what inheritance protocols use.
    /// The effective urgency becomes the larger of base and lent.
    pub(crate) fn set_inherited(&mut self, id: ThreadId, lent: Option<Urgency>) {
        self.tcb(id).inherited = lent;
        self.update_effective(id);
    }

    fn update_effective(&mut self, id: ThreadId) {
        self.update_effective_at(self.local(id).expect("live thread"));
    }

    /// [`Kernel::update_effective`] of the thread in slot `i`.
    fn update_effective_at(&mut self, i: usize) {
        let t = self.slots[i].as_mut().expect("live slot");
        let old = t.sched.urgency;
        let new = if t.demoted {
            // Background: below every thread that is not demoted, under any policy that orders
            // by urgency.
            Urgency(i64::MIN + 1)
        } else {
            t.inherited.map_or(t.base_urgency, |u| u.max(t.base_urgency))
        };
        if new == old {
            return;
        }
        t.sched.urgency = new;
        let (id, state, cpu) = (t.id, t.state, t.cpu);
        let c = self.cpu_local(cpu).expect("thread on this kernel");
        let current = self.cpus[c].current;
        let running = match (state, current) {
            (State::Ready, Some(r)) if !self.cpus[c].preempt => Some(self.local(r).expect("live thread")),
            _ => None,
        };
        let info = &self.slots[i].as_ref().expect("live slot").sched;
        let cpu = &mut self.cpus[c];
        cpu.scheduler.on_urgency_changed(info, old);
        match (state, current, running) {
            // A queued thread became more urgent than the running one.
            (State::Ready, _, Some(ri)) if !cpu.preempt => {
                let running = &self.slots[ri].as_ref().expect("live slot").sched;
                if cpu.scheduler.should_preempt(running, info) {
                    cpu.preempt = true;
                }
            }
            // The running thread became less urgent: the scheduler decides whether the best
            // queued thread takes over; the kernel asks it by offering a yield-free re-check.
            (State::Running, Some(r), _) if r == id && new < old => {
                cpu.preempt = true;
                cpu.requeue_current = true;
            }
            _ => {}
        }
    }

    // ----- state transitions -----------------------------------------------------------------

    fn make_ready(&mut self, id: ThreadId, why: ReadyReason) {
        let i = self.local(id).expect("live thread");
        if self.slots[i].as_ref().expect("live slot").set.is_some() && self.member_ready(id) {
            self.tcb(id).state = State::Held;
            return;
        }
        let t = self.slots[i].as_mut().expect("live slot");
        t.state = State::Ready;
        let cpu = t.cpu;
        let c = self.cpu_local(cpu).expect("thread on this kernel");
        let running = match self.cpus[c].current {
            Some(r) if r != id && !self.cpus[c].preempt => Some(self.local(r).expect("live thread")),
            _ => None,
        };
        let info = &self.slots[i].as_ref().expect("live slot").sched;
        let cpu = &mut self.cpus[c];
        cpu.scheduler.on_ready(info, why);
        if let Some(ri) = running {
            if !cpu.preempt {
                let running = &self.slots[ri].as_ref().expect("live slot").sched;
                if cpu.scheduler.should_preempt(running, info) {
                    cpu.preempt = true;
                }
            }
        }
    }

    /// `id`'s sleep or wait ends: its timer is cancelled.
    pub(crate) fn end_wait(&mut self, id: ThreadId) {
        let i = self.local(id).expect("live thread");
        self.slots[i].as_mut().expect("live slot").end_wait(&mut self.timers);
    }

    /// Arm the timer that ends `id`'s sleep or bounded wait.
    pub(crate) fn arm_wait_timer(&mut self, id: ThreadId, at: Time, kind: TimerKind) {
        let h = self.timers.push(at, kind);
        self.tcb(id).wait_timer = h;
    }

    fn wake(&mut self, id: ThreadId) {
        self.leave_lock_wait(id);
        self.leave_queue_wait(id);
        self.end_wait(id);
        self.trace_thread(id, TraceKind::Wake, 0);
        self.make_ready(id, ReadyReason::Woken);
    }

    /// Take the current thread of CPU `c` off the CPU, charging its CPU time.
    fn stop_running(&mut self, c: usize, reason: StopReason) {
        self.charge(c);
        let Some(id) = self.cpus[c].stop() else { return };
        let t = self.tcb(id);
        if reason == StopReason::Preempted {
            t.stats.preemptions += 1;
        }
        let in_set = t.set.is_some();
        self.trace_thread(id, TraceKind::Stop, reason as u64);
        let goes_idle = !matches!(reason, StopReason::Preempted | StopReason::Yielded | StopReason::SliceExpired);
        if goes_idle && in_set {
            // Callers set the real state next; idle is what the set's server must see now.
            self.tcb(id).state = State::Dormant;
            self.member_idle(id);
        }
    }

    /// Dispatch the thread in slot `i` on CPU `c`.
    fn dispatch_at(&mut self, c: usize, i: usize) {
        let t = self.slots[i].as_mut().expect("live slot");
        let seq = self.tracing.then_some(&mut self.trace_seq);
        Self::dispatch_tcb(&mut self.cpus[c], c, t, &mut self.timers, seq, self.now, self.costs.context_switch);
    }

    /// Dispatch `t` on `cpu` (local index `c`) at `now`: its state, the CPU's bookkeeping,
    /// the trace record (numbered from `trace_seq` when tracing), the context-switch cost,
    /// the time slice. Takes the parts of the kernel it needs, so that a caller holding
    /// other parts (the lock hand-off) dispatches the same way.
    #[inline(always)]
    fn dispatch_tcb(
        cpu: &mut Cpu,
        c: usize,
        t: &mut Tcb,
        timers: &mut TimerQueue,
        trace_seq: Option<&mut u32>,
        now: Time,
        context_switch: Duration,
    ) {
        t.state = State::Running;
        let switched = cpu.start(t.id, now);
        if let Some(seq) = trace_seq {
            cpu.record(seq, now, TraceKind::Run, t.id, t.job.number, 0);
        }
        if switched && !context_switch.is_zero() {
            // The CPU's work mark is `now` already: the cost is consumed from here.
            t.add_overhead(context_switch);
        }
        if cpu.sliced {
            // The previous dispatch's slice is over either way.
            if let Some(h) = cpu.slice_timer.take() {
                timers.cancel(h);
            }
            if let Some(q) = cpu.scheduler.time_slice(&t.sched) {
                cpu.slice_timer = timers.push(now + q, TimerKind::SliceEnd(c, cpu.slice_token));
            }
        }
    }

    /// Make a thread spend `cost` of CPU time before its pending reply is delivered: simulated
    /// runtime overhead, consumed exactly like `work`.
    #[inline]
    pub(crate) fn charge_overhead(&mut self, id: ThreadId, cost: Duration) {
        if !cost.is_zero() {
            self.charge_overhead_now(id, cost);
        }
    }

    fn charge_overhead_now(&mut self, id: ThreadId, cost: Duration) {
        let now = self.now;
        let t = self.tcb(id);
        if t.add_overhead(cost) && t.state == State::Running {
            let c = self.cpu_of(id);
            self.cpus[c].work_mark = now;
        }
    }

    /// Carry out a pending preemption and pick a thread if the CPU has none.
    fn reschedule(&mut self, c: usize) {
        if self.cpus[c].requeue_current {
            // The running thread lost urgency. Queue it as a preempted thread and let the
            // policy pick: if it picks the same thread, nothing visible happens.
            self.cpus[c].requeue_current = false;
            self.cpus[c].preempt = false;
            if let Some(r) = self.cpus[c].current {
                self.sched_call(c, r, |s, info| s.on_ready(info, ReadyReason::Preempted));
                match self.cpus[c].scheduler.pick_next(self.now) {
                    Some(next) if next == r => {}
                    next => {
                        self.stop_running(c, StopReason::Preempted);
                        self.tcb(r).state = State::Ready;
                        if let Some(n) = next {
                            if !self.dispatch_picked(c, n) {
                                return;
                            }
                        }
                    }
                }
            }
        }
        if self.cpus[c].preempt {
            self.cpus[c].preempt = false;
            if let Some(r) = self.cpus[c].current {
                self.stop_running(c, StopReason::Preempted);
                self.tcb(r).state = State::Ready;
                self.sched_call(c, r, |s, info| s.on_ready(info, ReadyReason::Preempted));
            }
        }
        while self.cpus[c].current.is_none() {
            let Some(next) = self.cpus[c].scheduler.pick_next(self.now) else { return };
            if !self.dispatch_picked(c, next) {
                return;
            }
        }
    }

    /// Dispatch the thread the scheduler of CPU `c` picked, if it may run there: a policy
    /// may only hand back threads it was given as ready on this CPU. A wrong pick stops the
    /// run with [`Error::BadPick`] (asking again would get the same answer forever); returns
    /// whether the thread was dispatched.
    fn dispatch_picked(&mut self, c: usize, next: ThreadId) -> bool {
        match self.local(next) {
            Some(i)
                if self.slots[i].as_ref().is_some_and(|t| t.state == State::Ready && t.cpu == self.cpus[c].index) =>
            {
                self.dispatch_at(c, i);
                true
            }
            _ => {
                self.bad_pick(c, next);
                false
            }
        }
    }

    #[cold]
    fn bad_pick(&mut self, c: usize, next: ThreadId) {
        if self.failed.is_none() {
            let cpu = &self.cpus[c];
            self.failed =
                Some(Error::BadPick { scheduler: cpu.scheduler.name().to_string(), cpu: cpu.index, thread: next });
        }
    }

    // ----- running threads --------------------------------------------------------------------

    fn refresh_now(&mut self) {
        if C::MODE == ClockMode::Real {
            self.now = self.clock.now();
        }
    }

    /// Resume the current thread `id` of CPU `c` and handle its request. On a kernel of one
    /// CPU, while the request leaves a thread current that can be resumed at once (nothing
    /// pending: no preemption, no timer due, no execution-time event watched, no `work` left),
    /// that thread is resumed here too, as the run loop would do next anyway.
    fn resume(&mut self, c: usize, id: ThreadId) {
        let mut next = (id, self.local(id).expect("current thread is live"));
        loop {
            self.resume_once(c, next.0, next.1);
            match self.continuation(c) {
                Some(then) => next = then,
                None => return,
            }
        }
    }

    /// The thread [`Kernel::resume`] may go on with on CPU `c`, if any, and its slot.
    #[inline]
    fn continuation(&self, c: usize) -> Option<(ThreadId, usize)> {
        let cpu = &self.cpus[c];
        let next = cpu.current?;
        if self.cpus.len() != 1
            || cpu.preempt
            || cpu.requeue_current
            || self.exec_watch > 0
            || self.timers.next_at().is_some_and(|t| t <= self.now)
        {
            return None;
        }
        let i = self.local(next)?;
        let t = self.slots[i].as_ref()?;
        (t.work_left == 0).then_some((next, i))
    }

    /// Resume the current thread `id` (in slot `i`) of CPU `c` and handle its request.
    #[inline]
    fn resume_once(&mut self, c: usize, id: ThreadId, i: usize) {
        let now = self.now;
        let t = self.slots[i].as_mut().expect("live slot");
        if (t.restart_pending || t.pending_unlock.is_some()) && !self.settle_before_resume(c, id) {
            return;
        }
        let t = self.slots[i].as_mut().expect("live slot");
        t.in_work = false;
        let mut reply = match t.reply.take() {
            Some(reply) => reply,
            None => Reply::Go,
        };
        // Aborts and kills wait for the thread's last lock to be released, and never ride on
        // the answer to an unlock (it comes back into a destructor).
        let quiet = std::mem::take(&mut t.quiet_reply);
        if t.restart_pending {
            t.restart_pending = false;
            reply = Reply::Restart;
        } else if (t.kill_pending || t.abort_pending || t.stale) && !quiet {
            if let Some(r) = Self::unwind_reply(t) {
                reply = r;
            }
        }
        t.at_boundary = false;
        let response = Response { now, job: t.job, reply };
        if t.coroutine.is_none() && !self.create_coroutine(c, i) {
            return;
        }
        let t = self.slots[i].as_mut().expect("live slot");
        let result = t.coroutine.as_mut().expect("coroutine created").resume(response);
        self.refresh_now();
        match result {
            // Unlocks are the requests that hand a CPU straight to a waiter: they skip the
            // general dispatch on the request kind.
            CoroutineResult::Yield(request) => {
                if let Request::Unlock { lock, poison } = request {
                    // An unlock owns nothing: there is no drop glue to run.
                    std::mem::forget(request);
                    self.handle_unlock(i, id, lock, poison);
                } else if let Request::Work(ns) = request {
                    // The most frequent request in a simulation, handled here; it owns
                    // nothing either.
                    std::mem::forget(request);
                    self.handle_work(c, i, ns);
                } else {
                    self.handle(c, id, request);
                }
            }
            CoroutineResult::Return(outcome) => self.exit(c, id, outcome),
        }
        if self.verify {
            self.verify_urgencies();
        }
    }

    /// The reply that unwinds a thread with a kill, an abort or an ended job on its stack,
    /// if it is to be unwound now. Nothing unwinds inside a critical section, except at a
    /// job boundary, where a lock still counted as held was leaked by the job. Once delivered,
    /// the reply is delivered again until the job loop reports the unwind: a body that caught
    /// it and called the runtime again is unwound again at that call. A thread still
    /// unwinding (a destructor calling the runtime) is answered normally instead.
    #[cold]
    fn unwind_reply(t: &mut Tcb) -> Option<Reply> {
        if !(t.holds_nothing() || t.at_boundary) {
            return None;
        }
        if t.unwind_sent && std::thread::panicking() {
            return None;
        }
        t.unwind_sent = true;
        Some(if t.kill_pending { Reply::Kill } else { Reply::Abort })
    }

    /// What must happen before thread `id` is resumed with its reply: an RCS restart of a
    /// section that has not begun, an unlock whose simulated cost has been paid. Returns
    /// false when the thread must not be resumed now (a more urgent one takes over first).
    #[cold]
    fn settle_before_resume(&mut self, c: usize, id: ThreadId) -> bool {
        let t = self.tcb(id);
        if t.restart_pending && matches!(t.reply, Some(Reply::Locked(Ok(())))) {
            // RCS aborted a section that has not begun (the owner was still paying for the
            // acquisition): give the lock back and let the owner ask again, behind the aborter.
            t.restart_pending = false;
            t.reply = Some(Reply::LockRetry);
            if let Some(&l) = t.held.last() {
                self.give_back(id, l as usize);
                if self.cpus[c].preempt {
                    return false;
                }
            }
        }
        let i = self.local(id).expect("the resumed thread is live");
        let t = self.slots[i].as_mut().expect("live slot");
        if let Some((lock, poison)) = t.pending_unlock.take() {
            self.unlock(id, lock, poison, Some(i));
            if self.cpus[c].preempt || self.cpus[c].current != Some(id) {
                // A waiter more urgent than this thread takes over first.
                return false;
            }
        }
        true
    }

    /// Give the thread in slot `i` (on CPU `c`) its coroutine, at its first resume. Returns
    /// false when no stack could be had: the thread has then ended.
    #[cold]
    fn create_coroutine(&mut self, c: usize, i: usize) -> bool {
        let t = self.slots[i].as_mut().expect("live slot");
        let id = t.id;
        match self.stacks.take(t.stack_size) {
            Ok(stack) => {
                use corosensei::stack::Stack;
                let real_clock = self.real_clock.clone();
                let t = self.slots[i].as_mut().expect("live slot");
                self.guards[i] = crate::os::overflow::StackGuard::new(
                    stack.limit().get(),
                    stack.base().get(),
                    &self.summaries[t.summary].name,
                    id.index() as u32,
                    id.generation(),
                    t.cpu,
                );
                let body = t.body.take().expect("a new thread has its body");
                let cpu = t.cpu;
                let fast_held = t.fast_held.clone();
                let runtime = self.runtime;
                t.coroutine = Some(Coroutine::with_stack(stack, move |y, first| {
                    ctx::thread_main(y, first, (runtime, id, cpu), real_clock, fast_held, body)
                }));
                true
            }
            Err(e) => {
                self.exit(c, id, ThreadOutcome::Panicked(e.to_string()));
                false
            }
        }
    }

    /// The running thread `id`, in slot `i`, unlocks `lock`.
    #[inline]
    fn handle_unlock(&mut self, i: usize, id: ThreadId, lock: LockId, poison: bool) {
        let t = self.slots[i].as_mut().expect("live slot");
        t.quiet_reply = true;
        let cost = self.costs.unlock;
        if cost.is_zero() {
            self.unlock(id, lock, poison, Some(i));
        } else {
            // The unlock takes effect once its cost is paid, before any waiter runs.
            t.pending_unlock = Some((lock, poison));
            self.charge_overhead(id, cost);
        }
    }

    /// The thread in slot `i`, current on CPU `c`, asks to spend `ns` of CPU time.
    #[inline]
    fn handle_work(&mut self, c: usize, i: usize, ns: u64) {
        let t = self.slots[i].as_mut().expect("live slot");
        // An abort or a kill that waited for a critical section to end lands here, instead
        // of after this demand.
        let signalled = (t.abort_pending || t.kill_pending || t.stale) && t.holds_nothing();
        if ns > 0 && !signalled {
            t.work_left = ns;
            t.in_work = true;
            self.cpus[c].work_mark = self.now;
        }
    }

    fn handle(&mut self, c: usize, id: ThreadId, request: Request) {
        match request {
            Request::Work(ns) => {
                let i = self.local(id).expect("the requesting thread is live");
                self.handle_work(c, i, ns);
            }
            Request::Yield => {
                self.stop_running(c, StopReason::Yielded);
                self.tcb(id).state = State::Ready;
                self.sched_call(c, id, |s, info| s.on_yield(info));
            }
            Request::SleepUntil(t) => {
                if t > self.now {
                    self.stop_running(c, StopReason::Sleeping);
                    let tcb = self.tcb(id);
                    tcb.state = State::Sleeping;
                    let token = tcb.wait_token;
                    self.arm_wait_timer(id, t, TimerKind::Wake(id, token));
                    self.sched_call(c, id, |s, info| s.on_blocked(info));
                }
            }
            Request::Spawn(boxed) => {
                let (spec, body) = *boxed;
                let cpu = self.cpus[c].index;
                let r = self.spawn_thread(spec, body, cpu);
                self.tcb(id).reply = Some(Reply::Spawned(r.map_err(Box::new)));
            }
            Request::Join(target) => {
                let from = Some(self.cpus[c].index);
                let r = if target == id {
                    Err(Error::JoinSelf)
                } else {
                    self.outcome_of(target).map_err(|_| self.no_thread_from(target, from))
                };
                match r {
                    Ok(None) => {
                        self.tcb(target).joiners += 1;
                        self.stop_running(c, StopReason::Blocked);
                        self.tcb(id).state = State::Blocked(Wait::Join(target));
                        self.sched_call(c, id, |s, info| s.on_blocked(info));
                    }
                    Ok(Some(outcome)) => self.tcb(id).reply = Some(Reply::Joined(Ok(outcome))),
                    Err(e) => self.tcb(id).reply = Some(Reply::Joined(Err(Box::new(e)))),
                }
            }
            Request::Release(target) => {
                let from = self.cpus[c].index;
                let r = self.request_release(target, from);
                self.tcb(id).reply = Some(Reply::Released(r.map_err(Box::new)));
            }
            Request::JobDone { aborted } => self.job_done(c, id, aborted),
            Request::Lock { lock, deadline, try_only, restartable } => {
                if let Some(r) = self.lock_request(c, id, lock, deadline, try_only, restartable) {
                    self.tcb(id).reply = Some(Reply::Locked(r));
                }
            }
            Request::Unlock { lock, poison } => {
                let i = self.local(id).expect("the requesting thread is live");
                self.handle_unlock(i, id, lock, poison);
            }
            Request::ClearPoison(lock) => self.clear_poison(lock),
            Request::Adopt(lock) => {
                if let Some(l) = self.lock_local(lock) {
                    self.sync_owner(l);
                }
            }
            Request::CondWait { cond, lock, deadline } => {
                if let Some(r) = self.cond_wait(c, id, cond, lock, deadline) {
                    self.tcb(id).reply = Some(r);
                }
            }
            Request::CondSignal { cond, all } => {
                if let Err(e) = self.cond_signal(c, cond, all) {
                    self.tcb(id).reply = Some(Reply::Locked(Err(e)));
                }
            }
            Request::Procure { sem, deadline, try_only } => {
                if let Some(r) = self.procure(c, id, sem, deadline, try_only) {
                    self.tcb(id).reply = Some(Reply::Locked(r));
                }
            }
            Request::Vacate(sem) => {
                if let Err(e) = self.vacate(c, sem) {
                    self.tcb(id).reply = Some(Reply::Locked(Err(e)));
                }
            }
            Request::Urgency => {
                let u = self.tcb(id).urgency();
                self.tcb(id).reply = Some(Reply::Urgency(u));
            }
            Request::Control(op) => {
                let r = self.control(*op);
                self.tcb(id).reply = Some(Reply::Control(r.map_err(Box::new)));
            }
            Request::SetPriority(priority) => {
                self.tcb(id).sched.priority = priority;
                self.refresh_urgency(id);
            }
        }
    }

    fn request_release(&mut self, target: ThreadId, from_cpu: usize) -> Result<(), Error> {
        if self.local(target).is_none() {
            return Err(self.no_thread_from(target, Some(from_cpu)));
        }
        let now = self.now;
        let t = self.tcb(target);
        let Timing::Sporadic { min_interarrival } = t.timing else {
            return Err(Error::NotSporadic(target));
        };
        let at = now.max(t.next_sporadic);
        t.next_sporadic = at + min_interarrival;
        if at <= now {
            self.release_job(target, at, false);
        } else {
            // Deferred releases fall `min_interarrival` apart: one timer, for the first.
            t.deferred += 1;
            if t.deferred == 1 {
                let h = self.timers.push(at, TimerKind::Release(target));
                self.tcb(target).job_timers[0] = h;
            }
        }
        Ok(())
    }

    /// Resume threads on every CPU until each is idle or busy with `work`.
    fn run_cpus(&mut self) {
        loop {
            let mut progressed = false;
            for c in 0..self.cpus.len() {
                loop {
                    if self.timers.next_at().is_some_and(|t| t <= self.now) {
                        self.fire_due_timers();
                    }
                    if C::MODE == ClockMode::Real && self.exec_watch > 0 {
                        // A runaway in user code is caught at its next runtime call.
                        self.check_exec_events();
                    }
                    self.reschedule(c);
                    if self.failed.is_some() {
                        return;
                    }
                    let Some(id) = self.cpus[c].current else { break };
                    if self.tcb(id).work_left > 0 {
                        break;
                    }
                    self.resume(c, id);
                    progressed = true;
                }
            }
            if !progressed || self.lone_cpu_busy() {
                return;
            }
        }
    }

    /// Whether another pass of [`Kernel::run_cpus`] would do nothing: a lone CPU whose
    /// current thread is inside `work`, with no preemption pending, no timer due and no
    /// execution-time check to make (the pass that just ended stopped there).
    #[inline]
    fn lone_cpu_busy(&self) -> bool {
        let [cpu] = &self.cpus[..] else { return false };
        cpu.current.is_some()
            && !cpu.preempt
            && !cpu.requeue_current
            && (C::MODE == ClockMode::Virtual || self.exec_watch == 0)
            && self.timers.next_at().is_none_or(|t| t > self.now)
    }

    // ----- time ---------------------------------------------------------------------------------

    fn fire_due_timers(&mut self) {
        // The horizon is exclusive, also when a real clock has passed it: what is due at or
        // after it belongs to no run.
        let Some(last) = self.horizon.as_nanos().checked_sub(1) else { return };
        let due_by = self.now.min(Time::from_nanos(last));
        while let Some((at, kind)) = self.timers.peek_due(due_by) {
            if let TimerKind::Release(id) = kind {
                let Some(i) = self.local(id) else {
                    self.timers.take_top();
                    continue;
                };
                let t = self.slots[i].as_mut().expect("live slot");
                let next = match t.timing {
                    Timing::Periodic { period, .. } => {
                        t.max_jobs.is_none_or(|m| t.released + 1 < m).then_some(at + period)
                    }
                    Timing::Sporadic { min_interarrival } => {
                        t.deferred = t.deferred.saturating_sub(1);
                        (t.deferred > 0).then_some(at + min_interarrival)
                    }
                    Timing::OneShot => None,
                };
                // The job released now will have its deadline armed at the next release (see
                // `release_job`, whose early returns this mirrors): the entry that just fired
                // is re-armed for both at once, the deadline keyed as if pushed right after.
                let number = t.released;
                let shared_deadline = matches!(t.timing, Timing::Periodic { .. })
                    && next.is_some()
                    && t.rel_deadline.map(|d| at + d) == next
                    && t.deadline_next == number
                    && !(t.skip_next > 0 && t.pending == 0)
                    && t.max_jobs.is_none_or(|m| number < m);
                match next {
                    // The next release reuses the entry that just fired.
                    Some(next) => {
                        let first = shared_deadline.then_some(TimerKind::Deadline(id, number));
                        t.job_timers[0] = Some(self.timers.rearm_top(next, TimerKind::Release(id), first));
                    }
                    None => self.timers.remove_top(),
                }
                self.release_job(id, at, shared_deadline);
                continue;
            }
            self.timers.take_top();
            match kind {
                TimerKind::Release(_) => unreachable!("handled above"),
                TimerKind::Wake(id, token) => {
                    if self.local(id).is_some() {
                        let t = self.tcb(id);
                        if t.state == State::Sleeping && t.wait_token == token {
                            self.wake(id);
                        }
                    }
                }
                TimerKind::Deadline(id, job) => self.on_deadline(id, job),
                TimerKind::AbortTime(id, job) => self.on_abort_time(id, job),
                TimerKind::SliceEnd(c, token) => {
                    if self.cpus[c].slice_token == token {
                        if let Some(id) = self.cpus[c].current {
                            self.stop_running(c, StopReason::SliceExpired);
                            self.tcb(id).state = State::Ready;
                            self.sched_call(c, id, |s, info| s.on_ready(info, ReadyReason::SliceExpired));
                        }
                    }
                }
                TimerKind::Event(idx) => self.fire_event(idx as usize, at),
                TimerKind::WaitTimeout(id, token) => self.on_wait_timeout(id, token),
                TimerKind::Replenish(set, epoch, amount) => self.on_replenish_timer(set as usize, epoch, amount, at),
            }
        }
    }

    fn fire_event(&mut self, idx: usize, at: Time) {
        let ev = &mut self.events[idx];
        if ev.cancelled {
            return;
        }
        let Some(mut handler) = ev.handler.take() else { return };
        let spec = ev.spec;
        let mut releases = std::mem::take(&mut self.release_buf);
        releases.clear();
        let tag = self.runtime_tag();
        let mut ecx = EventCtx { now: self.now, tag, releases: &mut releases, cancelled: false };
        self.culprit = Culprit::Event(idx as u32);
        handler(&mut ecx);
        self.culprit = Culprit::Policy;
        let cancelled = ecx.cancelled;
        let c = self.cpu_local(spec.cpu).expect("event on this kernel");
        let placeholder = ThreadId::new(u32::MAX, 0);
        self.trace(c, TraceKind::Timer, placeholder, 0, idx as u64);
        for &t in releases.iter() {
            // A release of an ended thread is simply dropped.
            let _ = self.request_release(t, spec.cpu);
        }
        self.release_buf = releases;
        let ev = &mut self.events[idx];
        ev.handler = Some(handler);
        ev.cancelled = cancelled;
        if let (Some(p), false) = (spec.period, cancelled) {
            self.timers.push(at + p, TimerKind::Event(idx as u32));
        }
    }

    /// Earliest instant something happens: a timer, or the end of some CPU's work.
    fn next_instant(&self) -> Option<Time> {
        let mut next = self.timers.next_at();
        if let Some(t) = self.next_exec_instant() {
            next = Some(next.map_or(t, |n| n.min(t)));
        }
        for cpu in &self.cpus {
            if let Some(id) = cpu.current {
                let left = self.slots[self.local(id).expect("live")].as_ref().expect("live").work_left;
                if left > 0 {
                    let end = Time::from_nanos(cpu.work_mark.as_nanos().saturating_add(left));
                    next = Some(next.map_or(end, |n| n.min(end)));
                }
            }
        }
        next
    }

    fn advance(&mut self, target: Time) {
        let busy = self.cpus.iter().any(|cpu| cpu.current.is_some());
        self.now = self.clock.wait_until(target, busy);
        // Work is credited only up to `target`, the instant of the next event. A real clock may
        // return later than asked (the OS descheduled the dispatcher): that excess was not this
        // CPU's time to give, and crediting it would let a job finish "before" an event that
        // was due earlier. The events due meanwhile are then handled in their time order.
        let credited_until = self.now.min(target);
        for c in 0..self.cpus.len() {
            let Some(id) = self.cpus[c].current else { continue };
            let done = credited_until - self.cpus[c].work_mark;
            self.cpus[c].work_mark = self.now;
            let t = self.tcb(id);
            t.work_left = t.work_left.saturating_sub(crate::time::nanos(done));
        }
    }

    /// Resume the threads whose `work` ended at this instant before anything else due now, and
    /// let each run its zero-time code up to its next `work`, wait, yield or end: a job whose
    /// demand is met at `t` completes (or ends its thread) at `t`, ahead of releases, budget
    /// events and replenishments at `t`.
    fn finish_completed_work(&mut self) {
        for c in 0..self.cpus.len() {
            let Some(id) = self.cpus[c].current else { continue };
            let t = self.tcb(id);
            if !(t.in_work && t.work_left == 0) {
                continue;
            }
            loop {
                self.resume(c, id);
                if self.cpus[c].current != Some(id) || self.cpus[c].preempt {
                    break;
                }
                match self.local(id) {
                    Some(i) if self.slots[i].as_ref().is_some_and(|t| !t.in_work) => {}
                    _ => break,
                }
            }
        }
    }

    /// Run over `[now, until)` or until no thread is left. A panic of code the kernel calls
    /// (a handler, a policy) ends the run with [`Error::Panicked`], after every thread still
    /// alive was unwound.
    pub(crate) fn run(mut self, until: Time) -> Result<KernelPart, Error> {
        let _overflows = crate::os::overflow::watching(&self.guards);
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run_loop(until))) {
            Ok(()) => {
                if self.failed.is_some() {
                    self.halt_others();
                }
                Ok(self.shutdown())
            }
            Err(payload) => {
                let what = self.culprit_name();
                // The kernel's state may be half-changed: only unwinding the threads is safe now.
                self.teardown_threads();
                self.halt_others();
                Err(Error::Panicked { what, message: panic_message(&*payload) })
            }
        }
    }

    /// This kernel's run failed: the other dispatchers of the run stop at their next turn.
    fn halt_others(&self) {
        if let Some(halt) = &self.halt {
            halt.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// What [`Kernel::culprit`] names, in words.
    fn culprit_name(&self) -> String {
        let name_of = |id: ThreadId| {
            self.summaries.iter().find(|s| s.id == id).map_or_else(|| format!("{id:?}"), |s| format!("`{}`", s.name))
        };
        match self.culprit {
            Culprit::Policy => {
                format!("the scheduler `{}` or a lock policy", self.cpus.first().map_or("?", |c| c.scheduler.name()))
            }
            Culprit::MissHandler(id) => format!("the miss handler of thread {}", name_of(id)),
            Culprit::Event(i) => format!("the handler of timing event {i}"),
            Culprit::ExecTimer => "an execution-time timer's handler".to_string(),
            Culprit::Budget(s) => match self.sets.get(s as usize) {
                Some(set) => format!("the budget handler or action of thread set {:?}", set.id),
                None => "a budget handler or action".to_string(),
            },
            Culprit::Progress => "the progress hook".to_string(),
        }
    }

    /// Stop at the next turn of the loop when another dispatcher of the run has failed.
    pub(crate) fn halt_with(&mut self, halt: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        self.halt = Some(halt);
    }

    fn run_loop(&mut self, until: Time) {
        self.now = self.clock.now();
        self.horizon = until;
        let mut turns: u32 = 0;
        loop {
            turns = turns.wrapping_add(1);
            if turns & 0xffff == 0 {
                if let Some(hook) = &self.progress {
                    self.culprit = Culprit::Progress;
                    hook(self.now);
                    self.culprit = Culprit::Policy;
                }
            }
            if self.halt.as_ref().is_some_and(|h| h.load(std::sync::atomic::Ordering::Relaxed)) {
                break;
            }
            self.finish_completed_work();
            self.fire_due_timers();
            self.check_exec_events();
            self.run_cpus();
            if self.timers.overflowed() && self.failed.is_none() {
                self.failed = Some(Error::TooManyTimers { max: self.timers.capacity() });
            }
            if self.live == 0 || self.failed.is_some() {
                break;
            }
            match self.next_instant() {
                None => break,
                // The horizon is exclusive: what is due at `until` itself belongs to a later run.
                Some(t) if t >= until => {
                    self.advance(until);
                    break;
                }
                Some(t) => self.advance(t),
            }
        }
    }

    /// Unwind every thread that has started and not ended, with the runtime's stop, so its
    /// destructors run on its own stack; their runtime calls do not suspend it (see
    /// `ctx.rs`). The kernel's state is not touched: this also runs after a panic left it
    /// half-changed, and when the kernel is dropped.
    fn teardown_threads(&mut self) {
        let now = self.now;
        for i in 0..self.slots.len() {
            let Some(t) = self.slots[i].as_mut() else { continue };
            let Some(mut co) = t.coroutine.take() else { continue };
            let job = t.job;
            // Each resume runs the thread up to its next runtime call: a thread that catches
            // the stop and calls the runtime again is stopped again at that call.
            for _ in 0..64 {
                if co.done() {
                    break;
                }
                let resumed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let _ = co.resume(Response { now, job, reply: Reply::Stop });
                }));
                if resumed.is_err() {
                    break;
                }
            }
            // A thread that refused to stop is dropped: the coroutine library unwinds it by
            // force.
            ctx::drop_coroutine(co);
        }
    }

    fn shutdown(mut self) -> KernelPart {
        // Charge the CPU time of threads still on a CPU; their last segment stays open in the
        // trace, which exporters close at the run's end.
        for c in 0..self.cpus.len() {
            self.charge(c);
        }
        for t in self.slots.iter().flatten() {
            self.summaries[t.summary].stats = ThreadStats { cpu_time: Duration::from_nanos(t.cpu_ns), ..t.stats };
        }
        // Unwind every suspended thread so its destructors run on its own stack.
        self.teardown_threads();
        let mut lists = Vec::with_capacity(self.cpus.len());
        let mut dropped = 0;
        for cpu in &mut self.cpus {
            let (records, lost) = cpu.trace.take();
            lists.push(records);
            dropped += lost;
        }
        let trace = crate::trace::merge_by_seq(lists);
        KernelPart {
            threads: std::mem::take(&mut self.summaries),
            sets: self.set_summaries(),
            trace,
            trace_dropped: dropped,
            end: self.now,
            error: self.failed.take(),
        }
    }
}

impl Kernel<RealClock> {
    /// Give the kernel the run's clock, whose zero every CPU shares; before the run starts.
    pub(crate) fn set_clock(&mut self, clock: RealClock) {
        self.real_clock = Some(clock.clone());
        self.clock = clock;
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
