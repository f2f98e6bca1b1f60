//! The allocator proper: boundary-tagged blocks over one region and the free list through them.
//!
//! [`RawHeap`] is the only code that reads or writes the region's bytes. It works on offsets
//! from the region's base and turns them into pointers only to read or write a tag or a link,
//! so every raw access sits in one of the four small accessors below. The owners
//! ([`BoundedHeap`](super::BoundedHeap), [`BoundedGlobal`](super::BoundedGlobal)) decide who
//! may call it and when; this file does not lock, does not allocate and never panics on a
//! request it cannot serve.

use super::{AllocFailed, BlockInfo, FailReason, HeapCorrupt, HeapStats, GRANULE, MAX_ALIGN};

/// One tag or link word.
const WORD: usize = size_of::<usize>();
/// The free bit in a tag; sizes are multiples of [`GRANULE`], so bit 0 is never part of one.
const FREE: usize = 1;
/// "No block" in a free-list link.
const NONE: usize = usize::MAX;
/// The smallest block: a header, two links while it is free, a footer.
pub(super) const MIN_BLOCK: usize = round_up(4 * WORD, GRANULE);
/// Headers sit at offsets congruent to this modulo [`GRANULE`], so payloads (one word after
/// the header) are [`GRANULE`]-aligned.
const FIRST_HEADER: usize = GRANULE - WORD;
/// Bytes of a region no block can use: the prologue footer before the first header and the
/// epilogue header after the last block (plus the padding that aligns the first header).
pub(super) const OVERHEAD: usize = GRANULE;

// The layout's arithmetic, checked when compiled for this word size.
const _: () = {
    assert!(MIN_BLOCK.is_multiple_of(GRANULE) && MIN_BLOCK >= 4 * WORD);
    assert!((FIRST_HEADER + WORD).is_multiple_of(GRANULE) && GRANULE >= 2 * WORD);
};

const fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// The allocator state over a region it does not own.
///
/// The fields are plain values: the owner wraps the whole struct in whatever makes its use
/// exclusive (a `!Sync` cell, a spin lock).
pub(super) struct RawHeap {
    base: *mut u8,
    /// Region bytes in use: the region's length rounded down to [`GRANULE`].
    len: usize,
    /// Offset of the first free block's header, or [`NONE`].
    head: usize,
    max_search: usize,
    free_bytes: usize,
    allocations: u64,
    frees: u64,
    failed_bound: u64,
    failed_no_fit: u64,
    failed_align: u64,
    last_inspected: usize,
    max_inspected: usize,
}

impl RawHeap {
    /// A heap over nothing; every allocation fails until [`RawHeap::init`].
    pub(super) const fn unset() -> Self {
        RawHeap {
            base: std::ptr::null_mut(),
            len: 0,
            head: NONE,
            max_search: 0,
            free_bytes: 0,
            allocations: 0,
            frees: 0,
            failed_bound: 0,
            failed_no_fit: 0,
            failed_align: 0,
            last_inspected: 0,
            max_inspected: 0,
        }
    }

    /// The smallest region a heap can be built over (one minimal block).
    pub(super) const fn min_region() -> usize {
        OVERHEAD + MIN_BLOCK
    }

    pub(super) fn is_set(&self) -> bool {
        !self.base.is_null()
    }

    /// Lay one free block over the whole region, with the prologue and epilogue tags that
    /// spare coalescing any bounds check.
    ///
    /// # Safety
    /// `base` is [`GRANULE`]-aligned, valid for reads and writes of `len` bytes, and used by
    /// nothing but this heap for as long as the heap is used; `len >= min_region()` and
    /// `max_search >= 1`.
    pub(super) unsafe fn init(base: *mut u8, len: usize, max_search: usize) -> Self {
        debug_assert!((base as usize).is_multiple_of(GRANULE) && len >= Self::min_region() && max_search >= 1);
        let len = len / GRANULE * GRANULE;
        let mut heap = RawHeap { base, len, max_search, ..RawHeap::unset() };
        let size = len - OVERHEAD;
        heap.set_word(FIRST_HEADER - WORD, 0); // prologue: a used footer of size 0
        heap.set_word(len - WORD, 0); // epilogue: a used header of size 0
        heap.write_tags(FIRST_HEADER, size, true);
        heap.push_front(FIRST_HEADER);
        heap.free_bytes = size;
        heap
    }

    // --- the raw accesses: every read or write of region memory goes through these --------

    fn word(&self, offset: usize) -> usize {
        debug_assert!(offset + WORD <= self.len && offset.is_multiple_of(WORD));
        // SAFETY: every caller passes the offset of a tag or a link, which the block layout
        // keeps word-aligned and inside the region (`init`'s contract makes the region valid
        // and exclusively ours); the debug assertion checks both.
        unsafe { self.base.add(offset).cast::<usize>().read() }
    }

    fn set_word(&mut self, offset: usize, value: usize) {
        debug_assert!(offset + WORD <= self.len && offset.is_multiple_of(WORD));
        // SAFETY: as in `word`: a word-aligned tag or link slot inside the region we own.
        unsafe { self.base.add(offset).cast::<usize>().write(value) }
    }

    /// The payload pointer of the block whose header is at `header`.
    fn payload(&self, header: usize) -> *mut u8 {
        // SAFETY: `header + WORD` lies inside the region (a block is at least MIN_BLOCK long),
        // so the offset stays in the same allocation.
        unsafe { self.base.add(header + WORD) }
    }

    /// The header offset of the block whose payload `ptr` is.
    fn header_of(&self, ptr: *mut u8) -> usize {
        (ptr as usize) - (self.base as usize) - WORD
    }

    // --- tags and links ------------------------------------------------------------------

    fn size(&self, header: usize) -> usize {
        self.word(header) & !FREE
    }

    fn write_tags(&mut self, header: usize, size: usize, free: bool) {
        let tag = size | if free { FREE } else { 0 };
        self.set_word(header, tag);
        self.set_word(header + size - WORD, tag);
    }

    fn next(&self, header: usize) -> usize {
        self.word(header + WORD)
    }

    fn prev(&self, header: usize) -> usize {
        self.word(header + 2 * WORD)
    }

    fn set_next(&mut self, header: usize, next: usize) {
        self.set_word(header + WORD, next);
    }

    fn set_prev(&mut self, header: usize, prev: usize) {
        self.set_word(header + 2 * WORD, prev);
    }

    /// Put `block` between `left` and `right` (either may be [`NONE`]); they must be adjacent
    /// in the list (or `left` the end of it).
    fn link_between(&mut self, left: usize, block: usize, right: usize) {
        self.set_prev(block, left);
        self.set_next(block, right);
        if left == NONE {
            self.head = block;
        } else {
            self.set_next(left, block);
        }
        if right != NONE {
            self.set_prev(right, block);
        }
    }

    fn join(&mut self, left: usize, right: usize) {
        if left == NONE {
            self.head = right;
        } else {
            self.set_next(left, right);
        }
        if right != NONE {
            self.set_prev(right, left);
        }
    }

    fn unlink(&mut self, block: usize) {
        let (left, right) = (self.prev(block), self.next(block));
        self.join(left, right);
    }

    fn push_front(&mut self, block: usize) {
        let old = self.head;
        self.link_between(NONE, block, old);
    }

    // --- the two operations --------------------------------------------------------------

    /// Block size (tags included) that holds `size` payload bytes, or `None` if it overflows.
    fn block_size_for(size: usize) -> Option<usize> {
        let payload = size.max(1).checked_next_multiple_of(GRANULE)?;
        Some(payload.checked_add(2 * WORD)?.checked_next_multiple_of(GRANULE)?.max(MIN_BLOCK))
    }

    /// First fit over at most `max_search` free-list entries.
    pub(super) fn alloc(&mut self, size: usize, align: usize) -> Result<*mut u8, AllocFailed> {
        let fail = |reason, searched| AllocFailed { size, align, searched, reason };
        if !align.is_power_of_two() || align > MAX_ALIGN {
            self.failed_align += 1;
            self.last_inspected = 0;
            return Err(fail(FailReason::AlignmentUnsupported, 0));
        }
        let need = match Self::block_size_for(size) {
            Some(need) if need <= self.len => need,
            _ => {
                self.failed_no_fit += 1;
                self.last_inspected = 0;
                return Err(fail(FailReason::NoFit, 0));
            }
        };
        let mut block = self.head;
        let mut inspected = 0;
        while block != NONE {
            if inspected == self.max_search {
                self.note_search(inspected);
                self.failed_bound += 1;
                return Err(fail(FailReason::SearchBoundReached, inspected));
            }
            inspected += 1;
            let block_size = self.size(block);
            let gap = self.front_gap(block, align);
            if gap.checked_add(need).is_some_and(|total| total <= block_size) {
                self.note_search(inspected);
                return Ok(self.place(block, block_size, gap, need));
            }
            block = self.next(block);
        }
        self.note_search(inspected);
        self.failed_no_fit += 1;
        Err(fail(FailReason::NoFit, inspected))
    }

    fn note_search(&mut self, inspected: usize) {
        self.last_inspected = inspected;
        self.max_inspected = self.max_inspected.max(inspected);
    }

    /// Bytes to split off the front of the free block at `block` so that its payload meets
    /// `align`: zero, or a remainder large enough to stay a free block of its own.
    fn front_gap(&self, block: usize, align: usize) -> usize {
        if align <= GRANULE {
            return 0;
        }
        let payload = self.base as usize + block + WORD;
        let mut aligned = payload.next_multiple_of(align);
        if aligned != payload && aligned - payload < MIN_BLOCK {
            aligned = (payload + MIN_BLOCK).next_multiple_of(align);
        }
        aligned - payload
    }

    /// Carve a used block of `need` bytes out of the free block at `block`, `gap` bytes in.
    /// The free remainders keep the chosen block's place in the list, so a split never moves
    /// what is left to the front or the back.
    fn place(&mut self, block: usize, block_size: usize, gap: usize, need: usize) -> *mut u8 {
        let (left, right) = if gap > 0 {
            self.write_tags(block, gap, true);
            (block, self.next(block))
        } else {
            let neighbours = (self.prev(block), self.next(block));
            self.join(neighbours.0, neighbours.1);
            neighbours
        };
        let used = block + gap;
        let rest = block_size - gap - need;
        let used_size = if rest >= MIN_BLOCK {
            let remainder = used + need;
            self.write_tags(remainder, rest, true);
            self.link_between(left, remainder, right);
            need
        } else {
            block_size - gap
        };
        self.write_tags(used, used_size, false);
        self.free_bytes -= used_size;
        self.allocations += 1;
        self.payload(used)
    }

    /// Free the block and merge it with free neighbours, found through the tags beside it:
    /// constant time whatever the list's length. The result goes to the front of the list.
    ///
    /// # Safety
    /// `ptr` was returned by [`RawHeap::alloc`] on this heap and has not been freed since.
    pub(super) unsafe fn free(&mut self, ptr: *mut u8) {
        let mut start = self.header_of(ptr);
        let mut size = self.size(start);
        debug_assert!(self.word(start) & FREE == 0, "block freed twice");
        self.free_bytes += size;
        self.frees += 1;
        let before = self.word(start - WORD);
        if before & FREE != 0 {
            start -= before & !FREE;
            size += before & !FREE;
            self.unlink(start);
        }
        let after = start + size;
        let after_tag = self.word(after);
        if after_tag & FREE != 0 {
            self.unlink(after);
            size += after_tag & !FREE;
        }
        self.write_tags(start, size, true);
        self.push_front(start);
    }

    /// Usable payload bytes of the allocated block at `ptr`.
    ///
    /// # Safety
    /// As for [`RawHeap::free`]: `ptr` is a live allocation of this heap.
    pub(super) unsafe fn capacity(&self, ptr: *mut u8) -> usize {
        self.size(self.header_of(ptr)) - 2 * WORD
    }

    pub(super) fn contains(&self, ptr: *const u8) -> bool {
        let (base, p) = (self.base as usize, ptr as usize);
        self.is_set() && p >= base + FIRST_HEADER + WORD && p < base + self.len
    }

    // --- looking at it -------------------------------------------------------------------

    /// Free-list entries in list order. Walks the list: O(length), for statistics and checks.
    pub(super) fn free_list(&self, mut visit: impl FnMut(BlockInfo)) {
        let mut block = self.head;
        let mut steps = 0;
        // A corrupt list could cycle: a list never has more entries than minimal blocks fit.
        while block != NONE && steps <= self.len / MIN_BLOCK {
            visit(self.info(block));
            block = self.next(block);
            steps += 1;
        }
    }

    /// Every block in address order.
    pub(super) fn blocks(&self, mut visit: impl FnMut(BlockInfo)) {
        if !self.is_set() {
            return;
        }
        let mut block = FIRST_HEADER;
        while block + WORD < self.len {
            let size = self.size(block);
            if size < MIN_BLOCK || block + size > self.len - WORD {
                return; // corrupt; `check` says so
            }
            visit(self.info(block));
            block += size;
        }
    }

    fn info(&self, block: usize) -> BlockInfo {
        BlockInfo { offset: block + WORD, size: self.size(block), free: self.word(block) & FREE != 0 }
    }

    pub(super) fn stats(&self) -> HeapStats {
        let (mut list_len, mut largest) = (0, 0);
        self.free_list(|b| {
            list_len += 1;
            largest = largest.max(b.size);
        });
        HeapStats {
            region_bytes: self.len,
            free_bytes: self.free_bytes,
            largest_free_block: largest,
            free_list_len: list_len,
            max_search: self.max_search,
            allocations: self.allocations,
            frees: self.frees,
            failed_search_bound: self.failed_bound,
            failed_no_fit: self.failed_no_fit,
            failed_alignment: self.failed_align,
            last_search_inspected: self.last_inspected,
            max_search_inspected: self.max_inspected,
        }
    }

    /// Check every invariant the module docs state, by a full walk.
    pub(super) fn check(&self) -> Result<(), HeapCorrupt> {
        let bad = |what: String| Err(HeapCorrupt(what));
        if !self.is_set() {
            return Ok(());
        }
        if self.word(FIRST_HEADER - WORD) != 0 || self.word(self.len - WORD) != 0 {
            return bad("prologue or epilogue tag overwritten".into());
        }
        let (mut block, mut free_total, mut free_count, mut previous_free) = (FIRST_HEADER, 0, 0, false);
        while block != self.len - WORD {
            let (tag, size) = (self.word(block), self.size(block));
            if size < MIN_BLOCK || size % GRANULE != 0 || block + size > self.len - WORD {
                return bad(format!("block at {block} has impossible size {size}"));
            }
            if self.word(block + size - WORD) != tag {
                return bad(format!("block at {block}: header and footer differ"));
            }
            let free = tag & FREE != 0;
            if free && previous_free {
                return bad(format!("block at {block} and the one before are both free (not coalesced)"));
            }
            if free {
                free_total += size;
                free_count += 1;
            }
            previous_free = free;
            block += size;
        }
        if free_total != self.free_bytes {
            return bad(format!("free blocks hold {free_total} bytes, the count says {}", self.free_bytes));
        }
        let (mut listed, mut prev, mut entry) = (0, NONE, self.head);
        while entry != NONE {
            if listed >= free_count {
                return bad("free list longer than the number of free blocks (or cyclic)".into());
            }
            if self.word(entry) & FREE == 0 {
                return bad(format!("used block at {entry} is in the free list"));
            }
            if self.prev(entry) != prev {
                return bad(format!("free-list back link of {entry} is wrong"));
            }
            listed += 1;
            prev = entry;
            entry = self.next(entry);
        }
        if listed != free_count {
            return bad(format!("{free_count} free blocks but {listed} in the free list"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C, align(4096))]
    struct Region([u8; 1024]);

    fn heap(region: &mut Region, k: usize) -> RawHeap {
        // SAFETY: the region is page-aligned, 1024 bytes, and outlives the heap in each test.
        unsafe { RawHeap::init(region.0.as_mut_ptr(), region.0.len(), k) }
    }

    fn list(h: &RawHeap) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        h.free_list(|b| out.push((b.offset, b.size)));
        out
    }

    #[test]
    fn block_sizes_round_up_and_never_overflow() {
        assert_eq!(RawHeap::block_size_for(0), Some(MIN_BLOCK));
        assert_eq!(RawHeap::block_size_for(usize::MAX), None);
    }

    #[test]
    fn a_new_heap_is_one_free_block() {
        let mut r = Region([0; 1024]);
        let h = heap(&mut r, 4);
        assert_eq!(list(&h), vec![(GRANULE, 1024 - OVERHEAD)]);
        h.check().unwrap();
    }

    #[test]
    fn split_keeps_the_remainder_in_place_and_free_merges_both_sides() {
        let mut r = Region([0; 1024]);
        let mut h = heap(&mut r, 4);
        let a = h.alloc(16, 8).unwrap();
        let b = h.alloc(16, 8).unwrap();
        let c = h.alloc(16, 8).unwrap();
        assert_eq!(list(&h), vec![(GRANULE + 3 * 32, 1024 - OVERHEAD - 3 * 32)]);
        // SAFETY: a, b and c are live allocations of `h`, each freed once.
        unsafe {
            h.free(a);
            h.free(c); // merges with the tail
            assert_eq!(list(&h), vec![(GRANULE + 64, 1024 - OVERHEAD - 64), (GRANULE, 32)]);
            h.free(b); // between two free neighbours: one block again
        }
        assert_eq!(list(&h), vec![(GRANULE, 1024 - OVERHEAD)]);
        h.check().unwrap();
    }

    #[test]
    fn check_reports_broken_tags_and_lists() {
        let mut r = Region([0; 1024]);
        let mut h = heap(&mut r, 4);
        let a = h.alloc(16, 8).unwrap();
        let _b = h.alloc(16, 8).unwrap();
        // SAFETY: `a` is a live allocation of `h`.
        unsafe { h.free(a) };
        h.check().unwrap();
        let footer = FIRST_HEADER + 32 - WORD;
        h.set_word(footer, 64 | FREE);
        assert!(h.check().unwrap_err().0.contains("header and footer differ"));
        h.set_word(footer, 32 | FREE);
        let second = FIRST_HEADER + 32;
        h.write_tags(second, 32, true); // free but neither coalesced nor listed
        assert!(h.check().unwrap_err().0.contains("not coalesced"));
        h.write_tags(second, 32, false);
        h.free_bytes += 16;
        assert!(h.check().unwrap_err().0.contains("the count says"));
        h.free_bytes -= 16;
        h.set_prev(h.head, FIRST_HEADER);
        assert!(h.check().unwrap_err().0.contains("back link"));
    }
}
