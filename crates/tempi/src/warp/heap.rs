//! An indexed binary min-heap of event slots ordered by key: a worker's unprocessed events.
//! Each slot knows its position, so an annihilated event leaves the heap in O(log n). Owns only
//! the ordering; the slots' contents belong to the worker.

use super::EventKey;

/// Not in a heap.
pub(crate) const NOWHERE: u32 = u32::MAX;

/// A min-heap over slot numbers `0..capacity`, with the keys and positions kept here so the
/// heap needs nothing from its caller.
pub(crate) struct SlotHeap {
    heap: Vec<u32>,
    keys: Vec<EventKey>,
    pos: Vec<u32>,
}

impl SlotHeap {
    pub(crate) fn new(capacity: usize) -> Self {
        SlotHeap {
            heap: Vec::with_capacity(capacity),
            keys: vec![EventKey::MAX; capacity],
            pos: vec![NOWHERE; capacity],
        }
    }

    pub(crate) fn contains(&self, slot: u32) -> bool {
        self.pos[slot as usize] != NOWHERE
    }

    /// The least slot and its key.
    pub(crate) fn peek(&self) -> Option<(u32, EventKey)> {
        self.heap.first().map(|&s| (s, self.keys[s as usize]))
    }

    pub(crate) fn push(&mut self, slot: u32, key: EventKey) {
        debug_assert!(!self.contains(slot));
        self.keys[slot as usize] = key;
        let i = self.heap.len();
        self.heap.push(slot);
        self.pos[slot as usize] = i as u32;
        self.sift_up(i);
    }

    pub(crate) fn pop(&mut self) -> Option<u32> {
        let top = *self.heap.first()?;
        self.remove(top);
        Some(top)
    }

    /// Takes `slot` out; false when it was not in.
    pub(crate) fn remove(&mut self, slot: u32) -> bool {
        let i = self.pos[slot as usize];
        if i == NOWHERE {
            return false;
        }
        let i = i as usize;
        let last = self.heap.len() - 1;
        self.heap.swap(i, last);
        self.pos[self.heap[i] as usize] = i as u32;
        self.heap.pop();
        self.pos[slot as usize] = NOWHERE;
        if i < self.heap.len() {
            self.sift_down(i);
            self.sift_up(i);
        }
        true
    }

    fn less(&self, a: usize, b: usize) -> bool {
        self.keys[self.heap[a] as usize] < self.keys[self.heap[b] as usize]
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a] as usize] = a as u32;
        self.pos[self.heap[b] as usize] = b as u32;
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if !self.less(i, parent) {
                break;
            }
            self.swap(i, parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut least = i;
            if l < self.heap.len() && self.less(l, least) {
                least = l;
            }
            if r < self.heap.len() && self.less(r, least) {
                least = r;
            }
            if least == i {
                break;
            }
            self.swap(i, least);
            i = least;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SlotHeap;
    use crate::warp::{EventKey, LpId};

    fn k(t: u64) -> EventKey {
        EventKey { time: t, depth: 0, sender: LpId(0), seq: t }
    }

    #[test]
    fn pops_in_key_order_after_removals() {
        let mut h = SlotHeap::new(8);
        for (slot, t) in [(0, 5), (1, 3), (2, 8), (3, 1), (4, 4)] {
            h.push(slot, k(t));
        }
        assert!(h.remove(4));
        assert!(!h.remove(4));
        let order: Vec<u32> = std::iter::from_fn(|| h.pop()).collect();
        assert_eq!(order, vec![3, 1, 0, 2]);
    }
}
