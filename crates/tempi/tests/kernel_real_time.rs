//! The same application code on the real clock and on the virtual clock. Real-time checks are
//! properties with generous bounds; they never depend on the machine being quiet.

mod common;

use common::{completion_order, ms};
use tempi::clock::Clock;
use tempi::{Config, Runtime, ThreadOutcome, ThreadSpec, Time};

/// Three periodic threads, rate-monotonic priorities, well-separated completion instants.
fn app<C: Clock>(rt: &mut Runtime<C>) {
    let set = [("fast", 2, 10, 3), ("mid", 4, 20, 2), ("slow", 6, 40, 1)];
    for (name, c, t, prio) in set {
        let spec = ThreadSpec::new(name).periodic(ms(t)).wcet(ms(c)).priority(prio);
        rt.spawn(spec, move |cx| cx.work(ms(c))).unwrap();
    }
}

#[test]
fn kernel_real_and_virtual_time_give_the_same_job_order() {
    let horizon = Time::from_millis(80);
    let mut sim = Runtime::simulated(1);
    app(&mut sim);
    let virtual_order = completion_order(&sim.run_until(horizon).unwrap());

    let mut real = Runtime::<tempi::clock::RealClock>::new(Config::new(1).pin(false)).unwrap();
    app(&mut real);
    let out = real.run_until(horizon).unwrap();
    let real_order = completion_order(&out);

    assert_eq!(virtual_order.len(), 14);
    assert_eq!(real_order, virtual_order);
    // CPU time of `work` is spun for real: at least the demand, with generous slack above.
    let fast = out.thread_named("fast").unwrap();
    assert!(fast.stats.cpu_time >= ms(2 * 8));
    assert!(out.end >= horizon);
}

#[test]
fn kernel_real_time_spawn_join_and_panic_isolation() {
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
    let mut rt = Runtime::<tempi::clock::RealClock>::new(Config::new(2).pin(false)).unwrap();
    rt.spawn(ThreadSpec::new("a").cpu(0).periodic(ms(5)).max_jobs(3), |cx| cx.work(ms(1))).unwrap();
    rt.spawn(ThreadSpec::new("b").cpu(1).periodic(ms(5)).max_jobs(3), |cx| {
        assert_eq!(cx.cpu(), 1);
        let e = cx.spawn(ThreadSpec::new("x").cpu(0), |_| {}).unwrap_err();
        assert_eq!(e, tempi::Error::CrossCpu { from: 1, to: 0 });
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
    // Whether SCHED_FIFO is granted depends on the machine; either way the run completes and
    // a refusal is explained.
    let cfg = Config::new(1).fifo_priority(Some(10)).pin(false);
    let mut rt = Runtime::<tempi::clock::RealClock>::new(cfg).unwrap();
    rt.spawn(ThreadSpec::new("t"), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    assert!(out.warnings.iter().all(|w| w.contains("SCHED_FIFO")));
    assert_eq!(out.threads[0].stats.completed, 1);
}
