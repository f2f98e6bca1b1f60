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

/// The thread slots of this kernel: control blocks, their generations and free list, stacks and
/// guards, the summaries of ended threads, and OS-backed threads left stopped.
pub(in crate::kernel) struct ThreadTable {
    pub(in crate::kernel) slot_base: u32,
    pub(in crate::kernel) slots: Vec<Option<crate::kernel::threads::tcb::Tcb>>,
    pub(in crate::kernel) generations: Vec<u32>,
    pub(in crate::kernel) free: Vec<u32>,
    pub(in crate::kernel) live: usize,
    pub(in crate::kernel) summaries: Vec<crate::stats::ThreadSummary>,
    pub(in crate::kernel) stacks: crate::kernel::threads::stacks::StackPool,
    pub(in crate::kernel) default_stack: usize,
    /// Per slot: the thread's stack, for the stack-overflow report. Sized once: the signal
    /// handler reads the table by address during the run.
    pub(in crate::kernel) guards: Vec<crate::os::overflow::StackGuard>,
    /// Real time: the OS threads of OS-backed threads killed while stopped in place, kept
    /// stopped until the run ends (see `threads/os_backed.rs`).
    pub(in crate::kernel) abandoned: Vec<crate::kernel::threads::os_backed::Worker>,
    /// Real time: how long the end of the run waits for OS-backed threads to reach a runtime
    /// call ([`crate::Config::os_backed_grace`]).
    pub(in crate::kernel) os_backed_grace: std::time::Duration,
    /// Real time: the OS-backed threads the end of the run left stopped, not unwound.
    pub(in crate::kernel) left_stopped: Vec<crate::plain::ThreadId>,
}
