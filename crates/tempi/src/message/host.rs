//! What a handler runs on when it is not on a thread's stack: the dispatcher of its own CPU,
//! serving a request that came from a thread of another real-time CPU (see "Handlers across
//! CPUs" in the architecture guide). The kernel implements [`HandlerHost`]; the handler's
//! invocation path (`handler.rs`) and [`super::HandlerCtx`] call it.
//!
//! Owns a handler's invocations on a host (a request from another CPU, a handler invoking
//! another on a host) and the handler's side of the kernel's [`RemoteHandler`] interface.
//! Must not: reach kernel state. The vocabulary ([`Caller`], [`HandlerHost`], [`Served`],
//! [`RemoteHandler`]) is the kernel's (`kernel/xcpu/handler_host.rs`), which calls back
//! through it.

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::handler::{enqueue, locked, Done, Inner, Pending, Via};
use super::{Handler, Message, MsgError};
use crate::kernel::{Caller, HandlerHost, RemoteHandler, Served};
use crate::os::busy_cell::{Entry, KernelId};

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

/// The kernel holds a handler of another CPU's request as this interface (a handle on the
/// handler's shared state: no allocation to post one).
impl RemoteHandler for Inner {
    fn cpu(&self) -> usize {
        self.cpu
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn bind(&self, kernel: KernelId) -> bool {
        self.f.bind(kernel)
    }

    fn serve_remote(
        self: Arc<Self>,
        host: &RefCell<dyn HandlerHost + '_>,
        msg: Message,
        caller: Option<Caller>,
    ) -> Result<Served, MsgError> {
        Handler { inner: self }.serve_remote(host, msg, caller)
    }
}

impl Handler {
    /// This handler as the kernel holds it for a request from another CPU.
    pub(crate) fn as_remote(&self) -> Arc<dyn RemoteHandler> {
        self.inner.clone()
    }
}
