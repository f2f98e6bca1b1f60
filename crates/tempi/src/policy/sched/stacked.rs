//! Stacking schedulers: a policy written as a decorator over the one it replaces
//! ([`StackedScheduler`]), and [`PriorityInheritance`], the decorator that answers CALL and
//! PROCURE with classic priority inheritance.
//!
//! FREE JAZZ's `register_scheduler(handler, event)` returns the previous handler of the event so
//! the new one can forward to it. Here the unit is the whole [`Scheduler`]:
//! [`crate::Runtime::stack_scheduler`] hands the scheduler built so far to a closure that wraps
//! it, and the wrapper becomes the CPU's scheduler. A wrapper implements [`StackedScheduler`]:
//! every hook it does not write forwards to the previous scheduler, so it changes exactly the
//! decisions it overrides. The kernel knows nothing of the chain; it calls the top.

use std::time::Duration;

use super::{Events, InheritId, QueuedMessages, ReadyReason, SchedInfo, Schedule, Scheduler, Stymie, Urgency};
use crate::plain::ThreadId;
use crate::time::Time;

/// A scheduler stacked on a previous one: every method defaults to forwarding to
/// [`StackedScheduler::prev`], and every `StackedScheduler` is a [`Scheduler`]. Override the
/// hooks whose decisions change.
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

    /// [`Scheduler::name`]; default: the previous one's.
    fn name(&self) -> &str {
        self.prev().name()
    }
    /// [`Scheduler::base_urgency`].
    fn base_urgency(&self, thread: &SchedInfo) -> Urgency {
        self.prev().base_urgency(thread)
    }
    /// [`Scheduler::on_ready`].
    fn on_ready(&mut self, thread: &SchedInfo, why: ReadyReason) {
        self.prev_mut().on_ready(thread, why)
    }
    /// [`Scheduler::on_yield`].
    fn on_yield(&mut self, thread: &SchedInfo) {
        self.prev_mut().on_yield(thread)
    }
    /// [`Scheduler::on_blocked`].
    fn on_blocked(&mut self, thread: &SchedInfo) {
        self.prev_mut().on_blocked(thread)
    }
    /// [`Scheduler::on_removed`].
    fn on_removed(&mut self, id: ThreadId) {
        self.prev_mut().on_removed(id)
    }
    /// [`Scheduler::should_preempt`].
    fn should_preempt(&self, running: &SchedInfo, woken: &SchedInfo) -> bool {
        self.prev().should_preempt(running, woken)
    }
    /// [`Scheduler::pick_next`].
    fn pick_next(&mut self, now: Time) -> Option<ThreadId> {
        self.prev_mut().pick_next(now)
    }
    /// [`Scheduler::on_handed_over`]. The default forwards the three calls and the pick it
    /// stands for through this scheduler's own hooks, so overriding any of them is seen.
    fn on_handed_over(
        &mut self,
        woken: &SchedInfo,
        running: &SchedInfo,
        running_was: Urgency,
        now: Time,
    ) -> Option<ThreadId> {
        self.on_urgency_changed(running, running_was);
        self.on_ready(woken, ReadyReason::Woken);
        self.on_ready(running, ReadyReason::Preempted);
        self.pick_next(now)
    }
    /// [`Scheduler::on_urgency_changed`].
    fn on_urgency_changed(&mut self, thread: &SchedInfo, old: Urgency) {
        self.prev_mut().on_urgency_changed(thread, old)
    }
    /// [`Scheduler::time_sliced`].
    fn time_sliced(&self) -> bool {
        self.prev().time_sliced()
    }
    /// [`Scheduler::time_slice`].
    fn time_slice(&self, thread: &SchedInfo) -> Option<Duration> {
        self.prev().time_slice(thread)
    }
    /// [`Scheduler::global`].
    fn global(&self) -> bool {
        self.prev().global()
    }
    /// [`Scheduler::earliest_deadline_first`]: what the policy below answers. A wrapper that
    /// changes the decisions of an EDF policy below it answers `false`.
    fn earliest_deadline_first(&self) -> bool {
        self.prev().earliest_deadline_first()
    }
    /// [`Scheduler::events`].
    fn events(&self) -> Events {
        self.prev().events()
    }
    /// [`Scheduler::take_prev`]: give the previous scheduler back when un-stacked. Default:
    /// `None` (this wrapper cannot be un-stacked); a wrapper that keeps no threads of its own
    /// writes `Some(std::mem::replace(&mut self.prev, Box::new(Vacant)))`.
    fn take_prev(&mut self) -> Option<Box<dyn Scheduler>> {
        None
    }
    /// [`Scheduler::on_schedule`]. The default goes through this scheduler's own
    /// [`StackedScheduler::on_yield`] and [`StackedScheduler::on_ready`], as the trait's does.
    fn on_schedule(&mut self, thread: &SchedInfo, why: Schedule) {
        match why {
            Schedule::Yield => self.on_yield(thread),
            Schedule::Quantum => self.on_ready(thread, ReadyReason::SliceExpired),
        }
    }
    /// [`Scheduler::on_message_ready`].
    fn on_message_ready(&mut self, thread: &SchedInfo, constraint: i64) {
        self.prev_mut().on_message_ready(thread, constraint)
    }
    /// [`Scheduler::on_prio_save`].
    fn on_prio_save(&mut self, thread: &SchedInfo, constraint: i64, id: InheritId) -> Option<Urgency> {
        self.prev_mut().on_prio_save(thread, constraint, id)
    }
    /// [`Scheduler::on_prio_restore`].
    fn on_prio_restore(&mut self, thread: &SchedInfo, id: InheritId) {
        self.prev_mut().on_prio_restore(thread, id)
    }
    /// [`Scheduler::on_next`].
    fn on_next(&mut self, thread: &SchedInfo, queues: &mut dyn QueuedMessages) {
        self.prev_mut().on_next(thread, queues)
    }
    /// [`Scheduler::on_call`].
    fn on_call(
        &mut self,
        waiter: &SchedInfo,
        holder: &SchedInfo,
        at: Stymie,
        constraint: i64,
        id: InheritId,
    ) -> Option<Urgency> {
        self.prev_mut().on_call(waiter, holder, at, constraint, id)
    }
    /// [`Scheduler::on_procure`].
    fn on_procure(&mut self, waiter: &SchedInfo, holder: &SchedInfo, at: Stymie, id: InheritId) -> Option<Urgency> {
        self.prev_mut().on_procure(waiter, holder, at, id)
    }
    /// [`Scheduler::on_nice`].
    fn on_nice(&mut self, thread: &SchedInfo, at: Stymie, id: InheritId) {
        self.prev_mut().on_nice(thread, at, id)
    }
}

impl<S: StackedScheduler> Scheduler for S {
    fn name(&self) -> &str {
        StackedScheduler::name(self)
    }
    fn base_urgency(&self, thread: &SchedInfo) -> Urgency {
        StackedScheduler::base_urgency(self, thread)
    }
    fn on_ready(&mut self, thread: &SchedInfo, why: ReadyReason) {
        StackedScheduler::on_ready(self, thread, why)
    }
    fn on_yield(&mut self, thread: &SchedInfo) {
        StackedScheduler::on_yield(self, thread)
    }
    fn on_blocked(&mut self, thread: &SchedInfo) {
        StackedScheduler::on_blocked(self, thread)
    }
    fn on_removed(&mut self, id: ThreadId) {
        StackedScheduler::on_removed(self, id)
    }
    fn should_preempt(&self, running: &SchedInfo, woken: &SchedInfo) -> bool {
        StackedScheduler::should_preempt(self, running, woken)
    }
    fn pick_next(&mut self, now: Time) -> Option<ThreadId> {
        StackedScheduler::pick_next(self, now)
    }
    fn on_handed_over(
        &mut self,
        woken: &SchedInfo,
        running: &SchedInfo,
        running_was: Urgency,
        now: Time,
    ) -> Option<ThreadId> {
        StackedScheduler::on_handed_over(self, woken, running, running_was, now)
    }
    fn on_urgency_changed(&mut self, thread: &SchedInfo, old: Urgency) {
        StackedScheduler::on_urgency_changed(self, thread, old)
    }
    fn time_sliced(&self) -> bool {
        StackedScheduler::time_sliced(self)
    }
    fn time_slice(&self, thread: &SchedInfo) -> Option<Duration> {
        StackedScheduler::time_slice(self, thread)
    }
    fn global(&self) -> bool {
        StackedScheduler::global(self)
    }
    fn earliest_deadline_first(&self) -> bool {
        StackedScheduler::earliest_deadline_first(self)
    }
    fn events(&self) -> Events {
        StackedScheduler::events(self)
    }
    fn take_prev(&mut self) -> Option<Box<dyn Scheduler>> {
        StackedScheduler::take_prev(self)
    }
    fn on_schedule(&mut self, thread: &SchedInfo, why: Schedule) {
        StackedScheduler::on_schedule(self, thread, why)
    }
    fn on_message_ready(&mut self, thread: &SchedInfo, constraint: i64) {
        StackedScheduler::on_message_ready(self, thread, constraint)
    }
    fn on_prio_save(&mut self, thread: &SchedInfo, constraint: i64, id: InheritId) -> Option<Urgency> {
        StackedScheduler::on_prio_save(self, thread, constraint, id)
    }
    fn on_prio_restore(&mut self, thread: &SchedInfo, id: InheritId) {
        StackedScheduler::on_prio_restore(self, thread, id)
    }
    fn on_next(&mut self, thread: &SchedInfo, queues: &mut dyn QueuedMessages) {
        StackedScheduler::on_next(self, thread, queues)
    }
    fn on_call(
        &mut self,
        waiter: &SchedInfo,
        holder: &SchedInfo,
        at: Stymie,
        constraint: i64,
        id: InheritId,
    ) -> Option<Urgency> {
        StackedScheduler::on_call(self, waiter, holder, at, constraint, id)
    }
    fn on_procure(&mut self, waiter: &SchedInfo, holder: &SchedInfo, at: Stymie, id: InheritId) -> Option<Urgency> {
        StackedScheduler::on_procure(self, waiter, holder, at, id)
    }
    fn on_nice(&mut self, thread: &SchedInfo, at: Stymie, id: InheritId) {
        StackedScheduler::on_nice(self, thread, at, id)
    }
}

/// Priority inheritance through handlers and semaphores, stacked on any policy: it asks for
/// CALL and PROCURE and lends a blocked thread's effective urgency to the holder of the busy
/// handler or to each thread inside the semaphore, when it is higher than the holder's; every
/// other decision is the previous scheduler's. NICE gives it back when the holder leaves.
///
/// ```
/// use tempi::policy::sched::{Events, FixedPriority, PriorityInheritance, Scheduler};
/// let s = PriorityInheritance::new(Box::new(FixedPriority::new()));
/// assert_eq!(s.name(), "fp");
/// assert_eq!(s.events(), Events::CALL | Events::PROCURE);
/// let mut rt = tempi::Runtime::simulated(1);
/// rt.stack_scheduler(|prev| Box::new(PriorityInheritance::new(prev)));
/// ```
pub struct PriorityInheritance {
    prev: Box<dyn Scheduler>,
    /// Asks for CALL and PROCURE of tamed threads only.
    tamed_only: bool,
}

impl PriorityInheritance {
    /// Inheritance stacked on `prev`.
    ///
    /// ```
    /// let _ = tempi::policy::sched::PriorityInheritance::new(Box::new(tempi::policy::sched::Edf::new()));
    /// ```
    pub fn new(prev: Box<dyn Scheduler>) -> PriorityInheritance {
        PriorityInheritance { prev, tamed_only: false }
    }

    /// Inheritance stacked on `prev` for the threads with `tame_prio_inv` on only (FREE
    /// JAZZ's choice of hearing of a blocking "only for threads that should endure bounded
    /// priority inversion at worst"): it asks for [`Events::TAMED_ONLY`] too, so the blocking
    /// of other threads lends nothing.
    ///
    /// ```
    /// use tempi::policy::sched::{Events, FixedPriority, PriorityInheritance, Scheduler};
    /// let s = PriorityInheritance::for_tamed(Box::new(FixedPriority::new()));
    /// assert!(s.events().contains(Events::TAMED_ONLY | Events::CALL | Events::PROCURE));
    /// ```
    pub fn for_tamed(prev: Box<dyn Scheduler>) -> PriorityInheritance {
        PriorityInheritance { prev, tamed_only: true }
    }

    fn lend(waiter: &SchedInfo, holder: &SchedInfo) -> Option<Urgency> {
        (waiter.urgency > holder.urgency).then_some(waiter.urgency)
    }
}

impl StackedScheduler for PriorityInheritance {
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
        at: Stymie,
        constraint: i64,
        id: InheritId,
    ) -> Option<Urgency> {
        let lent = Self::lend(waiter, holder);
        let below = self.prev.on_call(waiter, holder, at, constraint, id);
        lent.max(below)
    }
    fn on_procure(&mut self, waiter: &SchedInfo, holder: &SchedInfo, at: Stymie, id: InheritId) -> Option<Urgency> {
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
