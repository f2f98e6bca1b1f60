//! Stacking and un-stacking a scheduler while the run goes on (FREE JAZZ's
//! `register_scheduler` at run time): the kernel's side of [`Ctx::stack_scheduler`] and
//! [`Ctx::unstack_scheduler`].
//!
//! The kernel swaps the top of one CPU's chain and nothing else: stacking hands the current
//! scheduler (with its ready queue and whatever else it keeps) to the caller's closure and
//! installs what it returns; un-stacking asks the top for the scheduler below it
//! ([`Scheduler::take_prev`]) and installs that, dropping the top. The chain itself lives in
//! the schedulers; the kernel sees only the trait. What the kernel asked once at start-up is
//! asked again of the new top (time slices, message-level events), and each thread of the CPU
//! is given its new view of the events, with room for the lends and semaphore notes the new
//! events need (allocated here, in a control call, never on the paths that use them). Lends
//! made under an event the new top no longer asks for are withdrawn at once, without NICE:
//! the scheduler that lent them is gone, and nothing would report their end any more.
//!
//! Must not: know what the chain holds, or reorder a ready queue.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::clock::Clock;
use crate::error::Error;
use crate::kernel::cpu::sched_meta::{INSIDE, LENDS};
use crate::kernel::Kernel;
use crate::policy::sched::{BlockedAt, Events, Scheduler, Vacant};

/// A closure that wraps a CPU's scheduler in a new top ([`Ctx::stack_scheduler`]).
pub(crate) type SchedWrap = Box<dyn FnOnce(Box<dyn Scheduler>) -> Box<dyn Scheduler> + Send>;

impl<C: Clock> Kernel<C> {
    /// Stack a scheduler on CPU `cpu`'s (a runtime CPU number of this kernel): `wrap` gets
    /// the current one and returns the new top.
    pub(crate) fn stack_scheduler_now(&mut self, cpu: usize, wrap: SchedWrap) -> Result<(), Error> {
        let s = self.stack_target(cpu)?;
        let old = std::mem::replace(&mut self.cpus[s].scheduler, Box::new(Vacant));
        match catch_unwind(AssertUnwindSafe(move || wrap(old))) {
            Ok(new) if new.global() == self.global => {
                self.cpus[s].scheduler = new;
                self.scheduler_changed(s);
                Ok(())
            }
            Ok(mut new) => {
                // A wrapper may not change how many CPUs one instance serves; put the one below
                // back if the wrapper gives it up.
                let name = new.name().to_string();
                match new.take_prev() {
                    Some(prev) => self.cpus[s].scheduler = prev,
                    None => self.fail_scheduler(s, &name),
                }
                Err(Error::InvalidConfig(format!(
                    "scheduler `{name}` stacked on CPU {cpu} changes global() from {}",
                    self.global
                )))
            }
            Err(_) => {
                self.fail_scheduler(s, "the stacking closure");
                Err(Error::InvalidConfig(format!("the closure stacking a scheduler on CPU {cpu} panicked")))
            }
        }
    }

    /// Un-stack CPU `cpu`'s scheduler: the one below the top becomes the CPU's scheduler again
    /// and the top is dropped. An error if the top is not stacked on another.
    pub(crate) fn unstack_scheduler_now(&mut self, cpu: usize) -> Result<(), Error> {
        let s = self.stack_target(cpu)?;
        let Some(prev) = self.cpus[s].scheduler.take_prev() else {
            let name = self.cpus[s].scheduler.name().to_string();
            return Err(Error::InvalidConfig(format!(
                "scheduler `{name}` of CPU {cpu} is not stacked on another (or does not give it back)"
            )));
        };
        if prev.global() != self.global {
            // Cannot happen with a chain built by stacking; refuse rather than mix the two.
            let top = std::mem::replace(&mut self.cpus[s].scheduler, prev);
            drop(top);
            self.fail_scheduler(s, "the scheduler given back");
            return Err(Error::InvalidConfig(format!("the scheduler below CPU {cpu}'s top changes global()")));
        }
        self.cpus[s].scheduler = prev;
        self.scheduler_changed(s);
        Ok(())
    }

    /// The local index of the scheduler serving runtime CPU `cpu`.
    fn stack_target(&self, cpu: usize) -> Result<usize, Error> {
        let c = self.cpu_local(cpu).ok_or(Error::NoSuchCpu { cpu, cpus: self.total_cpus })?;
        Ok(self.sched_of(c))
    }

    /// The scheduler of `s` was lost (a closure panicked, or a bad chain): the run stops.
    #[cold]
    fn fail_scheduler(&mut self, s: usize, what: &str) {
        if self.failed.is_none() {
            self.failed = Some(Error::InvalidConfig(format!(
                "CPU {} has no usable scheduler after stacking ({what})",
                self.cpus[s].index
            )));
        }
    }

    /// The top of scheduler `s` changed: ask it again what was asked at start-up, and give the
    /// threads it serves their new view of the events.
    fn scheduler_changed(&mut self, s: usize) {
        let (sliced, events) = (self.cpus[s].scheduler.time_sliced(), self.cpus[s].scheduler.events());
        let served: Vec<usize> = (0..self.cpus.len()).filter(|&c| self.sched_of(c) == s).collect();
        for &c in &served {
            self.cpus[c].sliced = sliced;
            self.cpus[c].events = events;
        }
        let cpus: Vec<usize> = served.iter().map(|&c| self.cpus[c].index).collect();
        let inherit =
            events.contains(Events::CALL) || events.contains(Events::PROCURE) || events.contains(Events::PRIO);
        for i in 0..self.table.slots.len() {
            let Some(t) = self.table.slots[i].as_mut() else { continue };
            if !cpus.contains(&t.cpu) {
                continue;
            }
            let tame = t.mail.events.get() & crate::kernel::cpu::sched_meta::TAME_BIT;
            t.mail.events.set(events.bits() | tame);
            let m = &mut t.meta;
            if inherit {
                m.reserve(LENDS, 0);
            }
            if events.contains(Events::PROCURE) {
                m.reserve(0, INSIDE);
            }
            let gone = m.withdraw_unasked(events);
            let id = t.id;
            if !events.contains(Events::CALL) {
                t.mail.set_handler_lends(false);
            }
            if gone {
                self.recompute_lent(id);
            }
        }
    }
}

/// Whether a lend made at `at` needs `events` to be withdrawn later.
pub(crate) fn kept_under(at: BlockedAt, events: Events) -> bool {
    match at {
        BlockedAt::Handler(_) => events.contains(Events::CALL),
        BlockedAt::Semaphore(_) => events.contains(Events::PROCURE),
        BlockedAt::Prio => true,
    }
}
