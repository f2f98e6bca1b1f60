//! Global locks under MSRP: the locks shared by threads of several CPUs.
//!
//! Owns the kernel's side of a global lock: making its requester non-preemptible (it is lent
//! the highest urgency from its request to its release, see `lending.rs`), the FIFO order of
//! the requests, the spinning, the release, the refusal of waits inside a global section, and
//! releasing what an ending thread still holds. The lock's state is a FIFO ticket lock in
//! shared memory ([`GlobalLock`]), which every kernel of the run reaches through the same
//! `Arc`; locking allocates nothing.
//!
//! - **Virtual time.** One kernel drives every CPU on one OS thread, so a thread cannot spin
//!   in its own code (the holder would never run). The kernel keeps the order instead: the
//!   owner word and a queue of spinners sized at start-up. A spinner stays the running thread
//!   of its CPU, consuming CPU time exactly as `work` does (with no end of its own): the time
//!   is charged to its clocks and budgets and counted in `ThreadStats::spin_time`, the trace
//!   shows a `spin` record at its start and `lock` when it ends. The release hands the lock
//!   to the first spinner, whose spin ends at that instant.
//! - **Real time.** Each CPU's dispatcher runs its own kernel, so the lock lives in the
//!   shared atomics only. The request makes the thread non-preemptible on its kernel, then the
//!   thread takes its ticket and spins on the lock's words in its own code
//!   (`std::hint::spin_loop`), keeping its dispatcher: no other coroutine of that CPU runs
//!   meanwhile, which is exactly MSRP's non-preemptive spinning. This is sound because no
//!   coroutine moves to another OS thread and no thread waits while holding (every wait is
//!   refused inside a global section, and nesting global locks too), so each holder runs
//!   until it releases, and a spin lasts at most one critical section per other CPU. The
//!   thread releases the ticket itself (also while unwinding), then tells its kernel. A
//!   thread that spun reports the spin's start and end through its mail cell; its kernel
//!   traces them (`spin`, `lock`) and counts the spin in `ThreadStats::spin_time` at the
//!   release, when it next hears from the thread.
//! - **Trace order (real time).** The kernel hears of a release only after the thread has
//!   served the next ticket, when another CPU's thread may already hold the lock: the
//!   kernel's clock would put the release after that acquisition. In a traced run the holder
//!   therefore fixes its records' instants itself, in the lock's shared `stamp`: its
//!   acquisition when it got the lock (never earlier than 1 ns after the release before it),
//!   its release before it serves the ticket; the unlock request carries both to the kernel.
//!   A `try_lock`, answered by the kernel, is stamped the same way. So a lock's records
//!   alternate holder by holder, in time order, whatever the CPUs' clocks (see the `trace`
//!   module).
//!
//! Must not: touch CPU-local locks, condition variables or semaphores (`locks.rs`,
//! `waits.rs`), or pick threads other than through the dispatch functions.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::clock::{Clock, ClockMode};
use crate::kernel::thread_side::protocol::LockAnswer;
use crate::kernel::Kernel;
use crate::objects::{GlobalLock, LockError};
use crate::plain::ThreadId;
use crate::plain::TraceKind;
use crate::time::Time;

/// A spin has no demand of its own: it lasts until the lock is handed over.
const SPIN_DEMAND: u64 = u64::MAX / 4;

/// A kernel's handle on one global lock.
pub(crate) struct GlobalSlot {
    pub(in crate::kernel) lock: Arc<GlobalLock>,
    /// Virtual time: the threads spinning for it, in the order of their requests.
    pub(in crate::kernel) spinners: VecDeque<ThreadId>,
}

impl GlobalSlot {
    pub(in crate::kernel) fn new(lock: Arc<GlobalLock>, capacity: usize) -> Result<GlobalSlot, crate::Error> {
        let spinners =
            crate::sizes::deque_with_capacity(capacity, "the spinners of a global lock (Config::max_threads)")?;
        Ok(GlobalSlot { lock, spinners })
    }
}

impl<C: Clock> Kernel<C> {
    /// Thread `id`, running on CPU `c`, asks for global lock `g`. Returns the answer, or
    /// `None` when the thread now spins (virtual time; it is answered when the lock is
    /// handed to it).
    pub(crate) fn global_lock_request(&mut self, c: usize, id: ThreadId, g: u32, try_only: bool) -> Option<LockAnswer> {
        let Some(slot) = self.sync.globals.get(g as usize) else {
            return Some(LockAnswer::Refused(LockError::ForeignRuntime));
        };
        let lock = slot.lock.clone();
        match self.tcb(id).global {
            Some(h) if h == g => return Some(LockAnswer::Refused(LockError::AlreadyHeld)),
            Some(_) => return Some(LockAnswer::Refused(LockError::GlobalHeld)),
            None => {}
        }
        let word = id.to_word();
        if C::MODE == ClockMode::Real {
            if try_only {
                if lock.try_take().is_none() {
                    return Some(LockAnswer::Refused(LockError::WouldBlock));
                }
                lock.owner.store(word, Ordering::Relaxed);
                self.enter_global(id, g);
                if self.tracing {
                    // Now, or just after the release it follows if another CPU's clock put
                    // that release later.
                    let at = lock.stamp_acquired(self.now);
                    self.trace_thread_at(id, at, TraceKind::LockAcquired, u64::from(lock.id().0));
                }
                return Some(LockAnswer::Granted);
            }
            // The thread takes its ticket and spins in its own code; its acquisition (and its
            // spin, if any) are traced at the release, with the instants it reports then.
            self.enter_global(id, g);
            self.tcb(id).spin_since = Some(self.now);
            return Some(LockAnswer::Spin);
        }
        let free = lock.owner.load(Ordering::Relaxed) == 0;
        if !free && try_only {
            return Some(LockAnswer::Refused(LockError::WouldBlock));
        }
        self.enter_global(id, g);
        if free {
            lock.owner.store(word, Ordering::Relaxed);
            self.trace_thread(id, TraceKind::LockAcquired, u64::from(lock.id().0));
            return Some(LockAnswer::Granted);
        }
        self.sync.globals[g as usize].spinners.push_back(id);
        self.trace_thread(id, TraceKind::Spin, u64::from(lock.id().0));
        let now = self.now;
        let t = self.tcb(id);
        t.spin_since = Some(now);
        t.set_answer(LockAnswer::Granted);
        t.work_left = SPIN_DEMAND;
        t.in_work = true;
        self.cpus[c].work_mark = now;
        None
    }

    /// `id` becomes non-preemptible for global lock `g`.
    fn enter_global(&mut self, id: ThreadId, g: u32) {
        self.tcb(id).global = Some(g);
        self.recompute_lent(id);
    }

    /// Thread `id` releases global lock `g` and becomes preemptible again. In real time it
    /// has already served the next ticket, and `acquired` and `released` are the instants it
    /// fixed for its `lock` and `unlock` records before it did (`GlobalLock::stamp_release`):
    /// the kernel hears of the release only after another CPU may have taken the lock, so
    /// its own clock would put this release after that acquisition. Virtual time ignores
    /// them: one kernel writes every record, in causal order, at its instant.
    pub(crate) fn global_unlock(&mut self, id: ThreadId, g: u32, acquired: Time, released: Time) {
        if self.tcb(id).global != Some(g) {
            // The guard API makes this unreachable; a stray request changes nothing.
            return;
        }
        let lock = self.sync.globals[g as usize].lock.clone();
        if C::MODE == ClockMode::Real {
            self.trace_real_acquisition(id, u64::from(lock.id().0), acquired);
            if self.tracing {
                self.trace_thread_at(id, released, TraceKind::LockReleased, u64::from(lock.id().0));
            }
        } else {
            self.trace_thread(id, TraceKind::LockReleased, u64::from(lock.id().0));
            self.hand_global_on(g);
        }
        self.tcb(id).global = None;
        self.recompute_lent(id);
    }

    /// Real time: `id`, releasing global lock `lock`, took it at `acquired` without the
    /// kernel seeing (it took its ticket, and spun if need be, in its own code): trace its
    /// spin, if it spun (`spin` at the spin's start, lasting until `acquired`, counted in
    /// `ThreadStats::spin_time`), and its acquisition (`lock` at `acquired`). Nothing for a
    /// lock taken with `try_lock`, whose acquisition was traced when it was answered. Untraced,
    /// `acquired` is zero, and the spin counts until the end the thread read.
    fn trace_real_acquisition(&mut self, id: ThreadId, lock: u64, acquired: Time) {
        let tracing = self.tracing;
        let t = self.tcb(id);
        // A `try_lock` was traced when it was answered.
        if t.spin_since.take().is_none() {
            return;
        }
        if let Some((since, until)) = t.mail.spun.take() {
            // Traced, `acquired` is the spin's end, or just after the release it waited for.
            t.stats.spin_time += acquired.max(until) - since;
            if tracing {
                self.trace_thread_at(id, since, TraceKind::Spin, lock);
            }
        }
        if tracing {
            self.trace_thread_at(id, acquired, TraceKind::LockAcquired, lock);
        }
    }

    /// Virtual time: the owner of global lock `g` lets go; the first spinner gets it now.
    fn hand_global_on(&mut self, g: u32) {
        let slot = &mut self.sync.globals[g as usize];
        let next = slot.spinners.pop_front();
        let lock = slot.lock.clone();
        lock.owner.store(next.map_or(0, ThreadId::to_word), Ordering::Relaxed);
        let Some(w) = next else { return };
        let now = self.now;
        let t = self.tcb(w);
        let spun = t.spin_since.take().map_or(std::time::Duration::ZERO, |s| now - s);
        t.stats.spin_time += spun;
        // The spin ends: the waiter is resumed at this instant with its `Granted`.
        t.work_left = 0;
        self.trace_thread(w, TraceKind::LockAcquired, u64::from(lock.id().0));
    }

    /// A thread ends, or its job ends with a global lock still held (a leaked guard): release
    /// it, as the guard would have.
    pub(crate) fn release_global(&mut self, id: ThreadId) {
        let Some(g) = self.tcb(id).global else { return };
        let lock = self.sync.globals[g as usize].lock.clone();
        let word = id.to_word();
        if C::MODE == ClockMode::Real {
            if lock.owner.load(Ordering::Relaxed) != word {
                // The thread served the next ticket itself, while unwinding, but the run
                // stopped before its deferred release reached the kernel: the instants it
                // fixed are lost, and records stamped now could come after another CPU's
                // next acquisition, so this ownership is left out of the trace.
                let t = self.tcb(id);
                t.spin_since = None;
                t.mail.spun.set(None);
                t.global = None;
                self.recompute_lent(id);
                return;
            }
            // Stamped before the next ticket is served, as the guard does.
            let (acquired, released) =
                if self.tracing { lock.stamp_release(self.now) } else { (Time::ZERO, Time::ZERO) };
            lock.serve_next();
            self.global_unlock(id, g, acquired, released);
            return;
        } else if lock.owner.load(Ordering::Relaxed) != word {
            // Still spinning (it is being torn down): it leaves the queue.
            self.sync.globals[g as usize].spinners.retain(|&w| w != id);
            self.tcb(id).spin_since = None;
            self.tcb(id).global = None;
            self.recompute_lent(id);
            return;
        }
        self.global_unlock(id, g, Time::ZERO, Time::ZERO);
    }

    /// Whether `id` is inside a global section, where it may not wait.
    #[inline]
    pub(crate) fn in_global(&mut self, id: ThreadId) -> bool {
        self.tcb(id).global.is_some()
    }
}
