//! Lock policies: what happens when a lock is acquired, contended and released.
//!
//! The kernel owns one lock mechanism (owner, waiters, timeouts, try-lock, ownership checks,
//! deadlock detection, poisoning); a [`LockPolicy`] per lock decides, through a few questions
//! the kernel asks at the hooks Real-Time Mach names (acquire, conflict, unlock):
//!
//! | hook | question | KM | BP | BPI | PCP | SRP/ICPP |
//! |---|---|---|---|---|---|---|
//! | acquire | may the requester take the free lock now? ([`LockPolicy::may_acquire`]) | yes | yes | yes | only above the system ceiling | yes |
//! | while held | at what urgency does the owner run at least? ([`LockPolicy::holding_urgency`]) | above everything | — | — | — | the ceiling |
//! | conflict | do waiters lend their urgency to the owner? ([`LockPolicy::inherits`]) | — | no | yes, transitively | yes | — |
//! | conflict | abort a preempted owner's restartable section? ([`LockPolicy::aborts_owner`]) | — | — | — | — | — |
//! | unlock | who gets the lock? | the most urgent waiter runs first and takes it (waiters are woken in urgency order) ||||||
//!
//! Built-in policies, one per file: [`KernelizedMonitor`], [`BasicPriority`],
//! [`PriorityInheritance`], [`PriorityCeiling`], [`ImmediateCeiling`], [`Restartable`] (RCS:
//! yes to the last question when the requester is more urgent, and inheritance during the
//! owner's recovery).

mod basic_priority;
mod ceiling;
mod immediate_ceiling;
mod inheritance;
mod kernelized_monitor;
mod restartable;

pub use basic_priority::BasicPriority;
pub use ceiling::PriorityCeiling;
pub use immediate_ceiling::ImmediateCeiling;
pub use inheritance::PriorityInheritance;
pub use kernelized_monitor::KernelizedMonitor;
pub use restartable::Restartable;

use crate::policy::sched::{SchedInfo, Urgency};

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
    pub owner: Option<crate::ThreadId>,
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
}

/// The built-in protocols' registry names.
///
/// ```
/// assert!(tempi::policy::lock::NAMES.contains(&"pcp"));
/// ```
pub const NAMES: &[&str] = &["km", "bp", "bpi", "pcp", "srp", "rcs"];

/// A built-in protocol by registry name: `km`, `bp`, `bpi`, `pcp`, `srp` (also `icpp`),
/// `rcs`.
///
/// ```
/// assert_eq!(tempi::policy::lock::by_name("bpi").unwrap().name(), "bpi");
/// assert!(tempi::policy::lock::by_name("spin").is_none());
/// ```
pub fn by_name(name: &str) -> Option<Box<dyn LockPolicy>> {
    Some(match name {
        "km" => Box::new(KernelizedMonitor),
        "bp" => Box::new(BasicPriority),
        "bpi" | "pi" => Box::new(PriorityInheritance),
        "pcp" => Box::new(PriorityCeiling),
        "srp" | "icpp" => Box::new(ImmediateCeiling),
        "rcs" => Box::new(Restartable),
        _ => return None,
    })
}
