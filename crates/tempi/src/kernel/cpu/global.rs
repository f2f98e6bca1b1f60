//! Global scheduling in virtual time: which CPU runs what when one policy serves every CPU.
//!
//! A policy whose [`Scheduler::global`](crate::policy::sched::Scheduler::global) answers
//! `true` is used through the ordinary `Scheduler` trait, shared: the first CPU's instance
//! holds the ready threads of every CPU (the other CPUs' instances are built but never
//! called), and each CPU asks it for its next thread with `pick_next`. The policy alone
//! orders threads; this module only carries out "which CPU": the kernel keeps the `m` most
//! urgent ready threads on the `m` CPUs, so at every instant no ready thread is more urgent
//! than a running one and no CPU idles while a thread is ready.
//!
//! - A thread that becomes ready, or more urgent while ready, is *offered* a CPU
//!   ([`Kernel::global_offer`]): the lowest-numbered idle CPU not already offered a thread;
//!   else the CPU, among those not already rescheduling, whose running thread has the lowest
//!   effective urgency (the highest-numbered one among equals), if the policy's
//!   `should_preempt` says the thread preempts it. An offered CPU reschedules at its next turn
//!   of the run loop, offering its running thread back to the queue like a thread that lost
//!   urgency: the policy's pick decides who runs, and if it picks the same thread nothing
//!   visible happens.
//! - A running thread that becomes less urgent offers its CPU back the same way.
//! - A CPU whose thread blocks, sleeps, yields or ends picks the most urgent ready thread.
//! - A running thread with preemption off (`Ctx::preemption(false)`) keeps its CPU: an offer
//!   goes to the CPUs whose threads may be preempted first, and only when none of them is
//!   preempted to the least urgent thread holding its CPU, where it is held back until that
//!   thread switches preemption on (see `dispatch.rs`). Until then the `m` most urgent ready
//!   threads need not all run.
//!
//! Each offered CPU stands for one thread that may be more urgent than a running one, and it
//! picks the most urgent ready thread, so after the offered CPUs rescheduled the running
//! threads are again the most urgent ones. A thread dispatched on a CPU other than the one it
//! last ran on has migrated: its `cpu` (and its `SchedInfo::cpu`) becomes the new CPU and
//! `ThreadStats::migrations` counts it; its first dispatch is no migration. CPU time is
//! charged per CPU segment as always, and every trace record carries the CPU it was written
//! on: a thread's `run` and `stop` records name the CPU it ran on.
//!
//! Sound in virtual time only, where every CPU runs on one OS thread: a coroutine moves to
//! another simulated CPU without leaving its OS thread. The runtime refuses a global policy
//! in real time, and this kernel refuses locks, condition variables and semaphores under one
//! ([`crate::Error::Global`]).
//!
//! Must not: order threads (the policy does), or allocate (it only flags CPUs).

use crate::clock::Clock;
use crate::error::{Error, GlobalRefusal};
use crate::kernel::Kernel;
use crate::policy::sched::Urgency;

impl<C: Clock> Kernel<C> {
    /// The thread in slot `i` became ready, or more urgent while ready: offer it an idle CPU,
    /// or the CPU running the least urgent thread if the policy says it preempts that one.
    pub(in crate::kernel) fn global_offer(&mut self, i: usize) {
        if let Some(cpu) = self.cpus.iter_mut().find(|cpu| cpu.current.is_none() && !cpu.preempt) {
            cpu.preempt = true;
            return;
        }
        // First the CPUs whose threads may be preempted, then those holding their CPU.
        for holding in [false, true] {
            if self.offer_among(i, holding) {
                return;
            }
        }
    }

    /// Offer the thread in slot `i` the CPU running the least urgent thread among those that
    /// hold their CPU (preemption off) or not, as `holding` says, if the policy says it
    /// preempts that one; returns whether it did.
    fn offer_among(&mut self, i: usize, holding: bool) -> bool {
        let mut target: Option<(usize, usize, Urgency)> = None;
        for (c, cpu) in self.cpus.iter().enumerate() {
            if cpu.preempt {
                continue;
            }
            let Some(r) = cpu.current else { continue };
            let ri = self.local(r).expect("running thread is live");
            let t = self.table.slots[ri].as_ref().expect("live slot");
            if t.holds_cpu() != holding {
                continue;
            }
            let u = t.sched.urgency;
            if target.is_none_or(|(_, _, least)| u <= least) {
                target = Some((c, ri, u));
            }
        }
        let Some((c, ri, _)) = target else { return false };
        let running = &self.table.slots[ri].as_ref().expect("live slot").sched;
        let woken = &self.table.slots[i].as_ref().expect("live slot").sched;
        if self.cpus[0].scheduler.should_preempt(running, woken) {
            self.cpus[c].preempt = true;
            self.cpus[c].requeue_current = true;
            return true;
        }
        false
    }

    /// The effective urgency of the thread in slot `i` changed from `old` (already stored):
    /// tell the shared policy if the thread is ready or running, offer a CPU to a ready
    /// thread that became more urgent, and let a running one that became less urgent offer
    /// its CPU back.
    pub(in crate::kernel) fn global_urgency_changed(&mut self, i: usize, old: Urgency) {
        use crate::kernel::threads::tcb::State;
        let t = self.table.slots[i].as_ref().expect("live slot");
        let (state, new, cpu) = (t.state, t.sched.urgency, t.cpu);
        if !matches!(state, State::Ready | State::Running) {
            return;
        }
        self.cpus[0].scheduler.on_urgency_changed(&t.sched, old);
        match state {
            State::Ready if new > old => self.global_offer(i),
            State::Running if new < old => {
                let c = self.cpu_local(cpu).expect("thread on this kernel");
                if self.cpus[c].current == Some(t.id) {
                    self.cpus[c].preempt = true;
                    self.cpus[c].requeue_current = true;
                }
            }
            _ => {}
        }
    }

    /// The thread in slot `i`, picked by CPU `c`, is about to be dispatched there: if it last
    /// ran on another CPU it migrates.
    pub(in crate::kernel) fn migrate_at(&mut self, c: usize, i: usize) {
        let here = self.cpus[c].index;
        let t = self.table.slots[i].as_mut().expect("live slot");
        if t.cpu != here {
            if t.has_run {
                t.stats.migrations += 1;
            }
            t.cpu = here;
            t.sched.cpu = here;
        }
        t.has_run = true;
    }

    /// The error for what a global policy refuses.
    pub(in crate::kernel) fn global_refusal(&self, reason: GlobalRefusal) -> Error {
        let scheduler = self.cpus.first().map_or("?", |cpu| cpu.scheduler.name()).to_string();
        Error::Global { scheduler, reason }
    }
}
