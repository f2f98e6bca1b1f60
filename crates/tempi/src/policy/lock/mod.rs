//! Lock policies: what happens when a lock is acquired, contended and released.
//!
//! The kernel owns one lock mechanism (owner, waiters, timeouts, try-lock, ownership checks,
//! deadlock detection, poisoning, the hand-off on unlock); a [`LockPolicy`] per lock decides,
//! through a few questions the kernel asks at the hooks Real-Time Mach names (acquire,
//! conflict, unlock):
//!
//! | hook | question | KM | BP | BPI | PCP | SRP/ICPP |
//! |---|---|---|---|---|---|---|
//! | acquire | may the requester take the free lock now? ([`LockPolicy::may_acquire`]) | yes | yes | yes | only above the system ceiling | yes |
//! | while held | at what urgency does the owner run at least? ([`LockPolicy::holding_urgency`]) | above everything | — | — | — | the ceiling |
//! | conflict | do waiters lend their urgency to the owner? ([`LockPolicy::inherits`]) | — | no | yes, transitively | yes | — |
//! | conflict | abort a preempted owner's restartable section? ([`LockPolicy::aborts_owner`]) | — | — | — | — | — |
//! | unlock | may the most urgent waiter take the lock now? ([`LockPolicy::may_acquire`] again) | yes | yes | yes | only above the system ceiling | yes |
//! | unlock | who gets the lock? ([`LockPolicy::heir_rank`]) | the most urgent waiter, for every built-in protocol: handed straight to it (below) ||||||
//!
//! Built-in policies, one per file: [`KernelizedMonitor`], [`BasicPriority`],
//! [`PriorityInheritance`], [`PriorityCeiling`], [`ImmediateCeiling`], [`Restartable`] (RCS:
//! yes to the abort question when the requester is more urgent, and inheritance during the
//! owner's recovery), and [`Msrp`] for locks shared by several CPUs (a *global* lock: its
//! state is a FIFO ticket lock in shared memory, and the kernel's global-lock mechanism
//! applies instead of the questions below). The [`registry`] holds them by name, with any protocol the application
//! adds with [`register`].
//!
//! # Who gets a released lock
//!
//! On unlock the policy ranks the waiters that asked for this lock ([`LockPolicy::heir_rank`];
//! by default, and for every built-in protocol, the scheduler's effective urgency, inheritance
//! included), and the kernel offers the lock to the highest-ranked one (the earliest to wait
//! among equals), provided [`LockPolicy::may_acquire`] lets it take the lock now. The
//! mechanism that follows is the kernel's, the same for every protocol: if the heir is more
//! urgent than the releaser is once the lock no longer lends to it (or the releaser is
//! exiting), the lock is handed to it directly: it becomes the owner before it runs and wakes
//! up holding the lock, and the other waiters for this lock go on waiting, now on the heir.
//! Otherwise no one is handed the lock (owning it while the releaser runs on would let the
//! heir block the releaser): the waiters are woken to ask again when they run, except one
//! that a ceiling still refuses, which moves, still blocked, to the lock holding that ceiling.
//! A poisoned lock is handed to no one.
//!
//! Condition variables are not ordered by any lock policy: a waiter is ranked by its
//! effective urgency when it starts waiting, signals wake the highest rank first (the
//! earliest among equals), and a woken waiter takes its lock again under that lock's own
//! protocol.
//!
//! Both default orders follow the urgency scale the scheduler defines
//! ([`Scheduler::base_urgency`](crate::policy::sched::Scheduler::base_urgency), raised by
//! inheritance), the scale every question above is asked in. The protocols' blocking bounds
//! (one critical section per lower-urgency job, transitive inheritance) are stated on that
//! scale; a protocol that ranks heirs otherwise gives up those bounds and says so in its
//! [`LockPolicy::blocking_bound`]. With one waiter the rank is not asked, and the kernel
//! fuses the hand-off with the reschedule on the unlock path
//! ([`Scheduler::on_handed_over`](crate::policy::sched::Scheduler::on_handed_over)).
//!
//! # Ceilings
//!
//! A lock's ceiling is computed once, when the lock is made, by [`LockCeiling::of`]: the
//! declared ceiling priority, else the level of its declared users. The CPU's scheduler turns
//! it into an urgency ([`Scheduler::ceiling_urgency`](crate::policy::sched::Scheduler::ceiling_urgency))
//! whenever a protocol needs it ([`LockView::ceiling`]); the analysis
//! ([`TaskSet::ceiling`](crate::analysis::TaskSet::ceiling)) uses the same rule.
//!
//! # Writing a protocol
//!
//! A protocol that never lends urgency and lets the free lock be taken without a kernel call
//! (a released lock still goes to its most urgent waiter, the default heir rank):
//!
//! ```
//! use tempi::policy::lock::LockPolicy;
//!
//! struct Plain;
//! impl LockPolicy for Plain {
//!     fn name(&self) -> &str { "plain" }
//!     fn raises_holder(&self) -> bool { false }
//!     fn uncontended_fast_path(&self) -> bool { true }
//! }
//! tempi::policy::lock::register("plain", || Box::new(Plain)).unwrap();
//! assert!(tempi::policy::lock::names().contains(&"plain".to_string()));
//! ```

mod basic_priority;
mod bound;
mod ceiling;
mod immediate_ceiling;
mod inheritance;
mod kernelized_monitor;
mod msrp;
mod restartable;

pub use crate::plain::LockCeiling;
pub use basic_priority::BasicPriority;
pub use bound::BlockingBound;
pub use ceiling::PriorityCeiling;
pub use immediate_ceiling::ImmediateCeiling;
pub use inheritance::PriorityInheritance;
pub use kernelized_monitor::KernelizedMonitor;
pub use msrp::Msrp;
pub use restartable::Restartable;

use std::sync::{Arc, LazyLock};

use crate::policy::sched::{SchedInfo, Urgency};
use crate::policy::Registry;
use crate::policy::RegistryError;

/// What a lock policy may know when the kernel asks it about a lock.
///
/// ```
/// use tempi::policy::lock::LockView;
/// fn free(l: &LockView) -> bool { l.owner.is_none() }
/// # let _ = free;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockView {
    /// The lock's ceiling, if it has one (declared, or computed from its declared users).
    pub ceiling: Option<Urgency>,
    /// The current owner.
    pub owner: Option<crate::plain::ThreadId>,
    /// The highest ceiling among locks of this CPU held by threads other than the one asking
    /// (the PCP "system ceiling"), if any is held.
    pub system_ceiling: Option<Urgency>,
}

/// A locking protocol. One instance per lock; called on the lock's CPU dispatcher, between
/// thread executions.
pub trait LockPolicy: Send {
    /// The protocol's registry name, e.g. `"bpi"`.
    fn name(&self) -> &str;

    /// The lock is free: may `requester` take it now? Refusing blocks the requester on the
    /// lock that holds the system ceiling (ceiling blocking). Default: yes.
    fn may_acquire(&self, _requester: &SchedInfo, _lock: &LockView) -> bool {
        true
    }

    /// The rank of `waiter` among the threads waiting for this lock when it is released:
    /// the kernel offers the lock to the highest-ranked waiter (the earliest to wait among
    /// equal ranks), subject to [`LockPolicy::may_acquire`]. Asked on a release with more than
    /// one waiter (one waiter is the heir whatever its rank). Default: the waiter's effective
    /// urgency, inheritance included, the order every built-in protocol's blocking bound
    /// assumes; a protocol that ranks otherwise (arrival order, importance) states its own
    /// [`LockPolicy::blocking_bound`].
    ///
    /// ```
    /// use tempi::policy::lock::LockPolicy;
    /// use tempi::policy::sched::{SchedInfo, Urgency};
    /// /// Hands a released lock to the most important waiter.
    /// struct ByImportance;
    /// impl LockPolicy for ByImportance {
    ///     fn name(&self) -> &str { "by-importance" }
    ///     fn heir_rank(&self, waiter: &SchedInfo) -> Urgency { Urgency(i64::from(waiter.importance)) }
    /// }
    /// let w = SchedInfo { importance: 3, ..SchedInfo::at_level(1, None, tempi::Time::ZERO) };
    /// assert_eq!(ByImportance.heir_rank(&w), Urgency(3));
    /// ```
    fn heir_rank(&self, waiter: &SchedInfo) -> Urgency {
        waiter.urgency
    }

    /// The urgency the owner runs at, at least, while it holds the lock. Default: none.
    fn holding_urgency(&self, _owner: &SchedInfo, _lock: &LockView) -> Option<Urgency> {
        None
    }

    /// Whether [`LockPolicy::holding_urgency`] may ever answer something. A policy that
    /// says no spares the kernel the question on every urgency recomputation (lock, unlock,
    /// hand-off). Asked once, when the lock is created, as is [`LockPolicy::inherits`].
    /// Default: yes.
    fn raises_holder(&self) -> bool {
        true
    }

    /// Whether threads blocked on this lock lend their urgency to its owner (and, through
    /// it, along a chain of blocked owners). Asked once, when the lock is created. Default:
    /// no.
    fn inherits(&self) -> bool {
        false
    }

    /// The lock is held by `owner`, preempted inside a restartable critical section
    /// ([`crate::sync::Mutex::critical`]), and `requester` asks for it: abort the owner's
    /// section (its data is restored and it reruns later) instead of waiting for it? Default:
    /// no.
    fn aborts_owner(&self, _requester: &SchedInfo, _owner: &SchedInfo) -> bool {
        false
    }

    /// Whether a free, uncontended lock may be taken and released without a kernel call (the
    /// thread's side checks and sets the owner). Only for protocols whose acquisition of a
    /// free lock decides nothing: no ceiling test, no urgency change; the kernel then takes
    /// [`LockPolicy::may_acquire`] to be yes and does not ask it when it hands such a lock
    /// to a waiter. Default: no.
    fn uncontended_fast_path(&self) -> bool {
        false
    }

    /// Whether the lock must have a ceiling (declared or computed from its users); creating
    /// it without one is an error. Default: no.
    fn needs_ceiling(&self) -> bool {
        false
    }

    /// Whether the kernel refuses a lock request that would close a cycle of waiting owners
    /// (with an error to the requester). Policies that cannot deadlock may say no.
    fn detects_deadlock(&self) -> bool {
        true
    }

    /// Whether locks under this protocol are *global*: shared by threads of several CPUs,
    /// with their state in shared memory instead of one CPU's kernel (see [`Msrp`]). Such a
    /// lock is created before the run and the kernel applies the global-lock mechanism
    /// (non-preemptive FIFO spinning); the other questions are not asked. Default: no.
    ///
    /// ```
    /// use tempi::policy::lock::{LockPolicy, Msrp, PriorityCeiling};
    /// assert!(Msrp.global() && !PriorityCeiling.global());
    /// ```
    fn global(&self) -> bool {
        false
    }

    /// Which published blocking bound covers the waits this protocol causes, for the
    /// analysis ([`crate::analysis::Protocol::for_lock_policy`], which asks one instance built
    /// from the [`registry`]); `None` when none does. Never asked on a lock's path.
    ///
    /// Each built-in protocol answers its own bound. The default derives one from the
    /// answers above, where they fix the blocking: a protocol that takes a free lock without
    /// a kernel decision ([`LockPolicy::uncontended_fast_path`]: no ceiling test, so
    /// `may_acquire` is always yes), never raises its holder ([`LockPolicy::raises_holder`]
    /// no, so no holding urgency) and needs no ceiling is bounded as
    /// [`BlockingBound::Bpi`] if its waiters lend their urgency ([`LockPolicy::inherits`])
    /// and as [`BlockingBound::Bp`] if not; it takes the default heir order
    /// ([`LockPolicy::heir_rank`]: the most urgent waiter first), which a protocol that ranks
    /// heirs otherwise must answer for by overriding this method.
    /// Any other protocol (a ceiling test, a holding urgency) gets `None`: its blocking
    /// depends on answers the analysis cannot bound from outside. The one answer the
    /// derivation cannot ask in advance is [`LockPolicy::aborts_owner`]: it holds for a
    /// protocol that keeps the default (never abort); one that aborts owners makes them redo
    /// work the bp and bpi bounds do not count, and must answer for itself.
    ///
    /// ```
    /// use tempi::policy::lock::{BlockingBound, LockPolicy, PriorityCeiling};
    /// struct Lender;
    /// impl LockPolicy for Lender {
    ///     fn name(&self) -> &str { "lender" }
    ///     fn uncontended_fast_path(&self) -> bool { true }
    ///     fn raises_holder(&self) -> bool { false }
    ///     fn inherits(&self) -> bool { true }
    /// }
    /// assert_eq!(Lender.blocking_bound(), Some(BlockingBound::Bpi));
    /// assert_eq!(PriorityCeiling.blocking_bound(), Some(BlockingBound::Pcp));
    /// ```
    fn blocking_bound(&self) -> Option<BlockingBound> {
        if self.uncontended_fast_path() && !self.raises_holder() && !self.needs_ceiling() {
            return Some(if self.inherits() { BlockingBound::Bpi } else { BlockingBound::Bp });
        }
        None
    }
}

/// The built-in protocols' registry names. [`names`] also lists those the application
/// registered.
///
/// ```
/// assert!(tempi::policy::lock::NAMES.contains(&"pcp"));
/// ```
pub const NAMES: &[&str] = &["km", "bp", "bpi", "pcp", "srp", "rcs", "msrp"];

/// Builds a lock policy: called once per lock created with the protocol.
///
/// ```
/// let make: tempi::policy::lock::LockPolicyFactory = std::sync::Arc::new(|| Box::new(tempi::policy::lock::PriorityCeiling));
/// assert_eq!(make().name(), "pcp");
/// ```
pub type LockPolicyFactory = Arc<dyn Fn() -> Box<dyn LockPolicy> + Send + Sync>;

/// The process-wide lock protocol registry: the built-ins ([`NAMES`], with the aliases `pi`
/// for `bpi` and `icpp` for `srp`) and what the application added with [`register`].
///
/// ```
/// let bpi = tempi::policy::lock::registry().get("pi").unwrap();
/// assert_eq!(bpi().name(), "bpi");
/// ```
pub fn registry() -> &'static Registry<LockPolicyFactory> {
    static REGISTRY: LazyLock<Registry<LockPolicyFactory>> = LazyLock::new(|| {
        let f = |make: fn() -> Box<dyn LockPolicy>| -> LockPolicyFactory { Arc::new(make) };
        Registry::new(
            "lock protocol",
            &[
                ("km", &[], f(|| Box::new(KernelizedMonitor))),
                ("bp", &[], f(|| Box::new(BasicPriority))),
                ("bpi", &["pi"], f(|| Box::new(PriorityInheritance))),
                ("pcp", &[], f(|| Box::new(PriorityCeiling))),
                ("srp", &["icpp"], f(|| Box::new(ImmediateCeiling))),
                ("rcs", &[], f(|| Box::new(Restartable))),
                ("msrp", &[], f(|| Box::new(Msrp))),
            ],
        )
    });
    &REGISTRY
}

/// Make a protocol available by `name` to every runtime of the process: to
/// [`by_name`], to [`crate::sync::LockSpec::protocol`] and to the analysis (see
/// [`crate::analysis::Protocol::for_lock_policy`]). Fails if the name is taken or invalid
/// ([`RegistryError`]).
///
/// ```
/// use tempi::policy::lock::{register, LockPolicy, PriorityInheritance};
/// struct Mine;
/// impl LockPolicy for Mine {
///     fn name(&self) -> &str { "mine" }
///     fn inherits(&self) -> bool { true }
/// }
/// register("mine", || Box::new(Mine)).unwrap();
/// assert!(register("mine", || Box::new(PriorityInheritance)).is_err());
/// assert_eq!(tempi::policy::lock::by_name("mine").unwrap().name(), "mine");
/// ```
pub fn register(
    name: &str,
    factory: impl Fn() -> Box<dyn LockPolicy> + Send + Sync + 'static,
) -> Result<(), RegistryError> {
    registry().register(name, Arc::new(factory))
}

/// Every registered protocol's name: the built-ins ([`NAMES`]) first, then the application's
/// in registration order.
///
/// ```
/// let n = tempi::policy::lock::NAMES.len();
/// assert_eq!(tempi::policy::lock::names()[..n], tempi::policy::lock::NAMES[..]);
/// ```
pub fn names() -> Vec<String> {
    registry().names()
}

/// A fresh policy of the protocol registered as `name`: a built-in (`km`, `bp`, `bpi` (also
/// `pi`), `pcp`, `srp` (also `icpp`), `rcs`, `msrp`) or one the application registered.
///
/// ```
/// assert_eq!(tempi::policy::lock::by_name("bpi").unwrap().name(), "bpi");
/// assert!(tempi::policy::lock::by_name("spin").is_none());
/// ```
pub fn by_name(name: &str) -> Option<Box<dyn LockPolicy>> {
    registry().get(name).map(|make| make())
}
