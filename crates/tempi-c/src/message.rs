//! Messages and handlers from C: a thread body's `send`, `call`, `reply`, `read`, `save` and
//! `read_saved`, and handlers whose function is a C function, with the calls a handler may
//! make on its `tempi_handler_ctx`.
//!
//! A handler's function runs on the stack of the thread that invokes it (or, in real time,
//! on its CPU's dispatcher for a thread of another CPU), inside that thread's runtime call.
//! The runtime may unwind that stack from inside a call the handler makes (`work`: the
//! invoking thread's job aborted, the thread killed, the run stopped); a C frame cannot be
//! unwound, so, as for thread bodies, the call catches the unwind, answers
//! `TEMPI_INTERRUPTED`, and the unwind is resumed when the handler's function has returned.
//!
//! Owns `tempi_message`, `tempi_selection`, the `tempi_handler` and `tempi_handler_ctx`
//! handles and their calls; must not reach into the kernel (everything goes through
//! `tempi::message`).

use std::ffi::{c_char, c_void};
use std::time::Duration;

use tempi::message::{Handler, HandlerCtx, Message, MsgError, Read, Selection};
use tempi::ThreadId;

use crate::ctx::{tempi_ctx, thread_call, Interrupts};
use crate::params::{put, read_sized, text, writable_size, write_sized, Sized0};
use crate::runtime::{tempi_runtime, tempi_thread};
use crate::status::{guard, set_last_error, tempi_status, Failure};

/// A message: three words of the application's and who sent it. Set `size` to
/// `sizeof(tempi_message)` (or call `tempi_message_init`) in a message given to a call and
/// in one a call writes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_message {
    /// `sizeof(tempi_message)` as the caller compiled it.
    pub size: usize,
    /// The sender, set by the runtime on every send (ignored in a message given to a call).
    pub from: tempi_thread,
    /// What is asked: the application's own code.
    pub id: i64,
    /// The argument or the answer.
    pub value: i64,
    /// A scheduling constraint, such as an absolute deadline in ns (0: none).
    pub constraint: i64,
    /// 1 if the sender waits for the reply (a call); set by the runtime.
    pub expects_reply: u32,
    /// Reserved, zero.
    pub reserved: u32,
}

// SAFETY: repr(C), size first, integer fields only.
unsafe impl Sized0 for tempi_message {
    fn defaults() -> tempi_message {
        tempi_message {
            size: std::mem::size_of::<tempi_message>(),
            from: 0,
            id: 0,
            value: 0,
            constraint: 0,
            expects_reply: 0,
            reserved: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_message>();
}

impl tempi_message {
    fn of(m: &Message) -> tempi_message {
        tempi_message {
            size: std::mem::size_of::<tempi_message>(),
            from: m.from.map_or(0, ThreadId::to_raw),
            id: m.id,
            value: m.value,
            constraint: m.constraint,
            expects_reply: u32::from(m.expects_reply),
            reserved: 0,
        }
    }
}

/// How `tempi_read` waits (`mode`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tempi_read_mode {
    /// Until a message arrives.
    TEMPI_READ_WAIT = 0,
    /// Not at all: `TEMPI_WOULD_BLOCK` if the queue is empty.
    TEMPI_READ_POLL = 1,
    /// At most `timeout_ns`: `TEMPI_TIMEOUT` if none came.
    TEMPI_READ_TIMEOUT = 2,
}

/// Which fields of a saved message `tempi_read_saved` matches (`tempi_selection.match`, or-ed).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tempi_match {
    /// The sender must be `from`.
    TEMPI_MATCH_FROM = 1,
    /// The id must be `id`.
    TEMPI_MATCH_ID = 2,
    /// The value must be `value`.
    TEMPI_MATCH_VALUE = 4,
    /// The constraint must be `constraint`.
    TEMPI_MATCH_CONSTRAINT = 8,
}

/// Which saved message `tempi_read_saved` takes: the first (smallest `value`, then earliest
/// saved) whose fields named in `match` equal these. Set `size` to `sizeof(tempi_selection)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_selection {
    /// `sizeof(tempi_selection)` as the caller compiled it.
    pub size: usize,
    /// `tempi_match` values or-ed together; 0 matches every message.
    pub r#match: u32,
    /// Reserved, zero.
    pub reserved: u32,
    /// The sender to match.
    pub from: tempi_thread,
    /// The id to match.
    pub id: i64,
    /// The value to match.
    pub value: i64,
    /// The constraint to match.
    pub constraint: i64,
}

// SAFETY: repr(C), size first, integer fields only.
unsafe impl Sized0 for tempi_selection {
    fn defaults() -> tempi_selection {
        tempi_selection {
            size: std::mem::size_of::<tempi_selection>(),
            r#match: 0,
            reserved: 0,
            from: 0,
            id: 0,
            value: 0,
            constraint: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_selection>();
}

/// Fill `*out` with a message of these fields, `size` set.
///
/// Thread-safe (touches only `*out`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_message_init(
    out: *mut tempi_message,
    id: i64,
    value: i64,
    constraint: i64,
) -> tempi_status {
    guard("tempi_message_init", || {
        let m = tempi_message { id, value, constraint, ..tempi_message::defaults() };
        // SAFETY: out is null or writable (the header's contract).
        unsafe { put(out, m, "out") }
    })
}

/// The message the caller gave at `m`.
///
/// # Safety
///
/// `m` is null or holds `(*m).size` readable bytes.
unsafe fn message_in(m: *const tempi_message, what: &str) -> Result<Message, Failure> {
    // SAFETY: forwarded contract.
    let m = unsafe { read_sized(m, what) }?;
    Ok(Message::new(m.id, m.value, m.constraint))
}

/// The selection the caller gave at `s`.
///
/// # Safety
///
/// `s` is null or holds `(*s).size` readable bytes.
unsafe fn selection_in(s: *const tempi_selection) -> Result<Selection, Failure> {
    // SAFETY: forwarded contract.
    let s = unsafe { read_sized(s, "selection") }?;
    let known = tempi_match::TEMPI_MATCH_FROM as u32
        | tempi_match::TEMPI_MATCH_ID as u32
        | tempi_match::TEMPI_MATCH_VALUE as u32
        | tempi_match::TEMPI_MATCH_CONSTRAINT as u32;
    if s.r#match & !known != 0 {
        return Err(Failure::new(
            tempi_status::TEMPI_INVALID_ARGUMENT,
            format!("selection->match is {:#x}: an or of tempi_match values", s.r#match),
        ));
    }
    let mut sel = Selection::any();
    if s.r#match & tempi_match::TEMPI_MATCH_FROM as u32 != 0 {
        sel = sel.from(thread_of(s.from)?);
    }
    if s.r#match & tempi_match::TEMPI_MATCH_ID as u32 != 0 {
        sel = sel.id(s.id);
    }
    if s.r#match & tempi_match::TEMPI_MATCH_VALUE as u32 != 0 {
        sel = sel.value(s.value);
    }
    if s.r#match & tempi_match::TEMPI_MATCH_CONSTRAINT as u32 != 0 {
        sel = sel.constraint(s.constraint);
    }
    Ok(sel)
}

fn thread_of(t: tempi_thread) -> Result<ThreadId, Failure> {
    ThreadId::from_raw(t).ok_or_else(|| Failure::new(tempi_status::TEMPI_UNKNOWN_THREAD, "thread 0 names no thread"))
}

/// Write the message `got` (or the cancelled one a read answered) to `out`.
///
/// # Safety
///
/// `out` holds `(*out).size` writable bytes (checked by [`writable_size`] before the call).
unsafe fn message_out(got: Result<Message, MsgError>, out: *mut tempi_message) -> Result<(), Failure> {
    match got {
        // SAFETY: forwarded contract.
        Ok(m) => unsafe { write_sized(out, &tempi_message::of(&m), "out") },
        Err(MsgError::Cancelled(m)) => {
            // SAFETY: forwarded contract.
            unsafe { write_sized(out, &tempi_message::of(&m), "out") }?;
            Err(MsgError::Cancelled(m).into())
        }
        Err(e) => Err(e.into()),
    }
}

/// Send `msg` to thread `to` and go on (it waits in `to`'s queue; `to` may run on another
/// CPU). `TEMPI_FULL`: the message pool, `to`'s queue or the other CPU's request queue is
/// full; `TEMPI_REFUSED`: `to`'s queue policy refused it; `TEMPI_UNKNOWN_THREAD`: `to` has
/// ended.
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_send(cx: *mut tempi_ctx, to: tempi_thread, msg: *const tempi_message) -> tempi_status {
    // SAFETY: forwarded contract; msg is null or holds `size` readable bytes.
    unsafe {
        thread_call("tempi_send", cx, |h| {
            let m = message_in(msg, "msg")?;
            Ok(h.rust().send(thread_of(to)?, m)?)
        })
    }
}

/// Send `msg` to thread `to` and wait for its reply, written to `*reply` (only on success).
/// As `tempi_send`, and `TEMPI_INVALID_ARGUMENT` for a call to the caller itself,
/// `TEMPI_UNANSWERED` if `to` read past the call, or ended, without replying.
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_call(
    cx: *mut tempi_ctx,
    to: tempi_thread,
    msg: *const tempi_message,
    reply: *mut tempi_message,
) -> tempi_status {
    // SAFETY: forwarded contract; msg is null or readable, reply null or writable, for
    // their `size` bytes.
    unsafe {
        thread_call("tempi_call", cx, |h| {
            let m = message_in(msg, "msg")?;
            writable_size(reply, "reply")?;
            let got = h.rust().call(thread_of(to)?, m)?;
            write_sized(reply, &tempi_message::of(&got), "reply")
        })
    }
}

/// Answer the current message (the one last read) with `msg`: a waiting caller gets it; the
/// sender of a message that was sent gets it as a new message. `TEMPI_NO_CURRENT` if there is
/// no current message (none read, or it was answered or saved).
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_reply(cx: *mut tempi_ctx, msg: *const tempi_message) -> tempi_status {
    // SAFETY: forwarded contract; msg is null or holds `size` readable bytes.
    unsafe {
        thread_call("tempi_reply", cx, |h| {
            let m = message_in(msg, "msg")?;
            Ok(h.rust().reply(m)?)
        })
    }
}

/// Take the next message of the caller's queue into `*out`, which becomes the current
/// message; `mode` is a `tempi_read_mode` (`timeout_ns` for `TEMPI_READ_TIMEOUT`).
/// `TEMPI_WOULD_BLOCK`: a poll found the queue empty; `TEMPI_TIMEOUT`: none came in time;
/// `TEMPI_CANCELLED`: the scheduler cancelled the message read, written to `*out` all the same
/// (it is current: it may be answered or saved).
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_read(
    cx: *mut tempi_ctx,
    mode: u32,
    timeout_ns: u64,
    out: *mut tempi_message,
) -> tempi_status {
    // SAFETY: forwarded contract; out is null or holds `size` writable bytes.
    unsafe {
        thread_call("tempi_read", cx, |h| {
            let mode = match mode {
                0 => Read::Wait,
                1 => Read::Poll,
                2 => Read::Timeout(Duration::from_nanos(timeout_ns)),
                other => {
                    return Err(Failure::new(
                        tempi_status::TEMPI_INVALID_ARGUMENT,
                        format!("mode is {other}: TEMPI_READ_WAIT, TEMPI_READ_POLL or TEMPI_READ_TIMEOUT"),
                    ))
                }
            };
            writable_size(out, "out")?;
            message_out(h.rust().read(mode), out)
        })
    }
}

/// Put the current message aside in save queue `queue` (of the thread's
/// `save_queues`), its `id`, `value` and `constraint` replaced by `fields`' (the sender is
/// kept); a waiting caller keeps waiting. `TEMPI_NO_CURRENT`, `TEMPI_OUT_OF_RANGE` (no such
/// save queue), `TEMPI_FULL`.
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_save(cx: *mut tempi_ctx, queue: u32, fields: *const tempi_message) -> tempi_status {
    // SAFETY: forwarded contract; fields is null or holds `size` readable bytes.
    unsafe {
        thread_call("tempi_save", cx, |h| {
            let m = message_in(fields, "fields")?;
            Ok(h.rust().save(queue as usize, m)?)
        })
    }
}

/// Take the first message of save queue `queue` that `selection` matches into `*out`; it
/// becomes the current message. `TEMPI_NO_MATCH`, `TEMPI_OUT_OF_RANGE`.
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_read_saved(
    cx: *mut tempi_ctx,
    queue: u32,
    selection: *const tempi_selection,
    out: *mut tempi_message,
) -> tempi_status {
    // SAFETY: forwarded contract; selection null or readable, out null or writable, for
    // their `size` bytes.
    unsafe {
        thread_call("tempi_read_saved", cx, |h| {
            let sel = selection_in(selection)?;
            writable_size(out, "out")?;
            message_out(h.rust().read_saved(queue as usize, sel), out)
        })
    }
}

// Handlers.

/// A handler's function: called once per message, with the handler's context, the message
/// and the `userdata` given at creation. It must not keep `hcx` or `msg`. After one of its
/// calls answered `TEMPI_INTERRUPTED` it must return at once.
pub type tempi_handler_fn =
    Option<unsafe extern "C" fn(hcx: *mut tempi_handler_ctx, msg: *const tempi_message, userdata: *mut c_void)>;

/// A handler: a message receiver without a stack of its own, whose function runs on the
/// stack of the thread that sends or calls it when it is idle, and serves the messages queued
/// meanwhile when it is busy. Owned by its runtime handle: valid until `tempi_runtime_free`.
pub struct tempi_handler {
    handler: Handler,
}

/// A handler's view of the thread it runs on: valid inside the function call it was passed
/// to, and nowhere else.
pub struct tempi_handler_ctx {
    /// The Rust handler context, alive for the function call.
    hcx: *const HandlerCtx<'static, 'static>,
    interrupts: Interrupts,
}

impl tempi_handler_ctx {
    fn rust(&self) -> &HandlerCtx<'static, 'static> {
        // SAFETY: hcx is the function's context, alive while the function runs (see
        // `tempi_runtime_create_handler`), and the handle is reachable only from inside it.
        unsafe { &*self.hcx }
    }
}

/// What `tempi_runtime_create_handler` creates. Set `size` to `sizeof(tempi_handler_params)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_handler_params {
    /// `sizeof(tempi_handler_params)` as the caller compiled it.
    pub size: usize,
    /// Its name (copied); NULL for `"handler"`.
    pub name: *const c_char,
    /// The CPU whose threads run it on their stacks.
    pub cpu: u32,
    /// Its save queues (`tempi_handler_save`), each as large as its queue; at most 1024.
    pub save_queues: u32,
    /// The messages its queue holds while it is busy (at most 2^20).
    pub capacity: u64,
    /// Its function.
    pub function: tempi_handler_fn,
    /// Passed to `function`.
    pub userdata: *mut c_void,
}

// SAFETY: repr(C), size first, integer, pointer and nullable function-pointer fields only.
unsafe impl Sized0 for tempi_handler_params {
    fn defaults() -> tempi_handler_params {
        tempi_handler_params {
            size: std::mem::size_of::<tempi_handler_params>(),
            name: std::ptr::null(),
            cpu: 0,
            save_queues: 0,
            capacity: 0,
            function: None,
            userdata: std::ptr::null_mut(),
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_handler_params>();
}

/// A handler's C function and its user pointer, moved into the handler.
struct CHandler {
    function: unsafe extern "C" fn(*mut tempi_handler_ctx, *const tempi_message, *mut c_void),
    userdata: *mut c_void,
}

// SAFETY: the header's contract: a handler's function and userdata may be called from any OS
// thread that runs a thread invoking it (in real time, its CPU's dispatcher).
unsafe impl Send for CHandler {}

impl CHandler {
    /// Run the C function for `m` on `hcx`; an unwind one of its calls caught is resumed
    /// once it has returned.
    fn serve(&self, hcx: &HandlerCtx<'_, '_>, m: Message) {
        let handle = tempi_handler_ctx {
            hcx: std::ptr::from_ref(hcx).cast::<HandlerCtx<'static, 'static>>(),
            interrupts: Interrupts::new(hcx.invoker().to_raw()),
        };
        let msg = tempi_message::of(&m);
        let me = std::ptr::from_ref(&handle).cast_mut();
        // SAFETY: the function is a C function of this signature (the header's contract);
        // handle and msg outlive the call, and calls on the handle catch every unwind, so
        // none crosses the C frames.
        unsafe {
            handle.interrupts.enter_c(
                self.function as usize,
                me as usize,
                std::ptr::from_ref(&msg) as usize,
                self.userdata as usize,
            )
        };
        handle.interrupts.resume_pending();
    }
}

/// Create a handler as `params` says; `*out` (only on success) is valid until the runtime is
/// freed. Sizes above their limits are `TEMPI_INVALID_ARGUMENT`.
///
/// Not thread-safe with other calls on the same runtime.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_create_handler(
    rt: *mut tempi_runtime,
    params: *const tempi_handler_params,
    out: *mut *mut tempi_handler,
) -> tempi_status {
    guard("tempi_runtime_create_handler", || {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: rt is null or live (the header's contract).
        let handle = unsafe { tempi_runtime::live_handle(rt) }?;
        // SAFETY: params is null or holds `size` readable bytes.
        let p = unsafe { read_sized(params, "params") }?;
        let Some(function) = p.function else { return Err(Failure::null("params->function")) };
        // SAFETY: p.name is null or NUL-terminated.
        let name = unsafe { text(p.name, "params->name") }?.unwrap_or("handler");
        let capacity = usize::try_from(p.capacity).unwrap_or(usize::MAX);
        let c = CHandler { function, userdata: p.userdata };
        let mut handler = Handler::try_new(name, p.cpu as usize, capacity, move |hcx, m| c.serve(hcx, m))?;
        if p.save_queues != 0 {
            handler = handler.try_save_queues(p.save_queues as usize)?;
        }
        let owned = std::sync::Arc::new(tempi_handler { handler });
        let ptr = std::sync::Arc::as_ptr(&owned).cast_mut();
        handle.owned.handlers.push(owned);
        // SAFETY: out is non-null and writable.
        unsafe { put(out, ptr, "out") }
    })
}

/// The handler behind a handle argument.
///
/// # Safety
///
/// `p` is null or a handle its runtime still owns.
unsafe fn handler<'a>(p: *const tempi_handler) -> Result<&'a Handler, Failure> {
    // SAFETY: p is null or kept alive by its runtime handle (caller's contract).
    unsafe { p.as_ref() }.map(|h| &h.handler).ok_or_else(|| Failure::null("handler"))
}

/// Send `msg` to handler `h`: an idle handler runs it now on the caller's stack (and serves
/// what was queued meanwhile), a busy one queues it (`TEMPI_FULL` if its queue is full).
/// `TEMPI_POISONED`: its function panicked; `TEMPI_FOREIGN`: another runtime is using it.
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_handler_send(
    cx: *mut tempi_ctx,
    h: *mut tempi_handler,
    msg: *const tempi_message,
) -> tempi_status {
    // SAFETY: forwarded contract; h is null or owned by its live runtime handle; msg null or
    // holding `size` readable bytes.
    unsafe {
        thread_call("tempi_handler_send", cx, |c| {
            let handler = handler(h)?;
            let m = message_in(msg, "msg")?;
            Ok(handler.send(c.rust(), m)?)
        })
    }
}

/// Call handler `h` with `msg` and write its reply to `*reply` (only on success): at once
/// from an idle handler, once it has served the call from its queue from a busy one.
/// `TEMPI_UNANSWERED` if it did not reply; otherwise as `tempi_handler_send`.
///
/// Only from the running body, with its own `cx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_handler_call(
    cx: *mut tempi_ctx,
    h: *mut tempi_handler,
    msg: *const tempi_message,
    reply: *mut tempi_message,
) -> tempi_status {
    // SAFETY: forwarded contract; as in tempi_handler_send, reply null or writable.
    unsafe {
        thread_call("tempi_handler_call", cx, |c| {
            let handler = handler(h)?;
            let m = message_in(msg, "msg")?;
            writable_size(reply, "reply")?;
            let got = handler.call(c.rust(), m)?;
            write_sized(reply, &tempi_message::of(&got), "reply")
        })
    }
}

/// Run handler call `name` on `hcx` (interrupts as for thread calls).
///
/// # Safety
///
/// `hcx` is null or the context passed to the running handler function.
unsafe fn handler_call(
    name: &str,
    hcx: *mut tempi_handler_ctx,
    call: impl FnOnce(&tempi_handler_ctx) -> Result<(), Failure>,
) -> tempi_status {
    // SAFETY: hcx is null or the live context of the running function (the header's
    // contract); only shared references to it are made.
    let Some(h) = (unsafe { hcx.cast_const().as_ref() }) else {
        set_last_error(&format!("{name}: hcx is null"));
        return tempi_status::TEMPI_NULL_ARGUMENT;
    };
    h.interrupts.call(name, || call(h))
}

/// Answer the message being served (or the saved one last taken back) with `msg`: a waiting
/// caller gets it, the sender of a message that was sent gets it as a new message. With no
/// current message (it was saved) the reply is dropped.
///
/// Only from the running handler function, with its own `hcx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_handler_reply(hcx: *mut tempi_handler_ctx, msg: *const tempi_message) -> tempi_status {
    // SAFETY: forwarded contract; msg is null or holds `size` readable bytes.
    unsafe {
        handler_call("tempi_handler_reply", hcx, |h| {
            let m = message_in(msg, "msg")?;
            h.rust().reply(m);
            Ok(())
        })
    }
}

/// Consume `ns` of CPU time on the invoking thread (which may be preempted here: the
/// handler stays busy meanwhile).
///
/// Only from the running handler function, with its own `hcx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_handler_work(hcx: *mut tempi_handler_ctx, ns: u64) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe {
        handler_call("tempi_handler_work", hcx, |h| {
            h.rust().work(Duration::from_nanos(ns));
            Ok(())
        })
    }
}

/// The current instant in ns, into `*out` (only on success).
///
/// Only from the running handler function, with its own `hcx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_handler_now(hcx: *mut tempi_handler_ctx, out: *mut u64) -> tempi_status {
    // SAFETY: forwarded contract; out is null or writable.
    unsafe { handler_call("tempi_handler_now", hcx, |h| put(out, h.rust().now().as_nanos(), "out")) }
}

/// The thread the handler runs for (whose stack it borrows, or that asked from another
/// real-time CPU), into `*out` (only on success).
///
/// Only from the running handler function, with its own `hcx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_handler_invoker(hcx: *mut tempi_handler_ctx, out: *mut tempi_thread) -> tempi_status {
    // SAFETY: forwarded contract; out is null or writable.
    unsafe { handler_call("tempi_handler_invoker", hcx, |h| put(out, h.rust().invoker().to_raw(), "out")) }
}

/// Send `msg` to thread `to`, as `tempi_send` (it never waits).
///
/// Only from the running handler function, with its own `hcx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_handler_send_thread(
    hcx: *mut tempi_handler_ctx,
    to: tempi_thread,
    msg: *const tempi_message,
) -> tempi_status {
    // SAFETY: forwarded contract; msg is null or holds `size` readable bytes.
    unsafe {
        handler_call("tempi_handler_send_thread", hcx, |h| {
            let m = message_in(msg, "msg")?;
            Ok(h.rust().send(thread_of(to)?, m)?)
        })
    }
}

/// Put the message being served (or the saved one last taken back) aside in the handler's
/// save queue `queue`, its fields replaced by `fields`' (the sender kept). Saving a call
/// keeps its caller waiting until an invocation takes it back and replies.
/// `TEMPI_NO_CURRENT`, `TEMPI_OUT_OF_RANGE`, `TEMPI_FULL`.
///
/// Only from the running handler function, with its own `hcx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_handler_save(
    hcx: *mut tempi_handler_ctx,
    queue: u32,
    fields: *const tempi_message,
) -> tempi_status {
    // SAFETY: forwarded contract; fields is null or holds `size` readable bytes.
    unsafe {
        handler_call("tempi_handler_save", hcx, |h| {
            let m = message_in(fields, "fields")?;
            Ok(h.rust().save(queue as usize, m)?)
        })
    }
}

/// Take the first message of the handler's save queue `queue` that `selection` matches into
/// `*out`; it becomes the current message (`tempi_handler_reply` answers it).
/// `TEMPI_NO_MATCH`, `TEMPI_OUT_OF_RANGE`.
///
/// Only from the running handler function, with its own `hcx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_handler_read_saved(
    hcx: *mut tempi_handler_ctx,
    queue: u32,
    selection: *const tempi_selection,
    out: *mut tempi_message,
) -> tempi_status {
    // SAFETY: forwarded contract; selection null or readable, out null or writable.
    unsafe {
        handler_call("tempi_handler_read_saved", hcx, |h| {
            let sel = selection_in(selection)?;
            writable_size(out, "out")?;
            message_out(h.rust().read_saved(queue as usize, sel), out)
        })
    }
}

/// Send `msg` to handler `to` from this handler: an idle `to` runs it now, a busy one
/// (this handler itself included) queues it, served after the current message.
///
/// Only from the running handler function, with its own `hcx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_handler_send_handler(
    hcx: *mut tempi_handler_ctx,
    to: *mut tempi_handler,
    msg: *const tempi_message,
) -> tempi_status {
    // SAFETY: forwarded contract; to is null or owned by its live runtime handle.
    unsafe {
        handler_call("tempi_handler_send_handler", hcx, |h| {
            let target = handler(to)?;
            let m = message_in(msg, "msg")?;
            Ok(h.rust().send_handler(target, m)?)
        })
    }
}

/// Call handler `to` from this handler and write its reply to `*reply` (only on success):
/// `TEMPI_WOULD_BLOCK` if `to` is busy (a handler never waits), `TEMPI_UNANSWERED` if it did
/// not reply.
///
/// Only from the running handler function, with its own `hcx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_handler_call_handler(
    hcx: *mut tempi_handler_ctx,
    to: *mut tempi_handler,
    msg: *const tempi_message,
    reply: *mut tempi_message,
) -> tempi_status {
    // SAFETY: forwarded contract; reply is null or writable.
    unsafe {
        handler_call("tempi_handler_call_handler", hcx, |h| {
            let target = handler(to)?;
            let m = message_in(msg, "msg")?;
            writable_size(reply, "reply")?;
            let got = h.rust().call_handler(target, m)?;
            write_sized(reply, &tempi_message::of(&got), "reply")
        })
    }
}
