//! Predictable memory on the accounting paths: the set, clock and budget calls a thread makes
//! in every job (a Spring task joins the set of its window, has its budget replenished and
//! leaves it again; a server reads its budget) allocate nothing once the run has started,
//! whether they succeed or are refused. A counting global allocator (per OS thread: a
//! virtual-time run, and a real-time CPU's dispatcher with its threads, each stay on one)
//! counts what hundreds of such calls allocate: the count must be zero.

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::counting::allocations;
use common::ms;
use tempi::clock::{Clock, RealClock, VirtualClock};
use tempi::{Budget, Config, Error, Runtime, ThreadOutcome, ThreadSpec};

/// Rounds of calls made by the measured thread.
const ROUNDS: u64 = 200;

/// Calls made in one round by [`control_calls`].
const CALLS_PER_ROUND: u64 = 16;

/// One thread makes `ROUNDS` rounds of the set, clock and budget calls, each checked, on a
/// runtime with one set with a budget and one ended thread; returns the allocations the calls
/// made and the number of calls.
fn control_calls<C: Clock>(mut rt: Runtime<C>) -> (u64, u64) {
    let set = rt.create_set("window", 0).unwrap();
    rt.set_budget(set, Budget::new(ms(50))).unwrap();
    let other = rt.create_set("other", 0).unwrap();
    let ended = rt.spawn(ThreadSpec::new("ended").priority(9), |_| {}).unwrap();
    let counts = Arc::new((AtomicU64::new(u64::MAX), AtomicU64::new(0)));
    let seen = counts.clone();
    rt.spawn(ThreadSpec::new("caller").priority(1), move |cx| {
        let me = cx.id();
        let mut calls = 0;
        let mut count = |ok: bool| {
            assert!(ok);
            calls += 1;
        };
        // Warm up: the first calls of a thread may set up what later ones reuse.
        cx.add_to_set(set, me).unwrap();
        cx.remove_from_set(set, me).unwrap();
        let before = allocations();
        for _ in 0..ROUNDS {
            count(cx.add_to_set(set, me) == Ok(()));
            count(cx.set_contains(set, me) == Ok(true));
            count(cx.set_of(me) == Ok(Some(set)));
            count(cx.replenish_budget(set, ms(40)) == Ok(()));
            count(cx.add_budget(set, 1_000) == Ok(()));
            count(cx.budget_remaining(set).is_ok_and(|left| left > Duration::ZERO));
            count(cx.budget_exhausted(set) == Ok(false));
            count(cx.set_cpu_time(set).is_ok());
            count(cx.thread_cpu_time(me).is_ok());
            count(cx.set_thread_cpu_time(me, Duration::ZERO) == Ok(()));
            count(cx.set_set_cpu_time(set, Duration::ZERO) == Ok(()));
            // Refusals, which come back settled as well.
            count(cx.add_to_set(other, me) == Err(Error::AlreadyInSet { thread: me, set }));
            count(cx.add_to_set(set, ended) == Err(Error::UnknownThread(ended)));
            count(cx.budget_remaining(other) == Err(Error::NoBudget(other)));
            count(cx.remove_from_set(set, me) == Ok(()));
            count(cx.remove_from_set(set, me) == Err(Error::NotInSet { thread: me, set }));
        }
        let after = allocations();
        seen.0.store(after - before, Ordering::Relaxed);
        seen.1.store(calls, Ordering::Relaxed);
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("caller").unwrap().outcome, Some(ThreadOutcome::Completed));
    (counts.0.load(Ordering::Relaxed), counts.1.load(Ordering::Relaxed))
}

#[test]
fn set_clock_and_budget_calls_allocate_nothing_in_virtual_time() {
    let rt = Runtime::<VirtualClock>::new(Config::new(1).trace_capacity(0)).unwrap();
    let (allocated, calls) = control_calls(rt);
    assert_eq!(calls, ROUNDS * CALLS_PER_ROUND);
    assert_eq!(allocated, 0, "{calls} set, clock and budget calls made {allocated} allocations");
}

#[test]
fn set_clock_and_budget_calls_allocate_nothing_in_real_time() {
    let rt = Runtime::<RealClock>::new(Config::new(1).pin(false).trace_capacity(0)).unwrap();
    let (allocated, calls) = control_calls(rt);
    assert_eq!(calls, ROUNDS * CALLS_PER_ROUND);
    assert_eq!(allocated, 0, "{calls} set, clock and budget calls made {allocated} allocations");
}
