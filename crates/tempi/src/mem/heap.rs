//! [`BoundedHeap`], the heap an application owns, and the handles it gives out:
//! [`HeapBlock`] (raw bytes) and [`HeapBox`] (a typed value freed on drop).

use std::alloc::Layout;
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use super::region::Region;
use super::tags::RawHeap;
use super::{AllocFailed, BlockInfo, HeapCorrupt, HeapError, HeapOptions, HeapStats, MemoryLock};

/// Tells heaps apart, so a block handed to the wrong heap is refused instead of corrupting it.
static NEXT_HEAP_ID: AtomicU64 = AtomicU64::new(1);

/// A bounded-time heap over one fixed region, for one owner's real-time data.
///
/// Allocation is first fit over at most [`HeapOptions::max_search`] free-list entries and
/// fails beyond them; freeing (with coalescing) is constant time. See the [module
/// docs](super) for the block layout and the invariants.
///
/// The heap is `Send` but not `Sync`: one thread owns it. Its methods take `&self` so that a
/// [`HeapBox`] can give its block back when dropped while others are alive.
///
/// ```
/// use std::alloc::Layout;
/// use tempi::mem::{BoundedHeap, HeapOptions};
///
/// let heap = BoundedHeap::new(64 * 1024, HeapOptions { max_search: 8, lock_in_memory: false }).unwrap();
/// let block = heap.alloc(Layout::from_size_align(100, 64).unwrap()).unwrap();
/// assert_eq!(block.as_ptr() as usize % 64, 0);
/// assert!(block.capacity() >= 100);
/// heap.free(block).unwrap();
/// assert_eq!(heap.stats().free_list_len, 1); // everything coalesced again
/// ```
pub struct BoundedHeap {
    raw: UnsafeCell<RawHeap>,
    id: u64,
    region: Region,
}

// SAFETY: the heap owns its region outright; the only other pointers into it are the handles
// it gave out, which are not `Send` themselves (a `HeapBox` also borrows the heap, so the heap
// cannot move while one lives). Moving the heap moves that ownership whole. It stays `!Sync`
// (the `UnsafeCell`), which is what its `&self` methods rely on.
unsafe impl Send for BoundedHeap {}

impl BoundedHeap {
    /// Take a region of `bytes` from the system (once: the heap never grows) and lay one free
    /// block over it. With [`HeapOptions::lock_in_memory`] the region is `mlock`ed; whether
    /// that worked is [`BoundedHeap::memory_lock`], not an error.
    ///
    /// ```
    /// use tempi::mem::{BoundedHeap, HeapError, HeapOptions};
    ///
    /// let opts = HeapOptions { max_search: 4, lock_in_memory: false };
    /// assert!(matches!(BoundedHeap::new(8, opts), Err(HeapError::RegionTooSmall { .. })));
    /// assert!(BoundedHeap::new(4096, opts).is_ok());
    /// ```
    pub fn new(bytes: usize, options: HeapOptions) -> Result<BoundedHeap, HeapError> {
        if options.max_search == 0 {
            return Err(HeapError::ZeroSearchBound);
        }
        let minimum = RawHeap::min_region();
        if bytes < minimum {
            return Err(HeapError::RegionTooSmall { bytes, minimum });
        }
        let region = Region::new(bytes, options.lock_in_memory)?;
        // SAFETY: the region is page-aligned (so GRANULE-aligned), `bytes` long, at least the
        // minimum, owned by this heap and freed only when the heap (and so `raw`) is dropped;
        // `max_search >= 1` was checked above.
        let raw = unsafe { RawHeap::init(region.base(), region.len(), options.max_search) };
        Ok(BoundedHeap { raw: UnsafeCell::new(raw), id: NEXT_HEAP_ID.fetch_add(1, Ordering::Relaxed), region })
    }

    fn raw(&self) -> &RawHeap {
        // SAFETY: the heap is `!Sync`, so only the owning thread gets here, and no method
        // keeps a reference from `raw_mut` alive across a call that could come back in
        // (none of them runs application code while holding one).
        unsafe { &*self.raw.get() }
    }

    #[allow(clippy::mut_from_ref)] // exclusive by construction: see the SAFETY comment
    fn raw_mut(&self) -> &mut RawHeap {
        // SAFETY: as in `raw`: one thread, and each method uses the reference for one
        // non-reentrant operation and drops it before returning or running other code.
        unsafe { &mut *self.raw.get() }
    }

    /// Allocate a block for `layout` (alignment up to [`MAX_ALIGN`](super::MAX_ALIGN)),
    /// inspecting at most `max_search` free-list entries. A failure says why and how many
    /// entries it inspected; it never searched further.
    ///
    /// ```
    /// use std::alloc::Layout;
    /// use tempi::mem::{BoundedHeap, FailReason, HeapOptions};
    ///
    /// let heap = BoundedHeap::new(4096, HeapOptions { max_search: 2, lock_in_memory: false }).unwrap();
    /// let err = heap.alloc(Layout::from_size_align(1 << 20, 8).unwrap()).unwrap_err();
    /// assert_eq!(err.reason, FailReason::NoFit);
    /// ```
    pub fn alloc(&self, layout: Layout) -> Result<HeapBlock, AllocFailed> {
        let ptr = self.raw_mut().alloc(layout.size(), layout.align())?;
        // SAFETY: `RawHeap::alloc` returns a pointer into the region, which is never null.
        let ptr = unsafe { NonNull::new_unchecked(ptr) };
        // SAFETY: `ptr` is the live allocation just made.
        let capacity = unsafe { self.raw().capacity(ptr.as_ptr()) };
        Ok(HeapBlock { ptr, capacity, heap: self.id })
    }

    /// Give a block back (constant time, coalescing with free neighbours). A block of another
    /// heap is refused and returned untouched.
    ///
    /// ```
    /// use std::alloc::Layout;
    /// use tempi::mem::{BoundedHeap, HeapOptions};
    ///
    /// let opts = HeapOptions { max_search: 4, lock_in_memory: false };
    /// let (a, b) = (BoundedHeap::new(4096, opts).unwrap(), BoundedHeap::new(4096, opts).unwrap());
    /// let block = a.alloc(std::alloc::Layout::new::<u64>()).unwrap();
    /// let refused = b.free(block).unwrap_err();
    /// a.free(refused.0).unwrap();
    /// ```
    pub fn free(&self, block: HeapBlock) -> Result<(), ForeignBlock> {
        if block.heap != self.id {
            return Err(ForeignBlock(block));
        }
        // SAFETY: the block was made by this heap's `alloc` (same id) and `HeapBlock` is not
        // `Clone`, so this is the one and only free of that allocation.
        unsafe { self.raw_mut().free(block.ptr.as_ptr()) };
        Ok(())
    }

    /// Move `value` into the heap; it is dropped and its block freed when the box is.
    /// If no block is found, the value comes back inside the error.
    ///
    /// ```
    /// use tempi::mem::{BoundedHeap, HeapOptions};
    ///
    /// let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
    /// let mut samples = heap.boxed([0u32; 16]).unwrap();
    /// samples[3] = 7;
    /// assert_eq!(samples.iter().sum::<u32>(), 7);
    /// drop(samples);
    /// assert_eq!(heap.stats().free_bytes, heap.stats().region_bytes - 16);
    /// ```
    pub fn boxed<T>(&self, value: T) -> Result<HeapBox<'_, T>, Rejected<T>> {
        match self.alloc(Layout::new::<T>()) {
            Ok(block) => {
                let ptr = block.ptr.cast::<T>();
                // SAFETY: the block is at least `size_of::<T>()` bytes, aligned for `T`, and
                // ours alone; writing moves `value` in without reading the old bytes.
                unsafe { ptr.as_ptr().write(value) };
                Ok(HeapBox { heap: self, ptr, _owns: PhantomData })
            }
            Err(error) => Err(Rejected { value, error }),
        }
    }

    /// Counters and the shape of the free list. Walks the list for its length and its largest
    /// block (O(length)); everything else is kept as it happens.
    ///
    /// ```
    /// use tempi::mem::{BoundedHeap, HeapOptions};
    ///
    /// let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
    /// let s = heap.stats();
    /// assert_eq!((s.free_list_len, s.largest_free_block), (1, s.free_bytes));
    /// ```
    pub fn stats(&self) -> HeapStats {
        self.raw().stats()
    }

    /// Whether the region was locked in memory, refused, or not asked to be.
    ///
    /// ```
    /// use tempi::mem::{BoundedHeap, HeapOptions, MemoryLock};
    ///
    /// let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
    /// assert_eq!(heap.memory_lock(), MemoryLock::NotRequested);
    /// ```
    pub fn memory_lock(&self) -> MemoryLock {
        self.region.lock()
    }

    /// The free list in list order (the order a search inspects it). Allocates the vector:
    /// for tests and diagnostics, not for a real-time path.
    ///
    /// ```
    /// use tempi::mem::{BoundedHeap, HeapOptions};
    ///
    /// let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
    /// assert_eq!(heap.free_list().len(), 1);
    /// ```
    pub fn free_list(&self) -> Vec<BlockInfo> {
        let mut out = Vec::new();
        self.raw().free_list(|b| out.push(b));
        out
    }

    /// Every block in address order, free or used. Allocates the vector, like
    /// [`BoundedHeap::free_list`].
    ///
    /// ```
    /// use tempi::mem::{BoundedHeap, HeapOptions};
    ///
    /// let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
    /// let _kept = heap.boxed(1u8).unwrap();
    /// let blocks = heap.blocks();
    /// assert_eq!((blocks.len(), blocks[0].free, blocks[1].free), (2, false, true));
    /// ```
    pub fn blocks(&self) -> Vec<BlockInfo> {
        let mut out = Vec::new();
        self.raw().blocks(|b| out.push(b));
        out
    }

    /// Walk the whole region and the free list and check every invariant of the layout.
    ///
    /// ```
    /// use tempi::mem::{BoundedHeap, HeapOptions};
    ///
    /// let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
    /// heap.check().unwrap();
    /// ```
    pub fn check(&self) -> Result<(), HeapCorrupt> {
        self.raw().check()
    }

    /// Offset of `ptr` from the region's first payload byte position (as in
    /// [`BlockInfo::offset`]), or `None` if it is not inside this heap's region.
    ///
    /// ```
    /// use tempi::mem::{BoundedHeap, HeapOptions};
    ///
    /// let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
    /// let b = heap.alloc(std::alloc::Layout::new::<u32>()).unwrap();
    /// assert_eq!(heap.offset_of(b.as_ptr()), Some(heap.blocks()[0].offset));
    /// assert_eq!(heap.offset_of(&0u8), None);
    /// ```
    pub fn offset_of(&self, ptr: *const u8) -> Option<usize> {
        self.raw().contains(ptr).then(|| ptr as usize - self.region.base() as usize)
    }
}

/// Shows the counters and the lock state, not the region's bytes.
impl std::fmt::Debug for BoundedHeap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundedHeap").field("stats", &self.stats()).field("memory_lock", &self.memory_lock()).finish()
    }
}

/// A block of a [`BoundedHeap`]: raw, uninitialised bytes. Give it back with
/// [`BoundedHeap::free`]; dropping the handle without that keeps the block allocated (as
/// leaking would). Not `Clone`, so a block is freed at most once.
///
/// ```
/// use tempi::mem::{BoundedHeap, HeapOptions};
///
/// let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
/// let block = heap.alloc(std::alloc::Layout::array::<u16>(10).unwrap()).unwrap();
/// assert!(block.capacity() >= 20);
/// heap.free(block).unwrap();
/// ```
#[derive(Debug)]
#[must_use = "a block dropped without `BoundedHeap::free` stays allocated"]
pub struct HeapBlock {
    ptr: NonNull<u8>,
    capacity: usize,
    heap: u64,
}

impl HeapBlock {
    /// The first byte; aligned as the layout asked. Valid for `capacity()` bytes until the
    /// block is freed or its heap dropped.
    ///
    /// ```
    /// # use tempi::mem::{BoundedHeap, HeapOptions};
    /// # let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
    /// let block = heap.alloc(std::alloc::Layout::from_size_align(8, 32).unwrap()).unwrap();
    /// assert_eq!(block.as_ptr() as usize % 32, 0);
    /// ```
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Usable bytes: at least the layout's size, rounded up to the block granule.
    ///
    /// ```
    /// # use tempi::mem::{BoundedHeap, HeapOptions};
    /// # let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
    /// assert_eq!(heap.alloc(std::alloc::Layout::new::<u8>()).unwrap().capacity(), 16);
    /// ```
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

/// A block handed to a heap that did not make it; the block comes back unchanged.
///
/// ```
/// # use tempi::mem::{BoundedHeap, HeapOptions};
/// # let opts = HeapOptions { max_search: 4, lock_in_memory: false };
/// let (a, b) = (BoundedHeap::new(4096, opts).unwrap(), BoundedHeap::new(4096, opts).unwrap());
/// let err = b.free(a.alloc(std::alloc::Layout::new::<u8>()).unwrap()).unwrap_err();
/// assert!(err.to_string().contains("another heap"));
/// ```
#[derive(Debug)]
pub struct ForeignBlock(pub HeapBlock);

impl std::fmt::Display for ForeignBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the block at {:p} belongs to another heap", self.0.ptr)
    }
}

impl std::error::Error for ForeignBlock {}

/// A value that did not fit into the heap, returned with the reason.
///
/// ```
/// use tempi::mem::{BoundedHeap, HeapOptions};
///
/// let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
/// let rejected = heap.boxed([7u8; 8192]).map(|_| ()).unwrap_err();
/// assert_eq!(rejected.value[8191], 7);
/// ```
pub struct Rejected<T> {
    /// The value, untouched.
    pub value: T,
    /// Why no block was found.
    pub error: AllocFailed,
}

/// Shows the error only, so that `unwrap` works whatever the value's type.
impl<T> std::fmt::Debug for Rejected<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rejected").field("error", &self.error).finish_non_exhaustive()
    }
}

/// A `T` living in a [`BoundedHeap`]; dropped and freed (in constant time) with the box.
///
/// ```
/// use tempi::mem::{BoundedHeap, HeapBox, HeapOptions};
///
/// let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
/// let b = heap.boxed(String::from("kept")).unwrap();
/// assert_eq!(HeapBox::into_inner(b), "kept");
/// ```
pub struct HeapBox<'h, T> {
    heap: &'h BoundedHeap,
    ptr: NonNull<T>,
    _owns: PhantomData<T>,
}

impl<T> HeapBox<'_, T> {
    /// Move the value out and free its block.
    ///
    /// ```
    /// # use tempi::mem::{BoundedHeap, HeapBox, HeapOptions};
    /// # let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
    /// assert_eq!(HeapBox::into_inner(heap.boxed(5u64).unwrap()), 5);
    /// ```
    pub fn into_inner(this: Self) -> T {
        let this = std::mem::ManuallyDrop::new(this);
        // SAFETY: the box holds an initialised `T`; `ManuallyDrop` keeps `Drop` from reading
        // it again, and the block is freed right after without touching the value.
        let value = unsafe { this.ptr.as_ptr().read() };
        // SAFETY: the block came from this heap's `alloc` and is freed once: the box is gone.
        unsafe { this.heap.raw_mut().free(this.ptr.as_ptr().cast()) };
        value
    }
}

impl<T> Deref for HeapBox<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the pointer is aligned, initialised and uniquely owned by this box.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T> DerefMut for HeapBox<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes the access exclusive.
        unsafe { self.ptr.as_mut() }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for HeapBox<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl<T> Drop for HeapBox<'_, T> {
    fn drop(&mut self) {
        // SAFETY: the value is initialised and dropped once, here. Its destructor may use the
        // heap again; no heap reference is held across it.
        unsafe { self.ptr.as_ptr().drop_in_place() };
        // SAFETY: the block came from this heap's `alloc` and is freed once, by its box.
        unsafe { self.heap.raw_mut().free(self.ptr.as_ptr().cast()) };
    }
}
