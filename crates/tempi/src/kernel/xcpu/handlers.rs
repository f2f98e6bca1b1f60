//! Handlers across real-time CPUs: a thread invoking a handler of another CPU.
//!
//! A handler belongs to a CPU and has no stack of its own. On its own CPU it runs on the
//! stack of the thread that invokes it (`message/handler.rs`). A thread of another real-time
//! CPU cannot lend its stack there, so its request travels through the handler's CPU's
//! request queue (`Post::Handler`, carrying the handler, the message and the thread's
//! urgency) and that CPU's dispatcher serves it when it carries the request out, at the top
//! of its loop or between two threads it resumes: an idle handler runs there and then, on the
//! dispatcher's own stack (through a [`HandlerHost`]), and drains its queue before the
//! dispatcher goes on; a busy one (on the stack of a thread of its CPU, preempted inside it)
//! queues the message, and the thread that drains it answers the caller. The answer goes back
//! through the caller's CPU's queue as the answer to a cross-CPU message does
//! (`Post::MsgAnswer`, `messages.rs`): the reply to a call, `Unanswered`, or the refusal;
//! a send is answered once the handler has run or queued it, so it returns what it would in
//! virtual time, where the handler runs on the caller's stack. A handler's own invocations of
//! handlers of another CPU are posted and not waited for (a handler never waits): a send goes,
//! a call is [`MsgError::WouldBlock`].
//!
//! Urgency: the handler runs on the dispatcher, so nothing of its CPU preempts it until it
//! has drained (it is short and never blocks, as every handler); what it sees as its urgency
//! ([`crate::message::HandlerCtx::urgency`]) is the caller's when it asked. The caller's
//! urgency is not lent to the thread holding a busy handler of another CPU: urgencies of two
//! CPUs' policies need not compare, and the holder drains its queue at its own urgency.
//!
//! Must not: touch another kernel's state (everything goes through a post), or allocate.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use crate::clock::Clock;
use crate::error::Error;
use crate::kernel::messaging::messages::{HANDLER_PANICKED, HANDLER_QUEUE_FULL};
use crate::kernel::thread_side::calls::MsgCall;
use crate::kernel::thread_side::ctx::Ctx;
use crate::kernel::thread_side::protocol::{Answer, MsgAnswer, MsgOp, Value};
use crate::kernel::threads::tcb::{State, Wait};
use crate::kernel::xcpu::Post;
use crate::kernel::Kernel;
use crate::kernel::{Caller, HandlerHost, RemoteHandler, Served};
use crate::os::busy_cell::KernelId;
use crate::plain::ThreadId;
use crate::plain::TraceKind;
use crate::plain::{Message, MsgError};
use crate::policy::sched::Urgency;
use crate::time::Time;

impl Ctx<'_> {
    /// Invoke `h`, a handler of another real-time CPU, with `msg` (its sender and kind set);
    /// `wait`: until it has been run, queued or refused there. Returns the reply to a call.
    pub(crate) fn handler_remote(
        &self,
        h: std::sync::Arc<dyn RemoteHandler>,
        msg: Message,
        wait: bool,
    ) -> Result<Option<Message>, MsgError> {
        self.mail.msg.set(msg);
        self.mail.handler.replace(Some(h));
        let answer = self.invoke(MsgCall(MsgOp::RemoteHandler { wait }));
        // The kernel took the handler; after an error before it did, drop it here.
        self.mail.handler.replace(None);
        answer?;
        Ok((wait && msg.expects_reply).then(|| self.mail.msg.get()))
    }

    /// A handler running on this thread's stack answers `caller`, a thread of another
    /// real-time CPU waiting on `stamp`, with `reply` (`None`: unanswered).
    pub(crate) fn handler_answer_remote(&self, caller: ThreadId, stamp: u32, reply: Option<Message>) {
        if let Some(m) = reply {
            self.mail.msg.set(m);
        }
        let _ = self.invoke(MsgCall(MsgOp::AnswerRemote { caller, stamp, answered: reply.is_some() }));
    }

    /// A poisoned handler on this thread's stack did not serve `msg`: the kernel counts and
    /// traces it, and answers `caller` (if it still waits) `HandlerPanicked`.
    #[cold]
    pub(crate) fn handler_unserved(&self, msg: Message, caller: Option<Caller>) {
        self.mail.msg.set(msg);
        let _ = self.invoke(MsgCall(MsgOp::HandlerUnserved(caller)));
    }

    /// The unwind under way is the runtime's own (abort, kill, stop), not a panic: it poisons
    /// no handler, as it poisons no lock.
    pub(crate) fn unwound_by_runtime(&self) -> bool {
        self.runtime_unwind.get()
    }

    /// This thread's unwind poisoned one or more handlers, or left one with messages queued:
    /// once it is over, the kernel refuses what a poisoned one held and hands a left one to
    /// the oldest caller waiting there (`message/leftovers.rs`).
    #[cold]
    pub(crate) fn settle_handlers(&self) {
        let _ = self.invoke(MsgCall(MsgOp::SettleHandlers));
    }

    /// Whether this thread's wait at a busy handler ended because the handler was left to it
    /// ([`crate::message::settle_unwound`]): its call, taken out of the queue, is to be made
    /// again. Reading clears it.
    #[inline]
    pub(crate) fn handler_handed_over(&self) -> bool {
        self.mail.handed_over.replace(false)
    }
}

impl<C: Clock> Kernel<C> {
    /// `id`, running on CPU `c`, invokes the handler in its mail cell with the message there;
    /// `wait`: it waits for the answer. Returns the answer now, or `None` when `id` waits.
    pub(in crate::kernel) fn handler_send_remote(&mut self, c: usize, id: ThreadId, wait: bool) -> Option<MsgAnswer> {
        let handler = self.tcb(id).mail.handler.take()?;
        let msg = self.tcb(id).mail.msg.get();
        let cpu = handler.cpu();
        // The handler belongs to its CPU's kernel of this runtime from now until the run's
        // end, unless another runtime has it.
        let refusal = if cpu >= self.total_cpus {
            Some(MsgError::CrossCpu { from: self.cpus[c].index, to: cpu })
        } else if !handler.bind(self.executors.nth(cpu)) {
            Some(MsgError::ForeignRuntime)
        } else {
            None
        };
        if let Some(e) = refusal {
            // Not delivered: the payload goes back.
            self.drop_payload(msg);
            return Some(Err(e));
        }
        let stamp = if wait { self.remote_stamp(id) } else { 0 };
        let urgency = self.tcb(id).urgency();
        if let Err(e) = self.post(cpu, Post::Handler { handler, msg, stamp, urgency }) {
            let e = match e {
                Error::QueueFull { cpu, capacity } => MsgError::CpuQueueFull { cpu, capacity },
                _ => MsgError::CrossCpu { from: self.cpus[c].index, to: cpu },
            };
            return Some(Err(self.refuse_unposted(id, e)));
        }
        if !wait {
            return Some(Ok(()));
        }
        self.block_in(c, id, Wait::Reply(stamp), None);
        None
    }

    /// A request for `handler`, of this CPU, from a thread of another CPU: serve it on this
    /// dispatcher, and answer the caller (if it waits) unless the call waits in the handler's
    /// queue, in which case the thread that drains it answers.
    pub(in crate::kernel) fn accept_remote_handler(
        &mut self,
        handler: &std::sync::Arc<dyn RemoteHandler>,
        msg: Message,
        stamp: u32,
        urgency: Urgency,
    ) {
        let sender = msg.from.expect("a posted message has a sender");
        let caller = (stamp != 0).then_some(Caller::Remote(sender, stamp));
        let now = self.now;
        // A panic in the handler (or one it invokes here) is then named as a handler's; the
        // handle may be gone by the time the error is made, so the unwind keeps the name.
        let before = self.culprit.replace(crate::kernel::Culprit::RemoteHandler);
        let naming = NameOnUnwind(handler);
        let served = {
            let host = RefCell::new(KernelHost { k: self, invoker: sender, urgency, now });
            std::sync::Arc::clone(handler).serve_remote(&host, msg, caller)
        };
        std::mem::forget(naming);
        self.culprit.set(before);
        if let Err(MsgError::QueueFull) = served {
            // Never silent: a trace record and a count in the run's outcome, as on the
            // handler's own CPU.
            self.handler_queue_refused(msg);
        }
        if stamp == 0 {
            return;
        }
        let answer = match served {
            Ok(Served::Ran(reply)) if msg.expects_reply => reply.ok_or(MsgError::Unanswered),
            Ok(Served::Queued) if msg.expects_reply => return,
            // A send: the sender learns it was served; the payload stays with the handler.
            Ok(_) => Ok(msg.without_payload()),
            Err(e) => Err(e),
        };
        self.answer_remote_sender(sender, stamp, answer);
    }

    /// A busy handler's full queue refused `msg`, from a thread of another CPU or from a
    /// handler on this dispatcher: its payload goes back, and the refusal is counted and
    /// traced (on the sender's name, on this CPU).
    fn handler_queue_refused(&mut self, msg: Message) {
        self.drop_payload(msg);
        self.mail.stats.handler_queue_full += 1;
        if self.tracing {
            let sender = msg.from.expect("a posted message has a sender");
            self.trace(0, TraceKind::MessageRefused, sender, 0, HANDLER_QUEUE_FULL);
        }
    }

    /// A handler on `id`'s stack answers `caller` of another CPU, waiting on `stamp`: with the
    /// message in `id`'s mail cell, or `Unanswered`.
    pub(in crate::kernel) fn answer_remote_caller(
        &mut self,
        id: ThreadId,
        caller: ThreadId,
        stamp: u32,
        answered: bool,
    ) {
        let reply = answered.then(|| self.tcb(id).mail.msg.get());
        self.answer_remote_sender(caller, stamp, reply.ok_or(MsgError::Unanswered));
    }

    /// A poisoned handler did not serve `msg`: counted and traced (on its sender), and
    /// `caller`, if it still waits, is answered `HandlerPanicked`.
    #[cold]
    pub(in crate::kernel) fn handler_unserved(&mut self, msg: Message, caller: Option<Caller>) {
        self.mail.stats.handler_panicked += 1;
        if let Some(sender) = msg.from.filter(|_| self.tracing) {
            match self.local(sender) {
                Some(_) => self.trace_thread(sender, TraceKind::MessageRefused, HANDLER_PANICKED),
                None => self.trace(0, TraceKind::MessageRefused, sender, 0, HANDLER_PANICKED),
            }
        }
        match caller {
            Some(Caller::Local(t, token)) => self.answer_local_waiter(t, token, Err(MsgError::HandlerPanicked)),
            Some(Caller::Remote(t, stamp)) => self.answer_remote_sender(t, stamp, Err(MsgError::HandlerPanicked)),
            None => {}
        }
    }

    /// `id`'s unwind poisoned handlers or left them with messages queued, and is over: refuse
    /// what the poisoned ones held, and hand each left one to the oldest caller waiting there,
    /// on this kernel standing in for `id` (`message/leftovers.rs`).
    #[cold]
    pub(in crate::kernel) fn settle_handlers(&mut self, id: ThreadId) {
        let (now, urgency, hooks) = (self.now, self.tcb(id).urgency(), self.handler_hooks);
        let host = RefCell::new(KernelHost { k: self, invoker: id, urgency, now });
        (hooks.settle_poisoned)(&host);
        (hooks.settle_unwound)(&host);
    }

    /// Answer `caller`, a thread of this CPU waiting at a handler with `token`, with `reply`.
    fn answer_local_waiter(&mut self, caller: ThreadId, token: u32, reply: Result<Message, MsgError>) {
        if self.local(caller).is_none() || self.tcb(caller).state != State::Blocked(Wait::Handler(token)) {
            return;
        }
        let answer = reply.map(|mut r| {
            r.expects_reply = false;
            self.tcb(caller).mail.msg.set(r);
        });
        self.tcb(caller).set_answer(Answer::Value(Value::Msg(answer)));
        self.wake_from_wait(caller);
    }
}

std::thread_local! {
    /// The name of the handler whose panic is unwinding this dispatcher.
    static PANICKED_HANDLER: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Keeps its handler's name for the run's error when dropped, which happens only in an unwind
/// (the normal path forgets it).
struct NameOnUnwind<'a>(&'a std::sync::Arc<dyn RemoteHandler>);

impl Drop for NameOnUnwind<'_> {
    fn drop(&mut self) {
        let name = self.0.name().to_string();
        PANICKED_HANDLER.with(|n| *n.borrow_mut() = name);
    }
}

/// The name of the handler whose panic unwound this dispatcher.
pub(in crate::kernel) fn panicked_handler() -> String {
    PANICKED_HANDLER.with(|n| n.borrow().clone())
}

/// The dispatcher as a handler's host, for one request from another CPU.
struct KernelHost<'k, C: Clock> {
    k: &'k mut Kernel<C>,
    invoker: ThreadId,
    urgency: Urgency,
    /// The instant the request was carried out, moved on by `work`.
    now: Time,
}

impl<C: Clock> HandlerHost for KernelHost<'_, C> {
    fn cpu(&self) -> usize {
        self.k.first_cpu
    }
    fn executor(&self) -> KernelId {
        self.k.executor()
    }
    fn invoker(&self) -> ThreadId {
        self.invoker
    }
    fn urgency(&self) -> Urgency {
        self.urgency
    }
    fn now(&self) -> Time {
        self.now
    }
    fn work(&mut self, d: Duration) {
        // Real time only (virtual time runs handlers on the caller's stack): the CPU computes.
        let end = Instant::now() + d;
        while Instant::now() < end {
            std::hint::spin_loop();
        }
        self.now = self.k.clock.now();
    }
    fn send(&mut self, to: ThreadId, mut msg: Message) -> Result<(), MsgError> {
        msg.from = Some(self.invoker);
        msg.expects_reply = false;
        let sent = if self.k.local(to).is_some() {
            self.k.deliver_remote(to, msg, 0)
        } else {
            match self.k.remote_cpu(to) {
                Some(cpu) => self.k.post_msg(cpu, to, msg, 0),
                None => Err(MsgError::NoSuchThread(to)),
            }
        };
        if sent.is_err() {
            self.k.drop_payload(msg);
        }
        sent
    }
    fn answer(&mut self, caller: Caller, reply: Option<Message>) {
        match caller {
            Caller::Local(t, token) => self.k.answer_local_waiter(t, token, reply.ok_or(MsgError::Unanswered)),
            Caller::Remote(t, stamp) => self.k.answer_remote_sender(t, stamp, reply.ok_or(MsgError::Unanswered)),
        }
    }
    fn drop_payload(&mut self, msg: Message) {
        self.k.drop_payload(msg);
    }
    fn refused(&mut self, msg: Message) {
        self.k.handler_queue_refused(msg);
    }
    fn unserved(&mut self, msg: Message, caller: Option<Caller>) {
        self.k.handler_unserved(msg, caller);
    }
    fn hand_over(&mut self, caller: ThreadId, token: u32) -> bool {
        let k = &mut *self.k;
        if k.local(caller).is_none() || k.tcb(caller).state != State::Blocked(Wait::Handler(token)) {
            return false;
        }
        let t = k.tcb(caller);
        t.mail.handed_over.set(true);
        t.set_answer(Answer::Value(Value::Msg(Ok(()))));
        k.wake_from_wait(caller);
        true
    }
}
