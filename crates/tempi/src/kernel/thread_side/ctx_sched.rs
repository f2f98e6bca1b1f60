//! The scheduling calls of [`Ctx`] that change the CPU's scheduler during the run — stacking a
//! scheduler on the CPU's one and un-stacking it (FREE JAZZ's `register_scheduler` at run
//! time), each one control request to the kernel (`kernel/cpu/sched_stack.rs`) — and the
//! thread's `tame_prio_inv` flag, kept in its view of the CPU's events without a kernel call.
//!
//! Must not: suspend the thread other than through `Ctx::invoke`.

use crate::error::Error;
use crate::policy::sched::Scheduler;

use crate::kernel::cpu::sched_meta::TAME_BIT;
use crate::kernel::thread_side::ctx::Ctx;
use crate::kernel::thread_side::protocol::Control;

impl Ctx<'_> {
    /// Stack a scheduler on this CPU's scheduler, now: `wrap` receives the scheduler the CPU
    /// has (with its ready queue) and returns the new top, which makes every decision from
    /// this instant on and may forward to the one it got (a
    /// [`crate::policy::sched::StackedScheduler`] forwards what it does not override). The
    /// kernel asks the new top again what it asked at start-up: its message-level events
    /// (from now on) and whether it gives time slices (from the next dispatch). The running
    /// thread is not preempted by the change itself; the new top decides at the next
    /// scheduling point. A thread already ready was told to the scheduler below, not to the
    /// new top. Under a global policy the one instance serving every CPU is wrapped.
    ///
    /// Errors: [`Error::InvalidConfig`] if the new top's [`Scheduler::global`] differs from the
    /// old one's (the old one is put back when the new top gives it back), or if `wrap`
    /// panicked (the run then stops: the CPU has no scheduler).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::sched::{WaitInheritance, Scheduler};
    /// use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("t"), |cx| {
    ///     cx.work(Duration::from_millis(1));
    ///     cx.stack_scheduler(|prev| Box::new(WaitInheritance::new(prev))).unwrap();
    ///     cx.unstack_scheduler().unwrap(); // the fixed-priority scheduler again
    ///     assert!(cx.unstack_scheduler().is_err()); // nothing below it
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn stack_scheduler(
        &self,
        wrap: impl FnOnce(Box<dyn Scheduler>) -> Box<dyn Scheduler> + Send + 'static,
    ) -> Result<(), Error> {
        self.invoke(Control::stack_scheduler(self.cpu(), Box::new(wrap)))
    }

    /// Un-stack this CPU's scheduler, now: the top gives back the one it is stacked on
    /// ([`Scheduler::take_prev`]), which decides again from this instant, and the top is
    /// dropped. Lends made under message-level events the restored scheduler does not ask
    /// for are withdrawn at once (without NICE: nobody is left to hear it).
    ///
    /// Errors: [`Error::InvalidConfig`] if the top is not stacked on another or does not give
    /// it back.
    ///
    /// ```
    /// use tempi::policy::sched::WaitInheritance;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.stack_scheduler(|prev| Box::new(WaitInheritance::new(prev)));
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| cx.unstack_scheduler().unwrap()).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn unstack_scheduler(&self) -> Result<(), Error> {
        self.invoke(Control::unstack_scheduler(self.cpu()))
    }

    /// FREE JAZZ's `tame_prio_inv` for this thread (a process), switched at run time; returns
    /// the previous setting, to be restored at the end of a scope as with
    /// [`Ctx::preemption`]. While it is on:
    ///
    /// - its blocking at a busy handler or a semaphore is reported to a scheduler that asks
    ///   for CALL or PROCURE only for such threads
    ///   ([`crate::policy::sched::Events::TAMED_ONLY`], e.g.
    ///   [`crate::policy::sched::WaitInheritance::for_tamed`]), so the urgency it lends
    ///   is lent from the instant it blocks; a scheduler without that filter hears of every
    ///   thread's blocking whatever the flag;
    /// - every handler it invokes (idle, so running on its stack) runs with preemption off
    ///   until the handler has drained its queue, then its own setting is restored.
    ///
    /// Switched on around a critical section, it makes the section's blocking and handler
    /// calls bounded in the inversion they cause, and nothing outside it. The setting costs no
    /// kernel call; the thread's initial one is [`crate::ThreadSpec::tame_prio_inv`].
    ///
    /// ```
    /// use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("t"), |cx| {
    ///     let old = cx.tame_prio_inv(true);
    ///     assert!(!old);
    ///     // ... a critical section ...
    ///     assert!(cx.tame_prio_inv(old));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn tame_prio_inv(&self, on: bool) -> bool {
        let bits = self.mail.events.get();
        let tame = if on { bits | TAME_BIT } else { bits & !TAME_BIT };
        self.mail.events.set(tame);
        bits & TAME_BIT != 0
    }

    /// Whether this thread's `tame_prio_inv` is on.
    #[inline]
    pub(crate) fn tamed(&self) -> bool {
        self.mail.events.get() & TAME_BIT != 0
    }
}
