//! Predictable memory: after start-up, the dispatch path does not allocate. A counting global
//! allocator compares a run with a run four times as long: the allocation counts must be equal.
//! (Aborting a job is left out: it unwinds the job, and the unwinder allocates its exception
//! object, one per abort.)

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use common::ms;
use tempi::policy::sched::{Edf, RoundRobin};
use tempi::{Config, MissPolicy, Runtime, ThreadSpec, Time};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Only the OS thread that runs the simulation counts: the test harness's own threads
    /// allocate too (for instance to report a slow test on a busy machine).
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if COUNTING.with(Cell::get) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to the system allocator unchanged; counting has no effect on
// the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_for(horizon_ms: u64, policy: &str) -> u64 {
    let cfg = Config::new(2).trace_capacity(200_000);
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(cfg).unwrap();
    match policy {
        "edf" => rt.set_scheduler(|| Box::new(Edf::new())),
        "rr" => rt.set_scheduler(|| Box::new(RoundRobin::new(ms(1)))),
        _ => {}
    }
    for i in 0..8u64 {
        let spec = ThreadSpec::new(format!("p{i}"))
            .cpu((i % 2) as usize)
            .periodic(ms(4 + i))
            .priority(i as i32)
            .miss_policy(if i == 7 { MissPolicy::SkipNext } else { MissPolicy::Continue })
            .on_miss(|_| {});
        rt.spawn(spec, move |cx| {
            cx.work(ms(1));
            cx.yield_now();
            cx.sleep(ms(1));
            cx.work(ms(i % 3));
        })
        .unwrap();
    }
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    COUNTING.with(|c| c.set(true));
    let out = rt.run_until(Time::from_millis(horizon_ms)).unwrap();
    COUNTING.with(|c| c.set(false));
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    assert!(out.threads.iter().all(|t| t.stats.completed > 0));
    assert_eq!(out.trace_dropped, 0);
    after - before
}

#[test]
fn kernel_steady_state_dispatch_does_not_allocate() {
    for policy in ["fp", "edf", "rr"] {
        let short = allocations_for(1_000, policy);
        let long = allocations_for(4_000, policy);
        assert_eq!(short, long, "{policy}: a longer run allocated more ({short} vs {long})");
    }
}
