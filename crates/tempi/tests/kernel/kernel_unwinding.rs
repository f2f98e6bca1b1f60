//! Aborts and kills reach the job loop: a killed thread never starts another body, even with
//! a leaked guard; an abort or a kill the body catches is raised again at its next runtime
//! call, and still ends the job if the body returns.

use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use common::{markers, ms};
use tempi::policy::budget::Kill;
use tempi::sync::LockSpec;
use tempi::trace::TraceKind;
use tempi::{Budget, MissPolicy, Runtime, ThreadOutcome, ThreadSpec, Time};

/// `p` (T = 10, C = 1) leaks a guard in its second job; `q`, in the same set, exhausts the
/// set's kill budget at 26 while `p` waits for its next release.
#[test]
fn kernel_kill_between_jobs_with_a_leaked_guard_starts_no_body() {
    let bodies = Arc::new(AtomicU32::new(0));
    let b = bodies.clone();
    let mut rt = Runtime::simulated(1);
    let m = Arc::new(rt.create_mutex((), LockSpec::new("m")).unwrap());
    let p = rt
        .spawn(ThreadSpec::new("p").periodic(ms(10)).priority(2), move |cx| {
            b.fetch_add(1, Ordering::SeqCst);
            if cx.job().number == 1 {
                std::mem::forget(m.lock(cx).unwrap());
            }
            cx.work(ms(1));
        })
        .unwrap();
    let q = rt.spawn(ThreadSpec::new("q").periodic(ms(10)).phase(ms(5)).priority(1), |cx| cx.work(ms(2))).unwrap();
    let set = rt.create_set("box", 0).unwrap();
    rt.add_to_set(set, p).unwrap();
    rt.add_to_set(set, q).unwrap();
    rt.set_budget(set, Budget::new(ms(8)).action(Kill)).unwrap();
    let out = rt.run_until(Time::from_millis(60)).unwrap();
    let ps = out.thread(p).unwrap();
    assert_eq!(ps.outcome, Some(ThreadOutcome::Killed));
    assert_eq!(out.thread(q).unwrap().outcome, Some(ThreadOutcome::Killed));
    assert_eq!((ps.stats.released, ps.stats.completed), (3, 3));
    assert_eq!(bodies.load(Ordering::SeqCst), 3, "a body per released job, none after the kill");
    // q, running when the budget runs out, ends at once, before p (made ready by the kill,
    // and more urgent) runs to end.
    assert_eq!(markers(&out, TraceKind::Exit), ["q#2@26", "p#2@26"]);
}

/// An abort the body catches is raised again at its next runtime call.
#[test]
fn kernel_swallowed_abort_is_raised_again_at_the_next_call() {
    let caught = Arc::new(AtomicBool::new(false));
    let after = Arc::new(AtomicBool::new(false));
    let (c, a) = (caught.clone(), after.clone());
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("s").deadline(ms(2)).miss_policy(MissPolicy::AbortJob), move |cx| {
        let r = catch_unwind(AssertUnwindSafe(|| cx.work(ms(5))));
        c.store(r.is_err(), Ordering::SeqCst);
        cx.work(ms(5));
        a.store(true, Ordering::SeqCst);
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(caught.load(Ordering::SeqCst));
    assert!(!after.load(Ordering::SeqCst), "the second call unwinds too");
    assert_eq!(markers(&out, TraceKind::JobAbort), ["s#0@2"]);
    assert_eq!(out.end, Time::from_millis(2));
    let s = &out.threads[0].stats;
    assert_eq!((s.completed, s.aborted, s.cpu_time), (0, 1, ms(2)));
}

/// An abort delivered at the end of a critical section and caught by a body that then returns
/// still ends the job as abandoned.
#[test]
fn kernel_swallowed_abort_then_return_is_an_abandoned_job() {
    let mut rt = Runtime::simulated(1);
    let m = Arc::new(rt.create_mutex((), LockSpec::new("m")).unwrap());
    rt.spawn(ThreadSpec::new("s").deadline(ms(1)).miss_policy(MissPolicy::AbortJob), move |cx| {
        {
            let _g = m.lock(cx).unwrap();
            cx.work(ms(3));
        }
        let _ = catch_unwind(AssertUnwindSafe(|| cx.work(ms(5))));
    })
    .unwrap();
    let out = rt.run().unwrap();
    let s = &out.threads[0].stats;
    assert_eq!((s.completed, s.aborted), (0, 1));
    assert_eq!(markers(&out, TraceKind::JobAbort), ["s#0@3"]);
}

/// A kill the body catches is raised again, and a body that returns after catching it starts
/// no further job.
#[test]
fn kernel_swallowed_kill_ends_the_thread() {
    let bodies = Arc::new(AtomicU32::new(0));
    let b = bodies.clone();
    let mut rt = Runtime::simulated(1);
    let p = rt
        .spawn(ThreadSpec::new("p").periodic(ms(10)), move |cx| {
            b.fetch_add(1, Ordering::SeqCst);
            let _ = catch_unwind(AssertUnwindSafe(|| cx.work(ms(3))));
        })
        .unwrap();
    let set = rt.create_set("box", 0).unwrap();
    rt.add_to_set(set, p).unwrap();
    rt.set_budget(set, Budget::new(ms(2)).action(Kill)).unwrap();
    let out = rt.run_until(Time::from_millis(50)).unwrap();
    assert_eq!(out.thread(p).unwrap().outcome, Some(ThreadOutcome::Killed));
    assert_eq!(bodies.load(Ordering::SeqCst), 1);
    assert_eq!(markers(&out, TraceKind::Exit), ["p#0@2"]);
}
