//! The cross-CPU queues of a real-time run: each CPU's bounded lock-free queue of requests
//! and its doorbell ([`Crossing`]: posting, draining, the run's shared activity word that
//! decides its end), and a kernel's [`Outbox`] of answers waiting for room in their queue.
//! Generic over what travels, so that the loom models can post small tokens.
//!
//! Owns the queues and the activity word, not what travels: the requests ([`Post`]) and their
//! carrying out are `xcpu/mod.rs`'s. Must not: block (a post never waits for room), or reach
//! kernel state.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::os::loom_shim::{AtomicBool, AtomicU64, AtomicUsize, BoundedQueue, Waker};

use crate::kernel::xcpu::Post;

/// One request in flight, in [`Crossing::activity`].
const IN_FLIGHT: u64 = 1 << 32;
/// The idle dispatchers' half of [`Crossing::activity`].
const IDLE_MASK: u64 = IN_FLIGHT - 1;

/// One CPU's incoming requests.
struct Inbox<P> {
    queue: BoundedQueue<P>,
    /// Set after a post, cleared by the owner before it drains: read by its clock's waits and
    /// by its threads' checkpoints.
    bell: Arc<AtomicBool>,
    /// The dispatcher's OS thread, unparked after a post; set when its run starts.
    dispatcher: Waker,
}

impl<P> Inbox<P> {
    /// Ring the bell and wake the dispatcher.
    ///
    /// The ring is a read-modify-write, as the owner's clearing of it is ([`Crossing::hush`]):
    /// each then reads the other's newest write, so the bell's history is one order both
    /// sides agree on. (A plain store is enough on the hardware, but the loom model, which
    /// keeps the order of a store and a concurrent swap only partly, would let the owner read
    /// its own older clear after the unpark that follows this ring.)
    #[inline]
    fn ring(&self) {
        self.bell.fetch_or(true, Ordering::Release);
        self.dispatcher.unpark();
    }
}

/// The request queues of every CPU of a real-time run, shared by their dispatchers. Generic
/// over what travels only so that the loom model of the protocol can post small tokens.
pub(crate) struct Crossing<P = Post> {
    inboxes: Vec<Inbox<P>>,
    /// Threads alive on every CPU of the run: a dispatcher whose own threads have all ended
    /// stays, since another CPU may still spawn onto it or wait for an answer, until this
    /// reaches zero.
    live: AtomicUsize,
    /// The run's activity in one word, so that one read-modify-write sees both halves at the
    /// same instant: the low 32 bits count the dispatchers with nothing left to do (no timer,
    /// no `work`) waiting for a post, the high 32 bits the requests posted and not yet carried
    /// out, and the answers waiting in an outbox for room in their queue ([`Crossing::owe`]).
    /// Two separate counters let a dispatcher read "the other is idle" before the other
    /// woke and "nothing in flight" after the other had taken the request that woke it, and
    /// end the run while that request's work was still to come.
    activity: AtomicU64,
    /// Dispatchers that have left their loop: when all the others have, nobody can post to
    /// the last one any more.
    finished: AtomicUsize,
}

impl<P> Crossing<P> {
    /// Queues of `capacity` requests for `cpus` CPUs.
    /// `threads`: the threads registered before the run, on every CPU.
    pub(crate) fn new(cpus: usize, capacity: usize, threads: usize) -> Crossing<P> {
        let inboxes = (0..cpus)
            .map(|_| Inbox {
                queue: BoundedQueue::new(capacity.max(1)),
                bell: Arc::new(AtomicBool::new(false)),
                dispatcher: Waker::new(),
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
            inbox.ring();
        }
    }

    /// CPU `cpu`'s doorbell.
    pub(crate) fn bell(&self, cpu: usize) -> Arc<AtomicBool> {
        self.inboxes[cpu].bell.clone()
    }

    /// The calling OS thread is `cpu`'s dispatcher.
    pub(crate) fn register(&self, cpu: usize) {
        self.inboxes[cpu].dispatcher.register_current();
    }

    /// Queue `post` for CPU `cpu` and wake its dispatcher; a full queue gives it back.
    pub(in crate::kernel) fn post(&self, cpu: usize, post: P) -> Result<(), P> {
        // Counted before it can be seen, so no dispatcher finds the run quiet meanwhile.
        self.owe();
        self.post_owed(cpu, post).inspect_err(|_| {
            self.activity.fetch_sub(IN_FLIGHT, Ordering::SeqCst);
        })
    }

    /// An answer that found no room waits in its kernel's outbox: it is counted in flight
    /// until it has been carried out, as if it were in its queue already, so that no
    /// dispatcher ends the run while it is owed (the CPU it is for would leave and never
    /// take it; a refusal on its way back would go uncounted).
    fn owe(&self) {
        self.activity.fetch_add(IN_FLIGHT, Ordering::SeqCst);
    }

    /// Queue `post`, already counted in flight ([`Crossing::owe`]), for CPU `cpu` and wake its
    /// dispatcher; a full queue gives it back, still counted.
    fn post_owed(&self, cpu: usize, post: P) -> Result<(), P> {
        let inbox = &self.inboxes[cpu];
        inbox.queue.push(post)?;
        inbox.ring();
        Ok(())
    }

    /// CPU `cpu`'s dispatcher is about to drain its queue: its bell is quiet again.
    ///
    /// A read-modify-write, not a store: a plain store may become visible only after the
    /// queue was found empty (a store may pass a later load), and so erase the ring of a post
    /// pushed meanwhile, leaving that post in the queue with the bell quiet — the dispatcher
    /// then slept on it and the run could end without it. A swap reads the newest value of
    /// the bell: if it takes a poster's ring, it synchronizes with the poster's push, so the
    /// pop after it finds the post; if the ring comes later, it stays.
    fn hush(&self, cpu: usize) {
        self.inboxes[cpu].bell.swap(false, Ordering::AcqRel);
    }

    /// CPU `cpu`'s dispatcher carries out the requests posted to it, in order, with
    /// `carry_out`; each stays in flight until `carry_out` has returned (and posted or owed
    /// whatever request or answer it led to).
    pub(in crate::kernel) fn drain(&self, cpu: usize, mut carry_out: impl FnMut(P)) {
        // Cleared before draining: a post that lands after the drain rings it again.
        self.hush(cpu);
        while let Some(post) = self.inboxes[cpu].queue.pop() {
            carry_out(post);
            self.activity.fetch_sub(IN_FLIGHT, Ordering::SeqCst);
        }
    }

    /// A thread was created during the run.
    pub(in crate::kernel) fn spawned(&self) {
        self.live.fetch_add(1, Ordering::AcqRel);
    }

    /// A thread ended; the last of the run wakes every dispatcher to stop.
    pub(in crate::kernel) fn exited(&self) {
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.ring_all();
        }
    }

    /// No thread is left on any CPU and no request or answer is on its way or owed: the run
    /// is over, with every request accounted for.
    pub(in crate::kernel) fn over(&self) -> bool {
        self.live.load(Ordering::Acquire) == 0 && self.activity.load(Ordering::SeqCst) >> 32 == 0
    }

    /// A dispatcher has nothing left to do (no timer, no `work`, no answer owed): whether the
    /// whole run is quiet (see [`Kernel::settle_idle`]), after waking every dispatcher if so.
    pub(in crate::kernel) fn settle_idle(&self) -> bool {
        // One read-modify-write: the idle count and the requests in flight as they were at the
        // same instant. Between its own `settle_idle` and `leave_idle` a dispatcher changes
        // nothing unless a request reaches it, and that request is counted until it has been
        // carried out, after `leave_idle`: so "all idle, none in flight" is final.
        let activity = self.activity.fetch_add(1, Ordering::SeqCst) + 1;
        let (idle, in_flight) = (activity & IDLE_MASK, activity >> 32);
        let others_done = self.finished.load(Ordering::Acquire) + 1 == self.inboxes.len();
        if others_done || (idle == self.inboxes.len() as u64 && in_flight == 0) {
            self.ring_all();
            return true;
        }
        false
    }

    /// A dispatcher woke from the wait after [`Crossing::settle_idle`].
    pub(in crate::kernel) fn leave_idle(&self) {
        self.activity.fetch_sub(1, Ordering::SeqCst);
    }

    /// A dispatcher left its loop: the others may now be the last.
    pub(in crate::kernel) fn leave_run(&self) {
        self.finished.fetch_add(1, Ordering::AcqRel);
        self.ring_all();
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

    pub(in crate::kernel) fn capacity(&self, cpu: usize) -> usize {
        self.inboxes[cpu].queue.capacity()
    }
}

/// The steps every loom model's dispatcher takes as `Kernel::run_loop` and `runtime.rs` do,
/// shared by the models of this file and of `sync.rs`.
#[cfg(all(test, loom))]
impl<P> Crossing<P> {
    /// Register CPU `cpu`'s dispatcher, then wait at `gate` until both model CPUs have: a post
    /// made before the registration was seen would find nobody to unpark (and a stale bell).
    pub(in crate::kernel) fn model_arrive(&self, cpu: usize, gate: &AtomicUsize) {
        self.register(cpu);
        gate.fetch_add(1, Ordering::AcqRel);
        while gate.load(Ordering::Acquire) < 2 {
            crate::os::loom_shim::thread::yield_now();
        }
    }

    /// Nothing left to do: whether the run is over, else park until `bell` rings and leave
    /// the idle count. The park has no timeout, so a lost wake-up hangs the model.
    pub(in crate::kernel) fn model_rest(&self, bell: &AtomicBool) -> bool {
        if self.settle_idle() {
            return true;
        }
        while !bell.load(Ordering::Acquire) {
            crate::os::loom_shim::thread::park();
        }
        self.leave_idle();
        false
    }
}

/// The answers one kernel owes other CPUs that found their queue full, in the order they were
/// given: each is counted in flight while it waits ([`Crossing::owe`]).
pub(crate) struct Outbox<P = Post> {
    waiting: VecDeque<(usize, P)>,
}

/// What [`Outbox::send`] did with an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::kernel) enum Sent {
    /// It is in the queue of its CPU.
    Posted,
    /// It waits behind earlier answers.
    Behind,
    /// Its CPU's queue was full: it waits, the newest in the outbox ([`Outbox::newest`]).
    Full,
}

impl<P> Outbox<P> {
    /// An empty outbox, room for `capacity` answers before it allocates.
    pub(crate) fn with_capacity(capacity: usize) -> Outbox<P> {
        Outbox { waiting: VecDeque::with_capacity(capacity) }
    }

    #[inline(always)]
    pub(in crate::kernel) fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// Post `post`, an answer owed to CPU `to`, or keep it: behind the answers already
    /// waiting (answers keep their order), or when the queue is full.
    pub(in crate::kernel) fn send(&mut self, crossing: &Crossing<P>, to: usize, post: P) -> Sent {
        if !self.waiting.is_empty() {
            crossing.owe();
            self.waiting.push_back((to, post));
            return Sent::Behind;
        }
        match crossing.post(to, post) {
            Ok(()) => Sent::Posted,
            Err(post) => {
                crossing.owe();
                self.waiting.push_back((to, post));
                Sent::Full
            }
        }
    }

    /// The answer [`Outbox::send`] kept last.
    pub(in crate::kernel) fn newest(&self) -> Option<&P> {
        self.waiting.back().map(|(_, post)| post)
    }

    /// Post the waiting answers, in order, until one finds its queue still full; `posted` is
    /// told the CPU of each one posted.
    pub(in crate::kernel) fn flush(&mut self, crossing: &Crossing<P>, mut posted: impl FnMut(usize)) {
        while let Some((to, post)) = self.waiting.pop_front() {
            if let Err(post) = crossing.post_owed(to, post) {
                // What follows keeps its place behind it.
                self.waiting.push_front((to, post));
                break;
            }
            posted(to);
        }
    }
}
