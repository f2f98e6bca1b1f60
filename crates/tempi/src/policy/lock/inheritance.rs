//! BPI, basic priority inheritance.

use super::{BlockingBound, LockPolicy};

/// Priority inheritance: the owner runs at the highest urgency of the threads waiting for it,
/// transitively through chains of blocked owners and across nested locks; releasing one of
/// several held locks keeps exactly what the remaining waiters lend.
///
/// ```
/// use tempi::policy::lock::{LockPolicy, PriorityInheritance};
/// assert!(PriorityInheritance.inherits());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct PriorityInheritance;

impl LockPolicy for PriorityInheritance {
    fn blocking_bound(&self) -> Option<BlockingBound> {
        Some(BlockingBound::Bpi)
    }
    fn uncontended_fast_path(&self) -> bool {
        true
    }
    fn name(&self) -> &str {
        "bpi"
    }
    fn raises_holder(&self) -> bool {
        false
    }
    fn inherits(&self) -> bool {
        true
    }
}
