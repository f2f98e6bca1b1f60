//! Most urgent first.

use super::QueuePolicy;
use crate::policy::sched::SchedInfo;

/// The waiter's effective urgency when it joined (priority under fixed priority, deadline
/// under EDF, including what it inherits).
///
/// ```
/// use tempi::policy::queue::{ByUrgency, QueuePolicy};
/// assert_eq!(ByUrgency.name(), "urgency");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ByUrgency;

impl QueuePolicy for ByUrgency {
    fn name(&self) -> &str {
        "urgency"
    }
    fn rank(&self, waiter: &SchedInfo) -> i64 {
        waiter.urgency.0
    }
}
