//! What a handler runs on when it is not on a thread's stack: the dispatcher of its own CPU,
//! serving a request that came from a thread of another real-time CPU (see "Handlers across
//! CPUs" in the architecture guide). The kernel implements [`HandlerHost`]; the handler's
//! invocation path (`handler.rs`) and [`super::HandlerCtx`] call it.
//!
//! Owns the vocabulary (who waits for a queued call, [`Caller`], and what a host offers) and
//! a handler's invocations on a host (a request from another CPU, a handler invoking another
//! on a host). Must not: reach kernel state (the kernel's side is `kernel/xcpu/handlers.rs`).

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::handler::{enqueue, locked, Done, Pending, Served, Via};
use super::{Handler, Message, MsgError};
use crate::os::busy_cell::{Entry, Executor};
use crate::policy::sched::Urgency;
use crate::thread::ThreadId;
use crate::time::Time;

/// Who waits for the answer to a call queued at a busy handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Caller {
    /// A thread of the handler's CPU, blocked at the handler with this token.
    Local(ThreadId, u32),
    /// A thread of another real-time CPU, waiting on this stamp in its own kernel.
    Remote(ThreadId, u32),
}

/// The dispatcher a handler runs on for a request from another CPU.
pub(crate) trait HandlerHost {
    /// The CPU it serves (the handler's).
    fn cpu(&self) -> usize;
    /// Its kernel as an executor: the handlers it runs are bound to it.
    fn executor(&self) -> Executor;
    /// The thread, of another CPU, whose request the handler serves.
    fn invoker(&self) -> ThreadId;
    /// That thread's effective urgency when it asked.
    fn urgency(&self) -> Urgency;
    /// The current time.
    fn now(&self) -> Time;
    /// Compute for `d` (the CPU is busy meanwhile).
    fn work(&mut self, d: Duration);
    /// Send `msg` (with its sender set) to a thread of any CPU; nothing waits for it.
    fn send(&mut self, to: ThreadId, msg: Message) -> Result<(), MsgError>;
    /// Answer `caller`'s queued call with `reply` (`None`: unanswered).
    fn answer(&mut self, caller: Caller, reply: Option<Message>);
    /// Give the payload of `msg` back to its pool (a message not delivered on).
    fn drop_payload(&mut self, msg: Message);
    /// A busy handler's full queue refused `msg`: counted and traced, its payload released.
    fn refused(&mut self, msg: Message);
    /// A poisoned handler did not serve `msg`: counted and traced, and `caller`, if it still
    /// waits, answered [`MsgError::HandlerPanicked`]. The payload is the invocation's to give
    /// back.
    fn unserved(&mut self, msg: Message, caller: Option<Caller>);
    /// Hand an idle handler to `caller`, waiting at it with `token` on this host's kernel:
    /// its wait ends, and it makes its call again. False if it does not wait there (any
    /// more).
    fn hand_over(&mut self, caller: ThreadId, token: u32) -> bool;
}

impl Handler {
    /// Serve `msg` from a thread of another CPU on this CPU's dispatcher `host` (the
    /// request arrived through this CPU's queue): an idle handler runs it now, and drains its
    /// queue; a busy one (on the stack of a thread of this CPU, preempted inside it) queues it,
    /// and `caller` is answered when it is served ([`MsgError::QueueFull`] if there is no room;
    /// the host counts and traces that refusal). A call the handler saves is answered when
    /// an invocation serves it, as a queued one.
    pub(crate) fn serve_remote(
        &self,
        host: &RefCell<dyn HandlerHost + '_>,
        msg: Message,
        caller: Option<Caller>,
    ) -> Result<Served, MsgError> {
        self.serve_on_host(host, msg, caller, false)
    }

    fn serve_on_host(
        &self,
        host: &RefCell<dyn HandlerHost + '_>,
        msg: Message,
        caller: Option<Caller>,
        nested: bool,
    ) -> Result<Served, MsgError> {
        let h = &*self.inner;
        let caller = caller.filter(|_| msg.expects_reply);
        let executor = host.borrow().executor();
        let mut entry = h.f.try_enter(executor);
        if let Entry::NotOwner = entry {
            // A request from another CPU bound it to this kernel when it was posted; a handler
            // of this CPU invoking it here may be the first to.
            if !h.f.bind(executor) {
                host.borrow_mut().drop_payload(msg);
                return Err(MsgError::ForeignRuntime);
            }
            entry = h.f.try_enter(executor);
        }
        if let Entry::Entered(mut f) = entry {
            // No thread holds it: nothing else runs on this CPU until it has drained.
            h.holder.store(0, Ordering::Relaxed);
            let done = self.run_one(&mut f, Via::Host(host), msg, caller, nested);
            self.drain(&mut f, Via::Host(host), nested);
            return Ok(match done {
                // Poisoned: a caller was answered by the refusal; a sender learns it here.
                Done::Reply(Err(MsgError::HandlerPanicked)) => match caller {
                    Some(_) => Served::Queued,
                    None => return Err(MsgError::HandlerPanicked),
                },
                Done::Reply(reply) => Served::Ran(reply.ok()),
                Done::Saved | Done::SavedOwn(_) => Served::Queued,
            });
        }
        let mut queue = locked(&h.pending);
        if h.poisoned.load(Ordering::Acquire) {
            // Busy for the last time, settling what it held: no message joins that.
            drop(queue);
            let mut host = host.borrow_mut();
            host.unserved(msg, caller);
            host.drop_payload(msg);
            return match caller {
                Some(_) => Ok(Served::Queued),
                None => Err(MsgError::HandlerPanicked),
            };
        }
        if queue.len() >= h.cap {
            return Err(MsgError::QueueFull);
        }
        enqueue(h, &mut queue, Pending { msg, caller });
        Ok(Served::Queued)
    }

    /// A handler running on dispatcher `host` invokes this one (a call if `call`): it runs at
    /// once if idle and of the same CPU; a busy one queues a message sent and refuses a call
    /// ([`MsgError::WouldBlock`]); one of another CPU is [`MsgError::CrossCpu`].
    pub(super) fn invoke_from_host(
        &self,
        host: &RefCell<dyn HandlerHost + '_>,
        mut msg: Message,
        call: bool,
    ) -> Result<Option<Message>, MsgError> {
        let (cpu, invoker) = {
            let host = host.borrow();
            (host.cpu(), host.invoker())
        };
        let refusal = if cpu != self.inner.cpu {
            Some(MsgError::CrossCpu { from: cpu, to: self.inner.cpu })
        } else if call && self.is_busy() {
            Some(MsgError::WouldBlock)
        } else {
            None
        };
        if let Some(e) = refusal {
            // Not delivered: the payload goes back.
            host.borrow_mut().drop_payload(msg);
            return Err(e);
        }
        msg.from = Some(invoker);
        msg.expects_reply = call;
        match self.serve_on_host(host, msg, None, true) {
            Ok(Served::Ran(reply)) => Ok(reply),
            Ok(Served::Queued) => Ok(None),
            Err(MsgError::QueueFull) => {
                host.borrow_mut().refused(msg);
                Err(MsgError::QueueFull)
            }
            // Counted, traced and its payload given back by the poisoned handler.
            Err(e) => Err(e),
        }
    }
}
