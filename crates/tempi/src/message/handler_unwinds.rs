//! What an unwind through a handler leaves behind: a panic of its function poisons it
//! ([`Unwound`], [`HandlerCtx::poison`]: it refuses every message from then on, and what it held
//! is refused once the unwind is over); the runtime's own unwinds (an abort, a kill, a stop)
//! poison nothing, and a handler left with messages queued is handed on to a waiting caller
//! ([`Stay`], [`Waiting`]; the kernel's side is `leftovers::settle_unwound`).
//!
//! Owns these guards, each forgotten on the normal path so that the idle call pays only for
//! writing its fields. Must not: reach kernel state (deferred requests only).

use super::handler::{locked, HandlerCtx, HandlerFn, Inner, Invoked, Pending, Saved, Via};
use super::{Message, MsgError};
use crate::kernel::Ctx;
use std::sync::atomic::Ordering;

/// A thread's stay in a handler, from entering it to leaving it: dropped only if the runtime
/// unwinds the thread out of it (an abort, a kill, a stop; the normal path forgets it).
/// Messages queued there meanwhile must not wait for an invocation that may never come: the
/// handler is marked as left with a queue, and once the unwind is over the kernel hands it to
/// the oldest caller waiting there ([`super::leftovers::settle_unwound`]). A panic is the
/// handler's own doing and poisons it instead ([`Unwound`]).
pub(super) struct Stay<'a, 'c> {
    pub(super) inner: &'a Inner,
    pub(super) cx: &'a Ctx<'c>,
}

impl Drop for Stay<'_, '_> {
    fn drop(&mut self) {
        if self.cx.unwound_by_runtime() && self.inner.queued.load(Ordering::Acquire) > 0 {
            left_with_a_queue(self.inner, self.cx);
        }
    }
}

/// A caller's wait at a busy handler: dropped only if the runtime unwinds the caller out of
/// it (the normal path forgets it). If the handler had just been handed to it (its call taken
/// out of the queue, see [`Stay`]), the call goes back at the head of the queue, as a call
/// whose caller is gone (it is served, and the reply dropped, as any such call's), and the
/// handler is handed on to the next caller waiting there once the unwind is over: the hand-
/// over must not strand the others, nor the message's payload.
pub(super) struct Waiting<'a, 'c> {
    pub(super) inner: &'a Inner,
    pub(super) cx: &'a Ctx<'c>,
    pub(super) msg: Message,
}

impl Drop for Waiting<'_, '_> {
    fn drop(&mut self) {
        if !self.cx.handler_handed_over() {
            return;
        }
        let h = self.inner;
        let mut queue = locked(&h.pending);
        queue.push_front(Pending { msg: self.msg, caller: None });
        h.queued.store(queue.len(), Ordering::Release);
        drop(queue);
        left_with_a_queue(h, self.cx);
    }
}

/// `h` is left with messages queued, or with a call cut short, by `cx`'s thread, which the
/// runtime is unwinding: once the unwind is over, the kernel answers what was cut short and
/// hands the handler on ([`super::leftovers::settle_unwound`]). Asked once per unwind.
fn left_with_a_queue(h: &Inner, cx: &Ctx<'_>) {
    if !h.left.swap(true, Ordering::AcqRel) {
        cx.settle_handlers();
    }
}

/// Poisons its handler when dropped, which happens only if the function it runs is unwound
/// (the normal path forgets it) — by a panic: the runtime's own unwinds poison nothing.
pub(super) struct Unwound<'a, 'h, 'c> {
    pub(super) f: &'a mut HandlerFn,
    pub(super) hcx: &'a HandlerCtx<'h, 'c>,
}

impl Drop for Unwound<'_, '_, '_> {
    fn drop(&mut self) {
        self.hcx.poison(self.f);
    }
}

/// A poisoned handler's function: every message is refused, its caller (if queued) answered,
/// and it is counted and traced; the payload goes back in [`super::Handler::run_one`].
fn refuse_all(hcx: &HandlerCtx<'_, '_>, msg: Message) {
    hcx.reply.set(Err(MsgError::HandlerPanicked));
    match hcx.via {
        Via::Thread(cx) => cx.handler_unserved(msg, hcx.caller),
        Via::Host(host) => host.borrow_mut().unserved(msg, hcx.caller),
    }
}

impl HandlerCtx<'_, '_> {
    /// What the function running for this context held when it was unwound, each with its
    /// waiting caller: the message it was invoked for, unless saved (then it is in a save
    /// queue), and a saved one it had taken back (no longer current after this).
    fn held_when_unwound(&self) -> [Option<Pending>; 2] {
        let invoked = (self.saved.get() == Invoked::Current).then_some(Pending { msg: self.msg, caller: self.caller });
        let taken = self.taken.take().map(|t| Pending { msg: t.msg, caller: t.caller });
        [invoked, taken]
    }

    /// The runtime is unwinding the holder (`cx`'s thread) out of the function running for
    /// this context: no poison, but the message being served (and a saved one taken back)
    /// will not be answered by the function. Without this, a caller waiting for one of them
    /// would wait for good: the kernel answers it `Unanswered` once the unwind is over, and
    /// gives the payloads back (also the payload of a reply made but never delivered). A
    /// message of the holder's own call, or a send, has nobody waiting. Runs inside the
    /// unwind: no runtime call but the deferred one.
    #[cold]
    fn cut_short(&self, cx: &Ctx<'_>) {
        let h = self.inner;
        let mut cut = locked(&h.cut);
        cut.extend(self.held_when_unwound().into_iter().flatten());
        if let Ok(reply) = self.reply.get()
            && reply.payload.is_some()
            && reply.payload != self.msg.payload
        {
            // Never delivered: only its payload to give back.
            cut.push(Pending { msg: reply, caller: None });
        }
        let anything = !cut.is_empty();
        drop(cut);
        if anything {
            left_with_a_queue(h, cx);
        }
    }

    /// The function running for this context, `f`, is being unwound: the handler is poisoned
    /// for good, and what it held is put back in its queue for the kernel to refuse once the
    /// unwind is over (see the module docs). Runs inside the unwind: it makes no runtime call
    /// but the deferred one, and drops nothing of the application's.
    #[cold]
    #[inline(never)]
    fn poison(&self, f: &mut HandlerFn) {
        if let Via::Thread(cx) = self.via
            && cx.unwound_by_runtime()
        {
            self.cut_short(cx);
            return;
        }
        let h = self.inner;
        if !h.poisoned.load(Ordering::Acquire) {
            let old = std::mem::replace(f, Box::new(refuse_all));
            *locked(&h.broken) = Some(old);
        }
        let mut queue = locked(&h.pending);
        h.poisoned.store(true, Ordering::Release);
        // Their callers wait too: the invoked message first, the taken one after the queue.
        let [invoked, taken] = self.held_when_unwound();
        queue.extend(taken);
        if let Some(p) = invoked {
            queue.push_front(p);
        }
        let mut saves = locked(&h.saves);
        let mut saved: Vec<Saved> = saves.queues.iter_mut().flat_map(|q| q.drain(..)).collect();
        drop(saves);
        saved.sort_by_key(|s| s.seq);
        queue.extend(saved.into_iter().map(|s| Pending { msg: s.msg, caller: s.caller }));
        h.queued.store(queue.len(), Ordering::Release);
        h.unsettled.store(true, Ordering::Release);
        drop(queue);
        if let Via::Thread(cx) = self.via {
            cx.settle_handlers();
        }
    }
}
