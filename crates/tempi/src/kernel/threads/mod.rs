//! Threads and jobs: the per-thread control block, the stacks, releases and deadlines, the
//! requests a thread suspends with and how the kernel answers them, RCS restarts, and the
//! OS-backed kind whose coroutine runs on an OS thread of its own.
//!
//! Owns: `tcb` (everything the kernel keeps per thread), `stacks` (the guard-paged stack pool),
//! `jobs` (releases, job ends, misses, abort times), `requests` (resuming a thread and
//! dispatching on what it asks), `restarts` (what an RCS restart owes a thread first) and
//! `os_backed` (OS-backed threads in real time).
//!
//! Must not: pick which thread runs (dispatch and the schedulers do), or carry out a lock,
//! message or set operation itself: `requests` hands each to its room.

pub(in crate::kernel) mod jobs;
pub(in crate::kernel) mod os_backed;
pub(in crate::kernel) mod requests;
pub(in crate::kernel) mod restarts;
pub(in crate::kernel) mod stacks;
pub(in crate::kernel) mod tcb;
