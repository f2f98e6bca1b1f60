//! The kernel's timer queue: every future instant the kernel must act at.
//!
//! A table of timer slots with its capacity fixed at start-up, and a binary heap of slot
//! indices in which every slot knows its position, so a timer that no longer applies (a
//! thread woke for another reason, took its lock before its timeout, left its CPU before its
//! slice ended) is cancelled in O(log n) instead of waiting in the heap for its instant.
//! Handles carry the slot's generation: cancelling a timer that already fired, or whose slot
//! was reused since, does nothing. A full table never grows: the timer is refused and the
//! kernel ends the run with [`crate::Error::TooManyTimers`].
//!
//! Equal instants fire by kind (see `TimerKind::rank`), then in insertion order, which keeps
//! virtual-time runs deterministic.

use crate::thread::ThreadId;
use crate::time::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimerKind {
    /// Next release of a periodic thread, or a deferred sporadic release.
    Release(ThreadId),
    /// End of a sleep; the token is the thread's wait token when it went to sleep.
    Wake(ThreadId, u64),
    /// End of a bounded wait for a lock, a condition variable or a semaphore; the token as for
    /// `Wake`.
    WaitTimeout(ThreadId, u64),
    /// The deadline of a job.
    Deadline(ThreadId, u32),
    /// The abort time of a job.
    AbortTime(ThreadId, u32),
    /// End of a time slice on a CPU; the token is the CPU's dispatch count.
    SliceEnd(usize, u64),
    /// A timing event, by index.
    Event(u32),
    /// A budget replenishment: set index, budget epoch, amount (`u64::MAX`: refill to full).
    Replenish(u32, u32, u64),
}

impl TimerKind {
    /// Order among timers due at the same instant: a deadline that coincides with the next
    /// release (D = T) is checked before that release, so a miss policy acts on the release
    /// that follows the late job; releases come before wakes so a woken thread sees the jobs
    /// released at its wake-up instant.
    fn rank(self) -> u8 {
        match self {
            TimerKind::Deadline(..) => 0,
            TimerKind::AbortTime(..) => 1,
            TimerKind::Release(..) => 2,
            TimerKind::Replenish(..) => 3,
            TimerKind::Event(..) => 3,
            TimerKind::Wake(..) | TimerKind::WaitTimeout(..) => 4,
            TimerKind::SliceEnd(..) => 5,
        }
    }
}

/// A pending timer, to cancel it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerHandle {
    slot: u32,
    generation: u32,
}

/// A slot that is not in the heap.
const FREE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Slot {
    /// Firing order: instant, rank, insertion order.
    key: (Time, u8, u64),
    kind: TimerKind,
    /// Index in the heap, or `FREE`.
    pos: u32,
    generation: u32,
}

#[derive(Debug)]
pub(crate) struct TimerQueue {
    slots: Vec<Slot>,
    /// Slot indices, a binary min-heap by the slots' keys.
    heap: Vec<u32>,
    free: Vec<u32>,
    seq: u64,
    /// A timer was refused because every slot was in use.
    overflowed: bool,
}

impl TimerQueue {
    pub(crate) fn with_capacity(n: usize) -> TimerQueue {
        let idle = Slot { key: (Time::ZERO, 0, 0), kind: TimerKind::Event(0), pos: FREE, generation: 0 };
        TimerQueue {
            slots: vec![idle; n],
            heap: Vec::with_capacity(n),
            free: (0..n as u32).rev().collect(),
            seq: 0,
            overflowed: false,
        }
    }

    /// How many timers the table holds at most.
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Timers pending.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether a timer was refused for want of a slot since the start.
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Arm a timer; `None` (and the queue remembers it overflowed) when every slot is in use.
    pub(crate) fn push(&mut self, at: Time, kind: TimerKind) -> Option<TimerHandle> {
        let Some(slot) = self.free.pop() else {
            self.overflowed = true;
            return None;
        };
        self.seq += 1;
        let pos = self.heap.len() as u32;
        let s = &mut self.slots[slot as usize];
        s.key = (at, kind.rank(), self.seq);
        s.kind = kind;
        s.pos = pos;
        let handle = TimerHandle { slot, generation: s.generation };
        self.heap.push(slot);
        self.sift_up(pos as usize);
        Some(handle)
    }

    /// Cancel a pending timer; a stale handle (the timer fired or was cancelled) is ignored.
    pub(crate) fn cancel(&mut self, h: TimerHandle) {
        let s = &self.slots[h.slot as usize];
        if s.generation != h.generation || s.pos == FREE {
            return;
        }
        self.remove_at(s.pos as usize);
    }

    pub(crate) fn next_at(&self) -> Option<Time> {
        self.heap.first().map(|&s| self.slots[s as usize].key.0)
    }

    /// The earliest entry due at or before `now`.
    pub(crate) fn pop_due(&mut self, now: Time) -> Option<(Time, TimerKind)> {
        let &top = self.heap.first()?;
        let s = self.slots[top as usize];
        if s.key.0 > now {
            return None;
        }
        self.remove_at(0);
        Some((s.key.0, s.kind))
    }

    /// Take the heap entry at `pos` out and free its slot.
    fn remove_at(&mut self, pos: usize) {
        let slot = self.heap[pos];
        let last = self.heap.pop().expect("the heap holds the entry");
        if pos < self.heap.len() {
            self.heap[pos] = last;
            self.slots[last as usize].pos = pos as u32;
            self.sift_up(pos);
            let now_at = self.slots[last as usize].pos as usize;
            self.sift_down(now_at);
        }
        let s = &mut self.slots[slot as usize];
        s.pos = FREE;
        s.generation = s.generation.wrapping_add(1);
        self.free.push(slot);
    }

    fn key(&self, pos: usize) -> (Time, u8, u64) {
        self.slots[self.heap[pos] as usize].key
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.slots[self.heap[a] as usize].pos = a as u32;
        self.slots[self.heap[b] as usize].pos = b as u32;
    }

    fn sift_up(&mut self, mut pos: usize) {
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if self.key(pos) >= self.key(parent) {
                break;
            }
            self.swap(pos, parent);
            pos = parent;
        }
    }

    fn sift_down(&mut self, mut pos: usize) {
        loop {
            let (l, r) = (2 * pos + 1, 2 * pos + 2);
            let mut least = pos;
            if l < self.heap.len() && self.key(l) < self.key(least) {
                least = l;
            }
            if r < self.heap.len() && self.key(r) < self.key(least) {
                least = r;
            }
            if least == pos {
                return;
            }
            self.swap(pos, least);
            pos = least;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Time {
        Time::from_millis(ms)
    }

    #[test]
    fn timers_fire_in_order_and_cancel_exactly() {
        let mut q = TimerQueue::with_capacity(8);
        let ids: Vec<TimerHandle> =
            [5, 1, 4, 2, 3].iter().map(|&m| q.push(t(m), TimerKind::Event(m as u32)).unwrap()).collect();
        q.cancel(ids[2]); // the one at 4
        q.cancel(ids[2]); // again: stale, ignored
        let mut fired = Vec::new();
        while let Some((at, _)) = q.pop_due(t(10)) {
            fired.push(at.as_nanos() / 1_000_000);
        }
        assert_eq!(fired, [1, 2, 3, 5]);
        // A fired timer's handle is stale even once its slot is reused.
        let again = q.push(t(7), TimerKind::Event(7)).unwrap();
        q.cancel(ids[1]);
        assert_eq!(q.len(), 1);
        q.cancel(again);
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn timers_full_table_refuses_without_growing() {
        let mut q = TimerQueue::with_capacity(2);
        assert!(q.push(t(1), TimerKind::Event(0)).is_some());
        assert!(q.push(t(2), TimerKind::Event(1)).is_some());
        assert!(q.push(t(3), TimerKind::Event(2)).is_none());
        assert!(q.overflowed());
        assert_eq!(q.capacity(), 2);
    }
}
