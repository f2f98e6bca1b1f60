//! Message passing on one CPU: the kernel's message pool, each thread's new queue and save
//! queues, send, call, reply, read and save, timed messages, and the short path of a
//! process's reply and next read in one request.
//!
//! Owns: `messages`, `messages_timed`, `short_path` and `payload_stores` (what a kernel
//! knows of the payload pools).
//!
//! Must not: carry a message to another CPU (that is `xcpu::messages`), or run handlers
//! (the handler runtime in [`crate::message`] does).

pub(in crate::kernel) mod messages;
pub(in crate::kernel) mod messages_timed;
pub(in crate::kernel) mod payload_stores;
pub(in crate::kernel) mod short_path;

/// The messages of this kernel's threads and what was refused.
pub(in crate::kernel) struct Mail {
    /// The messages of this kernel's threads (see `messaging/messages.rs`).
    pub(in crate::kernel) pool: crate::kernel::messaging::messages::MsgPool,
    /// Messages refused by full handler queues, timed messages pending at the end.
    pub(in crate::kernel) stats: crate::stats::MessageStats,
}
