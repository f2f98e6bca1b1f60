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
}
