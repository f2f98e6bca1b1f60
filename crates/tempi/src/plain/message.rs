//! The values of message passing: a [`Message`], what a read selects and returns, a timed
//! message's handle and refusals, the errors of the message calls, and a process's [`Flow`].
//! Re-exported by `tempi::message`, where the model is described.

use std::fmt;
use std::time::Duration;

use crate::plain::ids::ThreadId;

/// A message: its sender and three words whose meaning the application chooses, and
/// optionally a typed payload. `id` and `value` are read by the recipient only; `constraint`
/// (a deadline, for example) may also be read by the recipient's queue policy.
///
/// ```
/// let m = tempi::message::Message::new(7, 100, 0);
/// assert_eq!((m.id, m.value, m.constraint, m.from, m.payload), (7, 100, 0, None, None));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Message {
    /// Who sent it: set by the runtime on every send (`None` only in a message not sent yet).
    pub from: Option<ThreadId>,
    /// What is asked (the application's own code).
    pub id: i64,
    /// The argument or the answer.
    pub value: i64,
    /// A scheduling constraint, such as an absolute deadline in ns.
    pub constraint: i64,
    /// The sender waits for a reply ([`Ctx::call`](crate::Ctx::call)); set by the runtime.
    pub expects_reply: bool,
    /// A value of the application's type, held in a [`PayloadPool`](crate::message::PayloadPool): set by
    /// [`PayloadPool::attach`](crate::message::PayloadPool::attach), taken back by [`PayloadPool::take`](crate::message::PayloadPool::take). The runtime gives the
    /// pool slot back if the message is not delivered.
    pub payload: Option<Payload>,
}

impl Message {
    /// A message with these fields, not sent yet.
    ///
    /// ```
    /// assert_eq!(tempi::message::Message::new(1, 2, 3).value, 2);
    /// ```
    pub const fn new(id: i64, value: i64, constraint: i64) -> Message {
        Message { from: None, id, value, constraint, expects_reply: false, payload: None }
    }

    /// This message with no payload: the copy a sender is answered with once the recipient
    /// holds the payload.
    pub(crate) const fn without_payload(mut self) -> Message {
        self.payload = None;
        self
    }
}

/// A timed message waiting for its instant, as returned by [`Ctx::send_at`](crate::Ctx::send_at),
/// [`Ctx::send_after`](crate::Ctx::send_after) and [`Ctx::bounce_after`](crate::Ctx::bounce_after); give it to [`Ctx::cancel_timer`](crate::Ctx::cancel_timer) to take the
/// message back before it is delivered. A handle names one arming only: once the message is
/// delivered or cancelled, the handle is stale even if the pool reuses the message's slot.
/// A handle belongs to the runtime that armed it: a thread of another runtime is refused
/// with [`MsgError::ForeignRuntime`].
///
/// ```
/// use std::time::Duration;
/// use tempi::message::{Message, MsgError};
/// use tempi::{Runtime, ThreadSpec};
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("t"), |cx| {
///     let h = cx.bounce_after(Duration::from_millis(5), Message::new(1, 0, 0)).unwrap();
///     assert_eq!(cx.cancel_timer(h).unwrap().id, 1);
///     assert_eq!(cx.cancel_timer(h), Err(MsgError::NoSuchTimer));
/// }).unwrap();
/// rt.run().unwrap();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MsgTimer {
    pub(crate) slot: u32,
    pub(crate) stamp: u64,
    /// The identity of the runtime that armed it: slots and stamps of two runtimes coincide.
    pub(crate) runtime: u64,
}

/// What a thread's timed messages ([`Ctx::send_at`](crate::Ctx::send_at), [`Ctx::send_after`](crate::Ctx::send_after),
/// [`Ctx::bounce_after`](crate::Ctx::bounce_after)) met that it could not be told when it armed them: those refused at
/// their instant (the recipient's queue was full, its queue policy refused, its CPU's request
/// queue or pool was full) or dropped because their recipient ended before it. Read with
/// [`Ctx::timed_refusals`](crate::Ctx::timed_refusals); the run's totals, by cause, are in [`crate::MessageStats`].
///
/// ```
/// use std::time::Duration;
/// use tempi::message::{Message, MsgError};
/// use tempi::{Runtime, ThreadSpec, Time};
/// let mut rt = Runtime::simulated(1);
/// // A recipient that never reads: its queue of one is full after the first message.
/// let r = rt.spawn(ThreadSpec::new("r").mailbox(1), |cx| cx.sleep(Duration::from_millis(10))).unwrap();
/// rt.spawn(ThreadSpec::new("s"), move |cx| {
///     cx.send_after(Duration::from_millis(1), r, Message::new(1, 0, 0)).unwrap();
///     cx.send_after(Duration::from_millis(2), r, Message::new(2, 0, 0)).unwrap();
///     cx.sleep(Duration::from_millis(3));
///     let seen = cx.timed_refusals().unwrap();
///     assert_eq!(seen.count, 1);
///     let last = seen.last.unwrap();
///     assert_eq!((last.to, last.msg.id, last.error, last.at), (r, 2, MsgError::QueueFull, Time::from_millis(2)));
/// }).unwrap();
/// let out = rt.run().unwrap();
/// assert_eq!(out.messages.timed_refused_queue_full, 1);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimedRefusals {
    /// How many of the thread's timed messages were refused, since it started.
    pub count: u64,
    /// The latest of them.
    pub last: Option<TimedRefusal>,
}

/// One timed message that was not delivered ([`TimedRefusals`]).
///
/// ```
/// let none = tempi::message::TimedRefusals::default();
/// assert_eq!((none.count, none.last), (0, None));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedRefusal {
    /// Its recipient.
    pub to: ThreadId,
    /// The message, without its payload (which went back to its pool). For a message refused
    /// on another real-time CPU, only its fields: the handle it was armed with is gone.
    pub msg: Message,
    /// Why: [`MsgError::QueueFull`], [`MsgError::Refused`], [`MsgError::NoSuchThread`] (the
    /// recipient ended), [`MsgError::CpuQueueFull`] or [`MsgError::PoolFull`] (real time: the
    /// recipient's CPU had no room for it).
    pub error: MsgError,
    /// When it was refused, on the clock of the CPU that refused it.
    pub at: crate::time::Time,
}

/// How [`Ctx::read`](crate::Ctx::read) waits when the new queue is empty.
///
/// ```
/// use std::time::Duration;
/// let _ = tempi::message::Read::Timeout(Duration::from_millis(2));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// Wait until a message arrives.
    Wait,
    /// Do not wait: [`MsgError::Empty`] if there is none.
    Poll,
    /// Wait at most this long: [`MsgError::Timeout`] if none came.
    Timeout(Duration),
}

/// Which saved message [`Ctx::read_saved`](crate::Ctx::read_saved) takes: the fields given must match, the others are
/// ignored. Among the matching messages the one with the smallest `value` is taken (a save
/// queue is ordered by value), the earliest saved among equal values.
///
/// ```
/// let any = tempi::message::Selection::any();
/// let sevens = tempi::message::Selection::any().id(7).value(3);
/// assert_ne!(any, sevens);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Selection {
    /// Match the sender.
    pub from: Option<ThreadId>,
    /// Match the id.
    pub id: Option<i64>,
    /// Match the value.
    pub value: Option<i64>,
    /// Match the constraint.
    pub constraint: Option<i64>,
}

impl Selection {
    /// Every message matches.
    ///
    /// ```
    /// assert!(tempi::message::Selection::any().matches(&tempi::message::Message::new(1, 2, 3)));
    /// ```
    pub const fn any() -> Selection {
        Selection { from: None, id: None, value: None, constraint: None }
    }
    /// Only messages from `t`.
    ///
    /// ```
    /// # use tempi::{Runtime, ThreadSpec};
    /// # let mut rt = Runtime::simulated(1);
    /// # let t = rt.spawn(ThreadSpec::new("t"), |_| {}).unwrap();
    /// let s = tempi::message::Selection::any().from(t);
    /// assert!(!s.matches(&tempi::message::Message::new(1, 2, 3)));
    /// ```
    pub const fn from(mut self, t: ThreadId) -> Selection {
        self.from = Some(t);
        self
    }
    /// Only messages with this id.
    ///
    /// ```
    /// assert!(!tempi::message::Selection::any().id(2).matches(&tempi::message::Message::new(1, 2, 3)));
    /// ```
    pub const fn id(mut self, id: i64) -> Selection {
        self.id = Some(id);
        self
    }
    /// Only messages with this value.
    ///
    /// ```
    /// assert!(tempi::message::Selection::any().value(2).matches(&tempi::message::Message::new(1, 2, 3)));
    /// ```
    pub const fn value(mut self, value: i64) -> Selection {
        self.value = Some(value);
        self
    }
    /// Only messages with this constraint.
    ///
    /// ```
    /// assert!(tempi::message::Selection::any().constraint(3).matches(&tempi::message::Message::new(1, 2, 3)));
    /// ```
    pub const fn constraint(mut self, constraint: i64) -> Selection {
        self.constraint = Some(constraint);
        self
    }
    /// Whether `m` matches every field given.
    ///
    /// ```
    /// use tempi::message::{Message, Selection};
    /// assert!(Selection::any().id(1).constraint(3).matches(&Message::new(1, 2, 3)));
    /// ```
    pub fn matches(&self, m: &Message) -> bool {
        (self.from.is_none() || self.from == m.from)
            && self.id.is_none_or(|v| v == m.id)
            && self.value.is_none_or(|v| v == m.value)
            && self.constraint.is_none_or(|v| v == m.constraint)
    }
}

/// Why a message call failed.
///
/// ```
/// assert!(tempi::message::MsgError::PoolFull.to_string().contains("pool"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MsgError {
    /// Every message of the pool is in use ([`crate::Config::message_pool`]); traced as
    /// [`TraceKind::MessageRefused`](crate::trace::TraceKind::MessageRefused) with `arg` 0.
    PoolFull,
    /// The recipient's new queue (or the save queue) is full ([`crate::ThreadSpec::mailbox`]);
    /// traced with `arg` 1. From a busy [`Handler`](crate::message::Handler) whose queue is full: traced with `arg` 5
    /// and counted in [`crate::MessageStats::handler_queue_full`].
    QueueFull,
    /// The recipient's queue policy refused the message (it cannot be served within its
    /// constraint); traced with `arg` 2.
    Refused,
    /// No live thread has this id (it ended, or never existed). When the recipient of a
    /// timed message ends before its instant, the refusal is traced on the sender with `arg` 3.
    NoSuchThread(ThreadId),
    /// A thread called itself: it would wait for its own reply forever.
    CallSelf,
    /// The handler belongs to a CPU the runtime does not have, or a handler running on its
    /// CPU's dispatcher (serving a request from another real-time CPU) invoked a handler of
    /// another CPU. (A thread invokes a handler of another real-time CPU through that CPU's
    /// queue; see [`Handler`](crate::message::Handler).)
    CrossCpu {
        /// The CPU of the sender.
        from: usize,
        /// The CPU of the recipient.
        to: usize,
    },
    /// The queue of requests to the recipient's real-time CPU was full
    /// ([`crate::Config::cross_cpu_queue`]): the message was not sent. Counted in
    /// [`crate::CrossCpuStats::queue_full`] and traced as
    /// [`TraceKind::QueueFull`](crate::trace::TraceKind::QueueFull), and traced as a refusal
    /// with `arg` 4 (also for a timed message, which then goes back to the pool).
    CpuQueueFull {
        /// The recipient's CPU.
        cpu: usize,
        /// The size of its queue.
        capacity: usize,
    },
    /// [`Read::Poll`] found the new queue empty.
    Empty,
    /// [`Read::Timeout`] ran out.
    Timeout,
    /// `reply` or `save` with no current message (none read yet, or it was already replied
    /// to or saved).
    NoCurrent,
    /// No saved message matches the selection.
    NoMatch,
    /// The save queue named does not exist ([`crate::ThreadSpec::save_queues`]).
    NoSuchSaveQueue(usize),
    /// The recipient put the call's message away without replying (it read another, or its
    /// invocation ended), or ended with the call in one of its queues; or the handler serving
    /// the call was cut short by the runtime's unwind (an abort, kill or stop) of the thread
    /// whose stack it ran on.
    Unanswered,
    /// The call was made while the thread unwinds, when nothing may wait.
    Unwinding,
    /// The [`Handler`](crate::message::Handler) panicked ([`Handler::is_poisoned`](crate::message::Handler::is_poisoned)): it serves no more messages. A call or send to it fails with this error, and so does every
    /// call that was queued or saved there when it panicked, answered at that instant. Each
    /// such message is counted in [`crate::MessageStats::handler_panicked`] and traced as
    /// [`TraceKind::MessageRefused`](crate::trace::TraceKind::MessageRefused) with `arg` 7 on
    /// its sender; its payload goes back to its pool.
    ///
    /// ```
    /// use tempi::message::{Handler, Message, MsgError};
    /// use tempi::{Runtime, ThreadSpec};
    /// let h = Handler::new("h", 0, 1, |_, m| if m.id == 0 { panic!("bad message") });
    /// let mut rt = Runtime::simulated(1);
    /// let h1 = h.clone();
    /// let first = rt.spawn(ThreadSpec::new("first").priority(2), move |cx| {
    ///     let _ = h1.send(cx, Message::new(0, 0, 0));
    /// }).unwrap();
    /// rt.spawn(ThreadSpec::new("next").priority(1), move |cx| {
    ///     assert_eq!(h.call(cx, Message::new(1, 0, 0)), Err(MsgError::HandlerPanicked));
    /// }).unwrap();
    /// let out = rt.run().unwrap();
    /// assert!(matches!(out.thread(first).unwrap().outcome, Some(tempi::ThreadOutcome::Panicked(_))));
    /// // The message it panicked on, and the call refused after.
    /// assert_eq!(out.messages.handler_panicked, 2);
    /// ```
    HandlerPanicked,
    /// The call would wait, and the caller may not: a handler calling a busy handler (a
    /// handler never blocks).
    WouldBlock,
    /// [`Ctx::cancel_timer`](crate::Ctx::cancel_timer) of a timed message that is no longer pending (it was delivered or
    /// cancelled already), or that another thread armed.
    NoSuchTimer,
    /// The [`PayloadPool`](crate::message::PayloadPool) has no free slot.
    PayloadPoolFull,
    /// [`PayloadPool::take`](crate::message::PayloadPool::take) of a message that carries no payload.
    NoPayload,
    /// [`PayloadPool::take`](crate::message::PayloadPool::take) of a payload of another pool: another type, or another pool of
    /// the same type.
    WrongPayload,
    /// [`PayloadPool::take`](crate::message::PayloadPool::take) of a payload taken already, or released by the runtime because
    /// its message was not delivered.
    StalePayload,
    /// The [`Handler`](crate::message::Handler) belongs to another runtime now. A handler belongs to one runtime at a
    /// time: the first invocation by a thread of a runtime binds it to that runtime (to the
    /// kernel of its CPU) until that runtime's run ends; meanwhile a thread of another
    /// runtime is refused with this error, its payload given back. Once the run is over the
    /// handler serves the next runtime that invokes it.
    ///
    /// ```
    /// use std::sync::mpsc;
    /// use tempi::message::{Handler, Message, MsgError};
    /// use tempi::{Runtime, ThreadSpec};
    /// let h = Handler::new("echo", 0, 1, |hcx, m| hcx.reply(m));
    /// let (seen, answers) = mpsc::channel();
    /// let (h1, seen1) = (h.clone(), seen.clone());
    /// let mut a = Runtime::simulated(1);
    /// a.spawn(ThreadSpec::new("a"), move |cx| {
    ///     h1.call(cx, Message::new(1, 0, 0)).unwrap(); // `h` is this runtime's until its run ends
    ///     // Another runtime, running meanwhile, is refused.
    ///     let mut b = Runtime::simulated(1);
    ///     let (h2, seen2) = (h1.clone(), seen1.clone());
    ///     b.spawn(ThreadSpec::new("b"), move |cx| seen2.send(h2.call(cx, Message::new(2, 0, 0))).unwrap()).unwrap();
    ///     std::thread::spawn(move || b.run().unwrap()).join().unwrap();
    /// }).unwrap();
    /// a.run().unwrap();
    /// assert_eq!(answers.recv().unwrap(), Err(MsgError::ForeignRuntime));
    /// // That run is over: the handler serves the next runtime.
    /// let mut c = Runtime::simulated(1);
    /// c.spawn(ThreadSpec::new("c"), move |cx| seen.send(h.call(cx, Message::new(3, 0, 0))).unwrap()).unwrap();
    /// c.run().unwrap();
    /// assert_eq!(answers.recv().unwrap().unwrap().id, 3);
    /// ```
    ForeignRuntime,
    /// The message read was cancelled by the scheduler before it was processed
    /// ([`crate::policy::sched::Scheduler::on_next`]): it is the current message all the same
    /// (the recipient may reply to it or save it), and it is given here.
    Cancelled(Message),
}

impl fmt::Display for MsgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MsgError::PoolFull => write!(f, "the message pool is exhausted"),
            MsgError::QueueFull => write!(f, "the queue is full"),
            MsgError::Refused => write!(f, "the recipient's queue policy refused the message"),
            MsgError::NoSuchThread(t) => write!(f, "no live thread {t:?}"),
            MsgError::CallSelf => write!(f, "a thread cannot call itself"),
            MsgError::CrossCpu { from, to } => {
                write!(f, "messages do not cross from real-time CPU {from} to CPU {to}")
            }
            MsgError::CpuQueueFull { cpu, capacity } => {
                write!(f, "the request queue of CPU {cpu} is full ({capacity} entries)")
            }
            MsgError::Empty => write!(f, "no message"),
            MsgError::Timeout => write!(f, "no message in time"),
            MsgError::NoCurrent => write!(f, "no current message"),
            MsgError::NoMatch => write!(f, "no saved message matches"),
            MsgError::NoSuchSaveQueue(k) => write!(f, "no save queue {k}"),
            MsgError::Unanswered => write!(f, "the call was put away without a reply"),
            MsgError::Unwinding => write!(f, "the thread is unwinding"),
            MsgError::HandlerPanicked => write!(f, "the handler panicked: it serves no more messages"),
            MsgError::WouldBlock => write!(f, "a handler may not wait"),
            MsgError::NoSuchTimer => write!(f, "no such pending timed message"),
            MsgError::PayloadPoolFull => write!(f, "the payload pool is exhausted"),
            MsgError::NoPayload => write!(f, "the message carries no payload"),
            MsgError::WrongPayload => write!(f, "the payload belongs to another pool (another type)"),
            MsgError::StalePayload => write!(f, "the payload was taken or released already"),
            MsgError::Cancelled(m) => write!(f, "message {} was cancelled by the scheduler", m.id),
            MsgError::ForeignRuntime => {
                write!(f, "the handler belongs to another runtime until that runtime's run ends")
            }
        }
    }
}

impl std::error::Error for MsgError {}

/// What a process's body says after a message: keep the process, answer the message and keep
/// the process, or end it.
///
/// ```
/// use tempi::message::{Flow, Message};
/// assert_ne!(Flow::Continue, Flow::Stop);
/// assert_ne!(Flow::Reply(Message::new(1, 2, 3)), Flow::Continue);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Wait for the next message.
    Continue,
    /// Reply to the message with these fields, then wait for the next message: one runtime
    /// call for both ([`Ctx::reply_and_read`](crate::Ctx::reply_and_read)). A reply that cannot be made (the message was
    /// already answered or saved, an asynchronous sender has ended or refuses it) is dropped;
    /// the process goes on reading.
    Reply(Message),
    /// The process is done: it ends.
    Stop,
}

/// A message's handle on a value in a [`PayloadPool`](crate::message::PayloadPool): which pool, which slot, and which use
/// of that slot. It is plain data; only the pool it names can turn it back into a value.
///
/// ```
/// use tempi::message::Message;
/// use tempi::Runtime;
/// let mut rt = Runtime::simulated(1);
/// let pool = rt.payload_pool::<String>(1).unwrap();
/// let m = pool.attach(Message::new(1, 0, 0), "hello".to_string()).unwrap();
/// assert!(m.payload.is_some());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Payload {
    pub(crate) pool: u32,
    pub(crate) slot: u32,
    pub(crate) stamp: u32,
}
