//! The thread's side of the kernel: the code that runs on a thread's own stack. The
//! [`Ctx`](crate::kernel::Ctx) a body calls, the wire protocol it suspends with, the runtime
//! calls as types, the job loop every thread runs, and the [`EventCtx`](crate::kernel::EventCtx)
//! of timing-event handlers.
//!
//! Owns: `protocol`, `unwinds`, `calls`, `ctx`, `ctx_control`, `ctx_messages`, `ctx_sched`, `job_loop`
//! and `event_ctx`.
//!
//! Must not: touch kernel state. A thread reaches its kernel only by the requests of
//! `protocol`; the kernel answers them in `threads::requests`.

pub(in crate::kernel) mod calls;
pub(in crate::kernel) mod ctx;
pub(in crate::kernel) mod ctx_control;
pub(in crate::kernel) mod ctx_messages;
pub(in crate::kernel) mod ctx_sched;
pub(in crate::kernel) mod event_ctx;
pub(in crate::kernel) mod job_loop;
pub(in crate::kernel) mod protocol;
pub(in crate::kernel) mod unwinds;
