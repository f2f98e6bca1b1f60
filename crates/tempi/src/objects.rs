//! The plain data of the runtime's synchronisation objects: their ids ([`LockId`], [`CondId`],
//! [`SemId`]), how to create them ([`LockSpec`], [`SemSpec`]), the owner word a lock's fast
//! path shares with the kernel ([`LockWord`]), and the errors their calls return
//! ([`LockError`]).
//!
//! Below both the kernel, which keeps the objects' state, and `sync`, which builds the
//! user-facing objects ([`crate::sync::Mutex`], [`crate::sync::Condvar`],
//! [`crate::sync::Semaphore`]) on them; re-exported from `sync`. This module must not reach up
//! into `kernel`, `sync` or `runtime`.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::os::loom_shim;

use crate::plain::ThreadId;
pub use crate::plain::{CondId, LockId, SemId};
use crate::policy::lock::{by_name, LockCeiling, LockPolicy, PriorityInheritance};
use crate::time::Time;

/// The part of a lock's state its threads may read and write without a kernel call: who owns
/// it, whether the uncontended fast path is open, and whether the kernel manages the current
/// ownership. Only threads of the lock's CPU touch it, and they never run at the same time
/// (they share one dispatcher), so relaxed loads and stores suffice; atomics keep the type
/// `Sync` and any misuse from another OS thread free of undefined behaviour.
#[derive(Debug, Default)]
pub(crate) struct LockWord {
    /// 0 when free, else the owner as [`ThreadId::to_word`] gives it.
    pub(crate) owner: AtomicU64,
    /// The fast path is allowed (protocol, costs, tracing and poisoning permitting).
    pub(crate) fast: AtomicBool,
    /// The kernel tracks the current ownership (it was granted by the kernel, or adopted when
    /// another thread had to wait): the owner must unlock through the kernel.
    pub(crate) managed: AtomicBool,
}

/// The shared state of a global lock (protocol `msrp`): a FIFO ticket lock in plain memory,
/// reached by the threads of every CPU. A thread takes the next ticket and spins until the
/// ticket being served is its own; releasing serves the next ticket. In real time the
/// threads spin on these words themselves (each CPU's dispatcher runs its own kernel); in
/// virtual time the one kernel takes the tickets and accounts the spinning (see
/// `kernel::global_locks`). Locking never allocates.
#[derive(Debug)]
pub(crate) struct GlobalLock {
    /// The lock's name, for errors and the report.
    pub(crate) name: String,
    /// Its index among the runtime's global locks.
    pub(crate) index: u32,
    /// The next ticket to hand out.
    pub(crate) next: loom_shim::AtomicU32,
    /// The ticket whose holder owns the lock.
    pub(crate) serving: loom_shim::AtomicU32,
    /// 0 when no thread holds it, else the owner as [`ThreadId::to_word`] gives it.
    pub(crate) owner: loom_shim::AtomicU64,
    /// Real time, when the run is traced: the instant in ns of the lock's last traced event
    /// — while it is held, the holder's acquisition; once released, that release. Only the
    /// holder writes it, before it serves the next ticket, so the next holder reads the
    /// release it follows.
    pub(crate) stamp: loom_shim::AtomicU64,
    /// The run is traced: the holders keep `stamp` (untraced, they read no clock for it).
    pub(crate) traced: bool,
}

impl GlobalLock {
    pub(crate) fn new(name: String, index: u32, traced: bool) -> GlobalLock {
        GlobalLock {
            name,
            index,
            next: loom_shim::AtomicU32::new(0),
            serving: loom_shim::AtomicU32::new(0),
            owner: loom_shim::AtomicU64::new(0),
            stamp: loom_shim::AtomicU64::new(0),
            traced,
        }
    }

    /// Real time: take the next ticket, for a thread that spins until [`GlobalLock::serves`]
    /// it. Each ticket goes to one thread (a read-modify-write); relaxed, since the ticket
    /// orders nothing by itself: the lock's data is ordered by `serving`.
    #[inline]
    pub(crate) fn take_ticket(&self) -> u32 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Real time: whether the lock is now the holder of `ticket`'s. Acquire: once it is,
    /// everything the previous holder did before [`GlobalLock::serve_next`] is seen.
    #[inline]
    pub(crate) fn serves(&self, ticket: u32) -> bool {
        self.serving.load(Ordering::Acquire) == ticket
    }

    /// Real time: take the lock if nobody holds it or waits for it (`try_lock`): the ticket
    /// served is taken only if it is the next one too. Returns the ticket taken.
    #[inline]
    pub(crate) fn try_take(&self) -> Option<u32> {
        let serving = self.serving.load(Ordering::Acquire);
        let next = serving.wrapping_add(1);
        self.next.compare_exchange(serving, next, Ordering::Acquire, Ordering::Relaxed).ok()
    }

    /// Real time: the holder lets go, after its last access to the lock's data: the next
    /// ticket is served (release: its holder sees those accesses).
    #[inline]
    pub(crate) fn serve_next(&self) {
        self.owner.store(0, Ordering::Relaxed);
        self.serving.fetch_add(1, Ordering::Release);
    }

    /// Real time: the new holder, which read `at` on its clock once the lock was its own,
    /// fixes the instant of its `lock` record: `at`, or 1 ns after the release it follows if
    /// that is later. The releaser, on another CPU, read its clock before serving the ticket
    /// and this thread read its own after seeing it served, but two CPUs' clocks may tie or
    /// disagree by a little: the floor keeps the records of one lock in causal order.
    #[inline]
    pub(crate) fn stamp_acquired(&self, at: Time) -> Time {
        let t = at.as_nanos().max(self.stamp.load(Ordering::Relaxed) + 1);
        self.stamp.store(t, Ordering::Relaxed);
        Time::from_nanos(t)
    }

    /// Real time: the holder, which read `at` on its clock and is about to serve the next
    /// ticket, fixes the instant of its `unlock` record: `at`, and never before its own
    /// acquisition. Returns the two instants (acquisition, release) for its kernel to trace.
    #[inline]
    pub(crate) fn stamp_release(&self, at: Time) -> (Time, Time) {
        let acquired = self.stamp.load(Ordering::Relaxed);
        let released = at.as_nanos().max(acquired);
        self.stamp.store(released, Ordering::Relaxed);
        (Time::from_nanos(acquired), Time::from_nanos(released))
    }

    /// The [`LockId`] a global lock shows: above every CPU-local lock's id.
    pub(crate) fn id(&self) -> LockId {
        LockId(GLOBAL_LOCK_BASE + self.index)
    }
}

/// The first id of the global locks ([`LockId`]s below it are CPU-local).
pub(crate) const GLOBAL_LOCK_BASE: u32 = 1 << 31;

/// How to create a lock: name, CPU, protocol, ceiling.
///
/// ```
/// use tempi::sync::LockSpec;
/// let spec = LockSpec::new("bus").protocol("pcp").ceiling(7).cpu(0);
/// assert_eq!(spec.protocol_name(), "pcp");
/// ```
pub struct LockSpec {
    pub(crate) name: String,
    pub(crate) cpu: usize,
    pub(crate) policy: Box<dyn LockPolicy>,
    pub(crate) ceiling: Option<LockCeiling>,
    pub(crate) users: Vec<ThreadId>,
    pub(crate) unknown_protocol: Option<String>,
    pub(crate) word: Arc<LockWord>,
}

impl fmt::Debug for LockSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockSpec")
            .field("name", &self.name)
            .field("cpu", &self.cpu)
            .field("protocol", &self.policy.name())
            .field("ceiling", &self.ceiling)
            .finish_non_exhaustive()
    }
}

impl LockSpec {
    /// A lock named `name` on CPU 0 under priority inheritance.
    ///
    /// ```
    /// assert_eq!(tempi::sync::LockSpec::new("m").protocol_name(), "bpi");
    /// ```
    pub fn new(name: impl Into<String>) -> LockSpec {
        LockSpec {
            name: name.into(),
            cpu: 0,
            policy: Box::new(PriorityInheritance),
            ceiling: None,
            users: Vec::new(),
            unknown_protocol: None,
            word: Arc::default(),
        }
    }

    /// A protocol by its registry name ([`crate::policy::lock::registry`]): a built-in (`km`,
    /// `bp`, `bpi`, `pcp`, `srp`, `rcs`) or one registered with
    /// [`crate::policy::lock::register`]. An unknown name makes
    /// lock creation fail with [`crate::Error::InvalidConfig`].
    ///
    /// ```
    /// assert_eq!(tempi::sync::LockSpec::new("m").protocol("km").protocol_name(), "km");
    /// ```
    pub fn protocol(mut self, name: &str) -> LockSpec {
        match by_name(name) {
            Some(p) => self.policy = p,
            None => self.unknown_protocol = Some(name.to_string()),
        }
        self
    }

    /// A protocol object (a built-in one or your own).
    ///
    /// ```
    /// let s = tempi::sync::LockSpec::new("m").policy(tempi::policy::lock::BasicPriority);
    /// assert_eq!(s.protocol_name(), "bp");
    /// ```
    pub fn policy(mut self, policy: impl LockPolicy + 'static) -> LockSpec {
        self.policy = Box::new(policy);
        self
    }

    /// The ceiling, as a fixed priority: the priority of the most urgent thread that may lock
    /// it.
    ///
    /// ```
    /// let _ = tempi::sync::LockSpec::new("m").ceiling(5);
    /// ```
    pub fn ceiling(mut self, priority: i32) -> LockSpec {
        self.ceiling = Some(LockCeiling::Declared(priority));
        self
    }

    /// The ceiling as computed beforehand by [`LockCeiling::of`], for a front end that
    /// computes each lock's ceiling once and gives the same value to its analysis (as
    /// `tempi analyze` and `tempi simulate` do). Takes the place of a declared ceiling and of
    /// the users' level.
    ///
    /// ```
    /// use tempi::policy::lock::LockCeiling;
    /// let c = LockCeiling::of(None, [(3, None), (6, None)]).unwrap();
    /// let _ = tempi::sync::LockSpec::new("m").protocol("pcp").ceiling_level(c);
    /// ```
    pub fn ceiling_level(mut self, ceiling: LockCeiling) -> LockSpec {
        self.ceiling = Some(ceiling);
        self
    }

    /// The threads that may lock it; unless a ceiling is given, the ceiling is computed from
    /// them when the lock is made ([`LockCeiling::of`]: their highest priority and shortest
    /// relative deadline), and the CPU's policy says what urgency it stands for at the moment
    /// of asking ([`Scheduler::ceiling_urgency`]: the priority under fixed priority, the
    /// current time plus the relative deadline under EDF, SRP's preemption levels).
    ///
    /// [`Scheduler::ceiling_urgency`]: crate::policy::sched::Scheduler::ceiling_urgency
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let t = rt.spawn(tempi::ThreadSpec::new("t").priority(4), |_| {}).unwrap();
    /// let _ = tempi::sync::LockSpec::new("m").protocol("pcp").users(&[t]);
    /// ```
    pub fn users(mut self, users: &[ThreadId]) -> LockSpec {
        self.users = users.to_vec();
        self
    }

    /// The CPU whose threads use the lock (default 0).
    ///
    /// ```
    /// let _ = tempi::sync::LockSpec::new("m").cpu(1);
    /// ```
    pub fn cpu(mut self, cpu: usize) -> LockSpec {
        self.cpu = cpu;
        self
    }

    /// The protocol's name.
    ///
    /// ```
    /// assert_eq!(tempi::sync::LockSpec::new("m").protocol("srp").protocol_name(), "srp");
    /// ```
    pub fn protocol_name(&self) -> &str {
        self.policy.name()
    }

    /// What can be checked of the spec on its own: a known protocol, and a ceiling (declared
    /// or computed from users) for a protocol that needs one.
    pub(crate) fn check(&self) -> Result<(), crate::Error> {
        if let Some(p) = &self.unknown_protocol {
            return Err(crate::Error::InvalidConfig(format!(
                "lock `{}`: unknown protocol `{p}` (known: {})",
                self.name,
                crate::policy::lock::names().join(", ")
            )));
        }
        if self.policy.needs_ceiling() && self.ceiling.is_none() && self.users.is_empty() {
            return Err(crate::Error::InvalidConfig(format!(
                "lock `{}`: protocol `{}` needs a ceiling: declare one or list the lock's users",
                self.name,
                self.policy.name()
            )));
        }
        Ok(())
    }
}

/// Why a lock, condition-variable or semaphore operation failed.
///
/// ```
/// assert_ne!(tempi::sync::LockError::Timeout, tempi::sync::LockError::WouldBlock);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockError {
    /// `try_lock` found the lock taken (or, under PCP, refused by the system ceiling).
    WouldBlock,
    /// `lock_timeout` ran out of time.
    Timeout,
    /// Waiting would close a cycle of threads waiting for each other's locks.
    Deadlock,
    /// The caller already holds this lock (locks are not recursive).
    AlreadyHeld,
    /// A thread panicked while holding the lock; the data may be inconsistent. Call
    /// [`crate::sync::Mutex::clear_poison`] after checking it.
    Poisoned,
    /// The object belongs to another CPU than the caller's, and cannot be used from there:
    /// a lock under a single-CPU protocol (condition variables and semaphores work from any
    /// CPU). Also an object id that names no CPU of the runtime.
    CrossCpu {
        /// The caller's CPU.
        from: usize,
        /// The object's CPU.
        to: usize,
    },
    /// In real time, the queue of requests to the object's CPU was full
    /// ([`crate::Config::cross_cpu_queue`]): a notification or a unit given back from another
    /// CPU was not sent. Counted in [`crate::CrossCpuStats::queue_full`] and traced as
    /// [`TraceKind::QueueFull`](crate::trace::TraceKind::QueueFull).
    QueueFull {
        /// The object's CPU.
        cpu: usize,
        /// The size of its queue.
        capacity: usize,
    },
    /// The object was created by another runtime than the caller's.
    ForeignRuntime,
    /// In real time, a wait on a condition variable or semaphore of another CPU found no
    /// room there for the waiter's proxy: that CPU holds at most [`crate::Config::max_threads`]
    /// waiters of other CPUs at once. Counted in [`crate::CrossCpuStats::proxies_full`] and
    /// traced as [`TraceKind::CrossCpuRefused`](crate::trace::TraceKind::CrossCpuRefused)
    /// (request 4) on the waiter's CPU.
    ProxiesFull {
        /// The object's CPU.
        cpu: usize,
        /// How many waiters of other CPUs it holds at once.
        capacity: usize,
    },
    /// Giving a semaphore unit back would take its count past `u64::MAX`.
    Overflow,
    /// The caller holds a global lock (protocol `msrp`): inside such a section a thread
    /// runs without preemption and must not wait (for another lock, a condition variable, a
    /// semaphore unit) nor take a second global lock.
    GlobalHeld,
    /// The call does not apply to a global (`msrp`) lock: a timed lock, a restartable
    /// section, or a condition wait on it.
    NotForGlobal,
    /// A restartable section (`Mutex::critical`) from an OS-backed thread in real time
    /// (`ThreadSpec::os_backed`): such a thread may be stopped anywhere, so its section could
    /// not be rolled back safely.
    NotForOsBacked,
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LockError::WouldBlock => "the lock is taken",
            LockError::Timeout => "timed out waiting for the lock",
            LockError::Deadlock => "waiting for this lock would deadlock",
            LockError::AlreadyHeld => "the caller already holds this lock",
            LockError::Poisoned => "a thread panicked while holding this lock",
            LockError::CrossCpu { from, to } => {
                return write!(f, "a thread of CPU {from} used an object of CPU {to}");
            }
            LockError::QueueFull { cpu, capacity } => {
                return write!(f, "the request queue of CPU {cpu} is full ({capacity} entries)");
            }
            LockError::ForeignRuntime => "the object belongs to another runtime",
            LockError::ProxiesFull { cpu, capacity } => {
                return write!(f, "CPU {cpu} already holds {capacity} waiters of other CPUs");
            }
            LockError::Overflow => "the semaphore's count would overflow",
            LockError::GlobalHeld => {
                "the caller holds a global (msrp) lock, inside which it may not wait or take another global lock"
            }
            LockError::NotForGlobal => {
                "a global (msrp) lock cannot be used this way (no timeout, restartable section or condition wait)"
            }
            LockError::NotForOsBacked => "an OS-backed thread cannot run a restartable section",
        })
    }
}

impl std::error::Error for LockError {}

/// How to create a counting semaphore: name, initial count, CPU, waiter order.
///
/// ```
/// let spec = tempi::sync::SemSpec::new("buffers", 4).queue_name("urgency");
/// # let _ = spec;
/// ```
pub struct SemSpec {
    pub(crate) name: String,
    pub(crate) count: u64,
    pub(crate) cpu: usize,
    pub(crate) queue: Box<dyn crate::policy::queue::QueuePolicy>,
    pub(crate) unknown_queue: Option<String>,
}

impl fmt::Debug for SemSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SemSpec")
            .field("name", &self.name)
            .field("count", &self.count)
            .field("queue", &self.queue.name())
            .finish_non_exhaustive()
    }
}

impl SemSpec {
    /// A semaphore with `count` units on CPU 0, FIFO waiters.
    ///
    /// ```
    /// let _ = tempi::sync::SemSpec::new("s", 0);
    /// ```
    pub fn new(name: impl Into<String>, count: u64) -> SemSpec {
        SemSpec {
            name: name.into(),
            count,
            cpu: 0,
            queue: Box::new(crate::policy::queue::ArrivalOrder),
            unknown_queue: None,
        }
    }
    /// The waiter order (a built-in or your own [`crate::policy::queue::QueuePolicy`]).
    ///
    /// ```
    /// let _ = tempi::sync::SemSpec::new("s", 0).queue(tempi::policy::queue::ByDeadline);
    /// ```
    pub fn queue(mut self, policy: impl crate::policy::queue::QueuePolicy + 'static) -> SemSpec {
        self.queue = Box::new(policy);
        self
    }
    /// A waiter order by its registry name: a built-in (`fifo`, `urgency`, `deadline`) or one
    /// registered with [`crate::policy::queue::register`].
    ///
    /// ```
    /// let _ = tempi::sync::SemSpec::new("s", 0).queue_name("fifo");
    /// ```
    pub fn queue_name(mut self, name: &str) -> SemSpec {
        match crate::policy::queue::by_name(name) {
            Some(q) => self.queue = q,
            None => self.unknown_queue = Some(name.to_string()),
        }
        self
    }
    /// The CPU whose threads use it (default 0).
    ///
    /// ```
    /// let _ = tempi::sync::SemSpec::new("s", 0).cpu(0);
    /// ```
    pub fn cpu(mut self, cpu: usize) -> SemSpec {
        self.cpu = cpu;
        self
    }

    /// What can be checked of the spec on its own: a known queue policy.
    pub(crate) fn check(&self) -> Result<(), crate::Error> {
        match &self.unknown_queue {
            Some(q) => Err(crate::Error::InvalidConfig(format!(
                "semaphore `{}`: unknown queue policy `{q}` (known: fifo, urgency, deadline)",
                self.name
            ))),
            None => Ok(()),
        }
    }
}

/// The loom model of the ticket lock of MSRP (docs/ARCHITECTURE.md, "The loom models"): the
/// threads of several CPUs take and release one [`GlobalLock`] as `Ctx::global_lock_raw`,
/// `global_unlock_raw` and a `try_lock` do, through its own methods.
#[cfg(all(test, loom))]
mod loom_models {
    use super::GlobalLock;
    use crate::os::loom_shim::{self, thread, UnsafeCell};
    use crate::time::Time;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    /// The lock and the data it guards: the tickets in the order their holders entered, and
    /// each holder's (acquired, released) stamps.
    struct Guarded {
        lock: GlobalLock,
        entries: UnsafeCell<Vec<(u32, Time, Time)>>,
    }

    // SAFETY: `entries` is reached only by the lock's holder (what the model checks: loom
    // fails it on two accesses not ordered by the lock).
    unsafe impl Sync for Guarded {}

    /// The holder's section: it owns the lock, writes the data, stamps and lets go. Every
    /// CPU's clock reads 0, the most disagreeing clocks can be: the stamps alone keep the
    /// records in causal order.
    fn hold(g: &Guarded, ticket: u32, word: u64) {
        g.lock.owner.store(word, Ordering::Relaxed);
        let acquired = g.lock.stamp_acquired(Time::ZERO);
        assert_eq!(g.lock.owner.load(Ordering::Relaxed), word, "nobody else took the lock meanwhile");
        let (stamped, released) = g.lock.stamp_release(Time::ZERO);
        assert_eq!(stamped, acquired);
        // SAFETY: this thread holds the lock (the model's claim under test).
        g.entries.with_mut(|e| unsafe { (*e).push((ticket, acquired, released)) });
        g.lock.serve_next();
    }

    fn spinner(g: &Guarded, word: u64) {
        let ticket = g.lock.take_ticket();
        while !g.lock.serves(ticket) {
            thread::yield_now();
        }
        hold(g, ticket, word);
    }

    fn check_entries(g: &Guarded, entered: usize) {
        // SAFETY: every model thread has been joined.
        let entries = g.entries.with(|e| unsafe { (*e).clone() });
        assert_eq!(entries.len(), entered);
        for (k, &(ticket, acquired, released)) in entries.iter().enumerate() {
            assert_eq!(ticket, k as u32, "the lock went to the tickets in the order they were taken");
            assert!(released >= acquired);
            if k > 0 {
                assert!(acquired > entries[k - 1].2, "an acquisition is stamped after the release it follows");
            }
        }
    }

    fn guarded() -> Arc<Guarded> {
        Arc::new(Guarded { lock: GlobalLock::new("g".into(), 0, true), entries: UnsafeCell::new(Vec::new()) })
    }

    /// `spinners` threads on as many CPUs spin for the lock: one holder at a time (loom checks
    /// the data's accesses), in ticket order, the stamps in causal order.
    fn fifo_model(spinners: usize, preemptions: usize) {
        loom_shim::check(preemptions, move || {
            let g = guarded();
            let others: Vec<_> = (1..=spinners as u64)
                .map(|word| {
                    let g = g.clone();
                    thread::spawn(move || spinner(&g, word))
                })
                .collect();
            for t in others {
                t.join().expect("a spinner");
            }
            check_entries(&g, spinners);
        });
    }

    /// Two spinners, every interleaving with up to two preemptions.
    #[test]
    fn loom_msrp_ticket_lock_two_spinners_in_fifo_order() {
        fifo_model(2, 2);
    }

    /// Three spinners, with one preemption (two take minutes).
    #[test]
    fn loom_msrp_ticket_lock_three_spinners_in_fifo_order() {
        fifo_model(3, 1);
    }

    /// Two spinners and a `try_lock`: the try takes the lock only when nobody holds it or
    /// waits for it, and then its ticket is the next in order.
    #[test]
    fn loom_msrp_try_lock_never_jumps_the_queue() {
        loom_shim::check(2, || {
            let g = guarded();
            let theirs = g.clone();
            let other = thread::spawn(move || spinner(&theirs, 1));
            let theirs = g.clone();
            let trier = thread::spawn(move || {
                let took = theirs.lock.try_take();
                if let Some(ticket) = took {
                    hold(&theirs, ticket, 2);
                }
                took.is_some()
            });
            spinner(&g, 3);
            other.join().expect("a spinner");
            let took = trier.join().expect("the try");
            check_entries(&g, 2 + usize::from(took));
        });
    }
}
