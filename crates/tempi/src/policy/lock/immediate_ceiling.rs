//! SRP / immediate ceiling (POSIX "priority protect").

use super::{BlockingBound, LockPolicy, LockView};
use crate::policy::sched::{SchedInfo, Urgency};

/// Immediate ceiling: taking the lock raises the owner to the lock's ceiling at once, so no
/// thread that could ask for the lock can preempt the owner. On one CPU a thread then never
/// finds such a lock taken once it runs: blocking happens before it starts, at most once.
///
/// A lock used with this protocol needs a ceiling: declared, or computed from its users.
///
/// ```
/// use tempi::policy::lock::{ImmediateCeiling, LockPolicy};
/// assert_eq!(ImmediateCeiling.name(), "srp");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ImmediateCeiling;

impl LockPolicy for ImmediateCeiling {
    fn blocking_bound(&self) -> Option<BlockingBound> {
        Some(BlockingBound::Srp)
    }
    fn needs_ceiling(&self) -> bool {
        true
    }
    fn name(&self) -> &str {
        "srp"
    }
    fn holding_urgency(&self, _owner: &SchedInfo, lock: &LockView) -> Option<Urgency> {
        lock.ceiling
    }
}
