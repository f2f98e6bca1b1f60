//! The same application code on the real clock and on the virtual clock. Real-time checks are
//! properties with generous bounds; they never depend on the machine being quiet.

use crate::common;

use std::sync::{Mutex, MutexGuard};

use common::{completion_order, ms};
use tempi::clock::Clock;
use tempi::{Config, Runtime, ThreadOutcome, ThreadSpec, Time};

/// Real-time tests in this file take turns: each spins a dispatcher, and on a 2-core machine
/// two of them at once would steal each other's CPU.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// A long low-priority job preempted by a periodic high-priority one. Every completion is at
/// least 8 ms (40% of the long job) away from the event that could reorder it, so the order
/// survives a dispatcher that the OS slows down considerably.
fn app<C: Clock>(rt: &mut Runtime<C>) {
    rt.spawn(ThreadSpec::new("long").priority(1).wcet(ms(20)), |cx| cx.work(ms(20))).unwrap();
    let tick = ThreadSpec::new("tick").periodic(ms(20)).phase(ms(10)).wcet(ms(2)).priority(2).max_jobs(3);
    rt.spawn(tick, |cx| cx.work(ms(2))).unwrap();
}

#[test]
fn kernel_real_and_virtual_time_give_the_same_job_order() {
    let _turn = serial();
    let mut sim = Runtime::simulated(1);
    app(&mut sim);
    let virtual_out = sim.run().unwrap();
    let virtual_order = completion_order(&virtual_out);
    assert_eq!(virtual_order, ["tick#0", "long#0", "tick#1", "tick#2"]);
    assert_eq!(virtual_out.end, Time::from_millis(52));

    // SCHED_FIFO where the OS grants it keeps other processes off the dispatcher's CPU; where
    // it does not, the margins above still hold on an ordinary machine.
    let mut real = Runtime::<tempi::clock::RealClock>::new(Config::new(1).pin(false).fifo_priority(Some(10))).unwrap();
    app(&mut real);
    let out = real.run().unwrap();
    assert_eq!(completion_order(&out), virtual_order);
    // `work` is spun for real: at least the demand, whatever the slack above it.
    assert!(out.thread_named("long").unwrap().stats.cpu_time >= ms(20));
    assert!(out.end >= Time::from_millis(52));
}

#[test]
fn kernel_real_time_spawn_join_and_panic_isolation() {
    let _turn = serial();
    let mut rt = Runtime::real_time(1);
    rt.spawn(ThreadSpec::new("main"), |cx| {
        let bad = cx.spawn(ThreadSpec::new("bad"), |_| panic!("boom")).unwrap();
        assert_eq!(cx.join(bad), Ok(ThreadOutcome::Panicked("boom".into())));
        let t0 = cx.now();
        cx.sleep(ms(2));
        assert!(cx.now() >= t0 + ms(2));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("main").unwrap().outcome, Some(ThreadOutcome::Completed));
}

#[test]
fn kernel_real_time_two_dispatchers() {
    let _turn = serial();
    let mut rt = Runtime::<tempi::clock::RealClock>::new(Config::new(2).pin(false)).unwrap();
    rt.spawn(ThreadSpec::new("a").cpu(0).periodic(ms(5)).max_jobs(3), |cx| cx.work(ms(1))).unwrap();
    rt.spawn(ThreadSpec::new("b").cpu(1).periodic(ms(5)).max_jobs(3), |cx| {
        assert_eq!(cx.cpu(), 1);
        // Spawning onto another CPU goes through that CPU's request queue.
        let x = cx.spawn(ThreadSpec::new("x").cpu(0), |cx| assert_eq!(cx.cpu(), 0)).unwrap();
        assert_eq!(cx.join(x), Ok(ThreadOutcome::Completed));
        cx.work(ms(1));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("a").unwrap().stats.completed, 3);
    assert_eq!(out.thread_named("b").unwrap().stats.completed, 3);
    assert!(out.trace.iter().any(|r| r.cpu == 1));
}

#[test]
fn kernel_real_time_reports_refused_privileges_as_warnings() {
    let _turn = serial();
    // Whether SCHED_FIFO is granted depends on the machine; either way the run completes and
    // a refusal is explained.
    let cfg = Config::new(1).fifo_priority(Some(10)).pin(false);
    let mut rt = Runtime::<tempi::clock::RealClock>::new(cfg).unwrap();
    rt.spawn(ThreadSpec::new("t"), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    assert!(out.warnings.iter().all(|w| w.contains("SCHED_FIFO")));
    assert_eq!(out.threads[0].stats.completed, 1);
}

#[test]
fn budget_real_time_runaway_is_stopped_at_its_budget() {
    let _turn = serial();
    let cfg = Config::new(1).pin(false).fifo_priority(Some(10)).trace_capacity(0);
    let mut rt = Runtime::<tempi::clock::RealClock>::new(cfg).unwrap();
    // Spinning in `work`: the dispatcher itself stops it when the budget runs out.
    let spinner = rt
        .spawn(ThreadSpec::new("spinner").priority(9), |cx| loop {
            cx.work(ms(1))
        })
        .unwrap();
    // Spinning in its own code: caught at its next runtime call, every 100 µs.
    let own = rt
        .spawn(ThreadSpec::new("own-code").priority(8), |cx| loop {
            let until = std::time::Instant::now() + std::time::Duration::from_micros(100);
            while std::time::Instant::now() < until {
                std::hint::spin_loop();
            }
            cx.yield_now();
        })
        .unwrap();
    let ctl = rt.spawn(ThreadSpec::new("control").periodic(ms(10)).priority(5), |cx| cx.work(ms(2))).unwrap();
    for (name, t) in [("a", spinner), ("b", own)] {
        let s = rt.create_set(name, 0).unwrap();
        rt.add_to_set(s, t).unwrap();
        rt.set_budget(s, tempi::Budget::deferrable_server(ms(2), ms(10))).unwrap();
    }
    let out = rt.run_until(Time::from_millis(100)).unwrap();
    // Ten periods: at most 10 x 2 ms each, plus generous slack for detection latency (and one
    // 100 µs preemption-point interval per period for the thread in its own code). The bounds
    // on `control` leave room for a machine that delays the dispatcher now and then.
    for t in [spinner, own] {
        let used = out.thread(t).unwrap().stats.cpu_time;
        assert!(used <= ms(20) + ms(5), "{t:?} used {used:?}");
        assert!(used >= ms(4), "{t:?} used only {used:?}: the budget should be usable");
    }
    let control = out.thread(ctl).unwrap().stats;
    assert!(control.completed >= 6, "control completed only {} jobs: {control:?}", control.completed);
    assert!(out.sets.iter().all(|s| s.exhaustions >= 5), "{:?}", out.sets);
}
