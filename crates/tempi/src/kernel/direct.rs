//! The direct thread-to-thread switch: a yield handled on the yielding thread's own stack,
//! which then switches straight to the next thread.
//!
//! On a kernel of one CPU without a global policy, the dispatcher resumes a thread hosted
//! (`os::context::resume_hosted`): when the thread suspends, the kernel runs on the thread's
//! stack ([`Host::on_suspend`]). For a yield it does there exactly what the dispatcher would
//! do next: the request's handling (`handle_yield`: the stop, the accounting, the policy's
//! fused yield-and-pick, the dispatch of the pick), then the same test the dispatcher's
//! `Kernel::resume` makes before resuming a thread without going back to the run loop
//! ([`Kernel::continuation`]: nothing due, the CPU's current thread stays current, no `work`
//! left), then the preparation of that thread's response (`prepare_resume`). The yielding
//! thread then switches straight to the next one (one stack switch instead of two), or goes
//! on at once when it is picked again. Whenever the continuation says the run loop must act
//! (a timer due, a preemption or an empty CPU, `work` left, switch costs to pay, the end of
//! the run), or the next thread is resumed only by the dispatcher (not started yet,
//! OS-backed), the thread goes back to the dispatcher with its request already handled.
//! Other requests go to the dispatcher unhandled, as before.
//!
//! The kernel is reached on the thread's stack through the pointer the dispatcher derived
//! from its own `&mut Kernel` for this resume; no reference to the kernel is alive across a
//! switch (the dispatcher's is suspended below it, and the thread's lives only while the
//! kernel code runs). A panic of the kernel's code there (a policy's) is caught on the
//! thread's stack and raised again in the dispatcher, as if it had happened there.
//!
//! Must not: do anything on a thread's stack the dispatcher would not do at that point, in
//! the same order (virtual-time traces are the same either way).

use super::protocol::{Plain, Request, Response};
use super::Kernel;
use crate::clock::Clock;
use crate::os::context::{Host, Next};
use crate::thread::ThreadId;

/// The thread resumed last, whose step the dispatcher gets back: its CPU, id and slot, and
/// whether an aborted section's restart waited for its next call when it was resumed.
#[derive(Clone, Copy)]
pub(super) struct Resumed {
    pub(super) c: usize,
    pub(super) id: ThreadId,
    pub(super) i: usize,
    pub(super) restart_waits: bool,
}

impl Resumed {
    /// Before any resume.
    pub(super) fn none() -> Resumed {
        Resumed { c: 0, id: ThreadId::new(0, 0), i: 0, restart_waits: false }
    }
}

impl<C: Clock> Host<Response, Request> for Kernel<C> {
    #[inline]
    fn on_suspend(&mut self, request: Request) -> Next<Response, Request> {
        let Resumed { c, id, i, restart_waits } = self.resumed;
        match request {
            Request::Plain(Plain::Yield) if !restart_waits => {
                self.refresh_now();
                self.handle_yield(c, i);
                if self.verify {
                    self.verify_urgencies();
                }
                self.next_from_thread(c, id)
            }
            request => Next::Resumer(request),
        }
    }
}

impl<C: Clock> Kernel<C> {
    /// On the stack of thread `from`, whose request on CPU `c` was just handled: what the
    /// dispatcher's `resume` loop would do next, made here when it is to resume a thread.
    #[inline]
    fn next_from_thread(&mut self, c: usize, from: ThreadId) -> Next<Response, Request> {
        loop {
            let Some((next, j)) = self.continuation(c) else { return Next::Handled };
            let t = self.slots[j].as_ref().expect("live slot");
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
