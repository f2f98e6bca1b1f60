//! A value behind a busy flag: one user at a time enters it, and anyone else is turned away
//! at once (nobody ever waits for it). A handler's function sits in one: entering costs one
//! atomic compare-and-swap and leaving one plain store, where a lock's release would be a
//! second atomic read-modify-write, which also waits for every earlier store to reach the
//! cache.
//!
//! Owns the flag and the value's exclusive access. Must not: let two guards of one cell exist
//! at once, or keep the flag set once a guard is gone (also when its user panics).

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// A value and whether someone holds it ([`BusyCell::try_enter`]).
pub(crate) struct BusyCell<T: ?Sized> {
    busy: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a `BusyGuard`, and at most one exists at a time
// (the flag is taken by a compare-and-swap and given back when the guard drops), so sharing
// the cell between threads shares no access to the value: as for a mutex, `T: Send` is enough.
unsafe impl<T: ?Sized + Send> Sync for BusyCell<T> {}

impl<T> BusyCell<T> {
    /// A free cell holding `value`.
    pub(crate) fn new(value: T) -> BusyCell<T> {
        BusyCell { busy: AtomicBool::new(false), value: UnsafeCell::new(value) }
    }
}

impl<T: ?Sized> BusyCell<T> {
    /// The value, if nobody holds it; `None` at once otherwise.
    #[inline]
    pub(crate) fn try_enter(&self) -> Option<BusyGuard<'_, T>> {
        // Acquire: what the last holder wrote to the value is seen by this one.
        self.busy.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).ok()?;
        Some(BusyGuard { cell: self })
    }

    /// Whether someone holds the value now.
    #[inline]
    pub(crate) fn is_busy(&self) -> bool {
        self.busy.load(Ordering::Acquire)
    }
}

/// The exclusive use of a [`BusyCell`]'s value; the cell is free again when it drops.
pub(crate) struct BusyGuard<'a, T: ?Sized> {
    cell: &'a BusyCell<T>,
}

impl<T: ?Sized> Deref for BusyGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard is the only one of its cell (see `try_enter`), so nothing else
        // reaches the value while it lives.
        unsafe { &*self.cell.value.get() }
    }
}

impl<T: ?Sized> DerefMut for BusyGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this reference the guard's only one.
        unsafe { &mut *self.cell.value.get() }
    }
}

impl<T: ?Sized> Drop for BusyGuard<'_, T> {
    fn drop(&mut self) {
        // Release: the next holder sees what this one wrote. A plain store on x86.
        self.cell.busy.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::BusyCell;
    use std::panic::{catch_unwind, AssertUnwindSafe};

    #[test]
    fn one_holder_at_a_time_and_free_again_after_a_panic() {
        let cell = BusyCell::new(0u32);
        {
            let mut g = cell.try_enter().expect("free");
            *g += 1;
            assert!(cell.is_busy());
            assert!(cell.try_enter().is_none());
        }
        assert!(!cell.is_busy());
        let r = catch_unwind(AssertUnwindSafe(|| {
            let mut g = cell.try_enter().expect("free");
            *g += 1;
            panic!("inside");
        }));
        assert!(r.is_err());
        assert_eq!(*cell.try_enter().expect("free after the panic"), 2);
    }
}
