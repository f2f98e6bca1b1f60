//! The core: building a kernel and its run loop, dispatch and urgency, and which thread each CPU
//! runs — under a CPU's own scheduler, under one global policy, by a direct thread-to-thread
//! switch, or after a scheduler is stacked on the CPU during the run.
//!
//! Owns: `seed` (building a kernel from its [`KernelSeed`](crate::kernel::KernelSeed) and
//! sizing every pool), `run` (the loop and how a run ends), `dispatch` (urgency, readying,
//! waking, stopping, preemption), `global` (global policies in virtual time), `direct` (the
//! switch on the requesting thread's stack), `sched_meta` (FREE JAZZ's scheduling messages) and
//! `sched_stack` (stacking and un-stacking schedulers).
//!
//! Must not: decide an order itself (the schedulers do), or reach into another room's state
//! except through that room's calls on the kernel (job releases through `threads`, timers
//! through `timing`, lock lending through `locking`).

pub(in crate::kernel) mod direct;
pub(in crate::kernel) mod dispatch;
pub(in crate::kernel) mod global;
pub(in crate::kernel) mod run;
pub(in crate::kernel) mod sched_meta;
pub(in crate::kernel) mod sched_stack;
pub(in crate::kernel) mod seed;
