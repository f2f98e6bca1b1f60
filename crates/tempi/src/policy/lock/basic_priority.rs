//! BP, basic priority: urgency-ordered waiters, preemptable critical sections, no inheritance.

use super::{BlockingBound, LockPolicy};

/// Basic priority protocol: waiters are served in urgency order, the owner keeps its own
/// urgency. A high-urgency waiter can therefore wait for every medium-urgency thread that
/// preempts the owner: the unbounded priority inversion the other protocols exist to bound.
///
/// ```
/// use tempi::policy::lock::{BasicPriority, LockPolicy};
/// assert!(!BasicPriority.inherits());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct BasicPriority;

impl LockPolicy for BasicPriority {
    fn blocking_bound(&self) -> Option<BlockingBound> {
        Some(BlockingBound::Bp)
    }
    fn uncontended_fast_path(&self) -> bool {
        true
    }
    fn name(&self) -> &str {
        "bp"
    }
    fn raises_holder(&self) -> bool {
        false
    }
}
