//! Message passing on one CPU: the kernel's message pool, each thread's new queue and save
//! queues, send, call, reply, read and save, timed messages, and the short path of a
//! process's reply and next read in one request.
//!
//! Owns: `messages`, `messages_timed` and `short_path`.
//!
//! Must not: carry a message to another CPU (that is `xcpu::messages`), or run handlers
//! (the handler runtime in [`crate::message`] does).

pub(in crate::kernel) mod messages;
pub(in crate::kernel) mod messages_timed;
pub(in crate::kernel) mod short_path;
