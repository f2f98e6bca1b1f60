//! An indexed binary min-heap of event slots ordered by key: a worker's unprocessed events.
//! Each slot knows its position, so an annihilated event leaves the heap in O(log n). Owns only
//! the ordering; the slots' contents belong to the worker.

use super::EventKey;

/// Not in a heap.
pub(crate) const NOWHERE: u32 = u32::MAX;

/// A min-heap over slot numbers `0..capacity`. Each entry carries its key, so comparisons
/// read the heap array only (one cache line per level); a slot's position is kept so it can
/// leave from anywhere.
pub(crate) struct SlotHeap {
    heap: Vec<(EventKey, u32)>,
    pos: Vec<u32>,
}

impl SlotHeap {
    pub(crate) fn new(capacity: usize) -> Self {
        SlotHeap { heap: Vec::with_capacity(capacity), pos: vec![NOWHERE; capacity] }
    }

    pub(crate) fn contains(&self, slot: u32) -> bool {
        self.pos[slot as usize] != NOWHERE
    }

    /// The least slot and its key.
    pub(crate) fn peek(&self) -> Option<(u32, EventKey)> {
        self.heap.first().map(|&(k, s)| (s, k))
    }

    pub(crate) fn push(&mut self, slot: u32, key: EventKey) {
        debug_assert!(!self.contains(slot));
        let i = self.heap.len();
        self.heap.push((key, slot));
        self.pos[slot as usize] = i as u32;
        self.sift_up(i);
    }

    pub(crate) fn pop(&mut self) -> Option<u32> {
        let top = self.heap.first()?.1;
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
        self.pos[slot as usize] = NOWHERE;
        if i == last {
            self.heap.pop();
            return true;
        }
        self.heap.swap(i, last);
        self.heap.pop();
        self.pos[self.heap[i].1 as usize] = i as u32;
        if i > 0 && self.heap[i].0 < self.heap[(i - 1) / 2].0 {
            self.sift_up(i);
        } else {
            self.sift_down(i);
        }
        true
    }

    fn sift_up(&mut self, mut i: usize) {
        let moving = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if moving.0 >= self.heap[parent].0 {
                break;
            }
            self.heap[i] = self.heap[parent];
            self.pos[self.heap[i].1 as usize] = i as u32;
            i = parent;
        }
        self.heap[i] = moving;
        self.pos[moving.1 as usize] = i as u32;
    }

    fn sift_down(&mut self, mut i: usize) {
        let moving = self.heap[i];
        let n = self.heap.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let child = if r < n && self.heap[r].0 < self.heap[l].0 { r } else { l };
            if self.heap[child].0 >= moving.0 {
                break;
            }
            self.heap[i] = self.heap[child];
            self.pos[self.heap[i].1 as usize] = i as u32;
            i = child;
        }
        self.heap[i] = moving;
        self.pos[moving.1 as usize] = i as u32;
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
