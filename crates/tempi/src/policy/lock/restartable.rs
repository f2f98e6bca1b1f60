//! RCS, the restartable critical section protocol.

use super::{BlockingBound, LockPolicy};
use crate::policy::sched::SchedInfo;

/// Restartable critical sections: a more urgent thread that wants a lock held by a preempted
/// thread aborts that thread's critical section instead of waiting for its end. The aborted
/// holder restores the protected data (the lock keeps a snapshot taken at entry), releases the
/// lock while running at the aborter's urgency (inheritance during recovery), and reruns its
/// section later. Only sections entered with [`crate::sync::Mutex::critical`] can be
/// restarted; a holder that entered with a guard is waited for, as under inheritance.
///
/// ```
/// use tempi::policy::lock::{LockPolicy, Restartable};
/// assert!(Restartable.inherits());
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Restartable;

impl LockPolicy for Restartable {
    fn blocking_bound(&self) -> Option<BlockingBound> {
        Some(BlockingBound::Rcs)
    }
    fn name(&self) -> &str {
        "rcs"
    }
    fn raises_holder(&self) -> bool {
        false
    }
    fn inherits(&self) -> bool {
        true
    }
    fn aborts_owner(&self, requester: &SchedInfo, owner: &SchedInfo) -> bool {
        requester.urgency > owner.urgency
    }
}
