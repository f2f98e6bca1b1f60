//! Parameter and result structs that carry their own `size` first, so that the ABI can grow
//! (as `struct sched_attr` does): reading one the caller filled, writing one the caller
//! gave, and C strings.
//!
//! Owns those conversions; must not touch a runtime.

use std::ffi::{c_char, CStr};

use crate::status::{tempi_status, Failure};

/// The largest `size` a caller may give: beyond it the call refuses with `TEMPI_BAD_SIZE`
/// before reading anything past this library's own struct.
pub(crate) const MAX_STRUCT_SIZE: usize = 4096;

/// A struct whose first field is its `size`, with this library's defaults.
///
/// # Safety
///
/// The type is `repr(C)`, starts with a `usize` size field, and every bit pattern of its
/// fields is a valid value (integers and raw pointers only).
pub(crate) unsafe trait Sized0: Copy {
    /// The struct with every field at its default and `size` at this version's.
    fn defaults() -> Self;
    /// The size of the first version of the struct: smaller sizes are refused.
    const FIRST_VERSION: usize;
}

/// Read the struct at `p`: the `size` bytes the caller says it holds, fields past them at
/// their defaults; a caller's larger struct is accepted if the bytes beyond ours are zero.
///
/// # Safety
///
/// `p` is null or points to at least `(*p).size` readable bytes.
pub(crate) unsafe fn read_sized<T: Sized0>(p: *const T, what: &str) -> Result<T, Failure> {
    if p.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: p is non-null and (the caller guarantees) starts with a readable usize size.
    let size = unsafe { p.cast::<usize>().read_unaligned() };
    let ours = std::mem::size_of::<T>();
    if !(T::FIRST_VERSION..=MAX_STRUCT_SIZE).contains(&size) {
        return Err(Failure::new(
            tempi_status::TEMPI_BAD_SIZE,
            format!("{what}->size is {size}: it must be between {} and {MAX_STRUCT_SIZE}", T::FIRST_VERSION),
        ));
    }
    if size > ours {
        // SAFETY: the caller guarantees `size` readable bytes at p.
        let tail = unsafe { std::slice::from_raw_parts(p.cast::<u8>().add(ours), size - ours) };
        if tail.iter().any(|&b| b != 0) {
            return Err(Failure::new(
                tempi_status::TEMPI_BAD_SIZE,
                format!("{what}->size is {size}: this library knows {ours} bytes and the rest is not zero"),
            ));
        }
    }
    let mut value = T::defaults();
    // SAFETY: both regions are valid for min(size, ours) bytes and do not overlap; any bit
    // pattern is a valid T (the trait's contract).
    unsafe {
        std::ptr::copy_nonoverlapping(p.cast::<u8>(), (&raw mut value).cast::<u8>(), size.min(ours));
    }
    // SAFETY: value is a valid T, its first field a usize.
    unsafe { (&raw mut value).cast::<usize>().write(ours) };
    Ok(value)
}

/// Write `value` to the caller's struct at `out`, whose `size` the caller set: at most that
/// many bytes; the `size` field is left as the caller set it.
///
/// # Safety
///
/// `out` is null or points to at least `(*out).size` writable bytes.
pub(crate) unsafe fn write_sized<T: Sized0>(out: *mut T, value: &T, what: &str) -> Result<(), Failure> {
    // SAFETY: forwarded contract.
    let size = unsafe { writable_size(out, what) }?;
    let n = size.min(std::mem::size_of::<T>()) - std::mem::size_of::<usize>();
    // SAFETY: both regions hold at least `size` bytes past their size fields' start; the copy
    // skips the size field and writes n bytes after it, within both.
    unsafe {
        std::ptr::copy_nonoverlapping(
            std::ptr::from_ref(value).cast::<u8>().add(std::mem::size_of::<usize>()),
            out.cast::<u8>().add(std::mem::size_of::<usize>()),
            n,
        );
    }
    Ok(())
}

/// The `size` the caller set in its struct at `out`, checked as [`write_sized`] checks it,
/// without writing anything: for a call that must know its answer can be written before it
/// acts.
///
/// # Safety
///
/// `out` is null or points to at least `(*out).size` writable bytes.
pub(crate) unsafe fn writable_size<T: Sized0>(out: *mut T, what: &str) -> Result<usize, Failure> {
    if out.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: out is non-null and starts with a readable usize size (caller's contract).
    let size = unsafe { out.cast::<usize>().read_unaligned() };
    if !(T::FIRST_VERSION..=MAX_STRUCT_SIZE).contains(&size) {
        return Err(Failure::new(
            tempi_status::TEMPI_BAD_SIZE,
            format!("{what}->size is {size}: it must be between {} and {MAX_STRUCT_SIZE}", T::FIRST_VERSION),
        ));
    }
    Ok(size)
}

/// The UTF-8 text at `p`; `None` for a null pointer.
///
/// # Safety
///
/// `p` is null or a NUL-terminated string.
pub(crate) unsafe fn text<'a>(p: *const c_char, what: &str) -> Result<Option<&'a str>, Failure> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: p is a NUL-terminated string (caller's contract).
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map(Some).map_err(|_| Failure::new(tempi_status::TEMPI_INVALID_ARGUMENT, format!("{what} is not UTF-8")))
}

/// Write `value` to the out-parameter `out`.
///
/// # Safety
///
/// `out` is null or valid for a write of a `T`.
pub(crate) unsafe fn put<T>(out: *mut T, value: T, what: &str) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: out is non-null and writable (caller's contract).
    unsafe { out.write(value) };
    Ok(())
}
