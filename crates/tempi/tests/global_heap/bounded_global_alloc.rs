//! The bounded heap as this test program's global allocator: ordinary collections, threads and
//! the test harness itself all allocate from it.

use std::alloc::{GlobalAlloc, Layout};
use std::collections::{BTreeMap, HashMap};

use tempi::mem::BoundedGlobal;

const BYTES: usize = 32 << 20;

#[global_allocator]
static HEAP: BoundedGlobal<BYTES> = BoundedGlobal::new(256);

#[test]
fn ordinary_collections_run_on_the_bounded_heap() {
    let before = HEAP.stats();
    let mut words: Vec<String> = (0..5000).map(|i| format!("word-{i}")).collect();
    words.sort();
    let mut counts: HashMap<usize, usize> = HashMap::new();
    for w in &words {
        *counts.entry(w.len()).or_default() += 1;
    }
    let ordered: BTreeMap<_, _> = counts.iter().map(|(k, v)| (*k, *v)).collect();
    assert_eq!(ordered.values().sum::<usize>(), 5000);
    assert_eq!(words[0], "word-0");
    let mut big: Vec<u64> = Vec::new();
    for i in 0..200_000u64 {
        big.push(i); // grows by reallocation: alloc, copy, free
    }
    assert_eq!(big.iter().sum::<u64>(), 199_999 * 200_000 / 2);
    let during = HEAP.stats();
    assert!(during.allocations >= before.allocations + 5000, "the collections allocated here");
    assert!(during.free_bytes < before.free_bytes);
    drop((words, counts, ordered, big));
    let after = HEAP.stats();
    assert!(after.frees >= before.frees + 5000);
    assert!(after.max_search_inspected <= 256);
}

#[test]
fn threads_allocate_concurrently() {
    let handles: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let mut total = 0usize;
                for round in 0..200 {
                    let v: Vec<String> = (0..50).map(|i| format!("{t}-{round}-{i}")).collect();
                    total += v.iter().map(String::len).sum::<usize>();
                }
                total
            })
        })
        .collect();
    let totals: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(totals.iter().all(|&t| t == totals[0]));
}

#[test]
fn a_request_it_cannot_serve_gets_null_not_an_abort() {
    // Called directly: through `Vec` a null would end the program in `handle_alloc_error`.
    // SAFETY: non-zero size; a null result is checked and never freed.
    let p = unsafe { HEAP.alloc(Layout::from_size_align(BYTES, 8).unwrap()) };
    assert!(p.is_null());
    // SAFETY: as above; the alignment is above MAX_ALIGN.
    let p = unsafe { HEAP.alloc(Layout::from_size_align(64, 1 << 16).unwrap()) };
    assert!(p.is_null());
    let s = HEAP.stats();
    assert!(s.failed_no_fit >= 1 && s.failed_alignment >= 1);
}
