//! First come, first served.

use super::QueuePolicy;
use crate::policy::sched::SchedInfo;

/// Arrival order (FREE JAZZ's default for semaphores).
///
/// ```
/// use tempi::policy::queue::{ArrivalOrder, QueuePolicy};
/// assert_eq!(ArrivalOrder.name(), "fifo");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ArrivalOrder;

impl QueuePolicy for ArrivalOrder {
    fn name(&self) -> &str {
        "fifo"
    }
    fn rank(&self, _waiter: &SchedInfo) -> i64 {
        0
    }
}
