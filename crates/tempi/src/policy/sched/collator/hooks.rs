//! The [`Scheduler`] hooks of the [`Collator`]: routing each thread to its part, charging
//! guaranteed jobs, settling what steals took from the slack, and choosing who runs.
//!
//! Must not: change the slack rules documented on the module above; every hook keeps slack ≥
//! claims ≥ 0.

use std::time::Duration;

use super::{Collator, Dispatch, Entry, Party};
use crate::plain::ThreadId;
use crate::policy::admit::AdmissionEngine;
use crate::policy::sched::{ReadyReason, SchedInfo, Scheduler, Urgency};
use crate::time::Time;

impl Collator {
    /// The part the classifier picks for `t`, within range.
    fn classified(&self, t: &SchedInfo) -> Party {
        match (self.classify)(t) {
            Party::Child(c) if c >= self.children.len() => self.fallback(),
            place => place,
        }
    }

    /// `t` stopped running, if it was the thread last dispatched: a guaranteed job is charged
    /// the CPU time it ran, less the switch cost the collator accounts for itself.
    fn stopped(&mut self, t: &SchedInfo) {
        let Some(d) = self.current.as_mut().filter(|d| d.id == t.id && !d.stopped) else { return };
        d.stopped = true;
        let (place, credit) = (d.place, d.credit);
        if place != Party::Guaranteed {
            return;
        }
        // It paid the switch back from any steal before it.
        self.owed = Duration::ZERO;
        let Some(e) = self.threads.get(t.id.index()).copied() else { return };
        if let Some(r) = e.reservation {
            let ran = if t.job == e.job { t.job_cpu_time.saturating_sub(e.cpu_mark) } else { t.job_cpu_time };
            let _ = self.engine.charge(r, ran.saturating_sub(credit));
        }
    }

    /// Queue `t` in its part (`yielded`: through `on_yield`), admitting it when it is to be
    /// guaranteed and holds no reservation for this job.
    fn queue(&mut self, t: &SchedInfo, why: ReadyReason, yielded: bool) {
        // A released job's release is now; otherwise it only says time is at least there.
        self.now = self.now.max(t.release);
        self.stopped(t);
        let i = self.entry_index(t.id);
        let old = self.threads[i];
        let same_job = old.job == t.job;
        let mut demoted = old.demoted && same_job;
        let mut reservation = None;
        if let Some(r) = old.reservation {
            match self.engine.remaining(r) {
                Some(left) if same_job && !left.is_zero() => reservation = Some(r),
                Some(_) if same_job => {
                    // It ran its whole WCET and still wants the CPU: an overrun.
                    self.stats.overruns += 1;
                    demoted = true;
                    self.end_reservation(r);
                }
                _ => self.end_reservation(r),
            }
        }
        let place = if reservation.is_some() {
            Party::Guaranteed
        } else if demoted {
            self.fallback()
        } else {
            match self.classified(t) {
                Party::Guaranteed => {
                    // Admitted at the next pick, the first hook that knows the time: a
                    // late release or a wakeup says nothing of how late it is.
                    self.threads[i] = Entry {
                        id: Some(t.id),
                        place: Party::Guaranteed,
                        awaiting: true,
                        job: t.job,
                        cpu_mark: t.job_cpu_time,
                        ..Entry::EMPTY
                    };
                    self.pending.push((*t, why, yielded));
                    return;
                }
                child => child,
            }
        };
        self.enqueue(i, t, why, yielded, place, reservation, demoted);
    }

    /// Put `t` (entry `i`) in the queue of `place`.
    #[allow(clippy::too_many_arguments)]
    fn enqueue(
        &mut self,
        i: usize,
        t: &SchedInfo,
        why: ReadyReason,
        yielded: bool,
        place: Party,
        reservation: Option<crate::policy::admit::AdmitId>,
        demoted: bool,
    ) {
        self.threads[i] = Entry {
            id: Some(t.id),
            place,
            queued: true,
            awaiting: false,
            job: t.job,
            cpu_mark: t.job_cpu_time,
            reservation,
            demoted,
        };
        match place {
            Party::Guaranteed => self.guaranteed_ready += 1,
            Party::Child(c) => self.children[c].ready += 1,
        }
        let part = self.part(place);
        if yielded {
            part.on_yield(t)
        } else {
            part.on_ready(t, why)
        }
    }

    /// Admit, at the exact instant of a pick, the jobs that became ready since: in arrival
    /// order, each into the guaranteed part or, refused, into the last child.
    fn admit_pending(&mut self) {
        for k in 0..self.pending.len() {
            let (t, why, yielded) = self.pending[k];
            let i = self.entry_index(t.id);
            match self.admit(&t) {
                Some(r) => self.enqueue(i, &t, why, yielded, Party::Guaranteed, Some(r), false),
                None => {
                    self.stats.refused += 1;
                    let fallback = self.fallback();
                    self.enqueue(i, &t, why, yielded, fallback, None, true);
                }
            }
        }
        self.pending.clear();
    }

    /// Whether `id` is ready and waits for its admission at the next pick.
    fn awaits_admission(&self, id: ThreadId) -> bool {
        self.threads.get(id.index()).is_some_and(|e| e.id == Some(id) && e.awaiting)
    }

    /// Whether child `c` could steal at the latest known instant. While a guaranteed job
    /// runs its uncharged time counts as idle, so this errs towards no.
    fn may_steal(&self, c: usize) -> bool {
        let held = self.children[c].claim.saturating_add(self.unclaimed(self.now));
        held > self.switch_cost
    }

    /// One thread fewer is queued in `place`. The counts only steer the search in
    /// `pick_next`, so a child that answered out of turn cannot make them wrap.
    fn unqueued(&mut self, place: Party) {
        match place {
            Party::Guaranteed => self.guaranteed_ready = self.guaranteed_ready.saturating_sub(1),
            Party::Child(c) => self.children[c].ready = self.children[c].ready.saturating_sub(1),
        }
    }

    /// Remember `id` as dispatched from `place` at `now`.
    fn dispatched(&mut self, id: ThreadId, place: Party, now: Time, steal: Option<Duration>, credit: Duration) {
        self.unqueued(place);
        if let Some(e) = self.threads.get_mut(id.index()).filter(|e| e.id == Some(id)) {
            e.queued = false;
        }
        self.current = Some(Dispatch { id, place, since: now, steal, credit, stopped: false });
    }

    /// Take what the running steal used up to `now` out of the slack accounts: its child's
    /// claim first (the rest was unclaimed slack, which time passing lowered already).
    pub(super) fn account_steal(&mut self, now: Time) {
        let Some(d) = self.current.as_mut() else { return };
        let (Party::Child(c), Some(_)) = (d.place, d.steal) else { return };
        let used = now.saturating_since(d.since);
        d.since = d.since.max(now);
        if let Some(left) = d.steal.as_mut() {
            *left = left.saturating_sub(used);
        }
        let own = used.min(self.children[c].claim);
        self.children[c].claim -= own;
        self.claimed -= own;
        self.stats.stolen += used;
    }

    /// What a transfer may take from `from` at `now` without cutting into the slack the
    /// running steal was promised.
    pub(super) fn transferable(&self, from: super::Party, now: Time) -> Duration {
        let unclaimed = self.unclaimed(now);
        let own = match from {
            Party::Guaranteed => unclaimed,
            Party::Child(c) => self.children[c].claim,
        };
        match self.current {
            Some(Dispatch { place: Party::Child(c), steal: Some(left), .. })
                if from == Party::Child(c) || from == Party::Guaranteed =>
            {
                let spare = self.children[c].claim.saturating_add(unclaimed).saturating_sub(left + self.switch_cost);
                own.min(spare)
            }
            _ => own,
        }
    }

    /// The last dispatch is over at `now`; returns whether it was a steal.
    fn settle(&mut self, now: Time) -> bool {
        self.account_steal(now);
        let Some(d) = self.current.take() else { return false };
        if !d.stopped && d.place == Party::Guaranteed {
            // The CPU is asked for while its thread never stopped through a hook: the thread
            // ended on the CPU. Its job is over, so is its reservation.
            if let Some(e) = self.threads.get_mut(d.id.index()).filter(|e| e.id == Some(d.id))
                && let Some(r) = e.reservation.take()
            {
                self.end_reservation(r);
            }
            self.owed = Duration::ZERO;
        }
        let (Party::Child(c), Some(_)) = (d.place, d.steal) else { return false };
        // The steal also costs the switch back it kept slack for: out of its claim first,
        // like its running time, so that the claims stay covered once that switch is paid.
        let own = self.switch_cost.min(self.children[c].claim);
        self.children[c].claim -= own;
        self.claimed -= own;
        // Until the switch back is made, the slack still counts it as idle: all of it is
        // owed, whoever paid for it, or a transfer or an admission could promise it again.
        self.owed = self.switch_cost;
        true
    }
}

impl Scheduler for Collator {
    fn name(&self) -> &str {
        "collator"
    }

    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        // The part the thread will be queued in orders it: guaranteed jobs by deadline, so
        // that the EDF queue stays in deadline order. A refused job keeps that urgency in the
        // last child.
        match self.classified(t) {
            Party::Guaranteed => self.guaranteed.base_urgency(t),
            Party::Child(c) => self.children[c].sched.base_urgency(t),
        }
    }

    fn on_ready(&mut self, t: &SchedInfo, why: ReadyReason) {
        self.queue(t, why, false);
    }

    fn on_yield(&mut self, t: &SchedInfo) {
        self.queue(t, ReadyReason::Yielded, true);
    }

    fn on_blocked(&mut self, t: &SchedInfo) {
        self.stopped(t);
        let i = self.entry_index(t.id);
        // Job end and suspension look alike here: either way the reservation ends, and a
        // job that wakes is admitted again.
        if let Some(r) = self.threads[i].reservation.take() {
            self.end_reservation(r);
        }
        self.threads[i].queued = false;
        let place = self.threads[i].place;
        self.part(place).on_blocked(t);
    }

    fn on_removed(&mut self, id: ThreadId) {
        let i = self.entry_index(id);
        let e = self.threads[i];
        if e.awaiting {
            self.pending.retain(|p| p.0.id != id);
        }
        if e.queued {
            self.unqueued(e.place);
            self.part(e.place).on_removed(id);
        }
        if let Some(r) = e.reservation {
            self.end_reservation(r);
        }
        self.threads[i] = Entry { id: Some(id), ..Entry::EMPTY };
    }

    fn should_preempt(&self, running: &SchedInfo, woken: &SchedInfo) -> bool {
        if self.awaits_admission(woken.id) {
            // Admission needs the time, which the next pick brings.
            return true;
        }
        let place = |t: &SchedInfo| self.placement(t.id).unwrap_or_else(|| self.fallback());
        match (place(running), place(woken)) {
            (Party::Guaranteed, Party::Guaranteed) => self.guaranteed.should_preempt(running, woken),
            // The slack changed: the running child's slice is recomputed.
            (Party::Child(_), Party::Guaranteed) => true,
            (Party::Guaranteed, Party::Child(c)) => self.may_steal(c),
            (Party::Child(r), Party::Child(w)) => {
                w < r || (w == r && self.children[r].sched.should_preempt(running, woken))
            }
        }
    }

    fn pick_next(&mut self, now: Time) -> Option<ThreadId> {
        self.now = self.now.max(now);
        let after_steal = self.settle(now);
        self.expire();
        self.admit_pending();
        if self.guaranteed_ready > 0 {
            let unclaimed = self.unclaimed(now);
            for c in 0..self.children.len() {
                let held = self.children[c].claim.saturating_add(unclaimed);
                if self.children[c].ready == 0 || held <= self.switch_cost {
                    continue;
                }
                if let Some(id) = self.children[c].sched.pick_next(now) {
                    self.stats.steals += 1;
                    self.dispatched(id, Party::Child(c), now, Some(held - self.switch_cost), Duration::ZERO);
                    return Some(id);
                }
            }
            if let Some(id) = self.guaranteed.pick_next(now) {
                // The switch back from a steal is the collator's cost, not the job's.
                let credit = if after_steal { self.switch_cost } else { Duration::ZERO };
                self.dispatched(id, Party::Guaranteed, now, None, credit);
                return Some(id);
            }
        }
        for c in 0..self.children.len() {
            if self.children[c].ready == 0 {
                continue;
            }
            if let Some(id) = self.children[c].sched.pick_next(now) {
                // No guaranteed job is ready, so none will pay a switch back.
                self.owed = Duration::ZERO;
                self.dispatched(id, Party::Child(c), now, None, Duration::ZERO);
                return Some(id);
            }
        }
        None
    }

    fn on_urgency_changed(&mut self, t: &SchedInfo, old: Urgency) {
        if self.awaits_admission(t.id) {
            if let Some(p) = self.pending.iter_mut().find(|p| p.0.id == t.id) {
                p.0 = *t;
            }
            return;
        }
        if let Some(place) = self.placement(t.id) {
            self.part(place).on_urgency_changed(t, old);
        }
    }

    fn time_sliced(&self) -> bool {
        true
    }

    fn time_slice(&self, t: &SchedInfo) -> Option<Duration> {
        let d = self.current.filter(|d| d.id == t.id)?;
        match d.place {
            Party::Guaranteed => {
                // WCET enforcement: the job may run what its reservation has left.
                let r = self.threads.get(t.id.index())?.reservation?;
                Some(self.engine.remaining(r)?.saturating_add(d.credit))
            }
            Party::Child(c) => {
                let own = self.children[c].sched.time_slice(t);
                match (d.steal, own) {
                    (Some(steal), Some(own)) => Some(steal.min(own)),
                    (steal, own) => steal.or(own),
                }
            }
        }
    }
}
