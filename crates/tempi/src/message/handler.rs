//! Handlers: message receivers without a stack of their own.
//!
//! An idle handler runs at once on the stack of the thread that sends or calls it, inside that
//! thread's coroutine, so invoking it costs a function call, not a switch; before giving the
//! stack back it serves every message that was queued for it meanwhile. A busy handler (running
//! on another thread's stack, which was preempted at a runtime call inside it) queues the
//! message: a sender goes on, a caller waits in its kernel until the handler, draining its
//! queue, answers. A handler is non-reentrant, runs at the urgency of the thread whose stack it
//! borrows, and never blocks: its [`HandlerCtx`] offers no waiting call, and calling a busy
//! handler from a handler fails with [`MsgError::WouldBlock`]. Its save queues
//! (`handler_saves.rs`) make it a monitor: a saved call's caller waits until an invocation
//! serves it.
//!
//! A handler belongs to a CPU. In real time a thread of another CPU cannot lend its stack
//! there: its request goes through that CPU's queue, and that CPU's dispatcher serves it —
//! runs an idle handler on its own stack, unpreempted until the queue is drained, or queues
//! the message at a busy one, whose holder answers the caller across the CPUs
//! (`kernel/xcpu/handlers.rs`). A caller waits for a call's reply, and for a send until it has
//! been run or queued, so both clocks give the same answers.
//!
//! A handler belongs to one runtime at a time, bound to the kernel of its CPU by the first
//! invocation of a thread of that runtime and freed when the runtime's run ends
//! (`leftovers.rs`); a thread of another runtime meanwhile is refused with
//! [`MsgError::ForeignRuntime`]. Only that kernel's code enters the handler, one piece at a
//! time, so its busy flag is taken without an atomic read-modify-write
//! (`os/busy_cell.rs`).
//!
//! A handler whose function panics is *poisoned*, as a lock is, and stays so: its state may be
//! half-changed, so it serves no more messages. (An abort, kill or stop of the thread it runs
//! on unwinds it too, but that is the runtime's doing, not the handler's: it poisons nothing,
//! as it poisons no lock, and the handler is released as it stands. A call it was serving for
//! another thread is answered `Unanswered` once the unwind is over, and what was queued there
//! meanwhile is not left to wait for an invocation that may never come: the oldest caller
//! still waiting takes the handler over, see
//! [`super::leftovers::settle_unwound`].) Its function is replaced by one that
//! refuses every message with [`MsgError::HandlerPanicked`] (kept, not dropped, until the
//! handler is: its captures' destructors would run inside the unwind), so the idle path pays
//! nothing for the check. Nothing it held is stranded: the message it was serving and every
//! message queued or saved there are put back in its queue, and once the unwind is over (at
//! the same instant) the kernel runs that queue through the refusing function — each waiting
//! caller, of this CPU or another, is answered [`MsgError::HandlerPanicked`], each message is
//! counted ([`crate::MessageStats::handler_panicked`]) and traced, its payload given back. A
//! handler that panics on a dispatcher (serving another CPU's request) ends the run, as any
//! code the kernel calls does ([`crate::Error::Panicked`] naming the handler, source
//! [`crate::PanicSource::Handler`]), which settles what it held as at any end.
//!
//! Owns the handler's state (busy flag, bounded queue, save queues, function, poison) and its
//! invocation path on a thread's stack (`handler_calls.rs`; on a dispatcher, `host.rs`; the
//! guards that act when an unwind passes through it, `handler_unwinds.rs`); the kernel only
//! parks and wakes the callers of a busy handler and carries requests between CPUs. Must not:
//! reach kernel state.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::{Message, MsgError};
use crate::error::Error;
use crate::kernel::Ctx;
use crate::kernel::{Caller, HandlerHost};
use crate::os::busy_cell::BusyCell;
pub use crate::plain::HandlerId;
use crate::plain::ThreadId;
use crate::time::Time;

pub(super) type HandlerFn = Box<dyn FnMut(&HandlerCtx<'_, '_>, Message) + Send>;

/// Tokens pairing a queued call with the caller waiting for it, unique in the process (up to
/// wrap-around), so a stale answer never wakes a later call.
pub(super) static TOKENS: AtomicU32 = AtomicU32::new(1);

/// Handler identities, unique in the process.
static HANDLER_IDS: AtomicU64 = AtomicU64::new(1);

/// A message queued while the handler was busy.
pub(super) struct Pending {
    pub(super) msg: Message,
    /// The waiting caller, for a call.
    pub(super) caller: Option<Caller>,
}

/// A message the handler put aside ([`HandlerCtx::save`]).
#[derive(Clone, Copy)]
pub(super) struct Saved {
    pub(super) msg: Message,
    /// The waiting caller, for a call: it waits until the message is served.
    pub(super) caller: Option<Caller>,
    /// Save order, for ties of `value`.
    pub(super) seq: u64,
}

/// What the handler runs on: a thread's stack, or its CPU's dispatcher (a request from
/// another CPU).
#[derive(Clone, Copy)]
pub(super) enum Via<'h, 'c> {
    Thread(&'h Ctx<'c>),
    Host(&'h RefCell<dyn HandlerHost + 'c>),
}

impl Via<'_, '_> {
    /// Give the payload of `msg` back to its pool.
    pub(super) fn drop_payload(self, msg: Message) {
        match self {
            Via::Thread(cx) => cx.drop_payload(msg),
            Via::Host(host) => host.borrow_mut().drop_payload(msg),
        }
    }

    /// Answer `caller`'s call, queued or saved, with `reply` (`None`: unanswered).
    pub(super) fn answer(self, caller: Caller, reply: Option<Message>) {
        match (caller, self) {
            (Caller::Local(caller, token), Via::Thread(cx)) => cx.handler_answer(caller, token, reply),
            (Caller::Remote(caller, stamp), Via::Thread(cx)) => cx.handler_answer_remote(caller, stamp, reply),
            (caller, Via::Host(host)) => host.borrow_mut().answer(caller, reply),
        }
    }
}

/// What became of the message a handler was invoked for.
pub(super) enum Done {
    /// Answered (`Err(Unanswered)`: not replied to), in the shape a call returns it.
    Reply(Result<Message, MsgError>),
    /// Saved: a queued caller keeps waiting.
    Saved,
    /// Saved, and it was a call made inline by the invoking thread, which is to wait for it
    /// with this token once the handler is idle.
    SavedOwn(u32),
}

/// Whether the invoked message is still current.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Invoked {
    Current,
    Saved,
    SavedOwn(u32),
}

/// A handler's save queues, each ordered by `value`, ties in the order saved; each sized to
/// the handler's capacity when it is made.
#[derive(Default)]
pub(super) struct SaveQueues {
    pub(super) queues: Vec<Vec<Saved>>,
    pub(super) seq: u64,
}

pub(super) struct Inner {
    pub(super) id: HandlerId,
    /// The thread whose stack it runs on while busy (its id as a word).
    pub(super) holder: AtomicU64,
    /// FREE JAZZ's `tame_prio_inv` for a handler: run non-preemptively when invoked from
    /// another handler.
    pub(super) tame: AtomicBool,
    pub(super) name: String,
    pub(super) cpu: usize,
    /// The function, and whether it runs (on some stack, maybe preempted there): entering it
    /// is what keeps a second invocation out, and what [`Handler::is_busy`] reads.
    pub(super) f: BusyCell<HandlerFn>,
    pub(super) pending: Mutex<VecDeque<Pending>>,
    /// How many messages `pending` holds, written under its lock: an invocation that finds
    /// the queue empty (the usual case) looks here instead of taking the lock.
    pub(super) queued: AtomicUsize,
    pub(super) saves: Mutex<SaveQueues>,
    /// The answer to the invoking thread's own saved call, when the handler served it before
    /// that thread began to wait (token, reply).
    pub(super) early: Mutex<Option<(u32, Option<Message>)>>,
    pub(super) cap: usize,
    /// Its function was unwound: `f` now refuses every message (see the module docs).
    pub(super) poisoned: AtomicBool,
    /// The runtime unwound its holder out of it while messages were queued, or while it
    /// served another thread's call: once the unwind is over the kernel answers that call and
    /// hands the handler to the oldest caller waiting there ([`Stay`]).
    pub(super) left: AtomicBool,
    /// Messages whose serving the runtime's unwind of the holder cut short (the one invoked
    /// for, and a saved one taken back), left for the kernel to answer `Unanswered` and give
    /// their payloads back once the unwind is over; room for both is made up front.
    pub(super) cut: Mutex<Vec<Pending>>,
    /// Poisoned with messages put back in its queue that the kernel has still to refuse
    /// ([`super::leftovers::settle_poisoned`]).
    pub(super) unsettled: AtomicBool,
    /// The function that was unwound, kept until the handler is dropped.
    pub(super) broken: Mutex<Option<HandlerFn>>,
}

/// A handler: a function invoked per message on the stack of the thread that sends it (see
/// the module docs). Cloning gives another handle on the same handler. It is made outside
/// any runtime and belongs to the runtime whose thread invokes it first, until that runtime's
/// run ends (others are refused with [`MsgError::ForeignRuntime`] meanwhile).
///
/// ```
/// use std::sync::atomic::{AtomicI64, Ordering};
/// use std::sync::Arc;
/// use tempi::message::{Handler, Message};
/// use tempi::{Runtime, ThreadSpec};
///
/// // A counter as a monitor: `add` messages, and calls that read it.
/// let total = Arc::new(AtomicI64::new(0));
/// let t = total.clone();
/// let counter = Handler::new("counter", 0, 8, move |hcx, m| {
///     let now = t.fetch_add(m.value, Ordering::Relaxed) + m.value;
///     if m.expects_reply {
///         hcx.reply(Message::new(m.id, now, 0));
///     }
/// });
/// let mut rt = Runtime::simulated(1);
/// let c = counter.clone();
/// rt.spawn(ThreadSpec::new("t"), move |cx| {
///     c.send(cx, Message::new(0, 5, 0)).unwrap();
///     assert_eq!(c.call(cx, Message::new(0, 2, 0)).unwrap().value, 7);
/// }).unwrap();
/// rt.run().unwrap();
/// assert_eq!(total.load(Ordering::Relaxed), 7);
/// ```
#[derive(Clone)]
pub struct Handler {
    pub(super) inner: Arc<Inner>,
}

impl fmt::Debug for Handler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handler").field("name", &self.inner.name).field("cpu", &self.inner.cpu).finish_non_exhaustive()
    }
}

pub(super) fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Queue `p` in `h`'s queue (locked as `queue`), keeping the count in step.
pub(super) fn enqueue(h: &Inner, queue: &mut VecDeque<Pending>, p: Pending) {
    queue.push_back(p);
    h.queued.store(queue.len(), Ordering::Release);
}

impl Handler {
    /// The most messages a handler's queue holds, and each of its save queues (2^20).
    ///
    /// ```
    /// use tempi::message::Handler;
    /// assert!(Handler::try_new("h", 0, Handler::MAX_CAPACITY + 1, |_, _| {}).is_err());
    /// ```
    pub const MAX_CAPACITY: usize = crate::sizes::MAX_QUEUE;
    /// The most save queues a handler has (1024).
    ///
    /// ```
    /// use tempi::message::Handler;
    /// let h = Handler::try_new("h", 0, 0, |_, _| {}).unwrap();
    /// assert!(h.try_save_queues(Handler::MAX_SAVE_QUEUES + 1).is_err());
    /// ```
    pub const MAX_SAVE_QUEUES: usize = crate::sizes::MAX_SAVE_QUEUES;
    /// The most messages a handler's save queues hold together, the number of save queues
    /// times its capacity (2^22).
    ///
    /// ```
    /// use tempi::message::Handler;
    /// let h = Handler::try_new("h", 0, 1 << 13, |_, _| {}).unwrap();
    /// assert!(h.try_save_queues(1024).is_err());
    /// ```
    pub const MAX_SAVED: usize = crate::sizes::MAX_SAVED;

    /// A handler named `name` for the threads of CPU `cpu` (in real time only they may invoke
    /// it; virtual time has one kernel for every CPU and no such limit), whose queue holds
    /// `capacity` messages while it is busy (sized now: queuing never allocates), running `f`
    /// once per message.
    ///
    /// # Panics
    /// If `capacity` is above [`Handler::MAX_CAPACITY`], or the allocator refuses the queue:
    /// [`Handler::try_new`] reports both as an error instead.
    ///
    /// ```
    /// let h = tempi::message::Handler::new("noop", 0, 4, |_hcx, _m| {});
    /// assert_eq!(h.name(), "noop");
    /// ```
    pub fn new(
        name: impl Into<String>,
        cpu: usize,
        capacity: usize,
        f: impl FnMut(&HandlerCtx<'_, '_>, Message) + Send + 'static,
    ) -> Handler {
        Handler::try_new(name, cpu, capacity, f).unwrap_or_else(|e| panic!("Handler::new: {e}"))
    }

    /// [`Handler::new`], with a `capacity` above [`Handler::MAX_CAPACITY`] refused with
    /// [`Error::InvalidConfig`] (naming the handler, the capacity and the limit) before
    /// anything is allocated, and a queue the allocator refuses reported the same way.
    ///
    /// ```
    /// use tempi::message::Handler;
    /// let h = Handler::try_new("noop", 0, 4, |_hcx, _m| {}).unwrap();
    /// assert_eq!(h.name(), "noop");
    /// let err = Handler::try_new("big", 0, 1 << 32, |_, _| {}).unwrap_err();
    /// assert!(err.to_string().contains("capacity = 4294967296 is above its limit of 1048576"));
    /// ```
    pub fn try_new(
        name: impl Into<String>,
        cpu: usize,
        capacity: usize,
        f: impl FnMut(&HandlerCtx<'_, '_>, Message) + Send + 'static,
    ) -> Result<Handler, Error> {
        let name = name.into();
        crate::sizes::at_most("capacity", capacity, Handler::MAX_CAPACITY)
            .map_err(|e| Handler::named(&name, e, "MAX_CAPACITY"))?;
        // One more than it admits: a handed-over call whose caller is unwound before it runs
        // goes back at the head of a queue that may have filled meanwhile
        // (`handler_unwinds.rs`, `Waiting`), without growing it.
        let pending = crate::sizes::deque_with_capacity(capacity + 1, "the handler's queue")
            .map_err(|e| Handler::named(&name, e, "MAX_CAPACITY"))?;
        let handler = Handler {
            inner: Arc::new(Inner {
                id: HandlerId::from_raw(HANDLER_IDS.fetch_add(1, Ordering::Relaxed)),
                holder: AtomicU64::new(0),
                tame: AtomicBool::new(false),
                name,
                cpu,
                f: BusyCell::new(Box::new(f)),
                pending: Mutex::new(pending),
                queued: AtomicUsize::new(0),
                saves: Mutex::new(SaveQueues::default()),
                early: Mutex::new(None),
                cap: capacity,
                poisoned: AtomicBool::new(false),
                left: AtomicBool::new(false),
                cut: Mutex::new(Vec::with_capacity(2)),
                unsettled: AtomicBool::new(false),
                broken: Mutex::new(None),
            }),
        };
        super::leftovers::register(&handler.inner);
        Ok(handler)
    }

    /// `e` of handler `name`, its limit named as `Handler::{limit}`.
    fn named(name: &str, e: Error, limit: &str) -> Error {
        match e {
            Error::InvalidConfig(why) => Error::InvalidConfig(format!("handler `{name}`: {why} (Handler::{limit})")),
            other => other,
        }
    }

    /// Its name.
    ///
    /// ```
    /// assert_eq!(tempi::message::Handler::new("h", 0, 1, |_, _| {}).name(), "h");
    /// ```
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// FREE JAZZ's `tame_prio_inv` for handlers: when `on`, the handler runs with preemption
    /// off ([`Ctx::preemption`]) whenever it is invoked from another handler, until it has
    /// drained its queue, then the invoking thread's setting is restored. A handler drains its
    /// whole queue before returning, so an inner handler preempted inside an outer one would
    /// stretch the inversion the outer one's waiters see. Off by default.
    ///
    /// ```
    /// use tempi::message::{Handler, Message};
    /// use tempi::{Runtime, ThreadSpec};
    /// let inner = Handler::new("inner", 0, 1, |hcx, m| hcx.reply(m)).tame_prio_inv(true);
    /// let outer = Handler::new("outer", 0, 1, move |hcx, m| hcx.reply(hcx.call_handler(&inner, m).unwrap()));
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("t"), move |cx| {
    ///     assert_eq!(outer.call(cx, Message::new(1, 2, 0)).unwrap().value, 2);
    ///     assert!(cx.preemption(true)); // restored
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn tame_prio_inv(self, on: bool) -> Handler {
        self.inner.tame.store(on, Ordering::Relaxed);
        self
    }

    /// The CPU it belongs to: the one whose threads run it on their stacks. In real time a
    /// thread of another CPU invokes it through this CPU's queue, and this CPU's dispatcher
    /// runs it (see the module docs).
    ///
    /// ```
    /// assert_eq!(tempi::message::Handler::new("h", 1, 1, |_, _| {}).cpu(), 1);
    /// ```
    pub fn cpu(&self) -> usize {
        self.inner.cpu
    }

    /// How many messages wait in its queue (sent or called while it was busy).
    ///
    /// ```
    /// assert_eq!(tempi::message::Handler::new("h", 0, 1, |_, _| {}).queued(), 0);
    /// ```
    pub fn queued(&self) -> usize {
        locked(&self.inner.pending).len()
    }

    /// Give the handler `n` save queues ([`HandlerCtx::save`], [`HandlerCtx::read_saved`]),
    /// each holding as many messages as its queue (sized now: saving never allocates). A
    /// handler has none unless given some; queues it has already are kept, with what they
    /// hold.
    ///
    /// # Panics
    /// If `n` is above [`Handler::MAX_SAVE_QUEUES`], `n` times its capacity is above
    /// [`Handler::MAX_SAVED`], or the allocator refuses the queues:
    /// [`Handler::try_save_queues`] reports each as an error instead.
    ///
    /// ```
    /// use tempi::message::{Handler, Message, MsgError, Selection};
    /// use tempi::{Runtime, ThreadSpec};
    /// let h = Handler::new("h", 0, 2, |hcx, m| {
    ///     assert_eq!(hcx.save(1, m), Err(MsgError::NoSuchSaveQueue(1)));
    ///     hcx.save(0, m).unwrap();
    ///     assert_eq!(hcx.read_saved(0, Selection::any()).unwrap().id, m.id);
    /// })
    /// .save_queues(1);
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("t"), move |cx| h.send(cx, Message::new(3, 0, 0)).unwrap()).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn save_queues(self, n: usize) -> Handler {
        self.try_save_queues(n).unwrap_or_else(|e| panic!("Handler::save_queues: {e}"))
    }

    /// [`Handler::save_queues`], with `n` above [`Handler::MAX_SAVE_QUEUES`], or `n` times the
    /// handler's capacity above [`Handler::MAX_SAVED`], refused with [`Error::InvalidConfig`]
    /// (naming the handler, the value and the limit) before anything is allocated, and queues
    /// the allocator refuses reported the same way. On an error the handler is unchanged
    /// (it is dropped with the error; keep a clone to go on using it).
    ///
    /// ```
    /// use tempi::message::Handler;
    /// let h = Handler::try_new("h", 0, 0, |_, _| {}).unwrap();
    /// let err = h.clone().try_save_queues(1 << 32).unwrap_err();
    /// assert!(err.to_string().contains("save_queues = 4294967296 is above its limit of 1024"));
    /// let _h = h.try_save_queues(2).unwrap();
    /// ```
    pub fn try_save_queues(self, n: usize) -> Result<Handler, Error> {
        let name = &self.inner.name;
        crate::sizes::at_most("save_queues", n, Handler::MAX_SAVE_QUEUES)
            .map_err(|e| Handler::named(name, e, "MAX_SAVE_QUEUES"))?;
        let cap = self.inner.cap;
        if n * cap > Handler::MAX_SAVED {
            return Err(Error::InvalidConfig(format!(
                "handler `{name}`: save_queues × capacity = {n} × {cap} is above its limit of {} (Handler::MAX_SAVED)",
                Handler::MAX_SAVED
            )));
        }
        let mut saves = locked(&self.inner.saves);
        let more = n.saturating_sub(saves.queues.len());
        let mut added = crate::sizes::vec_with_capacity(more, "the handler's save queues")
            .map_err(|e| Handler::named(name, e, "MAX_SAVE_QUEUES"))?;
        for _ in 0..more {
            added.push(
                crate::sizes::vec_with_capacity(cap, "a save queue of the handler")
                    .map_err(|e| Handler::named(name, e, "MAX_SAVED"))?,
            );
        }
        saves.queues.try_reserve_exact(more).map_err(|e| {
            Error::InvalidConfig(format!("handler `{name}`: cannot allocate the list of its save queues: {e}"))
        })?;
        saves.queues.append(&mut added);
        drop(saves);
        Ok(self)
    }

    /// Its identity.
    ///
    /// ```
    /// let h = tempi::message::Handler::new("h", 0, 1, |_, _| {});
    /// assert_eq!(h.id(), h.id());
    /// ```
    pub fn id(&self) -> HandlerId {
        self.inner.id
    }

    /// Whether its function panicked: it then refuses every message with
    /// [`MsgError::HandlerPanicked`], for good (see the module docs). An abort, kill or stop
    /// of the thread it ran on does not poison it.
    ///
    /// ```
    /// use tempi::message::{Handler, Message};
    /// use tempi::{Runtime, ThreadSpec};
    /// let h = Handler::new("h", 0, 1, |_, _| panic!("broken"));
    /// assert!(!h.is_poisoned());
    /// let mut rt = Runtime::simulated(1);
    /// let h1 = h.clone();
    /// rt.spawn(ThreadSpec::new("t"), move |cx| { let _ = h1.send(cx, Message::new(0, 0, 0)); }).unwrap();
    /// rt.run().unwrap();
    /// assert!(h.is_poisoned());
    /// ```
    pub fn is_poisoned(&self) -> bool {
        self.inner.poisoned.load(Ordering::Acquire)
    }

    /// Whether it is running now (on some thread's stack).
    ///
    /// ```
    /// assert!(!tempi::message::Handler::new("h", 0, 1, |_, _| {}).is_busy());
    /// ```
    pub fn is_busy(&self) -> bool {
        self.inner.f.is_busy()
    }
}

/// What a handler's function receives: the non-blocking calls of the thread whose stack it
/// runs on. There is no call that waits: a handler never blocks.
///
/// ```
/// use std::time::Duration;
/// use tempi::message::{Handler, Message};
/// use tempi::{Runtime, ThreadSpec, Time};
/// let h = Handler::new("h", 0, 1, |hcx, _m| {
///     hcx.work(Duration::from_millis(2));
///     hcx.reply(Message::new(0, hcx.now().as_nanos() as i64, 0));
/// });
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("t"), move |cx| {
///     assert_eq!(h.call(cx, Message::new(0, 0, 0)).unwrap().value, 2_000_000);
///     assert_eq!(cx.now(), Time::from_millis(2));
/// }).unwrap();
/// rt.run().unwrap();
/// ```
pub struct HandlerCtx<'h, 'c> {
    pub(super) via: Via<'h, 'c>,
    pub(super) inner: &'h Inner,
    /// The message invoked for and the reply to it.
    pub(super) msg: Message,
    /// Invoked from another handler: the invoking thread may not wait.
    pub(super) nested: bool,
    pub(super) reply: Cell<Result<Message, MsgError>>,
    /// The caller waiting for the invoked message, if it was queued by a call.
    pub(super) caller: Option<Caller>,
    /// Whether the invoked message was saved.
    pub(super) saved: Cell<Invoked>,
    /// The message taken from a save queue, current until answered or saved again.
    pub(super) taken: Cell<Option<Saved>>,
}

impl HandlerCtx<'_, '_> {
    /// The thread whose stack the handler runs on; for a request from another real-time CPU,
    /// served on this CPU's dispatcher, the thread that asked.
    ///
    /// ```
    /// let _ = tempi::message::Handler::new("h", 0, 1, |hcx, _m| { let _ = hcx.invoker(); });
    /// ```
    pub fn invoker(&self) -> ThreadId {
        match self.via {
            Via::Thread(cx) => cx.id(),
            Via::Host(host) => host.borrow().invoker(),
        }
    }
    /// The effective urgency the handler runs at: the invoking thread's, with what it was lent
    /// (a thread blocked calling this busy handler, PRIO SAVE for this message's constraint);
    /// for a request from another real-time CPU, the asking thread's when it asked (the
    /// handler then runs on this CPU's dispatcher, ahead of every thread of the CPU).
    ///
    /// ```
    /// let _ = tempi::message::Handler::new("h", 0, 1, |hcx, _m| { let _ = hcx.urgency(); });
    /// ```
    pub fn urgency(&self) -> crate::policy::sched::Urgency {
        match self.via {
            Via::Thread(cx) => cx.urgency(),
            Via::Host(host) => host.borrow().urgency(),
        }
    }
    /// The current time.
    ///
    /// ```
    /// let _ = tempi::message::Handler::new("h", 0, 1, |hcx, _m| { let _ = hcx.now(); });
    /// ```
    pub fn now(&self) -> Time {
        match self.via {
            Via::Thread(cx) => cx.now(),
            Via::Host(host) => host.borrow().now(),
        }
    }
    /// Spend CPU time (virtual time) or mark a preemption point after it (real time), as
    /// [`Ctx::work`]: the invoking thread may be preempted here, and the handler stays busy.
    /// On the dispatcher (a request from another CPU) the CPU computes for `d`, unpreempted.
    ///
    /// ```
    /// let _ = tempi::message::Handler::new("h", 0, 1, |hcx, _m| hcx.work(std::time::Duration::from_micros(5)));
    /// ```
    pub fn work(&self, d: Duration) {
        match self.via {
            Via::Thread(cx) => cx.work(d),
            Via::Host(host) => host.borrow_mut().work(d),
        }
    }
    /// Answer the current message: the reply a caller gets, or, for a message that was sent,
    /// a message sent back to its sender. The current message is the one the handler was
    /// invoked for, unless it has taken a saved one since ([`HandlerCtx::read_saved`]): a
    /// saved call is answered at once (SIGNAL: its caller, waiting since the save, wakes and
    /// runs if it is more urgent than the invoking thread). With no current message (the
    /// invoked one saved, no saved one taken) the reply is dropped.
    ///
    /// ```
    /// let _ = tempi::message::Handler::new("h", 0, 1, |hcx, m| hcx.reply(m));
    /// ```
    pub fn reply(&self, msg: Message) {
        if let Some(t) = self.taken.take() {
            self.answer_saved(t, Some(msg));
        } else if self.saved.get() == Invoked::Current {
            self.reply.set(Ok(msg));
        }
    }
    /// Send `msg` to a thread, as [`Ctx::send`] (it never waits).
    ///
    /// ```
    /// # use tempi::{Runtime, ThreadSpec};
    /// # let mut rt = Runtime::simulated(1);
    /// # let p = rt.spawn(ThreadSpec::new("p"), |_| {}).unwrap();
    /// let _ = tempi::message::Handler::new("h", 0, 1, move |hcx, m| { let _ = hcx.send(p, m); });
    /// ```
    pub fn send(&self, to: ThreadId, msg: Message) -> Result<(), MsgError> {
        match self.via {
            Via::Thread(cx) => cx.send(to, msg),
            Via::Host(host) => host.borrow_mut().send(to, msg),
        }
    }
}
