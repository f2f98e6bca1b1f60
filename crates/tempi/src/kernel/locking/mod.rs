//! Synchronisation: the lock mechanism with its owners, waiters, timeouts and deadlock
//! detection, the contended unlock's short path, the urgency locks lend, global (MSRP) locks,
//! and the wait queues of condition variables and semaphores.
//!
//! Owns: `locks`, `hand_off`, `lending`, `global_locks` and `waits`.
//!
//! Must not: decide a protocol's rules (whether a lock is granted, what it lends: the
//! protocol objects in [`crate::policy::lock`] do), or reach the cross-CPU queues except
//! through `xcpu`.

pub(in crate::kernel) mod global_locks;
pub(in crate::kernel) mod hand_off;
pub(in crate::kernel) mod lending;
pub(in crate::kernel) mod locks;
pub(in crate::kernel) mod waits;

/// The locks, global locks, condition variables and semaphores of this kernel.
pub(in crate::kernel) struct SyncObjects {
    pub(in crate::kernel) locks: Vec<crate::kernel::locking::locks::LockState>,
    pub(in crate::kernel) lock_base: u32,
    /// The runtime's global (MSRP) locks, shared by every kernel of the run.
    pub(in crate::kernel) globals: Vec<crate::kernel::locking::global_locks::GlobalSlot>,
    /// Pre-sized list the lock mechanism swaps with a lock's waiters to walk them.
    pub(in crate::kernel) lock_scratch: Vec<crate::plain::ThreadId>,
    /// How many owned locks impose a ceiling: none, and no lock request needs the system
    /// ceiling.
    pub(in crate::kernel) ceilings_held: u32,
    pub(in crate::kernel) conds: Vec<crate::kernel::locking::waits::CondState>,
    pub(in crate::kernel) sems: Vec<crate::kernel::locking::waits::SemState>,
}
