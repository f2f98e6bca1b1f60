//! Round robin with a fixed quantum (POSIX `SCHED_RR` semantics).
//!
//! Owns a ready queue ordered by effective urgency, FIFO within a level. A dispatched thread
//! gets one quantum; when it runs out the kernel puts the thread at the tail of its level. A
//! more urgent wakeup preempts; the preempted thread returns to the head of its level and keeps
//! its quantum fresh on its next dispatch. With all priorities equal this is plain round robin.

use std::time::Duration;

use super::{ReadyQueue, ReadyReason, SchedInfo, Scheduler, Urgency, DEFAULT_QUEUE};
use crate::thread::ThreadId;
use crate::time::Time;

/// Round robin by priority level with quantum `q`.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::sched::{RoundRobin, Scheduler};
/// let rr = RoundRobin::new(Duration::from_millis(2));
/// assert_eq!(rr.name(), "rr");
/// ```
#[derive(Debug, Clone)]
pub struct RoundRobin {
    queue: ReadyQueue,
    quantum: Duration,
}

impl RoundRobin {
    /// An empty policy instance with the given quantum.
    ///
    /// # Panics
    /// If `quantum` is zero.
    ///
    /// ```
    /// let _ = tempi::policy::sched::RoundRobin::new(std::time::Duration::from_micros(500));
    /// ```
    pub fn new(quantum: Duration) -> RoundRobin {
        assert!(!quantum.is_zero(), "round robin needs a positive quantum");
        RoundRobin { queue: ReadyQueue::with_capacity(DEFAULT_QUEUE), quantum }
    }
}

impl Scheduler for RoundRobin {
    fn name(&self) -> &str {
        "rr"
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
    fn on_urgency_changed(&mut self, t: &SchedInfo, _old: Urgency) {
        self.queue.update(t.id, t.urgency);
    }
    fn time_sliced(&self) -> bool {
        true
    }
    fn time_slice(&self, _t: &SchedInfo) -> Option<Duration> {
        Some(self.quantum)
    }
}
