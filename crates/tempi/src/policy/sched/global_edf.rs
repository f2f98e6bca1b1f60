//! Global earliest deadline first: one ready queue for every CPU of a virtual-time run.
//!
//! The queue is the one [`super::Edf`] keeps (earliest absolute deadline first, FIFO among
//! equal deadlines, a preempted thread at the head of its level); what differs is
//! [`super::Scheduler::global`]: one instance (the first CPU's) serves the whole run and the
//! kernel runs its `m` most urgent ready threads on the `m` CPUs, moving a thread to whichever
//! CPU is free (a migration). See the kernel's `global` module for who decides what.
//!
//! Must not: know which CPU runs what (the kernel does), or be used in real time (the runtime
//! refuses it with [`crate::Error::Global`]).

use super::{QueueDiscipline, QueueScheduler, SchedInfo, Urgency};

/// Global preemptive EDF over every CPU of a virtual-time run.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::sched::{GlobalEdf, Scheduler};
/// use tempi::{Runtime, ThreadSpec, Time};
/// assert!(GlobalEdf::new().global());
/// // Three threads on two CPUs: the third runs on whichever CPU frees first.
/// let mut rt = Runtime::simulated(2);
/// rt.set_scheduler(|| Box::new(GlobalEdf::new()));
/// for (name, d) in [("a", 4), ("b", 5), ("c", 6)] {
///     let spec = ThreadSpec::new(name).deadline(Duration::from_millis(d));
///     rt.spawn(spec, |cx| cx.work(Duration::from_millis(2))).unwrap();
/// }
/// let out = rt.run().unwrap();
/// assert_eq!(out.end, Time::from_millis(4));
/// ```
pub type GlobalEdf = QueueScheduler<GlobalEdfDiscipline>;

/// What makes a [`QueueScheduler`] global EDF: urgency is the current job's absolute
/// deadline, and the one instance serves every CPU.
///
/// ```
/// use tempi::policy::sched::{GlobalEdfDiscipline, QueueDiscipline};
/// assert_eq!(GlobalEdfDiscipline::NAME, "global-edf");
/// assert!(GlobalEdfDiscipline::GLOBAL);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct GlobalEdfDiscipline;

impl QueueDiscipline for GlobalEdfDiscipline {
    const NAME: &'static str = "global-edf";
    const GLOBAL: bool = true;
    const DEADLINE_ORDER: bool = true;
    #[inline]
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        Urgency::from_deadline(t.deadline)
    }
}

impl GlobalEdf {
    /// An empty policy instance.
    ///
    /// ```
    /// use tempi::policy::sched::Scheduler;
    /// assert_eq!(tempi::policy::sched::GlobalEdf::new().name(), "global-edf");
    /// ```
    pub fn new() -> GlobalEdf {
        QueueScheduler::with_discipline(GlobalEdfDiscipline)
    }
}
