//! First come, first served, non-preemptive.
//!
//! Owns a plain arrival-order queue. Urgency is ignored for ordering and a wakeup never
//! preempts: a thread keeps the CPU until it blocks, yields or ends its job. This is the
//! cooperative mode FREE JAZZ describes as the simplest way to share data between threads.

use super::{ReadyQueue, ReadyReason, SchedInfo, Scheduler, Urgency, DEFAULT_QUEUE};
use crate::thread::ThreadId;
use crate::time::Time;

/// Non-preemptive FIFO.
///
/// ```
/// use tempi::policy::sched::{Fifo, Scheduler};
/// assert_eq!(Fifo::new().name(), "fifo");
/// ```
#[derive(Debug, Clone)]
pub struct Fifo {
    queue: ReadyQueue,
}

impl Fifo {
    /// An empty policy instance.
    ///
    /// ```
    /// let _ = tempi::policy::sched::Fifo::new();
    /// ```
    pub fn new() -> Fifo {
        Fifo { queue: ReadyQueue::with_capacity(DEFAULT_QUEUE) }
    }
}

impl Default for Fifo {
    fn default() -> Self {
        Self::new()
    }
}

impl Scheduler for Fifo {
    fn name(&self) -> &str {
        "fifo"
    }
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        Urgency::from_priority(t.priority)
    }
    fn on_ready(&mut self, t: &SchedInfo, _why: ReadyReason) {
        self.queue.push_back(t.id, Urgency(0));
    }
    fn on_removed(&mut self, id: ThreadId) {
        self.queue.remove(id);
    }
    fn should_preempt(&self, _running: &SchedInfo, _woken: &SchedInfo) -> bool {
        false
    }
    fn pick_next(&mut self, _now: Time) -> Option<ThreadId> {
        self.queue.pop()
    }
}
