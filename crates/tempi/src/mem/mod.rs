//! Predictable memory: a heap over one fixed region whose every operation has a bound known
//! in advance.
//!
//! A general-purpose allocator may search, grow, or ask the system for pages at any moment,
//! and each of those makes a real-time thread's worst case unknowable. This module offers a
//! heap that does none of them: its region is taken once, up front (optionally locked in
//! memory so it is never paged out); freeing, coalescing included, takes constant time; and
//! an allocation inspects at most `k` entries of the free list and then **fails** rather than
//! search further. A failure is an answer, not a stall: the application decides what to do.
//!
//! - [`BoundedHeap`] is the heap an application owns for its real-time data, with
//!   [`HeapBox`] to keep a typed value in it, freed on drop.
//! - [`BoundedGlobal`] is the same heap as a [`GlobalAlloc`](std::alloc::GlobalAlloc) over a
//!   buffer inside a `static`, to serve as the whole program's `#[global_allocator]`.
//!
//! ## What it owns and what it must not touch
//!
//! The module owns its regions and all raw-pointer code that reads them; `unsafe` is
//! confined to it (`tags.rs` reads and writes the region through four accessors; `region.rs`
//! takes and returns the region; `heap.rs` and `global.rs` make access exclusive). It uses
//! nothing of the kernel, the policies or the runtime, and the kernel does not use it: threads'
//! data may live here, the runtime's own pools are sized in `Config`.
//!
//! ## Block layout
//!
//! The region is cut into blocks, each a multiple of [`GRANULE`] (16) bytes and at least four
//! words long (32 bytes on a 64-bit machine):
//!
//! ```text
//!  used:  | header: size|0 | payload ...                       | footer: size|0 |
//!  free:  | header: size|1 | next | prev | (unused) ...        | footer: size|1 |
//!           one word          links of the free list             one word
//! ```
//!
//! Header and footer are the *boundary tags*: the same word, the block's size with bit 0 set
//! while it is free. A freed block reads the footer just before it and the header just after
//! it to find free neighbours without searching, and merges with them. A used footer of size
//! 0 before the first block and a used header of size 0 after the last (the prologue and
//! epilogue) spare those reads every bounds check. Headers sit one word before a
//! [`GRANULE`]-aligned address, so every payload is [`GRANULE`]-aligned; a larger alignment
//! (up to [`MAX_ALIGN`]) is met by splitting a free block (of at least the minimum size) off
//! the front of the chosen one. Free blocks are linked in a doubly linked list, through their payloads.
//!
//! ## Invariants (checked by [`BoundedHeap::check`])
//!
//! - Blocks tile the region between prologue and epilogue exactly; header equals footer.
//! - No two adjacent blocks are both free (coalescing is exact), so after everything is freed
//!   the region is one free block again, and `n` used blocks leave at most `n + 1` free ones:
//!   with `max_search > n` the bound never stops a search that could succeed.
//! - The free list holds exactly the free blocks, with consistent back links.
//! - The free-byte count equals the sum of the free blocks' sizes.
//!
//! ## Policy and complexity
//!
//! - `alloc`: first fit in list order over at most `max_search` entries; a block larger than
//!   needed is split and its remainder keeps the block's place in the list. O(k).
//! - `free`: merge with free neighbours (unlinking them), then push the result on the front
//!   of the list. O(1).
//! - A failure says whether the bound was reached (a fitting block may exist further along)
//!   or the whole list was searched; the counters in [`HeapStats`] keep both apart.
//!
//! ```
//! use std::alloc::Layout;
//! use tempi::mem::{BoundedHeap, FailReason, HeapOptions};
//!
//! let heap = BoundedHeap::new(1 << 16, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
//! let frame = heap.boxed([0.0f32; 64]).unwrap(); // real-time data, freed with the box
//! let fails = heap.alloc(Layout::from_size_align(1 << 20, 8).unwrap()).unwrap_err();
//! assert_eq!(fails.reason, FailReason::NoFit);
//! drop(frame);
//! assert_eq!(heap.stats().free_list_len, 1);
//! ```

mod global;
mod heap;
mod region;
mod tags;

pub use global::BoundedGlobal;
pub use heap::{BoundedHeap, ForeignBlock, HeapBlock, HeapBox, Rejected};

/// Block sizes are multiples of this, and every payload is aligned to it.
///
/// ```
/// assert_eq!(tempi::mem::GRANULE, 16);
/// ```
pub const GRANULE: usize = 16;

/// The largest alignment a request may ask for; larger ones fail with
/// [`FailReason::AlignmentUnsupported`].
///
/// ```
/// assert_eq!(tempi::mem::MAX_ALIGN, 4096);
/// ```
pub const MAX_ALIGN: usize = 4096;

/// How a [`BoundedHeap`] is built.
///
/// ```
/// let opts = tempi::mem::HeapOptions { max_search: 8, lock_in_memory: true };
/// assert_eq!(opts.max_search, 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapOptions {
    /// `k`: the most free-list entries one allocation inspects before it fails. At least 1.
    pub max_search: usize,
    /// `mlock` the region so its pages are never swapped out. A refusal is reported by
    /// [`BoundedHeap::memory_lock`], not as an error.
    pub lock_in_memory: bool,
}

/// Whether a heap's memory is locked.
///
/// ```
/// use tempi::mem::MemoryLock;
/// assert_ne!(MemoryLock::Locked, MemoryLock::Refused { errno: 12 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryLock {
    /// Locking was not asked for.
    NotRequested,
    /// Every page of the region is locked in memory.
    Locked,
    /// The system refused (`ENOMEM` = 12 when over `RLIMIT_MEMLOCK`, `EPERM` = 1); the heap
    /// works, but its pages may be swapped out.
    Refused {
        /// The `errno` of the refusal.
        errno: i32,
    },
}

/// Why a heap could not be built.
///
/// ```
/// use tempi::mem::{BoundedHeap, HeapError, HeapOptions};
/// let err = BoundedHeap::new(4096, HeapOptions { max_search: 0, lock_in_memory: false }).unwrap_err();
/// assert_eq!(err, HeapError::ZeroSearchBound);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapError {
    /// `max_search` was 0: no allocation could ever succeed.
    ZeroSearchBound,
    /// The region cannot hold one block.
    RegionTooSmall {
        /// Bytes asked for.
        bytes: usize,
        /// The smallest region that works.
        minimum: usize,
    },
    /// The size is not a valid allocation size on this machine.
    RegionTooLarge {
        /// Bytes asked for.
        bytes: usize,
    },
    /// The system had no memory for the region.
    OutOfSystemMemory {
        /// Bytes asked for.
        bytes: usize,
    },
}

impl std::fmt::Display for HeapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeapError::ZeroSearchBound => write!(f, "max_search must be at least 1"),
            HeapError::RegionTooSmall { bytes, minimum } => {
                write!(f, "a heap of {bytes} bytes cannot hold one block (minimum {minimum})")
            }
            HeapError::RegionTooLarge { bytes } => write!(f, "{bytes} bytes is too large for one region"),
            HeapError::OutOfSystemMemory { bytes } => write!(f, "the system has no {bytes} bytes for the heap"),
        }
    }
}

impl std::error::Error for HeapError {}

/// Why an allocation failed.
///
/// ```
/// use tempi::mem::FailReason;
/// assert_ne!(FailReason::SearchBoundReached, FailReason::NoFit);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailReason {
    /// `max_search` entries were inspected and none fit; a later one might have.
    SearchBoundReached,
    /// The whole free list (shorter than the bound) was inspected and no block fits.
    NoFit,
    /// The alignment is above [`MAX_ALIGN`] (or not a power of two).
    AlignmentUnsupported,
}

/// A failed allocation: what was asked, how far the search went and why it stopped.
///
/// ```
/// use std::alloc::Layout;
/// use tempi::mem::{BoundedHeap, FailReason, HeapOptions};
///
/// let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
/// let err = heap.alloc(Layout::from_size_align(16, 8192).unwrap()).unwrap_err();
/// assert_eq!((err.reason, err.searched), (FailReason::AlignmentUnsupported, 0));
/// assert!(err.to_string().contains("8192"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocFailed {
    /// Bytes asked for.
    pub size: usize,
    /// Alignment asked for.
    pub align: usize,
    /// Free-list entries inspected (never more than `max_search`).
    pub searched: usize,
    /// Why the search stopped.
    pub reason: FailReason,
}

impl std::fmt::Display for AllocFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = match self.reason {
            FailReason::SearchBoundReached => "the search bound was reached",
            FailReason::NoFit => "no free block fits",
            FailReason::AlignmentUnsupported => "the alignment is not supported",
        };
        write!(
            f,
            "no block for {} bytes aligned to {}: {why} after {} free-list entries",
            self.size, self.align, self.searched
        )
    }
}

impl std::error::Error for AllocFailed {}

/// One block, as [`BoundedHeap::blocks`] and [`BoundedHeap::free_list`] report it.
///
/// ```
/// use tempi::mem::{BoundedHeap, HeapOptions};
/// let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
/// let only = heap.free_list()[0];
/// assert!(only.free && only.offset == 16 && only.size == 4096 - 16);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockInfo {
    /// Offset of the block's payload from the start of the region.
    pub offset: usize,
    /// Size of the whole block, tags included.
    pub size: usize,
    /// Whether it is free.
    pub free: bool,
}

/// A heap's counters and the shape of its free list.
///
/// ```
/// use tempi::mem::{BoundedHeap, HeapOptions};
/// let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
/// let s = heap.stats();
/// assert_eq!((s.region_bytes, s.free_bytes, s.failed_search_bound), (4096, 4080, 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HeapStats {
    /// Bytes of the region in use (its size rounded down to [`GRANULE`]).
    pub region_bytes: usize,
    /// Bytes in free blocks, tags included.
    pub free_bytes: usize,
    /// The largest free block, tags included.
    pub largest_free_block: usize,
    /// Entries in the free list.
    pub free_list_len: usize,
    /// The bound `k`.
    pub max_search: usize,
    /// Successful allocations.
    pub allocations: u64,
    /// Frees.
    pub frees: u64,
    /// Allocations that failed because `k` entries were inspected without a fit.
    pub failed_search_bound: u64,
    /// Allocations that failed because no block in the whole list fit.
    pub failed_no_fit: u64,
    /// Allocations that failed on their alignment.
    pub failed_alignment: u64,
    /// Free-list entries the latest allocation inspected.
    pub last_search_inspected: usize,
    /// The most entries any allocation inspected (never above `k`).
    pub max_search_inspected: usize,
}

/// What [`BoundedHeap::check`] found wrong, in words.
///
/// ```
/// use tempi::mem::{BoundedHeap, HeapOptions};
/// let heap = BoundedHeap::new(4096, HeapOptions { max_search: 4, lock_in_memory: false }).unwrap();
/// assert!(heap.check().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeapCorrupt(pub String);

impl std::fmt::Display for HeapCorrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "heap corrupt: {}", self.0)
    }
}

impl std::error::Error for HeapCorrupt {}
