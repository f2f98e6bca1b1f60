//! Operations between the CPUs of a real-time runtime, whose kernels run on separate
//! dispatcher OS threads: each CPU has one bounded lock-free queue of requests from the others
//! (`Crossing`), sized when the run starts ([`crate::Config::cross_cpu_queue`]), and a
//! doorbell. A kernel posts a request (release, kill, set the priority of, spawn onto, join a
//! thread of that CPU, deliver a message to one (`messages.rs`), notify a condition
//! variable of that CPU or give a unit back to one of its semaphores, wait on one of them or
//! withdraw from that wait (`sync.rs`), or
//! the answer to a
//! spawn, a join or a message), rings the bell and unparks the
//! target dispatcher, whose clock stops waiting when the bell rings (`clock/real_time.rs`).
//! The target drains its queue at the next turn of its loop, before it fires its timers and
//! picks; a thread it is running notices the bell at its next runtime call or
//! [`Ctx::checkpoint`](crate::kernel::Ctx::checkpoint). A full queue fails the request with
//! [`Error::QueueFull`]; answers a kernel owes another CPU wait in an outbox and are posted
//! again at each turn until they fit, so an answer is never lost. A release, kill or priority
//! change the target cannot carry out is answered too, and counted and traced by the
//! sender's kernel; so is every post that finds a queue full.
//! The queues, their doorbells and the outbox are `queue.rs`'s.
//!
//! The run's end is shared too: a dispatcher whose own threads have ended stays while others
//! live (they may still spawn onto it), and a run ends when no thread is left on any CPU and
//! no request or answer is on its way, or when every dispatcher has nothing to do (no timer,
//! no `work`, no answer owed) and no request is in flight — then nothing can happen any more.
//! The idle dispatchers and the requests in flight are counted in one atomic word, so that
//! this is decided on one consistent reading (see `Crossing::activity`).
//!
//! It also keeps what [`Ctx::checkpoint`](crate::kernel::Ctx::checkpoint) compares with: the instant
//! of the kernel's next timer or execution-time event, published before each resume.
//!
//! Virtual time has no queue: one kernel holds every CPU and carries the operation out at
//! once, at the instant it is asked for. That is what a real-time post approaches as its
//! delivery time goes to zero, and it keeps simulations exact and reproducible.
//!
//! Must not: block (a post never waits for room), or carry out an operation itself (the
//! target kernel does, through the same functions a local request uses).

pub(in crate::kernel) mod handler_host;
pub(in crate::kernel) mod handlers;
pub(in crate::kernel) mod messages;
pub(in crate::kernel) mod queue;
pub(in crate::kernel) mod sync;

use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::clock::{Clock, ClockMode, RealClock};
use crate::error::Error;
use crate::kernel::thread_side::protocol::{Body, Value};
use crate::kernel::threads::tcb::{State, Wait};
use crate::kernel::xcpu::queue::Sent;
pub(crate) use crate::kernel::xcpu::queue::{Crossing, Outbox};
use crate::kernel::{CheckpointWatch, Kernel};
use crate::objects::LockError;
use crate::plain::ThreadId;
use crate::plain::TraceKind;
use crate::plain::{CondId, SemId};
use crate::plain::{Message, MsgError};
use crate::thread::{ThreadOutcome, ThreadSpec};
use crate::time::Time;

/// The requests a [`TraceKind::StaleAnswer`] record names in its `job` field (after the codes
/// of [`RemoteOp`]): a spawn, a join.
const STALE_SPAWN: u32 = 5;
const STALE_JOIN: u32 = 6;

/// The refusals of posts to one CPU's full queue that one `queue-full` record counts: the
/// same kind of request about the same thread, since the last post to that CPU that fitted.
#[derive(Clone, Copy)]
pub(crate) struct FullRun {
    subject: ThreadId,
    request: std::mem::Discriminant<Post>,
    /// The record's place in this kernel's trace buffer.
    at: usize,
}

/// A request from one CPU's kernel to another's.
pub(crate) enum Post {
    /// Release a sporadic thread as of instant `stamp` (`Kernel::request_release`); a
    /// failure goes back to CPU `from` as `Refused`.
    Release { target: ThreadId, from: usize, stamp: Time },
    /// End a thread at its next task boundary.
    Kill { target: ThreadId, from: usize },
    /// Set a thread's priority.
    SetPriority { target: ThreadId, priority: i32, from: usize },
    /// The answer to a release, kill, priority change or semaphore unit CPU `by` could not
    /// carry out (the thread had ended, is not sporadic; the count would overflow): counted
    /// and traced by the sender's kernel. `target` is the thread named (the giver, for a
    /// unit).
    Refused { target: ThreadId, op: RemoteOp, by: usize },
    /// Create a thread; its id (or the error) goes back to `spawner`, which waits on `stamp`
    /// (the last field).
    Spawn(Box<(ThreadSpec, Body, ThreadId, u32)>),
    /// `joiner` waits for `target` to end.
    Join { target: ThreadId, joiner: ThreadId },
    /// The answer to a `Spawn`, for `spawner` waiting on `stamp`.
    Spawned { spawner: ThreadId, stamp: u32, result: Result<ThreadId, Error> },
    /// The answer to a `Join` of `target`: the thread's outcome, or why it cannot be joined.
    Joined { joiner: ThreadId, target: ThreadId, outcome: Result<ThreadOutcome, Error> },
    /// A message for thread `to`, sent by `msg.from` (a call if `msg.expects_reply`), who
    /// waits on `stamp` (0: a timed message, nobody waits). See `messages.rs`.
    Msg { to: ThreadId, msg: Message, stamp: u32 },
    /// The answer to a `Msg`: delivered (a send), the reply (a call), or why not.
    /// `sender` is the sender's slot word ([`ThreadId::to_word`]): it is a thread of the
    /// receiving kernel's runtime, and the answer stays within a `Post`'s size so.
    MsgAnswer { sender: u64, stamp: u32, result: Result<Message, MsgError> },
    /// A timed message `msg` for `to`, posted by `msg.from` at its instant, was refused here
    /// with the error of refusal code `code`: its sender's kernel keeps the refusal for it to
    /// read. (A variant of its own, as small as `Msg`: a `MsgAnswer` would carry the error or
    /// the message, not both.)
    TimedRefused { to: ThreadId, msg: Message, code: u8 },
    /// A message for a handler of the target CPU, from `msg.from` (a call if
    /// `msg.expects_reply`), whose urgency was `urgency`; it waits on `stamp` (0: nobody
    /// waits), answered with `MsgAnswer`. See `handlers.rs`.
    Handler {
        handler: std::sync::Arc<dyn crate::kernel::RemoteHandler>,
        msg: Message,
        stamp: u32,
        urgency: crate::policy::sched::Urgency,
    },
    /// Wake the most urgent waiter (or all) of a condition variable of the target CPU, for
    /// thread `notifier`.
    CondSignal { cond: CondId, all: bool, notifier: ThreadId },
    /// Give a unit back to a semaphore of the target CPU, for `giver` (told if it cannot be).
    Vacate { sem: SemId, giver: ThreadId },
    /// Thread `waiter` waits on a condition variable or semaphore of the target CPU (see
    /// `sync.rs`); answered with `WaitAnswer`.
    Wait(RemoteWait),
    /// The answer to a `Wait`: a unit or a notification for the proxy of `waiter` waiting on
    /// `stamp`, or why the wait was refused. `pass_on`: a `notify_one` that must be passed on
    /// if the waiter gave up meanwhile.
    WaitAnswer { waiter: ThreadId, stamp: u32, obj: u32, sem: bool, result: Result<(), LockError>, pass_on: bool },
    /// `waiter` gave up its wait on `stamp` (timeout, abort, kill): its proxy leaves the
    /// queue of object `obj` if it is still there.
    Withdraw { waiter: ThreadId, stamp: u32, obj: u32, sem: bool },
}

/// A wait on another CPU's condition variable (`sem == false`) or semaphore, with what the
/// object's CPU needs to queue the waiter's proxy where a local waiter would stand.
pub(crate) struct RemoteWait {
    /// What it waits on (see `sync.rs`).
    pub(crate) stamp: u32,
    /// The object's raw id.
    pub(crate) obj: u32,
    pub(crate) sem: bool,
    /// A procure that must not wait: the error to answer if no unit is free
    /// (`WouldBlock` for a `try_procure`, `Timeout` for a deadline already passed).
    pub(crate) now_or: NowOr,
    /// The waiter and its scheduling attributes, as the object's queue ranks them.
    pub(crate) info: crate::kernel::xcpu::sync::WaiterInfo,
}

/// What a remote procure answers when no unit is free.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NowOr {
    /// Wait for a unit.
    Wait,
    /// Answer `LockError::WouldBlock` (`try_procure`).
    WouldBlock,
    /// Answer `LockError::Timeout` (the deadline has passed).
    Timeout,
}

/// The requests whose caller does not wait for the target CPU (they are answered only when
/// they fail there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RemoteOp {
    Release = 0,
    Kill = 1,
    SetPriority = 2,
    Vacate = 3,
    /// A wait on a condition variable or semaphore refused because the object's CPU had no
    /// room for its proxy.
    Wait = 4,
}

impl Post {
    /// The thread the request is about (for the trace of a request that found no room).
    fn subject(&self) -> ThreadId {
        match self {
            Post::Release { target, .. }
            | Post::Kill { target, .. }
            | Post::SetPriority { target, .. }
            | Post::Refused { target, .. }
            | Post::Join { target, .. } => *target,
            Post::Spawn(request) => request.2,
            Post::Spawned { spawner, .. } => *spawner,
            Post::Joined { joiner, .. } => *joiner,
            Post::Msg { to, .. } => *to,
            Post::MsgAnswer { sender, .. } => ThreadId::from_word(*sender).expect("a sender's word is not zero"),
            Post::TimedRefused { msg, .. } => msg.from.expect("a posted message has a sender"),
            Post::Handler { msg, .. } => msg.from.expect("a posted message has a sender"),
            Post::Vacate { giver, .. } => *giver,
            Post::CondSignal { notifier, .. } => *notifier,
            Post::Wait(w) => w.info.waiter(),
            Post::WaitAnswer { waiter, .. } | Post::Withdraw { waiter, .. } => *waiter,
        }
    }
}

impl<C: Clock> Kernel<C> {
    /// The CPU of `id`, when it is a live-looking thread of this runtime on another real-time
    /// CPU (whose kernel is another); `None` otherwise.
    pub(in crate::kernel) fn remote_cpu(&self, id: ThreadId) -> Option<usize> {
        self.cross.crossing.as_ref()?;
        if !self.id_check.owns(id) {
            return None;
        }
        // One kernel per CPU, each numbering `slots.len()` slots from `CPU × slots.len()`.
        let to = id.index() / self.table.slots.len();
        (to != self.first_cpu && to < self.total_cpus).then_some(to)
    }

    /// Post a request to CPU `to`; a full queue fails it with [`Error::QueueFull`], which is
    /// also counted and traced here.
    pub(in crate::kernel) fn post(&mut self, to: usize, post: Post) -> Result<(), Error> {
        let crossing = self.cross.crossing.as_ref().expect("posts are made in real time only");
        let capacity = crossing.capacity(to);
        match crossing.post(to, post) {
            Ok(()) => {
                self.note_room(to);
                Ok(())
            }
            Err(post) => {
                self.note_queue_full(to, &post);
                Err(Error::QueueFull { cpu: to, capacity })
            }
        }
    }

    /// A post to CPU `to` fitted: a refusal after it starts a new `queue-full` record.
    #[inline(always)]
    fn note_room(&mut self, to: usize) {
        if let Some(run) = self.cross.full_runs.get_mut(to) {
            *run = None;
        }
    }

    /// `post` found CPU `to`'s queue full: counted in [`crate::CrossCpuStats::queue_full`],
    /// traced as [`TraceKind::QueueFull`] on the thread it names. A refusal that repeats the
    /// last one to that CPU (the same request about the same thread, no post there fitted
    /// since) is counted in that record's `job` instead of writing another, so a thread
    /// retrying against a full queue cannot fill the trace buffer with them.
    #[cold]
    fn note_queue_full(&mut self, to: usize, post: &Post) {
        self.note_queue_full_of(to, post.subject(), std::mem::discriminant(post));
    }

    /// [`Kernel::note_queue_full`] of a request of kind `request` about `subject`.
    #[cold]
    fn note_queue_full_of(&mut self, to: usize, subject: ThreadId, request: std::mem::Discriminant<Post>) {
        self.cross.stats.queue_full += 1;
        self.cross.full_repeat = false;
        let Some(c) = self.cpu_local(self.first_cpu).filter(|_| self.tracing) else { return };
        if let Some(Some(run)) = self.cross.full_runs.get(to).copied()
            && run.subject == subject
            && run.request == request
            && let Some(r) = self.cpus[c].trace.get_mut(run.at).filter(|r| r.job < u32::MAX)
        {
            r.job += 1;
            self.cross.full_repeat = true;
            return;
        }
        let at = self.cpus[c].trace.len();
        self.trace(c, TraceKind::QueueFull, subject, 0, to as u64);
        let kept = self.cpus[c].trace.len() > at;
        if let Some(run) = self.cross.full_runs.get_mut(to) {
            *run = kept.then_some(FullRun { subject, request, at });
        }
    }

    /// Thread `id`'s message was refused for want of room in a CPU's queue (`e`): traced on
    /// the sender as any refused message, unless the refusal repeats one already counted on
    /// an earlier `queue-full` record, whose `message-refused` record stands for it too.
    pub(in crate::kernel) fn refuse_unposted(
        &mut self,
        id: ThreadId,
        e: crate::plain::MsgError,
    ) -> crate::plain::MsgError {
        if self.cross.full_repeat && matches!(e, crate::plain::MsgError::CpuQueueFull { .. }) {
            return e;
        }
        self.refuse(id, e)
    }

    /// Post an answer this kernel owes CPU `to`; one that does not fit waits in the outbox
    /// (counted and traced as a full queue once, when it is put there).
    pub(in crate::kernel) fn post_answer(&mut self, to: usize, post: Post) {
        let crossing = self.cross.crossing.as_ref().expect("posts are made in real time only");
        match self.cross.outbox.send(crossing, to, post) {
            Sent::Posted => self.note_room(to),
            Sent::Behind => {}
            Sent::Full => {
                let kept = self.cross.outbox.newest().expect("the answer was kept");
                let (subject, request) = (kept.subject(), std::mem::discriminant(kept));
                self.note_queue_full_of(to, subject, request);
            }
        }
    }

    /// Whether another CPU rang this one's bell (requests wait in its queue).
    #[inline(always)]
    pub(in crate::kernel) fn bell_rung(&self) -> bool {
        self.cross.bell.as_ref().is_some_and(|b| b.load(Ordering::Acquire))
    }

    /// Carry out the requests other CPUs posted to this one, and post the answers waiting in
    /// the outbox.
    #[cold]
    pub(in crate::kernel) fn drain_posts(&mut self) {
        if !self.cross.outbox.is_empty() {
            self.flush_outbox();
        }
        let Some(crossing) = self.cross.crossing.clone() else { return };
        crossing.drain(self.first_cpu, |post| self.carry_out(post));
    }

    fn flush_outbox(&mut self) {
        let Some(crossing) = self.cross.crossing.clone() else { return };
        let mut outbox = std::mem::replace(&mut self.cross.outbox, Outbox::with_capacity(0));
        outbox.flush(&crossing, |to| self.note_room(to));
        self.cross.outbox = outbox;
    }

    /// Carry out one request from another CPU.
    fn carry_out(&mut self, post: Post) {
        match post {
            // A release, kill or priority change that fails here (the thread ended meanwhile,
            // or is not sporadic) fails as a local one would, and the sender is told.
            Post::Release { target, from, stamp } => {
                if self.request_release(target, self.first_cpu, stamp).is_err() {
                    self.post_answer(from, Post::Refused { target, op: RemoteOp::Release, by: self.first_cpu });
                }
            }
            Post::Kill { target, from } => {
                if self.local(target).is_some() {
                    self.kill(target);
                } else {
                    self.post_answer(from, Post::Refused { target, op: RemoteOp::Kill, by: self.first_cpu });
                }
            }
            Post::SetPriority { target, priority, from } => {
                if self.local(target).is_some() {
                    self.set_priority_of(target, priority);
                } else {
                    let by = self.first_cpu;
                    self.post_answer(from, Post::Refused { target, op: RemoteOp::SetPriority, by });
                }
            }
            Post::Refused { target, op, by } => {
                // Nobody waits for this answer: it is counted, and traced with the request
                // (`job`) and the CPU that refused it (`arg`).
                self.cross.stats.refused += 1;
                if let Some(c) = self.cpu_local(self.first_cpu) {
                    self.trace(c, TraceKind::CrossCpuRefused, target, op as u32, by as u64);
                }
            }
            Post::CondSignal { cond, all, .. } => self.remote_cond_signal(cond, all),
            Post::Vacate { sem, giver } => self.remote_vacate(sem, giver),
            Post::Wait(w) => self.remote_wait_arrived(w),
            Post::WaitAnswer { waiter, stamp, obj, sem, result, pass_on } => {
                self.on_remote_wait_answer(waiter, stamp, obj, sem, result, pass_on)
            }
            Post::Withdraw { waiter, stamp, obj, sem } => self.remote_withdrawn(waiter, stamp, obj, sem),
            Post::Spawn(request) => {
                let (spec, body, spawner, stamp) = *request;
                let result = self.spawn_thread(spec, body, self.first_cpu);
                let to = spawner.index() / self.table.slots.len();
                self.post_answer(to, Post::Spawned { spawner, stamp, result });
            }
            Post::Join { target, joiner } => {
                let to = joiner.index() / self.table.slots.len();
                match self.outcome_of(target) {
                    Ok(None) => self.cross.remote_joins.push((target, joiner)),
                    Ok(Some(outcome)) => self.post_answer(to, Post::Joined { joiner, target, outcome: Ok(outcome) }),
                    Err(e) => self.post_answer(to, Post::Joined { joiner, target, outcome: Err(e) }),
                }
            }
            Post::Spawned { spawner, stamp, result } => {
                let waits = Wait::Spawn(stamp);
                if self.local(spawner).is_some_and(|_| self.tcb(spawner).state == State::Blocked(waits)) {
                    self.tcb(spawner)
                        .set_answer(crate::kernel::thread_side::protocol::Answer::fallible(result, |id| {
                            Value::Spawned(id).into()
                        }));
                    self.wake(spawner);
                } else {
                    // The thread it created, if any, lives on and is reported as any other.
                    let created = result.map_or(u64::MAX, |id| id.index() as u64);
                    self.note_stale_answer(spawner, STALE_SPAWN, created);
                }
            }
            Post::Msg { to, msg, stamp } => self.accept_remote_msg(to, msg, stamp),
            Post::MsgAnswer { sender, stamp, result } => {
                let sender = ThreadId::from_word(sender).expect("a sender's word is not zero");
                self.on_remote_msg_answer(sender, stamp, result)
            }
            Post::TimedRefused { to, msg, code } => self.on_remote_timed_refusal(to, msg, code),
            Post::Handler { handler, msg, stamp, urgency } => self.accept_remote_handler(&handler, msg, stamp, urgency),
            Post::Joined { joiner, target, outcome } => {
                // A join names its target: the answer to a join given up (abort, kill) is not
                // taken for the answer to a later join of another thread.
                let waits = State::Blocked(Wait::Join(target));
                if self.local(joiner).is_some_and(|_| self.tcb(joiner).state == waits) {
                    match outcome {
                        Ok(outcome) => {
                            self.tcb(joiner).set_answer(crate::kernel::thread_side::protocol::Answer::joined(outcome))
                        }
                        Err(e) => self.tcb(joiner).set_answer(crate::kernel::thread_side::protocol::Answer::failed(e)),
                    }
                    self.wake(joiner);
                } else {
                    self.note_stale_answer(joiner, STALE_JOIN, target.index() as u64);
                }
            }
        }
    }

    /// The answer to a spawn or a join `waiter` gave up on (its job was aborted, or it was
    /// killed, while it waited): nobody takes it. Counted in
    /// [`crate::CrossCpuStats::stale_answers`] and traced as [`TraceKind::StaleAnswer`]
    /// (`request` [`STALE_SPAWN`] or [`STALE_JOIN`], `arg` the thread created or joined).
    #[cold]
    fn note_stale_answer(&mut self, waiter: ThreadId, request: u32, arg: u64) {
        self.cross.stats.stale_answers += 1;
        if let Some(c) = self.cpu_local(self.first_cpu) {
            self.trace(c, TraceKind::StaleAnswer, waiter, request, arg);
        }
    }

    /// A thread was created on this CPU during the run.
    pub(in crate::kernel) fn count_spawn(&self) {
        if let Some(crossing) = &self.cross.crossing {
            crossing.spawned();
        }
    }

    /// A thread of this CPU ended; the last of the run wakes every dispatcher to stop.
    pub(in crate::kernel) fn count_exit(&self) {
        if let Some(crossing) = &self.cross.crossing {
            crossing.exited();
        }
    }

    /// Whether the run has no thread left: on any CPU in real time, on this kernel otherwise.
    /// In real time the requests still in flight and the answers any kernel owes are
    /// delivered first (a refusal on its way back is counted by its sender), so the run ends
    /// with every request accounted for.
    #[inline(always)]
    pub(in crate::kernel) fn run_over(&self) -> bool {
        if C::MODE == ClockMode::Virtual {
            return self.table.live == 0;
        }
        match &self.cross.crossing {
            Some(crossing) => self.cross.outbox.is_empty() && crossing.over(),
            None => self.table.live == 0,
        }
    }

    /// This dispatcher has nothing left to do (no timer, no `work`, no answer owed). Returns
    /// whether the whole run is quiet — every dispatcher in the same state and no request in
    /// flight, so nothing can happen any more and the run ends (after waking the others);
    /// otherwise the dispatcher waits for a post and calls [`Kernel::leave_idle`] after.
    pub(in crate::kernel) fn settle_idle(&self) -> bool {
        self.cross.crossing.as_ref().is_none_or(|crossing| crossing.settle_idle())
    }

    /// The dispatcher woke from [`Kernel::settle_idle`]'s wait.
    pub(in crate::kernel) fn leave_idle(&self) {
        if let Some(crossing) = &self.cross.crossing {
            crossing.leave_idle();
        }
    }

    /// This dispatcher has left its loop: the others may now be the last.
    pub(in crate::kernel) fn leave_run(&self) {
        if let Some(crossing) = &self.cross.crossing {
            crossing.leave_run();
        }
    }

    /// Wake the other dispatchers, to stop: this one failed.
    pub(in crate::kernel) fn ring_others(&self) {
        if let Some(crossing) = &self.cross.crossing {
            crossing.ring_all();
        }
    }

    /// Tell the thread about to run when the kernel has something to do next on this CPU
    /// (the earliest timer, execution-time event or the run's end), for
    /// [`Ctx::checkpoint`](crate::kernel::Ctx::checkpoint).
    #[inline]
    pub(in crate::kernel) fn publish_due(&self) {
        let Some(watch) = &self.watch else { return };
        let mut due = self.timers.next_at().unwrap_or(Time::MAX);
        if self.exec.watch > 0
            && let Some(t) = self.next_exec_instant()
        {
            due = due.min(t);
        }
        // Nothing at or past the horizon is carried out in this run.
        let due = if due >= self.horizon { Time::MAX } else { due };
        watch.due.store(due.as_nanos(), Ordering::Relaxed);
    }

    /// Thread `id` of this kernel ended with `outcome`: answer the joiners on other CPUs.
    pub(in crate::kernel) fn answer_remote_joiners(&mut self, id: ThreadId, outcome: &ThreadOutcome) {
        let mut k = 0;
        while k < self.cross.remote_joins.len() {
            let (target, joiner) = self.cross.remote_joins[k];
            if target == id {
                self.cross.remote_joins.swap_remove(k);
                let to = joiner.index() / self.table.slots.len();
                self.post_answer(to, Post::Joined { joiner, target, outcome: Ok(outcome.clone()) });
            } else {
                k += 1;
            }
        }
    }
}

impl Kernel<RealClock> {
    /// Take part in the run's cross-CPU requests: this dispatcher (the calling OS thread)
    /// drains CPU `first_cpu`'s queue and is woken by its bell. Before the clock is set.
    pub(crate) fn join_crossing(&mut self, crossing: Arc<Crossing>) {
        let cpu = self.first_cpu;
        crossing.register(cpu);
        let bell = crossing.bell(cpu);
        // Every thread of the run could wait on a thread of this CPU, and owe an answer.
        let others = self.table.slots.len() * self.total_cpus;
        self.cross.remote_joins = Vec::with_capacity(others);
        self.cross.outbox = Outbox::with_capacity(others);
        self.cross.full_runs = vec![None; self.total_cpus];
        self.watch =
            Some(Rc::new(CheckpointWatch { due: std::sync::atomic::AtomicU64::new(u64::MAX), bell: bell.clone() }));
        self.cross.bell = Some(bell);
        self.cross.crossing = Some(crossing);
    }
}

/// The loom model of the run's end (docs/ARCHITECTURE.md, "The loom models"): two
/// dispatchers run the loop of `kernel/cpu/run.rs` around the real [`Crossing`] and [`Outbox`],
/// with one queue slot per CPU so that an answer finds its queue full.
#[cfg(all(test, loom))]
mod loom_models {
    use super::{Crossing, Outbox};
    use crate::os::loom_shim::{self, thread, AtomicUsize};
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    /// What travels between the model's CPUs.
    #[derive(Debug)]
    enum Token {
        /// A request carried out without an answer (a release, a notification).
        Note,
        /// A request answered to CPU `from` (a join, a refused kill).
        Ask { from: usize },
        /// The answer to an `Ask`.
        Answer,
    }

    /// The model's run: two CPUs, one queue slot each, two threads.
    struct Run {
        crossing: Crossing<Token>,
        /// The dispatchers that have arrived at the start gate.
        gate: AtomicUsize,
    }

    fn run() -> Arc<Run> {
        Arc::new(Run { crossing: Crossing::new(2, 1, 2), gate: AtomicUsize::new(0) })
    }

    /// One dispatcher's turn of `Kernel::run_loop`, until the run ends: drain the posts (after
    /// the outbox), run its thread once (`thread` posts what it posts, then the thread ends),
    /// end if the run is over, try again soon while answers are owed, else settle idle and
    /// wait for the bell (a park with no timeout: the model does not lean on the real loop's
    /// periodic recheck). Returns the requests its thread asked (what `thread` returns) and
    /// the answers it received.
    fn dispatcher(run: &Run, cpu: usize, thread: impl FnOnce(&Crossing<Token>) -> usize) -> (usize, usize) {
        let crossing = &run.crossing;
        crossing.model_arrive(cpu, &run.gate);
        let bell = crossing.bell(cpu);
        let mut outbox: Outbox<Token> = Outbox::with_capacity(4);
        let mut thread = Some(thread);
        let (mut asked, mut answers) = (0, 0);
        loop {
            if bell.load(Ordering::Acquire) || !outbox.is_empty() {
                if !outbox.is_empty() {
                    outbox.flush(crossing, |_| {});
                }
                crossing.drain(cpu, |post| match post {
                    Token::Note => {}
                    Token::Ask { from } => {
                        outbox.send(crossing, from, Token::Answer);
                    }
                    Token::Answer => answers += 1,
                });
            }
            if let Some(run) = thread.take() {
                asked = run(crossing);
                crossing.exited();
            }
            if outbox.is_empty() && crossing.over() {
                break;
            }
            if !outbox.is_empty() {
                // `next_instant`: the outbox is tried again soon.
                thread::yield_now();
                continue;
            }
            if crossing.model_rest(&bell) {
                break;
            }
        }
        crossing.leave_run();
        (asked, answers)
    }

    /// CPU 0's thread asks CPU 1 (answered), CPU 1's thread posts a note to CPU 0 that may
    /// fill its queue, so the answer may wait in CPU 1's outbox: whatever the interleaving,
    /// both dispatchers leave (none hangs: loom fails a model whose threads all wait) and
    /// the answer was received before the run ended, no request left in a queue.
    #[test]
    fn loom_xcpu_run_never_ends_with_an_answer_owed() {
        loom_shim::check(3, || {
            let crossing = run();
            let theirs = crossing.clone();
            // Both dispatchers on threads of their own: the model's main thread only joins
            // (loom's join does not survive the unpark a leaving dispatcher sends the others).
            let cpu1 = thread::spawn(move || {
                dispatcher(&theirs, 1, |c| {
                    let _ = c.post(0, Token::Note);
                    0
                })
            });
            let theirs = crossing.clone();
            let cpu0 = thread::spawn(move || {
                dispatcher(&theirs, 0, |c| {
                    c.post(1, Token::Ask { from: 0 }).expect("CPU 1's queue holds only this request");
                    1
                })
            });
            assert_eq!(cpu1.join().expect("CPU 1's dispatcher"), (0, 0));
            let (asked, answers) = cpu0.join().expect("CPU 0's dispatcher");
            assert_eq!((asked, answers), (1, 1), "CPU 0's request was answered before the run ended");
            assert_eq!(crossing.crossing.take_leftovers(), 0, "no request was left in a queue");
        });
    }

    /// Both CPUs ask each other and note each other, each queue one slot long: the requests
    /// and answers cross, wait in both outboxes, and the dispatchers settle idle while the
    /// other is busy; still every answer arrives and both leave.
    #[test]
    fn loom_xcpu_crossing_requests_are_all_answered() {
        loom_shim::check(2, || {
            let crossing = run();
            let theirs = crossing.clone();
            let cpu1 = thread::spawn(move || {
                dispatcher(&theirs, 1, |c| {
                    let asked = usize::from(c.post(0, Token::Ask { from: 1 }).is_ok());
                    let _ = c.post(0, Token::Note);
                    asked
                })
            });
            let theirs = crossing.clone();
            let cpu0 = thread::spawn(move || {
                dispatcher(&theirs, 0, |c| {
                    let asked = usize::from(c.post(1, Token::Ask { from: 0 }).is_ok());
                    let _ = c.post(1, Token::Note);
                    asked
                })
            });
            let (asked, answers) = cpu0.join().expect("CPU 0's dispatcher");
            let (asked1, answers1) = cpu1.join().expect("CPU 1's dispatcher");
            assert_eq!(answers, asked, "CPU 0's requests were all answered");
            assert_eq!(answers1, asked1, "CPU 1's requests were all answered");
            assert_eq!(crossing.crossing.take_leftovers(), 0, "no request was left in a queue");
        });
    }
}

/// The kernel's part in the requests between real-time CPUs (all empty in virtual time).
pub(in crate::kernel) struct CrossCpu {
    /// Real time: the request queues of every CPU of the run (see `xcpu/mod.rs`).
    pub(in crate::kernel) crossing: Option<std::sync::Arc<crate::kernel::xcpu::Crossing>>,
    /// Real time: this CPU's doorbell, rung when another CPU posted to it.
    pub(in crate::kernel) bell: Option<std::sync::Arc<crate::os::loom_shim::AtomicBool>>,
    /// Real time: (thread of this CPU, joiner on another CPU), answered when the thread ends.
    pub(in crate::kernel) remote_joins: Vec<(crate::plain::ThreadId, crate::plain::ThreadId)>,
    /// Real time: proxies of threads of other CPUs queued in this kernel's condition variables
    /// and semaphores (at most [`Kernel::proxy_room`], see `xcpu/sync.rs`).
    pub(in crate::kernel) proxies: usize,
    /// Real time: answers owed to other CPUs whose queues were full, posted again each turn.
    pub(in crate::kernel) outbox: crate::kernel::xcpu::Outbox,
    /// Real time, per CPU of the run: the `queue-full` record that counts the refusals of the
    /// posts to that CPU's full queue since the last post that fitted, while they are all the
    /// same request about the same thread (see `xcpu/mod.rs`).
    pub(in crate::kernel) full_runs: Vec<Option<crate::kernel::xcpu::FullRun>>,
    /// Real time: the last post that found a queue full was counted on an earlier record.
    pub(in crate::kernel) full_repeat: bool,
    /// Real time: this kernel's requests refused by other CPUs, and posts that found a queue
    /// full.
    pub(in crate::kernel) stats: crate::stats::CrossCpuStats,
}
