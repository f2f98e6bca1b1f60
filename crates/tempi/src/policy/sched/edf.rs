//! Earliest deadline first, preemptive.
//!
//! Owns a ready queue ordered by effective urgency, which for EDF is the current job's absolute
//! deadline (earlier first; threads without a deadline run last, FIFO among themselves). A
//! wakeup preempts only with a strictly earlier deadline, so equal deadlines do not thrash.

use super::{ReadyQueue, ReadyReason, SchedInfo, Scheduler, Urgency, DEFAULT_QUEUE};
use crate::thread::ThreadId;
use crate::time::Time;

/// Preemptive EDF.
///
/// ```
/// use tempi::policy::sched::{Edf, Scheduler};
/// assert_eq!(Edf::new().name(), "edf");
/// ```
#[derive(Debug, Clone)]
pub struct Edf {
    queue: ReadyQueue,
}

impl Edf {
    /// An empty policy instance.
    ///
    /// ```
    /// let _ = tempi::policy::sched::Edf::new();
    /// ```
    pub fn new() -> Edf {
        Edf { queue: ReadyQueue::with_capacity(DEFAULT_QUEUE) }
    }
}

impl Default for Edf {
    fn default() -> Self {
        Self::new()
    }
}

impl Scheduler for Edf {
    fn name(&self) -> &str {
        "edf"
    }
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        Urgency::from_deadline(t.deadline)
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
