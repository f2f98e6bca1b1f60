//! A value behind a busy flag, owned by one serial executor at a time: one user at a time
//! enters it, and anyone else is turned away at once (nobody ever waits for it). A handler's
//! function sits in one.
//!
//! **Why it has an owner.** Code of one executor — a kernel of a runtime: its threads, the
//! OS-backed ones among them, and its dispatcher — runs one piece at a time, each piece
//! ordered after the one before. A cell that only its owner enters can therefore take its
//! flag with a plain load and a plain store, where a cell open to every thread of the process
//! would need an atomic compare-and-swap, which also waits for every earlier store to reach
//! the cache (a few nanoseconds on the idle handler call, a tenth of it). The owner is bound
//! by the first entry (a compare-and-swap, once) and freed when its runtime's run has ended,
//! so the cell can serve another runtime after; entries of another executor meanwhile are
//! turned away ([`Entry::NotOwner`]), which the handler reports as a refusal.
//!
//! Owns the flag, the owner and the value's exclusive access. Must not: let two guards of one
//! cell exist at once, keep the flag set once a guard is gone (also when its user panics), or
//! let an executor other than the owner enter.

use std::num::NonZeroU64;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::Ordering;

// Loom's under `--cfg loom`, for the model below.
use super::loom_shim::{AtomicBool, AtomicU64, UnsafeCell};

/// The identity of one serial executor: one kernel of one runtime (one per real-time CPU, one
/// for all the CPUs of a simulated runtime). Unique in the process and never reused: the
/// runtime hands its kernels consecutive identities from a process-wide counter when it is
/// built ([`KernelId::reserve`]), and no other code makes one. Code presents only its own
/// executor's identity: the kernel gives it to its threads' contexts and its dispatcher's
/// handler host, and nothing carries it elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KernelId(NonZeroU64);

impl KernelId {
    /// Identities for `kernels` new kernels, never handed out before: the first one's. Kernel
    /// `k` is `first.nth(k)`.
    pub(crate) fn reserve(kernels: usize) -> KernelId {
        // Handed out in sequence from 1: 64 bits do not wrap in a process's life.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let first = NEXT.fetch_add(kernels as u64, Ordering::Relaxed);
        KernelId(NonZeroU64::new(first).expect("executor identities start at 1"))
    }

    /// The identity of kernel `k` of a runtime whose first kernel is `self` (`k` below the
    /// number reserved, which the caller checks).
    pub(crate) fn nth(self, k: usize) -> KernelId {
        KernelId(self.0.saturating_add(k as u64))
    }

    /// Whether this is one of the `count` identities starting at `first`.
    pub(crate) fn among(self, first: KernelId, count: usize) -> bool {
        (first.0.get()..first.0.get().saturating_add(count as u64)).contains(&self.0.get())
    }
}

/// What [`BusyCell::try_enter`] found.
pub(crate) enum Entry<'a, T: ?Sized> {
    /// Free, and the caller's executor owns it: entered.
    Entered(BusyGuard<'a, T>),
    /// The caller's executor owns it, and someone of it holds it.
    Busy,
    /// Another executor owns it, or none does yet ([`BusyCell::bind`] first).
    NotOwner,
}

/// A value, whether someone holds it, and the executor it belongs to for now.
pub(crate) struct BusyCell<T: ?Sized> {
    /// The owning executor's identity; 0: none.
    owner: AtomicU64,
    busy: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a `BusyGuard`, and at most one exists at a time
// (see `try_enter`), so sharing the cell between threads shares no access to the value: as
// for a mutex, `T: Send` is enough.
unsafe impl<T: ?Sized + Send> Sync for BusyCell<T> {}

impl<T> BusyCell<T> {
    /// A free cell holding `value`, owned by no executor.
    pub(crate) fn new(value: T) -> BusyCell<T> {
        BusyCell { owner: AtomicU64::new(0), busy: AtomicBool::new(false), value: UnsafeCell::new(value) }
    }
}

impl<T: ?Sized> BusyCell<T> {
    /// Enter the value as `by`, if `by` owns the cell and nobody holds it.
    ///
    /// The flag is taken with a plain load and store, not a read-modify-write: that is sound
    /// because only the owner gets past the first test, and an executor's code runs one piece
    /// at a time, each ordered after the one before, so no other entry can come between the
    /// load and the store, and every earlier holder's writes (its release of the flag among
    /// them) happen before this load. The owner is read with acquire ordering, which a new
    /// owner needs to see what the last one wrote (see [`BusyCell::free`]).
    #[inline]
    pub(crate) fn try_enter(&self, by: KernelId) -> Entry<'_, T> {
        if self.owner.load(Ordering::Acquire) != by.0.get() {
            return Entry::NotOwner;
        }
        if self.busy.load(Ordering::Relaxed) {
            return Entry::Busy;
        }
        self.busy.store(true, Ordering::Relaxed);
        Entry::Entered(BusyGuard { cell: self })
    }

    /// Make `by` the owner, unless another executor is: whether `by` owns the cell now.
    #[cold]
    pub(crate) fn bind(&self, by: KernelId) -> bool {
        // Acquire: what the last owner wrote before it was freed is seen; release: an
        // executor that sees this owner with acquire ordering (another thread of `by` may have
        // bound it for it) sees that too, the store being part of the free's release sequence.
        match self.owner.compare_exchange(0, by.0.get(), Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => true,
            Err(owner) => owner == by.0.get(),
        }
    }

    /// The executor that owns the cell now, if any.
    pub(crate) fn owner(&self) -> Option<KernelId> {
        NonZeroU64::new(self.owner.load(Ordering::Acquire)).map(KernelId)
    }

    /// Free the cell of its owner `was`, whose code has all ended (the run of its runtime is
    /// over, and whatever ran it is joined): another executor may bind it next. Nothing if
    /// `was` does not own it.
    pub(crate) fn free(&self, was: KernelId) {
        // Release: the next owner, binding with acquire ordering, sees every write of this one.
        let _ = self.owner.compare_exchange(was.0.get(), 0, Ordering::Release, Ordering::Relaxed);
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
        self.cell.value.with(|value| unsafe { &*value })
    }
}

impl<T: ?Sized> DerefMut for BusyGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this reference the guard's only one.
        self.cell.value.with_mut(|value| unsafe { &mut *value })
    }
}

impl<T: ?Sized> Drop for BusyGuard<'_, T> {
    fn drop(&mut self) {
        // Release: an observer of `is_busy` (or the next owner) sees what this holder wrote.
        // A plain store on x86.
        self.cell.busy.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::{BusyCell, Entry, KernelId};
    use std::panic::{catch_unwind, AssertUnwindSafe};

    fn entered<T: ?Sized>(e: Entry<'_, T>) -> super::BusyGuard<'_, T> {
        match e {
            Entry::Entered(g) => g,
            Entry::Busy => panic!("busy"),
            Entry::NotOwner => panic!("not the owner"),
        }
    }

    #[test]
    fn one_holder_at_a_time_and_free_again_after_a_panic() {
        let me = KernelId::reserve(1);
        let cell = BusyCell::new(0u32);
        assert!(matches!(cell.try_enter(me), Entry::NotOwner), "nobody owns a new cell");
        assert!(cell.bind(me));
        {
            let mut g = entered(cell.try_enter(me));
            *g += 1;
            assert!(cell.is_busy());
            assert!(matches!(cell.try_enter(me), Entry::Busy));
        }
        assert!(!cell.is_busy());
        let r = catch_unwind(AssertUnwindSafe(|| {
            let mut g = entered(cell.try_enter(me));
            *g += 1;
            panic!("inside");
        }));
        assert!(r.is_err());
        assert_eq!(*entered(cell.try_enter(me)), 2);
    }

    #[test]
    fn another_executor_is_turned_away_until_the_owner_frees_the_cell() {
        let first = KernelId::reserve(2);
        let (a, b) = (first, first.nth(1));
        assert!(a.among(first, 2) && b.among(first, 2) && !KernelId::reserve(1).among(first, 2));
        let cell = BusyCell::new(7u32);
        assert!(cell.bind(a));
        assert!(cell.bind(a), "binding to the owner again is no change");
        assert!(!cell.bind(b));
        assert!(matches!(cell.try_enter(b), Entry::NotOwner));
        cell.free(b);
        assert_eq!(cell.owner(), Some(a), "only the owner frees it");
        cell.free(a);
        assert_eq!(cell.owner(), None);
        assert!(cell.bind(b));
        assert_eq!(*entered(cell.try_enter(b)), 7);
        assert!(matches!(cell.try_enter(a), Entry::NotOwner));
    }
}

/// The loom model of the busy cell and its binding (docs/ARCHITECTURE.md, "The loom
/// models"): one executor's code on two OS threads whose pieces are ordered by a hand-off (as
/// a dispatcher and its OS-backed worker are, by the worker's channel), another executor
/// trying meanwhile, and the cell passing to it once the first is freed.
#[cfg(all(test, loom))]
mod loom_models {
    use super::{BusyCell, Entry, KernelId};
    use crate::os::loom_shim::{self, thread};
    use std::sync::Arc;

    /// The owner's two pieces enter one after the other and see each other's writes; the
    /// other executor is turned away (never let in, never told "busy") until the owner is
    /// freed, then binds, enters and sees every write of the first: loom checks each access
    /// to the value against the others.
    #[test]
    fn loom_busy_cell_one_owner_at_a_time_and_its_writes_pass_on() {
        loom_shim::check(2, || {
            let first = KernelId::reserve(2);
            let (a, b) = (first, first.nth(1));
            let cell = Arc::new(BusyCell::new(0u32));
            assert!(cell.bind(a));
            let c = cell.clone();
            // The owner's first piece (its dispatcher)...
            let piece1 = thread::spawn(move || match c.try_enter(a) {
                Entry::Entered(mut g) => *g += 1,
                _ => panic!("the owner's first entry finds the cell free"),
            });
            let c = cell.clone();
            // ...and its second, after the hand-off (here a join; the worker's channel in the
            // runtime, whose own model is `os/worker.rs`'s).
            let piece2 = thread::spawn(move || {
                piece1.join().expect("piece 1");
                match c.try_enter(a) {
                    Entry::Entered(mut g) => {
                        assert_eq!(*g, 1, "the first piece's write is seen");
                        *g += 1;
                    }
                    _ => panic!("the owner's second piece finds the cell free"),
                }
            });
            let c = cell.clone();
            let other = thread::spawn(move || {
                // Turned away while `a` owns the cell: not let in, not told "busy".
                assert!(!c.bind(b));
                assert!(matches!(c.try_enter(b), Entry::NotOwner), "another executor never enters");
            });
            let c = cell.clone();
            let next = thread::spawn(move || {
                // Binds once `a` is freed, and sees every write of the last owner then.
                while !c.bind(b) {
                    thread::yield_now();
                }
                match c.try_enter(b) {
                    Entry::Entered(mut g) => {
                        assert_eq!(*g, 2, "every write of the last owner is seen");
                        *g += 1;
                    }
                    _ => panic!("the new owner finds the cell free"),
                }
            });
            piece2.join().expect("piece 2");
            other.join().expect("the other executor");
            // The run of `a` is over and joined: the cell is free for another executor.
            cell.free(a);
            next.join().expect("the next owner");
            assert_eq!(cell.owner(), Some(b));
            assert!(!cell.is_busy());
        });
    }
}
