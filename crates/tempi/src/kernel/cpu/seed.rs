//! Building a kernel: the [`KernelSeed`] a runtime fills before the run (threads, timing
//! events, the set, lock and clock operations to replay), `Kernel::new`, which sizes every pool
//! from it, and installing a thread in a slot.
//!
//! Must not: run anything. Nothing here is on the dispatch path; every container the run uses
//! is sized here so that the run never allocates.

use std::time::Duration;

use crate::clock::{Clock, ClockMode};
use crate::config::{Config, Costs, TimerSpec};
use crate::error::Error;
use crate::id_space::IdSpace;
use crate::kernel::thread_side::protocol::{Answer, Body, ControlOp, JobInfo};
use crate::kernel::threads::stacks::StackPool;
use crate::kernel::threads::tcb::{State, Tcb};
use crate::kernel::timing::timers::{TimerKind, TimerQueue};
use crate::kernel::{Cpu, Culprit, EventHandler, Kernel, TimingEvent};
use crate::objects::{LockSpec, SemSpec};
use crate::os::busy_cell::KernelId;
use crate::plain::SetId;
use crate::plain::ThreadId;
use crate::plain::TraceKind;
use crate::plain::{CondId, LockId, SemId};
use crate::policy::sched::{SchedInfo, SchedulerFactory, Urgency};
use crate::sets::Accounting;
use crate::stats::{ThreadStats, ThreadSummary};
use crate::thread::{ThreadSpec, Timing};
use crate::time::Time;
use crate::trace::TraceBuffer;

/// What a kernel is built from: settings plus the threads and timing events registered before
/// the run. It is `Send`, so a real-time dispatcher can build its kernel on its own OS thread
/// (coroutines must never move between OS threads).
pub(crate) struct KernelSeed {
    /// The identity of the runtime this kernel belongs to (see `Runtime`).
    runtime: u64,
    /// The runtime's thread-id tag, held while this seed or its kernel lives.
    ids: std::sync::Arc<IdSpace>,
    /// The identity of the runtime's first kernel; this one is `kernels.nth(k)`.
    pub(in crate::kernel) kernels: KernelId,
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
    /// Operations on sets, clocks, budgets and synchronisation objects registered before the
    /// run, replayed in order when the kernel is built, through the path a thread's own
    /// requests take.
    setup: Vec<ControlOp>,
    sets_created: u32,
    max_locks: usize,
    lock_base: u32,
    locks_created: u32,
    conds_created: u32,
    sems_created: u32,
    /// The runtime's global (MSRP) locks: every kernel of the run shares them.
    globals: Vec<std::sync::Arc<crate::objects::GlobalLock>>,
    costs: Costs,
    verify: bool,
    direct_hand_off: bool,
    direct_switch: bool,
    progress: Option<crate::config::ProgressHook>,
    message_pool: usize,
    os_backed_grace: std::time::Duration,
    /// The runtime's payload pools: every kernel of the run shares them.
    payloads: crate::kernel::PayloadStores,
    /// The handler runtime's settlements (see `xcpu/handler_host.rs`).
    handler_hooks: crate::kernel::HandlerHooks,
}

impl KernelSeed {
    /// Seed of kernel `k` of `kernels`: one kernel for all CPUs, or one per CPU, of runtime
    /// `runtime`. Thread and set ids carry the runtime's tag above their index
    /// (`Config::check` keeps the indices below it). The runtime's kernels are the executors
    /// from `first` on.
    pub(crate) fn new(
        runtime: u64,
        ids: &std::sync::Arc<IdSpace>,
        first: KernelId,
        k: usize,
        kernels: usize,
        config: &Config,
        handler_hooks: crate::kernel::HandlerHooks,
    ) -> KernelSeed {
        let (first_cpu, cpu_count) = if kernels == 1 { (0, config.cpus) } else { (k, 1) };
        let capacity = config.max_threads * cpu_count;
        let tag = ids.check().slot_tag();
        KernelSeed {
            runtime,
            ids: ids.clone(),
            kernels: first,
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
            globals: Vec::new(),
            costs: config.costs,
            verify: config.verify,
            direct_hand_off: config.direct_hand_off,
            direct_switch: config.direct_switch,
            progress: config.progress.clone(),
            message_pool: config.message_pool * cpu_count,
            os_backed_grace: config.os_backed_grace,
            payloads: Default::default(),
            handler_hooks,
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
        self.setup.push(ControlOp::CreateCond(cpu));
        Ok(CondId(id))
    }

    pub(crate) fn create_sem(&mut self, spec: SemSpec) -> Result<SemId, Error> {
        let id = Self::next_id(&mut self.sems_created, self.max_locks, self.lock_base, "semaphores")?;
        self.setup.push(ControlOp::CreateSem(spec));
        Ok(SemId(id))
    }

    /// The payload pools shared with this kernel.
    pub(crate) fn payloads(&self) -> &crate::kernel::PayloadStores {
        &self.payloads
    }

    /// Share payload pool `store` with this kernel.
    pub(crate) fn add_payload_store(&mut self, store: std::sync::Arc<dyn crate::kernel::PayloadStore>) {
        self.payloads.push(store);
    }

    /// Share global lock `lock` with this kernel.
    pub(crate) fn add_global(&mut self, lock: std::sync::Arc<crate::objects::GlobalLock>) {
        self.globals.push(lock);
    }

    pub(crate) fn create_lock(&mut self, spec: LockSpec) -> Result<LockId, Error> {
        let id = Self::next_id(&mut self.locks_created, self.max_locks, self.lock_base, "locks")?;
        self.setup.push(ControlOp::CreateLock(spec));
        Ok(LockId(id))
    }

    pub(crate) fn create_set(&mut self, name: String) -> Result<SetId, Error> {
        if self.sets_created as usize >= self.max_sets {
            return Err(Error::TooManySets { max: self.max_sets });
        }
        let id = SetId { word: self.set_base + self.sets_created, runtime: self.runtime };
        self.sets_created += 1;
        self.setup.push(ControlOp::CreateSet(name));
        Ok(id)
    }

    pub(crate) fn owns_set(&self, set: SetId) -> bool {
        (set.runtime == self.runtime) && set.word.checked_sub(self.set_base).is_some_and(|i| i < self.sets_created)
    }

    pub(crate) fn owns_thread(&self, id: ThreadId) -> bool {
        self.threads.iter().any(|(t, _, _)| *t == id)
    }

    pub(crate) fn push_setup(&mut self, op: ControlOp) {
        self.setup.push(op);
    }

    pub(crate) fn first_cpu(&self) -> usize {
        self.first_cpu
    }

    /// How many threads were registered before the run.
    pub(crate) fn thread_count(&self) -> usize {
        self.threads.len()
    }

    pub(crate) fn add_thread(&mut self, spec: ThreadSpec, body: Body) -> Result<ThreadId, Error> {
        if self.threads.len() >= self.capacity {
            return Err(Error::TooManyThreads { max: self.capacity / self.cpu_count });
        }
        let id = ThreadId::new(self.slot_base + self.threads.len() as u32, self.ids.check().generation(0));
        self.threads.push((id, spec, body));
        Ok(id)
    }

    /// What, among the threads and timing events added before the run, repeats with no end
    /// of its own: a periodic thread without `max_jobs` (by name), or a periodic timing
    /// event. Only a kill can end such a run.
    pub(crate) fn endless(&self) -> Option<String> {
        let thread = self
            .threads
            .iter()
            .find(|(_, spec, _)| matches!(spec.timing, crate::Timing::Periodic { .. }) && spec.max_jobs.is_none());
        if let Some((_, spec, _)) = thread {
            return Some(format!("periodic thread `{}` has no `max_jobs`", spec.name));
        }
        self.timers.iter().any(|(spec, _)| spec.period.is_some()).then(|| "a periodic timing event".to_string())
    }

    pub(crate) fn add_timer(&mut self, spec: TimerSpec, handler: EventHandler) -> Result<(), Error> {
        if self.timers.len() >= self.max_timers {
            return Err(Error::InvalidConfig(format!("more than {} timing events", self.max_timers)));
        }
        self.timers.push((spec, handler));
        Ok(())
    }
}

impl<C: Clock> Kernel<C> {
    /// Build a kernel and size every pool. Threads and events from the seed are installed.
    pub(crate) fn new(seed: KernelSeed, clock: C) -> Result<Kernel<C>, Error> {
        use crate::sizes::{vec_filled, vec_from_fn, vec_with_capacity};
        let cap = seed.capacity;
        let cpus = (0..seed.cpu_count)
            .map(|i| (i, (seed.scheduler)()))
            .map(|(i, scheduler)| -> Result<Cpu, Error> {
                Ok(Cpu {
                    index: seed.first_cpu + i,
                    sliced: scheduler.time_sliced(),
                    events: scheduler.events(),
                    last_ran: None,
                    slice_timer: None,
                    yielded: false,
                    scheduler,
                    current: None,
                    preempt: false,
                    requeue_current: false,
                    charged_at: Time::ZERO,
                    work_mark: Time::ZERO,
                    kernel_since: Time::MAX,
                    kernel_ns: 0,
                    slice_token: 0,
                    trace: TraceBuffer::new(seed.trace_capacity)?,
                })
            })
            .collect::<Result<_, Error>>()?;
        let mut stacks = StackPool::default();
        stacks.reserve(seed.default_stack, cap.min(32))?;
        let real_clock = clock.as_real().cloned();
        let pre = seed.threads.len();
        let id_check = seed.ids.check();
        let mut k = Kernel {
            runtime: seed.runtime,
            id_check,
            ids: seed.ids,
            executors: seed.kernels,
            // Threads and events registered before the run are placed at time zero; a real
            // clock gets the run's shared epoch once every CPU is ready (`Kernel::set_clock`).
            now: Time::ZERO,
            clock,
            real_clock,
            cpus,
            first_cpu: seed.first_cpu,
            // Cancelled timers leave the table, so what is pending at once is bounded: per
            // thread a release, a deadline, an abort time and a wake or wait timeout; one
            // per timing event; a few replenishments per set; a slice end per CPU; one per
            // message of the pool (a timed message holds one).
            timers: TimerQueue::try_with_capacity(
                cap * 4 + seed.max_timers + seed.max_sets * 8 + seed.cpu_count * 2 + seed.message_pool,
            )?,
            events: vec_with_capacity(seed.max_timers, "the timing events (Config::max_timers)")?,
            release_buf: vec_with_capacity(cap, "the release buffer (Config::max_threads)")?,
            total_cpus: seed.total_cpus,
            trace_seq: 0,
            tracing: seed.trace_capacity > 0,
            verify: seed.verify,
            handler_hooks: seed.handler_hooks,
            direct_hand_off: seed.direct_hand_off,
            direct_switch: seed.direct_switch,
            progress: seed.progress,
            costs: seed.costs,
            culprit: std::cell::Cell::new(Culprit::Scheduler),
            halt: None,
            horizon: Time::MAX,
            failed: None,
            event_releases_refused: 0,
            resumed: crate::kernel::cpu::direct::Resumed::none(),
            direct_switches: 0,
            switched_in_request: false,
            watch: None,
            next_inherit: 0,
            global: false,
            cross: crate::kernel::xcpu::CrossCpu {
                crossing: None,
                bell: None,
                remote_joins: Vec::new(),
                proxies: 0,
                outbox: crate::kernel::xcpu::Outbox::with_capacity(0),
                full_runs: Vec::new(),
                full_repeat: false,
                stats: crate::stats::CrossCpuStats::default(),
            },
            sync: crate::kernel::locking::SyncObjects {
                locks: vec_with_capacity(seed.max_locks, "the locks (Config::max_locks)")?,
                globals: seed
                    .globals
                    .iter()
                    .map(|g| crate::kernel::locking::global_locks::GlobalSlot::new(g.clone(), cap))
                    .collect::<Result<_, Error>>()?,
                lock_base: seed.lock_base,
                lock_scratch: vec_with_capacity(cap, "the lock scratch list (Config::max_threads)")?,
                ceilings_held: 0,
                conds: vec_with_capacity(seed.max_locks, "the condition variables (Config::max_locks)")?,
                sems: vec_with_capacity(seed.max_locks, "the semaphores (Config::max_locks)")?,
            },
            exec: crate::kernel::timing::ExecTime {
                sets: vec_with_capacity(seed.max_sets, "the thread sets (Config::max_sets)")?,
                set_base: seed.set_base,
                accounting: seed.accounting,
                watch: 0,
                deferred_deadlines: Vec::with_capacity(seed.cpu_count),
                budget_killed_running: false,
            },
            mail: crate::kernel::messaging::Mail {
                stats: crate::stats::MessageStats::default(),
                pool: crate::kernel::messaging::messages::MsgPool::new(seed.message_pool, seed.payloads)?,
            },
            table: crate::kernel::threads::ThreadTable {
                slot_base: seed.slot_base,
                slots: vec_from_fn(cap, |_| None, "the thread slots (Config::max_threads)")?,
                // Every slot's generations start at the runtime's floor (`crate::id_space`).
                generations: vec_filled(cap, id_check.generation(0), "the thread slots (Config::max_threads)")?,
                free: {
                    let mut free = vec_with_capacity(cap, "the thread slots (Config::max_threads)")?;
                    free.extend((pre as u32..cap as u32).rev());
                    free
                },
                live: 0,
                summaries: Vec::with_capacity(pre.max(16)),
                stacks,
                default_stack: seed.default_stack,
                guards: vec_filled(
                    cap,
                    crate::os::overflow::StackGuard::NONE,
                    "the stack guards (Config::max_threads)",
                )?,
                abandoned: Vec::new(),
                os_backed_grace: seed.os_backed_grace,
                left_stopped: Vec::new(),
            },
        };
        k.global = k.cpus.first().is_some_and(|cpu| cpu.scheduler.global());
        for (id, spec, body) in seed.threads {
            k.install(id, spec, body)?;
        }
        for op in seed.setup {
            // A policy asked while an object is created (a lock's) is named as the run would
            // name it; the kernel is dropped unused.
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| k.control(op))) {
                Ok(done) => done?,
                Err(payload) => {
                    return Err(Error::Panicked {
                        source: k.culprit_source(),
                        what: format!("{}, while the kernel was built", k.culprit_name()),
                        message: crate::kernel::panic_message(&*payload),
                    })
                }
            };
        }
        for (spec, handler) in seed.timers {
            let idx = k.events.len() as u32;
            k.events.push(TimingEvent { spec, handler: Some(handler), cancelled: false });
            k.timers.push(spec.first, TimerKind::Event(idx));
        }
        Ok(k)
    }

    // ----- thread creation and end ---------------------------------------------------------

    /// Put thread `id` in its slot. Its queues are allocated first: when the allocator
    /// refuses them, nothing has changed.
    pub(in crate::kernel) fn install(&mut self, id: ThreadId, mut spec: ThreadSpec, body: Body) -> Result<(), Error> {
        let mbox = crate::kernel::messaging::messages::Mailbox::new(
            spec.mailbox,
            spec.save_queues,
            spec.message_queue.take(),
        )?;
        let release_queue = crate::sizes::deque_with_capacity(
            match spec.timing {
                Timing::Periodic { .. } => 0,
                _ => spec.release_queue,
            },
            "the release queue (ThreadSpec::release_queue)",
        )?;
        let i = (id.slot() - self.table.slot_base) as usize;
        self.table.generations[i] = id.generation();
        self.ids.note_generation(id.generation().wrapping_sub(self.id_check.generation(0)));
        let summary = self.table.summaries.len();
        self.table.summaries.push(ThreadSummary {
            id,
            name: spec.name.clone(),
            cpu: spec.cpu,
            timing: spec.timing,
            priority: spec.priority,
            wcet: spec.wcet,
            deadline: spec.relative_deadline(),
            criticality: spec.criticality,
            outcome: None,
            stats: ThreadStats::default(),
            distributions: crate::plain::ThreadDistributions::empty(),
        });
        let rel_deadline = spec.relative_deadline();
        let period = spec.period();
        let events = self.events_of(self.cpu_local(spec.cpu).expect("placement checked before install"));
        let mail = crate::kernel::messaging::messages::Exchange::default();
        mail.events.set(events.bits() | if spec.tame_prio_inv { crate::kernel::cpu::sched_meta::TAME_BIT } else { 0 });
        if spec.os_backed {
            mail.leave.set(crate::kernel::messaging::messages::LEAVE_RECHECK);
        }
        let tcb = Tcb {
            id,
            summary,
            cpu: spec.cpu,
            timing: spec.timing,
            wcet: spec.wcet,
            rel_deadline,
            first_deadline: spec.first_deadline,
            abort_after: spec.abort_after,
            importance: spec.importance,
            miss_policy: spec.miss_policy,
            on_miss: spec.on_miss,
            max_jobs: spec.max_jobs,
            stack_size: spec.stack_size.unwrap_or(self.table.default_stack),
            state: State::Dormant,
            body: Some(body),
            coroutine: None,
            os_backed: spec.os_backed,
            worker: None,
            answer: Answer::GO,
            interrupt: None,
            abort_pending: false,
            kill_pending: false,
            set: None,
            demoted: false,
            cpu_timer: None,
            held: Vec::with_capacity(4),
            fast_held: std::rc::Rc::new(std::cell::Cell::new(0)),
            mail: std::rc::Rc::new(mail),
            mbox,
            meta: crate::kernel::cpu::sched_meta::MetaTcb::new(events),
            quiet_reply: false,
            paid_block_cost: false,
            pending_read: false,
            pending_unlock: None,
            restart_section: None,
            wants: None,
            wants_restartable: false,
            exiting: false,
            global: None,
            spin_since: None,
            preemptible: true,
            preempt_deferred: false,
            slice_deferred: false,
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
            release_queue,
            release_queue_cap: spec.release_queue,
            deferred: 0,
            deadline_next: 0,
            abort_next: 0,
            at_boundary: true,
            stale: false,
            unwind_sent: false,
            joiners: 0,
            stats: ThreadStats::default(),
            dist: crate::plain::ThreadDistributions::default(),
            job_ran: false,
            set_record: u32::MAX,
            has_run: false,
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
        self.table.slots[i] = Some(tcb);
        self.table.live += 1;
        let c = self.cpu_local(spec.cpu).expect("placement checked before install");
        self.trace(c, TraceKind::Spawn, id, 0, spec.cpu as u64);
        // The policy's own properties of the thread, before it first asks for its urgency.
        if let Some(properties) = spec.sched_properties.take() {
            self.sched_call(c, id, |s, info| s.on_properties(info, &*properties));
        }
        self.refresh_urgency(id);
        match spec.timing {
            Timing::OneShot => self.release_job(id, self.now, false),
            Timing::Periodic { phase, .. } => {
                let h = self.timers.push(self.now + phase, TimerKind::Release(id));
                self.tcb(id).job_timers[0] = h;
            }
            Timing::Sporadic { .. } => {}
        }
        Ok(())
    }

    pub(in crate::kernel) fn spawn_thread(
        &mut self,
        spec: ThreadSpec,
        body: Body,
        from_cpu: usize,
    ) -> Result<ThreadId, Error> {
        spec.validate()?;
        if self.cpu_local(spec.cpu).is_none() {
            return Err(match C::MODE {
                ClockMode::Real if spec.cpu < self.total_cpus => Error::CrossCpu { from: from_cpu, to: spec.cpu },
                _ => Error::NoSuchCpu { cpu: spec.cpu, cpus: self.total_cpus },
            });
        }
        let Some(i) = self.table.free.pop() else {
            return Err(Error::TooManyThreads { max: self.table.slots.len() / self.cpus.len() });
        };
        let generation = self.table.generations[i as usize].wrapping_add(1);
        let id = ThreadId::new(self.table.slot_base + i, generation);
        if let Err(e) = self.install(id, spec, body) {
            self.table.free.push(i);
            return Err(e);
        }
        self.count_spawn();
        Ok(id)
    }
}
