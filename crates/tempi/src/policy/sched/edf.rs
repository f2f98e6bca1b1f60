//! Earliest deadline first, preemptive.
//!
//! The ready queue is ordered by effective urgency, which for EDF is the current job's
//! absolute deadline (earlier first; threads without a deadline run last, FIFO among
//! themselves). A wakeup preempts only with a strictly earlier deadline, so equal deadlines do
//! not thrash.

use super::{QueueDiscipline, QueueScheduler, SchedInfo, Urgency};

/// Preemptive EDF.
///
/// ```
/// use tempi::policy::sched::{Edf, Scheduler};
/// assert_eq!(Edf::new().name(), "edf");
/// ```
pub type Edf = QueueScheduler<EdfDiscipline>;

/// What makes a [`QueueScheduler`] EDF: urgency is the current job's absolute deadline.
///
/// ```
/// use tempi::policy::sched::{EdfDiscipline, QueueDiscipline};
/// assert_eq!(EdfDiscipline::NAME, "edf");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct EdfDiscipline;

impl QueueDiscipline for EdfDiscipline {
    const NAME: &'static str = "edf";
    const DEADLINE_ORDER: bool = true;
    #[inline]
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        Urgency::from_deadline(t.deadline)
    }
}

impl Edf {
    /// An empty policy instance.
    ///
    /// ```
    /// let _ = tempi::policy::sched::Edf::new();
    /// ```
    pub fn new() -> Edf {
        QueueScheduler::with_discipline(EdfDiscipline)
    }
}
