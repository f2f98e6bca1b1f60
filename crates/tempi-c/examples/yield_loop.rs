//! Two threads yielding to each other `N` times, through the C API or the Rust API: the
//! harness for counting the instructions of a `tempi_yield` round trip against a
//! `Ctx::yield_now` one (`valgrind --tool=callgrind` at two values of `N`; the difference
//! over the difference in `N` is the cost of one round trip). See docs/PERFORMANCE.md, "The
//! C API".
//!
//! `yield_loop c|rust [N] [real]`: virtual time unless `real`.

use std::ffi::c_void;

use tempi::clock::{RealClock, VirtualClock};
use tempi::{Config, Runtime, ThreadSpec};
use tempi_c::*;

unsafe extern "C" fn body(cx: *mut tempi_ctx, userdata: *mut c_void) {
    // SAFETY: userdata is the loop count main passed, alive for the run.
    let n = unsafe { *userdata.cast::<u64>() };
    for _ in 0..n {
        // SAFETY: cx is the running body's.
        if unsafe { tempi_yield(cx) } != tempi_status::TEMPI_OK {
            return;
        }
    }
}

fn c_side(mut n: u64, real: bool) {
    let user = (&raw mut n).cast::<c_void>();
    let (mut rp, mut tp) = (std::mem::MaybeUninit::uninit(), std::mem::MaybeUninit::uninit());
    let (mut rt, mut out) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: every pointer is valid for its call; n outlives the run.
    unsafe {
        tempi_runtime_params_init(rp.as_mut_ptr());
        let mut rp = rp.assume_init();
        rp.trace_off = 1;
        rp.clock = if real { tempi_clock::TEMPI_CLOCK_REAL } else { tempi_clock::TEMPI_CLOCK_VIRTUAL } as u32;
        assert_eq!(tempi_runtime_new(&rp, &mut rt), tempi_status::TEMPI_OK);
        tempi_thread_params_init(tp.as_mut_ptr());
        for _ in 0..2 {
            assert_eq!(
                tempi_runtime_spawn(rt, tp.as_ptr(), Some(body), user, std::ptr::null_mut()),
                tempi_status::TEMPI_OK
            );
        }
        assert_eq!(tempi_runtime_run(rt, u64::MAX, &mut out), tempi_status::TEMPI_OK);
        tempi_outcome_free(out);
        tempi_runtime_free(rt);
    }
}

fn rust_side<C: tempi::clock::Clock>(n: u64) {
    let mut rt = Runtime::<C>::new(Config::new(1).trace_capacity(0)).unwrap();
    for name in ["a", "b"] {
        rt.spawn(ThreadSpec::new(name), move |cx| {
            for _ in 0..n {
                cx.yield_now();
            }
        })
        .unwrap();
    }
    rt.run().unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let real = args.get(3).is_some_and(|s| s == "real");
    match (args.get(1).map(String::as_str), real) {
        (Some("c"), _) => c_side(n, real),
        (Some("rust"), false) => rust_side::<VirtualClock>(n),
        (Some("rust"), true) => rust_side::<RealClock>(n),
        _ => eprintln!("usage: yield_loop c|rust [N] [real]"),
    }
}
