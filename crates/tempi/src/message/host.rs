//! What a handler runs on when it is not on a thread's stack: the dispatcher of its own CPU,
//! serving a request that came from a thread of another real-time CPU (see "Handlers across
//! CPUs" in the architecture guide). The kernel implements [`HandlerHost`]; the handler's
//! invocation path (`handler.rs`) and [`super::HandlerCtx`] call it.
//!
//! Owns the vocabulary only: who waits for a queued call ([`Caller`]) and what a host offers.
//! Must not: reach kernel state (the kernel's side is `kernel/xcpu_handlers.rs`).

use std::time::Duration;

use super::{Message, MsgError};
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
}
