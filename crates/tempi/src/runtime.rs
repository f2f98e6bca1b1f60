//! The public entry point: configure a runtime, spawn threads and timing events, run it, read
//! what happened.
//!
//! Owns [`Runtime`], [`Config`], the run result ([`RunOutcome`], [`ThreadSummary`],
//! [`ThreadStats`]) and timing-event registration. In virtual time one kernel simulates every
//! CPU on the calling OS thread; in real time each CPU gets a dispatcher OS thread running its
//! own kernel, and threads stay on the CPU they were placed on. The run itself, and the
//! assembly of its result, are `runtime_run.rs`'s.

use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, ClockMode, RealClock, VirtualClock};
use crate::error::{Error, GlobalRefusal};
use crate::id_space::IdSpace;
use crate::kernel::{Body, ControlOp, EventHandler, KernelSeed, SetOp};
use crate::os::busy_cell::KernelId;
use crate::plain::SetId;
use crate::plain::ThreadId;
use crate::policy::sched::Scheduler;
use crate::sets::Budget;
use crate::sync::{LockSpec, Mutex};
use crate::thread::ThreadSpec;

pub use crate::config::{Config, Costs, ProgressHook, TimerSpec};
pub use crate::stats::{CrossCpuStats, MessageStats, RunOutcome, ThreadStats, ThreadSummary};

/// A tempi runtime on clock `C`: [`VirtualClock`] for deterministic simulation,
/// [`RealClock`] for real time. Application code written against `Runtime<C>` and
/// [`crate::Ctx`] runs unchanged on both.
///
/// ```
/// use std::time::Duration;
/// use tempi::clock::Clock;
/// use tempi::{Runtime, ThreadSpec, Time};
///
/// fn app<C: Clock>(rt: &mut Runtime<C>) {
///     let ms = Duration::from_millis;
///     rt.spawn(ThreadSpec::new("ctl").periodic(ms(4)).priority(2), move |cx| cx.work(ms(1))).unwrap();
///     rt.spawn(ThreadSpec::new("log").periodic(ms(8)).priority(1), move |cx| cx.work(ms(2))).unwrap();
/// }
///
/// let mut sim = Runtime::simulated(1);
/// app(&mut sim);
/// let out = sim.run_until(Time::from_millis(16)).unwrap();
/// assert_eq!(out.total_misses(), 0);
/// ```
pub struct Runtime<C: Clock> {
    /// This runtime's identity, unique in the process: its objects carry it, and refuse to
    /// be used by threads of another runtime.
    id: u64,
    /// Its hold on a thread-id tag: the ids it makes are its tag's.
    ids: Arc<IdSpace>,
    /// Its first kernel's identity as an executor; the others follow it
    /// ([`crate::os::busy_cell::KernelId`]).
    pub(crate) executors: KernelId,
    pub(crate) config: Config,
    pub(crate) seeds: Vec<KernelSeed>,
    /// Threads added to sets before the run, to refuse a second set at once.
    memberships: Vec<(ThreadId, SetId)>,
    /// The threads spawned before the run, in the order of `spawn`: the outcome lists them in
    /// this order on both clocks.
    pub(crate) spawned: Vec<ThreadId>,
    /// Global (MSRP) locks created so far.
    globals: u32,
    /// Warnings known before the run (a service built on the runtime that the operating
    /// system refused something), reported with the run's own.
    pub(crate) notes: Vec<String>,
    _clock: PhantomData<C>,
}

impl Runtime<VirtualClock> {
    /// A virtual-time runtime with `cpus` CPUs and default settings.
    ///
    /// # Panics
    /// If `cpus` is zero.
    ///
    /// ```
    /// let rt = tempi::Runtime::simulated(2);
    /// assert_eq!(rt.config().cpus(), 2);
    /// ```
    pub fn simulated(cpus: usize) -> Runtime<VirtualClock> {
        Runtime::new(Config::new(cpus)).expect("a simulated runtime needs at least one CPU")
    }
}

impl Runtime<RealClock> {
    /// A real-time runtime with `cpus` CPUs and default settings.
    ///
    /// # Panics
    /// If `cpus` is zero.
    ///
    /// ```
    /// let rt = tempi::Runtime::real_time(1);
    /// assert_eq!(rt.config().cpus(), 1);
    /// ```
    pub fn real_time(cpus: usize) -> Runtime<RealClock> {
        Runtime::new(Config::new(cpus)).expect("a real-time runtime needs at least one CPU")
    }
}

impl<C: Clock> Runtime<C> {
    /// A runtime with the given configuration.
    ///
    /// ```
    /// use tempi::{clock::VirtualClock, Config, Runtime};
    /// assert!(Runtime::<VirtualClock>::new(Config::new(0)).is_err());
    /// ```
    pub fn new(config: Config) -> Result<Runtime<C>, Error> {
        config.check()?;
        // Virtual time: one kernel simulates every CPU. Real time: one kernel per CPU.
        let kernels = match C::MODE {
            ClockMode::Virtual => 1,
            ClockMode::Real => config.cpus,
        };
        // Handed out in sequence and never reused: 64 bits do not wrap in a process's life.
        static NEXT_RUNTIME: AtomicU64 = AtomicU64::new(1);
        let id = NEXT_RUNTIME.fetch_add(1, Ordering::Relaxed);
        let ids = IdSpace::lease()?;
        let executors = KernelId::reserve(kernels);
        let seeds = (0..kernels)
            .map(|k| KernelSeed::new(id, &ids, executors, k, kernels, &config, crate::message::HANDLER_HOOKS))
            .collect();
        Ok(Runtime {
            id,
            ids,
            executors,
            config,
            seeds,
            memberships: Vec::new(),
            spawned: Vec::new(),
            globals: 0,
            notes: Vec::new(),
            _clock: PhantomData,
        })
    }

    /// Report `warning` among the run's warnings ([`RunOutcome::warnings`]), before those of
    /// the dispatchers: what something built on the runtime could not set up as asked (a
    /// planner thread left unpinned, say) and the run goes on without.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.warn("the planner's CPU is not pinned");
    /// assert_eq!(rt.run().unwrap().warnings, ["the planner's CPU is not pinned"]);
    /// ```
    pub fn warn(&mut self, warning: impl Into<String>) {
        self.notes.push(warning.into());
    }

    /// This runtime's identity, unique in the process: objects built on the runtime carry it
    /// to refuse threads, requests and tickets of other runtimes.
    ///
    /// ```
    /// let rt = tempi::Runtime::simulated(1);
    /// assert_eq!(rt.id(), rt.id());
    /// ```
    pub fn id(&self) -> crate::RuntimeId {
        crate::RuntimeId(self.id)
    }

    /// The configuration.
    ///
    /// ```
    /// assert_eq!(tempi::Runtime::simulated(1).config().cpus(), 1);
    /// ```
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Replace the scheduling policy; `factory` is called once per CPU. Under a global policy
    /// ([`Scheduler::global`], virtual time only) the first CPU's instance serves every CPU.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// ```
    pub fn set_scheduler(&mut self, factory: impl Fn() -> Box<dyn Scheduler> + Send + Sync + 'static) {
        self.config.scheduler = Arc::new(factory);
        for s in &mut self.seeds {
            s.scheduler = self.config.scheduler.clone();
        }
    }

    /// Stack a scheduler on the one set so far (FREE JAZZ's `register_scheduler`, which
    /// returns the previous handler so the new one can forward to it): on every CPU, `wrap`
    /// is given the scheduler built so far and returns the one the CPU uses, usually a
    /// [`crate::policy::sched::StackedScheduler`] that keeps the previous one and forwards to
    /// it every decision it does not change. Calls stack: the last one is on top. The kernel
    /// only ever calls the top of the chain. Call it before [`Runtime::run`], after
    /// [`Runtime::set_scheduler`] (which replaces the whole chain); during the run a thread
    /// stacks on its own CPU's scheduler with [`crate::Ctx::stack_scheduler`].
    ///
    /// ```
    /// use tempi::policy::sched::{FixedPriority, WaitInheritance};
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.set_scheduler(|| Box::new(FixedPriority::new()));
    /// rt.stack_scheduler(|prev| Box::new(WaitInheritance::new(prev)));
    /// rt.spawn(tempi::ThreadSpec::new("t"), |_| {}).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn stack_scheduler(&mut self, wrap: impl Fn(Box<dyn Scheduler>) -> Box<dyn Scheduler> + Send + Sync + 'static) {
        let below = self.config.scheduler.clone();
        self.set_scheduler(move || wrap(below()));
    }

    /// Refuse an id made by another runtime.
    fn check_thread(&self, thread: ThreadId) -> Result<(), Error> {
        if !self.ids.check().owns(thread) {
            return Err(Error::ForeignThread(thread));
        }
        Ok(())
    }

    /// Refuse a set id made by another runtime.
    fn check_set(&self, set: SetId) -> Result<(), Error> {
        if set.runtime != self.id {
            return Err(Error::ForeignSet(set));
        }
        Ok(())
    }

    fn seed_for(&mut self, cpu: usize) -> Result<&mut KernelSeed, Error> {
        if cpu >= self.config.cpus {
            return Err(Error::NoSuchCpu { cpu, cpus: self.config.cpus });
        }
        let k = if self.seeds.len() == 1 { 0 } else { cpu };
        Ok(&mut self.seeds[k])
    }

    /// Create a thread before the run starts. `body` is called once per job: once for a
    /// one-shot thread, at every release for periodic and sporadic ones.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let id = rt.spawn(tempi::ThreadSpec::new("hello"), |cx| {
    ///     cx.work(Duration::from_micros(10));
    /// }).unwrap();
    /// # let _ = id;
    /// ```
    pub fn spawn(
        &mut self,
        spec: ThreadSpec,
        body: impl FnMut(&crate::Ctx<'_>) + Send + 'static,
    ) -> Result<ThreadId, Error> {
        spec.validate()?;
        if C::MODE == ClockMode::Real {
            // A factory that panics is reported when the run starts, as without this check.
            let global = catch_unwind(AssertUnwindSafe(|| {
                let s = (self.config.scheduler)();
                s.global().then(|| s.name().to_string())
            }));
            if let Ok(Some(scheduler)) = global {
                return Err(Error::Global { scheduler, reason: GlobalRefusal::RealTime });
            }
        }
        let body: Body = Box::new(body);
        let id = self.seed_for(spec.cpu)?.add_thread(spec, body)?;
        self.spawned.push(id);
        Ok(id)
    }

    /// Create a *process*: a thread whose body `f` is called once per message of its new
    /// queue (see [`crate::message::process`]). It ends when `f` returns
    /// [`crate::message::Flow::Stop`].
    ///
    /// ```
    /// use tempi::message::{Flow, Message};
    /// use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// let echo = rt.spawn_process(ThreadSpec::new("echo").priority(1), |cx, m| {
    ///     cx.reply(m).unwrap();
    ///     if m.id == 0 { Flow::Stop } else { Flow::Continue }
    /// }).unwrap();
    /// rt.spawn(ThreadSpec::new("client"), move |cx| {
    ///     assert_eq!(cx.call(echo, Message::new(5, 6, 7)).unwrap().value, 6);
    ///     assert_eq!(cx.call(echo, Message::new(0, 0, 0)).unwrap().id, 0);
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn spawn_process(
        &mut self,
        spec: ThreadSpec,
        f: impl FnMut(&crate::Ctx<'_>, crate::plain::Message) -> crate::plain::Flow + Send + 'static,
    ) -> Result<ThreadId, Error> {
        self.spawn(spec, crate::message::process(f))
    }

    /// Register a timing event: `handler` runs inside the runtime, on no thread of its own,
    /// at the times `spec` gives.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::{Runtime, ThreadSpec, TimerSpec, Time};
    /// let mut rt = Runtime::simulated(1);
    /// let s = rt.spawn(ThreadSpec::new("on-demand").sporadic(Duration::ZERO), |cx| cx.work(Duration::from_millis(1))).unwrap();
    /// rt.add_timer(TimerSpec::every(Duration::from_millis(5)), move |ev| { ev.release(s).unwrap(); }).unwrap();
    /// let out = rt.run_until(Time::from_millis(20)).unwrap();
    /// assert_eq!(out.thread(s).unwrap().stats.completed, 3);
    /// ```
    pub fn add_timer(
        &mut self,
        spec: TimerSpec,
        handler: impl FnMut(&mut crate::EventCtx<'_>) + Send + 'static,
    ) -> Result<(), Error> {
        if spec.period == Some(Duration::ZERO) {
            return Err(Error::InvalidConfig("a periodic timing event needs a positive period".into()));
        }
        let handler: EventHandler = Box::new(handler);
        self.seed_for(spec.cpu)?.add_timer(spec, handler)
    }

    /// A pool of `capacity` values of type `T` for messages to carry
    /// ([`crate::message::PayloadPool`]), sized now: attaching a payload never allocates, and
    /// a full pool is [`crate::message::MsgError::PayloadPoolFull`] to the sender. Every
    /// kernel of the run knows the pool, so the payload of a message the runtime does not
    /// deliver (refused, read past without being taken, left in a queue or timed when its
    /// recipient or the run ends) goes back to it.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] above [`crate::message::MAX_PAYLOAD_SLOTS`] slots (2^24),
    /// checked before anything is allocated, or when the allocator refuses the slots (e.g.
    /// large values under a memory limit): never an abort.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let pool = rt.payload_pool::<Vec<u8>>(8).unwrap();
    /// assert_eq!(pool.available(), 8);
    /// assert!(rt.payload_pool::<u8>(usize::MAX).is_err());
    /// assert!(rt.payload_pool::<[u8; 1 << 30]>(1 << 24).is_err()); // 16 PiB of values
    /// ```
    pub fn payload_pool<T: Send + 'static>(
        &mut self,
        capacity: usize,
    ) -> Result<crate::message::PayloadPool<T>, Error> {
        if capacity > crate::message::MAX_PAYLOAD_SLOTS {
            let why = crate::sizes::too_large("payload_pool capacity", capacity, crate::message::MAX_PAYLOAD_SLOTS);
            return Err(Error::InvalidConfig(format!("{why} (message::MAX_PAYLOAD_SLOTS)")));
        }
        let (pool, store) = crate::message::PayloadPool::new(capacity as u32)?;
        for seed in &mut self.seeds {
            seed.add_payload_store(store.clone());
        }
        Ok(pool)
    }

    /// Create a mutex owning `value` before the run (see [`crate::sync`]). Share it between
    /// threads with an `Arc`. The mutex belongs to this runtime: threads of another runtime
    /// get [`crate::sync::LockError::ForeignRuntime`].
    ///
    /// # Errors
    /// The spec is checked here, not when the run starts: an unknown protocol, a protocol
    /// that needs a ceiling without one (declared or computed from users), a user that is
    /// not a thread of this runtime on the lock's kernel, a CPU the runtime does not have,
    /// or more locks than [`Config::max_locks`].
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let m = rt.create_mutex(0u64, tempi::sync::LockSpec::new("count").protocol("pcp").ceiling(3)).unwrap();
    /// # let _ = m;
    /// ```
    pub fn create_mutex<T>(&mut self, value: T, spec: LockSpec) -> Result<Mutex<T>, Error> {
        spec.check()?;
        for &u in &spec.users {
            self.check_thread(u)?;
        }
        if spec.policy.global() {
            // A global lock (MSRP): shared by every CPU, its state in shared memory.
            if self.globals as usize >= self.config.max_locks {
                return Err(Error::InvalidConfig(format!("more than {} global locks", self.config.max_locks)));
            }
            let traced = self.config.trace_capacity > 0;
            let lock = Arc::new(crate::objects::GlobalLock::new(spec.name, self.globals, traced));
            self.globals += 1;
            for seed in &mut self.seeds {
                seed.add_global(lock.clone());
            }
            return Ok(Mutex::new_global(self.id, lock, value));
        }
        let cpu = spec.cpu;
        let runtime = self.id;
        let seed = self.seed_for(cpu)?;
        if let Some(&u) = spec.users.iter().find(|&&u| !seed.owns_thread(u)) {
            return Err(Error::UnknownThread(u));
        }
        let word = spec.word.clone();
        let id = seed.create_lock(spec)?;
        Ok(Mutex::new(id, cpu, runtime, word, value))
    }

    /// Create a condition variable for the mutexes of `cpu` before the run.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let cv = rt.create_condvar(0).unwrap();
    /// # let _ = cv;
    /// ```
    pub fn create_condvar(&mut self, cpu: usize) -> Result<crate::sync::Condvar, Error> {
        let id = self.seed_for(cpu)?.create_cond(cpu)?;
        Ok(crate::sync::Condvar::new(id, cpu, self.id))
    }

    /// Create a counting semaphore before the run.
    ///
    /// # Errors
    /// Checked here: an unknown queue policy, a CPU the runtime does not have, or more
    /// semaphores than [`Config::max_locks`].
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let s = rt.create_semaphore(tempi::sync::SemSpec::new("pool", 3)).unwrap();
    /// # let _ = s;
    /// ```
    pub fn create_semaphore(&mut self, spec: crate::sync::SemSpec) -> Result<crate::sync::Semaphore, Error> {
        spec.check()?;
        let cpu = spec.cpu;
        let id = self.seed_for(cpu)?.create_sem(spec)?;
        Ok(crate::sync::Semaphore::new(id, cpu, self.id))
    }

    /// Create an empty thread set whose members will run on `cpu`.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let s = rt.create_set("controllers", 0).unwrap();
    /// # let _ = s;
    /// ```
    pub fn create_set(&mut self, name: &str, cpu: usize) -> Result<SetId, Error> {
        self.seed_for(cpu)?.create_set(name.to_string())
    }

    fn seed_of_set(&mut self, set: SetId) -> Result<&mut KernelSeed, Error> {
        self.check_set(set)?;
        self.seeds.iter_mut().find(|s| s.owns_set(set)).ok_or(Error::UnknownSet(set))
    }

    /// Add a thread to a set before the run. A thread belongs to at most one set; in real time
    /// the thread must be on the set's CPU.
    ///
    /// # Errors
    /// Checked here: [`Error::AlreadyInSet`] for a thread already added to a set,
    /// [`Error::ForeignThread`] / [`Error::ForeignSet`] for ids of another runtime,
    /// [`Error::UnknownThread`] for a thread not on the set's kernel.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let t = rt.spawn(tempi::ThreadSpec::new("t").periodic(Duration::from_millis(5)), |_| {}).unwrap();
    /// let s = rt.create_set("s", 0).unwrap();
    /// rt.add_to_set(s, t).unwrap();
    /// // An ended thread leaves its set; this one is still alive when the run stops.
    /// assert_eq!(rt.run_until(tempi::Time::from_millis(20)).unwrap().sets[0].members, vec![t]);
    /// ```
    pub fn add_to_set(&mut self, set: SetId, thread: ThreadId) -> Result<(), Error> {
        self.check_thread(thread)?;
        if let Some(&(_, old)) = self.memberships.iter().find(|(t, _)| *t == thread) {
            return Err(Error::AlreadyInSet { thread, set: old });
        }
        let seed = self.seed_of_set(set)?;
        if !seed.owns_thread(thread) {
            return Err(Error::UnknownThread(thread));
        }
        seed.push_setup(ControlOp::Set(SetOp::AddToSet(set, thread)));
        self.memberships.push((thread, set));
        Ok(())
    }

    /// Give a set a budget before the run.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let s = rt.create_set("s", 0).unwrap();
    /// rt.set_budget(s, tempi::Budget::deferrable_server(Duration::from_millis(1), Duration::from_millis(5))).unwrap();
    /// ```
    pub fn set_budget(&mut self, set: SetId, budget: Budget) -> Result<(), Error> {
        budget.validate()?;
        self.seed_of_set(set)?.push_setup(ControlOp::SetBudget(set, budget));
        Ok(())
    }

    /// Arm an execution-time timer on a set's group clock before the run.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let s = rt.create_set("s", 0).unwrap();
    /// rt.arm_set_timer(s, Duration::from_millis(3), |ev| println!("at {}", ev.now())).unwrap();
    /// ```
    pub fn arm_set_timer(
        &mut self,
        set: SetId,
        at: Duration,
        handler: impl FnMut(&mut crate::EventCtx<'_>) + Send + 'static,
    ) -> Result<(), Error> {
        self.seed_of_set(set)?.push_setup(ControlOp::SetTimer(set, at, Box::new(handler)));
        Ok(())
    }

    /// Arm an execution-time timer on a thread's clock before the run.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let t = rt.spawn(tempi::ThreadSpec::new("t"), |cx| cx.work(Duration::from_millis(5))).unwrap();
    /// rt.arm_thread_timer(t, Duration::from_millis(2), |ev| assert_eq!(ev.now(), tempi::Time::from_millis(2))).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn arm_thread_timer(
        &mut self,
        thread: ThreadId,
        at: Duration,
        handler: impl FnMut(&mut crate::EventCtx<'_>) + Send + 'static,
    ) -> Result<(), Error> {
        self.check_thread(thread)?;
        let seed = self.seeds.iter_mut().find(|s| s.owns_thread(thread)).ok_or(Error::UnknownThread(thread))?;
        seed.push_setup(ControlOp::ThreadTimer(thread, at, Box::new(handler)));
        Ok(())
    }
}
