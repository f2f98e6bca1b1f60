//! Fixed-priority preemptive scheduling (POSIX `SCHED_FIFO` semantics).
//!
//! The ready queue is ordered by effective urgency (base priority, raised by inheritance). A
//! preempted thread goes back to the head of its level; a yielding or newly ready one to the
//! tail. Use [`crate::assign_rate_monotonic`] or [`crate::assign_deadline_monotonic`] to derive
//! priorities from timing attributes.

use super::{QueueDiscipline, QueueScheduler, SchedInfo, Urgency};

/// Fixed-priority preemptive policy: larger priority runs first, FIFO among equals.
///
/// ```
/// use tempi::policy::sched::{FixedPriority, Scheduler};
/// assert_eq!(FixedPriority::new().name(), "fp");
/// ```
pub type FixedPriority = QueueScheduler<FixedPriorityDiscipline>;

/// What makes a [`QueueScheduler`] fixed-priority: urgency is the thread's base priority.
///
/// ```
/// use tempi::policy::sched::{FixedPriorityDiscipline, QueueDiscipline};
/// assert_eq!(FixedPriorityDiscipline::NAME, "fp");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct FixedPriorityDiscipline;

impl QueueDiscipline for FixedPriorityDiscipline {
    const NAME: &'static str = "fp";
    const PRIORITY_ORDER: bool = true;
    #[inline]
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        Urgency::from_priority(t.priority)
    }
}

impl FixedPriority {
    /// An empty policy instance.
    ///
    /// ```
    /// let _ = tempi::policy::sched::FixedPriority::new();
    /// ```
    pub fn new() -> FixedPriority {
        QueueScheduler::with_discipline(FixedPriorityDiscipline)
    }
}
