//! Runtime-wide configuration: the settings fixed before a run ([`Config`]), the costs the
//! virtual clock charges ([`Costs`]) and when timing events fire ([`TimerSpec`]).
//!
//! Plain data below the kernel: the kernel and the OS layer read it, the runtime builds it.
//! This module must not reach up into `kernel`, `sync` or `runtime`.

use std::sync::Arc;
use std::time::Duration;

use crate::error::Error;
use crate::plain::ThreadId;
use crate::policy::sched::{FixedPriority, Scheduler, SchedulerFactory};
use crate::sets::Accounting;
use crate::time::Time;

/// Runtime-wide settings, fixed before the run starts. Every pool is sized from these.
///
/// # Limits
///
/// Every pool is allocated when the run starts and never grows, so each has a fixed limit;
/// creating one object more than its limit allows is refused with an error at creation
/// (before the run, or from a thread during it), never a panic or a reallocation:
///
/// | what | per | default | setting | error |
/// |---|---|---|---|---|
/// | live threads | CPU | 256 | [`Config::max_threads`] | [`Error::TooManyThreads`] |
/// | timing events | CPU | 256 | [`Config::max_timers`] | [`Error::InvalidConfig`] |
/// | thread sets | CPU | 64 | [`Config::max_sets`] | [`Error::TooManySets`] |
/// | mutexes | CPU | 256 | [`Config::max_locks`] | [`Error::InvalidConfig`] |
/// | condition variables | CPU | 256 | [`Config::max_locks`] | [`Error::InvalidConfig`] |
/// | semaphores | CPU | 256 | [`Config::max_locks`] | [`Error::InvalidConfig`] |
/// | requests from other CPUs (real time) | CPU | 1024 | [`Config::cross_cpu_queue`] | [`Error::QueueFull`] |
/// | waiters of other CPUs on this CPU's condition variables and semaphores (real time) | CPU | 256 | [`Config::max_threads`] | [`crate::sync::LockError::ProxiesFull`] |
/// | messages | CPU | 1024 | [`Config::message_pool`] | [`crate::message::MsgError::PoolFull`] (traced) |
/// | trace records | CPU | 1 Mi | [`Config::trace_capacity`] | counted as dropped |
///
/// Each setting has an upper limit of its own, checked by [`crate::Runtime::new`] before
/// anything is allocated ([`Error::InvalidConfig`] names the setting, its value and the
/// limit); a pool the allocator refuses when the run starts is the same error, never an
/// abort:
///
/// | setting | at most |
/// |---|---|
/// | `cpus × max_threads` | 1 048 576 (2^20) |
/// | `cpus × max_sets` | 1 048 576 (2^20) |
/// | `cpus × max_timers` | [`Config::MAX_TIMERS`], 1 048 576 |
/// | `cpus × max_locks` | [`Config::MAX_LOCKS`], 1 048 576 |
/// | `cpus × message_pool` | [`Config::MAX_MESSAGES`], 4 194 304 |
/// | `cross_cpu_queue` | [`Config::MAX_CROSS_CPU_QUEUE`], 1 048 576 per CPU |
/// | `trace_capacity` | [`Config::MAX_TRACE_CAPACITY`], 16 777 216 per CPU |
///
/// In virtual time one kernel simulates every CPU, so a per-CPU limit is pooled: a runtime
/// of `n` CPUs holds `n` times the limit, wherever the objects are placed. A runtime has at
/// most 1 048 576 thread slots and 1 048 576 set slots in all (`cpus × max_threads` and
/// `cpus × max_sets`): ids carry the runtime's tag above their index (see
/// [`crate::ThreadId`]); [`crate::Runtime::new`] refuses more.
///
/// The end of a real-time run waits up to [`Config::os_backed_grace`] (default 1 s) for
/// OS-backed threads computing in their own code to reach a runtime call, where they are
/// unwound; those that do not are left stopped and named in
/// [`crate::RunOutcome::os_backed_left_stopped`].
///
/// ```
/// let cfg = tempi::Config::new(2).max_threads(64).trace_capacity(10_000);
/// assert_eq!(cfg.cpus(), 2);
/// ```
#[derive(Clone)]
pub struct Config {
    pub(crate) cpus: usize,
    pub(crate) max_threads: usize,
    pub(crate) max_timers: usize,
    pub(crate) trace_capacity: usize,
    pub(crate) default_stack: usize,
    pub(crate) scheduler: SchedulerFactory,
    pub(crate) pin: bool,
    pub(crate) fifo_priority: Option<i32>,
    pub(crate) lock_memory: bool,
    pub(crate) max_sets: usize,
    pub(crate) accounting: Accounting,
    pub(crate) max_locks: usize,
    pub(crate) costs: Costs,
    pub(crate) verify: bool,
    pub(crate) direct_hand_off: bool,
    pub(crate) direct_switch: bool,
    pub(crate) progress: Option<ProgressHook>,
    pub(crate) cross_cpu_queue: usize,
    pub(crate) message_pool: usize,
    pub(crate) os_backed_grace: Duration,
    pub(crate) job_overhead: Duration,
}

/// Called now and then during a run with the runtime's current time (see [`Config::progress`]).
pub type ProgressHook = Arc<dyn Fn(Time) + Send + Sync>;

/// Simulated overheads, in the cost model of Real-Time Mach's evaluation: CPU time the
/// runtime charges to a thread for its own operations, on top of its `work`. All zero by
/// default; set them to reproduce a measured system in virtual time. (In real time they are
/// spun like `work`, which is rarely what you want.)
///
/// ```
/// use std::time::Duration;
/// let us = Duration::from_micros;
/// let costs = tempi::Costs { context_switch: us(50), lock_acquired: us(120), ..Default::default() };
/// let _ = tempi::Config::new(1).costs(costs);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Costs {
    /// Charged to a thread when it is dispatched after another thread ran on its CPU.
    pub context_switch: Duration,
    /// Charged to a thread when it gets a lock.
    pub lock_acquired: Duration,
    /// Charged to a thread when it finds a lock taken, before it waits.
    pub lock_not_acquired: Duration,
    /// Charged to a thread when it releases a lock.
    pub unlock: Duration,
    /// Charged to a thread whose restartable critical section is aborted, for its recovery.
    pub abort: Duration,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("cpus", &self.cpus)
            .field("max_threads", &self.max_threads)
            .field("cross_cpu_queue", &self.cross_cpu_queue)
            .field("trace_capacity", &self.trace_capacity)
            .field("default_stack", &self.default_stack)
            .field("scheduler", &(self.scheduler)().name().to_string())
            .finish_non_exhaustive()
    }
}

impl Config {
    /// The most timing events a runtime holds: `cpus × max_timers` (2^20).
    ///
    /// ```
    /// use tempi::{clock::VirtualClock, Config, Runtime};
    /// assert!(Runtime::<VirtualClock>::new(Config::new(2).max_timers(Config::MAX_TIMERS / 2)).is_ok());
    /// assert!(Runtime::<VirtualClock>::new(Config::new(2).max_timers(Config::MAX_TIMERS / 2 + 1)).is_err());
    /// ```
    pub const MAX_TIMERS: usize = 1 << 20;
    /// The most locks a runtime holds, and separately the most condition variables and the
    /// most semaphores: `cpus × max_locks` (2^20).
    ///
    /// ```
    /// use tempi::{clock::VirtualClock, Config, Runtime};
    /// assert!(Runtime::<VirtualClock>::new(Config::new(1).max_locks(Config::MAX_LOCKS + 1)).is_err());
    /// ```
    pub const MAX_LOCKS: usize = 1 << 20;
    /// The most messages a runtime's pools hold: `cpus × message_pool` (2^22).
    ///
    /// ```
    /// use tempi::{clock::VirtualClock, Config, Runtime};
    /// assert!(Runtime::<VirtualClock>::new(Config::new(1).message_pool(Config::MAX_MESSAGES + 1)).is_err());
    /// ```
    pub const MAX_MESSAGES: usize = 1 << 22;
    /// The most requests from other CPUs one real-time CPU's queue holds (2^20).
    ///
    /// ```
    /// use tempi::{clock::VirtualClock, Config, Runtime};
    /// assert!(Runtime::<VirtualClock>::new(Config::new(1).cross_cpu_queue(Config::MAX_CROSS_CPU_QUEUE + 1)).is_err());
    /// ```
    pub const MAX_CROSS_CPU_QUEUE: usize = 1 << 20;
    /// The most trace records kept per CPU (2^24, 16 Mi, about 640 MiB per CPU).
    ///
    /// ```
    /// use tempi::{clock::VirtualClock, Config, Runtime};
    /// assert!(Runtime::<VirtualClock>::new(Config::new(1).trace_capacity(Config::MAX_TRACE_CAPACITY + 1)).is_err());
    /// ```
    pub const MAX_TRACE_CAPACITY: usize = 1 << 24;

    /// Defaults for `cpus` CPUs: fixed-priority scheduling, 256 threads and 256 timing events
    /// per CPU, 1 Mi trace records per CPU, 256 KiB stacks, real-time dispatchers pinned, no
    /// `SCHED_FIFO`, no memory locking.
    ///
    /// ```
    /// assert_eq!(tempi::Config::new(1).cpus(), 1);
    /// ```
    pub fn new(cpus: usize) -> Config {
        Config {
            cpus,
            max_threads: 256,
            max_timers: 256,
            trace_capacity: 1 << 20,
            default_stack: 256 * 1024,
            scheduler: Arc::new(|| Box::new(FixedPriority::new())),
            pin: true,
            fifo_priority: None,
            lock_memory: false,
            max_sets: 64,
            accounting: Accounting::Group,
            max_locks: 256,
            costs: Costs::default(),
            verify: false,
            direct_hand_off: true,
            direct_switch: true,
            progress: None,
            cross_cpu_queue: 1024,
            message_pool: 1024,
            os_backed_grace: Duration::from_secs(1),
            job_overhead: Duration::ZERO,
        }
    }
    /// Number of CPUs.
    ///
    /// ```
    /// assert_eq!(tempi::Config::new(3).cpus(), 3);
    /// ```
    pub fn cpus(&self) -> usize {
        self.cpus
    }
    /// Requests each real-time CPU can hold from the other CPUs at once (releases, kills,
    /// priority changes, spawns, joins and their answers; 1024 by default, at least 1, at most
    /// [`Config::MAX_CROSS_CPU_QUEUE`]). A request that finds the queue full fails with
    /// [`Error::QueueFull`].
    ///
    /// ```
    /// let _ = tempi::Config::new(2).cross_cpu_queue(64);
    /// ```
    pub fn cross_cpu_queue(mut self, n: usize) -> Config {
        self.cross_cpu_queue = n;
        self
    }
    /// Thread slots per CPU (live threads at once).
    ///
    /// ```
    /// let _ = tempi::Config::new(1).max_threads(1000);
    /// ```
    pub fn max_threads(mut self, n: usize) -> Config {
        self.max_threads = n;
        self
    }
    /// Timing events per CPU; `cpus × max_timers` at most [`Config::MAX_TIMERS`].
    ///
    /// ```
    /// let _ = tempi::Config::new(1).max_timers(8);
    /// ```
    pub fn max_timers(mut self, n: usize) -> Config {
        self.max_timers = n;
        self
    }
    /// Trace records kept per CPU; 0 turns tracing off; at most
    /// [`Config::MAX_TRACE_CAPACITY`].
    ///
    /// ```
    /// let _ = tempi::Config::new(1).trace_capacity(0);
    /// ```
    pub fn trace_capacity(mut self, records: usize) -> Config {
        self.trace_capacity = records;
        self
    }
    /// Stack size of threads whose spec does not set one; at least
    /// [`MIN_STACK_SIZE`](crate::MIN_STACK_SIZE).
    ///
    /// ```
    /// let _ = tempi::Config::new(1).default_stack(128 * 1024);
    /// ```
    pub fn default_stack(mut self, bytes: usize) -> Config {
        self.default_stack = bytes;
        self
    }
    /// The scheduling policy: `factory` is called once per CPU.
    ///
    /// ```
    /// let _ = tempi::Config::new(1).scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// ```
    pub fn scheduler(mut self, factory: impl Fn() -> Box<dyn Scheduler> + Send + Sync + 'static) -> Config {
        self.scheduler = Arc::new(factory);
        self
    }
    /// The scheduling policy from a shared factory (e.g. from [`crate::policy::sched::by_name`]).
    ///
    /// ```
    /// let f = tempi::policy::sched::by_name("edf", None).unwrap();
    /// let _ = tempi::Config::new(1).scheduler_factory(f);
    /// ```
    pub fn scheduler_factory(mut self, factory: SchedulerFactory) -> Config {
        self.scheduler = factory;
        self
    }

    /// The factory of the scheduling policy this configuration makes each CPU's scheduler
    /// with (what [`Config::scheduler`] or [`Config::scheduler_factory`] set; fixed priority
    /// by default).
    ///
    /// ```
    /// let c = tempi::Config::new(1).scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// assert_eq!((c.chosen_scheduler())().name(), "edf");
    /// ```
    pub fn chosen_scheduler(&self) -> SchedulerFactory {
        self.scheduler.clone()
    }

    /// The `SCHED_FIFO` priority real-time dispatchers ask for (what
    /// [`Config::fifo_priority`] set; none by default).
    ///
    /// ```
    /// assert_eq!(tempi::Config::new(1).fifo_priority(Some(50)).chosen_fifo_priority(), Some(50));
    /// ```
    pub fn chosen_fifo_priority(&self) -> Option<i32> {
        self.fifo_priority
    }
    /// Real time: pin each dispatcher to its CPU (default on). Ignored in virtual time.
    ///
    /// ```
    /// let _ = tempi::Config::new(1).pin(false);
    /// ```
    pub fn pin(mut self, on: bool) -> Config {
        self.pin = on;
        self
    }
    /// Real time: run dispatchers under `SCHED_FIFO` at this priority (1-99) where the OS
    /// permits; a refusal is reported in [`crate::RunOutcome::warnings`], not fatal.
    ///
    /// ```
    /// let _ = tempi::Config::new(1).fifo_priority(Some(50));
    /// ```
    pub fn fifo_priority(mut self, priority: Option<i32>) -> Config {
        self.fifo_priority = priority;
        self
    }
    /// Real time: lock all memory (`mlockall`) before running; a refusal is a warning.
    ///
    /// ```
    /// let _ = tempi::Config::new(1).lock_memory(true);
    /// ```
    pub fn lock_memory(mut self, on: bool) -> Config {
        self.lock_memory = on;
        self
    }

    /// Thread sets per CPU (default 64).
    ///
    /// ```
    /// let _ = tempi::Config::new(1).max_sets(8);
    /// ```
    pub fn max_sets(mut self, n: usize) -> Config {
        self.max_sets = n;
        self
    }
    /// Simulated overheads of context switches and lock operations (default: none).
    ///
    /// ```
    /// let _ = tempi::Config::new(1).costs(tempi::Costs::default());
    /// ```
    pub fn costs(mut self, costs: Costs) -> Config {
        self.costs = costs;
        self
    }
    /// Check the kernel's invariants after every transition and panic on a violation (slow;
    /// meant for tests): every thread's effective urgency equals the larger of its base urgency
    /// and what the locks it holds lend it, recomputed from scratch; every lock the kernel
    /// gives an owner is in that owner's list of held locks, and the other way round.
    ///
    /// ```
    /// let _ = tempi::Config::new(1).verify(true);
    /// ```
    pub fn verify(mut self, on: bool) -> Config {
        self.verify = on;
        self
    }
    /// Whether the kernel's hand-off short paths are used (default: yes): an unlock with one
    /// more urgent waiter hands the lock over, a call that blocks its caller hands the CPU to
    /// the thread picked next, and a reply hands it to the caller it wakes, each in one step. A short path has exactly the effects, trace records and
    /// scheduler calls of the general one, only fewer steps; turning them off lets tests and
    /// measurements compare the two.
    ///
    /// ```
    /// let _ = tempi::Config::new(1).direct_hand_off(false);
    /// ```
    pub fn direct_hand_off(mut self, on: bool) -> Config {
        self.direct_hand_off = on;
        self
    }
    /// Whether a thread's yield or message request (call, reply, read) on a one-CPU kernel
    /// is handled on the thread's own stack, which then switches straight to the next thread
    /// when nothing else is due and no context-switch cost is configured (default: yes). The direct switch has exactly the effects, trace records and scheduler calls of
    /// the switch through the dispatcher, with one stack switch instead of two; turning it
    /// off lets tests and measurements compare the two.
    ///
    /// ```
    /// let _ = tempi::Config::new(1).direct_switch(false);
    /// ```
    pub fn direct_switch(mut self, on: bool) -> Config {
        self.direct_switch = on;
        self
    }
    /// A hook the kernel calls about every 65 536 turns of its loop with the current time, for
    /// progress reports on long runs. It runs inside the runtime: keep it short.
    ///
    /// ```
    /// let cfg = tempi::Config::new(1).progress(|t| eprintln!("at {t}"));
    /// # let _ = cfg;
    /// ```
    pub fn progress(mut self, hook: impl Fn(Time) + Send + Sync + 'static) -> Config {
        self.progress = Some(Arc::new(hook));
        self
    }
    /// Messages per CPU (default 1024): the pool every send and call takes a message from,
    /// sized before the run. A send that finds it empty fails with
    /// [`crate::message::MsgError::PoolFull`] and is traced. `cpus × message_pool` is at most
    /// [`Config::MAX_MESSAGES`].
    ///
    /// ```
    /// let _ = tempi::Config::new(1).message_pool(64);
    /// ```
    pub fn message_pool(mut self, n: usize) -> Config {
        self.message_pool = n;
        self
    }
    /// Locks per CPU (default 256), and as many condition variables and semaphores;
    /// `cpus × max_locks` at most [`Config::MAX_LOCKS`].
    ///
    /// ```
    /// let _ = tempi::Config::new(1).max_locks(16);
    /// ```
    pub fn max_locks(mut self, n: usize) -> Config {
        self.max_locks = n;
        self
    }
    /// Which execution-time clocks are kept (default: thread and group).
    ///
    /// ```
    /// let _ = tempi::Config::new(1).accounting(tempi::Accounting::Off);
    /// ```
    pub fn accounting(mut self, accounting: Accounting) -> Config {
        self.accounting = accounting;
        self
    }
    /// How long the end of a real-time run waits for its OS-backed threads
    /// ([`crate::ThreadSpec::os_backed`]) to be unwound (default 1 s). When the run ends (or
    /// one is killed, or its budget kills or suspends it) while such a thread computes in its
    /// own code, without runtime calls, it is let go on to its next runtime call, where the
    /// runtime's stop unwinds it and its destructors run. One that has not been unwound when
    /// the grace has passed is stopped again and left so until the process ends: its body is
    /// never dropped, its OS thread stays blocked and keeps whatever it holds, and the run's
    /// outcome names it ([`crate::RunOutcome::os_backed_left_stopped`]).
    ///
    /// The bound: `run` and `run_until` return at most this long (plus the OS's delay in
    /// waking the dispatcher) after the run's end, however many such threads there are
    /// (they are all let go at once). `Duration::ZERO` waits for none, not even a thread
    /// answered in a runtime call; a grace too long to add to the clock waits for them
    /// without a bound. Virtual time has no OS-backed threads of its own (the kind runs
    /// as a plain thread there) and ignores this setting.
    ///
    /// ```
    /// use std::time::Duration;
    /// let _ = tempi::Config::new(1).os_backed_grace(Duration::from_millis(50));
    /// ```
    pub fn os_backed_grace(mut self, grace: Duration) -> Config {
        self.os_backed_grace = grace;
        self
    }

    /// The per-job overhead of a real-time run measured on the reference machine (a 2-core
    /// AMD EPYC VM, dispatchers under `SCHED_FIFO`): the 99th percentile of the excess of a
    /// job whose body is `work(wcet)` over its WCET, from its first dispatch to its
    /// completion, that `tempi bench --only job` found, rounded up with room (see
    /// docs/PERFORMANCE.md). A starting point for
    /// [`Config::job_overhead`] on a similar machine; measure your own.
    ///
    /// ```
    /// let cfg = tempi::Config::new(1).job_overhead(tempi::Config::MEASURED_JOB_OVERHEAD);
    /// assert_eq!(cfg.job_overhead_reserved(), std::time::Duration::from_micros(50));
    /// ```
    pub const MEASURED_JOB_OVERHEAD: Duration = Duration::from_micros(50);

    /// Time reserved per job on top of its WCET for what a user-level runtime cannot keep off
    /// a thread's clock (zero by default): the thread's own code around its body on the
    /// runtime's side (the calls that start and end an admitted job), and in real time what
    /// the OS takes from the dispatcher while the thread's code runs (an interrupt, a page
    /// fault). The runtime's own time is not among it: it is charged to the CPU's kernel
    /// ([`crate::RunOutcome::kernel_time`]). Admission ([`crate::admission::Admission`])
    /// reserves and budgets WCET + overhead per job, the collator built by name reserves
    /// it per guaranteed job (see
    /// [`crate::policy::sched::SchedParams::job_overhead`]), and the Spring planner adds it to
    /// every task's WCET, so a task's window (and the budget that holds it there) is longer by
    /// the overhead ([`crate::spring::Spring`]). In virtual time the schedule
    /// shifts by exactly the overhead, since a job still takes only its `work`.
    /// [`Config::MEASURED_JOB_OVERHEAD`] is the figure measured here.
    ///
    /// ```
    /// use std::time::Duration;
    /// let cfg = tempi::Config::new(1).job_overhead(Duration::from_micros(20));
    /// assert_eq!(cfg.job_overhead_reserved(), Duration::from_micros(20));
    /// ```
    pub fn job_overhead(mut self, overhead: Duration) -> Config {
        self.job_overhead = overhead;
        self
    }

    /// The per-job overhead reserved ([`Config::job_overhead`]).
    ///
    /// ```
    /// assert!(tempi::Config::new(1).job_overhead_reserved().is_zero());
    /// ```
    pub fn job_overhead_reserved(&self) -> Duration {
        self.job_overhead
    }

    pub(crate) fn check(&self) -> Result<(), Error> {
        if self.cpus == 0 {
            return Err(Error::InvalidConfig("a runtime needs at least one CPU".into()));
        }
        if self.max_threads == 0 {
            return Err(Error::InvalidConfig("max_threads must be at least 1".into()));
        }
        if self.cross_cpu_queue == 0 {
            return Err(Error::InvalidConfig("cross_cpu_queue must be at least 1".into()));
        }
        // Ids keep the runtime's tag above their index.
        let slots = 1usize << ThreadId::TAG_SHIFT;
        for (what, per_cpu) in [("max_threads", self.max_threads), ("max_sets", self.max_sets)] {
            if self.cpus.checked_mul(per_cpu).is_none_or(|n| n > slots) {
                return Err(Error::InvalidConfig(format!(
                    "cpus × {what} = {} × {per_cpu} exceeds {slots}, the most a runtime can number",
                    self.cpus
                )));
            }
        }
        let pooled = [
            ("max_timers", self.max_timers, Config::MAX_TIMERS, "MAX_TIMERS"),
            ("max_locks", self.max_locks, Config::MAX_LOCKS, "MAX_LOCKS"),
            ("message_pool", self.message_pool, Config::MAX_MESSAGES, "MAX_MESSAGES"),
        ];
        for (what, per_cpu, max, name) in pooled {
            if self.cpus.checked_mul(per_cpu).is_none_or(|n| n > max) {
                return Err(Error::InvalidConfig(format!(
                    "cpus × {what} = {} × {per_cpu} is above its limit of {max} (Config::{name})",
                    self.cpus
                )));
            }
        }
        let per_cpu = [
            ("cross_cpu_queue", self.cross_cpu_queue, Config::MAX_CROSS_CPU_QUEUE, "MAX_CROSS_CPU_QUEUE"),
            ("trace_capacity", self.trace_capacity, Config::MAX_TRACE_CAPACITY, "MAX_TRACE_CAPACITY"),
        ];
        for (what, value, max, name) in per_cpu {
            if value > max {
                let why = crate::sizes::too_large(what, value, max);
                return Err(Error::InvalidConfig(format!("{why} (Config::{name})")));
            }
        }
        if self.default_stack < crate::thread::MIN_STACK_SIZE {
            return Err(Error::InvalidConfig(format!(
                "a default stack of {} bytes is too small: threads need at least {} (MIN_STACK_SIZE)",
                self.default_stack,
                crate::thread::MIN_STACK_SIZE
            )));
        }
        if let Some(p) = self.fifo_priority
            && !(1..=99).contains(&p)
        {
            return Err(Error::InvalidConfig(format!("SCHED_FIFO priority {p} is outside 1..=99")));
        }
        Ok(())
    }
}

/// When and how often a timing event fires.
///
/// ```
/// use std::time::Duration;
/// use tempi::{TimerSpec, Time};
/// let once = TimerSpec::at(Time::from_millis(5));
/// let tick = TimerSpec::every(Duration::from_millis(10)).starting(Time::from_millis(1)).cpu(0);
/// # let _ = (once, tick);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerSpec {
    pub(crate) first: Time,
    pub(crate) period: Option<Duration>,
    pub(crate) cpu: usize,
}

impl TimerSpec {
    /// Fire once at `t`.
    ///
    /// ```
    /// let _ = tempi::TimerSpec::at(tempi::Time::from_millis(1));
    /// ```
    pub fn at(t: Time) -> TimerSpec {
        TimerSpec { first: t, period: None, cpu: 0 }
    }
    /// Fire every `period`, first at `period` unless [`TimerSpec::starting`] says otherwise.
    ///
    /// ```
    /// let _ = tempi::TimerSpec::every(std::time::Duration::from_millis(1));
    /// ```
    pub fn every(period: Duration) -> TimerSpec {
        TimerSpec { first: Time::ZERO + period, period: Some(period), cpu: 0 }
    }
    /// The first firing.
    ///
    /// ```
    /// let _ = tempi::TimerSpec::every(std::time::Duration::from_millis(1)).starting(tempi::Time::ZERO);
    /// ```
    pub fn starting(mut self, t: Time) -> TimerSpec {
        self.first = t;
        self
    }
    /// The CPU whose dispatcher runs the handler (default 0).
    ///
    /// ```
    /// let _ = tempi::TimerSpec::at(tempi::Time::ZERO).cpu(1);
    /// ```
    pub fn cpu(mut self, cpu: usize) -> TimerSpec {
        self.cpu = cpu;
        self
    }
}
