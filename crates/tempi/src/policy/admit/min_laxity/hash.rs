//! The paper's hashed search for the `min_laxity` slot list: deadline → a slot due no later,
//! then a walk forward.
//!
//! Owns [`HashIndex`] only: a table of buckets over deadlines, each naming a slot of the list
//! that is due before the bucket's first deadline. It reads the list it indexes but never
//! changes it; the engine tells it when to rebuild (every collection), what was inserted and
//! what was withdrawn.
//!
//! Our reading of the paper, which says only that hashing gives "a slot with deadline less than
//! or equal to" the new one, that the number of buckets adapts to "the observed average
//! difference between deadlines" and that the list is rehashed at every garbage collection:
//!
//! - at every collection the table is rebuilt: bucket width = the mean gap between the held
//!   deadlines (at least 1 ns), first bucket at the earliest deadline, and as many buckets as
//!   cover four times the held span (at most the room allocated at construction); bucket `b`
//!   names the last slot due before its first deadline (or none);
//! - between collections the named slots stay in the list (only a collection removes slots,
//!   but for a withdrawn one, whose buckets then name the slot before it), so a bucket stays
//!   a valid start as slots are inserted: it only gets further from the place looked for. An
//!   insertion also names the new slot in the bucket after its own when it is due later than
//!   the slot named there (one store);
//! - a deadline before the first bucket starts from the list's head. An admission with a
//!   deadline past the last bucket (or into an empty table: before the first collection)
//!   rebuilds the table first, the same way: the range covered grows fourfold each time, so
//!   this is rare once deadlines have spread;
//! - beyond the paper: an admission into a list that has doubled since the table was built
//!   also rebuilds it first. Without it a table built while the list was short (its first
//!   build, before any collection) keeps buckets sized for that short list, each holding ever
//!   more slots to walk, until the first collection. Rebuilding at each doubling costs O(1)
//!   per insertion, amortised.

use super::{Link, NIL};

/// Deadline buckets over a slot list, each naming a slot (arena index) due before the bucket.
#[derive(Debug)]
pub(super) struct HashIndex {
    /// Allocated once (room for the largest table); the first `used` are in use.
    buckets: Vec<u32>,
    used: usize,
    /// Deadline at the start of bucket 0.
    base: u64,
    /// Bucket width, nanoseconds (at least 1).
    width: u64,
    /// The list's length when the table was last built.
    built_for: usize,
}

impl HashIndex {
    /// An empty table with room for the buckets of a list of `capacity` slots.
    pub(super) fn with_capacity(engine: &str, capacity: usize) -> HashIndex {
        let n = capacity * 4 + 16;
        let mut buckets = crate::policy::admit::arena(engine, n);
        buckets.resize(n, NIL);
        HashIndex { buckets, used: 0, base: 0, width: 1, built_for: 0 }
    }

    fn bucket_of(&self, deadline: u64) -> Option<usize> {
        if self.used == 0 || deadline < self.base {
            return None;
        }
        let b = (deadline - self.base) / self.width;
        Some(usize::try_from(b).unwrap_or(usize::MAX).min(self.used - 1))
    }

    /// Whether the table reaches `deadline` (false while it is empty).
    pub(super) fn covers(&self, deadline: u64) -> bool {
        let end = self.base.saturating_add((self.used as u64).saturating_mul(self.width));
        self.used > 0 && deadline < end
    }

    /// Whether a list of `len` slots has outgrown the table: it has doubled since the table was
    /// built (and holds more than a handful), so the buckets, sized by the mean gap of the
    /// shorter list, each hold twice the slots they were sized for, and more as it grows.
    pub(super) fn outgrown(&self, len: usize) -> bool {
        len >= 16 && len >= self.built_for.saturating_mul(2)
    }

    /// The list's length when the table was last built.
    #[cfg(test)]
    pub(super) fn built_for(&self) -> usize {
        self.built_for
    }

    /// A slot due at or before `deadline` to walk forward from, or [`NIL`] for the head.
    pub(super) fn start(&self, deadline: u64) -> u32 {
        self.bucket_of(deadline).map_or(NIL, |b| self.buckets[b])
    }

    /// Slot `slot` (due at `deadline`) was inserted: name it in the next bucket if it is due
    /// later than the slot named there (equal deadlines: it was accepted later, so it is later).
    pub(super) fn inserted(&mut self, links: &[Link], slot: u32, deadline: u64) {
        let Some(b) = self.bucket_of(deadline) else { return };
        let next = b + 1;
        // A deadline past the table maps to its last bucket, which has no next.
        if next < self.used {
            let named = self.buckets[next];
            if named == NIL || links[named as usize].deadline <= deadline {
                self.buckets[next] = slot;
            }
        }
    }

    /// Slot `slot` (due at `deadline`) left the list between collections; `prev` (or [`NIL`])
    /// was the slot before it. The buckets naming it, all after its own bucket (a bucket names
    /// a slot due before the bucket starts), name `prev` instead, which is due no later. Visits
    /// every bucket after its own: O(buckets).
    pub(super) fn withdrawn(&mut self, slot: u32, deadline: u64, prev: u32) {
        let from = self.bucket_of(deadline).map_or(0, |b| b + 1);
        for named in &mut self.buckets[from..self.used] {
            if *named == slot {
                *named = prev;
            }
        }
    }

    /// Rebuild the table for the list starting at `head` (`len` slots, `last` deadline at
    /// its tail).
    pub(super) fn rebuild(&mut self, links: &[Link], head: u32, len: usize, last: u64) {
        self.built_for = len;
        if head == NIL || len == 0 {
            self.used = 0;
            return;
        }
        self.base = links[head as usize].deadline;
        let span = last - self.base;
        self.width = (span / len as u64).max(1);
        let wanted = (span / self.width).saturating_mul(4).saturating_add(1);
        self.used = usize::try_from(wanted).unwrap_or(usize::MAX).min(self.buckets.len());
        let (mut before, mut at) = (NIL, head);
        for b in 0..self.used {
            let lo = self.base.saturating_add((b as u64).saturating_mul(self.width));
            while at != NIL && links[at as usize].deadline < lo {
                before = at;
                at = links[at as usize].next;
            }
            self.buckets[b] = before;
        }
    }
}
