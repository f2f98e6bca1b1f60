//! First come, first served.

use super::QueuePolicy;
use crate::policy::sched::SchedInfo;

/// Arrival order (FREE JAZZ's default for semaphores).
///
/// ```
/// use tempi::policy::queue::{Fifo, QueuePolicy};
/// assert_eq!(Fifo.name(), "fifo");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Fifo;

impl QueuePolicy for Fifo {
    fn name(&self) -> &str {
        "fifo"
    }
    fn rank(&self, _waiter: &SchedInfo) -> i64 {
        0
    }
}
