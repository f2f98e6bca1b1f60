//! KM, the kernelized monitor: a critical section is not preemptable.

use super::{BlockingBound, LockPolicy, LockView};
use crate::policy::sched::{SchedInfo, Urgency};

/// Kernelized monitor: the owner runs above every other thread of its CPU until it unlocks,
/// so nothing preempts it inside the critical section. Blocking is bounded by one critical
/// section of any lower-urgency thread, even of threads that share no lock.
///
/// ```
/// use tempi::policy::lock::{KernelizedMonitor, LockPolicy};
/// assert_eq!(KernelizedMonitor.name(), "km");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelizedMonitor;

impl LockPolicy for KernelizedMonitor {
    fn blocking_bound(&self) -> Option<BlockingBound> {
        Some(BlockingBound::Km)
    }
    fn name(&self) -> &str {
        "km"
    }
    fn holding_urgency(&self, _owner: &SchedInfo, _lock: &LockView) -> Option<Urgency> {
        Some(Urgency(i64::MAX))
    }
}
