//! The scheduling meta-interface: the [`Scheduler`] trait and the ready-queue helper built-in
//! policies share.
//!
//! The kernel owns thread state and calls a `Scheduler` at every transition; the scheduler owns
//! the ready queue and decides which thread runs next and whether a wakeup preempts. One
//! instance runs per CPU, and it is only ever called from that CPU's dispatcher, so it needs no
//! locking.
//!
//! | kernel event | hook |
//! |---|---|
//! | thread spawned, released, woken, preempted | [`Scheduler::on_ready`] |
//! | running thread yields, or its quantum ([`Scheduler::time_slice`]) runs out (SCHEDULE) | [`Scheduler::on_schedule`] (default: `on_yield` / `on_ready(SliceExpired)`) |
//! | running thread blocks, sleeps or ends its job | [`Scheduler::on_blocked`] |
//! | a thread became ready while another runs | [`Scheduler::should_preempt`] |
//! | the CPU needs a thread | [`Scheduler::pick_next`] |
//! | a lock went to a waiter, its releaser lost urgency | [`Scheduler::on_handed_over`] |
//! | a ready or running thread's urgency changed (inheritance, priority change, deadline of a job released while it runs) | [`Scheduler::on_urgency_changed`] |
//! | a thread is dispatched (policies that slice) | [`Scheduler::time_slice`] |
//! | a thread is spawned with properties of the policy's own ([`crate::ThreadSpec::sched_properties`]) | [`Scheduler::on_properties`] |
//! | a ready thread leaves without running (abort, exit) | [`Scheduler::on_removed`] |
//! | the scheduler is un-stacked during the run ([`crate::Ctx::unstack_scheduler`]) | [`Scheduler::take_prev`] |
//!
//! # Message-level events
//!
//! FREE JAZZ turns every scheduling-relevant transition into a message to the scheduler. Beyond
//! the hooks above, a policy hears of the message-level ones it asks for in
//! [`Scheduler::events`] (asked once per CPU, at start). An event not asked for costs one bit
//! test in the kernel and no call; the built-in policies ask for none. Every hook runs inside
//! the kernel, on the stack of the thread that caused the event, between two thread
//! executions, non-preemptively; it must not block or allocate.
//!
//! | event ([`Events`]) | hook | when | what it may do |
//! |---|---|---|---|
//! | READY | [`Scheduler::on_message_ready`] | a message whose constraint is not [`NO_CONSTRAINT`] was queued for a thread (after the thread was made ready, if the message woke it) | reorder its own ready queue; it decides nothing else |
//! | PRIO | [`Scheduler::on_prio_save`], [`Scheduler::on_prio_restore`] | before and after a handler serves a message with a constraint, on the borrowed thread | return an urgency lent to that thread for that message; RESTORE gets the same [`InheritId`] back, nested handlers nest |
//! | NEXT | [`Scheduler::on_next`] | a thread blocked or went idle (waits, sleeps, ends its job, reads an empty queue) | look at the messages queued on the CPU and cancel some by marking them ([`QueuedMessages`]); the recipient reads a cancelled one as [`crate::message::MsgError::Cancelled`] |
//! | CALL | [`Scheduler::on_call`] | a thread blocked calling a busy handler | return an urgency lent to the thread the handler runs on, until it leaves the handler |
//! | PROCURE | [`Scheduler::on_procure`] | a thread blocked at a semaphore; once per thread inside it; again for each raised thread that is blocked itself (transitive) | return an urgency lent to that thread, until it vacates the semaphore |
//! | (CALL, PROCURE) | [`Scheduler::on_nice`] | the holder left the handler or vacated the semaphore (after the waiter it released was made ready) | observe; the lends for it are already withdrawn, latest first |
//! | TAMED_ONLY (a filter) | — | with CALL or PROCURE: report the blocking only of a waiter with `tame_prio_inv` on ([`crate::ThreadSpec::tame_prio_inv`], [`crate::Ctx::tame_prio_inv`]) | nothing of its own |
//!
//! Each inheritance gets an [`InheritId`], unique in the run, handed to the policy when the
//! urgency is lent and given back by the NICE or PRIO RESTORE that withdraws it, so nested and
//! multiple inheritances are told apart. A thread's lent urgency is the largest of its lends
//! and of what its locks lend; the effective urgency is the larger of that and its base, as for
//! lock inheritance. A thread holds at most 8 lends and is noted inside at most 8 semaphore
//! units at once; beyond, no more are made (bounded memory, no allocation).
//!
//! ## Stacking
//!
//! FREE JAZZ's `register_scheduler` returns the previous handler of an event so that the new
//! one can forward to it. Here a whole scheduler is stacked on the previous one:
//! [`crate::Runtime::stack_scheduler`] hands each CPU's scheduler so far to a closure that
//! wraps it, and a wrapper written as a [`StackedScheduler`] forwards every hook it does not
//! override. The kernel only calls the top of the chain and knows nothing of it. The trait,
//! `StackedScheduler`'s defaults and its blanket impl are made from one list of the hooks
//! (`scheduler_hooks!` below, expanded by `hooks.rs`), so a new hook is one entry there.
//! [`WaitInheritance`] is such a wrapper: it answers CALL and PROCURE with the blocked
//! thread's urgency and leaves every other decision to the policy below
//! ([`WaitInheritance::for_tamed`]: only for threads with FREE JAZZ's `tame_prio_inv` on,
//! through the [`Events::TAMED_ONLY`] filter).
//!
//! During the run, a thread stacks a wrapper on its own CPU's scheduler with
//! [`crate::Ctx::stack_scheduler`]: it decides from that instant on, and the kernel asks it
//! again for its events and time slices. [`crate::Ctx::unstack_scheduler`] takes it off again:
//! the top gives back the one below through [`Scheduler::take_prev`] (leaving a [`Vacant`]).
//!
//! ```
//! use tempi::policy::sched::{Events, WaitInheritance, Scheduler};
//! use tempi::sync::SemSpec;
//! use tempi::{Runtime, ThreadSpec};
//! let mut rt = Runtime::simulated(1);
//! rt.stack_scheduler(|prev| Box::new(WaitInheritance::new(prev)));
//! let s = std::sync::Arc::new(rt.create_semaphore(SemSpec::new("s", 1)).unwrap());
//! let s2 = s.clone();
//! rt.spawn(ThreadSpec::new("low").priority(1), move |cx| {
//!     s.procure(cx).unwrap();
//!     cx.work(std::time::Duration::from_millis(2)); // `high` blocks at 1 ms: PROCURE
//!     assert_eq!(cx.urgency().0, 9); // inherited
//!     s.vacate(cx).unwrap(); // NICE
//! }).unwrap();
//! rt.spawn(ThreadSpec::new("high").priority(9), move |cx| {
//!     cx.sleep(std::time::Duration::from_millis(1));
//!     s2.procure(cx).unwrap();
//! }).unwrap();
//! rt.run().unwrap();
//! ```
//!
//! Built-in policies, one per file: [`FixedPriority`], [`Edf`], [`Fifo`], [`RoundRobin`];
//! for multiprocessor studies in virtual time, [`GlobalEdf`] and [`GlobalFp`] (see
//! "Global policies" below).
//! The [`Collator`] (folder `collator/`) is built from other schedulers through this trait:
//! several policies share one CPU by the guaranteed jobs' laxity.
//! Each is a [`QueueScheduler`] (one [`ReadyQueue`] and the hooks around it) with its own
//! [`QueueDiscipline`], which says only what is particular to it. The [`registry`] maps the
//! names used on the command line and in scenario files to constructors, built-ins and
//! whatever the application adds with [`register`]; [`by_name`] reads it.
//!
//! # Global policies
//!
//! A policy whose [`Scheduler::global`] answers `true` is shared by every CPU: the instance
//! built for the first CPU serves them all (the others are never called), so it holds the
//! ready threads of all CPUs, and each CPU asks it for its next thread with
//! [`Scheduler::pick_next`]. Its hooks are
//! called exactly as for a per-CPU policy; [`SchedInfo::cpu`] is the CPU the thread last ran
//! on. The kernel keeps the `m` most urgent ready threads running on the `m` CPUs: when a
//! thread becomes ready (or more urgent while ready) it is offered an idle CPU, else the CPU
//! whose running thread has the lowest effective urgency (the highest-numbered such CPU
//! among equals), and [`Scheduler::should_preempt`] decides whether it takes it. A thread
//! that resumes on another CPU than the one it last ran on has migrated
//! ([`crate::ThreadStats::migrations`]). Global policies run in virtual time only, where every
//! CPU is simulated on one OS thread; they refuse locks, condition variables and semaphores
//! ([`crate::Error::Global`]).
//!
//! # Writing a policy
//!
//! A least-laxity-first policy written only against this public interface:
//!
//! ```
//! use tempi::policy::sched::{ReadyReason, SchedInfo, Scheduler, Urgency};
//! use tempi::{ThreadId, Time};
//!
//! #[derive(Default)]
//! struct LeastLaxity { ready: Vec<SchedInfo> }
//!
//! fn laxity(t: &SchedInfo, now: Time) -> i128 {
//!     let Some(d) = t.deadline else { return i128::MAX };
//!     let left = t.wcet.saturating_sub(t.job_cpu_time);
//!     d.as_nanos() as i128 - now.as_nanos() as i128 - left.as_nanos() as i128
//! }
//!
//! impl Scheduler for LeastLaxity {
//!     fn name(&self) -> &str { "llf" }
//!     fn base_urgency(&self, t: &SchedInfo) -> Urgency { Urgency::from_deadline(t.deadline) }
//!     fn on_ready(&mut self, t: &SchedInfo, _why: ReadyReason) { self.ready.push(*t) }
//!     fn on_removed(&mut self, id: ThreadId) { self.ready.retain(|t| t.id != id) }
//!     fn pick_next(&mut self, now: Time) -> Option<ThreadId> {
//!         let best = (0..self.ready.len()).min_by_key(|&i| laxity(&self.ready[i], now))?;
//!         Some(self.ready.remove(best).id)
//!     }
//! }
//! # let mut rt = tempi::Runtime::simulated(1);
//! # rt.set_scheduler(|| Box::new(LeastLaxity::default()));
//! ```

mod class;
pub mod collator;
mod cpu_choice;
mod edf;
mod fifo;
mod fixed_priority;
mod global_edf;
mod global_fp;
mod hooks;
mod meta;
mod plan_first;
mod queue_scheduler;
mod ready_queue;
mod registry;
mod round_robin;
mod stacked;

pub use crate::plain::{SchedInfo, Urgency};
pub use class::PolicyClass;
pub use collator::{Classifier, Collator, CollatorError, CollatorStats, Party};
pub use cpu_choice::{default_cpu_choice, CpuChoice, CpuView};
pub use edf::{Edf, EdfDiscipline};
pub use fifo::{Fifo, FifoDiscipline};
pub use fixed_priority::{FixedPriority, FixedPriorityDiscipline};
pub use global_edf::{GlobalEdf, GlobalEdfDiscipline};
pub use global_fp::{GlobalFp, GlobalFpDiscipline};
pub use meta::{BlockedAt, Events, InheritId, Schedule, NO_CONSTRAINT};
pub use plan_first::{PlanFirst, PLANNED_PRIORITY, PLANNER_PRIORITY};
pub use queue_scheduler::{QueueDiscipline, QueueScheduler};
pub use ready_queue::ReadyQueue;
pub(crate) use ready_queue::DEFAULT_QUEUE;
pub use registry::{
    by_name, names, register, register_with_params, register_with_quantum, registry, SchedParams, SchedulerFactory,
    SchedulerMaker, NAMES,
};
pub use round_robin::{RoundRobin, RoundRobinDiscipline};
pub use stacked::{StackedScheduler, Vacant, WaitInheritance};

use std::time::Duration;

use crate::plain::Message;
use crate::plain::ThreadId;
use crate::time::Time;

/// Why a thread is being put on the ready queue.
///
/// ```
/// use tempi::policy::sched::ReadyReason;
/// assert_ne!(ReadyReason::Preempted, ReadyReason::Yielded);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadyReason {
    /// Newly spawned.
    Spawned,
    /// A new job was released.
    Released,
    /// Woken from sleep or from a wait.
    Woken,
    /// Was running and lost the CPU to a more urgent thread. POSIX puts it at the head of its
    /// priority level; the built-in policies do the same.
    Preempted,
    /// Gave up the CPU voluntarily.
    Yielded,
    /// Its time slice ran out.
    SliceExpired,
}

/// What [`Scheduler::on_woken_pick`] decided: the running thread keeps the CPU, or it is
/// preempted and the named thread (if any) runs next.
///
/// ```
/// use tempi::policy::sched::WakePick;
/// assert_ne!(WakePick::Stays, WakePick::Preempted(None));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakePick {
    /// The woken thread is queued; the running one goes on.
    Stays,
    /// The running thread is queued as preempted; the thread picked to run next, `None` to
    /// idle.
    Preempted(Option<ThreadId>),
}

/// The hooks of [`Scheduler`], each written once: its docs, its signature, its default, and
/// how a [`StackedScheduler`] defaults it (`[forward]` to the scheduler below, or `[own]`: the
/// same default through the wrapper's own hooks). `hooks.rs` turns the list into the trait's
/// methods, `StackedScheduler`'s and the blanket `impl<S: StackedScheduler> Scheduler for S`,
/// so a new hook is one entry here.
macro_rules! scheduler_hooks {
    ($generate:ident) => {
        $crate::policy::sched::hooks::normalise_hooks! { $generate []
            /// The policy's registry name, e.g. `"edf"`.
            [forward]
            fn name(&self) -> &str;

            /// The urgency a thread has on its own, without inheritance. Called when the thread is
            /// spawned and at every release of a new job (deadlines move).
            [forward]
            fn base_urgency(&self, thread: &SchedInfo) -> Urgency;

            /// The urgency lock `ceiling` stands for on this policy's scale at instant `now`:
            /// what a ceiling protocol compares requesters with, and the urgency an immediate
            /// ceiling lends its holder. Asked whenever a free lock's ceiling is needed (a
            /// ceiling computed from users can move with time, as deadlines do). Default: a
            /// declared ceiling is that priority ([`Urgency::from_priority`]); one computed from
            /// users is the [`Scheduler::base_urgency`] of a job at the users' level
            /// ([`LockCeiling::Users`](crate::policy::lock::LockCeiling::Users): their highest priority, their shortest relative
            /// deadline) released at `now`, so under fixed priority the highest user priority
            /// and under EDF `now` plus the shortest relative deadline (SRP's preemption level
            /// as a deadline).
            ///
            /// ```
            /// use std::time::Duration;
            /// use tempi::policy::lock::LockCeiling;
            /// use tempi::policy::sched::{Edf, FixedPriority, Scheduler, Urgency};
            /// use tempi::Time;
            /// let users = LockCeiling::Users { priority: 7, relative_deadline: Some(Duration::from_millis(3)) };
            /// let now = Time::from_nanos(1_000_000);
            /// assert_eq!(FixedPriority::new().ceiling_urgency(&users, now), Urgency::from_priority(7));
            /// assert_eq!(Edf::new().ceiling_urgency(&users, now), Urgency::from_deadline(Some(Time::from_nanos(4_000_000))));
            /// ```
            [own]
            fn ceiling_urgency(&self, ceiling: &$crate::policy::lock::LockCeiling, now: Time) -> Urgency {
                match *ceiling {
                    $crate::policy::lock::LockCeiling::Declared(priority) => Urgency::from_priority(priority),
                    $crate::policy::lock::LockCeiling::Users { priority, relative_deadline } => {
                        self.base_urgency(&SchedInfo::at_level(priority, relative_deadline, now))
                    }
                }
            }

            /// The urgency a member of a constant bandwidth server runs at while the server's
            /// deadline is `server_deadline`: a CBS schedules its members by the server's
            /// deadline, not their jobs' own. Asked whenever the server deadline moves and at
            /// every member's release. Default: [`Scheduler::base_urgency`] of the member's job
            /// with its deadline replaced by the server's (so a fixed-priority policy, which
            /// reads no deadline, keeps the member's priority).
            ///
            /// ```
            /// use tempi::policy::sched::{Edf, SchedInfo, Scheduler, Urgency};
            /// use tempi::Time;
            /// let member = SchedInfo::at_level(1, None, Time::ZERO);
            /// let d = Time::from_nanos(5_000);
            /// assert_eq!(Edf::new().served_urgency(&member, d), Urgency::from_deadline(Some(d)));
            /// ```
            [own]
            fn served_urgency(&self, member: &SchedInfo, server_deadline: Time) -> Urgency {
                self.base_urgency(&SchedInfo { deadline: Some(server_deadline), ..*member })
            }

            /// The thread became ready and must be queued.
            [forward]
            fn on_ready(&mut self, thread: &SchedInfo, why: ReadyReason);

            /// The running thread yields; by default it is queued like any ready thread.
            [forward]
            fn on_yield(&mut self, thread: &SchedInfo) {
                self.on_ready(thread, ReadyReason::Yielded)
            }

            /// The running thread stopped being runnable (blocked, sleeping, job done). It is not in
            /// the queue; nothing to do by default.
            [forward]
            fn on_blocked(&mut self, _thread: &SchedInfo) {}

            /// A queued thread must leave the queue without running (it was aborted or exited).
            [forward]
            fn on_removed(&mut self, id: ThreadId);

            /// The thread was spawned with properties of the policy's own
            /// ([`crate::ThreadSpec::sched_properties`]): a value of a type the policy defines
            /// (Boost.Fiber's scheduler properties), handed over once, before the thread's
            /// [`Scheduler::base_urgency`] is first asked and before it is first ready. The
            /// policy reads it with `downcast_ref` and keeps what it needs in tables of its own
            /// (sized in its constructor), so a policy with a per-thread attribute changes no
            /// kernel file; the kernel keeps nothing of it. A thread spawned without
            /// properties is not reported; a scheduler stacked during the run hears of the
            /// threads spawned after it. Default: ignore them (a stacked scheduler forwards
            /// them to the one below).
            ///
            /// ```
            /// use std::any::Any;
            /// use tempi::policy::sched::{ReadyReason, SchedInfo, Scheduler, Urgency};
            /// use tempi::{Runtime, ThreadId, ThreadSpec, Time};
            ///
            /// /// A thread's rank under `ByRank`: larger runs first.
            /// struct Rank(i64);
            ///
            /// #[derive(Default)]
            /// struct ByRank { ranks: Vec<(ThreadId, i64)>, ready: Vec<(i64, ThreadId)> }
            /// impl Scheduler for ByRank {
            ///     fn name(&self) -> &str { "by-rank" }
            ///     fn on_properties(&mut self, t: &SchedInfo, p: &dyn Any) {
            ///         if let Some(Rank(r)) = p.downcast_ref::<Rank>() { self.ranks.push((t.id, *r)) }
            ///     }
            ///     fn base_urgency(&self, t: &SchedInfo) -> Urgency {
            ///         Urgency(self.ranks.iter().find(|(id, _)| *id == t.id).map_or(0, |(_, r)| *r))
            ///     }
            ///     fn on_ready(&mut self, t: &SchedInfo, _why: ReadyReason) { self.ready.push((t.urgency.0, t.id)) }
            ///     fn on_removed(&mut self, id: ThreadId) { self.ready.retain(|(_, t)| *t != id) }
            ///     fn pick_next(&mut self, _now: Time) -> Option<ThreadId> {
            ///         let best = (0..self.ready.len()).max_by_key(|&i| self.ready[i].0)?;
            ///         Some(self.ready.remove(best).1)
            ///     }
            /// }
            /// let mut rt = Runtime::simulated(1);
            /// rt.set_scheduler(|| Box::new(ByRank::default()));
            /// let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            /// for (name, rank) in [("low", 1), ("high", 9)] {
            ///     let order = order.clone();
            ///     let spec = ThreadSpec::new(name).sched_properties(Rank(rank));
            ///     rt.spawn(spec, move |_| order.lock().unwrap().push(name)).unwrap();
            /// }
            /// rt.run().unwrap();
            /// assert_eq!(*order.lock().unwrap(), ["high", "low"]);
            /// ```
            [forward]
            fn on_properties(&mut self, _thread: &SchedInfo, _properties: &dyn std::any::Any) {}

            /// `woken` just became ready while `running` holds the CPU: should `running` be
            /// preempted? Default: when `woken` is strictly more urgent.
            [forward]
            fn should_preempt(&self, running: &SchedInfo, woken: &SchedInfo) -> bool {
                woken.urgency > running.urgency
            }

            /// Remove and return the thread to run next, or `None` to idle.
            [forward]
            fn pick_next(&mut self, now: Time) -> Option<ThreadId>;

            /// A contended unlock handed the lock to `woken`, which became ready, while `running`,
            /// the releaser, lost the urgency the lock lent it (it ran at `running_was`) and is
            /// offered the CPU again as a preempted thread: queue both and return the thread to run
            /// next.
            ///
            /// The default is exactly [`Scheduler::on_urgency_changed`] for `running`,
            /// [`Scheduler::on_ready`] for `woken` (`Woken`), `on_ready` for `running`
            /// (`Preempted`), then [`Scheduler::pick_next`]. A policy may answer faster (the built-in
            /// ones skip the urgency change of a thread they do not queue, and queueing `woken` when
            /// it would come straight back out), but must leave the same queue and return the same
            /// thread.
            ///
            /// ```
            /// use tempi::policy::sched::{FixedPriority, SchedInfo, Scheduler, Urgency};
            /// # use tempi::{Runtime, ThreadSpec, Time};
            /// # let mut rt = Runtime::simulated(1);
            /// # let a = rt.spawn(ThreadSpec::new("a"), |_| {}).unwrap();
            /// # let b = rt.spawn(ThreadSpec::new("b"), |_| {}).unwrap();
            /// # let info = |id, u| SchedInfo {
            /// #     id, cpu: 0, priority: u, urgency: Urgency(u as i64), importance: 0, release: Time::ZERO,
            /// #     deadline: None, period: None, relative_deadline: None, wcet: Default::default(),
            /// #     job_cpu_time: Default::default(), job: 0,
            /// # };
            /// let mut fp = FixedPriority::new();
            /// let (waiter, releaser) = (info(a, 20), info(b, 10));
            /// assert_eq!(fp.on_handed_over(&waiter, &releaser, Urgency(20), Time::ZERO), Some(a));
            /// assert_eq!(fp.pick_next(Time::ZERO), Some(b));
            /// ```
            [own]
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

            /// The running thread `blocked` stopped being runnable and the kernel asks at once which
            /// thread runs next: [`Scheduler::on_blocked`] and [`Scheduler::pick_next`] in one call.
            /// The kernel calls this instead of the two when nothing comes between them (one CPU,
            /// nothing due, no NEXT event asked for: the short path of a call that blocks its caller).
            ///
            /// The default is exactly the two calls. A policy may answer faster, but must leave the
            /// same queue and return the same thread.
            ///
            /// ```
            /// use tempi::policy::sched::{FixedPriority, ReadyReason, SchedInfo, Scheduler, Urgency};
            /// # use tempi::{Runtime, ThreadSpec, Time};
            /// # let mut rt = Runtime::simulated(1);
            /// # let a = rt.spawn(ThreadSpec::new("a"), |_| {}).unwrap();
            /// # let b = rt.spawn(ThreadSpec::new("b"), |_| {}).unwrap();
            /// # let info = |id, u| SchedInfo {
            /// #     id, cpu: 0, priority: u, urgency: Urgency(u as i64), importance: 0, release: Time::ZERO,
            /// #     deadline: None, period: None, relative_deadline: None, wcet: Default::default(),
            /// #     job_cpu_time: Default::default(), job: 0,
            /// # };
            /// let mut fp = FixedPriority::new();
            /// fp.on_ready(&info(b, 10), ReadyReason::Preempted);
            /// // `a` blocks in a call to `b`, which runs.
            /// assert_eq!(fp.on_blocked_pick(&info(a, 20), Time::ZERO), Some(b));
            /// assert_eq!(fp.pick_next(Time::ZERO), None);
            /// ```
            [own]
            fn on_blocked_pick(&mut self, blocked: &SchedInfo, now: Time) -> Option<ThreadId> {
                self.on_blocked(blocked);
                self.pick_next(now)
            }

            /// READY of a woken thread and, when it preempts, the pick, in one call: `woken` became
            /// ready while `running` holds the CPU, with nothing else due there (the kernel's short
            /// path for a reply that wakes its caller). Queue `woken`; when `running` is to be
            /// preempted, queue `running` as a preempted thread and name the thread to run next.
            ///
            /// The default is exactly [`Scheduler::on_ready`] for `woken` (`Woken`), then
            /// [`Scheduler::should_preempt`]; when it says yes, `on_ready` for `running`
            /// (`Preempted`) and [`Scheduler::pick_next`]. A policy may answer faster (the built-in
            /// queue policies do not queue `woken` when it would come straight back out), but must
            /// leave the same queue and return the same answer.
            ///
            /// ```
            /// use tempi::policy::sched::{FixedPriority, SchedInfo, Scheduler, Urgency, WakePick};
            /// # use tempi::{Runtime, ThreadSpec, Time};
            /// # let mut rt = Runtime::simulated(1);
            /// # let a = rt.spawn(ThreadSpec::new("a"), |_| {}).unwrap();
            /// # let b = rt.spawn(ThreadSpec::new("b"), |_| {}).unwrap();
            /// # let info = |id, u| SchedInfo {
            /// #     id, cpu: 0, priority: u, urgency: Urgency(u as i64), importance: 0, release: Time::ZERO,
            /// #     deadline: None, period: None, relative_deadline: None, wcet: Default::default(),
            /// #     job_cpu_time: Default::default(), job: 0,
            /// # };
            /// let mut fp = FixedPriority::new();
            /// // The more urgent caller `a` preempts the server `b`, which is queued.
            /// assert_eq!(fp.on_woken_pick(&info(a, 20), &info(b, 10), Time::ZERO), WakePick::Preempted(Some(a)));
            /// assert_eq!(fp.pick_next(Time::ZERO), Some(b));
            /// // A less urgent one is only queued.
            /// assert_eq!(fp.on_woken_pick(&info(b, 10), &info(a, 20), Time::ZERO), WakePick::Stays);
            /// assert_eq!(fp.pick_next(Time::ZERO), Some(b));
            /// ```
            [own]
            fn on_woken_pick(&mut self, woken: &SchedInfo, running: &SchedInfo, now: Time) -> WakePick {
                self.on_ready(woken, ReadyReason::Woken);
                if !self.should_preempt(running, woken) {
                    return WakePick::Stays;
                }
                self.on_ready(running, ReadyReason::Preempted);
                WakePick::Preempted(self.pick_next(now))
            }

            /// SCHEDULE and pick in one call: the running thread `yielder` yields (it stays ready) and
            /// the kernel asks at once which thread runs next. The kernel calls this instead of
            /// [`Scheduler::on_schedule`] with [`Schedule::Yield`] when it will pick right after, with
            /// nothing in between (one CPU, nothing due); otherwise the two separate hooks.
            ///
            /// The default is exactly [`Scheduler::on_schedule`] (`Yield`) then
            /// [`Scheduler::pick_next`]. A policy may answer faster (the built-in queue policies take
            /// the next thread out before queueing the yielder, and do not queue a yielder that would
            /// come straight back out), but must leave the same queue and return the same thread.
            ///
            /// ```
            /// use tempi::policy::sched::{FixedPriority, SchedInfo, Scheduler, Urgency};
            /// # use tempi::{Runtime, ThreadSpec, Time};
            /// # let mut rt = Runtime::simulated(1);
            /// # let a = rt.spawn(ThreadSpec::new("a"), |_| {}).unwrap();
            /// # let b = rt.spawn(ThreadSpec::new("b"), |_| {}).unwrap();
            /// # let info = |id, u| SchedInfo {
            /// #     id, cpu: 0, priority: u, urgency: Urgency(u as i64), importance: 0, release: Time::ZERO,
            /// #     deadline: None, period: None, relative_deadline: None, wcet: Default::default(),
            /// #     job_cpu_time: Default::default(), job: 0,
            /// # };
            /// let mut fp = FixedPriority::new();
            /// fp.on_ready(&info(b, 10), tempi::policy::sched::ReadyReason::Released);
            /// // `a` yields to `b`, of its own priority, and is queued behind it.
            /// assert_eq!(fp.on_yield_pick(&info(a, 10), Time::ZERO), Some(b));
            /// assert_eq!(fp.pick_next(Time::ZERO), Some(a));
            /// ```
            [own]
            fn on_yield_pick(&mut self, yielder: &SchedInfo, now: Time) -> Option<ThreadId> {
                self.on_schedule(yielder, Schedule::Yield);
                self.pick_next(now)
            }

            /// A ready or running thread's effective urgency changed from `old` to `thread.urgency`.
            /// If it is queued, reposition it. The running thread may also be reported; the kernel
            /// then re-checks preemption itself. A thread that is not ready (dormant between jobs,
            /// asleep, blocked) is not reported: its new urgency comes with [`Scheduler::on_ready`]
            /// when it next becomes ready.
            [forward]
            fn on_urgency_changed(&mut self, _thread: &SchedInfo, _old: Urgency) {}

            /// Whether this policy ever gives time slices. Asked once, when the CPU starts; when
            /// `false` (the default) the kernel skips [`Scheduler::time_slice`] on every dispatch.
            [forward]
            fn time_sliced(&self) -> bool {
                false
            }

            /// The time slice a thread gets when dispatched; `None` runs it until it blocks, yields or
            /// is preempted. Only asked when [`Scheduler::time_sliced`] is `true`.
            [forward]
            fn time_slice(&self, _thread: &SchedInfo) -> Option<Duration> {
                None
            }

            /// Whether one instance of this policy serves every CPU of the run (see "Global policies"
            /// in the [module docs](self)): the first CPU's instance then serves all CPUs, the kernel
            /// runs its most urgent threads on whichever CPUs are free, and the run must be in virtual
            /// time.
            /// Default: `false`, one instance per CPU.
            ///
            /// ```
            /// use tempi::policy::sched::{Edf, GlobalEdf, Scheduler};
            /// assert!(!Edf::new().global());
            /// assert!(GlobalEdf::new().global());
            /// ```
            [forward]
            fn global(&self) -> bool {
                false
            }

            /// Under a global policy ([`Scheduler::global`]): which CPU to offer `woken`, a
            /// thread that just became ready, or more urgent while ready, as Linux's
            /// `select_task_rq` chooses a run queue. `cpus` shows every CPU of the run: answer
            /// the number of one not offered a thread yet ([`CpuView::offered`]) to have it
            /// reschedule at its next turn (it then picks the most urgent ready thread, which
            /// need not be `woken`), or `None` to leave `woken` queued. Any other answer ends
            /// the run with [`crate::Error::BadCpuChoice`]. Default: [`default_cpu_choice`]
            /// (an idle CPU, else the one running the least urgent thread, if `woken`
            /// preempts it). Never called for a per-CPU policy.
            ///
            /// ```
            /// use tempi::policy::sched::{CpuChoice, CpuView, GlobalEdf, SchedInfo, Scheduler};
            /// let s = GlobalEdf::new();
            /// let views = [CpuView { index: 0, running: None, offered: true, holds_cpu: false },
            ///              CpuView { index: 1, running: None, offered: false, holds_cpu: false }];
            /// let choice = CpuChoice::new(&views);
            /// # use tempi::{policy::sched::Urgency, Runtime, ThreadSpec, Time};
            /// # let mut rt = Runtime::simulated(1);
            /// # let t = rt.spawn(ThreadSpec::new("t"), |_| {}).unwrap();
            /// # let woken = SchedInfo {
            /// #     id: t, cpu: 0, priority: 0, urgency: Urgency(0), importance: 0, release: Time::ZERO,
            /// #     deadline: None, period: None, relative_deadline: None, wcet: Default::default(),
            /// #     job_cpu_time: Default::default(), job: 0,
            /// # };
            /// assert_eq!(s.select_cpu(&woken, &choice), Some(1)); // CPU 0 is offered already
            /// ```
            [forward]
            fn select_cpu(&self, woken: &SchedInfo, cpus: &$crate::policy::sched::CpuChoice<'_>) -> Option<usize> {
                $crate::policy::sched::default_cpu_choice(self, woken, cpus)
            }

            /// Whether this policy is preemptive earliest-deadline-first: it always runs the ready
            /// job with the earliest absolute deadline (on its CPU; for a [`Scheduler::global`]
            /// policy, the `m` earliest on the `m` CPUs), and a job with an earlier deadline
            /// preempts. With [`Scheduler::global`] it says which tests describe the policy
            /// ([`PolicyClass::of`]): per CPU, this is what an admission test that guarantees
            /// deadlines assumes ([`crate::admission::Admission::new`] refuses a CPU scheduled
            /// otherwise) and what `tempi analyze` judges by the EDF tests, whatever name the policy
            /// is registered under. A stacked policy answers what the one below it answers unless it
            /// says otherwise; one that changes EDF's decisions must answer `false`.
            /// Default: `false`.
            ///
            /// ```
            /// use tempi::policy::sched::{Edf, FixedPriority, GlobalEdf, Scheduler};
            /// assert!(Edf::new().earliest_deadline_first());
            /// assert!(!FixedPriority::new().earliest_deadline_first());
            /// assert!(GlobalEdf::new().earliest_deadline_first() && GlobalEdf::new().global());
            /// ```
            [forward: "A wrapper that changes the decisions of an EDF policy below it answers `false`."]
            fn earliest_deadline_first(&self) -> bool {
                false
            }

            /// Whether this policy is preemptive fixed priority: it always runs the ready thread of
            /// the highest base priority ([`SchedInfo::priority`], raised by inheritance; on its CPU,
            /// or for a [`Scheduler::global`] policy the `m` highest on the `m` CPUs), and a more
            /// urgent thread preempts. What response-time analysis assumes ([`PolicyClass::of`]),
            /// whatever name the policy is registered under. A stacked policy answers what the one
            /// below it answers unless it says otherwise. Default: `false`.
            ///
            /// ```
            /// use tempi::policy::sched::{Fifo, FixedPriority, GlobalFp, RoundRobin, Scheduler};
            /// assert!(FixedPriority::new().fixed_priority() && GlobalFp::new().fixed_priority());
            /// assert!(!Fifo::new().fixed_priority());
            /// assert!(!RoundRobin::new(std::time::Duration::from_millis(1)).fixed_priority());
            /// ```
            [forward: "A wrapper that changes the decisions of a fixed-priority policy below it answers `false`."]
            fn fixed_priority(&self) -> bool {
                false
            }

            // ----- message-level events (see "Message-level events" in the module docs) ---------------

            /// Which message-level events this policy is told of; asked once, when the CPU starts.
            /// Default: none, and the kernel then calls none of the hooks below but
            /// [`Scheduler::on_schedule`].
            ///
            /// ```
            /// use tempi::policy::sched::{Events, FixedPriority, Scheduler};
            /// assert_eq!(FixedPriority::new().events(), Events::NONE);
            /// ```
            [forward]
            fn events(&self) -> Events {
                Events::NONE
            }

            /// Un-stacking ([`crate::Ctx::unstack_scheduler`]): give back the scheduler this one is
            /// stacked on, with every thread this one kept of its own handed back to it first, leaving
            /// a [`Vacant`] in its place; the kernel then drops this one and the one given back serves
            /// the CPU again. Default: `None`, not stacked on another (un-stacking it is an error).
            ///
            /// ```
            /// use tempi::policy::sched::{FixedPriority, WaitInheritance, Scheduler};
            /// assert!(FixedPriority::new().take_prev().is_none());
            /// let mut pi = WaitInheritance::new(Box::new(FixedPriority::new()));
            /// assert_eq!(pi.take_prev().unwrap().name(), "fp");
            /// ```
            [own: "This default says the wrapper cannot be un-stacked; a wrapper that keeps no threads of its own writes `Some(std::mem::replace(&mut self.prev, Box::new(Vacant)))`."]
            fn take_prev(&mut self) -> Option<Box<dyn Scheduler>> {
                None
            }

            /// SCHEDULE: the running thread gives up the CPU and stays ready, because it yielded or
            /// because its quantum ran out. Default: [`Scheduler::on_yield`] for a yield,
            /// [`Scheduler::on_ready`] with [`ReadyReason::SliceExpired`] for a quantum.
            [own]
            fn on_schedule(&mut self, thread: &SchedInfo, why: Schedule) {
                match why {
                    Schedule::Yield => self.on_yield(thread),
                    Schedule::Quantum => self.on_ready(thread, ReadyReason::SliceExpired),
                }
            }

            /// READY with a constraint ([`Events::READY`]): a message whose constraint is not
            /// [`NO_CONSTRAINT`] was queued for (or handed to) `thread`. Called after the thread was
            /// made ready, if the message woke it; the policy owns its ready queue and may reorder it.
            [forward]
            fn on_message_ready(&mut self, _thread: &SchedInfo, _constraint: i64) {}

            /// PRIO SAVE ([`Events::PRIO`]): a handler running on `thread`'s stack is about to serve a
            /// message with this constraint. An urgency returned is lent to `thread` while it serves
            /// it; PRIO RESTORE ([`Scheduler::on_prio_restore`]) follows with the same `id` either way.
            [forward]
            fn on_prio_save(&mut self, _thread: &SchedInfo, _constraint: i64, _id: InheritId) -> Option<Urgency> {
                None
            }

            /// PRIO RESTORE ([`Events::PRIO`]): the message of PRIO SAVE `id` is served; what was lent
            /// for it is withdrawn (before this call).
            [forward]
            fn on_prio_restore(&mut self, _thread: &SchedInfo, _id: InheritId) {}

            /// NEXT ([`Events::NEXT`]): `thread` blocked or went idle (it waits for a message). The
            /// policy may look at the messages queued on this CPU and cancel some by marking them
            /// (it may not remove one): the recipient reads a cancelled message as
            /// [`crate::message::MsgError::Cancelled`].
            [forward]
            fn on_next(&mut self, _thread: &SchedInfo, _queues: &mut dyn QueuedMessages) {}

            /// CALL ([`Events::CALL`]): `waiter` blocked calling the busy handler `at`, which runs on
            /// `holder`'s stack; `constraint` is the call's. An urgency returned is lent to `holder`
            /// until it leaves the handler, then NICE ([`Scheduler::on_nice`]) reports `id` again.
            [forward]
            fn on_call(
                &mut self,
                _waiter: &SchedInfo,
                _holder: &SchedInfo,
                _at: BlockedAt,
                _constraint: i64,
                _id: InheritId,
            ) -> Option<Urgency> {
                None
            }

            /// PROCURE ([`Events::PROCURE`]): `waiter` blocked at semaphore `at`, inside which `holder`
            /// is (called once per holder). An urgency returned is lent to `holder` until it vacates
            /// `at`, then NICE reports `id`. Transitive: when a raised holder is itself blocked at a
            /// semaphore or a busy handler, the kernel reports that blocking again (PROCURE or CALL,
            /// with the holder as the waiter).
            [forward]
            fn on_procure(&mut self, _waiter: &SchedInfo, _holder: &SchedInfo, _at: BlockedAt, _id: InheritId) -> Option<Urgency> {
                None
            }

            /// NICE: `thread` left the handler or vacated the semaphore `at` for which inheritance
            /// `id` lent it urgency; the lend is withdrawn before this call (`thread.urgency` is what
            /// it keeps). Several NICEs come latest-first when several inheritances end at once.
            [forward]
            fn on_nice(&mut self, _thread: &SchedInfo, _at: BlockedAt, _id: InheritId) {}
        }
    };
}
use scheduler_hooks;

/// A scheduling policy for one CPU. See the [module docs](self) for when each hook is called
/// and an example policy.
///
/// Every hook runs on the CPU's dispatcher, between two thread executions, with no lock held.
/// A hook must not block and should not allocate (pre-size queues in the constructor).
pub trait Scheduler {
    scheduler_hooks!(scheduler_methods);
}

/// The messages queued on a CPU, as [`Scheduler::on_next`] sees them: read them, and cancel
/// one by marking it (its recipient reads it as [`crate::message::MsgError::Cancelled`]).
///
/// ```
/// use tempi::message::Message;
/// use tempi::policy::sched::QueuedMessages;
/// use tempi::ThreadId;
/// /// Cancel every queued message of `t` whose constraint (a deadline in ns) has passed.
/// fn cancel_late(q: &mut dyn QueuedMessages, t: ThreadId, now: i64) -> usize {
///     (0..q.len(t)).filter(|&i| q.get(t, i).is_some_and(|m: Message| m.constraint > 0 && m.constraint < now))
///         .collect::<Vec<_>>().into_iter().filter(|&i| q.cancel(t, i)).count()
/// }
/// # let _ = cancel_late;
/// ```
pub trait QueuedMessages {
    /// The `k`-th thread (from 0) with messages in its new queue; `None` past the last.
    fn thread(&self, k: usize) -> Option<ThreadId>;
    /// How many messages `thread`'s new queue holds.
    fn len(&self, thread: ThreadId) -> usize;
    /// Whether `thread`'s new queue is empty.
    fn is_empty(&self, thread: ThreadId) -> bool {
        self.len(thread) == 0
    }
    /// The `i`-th message of `thread`'s new queue, in reading order.
    fn get(&self, thread: ThreadId, i: usize) -> Option<Message>;
    /// Mark the `i`-th message of `thread`'s new queue cancelled; whether there was one.
    fn cancel(&mut self, thread: ThreadId, i: usize) -> bool;
}
