//! Thread sets and execution-time accounting: membership, thread and group clocks,
//! execution-time timers, and detecting when an armed clock value is reached. Budgets live in
//! `budgets.rs`.
//!
//! Charging: at every switch the outgoing thread's CPU time since its dispatch is added to its
//! own clock and to its set's clock (`Kernel::charge`). Between switches the clocks are read as
//! charged value plus the running part. An armed execution-time event (a thread timer, a set
//! timer, a budget limit) is turned into the instant it will be reached if the running members
//! keep running; the kernel loop treats that instant like any timer, so in virtual time the
//! event fires exactly when consumption reaches the value. When a different thread is
//! dispatched the instant is recomputed from that thread's set: the group event "jumps" to the
//! member that runs, and a switch re-arms at most one group event.
//!
//! Must not: decide or carry out a budget's enforcement (`budgets.rs`), or schedule.

use std::time::Duration;

use crate::clock::{Clock, ClockMode};
use crate::error::Error;
use crate::kernel::timing::budgets::BudgetState;
use crate::kernel::{EventHandler, Kernel};
use crate::plain::SetId;
use crate::plain::ThreadId;
use crate::plain::TraceKind;
use crate::policy::budget::Enforcement;
use crate::policy::sched::ReadyReason;
use crate::sets::{Accounting, MemberBudgetCounts, SetSummary};
use crate::time::{nanos, Time};

/// The `arg` of an `EventReleaseRefused` record made for an execution-time timer's handler
/// (a timing event's records carry the event's index).
const EXEC_TIMER_RELEASE: u64 = u64::MAX;

use crate::kernel::threads::tcb::State;

/// An armed execution-time event: fires when a clock reaches `at` (ns of CPU time).
pub(crate) struct ExecTimer {
    pub(crate) at: u64,
    pub(crate) handler: EventHandler,
}

pub(crate) struct SetState {
    pub(crate) id: SetId,
    pub(crate) name: String,
    pub(crate) members: Vec<ThreadId>,
    pub(crate) consumed: u64,
    pub(crate) timer: Option<ExecTimer>,
    pub(crate) budget: Option<BudgetState>,
    pub(crate) suspended: bool,
    pub(crate) exhaustions: u64,
    pub(crate) replenishments: u64,
    pub(crate) destroyed: bool,
    /// Per thread that joined, its share of the budget events; room for as many as the
    /// members (preallocated), the rest summed in `others`.
    pub(crate) per_member: Vec<MemberCounts>,
    pub(crate) others: MemberCounts,
    /// Exhaustions at which no member was running.
    pub(crate) exhaustions_idle: u64,
}

/// One member's share of its set's budget events (see [`crate::MemberBudgetCounts`]).
#[derive(Clone, Copy)]
pub(crate) struct MemberCounts {
    pub(crate) thread: Option<ThreadId>,
    pub(crate) exhaustions: u64,
    pub(crate) overruns: u64,
    pub(crate) overrun_ns: u64,
    /// The set's exhaustion count when this member's last overrun was counted: one overrun
    /// per exhaustion.
    pub(crate) last_overrun: u64,
}

impl MemberCounts {
    const fn new(thread: Option<ThreadId>) -> MemberCounts {
        MemberCounts { thread, exhaustions: 0, overruns: 0, overrun_ns: 0, last_overrun: 0 }
    }

    fn summary(&self) -> MemberBudgetCounts {
        MemberBudgetCounts {
            thread: self.thread,
            exhaustions: self.exhaustions,
            overruns: self.overruns,
            overrun_time: Duration::from_nanos(self.overrun_ns),
        }
    }
}

impl SetState {
    /// A set with room for `capacity` members, or an error if the allocator refuses it.
    pub(crate) fn new(id: SetId, name: String, capacity: usize) -> Result<SetState, Error> {
        Ok(SetState {
            id,
            name,
            members: crate::sizes::vec_with_capacity(capacity, "the members of a thread set (Config::max_threads)")?,
            per_member: crate::sizes::vec_with_capacity(
                capacity,
                "the per-member budget counts of a thread set (Config::max_threads)",
            )?,
            others: MemberCounts::new(None),
            exhaustions_idle: 0,
            consumed: 0,
            timer: None,
            budget: None,
            suspended: false,
            exhaustions: 0,
            replenishments: 0,
            destroyed: false,
        })
    }

    pub(crate) fn summary(&self) -> SetSummary {
        SetSummary {
            id: self.id,
            name: self.name.clone(),
            members: self.members.clone(),
            cpu_time: Duration::from_nanos(self.consumed),
            exhaustions: self.exhaustions,
            replenishments: self.replenishments,
            destroyed: self.destroyed,
            per_member: self
                .per_member
                .iter()
                .chain((self.others.exhaustions + self.others.overruns > 0).then_some(&self.others))
                .map(MemberCounts::summary)
                .collect(),
            exhaustions_idle: self.exhaustions_idle,
        }
    }

    /// The place of `id`'s counts, made when it first joins (no allocation: the list has room
    /// for as many as the set's members); `u32::MAX` once the list is full.
    fn record_for(&mut self, id: ThreadId) -> u32 {
        if let Some(i) = self.per_member.iter().position(|c| c.thread == Some(id)) {
            return i as u32;
        }
        if self.per_member.len() == self.per_member.capacity() {
            return u32::MAX;
        }
        self.per_member.push(MemberCounts::new(Some(id)));
        (self.per_member.len() - 1) as u32
    }

    /// The counts at place `record` (`others` past the list).
    pub(crate) fn counts(&mut self, record: u32) -> &mut MemberCounts {
        match self.per_member.get_mut(record as usize) {
            Some(c) => c,
            None => &mut self.others,
        }
    }

    /// The member at place `record` ran `ran` ns while the budget was exhausted.
    #[cold]
    #[inline(never)]
    fn overran(&mut self, record: u32, ran: u64) {
        if ran == 0 {
            return;
        }
        let mark = self.exhaustions;
        let c = self.counts(record);
        c.overrun_ns = c.overrun_ns.saturating_add(ran);
        if c.last_overrun != mark {
            c.last_overrun = mark;
            c.overruns += 1;
        }
    }
}

impl<C: Clock> Kernel<C> {
    // ----- sets -------------------------------------------------------------------------------

    pub(crate) fn set_local(&self, set: SetId) -> Result<usize, Error> {
        if set.runtime != self.runtime {
            return Err(Error::ForeignSet(set));
        }
        let i = set.word.checked_sub(self.exec.set_base).map(|i| i as usize);
        match i.and_then(|i| self.exec.sets.get(i).map(|s| (i, s))) {
            Some((i, s)) if !s.destroyed => Ok(i),
            _ => Err(Error::UnknownSet(set)),
        }
    }

    /// Why `id` names no live thread of this kernel: an id of another runtime, or an
    /// unknown (or ended) thread.
    pub(crate) fn no_thread(&self, id: ThreadId) -> Error {
        self.no_thread_from(id, None)
    }

    /// [`Kernel::no_thread`], for a caller on CPU `from`: in real time, a thread of another
    /// CPU (whose kernel is another) is [`Error::CrossCpu`] with both CPUs.
    pub(crate) fn no_thread_from(&self, id: ThreadId, from: Option<usize>) -> Error {
        if !self.id_check.owns(id) {
            return Error::ForeignThread(id);
        }
        if let (Some(from), ClockMode::Real) = (from, C::MODE) {
            // One kernel per CPU, each numbering `slots.len()` slots from `CPU × slots.len()`.
            let to = id.index() / self.table.slots.len();
            if to != from && to < self.total_cpus {
                return Error::CrossCpu { from, to };
            }
        }
        Error::UnknownThread(id)
    }

    pub(crate) fn create_set(&mut self, name: String) -> Result<SetId, Error> {
        if self.exec.sets.len() == self.exec.sets.capacity() {
            return Err(Error::TooManySets { max: self.exec.sets.capacity() });
        }
        let id = SetId { word: self.exec.set_base + self.exec.sets.len() as u32, runtime: self.runtime };
        let cap = self.table.slots.len();
        self.exec.sets.push(SetState::new(id, name, cap)?);
        Ok(id)
    }

    pub(crate) fn destroy_set(&mut self, set: SetId) -> Result<(), Error> {
        self.empty_set(set)?;
        let s = self.set_local(set)?;
        self.clear_budget(s);
        if self.exec.sets[s].timer.take().is_some() {
            self.exec.watch -= 1;
        }
        self.exec.sets[s].destroyed = true;
        Ok(())
    }

    pub(crate) fn empty_set(&mut self, set: SetId) -> Result<(), Error> {
        let s = self.set_local(set)?;
        while let Some(&t) = self.exec.sets[s].members.last() {
            self.remove_from_set(set, t)?;
        }
        Ok(())
    }

    pub(crate) fn add_to_set(&mut self, set: SetId, id: ThreadId) -> Result<(), Error> {
        let s = self.set_local(set)?;
        if self.local(id).is_none() {
            return Err(self.no_thread(id));
        }
        if let Some(other) = self.tcb(id).set {
            return Err(Error::AlreadyInSet { thread: id, set: self.exec.sets[other as usize].id });
        }
        // Charge up to now under the old membership, so the set only sees time from here on.
        self.charge_thread(id);
        self.tcb(id).set = Some(s as u32);
        self.exec.sets[s].members.push(id);
        let record = self.exec.sets[s].record_for(id);
        self.tcb(id).set_record = record;
        if self.tcb(id).state == State::Ready && self.exec.sets[s].suspended {
            self.hold(id);
        }
        self.member_changed(s, id);
        Ok(())
    }

    pub(crate) fn remove_from_set(&mut self, set: SetId, id: ThreadId) -> Result<(), Error> {
        let s = self.set_local(set)?;
        if !self.id_check.owns(id) {
            return Err(Error::ForeignThread(id));
        }
        let Some(pos) = self.exec.sets[s].members.iter().position(|&m| m == id) else {
            return Err(Error::NotInSet { thread: id, set });
        };
        self.charge_thread(id);
        self.exec.sets[s].members.swap_remove(pos);
        let t = self.tcb(id);
        t.set = None;
        let (held, demoted) = (t.state == State::Held, t.demoted);
        if demoted {
            self.tcb(id).demoted = false;
            self.refresh_urgency(id);
        }
        if held {
            self.make_ready(id, ReadyReason::Woken);
        }
        self.refresh_urgency(id);
        Ok(())
    }

    /// A thread joined a set: it takes on the set's enforcement and server deadline.
    pub(in crate::kernel) fn member_changed(&mut self, s: usize, id: ThreadId) {
        if self.exec.sets[s].budget.as_ref().is_some_and(|b| b.enforced == Enforcement::Demote) {
            self.tcb(id).demoted = true;
        }
        self.refresh_urgency(id);
    }

    // ----- clocks -----------------------------------------------------------------------------

    /// Charge the running thread of CPU `c` (and its set) up to now.
    pub(crate) fn charge(&mut self, c: usize) {
        let Some(id) = self.cpus[c].current else { return };
        let i = self.local(id).expect("the running thread is live");
        self.charge_at(c, i);
    }

    /// [`Kernel::charge`] of the running thread of CPU `c`, whose slot `i` the caller has at
    /// hand; nothing when the CPU has no running thread.
    #[inline(always)]
    pub(crate) fn charge_at(&mut self, c: usize, i: usize) {
        let now = self.now;
        let cpu = &mut self.cpus[c];
        if cpu.current.is_none() {
            return;
        }
        let ran = cpu.ran_until(now);
        let accounting = self.exec.accounting;
        if accounting == Accounting::Off {
            return;
        }
        let t = self.table.slots[i].as_mut().expect("live slot");
        debug_assert_eq!(cpu.current, Some(t.id), "slot {i} holds the running thread");
        t.add_cpu_time(ran);
        if accounting == Accounting::Group
            && let Some(s) = t.set
        {
            let set = &mut self.exec.sets[s as usize];
            set.consumed = set.consumed.saturating_add(ran);
            if set.budget.as_ref().is_some_and(|b| b.exhausted) {
                set.overran(t.set_record, ran);
            }
        }
    }

    pub(in crate::kernel) fn charge_thread(&mut self, id: ThreadId) {
        if let Some(c) = (0..self.cpus.len()).find(|&c| self.cpus[c].current == Some(id)) {
            self.charge(c);
        }
    }

    pub(in crate::kernel) fn charge_all(&mut self) {
        for c in 0..self.cpus.len() {
            self.charge(c);
        }
    }

    /// A thread's execution-time clock, including the running part.
    pub(crate) fn thread_clock(&mut self, id: ThreadId) -> Result<Duration, Error> {
        if self.local(id).is_none() {
            return Err(self.no_thread(id));
        }
        self.charge_thread(id);
        Ok(Duration::from_nanos(self.tcb(id).cpu_ns))
    }

    pub(crate) fn set_thread_clock(&mut self, id: ThreadId, value: Duration) -> Result<(), Error> {
        self.thread_clock(id)?;
        self.tcb(id).cpu_ns = nanos(value);
        Ok(())
    }

    /// A set's group clock, including its running members' parts.
    pub(crate) fn group_clock(&mut self, set: SetId) -> Result<Duration, Error> {
        let s = self.set_local(set)?;
        self.charge_all();
        Ok(Duration::from_nanos(self.exec.sets[s].consumed))
    }

    /// Set a group clock. A budget keeps what it had left: its limit moves with the clock.
    pub(crate) fn set_group_clock(&mut self, set: SetId, value: Duration) -> Result<(), Error> {
        let s = self.set_local(set)?;
        self.charge_all();
        let new = nanos(value);
        let old = self.exec.sets[s].consumed;
        self.exec.sets[s].consumed = new;
        if let Some(b) = self.exec.sets[s].budget.as_mut() {
            b.limit = (b.limit as i128 + new as i128 - old as i128).max(0) as u64;
            if let Some((t, at)) = b.active_since {
                b.active_since = Some((t, (at as i128 + new as i128 - old as i128).max(0) as u64));
            }
        }
        Ok(())
    }

    // ----- execution-time timers --------------------------------------------------------------

    pub(crate) fn arm_thread_timer(&mut self, id: ThreadId, at: Duration, handler: EventHandler) -> Result<(), Error> {
        if self.local(id).is_none() {
            return Err(self.no_thread(id));
        }
        let t = self.tcb(id);
        if t.cpu_timer.is_none() {
            self.exec.watch += 1;
        }
        self.tcb(id).cpu_timer = Some(ExecTimer { at: nanos(at), handler });
        Ok(())
    }

    pub(crate) fn arm_set_timer(&mut self, set: SetId, at: Duration, handler: EventHandler) -> Result<(), Error> {
        let s = self.set_local(set)?;
        if self.exec.sets[s].timer.is_none() {
            self.exec.watch += 1;
        }
        self.exec.sets[s].timer = Some(ExecTimer { at: nanos(at), handler });
        Ok(())
    }

    // ----- detection --------------------------------------------------------------------------

    /// The earliest instant an armed execution-time event is reached if the running threads
    /// keep running.
    pub(crate) fn next_exec_instant(&self) -> Option<Time> {
        if self.exec.watch == 0 || self.exec.accounting == Accounting::Off {
            return None;
        }
        let now = self.now;
        let mut next: Option<Time> = None;
        let mut earliest = |t: Time| next = Some(next.map_or(t, |n: Time| n.min(t)));
        for cpu in &self.cpus {
            let Some(id) = cpu.current else { continue };
            let t = self.table.slots[self.local(id).expect("live")].as_ref().expect("live");
            let running_part = nanos(now - cpu.charged_at);
            if let Some(timer) = &t.cpu_timer {
                let value = t.cpu_ns + running_part;
                earliest(now + Duration::from_nanos(timer.at.saturating_sub(value)));
            }
            let Some(s) = t.set.map(|s| s as usize) else { continue };
            if self.exec.accounting != Accounting::Group {
                continue;
            }
            let set = &self.exec.sets[s];
            let target = match (&set.timer, &set.budget) {
                (Some(tm), Some(b)) if !b.exhausted => tm.at.min(b.limit),
                (Some(tm), _) => tm.at,
                (None, Some(b)) if !b.exhausted => b.limit,
                _ => continue,
            };
            // Members running on several CPUs advance the group clock together.
            let (mut value, mut running) = (set.consumed, 0u64);
            for other in &self.cpus {
                if let Some(o) = other.current {
                    let ot = self.table.slots[self.local(o).expect("live")].as_ref().expect("live");
                    if ot.set == t.set {
                        value += nanos(now - other.charged_at);
                        running += 1;
                    }
                }
            }
            let left = target.saturating_sub(value);
            earliest(now + Duration::from_nanos(left.div_ceil(running.max(1))));
        }
        next
    }

    /// Fire every execution-time event whose clock has reached its value.
    pub(crate) fn check_exec_events(&mut self) {
        if self.exec.watch == 0 || self.exec.accounting == Accounting::Off {
            return;
        }
        self.charge_all();
        for c in 0..self.cpus.len() {
            let Some(id) = self.cpus[c].current else { continue };
            let t = self.tcb(id);
            if t.cpu_timer.as_ref().is_some_and(|tm| t.cpu_ns >= tm.at) {
                let timer = t.cpu_timer.take().expect("checked");
                self.exec.watch -= 1;
                self.run_exec_handler(c, timer.handler);
            }
        }
        for s in 0..self.exec.sets.len() {
            let consumed = self.exec.sets[s].consumed;
            if self.exec.sets[s].timer.as_ref().is_some_and(|tm| consumed >= tm.at) {
                let timer = self.exec.sets[s].timer.take().expect("checked");
                self.exec.watch -= 1;
                let c = self.set_cpu(s);
                self.run_exec_handler(c, timer.handler);
            }
            if self.exec.sets[s].budget.as_ref().is_some_and(|b| !b.exhausted && consumed >= b.limit) {
                self.exhaust(s);
            }
        }
    }

    /// Whether the running thread `id`'s set has a budget that runs out at this very instant
    /// and has not been found exhausted yet: its exhaustion is due in this instant's
    /// [`Kernel::check_exec_events`].
    pub(in crate::kernel) fn budget_runs_out_now(&mut self, id: ThreadId) -> bool {
        if self.exec.watch == 0 || self.exec.accounting != Accounting::Group {
            return false;
        }
        let t = self.tcb(id);
        let Some(s) = t.set.map(|s| s as usize) else { return false };
        if t.state != State::Running || self.exec.sets[s].budget.as_ref().is_none_or(|b| b.exhausted) {
            return false;
        }
        // Members running on other CPUs advance the group clock too.
        self.charge_all();
        let set = &self.exec.sets[s];
        set.budget.as_ref().is_some_and(|b| set.consumed >= b.limit)
    }

    pub(in crate::kernel) fn run_exec_handler(&mut self, c: usize, mut handler: EventHandler) {
        let mut releases = std::mem::take(&mut self.release_buf);
        releases.clear();
        let mut ecx =
            crate::kernel::EventCtx { now: self.now, ids: self.id_check, releases: &mut releases, cancelled: false };
        self.culprit.set(crate::kernel::Culprit::ExecTimer);
        handler(&mut ecx);
        self.culprit.set(crate::kernel::Culprit::Scheduler);
        let cpu = self.cpus[c].index;
        for &t in releases.iter() {
            // As for a timing event's handler: nobody can be answered, so it is counted and
            // traced.
            if self.request_release(t, cpu, self.now).is_err() {
                self.event_releases_refused += 1;
                self.trace(c, TraceKind::EventReleaseRefused, t, 0, EXEC_TIMER_RELEASE);
            }
        }
        self.release_buf = releases;
    }

    pub(crate) fn set_summaries(&self) -> Vec<SetSummary> {
        self.exec.sets.iter().map(SetState::summary).collect()
    }
}
