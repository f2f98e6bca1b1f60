//! MSRP, the multiprocessor stack resource policy (Gai, Lipari and Di Natale, 2001), for the
//! locks shared by threads of several CPUs.
//!
//! Owns the policy object only. The mechanism it names — the FIFO ticket lock in shared
//! memory, non-preemptive spinning and holding, the refusals of waiting inside a global
//! section — lives in `kernel::global_locks`; the analysis terms in `analysis::msrp`.

use super::{BlockingBound, LockPolicy, LockView};
use crate::policy::sched::{SchedInfo, Urgency};

/// MSRP for a *global* lock: one used by threads of several CPUs. (Locks used by the threads
/// of one CPU only are *local* under MSRP and take the single-CPU stack resource policy,
/// protocol `srp`.)
///
/// A thread that asks for a global lock becomes non-preemptible on its CPU at once. If the
/// lock is taken it spins — busy-waits, keeping its CPU — in FIFO order with the spinners of
/// the other CPUs; it then holds the lock without preemption and releases it. Since a holder
/// never waits and is never preempted, a request spins at most the sum, over the other CPUs,
/// of their longest critical section on the lock. Inside a global section a thread may not
/// wait (sleep, join, wait for another lock, a condition variable or a semaphore unit) nor
/// take a second global lock: those calls are refused with
/// [`LockError::GlobalHeld`](crate::sync::LockError::GlobalHeld) (a sleep or a join ends the
/// run with [`Error::GlobalLockHeld`](crate::Error::GlobalLockHeld)).
///
/// A lock under this protocol is created before the run
/// ([`Runtime::create_mutex`](crate::Runtime::create_mutex)), and may be locked by threads
/// of any CPU of the runtime. Its [`LockSpec::cpu`](crate::sync::LockSpec::cpu) is ignored.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use tempi::policy::lock::{LockPolicy, Msrp};
/// use tempi::sync::LockSpec;
/// use tempi::{Runtime, ThreadSpec, Time};
///
/// assert!(Msrp.global());
/// let mut rt = Runtime::simulated(2);
/// let m = Arc::new(rt.create_mutex(0u32, LockSpec::new("bus").protocol("msrp")).unwrap());
/// for cpu in 0..2 {
///     let m = m.clone();
///     rt.spawn(ThreadSpec::new(format!("t{cpu}")).cpu(cpu), move |cx| {
///         let mut n = m.lock(cx).unwrap();
///         cx.work(Duration::from_millis(1));
///         *n += 1;
///     }).unwrap();
/// }
/// let out = rt.run().unwrap();
/// // One of the two spun for 1 ms, then held the lock for 1 ms.
/// assert_eq!(out.end, Time::from_millis(2));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Msrp;

impl LockPolicy for Msrp {
    fn blocking_bound(&self) -> Option<BlockingBound> {
        Some(BlockingBound::Msrp)
    }
    fn name(&self) -> &str {
        "msrp"
    }
    /// The holder runs above every thread of its CPU: it is not preemptible.
    fn holding_urgency(&self, _owner: &SchedInfo, _lock: &LockView) -> Option<Urgency> {
        Some(Urgency(i64::MAX))
    }
    fn detects_deadlock(&self) -> bool {
        false
    }
    fn global(&self) -> bool {
        true
    }
}
