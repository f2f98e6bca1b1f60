//! The fixed region a [`BoundedHeap`](super::BoundedHeap) serves from: taken from the system
//! once, up front, optionally locked in memory, given back when the heap is dropped.
//!
//! It comes from [`std::alloc::System`], not the global allocator, so a heap works the same
//! when a [`BoundedGlobal`](super::BoundedGlobal) is the program's global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr::NonNull;

use super::{HeapError, MemoryLock};

/// Regions are page-aligned so that locking covers exactly their own pages.
const REGION_ALIGN: usize = 4096;

pub(super) struct Region {
    base: NonNull<u8>,
    layout: Layout,
    lock: MemoryLock,
}

impl Region {
    pub(super) fn new(bytes: usize, lock_in_memory: bool) -> Result<Region, HeapError> {
        let layout = Layout::from_size_align(bytes, REGION_ALIGN).map_err(|_| HeapError::RegionTooLarge { bytes })?;
        // SAFETY: the layout has a non-zero size (the caller checked `bytes` against the
        // minimum region) and a valid power-of-two alignment.
        let base = unsafe { System.alloc(layout) };
        let base = NonNull::new(base).ok_or(HeapError::OutOfSystemMemory { bytes })?;
        let lock = if lock_in_memory { lock_pages(base.as_ptr(), bytes) } else { MemoryLock::NotRequested };
        Ok(Region { base, layout, lock })
    }

    pub(super) fn base(&self) -> *mut u8 {
        self.base.as_ptr()
    }

    pub(super) fn len(&self) -> usize {
        self.layout.size()
    }

    pub(super) fn lock(&self) -> MemoryLock {
        self.lock
    }
}

/// `mlock` the range; a refusal (typically `RLIMIT_MEMLOCK`) is reported, never fatal.
pub(super) fn lock_pages(base: *mut u8, bytes: usize) -> MemoryLock {
    // SAFETY: mlock only changes the paging of the given range, which is memory this process
    // owns; it reads and writes none of it.
    let rc = unsafe { libc::mlock(base.cast::<libc::c_void>(), bytes) };
    if rc == 0 {
        MemoryLock::Locked
    } else {
        MemoryLock::Refused { errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0) }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        if self.lock == MemoryLock::Locked {
            // SAFETY: the range was locked by `lock_pages` and is still ours; munlock touches
            // no memory. A failure would only leave pages locked until they are freed below.
            unsafe { libc::munlock(self.base.as_ptr().cast::<libc::c_void>(), self.layout.size()) };
        }
        // SAFETY: `base` came from `System.alloc(self.layout)` and is freed exactly once, here.
        unsafe { System.dealloc(self.base.as_ptr(), self.layout) };
    }
}
