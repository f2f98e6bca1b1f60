//! The `capi.yield` metric: the `switch.roundtrip` loop made through the C API (`tempi-c`:
//! a body with the C calling convention calling `tempi_yield`, on a runtime made with
//! `tempi_runtime_new`), against the same loop through the Rust API (`Ctx::yield_now`),
//! interleaved in the same run. An overhead: `ratio = tempi_ns / peer_ns`, where "tempi" is the
//! C side and the "peer" the Rust side; the bar is 1.2.
//!
//! Owns both sides of that comparison; must not time anything else.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use tempi::clock::RealClock;
use tempi::{Config, Runtime, ThreadSpec};
use tempi_c::{tempi_ctx, tempi_status, tempi_thread_params, tempi_timing};

use super::{check_completed, median, overhead, progress, Metric, Sizes};

/// The Rust side: two equal-priority threads on one pinned real-time CPU, each yielding `n`
/// times; ns per round trip.
fn rust_roundtrip(n: u64) -> Result<f64, String> {
    let mut rt = Runtime::<RealClock>::new(Config::new(1).trace_capacity(0).pin(true)).map_err(|e| e.to_string())?;
    let base = Instant::now();
    let (start, end) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (s, e) = (start.clone(), end.clone());
    rt.spawn(ThreadSpec::new("a"), move |cx| {
        cx.yield_now();
        s.store(base.elapsed().as_nanos() as u64, Ordering::Relaxed);
        for _ in 0..n {
            cx.yield_now();
        }
        e.store(base.elapsed().as_nanos() as u64, Ordering::Relaxed);
    })
    .map_err(|e| e.to_string())?;
    rt.spawn(ThreadSpec::new("b"), move |cx| {
        for _ in 0..=n {
            cx.yield_now();
        }
    })
    .map_err(|e| e.to_string())?;
    check_completed(&rt.run().map_err(|e| e.to_string())?)?;
    Ok(end.load(Ordering::Relaxed).saturating_sub(start.load(Ordering::Relaxed)) as f64 / n as f64)
}

/// What the C-side bodies share: the loop count and the timestamps of thread "a".
struct Loop {
    n: u64,
    base: Instant,
    start: AtomicU64,
    end: AtomicU64,
}

/// Thread "a" of the C side, with the C calling convention, as a C body would be.
unsafe extern "C" fn body_a(cx: *mut tempi_ctx, userdata: *mut c_void) {
    // SAFETY: userdata is the Loop c_roundtrip passed, alive for the run.
    let l = unsafe { &*userdata.cast::<Loop>() };
    // SAFETY: cx is the context the runtime passed this body.
    if unsafe { tempi_c::tempi_yield(cx) } != tempi_status::TEMPI_OK {
        return;
    }
    l.start.store(l.base.elapsed().as_nanos() as u64, Ordering::Relaxed);
    for _ in 0..l.n {
        // SAFETY: as above.
        if unsafe { tempi_c::tempi_yield(cx) } != tempi_status::TEMPI_OK {
            return;
        }
    }
    l.end.store(l.base.elapsed().as_nanos() as u64, Ordering::Relaxed);
}

/// Thread "b" of the C side.
unsafe extern "C" fn body_b(cx: *mut tempi_ctx, userdata: *mut c_void) {
    // SAFETY: as in body_a.
    let l = unsafe { &*userdata.cast::<Loop>() };
    for _ in 0..=l.n {
        // SAFETY: as in body_a.
        if unsafe { tempi_c::tempi_yield(cx) } != tempi_status::TEMPI_OK {
            return;
        }
    }
}

/// The message of the C API's last failure.
fn c_error(what: &str) -> String {
    // SAFETY: tempi_last_error answers a NUL-terminated string valid until the next failure.
    let msg = unsafe { std::ffi::CStr::from_ptr(tempi_c::tempi_last_error()) };
    format!("{what}: {}", msg.to_string_lossy())
}

/// The C side: the same two threads made and run through the C API; ns per round trip.
fn c_roundtrip(n: u64) -> Result<f64, String> {
    let l = Loop { n, base: Instant::now(), start: AtomicU64::new(0), end: AtomicU64::new(0) };
    let user = std::ptr::from_ref(&l).cast_mut().cast::<c_void>();
    let mut rp = std::mem::MaybeUninit::uninit();
    let mut rt = std::ptr::null_mut();
    let mut out = std::ptr::null_mut();
    // SAFETY: every pointer passed is valid for its call; l outlives the run.
    unsafe {
        tempi_c::tempi_runtime_params_init(rp.as_mut_ptr());
        let mut rp = rp.assume_init();
        rp.clock = tempi_c::tempi_clock::TEMPI_CLOCK_REAL as u32;
        rp.trace_off = 1;
        if tempi_c::tempi_runtime_new(&rp, &mut rt) != tempi_status::TEMPI_OK {
            return Err(c_error("capi.yield"));
        }
        let mut ok = true;
        for (name, body) in [(c"a", body_a as unsafe extern "C" fn(_, _)), (c"b", body_b)] {
            let mut tp = std::mem::MaybeUninit::<tempi_thread_params>::uninit();
            tempi_c::tempi_thread_params_init(tp.as_mut_ptr());
            let mut tp = tp.assume_init();
            tp.name = name.as_ptr();
            tp.timing = tempi_timing::TEMPI_APERIODIC as u32;
            ok &=
                tempi_c::tempi_runtime_spawn(rt, &tp, Some(body), user, std::ptr::null_mut()) == tempi_status::TEMPI_OK;
        }
        ok = ok && tempi_c::tempi_runtime_run(rt, u64::MAX, &mut out) == tempi_status::TEMPI_OK;
        let failure = (!ok).then(|| c_error("capi.yield"));
        tempi_c::tempi_outcome_free(out);
        tempi_c::tempi_runtime_free(rt);
        if let Some(f) = failure {
            return Err(f);
        }
    }
    Ok(l.end.load(Ordering::Relaxed).saturating_sub(l.start.load(Ordering::Relaxed)) as f64 / n as f64)
}

pub(super) fn capi_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    progress(&format!(
        "capi.yield: C API and Rust API round trips interleaved, {} x {} (+ warm-up)",
        sz.switch_tempi, sz.reps
    ));
    let (mut c, mut rust) = (Vec::with_capacity(sz.reps), Vec::with_capacity(sz.reps));
    for rep in 0..=sz.reps {
        let rn = rust_roundtrip(sz.switch_tempi)?;
        let cn = c_roundtrip(sz.switch_tempi)?;
        if rep > 0 {
            c.push(cn);
            rust.push(rn);
        }
    }
    metrics.push(overhead(
        "capi.yield",
        median(c),
        "the same round trip through the Rust API (Ctx::yield_now)",
        median(rust),
        format!(
            "ratio = C-API ns / Rust-API ns (overhead factor, >1 = slower; bar 1.2): tempi_yield from a body with \
             the C calling convention on a runtime made through the C API; interleaved over {} repetitions, medians",
            sz.reps
        ),
    ));
    Ok(())
}
