//! Operations between the CPUs of a real-time runtime, whose kernels run on separate
//! dispatcher OS threads: each CPU has one bounded lock-free queue of requests from the others
//! (`Crossing`), sized when the run starts ([`crate::Config::cross_cpu_queue`]), and a
//! doorbell. A kernel posts a request (release, kill, set the priority of, spawn onto, join a
//! thread of that CPU, deliver a message to one (`xcpu_messages.rs`), notify a condition
//! variable of that CPU or give a unit back to one of its semaphores, wait on one of them or
//! withdraw from that wait (`xcpu_sync.rs`), or
//! the answer to a
//! spawn, a join or a message), rings the bell and unparks the
//! target dispatcher, whose clock stops waiting when the bell rings (`clock/real_time.rs`).
//! The target drains its queue at the next turn of its loop, before it fires its timers and
//! picks; a thread it is running notices the bell at its next runtime call or
//! [`Ctx::checkpoint`](super::Ctx::checkpoint). A full queue fails the request with
//! [`Error::QueueFull`]; answers a kernel owes another CPU wait in an outbox and are posted
//! again at each turn until they fit, so an answer is never lost. A release, kill or priority
//! change the target cannot carry out is answered too, and counted and traced by the
//! sender's kernel; so is every post that finds a queue full.
//!
//! The run's end is shared too: a dispatcher whose own threads have ended stays while others
//! live (they may still spawn onto it), and a run ends when no thread is left on any CPU and
//! no request or answer is on its way, or when every dispatcher has nothing to do (no timer,
//! no `work`, no answer owed) and no request is in flight — then nothing can happen any more.
//! The idle dispatchers and the requests in flight are counted in one atomic word, so that
//! this is decided on one consistent reading (see `Crossing::activity`).
//!
//! It also keeps what [`Ctx::checkpoint`](super::Ctx::checkpoint) compares with: the instant
//! of the kernel's next timer or execution-time event, published before each resume.
//!
//! Virtual time has no queue: one kernel holds every CPU and carries the operation out at
//! once, at the instant it is asked for. That is what a real-time post approaches as its
//! delivery time goes to zero, and it keeps simulations exact and reproducible.
//!
//! Must not: block (a post never waits for room), or carry out an operation itself (the
//! target kernel does, through the same functions a local request uses).

use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crossbeam_queue::ArrayQueue;

use super::protocol::{Body, Settled};
use super::tcb::{State, Wait};
use super::{CheckpointWatch, Kernel};
use crate::clock::{Clock, ClockMode, RealClock};
use crate::error::Error;
use crate::message::{Message, MsgError};
use crate::objects::{CondId, LockError, SemId};
use crate::thread::{ThreadId, ThreadOutcome, ThreadSpec};
use crate::time::Time;
use crate::trace::TraceKind;

/// One request in flight, in [`Crossing::activity`].
const IN_FLIGHT: u64 = 1 << 32;
/// The idle dispatchers' half of [`Crossing::activity`].
const IDLE_MASK: u64 = IN_FLIGHT - 1;

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
    /// Release a sporadic thread; a failure goes back to CPU `from` as `Refused`.
    Release { target: ThreadId, from: usize },
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
    /// waits on `stamp` (0: a timed message, nobody waits). See `xcpu_messages.rs`.
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
    /// waits), answered with `MsgAnswer`. See `xcpu_handlers.rs`.
    Handler { handler: crate::message::Handler, msg: Message, stamp: u32, urgency: crate::policy::sched::Urgency },
    /// Wake the most urgent waiter (or all) of a condition variable of the target CPU, for
    /// thread `notifier`.
    CondSignal { cond: CondId, all: bool, notifier: ThreadId },
    /// Give a unit back to a semaphore of the target CPU, for `giver` (told if it cannot be).
    Vacate { sem: SemId, giver: ThreadId },
    /// Thread `waiter` waits on a condition variable or semaphore of the target CPU (see
    /// `xcpu_sync.rs`); answered with `WaitAnswer`.
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
    /// What it waits on (see `xcpu_sync.rs`).
    pub(crate) stamp: u32,
    /// The object's raw id.
    pub(crate) obj: u32,
    pub(crate) sem: bool,
    /// A procure that must not wait: the error to answer if no unit is free
    /// (`WouldBlock` for a `try_procure`, `Timeout` for a deadline already passed).
    pub(crate) now_or: NowOr,
    /// The waiter and its scheduling attributes, as the object's queue ranks them.
    pub(crate) info: super::xcpu_sync::WaiterInfo,
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
    fn subject(&self, runtime: u64) -> ThreadId {
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
            Post::MsgAnswer { sender, .. } => {
                ThreadId::from_word(runtime, *sender).expect("a sender's word is not zero")
            }
            Post::TimedRefused { msg, .. } => msg.from.expect("a posted message has a sender"),
            Post::Handler { msg, .. } => msg.from.expect("a posted message has a sender"),
            Post::Vacate { giver, .. } => *giver,
            Post::CondSignal { notifier, .. } => *notifier,
            Post::Wait(w) => w.info.waiter(runtime),
            Post::WaitAnswer { waiter, .. } | Post::Withdraw { waiter, .. } => *waiter,
        }
    }
}

/// One CPU's incoming requests.
struct Inbox {
    queue: ArrayQueue<Post>,
    /// Set after a post, cleared by the owner before it drains: read by its clock's waits and
    /// by its threads' checkpoints.
    bell: Arc<AtomicBool>,
    /// The dispatcher's OS thread, unparked after a post; set when its run starts.
    dispatcher: OnceLock<std::thread::Thread>,
}

/// The request queues of every CPU of a real-time run, shared by their dispatchers.
pub(crate) struct Crossing {
    inboxes: Vec<Inbox>,
    /// Threads alive on every CPU of the run: a dispatcher whose own threads have all ended
    /// stays, since another CPU may still spawn onto it or wait for an answer, until this
    /// reaches zero.
    live: AtomicUsize,
    /// The run's activity in one word, so that one read-modify-write sees both halves at the
    /// same instant: the low 32 bits count the dispatchers with nothing left to do (no timer,
    /// no `work`) waiting for a post, the high 32 bits the requests posted and not yet carried
    /// out. Two separate counters let a dispatcher read "the other is idle" before the other
    /// woke and "nothing in flight" after the other had taken the request that woke it, and
    /// end the run while that request's work was still to come.
    activity: AtomicU64,
    /// Dispatchers that have left their loop: when all the others have, nobody can post to
    /// the last one any more.
    finished: AtomicUsize,
}

impl Crossing {
    /// Queues of `capacity` requests for `cpus` CPUs.
    /// `threads`: the threads registered before the run, on every CPU.
    pub(crate) fn new(cpus: usize, capacity: usize, threads: usize) -> Crossing {
        let inboxes = (0..cpus)
            .map(|_| Inbox {
                queue: ArrayQueue::new(capacity.max(1)),
                bell: Arc::new(AtomicBool::new(false)),
                dispatcher: OnceLock::new(),
            })
            .collect();
        Crossing {
            inboxes,
            live: AtomicUsize::new(threads),
            activity: AtomicU64::new(0),
            finished: AtomicUsize::new(0),
        }
    }

    /// Wake every dispatcher (the run ends, or failed).
    pub(crate) fn ring_all(&self) {
        for inbox in &self.inboxes {
            inbox.bell.store(true, Ordering::Release);
            if let Some(t) = inbox.dispatcher.get() {
                t.unpark();
            }
        }
    }

    /// CPU `cpu`'s doorbell.
    pub(crate) fn bell(&self, cpu: usize) -> Arc<AtomicBool> {
        self.inboxes[cpu].bell.clone()
    }

    /// The calling OS thread is `cpu`'s dispatcher.
    pub(crate) fn register(&self, cpu: usize) {
        let _ = self.inboxes[cpu].dispatcher.set(std::thread::current());
    }

    /// Queue `post` for CPU `cpu` and wake its dispatcher; a full queue gives it back.
    fn post(&self, cpu: usize, post: Post) -> Result<(), Post> {
        let inbox = &self.inboxes[cpu];
        // Counted before it can be seen, so no dispatcher finds the run quiet meanwhile.
        self.activity.fetch_add(IN_FLIGHT, Ordering::SeqCst);
        if let Err(post) = inbox.queue.push(post) {
            self.activity.fetch_sub(IN_FLIGHT, Ordering::SeqCst);
            return Err(post);
        }
        inbox.bell.store(true, Ordering::Release);
        if let Some(t) = inbox.dispatcher.get() {
            t.unpark();
        }
        Ok(())
    }

    /// After every dispatcher has left: empty the queues, and count the requests that were
    /// still in them (posted before the horizon, arrived after their CPU had stopped).
    pub(crate) fn take_leftovers(&self) -> u64 {
        let mut left = 0;
        for inbox in &self.inboxes {
            while inbox.queue.pop().is_some() {
                left += 1;
            }
        }
        left
    }

    fn capacity(&self, cpu: usize) -> usize {
        self.inboxes[cpu].queue.capacity()
    }
}

impl<C: Clock> Kernel<C> {
    /// The CPU of `id`, when it is a live-looking thread of this runtime on another real-time
    /// CPU (whose kernel is another); `None` otherwise.
    pub(super) fn remote_cpu(&self, id: ThreadId) -> Option<usize> {
        self.crossing.as_ref()?;
        if id.runtime() != self.runtime {
            return None;
        }
        // One kernel per CPU, each numbering `slots.len()` slots from `CPU × slots.len()`.
        let to = id.index() / self.slots.len();
        (to != self.first_cpu && to < self.total_cpus).then_some(to)
    }

    /// Post a request to CPU `to`; a full queue fails it with [`Error::QueueFull`], which is
    /// also counted and traced here.
    pub(super) fn post(&mut self, to: usize, post: Post) -> Result<(), Error> {
        let crossing = self.crossing.as_ref().expect("posts are made in real time only");
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
        if let Some(run) = self.full_runs.get_mut(to) {
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
        self.xcpu.queue_full += 1;
        self.full_repeat = false;
        let Some(c) = self.cpu_local(self.first_cpu).filter(|_| self.tracing) else { return };
        let (subject, request) = (post.subject(self.runtime), std::mem::discriminant(post));
        if let Some(Some(run)) = self.full_runs.get(to).copied() {
            if run.subject == subject && run.request == request {
                if let Some(r) = self.cpus[c].trace.get_mut(run.at).filter(|r| r.job < u32::MAX) {
                    r.job += 1;
                    self.full_repeat = true;
                    return;
                }
            }
        }
        let at = self.cpus[c].trace.len();
        self.trace(c, TraceKind::QueueFull, subject, 0, to as u64);
        let kept = self.cpus[c].trace.len() > at;
        if let Some(run) = self.full_runs.get_mut(to) {
            *run = kept.then_some(FullRun { subject, request, at });
        }
    }

    /// Thread `id`'s message was refused for want of room in a CPU's queue (`e`): traced on
    /// the sender as any refused message, unless the refusal repeats one already counted on
    /// an earlier `queue-full` record, whose `message-refused` record stands for it too.
    pub(super) fn refuse_unposted(&mut self, id: ThreadId, e: crate::message::MsgError) -> crate::message::MsgError {
        if self.full_repeat && matches!(e, crate::message::MsgError::CpuQueueFull { .. }) {
            return e;
        }
        self.refuse(id, e)
    }

    /// Post an answer this kernel owes CPU `to`; one that does not fit waits in the outbox
    /// (counted and traced as a full queue once, when it is put there).
    pub(super) fn post_answer(&mut self, to: usize, post: Post) {
        let crossing = self.crossing.as_ref().expect("posts are made in real time only");
        if self.outbox.is_empty() {
            match crossing.post(to, post) {
                Ok(()) => self.note_room(to),
                Err(post) => {
                    self.note_queue_full(to, &post);
                    self.outbox.push_back((to, post));
                }
            }
        } else {
            // Keep the answers in order.
            self.outbox.push_back((to, post));
        }
    }

    /// Whether another CPU rang this one's bell (requests wait in its queue).
    #[inline(always)]
    pub(super) fn bell_rung(&self) -> bool {
        self.bell.as_ref().is_some_and(|b| b.load(Ordering::Acquire))
    }

    /// Carry out the requests other CPUs posted to this one, and post the answers waiting in
    /// the outbox.
    #[cold]
    pub(super) fn drain_posts(&mut self) {
        if !self.outbox.is_empty() {
            self.flush_outbox();
        }
        let Some(crossing) = self.crossing.clone() else { return };
        let cpu = self.first_cpu;
        // Cleared before draining: a post that lands after the drain rings it again. The clear
        // is a read-modify-write, not a store: a plain store may become visible only after the
        // queue was found empty (a store may pass a later load), and so erase the ring of a
        // post pushed meanwhile, leaving that post in the queue with the bell quiet — the
        // dispatcher then slept on it and the run could end without it. A swap reads the
        // newest value of the bell: if it takes a poster's ring, it synchronizes with the
        // poster's push, so the pop below finds the post; if the ring comes later, it stays.
        crossing.inboxes[cpu].bell.swap(false, Ordering::AcqRel);
        while let Some(post) = crossing.inboxes[cpu].queue.pop() {
            self.carry_out(post);
            // Carried out (and any request it led to posted): no longer in flight.
            crossing.activity.fetch_sub(IN_FLIGHT, Ordering::SeqCst);
        }
    }

    fn flush_outbox(&mut self) {
        let Some(crossing) = self.crossing.clone() else { return };
        while let Some((to, post)) = self.outbox.pop_front() {
            if let Err(post) = crossing.post(to, post) {
                // What follows keeps its place behind it.
                self.outbox.push_front((to, post));
                break;
            }
            self.note_room(to);
        }
    }

    /// Carry out one request from another CPU.
    fn carry_out(&mut self, post: Post) {
        match post {
            // A release, kill or priority change that fails here (the thread ended meanwhile,
            // or is not sporadic) fails as a local one would, and the sender is told.
            Post::Release { target, from } => {
                if self.request_release(target, self.first_cpu).is_err() {
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
                self.xcpu.refused += 1;
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
                let to = spawner.index() / self.slots.len();
                self.post_answer(to, Post::Spawned { spawner, stamp, result });
            }
            Post::Join { target, joiner } => {
                let to = joiner.index() / self.slots.len();
                match self.outcome_of(target) {
                    Ok(None) => self.remote_joins.push((target, joiner)),
                    Ok(Some(outcome)) => self.post_answer(to, Post::Joined { joiner, target, outcome: Ok(outcome) }),
                    Err(e) => self.post_answer(to, Post::Joined { joiner, target, outcome: Err(e) }),
                }
            }
            Post::Spawned { spawner, stamp, result } => {
                let waits = Wait::Spawn(stamp);
                if self.local(spawner).is_some_and(|_| self.tcb(spawner).state == State::Blocked(waits)) {
                    self.tcb(spawner)
                        .set_answer(super::protocol::Answer::fallible(result, |id| Settled::Spawned(id).into()));
                    self.wake(spawner);
                } else {
                    // The thread it created, if any, lives on and is reported as any other.
                    let created = result.map_or(u64::MAX, |id| id.index() as u64);
                    self.note_stale_answer(spawner, STALE_SPAWN, created);
                }
            }
            Post::Msg { to, msg, stamp } => self.accept_remote_msg(to, msg, stamp),
            Post::MsgAnswer { sender, stamp, result } => {
                let sender = ThreadId::from_word(self.runtime, sender).expect("a sender's word is not zero");
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
                        Ok(outcome) => self.tcb(joiner).set_answer(super::protocol::Answer::joined(outcome)),
                        Err(e) => self.tcb(joiner).set_answer(super::protocol::Answer::failed(e)),
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
        self.xcpu.stale_answers += 1;
        if let Some(c) = self.cpu_local(self.first_cpu) {
            self.trace(c, TraceKind::StaleAnswer, waiter, request, arg);
        }
    }

    /// A thread was created on this CPU during the run.
    pub(super) fn count_spawn(&self) {
        if let Some(crossing) = &self.crossing {
            crossing.live.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// A thread of this CPU ended; the last of the run wakes every dispatcher to stop.
    pub(super) fn count_exit(&self) {
        if let Some(crossing) = &self.crossing {
            if crossing.live.fetch_sub(1, Ordering::AcqRel) == 1 {
                crossing.ring_all();
            }
        }
    }

    /// Whether the run has no thread left: on any CPU in real time, on this kernel otherwise.
    /// In real time the requests still in flight and the answers this kernel owes are
    /// delivered first (a refusal on its way back is counted by its sender), so the run ends
    /// with every request accounted for.
    #[inline(always)]
    pub(super) fn run_over(&self) -> bool {
        if C::MODE == ClockMode::Virtual {
            return self.live == 0;
        }
        match &self.crossing {
            Some(crossing) => {
                crossing.live.load(Ordering::Acquire) == 0
                    && self.outbox.is_empty()
                    && crossing.activity.load(Ordering::SeqCst) >> 32 == 0
            }
            None => self.live == 0,
        }
    }

    /// This dispatcher has nothing left to do (no timer, no `work`, no answer owed). Returns
    /// whether the whole run is quiet — every dispatcher in the same state and no request in
    /// flight, so nothing can happen any more and the run ends (after waking the others);
    /// otherwise the dispatcher waits for a post and calls [`Kernel::leave_idle`] after.
    pub(super) fn settle_idle(&self) -> bool {
        let Some(crossing) = &self.crossing else { return true };
        // One read-modify-write: the idle count and the requests in flight as they were at the
        // same instant. Between its own `settle_idle` and `leave_idle` a dispatcher changes
        // nothing unless a request reaches it, and that request is counted until it has been
        // carried out, after `leave_idle`: so "all idle, none in flight" is final.
        let activity = crossing.activity.fetch_add(1, Ordering::SeqCst) + 1;
        let (idle, in_flight) = (activity & IDLE_MASK, activity >> 32);
        let others_done = crossing.finished.load(Ordering::Acquire) + 1 == crossing.inboxes.len();
        if others_done || (idle == crossing.inboxes.len() as u64 && in_flight == 0) {
            crossing.ring_all();
            return true;
        }
        false
    }

    /// The dispatcher woke from [`Kernel::settle_idle`]'s wait.
    pub(super) fn leave_idle(&self) {
        if let Some(crossing) = &self.crossing {
            crossing.activity.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// This dispatcher has left its loop: the others may now be the last.
    pub(super) fn leave_run(&self) {
        if let Some(crossing) = &self.crossing {
            crossing.finished.fetch_add(1, Ordering::AcqRel);
            crossing.ring_all();
        }
    }

    /// Wake the other dispatchers, to stop: this one failed.
    pub(super) fn ring_others(&self) {
        if let Some(crossing) = &self.crossing {
            crossing.ring_all();
        }
    }

    /// Tell the thread about to run when the kernel has something to do next on this CPU
    /// (the earliest timer, execution-time event or the run's end), for
    /// [`Ctx::checkpoint`](super::Ctx::checkpoint).
    #[inline]
    pub(super) fn publish_due(&self) {
        let Some(watch) = &self.watch else { return };
        let mut due = self.timers.next_at().unwrap_or(Time::MAX);
        if self.exec_watch > 0 {
            if let Some(t) = self.next_exec_instant() {
                due = due.min(t);
            }
        }
        // Nothing at or past the horizon is carried out in this run.
        let due = if due >= self.horizon { Time::MAX } else { due };
        watch.due.store(due.as_nanos(), Ordering::Relaxed);
    }

    /// Thread `id` of this kernel ended with `outcome`: answer the joiners on other CPUs.
    pub(super) fn answer_remote_joiners(&mut self, id: ThreadId, outcome: &ThreadOutcome) {
        let mut k = 0;
        while k < self.remote_joins.len() {
            let (target, joiner) = self.remote_joins[k];
            if target == id {
                self.remote_joins.swap_remove(k);
                let to = joiner.index() / self.slots.len();
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
        let others = self.slots.len() * self.total_cpus;
        self.remote_joins = Vec::with_capacity(others);
        self.outbox = VecDeque::with_capacity(others);
        self.full_runs = vec![None; self.total_cpus];
        self.watch =
            Some(Rc::new(CheckpointWatch { due: std::sync::atomic::AtomicU64::new(u64::MAX), bell: bell.clone() }));
        self.bell = Some(bell);
        self.crossing = Some(crossing);
    }
}
