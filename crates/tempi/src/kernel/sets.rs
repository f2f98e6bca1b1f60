//! Execution-time accounting: thread and group clocks, execution-time timers, budgets and
//! their enforcement, the replenishment rules of servers.
//!
//! Mechanism only: when a budget runs out, its [`BudgetAction`] policy decides the
//! [`Enforcement`]; this module carries it out and lifts it at replenishment.
//!
//! Charging: at every switch the outgoing thread's CPU time since its dispatch is added to its
//! own clock and to its set's clock (`Kernel::charge`). Between switches the clocks are read as
//! charged value plus the running part. An armed execution-time event (a thread timer, a set
//! timer, a budget limit) is turned into the instant it will be reached if the running members
//! keep running; the kernel loop treats that instant like any timer, so in virtual time the
//! event fires exactly when consumption reaches the value. When a different thread is
//! dispatched the instant is recomputed from that thread's set: the group event "jumps" to the
//! member that runs, and a switch re-arms at most one group event.

use std::time::Duration;

use super::ctx::{ControlOp, ControlValue};
use super::{EventHandler, Kernel};
use crate::clock::{Clock, ClockMode};
use crate::error::Error;
use crate::policy::budget::{BudgetAction, Enforcement};
use crate::policy::sched::ReadyReason;
use crate::sets::{Accounting, Budget, BudgetEvent, BudgetEventKind, BudgetHandler, Replenishment, SetId, SetSummary};
use crate::thread::ThreadId;
use crate::time::{nanos, Time};
use crate::trace::{StopReason, TraceKind};

use super::tcb::State;
use super::timers::TimerKind;

/// An armed execution-time event: fires when a clock reaches `at` (ns of CPU time).
pub(crate) struct ExecTimer {
    pub(crate) at: u64,
    pub(crate) handler: EventHandler,
}

/// Replenishments a sporadic server has scheduled and not yet applied, oldest first.
const PENDING: usize = 16;

pub(crate) struct BudgetState {
    amount: u64,
    /// Group-clock value at which the budget runs out.
    limit: u64,
    exhausted: bool,
    enforced: Enforcement,
    rule: Replenishment,
    action: Box<dyn BudgetAction>,
    handler: Option<BudgetHandler>,
    /// Sporadic server: start of the current active interval and the group clock then.
    active_since: Option<(Time, u64)>,
    pending: usize,
    /// Consumption owed back once a pending replenishment fires.
    carry: u64,
    /// Constant bandwidth server: the server deadline.
    server_deadline: Option<Time>,
    /// Bumped when the budget is replaced, so old replenishment timers are ignored.
    epoch: u32,
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
}

impl SetState {
    pub(crate) fn new(id: SetId, name: String, capacity: usize) -> SetState {
        SetState {
            id,
            name,
            members: Vec::with_capacity(capacity),
            consumed: 0,
            timer: None,
            budget: None,
            suspended: false,
            exhaustions: 0,
            replenishments: 0,
            destroyed: false,
        }
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
        }
    }
}

impl<C: Clock> Kernel<C> {
    // ----- sets -------------------------------------------------------------------------------

    pub(crate) fn set_local(&self, set: SetId) -> Result<usize, Error> {
        let i = set.0.checked_sub(self.set_base).map(|i| i as usize);
        match i.and_then(|i| self.sets.get(i).map(|s| (i, s))) {
            Some((i, s)) if !s.destroyed => Ok(i),
            _ if set.tag() != self.runtime_tag() => Err(Error::ForeignSet(set)),
            _ => Err(Error::UnknownSet(set)),
        }
    }

    /// The tag this kernel's runtime puts in its thread and set ids.
    pub(crate) fn runtime_tag(&self) -> u16 {
        (self.slot_base >> ThreadId::TAG_SHIFT) as u16
    }

    /// Why `id` names no live thread of this kernel: an id of another runtime, or an
    /// unknown (or ended) thread.
    pub(crate) fn no_thread(&self, id: ThreadId) -> Error {
        self.no_thread_from(id, None)
    }

    /// [`Kernel::no_thread`], for a caller on CPU `from`: in real time, a thread of another
    /// CPU (whose kernel is another) is [`Error::CrossCpu`] with both CPUs.
    pub(crate) fn no_thread_from(&self, id: ThreadId, from: Option<usize>) -> Error {
        if id.tag() != self.runtime_tag() {
            return Error::ForeignThread(id);
        }
        if let (Some(from), ClockMode::Real) = (from, C::MODE) {
            // One kernel per CPU, each numbering `slots.len()` slots from `CPU × slots.len()`.
            let to = id.index() / self.slots.len();
            if to != from && to < self.total_cpus {
                return Error::CrossCpu { from, to };
            }
        }
        Error::UnknownThread(id)
    }

    pub(crate) fn create_set(&mut self, name: String) -> Result<SetId, Error> {
        if self.sets.len() == self.sets.capacity() {
            return Err(Error::TooManySets { max: self.sets.capacity() });
        }
        let id = SetId(self.set_base + self.sets.len() as u32);
        let cap = self.slots.len();
        self.sets.push(SetState::new(id, name, cap));
        Ok(id)
    }

    pub(crate) fn destroy_set(&mut self, set: SetId) -> Result<(), Error> {
        self.empty_set(set)?;
        let s = self.set_local(set)?;
        self.clear_budget(s);
        if self.sets[s].timer.take().is_some() {
            self.exec_watch -= 1;
        }
        self.sets[s].destroyed = true;
        Ok(())
    }

    pub(crate) fn empty_set(&mut self, set: SetId) -> Result<(), Error> {
        let s = self.set_local(set)?;
        while let Some(&t) = self.sets[s].members.last() {
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
            return Err(Error::AlreadyInSet { thread: id, set: self.sets[other as usize].id });
        }
        // Charge up to now under the old membership, so the set only sees time from here on.
        self.charge_thread(id);
        self.tcb(id).set = Some(s as u32);
        self.sets[s].members.push(id);
        if self.tcb(id).state == State::Ready && self.sets[s].suspended {
            self.hold(id);
        }
        self.member_changed(s, id);
        Ok(())
    }

    pub(crate) fn remove_from_set(&mut self, set: SetId, id: ThreadId) -> Result<(), Error> {
        let s = self.set_local(set)?;
        let Some(pos) = self.sets[s].members.iter().position(|&m| m == id) else {
            return Err(Error::NotInSet { thread: id, set });
        };
        self.charge_thread(id);
        self.sets[s].members.swap_remove(pos);
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
    fn member_changed(&mut self, s: usize, id: ThreadId) {
        if self.sets[s].budget.as_ref().is_some_and(|b| b.enforced == Enforcement::Demote) {
            self.tcb(id).demoted = true;
        }
        self.refresh_urgency(id);
    }

    // ----- clocks -----------------------------------------------------------------------------

    /// Charge the running thread of CPU `c` (and its set) up to now.
    pub(crate) fn charge(&mut self, c: usize) {
        let now = self.now;
        let cpu = &mut self.cpus[c];
        let Some(id) = cpu.current else { return };
        let ran = cpu.ran_until(now);
        let accounting = self.accounting;
        if accounting == Accounting::Off {
            return;
        }
        let t = self.tcb(id);
        t.add_cpu_time(ran);
        if accounting == Accounting::Group {
            if let Some(s) = t.set {
                self.sets[s as usize].consumed = self.sets[s as usize].consumed.saturating_add(ran);
            }
        }
    }

    fn charge_thread(&mut self, id: ThreadId) {
        if let Some(c) = (0..self.cpus.len()).find(|&c| self.cpus[c].current == Some(id)) {
            self.charge(c);
        }
    }

    fn charge_all(&mut self) {
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
        Ok(Duration::from_nanos(self.sets[s].consumed))
    }

    /// Set a group clock. A budget keeps what it had left: its limit moves with the clock.
    pub(crate) fn set_group_clock(&mut self, set: SetId, value: Duration) -> Result<(), Error> {
        let s = self.set_local(set)?;
        self.charge_all();
        let new = nanos(value);
        let old = self.sets[s].consumed;
        self.sets[s].consumed = new;
        if let Some(b) = self.sets[s].budget.as_mut() {
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
            self.exec_watch += 1;
        }
        self.tcb(id).cpu_timer = Some(ExecTimer { at: nanos(at), handler });
        Ok(())
    }

    pub(crate) fn arm_set_timer(&mut self, set: SetId, at: Duration, handler: EventHandler) -> Result<(), Error> {
        let s = self.set_local(set)?;
        if self.sets[s].timer.is_none() {
            self.exec_watch += 1;
        }
        self.sets[s].timer = Some(ExecTimer { at: nanos(at), handler });
        Ok(())
    }

    // ----- budgets ----------------------------------------------------------------------------

    pub(crate) fn set_budget(&mut self, set: SetId, budget: Budget) -> Result<(), Error> {
        budget.validate()?;
        let s = self.set_local(set)?;
        self.charge_all();
        let old_epoch = self.sets[s].budget.as_ref().map_or(0, |b| b.epoch);
        self.clear_budget(s);
        let amount = nanos(budget.amount);
        let now = self.now;
        let consumed = self.sets[s].consumed;
        let server_deadline = match budget.replenish {
            Replenishment::ConstantBandwidth { period } => Some(now + period),
            _ => None,
        };
        let epoch = old_epoch.wrapping_add(1);
        self.sets[s].budget = Some(BudgetState {
            amount,
            limit: consumed.saturating_add(amount),
            exhausted: false,
            enforced: Enforcement::Nothing,
            rule: budget.replenish,
            action: budget.action,
            handler: budget.handler,
            active_since: None,
            pending: 0,
            carry: 0,
            server_deadline,
            epoch,
        });
        self.exec_watch += 1;
        if let Replenishment::Periodic { period } = budget.replenish {
            self.timers.push(now + period, TimerKind::Replenish(s as u32, epoch, u64::MAX));
        }
        if matches!(budget.replenish, Replenishment::Sporadic { .. }) && self.set_active(s) {
            self.sets[s].budget.as_mut().expect("just set").active_since = Some((now, consumed));
        }
        for i in 0..self.sets[s].members.len() {
            let m = self.sets[s].members[i];
            self.refresh_urgency(m);
        }
        Ok(())
    }

    fn clear_budget(&mut self, s: usize) {
        if self.sets[s].budget.is_none() {
            return;
        }
        self.lift(s);
        self.sets[s].budget = None;
        self.exec_watch -= 1;
        for i in 0..self.sets[s].members.len() {
            let m = self.sets[s].members[i];
            self.refresh_urgency(m);
        }
    }

    /// Budget left, and whether it is exhausted.
    pub(crate) fn budget_left(&mut self, set: SetId) -> Result<(Duration, bool), Error> {
        let s = self.set_local(set)?;
        self.charge_all();
        let consumed = self.sets[s].consumed;
        let b = self.sets[s].budget.as_ref().ok_or(Error::NoBudget(set))?;
        // Reaching the limit is exhaustion even at the very instant, before the kernel has
        // run the action for it.
        Ok((Duration::from_nanos(b.limit.saturating_sub(consumed)), b.exhausted || consumed >= b.limit))
    }

    /// Ada's `Replenish`: the budget becomes `to`.
    pub(crate) fn replenish_to(&mut self, set: SetId, to: Duration) -> Result<(), Error> {
        let s = self.set_local(set)?;
        self.charge_all();
        let consumed = self.sets[s].consumed;
        self.sets[s].budget.as_mut().ok_or(Error::NoBudget(set))?.limit = consumed.saturating_add(nanos(to));
        self.after_refill(s);
        Ok(())
    }

    /// Ada's `Add`: the budget grows (or shrinks, with a negative `delta_ns`) by `delta_ns`.
    pub(crate) fn add_budget(&mut self, set: SetId, delta_ns: i64) -> Result<(), Error> {
        let s = self.set_local(set)?;
        self.charge_all();
        let consumed = self.sets[s].consumed;
        let b = self.sets[s].budget.as_mut().ok_or(Error::NoBudget(set))?;
        b.limit = (b.limit as i128 + delta_ns as i128).max(consumed as i128) as u64;
        if delta_ns > 0 {
            self.after_refill(s);
        }
        Ok(())
    }

    fn budget_event(&self, s: usize, kind: BudgetEventKind) -> BudgetEvent {
        let set = &self.sets[s];
        let left = set.budget.as_ref().map_or(0, |b| b.limit.saturating_sub(set.consumed));
        BudgetEvent {
            set: set.id,
            kind,
            at: self.now,
            consumed: Duration::from_nanos(set.consumed),
            remaining: Duration::from_nanos(left),
        }
    }

    fn trace_set(&mut self, s: usize, kind: TraceKind, arg: u64) {
        let placeholder = ThreadId::new(u32::MAX, 0);
        let id = self.sets[s].id.index() as u32;
        let c = self.set_cpu(s);
        self.trace(c, kind, placeholder, id, arg);
    }

    /// The budget of set `s` just ran out.
    fn exhaust(&mut self, s: usize) {
        self.sets[s].exhaustions += 1;
        let consumed = self.sets[s].consumed;
        self.trace_set(s, TraceKind::BudgetExhausted, consumed);
        let event = self.budget_event(s, BudgetEventKind::Exhausted);
        let b = self.sets[s].budget.as_mut().expect("exhausting a budget");
        b.exhausted = true;
        self.culprit = super::Culprit::Budget(s as u32);
        if let Some(h) = b.handler.as_mut() {
            h(&event);
        }
        let enforcement = b.action.on_exhausted(&event);
        self.culprit = super::Culprit::Policy;
        match b.rule {
            Replenishment::ConstantBandwidth { period } => {
                // Postpone the server deadline and refill at once: the bandwidth stays bounded
                // because the members now compete with a later deadline.
                b.limit = consumed.saturating_add(b.amount);
                b.exhausted = false;
                b.server_deadline = Some(b.server_deadline.unwrap_or(self.now) + period);
                self.sets[s].replenishments += 1;
                for i in 0..self.sets[s].members.len() {
                    let m = self.sets[s].members[i];
                    self.refresh_urgency(m);
                }
                self.enforce(s, enforcement);
            }
            Replenishment::Sporadic { period } => {
                if let Some((start, at)) = b.active_since.take() {
                    self.schedule_sporadic(s, start + period, consumed - at);
                }
                self.enforce(s, enforcement);
            }
            Replenishment::Manual | Replenishment::Periodic { .. } => self.enforce(s, enforcement),
        }
    }

    fn schedule_sporadic(&mut self, s: usize, at: Time, amount: u64) {
        let b = self.sets[s].budget.as_mut().expect("sporadic budget");
        if amount == 0 {
            return;
        }
        // Bounded, so the timer queue never grows: past PENDING outstanding replenishments the
        // amount rides on the next one instead (it comes back later than the rule allows,
        // never earlier).
        if b.pending >= PENDING {
            b.carry += amount;
            return;
        }
        b.pending += 1;
        let epoch = b.epoch;
        self.timers.push(at, TimerKind::Replenish(s as u32, epoch, amount));
    }

    /// A replenishment timer fired.
    pub(crate) fn on_replenish_timer(&mut self, s: usize, epoch: u32, amount: u64, at: Time) {
        let Some(b) = self.sets.get(s).and_then(|set| set.budget.as_ref()) else { return };
        if b.epoch != epoch || self.sets[s].destroyed {
            return;
        }
        self.charge_all();
        let consumed = self.sets[s].consumed;
        let b = self.sets[s].budget.as_mut().expect("checked");
        match b.rule {
            Replenishment::Periodic { period } => {
                b.limit = consumed.saturating_add(b.amount);
                self.timers.push(at + period, TimerKind::Replenish(s as u32, epoch, u64::MAX));
            }
            Replenishment::Sporadic { .. } => {
                b.pending = b.pending.saturating_sub(1);
                let amount = amount + std::mem::take(&mut b.carry);
                // Never more than the full amount available at once.
                b.limit = b.limit.saturating_add(amount).min(consumed.saturating_add(b.amount));
            }
            Replenishment::Manual | Replenishment::ConstantBandwidth { .. } => return,
        }
        self.sets[s].replenishments += 1;
        self.after_refill(s);
    }

    /// Budget came back: lift enforcement if it is no longer exhausted, tell everyone.
    fn after_refill(&mut self, s: usize) {
        let consumed = self.sets[s].consumed;
        let b = self.sets[s].budget.as_mut().expect("refilled budget");
        let left = b.limit.saturating_sub(consumed);
        self.trace_set(s, TraceKind::BudgetReplenished, left);
        let b = self.sets[s].budget.as_mut().expect("refilled budget");
        let was_exhausted = b.exhausted;
        if was_exhausted && left > 0 {
            b.exhausted = false;
        }
        let event = self.budget_event(s, BudgetEventKind::Replenished);
        let b = self.sets[s].budget.as_mut().expect("refilled budget");
        self.culprit = super::Culprit::Budget(s as u32);
        if let Some(h) = b.handler.as_mut() {
            h(&event);
        }
        self.culprit = super::Culprit::Policy;
        if was_exhausted && left > 0 {
            self.lift(s);
            let b = self.sets[s].budget.as_mut().expect("refilled budget");
            self.culprit = super::Culprit::Budget(s as u32);
            b.action.on_replenished(&event);
            self.culprit = super::Culprit::Policy;
            if matches!(b.rule, Replenishment::Sporadic { .. }) && self.set_active(s) {
                let now = self.now;
                self.sets[s].budget.as_mut().expect("sporadic").active_since = Some((now, consumed));
            }
        }
    }

    /// Carry out an enforcement on every member.
    fn enforce(&mut self, s: usize, enforcement: Enforcement) {
        if let Some(b) = self.sets[s].budget.as_mut() {
            b.enforced = enforcement;
        }
        let members = self.sets[s].members.len();
        match enforcement {
            Enforcement::Nothing => {}
            Enforcement::Demote => {
                for i in 0..members {
                    let m = self.sets[s].members[i];
                    self.tcb(m).demoted = true;
                    self.refresh_urgency(m);
                }
            }
            Enforcement::Suspend => {
                self.sets[s].suspended = true;
                for i in 0..members {
                    let m = self.sets[s].members[i];
                    match self.tcb(m).state {
                        State::Running => {
                            let c = self.cpu_of(m);
                            self.stop_running(c, StopReason::Suspended);
                            self.tcb(m).state = State::Held;
                        }
                        State::Ready => self.hold(m),
                        _ => {}
                    }
                }
            }
            Enforcement::Kill => {
                for i in 0..members {
                    let m = self.sets[s].members[i];
                    self.kill(m);
                }
            }
        }
    }

    /// Undo the enforcement in force.
    fn lift(&mut self, s: usize) {
        let Some(b) = self.sets[s].budget.as_mut() else { return };
        let enforced = std::mem::take(&mut b.enforced);
        match enforced {
            Enforcement::Demote => {
                for i in 0..self.sets[s].members.len() {
                    let m = self.sets[s].members[i];
                    self.tcb(m).demoted = false;
                    self.refresh_urgency(m);
                }
            }
            Enforcement::Suspend => {
                self.sets[s].suspended = false;
                for i in 0..self.sets[s].members.len() {
                    let m = self.sets[s].members[i];
                    if self.tcb(m).state == State::Held {
                        self.make_ready(m, ReadyReason::Woken);
                    }
                }
            }
            Enforcement::Nothing | Enforcement::Kill => {}
        }
    }

    /// The local CPU of a set's first member (events of an empty set go to the first CPU).
    fn set_cpu(&mut self, s: usize) -> usize {
        match self.sets[s].members.first() {
            Some(&m) => self.cpu_of(m),
            None => 0,
        }
    }

    /// Take a ready thread out of its scheduler's queue until its set is released.
    fn hold(&mut self, id: ThreadId) {
        let c = self.cpu_of(id);
        self.cpus[c].scheduler.on_removed(id);
        self.tcb(id).state = State::Held;
    }

    /// Whether a member of set `s` is ready or running.
    pub(crate) fn set_active(&self, s: usize) -> bool {
        self.sets[s].members.iter().any(|&m| {
            let t = self.slots[self.local(m).expect("member is live")].as_ref().expect("live");
            matches!(t.state, State::Ready | State::Running)
        })
    }

    /// A member became ready: sporadic servers start an active interval, constant bandwidth
    /// servers may take a fresh deadline. Returns whether the thread must be held instead.
    pub(crate) fn member_ready(&mut self, id: ThreadId) -> bool {
        let Some(s) = self.tcb(id).set.map(|s| s as usize) else { return false };
        if self.sets[s].suspended && !self.tcb(id).kill_pending {
            return true;
        }
        let now = self.now;
        let others_active = self.sets[s].members.iter().any(|&m| {
            m != id && {
                let t = self.slots[self.local(m).expect("member is live")].as_ref().expect("live");
                matches!(t.state, State::Ready | State::Running)
            }
        });
        if others_active {
            return false;
        }
        self.charge_all();
        let consumed = self.sets[s].consumed;
        let Some(b) = self.sets[s].budget.as_mut() else { return false };
        match b.rule {
            Replenishment::Sporadic { .. } if !b.exhausted && b.active_since.is_none() => {
                b.active_since = Some((now, consumed));
            }
            Replenishment::ConstantBandwidth { period } => {
                // CBS arrival rule: keep the current (deadline, budget) pair only if it does not
                // exceed the server bandwidth from now on; otherwise start afresh.
                let left = b.limit.saturating_sub(consumed) as u128;
                let d = b.server_deadline.unwrap_or(now);
                let horizon = nanos(d.saturating_since(now)) as u128;
                if d <= now || left * nanos(period) as u128 >= horizon * b.amount as u128 {
                    b.server_deadline = Some(now + period);
                    b.limit = consumed.saturating_add(b.amount);
                    for i in 0..self.sets[s].members.len() {
                        let m = self.sets[s].members[i];
                        if m != id {
                            self.refresh_urgency(m);
                        }
                    }
                }
            }
            _ => {}
        }
        false
    }

    /// A member stopped being ready or running: a sporadic server whose members are all idle
    /// schedules the return of what it consumed.
    pub(crate) fn member_idle(&mut self, id: ThreadId) {
        let Some(s) = self.tcb(id).set.map(|s| s as usize) else { return };
        let sporadic = self.sets[s].budget.as_ref().and_then(|b| match b.rule {
            Replenishment::Sporadic { period } => b.active_since.map(|(t, at)| (t, at, period)),
            _ => None,
        });
        let Some((start, at, period)) = sporadic else { return };
        if self.set_active(s) {
            return;
        }
        let consumed = self.sets[s].consumed;
        self.sets[s].budget.as_mut().expect("sporadic").active_since = None;
        self.schedule_sporadic(s, start + period, consumed.saturating_sub(at));
    }

    /// The urgency a server imposes on its members, if any (constant bandwidth servers).
    pub(crate) fn server_deadline(&self, id: ThreadId) -> Option<Time> {
        let t = self.slots[self.local(id)?].as_ref()?;
        let b = self.sets[t.set? as usize].budget.as_ref()?;
        match b.rule {
            Replenishment::ConstantBandwidth { .. } => b.server_deadline,
            _ => None,
        }
    }

    // ----- detection --------------------------------------------------------------------------

    /// The earliest instant an armed execution-time event is reached if the running threads
    /// keep running.
    pub(crate) fn next_exec_instant(&self) -> Option<Time> {
        if self.exec_watch == 0 || self.accounting == Accounting::Off {
            return None;
        }
        let now = self.now;
        let mut next: Option<Time> = None;
        let mut earliest = |t: Time| next = Some(next.map_or(t, |n: Time| n.min(t)));
        for cpu in &self.cpus {
            let Some(id) = cpu.current else { continue };
            let t = self.slots[self.local(id).expect("live")].as_ref().expect("live");
            let running_part = nanos(now - cpu.charged_at);
            if let Some(timer) = &t.cpu_timer {
                let value = t.cpu_ns + running_part;
                earliest(now + Duration::from_nanos(timer.at.saturating_sub(value)));
            }
            let Some(s) = t.set.map(|s| s as usize) else { continue };
            if self.accounting != Accounting::Group {
                continue;
            }
            let set = &self.sets[s];
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
                    let ot = self.slots[self.local(o).expect("live")].as_ref().expect("live");
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
        if self.exec_watch == 0 || self.accounting == Accounting::Off {
            return;
        }
        self.charge_all();
        for c in 0..self.cpus.len() {
            let Some(id) = self.cpus[c].current else { continue };
            let t = self.tcb(id);
            if t.cpu_timer.as_ref().is_some_and(|tm| t.cpu_ns >= tm.at) {
                let timer = t.cpu_timer.take().expect("checked");
                self.exec_watch -= 1;
                self.run_exec_handler(c, timer.handler);
            }
        }
        for s in 0..self.sets.len() {
            let consumed = self.sets[s].consumed;
            if self.sets[s].timer.as_ref().is_some_and(|tm| consumed >= tm.at) {
                let timer = self.sets[s].timer.take().expect("checked");
                self.exec_watch -= 1;
                let c = self.set_cpu(s);
                self.run_exec_handler(c, timer.handler);
            }
            if self.sets[s].budget.as_ref().is_some_and(|b| !b.exhausted && consumed >= b.limit) {
                self.exhaust(s);
            }
        }
    }

    fn run_exec_handler(&mut self, c: usize, mut handler: EventHandler) {
        let mut releases = std::mem::take(&mut self.release_buf);
        releases.clear();
        let tag = self.runtime_tag();
        let mut ecx = super::EventCtx { now: self.now, tag, releases: &mut releases, cancelled: false };
        self.culprit = super::Culprit::ExecTimer;
        handler(&mut ecx);
        self.culprit = super::Culprit::Policy;
        let cpu = self.cpus[c].index;
        for &t in releases.iter() {
            let _ = self.request_release(t, cpu);
        }
        self.release_buf = releases;
    }

    /// End thread `id` at its next task boundary.
    pub(crate) fn kill(&mut self, id: ThreadId) {
        let t = self.tcb(id);
        if t.kill_pending {
            return;
        }
        t.kill_pending = true;
        if t.holds_nothing() {
            t.work_left = 0;
            t.in_work = false;
        }
        match t.state {
            State::Blocked(super::tcb::Wait::Lock(_)) if !t.holds_nothing() => {}
            State::Sleeping | State::Blocked(_) => self.wake(id),
            State::Dormant | State::Held => self.make_ready(id, ReadyReason::Woken),
            State::Running | State::Ready => {}
        }
    }

    /// Carry out a set, clock or budget operation asked for by a thread.
    pub(crate) fn control(&mut self, op: ControlOp) -> Result<ControlValue, Error> {
        use ControlValue::{Bool, Members, Unit};
        Ok(match op {
            ControlOp::CreateSet(name) => ControlValue::Set(self.create_set(name)?),
            ControlOp::DestroySet(set) => self.destroy_set(set).map(|_| Unit)?,
            ControlOp::EmptySet(set) => self.empty_set(set).map(|_| Unit)?,
            ControlOp::AddToSet(set, t) => self.add_to_set(set, t).map(|_| Unit)?,
            ControlOp::RemoveFromSet(set, t) => self.remove_from_set(set, t).map(|_| Unit)?,
            ControlOp::SetContains(set, t) => Bool(self.sets[self.set_local(set)?].members.contains(&t)),
            ControlOp::SetMembers(set) => Members(self.sets[self.set_local(set)?].members.clone()),
            ControlOp::SetOf(t) => {
                if self.local(t).is_none() {
                    return Err(self.no_thread(t));
                }
                ControlValue::SetOf(self.tcb(t).set.map(|s| self.sets[s as usize].id))
            }
            ControlOp::ThreadClock(t) => ControlValue::Time(self.thread_clock(t)?),
            ControlOp::SetThreadClock(t, v) => self.set_thread_clock(t, v).map(|_| Unit)?,
            ControlOp::GroupClock(set) => ControlValue::Time(self.group_clock(set)?),
            ControlOp::SetGroupClock(set, v) => self.set_group_clock(set, v).map(|_| Unit)?,
            ControlOp::ThreadTimer(t, at, h) => self.arm_thread_timer(t, at, h).map(|_| Unit)?,
            ControlOp::SetTimer(set, at, h) => self.arm_set_timer(set, at, h).map(|_| Unit)?,
            ControlOp::SetBudget(set, b) => self.set_budget(set, b).map(|_| Unit)?,
            ControlOp::BudgetLeft(set) => {
                let (left, exhausted) = self.budget_left(set)?;
                ControlValue::Budget(left, exhausted)
            }
            ControlOp::Replenish(set, to) => self.replenish_to(set, to).map(|_| Unit)?,
            ControlOp::AddBudget(set, d) => self.add_budget(set, d).map(|_| Unit)?,
            ControlOp::CreateLock(spec) => ControlValue::Lock(self.create_lock(spec)?),
            ControlOp::CreateCond(cpu) => ControlValue::Cond(self.create_cond(cpu)?),
            ControlOp::CreateSem(spec) => ControlValue::Sem(self.create_sem(spec)?),
        })
    }

    pub(crate) fn set_summaries(&self) -> Vec<SetSummary> {
        self.sets.iter().map(SetState::summary).collect()
    }
}
