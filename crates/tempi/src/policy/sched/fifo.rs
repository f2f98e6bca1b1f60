//! First come, first served, non-preemptive.
//!
//! A plain arrival-order queue. Urgency is ignored for ordering and a wakeup never preempts:
//! a thread keeps the CPU until it blocks, yields or ends its job. This is the cooperative
//! mode FREE JAZZ describes as the simplest way to share data between threads.

use super::{QueueDiscipline, QueueScheduler, SchedInfo, Urgency};

/// Non-preemptive FIFO.
///
/// ```
/// use tempi::policy::sched::{Fifo, Scheduler};
/// assert_eq!(Fifo::new().name(), "fifo");
/// ```
pub type Fifo = QueueScheduler<FifoDiscipline>;

/// What makes a [`QueueScheduler`] FIFO: arrival order only, no preemption. A thread's
/// urgency (its priority) still matters to the locking protocols.
///
/// ```
/// use tempi::policy::sched::{FifoDiscipline, QueueDiscipline};
/// assert!(!FifoDiscipline::PREEMPTIVE && !FifoDiscipline::URGENCY_ORDER);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct FifoDiscipline;

impl QueueDiscipline for FifoDiscipline {
    const NAME: &'static str = "fifo";
    const URGENCY_ORDER: bool = false;
    const PREEMPTIVE: bool = false;
    #[inline]
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        Urgency::from_priority(t.priority)
    }
}

impl Fifo {
    /// An empty policy instance.
    ///
    /// ```
    /// let _ = tempi::policy::sched::Fifo::new();
    /// ```
    pub fn new() -> Fifo {
        QueueScheduler::with_discipline(FifoDiscipline)
    }
}
