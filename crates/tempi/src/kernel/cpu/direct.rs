//! The direct thread-to-thread switch: a yield or a message request handled on the
//! requesting thread's own stack, which then switches straight to the next thread.
//!
//! On a kernel of one CPU without a global policy, the dispatcher resumes a thread hosted
//! (`os::context::resume_hosted`). When the thread suspends with a yield or a message
//! request (a call, a reply, a read, a fused reply and read: `Ctx::exchange` picks the
//! hosted suspend for those only), the kernel runs on the thread's stack
//! ([`Host::on_suspend`]) and does there exactly what the dispatcher would do next, in the
//! same order:
//!
//! 1. the request's handling, as `after_resume` makes it (for a yield, `handle_yield`: the
//!    stop, the accounting, the policy's fused yield-and-pick, the dispatch of the pick);
//! 2. for a message request that left the CPU empty (a call that blocks the caller) or a
//!    preemption pending (a reply that wakes a more urgent caller), and only when nothing
//!    else is due ([`Kernel::nothing_due`]: one CPU, no post, no timer due, no execution-time
//!    event watched, no lowered urgency to re-check, no end or halt): the run loop's next
//!    step, `reschedule`, the very function the run loop calls. Under context-switch costs
//!    no thread is resumed hosted at all ([`Kernel::hosted`]): the switch's cost is paid as
//!    `work` first, which only the run loop lets pass;
//! 3. the test the dispatcher's `Kernel::resume` makes before resuming a thread without going
//!    back to the run loop ([`Kernel::continuation`]: nothing due, the current thread stays
//!    current, no `work` left), then that thread's response (`prepare_resume`). Right after a
//!    thread switch made once nothing was found due (steps 1 or 2, or a call or a reply that
//!    handed the CPU over in step 1: `messaging/short_path.rs`), only the timers are tested again
//!    ([`Kernel::continuation_after_switch`]): the switch may have armed the dispatched
//!    thread's time slice, and nothing else it does can make something due.
//!
//! The thread then switches straight to the next one (one stack switch instead of two), or
//! goes on at once when it is the next one itself. Whenever the run loop must act (something
//! due, `work` left, a switch cost, a failure), or the next thread is one the dispatcher
//! resumes itself (not started yet, OS-backed), the thread goes back to the dispatcher with
//! its request already handled, and the dispatcher carries on from that point. Other
//! requests go to the dispatcher unhandled, as before.
//!
//! The kernel is reached on the thread's stack through the pointer the dispatcher derived
//! from its own `&mut Kernel` for this resume; no reference to the kernel is alive across a
//! switch (the dispatcher's is suspended below it, and the thread's lives only while the
//! kernel code runs). A panic of the kernel's code there (a policy's, a handler's) is caught
//! on the thread's stack and raised again in the dispatcher, as if it had happened there.
//!
//! Must not: do anything on a thread's stack the dispatcher would not do at that point, in
//! the same order (virtual-time traces are the same either way:
//! `tests/kernel/direct_switch_properties.rs`).

use crate::clock::Clock;
use crate::kernel::thread_side::protocol::{Op, Request, Response};
use crate::kernel::Kernel;
use crate::os::context::{Host, Next};
use crate::plain::ThreadId;

/// The thread resumed last, whose step the dispatcher gets back: its CPU, id and slot, and
/// whether an aborted section's restart waited for its next call when it was resumed.
#[derive(Clone, Copy)]
pub(in crate::kernel) struct Resumed {
    pub(in crate::kernel) c: usize,
    pub(in crate::kernel) id: ThreadId,
    pub(in crate::kernel) i: usize,
    pub(in crate::kernel) restart_waits: bool,
}

impl Resumed {
    /// Before any resume.
    pub(in crate::kernel) fn none() -> Resumed {
        Resumed { c: 0, id: ThreadId::new(0, 0), i: 0, restart_waits: false }
    }
}

impl<C: Clock> Host<Response, Request> for Kernel<C> {
    #[inline]
    fn on_suspend(&mut self, request: &Request) -> Next<Response> {
        let Resumed { c, id, i, restart_waits } = self.resumed;
        // As `after_resume` handles them.
        match *request {
            Request::Op(Op::Yield) if !restart_waits => {
                self.refresh_now();
                let switched = self.handle_yield(c, i);
                if self.verify {
                    self.verify_urgencies();
                }
                // `handle_yield` made the thread switch when nothing is due.
                return self.next_from_thread::<false>(c, id, switched);
            }
            Request::Op(Op::Msg(op)) => {
                self.refresh_now();
                // `handle`'s arm for messages, without its dispatch on the request kind.
                self.switched_in_request = false;
                if !restart_waits || !self.restart_answers(id, &Op::Msg(op)) {
                    self.handle_msg(c, id, op);
                }
            }
            _ => return Next::Resumer,
        }
        if self.verify {
            self.verify_urgencies();
        }
        // A call or a reply that handed the CPU over made the switch with nothing due.
        self.next_from_thread::<true>(c, id, self.switched_in_request)
    }

    #[inline(always)]
    fn discard(request: Request) {
        // A plain request has no drop glue: only a boxed one is dropped, out of line.
        if let Request::Setup(owned) = request {
            drop(owned);
        }
    }
}

impl<C: Clock> Kernel<C> {
    /// On the stack of thread `from`, whose request on CPU `c` was just handled: what the
    /// dispatcher's `resume` loop would do next, made here when it is to resume a thread.
    /// `switched`: a thread switch was just made with nothing due (a yield's).
    #[inline]
    fn next_from_thread<const SWITCH: bool>(&mut self, c: usize, from: ThreadId, mut switched: bool) -> Next<Response> {
        loop {
            let cpu = &self.cpus[c];
            if SWITCH && (cpu.preempt || cpu.current.is_none()) && self.nothing_due(c) {
                // The run loop's next step is this thread switch (`reschedule`), made here
                // with the same call (switch costs, which the run loop must pay, never reach
                // here: `Kernel::hosted`).
                if self.failed.is_some() {
                    return Next::Handled;
                }
                self.reschedule(c);
                if self.failed.is_some() {
                    return Next::Handled;
                }
                switched = true;
            }
            // Right after a thread switch made with nothing due, only what the switch may
            // have changed is checked again.
            let then = if switched { self.continuation_after_switch(c) } else { self.continuation(c) };
            switched = false;
            let Some((next, j)) = then else { return Next::Handled };
            let t = self.table.slots[j].as_ref().expect("live slot");
            // Not started yet, or on an OS thread of its own: the dispatcher resumes it.
            let co = match (&t.coroutine, &t.worker) {
                (Some(co), None) => co.handle(),
                _ => return Next::Handled,
            };
            // `None`: it must not be resumed now (a more urgent thread takes over first);
            // the dispatcher's loop would ask the continuation again, and so does this one.
            if let Some(response) = self.prepare_resume(c, next, j) {
                if next == from {
                    return Next::Same(response);
                }
                self.direct_switches += 1;
                return Next::Switch(co, response);
            }
        }
    }
}
