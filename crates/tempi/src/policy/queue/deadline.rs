//! Earliest deadline first.

use super::QueuePolicy;
use crate::policy::sched::{SchedInfo, Urgency};

/// The absolute deadline of the waiter's current job, earliest first; waiters without a
/// deadline last, in arrival order.
///
/// ```
/// use tempi::policy::queue::{ByDeadline, QueuePolicy};
/// assert_eq!(ByDeadline.name(), "deadline");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ByDeadline;

impl QueuePolicy for ByDeadline {
    fn name(&self) -> &str {
        "deadline"
    }
    fn rank(&self, waiter: &SchedInfo) -> i64 {
        Urgency::from_deadline(waiter.deadline).0
    }
    /// A message's constraint read as its absolute deadline in ns, earliest first; a
    /// constraint of zero or less (none) after every deadline, in arrival order.
    fn rank_message(&self, msg: &crate::plain::Message, _receiver: &SchedInfo) -> Option<i64> {
        Some(if msg.constraint > 0 { -msg.constraint } else { i64::MIN })
    }
}
