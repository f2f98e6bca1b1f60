//! Transparent huge pages for large arenas allocated up front.
//!
//! Owns [`advise_huge_pages`] only: the `madvise(MADV_HUGEPAGE)` call over the part of an
//! allocation that whole 2 MB pages cover. It never allocates, frees or reads the memory.

/// The size of a transparent huge page on x86-64 and aarch64 Linux.
const HUGE_PAGE: usize = 2 << 20;

/// Ask Linux to back the 2 MB-aligned part of `[start, start + bytes)` with huge pages as it
/// is first touched (it must be an allocation the caller owns and has not yet written, for
/// the advice to take effect at fault time). Returns whether the advice was given: false if
/// the range holds no whole huge page or the kernel refused (for instance with transparent
/// huge pages disabled). Advice only: the memory's contents and validity do not change.
pub(crate) fn advise_huge_pages(start: *const u8, bytes: usize) -> bool {
    let first = (start as usize).div_ceil(HUGE_PAGE) * HUGE_PAGE;
    let end = (start as usize).saturating_add(bytes) / HUGE_PAGE * HUGE_PAGE;
    if end <= first {
        return false;
    }
    // SAFETY: MADV_HUGEPAGE is advisory: it changes neither the contents nor the validity of
    // the pages, and the range lies inside the caller's allocation (rounded inwards).
    let rc = unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
    rc == 0
}
