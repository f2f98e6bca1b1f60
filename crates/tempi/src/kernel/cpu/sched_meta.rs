//! The message-level scheduling events (FREE JAZZ's scheduling messages): the kernel's side of
//! READY with a constraint, PRIO SAVE / RESTORE, CALL, PROCURE (transitive) and NICE, and the
//! urgency those events lend.
//!
//! Each CPU asks its scheduler once, at start, which events it wants (`Cpu::events`); every
//! entry point here tests that bit first and returns at once when it is clear, so a policy
//! that keeps the defaults pays one branch per semaphore operation and handler block, and no
//! call into the policy. An inheritance event the policy answers with an urgency becomes a
//! *lend* on the holder, kept in its control block with the event's [`InheritId`] and what it
//! waits at ([`BlockedAt`]); the holder's lent urgency is the maximum of its lends and of what its
//! locks lend (`Kernel::lent_to`), applied through the same path as lock inheritance
//! (`Kernel::recompute_lent`). Leaving the handler or vacating the semaphore withdraws the
//! lends made for it, latest first, each reported as NICE; a waiter that stops waiting
//! unserved (timeout, abort, kill) withdraws the lends its wait caused (`locking/lending.rs`).
//!
//! Semaphores have no owner; while PROCURE is asked for, the kernel notes which threads are
//! inside each semaphore (a unit taken and not yet given back), at most [`INSIDE`] entries per
//! thread.
//!
//! Must not: decide urgencies (the policy does), or change who holds or waits for anything.

use crate::clock::Clock;
use crate::kernel::threads::tcb::{State, Wait};
use crate::kernel::Kernel;
use crate::plain::HandlerId;
use crate::plain::Message;
use crate::plain::SemId;
use crate::plain::ThreadId;
use crate::policy::sched::{BlockedAt, Events, InheritId, QueuedMessages, Urgency, NO_CONSTRAINT};

/// Lends one thread can hold at once (nested inheritances); one more is not made.
pub(crate) const LENDS: usize = 8;
/// Semaphore units one thread can be noted inside at once.
pub(crate) const INSIDE: usize = 8;
/// The bit of a thread's view of its CPU's events (`Exchange::events`) that holds its own
/// `tame_prio_inv` flag: the thread sets it without a kernel call, the kernel reads it when
/// the thread blocks. No event uses it.
pub(crate) const TAME_BIT: u8 = 0x80;

/// Urgency lent to a thread by one inheritance event.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lend {
    id: InheritId,
    at: BlockedAt,
    urgency: Urgency,
    /// The blocked thread whose wait caused it (through a chain, for a transitive lend): its
    /// timeout, abort or kill ends the lend (`locking/lending.rs`). `None` for PRIO SAVE.
    origin: Option<ThreadId>,
}

/// A thread's part in the message-level events.
#[derive(Debug, Default)]
pub(crate) struct MetaTcb {
    /// Lends in the order made.
    lends: Vec<Lend>,
    /// Semaphores (kernel-local index) it holds a unit of, one entry per unit.
    inside: Vec<u32>,
    /// The busy handler it waits at and the thread that handler runs on.
    at_handler: Option<(HandlerId, ThreadId)>,
    /// Lends its waits caused that other threads still hold.
    pub(in crate::kernel) caused: u32,
}

impl MetaTcb {
    /// Sized for a CPU whose policy asks for `events` (nothing allocated when none).
    pub(crate) fn new(events: Events) -> MetaTcb {
        let inherit =
            events.contains(Events::CALL) || events.contains(Events::PROCURE) || events.contains(Events::PRIO);
        MetaTcb {
            lends: Vec::with_capacity(if inherit { LENDS } else { 0 }),
            inside: Vec::with_capacity(if events.contains(Events::PROCURE) { INSIDE } else { 0 }),
            at_handler: None,
            caused: 0,
        }
    }

    /// Make room for `lends` lends and `inside` semaphore notes (a scheduler stacked during
    /// the run asks for events the thread was not sized for).
    pub(crate) fn reserve(&mut self, lends: usize, inside: usize) {
        self.lends.reserve_exact(lends.saturating_sub(self.lends.len()));
        self.inside.reserve_exact(inside.saturating_sub(self.inside.len()));
    }

    /// Drop the lends (and semaphore notes, and the handler waited at) that `events` no
    /// longer asks for; whether a lend went.
    pub(crate) fn withdraw_unasked(&mut self, events: Events) -> bool {
        let before = self.lends.len();
        self.lends.retain(|l| crate::kernel::cpu::sched_stack::kept_under(l.at, events));
        if !events.contains(Events::PROCURE) {
            self.inside.clear();
        }
        if !events.contains(Events::CALL) {
            self.at_handler = None;
        }
        self.lends.len() != before
    }

    /// The largest urgency its lends give it.
    pub(crate) fn lent(&self) -> Option<Urgency> {
        self.lends.iter().map(|l| l.urgency).max()
    }

    /// Whether it holds a lend made at a busy handler (leaving the handler is then reported).
    pub(in crate::kernel) fn holds_handler_lends(&self) -> bool {
        self.lends.iter().any(|l| matches!(l.at, BlockedAt::Handler(_)))
    }

    /// Take out the latest lend `origin`'s wait caused: its id and where it was made.
    pub(in crate::kernel) fn take_lend_of(&mut self, origin: ThreadId) -> Option<(InheritId, BlockedAt)> {
        let k = self.lends.iter().rposition(|l| l.origin == Some(origin))?;
        let l = self.lends.remove(k);
        Some((l.id, l.at))
    }
}

impl<C: Clock> Kernel<C> {
    /// The events CPU `c`'s scheduler asked for.
    #[inline(always)]
    pub(crate) fn events_of(&self, c: usize) -> Events {
        self.cpus[self.sched_of(c)].events
    }

    /// The events the scheduler of thread `id`'s CPU asked for.
    #[inline]
    fn events_of_thread(&mut self, id: ThreadId) -> Events {
        let c = self.cpu_of(id);
        self.events_of(c)
    }

    fn next_inherit(&mut self) -> InheritId {
        self.next_inherit += 1;
        InheritId::from_raw(self.next_inherit)
    }

    /// Hook: `id` took a unit of semaphore `k` (kernel-local index).
    #[inline]
    pub(crate) fn meta_sem_entered(&mut self, id: ThreadId, k: u32) {
        if !self.events_of_thread(id).contains(Events::PROCURE) {
            return;
        }
        let inside = &mut self.tcb(id).meta.inside;
        if inside.len() < inside.capacity() {
            inside.push(k);
        }
    }

    /// Hook: the running thread of CPU `c` gave a unit of semaphore `k` back.
    #[inline]
    pub(crate) fn meta_sem_left(&mut self, c: usize, k: u32) {
        if !self.events_of(c).contains(Events::PROCURE) {
            return;
        }
        let Some(id) = self.cpus[c].current else { return };
        let inside = &mut self.tcb(id).meta.inside;
        if let Some(at) = inside.iter().rposition(|&x| x == k) {
            inside.swap_remove(at);
        }
        if !inside.contains(&k) {
            self.meta_leave(id, BlockedAt::Semaphore(SemId(k + self.sync.lock_base)));
        }
    }

    /// Hook: `waiter` now waits at semaphore `k` (it is blocked there).
    #[inline]
    pub(crate) fn meta_procure_blocked(&mut self, c: usize, waiter: ThreadId) {
        if self.events_of(c).contains(Events::PROCURE) {
            self.inherit_from(waiter, waiter, NO_CONSTRAINT, 0);
        }
    }

    /// Hook: `waiter` now waits at the busy handler `handler`, which runs on `holder`'s stack.
    pub(crate) fn meta_call_blocked(
        &mut self,
        c: usize,
        waiter: ThreadId,
        handler: HandlerId,
        holder: ThreadId,
        constraint: i64,
    ) {
        if !self.events_of(c).contains(Events::CALL) {
            return;
        }
        self.tcb(waiter).meta.at_handler = Some((handler, holder));
        self.inherit_from(waiter, waiter, constraint, 0);
    }

    /// Report the blocking of `waiter` (at a semaphore or a busy handler) to the scheduler,
    /// lend what it answers to the holders, and go on from each raised holder that is itself
    /// blocked (transitivity). `origin` is the thread whose blocking began the walk; `depth`
    /// bounds the walk by the number of thread slots.
    fn inherit_from(&mut self, waiter: ThreadId, origin: ThreadId, constraint: i64, depth: usize) {
        if depth > self.table.slots.len() {
            return;
        }
        let c = self.cpu_of(waiter);
        let events = self.events_of(c);
        if events.contains(Events::TAMED_ONLY) && self.tcb(waiter).mail.events.get() & TAME_BIT == 0 {
            // Reported only for threads that should endure bounded inversion at worst.
            return;
        }
        match self.tcb(waiter).state {
            State::Blocked(Wait::Sem(k)) if events.contains(Events::PROCURE) => {
                let at = BlockedAt::Semaphore(SemId(k + self.sync.lock_base));
                for i in 0..self.table.slots.len() {
                    let Some(t) = self.table.slots[i].as_ref() else { continue };
                    if !t.meta.inside.contains(&k) {
                        continue;
                    }
                    let holder = t.id;
                    let id = self.next_inherit();
                    let (w, h) = (self.info(waiter), self.info(holder));
                    let lent = self.sched_mut(c).on_procure(&w, &h, at, id);
                    self.lend(holder, id, at, lent, origin, depth);
                }
            }
            State::Blocked(Wait::Handler(_)) if events.contains(Events::CALL) => {
                let Some((handler, holder)) = self.tcb(waiter).meta.at_handler else { return };
                if self.local(holder).is_none() {
                    return;
                }
                let at = BlockedAt::Handler(handler);
                let id = self.next_inherit();
                let (w, h) = (self.info(waiter), self.info(holder));
                let lent = self.sched_mut(c).on_call(&w, &h, at, constraint, id);
                self.lend(holder, id, at, lent, origin, depth);
            }
            _ => {}
        }
    }

    /// Lend `urgency` (if any) to `holder` for inheritance `id` at `at`, then follow `holder`
    /// if it is blocked itself.
    fn lend(
        &mut self,
        holder: ThreadId,
        id: InheritId,
        at: BlockedAt,
        urgency: Option<Urgency>,
        origin: ThreadId,
        depth: usize,
    ) {
        let Some(urgency) = urgency else { return };
        let m = &mut self.tcb(holder).meta;
        if m.lends.len() >= m.lends.capacity() {
            return;
        }
        m.lends.push(Lend { id, at, urgency, origin: Some(origin) });
        self.tcb(origin).meta.caused += 1;
        if matches!(at, BlockedAt::Handler(_)) {
            self.tcb(holder).mail.set_handler_lends(true);
        }
        let before = self.tcb(holder).urgency();
        self.recompute_lent(holder);
        if self.tcb(holder).urgency() > before {
            self.inherit_from(holder, origin, NO_CONSTRAINT, depth + 1);
        }
    }

    /// `id` left `at`: the lends made for it are withdrawn, and each is reported as NICE,
    /// latest first.
    pub(crate) fn meta_leave(&mut self, id: ThreadId, at: BlockedAt) {
        if !self.tcb(id).meta.lends.iter().any(|l| l.at == at) {
            return;
        }
        let c = self.cpu_of(id);
        while let Some(k) = self.tcb(id).meta.lends.iter().rposition(|l| l.at == at) {
            let lend = self.tcb(id).meta.lends.remove(k);
            if let Some(o) = lend.origin.filter(|&o| self.local(o).is_some()) {
                let m = &mut self.tcb(o).meta;
                m.caused = m.caused.saturating_sub(1);
            }
            self.recompute_lent(id);
            let info = self.info(id);
            self.sched_mut(c).on_nice(&info, at, lend.id);
        }
        let handler_lends = self.tcb(id).meta.holds_handler_lends();
        self.tcb(id).mail.set_handler_lends(handler_lends);
    }

    /// `id`, the thread a handler runs on, left handler `handler` (its queue drained).
    pub(crate) fn meta_left_handler(&mut self, id: ThreadId, handler: HandlerId) {
        self.meta_leave(id, BlockedAt::Handler(handler));
    }

    /// PRIO SAVE: a handler on `id`'s stack is about to serve a message with `constraint`.
    /// Returns the id PRIO RESTORE gives back.
    pub(crate) fn meta_prio_save(&mut self, id: ThreadId, constraint: i64) -> InheritId {
        let c = self.cpu_of(id);
        let inherit = self.next_inherit();
        let info = self.info(id);
        let lent = self.sched_mut(c).on_prio_save(&info, constraint, inherit);
        if let Some(urgency) = lent {
            let m = &mut self.tcb(id).meta;
            if m.lends.len() < m.lends.capacity() {
                m.lends.push(Lend { id: inherit, at: BlockedAt::Prio, urgency, origin: None });
                self.recompute_lent(id);
            }
        }
        inherit
    }

    /// PRIO RESTORE of PRIO SAVE `inherit` on `id`.
    pub(crate) fn meta_prio_restore(&mut self, id: ThreadId, inherit: InheritId) {
        let c = self.cpu_of(id);
        if let Some(k) = self.tcb(id).meta.lends.iter().position(|l| l.id == inherit) {
            self.tcb(id).meta.lends.remove(k);
            self.recompute_lent(id);
        }
        let info = self.info(id);
        self.sched_mut(c).on_prio_restore(&info, inherit);
    }

    /// SCHEDULE: `id`, which ran on CPU `c`, used up its quantum and is ready again.
    #[inline]
    pub(crate) fn report_quantum(&mut self, c: usize, id: ThreadId) {
        self.sched_call(c, id, |s, info| s.on_schedule(info, crate::policy::sched::Schedule::Quantum));
    }

    /// Hook: a message with `constraint` reached `to` (queued, or handed over).
    #[inline(always)]
    pub(crate) fn meta_message_ready(&mut self, to: ThreadId, constraint: i64) {
        if constraint != NO_CONSTRAINT {
            self.report_message_ready(to, constraint);
        }
    }

    #[inline(never)]
    fn report_message_ready(&mut self, to: ThreadId, constraint: i64) {
        if !self.events_of_thread(to).contains(Events::READY) {
            return;
        }
        let c = self.cpu_of(to);
        self.sched_call(c, to, |s, info| s.on_message_ready(info, constraint));
    }
}

/// The scheduler's view of the messages queued on one CPU (NEXT).
struct QueueView<'a> {
    slots: &'a [Option<crate::kernel::threads::tcb::Tcb>],
    pool: &'a mut crate::kernel::messaging::messages::MsgPool,
    /// The CPU whose threads are shown; `None`: every CPU (a global policy).
    cpu: Option<usize>,
    slot_base: u32,
}

impl QueueView<'_> {
    fn tcb(&self, id: ThreadId) -> Option<&crate::kernel::threads::tcb::Tcb> {
        let i = id.slot().checked_sub(self.slot_base)? as usize;
        let t = self.slots.get(i)?.as_ref()?;
        (t.id == id && self.cpu.is_none_or(|c| t.cpu == c)).then_some(t)
    }
}

impl QueuedMessages for QueueView<'_> {
    fn thread(&self, k: usize) -> Option<ThreadId> {
        let mut with_messages =
            self.slots.iter().flatten().filter(|t| self.cpu.is_none_or(|c| t.cpu == c) && !t.mbox.queued().is_empty());
        with_messages.nth(k).map(|t| t.id)
    }
    fn len(&self, thread: ThreadId) -> usize {
        self.tcb(thread).map_or(0, |t| t.mbox.queued().len())
    }
    fn get(&self, thread: ThreadId, i: usize) -> Option<Message> {
        let s = *self.tcb(thread)?.mbox.queued().get(i)?;
        Some(self.pool.msg(s))
    }
    fn cancel(&mut self, thread: ThreadId, i: usize) -> bool {
        let Some(&s) = self.tcb(thread).and_then(|t| t.mbox.queued().get(i)) else { return false };
        self.pool.cancel(s);
        true
    }
}

impl<C: Clock> Kernel<C> {
    /// Hook: `id`, which ran on CPU `c`, blocked or went idle (NEXT).
    #[inline(always)]
    pub(crate) fn meta_next(&mut self, c: usize, id: ThreadId) {
        if self.events_of(c).contains(Events::NEXT) {
            self.report_next(c, id);
        }
    }

    #[inline(never)]
    fn report_next(&mut self, c: usize, id: ThreadId) {
        let info = self.info(id);
        let cpu = (!self.global).then_some(self.cpus[c].index);
        let s = self.sched_of(c);
        let mut view =
            QueueView { slots: &self.table.slots, pool: &mut self.mail.pool, cpu, slot_base: self.table.slot_base };
        self.cpus[s].scheduler.on_next(&info, &mut view);
    }
}
