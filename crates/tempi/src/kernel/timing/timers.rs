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
//!
//! Must not: act on a timer: it only orders them; the run loop fires them.

use crate::plain::ThreadId;
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
    /// A timed message is due: the slot of the kernel's message pool that holds it.
    Message(u32),
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
            TimerKind::Wake(..) | TimerKind::WaitTimeout(..) | TimerKind::Message(..) => 4,
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

/// Firing order packed in one integer: instant, then rank, then insertion order. Heap
/// comparisons are the hot part of the simulator, and one wide comparison is much cheaper
/// than a tuple's.
type Key = u128;

fn key(at: Time, rank: u8, seq: u64) -> Key {
    ((at.as_nanos() as u128) << 64) | ((rank as u128) << 56) | seq as u128
}

fn key_time(k: Key) -> Time {
    Time::from_nanos((k >> 64) as u64)
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    kind: TimerKind,
    /// A second timer that takes this slot's place in the heap when this one fires, instead
    /// of the slot being freed: its key and kind.
    then: Option<(Key, TimerKind)>,
    /// Index in the heap, or `FREE`.
    pos: u32,
    generation: u32,
}

/// A heap entry: the key is kept beside the slot index so that sifting reads one array.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: Key,
    slot: u32,
}

#[derive(Debug)]
pub(crate) struct TimerQueue {
    slots: Vec<Slot>,
    /// A binary min-heap by key.
    heap: Vec<Entry>,
    free: Vec<u32>,
    seq: u64,
    /// A timer was refused because every slot was in use.
    overflowed: bool,
}

impl TimerQueue {
    #[cfg(test)]
    pub(crate) fn with_capacity(n: usize) -> TimerQueue {
        Self::try_with_capacity(n).expect("a small timer table")
    }

    /// A table of `n` timers, or an error if the allocator refuses it (its size comes from
    /// the configuration).
    pub(crate) fn try_with_capacity(n: usize) -> Result<TimerQueue, crate::Error> {
        let idle = Slot { kind: TimerKind::Event(0), then: None, pos: FREE, generation: 0 };
        let what = "the timer table (sized from Config::max_threads, max_timers, max_sets and message_pool)";
        let free_slots = u32::try_from(n).map_err(|_| crate::Error::InvalidConfig(format!("{what}: {n} timers")))?;
        let mut free = crate::sizes::vec_with_capacity(n, what)?;
        free.extend((0..free_slots).rev());
        Ok(TimerQueue {
            slots: crate::sizes::vec_filled(n, idle, what)?,
            heap: crate::sizes::vec_with_capacity(n, what)?,
            free,
            seq: 0,
            overflowed: false,
        })
    }

    /// How many timers the table holds at most.
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Timers pending (a timer with a follow-up counts once).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether a timer was refused for want of a slot since the start.
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    fn next_key(&mut self, at: Time, kind: TimerKind) -> Key {
        self.seq += 1;
        key(at, kind.rank(), self.seq)
    }

    /// Arm a timer; `None` (and the queue remembers it overflowed) when every slot is in use.
    pub(crate) fn push(&mut self, at: Time, kind: TimerKind) -> Option<TimerHandle> {
        let Some(slot) = self.free.pop() else {
            self.overflowed = true;
            return None;
        };
        let key = self.next_key(at, kind);
        let pos = self.heap.len();
        let s = &mut self.slots[slot as usize];
        s.kind = kind;
        s.then = None;
        s.pos = pos as u32;
        let handle = TimerHandle { slot, generation: s.generation };
        self.heap.push(Entry { key, slot });
        self.sift_up(pos);
        Some(handle)
    }

    /// Cancel a pending timer (and its follow-up); a stale handle (the timer fired or was
    /// cancelled) is ignored.
    pub(crate) fn cancel(&mut self, h: TimerHandle) {
        let s = &self.slots[h.slot as usize];
        if s.generation != h.generation || s.pos == FREE {
            return;
        }
        self.remove_at(s.pos as usize);
    }

    pub(crate) fn next_at(&self) -> Option<Time> {
        self.heap.first().map(|e| key_time(e.key))
    }

    /// The earliest timer if it is due at or before `now`, left in the queue: the caller
    /// takes it with [`TimerQueue::take_top`], [`TimerQueue::rearm_top`] or
    /// [`TimerQueue::remove_top`] before touching the queue otherwise.
    #[inline]
    pub(crate) fn peek_due(&self, now: Time) -> Option<(Time, TimerKind)> {
        let top = self.heap.first()?;
        let at = key_time(top.key);
        if at > now {
            return None;
        }
        Some((at, self.slots[top.slot as usize].kind))
    }

    /// The earliest entry fired: its follow-up, if it has one, takes its place (under the
    /// same handle), else it leaves the queue.
    #[inline]
    pub(crate) fn take_top(&mut self) {
        let slot = self.heap[0].slot as usize;
        match self.slots[slot].then.take() {
            Some((key, kind)) => {
                self.slots[slot].kind = kind;
                self.heap[0].key = key;
                self.sift_down(0);
            }
            None => self.remove_at(0),
        }
    }

    /// The earliest entry fired and has no follow-up: it leaves the queue.
    pub(crate) fn remove_top(&mut self) {
        self.remove_at(0);
    }

    /// The earliest entry fired and has no follow-up: arm the same timer again at `at` as
    /// `kind`, in its place, as a `push` made now would (the handle stays valid); with
    /// `first`, also a timer at the same instant that fires before it, as `push_before` made
    /// right after would. Moving the entry down the heap once costs about half of taking it
    /// out and pushing a new one.
    #[inline]
    pub(crate) fn rearm_top(&mut self, at: Time, kind: TimerKind, first: Option<TimerKind>) -> TimerHandle {
        let mut key = self.next_key(at, kind);
        let slot = self.heap[0].slot;
        let s = &mut self.slots[slot as usize];
        s.kind = kind;
        if let Some(f) = first.filter(|f| f.rank() < kind.rank()) {
            self.seq += 1;
            s.then = Some((key, kind));
            s.kind = f;
            key = self::key(at, f.rank(), self.seq);
        }
        let handle = TimerHandle { slot, generation: s.generation };
        self.heap[0].key = key;
        self.sift_down(0);
        handle
    }

    /// Arm a timer at `at`, the instant of the pending timer `h`, as a `push` made now would,
    /// sharing `h`'s entry: the entry fires first as `kind`, then as `h`'s own timer. Returns
    /// false (and arms nothing) unless `h` is pending at `at` with no follow-up, fires after
    /// `kind` would, and the new timer's cancelling would go with it (the caller's business).
    pub(crate) fn push_before(&mut self, h: TimerHandle, at: Time, kind: TimerKind) -> bool {
        let s = &self.slots[h.slot as usize];
        if s.generation != h.generation || s.pos == FREE || s.then.is_some() {
            return false;
        }
        let pos = s.pos as usize;
        let old = self.heap[pos].key;
        if key_time(old) != at || kind.rank() >= s.kind.rank() {
            return false;
        }
        let key = self.next_key(at, kind);
        let s = &mut self.slots[h.slot as usize];
        s.then = Some((old, s.kind));
        s.kind = kind;
        self.heap[pos].key = key;
        self.sift_up(pos);
        true
    }

    /// The first of the two timers of `h`'s entry, `kind`, no longer applies: the follow-up
    /// takes the entry's place now rather than when `kind` would have fired. Returns whether
    /// `h` was pending as `kind` with a follow-up.
    pub(crate) fn drop_first(&mut self, h: TimerHandle, kind: TimerKind) -> bool {
        let s = &mut self.slots[h.slot as usize];
        if s.generation != h.generation || s.pos == FREE || s.kind != kind {
            return false;
        }
        let Some((key, then)) = s.then.take() else { return false };
        s.kind = then;
        let pos = s.pos as usize;
        self.heap[pos].key = key;
        self.sift_down(pos);
        true
    }

    /// Take the heap entry at `pos` out and free its slot.
    fn remove_at(&mut self, pos: usize) {
        let slot = self.heap[pos].slot;
        let last = self.heap.pop().expect("the heap holds the entry");
        if pos < self.heap.len() {
            self.heap[pos] = last;
            if pos > 0 && last.key < self.heap[(pos - 1) / 2].key {
                self.sift_up(pos);
            } else {
                self.sift_down(pos);
            }
        }
        let s = &mut self.slots[slot as usize];
        s.pos = FREE;
        s.then = None;
        s.generation = s.generation.wrapping_add(1);
        self.free.push(slot);
    }

    /// Move the entry at `pos` up to its place, shifting parents down into the hole.
    fn sift_up(&mut self, mut pos: usize) {
        let e = self.heap[pos];
        while pos > 0 {
            let parent = (pos - 1) / 2;
            let p = self.heap[parent];
            if e.key >= p.key {
                break;
            }
            self.heap[pos] = p;
            self.slots[p.slot as usize].pos = pos as u32;
            pos = parent;
        }
        self.heap[pos] = e;
        self.slots[e.slot as usize].pos = pos as u32;
    }

    /// Move the entry at `pos` down to its place, shifting the lesser child up into the hole.
    #[inline]
    fn sift_down(&mut self, mut pos: usize) {
        let heap = &mut self.heap[..];
        let n = heap.len();
        let e = heap[pos];
        loop {
            let l = 2 * pos + 1;
            if l >= n {
                break;
            }
            let mut c = l;
            if l + 1 < n && heap[l + 1].key < heap[l].key {
                c = l + 1;
            }
            let child = heap[c];
            if child.key >= e.key {
                break;
            }
            heap[pos] = child;
            self.slots[child.slot as usize].pos = pos as u32;
            pos = c;
        }
        heap[pos] = e;
        self.slots[e.slot as usize].pos = pos as u32;
    }

    /// The earliest entry due at or before `now`, taken out (tests).
    #[cfg(test)]
    pub(crate) fn pop_due(&mut self, now: Time) -> Option<(Time, TimerKind)> {
        let due = self.peek_due(now)?;
        self.take_top();
        Some(due)
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
    fn timers_shared_entry_fires_in_the_order_of_two() {
        let mut q = TimerQueue::with_capacity(8);
        let id = ThreadId::new(1, 0);
        let other = ThreadId::new(2, 0);
        let r = q.push(t(5), TimerKind::Release(id)).unwrap();
        q.push(t(5), TimerKind::Release(other)).unwrap();
        // Not at the release's instant, or not ranked before it: refused.
        assert!(!q.push_before(r, t(6), TimerKind::Deadline(id, 0)));
        assert!(!q.push_before(r, t(5), TimerKind::Wake(id, 0)));
        assert!(q.push_before(r, t(5), TimerKind::Deadline(id, 0)));
        q.push(t(5), TimerKind::Deadline(other, 0)).unwrap();
        let mut fired = Vec::new();
        while let Some((_, kind)) = q.pop_due(t(5)) {
            fired.push(kind);
        }
        assert_eq!(
            fired,
            [
                TimerKind::Deadline(id, 0),
                TimerKind::Deadline(other, 0),
                TimerKind::Release(id),
                TimerKind::Release(other)
            ]
        );
        // Re-armed in place, the handle stays valid; cancelling drops the follow-up too.
        let a = q.push(t(7), TimerKind::Release(id)).unwrap();
        assert!(q.push_before(a, t(7), TimerKind::Deadline(id, 1)));
        q.cancel(a);
        assert_eq!(q.len(), 0);
        let b = q.push(t(8), TimerKind::Release(id)).unwrap();
        assert_eq!(q.peek_due(t(8)), Some((t(8), TimerKind::Release(id))));
        let b2 = q.rearm_top(t(9), TimerKind::Release(id), None);
        assert_eq!(b, b2);
        assert_eq!(q.next_at(), Some(t(9)));
        q.cancel(b);
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn timers_rearmed_entry_carries_a_first_timer() {
        let mut q = TimerQueue::with_capacity(4);
        let id = ThreadId::new(1, 0);
        let other = ThreadId::new(2, 0);
        q.push(t(5), TimerKind::Release(other)).unwrap();
        q.push(t(4), TimerKind::Release(id)).unwrap();
        assert_eq!(q.peek_due(t(4)), Some((t(4), TimerKind::Release(id))));
        q.rearm_top(t(5), TimerKind::Release(id), Some(TimerKind::Deadline(id, 0)));
        let mut fired = Vec::new();
        while let Some((_, kind)) = q.pop_due(t(5)) {
            fired.push(kind);
        }
        assert_eq!(fired, [TimerKind::Deadline(id, 0), TimerKind::Release(other), TimerKind::Release(id)]);
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
