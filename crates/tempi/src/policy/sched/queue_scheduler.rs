//! The ready-queue plumbing the built-in policies share: [`QueueScheduler`], a [`Scheduler`]
//! over one [`ReadyQueue`], parameterised by a [`QueueDiscipline`] that says what is
//! particular to a policy (its name, its urgency, whether it orders by urgency and preempts,
//! its time slice).
//!
//! Every hook here is on the dispatch or lock hand-off path. The discipline is a type
//! parameter, not an object, so each policy gets its own copy of the hooks with the
//! discipline's answers inlined: the choices below on its constants vanish at compile time.

use std::time::Duration;

use super::{ReadyQueue, ReadyReason, SchedInfo, Scheduler, Urgency, WakePick, DEFAULT_QUEUE};
use crate::plain::ThreadId;
use crate::time::Time;

/// What distinguishes one ready-queue policy from another. See [`QueueScheduler`].
///
/// A deadline-monotonic discipline (the shorter relative deadline runs first), with everything
/// else from [`QueueScheduler`]:
///
/// ```
/// use tempi::policy::sched::{QueueDiscipline, QueueScheduler, SchedInfo, Scheduler, Urgency};
///
/// #[derive(Clone, Copy, Debug, Default)]
/// struct ShortestRelativeDeadline;
/// impl QueueDiscipline for ShortestRelativeDeadline {
///     const NAME: &'static str = "srd";
///     fn base_urgency(&self, t: &SchedInfo) -> Urgency {
///         let d = t.relative_deadline.map_or(i64::MAX, |d| d.as_nanos().min(i64::MAX as u128) as i64);
///         Urgency(-d)
///     }
/// }
/// let s = QueueScheduler::with_discipline(ShortestRelativeDeadline);
/// assert_eq!(s.name(), "srd");
/// ```
pub trait QueueDiscipline {
    /// The policy's registry name, e.g. `"edf"`.
    const NAME: &'static str;

    /// Whether the queue is ordered by effective urgency: a preempted thread returns to the
    /// head of its level, an urgency change repositions a queued thread, and a hand-off runs
    /// the fused [`ReadyQueue::push_back_front_pop`]. When `false` the queue is in arrival
    /// order alone (every thread queued at the back, urgency changes ignored). Default: yes.
    const URGENCY_ORDER: bool = true;

    /// Whether a strictly more urgent wakeup preempts the running thread. Default: yes.
    const PREEMPTIVE: bool = true;

    /// Whether [`QueueDiscipline::time_slice`] may answer something. Default: no.
    const TIME_SLICED: bool = false;

    /// Whether one instance serves every CPU of a virtual-time run ([`Scheduler::global`]).
    /// Default: no.
    const GLOBAL: bool = false;

    /// Whether `base_urgency` is the current job's absolute deadline, earlier first, so that
    /// the policy is preemptive EDF ([`Scheduler::earliest_deadline_first`]; global EDF when
    /// [`QueueDiscipline::GLOBAL`]). Default: no.
    const DEADLINE_ORDER: bool = false;

    /// Whether `base_urgency` is the thread's base priority, so that the policy is
    /// preemptive fixed priority ([`Scheduler::fixed_priority`]; global fixed priority when
    /// [`QueueDiscipline::GLOBAL`]). Default: no.
    const PRIORITY_ORDER: bool = false;

    /// The urgency a thread has on its own ([`Scheduler::base_urgency`]).
    fn base_urgency(&self, thread: &SchedInfo) -> Urgency;

    /// The slice a dispatched thread gets ([`Scheduler::time_slice`]). Default: none.
    fn time_slice(&self, _thread: &SchedInfo) -> Option<Duration> {
        None
    }
}

/// A [`Scheduler`] that keeps its ready threads in one [`ReadyQueue`], with the policy's
/// particulars from its [`QueueDiscipline`]. The built-in [`super::FixedPriority`],
/// [`super::Edf`], [`super::Fifo`] and [`super::RoundRobin`] are instances.
///
/// ```
/// use tempi::policy::sched::{Edf, Scheduler};
/// let edf: Edf = Edf::new();
/// assert_eq!(edf.name(), "edf");
/// ```
#[derive(Debug, Clone)]
pub struct QueueScheduler<D> {
    queue: ReadyQueue,
    discipline: D,
}

impl<D: QueueDiscipline> QueueScheduler<D> {
    /// An empty scheduler with the given discipline, its queue pre-sized for the usual
    /// thread counts.
    ///
    /// ```
    /// use tempi::policy::sched::{FixedPriorityDiscipline, QueueScheduler, Scheduler};
    /// assert_eq!(QueueScheduler::with_discipline(FixedPriorityDiscipline).name(), "fp");
    /// ```
    pub fn with_discipline(discipline: D) -> QueueScheduler<D> {
        QueueScheduler { queue: ReadyQueue::with_capacity(DEFAULT_QUEUE), discipline }
    }

    /// The discipline.
    ///
    /// ```
    /// use std::time::Duration;
    /// let rr = tempi::policy::sched::RoundRobin::new(Duration::from_millis(3));
    /// assert_eq!(rr.discipline().quantum(), Duration::from_millis(3));
    /// ```
    pub fn discipline(&self) -> &D {
        &self.discipline
    }

    /// The key `thread` is queued under.
    #[inline(always)]
    fn key(thread: &SchedInfo) -> Urgency {
        if D::URGENCY_ORDER {
            thread.urgency
        } else {
            Urgency(0)
        }
    }
}

impl<D: QueueDiscipline + Default> Default for QueueScheduler<D> {
    fn default() -> Self {
        Self::with_discipline(D::default())
    }
}

impl<D: QueueDiscipline> Scheduler for QueueScheduler<D> {
    fn name(&self) -> &str {
        D::NAME
    }
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        self.discipline.base_urgency(t)
    }
    fn on_ready(&mut self, t: &SchedInfo, why: ReadyReason) {
        // POSIX: a preempted thread goes back to the head of its level.
        if D::URGENCY_ORDER && why == ReadyReason::Preempted {
            self.queue.push_front(t.id, t.urgency);
        } else {
            self.queue.push_back(t.id, Self::key(t));
        }
    }
    fn on_removed(&mut self, id: ThreadId) {
        self.queue.remove(id);
    }
    fn should_preempt(&self, running: &SchedInfo, woken: &SchedInfo) -> bool {
        D::PREEMPTIVE && woken.urgency > running.urgency
    }
    fn pick_next(&mut self, _now: Time) -> Option<ThreadId> {
        self.queue.pop()
    }
    fn on_handed_over(&mut self, woken: &SchedInfo, running: &SchedInfo, _: Urgency, now: Time) -> Option<ThreadId> {
        if D::URGENCY_ORDER {
            // The running thread is not queued: its urgency change moves nothing.
            self.queue.push_back_front_pop((woken.id, woken.urgency), (running.id, running.urgency))
        } else {
            self.on_ready(woken, ReadyReason::Woken);
            self.on_ready(running, ReadyReason::Preempted);
            self.pick_next(now)
        }
    }
    fn on_woken_pick(&mut self, woken: &SchedInfo, running: &SchedInfo, now: Time) -> WakePick {
        if !self.should_preempt(running, woken) {
            self.on_ready(woken, ReadyReason::Woken);
            return WakePick::Stays;
        }
        // The rest is a hand-over in which the running thread keeps its urgency.
        WakePick::Preempted(self.on_handed_over(woken, running, running.urgency, now))
    }
    fn on_yield_pick(&mut self, t: &SchedInfo, _now: Time) -> Option<ThreadId> {
        // `on_yield` is `on_ready(Yielded)`, a `push_back`; `pick_next` is a `pop`.
        Some(self.queue.push_back_pop(t.id, Self::key(t)))
    }
    fn on_urgency_changed(&mut self, t: &SchedInfo, _old: Urgency) {
        if D::URGENCY_ORDER {
            self.queue.update(t.id, t.urgency);
        }
    }
    fn time_sliced(&self) -> bool {
        D::TIME_SLICED
    }
    fn global(&self) -> bool {
        D::GLOBAL
    }
    fn earliest_deadline_first(&self) -> bool {
        D::DEADLINE_ORDER && D::PREEMPTIVE && D::URGENCY_ORDER
    }
    fn fixed_priority(&self) -> bool {
        D::PRIORITY_ORDER && D::PREEMPTIVE && D::URGENCY_ORDER
    }
    fn time_slice(&self, t: &SchedInfo) -> Option<Duration> {
        self.discipline.time_slice(t)
    }
}
