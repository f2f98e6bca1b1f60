//! The message calls of [`Ctx`]: send, call, reply, read, save, read_saved (see
//! [`crate::message`] for the model and `messaging/messages.rs` for the mechanism).
//!
//! Must not: reach kernel state: the fields go through the thread's mail cell, the call
//! through a request.

use std::time::Duration;

use crate::kernel::thread_side::calls::MsgCall;
use crate::kernel::thread_side::ctx::Ctx;
use crate::kernel::thread_side::protocol::MsgOp;
use crate::plain::HandlerId;
use crate::plain::ThreadId;
use crate::plain::{Message, MsgError, MsgTimer, Read, Selection};
use crate::policy::sched::{Events, InheritId};
use crate::time::Time;

impl Ctx<'_> {
    /// Send `msg` to thread `to` and go on: it joins `to`'s new queue (or wakes `to` if it
    /// waits in [`Ctx::read`]). The sender is filled in. Fails with
    /// [`MsgError::PoolFull`], [`MsgError::QueueFull`] or [`MsgError::Refused`] (each traced
    /// as [`TraceKind::MessageRefused`](crate::trace::TraceKind::MessageRefused)), or
    /// [`MsgError::NoSuchThread`]. To a thread of another real-time CPU the message travels
    /// through that CPU's request queue and the sender waits until it is delivered there (or
    /// refused), so the result is the same as in virtual time; a full request queue is
    /// [`MsgError::CpuQueueFull`].
    ///
    /// ```
    /// use tempi::message::{Message, Read};
    /// use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// let r = rt.spawn(ThreadSpec::new("r"), |cx| {
    ///     let m = cx.read(Read::Wait).unwrap();
    ///     assert_eq!((m.id, m.value), (1, 2));
    /// }).unwrap();
    /// rt.spawn(ThreadSpec::new("s"), move |cx| cx.send(r, Message::new(1, 2, 0)).unwrap()).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn send(&self, to: ThreadId, msg: Message) -> Result<(), MsgError> {
        self.mail.msg.set(msg);
        self.invoke(MsgCall(MsgOp::Send { to }))
    }

    /// Send `msg` to thread `to` and wait for its reply ([`Ctx::reply`]), which is returned
    /// (from a thread of another real-time CPU, through this CPU's request queue).
    /// Fails as [`Ctx::send`] does, with [`MsgError::CallSelf`] for a call to itself, and with
    /// [`MsgError::Unanswered`] if the recipient put the message away without replying.
    ///
    /// ```
    /// use tempi::message::{Message, Read};
    /// use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// let r = rt.spawn(ThreadSpec::new("r"), |cx| {
    ///     let m = cx.read(Read::Wait).unwrap();
    ///     cx.reply(Message::new(m.id, m.value + 1, 0)).unwrap();
    /// }).unwrap();
    /// rt.spawn(ThreadSpec::new("c"), move |cx| {
    ///     assert_eq!(cx.call(r, Message::new(0, 41, 0)).unwrap().value, 42);
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn call(&self, to: ThreadId, msg: Message) -> Result<Message, MsgError> {
        self.mail.msg.set(msg);
        self.invoke_with(|| MsgCall(MsgOp::Call { to }))?;
        Ok(self.mail.msg.get())
    }

    /// Answer the current message (the one last read) with these fields: a waiting caller gets
    /// them as the result of its [`Ctx::call`]; the sender of an asynchronous message gets them
    /// as a new message. [`MsgError::NoCurrent`] if there is no current message.
    ///
    /// ```
    /// use tempi::message::{Message, MsgError};
    /// use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("t"), |cx| {
    ///     assert_eq!(cx.reply(Message::new(0, 0, 0)), Err(MsgError::NoCurrent));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn reply(&self, msg: Message) -> Result<(), MsgError> {
        self.mail.msg.set(msg);
        self.invoke(MsgCall(MsgOp::Reply))
    }

    /// [`Ctx::reply`] with `msg`, then [`Ctx::read`] the next message, waiting for one, in a
    /// single runtime call: what a process that answers every message does between two
    /// messages ([`Flow::Reply`]), one switch into the runtime fewer per message. The caller
    /// is answered (and may run first, if more urgent) exactly as after `reply`; the read
    /// then behaves as `read(Read::Wait)`. If the reply cannot be made, its error is returned
    /// and no message is read.
    ///
    /// [`Flow::Reply`]: crate::message::Flow::Reply
    ///
    /// ```
    /// use tempi::message::{Message, Read};
    /// use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// let echo = rt.spawn(ThreadSpec::new("echo").priority(1), |cx| {
    ///     let mut m = cx.read(Read::Wait).unwrap();
    ///     while m.id != 0 {
    ///         m = cx.reply_and_read(m).unwrap();
    ///     }
    ///     cx.reply(m).unwrap();
    /// }).unwrap();
    /// rt.spawn(ThreadSpec::new("client").priority(2), move |cx| {
    ///     assert_eq!(cx.call(echo, Message::new(1, 6, 0)).unwrap().value, 6);
    ///     assert_eq!(cx.call(echo, Message::new(1, 7, 0)).unwrap().value, 7);
    ///     assert_eq!(cx.call(echo, Message::new(0, 0, 0)).unwrap().id, 0);
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn reply_and_read(&self, msg: Message) -> Result<Message, MsgError> {
        self.mail.msg.set(msg);
        match self.invoke_with(|| MsgCall(MsgOp::ReplyRead)) {
            Ok(()) => Ok(self.mail.msg.get()),
            // The read is still to be made (or a ranked queue's head is to be taken).
            Err(MsgError::Empty) => self.read(Read::Wait),
            Err(e) => Err(e),
        }
    }

    /// Take the next message of the new queue; it becomes the current message (a previous
    /// current message that was a call and was neither replied to nor saved is answered
    /// [`MsgError::Unanswered`]). `mode` says whether to wait when the queue is empty.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::message::{MsgError, Read};
    /// use tempi::{Runtime, ThreadSpec, Time};
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("t"), |cx| {
    ///     assert_eq!(cx.read(Read::Poll), Err(MsgError::Empty));
    ///     assert_eq!(cx.read(Read::Timeout(Duration::from_millis(3))), Err(MsgError::Timeout));
    ///     assert_eq!(cx.now(), Time::from_millis(3));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn read(&self, mode: Read) -> Result<Message, MsgError> {
        let (wait, deadline) = match mode {
            Read::Wait => (true, None),
            Read::Poll => (false, None),
            Read::Timeout(d) => (true, Some(self.now().saturating_add(d))),
        };
        loop {
            match self.invoke(MsgCall(MsgOp::Read { wait, deadline })) {
                Ok(()) => return Ok(self.mail.msg.get()),
                // Woken for a message of a ranked queue: take the queue's head now.
                Err(MsgError::Empty) if wait => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Put the current message into save queue `queue` (0 is the first), with `id`, `value`
    /// and `constraint` rewritten from `fields` (its sender is kept). A caller waiting for
    /// it keeps waiting: saving a call and serving it later is how a thread makes a caller
    /// wait for a condition.
    ///
    /// ```
    /// use tempi::message::{Message, Read, Selection};
    /// use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// let r = rt.spawn(ThreadSpec::new("r"), |cx| {
    ///     let m = cx.read(Read::Wait).unwrap();
    ///     cx.save(0, m).unwrap();
    ///     let m = cx.read_saved(0, Selection::any().id(9)).unwrap();
    ///     cx.reply(m).unwrap();
    /// }).unwrap();
    /// rt.spawn(ThreadSpec::new("c"), move |cx| {
    ///     assert_eq!(cx.call(r, Message::new(9, 1, 0)).unwrap().id, 9);
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn save(&self, queue: usize, fields: Message) -> Result<(), MsgError> {
        let q = u32::try_from(queue).map_err(|_| MsgError::NoSuchSaveQueue(queue))?;
        self.mail.msg.set(fields);
        self.invoke(MsgCall(MsgOp::Save(q)))
    }

    /// Take the first message of save queue `queue` that matches `selection` (the queue is
    /// ordered by value); it becomes the current message. [`MsgError::NoMatch`] if none does.
    ///
    /// ```
    /// use tempi::message::{MsgError, Selection};
    /// use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("t"), |cx| {
    ///     assert_eq!(cx.read_saved(0, Selection::any()), Err(MsgError::NoMatch));
    ///     assert_eq!(cx.read_saved(4, Selection::any()), Err(MsgError::NoSuchSaveQueue(4)));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn read_saved(&self, queue: usize, selection: Selection) -> Result<Message, MsgError> {
        let q = u32::try_from(queue).map_err(|_| MsgError::NoSuchSaveQueue(queue))?;
        self.mail.sel.set(selection);
        self.invoke(MsgCall(MsgOp::ReadSaved(q)))?;
        Ok(self.mail.msg.get())
    }

    /// Send `msg` to thread `to` when the time is `at` (at once, if `at` has passed), and go
    /// on. The message is taken from the pool now, so a full pool is
    /// [`MsgError::PoolFull`] here and never a surprise later; the runtime holds it, with no
    /// allocation, until the instant, then delivers it exactly as [`Ctx::send`] made then
    /// would (the recipient's queue policy ranks it, its arrival order is the instant). If it
    /// cannot be delivered then (the recipient's queue is full, or its policy refuses it), it
    /// goes back to the pool and a
    /// [`TraceKind::MessageRefused`](crate::trace::TraceKind::MessageRefused) record is written
    /// for the sender; the same happens when the recipient ends before the instant (at its
    /// end, `arg` 3). Fails at once with [`MsgError::NoSuchThread`]. To a thread of another
    /// real-time CPU the message is posted to that CPU when the timer fires; a full request
    /// queue then is a refusal with `arg` 4. The returned handle cancels it
    /// ([`Ctx::cancel_timer`]).
    ///
    /// ```
    /// use tempi::message::{Message, Read};
    /// use tempi::{Runtime, ThreadSpec, Time};
    /// let mut rt = Runtime::simulated(1);
    /// let r = rt.spawn(ThreadSpec::new("r"), |cx| {
    ///     assert_eq!(cx.read(Read::Wait).unwrap().id, 7);
    ///     assert_eq!(cx.now(), Time::from_millis(4));
    /// }).unwrap();
    /// rt.spawn(ThreadSpec::new("s"), move |cx| {
    ///     cx.send_at(Time::from_millis(4), r, Message::new(7, 0, 0)).unwrap();
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn send_at(&self, at: Time, to: ThreadId, msg: Message) -> Result<MsgTimer, MsgError> {
        self.mail.msg.set(msg);
        self.invoke(MsgCall(MsgOp::SendAt { to, at }))?;
        let (slot, stamp) = self.mail.timer.get();
        Ok(MsgTimer { slot, stamp, runtime: self.runtime() })
    }

    /// [`Ctx::send_at`] the instant `delay` from now.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::message::{Message, Read};
    /// use tempi::{Runtime, ThreadSpec, Time};
    /// let mut rt = Runtime::simulated(1);
    /// let r = rt.spawn(ThreadSpec::new("r"), |cx| {
    ///     cx.read(Read::Wait).unwrap();
    ///     assert_eq!(cx.now(), Time::from_millis(2));
    /// }).unwrap();
    /// rt.spawn(ThreadSpec::new("s"), move |cx| {
    ///     cx.send_after(Duration::from_millis(2), r, Message::new(0, 0, 0)).unwrap();
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn send_after(&self, delay: Duration, to: ThreadId, msg: Message) -> Result<MsgTimer, MsgError> {
        self.send_at(self.now().saturating_add(delay), to, msg)
    }

    /// A timer that answers with the caller's own message: `msg` comes back to this thread's
    /// new queue `delay` from now ([`Ctx::send_after`] to itself). A thread that reads its
    /// messages can so wait for several timeouts and other messages in one place.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::message::{Message, Read};
    /// use tempi::{Runtime, ThreadSpec, Time};
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("t"), |cx| {
    ///     cx.bounce_after(Duration::from_millis(3), Message::new(1, 0, 0)).unwrap();
    ///     let m = cx.read(Read::Wait).unwrap();
    ///     assert_eq!((m.id, m.from, cx.now()), (1, Some(cx.id()), Time::from_millis(3)));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn bounce_after(&self, delay: Duration, msg: Message) -> Result<MsgTimer, MsgError> {
        self.send_after(delay, self.id(), msg)
    }

    /// Take back a timed message not delivered yet: its timer is cancelled and the message is
    /// returned (its slot goes back to the pool). [`MsgError::NoSuchTimer`] if it was
    /// delivered or cancelled already, or if another thread armed it;
    /// [`MsgError::ForeignRuntime`] for a handle of another runtime.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::message::{Message, MsgError, Read};
    /// use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("t"), |cx| {
    ///     let h = cx.bounce_after(Duration::from_millis(3), Message::new(1, 0, 0)).unwrap();
    ///     cx.sleep(Duration::from_millis(1));
    ///     assert_eq!(cx.cancel_timer(h).unwrap().id, 1);
    ///     assert_eq!(cx.read(Read::Timeout(Duration::from_millis(5))), Err(MsgError::Timeout));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn cancel_timer(&self, timer: MsgTimer) -> Result<Message, MsgError> {
        if timer.runtime != self.runtime() {
            return Err(MsgError::ForeignRuntime);
        }
        self.mail.timer.set((timer.slot, timer.stamp));
        self.invoke(MsgCall(MsgOp::CancelTimer))?;
        Ok(self.mail.msg.get())
    }

    /// What this thread's timed messages met that it could not be told when it armed them:
    /// how many were refused at their instant (the recipient's queue was full, its queue
    /// policy refused, or, in real time, its CPU had no room) or dropped because their
    /// recipient ended first, and the latest of them. A refused message is gone (its slot and
    /// payload went back to their pools); it is also counted in [`crate::MessageStats`] and
    /// traced. In real time, one refused on another CPU is known here once that CPU's answer
    /// has come back. [`MsgError::Unwinding`] while the thread unwinds.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::message::{Message, MsgError};
    /// use tempi::{Runtime, ThreadSpec, Time};
    /// let mut rt = Runtime::simulated(1);
    /// let r = rt.spawn(ThreadSpec::new("r").priority(2), |cx| cx.sleep(Duration::from_millis(1))).unwrap();
    /// rt.spawn(ThreadSpec::new("s"), move |cx| {
    ///     cx.send_at(Time::from_millis(5), r, Message::new(9, 0, 0)).unwrap();
    ///     assert_eq!(cx.timed_refusals().unwrap().count, 0);
    ///     cx.sleep(Duration::from_millis(2)); // `r` ends at 1 ms
    ///     let last = cx.timed_refusals().unwrap().last.unwrap();
    ///     assert_eq!((last.msg.id, last.error, last.at), (9, MsgError::NoSuchThread(r), Time::from_millis(1)));
    /// }).unwrap();
    /// assert_eq!(rt.run().unwrap().messages.timed_refused_recipient_ended, 1);
    /// ```
    pub fn timed_refusals(&self) -> Result<crate::plain::TimedRefusals, MsgError> {
        self.invoke(MsgCall(MsgOp::TimedRefusals))?;
        Ok(self.mail.refused_timed.get())
    }

    /// Wait for the handler `handler` to answer the call queued or saved with `token` (whose
    /// constraint is `constraint`): a busy handler running on `holder`'s stack (reported as
    /// CALL), or, with no holder, a handler that saved the call and is idle now.
    pub(crate) fn handler_await(
        &self,
        token: u32,
        handler: HandlerId,
        holder: Option<ThreadId>,
        constraint: i64,
    ) -> Result<Message, MsgError> {
        // Set only while this thread waits at a handler.
        self.mail.handed_over.set(false);
        // What CALL reports travels in the mail cell, keeping the request small.
        self.mail.msg.set(Message {
            from: holder,
            id: handler.raw() as i64,
            value: 0,
            constraint,
            expects_reply: false,
            payload: None,
        });
        self.invoke(MsgCall(MsgOp::AwaitHandler { token }))?;
        Ok(self.mail.msg.get())
    }

    /// The message-level events this thread's CPU reports to its scheduler.
    #[inline]
    pub(crate) fn meta_events(&self) -> Events {
        Events::from_bits(self.mail.events.get())
    }

    /// Whether leaving a handler takes more than its release: this thread holds urgency lent
    /// for a handler on its stack, to give back ([`Ctx::handler_left`]), or it is OS-backed
    /// and looks at the handler's queue again once it has released it (see
    /// [`crate::kernel::messaging::messages::LEAVE_RECHECK`]).
    #[inline]
    pub(crate) fn slow_leave(&self) -> bool {
        self.mail.leave.get() != 0
    }

    /// A handler on this stack is done (its queue drained): report NICE if this thread holds
    /// urgency lent for it.
    #[inline]
    pub(crate) fn handler_left(&self, handler: HandlerId) {
        if self.mail.leave.get() & crate::kernel::messaging::messages::LEAVE_NICE != 0 {
            let _ = self.invoke(MsgCall(MsgOp::LeftHandler(handler)));
        }
    }

    /// PRIO SAVE for a message with `constraint` a handler on this stack is about to serve.
    pub(crate) fn prio_save(&self, constraint: i64) -> InheritId {
        let _ = self.invoke(MsgCall(MsgOp::PrioSave(constraint)));
        InheritId::from_raw(self.mail.timer.get().1)
    }

    /// PRIO RESTORE of `id`.
    pub(crate) fn prio_restore(&self, id: InheritId) {
        let _ = self.invoke(MsgCall(MsgOp::PrioRestore(id)));
    }

    /// A handler running on this thread's stack answers `caller`'s queued call `token` with
    /// `reply` (`None`: unanswered).
    pub(crate) fn handler_answer(&self, caller: ThreadId, token: u32, reply: Option<Message>) {
        if let Some(m) = reply {
            self.mail.msg.set(m);
        }
        let _ = self.invoke(MsgCall(MsgOp::AnswerCaller { caller, token, answered: reply.is_some() }));
    }

    /// A busy handler's full queue refused this thread's message: the kernel traces and
    /// counts it (`MessageStats::handler_queue_full`).
    #[cold]
    pub(crate) fn handler_refused(&self, msg: Message) {
        self.mail.msg.set(msg);
        let _ = self.invoke(MsgCall(MsgOp::HandlerRefused));
    }

    /// `msg`, a handler's message, is not delivered on: its payload, if any, goes back to its
    /// pool. No runtime call for a message without one.
    #[inline]
    pub(crate) fn drop_payload(&self, msg: Message) {
        if msg.payload.is_some() {
            self.mail.msg.set(msg);
            let _ = self.invoke(MsgCall(MsgOp::DropPayload));
        }
    }

    /// Whether this thread runs on a real-time dispatcher (one kernel per CPU).
    pub(crate) fn real_time(&self) -> bool {
        self.real_clock.is_some()
    }

    /// [`Ctx::read`] with a timeout; a shorthand for `read(Read::Timeout(d))`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("t"), |cx| assert!(cx.read_timeout(Duration::from_millis(1)).is_err())).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn read_timeout(&self, d: Duration) -> Result<Message, MsgError> {
        self.read(Read::Timeout(d))
    }
}
