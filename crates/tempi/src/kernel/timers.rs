//! The kernel's timer queue: every future instant the kernel must act at.
//!
//! A binary heap pre-sized at start-up. Entries are never removed early; an entry that no
//! longer applies (a thread woke for another reason, a slice ended early) carries a token the
//! kernel compares on expiry and ignores when stale. Equal instants fire by kind (see `TimerKind::rank`), then in insertion order,
//! which keeps virtual-time runs deterministic.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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

#[derive(Clone, Copy, Debug)]
struct Entry {
    at: Time,
    rank: u8,
    seq: u64,
    kind: TimerKind,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.rank, self.seq) == (other.at, other.rank, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so the max-heap yields the earliest entry first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.rank, other.seq).cmp(&(self.at, self.rank, self.seq))
    }
}

#[derive(Debug)]
pub(crate) struct TimerQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl TimerQueue {
    pub(crate) fn with_capacity(n: usize) -> TimerQueue {
        TimerQueue { heap: BinaryHeap::with_capacity(n), seq: 0 }
    }

    pub(crate) fn push(&mut self, at: Time, kind: TimerKind) {
        self.seq += 1;
        self.heap.push(Entry { at, rank: kind.rank(), seq: self.seq, kind });
    }

    pub(crate) fn next_at(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.at)
    }

    /// The earliest entry due at or before `now`.
    pub(crate) fn pop_due(&mut self, now: Time) -> Option<(Time, TimerKind)> {
        if self.heap.peek()?.at <= now {
            self.heap.pop().map(|e| (e.at, e.kind))
        } else {
            None
        }
    }
}
