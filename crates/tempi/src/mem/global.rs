//! [`BoundedGlobal`]: the bounded heap as a [`GlobalAlloc`], over a buffer inside the value
//! itself, so that it can be a `static` and the program's `#[global_allocator]`.
//!
//! It is shared by every thread, so one atomic spin lock guards it: a `std::sync::Mutex`
//! might allocate or park, neither of which an allocator may do. A waiter that spun a while
//! yields its CPU, so a holder preempted on the same CPU can finish. Yielding does not help
//! a `SCHED_FIFO` thread that preempted a lower-priority holder on that holder's CPU: it
//! would spin until the holder runs again. Real-time threads that allocate should use a
//! [`BoundedHeap`](super::BoundedHeap) of their own, not a heap shared with other threads. The heap is laid over the
//! buffer by the first call that takes the lock (a `const fn` cannot know the buffer's
//! address).

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};

use super::region::lock_pages;
use super::tags::RawHeap;
use super::{HeapStats, MemoryLock};

/// Spins on a held lock before the waiter yields its CPU.
const SPINS_BEFORE_YIELD: u32 = 64;

#[repr(C, align(4096))]
struct Buffer<const N: usize>([u8; N]);

/// A bounded heap of `N` bytes usable as the global allocator. Alignments up to
/// [`MAX_ALIGN`](super::MAX_ALIGN) are served; larger ones, and any request not found within
/// `max_search` free-list entries, get a null pointer, as [`GlobalAlloc`] requires.
///
/// ```
/// use std::alloc::{GlobalAlloc, Layout};
/// use tempi::mem::BoundedGlobal;
///
/// // In a program: `#[global_allocator] static HEAP: BoundedGlobal<{ 1 << 20 }> = BoundedGlobal::new(16);`
/// static HEAP: BoundedGlobal<65536> = BoundedGlobal::new(16);
///
/// let layout = Layout::from_size_align(24, 8).unwrap();
/// // SAFETY: the layout has a non-zero size; the pointer is freed once with the same layout.
/// unsafe {
///     let p = HEAP.alloc(layout);
///     assert!(!p.is_null());
///     HEAP.dealloc(p, layout);
/// }
/// assert_eq!(HEAP.stats().free_list_len, 1);
/// ```
pub struct BoundedGlobal<const N: usize> {
    lock: AtomicBool,
    heap: UnsafeCell<RawHeap>,
    max_search: usize,
    buffer: UnsafeCell<Buffer<N>>,
}

// SAFETY: all access to `heap` and `buffer` happens with `lock` held (see `with_heap`), so
// sharing the value between threads never gives two of them the heap at once.
unsafe impl<const N: usize> Sync for BoundedGlobal<N> {}

impl<const N: usize> BoundedGlobal<N> {
    /// An allocator over `N` bytes inspecting at most `max_search` free-list entries per
    /// allocation. Checked when compiled: `N` must hold one block and `max_search` be positive.
    ///
    /// ```
    /// use tempi::mem::BoundedGlobal;
    /// static HEAP: BoundedGlobal<4096> = BoundedGlobal::new(8);
    /// assert_eq!(HEAP.stats().max_search, 8);
    /// ```
    pub const fn new(max_search: usize) -> Self {
        assert!(max_search > 0, "max_search must be at least 1");
        assert!(N >= RawHeap::min_region(), "the buffer is too small for one block");
        BoundedGlobal {
            lock: AtomicBool::new(false),
            heap: UnsafeCell::new(RawHeap::unset()),
            max_search,
            buffer: UnsafeCell::new(Buffer([0; N])),
        }
    }

    /// Run `f` on the heap with the spin lock held, laying the heap out on first use.
    fn with_heap<R>(&self, f: impl FnOnce(&mut RawHeap) -> R) -> R {
        let mut spins = 0u32;
        while self.lock.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            // The holder may have been preempted on this CPU: after a short spin, give the
            // CPU away (`sched_yield`, which allocates nothing) rather than burn the slice.
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(SPINS_BEFORE_YIELD) {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        struct Unlock<'a>(&'a AtomicBool);
        impl Drop for Unlock<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let _unlock = Unlock(&self.lock);
        // SAFETY: the spin lock is held until `_unlock` drops, so this is the only reference
        // to the heap; nothing in `RawHeap` allocates or calls back into this allocator.
        let heap = unsafe { &mut *self.heap.get() };
        if !heap.is_set() {
            let base = self.buffer.get().cast::<u8>();
            // SAFETY: the buffer is page-aligned, `N >= min_region()` and `max_search >= 1`
            // (both asserted by `new`), and it lives in `self`, which outlives every use of
            // `heap` (they are fields of the same value, reached only under the lock).
            *heap = unsafe { RawHeap::init(base, N, self.max_search) };
        }
        f(heap)
    }

    /// Counters and the free list's shape (walks the list under the lock).
    ///
    /// ```
    /// use tempi::mem::BoundedGlobal;
    /// static HEAP: BoundedGlobal<4096> = BoundedGlobal::new(8);
    /// assert_eq!(HEAP.stats().allocations, 0);
    /// ```
    pub fn stats(&self) -> HeapStats {
        self.with_heap(|h| h.stats())
    }

    /// `mlock` the buffer. Call it early (before real-time work); a refusal is reported in the
    /// result, the allocator works either way.
    ///
    /// ```
    /// use tempi::mem::{BoundedGlobal, MemoryLock};
    /// static HEAP: BoundedGlobal<8192> = BoundedGlobal::new(8);
    /// match HEAP.lock_in_memory() {
    ///     MemoryLock::Locked => {}
    ///     refused => eprintln!("not locked: {refused:?}"),
    /// }
    /// ```
    pub fn lock_in_memory(&self) -> MemoryLock {
        lock_pages(self.buffer.get().cast::<u8>(), N)
    }
}

/// Shows the size and the bound; [`BoundedGlobal::stats`] has the counters.
impl<const N: usize> std::fmt::Debug for BoundedGlobal<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundedGlobal").field("bytes", &N).field("max_search", &self.max_search).finish()
    }
}

// SAFETY: `alloc` returns either null or a block of at least `layout.size()` bytes aligned to
// `layout.align()` that no other live allocation overlaps (the heap's invariants, checked by
// its property tests); `dealloc` frees only what `alloc` returned, as its contract states.
unsafe impl<const N: usize> GlobalAlloc for BoundedGlobal<N> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.with_heap(|h| h.alloc(layout.size(), layout.align()).unwrap_or(std::ptr::null_mut()))
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: the caller guarantees `ptr` came from this allocator and is freed once.
        self.with_heap(|h| unsafe { h.free(ptr) })
    }
}
