//! A handler's save queues: FREE JAZZ's monitor semantics for handlers. Saving the message a
//! handler serves puts its caller to WAIT (the call is answered only when some later
//! invocation takes the message back and replies); taking a saved message and replying to it
//! is SIGNAL (its caller wakes). A handler that saves its invoking thread's own call makes that
//! thread wait once the handler is idle again.
//!
//! Owns the save queues' order (by `value`, ties in the order saved) and the rules for the
//! current message; the waiting and waking are the kernel's, through the same calls a busy
//! handler's queued callers use. Must not: reach kernel state.

use std::sync::atomic::Ordering;

use super::handler::{locked, HandlerCtx, Invoked, Saved, Via, TOKENS};
use super::{Message, MsgError, Selection};
use crate::kernel::Caller;
use crate::plain::ThreadId;

impl HandlerCtx<'_, '_> {
    /// Put the current message into the handler's save queue `queue` (0 is the first; see
    /// [`Handler::save_queues`](super::Handler::save_queues)), with `id`, `value` and
    /// `constraint` rewritten from `fields` (its sender is kept). A caller waiting for it
    /// keeps waiting (WAIT), also when it is the thread the handler runs on: that thread waits
    /// once the handler has drained its queue, the handler idle meanwhile. Fails with
    /// [`MsgError::NoCurrent`] if the message was already answered or saved,
    /// [`MsgError::NoSuchSaveQueue`] and [`MsgError::QueueFull`] (the message stays current),
    /// and [`MsgError::WouldBlock`] for a call made inline by another handler (which may not
    /// wait).
    ///
    /// ```
    /// use tempi::message::{Handler, Message, Selection};
    /// use tempi::{Runtime, ThreadSpec, Time};
    /// use std::time::Duration;
    /// // A gate: calls with id 0 wait until a message with id 1 opens it.
    /// let gate = Handler::new("gate", 0, 4, |hcx, m| {
    ///     if m.id == 0 {
    ///         hcx.save(0, m).unwrap();
    ///     } else {
    ///         while let Ok(w) = hcx.read_saved(0, Selection::any()) {
    ///             hcx.reply(w);
    ///         }
    ///     }
    /// })
    /// .save_queues(1);
    /// let mut rt = Runtime::simulated(1);
    /// let g = gate.clone();
    /// rt.spawn(ThreadSpec::new("waiter").priority(2), move |cx| {
    ///     g.call(cx, Message::new(0, 0, 0)).unwrap();
    ///     assert_eq!(cx.now(), Time::from_millis(5));
    /// }).unwrap();
    /// rt.spawn(ThreadSpec::new("opener").priority(1), move |cx| {
    ///     cx.sleep(Duration::from_millis(5));
    ///     gate.send(cx, Message::new(1, 0, 0)).unwrap();
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn save(&self, queue: usize, fields: Message) -> Result<(), MsgError> {
        let (mut entry, from_taken) = match self.taken.get() {
            Some(t) => (t, true),
            None if self.saved.get() == Invoked::Current && self.reply_is_empty() => {
                let caller = match (self.caller, self.msg.expects_reply) {
                    (Some(c), _) => Some(c),
                    // The invoking thread's own call, from another handler: it may not wait.
                    (None, true) if self.nested => return Err(MsgError::WouldBlock),
                    // The invoking thread's own call: it will wait with a fresh token. (A call
                    // served on a dispatcher, from another CPU, always names its caller.)
                    (None, true) => match self.via {
                        Via::Thread(cx) => Some(Caller::Local(cx.id(), TOKENS.fetch_add(1, Ordering::Relaxed))),
                        Via::Host(_) => return Err(MsgError::WouldBlock),
                    },
                    (None, false) => None,
                };
                (Saved { msg: self.msg, caller, seq: 0 }, false)
            }
            None => return Err(MsgError::NoCurrent),
        };
        entry.msg.id = fields.id;
        entry.msg.value = fields.value;
        entry.msg.constraint = fields.constraint;
        let mut saves = locked(&self.inner.saves);
        let cap = self.inner.cap;
        let Some(q) = saves.queues.get(queue) else { return Err(MsgError::NoSuchSaveQueue(queue)) };
        if q.len() >= cap {
            return Err(MsgError::QueueFull);
        }
        saves.seq += 1;
        entry.seq = saves.seq;
        let key = |x: &Saved| (x.msg.value, x.seq);
        let q = &mut saves.queues[queue];
        let at = q.partition_point(|x| key(x) < key(&entry));
        q.insert(at, entry);
        drop(saves);
        if from_taken {
            self.taken.set(None);
        } else {
            self.saved.set(match (self.caller, entry.caller) {
                (None, Some(Caller::Local(_, token))) => Invoked::SavedOwn(token),
                _ => Invoked::Saved,
            });
        }
        Ok(())
    }

    /// Take the first message of save queue `queue` that matches `selection` (the queue is
    /// ordered by value, ties in the order saved); it becomes the current message, which
    /// [`HandlerCtx::reply`] answers. A saved message taken before and neither answered nor
    /// saved again is put away now (its caller is answered [`MsgError::Unanswered`]), as is
    /// one still current when the handler's function returns. [`MsgError::NoMatch`] if no
    /// message matches, [`MsgError::NoSuchSaveQueue`] if there is no such queue.
    ///
    /// ```
    /// use tempi::message::{Handler, Message, MsgError, Selection};
    /// use tempi::{Runtime, ThreadSpec};
    /// let h = Handler::new("h", 0, 4, |hcx, m| {
    ///     hcx.save(0, Message::new(m.id, 10 - m.id, 0)).unwrap();
    ///     if m.id == 3 {
    ///         // Ordered by value: 3 (saved with 7) before 1 (saved with 9).
    ///         assert_eq!(hcx.read_saved(0, Selection::any()).unwrap().id, 3);
    ///         assert_eq!(hcx.read_saved(0, Selection::any().id(1)).unwrap().value, 9);
    ///         assert_eq!(hcx.read_saved(0, Selection::any()), Err(MsgError::NoMatch));
    ///     }
    /// })
    /// .save_queues(1);
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("t"), move |cx| {
    ///     h.send(cx, Message::new(1, 0, 0)).unwrap();
    ///     h.send(cx, Message::new(3, 0, 0)).unwrap();
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn read_saved(&self, queue: usize, selection: Selection) -> Result<Message, MsgError> {
        let mut saves = locked(&self.inner.saves);
        let Some(q) = saves.queues.get_mut(queue) else { return Err(MsgError::NoSuchSaveQueue(queue)) };
        let Some(at) = q.iter().position(|x| selection.matches(&x.msg)) else { return Err(MsgError::NoMatch) };
        let entry = q.remove(at);
        drop(saves);
        self.put_away_taken();
        self.taken.set(Some(entry));
        Ok(entry.msg)
    }

    /// The saved message taken, if still current, is put away: its caller is answered
    /// `Unanswered`.
    pub(super) fn put_away_taken(&self) {
        if let Some(t) = self.taken.take() {
            self.answer_saved(t, None);
        }
    }

    /// Answer a message taken from a save queue with `reply` (`None`: unanswered): its waiting
    /// caller wakes; the sender of a message that was sent gets the reply as a new message.
    pub(super) fn answer_saved(&self, t: Saved, reply: Option<Message>) {
        if t.msg.payload.is_some() && reply.and_then(|r| r.payload) != t.msg.payload {
            match self.via {
                Via::Thread(cx) => cx.drop_payload(t.msg),
                Via::Host(host) => host.borrow_mut().drop_payload(t.msg),
            }
        }
        let own = |caller: ThreadId| matches!(self.via, Via::Thread(cx) if cx.id() == caller);
        match (t.caller, reply, t.msg.from) {
            // The invoking thread's own call, served before it began to wait: kept for it.
            (Some(Caller::Local(caller, token)), reply, _) if own(caller) => {
                *locked(&self.inner.early) = Some((token, reply));
            }
            (Some(caller), reply, _) => self.via.answer(caller, reply),
            (None, Some(r), Some(from)) => {
                // Errors are traced by the kernel; the handler has nobody to give them to.
                let _ = self.send(from, r);
            }
            (None, _, _) => {}
        }
    }

    fn reply_is_empty(&self) -> bool {
        self.reply.get().is_err()
    }
}
