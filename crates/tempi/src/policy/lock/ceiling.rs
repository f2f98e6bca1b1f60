//! PCP, the original priority ceiling protocol.

use super::{BlockingBound, LockPolicy, LockView};
use crate::policy::sched::SchedInfo;

/// Priority ceiling protocol (Sha, Rajkumar, Lehoczky): a thread may take a free lock only if
/// its urgency is above the ceilings of all locks held by other threads of its CPU; otherwise
/// it blocks, and the owner of the lock with the highest ceiling inherits its urgency. No
/// deadlock, and a job blocks at most once, for at most one critical section.
///
/// A lock used with PCP needs a ceiling: declared, or computed from its declared users.
///
/// ```
/// use tempi::policy::lock::{LockPolicy, PriorityCeiling};
/// assert_eq!(PriorityCeiling.name(), "pcp");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct PriorityCeiling;

impl LockPolicy for PriorityCeiling {
    fn blocking_bound(&self) -> Option<BlockingBound> {
        Some(BlockingBound::Pcp)
    }
    fn needs_ceiling(&self) -> bool {
        true
    }
    fn name(&self) -> &str {
        "pcp"
    }
    fn raises_holder(&self) -> bool {
        false
    }
    fn may_acquire(&self, requester: &SchedInfo, lock: &LockView) -> bool {
        lock.system_ceiling.is_none_or(|c| requester.urgency > c)
    }
    fn inherits(&self) -> bool {
        true
    }
    fn detects_deadlock(&self) -> bool {
        false
    }
}
