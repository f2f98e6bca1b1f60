//! A fixed-capacity double-ended ring over preallocated values: LP histories push at the back,
//! undo from the back and commit from the front. Owns nothing else.

/// A ring whose storage is filled once; pushing reuses the slot's old value (the caller
/// overwrites it in place, so a state's buffers are reused instead of reallocated).
pub(crate) struct Ring<T> {
    slots: Vec<T>,
    head: usize,
    len: usize,
}

impl<T> Ring<T> {
    /// A ring over `slots` (its capacity is their number), empty.
    pub(crate) fn over(slots: Vec<T>) -> Self {
        Ring { slots, head: 0, len: 0 }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn is_full(&self) -> bool {
        self.len == self.slots.len()
    }

    fn physical(&self, i: usize) -> usize {
        let p = self.head + i;
        if p >= self.slots.len() {
            p - self.slots.len()
        } else {
            p
        }
    }

    /// Grows by one at the back and returns the new slot (holding a stale value), or `None`
    /// when full.
    pub(crate) fn push_back(&mut self) -> Option<&mut T> {
        if self.is_full() {
            return None;
        }
        let p = self.physical(self.len);
        self.len += 1;
        Some(&mut self.slots[p])
    }

    /// Removes the back element; the value stays in storage and is returned by reference.
    pub(crate) fn pop_back(&mut self) -> Option<&mut T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        let p = self.physical(self.len);
        Some(&mut self.slots[p])
    }

    /// Removes the front element, returned by reference.
    pub(crate) fn pop_front(&mut self) -> Option<&mut T> {
        if self.len == 0 {
            return None;
        }
        let p = self.head;
        self.head = self.physical(1);
        self.len -= 1;
        Some(&mut self.slots[p])
    }

    /// Element `i` counted from the front.
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len {
            return None;
        }
        Some(&self.slots[self.physical(i)])
    }

    /// Element `i` counted from the front, to change in place.
    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i >= self.len {
            return None;
        }
        let p = self.physical(i);
        Some(&mut self.slots[p])
    }

    pub(crate) fn back(&self) -> Option<&T> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    pub(crate) fn front(&self) -> Option<&T> {
        self.get(0)
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;

    #[test]
    fn wraps_and_keeps_order() {
        let mut r = Ring::over(vec![0; 3]);
        for v in 1..=3 {
            *r.push_back().unwrap() = v;
        }
        assert!(r.push_back().is_none());
        assert_eq!(*r.pop_front().unwrap(), 1);
        *r.push_back().unwrap() = 4;
        assert_eq!((r.get(0), r.get(2)), (Some(&2), Some(&4)));
        assert_eq!(*r.pop_back().unwrap(), 4);
        assert_eq!(r.back(), Some(&3));
        assert_eq!(r.len(), 2);
    }
}
