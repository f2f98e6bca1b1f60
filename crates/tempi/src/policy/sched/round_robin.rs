//! Round robin with a fixed quantum (POSIX `SCHED_RR` semantics).
//!
//! The ready queue is ordered by effective urgency, FIFO within a level. A dispatched thread
//! gets one quantum; when it runs out the kernel puts the thread at the tail of its level. A
//! more urgent wakeup preempts; the preempted thread returns to the head of its level and
//! keeps its quantum fresh on its next dispatch. With all priorities equal this is plain
//! round robin.

use std::time::Duration;

use super::{QueueDiscipline, QueueScheduler, SchedInfo, Urgency};

/// Round robin by priority level with quantum `q`.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::sched::{RoundRobin, Scheduler};
/// let rr = RoundRobin::new(Duration::from_millis(2));
/// assert_eq!(rr.name(), "rr");
/// ```
pub type RoundRobin = QueueScheduler<RoundRobinDiscipline>;

/// What makes a [`QueueScheduler`] round robin: fixed priorities and a quantum per dispatch.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::sched::RoundRobinDiscipline;
/// assert_eq!(RoundRobinDiscipline::new(Duration::from_millis(1)).quantum(), Duration::from_millis(1));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RoundRobinDiscipline {
    quantum: Duration,
}

impl RoundRobinDiscipline {
    /// The discipline with quantum `quantum`.
    ///
    /// # Panics
    /// If `quantum` is zero.
    ///
    /// ```
    /// let _ = tempi::policy::sched::RoundRobinDiscipline::new(std::time::Duration::from_micros(100));
    /// ```
    pub fn new(quantum: Duration) -> RoundRobinDiscipline {
        assert!(!quantum.is_zero(), "round robin needs a positive quantum");
        RoundRobinDiscipline { quantum }
    }

    /// The quantum.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(tempi::policy::sched::RoundRobinDiscipline::new(Duration::from_millis(2)).quantum(), Duration::from_millis(2));
    /// ```
    pub fn quantum(&self) -> Duration {
        self.quantum
    }
}

impl QueueDiscipline for RoundRobinDiscipline {
    const NAME: &'static str = "rr";
    const TIME_SLICED: bool = true;
    #[inline]
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        Urgency::from_priority(t.priority)
    }
    #[inline]
    fn time_slice(&self, _t: &SchedInfo) -> Option<Duration> {
        Some(self.quantum)
    }
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
        QueueScheduler::with_discipline(RoundRobinDiscipline::new(quantum))
    }
}
