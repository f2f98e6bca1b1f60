//! The interface between the kernel and the handlers it serves for other CPUs. The kernel
//! owns it and calls back through it; the handler runtime (`message/`) implements it, and the
//! runtime installs the hooks at seeding, so that the kernel names nothing of `message`.
//!
//! Owns: who waits for a call queued at a busy handler ([`Caller`]), what a dispatcher offers a
//! handler it runs ([`HandlerHost`]), what serving a request did ([`Served`]), a handler as the
//! kernel holds it ([`RemoteHandler`]) and the handler runtime's process-wide settlements
//! ([`HandlerHooks`]). Must not: hold handler state.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use crate::os::busy_cell::KernelId;
use crate::plain::{Message, MsgError, ThreadId};
use crate::policy::sched::Urgency;
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
    fn executor(&self) -> KernelId;
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

/// What serving a request from another CPU did ([`RemoteHandler::serve_remote`]).
pub(crate) enum Served {
    /// The handler was idle and ran it (and drained its queue); its reply to a call.
    Ran(Option<Message>),
    /// The handler was busy, or saved the message: a call is answered when the handler
    /// serves it.
    Queued,
}

/// A handler as the kernel holds it while a request from another CPU travels to the
/// handler's CPU (`Post::Handler`) and while it serves it there.
pub(crate) trait RemoteHandler: Send + Sync {
    /// The CPU it belongs to.
    fn cpu(&self) -> usize;
    /// Its name, for the report of a panic inside it.
    fn name(&self) -> &str;
    /// Bind it to `kernel` (of its CPU), unless a kernel of another runtime has it now:
    /// whether `kernel` has it.
    fn bind(&self, kernel: KernelId) -> bool;
    /// Serve `msg` from a thread of another CPU on `host`, the dispatcher of its CPU; `caller`
    /// waits for the answer of a call.
    fn serve_remote(
        self: Arc<Self>,
        host: &RefCell<dyn HandlerHost + '_>,
        msg: Message,
        caller: Option<Caller>,
    ) -> Result<Served, MsgError>;
}

/// The handler runtime's settlements that look at every handler of the process, installed by
/// the runtime in each kernel it seeds.
#[derive(Clone, Copy)]
pub(crate) struct HandlerHooks {
    /// An unwind that poisoned handlers bound to the host's kernel is over: refuse what they
    /// held.
    pub(crate) settle_poisoned: fn(&RefCell<dyn HandlerHost + '_>),
    /// An unwind that left handlers with messages queued is over: hand each to the oldest
    /// caller of the host's kernel waiting at it.
    pub(crate) settle_unwound: fn(&RefCell<dyn HandlerHost + '_>),
    /// Whether thread `id` of kernel `kernel` is inside a handler now.
    pub(crate) holds_a_handler: fn(KernelId, ThreadId) -> bool,
}
