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
