//! Nothing left behind in a handler: what its invoker serves on the way out (a message queued
//! while it restored preemption or gave back a lend, `Handler::leave`), what a poisoned
//! handler held when its function was unwound (`settle_poisoned`: refused, its callers
//! answered), what was queued at a handler whose holder the runtime unwound
//! (`settle_unwound`: handed to the oldest caller waiting), and what a run's end takes back from the handlers of that runtime
//! (`settle_at_end`): the messages still in their queues and save queues, counted in
//! `MessageStats::queued_at_end`, their payloads given back; then it frees each of them for
//! another runtime.
//!
//! Owns the process's list of handlers (entered when one is made, never on an invocation).
//! Must not: reach kernel state.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use std::cell::RefCell;

use super::handler::{locked, HandlerFn, Inner, Pending, Via};
use super::{Handler, HandlerHost, Message};
use crate::kernel::Caller;
use crate::kernel::Ctx;
use crate::kernel::{HandlerHooks, PayloadStores};
use crate::os::busy_cell::{BusyGuard, Entry, KernelId};
use crate::plain::ThreadId;

/// Every handler of the process, entered when it is made (never on an invocation), so that a
/// run's end finds the messages its handlers still hold ([`settle_at_end`]). Entries of
/// handlers gone are pruned before the list would grow.
static HANDLERS: Mutex<Vec<Weak<Inner>>> = Mutex::new(Vec::new());

/// Enter a handler just made in the process's list.
pub(super) fn register(h: &Arc<Inner>) {
    let mut list = locked(&HANDLERS);
    if list.len() == list.capacity() {
        list.retain(|w| w.strong_count() > 0);
    }
    list.push(Arc::downgrade(h));
}

/// The run of the runtime whose `kernels` kernels are the executors from `first` on has ended
/// (every thread of it has, and every OS thread that ran its code is joined): take every
/// message its handlers still hold out of their queues and save queues, give each payload
/// back through `release`, and count them, then free each handler for another runtime.
/// Nobody is left to answer: their callers have ended too.
pub(crate) fn settle_at_end(first: KernelId, kernels: usize, mut release: impl FnMut(Message)) -> u64 {
    // Filtered outside the lock: a handle dropped here may be a handler's last, and its
    // function's captures may make another handler.
    let handlers: Vec<Arc<Inner>> = locked(&HANDLERS).iter().filter_map(Weak::upgrade).collect();
    let mut left = 0;
    let bound = |h: &Arc<Inner>| h.f.owner().filter(|k| k.among(first, kernels));
    for (h, kernel) in handlers.iter().filter_map(|h| Some((h, bound(h)?))) {
        let mut held = Vec::new();
        {
            let mut queue = locked(&h.pending);
            held.extend(queue.drain(..).map(|p| p.msg));
            h.queued.store(0, Ordering::Release);
        }
        {
            let mut saves = locked(&h.saves);
            for q in &mut saves.queues {
                held.extend(q.drain(..).map(|s| s.msg));
            }
        }
        left += held.len() as u64;
        held.into_iter().for_each(&mut release);
        // An answer kept for a thread that never came back for it.
        if let Some((_, Some(reply))) = locked(&h.early).take() {
            release(reply);
        }
        // Messages an unwind cut short, if the run ended before the kernel answered them:
        // nobody waits any more, only their payloads go back.
        locked(&h.cut).drain(..).for_each(|p| release(p.msg));
        h.f.free(kernel);
    }
    left
}

/// The unwind that poisoned one or more handlers of `host`'s runtime is over: on `host` (the
/// kernel of the thread that unwound, standing in for it), run what each of them still held
/// through its refusing function, which answers every waiting caller
/// [`super::MsgError::HandlerPanicked`] and counts and traces each message. A handler busy
/// now (a thread preempted inside its refusing function) is left to that thread, which
/// drains its queue on the way out.
pub(crate) fn settle_poisoned(host: &RefCell<dyn HandlerHost + '_>) {
    for inner in take_marked(host, |h| &h.unsettled) {
        let handler = Handler { inner };
        let Entry::Entered(mut f) = handler.inner.f.try_enter(host.borrow().executor()) else { continue };
        handler.inner.holder.store(0, Ordering::Relaxed);
        handler.drain(&mut f, Via::Host(host), false);
    }
}

/// The unwind of a thread that the runtime unwound out of one or more handlers of `host`'s
/// runtime while messages were queued there ([`super::handler_unwinds::Stay`]) is over: hand
/// each such handler, if idle, to the oldest caller of this host's kernel still waiting at it.
/// That call is taken out of the queue and its caller woken to make it again, on its own
/// stack: it runs first, then the handler drains the rest of the queue in order, as any
/// invocation does. Without it they would all wait for an invocation that may never come.
/// With no such caller but one of another real-time CPU, this CPU's dispatcher drains the
/// queue, as it serves such a caller's request. A handler busy again (entered since) is
/// drained by its new holder; one with sends only keeps its queue for its next invocation, or
/// the run's end counts it.
pub(crate) fn settle_unwound(host: &RefCell<dyn HandlerHost + '_>) {
    for h in take_marked(host, |h| &h.left) {
        // What the unwind cut short first: its callers are answered `Unanswered`, whatever
        // becomes of the handler.
        let cut: Vec<Pending> = locked(&h.cut).drain(..).collect();
        for p in cut {
            let mut host = host.borrow_mut();
            if let Some(caller) = p.caller {
                host.answer(caller, None);
            }
            host.drop_payload(p.msg);
        }
        let Entry::Entered(mut f) = h.f.try_enter(host.borrow().executor()) else { continue };
        // Callers in queue order. Nothing else runs on this CPU until the kernel is done here,
        // so the queue cannot change meanwhile, and the caller woken runs only after.
        let waiting: Vec<(ThreadId, u32)> = locked(&h.pending)
            .iter()
            .filter_map(|p| match p.caller {
                Some(Caller::Local(t, token)) => Some((t, token)),
                _ => None,
            })
            .collect();
        // The first still waiting (one aborted or killed meanwhile is not) takes it over.
        let taker = waiting.into_iter().find(|&(t, token)| host.borrow_mut().hand_over(t, token));
        let mut queue = locked(&h.pending);
        if let Some((t, token)) = taker {
            // It makes its call again on its own stack.
            queue.retain(|p| p.caller != Some(Caller::Local(t, token)));
            h.queued.store(queue.len(), Ordering::Release);
        } else if queue.iter().any(|p| matches!(p.caller, Some(Caller::Remote(..)))) {
            // A caller of another real-time CPU cannot lend its stack here: this CPU's
            // dispatcher serves the queue, as it serves such a caller's request at an idle
            // handler. (Virtual time has no such caller: every one is of the kernel.)
            drop(queue);
            h.holder.store(0, Ordering::Relaxed);
            Handler { inner: h.clone() }.drain(&mut f, Via::Host(host), false);
        }
    }
}

/// The settlements above, as the runtime installs them in each kernel it seeds.
pub(crate) const HANDLER_HOOKS: HandlerHooks = HandlerHooks { settle_poisoned, settle_unwound, holds_a_handler };

/// Whether thread `id` of `kernel` is inside a handler now (one bound to that kernel, busy,
/// with `id` as its holder). For the kernel's cold paths only (it looks at every handler of
/// the process): an OS-backed thread stopped in place inside a handler must not be left
/// stopped for good, which would keep the handler busy and its callers waiting.
pub(crate) fn holds_a_handler(kernel: KernelId, id: ThreadId) -> bool {
    let word = id.to_word();
    let handlers: Vec<Arc<Inner>> = locked(&HANDLERS).iter().filter_map(Weak::upgrade).collect();
    handlers.iter().any(|h| h.f.owner() == Some(kernel) && h.f.is_busy() && h.holder.load(Ordering::Relaxed) == word)
}

/// The handlers bound to `host`'s kernel whose `flag` is set, the flag cleared in each (one
/// that another settlement cleared first is left out).
fn take_marked(host: &RefCell<dyn HandlerHost + '_>, flag: fn(&Inner) -> &AtomicBool) -> Vec<Arc<Inner>> {
    let kernel = Some(host.borrow().executor());
    let marked = |h: &Arc<Inner>| flag(h).load(Ordering::Acquire) && h.f.owner() == kernel;
    // Filtered outside the list's lock, as at the run's end: a handle dropped here may be a
    // handler's last, and its function's captures may make another handler.
    let handlers: Vec<Arc<Inner>> = locked(&HANDLERS).iter().filter_map(Weak::upgrade).collect();
    handlers.into_iter().filter(|h| marked(h) && flag(h).swap(false, Ordering::AcqRel)).collect()
}

/// The handlers' part of a run's end, however the run ends (an error returns early; the
/// guard settles when dropped): [`settle_at_end`] for this runtime, payloads given back to its
/// pools.
pub(crate) struct AtEnd {
    /// The runtime's kernels: the executors from `first` on.
    first: KernelId,
    kernels: usize,
    payloads: PayloadStores,
    settled: Option<u64>,
}

impl AtEnd {
    pub(crate) fn new(first: KernelId, kernels: usize, payloads: PayloadStores) -> AtEnd {
        AtEnd { first, kernels, payloads, settled: None }
    }

    /// Settle now (once): how many messages the handlers still held.
    pub(crate) fn settle(&mut self) -> u64 {
        let (payloads, first, kernels) = (&self.payloads, self.first, self.kernels);
        *self.settled.get_or_insert_with(|| {
            settle_at_end(first, kernels, |m| {
                if let Some(p) = m.payload {
                    payloads.release(p);
                }
            })
        })
    }
}

impl Drop for AtEnd {
    fn drop(&mut self) {
        self.settle();
    }
}

impl Handler {
    /// Leave the handler, drained, on `cx`'s stack: restore preemption (`tamed`: the setting
    /// before the stay), report NICE, release it, and serve what a thread that took the CPU at
    /// one of those runtime calls queued meanwhile: enter it again (unless another invocation
    /// holds it now, which serves its queue on its way out), drain, leave the same way, until
    /// the queue is found empty with nothing run since the release. A message queued there
    /// would otherwise wait for a next invocation that may never come. An OS-backed thread
    /// always leaves this way: it can be stopped in place between the drain's last look at
    /// the queue and the release, while a thread of its CPU queues a message, and the look
    /// after the release finds it. (The threads of one CPU never run at the same time, and
    /// each stop and resume orders their memory, so a plain look after the release sees
    /// every message queued while this thread was stopped.)
    #[cold]
    #[inline(never)]
    pub(super) fn leave<'h>(
        &'h self,
        mut f: BusyGuard<'h, HandlerFn>,
        cx: &Ctx<'_>,
        nested: bool,
        mut tamed: Option<bool>,
    ) {
        let h = &*self.inner;
        loop {
            if let Some(old) = tamed {
                cx.preemption(old);
            }
            cx.handler_left(h.id);
            drop(f);
            if h.queued.load(Ordering::Acquire) == 0 {
                return;
            }
            let Entry::Entered(again) = h.f.try_enter(cx.executor()) else { return };
            f = again;
            tamed = self.held_by(cx, nested);
            self.drain(&mut f, Via::Thread(cx), nested);
        }
    }
}
