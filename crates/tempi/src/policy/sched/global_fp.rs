//! Global fixed priority: one ready queue for every CPU of a virtual-time run.
//!
//! The queue is the one [`super::FixedPriority`] keeps (larger priority first, FIFO among
//! equals, a preempted thread at the head of its level); what differs is
//! [`super::Scheduler::global`]: one instance (the first CPU's) serves the whole run and the
//! kernel runs its `m` most urgent ready threads on the `m` CPUs, moving a thread to whichever
//! CPU is free (a migration). See the kernel's `global` module for who decides what.
//!
//! Must not: know which CPU runs what (the kernel does), or be used in real time (the runtime
//! refuses it with [`crate::Error::Global`]).

use super::{QueueDiscipline, QueueScheduler, SchedInfo, Urgency};

/// Global preemptive fixed priority over every CPU of a virtual-time run.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::sched::{GlobalFp, Scheduler};
/// use tempi::{Runtime, ThreadSpec, Time};
/// assert!(GlobalFp::new().global());
/// let mut rt = Runtime::simulated(2);
/// rt.set_scheduler(|| Box::new(GlobalFp::new()));
/// for (name, p) in [("a", 3), ("b", 2), ("c", 1)] {
///     rt.spawn(ThreadSpec::new(name).priority(p), |cx| cx.work(Duration::from_millis(2))).unwrap();
/// }
/// let out = rt.run().unwrap();
/// assert_eq!(out.end, Time::from_millis(4));
/// ```
pub type GlobalFp = QueueScheduler<GlobalFpDiscipline>;

/// What makes a [`QueueScheduler`] global fixed priority: urgency is the thread's base
/// priority, and the one instance serves every CPU.
///
/// ```
/// use tempi::policy::sched::{GlobalFpDiscipline, QueueDiscipline};
/// assert_eq!(GlobalFpDiscipline::NAME, "global-fp");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct GlobalFpDiscipline;

impl QueueDiscipline for GlobalFpDiscipline {
    const NAME: &'static str = "global-fp";
    const GLOBAL: bool = true;
    const PRIORITY_ORDER: bool = true;
    #[inline]
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        Urgency::from_priority(t.priority)
    }
}

impl GlobalFp {
    /// An empty policy instance.
    ///
    /// ```
    /// use tempi::policy::sched::Scheduler;
    /// assert_eq!(tempi::policy::sched::GlobalFp::new().name(), "global-fp");
    /// ```
    pub fn new() -> GlobalFp {
        QueueScheduler::with_discipline(GlobalFpDiscipline)
    }
}
