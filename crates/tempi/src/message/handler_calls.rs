//! A handler's call paths: a thread's [`Handler::send`] and [`Handler::call`], a handler's
//! [`HandlerCtx::send_handler`] and [`HandlerCtx::call_handler`], the invocation on a thread's
//! stack (entering an idle handler, queuing at a busy one and waiting for its answer, the
//! unbound path through another CPU's queue or binding), and running the function for one
//! message and draining the queue, on a thread's stack or a dispatcher (`host.rs`).
//!
//! Owns no state: the handler's state (busy cell, queues, binding, poison) is `handler.rs`'s,
//! the guards that act when an unwind passes through an invocation are `handler_unwinds.rs`'s.
//! Must not: reach kernel state (runtime calls through the invoking thread's [`Ctx`] only).

use std::cell::Cell;
use std::sync::atomic::Ordering;

use super::handler::{enqueue, locked, Done, Handler, HandlerCtx, HandlerFn, Invoked, Pending, Via, TOKENS};
use super::handler_unwinds::{Stay, Unwound, Waiting};
use super::{Message, MsgError};
use crate::kernel::Caller;
use crate::kernel::Ctx;
use crate::os::busy_cell::Entry;
use crate::plain::ThreadId;
use crate::policy::sched::{Events, NO_CONSTRAINT};

/// What an invocation for a message sent (not called) tells its sender: no reply is the
/// usual outcome.
fn sent(r: Result<Message, MsgError>) -> Result<(), MsgError> {
    match r {
        Ok(_) | Err(MsgError::Unanswered) => Ok(()),
        Err(e) => Err(e),
    }
}

impl Handler {
    /// Send `msg` asynchronously: an idle handler runs it now on this stack (and drains its
    /// queue), a busy one queues it ([`MsgError::QueueFull`] if its queue is full).
    ///
    /// ```
    /// use tempi::message::{Handler, Message};
    /// use tempi::{Runtime, ThreadSpec};
    /// let h = Handler::new("h", 0, 1, |hcx, m| assert_eq!(m.from, Some(hcx.invoker())));
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("t"), move |cx| h.send(cx, Message::new(1, 2, 3)).unwrap()).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn send(&self, cx: &Ctx<'_>, msg: Message) -> Result<(), MsgError> {
        sent(self.invoke(cx, msg, false, false))
    }

    /// Call with `msg` and return the handler's reply ([`HandlerCtx::reply`]): at once from an
    /// idle handler, which runs on this stack; from a busy one, once it has served the call
    /// from its queue (this thread waits). [`MsgError::Unanswered`] if the handler did not
    /// reply.
    ///
    /// ```
    /// use tempi::message::{Handler, Message};
    /// use tempi::{Runtime, ThreadSpec};
    /// let h = Handler::new("square", 0, 1, |hcx, m| hcx.reply(Message::new(0, m.value * m.value, 0)));
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("t"), move |cx| assert_eq!(h.call(cx, Message::new(0, 9, 0)).unwrap().value, 81)).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn call(&self, cx: &Ctx<'_>, msg: Message) -> Result<Message, MsgError> {
        self.invoke(cx, msg, true, false)
    }

    /// The handler, just entered, runs on `cx`'s stack: `cx`'s thread is its holder, and with
    /// FREE JAZZ's `tame_prio_inv` (of the handler, inside another handler; of the invoking
    /// thread, a process, for every handler it invokes) preemption is off until it leaves.
    /// Returns the preemption setting to restore then, if it was turned off.
    #[inline(always)]
    pub(super) fn held_by(&self, cx: &Ctx<'_>, nested: bool) -> Option<bool> {
        let h = &*self.inner;
        h.holder.store(cx.id().to_word(), Ordering::Relaxed);
        let tame = (nested && h.tame.load(Ordering::Relaxed)) || cx.tamed();
        tame.then(|| cx.preemption(false))
    }

    /// Invoke the handler for `msg` (a call if `call`), from a handler if `nested`. The reply,
    /// or `Unanswered` when there is none (for a send, the usual outcome: see [`sent`]), in
    /// the shape a call returns it: converting it on the way out would copy it again, reading
    /// back bytes just written.
    fn invoke(&self, cx: &Ctx<'_>, mut msg: Message, call: bool, nested: bool) -> Result<Message, MsgError> {
        let h = &*self.inner;
        msg.from = Some(cx.id());
        msg.expects_reply = call;
        // The handler is busy until the guard drops, also by an unwind. Entered only by the
        // kernel it is bound to: in real time that is its CPU's, so a thread of another CPU
        // always takes the unbound path, which sends its message through that CPU's queue.
        let entry = h.f.try_enter(cx.executor());
        if let Entry::NotOwner = entry {
            return self.invoke_unbound(cx, msg, call, nested);
        }
        if let Entry::Entered(mut f) = entry {
            // Hands what is queued on if the runtime unwinds this thread out of the handler.
            let stay = Stay { inner: h, cx };
            let tamed = self.held_by(cx, nested);
            let done = self.run_one(&mut f, Via::Thread(cx), msg, None, nested);
            self.drain(&mut f, Via::Thread(cx), nested);
            // Restoring preemption and NICE (if a thread blocked at this handler lent this one
            // urgency) are runtime calls, on the cold path: with neither, nothing ran since
            // the queue was found empty, unless this thread is OS-backed and was stopped in
            // place meanwhile, which the cold path also covers (it looks at the queue again).
            if tamed.is_some() || cx.slow_leave() {
                self.leave(f, cx, nested, tamed);
            } else {
                drop(f);
            }
            std::mem::forget(stay);
            let token = match done {
                Done::Reply(reply) => return reply,
                Done::Saved => return Err(MsgError::Unanswered),
                Done::SavedOwn(token) => token,
            };
            // Served already, in this same stay in the handler?
            let early = locked(&h.early).take();
            if let Some((_, reply)) = early.filter(|e| e.0 == token) {
                return reply.ok_or(MsgError::Unanswered);
            }
            // The handler saved this thread's own call (WAIT): it waits, the handler idle,
            // until an invocation serves the saved message. Nothing runs on this CPU between
            // the handler's release and the wait, so no answer can come first.
            return cx.handler_await(token, h.id, None, msg.constraint);
        }
        if call && nested {
            cx.drop_payload(msg);
            return Err(MsgError::WouldBlock);
        }
        let mut queue = locked(&h.pending);
        if h.poisoned.load(Ordering::Acquire) {
            // Busy for the last time, settling what it held: no message joins that.
            drop(queue);
            cx.handler_unserved(msg, None);
            cx.drop_payload(msg);
            return Err(MsgError::HandlerPanicked);
        }
        if queue.len() >= h.cap {
            drop(queue);
            // Never silent: a trace record and a count in the run's outcome.
            cx.handler_refused(msg);
            return Err(MsgError::QueueFull);
        }
        if !call {
            enqueue(h, &mut queue, Pending { msg, caller: None });
            return Err(MsgError::Unanswered);
        }
        let token = TOKENS.fetch_add(1, Ordering::Relaxed);
        enqueue(h, &mut queue, Pending { msg, caller: Some(Caller::Local(cx.id(), token)) });
        drop(queue);
        let holder = ThreadId::from_word(h.holder.load(Ordering::Relaxed)).unwrap_or(cx.id());
        // Nothing else runs on this CPU before the wait begins: the handler, preempted, cannot
        // serve the call first.
        let waiting = Waiting { inner: h, cx, msg };
        let answer = cx.handler_await(token, h.id, Some(holder), msg.constraint);
        std::mem::forget(waiting);
        if cx.handler_handed_over() {
            // The runtime unwound the holder out of the handler, and this call, the oldest
            // waiting, was taken out of its queue: it is made again, on this stack.
            return self.invoke(cx, msg, call, nested);
        }
        answer
    }

    /// [`Handler::invoke`] from a kernel the handler is not bound to: through its CPU's queue
    /// from a thread of another real-time CPU (a handler, nested, never waits for that); or
    /// the first invocation since the handler was made or its last runtime's run ended, which
    /// binds it to this thread's kernel until this run's end; or a thread of another runtime
    /// while one has it, refused with [`MsgError::ForeignRuntime`].
    #[cold]
    #[inline(never)]
    fn invoke_unbound(&self, cx: &Ctx<'_>, msg: Message, call: bool, nested: bool) -> Result<Message, MsgError> {
        let refusal = if cx.real_time() && cx.cpu() != self.inner.cpu {
            if !(nested && call) {
                return cx.handler_remote(self.as_remote(), msg, !nested).and_then(|r| r.ok_or(MsgError::Unanswered));
            }
            MsgError::WouldBlock
        } else if self.inner.f.bind(cx.executor()) {
            return self.invoke(cx, msg, call, nested);
        } else {
            MsgError::ForeignRuntime
        };
        cx.drop_payload(msg);
        Err(refusal)
    }

    /// Run the function for `msg` (queued or saved by `caller`'s call, if any): see [`Done`].
    /// A reply to a message that was sent is sent back to its sender (a thread)
    /// asynchronously.
    pub(super) fn run_one(
        &self,
        f: &mut HandlerFn,
        via: Via<'_, '_>,
        msg: Message,
        caller: Option<Caller>,
        nested: bool,
    ) -> Done {
        let hcx = HandlerCtx {
            via,
            inner: &self.inner,
            msg,
            nested,
            reply: Cell::new(Err(MsgError::Unanswered)),
            caller,
            saved: Cell::new(Invoked::Current),
            taken: Cell::new(None),
        };
        // PRIO SAVE / RESTORE around a message with a constraint, if the policy asks (on a
        // thread's stack only: the dispatcher has no urgency to lend to).
        let prio = match via {
            Via::Thread(cx) => (msg.constraint != NO_CONSTRAINT && cx.meta_events().contains(Events::PRIO))
                .then(|| (cx, cx.prio_save(msg.constraint))),
            Via::Host(_) => None,
        };
        // Poisons the handler if `f` is unwound; defused once it returns.
        let unwound = Unwound { f, hcx: &hcx };
        (unwound.f)(&hcx, msg);
        std::mem::forget(unwound);
        if let Some((cx, id)) = prio {
            cx.prio_restore(id);
        }
        // A saved message taken and neither answered nor saved again: put away.
        hcx.put_away_taken();
        match hcx.saved.get() {
            Invoked::Saved => return Done::Saved,
            Invoked::SavedOwn(token) => return Done::SavedOwn(token),
            Invoked::Current => {}
        }
        // Read, not replaced: the context is not used for the reply again.
        let reply = hcx.reply.get();
        if msg.payload.is_some() && reply.ok().and_then(|r| r.payload) != msg.payload {
            // Not taken by the handler nor carried on by its reply: back to its pool (a payload
            // taken already is left alone).
            via.drop_payload(msg);
        }
        let reply = match (reply, msg.expects_reply, msg.from) {
            (Ok(r), false, Some(from)) => {
                // Errors are traced by the kernel; the handler has nobody to give them to.
                let _ = hcx.send(from, r);
                Err(MsgError::Unanswered)
            }
            (reply, _, _) => reply,
        };
        Done::Reply(reply)
    }

    /// Serve every message queued while the handler was busy, answering waiting callers.
    /// Inlined into the invocation path (an idle call usually finds the queue empty).
    #[inline(always)]
    pub(super) fn drain(&self, f: &mut HandlerFn, via: Via<'_, '_>, nested: bool) {
        let h = &*self.inner;
        while h.queued.load(Ordering::Acquire) > 0 {
            let next = {
                let mut queue = locked(&h.pending);
                let next = queue.pop_front();
                h.queued.store(queue.len(), Ordering::Release);
                next
            };
            let Some(p) = next else { return };
            // A call the handler saved keeps its caller waiting; a poisoned handler's refusal
            // has answered it already.
            if let (Done::Reply(reply), Some(caller)) = (self.run_one(f, via, p.msg, p.caller, nested), p.caller)
                && reply != Err(MsgError::HandlerPanicked)
            {
                via.answer(caller, reply.ok());
            }
        }
    }
}

impl HandlerCtx<'_, '_> {
    /// Send `msg` to another handler: run at once if idle, queued if busy.
    ///
    /// ```
    /// use tempi::message::Handler;
    /// let inner = Handler::new("inner", 0, 1, |_, _| {});
    /// let _ = Handler::new("outer", 0, 1, move |hcx, m| { let _ = hcx.send_handler(&inner, m); });
    /// ```
    pub fn send_handler(&self, h: &Handler, msg: Message) -> Result<(), MsgError> {
        match self.via {
            Via::Thread(cx) => sent(h.invoke(cx, msg, false, true)),
            Via::Host(host) => h.invoke_from_host(host, msg, false).map(|_| ()),
        }
    }
    /// Call another handler, which runs at once on this stack if idle; a busy one (this
    /// handler itself included) fails with [`MsgError::WouldBlock`]: a handler never waits.
    ///
    /// ```
    /// use tempi::message::Handler;
    /// let inner = Handler::new("inner", 0, 1, |hcx, m| hcx.reply(m));
    /// let _ = Handler::new("outer", 0, 1, move |hcx, m| { let _ = hcx.call_handler(&inner, m); });
    /// ```
    pub fn call_handler(&self, h: &Handler, msg: Message) -> Result<Message, MsgError> {
        match self.via {
            Via::Thread(cx) => h.invoke(cx, msg, true, true),
            Via::Host(host) => h.invoke_from_host(host, msg, true).and_then(|r| r.ok_or(MsgError::Unanswered)),
        }
    }
}
