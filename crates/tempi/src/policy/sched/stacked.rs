//! Stacking schedulers: a policy written as a decorator over the one it replaces
//! ([`StackedScheduler`]), and [`WaitInheritance`], the decorator that answers CALL and
//! PROCURE with classic priority inheritance.
//!
//! FREE JAZZ's `register_scheduler(handler, event)` returns the previous handler of the event so
//! the new one can forward to it. Here the unit is the whole [`Scheduler`]:
//! [`crate::Runtime::stack_scheduler`] hands the scheduler built so far to a closure that wraps
//! it, and the wrapper becomes the CPU's scheduler. A wrapper implements [`StackedScheduler`]:
//! every hook it does not write forwards to the previous scheduler, so it changes exactly the
//! decisions it overrides. The kernel knows nothing of the chain; it calls the top.

use std::time::Duration;

use super::{
    scheduler_hooks, BlockedAt, Events, InheritId, QueuedMessages, ReadyReason, SchedInfo, Schedule, Scheduler,
    Urgency, WakePick,
};
use crate::plain::ThreadId;
use crate::time::Time;

/// A scheduler stacked on a previous one: every hook defaults to forwarding to
/// [`StackedScheduler::prev`] (those that stand for other hooks, such as
/// [`Scheduler::on_handed_over`], to the trait's default through this scheduler's own hooks),
/// and every `StackedScheduler` is a [`Scheduler`]. Override the hooks whose decisions change.
/// Its hooks, their defaults and the blanket impl are generated from the one list of
/// `Scheduler`'s hooks (`scheduler_hooks!` in the parent module).
///
/// ```
/// use tempi::policy::sched::{FixedPriority, SchedInfo, Scheduler, StackedScheduler};
/// use tempi::{Runtime, ThreadSpec, Time, ThreadId};
///
/// /// Fixed priority, except that thread `favourite` always runs first when ready.
/// struct Favour { prev: Box<dyn Scheduler>, favourite: Option<ThreadId>, ready: bool }
/// impl StackedScheduler for Favour {
///     fn prev(&self) -> &dyn Scheduler { &*self.prev }
///     fn prev_mut(&mut self) -> &mut dyn Scheduler { &mut *self.prev }
///     fn pick_next(&mut self, now: Time) -> Option<ThreadId> {
///         match self.favourite {
///             Some(f) if self.ready && { self.prev.on_removed(f); true } => { self.ready = false; Some(f) }
///             _ => self.prev.pick_next(now),
///         }
///     }
///     fn on_ready(&mut self, t: &SchedInfo, why: tempi::policy::sched::ReadyReason) {
///         self.ready |= Some(t.id) == self.favourite;
///         self.prev.on_ready(t, why);
///     }
/// }
/// let mut rt = Runtime::simulated(1);
/// rt.set_scheduler(|| Box::new(FixedPriority::new()));
/// rt.stack_scheduler(|prev| Box::new(Favour { prev, favourite: None, ready: false }));
/// rt.spawn(ThreadSpec::new("t"), |_| {}).unwrap();
/// rt.run().unwrap();
/// ```
pub trait StackedScheduler {
    /// The scheduler this one is stacked on.
    fn prev(&self) -> &dyn Scheduler;
    /// The scheduler this one is stacked on, to forward to.
    fn prev_mut(&mut self) -> &mut dyn Scheduler;

    scheduler_hooks!(stacked_methods);
}

impl<S: StackedScheduler> Scheduler for S {
    scheduler_hooks!(blanket_methods);
}

/// Priority inheritance through handlers and semaphores, stacked on any policy: it asks for
/// CALL and PROCURE and lends a blocked thread's effective urgency to the holder of the busy
/// handler or to each thread inside the semaphore, when it is higher than the holder's; every
/// other decision is the previous scheduler's. NICE gives it back when the holder leaves.
///
/// ```
/// use tempi::policy::sched::{Events, FixedPriority, WaitInheritance, Scheduler};
/// let s = WaitInheritance::new(Box::new(FixedPriority::new()));
/// assert_eq!(s.name(), "fp");
/// assert_eq!(s.events(), Events::CALL | Events::PROCURE);
/// let mut rt = tempi::Runtime::simulated(1);
/// rt.stack_scheduler(|prev| Box::new(WaitInheritance::new(prev)));
/// ```
pub struct WaitInheritance {
    prev: Box<dyn Scheduler>,
    /// Asks for CALL and PROCURE of tamed threads only.
    tamed_only: bool,
}

impl WaitInheritance {
    /// Inheritance stacked on `prev`.
    ///
    /// ```
    /// let _ = tempi::policy::sched::WaitInheritance::new(Box::new(tempi::policy::sched::Edf::new()));
    /// ```
    pub fn new(prev: Box<dyn Scheduler>) -> WaitInheritance {
        WaitInheritance { prev, tamed_only: false }
    }

    /// Inheritance stacked on `prev` for the threads with `tame_prio_inv` on only (FREE
    /// JAZZ's choice of hearing of a blocking "only for threads that should endure bounded
    /// priority inversion at worst"): it asks for [`Events::TAMED_ONLY`] too, so the blocking
    /// of other threads lends nothing.
    ///
    /// ```
    /// use tempi::policy::sched::{Events, FixedPriority, WaitInheritance, Scheduler};
    /// let s = WaitInheritance::for_tamed(Box::new(FixedPriority::new()));
    /// assert!(s.events().contains(Events::TAMED_ONLY | Events::CALL | Events::PROCURE));
    /// ```
    pub fn for_tamed(prev: Box<dyn Scheduler>) -> WaitInheritance {
        WaitInheritance { prev, tamed_only: true }
    }

    fn lend(waiter: &SchedInfo, holder: &SchedInfo) -> Option<Urgency> {
        (waiter.urgency > holder.urgency).then_some(waiter.urgency)
    }
}

impl StackedScheduler for WaitInheritance {
    fn prev(&self) -> &dyn Scheduler {
        &*self.prev
    }
    fn prev_mut(&mut self) -> &mut dyn Scheduler {
        &mut *self.prev
    }
    fn events(&self) -> Events {
        let filter = if self.tamed_only { Events::TAMED_ONLY } else { Events::NONE };
        self.prev.events() | Events::CALL | Events::PROCURE | filter
    }
    fn take_prev(&mut self) -> Option<Box<dyn Scheduler>> {
        Some(std::mem::replace(&mut self.prev, Box::new(Vacant)))
    }
    fn on_call(
        &mut self,
        waiter: &SchedInfo,
        holder: &SchedInfo,
        at: BlockedAt,
        constraint: i64,
        id: InheritId,
    ) -> Option<Urgency> {
        let lent = Self::lend(waiter, holder);
        let below = self.prev.on_call(waiter, holder, at, constraint, id);
        lent.max(below)
    }
    fn on_procure(&mut self, waiter: &SchedInfo, holder: &SchedInfo, at: BlockedAt, id: InheritId) -> Option<Urgency> {
        let lent = Self::lend(waiter, holder);
        let below = self.prev.on_procure(waiter, holder, at, id);
        lent.max(below)
    }
}

/// What is left in a stacked scheduler once it has given the one below back
/// ([`Scheduler::take_prev`]): a scheduler with an empty ready queue that picks nothing. The
/// kernel drops the wrapper right after, so it is never asked to decide anything; a box of it
/// allocates nothing.
///
/// ```
/// use tempi::policy::sched::{Scheduler, Vacant};
/// use tempi::Time;
/// let mut v = Vacant;
/// assert_eq!(v.name(), "vacant");
/// assert_eq!(v.pick_next(Time::ZERO), None);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Vacant;

impl Scheduler for Vacant {
    fn name(&self) -> &str {
        "vacant"
    }
    fn base_urgency(&self, _thread: &SchedInfo) -> Urgency {
        Urgency::LOWEST
    }
    fn on_ready(&mut self, _thread: &SchedInfo, _why: ReadyReason) {}
    fn on_removed(&mut self, _id: ThreadId) {}
    fn pick_next(&mut self, _now: Time) -> Option<ThreadId> {
        None
    }
}
