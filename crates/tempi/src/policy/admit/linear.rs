//! The `linear` admission engine: PORTS' original sorted slot list.
//!
//! Owns [`LinearEngine`] only; the semantics and the trait live in the parent module. Each
//! slot stores its job's finish offset (the work due at or before it, `P_j`), so every
//! insertion, charge, finish, withdrawal or expiry rewrites the finish of every later slot: O(n) per
//! operation, kept as the reference the faster engines are measured against.

use super::{admit_prologue, idle_span, signed_idle, span_nanos, Admission, AdmissionEngine, AdmitError, AdmitId};
use crate::Time;
use std::time::Duration;

/// One accepted job.
#[derive(Clone, Copy, Debug)]
struct Slot {
    id: AdmitId,
    /// Remaining execution time, nanoseconds.
    remaining: u64,
    /// Work due at or before this slot in EDF order, itself included (`P_j`): the finish time
    /// is `now + finish_offset`.
    finish_offset: i128,
}

/// The paper's sorted slot list: a vector in EDF order, scanned and shifted on every change.
///
/// ```
/// use tempi::policy::admit::{AdmissionEngine, Admission, LinearEngine};
/// use tempi::Time;
/// use std::time::Duration;
/// let mut e = LinearEngine::with_capacity(8);
/// let ns = Duration::from_nanos;
/// e.admit(ns(2), Time::from_nanos(5), Time::ZERO).unwrap();
/// e.admit(ns(2), Time::from_nanos(4), Time::ZERO).unwrap();
/// // min(4 − 0 − 2, laxity of the deadline-5 job = 5 − 4) = 1.
/// assert_eq!(e.idle_before(Time::from_nanos(4), Time::ZERO), ns(1));
/// ```
#[derive(Debug)]
pub struct LinearEngine {
    slots: Vec<Slot>,
    capacity: usize,
    next_seq: u64,
}

impl LinearEngine {
    /// An empty engine with room for `capacity` entries, all allocated now.
    ///
    /// # Panics
    /// Above [`super::MAX_CAPACITY`] entries, or if the allocator refuses them.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, LinearEngine};
    /// assert_eq!(LinearEngine::with_capacity(3).capacity(), 3);
    /// ```
    pub fn with_capacity(capacity: usize) -> LinearEngine {
        let capacity = super::checked_capacity("linear", capacity);
        LinearEngine { slots: super::arena("linear", capacity), capacity, next_seq: 0 }
    }

    /// Index of the first slot whose deadline is after `deadline`.
    fn first_after(&self, deadline: u64) -> usize {
        self.slots.iter().position(|s| s.id.deadline > deadline).unwrap_or(self.slots.len())
    }

    /// The signed idle time before `deadline` at `now`, by one scan.
    fn signed_idle_before(&self, deadline: u64, now: u64) -> i128 {
        let split = self.first_after(deadline);
        let work_up_to = if split == 0 { 0 } else { self.slots[split - 1].finish_offset };
        let min_key_after = self.slots[split..].iter().map(|s| i128::from(s.id.deadline) - s.finish_offset).min();
        signed_idle(deadline, now, work_up_to, min_key_after)
    }

    /// Lower `job`'s remaining time to `new_remaining(old)` and move every later finish.
    fn reduce(&mut self, job: AdmitId, new_remaining: impl Fn(u64) -> u64) -> Result<(), AdmitError> {
        let at = self.slots.iter().position(|s| s.id == job).ok_or(AdmitError::UnknownJob(job))?;
        let old = self.slots[at].remaining;
        let new = new_remaining(old);
        let freed = i128::from(old - new);
        self.slots[at].remaining = new;
        for slot in &mut self.slots[at..] {
            slot.finish_offset -= freed;
        }
        Ok(())
    }
}

impl AdmissionEngine for LinearEngine {
    fn name(&self) -> &'static str {
        "linear"
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
        for slot in &mut self.slots[at..] {
            slot.finish_offset += i128::from(wcet);
        }
        self.slots.insert(at, Slot { id, remaining: wcet, finish_offset: before + i128::from(wcet) });
        Ok(Admission::Accepted(id))
    }

    fn charge(&mut self, job: AdmitId, ran: Duration) -> Result<(), AdmitError> {
        let ran = span_nanos(ran);
        self.reduce(job, |old| old.saturating_sub(ran))
    }

    fn finish(&mut self, job: AdmitId) -> Result<(), AdmitError> {
        self.reduce(job, |_| 0)
    }

    fn withdraw(&mut self, job: AdmitId) -> Result<(), AdmitError> {
        let at = self.slots.iter().position(|s| s.id == job).ok_or(AdmitError::UnknownJob(job))?;
        let freed = i128::from(self.slots[at].remaining);
        self.slots.remove(at);
        for slot in &mut self.slots[at..] {
            slot.finish_offset -= freed;
        }
        Ok(())
    }

    fn expire(&mut self, now: Time) -> usize {
        let now = now.as_nanos();
        // Slots are in deadline order, so the expired ones are a prefix.
        let gone = self.slots.iter().position(|s| s.id.deadline >= now).unwrap_or(self.slots.len());
        if gone == 0 {
            return 0;
        }
        let freed = self.slots[gone - 1].finish_offset;
        self.slots.drain(..gone);
        for slot in &mut self.slots {
            slot.finish_offset -= freed;
        }
        gone
    }

    fn remaining(&self, job: AdmitId) -> Option<Duration> {
        self.slots.iter().find(|s| s.id == job).map(|s| Duration::from_nanos(s.remaining))
    }
}
