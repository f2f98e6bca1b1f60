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
//! - A thread that becomes ready, or more urgent while ready, is *offered* the CPU the policy
//!   chooses ([`Kernel::global_offer`], the policy's `select_cpu`, as Linux's
//!   `select_task_rq`). By default (`default_cpu_choice`): the lowest-numbered idle CPU not
//!   already offered a thread;
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
//! Must not: order threads or choose CPUs (the policy does), or allocate (it only flags CPUs).

use crate::clock::Clock;
use crate::error::{Error, GlobalRefusal};
use crate::kernel::Kernel;
use crate::policy::sched::{CpuChoice, CpuView, Urgency};

impl<C: Clock> Kernel<C> {
    /// The thread in slot `i` became ready, or more urgent while ready: offer it the CPU the
    /// policy chooses ([`Scheduler::select_cpu`](crate::policy::sched::Scheduler::select_cpu);
    /// by default an idle CPU, or the CPU running the least urgent thread if it preempts that
    /// one), which reschedules at its next turn.
    pub(in crate::kernel) fn global_offer(&mut self, i: usize) {
        let chosen = {
            let view = |c: usize| {
                let cpu = &self.cpus[c];
                let running = cpu.current.map(|r| {
                    let ri = self.local(r).expect("running thread is live");
                    self.table.slots[ri].as_ref().expect("live slot")
                });
                CpuView {
                    index: cpu.index,
                    running: running.map(|t| &t.sched),
                    offered: cpu.preempt,
                    holds_cpu: running.is_some_and(|t| t.holds_cpu()),
                }
            };
            let woken = &self.table.slots[i].as_ref().expect("live slot").sched;
            self.cpus[0].scheduler.select_cpu(woken, &CpuChoice::from_fn(self.cpus.len(), &view))
        };
        let Some(cpu) = chosen else { return };
        match self.cpu_local(cpu).filter(|&c| !self.cpus[c].preempt) {
            Some(c) => {
                self.cpus[c].preempt = true;
                if self.cpus[c].current.is_some() {
                    self.cpus[c].requeue_current = true;
                }
            }
            None if self.failed.is_none() => {
                let scheduler = self.cpus[0].scheduler.name().to_string();
                self.failed = Some(Error::BadCpuChoice { scheduler, cpu, cpus: self.cpus.len() });
            }
            None => {}
        }
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
