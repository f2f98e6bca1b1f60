//! The set, clock and budget calls of [`Ctx`]: thread sets, execution-time clocks and timers,
//! budgets. Each is one control request to the kernel. The calls made in every job (set
//! membership, clock reads and writes, budget reads and replenishments) own nothing and
//! allocate nothing, failing or not; those that carry or return owned values (a set's name,
//! its member list, a timer's handler, a budget) are set-up calls and box their request.
//!
//! Must not: suspend the thread other than through `Ctx::invoke`.

use std::time::Duration;

use crate::error::Error;
use crate::plain::SetId;
use crate::plain::ThreadId;
use crate::sets::Budget;

use crate::kernel::thread_side::ctx::Ctx;
use crate::kernel::thread_side::protocol::Control;
use crate::kernel::EventCtx;

impl Ctx<'_> {
    /// Create an empty thread set on this thread's CPU.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("workers").unwrap();
    ///     cx.add_to_set(s, cx.id()).unwrap();
    ///     assert_eq!(cx.set_of(cx.id()).unwrap(), Some(s));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn create_set(&self, name: &str) -> Result<SetId, Error> {
        self.invoke(Control::create_set(name.to_string()))
    }

    /// Destroy a set: its members leave it (and any enforcement on them is lifted).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("tmp").unwrap();
    ///     cx.destroy_set(s).unwrap();
    ///     assert!(cx.set_members(s).is_err());
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn destroy_set(&self, set: SetId) -> Result<(), Error> {
        self.invoke(Control::destroy_set(set))
    }

    /// Remove every member of a set.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.add_to_set(s, cx.id()).unwrap();
    ///     cx.empty_set(s).unwrap();
    ///     assert!(cx.set_members(s).unwrap().is_empty());
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn empty_set(&self, set: SetId) -> Result<(), Error> {
        self.invoke(Control::empty_set(set))
    }

    /// Add a thread to a set. A thread belongs to at most one set: adding it to a second one
    /// is [`Error::AlreadyInSet`].
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let a = cx.create_set("a").unwrap();
    ///     let b = cx.create_set("b").unwrap();
    ///     cx.add_to_set(a, cx.id()).unwrap();
    ///     assert!(matches!(cx.add_to_set(b, cx.id()), Err(tempi::Error::AlreadyInSet { .. })));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn add_to_set(&self, set: SetId, thread: ThreadId) -> Result<(), Error> {
        self.invoke(Control::add_to_set(set, thread))
    }

    /// Remove a thread from a set.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     assert!(cx.remove_from_set(s, cx.id()).is_err());
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn remove_from_set(&self, set: SetId, thread: ThreadId) -> Result<(), Error> {
        self.invoke(Control::remove_from_set(set, thread))
    }

    /// Whether `thread` is a member of `set`.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     assert_eq!(cx.set_contains(s, cx.id()), Ok(false));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_contains(&self, set: SetId, thread: ThreadId) -> Result<bool, Error> {
        self.invoke(Control::set_contains(set, thread))
    }

    /// The members of a set, in the order they joined (removals reorder).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.add_to_set(s, cx.id()).unwrap();
    ///     assert_eq!(cx.set_members(s).unwrap(), vec![cx.id()]);
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_members(&self, set: SetId) -> Result<Vec<ThreadId>, Error> {
        self.invoke(Control::set_members(set))
    }

    /// The set a thread belongs to.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| assert_eq!(cx.set_of(cx.id()), Ok(None))).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_of(&self, thread: ThreadId) -> Result<Option<SetId>, Error> {
        self.invoke(Control::set_of(thread))
    }

    /// A thread's execution-time clock: CPU time consumed, including the running part. It
    /// saturates at `u64::MAX` ns (about 584 years) rather than wrapping.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     cx.work(Duration::from_millis(3));
    ///     assert_eq!(cx.thread_cpu_time(cx.id()), Ok(Duration::from_millis(3)));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn thread_cpu_time(&self, thread: ThreadId) -> Result<Duration, Error> {
        self.invoke(Control::thread_clock(thread))
    }

    /// Set a thread's execution-time clock.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     cx.work(Duration::from_millis(3));
    ///     cx.set_thread_cpu_time(cx.id(), Duration::ZERO).unwrap();
    ///     assert_eq!(cx.thread_cpu_time(cx.id()), Ok(Duration::ZERO));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_thread_cpu_time(&self, thread: ThreadId, value: Duration) -> Result<(), Error> {
        self.invoke(Control::set_thread_clock(thread, value))
    }

    /// A set's group clock: CPU time consumed by its members while members, including the
    /// running parts. It saturates at `u64::MAX` ns rather than wrapping.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.work(Duration::from_millis(1)); // before joining: not counted
    ///     cx.add_to_set(s, cx.id()).unwrap();
    ///     cx.work(Duration::from_millis(2));
    ///     assert_eq!(cx.set_cpu_time(s), Ok(Duration::from_millis(2)));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_cpu_time(&self, set: SetId) -> Result<Duration, Error> {
        self.invoke(Control::group_clock(set))
    }

    /// Set a group clock. A budget on the set keeps the amount it had left.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.set_set_cpu_time(s, Duration::from_millis(7)).unwrap();
    ///     assert_eq!(cx.set_cpu_time(s), Ok(Duration::from_millis(7)));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_set_cpu_time(&self, set: SetId, value: Duration) -> Result<(), Error> {
        self.invoke(Control::set_group_clock(set, value))
    }

    /// Arm an execution-time timer on a thread's clock: `handler` runs inside the runtime when
    /// the clock reaches `at`. Replaces any timer armed on that clock.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     cx.arm_thread_timer(cx.id(), Duration::from_millis(2), |ev| assert_eq!(ev.now(), tempi::Time::from_millis(2))).unwrap();
    ///     cx.work(Duration::from_millis(5));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn arm_thread_timer(
        &self,
        thread: ThreadId,
        at: Duration,
        handler: impl FnMut(&mut EventCtx<'_>) + Send + 'static,
    ) -> Result<(), Error> {
        self.invoke(Control::thread_timer(thread, at, Box::new(handler)))
    }

    /// Arm an execution-time timer on a set's group clock (one per set; replaces any).
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.add_to_set(s, cx.id()).unwrap();
    ///     cx.arm_set_timer(s, Duration::from_millis(1), |ev| assert_eq!(ev.now(), tempi::Time::from_millis(1))).unwrap();
    ///     cx.work(Duration::from_millis(2));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn arm_set_timer(
        &self,
        set: SetId,
        at: Duration,
        handler: impl FnMut(&mut EventCtx<'_>) + Send + 'static,
    ) -> Result<(), Error> {
        self.invoke(Control::set_timer(set, at, Box::new(handler)))
    }

    /// Give a set a budget (replacing any): from now on its members may consume
    /// `budget.amount()` before the budget's action applies.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.add_to_set(s, cx.id()).unwrap();
    ///     cx.set_budget(s, tempi::Budget::new(Duration::from_millis(4))).unwrap();
    ///     cx.work(Duration::from_millis(1));
    ///     assert_eq!(cx.budget_remaining(s), Ok(Duration::from_millis(3)));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn set_budget(&self, set: SetId, budget: Budget) -> Result<(), Error> {
        self.invoke(Control::set_budget(set, budget))
    }

    /// Budget left on a set (Ada's `Budget_Remaining`).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     assert!(matches!(cx.budget_remaining(s), Err(tempi::Error::NoBudget(_))));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn budget_remaining(&self, set: SetId) -> Result<Duration, Error> {
        self.invoke(Control::budget_left(set)).map(|(left, _)| left)
    }

    /// Whether a set's budget is exhausted (Ada's `Budget_Has_Expired`).
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.add_to_set(s, cx.id()).unwrap();
    ///     cx.set_budget(s, tempi::Budget::new(Duration::from_millis(1))).unwrap();
    ///     cx.work(Duration::from_millis(2));
    ///     assert_eq!(cx.budget_exhausted(s), Ok(true));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn budget_exhausted(&self, set: SetId) -> Result<bool, Error> {
        self.invoke(Control::budget_left(set)).map(|(_, exhausted)| exhausted)
    }

    /// Set the budget left to `to` (Ada's `Replenish`); lifts an enforcement in force.
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.set_budget(s, tempi::Budget::new(Duration::ZERO)).unwrap();
    ///     cx.replenish_budget(s, Duration::from_millis(5)).unwrap();
    ///     assert_eq!(cx.budget_remaining(s), Ok(Duration::from_millis(5)));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn replenish_budget(&self, set: SetId, to: Duration) -> Result<(), Error> {
        self.invoke(Control::replenish(set, to))
    }

    /// Add `delta_ns` nanoseconds (negative to take away) to the budget left (Ada's `Add`).
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("t"), |cx| {
    ///     let s = cx.create_set("s").unwrap();
    ///     cx.set_budget(s, tempi::Budget::new(Duration::from_millis(2))).unwrap();
    ///     cx.add_budget(s, -1_000_000).unwrap();
    ///     assert_eq!(cx.budget_remaining(s), Ok(Duration::from_millis(1)));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn add_budget(&self, set: SetId, delta_ns: i64) -> Result<(), Error> {
        self.invoke(Control::add_budget(set, delta_ns))
    }
}
