//! [`PlanFirst`]: runs the threads that execute a Spring plan above everything the CPU's own
//! scheduler holds, and hands the gaps to that scheduler.
//!
//! Owns the band of *planned* threads: those whose base priority is at least
//! [`PLANNED_PRIORITY`] (the executing threads of guaranteed tasks, and the planner's own
//! thread at [`PLANNER_PRIORITY`]). It sees threads only through [`SchedInfo`] and the
//! wrapped scheduler only through the [`Scheduler`] trait; it must not reach into the kernel
//! or into the plan.
//!
//! Planned threads get an urgency above every urgency a built-in policy gives, ordered among
//! themselves by priority, FIFO among equals, and are never time-sliced. Every other thread
//! goes to the wrapped scheduler unchanged: its urgency, queueing, preemption rule and time
//! slices are the wrapped scheduler's own. A planned thread that becomes ready preempts any
//! unplanned one; an unplanned one never preempts a planned one.

use std::sync::Arc;
use std::time::Duration;

use super::{ReadyQueue, ReadyReason, SchedInfo, Scheduler, SchedulerFactory, Urgency};
use crate::plain::ThreadId;
use crate::Time;

/// The base priority of a thread executing guaranteed tasks. Priorities at or above it are
/// reserved for plan execution wherever a [`PlanFirst`] schedules.
///
/// ```
/// assert_eq!(tempi::policy::sched::PLANNED_PRIORITY, i32::MAX - 1);
/// ```
pub const PLANNED_PRIORITY: i32 = i32::MAX - 1;

/// The base priority of the planner's thread: above the guaranteed tasks, so planning at an
/// instant happens before anything else runs then (it takes no simulated time).
///
/// ```
/// assert!(tempi::policy::sched::PLANNER_PRIORITY > tempi::policy::sched::PLANNED_PRIORITY);
/// ```
pub const PLANNER_PRIORITY: i32 = i32::MAX;

/// A scheduler that puts planned threads first and lets `inner` schedule the rest.
///
/// Threads whose base priority is at least [`PLANNED_PRIORITY`] run above every thread of
/// `inner`, ordered among themselves by priority, FIFO among equals, never time-sliced; every
/// other thread is queued, preempted and time-sliced by `inner` exactly as without the wrapper.
///
/// ```
/// use tempi::policy::sched::{Edf, PlanFirst, Scheduler};
/// let s = PlanFirst::new(Box::new(Edf::new()));
/// assert_eq!(s.name(), "edf");
/// ```
pub struct PlanFirst {
    inner: Box<dyn Scheduler>,
    planned: ReadyQueue,
}

impl PlanFirst {
    /// Wrap `inner`. Room for 64 ready planned threads is made now (more grows the queue).
    ///
    /// ```
    /// let _ = tempi::policy::sched::PlanFirst::new(Box::new(tempi::policy::sched::FixedPriority::new()));
    /// ```
    pub fn new(inner: Box<dyn Scheduler>) -> PlanFirst {
        PlanFirst { inner, planned: ReadyQueue::with_capacity(64) }
    }

    /// A factory building a [`PlanFirst`] around each scheduler `factory` builds.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tempi::policy::sched::{Fifo, PlanFirst, Scheduler, SchedulerFactory};
    /// let f: SchedulerFactory = Arc::new(|| Box::new(Fifo::new()) as Box<dyn Scheduler>);
    /// assert_eq!(PlanFirst::wrap(f)().name(), "fifo");
    /// ```
    pub fn wrap(factory: SchedulerFactory) -> SchedulerFactory {
        Arc::new(move || Box::new(PlanFirst::new(factory())) as Box<dyn Scheduler>)
    }

    /// Whether `t` belongs to the planned band.
    ///
    /// ```
    /// # use tempi::policy::sched::{PlanFirst, SchedInfo, Urgency, PLANNED_PRIORITY};
    /// # let mut rt = tempi::Runtime::simulated(1);
    /// # let id = rt.spawn(tempi::ThreadSpec::new("a"), |_| {}).unwrap();
    /// let info = SchedInfo {
    ///     id, cpu: 0, priority: PLANNED_PRIORITY, urgency: Urgency(0), importance: 0,
    ///     release: tempi::Time::ZERO, deadline: None, period: None, relative_deadline: None,
    ///     wcet: Default::default(), job_cpu_time: Default::default(), job: 0,
    /// };
    /// assert!(PlanFirst::is_planned(&info));
    /// ```
    pub fn is_planned(t: &SchedInfo) -> bool {
        t.priority >= PLANNED_PRIORITY
    }
}

impl Scheduler for PlanFirst {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        if Self::is_planned(t) {
            // i32::MAX - 1 and i32::MAX map to i64::MAX - 1 and i64::MAX.
            Urgency(i64::MAX - i64::from(i32::MAX - t.priority))
        } else {
            self.inner.base_urgency(t)
        }
    }

    fn on_ready(&mut self, t: &SchedInfo, why: ReadyReason) {
        if Self::is_planned(t) {
            if why == ReadyReason::Preempted {
                self.planned.push_front(t.id, t.urgency);
            } else {
                self.planned.push_back(t.id, t.urgency);
            }
        } else {
            self.inner.on_ready(t, why);
        }
    }

    fn on_yield(&mut self, t: &SchedInfo) {
        if Self::is_planned(t) {
            self.planned.push_back(t.id, t.urgency);
        } else {
            self.inner.on_yield(t);
        }
    }

    fn on_blocked(&mut self, t: &SchedInfo) {
        if !Self::is_planned(t) {
            self.inner.on_blocked(t);
        }
    }

    fn on_removed(&mut self, id: ThreadId) {
        if !self.planned.remove(id) {
            self.inner.on_removed(id);
        }
    }

    fn should_preempt(&self, running: &SchedInfo, woken: &SchedInfo) -> bool {
        match (Self::is_planned(running), Self::is_planned(woken)) {
            (false, true) => true,
            (true, false) => false,
            (true, true) => woken.urgency > running.urgency,
            (false, false) => self.inner.should_preempt(running, woken),
        }
    }

    fn pick_next(&mut self, now: Time) -> Option<ThreadId> {
        match self.planned.pop() {
            Some(id) => Some(id),
            None => self.inner.pick_next(now),
        }
    }

    fn on_urgency_changed(&mut self, t: &SchedInfo, old: Urgency) {
        if Self::is_planned(t) {
            self.planned.update(t.id, t.urgency);
        } else {
            self.inner.on_urgency_changed(t, old);
        }
    }

    fn time_sliced(&self) -> bool {
        self.inner.time_sliced()
    }

    fn time_slice(&self, t: &SchedInfo) -> Option<Duration> {
        if Self::is_planned(t) {
            None
        } else {
            self.inner.time_slice(t)
        }
    }
}
