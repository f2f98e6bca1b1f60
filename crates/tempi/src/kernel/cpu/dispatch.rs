//! Dispatch and state transitions: urgency (base, lent, effective), readying, waking,
//! stopping and dispatching threads, simulated overheads, and carrying out a preemption.
//!
//! # Preemption off
//!
//! A running thread may switch its own preemption off (`Ctx::preemption(false)`). While it is
//! off, a preemption decided for its CPU (a more urgent thread became ready, or the thread
//! lost urgency) is not carried out: [`Kernel::reschedule`] marks it held back on the thread
//! instead, and the end of its time slice is held back the same way (the slice timer). Both
//! are carried out the moment the thread switches preemption back on
//! ([`Kernel::set_preemption`]): a held-back preemption puts the thread back in the queue and
//! lets the policy choose who runs, an expired slice rotates it to the end of its queue; a
//! `PreemptionDeferred` trace record marks the instant. If the thread gives up the CPU first
//! (it blocks, sleeps, yields, ends its job or the thread), what was held back is moot and
//! dropped; the setting itself stays with the thread. A budget's action is not held back: a
//! thread whose set's budget demotes it loses the CPU as usual, and a suspend or a kill takes
//! effect as always.
//!
//! Must not: decide who runs (the CPU's scheduler does), or know what a thread asked for.

use std::time::Duration;

use crate::clock::Clock;
use crate::error::Error;
use crate::kernel::threads::tcb::{State, Tcb};
use crate::kernel::timing::timers::{TimerKind, TimerQueue};
use crate::kernel::{Cpu, Kernel};
use crate::plain::ThreadId;
use crate::plain::{StopReason, TraceKind};
use crate::policy::sched::{ReadyReason, Urgency};
use crate::sets::Accounting;
use crate::time::Time;

impl<C: Clock> Kernel<C> {
    // ----- urgency ---------------------------------------------------------------------------

    /// Recompute a thread's base urgency (its policy's view of its attributes and current job)
    /// and its effective urgency; tell the scheduler and re-check preemption if it changed.
    pub(in crate::kernel) fn refresh_urgency(&mut self, id: ThreadId) {
        let i = self.local(id).expect("live thread");
        let t = self.table.slots[i].as_ref().expect("live slot");
        let c = self.cpu_local(t.cpu).expect("thread on this kernel");
        let scheduler = &self.cpus[self.sched_of(c)].scheduler;
        let base = match t.set.and_then(|_| self.server_deadline(id)) {
            Some(d) => scheduler.served_urgency(&t.sched, d),
            None => scheduler.base_urgency(&t.sched),
        };
        self.table.slots[i].as_mut().expect("live slot").base_urgency = base;
        self.update_effective_at(i);
    }

    /// Lend (or with `None`, withdraw) urgency to a thread: what inheritance protocols use.
    /// The effective urgency becomes the larger of base and lent.
    pub(crate) fn set_inherited(&mut self, id: ThreadId, lent: Option<Urgency>) {
        self.tcb(id).inherited = lent;
        self.update_effective(id);
    }

    pub(in crate::kernel) fn update_effective(&mut self, id: ThreadId) {
        self.update_effective_at(self.local(id).expect("live thread"));
    }

    /// [`Kernel::update_effective`] of the thread in slot `i`.
    pub(in crate::kernel) fn update_effective_at(&mut self, i: usize) {
        let t = self.table.slots[i].as_mut().expect("live slot");
        let old = t.sched.urgency;
        let new = if t.demoted {
            // Background: below every thread that is not demoted, under any policy that orders
            // by urgency.
            Urgency::DEMOTED
        } else {
            t.inherited.map_or(t.base_urgency, |u| u.max(t.base_urgency))
        };
        if new == old {
            return;
        }
        t.sched.urgency = new;
        let (id, state, cpu) = (t.id, t.state, t.cpu);
        let c = self.cpu_local(cpu).expect("thread on this kernel");
        let current = self.cpus[c].current;
        let running = match (state, current) {
            (State::Ready, Some(r)) if !self.cpus[c].preempt => Some(self.local(r).expect("live thread")),
            _ => None,
        };
        if self.global {
            self.global_urgency_changed(i, old);
            return;
        }
        let info = &self.table.slots[i].as_ref().expect("live slot").sched;
        let cpu = &mut self.cpus[c];
        // Only a ready or running thread is the scheduler's business: one that is dormant,
        // asleep, blocked or held is shown its urgency again when it becomes ready, and a
        // release changes the urgency of a dormant thread at every job.
        if matches!(state, State::Ready | State::Running) {
            cpu.scheduler.on_urgency_changed(info, old);
        }
        match (state, current, running) {
            // A queued thread became more urgent than the running one.
            (State::Ready, _, Some(ri)) if !cpu.preempt => {
                let running = &self.table.slots[ri].as_ref().expect("live slot").sched;
                if cpu.scheduler.should_preempt(running, info) {
                    cpu.preempt = true;
                }
            }
            // The running thread became less urgent: the scheduler decides whether the best
            // queued thread takes over; the kernel asks it by offering a yield-free re-check.
            (State::Running, Some(r), _) if r == id && new < old => {
                cpu.preempt = true;
                cpu.requeue_current = true;
            }
            _ => {}
        }
    }

    // ----- state transitions -----------------------------------------------------------------

    pub(in crate::kernel) fn make_ready(&mut self, id: ThreadId, why: ReadyReason) {
        let i = self.local(id).expect("live thread");
        self.make_ready_at(i, id, why);
    }

    /// [`Kernel::make_ready`] of thread `id`, whose slot `i` the caller has at hand.
    #[inline]
    pub(in crate::kernel) fn make_ready_at(&mut self, i: usize, id: ThreadId, why: ReadyReason) {
        if self.table.slots[i].as_ref().expect("live slot").set.is_some() && self.member_ready(id) {
            self.tcb(id).state = State::Held;
            return;
        }
        let t = self.table.slots[i].as_mut().expect("live slot");
        t.state = State::Ready;
        let cpu = t.cpu;
        if self.global {
            let info = &self.table.slots[i].as_ref().expect("live slot").sched;
            self.cpus[0].scheduler.on_ready(info, why);
            self.global_offer(i);
            return;
        }
        let c = self.cpu_local(cpu).expect("thread on this kernel");
        let running = match self.cpus[c].current {
            Some(r) if r != id && !self.cpus[c].preempt => Some(self.local(r).expect("live thread")),
            _ => None,
        };
        let info = &self.table.slots[i].as_ref().expect("live slot").sched;
        let cpu = &mut self.cpus[c];
        cpu.scheduler.on_ready(info, why);
        if let Some(ri) = running
            && !cpu.preempt
        {
            let running = &self.table.slots[ri].as_ref().expect("live slot").sched;
            if cpu.scheduler.should_preempt(running, info) {
                cpu.preempt = true;
            }
        }
    }

    /// `id`'s sleep or wait ends: its timer is cancelled.
    pub(crate) fn end_wait(&mut self, id: ThreadId) {
        let i = self.local(id).expect("live thread");
        self.table.slots[i].as_mut().expect("live slot").end_wait(&mut self.timers);
    }

    /// Arm the timer that ends `id`'s sleep or bounded wait.
    pub(crate) fn arm_wait_timer(&mut self, id: ThreadId, at: Time, kind: TimerKind) {
        let h = self.timers.push(at, kind);
        self.tcb(id).wait_timer = h;
    }

    pub(in crate::kernel) fn wake(&mut self, id: ThreadId) {
        self.leave_lock_wait(id);
        self.leave_queue_wait(id);
        self.end_wait(id);
        self.trace_thread(id, TraceKind::Wake, 0);
        self.make_ready(id, ReadyReason::Woken);
    }

    /// Take the current thread of CPU `c` off the CPU, charging its CPU time.
    pub(in crate::kernel) fn stop_running(&mut self, c: usize, reason: StopReason) {
        let Some(id) = self.cpus[c].current else { return };
        let i = self.local(id).expect("the running thread is live");
        self.stop_running_at(c, i, reason);
    }

    /// [`Kernel::stop_running`] for a caller that has the running thread's slot `i` at hand
    /// (the request path): the control block is not looked up again.
    #[inline(always)]
    pub(in crate::kernel) fn stop_running_at(&mut self, c: usize, i: usize, reason: StopReason) {
        self.charge_at(c, i);
        let Some(id) = self.cpus[c].stop() else { return };
        let t = self.table.slots[i].as_mut().expect("live slot");
        debug_assert_eq!(t.id, id, "slot {i} holds the running thread");
        // Leaving the CPU makes what was held back by preemption being off moot.
        t.preempt_deferred = false;
        t.slice_deferred = false;
        if reason == StopReason::Preempted {
            t.stats.preemptions += 1;
        }
        let in_set = t.set.is_some();
        self.trace_thread(id, TraceKind::Stop, reason as u64);
        let goes_idle = !matches!(reason, StopReason::Preempted | StopReason::Yielded | StopReason::SliceExpired);
        if goes_idle && in_set {
            // Callers set the real state next; idle is what the set's server must see now.
            self.table.slots[i].as_mut().expect("live slot").state = State::Dormant;
            self.member_idle(id);
        }
    }

    /// Dispatch the thread in slot `i` on CPU `c`.
    pub(in crate::kernel) fn dispatch_at(&mut self, c: usize, i: usize) {
        let t = self.table.slots[i].as_mut().expect("live slot");
        let seq = self.tracing.then_some(&mut self.trace_seq);
        Self::dispatch_tcb(&mut self.cpus[c], c, t, &mut self.timers, seq, self.now, self.costs.context_switch);
    }

    /// Dispatch `t` on `cpu` (local index `c`) at `now`: its state, the CPU's bookkeeping,
    /// the trace record (numbered from `trace_seq` when tracing), the context-switch cost,
    /// the time slice. Takes the parts of the kernel it needs, so that a caller holding
    /// other parts (the lock hand-off) dispatches the same way.
    #[inline(always)]
    pub(in crate::kernel) fn dispatch_tcb(
        cpu: &mut Cpu,
        c: usize,
        t: &mut Tcb,
        timers: &mut TimerQueue,
        trace_seq: Option<&mut u32>,
        now: Time,
        context_switch: Duration,
    ) {
        t.state = State::Running;
        if !t.job_ran && t.job_active {
            t.job_first_runs(now);
        }
        let switched = cpu.start(t.id, now);
        if let Some(seq) = trace_seq {
            cpu.record(seq, now, TraceKind::Run, t.id, t.job.number, 0);
        }
        if switched && !context_switch.is_zero() {
            // The CPU's work mark is `now` already: the cost is consumed from here.
            t.add_overhead(context_switch);
        }
        if cpu.sliced {
            // The previous dispatch's slice is over either way.
            if let Some(h) = cpu.slice_timer.take() {
                timers.cancel(h);
            }
            if let Some(q) = cpu.scheduler.time_slice(&t.sched) {
                cpu.slice_timer = timers.push(now + q, TimerKind::SliceEnd(c, cpu.slice_token));
            }
        }
    }

    /// [`Kernel::stop_running_at`] for the running `t`, in no thread set, on `cpu` at `now`,
    /// for a short path that holds its control block: the accounting, the CPU's bookkeeping,
    /// what preemption-off held back, the count and the trace record. The caller sets its
    /// state.
    #[inline(always)]
    pub(in crate::kernel) fn stop_tcb(
        cpu: &mut Cpu,
        t: &mut Tcb,
        trace_seq: Option<&mut u32>,
        now: Time,
        accounting: Accounting,
        reason: StopReason,
    ) {
        let ran = cpu.ran_until(now);
        if accounting != Accounting::Off {
            t.add_cpu_time(ran);
        }
        cpu.stop();
        t.preempt_deferred = false;
        t.slice_deferred = false;
        if reason == StopReason::Preempted {
            t.stats.preemptions += 1;
        }
        if let Some(seq) = trace_seq {
            cpu.record(seq, now, TraceKind::Stop, t.id, t.job.number, reason as u64);
        }
    }

    /// The preemption of the running `t` (in no thread set) by `heir`, on `cpu` (local index
    /// `c`) at `now`, for a short path that holds both control blocks: what
    /// [`Kernel::stop_running_at`] (`Preempted`) and [`Kernel::dispatch_tcb`] make, in the same
    /// order, without looking either thread up again.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(in crate::kernel) fn preempt_tcb(
        cpu: &mut Cpu,
        c: usize,
        t: &mut Tcb,
        heir: &mut Tcb,
        timers: &mut TimerQueue,
        mut trace_seq: Option<&mut u32>,
        now: Time,
        accounting: Accounting,
        context_switch: Duration,
    ) {
        Self::stop_tcb(cpu, t, trace_seq.as_deref_mut(), now, accounting, StopReason::Preempted);
        t.state = State::Ready;
        Self::dispatch_tcb(cpu, c, heir, timers, trace_seq, now, context_switch);
    }

    /// Make a thread spend `cost` of CPU time before its pending reply is delivered: simulated
    /// runtime overhead, consumed exactly like `work`.
    #[inline]
    pub(crate) fn charge_overhead(&mut self, id: ThreadId, cost: Duration) {
        if !cost.is_zero() {
            self.charge_overhead_now(id, cost);
        }
    }

    pub(in crate::kernel) fn charge_overhead_now(&mut self, id: ThreadId, cost: Duration) {
        let now = self.now;
        let t = self.tcb(id);
        if t.add_overhead(cost) && t.state == State::Running {
            let c = self.cpu_of(id);
            self.cpus[c].work_mark = now;
        }
    }

    /// Switch thread `id`'s preemption on or off (it runs on CPU `c`); returns the previous
    /// setting. Switching it on carries out what was held back while it was off: an expired
    /// time slice rotates the thread now; a preemption is offered to the policy at the CPU's
    /// next reschedule, right after this request.
    pub(in crate::kernel) fn set_preemption(&mut self, c: usize, id: ThreadId, on: bool) -> bool {
        let t = self.tcb(id);
        let old = t.preemptible;
        t.preemptible = on;
        if !on || old {
            return old;
        }
        let slice = std::mem::take(&mut t.slice_deferred);
        let preempt = std::mem::take(&mut t.preempt_deferred);
        if slice {
            self.trace_thread(id, TraceKind::PreemptionDeferred, 1);
            self.stop_running(c, StopReason::SliceExpired);
            self.tcb(id).state = State::Ready;
            self.report_quantum(c, id);
        } else if preempt {
            self.trace_thread(id, TraceKind::PreemptionDeferred, 0);
            self.cpus[c].preempt = true;
            self.cpus[c].requeue_current = true;
        }
        old
    }

    /// Carry out a pending preemption and pick a thread if the CPU has none. A pending
    /// preemption of a thread that holds its CPU (preemption off) is held back on the thread
    /// instead (see the module's docs).
    pub(in crate::kernel) fn reschedule(&mut self, c: usize) {
        // The running thread's slot, looked up once for a plain preemption.
        let mut running = None;
        if (self.cpus[c].preempt || self.cpus[c].requeue_current)
            && let Some(r) = self.cpus[c].current
        {
            let i = self.local(r).expect("kernel refers to a live thread");
            let t = self.table.slots[i].as_mut().expect("live slot");
            if t.holds_cpu() {
                t.preempt_deferred = true;
                self.cpus[c].preempt = false;
                self.cpus[c].requeue_current = false;
                return;
            }
            running = Some(i);
        }
        if self.cpus[c].requeue_current {
            // The running thread lost urgency. Queue it as a preempted thread and let the
            // policy pick: if it picks the same thread, nothing visible happens.
            self.cpus[c].requeue_current = false;
            self.cpus[c].preempt = false;
            // The thread running after this may be another one.
            running = None;
            if let Some(r) = self.cpus[c].current {
                self.sched_call(c, r, |s, info| s.on_ready(info, ReadyReason::Preempted));
                let now = self.now;
                match self.sched_mut(c).pick_next(now) {
                    Some(next) if next == r => {}
                    next => {
                        self.stop_running(c, StopReason::Preempted);
                        self.tcb(r).state = State::Ready;
                        if let Some(n) = next
                            && !self.dispatch_picked(c, n)
                        {
                            return;
                        }
                    }
                }
            }
        }
        if self.cpus[c].preempt {
            self.cpus[c].preempt = false;
            if let Some(r) = self.cpus[c].current {
                let i = running.unwrap_or_else(|| self.local(r).expect("live thread"));
                self.stop_running_at(c, i, StopReason::Preempted);
                self.table.slots[i].as_mut().expect("live slot").state = State::Ready;
                self.sched_call_at(c, i, |s, info| s.on_ready(info, ReadyReason::Preempted));
            }
        }
        while self.cpus[c].current.is_none() {
            let s = self.sched_of(c);
            let Some(next) = self.cpus[s].scheduler.pick_next(self.now) else { return };
            if self.dispatch_picked_at(c, next).is_none() {
                return;
            }
        }
    }

    /// Dispatch the thread the scheduler of CPU `c` picked, if it may run there: a policy
    /// may only hand back threads it was given as ready on this CPU (under a global policy,
    /// any ready thread, which moves here). A wrong pick stops the
    /// run with [`Error::BadPick`] (asking again would get the same answer forever); returns
    /// whether the thread was dispatched.
    pub(in crate::kernel) fn dispatch_picked(&mut self, c: usize, next: ThreadId) -> bool {
        self.dispatch_picked_at(c, next).is_some()
    }

    /// [`Kernel::dispatch_picked`], giving the dispatched thread's slot.
    #[inline(always)]
    pub(in crate::kernel) fn dispatch_picked_at(&mut self, c: usize, next: ThreadId) -> Option<usize> {
        let here = self.cpus[c].index;
        if !self.global {
            // One CPU's threads only: the slot is checked and dispatched in one borrow.
            if let Some(i) = self.local(next)
                && let Some(t) = self.table.slots[i].as_mut()
                && t.state == State::Ready
                && t.cpu == here
            {
                let seq = self.tracing.then_some(&mut self.trace_seq);
                let cs = self.costs.context_switch;
                Self::dispatch_tcb(&mut self.cpus[c], c, t, &mut self.timers, seq, self.now, cs);
                return Some(i);
            }
            self.bad_pick(c, next);
            return None;
        }
        match self.local(next) {
            Some(i)
                if self.table.slots[i]
                    .as_ref()
                    .is_some_and(|t| t.state == State::Ready && (t.cpu == here || self.global)) =>
            {
                if self.global {
                    self.migrate_at(c, i);
                }
                self.dispatch_at(c, i);
                Some(i)
            }
            _ => {
                self.bad_pick(c, next);
                None
            }
        }
    }

    #[cold]
    pub(in crate::kernel) fn bad_pick(&mut self, c: usize, next: ThreadId) {
        if self.failed.is_none() {
            let cpu = &self.cpus[c];
            self.failed =
                Some(Error::BadPick { scheduler: cpu.scheduler.name().to_string(), cpu: cpu.index, thread: next });
        }
    }
}
