//! The `mem.alloc_free` metric: a pair of allocation and free of random small sizes on
//! [`tempi::mem::BoundedHeap`], against the system allocator ([`std::alloc::System`], the
//! CLI's global allocator) doing the same sequence in the same run.
//!
//! Owns the request sequence (a fixed pseudo-random one, identical for both sides) and the
//! heap's shape. It runs no tempi threads and needs no real-time privilege.

use std::alloc::Layout;
use std::hint::black_box;
use std::mem::MaybeUninit;
use std::time::Instant;

use tempi::mem::{BoundedHeap, HeapBlock, HeapOptions};

use super::{compare, progress, sample, Metric, Sizes};

/// Blocks kept alive at once: a request frees the slot it lands on, if taken, then fills it.
const SLOTS: usize = 64;
/// The heap's region.
const HEAP_BYTES: usize = 1 << 20;
/// No two free blocks are adjacent, so `SLOTS` live blocks leave at most `SLOTS + 1` free-list
/// entries: with this bound a search never stops short while a block fits. (With 16 this
/// sequence meets the bound within a few thousand requests: freed small blocks go to the
/// front of the list and a larger request has to pass them.)
const MAX_SEARCH: usize = SLOTS + 1;

/// The next request: which slot, and the layout (8 to 256 bytes in steps of the alignment,
/// 8 or 16, so that the system side can hold it as a slice of `u64` or `u128`).
fn request(state: &mut u64) -> (usize, Layout) {
    // xorshift64: the same sequence on every run and for both allocators.
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    let slot = (*state % SLOTS as u64) as usize;
    let align = if (*state >> 20) & 1 == 0 { 8 } else { 16 };
    let size = (8 + ((*state >> 8) % 249) as usize).next_multiple_of(align);
    (slot, Layout::from_size_align(size, align).expect("a valid small layout"))
}

const SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// Nanoseconds per allocation (each but the first `SLOTS` also frees one) on the heap.
fn heap_run(pairs: u64) -> Result<(f64, String), String> {
    let heap = BoundedHeap::new(HEAP_BYTES, HeapOptions { max_search: MAX_SEARCH, lock_in_memory: false })
        .map_err(|e| e.to_string())?;
    let mut live: Vec<Option<HeapBlock>> = (0..SLOTS).map(|_| None).collect();
    let mut state = SEED;
    let t0 = Instant::now();
    for _ in 0..pairs {
        let (slot, layout) = request(&mut state);
        if let Some(old) = live[slot].take() {
            heap.free(old).map_err(|e| e.to_string())?;
        }
        let block = heap.alloc(layout).map_err(|e| format!("mem bench: the bounded heap failed: {e}"))?;
        live[slot] = Some(black_box(block));
    }
    let ns = t0.elapsed().as_nanos() as f64 / pairs as f64;
    for block in live.into_iter().flatten() {
        heap.free(block).map_err(|e| e.to_string())?;
    }
    let s = heap.stats();
    if s.free_list_len != 1 {
        return Err(format!("mem bench: {} free blocks left after freeing everything", s.free_list_len));
    }
    let note = format!(
        "{SLOTS} live blocks of 8..256 bytes (align 8 or 16), a fixed pseudo-random sequence; heap of {} KiB, \
         k = {MAX_SEARCH} (live blocks + 1), at most {} free-list entries inspected",
        HEAP_BYTES / 1024,
        s.max_search_inspected
    );
    Ok((ns, note))
}

/// A block from the global allocator (the system's: the CLI installs none of its own), held
/// as an uninitialised boxed slice of the layout's alignment so that no `unsafe` is needed.
enum SystemBlock {
    Align8(#[allow(dead_code)] Box<[MaybeUninit<u64>]>),
    Align16(#[allow(dead_code)] Box<[MaybeUninit<u128>]>),
}

fn system_alloc(layout: Layout) -> SystemBlock {
    if layout.align() == 16 {
        SystemBlock::Align16(Box::new_uninit_slice(layout.size().div_ceil(16)))
    } else {
        SystemBlock::Align8(Box::new_uninit_slice(layout.size().div_ceil(8)))
    }
}

fn system_run(pairs: u64) -> f64 {
    let mut live: Vec<Option<SystemBlock>> = (0..SLOTS).map(|_| None).collect();
    let mut state = SEED;
    let t0 = Instant::now();
    for _ in 0..pairs {
        let (slot, layout) = request(&mut state);
        drop(live[slot].take());
        live[slot] = Some(black_box(system_alloc(layout)));
    }
    t0.elapsed().as_nanos() as f64 / pairs as f64
}

pub(super) fn mem_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    progress(&format!("mem: {} alloc+free pairs x {}", sz.mem_pairs, sz.reps));
    let mut note = String::new();
    let tempi_ns = sample(sz.reps, || {
        let (ns, n) = heap_run(sz.mem_pairs)?;
        note = n;
        Ok(ns)
    })?;
    let peer_ns = sample(sz.reps, || Ok(system_run(sz.mem_pairs)))?;
    metrics.push(compare(
        "mem.alloc_free",
        tempi_ns,
        "system allocator alloc+free (std::alloc::System)",
        peer_ns,
        Some(note),
    ));
    Ok(())
}
