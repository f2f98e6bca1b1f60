//! Fixed-priority preemptive scheduling (POSIX `SCHED_FIFO` semantics).
//!
//! Owns a ready queue ordered by effective urgency (base priority, raised by inheritance).
//! A preempted thread goes back to the head of its level; a yielding or newly ready one to the
//! tail. Use [`crate::assign_rate_monotonic`] or [`crate::assign_deadline_monotonic`] to derive
//! priorities from timing attributes.

use super::{ReadyQueue, ReadyReason, SchedInfo, Scheduler, Urgency, DEFAULT_QUEUE};
use crate::thread::ThreadId;
use crate::time::Time;

/// Fixed-priority preemptive policy: larger priority runs first, FIFO among equals.
///
/// ```
/// use tempi::policy::sched::{FixedPriority, Scheduler};
/// assert_eq!(FixedPriority::new().name(), "fp");
/// ```
#[derive(Debug, Clone)]
pub struct FixedPriority {
    queue: ReadyQueue,
}

impl FixedPriority {
    /// An empty policy instance.
    ///
    /// ```
    /// let _ = tempi::policy::sched::FixedPriority::new();
    /// ```
    pub fn new() -> FixedPriority {
        FixedPriority { queue: ReadyQueue::with_capacity(DEFAULT_QUEUE) }
    }
}

impl Default for FixedPriority {
    fn default() -> Self {
        Self::new()
    }
}

impl Scheduler for FixedPriority {
    fn name(&self) -> &str {
        "fp"
    }
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        Urgency::from_priority(t.priority)
    }
    fn on_ready(&mut self, t: &SchedInfo, why: ReadyReason) {
        if why == ReadyReason::Preempted {
            self.queue.push_front(t.id, t.urgency);
        } else {
            self.queue.push_back(t.id, t.urgency);
        }
    }
    fn on_removed(&mut self, id: ThreadId) {
        self.queue.remove(id);
    }
    fn pick_next(&mut self, _now: Time) -> Option<ThreadId> {
        self.queue.pop()
    }
    fn on_handed_over(&mut self, woken: &SchedInfo, running: &SchedInfo, _: Urgency, _: Time) -> Option<ThreadId> {
        // The running thread is not queued: its urgency change moves nothing.
        self.queue.push_back_front_pop((woken.id, woken.urgency), (running.id, running.urgency))
    }
    fn on_urgency_changed(&mut self, t: &SchedInfo, _old: Urgency) {
        self.queue.update(t.id, t.urgency);
    }
}
