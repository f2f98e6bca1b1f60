//! The `min_laxity` admission engine: PORTS' improved slot list, with shared minimum-laxity
//! pointers and a search that starts where the last insertion happened.
//!
//! Owns [`MinLaxityEngine`] only; the semantics and the trait live in the parent module.
//! Like `linear`, each slot stores its finish offset `P_j`; in addition each slot points at
//! the slot of least laxity from itself to the end of the list (slots share a target until a
//! smaller one comes before it), so the laxity bound after a deadline is read in O(1) instead
//! of by a scan. A change at one slot shifts the laxity of every later slot by the same
//! amount, which keeps their pointers valid: only the pointers at or before it are redone.
//! Finding a deadline's place walks from the last insertion point, cheap when deadlines
//! arrive close together (periodic work). Updates remain O(n) (the finish offsets shift).

use super::{admit_prologue, idle_span, signed_idle, span_nanos, Admission, AdmissionEngine, AdmitError, AdmitId};
use crate::Time;
use std::time::Duration;

#[derive(Clone, Copy, Debug)]
struct Slot {
    id: AdmitId,
    /// Remaining execution time, nanoseconds.
    remaining: u64,
    /// Work due at or before this slot in EDF order, itself included (`P_j`).
    finish_offset: i128,
    /// Index of the slot with the least `d − P` from this one to the end (the first such).
    min_from_here: usize,
}

impl Slot {
    fn key(&self) -> i128 {
        i128::from(self.id.deadline) - self.finish_offset
    }
}

/// Sorted slot list with shared minimum-laxity pointers and a last-insertion search hint.
///
/// ```
/// use tempi::policy::admit::{AdmissionEngine, Admission, MinLaxityEngine};
/// use tempi::Time;
/// use std::time::Duration;
/// let mut e = MinLaxityEngine::with_capacity(8);
/// let ns = Duration::from_nanos;
/// e.admit(ns(2), Time::from_nanos(5), Time::ZERO).unwrap();
/// e.admit(ns(2), Time::from_nanos(4), Time::ZERO).unwrap();
/// // min(4 − 0 − 2, laxity of the deadline-5 job = 5 − 4) = 1.
/// assert_eq!(e.idle_before(Time::from_nanos(4), Time::ZERO), ns(1));
/// ```
#[derive(Debug)]
pub struct MinLaxityEngine {
    slots: Vec<Slot>,
    capacity: usize,
    next_seq: u64,
    /// Where the last job was inserted: the search for the next deadline starts here.
    hint: usize,
}

impl MinLaxityEngine {
    /// An empty engine with room for `capacity` entries, all allocated now.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, MinLaxityEngine};
    /// assert_eq!(MinLaxityEngine::with_capacity(3).capacity(), 3);
    /// ```
    pub fn with_capacity(capacity: usize) -> MinLaxityEngine {
        MinLaxityEngine { slots: Vec::with_capacity(capacity), capacity, next_seq: 0, hint: 0 }
    }

    /// Index of the first slot whose deadline is after `deadline`, walking from the hint.
    fn first_after(&self, deadline: u64) -> usize {
        let mut at = self.hint.min(self.slots.len());
        while at > 0 && self.slots[at - 1].id.deadline > deadline {
            at -= 1;
        }
        while at < self.slots.len() && self.slots[at].id.deadline <= deadline {
            at += 1;
        }
        at
    }

    fn signed_idle_before(&self, deadline: u64, now: u64) -> i128 {
        let split = self.first_after(deadline);
        let work_up_to = if split == 0 { 0 } else { self.slots[split - 1].finish_offset };
        let min_key_after = self.slots.get(split).map(|s| self.slots[s.min_from_here].key());
        signed_idle(deadline, now, work_up_to, min_key_after)
    }

    /// Redo the minimum pointers of slots `0..=last` (later ones are still valid).
    fn repoint_through(&mut self, last: usize) {
        for i in (0..=last.min(self.slots.len().saturating_sub(1))).rev() {
            let own = self.slots[i].key();
            self.slots[i].min_from_here = match self.slots.get(i + 1) {
                Some(next) if self.slots[next.min_from_here].key() < own => next.min_from_here,
                _ => i,
            };
        }
    }

    fn reduce(&mut self, job: AdmitId, new_remaining: impl Fn(u64) -> u64) -> Result<(), AdmitError> {
        let at = self.slots.iter().position(|s| s.id == job).ok_or(AdmitError::UnknownJob(job))?;
        let old = self.slots[at].remaining;
        let freed = i128::from(old - new_remaining(old));
        self.slots[at].remaining = old - freed as u64;
        for slot in &mut self.slots[at..] {
            slot.finish_offset -= freed;
        }
        self.repoint_through(at);
        Ok(())
    }
}

impl AdmissionEngine for MinLaxityEngine {
    fn name(&self) -> &'static str {
        "min_laxity"
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    fn idle_before(&self, deadline: Time, now: Time) -> Duration {
        idle_span(self.signed_idle_before(deadline.as_nanos(), now.as_nanos()))
    }

    fn admit(&mut self, wcet: Duration, deadline: Time, now: Time) -> Result<Admission, AdmitError> {
        admit_prologue(self.slots.len(), self.capacity, deadline)?;
        let (deadline, wcet) = (deadline.as_nanos(), span_nanos(wcet));
        let idle = self.signed_idle_before(deadline, now.as_nanos());
        if idle < i128::from(wcet) {
            return Ok(Admission::Rejected { idle: idle_span(idle) });
        }
        let id = AdmitId { deadline, seq: self.next_seq };
        self.next_seq += 1;
        let at = self.first_after(deadline);
        let before = if at == 0 { 0 } else { self.slots[at - 1].finish_offset };
        // Later slots shift right by one and their laxities all drop by `wcet`: their pointers
        // keep their targets, one index further on.
        for slot in &mut self.slots[at..] {
            slot.finish_offset += i128::from(wcet);
            slot.min_from_here += 1;
        }
        self.slots
            .insert(at, Slot { id, remaining: wcet, finish_offset: before + i128::from(wcet), min_from_here: at });
        self.repoint_through(at);
        self.hint = at;
        Ok(Admission::Accepted(id))
    }

    fn charge(&mut self, job: AdmitId, ran: Duration) -> Result<(), AdmitError> {
        let ran = span_nanos(ran);
        self.reduce(job, |old| old.saturating_sub(ran))
    }

    fn finish(&mut self, job: AdmitId) -> Result<(), AdmitError> {
        self.reduce(job, |_| 0)
    }

    fn expire(&mut self, now: Time) -> usize {
        let now = now.as_nanos();
        let gone = self.slots.iter().position(|s| s.id.deadline >= now).unwrap_or(self.slots.len());
        if gone == 0 {
            return 0;
        }
        let freed = self.slots[gone - 1].finish_offset;
        self.slots.drain(..gone);
        // A uniform shift: every pointer keeps its target, `gone` indices earlier.
        for slot in &mut self.slots {
            slot.finish_offset -= freed;
            slot.min_from_here -= gone;
        }
        self.hint = self.hint.saturating_sub(gone);
        gone
    }

    fn remaining(&self, job: AdmitId) -> Option<Duration> {
        self.slots.iter().find(|s| s.id == job).map(|s| Duration::from_nanos(s.remaining))
    }
}
