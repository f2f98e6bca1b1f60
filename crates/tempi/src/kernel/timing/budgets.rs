//! Budgets of thread sets: setting and querying them, exhaustion and the enforcement its
//! [`BudgetAction`] decides, replenishment (periodic, sporadic server, constant bandwidth
//! server) and lifting the enforcement, and what a set's members may do while it is enforced.
//!
//! Must not: charge CPU time or detect when a clock reaches a value (`sets.rs` does), or decide
//! an enforcement itself.

use std::time::Duration;

use crate::clock::Clock;
use crate::error::Error;
use crate::kernel::threads::tcb::State;
use crate::kernel::timing::timers::TimerKind;
use crate::kernel::Kernel;
use crate::plain::SetId;
use crate::plain::ThreadId;
use crate::plain::{BudgetEvent, BudgetEventKind};
use crate::plain::{StopReason, TraceKind};
use crate::policy::budget::{BudgetAction, Enforcement};
use crate::policy::sched::ReadyReason;
use crate::sets::{Budget, BudgetHandler, Replenishment};
use crate::time::{nanos, Time};

/// Replenishments a sporadic server has scheduled and not yet applied, oldest first.
const PENDING: usize = 16;

pub(crate) struct BudgetState {
    pub(in crate::kernel) amount: u64,
    /// Group-clock value at which the budget runs out.
    pub(in crate::kernel) limit: u64,
    pub(in crate::kernel) exhausted: bool,
    pub(in crate::kernel) enforced: Enforcement,
    pub(in crate::kernel) rule: Replenishment,
    pub(in crate::kernel) action: Box<dyn BudgetAction>,
    pub(in crate::kernel) handler: Option<BudgetHandler>,
    /// Sporadic server: start of the current active interval and the group clock then.
    pub(in crate::kernel) active_since: Option<(Time, u64)>,
    pub(in crate::kernel) pending: usize,
    /// Consumption owed back once a pending replenishment fires.
    pub(in crate::kernel) carry: u64,
    /// Constant bandwidth server: the server deadline.
    pub(in crate::kernel) server_deadline: Option<Time>,
    /// Bumped when the budget is replaced, so old replenishment timers are ignored.
    pub(in crate::kernel) epoch: u32,
}

impl<C: Clock> Kernel<C> {
    pub(crate) fn set_budget(&mut self, set: SetId, budget: Budget) -> Result<(), Error> {
        budget.validate()?;
        let s = self.set_local(set)?;
        self.charge_all();
        let old_epoch = self.exec.sets[s].budget.as_ref().map_or(0, |b| b.epoch);
        self.clear_budget(s);
        let amount = nanos(budget.amount);
        let now = self.now;
        let consumed = self.exec.sets[s].consumed;
        let server_deadline = match budget.replenish {
            Replenishment::ConstantBandwidth { period } => Some(now + period),
            _ => None,
        };
        let epoch = old_epoch.wrapping_add(1);
        self.exec.sets[s].budget = Some(BudgetState {
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
        self.exec.watch += 1;
        if let Replenishment::Periodic { period } = budget.replenish {
            self.timers.push(now + period, TimerKind::Replenish(s as u32, epoch, u64::MAX));
        }
        if matches!(budget.replenish, Replenishment::Sporadic { .. }) && self.set_active(s) {
            self.exec.sets[s].budget.as_mut().expect("just set").active_since = Some((now, consumed));
        }
        for i in 0..self.exec.sets[s].members.len() {
            let m = self.exec.sets[s].members[i];
            self.refresh_urgency(m);
        }
        Ok(())
    }

    pub(in crate::kernel) fn clear_budget(&mut self, s: usize) {
        if self.exec.sets[s].budget.is_none() {
            return;
        }
        self.lift(s);
        self.exec.sets[s].budget = None;
        self.exec.watch -= 1;
        for i in 0..self.exec.sets[s].members.len() {
            let m = self.exec.sets[s].members[i];
            self.refresh_urgency(m);
        }
    }

    /// Budget left, and whether it is exhausted.
    pub(crate) fn budget_left(&mut self, set: SetId) -> Result<(Duration, bool), Error> {
        let s = self.set_local(set)?;
        self.charge_all();
        let consumed = self.exec.sets[s].consumed;
        let b = self.exec.sets[s].budget.as_ref().ok_or(Error::NoBudget(set))?;
        // Reaching the limit is exhaustion even at the very instant, before the kernel has
        // run the action for it.
        Ok((Duration::from_nanos(b.limit.saturating_sub(consumed)), b.exhausted || consumed >= b.limit))
    }

    /// Ada's `Replenish`: the budget becomes `to`.
    pub(crate) fn replenish_to(&mut self, set: SetId, to: Duration) -> Result<(), Error> {
        let s = self.set_local(set)?;
        self.charge_all();
        let consumed = self.exec.sets[s].consumed;
        self.exec.sets[s].budget.as_mut().ok_or(Error::NoBudget(set))?.limit = consumed.saturating_add(nanos(to));
        self.after_refill(s);
        Ok(())
    }

    /// Ada's `Add`: the budget grows (or shrinks, with a negative `delta_ns`) by `delta_ns`.
    pub(crate) fn add_budget(&mut self, set: SetId, delta_ns: i64) -> Result<(), Error> {
        let s = self.set_local(set)?;
        self.charge_all();
        let consumed = self.exec.sets[s].consumed;
        let b = self.exec.sets[s].budget.as_mut().ok_or(Error::NoBudget(set))?;
        b.limit = (b.limit as i128 + delta_ns as i128).max(consumed as i128) as u64;
        if delta_ns > 0 {
            self.after_refill(s);
        }
        Ok(())
    }

    pub(in crate::kernel) fn budget_event(&self, s: usize, kind: BudgetEventKind) -> BudgetEvent {
        let set = &self.exec.sets[s];
        let left = set.budget.as_ref().map_or(0, |b| b.limit.saturating_sub(set.consumed));
        BudgetEvent {
            set: set.id,
            kind,
            at: self.now,
            consumed: Duration::from_nanos(set.consumed),
            remaining: Duration::from_nanos(left),
        }
    }

    pub(in crate::kernel) fn trace_set(&mut self, s: usize, kind: TraceKind, arg: u64) {
        let placeholder = ThreadId::new(u32::MAX, 0);
        let id = self.exec.sets[s].id.index() as u32;
        let c = self.set_cpu(s);
        self.trace(c, kind, placeholder, id, arg);
    }

    /// The budget of set `s` just ran out.
    pub(in crate::kernel) fn exhaust(&mut self, s: usize) {
        self.exec.sets[s].exhaustions += 1;
        // Which members were running when it ran out (no allocation: one pass over the CPUs).
        let mut running = false;
        for c in 0..self.cpus.len() {
            let Some(m) = self.cpus[c].current else { continue };
            let Some(t) = self.local(m).and_then(|i| self.table.slots[i].as_ref()) else { continue };
            if t.set == Some(s as u32) {
                let record = t.set_record;
                self.exec.sets[s].counts(record).exhaustions += 1;
                running = true;
            }
        }
        if !running {
            self.exec.sets[s].exhaustions_idle += 1;
        }
        let consumed = self.exec.sets[s].consumed;
        self.trace_set(s, TraceKind::BudgetExhausted, consumed);
        let event = self.budget_event(s, BudgetEventKind::Exhausted);
        let b = self.exec.sets[s].budget.as_mut().expect("exhausting a budget");
        b.exhausted = true;
        self.culprit.set(crate::kernel::Culprit::Budget(s as u32));
        if let Some(h) = b.handler.as_mut() {
            h(&event);
        }
        let enforcement = b.action.on_exhausted(&event);
        self.culprit.set(crate::kernel::Culprit::Scheduler);
        match b.rule {
            Replenishment::ConstantBandwidth { period } => {
                // Postpone the server deadline and refill at once: the bandwidth stays bounded
                // because the members now compete with a later deadline.
                b.limit = consumed.saturating_add(b.amount);
                b.exhausted = false;
                b.server_deadline = Some(b.server_deadline.unwrap_or(self.now) + period);
                self.exec.sets[s].replenishments += 1;
                for i in 0..self.exec.sets[s].members.len() {
                    let m = self.exec.sets[s].members[i];
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

    pub(in crate::kernel) fn schedule_sporadic(&mut self, s: usize, at: Time, amount: u64) {
        let b = self.exec.sets[s].budget.as_mut().expect("sporadic budget");
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
        let Some(b) = self.exec.sets.get(s).and_then(|set| set.budget.as_ref()) else { return };
        if b.epoch != epoch || self.exec.sets[s].destroyed {
            return;
        }
        self.charge_all();
        let consumed = self.exec.sets[s].consumed;
        let b = self.exec.sets[s].budget.as_mut().expect("checked");
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
        self.exec.sets[s].replenishments += 1;
        self.after_refill(s);
    }

    /// Budget came back: lift enforcement if it is no longer exhausted, tell everyone.
    pub(in crate::kernel) fn after_refill(&mut self, s: usize) {
        let consumed = self.exec.sets[s].consumed;
        let b = self.exec.sets[s].budget.as_mut().expect("refilled budget");
        let left = b.limit.saturating_sub(consumed);
        self.trace_set(s, TraceKind::BudgetReplenished, left);
        let b = self.exec.sets[s].budget.as_mut().expect("refilled budget");
        let was_exhausted = b.exhausted;
        if was_exhausted && left > 0 {
            b.exhausted = false;
        }
        let event = self.budget_event(s, BudgetEventKind::Replenished);
        let b = self.exec.sets[s].budget.as_mut().expect("refilled budget");
        self.culprit.set(crate::kernel::Culprit::Budget(s as u32));
        if let Some(h) = b.handler.as_mut() {
            h(&event);
        }
        self.culprit.set(crate::kernel::Culprit::Scheduler);
        if was_exhausted && left > 0 {
            self.lift(s);
            let b = self.exec.sets[s].budget.as_mut().expect("refilled budget");
            self.culprit.set(crate::kernel::Culprit::Budget(s as u32));
            b.action.on_replenished(&event);
            self.culprit.set(crate::kernel::Culprit::Scheduler);
            if matches!(b.rule, Replenishment::Sporadic { .. }) && self.set_active(s) {
                let now = self.now;
                self.exec.sets[s].budget.as_mut().expect("sporadic").active_since = Some((now, consumed));
            }
        }
    }

    /// Carry out an enforcement on every member.
    pub(in crate::kernel) fn enforce(&mut self, s: usize, enforcement: Enforcement) {
        if let Some(b) = self.exec.sets[s].budget.as_mut() {
            b.enforced = enforcement;
        }
        let members = self.exec.sets[s].members.len();
        match enforcement {
            Enforcement::Nothing => {}
            Enforcement::Demote => {
                for i in 0..members {
                    let m = self.exec.sets[s].members[i];
                    self.tcb(m).demoted = true;
                    self.refresh_urgency(m);
                }
            }
            Enforcement::Suspend => {
                self.exec.sets[s].suspended = true;
                for i in 0..members {
                    let m = self.exec.sets[s].members[i];
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
                    let m = self.exec.sets[s].members[i];
                    // A running member is in its current runtime call (`work`): it ends at this
                    // instant, before anything else runs (`Kernel::settle_budgets`).
                    self.exec.budget_killed_running |= self.tcb(m).state == State::Running;
                    self.kill(m);
                }
            }
        }
    }

    /// Undo the enforcement in force.
    pub(in crate::kernel) fn lift(&mut self, s: usize) {
        let Some(b) = self.exec.sets[s].budget.as_mut() else { return };
        let enforced = std::mem::take(&mut b.enforced);
        match enforced {
            Enforcement::Demote => {
                for i in 0..self.exec.sets[s].members.len() {
                    let m = self.exec.sets[s].members[i];
                    self.tcb(m).demoted = false;
                    self.refresh_urgency(m);
                }
            }
            Enforcement::Suspend => {
                self.exec.sets[s].suspended = false;
                for i in 0..self.exec.sets[s].members.len() {
                    let m = self.exec.sets[s].members[i];
                    if self.tcb(m).state == State::Held {
                        self.make_ready(m, ReadyReason::Woken);
                    }
                }
            }
            Enforcement::Nothing | Enforcement::Kill => {}
        }
    }

    /// The local CPU of a set's first member (events of an empty set go to the first CPU).
    pub(in crate::kernel) fn set_cpu(&mut self, s: usize) -> usize {
        match self.exec.sets[s].members.first() {
            Some(&m) => self.cpu_of(m),
            None => 0,
        }
    }

    /// Take a ready thread out of its scheduler's queue until its set is released.
    pub(in crate::kernel) fn hold(&mut self, id: ThreadId) {
        let c = self.cpu_of(id);
        self.sched_mut(c).on_removed(id);
        self.tcb(id).state = State::Held;
    }

    /// Whether a member of set `s` is ready or running.
    pub(crate) fn set_active(&self, s: usize) -> bool {
        self.exec.sets[s].members.iter().any(|&m| {
            let t = self.table.slots[self.local(m).expect("member is live")].as_ref().expect("live");
            matches!(t.state, State::Ready | State::Running)
        })
    }

    /// A member became ready: sporadic servers start an active interval, constant bandwidth
    /// servers may take a fresh deadline. Returns whether the thread must be held instead.
    pub(crate) fn member_ready(&mut self, id: ThreadId) -> bool {
        let Some(s) = self.tcb(id).set.map(|s| s as usize) else { return false };
        if self.exec.sets[s].suspended && !self.tcb(id).kill_pending {
            return true;
        }
        let now = self.now;
        let others_active = self.exec.sets[s].members.iter().any(|&m| {
            m != id && {
                let t = self.table.slots[self.local(m).expect("member is live")].as_ref().expect("live");
                matches!(t.state, State::Ready | State::Running)
            }
        });
        if others_active {
            return false;
        }
        self.charge_all();
        let consumed = self.exec.sets[s].consumed;
        let Some(b) = self.exec.sets[s].budget.as_mut() else { return false };
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
                    for i in 0..self.exec.sets[s].members.len() {
                        let m = self.exec.sets[s].members[i];
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
        let sporadic = self.exec.sets[s].budget.as_ref().and_then(|b| match b.rule {
            Replenishment::Sporadic { period } => b.active_since.map(|(t, at)| (t, at, period)),
            _ => None,
        });
        let Some((start, at, period)) = sporadic else { return };
        if self.set_active(s) {
            return;
        }
        let consumed = self.exec.sets[s].consumed;
        self.exec.sets[s].budget.as_mut().expect("sporadic").active_since = None;
        self.schedule_sporadic(s, start + period, consumed.saturating_sub(at));
    }

    /// The urgency a server imposes on its members, if any (constant bandwidth servers).
    pub(crate) fn server_deadline(&self, id: ThreadId) -> Option<Time> {
        let t = self.table.slots[self.local(id)?].as_ref()?;
        let b = self.exec.sets[t.set? as usize].budget.as_ref()?;
        match b.rule {
            Replenishment::ConstantBandwidth { .. } => b.server_deadline,
            _ => None,
        }
    }
}
