//! The contended unlock's short path: the lock goes straight from the running releaser to
//! its one waiter and the CPU to whom the scheduler picks, in one step that has the same
//! effects, trace records and scheduler calls as the general release and reschedule.
//!
//! Must not: handle any case the general path handles differently: when in doubt it declines,
//! having changed nothing, and `Kernel::release` runs instead.

use crate::clock::Clock;
use crate::kernel::thread_side::protocol::LockAnswer;
use crate::kernel::threads::tcb::{State, Tcb, Wait};
use crate::kernel::Kernel;
use crate::plain::ThreadId;
use crate::plain::{StopReason, TraceKind};
use crate::policy::lock::LockView;
use crate::policy::sched::ReadyReason;

impl<C: Clock> Kernel<C> {
    /// The contended unlock's common case, without the general machinery of
    /// [`Kernel::release`] and of the reschedule that follows it: `id`, running (in slot
    /// `i`), holds only lock `l`; exactly one thread waits, for `l` itself, and it is more
    /// urgent than `id` will be once `l` no longer lends to it; the protocol does not raise
    /// its holder and neither thread is in a thread set. The lock goes straight to the waiter
    /// and the CPU goes to whom the scheduler picks, with the same effects, trace records and
    /// scheduler calls, in the same order, as `release` and `reschedule` make (the scheduler's
    /// three calls and pick fused in [`Scheduler::on_handed_over`]); each thread's
    /// [`SchedInfo`] is borrowed from its control block. Returns false, having changed
    /// nothing, when the case does not apply.
    ///
    /// [`Scheduler::on_handed_over`]: crate::policy::sched::Scheduler::on_handed_over
    pub(in crate::kernel) fn hand_off(&mut self, id: ThreadId, i: usize, l: usize) -> bool {
        let lock = &self.sync.locks[l];
        if lock.waiters.len() != 1 || lock.raises_holder || lock.poisoned {
            return false;
        }
        let w = lock.waiters[0];
        let Some(wi) = self.local(w) else { return false };
        let t = self.table.slots[i].as_ref().expect("live slot");
        let Some(c) = self.cpu_local(t.cpu) else { return false };
        let cpu = &self.cpus[c];
        if t.held.len() != 1
            || t.global.is_some()
            || !t.preemptible
            || t.exiting
            || t.demoted
            || t.set.is_some()
            || cpu.current != Some(id)
            || cpu.preempt
            || cpu.requeue_current
            // A timer due now fires before the general path's reschedule: a release at the
            // instant of the unlock is recorded before the releaser stops.
            || self.timer_due()
        {
            return false;
        }
        // What `id` runs at once `l` lends it nothing (see `update_effective`).
        let released_urgency = t.base_urgency;
        let heir = self.table.slots[wi].as_ref().expect("live slot");
        if heir.wants != Some(l as u32)
            || !matches!(heir.state, State::Blocked(Wait::Lock(x)) if x as usize == l)
            || heir.set.is_some()
            || heir.urgency() <= released_urgency
        {
            return false;
        }
        let restartable = heir.wants_restartable;
        let lock = &self.sync.locks[l];
        let ceiling = self.ceiling_now(l);
        if !lock.acquire_decides_nothing {
            let free = LockView {
                ceiling,
                owner: None,
                system_ceiling: self.system_ceiling_except(w, lock.cpu, l).map(|(u, _)| u),
            };
            if !self.ask_lock(l, |p| p.may_acquire(&heir.sched, &free)) {
                return false;
            }
        }

        // Commit. Both control blocks, the CPU and the lock are borrowed once, side by side;
        // the effects, trace records and scheduler calls are those `release` and
        // `reschedule` make, in the same order.
        let (now, costs, accounting) = (self.now, self.costs, self.exec.accounting);
        let Some((t, heir)) = slot_pair(&mut self.table.slots, i, wi) else { return false };
        let cpu = &mut self.cpus[c];
        let mut trace_seq = self.tracing.then_some(&mut self.trace_seq);

        // The releaser gives up the lock and what it lent.
        t.held.clear();
        t.inherited = None;
        let lowered_from = t.sched.urgency;
        t.sched.urgency = released_urgency;
        let lowered = released_urgency != lowered_from;
        if let Some(seq) = trace_seq.as_deref_mut() {
            cpu.record(seq, now, TraceKind::LockReleased, id, t.job.number, l as u64);
            if lowered {
                cpu.record(seq, now, TraceKind::Inherit, id, t.job.number, released_urgency.0 as u64);
            }
        }

        // The heir owns the lock and is ready.
        let lock = &mut self.sync.locks[l];
        self.sync.ceilings_held -= u32::from(lock.clear_owner());
        lock.waiters.clear();
        if let Some(seq) = trace_seq.as_deref_mut() {
            cpu.record(seq, now, TraceKind::LockAcquired, w, heir.job.number, l as u64);
        }
        self.sync.ceilings_held += u32::from(lock.set_owner(w, ceiling));
        lock.publish_owner(w);
        lock.restartable = restartable;
        heir.held.push(l as u32);
        heir.paid_block_cost = false;
        heir.set_answer(LockAnswer::Granted);
        heir.end_wait(&mut self.timers);
        heir.wants = None;
        heir.state = State::Ready;
        if !costs.lock_acquired.is_zero() {
            heir.add_overhead(costs.lock_acquired);
        }

        if !lowered {
            // The releaser kept its urgency: the heir preempts it if the policy says so, at
            // the reschedule.
            cpu.scheduler.on_ready(&heir.sched, ReadyReason::Woken);
            cpu.preempt |= cpu.scheduler.should_preempt(&t.sched, &heir.sched);
            return true;
        }
        // The releaser lost urgency: it is offered the CPU back whatever `should_preempt`
        // would say, as `reschedule` does for a running thread that lost urgency. The
        // scheduler learns of the lowering in the same call.
        match cpu.scheduler.on_handed_over(&heir.sched, &t.sched, lowered_from, now) {
            Some(next) if next == id => {}
            Some(next) if next == w => {
                Self::preempt_tcb(cpu, c, t, heir, &mut self.timers, trace_seq, now, accounting, costs.context_switch);
            }
            next => {
                self.stop_running(c, StopReason::Preempted);
                self.table.slots[i].as_mut().expect("live slot").state = State::Ready;
                if let Some(n) = next {
                    // A wrong pick stops the run; the loop sees it.
                    let _ = self.dispatch_picked(c, n);
                }
            }
        }
        true
    }
}

/// The control blocks in slots `i` and `k` (distinct), borrowed side by side.
#[inline(always)]
pub(in crate::kernel) fn slot_pair(slots: &mut [Option<Tcb>], i: usize, k: usize) -> Option<(&mut Tcb, &mut Tcb)> {
    let (a, b) = match i.cmp(&k) {
        std::cmp::Ordering::Less => {
            let (low, high) = slots.split_at_mut(k);
            (&mut low[i], &mut high[0])
        }
        std::cmp::Ordering::Greater => {
            let (low, high) = slots.split_at_mut(i);
            (&mut high[0], &mut low[k])
        }
        std::cmp::Ordering::Equal => return None,
    };
    Some((a.as_mut()?, b.as_mut()?))
}
