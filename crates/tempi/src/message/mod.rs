//! Messages between threads: what a message is, how it is read, selected and refused.
//!
//! Every thread has a *new queue* of incoming messages, ordered by a
//! [`QueuePolicy`](crate::policy::queue::QueuePolicy) (first come, first served unless the
//! thread's spec names another, see [`crate::ThreadSpec::message_queue`]), and a number of
//! *save queues* for messages it puts aside ([`crate::ThreadSpec::save_queues`]). Messages come
//! from a pool sized before the run ([`crate::Config::message_pool`]) and the queues are sized
//! when the thread is created ([`crate::ThreadSpec::mailbox`]): sending never allocates, and a
//! full pool or queue is an error to the sender and a
//! [`TraceKind::MessageRefused`](crate::trace::TraceKind::MessageRefused) record, never a
//! silent drop. A message may carry a typed value from a [`PayloadPool`]
//! ([`crate::Runtime::payload_pool`]), given back to its pool whenever the message is not
//! delivered. Handlers ([`Handler`]) are receivers without a stack, with save queues of their
//! own ([`HandlerCtx::save`]).
//!
//! The calls are on [`Ctx`]: [`Ctx::send`] (asynchronous), [`Ctx::call`] (waits for the
//! reply), [`Ctx::reply`], [`Ctx::read`], [`Ctx::save`] and [`Ctx::read_saved`]. A
//! *process* is a thread whose body is called once per message ([`process`],
//! [`crate::Runtime::spawn_process`]). Timed messages ([`Ctx::send_at`], [`Ctx::send_after`],
//! [`Ctx::bounce_after`], cancelled with [`Ctx::cancel_timer`]) take their message from the
//! pool when asked for and are delivered at their instant as a send would be.
//!
//! This module owns the model's front end: handlers (stackless receivers running on their
//! callers' stacks or, for another CPU, on their CPU's dispatcher), processes and payload
//! pools, built on the public [`Ctx`] calls and the kernel's handler-host interface; the
//! values (`Message`, `MsgError`, ...) are plain data below every layer, and the queues'
//! mechanism is in the kernel. Must not: reach kernel state.
//!
//! ```
//! use tempi::message::{process, Flow, Message};
//! use tempi::{Runtime, ThreadSpec};
//!
//! let mut rt = Runtime::simulated(1);
//! // A process that doubles what it is called with.
//! let doubler = rt.spawn_process(ThreadSpec::new("doubler").priority(2), |cx, m| {
//!     cx.reply(Message::new(m.id, m.value * 2, m.constraint)).unwrap();
//!     Flow::Continue
//! }).unwrap();
//! rt.spawn(ThreadSpec::new("client").priority(1), move |cx| {
//!     let answer = cx.call(doubler, Message::new(1, 21, 0)).unwrap();
//!     assert_eq!((answer.from, answer.value), (Some(doubler), 42));
//!     cx.kill(doubler).unwrap();
//! }).unwrap();
//! rt.run().unwrap();
//! ```

use crate::kernel::Ctx;

mod handler;
mod handler_calls;
mod handler_saves;
mod handler_unwinds;
mod host;
mod leftovers;
mod payload;

pub(crate) use crate::kernel::HandlerHost;
pub use crate::plain::{Flow, Message, MsgError, MsgTimer, Payload, Read, Selection, TimedRefusal, TimedRefusals};
pub use handler::{Handler, HandlerCtx, HandlerId};
pub(crate) use leftovers::{AtEnd, HANDLER_HOOKS};
pub use payload::{PayloadPool, MAX_PAYLOAD_SLOTS};

/// The thread body of a *process*: `f` is called once per message of the new queue, in the
/// queue's order, and the thread waits while the queue is empty. The process ends when `f`
/// returns [`Flow::Stop`]. A call `f` neither replied to nor saved is answered
/// [`MsgError::Unanswered`] when the next message is read.
///
/// ```
/// use tempi::message::{process, Flow, Message};
/// use tempi::{Runtime, ThreadSpec};
/// let mut rt = Runtime::simulated(1);
/// let p = rt.spawn(ThreadSpec::new("p").priority(2), process(|_cx, m| {
///     if m.id == 0 { Flow::Stop } else { Flow::Continue }
/// })).unwrap();
/// rt.spawn(ThreadSpec::new("s"), move |cx| {
///     cx.send(p, Message::new(1, 0, 0)).unwrap();
///     cx.send(p, Message::new(0, 0, 0)).unwrap();
/// }).unwrap();
/// let out = rt.run().unwrap();
/// assert!(out.thread_named("p").unwrap().outcome.is_some());
/// ```
pub fn process(mut f: impl FnMut(&Ctx<'_>, Message) -> Flow + Send + 'static) -> impl FnMut(&Ctx<'_>) + Send + 'static {
    move |cx: &Ctx<'_>| {
        let mut next = cx.read(Read::Wait);
        loop {
            let m = match next {
                Ok(m) => m,
                // The scheduler cancelled it: not served; its caller is answered `Unanswered`.
                Err(MsgError::Cancelled(_)) => {
                    next = cx.read(Read::Wait);
                    continue;
                }
                Err(_) => return,
            };
            next = match f(cx, m) {
                Flow::Continue => cx.read(Read::Wait),
                // An error of the reply: the read is still to be made. One of the read (a
                // wait that cannot be made) comes back again and ends the process.
                Flow::Reply(r) => cx.reply_and_read(r).or_else(|_| cx.read(Read::Wait)),
                Flow::Stop => return,
            };
        }
    }
}
